"""The web app's routes (a Starlette ASGI app); :func:`create_app` builds it.

=======  ==============================  ===========================================================
method   path                            what
=======  ==============================  ===========================================================
GET      ``/``                           the new-game page (game, table size, opponents, seed)
GET      ``/game/{id}``                  the page of game ``id`` (404 when there is none)
GET      ``/api/options``                games, table sizes, bots with their strength labels
POST     ``/api/games``                  ``{"game", "players", "seat"?, "opponents"?, "seed"?}``
                                         (:class:`NewGameBody`) -> 201 ``{"id", "url"}``; 422
                                         naming the legal values
GET      ``/api/games/{id}``             the view of the person's seat (:meth:`WebGame.view`)
POST     ``/api/games/{id}/actions``     ``{"step", "action"}`` (:class:`ActionBody`) -> the new view; 409 for a stale or
                                         replayed step (or a finished game), 422 for an illegal
                                         action (the legal ones are named), 404 for an unknown id
GET      ``/api/games/{id}/record``      the JSON game record, as a download, once the game is over
                                         (409 before)
GET      ``/static/...``                 the page's script, style sheet and pages
=======  ==============================  ===========================================================

Every error is JSON ``{"error": message, ...}`` and changes nothing. A request body must be a JSON
object of at most :data:`MAX_BODY` bytes (413 beyond, refused before it is read in full; 400 for one
that is not JSON) holding only the keys its model names, each of its type (422 otherwise; the
message names the field and its legal values, never repeats the input). Dealing a new game (and
playing the computer seats that act before the person) and each action run in the thread pool, so
a slow bot never holds up other requests. The game runs on the server
(:mod:`hod.apps.web.games`); the page's script only draws the view it is sent and posts the
action the person chose.
"""
from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Annotated, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from hod.core.errors import ConfigError
from hod.core.games import get_game

from .games import GAMES, GameError, GameStore, IllegalChoice, options

STATIC = Path(__file__).resolve().parent / "static"
#: Largest request body, in bytes (a new game or an action takes well under 1 KiB).
MAX_BODY = 64 * 1024
#: Longest bot name a new-game request may hold (the registered names are far shorter).
MAX_NAME = 64
#: Most opponent names a new-game request may hold: one per computer seat of the largest table.
MAX_OPPONENTS = max(get_game(g).max_players for g in GAMES) - 1
#: What each request field may hold, told with a refusal.
LEGAL = {"game": f"{sorted(GAMES)}", "players": "an int, a table size of the game (GET /api/options)",
         "seat": "an int in 0..players-1", "seed": "null, or an int in 0..2**64-1",
         "opponents": f"null, or a list of 1 to {MAX_OPPONENTS} bot names: 1 (every computer seat) or one per "
                      "computer seat (the game's bots: GET /api/options)",
         "step": "the int step of the view the action answers", "action": "an int, one of the view's choices"}


class NewGameBody(BaseModel):
    """The body of ``POST /api/games`` (JSON types, strict: no bools for ints, no strings for
    numbers; unknown keys refused). Values are checked against the game by
    :class:`hod.apps.web.games.WebGame`."""

    model_config = ConfigDict(extra="forbid", strict=True)
    game: Literal[tuple(sorted(GAMES))]
    players: int
    seat: int = 0
    opponents: Optional[list[Annotated[str, StringConstraints(min_length=1, max_length=MAX_NAME)]]] = \
        Field(None, min_length=1, max_length=MAX_OPPONENTS)
    seed: Optional[int] = None


class ActionBody(BaseModel):
    """The body of ``POST /api/games/{id}/actions``: the step answered and the action (ints,
    strict; unknown keys refused)."""

    model_config = ConfigDict(extra="forbid", strict=True)
    step: int
    action: int


class TooLarge(GameError):
    """A request body over :data:`MAX_BODY` bytes: 413."""

    status = 413


async def _read_body(request: Request) -> bytes:
    """The request's body, refused (:class:`TooLarge`) as soon as it is known to exceed
    :data:`MAX_BODY` bytes: from its Content-Length, else while it streams in."""
    length = request.headers.get("content-length")
    too_large = TooLarge(f"the body is over the limit of {MAX_BODY} bytes", limit=MAX_BODY)
    if length is not None:
        if not length.isdigit():
            raise GameError("the Content-Length header is not a number")
        if int(length) > MAX_BODY:
            raise too_large
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise too_large
        chunks.append(chunk)
    return b"".join(chunks)


def _refusal(e: ValidationError, model: type[BaseModel]) -> IllegalChoice:
    """A 422 naming each refused field and its legal values (:data:`LEGAL`); the input itself is
    never repeated (it may be large)."""
    parts = []
    for err in e.errors(include_input=False, include_url=False):
        field = str(err["loc"][0]) if err["loc"] else "body"
        if err["type"] == "extra_forbidden":
            parts.append(f"unknown key {field[:40]!r}")
            continue
        where = ".".join(str(x) for x in err["loc"])
        parts.append(f"{where}: {err['msg']}; legal values: {LEGAL.get(field, '?')}")
    if any(err["type"] == "extra_forbidden" for err in e.errors()):
        parts.append(f"legal keys: {list(model.model_fields)}")
    return IllegalChoice("; ".join(parts))


async def _json_body(request: Request, model: type[BaseModel]) -> BaseModel:
    """The request's JSON object as ``model``. Raises :class:`TooLarge` (413),
    :class:`GameError` (400: not a JSON object) or :class:`IllegalChoice` (422: keys or types
    refused by ``model``)."""
    raw = await _read_body(request)
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as e:
        raise GameError(f"the body is not JSON: {e}") from None
    if not isinstance(body, dict):
        raise GameError("the body must be a JSON object")
    try:
        return model.model_validate(body)
    except ValidationError as e:
        raise _refusal(e, model) from None


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
            body = await _json_body(request, NewGameBody)
            # dealing plays the computer seats that act first (a search bot may think seconds):
            # in a worker thread, so other requests are served meanwhile
            g = await run_in_threadpool(store.new, body.game, body.players, body.seat, body.opponents, body.seed)
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
            body = await _json_body(request, ActionBody)
        except IllegalChoice as e:
            e.detail["step"] = g.step
            return error(e)
        except GameError as e:
            return error(e)

        # the bots may think a while: play in a worker thread, one request per game at a time
        def play() -> Response:
            with g.lock:
                try:
                    g.play(body.step, body.action)
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
