"""Record the decisions of the shipped PPO opponents and of the expert bots on fixed games.

``PYTHONPATH=. python tests/data/record_decisions.py OUT.npz`` from a checkout's root. The file
``shipped_opponents_decisions.npz`` beside this script was recorded from commit f3908a6 (the
layout before the "One house" restructure); ``tests/test_decisions_unchanged.py`` checks that
today's code makes the same decisions on the same observations.
Per game: ``<game>_obs`` float32 (N, obs_size), ``<game>_mask`` int8 (N, num_actions),
``<game>_action`` (the shipped ``ppo``), ``<game>_expert_action`` (``expert``, seed 1, asked at
every decision in order), int64 (N,); 6 games each (Tapeo 4 players, Ronda Robada 2), seeds
100..105, the PPO opponent in seat 0 and, on odd games, in every seat.
"""
import sys, numpy as np
import os
if os.path.isdir('hod_common'):
    import agents  # the old layout
else:
    from hod import agents
print(agents.__file__)
import tapeo_env, robada_env
out = {}
for game, mod, n in (("tapeo", tapeo_env, 4), ("robada", robada_env, 2)):
    obs_l, mask_l, act_l, exp_l = [], [], [], []
    ppo = agents.make(game, "ppo", seed=0)
    other = agents.make(game, "expert", seed=1)
    for g in range(6):
        env = mod.raw_env(num_players=n, illegal_action="raise")
        env.reset(seed=100 + g)
        for agent in env.agent_iter():
            o, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None); continue
            a_ppo = ppo.act(o)
            a_exp = other.act(o)
            exp_l.append(a_exp)
            obs_l.append(o["observation"].copy()); mask_l.append(o["action_mask"].copy()); act_l.append(a_ppo)
            env.step(a_ppo if agent == "player_0" or g % 2 else a_exp)
    out[f"{game}_obs"] = np.array(obs_l, np.float32); out[f"{game}_mask"] = np.array(mask_l, np.int8)
    out[f"{game}_action"] = np.array(act_l, np.int64)
    out[f"{game}_expert_action"] = np.array(exp_l, np.int64)
np.savez_compressed(sys.argv[1], **out)
print({k: v.shape for k, v in out.items()})
