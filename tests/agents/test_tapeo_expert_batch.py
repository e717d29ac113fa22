"""The Tapeo expert's compiled scorer (agents/tapeo_expert_kernels.py; ExpertBot.scores and
ExpertBot.act_batch): it gives the first, Python scorer (the oracle
tests/oracles/tapeo_expert_scalar.py) bit for bit (every entry, thousands of rows of seeded games at
2-6 players, default and other rulings and weights), act_batch picks a maximiser on every row, a
position worked by hand, tie-breaks uniform over the tied kinds, refusals that leave the bot usable,
and BotPolicy on the batch path."""
from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest

import _tapeo_positions
import tapeo_env
from hod import agents
from hod.agents import tapeo_expert_kernels as kx
from hod.agents.batch_policies import BotPolicy, bot_policy
from hod.agents.tapeo_bots import ExpertBot, ExpertParams
from hod.core.errors import ConfigError
from oracles.tapeo_expert_scalar import ScalarExpert
from tapeo_env.rules.cards import (BREAD, CHURRO, CROQUETA, FREELOADER, HAM1, HAM2, HAM3, NUM_KINDS, PEPPER, PRAWNS,
                                   TORTILLA)
from tapeo_env.rules.engine import Config, apply_actions, legal_mask, new_game
from tapeo_env.rules.observation import OBS_SIZE, decode, encode
from tapeo_env.rules.scoring import Rulings

#: Other scoring numbers than the published ones, every field changed (docs/tapeo_rules.md, Rulings).
OTHER_RULINGS = Rulings(tortilla_pair=4, croqueta_table=(0, 2, 4, 7, 11, 16, 20), ham_first=8, ham_second=2,
                        prawn=2, bread_dip=4, pepper=3, hot_pepper_min=4, hot_pepper_penalty=5, churro_most=4,
                        churro_fewest=8, two_player_fewest_loses=True, tie_break_by_churros=False)
OTHER_PARAMS = ExpertParams(take_rate=0.7, pair_cost=2.5, commit=0.6, bread_weight=0.4, ham_now=0.3,
                            churro_base=(0.9, 2.2), churro_now=(0.1, 0.7), deny=(0.9, 0.6, 0.5, 0.2, 0.1),
                            freeloader_unknown=1.5)


def _aec_positions(n, seed, expert_seats):
    """Every decision of one seeded game of the raw AEC env (``illegal_action="raise"``): the seats
    in ``expert_seats`` played by the expert, the others at random. Returns (obs, masks)."""
    env = tapeo_env.raw_env(num_players=n, illegal_action="raise")
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    bots = {i: ExpertBot(seed=seed * 10 + i) for i in expert_seats}
    obs, masks = [], []
    for agent in env.agent_iter():
        o, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        seat = int(agent.rsplit("_", 1)[1])
        obs.append(o["observation"])
        masks.append(o["action_mask"])
        env.step(bots[seat].act(o) if seat in bots else int(rng.choice(np.flatnonzero(o["action_mask"]))))
    return obs, masks


def _engine_positions(n, seed, rulings):
    """Every seat's decision of one seeded game on the single engine under ``rulings`` (the env
    has no scoring options): experts with those rulings in the even seats, random play in the odd."""
    state = new_game(Config(num_players=n, rulings=rulings), seed=seed)
    rng = np.random.default_rng(seed)
    bots = [ExpertBot(seed=seed + i, rulings=rulings) for i in range(n)]
    obs, masks = [], []
    while not state.terminal:
        picks = []
        for seat in range(n):
            o, m = encode(state, seat), legal_mask(state, seat)
            obs.append(o)
            masks.append(m)
            picks.append(bots[seat].act({"observation": o, "action_mask": m}) if seat % 2 == 0
                         else int(rng.choice(np.flatnonzero(m))))
        apply_actions(state, picks)
    return obs, masks


@pytest.fixture(scope="module")
def positions():
    """4,896 decisions: 2-6 players, 12 seeded games each of the AEC env (random play, the expert in
    every seat, and a mix) and of the engine under other rulings. float32 (G, 157), int8 (G, 10)."""
    obs, masks = [], []
    for n in (2, 3, 4, 5, 6):
        mixes = [(), tuple(range(n)), tuple(range(0, n, 2)), (n - 1,), tuple(range(1, n))]
        for g in range(10):
            o, m = _aec_positions(n, 1000 * n + g, mixes[g % len(mixes)])
            obs += o
            masks += m
        for g in range(2):
            o, m = _engine_positions(n, 77 + 10 * n + g, OTHER_RULINGS)
            obs += o
            masks += m
    return np.asarray(obs, np.float32), np.asarray(masks, np.int8)


@pytest.mark.parametrize("rulings, params", [(Rulings(), ExpertParams()), (OTHER_RULINGS, ExpertParams()),
                                             (Rulings(), OTHER_PARAMS), (OTHER_RULINGS, OTHER_PARAMS)],
                         ids=["published", "other-rulings", "other-weights", "both-other"])
def test_batch_values_equal_the_row_values_bit_for_bit_and_act_batch_picks_a_maximiser(positions, rulings, params):
    obs, masks = positions
    assert len(obs) > 4000
    counts = np.argmax(obs[:, :5], axis=1) + 2
    assert set(counts.tolist()) == {2, 3, 4, 5, 6}
    bot = ExpertBot(seed=3, params=params, rulings=rulings)
    got = kx.expert_values(obs, masks, *kx.rulings_arrays(rulings), kx.params_array(params))
    assert got.shape == (len(obs), NUM_KINDS) and got.dtype == np.float64
    # every entry, legal or not, is the Python scorer's float: exact equality, no tolerance
    oracle = ScalarExpert(params, rulings)
    want = np.stack([oracle.values(decode(o), np.flatnonzero(m)) for o, m in zip(obs, masks)])
    bad = np.flatnonzero((got != want).any(axis=1))
    assert bad.size == 0, f"{bad.size} rows differ, first {bad[0]}: {got[bad[0]]} vs {want[bad[0]]}"
    picks = bot.act_batch(obs, masks)
    assert picks.shape == (len(obs),) and picks.dtype == np.int64
    rows = np.arange(len(obs))
    assert (masks[rows, picks] == 1).all()
    best = np.where(masks == 1, want, -np.inf).max(axis=1)
    single = masks.sum(axis=1) == 1
    assert (want[rows, picks] >= best - 1e-9)[~single].all()
    # a row with one legal action gets it; the rows are mostly real choices
    assert (picks[single] == np.argmax(masks[single], axis=1)).all() and (~single).mean() > 0.8


def test_the_positions_reach_every_rule_of_the_scorer(positions):
    # the differential above means something only if its rows take every branch: the last decision
    # (2 tapas in hand), a Freeloader with the left hand known and unknown, hams, churros in rounds
    # 1-2 and in round 3, every table size
    obs, masks = positions
    views = [decode(o) for o in obs]
    assert any(v.cards_in_hand == 2 for v in views) and any(v.cards_in_hand >= 9 for v in views)
    assert any(v.hand[FREELOADER] and v.known[0] for v in views)
    assert any(v.hand[FREELOADER] and not v.known[0] for v in views)
    assert any(v.hand[[HAM1, HAM2, HAM3]].any() for v in views)
    assert any(v.hand[CHURRO] and v.round == 2 for v in views) and any(v.hand[CHURRO] and v.round < 2 for v in views)


def position(num_players, hand_size, pick, hands, bars, round_=0):
    """:func:`_tapeo_positions.position` as ``(observation, mask)``."""
    d = _tapeo_positions.position(num_players, hand_size, pick, hands, bars, round_)
    return d["observation"], d["action_mask"]


def test_a_position_worked_by_hand():
    # 2 players, hands of 4, pick 1 (3 tapas in each hand), round 1, every bar empty. Seat 0 holds
    # {tortilla, croqueta, prawns}; the left neighbour holds {bread, croqueta, pepper}, the hand seat 0
    # passed it (known: with 2 players every other hand is known after the first pick, so no unseen
    # hand enters the density). Published rulings and weights (take_rate .55, pair_cost 3.5,
    # commit .8, bread_weight .6, deny 1.1 at 2 players).
    o, m = position(2, 4, 1, [{TORTILLA: 1, CROQUETA: 1, PRAWNS: 1}, {BREAD: 1, CROQUETA: 1, PEPPER: 1}], [{}, {}])
    assert np.flatnonzero(m).tolist() == [TORTILLA, CROQUETA, PRAWNS]
    F = Fraction
    # Density: the 6 tapas going round: tortilla, prawns, bread, pepper 1/6 each, croqueta 2/6.
    # Prospects (rule 2): the next pick from a hand of 2 (taken at .55 when there: q1 = .55 * (1 - (1 - d)^2)),
    # then the automatic last tapa (q2 = d). For d = 1/6: q1 = 11/20 * 11/36 = 121/720, q2 = 1/6,
    # P(one more) = 1 - (1 - q1)(1 - q2) = 1 - 599/720 * 5/6 = 265/864.
    more_sixth = 1 - (1 - F(11, 20) * (1 - F(5, 6) ** 2)) * (1 - F(1, 6))
    assert more_sixth == F(265, 864)
    # tortilla (none on the bar: it starts a pair): (5 - 3.5) * 265/864 = 265/576; the left
    # neighbour's best of the hand is its prawns (3) either way: no denial
    tortilla = F(3, 2) * more_sixth
    # croqueta (rule 3): croquetas expected X = .8 * (q1 + q2) with d = 1/3: q1 = 11/20 * 5/9 = 11/36,
    # q2 = 1/3, X = 4/5 * 23/36 = 23/45; value f(1 + X) - f(X) with f interpolating 0, 1, 3:
    # (1 + 2X) - X = 1 + X = 68/45; no denial (the prawns stay its best)
    croqueta = 1 + F(4, 5) * (F(11, 20) * (1 - F(2, 3) ** 2) + F(1, 3))
    assert croqueta == F(68, 45)
    # prawns: 3 now (rule 1) + 1.1 * (3 - 1) (rule 6: the left neighbour would take the prawns, 3
    # points, else the croqueta, 1) = 5.2
    prawns = 3 + F(11, 10) * (3 - 1)
    # bread (not in hand: its value is still computed, nothing to dip: 3 * .6 * P(prawns come)),
    # pepper and the others: 0
    bread = 3 * F(3, 5) * more_sixth
    want = {TORTILLA: tortilla, CROQUETA: croqueta, PRAWNS: prawns, BREAD: bread}
    bot = ExpertBot(seed=0)
    got = kx.expert_values(o[None], m[None], *kx.rulings_arrays(bot.rulings), kx.params_array(bot.params))[0]
    assert got.tolist() == ScalarExpert().values(decode(o), np.flatnonzero(m)).tolist()   # bit for bit
    assert bot.scores(o, np.flatnonzero(m)).tolist() == got.tolist()             # act's one row: the same
    for k in range(NUM_KINDS):
        assert got[k] == pytest.approx(float(want.get(k, 0)), abs=1e-12), k
    assert float(tortilla) == pytest.approx(0.4600694444, abs=1e-9) and float(croqueta) == pytest.approx(1.5111111111)
    assert bot.act_batch(o[None], m[None]).tolist() == [PRAWNS]


def _tied_row():
    # 2 players, last decision (hands of 4, pick 2: 2 tapas in hand). Seat 0: {prawns, bread}, one
    # prawns on its bar: a second prawns scores 3, a bread dips the prawns for 3. The left (= right)
    # neighbour holds {croqueta, pepper} with one prawns on its bar: it takes the pepper (2 > 1) and
    # the croqueta comes to seat 0 automatically, which changes neither; its own gain from prawns or
    # bread is 3 either way, so no denial: prawns = bread = 3, an exact tie.
    o, m = position(2, 4, 2, [{PRAWNS: 1, BREAD: 1}, {CROQUETA: 1, PEPPER: 1}], [{PRAWNS: 1}, {PRAWNS: 1}])
    v = ExpertBot(seed=0).scores(o, np.flatnonzero(m))
    assert v[PRAWNS] == v[BREAD] == 3.0
    return o, m


def test_ties_are_broken_uniformly_with_the_bots_generator():
    o, m = _tied_row()
    # one row, 400 seeds: Binomial(400, 1/2) has sd 10; [140, 260] is 6 sd each side (a miss has
    # probability about 2e-9, and the seeds are fixed: the outcome never changes from run to run)
    picks = np.array([ExpertBot(seed=s).act_batch(o[None], m[None])[0] for s in range(400)])
    assert set(picks.tolist()) <= {PRAWNS, BREAD}
    assert 140 <= int((picks == PRAWNS).sum()) <= 260
    # one batch of 4,000 copies of the row: sd 31.6, 6 sd each side
    picks = ExpertBot(seed=1).act_batch(np.repeat(o[None], 4000, 0), np.repeat(m[None], 4000, 0))
    assert set(picks.tolist()) <= {PRAWNS, BREAD}
    assert 2000 - 190 <= int((picks == PRAWNS).sum()) <= 2000 + 190
    # the same seed draws the same batch again; the bot's generator moves on between calls
    bot, again = ExpertBot(seed=1), ExpertBot(seed=1)
    rows, masks = np.repeat(o[None], 64, 0), np.repeat(m[None], 64, 0)
    first = bot.act_batch(rows, masks)
    assert first.tolist() == again.act_batch(rows, masks).tolist()
    assert bot.act_batch(rows, masks).tolist() != first.tolist()


@pytest.mark.parametrize("obs, masks, match", [
    (np.zeros((3, OBS_SIZE - 1), np.float32), np.ones((3, 10), np.int8), r"observations of shape \(3, 156\)"),
    (np.zeros((3, OBS_SIZE), np.float64), np.ones((3, 10), np.int8), r"dtype float64"),
    (np.zeros(OBS_SIZE, np.float32), np.ones(10, np.int8), r"shape \(157,\)"),
    (np.zeros((3, OBS_SIZE), np.float32), np.ones((3, 10), np.int64), r"action_masks of shape \(3, 10\) dtype int64"),
    (np.zeros((3, OBS_SIZE), np.float32), np.ones((3, 9), np.int8), r"action_masks of shape \(3, 9\)"),
    (np.zeros((3, OBS_SIZE), np.float32), np.ones((2, 10), np.int8), r"3 observations but 2 action masks"),
    ([[0.0] * OBS_SIZE], [[1] * 10], r"numpy arrays, got list and list"),
])
def test_bad_shapes_and_dtypes_are_refused_naming_the_legal_ones(obs, masks, match):
    bot = ExpertBot(seed=5)
    with pytest.raises(ConfigError, match=match) as err:
        bot.act_batch(obs, masks)
    assert "legal: observations float32 (G, 157) and action_masks int8 (or bool) (G, 10)" in str(err.value)


def test_a_row_with_no_legal_action_or_no_player_count_is_refused_and_the_bot_stays_usable():
    o, m = _tied_row()
    obs, masks = np.repeat(o[None], 8, 0), np.repeat(m[None], 8, 0)
    bot, fresh = ExpertBot(seed=9), ExpertBot(seed=9)
    empty = masks.copy()
    empty[5] = 0
    with pytest.raises(ConfigError, match=r"row 5 of action_masks allows no action .*legal: every row with at least "
                                          r"one 1 among the 10 kinds"):
        bot.act_batch(obs, empty)
    blank = obs.copy()
    blank[2] = 0.0
    with pytest.raises(ConfigError, match=r"row 2 of observations has no player count set .*legal: Tapeo layout v1"):
        bot.act_batch(blank, masks)
    with pytest.raises(ValueError):                   # a ConfigError is a ValueError, as legal_actions' refusal
        bot.act_batch(obs, empty)
    # values outside the layout's bounds (they used to crash the process in the kernels): entry 9 is
    # the hand size / 10 (docs/tapeo_env.md), in [0, 1]; the scores' entries go up to 2
    for bad in (np.nan, np.inf, 1e30, -0.5, 1.5):
        wild = obs.copy()
        wild[3, 9] = bad
        with pytest.raises(ConfigError, match=r"row 3 of observations has entry 9 = .*legal: finite values in "
                                              r"\[0, 1\] for that entry"):
            bot.act_batch(wild, masks)
    # nothing was drawn: the bot decides as a fresh one with the same seed
    assert bot.act_batch(obs, masks).tolist() == fresh.act_batch(obs, masks).tolist()
    assert bot.act({"observation": o, "action_mask": m}) in (PRAWNS, BREAD)
    assert bot.act_batch(obs[:0], masks[:0]).shape == (0,)
    assert bot.act_batch(obs, masks.astype(bool)).shape == (8,)       # a bool mask reads as 0/1


def test_other_weights_with_too_few_entries_are_refused():
    with pytest.raises(ConfigError, match=r"ExpertParams.deny=\(1.0,\) has 1 entries; legal: at least 5"):
        ExpertBot(seed=0, params=replace(ExpertParams(), deny=(1.0,))).act_batch(*[a[None] for a in _tied_row()])


def test_a_subclass_with_its_own_scorer_is_asked_row_by_row():
    class Prawnless(ExpertBot):
        def scores(self, observation, legal):
            v = super().scores(observation, legal)
            v[PRAWNS] = -100.0
            return v

    o, m = _tied_row()
    assert Prawnless(seed=0).act_batch(np.repeat(o[None], 50, 0), np.repeat(m[None], 50, 0)).tolist() == [BREAD] * 50


def test_bot_policy_around_the_expert_plays_in_batch(positions, monkeypatch):
    obs, masks = positions
    bot = agents.make("tapeo", "expert", seed=4)
    policy = bot_policy("tapeo", bot)
    assert isinstance(policy, BotPolicy)
    seen = []
    monkeypatch.setattr(bot, "act", lambda *a, **k: pytest.fail("BotPolicy asked the expert row by row"))
    real = bot.act_batch
    monkeypatch.setattr(bot, "act_batch", lambda o, m: seen.append(len(o)) or real(o, m))
    picks = policy(obs[:700], masks[:700])
    assert seen == [700]
    assert picks.dtype == np.int64 and (masks[np.arange(700), picks] == 1).all()
    # the same decisions as the bot's own batch with the same seed
    assert picks.tolist() == ExpertBot(seed=4).act_batch(obs[:700], masks[:700]).tolist()


def test_bot_policy_still_asks_a_bot_without_a_batch_method_row_by_row(positions):
    obs, masks = positions
    policy = bot_policy("tapeo", agents.make("tapeo", "greedy", seed=0))
    picks = policy(obs[:50], masks[:50])
    assert (masks[np.arange(50), picks] == 1).all()


def test_the_speed_benchmark_runs(capsys):
    # hod.benchmarks.tapeo_expert_speed on 8 rows, one timed pass, no fresh processes (the figures are
    # the benchmark's to report, not this test's)
    from hod.benchmarks import tapeo_expert_speed as bench

    r = bench.main(["--players", "3", "--rows", "8", "--repeats", "1", "--no-compile"])
    assert set(r["batch"]) == {1, 64, 1024} and r["act"] > 0 and r["maximisers"] == 1.0 and r["first_call"] is None
    assert "act_batch, batch 1024" in capsys.readouterr().out


def test_act_and_scores_refuse_what_the_compiled_scorer_cannot_read():
    """act scores its one row with the compiled scorer: a NaN, a short row or a row with no player
    count is a ConfigError naming what is legal (never a crash or a read past the row)."""
    bot = ExpertBot(seed=0)
    m = np.zeros(NUM_KINDS, np.int8)
    m[[PRAWNS, BREAD]] = 1
    # a NaN is refused by every bot's observation check (hod.agents.base.check_observation), before
    # the scorer; the scorer's own check of its batch (act_batch) is tested above
    with pytest.raises(ConfigError, match=r"observation entry 0 = nan; legal: finite numbers"):
        bot.act({"observation": np.full(OBS_SIZE, np.nan, np.float32), "action_mask": m})
    with pytest.raises(ConfigError, match=r"legal: observations float32 \(G, 157\)"):
        bot.scores(np.zeros(OBS_SIZE - 1, np.float32), [PRAWNS, BREAD])
    with pytest.raises(ConfigError, match="no player count set"):
        bot.act({"observation": np.zeros(OBS_SIZE, np.float32), "action_mask": m})
    o, mm = _tied_row()
    assert bot.act({"observation": o, "action_mask": mm}) in (PRAWNS, BREAD)   # still usable after the refusals
