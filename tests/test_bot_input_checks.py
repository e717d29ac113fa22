"""Bots check their seeds and their observations, with errors naming what is legal."""
from __future__ import annotations

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
