"""Tapeo scoring rules, each with values worked out by hand from tapeo.txt and RULINGS T2-T5, T9, T10,
and the scoring functions (views of the compiled kernels) against the numpy rules they replaced
(``tests/oracles/tapeo_scalar.py``), bit for bit, over random bars and rulings."""
import numpy as np
import pytest

from oracles import tapeo_scalar as O

from tapeo_env.rules.cards import (BREAD, CHURRO, CROQUETA, DECK_COMPOSITION, FREELOADER, HAM1, HAM2, HAM3, HAND_SIZES,
                             NUM_KINDS, PEPPER, PRAWNS, TORTILLA)
from tapeo_env.rules.scoring import (Rulings, churro_points, croqueta_points, ham_points, pepper_points, prawn_points,
                               round_breakdown, round_points, tortilla_points, winning_seats)


def test_deck_and_hand_sizes_t1():
    # 14 + 14 + (4 + 4 + 4 hams) + 10 + 8 + 10 + 6 + 10 = 84; ham slices 4*1 + 4*2 + 4*3 = 24
    assert sum(DECK_COMPOSITION) == 84
    assert DECK_COMPOSITION[HAM1] * 1 + DECK_COMPOSITION[HAM2] * 2 + DECK_COMPOSITION[HAM3] * 3 == 24
    assert dict(HAND_SIZES) == {2: 10, 3: 9, 4: 8, 5: 7, 6: 7}


@pytest.mark.parametrize("n,pts", [(0, 0), (1, 0), (2, 5), (3, 5), (4, 10), (7, 15)])
def test_tortilla_pairs(n, pts):
    # 5 per complete pair: 3 -> one pair -> 5; 7 -> three pairs -> 15
    assert tortilla_points(n) == pts


@pytest.mark.parametrize("n,pts", [(0, 0), (1, 1), (2, 3), (3, 6), (4, 10), (5, 15), (6, 15), (9, 15)])
def test_croquetas_including_past_five(n, pts):
    assert croqueta_points(n) == pts


def test_ham_lone_leader_and_tie_for_second():
    # 7 slices leads alone: 6. Seats 1 and 3 tie for second at 4: 3 split by 2 -> 1 each (T2)
    assert ham_points([7, 4, 0, 4]).tolist() == [6, 1, 0, 1]


def test_ham_tie_for_first_gets_no_runner_up():
    # 5 and 5 share the 6 -> 3 each; the 3-slice seat gets nothing (no runner-up prize)
    assert ham_points([5, 5, 3]).tolist() == [3, 3, 0]
    # four-way tie: 6 // 4 = 1 each (T2)
    assert ham_points([2, 2, 2, 2]).tolist() == [1, 1, 1, 1]


def test_ham_nobody_and_lone_holder_t3():
    assert ham_points([0, 0, 0]).tolist() == [0, 0, 0]
    # only seat 1 has ham: 6 to it; nobody else has a positive count -> no runner-up (T3)
    assert ham_points([0, 3, 0]).tolist() == [0, 6, 0]
    # three-way tie for second: 3 // 3 = 1 each
    assert ham_points([9, 2, 2, 2]).tolist() == [6, 1, 1, 1]


def test_ham_slices_counted_from_plates():
    bars = np.zeros((2, NUM_KINDS), int)
    bars[0, HAM1], bars[0, HAM2] = 2, 1  # 1+1+2 = 4 slices
    bars[1, HAM3] = 1                    # 3 slices
    # seat 0 leads with 4 -> 6; seat 1 second with 3 -> 3
    assert round_breakdown(bars)["ham"].tolist() == [6, 3]


@pytest.mark.parametrize("p,b,pts", [(2, 5, 12), (0, 3, 0), (3, 1, 12), (4, 4, 24), (1, 0, 3)])
def test_prawns_and_bread_t4(p, b, pts):
    # 3*P + 3*min(P, B): (2,5) -> 6 + 6 = 12 (three breads dip nothing); (3,1) -> 9 + 3 = 12
    assert prawn_points(p, b) == pts


def test_peppers_two_vs_three_and_tied_maxima_t5():
    # max 2 < 3: never hot, 2 each
    assert pepper_points([2, 2, 0]).tolist() == [4, 4, 0]
    assert pepper_points([2, 1]).tolist() == [4, 2]
    # lone maximum 3: 6 - 6 = 0; the others keep 2 each
    assert pepper_points([3, 1]).tolist() == [0, 2]
    assert pepper_points([2, 3]).tolist() == [4, 0]
    # tied maximum 3: hot for both -> 0, 0
    assert pepper_points([3, 3, 1]).tolist() == [0, 0, 2]
    # 4 is the max: 8 - 6 = 2; the 3 is not the max -> 6
    assert pepper_points([4, 3, 0]).tolist() == [2, 6, 0]


def test_end_churros_t9():
    # 2 players: most +6, nobody loses
    assert churro_points([3, 1]).tolist() == [6, 0]
    # 2 players, everyone tied: each is "most": 6 // 2 = 3 each, nobody loses
    assert churro_points([2, 2]).tolist() == [3, 3]
    assert churro_points([0, 0]).tolist() == [3, 3]
    # 3 players all tied: +6//3 - 6//3 = 2 - 2 = 0 each
    assert churro_points([1, 1, 1]).tolist() == [0, 0, 0]
    # 4 players, 4-way tie: 1 - 1 = 0 each (T2: a tie of 4 for fewest loses 1 each)
    assert churro_points([5, 5, 5, 5]).tolist() == [0, 0, 0, 0]
    # 4 players: two tie for most (+3 each), two tie for fewest (-3 each)
    assert churro_points([4, 4, 1, 1]).tolist() == [3, 3, -3, -3]
    # three tie for most: 6 // 3 = 2 each; the zero loses 6
    assert churro_points([2, 2, 2, 0]).tolist() == [2, 2, 2, -6]
    # 5 players: lone most +6; two with none share -6 -> -3 each
    assert churro_points([5, 3, 3, 0, 0]).tolist() == [6, 0, 0, -3, -3]


def test_split_rounds_down_t2():
    # five-way tie for the ham: 6 // 5 = 1 each; two tie for second: 3 // 2 = 1 each
    assert ham_points([1, 1, 1, 1, 1]).tolist() == [1, 1, 1, 1, 1]
    assert ham_points([9, 2, 2]).tolist() == [6, 1, 1]
    # four tie for the most churros (6 // 4 = 1), one has the fewest alone (-6)
    assert churro_points([3, 3, 3, 3, 0]).tolist() == [1, 1, 1, 1, -6]


def test_winner_and_tie_break_t10():
    assert winning_seats([30, 41, 12], [0, 0, 9]) == (1,)
    # 40-40 tie: seat 1 kept 3 churros against 2 -> seat 1 wins alone
    assert winning_seats([40, 40, 30], [2, 3, 5]) == (1,)
    # still tied on churros: shared win
    assert winning_seats([40, 40], [2, 2]) == (0, 1)
    # the option can switch the tie-break off
    assert winning_seats([40, 40, 30], [2, 3, 5], Rulings(tie_break_by_churros=False)) == (0, 1)


def test_a_full_round_breakdown_by_hand():
    bars = np.zeros((3, NUM_KINDS), int)
    # seat 0: 3 tortillas (5), 2 croquetas (3), ham2 (2 slices), 1 prawns + 2 bread (3+3), 1 freeloader, 2 churros
    bars[0, [TORTILLA, CROQUETA, HAM2, PRAWNS, BREAD, FREELOADER, CHURRO]] = [3, 2, 1, 1, 2, 1, 2]
    # seat 1: 6 croquetas (15), ham3 (3 slices), 3 peppers (lone max 3: 6 - 6 = 0)
    bars[1, [CROQUETA, HAM3, PEPPER]] = [6, 1, 3]
    # seat 2: 1 tortilla (0), 2 peppers (4), ham1 (1 slice)
    bars[2, [TORTILLA, PEPPER, HAM1]] = [1, 2, 1]
    # ham: seat 1 leads with 3 -> 6, seat 0 second with 2 -> 3, seat 2 nothing
    # seat 0: 5 + 3 + 3 + 6 + 0 = 17; seat 1: 15 + 6 + 0 = 21; seat 2: 0 + 4 + 0 = 4
    br = round_breakdown(bars)
    assert br["ham"].tolist() == [3, 6, 0] and br["pepper"].tolist() == [0, 0, 4]
    assert round_points(bars).tolist() == [17, 21, 4]


RULINGS = [Rulings(), Rulings(two_player_fewest_loses=True, tie_break_by_churros=False),
           Rulings(tortilla_pair=4, croqueta_table=(0, 2, 4), ham_first=5, ham_second=2, prawn=2, bread_dip=4,
                   pepper=1, hot_pepper_min=2, hot_pepper_penalty=7, churro_most=5, churro_fewest=3),
           Rulings(hot_pepper_min=0, hot_pepper_penalty=4, croqueta_table=(1,)),
           Rulings(hot_pepper_min=-2, ham_first=7, ham_second=5, churro_most=7, churro_fewest=1)]


@pytest.mark.parametrize("r", range(len(RULINGS)))
def test_every_rule_is_the_oracles_over_random_bars(r):
    rulings, rng = RULINGS[r], np.random.default_rng(r)
    for _ in range(300):
        n = int(rng.integers(1, 7))
        bars = rng.integers(0, 7, size=(n, NUM_KINDS))
        bars[:, rng.random(NUM_KINDS) < 0.3] = 0          # absent kinds too
        new, old = round_breakdown(bars, rulings), O.round_breakdown(bars, rulings)
        assert list(new) == list(old)
        for k in old:
            assert new[k].dtype == np.int64 and new[k].tolist() == old[k].tolist(), k
        assert round_points(bars, rulings).tolist() == O.round_points(bars, rulings).tolist()
        assert round_points(bars.astype(np.uint8), rulings).tolist() == O.round_points(bars, rulings).tolist()
        counts = bars[:, TORTILLA].tolist()
        assert ham_points(counts, rulings).tolist() == O.ham_points(counts, rulings).tolist()
        assert pepper_points(counts, rulings).tolist() == O.pepper_points(counts, rulings).tolist()
        assert churro_points(counts, rulings).tolist() == O.churro_points(counts, rulings).tolist()
        scores = rng.integers(-5, 5, size=n).tolist()
        assert winning_seats(scores, counts, rulings) == O.winning_seats(scores, counts, rulings)
        t, c = int(rng.integers(0, 12)), int(rng.integers(0, 12))
        assert tortilla_points(t, rulings) == O.tortilla_points(t, rulings)
        assert croqueta_points(c, rulings) == O.croqueta_points(c, rulings)
        assert prawn_points(t, c, rulings) == O.prawn_points(t, c, rulings)
        assert type(tortilla_points(t, rulings)) is int and type(winning_seats(scores, counts, rulings)[0]) is int


def test_winners_of_numbers_no_game_reaches_are_the_oracles():
    # scores past int32 and churros past 255 take the kernel's int64 path: the same winners
    for scores, churros in (([2 ** 40, 2 ** 40, 1], [300, 301, 0]), ([-2 ** 33, 5], [0, 0]), ([7, 7], [256, 256])):
        assert winning_seats(scores, churros) == O.winning_seats(scores, churros) != ()
