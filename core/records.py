"""Reading and writing JSON game records, and the fields every game's record shares (the rest
of each game's schema is in its own ``rules/record.py``).

Every record is a JSON object starting with the common header (:func:`record_header`)::

    {"game": str, "format_version": int, "seed": int >= 0 | null, "players": [str, ...] | null, ...}

``players`` (optional: absent or null when nobody said) labels who played each seat, in seat
order: a bot's registry name (``"expert"``, ``"ppo"``), a model id, or ``"human"``. Numbers are
checked by type as well as value: ``format_version`` ``1.0`` or ``true``, a float seat or action
id is a :class:`~hod.core.errors.RecordError` naming what is legal, never truncated. A record
file is at most :data:`MAX_RECORD_BYTES`, checked before it is parsed; JSON nested too deeply
to parse is a :class:`~hod.core.errors.RecordError` too.
"""
from __future__ import annotations

import json
import os
from typing import Any, Callable, Optional, Sequence

from .atomic import atomic_write_bytes, json_bytes
from .deal import SEED_RANGE, is_seed
from .errors import RecordError

#: The largest game record read or written (bytes of JSON): 1 MiB. A record of the longest game
#: (Ronda Robada, 432 decisions) takes well under 100 KB.
MAX_RECORD_BYTES = 1 << 20


def record_header(game: str, format_version: int, seed: Optional[int],
                  players: Optional[Sequence[str]], num_players: int) -> dict[str, Any]:
    """The fields every game record starts with, in this order: ``game``, ``format_version``,
    ``seed`` (int or None) and ``players`` (a list of ``num_players`` str labels, or None).

    Raises:
        RecordError: ``seed`` not None or an int in ``0..2**64-1``, or ``players`` not None or a list
            of ``num_players`` strings (the message names what is legal).
    """
    header = {"game": game, "format_version": format_version,
              "seed": None if seed is None else int(seed),
              "players": None if players is None else list(players)}
    check_common(header, num_players)
    return header


def save_record(path: str | os.PathLike, record: dict[str, Any], replay: Callable[[Any], Any]) -> None:
    """Write ``record`` to ``path`` as JSON, atomically, after checking it with the game's
    ``replay`` (each game's ``rules/record.py``) and its size (at most :data:`MAX_RECORD_BYTES`):
    a record we write is one we read back and replay.

    Raises:
        RecordError: whatever ``replay`` raises for an invalid record, or a record longer than
            :data:`MAX_RECORD_BYTES` (e.g. ``players`` labels of megabytes); nothing is written then.
    """
    replay(record)
    data = json_bytes(record)
    if len(data) > MAX_RECORD_BYTES:
        raise RecordError(f"{path}: the record takes {len(data):,} bytes of JSON; a game record is at most "
                          f"{MAX_RECORD_BYTES:,} bytes (MAX_RECORD_BYTES, hod.core.records); nothing written")
    atomic_write_bytes(path, data)


def load_record(path: str | os.PathLike, game: str, format_version: int) -> dict[str, Any]:
    """Read a record and check that it is one of ``game`` at ``format_version``.

    At most :data:`MAX_RECORD_BYTES` + 1 bytes are read: a longer file is refused before it is
    parsed.

    Raises:
        RecordError: longer than :data:`MAX_RECORD_BYTES`, not UTF-8 text, unreadable/truncated
            JSON, JSON nested too deeply to parse (a ``RecursionError`` inside :mod:`json`), not an
            object, another game or format version.
        OSError: the file cannot be opened (e.g. FileNotFoundError).
    """
    with open(path, "rb") as f:
        data = f.read(MAX_RECORD_BYTES + 1)
    if len(data) > MAX_RECORD_BYTES:
        raise RecordError(f"{path}: not a game record: larger than {MAX_RECORD_BYTES:,} bytes, the limit "
                          f"(MAX_RECORD_BYTES, hod.core.records); refused before parsing it")
    try:
        record = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise RecordError(f"{path}: not a JSON game record: a record is UTF-8 text ({e})") from e
    except json.JSONDecodeError as e:
        raise RecordError(f"{path}: not a valid JSON game record (truncated or corrupt?): {e}") from e
    except RecursionError:
        raise RecordError(f"{path}: not a JSON game record: nested too deeply to parse (a record is an object "
                          f"of a few levels: lists of actions or rounds)") from None
    except ValueError as e:   # an integer longer than Python's int-string limit (4,300 digits)
        raise RecordError(f"{path}: not a JSON game record: a number too long to read ({e}); seeds and ids are "
                          f"at most 20 digits") from None
    check_header(record, game, format_version)
    return record


def check_header(record: Any, game: str, format_version: int) -> None:
    """Raise :class:`RecordError` unless ``record`` is a dict for ``game`` at ``format_version``
    (an int: ``1.0`` and ``true`` are refused)."""
    if not isinstance(record, dict):
        raise RecordError(f"a game record must be a JSON object, got {type(record).__name__}")
    if record.get("game") != game:
        raise RecordError(f"record is for game {record.get('game')!r}, expected {game!r}")
    version = record.get("format_version")
    if type(version) is not int or version != format_version:
        raise RecordError(
            f"record format_version {version!r} is not supported; "
            f"this version reads {format_version} (an integer)"
        )


def check_common(record: dict[str, Any], num_players: int) -> None:
    """Check the common fields after the header: ``seed`` (absent, null or an int in
    ``0..2**64-1``, :data:`hod.core.deal.SEED_LIMIT`) and
    ``players`` (absent, null or a list of ``num_players`` strings).

    Raises:
        RecordError: either field is anything else (the message names what is legal).
    """
    seed = record.get("seed")
    if seed is not None and (type(seed) is not int or not is_seed(seed)):
        raise RecordError(f"seed {seed!r}: legal values are null or an integer in {SEED_RANGE} (the seeds games "
                          f"are dealt from)")
    players = record.get("players")
    if players is not None and not (isinstance(players, list) and len(players) == num_players
                                    and all(isinstance(p, str) for p in players)):
        raise RecordError(f"players {players!r}: legal values are null or a list of {num_players} "
                          "strings (one label per seat: a bot name, a model id or 'human')")


def record_int(name: str, value: Any, lo: int, hi: int) -> int:
    """``value`` if it is an int (not a bool or a float: nothing is truncated) in ``lo..hi``.

    Raises:
        RecordError: anything else; the message names the legal values.
    """
    if type(value) is not int or not lo <= value <= hi:
        raise RecordError(f"{name} {value!r}: legal values are the integers {lo}..{hi}")
    return value


def record_ints(name: str, value: Any, length: Optional[int] = None, hi: Optional[int] = None) -> list[int]:
    """``value`` if it is a list of ints (bools and floats refused) of ``length`` items (any
    length if None), each in ``0..hi`` if ``hi`` is given.

    Raises:
        RecordError: anything else; the message names what is legal.
    """
    ok = (isinstance(value, list) and (length is None or len(value) == length)
          and all(type(v) is int and (hi is None or 0 <= v <= hi) for v in value))
    if not ok:
        size = "" if length is None else f"{length} "
        rng = "" if hi is None else f" in 0..{hi}"
        raise RecordError(f"{name} {value!r}: legal values are lists of {size}integers{rng}")
    return value
