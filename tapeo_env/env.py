"""Tapeo's PettingZoo environments: its declaration (:data:`tapeo_env.rules.game.GAME`,
simultaneous) and its single-game interface (:class:`TapeoRules`) bound to the one adapter of
every game (:mod:`hod.adapters.game_env`): the AEC :class:`raw_env` and the Parallel
:class:`TapeoParallelEnv` (the natural form: picks are simultaneous).

The rules live in :mod:`tapeo_env.rules.engine`, the observation in
:mod:`tapeo_env.rules.observation`, the text in :mod:`tapeo_env.rules.render`. See the package
docstring (``tapeo_env.__doc__``) for the documentation page.
"""
from __future__ import annotations

from hod.adapters.game_env import AECGameEnv, EnvOption, ParallelGameEnv
from hod.adapters.wrappers import factory_options, wrap_aec
from tapeo_env.rules import engine
from tapeo_env.rules.cards import NUM_KINDS
from tapeo_env.rules.engine import Config, State, apply_checked_actions, check_pick, legal_mask, legal_masks
from tapeo_env.rules.game import ENV_NAME, GAME
from tapeo_env.rules.global_state import STATE_HIGH, encode_state
from tapeo_env.rules.observation import LAYOUT, OBS_HIGH, encode, encode_all
from tapeo_env.rules.record import make_record
from tapeo_env.rules.render import render_text

#: Default truncation limit in cycles (one cycle = every seat picks once, PettingZoo's meaning). A
#: full game takes at most 27 cycles (3 rounds x 9 decision picks, 2 players: GAME.max_game_length),
#: so the default (GAME.default_max_cycles = 100) never truncates.
DEFAULT_MAX_CYCLES = GAME.default_max_cycles


class TapeoRules:
    """Tapeo's single-game interface (:class:`hod.core.engine.SingleGame`) over
    :mod:`tapeo_env.rules.engine`: a move is one pick of every seat (tapeo.txt 'Each pick'),
    checked with :func:`~tapeo_env.rules.engine.check_pick` and applied with
    :func:`~tapeo_env.rules.engine.apply_checked_actions`, which says when a round ended. The
    standings are :func:`~tapeo_env.rules.engine.scores` and
    :func:`~tapeo_env.rules.engine.winners` (the finished rounds' points and provisional winners,
    T10 with churros held; the final ones once over). Option ``round_rewards``: each round's end
    also pays the change of the reward scheme's value of the standings.
    """

    Config = Config
    default_num_players = 4
    options = (EnvOption("round_rewards", False, (False, True), "tapeo_env package docstring, 'Rewards'"),)
    obs_high = OBS_HIGH
    state_high = STATE_HIGH
    noop = None
    turn_ends = (1,) * NUM_KINDS        # a simultaneous step is every seat's turn (not read)
    layout = LAYOUT
    legal_mask = staticmethod(legal_mask)
    check_action = staticmethod(check_pick)
    apply = staticmethod(apply_checked_actions)
    scores = staticmethod(engine.scores)
    winners = staticmethod(engine.winners)
    record = staticmethod(make_record)
    encode_state = staticmethod(encode_state)

    def __init__(self, config: Config, round_rewards: bool = False) -> None:
        self.config = config
        self.round_rewards = round_rewards

    def new_game(self, seed: int) -> State:
        """As :meth:`hod.core.engine.SingleGame.new_game`: :func:`tapeo_env.rules.engine.new_game`
        of this table from ``seed`` (an int in ``0..2**64-1``), round 0, pick 0 dealt.

        Raises:
            ConfigError: ``seed`` not an int in ``0..2**64-1``.
        """
        return engine.new_game(self.config, seed=seed)

    @staticmethod
    def to_act(state: State) -> int:
        """As :meth:`hod.core.engine.SingleGame.to_act`: always 0, the picks are simultaneous
        (tapeo.txt 'Each pick'); the AEC form asks the seats in seat order."""
        return 0

    @staticmethod
    def observe(state: State, seat: int) -> tuple:
        """As :meth:`hod.core.engine.SingleGame.observe`: ``(float32 (157,), int8 (NUM_KINDS,))``,
        :func:`~tapeo_env.rules.observation.encode` and :func:`~tapeo_env.rules.engine.legal_mask`
        of ``seat`` (the kinds in its hand; all 0 once over), fresh arrays.

        Raises:
            ConfigError: ``seat`` not an int in ``0..n-1``.
        """
        return encode(state, seat), legal_mask(state, seat)

    @staticmethod
    def observe_all(state: State) -> tuple:
        """As :meth:`hod.core.engine.SingleGame.observe_all`: ``(float32 (n, 157), int8 (n,
        NUM_KINDS))``, every seat's :meth:`observe` (:func:`~tapeo_env.rules.observation.encode_all`,
        :func:`~tapeo_env.rules.engine.legal_masks`), fresh arrays."""
        return encode_all(state), legal_masks(state)

    terminal = staticmethod(State.terminal.fget)      # State.terminal

    @staticmethod
    def render(state: State, agents: list) -> str:
        """As :meth:`hod.core.engine.SingleGame.render`: :func:`~tapeo_env.rules.render.render_text`
        (every bar and the scores); ``agents`` is not read."""
        return render_text(state)


class raw_env(AECGameEnv):
    """Tapeo, AEC form, unwrapped (``illegal_action="raise"`` by default).

    Each pick, the agents act in seat order (``player_0`` first); their picks are buffered and
    revealed together when the last seat has picked, so no observation changes before that: no
    agent ever sees a same-pick choice of another. Options (``num_players=4``, ``render_mode``,
    ``reward_scheme``, ``illegal_action``, ``max_cycles=100``, ``round_rewards=False``): see the
    package docstring and :class:`hod.adapters.game_env.AECGameEnv`.

    Raises:
        ConfigError: an option outside its legal values (named in the message).
        UnknownOptionError: an unknown option (the legal ones are listed); it is both a
            ConfigError and a TypeError.
    """

    game, rules = GAME, TapeoRules


class TapeoParallelEnv(ParallelGameEnv):
    """Tapeo, Parallel form, unwrapped (``illegal_action="raise"`` by default, as every unwrapped
    class: ``hod.adapters.wrappers.CLASS_ILLEGAL_ACTION``; the factory :func:`tapeo_env.parallel_env`
    uses ``"lose"``). ``step`` takes one pick per live agent. Options and errors as :class:`raw_env`.
    """

    game, rules = GAME, TapeoRules


def env(**kwargs):
    """Tapeo AEC env with PettingZoo's standard wrappers (``hod.adapters.wrappers.wrap_aec``); an
    illegal action loses the game (``illegal_action="lose"`` unless given: the factories' default,
    ``hod.adapters.wrappers.factory_options``). Options as :class:`raw_env`."""
    return wrap_aec(raw_env(**factory_options(kwargs)))


def parallel_env(**kwargs) -> TapeoParallelEnv:
    """Tapeo Parallel env (the natural form); an illegal action loses the game
    (``illegal_action="lose"`` unless given, as :func:`env`). Options as :class:`TapeoParallelEnv`."""
    return TapeoParallelEnv(**factory_options(kwargs))


__all__ = ["DEFAULT_MAX_CYCLES", "ENV_NAME", "TapeoParallelEnv", "TapeoRules", "env", "parallel_env", "raw_env"]
