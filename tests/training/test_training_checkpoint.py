"""Checkpoints: atomic writes with a model card, validation on load, resume, Ctrl-C."""
from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pytest

from hod.agents.model_card import MODEL_CARD_FORMAT, CheckpointError
from hod.training.checkpoint import MODEL_CARD_MEMBER, load_checkpoint, read_checkpoint
from hod.training.config import smoke_config
from hod.training.train import Trainer


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A tiny Tapeo run on tables of 2 and 4 players; returns (trainer, summary)."""
    out = tmp_path_factory.mktemp("tapeo_run")
    t = Trainer("tapeo", smoke_config("tapeo", players=[2, 4]), out, progress=False, log=None)
    return t, t.run()


def _rewrite(src, dst, edit_card=None, drop_card=False):
    """Copy checkpoint ``src`` to ``dst`` with its embedded card edited or removed."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == MODEL_CARD_MEMBER:
                if drop_card:
                    continue
                card = json.loads(data)
                edit_card(card)
                data = json.dumps(card).encode()
            zout.writestr(item, data)
    return dst


def test_checkpoint_files_and_card(run):
    t, summary = run
    ckpt = t.out / "checkpoints" / "final.zip"
    assert summary["checkpoint"] == str(ckpt) and summary["steps"] >= 256
    card = json.loads(ckpt.with_suffix(".json").read_text())
    assert card["format"] == MODEL_CARD_FORMAT and card["game"] == "tapeo"
    assert card["player_counts"] == [2, 4]
    assert card["obs_size"] == 157 and card["num_actions"] == 10  # tapeo_env: obs (157,), Discrete(10)
    assert card["training"]["steps"] == summary["steps"] and card["training"]["seed"] == 0
    for lib in ("torch", "stable_baselines3", "sb3_contrib", "numpy", "gymnasium", "pettingzoo"):
        assert lib in card["libraries"]
    # atomic writes leave no temporary files behind
    assert not [p for p in (t.out / "checkpoints").iterdir() if p.name.endswith(".tmp")]
    # snapshot_every 64 over 256 steps (rollouts of 2 tables x 2 seats x 32 = 128): snapshots exist,
    # at most pool_size = 2 kept, and they travel inside the checkpoint
    model, card2, pool = load_checkpoint(ckpt, game="tapeo", num_players=4)
    assert card2 == card and 1 <= len(pool) <= 2
    assert model.num_timesteps == summary["steps"]


def test_loaded_policy_acts_like_the_saved_one(run):
    t, _ = run
    model, _, _ = load_checkpoint(t.out / "checkpoints" / "final.zip")
    obs = np.random.default_rng(0).random((16, 157), dtype=np.float32)
    masks = np.ones((16, 10), bool)
    a1, _ = t.model.predict(obs, action_masks=masks, deterministic=True)
    a2, _ = model.predict(obs, action_masks=masks, deterministic=True)
    assert np.array_equal(a1, a2)


def test_wrong_game_player_count_or_layout_fail_clearly(run, tmp_path):
    t, _ = run
    ckpt = t.out / "checkpoints" / "final.zip"
    with pytest.raises(CheckpointError, match="trained for game 'tapeo', not 'robada'"):
        load_checkpoint(ckpt, game="robada")
    with pytest.raises(CheckpointError, match=r"trained for \[2, 4\] players, not 3"):
        load_checkpoint(ckpt, game="tapeo", num_players=3)
    with pytest.raises(CheckpointError, match="layout version 1 of tapeo, but this installation has version 99"):
        load_checkpoint(ckpt, layout_version=99)

    def old_layout(card):
        card["obs_layout_version"] = 0

    stale = _rewrite(ckpt, tmp_path / "stale.zip", old_layout)
    with pytest.raises(CheckpointError, match="layout version 0"):
        load_checkpoint(stale)  # checked against the installed tapeo_env by default

    def other_game(card):
        card["game"] = "robada"

    with pytest.raises(CheckpointError, match="not 'tapeo'"):
        load_checkpoint(_rewrite(ckpt, tmp_path / "g.zip", other_game), game="tapeo")


def test_truncated_corrupt_and_foreign_files_fail_clearly(run, tmp_path):
    t, _ = run
    data = (t.out / "checkpoints" / "final.zip").read_bytes()
    trunc = tmp_path / "trunc.zip"
    trunc.write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match="truncated or corrupt"):
        load_checkpoint(trunc)
    # flip bytes inside the stored policy weights: the zip's CRC check must catch it
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        info = z.getinfo("policy.npz")
    corrupt = bytearray(data)
    start = info.header_offset + 30 + len(info.filename) + len(info.extra) + 100
    for k in range(start, start + 64):
        corrupt[k] ^= 0xFF
    bad = tmp_path / "corrupt.zip"
    bad.write_bytes(bytes(corrupt))
    with pytest.raises(CheckpointError, match="corrupt"):
        load_checkpoint(bad)
    notzip = tmp_path / "notzip.zip"
    notzip.write_text("hello")
    with pytest.raises(CheckpointError, match="truncated or corrupt"):
        load_checkpoint(notzip)
    with pytest.raises(CheckpointError, match="no such checkpoint"):
        load_checkpoint(tmp_path / "missing.zip")
    nocard = _rewrite(t.out / "checkpoints" / "final.zip", tmp_path / "nocard.zip", drop_card=True)
    with pytest.raises(CheckpointError, match="no model_card.json"):
        read_checkpoint(nocard)
    # CheckpointError is a ValueError, so generic bad-input handlers catch it
    assert issubclass(CheckpointError, ValueError)


def test_ppo_bot_validates_and_plays_masked(run):
    from hod.training.ppo_bot import PPOBot

    t, _ = run
    ckpt = t.out / "checkpoints" / "final.zip"
    with pytest.raises(CheckpointError, match="not 'robada'"):
        PPOBot(ckpt, game="robada")
    bot = PPOBot(ckpt, game="tapeo", seed=0)
    obs = {"observation": np.zeros(157, np.float32), "action_mask": np.zeros(10, np.int8)}
    obs["action_mask"][[3, 7]] = 1
    assert bot.act(obs) in (3, 7)
    bot2 = PPOBot(ckpt, deterministic=False, seed=1)
    assert {bot2.act(obs) for _ in range(20)} <= {3, 7}


def test_resume_continues_to_total_steps_with_the_pool(run, tmp_path):
    t, summary = run
    cfg = smoke_config("tapeo", players=[2, 4], total_steps=512)
    t2 = Trainer("tapeo", cfg, t.out, resume=t.out / "checkpoints" / "latest.zip", progress=False, log=None)
    assert t2.model.num_timesteps == summary["steps"]
    assert list(t2.pool.past) == list(t.pool.past)  # the pool came back from the checkpoint
    s2 = t2.run()
    assert s2["steps"] >= 512 and not s2["interrupted"]
    card = json.loads((t.out / "checkpoints" / "final.json").read_text())
    assert card["training"]["resumed_from"].endswith("latest.zip")
    assert card["training"]["wall_clock_s"] >= 0


def test_ctrl_c_saves_a_checkpoint(tmp_path, monkeypatch):
    t = Trainer("robada", smoke_config("robada", total_steps=10_000), tmp_path, progress=False, log=None)

    def interrupt(self):
        raise KeyboardInterrupt  # as if Ctrl-C arrived when the first snapshot is due

    monkeypatch.setattr(Trainer, "snapshot", interrupt)
    s = t.run()
    assert s["interrupted"] and 0 < s["steps"] < 10_000
    assert s["checkpoint"].endswith("latest.zip")
    model, card, _ = load_checkpoint(s["checkpoint"], game="robada")
    assert card["training"]["steps"] == s["steps"] == model.num_timesteps
    assert not (tmp_path / "checkpoints" / "final.zip").exists()


def test_the_card_records_every_rule_option(run, tmp_path):
    t, _ = run
    card = json.loads((t.out / "checkpoints" / "final.json").read_text())
    assert card["rules"] == {}   # Tapeo declares no rule options
    r = Trainer("robada", smoke_config("robada"), tmp_path / "r", progress=False, log=None,
                env_options={"closing_ace": False})
    # the option given, the other two at their defaults (robada_env.GAME.rule_options: R2, R3, R7)
    assert r.rules == {"closing_ace": False, "may_take_own_pile": True, "leftovers_to_last_runner": True}
    r.env.close()
    from hod.core.errors import ConfigError
    with pytest.raises(ConfigError, match=r"closing_ace='no'.*legal values: \[True, False\]"):
        Trainer("robada", smoke_config("robada"), tmp_path / "r2", progress=False, log=None,
                env_options={"closing_ace": "no"})


def test_the_card_reads_library_versions_without_importing_them():
    # the versions come from the distributions' metadata: recording them imports neither onnx nor
    # onnxruntime (about a second of a run's first checkpoint), and they equal the modules' own
    import subprocess
    import sys

    code = ("import sys; from hod.agents.model_card import library_versions; v = library_versions(); "
            "print(v['onnx'], v['onnxruntime'], 'onnx' in sys.modules, 'onnxruntime' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    import onnx
    import onnxruntime
    assert out == [onnx.__version__, onnxruntime.__version__, "False", "False"]


def test_a_total_that_is_not_whole_rollouts_is_announced_and_rounded_up(tmp_path):
    """The smoke configuration at 2 players: n_steps 32 x 4 env slots (2 tables x 2 learner seats)
    = 128 steps a rollout; SB3 learns whole rollouts, so total_steps 70 ends at 128, and the run
    says so before it starts; 256 (two rollouts) says nothing."""
    msgs: list[str] = []
    t = Trainer("tapeo", smoke_config("tapeo", players=[2], total_steps=70), tmp_path / "a", progress=False,
                log=msgs.append)
    assert t.run()["steps"] == 128
    assert ("total_steps=70 is reached in whole rollouts of 128 steps (n_steps x env slots): the run stops "
            "at 128 steps") in msgs
    quiet: list[str] = []
    Trainer("tapeo", smoke_config("tapeo", players=[2], total_steps=256), tmp_path / "b", progress=False,
            log=quiet.append).run()
    assert not [m for m in quiet if "whole rollouts" in m]


def test_resume_alone_takes_the_game_from_the_checkpoint():
    """A shipped Tapeo checkpoint: --resume without --game parses as Tapeo with the card's
    configuration; --game robada with it is refused (the card says tapeo); neither flag: --game
    is required."""
    from hod.training.train import parse_args

    from pathlib import Path

    ckpt = str(Path(__file__).resolve().parents[2] / "agents/opponents/checkpoints/tapeo_ppo_step_004800000.zip")
    game, cfg, args = parse_args(["--resume", ckpt])
    assert game == "tapeo" and args.resume == ckpt and cfg["ppo"]["net_arch"] == [256, 256]
    with pytest.raises(SystemExit):
        parse_args(["--resume", ckpt, "--game", "robada"])
    with pytest.raises(SystemExit):
        parse_args([])
