"""Registry of bots by game and name: ``agents.make("tapeo", "expert", seed=0)``.

Where the names come from, in this order (a later one replaces an earlier one of the same name):

1. the bots that register themselves for the game: the installed entry points of the group
   ``hod.bots`` (:data:`ENTRY_POINT_GROUP`) named after the game, each naming a mapping in its bot
   module, registry name -> factory or ``"module:attr"`` string (the string's module imported only
   when a bot of that name is made or inspected). ``pyproject.toml``: ``tapeo =
   "hod.agents.tapeo_bots:BOTS"``; a game in one folder registers its own (``kuhn =
   "kuhn_env.bots:BOTS"``), and another distribution may add bots to any game the same way. The
   game's declaration (:class:`hod.core.games.GameInfo`) names no bot: the registry points down;
2. the shipped trained opponents, ``agents/opponents/<game>_ppo*.onnx`` (``"ppo"``, ...);
3. :func:`register` calls at run time (a user's own bots).
"""
from __future__ import annotations

import functools
import inspect
from collections.abc import Mapping
from importlib.metadata import entry_points
from typing import Any, Callable, Dict, Optional, Tuple, Union

from hod.core.errors import ConfigError, UnknownOptionError, check_choice
from hod.core.games import game_names, get_game, load_object

from .base import Bot, check_bot_seed, check_player_count
from .onnx_policy import card_player_counts, shipped_factories, shipped_opponents

#: A factory ``f(seed=..., **kwargs) -> Bot``, or its ``"module:attr"`` entry point.
Factory = Union[str, Callable[..., Bot]]
_REGISTERED: Dict[Tuple[str, str], Factory] = {}
#: Entry-point group of the bots a package registers for a game: name = the game, value =
#: ``"module:MAPPING"``, a mapping of registry names to factories (or their ``"module:attr"``).
ENTRY_POINT_GROUP = "hod.bots"


def _check_game(game: str) -> str:
    if not isinstance(game, str) or game not in game_names():
        raise ConfigError(f"unknown game {game!r}; legal values: {game_names()}")
    return game


@functools.lru_cache(maxsize=None)
def installed_bots(game: str) -> Dict[str, Factory]:
    """The bots the installed packages register for ``game`` (entry points of
    :data:`ENTRY_POINT_GROUP` named ``game``, in the order of their values; a later one replaces an
    earlier bot of the same name): registry name -> factory or ``"module:attr"``. Loading an entry
    point imports its bot module (not the modules its strings name). Read once per process.

    Raises:
        ConfigError: an entry point that cannot be loaded or is not a mapping of non-empty
            string names to callables or ``"module:attr"`` strings (the entry point named).
    """
    out: Dict[str, Factory] = {}
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP, name=game), key=lambda e: e.value):
        bots = load_object(ep.value)
        if not isinstance(bots, Mapping) or not all(
                isinstance(k, str) and k and (isinstance(f, str) or callable(f)) for k, f in bots.items()):
            raise ConfigError(f"entry point {ENTRY_POINT_GROUP} {ep.name} = {ep.value} is not a mapping of bot names "
                              f"to factories or 'module:attr' strings")
        out.update(bots)
    return out


def _factories(game: str) -> Dict[str, Factory]:
    out: Dict[str, Factory] = dict(installed_bots(_check_game(game)))
    out.update(shipped_factories(game))
    out.update({n: f for (g, n), f in _REGISTERED.items() if g == game})
    return out


def register(game: str, name: str, factory: Factory) -> None:
    """Register ``factory(seed=..., **kwargs) -> Bot`` (or its ``"module:attr"`` string) as bot
    ``name`` of ``game``; it replaces an installed bot (:func:`installed_bots`) or shipped opponent of
    the same name.

    Raises:
        ConfigError: unknown game (legal values listed) or an empty name.
    """
    _check_game(game)
    if not isinstance(name, str) or not name:
        raise ConfigError(f"bot name must be a non-empty string, got {name!r}")
    _REGISTERED[(game, name)] = factory


def names(game: str) -> list[str]:
    """Registered bot names for ``game``, sorted.

    Raises:
        ConfigError: unknown game (legal values listed).
    """
    return sorted(_factories(game))


def factory(game: str, name: str) -> Callable[..., Bot]:
    """The factory of bot ``name`` of ``game`` (its entry point imported if needed).

    Raises:
        ConfigError: unknown game or bot name (the message lists the registered names).
    """
    found = _factories(game)
    if not isinstance(name, str) or name not in found:
        raise ConfigError(f"no bot {name!r} for {game!r}; registered: {sorted(found)}")
    f = found[name]
    return load_object(f) if isinstance(f, str) else f


def needs_belief(game: str, name: str) -> bool:
    """Whether registered bot ``name`` is a search bot (its class sets ``needs_belief``: it must be
    given ``belief(rng)`` samples of the hidden state, see :class:`hod.agents.base.Bot`).

    Raises:
        ConfigError: unknown game or bot name (the message lists the registered names).
    """
    return bool(getattr(factory(game, name), "needs_belief", False))


def player_counts(game: str, name: str) -> Optional[tuple]:
    """The table sizes registered bot ``name`` of ``game`` supports (:attr:`Bot.player_counts`),
    without building it: a shipped ONNX opponent's come from its model card (``NAME.json``),
    any other bot's from its factory's ``player_counts`` attribute; None means every table size.

    Raises:
        ConfigError: unknown game or bot name (the message lists the registered names).
    """
    f = factory(game, name)
    shipped = shipped_opponents(game)
    if name in shipped and (game, name) not in _REGISTERED:
        return card_player_counts(shipped[name])
    counts = getattr(f, "player_counts", None)
    return tuple(counts) if counts is not None else None


def _bound_options(f: Any) -> set[str]:
    """The parameters a registry entry binds (a :func:`functools.partial`'s bound positional
    and keyword arguments), which a caller's options may not set again."""
    if not isinstance(f, functools.partial):
        return set()
    params = list(inspect.signature(f.func).parameters)
    return set(params[:len(f.args)]) | set(f.keywords)


def make(game: str, name: str, seed: Optional[int] = None, num_players: Optional[int] = None, **kwargs: Any) -> Bot:
    """Build a registered bot; ``bot.game`` and ``bot.name`` are set to ``game`` and ``name``.

    Every registered bot takes the game's rule options (:func:`hod.agents.rules.rule_options`;
    e.g. ``make("robada", "expert", seed=0, closing_ace=False)``) besides its own options.

    ``num_players``: the table size the bot will play (None: not said). A bot that declares the
    table sizes it plays (:func:`player_counts`: a trained policy's model card) is refused at
    another size before it is built, and checked again once built (its loaded card). Whatever
    ``num_players`` says, such a bot refuses an observation of a table size it does not list
    (:meth:`hod.agents.base.Bot.act` reads the size from the observation's ``num_players`` piece).

    Raises:
        ConfigError: unknown game or bot name (the message lists the registered names), an
            option the bot refuses, a rule option's value outside its legal values (named), a
            seed that is not None or a non-negative int (:func:`hod.agents.base.check_bot_seed`),
            a ``num_players`` that is not a table size of the game (the legal ones named), one
            the bot's model card does not list (its sizes named), or an option its registry entry
            binds (a shipped opponent's ``path``).
    """
    f = factory(game, name)
    seed = check_bot_seed(seed)
    info = get_game(game)
    if num_players is not None:
        check_choice("num_players", num_players, info.player_counts)
        counts = player_counts(game, name)
        if counts is not None and num_players not in counts:
            raise ConfigError(f"{game} bot {name!r} was trained for {list(counts)} players, not {num_players}; "
                              f"legal table sizes for it: {list(counts)}")
    fixed = sorted(set(kwargs) & _bound_options(f))
    if fixed:   # e.g. a shipped opponent's path and game, bound by its registry entry
        raise ConfigError(f"option(s) {fixed} of {game} bot {name!r} are fixed by its registry entry; legal: "
                          f"the bot's other options")
    rules = info.check_rule_options(kwargs)   # the table's rule options, values checked
    if getattr(f, "rule_blind", False):       # a bot that plays under any rules (random): told, not kept
        rest = sorted(k for k in kwargs if k not in rules)
        if rest:
            raise ConfigError(f"unknown option(s) {rest} for {game} bot {name!r}; legal options: "
                              f"{['seed', 'num_players'] + [o.name for o in info.rule_options]}")
        kwargs = {}
    try:
        bot = f(seed=seed, **kwargs)
    except UnknownOptionError as e:   # name the registry's bot, without the options its entry binds
        legal, bound = getattr(e, "legal", None), _bound_options(f)
        if legal is None:
            raise
        keep = [p for p in legal if p not in bound]
        err = UnknownOptionError(f"unknown option(s) {e.unknown} for {game} bot {name!r}; legal options: {keep}")
        err.unknown, err.legal = e.unknown, keep
        raise err from None
    bot.game, bot.name = game, name
    if num_players is not None:   # the card the bot loaded (the side card read above may be missing)
        check_player_count(bot, int(num_players))
    return bot
