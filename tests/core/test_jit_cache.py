"""Where the compiled rules kernels are cached (hod.core.jit) and that later processes, spawned
workers included, load them from the disk cache instead of compiling again."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from hod.core import jit


@pytest.fixture
def numba_config(monkeypatch):
    from numba.core import config

    monkeypatch.setattr(config, "CACHE_DIR", "")
    return config


def test_numba_cache_dir_set_is_used_as_it_is(numba_config, monkeypatch):
    numba_config.CACHE_DIR = "/somewhere/set/by/the/user"
    monkeypatch.setattr(jit, "_writable", lambda path: pytest.fail("nothing to check"))
    assert jit.cache_kernels(__file__) is True
    assert numba_config.CACHE_DIR == "/somewhere/set/by/the/user"


def test_the_package_folder_or_the_user_cache_leave_numba_alone(numba_config, monkeypatch, tmp_path):
    seen = []
    monkeypatch.setattr(jit, "_writable", lambda path: seen.append(path) or path.endswith("__pycache__"))
    assert jit.cache_kernels(str(tmp_path / "kernels.py")) is True
    assert seen == [str(tmp_path / "__pycache__")] and numba_config.CACHE_DIR == ""
    seen.clear()
    monkeypatch.setattr(jit, "_user_cache_dir", lambda: str(tmp_path / "user-cache"))
    monkeypatch.setattr(jit, "_writable", lambda path: seen.append(path) or path.endswith("user-cache"))
    assert jit.cache_kernels(str(tmp_path / "kernels.py")) is True                 # read-only package folder
    assert seen == [str(tmp_path / "__pycache__"), str(tmp_path / "user-cache")] and numba_config.CACHE_DIR == ""


def test_read_only_package_and_home_fall_back_to_a_private_temp_folder(numba_config, monkeypatch, tmp_path):
    monkeypatch.setattr(jit.tempfile, "gettempdir", lambda: str(tmp_path))
    monkeypatch.setattr(jit, "_user_cache_dir", lambda: "/read-only-home/.cache/numba")
    real = jit._writable
    monkeypatch.setattr(jit, "_writable", lambda path: path.startswith(str(tmp_path)) and real(path))
    assert jit.cache_kernels("/read-only-site-packages/tapeo_env/rules/kernels.py") is True
    want = tmp_path / f"numba-cache-{os.getuid()}"
    assert numba_config.CACHE_DIR == str(want)
    assert want.is_dir() and want.stat().st_mode & 0o077 == 0                         # made private (0700)


def test_a_temp_folder_another_user_may_write_is_refused(numba_config, monkeypatch, tmp_path):
    monkeypatch.setattr(jit.tempfile, "gettempdir", lambda: str(tmp_path))
    monkeypatch.setattr(jit, "_user_cache_dir", lambda: "/read-only-home/.cache/numba")
    planted = tmp_path / f"numba-cache-{os.getuid()}"
    planted.mkdir()
    planted.chmod(0o777)                                   # anyone could plant cache files here
    real = jit._writable
    monkeypatch.setattr(jit, "_writable", lambda path: path.startswith(str(tmp_path)) and real(path))
    with pytest.warns(RuntimeWarning, match="NUMBA_CACHE_DIR"):
        assert jit.cache_kernels("/read-only-site-packages/tapeo_env/rules/kernels.py") is False
    assert numba_config.CACHE_DIR == ""


def test_nothing_writable_compiles_without_a_disk_cache(numba_config, monkeypatch):
    monkeypatch.setattr(jit, "_writable", lambda path: False)
    with pytest.warns(RuntimeWarning, match="compile in every process"):
        assert jit.cache_kernels(__file__) is False
    assert numba_config.CACHE_DIR == ""


_CHILD = textwrap.dedent("""
    import multiprocessing as mp, sys
    import numpy as np

    def run():
        from tapeo_env.rules import kernels
        out = np.zeros(3, np.int64)
        kernels.churro_points(np.array([4, 1, 1], np.uint8), kernels.rulings_array(
            __import__("tapeo_env.rules.scoring", fromlist=["x"]).DEFAULT_RULINGS)[0], out)
        st = kernels.churro_points.stats
        return out.tolist(), sum(st.cache_hits.values()), sum(st.cache_misses.values())

    if __name__ == "__main__":
        if sys.argv[1] == "here":
            print(run())
        else:                                   # a spawned worker, as the tournament's
            with mp.get_context("spawn").Pool(1) as pool:
                print(pool.apply(run))
""")


def test_later_processes_and_spawned_workers_load_the_kernels_from_the_cache(tmp_path):
    script = tmp_path / "child.py"
    script.write_text(_CHILD)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))

    def child(where):
        r = subprocess.run([sys.executable, str(script), where], env=env, capture_output=True, text=True,
                           timeout=120, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        return eval(r.stdout.strip().splitlines()[-1])

    # churros 4, 1, 1: +6 for the most, -6 // 2 = -3 for each of the two fewest (T9)
    assert child("here") == ([6, -3, -3], 0, 1)                # an empty cache: compiled (one miss)
    assert child("here") == ([6, -3, -3], 1, 0)                # loaded from the disk cache
    assert child("spawn") == ([6, -3, -3], 1, 0)               # a spawned worker too


def _numba_start(cwd, code: str) -> str:
    """stdout of ``code`` run in a fresh interpreter in ``cwd``."""
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_import_numba_skips_scipy_and_yaml_and_still_reads_numba_config_files(tmp_path):
    """hod.core.jit.import_numba: numba starts without importing scipy or PyYAML (neither left in
    sys.modules), and a .numba_config.yaml in the working folder is read as plain ``import numba``
    reads it (``boundscheck: 1`` gives config.BOUNDSCHECK 1 in both; None without the file)."""
    pytest.importorskip("yaml")
    probe = """
        import sys
        {start}
        from numba.core import config
        print(config.BOUNDSCHECK, "scipy" in sys.modules, "yaml" in sys.modules)
    """
    ours = probe.format(start="from hod.core.jit import import_numba; import_numba()")
    plain = probe.format(start="import numba")
    assert _numba_start(tmp_path, ours) == "None False False"
    (tmp_path / ".numba_config.yaml").write_text("boundscheck: 1\n")
    assert _numba_start(tmp_path, plain).split()[0] == "1" and _numba_start(tmp_path, ours).split()[0] == "1"


_KERNEL = """
from numba import njit
from hod.core.jit import cache_kernels
from . import helper

CACHED = cache_kernels(__file__)


@njit(cache=CACHED)
def total():
    return helper.one() + helper.TEN
"""


def test_an_edit_to_a_module_the_kernels_use_compiles_them_again(tmp_path):
    # numba alone checks a cached kernel against its own file only: `total` inlines helper.TEN
    # and calls helper.one, so after helper.py changes it served the old machine code (11).
    pkg = tmp_path / "kpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "kernel.py").write_text(_KERNEL)
    helper = "from numba import njit\nTEN = {ten}\n\n\n@njit\ndef one():\n    return 1\n"
    (pkg / "helper.py").write_text(helper.format(ten=10))
    code = "from kpkg import kernel; print(kernel.total(), len(kernel.total.stats.cache_hits))"
    run = lambda: _numba_start(tmp_path, code).splitlines()[-1]
    assert run() == "11 0"          # 1 + 10, compiled
    assert run() == "11 1"          # loaded from the disk cache
    (pkg / "helper.py").write_text(helper.format(ten=20))
    assert run() == "21 0"          # 1 + 20: the edit to helper.py compiled the kernel again
