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

from typing import TYPE_CHECKING, Optional

import numpy as np

from hod.core.layout import ObsLayout, Piece

from .cards import MAX_HAND_SIZE, MAX_PLAYERS, MIN_PLAYERS, NUM_KINDS
from .observation import SCORE_HIGH, SCORE_SCALE, _inv_deck

if TYPE_CHECKING:
    from .batched import BatchedState
    from .engine import Config, State

#: Version of the global-state layout; bump it whenever a piece changes.
STATE_VERSION = 1
#: Divisor of the churros pieces (as the observation's: 3 rounds x 10 churros of the deck).
CHURRO_SCALE = 30.0
_K, _S = NUM_KINDS, MAX_PLAYERS

#: The global-state layout (name ``tapeo_state``).
STATE_LAYOUT = ObsLayout("tapeo_state", STATE_VERSION, [
    Piece("num_players", MAX_PLAYERS - MIN_PLAYERS + 1, "one-hot player count (2, 3, 4, 5, 6)"),
    Piece("round", 3, "one-hot round (1, 2, 3; every later round of a longer game shows as 3, as in the observation); all 0 once the game is over"),
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
    """The global state of ``state`` (the layout :data:`STATE_LAYOUT`): :func:`encode_state_batch`
    of its one-game record (``state.record``, a batch of one), so one position and a batch are
    encoded by the same code.

    Args:
        state: the engine state (:class:`tapeo_env.rules.engine.State`), n = its player count.

    Returns:
        float32 array of shape ``(STATE_SIZE,)`` (a fresh array), entries in ``[0, STATE_HIGH]``
        (the values of :func:`encode_state_batch`).
    """
    return encode_state_batch(state.record, state.config)[0]


def encode_state_batch(record: "BatchedState", config: "Config", games: Optional[np.ndarray] = None,
                       out: Optional[np.ndarray] = None) -> np.ndarray:
    """The global state (the layout :data:`STATE_LAYOUT`) of every game of a batched state record:
    the one definition of the layout, which :func:`encode_state` (one position) and the batched
    engine (:meth:`tapeo_env.rules.batched.BatchedTapeo.global_state`) both call.

    Args:
        record: a :class:`tapeo_env.rules.batched.BatchedState` of B games with ``n =
            config.num_players`` seats (``hands``, ``bars`` uint8 (B, n, K), ``churros_kept``
            uint8 (B, n), ``undealt`` uint8 (B, K), ``round_scores`` int16 (B, R, n), ``round``,
            ``pick`` int8 (B,)).
        config: the games' :class:`tapeo_env.rules.engine.Config` (deck, hand size, rounds).
        games: int indices (G,) of the games to encode, or None (all B, G = B).
        out: None, or a float32 (G, STATE_SIZE) buffer to write into (every entry is written).

    Returns:
        float32 (G, STATE_SIZE), entries in ``[0, STATE_HIGH]``; each count ``c`` of a kind with
        ``d`` tapas in the deck is ``c * (1 / d)`` computed in float64 and rounded once to float32
        (0 for a kind the deck lacks); ``pick / 9``, ``hand size / 10``, ``churros / 30`` and
        ``scores / 100`` likewise (tapeo.txt 'The hand and the bar', 'End'; RULINGS T1-T10).
    """
    n = config.num_players
    sel = slice(None) if games is None else np.asarray(games, np.intp)
    rnd = record.round[sel].astype(np.int64)
    pick = record.pick[sel].astype(np.int64)
    G = rnd.shape[0]
    if out is None:
        out = np.zeros((G, STATE_SIZE), np.float32)
    else:
        out[...] = 0.0
    inv = _inv_deck(config.deck)   # 1 / deck count per kind, the observation's
    over = rnd >= config.num_rounds
    out[:, _NUM_PLAYERS + n - MIN_PLAYERS] = 1.0
    out[over, _GAME_OVER] = 1.0
    live = np.flatnonzero(~over)
    out[live, _ROUND + np.minimum(rnd[live], 2)] = 1.0   # rounds past the third show as the third
    out[:, _PICK] = pick / (MAX_HAND_SIZE - 1)
    out[:, _HAND_SIZE] = np.where(over, 0, config.hand_size - pick) / MAX_HAND_SIZE
    out[:, _HANDS:_HANDS + n * _K] = (record.hands[sel] * inv).reshape(G, n * _K)   # uint8 * float64: float64
    out[:, _BARS:_BARS + n * _K] = (record.bars[sel] * inv).reshape(G, n * _K)
    out[:, _CHURROS:_CHURROS + n] = record.churros_kept[sel] / CHURRO_SCALE
    out[:, _SCORES:_SCORES + n] = record.round_scores[sel].sum(axis=1, dtype=np.int64) / SCORE_SCALE
    out[:, _UNDEALT:_UNDEALT + _K] = record.undealt[sel] * inv
    return out


_NUM_PLAYERS, _ROUND, _GAME_OVER, _PICK, _HAND_SIZE, _HANDS, _BARS, _CHURROS, _SCORES, _UNDEALT = (
    _SL[name].start for name in ("num_players", "round", "game_over", "pick", "hand_size", "hands", "bars",
                                 "churros_kept", "scores", "undealt"))
