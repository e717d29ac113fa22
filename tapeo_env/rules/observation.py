"""Observation encoder: what one seat legitimately knows, as a flat float32 vector.

The layout (:data:`LAYOUT`, version :data:`OBS_VERSION`) has the same size for every player
count: seats are padded up to 6 and the player count is one-hot, so one policy can play every
table size. Seats are seat-relative: the observer first, then its left neighbour (the seat it
passes to and steals from), and so on; padding seats are all zeros.

What is encoded (tapeo.txt 'The hand and the bar', 'Each pick'):

* the observer's hand; every bar (this round); churros held (kept + on the bar this round);
  scores of finished rounds; round and pick;
* the hands going round that the observer has held this round: their current contents are
  known exactly, since every tapa taken from them since was revealed face up
  (:func:`tapeo_env.rules.engine.known_hands`), with a flag per seat saying whether it is known;
* the deduction that follows: per kind, the tapas of the deck the observer cannot place (in
  unseen hands or undealt).

Counts of a kind are divided by that kind's count in the deck (so every count lies in [0, 1]).
Nothing hidden enters: not the unseen hands' contents, not the undealt tapas, not the deck
order, and in the AEC form not the other seats' buffered picks of the current pick.

:func:`encode` and :func:`encode_all` are one call of the observation kernel
(:func:`tapeo_env.rules.kernels.observe_game` through the batched engine's driver
:func:`~tapeo_env.rules.kernels.observe_batch`, the same compiled code); the
numpy encoder it replaced is kept in ``tests/oracles/tapeo_scalar.py`` and checked bit for bit.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from hod.core.errors import check_int_range
from hod.core.layout import ObsLayout, Piece

from .cards import DECK_COMPOSITION, MAX_HAND_SIZE, MAX_PLAYERS, MIN_PLAYERS, NUM_KINDS

if TYPE_CHECKING:
    from .engine import State

OBS_VERSION = 1
#: Divisor of the scores piece: a round is worth at most 66 points to a seat (20 tapas at <= 3
#: points each + 6 for ham), so three rounds stay below 2.0 after division.
SCORE_SCALE = 100.0
SCORE_HIGH = 2.0
_K, _S = NUM_KINDS, MAX_PLAYERS

LAYOUT = ObsLayout("tapeo", OBS_VERSION, [
    Piece("num_players", MAX_PLAYERS - MIN_PLAYERS + 1, "one-hot player count (2, 3, 4, 5, 6)"),
    Piece("round", 3, "one-hot round (1, 2, 3; every later round of a longer game shows as 3)"),
    Piece("pick", 1, "tapas already revealed from each hand this round", f"/ {MAX_HAND_SIZE - 1}"),
    Piece("hand_size", 1, "tapas in each hand now", f"/ {MAX_HAND_SIZE}"),
    Piece("hand", _K, "own hand: count of each kind (action order)", "/ deck count of the kind"),
    Piece("bars", _S * _K, "bars this round, 6 seats x 10 kinds, own first then left neighbour ...",
          "/ deck count of the kind"),
    Piece("churros", _S, "churros held (kept + on bar this round), seat-relative", "/ 30"),
    Piece("scores", _S, "points of finished rounds, seat-relative", f"/ {SCORE_SCALE:g} (< {SCORE_HIGH:g})"),
    Piece("known_hands", (_S - 1) * _K,
          "hand now held by seat +1 ... +5: its contents if the observer held it this round, else 0",
          "/ deck count of the kind"),
    Piece("known_flags", _S - 1, "1 if the hand held by seat +1 ... +5 is known"),
    Piece("unseen", _K, "tapas of the deck the observer cannot place (unseen hands + undealt)",
          "/ deck count of the kind"),
])
OBS_SIZE = LAYOUT.size

_SL = LAYOUT.offsets
_HIGH = np.ones(OBS_SIZE, np.float32)
_HIGH[_SL["scores"]] = SCORE_HIGH
#: Upper bounds of each entry (float32 (OBS_SIZE,)); every lower bound is 0.
OBS_HIGH = _HIGH


def encode(state: "State", seat: int, out: np.ndarray | None = None) -> np.ndarray:
    """Observation of ``seat``: what that seat knows (tapeo.txt; the layout table :data:`LAYOUT`),
    computed by the observation kernel (one call of the batched engine's driver
    :func:`tapeo_env.rules.kernels.observe_batch` over the state's one-game record).

    Args:
        state: the engine state (:class:`tapeo_env.rules.engine.State`), n = ``state.config.num_players``.
        seat: the observer, an int in 0..n-1 (absolute seat; the pieces are seat-relative to it).
        out: optional float32 array of shape ``(OBS_SIZE,)`` to fill (every entry is written).

    Returns:
        float32 array of shape ``(OBS_SIZE,)``, entries in ``[0, OBS_HIGH]`` (``out`` when given).

    Raises:
        ConfigError (a ValueError): ``seat`` not an int in 0..n-1 (the message lists the legal
            seats); nothing is written.
    """
    n = state.config.num_players
    if type(seat) is not int or not 0 <= seat < n:
        seat = check_int_range("seat", seat, 0, n - 1)
    t, rec = state._t, state.record
    direct = (out is not None and type(out) is np.ndarray and out.dtype == np.float32 and out.shape == (OBS_SIZE,)
              and out.flags.c_contiguous and out.flags.writeable)
    obs = out.reshape(1, 1, OBS_SIZE) if direct else np.empty((1, 1, OBS_SIZE), np.float32)
    kernels.observe_batch(rec.hands, rec.bars, rec.churros_kept, rec.round_scores, rec.round, rec.pick, t.game,
                          t.seat[seat], t.hand_size, t.lut, t.inv, t.deck, obs)
    if out is None or direct:
        return obs[0, 0] if out is None else out
    out[...] = obs[0, 0]
    return out


def encode_all(state: "State") -> np.ndarray:
    """Observations of every seat at once (one kernel call, as :func:`encode`).

    Args:
        state: the engine state, n = ``state.config.num_players`` seats.

    Returns:
        float32 array of shape ``(n, OBS_SIZE)``, row ``i`` equal to ``encode(state, i)`` bit for
        bit (a fresh array; rows may be handed out as views).
    """
    t, rec = state._t, state.record
    obs = np.empty((1, t.n, OBS_SIZE), np.float32)
    kernels.observe_batch(rec.hands, rec.bars, rec.churros_kept, rec.round_scores, rec.round, rec.pick, t.game,
                          t.seats, t.hand_size, t.lut, t.inv, t.deck, obs)
    return obs[0]


_INV_CACHE: dict[tuple, np.ndarray] = {}


def _inv_deck(deck: tuple) -> np.ndarray:
    inv = _INV_CACHE.get(deck)
    if inv is None:
        d = np.asarray(deck, np.float64)
        inv = np.where(d > 0, 1.0 / np.maximum(d, 1), 0.0)
        _INV_CACHE[deck] = inv
    return inv


def piece(obs: np.ndarray, name: str) -> np.ndarray:
    """Named view of a piece of an observation (see :data:`LAYOUT`)."""
    return LAYOUT.view(obs, name)


@dataclass(frozen=True)
class ObsView:
    """The visible facts of one seat, decoded from its observation (:func:`decode`).

    Seats are seat-relative as in :data:`LAYOUT`: index 0 is the observer, 1 its left neighbour
    (the seat it passes to and steals from), ..., ``n - 1`` its right neighbour (the seat it
    receives hands from). All counts are int64.

    Attributes:
        num_players: n, 2..6.
        round: current round, 0-based (0, 1, 2).
        pick: tapas already revealed from each hand this round.
        cards_in_hand: tapas in every hand now.
        hand: (K,) the observer's hand.
        bars: (n, K) every bar this round.
        churros: (n,) churros held (kept from finished rounds + on the bar this round).
        scores: (n,) points of finished rounds.
        known_hands: (n - 1, K) hand now held by seat +1 ... +(n-1) (zeros where not known).
        known: (n - 1,) bool, True where that hand is known.
        unseen: (K,) tapas of the deck the observer cannot place (unseen hands + undealt).
    """

    num_players: int
    round: int
    pick: int
    cards_in_hand: int
    hand: np.ndarray
    bars: np.ndarray
    churros: np.ndarray
    scores: np.ndarray
    known_hands: np.ndarray
    known: np.ndarray
    unseen: np.ndarray


def decode(obs: np.ndarray, deck: tuple = DECK_COMPOSITION) -> ObsView:
    """Inverse of :func:`encode`: the counts behind an observation vector.

    Args:
        obs: float32 (OBS_SIZE,), an observation of :func:`encode` (or the ``"observation"`` entry
            of the env's observation dict).
        deck: the deck composition the game was played with (divisors of the counts; default the
            published deck, T1).

    Returns:
        an :class:`ObsView` (counts rounded to the nearest integer).

    Raises:
        ValueError: wrong shape, or no player count set (not an observation of :func:`encode`).
    """
    obs = np.asarray(obs)
    if obs.shape != (OBS_SIZE,):
        raise ValueError(f"a Tapeo observation has shape ({OBS_SIZE},), got {obs.shape}")
    onehot = obs[_SL["num_players"]]
    if not onehot.any():
        raise ValueError("the observation has no player count set; not a Tapeo observation")
    n = int(np.argmax(onehot)) + MIN_PLAYERS
    d = np.asarray(deck, np.float64)

    def counts(x: np.ndarray) -> np.ndarray:
        return np.rint(np.asarray(x, np.float64) * d).astype(np.int64)

    b0 = _SL["bars"].start
    k0 = _SL["known_hands"].start
    return ObsView(
        num_players=n,
        round=int(np.argmax(obs[_SL["round"]])),
        pick=int(round(float(obs[_SL["pick"].start]) * (MAX_HAND_SIZE - 1))),
        cards_in_hand=int(round(float(obs[_SL["hand_size"].start]) * MAX_HAND_SIZE)),
        hand=counts(obs[_SL["hand"]]),
        bars=counts(obs[b0:b0 + n * _K].reshape(n, _K)),
        churros=np.rint(obs[_SL["churros"].start:_SL["churros"].start + n].astype(np.float64) * 30.0).astype(np.int64),
        scores=np.rint(obs[_SL["scores"].start:_SL["scores"].start + n].astype(np.float64) * SCORE_SCALE).astype(np.int64),
        known_hands=counts(obs[k0:k0 + (n - 1) * _K].reshape(n - 1, _K)),
        known=obs[_SL["known_flags"].start:_SL["known_flags"].start + n - 1] > 0.5,
        unseen=counts(obs[_SL["unseen"]]),
    )


# The kernels import this module's layout: imported last, so that either may be imported first.
from . import kernels  # noqa: E402
