"""Both cores: the batched engines' parallel drivers on several CPUs against their serial drivers
on one, at a large batch.

``python -m hod.benchmarks.engine_scaling [--cpus 0,1] [--batch-size 4096] [--seconds 2] [--repeats 3] [--games ...] [--auto-reset] [--out FILE]``

Each engine row of :mod:`hod.benchmarks.engine_speed` (Tapeo 4 players, Ronda Robada 2
players), with that benchmark's loop (random legal play, masks and the deciding seats'
observations read on every step, finished games dealt again at once, only the first reset
seeded; :func:`hod.benchmarks.engine_speed.bench_engine`), is measured twice in one process:

1. **one core**: the process pinned to the first CPU of ``--cpus``, the serial drivers (the
   engines' default) and the serial sampler;
2. **all of ``--cpus``**: pinned to them, numba's threads set to their number, the engine's
   parallel drivers (``parallel_min_batch = 1``: numba ``prange`` over chunks of games, the
   same games bit for bit: ``tests/games/test_*_batched.py``) and the sampler's rows over the threads.

The ratio of the two is the scaling. What stays serial: the Python calls per step, the deals of
the finished games (:mod:`hod.core.deal`, compiled, one game after another) and the generator's random numbers. numba's
thread pool starts at the first parallel call, after the process is widened to ``--cpus``, so
its threads may run on all of them. The threading layer numba chose is printed.

With ``--auto-reset``, an engine whose ``step`` takes ``auto_reset`` (Ronda Robada) gets a second
row, "auto-reset step": the same loop with the finished games dealt again inside the step's kernel call
(``step(actions, auto_reset=True)``: each parallel task deals its own chunk's finished games)
instead of a ``reset(games=...)`` call after the step, and the observations written in the same
kernel pass (``observe=True``: the loop's ``observe()`` then returns them); both drivers play
the same games there too (``tests/games/test_robada_batched.py``). ``--games`` picks the engines (default: every row).
"""
from __future__ import annotations

import argparse
import inspect
import os
from typing import Optional

import numpy as np

from hod.benchmarks.engine_speed import ENGINE_ROWS, MAX_BATCH, _cpus, _timed, bench_engine, emit, uniform_legal
from hod.core.commands import long_command
from hod.core.errors import ConfigError
from hod.evaluation.cli_options import float_option, int_option, prepare_out_prefix

PROG = "python -m hod.benchmarks.engine_scaling"


def _engine(game: str, players: int, batch: int, seed: int, parallel: bool):
    from hod.core.games import get_game, load_object

    eng = load_object(get_game(game).batched_engine)(players, batch, seed=seed)
    if parallel:
        eng.parallel_min_batch = 1
    return eng


def has_auto_reset(game: str) -> bool:
    """Whether ``game``'s batched engine's ``step`` takes ``auto_reset``."""
    from hod.core.games import get_game, load_object

    return "auto_reset" in inspect.signature(load_object(get_game(game).batched_engine).step).parameters


def bench_engine_auto(game: str, players: int, batch: int, seconds: float, repeats: int, seed: int = 0,
                      parallel: bool = False) -> float:
    """Agent-steps/s of :func:`hod.benchmarks.engine_speed.bench_engine`'s loop with the finished
    games dealt again inside the step and the observations written there
    (``step(actions, auto_reset=True, observe=True)``; the loop's ``observe()`` reads them)."""
    eng = _engine(game, players, batch, seed, parallel)
    eng.reset(seed=seed)
    rng = np.random.default_rng(seed)
    per_step = batch * eng.movers

    def step() -> int:
        mask = eng.legal_mask()
        eng.observe()
        eng.step(uniform_legal(mask, rng, parallel), auto_reset=True, observe=True)
        return per_step

    for _ in range(20):
        step()                                       # warm-up: buffers, compiled kernels
    return _timed(step, seconds, repeats)


def _rows(games: Optional[list[str]], auto: bool) -> list[tuple[str, int, str]]:
    """(game, players, loop) of the rows: loop "reset" (step, then ``reset(games=...)``) or, with
    ``auto``, also "auto" for the engines that have it."""
    out = []
    for g, n in ENGINE_ROWS:
        if games is None or g in games:
            out.append((g, n, "reset"))
            if auto and has_auto_reset(g):
                out.append((g, n, "auto"))
    return out


def run(cpus: set[int], batch: int, seconds: float, repeats: int, games: Optional[list[str]] = None,
        auto: bool = False) -> dict:
    """``{"rows": [(label, B, one-core steps/s, multi-core steps/s)], "threads", "layer"}``."""
    import numba

    bench = {"reset": bench_engine, "auto": bench_engine_auto}
    rows = _rows(games, auto)
    first = min(cpus)
    out = []
    os.sched_setaffinity(0, {first})
    serial = {r: bench[r[2]](r[0], r[1], batch, seconds, repeats) for r in rows}
    os.sched_setaffinity(0, cpus)
    numba.set_num_threads(min(len(cpus), numba.config.NUMBA_NUM_THREADS))
    for r in rows:
        g, n, loop = r
        par = bench[loop](g, n, batch, seconds, repeats, parallel=True)
        label = f"{g} batched engine, {n} players" + (", auto-reset step" if loop == "auto" else "")
        out.append((label, batch, serial[r], par))
    return {"rows": out, "threads": numba.get_num_threads(), "layer": numba.threading_layer()}


def format_markdown(result: dict, header: str) -> str:
    """The Markdown table of :func:`run`'s ``result`` under ``header``: one line per row, with B, the
    one-core and the multi-core agent-steps/s and their ratio (x); ends with a newline."""
    lines = [header, "", f"| row | B | one core, serial drivers | {result['threads']} threads, parallel drivers | x |",
             "|---|---|---|---|---|"]
    for label, B, one, many in result["rows"]:
        lines.append(f"| {label} | {B} | {one:,.0f} | {many:,.0f} | {many / one:.2f} |")
    return "\n".join(lines) + "\n"


def main(argv: Optional[list[str]] = None) -> dict:
    """Entry point: :func:`run` on ``--cpus`` (the process's CPU affinity restored after), print the
    Markdown table (:func:`format_markdown`) and, with ``--out``, write it there; returns
    :func:`run`'s dict.

    Raises:
        SystemExit: status 2 with argparse's usage error for ``--repeats`` < 1, ``--batch-size``
            outside ``1..MAX_BATCH``, ``--seconds`` not a finite number > 0, an ``--out`` that
            cannot be written, fewer than two ``--cpus`` or CPUs this process may not use, or a
            platform without ``os.sched_setaffinity`` (nothing run); 130 (143) with one line
            ``error: interrupted (SIGINT)`` on Ctrl-C (SIGTERM), 74 with one line when the table
            cannot be written (:func:`hod.core.commands.long_command`).
    """
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cpus", type=_cpus, default={0, 1}, help="CPUs of the parallel run (default 0,1: two cores)")
    ap.add_argument("--batch-size", type=int_option(1, MAX_BATCH), default=4096,
                    help=f"games per batch, 1..{MAX_BATCH} (default 4096)")
    ap.add_argument("--seconds", type=float_option(0, low_open=True), default=2.0,
                    help="least seconds per timed run, a finite number > 0 (default 2)")
    ap.add_argument("--repeats", type=int_option(1), default=3, help="timed runs per figure; the median is reported (default 3)")
    ap.add_argument("--games", nargs="+", choices=sorted({g for g, _ in ENGINE_ROWS}),
                    help="the engines measured (default: every row)")
    ap.add_argument("--auto-reset", action="store_true",
                    help="also the auto-reset step of the engines that have one (step(..., auto_reset=True))")
    ap.add_argument("--out", help="also write the table to this file (Markdown)")
    args = ap.parse_args(argv)
    if args.out:   # before any timing: a path that cannot be written fails now, not after the run
        try:
            prepare_out_prefix(args.out, ("",))
        except ConfigError as e:
            ap.error(str(e))
    if not hasattr(os, "sched_setaffinity"):
        ap.error("this platform cannot pin a process to CPUs (os.sched_setaffinity)")
    available = os.sched_getaffinity(0)
    if not args.cpus <= available or len(args.cpus) < 2:
        ap.error(f"--cpus {sorted(args.cpus)}: legal values: two or more CPUs this process may use, {sorted(available)}")
    with long_command():   # Ctrl-C: one line, status 130 (SIGTERM 143); a refused write: one line, status 74
        try:
            result = run(args.cpus, args.batch_size, args.seconds, args.repeats, args.games, args.auto_reset)
        finally:
            os.sched_setaffinity(0, available)
        header = (f"Random legal play; one core = CPU {min(args.cpus)}, then CPUs {sorted(args.cpus)} "
                  f"(numba threading layer {result['layer']}); median of {args.repeats} runs of >= {args.seconds:g} s.")
        emit(format_markdown(result, header), args.out)
    return result


if __name__ == "__main__":
    main()
