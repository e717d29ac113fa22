"""Text rendering of a Tapeo state (public information only: bars, churros, scores)."""
from __future__ import annotations

import numpy as np

from .cards import KIND_NAMES, NUM_KINDS
from .engine import State
from .scoring import round_breakdown


def bar_text(bar: np.ndarray) -> str:
    """``"2 tortilla, 1 ham3"`` for a (K,) count vector; ``"-"`` if empty."""
    parts = [f"{int(bar[k])} {KIND_NAMES[k]}" for k in range(NUM_KINDS) if bar[k]]
    return ", ".join(parts) if parts else "-"


def render_text(state: State) -> str:
    """Every bar and the scores. Right after a round ends (and at game end) the finished round's
    bars and its score breakdown are shown, since the live bars have just been cleared."""
    cfg = state.config
    n = cfg.num_players
    lines: list[str] = []
    scores = state.scores_so_far()
    churros = state.churros_held()
    if state.round_bars and state.pick == 0:
        r = len(state.round_bars) - 1
        bars = state.round_bars[r]
        br = round_breakdown(bars, cfg.rulings)
        lines.append(f"Round {r + 1}/{cfg.num_rounds} finished")
        for i in range(n):
            detail = " ".join(f"{k}={int(v[i])}" for k, v in br.items() if v[i])
            lines.append(f"  player_{i}: {bar_text(bars[i])}")
            lines.append(f"    round points {int(state.round_scores[r, i])} ({detail or 'nothing'})")
    if state.terminal:
        lines.append("Game over")
        for i in range(n):
            lines.append(f"  player_{i}: {int(state.final_scores[i])} points "
                         f"(rounds {int(scores[i])}, churros kept {int(state.churros_kept[i])})")
        lines.append("Winner: " + ", ".join(f"player_{w}" for w in state.winners))
        return "\n".join(lines)
    lines.append(f"Round {state.round + 1}/{cfg.num_rounds}, pick {state.pick + 1}/{cfg.decision_picks}, "
                 f"{state.cards_in_hand} tapas in each hand")
    for i in range(n):
        lines.append(f"  player_{i}: score {int(scores[i])}, churros {int(churros[i])} | bar: {bar_text(state.bars[i])}")
    return "\n".join(lines)
