"""The shipped trained opponents and the expert bots make the same decisions as before the
restructure: the observations and actions of ``tests/data/shipped_opponents_decisions.npz`` were
recorded from commit f3908a6 by ``tests/data/record_decisions.py``."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import robada_env
import tapeo_env
from hod import agents

DATA = np.load(Path(__file__).parent / "data" / "shipped_opponents_decisions.npz")
PLAYERS = {"tapeo": 4, "robada": 2}
ENVS = {"tapeo": tapeo_env, "robada": robada_env}


@pytest.mark.parametrize("game", ["tapeo", "robada"])
def test_the_shipped_opponent_decides_as_recorded(game):
    bot = agents.make(game, "ppo", seed=0)
    obs, masks, want = DATA[f"{game}_obs"], DATA[f"{game}_mask"], DATA[f"{game}_action"]
    got = [bot.act({"observation": o, "action_mask": m}) for o, m in zip(obs, masks)]
    assert np.array_equal(got, want)


@pytest.mark.parametrize("game", ["tapeo", "robada"])
def test_the_games_and_the_expert_replay_as_recorded(game):
    """The same seeded games give the same observations, and the expert the same actions."""
    ppo, expert = agents.make(game, "ppo", seed=0), agents.make(game, "expert", seed=1)
    k = 0
    for g in range(6):
        env = ENVS[game].raw_env(num_players=PLAYERS[game], illegal_action="raise")
        env.reset(seed=100 + g)
        for agent in env.agent_iter():
            o, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            assert np.array_equal(o["observation"], DATA[f"{game}_obs"][k]), (g, k)
            a_ppo, a_exp = ppo.act(o), expert.act(o)
            assert (a_ppo, a_exp) == (DATA[f"{game}_action"][k], DATA[f"{game}_expert_action"][k]), (g, k)
            env.step(a_ppo if agent == "player_0" or g % 2 else a_exp)
            k += 1
    assert k == len(DATA[f"{game}_action"])
