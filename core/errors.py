"""Exceptions raised by the engines, environments, agents and checkpoint loaders.

All derive from ``ValueError`` so that callers catching bad input generically keep working.
"""
from __future__ import annotations

from typing import Iterable, Optional

import numpy as np


class ConfigError(ValueError):
    """A game or environment option has a value outside its legal set (e.g. a player count)."""


class IllegalActionError(ValueError):
    """An action outside the current action mask was played. The state is left unchanged.

    The message names the acting agent, the offending action and the legal actions.
    """

    def __init__(self, agent: str, action: object, legal: Iterable[object], names=None):
        legal = list(legal)
        if names is not None:
            shown = ", ".join(f"{a} ({names(a)})" for a in legal)
        else:
            shown = ", ".join(str(a) for a in legal)
        super().__init__(f"illegal action {action!r} for {agent}; legal actions: [{shown}]")
        self.agent = agent
        self.action = action
        self.legal = legal
        self._names = names

    def __reduce__(self):
        # Picklable (e.g. raised in a worker process): rebuild from the constructor arguments.
        return (type(self), (self.agent, self.action, self.legal, self._names))


class RecordError(ValueError):
    """A game record (JSON) is malformed, for another game, or does not replay to its scores."""


def _same_kind(value: object, legal: object) -> bool:
    """True if ``value`` has the type ``legal`` has, as options are checked: ``None`` only for
    None, a Python ``bool`` for a bool (not ``1``/``0``/``1.0``/``numpy.bool_``), an integer that
    is not a bool (Python or numpy) for an int, a ``str`` for a str, else the exact type."""
    if legal is None:
        return value is None
    if isinstance(legal, bool):
        return type(value) is bool
    if isinstance(legal, int):
        return isinstance(value, (int, np.integer)) and not isinstance(value, bool)
    if isinstance(legal, str):
        return isinstance(value, str)
    return type(value) is type(legal)


def check_choice(name: str, value: object, legal: Iterable[object]) -> None:
    """Raise :class:`ConfigError` unless ``value`` is one of ``legal``, by value and by type
    (``round_rewards=1`` is refused where the legal values are ``[False, True]``: see
    :func:`_same_kind`); the message lists the legal values."""
    legal = list(legal)
    if not any(_same_kind(value, ok) and value == ok for ok in legal):
        kind = ""
        try:
            like = next((ok for ok in legal if ok is not None and bool(value == ok)), None)
        except (TypeError, ValueError):       # an array or another value without a plain ==
            like = None
        if like is not None:
            t = type(value)
            tname = t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"
            want = type(like).__name__
            kind = f" (equal to {like!r} but of type {tname}: give {'an' if want[0] in 'aeiou' else 'a'} {want})"
        raise ConfigError(f"{name}={value!r} is not allowed{kind}; legal values: {legal}")


def check_int_range(name: str, value: object, lo: int, hi: int) -> int:
    """Return ``value`` as int if ``lo <= value <= hi`` (bools rejected), else raise ConfigError.

    The message lists the legal values when there are at most 20 of them, else gives the range.
    """
    legal = list(range(lo, hi + 1)) if hi - lo < 20 else f"integers {lo}..{hi}"
    if isinstance(value, bool) or not isinstance(value, (int,)) and not hasattr(value, "__index__"):
        raise ConfigError(f"{name}={value!r} must be an integer; legal values: {legal}")
    v = int(value)
    if not lo <= v <= hi:
        raise ConfigError(f"{name}={value!r} is out of range; legal values: {legal}")
    return v


def check_seat(seat: object, num_players: int) -> int:
    """Return ``seat`` as an int if it is a seat of a ``num_players`` table (``0..num_players-1``),
    else raise :class:`ConfigError` naming the legal seats. The one check of the seat arguments
    of both games' engine functions: a Python or numpy integer (not a bool); ``-1`` (no
    wrap-around), ``num_players`` and ``1.0`` are refused."""
    if type(seat) is int and 0 <= seat < num_players:   # the common case, no call
        return seat
    return check_int_range("seat", seat, 0, num_players - 1)


def action_id(action: object, num_actions: int) -> Optional[int]:
    """``action`` as an int if it is an action of ``Discrete(num_actions)``, else None.

    The one check of the type and range of an action, used by both games' adapters (AEC and
    Parallel) and engines: a Python ``int`` (not a ``bool``) or a numpy integer scalar
    (``numpy.int64(3)``) in ``0..num_actions-1``. Floats (``12.0``), bools, 0-d or larger arrays,
    strings and None give None: the caller treats the action as illegal
    (:class:`IllegalActionError` naming the legal actions, or the ``"lose"`` outcome).
    """
    if type(action) is int or isinstance(action, np.integer):
        a = int(action)
        if 0 <= a < num_actions:
            return a
    return None


class UnknownOptionError(ConfigError, TypeError):
    """An environment was given an option it does not know (e.g. ``players=4``).

    Both a :class:`ConfigError` (so a ``ValueError``) and a ``TypeError`` (what Python raises for
    an unexpected keyword argument), so callers catching either keep working. The message lists
    the legal options.
    """


class UnknownAgentError(KeyError, ConfigError):
    """An environment was asked about an agent it does not have (``observe("nosuch")``).

    A ``KeyError`` (what the spaces' dict lookups raised before) and a :class:`ConfigError`; the
    message names the legal agents and prints without ``KeyError``'s quotes.
    """

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class ResetNeededError(ValueError, RuntimeError):
    """An environment was stepped with no game in progress: before its first ``reset()``, or
    after the game ended (every agent done). The message says to call ``reset()``; nothing
    changes. Also a ``RuntimeError``, what Gymnasium's own envs raise for a step before reset."""
