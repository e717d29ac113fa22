"""The web app's routes (a Starlette ASGI app); :func:`create_app` builds it.

=======  ==============================  ===========================================================
method   path                            what
=======  ==============================  ===========================================================
GET      ``/``                           the new-game page (game, table size, opponents, seed)
GET      ``/game/{id}``                  the page of game ``id`` (404 when there is none)
GET      ``/api/options``                games, table sizes, bots with their strength labels
POST     ``/api/games``                  ``{"game", "players", "seat"?, "opponents"?, "seed"?}`` ->
                                         201 ``{"id", "url"}``; 422 naming the legal values
GET      ``/api/games/{id}``             the view of the person's seat (:meth:`WebGame.view`)
POST     ``/api/games/{id}/actions``     ``{"step", "action"}`` -> the new view; 409 for a stale or
                                         replayed step (or a finished game), 422 for an illegal
                                         action (the legal ones are named), 404 for an unknown id
GET      ``/api/games/{id}/record``      the JSON game record, as a download, once the game is over
                                         (409 before)
GET      ``/static/...``                 the page's script, style sheet and pages
=======  ==============================  ===========================================================

Every error is JSON ``{"error": message, ...}`` and changes nothing. The game runs on the server
(:mod:`hod.apps.web.games`); the page's script only draws the view it is sent and posts the
action the person chose.
"""
from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Optional

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from hod.core.errors import ConfigError

from .games import GameError, GameStore, IllegalChoice, options

STATIC = Path(__file__).resolve().parent / "static"
#: Keys a new-game request may hold.
NEW_GAME_KEYS = ("game", "players", "seat", "opponents", "seed")


async def _json_body(request: Request) -> dict:
    """The request's JSON object. Raises :class:`GameError` (400) for anything else."""
    try:
        body = json.loads(await request.body())
    except (ValueError, UnicodeDecodeError) as e:
        raise GameError(f"the body is not JSON: {e}") from None
    if not isinstance(body, dict):
        raise GameError("the body must be a JSON object")
    return body


def create_app(store: Optional[GameStore] = None) -> Starlette:
    """The ASGI app, its games kept in ``store`` (default: a new :class:`GameStore`, reachable as
    ``app.state.store``)."""
    store = store if store is not None else GameStore()

    def error(e: Exception) -> JSONResponse:
        if isinstance(e, GameError):
            return JSONResponse(e.detail, status_code=e.status)
        return JSONResponse({"error": str(e)}, status_code=422)

    async def index(request: Request) -> Response:
        return FileResponse(STATIC / "index.html")

    async def game_page(request: Request) -> Response:
        try:
            store.get(request.path_params["game_id"])
        except GameError as e:
            return HTMLResponse(f"<!doctype html><title>No such game</title><p>{html.escape(str(e))}</p><p><a href='/'>New game</a></p>",
                                status_code=404)
        return FileResponse(STATIC / "game.html")

    async def api_options(request: Request) -> Response:
        return JSONResponse(options())

    async def new_game(request: Request) -> Response:
        try:
            body = await _json_body(request)
            unknown = sorted(set(body) - set(NEW_GAME_KEYS))
            if unknown:
                raise IllegalChoice(f"unknown key(s) {unknown}; legal keys: {list(NEW_GAME_KEYS)}")
            opponents = body.get("opponents")
            if opponents is not None and (not isinstance(opponents, list)
                                          or not all(isinstance(o, str) for o in opponents)):
                raise IllegalChoice(f"opponents={opponents!r}; legal values: null, or a list of bot names "
                                    "(one for every computer seat, or one per seat)")
            g = store.new(body.get("game"), body.get("players"), body.get("seat", 0), opponents, body.get("seed"))
        except (GameError, ConfigError) as e:
            return error(e)
        return JSONResponse({"id": g.id, "url": f"/game/{g.id}"}, status_code=201)

    def view(request: Request) -> Response:
        try:
            g = store.get(request.path_params["game_id"])
        except GameError as e:
            return error(e)
        with g.lock:
            return JSONResponse(g.view())

    async def act(request: Request) -> Response:
        try:
            g = store.get(request.path_params["game_id"])
            body = await _json_body(request)
        except GameError as e:
            return error(e)
        # the bots may think a while: play in a worker thread, one request per game at a time
        def play() -> Response:
            with g.lock:
                try:
                    g.play(body.get("step"), body.get("action"))
                except GameError as e:
                    return error(e)
                return JSONResponse(g.view())

        return await run_in_threadpool(play)

    def record(request: Request) -> Response:
        try:
            g = store.get(request.path_params["game_id"])
            with g.lock:
                rec = g.record()
        except GameError as e:
            return error(e)
        name = f"{g.game}-seed{g.table.seed}-{g.id}.json"
        return Response(json.dumps(rec, indent=1), media_type="application/json",
                        headers={"Content-Disposition": f'attachment; filename="{name}"'})

    app = Starlette(routes=[
        Route("/", index),
        Route("/game/{game_id}", game_page),
        Route("/api/options", api_options),
        Route("/api/games", new_game, methods=["POST"]),
        Route("/api/games/{game_id}", view),
        Route("/api/games/{game_id}/actions", act, methods=["POST"]),
        Route("/api/games/{game_id}/record", record),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ])
    app.state.store = store
    return app
