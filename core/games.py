"""Each game's static declaration, in one place, and the table of installed games.

A game declares its shape once, before any generic code touches it (as OpenSpiel's
``GameType``/``GameInfo`` do): a :class:`GameInfo` built in ``<game>_env/rules/game.py``. The
tournament, the throughput benchmark, training, export, the play apps and the bot registry read
these declarations instead of branching on the game's name.

The table of games is found through the Python entry-point group ``hod.games`` (declared in
``pyproject.toml``: ``tapeo = "tapeo_env.rules.game:GAME"``), so adding a third game is one folder
(its rules, its adapter and this declaration), one entry-point line, and its bots, which register
themselves for the game (entry-point group ``hod.bots``, read by :mod:`hod.agents.registry`: the
declaration holds facts about the game only). Loading a declaration imports its game package;
nothing here imports any game at import time.

Nothing here imports gymnasium, PettingZoo or torch.
"""
from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, Mapping, Optional

from .errors import ConfigError
from .layout import ObsLayout

#: Entry-point group listing the installed games (name -> ``module:GAME``).
ENTRY_POINT_GROUP = "hod.games"
#: Values of :attr:`GameInfo.dynamics`.
DYNAMICS = ("simultaneous", "sequential")


@dataclass(frozen=True)
class RuleOption:
    """One rule option of a game: a keyword of the engine's ``Config`` and of every env.

    Attributes:
        name: keyword name (e.g. ``"closing_ace"``).
        default: value under the printed rules.
        legal: the legal values (e.g. ``(True, False)``).
        ruling: where the rule is written (rules file and ruling, e.g.
            ``"ronda_robada.txt, RULINGS R2"``).
    """

    name: str
    default: Any
    legal: tuple
    ruling: str


@dataclass(frozen=True)
class GameInfo:
    """Static declaration of one game (what OpenSpiel splits into GameType and GameInfo).

    Attributes:
        name: short name used by the bot registry and every command line (``"tapeo"``).
        title: display name (``"Ronda Robada"``).
        package: import name of the game package (provides ``env``, ``raw_env``,
            ``parallel_env``, ``LAYOUT``, ``make_record``/``save_record``/``load_record``/``replay``).
        env_name: versioned PettingZoo name (``metadata["name"]``, e.g. ``"tapeo_v0"``).
        gym_id: id of the single-agent Gymnasium view (registered with a string entry point).
        min_players, max_players: legal table sizes, inclusive.
        dynamics: ``"simultaneous"`` (every seat decides each step) or ``"sequential"``.
        num_actions: size of the ``Discrete`` action space.
        action_names: readable name of each action id, ``len == num_actions``.
        layout: the observation layout (:class:`hod.core.layout.ObsLayout`): flat float32 vector
            of ``layout.size`` values, version ``layout.version`` (recorded in model cards).
        max_game_length: most steps (simultaneous: picks; sequential: decisions) one game takes.
        default_max_cycles: the envs' default ``max_cycles``.
        rule_options: the engine's rule options with their defaults and rulings.
        batched_engine: ``"module:Class"`` of the batched engine (implements
            :class:`hod.core.engine.BatchedEngine`).
        rules_file: the rules text the game implements (under ``shared/rules/``).
        state_layout: the global-state layout (PettingZoo's ``state()``, for critics that see
            the whole position during training): flat float32 vector of ``state_layout.size``
            values, version ``state_layout.version``; None if the game has none.
        state_encoder: ``"module:function"`` of the game's ``encode_state(state) -> float32
            (state_layout.size,)`` over its engine ``State`` (loaded lazily, :func:`load_object`).
        chance_hook: ``"module:object"`` of the game's chance events for luck-corrected evaluation
            (``count(state)``, ``redeal(state, seed)``, ``value(state)``: the protocol
            :class:`hod.evaluation.luck.ChanceHook`); None if the game has none.
    """

    name: str
    title: str
    package: str
    env_name: str
    gym_id: str
    min_players: int
    max_players: int
    dynamics: str
    num_actions: int
    action_names: tuple[str, ...]
    layout: ObsLayout
    max_game_length: int
    default_max_cycles: int
    rule_options: tuple[RuleOption, ...] = ()
    batched_engine: Optional[str] = None
    rules_file: str = ""
    state_layout: Optional[ObsLayout] = None
    state_encoder: Optional[str] = None
    chance_hook: Optional[str] = None

    def __post_init__(self) -> None:
        if self.dynamics not in DYNAMICS:
            raise ConfigError(f"dynamics={self.dynamics!r}; legal values: {list(DYNAMICS)}")
        if len(self.action_names) != self.num_actions:
            raise ConfigError(f"{self.name}: {len(self.action_names)} action names for {self.num_actions} actions")
        if not 1 <= self.min_players <= self.max_players:
            raise ConfigError(f"{self.name}: bad player range {self.min_players}..{self.max_players}")

    @property
    def player_counts(self) -> tuple[int, ...]:
        """Every legal table size, ascending."""
        return tuple(range(self.min_players, self.max_players + 1))

    @property
    def simultaneous(self) -> bool:
        """True when every seat decides at the same time each step (several learner seats can
        then share one table in a vectorized env)."""
        return self.dynamics == "simultaneous"

    @property
    def obs_size(self) -> int:
        """Length of the flat observation vector (float32)."""
        return int(self.layout.size)

    @property
    def obs_version(self) -> int:
        """Version of the observation layout."""
        return int(self.layout.version)

    @property
    def rule_defaults(self) -> dict[str, Any]:
        """``{option name: default}`` of :attr:`rule_options`."""
        return {o.name: o.default for o in self.rule_options}

    def module(self):
        """Import and return the game package (``package``)."""
        return importlib.import_module(self.package)

    def check_rule_options(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """The rule options of ``options`` (other keys ignored), checked against their legal values.

        Raises:
            ConfigError: a value outside an option's legal values (named in the message).
        """
        out = {}
        for o in self.rule_options:
            if o.name in options:
                v = options[o.name]
                if not any(v is x or (type(v) is type(x) and v == x) for x in o.legal):
                    raise ConfigError(f"{o.name}={v!r} is not allowed for {self.name}; legal values: {list(o.legal)}")
                out[o.name] = v
        return out


def load_object(spec: str) -> Any:
    """The object named by an entry-point string ``"package.module:attr"``.

    Raises:
        ConfigError: malformed string, missing module or attribute.
    """
    mod_name, sep, attr = spec.partition(":")
    if not sep or not mod_name or not attr:
        raise ConfigError(f"{spec!r} is not of the form 'module:attribute'")
    try:
        obj: Any = importlib.import_module(mod_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as e:
        raise ConfigError(f"cannot load {spec!r}: {e}") from e
    return obj


#: Games added at run time (tests' fake games); the installed ones come from the entry points.
_EXTRA: dict[str, GameInfo] = {}


@functools.lru_cache(maxsize=1)
def _installed() -> dict[str, GameInfo]:
    out: dict[str, GameInfo] = {}
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        info = ep.load()
        if not isinstance(info, GameInfo) or info.name != ep.name:
            raise ConfigError(f"entry point {ep.name} = {ep.value} is not the GameInfo of {ep.name!r}")
        out[ep.name] = info
    return out


def game_names() -> list[str]:
    """Names of every known game: the installed ones (entry points), then any added by
    :func:`register_game`."""
    return list(_installed()) + [g for g in _EXTRA if g not in _installed()]


def register_game(info: GameInfo) -> None:
    """Add a game at run time (tests use it for small fake games); an installed name is refused.

    Raises:
        ConfigError: the name is an installed game's.
    """
    if info.name in _installed():
        raise ConfigError(f"{info.name!r} is an installed game")
    _EXTRA[info.name] = info


def get_game(game: str) -> GameInfo:
    """The declaration of ``game``.

    Raises:
        ConfigError: unknown game (the message lists the known ones).
    """
    if isinstance(game, str):
        info = _installed().get(game) or _EXTRA.get(game)
        if info is not None:
            return info
    raise ConfigError(f"unknown game {game!r}; legal values: {game_names()}")


def env_module(game: str):
    """Import and return the game package of ``game`` (see :attr:`GameInfo.package`)."""
    return get_game(game).module()


def make_raw_env(game: str, num_players: int, **options: Any):
    """Build the unwrapped AEC env ``<package>.raw_env(num_players=num_players, **options)``.

    Raises:
        ConfigError: unknown game or a player count outside the game's range.
    """
    info = get_game(game)
    if isinstance(num_players, bool) or num_players not in info.player_counts:
        raise ConfigError(
            f"num_players={num_players!r} is not allowed for {game}; legal values: {list(info.player_counts)}"
        )
    return info.module().raw_env(num_players=num_players, **options)


def obs_layout(game: str) -> ObsLayout:
    """The observation layout of ``game``."""
    return get_game(game).layout


def layout_version(game: str) -> int:
    """Version of the observation layout of ``game`` (recorded in checkpoints and exports)."""
    return get_game(game).obs_version


def check_player_counts(game: str, counts) -> tuple[int, ...]:
    """Normalise ``counts`` (an int or a sequence of ints) to a sorted tuple of legal table sizes.

    Raises:
        ConfigError: empty, or a count outside the game's range (legal values listed).
    """
    info = get_game(game)
    if isinstance(counts, int) and not isinstance(counts, bool):
        counts = [counts]
    counts = list(counts)
    if not counts:
        raise ConfigError(f"num_players must name at least one table size; legal values: {list(info.player_counts)}")
    for n in counts:
        if isinstance(n, bool) or n not in info.player_counts:
            raise ConfigError(
                f"num_players={n!r} is not allowed for {game}; legal values: {list(info.player_counts)}"
            )
    return tuple(sorted(set(int(n) for n in counts)))
