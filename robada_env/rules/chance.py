"""Ronda Robada's chance events, for luck-corrected evaluation (:mod:`hod.evaluation.luck`), and a
cheap value of a position that needs no training.

Chance in Ronda Robada is the shuffle (ronda_robada.txt 'Setup'; RULINGS R6, R9). It is revealed
in deals: event 0 is the first deal (:func:`robada_env.rules.engine.new_game`: 4 loose cards and 3
to each seat), event ``j >= 1`` the ``j``-th re-deal (when every hand is empty, 3 more cards to
each seat from the deck). Before a re-deal no seat has seen the cards still in the deck, so the
cards dealt and the deck left after it are a uniformly random order of the cards that were in
the deck: "the same chance event dealt again" is that pool shuffled with another seed
(:func:`hod.core.deal.shuffled`, the engine's shuffle) and written back into the same hand slots
and deck places by the engine's own kernel (:func:`robada_env.rules.kernels.resample_one`, over
every seat); event 0 dealt again is :func:`~robada_env.rules.engine.new_game` with that seed.

:data:`HOOK` is what the declaration names (``GameInfo.chance_hook``); it has ``count``,
``redeal`` and ``value`` (the protocol :class:`hod.evaluation.luck.ChanceHook`).
"""
from __future__ import annotations

import numpy as np

from hod.core.deal import check_seed, shuffled_one
from hod.core.errors import ConfigError

from . import engine, kernels
from .cards import CARD_POINTS, DECK_SIZE
from .engine import CARDS_PER_DEAL, LOOSE_AT_START, State

#: Weight of the points of the cards in hand in :func:`heuristic_value` (a card played may start
#: a run or be dropped for another to take; any weight keeps the correction unbiased).
HAND_WEIGHT = 0.5
#: Temperature (points) of the win-share softmax of :func:`heuristic_value`.
WIN_TEMPERATURE = 10.0


def chance_count(state: State) -> int:
    """Chance events that have happened in ``state``'s game: the deals so far (the first deal
    and the re-deals), read from the cards left in the deck: ``(36 - deck) // (3 n)``."""
    return (DECK_SIZE - LOOSE_AT_START - len(state.deck)) // (CARDS_PER_DEAL * state.n)


def redeal(state: State, seed: int) -> State:
    """A copy of ``state`` in which its latest chance event is dealt again from game seed
    ``seed``: the first deal by :func:`engine.new_game` (same config), a re-deal by shuffling
    the pool of every hand's cards and the deck (:func:`hod.core.deal.shuffled_one` of the pool's
    positions, stream 0) into the same places (:func:`robada_env.rules.kernels.resample_one`).
    Piles, loose cards and the history are unchanged.

    Args:
        state: a position right after a deal (every seat holds 3 cards, no run, not over).
        seed: an int in 0..2**64-1.

    Raises:
        ConfigError: ``state`` is not right after a deal, or a bad seed.
    """
    seed = check_seed(seed)
    n = state.n
    if state.terminal or state.run or any(len(h) != CARDS_PER_DEAL for h in state.hands):
        raise ConfigError(f"redeal needs a position right after a deal (3 cards in every hand, no run, not over); "
                          f"got {state!r}")
    if chance_count(state) == 1:
        return engine.new_game(state.config, seed=seed)
    s = state.clone()
    s.deck_order = None
    t = s._t
    pool = CARDS_PER_DEAL * n + len(s.deck)
    perm = np.array(shuffled_one(list(range(pool)), seed), np.int64)
    kernels.resample_one(s._b8, s._b16, s._bb, t.lay, -1, perm, t.rules, s._mask, t.pool)
    s._legal = None
    return s


def heuristic_value(state: State) -> np.ndarray:
    """A cheap value of the whole position (no training): float64 (2, n), row 0 the expected
    final points of each seat, row 1 its expected win share (rows sum to 1).

    Points: the points in each seat's pile (R8, the score so far) plus :data:`HAND_WEIGHT` times
    the points of the cards in its hand (:data:`robada_env.rules.cards.CARD_POINTS`, R1). Win
    share: softmax of the points over :data:`WIN_TEMPERATURE`. Any function of the state keeps
    the luck correction unbiased; this one is only meant to follow the deal's value.
    """
    pts = np.array(state.points, np.float64)
    if not state.terminal:
        pts += HAND_WEIGHT * np.array([sum(CARD_POINTS[c] for c in h) for h in state.hands], np.float64)
    z = (pts - pts.max()) / WIN_TEMPERATURE
    w = np.exp(z)
    out = np.empty((2, state.n), np.float64)
    out[0], out[1] = pts, w / w.sum()
    return out


class RobadaChance:
    """Ronda Robada's chance hook (:class:`hod.evaluation.luck.ChanceHook`): :func:`chance_count`,
    :func:`redeal`, :func:`heuristic_value` (named ``"robada-heuristic-v1"``)."""

    value_name = "robada-heuristic-v1"
    count = staticmethod(chance_count)
    redeal = staticmethod(redeal)
    value = staticmethod(heuristic_value)


#: The hook the declaration names (``robada_env.rules.chance:HOOK``).
HOOK = RobadaChance()
