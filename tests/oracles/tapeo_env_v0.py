"""The tapeo PettingZoo adapter as it was in the package before both games shared one adapter
(``hod.adapters.game_env``): ``tapeo_env/env.py`` of that time, unchanged below this docstring except
that it is no longer imported by the package. The executable specification the bound adapter is
checked against, bit for bit (``tests/adapters/test_game_env.py``).
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv, ParallelEnv

from hod.adapters import env_support
from hod.adapters.env_support import (
    begin_aec_step,
    check_in_game,
    end_aec_episode,
    final_infos,
    forfeit,
    pending_infos,
    start_aec_episode,
)
from hod.adapters.options import (RENDER_MODES, GameSeeds, check_env_options, check_reset_options,
                                 check_unknown_options)
from hod.adapters.wrappers import CLASS_ILLEGAL_ACTION, factory_options, wrap_aec
from hod.core.errors import IllegalActionError, ResetNeededError, check_choice
from hod.core.rewards import final_rewards
from tapeo_env.rules.cards import NUM_KINDS
from tapeo_env.rules.engine import Config, State, apply_checked_actions, check_pick, legal_mask, legal_masks, new_game
from tapeo_env.rules.game import ENV_NAME, GAME
from tapeo_env.rules.global_state import STATE_HIGH, encode_state
from tapeo_env.rules.observation import OBS_HIGH, OBS_SIZE, encode, encode_all
from tapeo_env.rules.record import make_record
from tapeo_env.rules.render import render_text
from tapeo_env.rules.scoring import winning_seats

#: Default truncation limit in cycles (one cycle = every seat picks once, PettingZoo's meaning). A
#: full game takes at most 27 cycles (3 rounds x 9 decision picks, 2 players: GAME.max_game_length),
#: so the default (GAME.default_max_cycles = 100) never truncates.
DEFAULT_MAX_CYCLES = GAME.default_max_cycles
OPTIONS = ("num_players", "render_mode", "reward_scheme", "illegal_action", "max_cycles", "round_rewards")


class _TapeoCore(env_support.GlobalState):
    """Options, spaces, seeding, rewards and infos shared by the AEC and Parallel forms, and
    PettingZoo's global state (``state()``, ``state_space``:
    :class:`hod.adapters.env_support.GlobalState` over
    :func:`tapeo_env.rules.global_state.encode_state`)."""

    metadata = {"render_modes": list(RENDER_MODES), "name": ENV_NAME, "is_parallelizable": True,
                "render_fps": 1}

    def _setup(self, num_players, render_mode, reward_scheme, illegal_action, max_cycles, round_rewards,
               unknown: dict) -> None:
        check_unknown_options(unknown, OPTIONS)
        self.config = Config(num_players=num_players)
        self.max_cycles = check_env_options(render_mode, reward_scheme, illegal_action, max_cycles)
        check_choice("round_rewards", round_rewards, (False, True))
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
        #: Seed of the current game's engine (``reset(seed=s)``: s; ``reset()``: drawn from the
        #: env's generator), so ``reset(seed=env.game_seed)`` deals the same game again.
        self.game_seed: Optional[int] = None
        self._seeds = GameSeeds()
        #: What _resolve returns when a pick earns nothing (shared, read-only).
        self._no_reward = np.zeros(n)
        self._no_reward.setflags(write=False)
        #: The engine state (:class:`tapeo_env.rules.engine.State`) of the game in progress (None
        #: before the first ``reset``). Not named ``state``: that is PettingZoo's ``state()``
        #: method, the global-state vector (:mod:`tapeo_env.rules.global_state`).
        self.game_state: Optional[State] = None
        self._setup_state(encode_state, STATE_HIGH)

    # -- spaces ------------------------------------------------------------------------------
    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    def action_mask(self, agent: str) -> np.ndarray:
        """int8 (10,) legal-action mask of ``agent`` now."""
        return legal_mask(self.game_state, self._seat_of[agent])

    # -- game flow ---------------------------------------------------------------------------
    def _new_game(self, seed: Optional[int]) -> None:
        """Deal a new game. ``reset(seed=s)`` fixes the whole game's deals (the engine is seeded
        with ``s``); ``reset()`` draws the game seed from the env's generator.

        Raises:
            ConfigError: ``seed`` is not None or an int in ``0..2**64-1``
                (:meth:`hod.adapters.options.GameSeeds.deal`); nothing changes.
        """
        self.game_seed, self.game_state = self._seeds.deal(seed, self._deal)
        self._phi = np.zeros(self.config.num_players)
        self._cycles = 0

    def _deal(self, seed: int) -> State:
        """The engine's new game of this table from ``seed`` (an int in ``0..2**64-1``)."""
        return new_game(self.config, seed=seed)

    def _observe(self, seat: int) -> dict:
        return {"observation": encode(self.game_state, seat), "action_mask": legal_mask(self.game_state, seat)}

    def _observe_all(self) -> dict:
        """Observation dicts of every seat, keyed by agent. Encoded in one go: the arrays are rows
        of two fresh arrays (float32 (n, OBS_SIZE) and int8 (n, 10)), never reused later."""
        return {a: {"observation": o, "action_mask": m}
                for a, o, m in zip(self.possible_agents, encode_all(self.game_state), legal_masks(self.game_state))}

    def _standing_value(self) -> np.ndarray:
        """Reward scheme applied to the standings now: final scores once over, else the scores
        of finished rounds with provisional winners (T10 with churros held)."""
        s = self.game_state
        if s.terminal:
            return final_rewards(s.final_scores, s.winners, self.reward_scheme)
        scores, churros = s.scores_so_far(), s.churros_held()
        return final_rewards(scores, winning_seats(scores, churros, self.config.rulings), self.reward_scheme)

    def _resolve(self, picks: list[int]) -> np.ndarray:
        """Apply one pick of every seat (each already checked with ``check_pick``); return the
        rewards (float64 (n,)) it earns."""
        ended = apply_checked_actions(self.game_state, picks)
        self._cycles += 1
        if ended and (self.round_rewards or self.game_state.terminal):
            phi = self._standing_value()
            r, self._phi = phi - self._phi, phi
            return r
        return self._no_reward

    def _end_infos(self) -> list[dict]:
        """Final infos per seat: final scores (T9) and win shares (T10 winners)."""
        return final_infos(self.game_state.final_scores, self.game_state.winners)

    def _forfeit(self, offenders: list[int]) -> tuple[np.ndarray, list[dict]]:
        """hod.adapters.wrappers 'lose' (:func:`hod.adapters.env_support.forfeit`); final_score is
        the points of finished rounds."""
        return forfeit(offenders, self.possible_agents, self.game_state.scores_so_far())

    def record(self, players: Optional[list[str]] = None) -> dict:
        """The JSON game record of the finished game (:mod:`tapeo_env.rules.record`), with the
        current ``game_seed`` and, if given, ``players`` (one label per seat: bot name, model
        id or ``"human"``).

        Raises:
            RecordError: no game, the game is not finished, or bad ``players``.
        """
        return make_record(self.game_state, seed=self.game_seed, players=players)

    # -- rendering ---------------------------------------------------------------------------
    def render(self):
        """``ansi``: the text (every bar and the scores); ``human``: prints it, returns None.
        Before the first ``reset()`` the text is ``"(no game: call reset())"``."""
        return env_support.render(self.render_mode, self.game_state, render_text)

    def close(self) -> None:
        pass


class raw_env(_TapeoCore, AECEnv):
    """Tapeo, AEC form, unwrapped (``illegal_action="raise"`` by default).

    Each pick, the agents act in seat order (``player_0`` first); their picks are buffered and
    revealed together when the last seat has picked, so no observation changes before that: no
    agent ever sees a same-pick choice of another. Options: see the package docstring.

    Raises:
        ConfigError: an option outside its legal values (named in the message).
        UnknownOptionError: an unknown option (the legal ones are listed); it is both a
            ConfigError and a TypeError.
    """

    def __init__(self, num_players: int = 4, render_mode: Optional[str] = None, reward_scheme: str = "points",
                 illegal_action: str = CLASS_ILLEGAL_ACTION, max_cycles: int = DEFAULT_MAX_CYCLES, round_rewards: bool = False,
                 **unknown: Any) -> None:
        super().__init__()
        self._setup(num_players, render_mode, reward_scheme, illegal_action, max_cycles, round_rewards, unknown)
        self.agents = []

    def reset(self, seed: Optional[int] = None, options: Optional[dict] = None) -> None:
        """Deal a new game (tapeo.txt "Setup"): every agent live, rewards 0, ``agent_selection``
        the first agent. ``reset(seed=s)`` fixes the whole game's deals (same seed, same game);
        ``reset()`` draws the game seed from the env's generator. ``options``: None or a dict,
        whose keys are ignored (the env takes no reset options).

        Raises:
            ConfigError: ``seed`` neither None nor an int in ``0..2**64-1``, or ``options``
                neither None nor a dict (:mod:`hod.adapters.options`). A refused reset changes
                nothing: the game in progress, ``game_seed`` and the seeds of later unseeded
                resets stay as they were.
        """
        check_reset_options(options)
        self._new_game(seed)
        start_aec_episode(self)
        self._picks = [0] * self.config.num_players
        self.agent_selection = self.agents[0]

    def observe(self, agent: str) -> dict:
        """What ``agent`` knows now: ``{"observation": float32 (OBS_SIZE,), "action_mask": int8
        (10,)}`` (the layout: :data:`tapeo_env.rules.observation.LAYOUT`; mask 1 = a kind in hand, all 0
        once the game is over). Fresh arrays.

        Raises:
            ResetNeededError: before the first ``reset()``.
            KeyError: ``agent`` is not one of ``possible_agents``.
        """
        if self.game_state is None:
            raise ResetNeededError("observe() called before reset(): call reset()")
        return self._observe(self._seat_of[agent])

    def step(self, action) -> None:
        """Pick ``action`` for ``agent_selection`` (a finished agent steps None).

        Raises:
            IllegalActionError: (raise mode) a pick outside the mask; nothing changes.
            ResetNeededError: before ``reset()``, or after every agent is done.
        """
        agent = begin_aec_step(self, action, self.game_state is not None)
        if agent is None:
            return
        seat = self._seat_of[agent]
        try:
            pick = check_pick(self.game_state, seat, action, agent)
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
        if self.game_state.terminal:
            self._finish(rewards, self._end_infos(), truncate=False)
        elif self._cycles >= self.max_cycles:
            self._finish(rewards, list(pending_infos(self.agents).values()), truncate=True)
        else:
            for i, a in enumerate(self.agents):
                self.rewards[a] = float(rewards[i])
            self._accumulate_rewards()
            self.agent_selection = self.agents[0]
        if self.render_mode == "human":
            self.render()

    def _finish(self, rewards: np.ndarray, infos: list[dict], truncate: bool) -> None:
        end_aec_episode(self, rewards, infos, truncate)
        self.agent_selection = self.agents[0]


class TapeoParallelEnv(_TapeoCore, ParallelEnv):
    """Tapeo, Parallel form, unwrapped (``illegal_action="raise"`` by default, as every unwrapped
    class: ``hod.adapters.wrappers.CLASS_ILLEGAL_ACTION``; the factory :func:`tapeo_env.parallel_env`
    uses ``"lose"``). ``step`` takes one action per live agent.

    Raises:
        ConfigError / UnknownOptionError: as :class:`raw_env`.
    """

    def __init__(self, num_players: int = 4, render_mode: Optional[str] = None, reward_scheme: str = "points",
                 illegal_action: str = CLASS_ILLEGAL_ACTION, max_cycles: int = DEFAULT_MAX_CYCLES, round_rewards: bool = False,
                 **unknown: Any) -> None:
        self._setup(num_players, render_mode, reward_scheme, illegal_action, max_cycles, round_rewards, unknown)
        self.agents = []

    def reset(self, seed: Optional[int] = None, options: Optional[dict] = None):
        """Deal a new game (``seed`` and ``options`` as the AEC env's ``reset``).

        Returns:
            ``(observations, infos)``: per agent ``{"observation": float32 (OBS_SIZE,),
            "action_mask": int8 (10,)}`` and ``{"final_score": 0, "win_share": 0.0}`` (the
            end-of-game keys, zero until the end: ``hod.adapters.env_support.pending_infos``).

        Raises:
            ConfigError: ``seed`` neither None nor an int in ``0..2**64-1``, or ``options``
                neither None nor a dict; nothing changes (as the AEC env's ``reset``).
        """
        check_reset_options(options)
        self._new_game(seed)
        self.agents = self.possible_agents[:]
        return self._observe_all(), pending_infos(self.agents)

    def step(self, actions: dict):
        """Reveal one pick of every agent. Raises ValueError for missing/unknown agents,
        IllegalActionError (raise mode) for a pick outside the mask (state unchanged), and
        ResetNeededError before ``reset()`` or after the game ended."""
        if not self.agents:
            check_in_game(self.game_state is not None, False)
        # every seat is live until the game ends, so the agents are exactly _seat_of's keys
        if not (type(actions) is dict and actions.keys() == self._seat_of.keys()):
            missing = [a for a in self.agents if a not in actions]
            extra = [a for a in actions if a not in self._seat_of]
            if missing or extra:
                raise ValueError(f"step() needs one action for each of {self.agents}; missing {missing}, "
                                 f"unknown {extra}")
        picks, offenders, state = [], [], self.game_state
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
            info_list = None  # pending infos (zeros)
            if self.game_state.terminal:
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
        infos = pending_infos(agents) if info_list is None else dict(zip(agents, info_list))
        if terminated or truncated:
            self.agents = []
        if self.render_mode == "human":
            self.render()
        return obs, rew, terms, truncs, infos


def env(**kwargs):
    """Tapeo AEC env with PettingZoo's standard wrappers (``hod.adapters.wrappers.wrap_aec``); an
    illegal action loses the game (``illegal_action="lose"`` unless given: the factories' default,
    ``hod.adapters.wrappers.factory_options``). Options as :class:`raw_env`."""
    return wrap_aec(raw_env(**factory_options(kwargs)))


def parallel_env(**kwargs) -> TapeoParallelEnv:
    """Tapeo Parallel env (the natural form); an illegal action loses the game
    (``illegal_action="lose"`` unless given, as :func:`env`). Options as :class:`TapeoParallelEnv`."""
    return TapeoParallelEnv(**factory_options(kwargs))
