"""Safe to load: nothing we read unpickles, and checkpoint writes survive a kill.

Each test plants a pickled payload that would create a file (``MARKER``) where one of our load
paths reads, shows that the payload is live (``pickle.loads`` of the same bytes creates its
marker), and that every load path refuses the file with a clear error and creates nothing:
``load_checkpoint``, ``PPOBot``, ``python -m hod.training.train --resume``,
``python -m hod.training.export``, the pool snapshots inside a checkpoint, the imitation cache and
the ONNX exports.
"""
from __future__ import annotations

import io
import json
import os
import pickle
import re
import signal
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import numpy as np
import pytest

from hod.agents.model_card import CheckpointError
from hod.training import checkpoint as ckpt_mod
from hod.training.checkpoint import MODEL_CARD_MEMBER, load_checkpoint, save_checkpoint
from hod.training.config import smoke_config
from hod.training.train import Trainer

ROOT = Path(__file__).resolve().parents[2]


class Payload:
    """Unpickling this opens (creates) ``marker`` for writing: a stand-in for any code."""

    def __init__(self, marker) -> None:
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _live(payload_bytes: bytes, marker: Path) -> None:
    """The payload runs when unpickled (so the refusals below are meaningful)."""
    assert not marker.exists()
    pickle.loads(payload_bytes).close()
    assert marker.exists()
    marker.unlink()


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("safe_run")
    t = Trainer("tapeo", smoke_config("tapeo", players=[2]), out, progress=False, log=None)
    t.run()
    return t


def _with_members(src: Path, dst: Path, replace: dict[str, bytes] | None = None) -> Path:
    """Copy checkpoint ``src`` to ``dst`` with members replaced or added."""
    replace = dict(replace or {})
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for item in zin.infolist():
            zout.writestr(item.filename, replace.pop(item.filename, zin.read(item.filename)))
        for name, data in replace.items():
            zout.writestr(name, data)
    return dst


def _pickled_npz(marker: Path, **plain) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **plain, evil=np.array([Payload(marker)], dtype=object))   # savez pickles object arrays
    return buf.getvalue()


def _sb3_archive(run, marker: Path, dst: Path) -> Path:
    """The issue's attack: an archive ``MaskablePPO.save`` wrote, one ``:serialized:`` field of its
    ``data`` replaced by the payload, and a model card copied from a real checkpoint."""
    import base64

    buf = io.BytesIO()
    run.model.save(buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as z:
        members = {n: z.read(n) for n in z.namelist()}
    data = json.loads(members["data"])
    field = next(k for k, v in data.items() if isinstance(v, dict) and ":serialized:" in v)
    data[field][":serialized:"] = base64.b64encode(pickle.dumps(Payload(marker))).decode()
    members["data"] = json.dumps(data).encode()
    with zipfile.ZipFile(run.out / "checkpoints" / "final.zip") as z:
        members[MODEL_CARD_MEMBER] = z.read(MODEL_CARD_MEMBER)
    with zipfile.ZipFile(dst, "w") as z:
        for name, b in members.items():
            z.writestr(name, b)
    return dst


@pytest.fixture
def crafted(run, tmp_path):
    """``{kind: path}`` of malicious checkpoints, and the marker their payloads would create."""
    marker = tmp_path / "pwned"
    _live(pickle.dumps(Payload(marker)), marker)
    good = run.out / "checkpoints" / "final.zip"
    with zipfile.ZipFile(good) as z:
        policy = dict(np.load(io.BytesIO(z.read(ckpt_mod.POLICY_MEMBER)), allow_pickle=False))
        optim = dict(np.load(io.BytesIO(z.read(ckpt_mod.OPTIMIZER_MEMBER)), allow_pickle=False))
        pool_names = [n for n in z.namelist() if n.startswith(ckpt_mod.POOL_PREFIX)]
        assert pool_names, "the run must have stored a pool snapshot"
        snapshot = dict(np.load(io.BytesIO(z.read(pool_names[0])), allow_pickle=False))
    snapshot["w0"] = np.array([Payload(marker)], dtype=object)   # the first array the loader reads
    buf = io.BytesIO()
    np.savez(buf, **snapshot)
    files = {
        "sb3_archive": _sb3_archive(run, marker, tmp_path / "sb3.zip"),
        "pickled_weights": _with_members(good, tmp_path / "w.zip", {ckpt_mod.POLICY_MEMBER: _pickled_npz(marker, **policy)}),
        "pickled_optimizer": _with_members(good, tmp_path / "o.zip",
                                           {ckpt_mod.OPTIMIZER_MEMBER: _pickled_npz(marker, **optim)}),
        "pickled_pool": _with_members(good, tmp_path / "p.zip", {pool_names[0]: buf.getvalue()}),
        "raw_pickle_member": _with_members(good, tmp_path / "r.zip",
                                           {ckpt_mod.POLICY_MEMBER: pickle.dumps(Payload(marker))}),
        "extra_pickle_member": _with_members(good, tmp_path / "x.zip", {"data": pickle.dumps(Payload(marker))}),
        "extra_member": _with_members(good, tmp_path / "y.zip", {"payload.pkl": pickle.dumps(Payload(marker))}),
    }
    return files, marker


MESSAGES = {
    "sb3_archive": "pickle-based stable-baselines3 archive",
    "pickled_weights": "pickled objects are refused",
    "pickled_optimizer": "pickled objects are refused",
    "pickled_pool": "pool snapshot .*pickled objects are refused.*dtype object",
    "raw_pickle_member": "pickled objects are refused",
    "extra_pickle_member": "pickle-based stable-baselines3 archive",
    "extra_member": "unexpected members",
}


def test_load_checkpoint_refuses_every_pickled_file(crafted):
    files, marker = crafted
    for kind, path in files.items():
        with pytest.raises(CheckpointError, match=MESSAGES[kind]):
            load_checkpoint(path)
        assert not marker.exists(), kind


def test_ppo_bot_refuses_them(crafted):
    from hod.training.ppo_bot import PPOBot

    files, marker = crafted
    for kind, path in files.items():
        with pytest.raises(CheckpointError, match=MESSAGES[kind]):
            PPOBot(path, game="tapeo")
        assert not marker.exists(), kind


def test_train_resume_refuses_them(crafted, tmp_path, capsys):
    from hod.training.train import main

    files, marker = crafted
    for kind, path in files.items():
        try:
            rc = main(["--game", "tapeo", "--resume", str(path), "--out", str(tmp_path / kind), "--no-progress",
                       "--total-steps", "64", "--eval-every", "0"])
        except SystemExit as e:   # the card is read first, by the argument parser
            rc = e.code
        assert rc == 2, kind
        assert re.search(MESSAGES[kind], capsys.readouterr().err), kind
        assert not marker.exists(), kind
        assert not (tmp_path / kind / "checkpoints").exists(), kind


def test_export_refuses_them(crafted, tmp_path, capsys):
    from hod.training.export import main

    files, marker = crafted
    for kind, path in files.items():
        assert main([str(path), "--out", str(tmp_path / "exp")]) == 2, kind
        assert re.search(MESSAGES[kind], capsys.readouterr().err), kind
        assert not marker.exists(), kind
    assert not (tmp_path / "exp").exists()


def test_the_good_checkpoint_still_loads_and_holds_data_only(run):
    path = run.out / "checkpoints" / "final.zip"
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
        for name in names:
            assert name.endswith((".json", ".npz")), name
            if name.endswith(".npz"):   # plain arrays only: loads without pickle
                with np.load(io.BytesIO(z.read(name)), allow_pickle=False) as f:
                    assert all(f[k].dtype.kind in "biufU" for k in f.files)   # numbers, str
    model, card, pool = load_checkpoint(path)
    assert model.num_timesteps == card["training"]["steps"] and pool


def test_a_pickled_imitation_cache_is_never_unpickled(tmp_path, monkeypatch):
    import hod.training.imitation as imitation

    kw = dict(game="tapeo", teacher="greedy", player_counts=[2], num_decisions=20, seed=3)
    first = imitation.cached_teacher_decisions(str(tmp_path), **kw)
    (cache,) = tmp_path.glob("bc_*.npz")
    marker = tmp_path / "pwned"
    _live(pickle.dumps(Payload(marker)), marker)
    arrays = {k: np.empty(len(v), dtype=object) for k, v in first.items()}
    for a in arrays.values():
        a[:] = [Payload(marker)] * len(a)
    np.savez(cache, **arrays)                     # right keys and lengths, pickled contents
    with pytest.warns(UserWarning, match="unusable teacher-decision cache.*object arrays are pickles, refused"):
        again = imitation.cached_teacher_decisions(str(tmp_path), **kw)
    assert not marker.exists()
    assert all(np.array_equal(first[k], again[k]) for k in first)   # recorded again, rewritten
    with np.load(cache, allow_pickle=False) as f:
        assert f["action"].dtype == np.int64


def test_an_onnx_export_that_is_a_pickle_is_refused(tmp_path):
    pytest.importorskip("onnxruntime")
    from hod.agents.onnx_policy import OnnxPolicy

    marker = tmp_path / "pwned"
    data = pickle.dumps(Payload(marker))
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(data)
    with pytest.raises(CheckpointError):
        OnnxPolicy(bad, verify=False)
    assert not marker.exists()


def test_no_module_of_ours_unpickles_files():
    """A static guard: our sources call no unpickling loader, and ``np.load`` always with
    ``allow_pickle=False``. (``hod.evaluation.play`` round-trips a failure through pickle in memory,
    ``pickle.loads(pickle.dumps(...))``, to check it can travel to a worker: no file.)"""
    folders = ["core", "adapters", "evaluation", "apps", "training", "agents", "benchmarks", "tapeo_env", "robada_env", "kuhn_env", "tests"]
    banned = re.compile(r"\b(cloudpickle|joblib|dill|shelve|marshal\.loads?|torch\.load|pickle\.load\b|"
                        r"(PPO|MaskablePPO|BaseAlgorithm)\.load\b|set_parameters|load_from_zip_file)")
    offenders = []
    for folder in folders:
        for p in (ROOT / folder).rglob("*.py"):
            text = p.read_text(encoding="utf-8")
            rel = p.relative_to(ROOT).as_posix()
            for m in banned.finditer(text):
                if rel != "tests/training/test_safe_loading.py":
                    offenders.append(f"{rel}: {m.group(0)}")
            for m in re.finditer(r"np\.load\(([^()]|\([^()]*\))*\)", text):
                if "allow_pickle=False" not in m.group(0):
                    offenders.append(f"{rel}: {m.group(0)}")
            for m in re.finditer(r"pickle\.loads\(", text):
                if not text[m.end():].startswith("pickle.dumps(") and rel not in (
                        "tests/training/test_safe_loading.py",):
                    offenders.append(f"{rel}: pickle.loads of something other than a fresh pickle.dumps")
    assert offenders == []


# ---- kills ----------------------------------------------------------------------------------------
KILLED_WRITER = textwrap.dedent("""
    import os, sys, time
    from hod.core import atomic
    real = os.fsync
    def slow_fsync(fd):
        print("writing", flush=True)
        time.sleep(60)   # killed here, with the new bytes written but not renamed
    os.fsync = slow_fsync
    atomic.atomic_write_many([(sys.argv[1], b"new" * 100000), (sys.argv[1] + ".json", b"{}")])
""")


def test_a_killed_checkpoint_write_leaves_the_old_files_and_no_temporary_file(tmp_path):
    from hod.core.atomic import atomic_write_bytes

    target = tmp_path / "latest.zip"
    target.write_bytes(b"old")
    p = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, str(target)], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "writing"
        p.send_signal(signal.SIGKILL)
    finally:
        p.wait(30)
    assert target.read_bytes() == b"old"
    left = sorted(x.name for x in tmp_path.iterdir())
    if hasattr(os, "O_TMPFILE"):   # Linux: the bytes were in an unnamed file, gone with the process
        assert left == ["latest.zip"]
    # anywhere: the next write of the file removes what a dead writer left
    atomic_write_bytes(target, b"next")
    assert sorted(x.name for x in tmp_path.iterdir()) == ["latest.zip"] and target.read_bytes() == b"next"


def test_orphans_of_dead_writers_are_removed_and_live_ones_kept(tmp_path):
    from hod.core.atomic import atomic_write_bytes

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True)
    dead_pid = int(dead.stdout)
    orphan = tmp_path / f".latest.zip.{dead_pid}.ab12cd34.tmp"
    live = tmp_path / f".latest.zip.{os.getpid()}.00ff00ff.tmp"
    other = tmp_path / f".step_1.zip.{dead_pid}.ab12cd34.tmp"   # another target's, never written again: removed too
    for f in (orphan, live, other):
        f.write_bytes(b"x")
    atomic_write_bytes(tmp_path / "latest.zip", b"data")
    assert not orphan.exists() and live.exists() and not other.exists()


def test_the_side_card_is_renamed_right_after_its_checkpoint(run, tmp_path, monkeypatch):
    order = []
    real = os.replace
    monkeypatch.setattr(os, "replace", lambda a, b: (order.append(Path(b).name), real(a, b))[1])
    path = save_checkpoint(run.model, tmp_path / "latest.zip", run.model_card())
    assert order == ["latest.zip", "latest.json"]
    assert path.with_suffix(".json").stat().st_mtime_ns >= path.stat().st_mtime_ns
    with zipfile.ZipFile(path) as z:
        assert json.loads(z.read(MODEL_CARD_MEMBER)) == json.loads(path.with_suffix(".json").read_text())
    assert sorted(x.name for x in tmp_path.iterdir()) == ["latest.json", "latest.zip"]


def test_many_unexpected_members_are_named_in_a_short_line(run, tmp_path):
    """300,000 stray members once made a 4 MB "one line"; now the first 5 and a count."""
    good = run.out / "checkpoints" / "final.zip"
    extra = {f"stray/{i}": b"" for i in range(7)}     # 7 strays: 5 named, "... 2 more"
    path = _with_members(good, tmp_path / "many.zip", extra)
    with pytest.raises(CheckpointError) as e:
        load_checkpoint(path)
    msg = str(e.value)
    assert "'stray/0', 'stray/1', 'stray/2', 'stray/3', 'stray/4', '... 2 more'" in msg and "stray/5" not in msg
