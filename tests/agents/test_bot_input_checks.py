"""Bots check their seeds and their observations, with errors naming what is legal."""
from __future__ import annotations

import re

import numpy as np
import pytest

from hod import agents
from hod.agents.base import RandomBot
from hod.core.errors import ConfigError


@pytest.mark.parametrize("game", ["tapeo", "robada"])
@pytest.mark.parametrize("name", ["random", "greedy", "expert"])
@pytest.mark.parametrize("seed", [-1, 1.5, "3", True, np.float64(2.0)], ids=repr)
def test_bad_bot_seed_is_a_config_error(game, name, seed):
    with pytest.raises(ConfigError, match=r"legal values: None or a non-negative int"):
        agents.make(game, name, seed=seed)


def test_good_bot_seeds_and_reset():
    assert agents.make("tapeo", "expert", seed=np.int64(3)).seed == 3
    assert agents.make("tapeo", "expert", seed=None).seed is None
    bot = RandomBot(seed=0)
    with pytest.raises(ConfigError, match="legal values: None or a non-negative int"):
        bot.reset(seed=-5)
    assert bot.seed == 0          # unchanged
    with pytest.raises(ConfigError, match="legal values: None or a non-negative int"):
        RandomBot(seed=2.0)


def _first_observation(game, n=2):
    import robada_env
    import tapeo_env
    env = {"tapeo": tapeo_env, "robada": robada_env}[game].env(num_players=n)
    env.reset(seed=0)
    return env.last()[0]


@pytest.mark.parametrize("game,other", [("tapeo", "robada"), ("robada", "tapeo")])
@pytest.mark.parametrize("name", ["random", "greedy", "expert", "ppo"])
def test_every_bot_refuses_another_games_observation(game, other, name):
    # Tapeo: 157 observation values, 10 actions; Ronda Robada: 192 values, 27 actions
    # (docs/tapeo_env.md, docs/robada_env.md). A bot given the other game's dict must say so.
    sizes = {"tapeo": "(157,) and (10,)", "robada": "(192,) and (27,)"}
    bot = agents.make(game, name, seed=0)
    with pytest.raises(ConfigError, match=re.escape(f"legal shapes: {sizes[game]}")):
        bot.act(_first_observation(other))


@pytest.mark.parametrize("game", ["tapeo", "robada"])
@pytest.mark.parametrize("bad", [{}, {"observation": np.zeros(3, np.float32)}, [1, 2], None], ids=repr)
def test_bot_refuses_a_malformed_observation(game, bad):
    bot = agents.make(game, "random", seed=0)
    with pytest.raises(ConfigError, match=r"keys \['action_mask', 'observation'\]"):
        bot.act(bad)
    obs = _first_observation(game)
    assert obs["action_mask"][bot.act(obs)] == 1      # the bot still plays after the refusal
