"""The table's rule options, as bots are told them.

A bot sees only its seat's observation dict, which does not say which rule options the table
plays (Ronda Robada's ``closing_ace``, ``may_take_own_pile``, ``leftovers_to_last_runner``:
:data:`robada_env.rules.engine.RULE_OPTIONS`; Tapeo's environment has none). So every bot of a
game takes the game's rule options as keyword arguments, checked here, and whoever builds bots
for a table passes them on: ``agents.make("robada", "expert", seed=0, closing_ace=False)``,
the tournament (``hod.evaluation.play``) from its ``env_kwargs``.
"""
from __future__ import annotations

from typing import Any, Mapping, Optional

from hod.core.errors import ConfigError

__all__ = ["rule_options", "table_rules", "robada_rules", "check_rules"]


def rule_options(game: str) -> tuple:
    """Names of the rule options of ``game``'s environment that bots take (a tuple of str).

    Raises:
        ConfigError: unknown game (the legal ones are named).
    """
    if game == "robada":
        from robada_env.rules.engine import RULE_OPTIONS

        return tuple(RULE_OPTIONS)
    if game == "tapeo":
        from tapeo_env.rules.engine import RULE_OPTIONS as TAPEO_OPTIONS

        return tuple(TAPEO_OPTIONS)
    raise ConfigError(f"unknown game {game!r}; legal values: ['robada', 'tapeo']")


def table_rules(game: str, env_kwargs: Optional[Mapping[str, Any]]) -> dict:
    """The rule options among an environment's keyword arguments (what to pass to every bot).

    Args:
        game: ``"tapeo"`` or ``"robada"``.
        env_kwargs: options of ``raw_env`` (others than rule options are left out).

    Returns:
        dict ``{option: value}``, possibly empty.
    """
    names = rule_options(game)
    return {k: v for k, v in dict(env_kwargs or {}).items() if k in names}


def robada_rules(rules: Any = None, options: Optional[dict] = None):
    """The Ronda Robada rules a bot plays under, from ``rules`` or from rule options.

    Args:
        rules: a :class:`robada_env.rules.engine.Config` (its ``num_players`` is ignored: bots read
            the player count from the observation), or None.
        options: keyword arguments given to a bot; the rule options among them
            (:data:`~robada_env.rules.engine.RULE_OPTIONS`) are REMOVED from the dict, the rest
            is left for the bot to check.

    Returns:
        :class:`robada_env.rules.engine.Config` (default ``Config()`` = the published rules).

    Raises:
        ConfigError: ``rules`` not a Config, both ``rules`` and rule options given, or a value
            that is not a bool (the message names the legal values).
    """
    from robada_env.rules.engine import RULE_OPTIONS, Config

    given = {k: options.pop(k) for k in RULE_OPTIONS if options is not None and k in options}
    if rules is not None:
        if not isinstance(rules, Config):
            raise ConfigError(f"rules must be a robada_env.rules.engine.Config, got {type(rules).__name__}")
        if given:
            raise ConfigError(f"give either rules=Config(...) or the rule options {sorted(given)}, not both")
        return rules
    for k, v in given.items():
        if not isinstance(v, bool):
            raise ConfigError(f"{k}={v!r}: legal values are True and False")
    return Config(**given)


def check_rules(game: str, options: Mapping[str, Any]) -> None:
    """Check rule options for ``game`` (bots that need no rules, e.g. ``random``, still refuse
    bad ones, so a table's typo is caught whatever bot sits there).

    Raises:
        ConfigError: an option ``game`` does not have (the legal ones are named) or a bad value.
    """
    legal = rule_options(game)
    unknown = sorted(set(options) - set(legal))
    if unknown:
        raise ConfigError(f"unknown rule option(s) {unknown} for {game}; legal options: {list(legal)}")
    if game == "robada":
        robada_rules(None, dict(options))
