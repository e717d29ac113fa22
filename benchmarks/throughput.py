"""Throughput of our environments and of the libraries researchers would otherwise use.

``python -m hod.benchmarks.throughput [--games tapeo robada] [--quick] [--out-dir benchmarks/results]``

Everything runs in this one process with uniformly random legal play; each figure is the median
of ``--repeats`` (3) timed runs of at least ``--seconds`` each. Reset pattern, the same for every
env: each timed run seeds only its first reset (``reset(seed=i)``, run i) and starts every later
game with a plain ``reset()`` (:mod:`hod.benchmarks.env_speed`); the batched engines and vector envs
are seeded once at construction, and OpenSpiel draws chance outcomes from one generator seeded
once per run. Measured, per game and player count (Tapeo 2, 4, 6; Ronda Robada 2, 4):

* ``<game>_env.env()`` (AEC, wrapped) and ``<game>_env.parallel_env()``, through
  :mod:`hod.benchmarks.env_speed` (observations and masks are read as a learner would);
* the batched engine at B = 1, 64, 1024, 4096, 8192 (each step: the masks, the observations of
  every seat that acts, the random legal actions, the step, the reset of finished games);
* the learner vector env the trainer uses, :class:`hod.training.learner_env.LearnerVecEnv` (1024
  tables, one learner seat per table, random opponents in batch);

and, as references: PettingZoo classic ``leduc_holdem_v4``, ``texas_holdem_v4``,
``connect_four_v3`` (AEC ``env()``), ``rps_v2`` (``parallel_env()``), and OpenSpiel's
``leduc_poker`` through ``pyspiel`` (each decision reads the observation tensor and the legal
actions mask). Also: state bytes per game of the batched engine at B = 8192 (``nbytes``) and its
peak traced allocation per game (``tracemalloc``: state, observation buffers and temporaries of
one step), and MaskablePPO self-play training steps per second end to end through the training
code path (:func:`bench_ppo`: ``hod.training.train.Trainer`` with the game's default configuration,
[256, 256] networks, for each engine, ``single`` and ``batched``).

An agent-step is one agent choosing one action (Tapeo: each seat's pick; turn-based games: one
decision); games/s counts finished games. Writes ``throughput.md`` (tables) and
``throughput.png`` (agent-steps/s against batch size, references as horizontal lines),
atomically.

Every game is read from its declaration (:func:`hod.core.games.get_game`): its package, its
batched engine (:class:`BatchedDriver`), its vector env, and the table sizes measured
(:func:`measured_player_counts`).
"""
from __future__ import annotations

import argparse
import importlib
import io
import statistics
import time
import tracemalloc
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from hod.core.atomic import atomic_write_many
from hod.core.commands import long_command
from hod.core.errors import ConfigError
from hod.core.games import game_names, get_game, load_object
from hod.evaluation.cli_options import fill_defaults, float_option, int_option

from .env_speed import bench_aec, bench_parallel



#: The command as typed (argparse's usage line).
PROG = "python -m hod.benchmarks.throughput"

def measured_player_counts(game: str) -> tuple[int, ...]:
    """Table sizes measured for ``game``: the smallest, 4 (when legal) and the largest
    (Tapeo 2, 4, 6; Ronda Robada 2, 4)."""
    info = get_game(game)
    return tuple(sorted({info.min_players, min(4, info.max_players), info.max_players}))

BATCH_SIZES = (1, 64, 1024, 4096, 8192)
MEMORY_BATCH = 8192
#: ``--batch-sizes``, ``--seconds`` and ``--repeats`` when not given, without and with ``--quick``.
DEFAULTS = {"batch_sizes": list(BATCH_SIZES), "seconds": 1.0, "repeats": 3}
QUICK = {"batch_sizes": [1, 64], "seconds": 0.02, "repeats": 1}
#: The files written to ``--out-dir``, together (all or none).
OUT_FILES = ("throughput.md", "throughput.png")


def check_out_dir(out_dir: str) -> Path:
    """Check before any measurement that ``--out-dir`` can hold :data:`OUT_FILES`: a folder that
    exists or can be made (:func:`hod.training.config.check_out_dir`: not a file, writable) in
    which neither file is a folder. Returns it as a Path.

    Raises:
        ConfigError: naming the path and the legal values.
    """
    from hod.training.config import check_out_dir as check_folder

    try:
        out = check_folder(out_dir)
    except ConfigError as e:
        raise ConfigError(str(e).replace("--out ", "--out-dir ", 1)) from None
    taken = [str(out / f) for f in OUT_FILES if (out / f).is_dir()]
    if taken:
        raise ConfigError(f"--out-dir {out_dir}: {', '.join(taken)} is a folder; legal: a folder whose "
                          f"{', '.join(OUT_FILES)} are files or do not exist yet")
    return out


# ---- batched driver -------------------------------------------------------------------------------
class BatchedDriver:
    """Random legal play of a game's batched engine (its declaration's ``batched_engine``):
    ``Engine(players, batch, seed=seed)``, then each :meth:`step` draws random legal actions from
    the mask, reads the observations as a learner would, steps, and resets the finished games.
    An agent-step is one seat's decision: every seat of every game on a simultaneous game's step
    (Tapeo), one decision per game on a sequential one (Ronda Robada)."""

    def __init__(self, game: str, batch: int, players: int, seed: int) -> None:
        info = get_game(game)
        self.eng = load_object(info.batched_engine)(players, batch, seed=seed)
        self.eng.reset()
        self.agents_per_step = batch * self.eng.movers     # movers: n (simultaneous) or 1

    def step(self) -> int:
        """Play one step; return the games finished."""
        eng = self.eng
        mask = eng.legal_mask()
        eng.observe()
        over = eng.step(eng.random_actions(mask)).game_over
        if over.any():
            eng.reset(games=np.flatnonzero(over))
            return int(over.sum())
        return 0

    def state_bytes(self) -> int:
        """Bytes of game state of the whole batch."""
        return int(self.eng.nbytes()["state"])


def _timed(run: Callable[[], tuple[int, int]], seconds: float) -> dict:
    """Call ``run()`` (returns agent-steps, games) until ``seconds`` have passed; return rates."""
    steps = games = 0
    t0 = time.perf_counter()
    while True:
        s, g = run()
        steps += s
        games += g
        dt = time.perf_counter() - t0
        if dt >= seconds:
            return {"agent_steps": steps, "games": games, "seconds": dt,
                    "steps_per_s": steps / dt, "games_per_s": games / dt}


def _median(runs: list[dict]) -> dict:
    return {"steps_per_s": statistics.median(r["steps_per_s"] for r in runs),
            "games_per_s": statistics.median(r["games_per_s"] for r in runs)}


def bench_batched(game: str, players: int, batch: int, seconds: float, repeats: int, seed: int = 0) -> dict:
    """Median rates of the game's batched engine at batch size ``batch``."""
    drv = BatchedDriver(game, batch, players, seed)
    drv.step()  # warm-up (buffers)
    runs = [_timed(lambda: (drv.agents_per_step, drv.step()), seconds) for _ in range(repeats)]
    return _median(runs)


def bench_memory(game: str, players: int, batch: int = MEMORY_BATCH) -> dict:
    """State bytes per game (nbytes) and peak traced bytes per game over construction, reset and
    a few steps (observations included)."""
    tracemalloc.start()
    try:
        drv = BatchedDriver(game, batch, players, 0)
        for _ in range(3):
            drv.step()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return {"state_bytes_per_game": drv.state_bytes() / batch, "peak_bytes_per_game": peak / batch}


def bench_vec_env(game: str, players: int, tables: int, seconds: float, repeats: int) -> dict:
    """Rates of the learner vector env the trainer uses (:class:`hod.training.learner_env.LearnerVecEnv`;
    one learner seat per table, the game's random opponents), learner actions drawn at random from
    ``action_masks()``. agent-steps count every seat's decision (simultaneous game: every seat
    decides each step; sequential: the learner's decisions plus the opponents' played inside the
    step), from the env's ``decisions`` counter."""
    from hod.training.learner_env import LearnerVecEnv   # imports SB3 (the train extra) only here

    info = get_game(game)
    random_legal_actions = importlib.import_module(load_object(info.batched_engine).__module__).random_legal_actions
    env = LearnerVecEnv(game, num_tables=tables, num_players=players, learner_seats=1, seed=0)
    env.reset()
    rng = np.random.default_rng(0)

    def run() -> tuple[int, int]:
        d0 = env.decisions
        _, _, dones, _ = env.step(random_legal_actions(env.action_masks(), rng))
        return env.decisions - d0, int(dones.sum())
    return _median([_timed(run, seconds) for _ in range(repeats)])


def bench_openspiel(game_name: str, seconds: float, repeats: int, seed: int = 0) -> dict:
    """Random legal play of an OpenSpiel game (chance outcomes sampled); each decision reads the
    observation tensor and the legal actions mask. ``new_initial_state()`` takes no seed: chance
    outcomes and actions come from one generator seeded once (``seed``)."""
    import pyspiel
    game = pyspiel.load_game(game_name)
    rng = np.random.default_rng(seed)

    def run() -> tuple[int, int]:
        state = game.new_initial_state()
        steps = 0
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.integers(len(outcomes))][0])
                continue
            state.observation_tensor()
            mask = state.legal_actions_mask()
            legal = [a for a, m in enumerate(mask) if m]
            state.apply_action(legal[rng.integers(len(legal))])
            steps += 1
        return steps, 1
    return _median([_timed(run, seconds) for _ in range(repeats)])


def _steps_bench(fn: Callable, make: Callable, seconds: float, repeats: int) -> dict:
    """Median of env_speed's bench_aec / bench_parallel, sized to about ``seconds`` each; each run
    seeds only its first reset (run i: ``reset(seed=i)``, then ``reset()``)."""
    probe = fn(make, 200)
    steps = max(200, int(probe["steps_per_s"] * seconds))
    return _median([fn(make, steps, seed=i) for i in range(repeats)])


def bench_ppo(game: str = "tapeo", engine: str = "batched", total_steps: int = 100_000,
              heuristics: tuple[str, ...] = ("random",), overrides: Optional[dict] = None,
              algorithm: str = "fast") -> dict:
    """MaskablePPO training through the training code path (:class:`hod.training.train.Trainer`,
    what ``python -m hod.training.train --game GAME --engine ENGINE`` runs) with the game's default
    configuration (``<game package>/training.toml``: the [256, 256] actor and critic, its PPO
    settings, tables and table sizes, ``torch_threads = 1``) and no evaluation: environment steps
    (learner decisions, SB3 timesteps) per second, end to end (rollouts including the opponents'
    moves, PPO updates, pool refreshes, the final checkpoint).

    Args:
        game, engine: what to train and through which env (``"single"`` or ``"batched"``).
        total_steps: learner steps of the run.
        heuristics: the pool's heuristic bots (default ``random`` only, so the figure measures
            the env and PPO; slower bots bound it by their own speed).
        overrides: further config keys (e.g. a tiny run for smoke tests). The observation
            encoder is ``"none"`` unless given here, for the same reason (Ronda Robada's
            ``robada_plans`` runs the expert's planner at every decision, about 2,000 steps/s).
        algorithm: ``"fast"`` (the trainer's :class:`hod.training.ppo_fast.FastMaskablePPO`) or
            ``"sb3"`` (sb3-contrib's own ``MaskablePPO`` methods: the same run, the trainer before).

    Returns ``env_steps_per_s`` (the trainer's wall figure, evaluation excluded) and
    ``cpu_env_steps_per_s``: steps per CPU second of this process over ``Trainer.run`` (the policy
    diagnostics excluded, as the wall figure excludes them), less sensitive to a shared machine.
    """
    import tempfile

    import torch

    from hod.training import config as config_mod
    from hod.training.train import Trainer

    over = {"engine": engine, "total_steps": total_steps, "eval_every": 0, "heuristics": list(heuristics),
            "obs_encoder": "none",
            "checkpoint_every": max(1, total_steps), **(overrides or {})}
    cfg = config_mod.override_keys(config_mod.load_config(game), over)
    flat = config_mod.flatten(cfg)
    before = torch.get_num_threads()
    try:
        with tempfile.TemporaryDirectory() as out:
            from hod.training.ppo_fast import as_fast, as_sb3_contrib

            t0 = time.perf_counter()
            trainer = Trainer(game, cfg, out, progress=False, verbose=0, log=None)
            trainer.model = {"fast": as_fast, "sb3": as_sb3_contrib}[algorithm](trainer.model)
            diag_cpu = [0.0]
            diagnostics = trainer.policy_diagnostics

            def timed_diagnostics(record: bool = True) -> dict:
                c = time.process_time()
                try:
                    return diagnostics(record)
                finally:
                    diag_cpu[0] += time.process_time() - c

            trainer.policy_diagnostics = timed_diagnostics
            c0 = time.process_time()
            summary = trainer.run()
            cpu = time.process_time() - c0 - diag_cpu[0]
            dt = time.perf_counter() - t0
    finally:
        torch.set_num_threads(before)
    return {"game": game, "engine": engine, "env_steps_per_s": summary["env_steps_per_s"],
            "cpu_env_steps_per_s": round(summary["steps"] / cpu, 1) if cpu > 0 else 0.0, "algorithm": algorithm,
            "steps": summary["steps"], "seconds": dt, "torch_threads": flat["torch_threads"],
            "config": f"{flat['tables']} tables x {flat['learner_seats']} learner seats, players {flat['players']}, "
                      f"net {flat['net_arch']}, n_steps={flat['n_steps']}, batch_size={flat['batch_size']}, "
                      f"n_epochs={flat['n_epochs']}, heuristics {list(heuristics)}"}


# ---- the run --------------------------------------------------------------------------------------
def run(games: list[str], batch_sizes: tuple[int, ...], seconds: float, repeats: int, peers: bool,
        ppo: bool, quick: bool, progress: Callable[[str], None] = print, ppo_steps: int = 100_000,
        ppo_engines: tuple[str, ...] = ("single", "batched"), ppo_algorithms: tuple[str, ...] = ("fast",)) -> dict:
    """Measure everything; returns ``{"rows": [...], "memory": [...], "ppo": ..., "ppo_rows": [...],
    "curves": ...}`` (``ppo``: the first batched PPO figure, Tapeo's when measured)."""
    rows: list[dict] = []
    curves: dict[str, list[tuple[int, float]]] = {}
    memory: list[dict] = []

    def add(game, players, label, result, kind):
        rows.append({"game": game, "players": players, "env": label, "kind": kind, **result})
        progress(f"{game} {players} {label}: {result if isinstance(result, dict) else result}")

    if peers:
        from pettingzoo.classic import connect_four_v3, leduc_holdem_v4, rps_v2, texas_holdem_v4
        for name, make in (("leduc_holdem_v4", leduc_holdem_v4.env), ("texas_holdem_v4", texas_holdem_v4.env),
                           ("connect_four_v3", connect_four_v3.env)):
            add("pettingzoo", 2, f"{name}.env() [AEC]", _steps_bench(bench_aec, make, seconds, repeats), "peer-aec")
        add("pettingzoo", 2, "rps_v2.parallel_env()", _steps_bench(bench_parallel, rps_v2.parallel_env, seconds,
                                                                      repeats), "peer-parallel")
        try:
            add("openspiel", 2, "pyspiel leduc_poker", bench_openspiel("leduc_poker", seconds, repeats), "peer-aec")
        except ImportError as e:
            rows.append({"game": "openspiel", "players": 2, "env": "pyspiel leduc_poker", "kind": "note",
                         "note": f"skipped: {e}"})
    for game in games:
        mod = get_game(game).module()
        for n in measured_player_counts(game):
            add(game, n, "env() [AEC]", _steps_bench(bench_aec, lambda: mod.env(num_players=n), seconds, repeats),
                "aec")
            add(game, n, "parallel_env()", _steps_bench(bench_parallel, lambda: mod.parallel_env(num_players=n),
                                                        seconds, repeats), "parallel")
            key = f"{game} {n}p"
            try:
                for b in batch_sizes:
                    r = bench_batched(game, n, b, seconds, repeats)
                    add(game, n, f"batched B={b}", r, "batched")
                    curves.setdefault(key, []).append((b, r["steps_per_s"]))
                m = bench_memory(game, n, 64 if quick else MEMORY_BATCH)
                memory.append({"game": game, "players": n, "batch": 64 if quick else MEMORY_BATCH, **m})
            except ImportError as e:
                rows.append({"game": game, "players": n, "env": "batched", "kind": "note",
                             "note": f"not available: {e}"})
            tables = 64 if quick else 1024
            if get_game(game).batched_engine is None:       # a game declared without a batched engine
                rows.append({"game": game, "players": n, "env": "learner env", "kind": "note",
                             "note": "not available: the game declares no batched_engine"})
                continue
            add(game, n, f"LearnerVecEnv ({tables} tables)", bench_vec_env(game, n, tables, seconds, repeats), "vec")
    ppo_rows: list[dict] = []
    if ppo:
        tiny = {"tables": 8, "n_steps": 16, "batch_size": 128, "n_epochs": 1}   # --quick: a smoke run
        for game in [g for g in games if get_game(g).batched_engine is not None]:   # the games PPO trains on
            for engine in (("batched",) if quick else ppo_engines):
                for algorithm in ppo_algorithms:   # alternated per game and engine
                    r = bench_ppo(game, engine, 256 if quick else ppo_steps, overrides=tiny if quick else None,
                                  algorithm=algorithm)
                    ppo_rows.append(r)
                    progress(f"MaskablePPO: {r}")
    ppo_result = next((r for r in ppo_rows if r["engine"] == "batched"), ppo_rows[0] if ppo_rows else None)
    return {"rows": rows, "memory": memory, "ppo": ppo_result, "ppo_rows": ppo_rows, "curves": curves}


def format_markdown(result: dict, header: str = "") -> str:
    """The tables: rates with ratios to leduc_holdem_v4 (AEC) and rps_v2 (Parallel), memory, PPO."""
    rows = result["rows"]
    ref_aec = next((r["steps_per_s"] for r in rows if r["env"].startswith("leduc_holdem_v4")), None)
    ref_par = next((r["steps_per_s"] for r in rows if r["env"].startswith("rps_v2")), None)
    lines = [header, "", "| game | players | environment | agent-steps/s | games/s | x leduc AEC | x rps parallel |",
             "|---|---:|---|---:|---:|---:|---:|"]
    for r in rows:
        if r["kind"] == "note":
            lines.append(f"| {r['game']} | {r['players']} | {r['env']} | {r['note']} | | | |")
            continue
        ra = f"{r['steps_per_s'] / ref_aec:,.1f}" if ref_aec else "-"
        rp = f"{r['steps_per_s'] / ref_par:,.1f}" if ref_par else "-"
        lines.append(f"| {r['game']} | {r['players']} | {r['env']} | {r['steps_per_s']:,.0f} | "
                     f"{r['games_per_s']:,.1f} | {ra} | {rp} |")
    if result["memory"]:
        lines += ["", "| batched engine | players | B | state bytes/game (nbytes) | peak traced bytes/game |",
                  "|---|---:|---:|---:|---:|"]
        for m in result["memory"]:
            lines.append(f"| {m['game']} | {m['players']} | {m['batch']} | {m['state_bytes_per_game']:,.0f} | "
                         f"{m['peak_bytes_per_game']:,.0f} |")
    ppo_rows = result.get("ppo_rows") or ([result["ppo"]] if result.get("ppo") else [])
    if ppo_rows:
        lines += ["", "MaskablePPO self-play training through the training code path (`hod.training.train.Trainer`, "
                      "the game's default configuration, no evaluation; pool of the latest copy and `random`), "
                      "end to end:", "",
                  "| game | engine | algorithm | env steps/s | CPU env steps/s | steps | seconds | torch threads | "
                  "configuration |",
                  "|---|---|---|---:|---:|---:|---:|---:|---|"]
        for p in ppo_rows:
            lines.append(f"| {p['game']} | {p['engine']} | {p.get('algorithm', 'fast')} | **{p['env_steps_per_s']:,.0f}** | "
                         f"{p.get('cpu_env_steps_per_s', 0):,.0f} | {p['steps']} | "
                         f"{p['seconds']:.1f} | {p['torch_threads']} | {p['config']} |")
    return "\n".join(lines) + "\n"


def plot_png(result: dict) -> bytes:
    """PNG chart: agent-steps/s against batch size (log-log), references as horizontal lines."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8, 5))
    for key, pts in result["curves"].items():
        xs, ys = zip(*pts)
        ax.plot(xs, ys, marker="o", label=f"{key} batched")
    styles = iter(["--", ":", "-.", (0, (5, 1)), (0, (3, 1, 1, 1))])
    for r in result["rows"]:
        if r["kind"] in ("peer-aec", "peer-parallel"):
            ax.axhline(r["steps_per_s"], linestyle=next(styles, "--"), color="grey", linewidth=1)
            ax.annotate(r["env"], (1, r["steps_per_s"]), fontsize=7, color="grey", va="bottom")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("batch size B (games stepped together)")
    ax.set_ylabel("agent-steps per second")
    ax.set_title("Random legal play, one process")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def main(argv: Optional[list[str]] = None) -> dict:
    """Entry point: :func:`run` with the options (``--quick``: B = 1 and 64, 0.02 s, 1 repeat, each
    only when its option is not given), write ``throughput.md`` (:func:`format_markdown`) and
    ``throughput.png`` (:func:`plot_png`) to ``--out-dir``, both rendered first and written
    together (:func:`hod.core.atomic.atomic_write_many`: both or neither), print the Markdown and
    return :func:`run`'s dict.

    Raises:
        SystemExit: status 2 with argparse's usage error for a bad option or an ``--out-dir`` that
            cannot hold the files (:func:`check_out_dir`), nothing run; 130 (143) with one line on
            Ctrl-C (SIGTERM), 74 with one line when a file cannot be written
            (:func:`hod.core.commands.long_command`).
    """
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", nargs="+", default=game_names(), choices=game_names(), help="games to measure")
    # default None: --quick fills in only the options not given (an explicit one wins)
    ap.add_argument("--batch-sizes", nargs="+", type=int_option(1, 1 << 24), default=None,
                    help="games per batch, each 1..2**24 (default 1 64 1024 4096 8192; --quick: 1 64)")
    ap.add_argument("--seconds", type=float_option(0.0, low_open=True), default=None,
                    help="least seconds per timed run, > 0 (default 1; --quick: 0.02)")
    ap.add_argument("--repeats", type=int_option(1), default=None,
                    help="timed runs per figure; the median is reported (default 3; --quick: 1)")
    ap.add_argument("--no-peers", action="store_true", help="skip the PettingZoo and OpenSpiel references")
    ap.add_argument("--no-ppo", action="store_true", help="skip the MaskablePPO measurement")
    ap.add_argument("--ppo-steps", type=int_option(1), default=100_000,
                    help="learner steps of each PPO run, >= 1 (default 100000)")
    ap.add_argument("--ppo-engines", nargs="+", default=["single", "batched"], choices=["single", "batched"],
                    help="training envs measured with PPO (default both)")
    ap.add_argument("--ppo-algorithms", nargs="+", default=["fast"], choices=["fast", "sb3"],
                    help="MaskablePPO methods measured: fast (the trainer's FastMaskablePPO) and/or sb3 "
                         "(sb3-contrib's own: the same run, the trainer before); default fast")
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: B = 1 and 64, 0.02 s per run, 1 repeat, tiny PPO (figures not meaningful); "
                         "--batch-sizes, --seconds and --repeats given with it are kept")
    ap.add_argument("--out-dir", default="benchmarks/results", help="where throughput.md/.png go")
    args = ap.parse_args(argv)
    fill_defaults(args, QUICK if args.quick else DEFAULTS)
    try:   # before any measurement: a folder that cannot be written fails now, not after the run
        out = check_out_dir(args.out_dir)
    except ConfigError as e:
        ap.error(str(e))
    with long_command():   # Ctrl-C: one line, status 130 (SIGTERM 143); a refused write: one line, status 74
        result = run(args.games, tuple(args.batch_sizes), args.seconds, args.repeats, not args.no_peers,
                     not args.no_ppo, args.quick, ppo_steps=args.ppo_steps, ppo_engines=tuple(args.ppo_engines),
                     ppo_algorithms=tuple(args.ppo_algorithms))
        header = (f"Random legal play, one process; median of {args.repeats} runs of >= {args.seconds:g} s each; "
                  "only the first reset of each run seeded"
                  + (" (--quick smoke run: not meaningful)" if args.quick else "") + ".")
        text = format_markdown(result, header)
        files = {"throughput.md": text.encode("utf-8"), "throughput.png": plot_png(result)}   # both rendered first
        atomic_write_many([(out / name, files[name]) for name in OUT_FILES])
    print(text)
    return result


if __name__ == "__main__":
    main()
