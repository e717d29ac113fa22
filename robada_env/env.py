"""Ronda Robada's PettingZoo environments (``robada_v0``): its declaration
(:data:`robada_env.rules.game.GAME`, sequential) and its single-game interface
(:class:`RobadaRules`) bound to the one adapter of every game (:mod:`hod.adapters.game_env`):
the AEC :class:`raw_env` (the natural, turn-based form) and the Parallel
:class:`RobadaParallelEnv`.

One agent acts at a time; a turn is several decisions of the same agent (``start`` then
``tap``/``take`` ... then ``confirm``, or one ``drop``), so ``agent_selection`` stays on the
runner until the run is confirmed. See the package docstring for the action table and
:mod:`robada_env.rules.observation` for the observation layout.

Parallel form: every agent submits an action at every step and only the seat to act's matters
(one decision per step, exactly as one AEC step, with the same observations); every other seat's
mask allows only ``no-op`` (action 26), which it must send or leave out (a missing action for
the seat to act is a ``ValueError`` naming it).

``max_cycles`` (both forms) counts cycles, PettingZoo's meaning: a cycle is every seat taking one
turn, i.e. ``num_players`` turns, a turn ended by a ``drop`` or a ``confirm``
(:attr:`RobadaRules.turn_ends`); the env truncates right after the turn that completes
``max_cycles`` cycles. A game has at most 40 turns, so the default (``GAME.default_max_cycles`` =
1000) never truncates a real game. Rewards come at the end of the game to every seat at once;
all agents terminate together.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from hod.adapters.game_env import AECGameEnv, EnvOption, ParallelGameEnv
from hod.adapters.wrappers import factory_options, wrap_aec
from hod.core.errors import IllegalActionError, action_id
from robada_env.rules import engine
from robada_env.rules.action_features import action_features
from robada_env.rules.actions import CONFIRM, DROP, NOOP, NUM_ACTIONS, TAP, action_name
from robada_env.rules.engine import Config, State, apply_action, legal_actions, legal_mask, legal_masks
from robada_env.rules.game import ENV_NAME, GAME
from robada_env.rules.global_state import STATE_HIGH, encode_state
from robada_env.rules.observation import LAYOUTS, OBS_VERSIONS, encode, encode_all
from robada_env.rules.record import make_record
from robada_env.rules.render import render_text

#: Default ``max_cycles`` (cycles of ``num_players`` turns, see the module docstring): more than
#: the decisions of any game (engine.MAX_GAME_LENGTH = 432), so more than its cycles: a real
#: game is never truncated unless the user asks for it.
DEFAULT_MAX_CYCLES = GAME.default_max_cycles
#: The observation layout version an env emits unless told (``observation_version``).
DEFAULT_OBSERVATION_VERSION = 1


def observation_of(s: State, seat: int, version: int = DEFAULT_OBSERVATION_VERSION) -> dict[str, np.ndarray]:
    """The observation dict of ``seat``: ``{"observation": float32 (size,), "action_mask": int8
    (NUM_ACTIONS,)}``, the observation in layout ``version`` (1: 192 floats; 2: those followed by
    :func:`robada_env.rules.action_features.action_features` of them and the mask under the
    state's rules, 462 floats)."""
    obs, mask = _observe(s, seat, version)
    return {"observation": obs, "action_mask": mask}


def _observe(s: State, seat: int, version: int) -> tuple[np.ndarray, np.ndarray]:
    """``(observation, mask)`` of :func:`observation_of`."""
    obs, mask = encode(s, seat), legal_mask(s, seat)
    if version == 2:
        obs = np.concatenate([obs, action_features(obs[None], mask[None], s.config)[0]])
    return obs, mask


class RobadaRules:
    """Ronda Robada's single-game interface (:class:`hod.core.engine.SingleGame`) over
    :mod:`robada_env.rules.engine`: a move is one decision of the seat to act
    (:func:`~robada_env.rules.engine.apply_action`); every other seat may only ``no-op``. Scores
    and winners are R8's (points in each pile; a tie is a shared win); rewards come at the end.
    Option ``observation_version``: 1 (layout ``robada`` v1, 192 floats) or 2 (v1 followed by the
    per-action summaries of :mod:`robada_env.rules.action_features`, 462 floats).
    """

    Config = Config
    default_num_players = 2
    options = (EnvOption("observation_version", DEFAULT_OBSERVATION_VERSION, OBS_VERSIONS,
                         "robada_env package docstring, 'Observations'"),)
    obs_high = 1.0
    state_high = STATE_HIGH
    noop = NOOP
    round_rewards = False
    #: per action id: 1 if the decision ends the seat's turn (a drop or a confirm), else 0
    turn_ends = tuple(int(DROP <= a < TAP or a == CONFIRM) for a in range(NUM_ACTIONS))
    legal_mask = staticmethod(legal_mask)
    scores = staticmethod(engine.scores)
    winners = staticmethod(engine.winners)
    record = staticmethod(make_record)
    encode_state = staticmethod(encode_state)

    def __init__(self, config: Config, observation_version: int = DEFAULT_OBSERVATION_VERSION) -> None:
        self.config = config
        self.observation_version = observation_version
        self.layout = LAYOUTS[observation_version]

    def new_game(self, seed: int) -> State:
        """As :meth:`hod.core.engine.SingleGame.new_game`: :func:`robada_env.rules.engine.new_game`
        of this table from ``seed`` (an int in ``0..2**64-1``).

        Raises:
            ConfigError: ``seed`` not an int in ``0..2**64-1``.
        """
        return engine.new_game(self.config, seed=seed)

    to_act = staticmethod(State.current.fget)          # State.current, the seat to act

    @staticmethod
    def check_action(s: State, seat: int, action: object, agent: str) -> int:
        """As :meth:`hod.core.engine.SingleGame.check_action`: ``action`` as an int in
        ``0..NUM_ACTIONS-1`` if it is one of :func:`~robada_env.rules.engine.legal_actions` of the
        seat to act (``seat`` is that seat: the adapter refuses anything but ``no-op`` from the
        others, so it is not read). Changes nothing.

        Raises:
            IllegalActionError: not an action id (:func:`hod.core.errors.action_id`) or not legal
                now; names ``agent`` and the legal actions.
        """
        legal = legal_actions(s)                       # ``seat`` is the seat to act
        # one type check for both games (hod.core.errors.action_id); a plain int skips the call
        a = action if (type(action) is int and 0 <= action < NUM_ACTIONS) else action_id(action, NUM_ACTIONS)
        if a is None or a not in legal:
            raise IllegalActionError(agent, action, legal, action_name)
        return a

    #: returns None: no round ends before the game's end
    apply = staticmethod(apply_action)
    terminal = staticmethod(engine.is_terminal)


    def observe(self, s: State, seat: int) -> tuple:
        """As :meth:`hod.core.engine.SingleGame.observe`: ``(float32 (layout.size,), int8
        (NUM_ACTIONS,))`` of ``seat`` in this env's ``observation_version`` (192 floats in v1, 462
        in v2; :func:`observation_of`), the mask ``no-op`` only for a seat not to act; fresh arrays."""
        return _observe(s, seat, self.observation_version)

    def observe_all(self, s: State) -> tuple:
        """As :meth:`hod.core.engine.SingleGame.observe_all`: ``(float32 (n, layout.size), int8 (n,
        NUM_ACTIONS))``, every seat's :meth:`observe` (v2: each row followed by its
        :func:`~robada_env.rules.action_features.action_features`), fresh arrays."""
        obs, masks = encode_all(s), legal_masks(s)
        if self.observation_version == 2:
            obs = np.concatenate([obs, action_features(obs, masks, s.config)], axis=1)
        return obs, masks

    @staticmethod
    def render(s: State, agents: Optional[list]) -> str:
        """As :meth:`hod.core.engine.SingleGame.render`: :func:`~robada_env.rules.render.render_text`
        (hands, piles, loose cards, the run, the deck, the scores), seats named by ``agents``
        (None: ``player_0..``)."""
        return render_text(s, agents)


class raw_env(AECGameEnv):
    """Ronda Robada, AEC form, unwrapped.

    Args:
        num_players: 2..4 (default 2).
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

    game, rules = GAME, RobadaRules


class RobadaParallelEnv(ParallelGameEnv):
    """Ronda Robada, Parallel form (see the module docstring for how turns map to steps).

    Args: as :class:`robada_env.env.raw_env`; ``illegal_action`` defaults to ``"raise"``, as
    every unwrapped class (``hod.adapters.wrappers.CLASS_ILLEGAL_ACTION``); the factory
    :func:`parallel_env` uses ``"lose"``.

    Raises:
        ConfigError: a bad value (names the legal ones).
        UnknownOptionError: an unknown option (lists the legal ones).
    """

    game, rules = GAME, RobadaRules


def env(**kwargs):
    """Ronda Robada, AEC form, wrapped for users: ``raw_env(illegal_action="lose")`` under the
    order-enforcing wrapper (``hod.adapters.wrappers.wrap_aec``).

    An action outside the mask ends the game: the offender gets -1, the others 0 (the factories'
    default, ``hod.adapters.wrappers.factory_options``). Options as :class:`raw_env`
    (``illegal_action`` may be given to override).
    """
    return wrap_aec(raw_env(**factory_options(kwargs)))


def parallel_env(**kwargs) -> RobadaParallelEnv:
    """Ronda Robada, Parallel form, with ``illegal_action="lose"`` unless given (as :func:`env`;
    the class :class:`RobadaParallelEnv` itself defaults to ``"raise"``). Options as
    :class:`raw_env`."""
    return RobadaParallelEnv(**factory_options(kwargs))


__all__ = ["DEFAULT_MAX_CYCLES", "DEFAULT_OBSERVATION_VERSION", "ENV_NAME", "RobadaParallelEnv", "RobadaRules",
           "env", "observation_of", "parallel_env", "raw_env"]
