"""The web app (hod.apps.web) through its HTTP API: whole games, refusals (404, 409, 422, 400),
isolation of games, the downloadable record, and views that hold nothing the person's seat may
not know."""
from __future__ import annotations

import json
import re

import httpx
import numpy as np
import pytest

from hod.agents.strength import strength

from _web_helpers import client, new_game, play_out  # noqa: F401 (client: the fixture)

import robada_env
import tapeo_env
from robada_env.rules.engine import sample_consistent_state as robada_belief
from tapeo_env.rules.engine import sample_consistent_state as tapeo_belief


def test_index_options_and_pages(client):
    assert "Deal right now against the computer" in client.get("/").text
    opts = client.get("/api/options").json()
    # table sizes from the rules: Tapeo 2-6 (tapeo.txt), Ronda Robada 2-4 (ronda_robada.txt)
    assert opts["tapeo"]["players"] == [2, 3, 4, 5, 6] and opts["robada"]["players"] == [2, 3, 4]
    # the shipped PPO opponent is the default where it plays the size (Robada's ppo plays 2-4 players;
    # the 2-and-4-player ppo_v1 is never the default, tests/agents/test_table_sizes.py)
    assert opts["tapeo"]["default_opponent"]["4"] == "ppo"
    assert [opts["robada"]["default_opponent"][str(n)] for n in (2, 3, 4)] == ["ppo", "ppo", "ppo"]
    # each bot's label and rating per table size: the entry measured at that size (agents/strength.json)
    for game, o in opts.items():
        for b in o["bots"]:
            assert set(b["labels"]) == set(b["ratings"]) == {str(n) for n in o["players"]}
            for n, label in b["labels"].items():
                entry = strength(game, b["name"], int(n))
                assert label == (entry["label"] if entry else "unrated")
                assert b["ratings"][n] == (None if entry is None else round(entry["rating"], 1))
    labels = {b["name"]: b["labels"]["2"] for b in opts["tapeo"]["bots"]}
    assert set(labels) >= {"ppo", "expert", "greedy", "random"} and labels["random"] == "easy"
    assert client.get("/static/app.js").status_code == 200


def test_tapeo_first_view_and_whole_game_with_record(client):
    gid = new_game(client, game="tapeo", players=4, seed=3, opponents=["ppo", "expert", "greedy"])
    assert client.get(f"/game/{gid}").status_code == 200
    v = client.get(f"/api/games/{gid}").json()
    # 4 players: hands of 8 (tapeo.txt 'Deck', HAND_SIZES), 7 decisions a round (the last tapa is
    # revealed by itself, T7), 3 rounds
    t = v["table"]
    assert (v["step"], t["round"], t["pick"], t["picks"], t["in_hand"]) == (0, 1, 1, 7, 8)
    assert sum(x["count"] for x in t["hand"]) == 8 and t["known_hands"] == [] and t["reveals"] == []
    assert [s["bot"] for s in v["seats"]] == [None, "ppo", "expert", "greedy"] and v["seats"][0]["you"]
    for s in v["seats"][1:]:   # each opponent's label at the table's size, 4
        e = strength("tapeo", s["bot"], 4)
        assert (s["label"], s["rating"]) == ((e["label"], round(e["rating"], 1)) if e else ("unrated", None))
    assert client.get(f"/api/games/{gid}/record").status_code == 409    # not over yet
    end = play_out(client, gid)
    assert end["step"] == 21 and end["choices"] == []                  # 3 rounds x 7 decisions
    assert len(end["table"]["scoring"]) == 3 and "=== Game over ===" in end["log"]
    r = client.get(f"/api/games/{gid}/record")
    assert r.status_code == 200 and "attachment" in r.headers["content-disposition"]
    rec = r.json()
    assert rec["players"] == ["human", "ppo", "expert", "greedy"] and rec["seed"] == 3
    finals = [row["final"] for row in end["table"]["result"]["rows"]]
    assert tapeo_env.replay(rec).final_scores.tolist() == finals


def test_robada_first_view_and_whole_game_with_record(client):
    gid = new_game(client, game="robada", players=2, seed=5, opponents=["greedy"])
    v = client.get(f"/api/games/{gid}").json()
    # R6: 4 loose cards, then 3 to each player: 40 - 4 - 2 * 3 = 30 left in the deck; seat 0 plays first
    t = v["table"]
    assert (len(t["loose"]), len(t["hand"]), t["deck"], t["to_act"]) == (4, 3, 30, 0)
    assert [p["in_hand"] for p in t["piles"]] == [3, 3] and t["run"] is None
    end = play_out(client, gid)
    rec = client.get(f"/api/games/{gid}/record").json()
    assert rec["players"] == ["human", "greedy"]
    points = [row["points"] for row in end["table"]["result"]["rows"]]
    assert robada_env.replay(rec).points == points
    # every card ends in a pile or loose (R7): the pile sizes add up to 40 minus the loose ones left
    assert sum(row["cards"] for row in end["table"]["result"]["rows"]) + len(end["table"]["loose"]) == 40


def test_robada_person_in_second_seat_sees_the_computer_turn_first(client):
    gid = new_game(client, game="robada", players=3, seat=1, seed=2, opponents=["random"])
    v = client.get(f"/api/games/{gid}").json()
    # seat 0 (a bot) played its whole first turn before the person's first decision
    assert v["table"]["to_act"] == 1 and "--- player_0 (random)'s turn ---" in v["log"]
    assert any(line.startswith("  player_0 (random) ") for line in v["log"])


def test_refusals_change_nothing(client):
    gid = new_game(client, game="tapeo", players=2, seed=1, opponents=["random"])
    v0 = client.get(f"/api/games/{gid}").json()
    legal = [c["action"] for c in v0["choices"]]
    illegal = next(a for a in range(10) if a not in legal)
    # an illegal action: 422 naming the legal ones
    r = client.post(f"/api/games/{gid}/actions", json={"step": 0, "action": illegal})
    assert r.status_code == 422 and sorted(x["action"] for x in r.json()["legal"]) == sorted(legal)
    assert str(legal) in r.json()["error"]
    for bad in ({"step": 0, "action": "tortilla"}, {"step": 0, "action": True}, {"step": "0", "action": legal[0]},
                {"step": 0}):
        assert client.post(f"/api/games/{gid}/actions", json=bad).status_code == 422
    r = client.post(f"/api/games/{gid}/actions", content=b"{not json", headers={"Content-Type": "application/json"})
    # the parser's reason and where, never the text: '{' then 'n' where a key's '"' must be (column 2)
    assert (r.status_code, r.json()["error"]) == (400, "the body is not JSON: Expecting property name enclosed in "
                                                       "double quotes at line 1 column 2")
    assert client.get(f"/api/games/{gid}").json() == v0
    # a request played once, then replayed: the replay is 409 and changes nothing
    body = {"step": 0, "action": legal[0]}
    v1 = client.post(f"/api/games/{gid}/actions", json=body).json()
    assert v1["step"] == 1
    r = client.post(f"/api/games/{gid}/actions", json=body)
    assert r.status_code == 409 and r.json()["step"] == 1
    assert client.post(f"/api/games/{gid}/actions", json={"step": 7, "action": legal[0]}).status_code == 409
    assert client.get(f"/api/games/{gid}").json() == v1                  # a reload sees the same state
    # unknown games: 404 for the API and the page
    for url in ("/api/games/nope", "/game/nope", "/api/games/nope/record"):
        assert client.get(url).status_code == 404
    assert client.post("/api/games/nope/actions", json=body).status_code == 404
    # a finished game refuses actions with 409
    end = play_out(client, gid)
    assert client.post(f"/api/games/{gid}/actions", json={"step": end["step"], "action": 0}).status_code == 409


@pytest.mark.parametrize("body, legal", [
    ({"game": "poker", "players": 2}, "['robada', 'tapeo']"),
    ({"game": "tapeo", "players": 7}, "[2, 3, 4, 5, 6]"),
    ({"game": "robada", "players": 5}, "[2, 3, 4]"),
    ({"game": "tapeo", "players": 2, "seat": 2}, "0, 1"),
    ({"game": "tapeo", "players": 2, "seed": -1}, "0..2**64-1"),
    ({"game": "tapeo", "players": 3, "opponents": ["nobody"]}, "registered bots"),
    ({"game": "robada", "players": 3, "opponents": ["ppo_v1"]}, "[2, 4]"),
    ({"game": "tapeo", "players": 2, "colour": "red"}, "legal keys"),
    # each field's JSON type (strict pydantic models, hod.apps.web.app.NewGameBody)
    ({"game": ["tapeo"], "players": 2}, "game: Input should be 'robada' or 'tapeo'"),
    ({"game": "tapeo", "players": "2"}, "players: Input should be a valid integer"),
    ({"game": "tapeo", "players": True}, "players: Input should be a valid integer"),
    ({"game": "tapeo", "players": 2, "seat": 0.0}, "seat: Input should be a valid integer"),
    ({"game": "tapeo", "players": 2, "seed": "7"}, "legal values: null, or an int in 0..2**64-1"),
    ({"game": "tapeo", "players": 2, "opponents": "random"}, "opponents: Input should be a valid list"),
    ({"game": "tapeo", "players": 2, "opponents": [1]}, "opponents.0: Input should be a valid string"),
    # names are never split at commas in the API (the command line's --opponents splits them)
    ({"game": "tapeo", "players": 3, "opponents": ["expert,greedy"]},
     "opponents.0: not a tapeo bot (one name per item: a name holds no comma); registered bots: ["),
    # the count, worded for the API: 1 name or one per computer seat, with the bot names
    ({"game": "tapeo", "players": 2, "opponents": ["random", "greedy"]},
     "opponents takes 1 name (the one opponent seat), got 2: ['random', 'greedy']; registered bots: ["),
    ({"game": "tapeo", "players": 4, "opponents": ["random", "greedy"]},
     "opponents takes 1 name (every opponent seat) or 3 (one per opponent seat), got 2"),
])
def test_new_game_refusals_name_the_legal_values(client, body, legal):
    games = len(client.store)
    r = client.post("/api/games", json=body)
    assert r.status_code == 422 and legal in r.json()["error"], r.text
    assert len(client.store) == games


def test_games_are_isolated(client):
    a = new_game(client, game="tapeo", players=3, seed=9, opponents=["random"])
    b = new_game(client, game="tapeo", players=3, seed=9, opponents=["random"])
    assert a != b
    va, vb = (client.get(f"/api/games/{g}").json() for g in (a, b))
    assert va["table"] == vb["table"]                                     # the same deal
    client.post(f"/api/games/{a}/actions", json={"step": 0, "action": va["choices"][0]["action"]})
    assert client.get(f"/api/games/{b}").json() == vb                    # b did not move
    assert client.get(f"/api/games/{a}").json()["step"] == 1


def _views_under_beliefs(client, game, players, belief, seed):
    """Play a game; at every decision the view must be the same for any state the person's seat
    cannot tell from the real one (the game's sample_consistent_state): no hidden card leaks."""
    gid = new_game(client, game=game, players=players, seat=1, seed=seed, opponents=["random"])
    g = client.store.get(gid)
    rng = np.random.default_rng(0)
    decisions = 0
    while not g.over():
        real = g.session.env.game_state
        text = json.dumps(g.view())
        for _ in range(2):
            g.session.env.game_state = belief(real, 1, rng)
            assert json.dumps(g.view()) == text
        g.session.env.game_state = real
        g.play(g.step, g.view()["choices"][-1]["action"])
        decisions += 1
    return decisions


def test_tapeo_views_hide_unseen_hands(client):
    assert _views_under_beliefs(client, "tapeo", 4, tapeo_belief, 11) == 21


def test_robada_views_hide_other_hands_and_the_deck(client):
    assert _views_under_beliefs(client, "robada", 3, robada_belief, 5) >= 12
    # and no card of another hand or of the deck is named in the view
    gid = new_game(client, game="robada", players=2, seed=8, opponents=["random"])
    g = client.store.get(gid)
    from hod.apps.play_robada import carta
    while not g.over():
        s, text = g.session.state, json.dumps(g.view())
        for c in list(s.hands[1]) + list(s.deck):
            assert carta(c) not in text
            assert not re.search(rf'"key": "{re.escape(carta(c).lower().replace(" de ", "-"))}"', text)
        g.play(g.step, g.view()["choices"][0]["action"])


def test_command_line_help_and_bad_port(capsys):
    from hod.apps.web.__main__ import main

    with pytest.raises(SystemExit) as e:
        main(["--help"])
    assert e.value.code == 0 and "--port" in capsys.readouterr().out
    with pytest.raises(SystemExit) as e:
        main(["--port", "70000"])
    assert e.value.code == 2 and "0..65535" in capsys.readouterr().err
    for bad in ("board.lan:8000", "b*ard.lan", "board lan"):               # a port, a misplaced *, a space
        with pytest.raises(SystemExit) as e:
            main(["--allowed-host", bad])
        err = capsys.readouterr().err.strip().splitlines()
        assert e.value.code == 2 and err[-1] == (
            "python -m hod.apps.web: error: --host/--allowed-host: a served host must be a host name or IP address "
            "without a port (board.lan, 192.168.1.20, ::1), *.example.com (every name under example.com) or * "
            "(any name)")
    import socket

    with socket.create_server(("127.0.0.1", 0)) as taken:         # a port in use: exit 2 and why
        port = taken.getsockname()[1]
        assert main(["--port", str(port)]) == 2
        assert f"cannot listen on 127.0.0.1:{port}" in capsys.readouterr().err


def test_command_prints_the_address_and_serves(tmp_path):
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-m", "hod.apps.web", "--port", "0", "--allowed-host", "board.lan"],
                            stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        m = re.match(r"House Of Decks: play at (http://127\.0\.0\.1:(\d+)/) ", line)
        assert m, line
        assert "Deal right now" in httpx.get(m.group(1), timeout=30).text
        # the Host names served: the address's, localhost, and the --allowed-host one; no other
        port = m.group(2)
        for host, status in (("localhost", 200), ("board.lan", 200), ("other.lan", 400)):
            assert httpx.get(m.group(1), headers={"Host": f"{host}:{port}"}, timeout=30).status_code == status, host
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_a_drawn_seed_is_kept_back_until_the_end(client):
    """The seed fixes the deal (every hand), so a seed the server drew is not shown during the
    game; a seed the person chose is."""
    gid = new_game(client, game="robada", players=2, opponents=["random"])
    v = client.get(f"/api/games/{gid}").json()
    seed = client.store.get(gid).table.seed
    assert v["seed"] is None and not any(f"seed {seed}" in line for line in v["log"])
    end = play_out(client, gid)
    assert end["seed"] == seed and client.get(f"/api/games/{gid}/record").json()["seed"] == seed
    chosen = new_game(client, game="robada", players=2, opponents=["random"], seed=12)
    v = client.get(f"/api/games/{chosen}").json()
    assert v["seed"] == 12 and "Ronda Robada, 2 players, seed 12. You are player_0; player_1 (random)." in v["log"]


def test_robada_view_tells_every_computer_step_since_the_last_choice(client):
    gid = new_game(client, game="robada", players=2, seed=5, opponents=["greedy"])
    v = client.get(f"/api/games/{gid}").json()
    drop = next(c for c in v["choices"] if c["name"].startswith("drop"))
    v = client.post(f"/api/games/{gid}/actions", json={"step": 0, "action": drop["action"]}).json()
    # your drop ends your turn (R4), then the computer's whole turn: its header and each step
    assert v["recent"][0] == "--- Your turn ---" and v["recent"][1].startswith("  You drop ")
    assert v["recent"][2] == "--- player_1 (greedy)'s turn ---" and len(v["recent"]) >= 4
    assert all(line.startswith("  player_1 (greedy) ") or line.startswith("  New deal")
               for line in v["recent"][3:])
