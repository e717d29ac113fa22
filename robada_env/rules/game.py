"""Ronda Robada's declaration (:class:`hod.core.games.GameInfo`): its shape in one place.

Rules: shared/rules/ronda_robada.txt with RULINGS R1-R9 (our words: docs/robada_rules.md).
"""
from __future__ import annotations

from hod.core.games import GameInfo, RuleOption

from .actions import ACTION_NAMES, NUM_ACTIONS
from .engine import MAX_GAME_LENGTH, MAX_PLAYERS, MIN_PLAYERS
from .global_state import STATE_LAYOUT
from .observation import LAYOUT

#: Versioned PettingZoo name.
ENV_NAME = "robada_v0"

GAME = GameInfo(
    name="robada",
    title="Ronda Robada",
    package="robada_env",
    env_name=ENV_NAME,
    gym_id="robada_env/Robada-v0",
    min_players=MIN_PLAYERS,
    max_players=MAX_PLAYERS,
    dynamics="sequential",              # one seat acts at a time; a turn is several decisions
    num_actions=NUM_ACTIONS,
    action_names=ACTION_NAMES,
    layout=LAYOUT,
    max_game_length=MAX_GAME_LENGTH,    # 36 turns of at most 12 decisions
    default_max_cycles=1000,
    rule_options=(
        RuleOption("closing_ace", True, (True, False), "ronda_robada.txt 'Card order', RULINGS R2"),
        RuleOption("may_take_own_pile", True, (True, False), "ronda_robada.txt 'Your pile', RULINGS R3"),
        RuleOption("leftovers_to_last_runner", True, (True, False), "ronda_robada.txt, RULINGS R7"),
    ),
    batched_engine="robada_env.rules.batched:BatchedRobada",
    rules_file="ronda_robada.txt",
    state_layout=STATE_LAYOUT,          # the global state (PettingZoo state()), version 1
    state_encoder="robada_env.rules.global_state:encode_state",
    chance_hook="robada_env.rules.chance:HOOK",   # the deals, for luck-corrected evaluation
)
