"""``python -m hod.training.evaluate``: a policy file (ONNX export or training checkpoint) or a registered
bot against baselines; modules that are not commands say so; the demo's final evaluation shows progress."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hod.agents.onnx_policy import OPPONENTS_DIR
from hod.core.games import get_game
from hod.training import config as C
from hod.training.evaluate import main
from hod.training.numpy_policy import NumpyPolicy
from hod.training.train import Trainer

ROOT = Path(__file__).resolve().parents[2]
TAPEO_ONNX = OPPONENTS_DIR / "tapeo_ppo.onnx"


def test_evaluate_an_onnx_export_writes_the_tournament_reports(tmp_path, capsys):
    prefix = tmp_path / "out" / "tapeo_ppo"
    assert main([str(TAPEO_ONNX), "--baselines", "random", "expert", "--players", "2", "--games", "6",
                 "--out", str(prefix), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "| 2 | random | 6 |" in out and "| 2 | expert | 6 |" in out
    summary = json.loads(prefix.with_suffix(".json").read_text())
    assert summary["game"] == "tapeo" and [r["baseline"] for r in summary["rows"]] == ["random", "expert"]
    for b in ("random", "expert"):
        base = tmp_path / "out" / f"tapeo_ppo_2p_vs_{b}"
        res = json.loads(base.with_suffix(".json").read_text())   # the tournament's own JSON
        assert res["labels"] == ["tapeo_ppo", b] and res["num_games"] == 6
        assert "tapeo_ppo" in base.with_suffix(".md").read_text()
        assert base.with_suffix(".png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_evaluate_a_training_checkpoint_and_a_bot_name(tmp_path, capsys):
    t = Trainer("tapeo", C.smoke_config("tapeo", total_steps=64), tmp_path / "run", progress=False, log=None)
    ckpt = t.run()["checkpoint"]
    assert main([ckpt, "--baselines", "random", "--players", "2", "--games", "4", "--no-progress"]) == 0
    assert "| 2 | random | 4 |" in capsys.readouterr().out
    assert main(["expert", "--game", "robada", "--baselines", "greedy", "--players", "2", "--games", "2",
                 "--no-progress"]) == 0
    assert "| 0 | 2 | greedy | 2 |" in capsys.readouterr().out


@pytest.mark.parametrize("argv, legal", [
    (["no_such.onnx"], "legal POLICY: an ONNX export (.onnx), a training checkpoint (.zip) or a registered bot"),
    (["expert"], "give --game; legal games: ['kuhn', 'robada', 'tapeo'"),
    (["expret", "--game", "tapeo"], "registered bots: ['expert', 'greedy'"),
    (["README.md"], "legal POLICY"),
    ([str(TAPEO_ONNX), "--game", "robada"], "trained for game 'tapeo', not 'robada'"),
    ([str(OPPONENTS_DIR / "robada_ppo_v1.onnx"), "--players", "3"], "trained for [2, 4] players, not 3"),
    (["expert", "--game", "tapeo", "--games", "0"], "--games=0: input should be greater than or equal to 1; legal"),
    (["expert", "--game", "tapeo", "--baselines", "expret"], "registered: ['expert', 'greedy'"),
    (["expert", "--game", "tapeo", "--players", "9"], "legal values: [2, 3, 4, 5, 6]"),
    (["expert", "--game", "tapeo", "--env-kwargs", "[1]"], "legal: a JSON object"),
])
def test_evaluate_refuses_with_one_line_naming_what_is_legal(argv, legal, capsys):
    assert main([*argv, "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and legal in err, err


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True, timeout=120, cwd=ROOT)


def test_evaluate_module_is_a_command():
    r = _run("hod.training.evaluate")
    assert r.returncode == 2 and "usage: python -m hod.training.evaluate" in r.stderr
    r = _run("hod.training.evaluate", "--help")
    assert r.returncode == 0 and "POLICY" in r.stdout and "--baselines" in r.stdout


def test_the_tournament_library_points_to_its_command():
    r = _run("hod.evaluation.tournament")
    assert r.returncode == 2 and "python -m hod.benchmarks.tournament" in r.stderr


def _command_modules() -> list[str]:
    """Every module of the command folders with an ``if __name__ == "__main__"`` block."""
    found = []
    for folder, package in [("training", "hod.training"), ("benchmarks", "hod.benchmarks"), ("apps", "hod.apps"),
                            ("agents", "hod.agents")]:
        for f in sorted((ROOT / folder).glob("*.py")):
            text = f.read_text()
            if '__name__ == "__main__"' in text and "main(" in text:
                found.append(f"{package}.{f.stem}")
    return found


@pytest.mark.slow
@pytest.mark.parametrize("module", _command_modules())
def test_every_command_module_answers_help(module):
    r = _run(module, "--help")
    assert r.returncode == 0 and "usage:" in r.stdout, (module, r.stdout[-500:], r.stderr[-500:])


def test_demo_final_evaluation_shows_progress(tmp_path, monkeypatch, capsys):
    from hod.apps import demo

    size, actions = get_game("tapeo").layout.size, get_game("tapeo").num_actions
    rng = np.random.default_rng(0)
    policy = NumpyPolicy([(rng.standard_normal((8, size)).astype(np.float32), np.zeros(8, np.float32))],
                         (rng.standard_normal((actions, 8)).astype(np.float32), np.zeros(actions, np.float32)))

    class QuickTrainer:   # the demo's training is not what this test is about
        def __init__(self, *a, **k):
            pass

        def run(self):
            return {"steps": 0, "interrupted": False, "env_steps_per_s": 0.0, "checkpoint": "none"}

        def numpy_policy(self):
            return policy

    monkeypatch.setattr(demo, "Trainer", QuickTrainer)
    assert demo.main(["--out", str(tmp_path), "--steps", "10", "--final-games", "4"]) == 0
    err = capsys.readouterr().err
    for n in (2, 4):
        for b in ("random", "greedy", "expert"):
            assert f"{n}p policy vs {b}" in err and "4/4" in err


#: Kuhn's raw_env options less those the tournament sets (num_players, illegal_action) or forbids
#: (max_cycles): the legal ones of --env-kwargs
KUHN_ENV_OPTIONS = "['render_mode', 'reward_scheme']"


@pytest.mark.parametrize("policy, env_kwargs, error", [
    (["random", "--game", "kuhn"], '{"foo": 1}', f"unknown option(s) ['foo']; legal options: {KUHN_ENV_OPTIONS}"),
    (["random", "--game", "kuhn"], '{"reward_scheme": "bogus"}',
     "reward_scheme='bogus' is not allowed; legal values: ['points', 'win_loss', 'margin']"),
    (["random", "--game", "kuhn"], '{"max_cycles": -1}',
     "env_kwargs may not set 'max_cycles': tournament games are played to the end; legal: the other raw_env "
     "options of 'kuhn' (e.g. reward_scheme, the rule options)"),
    (["random", "--game", "kuhn"], '{"num_players": 3}',
     "env_kwargs may not set 'num_players': the tournament sets it; legal: the other raw_env options of 'kuhn'"),
    ([str(TAPEO_ONNX)], '{"foo": 1}', "unknown option(s) ['foo']; legal options: ['render_mode', 'reward_scheme', "
                                      "'round_rewards']"),
])
def test_evaluate_checks_env_kwargs_before_the_header_and_any_game(policy, env_kwargs, error, capsys):
    assert main([*policy, "--baselines", "random", "--players", "2", "--games", "2", "--env-kwargs", env_kwargs,
                 "--no-progress"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == f"error: {error}\n"


def test_check_env_kwargs_builds_the_env_and_nothing_else():
    from hod.core.errors import ConfigError
    from hod.evaluation.tournament import check_env_kwargs

    given = {"closing_ace": False}
    assert check_env_kwargs("robada", given, 4) == given and check_env_kwargs("robada", given) is not given
    assert check_env_kwargs("kuhn", None, 2) == {}
    with pytest.raises(ConfigError, match=r"^unknown option\(s\) \['foo'\]"):
        check_env_kwargs("kuhn", {"foo": 1}, 2)
    check_env_kwargs("kuhn", {"foo": 1})   # without a table size only the tournament's own refusals
    with pytest.raises(ConfigError, match="may not set 'max_cycles'"):
        check_env_kwargs("kuhn", {"max_cycles": 5})


def test_evaluate_help_shows_a_percent_sign():
    from hod.training.evaluate import build_parser

    text = " ".join(build_parser().format_help().split())
    assert "win rate with its 95% Wilson interval per table size" in text and "%%" not in text
