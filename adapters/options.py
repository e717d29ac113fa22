"""Validation of the options every environment of both games takes (docs/DESIGN.md,
"Environment contract"): ``render_mode``, ``reward_scheme``, ``illegal_action``, ``max_cycles``,
unknown options, and the ``seed`` and ``options`` of ``reset``. One path for both games, so the
same bad value gets the same error, naming the legal values, whichever game it is given to.

A refused ``reset`` changes nothing (docs/DESIGN.md, "Environment contract"): :func:`check_seed`
and :func:`check_reset_options` only read their argument, and :meth:`GameSeeds.deal` changes
the seed source only once the deal succeeded. The seed range is the engines' own
(:data:`hod.core.deal.SEED_LIMIT`), so no seed that passes the check is refused by an engine.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Callable, Iterable, Optional, TypeVar

import numpy as np

from hod.core.deal import SEED_RANGE, is_seed
from hod.core.errors import ConfigError, UnknownOptionError, check_choice, check_int_range
from hod.core.rewards import REWARD_SCHEMES
from .wrappers import ILLEGAL_ACTION_MODES

#: Render modes of every environment (``None`` is also accepted: no rendering).
RENDER_MODES = ("ansi", "human")
#: Largest ``max_cycles`` accepted (any real limit is far below).
MAX_CYCLES_LIMIT = 10**9
#: What ``reset(seed=...)`` accepts, as the error messages say it (the engines' range,
#: :data:`hod.core.deal.SEED_LIMIT`).
SEED_VALUES = f"None or an int in {SEED_RANGE}"
#: What ``reset(options=...)`` accepts, as the error messages say it.
RESET_OPTIONS_VALUES = "None or a dict (the environments take no reset options: its keys are ignored)"
#: Game seeds drawn by an unseeded ``reset()`` are in ``0 .. DRAWN_SEED_LIMIT - 1``.
DRAWN_SEED_LIMIT = 2**62

T = TypeVar("T")


def check_unknown_options(unknown: Iterable[str], legal: Iterable[str]) -> None:
    """Raise :class:`~hod.core.errors.UnknownOptionError` if ``unknown`` is not empty.

    Args:
        unknown: names of the keyword arguments the environment did not recognise.
        legal: every option the environment takes (listed in the message, in this order).
    """
    unknown = sorted(unknown)
    if unknown:
        err = UnknownOptionError(f"unknown option(s) {unknown}; legal options: {list(legal)}")
        err.unknown, err.legal = unknown, list(legal)   # a caller that sets some options itself narrows them
        raise err


def check_env_options(render_mode: Optional[str], reward_scheme: str, illegal_action: str,
                      max_cycles: object) -> int:
    """Check the options shared by every environment; return ``max_cycles`` as an int.

    Legal values: ``render_mode`` in ``None`` + :data:`RENDER_MODES`; ``reward_scheme`` in
    :data:`hod.core.rewards.REWARD_SCHEMES`; ``illegal_action`` in
    :data:`hod.adapters.wrappers.ILLEGAL_ACTION_MODES`; ``max_cycles`` an int in
    ``1..MAX_CYCLES_LIMIT`` (bools and floats refused).

    Raises:
        ConfigError: the first value outside its legal set (the message names the legal values).
    """
    check_choice("render_mode", render_mode, (None,) + RENDER_MODES)
    check_choice("reward_scheme", reward_scheme, REWARD_SCHEMES)
    check_choice("illegal_action", illegal_action, ILLEGAL_ACTION_MODES)
    return check_int_range("max_cycles", max_cycles, 1, MAX_CYCLES_LIMIT)


def check_seed(seed: object) -> Optional[int]:
    """The ``seed`` of ``reset(seed=...)`` as an int, or None. Changes nothing.

    Legal values: None, or an integer (Python ``int`` or numpy integer, not a bool) in
    ``0..2**64-1``, the range every engine deals from (:func:`hod.core.deal.is_seed`).

    Raises:
        ConfigError: anything else (negative, ``2**64`` or more, a bool, a float, a string); the
            message names the legal values (:data:`SEED_VALUES`).
    """
    if seed is None:
        return None
    if not is_seed(seed):
        raise ConfigError(f"seed={seed!r} is not allowed; legal values: {SEED_VALUES}")
    return int(seed)


def check_reset_options(options: object) -> None:
    """Check the ``options`` of ``reset(seed=..., options=...)``: None or a dict (any mapping).
    The environments take no reset options, so a dict's keys are ignored (PettingZoo's API test
    passes ``{"options": 1}``). Changes nothing.

    Raises:
        ConfigError: anything else (``5``, ``"x"``, a list); the message names the legal values
            (:data:`RESET_OPTIONS_VALUES`).
    """
    if options is not None and not isinstance(options, Mapping):
        raise ConfigError(f"options={options!r} is not allowed; legal values: {RESET_OPTIONS_VALUES}")


class GameSeeds:
    """The game seed of each ``reset`` of an environment (both games; docs/DESIGN.md, Seeding).

    ``deal(s, f)`` with a seed deals ``f(s)`` and restarts the source from ``s``; ``deal(None, f)``
    draws a seed in ``0..2**62-1`` from a ``numpy.random.Generator`` seeded with the last seed
    given (fresh entropy if none was). So ``reset(seed=s)`` then ``reset()`` ... is one fixed
    sequence of games, and each game is dealt again by ``reset(seed=game_seed)``. The generator
    is only built when an unseeded reset needs it (no cost on seeded resets). A refused seed, or a
    deal that raises, leaves the source as it was.
    """

    def __init__(self) -> None:
        self._source: np.random.Generator | int | None = None

    def deal(self, seed: object, deal: Callable[[int], T]) -> tuple[int, T]:
        """The next game's seed and ``deal(game_seed)`` (see the class docstring).

        Args:
            seed: None (draw the game seed) or the game seed (:func:`check_seed`).
            deal: builds the game from its seed (the engine's ``new_game``).

        Returns:
            ``(game_seed, deal(game_seed))``; the source moves on only once ``deal`` returned.

        Raises:
            ConfigError: ``seed`` is not None or an int in ``0..2**64-1`` (:func:`check_seed`);
                nothing changes. Whatever ``deal`` raises, with the source unchanged.
        """
        seed = check_seed(seed)
        if seed is not None:
            game = deal(seed)
            self._source = seed
            return seed, game
        source = self._source
        if isinstance(source, np.random.Generator):
            gen, saved = source, source.bit_generator.state
        else:
            gen, saved = np.random.default_rng(source), None
        game_seed = int(gen.integers(DRAWN_SEED_LIMIT))
        try:
            game = deal(game_seed)
        except BaseException:
            if saved is not None:
                gen.bit_generator.state = saved
            raise
        self._source = gen
        return game_seed, game
