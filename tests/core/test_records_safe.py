"""Game records are safe to load (RecordError naming what is legal, never a stray
UnicodeDecodeError or a silent truncation) and say who played each seat (``players``); both
games share the common header (hod.core.records.record_header)."""
import copy
import io
import json

import numpy as np
import pytest

import robada_env
import tapeo_env
from hod.apps import play_robada, play_tapeo
from hod.core.errors import RecordError
from hod.core.records import record_header

GAMES = {"tapeo": tapeo_env, "robada": robada_env}


def _finished_record(mod, players=None, n=2, seed=4):
    env = mod.raw_env(num_players=n)
    env.reset(seed=seed)
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
    return env.record(players=players)


@pytest.mark.parametrize("game", ["tapeo", "robada"])
def test_non_utf8_file_is_a_record_error(game, tmp_path):
    path = tmp_path / "r.json"
    path.write_bytes(b'{"game": "\xff\xfe"}')
    with pytest.raises(RecordError, match="UTF-8"):
        GAMES[game].load_record(path)


@pytest.mark.parametrize("game", ["tapeo", "robada"])
@pytest.mark.parametrize("version", [1.0, True])
def test_format_version_must_be_the_int_1(game, version, tmp_path):
    rec = _finished_record(GAMES[game])
    rec["format_version"] = version
    path = tmp_path / "r.json"
    path.write_text(json.dumps(rec), encoding="utf-8")
    with pytest.raises(RecordError, match=r"this version reads 1 \(an integer\)"):
        GAMES[game].load_record(path)
    with pytest.raises(RecordError, match=r"this version reads 1 \(an integer\)"):
        GAMES[game].replay(rec)


@pytest.mark.parametrize("field", ["seat", "action"])
def test_robada_float_seat_or_action_id_is_refused(field):
    rec = _finished_record(robada_env)
    bad = copy.deepcopy(rec)
    bad["actions"][0][field] = float(bad["actions"][0][field])
    legal = "0..1" if field == "seat" else "0..26"
    with pytest.raises(RecordError, match=rf"action 0: {'seat' if field == 'seat' else 'action id'} "
                                          rf"\d+\.0: legal values are the integers {legal}"):
        robada_env.replay(bad)
    robada_env.replay(rec)


@pytest.mark.parametrize("game", ["tapeo", "robada"])
@pytest.mark.parametrize("field", ["final_scores", "winners"])
def test_float_scores_and_winner_seats_are_refused(game, field):
    rec = _finished_record(GAMES[game])
    bad = copy.deepcopy(rec)
    bad[field] = [float(x) for x in bad[field]]
    with pytest.raises(RecordError, match=f"{field} .*legal values are lists of"):
        GAMES[game].replay(bad)


def test_tapeo_float_counts_are_refused():
    rec = _finished_record(tapeo_env)
    for field, legal in (("num_players", "2..6"), ("hand_size", "1..20")):
        bad = dict(rec, **{field: float(rec[field])})
        with pytest.raises(RecordError, match=f"{field} .*legal values are the integers {legal}"):
            tapeo_env.replay(bad)
    bad = copy.deepcopy(rec)
    bad["rounds"][0]["scores"] = [float(x) for x in bad["rounds"][0]["scores"]]
    with pytest.raises(RecordError, match="round 1 scores .*legal values are lists of 2 integers"):
        tapeo_env.replay(bad)


@pytest.mark.parametrize("game", ["tapeo", "robada"])
def test_records_share_the_common_header_and_keep_players(game, tmp_path):
    mod = GAMES[game]
    rec = _finished_record(mod, players=["human", "expert"])
    assert list(rec)[:4] == ["game", "format_version", "seed", "players"]
    assert {k: rec[k] for k in list(rec)[:4]} == record_header(game, 1, 4, ["human", "expert"], 2)
    assert rec["players"] == ["human", "expert"] and rec["seed"] == 4
    path = tmp_path / "r.json"
    mod.save_record(path, rec)
    assert mod.load_record(path)["players"] == ["human", "expert"]
    mod.replay(mod.load_record(path))
    assert _finished_record(mod)["players"] is None               # optional
    for bad in (["human"], ["human", 3], "human,expert"):
        with pytest.raises(RecordError, match="legal values are null or a list of 2 strings"):
            mod.replay(dict(rec, players=bad))
        with pytest.raises(RecordError, match="legal values are null or a list of 2 strings"):
            _finished_record(mod, players=bad)
    for seed in (1.5, -1, True, 2**64, 2**70):   # every seed a game is dealt from is in 0..2**64-1
        with pytest.raises(RecordError, match=r"legal values are null or an integer in 0\.\.2\*\*64-1"):
            mod.replay(dict(rec, seed=seed))
    mod.replay(dict(rec, seed=2**64 - 1))        # the largest one is a seed


@pytest.mark.parametrize("app, text", [(play_tapeo, "1\n" * 60), (play_robada, "1\n" * 200)])
def test_play_apps_write_who_played_each_seat(app, text, tmp_path):
    path = tmp_path / "g.json"
    out = io.StringIO()
    code = app.main(["--players", "3", "--seat", "1", "--opponents", "random", "greedy", "--seed", "3",
                     "--record", str(path)], io.StringIO(text), out)
    assert code == 0 and "Game record written" in out.getvalue()
    game = "tapeo" if app is play_tapeo else "robada"
    assert GAMES[game].load_record(path)["players"] == ["greedy", "human", "random"]


@pytest.mark.parametrize("game", ["tapeo", "robada"])
def test_save_record_refuses_what_replay_refuses_and_writes_nothing(game, tmp_path):
    # A record whose winners contradict its own final scores: replay raises, so save_record must
    # too, before anything reaches the disk (a file we write is one we can read back).
    mod = GAMES[game]
    rec = _finished_record(mod)
    bad = copy.deepcopy(rec)
    bad["winners"] = [1] if rec["winners"] == [0] else [0]
    path = tmp_path / "r.json"
    with pytest.raises(RecordError):
        mod.replay(bad)
    with pytest.raises(RecordError):
        mod.save_record(path, bad)
    assert not path.exists() and list(tmp_path.iterdir()) == []
    mod.save_record(path, rec)                                     # the untouched record is written
    assert mod.load_record(path) == json.loads(json.dumps(rec))


@pytest.mark.parametrize("game", ["tapeo", "robada"])
def test_deeply_nested_json_is_a_record_error(game, tmp_path):
    path = tmp_path / "r.json"
    path.write_text("[" * 100000, encoding="utf-8")   # json's parser recurses once per bracket
    with pytest.raises(RecordError, match="nested too deeply to parse"):
        GAMES[game].load_record(path)


@pytest.mark.parametrize("game", ["tapeo", "robada"])
def test_a_number_too_long_for_python_is_a_record_error(game, tmp_path):
    path = tmp_path / "r.json"
    # 5,000 digits: over Python's 4,300-digit int-string limit (a raw ValueError before)
    path.write_text('{"game": "%s", "format_version": 1, "seed": %s}' % (game, "9" * 5000), encoding="utf-8")
    with pytest.raises(RecordError, match="a number too long to read"):
        GAMES[game].load_record(path)


@pytest.mark.parametrize("game", ["tapeo", "robada"])
def test_a_record_over_the_size_limit_is_refused_before_parsing(game, tmp_path, monkeypatch):
    import hod.core.records as records

    mod = GAMES[game]
    rec = _finished_record(mod)
    path = tmp_path / "r.json"
    mod.save_record(path, rec)
    size = path.stat().st_size
    monkeypatch.setattr(records, "MAX_RECORD_BYTES", size - 1)
    parsed, real_loads = [], json.loads
    monkeypatch.setattr(records.json, "loads", lambda *a, **k: parsed.append(a) or real_loads(*a, **k))
    with pytest.raises(RecordError, match=rf"larger than {size - 1:,} bytes, the limit \(MAX_RECORD_BYTES"):
        mod.load_record(path)
    assert parsed == []   # refused before parsing
    # save_record refuses to write what load_record would refuse, and writes nothing
    other = tmp_path / "other.json"
    with pytest.raises(RecordError, match=rf"takes {size:,} bytes of JSON; a game record is at most {size - 1:,}"):
        mod.save_record(other, rec)
    assert not other.exists()
    monkeypatch.setattr(records, "MAX_RECORD_BYTES", size)
    mod.replay(mod.load_record(path))
