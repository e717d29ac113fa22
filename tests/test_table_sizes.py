"""Bots that declare the table sizes they play (``Bot.player_counts``, from a trained policy's
model card) are refused at other sizes by the tournament and the play commands, and skipped as
the play commands' default opponent."""
from __future__ import annotations

import pytest

from hod import agents
from hod.agents.onnx_policy import OPPONENTS_DIR
from hod.core.errors import ConfigError

pytest.importorskip("onnxruntime")
pytestmark = pytest.mark.skipif(not (OPPONENTS_DIR / "robada_ppo.onnx").is_file(), reason="no shipped robada ppo")


def test_bots_declare_their_table_sizes():
    assert agents.make("robada", "ppo", seed=0).player_counts == (2, 4)
    assert agents.player_counts("robada", "ppo") == (2, 4)
    assert agents.make("robada", "expert", seed=0).player_counts is None
    assert agents.player_counts("robada", "expert") is None


def test_tournament_refuses_a_bot_at_an_unsupported_size():
    from hod.evaluation.tournament import run_tournament

    with pytest.raises(ConfigError, match=r"lineup slot 0: .*trained for \[2, 4\] players, not 3; "
                                          r"legal table sizes for it: \[2, 4\]"):
        run_tournament("robada", ["ppo", "expert", "expert"], num_games=3, seed=0)
    with pytest.raises(ConfigError, match=r"lineup slot 1: .*\[2, 4\]"):
        run_tournament("robada", ["expert", agents.make("robada", "ppo"), "random"], num_games=3, seed=0)
    assert run_tournament("robada", ["ppo", "expert"], num_games=2, seed=0).num_players == 2


def test_tournament_command_exits_2_naming_the_sizes(capsys):
    from hod.benchmarks.tournament import main

    assert main(["--game", "robada", "--lineup", "ppo", "expert", "expert", "--games", "3"]) == 2
    assert "[2, 4]" in capsys.readouterr().err


def test_play_default_opponent_skips_a_bot_trained_for_other_sizes():
    from hod.apps.play import parse_opponents

    notices: list[str] = []
    assert parse_opponents("robada", None, 2, notices) == ["expert", "expert"]   # 3 players
    assert notices and "trained for [2, 4] players, not 3" in notices[0] and "'expert'" in notices[0]
    assert parse_opponents("robada", None, 1) == ["ppo"]                          # 2 players
    assert parse_opponents("robada", None, 3) == ["ppo"] * 3                      # 4 players
    with pytest.raises(ConfigError, match=r"trained for \[2, 4\] players, not 3; legal table sizes for it: \[2, 4\]"):
        parse_opponents("robada", ["ppo"], 2)


def test_play_robada_3_players_names_the_sizes(capsys):
    from hod.apps import play_robada

    with pytest.raises(SystemExit) as e:
        play_robada.main(["--players", "3", "--opponents", "ppo", "--no-record"])
    assert e.value.code == 2
    assert "[2, 4]" in capsys.readouterr().err
