"""The value that knows the lineup (evaluation/luck_playout.py): playouts of copies of the table's
own bots, with common random numbers for the later deals.

Checked: after the last deal nothing is left to chance, so the playout of the same deterministic
bots replays the game to its actual final scores (exact, from the rules: no later deal); the seats
follow the game's seating; the correction stays unbiased through the tournament (a bot against
itself: exactly opposite corrected margins); it refuses what it cannot play.
"""
import numpy as np
import pytest

from hod import agents
from hod.core.errors import ConfigError
from hod.evaluation import luck as L
from hod.evaluation.luck_playout import LineupPlayoutValue
from hod.evaluation.tournament import run_tournament
from tapeo_env.rules import engine as teng


def _play(bots, seed, stop_round=None):
    """Play a 2-player Tapeo game with ``bots`` (deterministic) on the single engine from
    ``seed``; returns (the state right after round ``stop_round``'s deal, the final state)."""
    from tapeo_env.rules.observation import encode

    state = teng.new_game(teng.Config(num_players=2), seed=seed)
    kept = state.clone() if stop_round == 0 else None
    while not state.terminal:
        picks = [bots[i].act({"observation": encode(state, i), "action_mask": teng.legal_mask(state, i)})
                 for i in range(2)]
        before = state.round
        teng.apply_actions(state, picks)
        if stop_round is not None and state.round == stop_round and before != state.round and not state.terminal:
            kept = state.clone()
    return kept, state


def test_after_the_last_deal_the_playout_replays_the_game():
    # 3 rounds (RULINGS T1): after round 3's deal (round index 2) no deal is left, so the playouts
    # of two deterministic bots (ranking's fixed order, no generator used) end with the game's own
    # final scores whatever the future seeds; win share: the winner's 1 (1/k each for k tied, T10)
    a, b = agents.make("tapeo", "ranking", seed=0), agents.make("tapeo", "ranking", seed=0)
    at_last, final = _play([a, b], seed=11, stop_round=2)
    assert at_last is not None and at_last.round == 2 and at_last.pick == 0
    v = LineupPlayoutValue("tapeo", [agents.make("tapeo", "ranking", seed=1), agents.make("tapeo", "ranking", seed=2)],
                           playouts=3)
    v.seat_lineup([0, 1], env_seed=11)
    got = v.values([at_last, at_last], actual=0, event=2)
    scores = np.asarray(final.final_scores, np.float64)
    won = np.zeros(2)
    won[list(final.winners)] = 1.0 / len(final.winners)
    for row in got:   # the actual state (3 playouts) and its copy (1): the game's own end
        assert row[0].tolist() == scores.tolist() and row[1].tolist() == won.tolist()


def test_the_seats_follow_the_seating():
    # ranking in seat 0 and random in seat 1, or swapped: the same seating and seed replay the same
    # playouts; the swapped seating plays other bots in the seats, so other values
    v = LineupPlayoutValue("tapeo", [agents.make("tapeo", "ranking", seed=1), agents.make("tapeo", "random", seed=2)],
                           playouts=4)
    state = teng.new_game(teng.Config(num_players=2), seed=5)
    v.seat_lineup([0, 1], env_seed=5)
    x = v(state)
    v.seat_lineup([0, 1], env_seed=5)
    assert v(state).tolist() == x.tolist()          # same seating and seed: the same playouts
    v.seat_lineup([1, 0], env_seed=5)
    y = v(state)
    assert y.shape == (2, 2) and not np.array_equal(x, y)


def test_an_expert_seat_is_played_in_batch():
    # the expert has act_batch (its scorer compiled): each playout step asks it once for every row
    # of its seat, never row by row; the playouts end with real scores and shared wins
    expert, ranking = agents.make("tapeo", "expert", seed=1), agents.make("tapeo", "ranking", seed=2)
    rows = []
    batch = expert.act_batch
    expert.act = lambda *a, **k: pytest.fail("the playout asked the expert row by row")
    expert.act_batch = lambda o, m: rows.append(len(o)) or batch(o, m)
    v = LineupPlayoutValue("tapeo", [expert, ranking], playouts=4)
    v.seat_lineup([1, 0], env_seed=7)
    state = teng.new_game(teng.Config(num_players=2), seed=6)
    got = v.values([state, state], actual=0)
    assert rows == [5] * 27              # 4 playouts + 1 of the other state; 3 rounds x 9 picks at 2 players
    assert got.shape == (2, 2, 2) and np.isfinite(got).all()
    assert np.allclose(got[:, 1].sum(axis=1), 1.0)


def test_a_bot_against_itself_is_at_par_with_the_playout_value():
    r = run_tournament("tapeo", ["greedy", "greedy"], 8, seed=3, estimator="both", luck_samples=2, value="playout")
    c0, c1 = r.bots[0].corrected, r.bots[1].corrected
    assert c0["margin"] == pytest.approx(-c1["margin"], abs=1e-9)
    assert c0["win_rate"] + c1["win_rate"] == pytest.approx(1.0, abs=1e-9)
    assert r.luck["value"] == "playout" and r.luck["events_per_game"] == 3.0


def test_what_it_cannot_play_is_refused():
    with pytest.raises(ConfigError, match="legal values: an int >= 1"):
        LineupPlayoutValue("tapeo", [agents.make("tapeo", "greedy", seed=0)] * 2, playouts=0)
    with pytest.raises(ConfigError, match="has none; legal: another value .*'tapeo' or 'robada'"):
        LineupPlayoutValue("kuhn", [agents.make("kuhn", "random", seed=0)] * 2)
    v = LineupPlayoutValue("tapeo", [agents.make("tapeo", "greedy", seed=0)] * 2, playouts=1)
    for bad in ([0, 1, 1], [0, 5], [1]):
        with pytest.raises(ConfigError, match=r"legal: an order of the slots 0..1, one per seat"):
            v.seat_lineup(bad, 3)
    with pytest.raises(ConfigError, match="luck_value"):
        L.check_value("rollouts")
    with pytest.raises(ConfigError, match="cannot be copied"):
        run_tournament("tapeo", [agents.make("tapeo", "greedy", seed=0), "greedy"], 2, seed=0, estimator="both",
                       luck_samples=2, value="playout")


def test_a_search_bot_is_played_out_by_its_surrogate():
    # a search per playout row would cost a search per step: the value plays the network the
    # search ranks its candidates with (its playout_surrogate), the other slot's bot as given
    search = agents.make("tapeo", "search", seed=0, determinizations=2)
    greedy = agents.make("tapeo", "greedy", seed=0)
    v = LineupPlayoutValue("tapeo", [search, greedy], playouts=2)
    assert v.bots[0] is search.playout_surrogate() and v.bots[1] is greedy
    assert not getattr(v.bots[0], "needs_belief", False)
    assert v.played_by == ["its playout_surrogate(): tapeo_ppo.onnx", "itself"]
    state = teng.new_game(teng.Config(num_players=2), seed=3)
    v.seat_lineup([0, 1], env_seed=3)
    assert v(state).shape == (2, 2)


def test_the_tournament_command_takes_value_playout(capsys):
    from hod.benchmarks.tournament import main as tournament_main

    assert tournament_main(["--game", "tapeo", "--lineup", "greedy", "ranking", "--games", "2", "--value", "playout",
                            "--luck-samples", "1", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "Luck-corrected estimates" in out
    assert ("Value function `playout` (playouts of the lineup's own bots: 1 from each position reached, one from "
            "each re-dealt one; inside them `greedy` by itself; `ranking` by itself)") in out
    assert tournament_main(["--game", "robada", "--lineup", "greedy", "random", "--games", "2", "--value", "playout",
                            "--luck-samples", "1", "--no-progress"]) == 0
    assert "Luck-corrected estimates" in capsys.readouterr().out


def test_a_surrogate_export_plays_its_slot_inside_the_playouts():
    # the export in place of greedy inside the playouts; ranking keeps a copy of itself; the
    # games themselves are played by greedy (the plain result equals a run without surrogates)
    from hod.agents.onnx_policy import OnnxPolicy
    from hod.evaluation.play import BotSpec

    path = "agents/opponents/tapeo_ppo.onnx"
    table = L.LuckTable("tapeo", 2, [BotSpec(name="greedy"), BotSpec(name="ranking")], {},
                        L.LuckSpec("playout", 1, surrogates=(path, None)))
    bots = table.tracker.value.bots
    assert isinstance(bots[0], OnnxPolicy) and type(bots[1]).__name__ == "RankingBot"
    a = run_tournament("tapeo", ["greedy", "ranking"], 2, seed=4, estimator="both", luck_samples=1, value="playout",
                       luck_surrogates={"greedy": path})
    b = run_tournament("tapeo", ["greedy", "ranking"], 2, seed=4, estimator="both", luck_samples=1, value="playout")
    assert [g["points"] for g in a.to_dict(include_games=True)["games"]] == \
        [g["points"] for g in b.to_dict(include_games=True)["games"]]
    assert a.luck["played_by"] == {"greedy": f"surrogate {path}", "ranking": "itself"}
    assert b.luck["played_by"] == {"greedy": "itself", "ranking": "itself"}


def test_bad_surrogates_are_refused():
    with pytest.raises(ConfigError, match="legal: with value='playout'"):
        L.check_surrogates({"greedy": "a.onnx"}, ["greedy", "ranking"], None)
    with pytest.raises(ConfigError, match="legal: a dict of lineup bot names to ONNX export paths"):
        L.check_surrogates({"greedy": 3}, ["greedy", "ranking"], "playout")
    with pytest.raises(ConfigError, match=r"names \['expert'\], which no lineup slot plays; legal names: "
                                          r"\['greedy', 'ranking'\]"):
        L.check_surrogates({"expert": "a.onnx"}, ["greedy", "ranking"], "playout")
    assert L.check_surrogates({"ranking": "a.onnx"}, ["greedy", "ranking"], "playout") == (None, "a.onnx")
    assert L.check_surrogates(None, ["greedy"], None) == ()


def test_the_command_names_the_legal_values(capsys):
    from hod.benchmarks.tournament import main as tournament_main

    assert tournament_main(["--game", "tapeo", "--lineup", "greedy", "ranking", "--games", "2", "--value", "bogus",
                            "--no-progress"]) == 2
    assert "--value 'bogus'; legal: playout, or a value network file PREFIX.npz" in capsys.readouterr().err
    assert tournament_main(["--game", "kuhn", "--lineup", "random", "random", "--games", "2", "--value", "playout",
                            "--no-progress"]) == 2
    assert "'kuhn' declares no chance hook" in capsys.readouterr().err
    with pytest.raises(ConfigError, match="legal: with estimator 'corrected' or 'both'"):
        run_tournament("tapeo", ["greedy", "ranking"], 2, value="playout")
    with pytest.raises(ConfigError, match="legal: with estimator 'corrected' or 'both'"):
        run_tournament("tapeo", ["greedy", "ranking"], 2, luck_surrogates={"greedy": "a.onnx"})
