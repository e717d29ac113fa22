"""Both cores: the batched engines' parallel drivers on several CPUs against their serial drivers
on one, at a large batch.

``python -m hod.benchmarks.engine_scaling [--cpus 0,1] [--batch-size 4096] [--seconds 2] [--repeats 3] [--out FILE]``

Each engine row of :mod:`hod.benchmarks.engine_speed` (Tapeo 4 players, Ronda Robada 2
players), with that benchmark's loop (random legal play, masks and the deciding seats'
observations read on every step, finished games dealt again at once, only the first reset
seeded; :func:`hod.benchmarks.engine_speed.bench_engine`), is measured twice in one process:

1. **one core**: the process pinned to the first CPU of ``--cpus``, the serial drivers (the
   engines' default) and the serial sampler;
2. **all of ``--cpus``**: pinned to them, numba's threads set to their number, the engine's
   parallel drivers (``parallel_min_batch = 1``: numba ``prange`` over chunks of games, the
   same games bit for bit: ``tests/test_*_batched.py``) and the sampler's rows over the threads.

The ratio of the two is the scaling. What stays serial: the Python calls per step, the deals of
the finished games (:mod:`hod.core.deal`, compiled, one game after another) and the generator's random numbers. numba's
thread pool starts at the first parallel call, after the process is widened to ``--cpus``, so
its threads may run on all of them. The threading layer numba chose is printed.
"""
from __future__ import annotations

import argparse
import os
from typing import Optional

from hod.benchmarks.engine_speed import ENGINE_ROWS, _cpus, bench_engine, emit

PROG = "python -m hod.benchmarks.engine_scaling"


def run(cpus: set[int], batch: int, seconds: float, repeats: int) -> dict:
    """``{"rows": [(label, B, one-core steps/s, multi-core steps/s)], "threads", "layer"}``."""
    import numba

    first = min(cpus)
    out = []
    os.sched_setaffinity(0, {first})
    serial = {(g, n): bench_engine(g, n, batch, seconds, repeats) for g, n in ENGINE_ROWS}
    os.sched_setaffinity(0, cpus)
    numba.set_num_threads(min(len(cpus), numba.config.NUMBA_NUM_THREADS))
    for g, n in ENGINE_ROWS:
        par = bench_engine(g, n, batch, seconds, repeats, parallel=True)
        out.append((f"{g} batched engine, {n} players", batch, serial[(g, n)], par))
    return {"rows": out, "threads": numba.get_num_threads(), "layer": numba.threading_layer()}


def format_markdown(result: dict, header: str) -> str:
    lines = [header, "", f"| row | B | one core, serial drivers | {result['threads']} threads, parallel drivers | x |",
             "|---|---|---|---|---|"]
    for label, B, one, many in result["rows"]:
        lines.append(f"| {label} | {B} | {one:,.0f} | {many:,.0f} | {many / one:.2f} |")
    return "\n".join(lines) + "\n"


def main(argv: Optional[list[str]] = None) -> dict:
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cpus", type=_cpus, default={0, 1}, help="CPUs of the parallel run (default 0,1: two cores)")
    ap.add_argument("--batch-size", type=int, default=4096, help="games per batch (default 4096)")
    ap.add_argument("--seconds", type=float, default=2.0, help="least seconds per timed run (default 2)")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per figure; the median is reported (default 3)")
    ap.add_argument("--out", help="also write the table to this file (Markdown)")
    args = ap.parse_args(argv)
    if args.repeats < 1 or args.seconds <= 0 or args.batch_size < 1:
        ap.error(f"--repeats {args.repeats}, --batch-size {args.batch_size}, --seconds {args.seconds}: legal: "
                 "--repeats and --batch-size integers >= 1, --seconds a number > 0")
    if not hasattr(os, "sched_setaffinity"):
        ap.error("this platform cannot pin a process to CPUs (os.sched_setaffinity)")
    available = os.sched_getaffinity(0)
    if not args.cpus <= available or len(args.cpus) < 2:
        ap.error(f"--cpus {sorted(args.cpus)}: legal values: two or more CPUs this process may use, {sorted(available)}")
    try:
        result = run(args.cpus, args.batch_size, args.seconds, args.repeats)
    finally:
        os.sched_setaffinity(0, available)
    header = (f"Random legal play; one core = CPU {min(args.cpus)}, then CPUs {sorted(args.cpus)} "
              f"(numba threading layer {result['layer']}); median of {args.repeats} runs of >= {args.seconds:g} s.")
    emit(format_markdown(result, header), args.out)
    return result


if __name__ == "__main__":
    main()
