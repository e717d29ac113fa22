"""The engine speed benchmark (hod.benchmarks.engine_speed): its sampler, a smoke run and its
refusals. Speed itself is never asserted."""
from __future__ import annotations

import numpy as np
import pytest

from hod.benchmarks import engine_speed


def test_the_sampler_draws_the_k_th_legal_action_uniformly():
    rng = np.random.default_rng(0)
    mask = np.zeros((30000, 1, 10), np.int8)
    mask[:, 0, [2, 5, 9]] = 1
    a = engine_speed.uniform_legal(mask, rng)
    assert a.shape == (30000, 1) and a.dtype == np.int64 and set(np.unique(a).tolist()) == {2, 5, 9}
    freq = np.bincount(a.ravel(), minlength=10)[[2, 5, 9]] / a.size
    assert np.abs(freq - 1 / 3).max() < 0.02                 # 1/3 each; sd ~0.0027
    # u just below 1 with 3 legal actions: k = floor(0.999 * 3) = 2 -> the third legal action, 9
    class One:
        def random(self, shape):
            return np.full(shape, 0.999)
    assert engine_speed.uniform_legal(mask[:1], One()).tolist() == [[9]]
    assert engine_speed.uniform_legal(np.array([1, 0, 0, 1], np.int8), One()) == 3   # a 1-D mask (PettingZoo's)


def test_quick_run_prints_and_writes_the_table(tmp_path, capsys):
    import os

    out = tmp_path / "speed.md"
    before = os.sched_getaffinity(0)
    result = engine_speed.main(["--quick", "--no-pgx", "--no-compile", "--out", str(out)])
    assert os.sched_getaffinity(0) == before                    # pinned to CPU 0 while measuring only
    text = out.read_text()
    assert text == capsys.readouterr().out
    labels = [(label, B) for label, B, _ in result["rows"]]
    assert labels == [("tapeo batched engine, 4 players", 1), ("tapeo batched engine, 4 players", 8),
                      ("robada batched engine, 2 players", 1), ("robada batched engine, 2 players", 8),
                      ("PettingZoo leduc_holdem_v4.env()", 1), ("Pgx leduc_holdem (jit + vmap)", 8)]
    assert result["rows"][-1][2] == "skipped (--no-pgx)"
    assert all(r > 0 for _, _, r in result["rows"][:-1])
    assert "| PettingZoo leduc_holdem_v4.env() | 1 |" in text and "| 1.00 |" in text


@pytest.mark.parametrize("argv,fragment", [
    (["--cpus", "x"], "--cpus"), (["--cpus", "99999"], "legal values"), (["--repeats", "0"], "legal"),
    (["--seconds", "0"], "legal"), (["--batch-sizes", "0"], "legal"),
    # nan passed the old check (nan <= 0 is False) and the timing loop never ended; inf too
    (["--seconds", "nan"], "argument --seconds: invalid value 'nan'; legal values: a finite number in (0, inf)"),
    (["--seconds", "inf"], "argument --seconds: invalid value 'inf'; legal values: a finite number in (0, inf)"),
    # the engine's own limit, refused after the smaller batch sizes had run
    (["--batch-sizes", "1", "99999999999"], "invalid value '99999999999'; legal values: an integer in 1..16777216"),
])
def test_bad_arguments_exit_2_with_one_line(argv, fragment, capsys):
    with pytest.raises(SystemExit) as e:
        engine_speed.main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert fragment in err[-1] and err[-1].startswith("python -m hod.benchmarks.engine_speed: error:")


@pytest.mark.parametrize("module", ["engine_speed", "engine_scaling"])
def test_an_out_that_cannot_be_written_is_refused_before_any_timing(module, tmp_path, capsys, monkeypatch):
    import importlib

    mod = importlib.import_module(f"hod.benchmarks.{module}")
    monkeypatch.setattr(mod, "run", lambda *a, **k: pytest.fail("ran before checking --out"))
    (tmp_path / "afile").write_text("")
    with pytest.raises(SystemExit) as e:   # a file where the folder should be: FileExistsError after the run before
        mod.main(["--out", str(tmp_path / "afile" / "x.md"), "--cpus", "0"])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith(f"python -m hod.benchmarks.{module}: error: --out {tmp_path / 'afile' / 'x.md'}: cannot "
                          f"write in {tmp_path / 'afile'}: Not a directory")


def test_the_parallel_sampler_draws_what_the_serial_one_draws():
    """uniform_legal(parallel=True) (prange over the rows) gives the same actions for the same
    random numbers: the same generator state, the same draws."""
    mask = (np.random.default_rng(1).random((5000, 1, 27)) < 0.3).astype(np.int8)
    mask[:, 0, 0] = 1                                         # at least one legal action per row
    a = engine_speed.uniform_legal(mask, np.random.default_rng(2))
    b = engine_speed.uniform_legal(mask, np.random.default_rng(2), parallel=True)
    assert np.array_equal(a, b) and mask[np.arange(5000), 0, a[:, 0]].all()


def test_engine_scaling_smoke_run_and_refusals(tmp_path, capsys):
    import os

    from hod.benchmarks import engine_scaling

    available = os.sched_getaffinity(0)
    if len(available) < 2:
        with pytest.raises(SystemExit) as e:
            engine_scaling.main(["--cpus", str(min(available))])
        assert e.value.code == 2 and "two or more CPUs" in capsys.readouterr().err
        return
    cpus = ",".join(str(c) for c in sorted(available)[:2])
    out = tmp_path / "scaling.md"
    result = engine_scaling.main(["--cpus", cpus, "--batch-size", "600", "--seconds", "0.01", "--repeats", "1",
                                  "--out", str(out)])
    assert os.sched_getaffinity(0) == available
    assert [r[0] for r in result["rows"]] == ["tapeo batched engine, 4 players", "robada batched engine, 2 players"]
    assert all(one > 0 and many > 0 for _, _, one, many in result["rows"])
    assert out.read_text() == capsys.readouterr().out
    with pytest.raises(SystemExit) as e:
        engine_scaling.main(["--cpus", str(min(available))])
    assert e.value.code == 2 and "two or more CPUs" in capsys.readouterr().err
