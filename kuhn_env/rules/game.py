"""Kuhn poker's declaration (:class:`hod.core.games.GameInfo`): its shape in one place.

Rules: kuhn_env/RULES.md (K1-K5; H. W. Kuhn 1950, OpenSpiel's ``kuhn_poker`` conventions).
"""
from __future__ import annotations

from hod.core.games import GameInfo

from .engine import ACTION_NAMES, MAX_DECISIONS, NUM_ACTIONS, NUM_PLAYERS
from .observation import LAYOUT, STATE_LAYOUT
from .record import ENV_NAME

GAME = GameInfo(
    name="kuhn",
    title="Kuhn poker",
    package="kuhn_env",
    env_name=ENV_NAME,
    gym_id="kuhn_env/Kuhn-v0",
    min_players=NUM_PLAYERS,
    max_players=NUM_PLAYERS,
    dynamics="sequential",              # K2: the seats alternate, seat 0 first
    num_actions=NUM_ACTIONS,            # pass, bet, and the Parallel form's no-op
    action_names=ACTION_NAMES,
    layout=LAYOUT,                      # OpenSpiel's information-state tensor, 11 floats
    max_game_length=MAX_DECISIONS,      # pass, bet, bet
    default_max_cycles=10,
    rule_options=(),
    batched_engine="kuhn_env.rules.batched:BatchedKuhn",
    rules_file="kuhn_env/RULES.md",
    state_layout=STATE_LAYOUT,          # both cards and the actions (PettingZoo state()), version 1
    state_encoder="kuhn_env.rules.observation:encode_state",
)
