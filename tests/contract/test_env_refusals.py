"""The environments' refusals and defaults (docs/DESIGN.md, "Environment contract"), both games:

* a refused ``reset`` (bad seed, bad options) changes nothing, in every form (raw AEC, ``env()``,
  the Parallel class, ``parallel_env()``), the Gymnasium view (plain and ``gymnasium.make``) and
  the Gymnasium vector views: the env pickles to the same bytes before and after, and its next
  unseeded reset deals what a copy taken before the refusal deals;
* the seed check and the engines agree on one range, ``0..2**64-1`` (``hod.core.deal.SEED_LIMIT``);
* one ``illegal_action`` default rule: the unwrapped classes ``"raise"``, the factories ``"lose"``;
* the Gymnasium view under ``gymnasium.make_vec`` (next-step and same-step autoreset) never hands
  out a mask without a legal action, and both games end an episode with the same mask (all ones).

Messages are asserted exactly.
"""
from __future__ import annotations

import copy
import pickle

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import robada_env
import tapeo_env
from hod.core.errors import ConfigError, IllegalActionError, ResetNeededError
from hod.training.learner_env import LearnerVectorEnv
from hod.training.single_agent import SingleAgentEnv

GAMES = {"tapeo": (tapeo_env, tapeo_env.TapeoParallelEnv), "robada": (robada_env, robada_env.RobadaParallelEnv)}
BOTH = pytest.mark.parametrize("game", sorted(GAMES))
GYM_IDS = {"tapeo": "tapeo_env/Tapeo-v0", "robada": "robada_env/Robada-v0"}
NUM_ACTIONS = {"tapeo": 10, "robada": 27}

#: form -> (constructor of the game module / Parallel class, AEC?, documented illegal_action default)
FORMS = {
    "raw_env": (lambda mod, cls, **kw: mod.raw_env(**kw), True, "raise"),
    "env": (lambda mod, cls, **kw: mod.env(**kw), True, "lose"),
    "parallel_class": (lambda mod, cls, **kw: cls(**kw), False, "raise"),
    "parallel_env": (lambda mod, cls, **kw: mod.parallel_env(**kw), False, "lose"),
}
EVERY_FORM = pytest.mark.parametrize("form", list(FORMS))

# 2**64 = 18446744073709551616 is the first seed out of range; 2**64 - 1 the last one in it.
BAD_SEEDS = [-1, 2**64, 2**70, 1.5, True, "3", np.float64(2.0)]
BAD_OPTIONS = [5, "x", [("a", 1)]]
SEED_MESSAGE = "seed={!r} is not allowed; legal values: None or an int in 0..2**64-1"
OPTIONS_MESSAGE = ("options={!r} is not allowed; legal values: None or a dict (the environments take no "
                   "reset options: its keys are ignored)")


def make(game, form, **kw):
    mod, cls = GAMES[game]
    return FORMS[form][0](mod, cls, num_players=3, **kw)


def lowest_legal(mask) -> int:
    return int(np.flatnonzero(mask)[0])


def play_legal_steps(env, aec: bool, steps: int) -> None:
    """``steps`` steps of the lowest legal action (every agent's, in the Parallel form)."""
    for _ in range(steps):
        if aec:
            env.step(lowest_legal(env.observe(env.agent_selection)["action_mask"]))
        else:
            env.step({a: lowest_legal(env.unwrapped.action_mask(a)) for a in env.agents})


def deal_of(game, state):
    """The first deal of an engine state (Tapeo: round 1's hands; Ronda Robada: the deck order)."""
    return state.dealt[0] if game == "tapeo" else state.deck_order


def refusals():
    """(keyword, value, exact message) of every refused ``reset`` argument."""
    return ([("seed", s, SEED_MESSAGE.format(s)) for s in BAD_SEEDS]
            + [("options", o, OPTIONS_MESSAGE.format(o)) for o in BAD_OPTIONS])


# ---------------------------------------------------------------- refused resets: PettingZoo forms


@BOTH
@EVERY_FORM
def test_refused_reset_changes_nothing_mid_game(game, form):
    env = make(game, form)
    env.reset(seed=4)
    env.reset()          # an unseeded reset: the seed generator now exists and has moved
    play_legal_steps(env, FORMS[form][1], 3)
    before, twin = pickle.dumps(env), copy.deepcopy(env)
    seed_before = env.unwrapped.game_seed
    for key, value, message in refusals():
        with pytest.raises(ConfigError) as e:
            env.reset(**{key: value})
        assert str(e.value) == message
        assert pickle.dumps(env) == before, (key, value)
    assert env.unwrapped.game_seed == seed_before
    # the next unseeded reset deals what it would have dealt without the refusals
    env.reset()
    twin.reset()
    assert env.unwrapped.game_seed == twin.unwrapped.game_seed
    assert deal_of(game, env.unwrapped.game_state) == deal_of(game, twin.unwrapped.game_state)


@BOTH
@EVERY_FORM
def test_refused_first_reset_leaves_the_env_not_started(game, form):
    env = make(game, form)
    fresh = pickle.dumps(env)
    for key, value, message in refusals():
        with pytest.raises(ConfigError) as e:
            env.reset(**{key: value})
        assert str(e.value) == message
        assert pickle.dumps(env) == fresh, (key, value)
    with pytest.raises(ResetNeededError) as e:
        env.step(0 if FORMS[form][1] else {})
    assert str(e.value) == "step() called before reset(): call reset()"


@BOTH
@EVERY_FORM
def test_reset_takes_none_or_a_dict_as_options(game, form):
    env = make(game, form)
    for options in (None, {}, {"options": 1}):   # PettingZoo's api_test passes {"options": 1}
        env.reset(seed=7, options=options)
        assert env.unwrapped.game_seed == 7


@BOTH
def test_the_seed_check_and_the_engine_agree_on_one_range(game):
    mod = GAMES[game][0]
    env = mod.raw_env(num_players=2)
    last = 2**64 - 1   # the largest seed: 18446744073709551615
    env.reset(seed=last)
    assert env.game_seed == last
    assert deal_of(game, env.game_state) == deal_of(game, mod.new_game(env.config, seed=last))
    assert env.reset(seed=np.uint64(last)) is None and env.game_seed == last   # numpy integers too
    with pytest.raises(ConfigError) as e:
        mod.new_game(env.config, seed=2**64)   # the engine refuses the same first seed out of range
    assert str(e.value) == "seed=18446744073709551616 must be an int in 0..2**64-1"
    with pytest.raises(ConfigError) as e:
        env.reset(seed=2**64)
    assert str(e.value) == SEED_MESSAGE.format(2**64)
    assert env.game_seed == last


# ---------------------------------------------------------------- refused resets: Gymnasium views


def _gym_views(game):
    yield "SingleAgentEnv", SingleAgentEnv(game, num_players=3, opponents="random")
    yield "gymnasium.make", gymnasium.make(GYM_IDS[game], num_players=3, opponents="random")


@BOTH
def test_gymnasium_view_refused_reset_changes_nothing(game):
    for name, env in _gym_views(game):
        env.reset(seed=3)
        env.step(lowest_legal(env.unwrapped.action_masks()))
        before, twin = pickle.dumps(env), copy.deepcopy(env)
        for key, value, message in refusals():
            with pytest.raises(ConfigError) as e:
                env.reset(**{key: value})
            assert str(e.value) == message, name
            assert pickle.dumps(env) == before, (name, key, value)
        obs, info = env.reset()
        obs_twin, info_twin = twin.reset()
        assert np.array_equal(obs, obs_twin) and np.array_equal(info["action_mask"], info_twin["action_mask"])
        assert env.unwrapped.seat == twin.unwrapped.seat, name


@BOTH
def test_gymnasium_vector_views_refused_reset_changes_nothing(game):
    env, twin = (LearnerVectorEnv(game, num_tables=2, num_players=2, seed=0) for _ in range(2))
    env.reset(seed=1)
    twin.reset(seed=1)   # built alike, not copied: a batched engine's views do not survive a deepcopy
    before = pickle.dumps(env)
    for key, value, message in refusals():
        with pytest.raises(ConfigError) as e:
            env.reset(**{key: value})
        assert str(e.value) == message
        assert pickle.dumps(env) == before, (key, value)
    obs, _ = env.reset()
    obs_twin, _ = twin.reset()
    assert np.array_equal(obs["observation"], obs_twin["observation"])


# ---------------------------------------------------------------- one illegal_action default


@BOTH
@EVERY_FORM
def test_illegal_action_default_is_one_rule(game, form):
    aec, expected = FORMS[form][1], FORMS[form][2]
    env = make(game, form)
    assert env.unwrapped.illegal_action == expected
    env.reset(seed=0)
    bad = NUM_ACTIONS[game]   # one past the last action id: illegal in every position
    if expected == "raise":
        with pytest.raises(IllegalActionError):
            env.step(bad if aec else {a: bad for a in env.agents})
        return
    if aec:
        offender = env.agent_selection
        env.step(bad)
        assert all(env.terminations.values())
        assert env.rewards[offender] == -1.0   # hod.adapters.wrappers.ILLEGAL_REWARD
        assert env.infos[offender]["illegal_action"] == offender
    else:
        _, rewards, terms, _, _ = env.step({a: bad for a in env.agents})
        assert all(terms.values())
        assert set(rewards.values()) == {-1.0}   # every seat sent the illegal action


@BOTH
@EVERY_FORM
def test_illegal_action_given_explicitly_wins(game, form):
    other = {"raise": "lose", "lose": "raise"}[FORMS[form][2]]
    assert make(game, form, illegal_action=other).unwrapped.illegal_action == other


# ---------------------------------------------------------------- Gymnasium view: final-step mask


def _run_vector(game, vector_kwargs, episodes=2, limit=800):
    """Random legal play on ``make_vec(..., vectorization_mode="sync")`` of the game's view until
    every sub-env ended ``episodes`` episodes. Returns ``(the vector env, [(step infos,
    terminated | truncated)])``; every mask an agent acts on is checked on the way."""
    envs = gymnasium.make_vec(GYM_IDS[game], num_envs=2, vectorization_mode="sync", vector_kwargs=vector_kwargs,
                              num_players=2, opponents="random")
    rng = np.random.default_rng(0)
    _, info = envs.reset(seed=0)
    ends, steps = np.zeros(2, int), []
    for _ in range(limit):
        masks = info["action_mask"]
        # the masks the agent acts on now: each has a legal action, and action_masks() agrees
        assert masks.shape == (2, NUM_ACTIONS[game]) and (masks.sum(axis=1) >= 1).all()
        assert np.array_equal(np.stack(envs.call("action_masks")), masks.astype(bool))
        actions = np.array([int(rng.choice(np.flatnonzero(m))) for m in masks])
        _, _, term, trunc, info = envs.step(actions)
        done = term | trunc
        steps.append((info, done))
        ends += done
        if (ends >= episodes).all():
            return envs, steps
    raise AssertionError(f"{game}: fewer than {episodes} episodes per sub-env in {limit} steps")


@BOTH
def test_make_vec_next_step_autoreset_final_mask_allows_every_action(game):
    envs, steps = _run_vector(game, None)   # Gymnasium's default autoreset
    assert envs.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    ones = np.ones(NUM_ACTIONS[game], np.int8)
    finals = [info["action_mask"][i] for info, done in steps for i in np.flatnonzero(done)]
    assert len(finals) >= 4   # 2 episodes in each of 2 sub-envs
    for mask in finals:       # the final step's mask, the same kind in both games: all ones
        assert np.array_equal(mask, ones)


@BOTH
def test_make_vec_same_step_autoreset_final_mask_allows_every_action(game):
    envs, steps = _run_vector(game, {"autoreset_mode": AutoresetMode.SAME_STEP})
    assert envs.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    ones = np.ones(NUM_ACTIONS[game], np.int8)
    n_final = 0
    for info, done in steps:
        for i in np.flatnonzero(done):
            # the step's own mask is the new episode's (checked >= 1 legal in _run_vector); the
            # finished episode's last mask is in final_info, all ones as under next-step autoreset
            assert np.array_equal(info["final_info"]["action_mask"][i], ones)
            n_final += 1
    assert n_final >= 4


@BOTH
def test_view_ends_truncated_and_forfeited_episodes_with_the_same_mask(game):
    ones = np.ones(NUM_ACTIONS[game], np.int8)
    env = SingleAgentEnv(game, num_players=2, opponents="random", max_cycles=1)
    env.reset(seed=0)
    done = False
    while not done:
        _, _, term, trunc, info = env.step(lowest_legal(env.action_masks()))
        done = term or trunc
    assert trunc and not term   # one cycle (every seat acting once) is not a whole game
    assert np.array_equal(info["action_mask"], ones) and env.action_masks().all()
    env = SingleAgentEnv(game, num_players=2, opponents="random")
    env.reset(seed=0)
    _, reward, term, _, info = env.step(NUM_ACTIONS[game])   # illegal: a forfeit ("lose")
    assert term and reward == -1.0
    assert np.array_equal(info["action_mask"], ones) and env.action_masks().all()


@BOTH
def test_view_step_after_the_end_says_reset_and_changes_nothing(game):
    # It returned the last observation and final_score again, with reward 0 and terminated True;
    # the AEC env raises ResetNeededError there.
    env = SingleAgentEnv(game, num_players=2, opponents="random")
    with pytest.raises(ResetNeededError, match=r"step\(\) called before reset\(\)"):
        env.step(0)
    env.reset(seed=0)
    _, _, term, _, info = env.step(NUM_ACTIONS[game])   # illegal: a forfeit ("lose") ends it
    assert term
    for _ in range(2):
        with pytest.raises(ResetNeededError, match=r"step\(\) called after the episode ended"):
            env.step(0)
        with pytest.raises(RuntimeError):   # also what Gymnasium's envs raise
            env.step(0)
    assert env.action_masks().all()         # still the ended episode's mask
    obs, info = env.reset(seed=1)           # and a reset starts the next one
    _, _, term, trunc, _ = env.step(lowest_legal(info["action_mask"]))
    assert not trunc


@pytest.mark.parametrize("game", [tapeo_env, robada_env], ids=["tapeo", "robada"])
@pytest.mark.parametrize("wrapped", [False, True], ids=["raw", "wrapped"])
def test_last_before_reset_says_reset(game, wrapped):
    # PettingZoo's own last() raised an AttributeError here; step/observe/state say reset.
    env = game.env() if wrapped else game.raw_env()
    with pytest.raises(ResetNeededError, match=r"last\(\) called before reset\(\)"):
        env.last()
    env.reset(seed=0)
    assert env.last()[1:4] == (0.0, False, False)   # no reward yet, not terminated, not truncated


@pytest.mark.parametrize("game", [tapeo_env, robada_env], ids=["tapeo", "robada"])
@pytest.mark.parametrize("actions", [None, 3, [0, 0]], ids=repr)
def test_parallel_step_refuses_what_is_not_a_dict(game, actions):
    env = game.parallel_env()
    env.reset(seed=0)
    before = env.state().copy()
    with pytest.raises(ValueError, match=r"step\(\) takes a dict \{agent: action\} over the live agents"):
        env.step(actions)
    assert np.array_equal(env.state(), before)          # nothing changed


@pytest.mark.parametrize("game", [tapeo_env, robada_env], ids=["tapeo", "robada"])
@pytest.mark.parametrize("form", ["raw_env", "env", "parallel_env"])
def test_an_unknown_agent_is_named_with_the_legal_ones(game, form):
    # A bare KeyError('nosuch') before; still a KeyError (and a ConfigError), now with the agents.
    env = getattr(game, form)(num_players=2)
    if form == "env":   # wrapped: observe() before reset() says reset, as the raw env does
        with pytest.raises(ResetNeededError, match=r"observe\(\) called before reset\(\)"):
            env.observe("player_0")
    env.reset(seed=0)
    calls = ["observation_space", "action_space"] + (["observe"] if form != "parallel_env" else [])
    for name in calls:
        with pytest.raises(KeyError) as e:
            getattr(env, name)("player_2")   # 2 players: player_0 and player_1
        assert isinstance(e.value, ConfigError)
        assert str(e.value) == "unknown agent 'player_2'; legal agents: ['player_0', 'player_1']"
    assert env.observation_space("player_1") is env.observation_spaces["player_1"]
