"""Evaluation of a policy against the baseline bots with the tournament harness.

For each table size ``n`` and each baseline ``b``, :func:`evaluate_policy` plays
``hod.evaluation.tournament.run_tournament(game, [policy, b, ..., b], games)`` (duplicate deals,
seats rotated, the policy always plays with its action mask: bots receive the observation dict
and a policy bot masks its logits itself). One evaluation row per (n, b):

=================  ==================================================================
key                value
=================  ==================================================================
``steps``          learner steps when evaluated
``baseline``       baseline bot name
``num_players``    table size n (the policy in one seat, n-1 copies of the baseline)
``games``          games played (a multiple of n)
``win_rate``       policy's win rate (ties shared), ``par`` = 1/n
``win_ci``         95% Wilson interval ``[low, high]``
``points``         policy's mean final points
``baseline_points`` mean points of each baseline slot (list, n-1 entries)
``elapsed_s``      time the evaluation took
``luck``           only with ``estimator`` corrected / both: the luck-corrected and fitted
                   win rate and points, their 95% t intervals, the variance ratios
=================  ==================================================================

Command line (a policy file or a registered bot against chosen baselines, table sizes and games)::

    python -m hod.training.evaluate agents/opponents/tapeo_ppo.onnx --baselines random expert \\
        --players 2 4 --games 400 --out results/tapeo_ppo
    python -m hod.training.evaluate runs/tapeo_s0/checkpoints/final.zip      # a training checkpoint (torch)
    python -m hod.training.evaluate expert --game robada --baselines greedy  # a registered bot

``POLICY`` is an ONNX export (``.onnx``, :class:`hod.agents.onnx_policy.OnnxPolicy`, with its card
beside it), a training checkpoint (``.zip``, :class:`hod.training.ppo_bot.PPOBot`, needs torch) or
a registered bot name (then ``--game`` is required). The game of a file is its model card's
(``--game``, if given, must agree). Defaults come from the ``[eval]`` section of the game's
training config (``baselines``, ``eval_players``, ``eval_games``, ``eval_seed``, ``eval_workers``)
and are checked by the same schema (:class:`hod.training.config.EvaluationConfig`). It prints the
table of :func:`format_rows` (``--estimator both``, the default for a game with a chance hook,
adds the luck-corrected table; ``plain`` prints the first alone); ``--out PREFIX`` also writes
``PREFIX.md`` / ``PREFIX.json`` (the table and the rows) and, through the tournament's own writers, ``PREFIX_<n>p_vs_<baseline>``
``.md`` / ``.json`` / ``.png`` for every tournament. Exit status 0, or 2 with a one-line
``error: ...`` (bad option, unusable file) before any game is played.
"""
from __future__ import annotations

import argparse
import functools
import math
import os
import sys
import time
from pathlib import Path
from typing import Callable, Optional, Sequence

from hod import agents
from hod.agents.base import Bot
from hod.agents.model_card import CheckpointError
from hod.core.atomic import atomic_write_many, json_bytes, json_safe
from hod.core.commands import EXIT_PARTIAL, interrupted_status, long_command
from hod.core.errors import ConfigError
from hod.core.games import game_names, get_game
from hod.evaluation.cli_options import parse_env_kwargs, parse_json_object
from hod.evaluation.luck import DEFAULT_SAMPLES, add_estimator_options, default_estimator
from hod.evaluation.tournament import (TournamentInterrupted, TournamentResult, WorkerDied, check_env_kwargs,
                                       run_tournament)
from hod.evaluation.workers import describe, effective_workers
from hod.evaluation import report as _report


def round_games(games: int, n: int) -> int:
    """``games`` rounded up to a positive multiple of ``n`` (the tournament's requirement)."""
    return max(n, int(math.ceil(games / n)) * n)


def run_evaluation(game: str, make_policy_bot: Callable[[], Bot], baselines: Sequence[str],
                   player_counts: Sequence[int], games: int, seed: int = 0, steps: int = 0,
                   workers: int = 1, env_kwargs: Optional[dict] = None, progress: bool = False,
                   label: str = "policy", baseline_options: Optional[dict[str, dict]] = None,
                   estimator: str = "plain", luck_samples: int = DEFAULT_SAMPLES,
                   ) -> list[tuple[dict, TournamentResult]]:
    """Like :func:`evaluate_policy`, but returns each row with its full tournament result.

    Args:
        progress: a tqdm progress bar per tournament on stderr, labelled
            ``"<n>p <label> vs <baseline>"``.
        label: the policy's name in the tournaments' reports.
        estimator: ``"plain"`` (default: the rows as before), ``"corrected"`` or ``"both"``:
            each row also gets ``"luck"``, the policy's luck-corrected and fitted win rate and
            points with their 95% t intervals over deal means and the variance ratios
            (:func:`hod.evaluation.tournament.run_tournament`'s ``estimator``, the game's cheap
            value, ``luck_samples`` outcomes dealt again per chance event).

    Raises:
        ConfigError: unknown baseline or game (from the tournament).
    """
    options = dict(baseline_options or {})   # entries of bots that are not baselines are unused
    rules = get_game(game).check_rule_options(env_kwargs or {})
    out = []
    for n in player_counts:
        for baseline in baselines:
            t0 = time.perf_counter()
            b = baseline if isinstance(baseline, str) else baseline[0]
            if not isinstance(baseline, str):   # (label, factory): a policy file (resolve_bot)
                opponent = tuple(baseline)
            elif options.get(b):   # built by a factory: given the table's rule options here (BotSpec)
                agents.make(game, b, seed=0, **rules, **options[b])   # bad options: ConfigError before any game
                opponent = (b, functools.partial(agents.make, game, b, **rules, **options[b]))
            else:
                opponent = b
            lineup = [(label, make_policy_bot)] + [opponent] * (n - 1)
            res = run_tournament(game, lineup, round_games(games, n), seed=seed, workers=workers,
                                 duplicate=True, env_kwargs=env_kwargs, progress=progress,
                                 progress_desc=f"{n}p {label} vs {b}",
                                 **({} if estimator == "plain" else {"estimator": estimator,
                                                                     "luck_samples": luck_samples}))
            me = res.bots[0]
            luck = {}
            if estimator != "plain":
                c, f = me.corrected, me.corrected["fitted"]
                luck = {"luck": {
                    "win_ci_t": list(c["plain_win_ci_t"]),
                    "corrected_win_rate": c["win_rate"], "corrected_win_ci": list(c["win_ci"]),
                    "fitted_win_rate": f["win_rate"], "fitted_win_ci": list(f["win_ci"]),
                    "corrected_points": c["points"], "fitted_points": f["points"],
                    "var_ratio": dict(c["var_ratio"]), "fitted_var_ratio": dict(f["var_ratio"]),
                    "value": res.luck["value"], "samples": res.luck["samples"]}}
            out.append(({
                "steps": int(steps),
                "baseline": b,
                **({"baseline_options": dict(options[b])} if options.get(b) else {}),
                "num_players": int(n),
                "games": int(res.num_games),
                "win_rate": float(me.win_rate),
                "win_ci": [float(me.win_ci[0]), float(me.win_ci[1])],
                "par": 1.0 / n,
                "points": float(me.points),
                "baseline_points": [float(s.points) for s in res.bots[1:]],
                "elapsed_s": round(time.perf_counter() - t0, 3),
                **luck,
            }, res))
    return out


def evaluate_policy(game: str, make_policy_bot: Callable[[], Bot], baselines: Sequence[str],
                    player_counts: Sequence[int], games: int, seed: int = 0, steps: int = 0,
                    workers: int = 1, env_kwargs: Optional[dict] = None, progress: bool = False,
                    baseline_options: Optional[dict[str, dict]] = None, estimator: str = "plain",
                    luck_samples: int = DEFAULT_SAMPLES) -> list[dict]:
    """Tournament of the policy against each baseline at each table size; returns the rows above.

    Args:
        game: game name.
        make_policy_bot: zero-argument factory of the policy's bot (deterministic, masked).
        baselines: registry names of the baseline bots, or ``(label, factory)`` pairs (a policy
            file, :func:`resolve_bot`; its rows' ``baseline`` is the label).
        player_counts: table sizes to evaluate.
        games: games per (size, baseline), rounded up to a multiple of the size.
        seed: tournament seed (the same seed plays the same deals at every evaluation).
        steps: learner steps to record in the rows.
        workers: tournament worker processes (the factory must then be picklable).
        env_kwargs: extra ``raw_env`` options of every game.
        progress: a tqdm progress bar per tournament on stderr.
        baseline_options: ``{baseline name: {option: value}}``, the options a baseline is built
            with (e.g. ``{"search": {"determinizations": 4}}``, a search bot at a small budget);
            such rows carry ``baseline_options``. Entries of bots that are not baselines are unused.
        estimator, luck_samples: as in :func:`run_evaluation` (default plain: the rows as before).

    Raises:
        ConfigError: unknown baseline or game (from the tournament), or options a baseline
            refuses (its legal options are named).
    """
    return [row for row, _ in run_evaluation(game, make_policy_bot, baselines, player_counts, games, seed=seed,
                                             steps=steps, workers=workers, env_kwargs=env_kwargs,
                                             progress=progress, baseline_options=baseline_options,
                                             estimator=estimator, luck_samples=luck_samples)]


def format_rows(rows: Sequence[dict]) -> str:
    """A small Markdown table of evaluation rows."""
    lines = ["| steps | players | baseline | games | win rate | 95% CI | par | points | baseline points |",
             "|---:|---:|---|---:|---:|---|---:|---:|---:|"]
    for r in rows:
        bp = max(r["baseline_points"]) if r["baseline_points"] else float("nan")
        lines.append(
            f"| {r['steps']} | {r['num_players']} | {r['baseline']} | {r['games']} | {r['win_rate']:.3f} | "
            f"[{r['win_ci'][0]:.3f}, {r['win_ci'][1]:.3f}] | {r['par']:.3f} | {r['points']:.2f} | {bp:.2f} |"
        )
    lucky = [r for r in rows if "luck" in r]
    if lucky:   # corrected rows: a second table (the first is as before)
        lines += ["", "Luck-corrected (95% t intervals over deal means; var ratio: corrected or fitted / plain):", "",
                  "| players | baseline | win rate | 95% CI (t) | corrected | 95% CI | fitted | 95% CI "
                  "| var ratio win (corr. / fitted) |",
                  "|---:|---|---:|---|---:|---|---:|---|---|"]
        for r in lucky:
            k = r["luck"]
            lines.append(
                f"| {r['num_players']} | {r['baseline']} | {r['win_rate']:.3f} | [{k['win_ci_t'][0]:.3f}, "
                f"{k['win_ci_t'][1]:.3f}] | {k['corrected_win_rate']:.3f} | [{k['corrected_win_ci'][0]:.3f}, "
                f"{k['corrected_win_ci'][1]:.3f}] | {k['fitted_win_rate']:.3f} | [{k['fitted_win_ci'][0]:.3f}, "
                f"{k['fitted_win_ci'][1]:.3f}] | {_report._num(k['var_ratio']['win_rate'], 3)} / "
                f"{_report._num(k['fitted_var_ratio']['win_rate'], 3)} |")   # n/a where the plain rates do not vary
    return "\n".join(lines)


# ---- command line -------------------------------------------------------------------------------
#: how the command line calls the schema's evaluation keys (in its error messages)
FLAG_NAMES = {"baselines": "--baselines", "eval_players": "--players", "eval_games": "--games",
              "eval_seed": "--seed", "eval_workers": "--workers"}
POLICY_FORMS = "an ONNX export (.onnx), a training checkpoint (.zip) or a registered bot name"


def is_policy_file(spec: str) -> bool:
    """Whether a command-line bot ``spec`` names a file (a ``.onnx`` export, a ``.zip``
    checkpoint, or anything with a folder or a suffix) rather than a registered bot name (which
    has neither)."""
    return Path(spec).suffix != "" or "/" in spec or os.sep in spec


def resolve_bot(spec: str, game: str, num_players: int, rules: Optional[dict] = None,
                options: Optional[dict] = None):
    """A lineup entry of :func:`hod.evaluation.tournament.run_tournament` for a command-line bot:
    a registered name stays a name (built by the tournament with the table's rules) unless it has
    ``options``; a file (:func:`is_policy_file`) becomes ``(spec, factory)``, loaded and checked
    now by :func:`policy_factory` for ``num_players`` (its label is the path as given). The one
    resolver of ``python -m hod.benchmarks.tournament --lineup``, ``hod.benchmarks.ladder
    --bots`` and ``python -m hod.training.evaluate --baselines``.

    Returns:
        ``spec`` (a registry name without options) or a picklable ``(label, factory)`` pair.

    Raises:
        ConfigError: an unknown bot name (the registered ones are listed), options the bot
            refuses (checked by building it once); CheckpointError: a missing, damaged or
            mismatched file (other game, untrained table size: the legal ones are named).
    """
    rules, options = dict(rules or {}), dict(options or {})
    if is_policy_file(spec):
        _, _, factory, _ = policy_factory(spec, game, [num_players], rules, options)   # loaded with its options
        return spec, factory
    if not options:
        return spec
    factory = functools.partial(agents.make, game, spec, **options, **rules)
    factory()
    return spec, factory


def policy_factory(spec: str, game: Optional[str], player_counts: Optional[Sequence[int]] = None,
                   rules: Optional[dict] = None, options: Optional[dict] = None) -> tuple[str, str, Callable[[], Bot], dict]:
    """Resolve the ``POLICY`` argument: ``(game, label, factory, card)``.

    The file is loaded and checked once per table size of ``player_counts`` before any game
    (``card`` is ``{}`` for a registered bot). The factory is picklable (``functools.partial``).

    Args:
        spec: path of a ``.onnx`` export or ``.zip`` checkpoint, or a registered bot name.
        game: the game it must play (required for a bot name; for a file, checked against its card).
        player_counts: table sizes it must have been trained on (files only).
        rules: the games' rule options, given to the bot (``raw_env`` options the game declares).
        options: the bot's own options (files only: :class:`hod.agents.onnx_policy.OnnxPolicy`'s,
            e.g. ``{"verify": False}`` for an export without its model card, or
            :class:`hod.training.ppo_bot.PPOBot`'s), used from the first load on.

    Raises:
        ConfigError: an option the bot refuses, a bot name without ``game``, an unknown bot name (the registered ones are
            listed), a file of another type; CheckpointError: a missing, damaged or mismatched
            file (other game, untrained table size: the legal ones are named).
    """
    rules, options = dict(rules or {}), dict(options or {})
    path = Path(spec)
    suffix = path.suffix.lower()
    if suffix in (".onnx", ".zip"):
        if not path.is_file():
            raise CheckpointError(f"{spec}: no such file; legal POLICY: {POLICY_FORMS}")
        if suffix == ".onnx":
            from hod.agents.onnx_policy import OnnxPolicy as make
        else:
            from .ppo_bot import PPOBot as make
        bot = make(str(path), game=game, **rules, **options)
        game = bot.game
        checked = {k: v for k, v in options.items() if k != "num_players"}   # each size below is checked
        for n in player_counts or ():
            make(str(path), game=game, num_players=n, **rules, **checked)
        return game, path.stem, functools.partial(make, str(path), game=game, **rules, **options), dict(bot.model_card)
    if path.exists() or "/" in spec or suffix:
        raise ConfigError(f"POLICY {spec!r} is neither a .onnx nor a .zip file; legal POLICY: {POLICY_FORMS}")
    if game is None:
        raise ConfigError(f"POLICY {spec!r} is a bot name: give --game; legal games: {game_names()}")
    known = agents.names(game)
    if spec not in known:
        raise ConfigError(f"POLICY {spec!r}: no such file and no bot of that name for {game!r}; legal POLICY: "
                          f"{POLICY_FORMS}; registered bots: {known}")
    return game, spec, functools.partial(agents.make, game, spec, **rules, **options), {}


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``python -m hod.training.evaluate``."""
    p = argparse.ArgumentParser(
        prog="python -m hod.training.evaluate",
        description="Evaluate a policy (ONNX export, training checkpoint or registered bot) against baseline bots "
                    "with the tournament (duplicate deals, seats rotated): win rate with its 95% Wilson interval "
                    "per table size and baseline. Defaults: the [eval] keys of the game's training config.")
    p.add_argument("policy", metavar="POLICY", help=POLICY_FORMS)
    p.add_argument("--game", choices=game_names(), help="the game (required with a bot name; a file's card names it)")
    p.add_argument("--baselines", nargs="+", metavar="BOT",
                   help="baseline bots: registered names or policy files (.onnx exports, .zip checkpoints) "
                        "(default: the config's baselines)")
    p.add_argument("--players", nargs="+", type=int, metavar="N",
                   help="table sizes (default: the config's eval_players)")
    p.add_argument("--games", type=int, help="games per table size and baseline, rounded up to a multiple of "
                                              "the size (default: the config's eval_games)")
    p.add_argument("--baseline-options", metavar="JSON",
                   help='options of baselines as a JSON object {name: {option: value}}, e.g. '
                        '\'{"search": {"determinizations": 4}}\' (default: the config\'s baseline_options)')
    p.add_argument("--seed", type=int, help="tournament seed (default: the config's eval_seed)")
    p.add_argument("--workers", type=int, help="worker processes (default: the config's eval_workers)")
    p.add_argument("--env-kwargs", default="{}", metavar="JSON",
                   help='extra raw_env options (rule options included) as a JSON object, e.g. \'{"closing_ace": false}\'')
    p.add_argument("--out", metavar="PREFIX",
                   help="write PREFIX.md, PREFIX.json and PREFIX_<n>p_vs_<baseline>.md/.json/.png")
    add_estimator_options(p)
    p.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bars")
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of ``python -m hod.training.evaluate``; returns the exit status (0, or 2 with a
    one-line ``error: ...`` on stderr before any game is played; 1 when a worker process died
    and 130 after Ctrl-C (143 after SIGTERM), with one ``error: ...`` line and nothing written; 74 when a file cannot
    be written, :func:`hod.core.commands.long_command`).

    Raises:
        SystemExit: argparse errors (status 2, usage printed).
    """
    from . import config as config_mod

    args = build_parser().parse_args(argv)
    files = [b for b in args.baselines or () if is_policy_file(b)]
    names = [b for b in args.baselines or () if not is_policy_file(b)]
    try:
        env_kwargs = parse_env_kwargs(args.env_kwargs, '{"closing_ace": false}')
        # the schema checks the names; files are loaded and checked below, once the table sizes are known
        given = {"baselines": names or None, "eval_players": args.players, "eval_games": args.games,
                 "eval_seed": args.seed, "eval_workers": args.workers,
                 "baseline_options": None if args.baseline_options is None else parse_json_object(
                     args.baseline_options, "--baseline-options", '{"search": {"determinizations": 4}}')}
        # the players first (a file is checked for each table size), so validate them once the game is known
        game, label, factory, card = policy_factory(args.policy, args.game, None)
        defaults = config_mod.flatten(config_mod.load_config(game))
        values = {k: (v if v is not None else defaults.get(k, {})) for k, v in given.items()}
        settings = config_mod.validate_evaluation(game, values, FLAG_NAMES)
        rules = get_game(game).check_rule_options(env_kwargs)
        for n in dict.fromkeys(settings.eval_players):   # as each tournament will, before any game
            check_env_kwargs(game, env_kwargs, n)
        game, label, factory, card = policy_factory(args.policy, game, settings.eval_players, rules)
        if args.baselines:   # in the order given: names as they are, files as (path, factory)
            resolved = {b: policy_factory(b, game, settings.eval_players, rules)[2] for b in files}
            settings.baselines = [(b, resolved[b]) if b in resolved else b for b in args.baselines]
        if args.out:
            config_mod.check_out_dir(Path(args.out).parent)
    except (ConfigError, CheckpointError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    with long_command():   # a file that cannot be written: one line, status 74
        return _evaluate(args, game, label, factory, card, settings, env_kwargs)


def _evaluate(args, game: str, label: str, factory, card: dict, settings, env_kwargs: dict) -> int:
    """The work of :func:`main` once every option is checked; returns the exit status (0; after
    a stop, :data:`~hod.core.commands.EXIT_PARTIAL` or 130 with one ``error: ...`` line)."""
    steps = int((card.get("training") or {}).get("steps", 0))
    shown = [b if isinstance(b, str) else b[0] for b in settings.baselines]
    print(f"{label} ({game}) vs {shown} at {settings.eval_players} players, "
          f"{settings.eval_games} games each, seed {settings.eval_seed}", flush=True)
    if settings.eval_workers > 1:
        jobs = max(round_games(settings.eval_games, n) for n in settings.eval_players)
        print(f"playing with {describe(settings.eval_workers, effective_workers(settings.eval_workers, jobs), jobs)}",
              file=sys.stderr)
    try:
        pairs = run_evaluation(game, factory, settings.baselines, settings.eval_players, settings.eval_games,
                               seed=settings.eval_seed, steps=steps, workers=settings.eval_workers,
                               env_kwargs=env_kwargs, progress=args.progress, label=label,
                               baseline_options=settings.baseline_options,
                               estimator=default_estimator(game, args.estimator), luck_samples=args.luck_samples)
    except (WorkerDied, TournamentInterrupted) as e:
        print(f"error: {e}; no evaluation written", file=sys.stderr)
        return EXIT_PARTIAL if isinstance(e, WorkerDied) else interrupted_status()
    except (ConfigError, CheckpointError) as e:   # main checked the options; what a tournament still refuses
        print(f"error: {e}; no evaluation written", file=sys.stderr)
        return 2
    rows = [row for row, _ in pairs]
    table = format_rows(rows)
    print(table)
    if args.out:
        prefix = args.out
        written = [f"{prefix}.md", f"{prefix}.json"]
        files = []                # every file rendered first, then all written together (or none)
        for row, res in pairs:
            opponent = Path(row["baseline"]).stem if is_policy_file(row["baseline"]) else row["baseline"]
            base = f"{prefix}_{row['num_players']}p_vs_{opponent}"   # a file's stem: no folder in the name
            files += [(base + suffix, data) for suffix, data in res.output_files().items()]
            written.append(base + ".{md,json,png}")
        files += [(f"{prefix}.md", f"# {label} ({game}) against baselines\n\n{table}\n".encode("utf-8")),
                  (f"{prefix}.json", json_bytes(json_safe({"policy": args.policy, "game": game, "rows": rows})))]
        atomic_write_many(files)   # NaN: null in the JSON; the missing folders are made
        print("\nwrote " + ", ".join(written))
    return 0


if __name__ == "__main__":
    sys.exit(main())
