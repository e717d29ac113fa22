"""Exceptions raised by the engines, environments, agents and checkpoint loaders.

All derive from ``ValueError`` so that callers catching bad input generically keep working.
"""
from __future__ import annotations

from typing import Iterable


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


def check_choice(name: str, value: object, legal: Iterable[object]) -> None:
    """Raise :class:`ConfigError` unless ``value`` is one of ``legal``; the message lists them."""
    legal = list(legal)
    if value not in legal:
        raise ConfigError(f"{name}={value!r} is not allowed; legal values: {legal}")


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


class UnknownOptionError(ConfigError, TypeError):
    """An environment was given an option it does not know (e.g. ``players=4``).

    Both a :class:`ConfigError` (so a ``ValueError``) and a ``TypeError`` (what Python raises for
    an unexpected keyword argument), so callers catching either keep working. The message lists
    the legal options.
    """


class ResetNeededError(ValueError):
    """An environment was stepped with no game in progress: before its first ``reset()``, or
    after the game ended (every agent done). The message says to call ``reset()``; nothing
    changes."""
