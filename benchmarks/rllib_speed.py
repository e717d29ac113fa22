"""Training throughput on Ray RLlib next to the SB3 trainer, in one run:
``python -m hod.benchmarks.rllib_speed --game tapeo --players 4 --iterations 4 --out results/rllib_speed``.

Rows (learner steps per second end to end: sampling, the PPO update and the pool refresh, with
the run's start-up, Ray's and the actors', left out; evaluation off):

* ``sb3``: the SB3 trainer (:class:`hod.training.train.Trainer`, ``engine = "batched"``);
* ``rllib fast, R runners``: :class:`hod.training.rllib.train.RLlibTrainer` on the fast path with
  ``R`` env runners (0: sampling in the driver);
* ``rllib per-agent, 1 runner``: RLlib's ``PettingZooEnv`` path (every seat a learner).

Every row trains the same network (the game's config: ``net_arch``, ``activation``) with the same
PPO settings; one iteration is ``n_steps * tables * learner_seats`` learner steps per env runner
(the per-agent path: ``n_steps * tables`` env steps, every seat learning). The RLlib rows also
give the sampling time and the learner's update time per iteration (RLlib's timers), from which
the per-runner sampling rate and the update cost per learner step come, and with them
:func:`cluster_estimate`: the rate of ``machines x cores`` under RLlib's synchronous PPO.

Output: a Markdown table on stdout, ``OUT.json`` and ``OUT.md``.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

from hod.core.atomic import atomic_write_many, json_bytes
from hod.core.errors import ConfigError
from hod.evaluation.cli_options import prepare_out_prefix
from hod.core.games import game_names
from hod.training import config as config_mod

PROG = "python -m hod.benchmarks.rllib_speed"


def _config(game: str, players: list[int], tables: int, total: int) -> dict:
    cfg = config_mod.load_config(game)
    return config_mod.override_keys(cfg, {"players": players, "tables": tables, "total_steps": total, "eval_every": 0,
                                          "engine": "batched", "obs_encoder": "none", "reward_scale": 1.0,
                                          "checkpoint_every": 10**9, "bc_teacher": ""})


def bench_sb3(game: str, players: list[int], tables: int, iterations: int, work: Path) -> dict:
    """The SB3 trainer for ``iterations`` rollouts; its own steps/s (evaluation excluded)."""
    from hod.training.train import Trainer

    cfg = _config(game, players, tables, 1)
    c = config_mod.flatten(cfg)
    rollout = c["n_steps"] * tables * c["learner_seats"]
    cfg = config_mod.override_keys(cfg, {"total_steps": rollout * iterations})
    t = Trainer(game, cfg, work / "sb3", progress=False, log=None)
    s = t.run()
    return {"row": "sb3 (MaskablePPO, batched engine)", "steps": s["steps"], "seconds": round(s["steps"] / s["env_steps_per_s"], 1),
            "steps_per_s": s["env_steps_per_s"]}


def bench_rllib(game: str, players: list[int], tables: int, iterations: int, work: Path, path: str,
                runners: int) -> dict:
    """An RLlib run of ``iterations`` training iterations (Ray already up); start-up excluded."""
    from hod.training.rllib.train import RLlibTrainer

    cfg = _config(game, players, tables, 1)
    c = config_mod.flatten(cfg)
    slots = tables * (c["learner_seats"] if path == "fast" else 1)
    per_iter = c["n_steps"] * slots * max(1, runners)
    cfg = config_mod.override_keys(cfg, {"total_steps": per_iter * iterations})
    t = RLlibTrainer(game, cfg, work / f"rllib_{path}_{runners}", path=path, env_runners=runners, progress=False,
                     log=None)
    t.start()
    s = t.run()
    tim = t.timings[1:] or t.timings   # the first iteration warms up
    steps = sum(x["steps"] for x in tim)
    sample = sum(x["sample_s"] for x in tim) / len(tim)
    update = sum(x["update_s"] for x in tim) / len(tim)
    per_runner = (steps / len(tim)) / max(1, runners) / sample if sample else 0.0
    return {"row": f"rllib {path}, {runners} env runner{'s' if runners != 1 else ''}", "steps": s["steps"],
            "seconds": round(s["steps"] / s["env_steps_per_s"], 1), "steps_per_s": s["env_steps_per_s"],
            "iteration_steps": steps // len(tim), "sample_s": round(sample, 3), "update_s": round(update, 3),
            "runner_steps_per_s": round(per_runner, 1),
            "update_us_per_step": round(1e6 * update / (steps / len(tim)), 2)}


def cluster_estimate(runner_rate: float, update_s_per_step: float, machines: int = 8, cores: int = 16,
                     learners_per_machine: int = 1, steps_per_runner_iteration: int = 4096) -> dict:
    """Estimated learner steps/s of ``machines x cores`` under RLlib's synchronous PPO.

    One core per env runner, ``learners_per_machine`` cores per machine for learners (data
    parallel), one core of the head for the driver: ``R = machines * (cores - learners) - 1``
    runners and ``L = machines * learners`` learners. An iteration samples ``B = R * s`` steps
    (``s`` per runner) in ``s / runner_rate`` seconds, then updates in ``B * update_s_per_step / L``
    seconds (gradient all-reduce and object transfer not counted: an upper bound). Rate = B /
    (sampling + update).

    Returns:
        dict with ``runners``, ``learners``, ``batch``, ``sample_s``, ``update_s``, ``steps_per_s``.
    """
    L = machines * learners_per_machine
    R = machines * (cores - learners_per_machine) - 1
    B = R * steps_per_runner_iteration
    t_s = steps_per_runner_iteration / runner_rate
    t_u = B * update_s_per_step / L
    return {"machines": machines, "cores": cores, "runners": R, "learners": L, "batch": B,
            "sample_s": round(t_s, 2), "update_s": round(t_u, 2), "steps_per_s": round(B / (t_s + t_u))}


def markdown(rows: list[dict], estimates: list[dict], meta: dict) -> str:
    """The Markdown table of ``rows`` (the first is the SB3 baseline) and the estimates."""
    lines = [f"{meta['game']} {meta['players']} players, {meta['tables']} tables per env runner, network "
             f"{meta['net_arch']} {meta['activation']}, {meta['iterations']} iterations per row; "
             f"{meta['cpus']} CPUs, {meta['date']}", "",
             "| trainer | learner steps | seconds | steps/s | vs SB3 | sample s/iter | update s/iter | steps/s per runner |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    base = rows[0]["steps_per_s"]
    for r in rows:
        lines.append(f"| {r['row']} | {r['steps']} | {r['seconds']} | {r['steps_per_s']:.0f} | "
                     f"{r['steps_per_s'] / base:.2f} | {r.get('sample_s', '')} | {r.get('update_s', '')} | "
                     f"{r.get('runner_steps_per_s', '')} |")
    for e in estimates:
        lines += ["", f"Estimate for {e['machines']} machines x {e['cores']} cores: {e['runners']} env runners, "
                      f"{e['learners']} learners, batch {e['batch']}: sampling {e['sample_s']} s + update "
                      f"{e['update_s']} s per iteration = about {e['steps_per_s']} learner steps/s "
                      f"(from the measured {e['from']})."]
    return "\n".join(lines) + "\n"


def check_args(args: argparse.Namespace) -> dict:
    """The flat configuration of the rows, after checking the arguments before anything runs.

    Raises:
        ConfigError: ``--iterations`` or ``--tables`` below 1, a ``--runners`` count below 0 or above
            this machine's CPUs (one env runner per CPU), a configuration key outside its legal
            range (e.g. ``--players 9``: the schema names the legal table sizes), or an ``--out``
            folder that cannot be written.
    """
    for flag, v, low in (("--iterations", args.iterations, 1), ("--tables", args.tables, 1)):
        if v < low:
            raise ConfigError(f"{flag} {v}; legal: an integer >= {low}")
    cpus = os.cpu_count() or 1
    bad = [r for r in args.runners if not 0 <= r <= cpus]
    if bad:
        raise ConfigError(f"--runners {bad[0]}; legal: 0 to {cpus} (this machine's CPUs, one per env runner)")
    cfg = _config(args.game, args.players, args.tables, 1)
    config_mod.validate_config(args.game, cfg)
    if args.out:
        prepare_out_prefix(args.out, (".json", ".md"))
    return config_mod.flatten(cfg)


def main(argv: Optional[list[str]] = None) -> int:
    """Entry point; returns 0, or 2 with a one-line ``error: ...`` for bad arguments (nothing run).

    Raises:
        SystemExit: argparse errors (status 2, usage printed).
    """
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("--game", choices=game_names(), default="tapeo")
    p.add_argument("--players", type=int, nargs="+", default=[4])
    p.add_argument("--tables", type=int, default=64, help="tables per env runner (and of the SB3 env)")
    p.add_argument("--iterations", type=int, default=4, help="training iterations per row")
    p.add_argument("--runners", type=int, nargs="+", default=[0, 1, 2], help="env runner counts of the fast path")
    p.add_argument("--no-per-agent", action="store_true", help="skip the per-agent row")
    p.add_argument("--out", help="write OUT.json and OUT.md")
    args = p.parse_args(argv)
    try:
        cfg = check_args(args)
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")   # the benchmark's Ray on 127.0.0.1
    import ray

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        rows.append(bench_sb3(args.game, args.players, args.tables, args.iterations, work))
        print(rows[-1], flush=True)
        ray_tmp = tempfile.mkdtemp(prefix="hod_ray_")   # Ray's session folder (logs), removed at the end
        ray.init(num_cpus=os.cpu_count(), include_dashboard=False, log_to_driver=False, _temp_dir=ray_tmp)
        try:
            for r in args.runners:
                rows.append(bench_rllib(args.game, args.players, args.tables, args.iterations, work, "fast", r))
                print(rows[-1], flush=True)
            if not args.no_per_agent:
                rows.append(bench_rllib(args.game, args.players[:1], args.tables, max(2, args.iterations // 2), work,
                                        "per-agent", 1))
                print(rows[-1], flush=True)
        finally:
            ray.shutdown()
            shutil.rmtree(ray_tmp, ignore_errors=True)
    remote = [r for r in rows if r["row"].startswith("rllib fast") and not r["row"].endswith(" 0 env runners")]
    estimates = []
    if remote:
        r = remote[0]
        for learners in (1, 4):
            e = cluster_estimate(r["runner_steps_per_s"], r["update_s"] / r["iteration_steps"],
                                 learners_per_machine=learners, steps_per_runner_iteration=r["iteration_steps"])
            e["from"] = (f"{r['runner_steps_per_s']} steps/s per runner and {r['update_us_per_step']} us of "
                         f"update per step of row '{r['row']}'")
            estimates.append(e)
    meta = {"game": args.game, "players": args.players, "tables": args.tables, "iterations": args.iterations,
            "net_arch": cfg["net_arch"], "activation": cfg["activation"], "cpus": os.cpu_count(),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    text = markdown(rows, estimates, meta)
    print(text)
    if args.out:
        atomic_write_many([(args.out + ".json", json_bytes({"meta": meta, "rows": rows, "estimates": estimates})),
                           (args.out + ".md", text.encode("utf-8"))])   # both or neither
    return 0


if __name__ == "__main__":
    sys.exit(main())
