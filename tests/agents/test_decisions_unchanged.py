"""The shipped trained opponents and the expert bots make the same decisions as before the
restructure: the observations and actions of ``tests/data/shipped_opponents_decisions.npz`` were
recorded from commit f3908a6 by ``tests/data/record_decisions.py``. Tapeo's ``ppo`` was replaced
on 2026-12-02 (round 4, docs/results.md): the previous network, now ``ppo_v2``, must still make
the recorded decisions (``tapeo_ppo_v2_action``, the old ``tapeo_action``), and ``tapeo_action``
holds the new network's on the same observations (442 of the 504 are the same pick)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hod import agents

DATA = np.load(Path(__file__).parents[1] / "data" / "shipped_opponents_decisions.npz", allow_pickle=False)


@pytest.mark.parametrize("game", ["tapeo", "robada"])
def test_the_shipped_opponent_decides_as_recorded(game):
    bot = agents.make(game, "ppo", seed=0)
    obs, masks, want = DATA[f"{game}_obs"], DATA[f"{game}_mask"], DATA[f"{game}_action"]
    got = [bot.act({"observation": o, "action_mask": m}) for o, m in zip(obs, masks)]
    assert np.array_equal(got, want)


def test_the_previous_tapeo_network_renamed_ppo_v2_decides_as_recorded():
    bot = agents.make("tapeo", "ppo_v2", seed=0)
    obs, masks, want = DATA["tapeo_obs"], DATA["tapeo_mask"], DATA["tapeo_ppo_v2_action"]
    got = [bot.act({"observation": o, "action_mask": m}) for o, m in zip(obs, masks)]
    assert np.array_equal(got, want) and not np.array_equal(want, DATA["tapeo_action"])


@pytest.mark.parametrize("game", ["tapeo", "robada"])
def test_the_expert_decides_as_recorded(game):
    """Asked in the recorded order (its generator draws in the same order), the expert makes the
    recorded decisions. (The games themselves are not replayed from their seeds: since the
    engines share one deal function, hod.core.deal, a seed deals another game than at f3908a6.)"""
    bot = agents.make(game, "expert", seed=1)
    obs, masks, want = DATA[f"{game}_obs"], DATA[f"{game}_mask"], DATA[f"{game}_expert_action"]
    got = [bot.act({"observation": o, "action_mask": m}) for o, m in zip(obs, masks)]
    assert np.array_equal(got, want)
