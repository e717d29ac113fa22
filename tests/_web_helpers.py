"""The web app's HTTP tests' shared pieces: the served app's client and game helpers."""
from __future__ import annotations

import httpx
import pytest

from hod.apps.web import create_app
from hod.apps.web.games import GameStore
from hod.benchmarks.browser import serve


@pytest.fixture(scope="module")
def client():
    """An HTTP client of the app served by uvicorn on 127.0.0.1; ``client.store`` is its games."""
    app = create_app(GameStore())
    with serve(app) as url, httpx.Client(base_url=url, timeout=60) as c:
        c.store = app.state.store
        yield c


def new_game(client, **body):
    """Deal a game by ``POST /api/games``; returns its id (asserts 201)."""
    r = client.post("/api/games", json=body)
    assert r.status_code == 201, r.text
    return r.json()["id"]


def play_out(client, gid, pick=lambda view: view["choices"][0]["action"]):
    """Play game ``gid`` to the end, choosing with ``pick``; returns the final view."""
    view = client.get(f"/api/games/{gid}").json()
    while not view["over"]:
        r = client.post(f"/api/games/{gid}/actions", json={"step": view["step"], "action": pick(view)})
        assert r.status_code == 200, r.text
        view = r.json()
    return view
