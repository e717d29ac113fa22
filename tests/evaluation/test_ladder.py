"""The strength ladder (evaluation/ladder.py, python -m hod.benchmarks.ladder), the shipped
measured strengths (agents/strength.json, hod.agents.strength) and their labels in the play apps."""
from __future__ import annotations

import io
import json

import numpy as np
import pytest

from hod import agents
from hod.agents.strength import LABELS, STRENGTH_FILE, label_for, load_strengths, measured_sizes, separate_labels, strength
from hod.apps import play
from hod.apps.play_robada import main as robada_main
from hod.apps.play_tapeo import main as tapeo_main
from hod.benchmarks.ladder import main as ladder_main
from hod.core.errors import ConfigError
from hod.evaluation.ladder import label_overlaps, ladder_entries, run_ladder, table_plan


@pytest.fixture(scope="module")
def tiny():
    return run_ladder("tapeo", players=2, games=8, seed=0, bots=["random", "greedy", "expert"])


def test_tiny_ladder_ratings_are_consistent(tiny):
    assert sorted(tiny.labels) == ["expert", "greedy", "random"]
    assert tiny.row("expert")["mu"] > tiny.row("random")["mu"]
    mus = [r["mu"] for r in tiny.rows]
    assert mus == sorted(mus, reverse=True)
    for r in tiny.rows:
        assert r["games"] == 16          # two opponents, 8 games each
        assert r["low"] == pytest.approx(r["mu"] - 2 * r["sigma"])
        assert r["high"] == pytest.approx(r["mu"] + 2 * r["sigma"])
    assert tiny.tables == [["random", "greedy"], ["random", "expert"], ["greedy", "expert"]]   # every pair, pool order


def test_matrix_is_antisymmetric_with_ties_shared(tiny):
    n = len(tiny.labels)
    for a in range(n):
        assert tiny.matrix[a][a] is None
        for b in range(n):
            if a != b:
                assert tiny.matrix[a][b] + tiny.matrix[b][a] == pytest.approx(1.0)
                assert tiny.matrix_games[a][b] == 8
    # with two players the matrix is the win rate: the row's overall win rate is the mean of its row
    for a, label in enumerate(tiny.labels):
        assert tiny.row(label)["win_rate"] == pytest.approx(np.mean([v for v in tiny.matrix[a] if v is not None]))


def test_labels_follow_the_documented_rule(tiny):
    mu_random, mu_best = tiny.row("random")["mu"], tiny.rows[0]["mu"]
    for r in tiny.rows:   # step 1
        assert r["threshold_level"] == label_for(r["mu"], mu_random, mu_best)
    assert tiny.row("random")["threshold_level"] == "easy" and tiny.rows[0]["threshold_level"] == "hard"
    # step 2 (8 games a pair: the intervals overlap, and the labels merge)
    assert [r["level"] for r in tiny.rows] == separate_labels(
        [r["mu"] for r in tiny.rows], [r["low"] for r in tiny.rows], [r["high"] for r in tiny.rows],
        [r["threshold_level"] for r in tiny.rows])
    md = tiny.to_markdown()
    moved = [r for r in tiny.rows if r["threshold_level"] != r["level"]]
    for r in moved:
        assert f"{r['label']} ({r['threshold_level']} -> {r['level']})" in md
    assert ("none moved." in md) == (not moved)
    assert label_for(0.0, 0.0, 3.0) == "easy"
    assert label_for(0.99, 0.0, 3.0) == "easy"
    assert label_for(1.0, 0.0, 3.0) == "medium"
    assert label_for(1.99, 0.0, 3.0) == "medium"
    assert label_for(2.0, 0.0, 3.0) == "hard"
    assert label_for(-5.0, 0.0, 3.0) == "easy"
    assert label_for(1.0, 1.0, 1.0) == "easy"   # nobody beats random: nothing is harder than easy


def test_label_overlaps_worked_by_hand():
    names = ["a", "b", "c", "d"]
    mus, lows, highs = [30.0, 20.0, 10.0, 0.0], [26.0, 17.0, 8.0, -3.0], [34.0, 23.0, 17.0, 3.0]
    first = ["hard", "medium", "easy", "easy"]
    easy_medium, medium_hard = label_overlaps(names, mus, lows, highs, first)
    # easy's strongest is c (10 > 0); its high 17 reaches b's low 17 (equal counts, as in separate_labels)
    assert easy_medium == {"lower": "easy", "upper": "medium", "lower_bot": "c", "upper_bot": "b",
                           "lower_interval": [8.0, 17.0], "upper_interval": [17.0, 23.0], "gap": 10.0,
                           "overlap": True, "games_factor": pytest.approx(0.5625)}   # widths 9 + 6 = 15; (15/20)^2
    # b's high 23 < a's low 26: apart; widths 6 + 8 = 14, gap 10: (14/20)^2 = 0.49
    assert medium_hard["overlap"] is False and medium_hard["games_factor"] == pytest.approx(0.49)
    assert (medium_hard["lower_bot"], medium_hard["upper_bot"]) == ("b", "a")
    # the check says what step 2 does: the overlapping c is merged into medium, nothing else moves
    assert separate_labels(mus, lows, highs, first) == ["hard", "medium", "medium", "easy"]
    # an empty label is skipped (easy is compared with hard); equal ratings cannot separate
    (p,) = label_overlaps(["x", "y"], [5.0, 5.0], [4.0, 4.5], [6.0, 5.5], ["easy", "hard"])
    assert (p["lower"], p["upper"], p["overlap"], p["gap"], p["games_factor"]) == ("easy", "hard", True, 0.0,
                                                                                   float("inf"))
    assert label_overlaps(["x", "y"], [5.0, 1.0], [4.0, 0.0], [6.0, 2.0], ["easy", "easy"]) == []
    with pytest.raises(ConfigError, match="differ in length"):
        label_overlaps(["x"], [1.0, 2.0], [0.0], [2.0], ["easy"])
    with pytest.raises(ConfigError, match=r"legal values: \['easy', 'medium', 'hard'\]"):
        label_overlaps(["x"], [1.0], [0.0], [2.0], ["expert"])


def test_ladder_reports_overlapping_labels(tiny):
    pairs = tiny.label_overlaps()
    moved = any(r["threshold_level"] != r["level"] for r in tiny.rows)
    assert pairs and any(p["overlap"] for p in pairs) == moved   # no overlap exactly when step 2 moves no bot
    md = tiny.to_markdown()
    assert "Neighbouring labels before the merge" in md
    for p in pairs:
        assert f"{p['lower']} ({p['lower_bot']} [{p['lower_interval'][0]:.2f}" in md
    assert md.count("overlap (at least") == sum(p["overlap"] for p in pairs)


def test_outputs(tiny, tmp_path):
    md = tiny.to_markdown()
    assert "| rank | bot | rating (mu) |" in md and "expert" in md
    tiny.save_json(tmp_path / "l.json")
    tiny.save_png(tmp_path / "l.png")
    d = json.loads((tmp_path / "l.json").read_text())
    assert d["labels"] == tiny.labels and len(d["matrix"]) == 3
    assert (tmp_path / "l.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    e = tiny.strength_entries()
    assert set(e["expert"]) == {"rating", "sigma", "interval", "label", "games", "players", "date", "command",
                                "rating_model"}
    # the model the ratings were computed with, in words: no skill drift (tau 0), 16 game orders
    assert e["expert"]["rating_model"] == "openskill PlackettLuce, tau 0, averaged over 16 game orders"


def test_pool_has_two_search_budgets_and_respects_model_cards():
    tapeo = {e.label: e for e in ladder_entries("tapeo", 2)}
    assert tapeo["search_d8"].options == {"determinizations": 8} and tapeo["search"].options == {}
    robada = {e.label: e for e in ladder_entries("robada", 2)}
    assert robada["rollout_d8"].name == "rollout" and "rollout" in robada
    for game in ("tapeo", "robada"):
        card = json.loads(agents.registry.shipped_factories(game)["ppo"].args[0].with_suffix(".json").read_text())
        for n in (2, 3, 4):
            assert ("ppo" in {e.label for e in ladder_entries(game, n)}) == (n in card["player_counts"])


def test_four_player_tables_are_balanced():
    plan = table_plan(5, 4, 10, seed=0)
    assert all(len(set(t)) == 4 for t in plan)
    counts = np.bincount([i for t in plan for i in t], minlength=5)
    assert counts.max() - counts.min() <= 1
    res = run_ladder("tapeo", players=4, games=4, seed=0, tables=2, bots=["random", "greedy", "expert", "ranking"],
                     seating="cyclic")
    n = len(res.labels)
    for a in range(n):
        for b in range(n):
            if a != b:
                assert res.matrix[a][b] + res.matrix[b][a] == pytest.approx(1.0)


def test_bad_options_name_the_legal_values(capsys):
    with pytest.raises(ConfigError, match=r"legal values for 'robada': \[2, 3, 4\]"):
        ladder_entries("robada", 5)
    with pytest.raises(ConfigError, match="legal values: \\['expert'"):
        run_ladder("tapeo", bots=["random", "nobody"])
    with pytest.raises(ConfigError, match=r"legal: tables=None \(leave it out\)"):
        table_plan(3, 2, 4, seed=0)
    with pytest.raises(ConfigError, match="positive int"):
        run_ladder("tapeo", games=0, bots=["random", "greedy"])
    assert ladder_main(["--game", "chess"]) == 2
    assert "legal values" in capsys.readouterr().err
    assert ladder_main(["--game", "tapeo", "--players", "9"]) == 2
    assert "[2, 3, 4, 5, 6]" in capsys.readouterr().err
    assert ladder_main(["--game", "robada", "--bots", "random", "nobody"]) == 2
    assert "rollout_d8" in capsys.readouterr().err
    assert ladder_main(["--game", "robada", "--list-bots"]) == 0
    assert "rollout_d8 rollout" in capsys.readouterr().out


def test_cli_names_the_legal_players_and_tables(capsys, tmp_path):
    with pytest.raises(SystemExit) as e:
        ladder_main(["--game", "tapeo", "--players", "x"])
    assert e.value.code == 2
    assert "--players: invalid value 'x'; legal values: a table size of --game: kuhn [2], robada [2, 3, 4], " \
           "tapeo [2, 3, 4, 5, 6]" in capsys.readouterr().err
    assert ladder_main(["--game", "tapeo", "--tables", "3", "--games", "2", "--bots", "random", "greedy",
                        "--no-progress", "--out", str(tmp_path / "o" / "l")]) == 2
    assert "--tables 3: with 2 players the ladder plays every pair; legal: leave out --tables" in \
        capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("row, bad", [
    ({"label": "nosuchbot", "name": "nosuchbot"}, "'label': 'nosuchbot'"),
    ({"options": {"determinizations": -5}}, "'options': {'determinizations': -5}"),
    ({"name": "expert"}, "'name': 'expert'"),
])
def test_record_refuses_rows_that_are_not_bots_of_the_pool(tiny, row, bad, tmp_path, monkeypatch, capsys):
    """--record writes each row under its label: a row that the ladder could not have played (an
    unregistered bot, options of its own) is refused, with nothing written."""
    from hod.benchmarks import ladder as ladder_cli
    strength_file = tmp_path / "strength.json"   # never the shipped agents/strength.json
    monkeypatch.setattr(ladder_cli, "STRENGTH_FILE", strength_file)
    data = tiny.to_dict()
    data["rows"] = [dict(r, **row) if r["label"] == "random" else r for r in data["rows"]]
    saved = tmp_path / "l2.json"
    saved.write_text(json.dumps(data))
    assert ladder_main(["--game", "tapeo", "--record", str(saved), "--out", str(tmp_path / "again")]) == 2
    err = capsys.readouterr().err
    assert bad in err and "is not a bot of the 2-player pool of 'tapeo', so it cannot be recorded; legal rows:" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["l2.json"]   # no strength file, no outputs
    saved.write_text(json.dumps(tiny.to_dict()))   # the result as played is recorded
    assert ladder_main(["--game", "tapeo", "--record", str(saved)]) == 0
    assert sorted(load_strengths(strength_file)["tapeo"]) == ["expert", "greedy", "random"]


def test_cli_writes_outputs(tmp_path, capsys):
    out = tmp_path / "sub" / "l"
    assert ladder_main(["--game", "robada", "--games", "2", "--bots", "random", "greedy", "--no-progress",
                        "--out", str(out)]) == 0
    assert "| rank | bot |" in capsys.readouterr().out
    for ext in (".md", ".json", ".png"):
        assert (tmp_path / "sub" / ("l" + ext)).is_file()
    assert json.loads((tmp_path / "sub" / "l.json").read_text())["games_per_table"] == 2


def test_shipped_strengths_are_read_and_follow_the_rule():
    data = load_strengths()
    assert STRENGTH_FILE.is_file() and set(data) >= {"tapeo", "robada"}
    for game, bots in data.items():
        for n in measured_sizes(game):
            at = {b: sizes[n] for b, sizes in bots.items() if n in sizes}
            assert agents.strength(game, "expert", n) == at["expert"]
            names = list(at)
            mus = [at[b]["rating"] for b in names]
            # the rule, step 1 then step 2, on the size's own ladder (random's rating, the best's)
            first = [label_for(m, at["random"]["rating"], max(mus)) for m in mus]
            lows, highs = [at[b]["interval"][0] for b in names], [at[b]["interval"][1] for b in names]
            assert [at[b]["label"] for b in names] == separate_labels(mus, lows, highs, first)
            for b, e in at.items():
                assert e["label"] in LABELS and e["players"] == n
                assert e["interval"][0] < e["rating"] < e["interval"][1]
                assert e["games"] > 0 and e["command"].startswith("python -m hod.benchmarks.ladder")
                assert f"--players {n}" in e["command"]
        # every bot the registry makes at 2 players is measured there
        assert {e.label for e in ladder_entries(game, 2)} <= {b for b, s in bots.items() if 2 in s}
    assert agents.strength("tapeo", "no_such_bot", 2) is None
    with pytest.raises(ConfigError, match="legal values"):
        agents.strength("chess", "expert", 2)


def test_missing_file_means_unrated(tmp_path):
    assert strength("tapeo", "expert", 2, path=tmp_path / "none.json") is None


def test_play_help_lists_labels_at_the_default_size(capsys):
    ap = play.build_parser("tapeo", "play", "", 2, 6, 4)
    text = " ".join(ap.format_help().split())
    assert "label at 4 players" in text
    assert f"expert ({play.strength_label('tapeo', 'expert', 4)})" in text


@pytest.mark.parametrize("main,game", [(tapeo_main, "tapeo"), (robada_main, "robada")])
def test_play_start_shows_the_chosen_opponents_labels(main, game):
    out = io.StringIO()
    code = main(["--players", "3", "--opponents", "random,expert", "--seed", "1", "--no-record"],
                stdin=io.StringIO("q\n"), stdout=out)
    assert code == 0
    text = out.getvalue()
    assert "Opponents' strength at 3 players" in text
    for seat, name in ((1, "random"), (2, "expert")):
        entry = agents.strength(game, name, 3)
        shown = f"{entry['label']} (rating {entry['rating']:.1f})" if entry else "unrated"
        assert f"player_{seat} {name}: {shown}" in text
