"""One seed, one game: the single-game and the batched engine of each game deal from the same
numbers (hod.core.deal), so game i of a batch reset with seed s is new_game(config, seed=s), and
the two stay equal step by step when given the same actions."""
import numpy as np
import pytest

from hod.core.deal import as_seeds, draw_seeds, shuffled, shuffled_prefix
from hod.core.errors import ConfigError
from hod.core.rewards import final_rewards
from robada_env.rules import engine as R
from robada_env.rules.batched import BatchedRobada
from robada_env.rules.observation import encode as robada_encode
from tapeo_env.rules import engine as T
from tapeo_env.rules.batched import BatchedTapeo
from tapeo_env.rules.cards import deck_cards
from tapeo_env.rules.observation import encode as tapeo_encode

SEEDS = [0, 1, 2, 7, 42, 2**32 + 5, 2**63 + 11, 2**64 - 1] + list(range(1000, 1040))


# ---- the shared shuffle ----------------------------------------------------------------------------
def test_one_game_and_a_batch_shuffle_alike():
    seeds = as_seeds(SEEDS, len(SEEDS))
    cards = deck_cards().astype(np.int8)
    for stream in (0, 1, 2):
        batch = shuffled_prefix(cards, seeds, stream, 40)
        alone = np.concatenate([shuffled_prefix(cards, seeds[i:i + 1], stream, 40) for i in range(len(seeds))])
        np.testing.assert_array_equal(batch, alone)
    # per-game streams (each game its own round) equal one stream at a time
    streams = np.arange(len(seeds)) % 3
    mixed = shuffled_prefix(cards, seeds, streams, 30)
    for i, s in enumerate(streams):
        np.testing.assert_array_equal(mixed[i], shuffled_prefix(cards, seeds[i:i + 1], int(s), 30)[0])
    ids = np.arange(40, dtype=np.int8)
    full = shuffled(ids, seeds)
    assert (np.sort(full, axis=1) == ids).all()            # permutations
    for i in range(len(seeds)):
        np.testing.assert_array_equal(full[i], shuffled(ids, seeds[i:i + 1])[0])


def test_shuffles_are_uniform_enough():
    seeds = draw_seeds(np.random.default_rng(0), 20000)
    first = shuffled(np.arange(40), seeds)[:, 0]
    freq = np.bincount(first, minlength=40) / len(seeds)
    assert np.abs(freq - 1 / 40).max() < 0.006                    # sd ~0.0011
    pre = shuffled_prefix(np.arange(84), seeds, 1, 10)
    assert (np.sort(pre, axis=1)[:, 1:] != np.sort(pre, axis=1)[:, :-1]).all()   # without replacement
    freq = np.bincount(pre[:, 9], minlength=84) / len(seeds)
    assert np.abs(freq - 1 / 84).max() < 0.004                    # sd ~0.0008
    # different rounds of one game are different deals
    assert (shuffled_prefix(np.arange(84), seeds[:50], 0, 10) != pre[:50]).any(axis=1).all()


def test_bad_seeds_are_refused():
    with pytest.raises(ConfigError):
        T.new_game(T.Config(num_players=2), seed=-1)
    with pytest.raises(ConfigError):
        R.new_game(seed=2**64)
    with pytest.raises(ConfigError):
        BatchedTapeo(2, 3).reset(seeds=[1, 2])                    # one per game
    with pytest.raises(ConfigError):
        BatchedRobada(2, 2).reset(seeds=[1, -2])


# ---- Tapeo -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_tapeo_one_seed_one_game(n):
    cfg = T.Config(num_players=n)
    eng = BatchedTapeo(cfg, len(SEEDS), seed=9, reward_scheme="win_loss", round_rewards=True)
    eng.reset(seeds=SEEDS)
    singles = [T.new_game(cfg, seed=s) for s in SEEDS]
    rng = np.random.default_rng(n)
    phi = np.zeros((len(SEEDS), n))
    step = 0
    while True:
        st = eng.state
        mask, obs = eng.legal_mask(), eng.observe()
        for b, g in enumerate(singles):
            for i in range(n):
                assert np.array_equal(g.hand(i), st.hands[b, i]), (step, b, i)
                assert np.array_equal(T.legal_mask(g, i), mask[b, i])
                assert np.array_equal(T.legal_actions(g, i), np.flatnonzero(mask[b, i]))
                assert np.array_equal(tapeo_encode(g, i), obs[b, i]), (step, b, i)
            assert np.array_equal(g.undealt, st.undealt[b])
            assert T.scores(g) == eng.scores()[b].tolist()
            assert T.is_terminal(g) == eng.terminal[b]
        if eng.terminal.all():
            break
        picks = eng.random_actions(rng=rng)
        res = eng.step(picks)
        for b, g in enumerate(singles):
            ended = T.apply_actions(g, picks[b].tolist())
            want = np.zeros(n)
            if ended:                                   # round_rewards: the change of the standings' value
                value = final_rewards(T.scores(g), T.winners(g), "win_loss")
                want, phi[b] = value - phi[b], value
            assert np.array_equal(want, res.rewards[b]), (step, b)
            assert bool(res.game_over[b]) == T.is_terminal(g)
        step += 1
    for b, g in enumerate(singles):
        assert T.winners(g) == np.flatnonzero(eng.state.winners[b]).tolist()
        assert np.array_equal(g.final_scores, eng.state.final_scores[b])
    assert step == 3 * cfg.decision_picks


def test_tapeo_partial_reset_with_seeds_and_engine_drawn_seeds():
    cfg = T.Config(num_players=4)
    eng = BatchedTapeo(cfg, 6, seed=3)
    eng.reset()
    drawn = eng.state.seed.copy()
    for b in range(6):                                            # the engine's own seeds deal like new_game
        np.testing.assert_array_equal(eng.state.hands[b], T.new_game(cfg, seed=int(drawn[b])).hands)
    eng.step(eng.random_actions())
    eng.reset(games=[1, 4], seeds=[77, 78])
    for b, s in ((1, 77), (4, 78)):
        np.testing.assert_array_equal(eng.state.hands[b], T.new_game(cfg, seed=s).hands)
    assert eng.state.pick.tolist() == [1, 0, 1, 1, 0, 1]


# ---- Ronda Robada ----------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [2, 3, 4])
def test_robada_one_seed_one_game(n):
    cfg = R.Config(num_players=n)
    eng = BatchedRobada(cfg, len(SEEDS), seed=9, reward_scheme="margin")
    eng.reset(seeds=SEEDS)
    singles = [R.new_game(cfg, seed=s) for s in SEEDS]
    for b, g in enumerate(singles):
        assert eng.deck[b].tolist() == list(g.deck_order)
    rng = np.random.default_rng(n)
    while True:
        mask, obs = eng.legal_mask()[:, 0], eng.observe()[:, 0]        # the seat to act
        for b, g in enumerate(singles):
            np.testing.assert_array_equal(R.legal_mask(g, g.current), mask[b])
            np.testing.assert_array_equal(robada_encode(g, g.current), obs[b])
            assert R.scores(g) == eng.scores()[b].tolist()
            assert R.is_terminal(g) == eng.terminal[b]
        if eng.terminal.all():
            break
        acts = eng.random_actions(rng=rng)
        rewards, _, over = eng.step(acts)
        acts = acts[:, 0]
        for b, g in enumerate(singles):
            was_over = g.terminal
            if not was_over and b % 2:                  # the joint form: no-op for the seats not to act
                R.apply_actions(g, [int(acts[b]) if i == g.current else R.NOOP for i in range(n)])
            elif not was_over:
                R.apply_action(g, int(acts[b]))
            assert bool(over[b]) == (g.terminal and not was_over)
            if over[b]:
                np.testing.assert_array_equal(rewards[b], final_rewards(R.scores(g), R.winners(g), "margin"))
    assert all(g.terminal for g in singles)


def test_robada_engine_drawn_seeds_deal_like_new_game():
    eng = BatchedRobada(3, 5, seed=1)
    eng.reset()
    eng.reset(games=[2], seeds=[123])
    assert eng.deck[2].tolist() == list(R.new_game(R.Config(num_players=3), seed=123).deck_order)


def test_the_compiled_deals_equal_the_numpy_oracle_bit_for_bit():
    """hod.core.deal's kernels give the numbers, shuffles and Fisher-Yates prefixes of the numpy
    and Python-int forms they replaced (tests/oracles/deal_numpy.py), for batches and single
    games, per-game streams, every count, int8 and int64 cards."""
    from hod.core import deal
    from oracles import deal_numpy as ref

    seeds = SEEDS + [2**63 - 1, 123456789] + draw_seeds(np.random.default_rng(3), 300).tolist()
    arr = np.array(seeds, np.uint64)
    for stream in (0, 1, 2, 7):
        assert np.array_equal(deal.stream_numbers(arr, stream, 40), ref.stream_numbers(arr, stream, 40))
        for cards in (np.arange(40, dtype=np.int8), deck_cards().astype(np.int64)):
            assert np.array_equal(deal.shuffled(cards, arr, stream), ref.shuffled(cards, arr, stream))
            for count in (0, 1, 20, 40, len(cards)):
                assert np.array_equal(deal.shuffled_prefix(cards, arr, stream, count),
                                      ref.shuffled_prefix(cards, arr, stream, count))
        streams = np.arange(arr.size) % 3
        assert np.array_equal(deal.shuffled_prefix(deck_cards(), arr, streams, 30),
                              ref.shuffled_prefix(deck_cards(), arr, streams, 30))
        for s in seeds[:20]:
            assert deal.stream_numbers_one(s, stream, 40) == ref.stream_numbers_one(s, stream, 40)
            assert deal.shuffled_one(list(range(40)), s, stream) == ref.shuffled_one(list(range(40)), s, stream)
            for count in (1, 20, 40):
                assert deal.shuffled_prefix_one(deck_cards().tolist(), s, stream, count) == \
                    ref.shuffled_prefix_one(deck_cards().tolist(), s, stream, count)
    with pytest.raises(ValueError, match="0..40"):
        deal.shuffled_prefix(np.arange(40), arr[:2], 0, 41)


def test_a_known_seed_deals_a_known_order():
    """SplitMix64 by hand for seed 0, stream 0: s = mix(0 + golden), key = mix(s + golden);
    number 0 = mix(key + gamma). mix(z): z ^= z >> 30; z *= 0xBF58476D1CE4E5B9; z ^= z >> 27;
    z *= 0x94D049BB133111EB; z ^= z >> 31 (mod 2**64), computed here with Python ints."""
    from hod.core import deal

    M = (1 << 64) - 1

    def mix(z):
        z ^= z >> 30
        z = z * 0xBF58476D1CE4E5B9 & M
        z ^= z >> 27
        z = z * 0x94D049BB133111EB & M
        return z ^ (z >> 31)

    golden, gamma = 0x9E3779B97F4A7C15, 0xD1B54A32D192ED03
    key = mix((mix(golden) + golden) & M)
    expect = [mix((key + (j + 1) * gamma) & M) for j in range(5)]
    assert deal.stream_numbers_one(0, 0, 5) == expect
    # the order of 5 cards is their numbers' order
    assert deal.shuffled_one([10, 11, 12, 13, 14], 0, 0) == [c for _, c in sorted(zip(expect, range(10, 15)))]
