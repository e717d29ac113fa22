"""Text picture of a Ronda Robada position (the ``ansi`` and ``human`` render modes).

A spectator's view: every hand is shown (with suits), so it is for people and debugging, never
for an agent's input (agents get :mod:`robada_env.rules.observation`).
"""
from __future__ import annotations

from .cards import card_name, RANK_NAMES
from .engine import RUN_CLOSED, State, scores, winners


def _cards(cards) -> str:
    return ", ".join(card_name(c) for c in cards) if cards else "-"


def render_text(s: State, agents=None) -> str:
    """Multi-line description of ``s``: each seat's hand and pile (visible card, size, points),
    the loose cards, the run in progress, the deck and the scores.

    Args:
        s: the position.
        agents: names of the seats (default ``player_0..``).
    """
    n = s.n
    agents = agents or [f"player_{i}" for i in range(n)]
    lines = [f"Ronda Robada, {n} players, {len(s.deck)} cards left in the deck"]
    for i in range(n):
        mark = "->" if (not s.terminal and i == s.current) else "  "
        pile = s.piles[i]
        top = f"visible {card_name(pile[-1])}, {len(pile)} cards, {s.points[i]} pts" if pile else "empty"
        lines.append(f"{mark} {agents[i]}: hand [{_cards(s.hands[i])}] | pile: {top}")
    lines.append(f"   loose cards: [{_cards(s.loose)}]")
    if s.run:
        need = "closed" if s.run_next == RUN_CLOSED else f"needs {RANK_NAMES[s.run_next]}"
        taken = f", took piles of {[agents[t] for t in s.run_taken]}" if s.run_taken else ""
        lines.append(
            f"   run of {agents[s.current]}: started with {card_name(s.run[0])}, "
            f"{len(s.run)} cards gathered [{_cards(s.run[1:])}]{taken}; {need}"
        )
    sc = scores(s)
    lines.append("   scores: " + ", ".join(f"{agents[i]} {sc[i]}" for i in range(n)))
    if s.terminal:
        w = winners(s)
        lines.append("   game over; " + ("winner: " if len(w) == 1 else "shared win: ")
                     + ", ".join(agents[i] for i in w))
    return "\n".join(lines)
