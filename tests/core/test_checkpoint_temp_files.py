"""Temporary files left by a killed checkpoint write are removed by the next write in the folder
and when a run starts (hod.core.atomic.remove_folder_orphans), even when the file being
written (a step_<N>.zip snapshot) is never written again."""
from __future__ import annotations

import os
import subprocess
import sys

from hod.core.atomic import atomic_write_bytes, atomic_write_many, remove_folder_orphans


def _dead_pid() -> int:
    """The id of a process that has ended (a child, waited for)."""
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def _orphan(folder, name: str, pid: int):
    """A temporary file as a writer killed between its fsync and its rename leaves it."""
    path = folder / f".{name}.{pid}.0badcafe.tmp"
    path.write_bytes(b"half a checkpoint")
    return path


def test_the_next_checkpoint_removes_a_killed_snapshot_write(tmp_path):
    ckpt = tmp_path / "checkpoints"
    ckpt.mkdir()
    dead = _dead_pid()
    stale = _orphan(ckpt, "step_000000128.zip", dead)       # never written again under that name
    stale_card = _orphan(ckpt, "step_000000128.json", dead)
    alive = _orphan(ckpt, "step_000000256.zip", os.getppid())   # a writer still running: kept
    # the next checkpoint of the run: latest and step_000000256, as the trainer writes them
    atomic_write_many([(ckpt / "latest.zip", b"zip"), (ckpt / "latest.json", b"{}")])
    assert not stale.exists() and not stale_card.exists() and alive.exists()
    assert sorted(p.name for p in ckpt.iterdir()) == [alive.name, "latest.json", "latest.zip"]


def test_a_write_elsewhere_leaves_the_folder_alone(tmp_path):
    (tmp_path / "a").mkdir()
    stale = _orphan(tmp_path / "a", "step_000000128.zip", _dead_pid())
    atomic_write_bytes(tmp_path / "b" / "latest.zip", b"zip")
    assert stale.exists()
    assert remove_folder_orphans(tmp_path / "a") == [stale] and not stale.exists()
    assert remove_folder_orphans(tmp_path / "missing") == []


def test_a_run_removes_them_when_it_starts(tmp_path, monkeypatch):
    from hod.training import train
    from hod.training.config import smoke_config
    from hod.training.train import Trainer

    monkeypatch.setattr(train, "PROBE_POSITIONS", 50)   # the policy diagnostics, small
    t = Trainer("tapeo", smoke_config("tapeo", total_steps=64, checkpoint_every=10_000), tmp_path, progress=False,
                log=None)
    (tmp_path / "checkpoints").mkdir()
    stale = _orphan(tmp_path / "checkpoints", "step_000000128.zip", _dead_pid())
    seen = []
    original = Trainer.save

    def save(self, *args, **kwargs):   # the first checkpoint of the run: is the orphan already gone?
        seen.append(stale.exists())
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Trainer, "save", save)
    t.run()
    assert seen and seen[0] is False and not stale.exists()
