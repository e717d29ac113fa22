"""The luck correction's decision terms (evaluation/luck.py, AIVAT's action terms with the
policy drawn again: Bot.resample_actions).

Checked: the term by hand, at a sequential decision and inside a simultaneous step (the other
seats' picks as played); draws that agree add exactly 0 and play nothing out; the bots' own
generators are untouched, so a run with decision terms plays the very games of a plain run; a
random bot's terms have mean 0 (unbiased); bots that cannot say are left alone; bad values are
refused with the legal ones named.
"""
import numpy as np
import pytest

from hod import agents
from hod.agents.base import RandomBot
from hod.benchmarks import tournament as tournament_cmd
from hod.core.errors import ConfigError
from hod.evaluation import luck as L
from hod.evaluation.tournament import run_tournament


class NoChance:
    """A chance hook with no event: only decision terms reach the luck."""

    value_name = "none"

    def count(self, state):
        return 0


class Moves:
    """A toy state: the moves applied to it, in order."""

    def __init__(self, moves=()):
        self.moves = list(moves)

    def clone(self):
        return Moves(self.moves)


APPLIED = []


def _apply(state, move):
    APPLIED.append(move)
    state.moves.append(move)


#: V written down by the last move: action 0 is worth (4, -4) points and wins 0.8 / 0.2,
#: action 1 (0, 0) and 0.5 / 0.5, action 2 (-2, 2) and 0.2 / 0.8.
V_BY_ACTION = {0: [[4.0, -4.0], [0.8, 0.2]], 1: [[0.0, 0.0], [0.5, 0.5]], 2: [[-2.0, 2.0], [0.2, 0.8]]}


def _v_last(state):
    return np.array(V_BY_ACTION[state.moves[-1]], np.float64)


def test_a_sequential_decision_term_by_hand():
    t = L.LuckTracker(NoChance(), _v_last, samples=1, num_players=2, apply=_apply)
    t.start(env_seed=3)
    t.decided(Moves(), seat=0, action=0, draws=[1, 2])
    t.moved()
    # V(after 0) - (V(after 1) + V(after 2)) / 2 = (4, -4) - ((0 - 2) / 2, (0 + 2) / 2) = (4, -4) - (-1, 1)
    # = (5, -5) points; win share 0.8 - (0.5 + 0.2) / 2 = 0.45 and 0.2 - (0.5 + 0.8) / 2 = -0.45
    np.testing.assert_allclose(t.decision_luck, [[5.0, -5.0], [0.45, -0.45]], rtol=0, atol=1e-12)
    np.testing.assert_allclose(t.luck, t.decision_luck, rtol=0, atol=0)
    assert (t.resampled, t.disagreed) == (1, 1)
    # a draw equal to the action played is counted among the draws: 0 drawn again and 2:
    # (4, -4) - ((4 - 2) / 2, (-4 + 2) / 2) = (3, -3) more; win 0.8 - (0.8 + 0.2) / 2 = 0.3
    t.decided(Moves(), seat=0, action=0, draws=[0, 2])
    t.moved()
    np.testing.assert_allclose(t.decision_luck, [[8.0, -8.0], [0.75, -0.75]], rtol=0, atol=1e-12)


def test_draws_that_agree_add_exactly_zero_and_play_nothing():
    t = L.LuckTracker(NoChance(), _v_last, samples=1, num_players=2, apply=_apply)
    t.start(env_seed=3)
    APPLIED.clear()
    t.decided(Moves(), seat=1, action=2, draws=[2, 2, 2])
    t.decided(Moves(), seat=0, action=1, draws=None)      # a bot without decision terms
    t.moved()
    assert APPLIED == []
    assert t.luck.tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert (t.resampled, t.disagreed) == (1, 0)


def _v_joint(state):
    """Three seats; the points of seat k are 10 * (pick of seat 1) + pick of seat k, the win
    shares 1/3 each (a value of the joint move, to see which picks the term used)."""
    picks = state.moves[-1]
    pts = [10.0 * picks[1] + picks[k] for k in range(3)]
    return np.array([pts, [1 / 3] * 3], np.float64)


def test_a_simultaneous_decision_uses_the_other_seats_picks_as_played():
    t = L.LuckTracker(NoChance(), _v_joint, samples=1, num_players=3, apply=_apply, simultaneous=True)
    t.start(env_seed=0)
    APPLIED.clear()
    t.decided(Moves(), seat=0, action=4, draws=None)
    t.moved()                                     # one pick of three: the step is not over
    t.decided(Moves(), seat=1, action=2, draws=[5])
    t.moved()
    assert APPLIED == [] and t.luck.tolist() == [[0.0] * 3, [0.0] * 3]
    t.decided(Moves(), seat=2, action=7, draws=None)
    t.moved()
    # the joint moves played out: (4, 2, 7) as played and (4, 5, 7) with seat 1's draw
    assert sorted(APPLIED) == [[4, 2, 7], [4, 5, 7]]
    # seat 0: (20 + 4) - (50 + 4) = -30; seat 1: (20 + 2) - (50 + 5) = -33; seat 2: (20 + 7) - (50 + 7) = -30
    np.testing.assert_allclose(t.decision_luck, [[-30.0, -33.0, -30.0], [0.0, 0.0, 0.0]], rtol=0, atol=1e-12)


def test_resampling_leaves_the_bots_generator_as_it_was():
    obs = {"observation": np.zeros(192, np.float32), "action_mask": np.ones(27, np.int8)}
    a, b = RandomBot(seed=4), RandomBot(seed=4)
    a.game = b.game = "robada"
    draws = a.resample_actions(obs, None, [1, 2, 3, 4, 5, 6])
    assert len(set(draws)) > 1                                   # other draws of a random policy
    assert [a.act(obs) for _ in range(5)] == [b.act(obs) for _ in range(5)]
    with pytest.raises(ConfigError, match="non-negative int"):
        a.resample_actions(obs, None, [-1])
    with pytest.raises(ConfigError, match="non-negative ints"):
        a.resample_actions(obs, None, [])


@pytest.mark.parametrize("game, name", [("robada", "expert"), ("tapeo", "expert"), ("tapeo", "ranking")])
def test_deterministic_bots_offer_no_draws(game, name):
    bot = agents.make(game, name, seed=0)
    assert bot.resample_actions({}, None, [1]) is None


def test_search_bots_that_keep_other_state_offer_no_draws():
    whole = agents.make("robada", "rollout", seed=0, whole_turn=True)
    assert whole.resample_actions({}, None, [1]) is None
    tapeo_by_expert = agents.make("tapeo", "search", seed=0, playout="expert")
    assert tapeo_by_expert.resample_actions({}, None, [1]) is None


@pytest.mark.parametrize("game, lineup, options", [
    ("robada", ["search", "expert"], {"determinizations": 4}),
    ("tapeo", ["search", "expert"], {"determinizations": 4}),
])
def test_the_games_are_the_plain_games(game, lineup, options):
    # the resampled decisions draw from generators of their own: every game's points are the plain run's
    bots = [(nm, lambda nm=nm: agents.make(game, nm, seed=0, **(options if nm == "search" else {})))
            for nm in lineup]
    plain = run_tournament(game, bots, 4, seed=2, estimator="plain")
    dec = run_tournament(game, bots, 4, seed=2, estimator="both", value="playout", luck_samples=2, luck_decisions=2)
    assert [g["points"] for g in dec.games] == [g["points"] for g in plain.games]
    assert dec.luck["decisions"] == 2
    assert dec.luck["resampled_per_game"] > 0
    # the expert's slot gets no term of its own: every decision term is the search's draws
    assert all(len(g["decision_luck_points"]) == 2 for g in dec.games)
    assert sum(g["disagreed"] for g in dec.games) <= sum(g["resampled"] for g in dec.games)


def test_a_random_bots_decision_terms_have_mean_zero():
    # random against greedy with the game's cheap value: E[term | state] = 0 (the draws and the
    # action played are independent draws of the uniform policy), so the decision luck's 95%
    # interval holds 0 for each slot; the terms are not all 0 (the value tells actions apart)
    r = run_tournament("robada", ["random", "greedy"], 120, seed=6, estimator="both", luck_samples=2,
                       luck_decisions=1)
    dec = np.array([g["decision_luck_points"] for g in r.games])
    assert np.abs(dec[:, 0]).max() > 0.1
    assert "decision_samples" not in r.luck                  # the cheap value plays nothing out
    assert "drawn 1 more times (" in r.to_markdown() and "points `random`" in r.to_markdown()
    for q in ("points", "win_share"):
        for slot in range(2):
            m, lo, hi = r.luck["decision_luck_mean"][q][slot]
            assert lo <= 0.0 <= hi, (q, slot, m, lo, hi)
    # greedy offers no draws: its slot's decision luck comes only from the random seat's terms,
    # which at two seats are opposite in win share (shares add up to 1 in every position)
    win = np.array([g["decision_luck_win_share"] for g in r.games])
    np.testing.assert_allclose(win[:, 0], -win[:, 1], rtol=0, atol=1e-12)


def test_bad_decision_counts_are_refused():
    for bad in (-1, 65, True, 1.5, "2"):
        with pytest.raises(ConfigError, match=r"0\.\.64"):
            L.check_decisions(bad)
    with pytest.raises(ConfigError, match="luck_decisions"):
        run_tournament("robada", ["random", "random"], 2, estimator="plain", luck_decisions=1)


def test_the_command_refuses_decisions_without_a_correction(capsys):
    with pytest.raises(SystemExit) as e:
        tournament_cmd.main(["--game", "robada", "--lineup", "random", "random", "--games", "2",
                             "--luck-decisions", "65"])
    assert e.value.code == 2 and "0..64" in capsys.readouterr().err
    assert tournament_cmd.main(["--game", "robada", "--lineup", "random", "random", "--games", "2",
                                "--estimator", "plain", "--luck-decisions", "1", "--no-progress"]) == 2
    assert "--luck-decisions is part of the luck correction" in capsys.readouterr().err


class NoResample:
    """A duck-typed bot (act and reset only): no draws, no terms."""

    def reset(self, seed=None):
        self.rng = np.random.default_rng(seed)

    def act(self, observation, belief=None):
        return int(self.rng.choice(np.flatnonzero(observation["action_mask"])))


class BadDraws(RandomBot):
    """Returns an action outside the mask as its draw."""

    game = "robada"

    def resample_actions(self, observation, belief, seeds):
        return [int(np.flatnonzero(observation["action_mask"] == 0)[0])] * len(seeds)


def test_bots_without_draws_and_bad_draws():
    ducks = run_tournament("robada", [("duck", NoResample), ("duck2", NoResample)], 2, seed=1, estimator="both",
                           luck_samples=1, luck_decisions=1)
    assert ducks.luck["resampled_per_game"] == 0.0
    assert all(g["decision_luck_points"] == [0.0, 0.0] for g in ducks.games)
    r = run_tournament("robada", [("duck", NoResample), "random"], 2, seed=1, estimator="both", luck_samples=1,
                       luck_decisions=1)
    assert r.luck["resampled_per_game"] > 0          # the random slot's decisions
    with pytest.raises(ConfigError, match="resample_actions returned"):
        run_tournament("robada", [("bad", BadDraws), "random"], 2, seed=1, estimator="both", luck_samples=1,
                       luck_decisions=1)


@pytest.mark.parametrize("lineup", [["expert", "expert"], ["random", "expert"]])
def test_decision_values_give_equal_positions_equal_values_and_put_the_generators_back(lineup):
    # the bots' own draws inside the playouts are common to every position, as the later deals are:
    # three copies of one position get one value; the copies' generators are put back, so a chance
    # event's value afterwards is what it was without the call
    from hod.evaluation.luck_playout import LineupPlayoutValue
    from robada_env.rules import engine as reng

    def fresh():
        v = LineupPlayoutValue("robada", [agents.make("robada", b, seed=0) for b in lineup], playouts=8)
        v.seat_lineup([0, 1], env_seed=9)
        return v

    s = reng.new_game(reng.Config(num_players=2), seed=4)
    v = fresh()
    vals = v.decision_values([s, s.clone(), s.clone()], decision=3, playouts=16)
    assert vals.shape == (3, 2, 2)
    assert vals[0].tolist() == vals[1].tolist() == vals[2].tolist()
    after = v.values([s], actual=0, event=1)
    np.testing.assert_array_equal(after, fresh().values([s], actual=0, event=1))
    with pytest.raises(ConfigError, match="playouts=0"):
        v.decision_values([s], 0, playouts=0)


def test_the_chance_terms_are_those_of_a_run_without_decision_terms():
    bots = [("search", lambda: agents.make("robada", "search", seed=0, determinizations=4)), "expert"]
    kw = dict(estimator="both", value="playout", luck_samples=2)
    base = run_tournament("robada", bots, 4, seed=2, **kw)
    dec = run_tournament("robada", bots, 4, seed=2, luck_decisions=2, **kw)
    for g0, g1 in zip(base.games, dec.games):
        np.testing.assert_allclose(np.subtract(g1["luck_points"], g1["decision_luck_points"]), g0["luck_points"],
                                   rtol=0, atol=1e-9)
        np.testing.assert_allclose(np.subtract(g1["luck_win_share"], g1["decision_luck_win_share"]),
                                   g0["luck_win_share"], rtol=0, atol=1e-12)
    # the rows' chance-only ratios are the run without decision terms' ratios
    for b0, b1 in zip(base.bots, dec.bots):
        assert b1.corrected["chance_only"]["var_ratio"]["margin"] == pytest.approx(b0.corrected["var_ratio"]["margin"])


def test_report_and_json_name_the_decision_terms(tmp_path):
    import json

    out = tmp_path / "run"
    assert tournament_cmd.main(["--game", "robada", "--lineup", "random", "greedy", "--games", "4", "--seed", "1",
                                "--value", "playout", "--luck-samples", "2", "--luck-decisions", "2",
                                "--luck-decision-samples", "3", "--no-progress", "--out", str(out)]) == 0
    md = (tmp_path / "run.md").read_text()
    assert "drawn 2 more times, each action's position from 3 playouts" in md
    assert "with the chance terms alone" in md
    data = json.loads((tmp_path / "run.json").read_text())
    assert data["luck"]["decisions"] == 2 and data["luck"]["decision_samples"] == 3
    assert {"resampled_per_game", "disagreed_per_game", "decision_luck_mean"} <= set(data["luck"])
    game = data["games"][0]
    assert {"decision_luck_points", "decision_luck_win_share", "resampled", "disagreed"} <= set(game)
    assert game["resampled"] > 0 and len(game["decision_luck_points"]) == 2
    # a lineup with no draws says so, and adds no controls to the fitted estimate
    none = run_tournament("robada", ["expert", "greedy"], 2, seed=1, estimator="both", luck_samples=1,
                          luck_decisions=2)
    plain_controls = run_tournament("robada", ["expert", "greedy"], 2, seed=1, estimator="both", luck_samples=1)
    assert none.bots[0].corrected["fitted"]["controls"] == plain_controls.bots[0].corrected["fitted"]["controls"]
    assert "no bot of the lineup offers draws" in none.to_markdown()


def test_decision_samples_are_refused_without_playout_decisions():
    for kw in ({"luck_decision_samples": 4, "luck_decisions": 1},                       # no playout value
               {"luck_decision_samples": 4, "value": "playout"},                        # no decisions
               {"luck_decision_samples": 5000, "value": "playout", "luck_decisions": 1}):
        with pytest.raises(ConfigError, match="luck_decision_samples"):
            run_tournament("robada", ["random", "random"], 2, estimator="both", **kw)
