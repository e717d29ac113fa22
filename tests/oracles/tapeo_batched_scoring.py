"""Tapeo scoring for a batch of games: the rules of :mod:`tapeo_env.rules.scoring`, vectorised.

Every function takes counts with a leading batch axis, ``(G, n)`` per seat or ``(G, n, K)`` bars,
and returns ``int32`` points of shape ``(G, n)`` (or a bool mask / float64 rewards). The numbers
and rulings are read from a :class:`tapeo_env.rules.scoring.Rulings` (one source of truth), and every
split of a prize among tied seats goes through the scalar oracle's ``split_points`` (T2, ``tests/oracles/tapeo_scalar.py``).
The single-game functions remain the reference: ``tests/games/test_tapeo_batched.py`` plays thousands of
games through both and requires identical scores.
"""
from __future__ import annotations

import numpy as np


from tapeo_env.rules.cards import BREAD, CROQUETA, HAM_SLICES, PEPPER, PRAWNS, TORTILLA
from oracles.tapeo_scalar import split_points
from tapeo_env.rules.scoring import DEFAULT_RULINGS, Rulings

_I = np.int32


def ham_points_batch(slices: np.ndarray, rulings: Rulings = DEFAULT_RULINGS) -> np.ndarray:
    """Ham majorities (T2, T3) of G rounds at once.

    Args:
        slices: int (G, n), ham slices on each seat's bar.

    Returns:
        int32 (G, n): the most positive slices share ``ham_first`` (rounded down); with a lone
        leader the next-highest positive count shares ``ham_second``; no ham, no points.
    """
    s = slices.astype(_I)
    top = s.max(axis=1, keepdims=True)
    leaders = (s == top) & (top > 0)
    k = leaders.sum(axis=1, keepdims=True, dtype=_I)
    out = np.where(leaders, split_points(rulings.ham_first, np.maximum(k, 1)), 0).astype(_I)
    rest = np.where((s > 0) & (s < top), s, 0)
    second = rest.max(axis=1, keepdims=True)
    runners = (s == second) & (second > 0) & (k == 1)
    m = runners.sum(axis=1, keepdims=True, dtype=_I)
    out += np.where(runners, split_points(rulings.ham_second, np.maximum(m, 1)), 0).astype(_I)
    return out


def pepper_points_batch(peppers: np.ndarray, rulings: Rulings = DEFAULT_RULINGS) -> np.ndarray:
    """Padrón peppers (T5) of G rounds: ``pepper`` each; every seat at the table's maximum loses
    ``hot_pepper_penalty`` when that maximum is at least ``hot_pepper_min``. int32 (G, n)."""
    p = peppers.astype(_I)
    out = rulings.pepper * p
    top = p.max(axis=1, keepdims=True)
    out -= rulings.hot_pepper_penalty * ((p == top) & (top >= rulings.hot_pepper_min))
    return out


def round_points_batch(bars: np.ndarray, rulings: Rulings = DEFAULT_RULINGS) -> np.ndarray:
    """Round score of each seat of G games (tapeo.txt 'How each tapa scores', T2-T5).

    Args:
        bars: int (G, n, NUM_KINDS), the bars at the end of the round.

    Returns:
        int32 (G, n): tortilla pairs + croqueta table + ham majorities + prawns with bread dips
        (T4) + peppers (T5). Churros and Freeloader cards score nothing here.
    """
    b = bars.astype(_I)
    croq = np.asarray(rulings.croqueta_table, _I)
    pts = rulings.tortilla_pair * (b[..., TORTILLA] // 2)
    pts += croq[np.minimum(b[..., CROQUETA], len(croq) - 1)]
    prawns = b[..., PRAWNS]
    pts += rulings.prawn * prawns + rulings.bread_dip * np.minimum(prawns, b[..., BREAD])
    pts += ham_points_batch(b @ HAM_SLICES.astype(_I), rulings)
    pts += pepper_points_batch(b[..., PEPPER], rulings)
    return pts


def churro_points_batch(churros: np.ndarray, rulings: Rulings = DEFAULT_RULINGS) -> np.ndarray:
    """End-of-game churros (T9) of G games: the most share ``churro_most``, the fewest share the
    loss of ``churro_fewest`` except with 2 players (unless ``two_player_fewest_loses``).
    int32 (G, n)."""
    c = churros.astype(_I)
    n = c.shape[1]
    most = c == c.max(axis=1, keepdims=True)
    out = np.where(most, split_points(rulings.churro_most, most.sum(axis=1, keepdims=True, dtype=_I)), 0).astype(_I)
    if n > 2 or rulings.two_player_fewest_loses:
        fewest = c == c.min(axis=1, keepdims=True)
        out -= np.where(fewest, split_points(rulings.churro_fewest, fewest.sum(axis=1, keepdims=True, dtype=_I)),
                        0).astype(_I)
    return out


def winning_seats_batch(scores: np.ndarray, churros: np.ndarray, rulings: Rulings = DEFAULT_RULINGS) -> np.ndarray:
    """T10 for G games: bool (G, n), True for the seats with the most points and, among them when
    ``tie_break_by_churros``, the most churros kept; a remaining tie is a shared win."""
    best = scores == scores.max(axis=1, keepdims=True)
    if rulings.tie_break_by_churros:
        cb = np.where(best, churros.astype(_I), np.iinfo(_I).min)
        best &= cb == cb.max(axis=1, keepdims=True)
    return best
