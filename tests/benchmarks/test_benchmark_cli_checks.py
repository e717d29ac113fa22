"""The benchmark command lines check their options before any work: an ``--out`` that cannot be
written, seeds whose later games would pass 2**64-1, ``--quick`` against explicit options; they
write their files all or none, keep a dotted ``--out`` prefix whole, and end on Ctrl-C with one
line. The work itself is replaced by stand-ins (nothing is timed), except one tiny distillation."""
from __future__ import annotations

import json
import os

import pytest

from hod.benchmarks import (decision_latency, engine_scaling, engine_speed, robada_search_edge, robada_search_speed,
                            tapeo_expert_speed, tapeo_playout_distill, tapeo_search_speed, throughput)


class Ran(Exception):
    """Raised by a stand-in for a benchmark's work: the options reached it."""


def _usage_error(capsys, module: str) -> str:
    """The last stderr line, checked to be ``module``'s usage error."""
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert line.startswith(f"python -m hod.benchmarks.{module}: error: "), line
    return line.split(": error: ", 1)[1]


def _exit(main, argv) -> int:
    with pytest.raises(SystemExit) as e:
        main(argv)
    return e.value.code


# ---- engine_speed: --quick keeps the options given with it; Ctrl-C is one line ------------------
@pytest.mark.parametrize("argv,want", [
    ([], ((1, 4096), 2.0, 3)),
    (["--quick"], ((1, 8), 0.02, 1)),
    # --quick replaced these before: the run timed B = 1 and 8 for 0.02 s, once
    (["--quick", "--batch-sizes", "2", "3"], ((2, 3), 0.02, 1)),
    (["--quick", "--seconds", "0.5", "--repeats", "4"], ((1, 8), 0.5, 4)),
    (["--batch-sizes", "5", "--seconds", "0.25"], ((5,), 0.25, 3)),
])
def test_engine_speed_quick_fills_in_only_the_options_not_given(argv, want, monkeypatch):
    calls = []

    def run(batch_sizes, seconds, repeats, **kw):
        calls.append((batch_sizes, seconds, repeats))
        raise Ran

    monkeypatch.setattr(engine_speed, "run", run)
    with pytest.raises(Ran):
        engine_speed.main(argv + ["--cpus", str(min(os.sched_getaffinity(0))), "--no-pgx", "--no-compile"])
    assert calls == [want]


@pytest.mark.parametrize("module", ["engine_speed", "engine_scaling"])
def test_ctrl_c_ends_the_engine_benchmarks_with_one_line(module, monkeypatch, capsys):
    mod = {"engine_speed": engine_speed, "engine_scaling": engine_scaling}[module]
    available = os.sched_getaffinity(0)
    if module == "engine_scaling" and len(available) < 2:
        pytest.skip("engine_scaling needs two CPUs")

    def run(*a, **k):
        raise KeyboardInterrupt   # what Ctrl-C raises in the timing loop

    monkeypatch.setattr(mod, "run", run)
    cpus = ",".join(map(str, sorted(available)[:2 if module == "engine_scaling" else 1]))
    try:
        code = _exit(mod.main, ["--cpus", cpus])
    except KeyboardInterrupt:   # the traceback before
        pytest.fail("KeyboardInterrupt escaped main()")
    assert code == 130
    assert capsys.readouterr().err.strip().splitlines() == ["error: interrupted (SIGINT)"]
    assert os.sched_getaffinity(0) == available


# ---- decision_latency: --out checked first, the suffixes appended, both files or neither ---------
ROWS = [{"model": "m", "game": "tapeo", "self_contained": True, "python_graph_us": 10.0, "python_bot_us": 20.0,
         "browser_graph_us": None}]


def test_decision_latency_refuses_an_unwritable_out_before_measuring(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(decision_latency, "measure", lambda *a, **k: pytest.fail("measured before checking --out"))
    (tmp_path / "afile").write_text("")
    out = tmp_path / "afile" / "x"   # FileExistsError traceback (status 1) after the whole run before
    assert _exit(decision_latency.main, ["--no-browser", "--out", str(out)]) == 2
    assert _usage_error(capsys, "decision_latency").startswith(
        f"--out {out}: cannot write in {tmp_path / 'afile'}: Not a directory")
    (tmp_path / "run.json").mkdir()
    assert _exit(decision_latency.main, ["--no-browser", "--out", str(tmp_path / "run")]) == 2
    assert _usage_error(capsys, "decision_latency") == (
        f"--out {tmp_path / 'run'}: {tmp_path / 'run.json'} is a folder; legal: a prefix whose .md, .json files "
        f"are not folders")
    assert not (tmp_path / "run.md").exists()


def test_decision_latency_keeps_a_dotted_prefix_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(decision_latency, "measure", lambda *a, **k: [dict(r) for r in ROWS])
    decision_latency.main(["--no-browser", "--out", str(tmp_path / "dl" / "run.v2")])
    # with_suffix wrote dl/run.md and dl/run.json before
    assert sorted(os.listdir(tmp_path / "dl")) == ["run.v2.json", "run.v2.md"]
    assert json.loads((tmp_path / "dl" / "run.v2.json").read_text())["rows"] == ROWS
    assert "| m | tapeo | yes | 10 | 20 | - | - |" in (tmp_path / "dl" / "run.v2.md").read_text()


def test_decision_latency_writes_both_files_or_neither(tmp_path, monkeypatch, capsys):
    def measure(*a, **k):   # run.json becomes a folder while measuring, after the check
        (tmp_path / "run.json").mkdir()
        return [dict(r) for r in ROWS]

    monkeypatch.setattr(decision_latency, "measure", measure)
    assert _exit(decision_latency.main, ["--no-browser", "--out", str(tmp_path / "run")]) == 74
    assert capsys.readouterr().err.strip().splitlines() == [f"error: {tmp_path / 'run.json'}: Is a directory"]
    assert sorted(os.listdir(tmp_path)) == ["run.json"]   # run.md was written before run.json failed


# ---- throughput: --out-dir checked first, both files or neither, --quick keeps explicit options --
def _fake_throughput(monkeypatch, calls, during=None):
    def run(games, batch_sizes, seconds, repeats, *a, **k):
        calls.append((batch_sizes, seconds, repeats))
        if during:
            during()
        return {}

    monkeypatch.setattr(throughput, "run", run)
    monkeypatch.setattr(throughput, "format_markdown", lambda result, header: "table\n")
    monkeypatch.setattr(throughput, "plot_png", lambda result: b"\x89PNG")


def test_throughput_refuses_an_unwritable_out_dir_before_measuring(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(throughput, "run", lambda *a, **k: pytest.fail("measured before checking --out-dir"))
    (tmp_path / "afile").write_text("")
    assert _exit(throughput.main, ["--quick", "--out-dir", str(tmp_path / "afile")]) == 2
    assert _usage_error(capsys, "throughput") == (
        f"--out-dir {tmp_path / 'afile'}: {tmp_path / 'afile'} is a file, not a folder; legal: a folder that "
        f"exists and is writable, or that can be created in a writable folder")
    (tmp_path / "tp" / "throughput.png").mkdir(parents=True)
    assert _exit(throughput.main, ["--quick", "--out-dir", str(tmp_path / "tp")]) == 2
    assert _usage_error(capsys, "throughput") == (
        f"--out-dir {tmp_path / 'tp'}: {tmp_path / 'tp' / 'throughput.png'} is a folder; legal: a folder whose "
        f"throughput.md, throughput.png are files or do not exist yet")
    assert os.listdir(tmp_path / "tp") == ["throughput.png"]   # throughput.md was written before


def test_throughput_writes_both_files_or_neither(tmp_path, monkeypatch, capsys):
    calls = []
    _fake_throughput(monkeypatch, calls, during=lambda: (tmp_path / "throughput.png").mkdir())
    assert _exit(throughput.main, ["--quick", "--out-dir", str(tmp_path)]) == 74
    assert capsys.readouterr().err.strip().splitlines()[-1] == f"error: {tmp_path / 'throughput.png'}: Is a directory"
    assert os.listdir(tmp_path) == ["throughput.png"]
    _fake_throughput(monkeypatch, calls)
    throughput.main(["--quick", "--out-dir", str(tmp_path / "ok")])
    assert (tmp_path / "ok" / "throughput.md").read_text() == "table\n"
    assert (tmp_path / "ok" / "throughput.png").read_bytes() == b"\x89PNG"


@pytest.mark.parametrize("argv,want", [
    (["--quick"], ((1, 64), 0.02, 1)),
    (["--quick", "--seconds", "0.5", "--batch-sizes", "8"], ((8,), 0.5, 1)),
    (["--repeats", "2"], ((1, 64, 1024, 4096, 8192), 1.0, 2)),
])
def test_throughput_quick_fills_in_only_the_options_not_given(argv, want, tmp_path, monkeypatch):
    calls = []
    _fake_throughput(monkeypatch, calls)
    throughput.main(argv + ["--out-dir", str(tmp_path)])
    assert calls == [want]


# ---- robada_search_edge: --out checked first; --predictability's deal seeds stay below 2**64 -----
def test_robada_search_edge_refuses_an_unwritable_out_before_playing(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(robada_search_edge, "play_variant", lambda *a: pytest.fail("played before checking --out"))
    (tmp_path / "afile").write_text("")
    out = tmp_path / "afile" / "x"
    assert _exit(robada_search_edge.main, ["--variants", "uniform", "--out", str(out)]) == 2
    assert _usage_error(capsys, "robada_search_edge").startswith(
        f"--out {out}: cannot write in {tmp_path / 'afile'}: Not a directory")


def test_robada_search_edge_bounds_the_seed_of_the_predictability_games(monkeypatch, capsys):
    limit = robada_search_edge.predictability_seed_limit(3)
    assert limit == 184467440737095   # (2**64 - 3) // 100000
    assert limit * 100_000 + 2 <= 2**64 - 1 < (limit + 1) * 100_000 + 2
    monkeypatch.setattr(robada_search_edge, "play_variant", lambda *a: pytest.fail("played with a bad --seed"))
    # 2**64-1 dealt from seed * 100000 + g: ConfigError traceback after the variants had run
    argv = ["--variants", "uniform", "--predictability", "3", "--seed", str(2**64 - 1)]
    assert _exit(robada_search_edge.main, argv) == 2
    assert _usage_error(capsys, "robada_search_edge") == (
        "--seed 18446744073709551615 with --predictability 3: its deal seeds seed * 100000 + game pass 2**64-1; "
        "legal values: --seed 0..184467440737095 with --predictability 3")
    seen = []
    monkeypatch.setattr(robada_search_edge, "predictability", lambda games, seed, n: seen.append(seed) or {})
    argv = ["--variants", "uniform", "--predictability", "3", "--seed", str(limit), "--deals", "1"]
    monkeypatch.setattr(robada_search_edge, "play_variant", lambda *a: {
        "games": 1, "win_rate": 0.5, "win_ci": (0, 1), "margin": 0.0, "margin_ci": (0, 0), "seconds": 0})
    assert robada_search_edge.main(argv) == 0 and seen == [limit]
    # without --predictability the whole seed range stays legal (the variants' deals use SeedSequence)
    assert robada_search_edge.main(["--variants", "uniform", "--seed", str(2**64 - 1), "--deals", "1"]) == 0


# ---- seeds of the speed benchmarks and the distillation: 0..2**63-1 ----------------------------
@pytest.mark.parametrize("module", ["tapeo_expert_speed", "tapeo_search_speed", "robada_search_speed",
                                    "tapeo_playout_distill"])
def test_a_seed_whose_later_games_pass_2_64_is_refused(module, capsys):
    mod = {m.__name__.rsplit(".", 1)[1]: m for m in (tapeo_expert_speed, tapeo_search_speed, robada_search_speed,
                                                      tapeo_playout_distill)}[module]
    # seed + 1 (the second game) overflowed: ConfigError or OverflowError tracebacks, after some work
    assert _exit(mod.main, ["--seed", str(2**64 - 1)]) == 2
    assert _usage_error(capsys, module) == ("argument --seed: invalid value '18446744073709551615'; legal values: "
                                            "an integer in 0..2**63-1")


def test_the_largest_seed_plays_several_games():
    seed = tapeo_expert_speed.MAX_SEED
    obs, _ = tapeo_expert_speed.positions(2, 200, seed)   # 2 players: at most 60 rows a game, so >= 4 games
    assert obs.shape == (200, 157)
    assert len(tapeo_search_speed.positions(2, 25, tapeo_search_speed.MAX_SEED)) == 25   # <= 10 a game


# ---- tapeo_playout_distill: --out checked first, the three files written together --------------
def test_distillation_refuses_an_unwritable_out_before_playing(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(tapeo_playout_distill, "distill", lambda *a: pytest.fail("ran before checking --out"))
    (tmp_path / "afile").write_text("")
    out = tmp_path / "afile" / "x.onnx"
    assert _exit(tapeo_playout_distill.main, ["--out", str(out)]) == 2
    assert _usage_error(capsys, "tapeo_playout_distill") == (
        f"--out {out}: {tmp_path / 'afile'} is a file, not a folder; legal: a folder that exists and is writable, "
        f"or that can be created in a writable folder")
    (tmp_path / "p.golden.json").mkdir()
    assert _exit(tapeo_playout_distill.main, ["--out", str(tmp_path / "p.onnx")]) == 2
    assert _usage_error(capsys, "tapeo_playout_distill") == (
        f"--out {tmp_path / 'p.onnx'}: {tmp_path / 'p.golden.json'} is a folder; legal: an --out whose p.onnx, "
        f"p.json, p.golden.json are files or do not exist yet")
    # the batched engine's own limit, refused by the engine after the teacher was loaded before
    assert _exit(tapeo_playout_distill.main, ["--games", str(2**24 + 1)]) == 2
    assert _usage_error(capsys, "tapeo_playout_distill") == (
        "argument --games: invalid value '16777217'; legal values: an integer in 1..16777216")


def test_distillation_writes_its_three_files_or_none(tmp_path, monkeypatch):
    pytest.importorskip("onnxruntime")
    pytest.importorskip("torch")
    pytest.importorskip("onnx")
    import numpy as np

    from hod.agents.onnx_policy import OnnxPolicy
    from hod.training import export

    golden_data = export.golden_data

    def late_folder(*a, **k):   # the golden file's name taken by a folder once the work is done
        (tmp_path / "p.golden.json").mkdir()
        return golden_data(*a, **k)

    monkeypatch.setattr(export, "golden_data", late_folder)
    argv = ["--out", str(tmp_path / "p.onnx"), "--games", "2", "--epochs", "1", "--hidden", "4"]
    assert _exit(tapeo_playout_distill.main, argv) == 74
    assert os.listdir(tmp_path) == ["p.golden.json"]   # p.onnx and p.json were written before the golden failed
    monkeypatch.setattr(export, "golden_data", golden_data)
    out = tmp_path / "ok" / "p.onnx"
    card = tapeo_playout_distill.main(["--out", str(out), "--games", "2", "--epochs", "1", "--hidden", "4",
                                       "--seed", str(tapeo_playout_distill.MAX_SEED)])
    assert sorted(os.listdir(out.parent)) == ["p.golden.json", "p.json", "p.onnx"]
    assert card["training"]["seed"] == 2**63 - 1 and json.loads(out.with_suffix(".json").read_text())["onnx"] == \
        card["onnx"]
    golden = export.load_golden(export.golden_path(out))
    action, _ = OnnxPolicy(out, game="tapeo").run(golden["observation"], golden["action_mask"])
    assert golden["model"] == "p.onnx" and np.array_equal(action, golden["action"])
