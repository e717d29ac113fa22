"""Seeded shuffles shared by both games' single-game and batched engines (one random stream).

A game's seed alone decides its deal: ``new_game(config, seed=s)`` of either game and game ``i``
of the batched engine reset with ``seeds[i] = s`` shuffle from the same numbers, computed here,
by the same functions (one game is a batch of one), so the two engines cannot drift apart.

The numbers are counter-based: the key of (seed, stream) is SplitMix64 (Steele, Lea & Flood
2014) of both, and number j is SplitMix64 of the key plus j + 1 steps of a fixed odd increment.
So G games are shuffled at once as numpy arrays with no generator object per game, and a later
round of a game (``stream`` = its round) needs only the game's seed.

* :func:`shuffled`: every card, ordered by its number (Ronda Robada's deck order).
* :func:`shuffled_prefix`: the first cards of a Fisher-Yates shuffle (Tapeo's hands).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from .errors import ConfigError

_U64 = np.uint64
_GOLDEN = _U64(0x9E3779B97F4A7C15)
_M1 = _U64(0xBF58476D1CE4E5B9)
_M2 = _U64(0x94D049BB133111EB)
_S30, _S27, _S31 = _U64(30), _U64(27), _U64(31)
#: Largest seed + 1: seeds are unsigned 64-bit integers. The one seed range of both games: every
#: engine (single and batched) deals from a seed in ``0 .. SEED_LIMIT - 1``, and the envs'
#: ``reset(seed=...)`` check (``hod.adapters.options.check_seed``) accepts exactly those seeds.
SEED_LIMIT = 1 << 64
#: :data:`SEED_LIMIT`'s range as the error messages write it.
SEED_RANGE = f"0..2**{SEED_LIMIT.bit_length() - 1}-1"


def _mix(z: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser, in place on a uint64 array (wrapping arithmetic); returns ``z``."""
    z ^= z >> _S30
    z *= _M1
    z ^= z >> _S27
    z *= _M2
    z ^= z >> _S31
    return z


def check_seed(seed: object) -> int:
    """Return ``seed`` as a Python int in ``0 .. 2**64 - 1`` (:data:`SEED_LIMIT`).

    Raises:
        ConfigError: not an integer (bools refused) or out of range.
    """
    if not is_seed(seed):
        raise ConfigError(f"seed={seed!r} must be an int in {SEED_RANGE}")
    return int(seed)


def check_generator_seed(seed: object) -> None:
    """Refuse a seed for an engine's own generator (``numpy.random.default_rng(seed)``) that is
    not None, a game seed (:func:`is_seed`) or a list/tuple of them (numpy's entropy sequence).

    Raises:
        ConfigError: naming the legal values (bools, floats, negatives and ints of 2**64 or more
            included).
    """
    if seed is None or is_seed(seed) or (isinstance(seed, (list, tuple)) and seed and all(map(is_seed, seed))):
        return
    raise ConfigError(f"seed={seed!r}: legal values None, an int in {SEED_RANGE}, or a list of such ints "
                      f"(nothing is changed)")


def is_seed(seed: object) -> bool:
    """Whether ``seed`` is a game seed: an integer (a Python ``int`` or a numpy integer, not a
    bool) in ``0 .. SEED_LIMIT - 1``. The one range test of the engines and the envs."""
    return (not isinstance(seed, bool) and isinstance(seed, (int, np.integer))
            and 0 <= int(seed) < SEED_LIMIT)


def draw_seeds(rng: np.random.Generator, size: Optional[int] = None):
    """Fresh game seeds from ``rng``: uint64 (size,), or one Python int when ``size`` is None
    (uniform over 0..2**63-1)."""
    if size is None:
        return int(rng.integers(0, 1 << 63))
    return rng.integers(0, 1 << 63, size=size, dtype=np.int64).astype(np.uint64)


def game_seed(seed: object = None, rng: Optional[np.random.Generator] = None) -> int:
    """The seed a single-game engine deals from: ``seed`` itself when it is an int; one drawn
    from ``rng`` when given (it takes precedence); else a fresh one from the OS entropy.

    Raises:
        ConfigError: ``seed`` neither None nor an int in ``0 .. 2**64 - 1``.
    """
    if rng is not None:
        return draw_seeds(rng)
    if seed is None:
        return draw_seeds(np.random.default_rng())
    return check_seed(seed)


def as_seeds(seeds: object, size: int) -> np.ndarray:
    """``seeds`` as uint64 (size,).

    Raises:
        ConfigError: wrong length, not integers, or a value outside ``0 .. 2**64 - 1``.
    """
    if isinstance(seeds, np.ndarray) and seeds.dtype == np.uint64:
        s = seeds.reshape(-1)
    else:
        try:
            s = np.array([check_seed(x) for x in np.asarray(seeds, dtype=object).reshape(-1)], np.uint64)
        except (TypeError, ValueError):
            raise ConfigError(f"seeds must be ints in {SEED_RANGE}, got {seeds!r}") from None
    if s.shape != (size,):
        raise ConfigError(f"seeds must hold one seed per game ({size}), got {s.size}")
    return s


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
_MASK = SEED_LIMIT - 1


def _mix_int(z: int) -> int:
    """:func:`_mix` of one Python int (wrapping 64-bit arithmetic)."""
    z ^= z >> 30
    z = (z * 0xBF58476D1CE4E5B9) & _MASK
    z ^= z >> 27
    z = (z * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def stream_numbers_one(seed: int, stream: int, count: int) -> list[int]:
    """:func:`stream_numbers` of one game as Python ints (the same numbers; a single-game engine
    deals with this, the batched engines with the array form; ``tests/test_deal.py`` checks they
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
