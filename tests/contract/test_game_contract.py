"""One contract suite over every declared game (as Pgx's ``api_test`` is over its games): each game
of the ``hod.games`` entry points is checked here as soon as it is declared, with nothing written
for it.

* the declaration and the package's public face (``env``, ``raw_env``, ``parallel_env``, ``GAME``,
  ``LAYOUT``, the record functions), the spaces and metadata they give;
* PettingZoo's own ``api_test`` and ``parallel_api_test`` at the smallest and largest table;
* the engine protocol: the batched engine (``GameInfo.batched_engine``) plays the same games as the
  game's Parallel env, step by step (every seat's observation, the movers' masks, every reward,
  the game's end), under every declared rule option and two reward schemes. The protocol's
  signatures, shapes, state records and refusals are checked per game by
  ``tests/contract/test_engine_protocol.py``, which reads the same entry points;
* records: make, save (atomic), load and replay a finished game back to the same record; the
  refusals of an unfinished game and of another game's header;
* bots: every registered bot (``hod.agents.names(game)``) plays only legal actions (the env raises
  on any other) under each declared rule option, each at every legal value.
"""
from __future__ import annotations

import copy
from importlib.metadata import entry_points

import numpy as np
import pytest
from pettingzoo.test import api_test, parallel_api_test

import hod.agents as agents
from hod.core.errors import RecordError
from hod.core.games import ENTRY_POINT_GROUP, get_game, load_object, make_raw_env

#: The installed games (entry points), not the small fake games other tests register at run time.
GAMES = sorted(ep.name for ep in entry_points(group=ENTRY_POINT_GROUP))
#: (game, table size): each game at its smallest and largest table.
SIZES = [(g, n) for g in GAMES for n in sorted({get_game(g).min_players, get_game(g).max_players})]


def rule_sets(game: str) -> list[dict]:
    """The printed rules, then each rule option alone at each of its other legal values."""
    info = get_game(game)
    return [{}] + [{o.name: v} for o in info.rule_options for v in o.legal if v != o.default]


#: (game, table size, rule options, reward scheme) of the engine checks: both sizes under the
#: printed rules with ``points``, the largest with ``win_loss`` and ``margin`` too, the smallest
#: under every other rule set (``margin``).
ENGINE_CASES = ([(g, n, {}, "points") for g, n in SIZES]
                + [(g, get_game(g).max_players, {}, s) for g in GAMES for s in ("win_loss", "margin")]
                + [(g, get_game(g).min_players, r, "margin") for g in GAMES for r in rule_sets(g)[1:]])
BOT_CASES = [(g, b) for g in GAMES for b in agents.names(g)]


def test_the_declared_games_include_both_shipped_games():
    assert {"tapeo", "robada"} <= set(GAMES)


@pytest.mark.parametrize("game", GAMES)
def test_the_declaration_and_the_package_agree(game):
    info = get_game(game)
    mod = info.module()
    assert info.name == game and mod.GAME is info
    for name in ("env", "raw_env", "parallel_env", "LAYOUT", "make_record", "save_record", "load_record", "replay"):
        assert hasattr(mod, name), name
    assert mod.LAYOUT is info.layout
    assert len(info.action_names) == info.num_actions == len(set(info.action_names))
    assert info.default_max_cycles >= info.max_game_length          # the default never truncates a game
    for n in info.player_counts:
        env = mod.raw_env(num_players=n)
        assert env.metadata["name"] == info.env_name
        assert env.possible_agents == [f"player_{i}" for i in range(n)]
        space = env.observation_space("player_0")
        assert space["observation"].shape == (info.obs_size,) and space["observation"].dtype == np.float32
        assert space["action_mask"].shape == (info.num_actions,) and env.action_space("player_0").n == info.num_actions
        if info.state_layout is not None:
            assert env.state_space.shape == (info.state_layout.size,)
    for bad in (info.min_players - 1, info.max_players + 1):
        with pytest.raises(Exception, match="num_players"):
            mod.raw_env(num_players=bad)


@pytest.mark.parametrize("game,n", SIZES)
def test_pettingzoo_api_tests(game, n):
    mod = get_game(game).module()
    api_test(mod.env(num_players=n), num_cycles=20)
    parallel_api_test(mod.parallel_env(num_players=n), num_cycles=20)


@pytest.mark.parametrize("game,n,rules,scheme", ENGINE_CASES,
                         ids=[f"{g}-{n}-{'-'.join(f'{k}={v}' for k, v in r.items()) or 'rules'}-{s}"
                              for g, n, r, s in ENGINE_CASES])
def test_the_batched_engine_plays_the_games_of_the_parallel_env(game, n, rules, scheme):
    """Random legal play (one generator, the engine's masks) of four seeded games through the
    batched engine and through the game's Parallel env, side by side until every game ends: at
    every step the same observation of every seat, the same mask of each deciding seat, the same
    rewards of every seat and the same end."""
    info = get_game(game)
    seeds = [0, 11, 2**40 + 3, 2**64 - 1]
    eng = load_object(info.batched_engine)(n, len(seeds), seed=0, reward_scheme=scheme, **rules)
    eng.reset(seeds=seeds)
    envs, obs = [], []
    for s in seeds:
        env = info.module().parallel_env(num_players=n, reward_scheme=scheme, illegal_action="raise", **rules)
        envs.append(env)
        obs.append(env.reset(seed=s)[0])
    rng = np.random.default_rng(1)
    live = np.arange(len(seeds))
    for step in range(info.max_game_length + 1):
        if not live.size:
            break
        mask = eng.legal_mask(live).copy()
        seen = eng.observe(live, seats=range(n)).copy()
        acts = eng.random_actions(mask, rng)
        res = eng.step(acts, games=live)
        for k, g in enumerate(live):
            env, o = envs[g], obs[g]
            for i, agent in enumerate(env.possible_agents):
                np.testing.assert_array_equal(seen[k, i], o[agent]["observation"], err_msg=f"game {g} step {step} seat {i}")
            movers = range(n) if info.simultaneous else [env._rules.to_act(env.game_state)]
            for j, seat in enumerate(movers):
                np.testing.assert_array_equal(mask[k, j], o[env.possible_agents[seat]]["action_mask"])
            joint = {env.possible_agents[seat]: int(acts[k, j]) for j, seat in enumerate(movers)}
            obs[g], rewards, terms, truncs, _ = env.step(joint)
            np.testing.assert_array_equal(res.rewards[k], [rewards[a] for a in env.possible_agents],
                                          err_msg=f"game {g} step {step} rewards")
            assert bool(res.game_over[k]) == all(terms.values()) and not any(truncs.values())
        live = live[~res.game_over]
    assert not live.size and eng.terminal.all()
    assert all(env.agents == [] for env in envs)


@pytest.mark.parametrize("game", GAMES)
def test_records_make_save_load_and_replay(game, tmp_path):
    info = get_game(game)
    mod = info.module()
    n = info.min_players
    env = make_raw_env(game, n)
    with pytest.raises(RecordError):
        env.record()                                         # no game yet
    env.reset(seed=5)
    with pytest.raises(RecordError):
        env.record()                                         # not finished
    rng = np.random.default_rng(0)
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    players = [f"bot{i}" for i in range(n)]
    rec = env.record(players=players)
    assert (rec["game"], rec["seed"], rec["players"]) == (game, 5, players)
    path = tmp_path / "game.json"
    mod.save_record(path, rec)
    assert [p.name for p in tmp_path.iterdir()] == ["game.json"]         # written atomically: no temp file left
    loaded = mod.load_record(path)
    assert loaded == rec
    state = mod.replay(loaded)
    assert mod.make_record(state, seed=5, players=players) == rec
    for field, value in (("game", "another"), ("format_version", 1.0)):
        bad = copy.deepcopy(rec)
        bad[field] = value
        with pytest.raises(RecordError):
            mod.replay(bad)


def _table_size(game: str, bot: str) -> int:
    counts = agents.player_counts(game, bot)
    return min(counts) if counts else get_game(game).min_players


@pytest.mark.parametrize("game,bot", BOT_CASES, ids=[f"{g}-{b}" for g, b in BOT_CASES])
def test_every_registered_bot_plays_legal_actions_under_every_rule_option(game, bot):
    """The bot (random bots in the other seats) makes 6 decisions, at most 3 a game, in seat 0 and
    seat 1 of seeded games by turns (as many games as that takes, at most 8), through the unwrapped AEC env
    (``illegal_action="raise"``: an illegal action fails the test), under the printed rules and
    each rule option at each other legal value; a search bot gets the game's belief samples, as
    in the tournament."""
    info = get_game(game)
    mod = info.module()
    n = _table_size(game, bot)
    sampler = getattr(mod, "sample_consistent_state", None)
    for r, rules in enumerate(rule_sets(game)):
        me = agents.make(game, bot, seed=r, num_players=n, **rules)
        others = [agents.make(game, "random", seed=100 + i, **rules) for i in range(n)]
        env = make_raw_env(game, n, illegal_action="raise", **rules)
        decisions, seats = 0, set()
        for k in range(8):
            if decisions >= 6:
                break
            mine = k % 2 if n > 1 else 0                 # the bot's seat in this game
            env.reset(seed=20 + 10 * r + k)
            in_game = 0
            for agent in env.agent_iter():
                obs, _, term, trunc, _ = env.last()
                if term or trunc:
                    env.step(None)
                    continue
                seat = env.possible_agents.index(agent)
                if seat != mine:
                    env.step(others[seat].act(obs))
                    continue
                if decisions == 6 or in_game == 3:
                    break
                decisions += 1
                in_game += 1
                seats.add(seat)
                if getattr(me, "needs_belief", False):
                    def belief(g, seat=seat):
                        return sampler(env.unwrapped.game_state, seat, g)
                    belief.seat = seat
                    action = me.act(obs, belief)
                else:
                    action = me.act(obs)
                assert obs["action_mask"][action] == 1, (rules, action)
                env.step(action)
        assert decisions == 6 and seats == set(range(min(n, 2))), (rules, decisions, seats)
