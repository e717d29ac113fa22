"""What the training code needs to know about each game, in one table.

Each game is played only through the environment contract of ``docs/DESIGN.md``: the module
``<game>_env`` provides ``raw_env(num_players=..., illegal_action=..., reward_scheme=...)`` and its
observation layout (``<game>_env.LAYOUT``, an :class:`hod.core.layout.ObsLayout`
whose ``version`` is recorded in every checkpoint and export).

Nothing here imports torch.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from hod.core.errors import ConfigError


@dataclass(frozen=True)
class GameSpec:
    """Static description of a game for training.

    Attributes:
        name: game name used by the bot registry and the CLI (``"tapeo"``, ``"robada"``).
        module: import path of the environment package (provides ``raw_env``).
        player_counts: legal table sizes.
        simultaneous: True when every seat decides at the same time each step (Tapeo's picks,
            tapeo.txt "Each pick"); only then can several learner seats share one table in a
            vectorized env (see :mod:`hod.training.vec_env`).
        gym_id: id of the single-agent view registered with Gymnasium.
        layout_module: module holding ``LAYOUT`` (the observation layout).
    """

    name: str
    module: str
    player_counts: tuple[int, ...]
    simultaneous: bool
    gym_id: str
    layout_module: str


GAMES: dict[str, GameSpec] = {
    "tapeo": GameSpec("tapeo", "tapeo_env", (2, 3, 4, 5, 6), True, "tapeo_env/Tapeo-v0",
                      "tapeo_env.rules.observation"),
    "robada": GameSpec("robada", "robada_env", (2, 3, 4), False, "robada_env/Robada-v0",
                       "robada_env.rules.observation"),
}


def get_spec(game: str) -> GameSpec:
    """The :class:`GameSpec` of ``game``.

    Raises:
        ConfigError: unknown game (the message lists the known ones).
    """
    try:
        return GAMES[game]
    except KeyError:
        raise ConfigError(f"unknown game {game!r}; legal values: {list(GAMES)}") from None


def env_module(game: str):
    """Import and return the environment package of ``game``."""
    return importlib.import_module(get_spec(game).module)


def make_raw_env(game: str, num_players: int, **options: Any):
    """Build the unwrapped AEC env ``<game>_env.raw_env(num_players=num_players, **options)``.

    Raises:
        ConfigError: unknown game or a player count outside ``GameSpec.player_counts``.
    """
    spec = get_spec(game)
    if num_players not in spec.player_counts:
        raise ConfigError(
            f"num_players={num_players!r} is not allowed for {game}; legal values: {list(spec.player_counts)}"
        )
    return env_module(game).raw_env(num_players=num_players, **options)


def obs_layout(game: str):
    """The observation layout (:class:`hod.core.layout.ObsLayout`) of ``game``."""
    spec = get_spec(game)
    mod = importlib.import_module(spec.layout_module)
    return mod.LAYOUT


def layout_version(game: str) -> int:
    """Version of the observation layout of ``game`` (recorded in checkpoints and exports)."""
    return int(obs_layout(game).version)


def check_player_counts(game: str, counts) -> tuple[int, ...]:
    """Normalise ``counts`` (an int or a sequence of ints) to a sorted tuple of legal table sizes.

    Raises:
        ConfigError: empty, or a count outside ``GameSpec.player_counts`` (legal values listed).
    """
    spec = get_spec(game)
    if isinstance(counts, (int,)) and not isinstance(counts, bool):
        counts = [counts]
    counts = list(counts)
    if not counts:
        raise ConfigError(f"num_players must name at least one table size; legal values: {list(spec.player_counts)}")
    for n in counts:
        if isinstance(n, bool) or n not in spec.player_counts:
            raise ConfigError(
                f"num_players={n!r} is not allowed for {game}; legal values: {list(spec.player_counts)}"
            )
    return tuple(sorted(set(int(n) for n in counts)))
