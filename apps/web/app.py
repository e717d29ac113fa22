"""The web app's routes (a Starlette ASGI app); :func:`create_app` builds it.

=======  ==============================  ===========================================================
method   path                            what
=======  ==============================  ===========================================================
GET      ``/``                           the home page (game, table size, difficulty; advanced:
                                         opponents, seat, seed)
GET      ``/game/{id}``                  the page of game ``id`` (404 when there is none)
GET      ``/api/options``                games, table sizes, bots with their strength labels,
                                         difficulties, each game's blurb, rules and legend
POST     ``/api/games``                  ``{"game", "players", "seat"?, "opponents"?, "seed"?, "difficulty"?}``
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

Every error is JSON ``{"error": message, ...}`` (but the Host refusal: plain text, Starlette's) and
changes nothing. A request body must be sent
as ``Content-Type: application/json`` (415 otherwise, unread) and be a JSON object of at most
:data:`MAX_BODY` bytes (413 beyond, refused before it is read in full; 400 for one that is not JSON,
nested too deeply included) holding only the keys its model names, each of its type (422 otherwise;
the message names the field and its legal values). No refusal (400, 403, 404, 415, 422) repeats any
part of the request: not a value, a key, a header, nor the game id.

Only the player's own page can drive the server (:func:`create_app`): a request whose ``Host`` is
not one of the served names (:func:`served_hosts`; DNS rebinding) is 400, a POST whose ``Origin``
is another origin than the address it was sent to is 403 (:class:`SameOriginMiddleware`), and
every answer carries a Content-Security-Policy (:data:`CSP`), ``X-Content-Type-Options: nosniff``,
``X-Frame-Options: DENY`` and ``Referrer-Policy: no-referrer`` (:data:`HEADERS`, the ``secure``
package). Dealing a new game (and playing the computer seats that act before the person) and each
action run in the thread pool, so a slow bot never holds up other requests. The game runs on the server
(:mod:`hod.apps.web.games`); the page's script only draws the view it is sent and posts the
action the person chose.
"""
from __future__ import annotations

import html
import ipaddress
import json
import re
from pathlib import Path
from typing import Annotated, Iterable, Literal, Optional, Sequence
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError
from secure import (ContentSecurityPolicy, CrossOriginOpenerPolicy, CrossOriginResourcePolicy, ReferrerPolicy, Secure,
                    XContentTypeOptions, XFrameOptions)
from secure.middleware import SecureASGIMiddleware

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

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
         "difficulty": "null, or one of ['easy', 'medium', 'hard'] (not with opponents)",
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
    difficulty: Optional[Literal["easy", "medium", "hard"]] = None


class ActionBody(BaseModel):
    """The body of ``POST /api/games/{id}/actions``: the step answered and the action (ints,
    strict; unknown keys refused)."""

    model_config = ConfigDict(extra="forbid", strict=True)
    step: int
    action: int


class TooLarge(GameError):
    """A request body over :data:`MAX_BODY` bytes: 413."""

    status = 413


class NotJson(GameError):
    """A request body not sent as ``Content-Type: application/json``: 415. Only a JSON body
    makes a browser ask the server (a CORS preflight, which it refuses) before another site's
    page may post it; ``text/plain``, form and multipart bodies are sent without asking."""

    status = 415


#: The names a server listening on 127.0.0.1 (the default) answers to.
DEFAULT_HOSTS = ("127.0.0.1", "localhost")
#: The loopback names: served too when the server listens on a loopback or on every address.
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
#: A host name (letters, digits, hyphens, dots), optionally ``*.`` before it, or ``*`` alone.
_HOST_NAME = re.compile(r"\*|(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*")


def _host_pattern(name: str) -> str:
    """``name`` as a :class:`TrustedHostMiddleware` pattern: lower case, an IPv6 address in
    brackets. Raises ValueError (naming what is legal, not repeating ``name``) for a name with a
    port, a misplaced ``*`` or any other character."""
    name = name.strip().lower()
    bare = name[1:-1] if name.startswith("[") and name.endswith("]") else name
    try:
        ip = ipaddress.ip_address(bare)
    except ValueError:
        if _HOST_NAME.fullmatch(name):
            return name
        raise ValueError("a served host must be a host name or IP address without a port (board.lan, "
                         "192.168.1.20, ::1), *.example.com (every name under example.com) or * (any name)") from None
    return f"[{ip}]" if ip.version == 6 else str(ip)


def served_hosts(host: str, allowed: Iterable[str] = ()) -> list[str]:
    """The ``Host`` names a server listening on address ``host`` answers to (a
    :class:`TrustedHostMiddleware` list, lower case, IPv6 addresses in brackets, no duplicates):
    ``host`` itself; the loopback names (:data:`LOOPBACK_HOSTS`: 127.0.0.1, localhost, [::1])
    that reach it (``127.0.0.1``: localhost too; ``localhost`` or every address, 0.0.0.0 or ``::``:
    all three); then the names in ``allowed`` (``--allowed-host``: the names and addresses other
    machines reach it by; ``*.example.com`` for every name under a domain, ``*`` for any name).

    Raises:
        ValueError: ``host`` or a name of ``allowed`` has a port, a misplaced ``*`` or a character
            no host name has (the message names the legal forms).
    """
    own = _host_pattern(host or "0.0.0.0")             # "": every address, as socket.create_server takes it
    names = [own]
    try:
        ip = ipaddress.ip_address(own.strip("[]"))
        if ip.is_unspecified:
            names += LOOPBACK_HOSTS
        elif ip.is_loopback:
            names.append("localhost")
    except ValueError:
        if own == "localhost":
            names += LOOPBACK_HOSTS
    names += [_host_pattern(name) for name in allowed]
    return list(dict.fromkeys(names))


class SameOriginMiddleware:
    """Refuses (403, nothing read or changed) a request that may change state (any method but
    GET, HEAD and OPTIONS) whose ``Origin`` header is not the origin the request was sent to:
    scheme, host and port of the request's own URL (its ``Host`` header, checked beforehand by
    :class:`TrustedHostMiddleware`). A browser sends ``Origin`` with every such request of a page
    (``null`` from a sandboxed or local page: refused too; so is a request with more than one
    ``Origin``, which no browser sends); a request without one does not come from another site's
    page (curl, scripts) and passes. The answer names neither origin."""

    SAFE = frozenset({"GET", "HEAD", "OPTIONS"})

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    @staticmethod
    def same_origin(origin: str, scheme: str, host: Optional[str]) -> bool:
        """True when ``origin`` (an ``Origin`` header) is ``scheme://host`` (the request's URL
        scheme and ``Host`` header), letter case and a spelled-out default port aside."""
        if host is None:
            return False
        default = {"http": 80, "https": 443}
        try:
            o, h = urlsplit(origin), urlsplit(f"{scheme}://{host}")
            if o.path or o.query or o.fragment or o.username is not None or o.scheme not in default:
                return False
            return (o.scheme == h.scheme and o.hostname == h.hostname
                    and (o.port or default[o.scheme]) == (h.port or default[h.scheme]))
        except ValueError:                                   # a port that is not a number, ...
            return False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] not in self.SAFE:
            headers = Headers(scope=scope)
            origins = headers.getlist("origin")   # a browser sends one; two or more: refused
            if origins and (len(origins) > 1 or not self.same_origin(origins[0], scope["scheme"], headers.get("host"))):
                refusal = {"error": "cross-origin request refused: only the page this server serves may post to it"}
                await JSONResponse(refusal, status_code=403)(scope, receive, send)
                return
        await self.app(scope, receive, send)


#: The page's Content-Security-Policy: its own script, style sheet and API only (the suits are
#: inline SVG elements, no image is loaded), no plugin, no <base>, no framing by another page.
CSP = (ContentSecurityPolicy().default_src("'none'").base_uri("'none'").connect_src("'self'")
       .form_action("'self'").frame_ancestors("'none'").img_src("'self'").object_src("'none'")
       .script_src("'self'").style_src("'self'"))
#: The hardening headers of every answer (``secure``'s ASGI middleware): the CSP, no MIME
#: sniffing, no framing (X-Frame-Options for browsers without frame-ancestors), no Referer (a
#: game's URL holds its id), a browsing context and resources of its own.
HEADERS = Secure(csp=CSP, xcto=XContentTypeOptions().nosniff(), xfo=XFrameOptions().deny(),
                 referrer=ReferrerPolicy().no_referrer(), coop=CrossOriginOpenerPolicy().same_origin(),
                 corp=CrossOriginResourcePolicy().same_origin())


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
    """A 422 naming each refused field (and list position) with pydantic's reason and the
    field's legal values (:data:`LEGAL`). No part of the input is repeated: not a value, nor the
    name of an unknown key (``unknown key(s)`` and the legal keys are said instead)."""
    parts, unknown = [], False
    for err in e.errors(include_input=False, include_url=False, include_context=False):
        loc = err["loc"]
        if not loc or loc[0] not in model.model_fields or err["type"] == "extra_forbidden":
            unknown = True                     # the key is the input: never repeated
            continue
        where = ".".join(str(x) for x in loc)  # a field name, then list positions
        parts.append(f"{where}: {err['msg']}; legal values: {LEGAL.get(loc[0], '?')}")
    if unknown:
        parts.append(f"unknown key(s); legal keys: {list(model.model_fields)}")
    return IllegalChoice("; ".join(parts))


def _media_type(content_type: Optional[str]) -> str:
    """The media type of a Content-Type header, lower case, its parameters dropped
    (``Application/JSON; charset=utf-8`` -> ``application/json``; RFC 9110 8.3.1)."""
    return (content_type or "").split(";", 1)[0].strip().lower()


async def _json_body(request: Request, model: type[BaseModel]) -> BaseModel:
    """The request's JSON object as ``model``. Raises :class:`NotJson` (415: not sent as
    ``application/json``; nothing read), :class:`TooLarge` (413), :class:`GameError` (400: not
    JSON, not UTF-8, nested too deeply for the parser, or not an object) or
    :class:`IllegalChoice` (422: keys or types refused by ``model``). No message repeats the
    body."""
    if _media_type(request.headers.get("content-type")) != "application/json":
        raise NotJson("the body must be JSON: send it with Content-Type: application/json", legal=["application/json"])
    raw = await _read_body(request)
    try:
        body = json.loads(raw)
    except json.JSONDecodeError as e:       # its msg never holds the input; the position does not either
        raise GameError(f"the body is not JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    except UnicodeDecodeError:
        raise GameError("the body is not JSON: it is not UTF-8 text") from None
    except RecursionError:                  # [[[[...: deeper than the parser's recursion limit
        raise GameError("the body is not JSON: nested too deeply") from None
    except ValueError:                      # an int of over 4300 digits (sys.get_int_max_str_digits)
        raise GameError("the body is not JSON: a number is too long") from None
    if not isinstance(body, dict):
        raise GameError("the body must be a JSON object")
    try:
        return model.model_validate(body)
    except ValidationError as e:
        raise _refusal(e, model) from None


def create_app(store: Optional[GameStore] = None, allowed_hosts: Sequence[str] = DEFAULT_HOSTS) -> Starlette:
    """The ASGI app, its games kept in ``store`` (default: a new :class:`GameStore`, reachable as
    ``app.state.store``), answering only requests whose ``Host`` is one of ``allowed_hosts``
    (default: 127.0.0.1 and localhost, any port; :func:`served_hosts` builds the list for an
    address; anything else is 400 ``Invalid host header``, Starlette's
    :class:`TrustedHostMiddleware`) and only same-origin POSTs (:class:`SameOriginMiddleware`,
    403), every answer with the :data:`HEADERS`.

    Raises:
        AssertionError: a pattern of ``allowed_hosts`` with a ``*`` elsewhere than a leading ``*.``
            (:class:`TrustedHostMiddleware`'s check; :func:`served_hosts` raises ValueError first).
    """
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
            g = await run_in_threadpool(store.new, body.game, body.players, body.seat, body.opponents, body.seed,
                                       body.difficulty)
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

    middleware = [
        Middleware(SecureASGIMiddleware, secure=HEADERS),              # outermost: refusals get the headers too
        Middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts), www_redirect=False),
        Middleware(SameOriginMiddleware),
    ]
    app = Starlette(middleware=middleware, routes=[
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
