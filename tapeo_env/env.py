"""PettingZoo adapters of the Tapeo engine: the AEC :class:`raw_env` and the Parallel
:class:`TapeoParallelEnv` (the natural form: picks are simultaneous).

Both are thin: the rules live in :mod:`tapeo_env.engine`, the observation in
:mod:`tapeo_env.observation`, the text in :mod:`tapeo_env.render`. See the package docstring
(``tapeo_env.__doc__``) for the documentation page.
"""
from __future__ import annotations

from typing import Any, Optional

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv, ParallelEnv

from hod_common.errors import IllegalActionError, check_choice, check_int_range
from hod_common.rewards import REWARD_SCHEMES, final_rewards, win_shares
from hod_common.wrappers import ILLEGAL_ACTION_MODES, ILLEGAL_REWARD

from .cards import NUM_KINDS
from .engine import Config, apply_checked_picks, check_pick, legal_mask, legal_masks, new_game, State
from .observation import OBS_HIGH, OBS_SIZE, encode, encode_all
from .render import render_text
from .scoring import winners

ENV_NAME = "tapeo_v0"
RENDER_MODES = ("human", "ansi")
#: Default truncation limit in cycles (one cycle = every seat picks once). A full game takes at
#: most 27 cycles (3 rounds x 9 decision picks, 2 players), so the default never truncates.
DEFAULT_MAX_CYCLES = 100
OPTIONS = ("num_players", "render_mode", "reward_scheme", "illegal_action", "max_cycles", "round_rewards")


class _TapeoCore:
    """Options, spaces, seeding, rewards and infos shared by the AEC and Parallel forms."""

    metadata = {"render_modes": list(RENDER_MODES), "name": ENV_NAME, "is_parallelizable": True,
                "render_fps": 1}

    def _setup(self, num_players, render_mode, reward_scheme, illegal_action, max_cycles, round_rewards,
               unknown: dict) -> None:
        if unknown:
            raise TypeError(f"unknown option(s) {sorted(unknown)}; legal options: {list(OPTIONS)}")
        self.config = Config(num_players=num_players)
        check_choice("render_mode", render_mode, (None,) + RENDER_MODES)
        check_choice("reward_scheme", reward_scheme, REWARD_SCHEMES)
        check_choice("illegal_action", illegal_action, ILLEGAL_ACTION_MODES)
        check_choice("round_rewards", round_rewards, (False, True))
        self.max_cycles = check_int_range("max_cycles", max_cycles, 1, 10**9)
        self.render_mode = render_mode
        self.reward_scheme = reward_scheme
        self.illegal_action = illegal_action
        self.round_rewards = bool(round_rewards)
        n = self.config.num_players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self._seat_of = {a: i for i, a in enumerate(self.possible_agents)}
        # Spaces are built once: PettingZoo's api_test checks they are the same object every call.
        self.observation_spaces = {a: spaces.Dict({
            "observation": spaces.Box(0.0, OBS_HIGH, (OBS_SIZE,), np.float32),
            "action_mask": spaces.Box(0, 1, (NUM_KINDS,), np.int8),
        }) for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(NUM_KINDS) for a in self.possible_agents}
        #: Source of the game seeds of unseeded resets: a Generator, or the seed of the last
        #: seeded reset until one is needed.
        self._rng: np.random.Generator | int = np.random.default_rng()
        #: What _resolve returns when a pick earns nothing (shared, read-only).
        self._no_reward = np.zeros(n)
        self._no_reward.setflags(write=False)
        self.state: Optional[State] = None
        self.game_seed: Optional[int] = None

    # -- spaces ------------------------------------------------------------------------------
    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    @property
    def game_state(self) -> State:
        """The engine state (:class:`tapeo_env.engine.State`) of the game in progress."""
        return self.state

    def action_mask(self, agent: str) -> np.ndarray:
        """int8 (10,) legal-action mask of ``agent`` now."""
        return legal_mask(self.state, self._seat_of[agent])

    # -- game flow ---------------------------------------------------------------------------
    def _new_game(self, seed: Optional[int]) -> None:
        """Deal a new game. ``reset(seed=s)`` fixes the whole game's deals (the engine is seeded
        with ``s``); ``reset()`` draws the game seed from the env's generator."""
        if seed is not None:
            # The env's generator restarts from ``seed``; it is only built when an unseeded
            # reset needs it (the same generator either way, without the cost on every reset).
            self._rng = seed
            self.game_seed = int(seed)
        else:
            if not isinstance(self._rng, np.random.Generator):
                self._rng = np.random.default_rng(self._rng)
            self.game_seed = int(self._rng.integers(2**62))
        self.state = new_game(self.config, seed=self.game_seed)
        self._phi = np.zeros(self.config.num_players)
        self._cycles = 0

    def _observe(self, seat: int) -> dict:
        return {"observation": encode(self.state, seat), "action_mask": legal_mask(self.state, seat)}

    def _observe_all(self) -> dict:
        """Observation dicts of every seat, keyed by agent. Encoded in one go: the arrays are rows
        of two fresh arrays (float32 (n, OBS_SIZE) and int8 (n, 10)), never reused later."""
        return {a: {"observation": o, "action_mask": m}
                for a, o, m in zip(self.possible_agents, encode_all(self.state), legal_masks(self.state))}

    def _standing_value(self) -> np.ndarray:
        """Reward scheme applied to the standings now: final scores once over, else the scores
        of finished rounds with provisional winners (T10 with churros held)."""
        s = self.state
        if s.is_over:
            return final_rewards(s.final_scores, s.winners, self.reward_scheme)
        scores, churros = s.scores_so_far(), s.churros_held()
        return final_rewards(scores, winners(scores, churros, self.config.rulings), self.reward_scheme)

    def _resolve(self, picks: list[int]) -> np.ndarray:
        """Apply one pick of every seat (each already checked with ``check_pick``); return the
        rewards (float64 (n,)) it earns."""
        ended = apply_checked_picks(self.state, picks)
        self._cycles += 1
        if ended and (self.round_rewards or self.state.is_over):
            phi = self._standing_value()
            r, self._phi = phi - self._phi, phi
            return r
        return self._no_reward

    def _end_infos(self) -> list[dict]:
        s = self.state
        ws = win_shares(s.winners, self.config.num_players)
        return [{"final_score": int(s.final_scores[i]), "win_share": float(ws[i])} for i in range(len(ws))]

    def _forfeit(self, offenders: list[int]) -> tuple[np.ndarray, list[dict]]:
        """hod_common.wrappers 'lose': offenders get ILLEGAL_REWARD, the others 0; the others
        share the win (win_share), final_score is the points of finished rounds."""
        n = self.config.num_players
        rewards = np.zeros(n)
        rewards[offenders] = ILLEGAL_REWARD
        others = [i for i in range(n) if i not in offenders]
        ws = win_shares(others, n) if others else np.zeros(n)
        scores = self.state.scores_so_far()
        names = [self.possible_agents[i] for i in offenders]
        infos = [{"illegal_action": names[0] if len(names) == 1 else names, "final_score": int(scores[i]),
                  "win_share": float(ws[i])} for i in range(n)]
        return rewards, infos

    def record(self) -> dict:
        """The JSON game record of the finished game (:mod:`tapeo_env.record`)."""
        from .record import make_record
        return make_record(self.state, seed=self.game_seed)

    # -- rendering ---------------------------------------------------------------------------
    def render(self):
        """``ansi``: the text (every bar and the scores); ``human``: prints it, returns None."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'human'")
            return None
        if self.state is None:
            text = "(no game: call reset())"
        else:
            text = render_text(self.state)
        if self.render_mode == "ansi":
            return text
        print(text)
        return None

    def close(self) -> None:
        pass


class raw_env(_TapeoCore, AECEnv):
    """Tapeo, AEC form, unwrapped (``illegal_action="raise"`` by default).

    Each pick, the agents act in seat order (``player_0`` first); their picks are buffered and
    revealed together when the last seat has picked, so no observation changes before that: no
    agent ever sees a same-pick choice of another. Options: see the package docstring.

    Raises:
        ConfigError: an option outside its legal values (named in the message).
        TypeError: an unknown option (the legal ones are listed).
    """

    def __init__(self, num_players: int = 4, render_mode: Optional[str] = None, reward_scheme: str = "points",
                 illegal_action: str = "raise", max_cycles: int = DEFAULT_MAX_CYCLES, round_rewards: bool = False,
                 **unknown: Any) -> None:
        super().__init__()
        self._setup(num_players, render_mode, reward_scheme, illegal_action, max_cycles, round_rewards, unknown)
        self.agents = []

    def reset(self, seed: Optional[int] = None, options: Optional[dict] = None) -> None:
        self._new_game(seed)
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self._picks = [0] * self.config.num_players
        self.agent_selection = self.agents[0]

    def observe(self, agent: str) -> dict:
        return self._observe(self._seat_of[agent])

    def step(self, action) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        seat = self._seat_of[agent]
        try:
            pick = check_pick(self.state, seat, action, agent)
        except IllegalActionError:
            if self.illegal_action == "raise":
                raise
            rewards, infos = self._forfeit([seat])
            self._cumulative_rewards[agent] = 0.0
            self._finish(rewards, infos, truncate=False)
            return
        self._cumulative_rewards[agent] = 0.0
        self._picks[seat] = pick
        n = self.config.num_players
        if seat < n - 1:
            for a in self.agents:
                self.rewards[a] = 0.0
            self.agent_selection = self.agents[seat + 1]
            return
        rewards = self._resolve(self._picks)
        if self.state.is_over:
            self._finish(rewards, self._end_infos(), truncate=False)
        elif self._cycles >= self.max_cycles:
            self._finish(rewards, [{} for _ in range(n)], truncate=True)
        else:
            for i, a in enumerate(self.agents):
                self.rewards[a] = float(rewards[i])
            self._accumulate_rewards()
            self.agent_selection = self.agents[0]
        if self.render_mode == "human":
            self.render()

    def _finish(self, rewards: np.ndarray, infos: list[dict], truncate: bool) -> None:
        for i, a in enumerate(self.agents):
            self.rewards[a] = float(rewards[i])
            self.infos[a] = infos[i]
            if truncate:
                self.truncations[a] = True
            else:
                self.terminations[a] = True
        self._accumulate_rewards()
        self.agent_selection = self.agents[0]


class TapeoParallelEnv(_TapeoCore, ParallelEnv):
    """Tapeo, Parallel form, unwrapped (``illegal_action="raise"`` by default; the public
    :func:`tapeo_env.parallel_env` uses ``"lose"``). ``step`` takes one action per live agent.

    Raises:
        ConfigError / TypeError: as :class:`raw_env`.
    """

    def __init__(self, num_players: int = 4, render_mode: Optional[str] = None, reward_scheme: str = "points",
                 illegal_action: str = "raise", max_cycles: int = DEFAULT_MAX_CYCLES, round_rewards: bool = False,
                 **unknown: Any) -> None:
        self._setup(num_players, render_mode, reward_scheme, illegal_action, max_cycles, round_rewards, unknown)
        self.agents = []

    def reset(self, seed: Optional[int] = None, options: Optional[dict] = None):
        self._new_game(seed)
        self.agents = self.possible_agents[:]
        return self._observe_all(), {a: {} for a in self.agents}

    def step(self, actions: dict):
        """Reveal one pick of every agent. Raises ValueError for missing/unknown agents,
        IllegalActionError (raise mode) for a pick outside the mask; state unchanged."""
        if not self.agents:
            raise ValueError("the game is over: call reset()")
        # every seat is live until the game ends, so the agents are exactly _seat_of's keys
        if not (type(actions) is dict and actions.keys() == self._seat_of.keys()):
            missing = [a for a in self.agents if a not in actions]
            extra = [a for a in actions if a not in self._seat_of]
            if missing or extra:
                raise ValueError(f"step() needs one action for each of {self.agents}; missing {missing}, "
                                 f"unknown {extra}")
        picks, offenders, state = [], [], self.state
        for i, a in enumerate(self.agents):
            try:
                picks.append(check_pick(state, i, actions[a], a))
            except IllegalActionError:
                if self.illegal_action == "raise":
                    raise
                offenders.append(i)
        terminated = truncated = False
        if offenders:
            rewards, info_list = self._forfeit(offenders)
            terminated = True
        else:
            rewards = self._resolve(picks)
            info_list = None  # empty infos
            if self.state.is_over:
                info_list, terminated = self._end_infos(), True
            elif self._cycles >= self.max_cycles:
                truncated = True
        agents = self.agents  # every seat is live until the game ends (== possible_agents)
        obs = self._observe_all()
        if rewards is self._no_reward:
            rew = dict.fromkeys(agents, 0.0)
        else:
            rew = dict(zip(agents, rewards.tolist()))
        terms = dict.fromkeys(agents, terminated)
        truncs = dict.fromkeys(agents, truncated)
        infos = {a: {} for a in agents} if info_list is None else dict(zip(agents, info_list))
        if terminated or truncated:
            self.agents = []
        if self.render_mode == "human":
            self.render()
        return obs, rew, terms, truncs, infos
