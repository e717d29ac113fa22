"""The main job: train a small Tapeo agent with the default configuration and evaluate it.

``python -m hod.apps.demo [--out runs/demo_tapeo] [--steps 300000] [--seed 0]``

Runs :class:`hod.training.train.Trainer` with ``tapeo_env/training.toml`` except a shorter
budget (``--steps``, evaluation every third of it on 200 games) and :data:`DEMO_OVERRIDES` (a
warm start by behaviour cloning of ``expert`` and a smaller PPO learning rate, so that the short
run ends in a policy that reads its observation), then a final evaluation of
``--final-games`` games per table size (2 and 4 players) against every baseline bot registered
(random, greedy, expert, and ``ranking``: the best fixed order of kinds, which a policy that
ignores its observation cannot beat), prints the table and how state-dependent the play is
(:mod:`hod.training.diagnostics`), and writes ``final_evaluation.md``, the learning curve PNG,
TensorBoard logs and the checkpoints under ``--out`` (a folder that holds a demo run is replaced,
one that holds another run is refused: :func:`is_demo_run`). The final evaluation shows a progress bar
per tournament on stderr (``--no-progress``: none). With the defaults it takes a few minutes on
2 cores (measured figures in docs/training.md).
"""
from __future__ import annotations

import argparse
import functools
import json
import sys
import time
from pathlib import Path
from typing import Optional

from hod.agents.model_card import MAX_JSON_BYTES, CheckpointError, read_limited
from hod.core.atomic import atomic_write_text
from hod.core.commands import interrupted_status, long_command
from hod.core.errors import ConfigError
from hod.evaluation.cli_options import int_option
from hod.evaluation.schedule import MAX_GAMES

from hod.training import config as config_mod
from hod.training.evaluate import evaluate_policy, format_rows
from hod.training.numpy_policy import PolicyBot
from hod.training.pool import registered_bot_names
from hod.training.train import Trainer, check_no_run, clear_run

BASELINES = ("random", "greedy", "expert", "ranking")   # ranking: the best fixed order of kinds


#: What the demo changes in the default Tapeo config besides its budget, and why. From the default
#: config (PPO from a random network), 300k steps end in a fixed order of kinds whatever the state
#: (state dependence 0.00-0.02 from ~40k steps on; it loses to ``ranking``, 18.7% / 7.7% at 2 / 4
#: players), and neither another opponent mix, reward, entropy bonus, learning rate, activation nor a
#: rescaled input changed that within the demo's budget (docs/training.md, "Learned play in the
#: demo"). A warm start by behaviour cloning of ``expert`` (a state-dependent player: 0.42 on its own
#: positions) gives PPO a policy that reads its observation, a smaller learning rate keeps PPO
#: from flattening it into a list within 300k steps, and more bot opponents (``ranking`` among
#: them) make a list a worse answer. The warm start costs ~20 s on 2 cores.
DEMO_OVERRIDES: dict = {
    "bc_teacher": "expert", "bc_decisions": 50_000,    # 4 epochs (bc_epochs) over them: 78% agreement
    "learning_rate": 5e-5,
    # 60% of the opponent seats are bots, ranking among them: a policy that only plays a list
    # meets the best list (the default pool is 80% copies of the learner, themselves lists)
    "heuristics": ["ranking", "expert", "greedy"], "p_latest": 0.25, "p_past": 0.15, "p_heuristic": 0.6,
}


def demo_config(steps: int, seed: int = 0, baselines: Optional[list[str]] = None,
                heuristics: Optional[list[str]] = None) -> dict:
    """The demo's training config: ``tapeo_env/training.toml`` with :data:`DEMO_OVERRIDES`, a
    budget of ``steps`` learner steps (evaluation and checkpoint every third of it, 10 snapshots,
    each at most once per rollout: ``n_steps * tables * learner_seats`` learner steps, 4,096 with
    the Tapeo config, between which the policy does not change), ``seed``, and the ``baselines``
    and pool ``heuristics`` bots (None: the config's)."""
    cfg = config_mod.load_config("tapeo")
    flat = config_mod.flatten(cfg)
    rollout = flat["n_steps"] * flat["tables"] * flat["learner_seats"]
    every = max(rollout, steps // 3)
    keys = {**DEMO_OVERRIDES, "total_steps": steps, "seed": seed, "eval_every": every, "eval_games": 200,
            "snapshot_every": max(rollout, steps // 10), "checkpoint_every": every}
    if baselines is not None:
        keys["baselines"] = list(baselines)
    if heuristics is not None:
        keys["heuristics"] = list(heuristics)
    return config_mod.override_keys(cfg, keys)


def is_demo_run(out: str | Path) -> bool:
    """Whether the folder ``out`` holds a demo run, which the demo may replace: its ``config.json``
    (written by every training run, :meth:`hod.training.train.Trainer.run`) names the game
    ``tapeo`` and is, key for key, what :func:`demo_config` makes of its own ``total_steps`` and
    ``seed`` (the pool's ``heuristics`` and the ``baselines`` aside: the demo keeps the registered
    ones). A missing, unreadable or other configuration is not a demo run, nor is a training run
    that merely shares :data:`DEMO_OVERRIDES` (another network, budget schedule or table size)."""
    try:
        saved = json.loads(read_limited(Path(out) / "config.json", MAX_JSON_BYTES, "MAX_JSON_BYTES", "config"))
    except (OSError, ValueError, RecursionError, CheckpointError):
        return False
    if not isinstance(saved, dict) or saved.get("game") != "tapeo":
        return False
    flat = config_mod.flatten({k: v for k, v in saved.items() if isinstance(v, dict)})
    steps, seed = flat.get("total_steps"), flat.get("seed")
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1 \
            or isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= config_mod.SEED_MAX:
        return False
    try:
        demo = json.loads(json.dumps(config_mod.flatten(demo_config(steps, seed))))   # as config.json holds it
    except (ConfigError, TypeError, ValueError):
        return False
    return all(flat.get(k, object()) == v for k, v in demo.items() if k not in ("heuristics", "baselines"))


def main(argv: Optional[list[str]] = None) -> int:
    """Entry point of ``python -m hod.apps.demo``; returns the exit status: 0; 130 after Ctrl-C
    (143 after SIGTERM) once ``latest.zip`` is saved; 74 when a file cannot be written
    (:mod:`hod.core.commands`).

    Raises:
        SystemExit: status 2 with the usage and one ``error: ...`` line before any work, for a bad
            option, an ``--out`` that cannot be written, or one that holds a run other than a demo
            run (:func:`is_demo_run`; :func:`hod.training.train.check_no_run`).
    """
    p = argparse.ArgumentParser(prog="python -m hod.apps.demo", description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="runs/demo_tapeo",
                   help="run folder (replaced if it holds a demo run; a folder holding another run is refused)")
    p.add_argument("--steps", type=int_option(1), default=300_000, help="learner steps, >= 1 (default 300000)")
    p.add_argument("--seed", type=int_option(0, config_mod.SEED_MAX), default=0,
                   help=f"training seed, 0..{config_mod.SEED_MAX} (default 0)")
    p.add_argument("--final-games", type=int_option(1, MAX_GAMES), default=1000,
                   help=f"games per table size and baseline at the end, 1..{MAX_GAMES:,} (default 1000)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars (training and final evaluation)")
    args = p.parse_args(argv)

    # SIGTERM as Ctrl-C (a checkpoint is saved), a file that cannot be written: one line, status 74
    with long_command():
        t0 = time.perf_counter()
        game = "tapeo"
        known = registered_bot_names(game)
        baselines = [b for b in BASELINES if b in known]
        heuristics = [b for b in DEMO_OVERRIDES["heuristics"] if b in known] or ["random"]
        cfg = demo_config(args.steps, args.seed, baselines, heuristics)
        try:   # before any work: the configuration, a writable --out, and no other run to overwrite
            config_mod.validate_config(game, cfg)
            config_mod.check_out_dir(args.out)
            replaces = is_demo_run(args.out)
            if not replaces:
                check_no_run(args.out, "it is not a demo run (its config.json is not the demo's Tapeo configuration) "
                                       "and the demo replaces only its own; legal: another --out (a new or empty "
                                       "folder, or one that holds a demo run)")
        except ConfigError as e:
            p.error(str(e))
        print(f"training a Tapeo agent for {args.steps} steps (tables of {config_mod.flatten(cfg)['players']} players, "
              f"baselines {baselines}) into {args.out}", flush=True)
        if replaces:   # the old demo run goes first: none of its checkpoints or logs stays beside the new run's
            clear_run(args.out)
        try:
            trainer = Trainer(game, cfg, args.out, progress=not args.no_progress, verbose=0)
        except ConfigError as e:   # e.g. an --out that cannot be written
            p.error(str(e))
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
        return 0 if not summary["interrupted"] else interrupted_status()


if __name__ == "__main__":
    sys.exit(main())
