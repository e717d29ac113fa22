"""What every long command shares (training, expert iteration, best response, the tournament and
the ladder, evaluation, the web server): how it stops on a signal, how it ends when a write
fails, and its exit statuses.

Exit statuses of the long commands (docs/training.md, docs/tournament.md):

=====================  ===================================================================
status                 meaning
=====================  ===================================================================
0                      done (the web server: also stopped by Ctrl-C or SIGTERM)
1                      :data:`EXIT_PARTIAL`: stopped early but kept what finished (a
                       tournament whose worker process died: the finished games are
                       written, marked partial)
2                      bad arguments (argparse's usage error, or one ``error: ...`` line)
74                     :data:`EXIT_WRITE_FAILED` (``os.EX_IOERR``): a file could not be
                       written (disk full, file-size limit, quota, read-only folder: one
                       line ``error: cannot write <path>: <reason>``) or another system
                       error stopped the work (``error: <path>: <reason>``)
130                    :data:`EXIT_INTERRUPTED`: stopped by SIGINT (Ctrl-C), after saving
                       or writing what finished (128 + 2, as shells report it)
143                    :data:`EXIT_TERMINATED`: stopped by SIGTERM (``timeout``, ``kill``,
                       container stops, systemd, batch schedulers), after the same saving
                       (128 + 15, the shell's status for a process SIGTERM ends)
=====================  ===================================================================

:func:`long_command` is the context manager a command's work runs in. Inside it:

* **SIGTERM is handled like SIGINT**: it raises ``KeyboardInterrupt`` in the main thread, so
  the code that saves a checkpoint or keeps the finished games on Ctrl-C does the same on
  SIGTERM. Only the first SIGTERM raises; later ones are ignored while the command saves (a
  second Ctrl-C still aborts, as usual; SIGKILL always ends it). :func:`interrupted_status` is
  then 143 instead of 130.
* **SIGINT works even when inherited ignored.** A command started in the background of a
  non-interactive shell (``cmd &`` in a script, some batch systems) inherits SIGINT set to
  ``SIG_IGN``; :func:`long_command` puts Python's own handler (``KeyboardInterrupt``) back, so
  ``kill -INT`` stops it with a checkpoint too.
* **An interrupt that lands in a garbage-collection callback is delivered again.** Python runs a
  signal handler between any two bytecodes, also inside a ``__del__`` method or a ``weakref``
  callback, where the ``KeyboardInterrupt`` it raises is only reported ("Exception ignored
  in ...") and the command would go on; :func:`long_command` catches that report
  (``sys.unraisablehook``) and has the same signal's ``KeyboardInterrupt`` raised again in the
  main thread once the callback has returned (``_thread.interrupt_main`` from a timer thread, 10 ms
  on, then longer each time it is swallowed again, up to 1 s with jitter), without counting it as a
  second signal.
* **SIGXFSZ is ignored.** A write past the file-size limit (``RLIMIT_FSIZE``) sends SIGXFSZ,
  whose default action kills the process with no message; CPython ignores it at start-up, and
  :func:`long_command` makes sure of it (an embedding program may not), so the write raises
  ``OSError(EFBIG)``.
* **An ``OSError`` that reaches it** (a write refused: disk full, file-size limit...) ends the
  command with one line and status 74; a ``KeyboardInterrupt`` that reaches it (a signal before
  the command could save anything) with one line ``interrupted (SIGINT|SIGTERM)`` and status
  130 or 143, no traceback; a :class:`CommandStopped` (a worker process died, what finished was
  kept) with its one line and status 1.
* **A write refused in another thread** (an ``OSError`` of :data:`WRITE_ERRNOS`: TensorBoard's
  event writer meeting a full disk) prints no thread traceback: the first is kept, and the command ends with one line naming where it
  came from (``error: cannot write (a tensorboard thread): <reason>``) and status 74, when the
  main thread fails after it or when the work ends.

The handlers it found are restored when it exits. Signal handlers can only be set in the main
thread: elsewhere :func:`long_command` changes no handler and only converts the errors.
"""
from __future__ import annotations

import _thread
import contextlib
import errno
import os
import random
import signal
import sys
import threading
from typing import Iterator, Optional, TextIO

__all__ = ["EXIT_PARTIAL", "EXIT_INTERRUPTED", "EXIT_TERMINATED", "EXIT_WRITE_FAILED", "WRITE_ERRNOS",
           "CommandStopped", "write_error_line", "long_command", "stop_signal", "running_signal",
           "interrupted_status"]

#: A command that stopped early but kept (and wrote) what finished.
EXIT_PARTIAL = 1
#: Stopped by SIGINT (Ctrl-C): 128 + 2, as shells report it.
EXIT_INTERRUPTED = 130
#: Stopped by SIGTERM: 128 + 15, as shells report a process that SIGTERM ends.
EXIT_TERMINATED = 143
#: A file could not be written (``os.EX_IOERR``, sysexits.h's "input/output error").
EXIT_WRITE_FAILED = getattr(os, "EX_IOERR", 74)
#: The errors of a write refused for want of room: disk full, file-size limit, quota, read-only.
WRITE_ERRNOS = frozenset(e for e in (errno.ENOSPC, errno.EFBIG, getattr(errno, "EDQUOT", None), errno.EROFS)
                         if e is not None)



class CommandStopped(Exception):
    """A long command stopped early for a reason other than a signal (a worker process died),
    after keeping what had finished (a checkpoint, the finished games). :func:`long_command`
    prints its message as one line ``error: <message>`` and exits with :attr:`status`
    (:data:`EXIT_PARTIAL`), no traceback."""

    status = EXIT_PARTIAL


#: The stop signal received inside the latest :func:`long_command` (None: none yet).
_received: Optional[int] = None
#: The first refused write (``OSError`` of :data:`WRITE_ERRNOS`) raised in another thread inside
#: the latest :func:`long_command`, and
#: where it came from (``(error, origin)``; None: none).
_thread_error: Optional[tuple[OSError, str]] = None


def _origin(tb, thread: Optional[threading.Thread]) -> str:
    """Where a thread's exception came from: the top-level package of its innermost frame's file
    when that file is an installed package's (``site-packages/<package>/...``), else the thread's name."""
    path = ""
    while tb is not None:
        path, tb = tb.tb_frame.f_code.co_filename, tb.tb_next
    parts = path.replace(os.sep, "/").split("/")
    for marker in ("site-packages", "dist-packages"):
        if marker in parts and parts.index(marker) + 1 < len(parts):
            return f"a {parts[parts.index(marker) + 1]} thread"
    return f"thread {thread.name}" if thread is not None else "a thread"


def _thread_line(e: OSError, origin: str) -> str:
    """The one line for ``e`` raised in another thread (:func:`write_error_line` with its origin
    where the error names no file)."""
    if e.filename is not None:
        return write_error_line(e)
    reason = e.strerror or str(e) or type(e).__name__
    return f"error: {'cannot write ' if e.errno in WRITE_ERRNOS else ''}({origin}): {reason}"


def write_error_line(e: OSError) -> str:
    """The one line a command prints for an ``OSError``: ``error: cannot write <path>: <reason>``
    for a write refused for want of room (:data:`WRITE_ERRNOS`), else ``error: <path>:
    <reason>``; ``<path>`` is the exception's ``filename`` (:mod:`hod.core.atomic` sets it to the
    target of every write), left out when there is none."""
    reason = e.strerror or str(e) or type(e).__name__
    where = f"{os.fsdecode(e.filename)}: " if e.filename is not None else ""
    verb = "cannot write " if e.errno in WRITE_ERRNOS and where else ""
    return f"error: {verb}{where}{reason}"


def stop_signal() -> Optional[int]:
    """The signal that stopped the latest :func:`long_command` (``signal.SIGINT`` or
    ``signal.SIGTERM``), or None when none was received."""
    return _received


def running_signal() -> Optional[int]:
    """The signal received by the :func:`long_command` running now, or None (none received, or
    no long command running: a library call's ``KeyboardInterrupt``)."""
    return _received if _running else None


def interrupted_status() -> int:
    """The exit status of a command stopped by a signal: :data:`EXIT_TERMINATED` (143) after
    SIGTERM, else :data:`EXIT_INTERRUPTED` (130: SIGINT, or a ``KeyboardInterrupt`` raised
    some other way)."""
    return EXIT_TERMINATED if _received == signal.SIGTERM else EXIT_INTERRUPTED


def signal_name(signum: Optional[int] = None) -> str:
    """``"SIGTERM"`` / ``"SIGINT"``: the name of ``signum`` (default: :func:`stop_signal`,
    SIGINT when none was recorded)."""
    signum = _received if signum is None else signum
    return signal.Signals(signum).name if signum is not None else "SIGINT"


#: How many :func:`long_command` blocks are running now (nested ones count).
_running = 0
#: True while a swallowed interrupt is being delivered again (:func:`_redeliver`).
_redelivering = False
#: How many times in a row the interrupt being delivered again was swallowed again.
_redeliveries = 0


def _on_sigterm(signum, frame) -> None:
    global _received, _redelivering
    if _redelivering:
        _redelivering = False
        raise KeyboardInterrupt   # delivered again (_redeliver): not a second SIGTERM
    if _received == signal.SIGTERM:
        return   # the first SIGTERM is being handled (saving): let it finish
    _received = signal.SIGTERM
    raise KeyboardInterrupt


def _on_sigint(signum, frame) -> None:
    global _received, _redelivering
    _redelivering = False   # delivered again, or a new SIGINT: the same KeyboardInterrupt
    _received = signal.SIGINT
    raise KeyboardInterrupt


def _redeliver(unraisable) -> bool:
    """Deliver again a ``KeyboardInterrupt`` of our handlers that Python could only report
    (raised in a ``__del__`` or ``weakref`` callback); True when it did."""
    global _redelivering, _redeliveries
    if not (isinstance(unraisable.exc_value, KeyboardInterrupt) and _received is not None):
        return False
    _redelivering = True
    # from another thread a little later, so that the handler runs after this hook has returned
    # (run here, its exception would be reported again); if it lands in a callback again, it comes
    # back here and waits longer (10 ms, 20 ms, ... up to 1 s, with jitter), so that it cannot keep
    # step with a loop whose callbacks take the same time each round
    _redeliveries += 1
    delay = min(0.01 * 2 ** (_redeliveries - 1), 1.0) * (1.0 + random.random())
    timer = threading.Timer(delay, _thread.interrupt_main, args=(_received,))
    timer.daemon = True
    timer.start()
    return True


def _set(signum: int, handler):
    """Set ``handler`` for ``signum``; returns the previous one, or None when it cannot be set
    (not the main thread, or no such signal here)."""
    try:
        return signal.signal(signum, handler)
    except (ValueError, OSError, TypeError):
        return None


def _restore(signum: int, handler) -> None:
    if handler is not None:
        try:
            signal.signal(signum, handler)
        except (ValueError, OSError, TypeError):
            pass


@contextlib.contextmanager
def long_command(stderr: TextIO | None = None) -> Iterator[None]:
    """Run a command's work under the signal handling and error conversion of the module
    docstring: SIGTERM and SIGINT raise ``KeyboardInterrupt`` (recorded, :func:`stop_signal`),
    SIGXFSZ is ignored, and the previous handlers are restored on exit.

    Use it around the part of ``main`` that does the work, after the arguments are checked (bad
    arguments keep their status 2). The code inside catches ``KeyboardInterrupt`` where it can
    save (the trainer, the tournament) and returns :func:`interrupted_status`.

    Raises:
        SystemExit: :data:`EXIT_WRITE_FAILED` after an ``OSError`` (one line,
            :func:`write_error_line`); :func:`interrupted_status` after a ``KeyboardInterrupt``
            that nothing inside caught (one line ``error: interrupted (SIGINT|SIGTERM)``).
    """
    global _received, _thread_error, _redelivering, _redeliveries, _running
    _received, _thread_error, _redelivering, _redeliveries = None, None, False, 0
    err = stderr or sys.stderr
    sigxfsz = getattr(signal, "SIGXFSZ", None)
    old_xfsz = _set(sigxfsz, signal.SIG_IGN) if sigxfsz is not None else None
    old_term = _set(signal.SIGTERM, _on_sigterm)
    old_int = _set(signal.SIGINT, _on_sigint)
    old_hook = threading.excepthook
    old_unraisable = sys.unraisablehook

    def unraisable_hook(unraisable) -> None:   # an interrupt swallowed by a GC callback: raise it again
        if not _redeliver(unraisable):
            old_unraisable(unraisable)

    def thread_hook(args) -> None:   # a write refused in another thread: kept for one line at the end
        global _thread_error
        if isinstance(args.exc_value, OSError) and args.exc_value.errno in WRITE_ERRNOS:
            if _thread_error is None:
                _thread_error = (args.exc_value, _origin(args.exc_traceback, args.thread))
            return
        old_hook(args)

    threading.excepthook = thread_hook
    sys.unraisablehook = unraisable_hook
    _running += 1
    try:
        yield
    except OSError as e:
        line = (_thread_line(*_thread_error) if _thread_error is not None and e.filename is None
                else write_error_line(e))
        print(line, file=err, flush=True)
        raise SystemExit(EXIT_WRITE_FAILED) from None
    except KeyboardInterrupt:
        print(f"error: interrupted ({signal_name()})", file=err, flush=True)
        raise SystemExit(interrupted_status()) from None
    except CommandStopped as e:
        print(f"error: {e}", file=err, flush=True)
        raise SystemExit(e.status) from None
    else:
        if _thread_error is not None:   # the main thread went on: the failed write still ends it
            print(_thread_line(*_thread_error), file=err, flush=True)
            raise SystemExit(EXIT_WRITE_FAILED)
    finally:
        _running -= 1
        threading.excepthook = old_hook
        sys.unraisablehook = old_unraisable
        _restore(signal.SIGINT, old_int)
        _restore(signal.SIGTERM, old_term)
        if sigxfsz is not None:
            _restore(sigxfsz, old_xfsz)
