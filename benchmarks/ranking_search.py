"""Search for the best fixed ranking of Tapeo's kinds (the ``ranking`` bot's default order).

``python -m hod.benchmarks.ranking_search [--games 2000] [--rounds 4] [--seed 0]``

A fixed ranking plays the legal kind that comes first in one order, whatever the state
(:class:`hod.agents.tapeo_bots.RankingBot`). The search is an iterated best response among
rankings, played on the batched engine (every seat's choice is one vectorized argmax, so a
thousand games take a fraction of a second):

1. the incumbent starts as ``--start`` (default: the current :data:`BEST_RANKING`);
2. a best response to it is found by hill climbing over swaps of two kinds: the candidate sits in
   one seat, the incumbent in all others, on the same seeded deals with the candidate in each seat
   in turn (duplicate), at 2 and 4 players; the objective is the candidate's mean win share
   minus par (1/n), summed over the table sizes;
3. if the best response beats the incumbent by more than ``--margin``, it becomes the incumbent
   and step 2 repeats (at most ``--rounds`` times); else the incumbent is kept: no order found
   beats it.

The result is printed with its score against the previous incumbents; set it as
``BEST_RANKING`` in ``agents/tapeo_bots.py``.
"""
from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

import numpy as np

from hod.agents.tapeo_bots import BEST_RANKING
from hod.core.errors import ConfigError
from hod.evaluation.cli_options import float_option, int_option
from tapeo_env.rules.batched import BatchedTapeo
from tapeo_env.rules.cards import KIND_NAMES, NUM_KINDS, kind_index


def priorities(order: Sequence[int]) -> np.ndarray:
    """int64 (K,): higher = preferred, for an order of kinds (best first)."""
    p = np.empty(NUM_KINDS, np.int64)
    p[np.asarray(order, np.int64)] = np.arange(NUM_KINDS)[::-1]
    return p


def win_share(candidate: Sequence[int], field: Sequence[int], n: int, games: int, seed: int) -> float:
    """Mean win share (ties shared) of the ``candidate`` order in one seat against ``field`` in the
    other ``n - 1`` seats, over ``games`` seeded deals, each played ``n`` times with the candidate
    in every seat (duplicate)."""
    pc, pf = priorities(candidate), priorities(field)
    shares = []
    for seat in range(n):
        eng = BatchedTapeo(n, games, seed=seed, reward_scheme="win_loss")
        eng.reset(seeds=np.arange(games, dtype=np.uint64) + np.uint64(seed) * np.uint64(1_000_003))
        prio = np.tile(pf, (n, 1))
        prio[seat] = pc
        while not eng.terminal.all():
            mask = eng.legal_mask()
            eng.step(np.argmax(np.where(mask > 0, prio[None], -1), axis=2))
        w = eng.state.winners.astype(np.float64)
        shares.append(w[:, seat] / w.sum(axis=1))
    return float(np.mean(shares))


def advantage(candidate, field, games: int, seed: int, sizes=(2, 4)) -> float:
    """Sum over table sizes of (win share - par) of ``candidate`` against ``field``."""
    return sum(win_share(candidate, field, n, games, seed + n) - 1.0 / n for n in sizes)


def best_response(field: Sequence[int], games: int, seed: int, start: Optional[Sequence[int]] = None,
                  log=print) -> tuple[np.ndarray, float]:
    """Hill climbing over swaps of two kinds from ``start`` (default ``field``); returns the order and its advantage."""
    cur = np.asarray(start if start is not None else field, np.int64)
    best = advantage(cur, field, games, seed)
    improved = True
    while improved:
        improved = False
        for i in range(NUM_KINDS):
            for j in range(i + 1, NUM_KINDS):
                cand = cur.copy()
                cand[i], cand[j] = cand[j], cand[i]
                a = advantage(cand, field, games, seed)
                if a > best + 1e-9:
                    cur, best, improved = cand, a, True
                    log(f"  {names(cur)}  advantage {best:+.3f}")
    return cur, best


def names(order) -> list[str]:
    """The kinds' names (:data:`KIND_NAMES`) of ``order``, a sequence of kind indices, in its order."""
    return [KIND_NAMES[int(k)] for k in order]


def main(argv: Optional[list[str]] = None) -> int:
    """Entry point: the iterated best response from ``--start`` (module docstring), printing each
    round's incumbent and best response, the best fixed ranking and its advantage over each earlier
    incumbent; returns 0, or 2 with argparse's usage error for a bad option or a ``--start`` that is
    not every kind exactly once (nothing run)."""
    p = argparse.ArgumentParser(prog="python -m hod.benchmarks.ranking_search", description=__doc__.split("\n\n")[0])
    p.add_argument("--games", type=int_option(1, 1 << 24), default=2000,
                   help="seeded deals per table size and seat, 1..2**24 (one batch)")
    p.add_argument("--rounds", type=int_option(1), default=4, help="most best-response rounds")
    p.add_argument("--margin", type=float_option(0.0), default=0.02,
                   help="advantage a best response needs to replace the incumbent (a number >= 0)")
    p.add_argument("--seed", type=int_option(0, 2**63 - 1, "0..2**63-1"), default=0, help="seed, 0..2**63-1 (default 0)")
    p.add_argument("--start", nargs=NUM_KINDS, metavar="KIND",
                   help="first incumbent: every kind once, best first (default: BEST_RANKING)")
    args = p.parse_args(argv)
    try:
        inc = np.array([kind_index(k) for k in (args.start or BEST_RANKING)], np.int64)
    except ConfigError as e:
        p.error(f"--start: {e}")
    if len(set(inc.tolist())) != NUM_KINDS:
        p.error(f"--start {' '.join(args.start)}: every kind exactly once; legal values: an order of {list(KIND_NAMES)}")
    history = [inc]
    for r in range(args.rounds):
        print(f"round {r}: incumbent {names(inc)}", flush=True)
        br, adv = best_response(inc, args.games, args.seed + 100 * r)
        print(f"best response {names(br)}: advantage {adv:+.3f} (sum over 2 and 4 players of win share - par)",
              flush=True)
        if adv <= args.margin:
            break
        inc = br
        history.append(inc)
    print(f"best fixed ranking: {names(inc)}")
    for old in history[:-1]:
        print(f"  vs {names(old)}: advantage {advantage(inc, old, args.games, args.seed + 7):+.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
