"""Batch policies: opponents of the vectorized training envs (``tapeo_env.vector``,
``robada_env.vector``), which play many games' seats at once.

A batch policy is a callable ``policy(observations, action_masks) -> actions`` on float32
(M, obs_size) observations and int8 (M, num_actions) masks of the M seats to act, returning M
legal int actions. A policy whose ``needs_observation`` is False (like :class:`RandomPolicy`) is
given an empty (M, 0) array instead of observations, which saves encoding those seats.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from hod_common.errors import ConfigError

from .base import Bot

BatchPolicy = Callable[[np.ndarray, np.ndarray], np.ndarray]


class RandomPolicy:
    """Uniformly random legal actions in batch (needs no observation); the default opponent.

    Subclasses set :attr:`sampler` to their game's fast ``random_legal_actions(mask, rng)``.

    Args:
        seed: seed of its ``numpy.random.default_rng``.
    """

    needs_observation = False
    #: ``sampler(mask, rng) -> int64 (M,)`` uniformly random legal actions.
    sampler: Callable[[np.ndarray, np.random.Generator], np.ndarray]

    def __init__(self, seed: Optional[Any] = None) -> None:
        self.rng = np.random.default_rng(seed)

    def __call__(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        return type(self).sampler(action_masks, self.rng)


class BotPolicy:
    """A batch policy that asks a per-observation :class:`agents.base.Bot` for each row (a Python
    loop: as fast as the bot). The bot must decide from the observation alone.

    Subclasses set :attr:`game` to the game they serve.

    Raises:
        ConfigError: a bot that needs a belief sampler (search bots) or plays another game.
    """

    needs_observation = True
    game = ""

    def __init__(self, bot: Bot) -> None:
        if getattr(bot, "needs_belief", False):
            raise ConfigError(f"{bot!r} needs a belief sampler; batch opponents decide from the observation only")
        if getattr(bot, "game", "") not in ("", self.game):
            raise ConfigError(f"{bot!r} plays {bot.game!r}, not {self.game!r}")
        self.bot = bot

    def __call__(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        out = np.empty(len(action_masks), np.int64)
        for r in range(len(action_masks)):
            out[r] = self.bot.act({"observation": observations[r], "action_mask": action_masks[r]})
        return out


def as_policies(opponents: Any, bot_policy: type = BotPolicy) -> list:
    """A list of batch policies from one policy, a Bot, or a list of them (Bots are wrapped in
    ``bot_policy``).

    Raises:
        ConfigError: an entry that is neither callable nor a Bot, or an empty list.
    """
    items = list(opponents) if isinstance(opponents, (list, tuple)) else [opponents]
    pols = []
    for p in items:
        if isinstance(p, Bot):
            pols.append(bot_policy(p))
        elif callable(p):
            pols.append(p)
        else:
            raise ConfigError(f"opponent {p!r} is neither a batch policy (callable) nor an agents.base.Bot")
    if not pols:
        raise ConfigError("opponents must hold at least one policy")
    return pols
