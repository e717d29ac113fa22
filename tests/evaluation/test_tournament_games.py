"""The tournament harness on the real games (Tapeo, Ronda Robada) through their raw AEC envs."""
import json

import pytest

from hod.agents.base import Bot, legal_actions
from hod.benchmarks.tournament import main
from hod.evaluation.tournament import run_tournament
from hod.core.errors import ConfigError


class FirstLegalBot(Bot):
    """Deterministic: always the lowest legal action."""

    name = "first"

    def act(self, observation, belief=None):
        return int(legal_actions(observation)[0])


@pytest.mark.parametrize("game,n", [("tapeo", 2), ("tapeo", 4), ("robada", 2), ("robada", 3)])
def test_identical_deterministic_bots_split_every_deal_evenly(game, n):
    # Each deal is played n times with the lineup rotated, and the deal does not depend on who sits
    # where. Identical deterministic bots therefore produce the same result by seat in every
    # rotation, and each slot collects every seat's win share once per deal: shares add up to 1 per
    # deal, so every slot's win rate is exactly 1/n and all mean points are equal.
    r = run_tournament(game, [("first", FirstLegalBot)] * n, num_games=3 * n, seed=1)
    assert r.labels == [f"first#{k}" for k in range(1, n + 1)]
    assert [b.wins for b in r.bots] == pytest.approx([3.0] * n, abs=1e-9)
    assert len({round(b.points, 9) for b in r.bots}) == 1
    assert [b.seat_games for b in r.bots] == [[3] * n] * n
    assert r.aggregates == []  # a group holding every seat would always average 1/n


@pytest.mark.parametrize("game,n", [("tapeo", 4), ("robada", 2)])
def test_random_bots_same_result_with_one_or_two_workers(game, n):
    kw = dict(num_games=4 * n, seed=3)
    one = run_tournament(game, ["random"] * n, workers=1, **kw).to_dict()
    two = run_tournament(game, ["random"] * n, workers=2, **kw).to_dict()
    for d in (one, two):
        for timing in ("workers", "elapsed_s", "games_per_s"):
            d.pop(timing)
    assert one == two
    for g in one["games"]:
        assert sum(g["win_share"]) == pytest.approx(1.0)


def test_player_count_outside_the_game_range_names_the_legal_ones():
    # Ronda Robada takes 2 to 4 players
    with pytest.raises(ConfigError, match="legal values"):
        run_tournament("robada", ["random"] * 5, num_games=5)


def test_unknown_bot_for_robada_lists_the_registered_ones():
    with pytest.raises(ConfigError, match="registered: \\[.*'random'"):
        run_tournament("robada", ["random", "oracle"], num_games=2)


def test_cli_writes_the_three_reports(tmp_path, capsys):
    out = tmp_path / "t2"
    rc = main(["--game", "tapeo", "--lineup", "random", "random", "--games", "4", "--seed", "0",
               "--out", str(out), "--no-progress"])
    assert rc == 0
    printed = capsys.readouterr().out
    assert "| random#1 | 4 |" in printed and "games/s" in printed
    data = json.loads((tmp_path / "t2.json").read_text())
    assert data["game"] == "tapeo" and data["num_games"] == 4 and data["num_deals"] == 2
    assert (tmp_path / "t2.png").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "t2.md").read_text().startswith("## Tournament: Tapeo, 2 players")


def test_cli_rejects_games_not_a_multiple_of_the_players(capsys):
    assert main(["--game", "robada", "--lineup", "random", "random", "random", "--games", "10"]) == 2
    assert "nearest legal values: [9, 12]" in capsys.readouterr().err
