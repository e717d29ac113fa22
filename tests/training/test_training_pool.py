"""The opponent pool's prioritized fictitious self-play (``pool_weighting = "pfsp"``): the weights
worked out by hand, the results the batched Tapeo env reports, the default scheme unchanged."""
from __future__ import annotations

import numpy as np
import pytest

from hod.core.errors import ConfigError
from hod.training import config as C
from hod.training.learner_env import make_learner_vec_env
from hod.training.numpy_policy import NumpyPolicy
from hod.training.pool import BatchOpponents, OpponentPool

OBS = 157   # Tapeo observation v1
ACTIONS = 10


def _net(seed: int = 0) -> NumpyPolicy:
    r = np.random.default_rng(seed)
    return NumpyPolicy([(r.normal(size=(8, OBS)).astype(np.float32), np.zeros(8, np.float32))],
                       (r.normal(size=(ACTIONS, 8)).astype(np.float32), np.zeros(ACTIONS, np.float32)))


def _pool(**kw) -> OpponentPool:
    # latest 0.5, heuristics 0.5 split between ranking and greedy (0.25 each)
    p = OpponentPool("tapeo", ["ranking", "greedy"], 5, p_latest=0.5, p_past=0.0, p_heuristic=0.5, **kw)
    p.update_latest(_net())
    return p


def test_pfsp_weights_worked_out_by_hand():
    p = _pool(weighting="pfsp", pfsp_exponent=2.0, pfsp_prior=4.0)
    # no refresh yet: every factor is (1/2)^2, so the weights are the categories' shares
    assert p.member_weights() == {"latest": 0.5, "heuristic:ranking": 0.25, "heuristic:greedy": 0.25}
    for s in (1.0, 0.0, 0.0, 0.0):          # the learner beat ranking once in 4
        p.record_result("heuristic:ranking", s)
    for s in (1.0, 1.0, 1.0, 1.0):          # and greedy 4 times in 4
        p.record_result("heuristic:greedy", s)
    # recorded, not used until refresh_weights
    assert p.member_weights() == {"latest": 0.5, "heuristic:ranking": 0.25, "heuristic:greedy": 0.25}
    assert p.refresh_weights() is True and p.weights_version == 1
    # scores with 4 pseudo-results of 1/2: ranking (1 + 2) / (4 + 4) = 3/8, greedy (4 + 2) / 8 = 3/4,
    # latest (no result) 2/4 = 1/2
    assert p.learner_score("heuristic:ranking") == 3 / 8
    assert p.learner_score("heuristic:greedy") == 3 / 4
    assert p.learner_score("latest") == 1 / 2
    # factors (1 - p)^2: 25/64, 4/64, 16/64; times the shares 0.5 / 0.25 / 0.25:
    # latest 8/64, ranking 6.25/64, greedy 1/64; total 15.25/64 -> 32/61, 25/61, 4/61
    w = p.member_weights()
    assert list(w) == ["latest", "heuristic:ranking", "heuristic:greedy"]
    assert w["latest"] == pytest.approx(32 / 61, abs=1e-12)
    assert w["heuristic:ranking"] == pytest.approx(25 / 61, abs=1e-12)
    assert w["heuristic:greedy"] == pytest.approx(4 / 61, abs=1e-12)
    # the batched env's draw weights are the pool's
    assert BatchOpponents("tapeo", p).weights_now() == w


def test_pfsp_exponent_window_and_evicted_snapshots():
    p = _pool(weighting="pfsp", pfsp_exponent=1.0, pfsp_prior=2.0, pfsp_window=2)
    for s in (0.0, 0.0, 1.0, 0.5):          # only the last 2 are kept: 1, 0.5
        p.record_result("heuristic:ranking", s)
    # (1 + 0.5 + 1) / (2 + 2) = 5/8; factor (1 - 5/8)^1 = 3/8
    assert p.learner_score("heuristic:ranking") == 5 / 8
    assert p.pfsp_factor("heuristic:ranking") == 3 / 8
    # a snapshot evicted from the pool takes its results with it
    p.max_size = 1
    p.add_snapshot("a", _net(1))
    p.record_result("past:a", 0.0)
    p.add_snapshot("b", _net(2))
    assert "past:a" not in p.results and list(p.past) == ["b"]


def test_pfsp_sample_draws_with_the_member_weights():
    p = _pool(weighting="pfsp")
    for _ in range(20):
        p.record_result("heuristic:greedy", 1.0)
    p.refresh_weights()
    w = p.member_weights()
    rng = np.random.default_rng(5)
    labels = list(w)
    expect = [labels[int(i)] for i in np.random.default_rng(5).choice(len(labels), size=1, p=list(w.values()))]
    assert [p.sample(rng)] == expect
    draws = [p.sample(rng) for _ in range(4000)]
    # greedy: score (20 + 2) / 24 = 11/12, factor 1/144; shares 0.5 * 1/4, 0.25 * 1/4, 0.25 / 144
    # -> greedy weight (1/576) / (1/8 + 1/16 + 1/576) = 1/109 (sd of the frequency < 0.0016)
    assert w["heuristic:greedy"] == pytest.approx(1 / 109, abs=1e-12)
    assert abs(draws.count("heuristic:greedy") / 4000 - 1 / 109) < 0.008


def test_uniform_weighting_is_the_old_scheme_and_ignores_results():
    p = _pool()
    p.add_snapshot("s1", _net(1))
    for _ in range(10):
        p.record_result("heuristic:ranking", 0.0)
    assert p.refresh_weights() is False and p.weights_version == 0
    # the scheme of the module docstring: category (latest, past, heuristic) then a member uniformly
    assert p.member_weights() == {"latest": 0.5, "heuristic:ranking": 0.25, "heuristic:greedy": 0.25}
    a, b = np.random.default_rng(3), np.random.default_rng(3)
    got = [p.sample(a) for _ in range(200)]
    cats, probs = ["latest", "past", "heuristic"], [0.5, 0.0, 0.5]
    want = []
    for _ in range(200):
        cat = cats[int(b.choice(3, p=probs))]
        want.append("latest" if cat == "latest" else "heuristic:" + ["ranking", "greedy"][int(b.integers(2))])
    assert got == want


def test_bad_pfsp_settings_are_refused_naming_the_legal_values():
    with pytest.raises(ConfigError, match=r"legal values: \['uniform', 'pfsp'\]"):
        OpponentPool("tapeo", ["greedy"], weighting="league")
    with pytest.raises(ConfigError, match="pfsp_prior=0.*> 0"):
        OpponentPool("tapeo", ["greedy"], weighting="pfsp", pfsp_prior=0)
    with pytest.raises(ConfigError, match="pfsp_exponent=nan"):
        OpponentPool("tapeo", ["greedy"], weighting="pfsp", pfsp_exponent=float("nan"))
    with pytest.raises(ConfigError, match="pfsp_window=0"):
        OpponentPool("tapeo", ["greedy"], weighting="pfsp", pfsp_window=0)
    with pytest.raises(ValueError, match="legal values: 0, 0.5, 1"):
        OpponentPool("tapeo", ["greedy"]).record_result("heuristic:greedy", 0.25)


def test_config_checks_the_pfsp_keys():
    cfg = C.load_config("tapeo")
    assert C.flatten(cfg)["pool_weighting"] == "uniform"     # the default is today's scheme
    cfg["pool"]["pool_weighting"] = "pfsp"
    C.validate_config("tapeo", cfg)
    bad = C.override_keys(cfg, {"engine": "single"})
    with pytest.raises(ConfigError, match="pool_weighting='pfsp' needs engine='batched'.*legal here: 'uniform'"):
        C.validate_config("tapeo", bad)
    with pytest.raises(ConfigError, match="pool_weighting='elo'; legal values: 'uniform' or 'pfsp'"):
        C.validate_config("tapeo", C.override_keys(cfg, {"pool_weighting": "elo"}))
    with pytest.raises(ConfigError, match="pfsp_prior=-1.0"):
        C.validate_config("tapeo", C.override_keys(cfg, {"pfsp_prior": -1.0}))
    with pytest.raises(ConfigError, match="pfsp_window"):
        C.validate_config("tapeo", C.override_keys(cfg, {"pfsp_window": 0}))
    rob = C.load_config("robada")   # the learner env reports Ronda Robada's results per seat too
    rob["pool"]["pool_weighting"] = "pfsp"
    C.validate_config("robada", rob)
    with pytest.raises(ConfigError, match="pool_weighting='pfsp' needs engine='batched'"):
        C.validate_config("robada", C.override_keys(rob, {"engine": "single"}))


def test_record_results_scores_each_opponent_seat():
    p = OpponentPool("tapeo", ["ranking", "greedy"], 5, 0.0, 0.0, 1.0, weighting="pfsp")
    src = BatchOpponents("tapeo", p)
    src.refresh()
    assert src.labels == ["heuristic:ranking", "heuristic:greedy"]
    # a 4-player game, learner seats 0 and 1 (30 and 25 points); seat 2 ranking 30, seat 3 greedy 20
    scores = np.array([30, 25, 30, 20])
    infos = [{"final_score": 30, "scores": scores, "opponents": np.array([0, 1])},
             {"final_score": 25, "scores": scores, "opponents": np.array([0, 1])},
             {}, {"final_score": 40}]   # no game ended / a final without the keys: skipped
    assert src.record_results(infos) == 4
    # seat 0: ties ranking (0.5), beats greedy (1); seat 1: loses to ranking (0), beats greedy (1)
    assert list(p.results["heuristic:ranking"]) == [0.5, 0.0]
    assert list(p.results["heuristic:greedy"]) == [1.0, 1.0]
    uniform = OpponentPool("tapeo", ["ranking", "greedy"], 5, 0.0, 0.0, 1.0)
    assert BatchOpponents("tapeo", uniform).record_results(infos) == 0


def test_record_results_reads_the_opponent_seats_the_learner_env_names():
    p = OpponentPool("robada", ["random", "greedy"], 5, 0.0, 0.0, 1.0, weighting="pfsp")
    src = BatchOpponents("robada", p)
    src.refresh()
    assert src.labels == ["heuristic:random", "heuristic:greedy"]
    # 3 players, the learner in seat 1 with 30 points; seat 0 (random) 10, seat 2 (greedy) 30
    info = {"final_score": 30, "scores": np.array([10, 30, 30]), "opponents": np.array([0, 1]),
            "opponent_seats": np.array([0, 2])}
    assert src.record_results([info]) == 2
    # beats random (1), ties greedy (0.5); the last seats [30, 30] would have read 0.5 and 0.5
    assert list(p.results["heuristic:random"]) == [1.0]
    assert list(p.results["heuristic:greedy"]) == [0.5]


def test_the_learner_env_reports_robada_results_to_the_pool():
    p = OpponentPool("robada", ["random", "greedy"], 5, 0.0, 0.0, 1.0, weighting="pfsp")
    env = make_learner_vec_env("robada", 6, [2, 3], 1, p, {"reward_scheme": "margin"}, seed=0)
    env.reset()
    recorded = sum(len(v) for v in p.results.values())
    finals = []
    for _ in range(80):
        masks = env.action_masks()
        _, _, dones, infos = env.step(np.array([int(np.flatnonzero(m)[0]) for m in masks]))
        finals += [i for d, i in zip(dones, infos) if d]
    assert finals
    for info in finals:
        seat, opp = info["seat"], info["opponent_seats"]
        assert sorted([seat, *opp.tolist()]) == list(range(info["num_players"]))
        assert info["final_score"] == info["scores"][seat]
    # one result per opponent seat of every finished game
    assert sum(len(v) for v in p.results.values()) - recorded == sum(len(i["opponent_seats"]) for i in finals)


def test_batched_tapeo_env_reports_scores_and_opponents_to_the_pool():
    p = OpponentPool("tapeo", ["random", "greedy"], 5, 0.0, 0.0, 1.0, weighting="pfsp")
    env = make_learner_vec_env("tapeo", 4, [2, 4], 1, p, {"reward_scheme": "win_loss"}, seed=0)
    env.reset()
    finals = []
    for _ in range(60):
        masks = env.action_masks()
        _, _, dones, infos = env.step(np.array([int(np.flatnonzero(m)[0]) for m in masks]))
        finals += [i for d, i in zip(dones, infos) if d]
    assert finals
    for info in finals:
        n = len(info["scores"])
        assert info["scores"].dtype == np.int64 and info["opponents"].shape == (n - 1,)
        assert info["final_score"] == info["scores"][0]            # learner seat 0
        top = info["scores"].max()
        assert (info["win_share"] > 0) == (info["scores"][0] == top)
    # one result per opponent seat of every finished game
    assert sum(len(q) for q in p.results.values()) == sum(len(i["opponents"]) for i in finals)
    before = env.source.signature()
    p.refresh_weights()
    assert env.source.signature() != before       # the env takes the new weights before its next step
    assert env.source.push_if_changed(env) is True


V1 = "agents/opponents/tapeo_ppo_v1.onnx"   # a shipped export, registered as "ppo_v1"


def test_an_export_path_is_a_pool_member_that_plays_as_the_registered_bot_of_that_file():
    # differential: the member named by the file's path against the registered bot of the same
    # file ("ppo_v1"), both as batch policies (argmax of the masked logits) on the same rows
    from hod import agents
    from hod.training.pool import bot_player_counts, is_export_path

    assert is_export_path(V1) and not is_export_path("ppo_v1")
    assert bot_player_counts("tapeo", V1) == agents.player_counts("tapeo", "ppo_v1") == (2, 3, 4, 5, 6)
    p = OpponentPool("tapeo", [V1, "ppo_v1"], 0, p_latest=0.0, p_past=0.0, p_heuristic=1.0)
    src = BatchOpponents("tapeo", p)
    assert src.weights_now() == {"heuristic:" + V1: 0.5, "heuristic:ppo_v1": 0.5}
    by_path, by_name = src.policy("heuristic:" + V1), src.policy("heuristic:ppo_v1")
    r = np.random.default_rng(3)
    obs = r.random((64, OBS)).astype(np.float32)
    mask = (r.random((64, ACTIONS)) < 0.5).astype(np.int8)
    mask[np.arange(64), r.integers(ACTIONS, size=64)] = 1     # at least one legal action per row
    a = by_path(obs, mask)
    assert np.array_equal(a, by_name(obs, mask))
    assert mask[np.arange(64), a].all()
    assert type(p.make_bot("heuristic:" + V1, seed=0)).__name__ == "OnnxPolicy"   # single-game tables


def test_an_export_path_that_is_not_a_file_is_refused_naming_the_legal_values():
    with pytest.raises(ConfigError, match="no such file 'runs/none.onnx'; legal: a registered bot of 'tapeo'"):
        OpponentPool("tapeo", ["ranking", "runs/none.onnx"], 0)
    cfg = C.override_keys(C.load_config("tapeo"), {"heuristics": ["expert", "runs/none.onnx"]})
    with pytest.raises(ConfigError, match="no such file 'runs/none.onnx'"):
        C.validate_config("tapeo", cfg)
    C.validate_config("tapeo", C.override_keys(cfg, {"heuristics": ["expert", V1]}))
    with pytest.raises(ConfigError, match="no bot"):   # a teacher is still a registered bot only
        C.validate_config("tapeo", C.override_keys(cfg, {"heuristics": ["expert"], "bc_teacher": V1}))


def test_an_export_whose_card_lacks_a_table_size_of_the_run_is_refused(tmp_path):
    # a copy of the v1 export whose card says it plays 2 players only (as a best response trained at 2)
    import json
    import shutil

    onnx = tmp_path / "br_2p.onnx"
    shutil.copyfile(V1, onnx)
    card = json.loads(open(V1[:-len(".onnx")] + ".json").read())
    card["player_counts"] = [2]
    (tmp_path / "br_2p.json").write_text(json.dumps(card))
    cfg = C.override_keys(C.load_config("tapeo"), {"heuristics": ["expert", str(onnx)], "players": [2, 3]})
    with pytest.raises(ConfigError, match=r"heuristics: '.*br_2p.onnx' plays \[2\] players, not \[3\] of players=\[2, 3\]"):
        C.validate_config("tapeo", cfg)
    C.validate_config("tapeo", C.override_keys(cfg, {"players": [2]}))
