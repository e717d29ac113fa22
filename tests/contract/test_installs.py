"""Installs as a user makes them, outside this checkout's .venv.

* The wheel, built by pip from a copy of the working tree (``pip wheel --no-deps``, setuptools in
  pip's isolated build environment): no setuptools warning, the MIT LICENSE in its metadata.
* ``pip install 'house-of-decks-rl[web]'`` alone (no other extra) in a fresh venv: the command's
  ``--help``, and a game dealt through the app's test client; no torch, and the newest gymnasium
  (Ray's pin is not applied outside the rllib extra).
* The Makefile's choice of torch build, run for real with a stand-in venv whose ``pip`` and
  ``python`` only record their arguments: which pip commands ``make setup`` runs for ``TORCH=cpu``
  (a local CPU wheel, PyTorch's CPU index, or that index not answering) and ``TORCH=cuda``.
* ``make test`` runs the env tests a second time in a venv without torch and Ray (the newest
  gymnasium).

The first two build and install (about 15 s and 30 s with pip's cache, which ``make setup`` has
filled): marked slow, still part of the default run; they need the package index that ``make
setup`` needs.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
#: what a copy of the working tree leaves out: VCS data, venvs, build outputs, run folders
IGNORED = shutil.ignore_patterns(".git", ".venv*", "node_modules", "runs", "results", "build", "dist", "*.egg-info",
                                 "__pycache__", ".pytest_cache", ".hypothesis")
#: a warning class name as Python prints it ("SetuptoolsDeprecationWarning: ...", "_Warning: ...");
#: distutils' lower-case "warning: build_py: byte-compiling is disabled" log lines are not warnings
WARNING_LINE = re.compile(r"\b\w*Warning: .*")
#: the newest gymnasium on the package index on 2026-12-01 (pip index versions gymnasium); Ray
#: 2.60 pins 1.2.2
NEWEST_GYMNASIUM_CHECKED = Version("1.4.0")


def _pip(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pip", *args], capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """``(wheel path, pip's verbose output)``: the project's wheel built by pip from a copy of the
    working tree (the build backend's messages are in the output)."""
    base = tmp_path_factory.mktemp("wheel")
    src = base / "src"
    shutil.copytree(ROOT, src, ignore=IGNORED)
    r = _pip("wheel", "--no-deps", "-v", "-w", str(base / "dist"), str(src))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    (whl,) = (base / "dist").glob("*.whl")
    return whl, r.stdout + r.stderr


@pytest.mark.slow
def test_wheel_builds_without_setuptools_warnings_and_ships_the_license(wheel):
    whl, log = wheel
    assert "Building wheel for house-of-decks-rl" in log      # the backend's output is there to be read
    assert WARNING_LINE.findall(log) == []
    with zipfile.ZipFile(whl) as z:
        names = set(z.namelist())
        meta = z.read("house_of_decks_rl-0.1.0.dist-info/METADATA").decode().splitlines()
        text = z.read("house_of_decks_rl-0.1.0.dist-info/licenses/LICENSE").decode()
    assert "License-Expression: MIT" in meta and "License-File: LICENSE" in meta
    assert text.startswith("MIT License\n\nCopyright (c) 2026 The House Of Decks RL authors\n")
    assert text == (ROOT / "LICENSE").read_text()
    # the web app's pages, a data folder listed as a package (the cause of the warning it gave)
    assert {f"hod/apps/web/static/{f}" for f in ("index.html", "game.html", "app.js", "style.css", "favicon.svg",
                                               "tapeo.svg", "robada.svg")} <= names   # the icons the pages load


_WEB_CHECK = r"""
import importlib.util, json
import gymnasium
from starlette.testclient import TestClient
from hod.apps.web import create_app

with TestClient(create_app(), base_url="http://127.0.0.1") as client:   # a Host the app serves
    r = client.post("/api/games", json={"game": "tapeo", "players": 2, "opponents": ["expert"], "seed": 7})
    view = client.get(f"/api/games/{r.json()['id']}").json()
print(json.dumps({"status": r.status_code, "over": view["over"], "choices": len(view["choices"]) > 0,
                  "torch": importlib.util.find_spec("torch") is not None, "gymnasium": gymnasium.__version__}))
"""


@pytest.mark.slow
def test_web_extra_alone_serves_a_game(wheel, tmp_path):
    """A fresh venv with the web extra only: the app deals a game (pydantic comes with the extra)."""
    whl, _ = wheel
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    py = str(venv / "bin" / "python")
    r = _pip("--python", py, "install", "-q", "-c", str(ROOT / "constraints.txt"), f"{whl}[web]")
    assert r.returncode == 0, r.stderr[-3000:]
    # run from tmp_path: the checkout's folders must not be what gets imported
    r = subprocess.run([py, "-m", "hod.apps.web", "--help"], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert r.returncode == 0 and "--port" in r.stdout, r.stderr
    r = subprocess.run([py, "-c", _WEB_CHECK], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert {k: got[k] for k in ("status", "over", "choices", "torch")} == \
        {"status": 201, "over": False, "choices": True, "torch": False}
    # Ray pins gymnasium==1.2.2 for the rllib extra only: this install gets the newest
    assert Version(got["gymnasium"]) >= NEWEST_GYMNASIUM_CHECKED


# ---- the Makefile ----------------------------------------------------------------------------------
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
PIP_Q = "pip install -q -c constraints.txt"
LOCAL_CHECK = f"{PIP_Q} --dry-run --no-deps --no-index --ignore-installed --report - torch"
INDEX_PROBE = f"python -c import urllib.request as u; u.urlopen('{CPU_INDEX}/torch/', timeout=10)"
MAIN_INSTALL = f"{PIP_Q} -e .[bench,train,dev,web,rllib]"


def _make(tmp_path, *args, local_cpu_wheel=False, index_answers=False):
    """Run ``make setup VENV=<stand-in> ARGS`` in the checkout; returns ``(completed process,
    the stand-in's calls)``. The stand-in venv's ``pip`` records its arguments (a ``--dry-run``
    reports a local ``2.13.0+cpu`` torch if ``local_cpu_wheel``, else fails as pip does with no
    wheel found), its ``python`` records them and succeeds if ``index_answers``."""
    venv = tmp_path / "venv"
    bin_ = venv / "bin"
    bin_.mkdir(parents=True)
    calls = tmp_path / "calls.txt"
    report = json.dumps({"version": "1", "install": [{"metadata": {"name": "torch", "version": "2.13.0+cpu"}}]})
    dry_run = f"echo '{report}'" if local_cpu_wheel else "exit 1"
    (bin_ / "pip").write_text(f'#!/bin/sh\necho "pip $*" >> {calls}\ncase "$*" in *--dry-run*) {dry_run};; esac\n')
    (bin_ / "python").write_text(f'#!/bin/sh\necho "python $*" >> {calls}\nexit {0 if index_answers else 1}\n')
    for f in ("pip", "python"):
        (bin_ / f).chmod(0o755)
    (bin_ / "activate").write_text("")
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "TORCH", "TORCH_INDEX")}
    r = subprocess.run(["make", "-s", "setup", f"VENV={venv}", *args], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=60)
    lines = calls.read_text().splitlines() if calls.exists() else []
    return r, [line.replace(str(bin_) + "/", "") for line in lines]


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_setup_picks_the_cpu_torch_build_unless_told_cuda(tmp_path):
    # TORCH=cpu (the default), a CPU wheel found without an index (find-links, as on our machines): no index
    r, calls = _make(tmp_path / "local", local_cpu_wheel=True)
    assert r.returncode == 0 and calls == [LOCAL_CHECK, MAIN_INSTALL], r.stderr
    assert "torch: a CPU wheel found without an index" in r.stdout
    # no local CPU wheel, PyTorch's CPU index answers: torch alone from that index, first
    r, calls = _make(tmp_path / "index", index_answers=True)
    assert r.returncode == 0 and calls == [LOCAL_CHECK, INDEX_PROBE, f"{PIP_Q} --index-url {CPU_INDEX} torch",
                                           MAIN_INSTALL], r.stderr
    # the index does not answer (this machine and CI reach PyPI only): a warning, the install goes on
    r, calls = _make(tmp_path / "none")
    assert r.returncode == 0 and calls == [LOCAL_CHECK, INDEX_PROBE, MAIN_INSTALL], r.stderr
    assert f"warning: {CPU_INDEX} did not answer and no CPU wheel was found" in r.stderr
    # TORCH=cuda: the package index's torch (the CUDA build on Linux), or from a given PyTorch index
    r, calls = _make(tmp_path / "cuda", "TORCH=cuda", local_cpu_wheel=True, index_answers=True)
    assert r.returncode == 0 and calls == [MAIN_INSTALL], r.stderr
    cu126 = "https://download.pytorch.org/whl/cu126"
    r, calls = _make(tmp_path / "cu126", "TORCH=cuda", f"TORCH_INDEX={cu126}")
    assert r.returncode == 0 and calls == [f"{PIP_Q} --index-url {cu126} torch", MAIN_INSTALL], r.stderr
    # anything else: make's one-line error (status 2) naming the legal values, nothing run
    r, calls = _make(tmp_path / "rocm", "TORCH=rocm")
    assert r.returncode == 2 and calls == [] and "TORCH=rocm: legal values cpu (default), cuda." in r.stderr


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_test_runs_the_env_tests_without_torch_and_ray(tmp_path):
    """``make test`` ends with ``make test-core``: a venv of the core and the dev extra only (so
    the newest gymnasium), running the env tests."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    core = tmp_path / "core"
    r = subprocess.run(["make", "-n", "test", f"VENV={tmp_path / 'venv'}", f"CORE_VENV={core}"], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    tests = ["tests/contract/test_env_contract.py", "tests/games/test_tapeo_env.py", "tests/games/test_robada_env.py",
             "tests/adapters/test_single_agent_actions.py"]
    assert f"{core}/bin/pip install -q -c constraints.txt -e '.[dev]'" in lines
    assert f"{core}/bin/python -m pytest -q {' '.join(tests)}" in lines
    assert all((ROOT / t).is_file() for t in tests)
    # the tests of the full venv come first
    assert lines.index(f"{tmp_path / 'venv'}/bin/python -m pytest -q -n 2") < \
        lines.index(f"{core}/bin/python -m pytest -q {' '.join(tests)}")
