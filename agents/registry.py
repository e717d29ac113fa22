"""Registry of bots by game and name: ``agents.make("tapeo", "expert", seed=0)``."""
from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Tuple

from hod.core.errors import ConfigError

from .base import Bot, RandomBot

GAMES = ("tapeo", "robada")
_REGISTRY: Dict[Tuple[str, str], Callable[..., Bot]] = {}


def register(game: str, name: str, factory: Callable[..., Bot]) -> None:
    """Register ``factory(seed=..., **kwargs) -> Bot`` as bot ``name`` of ``game``."""
    if game not in GAMES:
        raise ConfigError(f"unknown game {game!r}; legal values: {list(GAMES)}")
    _REGISTRY[(game, name)] = factory


def names(game: str) -> list[str]:
    """Registered bot names for ``game``, sorted."""
    if game not in GAMES:
        raise ConfigError(f"unknown game {game!r}; legal values: {list(GAMES)}")
    return sorted(n for g, n in _REGISTRY if g == game)


def needs_belief(game: str, name: str) -> bool:
    """Whether registered bot ``name`` is a search bot (its class sets ``needs_belief``: it must be
    given ``belief(rng)`` samples of the hidden state, see :class:`hod.agents.base.Bot`).

    Raises:
        ConfigError: unknown game or bot name (the message lists the registered names).
    """
    if (game, name) not in _REGISTRY:
        raise ConfigError(f"no bot {name!r} for {game!r}; registered: {names(game)}")
    return bool(getattr(_REGISTRY[(game, name)], "needs_belief", False))


def make(game: str, name: str, seed: Optional[int] = None, **kwargs: Any) -> Bot:
    """Build a registered bot.

    Every registered bot takes the game's rule options (:func:`hod.agents.rules.rule_options`;
    e.g. ``make("robada", "expert", seed=0, closing_ace=False)``) besides its own options.

    Raises:
        ConfigError: unknown game or bot name (the message lists the registered names), an
            unknown option or a bad value (the legal ones are named).
    """
    if (game, name) not in _REGISTRY:
        raise ConfigError(f"no bot {name!r} for {game!r}; registered: {names(game)}")
    bot = _REGISTRY[(game, name)](seed=seed, **kwargs)
    bot.game, bot.name = game, name
    return bot


class _RandomFactory:
    """Builds the ``random`` bot of one game: it takes the game's rule options (checked, then
    unused: a uniform choice over the mask is legal under any rules, :mod:`hod.agents.rules`)."""

    def __init__(self, game: str) -> None:
        self.game = game

    def __call__(self, seed: Optional[int] = None, **options: Any) -> Bot:
        from .rules import check_rules, rule_options

        names = rule_options(self.game)
        if options.keys() - set(names):
            raise ConfigError(f"unknown option(s) {sorted(options.keys() - set(names))} for RandomBot of "
                              f"{self.game}; legal options: {['seed'] + list(names)}")
        check_rules(self.game, options)
        return RandomBot(seed=seed)


for _g in GAMES:
    register(_g, "random", _RandomFactory(_g))
