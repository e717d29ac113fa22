"""Reward schemes shared by both games (the ``reward_scheme`` option of every environment).

=============  ==============================================================================
scheme         reward given to each seat at the end of the game
=============  ==============================================================================
``points``     the seat's final score (game points).
``win_loss``   zero-sum: with k winners among n seats (ties share), each winner gets ``+1/k``
               and each loser ``-1/(n-k)``; if every seat is a winner, everyone gets 0.
               Two players: +1 / -1, a tie 0 / 0.
``margin``     zero-sum: the seat's score minus the mean score of the other seats.
=============  ==============================================================================

Who the winners are is decided by each game (Tapeo T10 breaks ties by churros, Ronda Robada R8
shares ties); this module only turns scores and winners into rewards.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from .errors import check_choice

REWARD_SCHEMES = ("points", "win_loss", "margin")


def final_rewards(scores: Sequence[float], winners: Sequence[int], scheme: str) -> np.ndarray:
    """Final reward per seat.

    Args:
        scores: final score per seat, length n.
        winners: seat indices sharing the win (at least one).
        scheme: one of :data:`REWARD_SCHEMES`.

    Returns:
        float64 array of shape (n,).

    Raises:
        ConfigError: unknown scheme.
    """
    check_choice("reward_scheme", scheme, REWARD_SCHEMES)
    n = len(scores)
    s = np.asarray(scores, dtype=np.float64)
    if scheme == "points":
        return s.copy()
    if scheme == "margin":
        if n == 1:
            return np.zeros(1)
        return s - (s.sum() - s) / (n - 1)
    k = len(set(winners))
    out = np.zeros(n)
    if k == n:
        return out
    out[:] = -1.0 / (n - k)
    for w in set(winners):
        out[w] = 1.0 / k
    return out


def win_shares(winners: Sequence[int], n: int) -> np.ndarray:
    """Share of one win credited to each seat: ``1/k`` to each of k tied winners, 0 to the rest.

    This is the quantity tournaments average into a win rate (ties shared). Shape (n,), float64.
    """
    out = np.zeros(n)
    w = set(winners)
    for i in w:
        out[i] = 1.0 / len(w)
    return out


def final_rewards_batch(scores: np.ndarray, winners: np.ndarray, scheme: str) -> np.ndarray:
    """:func:`final_rewards` for G games at once (the same float64 arithmetic, so values are
    bit-identical to the one-game form). Used by the batched engines.

    Args:
        scores: int or float (G, n) final scores.
        winners: bool (G, n), True for the seats sharing the win (at least one per game).
        scheme: one of :data:`REWARD_SCHEMES`.

    Returns:
        float64 (G, n).

    Raises:
        ConfigError: unknown scheme.
    """
    check_choice("reward_scheme", scheme, REWARD_SCHEMES)
    s = np.asarray(scores, dtype=np.float64)
    n = s.shape[1]
    if scheme == "points":
        return s.copy()
    if scheme == "margin":
        if n == 1:
            return np.zeros_like(s)
        return s - (s.sum(axis=1, keepdims=True) - s) / (n - 1)
    w = np.asarray(winners, dtype=bool)
    k = w.sum(axis=1, keepdims=True)
    out = np.where(w, 1.0 / np.maximum(k, 1), -1.0 / np.maximum(n - k, 1))
    out[(k == n)[:, 0]] = 0.0
    return out


def win_shares_batch(winners: np.ndarray) -> np.ndarray:
    """:func:`win_shares` for G games at once: float64 (G, n) from bool winners (G, n)."""
    w = np.asarray(winners, dtype=bool)
    return w / np.maximum(w.sum(axis=1, keepdims=True), 1)
