"""Only the player's own page can drive the web app: JSON bodies only (415), the Host and Origin
of the address it serves only (400, 403), hardening headers on every answer, finished games
dropped before games in progress, a deeply nested body a 400 (not a 500), and no refusal that
repeats its input."""
from __future__ import annotations

import json

import httpx
import pytest

from _web_helpers import client, new_game  # noqa: F401 (client: the fixture)
from hod.apps.web import app as web_app
from hod.apps.web.games import GameStore, UnknownGame

NEW = {"game": "robada", "players": 2, "opponents": ["random"], "seed": 1}


def _port(client) -> int:
    return httpx.URL(str(client.base_url)).port


# -- item 1: content type, Host, Origin, headers, eviction -------------------------------------
@pytest.mark.parametrize("ctype", [None, "text/plain", "text/plain; charset=utf-8", "application/x-www-form-urlencoded",
                                   "multipart/form-data; boundary=x", "application/jsonp", "application/json-seq"])
def test_a_body_that_is_not_declared_json_is_415(client, ctype):
    """The three content types a cross-origin page may post without a preflight (text/plain,
    form-urlencoded, multipart) and any other than application/json are refused, the body
    unread, nothing dealt."""
    games = len(client.store)
    headers = {} if ctype is None else {"Content-Type": ctype}
    r = client.post("/api/games", content=json.dumps(NEW).encode(), headers=headers)
    assert r.status_code == 415 and r.json() == {"error": "the body must be JSON: send it with Content-Type: "
                                                          "application/json", "legal": ["application/json"]}
    assert len(client.store) == games


def test_json_with_parameters_or_capitals_is_json(client):
    """Media types are case-insensitive and may carry parameters (RFC 9110 8.3.1)."""
    for ctype in ("application/json; charset=utf-8", "Application/JSON"):
        r = client.post("/api/games", content=json.dumps(NEW).encode(), headers={"Content-Type": ctype})
        assert r.status_code == 201, r.text


def test_an_action_as_text_plain_is_415_and_changes_nothing(client):
    gid = new_game(client, **NEW)
    action = client.get(f"/api/games/{gid}").json()["choices"][0]["action"]
    r = client.post(f"/api/games/{gid}/actions", content=json.dumps({"step": 0, "action": action}),
                    headers={"Content-Type": "text/plain"})
    assert r.status_code == 415 and client.store.get(gid).step == 0


def test_a_foreign_host_header_is_refused(client):
    """DNS rebinding: a page of evil.example whose name now points at 127.0.0.1 reaches the
    server with Host: evil.example; only the served names pass (any port)."""
    port, games = _port(client), len(client.store)
    for host in ("evil.example", f"evil.example:{port}", f"127.0.0.1.evil.example:{port}", f"localhost.:{port}"):
        assert client.get("/", headers={"Host": host}).status_code == 400
        r = client.post("/api/games", json=NEW, headers={"Host": host})
        assert r.status_code == 400 and r.text == "Invalid host header"
    assert len(client.store) == games
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST:{port}"):
        assert client.get("/api/options", headers={"Host": host}).status_code == 200


def test_a_cross_origin_post_is_403_and_changes_nothing(client):
    port, games = _port(client), len(client.store)
    refusal = {"error": "cross-origin request refused: only the page this server serves may post to it"}
    for origin in ("http://evil.example", "null", f"http://127.0.0.1:{port + 1 if port < 65535 else port - 1}",
                   f"https://127.0.0.1:{port}", f"http://localhost:{port}", "http://127.0.0.1"):
        r = client.post("/api/games", json=NEW, headers={"Origin": origin})
        assert (r.status_code, r.json()) == (403, refusal), origin
    assert len(client.store) == games
    gid = new_game(client, **NEW)
    action = client.get(f"/api/games/{gid}").json()["choices"][0]["action"]
    r = client.post(f"/api/games/{gid}/actions", json={"step": 0, "action": action},
                    headers={"Origin": "http://evil.example"})
    assert r.status_code == 403 and client.store.get(gid).step == 0
    # the page's own origin (the browser sends it with the page's fetch), in any letter case
    for origin in (f"http://127.0.0.1:{port}", f"HTTP://127.0.0.1:{port}"):
        assert client.post("/api/games", json=NEW, headers={"Origin": origin}).status_code == 201
    # two Origin headers (no browser sends them), the page's own first or last: refused
    own = f"http://127.0.0.1:{port}"
    for pair in ([("origin", own), ("origin", "http://evil.example")], [("origin", "http://evil.example"), ("origin", own)]):
        r = client.post("/api/games", json=NEW, headers=httpx.Headers(pair))
        assert (r.status_code, r.json()) == (403, refusal), pair
    # reads are not refused: another page cannot read the answer (no CORS headers are sent)
    r = client.get("/api/options", headers={"Origin": "http://evil.example"})
    assert r.status_code == 200 and "access-control-allow-origin" not in r.headers


CSP = ("default-src 'none'; base-uri 'none'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; "
       "img-src 'self'; object-src 'none'; script-src 'self'; style-src 'self'")


@pytest.mark.parametrize("method, url", [("GET", "/"), ("GET", "/static/app.js"), ("GET", "/api/options"),
                                         ("GET", "/game/nope"), ("GET", "/api/games/nope"),
                                         ("POST", "/api/games")])
def test_every_answer_carries_the_hardening_headers(client, method, url):
    """Refusals too (the last two are 404 and 415)."""
    r = client.request(method, url)
    assert r.headers["content-security-policy"] == CSP
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["x-frame-options"] == "DENY"
    assert r.headers["referrer-policy"] == "no-referrer"         # a game's URL holds its id
    assert r.headers["cross-origin-opener-policy"] == "same-origin"
    assert r.headers["cross-origin-resource-policy"] == "same-origin"


def test_a_refused_host_still_gets_the_headers(client):
    r = client.get("/", headers={"Host": "evil.example"})
    assert r.status_code == 400 and r.headers["x-frame-options"] == "DENY"


def _finish(g) -> None:
    while not g.over():
        g.play(g.step, g.session.legal()[0])


def test_finished_games_are_dropped_before_games_in_progress():
    """Capacity 2: a (in progress, least recently used) and b (finished); dealing c drops b, not
    a; dealing d then drops the least recently used game in progress, a."""
    store = GameStore(capacity=2)
    a = store.new("robada", 2, opponents=["random"], seed=1)
    b = store.new("robada", 2, opponents=["random"], seed=2)
    _finish(b)
    c = store.new("robada", 2, opponents=["random"], seed=3)
    assert store.get(a.id) is a and store.get(c.id) is c and len(store) == 2
    with pytest.raises(UnknownGame, match="at most 2 games are kept: the finished ones are dropped first"):
        store.get(b.id)
    store.get(a.id)                                                     # now c is the least recently used
    d = store.new("robada", 2, opponents=["random"], seed=4)
    assert store.get(a.id) is a and store.get(d.id) is d
    with pytest.raises(UnknownGame):
        store.get(c.id)


def test_served_hosts_come_from_the_address_and_the_options():
    assert web_app.served_hosts("127.0.0.1") == ["127.0.0.1", "localhost"]
    assert web_app.served_hosts("::1") == ["[::1]", "localhost"]
    assert web_app.served_hosts("localhost") == ["localhost", "127.0.0.1", "[::1]"]
    # every address: the loopback names, and only the names given for the others
    assert web_app.served_hosts("0.0.0.0", ["Board.LAN", "192.168.1.20"]) == [
        "0.0.0.0", "127.0.0.1", "localhost", "[::1]", "board.lan", "192.168.1.20"]
    assert web_app.served_hosts("192.168.1.20", ["fe80::1"]) == ["192.168.1.20", "[fe80::1]"]
    with pytest.raises(ValueError, match="a host name or IP address without a port"):
        web_app.served_hosts("127.0.0.1", ["board.lan:8000"])
    with pytest.raises(ValueError, match=r"\*\.example\.com"):
        web_app.served_hosts("127.0.0.1", ["ex*ample.com"])


def test_an_allowed_host_is_served():
    app = web_app.create_app(GameStore(), allowed_hosts=web_app.served_hosts("127.0.0.1", ["board.lan"]))
    from hod.benchmarks.browser import serve

    with serve(app) as url, httpx.Client(base_url=url, timeout=30) as c:
        port = httpx.URL(url).port
        assert c.get("/", headers={"Host": f"board.lan:{port}"}).status_code == 200
        assert c.get("/", headers={"Host": f"other.lan:{port}"}).status_code == 400
        r = c.post("/api/games", json=NEW, headers={"Host": f"board.lan:{port}", "Origin": f"http://board.lan:{port}"})
        assert r.status_code == 201


# -- item 2: nesting and size -----------------------------------------------------------------
@pytest.mark.parametrize("body", [b"[" * 30000 + b"]" * 30000,                 # 60,000 bytes < 64 KiB
                                  b'{"game": ' + b'{"a": ' * 6000 + b"1" + b"}" * 6001,
                                  b'{"game": "tapeo", "players": 2, "opponents": ' + b"[" * 20000 + b"]" * 20000 + b"}"])
def test_a_deeply_nested_body_is_400_not_500(client, body):
    games = len(client.store)
    assert len(body) < 65536
    r = client.post("/api/games", content=body, headers={"Content-Type": "application/json"})
    assert (r.status_code, r.json()) == (400, {"error": "the body is not JSON: nested too deeply"})
    gid = new_game(client, **NEW)
    r = client.post(f"/api/games/{gid}/actions", content=body, headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and client.store.get(gid).step == 0
    assert len(client.store) == games + 1


# -- item 3: no refusal repeats its input ----------------------------------------------------
MARK = "zqxMARKqz"
BIG = 987654321987654321987          # an int the refusals must not repeat either


def _refused(r) -> str:
    assert 400 <= r.status_code < 500, (r.status_code, r.text)
    return r.text + json.dumps(dict(r.headers))


def _bodies():
    """(body, expected status) for POST /api/games: the marker in every field, as a key, as a
    value of each type, in a bot name at each position, in nested values."""
    base = {"game": "tapeo", "players": 3}
    yield {**base, "game": MARK}, 422
    yield {**base, "game": [MARK]}, 422
    yield {**base, "game": {MARK: MARK}}, 422
    for field in ("players", "seat", "seed", "opponents"):
        yield {**base, field: MARK}, 422
        yield {**base, field: {MARK: 1}}, 422
        yield {**base, field: [MARK, {MARK: [MARK]}]}, 422
    yield {**base, "players": BIG}, 422
    yield {**base, "seat": BIG}, 422
    yield {**base, "seed": -BIG}, 422
    yield {**base, "seed": BIG * 10**5}, 422                     # over 2**64-1
    yield {**base, "opponents": [MARK]}, 422                     # not a bot
    yield {**base, "opponents": ["random", MARK]}, 422
    yield {**base, "opponents": [MARK + ",random"]}, 422
    yield {**base, "opponents": ["random"] * 2 + [MARK]}, 422
    yield {**base, "opponents": [MARK * 20]}, 422                # over 64 characters
    yield {**base, MARK: 1}, 422                                 # an unknown key
    yield {**base, MARK: MARK, "players": MARK}, 422


def test_no_new_game_refusal_repeats_the_input(client):
    games = len(client.store)
    for body, status in _bodies():
        r = client.post("/api/games", json=body)
        assert r.status_code == status, (body, r.text)
        text = _refused(r)
        assert MARK.lower() not in text.lower() and str(BIG) not in text, (body, r.text)
    assert len(client.store) == games


def test_no_action_refusal_repeats_the_input(client):
    gid = new_game(client, **NEW)
    v = client.get(f"/api/games/{gid}").json()
    action = v["choices"][0]["action"]
    for body in ({"step": MARK, "action": action}, {"step": 0, "action": MARK}, {"step": 0, "action": [MARK]},
                 {"step": 0, "action": {MARK: 0}}, {"step": 0, "action": action, MARK: 0},
                 {"step": 0, "action": BIG}, {"step": 0, "action": -BIG}, {"step": BIG, "action": action}):
        r = client.post(f"/api/games/{gid}/actions", json=body)
        text = _refused(r)
        assert MARK.lower() not in text.lower() and str(BIG) not in text, (body, r.text)
    assert client.get(f"/api/games/{gid}").json() == v


def test_no_malformed_request_refusal_repeats_the_input(client):
    """Bodies that are not JSON (400), not an object, not UTF-8; headers that are refused (415,
    403, 400); an unknown game id (404: the id is not repeated either)."""
    gid = new_game(client, **NEW)
    js = {"Content-Type": "application/json"}
    mark = MARK.encode()
    for url in ("/api/games", f"/api/games/{gid}/actions"):
        for content in (b'{"' + mark + b'": ', b"[\"" + mark + b"\"]", b'"' + mark + b'"', mark,
                        b"\xff" + mark, b'{"game": "' + mark + b"\xff\"}", b"[" * 30000 + mark):
            text = _refused(client.post(url, content=content, headers=js))
            assert MARK.lower() not in text.lower(), (url, content[:40], text)
        for headers in ({"Content-Type": "text/" + MARK}, {"Content-Type": "application/json", "Origin": "http://" + MARK},
                        {"Content-Type": "application/json", "Host": MARK}):
            text = _refused(client.post(url, content=json.dumps(NEW), headers=headers))
            assert MARK.lower() not in text.lower(), (url, headers, text)
    for method, url in (("GET", f"/api/games/{MARK}"), ("GET", f"/game/{MARK}"), ("GET", f"/api/games/{MARK}/record"),
                        ("POST", f"/api/games/{MARK}/actions")):
        r = client.request(method, url, json={"step": 0, "action": 0})
        assert r.status_code == 404 and MARK.lower() not in _refused(r).lower(), (url, r.text)
