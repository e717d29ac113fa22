"""Behaviour-cloning warm start (hod.training.imitation)."""
import numpy as np
import pytest

from hod.core.errors import ConfigError
from hod.training import config as config_mod
from hod.training.imitation import behaviour_clone, collect_teacher_decisions


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

    from hod.training.single_agent import SingleAgentEnv

    env = SingleAgentEnv("robada", num_players=2, opponents="random")
    model = MaskablePPO("MlpPolicy", env, seed=0, policy_kwargs=dict(net_arch=[64, 64]))
    data = collect_teacher_decisions("robada", "greedy", [2], 2000, seed=1)
    stats = behaviour_clone(model, data, epochs=8, learning_rate=3e-3, batch_size=256)
    # greedy is a deterministic function of the observation (up to seeded tie-breaks): a small
    # network fits most of its decisions. (No bound on a fresh network's agreement is asserted:
    # many decisions are forced or two-way, so an untrained network's agreement depends on its
    # initialisation and cannot be bounded usefully by hand.)
    assert stats["accuracy"] > 0.8
    with pytest.raises(ConfigError):
        behaviour_clone(model, data, epochs=0, learning_rate=1e-3)


def test_config_refuses_an_unknown_teacher():
    cfg = config_mod.override_keys(config_mod.load_config("robada"), {"bc_teacher": "grandmaster"})
    with pytest.raises(ConfigError, match="grandmaster"):
        config_mod.validate_config("robada", cfg)


def test_same_seed_same_data_and_another_seed_other_data():
    a = collect_teacher_decisions("tapeo", "greedy", [2, 3], 120, seed=5)
    b = collect_teacher_decisions("tapeo", "greedy", [2, 3], 120, seed=5)
    c = collect_teacher_decisions("tapeo", "greedy", [2, 3], 120, seed=6)
    assert a.keys() == b.keys() == {"observation", "action_mask", "action", "value_target"}
    for k in a:
        assert np.array_equal(a[k], b[k]), k
    assert not np.array_equal(a["observation"], c["observation"])


def test_env_options_reach_the_teacher_games_and_targets_sum_later_rewards():
    # One whole 2-player Tapeo game: 3 rounds of 9 picks per seat (10 tapas a hand), 54 decisions,
    # alternating seat 0, seat 1. The options do not change the play (the bots see no rewards), so
    # both runs play the same game.
    kw = dict(reward_scheme="points", gamma=1.0)
    final = collect_teacher_decisions("tapeo", "greedy", [2], 54, seed=0, **kw)
    rounds = collect_teacher_decisions("tapeo", "greedy", [2], 54, seed=0, env_options={"round_rewards": True}, **kw)
    assert np.array_equal(final["action"], rounds["action"])
    f = final["value_target"].reshape(3, 9, 2)     # (round, pick, seat)
    t = rounds["value_target"].reshape(3, 9, 2)
    # without round rewards every decision of a seat targets its one final reward (gamma 1)
    assert (f == f[0, 0]).all()
    # with them a seat is paid at the end of each round (the change of its standing), and the
    # target of a decision is the sum of what is paid from then on: constant within a round;
    # in round 1 the whole game's sum, which is the final reward again (the rewards telescope
    # from a standing of 0 at the deal to the final one)
    assert (t == t[:, :1, :]).all()
    assert np.array_equal(t[0], f[0])
    # rounds 2 and 3 target what is left after round 1 (and 2): a seat that scored in round 1
    # (every seat at this seed) has a smaller target there
    assert (t[1, 0] < t[0, 0]).all() and (t[2, 0] < t[1, 0]).all()
    # an option the game does not know is refused, so the options do reach raw_env
    with pytest.raises(ConfigError, match="no_such_rule"):
        collect_teacher_decisions("robada", "greedy", [2], 5, env_options={"no_such_rule": 1})


def test_collect_checks_its_arguments():
    with pytest.raises(ConfigError, match=r"num_decisions=0 must be an integer >= 1; legal values: 1, 2, 3, ..."):
        collect_teacher_decisions("robada", "greedy", [2], 0)
    with pytest.raises(ConfigError, match="num_decisions=True"):
        collect_teacher_decisions("robada", "greedy", [2], True)
    with pytest.raises(ConfigError, match=r"player_counts must name at least one table size; legal values: \[2, 3, 4\]"):
        collect_teacher_decisions("robada", "greedy", [], 10)
    with pytest.raises(ConfigError, match=r"legal values: \[2, 3, 4\]"):
        collect_teacher_decisions("robada", "greedy", [5], 10)


def test_same_data_for_any_number_of_workers(monkeypatch):
    import hod.training.imitation as imitation

    # 100 decisions in chunks of 40: chunks of 40, 40 and 20 decisions, seeded 5, [5, 1], [5, 2]
    monkeypatch.setattr(imitation, "CHUNK_DECISIONS", 40)
    one = collect_teacher_decisions("robada", "greedy", [2, 3], 100, seed=5)
    two = collect_teacher_decisions("robada", "greedy", [2, 3], 100, seed=5, workers=2)
    for k in one:
        assert len(one[k]) == 100 and np.array_equal(one[k], two[k]), k
    # chunk 0 is the plain run with the same seed: its 40 decisions are the first 40 of any run
    first = collect_teacher_decisions("robada", "greedy", [2, 3], 40, seed=5)
    assert np.array_equal(first["observation"], one["observation"][:40])
    with pytest.raises(ConfigError, match="workers"):
        collect_teacher_decisions("robada", "greedy", [2], 10, workers=0)


def test_a_search_teacher_gets_belief_samples_and_its_options():
    # "rollout" needs belief samples (hod.agents.robada_search); with 2 determinizations it is quick
    data = collect_teacher_decisions("robada", "rollout", [2], 40, seed=0,
                                     teacher_options={"determinizations": 2})
    assert data["action_mask"][np.arange(40), data["action"]].all()
    # the options reach the teacher: with one candidate per decision it plays the expert's best
    # actions only, so its game (same seed) is another one than the searching teacher's
    expertish = collect_teacher_decisions("robada", "rollout", [2], 40, seed=0, teacher_options={"candidates": 1})
    assert not np.array_equal(data["action"], expertish["action"])
    with pytest.raises(ConfigError, match="legal options"):
        collect_teacher_decisions("robada", "rollout", [2], 40, teacher_options={"rollouts": 2})
    with pytest.raises(ConfigError, match="teacher_options"):
        collect_teacher_decisions("robada", "rollout", [2], 40, teacher_options=[2])


def test_the_cache_is_reused_and_a_truncated_file_is_recorded_again(tmp_path, monkeypatch):
    import hod.training.imitation as imitation

    kw = dict(game="robada", teacher="greedy", player_counts=[2], num_decisions=30, seed=1)
    first = imitation.cached_teacher_decisions(str(tmp_path), **kw)
    files = list(tmp_path.glob("bc_*.npz"))
    assert len(files) == 1
    calls = []
    real = imitation.collect_teacher_decisions
    monkeypatch.setattr(imitation, "collect_teacher_decisions", lambda **k: calls.append(k) or real(**k))
    again = imitation.cached_teacher_decisions(str(tmp_path), **kw, workers=2)   # workers: same file
    assert calls == [] and all(np.array_equal(first[k], again[k]) for k in first)
    imitation.cached_teacher_decisions(str(tmp_path), **{**kw, "seed": 2})        # another seed: new file
    assert len(calls) == 1 and len(list(tmp_path.glob("bc_*.npz"))) == 2
    imitation.cached_teacher_decisions(str(tmp_path), **kw, teacher_options=None)  # = no options: same file
    assert len(calls) == 1
    files[0].write_bytes(files[0].read_bytes()[:100])                             # truncated
    with pytest.warns(UserWarning, match="unusable teacher-decision cache"):
        redone = imitation.cached_teacher_decisions(str(tmp_path), **kw)
    assert len(calls) == 2 and all(np.array_equal(first[k], redone[k]) for k in first)
    np.savez(files[0], **{**first, "observation": first["observation"][:, :3]})   # malformed: wrong width
    with pytest.warns(UserWarning, match="wrong keys or shapes"):
        imitation.cached_teacher_decisions(str(tmp_path), **kw)
    assert len(calls) == 3


def test_the_cache_keeps_each_chunk_so_a_recording_resumes(tmp_path, monkeypatch):
    import hod.training.imitation as imitation

    # 25 decisions in chunks of 10: chunks 0, 1 (10 each) and 2 (5), each kept as it is recorded
    monkeypatch.setattr(imitation, "CHUNK_DECISIONS", 10)
    kw = dict(game="robada", teacher="greedy", player_counts=[2], num_decisions=25, seed=3)
    whole = imitation.cached_teacher_decisions(str(tmp_path), **kw)
    chunks = sorted(p.name.rsplit("_", 2)[1:] for p in tmp_path.glob("chunk_*.npz"))
    assert chunks == [["0", "10.npz"], ["1", "10.npz"], ["2", "5.npz"]]
    recorded = []
    real = imitation._collect_chunk
    monkeypatch.setattr(imitation, "_collect_chunk", lambda *job: recorded.append(job[4]) or real(*job))
    # a run stopped after its first two chunks: the total file is missing, so are the later chunks
    for p in [*tmp_path.glob("bc_*.npz"), *tmp_path.glob("chunk_*_2_5.npz")]:
        p.unlink()
    again = imitation.cached_teacher_decisions(str(tmp_path), **kw)
    assert recorded == [5] and all(np.array_equal(whole[k], again[k]) for k in whole)   # chunk 2 only
    # 20 decisions with the same other arguments: chunks 0 and 1, nothing recorded
    twenty = imitation.cached_teacher_decisions(str(tmp_path), **{**kw, "num_decisions": 20})
    assert recorded == [5] and all(np.array_equal(whole[k][:20], twenty[k]) for k in whole)
    # a truncated chunk is recorded again, with a warning
    chunk0 = next(tmp_path.glob("chunk_*_0_10.npz"))
    chunk0.write_bytes(chunk0.read_bytes()[:50])
    with pytest.warns(UserWarning, match="unusable chunk"):
        redone = imitation.cached_teacher_decisions(str(tmp_path), **{**kw, "num_decisions": 10})
    assert recorded == [5, 10] and all(np.array_equal(whole[k][:10], redone[k]) for k in whole)


def test_a_cache_dir_that_is_a_file_is_refused_before_recording(tmp_path, monkeypatch):
    import hod.training.imitation as imitation

    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setattr(imitation, "collect_teacher_decisions", lambda **k: pytest.fail("recorded"))
    with pytest.raises(ConfigError, match="bc_cache_dir"):
        imitation.cached_teacher_decisions(str(blocker), game="robada", teacher="greedy", player_counts=[2],
                                           num_decisions=10)
    cfg = config_mod.override_keys(config_mod.load_config("robada"), {"bc_cache_dir": str(blocker)})
    with pytest.raises(ConfigError, match="bc_cache_dir"):
        config_mod.validate_config("robada", cfg)


def test_search_bots_are_refused_as_training_opponents():
    # training opponents get no belief samples: "rollout" can be a teacher, not a pool member
    from hod.training.single_agent import SingleAgentEnv

    cfg = config_mod.override_keys(config_mod.load_config("robada"), {"heuristics": ["expert", "rollout"]})
    with pytest.raises(ConfigError, match="search bots.*usable"):
        config_mod.validate_config("robada", cfg)
    with pytest.raises(ConfigError, match="search bots"):
        SingleAgentEnv("robada", num_players=2, opponents="rollout")


@pytest.mark.parametrize("key, value, match", [("bc_workers", 0, "bc_workers"),
                                               ("bc_teacher_options", {"depth": 3}, "legal options"),
                                               ("bc_teacher_options", [1], "bc_teacher_options")])
def test_config_refuses_bad_teacher_settings(key, value, match):
    cfg = config_mod.override_keys(config_mod.load_config("robada"), {"bc_teacher": "expert", key: value})
    with pytest.raises(ConfigError, match=match):
        config_mod.validate_config("robada", cfg)


def test_teacher_options_are_a_json_object_on_the_command_line():
    import argparse

    parser = argparse.ArgumentParser()
    config_mod.add_config_arguments(parser, config_mod.load_config("robada"))
    args = parser.parse_args(["--bc-teacher-options", '{"determinizations": 16}'])
    assert args.bc_teacher_options == {"determinizations": 16}
    with pytest.raises(SystemExit):
        parser.parse_args(["--bc-teacher-options", "[16]"])
