"""Long commands that stop early: a write refused (disk full, file-size limit) ends in one line and
status 74; a tournament whose worker dies, or that is interrupted, keeps and writes the games that
finished, marked partial (hod.core.commands, hod.evaluation.tournament)."""
from __future__ import annotations

import errno
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from hod.agents.base import RandomBot
from hod.core.atomic import atomic_write_bytes, atomic_write_json
from hod.core.commands import EXIT_PARTIAL, EXIT_WRITE_FAILED, long_command, write_error_line
from hod.evaluation.tournament import TournamentInterrupted, run_tournament
from hod.evaluation.workers import usable_cpus

ROOT = Path(__file__).resolve().parents[2]


def _error_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("error:")]


def test_write_error_line_names_the_path_and_the_reason():
    e = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "/runs/x/latest.zip")
    assert write_error_line(e) == "error: cannot write /runs/x/latest.zip: No space left on device"
    e = OSError(errno.ENOENT, os.strerror(errno.ENOENT), "/nowhere/a.json")
    assert write_error_line(e) == "error: /nowhere/a.json: No such file or directory"   # not a write: no "cannot write"


def test_a_failed_atomic_write_names_its_target_and_leaves_no_temporary_file(tmp_path, monkeypatch):
    def full(fd, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))   # os.write on an fd: no file name

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(OSError) as e:
        atomic_write_bytes(tmp_path / "report.md", b"abc")
    assert e.value.errno == errno.ENOSPC and e.value.filename == str(tmp_path / "report.md")
    assert list(tmp_path.iterdir()) == []


def test_long_command_turns_an_oserror_into_one_line_and_status_74(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(os, "write", lambda fd, data: (_ for _ in ()).throw(OSError(errno.EFBIG, "File too large")))
    with pytest.raises(SystemExit) as e:
        with long_command():
            atomic_write_json(tmp_path / "eval.json", {"a": 1})
    assert e.value.code == EXIT_WRITE_FAILED == 74
    assert capsys.readouterr().err == f"error: cannot write {tmp_path / 'eval.json'}: File too large\n"


def _limit_file_size():
    # 4096 bytes: the report (~1.1 KB) fits, the JSON (~15 KB for 40 games) does not
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))


def test_tournament_past_a_file_size_limit_ends_in_one_line(tmp_path, tmp_path_factory):
    prefix = tmp_path / "t"
    env = {**os.environ, "MPLCONFIGDIR": str(tmp_path / "mpl")}
    # first without the limit: a cold numba cache would write its kernel files (> 4 KiB) under it,
    # so the outcome would depend on whether an earlier test compiled the kernels already
    subprocess.run([sys.executable, "-m", "hod.benchmarks.tournament", "--game", "tapeo", "--lineup", "random",
                    "greedy", "--games", "2", "--no-progress", "--out", str(tmp_path_factory.mktemp("warm") / "w")],
                   capture_output=True, timeout=300, cwd=ROOT, env=env,
                   check=True)
    r = subprocess.run([sys.executable, "-m", "hod.benchmarks.tournament", "--game", "tapeo", "--lineup", "random",
                        "greedy", "--games", "40", "--no-progress", "--out", str(prefix)],
                       preexec_fn=_limit_file_size, capture_output=True, text=True, timeout=120, cwd=ROOT, env=env)
    assert r.returncode == 74, r.stderr
    assert r.stderr == f"error: cannot write {prefix}.json: File too large\n"
    # the three files are written together or not at all: the report fitted, the JSON did not, so
    # none of them is there (no half file, no temporary file)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "mpl") == []


@pytest.mark.skipif(usable_cpus() < 2, reason="a worker pool needs 2 usable CPUs (1 CPU plays in-process)")
def test_tournament_keeps_the_finished_games_when_a_worker_is_killed(tmp_path):
    prefix = tmp_path / "k"
    # the "killer" bot SIGKILLs its worker at the start of its 9th game (tests/_kill_worker.py);
    # 40 games in chunks of 2 (40 // (2 workers * 8) = 2), so that worker has sent back 4 chunks
    r = subprocess.run([sys.executable, str(ROOT / "tests" / "_kill_worker.py"), "--game", "tapeo", "--lineup",
                        "killer", "greedy", "--games", "40", "--workers", "2", "--no-progress", "--out", str(prefix)],
                       capture_output=True, text=True, timeout=120, cwd=ROOT,
                       env={**os.environ, "HOD_KILL_AT_GAME": "9", "MPLCONFIGDIR": str(tmp_path / "mpl")})
    assert r.returncode == EXIT_PARTIAL == 1, r.stderr
    assert "Traceback" not in r.stderr
    [line] = _error_lines(r.stderr)
    data = json.loads(prefix.with_suffix(".json").read_text())
    finished = data["num_games"]
    assert line == (f"error: tournament stopped: a worker process died (killed, or out of memory); {finished} of 40 "
                    f"games finished; kept in {prefix}.md/.json/.png, marked partial")
    assert 0 < finished < 40 and data["partial"] is True and data["games_planned"] == 40
    assert len(data["games"]) == finished and len({g["game"] for g in data["games"]}) == finished
    assert f"**Partial result** (a worker process died (killed, or out of memory)): {finished} of 40 games" \
        in prefix.with_suffix(".md").read_text()


class StopAtGame(RandomBot):
    """Random play; raises KeyboardInterrupt (as Ctrl-C would) when its 5th game starts."""

    def __init__(self, seed=None):
        super().__init__(seed)
        self.games = 0

    def reset(self, seed=None):
        super().reset(seed)
        self.games += 1
        if self.games == 5:
            raise KeyboardInterrupt


def test_an_interrupted_tournament_keeps_the_finished_games():
    with pytest.raises(TournamentInterrupted) as e:
        run_tournament("tapeo", [StopAtGame(0), "greedy"], 10, seed=0, workers=1)
    res = e.value.result
    # games 0..3 finished (the 5th reset is game 4's); 2 players, duplicate: deals 0 and 1, 2 games each
    assert isinstance(e.value, KeyboardInterrupt) and (e.value.finished, e.value.planned) == (4, 10)
    assert res.partial and res.stopped == "interrupted" and res.num_games == 4 and res.games_planned == 10
    assert [g["game"] for g in res.games] == [0, 1, 2, 3] and res.num_deals == 2 and res.games_per_deal == 2
    assert res.bots[0].games == 4
    assert res.to_markdown().splitlines()[2].startswith(
        "**Partial result** (interrupted): 4 of 10 games finished")
    assert "Planned: 10 games = 5 deals x 2 seat rotations (duplicate deals), seed 0." in res.to_markdown()
    assert res.to_dict()["partial"] is True


def test_a_whole_tournament_is_not_partial():
    res = run_tournament("tapeo", ["random", "greedy"], 4, seed=0)
    assert not res.partial and res.stopped == "" and res.games_planned == res.num_games == 4


def test_a_write_refused_in_another_thread_ends_the_command_in_one_line(capsys, monkeypatch):
    """TensorBoard's event writer is a thread: its disk-full error used to print a thread
    traceback, then a line without a path. Inside long_command: no traceback, one line naming
    where it came from, status 74, also when the main thread carries on to the end; an error of
    another kind in a thread keeps Python's own report."""
    import threading

    def fail(err):
        raise err

    with pytest.raises(SystemExit) as e:
        with long_command():
            t = threading.Thread(target=fail, args=(OSError(errno.ENOSPC, "No space left on device"),), name="writer")
            t.start()
            t.join()
    assert e.value.code == EXIT_WRITE_FAILED == 74
    # the innermost frame is this test file's (not a site-packages package): the thread is named
    assert capsys.readouterr().err == "error: cannot write (thread writer): No space left on device\n"
    seen = []
    monkeypatch.setattr(threading, "excepthook", lambda args: seen.append((args.thread.name, args.exc_value)))
    with long_command():
        t = threading.Thread(target=fail, args=(OSError(errno.ECONNRESET, "Connection reset"),), name="net")
        t.start()
        t.join()
    # handed to the hook that was there before (Python's report), the command goes on (no exit)
    assert [(name, e.errno) for name, e in seen] == [("net", errno.ECONNRESET)]
    assert capsys.readouterr().err == ""


def test_a_worker_dying_in_training_s_evaluation_saves_a_checkpoint_and_ends_in_one_line(tmp_path, monkeypatch,
                                                                                        capsys):
    """An evaluation tournament whose worker process dies (eval_workers > 1) used to end the
    training command with a traceback; now: the checkpoint is saved, one line, status 1."""
    from hod.evaluation.tournament import WorkerDied
    from hod.training import train as train_mod

    def died(*args, **kwargs):
        raise WorkerDied("tournament stopped: a worker process died (killed, or out of memory); 3 of 8 games "
                         "finished", None, 3, 8)

    monkeypatch.setattr(train_mod, "evaluate_policy", died)
    out = tmp_path / "run"
    with pytest.raises(SystemExit) as e:   # the first evaluation (the untrained policy, step 0) dies
        train_mod.main(["--game", "tapeo", "--no-progress", "--players", "2", "--engine", "single", "--tables", "2",
                        "--n-steps", "32", "--batch-size", "64", "--n-epochs", "1", "--net-arch", "16",
                        "--total-steps", "64", "--eval-every", "64", "--eval-games", "2", "--baselines", "random",
                        "--heuristics", "random", "--out", str(out)])
    assert e.value.code == EXIT_PARTIAL == 1
    latest = out / "checkpoints" / "latest.zip"
    assert capsys.readouterr().err == (
        "error: training stopped at step 0: the evaluation's tournament stopped: a worker process died (killed, or "
        f"out of memory); 3 of 8 games finished; checkpoint saved: {latest} (resume from it)\n")
    assert latest.is_file()
