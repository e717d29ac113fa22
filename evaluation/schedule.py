"""The tournament schedule: which deal each game uses, who sits where, and every seed.

Terms: a *slot* is one entry of the lineup (slot k = ``lineup[k]``); a *seat* is a position at
the table (seat i is agent ``player_i``, see docs/DESIGN.md). A *deal* is one environment seed;
``reset(seed=s)`` fixes the whole deal whoever sits where. A *seat order* is ``seating[seat] =
slot``, one slot per seat.

Seat orders (``seating``):

* ``"cyclic"``: the n rotations. Rotation ``r`` (0 <= r < n) puts slot k at seat ``(k + r) % n``,
  so ``seating[seat] = (seat - r) % n``. The slots keep their cyclic order round the table (who
  is on whose left) and each slot sits at every seat equally often.
* ``"permutations"``: all n! orders, in ``itertools.permutations(range(n))`` order. Each slot
  sits at every seat equally often and next to (left and right of) every other slot equally
  often, so no bot keeps the advantage or handicap of a fixed neighbour (in Tapeo you pass your
  hand to your left neighbour and your Freeloader steals from them; in Ronda Robada they play
  after you). With 2 players the two schemes are the same two orders.

With m seat orders (n or n!):

* ``duplicate=True``: game ``g`` plays deal ``g // m`` with seat order ``g % m``: every deal is
  played m times in a row, once per order, so each slot plays every seat's cards of every deal
  equally often. ``num_games`` counts games, so there are ``num_games / m`` deals.
* ``duplicate=False``: game ``g`` plays its own deal ``g`` with seat order ``g % m``.

In both modes ``num_games`` must be a multiple of m (so that every order is played equally often);
otherwise :class:`~hod.core.errors.ConfigError` names the nearest legal values.

Seeds. ``root = numpy.random.SeedSequence(seed)``; deal ``d`` uses ``deal_seq = root.spawn(D)[d]``
(spawn key ``(d,)``, independent of how many deals there are): the environment seed is
``deal_seq.generate_state(1, uint32)[0]``; game ``r`` of that deal (r-th game played on it) takes
``deal_seq.spawn(games_per_deal)[r].generate_state(n, uint32)`` as the bot seeds of slots
``0..n-1``. Every seed is computed here, in the main process, before any game is played, so the
result cannot depend on how games are spread over worker processes.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from hod.core.errors import ConfigError


@dataclass(frozen=True)
class ScheduledGame:
    """Everything needed to replay one tournament game.

    Attributes:
        index: game number, 0..num_games-1 (results are kept in this order).
        deal: deal number the game uses.
        rotation: index of the seat order in :func:`seat_orders` (for ``"cyclic"``: r, slot k
            sits at seat (k + r) % n).
        env_seed: seed passed to ``env.reset(seed=...)`` (uint32 value as int).
        seating: tuple of n ints, ``seating[seat]`` = slot sitting at that seat.
        bot_seeds: tuple of n ints, ``bot_seeds[slot]`` = seed passed to that slot's ``bot.reset``.
    """

    index: int
    deal: int
    rotation: int
    env_seed: int
    seating: tuple[int, ...]
    bot_seeds: tuple[int, ...]


def seating_for_rotation(n: int, rotation: int) -> tuple[int, ...]:
    """``seating[seat]`` (slot at each seat) for rotation r: slot k sits at seat (k + r) % n."""
    return tuple((seat - rotation) % n for seat in range(n))


#: The seat-order schemes of :func:`seat_orders`.
SEATINGS = ("cyclic", "permutations")
#: ``seating="auto"`` plays every permutation up to this many orders (4 players: 4! = 24).
MAX_AUTO_PERMUTATIONS = 24
#: The most games one tournament plays: its schedule and its per-game records are held in memory
#: (about 1 KB a game), and every deal's environment seed is a 32-bit word of its SeedSequence.
MAX_GAMES = 1_000_000


def seat_orders(n: int, seating: str = "cyclic") -> list[tuple[int, ...]]:
    """The seat orders of a scheme, each ``seating[seat] = slot`` (module docstring).

    Args:
        n: player count (>= 1).
        seating: ``"cyclic"`` (n rotations, rotation r first at index r) or ``"permutations"``
            (the n! orders of ``itertools.permutations(range(n))``).

    Returns:
        list of n-tuples: n of them for ``"cyclic"``, n! for ``"permutations"``.

    Raises:
        ConfigError: another ``seating`` (the legal values are named).
    """
    if seating == "cyclic":
        return [seating_for_rotation(n, r) for r in range(n)]
    if seating == "permutations":
        return list(itertools.permutations(range(n)))
    raise ConfigError(f"seating={seating!r}: legal values are {list(SEATINGS)}")


def resolve_seating(seating: str, n: int, num_games: object) -> str:
    """The scheme ``seating`` stands for: ``"auto"`` is ``"permutations"`` when n! is at most
    :data:`MAX_AUTO_PERMUTATIONS` (2-4 players) and ``num_games`` is a multiple of n!, else
    ``"cyclic"``; ``"cyclic"`` and ``"permutations"`` stand for themselves.

    Raises:
        ConfigError: ``seating`` not ``"auto"``, ``"cyclic"`` or ``"permutations"``.
    """
    if seating == "auto":
        m = math.factorial(n)
        ok = (m <= MAX_AUTO_PERMUTATIONS and not isinstance(num_games, bool)
              and isinstance(num_games, (int, np.integer)) and num_games > 0 and num_games % m == 0)
        return "permutations" if ok else "cyclic"
    if seating not in SEATINGS:
        raise ConfigError(f"seating={seating!r}: legal values are {['auto'] + list(SEATINGS)}")
    return seating


def check_num_games(num_games: object, n: int, orders: int | None = None) -> int:
    """Return ``num_games`` as int if it is a positive multiple of the number of seat orders.

    Args:
        num_games: the games asked for.
        n: the player count.
        orders: the number of seat orders m (default n, the cyclic rotations; n! for every
            permutation).

    Raises:
        ConfigError: not an integer, not positive, above :data:`MAX_GAMES`, or not a multiple of
            m (the message gives the nearest legal values).
    """
    m = n if orders is None else orders
    what = "the player count" if m == n else "the number of seat orders"
    if isinstance(num_games, bool) or not isinstance(num_games, (int, np.integer)):
        raise ConfigError(f"num_games={num_games!r} must be a positive integer multiple of {m}")
    g = int(num_games)
    if g > MAX_GAMES:
        top = MAX_GAMES - MAX_GAMES % m
        raise ConfigError(f"num_games={g} is above the most games of one tournament, {MAX_GAMES:,} (the schedule and "
                          f"every game's record are kept in memory); legal values: multiples of {m} up to {top}")
    if g <= 0 or g % m:
        lower = max(m, g - g % m)
        upper = lower + m if g > lower else lower
        near = sorted({lower, upper})
        raise ConfigError(
            f"num_games={g} must be a positive multiple of {what} {m} so that every "
            f"seat order is played equally often; nearest legal values: {near}"
        )
    return g


def check_seed(seed: object) -> int:
    """Return ``seed`` as a non-negative int, else raise :class:`ConfigError`."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or int(seed) < 0:
        raise ConfigError(f"seed={seed!r} must be a non-negative integer")
    return int(seed)


def make_schedule(num_games: int, n: int, seed: int, duplicate: bool,
                  seating: str = "cyclic") -> list[ScheduledGame]:
    """The list of ``num_games`` :class:`ScheduledGame` (see the module docstring for the scheme).

    Args:
        num_games: games in total, a positive multiple of the number of seat orders.
        n: player count.
        seed: tournament seed (non-negative int).
        duplicate: every deal played once per seat order (else one game per deal).
        seating: ``"cyclic"``, ``"permutations"`` or ``"auto"`` (:func:`resolve_seating`).

    Raises:
        ConfigError: bad ``seating``, ``num_games`` (see :func:`check_num_games`) or ``seed``.
    """
    orders = seat_orders(n, resolve_seating(seating, n, num_games))
    m = len(orders)
    num_games = check_num_games(num_games, n, m)
    seed = check_seed(seed)
    per_deal = m if duplicate else 1
    num_deals = num_games // per_deal
    root = np.random.SeedSequence(seed)
    specs: list[ScheduledGame] = []
    for d, deal_seq in enumerate(root.spawn(num_deals)):
        env_seed = int(deal_seq.generate_state(1, dtype=np.uint32)[0])
        for r_in_deal, game_seq in enumerate(deal_seq.spawn(per_deal)):
            index = d * per_deal + r_in_deal
            order = index % m
            bot_seeds = tuple(int(s) for s in game_seq.generate_state(n, dtype=np.uint32))
            specs.append(ScheduledGame(index, d, order, env_seed, orders[order], bot_seeds))
    return specs
