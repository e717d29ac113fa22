"""MaskablePPO's CPU time per env step: sb3-contrib's class against :class:`hod.training.ppo_fast.FastMaskablePPO`,
alternated in one process, next to a bare torch loop doing the same arithmetic.

``python -m hod.benchmarks.ppo_speed [--games tapeo robada] [--rounds 5] [--rollouts 4]``

For each game: two trainers (:class:`hod.training.train.Trainer`, the game's default configuration
as :func:`hod.benchmarks.throughput.bench_ppo` runs it: ``random`` heuristics, no observation
encoder, no evaluation, ``torch_threads = 1``), one on sb3-contrib's ``MaskablePPO`` methods, one on
the fast ones (the same run bit for bit, ``tests/training/test_training_ppo_fast.py``); after one warm-up
rollout each, ``--rounds`` rounds of ``--rollouts`` rollouts + updates each (``model.learn`` with the
trainer's self-play callback; no checkpoint written), the two alternated. Figures are **CPU time**
of this process (``time.process_time``), so a shared machine slows them less than wall time
(not at all only on a quiet one): env steps per CPU second, median over the rounds.

The floor (:func:`floor`): plain torch modules of the same shapes (obs -> 256 -> 256 -> A tanh
actor, obs -> 256 -> 256 -> 1 critic, Adam eps 1e-5), the rollout's forward at 128 rows a step and
the update's 16 minibatches of 1,024 (the masked log-softmax, entropy, PPO loss, backward, gradient
clipping, Adam), with no env, buffer or Python of SB3: the most any implementation of the same
arithmetic on this CPU can give.

Run it pinned to one core (``taskset -c 1 nice -n 5 python -m hod.benchmarks.ppo_speed``).
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from typing import Optional

from hod.core.games import game_names
from hod.evaluation.cli_options import int_option

PROG = "python -m hod.benchmarks.ppo_speed"


def _trainer(game: str, out: str, algorithm: str):
    from hod.training import config as config_mod
    from hod.training.ppo_fast import as_fast, as_sb3_contrib
    from hod.training.train import Trainer

    cfg = config_mod.override_keys(config_mod.load_config(game), {
        "engine": "batched", "total_steps": 10**9, "eval_every": 0, "heuristics": ["random"],
        "obs_encoder": "none", "checkpoint_every": 10**9})
    t = Trainer(game, cfg, out, progress=False, verbose=0, log=None)
    t.model = as_fast(t.model) if algorithm == "fast" else as_sb3_contrib(t.model)
    return t


def alternate(game: str, rounds: int = 5, rollouts: int = 4) -> dict:
    """``{"sb3": [...], "fast": [...]}``: CPU env-steps/s of each round (module docstring)."""
    import torch

    from hod.training import train as train_mod

    before = torch.get_num_threads()
    out: dict[str, list[float]] = {"sb3": [], "fast": []}
    try:
        with tempfile.TemporaryDirectory() as d:
            trainers = {a: _trainer(game, f"{d}/{a}", a) for a in out}
            callbacks = {}
            for a, t in trainers.items():
                t._t_start = time.perf_counter()
                callbacks[a] = train_mod._SelfPlayCallback(t)
                m = t.model
                m.learn(m.n_steps * m.n_envs, callback=callbacks[a], progress_bar=False, tb_log_name="ppo")
            for _ in range(rounds):
                for a, t in trainers.items():
                    m = t.model
                    steps = rollouts * m.n_steps * m.n_envs
                    c0 = time.process_time()
                    m.learn(steps, callback=callbacks[a], progress_bar=False, reset_num_timesteps=False,
                            tb_log_name="ppo")
                    out[a].append(steps / (time.process_time() - c0))
    finally:
        torch.set_num_threads(before)
    return out


def floor(obs_size: int, num_actions: int = 10, envs: int = 128, n_steps: int = 32, batch: int = 1024,
          epochs: int = 4, repeats: int = 3, seed: int = 0) -> dict:
    """CPU seconds per env step of the bare arithmetic (module docstring): ``{"rollout_us",
    "update_us", "env_steps_per_s"}`` (best of ``repeats`` rollouts + updates of ``n_steps * envs``
    env steps, after one warm-up)."""
    import torch as th
    from torch import nn

    before = th.get_num_threads()
    th.set_num_threads(1)
    th.manual_seed(seed)

    def mlp(n_out):
        return nn.Sequential(nn.Linear(obs_size, 256), nn.Tanh(), nn.Linear(256, 256), nn.Tanh(), nn.Linear(256, n_out))

    pi, vf = mlp(num_actions), mlp(1)
    params = [*pi.parameters(), *vf.parameters()]
    opt = th.optim.Adam(params, lr=3e-4, eps=1e-5)
    total = n_steps * envs
    obs = th.rand(total, obs_size)
    masks = th.rand(total, num_actions) < 0.6
    masks[:, 0] = True
    neg, zero = th.tensor(-1e8), th.tensor(0.0)
    actions = th.multinomial(masks.float(), 1)[:, 0]
    adv, ret, old = th.randn(total), th.randn(total), th.full((total,), -1.5)

    def logp(x, m):
        x = x - x.logsumexp(-1, keepdim=True)
        x = th.where(m, x, neg)
        return x - x.logsumexp(-1, keepdim=True)

    def rollout():
        with th.no_grad():
            for t in range(n_steps):
                rows = slice(t * envs, (t + 1) * envs)
                lp = logp(pi(obs[rows]), masks[rows])
                vf(obs[rows])
                a = th.multinomial(lp.softmax(-1), 1, True)
                lp.gather(-1, a)

    def update():
        for _ in range(epochs):
            perm = th.randperm(total)
            for s in range(0, total, batch):
                i = perm[s:s + batch]
                lp = logp(pi(obs[i]), masks[i])
                v = vf(obs[i]).flatten()
                a_lp = lp.gather(-1, actions[i, None])[:, 0]
                ent = -th.where(masks[i], lp * lp.softmax(-1), zero).sum(-1)
                a = (adv[i] - adv[i].mean()) / (adv[i].std() + 1e-8)
                ratio = th.exp(a_lp - old[i])
                loss = (-th.min(a * ratio, a * th.clamp(ratio, 0.8, 1.2)).mean() - 0.01 * ent.mean()
                        + 0.5 * nn.functional.mse_loss(ret[i], v))
                opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(params, 0.5)
                opt.step()

    def best(f):
        f()
        times = []
        for _ in range(repeats):
            c0 = time.process_time()
            f()
            times.append(time.process_time() - c0)
        return min(times)

    try:
        r, u = best(rollout), best(update)
    finally:
        th.set_num_threads(before)
    return {"rollout_us": r / total * 1e6, "update_us": u / total * 1e6, "env_steps_per_s": total / (r + u)}


def main(argv: Optional[list[str]] = None) -> dict:
    """Entry point: for each ``--games`` game, :func:`alternate` the two MaskablePPO classes and
    :func:`floor`, printing one Markdown row of medians (CPU env-steps/s) and one of every round;
    returns ``{game: {"runs", "median", "floor"}}``.

    Raises:
        SystemExit: status 2 with argparse's usage error for a bad option (nothing run).
    """
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", nargs="+", default=["tapeo", "robada"], choices=game_names(), help="games to measure")
    ap.add_argument("--rounds", type=int_option(1), default=5, help="alternated rounds per class, >= 1 (default 5)")
    ap.add_argument("--rollouts", type=int_option(1), default=4,
                    help="rollouts + updates per round, >= 1 (default 4: 16,384 env steps)")
    args = ap.parse_args(argv)
    from hod.core.games import get_game, load_object

    result = {}
    print("| game | sb3-contrib MaskablePPO | FastMaskablePPO | x | floor (bare torch loop) |")
    print("|---|---:|---:|---:|---:|")
    for game in args.games:
        runs = alternate(game, args.rounds, args.rollouts)
        eng = load_object(get_game(game).batched_engine)(2, 1)
        fl = floor(int(eng.obs_size), int(eng.num_actions))
        med = {a: statistics.median(v) for a, v in runs.items()}
        result[game] = {"runs": runs, "median": med, "floor": fl}
        print(f"| {game} | {med['sb3']:,.0f} | {med['fast']:,.0f} | {med['fast'] / med['sb3']:.3f} | "
              f"{fl['env_steps_per_s']:,.0f} (rollout {fl['rollout_us']:.1f} + update {fl['update_us']:.1f} us) |")
        print(f"|  | rounds: {', '.join(f'{x:,.0f}' for x in runs['sb3'])} | "
              f"{', '.join(f'{x:,.0f}' for x in runs['fast'])} | | |")
    print("CPU env-steps/s (process_time), medians of the rounds.")
    return result


if __name__ == "__main__":
    main()
