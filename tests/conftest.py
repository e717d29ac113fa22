"""Session-wide test settings.

Stable-Baselines3 gives a model that learns without a logger of its own a fresh
``<tmp>/SB3-<date>`` folder (``stable_baselines3.common.logger.configure`` with no folder), which
nothing removes; with ``SB3_LOGDIR`` set it uses that folder instead. The suite points it at
pytest's own temporary directory (cleaned up by pytest's retention), for this process and the
commands it starts, so a test run leaves nothing in ``/tmp``.

torch's CPU kernels are pinned to AVX2 (``ATEN_CPU_CAPABILITY``, read when torch is imported, so set
here, before any test module imports it; inherited by the commands the tests start). The golden
PPO weights of ``tests/data/learner_env_golden.json`` were recorded with torch's AVX2 kernels; on a
CPU with AVX-512 torch picks its AVX-512 kernels, whose float rounding differs, and the weights
after two PPO updates differ in their last bits (measured 2026-12-07 on an AMD EPYC with AVX-512:
``test_a_short_maskable_ppo_run_learns_the_same_weights`` failed for both games, and passed with
the kernels pinned). The pin is set only on a CPU that has both AVX-512 and AVX2 (Linux's
``/proc/cpuinfo``): elsewhere torch picks AVX2 or less by itself, and asking a CPU without AVX2
for it could stop the process on an illegal instruction. A run that sets the variable itself keeps
its value.
"""
import os

import pytest



def _cpu_flags() -> set:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            return next((set(line.split(":", 1)[1].split()) for line in f if line.startswith("flags")), set())
    except OSError:
        return set()


if {"avx512f", "avx2"} <= _cpu_flags():
    os.environ.setdefault("ATEN_CPU_CAPABILITY", "avx2")


@pytest.fixture(scope="session", autouse=True)
def _sb3_logs_in_pytest_tmp(tmp_path_factory):
    if "SB3_LOGDIR" in os.environ:
        yield
        return
    os.environ["SB3_LOGDIR"] = str(tmp_path_factory.mktemp("sb3_logs"))
    try:
        yield
    finally:
        os.environ.pop("SB3_LOGDIR", None)
