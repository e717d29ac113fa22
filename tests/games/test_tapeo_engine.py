"""Tapeo rules engine: picks, passing, the Freeloader (T6), the last tapa (T7), churros (T8-T10),
with hand-made deals and values worked out by hand; invariants over many seeded random games; the
state as a one-game record of the kernels, and its refusals against the engine it replaced
(``tests/oracles/tapeo_scalar.py``; the step-by-step lockstep is ``tests/games/test_tapeo_lockstep.py``)."""
import numpy as np
import pytest

from oracles import tapeo_scalar as O
from tapeo_env.rules.batched import BatchedState, BatchedTapeo, state_record

from hod.core.errors import ConfigError, IllegalActionError
from tapeo_env.rules.cards import (BREAD, CHURRO, CROQUETA, DECK_COMPOSITION, FREELOADER, HAM3, NUM_KINDS, PEPPER, PRAWNS,
                             TORTILLA)
from tapeo_env.rules.engine import (Config, apply_actions, legal_actions, new_game, sample_consistent_state,
                              unseen_counts)
from tapeo_env.rules.observation import encode
from tapeo_env.rules.scoring import churro_points, round_breakdown

DECK = np.array(DECK_COMPOSITION)


def bar(state, seat, **kinds):
    """Expected bar row from kind=count keywords."""
    names = dict(tortilla=TORTILLA, croqueta=CROQUETA, ham3=HAM3, prawns=PRAWNS, bread=BREAD, pepper=PEPPER,
                 freeloader=FREELOADER, churro=CHURRO)
    row = np.zeros(NUM_KINDS, int)
    for k, v in kinds.items():
        row[names[k]] = v
    return state.bars[seat].tolist() == row.tolist()


def filler(n_rounds, n, hs, kind=TORTILLA):
    return [[[kind] * hs for _ in range(n)] for _ in range(n_rounds)]


def game_with_first_round(hands, num_players, hand_size=None):
    cfg = Config(num_players=num_players, hand_size=hand_size)
    hs = cfg.hand_size
    rest = [[[CROQUETA] * hs if i % 2 else [PEPPER] * hs for i in range(num_players)]] * 2
    return new_game(cfg, deals=[hands] + rest)


def test_freeloader_steals_left_neighbours_reveal_2_players():
    s = game_with_first_round([[FREELOADER] + [TORTILLA] * 9, [HAM3] + [CROQUETA] * 9], 2)
    apply_actions(s, [FREELOADER, HAM3])
    # seat 0's Freeloader takes the ham3 seat 1 revealed; the Freeloader card stays on seat 0's bar
    assert bar(s, 0, freeloader=1, ham3=1) and bar(s, 1)
    # hands passed: seat 0 now holds hand 1 (9 croquetas), seat 1 holds hand 0 (9 tortillas)
    assert s.hand(0)[CROQUETA] == 9 and s.hand(1)[TORTILLA] == 9


def test_freeloader_vs_freeloader_2_players():
    s = game_with_first_round([[FREELOADER] + [TORTILLA] * 9, [FREELOADER] + [CROQUETA] * 9], 2)
    apply_actions(s, [FREELOADER, FREELOADER])
    # one Freeloader cannot steal from another: each bar holds only its own Freeloader
    assert bar(s, 0, freeloader=1) and bar(s, 1, freeloader=1)


def test_freeloader_chain_3_players():
    hands = [[FREELOADER] + [PEPPER] * 8, [FREELOADER] + [CROQUETA] * 8, [TORTILLA] * 9]
    s = game_with_first_round(hands, 3)
    apply_actions(s, [FREELOADER, FREELOADER, TORTILLA])
    # seat 0's left (seat 1) revealed a Freeloader -> seat 0 gets nothing;
    # seat 1's Freeloader still steals seat 2's tortilla
    assert bar(s, 0, freeloader=1) and bar(s, 1, freeloader=1, tortilla=1) and bar(s, 2)


def test_freeloader_of_last_seat_steals_from_seat_0():
    hands = [[PEPPER] * 9, [CROQUETA] * 9, [FREELOADER] + [TORTILLA] * 8]
    s = game_with_first_round(hands, 3)
    apply_actions(s, [PEPPER, CROQUETA, FREELOADER])
    # seat 2's left is seat (2 + 1) % 3 = 0: it takes seat 0's pepper
    assert bar(s, 0) and bar(s, 1, croqueta=1) and bar(s, 2, freeloader=1, pepper=1)


def test_stolen_churro_is_the_thiefs_churro_t6():
    s = game_with_first_round([[FREELOADER] + [TORTILLA] * 9, [CHURRO] + [CROQUETA] * 9], 2)
    apply_actions(s, [FREELOADER, CHURRO])
    assert s.churros_held().tolist() == [1, 0]


def test_freeloader_revealed_as_last_tapa_t7():
    # hand A (seat 0) = 9 croquetas + Freeloader, hand B (seat 1) = 9 tortillas + ham3.
    # At pick p seat i holds hand (i - p) % 2: seat 0 holds A at even picks, B at odd ones.
    # Whoever holds A picks a croqueta, whoever holds B a tortilla, for the 9 decision picks.
    s = game_with_first_round([[CROQUETA] * 9 + [FREELOADER], [TORTILLA] * 9 + [HAM3]], 2)
    for p in range(9):
        assert s.cards_in_hand == 10 - p  # hands shrink by one per pick
        apply_actions(s, [CROQUETA if p % 2 == 0 else TORTILLA, TORTILLA if p % 2 == 0 else CROQUETA])
    # after pick 9 the last tapas were revealed with no decision (T7): at pick index 9 seat 1
    # holds A (the Freeloader) and seat 0 holds B (the ham3): seat 1 steals seat 0's ham3.
    assert s.round == 1 and s.reveals[0][9] == (HAM3, FREELOADER)
    bars = s.round_bars[0]
    # seat 0: croquetas at picks 0,2,4,6,8 = 5, tortillas at 1,3,5,7 = 4, the ham3 stolen
    assert bars[0].tolist() == [4, 5, 0, 0, 0, 0, 0, 0, 0, 0]
    # seat 1: tortillas 5, croquetas 4, ham3 (stolen), Freeloader
    assert bars[1].tolist() == [5, 4, 0, 0, 1, 0, 0, 0, 1, 0]
    # seat 0: 5 croquetas 15 + 2 tortilla pairs 10 = 25
    # seat 1: 4 croquetas 10 + 2 pairs 10 + only ham holder 6 = 26
    assert s.round_scores[0].tolist() == [25, 26]
    # bars cleared, round 2 dealt (T8)
    assert s.bars.sum() == 0 and s.pick == 0 and s.cards_in_hand == 10


def test_churros_kept_across_rounds_t8_and_final_tie_broken_by_churros_t10():
    # 2 players, hand size 2: one decision pick then the last tapa. Seat 0 picks from hand A,
    # seat 1 from hand B; then seat 0 gets B's leftover and seat 1 A's leftover.
    deals = [
        [[TORTILLA, CHURRO], [TORTILLA, CHURRO]],  # r1: each 1 tortilla (0) + 1 churro
        [[CHURRO, PEPPER], [PEPPER, PEPPER]],      # r2: s0 churro + pepper = 2; s1 2 peppers = 4
        [[PRAWNS, BREAD], [PRAWNS, PEPPER]],       # r3: s0 bread + pepper = 2; s1 2 prawns = 6
    ]
    s = new_game(Config(num_players=2, hand_size=2), deals=deals)
    apply_actions(s, [TORTILLA, TORTILLA])
    assert s.churros_kept.tolist() == [1, 1] and s.round_scores[0].tolist() == [0, 0]
    apply_actions(s, [CHURRO, PEPPER])
    assert s.churros_kept.tolist() == [2, 1] and s.round_scores[1].tolist() == [2, 4]
    apply_actions(s, [BREAD, PRAWNS])
    assert s.round_scores[2].tolist() == [2, 6]
    # rounds: 0+2+2 = 4 and 0+4+6 = 10; churros 2 vs 1: seat 0 most +6, nobody loses (2 players)
    assert s.final_scores.tolist() == [10, 10]
    # 10-10: seat 0 kept more churros -> seat 0 wins alone
    assert s.terminal and s.winners == (0,)


def test_churros_everyone_tied_two_players_end_to_end():
    deals = [[[TORTILLA, CHURRO], [TORTILLA, CHURRO]]] * 3
    s = new_game(Config(num_players=2, hand_size=2), deals=deals)
    for _ in range(3):
        apply_actions(s, [TORTILLA, TORTILLA])
    # each round each seat gets one tortilla (lone: 0) and one churro; bars are cleared, so
    # 0 round points, 3 churros each. All tied with 2 players: +3 each (T9); 3-3 on points and
    # on churros -> shared win (T10)
    assert s.churros_kept.tolist() == [3, 3]
    assert s.final_scores.tolist() == [3, 3] and s.winners == (0, 1)


def test_illegal_pick_raises_and_leaves_state_unchanged():
    s = game_with_first_round([[FREELOADER] + [TORTILLA] * 9, [HAM3] + [CROQUETA] * 9], 2)
    before = s.clone()
    with pytest.raises(IllegalActionError, match=r"legal actions: \[0 \(tortilla\), 8 \(freeloader\)\]"):
        apply_actions(s, [CROQUETA, HAM3])
    with pytest.raises(IllegalActionError):
        apply_actions(s, [TORTILLA])  # one pick missing
    with pytest.raises(IllegalActionError):
        apply_actions(s, [TORTILLA, 10])
    assert np.array_equal(s.hands, before.hands) and np.array_equal(s.bars, before.bars) and s.pick == 0
    assert legal_actions(s, 1) == [CROQUETA, HAM3]


def test_bad_config():
    for n in (1, 7):
        with pytest.raises(ConfigError, match=r"\[2, 3, 4, 5, 6\]"):
            Config(num_players=n)
    with pytest.raises(ConfigError, match="deck"):
        Config(deck=(1, 2, 3))
    with pytest.raises(ConfigError):
        new_game(Config(num_players=2), deals=[[[TORTILLA] * 10, [TORTILLA] * 10]] * 3)  # 20 > 14 tortillas


def test_same_seed_same_game_and_each_round_reshuffles_whole_deck():
    a, b = new_game(Config(), seed=3), new_game(Config(), seed=3)
    assert a.dealt == b.dealt
    # every round deals from the full 84-tapa deck: 8 x 4 dealt + undealt = 84 by kind
    assert (a.hands.sum(axis=0) + a.undealt).tolist() == list(DECK_COMPOSITION)


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_invariants_over_seeded_random_games(n):
    rng = np.random.default_rng(100 + n)
    for g in range(40):
        s = new_game(Config(num_players=n), seed=g)
        while not s.terminal:
            r, size, undealt = s.round, s.cards_in_hand, s.undealt.copy()
            # the 84 tapas: hands + bars + undealt, per kind
            assert (s.hands.sum(axis=0) + s.bars.sum(axis=0) + s.undealt).tolist() == list(DECK_COMPOSITION)
            assert (s.hands.sum(axis=1) == size).all()
            picks = [int(rng.choice(legal_actions(s, i))) for i in range(n)]
            ended = apply_actions(s, picks)
            if ended:
                # everything dealt this round ended on a bar
                assert (s.round_bars[r].sum(axis=0) + undealt).tolist() == list(DECK_COMPOSITION)
            else:
                assert (s.hands.sum(axis=1) == size - 1).all()  # hands shrink by one per pick
        # scores are the sum of the scoring rules
        for r in range(3):
            assert s.round_scores[r].tolist() == sum(round_breakdown(s.round_bars[r]).values()).tolist()
        churros = sum(b[:, CHURRO] for b in s.round_bars)
        assert s.churros_kept.tolist() == churros.tolist()
        assert s.final_scores.tolist() == (s.round_scores.sum(axis=0) + churro_points(churros)).tolist()


def test_sampled_consistent_states_look_the_same_to_the_seat():
    rng = np.random.default_rng(0)
    s = new_game(Config(num_players=5), seed=9)
    apply_actions(s, [legal_actions(s, i)[0] for i in range(5)])  # pick 1: seat 0 knows 1 other hand
    differs = 0
    for _ in range(20):
        t = sample_consistent_state(s, 0, rng)
        assert np.array_equal(encode(t, 0), encode(s, 0))
        assert (t.hands.sum(axis=0) + t.bars.sum(axis=0) + t.undealt).tolist() == list(DECK_COMPOSITION)
        assert np.array_equal(unseen_counts(t, 0), unseen_counts(s, 0))
        differs += not np.array_equal(t.hands, s.hands)
    assert differs > 0  # the unseen hands really are redealt


def test_the_state_is_a_one_game_record_of_the_kernels():
    s = new_game(Config(num_players=3), seed=5)
    rec = s.record
    assert isinstance(rec, BatchedState) and rec.batch_size == 1
    assert rec.hands.dtype == np.uint8 and rec.round_scores.dtype == np.int16 and rec.seed[0] == 5
    # the state's arrays are views of the record's row: hands by holder (seat i holds row i)
    assert s.hands.base is rec.hands and s.hand(2) is not None and np.shares_memory(s.hand(2), rec.hands)
    apply_actions(s, [legal_actions(s, i)[0] for i in range(3)])
    assert (s.round, s.pick) == (int(rec.round[0]), int(rec.pick[0])) == (0, 1)
    # passing left: after one pick seat 1 holds the hand dealt to seat 0 (hand_id), minus seat 0's pick
    dealt0 = np.bincount(s.dealt[0][0], minlength=NUM_KINDS)
    dealt0[s.reveals[0][0][0]] -= 1
    assert s.hand_id(1) == 0 and s.hand(1).tolist() == dealt0.tolist()
    # stacking records is the batched engine's state: both play on alike
    eng = BatchedTapeo(Config(num_players=3), 2, seed=0)
    eng.load_state(state_record([s, s]))
    assert eng.state.same_as(BatchedState(**{k: np.concatenate([v, v]) for k, v in rec.arrays().items()}))
    c = s.clone()
    c.hands[0, :] = 0                       # a clone shares nothing with its original
    assert s.hands[0].sum() == s.cards_in_hand == 8
    with pytest.raises(AttributeError):     # an array replaced would leave the record behind
        s.hands = np.zeros((3, NUM_KINDS), np.uint8)


def test_refusals_are_the_oracles_and_change_nothing():
    cfg = Config(num_players=3)
    for seed in range(5):
        new, old = new_game(cfg, seed=seed), O.new_game(cfg, seed=seed)
        before = new.record.copy()
        for picks in ([CHURRO, CHURRO, CHURRO], [0, 1], [TORTILLA, 10, 0], [1.0, 0, 0], [True, 0, 0]):
            got, want = [], []
            for f, st, out in ((apply_actions, new, got), (O.apply_actions, old, want)):
                try:
                    f(st, picks)
                    out.append("played")
                except (IllegalActionError, ConfigError) as e:
                    out.append(f"{type(e).__name__}: {e}")
            assert got == want
            if got != ["played"]:
                assert new.record.same_as(before)
            else:
                before = new.record.copy()
        for seat in (-1, 3, 1.0, None):
            with pytest.raises(ConfigError, match=r"\[0, 1, 2\]|0\.\.2"):
                legal_actions(new, seat)


def test_configs_the_record_cannot_hold_are_refused():
    # the record holds counts as uint8: a kind of 256 tapas, or 10 rounds of 26 churros (260 kept)
    with pytest.raises(ConfigError, match=r"0\.\.255"):
        Config(deck=(256,) + DECK_COMPOSITION[1:])
    deck = DECK_COMPOSITION[:CHURRO] + (26,)
    with pytest.raises(ConfigError, match="churros"):
        Config(deck=deck, num_rounds=10)
    assert Config(deck=deck, num_rounds=9).num_rounds == 9       # 9 * 26 = 234 <= 255
