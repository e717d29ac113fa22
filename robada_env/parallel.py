"""PettingZoo Parallel environment of Ronda Robada (``robada_v0``).

Ronda Robada is turn-based, so the Parallel form makes every agent submit an action at every
step, and only one of them matters:

* the seat to act gets its real action mask and its action is applied (one decision per step,
  exactly as one AEC step);
* every other seat gets a mask that allows only ``no-op`` (action 26) and must send it
  (a missing action for such a seat counts as ``no-op``; a missing action for the seat to act
  is a ``ValueError`` naming it).

So a Parallel episode is the same sequence of decisions as an AEC episode, with the same
observations, and ``max_cycles`` counts the same decisions. Rewards come at the end of the game
to every seat at once; all agents terminate together.
"""
from __future__ import annotations

from typing import Any, Optional

from pettingzoo import ParallelEnv

from hod_common.env_support import check_in_game
from hod_common.errors import IllegalActionError
from hod_common.options import RENDER_MODES

from .actions import NOOP, action_name
from .engine import legal_actions
from .env import DEFAULT_MAX_CYCLES, ENV_NAME, _RobadaCore, observations_of


class RobadaParallelEnv(_RobadaCore, ParallelEnv):
    """Ronda Robada, Parallel form (see the module docstring for how turns map to steps).

    Args: as :class:`robada_env.env.raw_env`; ``illegal_action`` defaults to ``"lose"``.

    Raises:
        ConfigError: a bad value (names the legal ones).
        UnknownOptionError: an unknown option (lists the legal ones).
    """

    metadata = {"name": ENV_NAME, "render_modes": list(RENDER_MODES), "render_fps": 1}

    def __init__(self, num_players: int = 2, render_mode: Optional[str] = None,
                 reward_scheme: str = "points", illegal_action: str = "lose",
                 max_cycles: int = DEFAULT_MAX_CYCLES, **rules: Any) -> None:
        self._setup(num_players, render_mode, reward_scheme, illegal_action, max_cycles, rules)
        self._agent_keys = self._seat.keys()
        self.agents: list[str] = []

    def _observations(self) -> dict:
        return observations_of(self.game_state, self.possible_agents)

    def reset(self, seed: Optional[int] = None, options: Optional[dict] = None):
        """Shuffle and deal a new game (``seed`` fixes the deal). Returns ``(observations, infos)``."""
        self._new_game(seed)
        self.agents = list(self.possible_agents)
        return self._observations(), {a: {} for a in self.agents}

    def step(self, actions: dict):
        """Apply the action of the seat to act; every other live agent must send ``no-op`` (or
        leave it out).

        Returns:
            ``(observations, rewards, terminations, truncations, infos)``, dicts over the agents
            that were live before the step.

        Raises:
            IllegalActionError: with ``illegal_action="raise"``, an action outside an agent's
                mask (names the legal actions); nothing changes.
            ValueError: ``actions`` names an agent that is not live, or leaves out the agent to
                act (the message lists the missing agents); nothing changes.
            ResetNeededError: before ``reset()``, or after the game ended.
        """
        if not self.agents:
            check_in_game(self.game_state is not None, False)
        s = self.game_state
        live = self.agents
        actor = self.possible_agents[s.current]
        # fast path: a dict naming exactly the live agents (every seat is live until the end)
        if not (type(actions) is dict and actions.keys() == self._agent_keys):
            extra = [a for a in actions if a not in live]
            missing = [] if actor in actions else [actor]
            if extra or missing:
                raise ValueError(f"step() needs an action for {actor} (the agent to act; the others may "
                                 f"leave out their no-op) and none for other agents; missing {missing}, "
                                 f"not live {extra}; live agents: {live}")
        offenders = []
        for i, a in enumerate(live):
            act = actions.get(a, NOOP)
            if a == actor:
                legal = legal_actions(s)
                if act is None or act not in legal:
                    offenders.append((i, act, legal))
            elif act is None or act != NOOP:
                offenders.append((i, act, [NOOP]))
        truncated = False
        if offenders:
            if self.illegal_action == "raise":
                seat, act, legal = offenders[0]
                raise IllegalActionError(live[seat], act, legal, action_name)
            rewards, infos = self._forfeit([o[0] for o in offenders])
        else:
            rewards, infos, truncated = self._advance(actions[actor])
        terminated = rewards is not None
        rew = dict.fromkeys(live, 0.0) if rewards is None else dict(zip(live, rewards.tolist()))
        infos = {a: {} for a in live} if infos is None else dict(zip(live, infos))
        terms = dict.fromkeys(live, terminated)
        truncs = dict.fromkeys(live, truncated)
        obs = self._observations()
        if terminated or truncated:
            self.agents = []
        if self.render_mode == "human":
            self.render()
        return obs, rew, terms, truncs, infos


def parallel_env(num_players: int = 2, render_mode: Optional[str] = None, reward_scheme: str = "points",
                 max_cycles: int = DEFAULT_MAX_CYCLES, **rules: Any) -> RobadaParallelEnv:
    """Ronda Robada, Parallel form, with ``illegal_action="lose"`` unless given.

    See :class:`RobadaParallelEnv`."""
    rules.setdefault("illegal_action", "lose")
    return RobadaParallelEnv(num_players=num_players, render_mode=render_mode,
                             reward_scheme=reward_scheme, max_cycles=max_cycles, **rules)
