"""The learning-curve chart: win rate against each baseline over training steps (matplotlib)."""
from __future__ import annotations

import io
import os
from typing import Sequence

from hod.core.atomic import atomic_write_bytes


def learning_curve_png(rows: Sequence[dict], title: str = "") -> bytes:
    """PNG bytes of the learning curve drawn from evaluation rows (:mod:`hod.training.evaluate`).

    One line per (table size, baseline): win rate with its 95% Wilson band over steps, and a
    dotted line at par (1/n) per table size.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    keys = sorted({(r["num_players"], r["baseline"]) for r in rows})
    for n, b in keys:
        pts = sorted((r for r in rows if r["num_players"] == n and r["baseline"] == b), key=lambda r: r["steps"])
        x = [r["steps"] for r in pts]
        y = [r["win_rate"] for r in pts]
        line, = ax.plot(x, y, marker="o", ms=3, label=f"{n}p vs {b}")
        ax.fill_between(x, [r["win_ci"][0] for r in pts], [r["win_ci"][1] for r in pts],
                        color=line.get_color(), alpha=0.15)
    for n in sorted({r["num_players"] for r in rows}):
        ax.axhline(1.0 / n, ls=":", lw=1, color="grey")
        ax.annotate(f"par {n}p", (0, 1.0 / n), fontsize=7, color="grey", va="bottom")
    ax.set_xlabel("learner steps")
    ax.set_ylabel("win rate (ties shared), 95% CI")
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    if title:
        ax.set_title(title)
    if keys:
        ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()


def save_learning_curve(path: str | os.PathLike, rows: Sequence[dict], title: str = "") -> None:
    """Write :func:`learning_curve_png` to ``path`` atomically."""
    atomic_write_bytes(path, learning_curve_png(rows, title))
