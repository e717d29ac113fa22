"""Command line of the strength ladder (:mod:`hod.evaluation.ladder`).

``python -m hod.benchmarks.ladder --game tapeo --players 2 --games 40 --workers 2 --out docs/ladder_tapeo_2p``
plays every registered bot of the game against every other (search bots at two budgets), prints
the OpenSkill ratings with their mu +- 2 sigma intervals, the easy / medium / hard labels and the
head-to-head matrix, and writes ``PREFIX.md``, ``PREFIX.json`` and ``PREFIX.png``;
``--update-strength`` also records the ratings and labels as the table size's entries in the shipped
``agents/strength.json`` (the other sizes kept; read by ``hod.agents.strength``, shown by the play
commands; a run whose ``--bots``, or a ``--record`` whose saved pool, leaves out a bot labelled
at that size is refused unless ``--replace-pool``, since that bot would lose its entry);
``--record PREFIX.json`` records a finished run's saved result instead of playing. See
docs/tournament.md, "Strength ladder".
"""
from __future__ import annotations

import argparse
import shlex
import sys
from typing import Optional, Sequence

from hod.agents.strength import STRENGTH_FILE, dropped_labels, load_strengths, record_strengths
from hod.core.commands import EXIT_PARTIAL, interrupted_status, long_command
from hod.agents.model_card import CheckpointError
from hod.core.errors import ConfigError
from hod.evaluation.ladder import LadderEntry, ladder_entries, load_ladder_result, run_ladder
from hod.evaluation.tournament import TournamentInterrupted, WorkerDied
from hod.evaluation.cli_options import (GAMES_OPTION, SEED_OPTION, add_seating_option, int_option, players_option,
                                       prepare_out_prefix, save_outputs)
from hod.evaluation.ladder import MAX_TABLES
from hod.evaluation.luck import add_estimator_options, default_estimator
from hod.evaluation.schedule import MAX_GAMES
from hod.evaluation.play import check_game
from hod.evaluation.workers import MAX_WORKERS, describe, effective_workers, workers_option
from hod.training.evaluate import is_policy_file, resolve_bot


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m hod.benchmarks.ladder",
        description="League of every registered bot of a game (search bots at two budgets): OpenSkill ratings "
        "(mu +- 2 sigma), easy/medium/hard labels, head-to-head matrix.",
    )
    p.add_argument("--game", required=True, help="tapeo or robada")
    p.add_argument("--players", type=players_option, default=2,
                   help="table size, one --game allows (default 2: every pair)")
    p.add_argument("--games", type=GAMES_OPTION, default=40,
                   help="games per table, a multiple of the number of seat orders (default 40); "
                   f"tables x games at most {MAX_GAMES:,}")
    p.add_argument("--tables", type=int_option(1, MAX_TABLES), default=None,
                   help=f"sampled tables when --players > 2, 1..{MAX_TABLES} (default: twice the number of bots)")
    p.add_argument("--bots", nargs="+", metavar="BOT",
                   help="ladder labels to play, or policy files (.onnx exports, .zip checkpoints) to rate with them "
                        "(default: the whole pool)")
    p.add_argument("--seed", type=SEED_OPTION, default=0, help="seed of every table, 0..2**64-1 (default 0)")
    p.add_argument("--workers", type=workers_option, default=1,
                   help=f"worker processes per table, 1..{MAX_WORKERS} (default 1); at most one per game and per "
                   "usable CPU run")
    add_seating_option(p, "seat orders of every table, as in the tournament (default auto)")
    add_estimator_options(p)
    p.add_argument("--out", metavar="PREFIX", help="write PREFIX.md, PREFIX.json and PREFIX.png")
    p.add_argument("--update-strength", action="store_true",
                   help=f"record the ratings and labels in {STRENGTH_FILE.name} as the entries of this table size "
                        "(replaces that size's entries, keeps the other sizes)")
    p.add_argument("--replace-pool", action="store_true",
                   help="with --update-strength and --bots, or --record: allow the bots labelled at this size but "
                        "left out of the pool to lose their entries (labels are relative to one run's pool)")
    p.add_argument("--record", metavar="RESULT.json",
                   help=f"record a finished ladder's saved PREFIX.json in {STRENGTH_FILE.name} (its labels recomputed "
                        "by today's rule; with --out, rewrite PREFIX.md/.json/.png too) and exit, playing nothing")
    p.add_argument("--list-bots", action="store_true", help="print the ladder's pool for --game and --players and exit")
    p.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bars")
    return p


def _check_kept(args, labels: Sequence[str], source: str) -> None:
    """Refuse (ConfigError) to record a pool that leaves out bots labelled at this table size,
    unless ``--replace-pool``: recording replaces the size's entries, so they would lose theirs."""
    if args.replace_pool:
        return
    dropped = dropped_labels(load_strengths(STRENGTH_FILE).get(args.game, {}), args.players, labels)
    if dropped:
        raise ConfigError(f"recording replaces the {args.players}-player entries of {args.game!r}, and {source} "
                          f"leaves out {dropped}, which would lose theirs; legal: add them to the pool, or "
                          f"--replace-pool")


def _record(args) -> int:
    """``--record``: the saved result's entries into the strength file (ConfigError when it is of
    another game or table size than ``--game`` / ``--players``)."""
    res = load_ladder_result(args.record)
    if (res.game, res.players) != (args.game, args.players):
        raise ConfigError(f"{args.record} is the {res.players}-player ladder of {res.game!r}; legal: "
                          f"--game {res.game} --players {res.players}")
    _check_kept(args, list(res.strength_entries()), args.record)
    if args.out:
        prepare_out_prefix(args.out)
    save_outputs(res, args.out)
    # checked again under the file's lock: another ladder may have labelled a bot since
    record_strengths(res.game, res.players, res.strength_entries(), STRENGTH_FILE, keep_labelled=not args.replace_pool)
    print(f"updated {STRENGTH_FILE} ({res.game}, {res.players} players) from {args.record}")
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Command-line entry point; returns the exit status: 0; 2 on bad input (one ``error: ...``
    line); after a stop (a worker process died: 1, :data:`hod.core.commands.EXIT_PARTIAL`; Ctrl-C:
    130, SIGTERM: 143) the tables that finished are rated, reported and written, marked partial
    (``--update-strength`` is then skipped), and one ``error: ...`` line says how many; 74 when a
    file cannot be written (:func:`hod.core.commands.long_command`)."""
    args = _parser().parse_args(argv)
    shown = list(sys.argv[1:] if argv is None else argv)
    try:
        check_game(args.game)
        pool = ladder_entries(args.game, args.players)
        if args.list_bots:
            print(" ".join(e.label for e in pool))
            return 0
        if args.tables is not None and args.players == 2:
            raise ConfigError(f"--tables {args.tables}: with 2 players the ladder plays every pair; legal: leave out "
                              "--tables (it sets the sampled tables when --players > 2)")
        if args.replace_pool and not (args.record or (args.update_strength and args.bots)):
            raise ConfigError("--replace-pool applies when a pool is recorded; legal: with --update-strength and "
                              "--bots, or with --record")
        bots = args.bots
        if bots and args.update_strength and any(is_policy_file(b) for b in bots):
            raise ConfigError(f"--update-strength records registered bots only, and --bots names files "
                              f"{[b for b in bots if is_policy_file(b)]}; legal: leave one of them out")
        if args.update_strength or args.record:
            load_strengths(STRENGTH_FILE)   # a bad file fails now, before playing
            if args.update_strength and args.bots:
                _check_kept(args, args.bots, "--bots")
        if args.record:
            return _record(args)
        if bots and any(is_policy_file(b) for b in bots):
            bots = [LadderEntry(b, b, {}, resolve_bot(b, args.game, args.players)[1]) if is_policy_file(b) else b
                    for b in bots]
        if args.out:  # fail before playing, not after
            prepare_out_prefix(args.out)
    except (ConfigError, CheckpointError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    with long_command():
        status, stopped = 0, None
        try:
            if args.workers > 1:
                running = effective_workers(args.workers, args.games)
                print(f"playing each table with {describe(args.workers, running, args.games)}", file=sys.stderr)
            res = run_ladder(args.game, args.players, args.games, seed=args.seed, workers=args.workers,
                             bots=bots, tables=args.tables, seating=args.seating, progress=args.progress,
                             estimator=default_estimator(args.game, args.estimator), luck_samples=args.luck_samples)
        except ConfigError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        except (WorkerDied, TournamentInterrupted) as e:
            stopped, res = e, e.result
            status = EXIT_PARTIAL if isinstance(e, WorkerDied) else interrupted_status()
        if res is not None:
            res.command = "python -m hod.benchmarks.ladder " + shlex.join(shown)
            kept = save_outputs(res, args.out)
            if args.update_strength and not res.partial:
                try:   # the pool checked again under the file's lock (another ladder may have labelled a bot since)
                    record_strengths(args.game, args.players, res.strength_entries(), STRENGTH_FILE,
                                     keep_labelled=bool(args.bots) and not args.replace_pool)
                    print(f"updated {STRENGTH_FILE} ({args.game}, {args.players} players)")
                except ConfigError as e:
                    where = (f"the result is in {args.out}.json (record it later with --record {args.out}.json)"
                             if args.out else "the result is reported above")
                    print(f"error: {e}; {where}", file=sys.stderr)
                    status = 2
        if stopped is not None:
            skipped = f"; {STRENGTH_FILE.name} not updated" if args.update_strength else ""
            print(f"error: {stopped}; {kept if res is not None else 'nothing to keep'}{skipped}", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
