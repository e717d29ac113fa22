"""SIGTERM is handled like Ctrl-C by every long command (a checkpoint is saved, the finished games
are kept), and SIGINT works even when the command inherited it ignored (hod.core.commands).

The subprocess tests wait for a sign that the work has started (a file, a line on the output)
before sending the signal, so they do not depend on how fast the machine is."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from hod.core import commands
from hod.core.commands import EXIT_INTERRUPTED, EXIT_TERMINATED, interrupted_status, long_command, stop_signal

ROOT = Path(__file__).resolve().parents[2]

#: A training run that never ends by itself: tiny tables and network, no evaluation, no periodic checkpoint.
TRAIN = ["-m", "hod.training.train", "--game", "tapeo", "--no-progress", "--players", "2", "--engine", "single",
         "--tables", "2", "--n-steps", "32", "--batch-size", "64", "--n-epochs", "1", "--net-arch", "16",
         "--total-steps", "100000000", "--checkpoint-every", "100000000", "--snapshot-every", "64",
         "--pool-size", "2", "--eval-every", "0", "--heuristics", "random"]


def _wait_for(predicate, proc, timeout=120.0):
    t0 = time.monotonic()
    while not predicate():
        assert proc.poll() is None, f"exited early with {proc.returncode}: {proc.communicate()}"
        assert time.monotonic() - t0 < timeout, "timed out waiting for the command to start"
        time.sleep(0.1)


def _train_and_signal(out: Path, sig: int, preexec_fn=None):
    proc = subprocess.Popen([sys.executable, *TRAIN, "--out", str(out)], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=preexec_fn,
                            env={**os.environ, "MPLCONFIGDIR": str(out.parent / "mpl")})
    try:
        # SB3 makes tb/ppo_1 when learn() starts: the run is then inside the trainer's KeyboardInterrupt handler
        _wait_for(lambda: (out / "tb" / "ppo_1").is_dir(), proc)
        time.sleep(0.5)
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, stdout, stderr


def _card_steps(out: Path) -> int:
    return json.loads((out / "checkpoints" / "latest.json").read_text())["training"]["steps"]


def test_sigterm_saves_a_checkpoint_and_exits_143(tmp_path):
    out = tmp_path / "run"
    code, stdout, stderr = _train_and_signal(out, signal.SIGTERM)
    assert code == EXIT_TERMINATED == 143, stderr
    assert "Traceback" not in stderr
    assert "interrupted (SIGTERM): saving a checkpoint" in stdout
    summary = json.loads(stdout[stdout.index("{"):])
    assert summary["interrupted"] is True and summary["checkpoint"] == str(out / "checkpoints" / "latest.zip")
    assert 0 < _card_steps(out) == summary["steps"] < 100_000_000
    assert not (out / "checkpoints" / "final.zip").exists()


def _ignore_sigint():
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # as `cmd &` in a non-interactive shell leaves it


def test_sigint_inherited_ignored_still_saves_and_exits_130(tmp_path):
    out = tmp_path / "run"
    code, stdout, stderr = _train_and_signal(out, signal.SIGINT, preexec_fn=_ignore_sigint)
    assert code == EXIT_INTERRUPTED == 130, stderr
    assert "Traceback" not in stderr and "interrupted (SIGINT): saving a checkpoint" in stdout
    assert _card_steps(out) > 0


def test_sigterm_keeps_the_finished_games_of_a_tournament(tmp_path):
    prefix = tmp_path / "t"
    proc = subprocess.Popen([sys.executable, "-m", "hod.benchmarks.tournament", "--game", "tapeo", "--lineup",
                             "expert", "greedy", "--games", "200000", "--out", str(prefix)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "MPLCONFIGDIR": str(tmp_path / "mpl")})
    err = bytearray()

    def read_stderr():
        for chunk in iter(lambda: proc.stderr.read1(256), b""):
            err.extend(chunk)

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    try:
        # the progress bar (tqdm, on stderr) shows "N/200000" once N games are played
        _wait_for(lambda: re.search(rb"\b[1-9]\d*/200000", bytes(err)) is not None, proc)
        proc.send_signal(signal.SIGTERM)
        stdout = proc.stdout.read().decode()
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    reader.join(timeout=10)
    assert proc.returncode == 143, err.decode()
    data = json.loads(prefix.with_suffix(".json").read_text())
    assert data["partial"] is True and data["stopped"] == "interrupted (SIGTERM)" and 0 < data["num_games"] < 200_000
    assert len(data["games"]) == data["num_games"]
    lines = [x for x in err.decode().replace("\r", "\n").splitlines() if x.startswith("error:")]
    assert lines == [f"error: tournament stopped: interrupted (SIGTERM); {data['num_games']} of 200000 games "
                     f"finished; kept in {prefix}.md/.json/.png, marked partial"]
    assert "**Partial result** (interrupted (SIGTERM))" in stdout and "Traceback" not in err.decode()


def _serves(url: str) -> bool:
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


def test_web_server_stops_cleanly_on_sigterm():
    pytest.importorskip("uvicorn")
    proc = subprocess.Popen([sys.executable, "-m", "hod.apps.web", "--port", "0"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert "play at http://127.0.0.1:" in line, proc.stderr.read()
        url = re.search(r"http://\S+", line).group(0)
        _wait_for(lambda: _serves(url), proc)   # uvicorn is serving: its own SIGTERM handling is in place
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stderr   # a graceful shutdown, as with Ctrl-C (not killed by the signal: -15)
    assert "Traceback" not in stderr


def test_long_command_raises_keyboardinterrupt_on_sigterm_once_and_restores_handlers():
    before_term, before_int = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    with long_command():
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)   # the handler runs at once; the sleep is never finished
        os.kill(os.getpid(), signal.SIGTERM)   # a second SIGTERM while saving is ignored
        time.sleep(0.01)
        assert stop_signal() == signal.SIGTERM and interrupted_status() == 143
    assert signal.getsignal(signal.SIGTERM) is before_term and signal.getsignal(signal.SIGINT) is before_int


def test_long_command_restores_sigint_even_when_ignored(monkeypatch):
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with long_command():
            with pytest.raises(KeyboardInterrupt):
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(5)
            assert interrupted_status() == 130 and stop_signal() == signal.SIGINT
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN   # the inherited disposition, back
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


class _InterruptedCleanup:
    """An object whose finalizer receives the signal: Python runs the handler inside ``__del__``,
    where a ``KeyboardInterrupt`` can only be reported (as in a garbage collector's ``weakref``
    callback)."""

    def __init__(self, signum):
        self.signum = signum

    def __del__(self):
        os.kill(os.getpid(), self.signum)
        for _ in range(100_000):   # the handler runs during these bytecodes, inside __del__
            pass


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupt_swallowed_by_a_finalizer_is_delivered_again(signum, capsys):
    """Without the re-delivery the loop below would run its 5 s to the end: the interrupt raised in
    ``__del__`` is only reported ("Exception ignored in ..."). With it, the KeyboardInterrupt
    reaches the command's own code, once, and the report is not printed; after SIGTERM a real
    second SIGTERM is still ignored."""
    with long_command():
        with pytest.raises(KeyboardInterrupt):
            _InterruptedCleanup(signum)   # collected at once (no reference kept)
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                time.sleep(0.001)
            pytest.fail("the interrupt raised in __del__ was lost")
        assert stop_signal() == signum
        time.sleep(0.05)   # nothing more is delivered
    assert "Exception ignored" not in capsys.readouterr().err


def test_an_interrupt_nothing_caught_ends_in_one_line(capsys):
    with pytest.raises(SystemExit) as e:
        with long_command():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
    assert e.value.code == 143
    assert capsys.readouterr().err == "error: interrupted (SIGTERM)\n"
    assert commands.stop_signal() == signal.SIGTERM


# ---- the commands built on the trainer stop with it (Ctrl-C or SIGTERM: a KeyboardInterrupt) ----------
def _interrupt_at_first_snapshot(monkeypatch):
    from hod.training.train import Trainer

    def interrupt(self):
        raise KeyboardInterrupt   # as if the signal arrived when the first snapshot is due

    monkeypatch.setattr(Trainer, "snapshot", interrupt)


def test_expert_iteration_stops_after_an_interrupted_ppo(tmp_path, monkeypatch):
    from hod.training import expert_iteration as X

    values = X.load_expit_config("tapeo")
    values.update(iterations=2, decisions=40, distil_epochs=1, ppo_steps=256, teacher_options={"determinizations": 2},
                  search_opponent_options={"determinizations": 2},
                  train={"engine": "single", "tables": 2, "n_steps": 32, "batch_size": 64, "n_epochs": 1,
                         "net_arch": [16], "eval_every": 0, "players": [2], "checkpoint_every": 10_000,
                         "snapshot_every": 64, "pool_size": 2})
    _interrupt_at_first_snapshot(monkeypatch)
    summary = X.ExpertIteration("tapeo", values, tmp_path, log=None).run()
    latest = tmp_path / "iter_0" / "checkpoints" / "latest.zip"
    assert summary["interrupted"] is True and summary["final_checkpoint"] == str(latest) and latest.is_file()
    # one iteration recorded, not exported, and no second iteration started
    assert [r["iteration"] for r in summary["iterations"]] == [0] and summary["iterations"][0]["export"] is None
    assert not (tmp_path / "iter_1").exists()
    assert json.loads((tmp_path / "expit.json").read_text()) == summary


def test_best_response_raises_once_its_checkpoint_is_saved(tmp_path, monkeypatch):
    from hod.training import best_response as br

    _interrupt_at_first_snapshot(monkeypatch)
    tiny = {"tables": 2, "learner_seats": 1, "n_steps": 32, "batch_size": 64, "n_epochs": 1, "net_arch": [16]}
    with pytest.raises(KeyboardInterrupt):
        br.best_response("tapeo", "greedy", tmp_path / "greedy", players=2, steps=256, evaluations=1, eval_games=2,
                         overrides=tiny, log=None)
    assert (tmp_path / "greedy" / "checkpoints" / "latest.zip").is_file()


def test_best_response_command_says_what_it_kept(tmp_path, monkeypatch, capsys):
    from hod.training import best_response as br

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(br, "best_response", interrupted)
    assert br.main(["--game", "tapeo", "--target", "greedy", "--no-reference", "--out", str(tmp_path)]) == 130
    err = capsys.readouterr().err
    assert err == (f"error: interrupted (SIGINT) during the best response to greedy (its run folder "
                   f"{tmp_path / 'greedy'} keeps what was saved)\n")


def _children(pid: int) -> list[int]:
    """The child processes of ``pid`` (Linux: /proc/PID/task/*/children)."""
    out = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            pass
    return out


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads /proc (Linux)")
def test_ctrl_c_while_imitation_workers_run_prints_one_line_and_ends_them(tmp_path):
    """Ctrl-C reaches the whole process group (the command and its spawned imitation workers,
    bc_workers = 2): the command ends with status 130 and its one line, no worker prints a
    traceback (before: each worker's KeyboardInterrupt traceback, and concurrent.futures'
    InvalidStateError), and no worker is left running."""
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "hod.training.train", "--game", "tapeo", "--no-progress", "--players", "2",
           "--tables", "2", "--n-steps", "32", "--batch-size", "64", "--net-arch", "16", "--total-steps", "1000",
           "--eval-every", "0", "--bc-teacher", "expert", "--bc-workers", "2", "--bc-decisions", "2000000",
           "--out", str(out)]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, env={**os.environ, "MPLCONFIGDIR": str(tmp_path / "mpl")})
    try:
        workers = lambda: [c for c in _children(proc.pid) if "spawn_main" in _cmdline(c)]  # noqa: E731
        _wait_for(lambda: len(workers()) == 2, proc)
        spawned = workers()
        os.killpg(proc.pid, signal.SIGINT)   # what a terminal's Ctrl-C does
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == EXIT_INTERRUPTED == 130, stderr
    assert "Traceback" not in stderr and stderr.strip().splitlines()[-1] == "error: interrupted (SIGINT)", stderr
    assert all(not Path(f"/proc/{w}").exists() or "spawn_main" not in _cmdline(w) for w in spawned)
