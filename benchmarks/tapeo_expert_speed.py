"""Speed of the Tapeo ``expert``: decisions per second one observation at a time (``act``) and in
batch (``act_batch``; both score with the compiled scorer, :mod:`hod.agents.tapeo_expert_kernels`),
the compile time of that scorer, and whether the batch's picks maximise the one-row scores.

``python -m hod.benchmarks.tapeo_expert_speed [--players 4] [--rows 1024] [--seed 0] [--repeats 3] [--no-compile]``

Positions: every seat's observation at every pick of seeded games of ``--players`` players, the
expert in every seat (game seeds ``seed, seed + 1, ...``), until ``--rows`` rows. The same rows
are decided by ``act`` (one observation dict per call) and by ``act_batch`` in batches of 1, 64
and 1024 rows (the rows cycled to fill a batch larger than ``--rows``). Timed in CPU seconds of
this process (``time.process_time``, fairer than wall-clock on a shared machine), the median of
``--repeats`` passes after one warm-up pass. Then the first call's time in a fresh process
(``act_batch`` on 64 of the rows, the import not counted): with an empty numba cache
(``NUMBA_CACHE_DIR`` a new folder: the batch scorer compiles, with the rules kernels it calls)
and again with the cache that run left (loaded from disk).
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Optional

import numpy as np

PROG = "python -m hod.benchmarks.tapeo_expert_speed"
#: The largest ``--seed``: the games are seeded ``seed, seed + 1, ...`` (one per game played), so
#: 2**63-1 keeps every game seed below 2**64 (the deals' range); 2**64-1 overflowed at the second game.
MAX_SEED = 2**63 - 1
#: The batch sizes timed.
BATCHES = (1, 64, 1024)


def positions(players: int, rows: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """float32 (rows, 157) observations and int8 (rows, 10) masks (module docstring)."""
    from hod.agents.tapeo_bots import ExpertBot
    from tapeo_env.rules import engine
    from tapeo_env.rules.observation import encode

    obs, masks, g = [], [], 0
    while len(obs) < rows:
        s = engine.new_game(engine.Config(num_players=players), seed=seed + g)
        bots = [ExpertBot(seed=seed + g * players + i) for i in range(players)]
        while not s.terminal and len(obs) < rows:
            picks = []
            for seat in range(players):
                o, m = encode(s, seat), engine.legal_mask(s, seat)
                obs.append(o)
                masks.append(m)
                picks.append(bots[seat].act({"observation": o, "action_mask": m}))
            engine.apply_actions(s, picks)
        g += 1
    return np.asarray(obs[:rows], np.float32), np.asarray(masks[:rows], np.int8)


def _rate(one_pass, decisions: int, repeats: int) -> float:
    """Decisions per CPU second: the median of ``repeats`` timed passes after a warm-up pass."""
    one_pass()
    rates = []
    for _ in range(repeats):
        t0 = time.process_time()
        one_pass()
        rates.append(decisions / max(time.process_time() - t0, 1e-9))
    return statistics.median(rates)


_CHILD = """
import sys, time
import numpy as np
from hod.agents.tapeo_bots import ExpertBot
d = np.load(sys.argv[1], allow_pickle=False)
bot = ExpertBot(seed=0)
t0 = time.perf_counter()
bot.act_batch(d["obs"], d["masks"])
print(time.perf_counter() - t0)
"""


def first_call_times(obs: np.ndarray, masks: np.ndarray) -> dict:
    """``{"compile": s, "cached": s}``: the first ``act_batch`` call of a fresh process with an
    empty numba cache, then with the cache that run left (module docstring)."""
    out = {}
    with tempfile.TemporaryDirectory(prefix="tapeo-expert-speed-") as tmp:
        data = os.path.join(tmp, "rows.npz")
        np.savez(data, obs=obs, masks=masks)
        env = dict(os.environ, NUMBA_CACHE_DIR=os.path.join(tmp, "numba"))
        for name in ("compile", "cached"):
            r = subprocess.run([sys.executable, "-c", _CHILD, data], env=env, capture_output=True, text=True,
                               timeout=900, cwd=tmp)
            if r.returncode:
                raise RuntimeError(f"first-call child failed: {r.stderr.strip().splitlines()[-1:]}")
            out[name] = float(r.stdout.strip().splitlines()[-1])
    return out


def run(players: int = 4, rows: int = 1024, seed: int = 0, repeats: int = 3, compile: bool = True) -> dict:
    """``{"act": decisions/s, "batch": {B: decisions/s}, "first_call": {...} or None, "rows": rows,
    "maximisers": share of act_batch's picks that are maximisers of the values}``."""
    from hod.agents.tapeo_bots import ExpertBot

    obs, masks = positions(players, rows, seed)
    bot = ExpertBot(seed=seed)
    bot.act_batch(obs[:1], masks[:1])               # compiled, or loaded from the disk cache
    dicts = [{"observation": o, "action_mask": m} for o, m in zip(obs, masks)]
    result = {"rows": rows, "act": _rate(lambda: [bot.act(d) for d in dicts], rows, repeats), "batch": {}}
    for b in BATCHES:
        reps = -(-b // rows)
        o, m = np.tile(obs, (reps, 1)), np.tile(masks, (reps, 1))
        chunks = [(o[i:i + b], m[i:i + b]) for i in range(0, max(rows, b) - b + 1, b)]
        result["batch"][b] = _rate(lambda: [bot.act_batch(x, y) for x, y in chunks], b * len(chunks), repeats)
    picks = bot.act_batch(obs, masks)
    best = [bot.scores(x, np.flatnonzero(y)) for x, y in zip(obs, masks)]
    ok = [v[p] >= v[np.flatnonzero(y)].max() - 1e-9 for v, p, y in zip(best, picks, masks)]
    result["maximisers"] = float(np.mean(ok))
    result["first_call"] = first_call_times(obs[:64], masks[:64]) if compile else None
    return result


def format_text(r: dict, players: int) -> str:
    """The report of :func:`run`'s dict ``r`` at ``players`` players: ``act``'s decisions/s, each
    batch size's decisions/s and ratio to ``act``, the share of maximiser picks and, when measured,
    the first-call times in s; lines joined, no final newline."""
    lines = [f"Tapeo expert, {players} players, {r['rows']} positions (CPU time, median of the timed passes):",
             f"  act (one observation per call)  {r['act']:>10,.0f} decisions/s"]
    for b, rate in r["batch"].items():
        lines.append(f"  act_batch, batch {b:<5}          {rate:>10,.0f} decisions/s  ({rate / r['act']:.1f} x act)")
    lines.append(f"  act_batch picks a maximiser of the expert's values on {100 * r['maximisers']:.1f}% of the rows")
    fc = r["first_call"]
    if fc is not None:
        lines.append(f"  first act_batch call of a process: {fc['compile']:.1f} s with an empty numba cache (compile), "
                     f"{fc['cached']:.2f} s from the disk cache")
    return "\n".join(lines)


def main(argv: Optional[list[str]] = None) -> dict:
    """Entry point: :func:`run` with the options (``--no-compile``: no first-call times), print
    :func:`format_text` and return :func:`run`'s dict.

    Raises:
        SystemExit: status 2 with argparse's usage error for an option out of range.
        RuntimeError: a first-call child process failed (:func:`first_call_times`).
    """
    from hod.evaluation.cli_options import int_option

    ap = argparse.ArgumentParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--players", type=int_option(2, 6), default=4, help="players (2..6, default 4)")
    ap.add_argument("--rows", type=int_option(1), default=1024, help="positions decided per pass (default 1024)")
    ap.add_argument("--seed", type=int_option(0, MAX_SEED, "0..2**63-1"), default=0,
                    help="seed of the games and the bot, 0..2**63-1 (default 0; the game seeds seed, seed + 1, ... "
                         "stay below 2**64)")
    ap.add_argument("--repeats", type=int_option(1), default=3, help="timed passes; the median is reported (default 3)")
    ap.add_argument("--no-compile", action="store_true", help="skip the first-call times (two fresh processes)")
    args = ap.parse_args(argv)
    r = run(args.players, args.rows, args.seed, args.repeats, compile=not args.no_compile)
    print(format_text(r, args.players))
    return r


if __name__ == "__main__":
    main()
