"""Tapeo scoring: every scoring rule as its own small function (tapeo.txt 'How each tapa
scores', 'End'; RULINGS T2-T5, T9, T10).

Every number and ruling is a field of the frozen :class:`Rulings` (defaults = the published
rules and RULINGS.md), so a user can see and change it. Functions take per-seat counts (plain
ints or int arrays) and return whole points (Python ints, or int64 arrays of shape ``(n,)``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .cards import BREAD, CROQUETA, HAM_SLICES, PEPPER, PRAWNS, TORTILLA


@dataclass(frozen=True)
class Rulings:
    """Scoring numbers and rulings (defaults follow tapeo.txt and RULINGS T2-T10).

    Attributes:
        tortilla_pair: points per pair of tortillas; a lone tortilla scores nothing.
        croqueta_table: points for 0, 1, 2, ... croquetas; counts past the end use the last entry
            ("five or more 15").
        ham_first / ham_second: ham majority prizes (T2 split on ties, T3 positive slices only).
        prawn: points per garlic prawns. bread_dip: extra points per bread that dips a prawns (T4).
        pepper: points per pepper. hot_pepper_min: least count for the hot pepper;
            hot_pepper_penalty: points lost by every seat at the table's maximum (T5).
        churro_most / churro_fewest: end-of-game churro prize and penalty (T9, split by T2).
        two_player_fewest_loses: T9 "with 2 players nobody loses anything" (False).
        tie_break_by_churros: T10, a points tie is broken by more churros kept.
    """

    tortilla_pair: int = 5
    croqueta_table: tuple[int, ...] = (0, 1, 3, 6, 10, 15)
    ham_first: int = 6
    ham_second: int = 3
    prawn: int = 3
    bread_dip: int = 3
    pepper: int = 2
    hot_pepper_min: int = 3
    hot_pepper_penalty: int = 6
    churro_most: int = 6
    churro_fewest: int = 6
    two_player_fewest_loses: bool = False
    tie_break_by_churros: bool = True


DEFAULT_RULINGS = Rulings()


def split_points(points: int, ways: int) -> int:
    """T2: points shared by ``ways`` tied players, rounded down to whole points (6 by 4 -> 1)."""
    return points // ways


def tortilla_points(tortillas: int, rulings: Rulings = DEFAULT_RULINGS) -> int:
    """Tortilla: ``tortilla_pair`` per complete pair (3 tortillas -> 1 pair -> 5)."""
    return rulings.tortilla_pair * (int(tortillas) // 2)


def croqueta_points(croquetas: int, rulings: Rulings = DEFAULT_RULINGS) -> int:
    """Croquetas: 1, 3, 6, 10, 15 for one to five; more than five still 15."""
    table = rulings.croqueta_table
    return table[min(int(croquetas), len(table) - 1)]


def prawn_points(prawns: int, breads: int, rulings: Rulings = DEFAULT_RULINGS) -> int:
    """T4: ``3*P + 3*min(P, B)``; bread with no prawns to dip scores nothing."""
    p, b = int(prawns), int(breads)
    return rulings.prawn * p + rulings.bread_dip * min(p, b)


def ham_points(slices: Sequence[int], rulings: Rulings = DEFAULT_RULINGS) -> np.ndarray:
    """Ham majorities for one round (T2, T3).

    Args:
        slices: total ham slices on each seat's bar, length n.

    Returns:
        int64 (n,): the most slices take ``ham_first`` (split, rounded down, among tied leaders,
        and then nobody is runner-up); with a lone leader, the next-highest positive count takes
        ``ham_second`` (split among ties). Seats without ham never score (T3).
    """
    s = np.asarray(slices, dtype=np.int64)
    out = np.zeros(len(s), dtype=np.int64)
    positive = s[s > 0]
    if positive.size == 0:
        return out
    top = positive.max()
    leaders = s == top
    k = int(leaders.sum())
    out[leaders] = split_points(rulings.ham_first, k)
    if k > 1:
        return out
    rest = positive[positive < top]
    if rest.size:
        runners = s == rest.max()
        out[runners] = split_points(rulings.ham_second, int(runners.sum()))
    return out


def pepper_points(peppers: Sequence[int], rulings: Rulings = DEFAULT_RULINGS) -> np.ndarray:
    """Padrón peppers (T5): 2 each; every seat at the table's maximum, if that maximum is at
    least 3, loses 6. Returns int64 (n,)."""
    p = np.asarray(peppers, dtype=np.int64)
    out = rulings.pepper * p
    top = p.max() if p.size else 0
    if top >= rulings.hot_pepper_min:
        out[p == top] -= rulings.hot_pepper_penalty
    return out


def churro_points(churros: Sequence[int], rulings: Rulings = DEFAULT_RULINGS) -> np.ndarray:
    """End-of-game churros (T9): the most gain ``churro_most`` split (T2), the fewest lose
    ``churro_fewest`` split (T2), except with 2 players where nobody loses. All tied: with 3+
    players the two cancel (net 0), with 2 players each gets +3. Returns int64 (n,)."""
    c = np.asarray(churros, dtype=np.int64)
    out = np.zeros(len(c), dtype=np.int64)
    most = c == c.max()
    out[most] += split_points(rulings.churro_most, int(most.sum()))
    if len(c) > 2 or rulings.two_player_fewest_loses:
        fewest = c == c.min()
        out[fewest] -= split_points(rulings.churro_fewest, int(fewest.sum()))
    return out


#: Names of the round scoring rules, in the order of :func:`round_breakdown`'s rows.
ROUND_RULES = ("tortilla", "croqueta", "ham", "prawns", "pepper")


def round_breakdown(bars: np.ndarray, rulings: Rulings = DEFAULT_RULINGS) -> dict[str, np.ndarray]:
    """Points of each round rule for each seat.

    Args:
        bars: int (n, NUM_KINDS) counts of the tapas on each bar at the end of the round
            (Freeloader cards and churros included; they score nothing here).

    Returns:
        ``{rule: int64 (n,)}`` for each name in :data:`ROUND_RULES`.
    """
    bars = np.asarray(bars, dtype=np.int64)
    # per-seat rules on plain Python ints (one tolist() instead of a numpy scalar per seat)
    tortillas, croquetas = bars[:, TORTILLA].tolist(), bars[:, CROQUETA].tolist()
    prawns, breads = bars[:, PRAWNS].tolist(), bars[:, BREAD].tolist()
    return {
        "tortilla": np.array([tortilla_points(t, rulings) for t in tortillas], np.int64),
        "croqueta": np.array([croqueta_points(c, rulings) for c in croquetas], np.int64),
        "ham": ham_points(bars @ HAM_SLICES, rulings),
        "prawns": np.array([prawn_points(p, b, rulings) for p, b in zip(prawns, breads)], np.int64),
        "pepper": pepper_points(bars[:, PEPPER], rulings),
    }


def round_points(bars: np.ndarray, rulings: Rulings = DEFAULT_RULINGS) -> np.ndarray:
    """Round score of each seat: the sum of :func:`round_breakdown` (int64 (n,)). Churros and
    Freeloader cards score nothing in the round."""
    return sum(round_breakdown(bars, rulings).values())


def winning_seats(scores: Sequence[int], churros: Sequence[int], rulings: Rulings = DEFAULT_RULINGS) -> tuple[int, ...]:
    """T10: seats with the most points; among them, those with the most churros kept; a tie that
    remains is a shared win. Returns the winning seats, ascending."""
    s = np.asarray(scores)
    c = np.asarray(churros)
    best = np.flatnonzero(s == s.max())
    if rulings.tie_break_by_churros and best.size > 1:
        cb = c[best]
        best = best[cb == cb.max()]
    return tuple(int(i) for i in best)

