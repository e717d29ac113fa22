"""JSON game records of Kuhn poker: written from a finished game, replayed to the identical game.

Schema (``format_version`` 1; cards and actions by name)::

    {
      "game": "kuhn", "format_version": 1,   # the common header (hod.core.records.record_header)
      "seed": 123 | null,                    # the deal's seed (informative: replay deals "cards")
      "players": ["nash", "random"] | null,  # optional: who played each seat
      "env": "kuhn_v0",
      "cards": ["Q", "K"],                   # each seat's card, seat 0 first (K1)
      "actions": ["pass", "bet", "bet"],     # the decisions in order (K2)
      "payoffs": [-2, 2],                    # K3
      "winners": [1]
    }

Numbers are checked by type as well as value (a float payoff is a RecordError).
"""
from __future__ import annotations

import os
from typing import Any, Optional

from hod.core.errors import ConfigError, IllegalActionError, RecordError
from hod.core.records import check_common, check_header, load_record as _load, record_header, record_ints
from hod.core.records import save_record as _save

from .engine import ACTION_NAMES, BET, CARD_NAMES, NUM_PLAYERS, PASS, State, apply_action, new_game, scores, winners

GAME = "kuhn"
FORMAT_VERSION = 1
ENV_NAME = "kuhn_v0"


def make_record(state: Optional[State], seed: Optional[int] = None, players: Optional[list[str]] = None) -> dict[str, Any]:
    """The record of a finished game (``seed``: the deal's seed if known; ``players``: one label
    per seat).

    Raises:
        RecordError: no game, a game not over, or bad ``players``.
    """
    if state is None or not state.terminal:
        raise RecordError("a Kuhn record can only be made of a finished game")
    return {
        **record_header(GAME, FORMAT_VERSION, seed, players, NUM_PLAYERS),
        "env": ENV_NAME,
        "cards": [CARD_NAMES[c] for c in state.cards],
        "actions": [ACTION_NAMES[a] for a in state.history],
        "payoffs": scores(state),
        "winners": winners(state),
    }


def replay(record: dict[str, Any]) -> State:
    """Deal ``cards``, play ``actions`` and check the end, ``payoffs`` and ``winners``.

    Returns:
        The finished :class:`~kuhn_env.rules.engine.State`.

    Raises:
        RecordError: another game or version, a bad ``seed`` or ``players``, unknown or repeated
            cards, an unknown or illegal action, a game not over after its actions, or payoffs
            or winners other than the replayed game's.
    """
    check_header(record, GAME, FORMAT_VERSION)
    check_common(record, NUM_PLAYERS)
    cards, actions = record.get("cards"), record.get("actions")
    if not (isinstance(cards, list) and all(c in CARD_NAMES for c in cards)):
        raise RecordError(f"cards {cards!r}: legal values are two distinct names of {list(CARD_NAMES)}")
    legal_names = [ACTION_NAMES[PASS], ACTION_NAMES[BET]]
    if not (isinstance(actions, list) and all(a in legal_names for a in actions)):
        raise RecordError(f"actions {actions!r}: legal values are lists of {legal_names}")
    try:
        state = new_game(cards=[CARD_NAMES.index(c) for c in cards])
        for a in actions:
            apply_action(state, ACTION_NAMES.index(a))
    except (ConfigError, IllegalActionError) as e:
        raise RecordError(f"Kuhn record does not replay: {e}") from e
    if not state.terminal:
        raise RecordError(f"actions {actions} do not finish the game (kuhn_env/RULES.md K2)")
    for key, got in (("payoffs", scores(state)), ("winners", winners(state))):
        want = record.get(key)
        if key == "payoffs":
            if not (isinstance(want, list) and len(want) == NUM_PLAYERS and all(type(v) is int for v in want)):
                raise RecordError(f"payoffs {want!r}: legal values are lists of {NUM_PLAYERS} integers")
        else:
            record_ints(key, want, hi=NUM_PLAYERS - 1)
        if want != got:
            raise RecordError(f"{key} {want} recorded, replay gives {got}")
    return state


def save_record(path: str | os.PathLike, record: dict[str, Any]) -> None:
    """Write ``record`` atomically once :func:`replay` accepts it (RecordError otherwise, nothing written)."""
    _save(path, record, replay)


def load_record(path: str | os.PathLike) -> dict[str, Any]:
    """Read a Kuhn record (checks the header only; call :func:`replay` to check the game).

    Raises:
        RecordError: a file too large, not UTF-8, bad JSON, another game or format version.
    """
    return _load(path, GAME, FORMAT_VERSION)
