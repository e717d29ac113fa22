"""Tapeo's chance events, for luck-corrected evaluation (:mod:`hod.evaluation.luck`), and a
cheap value of a position that needs no training.

Chance in Tapeo is the deal of each round (tapeo.txt 'The hand and the bar': the whole deck is
reshuffled every round; RULINGS T1, T8): event ``r`` (0-based) is round ``r``'s deal, made by
:func:`tapeo_env.rules.engine.new_game` (round 0) or at the end of round ``r - 1``
(:func:`tapeo_env.rules.engine.apply_actions`). A round's deal does not depend on the play before
it (the whole deck is dealt from again), so "the same chance event dealt again" is the engine's
own deal, :func:`tapeo_env.rules.engine._deal`, run on a copy whose seed is another one.

:data:`HOOK` is what the declaration names (``GameInfo.chance_hook``); it has ``count``,
``redeal`` and ``value`` (the protocol :class:`hod.evaluation.luck.ChanceHook`).
"""
from __future__ import annotations

import numpy as np

from hod.core.deal import check_seed
from hod.core.errors import ConfigError

from . import engine
from .engine import State
from .scoring import round_points

#: Temperature (points) of the win-share softmax of :func:`heuristic_value`.
WIN_TEMPERATURE = 8.0


def chance_count(state: State) -> int:
    """Chance events that have happened in ``state``'s game: the deals so far, ``round + 1``
    (at most ``num_rounds`` once the game is over: no deal follows the last round)."""
    return min(state.round + 1, state.config.num_rounds)


def redeal(state: State, seed: int) -> State:
    """A copy of ``state`` in which its latest chance event (the deal of round ``state.round``)
    is dealt again from game seed ``seed``, by the engine's own deal (:func:`engine._deal`,
    stream = the round); the scores and churros kept before it are unchanged. The copy's seed
    is ``seed`` (so its later rounds differ too: they are chance, not position).

    Args:
        state: a position right after a deal (pick 0, empty bars, not over).
        seed: an int in 0..2**64-1.

    Raises:
        ConfigError: ``state`` is not right after a deal, or a bad seed.
    """
    seed = check_seed(seed)
    if state.terminal or state.pick != 0 or state.bars.any():
        raise ConfigError(f"redeal needs a position right after a deal (pick 0, empty bars, not over); got {state!r}")
    s = state.clone()
    s.dealt.pop()
    s.reveals.pop()
    s.preset_deals = None
    s.record.seed[0] = seed
    engine._deal(s)
    return s


def heuristic_value(state: State) -> np.ndarray:
    """A cheap value of the whole position (no training): float64 (2, n), row 0 the expected
    final points of each seat, row 1 its expected win share (rows sum to 1).

    Points: the finished rounds' points (``scores_so_far``) plus ``1 / n`` times the round points (:func:`tapeo_env.rules.scoring.round_points`, the engines' scoring) of each
    seat's bar plus the hand it holds, as if the round ended with that hand on its bar (the hands
    go round the table, so a seat keeps about one tapa in n of those it holds). Win
    share: softmax of the points over :data:`WIN_TEMPERATURE`. Any function of the state keeps
    the luck correction unbiased; this one is only meant to follow the deal's value.
    """
    n = state.config.num_players
    pts = state.scores_so_far().astype(np.float64)
    if not state.terminal:
        held = state.bars.astype(np.int64) + state.hands.astype(np.int64)
        pts = pts + round_points(held, state.config.rulings) / n
    z = (pts - pts.max()) / WIN_TEMPERATURE
    w = np.exp(z)
    out = np.empty((2, n), np.float64)
    out[0], out[1] = pts, w / w.sum()
    return out


class TapeoChance:
    """Tapeo's chance hook (:class:`hod.evaluation.luck.ChanceHook`): :func:`chance_count`,
    :func:`redeal`, :func:`heuristic_value` (named ``"tapeo-heuristic-v1"``)."""

    value_name = "tapeo-heuristic-v1"
    count = staticmethod(chance_count)
    redeal = staticmethod(redeal)
    value = staticmethod(heuristic_value)


#: The hook the declaration names (``tapeo_env.rules.chance:HOOK``).
HOOK = TapeoChance()
