"""The table's rule options, as bots are told them.

A bot sees only its seat's observation dict, which does not say which rule options the table
plays. The options are declared once per game in its :class:`hod.core.games.GameInfo`
(``rule_options``: Ronda Robada's ``closing_ace`` (R2), ``may_take_own_pile`` (R3) and
``leftovers_to_last_runner`` (R7); Tapeo's environment has none). Every registered bot takes its
game's rule options as keyword arguments (checked here and by :func:`hod.agents.registry.make`),
and whoever builds bots for a table passes them on: ``agents.make("robada", "expert", seed=0,
closing_ace=False)``; the tournament (``hod.evaluation.play``) and the batched training
opponents (``hod.training.pool.BatchOpponents``) take them from the environment's options.
"""
from __future__ import annotations

from typing import Any, Mapping, Optional

from hod.core.errors import ConfigError
from hod.core.games import get_game
from robada_env.rules.engine import Config

__all__ = ["rule_options", "table_rules", "robada_rules", "check_rules", "ROBADA_RULE_OPTIONS"]

#: Names of Ronda Robada's rule options (from its declaration, ``robada_env.rules.game.GAME``).
ROBADA_RULE_OPTIONS: tuple = tuple(o.name for o in get_game("robada").rule_options)


def rule_options(game: str) -> tuple:
    """Names of ``game``'s rule options (a tuple of str; ``()`` for Tapeo).

    Raises:
        ConfigError: unknown game (the legal ones are named).
    """
    return tuple(o.name for o in get_game(game).rule_options)


def table_rules(game: str, env_kwargs: Optional[Mapping[str, Any]]) -> dict:
    """The rule options among an environment's keyword arguments (what to tell every bot).

    Args:
        game: a game name (``hod.core.games.game_names()``).
        env_kwargs: options of ``raw_env``; the others than rule options are left out.

    Returns:
        dict ``{option: value}``, possibly empty.

    Raises:
        ConfigError: unknown game, or a rule option's value outside its legal values (named).
    """
    return get_game(game).check_rule_options(dict(env_kwargs or {}))


def check_rules(game: str, options: Mapping[str, Any]) -> dict:
    """Check rule options for ``game``: every key must be one of its rule options.

    Returns:
        the options as a dict.

    Raises:
        ConfigError: an option ``game`` does not have (the legal ones are named) or a value
            outside the option's legal values.
    """
    legal = rule_options(game)
    unknown = sorted(set(options) - set(legal))
    if unknown:
        raise ConfigError(f"unknown rule option(s) {unknown} for {game}; legal options: {list(legal)}")
    return get_game(game).check_rule_options(options)


def robada_rules(rules: Optional[Config] = None, options: Optional[dict] = None) -> Config:
    """The Ronda Robada rules a bot plays under, from ``rules`` or from rule options.

    Args:
        rules: a :class:`robada_env.rules.engine.Config` (its ``num_players`` is ignored: bots read
            the player count from the observation), or None.
        options: keyword arguments given to a bot; the rule options among them
            (:data:`ROBADA_RULE_OPTIONS`) are REMOVED from the dict, the rest is left for the bot
            to check.

    Returns:
        :class:`robada_env.rules.engine.Config` (default ``Config()``: the published rules).

    Raises:
        ConfigError: ``rules`` not a Config, both ``rules`` and rule options given, or a value
            outside an option's legal values (the message names them).
    """
    given = {k: options.pop(k) for k in ROBADA_RULE_OPTIONS if options is not None and k in options}
    if rules is not None:
        if not isinstance(rules, Config):
            raise ConfigError(f"rules must be a robada_env.rules.engine.Config, got {type(rules).__name__}")
        if given:
            raise ConfigError(f"give either rules=Config(...) or the rule options {sorted(given)}, not both")
        return rules
    return Config(**check_rules("robada", given))
