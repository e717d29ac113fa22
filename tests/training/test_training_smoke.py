"""Tiny training runs (a few hundred steps) of both games, on envs that raise on any illegal action."""
from __future__ import annotations

import json

import numpy as np
import pytest

from hod.core.errors import ConfigError, IllegalActionError
from hod.training import config as C
from hod.training.train import Trainer, main, parse_args


@pytest.mark.parametrize("game", ["tapeo", "robada"])
def test_smoke_training_with_evaluation(game, tmp_path):
    cfg = C.smoke_config(game, eval_every=128, eval_games=8, eval_players=[2])
    t = Trainer(game, cfg, tmp_path, progress=False, log=None)
    # the training tables raise on an illegal action: a policy that ignored its mask would crash
    table_env = t.env.tables[0]
    assert table_env.env_options["illegal_action"] == "raise"
    s = t.run()
    assert s["steps"] >= 256 and not s["interrupted"] and s["env_steps_per_s"] > 0
    env = table_env.env
    env.reset(seed=0)
    mask = env.observe(env.agent_selection)["action_mask"]
    with pytest.raises(IllegalActionError):
        env.step(int(np.flatnonzero(mask == 0)[0]))
    rows = json.loads((tmp_path / "eval.json").read_text())
    # evaluations at 0 (untrained), every 128 steps and at the end: 0, 128, 256 for 2p vs random
    assert [r["steps"] for r in rows] == [0, 128, 256]
    assert all(r["baseline"] == "random" and r["num_players"] == 2 and r["games"] == 8 for r in rows)
    assert all(r["win_ci"][0] <= r["win_rate"] <= r["win_ci"][1] for r in rows)
    assert (tmp_path / "learning_curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert list((tmp_path / "tb").rglob("events.out.tfevents.*"))
    card = json.loads((tmp_path / "checkpoints" / "final.json").read_text())
    assert card["evaluation"] == rows


def test_cli_overrides_every_key_and_trains(tmp_path, capsys):
    out = tmp_path / "run"
    argv = ["--game", "robada", "--out", str(out), "--no-progress", "--players", "2", "4",
            "--tables", "2", "--n-steps", "32", "--batch-size", "64", "--n-epochs", "1", "--net-arch", "16",
            "--total-steps", "64", "--eval-every", "0", "--heuristics", "random", "--learning-rate", "1e-4",
            "--opponent-deterministic"]
    game, cfg, _ = parse_args(argv)
    flat = C.flatten(cfg)
    assert game == "robada" and flat["players"] == [2, 4] and flat["learning_rate"] == 1e-4
    assert flat["net_arch"] == [16] and flat["opponent_deterministic"] is True
    assert flat["gamma"] == C.flatten(C.load_config("robada"))["gamma"]  # untouched keys keep the file's value
    assert main(argv) == 0
    assert json.loads((out / "checkpoints" / "final.json").read_text())["player_counts"] == [2, 4]
    # a second run into the same folder is refused unless resumed or forced
    assert main(argv) == 2
    assert "already holds a run" in capsys.readouterr().err
    # forced: the old run's files go first, so none stays beside the new run's (a step file of a
    # longer old run used to read as the new run's last checkpoint); other files in the folder stay
    (out / "checkpoints" / "step_000999999.zip").write_bytes(b"old")
    (out / "notes.txt").write_text("mine")
    assert main(argv + ["--force"]) == 0
    assert "--force: removed the run" in capsys.readouterr().err
    assert not (out / "checkpoints" / "step_000999999.zip").exists() and (out / "notes.txt").read_text() == "mine"
    assert (out / "checkpoints" / "final.zip").exists()


def test_clear_run_removes_only_a_run(tmp_path):
    from hod.training.train import clear_run

    assert clear_run(tmp_path) == []                       # no run: nothing removed
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "step_000000064.zip").write_bytes(b"x")
    assert clear_run(tmp_path) == [] and (tmp_path / "checkpoints" / "step_000000064.zip").exists()   # no latest.zip
    (tmp_path / "checkpoints" / "latest.zip").write_bytes(b"x")
    (tmp_path / "tb").mkdir()
    (tmp_path / "eval.json").write_text("[]")
    (tmp_path / "data.npz").write_bytes(b"keep")
    assert clear_run(tmp_path) == ["checkpoints", "tb", "eval.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.npz"]


def test_config_files_share_one_schema_and_validate():
    tapeo, robada = C.load_config("tapeo"), C.load_config("robada")
    assert {s: sorted(v) for s, v in tapeo.items()} == {s: sorted(v) for s, v in robada.items()}
    C.validate_config("tapeo", tapeo)
    C.validate_config("robada", robada)
    with pytest.raises(ConfigError, match="turn-based"):
        C.validate_config("robada", C.override_keys(robada, {"learner_seats": 2}))
    with pytest.raises(ConfigError, match="legal values"):
        C.validate_config("tapeo", C.override_keys(tapeo, {"players": [7]}))
    with pytest.raises(ConfigError, match="exceeds the rollout"):
        C.validate_config("tapeo", C.override_keys(tapeo, {"batch_size": 10**6}))
    with pytest.raises(ConfigError, match="unknown config key"):
        C.override_keys(tapeo, {"learning_rat": 1.0})


def test_reward_scale_multiplies_the_rewards_ppo_sees():
    from hod.training.vec_env import make_vec_env

    def env(scale=1.0, engine="batched"):
        return make_vec_env("robada", 4, [2], 1, "random", {"reward_scheme": "margin", "illegal_action": "raise"},
                            seed=3, engine=engine, reward_scale=scale)

    for engine in ("batched", "single"):    # the learner env and the single-game tables take the same option
        raw, scaled = env(engine=engine), env(0.01, engine)
        raw.reset(), scaled.reset()
        rng = np.random.default_rng(0)
        finished = 0
        for _ in range(200 if engine == "batched" else 60):
            masks = raw.action_masks()
            assert np.array_equal(masks, scaled.action_masks())
            acts = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
            _, r_raw, d_raw, i_raw = raw.step(acts)
            _, r_scaled, d_scaled, i_scaled = scaled.step(acts)
            assert np.array_equal(d_raw, d_scaled)
            # margin rewards are game points (2 players: my score - the other's), scaled by 1/100;
            # the episode statistics stay in game points
            np.testing.assert_allclose(r_scaled, 0.01 * r_raw, rtol=1e-6)
            assert r_scaled.dtype == np.float32
            for a, b in zip(i_raw, i_scaled):
                if "episode" in a:
                    assert a["episode"]["r"] == b["episode"]["r"]
            finished += int(d_raw.sum())
        assert finished > 0, engine
        with pytest.raises(ConfigError, match="positive"):
            env(0.0, engine)
    cfg = C.smoke_config("robada", reward_scale=-1.0)
    with pytest.raises(ConfigError, match="reward_scale"):
        C.validate_config("robada", cfg)


@pytest.mark.parametrize("game", C.batched_games())
def test_every_declared_game_trains_on_the_generic_learner_env(game, tmp_path):
    """A game declared with a batched engine (Kuhn poker included, whose folder holds its
    training.toml) trains through the generic learner env from its own defaults, with no edit
    under training/: 2 rollouts of 4 tables x 32 steps = 256 learner steps."""
    from hod.core.games import get_game

    assert C.default_config_path(game).is_file() and C.default_config_path(game).parent.name == get_game(game).package
    n = get_game(game).min_players
    cfg = C.smoke_config(game, engine="batched", players=[n], learner_seats=1, tables=4, eval_every=0)
    s = Trainer(game, cfg, tmp_path, progress=False, log=None).run()
    assert s["steps"] == 256 and not s["interrupted"]
    card = json.loads((tmp_path / "checkpoints" / "final.json").read_text())
    assert card["game"] == game and card["player_counts"] == [n]
