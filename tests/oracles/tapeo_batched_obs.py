"""Observations of a batch of Tapeo games: :func:`tapeo_env.rules.observation.encode` for every game
and seat at once.

The layout is :data:`tapeo_env.rules.observation.LAYOUT` (one source of truth); every entry is the same
float32 value the single-game encoder writes (counts are converted through a table built with
the single encoder's own ``count * (1 / deck count)`` arithmetic, divisions are done in float64
and rounded once, as there), which the differential test checks bit for bit.
"""
from __future__ import annotations

from typing import Optional

import numpy as np
from numpy.lib.stride_tricks import as_strided

from tapeo_env.rules.cards import CHURRO, MAX_HAND_SIZE, MIN_PLAYERS, NUM_KINDS
from tapeo_env.rules.engine import Config
from tapeo_env.rules.observation import LAYOUT, OBS_SIZE, SCORE_SCALE, _inv_deck

_K = NUM_KINDS
_SL = LAYOUT.offsets
#: Divisor of the churros piece (as in tapeo_env.rules.observation.encode).
CHURRO_SCALE = 30.0


def _window(doubled: np.ndarray, n: int, width: int, offset: int = 0) -> np.ndarray:
    """Read-only view (B, n, width) of ``doubled`` (B, 2n, ...) flattened per game: row ``s`` is
    the ``width`` entries starting at seat ``s + offset`` (seats s, s+1, ... mod n)."""
    flat = doubled.reshape(doubled.shape[0], -1)
    step = flat.shape[1] // (2 * n)
    return as_strided(flat[:, offset * step:], shape=(flat.shape[0], n, width),
                      strides=(flat.strides[0], step * flat.strides[1], flat.strides[1]), writeable=False)


class BatchedEncoder:
    """Encodes a :class:`tapeo_env.rules.batched.BatchedState` for chosen seats of every game.

    Method: every entry of the layout is ``numerator / divisor`` with a small non-negative
    integer numerator (a count, churros, points, the pick) and a divisor fixed per column. The
    numerators of every observer are written as uint8 into one buffer, the seat-relative pieces
    all at once as sliding windows over "doubled" per-seat arrays (seats 0..n-1, 0..n-1 again),
    then one float32 division gives the observations. The division is used only if it gives,
    for every possible numerator, the same float32 as the single encoder's own arithmetic
    (checked here; true for the published deck); otherwise a lookup table does the conversion.

    Args:
        config: the games' :class:`tapeo_env.rules.engine.Config`.
        exact_division: None = use the division when it is exact; False = always the table.
    """

    def __init__(self, config: Config, exact_division: Optional[bool] = None) -> None:
        self.config = config
        self.n = config.num_players
        deck = np.asarray(config.deck, np.int64)
        inv = _inv_deck(config.deck)
        div = np.ones(OBS_SIZE, np.float64)
        ref = np.zeros((OBS_SIZE, 256), np.float32)          # single encoder's value of each numerator
        num = np.arange(256, dtype=np.int64)
        for name in ("num_players", "round", "known_flags"):
            ref[_SL[name]] = num.astype(np.float32)
        for name, d in (("pick", MAX_HAND_SIZE - 1), ("hand_size", MAX_HAND_SIZE), ("churros", CHURRO_SCALE),
                        ("scores", SCORE_SCALE)):
            div[_SL[name]] = d
            ref[_SL[name]] = (num / d).astype(np.float32)
        for name in ("hand", "bars", "known_hands", "unseen"):
            sl = _SL[name]
            reps = (sl.stop - sl.start) // _K
            div[sl] = np.tile(np.where(deck > 0, deck, 1), reps)
            ref[sl] = np.tile((num[None, :] * inv[:, None]).astype(np.float32), (reps, 1))
        self._div = div.astype(np.float32)
        exact = np.array_equal(num[None, :].astype(np.float32) / self._div[:, None], ref) and min(config.deck) > 0
        self.exact_division = exact if exact_division is None else bool(exact_division) and exact
        self._lut = ref.ravel()
        self._lut_off = (np.arange(OBS_SIZE, dtype=np.int32) * 256)
        self._buffers: dict[tuple, tuple] = {}
        self._scratch_b = -1
        self._round_onehot = np.zeros((config.num_rounds + 1, 3), np.uint8)
        for r in range(config.num_rounds + 1):
            self._round_onehot[r, min(min(r, config.num_rounds - 1), 2)] = 1
        #: games converted per pass (the chunk stays in the core's cache between the two passes).
        self.chunk = 256

    def _buffer(self, batch: int, seats: tuple) -> tuple:
        key = (batch, seats)
        bufs = self._buffers.get(key)
        if bufs is None:
            raw = np.zeros((batch, len(seats), OBS_SIZE), np.uint8)
            raw[:, :, _SL["num_players"].start + self.n - MIN_PLAYERS] = 1
            bufs = self._buffers[key] = (raw, np.zeros((batch, len(seats), OBS_SIZE), np.float32))
        return bufs

    def _scratch(self, B: int) -> None:
        if self._scratch_b != B:
            n = self.n
            self._hands2 = np.empty((B, 2 * n, _K), np.uint8)
            self._bars2 = np.empty((B, 2 * n, _K), np.uint8)
            self._side2 = np.empty((B, 2, 2 * n), np.uint8)
            self._seen = np.empty((B, n, _K), np.uint8)
            self._scratch_b = B

    def encode(self, state, seats=None, out: Optional[np.ndarray] = None) -> np.ndarray:
        """Observations float32 (B, len(seats), OBS_SIZE) of ``seats`` (default all, in order)
        in every game; row ``[b, i]`` equals ``encode(single state of game b, seats[i])``.

        Args:
            state: a :class:`tapeo_env.rules.batched.BatchedState` of this config.
            seats: distinct seat indices (the same in every game), each in 0..n-1.
            out: optional float32 array of that shape to fill; otherwise an internal buffer is
                returned, overwritten by the next call.

        Raises:
            ValueError: a seat outside 0..n-1, repeated seats or a wrong ``out`` shape.
        """
        n, cfg = self.n, self.config
        S = list(range(n)) if seats is None else [int(x) for x in np.asarray(seats).reshape(-1)]
        if not S or min(S) < 0 or max(S) >= n or len(set(S)) != len(S):
            raise ValueError(f"seats must be distinct seats in 0..{n - 1}, got {S}")
        B = state.hands.shape[0]
        raw, obs = self._buffer(B, tuple(S))
        if out is not None:
            if out.shape != obs.shape or out.dtype != np.float32:
                raise ValueError(f"out must be float32 of shape {obs.shape}")
            obs = out
        self._scratch(B)
        full = seats is None or S == list(range(n))
        sel = slice(None) if full else S
        hands, bars = state.hands, state.bars
        rnd, pick = state.round, state.pick
        over = rnd >= cfg.num_rounds
        h2, b2, side2, seen = self._hands2, self._bars2, self._side2, self._seen
        h2[:, :n] = hands
        h2[:, n:] = hands
        b2[:, :n] = bars
        b2[:, n:] = bars
        rs = state.round_scores
        scores = rs[:, 0].astype(np.int32)
        for r in range(1, rs.shape[1]):
            scores += rs[:, r]
        big_scores = scores.size and (scores.max() > 255 or scores.min() < 0)
        side2[:, 0, :n] = state.churros_kept + bars[:, :, CHURRO]
        side2[:, 1, :n] = 0 if big_scores else scores
        side2[:, :, n:] = side2[:, :, :n]
        uniform = pick.min() == pick.max() and rnd.min() == rnd.max()
        hd = _SL["round"].start
        if uniform:   # one header and one known-hands prefix for the whole batch
            head = np.zeros(5, np.uint8)
            head[:3] = self._round_onehot[rnd[0]]
            kp = 0
            if not over[0]:
                head[3], head[4] = pick[0], self.config.hand_size - pick[0]
                kp = min(int(pick[0]), n - 1)               # hands held by seat +1..+kp are known
            raw[:, :, hd:hd + 5] = head
        else:
            head = np.zeros((B, 5), np.uint8)
            head[:, :3] = self._round_onehot[rnd]
            head[:, 3] = np.where(over, 0, pick)
            head[:, 4] = np.where(over, 0, cfg.hand_size - pick)
            raw[:, :, hd:hd + 5] = head[:, None, :]
            known = (pick[:, None] >= np.arange(1, n)[None, :]) & ~over[:, None]     # (B, n-1)
        nk, mk = n * _K, (n - 1) * _K
        h0, b0, k0, f0 = _SL["hand"].start, _SL["bars"].start, _SL["known_hands"].start, _SL["known_flags"].start
        c0, s0, u0 = _SL["churros"].start, _SL["scores"].start, _SL["unseen"].start
        raw[:, :, h0:h0 + _K] = hands[:, sel]
        raw[:, :, b0:b0 + nk] = _window(b2, n, nk)[:, sel]
        raw[:, :, c0:c0 + n] = _window(side2[:, 0], n, n)[:, sel]
        raw[:, :, s0:s0 + n] = _window(side2[:, 1], n, n)[:, sel]
        # Unseen = deck - every bar - own hand - known hands.
        np.copyto(seen, hands, casting="unsafe")
        if uniform:
            if kp:
                raw[:, :, k0:k0 + kp * _K] = _window(h2, n, kp * _K, offset=1)[:, sel]
            raw[:, :, k0 + kp * _K:k0 + mk] = 0
            raw[:, :, f0:f0 + n - 1] = np.arange(1, n) <= kp
            for j in range(1, kp + 1):
                seen += h2[:, j:j + n]
        else:
            mask = np.repeat(known, _K, axis=1)[:, None, :]
            np.multiply(_window(h2, n, mk, offset=1)[:, sel], mask, out=raw[:, :, k0:k0 + mk])
            raw[:, :, f0:f0 + n - 1] = known[:, None, :]
            for j in range(1, n):
                seen += h2[:, j:j + n] * known[:, j - 1, None, None]
        deck_left = self._deck_left(bars)
        np.subtract(deck_left[:, None, :], seen[:, sel], out=raw[:, :, u0:u0 + _K])
        self._convert(raw, obs)
        if big_scores:
            rot = (np.array(S)[:, None] + np.arange(n)) % n          # seats left of each observer
            obs[:, :, s0:s0 + n] = (scores / SCORE_SCALE).astype(np.float32)[:, rot]
        return obs

    def _deck_left(self, bars: np.ndarray) -> np.ndarray:
        """(B, K) uint8: the deck minus every bar."""
        left = np.empty(bars[:, 0].shape, np.uint8)
        np.subtract(np.asarray(self.config.deck, np.uint8), bars[:, 0], out=left, casting="unsafe")
        for j in range(1, self.n):
            left -= bars[:, j]
        return left

    def _convert(self, raw: np.ndarray, obs: np.ndarray) -> None:
        """obs = raw / column divisor (or the table), by chunks of games."""
        c = self.chunk
        for lo in range(0, raw.shape[0], c):
            r, o = raw[lo:lo + c], obs[lo:lo + c]
            if self.exact_division:
                np.copyto(o, r, casting="unsafe")
                np.divide(o, self._div, out=o)
            else:
                o[...] = self._lut.take(r.astype(np.int32) + self._lut_off)
