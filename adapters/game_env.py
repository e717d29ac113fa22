"""One PettingZoo adapter for every game (docs/DESIGN.md, "The PettingZoo adapter"): the AEC form
:class:`AECGameEnv` and the Parallel form :class:`ParallelGameEnv`, driven by two things a game
declares and nothing else:

* its declaration, :class:`hod.core.games.GameInfo` (``env_name``, ``dynamics``,
  ``num_actions``, the table sizes its ``Config`` accepts, ``rule_options``,
  ``default_max_cycles``);
* its single-game interface, a class implementing :class:`hod.core.engine.SingleGame` (new game,
  masks, the action check, one step, observations, scores, winners, the round-reward hook, the
  end of a turn, render, record, global state) and declaring its own env options
  (:class:`EnvOption`: Tapeo's ``round_rewards``, Ronda Robada's ``observation_version``).

A game's ``env.py`` only binds them, as thin subclasses (so the classes pickle by name)::

    class raw_env(AECGameEnv):
        game, rules = GAME, TapeoRules

    class TapeoParallelEnv(ParallelGameEnv):
        game, rules = GAME, TapeoRules

The declared ``dynamics`` picks the step of each form when the subclass is made
(:meth:`AECGameEnv.__init_subclass__`): ``"simultaneous"`` (every seat decides each step; the AEC
form asks the seats in seat order and reveals their buffered actions together when the last one
has acted), ``"sequential"`` (one seat, ``rules.to_act(state)``, decides; in the Parallel form
every other live seat sends the declared ``rules.noop`` action or leaves it out).

What every game gets from here, once (docs/DESIGN.md, "Environment contract"): the common options
and the seed checks (:mod:`hod.adapters.options`), the illegal-action modes
(:mod:`hod.adapters.wrappers`), ``max_cycles`` in cycles (a cycle is every seat taking one turn:
``num_players`` turns; a simultaneous step is every seat's turn, a sequential decision ends a
turn when ``rules.turn_ends[action]``), the rewards (the reward scheme's value of the standings,
paid as its change at the game's end and, when ``rules.round_rewards``, at each round's end, so a
game's rewards add up to its final reward), the end-of-game and pending infos, forfeits, records,
render and PettingZoo's global state (:class:`hod.adapters.env_support.GlobalState`).
"""
from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Mapping
from typing import Any, ClassVar, Optional

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv, ParallelEnv

from hod.core.errors import IllegalActionError, ResetNeededError, UnknownAgentError, action_id, check_choice
from hod.core.games import GameInfo
from hod.core.rewards import final_rewards
from . import env_support
from .env_support import (begin_aec_step, check_in_game, end_aec_episode, final_infos, forfeit, pending_infos,
                          start_aec_episode)
from .options import RENDER_MODES, GameSeeds, check_env_options, check_reset_options, check_unknown_options
from .wrappers import CLASS_ILLEGAL_ACTION

#: The options every environment takes, in the order error messages list them (then the game's
#: env options, then its rule options).
COMMON_OPTIONS = ("num_players", "render_mode", "reward_scheme", "illegal_action", "max_cycles")


@dataclass(frozen=True)
class EnvOption:
    """An option of a game's environments that is not a rule (it goes to the game's
    :class:`hod.core.engine.SingleGame` class, not to its ``Config``), declared by that class.

    Attributes:
        name: keyword name (``"round_rewards"``); also the env attribute holding the value.
        default: value when not given.
        legal: the legal values, checked by value and type (:func:`hod.core.errors.check_choice`:
            a bool option takes only ``True``/``False``, an int option an integer that is not a
            bool); the value kept is the equal entry of ``legal`` (a numpy ``2`` becomes ``2``).
        doc: where the option is documented.
    """

    name: str
    default: Any
    legal: tuple
    doc: str = ""


class _Default:
    """The default of ``num_players`` and ``max_cycles`` in the signatures: the game's own
    (``rules.default_num_players``, ``game.default_max_cycles``); an explicit None is refused."""

    def __repr__(self) -> str:
        return "<the game's default>"


DEFAULT = _Default()


class GameEnvCore(env_support.GlobalState):
    """What the AEC and Parallel forms share: options, spaces, seeding, one step's outcome
    (rewards, infos, truncation), forfeits, records, rendering and the global state.

    A binding sets the class attributes ``game`` (the :class:`hod.core.games.GameInfo`) and
    ``rules`` (its :class:`hod.core.engine.SingleGame` class).

    Instance attributes (public): ``config`` (the rules ``Config``), ``render_mode``,
    ``reward_scheme``, ``illegal_action``, ``max_cycles``, one attribute per env option (e.g.
    ``round_rewards``), ``observation_layout`` (the layout of the observations emitted),
    ``possible_agents``, ``observation_spaces``, ``action_spaces``, ``game_seed`` (the current
    game's seed: ``reset(seed=env.game_seed)`` deals it again) and ``game_state`` (the engine
    state, None before the first ``reset``; not named ``state``: that is PettingZoo's global-state
    method).
    """

    game: ClassVar[GameInfo]
    rules: ClassVar[type]
    metadata: ClassVar[dict]

    @classmethod
    def _bind(cls) -> None:
        """Class-level facts of a binding (called by ``__init_subclass__``): the metadata."""
        if "game" not in vars(cls):
            return
        cls.metadata = {"render_modes": list(RENDER_MODES), "name": cls.game.env_name,
                        "is_parallelizable": cls.game.simultaneous, "render_fps": 1}

    def _setup(self, num_players: Any, render_mode: Optional[str], reward_scheme: str, illegal_action: str,
               max_cycles: Any, options: dict) -> None:
        """Check every option and build the table (see :class:`AECGameEnv` for the errors)."""
        game, R = self.game, self.rules
        env_names = [o.name for o in R.options]
        rule_names = [o.name for o in game.rule_options]
        check_unknown_options(set(options) - set(env_names) - set(rule_names),
                              list(COMMON_OPTIONS) + env_names + rule_names)
        if max_cycles is DEFAULT:
            max_cycles = game.default_max_cycles
        self.max_cycles = check_env_options(render_mode, reward_scheme, illegal_action, max_cycles)
        if num_players is DEFAULT:
            num_players = R.default_num_players
        self.config = R.Config(num_players=num_players, **{k: options[k] for k in rule_names if k in options})
        values = {}
        for o in R.options:
            v = options.get(o.name, o.default)
            check_choice(o.name, v, o.legal)
            values[o.name] = o.legal[o.legal.index(v)]
            setattr(self, o.name, values[o.name])
        self.render_mode = render_mode
        self.reward_scheme = reward_scheme
        self.illegal_action = illegal_action
        self._rules = rules = R(self.config, **values)
        n = self.config.num_players
        #: The layout of the observations emitted (:class:`hod.core.layout.ObsLayout`).
        self.observation_layout = rules.layout
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self._seat = {a: i for i, a in enumerate(self.possible_agents)}
        # Spaces are built once: PettingZoo's api_test checks they are the same object every call.
        A = game.num_actions
        self.observation_spaces = {a: spaces.Dict({
            "observation": spaces.Box(0.0, rules.obs_high, (rules.layout.size,), np.float32),
            "action_mask": spaces.Box(0, 1, (A,), np.int8),
        }) for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(A) for a in self.possible_agents}
        self.game_seed: Optional[int] = None
        self.game_state: Any = None
        self._seeds = GameSeeds()
        #: What a step that earns nothing returns (shared, read-only).
        self._no_reward = np.zeros(n)
        self._no_reward.setflags(write=False)
        self._phi = np.zeros(n)
        self._turns = 0
        self._setup_state(R.encode_state, R.state_high)

    # -- spaces ------------------------------------------------------------------------------
    def seat_of(self, agent: str) -> int:
        """The seat (0-based) of ``agent``, one of ``possible_agents``.

        Raises:
            UnknownAgentError (a ``KeyError``): another name; the legal agents are named.
        """
        try:
            return self._seat[agent]
        except (KeyError, TypeError):   # TypeError: an unhashable name
            raise UnknownAgentError(f"unknown agent {agent!r}; legal agents: {self.possible_agents}") from None

    def observation_space(self, agent: str) -> spaces.Dict:
        """The observation space of ``agent``: ``Dict(observation: Box float32 (layout size,),
        action_mask: Box int8 (num_actions,))``. Raises UnknownAgentError as :meth:`seat_of`."""
        return self.observation_spaces[self.possible_agents[self.seat_of(agent)]]

    def action_space(self, agent: str) -> spaces.Discrete:
        """``Discrete(num_actions)``. Raises UnknownAgentError as :meth:`seat_of`."""
        return self.action_spaces[self.possible_agents[self.seat_of(agent)]]

    def action_mask(self, agent: str) -> np.ndarray:
        """int8 (num_actions,) legal-action mask of ``agent`` now (``rules.legal_mask``). Raises
        UnknownAgentError as :meth:`seat_of`."""
        return self._rules.legal_mask(self.game_state, self.seat_of(agent))

    # -- game flow ---------------------------------------------------------------------------
    def _new_game(self, seed: Optional[int]) -> None:
        """Deal a new game: ``reset(seed=s)`` deals from ``s``; ``reset()`` draws the game seed
        from the env's generator (:class:`hod.adapters.options.GameSeeds`).

        Raises:
            ConfigError: ``seed`` is not None or an int in ``0..2**64-1``; nothing changes.
        """
        self.game_seed, self.game_state = self._seeds.deal(seed, self._rules.new_game)
        self._phi = np.zeros(self.config.num_players)
        self._turns = 0

    def _observe_all(self) -> dict:
        """Observation dicts of every seat, keyed by agent: rows of two fresh arrays (float32
        (n, size) and int8 (n, num_actions)) never reused later."""
        obs, masks = self._rules.observe_all(self.game_state)
        return {a: {"observation": o, "action_mask": m} for a, o, m in zip(self.possible_agents, obs, masks)}

    def _play(self, move: Any, turns: int) -> tuple[np.ndarray, Optional[list], bool, bool]:
        """Apply a checked ``move`` (``rules.apply``) that completes ``turns`` turns.

        Returns:
            ``(rewards, infos, terminated, truncated)``: float64 (n,) rewards (the shared zeros
            :attr:`_no_reward` when nothing is paid); at the game's end the final infos
            (:func:`hod.adapters.env_support.final_infos`) and ``terminated``; else None and
            whether the turns now complete ``max_cycles`` cycles (``truncated``).
        """
        R, s = self._rules, self.game_state
        round_over = R.apply(s, move)
        self._turns += turns
        if R.terminal(s):
            return self._standings_change(), final_infos(R.scores(s), R.winners(s)), True, False
        rewards = self._standings_change() if round_over and R.round_rewards else self._no_reward
        return rewards, None, False, self._turns >= self.max_cycles * self.config.num_players

    def _standings_change(self) -> np.ndarray:
        """The change of the reward scheme's value of the standings (``rules.scores`` and
        ``rules.winners``: the final ones once the game is over) since it was last paid."""
        R, s = self._rules, self.game_state
        phi = final_rewards(R.scores(s), R.winners(s), self.reward_scheme)
        r, self._phi = phi - self._phi, phi
        return r

    def _forfeit(self, offenders: list[int]) -> tuple[np.ndarray, list[dict]]:
        """``illegal_action="lose"`` (:func:`hod.adapters.env_support.forfeit`); ``final_score``
        is each seat's score so far (``rules.scores``)."""
        return forfeit(offenders, self.possible_agents, self._rules.scores(self.game_state))

    def record(self, players: Optional[list[str]] = None) -> dict:
        """The JSON game record of the finished game (the game's ``rules/record.py``), with the
        current ``game_seed`` and, if given, ``players`` (one label per seat: bot name, model id
        or ``"human"``).

        Raises:
            RecordError: no game, the game is not finished, or bad ``players``.
        """
        return self._rules.record(self.game_state, seed=self.game_seed, players=players)

    def render(self) -> Optional[str]:
        """``ansi``: the position as text (``rules.render``); ``human``: prints it, returns None.
        Before the first ``reset()`` the text is ``"(no game: call reset())"``."""
        return env_support.render(self.render_mode, self.game_state,
                                  lambda s: self._rules.render(s, self.possible_agents))

    def close(self) -> None:
        pass


class AECGameEnv(GameEnvCore, AECEnv):
    """A game's AEC form, unwrapped (``illegal_action="raise"`` by default, as every unwrapped
    class: :data:`hod.adapters.wrappers.CLASS_ILLEGAL_ACTION`; the factory ``env()`` wraps it
    with ``"lose"``). A binding subclasses it with ``game`` and ``rules``.

    Args:
        num_players: the table size (default: the game's ``rules.default_num_players``).
        render_mode: None, ``"ansi"`` (``render()`` returns a str) or ``"human"`` (prints).
        reward_scheme: one of :data:`hod.core.rewards.REWARD_SCHEMES`.
        illegal_action: ``"raise"`` or ``"lose"`` (:mod:`hod.adapters.wrappers`).
        max_cycles: truncate after this many cycles (default ``game.default_max_cycles``,
            which no real game reaches).
        **options: the game's env options (``rules.options``) and rule options
            (``game.rule_options``, passed to its ``Config``).

    Raises:
        UnknownOptionError: an unknown option (the legal ones are listed); both a ConfigError
            and a TypeError.
        ConfigError: a value outside its legal set (named in the message).
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._bind()
        if "game" in vars(cls):
            cls.step = cls._step_simultaneous if cls.game.simultaneous else cls._step_sequential

    def __init__(self, num_players: Any = DEFAULT, render_mode: Optional[str] = None, reward_scheme: str = "points",
                 illegal_action: str = CLASS_ILLEGAL_ACTION, max_cycles: Any = DEFAULT, **options: Any) -> None:
        super().__init__()
        self._setup(num_players, render_mode, reward_scheme, illegal_action, max_cycles, options)
        self.agents = []

    def reset(self, seed: Optional[int] = None, options: Optional[dict] = None) -> None:
        """Deal a new game: every agent live, rewards 0, ``agent_selection`` the first seat to
        decide (``rules.to_act``; in a simultaneous game seat 0, then the others in seat order).
        ``reset(seed=s)`` fixes the whole game (same seed, same game); ``reset()`` draws the game
        seed from the env's generator (seeded by the last seeded reset). ``options``: None or a
        dict, whose keys are ignored (the envs take no reset options).

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
        self.agent_selection = self.agents[self._rules.to_act(self.game_state)]

    def observe(self, agent: str) -> dict:
        """What ``agent`` knows now: ``{"observation": float32 (layout size,), "action_mask": int8
        (num_actions,)}`` (``rules.observe``). Fresh arrays.

        Raises:
            ResetNeededError: before the first ``reset()``.
            UnknownAgentError (a ``KeyError``): ``agent`` is not one of ``possible_agents`` (named).
        """
        seat = self.seat_of(agent)
        if self.game_state is None:
            raise ResetNeededError("observe() called before reset(): call reset()")
        obs, mask = self._rules.observe(self.game_state, seat)
        return {"observation": obs, "action_mask": mask}

    def last(self, observe: bool = True):
        """PettingZoo's ``last()``: ``(observation, reward, termination, truncation, info)`` of
        ``agent_selection`` (the observation None when ``observe`` is False).

        Raises:
            ResetNeededError: before the first ``reset()`` (PettingZoo's own would raise an
                AttributeError).
        """
        if self.game_state is None:
            raise ResetNeededError("last() called before reset(): call reset()")
        return super().last(observe)

    def step(self, action) -> None:
        """Act ``action`` for ``agent_selection`` (a finished agent steps None). Replaced in each
        binding by the step of its declared dynamics.

        Raises:
            IllegalActionError: (raise mode) an action outside the mask; nothing changes.
            ResetNeededError: before ``reset()``, or after every agent is done.
        """
        raise NotImplementedError("a binding of AECGameEnv sets the class attributes game and rules")

    def _lose(self, agent: str, seat: int) -> None:
        """End the game on ``seat``'s illegal action (``illegal_action="lose"``)."""
        rewards, infos = self._forfeit([seat])
        self._cumulative_rewards[agent] = 0.0
        end_aec_episode(self, rewards, infos, truncated=False)

    def _step_simultaneous(self, action) -> None:
        """A simultaneous game's AEC step: the seats act in seat order; each action is checked
        and buffered, so no observation changes before the last seat has acted; then the joint
        action is applied (one turn of every seat)."""
        agent = begin_aec_step(self, action, self.game_state is not None)
        if agent is None:
            return
        seat = self._seat[agent]
        try:
            pick = self._rules.check_action(self.game_state, seat, action, agent)
        except IllegalActionError:
            if self.illegal_action == "raise":
                raise
            self._lose(agent, seat)
            self.agent_selection = self.agents[0]
            return
        self._cumulative_rewards[agent] = 0.0
        self._picks[seat] = pick
        n = self.config.num_players
        if seat < n - 1:
            for a in self.agents:
                self.rewards[a] = 0.0
            self.agent_selection = self.agents[seat + 1]
            return
        self._after(*self._play(self._picks, n))
        self.agent_selection = self.agents[0]
        if self.render_mode == "human":
            self.render()

    def _step_sequential(self, action) -> None:
        """A sequential game's AEC step: the seat to act (``agent_selection``) decides; then the
        next seat to act (``rules.to_act``) is selected."""
        agent = begin_aec_step(self, action, self.game_state is not None)
        if agent is None:
            return
        R, s = self._rules, self.game_state
        seat = self._seat[agent]
        try:
            a = R.check_action(s, seat, action, agent)
        except IllegalActionError:
            if self.illegal_action == "raise":
                raise
            self._lose(agent, seat)
            return
        self._cumulative_rewards[agent] = 0.0
        self._after(*self._play(a, R.turn_ends[a]))
        self.agent_selection = self.possible_agents[R.to_act(s)]
        if self.render_mode == "human":
            self.render()

    def _after(self, rewards: np.ndarray, infos: Optional[list], terminated: bool, truncated: bool) -> None:
        """Hand a step's outcome (:meth:`_play`) to the agents: end the episode (final or
        pending infos) or pay the rewards and accumulate them."""
        if terminated or truncated:
            end_aec_episode(self, rewards, infos if terminated else list(pending_infos(self.agents).values()),
                            truncated)
            return
        if rewards is self._no_reward:
            for a in self.agents:
                self.rewards[a] = 0.0
        else:
            for i, a in enumerate(self.agents):
                self.rewards[a] = float(rewards[i])
        self._accumulate_rewards()


class ParallelGameEnv(GameEnvCore, ParallelEnv):
    """A game's Parallel form, unwrapped (``illegal_action="raise"`` by default; the factory
    ``parallel_env()`` uses ``"lose"``). ``step`` takes one action per live agent: in a
    simultaneous game every agent's; in a sequential one the seat to act's real action, every
    other live agent the game's ``rules.noop`` (which it may leave out), so a Parallel episode
    is the same sequence of decisions as an AEC one, with the same observations. Options and
    errors: as :class:`AECGameEnv`.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._bind()
        if "game" in vars(cls):
            cls._joint_action = cls._joint_simultaneous if cls.game.simultaneous else cls._joint_sequential

    def __init__(self, num_players: Any = DEFAULT, render_mode: Optional[str] = None, reward_scheme: str = "points",
                 illegal_action: str = CLASS_ILLEGAL_ACTION, max_cycles: Any = DEFAULT, **options: Any) -> None:
        self._setup(num_players, render_mode, reward_scheme, illegal_action, max_cycles, options)
        self.agents: list[str] = []

    def reset(self, seed: Optional[int] = None, options: Optional[dict] = None):
        """Deal a new game (``seed`` and ``options`` as :meth:`AECGameEnv.reset`).

        Returns:
            ``(observations, infos)``: per agent ``{"observation": float32 (layout size,),
            "action_mask": int8 (num_actions,)}`` and ``{"final_score": 0, "win_share": 0.0}``
            (the end-of-game keys, zero until the end: ``env_support.pending_infos``).

        Raises:
            ConfigError: ``seed`` neither None nor an int in ``0..2**64-1``, or ``options``
                neither None nor a dict; nothing changes.
        """
        check_reset_options(options)
        self._new_game(seed)
        self.agents = list(self.possible_agents)
        return self._observe_all(), pending_infos(self.agents)

    def step(self, actions: dict):
        """One step: every live agent's action (see the class docstring).

        Returns:
            ``(observations, rewards, terminations, truncations, infos)``, dicts over the agents
            that were live before the step.

        Raises:
            ValueError: ``actions`` is not a dict (a mapping), leaves out an agent that must act
                or names one that is not live (the message lists them); nothing changes.
            IllegalActionError: with ``illegal_action="raise"``, an action outside an agent's
                mask (names the legal actions); nothing changes.
            ResetNeededError: before ``reset()``, or after the game ended.
        """
        if not self.agents:
            check_in_game(self.game_state is not None, False)
        if not isinstance(actions, Mapping):
            raise ValueError(f"step() takes a dict {{agent: action}} over the live agents {self.agents}; "
                             f"got {type(actions).__name__}")
        move, turns, offenders = self._joint_action(actions)
        agents = self.agents   # every seat is live until the game ends (== possible_agents)
        if offenders:
            if self.illegal_action == "raise":
                raise offenders[0][1]
            rewards, info_list = self._forfeit([seat for seat, _ in offenders])
            terminated, truncated = True, False
        else:
            rewards, info_list, terminated, truncated = self._play(move, turns)
        obs_rows, masks = self._rules.observe_all(self.game_state)         # as _observe_all, inline
        obs = {a: {"observation": o, "action_mask": m} for a, o, m in zip(agents, obs_rows, masks)}
        rew = dict.fromkeys(agents, 0.0) if rewards is self._no_reward else dict(zip(agents, rewards.tolist()))
        terms = dict.fromkeys(agents, terminated)
        truncs = dict.fromkeys(agents, truncated)
        if info_list is None:   # env_support.pending_infos, inline
            infos = {a: {"final_score": 0, "win_share": 0.0} for a in agents}
        else:
            infos = dict(zip(agents, info_list))
        if terminated or truncated:
            self.agents = []
        if self.render_mode == "human":
            self.render()
        return obs, rew, terms, truncs, infos

    def _joint_action(self, actions: dict) -> tuple[Any, int, list]:
        """``(move, turns, offenders)``: the checked move for ``rules.apply``, the turns it
        completes, and ``(seat, IllegalActionError)`` of each offending seat in seat order.
        Replaced in each binding by the form of its declared dynamics."""
        raise NotImplementedError("a binding of ParallelGameEnv sets the class attributes game and rules")

    def _joint_simultaneous(self, actions: dict) -> tuple[Any, int, list]:
        """Every live agent acts; the move is the list of their actions in seat order."""
        # every seat is live until the game ends, so the agents are exactly _seat's keys
        if not (type(actions) is dict and actions.keys() == self._seat.keys()):
            missing = [a for a in self.agents if a not in actions]
            extra = [a for a in actions if a not in self._seat]
            if missing or extra:
                raise ValueError(f"step() needs one action for each of {self.agents}; missing {missing}, "
                                 f"unknown {extra}")
        check, s = self._rules.check_action, self.game_state
        picks, offenders = [], []
        for i, a in enumerate(self.agents):
            try:
                picks.append(check(s, i, actions[a], a))
            except IllegalActionError as e:
                if self.illegal_action == "raise":
                    raise
                offenders.append((i, e))
        return picks, self.config.num_players, offenders

    def _joint_sequential(self, actions: dict) -> tuple[Any, int, list]:
        """The seat to act decides; every other live agent sends ``rules.noop`` (or None, or
        leaves it out: none of them is an illegal action); the move is the actor's action."""
        R, s = self._rules, self.game_state
        live, noop = self.agents, R.noop
        actor_seat = R.to_act(s)
        actor = self.possible_agents[actor_seat]
        # fast path: a dict naming exactly the live agents (every seat is live until the end)
        if not (type(actions) is dict and actions.keys() == self._seat.keys()):
            extra = [a for a in actions if a not in live]
            missing = [] if actor in actions else [actor]
            if extra or missing:
                raise ValueError(f"step() needs an action for {actor} (the agent to act; the others may "
                                 f"leave out their no-op) and none for other agents; missing {missing}, "
                                 f"not live {extra}; live agents: {live}")
        move, offenders = None, []
        for i, a in enumerate(live):
            act = actions.get(a, noop)
            if i == actor_seat:
                try:
                    move = R.check_action(s, i, act, a)
                except IllegalActionError as e:
                    offenders.append((i, e))
            elif act is not None and not (type(act) is int and act == noop) \
                    and action_id(act, self.game.num_actions) != noop:
                offenders.append((i, IllegalActionError(a, act, [noop], self.game.action_names.__getitem__)))
        return move, (0 if offenders else R.turn_ends[move]), offenders
