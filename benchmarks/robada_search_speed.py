"""Speed of the Ronda Robada search bots: decisions/s and playouts/s at their registered budgets.

``python -m hod.benchmarks.robada_search_speed [--positions 12] [--determinizations D] [--players 2] [--games N]``

Positions: the first ``--positions`` decisions of seat 0 with more than one candidate in seeded
expert games. Each mode decides them all (``act`` with the tournament's uniform belief, or the
``search`` bot's own), timed in CPU seconds of this process (``time.process_time``, fairer than
wall-clock on a shared machine; wall-clock is printed too). Playouts = candidates x
determinizations per decision.

Modes (each at its registered budget unless ``--determinizations`` is given):

* ``rollout``: the ``rollout`` bot as registered (48 determinizations, the uniform belief);
* ``search, one action``: the ``search`` bot as registered (32 determinizations, the belief from
  the opponents' play, each decision of a turn searched on its own, ``whole_turn=False``);
* ``search, whole turn``: ``SearchBot(whole_turn=True)``: whole-turn moves (start, taps and
  takes, confirm) are the candidates, one search per turn.

Every playout is one call of the compiled planner's playout kernel
(:func:`hod.agents.robada_planner_kernels.playouts`: the candidate's move, then the expert in
every seat to the end). Before it (commit 37aa7d5) each playout stepped the single-game engine
from Python with the Python planner in every seat; docs/throughput.md has both runs.

``--games N`` also plays N seeded games of each ``search`` mode against the expert (at
``--players``, the bot in seat 0, its registered 32 determinizations) and reports CPU seconds per
game and searched decisions per game: the cost a user of the bot sees.
"""
from __future__ import annotations

import argparse
import functools
import time
from typing import Optional, Sequence

from hod.agents.robada_bots import ExpertBot
from hod.agents.robada_search import RolloutBot, SearchBot
from hod.evaluation.cli_options import int_option
from robada_env.rules import engine
from robada_env.rules.engine import Config
from robada_env.rules.observation import encode

PROG = "python -m hod.benchmarks.robada_search_speed"
#: The largest ``--seed``: the games are seeded ``seed + g`` (one per game played), so 2**63-1 keeps
#: every game seed below 2**64 (the deals' range); 2**64-1 overflowed at the second game.
MAX_SEED = 2**63 - 1


def positions(n: int, count: int, seed: int) -> list:
    """The first ``count`` states where seat 0 is to act with more than one ``rollout`` candidate."""
    config = Config(num_players=n)
    probe = RolloutBot(seed=0, rules=config)
    out = []
    g = 0
    while len(out) < count:
        bots = [ExpertBot(seed=seed + 10 * g + k, rules=config) for k in range(n)]
        s = engine.new_game(config, seed=seed + g)
        while not s.terminal and len(out) < count:
            p = s.current
            obs = {"observation": encode(s, p), "action_mask": engine.legal_mask(s, p)}
            if p == 0 and len(probe.candidate_actions(obs)) > 1:
                out.append(s.clone())
            engine.apply_action(s, bots[p].act(obs))
        g += 1
    return out


def time_mode(bot, states: list) -> dict:
    """CPU and wall seconds for ``bot`` to decide every state; playouts counted."""
    playouts = 0
    cpu, wall = time.process_time(), time.perf_counter()
    for s in states:
        obs = {"observation": encode(s, 0), "action_mask": engine.legal_mask(s, 0)}
        cands = bot.candidate_plans(obs) if bot.whole_turn else bot.candidate_actions(obs)
        playouts += len(cands) * bot.determinizations
        bot.act(obs, lambda rng, st=s: engine.sample_consistent_state(st, 0, rng))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return {"decisions": len(states), "playouts": playouts, "cpu_s": cpu, "wall_s": wall}


def modes_table() -> list:
    """``[(mode name, bot factory)]`` of the modes in the module docstring, in its order."""
    return [("rollout", RolloutBot), ("search, one action", SearchBot),
            ("search, whole turn", functools.partial(SearchBot, whole_turn=True))]


def time_games(bot, n: int, games: int, seed: int) -> dict:
    """CPU seconds per game and searched decisions per game of ``bot`` in seat 0 against experts."""
    config = Config(num_players=n)
    searched = 0
    cpu = time.process_time()
    for g in range(games):
        s = engine.new_game(config, seed=seed + g)
        bot.reset(seed + g)
        experts = [ExpertBot(seed=seed + 10 * g + k, rules=config) for k in range(n)]
        while not s.terminal:
            p = s.current
            obs = {"observation": encode(s, p), "action_mask": engine.legal_mask(s, p)}
            if p == 0:
                action, values = bot.decide(obs, lambda rng, st=s: engine.sample_consistent_state(st, 0, rng))
                searched += bool(values)
            else:
                action = experts[p].act(obs)
            engine.apply_action(s, action)
    cpu = time.process_time() - cpu
    return {"games": games, "cpu_s_per_game": cpu / games, "searched_per_game": searched / games}


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point: time every mode on the positions and print the Markdown table (decisions,
    playouts, CPU s, decisions/s, playouts/s, wall s); with ``--games N``, also the table of whole
    games of the two search modes against experts. Returns 0, or 2 with argparse's usage error for
    a bad option (nothing run)."""
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    ap.add_argument("--players", type=int, default=2, choices=(2, 3, 4))
    ap.add_argument("--positions", type=int_option(1), default=12, help=">= 1 (default 12)")
    ap.add_argument("--determinizations", type=int_option(1), default=None,
                    help=">= 1 (default: each bot's registered budget, 48 for rollout, 32 for search)")
    ap.add_argument("--seed", type=int_option(0, MAX_SEED, "0..2**63-1"), default=0,
                    help="0..2**63-1 (default 0; the game seeds seed + g and the experts' seed + 10 * g + k stay "
                         "below 2**64)")
    ap.add_argument("--games", type=int_option(0), default=0,
                    help="also time this many whole games per search mode (>= 0, default 0)")
    args = ap.parse_args(argv)
    config = Config(num_players=args.players)
    states = positions(args.players, args.positions, args.seed)
    modes = modes_table()
    budget = "registered budgets" if args.determinizations is None else f"{args.determinizations} determinizations"
    print(f"{args.players} players, {len(states)} positions, {budget}")
    print("| mode | decisions | playouts | CPU s | decisions/s | playouts/s | wall s |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, cls in modes:
        budget = {} if args.determinizations is None else {"determinizations": args.determinizations}
        r = time_mode(cls(seed=args.seed, rules=config, **budget), states)
        print(f"| {name} | {r['decisions']} | {r['playouts']} | {r['cpu_s']:.1f} | "
              f"{r['decisions'] / r['cpu_s']:.2f} | {r['playouts'] / r['cpu_s']:.0f} | {r['wall_s']:.1f} |",
              flush=True)
    if args.games > 0:
        print(f"\n{args.games} games against experts, the bot in seat 0 (32 determinizations)")
        print("| mode | games | CPU s per game | searched decisions per game |")
        print("|---|---:|---:|---:|")
        for name, cls in modes[1:]:  # the two search modes
            r = time_games(cls(seed=args.seed, rules=config), args.players, args.games, args.seed)
            print(f"| {name} | {r['games']} | {r['cpu_s_per_game']:.2f} | {r['searched_per_game']:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
