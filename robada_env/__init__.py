"""Ronda Robada as PettingZoo environments (``robada_v0``).

Rules: shared/rules/ronda_robada.txt and RULINGS R1-R9, in our own words in
docs/robada_rules.md. Full environment page: docs/robada_env.md.

=====================  =======================================================================
Import                 ``from robada_env import env, raw_env, parallel_env``
Agents                 ``player_0 .. player_{n-1}``, n = ``num_players`` in 2..4; seat 0 first,
                       turns go to the left (seat + 1)
Kind                   turn-based (AEC); a turn is several decisions of the same agent
Actions                ``Discrete(27)`` (table below)
Observations           ``{"observation": float32 (192,), "action_mask": int8 (27,)}``; with
                       ``observation_version=2``, float32 (462,): v1 + per-action summaries
Observation layout     ``robada_env.LAYOUT`` (version ``OBS_VERSION``), ``LAYOUT_V2`` (version 2);
                       tables in docs/robada_env.md (``LAYOUT.markdown_table()``)
Rewards                at game end only, ``reward_scheme`` in points / win_loss / margin
Final infos            ``"final_score"`` (int points), ``"win_share"`` (1/k for k tied winners)
Engine state           ``env.unwrapped.game_state`` (:class:`robada_env.rules.engine.State`)
=====================  =======================================================================

Actions (names from :func:`action_name`):

=======  ===================  ===================================================================
id       name                 legal when
=======  ===================  ===================================================================
0-9      ``start <rank>``     no run yet this turn; a hand card and a loose card of that rank
                              (rank 0..9 = A, 2..7, Sota, Caballo, Rey)
10-19    ``drop <rank>``      no run yet this turn; a hand card of rank (id - 10) (R4)
20       ``tap loose``        run in progress, not closed, a loose card of the needed rank (R3)
21-24    ``take pile +k``     run in progress, no loose card of the needed rank, the pile of seat
                              (actor + k) % n is non-empty with the needed rank visible (R3);
                              k = 0 is the actor's own pile
25       ``confirm``          a run is in progress (R4, R5)
26       ``no-op``            only for a seat that is not to act (Parallel form)
=======  ===================  ===================================================================

The mask of the seat to act holds exactly its legal actions and is never empty (with no run
``drop`` is always legal; during a run ``confirm`` is). Any other seat's mask allows only
``no-op``.

Constructors:

* ``env(num_players=2, render_mode=None, reward_scheme="points", max_cycles=1000, **rules)``:
  ``raw_env(illegal_action="lose")`` under PettingZoo's bounds and order wrappers.
* ``raw_env(..., illegal_action="raise")``: unwrapped AEC; an illegal action raises
  :class:`hod.core.errors.IllegalActionError` naming the legal actions, state unchanged.
* ``parallel_env(...)``: Parallel form, ``illegal_action="lose"``; every agent acts every step,
  the seats not to act with ``no-op`` (see :mod:`robada_env.env`). The class itself,
  ``RobadaParallelEnv(...)``, defaults to ``"raise"`` like ``raw_env`` (one rule for both games:
  unwrapped classes raise, factory functions lose).

``rules`` are the options of :class:`robada_env.rules.engine.Config`: ``closing_ace`` (R2),
``may_take_own_pile`` (R3), ``leftovers_to_last_runner`` (R7). Render modes: ``"ansi"``
(returns the position as text, with suits), ``"human"`` (prints it). Game records:
:mod:`robada_env.rules.record`. The pure engine (``Config``, ``State``, ``new_game``, ``legal_actions``,
``apply_action``, ``legal_mask``, ``sample_consistent_state`` for search bots) is
:mod:`robada_env.rules.engine`.
"""
from .rules.actions import ACTION_NAMES, NUM_ACTIONS, NOOP, action_name
from .rules.engine import (Config, State, apply_action, apply_actions, is_terminal, legal_actions, legal_mask,
                           legal_masks, new_game, scores, winners,
                     sample_consistent_state)
from .env import DEFAULT_MAX_CYCLES, ENV_NAME, RobadaParallelEnv, env, parallel_env, raw_env
from .rules.game import GAME
from .rules.observation import LAYOUT, LAYOUT_V2, OBS_SIZE, OBS_VERSION, encode
from .rules.record import load_record, make_record, replay, save_record

__all__ = [
    "ACTION_NAMES", "Config", "DEFAULT_MAX_CYCLES", "ENV_NAME", "GAME", "LAYOUT", "LAYOUT_V2", "NOOP", "NUM_ACTIONS", "OBS_SIZE",
    "OBS_VERSION", "RobadaParallelEnv", "State", "action_name", "apply_action", "apply_actions", "encode", "env",
    "is_terminal", "legal_masks", "scores", "winners",
    "legal_actions", "legal_mask", "new_game", "parallel_env", "raw_env", "sample_consistent_state",
    "load_record", "make_record", "replay", "save_record",
]

# The single-agent Gymnasium view ("robada_env/Robada-v0"), registered by string entry point: nothing of
# a higher floor is imported here (hod.adapters.registration).
from hod.adapters.registration import register_gym_env as _register_gym_env  # noqa: E402

_register_gym_env(GAME)
