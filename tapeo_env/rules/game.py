"""Tapeo's declaration (:class:`hod.core.games.GameInfo`): its shape in one place.

Rules: shared/rules/tapeo.txt with RULINGS T1-T10 (our words: docs/tapeo_rules.md).
"""
from __future__ import annotations

from hod.core.games import GameInfo

from .actions import ACTION_NAMES, NUM_ACTIONS
from .cards import MAX_HAND_SIZE, MAX_PLAYERS, MIN_PLAYERS
from .engine import NUM_ROUNDS
from .global_state import STATE_LAYOUT
from .observation import LAYOUT

#: Versioned PettingZoo name.
ENV_NAME = "tapeo_v0"

GAME = GameInfo(
    name="tapeo",
    title="Tapeo",
    package="tapeo_env",
    env_name=ENV_NAME,
    gym_id="tapeo_env/Tapeo-v0",
    min_players=MIN_PLAYERS,
    max_players=MAX_PLAYERS,
    dynamics="simultaneous",            # tapeo.txt "Each pick": every seat picks at once
    num_actions=NUM_ACTIONS,
    action_names=ACTION_NAMES,
    layout=LAYOUT,
    # each round every seat picks all but the last tapa of its hand (revealed automatically):
    # 3 rounds x (10 - 1) picks at 2 players = 27 steps, the most of any table size
    max_game_length=NUM_ROUNDS * (MAX_HAND_SIZE - 1),
    default_max_cycles=100,
    rule_options=(),
    batched_engine="tapeo_env.rules.batched:BatchedTapeo",
    rules_file="tapeo.txt",
    state_layout=STATE_LAYOUT,          # the global state (PettingZoo state()), version 1
    state_encoder="tapeo_env.rules.global_state:encode_state",
    chance_hook="tapeo_env.rules.chance:HOOK",   # the deals, for luck-corrected evaluation
)
