"""The environment contract of docs/DESIGN.md, checked alike on both games: PettingZoo's own
test suite, misuse (stepping before reset() or after the game), unknown options, the shared
option and seed validation, render before reset, ``game_seed`` and the record functions.
Messages are asserted exactly."""
import re

import numpy as np
import pytest
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, render_test, seed_test

import robada_env
import tapeo_env
from hod.core.errors import ConfigError, RecordError, ResetNeededError, UnknownOptionError
from robada_env.env import RobadaParallelEnv
from robada_env.rules import record as robada_record
from tapeo_env.rules import record as tapeo_record

GAMES = {"tapeo": (tapeo_env, tapeo_env.TapeoParallelEnv), "robada": (robada_env, RobadaParallelEnv)}
BOTH = pytest.mark.parametrize("game", sorted(GAMES))

NOT_STARTED = "step() called before reset(): call reset()"
GAME_OVER = "the game is over: call reset()"


def raw(game, **kw):
    return GAMES[game][0].raw_env(num_players=2, **kw)


def par(game, **kw):
    return GAMES[game][1](num_players=2, **kw)


# ---------------------------------------------------------------- PettingZoo's own test suite

# (game, num_players, num_cycles): Tapeo 2-6 players, Ronda Robada 2-4; the raw envs raise on
# illegal actions, and api_test samples with the mask, so they play legally.
AEC_CASES = [("tapeo", n, 200) for n in (2, 3, 4, 6)] + [("robada", n, 300) for n in (2, 3, 4)]
RAW_CASES = [("tapeo", 2, 200), ("tapeo", 5, 200), ("robada", 3, 300)]
PARALLEL_CASES = [("tapeo", n, 200) for n in (2, 4, 6)] + [("robada", n, 1000) for n in (2, 3, 4)]
SEED_CYCLES = {"tapeo": 50, "robada": 100}


@pytest.mark.parametrize("game,n,cycles", AEC_CASES)
def test_pettingzoo_api_test(game, n, cycles):
    api_test(GAMES[game][0].env(num_players=n), num_cycles=cycles)


@pytest.mark.parametrize("game,n,cycles", RAW_CASES)
def test_pettingzoo_api_test_raw_env(game, n, cycles):
    api_test(GAMES[game][0].raw_env(num_players=n), num_cycles=cycles)


@pytest.mark.parametrize("game,n,cycles", PARALLEL_CASES)
def test_pettingzoo_parallel_api_test(game, n, cycles):
    parallel_api_test(GAMES[game][0].parallel_env(num_players=n), num_cycles=cycles)


@BOTH
def test_pettingzoo_seed_and_render_tests(game):
    mod = GAMES[game][0]
    seed_test(lambda **kw: mod.env(num_players=3, **kw), num_cycles=SEED_CYCLES[game])
    parallel_seed_test(lambda **kw: mod.parallel_env(num_players=3, **kw))
    render_test(lambda render_mode=None: mod.env(render_mode=render_mode))


# ---------------------------------------------------------------- misuse


def play_aec_to_the_end(env, seed):
    """A full game of legal actions (lowest legal); finished agents step None (PettingZoo)."""
    env.reset(seed=seed)
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))


def play_parallel_to_the_end(env, seed):
    obs, _ = env.reset(seed=seed)
    while env.agents:
        obs, *_ = env.step({a: int(np.flatnonzero(obs[a]["action_mask"])[0]) for a in env.agents})



@BOTH
def test_step_before_reset_says_call_reset(game):
    for env, action in ((raw(game), 0), (par(game), {"player_0": 0, "player_1": 0})):
        with pytest.raises(ResetNeededError) as e:
            env.step(action)
        assert str(e.value) == NOT_STARTED and isinstance(e.value, ValueError)


@BOTH
def test_aec_finished_agents_step_none_then_stepping_says_game_over(game):
    env = raw(game)
    play_aec_to_the_end(env, seed=3)  # every finished agent stepped None without error
    assert env.agents == [] and env.game_state is not None
    with pytest.raises(ResetNeededError, match=f"^{re.escape(GAME_OVER)}$"):
        env.step(0)
    with pytest.raises(ResetNeededError, match=f"^{re.escape(GAME_OVER)}$"):
        env.step(None)
    env.reset(seed=3)  # and reset() starts again
    assert env.agents == ["player_0", "player_1"]


@BOTH
def test_aec_after_an_illegal_action_in_lose_mode(game):
    env = raw(game, illegal_action="lose")
    env.reset(seed=0)
    bad = int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"] == 0)[0])
    env.step(bad)
    assert all(env.terminations.values())
    for _ in env.agent_iter():
        env.step(None)
    with pytest.raises(ResetNeededError, match=re.escape(GAME_OVER)):
        env.step(None)


@BOTH
def test_parallel_step_after_the_game_says_game_over(game):
    env = par(game)
    play_parallel_to_the_end(env, seed=5)
    with pytest.raises(ResetNeededError) as e:
        env.step({"player_0": 0, "player_1": 0})
    assert str(e.value) == GAME_OVER


def test_tapeo_parallel_step_with_missing_agents_lists_them():
    env = par("tapeo")
    env.reset(seed=0)
    with pytest.raises(ValueError, match=re.escape("missing ['player_0', 'player_1'], unknown []")):
        env.step({})
    assert env.agents == ["player_0", "player_1"] and env.game_state.pick == 0


def test_robada_parallel_step_without_the_agent_to_act_lists_it():
    env = par("robada")
    env.reset(seed=0)  # seat 0 acts first
    with pytest.raises(ValueError, match=re.escape("missing ['player_0'], not live []")):
        env.step({})
    with pytest.raises(ValueError, match=re.escape("missing ['player_0'], not live []")):
        env.step({"player_1": robada_env.NOOP})
    with pytest.raises(ValueError, match=re.escape("missing [], not live ['player_7']")):
        env.step({"player_0": 10, "player_7": 0})
    assert env.agents == ["player_0", "player_1"] and env.game_state.history == []
    # the seats not to act may leave out their no-op: one decision is made
    drop = int(np.flatnonzero(env.action_mask("player_0"))[0])
    env.step({"player_0": drop})
    assert env.game_state.history == [drop]


# ---------------------------------------------------------------- options


LEGAL_OPTIONS = {
    "tapeo": ["num_players", "render_mode", "reward_scheme", "illegal_action", "max_cycles", "round_rewards"],
    "robada": ["num_players", "render_mode", "reward_scheme", "illegal_action", "max_cycles", "observation_version",
               "closing_ace", "may_take_own_pile", "leftovers_to_last_runner"],
}


@BOTH
def test_unknown_option_is_both_config_and_type_error_listing_the_legal_ones(game):
    mod = GAMES[game][0]
    expected = f"unknown option(s) ['colour', 'players']; legal options: {LEGAL_OPTIONS[game]}"
    for make in (mod.env, mod.raw_env, mod.parallel_env, GAMES[game][1]):
        with pytest.raises(UnknownOptionError) as e:
            make(players=4, colour="red")
        assert str(e.value) == expected
        assert isinstance(e.value, ConfigError) and isinstance(e.value, TypeError)


BAD_OPTIONS = [
    ({"max_cycles": 0}, "max_cycles=0 is out of range; legal values: integers 1..1000000000"),
    ({"max_cycles": 1.5}, "max_cycles=1.5 must be an integer; legal values: integers 1..1000000000"),
    ({"max_cycles": True}, "max_cycles=True must be an integer; legal values: integers 1..1000000000"),
    ({"render_mode": "rgb_array"}, "render_mode='rgb_array' is not allowed; legal values: [None, 'ansi', 'human']"),
    ({"reward_scheme": "elo"}, "reward_scheme='elo' is not allowed; legal values: ['points', 'win_loss', 'margin']"),
    ({"illegal_action": "ignore"}, "illegal_action='ignore' is not allowed; legal values: ['raise', 'lose']"),
]


@BOTH
@pytest.mark.parametrize("option,message", BAD_OPTIONS)
def test_shared_options_give_the_same_error_in_both_games(game, option, message):
    for make in (GAMES[game][0].raw_env, GAMES[game][1]):
        with pytest.raises(ConfigError) as e:
            make(**option)
        assert str(e.value) == message


@BOTH
@pytest.mark.parametrize("seed", [-1, 1.5, True, "3"])
def test_reset_seed_must_be_none_or_a_non_negative_int(game, seed):
    for env in (raw(game), par(game)):
        with pytest.raises(ConfigError) as e:
            env.reset(seed=seed)
        assert str(e.value) == f"seed={seed!r} is not allowed; legal values: None or an int in 0..2**64-1"
        assert env.game_state is None  # nothing was dealt
    env = par(game)
    env.reset(seed=4)
    before = env.game_state
    with pytest.raises(ConfigError):
        env.reset(seed=-1)
    assert env.game_state is before and env.game_seed == 4


# ---------------------------------------------------------------- parity


@BOTH
def test_render_before_reset(game, capsys):
    assert raw(game, render_mode="ansi").render() == "(no game: call reset())"
    assert par(game, render_mode="ansi").render() == "(no game: call reset())"
    assert par(game, render_mode="human").render() is None
    assert capsys.readouterr().out == "(no game: call reset())\n"
    assert raw(game).render() is None  # no render mode: a warning, nothing printed
    assert capsys.readouterr().out == ""


def _deal(game, env):
    s = env.game_state
    return s.dealt[0] if game == "tapeo" else s.deck_order


@BOTH
def test_same_seed_same_deal_in_every_form_and_seat_count(game):
    mod = GAMES[game][0]
    for n in (2, 4):
        aec, parallel = mod.env(num_players=n), mod.parallel_env(num_players=n)
        aec.reset(seed=9)
        parallel.reset(seed=9)
        assert _deal(game, aec.unwrapped) == _deal(game, parallel)
        aec.reset(seed=10)
        assert _deal(game, aec.unwrapped) != _deal(game, parallel)


@BOTH
def test_game_seed_replays_the_deal_in_both_forms(game):
    for make in (raw, par):
        env = make(game)
        env.reset(seed=11)
        assert env.game_seed == 11
        env.reset()  # drawn from the generator seeded by the last seeded reset
        drawn, deal = env.game_seed, _deal(game, env)
        assert isinstance(drawn, int) and drawn != 11
        other = make(game)
        other.reset(seed=11)
        other.reset()
        assert other.game_seed == drawn  # same seed, same sequence of games
        again = make(game)
        again.reset(seed=drawn)
        assert _deal(game, again) == deal


@BOTH
def test_record_functions_have_the_same_names_and_round_trip(game, tmp_path):
    rec_mod = {"tapeo": tapeo_record, "robada": robada_record}[game]
    env = par(game)
    play_parallel_to_the_end(env, seed=8)
    rec = env.record()
    assert rec["seed"] == 8 == env.game_seed
    assert rec == rec_mod.make_record(env.game_state, seed=8)
    rec_mod.save_record(tmp_path / "g.json", rec)
    loaded = rec_mod.load_record(tmp_path / "g.json")
    assert loaded == rec
    rec_mod.replay(loaded)
    title = {"tapeo": "Tapeo", "robada": "Ronda Robada"}[game]
    with pytest.raises(RecordError) as e:
        par(game).record()  # no game yet
    assert str(e.value) == f"no game: a {title} record can only be made of a finished game"
