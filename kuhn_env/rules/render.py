"""A text picture of a Kuhn position (the envs' ``render()``)."""
from __future__ import annotations

from typing import Optional

from .engine import ACTION_NAMES, CARD_NAMES, State, scores


def render_text(state: State, agents: Optional[list] = None) -> str:
    """Both cards, the actions so far and who acts (or the payoffs once over), e.g.
    ``"player_0: Q  player_1: K | pass bet | player_0 to act"``."""
    names = agents or [f"player_{i}" for i in range(2)]
    cards = "  ".join(f"{a}: {CARD_NAMES[c]}" for a, c in zip(names, state.cards))
    acts = " ".join(ACTION_NAMES[a] for a in state.history) or "-"
    end = (f"payoffs {scores(state)}" if state.terminal else f"{names[state.current]} to act")
    return f"{cards} | {acts} | {end}"
