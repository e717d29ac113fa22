"""Reading and writing JSON game records (the schema of each game is in its own module).

Every record is a JSON object with at least ``{"game": str, "format_version": int}``.
"""
from __future__ import annotations

import json
import os
from typing import Any

from .atomic import atomic_write_json
from .errors import RecordError


def save_record(path: str | os.PathLike, record: dict[str, Any]) -> None:
    """Write ``record`` to ``path`` as JSON, atomically."""
    atomic_write_json(path, record)


def load_record(path: str | os.PathLike, game: str, format_version: int) -> dict[str, Any]:
    """Read a record and check that it is one of ``game`` at ``format_version``.

    Raises:
        RecordError: unreadable/truncated JSON, not an object, another game or format version.
    """
    try:
        with open(path, "r", encoding="utf-8") as f:
            record = json.load(f)
    except json.JSONDecodeError as e:
        raise RecordError(f"{path}: not a valid JSON game record (truncated or corrupt?): {e}") from e
    check_header(record, game, format_version)
    return record


def check_header(record: Any, game: str, format_version: int) -> None:
    """Raise :class:`RecordError` unless ``record`` is a dict for ``game`` at ``format_version``."""
    if not isinstance(record, dict):
        raise RecordError(f"a game record must be a JSON object, got {type(record).__name__}")
    if record.get("game") != game:
        raise RecordError(f"record is for game {record.get('game')!r}, expected {game!r}")
    if record.get("format_version") != format_version:
        raise RecordError(
            f"record format_version {record.get('format_version')!r} is not supported; "
            f"this version reads {format_version}"
        )
