"""Tapeo's global state (PettingZoo's ``state()``): the whole position, every hidden count
included, as one flat float32 vector (:data:`STATE_LAYOUT`, version :data:`STATE_VERSION`), for
critics that see everything during training (centralized training, decentralized execution:
MAPPO and the like). A policy that plays must read its seat's observation
(:mod:`tapeo_env.rules.observation`) instead: this vector holds what no seat knows.

Seat-absolute (seat 0 first, then seat 1, ...; seats beyond the player count are zero padding up
to 6, so the size does not depend on the player count). What is encoded is everything of the
engine's :class:`~tapeo_env.rules.engine.State` that decides how the game goes on from now
(tapeo.txt 'The hand and the bar', 'Each pick', 'End'; RULINGS T1-T10): every hand by the seat
holding it, every bar of this round, the churros kept from finished rounds (T8), the points of
finished rounds, the round and the pick, and the tapas of this round's deck that were not dealt.
Left out: the later rounds' deals (drawn from the game's seed: chance, not yet a position) and, in
the AEC form, the picks buffered during the current pick (revealed together at its end, T3: the
state is the position every seat picks from, the same in the AEC and Parallel forms).

Counts of a kind are divided by that kind's count in the deck, churros by 30 and scores by 100
as in the observation, so every entry lies in ``[0, STATE_HIGH]`` (1, except the scores: 2).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from hod.core.layout import ObsLayout, Piece

from .cards import MAX_HAND_SIZE, MAX_PLAYERS, MIN_PLAYERS, NUM_KINDS
from .observation import SCORE_HIGH, SCORE_SCALE, _inv_deck

if TYPE_CHECKING:
    from .engine import State

#: Version of the global-state layout; bump it whenever a piece changes.
STATE_VERSION = 1
#: Divisor of the churros pieces (as the observation's: 3 rounds x 10 churros of the deck).
CHURRO_SCALE = 30.0
_K, _S = NUM_KINDS, MAX_PLAYERS

#: The global-state layout (name ``tapeo_state``).
STATE_LAYOUT = ObsLayout("tapeo_state", STATE_VERSION, [
    Piece("num_players", MAX_PLAYERS - MIN_PLAYERS + 1, "one-hot player count (2, 3, 4, 5, 6)"),
    Piece("round", 3, "one-hot round (1, 2, 3); all 0 once the game is over"),
    Piece("game_over", 1, "1 once the last round is scored"),
    Piece("pick", 1, "tapas already revealed from each hand this round", f"/ {MAX_HAND_SIZE - 1}"),
    Piece("hand_size", 1, "tapas in each hand now", f"/ {MAX_HAND_SIZE}"),
    Piece("hands", _S * _K, "hand each seat holds now, 6 seats x 10 kinds, seat 0 first (hidden)",
          "/ deck count of the kind"),
    Piece("bars", _S * _K, "bars this round, 6 seats x 10 kinds, seat 0 first", "/ deck count of the kind"),
    Piece("churros_kept", _S, "churros kept from finished rounds (T8), seat 0 first", f"/ {CHURRO_SCALE:g}"),
    Piece("scores", _S, "points of finished rounds, seat 0 first", f"/ {SCORE_SCALE:g} (< {SCORE_HIGH:g})"),
    Piece("undealt", _K, "tapas of this round's deck not dealt (hidden)", "/ deck count of the kind"),
])
#: Length of the global-state vector.
STATE_SIZE = STATE_LAYOUT.size
_SL = STATE_LAYOUT.offsets
_HIGH = np.ones(STATE_SIZE, np.float32)
_HIGH[_SL["scores"]] = SCORE_HIGH
_HIGH.setflags(write=False)
#: Upper bounds of each entry (float32 (STATE_SIZE,)); every lower bound is 0.
STATE_HIGH = _HIGH


def encode_state(state: "State") -> np.ndarray:
    """The global state of ``state`` (the layout :data:`STATE_LAYOUT`), read from the engine
    state's public attributes (``hands``, ``bars``, ``churros_kept``, ``undealt``, ``round``,
    ``pick``, ``scores_so_far()``, ``cards_in_hand``, ``terminal``, ``config``).

    Args:
        state: the engine state (:class:`tapeo_env.rules.engine.State`), n = its player count.

    Returns:
        float32 array of shape ``(STATE_SIZE,)`` (a fresh array), entries in ``[0, STATE_HIGH]``;
        each count ``c`` of a kind with ``d`` tapas in the deck is ``c * (1 / d)`` computed in
        float64 and rounded once to float32 (0 for a kind the deck lacks).
    """
    cfg = state.config
    n = cfg.num_players
    inv = _inv_deck(cfg.deck)   # 1 / deck count per kind, the observation's
    out = np.zeros(STATE_SIZE, np.float32)
    out[_NUM_PLAYERS + n - MIN_PLAYERS] = 1.0
    if state.terminal:
        out[_GAME_OVER] = 1.0
    else:
        out[_ROUND + state.round] = 1.0
    out[_PICK] = state.pick / (MAX_HAND_SIZE - 1)
    out[_HAND_SIZE] = state.cards_in_hand / MAX_HAND_SIZE
    out[_HANDS:_HANDS + n * _K] = (state.hands * inv).ravel()      # uint8 * float64: float64
    out[_BARS:_BARS + n * _K] = (state.bars * inv).ravel()
    out[_CHURROS:_CHURROS + n] = state.churros_kept / CHURRO_SCALE
    out[_SCORES:_SCORES + n] = state.scores_so_far() / SCORE_SCALE
    out[_UNDEALT:_UNDEALT + _K] = state.undealt * inv
    return out


_NUM_PLAYERS, _ROUND, _GAME_OVER, _PICK, _HAND_SIZE, _HANDS, _BARS, _CHURROS, _SCORES, _UNDEALT = (
    _SL[name].start for name in ("num_players", "round", "game_over", "pick", "hand_size", "hands", "bars",
                                 "churros_kept", "scores", "undealt"))
