"""Batched Ronda Robada engine (robada_env.rules.batched over the kernels of
robada_env.rules.kernels); the learner vector env over it: tests/training/test_training_learner_env.py.

Two differential tests: one plays thousands of seeded games through the batched engine and the
single-game engine (:mod:`robada_env.rules.engine`, the reference) from the same deck orders,
requiring identical states, masks, observations and rewards at every step; the other plays the
compiled engine and the earlier numpy engine (the oracle, tests/oracles/robada_batched.py) in
lockstep and requires the same state record, masks, observations of every seat (bit for bit),
rewards, scores and flags at every step, at 2, 3 and 4 players, every reward scheme and every
rule option, with steps of some games and resets of finished ones. Exact hand-worked values check
the deal, a run and its points, the reward schemes, the state size and the refusal of records no
game reaches.
"""
import numpy as np
import pytest

from _robada_helpers import cs
from hod.core.deal import draw_seeds
from hod.core.errors import ConfigError, IllegalActionError
from hod.core.rewards import final_rewards, win_shares
from oracles.robada_batched import BatchedRobada as OracleRobada
from robada_env.rules.actions import CONFIRM, DROP, NOOP, START, TAKE, TAP
from robada_env.rules.batched import BatchedRobada, batched_final_rewards, random_legal_actions
from robada_env.rules.cards import NUM_RANKS
from robada_env.rules.engine import Config, apply_action, legal_mask, new_game, winners
from robada_env.rules.observation import LAYOUT, encode

FIELDS = ("hand_cnt", "hand_size", "hand_total", "loose_cnt", "pile_cnt", "pile_top", "pile_size",
          "pile_pts", "seen_cnt", "run_cnt", "run_card", "run_start", "run_rank", "run_next",
          "run_active", "run_size", "run_pts", "run_taken", "current", "last_runner", "terminal",
          "deck_left", "decisions")


def _counts(cards):
    out = [0] * NUM_RANKS
    for c in cards:
        out[c % NUM_RANKS] += 1
    return out


def single_fields(s):
    """The batched engine's fields computed from a single-engine State (the reference)."""
    n = s.n
    pile_cnt = [_counts(p) for p in s.piles]
    run_cnt = _counts(s.run)
    loose = _counts(s.loose)
    seen = [loose[r] + run_cnt[r] + sum(p[r] for p in pile_cnt) for r in range(NUM_RANKS)]
    taken = [i in s.run_taken for i in range(n)]
    return {
        "hand_cnt": [_counts(h) for h in s.hands], "hand_size": [len(h) for h in s.hands],
        "hand_total": sum(len(h) for h in s.hands), "loose_cnt": loose, "pile_cnt": pile_cnt,
        "pile_top": [p[-1] if p else -1 for p in s.piles], "pile_size": [len(p) for p in s.piles],
        "pile_pts": list(s.points), "seen_cnt": seen, "run_cnt": run_cnt,
        "run_card": s.run[0] if s.run else -1, "run_start": s.run_start, "run_rank": s.run_rank,
        "run_next": s.run_next, "run_active": bool(s.run), "run_size": len(s.run),
        "run_pts": sum((1, 2, 3, 4, 5, 6, 7, 10, 11, 12)[c % NUM_RANKS] for c in s.run),
        "run_taken": taken, "current": s.current, "last_runner": s.last_runner,
        "terminal": s.terminal, "deck_left": len(s.deck), "decisions": len(s.history),
    }


def assert_same(eng, singles, step):
    """Every field, the hands in order (which copy was played), the undealt deck, the masks and
    the observations of the seats to act agree with the single engine, for every game."""
    ref = [single_fields(s) for s in singles]
    for f in FIELDS:
        want = np.array([r[f] for r in ref])
        got = getattr(eng, f)
        if not np.array_equal(got, want):
            b = int(np.flatnonzero((got != want).reshape(len(singles), -1).any(1))[0])
            pytest.fail(f"step {step}, game {b}: field {f} is {got[b].tolist()}, single engine {want[b].tolist()}")
    for b, s in enumerate(singles):
        hand_slots = eng.hand_cards[b].tolist()
        assert [[c for c in h if c >= 0] for h in hand_slots] == s.hands, (step, b)
        assert eng.deck[b, 40 - len(s.deck):].tolist() == s.deck, (step, b)
    masks = np.array([legal_mask(s, s.current) for s in singles])
    np.testing.assert_array_equal(eng.legal_mask()[:, 0], masks, err_msg=f"masks at step {step}")
    obs = np.array([encode(s, s.current) for s in singles])
    got = eng.observe()
    assert got.dtype == np.float32 and got.shape == (len(singles), 1, 192)
    got = got[:, 0]
    if not np.array_equal(got, obs):
        b, i = np.argwhere(got != obs)[0]
        pytest.fail(f"step {step}, game {b}: observation entry {i} is {got[b, i]!r}, single {obs[b, i]!r}")


def play_both(n, games, seed, scheme="points", all_seats_every=7, **rules):
    """Play ``games`` seeded games in both engines with the batched random legal actions.
    Returns the number of decisions compared."""
    cfg = Config(num_players=n, **rules)
    eng = BatchedRobada(cfg, games, reward_scheme=scheme)
    rng = np.random.default_rng(seed)
    seeds = draw_seeds(rng, games)
    eng.reset(seeds=seeds)
    singles = [new_game(cfg, seed=int(s)) for s in seeds]     # one seed, one game in both engines
    step = decisions = 0
    while True:
        assert_same(eng, singles, step)
        if step % all_seats_every == 0:       # every seat's view, not only the seat to act
            for seat in range(n):
                want = np.array([encode(s, seat) for s in singles])
                np.testing.assert_array_equal(eng.observe(seats=[seat])[:, 0], want)
        if eng.terminal.all():
            break
        acts = random_legal_actions(eng.legal_mask()[:, 0], rng)
        live = ~eng.terminal
        assert (acts[~live] == NOOP).all()
        rewards, round_over, over = eng.step(acts[:, None])
        assert rewards.dtype == np.float64
        np.testing.assert_array_equal(round_over, over)
        for b in np.flatnonzero(live):
            apply_action(singles[b], int(acts[b]))
            decisions += 1
        want_over = np.array([s.terminal for s in singles]) & live
        np.testing.assert_array_equal(over, want_over)
        for b in np.flatnonzero(over):
            s = singles[b]
            want = final_rewards(s.points, winners(s), scheme)
            np.testing.assert_array_equal(rewards[b], want)
        assert not rewards[~over].any()
        step += 1
    assert all(s.terminal for s in singles)
    return decisions


@pytest.mark.parametrize("n,games,scheme", [(2, 900, "points"), (3, 700, "win_loss"), (4, 600, "margin")])
def test_differential_random_play(n, games, scheme):
    # thousands of games in all (2,200), every state, mask, observation and reward compared
    decisions = play_both(n, games, seed=100 + n, scheme=scheme)
    assert decisions > games * 40          # a game takes at least 36 decisions (36 hand cards)


@pytest.mark.parametrize("rules", [{"closing_ace": False}, {"may_take_own_pile": False},
                                   {"leftovers_to_last_runner": False}])
def test_differential_rules_options(rules):
    for n in (2, 4):
        play_both(n, 120, seed=7, scheme="points", all_seats_every=1000, **rules)


def test_deal_and_a_run_by_hand():
    # deck: loose = A o, 2 o, 3 o, 4 o; seat 0 gets A c, 2 c, A e; seat 1 gets 5 o, 6 o, 7 o; rest in order
    head = cs("Ao 2o 3o 4o Ac 2c Ae 5o 6o 7o")
    deck = head + [c for c in range(40) if c not in head]
    eng = BatchedRobada(2, 1)
    eng.reset(decks=np.array([deck]))
    assert eng.loose_cnt[0].tolist() == [1, 1, 1, 1, 0, 0, 0, 0, 0, 0]
    assert eng.hand_cnt[0, 0].tolist() == [2, 1, 0, 0, 0, 0, 0, 0, 0, 0]     # two Aces and a 2
    assert eng.hand_cnt[0, 1].tolist() == [0, 0, 0, 0, 1, 1, 1, 0, 0, 0]
    assert eng.deck_left[0] == 40 - 4 - 6 == 30
    # seat 0 starts with an Ace: the first Ace in hand order is the A of copas (card id 10)
    eng.step(np.array([[START + 0]]))
    assert eng.hand_cards[0, 0].tolist() == [-1, cs("2c")[0], cs("Ae")[0]]
    eng.step(np.array([[TAP]]))      # 2 o
    eng.step(np.array([[TAP]]))      # 3 o
    eng.step(np.array([[TAP]]))      # 4 o; needs a 5 now: none loose, no pile -> only confirm
    assert eng.legal_mask()[0, 0].nonzero()[0].tolist() == [CONFIRM]
    eng.step(np.array([[CONFIRM]]))
    # pile: A c + A o + 2 o + 3 o + 4 o = 1 + 1 + 2 + 3 + 4 = 11 points, 5 cards, A c visible
    assert eng.pile_pts[0].tolist() == [11, 0]
    assert eng.pile_size[0].tolist() == [5, 0]
    assert eng.pile_top[0].tolist() == [cs("Ac")[0], -1]
    assert eng.current[0] == 1 and eng.last_runner[0] == 0
    # seat 1 holds no Ace/2/3/4 and the table is empty: only drops of 5, 6, 7
    assert eng.legal_mask()[0, 0].nonzero()[0].tolist() == [DROP + 4, DROP + 5, DROP + 6]
    # observation of seat 1: my left (seat 0) has 11 / 244 points; seen: 2 Aces, 2, 3, 4
    o = eng.observe()[0, 0]
    assert LAYOUT.view(o, "pile_points").tolist() == [0.0, np.float32(11 / 244), 0.0, 0.0]
    assert LAYOUT.view(o, "seen").tolist() == [0.5, 0.25, 0.25, 0.25, 0, 0, 0, 0, 0, 0]
    assert LAYOUT.view(o, "last_runner").tolist() == [0, 1, 0, 0]


def test_run_extended_with_loose_cards_by_hand():
    # seat 0: A c + loose A o -> pile [A o, A c], 2 points, A c visible. seat 1 drops a 5.
    # seat 0 starts 2 c + loose 2 o, needs 3: loose 3 o tapped; needs 4: 4 o tapped; needs 5:
    # the loose 5 is tapped; needs 6: no loose 6, no pile shows a 6 -> confirm only.
    head = cs("Ao 2o 3o 4o Ac 2c Sc 5b Rb Re")
    deck = head + [c for c in range(40) if c not in head]
    eng = BatchedRobada(2, 1)
    eng.reset(decks=np.array([deck]))
    for a in (START + 0, CONFIRM, DROP + 4, START + 1, TAP, TAP, TAP):
        eng.step(np.array([[a]]))
    assert eng.legal_mask()[0, 0].nonzero()[0].tolist() == [CONFIRM]
    # run: 2 c, 2 o, 3 o, 4 o, 5 b = 2 + 2 + 3 + 4 + 5 = 16 points, 5 cards
    assert (eng.run_pts[0], eng.run_size[0]) == (16, 5)
    eng.step(np.array([[CONFIRM]]))
    assert eng.pile_pts[0].tolist() == [2 + 16, 0]          # 18
    assert eng.pile_top[0, 0] == cs("2c")[0]                # the starting card of the last run


def test_take_own_pile_exact():
    # seat 0 pile shows the 3 (built by hand: start 3 with loose 3, confirm); later a run needing 3
    # takes it. deck: loose 2 o, 3 o, Sota o, Caballo o; seat 0: 3 c, 2 c, 4 c; seat 1: R o R c R e
    head = cs("2o 3o So Co 3c 2c 4c Ro Rc Re")
    deck = head + [c for c in range(40) if c not in head]
    eng = BatchedRobada(2, 1)
    eng.reset(decks=np.array([deck]))
    eng.step(np.array([[START + 2]]))          # 3 c + 3 o, needs 4: none -> confirm
    eng.step(np.array([[CONFIRM]]))            # seat 0 pile: 3 o, 3 c (visible) = 6 points
    eng.step(np.array([[DROP + 9]]))           # seat 1 drops a Rey
    eng.step(np.array([[START + 1]]))          # 2 c + 2 o, needs 3: no loose 3, own pile shows 3
    assert eng.legal_mask()[0, 0].nonzero()[0].tolist() == [TAKE + 0, CONFIRM]
    eng.step(np.array([[TAKE + 0]]))
    # run: 2 c, 2 o + pile (3 o, 3 c) = 2 + 2 + 3 + 3 = 10 points; the own pile is now empty
    assert (eng.run_pts[0], eng.run_size[0], eng.pile_size[0, 0]) == (10, 4, 0)
    assert eng.run_taken[0].tolist() == [True, False]
    eng.step(np.array([[CONFIRM]]))
    assert eng.pile_pts[0, 0] == 10 and eng.pile_top[0, 0] == cs("2c")[0]


def test_reward_schemes_batched_by_hand():
    scores = np.array([[10, 30, 30], [20, 20, 20], [50, 10, 0]])
    # win_loss: 2 winners of 3 -> +1/2 each, loser -1/1; all tied -> 0; one winner -> +1, -1/2, -1/2
    np.testing.assert_array_equal(batched_final_rewards(scores, "win_loss"),
                                  [[-1, 0.5, 0.5], [0, 0, 0], [1, -0.5, -0.5]])
    # margin: 10 - (30+30)/2 = -20; 30 - (10+30)/2 = 10; 50 - (10+0)/2 = 45; 10 - 25 = -15; 0 - 30
    np.testing.assert_array_equal(batched_final_rewards(scores, "margin"),
                                  [[-20, 10, 10], [0, 0, 0], [45, -15, -30]])
    np.testing.assert_array_equal(batched_final_rewards(scores, "points"), scores)
    for row in scores:
        w = [i for i, x in enumerate(row) if x == row.max()]
        for scheme in ("points", "win_loss", "margin"):
            np.testing.assert_array_equal(batched_final_rewards(row[None], scheme)[0], final_rewards(row, w, scheme))
        np.testing.assert_array_equal(win_shares(w, 3), [1 / len(w) if i in w else 0 for i in range(3)])
    with pytest.raises(ConfigError, match="reward_scheme"):
        batched_final_rewards(scores, "elo")


def test_state_size_under_2_kib():
    # per game: deck 40, loose/seen/run counts 3 * 10, deck_left, hand_total, run_card, run_start,
    # run_rank, run_next, run_active, run_size, current, last_runner, terminal 11 * 1, run_pts and
    # decisions 2 * 2 -> 40 + 30 + 11 + 4 = 85; per seat: hand slots 3, hand and pile counts
    # 2 * 10, hand_size, pile_top, pile_size, run_taken 4 * 1, pile_pts 2 -> 29.
    # 4 players: 85 + 4 * 29 = 201 bytes; caches: mask 27 + the observation buffer of the seats to act
    # 192 * 4 = 768 -> 201 + 27 + 768 = 996 bytes
    assert BatchedRobada.state_bytes_per_game(4) == 201
    for n in (2, 4):
        eng = BatchedRobada(n, 64)
        eng.reset(seed=0)
        eng.observe()
        nb = eng.nbytes()
        assert nb["per_game_state"] == BatchedRobada.state_bytes_per_game(n)
        assert nb["per_game_total"] == BatchedRobada.state_bytes_per_game(n) + 27 + 768 < 2048


def test_random_legal_actions_uniform_and_legal():
    rng = np.random.default_rng(0)
    mask = np.zeros((30000, 27), np.int8)
    mask[:, [3, 13, 25]] = 1
    a = random_legal_actions(mask, rng)
    assert set(a.tolist()) == {3, 13, 25}
    freq = np.bincount(a, minlength=27)[[3, 13, 25]] / 30000
    assert np.abs(freq - 1 / 3).max() < 0.02            # ~0.0027 standard error
    with pytest.raises(ValueError, match="row 1"):
        random_legal_actions(np.array([[1] + [0] * 26, [0] * 27], np.int8), rng)


def test_illegal_action_raises_and_changes_nothing():
    eng = BatchedRobada(3, 8)
    eng.reset(seed=3)
    before = {f: getattr(eng, f).copy() for f in FIELDS}
    acts = eng.random_legal_actions(np.random.default_rng(0))
    legal_confirm = eng.legal_mask()[5, 0, CONFIRM]
    assert legal_confirm == 0                          # no run at the start of a turn
    acts[5] = CONFIRM
    with pytest.raises(IllegalActionError, match=r"game 5.*legal actions"):
        eng.step(acts[:, None])
    for f in FIELDS:
        np.testing.assert_array_equal(getattr(eng, f), before[f])
    with pytest.raises(ValueError, match="shape"):
        eng.step(acts[:3, None])
    with pytest.raises(ValueError, match="shape"):
        eng.step(acts)                          # (G,) is not (G, 1)
    with pytest.raises(IllegalActionError):
        eng.step(np.full((8, 1), 99))


def test_bad_options():
    with pytest.raises(ConfigError, match="num_players"):
        BatchedRobada(5, 4)
    with pytest.raises(ConfigError, match="batch_size=0 must be a positive integer"):
        BatchedRobada(2, 0)
    with pytest.raises(ConfigError, match="reward_scheme"):
        BatchedRobada(2, 4, reward_scheme="elo")
    with pytest.raises(ConfigError, match="legal options"):
        BatchedRobada(2, 4, closing_aces=True)
    eng = BatchedRobada(2, 2)
    with pytest.raises(RuntimeError, match="reset"):
        eng.observe()
    with pytest.raises(ConfigError, match="permutation"):
        eng.reset(decks=np.zeros((2, 40), int))
    eng.reset(seed=0)
    with pytest.raises(ConfigError, match="seats"):
        eng.observe(seats=np.array([0, 2]))     # 2 players: seats 0, 1
    with pytest.raises(ConfigError, match="seats"):
        eng.observe(seats=np.array([1, 1]))


def test_same_seed_same_games_and_partial_reset():
    a, b = BatchedRobada(2, 16), BatchedRobada(2, 16)
    a.reset(seed=5)
    b.reset(seed=5)
    np.testing.assert_array_equal(a.deck, b.deck)
    keep = a.deck[1].copy()
    a.reset(seed=6, games=[0, 2])
    np.testing.assert_array_equal(a.deck[1], keep)
    assert not np.array_equal(a.deck[0], b.deck[0])


# ---- copies and the state record -----------------------------------------------------------------
@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_a_copy_shares_nothing_and_plays_on_as_the_original(how):
    import copy
    import pickle

    eng = BatchedRobada(3, 16, seed=4)
    eng.reset(seed=4)
    rng = np.random.default_rng(1)
    for _ in range(30):                          # mid-game: runs, piles, a re-deal or two
        eng.step(random_legal_actions(eng.legal_mask()[:, 0], rng)[:, None])
    twin = copy.deepcopy(eng) if how == "deepcopy" else pickle.loads(pickle.dumps(eng))
    for name, arr in eng.state.arrays().items():
        assert not np.shares_memory(getattr(twin.state, name), arr), name
        assert getattr(twin, name) is getattr(twin.state, name), name     # the attributes are the record's
    ra, rb = np.random.default_rng(2), np.random.default_rng(2)
    for _ in range(400):                         # a game takes at most 432 decisions: some end and re-deal
        a = random_legal_actions(eng.legal_mask()[:, 0], ra)[:, None]
        b = random_legal_actions(twin.legal_mask()[:, 0], rb)[:, None]
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(eng.observe(), twin.observe())
        x, y = eng.step(a), twin.step(b)
        np.testing.assert_array_equal(x.rewards, y.rewards)
        over = np.flatnonzero(x.game_over)
        if over.size:
            eng.reset(games=over)
            twin.reset(games=over)
    assert eng.state.same_as(twin.state)


# ---- the compiled engine against the earlier numpy engine (the oracle) ---------------------------------
def _same_as_oracle(eng, ora, step):
    """Every field of the state record, the masks of the seats to act and the observations of
    every seat (and of the seats to act) agree bit for bit, in every game."""
    for name, arr in eng.state.arrays().items():
        want = getattr(ora, name)
        if arr.dtype != want.dtype or not np.array_equal(arr, want):
            b = int(np.flatnonzero((arr != want).reshape(len(arr), -1).any(1))[0])
            pytest.fail(f"step {step}, game {b}: field {name} is {arr[b].tolist()}, oracle {want[b].tolist()}")
    np.testing.assert_array_equal(eng.legal_mask(), ora.legal_mask(), err_msg=f"masks at step {step}")
    n = eng.num_players
    got, want = eng.observe(seats=range(n)), ora.observe(seats=np.arange(n))
    assert got.dtype == want.dtype == np.float32
    if not np.array_equal(got.view(np.uint32), want.view(np.uint32)):        # bit for bit (-0.0 too)
        b, j, i = np.argwhere(got.view(np.uint32) != want.view(np.uint32))[0]
        pytest.fail(f"step {step}, game {b}, seat {j}: observation entry {i} is {got[b, j, i]!r}, "
                    f"oracle {want[b, j, i]!r}")
    np.testing.assert_array_equal(eng.observe().view(np.uint32), ora.observe().view(np.uint32))
    np.testing.assert_array_equal(eng.scores(), ora.scores())


def play_with_oracle(n, games, seed, scheme, steps, **rules):
    """Play both engines in lockstep with the same actions: whole-batch steps, steps of some games
    (every third step: a random half of the games), finished games reset with the same seeds.
    Returns the games finished."""
    cfg = Config(num_players=n, **rules)
    eng, ora = BatchedRobada(cfg, games, reward_scheme=scheme), OracleRobada(cfg, games, reward_scheme=scheme)
    rng = np.random.default_rng(seed)
    seeds = draw_seeds(rng, games)
    eng.reset(seeds=seeds)
    ora.reset(seeds=seeds)
    finished = 0
    for step in range(steps):
        _same_as_oracle(eng, ora, step)
        part = step % 3 == 2
        g = np.flatnonzero(rng.random(games) < 0.5) if part else None
        acts = random_legal_actions(eng.legal_mask(g)[:, 0], rng)[:, None]
        x, y = eng.step(acts, games=g), ora.step(acts, games=g)
        for a, b in zip(x, y):
            assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(x.game_over, y.game_over, err_msg=f"game_over at step {step}")
        np.testing.assert_array_equal(x.round_over, y.round_over, err_msg=f"round_over at step {step}")
        # the rewards of the games that ended: their final rewards by the oracle's scores. (Not the
        # oracle's rewards when some games step: it lists the games that ended with a drop before
        # those that ended with a confirm and writes their rewards into the rows in game order, so
        # two games ending on one such step by a drop and a confirm swap rewards; the full-batch
        # step has no such bug and is compared as it is.)
        want = np.zeros_like(y.rewards)
        ended = np.flatnonzero(y.game_over)
        rows = ended if g is None else g[ended]
        want[ended] = batched_final_rewards(ora.scores(rows), scheme)
        np.testing.assert_array_equal(x.rewards, want, err_msg=f"rewards at step {step}")
        if g is None:
            np.testing.assert_array_equal(x.rewards, y.rewards, err_msg=f"rewards at step {step}")
        over = np.flatnonzero(eng.terminal)
        if over.size and step % 2:                  # finished games wait a step now and then
            again = draw_seeds(rng, over.size)
            eng.reset(games=over, seeds=again)
            ora.reset(games=over, seeds=again)
            finished += over.size
    _same_as_oracle(eng, ora, steps)
    return finished


@pytest.mark.parametrize("n,scheme", [(2, "points"), (3, "win_loss"), (4, "margin")])
def test_the_kernels_equal_the_numpy_engine(n, scheme):
    # 96 games each, 600 steps: a game takes 36..432 decisions, so hundreds finish and are re-dealt
    assert play_with_oracle(n, 96, seed=40 + n, scheme=scheme, steps=600) > 96


@pytest.mark.parametrize("rules", [{"closing_ace": False}, {"may_take_own_pile": False},
                                   {"leftovers_to_last_runner": False},
                                   {"closing_ace": False, "may_take_own_pile": False,
                                    "leftovers_to_last_runner": False}])
@pytest.mark.parametrize("n", [2, 3, 4])
def test_the_kernels_equal_the_numpy_engine_under_every_rule_option(n, rules):
    assert play_with_oracle(n, 32, seed=n, scheme="points", steps=250, **rules) > 0


def test_the_rule_options_change_the_game():
    # the differential tests above cannot pass by ignoring an option: each option changes some
    # masks of the same seeded games (a run that needs the closing Ace, an own pile to take, the
    # leftovers' receiver)
    def masks(**rules):
        eng = BatchedRobada(2, 64, **rules)
        eng.reset(seed=1)
        rng = np.random.default_rng(0)
        seen = []
        while not eng.terminal.all():
            m = eng.legal_mask()[:, 0].copy()
            seen.append((m, eng.pile_pts.copy()))
            eng.step(random_legal_actions(m, rng)[:, None])
        return seen
    base = masks()
    for opt in ("closing_ace", "may_take_own_pile", "leftovers_to_last_runner"):
        other = masks(**{opt: False})
        assert len(other) != len(base) or any(
            not (np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])) for a, b in zip(base, other)), opt


# ---- load_state: records no game reaches are refused ---------------------------------------------------
def _mid_game(n=3, games=6):
    eng = BatchedRobada(n, games, seed=2)
    eng.reset(seed=2)
    rng = np.random.default_rng(3)
    for _ in range(25):                          # runs, piles, a re-deal
        eng.step(random_legal_actions(eng.legal_mask()[:, 0], rng)[:, None])
    return eng


def test_load_state_takes_every_reachable_record_back():
    eng = _mid_game()
    rec = eng.state.copy()
    other = BatchedRobada(3, 6)
    other.load_state(rec)
    assert other.state.same_as(rec)
    np.testing.assert_array_equal(other.observe(seats=range(3)), eng.observe(seats=range(3)))
    fin = BatchedRobada(2, 4, seed=0)
    fin.reset(seed=0)
    while not fin.terminal.all():                # finished games, leftovers given
        fin.step(fin.random_actions())
    BatchedRobada(2, 4).load_state(fin.state.copy())


def _set(rec, field, b, value):
    getattr(rec, field)[b] = value
    return rec


@pytest.mark.parametrize("field,change", [
    ("deck", lambda r: _set(r, "deck", 1, np.zeros(40))),                              # not a permutation
    ("deck_left", lambda r: _set(r, "deck_left", 1, r.deck_left[1] - 1)),              # not whole deals
    ("current", lambda r: _set(r, "current", 1, 3)),                                   # 3 players: 0..2
    ("last_runner", lambda r: _set(r, "last_runner", 1, -2)),
    ("decisions", lambda r: _set(r, "decisions", 1, -1)),
    ("hand_cards", lambda r: _set(r, "hand_cards", 1, np.roll(r.hand_cards[1], 1, axis=0))),   # another seat's cards
    ("hand_cnt", lambda r: _set(r, "hand_cnt", 1, r.hand_cnt[1] + 1)),
    ("hand_size", lambda r: _set(r, "hand_size", 1, 9)),
    ("pile_", lambda r: _set(r, "pile_pts", 1, r.pile_pts[1] + 1)),
    ("pile_", lambda r: _set(r, "pile_top", 1, 100)),
    ("pile_", lambda r: _set(r, "pile_size", 1, 1)),
    ("run_", lambda r: _set(r, "run_start", 1, 50)),
    ("run_", lambda r: _set(r, "run_active", 1, ~r.run_active[1])),
    ("run_", lambda r: _set(r, "run_next", 1, 9 if r.run_next[1] != 9 else 8)),
    ("loose_cnt", lambda r: _set(r, "loose_cnt", 1, r.loose_cnt[1] + 1)),
    ("seen_cnt", lambda r: _set(r, "seen_cnt", 1, r.seen_cnt[1] + 1)),
    ("terminal", lambda r: _set(r, "terminal", 1, True)),
])
def test_load_state_refuses_values_no_game_reaches(field, change):
    eng = _mid_game()
    before = eng.state.copy()
    target = BatchedRobada(3, 6, seed=5)
    target.reset(seed=5)
    kept = target.state.copy()
    bad = change(eng.state.copy())
    with pytest.raises(ConfigError, match=rf"{field}.* of game 1 is impossible; legal: "):
        target.load_state(bad)
    assert target.state.same_as(kept)             # nothing changed
    assert eng.state.same_as(before)


@pytest.mark.parametrize("n", [2, 4])
def test_parallel_drivers_play_the_same_games_bit_for_bit(n, monkeypatch):
    """With parallel_min_batch = 1 the engine steps, resets and observes with the prange drivers
    (kernels.step_batch_par, reset_batch_par, observe_batch_par; chunks of PAR_CHUNK games): over a
    batch of several chunks, with the finished games dealt again, every record field, mask,
    observation and reward equals the serial engine's; an illegal action is refused in the same
    place with nothing changed."""
    from robada_env.rules import batched, kernels

    # the drivers are taken whatever numba's thread count (one thread when pinned to one core)
    monkeypatch.setattr(batched, "parallel_for", lambda least, games: least is not None and games >= least)
    B = kernels.PAR_CHUNK * 2 + 7
    a, b = BatchedRobada(n, B, seed=3), BatchedRobada(n, B, seed=3)
    b.parallel_min_batch = 1
    a.reset(seed=3)
    b.reset(seed=3)
    rng = np.random.default_rng(3)
    ended = 0
    for step in range(120):
        assert np.array_equal(a.legal_mask(), b.legal_mask()), step
        assert np.array_equal(a.observe().view(np.int32), b.observe().view(np.int32)), step
        seats = np.arange(n)
        assert np.array_equal(a.observe(seats=seats).view(np.int32), b.observe(seats=seats).view(np.int32))
        act = a.random_actions(rng=rng)
        ra, rb = a.step(act), b.step(act.copy())
        for x, y in zip(ra, rb):
            assert np.array_equal(x, y), step
        over = np.flatnonzero(ra.game_over)
        ended += over.size
        if over.size:
            seeds = draw_seeds(rng, over.size)
            a.reset(games=over, seeds=seeds)
            b.reset(games=over, seeds=seeds)
        assert a.state.same_as(b.state), step
    assert ended > 0                                    # re-deals happened inside the comparison
    bad = a.random_actions(rng=rng)
    legal = a.legal_mask()[0, 0]
    bad[0, 0] = int(np.flatnonzero(legal == 0)[0])
    before = b.state.copy()
    with pytest.raises(IllegalActionError):
        b.step(bad)
    assert b.state.same_as(before)


def _next_seed_by_hand(deck_row) -> int:
    """kernels.next_game_seed restated with deal's public stream_numbers: the 40 card ids packed
    8 to a word (first card in the high byte), the hash h = 0, then for each word w
    h = number 0 of stream w of seed h."""
    from hod.core.deal import stream_numbers

    h = 0
    for w in range(5):
        x = 0
        for c in deck_row[8 * w:8 * w + 8]:
            x = (x << 8) | int(c)
        h = int(stream_numbers(np.array([h], np.uint64), np.array([x], np.uint64).view(np.int64), 1)[0, 0])
    return h


def test_next_game_seed_is_the_deck_hash_of_deal_numbers():
    """The seed of an auto-reset game (kernels.next_game_seed) equals the hash restated over
    hod.core.deal.stream_numbers, for the decks of a few seeded deals and the identity deck."""
    from robada_env.rules import kernels

    eng = BatchedRobada(2, 5, seed=1)
    eng.reset(seeds=[0, 1, 2, 2**64 - 1, 12345])
    decks = np.vstack([eng.state.deck, np.arange(40, dtype=np.int8)[None]])
    out = np.empty(6, np.uint64)
    kernels.next_seeds(decks, np.arange(6, dtype=np.intp), out)
    assert [int(x) for x in out] == [_next_seed_by_hand(d) for d in decks]
    assert len(set(out.tolist())) == 6


def _auto_lockstep(n, B, steps, par_engine=None, rng_seed=5):
    """Play the auto-reset step (engine `b`, maybe parallel) against the definition: a serial
    engine `a` stepped without auto-reset, its finished games then reset with the seeds
    kernels.next_game_seed gives for their decks. Every record field, mask, observation of every
    seat, reward and final score must agree at every step. Returns the games that ended."""
    from robada_env.rules import kernels

    a = BatchedRobada(n, B, seed=3, reward_scheme="margin")
    b = par_engine(n, B) if par_engine else BatchedRobada(n, B, seed=3, reward_scheme="margin")
    a.reset(seed=3)
    b.reset(seed=3)
    rng = np.random.default_rng(rng_seed)
    seats, every = np.arange(n), np.arange(B, dtype=np.intp)
    seeds = np.empty(B, np.uint64)
    ended = 0
    for step in range(steps):
        assert np.array_equal(a.legal_mask(), b.legal_mask()), step
        assert np.array_equal(a.observe(seats=seats).view(np.int32), b.observe(seats=seats).view(np.int32)), step
        act = a.random_actions(rng=rng)
        kernels.next_seeds(a.state.deck, every, seeds)
        look = step % 2 == 1                                # every other step: the observation in the step
        ra, rb = a.step(act), b.step(act.copy(), auto_reset=True, observe=look)
        for x, y in zip(ra, rb):
            assert np.array_equal(x, y), step
        over = np.flatnonzero(ra.game_over)
        ended += over.size
        assert np.array_equal(b.ended_scores, a.scores(over)), step
        if over.size:
            a.reset(games=over, seeds=seeds[over])
        assert a.state.same_as(b.state), step
        if look:                                            # the step's observation, then the computed one
            assert np.array_equal(b.observe().view(np.int32), a.observe().view(np.int32)), step
    assert np.array_equal(a.legal_mask(), b.legal_mask())
    return a, b, ended


@pytest.mark.parametrize("n", [2, 4])
def test_auto_reset_step_deals_the_next_game_from_the_deck_seed(n):
    """step(..., auto_reset=True) of the serial driver (kernels.step_batch_auto) = step, then
    reset(games=ended, seeds=next_game_seed of their decks), bit for bit, over many re-deals;
    with some games named (a subset, in a shuffled order) too."""
    from robada_env.rules import kernels

    a, b, ended = _auto_lockstep(n, 24, 160)
    assert ended > 20                                       # 24 games of ~50-90 decisions, 160 steps
    g = np.array([7, 2, 19, 0, 11], np.intp)
    for _ in range(200):
        act = a.random_actions(a.legal_mask(g))
        ra = a.step(act, games=g)
        over = g[np.flatnonzero(ra.game_over)]
        seeds = np.empty(over.size, np.uint64)
        kernels.next_seeds(a.state.deck, over.astype(np.intp), seeds)
        final = a.scores(over)
        if over.size:
            a.reset(games=over, seeds=seeds)
        rb = b.step(act.copy(), games=g, auto_reset=True)
        for x, y in zip(ra, rb):
            assert np.array_equal(x, y)
        assert np.array_equal(b.ended_scores, final)
        assert a.state.same_as(b.state)


@pytest.mark.parametrize("n", [2, 4])
def test_parallel_auto_reset_step_plays_the_serial_games_bit_for_bit(n, monkeypatch):
    """The parallel auto-reset driver (kernels.step_batch_auto_par, chunks of PAR_CHUNK games,
    each chunk dealing its own finished games) over a batch of several chunks and a partial one
    plays the games of the definition (serial step + reset from the deck seeds) bit for bit, and
    so of the serial auto-reset driver; it fails when one chunk's re-deals are dropped. An illegal
    action is refused in the same place with nothing changed."""
    from robada_env.rules import batched, kernels

    monkeypatch.setattr(batched, "parallel_for", lambda least, games: least is not None and games >= least)

    def par(n, B):
        e = BatchedRobada(n, B, seed=3, reward_scheme="margin")
        e.parallel_min_batch = 1
        return e

    B = kernels.PAR_CHUNK * 2 + 7
    a, b, ended = _auto_lockstep(n, B, 110, par_engine=par)
    # ~B/70 games end per step: every chunk re-deals many times (the last chunk, 7 games, too)
    assert ended > 3 * B // 2
    bad = b.random_actions()
    legal = b.legal_mask()[B - 1, 0]
    bad[B - 1, 0] = int(np.flatnonzero(legal == 0)[0])
    before, mask = b.state.copy(), b.legal_mask().copy()
    with pytest.raises(IllegalActionError, match=f"game {B - 1}"):
        b.step(bad, auto_reset=True)
    with pytest.raises(IllegalActionError, match=f"game {B - 1}"):
        a.step(bad, auto_reset=True)
    assert b.state.same_as(before) and a.state.same_as(before)
    assert np.array_equal(b.legal_mask(), mask)


def test_the_step_observation_needs_auto_reset_and_the_whole_batch_and_goes_stale():
    """step(observe=True) is refused without auto_reset or with games (nothing changes); after it,
    a reset of one game makes observe() compute that game's observation again."""
    eng = BatchedRobada(2, 6, seed=2)
    eng.reset(seed=2)
    before = eng.state.copy()
    act = eng.random_actions()
    with pytest.raises(ConfigError, match="auto_reset=True and the whole batch"):
        eng.step(act, observe=True)
    with pytest.raises(ConfigError, match="auto_reset=True and the whole batch"):
        eng.step(act[:2], games=[0, 1], auto_reset=True, observe=True)
    assert eng.state.same_as(before)
    eng.step(act, auto_reset=True, observe=True)
    eng.reset(games=[3], seeds=[77])
    fresh = BatchedRobada(2, 6, seed=2)
    fresh.load_state(eng.state.copy())
    assert np.array_equal(eng.observe().view(np.int32), fresh.observe().view(np.int32))
