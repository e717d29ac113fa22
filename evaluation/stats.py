"""Statistics of a tournament: win rates with Wilson intervals, means with t intervals,
OpenSkill (Plackett-Luce) ratings and head-to-head results.

Inputs are per-game arrays indexed by lineup slot; see docs/tournament.md for the definitions.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from scipy import stats as _sps
from statsmodels.stats.proportion import proportion_confint

CONFIDENCE = 0.95


def wilson_interval(count: float, nobs: int) -> tuple[float, float]:
    """95% Wilson score interval of a proportion ``count / nobs`` (statsmodels).

    ``count`` may be fractional (tied wins are shared). Returns ``(low, high)`` in [0, 1].
    """
    lo, hi = proportion_confint(count, nobs, alpha=1 - CONFIDENCE, method="wilson")
    return float(lo), float(hi)


def t_interval(values: Sequence[float]) -> tuple[float, float, float]:
    """Mean and 95% Student-t interval of independent observations ``values``.

    Returns ``(mean, low, high)``: ``mean +- t_{0.975, m-1} * sd / sqrt(m)`` with the sample sd
    (ddof=1). With one observation the interval is undefined: ``(mean, nan, nan)``.
    """
    x = np.asarray(values, dtype=np.float64)
    m = x.size
    mean = float(x.mean())
    if m < 2:
        return mean, math.nan, math.nan
    half = float(_sps.t.ppf(0.5 + CONFIDENCE / 2, m - 1)) * float(x.std(ddof=1)) / math.sqrt(m)
    return mean, mean - half, mean + half


def deal_means(values: np.ndarray, deals: np.ndarray) -> np.ndarray:
    """Mean of ``values`` (shape (G,)) over the games of each deal (deals numbered 0..D-1).

    The games replaying one deal are not independent, so intervals of means are taken over
    these per-deal means (D independent observations).
    """
    d = int(deals.max()) + 1
    sums = np.bincount(deals, weights=values, minlength=d)
    counts = np.bincount(deals, minlength=d)
    return sums / counts


def margins(points: np.ndarray) -> np.ndarray:
    """Margin of each slot in each game: its points minus the mean points of the others.

    Args:
        points: float array (G, n), n >= 2.
    Returns:
        float64 array (G, n).
    """
    p = np.asarray(points, dtype=np.float64)
    n = p.shape[1]
    return p - (p.sum(axis=1, keepdims=True) - p) / (n - 1)


def finish_keys(points: np.ndarray, win_share: np.ndarray) -> np.ndarray:
    """Order of finish key per slot and game: ``win_share * BIG + points`` (higher is better).

    Winners (win share > 0, whatever tie-break the game applied, e.g. Tapeo T10 churros) come
    first; the others are ordered by points. Equal keys are tied.
    """
    return np.asarray(win_share, np.float64) * 1e9 + np.asarray(points, np.float64)


def ranks_from_keys(keys: Sequence[float]) -> list[int]:
    """Competition ranks (1 = best, ties share the rank) from finish keys (higher is better)."""
    return [1 + sum(1 for other in keys if other > k) for k in keys]


#: Game orders the ratings are averaged over (:func:`openskill_league`: tournaments and the ladder).
RATING_ORDERS = 16

#: OpenSkill's ``tau`` (the skill drift added to every variance before each update) of the
#: ratings: 0, because a bot does not change between the games of a tournament or a ladder. With
#: OpenSkill's default (25/300, for people whose skill moves between games) sigma stops shrinking
#: near 1.5 whatever the games (simulated, two bots, 60% wins: 1.61 after 300 games, 1.49 after
#: 3,000, 1.48 after 30,000; with 0: 1.41, 0.59, 0.27, i.e. as 1/sqrt(games)), so the ladder's
#: labels 6-7 rating points apart could never be told apart, and the last games weighed most.
RATING_TAU = 0.0
#: The rating model in words, as the ladder records it in every ``agents/strength.json`` entry
#: (``rating_model``), so that entries of different models are never compared unknowingly.
RATING_MODEL = f"openskill PlackettLuce, tau {RATING_TAU:g}, averaged over {RATING_ORDERS} game orders"


def openskill_ratings(keys: np.ndarray, orders: int = RATING_ORDERS, seed: int = 0) -> list[tuple[float, float]]:
    """OpenSkill Plackett-Luce rating of each slot of a tournament after all its games, averaged
    over game orders (:func:`openskill_league` with every slot at every game).

    Args:
        keys: finish keys (G, n) from :func:`finish_keys`.
        orders, seed: as :func:`openskill_league`.
    Returns:
        ``[(mu, sigma)]`` per slot.
    Raises:
        ValueError: ``keys`` not a (G, n) array, or ``orders`` < 1.
    """
    keys = np.asarray(keys, np.float64)
    if keys.ndim != 2:
        raise ValueError(f"keys must be a (games, slots) array, got shape {keys.shape}")
    slots = list(range(keys.shape[1]))
    return openskill_league([(slots, row) for row in keys], keys.shape[1], orders, seed)


def head_to_head(keys: np.ndarray) -> np.ndarray:
    """``H[i, j]``: share of games in which slot i finished ahead of slot j (a tie counts 1/2).

    With 2 players ``H[0, 1]`` is slot 0's win rate against slot 1. Diagonal: nan.
    """
    k = np.asarray(keys, np.float64)
    ahead = (k[:, :, None] > k[:, None, :]).mean(axis=0)
    tied = (k[:, :, None] == k[:, None, :]).mean(axis=0)
    h = ahead + 0.5 * tied
    np.fill_diagonal(h, np.nan)
    return h


def openskill_league(games: Sequence[tuple[Sequence[int], Sequence[float]]], num_players: int,
                     orders: int = RATING_ORDERS, seed: int = 0) -> list[tuple[float, float]]:
    """OpenSkill Plackett-Luce ratings of a league: players ``0..num_players-1``, each game one
    update ``model.rate([[p] for p in ids], ranks=...)``, averaged over game orders.

    Every player starts at the model's default (mu 25, sigma 25/3, beta 25/6), with no skill drift
    between games (``tau`` = :data:`RATING_TAU` = 0: sigma shrinks as 1/sqrt(games)); ties share a
    rank. The update
    is online, so one pass depends on the order of the games (the last ones weigh most): over
    1,000 games of two close bots the order alone moved the gap between them by several points,
    and the played order ranked the bot that won 60% below the other. So the games are rated in
    the given order and in ``orders - 1`` seeded shuffles, and each player's mu and sigma are the
    means over the orders.

    Args:
        games: ``(ids, keys)`` per game: the players at the table (distinct) and their finish keys
            (:func:`finish_keys`, higher is better; equal keys are tied).
        num_players: size of the league.
        orders: number of game orders (int >= 1; 1 = the given order only).
        seed: seed of the shuffles.
    Returns:
        ``[(mu, sigma)]`` per player (the model's default for one who never played).
    Raises:
        ValueError: ``orders`` < 1.
    """
    from openskill.models import PlackettLuce

    if isinstance(orders, bool) or not isinstance(orders, (int, np.integer)) or orders < 1:
        raise ValueError(f"orders={orders!r}: legal values are integers >= 1")
    model = PlackettLuce(tau=RATING_TAU)
    games = [(list(ids), ranks_from_keys(list(keys))) for ids, keys in games]
    rng = np.random.default_rng(seed)
    total = np.zeros((num_players, 2))
    for o in range(orders):
        order = range(len(games)) if o == 0 else rng.permutation(len(games))
        ratings = [model.rating(name=f"p{k}") for k in range(num_players)]
        for g in order:
            ids, ranks = games[g]
            teams = model.rate([[ratings[i]] for i in ids], ranks=ranks)
            for i, team in zip(ids, teams):
                ratings[i] = team[0]
        total += [(r.mu, r.sigma) for r in ratings]
    return [(float(mu), float(sigma)) for mu, sigma in total / orders]


def pairwise_scores(win_share: Sequence[float], points: Sequence[float]) -> np.ndarray:
    """``S[i, j]`` of one game: 1 if seat i finished ahead of seat j, 1/2 if tied, 0 if behind
    (diagonal 0). Ahead: a larger win share; between two seats with no share of the win, more
    points. With two players ``S[0, 1]`` is seat 0's win share (ties shared)."""
    w = np.asarray(win_share, np.float64)
    p = np.asarray(points, np.float64)
    key = np.where(w > 0, w * 1e9, p - 1e12)   # winners by share, the others by points, below every winner
    s = (key[:, None] > key[None, :]) + 0.5 * (key[:, None] == key[None, :])
    np.fill_diagonal(s, 0.0)
    return s.astype(np.float64)
