"""Ronda Robada game records: schema, atomic save, identical replay, and every kind of bad file."""
import json

import numpy as np
import pytest

from hod.core.errors import RecordError
from robada_env.rules.engine import Config, apply_action, legal_actions, new_game
from robada_env.rules.record import FORMAT_VERSION, load_record, make_record, replay, save_record
from test_robada_engine import FULL_ACTIONS, FULL_DECK


def _full_game():
    s = new_game(Config(num_players=2), deck=FULL_DECK)
    for a in FULL_ACTIONS:
        apply_action(s, a)
    return s


def test_record_schema_of_the_hand_made_game():
    rec = make_record(_full_game(), seed=None)
    assert rec["game"] == "robada" and rec["format_version"] == FORMAT_VERSION == 1
    assert rec["config"] == {"num_players": 2, "closing_ace": True, "may_take_own_pile": True,
                             "leftovers_to_last_runner": True}
    assert rec["deck"][:5] == ["A of oros", "2 of oros", "3 of oros", "4 of oros", "A of copas"]
    assert len(rec["deck"]) == 40 and len(rec["actions"]) == len(FULL_ACTIONS)
    assert rec["actions"][0] == {"seat": 0, "action": 0, "name": "start A"}
    assert rec["actions"][5] == {"seat": 1, "action": 11, "name": "drop 2"}
    assert rec["final_scores"] == [166, 78] and rec["winners"] == [0]


def test_save_load_replay_identical(tmp_path):
    rng = np.random.default_rng(0)
    for n in (2, 3, 4):
        s = new_game(Config(num_players=n), seed=n)
        while not s.terminal:
            la = legal_actions(s)
            apply_action(s, la[int(rng.integers(len(la)))])
        path = tmp_path / f"g{n}.json"
        save_record(path, make_record(s, seed=n))
        assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []   # no temp files
        r = replay(load_record(path))
        assert r.history == s.history and r.piles == s.piles and r.points == s.points
        assert r.deck_order == s.deck_order and r.loose == s.loose


def test_unfinished_game_cannot_be_recorded():
    s = new_game(Config(), seed=0)
    with pytest.raises(RecordError, match="not finished"):
        make_record(s)


@pytest.mark.parametrize("corrupt,match", [
    (lambda r: r.update(final_scores=[165, 79]), "differ from recorded"),
    (lambda r: r.update(winners=[1]), "winners"),
    (lambda r: r["actions"].pop(), "not over"),                         # truncated action list
    (lambda r: r["actions"].append(dict(r["actions"][-1])), "already over"),
    (lambda r: r["actions"][1].update(action=21, name="take pile +0 (own)"), "legal actions"),
    (lambda r: r["actions"][1].update(name="confirm"), "does not match its name"),
    (lambda r: r["actions"][5].update(seat=0), "seat 1 is to act"),
    (lambda r: r["deck"].__setitem__(0, "2 of oros"), "exactly once"),
    (lambda r: r["deck"].__setitem__(0, "Joker"), "bad deck"),
    (lambda r: r["config"].update(num_players=7), "bad config"),
    (lambda r: r["config"].update(bogus=1), r"bad config in record: unknown option\(s\) \['bogus'\]; legal options: "
                                            r"\['num_players', 'closing_ace', 'may_take_own_pile', "
                                            r"'leftovers_to_last_runner'\]$"),
    (lambda r: r.update(config=[2]), r"bad config in record: \[2\]; legal: an object with the keys"),
    (lambda r: r.update(game="tapeo"), "expected 'robada'"),
    (lambda r: r.update(format_version=2), "format_version"),
    (lambda r: r.pop("actions"), "lacks the field 'actions'"),
])
def test_corrupt_records_are_refused(corrupt, match):
    rec = make_record(_full_game())
    corrupt(rec)
    with pytest.raises(RecordError, match=match):
        replay(rec)


def test_truncated_file_is_refused(tmp_path):
    path = tmp_path / "g.json"
    save_record(path, make_record(_full_game()))
    text = path.read_text()
    path.write_text(text[: len(text) // 2])
    with pytest.raises(RecordError, match="truncated or corrupt"):
        load_record(path)
    path.write_text(json.dumps([1, 2]))
    with pytest.raises(RecordError, match="JSON object"):
        load_record(path)
