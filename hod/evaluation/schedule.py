"""The tournament schedule: which deal each game uses, who sits where, and every seed.

Terms: a *slot* is one entry of the lineup (slot k = ``lineup[k]``); a *seat* is a position at
the table (seat i is agent ``player_i``, see docs/DESIGN.md). A *deal* is one environment seed;
``reset(seed=s)`` fixes the whole deal whoever sits where.

Seat rotation (both modes). Rotation ``r`` (0 <= r < n) puts slot k at seat ``(k + r) % n``, so
``seating[seat] = (seat - r) % n``. The slots keep their cyclic order round the table (who is on
whose left) and each slot sits at every seat equally often.

* ``duplicate=True``: game ``g`` plays deal ``g // n`` with rotation ``g % n``: every deal is
  played n times in a row, once per rotation, so each slot plays every seat's cards of every
  deal exactly once. ``num_games`` counts games, so there are ``num_games / n`` deals.
* ``duplicate=False``: game ``g`` plays its own deal ``g`` with rotation ``g % n``: ``num_games``
  deals, each slot at each seat ``num_games / n`` times.

In both modes ``num_games`` must be a multiple of the player count n (so that the rotation is
complete); otherwise :class:`~hod.core.errors.ConfigError` names the nearest legal values.

Seeds. ``root = numpy.random.SeedSequence(seed)``; deal ``d`` uses ``deal_seq = root.spawn(D)[d]``
(spawn key ``(d,)``, independent of how many deals there are): the environment seed is
``deal_seq.generate_state(1, uint32)[0]``; game ``r`` of that deal (r-th game played on it) takes
``deal_seq.spawn(games_per_deal)[r].generate_state(n, uint32)`` as the bot seeds of slots
``0..n-1``. Every seed is computed here, in the main process, before any game is played, so the
result cannot depend on how games are spread over worker processes.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hod.core.errors import ConfigError


@dataclass(frozen=True)
class ScheduledGame:
    """Everything needed to replay one tournament game.

    Attributes:
        index: game number, 0..num_games-1 (results are kept in this order).
        deal: deal number the game uses.
        rotation: r, slot k sits at seat (k + r) % n.
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


def check_num_games(num_games: object, n: int) -> int:
    """Return ``num_games`` as int if it is a positive multiple of ``n``.

    Raises:
        ConfigError: not an integer, not positive, or not a multiple of n (the message gives the
            nearest legal values).
    """
    if isinstance(num_games, bool) or not isinstance(num_games, (int, np.integer)):
        raise ConfigError(f"num_games={num_games!r} must be a positive integer multiple of {n}")
    g = int(num_games)
    if g <= 0 or g % n:
        lower = max(n, g - g % n)
        upper = lower + n if g > lower else lower
        near = sorted({lower, upper})
        raise ConfigError(
            f"num_games={g} must be a positive multiple of the player count {n} so that every "
            f"bot sits at every seat equally often; nearest legal values: {near}"
        )
    return g


def check_seed(seed: object) -> int:
    """Return ``seed`` as a non-negative int, else raise :class:`ConfigError`."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or int(seed) < 0:
        raise ConfigError(f"seed={seed!r} must be a non-negative integer")
    return int(seed)


def make_schedule(num_games: int, n: int, seed: int, duplicate: bool) -> list[ScheduledGame]:
    """The list of ``num_games`` :class:`ScheduledGame` (see the module docstring for the scheme).

    Raises:
        ConfigError: bad ``num_games`` (see :func:`check_num_games`) or ``seed``.
    """
    num_games = check_num_games(num_games, n)
    seed = check_seed(seed)
    per_deal = n if duplicate else 1
    num_deals = num_games // per_deal
    root = np.random.SeedSequence(seed)
    specs: list[ScheduledGame] = []
    for d, deal_seq in enumerate(root.spawn(num_deals)):
        env_seed = int(deal_seq.generate_state(1, dtype=np.uint32)[0])
        for r_in_deal, game_seq in enumerate(deal_seq.spawn(per_deal)):
            index = d * per_deal + r_in_deal
            rotation = index % n
            bot_seeds = tuple(int(s) for s in game_seq.generate_state(n, dtype=np.uint32))
            specs.append(
                ScheduledGame(index, d, rotation, env_seed, seating_for_rotation(n, rotation), bot_seeds)
            )
    return specs
