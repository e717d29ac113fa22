"""How many worker processes a command runs: the one rule of every ``--workers`` option and
``*_workers`` config key (the tournament, the ladder, the evaluation, the imitation and
expert-iteration data).

* A worker count is an integer in ``1..MAX_WORKERS``; anything else is refused
  (:func:`check_workers`, :func:`workers_option` for argparse), so a typo such as ``--workers
  1200`` ends with status 2 and one line naming the legal range.
* The processes actually started are :func:`effective_workers`: ``min(requested, jobs, usable
  CPUs)``, at least 1. Asking for more workers than there are games (or chunks) or CPUs never
  starts more processes than can work; the commands say how many run (:func:`describe`). The
  results never depend on the count.
* Workers ignore Ctrl-C; the main process ends them (:func:`map_in_workers`, :func:`stop_workers`).
"""
from __future__ import annotations

import argparse
import multiprocessing
import os
import signal
from concurrent.futures import ProcessPoolExecutor
from typing import Callable, Sequence

from hod.core.errors import ConfigError

__all__ = ["MAX_WORKERS", "usable_cpus", "check_workers", "effective_workers", "workers_option", "describe",
           "map_in_workers", "stop_workers"]

#: The largest worker count accepted (a fixed bound, so that a configuration stays valid on any
#: machine; on a smaller one the count is cut to its CPUs, :func:`effective_workers`).
MAX_WORKERS = 256


def usable_cpus() -> int:
    """CPUs this process may run on (int >= 1): ``os.process_cpu_count()`` (Python 3.13+), else
    the size of the scheduler affinity mask (``os.sched_getaffinity(0)``, Linux), else
    ``os.cpu_count()``."""
    count = getattr(os, "process_cpu_count", None)
    if count is not None:
        n = count()
    else:
        try:
            n = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            n = os.cpu_count()
    return max(1, int(n or 1))


def _legal() -> str:
    return (f"legal values: an integer in 1..{MAX_WORKERS} (at most min(workers, jobs, usable CPUs) processes "
            f"run; {usable_cpus()} usable CPUs here)")


def check_workers(value: object, name: str = "workers") -> int:
    """Return ``value`` as an int if it is a legal worker count (an int, not a bool, in
    ``1..MAX_WORKERS``).

    Args:
        value: the count asked for. name: how to call it in the message (``"--workers"``,
            ``"bc_workers"``...).

    Raises:
        ConfigError: anything else; the message names the legal range.
    """
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_WORKERS:
        raise ConfigError(f"{name}={value!r}: {_legal()}")
    return int(value)


def effective_workers(requested: int, jobs: int) -> int:
    """The worker processes to start: ``min(requested, jobs, usable_cpus())``, at least 1.

    Args:
        requested: the count asked for (checked by :func:`check_workers`).
        jobs: how many independent pieces of work there are (games, chunks; int >= 0).

    Raises:
        ConfigError: ``requested`` is not a legal worker count.
    """
    requested = check_workers(requested)
    return max(1, min(requested, int(jobs), usable_cpus()))


def describe(requested: int, effective: int, jobs: int, what: str = "games") -> str:
    """One line saying how many workers run, e.g. ``"2 worker processes (asked 12; 4 games, 2
    usable CPUs)"``; without the parenthesis when the request was run as asked."""
    plural = "es" if effective != 1 else ""
    line = f"{effective} worker process{plural}"
    if effective != requested:
        line += f" (asked {requested}; {jobs} {what}, {usable_cpus()} usable CPUs)"
    return line


def workers_option(text: str) -> int:
    """argparse ``type=`` of a ``--workers`` option: the worker count of ``text``.

    Raises:
        argparse.ArgumentTypeError: not an integer in ``1..MAX_WORKERS`` (argparse's usage error,
            exit status 2, naming the legal range).
    """
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid value {text!r}; {_legal()}") from None
    try:
        return check_workers(value)
    except ConfigError:
        raise argparse.ArgumentTypeError(f"invalid value {text!r}; {_legal()}") from None


def _quiet_worker() -> None:
    """Initializer of :func:`map_in_workers`' processes: SIGINT ignored (Ctrl-C reaches every
    process of the terminal's group; the main process alone handles it), SIGTERM's default action
    (a worker must not run the command's handler, :func:`hod.core.commands.long_command`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # a Ctrl-C held since the spawn is dropped with it
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def stop_workers(pool: ProcessPoolExecutor) -> None:
    """Cancel ``pool``'s queued jobs and end its worker processes now (not after their job), with
    SIGKILL: a worker holds nothing to clean up, and a process the pool has just forked may not
    yet run the worker's own signal handling: SIGTERM would run the handler it inherited from the
    parent (Ray's driver handler raises ``SystemExit`` there), on a copy of the parent's stack."""
    kill = getattr(pool, "kill_workers", None)   # Python 3.14+
    if kill is not None:
        kill()
        return
    procs = list((getattr(pool, "_processes", None) or {}).values())   # shutdown() forgets them
    queue = getattr(pool, "_call_queue", None)
    if queue is not None:
        # The jobs' queue is fed by a thread that may be blocked writing to a pipe no killed worker
        # will read; CPython 3.11's pool joins that thread when it finds a worker dead, and again at
        # exit, which then hangs after the command's last line. Not joining it is safe: it is a
        # daemon thread of a queue nobody reads any more (Queue.cancel_join_thread).
        queue.cancel_join_thread()
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in procs:
        if proc.is_alive():
            proc.kill()
    for proc in procs:
        proc.join(timeout=5)


def map_in_workers(fn: Callable, jobs: Sequence[tuple], workers: int) -> list:
    """``[fn(*job) for job in jobs]`` computed by ``workers`` spawned processes, in the jobs' order.

    The processes ignore SIGINT from their start (it is blocked while they are spawned, then
    ignored by their initializer, so a Ctrl-C during their imports does not reach them either) and
    no Ctrl-C of the caller is lost meanwhile: a Ctrl-C raises
    ``KeyboardInterrupt`` in the caller alone, which then ends the workers at once
    (:func:`stop_workers`) and re-raises it, with no worker's traceback on the terminal.

    Raises:
        KeyboardInterrupt: Ctrl-C (or SIGTERM under :func:`hod.core.commands.long_command`).
        Exception: the first job's exception, re-raised after the other workers are ended.
    """
    ctx = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(workers, mp_context=ctx, initializer=_quiet_worker)
    mask = getattr(signal, "pthread_sigmask", None)
    try:
        # The processes are spawned by the submits, in this thread: with SIGINT blocked here, they
        # start with it blocked (the mask survives fork and exec) until their initializer ignores it,
        # so a Ctrl-C during their imports reaches none of them; here it stays pending and is
        # delivered when the mask is restored (or to another thread of this process meanwhile,
        # whose handler raises it here all the same).
        old = mask(signal.SIG_BLOCK, {signal.SIGINT}) if mask is not None else None
        try:
            futures = [pool.submit(fn, *job) for job in jobs]
        finally:
            if mask is not None:
                mask(signal.SIG_SETMASK, old)
        results = [f.result() for f in futures]
    except BaseException:
        stop_workers(pool)
        raise
    pool.shutdown(wait=True)
    return results
