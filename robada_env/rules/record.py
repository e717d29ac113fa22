"""JSON game records of Ronda Robada: the shuffled deck, every action and the final scores; a
record replays to the identical game (schema: docs/robada_env.md, "Game record").

Example::

    rec = env.unwrapped.record()    # = make_record(env.unwrapped.game_state, seed=env.unwrapped.game_seed)
    save_record(path, rec)          # atomic write
    state = replay(load_record(path))   # RecordError if anything does not match
"""
from __future__ import annotations

import os
from typing import Any, Optional

from hod.core.errors import ConfigError, IllegalActionError, RecordError
from hod.core.records import (
    check_common,
    check_header,
    load_record as _load,
    record_header,
    record_int,
    record_ints,
    save_record as _save,
)

from .actions import NUM_ACTIONS, action_name
from .cards import DECK_SIZE, card_name, parse_card
from .engine import Config, State, apply_action, new_game, scores, winners

#: ``"game"`` field of every Ronda Robada record.
GAME = "robada"
#: Version of the record schema this module writes and reads.
FORMAT_VERSION = 1


def make_record(state: State, seed: Optional[int] = None, players: Optional[list[str]] = None) -> dict[str, Any]:
    """Record of the game that led to ``state`` (replayed from its deck and history).

    Args:
        state: a state made by ``engine.new_game`` (it knows its deck order), usually terminal.
        seed: the seed the deck was drawn from, if known (informative only).
        players: optional label of who played each seat (bot name, model id, ``"human"``).

    Returns:
        A JSON-ready dict (schema in docs/robada_env.md).

    Raises:
        RecordError: no game (``state`` None), the state has no deck order (a built position),
            it is not finished, or ``players`` is not None or a list of one str per seat.
    """
    if state is None:
        raise RecordError("no game: a Ronda Robada record can only be made of a finished game")
    if state.deck_order is None:
        raise RecordError("only games started by new_game (with a known deck order) can be recorded")
    if not state.terminal:
        raise RecordError("the game is not finished; play it to the end before recording it")
    s = new_game(state.config, deck=state.deck_order)
    actions = []
    for a in state.history:
        actions.append({"seat": s.current, "action": a, "name": action_name(a)})
        apply_action(s, a)
    return {
        **record_header(GAME, FORMAT_VERSION, seed, players, state.n),
        "config": state.config.as_dict(),
        "deck": [card_name(c) for c in state.deck_order],
        "actions": actions,
        "final_scores": scores(state),
        "winners": winners(state),
    }


def replay(record: Any) -> State:
    """Replay ``record`` from its deck and return the final state.

    Checks: header (game, format_version), config, that ``deck`` is the 40 cards, that every
    action is legal for the seat recorded, that its name matches its id, that the game ends
    exactly with the last action, and that the final scores and winners are the recorded ones.

    Raises:
        RecordError: any mismatch, a corrupt field (numbers must be ints of their legal range: a
            float seat or action id is refused, never truncated), a bad ``seed`` or ``players``
            (hod.core.records.check_common) or a truncated action list (the message says which).
    """
    check_header(record, GAME, FORMAT_VERSION)
    for key in ("config", "deck", "actions", "final_scores", "winners"):
        if key not in record:
            raise RecordError(f"record lacks the field {key!r}")
    if not isinstance(record["config"], dict):
        raise RecordError(f"bad config in record: {record['config']!r}; legal: an object with the keys "
                          f"{Config.option_names()}")
    unknown = sorted(set(record["config"]) - set(Config.option_names()))
    if unknown:
        raise RecordError(f"bad config in record: unknown option(s) {unknown}; legal options: {Config.option_names()}")
    try:
        config = Config(**record["config"])
    except (TypeError, ConfigError) as e:
        raise RecordError(f"bad config in record: {e}") from e
    check_common(record, config.num_players)
    try:
        deck = [parse_card(c) for c in record["deck"]]
    except (ValueError, AttributeError, TypeError) as e:
        raise RecordError(f"bad deck in record: {e}") from e
    if sorted(deck) != list(range(DECK_SIZE)):
        raise RecordError(f"the deck must list each of the {DECK_SIZE} cards exactly once")
    s = new_game(config, deck=deck)
    if not isinstance(record["actions"], list):
        raise RecordError("'actions' must be a list")
    for i, step in enumerate(record["actions"]):
        try:
            seat, a, name = step["seat"], step["action"], step["name"]
        except (KeyError, TypeError) as e:
            raise RecordError(f"action {i}: malformed entry {step!r}") from e
        seat = record_int(f"action {i}: seat", seat, 0, config.num_players - 1)
        a = record_int(f"action {i}: action id", a, 0, NUM_ACTIONS - 1)
        if s.terminal:
            raise RecordError(f"action {i}: the game was already over")
        if seat != s.current:
            raise RecordError(f"action {i}: recorded for seat {seat}, but seat {s.current} is to act")
        if name != action_name(a):
            raise RecordError(f"action {i}: id {a} does not match its name {name!r}")
        try:
            apply_action(s, a)
        except IllegalActionError as e:
            raise RecordError(f"action {i}: {e}") from e
    if not s.terminal:
        raise RecordError(
            f"the record ends after {len(record['actions'])} actions but the game is not over "
            "(truncated record?)")
    record_ints("final_scores", record["final_scores"], config.num_players)
    record_ints("winners", record["winners"], hi=config.num_players - 1)
    if scores(s) != list(record["final_scores"]):
        raise RecordError(f"replayed scores {scores(s)} differ from recorded {record['final_scores']}")
    if winners(s) != list(record["winners"]):
        raise RecordError(f"replayed winners {winners(s)} differ from recorded {record['winners']}")
    return s


def save_record(path: str | os.PathLike, record: dict[str, Any]) -> None:
    """Write ``record`` atomically once :func:`replay` accepts it (RecordError otherwise, nothing written)."""
    _save(path, record, replay)


def load_record(path: str | os.PathLike) -> dict[str, Any]:
    """Read a record (checks the header only; call :func:`replay` to check the game).

    Raises:
        RecordError: a file over :data:`hod.core.records.MAX_RECORD_BYTES` (refused before it is
            parsed), not UTF-8, unreadable/truncated JSON or JSON nested too deeply to parse,
            another game or format version.
    """
    return _load(path, GAME, FORMAT_VERSION)
