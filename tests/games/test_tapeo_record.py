"""Tapeo game records: round trip through JSON, replay without our generator, corrupt records."""
import copy
import re
import json

import numpy as np
import pytest

import tapeo_env
from hod.core.errors import RecordError
from tapeo_env.rules.record import load_record, make_record, replay, save_record


def finished_env(n=4, seed=21):
    env = tapeo_env.parallel_env(num_players=n)
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    while env.agents:
        obs, *_ = env.step({a: int(rng.choice(np.flatnonzero(obs[a]["action_mask"]))) for a in env.agents})
    return env


@pytest.mark.parametrize("n", [2, 4, 6])
def test_record_round_trip(tmp_path, n):
    env = finished_env(n)
    rec = env.unwrapped.record()
    path = tmp_path / "game.json"
    save_record(path, rec)
    loaded = load_record(path)
    assert loaded == rec and loaded["seed"] == 21
    s = replay(loaded)
    assert s.final_scores.tolist() == env.game_state.final_scores.tolist()
    assert s.dealt == env.game_state.dealt and s.reveals == env.game_state.reveals
    # schema: 3 rounds, n hands of the rule's size, hand_size - 1 decision picks of n tapas
    hs = {2: 10, 4: 8, 6: 7}[n]
    assert len(rec["rounds"]) == 3 and rec["hand_size"] == hs
    assert all(len(h) == hs for h in rec["rounds"][0]["dealt"]) and len(rec["rounds"][0]["picks"]) == hs - 1
    assert all(len(p) == n for p in rec["rounds"][2]["picks"]) and len(rec["rounds"][1]["last"]) == n


def test_replay_needs_no_seed():
    rec = finished_env().unwrapped.record()
    rec["seed"] = None
    assert replay(rec).final_scores.tolist() == rec["final_scores"]


def test_replay_detects_wrong_scores_and_illegal_picks():
    rec = finished_env().unwrapped.record()
    bad = copy.deepcopy(rec)
    bad["final_scores"][0] += 1
    with pytest.raises(RecordError, match="final_scores"):
        replay(bad)
    bad = copy.deepcopy(rec)
    bad["rounds"][1]["scores"][2] -= 1
    with pytest.raises(RecordError, match="round 2"):
        replay(bad)
    bad = copy.deepcopy(rec)
    hand0 = set(bad["rounds"][0]["dealt"][0])
    missing = next(k for k in tapeo_env.ACTION_NAMES if k not in hand0)
    bad["rounds"][0]["picks"][0][0] = missing
    with pytest.raises(RecordError, match="does not replay"):
        replay(bad)
    bad = copy.deepcopy(rec)
    bad["rounds"][0]["picks"][0][0] = "paella"
    with pytest.raises(RecordError, match="paella"):
        replay(bad)


def test_corrupt_or_foreign_records(tmp_path):
    rec = finished_env().unwrapped.record()
    for broken in ({**rec, "game": "robada"}, {**rec, "format_version": 9}, [1, 2]):
        with pytest.raises(RecordError):
            replay(broken)
    no_rounds = {k: v for k, v in rec.items() if k != "rounds"}
    with pytest.raises(RecordError, match="malformed"):
        replay(no_rounds)
    path = tmp_path / "t.json"
    path.write_text(json.dumps(rec)[:200])  # truncated file
    with pytest.raises(RecordError, match="truncated or corrupt"):
        load_record(path)


def test_record_of_unfinished_game_is_refused():
    env = tapeo_env.raw_env()
    env.reset(seed=0)
    with pytest.raises(RecordError, match="finished"):
        make_record(env.game_state)


def test_replay_refuses_an_edited_deck_composition():
    # T1: 14 tortilla, 14 croqueta, 4 of each ham, 10 prawns, 8 bread, 10 pepper, 6 freeloader,
    # 10 churro = 84 tapas. Moving one tortilla to croqueta keeps 84 tapas and the deals may still
    # fit, but it is not the game of the rules.
    expected = ("{'tortilla': 14, 'croqueta': 14, 'ham1': 4, 'ham2': 4, 'ham3': 4, 'prawns': 10, "
                "'bread': 8, 'pepper': 10, 'freeloader': 6, 'churro': 10}")
    rec = finished_env().unwrapped.record()
    assert str(rec["deck"]) == expected
    bad = copy.deepcopy(rec)
    bad["deck"]["tortilla"], bad["deck"]["croqueta"] = 13, 15
    with pytest.raises(RecordError) as e:
        replay(bad)
    assert str(e.value) == (f"deck {bad['deck']!r} is not the deck of the rules (T1); expected {expected}")
    bad = copy.deepcopy(rec)
    bad["deck"]["paella"] = 0  # an extra kind, even with no tapa of it
    with pytest.raises(RecordError, match=re.escape(f"expected {expected}")):
        replay(bad)
    del bad["deck"]
    with pytest.raises(RecordError, match=re.escape(f"deck None is not the deck of the rules (T1); expected {expected}")):
        replay(bad)


def test_record_of_a_game_with_another_deck_is_refused():
    from tapeo_env.rules.engine import Config, apply_actions, legal_actions, new_game

    s = new_game(Config(num_players=2, deck=(20, 14, 4, 4, 4, 10, 8, 10, 6, 4)), seed=0)
    while not s.terminal:
        apply_actions(s, [legal_actions(s, i)[0] for i in range(2)])
    with pytest.raises(RecordError, match=re.escape("this game's deck is {'tortilla': 20,")):
        make_record(s)
