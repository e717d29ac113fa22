"""Kuhn poker's observation (kuhn_env/RULES.md, K4) and global state, one function over a batch.

The observation of a seat is OpenSpiel's ``kuhn_poker`` information-state tensor for two players
(:data:`LAYOUT`, 11 float32 values in {0, 1}): the observer's seat one-hot, its card one-hot, and
one pass/bet one-hot per decision taken. The global state (:data:`STATE_LAYOUT`, PettingZoo's
``state()``, for critics in training) shows both cards.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from hod.core.layout import ObsLayout, Piece

from .engine import MAX_DECISIONS, NUM_CARDS, NUM_PLAYERS, KuhnState, State

OBS_VERSION = 1
LAYOUT = ObsLayout("kuhn", OBS_VERSION, [
    Piece("seat", NUM_PLAYERS, "the observer's seat, one-hot"),
    Piece("card", NUM_CARDS, "the observer's card (J, Q, K), one-hot"),
    Piece("history", 2 * MAX_DECISIONS, "per decision 1-3: its action (pass, bet) one-hot; zeros if not taken"),
])
OBS_SIZE = LAYOUT.size
STATE_VERSION = 1
STATE_LAYOUT = ObsLayout("kuhn_state", STATE_VERSION, [
    Piece("cards", NUM_PLAYERS * NUM_CARDS, "each seat's card (J, Q, K), one-hot, seat 0 first"),
    Piece("history", 2 * MAX_DECISIONS, "per decision 1-3: its action (pass, bet) one-hot; zeros if not taken"),
])
#: Upper bound of every value of the observation and of the global state.
OBS_HIGH = 1.0
STATE_HIGH = np.ones(STATE_LAYOUT.size, np.float32)
_HIST = LAYOUT.offsets["history"].start
_ONE = np.zeros(1, np.intp)


def _history_table() -> np.ndarray:
    """float32 (27, 6): the history piece of every history, indexed by :func:`_history_code`."""
    table = np.zeros((3 ** MAX_DECISIONS, 2 * MAX_DECISIONS), np.float32)
    for code in range(3 ** MAX_DECISIONS):
        for t in range(MAX_DECISIONS):
            a = code // 3 ** t % 3 - 1            # -1: not taken; else the action
            if a >= 0:
                table[code, 2 * t + a] = 1.0
    return table


_HISTORY = _history_table()
_POWERS = 3 ** np.arange(MAX_DECISIONS)
_SEAT = np.eye(NUM_PLAYERS, dtype=np.float32)
_CARD = np.eye(NUM_CARDS, dtype=np.float32)


def _history_code(history: np.ndarray) -> np.ndarray:
    """intp (G,): each history (int8 (G, 3), -1 after the last action) as the base-3 number of
    its actions plus one (0: not taken)."""
    return (history.astype(np.intp) + 1) @ _POWERS


def encode_batch(rec: KuhnState, g: np.ndarray, seats: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Write the observation of seat ``seats[:, j]`` (intp (G, S)) of each game ``g`` (intp (G,))
    into ``out[:, j]`` (float32 (G, S, 11), overwritten); returns ``out``. K4: the observer's
    seat, its card, the actions taken (the same for every seat)."""
    out[:, :, :NUM_PLAYERS] = _SEAT[seats]
    out[:, :, NUM_PLAYERS:_HIST] = _CARD[np.take_along_axis(rec.cards[g], seats, axis=1)]
    out[:, :, _HIST:] = _HISTORY[_history_code(rec.history[g])][:, None, :]
    return out


def encode(state: State, seat: int) -> np.ndarray:
    """float32 (11,): the observation of ``seat`` (:data:`LAYOUT`)."""
    out = np.empty((1, 1, OBS_SIZE), np.float32)
    return encode_batch(state.record, _ONE, np.array([[seat]], np.intp), out)[0, 0]


def encode_all(state: State) -> np.ndarray:
    """float32 (2, 11): the observation of each seat, seat 0 first."""
    out = np.empty((1, NUM_PLAYERS, OBS_SIZE), np.float32)
    return encode_batch(state.record, _ONE, np.arange(NUM_PLAYERS, dtype=np.intp)[None, :], out)[0]


def encode_state(state: State) -> np.ndarray:
    """float32 (12,): the global state (:data:`STATE_LAYOUT`): both cards and the actions taken."""
    out = np.zeros(STATE_LAYOUT.size, np.float32)
    for seat, c in enumerate(state.cards):
        out[seat * NUM_CARDS + c] = 1.0
    for t, a in enumerate(state.history):
        out[NUM_PLAYERS * NUM_CARDS + 2 * t + a] = 1.0
    return out


class ObsView(NamedTuple):
    """An observation decoded: the observer's ``seat``, its ``card`` id and the ``history`` of
    actions taken (a tuple of action ids)."""

    seat: int
    card: int
    history: tuple


def decode(obs: np.ndarray) -> ObsView:
    """The :class:`ObsView` of an observation (float32 (11,), :data:`LAYOUT`)."""
    o = np.asarray(obs)
    h = o[_HIST:_HIST + 2 * MAX_DECISIONS].reshape(MAX_DECISIONS, 2)
    taken = h.sum(axis=1) > 0
    return ObsView(int(np.argmax(o[:NUM_PLAYERS])), int(np.argmax(o[NUM_PLAYERS:NUM_PLAYERS + NUM_CARDS])),
                   tuple(int(x) for x in np.argmax(h[taken], axis=1)))
