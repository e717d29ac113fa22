"""The main job: train a small Tapeo agent with the default configuration and evaluate it.

``python -m hod.apps.demo [--out runs/demo_tapeo] [--steps 300000] [--seed 0]``

Runs :class:`hod.training.train.Trainer` with ``training/configs/tapeo.toml`` except a shorter
budget (``--steps``, evaluation every third of it on 200 games), then a final evaluation of
``--final-games`` games per table size (2 and 4 players) against every baseline bot registered
(random, greedy, expert, and ``ranking``: the best fixed order of kinds, which a policy that
ignores its observation cannot beat), prints the table and how state-dependent the play is
(:mod:`hod.training.diagnostics`), and writes ``final_evaluation.md``, the learning curve PNG,
TensorBoard logs and the checkpoints under ``--out``. The final evaluation shows a progress bar
per tournament on stderr (``--no-progress``: none). With the defaults it takes a few minutes on
2 cores (measured figures in docs/training.md).
"""
from __future__ import annotations

import argparse
import functools
import sys
import time
from pathlib import Path
from typing import Optional

from hod.core.atomic import atomic_write_text

from hod.training import config as config_mod
from hod.training.evaluate import evaluate_policy, format_rows
from hod.training.numpy_policy import PolicyBot
from hod.training.pool import registered_bot_names
from hod.training.train import Trainer

BASELINES = ("random", "greedy", "expert", "ranking")   # ranking: the best fixed order of kinds


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m hod.apps.demo", description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="runs/demo_tapeo", help="run folder (replaced if it holds a demo run)")
    p.add_argument("--steps", type=int, default=300_000, help="learner steps")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--final-games", type=int, default=1000, help="games per table size and baseline at the end")
    p.add_argument("--no-progress", action="store_true", help="no progress bars (training and final evaluation)")
    args = p.parse_args(argv)

    t0 = time.perf_counter()
    game = "tapeo"
    known = registered_bot_names(game)
    baselines = [b for b in BASELINES if b in known]
    heuristics = [b for b in ("greedy", "expert") if b in known] or ["random"]
    every = max(1, args.steps // 3)
    cfg = config_mod.override_keys(config_mod.load_config(game), {
        "total_steps": args.steps, "seed": args.seed, "eval_every": every, "eval_games": 200,
        "snapshot_every": max(1, args.steps // 10), "checkpoint_every": every,
        "baselines": baselines, "heuristics": heuristics,
    })
    print(f"training a Tapeo agent for {args.steps} steps (tables of {config_mod.flatten(cfg)['players']} players, "
          f"baselines {baselines}) into {args.out}", flush=True)
    trainer = Trainer(game, cfg, args.out, progress=not args.no_progress, verbose=0)
    summary = trainer.run()
    t_train = time.perf_counter() - t0
    print(f"\nfinal evaluation: {args.final_games} games per table size and baseline", flush=True)
    pol = trainer.numpy_policy()
    rows = evaluate_policy(game, functools.partial(PolicyBot, pol, True), baselines, [2, 4], args.final_games,
                           seed=config_mod.flatten(cfg)["eval_seed"] + 1, steps=summary["steps"],
                           progress=not args.no_progress)   # a bar per tournament: minutes of play otherwise silent
    table = format_rows(rows)
    total = time.perf_counter() - t0
    diag = summary.get("diagnostics")   # the final policy's (hod.training.diagnostics); None when interrupted
    state = "State dependence: not measured (interrupted)." if not diag else (f"State dependence: on {diag['decisions']} fixed positions the policy's choice differs from its own "
             f"best-fitting fixed ranking ({', '.join(diag['ranking_names'])}) in "
             f"{100 * diag['state_dependence']:.1f}% of the decisions (0% = a fixed list); saturated tanh units "
             f"(|a| > 0.99) per hidden layer: {', '.join(f'{100 * x:.0f}%' for x in diag['saturated'])}.")
    report = (f"# Demo: Tapeo PPO agent after {summary['steps']} learner steps\n\n{table}\n\n{state}\n\n"
              f"Training {t_train:.0f} s ({summary['env_steps_per_s']} learner steps/s, evaluation excluded); "
              f"total with evaluation {total:.0f} s. Checkpoint: {summary['checkpoint']}\n")
    atomic_write_text(Path(args.out) / "final_evaluation.md", report)
    print(table)
    print(f"\n{state}")
    print(f"\ntotal wall time {total:.0f} s; learning curve: {Path(args.out) / 'learning_curve.png'}")
    return 0 if not summary["interrupted"] else 130


if __name__ == "__main__":
    sys.exit(main())
