"""Ray RLlib training (hod.training.rllib): the next-step vector env, RLlib's episode returns against
the env's payoff, a tiny run on a local Ray bound to 127.0.0.1 (started and shut down by the test),
checkpoint resume, ONNX export and reload as a bot.

The envs raise on any illegal action (``illegal_action="raise"``, the batched tables always raise),
so every sampled episode and the whole run are a check that the masked module plays 0 illegal
actions (test_illegal_action_raises shows that an illegal action does raise).
"""
from __future__ import annotations

import os
import shutil
import tempfile

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
            dealt = env.venv.env.observations()[dones]   # the learner env under the Gymnasium view
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
    """A Ray started by this test on 127.0.0.1 and shut down by its own handle; its session folder
    goes to a temporary folder of its own (not /tmp/ray), removed afterwards. (Not pytest's
    tmp_path: Ray's socket paths under it would pass the 107-byte limit of a Unix socket path.)"""
    import ray

    tmp = tempfile.mkdtemp(prefix="hod_ray_")
    ctx = ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False, _temp_dir=tmp)   # one env runner
    assert ctx.address_info["node_ip_address"] == "127.0.0.1"
    yield ctx
    ray.shutdown()
    shutil.rmtree(tmp, ignore_errors=True)


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
    # 256 total steps are 256 / 128 = 2 iterations of exactly 128 steps (RLlib samples
    # rollout_fragment_length 16 per env slot, 8 slots = 4 tables * 2 learner seats, in 1 runner)
    assert first == 256 and card["algorithm"].startswith("PPO (Ray RLlib")
    assert len(card["pool"]["snapshots"]) == 2          # pool_size = 2 (smoke default is the file's 20: flag)
    # the SB3 trainer's policy diagnostics: a row after the first iteration (step 128) and one of the
    # final policy (step 256; the next periodic one would be at 128 + 20,000); 2,000 probe positions
    import json

    from hod.training.train import PolicyDiagnostics

    rows = json.loads((out / "policy_diagnostics.json").read_text())
    assert [r["steps"] for r in rows] == [128, 256]
    assert all(len(r["saturated"]) == 1 and 0.0 <= r["state_dependence"] <= 1.0 for r in rows)   # net_arch [16]
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    ea = EventAccumulator(str(out / "tb" / "rllib_fast"))
    ea.Reload()
    assert set(PolicyDiagnostics.scalars(rows[0])) == {"policy/state_dependence", "policy/saturated_layer1",
                                                       "policy/unit_std_layer1"}
    for name in PolicyDiagnostics.scalars(rows[0]):
        assert [e.step for e in ea.Scalars(name)] == [128, 256]
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
    # 256 + 128 = 384: exactly one more iteration of 128 steps (in the driver, 0 env runners)
    assert card["training"]["steps"] == 384 and card["training"]["resumed_from"]
    onnx_path, _ = export_onnx(out / "checkpoints" / "final.zip", tmp_path / "export", "tapeo_rllib")
    bot = OnnxPolicy(onnx_path)
    rows = evaluate_policy("tapeo", lambda: OnnxPolicy(onnx_path), ["random"], [2], 4, seed=0)
    assert rows[0]["games"] == 4 and bot.player_counts == (2, 3)
    import ray

    assert ray.is_initialized()   # the runs used the test's Ray (not theirs to stop): still up


@pytest.mark.slow
def test_two_node_cluster_puts_env_runners_on_both_nodes(tmp_path):
    """The cluster path (docs/rllib.md, "On a cluster"): two Ray nodes on this machine (Ray's
    ``Cluster`` helper, 1 CPU each, 127.0.0.1), the trainer joined by the head's address with 2
    env runners, a 2-iteration run. In a process of its own (``tests/_rllib_cluster.py``): the
    nodes and Ray's temp folder are that process's, stopped and removed by their handles."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    from hod.training.checkpoint import read_checkpoint

    script = Path(__file__).parents[1].joinpath("_rllib_cluster.py")
    p = subprocess.Popen([sys.executable, str(script), str(tmp_path / "run")], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=dict(os.environ, RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0"))
    try:
        out, err = p.communicate(timeout=420)
    except subprocess.TimeoutExpired:
        p.terminate()                      # the script stops its nodes on SIGTERM
        out, err = p.communicate(timeout=120)
        pytest.fail(f"the two-node run did not end within 420 s: {err[-3000:]}")
    assert p.returncode == 0, err[-3000:]
    got = json.loads(out.strip().splitlines()[-1])
    # 1 CPU per node and 1 CPU per env runner: one runner on each node, both nodes at 127.0.0.1
    assert got["alive"] == 2 and got["head"] != got["worker"]
    assert sorted(got["runner_nodes"]) == sorted([got["head"], got["worker"]])
    assert got["runner_ips"] == ["127.0.0.1", "127.0.0.1"]
    # one iteration: n_steps * tables * learner_seats * env_runners = 8 * 2 * 2 * 2 = 64 learner
    # steps, so total_steps 128 is 2 iterations
    assert (got["steps"], got["iterations"]) == (128, 2)
    _, card = read_checkpoint(got["checkpoint"], game="tapeo")
    assert card["training"]["steps"] == 128 and card["training"]["rllib"]["env_runners"] == 2
    # nothing of that cluster is left: no process runs from its temp folder, which is removed
    assert not os.path.exists(got["temp"])
    left = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if got["temp"].encode() in f.read():
                    left.append(pid)
        except OSError:
            pass
    assert left == []


def test_command_line(tmp_path, capsys):
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "hod.training.rllib", "--help"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and "--env-runners" in r.stdout and "--address" in r.stdout and "--n-steps" in r.stdout
    # a refused key: one line on stderr, status 2, nothing written (Ray is not started)
    assert main(["--game", "tapeo", "--bc-teacher", "expert", "--out", str(tmp_path / "run")]) == 2
    assert "bc_teacher" in capsys.readouterr().err and not (tmp_path / "run").exists()


@pytest.mark.parametrize("flags, says", [
    # 3 env runners take 3 CPUs (1 each), the local Ray would have 1: refused, not waited for
    (["--env-runners", "3", "--num-cpus", "1"], "need 3 CPUs, the local Ray has 1 (--num-cpus); what fits: "
                                                "--env-runners + --learners <= 1"),
    (["--env-runners", "2", "--learners", "1", "--num-cpus", "2"], "need 3 CPUs, the local Ray has 2"),
    (["--num-cpus", "0"], "--num-cpus 0; legal: an integer in 1..256"),
    (["--num-cpus", "-1"], "--num-cpus -1; legal: an integer in 1..256"),
    # Ray would reserve a 10**9-CPU node (MAX_WORKERS = 256 bounds every count of processes)
    (["--num-cpus", "1000000000"], "--num-cpus 1000000000; legal: an integer in 1..256"),
    (["--env-runners", "257"], "--env-runners 257; legal: an integer in 0..256"),
    (["--num-cpus", "2", "--address", "auto"], "legal: --num-cpus without --address only"),
    (["--bc-epochs", "3"], "bc_epochs: the RLlib trainer has no behaviour-cloning warm start"),
    (["--bc-decisions", "10", "--bc-learning-rate", "0.1"], "bc_decisions, bc_learning_rate: "),
    # port 1 of this machine: nothing listens there; refused within CONNECT_TIMEOUT_S, not after minutes
    (["--address", "127.0.0.1:1"], "--address 127.0.0.1:1: no Ray cluster answers at 127.0.0.1:1"),
    (["--address", "ray://nohost"], "--address 'ray://nohost'; legal: auto, HOST:PORT"),
])
def test_refused_before_ray(tmp_path, capsys, flags, says):
    """Status 2, one line on stderr, nothing written, no Ray started."""
    import ray

    assert main(["--game", "tapeo", "--no-progress", "--out", str(tmp_path / "run")] + flags) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and says in err
    assert not (tmp_path / "run").exists() and not ray.is_initialized()


def test_ctrl_c_during_start_up(tmp_path, monkeypatch, capsys):
    """Ctrl-C while Ray starts: status 130, no traceback, nothing written."""
    def interrupted(self):
        raise KeyboardInterrupt

    monkeypatch.setattr(RLlibTrainer, "start", interrupted)
    assert main(["--game", "tapeo", "--no-progress", "--out", str(tmp_path / "run")]) == 130
    assert "Traceback" not in capsys.readouterr().err and not (tmp_path / "run").exists()


def test_own_ray_cleaned_up_after_a_failed_start(tmp_path, monkeypatch):
    """A local Ray started by the trainer keeps its session in a temporary folder of its own,
    removed with Ray when the run ends (here: building the algorithm fails), and nothing is
    written in the run folder."""
    import ray

    base = tempfile.mkdtemp(prefix="hod_t_")   # short: Ray's socket paths must stay under 107 bytes
    monkeypatch.setattr(tempfile, "tempdir", base)
    seen = []

    def broken(self):
        seen.append((ray.is_initialized(), os.listdir(base)))
        raise RuntimeError("no algorithm")

    monkeypatch.setattr(RLlibTrainer, "algorithm_config", broken)
    cfg = config_mod.smoke_config("tapeo", players=[2], engine="batched", net_arch=[16])
    t = RLlibTrainer("tapeo", cfg, tmp_path / "run", num_cpus=1, progress=False, log=None)
    try:
        with pytest.raises(RuntimeError, match="no algorithm"):
            t.run()
        assert len(seen) == 1 and seen[0][0] and len(seen[0][1]) == 1 and seen[0][1][0].startswith("hod_ray_")
        assert os.listdir(base) == [] and not ray.is_initialized() and not (tmp_path / "run").exists()
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_too_few_cpus_in_a_running_ray(local_ray, tmp_path):
    """Ray already up (the test's, 1 CPU, as a cluster would be): 2 env runners are refused with
    what fits, not waited for; that Ray is left running."""
    import ray

    cfg = config_mod.smoke_config("tapeo", players=[2], engine="batched", net_arch=[16])
    t = RLlibTrainer("tapeo", cfg, tmp_path / "run", env_runners=2, num_cpus=None, progress=False, log=None)
    with pytest.raises(ConfigError, match="need 2 CPUs.* has 1; what fits: --env-runners \\+ --learners <= 1"):
        t.run()
    assert ray.is_initialized() and not (tmp_path / "run").exists()


@pytest.mark.parametrize("flags, says", [
    (["--iterations", "0"], "--iterations 0; legal: an integer >= 1"),
    (["--players", "9"], "legal values: [2, 3, 4, 5, 6]"),    # tapeo.txt: 2 to 6 players
    (["--runners", "-1"], "--runners -1; legal: 0 to "),
])
def test_speed_benchmark_refuses_bad_arguments(tmp_path, capsys, flags, says):
    """hod.benchmarks.rllib_speed: status 2 and one line on stderr before anything runs."""
    from hod.benchmarks.rllib_speed import main as bench_main

    assert bench_main(["--game", "tapeo", "--out", str(tmp_path / "b" / "speed")] + flags) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and says in err
    assert not (tmp_path / "b").exists()


def test_module_built_without_deprecation_warning(caplog):
    """The keyword constructor (RLlib's non-deprecated one) logs no RLModuleConfig deprecation."""
    import logging

    from gymnasium import spaces

    from hod.training.rllib.module import MaskedActorCritic

    obs = spaces.Dict({"observation": spaces.Box(0.0, 1.0, (5,), np.float32),
                       "action_mask": spaces.Box(0, 1, (3,), np.int8)})
    with caplog.at_level(logging.WARNING):
        m = MaskedActorCritic(observation_space=obs, action_space=spaces.Discrete(3), model_config={"net_arch": [4]})
    assert m.action_net.out_features == 3
    assert not [r for r in caplog.records if "RLModuleConfig" in r.getMessage()]


@pytest.mark.parametrize("error", [ConnectionError("Could not find any running Ray instance.\nPlease start one"),
                                   ValueError("bad value"), RuntimeError("")])
def test_ray_start_failure_is_one_line(tmp_path, monkeypatch, capsys, error):
    """``ray.init`` failing (``--address auto`` with no cluster: ConnectionError; a bad setting:
    ValueError): status 2, the first line of Ray's message on one line, nothing written."""
    import ray

    def failing(*args, **kwargs):
        raise error

    monkeypatch.setattr(ray, "init", failing)
    assert main(["--game", "tapeo", "--no-progress", "--address", "auto", "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    first = str(error).splitlines()[0] if str(error) else type(error).__name__
    assert err == f"error: cannot reach the Ray cluster at auto: {type(error).__name__}: {first}\n"
    assert not (tmp_path / "run").exists()
