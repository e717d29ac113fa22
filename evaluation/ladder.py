"""Strength ladder: a league of every registered bot of a game, played through
:func:`hod.evaluation.tournament.run_tournament`, rated with OpenSkill.

Library::

    from hod.evaluation.ladder import run_ladder
    res = run_ladder("tapeo", players=2, games=40, seed=0, workers=2)
    print(res.to_markdown()); res.save_json("l.json"); res.save_png("l.png")

Command line: ``python -m hod.benchmarks.ladder`` (docs/tournament.md, "Strength ladder").

The scheme (details in docs/tournament.md):

* **Pool** (:func:`ladder_entries`): every bot of ``agents.names(game)``; a search bot
  (``needs_belief``) twice, at its default budget (its registry name) and at
  :data:`SMALL_BUDGET` determinizations (``<name>_d8``); a shipped ONNX opponent only if its model
  card's ``player_counts`` holds the table size.
* **Tables**: with 2 players every pair of the pool (round robin); with more, ``tables`` tables
  of ``players`` distinct bots, each time the bots that have sat at the fewest tables so far (ties
  broken by a generator seeded with ``seed``), so every bot plays about equally often.
* Every table is one :func:`run_tournament` of ``games`` games with the same ``seed`` (so every
  table plays the same deals, each in every seat order).
* **Ratings**: OpenSkill Plackett-Luce (:func:`hod.evaluation.stats.openskill_league`), one
  update per game, every bot one player across the whole league, the games interleaved (game 0 of
  every table, then game 1, ...) so that no table is rated before the others, and the ratings
  averaged over that order and 15 seeded shuffles (an online update weighs the last games most).
  Interval: ``mu +- 2 sigma``.
* **Matrix**: ``W[a][b]``, the share of the games between a and b in which a finished ahead of b
  (ties 1/2; :func:`hod.evaluation.stats.pairwise_scores`); with 2 players, a's win rate against
  b. ``W[a][b] + W[b][a] = 1``.
* **Labels**: :func:`hod.agents.strength.label_for` (easy / medium / hard by the place of the
  rating between ``random`` and the best bot), then :func:`hod.agents.strength.separate_labels`
  (a bot whose interval reaches the interval of the strongest bot of the label above takes that
  label, so neighbouring labels do not overlap); the markdown says which bots moved, and
  :func:`label_overlaps` whether the step-1 labels overlapped (a ladder with enough games moves none).
"""
from __future__ import annotations

import functools
import json
import math
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import numpy as np

from hod import agents
from hod.agents.strength import LABELS, label_for, separate_labels
from hod.core.atomic import json_bytes, json_safe
from hod.core.errors import ConfigError
from hod.core.games import get_game

from . import report as _report   # its number formats (n/a for nan: no spread in the plain deal means)
from . import stats as _stats
from .play import check_game
from .schedule import MAX_GAMES
from .luck import DEFAULT_SAMPLES, chance_hook, check_estimator, check_samples
from .tournament import TournamentInterrupted, TournamentStopped, WorkerDied, run_tournament
from .workers import check_workers

__all__ = ["LadderEntry", "LadderResult", "SMALL_BUDGET", "label_overlaps", "ladder_entries", "load_ladder_result",
           "run_ladder", "table_plan"]

#: Determinizations of the small budget of every search bot (the default budget is the bot's own).
SMALL_BUDGET = 8
#: How many sigmas the rating interval spans on each side.
INTERVAL_SIGMAS = 2.0
#: The most sampled tables of one ladder (``tables``); tables x games is also at most
#: :data:`hod.evaluation.schedule.MAX_GAMES` (every game is kept in memory to be rated).
MAX_TABLES = 10_000


@dataclass(frozen=True)
class LadderEntry:
    """One bot of the pool: its ``label`` in the ladder, registry ``name`` and options; or a bot
    from elsewhere (a policy file) built by ``factory``, a picklable zero-argument callable (then
    ``name`` says where it comes from, e.g. the file's path, and ``options`` is unused)."""

    label: str
    name: str
    options: dict = field(default_factory=dict)
    factory: Optional[Callable[[], Any]] = field(default=None, compare=False, repr=False)

    def to_dict(self) -> dict:
        """``{"label", "name", "options"}`` (the factory is not data)."""
        return {"label": self.label, "name": self.name, "options": dict(self.options)}


def _make_bot(game: str, name: str, options: dict) -> Any:
    return agents.make(game, name, **options)


def _plays(game: str, name: str, players: int) -> bool:
    """Whether bot ``name`` plays ``players`` (:func:`hod.agents.player_counts`: a shipped ONNX
    opponent's model card, a bot's ``player_counts``; None means every size)."""
    counts = agents.player_counts(game, name)
    return counts is None or players in counts


def ladder_entries(game: str, players: int = 2) -> list[LadderEntry]:
    """The pool of the ladder of ``game`` at ``players`` (module docstring).

    Raises:
        ConfigError: unknown game, or a table size the game does not allow (legal values named).
    """
    check_game(game)
    counts = list(get_game(game).player_counts)
    if isinstance(players, bool) or not isinstance(players, int) or players not in counts:
        raise ConfigError(f"players={players!r}: legal values for {game!r}: {counts}")
    out = []
    for name in agents.names(game):
        if not _plays(game, name, players):
            continue
        if agents.needs_belief(game, name):
            out.append(LadderEntry(f"{name}_d{SMALL_BUDGET}", name, {"determinizations": SMALL_BUDGET}))
        out.append(LadderEntry(name, name, {}))
    return out


def _entries(game: str, players: int, bots: Optional[Sequence]) -> list[LadderEntry]:
    pool = ladder_entries(game, players)
    if bots is None:
        return pool
    by_label = {e.label: e for e in pool}
    out = []
    for b in bots:
        if isinstance(b, LadderEntry):
            out.append(b)
        elif isinstance(b, str) and b in by_label:
            out.append(by_label[b])
        else:
            raise ConfigError(f"no ladder bot {b!r} for {game!r} at {players} players; legal values: {list(by_label)}")
    labels = [e.label for e in out]
    if len(set(labels)) != len(labels) or len(out) < max(2, players):
        raise ConfigError(f"the ladder needs at least {max(2, players)} distinct bots, got {labels}; legal values: "
                          f"{list(by_label)}")
    return out


def table_plan(num_bots: int, players: int, tables: Optional[int], seed: int) -> list[tuple[int, ...]]:
    """The tables of the league, as tuples of pool indices (module docstring): every pair when
    ``players == 2`` (``tables`` must then be None), else ``tables`` balanced sampled tables."""
    if players == 2:
        if tables is not None:
            raise ConfigError(f"tables={tables!r}: with 2 players the ladder plays every pair; legal: tables=None "
                              "(leave it out)")
        return [(a, b) for a in range(num_bots) for b in range(a + 1, num_bots)]
    if isinstance(tables, bool) or not isinstance(tables, int) or not 1 <= tables <= MAX_TABLES:
        raise ConfigError(f"tables={tables!r}: legal values at {players} players: an integer in 1..{MAX_TABLES}")
    rng = np.random.default_rng(seed)
    sat = np.zeros(num_bots, dtype=np.int64)
    plan = []
    for _ in range(tables):
        order = sorted(range(num_bots), key=lambda k: (sat[k], rng.random()))
        chosen = tuple(sorted(order[:players]))
        sat[list(chosen)] += 1
        plan.append(chosen)
    return plan


@dataclass
class LadderResult(_report.ResultFiles):
    """What a ladder measured.

    Attributes:
        game, players, games_per_table, seed, seating: the run's arguments (seating as played).
        entries: the pool (:class:`LadderEntry` as dicts).
        tables: the labels at each table.
        rows: one dict per bot, strongest first: ``label``, ``name``, ``options``, ``mu``,
            ``sigma``, ``low``, ``high`` (mu -+ 2 sigma), ``level`` (easy / medium / hard),
            ``games``, ``win_rate`` (its mean win share over all its games), ``threshold_level``
            (its label before :func:`~hod.agents.strength.separate_labels`).
        labels: the pool's labels in matrix order (the order of ``rows``).
        matrix: ``W[a][b]`` (None on the diagonal and for pairs that never met).
        matrix_games: games a and b played at the same table.
        elapsed_s: playing time. date: UTC date of the run. command: how it was run (set by the CLI).
        partial: True when the run stopped before its last table (a worker died, Ctrl-C /
            SIGTERM); the ratings are then over the ``len(tables)`` tables that finished, of
            ``tables_planned``, and ``stopped`` says why ("" for a whole run).
        estimator: the run's ``estimator`` (:func:`run_ladder`); luck_tables: for a corrected
            one, each table's luck-corrected rows (:func:`_luck_table`), else [].
        rating_model: the rating model in words (:data:`hod.evaluation.stats.RATING_MODEL`);
            "" in a result saved before 2026-12-08, which did not record it.
    """

    game: str
    players: int
    games_per_table: int
    seed: int
    seating: str
    entries: list[dict]
    tables: list[list[str]]
    rows: list[dict]
    labels: list[str]
    matrix: list[list[Optional[float]]]
    matrix_games: list[list[int]]
    elapsed_s: float = 0.0
    date: str = ""
    command: str = ""
    partial: bool = False
    stopped: str = ""
    tables_planned: int = 0
    estimator: str = "plain"
    luck_tables: list = field(default_factory=list)
    rating_model: str = ""

    def to_dict(self) -> dict:
        """JSON-ready fields; a plain ladder's (``estimator == "plain"``) without ``estimator``
        and ``luck_tables``, as before the luck correction."""
        d = asdict(self)
        if self.estimator == "plain":
            d.pop("estimator")
            d.pop("luck_tables")
        return d

    def row(self, label: str) -> dict:
        """The row of ``label`` (KeyError naming the labels otherwise)."""
        for r in self.rows:
            if r["label"] == label:
                return r
        raise KeyError(f"no bot {label!r}; labels: {self.labels}")

    def win_rate(self, a: str, b: str) -> Optional[float]:
        """``W[a][b]``."""
        return self.matrix[self.labels.index(a)][self.labels.index(b)]

    def strength_entries(self) -> dict:
        """``{label: entry}`` for ``agents/strength.json`` (:mod:`hod.agents.strength`).

        Raises:
            ConfigError: a row that is not a bot of the game's pool at this table size
                (:func:`ladder_entries`: an unregistered name, a policy file, options other than
                the pool's, such as a bad budget); the legal rows are named. Nothing is recorded.
        """
        pool = {e.label: e.to_dict() for e in ladder_entries(self.game, self.players)}
        for r in self.rows:
            row = {k: r.get(k) for k in ("label", "name", "options")}
            if pool.get(row["label"]) != row:
                raise ConfigError(f"the ladder row {row} is not a bot of the {self.players}-player pool of "
                                  f"{self.game!r}, so it cannot be recorded; legal rows: {list(pool.values())}")
        return {
            r["label"]: {
                "rating": round(r["mu"], 3), "sigma": round(r["sigma"], 3),
                "interval": [round(r["low"], 3), round(r["high"], 3)], "label": r["level"],
                "games": r["games"], "players": self.players, "date": self.date, "command": self.command,
                **({"rating_model": self.rating_model} if self.rating_model else {}),
            }
            for r in self.rows
        }

    def label_overlaps(self) -> list[dict]:
        """:func:`label_overlaps` of this ladder's rows (step-1 labels, ``threshold_level``)."""
        return label_overlaps([r["label"] for r in self.rows], [r["mu"] for r in self.rows],
                              [r["low"] for r in self.rows], [r["high"] for r in self.rows],
                              [r.get("threshold_level", r["level"]) for r in self.rows])

    def to_markdown(self) -> str:
        """The ratings table and the win-rate matrix as Markdown."""
        what = "win rate" if self.players == 2 else "share of games finished ahead"
        scheme = ("every pair" if self.players == 2 else f"{len(self.tables)} sampled tables of {self.players}")
        lines = [
            *([f"**Partial result** ({self.stopped}): {len(self.tables)} of {self.tables_planned} tables finished; "
               "the ratings are over those alone.", ""] if self.partial else []),
            f"**{get_game(self.game).title}, {self.players} players**: {len(self.rows)} bots, {scheme}, "
            f"{self.games_per_table} games per table ({self.seating} seatings, duplicate deals), seed {self.seed}; "
            f"OpenSkill Plackett-Luce (no skill drift: tau 0), interval mu +- 2 sigma.",
            "",
            "| rank | bot | rating (mu) | interval | sigma | level | games | win rate |",
            "|---:|---|---:|---|---:|---|---:|---:|",
        ]
        for i, r in enumerate(self.rows, 1):
            lines.append(f"| {i} | {r['label']} | {r['mu']:.2f} | [{r['low']:.2f}, {r['high']:.2f}] | {r['sigma']:.2f} "
                         f"| {r['level']} | {r['games']} | {100 * r['win_rate']:.1f}% |")
        moved = [f"{r['label']} ({r.get('threshold_level', r['level'])} -> {r['level']})" for r in self.rows
                 if r.get("threshold_level", r["level"]) != r["level"]]
        lines += ["", "Labels: by the place between random and the best bot, then merged where the interval of the "
                  "strongest bot of a label reaches the interval of the strongest bot of the label above: "
                  + (", ".join(moved) + " moved." if moved else "none moved.")]
        pairs = [f"{p['lower']} ({p['lower_bot']} [{p['lower_interval'][0]:.2f}, {p['lower_interval'][1]:.2f}]) / "
                 f"{p['upper']} ({p['upper_bot']} [{p['upper_interval'][0]:.2f}, {p['upper_interval'][1]:.2f}]): "
                 + (f"overlap (at least {p['games_factor']:.1f}x the games to separate)" if p["overlap"] else "apart")
                 for p in self.label_overlaps()]
        lines += ["", "Neighbouring labels before the merge (the strongest bot of each): "
                  + ("; ".join(pairs) if pairs else "fewer than two labels") + "."]
        lines += ["", f"Head to head ({what} of the row against the column, ties 1/2):", "",
                  "| | " + " | ".join(self.labels) + " |", "|---|" + "---:|" * len(self.labels)]
        for a, row in zip(self.labels, self.matrix):
            cells = ["-" if v is None else f"{100 * v:.1f}%" for v in row]
            lines.append(f"| {a} | " + " | ".join(cells) + " |")
        lines += _luck_lines(self)
        lines += ["", f"Playing time {self.elapsed_s:.0f} s."]
        return "\n".join(lines)

    def file_bytes(self, suffix: str) -> bytes:
        """The bytes of the ladder's file ``suffix`` (:class:`hod.evaluation.report.ResultFiles`):
        ``".md"`` :meth:`to_markdown`, ``".json"`` :meth:`to_dict` (NaN as null), ``".png"`` the
        ratings chart."""
        if suffix == ".md":
            return (self.to_markdown() + "\n").encode("utf-8")
        if suffix == ".json":
            return json_bytes(json_safe(self.to_dict()))
        return png_bytes(self)



def run_ladder(
    game: str,
    players: int = 2,
    games: int = 40,
    seed: int = 0,
    workers: int = 1,
    bots: Optional[Sequence] = None,
    tables: Optional[int] = None,
    seating: str = "auto",
    progress: bool = False,
    estimator: str = "plain",
    luck_samples: int = DEFAULT_SAMPLES,
) -> LadderResult:
    """Play the ladder of ``game`` (module docstring) and rate every bot.

    Args:
        players: table size (a size the game allows).
        games: games per table (:func:`run_tournament`'s ``num_games``: a multiple of the number
            of seat orders).
        seed: the seed of every table (and of the table sampling).
        workers: worker processes asked for each table (:func:`run_tournament`: an int in
            ``1..MAX_WORKERS``, at most one per game and per usable CPU run).
        bots: the pool: labels of :func:`ladder_entries` or :class:`LadderEntry` items (a bot
            with a ``factory``: e.g. a policy file, ``python -m hod.benchmarks.ladder --bots``)
            (default: the whole pool).
        tables: number of sampled tables when ``players > 2`` (default: twice the pool); must be
            None with 2 players.
        seating: as in :func:`run_tournament`.
        estimator: ``"plain"`` (default), ``"corrected"`` or ``"both"``: every table also
            measures the luck-corrected and the fitted estimates of each seat's win rate and
            margin (:func:`run_tournament`'s ``estimator``, the game's cheap value,
            ``luck_samples`` outcomes dealt again per chance event), kept in ``luck_tables`` and
            reported after the matrix with their variance ratios; the ratings, matrix and
            labels stay those of the plain outcomes either way (``"corrected"`` is ``"both"``).
        luck_samples: as in :func:`run_tournament`.

    A run that stops at a table (a worker process died, Ctrl-C) raises the tournament's
    :class:`~hod.evaluation.tournament.WorkerDied` or
    :class:`~hod.evaluation.tournament.TournamentInterrupted`, carrying the partial
    :class:`LadderResult` of the tables that finished (``partial=True``; None if none did).

    Raises:
        ConfigError: unknown game, table size, ladder bot, a bad ``games`` / ``tables`` /
            ``workers`` (the legal values are named).
    """
    check_game(game)
    workers = check_workers(workers)   # before the first table, not at it
    estimator = check_estimator(estimator)
    if estimator != "plain":
        check_samples(luck_samples)
        chance_hook(game)   # the game declares one, before any table
    luck_tables: list = []
    entries = _entries(game, players, bots)
    if players > 2 and tables is None:
        tables = 2 * len(entries)
    if isinstance(games, bool) or not isinstance(games, int) or games < 1:
        raise ConfigError(f"games={games!r}: legal values: a positive int, a multiple of the number of seat orders")
    plan = table_plan(len(entries), players, tables, seed)
    if len(plan) * games > MAX_GAMES:
        raise ConfigError(f"games={games} at each of {len(plan)} tables is {len(plan) * games:,} games, above the "
                          f"most one ladder keeps, {MAX_GAMES:,}; legal values: games <= {MAX_GAMES // len(plan)} "
                          f"(or fewer tables)")
    played: list[list[tuple[list[int], np.ndarray, np.ndarray]]] = []
    seatings = set()
    t0 = time.perf_counter()
    stop: Optional[TournamentStopped] = None
    for t, ids in enumerate(plan):
        lineup = [(entries[i].label, entries[i].factory
                   or functools.partial(_make_bot, game, entries[i].name, dict(entries[i].options))) for i in ids]
        try:
            res = run_tournament(game, lineup, games, seed=seed, workers=workers, progress=progress, seating=seating,
                                 progress_desc=" vs ".join(entries[i].label for i in ids),
                                 **({} if estimator == "plain" else {"estimator": "both",
                                                                     "luck_samples": luck_samples}))
        except (WorkerDied, TournamentInterrupted) as e:   # keep the tables that finished
            stop = e
            break
        seatings.add(res.seating)
        played.append([(list(ids), np.array(g["win_share"], np.float64), np.array(g["points"], np.float64))
                       for g in res.games])
        if estimator != "plain":
            luck_tables.append(_luck_table(res))
    elapsed = time.perf_counter() - t0
    if stop is not None:
        why = "interrupted" if isinstance(stop, KeyboardInterrupt) else "a worker process died (killed, or out of memory)"
        partial = _league(game, players, games, seed, entries, plan[:len(played)], played, seatings, elapsed) \
            if played else None
        if partial is not None:
            partial.partial, partial.stopped, partial.tables_planned = True, why, len(plan)
            partial.estimator, partial.luck_tables = estimator, luck_tables
        message = f"ladder stopped: {why}; {len(played)} of {len(plan)} tables finished"
        cls = TournamentInterrupted if isinstance(stop, KeyboardInterrupt) else WorkerDied
        raise cls(message, partial, len(played), len(plan)) from stop
    result = _league(game, players, games, seed, entries, plan, played, seatings, elapsed)
    result.tables_planned = len(plan)
    result.estimator, result.luck_tables = estimator, luck_tables
    return result


def _luck_table(res) -> dict:
    """One table's luck-corrected rows (a corrected :class:`~hod.evaluation.tournament.TournamentResult`):
    ``{"labels", "value", "samples", "rows": [per slot: label, plain / corrected / fitted win
    rate and margin with their 95% t intervals over deal means, var ratios]}``."""
    rows = []
    for b in res.bots:
        c, f = b.corrected, b.corrected["fitted"]
        rows.append({
            "label": b.label, "win_rate": b.win_rate, "win_ci_t": list(c["plain_win_ci_t"]),
            "corrected_win_rate": c["win_rate"], "corrected_win_ci": list(c["win_ci"]),
            "fitted_win_rate": f["win_rate"], "fitted_win_ci": list(f["win_ci"]),
            "margin": b.margin, "margin_ci": list(b.margin_ci),
            "corrected_margin": c["margin"], "corrected_margin_ci": list(c["margin_ci"]),
            "fitted_margin": f["margin"], "fitted_margin_ci": list(f["margin_ci"]),
            "var_ratio": dict(c["var_ratio"]), "fitted_var_ratio": dict(f["var_ratio"]),
        })
    return {"labels": list(res.labels), "value": res.luck["value"], "samples": res.luck["samples"], "rows": rows}


def _luck_lines(r: LadderResult) -> list[str]:
    """The Markdown of a corrected ladder's ``luck_tables`` (none for a plain one)."""
    if r.estimator == "plain" or not r.luck_tables:
        return []
    lk = r.luck_tables[0]
    lines = ["", f"Luck-corrected estimates by table (value `{lk['value']}`, {lk['samples']} outcomes dealt again "
             "per chance event; corrected: the luck subtracted; fitted: the luck terms as control variates, "
             "cross-fitted; 95% t intervals over deal means; var ratio: corrected or fitted / plain variance of "
             "the deal means; the ratings above use the plain outcomes):", "",
             "| table | bot | win rate | corrected | fitted | var ratio win (corr. / fitted) | margin | corrected "
             "| fitted | var ratio margin (corr. / fitted) |",
             "|---|---|---|---|---|---|---|---|---|---|"]

    def ci(v, lo_hi, pct):
        f = (lambda x: f"{100 * x:.1f}%") if pct else (lambda x: f"{x:.2f}")
        lo, hi = lo_hi
        return f"{f(v)} [{f(lo)}, {f(hi)}]" if lo == lo and lo is not None else f(v)

    for t in r.luck_tables:
        name = " vs ".join(t["labels"])
        for row in t["rows"]:
            vr, fr = row["var_ratio"], row["fitted_var_ratio"]
            lines.append(
                f"| {name} | {row['label']} | {ci(row['win_rate'], row['win_ci_t'], True)} "
                f"| {ci(row['corrected_win_rate'], row['corrected_win_ci'], True)} "
                f"| {ci(row['fitted_win_rate'], row['fitted_win_ci'], True)} "
                f"| {_report._num(vr['win_rate'], 3)} / {_report._num(fr['win_rate'], 3)} | {ci(row['margin'], row['margin_ci'], False)} "
                f"| {ci(row['corrected_margin'], row['corrected_margin_ci'], False)} "
                f"| {ci(row['fitted_margin'], row['fitted_margin_ci'], False)} "
                f"| {_report._num(vr['margin'], 3)} / {_report._num(fr['margin'], 3)} |")
    return lines


def _levels(is_random: Sequence[bool], mus: Sequence[float], lows: Sequence[float],
            highs: Sequence[float]) -> tuple[list[str], list[str]]:
    """Per bot, the label of :func:`~hod.agents.strength.label_for` (``random``'s rating, or the
    lowest where the pool has no ``random``, and the best) and the final label after
    :func:`~hod.agents.strength.separate_labels`."""
    rand = [i for i, r in enumerate(is_random) if r]
    mu_random = mus[rand[0]] if rand else min(mus)
    mu_best = max(mus)
    first = [label_for(mu, mu_random, mu_best) for mu in mus]
    return first, separate_labels(mus, lows, highs, first)


def label_overlaps(names: Sequence[str], mus: Sequence[float], lows: Sequence[float], highs: Sequence[float],
                   labels: Sequence[str]) -> list[dict]:
    """Whether neighbouring labels overlap, before :func:`~hod.agents.strength.separate_labels`
    merges them: the check that a ladder had enough games for its labels.

    ``labels`` are step 1's (:func:`~hod.agents.strength.label_for`, a row's ``threshold_level``).
    For each label that has bots, with the nearest label above that has bots, the strongest bot of
    each (highest ``mu``, the first on ties: the bot that difficulty deals) is compared, as
    :func:`~hod.agents.strength.separate_labels` compares them: they overlap when the lower bot's
    ``high >= `` the upper bot's ``low``. No pair overlaps exactly when step 2 moves no bot.

    Args:
        names: per bot, its ladder label (a str).
        mus, lows, highs: per bot, the rating and its interval ends (floats, ``mu -+ 2 sigma``).
        labels: per bot, its step-1 label (one of :data:`hod.agents.strength.LABELS`).

    Returns:
        One dict per neighbouring pair, weakest pair first: ``lower`` and ``upper`` (the labels),
        ``lower_bot`` / ``upper_bot`` (their strongest bots' names), ``lower_interval`` /
        ``upper_interval`` (``[low, high]``), ``gap`` (upper mu minus lower mu), ``overlap``
        (bool) and ``games_factor``: by how much the games would have to grow for the two intervals
        to just separate if the ratings stayed and the interval widths shrank as ``1/sqrt(games)``,
        ``((width_lower + width_upper) / (2 gap))**2`` (inf for ``gap <= 0``; below 1 for a pair
        that is apart). The ratings have no skill drift (:data:`hod.evaluation.stats.RATING_TAU`
        = 0), so their sigma does shrink so (docs/tournament.md, "Strength ladder").
        Empty when fewer than two labels have bots.

    Raises:
        ConfigError: the sequences differ in length, or a label not in
            :data:`hod.agents.strength.LABELS`.
    """
    n = len(names)
    if not len(mus) == len(lows) == len(highs) == len(labels) == n:
        raise ConfigError(f"label_overlaps: names, mus, lows, highs and labels differ in length ({n}, {len(mus)}, "
                          f"{len(lows)}, {len(highs)}, {len(labels)}); legal: one of each per bot")
    bad = sorted({x for x in labels if x not in LABELS})
    if bad:
        raise ConfigError(f"label_overlaps: labels {bad}; legal values: {list(LABELS)}")
    tops = []
    for lab in LABELS:
        members = [i for i in range(n) if labels[i] == lab]
        if members:
            tops.append((lab, max(members, key=lambda i: (mus[i], -i))))
    out = []
    for (lower, b), (upper, t) in zip(tops, tops[1:]):
        gap = float(mus[t] - mus[b])
        width = float(highs[b] - lows[b] + highs[t] - lows[t])
        out.append({
            "lower": lower, "upper": upper, "lower_bot": names[b], "upper_bot": names[t],
            "lower_interval": [float(lows[b]), float(highs[b])], "upper_interval": [float(lows[t]), float(highs[t])],
            "gap": gap, "overlap": bool(highs[b] >= lows[t]),
            "games_factor": (width / (2 * gap)) ** 2 if gap > 0 else math.inf,
        })
    return out


def load_ladder_result(path) -> LadderResult:
    """A finished ladder's result saved by :meth:`LadderResult.save_json`, its labels recomputed by
    today's rule (:func:`_levels`; a result saved before :func:`~hod.agents.strength.separate_labels`
    gets ``threshold_level`` and its final labels). Only JSON is read (nothing is executed).

    Raises:
        ConfigError: not a ladder result (the fields expected named), or a partial one (its
            ratings are over part of the tables).
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ConfigError(f"{path}: cannot read a ladder result ({e})") from None
    names = [f.name for f in fields(LadderResult)]
    if not isinstance(data, dict) or set(data) - set(names) or not {"game", "players", "rows", "entries"} <= set(data):
        raise ConfigError(f"{path}: not a ladder result (PREFIX.json of python -m hod.benchmarks.ladder); "
                          f"expected the fields {names}")
    res = LadderResult(**data)
    if res.partial:
        raise ConfigError(f"{path}: a partial ladder ({res.stopped}); legal: the result of a run that finished")
    try:
        mus = [float(r["mu"]) for r in res.rows]
        first, levels = _levels([r["name"] == "random" and not r["options"] for r in res.rows], mus,
                                [float(r["low"]) for r in res.rows], [float(r["high"]) for r in res.rows])
    except (KeyError, TypeError, ValueError) as e:
        raise ConfigError(f"{path}: a row without mu / low / high / name / options ({e!r})") from None
    for r, a, b in zip(res.rows, first, levels):
        r["threshold_level"], r["level"] = a, b
    return res


def _league(game: str, players: int, games: int, seed: int, entries: list[LadderEntry], plan: list,
            played: list, seatings: set, elapsed: float) -> LadderResult:
    """The ratings, matrix and labels of the tables ``played`` (the first ``len(played)`` of the
    plan, each a list of ``(ids, win shares, points)`` per game)."""
    m = len(entries)
    league = []   # interleaved: game 0 of every table, then game 1, ...
    score = np.zeros((m, m))
    met = np.zeros((m, m), dtype=np.int64)
    shares = np.zeros(m)
    count = np.zeros(m, dtype=np.int64)
    for g in range(games):
        for table in played:
            ids, w, p = table[g]
            league.append((ids, _stats.finish_keys(p, w).tolist()))
            s = _stats.pairwise_scores(w, p)
            ix = np.array(ids)
            score[np.ix_(ix, ix)] += s
            met[np.ix_(ix, ix)] += 1
            shares[ix] += w
            count[ix] += 1
    ratings = _stats.openskill_league(league, m)
    mus = [mu for mu, _ in ratings]
    order = sorted(range(m), key=lambda i: -mus[i])
    lows = [mu - INTERVAL_SIGMAS * sigma for mu, sigma in ratings]
    highs = [mu + INTERVAL_SIGMAS * sigma for mu, sigma in ratings]
    first, levels = _levels([e.name == "random" and not e.options for e in entries], mus, lows, highs)
    rows = []
    for i in order:
        mu, sigma = ratings[i]
        rows.append({
            "label": entries[i].label, "name": entries[i].name, "options": dict(entries[i].options),
            "mu": mu, "sigma": sigma, "low": lows[i], "high": highs[i],
            "level": levels[i], "threshold_level": first[i], "games": int(count[i]),
            "win_rate": float(shares[i] / count[i]) if count[i] else math.nan,
        })
    matrix = [[None if a == b or met[a, b] == 0 else float(score[a, b] / met[a, b]) for b in order] for a in order]
    return LadderResult(
        game=game, players=players, games_per_table=games, seed=seed, seating="/".join(sorted(seatings)),
        entries=[e.to_dict() for e in entries], tables=[[entries[i].label for i in ids] for ids in plan],
        rows=rows, labels=[entries[i].label for i in order], matrix=matrix,
        matrix_games=[[int(met[a, b]) for b in order] for a in order], elapsed_s=elapsed,
        date=time.strftime("%Y-%m-%d", time.gmtime()), rating_model=_stats.RATING_MODEL,
    )


def png_bytes(r: LadderResult) -> bytes:
    """PNG: the ratings with their mu +- 2 sigma bars (coloured by level) and the win-rate matrix."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # Agg canvas, no pyplot state
    from matplotlib.figure import Figure

    import io

    n = len(r.rows)
    fig = Figure(figsize=(6.0 + 0.9 * n, 4.2), dpi=100)
    FigureCanvasAgg(fig)
    ax, hm = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1]})
    colors = {"easy": "tab:green", "medium": "tab:orange", "hard": "tab:red"}
    ys = list(range(n))[::-1]
    for y, row in zip(ys, r.rows):
        ax.errorbar(row["mu"], y, xerr=[[row["mu"] - row["low"]], [row["high"] - row["mu"]]], fmt="o", capsize=4,
                    color=colors.get(row["level"], "tab:blue"))
    ax.set_yticks(ys, [f"{row['label']} ({row['level']})" for row in r.rows])
    ax.set_xlabel("OpenSkill mu (bars: mu +- 2 sigma)")
    ax.set_title(f"{get_game(r.game).title}, {r.players} players: ratings", fontsize="medium")
    vals = np.array([[np.nan if v is None else v for v in row] for row in r.matrix], dtype=float)
    im = hm.imshow(vals, vmin=0, vmax=1, cmap="RdYlGn")
    hm.set_xticks(range(n), r.labels, rotation=45, ha="right", fontsize="small")
    hm.set_yticks(range(n), r.labels, fontsize="small")
    for a in range(n):
        for b in range(n):
            if not np.isnan(vals[a, b]):
                hm.text(b, a, f"{100 * vals[a, b]:.0f}", ha="center", va="center", fontsize="x-small")
    hm.set_title("row vs column (%)" if r.players == 2 else "row ahead of column (%)", fontsize="medium")
    fig.colorbar(im, ax=hm, fraction=0.046)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()
