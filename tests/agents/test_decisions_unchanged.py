"""The shipped trained opponents and the expert bots make the same decisions as before the
restructure: the observations and actions of ``tests/data/shipped_opponents_decisions.npz`` were
recorded from commit f3908a6 by ``tests/data/record_decisions.py``. Tapeo's ``ppo`` was replaced
twice on 2026-12-02 and once on 2026-12-07 (docs/results.md): in round 4 the previous network, now
``ppo_v2``, must still make the recorded decisions (``tapeo_ppo_v2_action``, the old
``tapeo_action``); in round 5 round 4's network, now ``ppo_v3``, must still make its recorded
decisions (``tapeo_ppo_v3_action``, round 4's ``tapeo_action``); at round 9's ship round 5's
network, now ``ppo_v4``, must still make its (``tapeo_ppo_v4_action``, round 5's ``tapeo_action``);
at round 11's ship (the same day) round 9's network, now ``ppo_v5``, must still make its
(``tapeo_ppo_v5_action``); at round 13's ship (the same day) round 11's network, now ``ppo_v6``,
must still make its (``tapeo_ppo_v6_action``), and ``tapeo_action`` holds round 13's network's on
the same observations. Ronda Robada's ``ppo`` was replaced on 2026-12-07 by the self-contained
playout-values network (round 2's, docs/results.md): the planner-fed one, now ``ppo_v1``, must still make the recorded decisions
(``robada_ppo_v1_action``, the old ``robada_action``), and ``robada_action`` holds the new one's."""
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


@pytest.mark.parametrize("name", ["ppo_v2", "ppo_v3", "ppo_v4", "ppo_v5", "ppo_v6"])
def test_the_previous_tapeo_networks_renamed_decide_as_recorded(name):
    bot = agents.make("tapeo", name, seed=0)
    obs, masks, want = DATA["tapeo_obs"], DATA["tapeo_mask"], DATA[f"tapeo_{name}_action"]
    got = [bot.act({"observation": o, "action_mask": m}) for o, m in zip(obs, masks)]
    assert np.array_equal(got, want) and not np.array_equal(want, DATA["tapeo_action"])


def test_the_recorded_tapeo_networks_differ_as_counted():
    """The five recorded Tapeo networks' picks on the 504 observations (counted when recorded):
    round 5's network (``ppo_v4``) agrees with round 4's (``ppo_v3``) on 497 and with ``ppo_v2``
    on 441; round 9's (``ppo_v5``) agrees with round 5's on only 378, with round 4's on 373 and
    with ``ppo_v2`` on 382 (the distillation from the search at tables of ``ranking`` moved a
    quarter of the picks); round 11's (``ppo_v6``) agrees with round 9's on 425, round 5's on
    362, round 4's on 359 and ``ppo_v2`` on 342; round 13's ``ppo`` agrees with round 11's on
    465, round 9's on 408, round 5's on 359, round 4's on 354 and ``ppo_v2`` on 336."""
    ppo, v6 = DATA["tapeo_action"], DATA["tapeo_ppo_v6_action"]
    v5, v4 = DATA["tapeo_ppo_v5_action"], DATA["tapeo_ppo_v4_action"]
    v3, v2 = DATA["tapeo_ppo_v3_action"], DATA["tapeo_ppo_v2_action"]
    assert (int((v4 == v3).sum()), int((v4 == v2).sum()), v4.size) == (497, 441, 504)
    assert (int((v5 == v4).sum()), int((v5 == v3).sum()), int((v5 == v2).sum())) == (378, 373, 382)
    assert tuple(int((v6 == v).sum()) for v in (v5, v4, v3, v2)) == (425, 362, 359, 342)
    assert tuple(int((ppo == v).sum()) for v in (v6, v5, v4, v3, v2)) == (465, 408, 359, 354, 336)


@pytest.mark.parametrize("game", ["tapeo", "robada"])
def test_the_expert_decides_as_recorded(game):
    """Asked in the recorded order (its generator draws in the same order), the expert makes the
    recorded decisions. (The games themselves are not replayed from their seeds: since the
    engines share one deal function, hod.core.deal, a seed deals another game than at f3908a6.)"""
    bot = agents.make(game, "expert", seed=1)
    obs, masks, want = DATA[f"{game}_obs"], DATA[f"{game}_mask"], DATA[f"{game}_expert_action"]
    got = [bot.act({"observation": o, "action_mask": m}) for o, m in zip(obs, masks)]
    assert np.array_equal(got, want)


def test_the_previous_robada_network_renamed_decides_as_recorded():
    bot = agents.make("robada", "ppo_v1", seed=0)
    obs, masks, want = DATA["robada_obs"], DATA["robada_mask"], DATA["robada_ppo_v1_action"]
    got = [bot.act({"observation": o, "action_mask": m}) for o, m in zip(obs, masks)]
    assert np.array_equal(got, want) and not np.array_equal(want, DATA["robada_action"])
