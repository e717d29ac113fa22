"""Safe to load, hard to misuse: action and option types, stepping a finished game, pickling and
copying envs, no shadowed PettingZoo names, the end-of-game info keys from reset on. Both games,
both forms (docs/DESIGN.md, "Environment contract")."""
import copy
import pickle

import numpy as np
import pytest

import robada_env
import tapeo_env
from hod.core.errors import ConfigError, IllegalActionError, ResetNeededError, action_id

GAMES = {"tapeo": tapeo_env, "robada": robada_env}
PENDING = {"final_score": 0, "win_share": 0.0}


def _first_legal(obs) -> int:
    return int(np.flatnonzero(obs["action_mask"])[0])


# ---------------------------------------------------------------- 1. actions are ints only

def test_action_id_takes_python_and_numpy_ints_only():
    assert action_id(3, 10) == 3 and type(action_id(np.int64(3), 10)) is int
    assert action_id(np.uint8(9), 10) == 9
    for bad in (3.0, True, False, np.array(3), np.array([3]), "3", None, np.float32(3), 10, -1):
        assert action_id(bad, 10) is None, bad


@pytest.mark.parametrize("game", ["tapeo", "robada"])
@pytest.mark.parametrize("kind", ["float", "bool", "0-d array"])
def test_non_int_actions_are_illegal_in_both_forms(game, kind):
    mod = GAMES[game]
    env = mod.raw_env(num_players=2)
    env.reset(seed=3)
    legal = _first_legal(env.observe(env.agent_selection))
    bad = {"float": float(legal), "bool": bool(legal), "0-d array": np.array(legal)}[kind]
    with pytest.raises(IllegalActionError, match="legal actions: "):
        env.step(bad)
    env.step(np.int64(legal))        # numpy ints are fine, and nothing changed before
    par = mod.parallel_env(num_players=2, illegal_action="raise")
    obs, _ = par.reset(seed=3)
    actor = "player_0"
    actions = {a: _first_legal(obs[a]) for a in par.agents}
    actions[actor] = {"float": float(actions[actor]), "bool": bool(actions[actor]),
                      "0-d array": np.array(actions[actor])}[kind]
    with pytest.raises(IllegalActionError, match="legal actions: "):
        par.step(actions)
    # under "lose" the offender loses
    par = mod.parallel_env(num_players=2)
    obs, _ = par.reset(seed=3)
    actions[actor] = {"float": 1.0, "bool": True, "0-d array": np.array(1)}[kind]
    _, rew, terms, _, infos = par.step(actions)
    assert rew[actor] == -1.0 and all(terms.values()) and infos[actor]["illegal_action"] == actor


def test_robada_parallel_refuses_a_float_noop():
    par = robada_env.parallel_env(num_players=2, illegal_action="raise")
    obs, _ = par.reset(seed=0)
    with pytest.raises(IllegalActionError, match=r"legal actions: \[26 \(no-op\)\]"):
        par.step({"player_0": _first_legal(obs["player_0"]), "player_1": 26.0})


# ---------------------------------------------------------------- 2. options checked by type

@pytest.mark.parametrize("value", [1, 0, 1.0, np.True_, "True"])
def test_tapeo_round_rewards_must_be_a_bool(value):
    for make in (tapeo_env.raw_env, tapeo_env.parallel_env, tapeo_env.env):
        with pytest.raises(ConfigError, match=r"legal values: \[False, True\]"):
            make(round_rewards=value)
    assert tapeo_env.raw_env(round_rewards=True).round_rewards is True


@pytest.mark.parametrize("game", ["tapeo", "robada"])
@pytest.mark.parametrize("option, value, legal", [
    ("num_players", 2.0, "legal values: "), ("num_players", True, "legal values: "),
    ("max_cycles", 5.0, "legal values: integers 1..1000000000"),
    ("max_cycles", True, "legal values: integers 1..1000000000"),
    ("render_mode", b"ansi", r"legal values: \[None, 'ansi', 'human'\]"),
    ("render_mode", 0, r"legal values: \[None, 'ansi', 'human'\]"),
    ("reward_scheme", 1, r"legal values: \['points', 'win_loss', 'margin'\]"),
    ("illegal_action", True, r"legal values: \['raise', 'lose'\]"),
])
def test_env_options_are_checked_by_type(game, option, value, legal):
    for make in (GAMES[game].raw_env, GAMES[game].parallel_env):
        with pytest.raises(ConfigError, match=legal):
            make(**{option: value})


@pytest.mark.parametrize("rule", ["closing_ace", "may_take_own_pile", "leftovers_to_last_runner"])
@pytest.mark.parametrize("value", [1, 0, 1.0, np.True_])
def test_robada_rule_options_must_be_bools(rule, value):
    for make in (robada_env.raw_env, robada_env.parallel_env):
        with pytest.raises(ConfigError, match="True or False"):
            make(**{rule: value})


# ---------------------------------------------------------------- 3. stepping a finished game

def _finish_aec(env):
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else _first_legal(obs))


@pytest.mark.parametrize("game", ["tapeo", "robada"])
@pytest.mark.parametrize("form", ["env", "raw_env"])
def test_stepping_after_the_end_raises_reset_needed_in_wrapped_and_raw_aec(game, form):
    env = getattr(GAMES[game], form)(num_players=2)
    with pytest.raises(ResetNeededError, match=r"step\(\) called before reset\(\): call reset\(\)"):
        env.step(0)
    env.reset(seed=1)
    _finish_aec(env)
    with pytest.raises(ResetNeededError, match=r"the game is over: call reset\(\)"):
        env.step(0)
    with pytest.raises(ResetNeededError, match=r"the game is over: call reset\(\)"):
        env.step(None)
    env.reset(seed=1)                 # and a reset starts again
    assert env.agents == ["player_0", "player_1"]


# ---------------------------------------------------------------- 5. pickle and deepcopy

def _makers(mod):
    return {"env": mod.env, "raw_env": mod.raw_env, "parallel_env": mod.parallel_env}


def _play_on(env, steps: int) -> list:
    """Play up to ``steps`` more decisions (first legal action) and return what was seen."""
    seen = []
    if hasattr(env, "agent_iter"):
        for agent in env.agent_iter(max_iter=steps):
            obs, rew, term, trunc, info = env.last()
            seen.append((agent, obs["observation"].tolist(), rew, term, trunc, dict(info)))
            env.step(None if term or trunc else _first_legal(obs))
        return seen
    for _ in range(steps):
        if not env.agents:
            break
        obs = env._observations() if hasattr(env, "_observations") else env._observe_all()
        actions = {a: _first_legal(obs[a]) for a in env.agents}
        o, r, te, tr, inf = env.step(actions)
        seen.append(({a: v["observation"].tolist() for a, v in o.items()}, r, te, tr, inf))
    return seen


@pytest.mark.parametrize("game", ["tapeo", "robada"])
@pytest.mark.parametrize("form", ["env", "raw_env", "parallel_env"])
@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_envs_pickle_and_deepcopy_and_the_copy_continues_the_same_game(game, form, how):
    clone = (lambda e: pickle.loads(pickle.dumps(e))) if how == "pickle" else copy.deepcopy
    env = _makers(GAMES[game])[form](num_players=3)
    fresh = clone(env)                             # before reset
    fresh.reset(seed=5)
    env.reset(seed=5)
    _play_on(env, 7)
    _play_on(fresh, 7)
    twin = clone(env)                              # after reset, mid-game
    a, b = _play_on(env, 400), _play_on(twin, 400)
    assert a == b and len(a) > 10
    assert env.unwrapped.game_seed == twin.unwrapped.game_seed == 5
    env.reset()                                    # the seed sequence goes on identically too
    twin.reset()
    assert env.unwrapped.game_seed == twin.unwrapped.game_seed


# ---------------------------------------------------------------- 6. no shadowed PettingZoo names

@pytest.mark.parametrize("game", ["tapeo", "robada"])
@pytest.mark.parametrize("form", ["env", "raw_env", "parallel_env"])
def test_state_is_pettingzoos_method_and_the_engine_state_is_game_state(game, form):
    env = _makers(GAMES[game])[form](num_players=2)
    env.reset(seed=0)
    assert callable(env.state)
    assert env.state().shape == env.state_space.shape      # the global state (tests/games/test_global_state.py)
    assert type(env.unwrapped.game_state).__name__ == "State"
    assert "state" not in vars(env.unwrapped)
    # nothing of PettingZoo's or Gymnasium's API is an instance attribute hiding a method
    api = [n for cls in type(env.unwrapped).__mro__ if cls.__module__.startswith(("pettingzoo", "gymnasium"))
           for n, v in vars(cls).items() if callable(v) or isinstance(v, property)]
    assert sorted(set(api) & set(vars(env.unwrapped))) == []


# ---------------------------------------------------------------- 8. end-of-game info keys from reset

@pytest.mark.parametrize("game", ["tapeo", "robada"])
def test_final_info_keys_are_in_every_infos_from_reset_on(game):
    mod = GAMES[game]
    par = mod.parallel_env(num_players=2)
    obs, infos = par.reset(seed=2)
    assert infos == {"player_0": PENDING, "player_1": PENDING}
    while par.agents:
        actions = {a: _first_legal(obs[a]) for a in par.agents}
        obs, _, terms, _, infos = par.step(actions)
        assert all(set(i) >= {"final_score", "win_share"} for i in infos.values())
        if not any(terms.values()):
            assert infos == {"player_0": PENDING, "player_1": PENDING}
    assert sum(i["win_share"] for i in infos.values()) == 1.0
    env = mod.env(num_players=2)
    env.reset(seed=2)
    assert env.infos == {"player_0": PENDING, "player_1": PENDING}
    for agent in env.agent_iter():
        obs, _, term, trunc, info = env.last()
        assert set(info) >= {"final_score", "win_share"}
        if not (term or trunc):
            assert info == PENDING
        env.step(None if term or trunc else _first_legal(obs))


# ---------------------------------------------------------------- 7. max_cycles: cycles in both games

@pytest.mark.parametrize("game", ["tapeo", "robada"])
def test_default_max_cycles_exceeds_the_longest_game(game):
    info = GAMES[game].GAME
    assert info.default_max_cycles >= info.max_game_length
    assert GAMES[game].raw_env().max_cycles == GAMES[game].parallel_env().max_cycles == info.default_max_cycles


def test_tapeo_max_cycles_counts_picks_of_every_seat():
    env = tapeo_env.raw_env(num_players=3, max_cycles=2)
    env.reset(seed=0)
    steps = 0
    for agent in env.agent_iter():
        obs, _, term, trunc, info = env.last()
        if term or trunc:
            assert trunc and info == PENDING
            env.step(None)
            continue
        env.step(_first_legal(obs))
        steps += 1
    assert steps == 2 * 3


# ---------------------------------------------------------------- 11. docs

def test_env_pages_give_the_reward_formulas_and_docs_cite_no_issue_numbers():
    import pathlib
    import re
    docs = pathlib.Path(__file__).resolve().parents[2] / "docs"
    for page in ("tapeo_env.md", "robada_env.md"):
        text = (docs / page).read_text(encoding="utf-8")
        for formula in ("`s_i`", "`+1/k`", "`-1/(n-k)`", "`s_i - (sum_j s_j - s_i) / (n - 1)`"):
            assert formula in text, (page, formula)
    for page in docs.glob("*.md"):
        assert not re.search(r"\bissue \d", page.read_text(encoding="utf-8"), re.I), page.name


@pytest.mark.parametrize("game", ["tapeo", "robada"])
@pytest.mark.parametrize("action", [1.0, "0", np.array([1]), None, -1, 2**70])
def test_the_wrapped_env_loses_on_any_ill_typed_or_out_of_range_action(game, action):
    """env() has no AssertOutOfBoundsWrapper: the raw env's own check makes every such action an
    illegal action, a loss under illegal_action="lose" (-1 for the offender, ILLEGAL_REWARD)."""
    from hod.core.games import get_game

    env = get_game(game).module().env(num_players=2)
    env.reset(seed=0)
    agent = env.agent_selection
    env.step(action)
    assert env.rewards[agent] == -1.0 and env.terminations[agent]
    assert env.infos[agent]["illegal_action"] == agent


@pytest.mark.parametrize("game", ["tapeo", "robada"])
def test_the_wrapped_env_renders_the_placeholder_before_reset(game):
    from hod.core.games import get_game

    env = get_game(game).module().env(num_players=2, render_mode="ansi")
    assert env.render() == "(no game: call reset())"


def test_a_tournament_refuses_max_cycles_up_front():
    from hod.core.errors import ConfigError
    from hod.evaluation.tournament import run_tournament

    with pytest.raises(ConfigError, match="max_cycles.*played to the end"):
        run_tournament("tapeo", ["expert", "greedy"], num_games=4, env_kwargs={"max_cycles": 2})
