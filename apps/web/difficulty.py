"""The home page's difficulty choice: easy / medium / hard, each the strongest bot of that label
on the strength ladder (``agents/strength.json``, :mod:`agents.strength`) at the table size.

The file holds the entries of each table size the ladder was played at. For a table of ``n`` the
labels measured at ``n`` are used; only where the file has no entry for ``n`` do the 2-player
labels stand in, and then the answer says so (the page shows the note). Only bots that play ``n`` (:func:`hod.apps.play.supports`: a trained bot's model
card lists its table sizes) and that this install can run (:func:`hod.apps.play.needs_onnx`) are
candidates; among a label's candidates the highest ``rating`` wins.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from hod.agents.registry import names
from hod.agents.strength import LABELS, STRENGTH_FILE, load_strengths, measured_sizes
from hod.apps.play import needs_onnx, onnx_available, supports

#: The table size whose labels stand in where the ladder has no entry for a table size.
FALLBACK_PLAYERS = 2

__all__ = ["FALLBACK_PLAYERS", "LABELS", "difficulty_bots"]


def difficulty_bots(game: str, players: int, path: str | Path = STRENGTH_FILE) -> dict:
    """The bot each difficulty deals at a table of ``players`` of ``game``.

    Args:
        game: a registered game (``"tapeo"``, ``"robada"``).
        players: the table size (the person included).
        path: the strength file (default the shipped ``agents/strength.json``).

    Returns:
        ``{"bots": {label: name or None}, "measured_at": int, "note": str or None}``: for each label
        of :data:`LABELS` the registered bot with that label and the highest rating among the
        entries measured at ``measured_at`` players (None when no such bot plays ``players``);
        ``measured_at`` is ``players`` where the file has an entry of that size, else
        :data:`FALLBACK_PLAYERS`, and then ``note`` says so.

    Raises:
        ConfigError: unknown game (from the registry); a bad strength file
            (:func:`hod.agents.strength.load_strengths`).
    """
    registered = names(game)
    measured = players if players in measured_sizes(game, path) else FALLBACK_PLAYERS
    table = load_strengths(path).get(game, {})
    entries = {n: sizes[measured] for n, sizes in table.items() if n in registered and measured in sizes}
    runnable = onnx_available()
    best: dict[str, Optional[str]] = {}
    for label in LABELS:
        candidates = [(float(e["rating"]), n) for n, e in entries.items()
                      if e["label"] == label and supports(game, n, players) and (runnable or not needs_onnx(game, n))]
        best[label] = max(candidates)[1] if candidates else None
    note = None if measured == players else (
        f"Difficulty labels measured at {FALLBACK_PLAYERS} players (the strength ladder has no {players}-player "
        f"entry yet): the same bots, at a table of {players}.")
    return {"bots": best, "measured_at": measured, "note": note}
