"""Batch policies: opponents of the learner vector env (``hod.training.learner_env``), which plays
many games' seats at once.

A batch policy is a callable ``policy(observations, action_masks) -> actions`` on float32
(M, obs_size) observations and int8 (M, num_actions) masks of the M seats to act, returning M
legal int actions. A policy whose ``needs_observation`` is False (like :class:`RandomPolicy`) is
given an empty (M, 0) array instead of observations, which saves encoding those seats.
:func:`random_policy` and :func:`bot_policy` make the two kinds every declared game has: uniform
random play with the game's own sampler, and a bot (in batch when it has ``act_batch``, else row
by row).

When a vector env holds several policies, each opponent seat of each game is given one when the
game starts: uniformly, or with the probabilities ``weights`` (:func:`check_weights`,
:func:`draw_policies`), e.g. the self-play pool's sampling scheme (``hod.training.pool.BatchOpponents``).
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import importlib

import numpy as np

from hod.core.errors import ConfigError
from hod.core.games import GameInfo, get_game, load_object

from .base import Bot

BatchPolicy = Callable[[np.ndarray, np.ndarray], np.ndarray]


class RandomPolicy:
    """Uniformly random legal actions in batch (needs no observation); the default opponent.

    Args:
        seed: seed of its ``numpy.random.default_rng``.
        sampler: ``sampler(mask int8 (M, A), rng) -> int64 (M,)`` uniformly random legal actions:
            the game's fast ``random_legal_actions`` (:func:`random_policy` finds it).
    """

    needs_observation = False

    def __init__(self, seed: Optional[Any], sampler: Callable[[np.ndarray, np.random.Generator], np.ndarray]) -> None:
        self.rng = np.random.default_rng(seed)
        self.sampler = sampler

    def __call__(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        return self.sampler(action_masks, self.rng)


class BotPolicy:
    """A batch policy around a per-observation :class:`hod.agents.base.Bot`: the bot's own batch
    method ``act_batch(observations, action_masks) -> int64 (M,)`` when it has one (Tapeo's
    ``expert``: :meth:`hod.agents.tapeo_bots.ExpertBot.act_batch`, its scorer compiled), else the
    bot asked for each row (a Python loop: as fast as the bot). The bot must decide from the
    observation alone.

    Args:
        bot: the bot. game: the name of the game it serves ("": any).

    Raises:
        ConfigError: a bot that needs a belief sampler (search bots) or plays another game.
    """

    needs_observation = True

    def __init__(self, bot: Bot, game: str = "") -> None:
        self.game = game
        if getattr(bot, "needs_belief", False):
            raise ConfigError(f"{bot!r} needs a belief sampler; batch opponents decide from the observation only")
        if getattr(bot, "game", "") not in ("", self.game) and self.game:
            raise ConfigError(f"{bot!r} plays {bot.game!r}, not {self.game!r}")
        self.bot = bot

    def __call__(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        batch = getattr(self.bot, "act_batch", None)
        if callable(batch):
            return np.asarray(batch(observations, action_masks), np.int64)
        out = np.empty(len(action_masks), np.int64)
        for r in range(len(action_masks)):
            out[r] = self.bot.act({"observation": observations[r], "action_mask": action_masks[r]})
        return out


def _info(game: Any) -> GameInfo:
    return game if isinstance(game, GameInfo) else get_game(game)


def random_policy(game: Any, seed: Optional[Any]) -> RandomPolicy:
    """The uniform random batch policy of ``game`` (a name or a :class:`hod.core.games.GameInfo`):
    the sampler is the ``random_legal_actions(mask, rng)`` of its batched engine's module, so the
    draws are those of the engine's ``random_actions``.

    Raises:
        ConfigError: a game without a batched engine (or an unknown game name).
    """
    info = _info(game)
    if info.batched_engine is None:
        raise ConfigError(f"{info.name!r} declares no batched engine; the learner env needs one")
    module = importlib.import_module(load_object(info.batched_engine).__module__)
    return RandomPolicy(seed, module.random_legal_actions)


def bot_policy(game: Any, bot: Bot) -> BotPolicy:
    """``bot`` (an :class:`hod.agents.base.Bot` of ``game``, a name or a declaration) as a batch
    policy (its ``act_batch`` when it has one, else one call per row).

    Raises:
        ConfigError: as :class:`BotPolicy`.
    """
    return BotPolicy(bot, _info(game).name)


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
            raise ConfigError(f"opponent {p!r} is neither a batch policy (callable) nor an hod.agents.base.Bot; "
                              "legal: a batch policy (callable) or a Bot")
    if not pols:
        raise ConfigError("opponents hold no policy; legal: a batch policy, a Bot, or a non-empty list of them")
    return pols


def check_weights(weights: Optional[Sequence[float]], n: int) -> Optional[np.ndarray]:
    """Normalise the drawing probabilities of ``n`` policies: None (uniform) or float64 (n,)
    summing to 1.

    Raises:
        ConfigError: wrong length, a negative or non-finite weight, or all weights 0.
    """
    if weights is None:
        return None
    w = np.asarray(weights, dtype=np.float64).reshape(-1)
    if w.shape[0] != n:
        raise ConfigError(f"weights has {w.shape[0]} entries; expected one per opponent policy ({n})")
    if not np.all(np.isfinite(w)) or (w < 0).any() or w.sum() <= 0:
        raise ConfigError(f"weights={w.tolist()} must be finite, >= 0 and not all 0")
    return w / w.sum()


def draw_policies(rng: np.random.Generator, n: int, size, weights: Optional[np.ndarray]) -> np.ndarray:
    """Indices of the policy playing each seat: int64 array of shape ``size`` in ``0..n-1``, drawn
    uniformly (``weights`` None, exactly ``rng.integers(n, size=size)``) or with the
    probabilities ``weights`` (from :func:`check_weights`)."""
    if weights is None:
        return rng.integers(n, size=size)
    return rng.choice(n, size=size, p=weights)


def _identity(policy: Any) -> int:
    """What makes two entries the same policy: the object itself, or for a :class:`BotPolicy`
    the bot it wraps (:func:`as_policies` wraps a Bot afresh on every call)."""
    return id(policy.bot) if isinstance(policy, BotPolicy) else id(policy)


def carry_over(assign: np.ndarray, old: Sequence, new: Sequence, rng: np.random.Generator,
               weights: Optional[np.ndarray]) -> np.ndarray:
    """The seats' policy indices after the policy list changes from ``old`` to ``new``.

    A seat whose policy is still in ``new`` (the same object, found by identity, see
    :func:`_identity`) keeps it, at its index in ``new``; a seat whose policy left is drawn again
    from ``new`` with ``weights`` (:func:`draw_policies`). So adding a member, reordering the list
    or changing the weights leaves every game in progress with its opponents.

    Args:
        assign: int array (any shape) of indices into ``old``.
        old, new: the policy lists before and after (``new`` not empty).
        rng: generator of the new draws (used only when a seat's policy left).
        weights: drawing probabilities of ``new`` (from :func:`check_weights`; None = uniform).

    Returns:
        an array of ``assign``'s shape and dtype, indices into ``new`` (all 0 with one policy).
    """
    if len(new) <= 1:
        return np.zeros_like(assign)
    where = {}
    for j, p in enumerate(new):
        where.setdefault(_identity(p), j)
    remap = np.array([where.get(_identity(p), -1) for p in old], np.int64)
    out = remap[np.asarray(assign, np.int64)]
    gone = out < 0
    if gone.any():
        out[gone] = draw_policies(rng, len(new), int(gone.sum()), weights)
    return out.astype(assign.dtype)


def same_weights(a: Optional[np.ndarray], b: Optional[np.ndarray]) -> bool:
    """Whether two optional weight vectors are equal (both None, or same shape and values)."""
    if a is None or b is None:
        return a is None and b is None
    return a.shape == b.shape and bool(np.array_equal(a, b))
