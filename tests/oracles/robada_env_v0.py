"""The robada PettingZoo adapter as it was in the package before both games shared one adapter
(``hod.adapters.game_env``): ``robada_env/env.py`` of that time, unchanged below this docstring except
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
from hod.core.errors import IllegalActionError, ResetNeededError, action_id, check_int_range
from hod.core.rewards import final_rewards
from robada_env.rules.action_features import action_features
from robada_env.rules.actions import CONFIRM, DROP, NOOP, NUM_ACTIONS, TAP, action_name
from robada_env.rules.engine import (
    Config,
    State,
    apply_action,
    legal_actions,
    legal_mask,
    legal_masks,
    new_game,
    winners,
)
from robada_env.rules.game import ENV_NAME, GAME
from robada_env.rules.global_state import STATE_HIGH, encode_state
from robada_env.rules.observation import LAYOUTS, OBS_VERSIONS, encode, encode_all
from robada_env.rules.record import make_record
from robada_env.rules.render import render_text

#: Default ``max_cycles`` (cycles of ``num_players`` turns, see the module docstring): more than
#: the decisions of any game (engine.MAX_GAME_LENGTH = 432), so more than its cycles: a real
#: game is never truncated unless the user asks for it.
DEFAULT_MAX_CYCLES = GAME.default_max_cycles
#: Options of every Ronda Robada environment (besides the rules options of ``engine.Config``).
ENV_OPTIONS = ("num_players", "render_mode", "reward_scheme", "illegal_action", "max_cycles", "observation_version")
#: The observation layout version an env emits unless told (``observation_version``).
DEFAULT_OBSERVATION_VERSION = 1


def check_observation_version(version: object) -> int:
    """``observation_version`` as an int, 1 (layout ``robada`` v1, 192 floats) or 2 (v1 followed by
    the per-action summaries, 462 floats; :data:`robada_env.rules.observation.LAYOUTS`).

    Raises:
        ConfigError: anything else, bools included (the message names 1 and 2).
    """
    return check_int_range("observation_version", version, OBS_VERSIONS[0], OBS_VERSIONS[-1])


def parse_options(
    num_players: int, render_mode: Optional[str], reward_scheme: str, illegal_action: str,
    max_cycles: int, rules: dict,
) -> tuple[Config, int]:
    """Check the environment options (``hod.adapters.options``) and build the rules ``Config``.

    Returns:
        ``(config, max_cycles)``.

    Raises:
        UnknownOptionError: an unknown option (the message lists the legal ones).
        ConfigError: a value outside its legal set (the message names the legal values).
    """
    legal = list(ENV_OPTIONS) + [o for o in Config.option_names() if o != "num_players"]
    check_unknown_options(set(rules) - set(Config.option_names()), legal)
    max_cycles = check_env_options(render_mode, reward_scheme, illegal_action, max_cycles)
    return Config(num_players=num_players, **rules), max_cycles


def make_spaces(agents: list[str], observation_version: int = DEFAULT_OBSERVATION_VERSION) -> tuple[dict, dict]:
    """One observation space and one action space object per agent (built once); the observation
    is ``LAYOUTS[observation_version].size`` floats in [0, 1]."""
    size = LAYOUTS[observation_version].size
    obs = {
        a: spaces.Dict({
            "observation": spaces.Box(0.0, 1.0, (size,), dtype=np.float32),
            "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), dtype=np.int8),
        })
        for a in agents
    }
    act = {a: spaces.Discrete(NUM_ACTIONS) for a in agents}
    return obs, act


def observation_of(s: State, seat: int, version: int = DEFAULT_OBSERVATION_VERSION) -> dict[str, np.ndarray]:
    """The observation dict of ``seat``: ``{"observation": float32 (size,), "action_mask": int8
    (NUM_ACTIONS,)}``, the observation in layout ``version`` (1: 192 floats; 2: those followed by
    :func:`robada_env.rules.action_features.action_features` of them and the mask under the
    state's rules, 462 floats)."""
    obs, mask = encode(s, seat), legal_mask(s, seat)
    if version == 2:
        obs = np.concatenate([obs, action_features(obs[None], mask[None], s.config)[0]])
    return {"observation": obs, "action_mask": mask}


def observations_of(s: State, agents: list[str],
                    version: int = DEFAULT_OBSERVATION_VERSION) -> dict[str, dict[str, np.ndarray]]:
    """:func:`observation_of` of every seat, keyed by ``agents`` (one per seat, in seat order).
    Encoded in one go: the arrays are rows of two fresh arrays (float32 (n, size) and int8
    (n, NUM_ACTIONS)), never reused later."""
    obs, masks = encode_all(s), legal_masks(s)
    if version == 2:
        obs = np.concatenate([obs, action_features(obs, masks, s.config)], axis=1)
    return {a: {"observation": o, "action_mask": m} for a, o, m in zip(agents, obs, masks)}


class _RobadaCore(env_support.GlobalState):
    """Options, spaces, seeding, the outcome of a decision, records and rendering, shared by the
    AEC (:class:`raw_env`) and Parallel (:class:`robada_env.env.RobadaParallelEnv`) forms, and
    PettingZoo's global state (``state()``, ``state_space``:
    :class:`hod.adapters.env_support.GlobalState` over
    :func:`robada_env.rules.global_state.encode_state`)."""

    def _setup(self, num_players, render_mode, reward_scheme, illegal_action, max_cycles, rules,
               observation_version=DEFAULT_OBSERVATION_VERSION) -> None:
        self.config, self.max_cycles = parse_options(num_players, render_mode, reward_scheme, illegal_action,
                                                     max_cycles, rules)
        #: The observation layout version (1 or 2) and its layout.
        self.observation_version = check_observation_version(observation_version)
        self.observation_layout = LAYOUTS[self.observation_version]
        self.render_mode = render_mode
        self.reward_scheme = reward_scheme
        self.illegal_action = illegal_action
        self.possible_agents = [f"player_{i}" for i in range(self.config.num_players)]
        self._seat = {a: i for i, a in enumerate(self.possible_agents)}
        self.observation_spaces, self.action_spaces = make_spaces(self.possible_agents, self.observation_version)
        self._seeds = GameSeeds()
        #: Seed of the current game's deal (``reset(seed=s)``: s; ``reset()``: drawn from the
        #: env's generator), so ``reset(seed=env.game_seed)`` deals the same game again.
        self.game_seed: Optional[int] = None
        self.game_state: Optional[State] = None
        self._setup_state(encode_state, STATE_HIGH)
        self._turns = 0

    def observation_space(self, agent: str) -> spaces.Dict:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Discrete:
        return self.action_spaces[agent]

    def action_mask(self, agent: str) -> np.ndarray:
        """int8 mask (NUM_ACTIONS,) of ``agent`` now: its legal actions if it is to act, else
        only ``no-op``."""
        return legal_mask(self.game_state, self._seat[agent])

    def _new_game(self, seed: Optional[int]) -> None:
        """Shuffle and deal a new game. ``reset(seed=s)`` shuffles with ``s``; ``reset()`` draws
        the game seed from the env's generator (seeded by the last seeded reset, else fresh).

        Raises:
            ConfigError: ``seed`` is not None or an int in ``0..2**64-1``
                (:meth:`hod.adapters.options.GameSeeds.deal`); nothing changes.
        """
        self.game_seed, self.game_state = self._seeds.deal(seed, self._deal)
        self._turns = 0

    def _deal(self, seed: int) -> State:
        """The engine's new game of this table from ``seed`` (an int in ``0..2**64-1``)."""
        return new_game(self.config, seed=seed)

    def _advance(self, action: int) -> tuple[Optional[np.ndarray], Optional[list[dict]], bool]:
        """Apply a legal ``action`` (an int) of the seat to act.

        Returns:
            ``(rewards, infos, truncated)``: at the game's end the final rewards (float64 (n,),
            ``reward_scheme`` over the scores and winners of R8) and final infos
            (``hod.adapters.env_support.final_infos``); else ``None, None`` and whether this
            decision ended the turn that completes ``max_cycles`` cycles of ``n`` turns.
        """
        s = self.game_state
        apply_action(s, action)
        if s.terminal:
            w = winners(s)
            return final_rewards(s.points, w, self.reward_scheme), final_infos(s.points, w), False
        if DROP <= action < TAP or action == CONFIRM:   # a drop or a confirm ends the turn
            self._turns += 1
            return None, None, self._turns >= self.max_cycles * s.n
        return None, None, False

    def _forfeit(self, offenders: list[int]) -> tuple[np.ndarray, list[dict]]:
        """hod.adapters.wrappers 'lose' (:func:`hod.adapters.env_support.forfeit`); final_score is
        the points in each pile now."""
        return forfeit(offenders, self.possible_agents, self.game_state.points)

    def record(self, players: Optional[list[str]] = None) -> dict:
        """The JSON game record of the finished game (:mod:`robada_env.rules.record`), with the
        current ``game_seed`` and, if given, ``players`` (one label per seat: bot name, model
        id or ``"human"``).

        Raises:
            RecordError: no game, the game is not finished, or bad ``players``.
        """
        return make_record(self.game_state, seed=self.game_seed, players=players)

    def render(self) -> Optional[str]:
        """``ansi``: the position as text (with suits); ``human``: print it, return None.
        Before the first ``reset()`` the text is ``"(no game: call reset())"``."""
        return env_support.render(self.render_mode, self.game_state,
                                  lambda s: render_text(s, self.possible_agents))

    def close(self) -> None:
        pass


class raw_env(_RobadaCore, AECEnv):
    """Ronda Robada, AEC form, unwrapped.

    Args:
        num_players: 2..4.
        render_mode: None, ``"ansi"`` (``render()`` returns a str) or ``"human"`` (prints).
        reward_scheme: one of ``hod.core.rewards.REWARD_SCHEMES``; rewards come at game end.
        illegal_action: ``"raise"`` (default) or ``"lose"`` (see ``hod.adapters.wrappers``).
        max_cycles: truncate after this many cycles (a cycle = every seat takes one turn; see the
            module docstring; default 1000: never in a real game).
        observation_version: 1 (default; layout ``robada`` v1, 192 floats) or 2 (v1 followed by
            the per-action summaries of :mod:`robada_env.rules.action_features`, 462 floats).
        **rules: options of :class:`robada_env.rules.engine.Config` (``closing_ace``,
            ``may_take_own_pile``, ``leftovers_to_last_runner``).

    Raises:
        ConfigError: a bad value (names the legal ones).
        UnknownOptionError: an unknown option (lists the legal ones); both a ConfigError and a
            TypeError.
    """

    metadata = {"name": ENV_NAME, "render_modes": list(RENDER_MODES), "is_parallelizable": False,
                "render_fps": 1}

    def __init__(self, num_players: int = 2, render_mode: Optional[str] = None,
                 reward_scheme: str = "points", illegal_action: str = CLASS_ILLEGAL_ACTION,
                 max_cycles: int = DEFAULT_MAX_CYCLES, observation_version: int = DEFAULT_OBSERVATION_VERSION,
                 **rules: Any) -> None:
        super().__init__()
        self._setup(num_players, render_mode, reward_scheme, illegal_action, max_cycles, rules, observation_version)
        self.agents = []

    def reset(self, seed: Optional[int] = None, options: Optional[dict] = None) -> None:
        """Shuffle and deal a new game (ronda_robada.txt, the deal): every agent live, rewards 0,
        ``agent_selection`` the seat to act. ``seed`` fixes the whole deal (same seed, same game);
        without it the game seed is drawn from the generator of the last seeded reset.
        ``options``: None or a dict, whose keys are ignored (the env takes no reset options).

        Raises:
            ConfigError: ``seed`` neither None nor an int in ``0..2**64-1``, or ``options``
                neither None nor a dict (:mod:`hod.adapters.options`). A refused reset changes
                nothing: the game in progress, ``game_seed`` and the seeds of later unseeded
                resets stay as they were.
        """
        check_reset_options(options)
        self._new_game(seed)
        start_aec_episode(self)
        self.agent_selection = self.agents[self.game_state.current]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """What ``agent`` knows now (RULINGS R9): ``{"observation": float32 (size of the layout version),
        "action_mask": int8 (NUM_ACTIONS,)}`` (:func:`observation_of`; an agent not to act, or any
        agent once the game is over, has only ``no-op`` legal). Fresh arrays.

        Raises:
            ResetNeededError: before the first ``reset()``.
            KeyError: ``agent`` is not one of ``possible_agents``.
        """
        if self.game_state is None:
            raise ResetNeededError("observe() called before reset(): call reset()")
        return observation_of(self.game_state, self._seat[agent], self.observation_version)

    def step(self, action: Optional[int]) -> None:
        """Apply ``action`` for ``agent_selection`` (a finished agent steps None).

        Raises:
            IllegalActionError: with ``illegal_action="raise"``, an action outside the mask
                (the message names the legal actions); nothing changes.
            ResetNeededError: before ``reset()``, or after every agent is done.
        """
        agent = begin_aec_step(self, action, self.game_state is not None)
        if agent is None:
            return
        s = self.game_state
        legal = legal_actions(s)
        a = action_id(action, NUM_ACTIONS)   # one type check for both games: ints only
        if a is None or a not in legal:
            if self.illegal_action == "raise":
                raise IllegalActionError(agent, action, legal, action_name)
            self._cumulative_rewards[agent] = 0.0
            end_aec_episode(self, *self._forfeit([self._seat[agent]]), truncated=False)
            return
        self._cumulative_rewards[agent] = 0.0
        rewards, infos, truncated = self._advance(a)
        if rewards is not None:
            end_aec_episode(self, rewards, infos, truncated=False)
        elif truncated:
            end_aec_episode(self, [0.0] * s.n, list(pending_infos(self.agents).values()), truncated=True)
        else:
            for a in self.agents:
                self.rewards[a] = 0.0
            self._accumulate_rewards()
        self.agent_selection = self.possible_agents[s.current]
        if self.render_mode == "human":
            self.render()


def env(num_players: int = 2, render_mode: Optional[str] = None, reward_scheme: str = "points",
        max_cycles: int = DEFAULT_MAX_CYCLES, observation_version: int = DEFAULT_OBSERVATION_VERSION, **rules: Any):
    """Ronda Robada, AEC form, wrapped for users: ``raw_env(illegal_action="lose")`` under the
    order-enforcing wrapper (``hod.adapters.wrappers.wrap_aec``).

    An action outside the mask ends the game: the offender gets -1, the others 0 (the factories'
    default, ``hod.adapters.wrappers.factory_options``). Options as :class:`raw_env`
    (``illegal_action`` may be given to override).
    """
    return wrap_aec(raw_env(num_players=num_players, render_mode=render_mode, reward_scheme=reward_scheme,
                            max_cycles=max_cycles, observation_version=observation_version,
                            **factory_options(rules)))


# ---------------------------------------------------------------- Parallel form


class RobadaParallelEnv(_RobadaCore, ParallelEnv):
    """Ronda Robada, Parallel form (see the module docstring for how turns map to steps).

    Args: as :class:`robada_env.env.raw_env`; ``illegal_action`` defaults to ``"raise"``, as
    every unwrapped class (``hod.adapters.wrappers.CLASS_ILLEGAL_ACTION``); the factory
    :func:`parallel_env` uses ``"lose"``.

    Raises:
        ConfigError: a bad value (names the legal ones).
        UnknownOptionError: an unknown option (lists the legal ones).
    """

    metadata = {"name": ENV_NAME, "render_modes": list(RENDER_MODES), "render_fps": 1}

    def __init__(self, num_players: int = 2, render_mode: Optional[str] = None,
                 reward_scheme: str = "points", illegal_action: str = CLASS_ILLEGAL_ACTION,
                 max_cycles: int = DEFAULT_MAX_CYCLES, observation_version: int = DEFAULT_OBSERVATION_VERSION,
                 **rules: Any) -> None:
        self._setup(num_players, render_mode, reward_scheme, illegal_action, max_cycles, rules, observation_version)
        self.agents: list[str] = []

    def _observations(self) -> dict:
        return observations_of(self.game_state, self.possible_agents, self.observation_version)

    def reset(self, seed: Optional[int] = None, options: Optional[dict] = None):
        """Shuffle and deal a new game (``seed`` and ``options`` as the AEC env's ``reset``).

        Returns:
            ``(observations, infos)``: per agent the observation dict (:func:`observation_of`)
            and ``{"final_score": 0, "win_share": 0.0}`` (the end-of-game keys, zero until the end).

        Raises:
            ConfigError: ``seed`` neither None nor an int in ``0..2**64-1``, or ``options``
                neither None nor a dict; nothing changes (as the AEC env's ``reset``).
        """
        check_reset_options(options)
        self._new_game(seed)
        self.agents = list(self.possible_agents)
        return self._observations(), pending_infos(self.agents)

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
        if not (type(actions) is dict and actions.keys() == self._seat.keys()):
            extra = [a for a in actions if a not in live]
            missing = [] if actor in actions else [actor]
            if extra or missing:
                raise ValueError(f"step() needs an action for {actor} (the agent to act; the others may "
                                 f"leave out their no-op) and none for other agents; missing {missing}, "
                                 f"not live {extra}; live agents: {live}")
        offenders = []
        for i, a in enumerate(live):
            act = actions.get(a, NOOP)
            # one type check for both games (hod.core.errors.action_id); a plain int skips the call
            aid = act if (type(act) is int and 0 <= act < NUM_ACTIONS) else action_id(act, NUM_ACTIONS)
            if a == actor:
                legal = legal_actions(s)
                if aid is None or aid not in legal:
                    offenders.append((i, act, legal))
                actor_action = aid
            elif aid != NOOP:
                offenders.append((i, act, [NOOP]))
        truncated = False
        if offenders:
            if self.illegal_action == "raise":
                seat, act, legal = offenders[0]
                raise IllegalActionError(live[seat], act, legal, action_name)
            rewards, infos = self._forfeit([o[0] for o in offenders])
        else:
            rewards, infos, truncated = self._advance(actor_action)
        terminated = rewards is not None
        rew = dict.fromkeys(live, 0.0) if rewards is None else dict(zip(live, rewards.tolist()))
        infos = pending_infos(live) if infos is None else dict(zip(live, infos))
        terms = dict.fromkeys(live, terminated)
        truncs = dict.fromkeys(live, truncated)
        obs = self._observations()
        if terminated or truncated:
            self.agents = []
        if self.render_mode == "human":
            self.render()
        return obs, rew, terms, truncs, infos


def parallel_env(num_players: int = 2, render_mode: Optional[str] = None, reward_scheme: str = "points",
                 max_cycles: int = DEFAULT_MAX_CYCLES, observation_version: int = DEFAULT_OBSERVATION_VERSION,
                 **rules: Any) -> RobadaParallelEnv:
    """Ronda Robada, Parallel form, with ``illegal_action="lose"`` unless given (as :func:`env`;
    the class :class:`RobadaParallelEnv` itself defaults to ``"raise"``).

    See :class:`RobadaParallelEnv`."""
    return RobadaParallelEnv(num_players=num_players, render_mode=render_mode, reward_scheme=reward_scheme,
                             max_cycles=max_cycles, observation_version=observation_version,
                             **factory_options(rules))
