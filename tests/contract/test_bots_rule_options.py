"""Every registered bot plays every rule option of its game (issue "One house").

Whole games through the raw environments with ``illegal_action="raise"`` (a bot that plays
outside the mask stops the test), every bot of ``agents.names(game)`` told the table's rule
options by keyword (``agents.make(game, name, seed=..., **rules)``), at 2 and 3 players. Ronda
Robada has three options (2^3 = 8 tables); Tapeo's environment has none (its ``GameInfo.rule_options``
is empty: its scoring rulings are not environment options), so its bots play the one table.

No rule table is skipped: the shipped ``ppo`` of Ronda Robada reads the ``robada_plans``
features, which the encoder computes under the table's rules (``Encoder.with_rules``); the
network itself plays whatever the mask allows. It plays only the table sizes of its model card
(2 and 4 players; ``agents.make(..., num_players=3)`` refuses it), so the 3-player tables leave
it out. The search bot ``rollout`` plays with a small budget.

Then exact values of the rule functions of :mod:`robada_env.rules.runs`, worked out by hand from
shared/rules/ronda_robada.txt and RULINGS R2, R3, R7.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import robada_env
import tapeo_env
from hod import agents
from hod.agents.robada_bots import ExpertBot, RulesMismatchError, greedy_run_points
from hod.agents.robada_features import plan_features
from hod.core.errors import ConfigError
from hod.evaluation.play import BotSpec, TournamentTable
from robada_env.rules import engine, runs
from robada_env.rules.actions import CONFIRM, START, TAKE
from robada_env.rules.cards import card
from robada_env.rules.observation import decode, encode

ROBADA_OPTIONS = [o.name for o in robada_env.GAME.rule_options]
ROBADA_TABLES = [dict(zip(ROBADA_OPTIONS, v)) for v in itertools.product([True, False], repeat=len(ROBADA_OPTIONS))]
SMALL = {"rollout": dict(determinizations=2, candidates=2),   # keep the search bots fast
         "search": dict(determinizations=2, candidates=2)}


def plays(game: str, name: str, n: int) -> bool:
    """Whether bot ``name`` plays tables of ``n`` (its model card's sizes, if it has one)."""
    counts = agents.player_counts(game, name)
    return counts is None or n in counts


def lineups(names: list, n: int) -> list:
    """Tables of n bots such that every name plays at least once (names in a cycle)."""
    k = -(-len(names) // n)
    return [[names[(i * n + j) % len(names)] for j in range(n)] for i in range(k)]


def play(game: str, module, lineup: list, n: int, rules: dict, seed: int) -> list:
    """One whole game; returns the final scores."""
    env = module.raw_env(num_players=n, illegal_action="raise", **rules)
    bots = [agents.make(game, name, seed=seed + i, num_players=n, **rules, **SMALL.get(name, {}))
            for i, name in enumerate(lineup)]
    for b in bots:   # the bots that use the rules hold them (a Config, or a dict for ppo)
        told = getattr(b, "rules", None)
        if told is not None:
            told = told if isinstance(told, dict) else told.as_dict()
            assert all(told[k] == v for k, v in rules.items()), (b, rules)
    env.reset(seed=seed)
    seat = {a: i for i, a in enumerate(env.possible_agents)}
    state = env.unwrapped.game_state if game == "robada" else None
    if state is not None:
        assert all(getattr(state.config, k) == v for k, v in rules.items())
    scores = {}
    for agent in env.agent_iter():
        if env.terminations[agent] or env.truncations[agent]:
            scores[agent] = env.infos[agent]["final_score"]
            env.step(None)
            continue
        bot = bots[seat[agent]]
        if bot.needs_belief:
            st, s = env.unwrapped.game_state, seat[agent]
            action = bot.act(env.observe(agent), lambda rng: module.sample_consistent_state(st, s, rng))
        else:
            action = bot.act(env.observe(agent))
        env.step(action)
    return [scores[a] for a in env.possible_agents]


@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("rules", ROBADA_TABLES, ids=lambda r: "-".join(f"{k}={int(v)}" for k, v in r.items()))
def test_every_robada_bot_plays_every_rule_table(rules, n):
    names = agents.names("robada")
    assert {"random", "greedy", "expert", "rollout", "search", "ppo"} <= set(names)
    assert [m for m in names if not plays("robada", m, n)] == ([] if n == 2 else ["ppo_v1"])   # its card: [2, 4]
    for i, lineup in enumerate(lineups([m for m in names if plays("robada", m, n)], n)):
        scores = play("robada", robada_env, lineup, n, rules, seed=17 * i + n)
        # every card ends in some pile (244 points), except the leftovers when nobody gets them (R7)
        assert sum(scores) == 244 if rules["leftovers_to_last_runner"] else sum(scores) <= 244


@pytest.mark.parametrize("n", [2, 3])
def test_every_tapeo_bot_plays_the_tapeo_table(n):
    assert tapeo_env.GAME.rule_options == ()   # the Tapeo environment has no rule options to pass on
    assert all(plays("tapeo", m, n) for m in agents.names("tapeo"))   # the shipped ppo: every size
    for i, lineup in enumerate(lineups(agents.names("tapeo"), n)):
        play("tapeo", tapeo_env, lineup, n, {}, seed=31 * i + n)


def test_tournament_tells_bots_built_by_name_the_table_rules():
    table = TournamentTable("robada", 2, [BotSpec(name="expert"), BotSpec(name="greedy")],
                  {"closing_ace": False, "may_take_own_pile": False, "reward_scheme": "margin"})
    assert table.rules == {"closing_ace": False, "may_take_own_pile": False}
    for bot in table.bots:
        assert bot.rules.closing_ace is False and bot.rules.may_take_own_pile is False
        assert bot.rules.leftovers_to_last_runner is True
    assert TournamentTable("tapeo", 2, [BotSpec(name="expert")], {}).rules == {}


@pytest.mark.parametrize("name", ["random", "greedy", "expert", "rollout", "ppo"])
def test_bad_rule_options_name_the_legal_ones(name):
    with pytest.raises(ConfigError, match="closing_ace.*may_take_own_pile.*leftovers_to_last_runner"):
        agents.make("robada", name, seed=0, closing_aces=True)
    with pytest.raises(ConfigError, match=r"legal values: \[True, False\]"):
        agents.make("robada", name, seed=0, may_take_own_pile="no")
    with pytest.raises(ConfigError, match="not both"):
        ExpertBot(rules=engine.Config(), closing_ace=False)


# ---- a plan that the table refuses is an error, never a silent fallback ---------------------

def _own_pile_position():
    """Seat 0 has started a run with a 4 (rank 3) and needs a 5 (rank 4): no loose 5, the only 5
    showing is on top of seat 0's OWN pile. Under the published rules the run may take it (R3)."""
    c = card
    hands = [[c(3, 0), c(9, 0)], [c(9, 1), c(9, 2)]]
    loose = [c(3, 1)]
    piles = [[c(1, 0), c(4, 0)], [c(2, 0)]]        # seat 0 shows a 5, seat 1 shows a 3
    used = set(sum(hands, []) + loose + sum(piles, []))
    deck = [x for x in range(40) if x not in used]
    return hands, loose, piles, deck


def test_planner_refuses_a_plan_the_table_forbids():
    hands, loose, piles, deck = _own_pile_position()
    s = engine.from_position(engine.Config(may_take_own_pile=False), hands, loose, piles, deck)
    engine.apply_action(s, START + 3)
    mask = engine.legal_mask(s, 0)
    assert np.flatnonzero(mask).tolist() == [CONFIRM]          # the table forbids TAKE + 0
    obs = encode(s, 0)
    mask2 = mask.copy()
    mask2[CONFIRM - 1] = 1   # a second action so that the planner plans (any mask that lacks TAKE + 0)
    with pytest.raises(RulesMismatchError, match="may_take_own_pile"):
        plan_features(obs, mask2, engine.Config(may_take_own_pile=True))
    # told the table's rules, the planner plans no TAKE + 0
    bot = ExpertBot(seed=0, may_take_own_pile=False)
    assert all(p.action != TAKE for p in bot.plans(decode(obs), np.flatnonzero(mask2).tolist()))


def test_rollout_refuses_belief_states_of_other_rules():
    s = engine.new_game(engine.Config(closing_ace=False), seed=3)
    bot = agents.make("robada", "rollout", seed=0, determinizations=1, candidates=3, window=1000.0)
    obs = {"observation": encode(s, 0), "action_mask": engine.legal_mask(s, 0)}
    with pytest.raises(RulesMismatchError, match="closing_ace"):
        bot.action_values(obs, lambda rng: engine.sample_consistent_state(s, 0, rng), [int(np.flatnonzero(obs["action_mask"])[0])])


# ---- exact values of the rule functions (robada_env.rules.runs) -----------------------------
# Ranks: 0 A, 1 "2", 2 "3", 3 "4", 4 "5", 5 "6", 6 "7", 7 Sota, 8 Caballo, 9 Rey.

def test_next_rank_after_start_and_after_step():
    # R2: A -> 2 when the Ace starts the run; Sota -> Caballo; Rey -> closing Ace, or nothing
    assert runs.next_after_start(0) == 1
    assert runs.next_after_start(7) == 8
    assert runs.next_after_start(9) == 0
    assert runs.next_after_start(9, closing_ace=False) == runs.RUN_CLOSED == -1
    # an Ace reached by a step is the closing Ace: nothing follows it (R2)
    assert runs.next_after_step(0) == -1
    assert runs.next_after_step(8) == 9
    assert runs.next_after_step(9) == 0
    assert runs.next_after_step(9, closing_ace=False) == -1


def test_extension_options_loose_before_piles_and_own_pile():
    loose = [0] * 10
    loose[4] = 1
    tops = [4, 4, -1]        # seats 0 (the runner) and 1 show a 5; seat 2's pile is empty
    # R3: a loose 5 is on the table, so the only extension is to tap it
    assert runs.extension_options(4, loose, tops) == (True, [])
    loose[4] = 0
    assert runs.extension_options(4, loose, tops) == (False, [0, 1])
    assert runs.extension_options(4, loose, tops, runner=0, may_take_own_pile=False) == (False, [1])
    assert runs.extension_options(4, loose, tops, runner=1, may_take_own_pile=False) == (False, [0])
    # an empty pile (-1) is never taken; a closed run extends no further
    assert runs.takeable_piles(4, [-1, -1]) == []
    assert runs.extension_options(runs.RUN_CLOSED, loose, tops) == (False, [])
    assert runs.can_start(3, [0, 0, 0, 1] + [0] * 6, [0, 0, 0, 2] + [0] * 6)
    assert not runs.can_start(3, [0] * 10, [0, 0, 0, 2] + [0] * 6)


def test_walk_run_by_hand():
    # 3 seats. Loose: a Sota and a Caballo. Seat 0 (runner) shows a Rey, seat 2 an Ace.
    loose = [0] * 10
    loose[7] = loose[8] = 1
    tops = [9, -1, 0]
    # start Sota (the loose Sota is used); need Caballo: tap; need Rey: no loose Rey, seat 0's
    # pile; need the closing Ace: seat 2's pile; after the closing Ace: closed.
    w = runs.walk_run(7, loose, tops, runner=0)
    assert w.steps == [(8, runs.TAP_STEP), (9, 0), (0, 2)]
    assert w.need == -1 and w.tops == [-1, -1, -1] and w.loose == [0] * 10
    # may_take_own_pile=False: stops needing the Rey after the Caballo
    w = runs.walk_run(7, loose, tops, runner=0, may_take_own_pile=False)
    assert w.steps == [(8, runs.TAP_STEP)] and w.need == 9
    # closing_ace=False: after the Rey nothing follows
    w = runs.walk_run(7, loose, tops, runner=0, closing_ace=False)
    assert w.steps == [(8, runs.TAP_STEP), (9, 0)] and w.need == -1
    # two piles show the needed rank: the higher valued one, the first on a tie; None: never
    w = runs.walk_run(8, [0] * 8 + [1, 0], [9, 9, 9], runner=0, pile_values=[None, 5, 7])
    assert w.steps == [(9, 2)]
    w = runs.walk_run(8, [0] * 8 + [1, 0], [9, 9, 9], runner=0, pile_values=[None, 7, 7])
    assert w.steps == [(9, 1)]
    with pytest.raises(ValueError, match="needs a loose card"):
        runs.walk_run(8, [0] * 10, tops)


def test_leftovers_receiver():
    # R7: the last runner gets them; nobody when nobody ran or when the option is off
    assert runs.leftovers_receiver(2) == 2
    assert runs.leftovers_receiver(2, leftovers_to_last_runner=False) == runs.NOBODY == -1
    assert runs.leftovers_receiver(runs.NOBODY) == -1


@pytest.mark.parametrize("closing_ace, expected", [(True, 27), (False, 24)])
def test_greedy_run_points_honours_closing_ace(closing_ace, expected):
    # Seat 0 holds a Rey, a Rey is loose: start = 2 x 12 = 24 points. Seat 1's pile is a 2 under
    # an Ace (2 + 1 = 3 points, showing the Ace). With the closing Ace the run takes it:
    # 24 + 3 = 27; without, the run ends at the Rey: 24.
    c = card
    hands = [[c(9, 0)], [c(5, 0)]]
    loose = [c(9, 1)]
    piles = [[], [c(1, 0), c(0, 0)]]
    used = set(sum(hands, []) + loose + sum(piles, []))
    s = engine.from_position(engine.Config(closing_ace=closing_ace), hands, loose, piles,
                             [x for x in range(40) if x not in used])
    view = decode(encode(s, 0))
    assert greedy_run_points(view, 9, engine.Config(closing_ace=closing_ace)) == expected


def test_startable_ranks_is_can_start_for_every_rank():
    # hand ranks {0 (A), 3 (4), 9 (Rey)}, loose ranks {3, 5, 9}: a run starts with a hand card and
    # a loose card of the same rank ('How to play') -> ranks 3 and 9
    assert runs.startable_ranks({0, 3, 9}, {3, 5, 9}) == [3, 9]
    assert runs.startable_ranks({1}, set()) == []
    for hand in ({0, 3, 9}, {1, 2}, set()):
        for loose in ({3, 5, 9}, {2}, set()):
            h = [int(r in hand) for r in range(10)]
            lo = [int(r in loose) for r in range(10)]
            assert runs.startable_ranks(hand, loose) == [r for r in range(10) if runs.can_start(r, h, lo)]
