"""Ray RLlib training (hod.training.rllib): the next-step vector env, RLlib's episode returns against
the env's payoff, a tiny run on a local Ray bound to 127.0.0.1 (started and shut down by the test),
checkpoint resume, ONNX export and reload as a bot.

The envs raise on any illegal action (``illegal_action="raise"``, the batched tables always raise),
so every sampled episode and the whole run are a check that the masked module plays 0 illegal
actions (test_illegal_action_raises shows that an illegal action does raise).
"""
from __future__ import annotations

import os

import numpy as np
import pytest

# Ray reads this when it is imported: 0 makes a local Ray use the loopback address 127.0.0.1 (the
# test's Ray is then reachable from this machine only). No other test module imports Ray.
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
pytest.importorskip("ray.rllib")

from hod.core.errors import ConfigError, IllegalActionError  # noqa: E402
from hod.training import config as config_mod  # noqa: E402
from hod.training.rllib.envs import PoolVectorEnv  # noqa: E402
from hod.training.rllib.train import RLlibTrainer, main  # noqa: E402


def _fast_config(game, players, learner_seats, tables, heuristics=("random",)):
    return dict(game=game, players=list(players), learner_seats=learner_seats,
                env_options={"reward_scheme": "points", "illegal_action": "raise"}, seed=3, reward_scale=1.0,
                obs_encoder="none", heuristics=list(heuristics), pool_size=2, p_latest=0.5, p_past=0.3,
                p_heuristic=0.2, opponent_deterministic=False, num_envs=tables * learner_seats)


def _random_actions(rng, masks):
    return np.array([rng.choice(np.flatnonzero(m)) for m in masks])


def test_tapeo_next_step_autoreset_holds_the_new_game():
    # tapeo.txt: 2 players are dealt 10 tapas a round, the last one is revealed on its own, so a
    # round is 9 picks and the game (three rounds) 3 * 9 = 27 learner steps. Next-step autoreset:
    # step 27 ends every game (terminated, last observation, mask all ones), step 28 only shows the
    # new game (reward 0, not done: it is held), so the second game ends on step 28 + 27 = 55.
    env = PoolVectorEnv(_fast_config("tapeo", [2], 2, 3))
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    returns = np.zeros(6)
    ends = []
    for t in range(1, 56):
        obs, rewards, dones, truncs, infos = env.step(_random_actions(rng, obs["action_mask"]))
        returns += rewards
        assert not truncs.any()
        if t == 28:
            assert not dones.any() and (rewards == 0).all()
        if dones.any():
            assert dones.all()
            ends.append(t)
            assert (obs["action_mask"] == 1).all()
            # points scheme: the return of each learner seat is its final score
            np.testing.assert_array_equal(returns, infos["final_score"])
            returns[:] = 0
    assert ends == [27, 55]


def test_robada_held_game_does_not_move():
    # A game dealt on the step that ended the previous one waits one step: the observation shown
    # on the next step is the one dealt, reward 0, not done.
    env = PoolVectorEnv(_fast_config("robada", [2, 3], 1, 4))
    obs, _ = env.reset(seed=1)
    rng = np.random.default_rng(1)
    checked = 0
    for _ in range(400):
        obs, rewards, dones, _, _ = env.step(_random_actions(rng, obs["action_mask"]))
        if dones.any():
            dealt = env.venv.core.observations()[dones]
            held = dones.copy()
            obs, rewards, dones, _, _ = env.step(_random_actions(rng, obs["action_mask"]))
            np.testing.assert_array_equal(obs["observation"][held], dealt)
            assert (rewards[held] == 0).all() and not dones[held].any()
            checked += int(held.sum())
    assert checked >= 4


def test_illegal_action_raises():
    env = PoolVectorEnv(_fast_config("tapeo", [2], 1, 1))
    obs, _ = env.reset(seed=0)
    illegal = int(np.flatnonzero(obs["action_mask"][0] == 0)[0])
    with pytest.raises(IllegalActionError):
        env.step(np.array([illegal]))


def test_refused_settings():
    cfg = config_mod.smoke_config("tapeo", players=[2], engine="batched")
    with pytest.raises(ConfigError, match="bc_teacher"):
        RLlibTrainer("tapeo", config_mod.override_keys(cfg, {"bc_teacher": "expert"}), "runs/x", log=None)
    with pytest.raises(ConfigError, match="legal: 'batched'"):
        RLlibTrainer("tapeo", config_mod.override_keys(cfg, {"engine": "single"}), "runs/x", log=None)
    with pytest.raises(ConfigError, match="legal values"):
        RLlibTrainer("tapeo", cfg, "runs/x", path="agents", log=None)


def test_episode_returns_equal_the_payoff():
    """RLlib's own env runners (no Ray needed): every seat's return equals its final score."""
    from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner
    from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner

    # per-agent path, Ronda Robada: RLlib's PettingZooEnv; the seat that did not act last gets its
    # final reward when PettingZoo steps it out (both seats checked in every game)
    cfg = config_mod.smoke_config("robada", players=[2], tables=2, reward_scheme="points", net_arch=[16])
    runner = MultiAgentEnvRunner(config=RLlibTrainer("robada", cfg, "runs/x", path="per-agent",
                                                     log=None).algorithm_config())
    episodes = runner.sample(num_episodes=3, explore=True)
    seats = 0
    for ep in episodes:
        for aid, sa in ep.agent_episodes.items():
            assert sa.get_return() == sa.get_infos(-1)["final_score"]
            seats += 1
    assert seats == 6
    # fast path, Tapeo: two learner seats per table; a 2-player game is 27 learner steps (above)
    cfg = config_mod.smoke_config("tapeo", players=[2], tables=2, learner_seats=2, reward_scheme="points",
                                  engine="batched", net_arch=[16])
    runner = SingleAgentEnvRunner(config=RLlibTrainer("tapeo", cfg, "runs/x", log=None).algorithm_config())
    done = [e for e in runner.sample(num_timesteps=4 * 27 + 8, explore=True) if e.is_done]
    assert len(done) == 4 and all(len(e) == 27 for e in done)
    for e in done:
        assert e.get_return() == e.get_infos(-1)["final_score"]


@pytest.fixture
def local_ray():
    """A Ray started by this test on 127.0.0.1 and shut down by its own handle."""
    import ray

    ctx = ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)   # one env runner
    assert ctx.address_info["node_ip_address"] == "127.0.0.1"
    yield ctx
    ray.shutdown()


@pytest.mark.slow
def test_tiny_run_resume_export_reload(local_ray, tmp_path):
    from hod.agents.onnx_policy import OnnxPolicy
    from hod.training.evaluate import evaluate_policy
    from hod.training.export import export_onnx

    out = tmp_path / "run"
    common = ["--game", "tapeo", "--players", "2", "3", "--tables", "4", "--n-steps", "16", "--batch-size", "64",
              "--n-epochs", "1", "--net-arch", "16", "--snapshot-every", "64", "--checkpoint-every", "100000",
              "--eval-every", "0", "--heuristics", "greedy", "random", "--no-progress", "--out", str(out)]
    # the first run samples in one remote env runner (the pool travels to it), the resumed one in the driver
    assert main(common + ["--total-steps", "256", "--env-runners", "1"]) == 0
    # one iteration is n_steps * tables * learner_seats = 16 * 4 * 2 = 128 learner steps
    from hod.training.checkpoint import read_checkpoint

    _, card = read_checkpoint(out / "checkpoints" / "final.zip", game="tapeo")
    first = card["training"]["steps"]
    assert first >= 256 and card["algorithm"].startswith("PPO (Ray RLlib")
    assert len(card["pool"]["snapshots"]) == 2          # pool_size = 2 (smoke default is the file's 20: flag)
    # resume: the learner starts from the checkpoint's actor (weights equal, not just similar)
    from hod.training.checkpoint import load_checkpoint
    from hod.training.policy_io import to_numpy_policy

    saved = to_numpy_policy(load_checkpoint(out / "checkpoints" / "latest.zip")[0].policy)
    resumed = RLlibTrainer("tapeo", config_mod.smoke_config("tapeo", players=[2, 3], tables=4, net_arch=[16],
                                                            engine="batched"),
                           tmp_path / "probe", resume=out / "checkpoints" / "latest.zip", log=None)
    resumed.start()
    try:
        got = resumed.numpy_policy()
    finally:
        resumed.close()
    for (w, b), (w2, b2) in zip(saved.layers + [saved.head], got.layers + [got.head]):
        np.testing.assert_array_equal(w, w2)
        np.testing.assert_array_equal(b, b2)
    assert main(common + ["--total-steps", str(first + 128), "--resume",
                          str(out / "checkpoints" / "latest.zip")]) == 0
    _, card = read_checkpoint(out / "checkpoints" / "final.zip", game="tapeo")
    assert card["training"]["steps"] >= first + 128 and card["training"]["resumed_from"]
    onnx_path, _ = export_onnx(out / "checkpoints" / "final.zip", tmp_path / "export", "tapeo_rllib")
    bot = OnnxPolicy(onnx_path)
    rows = evaluate_policy("tapeo", lambda: OnnxPolicy(onnx_path), ["random"], [2], 4, seed=0)
    assert rows[0]["games"] == 4 and bot.player_counts == (2, 3)
    assert not os.environ.get("RAY_ADDRESS")   # the test's own Ray, not a cluster


def test_command_line(tmp_path, capsys):
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "hod.training.rllib", "--help"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and "--env-runners" in r.stdout and "--address" in r.stdout and "--n-steps" in r.stdout
    # a refused key: one line on stderr, status 2, nothing written (Ray is not started)
    assert main(["--game", "tapeo", "--bc-teacher", "expert", "--out", str(tmp_path / "run")]) == 2
    assert "bc_teacher" in capsys.readouterr().err and not (tmp_path / "run").exists()
