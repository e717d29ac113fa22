"""The web app refuses what could harm it or the person: a drawn seed too wide to guess, escaped
HTML, bodies checked by type and size, the slow new-game work off the event loop."""
from __future__ import annotations

import html

import pytest

from _web_helpers import client, new_game, play_out  # noqa: F401 (client: the fixture)
from hod.apps.play import build_parser, parse_table
from hod.apps.web.games import GameStore


def test_a_drawn_seed_is_too_wide_to_try_every_one(client):
    """The web app draws a seed from OS entropy over 0..2**53-1 (exact in the page's JavaScript),
    the terminal over 0..2**63-1 (hod.core.deal.game_seed): 8 draws all below 10**6 has
    probability below (10**6 / 2**53)**8 < 1e-70, so this fails only for a narrow draw (one from
    10**6 seeds, found by trying them all against the first view)."""
    seeds = [client.store.get(new_game(client, game="robada", players=2, opponents=["random"])).table.seed
             for _ in range(8)]
    assert all(0 <= s < 2**53 for s in seeds) and max(seeds) >= 10**6 and len(set(seeds)) == 8
    ap = build_parser("tapeo", "play", "", 2, 6, 4)
    seeds = [parse_table(ap, "tapeo", ["--no-record", "--opponents", "random"]).seed for _ in range(8)]
    assert all(0 <= s < 2**63 for s in seeds) and max(seeds) >= 10**6


def test_the_no_such_game_page_never_shows_the_id(client):
    """The id is not repeated, escaped or not (tests/apps/test_web_security.py: no refusal repeats its
    input)."""
    r = client.get("/game/%3Cimg%20src=x%20onerror=alert(1)%3E")
    assert r.status_code == 404 and "No such game" in r.text
    assert "<img" not in r.text and "onerror" not in r.text and html.escape("<img") not in r.text


def test_a_dropped_game_is_explained():
    store = GameStore(capacity=1)
    first = store.new("robada", 2, opponents=["random"]).id
    store.new("robada", 2, opponents=["random"])
    with pytest.raises(Exception, match="at most 1 games are kept"):
        store.get(first)


def test_actions_refuse_unknown_keys_and_wrong_types(client):
    gid = new_game(client, game="robada", players=2, seed=4, opponents=["random"])
    action = client.get(f"/api/games/{gid}").json()["choices"][0]["action"]
    r = client.post(f"/api/games/{gid}/actions", json={"step": 0, "action": action, "colour": "red"})
    assert r.status_code == 422 and r.json() == {"error": "unknown key(s); legal keys: ['step', 'action']", "step": 0}
    r = client.post(f"/api/games/{gid}/actions", json={"step": 0, "action": [action]})
    assert r.status_code == 422 and "action: Input should be a valid integer" in r.json()["error"]
    assert client.get(f"/api/games/{gid}").json()["step"] == 0


def test_large_bodies_are_refused_unread_and_never_echoed(client):
    big = {"game": "tapeo", "players": 2, "opponents": ["x" * 1000] * 100}       # ~100 KB > 64 KiB
    r = client.post("/api/games", json=big)
    assert r.status_code == 413 and r.json() == {"error": "the body is over the limit of 65536 bytes",
                                                 "limit": 65536}

    def chunks():                        # no Content-Length: refused while it streams in
        yield b'{"game": "tapeo", "players": 2, "opponents": ['
        for _ in range(200):
            yield b'"' + b"y" * 1000 + b'",'
        yield b'"z"]}'
    assert client.post("/api/games", content=chunks(), headers={"Content-Type": "application/json"}).status_code == 413
    # under the limit, a long list or a long name is refused without repeating it
    r = client.post("/api/games", json={"game": "tapeo", "players": 2, "opponents": ["random"] * 5000})
    assert r.status_code == 422 and len(r.text) < 1000 and "at most 5 items" in r.text
    r = client.post("/api/games", json={"game": "tapeo", "players": 2, "opponents": ["q" * 5000]})
    assert r.status_code == 422 and len(r.text) < 1000 and "at most 64 characters" in r.text


def test_dealing_runs_off_the_event_loop(client, monkeypatch):
    """A new game plays the computer seats that act first (seconds for a search bot): it must run
    in the thread pool, where no event loop runs, so other requests are served meanwhile."""
    import asyncio

    calls = []
    new = client.store.new

    def spy(*args):
        try:
            asyncio.get_running_loop()
            calls.append("event loop")
        except RuntimeError:
            calls.append("worker thread")
        return new(*args)

    monkeypatch.setattr(client.store, "new", spy)
    new_game(client, game="robada", players=2, opponents=["random"])
    assert calls == ["worker thread"]


def test_missing_onnxruntime_web_says_how_to_install_it(tmp_path, monkeypatch):
    from hod.benchmarks import browser

    monkeypatch.delenv("HOD_ORT_DIST", raising=False)
    monkeypatch.setattr(browser, "NPM_DIR", tmp_path / "web")
    with pytest.raises(FileNotFoundError, match=r"run `npm ci --prefix web`.*set HOD_ORT_DIST="):
        browser.ort_dist()


@pytest.mark.parametrize("game", ["tapeo", "robada"])
def test_the_final_scores_are_not_flattened_into_recent(client, game):
    """The game-over text is a score table: it stays in the full log; the page shows the final
    scores from the view's ``result`` table, so ``recent`` ends with the last step played."""
    gid = new_game(client, game=game, players=2, seed=8, opponents=["random"])
    view = play_out(client, gid)
    end = view["log"].index("=== Game over ===")
    assert view["recent"] and "=== Game over ===" not in view["recent"]
    assert not any(line in view["recent"] for line in view["log"][end:] if line.strip())
    assert len(view["table"]["result"]["rows"]) == 2
