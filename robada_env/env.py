"""PettingZoo AEC environment of Ronda Robada (``robada_v0``): the natural, turn-based form.

One agent acts at a time; a turn is several decisions of the same agent (``start`` then
``tap``/``take`` ... then ``confirm``, or one ``drop``), so ``agent_selection`` stays on the
runner until the run is confirmed. See the package docstring for the action table and
:mod:`robada_env.observation` for the observation layout.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from hod_common.errors import ConfigError, IllegalActionError, check_choice
from hod_common.rewards import REWARD_SCHEMES, final_rewards, win_shares
from hod_common.wrappers import ILLEGAL_ACTION_MODES, ILLEGAL_REWARD, wrap_aec

from .actions import NUM_ACTIONS, action_name
from .engine import Config, State, apply_action, legal_actions, legal_mask, legal_masks, new_game, winners
from .observation import OBS_SIZE, encode, encode_all
from .render import render_text

#: Versioned environment name.
ENV_NAME = "robada_v0"
#: Default ``max_cycles``: more decisions than any game can take (engine.MAX_GAME_LENGTH = 432),
#: so a real game is never truncated unless the user asks for it.
DEFAULT_MAX_CYCLES = 1000
#: Options of every Ronda Robada environment (besides the rules options of ``engine.Config``).
ENV_OPTIONS = ("num_players", "render_mode", "reward_scheme", "illegal_action", "max_cycles")
RENDER_MODES = ("ansi", "human")


def parse_options(
    num_players: int, render_mode: Optional[str], reward_scheme: str, illegal_action: str,
    max_cycles: int, rules: dict,
) -> Config:
    """Check the environment options and build the rules ``Config``.

    Raises:
        ConfigError: an unknown option or a value outside its legal set (the message names the
            legal options or values).
    """
    unknown = set(rules) - set(Config.option_names())
    if unknown:
        legal = list(ENV_OPTIONS) + [o for o in Config.option_names() if o != "num_players"]
        raise ConfigError(f"unknown option(s) {sorted(unknown)}; legal options: {legal}")
    if render_mode is not None:
        check_choice("render_mode", render_mode, (None,) + RENDER_MODES)
    check_choice("reward_scheme", reward_scheme, REWARD_SCHEMES)
    check_choice("illegal_action", illegal_action, ILLEGAL_ACTION_MODES)
    if isinstance(max_cycles, bool) or not isinstance(max_cycles, (int, np.integer)) or max_cycles < 1:
        raise ConfigError(f"max_cycles={max_cycles!r} must be a positive integer")
    return Config(num_players=num_players, **rules)


def make_spaces(agents: list[str]) -> tuple[dict, dict]:
    """One observation space and one action space object per agent (built once)."""
    obs = {
        a: spaces.Dict({
            "observation": spaces.Box(0.0, 1.0, (OBS_SIZE,), dtype=np.float32),
            "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), dtype=np.int8),
        })
        for a in agents
    }
    act = {a: spaces.Discrete(NUM_ACTIONS) for a in agents}
    return obs, act


def end_of_game(s: State, agents: list[str], scheme: str) -> tuple[dict, dict]:
    """Final rewards and infos of a finished game (DESIGN.md contract).

    Returns:
        ``(rewards, infos)``: rewards per agent (float, per ``scheme``); infos per agent with
        ``"final_score"`` (int points, R8) and ``"win_share"`` (1/k for k tied winners, else 0).
    """
    w = winners(s)
    r = final_rewards(s.points, w, scheme)
    ws = win_shares(w, s.n)
    rewards = {a: float(r[i]) for i, a in enumerate(agents)}
    infos = {a: {"final_score": int(s.points[i]), "win_share": float(ws[i])} for i, a in enumerate(agents)}
    return rewards, infos


def observation_of(s: State, seat: int) -> dict[str, np.ndarray]:
    """The observation dict of ``seat``: ``{"observation": float32 (OBS_SIZE,),
    "action_mask": int8 (NUM_ACTIONS,)}``."""
    return {"observation": encode(s, seat), "action_mask": legal_mask(s, seat)}


def observations_of(s: State, agents: list[str]) -> dict[str, dict[str, np.ndarray]]:
    """:func:`observation_of` of every seat, keyed by ``agents`` (one per seat, in seat order).
    Encoded in one go: the arrays are rows of two fresh arrays (float32 (n, OBS_SIZE) and int8
    (n, NUM_ACTIONS)), never reused later."""
    return {a: {"observation": o, "action_mask": m} for a, o, m in zip(agents, encode_all(s), legal_masks(s))}


class raw_env(AECEnv):
    """Ronda Robada, AEC form, unwrapped.

    Args:
        num_players: 2..4.
        render_mode: None, ``"ansi"`` (``render()`` returns a str) or ``"human"`` (prints).
        reward_scheme: one of ``hod_common.rewards.REWARD_SCHEMES``; rewards come at game end.
        illegal_action: ``"raise"`` (default) or ``"lose"`` (see ``hod_common.wrappers``).
        max_cycles: truncate after this many decisions (default 1000: never in a real game).
        **rules: options of :class:`robada_env.engine.Config` (``closing_ace``,
            ``may_take_own_pile``, ``leftovers_to_last_runner``).

    Raises:
        ConfigError: unknown option or bad value (names the legal ones).
    """

    metadata = {"name": ENV_NAME, "render_modes": list(RENDER_MODES), "is_parallelizable": False,
                "render_fps": 1}

    def __init__(self, num_players: int = 2, render_mode: Optional[str] = None,
                 reward_scheme: str = "points", illegal_action: str = "raise",
                 max_cycles: int = DEFAULT_MAX_CYCLES, **rules: Any) -> None:
        super().__init__()
        self.config = parse_options(num_players, render_mode, reward_scheme, illegal_action,
                                    max_cycles, rules)
        self.render_mode = render_mode
        self.reward_scheme = reward_scheme
        self.illegal_action = illegal_action
        self.max_cycles = int(max_cycles)
        self.possible_agents = [f"player_{i}" for i in range(self.config.num_players)]
        self._seat = {a: i for i, a in enumerate(self.possible_agents)}
        self.observation_spaces, self.action_spaces = make_spaces(self.possible_agents)
        self._rng: Optional[np.random.Generator] = None
        self.game_state: Optional[State] = None
        self._decisions = 0

    def observation_space(self, agent: str) -> spaces.Dict:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Discrete:
        return self.action_spaces[agent]

    def action_mask(self, agent: str) -> np.ndarray:
        """int8 mask (NUM_ACTIONS,) of ``agent`` now: its legal actions if it is to act, else
        only ``no-op``."""
        return legal_mask(self.game_state, self.possible_agents.index(agent))

    def reset(self, seed: Optional[int] = None, options: Optional[dict] = None) -> None:
        """Shuffle and deal a new game. ``seed`` fixes the whole deal (same seed, same game);
        without it the next deal is drawn from the generator of the last seeded reset."""
        if seed is not None or self._rng is None:
            self._rng = np.random.default_rng(seed)
        self.game_state = new_game(self.config, rng=self._rng)
        self._decisions = 0
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = self.agents[self.game_state.current]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        return observation_of(self.game_state, self._seat[agent])

    def step(self, action: Optional[int]) -> None:
        """Apply ``action`` for ``agent_selection``.

        Raises:
            IllegalActionError: with ``illegal_action="raise"``, an action outside the mask
                (the message names the legal actions); nothing changes.
        """
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        s = self.game_state
        legal = legal_actions(s)
        if action is None or action not in legal:
            if self.illegal_action == "raise":
                raise IllegalActionError(agent, action, legal, action_name)
            self._cumulative_rewards[agent] = 0.0
            for a in self.agents:
                self.rewards[a] = ILLEGAL_REWARD if a == agent else 0.0
                self.terminations[a] = True
                self.infos[a] = {"illegal_action": agent}
            self._accumulate_rewards()
            return
        self._cumulative_rewards[agent] = 0.0
        apply_action(s, int(action))
        self._decisions += 1
        for a in self.agents:
            self.rewards[a] = 0.0
        if s.terminal:
            rewards, infos = end_of_game(s, self.possible_agents, self.reward_scheme)
            for a in self.agents:
                self.rewards[a] = rewards[a]
                self.terminations[a] = True
                self.infos[a] = infos[a]
        elif self._decisions >= self.max_cycles:
            for a in self.agents:
                self.truncations[a] = True
        self.agent_selection = self.possible_agents[s.current]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

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


def env(num_players: int = 2, render_mode: Optional[str] = None, reward_scheme: str = "points",
        max_cycles: int = DEFAULT_MAX_CYCLES, **rules: Any):
    """Ronda Robada, AEC form, wrapped for users: ``raw_env(illegal_action="lose")`` under
    PettingZoo's bounds-check and order-enforcing wrappers (``hod_common.wrappers.wrap_aec``).

    An action outside the mask ends the game: the offender gets -1, the others 0. Options as
    :class:`raw_env` (``illegal_action`` may be given to override).
    """
    rules.setdefault("illegal_action", "lose")
    return wrap_aec(raw_env(num_players=num_players, render_mode=render_mode,
                            reward_scheme=reward_scheme, max_cycles=max_cycles, **rules))
