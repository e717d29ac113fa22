"""The exported opponents in a web page: onnxruntime-web runs an ONNX export in headless Chromium.

Pieces (used by ``tests/benchmarks/test_onnx_web.py``, ``tests/apps/test_web_browser.py`` and
``python -m hod.benchmarks.decision_latency``):

* :func:`serve`: an ASGI app served by uvicorn on 127.0.0.1 in a background thread (a free port).
* :func:`runner_app`: a page that loads onnxruntime-web (npm package ``onnxruntime-web``, pinned
  in ``web/package.json``, installed by ``npm ci`` in ``make setup``) with its wasm files served
  from 127.0.0.1 by the same app (never a CDN), ``numThreads = 1``, and serves the given exports
  under ``/models/NAME.onnx``; the page's script is ``benchmarks/onnx_runner.mjs``.
* :func:`chromium_path` / :func:`launch`: Debian's ``chromium`` (``apt-get install chromium``)
  driven by Playwright (pip), no browser download.
* :class:`BrowserOnnx`: all of it together; ``run`` returns the actions and logits the page
  computes, ``latency`` the seconds per decision at batch 1.

Only a self-contained export (model card ``onnx.interface.self_contained``: its network input
is the game's plain observation) can play in a page on its own; an export that needs an observation
encoder's features (Ronda Robada's ``robada_plans``, computed by the Python planner) runs there
only on inputs computed in Python.

starlette, uvicorn and playwright are the ``web`` extra; they are imported when used.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import socket
import threading
import time
from pathlib import Path
from typing import Iterator, Optional

import numpy as np

#: The repository's npm folder (``web/``: package.json, package-lock.json, node_modules), next to
#: ``benchmarks/`` in a source checkout (an editable install); elsewhere set ``$HOD_ORT_DIST``.
NPM_DIR = Path(__file__).resolve().parents[1] / "web"
#: onnxruntime-web's files the page loads: the wasm-only bundle, its Emscripten module and wasm.
ORT_FILES = {"ort.wasm.min.mjs": "text/javascript", "ort-wasm-simd-threaded.mjs": "text/javascript",
             "ort-wasm-simd-threaded.wasm": "application/wasm"}
RUNNER = Path(__file__).resolve().parent / "onnx_runner.mjs"
#: Executable names of Chromium, tried in order.
CHROMIUM_NAMES = ("chromium", "chromium-browser")
CHROMIUM_INSTALL = "apt-get install -y chromium (make setup does it)"


def ort_dist() -> Path:
    """The folder of onnxruntime-web's files: ``$HOD_ORT_DIST`` if set, else
    ``web/node_modules/onnxruntime-web/dist``.

    Raises:
        FileNotFoundError: a file of :data:`ORT_FILES` is missing (the message says to run
            ``npm ci --prefix web`` in the source checkout, which ``make setup`` does, or to set
            ``$HOD_ORT_DIST`` when hod is not installed from a checkout).
    """
    d = Path(os.environ.get("HOD_ORT_DIST") or NPM_DIR / "node_modules" / "onnxruntime-web" / "dist")
    missing = [f for f in ORT_FILES if not (d / f).is_file()]
    if missing:
        raise FileNotFoundError(f"onnxruntime-web files {missing} not found in {d}; in the source checkout run "
                                "`npm ci --prefix web` (make setup does it); when hod is not installed editable "
                                "from a checkout, set HOD_ORT_DIST=<checkout>/web/node_modules/onnxruntime-web/dist")
    return d


def chromium_path() -> Optional[str]:
    """The path of the Chromium executable (:data:`CHROMIUM_NAMES` on ``PATH``), or None."""
    for name in CHROMIUM_NAMES:
        path = shutil.which(name)
        if path:
            return path
    return None


@contextlib.contextmanager
def serve(app, host: str = "127.0.0.1") -> Iterator[str]:
    """Serve the ASGI ``app`` with uvicorn in a background thread on a free port of ``host``;
    yields the base URL (``http://127.0.0.1:PORT``) once the server accepts connections, and
    stops it on exit."""
    import uvicorn

    sock = socket.create_server((host, 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"the server on {host}:{port} did not start")
        time.sleep(0.01)
    try:
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def runner_app(models: dict[str, str | Path]):
    """A Starlette app: ``/`` the runner page, ``/runner.mjs`` its script, ``/ort/FILE`` the files of
    :data:`ORT_FILES`, ``/models/NAME.onnx`` the export ``models[NAME]`` (anything else: 404).

    Raises:
        FileNotFoundError: onnxruntime-web is not installed (:func:`ort_dist`).
    """
    from starlette.applications import Starlette
    from starlette.responses import FileResponse, HTMLResponse, Response
    from starlette.routing import Route

    dist = ort_dist()
    page = ("<!doctype html><html><head><meta charset='utf-8'><title>onnxruntime-web runner</title></head>"
            "<body><script type='module' src='/runner.mjs'></script></body></html>")

    async def index(request):
        return HTMLResponse(page)

    async def runner(request):
        return FileResponse(RUNNER, media_type="text/javascript")

    async def ort_file(request):
        name = request.path_params["name"]
        if name not in ORT_FILES:
            return Response(status_code=404)
        return FileResponse(dist / name, media_type=ORT_FILES[name])

    async def model(request):
        path = models.get(request.path_params["name"])
        if path is None:
            return Response(status_code=404)
        return FileResponse(path, media_type="application/octet-stream")

    return Starlette(routes=[Route("/", index), Route("/runner.mjs", runner), Route("/ort/{name}", ort_file),
                             Route("/models/{name}.onnx", model)])


@contextlib.contextmanager
def launch(headless: bool = True):
    """A Playwright Chromium browser on Debian's ``chromium`` (:func:`chromium_path`), closed on exit.

    Raises:
        FileNotFoundError: no Chromium on ``PATH`` (the message names :data:`CHROMIUM_INSTALL`).
    """
    from playwright.sync_api import sync_playwright

    path = chromium_path()
    if path is None:
        raise FileNotFoundError(f"no Chromium executable {list(CHROMIUM_NAMES)} on PATH; {CHROMIUM_INSTALL}")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=path, headless=headless)
        try:
            yield browser
        finally:
            browser.close()


class BrowserOnnx:
    """ONNX exports run by onnxruntime-web in headless Chromium (a context manager).

    Args:
        models: ``{name: path of an .onnx export}``.

    Use::

        with BrowserOnnx({"tapeo_ppo": "agents/opponents/tapeo_ppo.onnx"}) as b:
            action, logits = b.run("tapeo_ppo", obs, mask)

    Raises:
        FileNotFoundError: onnxruntime-web or Chromium missing (see :func:`ort_dist`, :func:`launch`).
    """

    def __init__(self, models: dict[str, str | Path]) -> None:
        self.models = {k: Path(v) for k, v in models.items()}
        self._stack = contextlib.ExitStack()

    def __enter__(self) -> "BrowserOnnx":
        try:
            url = self._stack.enter_context(serve(runner_app(self.models)))
            browser = self._stack.enter_context(launch())
            self.page = browser.new_page()
            self.page.goto(url + "/")
            self.page.wait_for_function("window.hodOrtReady === true", timeout=30_000)
            for name in self.models:
                self.page.evaluate("(n) => window.hodOrt.load(n)", name)
        except BaseException:
            self._stack.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self._stack.close()

    def run(self, name: str, observation: np.ndarray, action_mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(action int64 (B,), logits float32 (B, A))`` of export ``name`` on float32 (B, W)
        observations and int8 (B, A) masks, computed in the page."""
        obs = np.asarray(observation, np.float32)
        mask = np.asarray(action_mask, np.int8)
        out = self.page.evaluate("([n, o, m, b]) => window.hodOrt.run(n, o, m, b)",
                                 [name, obs.ravel().tolist(), mask.ravel().astype(int).tolist(), len(obs)])
        return np.array(out["action"], np.int64), np.array(out["logits"], np.float32).reshape(mask.shape)

    def latency(self, name: str, observation: np.ndarray, action_mask: np.ndarray, repeats: int = 20) -> float:
        """Seconds per decision of export ``name`` at batch 1 in the page: every row of
        ``observation``/``action_mask`` in turn, ``repeats`` passes after a warm-up pass, timed
        with the page's ``performance.now()`` around the whole loop."""
        obs = np.asarray(observation, np.float32)
        mask = np.asarray(action_mask, np.int8)
        return float(self.page.evaluate("([n, o, m, r, k]) => window.hodOrt.time(n, o, m, r, k)",
                                        [name, obs.ravel().tolist(), mask.ravel().astype(int).tolist(), len(obs),
                                         int(repeats)]))

    def version(self) -> Optional[str]:
        """The onnxruntime-web version the page loaded."""
        return self.page.evaluate("window.hodOrt.version")


def self_contained(card: dict) -> tuple[bool, str]:
    """Whether an export with model card ``card`` can play in a web page on its own, and why not:
    ``(True, "")`` when its network input is the game's plain observation (no observation
    encoder, or one whose vector is itself a layout of the game: ``robada_v2``, the env's
    ``observation_version=2`` vector, layout 2), else ``(False, reason)``."""
    from hod.agents.encoders import get_encoder

    encoder = card.get("obs_encoder", "none")
    if encoder == "none" or get_encoder(encoder, card["game"]).layout_version is not None:
        return True, ""
    return False, (f"its network input appends the {encoder!r} observation encoder's features "
                   f"({int(card['obs_size'])} inputs in all), computed in Python by the planner, so a page "
                   "cannot compute them")


__all__ = ["BrowserOnnx", "CHROMIUM_INSTALL", "ORT_FILES", "chromium_path", "launch", "ort_dist", "runner_app",
           "self_contained", "serve"]
