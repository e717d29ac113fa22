"""PettingZoo Parallel environment of Ronda Robada (``robada_v0``).

Ronda Robada is turn-based, so the Parallel form makes every agent submit an action at every
step, and only one of them matters:

* the seat to act gets its real action mask and its action is applied (one decision per step,
  exactly as one AEC step);
* every other seat gets a mask that allows only ``no-op`` (action 26) and must send it
  (a missing action for such a seat counts as ``no-op``).

So a Parallel episode is the same sequence of decisions as an AEC episode, with the same
observations, and ``max_cycles`` counts the same decisions. Rewards come at the end of the game
to every seat at once; all agents terminate together.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
from pettingzoo import ParallelEnv

from hod_common.errors import IllegalActionError
from hod_common.wrappers import ILLEGAL_REWARD

from .actions import NOOP, action_name
from .engine import State, apply_action, legal_actions, legal_mask, new_game
from .env import DEFAULT_MAX_CYCLES, ENV_NAME, RENDER_MODES, end_of_game, make_spaces, observations_of, parse_options
from .render import render_text


class RobadaParallelEnv(ParallelEnv):
    """Ronda Robada, Parallel form (see the module docstring for how turns map to steps).

    Args: as :class:`robada_env.env.raw_env`; ``illegal_action`` defaults to ``"lose"``.

    Raises:
        ConfigError: unknown option or bad value (names the legal ones).
    """

    metadata = {"name": ENV_NAME, "render_modes": list(RENDER_MODES), "render_fps": 1}

    def __init__(self, num_players: int = 2, render_mode: Optional[str] = None,
                 reward_scheme: str = "points", illegal_action: str = "lose",
                 max_cycles: int = DEFAULT_MAX_CYCLES, **rules: Any) -> None:
        self.config = parse_options(num_players, render_mode, reward_scheme, illegal_action,
                                    max_cycles, rules)
        self.render_mode = render_mode
        self.reward_scheme = reward_scheme
        self.illegal_action = illegal_action
        self.max_cycles = int(max_cycles)
        self.possible_agents = [f"player_{i}" for i in range(self.config.num_players)]
        self._agent_keys = dict.fromkeys(self.possible_agents).keys()
        self.agents: list[str] = []
        self.observation_spaces, self.action_spaces = make_spaces(self.possible_agents)
        self._rng: Optional[np.random.Generator] = None
        self.game_state: Optional[State] = None
        self._decisions = 0

    def observation_space(self, agent: str):
        return self.observation_spaces[agent]

    def action_space(self, agent: str):
        return self.action_spaces[agent]

    def _observations(self) -> dict:
        return observations_of(self.game_state, self.possible_agents)

    def action_mask(self, agent: str) -> np.ndarray:
        """int8 mask (NUM_ACTIONS,) of ``agent`` now: its legal actions if it is to act, else
        only ``no-op``."""
        return legal_mask(self.game_state, self.possible_agents.index(agent))

    def reset(self, seed: Optional[int] = None, options: Optional[dict] = None):
        """Shuffle and deal a new game (``seed`` fixes the deal). Returns ``(observations, infos)``."""
        if seed is not None or self._rng is None:
            self._rng = np.random.default_rng(seed)
        self.game_state = new_game(self.config, rng=self._rng)
        self._decisions = 0
        self.agents = list(self.possible_agents)
        return self._observations(), {a: {} for a in self.agents}

    def step(self, actions: dict):
        """Apply the action of the seat to act; every other live agent must send ``no-op``.

        Returns:
            ``(observations, rewards, terminations, truncations, infos)``, dicts over the agents
            that were live before the step.

        Raises:
            IllegalActionError: with ``illegal_action="raise"``, an action outside an agent's
                mask (names the legal actions); nothing changes.
            ValueError: ``actions`` names an agent that is not live.
        """
        s = self.game_state
        live = self.agents
        # fast path: a dict naming exactly the live agents (every seat is live until the end)
        if not (type(actions) is dict and len(live) == len(self._agent_keys) and actions.keys() == self._agent_keys):
            extra = set(actions) - set(live)
            if extra:
                raise ValueError(f"actions for agents that are not live: {sorted(extra)}; live agents: {live}")
        actor = self.possible_agents[s.current]
        offenders = []
        for a in live:
            act = actions.get(a, None if a == actor else NOOP)
            if a == actor:
                legal = legal_actions(s)
                if act is None or act not in legal:
                    offenders.append((a, act, legal))
            elif act is None or act != NOOP:
                offenders.append((a, act, [NOOP]))
        rewards = dict.fromkeys(live, 0.0)
        terms = dict.fromkeys(live, False)
        truncs = dict.fromkeys(live, False)
        infos = {a: {} for a in live}
        if offenders:
            if self.illegal_action == "raise":
                agent, act, legal = offenders[0]
                raise IllegalActionError(agent, act, legal, action_name)
            names = [o[0] for o in offenders]
            for a in live:
                rewards[a] = ILLEGAL_REWARD if a in names else 0.0
                terms[a] = True
                infos[a] = {"illegal_action": names[0] if len(names) == 1 else names}
        else:
            apply_action(s, int(actions[actor]))
            self._decisions += 1
            if s.terminal:
                r, infos = end_of_game(s, self.possible_agents, self.reward_scheme)
                rewards = {a: r[a] for a in live}
                terms = {a: True for a in live}
            elif self._decisions >= self.max_cycles:
                truncs = {a: True for a in live}
        obs = self._observations()
        if len(obs) != len(live):  # (every seat is live until the game ends: never taken)
            obs = {a: obs[a] for a in live}
        if any(terms.values()) or any(truncs.values()):
            self.agents = []
        if self.render_mode == "human":
            self.render()
        return obs, rewards, terms, truncs, infos

    def render(self) -> Optional[str]:
        """``ansi``: the position as text (with suits); ``human``: print it, return None."""
        if self.render_mode is None or self.game_state is None:
            return None
        text = render_text(self.game_state, self.possible_agents)
        if self.render_mode == "ansi":
            return text
        print(text)
        return None

    def close(self) -> None:
        pass


def parallel_env(num_players: int = 2, render_mode: Optional[str] = None, reward_scheme: str = "points",
                 max_cycles: int = DEFAULT_MAX_CYCLES, **rules: Any) -> RobadaParallelEnv:
    """Ronda Robada, Parallel form, with ``illegal_action="lose"`` unless given.

    See :class:`RobadaParallelEnv`."""
    rules.setdefault("illegal_action", "lose")
    return RobadaParallelEnv(num_players=num_players, render_mode=render_mode,
                             reward_scheme=reward_scheme, max_cycles=max_cycles, **rules)
