"""Measured strength of the registered bots: the results of the strength ladder
(``python -m hod.benchmarks.ladder``, docs/results.md "Strength ladder"), shipped as
``agents/strength.json``.

The file maps ``game -> bot label -> entry``; an entry is
``{"rating", "sigma", "interval", "label", "games", "players", "date", "command"}``: the OpenSkill
Plackett-Luce ``mu`` (``rating``) and ``sigma`` after the ladder's games, the interval
``[mu - 2 sigma, mu + 2 sigma]``, the difficulty label (``"easy"``, ``"medium"``, ``"hard"``,
:data:`LABELS`), the number of games the bot played, the table size the ladder was played at,
when, and the command that measured it. A search bot measured at several budgets has one entry
per budget; the registry name (``"search"``) is the entry of its default budget, the others are
labelled ``<name>_d<determinizations>`` (``"search_d8"``).

Labels follow one rule (:func:`label_for`): with ``s = (mu - mu_random) / (mu_best - mu_random)``,
the bot's place between ``random`` and the best bot of the ladder, ``easy`` for ``s < 1/3``,
``medium`` for ``1/3 <= s < 2/3``, ``hard`` for ``s >= 2/3``.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Optional

from hod.core.errors import ConfigError
from hod.core.games import game_names

#: The shipped file of measured strengths.
STRENGTH_FILE = Path(__file__).with_name("strength.json")
#: Difficulty labels, weakest first.
LABELS = ("easy", "medium", "hard")
#: Boundaries of :func:`label_for` on the scaled rating s (random 0, best 1).
THRESHOLDS = (1 / 3, 2 / 3)

__all__ = ["LABELS", "STRENGTH_FILE", "THRESHOLDS", "label_for", "load_strengths", "strength", "strength_note"]


def label_for(mu: float, mu_random: float, mu_best: float) -> str:
    """The difficulty label of a bot rated ``mu`` in a ladder where ``random`` is rated
    ``mu_random`` and the best bot ``mu_best``: ``s = (mu - mu_random) / (mu_best - mu_random)``;
    ``easy`` if ``s < 1/3``, ``medium`` if ``1/3 <= s < 2/3``, ``hard`` otherwise. When the best bot
    is no better than random every bot is ``easy``."""
    span = mu_best - mu_random
    if not span > 0:
        return LABELS[0]
    s = (mu - mu_random) / span
    if s < THRESHOLDS[0]:
        return LABELS[0]
    if s < THRESHOLDS[1]:
        return LABELS[1]
    return LABELS[2]


@lru_cache(maxsize=4)
def _load(path: str) -> dict:
    p = Path(path)
    if not p.is_file():
        return {}
    data = json.loads(p.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object game -> bot -> entry")
    return data


def load_strengths(path: str | Path = STRENGTH_FILE) -> dict:
    """The whole file as ``{game: {bot: entry}}`` (``{}`` when there is none). A copy."""
    return json.loads(json.dumps(_load(str(path))))


def strength(game: str, name: str, path: str | Path = STRENGTH_FILE) -> Optional[dict]:
    """The measured strength of bot ``name`` of ``game`` (an entry of the module docstring), or
    None if the ladder has not measured it.

    Raises:
        ConfigError: unknown game (legal values listed).
    """
    if not isinstance(game, str) or game not in game_names():
        raise ConfigError(f"unknown game {game!r}; legal values: {game_names()}")
    entry = _load(str(path)).get(game, {}).get(name)
    return dict(entry) if isinstance(entry, dict) else None


def strength_note(game: str, name: str, path: str | Path = STRENGTH_FILE) -> str:
    """A short note for listings: ``"hard, rating 31.2 +- 1.4"``, or ``"unrated"``."""
    e = strength(game, name, path)
    if not e:
        return "unrated"
    return f"{e['label']}, rating {e['rating']:.1f} +- {2 * e['sigma']:.1f}"
