"""The seeded shuffles of :mod:`hod.core.deal` as they were before they became compiled kernels:
the numpy array form (a batch of games at once) and the Python-int form (one game), the
executable specification the kernels are checked against bit for bit (``tests/core/test_deal.py``).
Nothing in the package imports it. The package's code of that time with only its imports changed.
"""
from __future__ import annotations

import numpy as np

_U64 = np.uint64
_GOLDEN = _U64(0x9E3779B97F4A7C15)
_M1 = _U64(0xBF58476D1CE4E5B9)
_M2 = _U64(0x94D049BB133111EB)
_S30, _S27, _S31 = _U64(30), _U64(27), _U64(31)


def _mix(z: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser, in place on a uint64 array (wrapping arithmetic); returns ``z``."""
    z ^= z >> _S30
    z *= _M1
    z ^= z >> _S27
    z *= _M2
    z ^= z >> _S31
    return z


#: Increment between the numbers of one stream (an odd 64-bit constant, not the key's _GOLDEN).
_GAMMA = _U64(0xD1B54A32D192ED03)
_STEPS: dict[int, np.ndarray] = {}


def _steps(count: int) -> np.ndarray:
    """uint64 (count,) ``(j + 1) * _GAMMA`` (wrapping), j = 0..count-1, cached."""
    st = _STEPS.get(count)
    if st is None:
        st = _STEPS[count] = np.arange(1, count + 1, dtype=_U64) * _GAMMA
        st.setflags(write=False)
    return st


def stream_numbers(seeds: np.ndarray, stream, count: int) -> np.ndarray:
    """The random numbers of ``stream`` for each seed: uint64 (G, count), distinct within a row.

    Args:
        seeds: uint64 (G,) game seeds.
        stream: which stream (Tapeo: the round; Ronda Robada: 0): an int, or int (G,) one per
            game.
        count: numbers per game.

    Rule: the stream's key is SplitMix64 of the seed and the stream; number j is SplitMix64 of
    ``key + (j + 1) * gamma`` (SplitMix64 in counter mode, as Java's SplittableRandom: every
    entry is a few array operations, with no loop over positions). Numbers in a row are distinct
    (the finaliser is a bijection of distinct inputs).
    """
    s = _mix(np.asarray(seeds, _U64).reshape(-1) + _GOLDEN)
    key = _mix(s + (np.asarray(stream, _U64).reshape(-1) + _U64(1)) * _GOLDEN)
    out = key[:, None] + _steps(count)
    return _mix(out)


def shuffled(cards: np.ndarray, seeds: np.ndarray, stream: int = 0) -> np.ndarray:
    """All the ``cards`` in the order each seed shuffles them: (G, D), dtype of ``cards``.

    Args:
        cards: (D,) the cards in a fixed order (Ronda Robada: the card ids 0..39).
        seeds: uint64 (G,) game seeds (:func:`as_seeds`).
        stream: see :func:`stream_numbers`.

    Rule: a uniformly random order, the same for one seed whether the game is dealt alone
    (G = 1) or in a batch: the cards sorted by their :func:`stream_numbers` (distinct keys, so
    the order does not depend on the sort algorithm).
    """
    return cards[np.argsort(stream_numbers(seeds, stream, len(cards)), axis=1)]


def fisher_yates_draws(seeds: np.ndarray, stream, deck_size: int, count: int) -> np.ndarray:
    """The positions drawn by the first ``count`` steps of a Fisher-Yates shuffle of
    ``deck_size`` cards: intp (count, G), step j's position in ``j .. deck_size - 1``.

    Args:
        seeds: uint64 (G,) game seeds. stream: see :func:`stream_numbers`.
        deck_size: D. count: steps, ``<= D``.

    Rule: step j takes the high 32 bits of number j of the stream, scaled to the
    ``D - j`` positions left (multiply-shift; bias below ``D / 2**32``).
    """
    x = stream_numbers(seeds, stream, count).T >> _U64(32)
    x *= np.arange(deck_size, deck_size - count, -1, dtype=_U64)[:, None]
    x >>= _U64(32)
    out = x.astype(np.intp)
    out += np.arange(count, dtype=np.intp)[:, None]
    return out


def shuffled_prefix(cards: np.ndarray, seeds: np.ndarray, stream, count: int) -> np.ndarray:
    """The first ``count`` cards of each seed's Fisher-Yates shuffle of ``cards``: (G, count),
    dtype of ``cards``.

    Args:
        cards: (D,) the deck in a fixed order (Tapeo: the kinds, sorted).
        seeds: uint64 (G,) game seeds. stream: see :func:`stream_numbers`. count: ``<= D``.

    Rule: Fisher-Yates (step j swaps position j with the position :func:`fisher_yates_draws`
    gives), stopped after ``count`` steps: those cards are a uniformly random draw without
    replacement, in random order. One game (G = 1) runs the swaps on a Python list, a batch
    runs them as array operations over the games; both give the same cards for a seed.
    """
    draws = fisher_yates_draws(seeds, stream, len(cards), count)
    G = draws.shape[1]
    if G == 1:
        deck = cards.tolist()
        for j, r in enumerate(draws[:, 0].tolist()):
            deck[j], deck[r] = deck[r], deck[j]
        return np.array([deck[:count]], cards.dtype)
    D = len(cards)
    deck = np.empty((G, D), cards.dtype)
    deck[:] = cards
    flat = deck.reshape(-1)
    draws += (np.arange(G, dtype=np.intp) * D)[None, :]
    out = np.empty((count, G), cards.dtype)
    for j in range(count):
        r = draws[j]
        out[j] = flat[r]
        flat[r] = deck[:, j]
    return out.T


# ---- one game with Python ints: the same numbers, without numpy's per-call cost ----------------
_MASK = (1 << 64) - 1


def _mix_int(z: int) -> int:
    """:func:`_mix` of one Python int (wrapping 64-bit arithmetic)."""
    z ^= z >> 30
    z = (z * 0xBF58476D1CE4E5B9) & _MASK
    z ^= z >> 27
    z = (z * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def stream_numbers_one(seed: int, stream: int, count: int) -> list[int]:
    """:func:`stream_numbers` of one game as Python ints (the same numbers; a single-game engine
    deals with this, the batched engines with the array form; ``tests/core/test_deal.py`` checks they
    agree)."""
    s = _mix_int((seed + int(_GOLDEN)) & _MASK)
    key = _mix_int((s + (stream + 1) * int(_GOLDEN)) & _MASK)
    gamma = int(_GAMMA)
    return [_mix_int((key + (j + 1) * gamma) & _MASK) for j in range(count)]


def shuffled_one(cards: list, seed: int, stream: int = 0) -> list:
    """:func:`shuffled` of one game: the ``cards`` (a list) in the seed's order."""
    return [c for _, c in sorted(zip(stream_numbers_one(seed, stream, len(cards)), cards))]


def shuffled_prefix_one(cards: list, seed: int, stream: int, count: int) -> list:
    """:func:`shuffled_prefix` of one game: the first ``count`` cards (a list) of the seed's
    Fisher-Yates shuffle of ``cards`` (a list, not changed)."""
    deck, size = list(cards), len(cards)
    for j, x in enumerate(stream_numbers_one(seed, stream, count)):
        r = (((x >> 32) * (size - j)) >> 32) + j
        deck[j], deck[r] = deck[r], deck[j]
    return deck[:count]
