"""Tournament harness: play N seeded games between a lineup of bots and report publishable numbers.

Library::

    from hod.evaluation.tournament import run_tournament
    res = run_tournament("tapeo", ["expert", "greedy", "greedy", "greedy"], num_games=2000,
                         seed=0, workers=2, progress=True)
    print(res.to_markdown()); res.save_json("t.json"); res.save_png("t.png")

Command line::

    python -m hod.benchmarks.tournament --game tapeo --lineup expert greedy greedy greedy \\
        --games 2000 --seed 0 --workers 2 --out results/tapeo_4p

Scheme (details in docs/tournament.md and :mod:`hod.evaluation.schedule`): the lineup is seated
in every seat order of a scheme (``seating``: the n cyclic rotations, or all n! permutations,
which also cancel who sits next to whom; ``"auto"``, the default, takes every permutation up to 4
players when ``num_games`` is a multiple of n!); every deal is replayed in every seat order
(``duplicate=True``), or each game has its own deal and the order advances game by game
(``duplicate=False``). ``num_games`` counts games and must be a multiple of the number of seat
orders. Games are played through the raw AEC environment with
``illegal_action="raise"``; every seed derives from ``seed`` (numpy ``SeedSequence``), so the same
call gives the same result whatever ``workers`` is.

Statistics (:mod:`hod.evaluation.stats`): win rate with ties shared and its 95% Wilson interval
(statsmodels), mean points and mean margin with 95% t intervals over deal means (scipy), OpenSkill
Plackett-Luce ratings, and a head-to-head table.
"""
from __future__ import annotations

import math
import pickle
import sys
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict, dataclass, field, replace
from typing import Callable, Optional, Sequence, Tuple, Union

import numpy as np

from hod import agents
from hod.agents.base import Bot
from hod.core.atomic import json_bytes, json_safe
from hod.core.commands import CommandStopped, running_signal, signal_name
from hod.core.errors import ConfigError, UnknownOptionError
from hod.core.games import get_game

from . import report as _report
from . import stats as _stats
from . import luck as _luck
from .play import (
    BotSpec,
    GameOutcome,
    TournamentTable,
    WorkerFailure,
    check_game,
    check_is_bot,
    init_worker,
    make_env,
    play_chunk,
)
from .schedule import ScheduledGame, check_seed, make_schedule, resolve_seating
from .workers import check_workers, effective_workers, stop_workers

#: One lineup slot: a registry name, a bot instance, or a (label, zero-argument factory) pair.
LineupEntry = Union[str, Bot, Tuple[str, Callable[[], Bot]]]

__all__ = ["BotStats", "TournamentResult", "TournamentStopped", "WorkerDied", "TournamentInterrupted",
           "run_tournament", "summarize"]


@dataclass
class BotStats:
    """Statistics of one lineup slot, or of a group of same-named slots (an aggregate row).

    Attributes:
        label: unique label ("greedy#2") or, for an aggregate, "greedy (all 3)".
        slots: lineup slots it covers (one slot, or the group's slots).
        games: number of games G played.
        wins: sum of win shares (a win shared by k players counts 1/k); for an aggregate, the
            sum over games of the group's mean win share.
        win_rate: wins / G.
        win_ci: 95% Wilson interval of the win rate, (low, high).
        points: mean final points.
        points_ci: 95% t interval of the mean points (over deal means), (low, high).
        margin: mean margin (points minus the mean points of the other seats).
        margin_ci: 95% t interval of the mean margin (over deal means), (low, high).
        rating_mu, rating_sigma: OpenSkill Plackett-Luce rating after all games (None for
            aggregates); rating_ordinal = mu - 3 sigma.
        seat_games: games played at each seat (list of n ints).
        corrected: the luck-corrected estimates (:func:`hod.evaluation.luck.luck_stats`: win
            rate, points and margin with 95% t intervals over deal means, the variance ratios
            and the luck's mean; its ``"fitted"``: the cross-fitted control-variate estimates,
            :func:`hod.evaluation.luck.fitted_stats`), None for a plain run.
    """

    label: str
    slots: list[int]
    games: int
    wins: float
    win_rate: float
    win_ci: tuple[float, float]
    points: float
    points_ci: tuple[float, float]
    margin: float
    margin_ci: tuple[float, float]
    rating_mu: Optional[float]
    rating_sigma: Optional[float]
    rating_ordinal: Optional[float]
    seat_games: list[int]
    corrected: Optional[dict] = None


@dataclass
class TournamentResult(_report.ResultFiles):
    """Everything a tournament measured. Deterministic given the arguments, except the timing
    fields (``elapsed_s``, ``games_per_s``).

    Attributes:
        game, num_players, num_games, seed, duplicate, env_kwargs: the run's arguments.
        num_deals: number of distinct deals; games_per_deal: the number of seat orders when
            duplicate, else 1.
        seating: the seat orders played, ``"cyclic"`` or ``"permutations"`` (``"auto"``
            resolved, :func:`hod.evaluation.schedule.resolve_seating`).
        labels: unique label of each lineup slot.
        bots: one :class:`BotStats` per slot, in lineup order.
        aggregates: one :class:`BotStats` per label used by several (but not all) slots.
        head_to_head: ``H[i][j]`` share of games slot i finished ahead of slot j (ties 1/2),
            None on the diagonal.
        seats: per seat, ``{"seat", "win_rate", "points"}`` over all games (the seat advantage
            the rotation cancels).
        games: per game, ``{"game", "deal", "env_seed", "seating", "bot_seeds", "points",
            "win_share", "steps"}`` (points and win_share by slot, seating[seat] = slot).
        workers, elapsed_s, games_per_s: how the run went: the worker processes that played
            (:func:`hod.evaluation.workers.effective_workers`: at most the games and the usable
            CPUs; 1 = this process), the playing time and the games per second.
        bot_options: options the lineup's bots were built with, ``{name: {option: value}}``, as
            the caller records them (the tournament command's ``--bot-options``; empty: every bot
            at its defaults, or built by a caller that did not say).
        partial: True when the run stopped before its last game (a worker process died, or
            Ctrl-C / SIGTERM: :class:`TournamentStopped`); every number is then over the
            ``num_games`` games that finished, of ``games_planned``, and the seat orders and
            deals are no longer balanced. stopped: why it stopped ("" for a whole run).
        games_planned: the games the run was asked for.
        estimator: ``"plain"``, ``"corrected"`` or ``"both"`` (:data:`hod.evaluation.luck.ESTIMATORS`);
            luck: for a corrected run, ``{"value", "samples", "features", "events_per_game"}``
            (the value function's name, the outcomes dealt again per chance event, the feature
            luck tracked, the mean number of events), else None. A plain run's dict and report
            have neither key (as before).
    """

    game: str
    num_players: int
    num_games: int
    num_deals: int
    games_per_deal: int
    seed: int
    duplicate: bool
    env_kwargs: dict
    labels: list[str]
    bots: list[BotStats]
    aggregates: list[BotStats]
    head_to_head: list[list[Optional[float]]]
    seats: list[dict]
    games: list[dict] = field(repr=False)
    seating: str = "cyclic"
    workers: int = 1
    elapsed_s: float = 0.0
    games_per_s: float = 0.0
    bot_options: dict = field(default_factory=dict)
    partial: bool = False
    stopped: str = ""
    games_planned: int = 0
    estimator: str = "plain"
    luck: Optional[dict] = None

    def to_dict(self, include_games: bool = True) -> dict:
        """JSON-ready dict (nan becomes None); ``include_games=False`` drops the per-game list."""
        d = asdict(self)
        if self.estimator == "plain":   # a plain run's keys, as before the luck correction
            for k in ("estimator", "luck"):
                d.pop(k)
            for row in d["bots"] + d["aggregates"]:
                row.pop("corrected")
        if not include_games:
            d.pop("games")
        return json_safe(d)

    def stats(self, label: str) -> BotStats:
        """The :class:`BotStats` row (slot or aggregate) with this label.

        Raises:
            KeyError: unknown label (the message lists them).
        """
        for b in self.bots + self.aggregates:
            if b.label == label:
                return b
        raise KeyError(f"no bot {label!r}; labels: {[b.label for b in self.bots + self.aggregates]}")

    def to_markdown(self, include_timing: bool = True) -> str:
        """The report as Markdown: the bots table, head-to-head, seats and (optionally) timing."""
        return _report.markdown(self, include_timing)

    def file_bytes(self, suffix: str) -> bytes:
        """The bytes of the report's file ``suffix`` (:class:`hod.evaluation.report.ResultFiles`):
        ``".md"`` :meth:`to_markdown`, ``".json"`` :meth:`to_dict` (with per-game records),
        ``".png"`` the win-rate chart (bars with 95% Wilson error bars)."""
        if suffix == ".md":
            return (self.to_markdown() + "\n").encode("utf-8")
        if suffix == ".json":
            return json_bytes(self.to_dict())
        return _report.png_bytes(self)



class TournamentStopped:
    """A tournament that stopped before its last game; ``result`` is the
    :class:`TournamentResult` of the games that finished (``partial=True``), None if none did;
    ``finished`` of ``planned`` games finished. (The ladder raises the same classes with its own
    partial :class:`~hod.evaluation.ladder.LadderResult`, counting tables.)
    Mixed into :class:`WorkerDied` and :class:`TournamentInterrupted`."""

    result: Optional[TournamentResult]
    finished: int
    planned: int


class WorkerDied(TournamentStopped, CommandStopped, RuntimeError):
    """A worker process died mid-run (killed, out of memory): the pool is broken. Carries the
    finished games (:class:`TournamentStopped`); a :class:`hod.core.commands.CommandStopped`, so
    a command that does not catch it ends in one line and status 1."""

    def __init__(self, message: str, result: Optional[TournamentResult], finished: int, planned: int):
        super().__init__(message)
        self.result, self.finished, self.planned = result, finished, planned


class TournamentInterrupted(TournamentStopped, KeyboardInterrupt):
    """Ctrl-C (or SIGTERM under :func:`hod.core.commands.long_command`) during a tournament; a
    ``KeyboardInterrupt``, so callers that stop on one still do. Carries the finished games
    (:class:`TournamentStopped`)."""

    def __init__(self, message: str, result: Optional[TournamentResult], finished: int, planned: int):
        super().__init__(message)
        self.result, self.finished, self.planned = result, finished, planned


# ---------------------------------------------------------------- lineup


def _resolve_lineup(game: str, lineup: Sequence[LineupEntry], workers: int):
    """Turn lineup entries into (labels, BotSpecs). See :func:`run_tournament` for the forms."""
    if isinstance(lineup, (str, bytes)) or not isinstance(lineup, Sequence):
        raise ConfigError(f"lineup must be a list of bots, got {lineup!r}; legal entries: registry names "
                          f"{agents.names(game)}, bot instances or (label, factory) pairs")
    bases: list[str] = []
    specs: list[BotSpec] = []
    seen_instances: set[int] = set()
    for slot, entry in enumerate(lineup):
        if isinstance(entry, str):
            known = agents.names(game)
            if entry not in known:
                hint = ("; a policy file goes in as a (label, factory) pair: "
                        "hod.training.evaluate.resolve_bot(path, game, num_players) makes one, as the "
                        "command line does") if entry.endswith((".onnx", ".zip")) else ""
                raise ConfigError(f"no bot {entry!r} for {game!r}; registered: {known}{hint}")
            bases.append(entry)
            specs.append(BotSpec(name=entry))
        elif isinstance(entry, (tuple, list)) and len(entry) == 2 and isinstance(entry[0], str):
            label, factory = entry
            if not callable(factory):
                raise ConfigError(f"lineup slot {slot}: factory of {label!r} is not callable; legal: a zero-argument "
                                  f"callable returning a bot")
            if workers > 1:
                try:
                    pickle.dumps(factory)
                except Exception as e:
                    raise ConfigError(
                        f"lineup slot {slot} ({label!r}): its factory cannot be sent to worker "
                        f"processes ({e}); use a module-level function or functools.partial, "
                        "or workers=1"
                    ) from e
            bases.append(label)
            specs.append(BotSpec(factory=factory))
        else:
            check_is_bot(entry, f"lineup slot {slot}")
            if workers > 1:
                raise ConfigError(
                    f"lineup slot {slot} is a bot instance ({entry!r}); instances only run with "
                    "workers=1: pass a registry name or a (label, factory) pair instead"
                )
            if id(entry) in seen_instances:
                raise ConfigError(
                    f"lineup slot {slot}: the same bot instance sits in two slots; give each slot "
                    "its own bot"
                )
            seen_instances.add(id(entry))
            bot_game = getattr(entry, "game", "")
            if bot_game and bot_game != game:
                raise ConfigError(f"lineup slot {slot}: {entry!r} plays {bot_game!r}, not {game!r}; legal: bots of "
                                  f"{game!r}")
            bases.append(getattr(entry, "name", "") or type(entry).__name__)
            specs.append(BotSpec(instance=entry))
    labels = []
    for slot, base in enumerate(bases):
        if bases.count(base) > 1:
            labels.append(f"{base}#{bases[: slot + 1].count(base)}")
        else:
            labels.append(base)
    if len(set(labels)) != len(labels):
        raise ConfigError(f"lineup labels are not unique: {labels}; legal: a distinct label per (label, factory) "
                          f"slot or bot instance")
    return bases, labels, specs


# ---------------------------------------------------------------- running


#: ``raw_env`` options a tournament sets itself (``num_players``, ``illegal_action``) or forbids
#: (``max_cycles``: every game is played to its end); :func:`check_env_kwargs` refuses them.
TOURNAMENT_ENV_OPTIONS = ("num_players", "illegal_action", "max_cycles")


def check_env_kwargs(game: str, env_kwargs: Optional[dict], num_players: Optional[int] = None) -> dict:
    """The environment options of a tournament (``--env-kwargs``) as a new dict, checked.

    The tournament sets ``num_players`` and ``illegal_action`` itself, and plays every game to its
    end, so ``max_cycles`` is refused too. With ``num_players`` the game's ``raw_env`` is also built
    with them (and closed), so that unknown options and values outside their legal ones are
    refused before any game or bot (what :class:`~hod.evaluation.play.TournamentTable` does at
    the start of a run).

    Raises:
        ConfigError: a reserved option, or (with ``num_players``) one the game's environment
            refuses; the message names the legal options or values.
    """
    env_kwargs = dict(env_kwargs or {})
    for reserved in ("num_players", "illegal_action"):
        if reserved in env_kwargs:
            raise ConfigError(f"env_kwargs may not set {reserved!r}: the tournament sets it; legal: the other "
                              f"raw_env options of {game!r}")
    if "max_cycles" in env_kwargs:   # a truncated game has no winner to count
        raise ConfigError(f"env_kwargs may not set 'max_cycles': tournament games are played to the end; legal: "
                          f"the other raw_env options of {game!r} (e.g. reward_scheme, the rule options)")
    if num_players is not None:
        try:
            make_env(game, num_players, env_kwargs).close()
        except UnknownOptionError as e:   # the env's legal options, without those the tournament sets or forbids
            legal = getattr(e, "legal", None)
            if legal is None:
                raise
            keep = [o for o in legal if o not in TOURNAMENT_ENV_OPTIONS]
            raise UnknownOptionError(f"unknown option(s) {e.unknown}; legal options: {keep}") from None
    return env_kwargs


def run_tournament(
    game: str,
    lineup: Sequence[LineupEntry],
    num_games: int,
    seed: int = 0,
    workers: int = 1,
    duplicate: bool = True,
    progress: bool = False,
    env_kwargs: Optional[dict] = None,
    progress_desc: Optional[str] = None,
    seating: str = "auto",
    estimator: str = "plain",
    value: Optional[Callable] = None,
    luck_samples: int = _luck.DEFAULT_SAMPLES,
    luck_features: str = "none",
    luck_surrogates: Optional[dict] = None,
    luck_decisions: int = 0,
    luck_decision_samples: int = 0,
) -> TournamentResult:
    """Play ``num_games`` games of ``game`` between the bots of ``lineup`` and measure them.

    Args:
        game: ``"tapeo"`` or ``"robada"``.
        lineup: one entry per slot (the player count is ``len(lineup)``), each either a registry
            name (``agents.names(game)``), a bot instance (then ``workers`` must be 1), or a
            ``(label, factory)`` pair with a zero-argument factory returning a bot (picklable
            when ``workers > 1``). Repeated names are labelled ``name#1``, ``name#2``...
        num_games: games to play in total; a positive multiple of the number of seat orders
            (n for ``seating="cyclic"``, n! for ``"permutations"``).
        seed: tournament seed (non-negative int); every deal and bot seed derives from it.
        workers: processes asked to play games, an int in ``1..MAX_WORKERS``
            (:mod:`hod.evaluation.workers`); at most ``min(workers, num_games, usable CPUs)``
            run (1 = this process; the result's ``workers`` says how many). Results do not
            depend on it.
        duplicate: replay each deal once per seat order (m games per deal); else one game
            per deal with the seat order advancing each game.
        progress: show a tqdm progress bar on stderr.
        progress_desc: the bar's label (default ``"<game> <n>p"``).
        env_kwargs: extra options of ``raw_env`` (not ``num_players`` / ``illegal_action``); its
            rule options (the game's ``GameInfo.rule_options``, e.g. Ronda Robada's ``closing_ace``)
            are also given to every bot built by name.
        seating: seat orders: ``"cyclic"`` (the n rotations), ``"permutations"`` (all n!) or
            ``"auto"`` (every permutation when n! <= 24 and ``num_games`` is a multiple of n!,
            else the rotations; :func:`hod.evaluation.schedule.resolve_seating`). The result's
            ``seating`` says which was played.
        estimator: ``"plain"`` (default), ``"corrected"`` or ``"both"``: also measure the
            luck-corrected win rate, points and margin (:mod:`hod.evaluation.luck`: at each
            chance event the value the deal added is subtracted, estimated by dealing it again
            ``luck_samples`` times with the game's chance hook); the rows' ``corrected``.
        value: the value function of the correction, ``V(state) -> float64 (2, n)`` (expected
            points, expected win share); None = the game's cheap value (its chance hook's
            ``value``); ``"playout"`` = playouts of copies of the lineup's own bots from each
            state (:class:`hod.evaluation.luck_playout.LineupPlayoutValue`, ``luck_samples``
            playouts from the actual state; bots given by name or factory). Picklable when
            ``workers > 1``.
        luck_samples: outcomes dealt again per chance event, 1..4096 (default 16).
        luck_features: ``"none"`` (default) or ``"state"``: also track the luck of the game's
            global state, the extra controls of the fitted estimate (each corrected row's
            ``corrected["fitted"]``: :func:`hod.evaluation.luck.fitted_stats`, a linear value of
            the whole state fitted by cross-fitted ridge on the run's own games).
        luck_surrogates: with ``value="playout"``, ``{lineup bot name: ONNX export path}``: those
            bots are played inside the playouts by the export's argmax (e.g. a network cloned
            from the Python ``expert``: the playouts run a batch at a time), the others by copies
            of themselves. An approximation of the bot: less variance removed, no bias.
        luck_decisions: 0 (default) or ``M`` in 1..64: also correct the decisions of bots whose
            play is random and can be drawn again (:meth:`hod.agents.base.Bot.resample_actions`:
            the search bots), each asked ``M`` more times per decision (AIVAT's action terms,
            :mod:`hod.evaluation.luck`); the run's ``luck["decisions"]``, and per game the
            decision terms' part of the luck.
        luck_decision_samples: with ``value="playout"`` and ``luck_decisions``, the playouts of
            each action's position for the decision terms, 1..4096 (default 0: ``luck_samples``).

    Returns:
        :class:`TournamentResult`.

    A run that stops early keeps the games that finished: a worker process that dies (killed,
    out of memory) raises :class:`WorkerDied`, Ctrl-C raises :class:`TournamentInterrupted` (a
    ``KeyboardInterrupt``); both carry the partial result of the finished games (``partial=True``,
    ``num_games`` of ``games_planned``) or None when none finished. Workers ignore SIGINT (the
    main process stops them) and get SIGTERM's default action.

    Raises:
        ConfigError: unknown game or bot name (the message lists the legal ones), bad player
            count (from the environment), num_games not a multiple of the number of seat orders
            (the nearest legal values are named), a bad ``seating``, bad
            seed/workers, instances with workers > 1, unpicklable factories with workers > 1, a
            bot that declares the table sizes it plays (:attr:`hod.agents.base.Bot.player_counts`,
            e.g. a trained policy from its model card) without ``len(lineup)`` (the supported
            sizes are named), a bad ``estimator``, ``luck_samples``, ``luck_features`` or
            ``luck_surrogates`` (:func:`hod.evaluation.luck.check_surrogates`), a correction asked
            of a game that declares no chance hook; a bad ``luck_decisions`` (0..64) or
            ``luck_decision_samples`` (0..4096, only with ``value="playout"`` and decisions), either
            with ``estimator="plain"``; a bot whose ``resample_actions`` returns something other than
            None or that many legal actions.
        CheckpointError: a surrogate that is not a usable export for this game and table size.
        IllegalActionError: a bot played an action outside the mask (with a note naming the game).
    """
    check_game(game)
    workers = check_workers(workers)
    seed = check_seed(seed)
    estimator = _luck.check_estimator(estimator)
    luck_decisions = _luck.check_decisions(luck_decisions)
    luck_decision_samples = _luck.check_decision_samples(luck_decision_samples)
    if luck_decision_samples:
        if value != "playout" or not luck_decisions:
            raise ConfigError(f"luck_decision_samples={luck_decision_samples!r} is the playouts of the decision terms' "
                              f"positions; legal: with value='playout' (--value playout) and luck_decisions >= 1 "
                              f"(--luck-decisions), or leave it at 0")
    if estimator == "plain" and (value is not None or luck_surrogates or luck_decisions):
        raise ConfigError("value, luck_surrogates and luck_decisions are part of the luck correction; legal: with "
                          "estimator 'corrected' or 'both' (or none of them, for a plain run)")
    luck_spec = None
    if estimator != "plain":
        luck_spec = _luck.LuckSpec(_luck.check_value(value), _luck.check_samples(luck_samples),
                                   _luck.check_features(luck_features), decisions=luck_decisions,
                                   decision_samples=luck_decision_samples)
        _luck.chance_hook(game)   # the game declares one, before any game is played
    env_kwargs = check_env_kwargs(game, env_kwargs)
    sizes = list(get_game(game).player_counts)
    if isinstance(lineup, Sequence) and not isinstance(lineup, str) and len(lineup) not in sizes:
        # before the game count is checked against the seat orders of a table the game does not have
        bots = "bot" if len(lineup) == 1 else "bots"
        raise ConfigError(f"a lineup of {len(lineup)} {bots}: {game!r} is played by {sizes[0]} to {sizes[-1]} players, "
                          f"one bot per seat; legal values: {sizes}")
    bases, labels, specs = _resolve_lineup(game, lineup, workers)
    n = len(specs)
    if luck_surrogates:   # a correction (checked above); unusable files fail in the table built below
        luck_spec = replace(luck_spec, surrogates=_luck.check_surrogates(luck_surrogates, bases, value))
    seating = resolve_seating(seating, n, num_games)
    schedule = make_schedule(num_games, n, seed, bool(duplicate), seating)
    if luck_spec is None:
        table = TournamentTable(game, n, specs, env_kwargs)  # checks the player count and builds every bot
        pool_fns, initargs = (init_worker, play_chunk), (game, n, specs, env_kwargs)
    else:
        table = _luck.LuckTable(game, n, specs, env_kwargs, luck_spec)
        pool_fns, initargs = (_luck.init_luck_worker, play_chunk), (game, n, specs, env_kwargs, luck_spec)
    running = effective_workers(workers, len(schedule))   # never more processes than games or CPUs

    from tqdm.auto import tqdm

    bar = tqdm(total=len(schedule), disable=not progress, unit="game", desc=progress_desc or f"{game} {n}p")
    t0 = time.perf_counter()
    outcomes: dict[int, GameOutcome] = {}
    stop: Optional[BaseException] = None
    try:
        if running == 1:
            for spec in schedule:
                outcomes[spec.index] = table.play(spec)
                bar.update(1)
        else:
            size = max(1, min(50, len(schedule) // (running * 8)))
            chunks = [schedule[i : i + size] for i in range(0, len(schedule), size)]
            stop = _play_in_workers(chunks, running, initargs, outcomes, bar, *pool_fns)
    except KeyboardInterrupt as e:
        stop = e
    finally:
        bar.close()
    elapsed = time.perf_counter() - t0
    played = [s for s in schedule if s.index in outcomes]
    per_deal = (len(schedule) // (schedule[-1].deal + 1)) if duplicate else 1
    result = None
    if played:
        result = summarize(game, bases, labels, played, [outcomes[s.index] for s in played], seed, bool(duplicate),
                           env_kwargs, seating, games_per_deal=per_deal)
        if luck_spec is not None:
            result.estimator = estimator
            result.luck["value"] = _luck.value_name(game, value)
            result.luck["samples"] = luck_spec.samples
            result.luck["features"] = luck_spec.features
            result.luck["decisions"] = luck_spec.decisions
            if luck_spec.decisions and value == "playout":
                result.luck["decision_samples"] = luck_spec.decision_samples or luck_spec.samples
            played_by = getattr(table.tracker.value, "played_by", None)
            if played_by is not None:   # the playout value: what played each slot inside the playouts
                result.luck["played_by"] = dict(zip(labels, played_by))
        result.workers = running
        result.elapsed_s = elapsed
        result.games_per_s = len(played) / elapsed if elapsed > 0 else math.inf
        result.games_planned = len(schedule)
    if stop is None:
        return result
    signum = running_signal()   # under a long command: which signal (a library caller's Ctrl-C: None)
    why = (f"interrupted ({signal_name(signum)})" if signum is not None else "interrupted") \
        if isinstance(stop, KeyboardInterrupt) else "a worker process died (killed, or out of memory)"
    if result is not None:
        result.partial, result.stopped = True, why
    message = f"tournament stopped: {why}; {len(played)} of {len(schedule)} games finished"
    if isinstance(stop, KeyboardInterrupt):
        raise TournamentInterrupted(message, result, len(played), len(schedule)) from stop
    raise WorkerDied(message, result, len(played), len(schedule)) from stop


def _play_in_workers(chunks, running: int, initargs: tuple, outcomes: dict, bar, initializer=init_worker,
                     play=play_chunk) -> Optional[BaseException]:
    """Play ``chunks`` in ``running`` worker processes, storing each finished game in
    ``outcomes`` (by game index) as its chunk comes back, in any order; ``initializer(*initargs)``
    builds each worker's table, ``play(chunk)`` plays a chunk (:func:`~hod.evaluation.play.init_worker`
    and :func:`~hod.evaluation.play.play_chunk`, or :func:`hod.evaluation.luck.init_luck_worker` with the latter).

    Returns:
        None, or the ``BrokenProcessPool`` of a worker that died (the chunks that had finished
        are kept).

    Raises:
        the exception a game raised in a worker (rebuilt, :class:`WorkerFailure`), and
        KeyboardInterrupt; the workers are stopped first in both cases.
    """
    with ProcessPoolExecutor(max_workers=running, initializer=initializer, initargs=initargs) as pool:
        try:
            pending = {pool.submit(play, c) for c in chunks}
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                broken = None
                for fut in done:
                    try:
                        chunk_out = fut.result()
                    except BrokenProcessPool as e:
                        broken = e
                        continue
                    if isinstance(chunk_out, WorkerFailure):
                        raise chunk_out.rebuild()
                    for o in chunk_out:
                        outcomes[o.index] = o
                    bar.update(len(chunk_out))
                if broken is not None:
                    for fut in pending:   # chunks that finished before the pool broke are kept
                        if fut.done() and not fut.cancelled() and fut.exception() is None:
                            chunk_out = fut.result()
                            if not isinstance(chunk_out, WorkerFailure):
                                outcomes.update((o.index, o) for o in chunk_out)
                    stop_workers(pool)
                    return broken
        except BaseException:
            stop_workers(pool)
            raise
    return None


def summarize(
    game: str,
    bases: Sequence[str],
    labels: Sequence[str],
    schedule: Sequence[ScheduledGame],
    outcomes: Sequence[GameOutcome],
    seed: int,
    duplicate: bool,
    env_kwargs: dict,
    seating: str = "cyclic",
    games_per_deal: Optional[int] = None,
) -> TournamentResult:
    """Compute every statistic from the played games (pure function of its arguments;
    ``seating`` is the scheme the schedule was made with, recorded in the result).

    ``schedule`` and ``outcomes`` are the games played, in game order: a whole schedule, or the
    games that finished of a stopped one (then pass ``games_per_deal``, the schedule's, as a
    partial schedule does not show it).

    Raises:
        RuntimeError: a game's win shares do not add up to 1 (environment contract broken).
    """
    n = len(labels)
    G = len(schedule)
    assert [o.index for o in outcomes] == [s.index for s in schedule], "outcomes out of order"
    points = np.array([o.points for o in outcomes], dtype=np.float64)
    shares = np.array([o.win_share for o in outcomes], dtype=np.float64)
    bad = np.flatnonzero(np.abs(shares.sum(axis=1) - 1.0) > 1e-9)
    if bad.size:
        g = int(bad[0])
        raise RuntimeError(f"game {g}: win shares {shares[g].tolist()} do not add up to 1")
    deals = np.array([s.deal for s in schedule], dtype=np.int64)
    slot_at = np.array([s.seating for s in schedule], dtype=np.int64)  # (G, n) seat -> slot
    seat_of_slot = np.argsort(slot_at, axis=1)  # (G, n) slot -> seat
    marg = _stats.margins(points)
    keys = _stats.finish_keys(points, shares)
    ratings = _stats.openskill_ratings(keys)
    luck = _luck.slot_luck(outcomes)   # None for a plain run
    if luck is not None:
        luck_p, luck_w, events = luck
        luck_m = _stats.margins(luck_p)   # margins are linear in points
        event_luck = _luck.event_luck_array(outcomes)
        feature_luck = _luck.feature_luck_array(outcomes)
        decision_luck = _luck.decision_luck_array(outcomes)

    def corrected(slots, w, p, m) -> Optional[dict]:
        if luck is None:
            return None
        s = list(slots)
        out = _luck.luck_stats(w, p, m, luck_w[:, s].mean(axis=1), luck_p[:, s].mean(axis=1),
                               luck_m[:, s].mean(axis=1), deals)
        if decision_luck is not None:   # the same games with the chance terms alone (the decision terms' effect)
            dp, dw = decision_luck[:, 0, :], decision_luck[:, 1, :]
            alone = _luck.luck_stats(w, p, m, (luck_w - dw)[:, s].mean(axis=1), (luck_p - dp)[:, s].mean(axis=1),
                                     (luck_m - _stats.margins(dp))[:, s].mean(axis=1), deals)
            out["chance_only"] = {k: alone[k] for k in ("win_rate", "margin", "var_ratio", "half_width_ratio")}
        out["fitted"] = _luck.fitted_stats(w, p, m, _luck.row_controls(event_luck, s, feature_luck, seat_of_slot,
                                                                            decision_luck),
                                           deals)
        return out

    def row(label, slots, w, p, m, rating, seat_games) -> BotStats:
        wins = float(w.sum())
        pm, plo, phi = _stats.t_interval(_stats.deal_means(p, deals))
        mm, mlo, mhi = _stats.t_interval(_stats.deal_means(m, deals))
        mu, sigma = rating if rating else (None, None)
        return BotStats(
            label=label,
            slots=list(slots),
            games=G,
            wins=wins,
            win_rate=wins / G,
            win_ci=_stats.wilson_interval(wins, G),
            points=pm,
            points_ci=(plo, phi),
            margin=mm,
            margin_ci=(mlo, mhi),
            rating_mu=mu,
            rating_sigma=sigma,
            rating_ordinal=None if mu is None else mu - 3 * sigma,
            seat_games=seat_games,
            corrected=corrected(slots, w, p, m),
        )

    def seat_counts(slots) -> list[int]:
        return np.bincount(seat_of_slot[:, list(slots)].ravel(), minlength=n).tolist()

    bots = [
        row(labels[k], [k], shares[:, k], points[:, k], marg[:, k], ratings[k], seat_counts([k]))
        for k in range(n)
    ]
    aggregates = []
    for base in dict.fromkeys(bases):
        slots = [k for k in range(n) if bases[k] == base]
        if 1 < len(slots) < n:  # a group holding every seat would always average 1/n
            aggregates.append(
                row(
                    f"{base} (all {len(slots)})",
                    slots,
                    shares[:, slots].mean(axis=1),
                    points[:, slots].mean(axis=1),
                    marg[:, slots].mean(axis=1),
                    None,
                    seat_counts(slots),
                )
            )
    h2h = _stats.head_to_head(keys)
    seat_shares = np.take_along_axis(shares, slot_at, axis=1)  # (G, n) by seat
    seat_points = np.take_along_axis(points, slot_at, axis=1)
    seats = [
        {"seat": i, "win_rate": float(seat_shares[:, i].mean()), "points": float(seat_points[:, i].mean())}
        for i in range(n)
    ]
    games = [
        {
            "game": s.index,
            "deal": s.deal,
            "env_seed": s.env_seed,
            "seating": list(s.seating),
            "bot_seeds": list(s.bot_seeds),
            "points": list(o.points),
            "win_share": list(o.win_share),
            "steps": o.steps,
            **({"luck_points": list(o.luck_points), "luck_win_share": list(o.luck_win_share), "events": o.events}
               if luck is not None else {}),
            **({"decision_luck_points": list(o.decision_luck[0]), "decision_luck_win_share": list(o.decision_luck[1]),
                "resampled": o.resampled, "disagreed": o.disagreed}
               if luck is not None and o.decision_luck else {}),
        }
        for s, o in zip(schedule, outcomes)
    ]
    num_deals = len(np.unique(deals))
    return TournamentResult(
        game=game,
        num_players=n,
        num_games=G,
        num_deals=num_deals,
        games_per_deal=games_per_deal if games_per_deal is not None else (G // num_deals if duplicate else 1),
        seed=seed,
        duplicate=duplicate,
        env_kwargs=dict(env_kwargs),
        labels=list(labels),
        bots=bots,
        aggregates=aggregates,
        head_to_head=[[None if math.isnan(v) else float(v) for v in r] for r in h2h],
        seats=seats,
        games=games,
        seating=seating,
        games_planned=G,
        estimator="plain" if luck is None else "both",
        luck=None if luck is None else {"value": None, "samples": None, "events_per_game": float(events.mean()),
                                        **_luck.decision_summary(outcomes, deals)},
    )


if __name__ == "__main__":   # a library: say where its command is instead of exiting 0 silently
    print("hod.evaluation.tournament is the tournament library (run_tournament); its command line is "
          "python -m hod.benchmarks.tournament (--help), and python -m hod.training.evaluate evaluates a "
          "policy file against baselines", file=sys.stderr)
    sys.exit(2)
