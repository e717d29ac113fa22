"""Speed of the Tapeo ``search`` bot at its registered budget: decisions per second.

``python -m hod.benchmarks.tapeo_search_speed [--players 4] [--positions 20] [--seed 0] [--repeats 3]``

Positions: seeded random games of ``--players`` players (game seeds ``seed, seed + 1, ...``),
every third pick, the deciding seat cycling over the table, only positions where it has more
than one legal kind. Each position is decided by the registered ``search`` bot (its default
budget: 32 determinizations, 1 playout, the candidates ranked by the shipped ``ppo`` network and
the playouts played by the network distilled from it, ``hod.agents.tapeo_search.PLAYOUT_NETWORK``),
reseeded per position, with the tournament's belief
(:func:`tapeo_env.rules.engine.sample_consistent_state`). Timed in CPU seconds of this process
(``time.process_time``, fairer than wall-clock on a shared machine; one thread: onnxruntime
runs with one intra-op thread), the median of ``--repeats`` passes over the positions after one
warm-up pass. Also printed: the share of that time spent in the networks (``OnnxPolicy.run`` and
``OnnxPolicy.logits`` of the ranking and the playout networks).
"""
from __future__ import annotations

import argparse
import statistics
import time
from typing import Optional

import numpy as np

PROG = "python -m hod.benchmarks.tapeo_search_speed"
#: The largest ``--seed``: the games are seeded ``seed, seed + 1, ...`` (one per game played), so
#: 2**63-1 keeps every game seed below 2**64 (the deals' range); 2**64-1 overflowed at the second game.
MAX_SEED = 2**63 - 1


def positions(players: int, count: int, seed: int) -> list:
    """``[(state, seat)]``: ``count`` positions of seeded random games (module docstring)."""
    from tapeo_env.rules import engine

    out, g = [], 0
    while len(out) < count:
        rng = np.random.default_rng(seed + g)
        s = engine.new_game(engine.Config(num_players=players), seed=seed + g)
        t = 0
        while not s.terminal and len(out) < count:
            seat = (g + t) % players
            if t % 3 == 0 and len(engine.legal_actions(s, seat)) > 1:
                out.append((s.clone(), seat))
            engine.apply_actions(s, [int(rng.choice(engine.legal_actions(s, i))) for i in range(players)])
            t += 1
        g += 1
    return out


def run(players: int = 4, count: int = 20, seed: int = 0, repeats: int = 3) -> dict:
    """``{"decisions_per_s", "network_share", "decisions", "actions"}`` (module docstring)."""
    from hod import agents
    from hod.agents.onnx_policy import OnnxPolicy
    from tapeo_env.rules import engine
    from tapeo_env.rules.observation import encode

    pos = positions(players, count, seed)
    bot = agents.make("tapeo", "search", seed=seed)
    spent = [0.0]
    nets = {id(p): p for p in (bot._policy, getattr(bot, "_playout_net", None)) if isinstance(p, OnnxPolicy)}
    for policy in nets.values():
        for method in ("run", "logits"):
            if not hasattr(policy, method):   # an older OnnxPolicy (the code before the benchmark's)
                continue

            def timed(*a, inner=getattr(policy, method), **k):
                t0 = time.process_time()
                try:
                    return inner(*a, **k)
                finally:
                    spent[0] += time.process_time() - t0

            setattr(policy, method, timed)

    def one_pass() -> list:
        acts = []
        for k, (s, seat) in enumerate(pos):
            bot.reset(seed + k)
            belief = lambda rng, s=s, seat=seat: engine.sample_consistent_state(s, seat, rng)  # noqa: E731
            belief.seat = seat
            acts.append(int(bot.act({"observation": encode(s, seat), "action_mask": engine.legal_mask(s, seat)},
                                    belief)))
        return acts

    actions = one_pass()
    rates, shares = [], []
    for _ in range(repeats):
        spent[0] = 0.0
        t0 = time.process_time()
        again = one_pass()
        dt = time.process_time() - t0
        if again != actions:
            raise RuntimeError("the search bot decided differently on a second pass with the same seeds")
        rates.append(len(pos) / dt)
        shares.append(spent[0] / dt)
    return {"decisions_per_s": statistics.median(rates), "network_share": statistics.median(shares),
            "decisions": len(pos), "actions": actions}


def main(argv: Optional[list[str]] = None) -> dict:
    """Entry point: :func:`run` with the options, print one line (decisions/s in CPU time, the
    networks' share, the actions) and return :func:`run`'s dict.

    Raises:
        SystemExit: status 2 with argparse's usage error for an option out of range.
        RuntimeError: a second pass decided differently (:func:`run`).
    """
    from hod.evaluation.cli_options import int_option

    ap = argparse.ArgumentParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--players", type=int_option(2, 6), default=4, help="players (2..6, default 4)")
    ap.add_argument("--positions", type=int_option(1), default=20, help="positions decided per pass (default 20)")
    ap.add_argument("--seed", type=int_option(0, MAX_SEED, "0..2**63-1"), default=0,
                    help="seed of the games and the bot, 0..2**63-1 (default 0; the game seeds seed, seed + 1, ... "
                         "stay below 2**64)")
    ap.add_argument("--repeats", type=int_option(1), default=3, help="timed passes; the median is reported (default 3)")
    args = ap.parse_args(argv)
    r = run(args.players, args.positions, args.seed, args.repeats)
    print(f"Tapeo search (registered budget), {args.players} players, {r['decisions']} positions: "
          f"{r['decisions_per_s']:.1f} decisions/s (CPU time), {100 * r['network_share']:.0f}% of it in the "
          f"networks; actions {r['actions']}")
    return r


if __name__ == "__main__":
    main()
