"""Command line of the tournament harness (:mod:`hod.evaluation.tournament`).

``python -m hod.benchmarks.tournament --game tapeo --lineup expert greedy greedy greedy --games 2000
--seed 0 --workers 2 --out results/tapeo_4p``; ``--help`` lists every option. See docs/tournament.md.
"""
from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from hod import agents
from hod.core.commands import EXIT_PARTIAL, interrupted_status, long_command
from hod.agents.model_card import CheckpointError
from hod.core.errors import ConfigError
from hod.core.games import get_game
from hod.agents.rules import table_rules
from hod.evaluation.cli_options import (GAMES_OPTION, SEED_OPTION, add_seating_option, parse_env_kwargs,
                                        parse_json_object, prepare_out_prefix, save_outputs)
from hod.evaluation.schedule import MAX_GAMES
from hod.evaluation.luck import (DEFAULT_SAMPLES, ESTIMATORS, FEATURES, VALUE_NAMES, chance_hook, decisions_option,
                                 samples_option)
from hod.evaluation.luck_value import load_value
from hod.evaluation.play import check_game
from hod.evaluation.tournament import TournamentInterrupted, WorkerDied, run_tournament
from hod.evaluation.workers import MAX_WORKERS, describe, effective_workers, workers_option
from hod.training.evaluate import resolve_bot


# ---------------------------------------------------------------- command line

_BOT_OPTIONS_EXAMPLE = '{"search": {"determinizations": 64}}'


def with_bot_options(game: str, lineup: Sequence[str], bot_options: dict, env_kwargs: dict) -> list:
    """The lineup with ``--bot-options`` applied and policy files loaded
    (:func:`hod.training.evaluate.resolve_bot`): each seat whose name has options becomes a
    ``(name, factory)`` entry (:func:`hod.evaluation.tournament.run_tournament`) building
    ``agents.make(game, name, **options, **table rule options)``, so it keeps its name and the
    table's rules; a seat given as a file (an ONNX export ``.onnx`` or a training checkpoint
    ``.zip``) becomes ``(path, factory)``, checked now for the table size; the other seats stay
    registry names.

    Args:
        game: the game name. lineup: registry names or policy files, one per seat.
        bot_options: ``{name or path: {option: value}}``. env_kwargs: the table's ``raw_env`` options.

    Returns:
        list of lineup entries, one per seat.

    Raises:
        ConfigError: a name not in the lineup, options that are not a JSON object, a rule option
            or ``rules`` (those go in ``env_kwargs``), ``game`` or ``name``, ``seed`` (every bot is
            seeded from the tournament's seed), a ``num_players`` other than the lineup's size, or
            an option the bot refuses (checked here, before any game; the message names the legal
            values), an unknown bot name; CheckpointError: a missing, damaged or mismatched policy
            file.
    """
    for name, options in bot_options.items():
        if name not in lineup:
            raise ConfigError(f"--bot-options names {name!r}, which is not in the lineup; legal: {sorted(set(lineup))}")
        if not isinstance(options, dict):
            raise ConfigError(f"--bot-options[{name!r}] must be a JSON object of options, got {options!r}; legal: "
                              f"e.g. '{_BOT_OPTIONS_EXAMPLE}'")
        reserved = sorted(set(options) & {"game", "name"})
        if reserved:
            raise ConfigError(f"--bot-options[{name!r}] sets {reserved}: the game is --game and the bot its lineup "
                              "name; legal: the bot's own options")
        if "seed" in options:
            raise ConfigError(f"--bot-options[{name!r}] sets seed: the tournament seeds every bot from --seed, "
                              "afresh at each game; legal: the bot's other options")
        if "num_players" in options and options["num_players"] != len(lineup):
            raise ConfigError(f"--bot-options[{name!r}] sets num_players {options['num_players']!r}, and the lineup "
                              f"seats {len(lineup)}; legal: {len(lineup)}, or leave it out (the lineup fixes it)")
        ruled = sorted(set(options) & ({o.name for o in get_game(game).rule_options} | {"rules"}))
        if ruled:
            raise ConfigError(f"--bot-options[{name!r}] sets rule options {ruled}: the table's rules go in --env-kwargs "
                              "and every bot is told them")
    rules = table_rules(game, env_kwargs)
    resolved = {name: resolve_bot(name, game, len(lineup), rules, bot_options.get(name))
                for name in dict.fromkeys(lineup)}   # each file loaded once, whatever its seats
    return [resolved[name] for name in lineup]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m hod.benchmarks.tournament",
        description="Play seeded games between bots (every seat order, duplicate deals) and report "
        "win rates (Wilson 95%), mean points and margins (t 95%), OpenSkill ratings.",
    )
    p.add_argument("--game", required=True, help="tapeo or robada")
    p.add_argument("--lineup", nargs="+", required=False, metavar="BOT",
                   help="one bot per seat (the player count is their number): registry names, ONNX exports "
                        "(.onnx, with their card beside them) or training checkpoints (.zip)")
    p.add_argument("--games", type=GAMES_OPTION, default=1000,
                   help=f"games in total, 1..{MAX_GAMES:,}, a multiple of the number of seat orders (default 1000)")
    p.add_argument("--seed", type=SEED_OPTION, default=0, help="tournament seed, 0..2**64-1 (default 0)")
    p.add_argument("--workers", type=workers_option, default=1,
                   help=f"worker processes, 1..{MAX_WORKERS} (default 1); at most one per game and per usable CPU run")
    p.add_argument("--no-duplicate", dest="duplicate", action="store_false",
                   help="one game per deal instead of replaying each deal in every seat rotation")
    add_seating_option(p, "seat orders: cyclic (the n rotations), permutations (all n!, which also "
                       "cancel who sits next to whom), auto (default: permutations up to 4 players when "
                       "--games is a multiple of n!, else cyclic)")
    p.add_argument("--env-kwargs", default="{}", metavar="JSON",
                   help='extra raw_env options as a JSON object, e.g. \'{"reward_scheme": "points"}\'')
    p.add_argument("--bot-options", default="{}", metavar="JSON",
                   help='options of lineup bots as a JSON object {name: {option: value}}, e.g. '
                   '\'{"search": {"determinizations": 64}}\' (every seat of that name gets them; not seed: every '
                   'bot is seeded from --seed)')
    p.add_argument("--estimator", choices=ESTIMATORS, default=None,
                   help="plain: the plain estimates only (the report as before); corrected / both: the "
                        "luck-corrected win rate and margin (chance events dealt again with the game's chance "
                        "hook, its cheap value function) with their intervals and the variance ratio, instead of "
                        "/ beside the plain ones (default both; plain for a game that declares no chance hook; "
                        "docs/tournament.md)")
    p.add_argument("--luck-samples", type=samples_option, default=DEFAULT_SAMPLES, metavar="K",
                   help=f"outcomes dealt again per chance event for the correction, 1..4096 (default {DEFAULT_SAMPLES})")
    p.add_argument("--luck-features", choices=FEATURES, default="none",
                   help="none (default) or state: also track the luck of the game's whole global state, the extra "
                        "controls of the fitted estimate (a linear value of the state fitted on the run's own games, "
                        "cross-fitted; docs/tournament.md)")
    p.add_argument("--value", metavar="NPZ|playout",
                   help="value function of the correction: a value network file (PREFIX.npz with its card "
                        "PREFIX.json, python -m hod.evaluation.luck_value) fitted for this game and table size, or "
                        "playout: playouts of copies of the lineup's own bots (K of them from each position; "
                        "Tapeo and Ronda Robada); default: the game's cheap value (its chance hook's)")
    p.add_argument("--luck-surrogates", metavar="JSON",
                   help="with --value playout: a JSON object of lineup bot names to ONNX exports that play those "
                        "bots inside the playouts, e.g. '{\"expert\": \"runs/expert_clone/tapeo_ppo.onnx\"}' "
                        "(faster than the Python bot; an approximation of it, no bias)")
    p.add_argument("--luck-decisions", type=decisions_option, default=0, metavar="M",
                   help="experimental: also correct the decisions of the bots whose play is random (random and "
                        "the search bots): each "
                        "decision drawn M more times from other generators, AIVAT's action terms; 0..64 (default 0: "
                        "chance events only; docs/tournament.md). Measured: with --value playout it made the "
                        "search rows' intervals wider, not narrower (docs/results.md); it helps where the playouts "
                        "follow the bot")
    p.add_argument("--luck-decision-samples", type=samples_option, default=None, metavar="P",
                   help="with --value playout and --luck-decisions: playouts of each action's position for the "
                        "decision terms, 1..4096 (default: K, --luck-samples)")
    p.add_argument("--out", metavar="PREFIX", help="write PREFIX.md, PREFIX.json and PREFIX.png")
    p.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar")
    p.add_argument("--list-bots", action="store_true", help="print the registered bots and exit")
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Command-line entry point; returns the exit status: 0; 2 on bad input (one ``error: ...``
    line); after a stop (a worker process died: 1, :data:`hod.core.commands.EXIT_PARTIAL`; Ctrl-C:
    130, SIGTERM: 143) the games that finished are reported and written, marked partial, and one ``error: ...``
    line says how many; 74 when a file cannot be written (:func:`hod.core.commands.long_command`).
    """
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        check_game(args.game)
        if args.list_bots:
            print(" ".join(agents.names(args.game)))
            return 0
        if not args.lineup:
            parser.error(f"--lineup is required: one bot per seat, from {agents.names(args.game)}")
        sizes = list(get_game(args.game).player_counts)
        if len(args.lineup) not in sizes:
            parser.error(f"--lineup names {len(args.lineup)} bot{'s' if len(args.lineup) != 1 else ''}: {args.game} is played by {sizes[0]} to {sizes[-1]} "
                         f"players, one bot per seat; legal numbers of bots: {sizes}")
        env_kwargs = parse_env_kwargs(args.env_kwargs)
        bot_options = parse_json_object(args.bot_options, "--bot-options", _BOT_OPTIONS_EXAMPLE)
        lineup = with_bot_options(args.game, args.lineup, bot_options, env_kwargs)
        if args.estimator is None:   # both where the game can correct its luck
            args.estimator = "both" if get_game(args.game).chance_hook else "plain"
        value = None
        if args.value:
            chance_hook(args.game)   # a game without chance events has no luck to correct: say so first
            if args.estimator == "plain":
                raise ConfigError("--value is the value function of the luck correction; legal: with --estimator "
                                  "corrected or both")
            if args.value not in VALUE_NAMES and not args.value.endswith(".npz"):
                raise ConfigError(f"--value {args.value!r}; legal: {', '.join(VALUE_NAMES)}, or a value network file "
                                  f"PREFIX.npz (with its card PREFIX.json; python -m hod.evaluation.luck_value)")
            value = args.value if args.value in VALUE_NAMES else load_value(args.value, args.game, len(args.lineup))
        surrogates = parse_json_object(args.luck_surrogates, "--luck-surrogates",
                                       '{"expert": "runs/expert_clone/tapeo_ppo.onnx"}') if args.luck_surrogates else None
        if args.luck_decisions and args.estimator == "plain":
            raise ConfigError("--luck-decisions is part of the luck correction; legal: with --estimator corrected or "
                              "both")
        if args.luck_features != "none" and args.estimator == "plain":
            raise ConfigError("--luck-features is part of the luck correction; legal: with --estimator corrected or "
                              "both")
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
                print(f"playing with {describe(args.workers, running, args.games)}", file=sys.stderr)
            res = run_tournament(
                args.game, lineup, args.games, seed=args.seed, workers=args.workers,
                duplicate=args.duplicate, progress=args.progress, env_kwargs=env_kwargs,
                seating=args.seating, estimator=args.estimator, luck_samples=args.luck_samples,
                value=value, luck_features=args.luck_features, luck_surrogates=surrogates,
                luck_decisions=args.luck_decisions, luck_decision_samples=args.luck_decision_samples or 0,
            )
        except (ConfigError, CheckpointError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        except (WorkerDied, TournamentInterrupted) as e:
            stopped, res = e, e.result
            status = EXIT_PARTIAL if isinstance(e, WorkerDied) else interrupted_status()
        if res is not None:
            res.bot_options = bot_options
            kept = save_outputs(res, args.out)
        if stopped is not None:
            print(f"error: {stopped}; {kept if res is not None else 'nothing to keep'}", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
