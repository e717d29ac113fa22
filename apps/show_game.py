"""``python -m hod.apps.show_game --seed 0 --players 4``: a seeded game between random bots, printed
round by round (every bar and the scores), then the final scores and the winner."""
from __future__ import annotations

import argparse

from hod.agents import make
from hod.apps.play import non_negative_int
from hod.core.errors import ConfigError

from tapeo_env.env import raw_env
from tapeo_env.rules.engine import sample_consistent_state


def play(seed: int = 0, players: int = 4, bot: str = "random") -> str:
    """Play one seeded game and return the printed text.

    Raises:
        ConfigError: an unknown bot (the registered ones are named), a bad seed or player count.
    """
    env = raw_env(num_players=players, render_mode="ansi")
    env.reset(seed=seed)
    bots = {a: make("tapeo", bot, seed=seed * 100 + i) for i, a in enumerate(env.possible_agents)}
    out = [f"Tapeo ({env.metadata['name']}), {players} players, seed {seed}, {bot} bots", ""]
    rounds_done = 0
    for agent in env.agent_iter():
        obs, _, term, trunc, info = env.last()
        if term or trunc:
            env.step(None)
            continue
        b, seat = bots[agent], env.possible_agents.index(agent)
        if getattr(b, "needs_belief", False):   # a search bot: samples of what this seat cannot see
            s = env.game_state
            env.step(b.act(obs, lambda rng: sample_consistent_state(s, seat, rng)))
        else:
            env.step(b.act(obs))
        if len(env.game_state.round_bars) > rounds_done:
            rounds_done = len(env.game_state.round_bars)
            out += [env.render(), ""]
    s = env.game_state
    out.append("Final scores: " + ", ".join(f"player_{i} {int(x)}" for i, x in enumerate(s.final_scores)))
    out.append("Winner: " + " and ".join(f"player_{w}" for w in s.winners)
               + (" (shared)" if len(s.winners) > 1 else ""))
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    """Entry point of ``python -m hod.apps.show_game``: print one seeded game.

    Raises:
        SystemExit: a bad option (argparse's usage error, status 2, naming the legal values:
            ``--seed`` a non-negative int, ``--bot`` a registered Tapeo bot, ``--players`` 2..6).
    """
    ap = argparse.ArgumentParser(prog="python -m hod.apps.show_game", description=__doc__)
    ap.add_argument("--seed", type=non_negative_int, default=0, help="game seed, a non-negative int (default 0)")
    ap.add_argument("--players", type=int, default=4, choices=range(2, 7), help="2-6 (default 4)")
    ap.add_argument("--bot", default="random", help="registered Tapeo bot for every seat, search bots included "
                    "(default random)")
    args = ap.parse_args(argv)
    try:
        text = play(args.seed, args.players, args.bot)
    except ConfigError as e:   # an unknown bot (the registered ones are named), a bot refusing the table
        ap.error(str(e))
    print(text)


if __name__ == "__main__":
    main()
