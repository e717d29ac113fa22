"""Atomic file writes: write to a temporary file in the target folder, fsync, then rename.

A reader never sees a half-written checkpoint, record or report, even if the writer is killed,
and a killed writer leaves no temporary file behind for long:

* On Linux the data is first written to an unnamed file (``O_TMPFILE``): a kill while the bytes
  are written leaves nothing on disk. The file gets a name (``.<name>.<pid>.<random>.tmp``) only
  for the instant between its fsync and the rename over the target.
* Elsewhere (or on a file system without ``O_TMPFILE``) the temporary file has that name while it
  is written.
* Every write first removes the temporary files left in *its folder* by writers that are no
  longer running (the process id in the name is not alive), whatever file they were writing:
  an orphan of a kill at the wrong instant disappears with the next write of any file in that
  folder (:func:`remove_folder_orphans`; :func:`remove_orphans` for one target), so the
  orphan of a file written once (a training run's ``step_<N>.zip``) goes at the next checkpoint.
  The file the killed writer was writing is not there: it keeps its previous content, or does
  not exist if it had none.

:func:`atomic_write_many` writes several files (a checkpoint and its side card) so that each is
complete and they are renamed into place back to back, in the order given.
"""
from __future__ import annotations

import errno
import json
import math
import os
import re
import secrets
from pathlib import Path
from typing import Any, Iterable

import numpy as np

_TMP_RE = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.[0-9a-f]+\.tmp$")


def _tmp_name(path: Path) -> Path:
    return path.parent / f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True   # exists (another user's) or cannot tell: keep its file
    return True


def _remove_dead(folder: Path, name: str | None) -> list[Path]:
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for e in entries:
        m = _TMP_RE.match(e.name)
        if m and (name is None or m["name"] == name) and not _alive(int(m["pid"])):
            try:
                os.unlink(e.path)
                removed.append(Path(e.path))
            except OSError:
                pass
    return removed


def remove_orphans(path: str | os.PathLike) -> list[Path]:
    """Remove the temporary files of target ``path`` (``.<name>.<pid>.<hex>.tmp`` in its folder)
    whose writer process is no longer alive; returns the removed paths."""
    path = Path(path)
    return _remove_dead(path.parent, path.name)


def remove_folder_orphans(folder: str | os.PathLike) -> list[Path]:
    """Remove every temporary file in ``folder`` (``.<name>.<pid>.<hex>.tmp``, whatever the
    target) whose writer process is no longer alive; returns the removed paths. Every atomic
    write does this in its target's folder first; a missing folder removes nothing."""
    return _remove_dead(Path(folder), None)


def _write_unnamed(folder: Path, data: bytes):
    """Write ``data`` to an unnamed file in ``folder`` (Linux ``O_TMPFILE``); returns its fd, or
    None where unsupported."""
    flag = getattr(os, "O_TMPFILE", None)
    if flag is None or not os.path.isdir("/proc/self/fd"):
        return None
    try:
        fd = os.open(folder, flag | os.O_WRONLY, 0o666)   # the umask applies, as for open()
    except OSError:   # file system without O_TMPFILE support
        return None
    try:
        _write_all(fd, data)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]
    os.fsync(fd)


def _prepare(path: Path, data: bytes) -> Path:
    """Write ``data`` completely and durably to a temporary name beside ``path``; returns that name."""
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_folder_orphans(path.parent)
    tmp = _tmp_name(path)
    fd = _write_unnamed(path.parent, data)
    if fd is not None:
        try:
            os.link(f"/proc/self/fd/{fd}", tmp)   # linkat(AT_SYMLINK_FOLLOW): the file gets its name
            return tmp
        except OSError:
            pass   # e.g. no /proc link support: fall back to a named temporary file
        finally:
            os.close(fd)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        _write_all(fd, data)
    except BaseException:
        os.close(fd)
        _unlink(tmp)
        raise
    os.close(fd)
    return tmp


def _unlink(p: Path) -> None:
    try:
        os.unlink(p)
    except FileNotFoundError:
        pass


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write_many(items: Iterable[tuple[str | os.PathLike, bytes]]) -> list[Path]:
    """Write each ``(path, data)`` atomically: all temporary files are written and fsynced first,
    then renamed over their targets back to back, in the given order. Returns the paths.

    A kill before the renames leaves every target as it was; a kill between two renames (a few
    microseconds) leaves the earlier targets new and the later ones old (their temporary files
    are removed by the next write in their folder, :func:`remove_folder_orphans`). A target that
    is a folder is refused before anything is written, so no target is replaced.

    Raises:
        IsADirectoryError: a target is an existing folder (its ``filename``); nothing is written.
        OSError: a write or rename refused (disk full ``ENOSPC``, file-size limit ``EFBIG``...);
            its ``filename`` is the target being written, and no temporary file is left.
    """
    items = [(Path(p), d) for p, d in items]
    for path, _ in items:   # a rename over a folder fails: refuse it before the first rename, not at it
        if path.is_dir():
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    tmps: list[Path] = []
    path = None
    try:
        for path, data in items:
            tmps.append(_prepare(path, data))
        for (path, _), tmp in zip(items, tmps):
            os.replace(tmp, path)
    except BaseException as e:
        for tmp in tmps:
            _unlink(tmp)
        if isinstance(e, OSError) and path is not None:   # name the target, not the fd or the temporary name
            e.filename, e.filename2 = str(path), None
        raise
    for folder in {p.parent for p, _ in items}:
        _fsync_dir(folder)
    return [p for p, _ in items]


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (parent folders are created). Returns the path."""
    return atomic_write_many([(path, data)])[0]


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """Write UTF-8 ``text`` to ``path`` atomically."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def json_safe(x: Any) -> Any:
    """``x`` with every NaN float replaced by None (JSON ``null``: NaN is not JSON) and numpy
    scalars turned into Python numbers, recursively through dicts, lists and tuples (tuples become
    lists); anything else is returned as it is."""
    if isinstance(x, float):
        return None if math.isnan(x) else x
    if isinstance(x, dict):
        return {k: json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [json_safe(v) for v in x]
    if isinstance(x, np.generic):
        return json_safe(x.item())
    return x


def json_bytes(obj: Any) -> bytes:
    """``obj`` as indented JSON (UTF-8, trailing newline): the bytes :func:`atomic_write_json` writes."""
    return (json.dumps(obj, indent=2, sort_keys=False) + "\n").encode("utf-8")


def atomic_write_json(path: str | os.PathLike, obj: Any) -> Path:
    """Write ``obj`` as indented JSON (UTF-8, trailing newline) to ``path`` atomically."""
    return atomic_write_bytes(path, json_bytes(obj))
