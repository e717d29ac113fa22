"""Every training configuration key is checked against its legal range before any work starts, by
one schema (hod.training.config.TrainingConfig), for the TOML files, the CLI flags and the Python API."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from hod.core.errors import ConfigError
from hod.training import config as C
from hod.training.train import Trainer, main

#: flags that keep a run tiny, so that a value wrongly accepted ends quickly instead of training for hours
TINY = ["--engine", "single", "--tables", "2", "--n-steps", "32", "--batch-size", "64", "--n-epochs", "1",
        "--net-arch", "8", "--total-steps", "64", "--eval-every", "0", "--heuristics", "random",
        "--baselines", "random", "--no-progress"]


@pytest.fixture
def no_cuda(monkeypatch):
    """A machine without CUDA (or MPS), whatever this one has."""
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    mps = getattr(torch.backends, "mps", None)
    if mps is not None:
        monkeypatch.setattr(mps, "is_available", lambda: False)


@pytest.mark.parametrize("flags, key, legal", [
    (["--learning-rate", "-1"], "learning_rate", "(0, 1]"),
    (["--learning-rate", "0"], "learning_rate", "(0, 1]"),
    (["--gamma", "2"], "gamma", "[0, 1]"),
    (["--clip-range", "-0.2"], "clip_range", "(0, 1]"),
    (["--device", "cuda"], "device", "['cpu', 'auto']"),
    (["--heuristics", "expret"], "heuristics", "registered: ['expert', 'greedy'"),
    (["--baselines", "expret"], "baselines", "registered: ['expert', 'greedy'"),
    (["--players", "2", "9"], "players", "legal values: [2, 3, 4, 5, 6]"),
    (["--batch-size", "1"], "batch_size", ">= 2"),
    (["--p-latest", "0", "--p-past", "0", "--p-heuristic", "0"], "p_latest", "not all 0"),
    # 1,025 * 1,024 * 1 = 1,049,600 learner steps per rollout > 2**20 = 1,048,576 (MAX_ROLLOUT)
    (["--n-steps", "1025", "--tables", "1024"], "n_steps*tables*learner_seats", "at most 1,048,576"),
    (["--pool-size", "1025"], "pool_size", "[0, 1024]"),
])
def test_train_cli_refuses_illegal_values_with_one_line(flags, key, legal, tmp_path, capsys, no_cuda):
    out = tmp_path / "run"
    assert main(["--game", "tapeo", "--out", str(out), *TINY, *flags]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert key in err and legal in err and "Traceback" not in err
    assert not out.exists()   # refused before any work


@pytest.mark.parametrize("flags, key", [
    (["--players", "3", "--heuristics", "ppo_v1"], "heuristics: 'ppo_v1' plays [2, 4] players, not [3] of players=[3]"),
    (["--players", "2", "--eval-every", "32", "--eval-players", "2", "3", "--baselines", "random", "ppo_v1"],
     "baselines: 'ppo_v1' plays [2, 4] players, not [3] of eval_players=[2, 3]"),
])
def test_train_cli_refuses_a_trained_opponent_at_a_table_size_it_does_not_play(flags, key, tmp_path, capsys):
    # Ronda Robada's ppo_v1 (the planner-fed network): its model card's player_counts are [2, 4]
    out = tmp_path / "run"
    assert main(["--game", "robada", "--out", str(out), *TINY, *flags]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and key in err and "Traceback" not in err, err
    assert not out.exists()   # refused before any work


@pytest.mark.parametrize("where", ["file", "below_file"])
def test_train_cli_refuses_an_unwritable_out(where, tmp_path, capsys):
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    out = blocker if where == "file" else blocker / "run"
    assert main(["--game", "tapeo", "--out", str(out), *TINY]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --out") and err.count("\n") == 1 and "is a file, not a folder; legal:" in err
    if os.geteuid() != 0:   # root writes anywhere: the permission case only means something for other users
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        assert main(["--game", "tapeo", "--out", str(locked / "run"), *TINY]) == 2
        assert "cannot write in" in capsys.readouterr().err


def test_train_command_exits_2_without_traceback(tmp_path):
    r = subprocess.run([sys.executable, "-m", "hod.training.train", "--game", "tapeo", "--out", str(tmp_path / "r"),
                        *TINY, "--learning-rate", "-1"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("error: learning_rate=-1.0:") and "legal: a number in (0, 1]" in r.stderr
    assert "Traceback" not in r.stderr and r.stderr.count("\n") == 1


def test_toml_file_and_python_api_use_the_same_schema(tmp_path, no_cuda):
    text = C.default_config_path("tapeo").read_text().replace("gamma = 0.995", "gamma = 2.0")
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=r"^gamma=2.0: .*legal: a number in \[0, 1\]$"):
        C.validate_config("tapeo", C.load_config("tapeo", path))
    cfg = C.smoke_config("tapeo")
    for key, bad, legal in [("gamma", 2.0, "[0, 1]"), ("clip_range", -0.2, "(0, 1]"), ("device", "cuda", "'cpu'"),
                            ("heuristics", ["expret"], "registered"), ("tables", 1.5, "an integer >= 1"),
                            ("opponent_deterministic", 1, "bool"), ("seed", -1, "[0, 2147483647]")]:
        with pytest.raises(ConfigError, match=key) as e:
            Trainer("tapeo", C.override_keys(cfg, {key: bad}), tmp_path / "run", progress=False, log=None)
        assert legal in str(e.value)
    with pytest.raises(ConfigError, match="unknown config key 'learning_rat'; legal keys: .*'learning_rate'"):
        C.validate_config("tapeo", {"ppo": {**cfg["ppo"], "learning_rat": 1.0}, **{k: v for k, v in cfg.items()
                                                                                      if k != "ppo"}})
    with pytest.raises(ConfigError, match="is a file"):
        (tmp_path / "f").write_text("")
        Trainer("tapeo", cfg, tmp_path / "f" / "run", progress=False, log=None)
    assert not (tmp_path / "run").exists()


def test_schema_accepts_the_shipped_configs_and_reports_every_bad_key():
    for game in ("tapeo", "robada"):
        model = C.validate_config(game, C.load_config(game))
        assert model.learning_rate > 0
    cfg = C.override_keys(C.load_config("tapeo"), {"gamma": 2.0, "learning_rate": 0.0})
    with pytest.raises(ConfigError) as e:
        C.validate_config("tapeo", cfg)
    assert "gamma=2.0" in str(e.value) and "learning_rate=0.0" in str(e.value) and "\n" not in str(e.value)
