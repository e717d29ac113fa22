"""Rendering a :class:`hod.evaluation.tournament.TournamentResult`: Markdown tables and a PNG chart."""
from __future__ import annotations

import io
import json
import math
from typing import TYPE_CHECKING, Optional

from hod.core.atomic import atomic_write_bytes
from hod.core.errors import ConfigError
from hod.core.games import get_game


#: The files a result writes (``--out PREFIX``: ``PREFIX.md``, ``.json``, ``.png``).
OUTPUT_SUFFIXES = (".md", ".json", ".png")


class ResultFiles:
    """The files of a tournament or ladder result, each rendered by one method,
    :meth:`file_bytes`, that a result class implements: ``save_markdown``, ``save_json`` and
    ``save_png`` write one of them atomically, :meth:`output_files` renders all three before any is
    written (:func:`hod.evaluation.cli_options.save_outputs` writes them together)."""

    def file_bytes(self, suffix: str) -> bytes:
        """The bytes of the file ``suffix`` (one of :data:`OUTPUT_SUFFIXES`)."""
        raise NotImplementedError

    def output_files(self) -> dict[str, bytes]:
        """``{suffix: bytes}`` of every file of :data:`OUTPUT_SUFFIXES`."""
        return {suffix: self.file_bytes(suffix) for suffix in OUTPUT_SUFFIXES}

    def save_markdown(self, path) -> None:
        """Write the Markdown report to ``path`` atomically."""
        atomic_write_bytes(path, self.file_bytes(".md"))

    def save_json(self, path) -> None:
        """Write the JSON record to ``path`` atomically."""
        atomic_write_bytes(path, self.file_bytes(".json"))

    def save_png(self, path) -> None:
        """Write the chart to ``path`` atomically."""
        atomic_write_bytes(path, self.file_bytes(".png"))

if TYPE_CHECKING:  # pragma: no cover
    from .tournament import BotStats, TournamentResult



def game_title(game: str) -> str:
    """The declared display name of ``game`` (its name if it is not a declared game)."""
    try:
        return get_game(game).title
    except ConfigError:
        return game


def _pct(x: Optional[float]) -> str:
    return "n/a" if x is None or math.isnan(x) else f"{round(100 * x, 1) + 0.0:.1f}%"


def _num(x: Optional[float], digits: int = 2) -> str:
    return "n/a" if x is None or math.isnan(x) else f"{round(x, digits) + 0.0:.{digits}f}"  # no -0.00


def _ci(lo: Optional[float], hi: Optional[float], fmt) -> str:
    if lo is None or hi is None or math.isnan(lo) or math.isnan(hi):
        return "n/a"
    return f"[{fmt(lo)}, {fmt(hi)}]"


def _bot_row(b: "BotStats", bold: bool = False) -> str:
    label = f"*{b.label}*" if bold else b.label
    cells = [
        label,
        str(b.games),
        _pct(b.win_rate),
        _ci(*b.win_ci, _pct),
        _num(b.points),
        _ci(*b.points_ci, _num),
        _num(b.margin),
        _ci(*b.margin_ci, _num),
        _num(b.rating_mu),
        _num(b.rating_sigma),
        _num(b.rating_ordinal),
    ]
    return "| " + " | ".join(cells) + " |"


def _plural(count: int, word: str) -> str:
    """``"1 deal"``, ``"2 deals"``: ``count`` and ``word``, plural unless the count is 1."""
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def scheme_line(r: "TournamentResult") -> str:
    """One sentence saying how many games, deals and rotations the run played; for a partial
    result (``r.partial``), how many of the planned games finished, then the plan."""
    perms = getattr(r, "seating", "cyclic") == "permutations" and r.num_players > 2
    orders = f"{r.games_per_deal} seat permutations" if perms else f"{r.num_players} seat rotations"
    partial = getattr(r, "partial", False)
    games = r.games_planned if partial else r.num_games
    deals = _plural((games // max(1, r.games_per_deal)) if partial else r.num_deals, "deal")
    if r.duplicate:
        how = f"{deals} x {orders} (duplicate deals)"
    else:
        how = (f"{deals}, one game each, seat order advancing every game over all "
               f"{math.factorial(r.num_players)} permutations" if perms
               else f"{deals}, one game each, seat rotation advancing every game")
    line = f"{_plural(games, 'game')} = {how}, seed {r.seed}."
    if partial:
        return (f"**Partial result** ({r.stopped}): {r.num_games} of {r.games_planned} games finished, and every "
                f"number below is over those alone (the seat orders and deals are no longer balanced). "
                f"Planned: {line}")
    return line


def _luck_row(b: "BotStats", bold: bool = False) -> str:
    c = b.corrected
    label = f"*{b.label}*" if bold else b.label
    hw = c["half_width_ratio"]
    cells = [
        label,
        _pct(b.win_rate), _ci(*c["plain_win_ci_t"], _pct), _pct(c["win_rate"]), _ci(*c["win_ci"], _pct),
        _num(hw["win_rate"]),
        _num(b.margin), _ci(*b.margin_ci, _num), _num(c["margin"]), _ci(*c["margin_ci"], _num), _num(hw["margin"]),
        _num(c["var_ratio"]["win_rate"], 3), _num(c["var_ratio"]["margin"], 3),
    ]
    f = c.get("fitted")
    if f is not None:
        cells += [_pct(f["win_rate"]), _ci(*f["win_ci"], _pct), _num(f["margin"]), _ci(*f["margin_ci"], _num),
                  _num(f["var_ratio"]["win_rate"], 3), _num(f["var_ratio"]["margin"], 3)]
    return "| " + " | ".join(cells) + " |"


def decision_lines(r: "TournamentResult", lk: dict) -> str:
    """The paragraph on the decision terms (``luck_decisions``): how many decisions were drawn
    again, their bias check (win share and points by slot), and each bot's variance ratios with
    the chance terms alone (what the decision terms changed)."""
    if not lk.get("resampled_per_game"):
        return (f"Decision terms: asked for ({lk['decisions']} draws per decision), but no bot of the lineup offers "
                "draws (`resample_actions`: `random` and the search bots do), so there are none.")
    means = lk.get("decision_luck_mean") or {}

    def check(q: str, digits: int) -> str:
        return "; ".join(f"`{lab}` {_num(m, digits)} [{_num(lo, digits)}, {_num(hi, digits)}]"
                         for lab, (m, lo, hi) in zip(r.labels, means.get(q) or []))

    alone = "; ".join(f"`{b.label}` {_num(b.corrected['chance_only']['var_ratio']['win_rate'], 3)} / "
                      f"{_num(b.corrected['chance_only']['var_ratio']['margin'], 3)}"
                      for b in r.bots if b.corrected and "chance_only" in b.corrected)
    playouts = (f", each action's position from {lk['decision_samples']} playouts"
                if lk.get("decision_samples") else "")
    return (f"Decision terms: each decision of the bots whose play is random drawn {lk['decisions']} more "
            f"times{playouts} ({_num(lk.get('resampled_per_game'), 1)} decisions a game, "
            f"{_num(lk.get('disagreed_per_game'), 1)} of them with draws that differ from the action played). "
            f"Their luck by slot (bias check, 0 in expectation): win share {check('win_share', 3)}; points "
            f"{check('points', 2)}. Var ratios (win / margin) with the chance terms alone, on the same games: {alone}.")


def luck_section(r: "TournamentResult") -> list[str]:
    """The Markdown lines of the luck-corrected estimates (:mod:`hod.evaluation.luck`) beside the
    plain ones; empty for a plain run (``r.estimator == "plain"``)."""
    if getattr(r, "estimator", "plain") == "plain" or not r.bots or r.bots[0].corrected is None:
        return []
    lk = r.luck or {}
    lines = [
        "### Luck-corrected estimates",
        "",
        f"Value function `{lk.get('value')}`"
        + (f" (playouts of the lineup's own bots: {lk.get('samples')} from each position reached, one from each "
           "re-dealt one; inside them "
           + "; ".join(f"`{k}` by {v}" for k, v in (lk.get("played_by") or {}).items()) + ")"
           if lk.get("value") == "playout" else "")
        + f", {lk.get('samples')} outcomes dealt again per chance event, "
        f"{_num(lk.get('events_per_game'), 1)} chance events per game. Intervals: 95% Student t over deal "
        "means (the plain win rate's too, for a like-for-like comparison). hw ratio: corrected / plain "
        "half-width; var ratio: corrected / plain variance of the deal means. Fitted: the luck terms as "
        f"control variates, their coefficients fitted by ridge least squares on the other half of the deals "
        f"(cross-fitted; feature luck: {lk.get('features', 'none')}).",
        "",
    ]
    if lk.get("decisions"):
        lines += decision_lines(r, lk), ""
    lines += [
        "| bot | win rate | 95% CI (t) | corrected | 95% CI (t) | hw ratio | mean margin | 95% CI "
        "| corrected | 95% CI | hw ratio | var ratio (win) | var ratio (margin) "
        "| fitted win | 95% CI (t) | fitted margin | 95% CI | fitted var ratio (win) | fitted var ratio (margin) |",
        "|---|---:|---|---:|---|---:|---:|---|---:|---|---:|---:|---:|---:|---|---:|---|---:|---:|",
    ]
    lines += [_luck_row(b) for b in r.bots]
    lines += [_luck_row(b, bold=True) for b in r.aggregates]
    lines.append("")
    return lines


def markdown(r: "TournamentResult", include_timing: bool = True) -> str:
    """The full Markdown report (see docs/tournament.md for the column definitions); a corrected
    run (``r.estimator`` ``"both"``) adds the luck-corrected table after the bots table, and
    ``"corrected"`` shows it in the bots table's place."""
    title = game_title(r.game)
    corrected_only = getattr(r, "estimator", "plain") == "corrected"
    lines = [
        f"## Tournament: {title}, {r.num_players} players",
        "",
        scheme_line(r)
        + (f" Environment options: `{r.env_kwargs}`." if r.env_kwargs else "")
        + (f" Bot options: `{json.dumps(r.bot_options, sort_keys=True)}`." if r.bot_options else ""),
        "",
    ]
    if not corrected_only:
        lines += [
            "| bot | games | win rate | 95% CI (Wilson) | mean points | 95% CI | mean margin | 95% CI "
            "| rating mu | sigma | ordinal |",
            "|---|---:|---:|---|---:|---|---:|---|---:|---:|---:|",
        ]
        lines += [_bot_row(b) for b in r.bots]
        lines += [_bot_row(b, bold=True) for b in r.aggregates]
        lines += [
            "",
            "Win rate: ties shared (1/k each for k tied winners). Margin: points minus the mean points "
            "of the other seats. Points and margin intervals: Student t over deal means. Rating: "
            "OpenSkill Plackett-Luce (no skill drift: tau 0) averaged over 16 game orders, ordinal = mu - 3 sigma."
            + (" Aggregate rows (italics): per game mean over the named bot's seats." if r.aggregates else ""),
            "",
        ]
    lines += luck_section(r)
    lines += [
        "### Head to head",
        "",
        "Share of games in which the row bot finished ahead of the column bot (a tie counts 1/2).",
        "",
        "| | " + " | ".join(r.labels) + " |",
        "|---|" + "---:|" * len(r.labels),
    ]
    for label, hrow in zip(r.labels, r.head_to_head):
        lines.append(f"| {label} | " + " | ".join("-" if v is None else _pct(v) for v in hrow) + " |")
    lines += [
        "",
        "### Seats (all bots pooled)",
        "",
        "| seat | win rate | mean points |",
        "|---:|---:|---:|",
    ]
    lines += [f"| {s['seat']} | {_pct(s['win_rate'])} | {_num(s['points'])} |" for s in r.seats]
    if include_timing:
        lines += [
            "",
            f"Played in {r.elapsed_s:.1f} s: {r.games_per_s:.1f} games/s with {r.workers} "
            f"worker{'s' if r.workers != 1 else ''}.",
        ]
    return "\n".join(lines)


def png_bytes(r: "TournamentResult") -> bytes:
    """PNG of the win rate of every slot (and aggregate) with 95% Wilson error bars."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # Agg canvas, no pyplot state
    from matplotlib.figure import Figure

    rows = list(r.bots) + list(r.aggregates)
    labels = [b.label for b in rows]
    rates = [b.win_rate for b in rows]
    # clipped at 0: at a win rate of 0 or 1 the Wilson bound can differ from it by a rounding error,
    # and matplotlib refuses negative error bars
    lo = [max(0.0, b.win_rate - b.win_ci[0]) for b in rows]
    hi = [max(0.0, b.win_ci[1] - b.win_rate) for b in rows]
    fig = Figure(figsize=(max(4.0, 1.2 * len(rows) + 1.5), 3.6), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    colors = ["tab:blue"] * len(r.bots) + ["tab:gray"] * len(r.aggregates)
    ax.bar(range(len(rows)), rates, yerr=[lo, hi], capsize=4, color=colors)
    ax.axhline(1 / r.num_players, color="k", linestyle="--", linewidth=1, label="1 / players")
    ax.set_xticks(range(len(rows)), labels, rotation=20, ha="right")
    ax.set_ylabel("win rate (ties shared)")
    ax.set_ylim(0, 1)
    played = (f"{r.num_games} of {r.games_planned} games, partial" if getattr(r, "partial", False)
              else f"{r.num_games} games")
    ax.set_title(f"{game_title(r.game)}, {r.num_players} players, {played} (95% Wilson)")
    ax.legend(loc="upper right", fontsize="small")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()
