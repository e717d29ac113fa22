"""Shared helpers of the PettingZoo-suite tests of both games (tests/games/test_tapeo_env.py,
tests/games/test_robada_env.py, tests/contract/test_env_contract.py)."""
from __future__ import annotations

import types

import numpy as np
from gymnasium.spaces import Discrete
from pettingzoo.test import max_cycles_test


class MaskedSample(Discrete):
    """An action space whose ``sample()`` draws from the current legal actions of ``agent``.

    PettingZoo's max_cycles_test samples unmasked actions; with the offender-loses convention a
    random illegal action would end the game at once. Binding sample() to the mask lets the test
    check truncation itself, which is what it is about."""

    def __init__(self, env, agent):
        super().__init__(env.action_spaces[agent].n, seed=0)
        self._env, self._agent = env, agent

    def sample(self, mask=None, probability=None):
        return super().sample(mask=self._env.action_mask(self._agent))


def play_random_aec(env, seed, rng, check_mask=None):
    """One AEC game of uniformly random legal actions (``rng``) after ``reset(seed=seed)``;
    finished agents step None. ``check_mask(mask)`` is called on every mask an agent acts on.

    Returns:
        ``(totals, infos)``: each agent's sum of ``last()`` rewards, and its ``last()`` info when
        it was done.
    """
    env.reset(seed=seed)
    totals = {a: 0.0 for a in env.possible_agents}
    infos = {}
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        totals[agent] += reward
        if term or trunc:
            infos[agent] = info
            env.step(None)
        else:
            if check_mask is not None:
                check_mask(obs["action_mask"])
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return totals, infos


def masked(env, unwrapped=None):
    """``env`` with the action spaces of ``unwrapped`` (default ``env``) replaced by
    :class:`MaskedSample`."""
    u = env if unwrapped is None else unwrapped
    u.action_spaces = {a: MaskedSample(u, a) for a in u.possible_agents}
    return env


def check_max_cycles(env_fn, parallel_env_fn) -> None:
    """PettingZoo's ``max_cycles_test`` on ``env_fn(max_cycles)`` (AEC) and
    ``parallel_env_fn(max_cycles)`` (both should sample legal actions: :func:`masked`)."""
    max_cycles_test(types.SimpleNamespace(env=env_fn, parallel_env=parallel_env_fn))
