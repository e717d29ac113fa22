"""Playout values (hod.training.playout_values): outcomes and advantages worked out by hand, the
recorder's invariants and refusals, the cache, the fit's closed-form optimum, and a tiny run end to
end."""
from __future__ import annotations

import math

import numpy as np
import pytest

from hod.core.errors import ConfigError
from hod.training import playout_values as PV

NAN = float("nan")


def test_outcomes_are_win_share_plus_margin_over_100():
    scores = np.array([[50, 30], [50, 30], [40, 40], [40, 40], [10, 40]])
    got = PV._outcomes(scores[:, :2], np.array([0, 1, 0, 1, 0]))
    # seat 0 of 50-30: share 1, margin 20 -> 1.2; seat 1: share 0, margin -20 -> -0.2;
    # a 40-40 tie: share 1/2, margin 0 -> 0.5 for both; 10-40: 0 + (-30)/100 = -0.3
    np.testing.assert_allclose(got[0], [1.2, -0.2, 0.5, 0.5, -0.3])
    np.testing.assert_allclose(got[1], [1, 0, 0.5, 0.5, 0])
    # 3 players 40, 40, 10: seat 0 ties for the win (1/2), margin 40 - (40 + 10) / 2 = 15 -> 0.65;
    # seat 2: share 0, margin 10 - 40 = -30 -> -0.3
    v, w = PV._outcomes(np.array([[40, 40, 10], [40, 40, 10]]), np.array([0, 2]))
    np.testing.assert_allclose(v, [0.65, -0.3])
    np.testing.assert_allclose(w, [0.5, 0.0])


def test_advantages_centre_the_legal_actions():
    data = {"action_wins": np.array([[1, 0, NAN], [0.5, 0.5, 0.5]], np.float32),
            "action_values": np.array([[1.3, -0.2, NAN], [0.5, 0.5, 0.5]], np.float32)}
    # wins [1, 0]: mean 0.5 -> [0.5, -0.5, 0]; a three-way tie: all 0
    np.testing.assert_allclose(PV.advantages(data, "win"), [[0.5, -0.5, 0], [0, 0, 0]])
    # values [1.3, -0.2]: mean 0.55 -> [0.75, -0.75, 0]
    np.testing.assert_allclose(PV.advantages(data, "value"), [[0.75, -0.75, 0], [0, 0, 0]], atol=1e-6)
    with pytest.raises(ConfigError, match="legal values: \\['win', 'value'\\]"):
        PV.advantages(data, "margin")


@pytest.fixture(scope="module")
def small():
    return PV.record_playout_values("robada", 2, 60, seed=3, games=16)


def test_the_recorder_scores_every_legal_action_and_nothing_else(small):
    d = small
    assert d["observation"].shape == (60, 192) and d["action_mask"].shape == (60, 27)
    legal = d["action_mask"] != 0
    assert (np.isfinite(d["action_values"]) == legal).all()
    assert (np.isfinite(d["action_wins"]) == legal).all()
    assert (legal.sum(axis=1) >= 2).all()                       # only real choices are sampled
    assert legal[np.arange(60), d["action"]].all()              # the continuation's own action is legal
    assert (d["players"] == 2).all()
    # at 2 players the value is share + margin / 100 with share = 1 iff margin > 0: a won playout's
    # value is > 1, a lost one's < 0, a tie's 0.5
    v, w = d["action_values"][legal], d["action_wins"][legal]
    assert ((v > 1) == (w == 1)).all() and ((v < 0) == (w == 0)).all() and ((v == 0.5) == (w == 0.5)).all()


def test_the_recorder_is_seeded(small):
    again = PV.record_playout_values("robada", 2, 60, seed=3, games=16)
    for k in small:
        np.testing.assert_array_equal(small[k], again[k])
    other = PV.record_playout_values("robada", 2, 60, seed=4, games=16)
    assert not np.array_equal(small["observation"], other["observation"])


@pytest.mark.parametrize("kwargs, match", [
    ({"game": "tapeo"}, "turn-based game .* 'tapeo' is simultaneous; legal games: \\['robada'\\]"),
    # Kuhn poker is turn-based with a batched engine, but its step has no auto-reset to play on
    ({"game": "kuhn"}, "'kuhn' is a batched engine without step\\(..., auto_reset=True\\); legal games: \\['robada'\\]"),
    ({"rules": {"closing_aces": True}}, "unknown rule option.*closing_ace"),
    ({"num_players": 5}, "legal values: 2..4"),
    ({"num_states": 0}, "integers >= 1"),
    ({"sample_prob": 0.0}, "numbers in \\(0, 1\\]"),
    ({"continuation": "nobody"}, "legal values are a bot of robada"),
])
def test_the_recorder_refuses_bad_arguments(kwargs, match):
    args = {"game": "robada", "num_players": 2, "num_states": 5, **kwargs}
    with pytest.raises(ConfigError, match=match):
        PV.record_playout_values(**args)


def test_the_cache_keeps_chunks_and_reads_them_back(tmp_path, monkeypatch):
    monkeypatch.setattr(PV, "CHUNK_STATES", 25)
    first = PV.cached_playout_values(tmp_path, "robada", [2, 3], 60, seed=1)
    files = sorted(p.name for p in tmp_path.iterdir())
    # 30 per size -> 2 chunks of 25 each at 2 and at 3 players
    assert files == [f"pv{PV.CACHE_FORMAT}_robada_{n}p_expert_s1_p0.25_{i}.npz" for n in (2, 3) for i in (0, 1)]
    assert len(first["observation"]) == 60
    stamps = {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()}
    again = PV.cached_playout_values(tmp_path, "robada", [2, 3], 60, seed=1)
    assert {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()} == stamps      # read, not recorded
    for k in first:
        np.testing.assert_array_equal(first[k], again[k])
    # chunk i of a size is the recorder's own chunk: record_playout_values with seed [seed, i]
    s = int(np.random.SeedSequence([1, 0]).generate_state(1)[0] % (2 ** 31))
    chunk0 = PV.record_playout_values("robada", 2, 25, s)
    np.testing.assert_array_equal(first["action_values"][:25], chunk0["action_values"])


class _BiasActor:
    """An actor whose logits are one learned vector (the same at every position)."""

    def __new__(cls, num_actions):
        import torch

        class Actor(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.bias = torch.nn.Parameter(torch.zeros(num_actions))

            def forward(self, obs, mask):
                logits = self.bias.expand(len(obs), -1)
                masked = torch.where(mask != 0, logits, torch.full_like(logits, -1e8))
                return masked.argmax(dim=1), masked

        return Actor()


def test_the_fit_reaches_the_regularised_optimum():
    # uniform prior, advantages +0.05 / -0.05 on two legal actions, kl_weight 0.1: the optimum is
    # pi(0) / pi(1) = exp((0.05 - -0.05) / 0.1) = e, so pi(0) = e / (1 + e) = 0.731059
    n = 2000
    obs = np.zeros((n, 3), np.float32)
    mask = np.zeros((n, 3), np.int8)
    mask[:, :2] = 1
    adv = np.zeros((n, 3), np.float32)
    adv[:, 0], adv[:, 1] = 0.05, -0.05
    prior = np.where(mask != 0, 0.0, -1e8).astype(np.float32)
    actor = _BiasActor(3)
    stats = PV.fit_policy(actor, obs, mask, adv, prior, np.ones(n, np.int64), epochs=60, learning_rate=0.05,
                          kl_weight=0.1, batch_size=500, holdout=0.1)
    import torch

    p = torch.softmax(actor.bias.detach()[:2], dim=0).numpy()
    assert p[0] == pytest.approx(math.e / (1 + math.e), abs=0.005)
    # held out: the greedy action is 0 (gain +0.05), the continuation played 1 (gain -0.05)
    assert stats["after"]["greedy_gain"] == pytest.approx(0.05, abs=1e-6)
    assert stats["after"]["continuation_gain"] == pytest.approx(-0.05, abs=1e-6)
    assert stats["before"]["kl"] == pytest.approx(0.0, abs=1e-6) and stats["held_out"] == 200


def test_the_fit_refuses_bad_settings():
    z = np.zeros((4, 3), np.float32)
    with pytest.raises(ConfigError, match="kl_weight=0"):
        PV.fit_policy(_BiasActor(3), z, z.astype(np.int8), z, z, np.zeros(4, np.int64), 1, 1e-3, 0)
    PV.check_fit_settings(np.int64(3), np.float32(1e-3), np.float64(0.1), np.int32(8))   # numpy numbers are numbers
    PV.check_fit_settings(3, np.array(1e-3), 0.1, np.array(8))                           # 0-d arrays too
    with pytest.raises(ConfigError, match="epochs=True"):
        PV.check_fit_settings(True, 1e-3, 0.1, 8)                                          # a bool is not one
    with pytest.raises(ConfigError, match="must have N rows"):
        PV.fit_policy(_BiasActor(3), z, z.astype(np.int8), z[:3], z, np.zeros(4, np.int64), 1, 1e-3, 0.1)


def test_a_tiny_run_end_to_end(tmp_path, monkeypatch):
    monkeypatch.setattr(PV, "CHUNK_STATES", 40)
    init = "agents/candidates/robada_v5_s32_70k.onnx"
    summary = PV.improve("robada", tmp_path / "run", [2], [40], init, tmp_path / "cache", epochs=1,
                         train={"obs_encoder": "robada_v2", "eval_every": 0, "torch_threads": 1}, log=None)
    assert summary["fit"]["positions"] == 38 and summary["fit"]["held_out"] == 2   # 5% of 40 held out
    from hod.agents.onnx_policy import OnnxPolicy

    bot = OnnxPolicy(summary["export"])
    obs = PV.record_playout_values("robada", 2, 1, seed=0)
    a = bot.act({"observation": obs["observation"][0], "action_mask": obs["action_mask"][0]})   # it encodes layout 2
    assert obs["action_mask"][0][a] == 1


def test_several_continuations_each_add_their_positions(tmp_path, monkeypatch):
    monkeypatch.setattr(PV, "CHUNK_STATES", 40)
    pv_a = "agents/candidates/robada_pv_A.onnx"
    summary = PV.improve("robada", tmp_path / "run", np.array([2]), np.array([40]), pv_a, tmp_path / "cache",
                         continuation=("expert", pv_a), seed=np.int64(0),
                         epochs=1, train={"obs_encoder": "robada_v2", "eval_every": 0, "torch_threads": np.int64(1)},
                         log=None)
    # 40 positions of each continuation: 80, 5% (4) held out
    assert summary["fit"]["positions"] == 76 and summary["fit"]["held_out"] == 4
    assert summary["continuation"] == ["expert", pv_a]
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == [
        "pv3_robada_2p_expert_s0_p0.25_0.npz", "pv3_robada_2p_robada_pv_A_s0_p0.25_0.npz"]


def test_each_playout_takes_its_action_and_scores_the_acting_seat():
    """Every row of ``_play_out`` replayed on its own: the same state loaded into a one-game
    engine, the row's action, then the same deterministic continuation (an export, greedy) to the
    end; the outcome worked out from the final points by the rule (share + margin / 100)."""
    from hod.agents.onnx_policy import OPPONENTS_DIR
    from robada_env.rules.batched import BatchedRobada

    policy = PV.continuation_policy("robada", str(OPPONENTS_DIR / "robada_ppo.onnx"), 0)
    eng = BatchedRobada(3, 6, seed=1)
    eng.reset()
    rng = np.random.default_rng(2)
    for _ in range(9):                                   # a few random moves into each game
        eng.step(eng.random_legal_actions(rng).reshape(-1, 1))
    masks = eng.legal_mask()[:, 0]
    games, actions = np.nonzero(masks != 0)            # every legal action of every game
    seats = eng.current[games].astype(np.int64)
    assert len(set(seats.tolist())) > 1                 # not only seat 0 to act
    values, wins = PV._play_out(BatchedRobada, eng.config, eng.state.take(games), actions, seats, policy)
    for k, (g, a, seat) in enumerate(zip(games.tolist(), actions.tolist(), seats.tolist())):
        one = BatchedRobada(3, 1)
        one.load_state(eng.state.take([g]))
        one.step(np.array([[a]]))
        while not one.terminal[0]:
            one.step(np.asarray(policy(one.observe()[:, 0], one.legal_mask()[:, 0])).reshape(1, 1))
        pts = one.scores()[0].astype(float)
        top = pts == pts.max()
        share = top[seat] / top.sum()
        margin = pts[seat] - (pts.sum() - pts[seat]) / 2
        assert values[k] == pytest.approx(share + margin / 100) and wins[k] == pytest.approx(share)
    # the actions matter: in some game two actions give different outcomes
    assert any(len({round(v, 6) for v in values[games == g]}) > 1 for g in set(games.tolist()))


def test_the_cache_key_names_the_rule_options(tmp_path, monkeypatch):
    monkeypatch.setattr(PV, "CHUNK_STATES", 10)
    PV.cached_playout_values(tmp_path, "robada", [2], 10, seed=1)
    PV.cached_playout_values(tmp_path, "robada", [2], 10, seed=1, rules={"closing_ace": False})
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        f"pv{PV.CACHE_FORMAT}_robada_2p_expert_s1_p0.25_0.npz",
        f"pv{PV.CACHE_FORMAT}_robada_2p_expert_s1_p0.25_closing_ace0_0.npz"]


def test_an_export_continuation_must_play_the_table_size():
    from hod.agents.onnx_policy import OPPONENTS_DIR

    v1 = str(OPPONENTS_DIR / "robada_ppo_v1.onnx")     # the planner-fed network: 2 and 4 players
    with pytest.raises(ConfigError, match=r"trained for \[2, 4\] players, not 3"):
        PV.record_playout_values("robada", 3, 5, continuation=v1)


@pytest.mark.parametrize("args, message", [
    (["--players", "2", "3", "--states", "10"], "players [2, 3] and states [10] must be of the same length"),
    (["--players", "2", "2", "--states", "10", "10"], "names a table size twice"),
    (["--players", "2", "--states", "0"], "states[0]=0: input should be greater than or equal to 1; legal: integers >= 1"),
    (["--players", "2", "--states", "10", "--kl-weight", "0"], "kl_weight=0.0: input should be greater than 0; legal: a "
                                                               "finite number > 0"),
    (["--players", "2", "--states", "10", "--kl-weight", "nan"], "kl_weight=nan: input should be a finite number"),
    (["--players", "2", "--states", "10", "--sample-prob", "1.5"], "sample_prob=1.5: input should be less than or "
                                                                   "equal to 1; legal: a number in (0, 1]"),
    (["--players", "2", "--states", "10", "--seed", "-1"], "seed=-1: input should be greater than or equal to 0"),
    (["--players", "2", "--states", "10", "--batch-size", "0"], "batch_size=0: input should be greater than or equal "
                                                               "to 1; legal: an integer >= 1"),
    (["--players", "5", "--states", "10"], "num_players=5 is not allowed"),
    (["--players", "2", "--states", "10", "--continuation", "nobody"], "legal values are a bot of robada"),
    (["--players", "2", "--states", "10", "--continuation", "expert", "expert"], "legal: one or more distinct"),
    (["--players", "2", "--states", "10", "--continuation", "missing.onnx"], "continuation='missing.onnx': no such file"),
    (["--players", "2", "--states", "10", "--name", "../../y"], "--name '../../y': not a file name"),
])
def test_the_command_refuses_bad_settings_in_one_line_before_recording(args, message, tmp_path, capsys):
    argv = ["--game", "robada", "--out", str(tmp_path / "run"), "--init", "agents/candidates/robada_pv_A.onnx",
            "--cache-dir", str(tmp_path / "cache"), *args]
    assert PV.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and message in err
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())   # nothing recorded


def test_the_command_refuses_a_missing_init_and_a_non_object_train(tmp_path, capsys):
    base = ["--game", "robada", "--out", str(tmp_path / "run"), "--players", "2", "--states", "10",
            "--cache-dir", str(tmp_path / "cache")]
    assert PV.main(base + ["--init", "no_such.onnx"]) == 2
    assert "legal values are an existing .onnx export or .zip checkpoint" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        PV.main(base + ["--init", "agents/candidates/robada_pv_A.onnx", "--train", "[1]"])
    assert e.value.code == 2 and "is not a JSON object" in capsys.readouterr().err


def test_the_command_refuses_kuhn_before_anything_else(tmp_path, capsys):
    argv = ["--game", "kuhn", "--out", str(tmp_path / "run"), "--init", "agents/candidates/robada_pv_A.onnx",
            "--cache-dir", str(tmp_path / "cache"), "--players", "2", "--states", "10"]
    assert PV.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: playout values need a turn-based game") and "legal games: ['robada']" in err
    assert not (tmp_path / "run").exists() and not (tmp_path / "cache").exists()
