"""The Gymnasium single-agent view checks actions with the games' one check
(hod.core.errors.action_id): an ill-typed action is an illegal action under its mode."""
from __future__ import annotations

import gymnasium
import numpy as np
import pytest

from hod.adapters.registration import register_envs
from hod.core.errors import IllegalActionError

register_envs()
BAD = [1.0, None, np.array([0]), np.array(1), True, "1"]


@pytest.mark.parametrize("gym_id", ["tapeo_env/Tapeo-v0", "robada_env/Robada-v0"])
@pytest.mark.parametrize("action", BAD, ids=repr)
def test_ill_typed_action_is_a_forfeit_under_lose(gym_id, action):
    env = gymnasium.make(gym_id)
    env.reset(seed=0)
    _, reward, terminated, truncated, info = env.step(action)
    assert (reward, terminated, truncated) == (-1.0, True, False)
    assert info["illegal_action"] == f"player_{env.unwrapped.seat}"


@pytest.mark.parametrize("gym_id", ["tapeo_env/Tapeo-v0", "robada_env/Robada-v0"])
@pytest.mark.parametrize("action", BAD, ids=repr)
def test_ill_typed_action_raises_under_raise_and_changes_nothing(gym_id, action):
    env = gymnasium.make(gym_id, illegal_action="raise")
    obs, info = env.reset(seed=0)
    with pytest.raises(IllegalActionError, match="legal actions: \\["):
        env.step(action)
    legal = int(np.flatnonzero(info["action_mask"])[0])
    _, _, terminated, _, _ = env.step(np.int64(legal))   # the game goes on
    assert terminated is False


def test_default_opponents_are_random():
    env = gymnasium.make("tapeo_env/Tapeo-v0")
    env.reset(seed=0)
    bots = env.unwrapped.table.bot_of
    assert env.unwrapped.table.num_players == 2
    assert [b.name for b in bots.values()] == ["random"]
