"""The expert's compiled planner (hod.agents.robada_planner_kernels) against the Python planner it
replaced (tests/oracles/robada_planner.py), bit for bit: plans, values, damage, follow-up, choices
and tie-break draws on seeded games at 2-4 players under every rule option; numpy's PCG64 stream
as the playouts draw it; and the playout kernel against playouts of the oracle on the engine."""
import itertools

import numpy as np
import pytest

from hod.agents import robada_planner_kernels as pk
from hod.agents.robada_bots import ExpertBot, ExpertParams, Plan, planner_weights
from hod.agents.robada_search import RolloutBot, playout_score
from hod.agents.rules import ROBADA_RULE_OPTIONS
from oracles.robada_planner import OraclePlanner
from robada_env.rules import engine
from robada_env.rules.engine import Config
from robada_env.rules.kernels import rules_array
from robada_env.rules.observation import encode, view_of

RULE_TABLES = [dict(zip(ROBADA_RULE_OPTIONS, v)) for v in itertools.product((True, False), repeat=3)]


def _plan_fields(p):
    return (p.action, p.gain, p.run, list(p.loose), list(p.top), list(p.pts), list(p.hand), p.steps, p.value,
            p.damage, p.follow)


@pytest.mark.parametrize("n", [2, 3, 4])
@pytest.mark.parametrize("options", RULE_TABLES, ids=lambda o: "-".join(f"{k}={int(v)}" for k, v in o.items()))
def test_plans_values_and_choices_are_the_python_planners(n, options):
    """Every decision of a seeded game (the compiled expert playing every seat): the same plans in
    the same order, the same values (==, not approx), the same action and the same tie-break draws
    (the generators stay equal), through ``decide``, ``plans`` + ``evaluate`` and an evaluation
    of plans built outside the planner."""
    config = Config(num_players=n, **options)
    params = ExpertParams(opp_weights=(1.0, 0.6), future_weight=0.8, damage_weight=1.1) if n == 4 else None
    s = engine.new_game(config, seed=7 * n + sum(options.values()))
    bot = ExpertBot(seed=n, params=params, rules=config)
    oracle = OraclePlanner(config, params, seed=n)
    decisions = 0
    while not s.terminal:
        p = s.current
        legal = engine.legal_actions(s)
        view = view_of(s, p)
        action, values = bot.decide({"observation": encode(s, p), "action_mask": engine.legal_mask(s, p)})
        assert (action, values) == oracle.decide(view, legal)
        if len(legal) > 1:
            decisions += 1
            mine, theirs = bot.plans(view, legal), oracle.plans(view, legal)
            values = [bot.evaluate(view, q) for q in mine]
            assert values == [oracle.evaluate(view, q) for q in theirs]
            assert [_plan_fields(q) for q in mine] == [_plan_fields(q) for q in theirs]
            # plans built by hand (not from the planner): the kernel values them from their fields
            fresh = [Plan(q.action, q.gain, q.run, list(q.loose), list(q.top), list(q.pts), list(q.hand)) for q in theirs]
            assert [bot.evaluate(view, q) for q in fresh] == values
            assert [(q.damage, q.follow) for q in fresh] == [(q.damage, q.follow) for q in theirs]
        assert bot.rng.bit_generator.state == oracle.rng.bit_generator.state
        engine.apply_action(s, action)
    assert decisions >= 15 and s.terminal


def test_pcg_stream_is_numpys():
    """``pcg_integers`` draws what ``Generator.integers(k)`` draws from the same PCG64 state, and
    leaves the same state (the buffered 32-bit half included)."""
    for seed in range(40):
        rng = np.random.default_rng(seed)
        rng.integers(3)                               # a buffered half-draw left in the stream
        st = pk.pcg_state(rng)
        for i in range(30):
            k = (2, 3, 5, 7, 2**31 - 1)[(seed + i) % 5]
            assert pk.pcg_integers(st, k) == rng.integers(k)
        assert np.array_equal(st, pk.pcg_state(rng))
    with pytest.raises(ValueError, match="PCG64"):
        pk.pcg_state(np.random.Generator(np.random.MT19937(0)))


def test_pick_breaks_ties_as_the_python_planner():
    """The kernel's ``pick`` (the playouts' choice) picks the index the Python planner's ``_pick``
    picks, with the same draws: values with exact ties and ties within 1e-9."""
    from oracles.robada_planner import _pick

    gen = np.random.default_rng(5)
    drawn = 0
    for seed in range(200):
        c = int(gen.integers(1, 9))
        values = np.round(gen.normal(size=c) * 2) / 2 + gen.integers(0, 2, size=c) * 1e-10
        rng = np.random.default_rng(seed)
        st = pk.pcg_state(rng)
        buf = np.zeros(pk.MAX_PLANS)
        buf[:c] = values
        before = rng.bit_generator.state
        assert pk.pick(buf, c, st) == _pick(values.tolist(), rng)
        assert np.array_equal(st, pk.pcg_state(rng))
        drawn += rng.bit_generator.state != before
    assert drawn == 44                                  # 44 of the 200 were ties (a draw was made)


def _oracle_playout(base, steps, seat, seeds, config, margin_weight):
    """A playout as the search bot played it before the kernel: the engine stepped from Python, the
    Python planner in every seat seeded with ``default_rng(seeds[k])``."""
    s = base.clone()
    for a in steps:
        engine.apply_action(s, a)
    players = [OraclePlanner(config, seed=int(x)) for x in seeds]
    while not s.terminal:
        p = s.current
        legal = engine.legal_actions(s)
        engine.apply_action(s, legal[0] if len(legal) == 1 else players[p].decide(view_of(s, p), legal)[0])
    return playout_score(s.points, seat, margin_weight)


@pytest.mark.parametrize("n,options", [(2, RULE_TABLES[0]), (3, RULE_TABLES[5]), (4, RULE_TABLES[6])])
def test_playout_kernel_scores_as_the_python_playouts(n, options):
    """The kernel's scores for each candidate move equal the Python playouts' (engine + Python
    planner), bit for bit, on belief samples of seeded positions."""
    config = Config(num_players=n, **options)
    bot = RolloutBot(seed=0, rules=config)
    rng = np.random.default_rng(n)
    s = engine.new_game(config, seed=n)
    checked = 0
    experts = [ExpertBot(seed=k, rules=config) for k in range(n)]
    while not s.terminal and checked < 4:
        legal = engine.legal_actions(s)
        if len(legal) > 1:
            base = engine.sample_consistent_state(s, s.current, rng)
            plans = [p.steps for p in experts[0].plans(view_of(base, base.current), legal)][:5]
            steps = np.zeros((len(plans), pk.MAX_STEPS), np.int64)
            for i, p in enumerate(plans):
                steps[i, :len(p)] = p
            seeds = rng.integers(2**31, size=n)
            got = bot._playouts(base, steps, np.array([len(p) for p in plans], np.int64), seeds)
            want = [_oracle_playout(base, p, base.current, seeds, config, bot.margin_weight) for p in plans]
            assert got.tolist() == want
            checked += 1
        engine.apply_action(s, experts[s.current].act_view(view_of(s, s.current), legal))
    assert checked == 4


def test_planner_weights_repeat_the_last_seat_weight():
    # (1.0, 0.6): seats 1, 2, 3 weigh 1.0, 0.6, 0.6; then future 1.0 and damage 1.3 (the defaults)
    assert planner_weights(ExpertParams(opp_weights=(1.0, 0.6))).tolist() == [1.0, 0.6, 0.6, 1.0, 1.3]
    assert rules_array(Config()).dtype == np.int8
    with pytest.raises(Exception, match="opp_weights"):
        planner_weights(ExpertParams(opp_weights=()))


@pytest.mark.parametrize("own", [True, False])
def test_every_pile_showing_the_needed_rank_branches_as_the_python_planner(own):
    """4 players, every pile shows a 5 and I start 4 (loose 4c): the run's 5 can be any of the 4
    piles (3 without my own, R3), then taps the loose 6c and 7c; the same plans as the Python planner,
    in its order, and within MAX_PLANS."""
    from _robada_helpers import position

    s = position(["4o 7o Ro", "Ab 2b 3b", "Ae 2e 3e", "Ac 2c 3c"], loose="4c 6c 7c",
                 piles=["Co 5o", "Cc 5c", "Ce 5e", "Cb 5b"], n=4, may_take_own_pile=own)
    config = s.config
    view, legal = view_of(s, 0), engine.legal_actions(s)
    mine = ExpertBot(seed=0, rules=config).plans(view, legal)
    theirs = OraclePlanner(config, seed=0).plans(view, legal)
    runs = [q.steps for q in theirs if q.steps[0] == legal[0]]
    # start 4: confirm at once, or take one of the piles (4 or 3), then confirm / tap 6 / tap 7 -> 1 + 4 x 3
    assert len(runs) == (1 + 4 * 3 if own else 1 + 3 * 3)
    assert [q.steps for q in mine] == [q.steps for q in theirs] and len(mine) <= pk.MAX_PLANS
    assert [_plan_fields(q) for q in mine] == [_plan_fields(q) for q in theirs]
