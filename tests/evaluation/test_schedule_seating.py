"""Seat orders of the tournament schedule (hod.evaluation.schedule): the cyclic rotations and every
permutation, duplicate deals shared across orders, the game counts allowed, the "auto" rule, and
the option through run_tournament and the command line."""
import itertools
from collections import Counter

import pytest

from hod.benchmarks.tournament import main
from hod.core.errors import ConfigError
from hod.evaluation.schedule import make_schedule, resolve_seating, seat_orders, seating_for_rotation
from hod.evaluation.tournament import run_tournament


def test_seat_orders_of_each_scheme():
    assert seat_orders(3, "cyclic") == [(0, 1, 2), (2, 0, 1), (1, 2, 0)]
    assert seat_orders(3, "permutations") == list(itertools.permutations(range(3)))
    assert len(seat_orders(4, "permutations")) == 24
    # with 2 players the schemes are the same two orders
    assert seat_orders(2, "cyclic") == seat_orders(2, "permutations")
    with pytest.raises(ConfigError, match=r"legal values are \['cyclic', 'permutations'\]"):
        seat_orders(3, "random")


def test_every_permutation_plays_every_deal_equally_often():
    s = make_schedule(48, 4, seed=0, duplicate=True, seating="permutations")
    # 48 games = 2 deals x 24 orders, each order once per deal, in the same order for each deal
    assert [g.deal for g in s] == [0] * 24 + [1] * 24
    assert Counter(g.seating for g in s) == {p: 2 for p in itertools.permutations(range(4))}
    for d in (0, 1):
        games = [g for g in s if g.deal == d]
        assert len({g.env_seed for g in games}) == 1          # the duplicate deal is shared
        assert {g.seating for g in games} == set(itertools.permutations(range(4)))
    assert s[0].env_seed != s[24].env_seed
    # every slot at every seat equally often, and left of every other slot equally often
    assert Counter((g.seating[seat], seat) for g in s for seat in range(4)) == \
        {(k, seat): 12 for k in range(4) for seat in range(4)}
    left = Counter((g.seating[seat], g.seating[(seat + 1) % 4]) for g in s for seat in range(4))
    assert set(left.values()) == {16} and len(left) == 12
    assert len({g.bot_seeds for g in s}) == 48


def test_cyclic_rotations_are_the_previous_schedule_and_favour_fixed_neighbours():
    s = make_schedule(8, 4, seed=3, duplicate=True, seating="cyclic")
    assert [g.seating for g in s[:4]] == [seating_for_rotation(4, r) for r in range(4)]
    assert make_schedule(8, 4, seed=3, duplicate=True) == s        # the schedule's default
    # slot 1 always sits left of slot 0 (slot 0 passes its hand to slot 1)
    assert {g.seating[(g.seating.index(0) + 1) % 4] for g in s} == {1}


def test_without_duplicates_the_order_advances_game_by_game():
    s = make_schedule(12, 3, seed=0, duplicate=False, seating="permutations")
    assert [g.deal for g in s] == list(range(12))
    assert [g.seating for g in s[:6]] == list(itertools.permutations(range(3)))
    assert len({g.env_seed for g in s}) == 12


@pytest.mark.parametrize("games, near", [(30, [24, 48]), (12, [24]), (0, [24])])
def test_num_games_must_be_a_multiple_of_the_number_of_orders(games, near):
    with pytest.raises(ConfigError, match=rf"number of seat orders 24 .*nearest legal values: {near}".replace(
            "[", r"\[").replace("]", r"\]")):
        make_schedule(games, 4, seed=0, duplicate=True, seating="permutations")


def test_auto_plays_every_permutation_where_the_count_allows():
    assert resolve_seating("auto", 2, 10) == "permutations"
    assert resolve_seating("auto", 3, 12) == "permutations"
    assert resolve_seating("auto", 3, 9) == "cyclic"          # not a multiple of 3! = 6
    assert resolve_seating("auto", 4, 480) == "permutations"
    assert resolve_seating("auto", 4, 2000) == "cyclic"       # 2000 is not a multiple of 24
    assert resolve_seating("auto", 5, 1200) == "cyclic"       # 5! = 120 orders: too many
    assert resolve_seating("cyclic", 4, 480) == "cyclic"
    with pytest.raises(ConfigError, match=r"legal values are \['auto', 'cyclic', 'permutations'\]"):
        resolve_seating("all", 4, 24)


def test_run_tournament_records_the_seating_and_seats_everyone_evenly():
    r = run_tournament("tapeo", ["random", "greedy", "random"], num_games=12, seed=0)
    assert r.seating == "permutations" and r.num_deals == 2 and r.games_per_deal == 6
    assert [b.seat_games for b in r.bots] == [[4, 4, 4]] * 3
    assert "2 deals x 6 seat permutations" in r.to_markdown()
    c = run_tournament("tapeo", ["random", "greedy", "random"], num_games=12, seed=0, seating="cyclic")
    assert c.seating == "cyclic" and c.num_deals == 4 and "4 deals x 3 seat rotations" in c.to_markdown()
    with pytest.raises(ConfigError, match="nearest legal values"):
        run_tournament("tapeo", ["random", "greedy", "random"], num_games=9, seating="permutations")


def test_cli_seating_flag(capsys):
    assert main(["--game", "tapeo", "--lineup", "random", "random", "random", "--games", "9",
                 "--seating", "permutations", "--no-progress"]) == 2
    assert "nearest legal values: [6, 12]" in capsys.readouterr().err
    assert main(["--game", "tapeo", "--lineup", "random", "random", "random", "--games", "6",
                 "--seating", "permutations", "--no-progress"]) == 0
    assert "1 deal x 6 seat permutations" in capsys.readouterr().out
