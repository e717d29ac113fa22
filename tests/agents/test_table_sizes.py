"""Bots that declare the table sizes they play (``Bot.player_counts``, from a trained policy's
model card) are refused at other sizes by the tournament and the play commands, and skipped as
the play commands' default opponent. The example: Ronda Robada's ``ppo_v1`` (the planner-fed
network, trained for 2 and 4 players); today's ``ppo`` plays 2, 3 and 4."""
from __future__ import annotations

import pytest

from hod import agents
from hod.agents.onnx_policy import OPPONENTS_DIR
from hod.core.errors import ConfigError

pytest.importorskip("onnxruntime")
pytestmark = pytest.mark.skipif(not (OPPONENTS_DIR / "robada_ppo_v1.onnx").is_file(), reason="no shipped robada ppo_v1")


def test_bots_declare_their_table_sizes():
    assert agents.make("robada", "ppo_v1", seed=0).player_counts == (2, 4)
    assert agents.player_counts("robada", "ppo_v1") == (2, 4)
    assert agents.make("robada", "expert", seed=0).player_counts is None
    assert agents.player_counts("robada", "expert") is None


def test_tournament_refuses_a_bot_at_an_unsupported_size():
    from hod.evaluation.tournament import run_tournament

    with pytest.raises(ConfigError, match=r"lineup slot 0: .*trained for \[2, 4\] players, not 3; "
                                          r"legal table sizes for it: \[2, 4\]"):
        run_tournament("robada", ["ppo_v1", "expert", "expert"], num_games=3, seed=0)
    with pytest.raises(ConfigError, match=r"lineup slot 1: .*\[2, 4\]"):
        run_tournament("robada", ["expert", agents.make("robada", "ppo_v1"), "random"], num_games=3, seed=0)
    assert run_tournament("robada", ["ppo", "expert"], num_games=2, seed=0).num_players == 2


def test_tournament_command_exits_2_naming_the_sizes(capsys):
    from hod.benchmarks.tournament import main

    assert main(["--game", "robada", "--lineup", "ppo_v1", "expert", "expert", "--games", "3"]) == 2
    assert "[2, 4]" in capsys.readouterr().err


def test_play_default_opponent_skips_a_bot_trained_for_other_sizes(monkeypatch):
    from hod.apps import play
    from hod.apps.play import parse_opponents

    # today's strongest Robada bots play every size; make the 2-and-4-player ppo_v1 the strongest
    monkeypatch.setattr(play, "strongest", lambda names: "ppo_v1" if "ppo_v1" in names else "expert")
    notices: list[str] = []
    assert parse_opponents("robada", None, 2, notices) == ["expert", "expert"]   # 3 players
    assert notices and "trained for [2, 4] players, not 3" in notices[0] and "'expert'" in notices[0]
    assert parse_opponents("robada", None, 1) == ["ppo_v1"]                       # 2 players
    assert parse_opponents("robada", None, 3) == ["ppo_v1"] * 3                   # 4 players
    with pytest.raises(ConfigError, match=r"trained for \[2, 4\] players, not 3; legal table sizes for it: \[2, 4\]"):
        parse_opponents("robada", ["ppo_v1"], 2)


def test_todays_robada_ppo_plays_every_size():
    assert agents.make("robada", "ppo", seed=0).player_counts == (2, 3, 4)
    assert agents.make("robada", "ppo", seed=0, num_players=3).player_counts == (2, 3, 4)


def test_play_robada_3_players_names_the_sizes(capsys):
    from hod.apps import play_robada

    with pytest.raises(SystemExit) as e:
        play_robada.main(["--players", "3", "--opponents", "ppo_v1", "--no-record"])
    assert e.value.code == 2
    assert "[2, 4]" in capsys.readouterr().err


def test_make_refuses_a_table_size_the_card_does_not_list():
    with pytest.raises(ConfigError, match=r"robada bot 'ppo_v1' was trained for \[2, 4\] players, not 3; "
                                          r"legal table sizes for it: \[2, 4\]"):
        agents.make("robada", "ppo_v1", seed=0, num_players=3)
    assert agents.make("robada", "ppo_v1", seed=0, num_players=4).player_counts == (2, 4)
    assert agents.make("robada", "expert", seed=0, num_players=3).player_counts is None   # every size
    for bad in (5, 1, 3.0, True):
        with pytest.raises(ConfigError, match=r"num_players=.* is not allowed.*; legal values: \[2, 3, 4\]"):
            agents.make("robada", "expert", seed=0, num_players=bad)


def _first_observation(game: str, n: int) -> dict:
    from hod.core.games import make_raw_env

    env = make_raw_env(game, n)
    env.reset(seed=3)
    return env.observe(env.agent_selection)


def test_observations_tell_their_table_size():
    from hod.agents.base import observed_player_count
    from hod.core.games import get_game

    for game in ("tapeo", "robada"):
        for n in get_game(game).player_counts:   # tapeo 2..6, robada 2..4
            assert observed_player_count(game, _first_observation(game, n)) == n
    blank = {"observation": _first_observation("robada", 2)["observation"] * 0}
    assert observed_player_count("robada", blank) is None   # no one-hot: the size cannot be told


def test_a_policy_refuses_an_observation_of_a_table_size_its_card_does_not_list():
    bot = agents.make("robada", "ppo_v1", seed=0)   # no size said
    obs = _first_observation("robada", 3)
    with pytest.raises(ConfigError, match=r"trained for \[2, 4\] players, not 3; legal table sizes for it: \[2, 4\]"):
        bot.act(obs)
    obs = _first_observation("robada", 2)
    assert obs["action_mask"][bot.act(obs)] == 1
    expert = agents.make("robada", "expert", seed=0)   # no card: every size
    obs = _first_observation("robada", 3)
    assert obs["action_mask"][expert.act(obs)] == 1
