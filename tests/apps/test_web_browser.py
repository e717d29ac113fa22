"""The web app in a real browser: Playwright driving Debian's chromium (no browser download).

Whole games of both games are played by clicking (and by the keyboard), from the new-game form
to the downloaded record; after every decision the page (its DOM) and every server response are
searched for what the person's seat may not know; a reload, a second tab and a stale tab are
tried; a screenshot of each game's table is taken (into the test's tmp folder; into
``$HOD_WEB_SCREENSHOTS`` when set: ``HOD_WEB_SCREENSHOTS=docs python -m pytest tests/apps/test_web_browser.py``
regenerates the docs' pictures, docs/web.md). Skipped only when no chromium executable is on PATH
(``make test`` installs it).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from hod.benchmarks.browser import CHROMIUM_INSTALL, chromium_path, launch, serve
from hod.apps.play_robada import carta
from hod.apps.web import create_app
from hod.apps.web.games import GameStore
from hod.core.atomic import atomic_write_bytes

import robada_env
import tapeo_env
from tapeo_env.rules.cards import KIND_NAMES

pytestmark = pytest.mark.skipif(chromium_path() is None, reason=f"no chromium on PATH; {CHROMIUM_INSTALL}")


@pytest.fixture(scope="module")
def site():
    """(base URL, game store, browser) of the app served on 127.0.0.1."""
    app = create_app(GameStore())
    with serve(app) as url, launch() as browser:
        yield url, app.state.store, browser


class Responses:
    """The bodies of the page's responses from the app's API since the last :meth:`take` (the
    record download aside: it is offered at the end, when nothing is hidden any more)."""

    def __init__(self, page) -> None:
        self.pending: list[str] = []
        self.count = 0
        page.on("response", self._keep)

    def _keep(self, r) -> None:
        if "/api/games" in r.url and not r.url.endswith("/record"):
            self.pending.append(r.text())   # read now: a body is gone once the page navigates away
            self.count += 1

    def take(self) -> list[str]:
        out, self.pending = self.pending, []
        return out


def csp_refusals(page) -> list[str]:
    """The page's console messages that tell of something the Content-Security-Policy refused
    (chromium: "Loading the stylesheet '...' violates the following Content Security Policy
    directive: ..."), gathered from now on: the policy must let the page do all it does."""
    refused: list[str] = []
    page.on("console", lambda m: refused.append(m.text) if "Content Security Policy" in m.text else None)
    return refused


def deal_from_form(page, url, game, players, opponents, seed, seat=0):
    """Fill the new-game form (game, table size, your seat, an opponent per computer seat from
    your left on, seed) and deal; returns the game id from the page's URL."""
    page.goto(url + "/")
    page.check(f"input[name=game][value={game}]")
    page.select_option("#players", str(players))
    page.click("#advanced summary")                 # which bot, seat and seed: under "Advanced"
    page.select_option("#seat", str(seat))
    selects = page.locator("select.opponent")
    assert selects.count() == players - 1
    for k, name in enumerate(opponents):
        selects.nth(k).select_option(name)
    # each opponent is offered with its strength label
    assert "(hard" in selects.nth(0).inner_text() and "(easy" in selects.nth(0).inner_text()
    page.fill("#seed", str(seed))
    page.click("#deal")
    page.wait_for_url("**/game/*")
    page.wait_for_selector("body[data-step='0']")
    return page.url.rsplit("/", 1)[1]


def choose(page, step, keyboard):
    """Make the first legal choice (click it, or press 1) and wait for the next step."""
    if keyboard:
        page.keyboard.press("1")
    else:
        page.locator("button.choice").first.click()
    page.wait_for_selector(f"body[data-step='{step + 1}']")


def finish(page, tmp_path, load, final_scores):
    """At the end: the winner line, and the downloaded record replays to ``final_scores``."""
    assert page.locator("#winner").inner_text().startswith(("Winner: ", "Shared win: "))
    with page.expect_download() as dl:
        page.click("#record")
    path = tmp_path / "record.json"
    dl.value.save_as(path)
    return load(path), final_scores


def screenshot(page, folder, name):
    """Save the page as ``name`` in ``$HOD_WEB_SCREENSHOTS`` (e.g. ``docs``) if set, else in
    ``folder`` (the test's tmp folder); returns the path."""
    path = Path(os.environ.get("HOD_WEB_SCREENSHOTS") or folder) / name
    atomic_write_bytes(path, page.screenshot(full_page=True))
    return path


def test_tapeo_whole_game_by_clicking(site, tmp_path):
    url, store, browser = site
    page = browser.new_page(viewport={"width": 1280, "height": 800}, reduced_motion="reduce")
    responses, refused = Responses(page), csp_refusals(page)
    gid = deal_from_form(page, url, "tapeo", 4, ["ppo", "expert", "greedy"], seed=3, seat=2)
    game = store.get(gid)
    me, n, shot = 2, 4, False
    assert game.table.opponents == {3: "ppo", 0: "expert", 1: "greedy"}      # from your left on
    step = 0
    while page.get_attribute("body", "data-over") != "true":
        s = game.session.state
        # hands the person held this round and passed on: the seats 1..p to the left after p picks
        # (tapeo.txt 'The hand and the bar'); any other hand is unseen
        allowed = {(me + j) % n for j in range(1, min(s.pick, n - 1) + 1)}
        shown = page.locator("[data-hand-of]")
        for k in range(shown.count()):
            seat = int(shown.nth(k).get_attribute("data-hand-of"))
            assert seat in allowed
            kinds = shown.nth(k).locator(".tapa").evaluate_all("els => els.map(e => e.dataset.kind)")
            assert sorted(kinds) == sorted(KIND_NAMES[x] for x in range(10) if s.hand(seat)[x])
        assert shown.count() == len(allowed)
        mine = page.locator("button.choice .tapa").evaluate_all("els => els.map(e => e.dataset.kind)")
        assert sorted(mine) == sorted(KIND_NAMES[x] for x in range(10) if s.hand(me)[x])
        for body in responses.take():
            view = json.loads(body)
            if "table" in view:                                         # not the new game's {"id", "url"}
                assert {k["seat"] for k in view["table"]["known_hands"]} <= allowed
        if step == 9:
            page.reload()
            page.wait_for_selector("body[data-step='9']")                 # no state lost
        # from round 2 on (the round-1 scoring on the table), the first reveal with a Freeloader's steal
        if not shot and step >= 7 and (page.locator(".steal").count() or step == 18):
            assert screenshot(page, tmp_path, "web_tapeo.png").stat().st_size > 0
            shot = True
        choose(page, step, keyboard=step % 2 == 1)
        step += 1
    assert step == 21 and shot                                          # 3 rounds x 7 decisions (T7)
    assert responses.count >= 1 + 21                                    # every view was searched
    rec, _ = finish(page, tmp_path, tapeo_env.load_record, None)
    assert rec["players"] == ["expert", "greedy", "human", "ppo"]
    assert refused == []                                                # the CSP let the page work
    assert tapeo_env.replay(rec).final_scores.tolist() == game.session.state.final_scores.tolist()
    page.close()


def test_robada_whole_game_by_clicking(site, tmp_path):
    url, store, browser = site
    page = browser.new_page(viewport={"width": 1280, "height": 800}, reduced_motion="reduce")
    responses, refused = Responses(page), csp_refusals(page)
    gid = deal_from_form(page, url, "robada", 2, ["ppo"], seed=5)
    game = store.get(gid)
    step, shot = 0, False
    while True:
        s = game.session.state
        hidden = [c for c in list(s.hands[1]) + list(s.deck)]               # R9: the other hand and the deck
        html = page.content()
        texts = responses.take()
        for c in hidden:
            key = f'{carta(c).split(" de ")[0].lower()}-{carta(c).split(" de ")[1]}'
            for text in [html] + texts:
                assert carta(c) not in text and f'"{key}"' not in text and f"'{key}'" not in text
        assert page.locator("#table .hand .card").count() == len(s.hands[0])
        if page.get_attribute("body", "data-over") == "true":
            break
        if not shot and step >= 6 and page.locator("#recent-steps li", has_text="player_1 (ppo)").count() >= 2:
            assert screenshot(page, tmp_path, "web_robada.png").stat().st_size > 0
            shot = True
        if step == 4:
            page.reload()
            page.wait_for_selector("body[data-step='4']")
        choose(page, step, keyboard=step % 3 == 2)
        step += 1
    assert shot and step >= 12                                           # at least one decision per hand card
    assert responses.count >= 1 + step                                  # every view was searched
    rec, _ = finish(page, tmp_path, robada_env.load_record, None)
    assert rec["players"] == ["human", "ppo"]
    assert refused == []                                                # the CSP let the page work
    assert robada_env.replay(rec).points == game.session.state.points
    page.close()


def test_two_tabs_and_a_stale_tab(site):
    url, store, browser = site
    context = browser.new_context(reduced_motion="reduce")
    a, a_old, b = context.new_page(), context.new_page(), context.new_page()
    ids = []
    for page in (a, b):
        r = page.request.post(url + "/api/games", data={"game": "tapeo", "players": 3, "seed": 4,
                                                        "opponents": ["random"]})
        assert r.status == 201
        ids.append(r.json()["id"])
    a.goto(f"{url}/game/{ids[0]}")
    a_old.goto(f"{url}/game/{ids[0]}")
    b.goto(f"{url}/game/{ids[1]}")
    for page in (a, a_old, b):
        page.wait_for_selector("body[data-step='0']")
    choose(a, 0, keyboard=False)
    b.reload()
    b.wait_for_selector("body[data-step='0']")                          # the other game did not move
    # the old tab still shows step 0: its click is refused (409), said on the page, and it catches up
    a_old.locator("button.choice").first.click()
    a_old.wait_for_selector("body[data-step='1']")
    assert "not the game's current step" in a_old.locator("#error").inner_text()
    assert store.get(ids[0]).step == 1
    r = a.request.post(f"{url}/api/games/{ids[0]}/actions", data={"step": 0, "action": 0})
    assert r.status == 409
    a.goto(f"{url}/game/unknown-id")
    assert "No such game" in a.title()
    context.close()


def test_keys_reach_a_tenth_choice_and_focus_stays_on_the_choices(site):
    """A Tapeo hand can hold all 10 kinds: the key 0 chooses the 10th. After every move the
    redrawn choices get the focus back (the same place, else the first)."""
    url, store, browser = site
    page = browser.new_page(reduced_motion="reduce")
    # seed 3249, 2 players: the first hand of 10 holds one of each of the 10 kinds (found by
    # searching seeds with tapeo_env.rules.engine.new_game)
    r = page.request.post(url + "/api/games", data={"game": "tapeo", "players": 2, "seed": 3249,
                                                    "opponents": ["random"]})
    gid = r.json()["id"]
    page.goto(f"{url}/game/{gid}")
    page.wait_for_selector("body[data-step='0']")
    buttons = page.locator("button.choice")
    assert buttons.count() == 10 and buttons.nth(9).locator("kbd").inner_text() == "0"
    tenth = int(buttons.nth(9).get_attribute("data-action"))
    page.keyboard.press("0")
    page.wait_for_selector("body[data-step='1']")
    game = store.get(gid)
    assert game.session.state.reveals[0][0][0] == tenth                 # your pick, revealed
    focused = "() => document.activeElement.matches('button.choice')"
    assert page.evaluate(focused) and page.evaluate("() => document.activeElement === "
                                                     "document.querySelector('button.choice')")
    page.locator("button.choice").nth(2).focus()
    page.keyboard.press("Enter")                                        # the 3rd choice, by Tab/Enter
    page.wait_for_selector("body[data-step='2']")
    assert page.evaluate("() => [...document.querySelectorAll('button.choice')].indexOf(document.activeElement)") == 2
    page.close()


def test_another_sites_page_cannot_deal_or_play(site):
    """A page of another origin (here another port of 127.0.0.1) posts to the app as a browser
    lets it without asking: text/plain bodies in no-cors mode (a 'simple' request, no preflight);
    then a JSON post (the browser asks first, the app answers no CORS, the post is never sent).
    Nothing is dealt and the player's game does not move."""
    from starlette.applications import Starlette
    from starlette.responses import HTMLResponse
    from starlette.routing import Route

    url, store, browser = site
    game = store.new("robada", 2, opponents=["random"], seed=1)
    games, action = len(store), game.session.legal()[0]
    script = f"""(async () => {{
      const deal = JSON.stringify({{game: "tapeo", players: 2, opponents: ["random"]}});
      const simple = {{method: "POST", mode: "no-cors", headers: {{"Content-Type": "text/plain"}}}};
      // sent, whatever the answer; the page cannot read it (Cross-Origin-Resource-Policy: the promise fails)
      await fetch("{url}/api/games", {{...simple, body: deal}}).catch(() => null);
      await fetch("{url}/api/games/{game.id}/actions", {{...simple, body: JSON.stringify({{step: 0, action: {action}}})}})
        .catch(() => null);
      try {{ await fetch("{url}/api/games", {{method: "POST", headers: {{"Content-Type": "application/json"}}, body: deal}});
      }} catch (e) {{ document.body.dataset.refused = "yes"; }}
      document.title = "done";
    }})();"""
    evil = Starlette(routes=[Route("/", lambda request: HTMLResponse(f"<!doctype html><body><script>{script}</script>"))])
    with serve(evil) as evil_url:
        page = browser.new_page()
        page.goto(evil_url + "/")
        page.wait_for_function("document.title === 'done'")
        assert page.get_attribute("body", "data-refused") == "yes"       # the JSON post was never sent
        page.close()
    assert len(store) == games and game.step == 0
