"""Worker counts (hod.evaluation.workers): every command starts at most min(asked, jobs, usable
CPUs) processes and refuses counts outside 1..MAX_WORKERS with status 2 and one line.

The process pools are replaced by a recording stand-in that runs the work in this process (or
stops at once), so the tests see how many processes would start without starting any."""
from __future__ import annotations

import os
from concurrent.futures import Future

import pytest

import hod.evaluation.tournament as tournament_mod
import hod.evaluation.workers as workers_mod
from hod.core.errors import ConfigError
from hod.evaluation.workers import MAX_WORKERS, check_workers, describe, effective_workers


class InlinePool:
    """Stands in for ProcessPoolExecutor: records ``max_workers`` and runs each job here."""

    started: list[int] = []

    def __init__(self, max_workers=None, initializer=None, initargs=(), mp_context=None):
        InlinePool.started.append(max_workers)
        if initializer is not None:
            initializer(*initargs)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def submit(self, fn, *args):
        fut = Future()
        fut.set_result(fn(*args))
        return fut

    def shutdown(self, wait=True, cancel_futures=False):
        pass


@pytest.fixture
def two_cpus(monkeypatch):
    monkeypatch.setattr(workers_mod, "usable_cpus", lambda: 2)
    InlinePool.started = []
    monkeypatch.setattr(tournament_mod, "ProcessPoolExecutor", InlinePool)


def test_effective_workers_is_the_least_of_asked_jobs_and_cpus(two_cpus):
    assert effective_workers(12, 4) == 2      # min(12, 4, 2 CPUs)
    assert effective_workers(12, 1) == 1      # one game: no pool
    assert effective_workers(1, 100) == 1
    assert effective_workers(2, 0) == 1       # at least 1
    assert describe(12, 2, 4) == "2 worker processes (asked 12; 4 games, 2 usable CPUs)"
    assert describe(2, 2, 100) == "2 worker processes"


def test_usable_cpus_reads_the_affinity_mask(monkeypatch):
    monkeypatch.delattr(os, "process_cpu_count", raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 3, 5}, raising=False)
    assert workers_mod.usable_cpus() == 3     # the 3 CPUs of the mask, not os.cpu_count()


@pytest.mark.parametrize("bad", [0, -1, MAX_WORKERS + 1, 10**6, True, 2.0, "2"])
def test_check_workers_refuses_and_names_the_range(bad):
    with pytest.raises(ConfigError, match=rf"workers={bad!r}: legal values: an integer in 1\.\.{MAX_WORKERS}"):
        check_workers(bad)
    assert check_workers(MAX_WORKERS) == MAX_WORKERS


def test_tournament_starts_no_more_workers_than_games_and_cpus(two_cpus, monkeypatch):
    # 12 workers asked for 4 games on 2 CPUs: a pool of 2 (min(12, 4, 2)), and the result says 2
    res = tournament_mod.run_tournament("tapeo", ["random", "greedy"], 4, seed=0, workers=12)
    assert InlinePool.started == [2] and res.workers == 2 and len(res.games) == 4
    # 3 asked on 1 CPU: played in this process, no pool
    InlinePool.started = []
    monkeypatch.setattr(workers_mod, "usable_cpus", lambda: 1)
    res = tournament_mod.run_tournament("tapeo", ["random", "greedy"], 2, seed=0, workers=3)
    assert InlinePool.started == [] and res.workers == 1


def test_tournament_command_says_how_many_workers_run(two_cpus, capsys):
    from hod.benchmarks.tournament import main

    assert main(["--game", "tapeo", "--lineup", "random", "greedy", "--games", "4", "--workers", "12",
                 "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert "playing with 2 worker processes (asked 12; 4 games, 2 usable CPUs)" in captured.err
    assert "with 2 workers." in captured.out      # the report's timing line
    assert InlinePool.started == [2]


@pytest.mark.parametrize("module", ["hod.benchmarks.tournament", "hod.benchmarks.ladder"])
@pytest.mark.parametrize("value", ["0", "-3", str(MAX_WORKERS + 1), "100000", "two"])
def test_commands_refuse_absurd_worker_counts(module, value, capsys):
    import importlib

    main = importlib.import_module(module).main
    with pytest.raises(SystemExit) as e:
        main(["--game", "tapeo", "--lineup", "random", "greedy", "--workers", value] if module.endswith("tournament")
             else ["--game", "tapeo", "--workers", value])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert f"argument --workers: invalid value '{value}'; legal values: an integer in 1..{MAX_WORKERS}" in err
    assert "Traceback" not in err


def test_ladder_refuses_a_bad_worker_count_before_any_table():
    from hod.evaluation.ladder import run_ladder

    with pytest.raises(ConfigError, match=rf"workers=0: legal values: an integer in 1\.\.{MAX_WORKERS}"):
        run_ladder("tapeo", 2, 2, workers=0)


@pytest.mark.parametrize("key", ["eval_workers", "bc_workers"])
def test_config_bounds_the_worker_keys(key):
    from hod.training import config as config_mod

    cfg = config_mod.override_keys(config_mod.load_config("tapeo"), {key: MAX_WORKERS + 1})
    with pytest.raises(ConfigError, match=rf"{key}={MAX_WORKERS + 1}: .*legal: an integer in 1\.\.{MAX_WORKERS}"):
        config_mod.validate_config("tapeo", cfg)
    config_mod.validate_config("tapeo", config_mod.override_keys(cfg, {key: MAX_WORKERS}))


def test_expert_iteration_bounds_its_workers():
    from hod.training import expert_iteration as expit

    values = {**expit.load_expit_config("tapeo"), "workers": MAX_WORKERS + 1}
    with pytest.raises(ConfigError, match=rf"workers={MAX_WORKERS + 1}: .*legal: an integer in 1\.\.{MAX_WORKERS}"):
        expit.validate("tapeo", values)


class _Started(Exception):
    pass


def test_imitation_starts_no_more_workers_than_chunks_and_cpus(monkeypatch):
    import hod.training.imitation as imitation

    started = []

    def pool(n, mp_context=None, initializer=None):
        started.append(n)
        raise _Started

    monkeypatch.setattr(workers_mod, "usable_cpus", lambda: 2)
    monkeypatch.setattr(workers_mod, "ProcessPoolExecutor", pool)
    monkeypatch.setattr(imitation, "CHUNK_DECISIONS", 10)
    # 30 decisions in chunks of 10: 3 chunks; 12 workers asked on 2 CPUs: a pool of min(12, 3, 2) = 2
    with pytest.raises(_Started):
        imitation.collect_teacher_decisions("tapeo", "random", [2], 30, workers=12)
    assert started == [2]
    with pytest.raises(ConfigError, match=rf"workers={MAX_WORKERS + 1}: legal values: an integer in 1\.\.{MAX_WORKERS}"):
        imitation.collect_teacher_decisions("tapeo", "random", [2], 30, workers=MAX_WORKERS + 1)


def test_evaluate_command_refuses_an_absurd_worker_count(two_cpus, capsys):
    from hod.training.evaluate import main

    assert main(["expert", "--game", "tapeo", "--games", "2", "--players", "2", "--baselines", "random",
                 "--workers", "1000", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --workers=1000: ") and f"legal: an integer in 1..{MAX_WORKERS}" in err
    assert err.count("\n") == 1 and InlinePool.started == []
