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
=================  ==================================================================
"""
from __future__ import annotations

import math
import time
from typing import Callable, Optional, Sequence

from hod.agents.base import Bot
from hod.evaluation.tournament import run_tournament


def round_games(games: int, n: int) -> int:
    """``games`` rounded up to a positive multiple of ``n`` (the tournament's requirement)."""
    return max(n, int(math.ceil(games / n)) * n)


def evaluate_policy(game: str, make_policy_bot: Callable[[], Bot], baselines: Sequence[str],
                    player_counts: Sequence[int], games: int, seed: int = 0, steps: int = 0,
                    workers: int = 1, env_kwargs: Optional[dict] = None) -> list[dict]:
    """Tournament of the policy against each baseline at each table size; returns the rows above.

    Args:
        game: game name.
        make_policy_bot: zero-argument factory of the policy's bot (deterministic, masked).
        baselines: registry names of the baseline bots.
        player_counts: table sizes to evaluate.
        games: games per (size, baseline), rounded up to a multiple of the size.
        seed: tournament seed (the same seed plays the same deals at every evaluation).
        steps: learner steps to record in the rows.
        workers: tournament worker processes (the factory must then be picklable).

    Raises:
        ConfigError: unknown baseline or game (from the tournament).
    """

    rows = []
    for n in player_counts:
        for b in baselines:
            t0 = time.perf_counter()
            lineup = [("policy", make_policy_bot)] + [b] * (n - 1)
            res = run_tournament(game, lineup, round_games(games, n), seed=seed, workers=workers,
                                 duplicate=True, env_kwargs=env_kwargs)
            me = res.bots[0]
            rows.append({
                "steps": int(steps),
                "baseline": b,
                "num_players": int(n),
                "games": int(res.num_games),
                "win_rate": float(me.win_rate),
                "win_ci": [float(me.win_ci[0]), float(me.win_ci[1])],
                "par": 1.0 / n,
                "points": float(me.points),
                "baseline_points": [float(s.points) for s in res.bots[1:]],
                "elapsed_s": round(time.perf_counter() - t0, 3),
            })
    return rows


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
    return "\n".join(lines)
