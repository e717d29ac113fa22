"""Tapeo scoring: the numbers (:class:`Rulings`) and each scoring rule read as its own function
(tapeo.txt 'How each tapa scores', 'End'; RULINGS T2-T5, T9, T10), every one computed by the
compiled kernels (:mod:`tapeo_env.rules.kernels`: :func:`~tapeo_env.rules.kernels.round_points`,
:func:`~tapeo_env.rules.kernels.churro_points`, :func:`~tapeo_env.rules.kernels.winning_seats`),
the one implementation of the rules the engines score with.

Every number and ruling is a field of the frozen :class:`Rulings` (defaults = the published rules
and RULINGS.md), so a user can see and change it. A round rule alone is the round points with every
other rule's numbers set to 0 (:data:`RULE_NUMBERS`): so :func:`round_breakdown`'s rows always add
up to :func:`round_points`, and the per-rule helpers the bots and apps use
(:func:`tortilla_points`, :func:`ham_points`, ...) are views of the same kernel. Functions take
per-seat counts (plain ints or int arrays) and return whole points (Python ints, or int64 arrays of
shape ``(n,)``).

The scoring as it was before (one numpy function per rule) is kept as the executable
specification in ``tests/oracles/tapeo_scalar.py``, checked against these by
``tests/games/test_tapeo_scoring.py``.
"""
from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Sequence

import numpy as np

from .cards import BREAD, CROQUETA, HAM1, NUM_KINDS, PEPPER, PRAWNS, TORTILLA


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

#: Names of the round scoring rules, in the order of :func:`round_breakdown`'s rows.
ROUND_RULES = ("tortilla", "croqueta", "ham", "prawns", "pepper")
#: The :class:`Rulings` numbers of each round rule, in :data:`ROUND_RULES` order (the croqueta
#: rule's is ``croqueta_table``): a rule alone is the round points with every other rule's
#: numbers set to 0.
RULE_NUMBERS: tuple[tuple[str, ...], ...] = (
    ("tortilla_pair",), ("croqueta_table",), ("ham_first", "ham_second"), ("prawn", "bread_dip"),
    ("pepper", "hot_pepper_min", "hot_pepper_penalty"))
_T, _C, _H, _P, _PE = range(len(ROUND_RULES))
_NUMBERS: dict[int, tuple] = {}


def _numbers(rulings: Rulings) -> tuple:
    """The kernels' arrays of ``rulings`` (:func:`tapeo_env.rules.kernels.rulings_array`), those
    of each round rule alone (int64 (rules, 12), (rules, L)) and the memo of :func:`_one_seat`,
    cached."""
    hit = _NUMBERS.get(id(rulings))
    if hit is None or hit[0] is not rulings:
        if len(_NUMBERS) > 64:
            _NUMBERS.clear()
        rul, croq = kernels.rulings_array(rulings)
        zero = {f.name: 0 for f in fields(Rulings) if f.name != "croqueta_table"}
        alone = [kernels.rulings_array(replace(rulings, **{k: v for k, v in zero.items() if k not in names},
                                               croqueta_table=rulings.croqueta_table if "croqueta_table" in names
                                               else (0,) * len(rulings.croqueta_table)))
                 for names in RULE_NUMBERS]
        hit = _NUMBERS[id(rulings)] = (rulings, rul, croq, np.stack([a[0] for a in alone]),
                                       np.stack([a[1] for a in alone]), {})
    return hit[1:]


def _rule_rows(bars: np.ndarray, rulings: Rulings) -> np.ndarray:
    """int64 (rules, n): the points of each round rule alone (:data:`ROUND_RULES` order) for the
    bars int (n, K) (:func:`tapeo_env.rules.kernels.rule_points`)."""
    bars = np.ascontiguousarray(bars, np.int64)
    ruls, croqs = _numbers(rulings)[2:4]
    out = np.empty((len(ROUND_RULES), bars.shape[0]), np.int64)
    kernels.rule_points(bars, ruls, croqs, out)
    return out


def _one_seat(rulings: Rulings, rule: int, counts: tuple) -> int:
    """Points of rule ``rule`` for one seat whose bar holds ``counts`` (``(kind, count)`` pairs),
    memoised per rulings (the bots ask the same few counts again and again)."""
    memo = _numbers(rulings)[4]
    key = (rule, counts)
    pts = memo.get(key)
    if pts is None:
        bars = np.zeros((1, NUM_KINDS), np.int64)
        for k, c in counts:
            bars[0, k] = c
        if len(memo) > 4096:
            memo.clear()
        pts = memo[key] = int(_rule_rows(bars, rulings)[rule, 0])
    return pts


def _column(values: Sequence[int], kind: int) -> np.ndarray:
    """int64 (n, K) bars holding only ``values[i]`` of ``kind`` at seat i."""
    v = np.asarray(values, dtype=np.int64).reshape(-1)
    bars = np.zeros((v.size, NUM_KINDS), np.int64)
    bars[:, kind] = v
    return bars


def tortilla_points(tortillas: int, rulings: Rulings = DEFAULT_RULINGS) -> int:
    """Tortilla: ``tortilla_pair`` per complete pair (3 tortillas -> 1 pair -> 5)."""
    return _one_seat(rulings, _T, ((TORTILLA, int(tortillas)),))


def croqueta_points(croquetas: int, rulings: Rulings = DEFAULT_RULINGS) -> int:
    """Croquetas: 1, 3, 6, 10, 15 for one to five; more than five still 15."""
    return _one_seat(rulings, _C, ((CROQUETA, int(croquetas)),))


def prawn_points(prawns: int, breads: int, rulings: Rulings = DEFAULT_RULINGS) -> int:
    """T4: ``3*P + 3*min(P, B)``; bread with no prawns to dip scores nothing."""
    return _one_seat(rulings, _P, ((PRAWNS, int(prawns)), (BREAD, int(breads))))


def ham_points(slices: Sequence[int], rulings: Rulings = DEFAULT_RULINGS) -> np.ndarray:
    """Ham majorities for one round (T2, T3).

    Args:
        slices: total ham slices on each seat's bar, length n.

    Returns:
        int64 (n,): the most slices take ``ham_first`` (split, rounded down, among tied leaders,
        and then nobody is runner-up); with a lone leader, the next-highest positive count takes
        ``ham_second`` (split among ties). Seats without ham never score (T3). (The slices as
        one-slice plates, :data:`~tapeo_env.rules.cards.HAM1`.)
    """
    return _rule_rows(_column(slices, HAM1), rulings)[_H]


def pepper_points(peppers: Sequence[int], rulings: Rulings = DEFAULT_RULINGS) -> np.ndarray:
    """Padrón peppers (T5): 2 each; every seat at the table's maximum, if that maximum is at
    least 3, loses 6. Returns int64 (n,)."""
    return _rule_rows(_column(peppers, PEPPER), rulings)[_PE]


def churro_points(churros: Sequence[int], rulings: Rulings = DEFAULT_RULINGS) -> np.ndarray:
    """End-of-game churros (T9): the most gain ``churro_most`` split (T2), the fewest lose
    ``churro_fewest`` split (T2), except with 2 players where nobody loses. All tied: with 3+
    players the two cancel (net 0), with 2 players each gets +3. Returns int64 (n,)
    (:func:`tapeo_env.rules.kernels.churro_points`)."""
    c = np.ascontiguousarray(churros, dtype=np.int64).reshape(-1)
    out = np.zeros(c.size, np.int64)
    kernels.churro_points(c, _numbers(rulings)[0], out)
    return out


def round_breakdown(bars: np.ndarray, rulings: Rulings = DEFAULT_RULINGS) -> dict[str, np.ndarray]:
    """Points of each round rule for each seat (for display: the play apps' round tables).

    Args:
        bars: int (n, NUM_KINDS) counts of the tapas on each bar at the end of the round
            (Freeloader cards and churros included; they score nothing here).

    Returns:
        ``{rule: int64 (n,)}`` for each name in :data:`ROUND_RULES`: the round points with
        every other rule's numbers set to 0 (:data:`RULE_NUMBERS`); they add up to
        :func:`round_points`.
    """
    rows = _rule_rows(bars, rulings)
    return {name: rows[r] for r, name in enumerate(ROUND_RULES)}


def round_points(bars: np.ndarray, rulings: Rulings = DEFAULT_RULINGS) -> np.ndarray:
    """Round score of each seat (int64 (n,)), the engines' own (:func:`tapeo_env.rules.kernels.round_points`):
    the sum of :func:`round_breakdown`. Churros and Freeloader cards score nothing in the round."""
    b = np.ascontiguousarray(bars, np.int64)
    rul, croq = _numbers(rulings)[:2]
    out = np.zeros((1, b.shape[0]), np.int64)
    kernels.rule_points(b, rul[None, :], croq[None, :], out)
    return out[0]


def winning_seats(scores: Sequence[int], churros: Sequence[int], rulings: Rulings = DEFAULT_RULINGS) -> tuple[int, ...]:
    """T10: seats with the most points; among them, those with the most churros kept; a tie that
    remains is a shared win. Returns the winning seats, ascending
    (:func:`tapeo_env.rules.kernels.winning_seats`, through the batched engine's
    :func:`~tapeo_env.rules.kernels.winners_batch` when the scores fit int32 and the churros
    0..255, as a game's do)."""
    s = np.asarray(scores).reshape(1, -1)
    c = np.asarray(churros).reshape(1, -1)
    rul = _numbers(rulings)[0]
    out = np.zeros(s.shape, bool)
    if (s.size and np.issubdtype(s.dtype, np.integer) and np.issubdtype(c.dtype, np.integer)
            and _I32.min <= s.min() and s.max() <= _I32.max and 0 <= c.min() and c.max() <= 255):
        kernels.winners_batch(s.astype(np.int32), c.astype(np.uint8), rul, out)
    else:
        kernels.winning_seats(np.ascontiguousarray(s[0], np.int64), np.ascontiguousarray(c[0], np.int64), rul, out[0])
    return tuple(np.flatnonzero(out[0]).tolist())


_I32 = np.iinfo(np.int32)


# The kernels import Rulings from this module: imported last, so that either may be imported first.
from . import kernels  # noqa: E402
