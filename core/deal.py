"""Seeded shuffles shared by both games' single-game and batched engines (one random stream).

A game's seed alone decides its deal: ``new_game(config, seed=s)`` of either game and game ``i``
of the batched engine reset with ``seeds[i] = s`` shuffle from the same numbers, computed here,
by the same compiled functions (one game is a batch of one), so the two engines cannot drift
apart.

The numbers are counter-based: the key of (seed, stream) is SplitMix64 (Steele, Lea & Flood
2014) of both, and number j is SplitMix64 of the key plus j + 1 steps of a fixed odd increment.
So G games are shuffled at once with no generator object per game, and a later round of a game
(``stream`` = its round) needs only the game's seed.

* :func:`shuffled`: every card, ordered by its number (Ronda Robada's deck order).
* :func:`shuffled_prefix`: the first cards of a Fisher-Yates shuffle (Tapeo's hands).
* ``*_one``: the same for one game, as Python lists (the single-game engines).

Each rule is written once, as numba kernels over one game (:func:`numbers_into`,
:func:`shuffle_game`, :func:`_prefix_game`) and batch loops over the games; the array and the
one-game functions call them (compiled on first use, or loaded from numba's disk cache:
:func:`hod.core.jit.cache_kernels`). The numpy form they replaced is the oracle
``tests/oracles/deal_numpy.py`` (``tests/core/test_deal.py`` checks them bit for bit).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from .errors import ConfigError
from .jit import cache_kernels, import_numba

njit = import_numba().njit      # numba without the scipy and yaml imports of its start (hod.core.jit)

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
_CACHED = cache_kernels(__file__)


@njit(cache=_CACHED, inline="always")
def _mix(z):
    """SplitMix64's finaliser of one uint64 (wrapping arithmetic)."""
    z ^= z >> _S30
    z *= _M1
    z ^= z >> _S27
    z *= _M2
    z ^= z >> _S31
    return z


@njit(cache=_CACHED, inline="always")
def numbers_into(seed, stream, out):
    """``out[j]`` (uint64 (count,)) = number j of ``stream`` for ``seed`` (:func:`stream_numbers`).

    A compiled kernel for other kernels (inlined; ``seed``, ``stream`` uint64 scalars), the one
    definition of the numbers every deal draws; not a Python-level entry point (use
    :func:`stream_numbers`)."""
    s = _mix(seed + _GOLDEN)
    key = _mix(s + (stream + _U64(1)) * _GOLDEN)
    for j in range(out.shape[0]):
        out[j] = _mix(key + _U64(j + 1) * _GAMMA)


@njit(cache=_CACHED, inline="always")
def shuffle_game(cards, seed, stream, nums, out):
    """``out`` = ``cards`` ordered by their numbers (:func:`shuffled`); ``nums`` scratch (D,).
    An insertion sort of the (distinct) numbers, carrying the cards along: one order whatever
    the algorithm. A compiled kernel for other kernels (the engines' re-deals call it inside
    their own loops); from Python use :func:`shuffled`."""
    numbers_into(seed, stream, nums)
    for j in range(nums.shape[0]):
        x, c = nums[j], cards[j]
        i = j
        while i > 0 and nums[i - 1] > x:
            nums[i] = nums[i - 1]
            out[i] = out[i - 1]
            i -= 1
        nums[i] = x
        out[i] = c


@njit(cache=_CACHED, inline="always")
def _prefix_game(cards, seed, stream, nums, deck, out):
    """``out`` (count,) = the first ``count`` cards of the Fisher-Yates shuffle of ``cards``
    (:func:`shuffled_prefix`); ``nums`` (count,) and ``deck`` (D,) scratch."""
    numbers_into(seed, stream, nums)
    D = cards.shape[0]
    for k in range(D):
        deck[k] = cards[k]
    for j in range(out.shape[0]):
        r = j + np.intp(((nums[j] >> _U64(32)) * _U64(D - j)) >> _U64(32))
        x = deck[r]
        deck[r] = deck[j]
        deck[j] = x
        out[j] = x


@njit(cache=_CACHED)
def _numbers_batch(seeds, streams, out):
    for g in range(seeds.shape[0]):
        numbers_into(seeds[g], streams[g], out[g])


@njit(cache=_CACHED)
def _shuffle_batch(cards, seeds, streams, out):
    nums = np.empty(cards.shape[0], np.uint64)
    for g in range(seeds.shape[0]):
        shuffle_game(cards, seeds[g], streams[g], nums, out[g])


@njit(cache=_CACHED)
def _prefix_batch(cards, seeds, streams, out):
    nums = np.empty(out.shape[1], np.uint64)
    deck = np.empty_like(cards)
    for g in range(seeds.shape[0]):
        _prefix_game(cards, seeds[g], streams[g], nums, deck, out[g])


def _streams(stream, size: int) -> np.ndarray:
    """``stream`` (an int, or int (G,) one per game) as uint64 (G,)."""
    st = np.asarray(stream)
    if st.ndim == 0:
        return np.full(size, int(st), np.uint64)
    return np.ascontiguousarray(st.reshape(-1), np.int64).astype(np.uint64)


def _seeds(seeds: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(seeds, np.uint64).reshape(-1))


def stream_numbers(seeds: np.ndarray, stream, count: int) -> np.ndarray:
    """The random numbers of ``stream`` for each seed: uint64 (G, count), distinct within a row.

    Args:
        seeds: uint64 (G,) game seeds.
        stream: which stream (Tapeo: the round; Ronda Robada: 0): an int, or int (G,) one per
            game.
        count: numbers per game.

    Rule: the stream's key is SplitMix64 of the seed and the stream; number j is SplitMix64 of
    ``key + (j + 1) * gamma`` (SplitMix64 in counter mode, as Java's SplittableRandom). Numbers
    in a row are distinct (the finaliser is a bijection of distinct inputs).
    """
    s = _seeds(seeds)
    out = np.empty((s.size, int(count)), np.uint64)
    _numbers_batch(s, _streams(stream, s.size), out)
    return out


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
    c = np.ascontiguousarray(cards)
    s = _seeds(seeds)
    out = np.empty((s.size, c.size), c.dtype)
    _shuffle_batch(c, s, _streams(stream, s.size), out)
    return out


def shuffled_prefix(cards: np.ndarray, seeds: np.ndarray, stream, count: int) -> np.ndarray:
    """The first ``count`` cards of each seed's Fisher-Yates shuffle of ``cards``: (G, count),
    dtype of ``cards``.

    Args:
        cards: (D,) the deck in a fixed order (Tapeo: the kinds, sorted).
        seeds: uint64 (G,) game seeds. stream: see :func:`stream_numbers`. count: ``<= D``.

    Rule: Fisher-Yates stopped after ``count`` steps: step j takes the high 32 bits of number j
    of the stream, scaled to the ``D - j`` positions left (multiply-shift; bias below
    ``D / 2**32``), and swaps that position (``j + ...``) with position j. Those cards are a
    uniformly random draw without replacement, in random order.

    Raises:
        ValueError: ``count`` outside 0..D.
    """
    c = np.ascontiguousarray(cards)
    if not 0 <= int(count) <= c.size:
        raise ValueError(f"count={count!r} must be in 0..{c.size} (the cards given)")
    s = _seeds(seeds)
    out = np.empty((s.size, int(count)), c.dtype)
    _prefix_batch(c, s, _streams(stream, s.size), out)
    return out


# ---- one game as Python lists (the single-game engines) --------------------------------------------
def stream_numbers_one(seed: int, stream: int, count: int) -> list[int]:
    """:func:`stream_numbers` of one game, as Python ints."""
    return stream_numbers(np.array([seed], np.uint64), stream, count)[0].tolist()


def shuffled_one(cards: list, seed: int, stream: int = 0) -> list:
    """:func:`shuffled` of one game: the ``cards`` (a list of ints) in the seed's order."""
    return shuffled(np.array(cards, np.int64), np.array([seed], np.uint64), stream)[0].tolist()


def shuffled_prefix_one(cards: list, seed: int, stream: int, count: int) -> list:
    """:func:`shuffled_prefix` of one game: the first ``count`` cards (a list) of the seed's
    Fisher-Yates shuffle of ``cards`` (a list of ints, not changed)."""
    return shuffled_prefix(np.array(cards, np.int64), np.array([seed], np.uint64), stream, count)[0].tolist()
