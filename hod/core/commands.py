"""What every long command shares (training, the tournament and the ladder, evaluation, the web
server): how it ends when a write fails, and its exit statuses.

Exit statuses of the long commands (docs/training.md, docs/tournament.md):

=====================  ===================================================================
status                 meaning
=====================  ===================================================================
0                      done
1                      :data:`EXIT_PARTIAL`: stopped early but kept what finished (a
                       tournament whose worker process died: the finished games are
                       written, marked partial)
2                      bad arguments (argparse's usage error, or one ``error: ...`` line)
130                    :data:`EXIT_INTERRUPTED`: Ctrl-C (SIGINT), after saving or writing
                       what finished
74                     :data:`EXIT_WRITE_FAILED` (``os.EX_IOERR``): a file could not be
                       written (disk full, file-size limit, quota, read-only folder: one
                       line ``error: cannot write <path>: <reason>``) or another system
                       error stopped the work (``error: <path>: <reason>``)
=====================  ===================================================================

:func:`long_command` is the context manager a command's ``main`` runs in. A write past the
file-size limit (``RLIMIT_FSIZE``) sends ``SIGXFSZ``, whose default action kills the process
with no message; CPython ignores it at start-up, and :func:`long_command` makes sure it is
ignored (an embedding program may not), so the write raises ``OSError(EFBIG)`` instead, which
ends the command with the one line above.
"""
from __future__ import annotations

import contextlib
import errno
import os
import signal
import sys
from typing import Iterator, TextIO

__all__ = ["EXIT_PARTIAL", "EXIT_INTERRUPTED", "EXIT_WRITE_FAILED", "WRITE_ERRNOS", "write_error_line", "long_command"]

#: A command that stopped early but kept (and wrote) what finished.
EXIT_PARTIAL = 1
#: Stopped by Ctrl-C (SIGINT): 128 + 2, as shells report it.
EXIT_INTERRUPTED = 130
#: A file could not be written (``os.EX_IOERR``, sysexits.h's "input/output error").
EXIT_WRITE_FAILED = getattr(os, "EX_IOERR", 74)
#: The errors of a write refused for want of room: disk full, file-size limit, quota, read-only.
WRITE_ERRNOS = frozenset(e for e in (errno.ENOSPC, errno.EFBIG, getattr(errno, "EDQUOT", None), errno.EROFS)
                         if e is not None)


def write_error_line(e: OSError) -> str:
    """The one line a command prints for an ``OSError``: ``error: cannot write <path>: <reason>``
    for a write refused for want of room (:data:`WRITE_ERRNOS`), else ``error: <path>:
    <reason>``; ``<path>`` is the exception's ``filename`` (:mod:`hod.core.atomic` sets it to the
    target of every write), left out when there is none."""
    reason = e.strerror or str(e) or type(e).__name__
    where = f"{os.fsdecode(e.filename)}: " if e.filename is not None else ""
    verb = "cannot write " if e.errno in WRITE_ERRNOS and where else ""
    return f"error: {verb}{where}{reason}"


def _ignore(signum: int):
    try:
        return signal.signal(signum, signal.SIG_IGN)
    except (ValueError, OSError):   # not the main thread, or no such signal here
        return None


def _restore(signum: int, handler) -> None:
    if handler is not None:
        try:
            signal.signal(signum, handler)
        except (ValueError, OSError):
            pass


@contextlib.contextmanager
def long_command(stderr: TextIO | None = None) -> Iterator[None]:
    """Run a command's work with ``SIGXFSZ`` ignored, turning an ``OSError`` that reaches it
    (a write refused: disk full, file-size limit...) into one line on ``stderr`` and
    ``SystemExit(EXIT_WRITE_FAILED)``.

    The previous ``SIGXFSZ`` handler is restored on exit. Use it around the part of ``main`` that
    does the work, after the arguments are checked (bad arguments keep their status 2).

    Raises:
        SystemExit: status :data:`EXIT_WRITE_FAILED` after an ``OSError`` (the message is
            :func:`write_error_line`'s).
    """
    sigxfsz = getattr(signal, "SIGXFSZ", None)
    old = _ignore(sigxfsz) if sigxfsz is not None else None
    try:
        yield
    except OSError as e:
        print(write_error_line(e), file=stderr or sys.stderr, flush=True)
        raise SystemExit(EXIT_WRITE_FAILED) from None
    finally:
        if sigxfsz is not None:
            _restore(sigxfsz, old)
