"""``python -m hod.apps.demo --out DIR``: a folder that holds a demo run is replaced, one that holds
another run is refused before any work (nothing of it changes); the demo's evaluations,
checkpoints and snapshots come at most once per rollout."""
from __future__ import annotations

import json

import pytest

from hod.apps import demo
from hod.training import config as C

#: the Tapeo config's rollout: n_steps 32 x tables 64 x learner_seats 2 learner steps
ROLLOUT = 4096


def _every(cfg: dict) -> tuple[int, int, int]:
    c = C.flatten(cfg)
    return c["eval_every"], c["checkpoint_every"], c["snapshot_every"]


def test_demo_config_saves_and_evaluates_at_most_once_per_rollout():
    c = C.flatten(C.load_config("tapeo"))
    assert c["n_steps"] * c["tables"] * c["learner_seats"] == ROLLOUT
    assert _every(demo.demo_config(64)) == (4096, 4096, 4096)            # 64 // 3 = 21, 64 // 10 = 6: one rollout
    assert _every(demo.demo_config(20_000)) == (6666, 6666, 4096)        # 20000 // 10 = 2000 < one rollout
    assert _every(demo.demo_config(300_000)) == (100_000, 100_000, 30_000)   # the defaults: as before


class _Trainer:
    """Stands in for the demo's training (not what these tests are about); records its folders."""
    built: list = []

    def __init__(self, game, cfg, out, **kwargs):
        _Trainer.built.append(str(out))

    def run(self):
        return {"steps": 0, "interrupted": False, "env_steps_per_s": 0.0, "checkpoint": "none", "diagnostics": None}

    def numpy_policy(self):
        return None


@pytest.fixture
def quick(monkeypatch):
    _Trainer.built = []
    monkeypatch.setattr(demo, "Trainer", _Trainer)
    monkeypatch.setattr(demo, "evaluate_policy", lambda *a, **k: [])
    return _Trainer.built


def _run_folder(folder, game: str, cfg: dict) -> dict:
    """A run folder as training leaves it: ``config.json`` and a checkpoint; returns ``{file: bytes}``."""
    (folder / "checkpoints").mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"game": game, **cfg}))
    for name in ("latest.zip", "final.zip", "step_000004096.zip"):
        (folder / "checkpoints" / name).write_bytes(b"the run's own " + name.encode())
    return {str(p): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_a_folder_holding_another_run_is_refused_before_any_work(tmp_path, quick, capsys):
    run = tmp_path / "kuhn_run"
    files = _run_folder(run, "kuhn", C.load_config("kuhn"))
    with pytest.raises(SystemExit) as e:
        demo.main(["--out", str(run), "--steps", "64", "--final-games", "4", "--no-progress"])
    assert e.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and err.splitlines()[-1] == (
        f"python -m hod.apps.demo: error: {run} already holds a run; it is not a demo run (its config.json is not "
        f"the demo's Tapeo configuration) and the demo replaces only its own; legal: another --out (a new or empty "
        f"folder, or one that holds a demo run)")
    assert quick == [] and {str(p): p.read_bytes() for p in run.rglob("*") if p.is_file()} == files


@pytest.mark.parametrize("game, cfg", [
    ("tapeo", C.load_config("tapeo")),   # a Tapeo run of the default config: not the demo's
    ("kuhn", demo.demo_config(64)),      # the demo's keys, another game
    # a long training run that shares the demo's overrides but not its network, table sizes or budget
    # schedule: it used to pass for a demo run (only DEMO_OVERRIDES were compared), and be overwritten
    ("tapeo", C.override_keys(C.load_config("tapeo"), {**{k: v for k, v in demo.DEMO_OVERRIDES.items()},
                                                       "total_steps": 5_000_000, "players": [2],
                                                       "net_arch": [512, 512, 512]})),
    ("tapeo", C.override_keys(demo.demo_config(300_000), {"net_arch": [512, 512, 512]})),
])
def test_runs_that_are_not_the_demos_are_not_demo_runs(tmp_path, game, cfg):
    _run_folder(tmp_path / "r", game, cfg)
    assert demo.is_demo_run(tmp_path / "r") is False


def test_a_demo_run_is_replaced(tmp_path, quick, capsys):
    run = tmp_path / "demo_tapeo"
    # an earlier demo, with other steps and seed and the pool's heuristics as registered then
    _run_folder(run, "tapeo", C.override_keys(demo.demo_config(300_000, seed=3), {"heuristics": ["expert"]}))
    assert demo.is_demo_run(run) is True
    (run / "notes.txt").write_text("mine")
    assert demo.main(["--out", str(run), "--steps", "64", "--final-games", "4", "--no-progress"]) == 0
    assert quick == [str(run)] and (run / "final_evaluation.md").is_file()
    assert f"into {run}" in capsys.readouterr().out
    # replaced: nothing of the old run stays beside the new one (its step file would read as the
    # new run's; the stand-in trainer writes nothing), other files stay
    assert not (run / "checkpoints").exists() and not (run / "config.json").exists()
    assert (run / "notes.txt").read_text() == "mine"


@pytest.mark.parametrize("content", [None, "", "not json", "[1, 2]", '{"game": "tapeo", "env": 3}'])
def test_a_run_whose_config_cannot_be_read_is_not_a_demo_run(tmp_path, content):
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "latest.zip").write_bytes(b"x")
    if content is not None:
        (tmp_path / "config.json").write_text(content)
    assert demo.is_demo_run(tmp_path) is False


def test_a_new_or_empty_folder_is_used(tmp_path, quick):
    assert demo.main(["--out", str(tmp_path / "new"), "--steps", "64", "--final-games", "4", "--no-progress"]) == 0
    (tmp_path / "empty").mkdir()
    assert demo.main(["--out", str(tmp_path / "empty"), "--steps", "64", "--final-games", "4", "--no-progress"]) == 0
    assert quick == [str(tmp_path / "new"), str(tmp_path / "empty")]
