"""Throughput of a game's environments under random legal play, with PettingZoo references.

``python -m hod.benchmarks.env_speed --game tapeo --players 4 --steps 50000`` measures, in one run:

* ``<game>_env.env()`` (AEC, wrapped) and ``<game>_env.parallel_env()``;
* PettingZoo's ``leduc_holdem_v4.env()`` (AEC) and ``rps_v2.parallel_env()`` as references
  (skipped with a note when their extra dependencies, ``pettingzoo[classic]``, are missing).

Figures: agent-steps per second (one agent choosing one action: an AEC ``step`` of a live agent,
or one entry of a Parallel ``step``'s action dict) and finished games per second. Every env plays
uniformly random legal actions (from the action mask; RPS has no mask) with the same sampler, and
each measured loop includes ``last()``/observations as a learner would use them.

Reset pattern, the same for every env: only the first reset of a run is seeded
(``reset(seed=seed)``); every later game starts with a plain ``reset()``. Reseeding every game
would time the seeding too, cheap for some envs and costly for others (PettingZoo's leduc
rebuilds its RLCard game on every seeded reset, about 2x slower), and inflate the ratios.

``--pettingzoo-benchmark`` also runs PettingZoo's own ``performance_benchmark`` on the AEC env.
"""
from __future__ import annotations

import argparse
import time
from typing import Callable

import numpy as np

from hod.core.games import game_names, get_game
from hod.evaluation.cli_options import SEED_OPTION, int_option


#: The command as typed (argparse's usage line).
PROG = "python -m hod.benchmarks.env_speed"

def _pick(rng: np.random.Generator, obs, space) -> int:
    if isinstance(obs, dict) and "action_mask" in obs:
        legal = np.flatnonzero(obs["action_mask"])
        return int(legal[rng.integers(len(legal))])
    return int(rng.integers(space.n))


def _reset(env, seed: int | None):
    """``env.reset(seed=seed)`` when ``seed`` is given, else a plain ``env.reset()``."""
    return env.reset() if seed is None else env.reset(seed=seed)


def _rates(play_game: Callable[[int | None, np.random.Generator], int], steps: int, seed: int) -> dict:
    """Play games ``play_game(reset_seed, rng) -> agent-steps`` until ``steps`` agent-steps; return
    the counts and rates. Only the first game gets ``reset_seed = seed``, every later one ``None``
    (a plain ``reset()``); one action sampler ``rng`` (seeded with ``seed``) for the whole run."""
    rng = np.random.default_rng(seed)
    done_steps = games = 0
    t0 = time.perf_counter()
    while done_steps < steps:
        done_steps += play_game(seed if games == 0 else None, rng)
        games += 1
    dt = time.perf_counter() - t0
    return {"agent_steps": done_steps, "games": games, "seconds": dt,
            "steps_per_s": done_steps / dt, "games_per_s": games / dt}


def bench_aec(make: Callable, steps: int, seed: int = 0) -> dict:
    """Run ``make()`` (an AEC env) until ``steps`` agent-steps; return rates. Only the first
    reset is seeded (``reset(seed=seed)``), later games use ``reset()``."""
    env = make()

    def play_game(reset_seed: int | None, rng: np.random.Generator) -> int:
        _reset(env, reset_seed)
        done = 0
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            env.step(_pick(rng, obs, env.action_space(agent)))
            done += 1
        return done

    return _rates(play_game, steps, seed)


def bench_parallel(make: Callable, steps: int, seed: int = 0) -> dict:
    """Run ``make()`` (a Parallel env) until ``steps`` agent-steps; return rates. Only the first
    reset is seeded (``reset(seed=seed)``), later games use ``reset()``."""
    env = make()

    def play_game(reset_seed: int | None, rng: np.random.Generator) -> int:
        obs, _ = _reset(env, reset_seed)
        done = 0
        while env.agents:
            actions = {a: _pick(rng, obs[a], env.action_space(a)) for a in env.agents}
            obs, _, _, _, _ = env.step(actions)
            done += len(actions)
        return done

    return _rates(play_game, steps, seed)


def run(game: str, players: int, steps: int, seed: int = 0) -> list[tuple[str, dict | str]]:
    """Measure the game's AEC and Parallel envs and the references. Returns (label, result or note)."""
    info = get_game(game)
    mod = info.module()
    rows: list[tuple[str, dict | str]] = [
        (f"{info.package}.env(num_players={players}) [AEC]", bench_aec(lambda: mod.env(num_players=players), steps, seed)),
        (f"{info.package}.parallel_env(num_players={players})",
         bench_parallel(lambda: mod.parallel_env(num_players=players), steps, seed)),
    ]
    try:
        from pettingzoo.classic import leduc_holdem_v4
        rows.append(("pettingzoo leduc_holdem_v4.env() [AEC]", bench_aec(leduc_holdem_v4.env, steps, seed)))
    except ImportError as e:  # rlcard/pygame missing
        rows.append(("pettingzoo leduc_holdem_v4.env() [AEC]", f"skipped: {e} (pip install 'pettingzoo[classic]')"))
    try:
        from pettingzoo.classic import rps_v2
        rows.append(("pettingzoo rps_v2.parallel_env()", bench_parallel(rps_v2.parallel_env, steps, seed)))
    except ImportError as e:
        rows.append(("pettingzoo rps_v2.parallel_env()", f"skipped: {e}"))
    return rows


def format_table(rows: list[tuple[str, dict | str]]) -> str:
    """Markdown table of :func:`run`'s rows, with each rate relative to leduc's."""
    ref = next((r for label, r in rows if "leduc" in label and isinstance(r, dict)), None)
    lines = ["| environment | agent-steps/s | games/s | vs leduc AEC |", "|---|---:|---:|---:|"]
    for label, r in rows:
        if isinstance(r, str):
            lines.append(f"| {label} | {r} | | |")
            continue
        rel = f"{r['steps_per_s'] / ref['steps_per_s']:.2f}x" if ref else "-"
        lines.append(f"| {label} | {r['steps_per_s']:,.0f} | {r['games_per_s']:,.1f} | {rel} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Entry point: with ``--pettingzoo-benchmark``, PettingZoo's ``performance_benchmark`` on the
    AEC env first; then print one header line and the Markdown table of :func:`run`
    (:func:`format_table`). Returns None.

    Raises:
        SystemExit: status 2 with argparse's usage error for a bad option or a ``--players`` the
            game does not allow (its legal counts named; nothing run).
    """
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--game", default="tapeo", choices=game_names(), help="game to measure")
    ap.add_argument("--players", type=int, default=None,
                    help="player count, one the game allows (default 4, or the game's largest below 4: Kuhn's 2)")
    ap.add_argument("--steps", type=int_option(1), default=50_000, help="agent-steps per environment (default 50000)")
    ap.add_argument("--seed", type=SEED_OPTION, default=0, help="seed of the first reset, 0..2**64-1 (default 0)")
    ap.add_argument("--pettingzoo-benchmark", action="store_true",
                    help="also run pettingzoo.test.performance_benchmark on the AEC env (5 s)")
    args = ap.parse_args(argv)
    sizes = list(get_game(args.game).player_counts)
    if args.players is None:   # 4, as before, where the game allows it (Kuhn poker is 2 players only)
        args.players = 4 if 4 in sizes else max(n for n in sizes if n <= 4) if min(sizes) <= 4 else min(sizes)
    if args.players not in sizes:
        ap.error(f"--players {args.players}: legal values for {args.game}: {sizes}")
    if args.pettingzoo_benchmark:
        from pettingzoo.test import performance_benchmark
        performance_benchmark(get_game(args.game).module().env(num_players=args.players))
    print(f"random legal play, {args.steps} agent-steps per environment; only the first reset seeded")
    print(format_table(run(args.game, args.players, args.steps, args.seed)))


if __name__ == "__main__":
    main()
