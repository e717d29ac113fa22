"""Kuhn poker's PettingZoo environments (``kuhn_v0``): its declaration
(:data:`kuhn_env.rules.game.GAME`, sequential) and its single-game interface (:class:`KuhnRules`)
bound to the one adapter of every game (:mod:`hod.adapters.game_env`): the AEC :class:`raw_env`
(the natural form: the seats alternate) and the Parallel :class:`KuhnParallelEnv` (the seat not
to act sends ``no-op``, action 2, or leaves it out).

Rewards come at the end to both seats (K3; ``reward_scheme="points"``: the payoffs, +-1 or +-2).
A game has at most 3 decisions, so the default ``max_cycles`` (10) never truncates one.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from hod.adapters.game_env import AECGameEnv, ParallelGameEnv
from hod.adapters.wrappers import factory_options, wrap_aec
from hod.core.errors import IllegalActionError, action_id
from kuhn_env.rules import engine
from kuhn_env.rules.engine import NOOP, NUM_ACTIONS, Config, State, action_name, apply_action, legal_actions, legal_mask
from kuhn_env.rules.game import GAME
from kuhn_env.rules.observation import LAYOUT, OBS_HIGH, STATE_HIGH, encode, encode_all, encode_state
from kuhn_env.rules.record import ENV_NAME, make_record
from kuhn_env.rules.render import render_text

#: Default truncation limit in cycles (two turns each): more than any game's 3 decisions.
DEFAULT_MAX_CYCLES = GAME.default_max_cycles


class KuhnRules:
    """Kuhn poker's single-game interface (:class:`hod.core.engine.SingleGame`) over
    :mod:`kuhn_env.rules.engine`: a move is one decision of the seat to act (K2), and each
    decision ends that seat's turn; the other seat may only ``no-op``. Scores are the payoffs
    (K3), winners the seat that took the pot. No env options."""

    Config = Config
    default_num_players = 2
    options = ()
    obs_high = OBS_HIGH
    state_high = STATE_HIGH
    noop = NOOP
    round_rewards = False
    turn_ends = (1,) * NUM_ACTIONS
    layout = LAYOUT
    legal_mask = staticmethod(legal_mask)
    apply = staticmethod(apply_action)
    terminal = staticmethod(engine.is_terminal)
    scores = staticmethod(engine.scores)
    winners = staticmethod(engine.winners)
    record = staticmethod(make_record)
    encode_state = staticmethod(encode_state)

    def __init__(self, config: Config) -> None:
        self.config = config

    def new_game(self, seed: int) -> State:
        """As :meth:`hod.core.engine.SingleGame.new_game`: :func:`kuhn_env.rules.engine.new_game`
        of this table from ``seed`` (an int in ``0..2**64-1``), one card dealt to each seat.

        Raises:
            ConfigError: ``seed`` not an int in ``0..2**64-1``.
        """
        return engine.new_game(self.config, seed=seed)

    to_act = staticmethod(State.current.fget)          # State.current, the seat to act

    @staticmethod
    def check_action(s: State, seat: int, action: object, agent: str) -> int:
        """As :meth:`hod.core.engine.SingleGame.check_action`: ``action`` as an int in
        ``0..NUM_ACTIONS-1`` if it is one of :func:`~kuhn_env.rules.engine.legal_actions` of the
        seat to act (K2; ``seat`` is that seat, not read). Changes nothing.

        Raises:
            IllegalActionError: not an action id (:func:`hod.core.errors.action_id`) or not legal
                now; names ``agent`` and the legal actions.
        """
        legal = legal_actions(s)                       # ``seat`` is the seat to act
        a = action_id(action, NUM_ACTIONS)
        if a is None or a not in legal:
            raise IllegalActionError(agent, action, legal, action_name)
        return a

    @staticmethod
    def observe(s: State, seat: int) -> tuple:
        """As :meth:`hod.core.engine.SingleGame.observe`: ``(float32 (11,), int8 (3,))``,
        :func:`~kuhn_env.rules.observation.encode` and :func:`~kuhn_env.rules.engine.legal_mask`
        of ``seat`` (``no-op`` only for the seat not to act), fresh arrays."""
        return encode(s, seat), legal_mask(s, seat)

    @staticmethod
    def observe_all(s: State) -> tuple:
        """As :meth:`hod.core.engine.SingleGame.observe_all`: ``(float32 (2, 11), int8 (2, 3))``,
        both seats' :meth:`observe`, fresh arrays."""
        return encode_all(s), np.stack([legal_mask(s, i) for i in range(2)])

    @staticmethod
    def render(s: State, agents: Optional[list]) -> str:
        """As :meth:`hod.core.engine.SingleGame.render`: :func:`~kuhn_env.rules.render.render_text`
        (both cards, the actions so far, who acts or the payoffs), seats named by ``agents``
        (None: ``player_0``, ``player_1``)."""
        return render_text(s, agents)


class raw_env(AECGameEnv):
    """Kuhn poker, AEC form, unwrapped (``illegal_action="raise"`` by default). Options
    (``num_players=2``, ``render_mode``, ``reward_scheme``, ``illegal_action``, ``max_cycles=10``):
    :class:`hod.adapters.game_env.AECGameEnv`.

    Raises:
        ConfigError: an option outside its legal values (named in the message).
        UnknownOptionError: an unknown option (the legal ones are listed).
    """

    game, rules = GAME, KuhnRules


class KuhnParallelEnv(ParallelGameEnv):
    """Kuhn poker, Parallel form, unwrapped (``illegal_action="raise"`` by default; the factory
    :func:`parallel_env` uses ``"lose"``). Options and errors as :class:`raw_env`."""

    game, rules = GAME, KuhnRules


def env(**kwargs):
    """Kuhn poker, AEC form, with the standard wrappers; an illegal action loses the game
    (``illegal_action="lose"`` unless given). Options as :class:`raw_env`."""
    return wrap_aec(raw_env(**factory_options(kwargs)))


def parallel_env(**kwargs) -> KuhnParallelEnv:
    """Kuhn poker, Parallel form, ``illegal_action="lose"`` unless given. Options as :class:`raw_env`."""
    return KuhnParallelEnv(**factory_options(kwargs))


__all__ = ["DEFAULT_MAX_CYCLES", "ENV_NAME", "KuhnParallelEnv", "KuhnRules", "env", "parallel_env", "raw_env"]
