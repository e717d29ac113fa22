"""Behaviour-cloning warm start (training.imitation)."""
import numpy as np
import pytest

from hod_common.errors import ConfigError
from training import config as config_mod
from training.imitation import behaviour_clone, collect_teacher_decisions


def test_teacher_decisions_are_legal_and_value_targets_are_final_rewards():
    data = collect_teacher_decisions("robada", "greedy", [2], 300, seed=3, reward_scheme="win_loss", gamma=1.0)
    n = len(data["action"])
    assert n == 300
    assert data["observation"].shape == (300, 192) and data["observation"].dtype == np.float32
    assert data["action_mask"].shape == (300, 27) and data["action_mask"].dtype == np.int8
    # every recorded action is legal under its own mask
    assert data["action_mask"][np.arange(n), data["action"]].all()
    # 2 players, win_loss, gamma 1: each target is the seat's final reward, +1, -1 or 0 (a tie)
    assert set(np.unique(data["value_target"])) <= {-1.0, 0.0, 1.0}


def test_discounted_targets_shrink_with_the_decisions_left():
    # gamma 0.5: a seat's decision with k later decisions of its own gets reward * 0.5**k, so
    # within one game the targets of a winner are 1/2**k, never above its final reward 1.
    data = collect_teacher_decisions("tapeo", "greedy", [2], 18, seed=0, gamma=0.5)
    # Tapeo 2 players: 10 tapas a hand, 9 decisions per round, 27 per seat; the first 18 decisions
    # alternate seats (seat 0 then 1 each pick), so they hold the picks 1..9 of round 1 of both seats
    # with 26 - j decisions left after pick j of a seat: |target| = 0.5 ** (26 - j) (or 0 on a tie).
    t = np.abs(data["value_target"])
    expected = np.repeat([0.5 ** (26 - j) for j in range(9)], 2)
    assert t.any()  # this seeded game is not a tie
    assert np.allclose(t, expected)


def test_behaviour_cloning_fits_the_teacher():
    from sb3_contrib import MaskablePPO

    from training.single_agent import SingleAgentEnv

    env = SingleAgentEnv("robada", num_players=2, opponents="random")
    model = MaskablePPO("MlpPolicy", env, seed=0, policy_kwargs=dict(net_arch=[64, 64]))
    data = collect_teacher_decisions("robada", "greedy", [2], 2000, seed=1)
    before = behaviour_clone(model, {k: v[:1] for k, v in data.items()}, 1, 1e-9)["accuracy"]
    stats = behaviour_clone(model, data, epochs=8, learning_rate=3e-3, batch_size=256)
    # greedy is a deterministic function of the observation (up to seeded tie-breaks): a small
    # network fits most of its decisions, far above a random network's agreement
    assert stats["accuracy"] > 0.8
    assert before in (0.0, 1.0)
    with pytest.raises(ConfigError):
        behaviour_clone(model, data, epochs=0, learning_rate=1e-3)


def test_config_refuses_an_unknown_teacher():
    cfg = config_mod.override_keys(config_mod.load_config("robada"), {"bc_teacher": "grandmaster"})
    with pytest.raises(ConfigError, match="grandmaster"):
        config_mod.validate_config("robada", cfg)
