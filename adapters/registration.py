"""Registration of the single-agent Gymnasium views, by string entry point.

Each game package calls :func:`register_gym_env` with its declaration when it is imported, so
after ``import tapeo_env``::

    gymnasium.make("tapeo_env/Tapeo-v0", num_players=4, opponents="expert")

builds a :class:`hod.training.single_agent.SingleAgentEnv` (one learner seat against given
opponents). The entry point is a string: registering imports nothing from the training floor;
``gymnasium.make`` imports it when it is called. Its action masks are reached with
``env.unwrapped.action_masks()`` or ``env.get_wrapper_attr("action_masks")()`` (what sb3-contrib
does).
"""
from __future__ import annotations

import gymnasium

from hod.core.games import GameInfo, game_names, get_game

#: Entry point of every single-agent view (imported by ``gymnasium.make`` only).
ENTRY_POINT = "hod.training.single_agent:SingleAgentEnv"


def register_gym_env(info: GameInfo) -> None:
    """Register ``info.gym_id`` with Gymnasium (idempotent); nothing is imported."""
    if info.gym_id in gymnasium.registry:
        return
    gymnasium.register(id=info.gym_id, entry_point=ENTRY_POINT, kwargs={"game": info.name},
                       disable_env_checker=False)


def register_envs() -> list[str]:
    """Register the Gymnasium id of every known game (idempotent); returns the ids."""
    ids = []
    for name in game_names():
        info = get_game(name)
        register_gym_env(info)
        ids.append(info.gym_id)
    return ids
