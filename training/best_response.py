"""Best-response exploitability: how much a fresh learner gains against a frozen bot.

:func:`best_response` trains a fresh MaskablePPO learner (the :class:`hod.training.train.Trainer`
with the game's training configuration, ``<game package>/training.toml``) for a fixed budget of
learner steps and a fixed seed, with the frozen *target* bot in every other seat (the opponent
pool reduced to the target: ``heuristics = [target]``, ``p_heuristic = 1``, no self-play
copies), and evaluates the learner against the target every ``steps / evaluations`` steps with
the tournament (:func:`hod.training.evaluate.evaluate_policy`: duplicate deals, seats rotated,
the learner's greedy masked policy in one seat and the target in the others; win rate with its
95% Wilson interval, :func:`hod.evaluation.stats.wilson_interval`). The learner's final win rate
is the target's *exploitability* at that budget: lower = harder to exploit. The same budget
against the ``expert`` is the reference row.

What changes from the game's configuration (everything else, PPO included, is as trained):

=====================  ===================================================================
key                    value
=====================  ===================================================================
``players``            ``[players]`` (one table size)
``learner_seats``      1 (the target sits in every other seat)
``tables``             the config's ``tables * learner_seats`` (the same rollout size)
``engine``             the config's, except ``"single"`` when a target of the run is a search
                       bot (``needs_belief``): only the single-game tables give opponents
                       belief samples (:class:`hod.training.table.LearnerTable`)
``heuristics``         ``[target]``, with ``heuristic_options = {target: target_options}``
``p_latest, p_past``   0, 0 (``p_heuristic`` 1, ``pool_size`` 0)
``total_steps, seed``  ``steps``, ``seed``
``baselines``          ``[target]`` (``baseline_options`` as the heuristic's), ``eval_players =
                       [players]``, ``eval_games``, ``eval_seed``, ``eval_every = steps //
                       evaluations``
=====================  ===================================================================

Command line (one run per target, in turn; the reference ``expert`` is added unless given)::

    python -m hod.training.best_response --game tapeo --target expert --players 2 --steps 100000 \\
        --seed 0 --out results/br_tapeo_expert
    python -m hod.training.best_response --game tapeo --target search --target-options \\
        '{"search": {"determinizations": 4}}' --steps 20000 --out results/br_tapeo_search

It writes, under ``--out``: ``<target>/`` (the training run folder of each target: checkpoints,
``eval.json``, ``learning_curve.png``, TensorBoard logs), ``exploitability.json`` (one row per
target, :func:`best_response`'s dict), ``exploitability.md`` (:func:`exploitability_table`) and
``exploitability.png`` (every target's curve, :func:`hod.training.curves.save_learning_curve`), all
written atomically. Exit status 0, or 2 with a one-line ``error: ...`` before any training for
a bad option (the legal values are named).

Environment steps are learner decisions (SB3 timesteps), as in training; SB3 plays whole
rollouts, so a run ends at the first multiple of the rollout size (``n_steps * tables``) at or
above ``steps``.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from hod import agents
from hod.core.atomic import atomic_write_json, atomic_write_text
from hod.core.commands import interrupted_status, long_command, signal_name
from hod.core.errors import ConfigError
from hod.core.games import game_names, get_game
from hod.evaluation.cli_options import parse_json_object

from . import config as config_mod
from .curves import save_learning_curve

#: The reference target: every table has a row against it at the same budget.
REFERENCE = "expert"


def _check_int(name: str, value: Any, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ConfigError(f"{name}={value!r}: legal values are integers >= {low}")
    return value


def best_response_config(game: str, target: str, players: int = 2, steps: int = 100_000, seed: int = 0,
                         evaluations: int = 5, eval_games: int = 200, eval_seed: int = 12345,
                         target_options: Optional[dict] = None, engine: Optional[str] = None,
                         config: Optional[str | Path] = None,
                         overrides: Optional[dict[str, Any]] = None) -> dict[str, dict[str, Any]]:
    """The training configuration of a best-response run (the table in the module docstring),
    checked with the training schema (:func:`hod.training.config.validate_config`).

    Args:
        game: game name. target: registered bot name (``agents.names(game)``).
        players: table size. steps: learner steps (>= 1). seed: training seed.
        evaluations: evaluations against the target during the run (>= 1; one more is made
            before training, at step 0, and one at the end).
        eval_games: games per evaluation (rounded up to a multiple of ``players``).
        eval_seed: tournament seed (every evaluation plays the same deals).
        target_options: the target bot's options (e.g. ``{"determinizations": 4}``).
        engine: ``"single"`` or ``"batched"`` (None: the config's, or ``"single"`` for a search
            target).
        config: TOML file of the game's training configuration (None: the game's default).
        overrides: other config keys to change first (e.g. ``{"net_arch": [64, 64]}``; the keys
            of the table above are then set as it says, ``tables`` from the overridden value).

    Returns:
        ``{section: {key: value}}``.

    Raises:
        ConfigError: unknown game or bot (the registered ones are named), a table size the
            game or the target does not play, a bad option of the target (its legal options are
            named), ``engine="batched"`` with a search target, or any value outside its range.
    """
    get_game(game)
    known = agents.names(game)
    if not isinstance(target, str) or target not in known:
        raise ConfigError(f"target={target!r}: no such bot for {game!r}; legal values: {known}")
    _check_int("steps", steps, 1)
    _check_int("evaluations", evaluations, 1)
    if target_options is not None and not isinstance(target_options, dict):
        raise ConfigError(f"target_options={target_options!r}: legal values: None or a dict of the bot's options, "
                          f"e.g. {{'determinizations': 4}}")
    counts = agents.player_counts(game, target)
    if counts is not None and players not in counts:
        raise ConfigError(f"players={players!r}: bot {target!r} plays {list(counts)} players; legal values: {list(counts)}")
    if target_options:   # refused under the name the caller gave them, not the config keys they fill
        try:
            agents.make(game, target, seed=0, num_players=players, **target_options)
        except ConfigError as e:
            raise ConfigError(f"target_options (--target-options) of {target!r}: {e}") from None
    cfg = config_mod.load_config(game, config)
    cfg.setdefault("pool", {}).setdefault("heuristic_options", {})   # config files without the options keys
    cfg.setdefault("eval", {}).setdefault("baseline_options", {})
    cfg = config_mod.override_keys(cfg, dict(overrides or {}))
    flat = config_mod.flatten(cfg)
    if engine is None:
        engine = "single" if agents.needs_belief(game, target) else flat.get("engine", "single")
    options = {target: dict(target_options)} if target_options else {}
    cfg = config_mod.override_keys(cfg, {
        "players": [players], "learner_seats": 1, "tables": flat["tables"] * flat["learner_seats"],
        "engine": engine, "heuristics": [target], "heuristic_options": options, "p_latest": 0.0, "p_past": 0.0,
        "p_heuristic": 1.0, "pool_size": 0, "total_steps": steps, "seed": seed, "checkpoint_every": steps,
        "snapshot_every": steps, "baselines": [target], "baseline_options": options, "eval_players": [players],
        "eval_games": eval_games, "eval_seed": eval_seed, "eval_every": max(1, steps // evaluations),
        "eval_workers": 1, "bc_teacher": "",
    })
    config_mod.validate_config(game, cfg)
    return cfg


def best_response(game: str, target: str, out: str | Path, players: int = 2, steps: int = 100_000, seed: int = 0,
                  evaluations: int = 5, eval_games: int = 200, eval_seed: int = 12345,
                  target_options: Optional[dict] = None, engine: Optional[str] = None,
                  config: Optional[str | Path] = None, overrides: Optional[dict[str, Any]] = None,
                  progress: bool = False, log: Optional[Callable[..., None]] = print) -> dict[str, Any]:
    """Train a best response to ``target`` and measure it (module docstring); arguments as
    :func:`best_response_config`, plus:

    Args:
        out: the training run folder (checkpoints, ``eval.json``, ``learning_curve.png``).
        progress: SB3's progress bar. log: where to print messages (None: silent).

    Returns:
        the row (JSON-serialisable): ``game``, ``target``, ``target_options``, ``players``,
        ``engine``, ``seed``, ``steps`` (learner steps played, whole rollouts), ``wall_clock_s``
        (the run, evaluations included), ``eval_s`` (evaluations alone), ``env_steps_per_s``
        (evaluations excluded), ``par`` (1 / players), ``curve`` (one point per evaluation:
        ``steps``, ``games``, ``win_rate``, ``win_ci`` [low, high], ``points``) and ``final``
        (the last point).

    Raises:
        ConfigError: as :func:`best_response_config`, or an ``out`` folder that cannot be written.
        KeyboardInterrupt: Ctrl-C (or SIGTERM under :func:`hod.core.commands.long_command`), once
            the trainer has saved ``out/checkpoints/latest.zip``.
    """
    from .train import Trainer

    cfg = best_response_config(game, target, players, steps, seed, evaluations, eval_games, eval_seed,
                               target_options, engine, config, overrides)
    config_mod.check_out_dir(out)
    t0 = time.perf_counter()
    trainer = Trainer(game, cfg, out, progress=progress, log=log)
    summary = trainer.run()
    if summary["interrupted"]:   # latest.zip is saved; the row would have no final evaluation
        raise KeyboardInterrupt
    curve = [{"steps": r["steps"], "games": r["games"], "win_rate": r["win_rate"], "win_ci": list(r["win_ci"]),
              "points": r["points"]} for r in trainer.history]
    c = config_mod.flatten(cfg)
    return {
        "game": game, "target": target, "target_options": dict(target_options or {}), "players": players,
        "engine": c["engine"], "seed": seed, "steps": int(summary["steps"]),
        "wall_clock_s": round(time.perf_counter() - t0, 1), "eval_s": round(trainer.eval_time, 1),
        "env_steps_per_s": summary["env_steps_per_s"], "par": 1.0 / players, "curve": curve, "final": curve[-1],
    }


def target_label(row: dict) -> str:
    """``target`` with its options, e.g. ``search (determinizations=4)``."""
    opts = row.get("target_options") or {}
    return row["target"] + (" (" + ", ".join(f"{k}={v}" for k, v in opts.items()) + ")" if opts else "")


def exploitability_table(rows: Sequence[dict]) -> str:
    """The Markdown table of best-response rows (:func:`best_response`), one line per row: the
    budget (learner steps, wall-clock of the run with its evaluations), the training env, the
    games of each evaluation, the untrained learner's win rate (step 0) and the final win rate
    with its 95% Wilson interval, and par (1 / players)."""
    lines = ["| game | players | target | budget (env steps) | wall-clock | engine | games | "
             "at step 0 | final win rate | 95% CI | par |",
             "|---|---:|---|---:|---:|---|---:|---:|---:|---|---:|"]
    for r in rows:
        f, start = r["final"], r["curve"][0]
        lines.append(f"| {r['game']} | {r['players']} | {target_label(r)} | {r['steps']:,} | "
                     f"{r['wall_clock_s']:,.0f} s | {r['engine']} | {f['games']} | {100 * start['win_rate']:.1f}% | "
                     f"{100 * f['win_rate']:.1f}% | [{100 * f['win_ci'][0]:.1f}%, {100 * f['win_ci'][1]:.1f}%] | "
                     f"{100 * r['par']:.1f}% |")
    return "\n".join(lines)


def curve_rows(rows: Sequence[dict]) -> list[dict]:
    """The rows' curves as evaluation rows (``baseline`` = the target's label) for
    :func:`hod.training.curves.save_learning_curve`."""
    return [{"steps": p["steps"], "num_players": r["players"], "baseline": target_label(r), "win_rate": p["win_rate"],
             "win_ci": p["win_ci"]} for r in rows for p in r["curve"]]


def save_outputs(out: str | Path, rows: Sequence[dict]) -> list[Path]:
    """Write ``exploitability.json`` / ``.md`` / ``.png`` under ``out`` (atomically); returns the paths."""
    out = Path(out)
    games = sorted({r["game"] for r in rows})
    title = f"best response ({', '.join(games)}): learner's win rate vs its target"
    paths = [out / "exploitability.json", out / "exploitability.md", out / "exploitability.png"]
    atomic_write_json(paths[0], {"rows": list(rows)})
    atomic_write_text(paths[1], f"# Exploitability (best response)\n\n{exploitability_table(rows)}\n")
    save_learning_curve(paths[2], curve_rows(rows), title)
    return paths


# ---- command line -------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    """The parser of ``python -m hod.training.best_response``."""
    p = argparse.ArgumentParser(
        prog="python -m hod.training.best_response",
        description="Best-response exploitability: train a fresh MaskablePPO learner against a frozen bot in every "
                    "other seat (fixed budget and seed) and report its win rate against that bot over training, "
                    "with 95% intervals; the expert is the reference row.",
        formatter_class=config_mod.HelpFormatter)
    p.add_argument("--game", choices=game_names(), required=True)
    p.add_argument("--target", nargs="+", required=True, metavar="BOT", help="registered bot(s) to exploit, in turn")
    p.add_argument("--target-options", default="{}", metavar="JSON",
                   help='options of targets as a JSON object {bot: {option: value}}, e.g. '
                        '\'{"search": {"determinizations": 4}}\'')
    p.add_argument("--no-reference", dest="reference", action="store_false",
                   help=f"do not add the reference target {REFERENCE!r}")
    p.add_argument("--players", type=int, default=2, help="table size")
    p.add_argument("--steps", type=int, default=100_000, help="learner steps per target")
    p.add_argument("--seed", type=int, default=0, help="training seed")
    p.add_argument("--evaluations", type=int, default=5, help="evaluations during the run (plus one at step 0)")
    p.add_argument("--eval-games", type=int, default=200, help="games per evaluation")
    p.add_argument("--eval-seed", type=int, default=12345, help="tournament seed of the evaluations")
    p.add_argument("--engine", choices=config_mod.ENGINES,
                   help="training env (default: the config's; 'single' when a target is a search bot)")
    p.add_argument("--config", help="TOML training config (default: <game package>/training.toml)")
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument("--progress", action="store_true", help="SB3's progress bar")
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of ``python -m hod.training.best_response``; returns the exit status (0, or 2
    with a one-line ``error: ...`` on stderr before any training; 130 after Ctrl-C and 143 after
    SIGTERM, with one ``error: interrupted ...`` line, the current target's ``latest.zip`` and
    the finished targets' tables kept; 74 when a file cannot be written, :mod:`hod.core.commands`).

    Raises:
        SystemExit: argparse errors (status 2, usage printed).
    """
    args = build_parser().parse_args(argv)
    targets = list(dict.fromkeys(args.target))
    if args.reference and REFERENCE not in targets and REFERENCE in agents.names(args.game):
        targets.append(REFERENCE)
    search = any(t in agents.names(args.game) and agents.needs_belief(args.game, t) for t in targets)
    engine = args.engine or ("single" if search else None)   # rows compared share the training env
    try:
        options = parse_json_object(args.target_options, "--target-options", '{"search": {"determinizations": 4}}')
        stray = sorted(set(options) - set(targets))
        if stray:
            raise ConfigError(f"--target-options names {stray}, which are not targets; legal names: {targets}")
        for t in targets:   # every target's configuration before any training
            best_response_config(args.game, t, args.players, args.steps, args.seed, args.evaluations,
                                 args.eval_games, args.eval_seed, options.get(t), engine, args.config)
        config_mod.check_out_dir(args.out)
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    rows = []
    # SIGTERM as Ctrl-C, a file that cannot be written: one line, status 74
    with long_command():
        for t in targets:
            print(f"best response to {t} ({args.game}, {args.players} players, {args.steps} steps, seed {args.seed})",
                  flush=True)
            try:
                rows.append(best_response(args.game, t, Path(args.out) / t, args.players, args.steps, args.seed,
                                          args.evaluations, args.eval_games, args.eval_seed, options.get(t), engine,
                                          args.config, progress=args.progress))
            except KeyboardInterrupt:
                done = f"; the {len(rows)} finished targets are in {Path(args.out) / 'exploitability.json'}" if rows else ""
                print(f"error: interrupted ({signal_name()}) during the best response to {t} (its run folder "
                      f"{Path(args.out) / t} keeps what was saved){done}", file=sys.stderr)
                return interrupted_status()
            paths = save_outputs(args.out, rows)   # after each target: a long run keeps what it has
    print(exploitability_table(rows))
    print("wrote " + ", ".join(str(p) for p in paths))
    return 0


if __name__ == "__main__":
    sys.exit(main())
