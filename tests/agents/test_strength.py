"""The strength file per table size (agents/strength.py, format 2; format 1 still read), the label
rule's second step (separate_labels) and recording a ladder result (--record / --update-strength),
all on hand-built files."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading

import pytest
from filelock import FileLock

from hod.agents.strength import (FORMAT_VERSION, dropped_labels, load_strengths, measured_sizes, record_strengths,
                                 separate_labels, strength, strength_note)
from hod.benchmarks import ladder as ladder_cli
from hod.core.errors import ConfigError


def _entry(rating, label, players, sigma=1.0):
    return {"rating": rating, "sigma": sigma, "interval": [rating - 2 * sigma, rating + 2 * sigma], "label": label,
            "games": 10, "players": players, "date": "2026-12-02", "command": "test"}


# ---- separate_labels: step 2 of the rule ------------------------------------------------------
def _sep(mus, half, labels):
    return separate_labels(mus, [m - half for m in mus], [m + half for m in mus], labels)


def test_separated_labels_are_kept():
    # intervals mu +- 4: hard's top 30 has low 26 > medium's top 20 high 24; medium's low 16 > easy's top 10 high 14
    assert _sep([30, 20, 10, 0], 4, ["hard", "medium", "easy", "easy"]) == ["hard", "medium", "easy", "easy"]


def test_a_bot_overlapping_the_label_above_is_merged_into_it():
    # medium's top 25 has high 29 >= 26, the low of hard's top 30: it becomes hard; medium is then empty, so
    # easy's neighbour is hard: easy's top 10 has high 14 < 26, kept
    assert _sep([30, 25, 10, 0], 4, ["hard", "medium", "easy", "easy"]) == ["hard", "hard", "easy", "easy"]
    # +- 2: 27 reaches 28 (high 29) -> hard; then medium's top is 24, high 26 < 28: kept
    assert _sep([30, 27, 24, 0], 2, ["hard", "medium", "medium", "easy"]) == ["hard", "hard", "medium", "easy"]
    # +- 2: medium's top 20 (high 22 < 28) stays; easy's top 17 has high 19 >= 18 (the low of 20) -> medium;
    # then easy's top is 0, high 2 < 18
    assert _sep([30, 20, 17, 0], 2, ["hard", "medium", "easy", "easy"]) == ["hard", "medium", "medium", "easy"]
    # the test is on the strongest bot of each label, whatever the order of the bots (same as the first, shuffled)
    assert _sep([10, 0, 25, 30], 4, ["easy", "easy", "medium", "hard"]) == ["easy", "easy", "hard", "hard"]


def test_touching_intervals_overlap():
    # medium's top 26, +- 2: high 28 == low 28 of hard's 30 -> merged (">= low")
    assert _sep([30, 26], 2, ["hard", "medium"]) == ["hard", "hard"]
    assert _sep([30, 25.9], 2, ["hard", "medium"]) == ["hard", "medium"]


def test_separate_labels_refuses_bad_input():
    with pytest.raises(ConfigError, match="differ in length"):
        separate_labels([1.0], [0.0], [2.0, 3.0], ["easy"])
    with pytest.raises(ConfigError, match=r"\['insane'\]; legal values: \['easy', 'medium', 'hard'\]"):
        separate_labels([1.0], [0.0], [2.0], ["insane"])


# ---- the file ---------------------------------------------------------------------------------
def test_record_keeps_the_other_sizes_and_replaces_its_own(tmp_path):
    path = tmp_path / "strength.json"
    record_strengths("robada", 3, {"expert": _entry(30, "hard", 3), "random": _entry(5, "easy", 3)}, path)
    record_strengths("robada", 2, {"expert": _entry(27, "hard", 2), "greedy": _entry(21, "medium", 2)}, path)
    record_strengths("tapeo", 4, {"search": _entry(40, "hard", 4)}, path)
    raw = json.loads(path.read_text())
    assert raw["version"] == FORMAT_VERSION == 2
    assert raw["strengths"]["robada"]["expert"] == {"2": _entry(27, "hard", 2), "3": _entry(30, "hard", 3)}
    assert measured_sizes("robada", path) == [2, 3] and measured_sizes("tapeo", path) == [4]
    # a new 3-player run replaces the 3-player entries (random is not in it: its 3-player entry goes, and
    # with it the bot, which had no other size); the 2-player entries stay
    data = record_strengths("robada", 3, {"expert": _entry(31, "hard", 3), "greedy": _entry(12, "easy", 3)}, path)
    assert data["robada"] == {"expert": {2: _entry(27, "hard", 2), 3: _entry(31, "hard", 3)},
                              "greedy": {2: _entry(21, "medium", 2), 3: _entry(12, "easy", 3)}}
    assert data["tapeo"] == {"search": {4: _entry(40, "hard", 4)}}
    assert strength("robada", "random", 3, path) is None
    assert strength("robada", "greedy", 3, path)["label"] == "easy"
    assert strength("robada", "greedy", 2, path)["label"] == "medium"
    assert strength_note("robada", "expert", 3, path) == "hard, rating 31.0 +- 2.0"   # 2 sigma = 2.0
    assert strength_note("robada", "expert", 4, path) == "unrated"
    assert not list(tmp_path.glob("*.tmp*"))   # written atomically: no temporary file left


def test_record_keeps_what_another_process_recorded_since_this_one_read_the_file(tmp_path):
    """Two ladders side by side: this process reads the file (a lookup caches it), another process
    records the 3-player entries, then this one records the 2-player ones: both sizes are kept."""
    path = tmp_path / "strength.json"
    record_strengths("tapeo", 2, {"search": _entry(40, "hard", 2)}, path)
    assert measured_sizes("tapeo", path) == [2]                       # read (and cached) here
    other = textwrap.dedent(f"""
        from hod.agents.strength import record_strengths
        record_strengths("tapeo", 3, {{"ppo": {_entry(33, "hard", 3)!r}}}, {str(path)!r})
    """)
    subprocess.run([sys.executable, "-c", other], check=True)
    record_strengths("tapeo", 2, {"search": _entry(41, "hard", 2)}, path)
    raw = json.loads(path.read_text())["strengths"]["tapeo"]
    assert raw == {"search": {"2": _entry(41, "hard", 2)}, "ppo": {"3": _entry(33, "hard", 3)}}


def test_keep_labelled_refuses_under_the_lock_what_another_process_labelled_since(tmp_path):
    """A ladder checked its pool at its start (ppo and search labelled at 2 players); meanwhile
    another process labels expert too. Recording the pool with keep_labelled is refused, naming
    expert, and the file is unchanged; entries that include expert are recorded."""
    path = tmp_path / "strength.json"
    record_strengths("tapeo", 2, {"search": _entry(40, "hard", 2), "ppo": _entry(35, "hard", 2)}, path)
    assert dropped_labels(load_strengths(path)["tapeo"], 2, ["search", "ppo"]) == []
    record_strengths("tapeo", 2, {"search": _entry(40, "hard", 2), "ppo": _entry(35, "hard", 2),
                                  "expert": _entry(20, "medium", 2)}, path)     # the other process
    before = path.read_text()
    with pytest.raises(ConfigError, match=r"leave out \['expert'\].*nothing was written"):
        record_strengths("tapeo", 2, {"search": _entry(41, "hard", 2), "ppo": _entry(34, "hard", 2)}, path,
                         keep_labelled=True)
    assert path.read_text() == before
    data = record_strengths("tapeo", 2, {"search": _entry(41, "hard", 2), "ppo": _entry(34, "hard", 2),
                                         "expert": _entry(21, "medium", 2)}, path, keep_labelled=True)
    assert data["tapeo"]["expert"] == {2: _entry(21, "medium", 2)}
    # another size's labels do not count: a 3-player entry of greedy is not dropped by a 2-player record
    record_strengths("tapeo", 3, {"greedy": _entry(10, "easy", 3)}, path)
    assert dropped_labels(load_strengths(path)["tapeo"], 2, ["search", "ppo", "expert"]) == []


def test_record_waits_for_the_lock_another_writer_holds(tmp_path):
    """While another process holds strength.json.lock (between its read and its write), a record
    waits, then reads the file as the other left it: both writers' sizes are kept."""
    path = tmp_path / "strength.json"
    record_strengths("tapeo", 2, {"search": _entry(40, "hard", 2)}, path)
    lock = FileLock(f"{path}.lock")
    lock.acquire()
    done = threading.Event()
    writer = threading.Thread(target=lambda: (record_strengths("tapeo", 3, {"ppo": _entry(33, "hard", 3)}, path),
                                              done.set()))
    writer.start()
    assert not done.wait(0.5)                    # it waits for the lock
    # the holder's write, made while the other one waits
    raw = json.loads(path.read_text())
    raw["strengths"]["tapeo"]["expert"] = {"2": _entry(20, "medium", 2)}
    path.write_text(json.dumps(raw))
    lock.release()
    writer.join(10)
    assert done.is_set()
    raw = json.loads(path.read_text())["strengths"]["tapeo"]
    assert raw == {"search": {"2": _entry(40, "hard", 2)}, "expert": {"2": _entry(20, "medium", 2)},
                   "ppo": {"3": _entry(33, "hard", 3)}}


def test_record_refuses_when_the_lock_is_held_too_long(tmp_path, monkeypatch):
    import importlib

    strength_mod = importlib.import_module("hod.agents.strength")
    path = tmp_path / "strength.json"
    record_strengths("tapeo", 2, {"search": _entry(40, "hard", 2)}, path)
    before = path.read_text()
    monkeypatch.setattr(strength_mod, "LOCK_TIMEOUT_S", 0.2)
    with FileLock(f"{path}.lock"):
        with pytest.raises(ConfigError, match="another process has held .*strength.json.lock for over 0.2 s"):
            record_strengths("tapeo", 3, {"ppo": _entry(33, "hard", 3)}, path)
    assert path.read_text() == before


def test_format_1_is_read_as_its_sizes(tmp_path):
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"tapeo": {"expert": _entry(15, "medium", 2), "search": _entry(40, "hard", 4)}}))
    assert load_strengths(path) == {"tapeo": {"expert": {2: _entry(15, "medium", 2)},
                                              "search": {4: _entry(40, "hard", 4)}}}
    assert strength("tapeo", "search", 4, path)["rating"] == 40 and strength("tapeo", "search", 2, path) is None
    # recording upgrades it to format 2, the old entries kept
    record_strengths("tapeo", 3, {"expert": _entry(20, "hard", 3)}, path)
    raw = json.loads(path.read_text())
    assert raw["version"] == 2 and raw["strengths"]["tapeo"]["expert"] == {"2": _entry(15, "medium", 2),
                                                                           "3": _entry(20, "hard", 3)}


@pytest.mark.parametrize("content,message", [
    ({"version": 3, "strengths": {}}, r"format version 3; legal values: 2"),
    ({"version": 2, "tapeo": {}}, r"expected \{\"version\": 2, \"strengths\""),
    ({"version": 2, "strengths": {"chess": {}}}, r"unknown game 'chess'; legal values: \['kuhn', 'robada', 'tapeo'"),      # + games other tests declare
    ({"version": 2, "strengths": {"robada": {"expert": {"5": _entry(1, "easy", 5)}}}},
     r"robada.expert: table size '5'; legal values for 'robada': \['2', '3', '4'\]"),
    ({"version": 2, "strengths": {"tapeo": {"expert": {"3": _entry(1, "easy", 4)}}}},
     r"tapeo.expert.3: 'players' is 4 in the entry of the 3-player table; legal value: 3"),
    ({"version": 2, "strengths": {"tapeo": {"expert": {"3": _entry(1, "insane", 3)}}}},
     r"'label' is 'insane'; legal values: \['easy', 'medium', 'hard'\]"),
    ({"version": 2, "strengths": {"tapeo": {"expert": {"3": {"rating": 1}}}}}, r"missing fields \['sigma', "),
    ({"version": 2, "strengths": {"tapeo": {"expert": {"3": {**_entry(1, "easy", 3), "interval": [3, 1]}}}}},
     r"'interval' is \[3, 1\]; legal values: \[low, high\]"),
    ({"version": 2, "strengths": {"tapeo": {"expert": {"3": {**_entry(1, "easy", 3), "rating_model": 0}}}}},
     r"tapeo.expert.3: 'rating_model' is 0; legal values: a string"),
    ({"tapeo": {"expert": [1, 2]}}, r"tapeo.expert: expected an entry object"),
    ([1, 2], r"expected a JSON object, got list"),
])
def test_a_bad_file_is_refused_naming_the_place_and_the_legal_values(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(content))
    with pytest.raises(ConfigError, match=message):
        load_strengths(path)
    # and nothing is written over it
    before = path.read_text()
    with pytest.raises(ConfigError):
        record_strengths("tapeo", 3, {"expert": _entry(1, "easy", 3)}, path)
    assert path.read_text() == before


def test_not_json_is_refused(tmp_path):
    path = tmp_path / "x.json"
    path.write_text("{not json")
    with pytest.raises(ConfigError, match="not a JSON strength file"):
        load_strengths(path)


def test_lookups_refuse_bad_game_and_size(tmp_path):
    path = tmp_path / "none.json"
    assert strength("tapeo", "expert", 2, path) is None and measured_sizes("tapeo", path) == []
    with pytest.raises(ConfigError, match=r"players=7: legal values for 'tapeo': \[2, 3, 4, 5, 6\]"):
        strength("tapeo", "expert", 7, path)
    # 3.0 == 3 compares equal to a legal size, but a table has a whole number of seats: refused
    # like True (== 1), not looked up as 3.
    for bad in (3.0, True, "3"):
        with pytest.raises(ConfigError, match=r"legal values for 'tapeo': \[2, 3, 4, 5, 6\] \(an int\)"):
            strength("tapeo", "expert", bad, path)
    with pytest.raises(ConfigError, match=r"table size 3.0; legal values"):
        record_strengths("tapeo", 3.0, {"expert": _entry(1, "easy", 3)}, path)
    with pytest.raises(ConfigError, match="unknown game 'chess'"):
        strength("chess", "expert", 2, path)
    with pytest.raises(ConfigError, match=r"'players' is 2 in the entry of the 3-player table"):
        record_strengths("tapeo", 3, {"expert": _entry(1, "easy", 2)}, path)
    assert not path.exists()


# ---- --record: a saved ladder result into the file ------------------------------------------
def _result(players):
    """A hand-built saved ladder result (the fields LadderResult.save_json writes). Levels as an
    older rule wrote them ("stale"): --record recomputes them. mu +- 2 sigma, sigma 2: random 0 [-4, 4],
    greedy 6 [2, 10], expert 20 [16, 24], search 23 [19, 27]. Step 1, s = mu / 23: greedy 0.26 easy,
    expert 0.87 hard, search 1 hard, random easy. Step 2: medium is empty; easy's top greedy has
    high 10 < 19, the low of hard's top search: kept."""
    rows = [{"label": lab, "name": lab, "options": {}, "mu": mu, "sigma": 2.0, "low": mu - 4, "high": mu + 4,
             "level": "stale", "games": 12, "win_rate": 0.5}
            for lab, mu in (("search", 23.0), ("expert", 20.0), ("greedy", 6.0), ("random", 0.0))]
    labels = [r["label"] for r in rows]
    return {"game": "tapeo", "players": players, "games_per_table": 6, "seed": 0, "seating": "cyclic",
            "entries": [{"label": x, "name": x, "options": {}} for x in labels], "tables": [labels[:players]],
            "rows": rows, "labels": labels, "matrix": [[None] * 4 for _ in labels],
            "matrix_games": [[0] * 4 for _ in labels], "elapsed_s": 1.0, "date": "2026-12-02",
            "command": "python -m hod.benchmarks.ladder --game tapeo --players 3", "partial": False, "stopped": "",
            "tables_planned": 1}


def test_record_writes_a_saved_result_with_todays_labels(tmp_path, monkeypatch, capsys):
    strength_file = tmp_path / "strength.json"
    record_strengths("tapeo", 2, {"expert": _entry(15, "medium", 2)}, strength_file)
    monkeypatch.setattr(ladder_cli, "STRENGTH_FILE", strength_file)
    saved = tmp_path / "l3.json"
    saved.write_text(json.dumps(_result(3)))
    assert ladder_cli.main(["--game", "tapeo", "--players", "3", "--record", str(saved),
                            "--out", str(tmp_path / "again")]) == 0
    data = load_strengths(strength_file)["tapeo"]
    assert {b: {n: e["label"] for n, e in s.items()} for b, s in data.items()} == {
        "expert": {2: "medium", 3: "hard"}, "search": {3: "hard"}, "greedy": {3: "easy"}, "random": {3: "easy"}}
    assert data["search"][3] == {"rating": 23.0, "sigma": 2.0, "interval": [19.0, 27.0], "label": "hard", "games": 12,
                                 "players": 3, "date": "2026-12-02",
                                 "command": "python -m hod.benchmarks.ladder --game tapeo --players 3"}
    rewritten = json.loads((tmp_path / "again.json").read_text())
    assert [r["level"] for r in rewritten["rows"]] == ["hard", "hard", "easy", "easy"]
    assert "none moved" in (tmp_path / "again.md").read_text()
    # another size than the result's is refused, and nothing changes
    before = strength_file.read_text()
    assert ladder_cli.main(["--game", "tapeo", "--players", "4", "--record", str(saved)]) == 2
    assert "is the 3-player ladder of 'tapeo'; legal: --game tapeo --players 3" in capsys.readouterr().err
    partial = tmp_path / "p.json"
    partial.write_text(json.dumps({**_result(3), "partial": True, "stopped": "interrupted"}))
    assert ladder_cli.main(["--game", "tapeo", "--players", "3", "--record", str(partial)]) == 2
    assert "a partial ladder (interrupted)" in capsys.readouterr().err
    assert strength_file.read_text() == before


def test_update_strength_fails_before_playing_on_a_bad_file(tmp_path, monkeypatch, capsys):
    bad = tmp_path / "strength.json"
    bad.write_text(json.dumps({"version": 9, "strengths": {}}))
    monkeypatch.setattr(ladder_cli, "STRENGTH_FILE", bad)
    assert ladder_cli.main(["--game", "tapeo", "--bots", "random", "greedy", "--games", "2", "--update-strength",
                            "--no-progress"]) == 2
    out = capsys.readouterr()
    assert "format version 9; legal values: 2" in out.err and "| rank |" not in out.out


def test_update_strength_refuses_a_pool_that_leaves_out_labelled_bots(tmp_path, monkeypatch, capsys):
    """--update-strength replaces a size's entries: a --bots list without a bot labelled at that
    size would silently drop its label, so it is refused unless --replace-pool."""
    path = tmp_path / "strength.json"
    record_strengths("tapeo", 2, {"random": _entry(5, "easy", 2), "greedy": _entry(20, "medium", 2),
                                  "expert": _entry(27, "hard", 2)}, path)
    record_strengths("tapeo", 3, {"ppo": _entry(33, "hard", 3)}, path)
    before = path.read_text()
    monkeypatch.setattr(ladder_cli, "STRENGTH_FILE", path)
    args = ["--game", "tapeo", "--players", "2", "--bots", "random", "greedy", "--games", "2", "--update-strength",
            "--no-progress"]
    assert ladder_cli.main(args) == 2
    err = capsys.readouterr().err
    assert "and --bots leaves out ['expert'], which would lose theirs; legal: add them to the pool, or " \
           "--replace-pool" in err
    assert path.read_text() == before
    # --replace-pool means nothing without a pool being recorded: refused, not ignored
    assert ladder_cli.main(["--game", "tapeo", "--bots", "random", "greedy", "--games", "2", "--replace-pool"]) == 2
    assert "--replace-pool applies when a pool is recorded; legal: with --update-strength and --bots, or with " \
           "--record" in capsys.readouterr().err
    assert ladder_cli.main(args + ["--replace-pool"]) == 0
    data = load_strengths(path)["tapeo"]
    assert sorted(data) == ["greedy", "ppo", "random"] and data["ppo"] == {3: _entry(33, "hard", 3)}


def test_record_refuses_a_saved_pool_that_leaves_out_labelled_bots(tmp_path, monkeypatch, capsys):
    path = tmp_path / "strength.json"
    record_strengths("tapeo", 3, {"ppo": _entry(33, "hard", 3), "search": _entry(30, "hard", 3)}, path)
    monkeypatch.setattr(ladder_cli, "STRENGTH_FILE", path)
    saved = tmp_path / "l3.json"
    saved.write_text(json.dumps(_result(3)))   # search, expert, greedy, random: no ppo
    before = path.read_text()
    assert ladder_cli.main(["--game", "tapeo", "--players", "3", "--record", str(saved)]) == 2
    assert f"and {saved} leaves out ['ppo'], which would lose theirs" in capsys.readouterr().err
    assert path.read_text() == before
    assert ladder_cli.main(["--game", "tapeo", "--players", "3", "--record", str(saved), "--replace-pool"]) == 0
    assert sorted(load_strengths(path)["tapeo"]) == ["expert", "greedy", "random", "search"]


def test_every_shipped_entry_names_the_rating_model_the_ladder_uses_now():
    # A change of the rating model (e.g. OpenSkill's tau) must come with the ladders run again:
    # entries of two models are not comparable (tau 25/300 kept sigma near 1.5 at any budget).
    from hod.evaluation.stats import RATING_MODEL
    data = load_strengths()
    entries = [e for bots in data.values() for sizes in bots.values() for e in sizes.values()]
    assert len(entries) == 85   # Tapeo 5 sizes + Ronda Robada 3 sizes, every bot of each ladder's pool
    assert {e.get("rating_model") for e in entries} == {RATING_MODEL}
