"""Tests of the shared pieces: reward schemes, layouts, atomic writes, option checks."""
import json

import numpy as np
import pytest

from hod.core.atomic import atomic_write_json
from hod.core.errors import ConfigError, check_choice, check_int_range
from hod.core.layout import ObsLayout, Piece
from hod.core.rewards import final_rewards, win_shares


def test_points_scheme_is_the_scores():
    assert final_rewards([10, 7, 3], [0], "points").tolist() == [10, 7, 3]


def test_win_loss_two_players():
    assert final_rewards([10, 7], [0], "win_loss").tolist() == [1.0, -1.0]
    # tie: both are winners -> 0 each
    assert final_rewards([7, 7], [0, 1], "win_loss").tolist() == [0.0, 0.0]


def test_win_loss_four_players_with_shared_win():
    # 2 winners share +1 -> +1/2 each; 2 losers share -1 -> -1/2 each; sum 0
    assert final_rewards([9, 9, 3, 1], [0, 1], "win_loss").tolist() == [0.5, 0.5, -0.5, -0.5]
    # 1 winner of 4: +1, the three losers -1/3 each
    r = final_rewards([9, 5, 3, 1], [0], "win_loss")
    assert r[0] == 1.0 and np.allclose(r[1:], -1 / 3)


def test_margin_scheme():
    # seat 0: 10 - mean(4, 4) = 6; seat 1: 4 - mean(10, 4) = -3
    assert final_rewards([10, 4, 4], [0], "margin").tolist() == [6.0, -3.0, -3.0]


def test_unknown_scheme_names_legal_values():
    with pytest.raises(ConfigError, match="points"):
        final_rewards([1, 2], [1], "elo")


def test_win_shares():
    assert win_shares([1, 2], 4).tolist() == [0.0, 0.5, 0.5, 0.0]


def test_layout_offsets_views_and_table():
    lay = ObsLayout("g", 1, [Piece("a", 3, "x"), Piece("b", 2, "y", "/ 5")])
    assert lay.size == 5
    v = np.arange(5, dtype=np.float32)
    assert lay.view(v, "b").tolist() == [3.0, 4.0]
    assert "| 3-4 | `b` | 2 | y | / 5 |" in lay.markdown_table()
    with pytest.raises(KeyError, match="pieces"):
        lay.view(v, "c")


def test_option_checks():
    with pytest.raises(ConfigError, match=r"\[2, 3, 4\]"):
        check_int_range("num_players", 5, 2, 4)
    with pytest.raises(ConfigError):
        check_int_range("num_players", True, 2, 4)
    # a wide range is named, not listed (10**9 values would not fit in memory)
    with pytest.raises(ConfigError, match=r"legal values: integers 1\.\.1000000000$"):
        check_int_range("max_cycles", 0, 1, 10**9)
    with pytest.raises(ConfigError, match="'raise', 'lose'"):
        check_choice("illegal_action", "ignore", ("raise", "lose"))


def test_atomic_write_json(tmp_path):
    p = tmp_path / "sub" / "r.json"
    atomic_write_json(p, {"a": 1})
    assert json.loads(p.read_text()) == {"a": 1}
    assert [f.name for f in p.parent.iterdir()] == ["r.json"]  # no temp file left behind


def test_illegal_action_error_pickles():
    import pickle

    from hod.core.errors import IllegalActionError

    e = IllegalActionError("player_1", 7, [0, 2])
    e2 = pickle.loads(pickle.dumps(e))
    assert str(e2) == "illegal action 7 for player_1; legal actions: [0, 2]"
    assert (e2.agent, e2.action, e2.legal) == ("player_1", 7, [0, 2])


def test_unknown_bot_option_is_refused_with_the_legal_ones():
    from hod import agents
    with pytest.raises(ConfigError, match=r"unknown option\(s\) \['agression'\].*legal options: \['seed'"):
        agents.make("tapeo", "expert", seed=0, agression=5)
