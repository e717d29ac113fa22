"""The play page as a player meets it: the difficulty choice (server-side, from the strength
ladder), the standings the server computes for the page (majority leaders, piles at risk), and
whole games in Debian's chromium at a phone's width (390 px) and a laptop's (1280 px), dealt from
the home page by difficulty and played by clicks and keys: no horizontal scroll, no console
error, no serious or critical axe-core violation on any screen (home, game, rules panel, end),
tap targets of 44 px, the rules panel, play again with the same settings and the record download.

Screenshots of every screen at both widths go to the test's tmp folder, or to
``$HOD_WEB_SCREENSHOTS`` when set: ``make screenshots`` (``HOD_WEB_SCREENSHOTS=docs python -m
pytest tests/apps/test_web_play.py -k whole_game``) regenerates docs/web_*_390.png and
docs/web_*_1280.png (docs/web.md).

axe-core comes from npm (``web/package.json``, ``npm ci --prefix web``); the tests load it into
the page with Playwright's ``add_script_tag`` (in a context that bypasses the page's CSP, since the
page allows only its own scripts; the CSP itself is checked by tests/apps/test_web_browser.py).
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from _web_helpers import client, new_game  # noqa: F401 (client: the fixture)

from hod.apps.web.difficulty import difficulty_bots
from hod.apps.web.games import GameStore, TapeoGame, options
from hod.core.atomic import atomic_write_bytes
from hod.core.errors import ConfigError

import robada_env
import tapeo_env
from tapeo_env.rules.cards import CHURRO, HAM1, HAM2, HAM3, NUM_KINDS, PEPPER
from tapeo_env.rules.scoring import DEFAULT_RULINGS

ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / "web" / "node_modules" / "axe-core" / "axe.min.js"


# ---- the difficulty choice -----------------------------------------------------------------
def _entry(rating, label, players=2):
    return {"rating": rating, "sigma": 1.0, "interval": [rating - 2, rating + 2], "label": label, "games": 10,
            "players": players, "date": "2026-12-02", "command": "test"}


def test_difficulty_is_the_strongest_bot_of_its_label_at_the_table_size(tmp_path, monkeypatch):
    monkeypatch.setattr("hod.apps.web.difficulty.onnx_available", lambda: True)   # ppo, search: ONNX
    path = tmp_path / "strength.json"
    path.write_text(json.dumps({"version": 2, "strengths": {"tapeo": {
        # 2-player entries: easy {random -3, greedy -1} -> greedy; medium {expert 16, ranking 31} -> ranking;
        # hard {ppo 35} -> ppo (search_d8 is no registered bot: never dealt)
        "random": {"2": _entry(-3, "easy")}, "greedy": {"2": _entry(-1, "easy")},
        "expert": {"2": _entry(16, "medium")}, "ranking": {"2": _entry(31, "medium")},
        # ppo also measured at 4 players, where it is medium
        "ppo": {"2": _entry(35, "hard"), "4": _entry(20, "medium", players=4)},
        "search_d8": {"2": _entry(99, "hard")},
        # at 4 players only entries measured at 4 count
        "search": {"4": _entry(40, "hard", players=4)}}, "robada": {}}}))
    two = difficulty_bots("tapeo", 2, path)
    assert two == {"bots": {"easy": "greedy", "medium": "ranking", "hard": "ppo"}, "measured_at": 2, "note": None}
    four = difficulty_bots("tapeo", 4, path)
    assert four == {"bots": {"easy": None, "medium": "ppo", "hard": "search"}, "measured_at": 4, "note": None}
    # 3 players: no 3-player entry, so the 2-player labels stand in, and the page is told so
    three = difficulty_bots("tapeo", 3, path)
    assert three["bots"] == two["bots"] and three["measured_at"] == 2
    assert three["note"].startswith("Difficulty labels measured at 2 players")
    # no entry at all: nothing to deal
    assert difficulty_bots("robada", 2, path)["bots"] == {"easy": None, "medium": None, "hard": None}
    # an install without onnxruntime cannot run ppo (a shipped ONNX export) nor Tapeo's search
    # (its playouts run it): no hard bot left at 2 players; at 4 neither ppo (medium) nor search (hard)
    monkeypatch.setattr("hod.apps.web.difficulty.onnx_available", lambda: False)
    assert difficulty_bots("tapeo", 2, path)["bots"] == {"easy": "greedy", "medium": "ranking", "hard": None}
    assert difficulty_bots("tapeo", 4, path)["bots"] == {"easy": None, "medium": None, "hard": None}


def test_a_bot_that_does_not_play_the_table_size_is_never_a_difficulty(tmp_path, monkeypatch):
    monkeypatch.setattr("hod.apps.web.difficulty.onnx_available", lambda: True)
    path = tmp_path / "strength.json"
    # (a format-1 file, 2-player entries only: still read, and 3 players falls back to them)
    # Ronda Robada's ppo_v1 was trained for 2 and 4 players (its model card): at 3 the hard bot is expert
    path.write_text(json.dumps({"robada": {"ppo_v1": _entry(28, "hard"), "expert": _entry(27, "hard"),
                                           "random": _entry(8, "easy")}}))
    assert difficulty_bots("robada", 2, path)["bots"]["hard"] == "ppo_v1"
    assert difficulty_bots("robada", 3, path)["bots"]["hard"] == "expert"


def test_a_difficulty_deals_its_bot_at_every_computer_seat(client):
    opts = client.get("/api/options").json()
    for game, players in (("tapeo", 3), ("robada", 2)):
        for label, bot in opts[game]["difficulty"][str(players)]["bots"].items():
            assert bot == difficulty_bots(game, players)["bots"][label]
            if bot is None:   # no bot of that label at this size (the ladder put none there): refused
                r = client.post("/api/games", json={"game": game, "players": players, "difficulty": label})
                assert r.status_code == 422 and f"no {game} bot of that label" in r.json()["error"]
                continue
            gid = new_game(client, game=game, players=players, difficulty=label, seed=1)
            assert sorted(client.store.get(gid).table.opponents.values()) == [bot] * (players - 1)
            view = client.get(f"/api/games/{gid}").json()
            assert view["settings"] == {"game": game, "players": players, "seat": 0, "opponents": [bot] * (players - 1)}
    # refusals name the legal values and change nothing
    games = len(client.store)
    r = client.post("/api/games", json={"game": "tapeo", "players": 2, "difficulty": "insane"})
    assert r.status_code == 422 and "difficulty" in r.json()["error"] and "'easy', 'medium', 'hard'" in r.json()["error"]
    r = client.post("/api/games", json={"game": "tapeo", "players": 2, "difficulty": "easy", "opponents": ["random"]})
    assert r.status_code == 422 and r.json()["error"] == "difficulty: give either opponents or a difficulty, not both"
    assert len(client.store) == games
    with pytest.raises(ConfigError, match="players"):
        GameStore().new("tapeo", 9, difficulty="easy")


def test_options_carry_each_games_blurb_rules_and_legend(client):
    opts = client.get("/api/options").json()
    tapeo, robada = opts["tapeo"], opts["robada"]
    assert tapeo["blurb"] and robada["blurb"]
    # Ronda Robada's card points (R1): As 1 .. 7 7, Sota 10, Caballo 11, Rey 12
    assert [(x["name"], x["points"]) for x in robada["legend"]] == [
        ("As", 1), ("2", 2), ("3", 3), ("4", 4), ("5", 5), ("6", 6), ("7", 7), ("Sota", 10), ("Caballo", 11), ("Rey", 12)]
    # Tapeo: ten kinds with the deck's counts (T1: 14+14+4+4+4+10+8+10+6+10 = 84)
    assert [x["key"] for x in tapeo["legend"]][:2] == ["tortilla", "croqueta"]
    assert sum(x["in_deck"] for x in tapeo["legend"]) == 84
    assert tapeo["legend"][0]["scores"] == "5 per pair"
    titles = [sec["title"] for sec in tapeo["rules"]]
    assert titles == ["Goal", "Each pick", "The Freeloader", "Scoring each round", "End of the game"]
    text = " ".join(" ".join(sec["lines"]) for sec in tapeo["rules"])
    assert "10 with 2, 9 with 3, 8 with 4, 7 with 5, 7 with 6" in text     # HAND_SIZES
    assert "Finish 3 rounds" in text
    rtext = " ".join(" ".join(sec["lines"]) for sec in robada["rules"])
    assert "4 cards lie face up" in rtext and "everyone gets 3" in rtext and "244 points" in rtext


# ---- what the server tells the page about the standings ------------------------------------
def test_tapeo_bar_standings_name_the_majority_leaders():
    bars = np.zeros((3, NUM_KINDS), np.int64)
    bars[0, HAM3] = 1; bars[0, HAM1] = 1            # seat 0: 4 slices
    bars[1, HAM2] = 1                               # seat 1: 2 slices
    bars[2, HAM2] = 1                               # seat 2: 2 slices
    bars[1, PEPPER] = 3                             # seat 1: 3 peppers, the most and 3+: hot
    bars[2, PEPPER] = 1
    churros = [2, 0, 0]
    st = TapeoGame._bar_standings(bars, churros, DEFAULT_RULINGS)
    ham, pep, ch = st["majorities"]["ham"], st["majorities"]["pepper"], st["majorities"]["churros"]
    # T2, T3: 4 slices alone take 6; seats 1 and 2 tie at 2 for the runner-up 3, split: 1 each
    assert ham == {"slices": [4, 2, 2], "first": [0], "second": [1, 2], "points": [6, 1, 1]}
    # T5: 3 peppers at the table's maximum: 3*2 - 6 = 0; the single pepper scores 2
    assert pep == {"counts": [0, 3, 1], "most": [1], "hot": True, "points": [0, 0, 2]}
    # T9 with 3 players: the most (2) +6, the fewest (0, 0) split -6: -3 each
    assert ch == {"counts": [2, 0, 0], "most": [0], "fewest": [1, 2], "points": [6, -3, -3]}
    # this bar now: seat 0 ham 6; seat 1 ham 1 + pepper 0; seat 2 ham 1 + pepper 2
    assert [b["total"] for b in st["bar_points"]] == [6, 1, 3]
    two = TapeoGame._bar_standings(np.zeros((2, NUM_KINDS), np.int64), [1, 1], DEFAULT_RULINGS)
    # two players, all tied: each gains 3, nobody loses (T9); no ham, no pepper, no leader
    assert two["majorities"]["churros"]["points"] == [3, 3] and two["majorities"]["churros"]["fewest"] == []
    assert two["majorities"]["ham"]["first"] == [] and two["majorities"]["pepper"]["most"] == []


def test_robada_piles_at_risk_are_those_a_run_may_take():
    from robada_env.rules.actions import START
    from robada_env.rules.engine import Config, apply_action, from_position

    def position(loose):
        # card id = 10 * suit + rank: seat 0's pile shows 7 (Sota de oros, rank 7), seat 1's 13
        # (4 de copas, rank 3); seat 0 holds 2 (3 de oros), seat 1 holds 1 (2 de oros)
        used = set(loose) | {7, 13, 2, 1}
        return from_position(Config(num_players=2), hands=[[2], [1]], loose=loose, piles=[[7], [13]],
                             deck=[c for c in range(40) if c not in used], current=0)

    game = GameStore().new("robada", 2, opponents=["random"], seed=5)
    risks = type(game)._pile_risks        # reads only ``self.session.state``: run it on built positions
    table = SimpleNamespace(session=SimpleNamespace(state=None))
    # one loose Sota (27, Sota de espadas) and the As de oros (0): a run needing a Sota must tap the
    # loose one (R3), so only seat 1's pile is at risk
    table.session.state = position([27, 0])
    piles = [{"seat": i} for i in range(2)]
    risks(table, piles)
    assert [p["at_risk"] for p in piles] == [False, True] and [p["takeable"] for p in piles] == [False, False]
    # seat 0 starts a run with its 3 de oros on the loose 3 de espadas (22): it needs a 4 (rank 3)
    # next, no loose 4 is on the table, so the step may take seat 1's pile (its visible 4) now (R3);
    # seat 0's Sota is not the rank needed
    s = position([27, 22])
    apply_action(s, START + 2)
    assert s.run_next == 3
    table.session.state = s
    piles = [{"seat": i} for i in range(2)]
    risks(table, piles)
    # the loose Sota still guards seat 0's Sota: only seat 1's pile is at risk
    assert [p["takeable"] for p in piles] == [False, True] and [p["at_risk"] for p in piles] == [False, True]


# ---- whole games in the browser ------------------------------------------------------------
@pytest.fixture(scope="module")
def site():
    from hod.benchmarks.browser import CHROMIUM_INSTALL, chromium_path, launch, serve
    from hod.apps.web import create_app

    if chromium_path() is None:
        pytest.skip(f"no chromium on PATH; {CHROMIUM_INSTALL}")
    if not AXE.is_file():
        pytest.fail(f"{AXE} is missing: run `npm ci --prefix web` in the source checkout (make browser)")
    app = create_app(GameStore())
    with serve(app) as url, launch() as browser:
        yield url, app.state.store, browser


def screenshot(page, folder, name):
    """Save the page as ``name`` in ``$HOD_WEB_SCREENSHOTS`` (e.g. ``docs``) if set, else in ``folder``."""
    path = Path(os.environ.get("HOD_WEB_SCREENSHOTS") or folder) / name
    atomic_write_bytes(path, page.screenshot(full_page=True))
    return path


def axe_violations(page):
    """The serious and critical axe-core violations of the page as it is now: ``[(rule id, [targets])]``."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    found = page.evaluate("""async () => {
        const r = await axe.run(document, {resultTypes: ["violations"]});
        return r.violations.filter((v) => v.impact === "serious" || v.impact === "critical")
          .map((v) => [v.id, v.nodes.map((n) => n.target.join(" "))]);
    }""")
    return found


def layout_problems(page):
    """A horizontal scroll, or visible controls smaller than 44 x 44 px (a radio or checkbox is
    measured by its label, the control a finger taps)."""
    return page.evaluate("""() => {
        const out = [];
        if (document.documentElement.scrollWidth > window.innerWidth) out.push("horizontal scroll: "
            + document.documentElement.scrollWidth + " > " + window.innerWidth);
        for (const el of document.querySelectorAll("button, a, select, input, summary")) {
            const target = (el.type === "radio" || el.type === "checkbox") ? el.closest("label") : el;
            const r = target.getBoundingClientRect();
            if (r.width === 0 && r.height === 0) continue;            // not shown (a closed panel)
            if (r.width < 44 || r.height < 44) out.push(`${el.tagName} ${el.id || el.className || el.textContent.slice(0, 20)}: ${r.width}x${r.height}`);
        }
        return out;
    }""")


def check_screen(page, folder, name, problems, axe=True):
    """Every screen: no horizontal scroll, 44 px targets, no serious/critical axe violation (when
    ``axe``: a run takes seconds, so each screen is checked at one width); a screenshot."""
    problems += [f"{name}: {p}" for p in layout_problems(page)]
    if axe:
        problems += [f"{name}: axe {v}" for v in axe_violations(page)]
    screenshot(page, folder, name)


@pytest.mark.parametrize("width", [390, 1280])
@pytest.mark.parametrize("game, level, load", [("tapeo", "easy", tapeo_env.load_record),
                                               ("robada", "easy", robada_env.load_record)])
def test_whole_game_from_the_home_page(site, tmp_path, game, level, load, width):
    url, store, browser = site
    context = browser.new_context(viewport={"width": width, "height": 844 if width == 390 else 800},
                                  reduced_motion="reduce", bypass_csp=True, accept_downloads=True)
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    problems: list[str] = []
    page.goto(url + "/")
    page.wait_for_selector("input[name=difficulty]")
    if game == "tapeo":
        check_screen(page, tmp_path, f"web_home_{width}.png", problems)        # axe at both widths
    page.click(f".game-card[data-game={game}]")
    page.select_option("#players", "2")
    page.click(f".pill:has(input[value={level}])")
    page.click("#deal")
    page.wait_for_url("**/game/*")
    page.wait_for_selector("body[data-step='0']")
    g = store.get(page.url.rsplit("/", 1)[1])
    bot = difficulty_bots(game, 2)["bots"][level]
    assert list(g.table.opponents.values()) == [bot]                    # the difficulty reached its bot
    # the rules panel, by its button and by "?"; Escape closes it
    page.click("#rules-open")
    assert page.locator("#rules").is_visible()
    assert page.locator("#rules-body h3").first.inner_text() == "Goal"
    assert page.locator("#legend li").count() == 10                     # 10 tapa kinds / 10 ranks
    check_screen(page, tmp_path, f"web_{game}_rules_{width}.png", problems, axe=width == 390)
    page.keyboard.press("Escape")
    assert not page.locator("#rules").is_visible()
    page.keyboard.press("?")
    assert page.locator("#rules").is_visible()
    page.click("#rules-close")
    step, shot = 0, False
    wanted_sel = ".steal" if game == "tapeo" else "#table .run"
    state = f"""() => ({{over: document.body.dataset.over === "true", wanted: !!document.querySelector("{wanted_sel}"),
                        fits: document.documentElement.scrollWidth <= window.innerWidth}})"""
    while True:
        now = page.evaluate(state)                 # one round trip a step: the suite is kept short
        assert now["fits"], f"horizontal scroll at step {step}"
        if now["over"]:
            break
        # the pictures: Tapeo from round 2 on (the round-1 scoring shown), a Freeloader's steal if
        # one comes; Ronda Robada with a run in progress if one comes
        if not shot and step >= (10 if game == "tapeo" else 4) and (now["wanted"] or step >= 18):
            check_screen(page, tmp_path, f"web_{game}_{width}.png", problems, axe=width == 390)
            shot = True
        if step == 0:
            assert page.locator("button.choice").first.locator("kbd").inner_text() == "1"   # keys shown
        if step % 2:
            page.keyboard.press("1")
        else:
            page.locator("button.choice").first.click()
        step += 1
        page.wait_for_selector(f"body[data-step='{step}']")
    assert shot
    check_screen(page, tmp_path, f"web_{game}_end_{width}.png", problems, axe=width == 390)
    assert page.locator("#winner").inner_text().startswith(("Winner: ", "Shared win: "))
    assert page.locator("#result table.final tbody tr").count() == 2
    with page.expect_download() as dl:
        page.click("#record")
    path = tmp_path / "record.json"
    dl.value.save_as(path)
    rec = load(path)
    if game == "tapeo":
        assert tapeo_env.replay(rec).final_scores.tolist() == g.session.state.final_scores.tolist()
    else:
        assert robada_env.replay(rec).points == g.session.state.points
    # play again: the same game, table size, seat and bot, a new deal
    page.click("#play-again")
    page.wait_for_url(lambda u: u.rsplit("/", 1)[1] != g.id)
    page.wait_for_selector("body[data-step='0']")
    again = store.get(page.url.rsplit("/", 1)[1])
    assert (again.game, again.table.players, again.table.seat, again.table.opponents) == \
        (game, 2, 0, g.table.opponents) and again.id != g.id
    assert problems == [] and errors == [], "\n".join(problems + errors)
    context.close()


def test_computer_moves_appear_one_at_a_time(site):
    """Without reduced motion the computer's steps since the person's last choice are shown one at
    a time and the choices wait for them; a key shows the rest at once. With reduced motion all
    are shown together."""
    url, store, browser = site
    # Ronda Robada, the person in seat 1: the bot in seat 0 plays a whole turn before the first view
    g = store.new("robada", 2, seat=1, opponents=["greedy"], seed=2)
    lines = len(g.view()["recent"])
    assert lines >= 2
    page = browser.new_page(reduced_motion="no-preference")
    page.goto(f"{url}/game/{g.id}")
    page.wait_for_selector("body[data-busy='true']")
    assert page.locator("#recent-steps li.shown").count() < lines
    assert page.locator("button.choice").first.is_disabled()
    page.wait_for_selector("body[data-busy='false']", timeout=10_000)
    assert page.locator("#recent-steps li.shown").count() == lines
    assert page.locator("button.choice").first.is_enabled()
    page.reload()
    page.wait_for_selector("body[data-busy='true']")
    page.keyboard.press("1")                                             # shows the rest, chooses nothing
    assert page.get_attribute("body", "data-busy") == "false" and g.step == 0
    assert page.locator("#recent-steps li.shown").count() == lines
    page.close()
    calm = browser.new_page(reduced_motion="reduce")
    calm.goto(f"{url}/game/{g.id}")
    calm.wait_for_selector("body[data-step='0']")
    assert calm.get_attribute("body", "data-busy") == "false"
    assert calm.locator("#recent-steps li.shown").count() == lines
    calm.close()


def test_the_home_page_and_a_move_by_keyboard_alone(site):
    """Tab and the arrow keys reach every choice of the home page: Ronda Robada (the second game
    card), the medium difficulty, Deal; in the game, Tab reaches the choices and Enter plays one."""
    url, store, browser = site
    page = browser.new_page(reduced_motion="reduce")
    page.goto(url + "/")
    page.wait_for_selector("input[name=difficulty]")
    focus = "() => document.activeElement.id || document.activeElement.name || document.activeElement.tagName"
    page.keyboard.press("Tab")
    assert page.evaluate(focus) == "game"                                 # the game cards' radio group
    page.keyboard.press("ArrowRight")                                    # Tapeo -> Ronda Robada
    page.keyboard.press("Tab")
    assert page.evaluate(focus) == "players"
    page.keyboard.press("Tab")
    assert page.evaluate(focus) == "difficulty"
    page.keyboard.press("ArrowRight")                                    # easy -> medium
    page.keyboard.press("Tab")
    assert page.evaluate(focus) == "SUMMARY"                             # "Advanced", closed
    page.keyboard.press("Tab")
    assert page.evaluate(focus) == "deal"
    page.keyboard.press("Enter")
    page.wait_for_url("**/game/*")
    page.wait_for_selector("body[data-step='0']")
    g = store.get(page.url.rsplit("/", 1)[1])
    assert g.game == "robada" and list(g.table.opponents.values()) == [difficulty_bots("robada", 2)["bots"]["medium"]]
    for _ in range(6):                                                   # Rules, New game, then the choices
        page.keyboard.press("Tab")
        if page.evaluate("() => document.activeElement.matches('button.choice')"):
            break
    assert page.evaluate("() => document.activeElement.matches('button.choice')")
    page.keyboard.press("Enter")
    page.wait_for_selector("body[data-step='1']")
    page.close()
