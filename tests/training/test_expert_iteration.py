"""Expert iteration (hod.training.expert_iteration): targets from hand-worked values, refusals of
bad options, the search bot as a training opponent, and a tiny run of both games end to end."""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from hod import agents
from hod.agents.model_card import CheckpointError
from hod.core.errors import ConfigError
from hod.training import config as C
from hod.training import expert_iteration as X
from hod.training.pool import OpponentPool
from hod.training.table import LearnerTable

NAN = float("nan")

# the tiny PPO phase of the runs below (single-game tables: a search opponent needs them)
TINY_TRAIN = {"engine": "single", "tables": 2, "n_steps": 32, "batch_size": 64, "n_epochs": 1, "net_arch": [32, 32],
              "eval_every": 0, "players": [2], "checkpoint_every": 10_000, "snapshot_every": 64, "pool_size": 10}


def tiny(game: str, **kw) -> dict:
    values = X.load_expit_config(game)
    values.update(iterations=2, decisions=40, distil_epochs=1, ppo_steps=64, train=dict(TINY_TRAIN))
    values.update(kw)
    return values


# ---- targets --------------------------------------------------------------------------------------
def test_search_targets_softmax_of_hand_worked_values():
    q = np.array([[0.9, 0.7, NAN, NAN],      # two candidates searched
                  [NAN, NAN, NAN, NAN],      # a lone candidate, played without search
                  [0.5, 0.5, 0.2, NAN]])     # a tie and a worse one
    mask = np.array([[1, 1, 1, 0], [0, 0, 1, 1], [1, 1, 1, 1]], np.int8)
    act = np.array([0, 3, 1])
    p = X.search_targets(q, mask, act, temperature=0.1)
    # row 0: weights exp(0) = 1 and exp((0.7 - 0.9) / 0.1) = exp(-2) = 0.135335; sum 1.135335
    assert p[0] == pytest.approx([1 / 1.135335, 0.135335 / 1.135335, 0, 0], abs=1e-6)
    assert p[0, 0] == pytest.approx(0.880797, abs=1e-6)
    # row 1: one-hot on the action played
    assert p[1].tolist() == [0, 0, 0, 1]
    # row 2: weights 1, 1, exp(-3) = 0.049787; sum 2.049787
    assert p[2] == pytest.approx([1 / 2.049787, 1 / 2.049787, 0.049787 / 2.049787, 0], abs=1e-6)
    assert p.dtype == np.float32 and np.allclose(p.sum(axis=1), 1)
    # with the current policy as a prior, logits [0, ln 3]: weights 1 and 3 * exp(-2) = 0.406006
    prior = np.log(np.array([[1.0, 3.0, 1.0, 1.0]] * 3))
    pp = X.search_targets(q, mask, act, temperature=0.1, prior_logits=prior)
    assert pp[0] == pytest.approx([1 / 1.406006, 0.406006 / 1.406006, 0, 0], abs=1e-6)
    assert pp[1].tolist() == [0, 0, 0, 1]   # no values: still the action played
    # a high temperature flattens, a low one approaches the argmax
    assert X.search_targets(q[:1], mask[:1], act[:1], 1000.0)[0, :2] == pytest.approx([0.5, 0.5], abs=1e-3)
    assert X.search_targets(q[:1], mask[:1], act[:1], 0.001)[0].tolist() == [1, 0, 0, 0]


def test_value_targets_best_candidate_or_return():
    q = np.array([[0.9, 0.7, NAN], [NAN, NAN, NAN]])
    ret = np.array([1.0, -1.0])
    # search: the best candidate's value 0.9; the row without search falls back to the return
    # times the reward scale: -1 * 0.5 = -0.5
    assert X.value_targets(q, ret, "search", 0.5).tolist() == pytest.approx([0.9, -0.5])
    assert X.value_targets(q, ret, "return", 0.5).tolist() == pytest.approx([0.5, -0.5])


@pytest.mark.parametrize("temperature", [0, -0.1, NAN, math.inf, True, "0.1"])
def test_search_targets_refuse_bad_temperature(temperature):
    with pytest.raises(ConfigError, match="legal values are finite numbers > 0"):
        X.search_targets(np.zeros((1, 2)), np.ones((1, 2)), np.zeros(1, int), temperature)


def test_search_targets_refuse_values_on_illegal_actions_and_bad_shapes():
    with pytest.raises(ConfigError, match="illegal action"):
        X.search_targets(np.array([[0.1, 0.2]]), np.array([[1, 0]]), np.array([0]), 0.1)
    with pytest.raises(ConfigError, match=r"must be \(N, A\)"):
        X.search_targets(np.zeros((2, 3)), np.ones((2, 2)), np.zeros(2, int), 0.1)
    with pytest.raises(ConfigError, match="legal values are"):
        X.value_targets(np.zeros((1, 2)), np.zeros(1), "argmax")



def test_clarity_weights_from_hand_worked_gaps():
    q = np.array([[0.9, 0.7, NAN],      # gap 0.2 = one noise: erf(1 / sqrt 2) = 0.682689
                  [0.5, 0.5, 0.2],      # the two best tie: 0
                  [NAN, NAN, NAN],      # played without search: 1
                  [NAN, 0.3, NAN]])     # one candidate only: 1
    w = X.clarity_weights(q, 0.2)
    # raw [0.682689, 0, 1, 1], mean 2.682689 / 4 = 0.670672
    assert w == pytest.approx([0.682689 / 0.670672, 0, 1 / 0.670672, 1 / 0.670672], abs=1e-5)
    assert w.dtype == np.float32 and w.mean() == pytest.approx(1.0)
    # two noises: erf(2 / sqrt 2) = 0.954500; the row is the only one, so its weight is 1 after scaling
    assert X.clarity_weights(np.array([[0.9, 0.5]]), 0.2).tolist() == [1.0]
    assert X.clarity_weights(np.array([[0.9, 0.5], [0.9, 0.9]]), 0.2) == pytest.approx([2.0, 0.0])
    assert X.clarity_weights(np.array([[0.9, 0.9]]), 0.2).tolist() == [1.0]   # nothing to weigh: all 1


@pytest.mark.parametrize("noise", [0, -0.1, NAN, math.inf, True, "0.1"])
def test_clarity_weights_refuse_bad_noise(noise):
    with pytest.raises(ConfigError, match="legal values are finite numbers > 0"):
        X.clarity_weights(np.zeros((1, 2)), noise)


def _tiny_model():
    from sb3_contrib import MaskablePPO

    from hod.training.single_agent import SingleAgentEnv

    env = SingleAgentEnv("robada", num_players=2, opponents="random")
    return MaskablePPO("MlpPolicy", env, seed=0, policy_kwargs=dict(net_arch=[16, 16]))


def test_distillation_weights_scale_each_decisions_policy_loss():
    import torch

    from hod.training.imitation import behaviour_clone, collect_teacher_decisions

    data = collect_teacher_decisions("robada", "greedy", [2], 64, seed=2)

    def fit(weight, vf_coef=0.5):
        model = _tiny_model()
        d = dict(data) if weight is None else {**data, "weight": weight}
        behaviour_clone(model, d, epochs=2, learning_rate=1e-3, batch_size=32, vf_coef=vf_coef, seed=0)
        return [p.detach().clone() for p in model.policy.parameters()]

    start = [p.detach().clone() for p in _tiny_model().policy.parameters()]
    plain = fit(None)
    ones = fit(np.ones(64, np.float32))
    assert all(torch.equal(a, b) for a, b in zip(plain, ones))          # weight 1: bit for bit unweighted
    zeros = fit(np.zeros(64, np.float32), vf_coef=0.0)               # no loss at all: Adam steps of 0
    assert all(torch.equal(a, b) for a, b in zip(start, zeros))
    moved = fit(np.ones(64, np.float32), vf_coef=0.0)
    assert not all(torch.equal(a, b) for a, b in zip(start, moved))
    with pytest.raises(ConfigError, match="finite numbers >= 0"):
        fit(np.full(64, -1.0, np.float32))
    with pytest.raises(ConfigError, match=r"must be \(N,\)"):
        fit(np.ones(63, np.float32))

# ---- the search bot's choice with its values --------------------------------------------------------
def test_decide_plays_what_act_plays_and_returns_the_values():
    import tapeo_env

    env = tapeo_env.raw_env(num_players=2)
    env.reset(seed=3)
    state = env.unwrapped.game_state
    obs = env.observe("player_0")

    def belief(rng):
        return tapeo_env.sample_consistent_state(state, 0, rng)

    a = agents.make("tapeo", "search", seed=5, determinizations=2)
    b = agents.make("tapeo", "search", seed=5, determinizations=2)
    action, values = a.decide(obs, belief)
    assert action == b.act(obs, belief)
    legal = set(np.flatnonzero(obs["action_mask"]).tolist())
    assert set(values) == legal and action in legal    # every legal kind is a candidate at the defaults
    assert values[action] == max(values.values())


# ---- the search bot as a training opponent -----------------------------------------------------------
def test_pool_refuses_search_bots_without_beliefs():
    with pytest.raises(ConfigError, match="search bots"):
        OpponentPool("tapeo", ["search"])


def test_single_game_tables_give_search_opponents_beliefs():
    pool = OpponentPool("tapeo", ["search"], p_latest=0, p_past=0, p_heuristic=1, search_bots=True,
                        options={"search": {"determinizations": 2}})
    table = LearnerTable("tapeo", 2, 1, pool)
    rng = np.random.default_rng(0)
    obs = table.reset(rng)
    assert table.opponent_labels == {a: "heuristic:search" for a in table.opponent_labels}
    assert table.bot_of[next(iter(table.bot_of))].determinizations == 2
    done = False
    while not done:   # the search opponent asks for beliefs at every pick with two or more kinds
        step = table.step([int(np.flatnonzero(o["action_mask"])[0]) for o in obs])
        obs, done = step.observations, step.done
    assert table.decisions > 5


def test_training_config_search_heuristic_needs_single_tables():
    cfg = C.smoke_config("tapeo", engine="batched", tables=6, heuristics=["expert", "search"])
    with pytest.raises(ConfigError, match="whose tables give search bots belief samples"):
        C.validate_config("tapeo", cfg)
    cfg = C.smoke_config("tapeo", heuristics=["search"], heuristic_options={"search": {"depth": 3}})
    with pytest.raises(ConfigError, match="unknown option"):
        C.validate_config("tapeo", cfg)


# ---- bad options -------------------------------------------------------------------------------------
@pytest.mark.parametrize("game, change, message", [
    ("tapeo", {"teacher": "expert"}, "legal values are the bots of tapeo that give action values: ['search']"),
    ("robada", {"own_playout": True}, "takes no playout network"),
    ("tapeo", {"temperature": 0.0}, "temperature=0.0"),
    ("robada", {"clarity_noise": -0.1}, "clarity_noise=-0.1"),
    ("tapeo", {"value_target": "argmax"}, "legal values: 'search' or 'return'"),
    ("tapeo", {"search_opponent": "greedy"}, "legal values are \"\" or the search bots"),
    ("tapeo", {"init": "no/such/file.onnx"}, "an existing .zip checkpoint or .onnx export"),
    ("tapeo", {"iterations": 0}, "iterations=0"),
    ("tapeo", {"decisions": 1.5}, "decisions=1.5"),
    ("tapeo", {"train": {"engine": "batched"}}, "whose tables give search bots belief samples"),
    ("tapeo", {"train": {"gamma": 2.0}}, "gamma=2.0"),
    ("tapeo", {"train": {"no_such_key": 1}}, "unknown config key 'no_such_key'"),
    ("tapeo", {"colour": "red"}, "unknown config key 'colour'"),
    ("tapeo", {"teacher_options": {"depth": 2}}, "unknown option"),
    ("tapeo", {"teacher_opponent": ["ranking", "nobody"]}, "'nobody' is not a bot of tapeo"),
    ("tapeo", {"teacher_opponent": ["expert", "expert"]}, "names a bot twice; legal: each bot once"),
    ("tapeo", {"teacher_opponent": ["expert", "ranking"], "decisions": 1}, "legal: decisions >= 2"),
])
def test_bad_options_refused(game, change, message, tmp_path):
    values = tiny(game)
    values.update(change)
    with pytest.raises(ConfigError) as e:
        X.ExpertIteration(game, values, tmp_path / "run", log=None)
    assert message in str(e.value)
    assert not (tmp_path / "run").exists()


def test_cli_bad_option_exits_2(tmp_path, capsys):
    assert X.main(["--game", "tapeo", "--out", str(tmp_path / "r"), "--temperature", "-1"]) == 2
    assert "temperature=-1.0" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_onnx_init_refuses_another_network(tmp_path):
    values = tiny("tapeo", init="agents/opponents/tapeo_ppo.onnx")   # [256, 256]; the tiny run is [32, 32]
    with pytest.raises(CheckpointError, match="differ from the policy's"):
        X.ExpertIteration("tapeo", values, tmp_path, log=None).run()


# ---- tiny runs end to end ------------------------------------------------------------------------------
def test_tiny_tapeo_run_end_to_end(tmp_path):
    values = tiny("tapeo", teacher_options={"determinizations": 2}, search_opponent_options={"determinizations": 2},
                  policy_prior=True)
    summary = X.ExpertIteration("tapeo", values, tmp_path, log=None).run()
    assert [r["iteration"] for r in summary["iterations"]] == [0, 1]
    it0, it1 = summary["iterations"]
    assert it0["distil"]["decisions"] == 40 and 0 < it0["distil"]["searched"] <= 40
    # iteration 1 searches over iteration 0's network, which also joined the pool
    assert it1["distil"]["teacher_options"]["playout_model"] == it0["export"]
    card = json.loads((tmp_path / "iter_1" / "checkpoints" / "final.json").read_text())
    assert "expit_0" in card["pool"]["snapshots"] and it1["distil"]["policy_prior"] is True
    assert "search" in card["pool"]["heuristics"]
    assert card["pool"]["heuristic_options"]["search"]["playout_model"] == it0["export"]
    assert card["training"]["imitation"]["expert_iteration"] == 1
    assert it1["ppo"]["steps"] > it0["ppo"]["steps"] >= 64
    assert json.loads((tmp_path / "expit.json").read_text()) == summary
    bot = agents.onnx_policy.OnnxPolicy(summary["final_export"], game="tapeo")
    assert bot.model_card["player_counts"] == [2]


def test_no_ppo_phase_evaluates_and_exports_the_distilled_network(tmp_path):
    """ppo_steps 0: the iteration trains no PPO step; the distilled network is evaluated once
    (eval_every > 0: one row per baseline at step 0), checkpointed (the card's step count stays 0)
    and exported."""
    train = {**TINY_TRAIN, "eval_every": 1000, "eval_games": 4, "baselines": ["random"], "eval_players": [2]}
    values = tiny("tapeo", iterations=1, ppo_steps=0, teacher_options={"determinizations": 2},
                  search_opponent="", search_opponent_options={}, train=train)
    summary = X.ExpertIteration("tapeo", values, tmp_path, log=None).run()
    (it0,) = summary["iterations"]
    assert it0["ppo"]["steps"] == 0 and not it0["ppo"]["interrupted"]
    rows = json.loads((tmp_path / "iter_0" / "eval.json").read_text())
    assert [(r["steps"], r["baseline"]) for r in rows] == [(0, "random")]
    card = json.loads((tmp_path / "iter_0" / "checkpoints" / "final.json").read_text())
    assert card["training"]["steps"] == 0 and card["training"]["imitation"]["expert_iteration"] == 0
    assert Path(summary["final_export"]).is_file()
    with pytest.raises(ConfigError, match="legal: iterations=1 with ppo_steps=0"):
        X.validate("tapeo", {**values, "iterations": 2})


def test_tiny_robada_run_gives_a_self_contained_export(tmp_path):
    """The Ronda Robada network reads the plain observation: its export runs on onnxruntime and
    numpy alone, in a process that imports no project code."""
    values = tiny("robada", iterations=1, decisions=30, teacher_options={"determinizations": 1, "candidates": 2},
                  train={**TINY_TRAIN, "obs_encoder": "none"})
    summary = X.ExpertIteration("robada", values, tmp_path, log=None).run()
    card = json.loads((tmp_path / "iter_0" / "checkpoints" / "final.json").read_text())
    assert card["obs_encoder"] == "none" and card["obs_size"] == 192
    import robada_env

    env = robada_env.raw_env(num_players=2)
    env.reset(seed=4)
    o = env.observe(env.agent_selection)
    np.save(tmp_path / "obs.npy", o["observation"][None])
    np.save(tmp_path / "mask.npy", o["action_mask"][None])
    script = textwrap.dedent(f"""
        import os, sys
        sys.path = [p for p in sys.path
                    if not any(os.path.isdir(os.path.join(p, d)) for d in ('hod', 'robada_env', 'agents'))]
        import numpy as np, onnxruntime as ort
        s = ort.InferenceSession({summary['final_export']!r}, providers=['CPUExecutionProvider'])
        obs = np.load({str(tmp_path / 'obs.npy')!r}, allow_pickle=False)
        mask = np.load({str(tmp_path / 'mask.npy')!r}, allow_pickle=False)
        action, logits = s.run(None, {{'observation': obs, 'action_mask': mask}})
        mods = sorted(m for m in sys.modules if m.split('.')[0] in ('hod', 'robada_env', 'tapeo_env'))
        print(int(action[0]), mods)
    """)
    env_vars = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    res = subprocess.run([sys.executable, "-I", "-c", script], capture_output=True, text=True, cwd=tmp_path,
                         env=env_vars, timeout=120)
    assert res.returncode == 0, res.stderr
    action, mods = res.stdout.split(" ", 1)
    assert o["action_mask"][int(action)] == 1 and mods.strip() == "[]"


def test_onnx_actor_loads_into_the_policy(tmp_path):
    """iteration 0 from an export: the torch actor then gives the export's logits."""
    import torch

    from hod.agents.onnx_policy import OnnxPolicy

    values = tiny("tapeo", init="agents/opponents/tapeo_ppo.onnx", train={**TINY_TRAIN, "net_arch": [256, 256]})
    run = X.ExpertIteration("tapeo", values, tmp_path, log=None)
    from hod.training.train import Trainer

    t = Trainer("tapeo", X.training_config("tapeo", run.cfg, 0), tmp_path / "t", progress=False, log=None)
    run._load_init(t.model)
    ref = OnnxPolicy("agents/opponents/tapeo_ppo.onnx", game="tapeo")
    rng = np.random.default_rng(0)
    obs = rng.random((8, 157)).astype(np.float32)
    mask = np.ones((8, 10), np.int8)
    _, want = ref.run(obs, mask)
    with torch.no_grad():
        got = t.model.policy.get_distribution(torch.as_tensor(obs)).distribution.logits
        got = got - got.logsumexp(dim=1, keepdim=True)
    want = torch.as_tensor(want).log_softmax(dim=1)
    assert np.allclose(got.numpy(), want.numpy(), atol=1e-4)


def test_robada_expert_gives_its_planner_values():
    """Ronda Robada's expert is a value teacher: its choice is act's, its values the best plan's / 100."""
    import robada_env

    from robada_env.rules.observation import decode

    env = robada_env.raw_env(num_players=2)
    env.reset(seed=1)
    a = agents.make("robada", "expert", seed=2)
    b = agents.make("robada", "expert", seed=2)
    seen = 0
    for _ in range(40):
        agent = env.agent_selection
        o = env.observe(agent)
        action, values = a.decide(o)
        assert action == b.act(o)
        legal = np.flatnonzero(o["action_mask"]).tolist()
        if len(legal) > 1:
            view = decode(o["observation"])
            plans = a.plans(view, legal)
            best = max(a.evaluate(view, p) for p in plans if p.action == action)
            assert values[action] == pytest.approx(best / 100) and set(values) <= set(legal)
            seen += 1
        else:
            assert values == {}
        env.step(action)
    assert seen > 10


def test_teacher_against_an_opponent_records_only_its_own_decisions():
    """With ``opponents`` the teacher plays one seat and only its decisions are recorded: against
    random bots the expert wins almost every game, so (win/loss reward, gamma 1, 2 players) nearly
    every recorded value target is its +1; with the teacher in both seats the two seats' +1 and -1
    balance out."""
    from hod.training.imitation import collect_teacher_decisions

    kw = dict(game="robada", teacher="expert", player_counts=[2], num_decisions=600, seed=3,
              reward_scheme="win_loss", gamma=1.0, action_values=True)
    alone = collect_teacher_decisions(opponents="random", **kw)
    both = collect_teacher_decisions(**kw)
    assert set(np.unique(alone["value_target"])) <= {-1.0, 0.0, 1.0}
    assert alone["value_target"].mean() > 0.6
    assert abs(both["value_target"].mean()) < 0.3
    with pytest.raises(ConfigError, match="no bot 'nobody'"):
        collect_teacher_decisions(opponents="nobody", **kw)


# ---- the teacher against several opponents ---------------------------------------------------------------
def test_decisions_split_evenly_among_the_opponents():
    # 800,000 = 400,000 + 400,000; 10 = 4 + 3 + 3 (the first gets the remainder); none: every seat
    assert X.split_decisions(["ranking", "expert"], 800_000) == [("ranking", 400_000), ("expert", 400_000)]
    assert X.split_decisions(["a", "b", "c"], 10) == [("a", 4), ("b", 3), ("c", 3)]
    assert X.split_decisions([], 7) == [("", 7)]


@pytest.mark.parametrize("given, want", [("", []), ("ranking", ["ranking"]), (["greedy", "expert"], ["greedy", "expert"]),
                                         ([""], [])])   # [""]: the command line's --teacher-opponent ''
def test_a_single_opponent_name_still_reads_as_a_list(given, want):
    # the TOML files and cards before the list held one name ("" = none)
    assert X.validate("tapeo", tiny("tapeo", teacher_opponent=given)).teacher_opponent == want


def test_two_opponents_record_apart_and_concatenate(tmp_path, monkeypatch):
    """Two opponents: one recording each (half the decisions, the same seed, the opponent's own
    cache key), concatenated in the order given; reading one opponent's part again hits its cache
    entry (the key is the opponent's, not the list's), and the two parts are different games."""
    from hod.training import imitation

    calls, parts = [], []
    real = imitation.cached_teacher_decisions

    def spy(cache_dir, **kw):
        calls.append(dict(kw))
        parts.append(real(cache_dir, **kw))
        return parts[-1]

    monkeypatch.setattr(imitation, "cached_teacher_decisions", spy)
    cache = tmp_path / "cache"
    values = tiny("tapeo", iterations=1, ppo_steps=0, decisions=24, teacher_opponent=["ranking", "greedy"],
                  teacher_options={"determinizations": 2}, search_opponent="", search_opponent_options={},
                  cache_dir=str(cache), train={**TINY_TRAIN, "eval_every": 0})
    summary = X.ExpertIteration("tapeo", values, tmp_path / "run", log=None).run()
    (it0,) = summary["iterations"]
    assert [(c["opponents"], c["num_decisions"]) for c in calls] == [("ranking", 12), ("greedy", 12)]
    assert calls[0]["seed"] == calls[1]["seed"]
    assert it0["distil"]["decisions"] == 24 and it0["distil"]["teacher_opponent"] == ["ranking", "greedy"]
    # the distilled data are both parts: its searched count is the sum of theirs
    assert it0["distil"]["searched"] == sum(int(np.isfinite(q["action_values"]).any(axis=1).sum()) for q in parts)
    assert len(list(cache.glob("bc_*.npz"))) == 2                      # one recording per opponent
    again = real(str(cache), **calls[0])                               # the ranking part alone
    assert len(list(cache.glob("bc_*.npz"))) == 2                      # read back, nothing recorded
    assert np.array_equal(again["observation"], parts[0]["observation"])
    assert parts[0]["observation"].shape == parts[1]["observation"].shape == (12, 157)
    assert not np.array_equal(parts[0]["observation"], parts[1]["observation"])


def test_the_cache_folder_is_named_as_the_caller_names_it(tmp_path):
    # expert iteration's --cache-dir was reported as the training key bc_cache_dir
    from hod.training import imitation

    f = tmp_path / "afile"
    f.write_text("")
    with pytest.raises(ConfigError, match=r"^--cache-dir='.*afile' is not a usable directory: .*; legal: a folder"):
        imitation.cached_teacher_decisions(str(f), cache_label="--cache-dir", game="tapeo")
    with pytest.raises(ConfigError, match=r"^bc_cache_dir='.*afile' is not a usable directory"):
        imitation.cached_teacher_decisions(str(f), game="tapeo")
