"""Batched Tapeo engine (tapeo_env.rules.batched over the kernels of tapeo_env.rules.kernels) and the
throughput benchmark smoke run (the learner vector env over it: tests/training/test_training_learner_env.py).

Two differential tests: one plays thousands of seeded games through the batched engine and
replays each one, with the same deals, through the earlier single-game engine (the oracle
tests/oracles/tapeo_scalar.py), requiring identical hands, bars, churros, scores, masks,
observations and rewards at every step; the other plays the compiled engine and the earlier
numpy engine (the oracle, tests/oracles/tapeo_batched.py) in lockstep and requires the same state
record, masks, observations (bit for bit), rewards and flags at every step, for every player
count, reward scheme, round rewards, explicit deals,
steps of some games and other scoring rulings."""
import numpy as np
import pytest

from hod.core.errors import ConfigError, IllegalActionError
from hod.core.rewards import final_rewards
from tapeo_env.rules import engine as E
from oracles import tapeo_scalar as O
from oracles.tapeo_batched import BatchedTapeo as OracleTapeo
from oracles.tapeo_batched_obs import BatchedEncoder
from oracles.tapeo_batched_scoring import churro_points_batch, ham_points_batch, pepper_points_batch, round_points_batch
from hod.core.rewards import final_rewards_batch
from tapeo_env.rules import kernels, scoring
from tapeo_env.rules.batched import BatchedTapeo, random_legal_actions
from tapeo_env.rules.cards import (BREAD, CHURRO, CROQUETA, FREELOADER, HAM1, HAM2, HAM3, NUM_KINDS, PEPPER, PRAWNS,
                             TORTILLA)
from tapeo_env.rules.observation import OBS_SIZE

K = NUM_KINDS


# ---- differential test ----------------------------------------------------------------------------
def _kinds(counts):
    return np.repeat(np.arange(K), counts).tolist()


def _play_and_record(n, B, seed, scheme, round_rewards, steps, exact_division=None, engine=BatchedTapeo):
    """Play ``steps`` steps of B batched games with random legal picks, restarting a third of the
    games after 4 steps (so games run out of step) and every finished game. Returns the
    recorded episodes: per episode its deals and, per step, the batch snapshot index."""
    eng = engine(n, B, seed=seed, reward_scheme=scheme, round_rewards=round_rewards)
    eng.reset()
    if exact_division is not None:
        eng.observe()
        eng._obs_encoder = BatchedEncoder(eng.config, exact_division=exact_division)
    s = eng.state
    snaps, episodes = [], []
    current = [{"b": b, "deals": [s.hands[b].copy()], "steps": []} for b in range(B)]

    def restart(games):
        for b in games:
            episodes.append(current[b])
        eng.reset(games=np.asarray(games, np.intp))
        for b in games:
            current[b] = {"b": b, "deals": [s.hands[b].copy()], "steps": []}

    for t in range(steps):
        if t == 4:
            restart(list(range(0, B, 3)))
        snap = {f: getattr(s, f).copy() for f in ("hands", "bars", "churros_kept", "round_scores", "round", "pick")}
        snap["mask"] = eng.legal_mask().copy()
        snap["obs"] = eng.observe().copy()
        snap["picks"] = eng.random_actions()
        res = eng.step(snap["picks"])
        snap["rewards"] = res.rewards.copy()
        snap["game_over"] = res.game_over.copy()
        if res.game_over.any():
            snap["final_obs"] = eng.observe().copy()
            snap["final_scores"] = s.final_scores.copy()
            snap["winners"] = s.winners.copy()
        snaps.append(snap)
        for b in range(B):
            current[b]["steps"].append(t)
            if res.round_over[b] and not res.game_over[b]:
                current[b]["deals"].append(s.hands[b].copy())
        if res.game_over.any():
            restart(np.flatnonzero(res.game_over).tolist())
    episodes.extend(current)
    return eng, snaps, episodes


def _replay_and_compare(eng, snaps, episodes):
    cfg = eng.config
    n = cfg.num_players
    checked_games = 0
    for ep in episodes:
        b, deals = ep["b"], list(ep["deals"])
        while len(deals) < cfg.num_rounds:          # unplayed rounds of an unfinished game: any valid deal
            deals.append(deals[0])
        g = O.new_game(cfg, deals=[[_kinds(h[i]) for i in range(n)] for h in deals])
        phi = np.zeros(n)
        for t in ep["steps"]:
            snap = snaps[t]
            for i in range(n):
                assert np.array_equal(g.hand(i), snap["hands"][b, i]), (t, b, i)
                assert np.array_equal(O.legal_mask(g, i), snap["mask"][b, i])
                assert np.array_equal(O.encode(g, i), snap["obs"][b, i]), (t, b, i)
            assert np.array_equal(g.bars, snap["bars"][b])
            assert np.array_equal(g.churros_kept, snap["churros_kept"][b])
            assert np.array_equal(g.round_scores, snap["round_scores"][b])
            assert (g.round, g.pick) == (snap["round"][b], snap["pick"][b])
            ended = O.apply_actions(g, [int(a) for a in snap["picks"][b]])
            want = np.zeros(n)
            if ended and (eng.round_rewards or g.terminal):   # as hod.adapters.game_env.GameEnvCore._play
                if g.terminal:
                    value = final_rewards(g.final_scores, g.winners, eng.reward_scheme)
                else:
                    value = final_rewards(O.scores(g), O.winners(g), eng.reward_scheme)
                want, phi = value - phi, value
            assert np.array_equal(want, snap["rewards"][b]), (t, b, want, snap["rewards"][b])
            assert bool(snap["game_over"][b]) == g.terminal
            if g.terminal:
                assert np.array_equal(g.final_scores, snap["final_scores"][b])
                assert set(g.winners) == set(np.flatnonzero(snap["winners"][b]).tolist())
                for i in range(n):
                    assert np.array_equal(O.encode(g, i), snap["final_obs"][b, i])
                checked_games += 1
    return checked_games


@pytest.mark.parametrize("n,scheme,round_rewards", [
    (2, "points", False), (3, "win_loss", True), (4, "margin", False), (5, "win_loss", False), (6, "points", True),
])
def test_differential_against_single_engine(n, scheme, round_rewards):
    # 330 tables, 60 steps: every table finishes 2-3 games (2000+ finished games over the five player counts)
    eng, snaps, episodes = _play_and_record(n, 330, seed=100 + n, scheme=scheme, round_rewards=round_rewards,
                                            steps=60)
    finished = _replay_and_compare(eng, snaps, episodes)
    assert finished >= 600


def test_differential_with_the_lookup_table_conversion():
    # the oracle encoder's table path (used when float32 division would not be exact) gives the same values
    eng, snaps, episodes = _play_and_record(4, 40, seed=7, scheme="points", round_rewards=False, steps=25,
                                            exact_division=False, engine=OracleTapeo)
    assert not eng._obs_encoder.exact_division
    assert _replay_and_compare(eng, snaps, episodes) >= 40


# ---- differential test against the oracle (the earlier numpy engine) ---------------------------------
_RECORD_FIELDS = ("hands", "bars", "churros_kept", "undealt", "round_scores", "final_scores", "winners", "round",
                  "pick", "seed")


def _assert_same_engines(new, old, t):
    for f in _RECORD_FIELDS:
        a, b = getattr(new.state, f), getattr(old.state, f)
        assert a.dtype == b.dtype and np.array_equal(a, b), (t, f)
    assert np.array_equal(new.legal_mask(), old.legal_mask()), t
    n = new.num_players
    a, b = new.observe(), old.observe()
    assert a.shape == (new.batch_size, n, OBS_SIZE)
    assert np.array_equal(a.view(np.uint32), b.view(np.uint32)), t        # bit for bit
    assert np.array_equal(new.scores(), old.scores()), t
    assert np.array_equal(new.terminal, old.terminal), t


def _random_deals(rng, cfg, G):
    """G valid explicit deals (G, R, n, K): each round the first n * hand_size of a shuffled deck."""
    from tapeo_env.rules.cards import deck_cards
    n, hs = cfg.num_players, cfg.hand_size
    d = np.zeros((G, cfg.num_rounds, n, K), np.int64)
    for g in range(G):
        for r in range(cfg.num_rounds):
            cards = rng.permutation(deck_cards(cfg.deck))[:n * hs]
            for i in range(n):
                d[g, r, i] = np.bincount(cards[i * hs:(i + 1) * hs], minlength=K)
    return d


def _lockstep(cfg, B, seed, scheme, round_rewards, steps):
    """Play the compiled engine and the oracle side by side with the same picks and resets
    (seeded, explicit deals, games out of step, steps of some games); compare everything.
    Returns the number of finished games."""
    new = BatchedTapeo(cfg, B, seed=seed, reward_scheme=scheme, round_rewards=round_rewards)
    old = OracleTapeo(cfg, B, seed=seed, reward_scheme=scheme, round_rewards=round_rewards)
    new.reset()
    old.reset()
    rng = np.random.default_rng(seed)
    finished = 0
    for t in range(steps):
        _assert_same_engines(new, old, t)
        if t == 4:                                  # a third of the games restart: out of step
            g = np.arange(0, B, 3)
            seeds = rng.integers(0, 2**64 - 1, g.size, dtype=np.uint64, endpoint=True)
            new.reset(games=g, seeds=seeds)
            old.reset(games=g, seeds=seeds)
            continue
        if t == 9:                                  # explicit deals for some games
            g = np.arange(1, B, 4)
            deals = _random_deals(rng, cfg, g.size)
            new.reset(games=g, deals=deals)
            old.reset(games=g, deals=deals)
            continue
        picks = random_legal_actions(new.legal_mask(), rng)
        if t % 7 == 3:                              # a step of some games only
            g = rng.permutation(B)[:B // 2]
            ra, rb = new.step(picks[g], games=g), old.step(picks[g], games=g)
        else:
            ra, rb = new.step(picks), old.step(picks)
        for x, y in zip(ra, rb):
            assert x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y), t
        if t % 7 == 3:
            over = g[ra.game_over]
        else:
            over = np.flatnonzero(ra.game_over)
        if over.size:
            finished += over.size
            _assert_same_engines(new, old, t)
            new.reset(games=over)                   # seeds from each engine's generator: the same
            old.reset(games=over)
    _assert_same_engines(new, old, steps)
    return finished


@pytest.mark.parametrize("n,scheme,round_rewards", [
    (2, "points", True), (3, "win_loss", False), (4, "margin", True), (5, "points", False), (6, "margin", False),
    (4, "win_loss", True),
])
def test_compiled_engine_equals_the_oracle_bit_for_bit(n, scheme, round_rewards):
    # 200 tables x 70 steps: every table finishes 2-4 games
    finished = _lockstep(E.Config(num_players=n), 200, seed=40 + n, scheme=scheme, round_rewards=round_rewards,
                         steps=70)
    assert finished >= 300


def test_compiled_engine_equals_the_oracle_with_other_rulings_and_deck():
    rulings = scoring.Rulings(tortilla_pair=4, croqueta_table=(0, 2, 4), ham_first=5, ham_second=2,
                              hot_pepper_min=2, two_player_fewest_loses=True, tie_break_by_churros=False)
    for n in (2, 3, 6):
        cfg = E.Config(num_players=n, rulings=rulings, deck=(12, 14, 4, 4, 4, 10, 8, 10, 8, 10), num_rounds=2)
        assert _lockstep(cfg, 60, seed=n, scheme="margin", round_rewards=True, steps=50) >= 60


def test_compiled_engine_equals_the_oracle_with_hands_larger_than_the_rules():
    # Config allows hand sizes up to 20 (the rules' largest is 10): the observation's pick and
    # hand-size entries past the kernels' float32 tables; 2 seats x 20 = 40 of the 84 tapas
    for hs in (14, 20):
        cfg = E.Config(num_players=2, hand_size=hs)
        assert _lockstep(cfg, 30, seed=hs, scheme="points", round_rewards=False, steps=4 * 3 * hs) >= 30


def test_observe_seat_subsets_and_out_match_all_seats():
    eng = BatchedTapeo(5, 50, seed=3)
    eng.reset()
    for _ in range(3):
        eng.step(eng.random_actions())
    eng.reset(games=np.arange(0, 50, 2))            # out of step: two picks in the batch
    full = eng.observe().copy()
    sub = eng.observe(seats=[4, 1]).copy()
    assert np.array_equal(sub[:, 0], full[:, 4]) and np.array_equal(sub[:, 1], full[:, 1])
    out = np.full((50, 5, OBS_SIZE), 7.0, np.float32)
    assert np.array_equal(eng.observe(out=out), full)
    with pytest.raises(ConfigError, match="seats"):
        eng.observe(seats=[5])
    with pytest.raises(ConfigError, match="seats"):
        eng.observe(seats=[1, 1])
    with pytest.raises(ConfigError, match="out"):
        eng.observe(out=np.zeros((50, 5, OBS_SIZE)))                  # float64
    # some games: a new array each time (no buffer kept per subset size); the whole batch: one buffer
    first = eng.observe(games=[3, 7])
    assert eng.observe(games=[3, 7]) is not first and np.array_equal(first, full[[3, 7]])
    assert eng.observe() is eng.observe()


# ---- rules with hand-made deals ---------------------------------------------------------------
def _deal_rounds(first_round, n, hs):
    """deals (1, 3, n, K): the given first round, then rounds dealing the sorted deck in order."""
    from tapeo_env.rules.cards import deck_cards
    d = np.zeros((1, 3, n, K), np.int64)
    for i, hand in enumerate(first_round):
        for kind in hand:
            d[0, 0, i, kind] += 1
    cards = deck_cards()
    for r in (1, 2):
        for i in range(n):
            d[0, r, i] = np.bincount(cards[i * hs:(i + 1) * hs], minlength=K)
    return d


def test_freeloader_chain_three_players():
    # Seats 0 and 1 reveal Freeloaders, seat 2 a ham3. Seat 0 steals from seat 1, but seat 1's tapa
    # is a Freeloader: nothing (T6). Seat 1 steals seat 2's ham3. Seat 2 keeps nothing new.
    hs = 9
    first = [[FREELOADER] + [BREAD] * 8, [FREELOADER] + [TORTILLA] * 8, [HAM3] + [PRAWNS] * 8]
    eng = BatchedTapeo(3, 1, seed=0)
    eng.reset(deals=_deal_rounds(first, 3, hs))
    eng.step(np.array([[FREELOADER, FREELOADER, HAM3]]))
    bars = eng.state.bars[0]
    assert bars[0].tolist() == [0] * FREELOADER + [1, 0]                          # its Freeloader only
    assert bars[1, FREELOADER] == 1 and bars[1, HAM3] == 1 and bars[1].sum() == 2   # Freeloader + ham3
    assert bars[2].sum() == 0                                                      # ham3 stolen
    # passing left: seat 1 now holds what seat 0 held (8 bread), seat 0 what seat 2 held (8 prawns)
    assert eng.state.hands[0, 1, BREAD] == 8 and eng.state.hands[0, 0, PRAWNS] == 8


def test_two_player_freeloaders_steal_from_each_other():
    # 2 players: each one's left neighbour is the other. Seat 0 Freeloader, seat 1 croqueta:
    # seat 0 ends with Freeloader + croqueta, seat 1 with nothing.
    first = [[FREELOADER] + [TORTILLA] * 9, [CROQUETA] + [PRAWNS] * 9]
    eng = BatchedTapeo(2, 1, seed=0)
    eng.reset(deals=_deal_rounds(first, 2, 10))
    eng.step(np.array([[FREELOADER, CROQUETA]]))
    assert eng.state.bars[0, 0, FREELOADER] == 1 and eng.state.bars[0, 0, CROQUETA] == 1
    assert eng.state.bars[0, 1].sum() == 0


def test_last_tapa_is_automatic_and_round_is_scored():
    # 2 players, 10 tapas each: 9 decisions, the 10th tapa is revealed with the 9th pick (T7).
    # Seat 0 gets 10 tortillas -> 5 pairs x 5 = 25. Seat 1 gets 10 croquetas -> 15 (five or more).
    first = [[TORTILLA] * 10, [CROQUETA] * 10]
    eng = BatchedTapeo(2, 1, seed=0)
    eng.reset(deals=_deal_rounds(first, 2, 10))
    for p in range(9):
        held = eng.state.hands[0]
        picks = np.array([[int(np.argmax(held[0])), int(np.argmax(held[1]))]])
        res = eng.step(picks)
        assert res.round_over[0] == (p == 8)
    # after passing, each seat holds the other's hand every other pick; the bars get 5 + 5 of each
    # kind: seat 0 has 5 tortillas + 5 croquetas: 2 pairs x 5 + 15 = 25, seat 1 the same.
    assert eng.state.round_scores[0, 0].tolist() == [25, 25]
    assert eng.state.round[0] == 1 and eng.state.pick[0] == 0
    assert eng.state.bars[0].sum() == 0


def _kernel_rows(fn, rows, rul=None):
    """Apply a one-game scoring kernel to each row; int64 results as lists."""
    r, croq = kernels.rulings_array(scoring.DEFAULT_RULINGS) if rul is None else rul
    out = []
    for row in rows:
        o = np.zeros(len(row), np.int64)
        fn(np.asarray(row, np.uint8), r, o) if fn is not kernels.round_points else fn(np.asarray(row, np.uint8), r, croq, o)
        out.append(o.tolist())
    return out


def test_kernel_scoring_values_by_hand():
    # churros 4,1,1 (3 players): most +6; two fewest share -6 -> -3 each (T9)
    assert _kernel_rows(kernels.churro_points, [[4, 1, 1]]) == [[6, -3, -3]]
    # 2 players, churros 2,2: both most, share 6 -> +3 each, nobody loses (T9)
    assert _kernel_rows(kernels.churro_points, [[2, 2]]) == [[3, 3]]
    # 3 players all tied at 2: +6 // 3 = 2 and -6 // 3 = -2 -> 0 each
    assert _kernel_rows(kernels.churro_points, [[2, 2, 2]]) == [[0, 0, 0]]
    # bar: 3 tortillas (1 pair = 5), 2 croquetas (3), 2 prawns + 3 bread (2*3 + 3*min(2,3) = 12):
    # 5 + 3 + 12 = 20, plus ham: seat 0 has ham2 (2 slices) first 6, seat 1 ham1 (1) second 3.
    bars = np.zeros((2, K), np.int64)
    bars[0, [TORTILLA, CROQUETA, PRAWNS, BREAD, HAM2]] = [3, 2, 2, 3, 1]
    bars[1, [HAM1, CHURRO]] = [1, 4]
    assert _kernel_rows(kernels.round_points, [bars]) == [[20 + 6, 3]]
    # ham slices 3,3,1 (ham3, ham3, ham1): two leaders share 6 -> 3 each, no runner-up (T2)
    # peppers 3,3,1: max 3 >= 3 -> both at the max lose 6: 2*3-6 = 0, 0; seat 2: 2*1 = 2 (T5)
    bars = np.zeros((3, K), np.int64)
    bars[:, HAM3] = [1, 1, 0]
    bars[2, HAM1] = 1
    bars[:, PEPPER] = [3, 3, 1]
    assert _kernel_rows(kernels.round_points, [bars]) == [[3 + 0, 3 + 0, 0 + 2]]
    # ham 5,2,2,0 (ham3+ham2, ham2, ham2, -): leader 6, two runners-up share 3 -> 1 each (3 // 2)
    bars = np.zeros((4, K), np.int64)
    bars[0, [HAM3, HAM2]] = 1
    bars[[1, 2], HAM2] = 1
    assert _kernel_rows(kernels.round_points, [bars]) == [[6, 1, 1, 0]]
    # T10: scores 10, 10, 4; churros 1, 3, 5: the tie on points goes to seat 1 (more churros)
    w = np.zeros(3, bool)
    kernels.winning_seats(np.array([10, 10, 4]), np.array([1, 3, 5], np.uint8), kernels.rulings_array(scoring.DEFAULT_RULINGS)[0], w)
    assert w.tolist() == [False, True, False]
    no_tie_break = kernels.rulings_array(scoring.Rulings(tie_break_by_churros=False))[0]
    kernels.winning_seats(np.array([10, 10, 4]), np.array([1, 3, 5], np.uint8), no_tie_break, w)
    assert w.tolist() == [True, True, False]


@pytest.mark.parametrize("rulings", [scoring.DEFAULT_RULINGS,
                                     scoring.Rulings(tortilla_pair=4, croqueta_table=(0, 2, 4), ham_first=5,
                                                     ham_second=2, hot_pepper_min=2, two_player_fewest_loses=True,
                                                     tie_break_by_churros=False, churro_fewest=5)])
def test_kernel_scoring_equals_the_scalar_rules_on_random_bars(rulings):
    rng = np.random.default_rng(0)
    rul = kernels.rulings_array(rulings)
    for _ in range(3000):
        n = int(rng.integers(2, 7))
        bars = rng.integers(0, 5, (n, K))
        want = O.round_points(bars, rulings).tolist()
        assert _kernel_rows(kernels.round_points, [bars], rul) == [want], bars
        churros = rng.integers(0, 6, n)
        assert _kernel_rows(kernels.churro_points, [churros], rul) == [O.churro_points(churros, rulings).tolist()]
        scores = rng.integers(-5, 8, n)
        w = np.zeros(n, bool)
        kernels.winning_seats(scores, churros.astype(np.uint8), rul[0], w)
        assert np.flatnonzero(w).tolist() == list(O.winning_seats(scores, churros, rulings))


def test_batched_scoring_values_by_hand():
    # the oracle's vectorised scoring (tests/oracles/tapeo_batched_scoring.py)
    # ham slices 3,3,1: two leaders share 6 -> 3 each, no runner-up (T2); 3 = 6 // 2
    assert ham_points_batch(np.array([[3, 3, 1]])).tolist() == [[3, 3, 0]]
    # ham 5,2,2,0: leader 6, two runners-up share 3 -> 1 each (3 // 2), no ham no points (T3)
    assert ham_points_batch(np.array([[5, 2, 2, 0]])).tolist() == [[6, 1, 1, 0]]
    # peppers 3,3,1: max 3 >= 3 -> both at the max lose 6: 2*3-6 = 0, 0; seat 2: 2*1 = 2 (T5)
    assert pepper_points_batch(np.array([[3, 3, 1]])).tolist() == [[0, 0, 2]]
    # churros 4,1,1 (3 players): most +6; two fewest share -6 -> -3 each (T9)
    assert churro_points_batch(np.array([[4, 1, 1]])).tolist() == [[6, -3, -3]]
    # 2 players, churros 2,2: both most, share 6 -> +3 each, nobody loses (T9)
    assert churro_points_batch(np.array([[2, 2]])).tolist() == [[3, 3]]
    # bar: 3 tortillas (1 pair = 5), 2 croquetas (3), 2 prawns + 3 bread (2*3 + 3*min(2,3) = 12):
    # 5 + 3 + 12 = 20, plus ham: seat 0 has ham2 (2 slices), seat 1 ham1 (1): 6 and 3.
    bars = np.zeros((1, 2, K), np.int64)
    bars[0, 0, [TORTILLA, CROQUETA, PRAWNS, BREAD, HAM2]] = [3, 2, 2, 3, 1]
    bars[0, 1, [HAM1, CHURRO]] = [1, 4]
    assert round_points_batch(bars).tolist() == [[20 + 6, 3]]
    # rewards: scores 10, 4, 4 with winner seat 0. win_loss: +1, -1/2, -1/2; margin: 10 - 4 = 6,
    # 4 - (10+4)/2 = -3; points: the scores.
    s, w = np.array([[10, 4, 4]]), np.array([[True, False, False]])
    assert final_rewards_batch(s, w, "win_loss").tolist() == [[1.0, -0.5, -0.5]]
    assert final_rewards_batch(s, w, "margin").tolist() == [[6.0, -3.0, -3.0]]
    assert final_rewards_batch(s, w, "points").tolist() == [[10.0, 4.0, 4.0]]
    # everyone a winner: 0 for all
    assert final_rewards_batch(np.array([[5, 5]]), np.array([[True, True]]), "win_loss").tolist() == [[0.0, 0.0]]


# ---- errors -----------------------------------------------------------------------------------
def test_illegal_pick_raises_and_changes_nothing():
    first = [[TORTILLA] * 8, [CROQUETA] * 8, [PEPPER] * 8, [BREAD] * 8]   # 8 bread: the whole deck's
    eng = BatchedTapeo(4, 1, seed=0)
    eng.reset(deals=_deal_rounds(first, 4, 8))
    before = {f: getattr(eng.state, f).copy() for f in ("hands", "bars", "pick")}
    with pytest.raises(IllegalActionError, match=r"game 0 seat 1.*1 \(croqueta\)"):
        eng.step(np.array([[TORTILLA, TORTILLA, PEPPER, BREAD]]))
    with pytest.raises(IllegalActionError):
        eng.step(np.array([[TORTILLA, CROQUETA, PEPPER, 10]]))
    with pytest.raises(ValueError, match="shape"):
        eng.step(np.array([TORTILLA, CROQUETA, PEPPER, BREAD]))
    for f, v in before.items():
        assert np.array_equal(getattr(eng.state, f), v)


def test_bad_options_and_deals_raise():
    with pytest.raises(ConfigError, match="legal values"):
        BatchedTapeo(7, 4)
    with pytest.raises(ConfigError, match="reward_scheme"):
        BatchedTapeo(4, 4, reward_scheme="score")
    eng = BatchedTapeo(2, 2, seed=0)
    with pytest.raises(ConfigError, match="shape"):
        eng.reset(deals=np.zeros((2, 3, 3, K)))     # 3 seats for a 2-player engine
    bad = np.zeros((2, 3, 2, K), np.int64)
    bad[..., TORTILLA] = 10                           # 2 hands x 10 tortillas = 20 > 14 in the deck
    with pytest.raises(ConfigError, match="more of a kind"):
        eng.reset(deals=bad)


def test_finished_game_must_be_reset_before_stepping():
    eng = BatchedTapeo(6, 3, seed=1)
    eng.reset()
    while not eng.terminal.all():
        eng.step(eng.random_actions())
    assert (eng.legal_mask() == 0).all()
    with pytest.raises(ValueError, match="reset"):
        eng.step(np.zeros((3, 6), np.int64))
    eng.reset(games=[1])
    assert eng.terminal.tolist() == [True, False, True]


def test_own_deals_are_valid_and_seeded():
    a, b = BatchedTapeo(4, 500, seed=11), BatchedTapeo(4, 500, seed=11)
    a.reset()
    b.reset()
    assert np.array_equal(a.state.hands, b.state.hands)
    h = a.state.hands.astype(int)
    assert (h.sum(axis=2) == 8).all()                                        # 8 tapas per hand (4 players)
    assert (h.sum(axis=1) + a.state.undealt == np.array(E.Config().deck)).all()   # deck = dealt + undealt
    # uniform deal: expected tortillas per hand = 8 * 14 / 84 = 1.333; 2000 hands -> sd of the mean ~0.023
    assert abs(h[:, :, TORTILLA].mean() - 8 * 14 / 84) < 0.1


def test_random_legal_actions_are_legal_and_uniform():
    rng = np.random.default_rng(0)
    mask = np.zeros((20000, K), np.int8)
    mask[:, [1, 4, 9]] = 1
    a = random_legal_actions(mask, rng)
    assert set(np.unique(a).tolist()) == {1, 4, 9}
    freq = np.bincount(a, minlength=K)[[1, 4, 9]] / len(a)
    assert np.abs(freq - 1 / 3).max() < 0.02         # 1/3 each; sd ~0.0033
    with pytest.raises(ValueError):
        random_legal_actions(np.zeros((1, K), np.int8), rng)


def test_state_under_2_kib_per_game():
    for n in (2, 4, 6):
        eng = BatchedTapeo(n, 128, seed=0)
        assert eng.state.nbytes / 128 < 2048
    # 6 players: hands 60 + bars 60 + churros 6 + undealt 10 + round scores 36 + final 12 + winners 6 + round, pick 2 + seed 8 = 200
    assert BatchedTapeo(6, 128).state.nbytes / 128 == 200


# ---- benchmark smoke run ------------------------------------------------------------------------
def test_throughput_benchmark_quick_smoke(tmp_path):
    from hod.benchmarks import throughput
    result = throughput.main(["--quick", "--games", "tapeo", "--out-dir", str(tmp_path)])
    text = (tmp_path / "throughput.md").read_text()
    assert "batched B=64" in text and "leduc_holdem_v4" in text and "pyspiel leduc_poker" in text
    assert (tmp_path / "throughput.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert result["ppo"]["env_steps_per_s"] > 0
    assert all(m["state_bytes_per_game"] < 2048 for m in result["memory"])


@pytest.mark.parametrize("field, value, legal", [
    ("pick", -100, "legal: 0..9"),          # 2 players: hand size 10 (tapeo.txt), picks 0..9
    ("round", -1, "legal: 0..3"),           # 3 rounds; 3 = over
    ("round", 4, "legal: 0..3"),
    ("hands", None, "hand_size - pick tapas"),
])
def test_load_state_refuses_values_no_game_reaches(field, value, legal):
    """A record with an impossible pick or round crashed the process in the kernels (free(): invalid pointer)."""
    from tapeo_env.rules.batched import BatchedTapeo

    eng = BatchedTapeo(2, 2, seed=0)
    eng.reset(seed=1)
    before = eng.state.copy()
    rec = eng.state.copy()
    if field == "hands":
        rec.hands[0, 0, 0] += 1                # 11 tapas in a 10-tapa hand at pick 0
    else:
        getattr(rec, field)[0] = value
    with pytest.raises(ConfigError, match=legal):
        eng.load_state(rec)
    assert eng.state.same_as(before)


def test_kernels_load_numbas_target_without_scipy_linalg_and_blas_still_works():
    """hod.core.jit.prepare_target: importing the kernels does not import scipy.linalg (numba's
    BLAS probe), scipy.linalg imports afterwards, and numba's np.dot still compiles (2 . 3 = 6)."""
    import subprocess
    import sys

    code = ("import sys, numpy as np\nimport tapeo_env.rules.kernels\nprint('scipy.linalg' in sys.modules)\n"
            "import scipy.linalg\nfrom numba import njit\nprint(njit(lambda a, b: np.dot(a, b))(np.full(3, 2.0), np.ones(3)))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == ["False", "6.0"]


def test_parallel_drivers_equal_the_serial_ones_bit_for_bit():
    """kernels.step_batch_par / observe_batch_par (prange, chunks of PAR_CHUNK games) write what
    step_batch / observe_batch write, over a batch of several chunks; the engine with
    parallel_min_batch set plays the same games as without."""
    B = kernels.PAR_CHUNK * 2 + 7
    a, b = BatchedTapeo(4, B, seed=5), BatchedTapeo(4, B, seed=5)
    b.parallel_min_batch = 1
    a.reset(seed=5)
    b.reset(seed=5)
    rng = np.random.default_rng(5)
    for _ in range(30):
        act = a.random_actions(rng=rng)
        s = b.state
        ref = a.observe().copy()
        par = np.empty_like(ref)
        kernels.observe_batch_par(s.hands, s.bars, s.churros_kept, s.round_scores, s.round, s.pick, b._all,
                                  b._all_seats, b.hand_size, b._lut, b._inv, b._deck64, par)
        assert np.array_equal(ref.view(np.int32), par.view(np.int32))
        assert np.array_equal(ref.view(np.int32), b.observe().view(np.int32))
        flags = np.zeros(B, np.int8)
        t = a.state.copy()
        kernels.step_batch_par(t.hands, t.bars, t.churros_kept, t.round_scores, t.final_scores, t.winners, t.round,
                               t.pick, a._all, act, a.hand_size, a._rul,
                               a._croq, flags)
        u = a.state.copy()
        flags2 = np.zeros(B, np.int8)
        kernels.step_batch(u.hands, u.bars, u.churros_kept, u.round_scores, u.final_scores, u.winners, u.round,
                           u.pick, a._all, act, a.hand_size, a._rul,
                           a._croq, flags2)
        assert np.array_equal(flags, flags2) and all(np.array_equal(x, y) for x, y in zip(t.arrays().values(),
                                                                                          u.arrays().values()))
        ra, rb = a.step(act), b.step(act.copy())
        for x, y in zip(ra, rb):
            assert np.array_equal(x, y)
        for e, r in ((a, ra), (b, rb)):
            if r.game_over.any():
                e.reset(games=np.flatnonzero(r.game_over), seeds=np.flatnonzero(r.game_over).astype(np.uint64))
    assert all(np.array_equal(x, y) for x, y in zip(a.state.arrays().values(), b.state.arrays().values()))
