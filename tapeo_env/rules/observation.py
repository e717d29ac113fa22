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
"""
from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from hod.core.errors import check_int_range
from hod.core.layout import ObsLayout, Piece

from .cards import CHURRO, DECK_COMPOSITION, MAX_HAND_SIZE, MAX_PLAYERS, MIN_PLAYERS, NUM_KINDS
from .engine import State

OBS_VERSION = 1
#: Divisor of the scores piece: a round is worth at most 66 points to a seat (20 tapas at <= 3
#: points each + 6 for ham), so three rounds stay below 2.0 after division.
SCORE_SCALE = 100.0
SCORE_HIGH = 2.0
_K, _S = NUM_KINDS, MAX_PLAYERS

LAYOUT = ObsLayout("tapeo", OBS_VERSION, [
    Piece("num_players", MAX_PLAYERS - MIN_PLAYERS + 1, "one-hot player count (2, 3, 4, 5, 6)"),
    Piece("round", 3, "one-hot round (1, 2, 3)"),
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


def encode(state: State, seat: int, out: np.ndarray | None = None) -> np.ndarray:
    """Observation of ``seat``: what that seat knows (tapeo.txt; the layout table :data:`LAYOUT`).

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
    obs = _encoder(state.config).encode(state, seat)
    if out is None:
        return obs
    out[...] = obs
    return out


def encode_all(state: State) -> np.ndarray:
    """Observations of every seat at once.

    Args:
        state: the engine state, n = ``state.config.num_players`` seats.

    Returns:
        float32 array of shape ``(n, OBS_SIZE)``, row ``i`` equal to ``encode(state, i)`` bit for
        bit (a fresh array; rows may be handed out as views).
    """
    return _encoder(state.config).encode_all(state)


class _Encoder:
    """The encoder of one table shape (player count, hand size, deck, rounds), built once.

    Method: every entry of an observation is either 0, 1, a per-pick constant (the ``pick`` and
    ``hand_size`` pieces) or a scaled count of the state. Each call writes the scaled counts of
    the state once into a float32 *source* buffer, computed in float64 as ``count * (1 / deck
    count)``, ``churros / 30`` and ``points / 100`` and rounded once to float32 (the arithmetic
    the layout documents; one division by the deck count instead where that gives the same
    float32 for every count, see :func:`_exact_divisors`), and the observations are one gather
    ``source[index]`` through an index table per (round, pick) that places every seat-relative
    piece. So the cost hardly depends on the player count or on how many seats are encoded.
    tests/test_tapeo_batched.py checks the result bit for bit against the independent batched
    observation kernel (:func:`tapeo_env.rules.kernels.observe_game`) at every step of many seeded games.

    Source buffer (``n`` seats, ``K`` kinds): ``[0, 1, pick values (hand_size), hand-size values
    (hand_size), hands (n*K, by hand id), bars (n*K), unseen (n*K, by observer), churros held
    (n), scores (n)]``. Its counts are linear in the state, so they come from one product
    ``mix(pick) @ x``, with ``x`` the state's integers ``[hands, bars, churros kept, round
    scores, 1]`` (float64, exact for such small integers); unseen of seat ``s`` = deck - every
    bar - its own hand - the hands it knows at that pick.
    """

    def __init__(self, config) -> None:
        n, hs, k = config.num_players, config.hand_size, _K
        self.n, self.hand_size, self.num_rounds = n, hs, config.num_rounds
        self.deck = config.deck
        zero, one, pick0, size0 = 0, 1, 2, 2 + hs
        counts0 = size0 + hs
        tallies0 = counts0 + 3 * n * k
        self.src = np.zeros(tallies0 + 2 * n, np.float32)
        self.src[one] = 1.0
        p = np.arange(hs)
        self.src[pick0:pick0 + hs] = p / (MAX_HAND_SIZE - 1)
        self.src[size0:size0 + hs] = (hs - p) / MAX_HAND_SIZE
        # Writable views of the source regions, filled by ufuncs with out=.
        self.scaled_v = self.src[counts0:]
        self.counts_v = self.src[counts0:tallies0]
        self.tallies_v = self.src[tallies0:]
        #: Multiplier of each count (1 / deck count of its kind) and divisor of the churros and
        #: scores entries (divided, not multiplied by an inverse, as the layout says).
        self.count_inv = np.tile(_inv_deck(config.deck), 3 * n)
        self.tally_div = np.array([30.0] * n + [SCORE_SCALE] * n)
        #: One divisor per source entry, when dividing a count by its deck count gives the same
        #: float32 as multiplying it by the inverse, for every count up to 1023 (checked here;
        #: true for the published deck); else None and the two are done apart.
        self.divisor = _exact_divisors(config.deck, n, self.tally_div)
        self.one = np.ones(1)
        self._mix: dict[int, np.ndarray] = {}
        self._index: dict = {}
        self._plans: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
        self._regions = (zero, one, pick0, size0, counts0, tallies0)

    def mix(self, pick: int) -> np.ndarray:
        """The float64 matrix (3nK + 2n, 2nK + n + rounds*n + 1) from ``x`` to the source counts
        at ``pick`` (``pick == hand_size``: the finished game, no hand held); built on first use."""
        m = self._mix.get(pick)
        if m is not None:
            return m
        n, k, nk = self.n, _K, self.n * _K
        kept0, scores0 = 2 * nk, 2 * nk + n
        const = scores0 + self.num_rounds * n
        m = np.zeros((3 * nk + 2 * n, const + 1))
        m[np.arange(2 * nk), np.arange(2 * nk)] = 1.0  # hands and bars, as they are
        for s in range(n):
            rows = 2 * nk + s * k + np.arange(k)  # unseen of observer s
            m[rows, const] = self.deck
            for t in range(n):
                m[rows, nk + t * k + np.arange(k)] = -1.0  # every bar
            if pick < self.hand_size:
                for j in range(min(pick, n - 1) + 1):  # own hand (j = 0), hands seen j picks ago
                    h = (s - pick + j) % n
                    m[rows, h * k + np.arange(k)] = -1.0
            m[3 * nk + s, kept0 + s] = m[3 * nk + s, nk + s * k + CHURRO] = 1.0  # churros held
            m[3 * nk + n + s, scores0 + s + n * np.arange(self.num_rounds)] = 1.0  # finished rounds
        m.setflags(write=False)
        self._mix[pick] = m
        return m

    def index(self, rnd: int, pick: int | None) -> np.ndarray:
        """Index table (n, OBS_SIZE) into the source for round ``rnd`` (0-based, capped at 2) and
        pick ``pick`` (None once the game is over); built on first use."""
        key = (rnd, pick)
        idx = self._index.get(key)
        if idx is not None:
            return idx
        zero, one, pick0, size0, counts0, tallies0 = self._regions
        n, k = self.n, _K
        hands0, bars0, unseen0 = counts0, counts0 + n * k, counts0 + 2 * n * k
        churros0, scores0 = tallies0, tallies0 + n
        kinds = np.arange(k)
        idx = np.full((n, OBS_SIZE), zero, np.intp)
        for s in range(n):
            row = idx[s]
            row[_SL["num_players"].start + n - MIN_PLAYERS] = one
            row[_SL["round"].start + rnd] = one
            for j in range(n):  # seat-relative pieces: seat s + j
                t = (s + j) % n
                b = _SL["bars"].start + j * k
                row[b:b + k] = bars0 + t * k + kinds
                row[_SL["churros"].start + j] = churros0 + t
                row[_SL["scores"].start + j] = scores0 + t
            row[_SL["unseen"]] = unseen0 + s * k + kinds
            if pick is not None:
                row[_SL["pick"].start] = pick0 + pick
                row[_SL["hand_size"].start] = size0 + pick
                row[_SL["hand"]] = hands0 + ((s - pick) % n) * k + kinds
                for j in range(1, min(pick, n - 1) + 1):  # hands held by seat+j, seen j picks ago
                    b = _SL["known_hands"].start + (j - 1) * k
                    row[b:b + k] = hands0 + ((s + j - pick) % n) * k + kinds
                    row[_SL["known_flags"].start + j - 1] = one
        idx.setflags(write=False)
        self._index[key] = idx
        return idx

    def plan(self, rnd: int, pick: int) -> tuple[np.ndarray, np.ndarray]:
        """``(mix, index table)`` for a state at round ``rnd`` and pick ``pick`` (cached)."""
        plan = self._plans.get((rnd, pick))
        if plan is None:
            over = rnd >= self.num_rounds
            plan = (self.mix(self.hand_size if over else pick),
                    self.index(min(min(rnd, self.num_rounds - 1), 2), None if over else pick))
            self._plans[rnd, pick] = plan
        return plan

    def _fill(self, state: State) -> np.ndarray:
        """Write the scaled counts of ``state`` into the source; return the index table."""
        mix, index = self.plan(state.round, state.pick)
        x = np.concatenate((state.hands.ravel(), state.bars.ravel(), state.churros_kept,
                            state.round_scores.ravel(), self.one), dtype=np.float64)
        y = mix @ x
        if self.divisor is not None:
            np.divide(y, self.divisor, out=self.scaled_v)
        else:
            split = len(self.counts_v)
            np.multiply(y[:split], self.count_inv, out=self.counts_v)
            np.divide(y[split:], self.tally_div, out=self.tallies_v)
        return index

    def encode(self, state: State, seat: int) -> np.ndarray:
        return self.src.take(self._fill(state)[seat % self.n])  # seats count modulo n, as ever

    def encode_all(self, state: State) -> np.ndarray:
        return self.src.take(self._fill(state))


def _exact_divisors(deck: tuple, n: int, tally_div: np.ndarray) -> np.ndarray | None:
    """Divisors ``[deck count of each kind (inf for an absent kind), tiled 3n times; tally_div]``
    if ``count / d`` rounds to the same float32 as ``count * (1 / d)`` (the layout's
    arithmetic) for every count 0..1023 and kind; else None."""
    counts = np.arange(1024, dtype=np.float64)[:, None]
    inv = _inv_deck(deck)
    d = np.where(np.asarray(deck) > 0, np.asarray(deck, np.float64), np.inf)
    multiplied, divided = (counts * inv).astype(np.float32), (counts / d).astype(np.float32)
    if not np.array_equal(multiplied.view(np.int32), divided.view(np.int32)):
        return None
    return np.concatenate((np.tile(d, 3 * n), tally_div))


class _EncoderCache(threading.local):
    """Encoders by table shape, one set per thread: an encoder's source buffer is scratch space
    written on every call, so threads must not share it."""

    def __init__(self) -> None:
        self.by_shape: dict[tuple, _Encoder] = {}
        self.last_config = None  # the usual case: every call for the same table
        self.last: _Encoder | None = None


_CACHE = _EncoderCache()


def _encoder(config) -> _Encoder:
    """The encoder of ``config``'s table shape (built once per thread)."""
    cache = _CACHE
    if cache.last_config is config:
        return cache.last
    key = (config.num_players, config.hand_size, config.deck, config.num_rounds)
    enc = cache.by_shape.get(key)
    if enc is None:
        enc = cache.by_shape[key] = _Encoder(config)
    cache.last_config, cache.last = config, enc
    return enc


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
