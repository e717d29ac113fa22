"""Registration of the single-agent views with Gymnasium.

After ``register_envs()``::

    gymnasium.make("tapeo_env/Tapeo-v0", num_players=4, opponents="expert")
    gymnasium.make("robada_env/Robada-v0", num_players=2, opponents="random")

Each id builds a :class:`hod.training.single_agent.SingleAgentEnv`; its action masks are reached with
``env.unwrapped.action_masks()`` or ``env.get_wrapper_attr("action_masks")()`` (what sb3-contrib
does). This module imports only gymnasium, so the game packages can call it at import.
"""
from __future__ import annotations

import gymnasium

#: Gymnasium id -> game name.
ENV_IDS = {"tapeo_env/Tapeo-v0": "tapeo", "robada_env/Robada-v0": "robada"}


def register_envs() -> None:
    """Register every id of :data:`ENV_IDS` (idempotent)."""
    for env_id, game in ENV_IDS.items():
        if env_id in gymnasium.registry:
            continue
        gymnasium.register(
            id=env_id,
            entry_point="hod.training.single_agent:SingleAgentEnv",
            kwargs={"game": game},
            disable_env_checker=False,
        )
