"""Hand-built Tapeo positions for the bots' hand-worked tests (tests/agents/test_tapeo_bots.py,
tests/agents/test_tapeo_expert_batch.py)."""
from __future__ import annotations

from tapeo_env.rules.engine import Config, legal_mask, new_game
from tapeo_env.rules.observation import encode


def position(num_players, hand_size, pick, hands, bars, round_=0):
    """A hand-built state: ``hands[j]`` is the hand seat j holds now, ``bars[j]`` its bar, both
    dicts kind -> count (missing seats empty). Returns seat 0's observation dict
    (``{"observation": float32 (157,), "action_mask": int8 (10,)}``)."""
    state = new_game(Config(num_players=num_players, hand_size=hand_size), seed=0)
    state.round, state.pick = round_, pick
    state.hands[:] = 0
    state.bars[:] = 0
    for seat, h in enumerate(hands):
        for k, c in h.items():
            state.hands[seat, k] = c          # hands are stored by holder (engine.State)
    for seat, b in enumerate(bars):
        for k, c in b.items():
            state.bars[seat, k] = c
    return {"observation": encode(state, 0), "action_mask": legal_mask(state, 0)}
