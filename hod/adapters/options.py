"""Validation of the options every environment of both games takes (docs/DESIGN.md,
"Environment contract"): ``render_mode``, ``reward_scheme``, ``illegal_action``, ``max_cycles``,
unknown options, and the ``seed`` of ``reset``. One path for both games, so the same bad value
gets the same error, naming the legal values, whichever game it is given to.
"""
from __future__ import annotations

from typing import Iterable, Optional

import numpy as np

from hod.core.errors import ConfigError, UnknownOptionError, check_choice, check_int_range
from hod.core.rewards import REWARD_SCHEMES
from .wrappers import ILLEGAL_ACTION_MODES

#: Render modes of every environment (``None`` is also accepted: no rendering).
RENDER_MODES = ("ansi", "human")
#: Largest ``max_cycles`` accepted (any real limit is far below).
MAX_CYCLES_LIMIT = 10**9
#: What ``reset(seed=...)`` accepts, as the error messages say it.
SEED_VALUES = "None or a non-negative int"


def check_unknown_options(unknown: Iterable[str], legal: Iterable[str]) -> None:
    """Raise :class:`~hod.core.errors.UnknownOptionError` if ``unknown`` is not empty.

    Args:
        unknown: names of the keyword arguments the environment did not recognise.
        legal: every option the environment takes (listed in the message, in this order).
    """
    unknown = sorted(unknown)
    if unknown:
        raise UnknownOptionError(f"unknown option(s) {unknown}; legal options: {list(legal)}")


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
    """The ``seed`` of ``reset(seed=...)`` as an int, or None.

    Raises:
        ConfigError: anything but None or a non-negative integer (bools and floats refused); the
            message names the legal values (:data:`SEED_VALUES`).
    """
    if seed is None:
        return None
    if isinstance(seed, bool) or not hasattr(seed, "__index__") or seed.__index__() < 0:
        raise ConfigError(f"seed={seed!r} is not allowed; legal values: {SEED_VALUES}")
    return seed.__index__()


class GameSeeds:
    """The game seed of each ``reset`` of an environment (both games; docs/DESIGN.md, Seeding).

    ``next(s)`` with a seed returns ``s`` and restarts the source from it; ``next(None)`` draws a
    seed in ``0..2**62-1`` from a ``numpy.random.Generator`` seeded with the last seed given
    (fresh entropy if none was). So ``reset(seed=s)`` then ``reset()`` ... is one fixed sequence of
    games, and each game is dealt again by ``reset(seed=game_seed)``. The generator is only built
    when an unseeded reset needs it (no cost on seeded resets).
    """

    def __init__(self) -> None:
        self._source: np.random.Generator | int | None = None

    def next(self, seed: object = None) -> int:
        """The seed of the next game (see the class docstring).

        Raises:
            ConfigError: ``seed`` is not None or a non-negative int (:func:`check_seed`).
        """
        seed = check_seed(seed)
        if seed is not None:
            self._source = seed
            return seed
        if not isinstance(self._source, np.random.Generator):
            self._source = np.random.default_rng(self._source)
        return int(self._source.integers(2**62))
