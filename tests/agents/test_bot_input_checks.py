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


@pytest.mark.parametrize("game", ["tapeo", "robada"])
@pytest.mark.parametrize("name", ["random", "greedy", "expert", "ppo"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf], ids=repr)
def test_every_bot_refuses_a_non_finite_observation(game, name, bad):
    # Before the check, the shipped network played action 0 on a NaN observation (not in the
    # Ronda Robada mask of the first seat, which is [12, 16]) and the Ronda Robada expert blamed
    # the rules. A NaN/inf entry is refused by the one observation check of every bot.
    bot = agents.make(game, name, seed=0)
    obs = _first_observation(game)
    poisoned = {"observation": obs["observation"].copy(), "action_mask": obs["action_mask"]}
    poisoned["observation"][5] = bad
    with pytest.raises(ConfigError, match=r"observation entry 5 = .*; legal: finite numbers"):
        bot.act(poisoned)
    assert obs["action_mask"][bot.act(obs)] == 1      # the bot still plays after the refusal


def test_a_float64_entry_beyond_float32_is_refused_as_given():
    # 1e300 is finite in float64 but infinite once in the float32 layout: named as given
    bot = agents.make("robada", "ppo", seed=0)
    obs = _first_observation("robada")
    wide = {"observation": obs["observation"].astype(np.float64), "action_mask": obs["action_mask"]}
    wide["observation"][3] = -1e300
    with pytest.raises(ConfigError, match=r"observation entry 3 = -1e\+300; legal: finite float32 numbers"):
        bot.act(wide)
    wide["observation"][3] = 0.5                     # a float64 observation in range plays
    assert obs["action_mask"][bot.act(wide)] == 1


def test_network_batch_refuses_a_non_finite_row():
    bot = agents.make("robada", "ppo", seed=0)
    obs = _first_observation("robada")
    rows = np.stack([obs["observation"]] * 3)
    rows[2, 7] = np.nan
    masks = np.stack([obs["action_mask"]] * 3)
    with pytest.raises(ConfigError, match=r"observation row 2, entry 7 = nan; legal: finite values"):
        bot.run(rows, masks)


@pytest.mark.parametrize("name,option,value,legal", [
    ("greedy", "rulings", "x", "a tapeo_env.rules.scoring.Rulings"),
    ("expert", "rulings", 3, "a tapeo_env.rules.scoring.Rulings"),
    ("expert", "params", "x", "None or an ExpertParams"),
    ("ppo", "deterministic", "x", "True or False"),
    ("ppo", "verify", 1, "True or False"),
    ("ppo", "threads", -3, "an int >= 1"),
    ("ppo", "threads", "x", "an int >= 1"),
    ("search", "determinizations", 4097, "integers in 1..4096"),
    ("search", "playouts", 0, "integers in 1..4096"),
    ("search", "margin_weight", np.inf, "finite numbers >= 0"),
], ids=repr)
def test_tapeo_bot_options_are_checked_when_built(name, option, value, legal):
    # Before the checks, greedy/expert took any rulings/params and failed at the first act()
    # with an AttributeError; the network took any deterministic/verify flag.
    with pytest.raises(ConfigError, match=re.escape(legal)):
        agents.make("tapeo", name, seed=0, **{option: value})


@pytest.mark.parametrize("name,option,value,legal", [
    ("rollout", "margin_weight", np.inf, "finite numbers >= 0"),
    ("rollout", "window", np.inf, "finite numbers >= 0"),
    ("search", "determinizations", 10 ** 9, "integers in 1..4096"),
    ("ppo", "num_players", "2", "legal values"),
], ids=repr)
def test_robada_bot_options_are_checked_when_built(name, option, value, legal):
    with pytest.raises(ConfigError, match=re.escape(legal)):
        agents.make("robada", name, seed=0, **{option: value})


@pytest.mark.parametrize("name", [["random"], 3, None], ids=repr)
def test_a_bot_name_that_is_not_a_string_is_a_config_error(name):
    with pytest.raises(ConfigError, match=r"registered: \[.*'random'"):
        agents.make("tapeo", name)


def test_tapeo_search_bounds_the_games_of_one_decision():
    # 4096 determinizations x 4096 playouts would be 16.8M games per candidate (GBs of state): the
    # product is capped at 16,384; 4096 x 4 = 16,384 is the largest allowed.
    with pytest.raises(ConfigError, match=r"4096 x playouts=5 = 20480 games per candidate; legal: a product of at most "
                                          r"16,384"):
        agents.make("tapeo", "search", seed=0, determinizations=4096, playouts=5)
    assert agents.make("tapeo", "search", seed=0, determinizations=4096, playouts=4).playouts == 4
