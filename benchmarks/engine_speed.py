"""Speed of the batched engines against PettingZoo's and Pgx's Leduc Hold'em, and the kernels'
import + compile time.

``python -m hod.benchmarks.engine_speed [--cpus 0] [--batch-sizes 1 4096] [--seconds 2] [--out FILE]``

Every row plays uniformly random legal actions with one sampler (the k-th legal action, k =
floor(u * number of legal actions), u uniform in [0, 1): a compiled row loop here, the same
arithmetic in jax inside Pgx's jitted step), and
one reset pattern: only the first reset of a row is seeded, finished games are dealt again at
once with unseeded resets (the engines' own generators; Pgx: fresh keys). Each step reads what a
learner reads: the legal-action masks and the observations of every deciding seat (Tapeo: every
seat picks on every step; Ronda Robada and Leduc: the seat to act). An agent-step is one seat's
decision. Each figure is the median of ``--repeats`` timed runs of at least ``--seconds``.

Rows: each declared game's batched engine (``GameInfo.batched_engine``: Tapeo 4 players, Ronda
Robada 2 players) at each batch size; PettingZoo classic ``leduc_holdem_v4.env()`` (AEC, one
game, the B = 1 reference); Pgx ``leduc_holdem`` under its own ``jax.jit(jax.vmap(...))`` (step,
sampler and auto-reset in one jitted function) at the batch sizes above 1, when ``pgx`` and
``jax`` are installed (the ``bench`` extra). Then the import + compile time of the engines in a
fresh process: cold (the engines' sources copied without bytecode, an empty numba cache: a
fresh clone) and warm (the same copy and caches again).

One core: the command pins itself to ``--cpus`` (default ``0``, as ``taskset -c 0``) with
``os.sched_setaffinity`` before importing anything that starts threads (jax); the child
processes of the compile measurement inherit it. ``--out`` also writes the table (Markdown,
atomically).
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Optional

from hod.core.commands import long_command
from hod.core.errors import ConfigError
from hod.evaluation.cli_options import fill_defaults, float_option, int_option, prepare_out_prefix

#: The largest ``--batch-sizes`` value: Tapeo's batched engine's own limit (``1 << 24`` games,
#: gigabytes of state), refused by the parser rather than by the engine after the smaller rows ran.
MAX_BATCH = 1 << 24

import numpy as np

#: The command as typed (argparse's usage line).
PROG = "python -m hod.benchmarks.engine_speed"
#: ``--batch-sizes``, ``--seconds`` and ``--repeats`` when not given, without and with ``--quick``.
DEFAULTS = {"batch_sizes": [1, 4096], "seconds": 2.0, "repeats": 3}
QUICK = {"batch_sizes": [1, 8], "seconds": 0.02, "repeats": 1}
#: (game, players) rows of the batched engines.
ENGINE_ROWS = (("tapeo", 4), ("robada", 2))


def uniform_legal(mask: np.ndarray, rng: np.random.Generator, parallel: bool = False) -> np.ndarray:
    """The benchmark's one sampler: for each row of ``mask`` (int8 or bool (..., A), at least one
    legal action each) the k-th legal action, k = floor(u * count), u uniform in [0, 1)
    (``rng.random``, one float64 per row). Returns int64 (...,).

    The rows are walked by a compiled loop (:func:`_kth_legal`, numba; Pgx's sampler is compiled
    inside its jitted step too), the same arithmetic as the numpy form
    ``k = min(int16(u * count), count - 1)``, action = the number of kinds whose running count of
    legal kinds is <= k. ``parallel``: the rows split over numba's threads (``prange``; the same
    actions), for the rows of :mod:`hod.benchmarks.engine_scaling`."""
    m = np.ascontiguousarray(mask).view(np.int8) if mask.dtype == bool else np.ascontiguousarray(mask, np.int8)
    u = np.asarray(rng.random(m.shape[:-1]), np.float64)
    out = np.empty(m.shape[:-1], np.int64)
    _kth_legal(parallel)(m.reshape(-1, m.shape[-1]), u.reshape(-1), out.reshape(-1))
    return out if out.ndim else out[()]


_KTH: dict = {}


def _kth_legal(parallel: bool = False):
    """The compiled row loop of :func:`uniform_legal` (compiled, or loaded from numba's cache, on
    first use), serial or over numba's threads."""
    if not _KTH:
        from numba import njit, prange

        from hod.core.jit import cache_kernels

        cached = cache_kernels(__file__)

        @njit(cache=cached, inline="always")
        def kth_row(mask, u, out, r):
            cnt = np.int16(0)
            for a in range(mask.shape[1]):
                cnt += mask[r, a]
            k = min(np.int16(u[r] * cnt), cnt - 1)
            run = np.int16(0)
            act = 0
            for a in range(mask.shape[1]):
                run += mask[r, a]
                act += run <= k
            out[r] = act

        @njit(cache=cached)
        def kth_legal(mask, u, out):
            for r in range(mask.shape[0]):
                kth_row(mask, u, out, r)

        @njit(cache=cached, parallel=True)
        def kth_legal_par(mask, u, out):
            for r in prange(mask.shape[0]):
                kth_row(mask, u, out, r)

        _KTH.update({False: kth_legal, True: kth_legal_par})
    return _KTH[bool(parallel)]


def _timed(step: Callable[[], int], seconds: float, repeats: int, sync: Callable[[], None] = lambda: None) -> float:
    """Median agent-steps/s of ``repeats`` runs of at least ``seconds``; ``step()`` returns the
    agent-steps it played; ``sync()`` waits for queued work (jax)."""
    rates = []
    for _ in range(repeats):
        done = 0
        t0 = time.perf_counter()
        while True:
            for _ in range(8):
                done += step()
            sync()
            dt = time.perf_counter() - t0
            if dt >= seconds:
                break
        rates.append(done / dt)
    return statistics.median(rates)


def bench_engine(game: str, players: int, batch: int, seconds: float, repeats: int, seed: int = 0,
                 parallel: bool = False) -> float:
    """Agent-steps/s of ``game``'s batched engine (its declaration's ``batched_engine``);
    ``parallel``: with its parallel drivers (``parallel_min_batch = 1``) and the sampler's rows
    over numba's threads."""
    from hod.core.games import get_game, load_object

    eng = load_object(get_game(game).batched_engine)(players, batch, seed=seed)
    if parallel:
        eng.parallel_min_batch = 1
    eng.reset(seed=seed)
    rng = np.random.default_rng(seed)
    per_step = batch * eng.movers

    def step() -> int:
        mask = eng.legal_mask()
        eng.observe()
        over = eng.step(uniform_legal(mask, rng, parallel)).game_over
        if over.any():
            eng.reset(games=np.flatnonzero(over))
        return per_step

    for _ in range(20):
        step()                                       # warm-up: buffers, compiled kernels
    return _timed(step, seconds, repeats)


def bench_pettingzoo_leduc(seconds: float, repeats: int, seed: int = 0) -> float:
    """Agent-steps/s of PettingZoo classic ``leduc_holdem_v4.env()`` (one game)."""
    from pettingzoo.classic import leduc_holdem_v4

    env = leduc_holdem_v4.env()
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)

    def step() -> int:
        if not env.agents:
            env.reset()
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            return 0
        env.step(int(uniform_legal(obs["action_mask"], rng)))
        return 1

    for _ in range(20):
        step()
    return _timed(step, seconds, repeats)


def pgx_available() -> Optional[str]:
    """None if ``pgx`` and ``jax`` import, else why not."""
    try:
        import jax  # noqa: F401
        import pgx  # noqa: F401
    except ImportError as e:
        return f"not installed ({e.name}); pip install pgx 'jax[cpu]' (the bench extra)"
    return None


def bench_pgx_leduc(batch: int, seconds: float, repeats: int, seed: int = 0) -> float:
    """Agent-steps/s of Pgx ``leduc_holdem`` at batch ``batch``: ``jax.jit`` of the vmapped step,
    the same sampler and the auto-reset of finished games, one call per step."""
    import jax
    import jax.numpy as jnp
    import pgx

    env = pgx.make("leduc_holdem")
    init, step_fn = jax.vmap(env.init), jax.vmap(env.step)

    def sample(key, mask):
        cs = jnp.cumsum(mask.astype(jnp.int16), axis=-1)
        cnt = cs[:, -1]
        k = jnp.minimum((jax.random.uniform(key, cnt.shape) * cnt).astype(jnp.int16), cnt - 1)
        return (cs <= k[:, None]).sum(axis=-1)

    @jax.jit
    def body(state, key):
        k1, k2 = jax.random.split(key)
        _ = state.observation                                    # read as a learner would
        state = step_fn(state, sample(k1, state.legal_action_mask))
        done = state.terminated | state.truncated
        fresh = init(jax.random.split(k2, batch))
        return jax.tree_util.tree_map(
            lambda f, s: jnp.where(done.reshape(done.shape + (1,) * (s.ndim - 1)), f, s), fresh, state)

    box = {"state": jax.jit(init)(jax.random.split(jax.random.PRNGKey(seed), batch)),
           "key": jax.random.PRNGKey(seed + 1)}

    def step() -> int:
        box["key"], k = jax.random.split(box["key"])
        box["state"] = body(box["state"], k)
        return batch

    for _ in range(20):
        step()
    jax.block_until_ready(box["state"])

    def sync() -> None:
        jax.block_until_ready(box["state"])

    return _timed(step, seconds, repeats, sync)


_COMPILE_CHILD = """
import time
t0 = time.perf_counter()
import importlib
for spec, n in {rows!r}:
    module, _, name = spec.partition(":")
    e = getattr(importlib.import_module(module), name)(n, 2, seed=0)
    e.reset(seed=0)
    for _ in range(3):
        m = e.legal_mask()
        e.observe()
        e.step(e.random_actions(m))
    e.load_state(e.state.copy())
print(time.perf_counter() - t0)
"""


def _fresh_copy(dest: str) -> None:
    """Copy the sources of the game packages and of ``hod.core`` (what the engines import) to
    ``dest``, without their ``__pycache__``: a fresh clone's state for those modules."""
    import importlib.util
    import shutil

    for name in ("tapeo_env", "robada_env", "hod.core"):
        src = os.path.dirname(importlib.util.find_spec(name).origin)
        shutil.copytree(src, os.path.join(dest, *name.split(".")), ignore=shutil.ignore_patterns("__pycache__"))


def compile_times() -> dict:
    """Seconds to import both engines (their modules, by the declarations' ``batched_engine``
    strings) and play their first steps (every kernel compiled or loaded) in a fresh process:
    ``cold`` as in a fresh clone (the engines' sources copied without any ``__pycache__``, an
    empty numba cache), ``warm`` again with the caches the cold run left (numba's cache and the
    sources' ``__pycache__``, written whatever ``PYTHONDONTWRITEBYTECODE`` says); ``*_process``
    adds the interpreter's start. Other installed packages keep their bytecode."""
    out = {}
    with tempfile.TemporaryDirectory(prefix="engine-speed-") as tmp:
        src = os.path.join(tmp, "src")
        _fresh_copy(src)
        env = dict(os.environ, NUMBA_CACHE_DIR=os.path.join(tmp, "numba"),
                   PYTHONPATH=os.pathsep.join([src] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
        # A fresh clone's first import writes the sources' bytecode (__pycache__), which the warm
        # start reads: a shell with PYTHONDONTWRITEBYTECODE set would recompile every module of
        # the engines in the warm run too (about 0.2-0.4 s here), which no user's second start does.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        from hod.core.games import get_game

        code = _COMPILE_CHILD.format(rows=tuple((get_game(g).batched_engine, n) for g, n in ENGINE_ROWS))
        code += "import tapeo_env\nassert tapeo_env.__file__.startswith(%r), tapeo_env.__file__\n" % src
        for name in ("cold", "warm"):
            t0 = time.perf_counter()
            r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600,
                               cwd=tmp)
            wall = time.perf_counter() - t0
            if r.returncode:
                raise RuntimeError(f"compile-time child failed: {r.stderr.strip().splitlines()[-1:]}")
            out[name] = float(r.stdout.strip().splitlines()[-1])
            out[f"{name}_process"] = wall
    return out


def run(batch_sizes: tuple[int, ...], seconds: float, repeats: int, pgx: bool = True,
        compile: bool = True) -> dict:
    """Every row (module docstring): ``{"rows": [(label, B, steps/s or a note)], "compile": ...}``."""
    rows = []
    for game, n in ENGINE_ROWS:
        for B in batch_sizes:
            rows.append((f"{game} batched engine, {n} players", B, bench_engine(game, n, B, seconds, repeats)))
    rows.append(("PettingZoo leduc_holdem_v4.env()", 1, bench_pettingzoo_leduc(seconds, repeats)))
    why = pgx_available() if pgx else "skipped (--no-pgx)"
    for B in [b for b in batch_sizes if b > 1]:
        rows.append(("Pgx leduc_holdem (jit + vmap)", B, why if why else bench_pgx_leduc(B, seconds, repeats)))
    return {"rows": rows, "compile": compile_times() if compile else None}


def format_markdown(result: dict, header: str) -> str:
    """The table, ratios against PettingZoo's leduc ``env()`` and against Pgx at the same B."""
    rows = result["rows"]
    pz = next((r for lbl, _, r in rows if lbl.startswith("PettingZoo") and isinstance(r, float)), None)
    pgx = {B: r for lbl, B, r in rows if lbl.startswith("Pgx") and isinstance(r, float)}
    lines = [header, "", "| row | B | agent-steps/s | x PettingZoo leduc env() | x Pgx leduc (same B) |",
             "|---|---|---|---|---|"]
    for label, B, r in rows:
        if not isinstance(r, float):
            lines.append(f"| {label} | {B} | {r} | | |")
            continue
        x_pz = f"{r / pz:.2f}" if pz else ""
        x_pgx = f"{r / pgx[B]:.2f}" if B in pgx else ""
        lines.append(f"| {label} | {B} | {r:,.0f} | {x_pz} | {x_pgx} |")
    c = result.get("compile")
    if c:
        lines += ["", "| import + first steps (both engines, fresh process) | seconds | with interpreter start |",
                  "|---|---|---|",
                  f"| cold (a fresh copy of the sources, empty numba cache) | {c['cold']:.2f} | {c['cold_process']:.2f} |",
                  f"| warm (the caches of the cold run) | {c['warm']:.2f} | {c['warm_process']:.2f} |"]
    return "\n".join(lines) + "\n"


def _cpus(text: str) -> set[int]:
    try:
        cpus = {int(x) for x in text.split(",") if x.strip() != ""}
    except ValueError:
        cpus = set()
    if not cpus or min(cpus) < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: a comma-separated list of CPU numbers, e.g. 0 or 0,1")
    return cpus


def main(argv: Optional[list[str]] = None) -> dict:
    """Entry point: :func:`run` pinned to ``--cpus`` (the caller's CPU affinity restored after),
    print the Markdown table (:func:`format_markdown`, with the engines' source files) and, with
    ``--out``, write it there (:func:`emit`); returns :func:`run`'s dict.

    Raises:
        SystemExit: status 2 with argparse's usage error for ``--repeats`` < 1, a batch size
            outside ``1..MAX_BATCH``, ``--seconds`` not a finite number > 0 (``nan`` ran forever),
            an ``--out`` that cannot be written, or ``--cpus`` this process may not use (nothing run);
            130 (143) with one line ``error: interrupted (SIGINT)`` on Ctrl-C (SIGTERM), and 74 with
            one line when the table cannot be written (:func:`hod.core.commands.long_command`).
        RuntimeError: a compile-time child process failed (:func:`compile_times`).

    ``--quick`` sets ``--batch-sizes 1 8 --seconds 0.02 --repeats 1``, each only when not given.
    """
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cpus", type=_cpus, default={0}, help="CPUs to run on (default 0: one core, as taskset -c 0)")
    # default None: --quick fills in only the options not given (an explicit one wins)
    ap.add_argument("--batch-sizes", nargs="+", type=int_option(1, MAX_BATCH), default=None,
                    help=f"batch sizes, 1..{MAX_BATCH} (default 1 4096; --quick: 1 8)")
    ap.add_argument("--seconds", type=float_option(0, low_open=True), default=None,
                    help="least seconds per timed run, a finite number > 0 (default 2; --quick: 0.02)")
    ap.add_argument("--repeats", type=int_option(1), default=None,
                    help="timed runs per figure; the median is reported (default 3; --quick: 1)")
    ap.add_argument("--no-pgx", action="store_true", help="skip the Pgx rows")
    ap.add_argument("--no-compile", action="store_true", help="skip the import + compile measurement")
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: B = 1 and 8, 0.02 s, 1 repeat (not meaningful); --batch-sizes, --seconds "
                         "and --repeats given with it are kept")
    ap.add_argument("--out", help="also write the table to this file (Markdown)")
    args = ap.parse_args(argv)
    fill_defaults(args, QUICK if args.quick else DEFAULTS)
    if args.out:   # before any timing: a path that cannot be written fails now, not after the run
        try:
            prepare_out_prefix(args.out, ("",))
        except ConfigError as e:
            ap.error(str(e))
    available = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    if available is not None:
        if not args.cpus <= available:
            ap.error(f"--cpus {sorted(args.cpus)}: legal values: CPUs this process may use, {sorted(available)}")
        os.sched_setaffinity(0, args.cpus)
    with long_command():   # Ctrl-C or SIGTERM: one line "error: interrupted (SIGINT)", status 130 (143)
        try:
            result = run(tuple(args.batch_sizes), args.seconds, args.repeats, pgx=not args.no_pgx,
                         compile=not args.no_compile)
        finally:
            if available is not None:
                os.sched_setaffinity(0, available)     # main() called from Python: the caller's CPUs back
    header = (f"Random legal play on CPUs {sorted(args.cpus)}; median of {args.repeats} runs of >= {args.seconds:g} s; "
              "only the first reset of each row seeded; masks and the deciding seats' observations read every step"
              + (" (--quick smoke run: not meaningful)" if args.quick else "") + ".")
    import importlib

    from hod.core.games import get_game

    where = "; ".join(f"{g}: {importlib.import_module(get_game(g).batched_engine.partition(':')[0]).__file__}"
                      for g, _ in ENGINE_ROWS)
    with long_command():   # a write refused (disk full...): one line, status 74
        emit(format_markdown(result, header + f"\nEngines: {where}."), args.out)
    return result


def emit(text: str, out: Optional[str]) -> None:
    """Print the table ``text``; with ``out``, also write it there (atomically)."""
    if out:
        from hod.core.atomic import atomic_write_text

        atomic_write_text(Path(out), text)
    print(text, end="")


if __name__ == "__main__":
    main()
