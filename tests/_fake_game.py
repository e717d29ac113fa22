"""A tiny scripted game following the environment contract of docs/DESIGN.md, for harness tests.

Rules of the fake game (so that tests can work results out by hand):

* ``reset(seed=s)`` deals each seat a hand value ``hand[seat]`` in ``0..hand_range`` from
  ``numpy.random.default_rng(s)`` (the same deal whoever sits where).
* Each seat acts once, seat 0 first: it picks a number ``a`` in ``0..num_actions-1``; the mask
  allows only the actions in ``legal`` (default: all).
* Final score of a seat: ``a + hand[seat] + (seat_bonus if seat == 0 else 0)``.
* The highest score wins; k tied winners get ``win_share`` 1/k each.
"""
from __future__ import annotations

from typing import Optional

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import AgentSelector

from agents.base import Bot
from hod_common.errors import IllegalActionError, check_choice, check_int_range


class raw_env(AECEnv):
    metadata = {"name": "fake_v0", "render_modes": [], "is_parallelizable": False}

    def __init__(self, num_players=2, illegal_action="raise", seat_bonus=0, hand_range=0,
                 num_actions=10, legal=None, render_mode=None):
        super().__init__()
        self.n = check_int_range("num_players", num_players, 2, 6)
        check_choice("illegal_action", illegal_action, ["raise"])
        self.seat_bonus, self.hand_range, self.num_actions = seat_bonus, hand_range, num_actions
        self.legal = list(range(num_actions)) if legal is None else list(legal)
        self.possible_agents = [f"player_{i}" for i in range(self.n)]
        self._obs_space = spaces.Dict({
            "observation": spaces.Box(0, 100, (1,), np.float32),
            "action_mask": spaces.Box(0, 1, (num_actions,), np.int8),
        })
        self._act_space = spaces.Discrete(num_actions)
        self.resets = 0

    @property
    def game_state(self):
        return {"hand": [int(h) for h in self.hand], "picks": dict(self.picks)}

    def observation_space(self, agent):
        return self._obs_space

    def action_space(self, agent):
        return self._act_space

    def reset(self, seed: Optional[int] = None, options=None):
        self.resets += 1
        rng = np.random.default_rng(seed)
        self.hand = rng.integers(0, self.hand_range + 1, size=self.n)
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.picks = {}
        self._selector = AgentSelector(self.agents)
        self.agent_selection = self._selector.reset()

    def observe(self, agent):
        mask = np.zeros(self.num_actions, np.int8)
        mask[self.legal] = 1
        seat = self.possible_agents.index(agent)
        return {"observation": np.array([self.hand[seat]], np.float32), "action_mask": mask}

    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action not in self.legal:
            raise IllegalActionError(agent, action, self.legal)
        self.picks[agent] = int(action)
        self._cumulative_rewards[agent] = 0.0
        if len(self.picks) == self.n:
            scores = [self.picks[a] + int(self.hand[i]) + (self.seat_bonus if i == 0 else 0)
                      for i, a in enumerate(self.possible_agents)]
            best = max(scores)
            k = scores.count(best)
            for i, a in enumerate(self.possible_agents):
                self.terminations[a] = True
                self.rewards[a] = float(scores[i])
                self.infos[a] = {"final_score": scores[i], "win_share": 1 / k if scores[i] == best else 0.0}
            self._accumulate_rewards()
        self.agent_selection = self._selector.next()


def sample_consistent_state(state, seat, rng):
    """Fake belief sampler: the state as ``seat`` knows it, tagged with the seat."""
    return {"seat": seat, "own_hand": state["hand"][seat], "picks_so_far": len(state["picks"])}


class BeliefBot(Bot):
    """Records one belief sample per decision, then plays 0."""

    name = "belief"
    needs_belief = True

    def __init__(self, seed=None):
        super().__init__(seed)
        self.samples = []

    def act(self, observation, belief=None):
        self.samples.append(belief(self.rng))
        return 0


class ConstBot(Bot):
    """Always plays ``value``."""

    name = "const"

    def __init__(self, value: int, seed=None):
        super().__init__(seed)
        self.value = value

    def act(self, observation, belief=None):
        return self.value


class ScriptBot(Bot):
    """Plays ``script[k]`` in the k-th game since it was built (games counted by ``reset``)."""

    name = "script"

    def __init__(self, script, seed=None):
        super().__init__(seed)
        self.script = list(script)
        self.games = -1
        self.seeds = []

    def reset(self, seed=None):
        super().reset(seed)
        self.games += 1
        self.seeds.append(seed)

    def act(self, observation, belief=None):
        return self.script[self.games]
