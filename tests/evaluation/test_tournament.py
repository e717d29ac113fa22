"""Tests of the tournament harness (benchmarks/tournament.py) on a scripted fake game.

The fake game (training/fake_env.py) follows the environment contract. Played here as a one-pick
game (:data:`ONE_PICK`): each seat picks a number in 0..9, scores
``pick + hand[seat] + (seat_bonus if seat == 0)``, the highest score wins, ties share.
Every expected value below is worked out by hand in the comments.
"""
import functools
import json
import math
import pickle
import re

import numpy as np
import pytest

import hod.training.fake_env as fake_env
from hod.agents.base import Bot, RandomBot
from hod.evaluation import play as _play, stats as _stats
from hod.training.fake_env import register_fake_game
from hod.evaluation.schedule import make_schedule
from hod.benchmarks.tournament import main
from hod.evaluation.tournament import run_tournament
from hod.core.errors import ConfigError, IllegalActionError

Z = 1.959963984540054  # standard normal 0.975 quantile
T3 = 3.182446305284263  # Student t 0.975 quantile, 3 degrees of freedom


#: The fake game as a one-pick game: one round, picks 0..9, every pick legal.
ONE_PICK = {"rounds": 1, "num_actions": 10, "legal": list(range(10))}


def kw(**options):
    """``env_kwargs`` of the one-pick fake game with ``options`` (hand_range, seat_bonus, legal...)."""
    return {**ONE_PICK, **options}


@pytest.fixture
def fake():
    register_fake_game()
    return "fake"


class BeliefBot(Bot):
    """Records one belief sample per decision, then plays 0."""

    name = "belief"
    needs_belief = True

    def __init__(self, seed=None):
        super().__init__(seed)
        self.samples = []

    def act(self, observation, belief=None):
        self.samples.append(belief(self.rng))
        return 0


class ConstBot(Bot):
    """Always plays ``value``."""

    name = "const"

    def __init__(self, value: int, seed=None):
        super().__init__(seed)
        self.value = value

    def act(self, observation, belief=None):
        return self.value


class ScriptBot(Bot):
    """Plays ``script[k]`` in the k-th game since it was built (games counted by ``reset``)."""

    name = "script"

    def __init__(self, script, seed=None):
        super().__init__(seed)
        self.script = list(script)
        self.games = -1
        self.seeds = []

    def reset(self, seed=None):
        super().reset(seed)
        self.games += 1
        self.seeds.append(seed)

    def act(self, observation, belief=None):
        return self.script[self.games]


def const(label, value):
    return (label, functools.partial(ConstBot, value))


def wilson_by_hand(x, n):
    # Wilson score interval: (p + z^2/2n -+ z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n)
    p = x / n
    d = 1 + Z * Z / n
    c = (p + Z * Z / (2 * n)) / d
    h = Z / d * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n))
    return c - h, c + h


# ------------------------------------------------------------------ statistics


def test_wilson_interval_seven_of_ten():
    # p = 0.7, n = 10, z^2 = 3.841459: denominator 1.3841459, centre 0.892073/1.3841459 = 0.644491,
    # half-width 1.416012 * sqrt(0.021 + 0.0096036) = 1.416012 * 0.174939 = 0.247717
    lo, hi = _stats.wilson_interval(7, 10)
    assert lo == pytest.approx(0.396778, abs=1e-6)
    assert hi == pytest.approx(0.892209, abs=1e-6)
    assert (lo, hi) == pytest.approx(wilson_by_hand(7, 10), abs=1e-12)


def test_wilson_interval_with_a_shared_win():
    # 1.5 wins in 4 games (one tie shared): p = 0.375, z^2/n = 0.960365, denominator 1.960365,
    # centre (0.375 + 0.480182) / 1.960365 = 0.436236,
    # half 0.999795 * sqrt(0.058594 + 0.060023) = 0.344337 -> [0.091899, 0.780573]
    assert _stats.wilson_interval(1.5, 4) == pytest.approx((0.091899, 0.780573), abs=1e-6)


def test_t_interval_by_hand():
    # values 1, -1, 2, -1: mean 0.25, deviations 0.75 -1.25 1.75 -1.25, squares sum 6.75,
    # sd = sqrt(6.75 / 3) = 1.5, se = 0.75, half = 3.182446 * 0.75 = 2.386835
    mean, lo, hi = _stats.t_interval([1, -1, 2, -1])
    assert mean == 0.25
    assert (lo, hi) == pytest.approx((0.25 - 2.386835, 0.25 + 2.386835), abs=1e-6)
    # one observation: no interval; constant values: zero width
    assert math.isnan(_stats.t_interval([3.0])[1])
    assert _stats.t_interval([2, 2, 2]) == (2.0, 2.0, 2.0)


def test_margins_and_ranks():
    # seat 0: 10 - (4 + 4)/2 = 6; seats 1, 2: 4 - (10 + 4)/2 = -3
    assert _stats.margins(np.array([[10, 4, 4]])).tolist() == [[6.0, -3.0, -3.0]]
    # keys 5, 7, 7, 1: the two 7s share rank 1, then 5 is 3rd, 1 is 4th
    assert _stats.ranks_from_keys([5, 7, 7, 1]) == [3, 1, 1, 4]


def test_openskill_one_game_by_hand():
    # Plackett-Luce, mu 25, sigma 25/3, beta 25/6, tau 0 (no drift: RATING_TAU):
    # c = sqrt(2 (sigma^2 + beta^2)) = sqrt(2 (625/9 + 625/36)) = sqrt(3125/18) = 13.176156;
    # winner p = e^(mu/c) / (2 e^(mu/c)) = 1/2, delta mu = sigma^2 / c * (1 - 1/2)
    # = (625/9) / 13.176156 / 2 = 2.635231; the loser loses as much. (OpenSkill's default
    # tau = 25/300 first adds tau^2 to sigma^2: 69.45139 / 13.176683 / 2 = 2.635389.)
    assert _stats.RATING_TAU == 0.0
    (mu_a, _), (mu_b, _) = _stats.openskill_ratings(np.array([[2.0, 1.0]]))
    assert mu_a == pytest.approx(25 + 2.635231, abs=1e-6)
    assert mu_b == pytest.approx(25 - 2.635231, abs=1e-6)
    # a tie between equal ratings leaves both means at 25 (symmetry, zero sum)
    (mu_a, _), (mu_b, _) = _stats.openskill_ratings(np.array([[1.0, 1.0]]))
    assert mu_a == pytest.approx(25.0) and mu_b == pytest.approx(25.0)


# ------------------------------------------------------------------ schedule


def test_duplicate_schedule_rotates_every_deal_through_every_seat():
    s = make_schedule(6, 3, seed=0, duplicate=True)
    # 6 games / 3 players = 2 deals, each played in rotations 0, 1, 2
    assert [g.deal for g in s] == [0, 0, 0, 1, 1, 1]
    # rotation r puts slot k at seat (k + r) % 3, i.e. seating[seat] = (seat - r) % 3
    assert [g.seating for g in s[:3]] == [(0, 1, 2), (2, 0, 1), (1, 2, 0)]
    assert len({g.env_seed for g in s[:3]}) == 1 and s[0].env_seed != s[3].env_seed
    # bot seeds differ from game to game
    assert len({g.bot_seeds for g in s}) == 6


def test_plain_schedule_has_one_deal_per_game():
    s = make_schedule(4, 2, seed=0, duplicate=False)
    assert [g.deal for g in s] == [0, 1, 2, 3]
    assert [g.seating for g in s] == [(0, 1), (1, 0), (0, 1), (1, 0)]
    assert len({g.env_seed for g in s}) == 4


def test_schedule_seeds_do_not_depend_on_the_length_of_the_run():
    assert make_schedule(8, 4, 5, True)[:4] == make_schedule(4, 4, 5, True)
    assert make_schedule(8, 4, 5, True) != make_schedule(8, 4, 6, True)


def test_num_games_must_be_a_multiple_of_the_player_count():
    with pytest.raises(ConfigError, match=r"\[2000, 2004\]"):
        make_schedule(2001, 4, 0, True)
    with pytest.raises(ConfigError, match="multiple"):
        make_schedule(0, 2, 0, False)


# ------------------------------------------------------------------ full runs on the fake game


def test_win_shares_points_and_margins_of_a_scripted_match(fake):
    a, b = ScriptBot([3, 1, 2, 1]), ScriptBot([2, 2, 2, 2])
    r = run_tournament(fake, [a, b], num_games=4, duplicate=False, env_kwargs=kw())
    assert r.labels == ["script#1", "script#2"]
    A, B = r.bots
    # A's points 3, 1, 2, 1 vs B's 2, 2, 2, 2: A wins game 0, ties game 2 (1/2 each), B wins 1, 3
    assert A.wins == 1.5 and B.wins == 2.5
    assert (A.win_rate, B.win_rate) == (0.375, 0.625)
    assert A.win_ci == pytest.approx(wilson_by_hand(1.5, 4), abs=1e-12)
    # points: A mean 7/4 = 1.75, deviations 1.25 -0.75 0.25 -0.75, squares 2.75, sd sqrt(2.75/3)
    # = 0.957427, se 0.478714, half 3.182446 * 0.478714 = 1.523481; B constant 2 -> [2, 2]
    assert A.points == 1.75 and A.points_ci == pytest.approx((0.226519, 3.273481), abs=1e-6)
    assert B.points == 2.0 and B.points_ci == (2.0, 2.0)
    # margins (2 players: own minus other): A 1, -1, 0, -1 -> mean -0.25, same spread as points
    assert A.margin == -0.25 and A.margin_ci == pytest.approx((-1.773481, 1.273481), abs=1e-6)
    assert B.margin == 0.25
    # head to head: A ahead in game 0, tied in game 2 -> (1 + 0.5) / 4
    assert r.head_to_head[0][1] == 0.375 and r.head_to_head[1][0] == 0.625
    # every bot was reset once per game with the schedule's seed for its slot
    assert a.seeds == [g["bot_seeds"][0] for g in r.games]
    assert b.seeds == [g["bot_seeds"][1] for g in r.games]


def test_ties_are_shared_and_same_named_bots_get_unique_labels(fake):
    lineup = [const("two", 2), const("two", 2), const("one", 1)]
    r = run_tournament(fake, lineup, num_games=6, env_kwargs=kw())
    assert r.labels == ["two#1", "two#2", "one"]
    # the two "two" bots tie for the win every game: 1/2 each, 3 wins of 6; "one" never wins
    assert [b.wins for b in r.bots] == [3.0, 3.0, 0.0]
    assert r.bots[0].win_ci == pytest.approx(wilson_by_hand(3, 6), abs=1e-12)
    assert r.bots[0].win_ci == pytest.approx((0.187616, 0.812384), abs=1e-6)
    # margins: two: 2 - (2 + 1)/2 = 0.5; one: 1 - (2 + 2)/2 = -1
    assert [b.margin for b in r.bots] == [0.5, 0.5, -1.0]
    # aggregate of the two "two" slots: per game mean share 1/2 -> win rate 0.5 over 6 games
    (agg,) = r.aggregates
    assert agg.label == "two (all 2)" and agg.slots == [0, 1]
    assert agg.win_rate == 0.5 and agg.points == 2.0 and agg.rating_mu is None
    assert agg.seat_games == [4, 4, 4]  # two slots x 2 games at each of 3 seats
    # always tied: equal ratings, above the loser
    assert r.bots[0].rating_mu == r.bots[1].rating_mu > r.bots[2].rating_mu
    assert r.head_to_head[0][1] == 0.5 and r.head_to_head[0][2] == 1.0 and r.head_to_head[2][0] == 0.0


@pytest.mark.parametrize("duplicate", [True, False])
def test_seat_rotation_cancels_a_seat_advantage(fake, duplicate):
    # seat 0 scores one point more: with equal bots seat 0 always wins (2 vs 1)
    r = run_tournament(fake, [const("a", 1), const("b", 1)], num_games=10, duplicate=duplicate,
                       env_kwargs=kw(seat_bonus=1))
    # each bot sits at seat 0 in 5 of the 10 games, so wins exactly 5 and averages (2 + 1) / 2
    assert [b.seat_games for b in r.bots] == [[5, 5], [5, 5]]
    assert [b.win_rate for b in r.bots] == [0.5, 0.5]
    assert [b.points for b in r.bots] == [1.5, 1.5]
    assert [s["win_rate"] for s in r.seats] == [1.0, 0.0]
    assert [s["points"] for s in r.seats] == [2.0, 1.0]


def test_four_players_each_slot_sits_at_each_seat_equally(fake):
    r = run_tournament(fake, [const(c, 0) for c in "abcd"], num_games=12,
                       env_kwargs=kw(hand_range=9))
    # 12 games = 3 deals x 4 rotations: every slot 3 times at every seat
    assert [b.seat_games for b in r.bots] == [[3, 3, 3, 3]] * 4


@pytest.mark.parametrize("seating, deals", [("cyclic", 10), ("permutations", 5)])
def test_duplicate_deals_give_equal_bots_identical_results(fake, seating, deals):
    lineup = [const("x", 0), const("y", 0), const("z", 0)]
    r = run_tournament(fake, lineup, num_games=30, env_kwargs=kw(hand_range=9), seating=seating)
    # every deal is replayed in each of the m seat orders (3 rotations or 3! = 6 permutations) and
    # each slot holds each seat's hand equally often, so over a deal each slot scores the same sum
    # and collects the same win shares: win rate exactly 1/3, equal mean points, margin 0 in every
    # deal (interval [0, 0])
    per_deal = 30 // deals
    assert r.seating == seating and r.num_deals == deals and r.games_per_deal == per_deal
    assert [g["env_seed"] for g in r.games[:per_deal]].count(r.games[0]["env_seed"]) == per_deal
    assert [b.wins for b in r.bots] == pytest.approx([10.0, 10.0, 10.0], abs=1e-9)
    assert r.bots[0].points == r.bots[1].points == r.bots[2].points
    for b in r.bots:
        assert b.margin == pytest.approx(0.0, abs=1e-12)
        assert b.margin_ci == pytest.approx((0.0, 0.0), abs=1e-12)


def test_same_seed_same_result_with_one_or_two_workers(fake):
    lineup = [("rand", RandomBot), ("rand", RandomBot), const("c", 5)]
    opts = dict(num_games=60, seed=7, env_kwargs=kw(hand_range=5))
    one = run_tournament(fake, lineup, workers=1, **opts).to_dict()
    two = run_tournament(fake, lineup, workers=2, **opts).to_dict()
    again = run_tournament(fake, lineup, workers=1, **opts).to_dict()
    other = run_tournament(fake, lineup, workers=1, **{**opts, "seed": 8}).to_dict()
    for d in (one, two, again, other):
        for timing in ("workers", "elapsed_s", "games_per_s"):
            d.pop(timing)
    assert one == two == again
    assert one["games"] != other["games"]
    # the random bots really were random: not every game the same
    assert len({tuple(g["points"]) for g in one["games"]}) > 1


def test_illegal_action_fails_loudly(fake):
    # the mask allows only 0, 2, 4; the bot plays 1
    with pytest.raises(IllegalActionError, match="legal actions: \\[0, 2, 4\\]") as err:
        run_tournament(fake, [const("bad", 1), const("ok", 0)], num_games=2,
                       env_kwargs=kw(legal=[0, 2, 4]))
    assert any("tournament game 0" in n for n in err.value.__notes__)
    # the same error, same type, comes back from a worker process
    with pytest.raises(IllegalActionError, match="legal actions"):
        run_tournament(fake, [const("bad", 1), const("ok", 0)], num_games=4, workers=2,
                       env_kwargs=kw(legal=[0, 2, 4]))


def test_search_bots_get_belief_samples_of_their_own_seat(fake, monkeypatch):
    a, b = BeliefBot(), BeliefBot()
    run_tournament(fake, [a, b], num_games=2, duplicate=False, env_kwargs=kw(hand_range=9))
    # game 0: slot 0 at seat 0 acts first (0 picks so far); game 1: slot 0 at seat 1 acts second
    assert [(x["seat"], x["picks_so_far"]) for x in a.samples] == [(0, 0), (1, 1)]
    assert [(x["seat"], x["picks_so_far"]) for x in b.samples] == [(1, 1), (0, 0)]
    monkeypatch.delattr(fake_env, "sample_consistent_state")
    with pytest.raises(ConfigError, match="needs belief"):
        run_tournament(fake, [BeliefBot(), ConstBot(0)], num_games=2, env_kwargs=kw())


# ------------------------------------------------------------------ bad input


def test_unknown_game_names_the_legal_ones():
    with pytest.raises(ConfigError, match=r"legal values: \[.*'robada', 'tapeo'"):
        run_tournament("poker", ["random", "random"], num_games=2)


def test_unknown_bot_name_lists_the_registered_ones():
    with pytest.raises(ConfigError, match=r"no bot 'wizard'.*registered: \[.*'random'"):
        run_tournament("tapeo", ["random", "wizard"], num_games=2)


def test_a_policy_path_in_a_python_lineup_says_how_to_pass_it():
    with pytest.raises(ConfigError, match=r"no bot 'x/tapeo_ppo.onnx'.*\(label, factory\) pair: "
                                          r"hod.training.evaluate.resolve_bot"):
        run_tournament("tapeo", ["x/tapeo_ppo.onnx", "random"], num_games=2)


def test_bad_lineups_and_options(fake):
    bot = ConstBot(0)
    with pytest.raises(ConfigError, match="same bot instance"):
        run_tournament(fake, [bot, bot], num_games=2, env_kwargs=kw())
    with pytest.raises(ConfigError, match="workers=1"):
        run_tournament(fake, [ConstBot(0), ConstBot(1)], num_games=2, workers=2, env_kwargs=kw())
    with pytest.raises(ConfigError, match="functools.partial"):
        run_tournament(fake, [("l", lambda: ConstBot(0)), const("c", 0)], num_games=2, workers=2,
                       env_kwargs=kw())
    with pytest.raises(ConfigError, match=r"a lineup of 1 bot: 'fake' is played by 2 to 4 players"):
        run_tournament(fake, [const("a", 0)], num_games=2, env_kwargs=kw())
    with pytest.raises(ConfigError, match="num_players"):
        run_tournament(fake, [const("a", 0), const("b", 0)], num_games=2, env_kwargs=kw(num_players=3))
    with pytest.raises(ConfigError, match="workers"):
        run_tournament(fake, [const("a", 0), const("b", 0)], num_games=2, workers=0, env_kwargs=kw())
    with pytest.raises(ConfigError, match="seed"):
        run_tournament(fake, [const("a", 0), const("b", 0)], num_games=2, seed=-1, env_kwargs=kw())
    # the fake game takes 2..4 players; refused for its size, before the game count is checked
    with pytest.raises(ConfigError, match=r"a lineup of 5 bots: .*legal values: \[2, 3, 4\]"):
        run_tournament(fake, [const(c, 0) for c in "abcde"], num_games=5, env_kwargs=kw())
    with pytest.raises(TypeError, match="not a bot"):
        run_tournament(fake, [const("a", 0), 42], num_games=2, env_kwargs=kw())


# ------------------------------------------------------------------ outputs and CLI


def test_reports_are_written(fake, tmp_path):
    r = run_tournament(fake, [const("a", 3), const("b", 1)], num_games=2, env_kwargs=kw())
    r.save_json(tmp_path / "r.json")
    r.save_png(tmp_path / "r.png")
    r.save_markdown(tmp_path / "r.md")
    data = json.loads((tmp_path / "r.json").read_text())  # strict JSON: one deal -> null intervals
    assert data["bots"][0]["label"] == "a" and data["bots"][0]["win_rate"] == 1.0
    assert data["bots"][0]["points_ci"] == [None, None]
    assert len(data["games"]) == 2
    assert (tmp_path / "r.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = (tmp_path / "r.md").read_text()
    assert "| a | 2 | 100.0% |" in md and "Head to head" in md
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json", "r.md", "r.png"]  # no temp files
    assert r.stats("a") is r.bots[0]
    with pytest.raises(KeyError, match="labels"):
        r.stats("zz")


def test_cli_rejects_unknown_game(capsys):
    assert main(["--game", "chess", "--lineup", "random", "random"]) == 2
    assert "legal values: ['kuhn', 'robada', 'tapeo'" in capsys.readouterr().err


def test_cli_lists_bots(capsys):
    assert main(["--game", "tapeo", "--list-bots"]) == 0
    assert "random" in capsys.readouterr().out.split()


def test_results_pickle_for_worker_transport():
    # ScheduledGame and BotSpec travel to worker processes
    s = make_schedule(2, 2, 0, True)[0]
    assert pickle.loads(pickle.dumps(s)) == s
    spec = _play.BotSpec(name="random")
    assert pickle.loads(pickle.dumps(spec)) == spec


def test_cli_out_folder_that_cannot_be_made_fails_before_playing(tmp_path, capsys):
    from hod.benchmarks.tournament import main

    blocker = tmp_path / "file"
    blocker.write_text("x")  # a file where the output folder should be: the folder cannot be made
    rc = main(["--game", "tapeo", "--lineup", "random", "random", "--games", "2", "--no-progress",
               "--out", str(blocker / "sub" / "x")])
    assert rc == 2
    assert "cannot write in" in (err := capsys.readouterr().err) and "Not a directory" in err
    # a dangling link, and a folder name longer than the system allows: refused before playing too
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere" / "zz")
    for out in (tmp_path / "dangling" / "x", tmp_path / ("a" * 300) / "x"):
        assert main(["--game", "tapeo", "--lineup", "random", "random", "--games", "2", "--no-progress",
                     "--out", str(out)]) == 2
        assert "cannot write in" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dangling", "file"]   # nothing made, nothing left


def test_cli_out_is_checked_before_playing_and_its_folders_made_only_when_writing(tmp_path, capsys):
    args = ["--game", "tapeo", "--lineup", "random", "random", "--games", "2", "--no-progress", "--out"]
    # refused after the --out check (3 seats, 4 games): no folder is left behind
    assert main(["--game", "tapeo", "--lineup", "random", "random", "random", "--games", "4", "--no-progress",
                 "--out", str(tmp_path / "a" / "b")]) == 2
    assert "nearest legal values: [3, 6]" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
    # a prefix without a file name would write hidden .md/.json/.png
    assert main(args + [str(tmp_path / "c") + "/"]) == 2
    assert "names a folder, not a file prefix; legal: a prefix with a file name" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
    # one of the files is a folder: refused before playing
    (tmp_path / "x.json").mkdir()
    assert main(args + [str(tmp_path / "x")]) == 2
    assert "x.json is a folder; legal: a prefix whose .md, .json, .png files are not folders" in \
        capsys.readouterr().err
    assert [p.name for p in tmp_path.iterdir()] == ["x.json"]
    # a run that writes makes the missing folders then
    assert main(args + [str(tmp_path / "d" / "e" / "r")]) == 0
    assert sorted(p.name for p in (tmp_path / "d" / "e").iterdir()) == ["r.json", "r.md", "r.png"]


def test_save_outputs_writes_all_three_files_or_none(fake, tmp_path, monkeypatch, capsys):
    import errno
    from hod.evaluation import report
    from hod.evaluation.cli_options import save_outputs
    r = run_tournament(fake, [const("a", 3), const("b", 1)], num_games=2, env_kwargs=kw())
    for ext in (".md", ".json", ".png"):
        (tmp_path / f"r{ext}").write_text("old")

    def full(_):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(report, "png_bytes", full)   # the chart, rendered last, fails
    with pytest.raises(OSError, match="No space left"):
        save_outputs(r, str(tmp_path / "r"))
    assert [(tmp_path / f"r{ext}").read_text() for ext in (".md", ".json", ".png")] == ["old"] * 3
    monkeypatch.undo()
    (tmp_path / "r.png").unlink()
    (tmp_path / "r.png").mkdir()   # the last target is a folder: its rename would fail after the others
    with pytest.raises(IsADirectoryError):
        save_outputs(r, str(tmp_path / "r"))
    assert [(tmp_path / f"r{ext}").read_text() for ext in (".md", ".json")] == ["old"] * 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json", "r.md", "r.png"]   # no temporary file
    (tmp_path / "r.png").rmdir()
    save_outputs(r, str(tmp_path / "r"))
    assert json.loads((tmp_path / "r.json").read_text())["labels"] == ["a", "b"]
    assert (tmp_path / "r.png").read_bytes()[:4] == b"\x89PNG"


def test_cli_bot_options_build_the_named_seats_with_them_and_the_table_rules():
    from hod.benchmarks.tournament import with_bot_options
    lineup = with_bot_options("robada", ["search", "expert"], {"search": {"determinizations": 8, "whole_turn": True}},
                              {"closing_ace": False})
    assert lineup[1] == "expert" and lineup[0][0] == "search"
    bot = lineup[0][1]()
    # the options given, and the table's rule option the tournament tells every bot
    assert (bot.determinizations, bot.whole_turn, bot.rules.closing_ace) == (8, True, False)
    assert bot.name == "search"


@pytest.mark.parametrize("options, message", [
    ('{"greedy": {}}', r"'greedy', which is not in the lineup; legal: \['random', 'search'\]"),
    ('{"search": 3}', "must be a JSON object of options"),
    ('{"search": {"closing_ace": false}}', r"rule options \['closing_ace'\]"),
    ('{"search": {"determinizations": 0}}', "determinizations=0: legal values are integers"),
    ('{"search": {"name": "x"}}', r"sets \['name'\]: the game is --game"),
    ('{"search": {"rules": {}}}', r"rule options \['rules'\]"),
    ('[1]', "must be a JSON object"),
    ('{"search": {"seed": 3}}', "sets seed: the tournament seeds every bot from --seed"),
    ('{"random": {"num_players": 3}}', r"sets num_players 3, and the lineup seats 2; legal: 2, or leave it out"),
])
def test_cli_bad_bot_options_are_refused_before_playing(options, message, capsys, tmp_path):
    from hod.benchmarks.tournament import main
    rc = main(["--game", "robada", "--lineup", "search", "random", "--games", "2", "--no-progress",
               "--bot-options", options, "--out", str(tmp_path / "r")])
    assert rc == 2
    assert re.search(message, capsys.readouterr().err)
    assert list(tmp_path.iterdir()) == []   # nothing written


def test_cli_plays_with_bot_options_and_records_them(capsys, tmp_path):
    from hod.benchmarks.tournament import main
    rc = main(["--game", "tapeo", "--lineup", "search", "random", "--games", "2", "--no-progress",
               "--bot-options", '{"search": {"determinizations": 1}}', "--out", str(tmp_path / "r")])
    assert rc == 0
    out = capsys.readouterr().out
    assert "| search | 2 |" in out and "| random | 2 |" in out
    # the report says which options the bots had
    assert 'Bot options: `{"search": {"determinizations": 1}}`.' in out
    assert 'Bot options: `{"search": {"determinizations": 1}}`.' in (tmp_path / "r.md").read_text()
    assert json.loads((tmp_path / "r.json").read_text())["bot_options"] == {"search": {"determinizations": 1}}


def test_cli_policy_file_seat_takes_the_lineups_num_players(capsys, tmp_path):
    # --bot-options may repeat the lineup's size for a policy file too (it crashed with "got
    # multiple values for keyword argument 'num_players'" when the file was checked per size)
    from hod.benchmarks.tournament import main
    from hod.agents.onnx_policy import OPPONENTS_DIR
    onnx = str(OPPONENTS_DIR / "robada_ppo.onnx")
    rc = main(["--game", "robada", "--lineup", onnx, "random", "--games", "2", "--no-progress",
               "--bot-options", json.dumps({onnx: {"num_players": 2}}), "--out", str(tmp_path / "r")])
    assert rc == 0, capsys.readouterr().err
    assert json.loads((tmp_path / "r.json").read_text())["num_games"] == 2


def test_rating_sigma_shrinks_as_one_over_root_games():
    # Fixed bots do not drift between games (tau 0), so four times the games halve sigma: the
    # ladder can separate two close bots with enough games. (With OpenSkill's default tau =
    # 25/300, sigma stalls near 1.5: the ratio would be about 0.9.)
    pattern = [[2.0, 1.0]] * 3 + [[1.0, 2.0]] * 2            # slot 0 wins 60%
    (_, s100), _ = _stats.openskill_ratings(np.array(pattern * 20), orders=1)
    (_, s400), _ = _stats.openskill_ratings(np.array(pattern * 80), orders=1)
    assert s400 / s100 == pytest.approx(0.5, abs=0.05)


def test_ratings_do_not_follow_the_last_games():
    # slot 0 wins the first 60 games, slot 1 the last 40: slot 0 won 60% of them. Rated online in
    # the played order only, the last 40 updates leave slot 1 ahead; averaged over 16 orders, the
    # 60/40 split shows (in a random order the wins are spread, so the last updates cancel).
    keys = np.array([[2.0, 1.0]] * 60 + [[1.0, 2.0]] * 40)
    (mu0, _), (mu1, _) = _stats.openskill_ratings(keys, orders=1)
    assert mu1 > mu0
    (mu0, _), (mu1, _) = _stats.openskill_ratings(keys)
    assert mu0 > mu1
    with pytest.raises(ValueError, match="legal values are integers >= 1"):
        _stats.openskill_ratings(keys, orders=0)
    with pytest.raises(ValueError, match=r"\(games, slots\) array"):
        _stats.openskill_ratings(np.array([2.0, 1.0]))
