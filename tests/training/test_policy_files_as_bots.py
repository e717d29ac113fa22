"""A policy file (an ONNX export, a training checkpoint) goes wherever a bot name does on the
command line: the tournament's --lineup, the ladder's --bots, evaluate's --baselines
(hod.training.evaluate.resolve_bot); and docs/tournament.md's Python example runs as written."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

pytest.importorskip("onnxruntime")

from hod.agents.onnx_policy import OPPONENTS_DIR  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TAPEO = str(OPPONENTS_DIR / "tapeo_ppo.onnx")
ROBADA = str(OPPONENTS_DIR / "robada_ppo.onnx")


def test_tournament_lineup_takes_the_shipped_export(tmp_path, capsys):
    from hod.benchmarks.tournament import main

    prefix = tmp_path / "t"
    assert main(["--game", "tapeo", "--lineup", TAPEO, "greedy", "--games", "2", "--no-progress",
                 "--out", str(prefix)]) == 0
    data = json.loads(prefix.with_suffix(".json").read_text())
    assert data["labels"] == [TAPEO, "greedy"] and data["num_games"] == 2
    # 2 players, 2 games: one deal played in both seat orders, so each bot played both seats once
    assert [b["seat_games"] for b in data["bots"]] == [[1, 1], [1, 1]]
    assert f"| {TAPEO} | 2 |" in capsys.readouterr().out


def test_the_same_file_in_two_seats_is_numbered(capsys):
    from hod.benchmarks.tournament import main

    assert main(["--game", "tapeo", "--lineup", TAPEO, TAPEO, "--games", "2", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert f"| {TAPEO}#1 | 2 |" in out and f"| {TAPEO}#2 | 2 |" in out


@pytest.mark.parametrize("lineup, message", [
    ([ROBADA, "greedy"], f"error: {ROBADA}: policy was trained for game 'robada', not 'tapeo'"),
    (["nothere.onnx", "greedy"], "error: nothere.onnx: no such file; legal POLICY: an ONNX export (.onnx), "),
])
def test_an_unusable_file_in_the_lineup_exits_2_with_one_line(lineup, message, capsys):
    from hod.benchmarks.tournament import main

    assert main(["--game", "tapeo", "--lineup", *lineup, "--games", "2", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1


def test_a_file_at_a_table_size_it_was_not_trained_for_is_refused(capsys):
    from hod.benchmarks.tournament import main

    # the planner-fed Ronda Robada export (ppo_v1) was trained for 2 and 4 players
    v1 = str(OPPONENTS_DIR / "robada_ppo_v1.onnx")
    assert main(["--game", "robada", "--lineup", v1, "greedy", "greedy", "--games", "6", "--no-progress"]) == 2
    assert capsys.readouterr().err == f"error: {v1}: policy was trained for [2, 4] players, not 3\n"


def test_bot_options_keyed_by_a_file_s_path_reach_its_first_load(tmp_path, capsys):
    """An export copied without its model card is refused (its sha256 cannot be checked) unless
    ``--bot-options '{"PATH": {"verify": false}}'``, keyed by the path as given in the lineup
    (before: the file was loaded without its options first, so the refusal came anyway); an
    option the bot does not take is refused naming the legal ones."""
    import shutil

    from hod.benchmarks.tournament import main

    bare = tmp_path / "bare.onnx"
    shutil.copy(TAPEO, bare)   # no bare.json beside it
    base = ["--game", "tapeo", "--lineup", str(bare), "greedy", "--games", "2", "--no-progress"]
    assert main(base) == 2
    assert "no model card bare.json beside it" in capsys.readouterr().err
    assert main(base + ["--bot-options", json.dumps({str(bare): {"verify": False}})]) == 0
    assert f"| {bare} | 2 |" in capsys.readouterr().out
    assert main(base + ["--bot-options", json.dumps({str(bare): {"bogus": 1}})]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: unknown option(s) ['bogus'] for OnnxPolicy; legal options: [") and "'verify'" in err


def test_ladder_bots_take_a_file(tmp_path, capsys):
    from hod.benchmarks.ladder import main

    prefix = tmp_path / "l"
    assert main(["--game", "tapeo", "--bots", "random", TAPEO, "--games", "2", "--no-progress",
                 "--out", str(prefix)]) == 0
    data = json.loads(prefix.with_suffix(".json").read_text())
    assert sorted(data["labels"]) == sorted(["random", TAPEO]) and data["tables"] == [["random", TAPEO]]
    assert {"label": TAPEO, "name": TAPEO, "options": {}} in data["entries"]
    capsys.readouterr()
    assert main(["--game", "tapeo", "--bots", "random", TAPEO, "--update-strength"]) == 2
    assert "--update-strength records registered bots only" in capsys.readouterr().err


def test_evaluate_baselines_take_a_file(tmp_path, capsys):
    from hod.training.evaluate import main

    prefix = tmp_path / "e"
    assert main(["expert", "--game", "tapeo", "--baselines", "random", TAPEO, "--players", "2", "--games", "2",
                 "--no-progress", "--out", str(prefix)]) == 0
    rows = json.loads(prefix.with_suffix(".json").read_text())["rows"]
    assert [r["baseline"] for r in rows] == ["random", TAPEO] and [r["games"] for r in rows] == [2, 2]
    assert (tmp_path / "e_2p_vs_tapeo_ppo.json").is_file()   # named by the file's stem


def test_the_docs_python_example_runs(tmp_path, monkeypatch):
    text = (ROOT / "docs" / "tournament.md").read_text()
    block = next(b for b in re.findall(r"```python\n(.*?)```", text, re.S) if "make_policy_bot" in b)
    assert "num_games=400" in block
    monkeypatch.chdir(tmp_path)   # it writes eval.json and eval.png here
    namespace: dict = {}
    exec(block.replace("num_games=400", "num_games=2").replace("progress=True", "progress=False"), namespace)
    res = namespace["res"]
    assert res.labels == ["greedy", "ppo"] and res.num_games == 2
    assert (tmp_path / "eval.json").is_file() and (tmp_path / "eval.png").is_file()
