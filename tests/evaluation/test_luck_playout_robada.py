"""The value that knows the lineup (evaluation/luck_playout.py) for Ronda Robada: playouts in the
batched engine loaded from the game's states (robada_env.rules.batched.state_record), the cards
still to deal drawn afresh (redraw_future), one seat acting at a time.

Checked: after the last deal nothing is left to chance, so the playouts of a deterministic bot
replay the game to its own final points (exact, from the rules: no card left to deal) whatever
the future seeds; the same state and future seed give the same playout (common random numbers);
the expert is asked in batch and only for the rows where its seat acts; the planner-fed network in
one inference per seat and step; search and rollout are played out by their expert; unbiased
through the tournament (the luck means' intervals hold 0; a bot against itself is at par exactly).
"""
import numpy as np
import pytest

from hod import agents
from hod.agents.base import Bot, legal_actions
from hod.evaluation.luck_playout import LineupPlayoutValue
from hod.evaluation.tournament import run_tournament
from robada_env.rules import engine as reng
from robada_env.rules.observation import decode, encode


class FirstLegal(Bot):
    """Plays its lowest legal action: deterministic, no generator."""

    game = "robada"

    def act(self, observation, belief=None):
        return int(legal_actions(observation)[0])


def _play(n, seed, stop_at_deck):
    """A game of FirstLegal bots on the single engine; returns (the state right after the deal
    that leaves ``stop_at_deck`` cards in the deck, the final state)."""
    s = reng.new_game(reng.Config(num_players=n), seed=seed)
    bot = FirstLegal(seed=0)
    kept = s.clone() if len(s.deck) == stop_at_deck else None
    while not s.terminal:
        before = len(s.deck)
        reng.apply_action(s, bot.act({"observation": encode(s, s.current), "action_mask": reng.legal_mask(s, s.current)}))
        if len(s.deck) == stop_at_deck < before and not s.terminal:
            kept = s.clone()
    return kept, s


@pytest.mark.parametrize("n", [2, 3, 4])
def test_after_the_last_deal_the_playout_replays_the_game(n):
    # R6: the last deal empties the deck; from there the play of deterministic bots is the game's
    # own, so every playout (3 from the actual state, 1 from its copy) ends with the game's final
    # points; win share 1 to the top score (1/k each for k tied, R8)
    last, final = _play(n, seed=7, stop_at_deck=0)
    assert last is not None and len(last.deck) == 0 and all(len(h) == 3 for h in last.hands)
    v = LineupPlayoutValue("robada", [FirstLegal(seed=1) for _ in range(n)], playouts=3)
    v.seat_lineup(list(range(n)), env_seed=7)
    got = v.values([last, last], actual=0, event=3)
    top = max(final.points)
    won = [1.0 / final.points.count(top) if p == top else 0.0 for p in final.points]
    for row in got:
        assert row[0].tolist() == [float(p) for p in final.points] and row[1].tolist() == won


def test_the_same_future_seed_gives_the_same_playout():
    # one playout each: the re-dealt copy of the actual state takes the actual state's future seed
    # (common random numbers), so the same state gives the same outcome; before the last deal
    # the cards still to deal are drawn afresh, so another game seed gives another deck
    s = reng.new_game(reng.Config(num_players=2), seed=4)
    v = LineupPlayoutValue("robada", [FirstLegal(seed=1), FirstLegal(seed=2)], playouts=1)
    v.seat_lineup([0, 1], env_seed=4)
    a = v.values([s, s], actual=0, event=0)
    assert a[0].tolist() == a[1].tolist()
    outs = set()
    for env_seed in range(6):
        v.seat_lineup([0, 1], env_seed=env_seed)
        outs.add(tuple(v.values([s], actual=0, event=0)[0, 0]))
    assert len(outs) > 1


def test_the_expert_is_asked_in_batch_for_the_rows_where_it_acts():
    expert, greedy = agents.make("robada", "expert", seed=1), agents.make("robada", "greedy", seed=2)
    asked = []
    batch = expert.act_batch
    expert.act = lambda *a, **k: pytest.fail("the playout asked the expert row by row")

    def recording(o, m):
        asked.append([decode(row).to_act for row in o])
        return batch(o, m)

    expert.act_batch = recording
    v = LineupPlayoutValue("robada", [greedy, expert], playouts=4)
    v.seat_lineup([1, 0], env_seed=7)                 # the expert (slot 1) sits in seat 0
    s = reng.new_game(reng.Config(num_players=2), seed=6)
    got = v.values([s, s], actual=0)
    assert asked and all(t == 0 for rows in asked for t in rows)   # the seat to act is the observer
    assert max(len(rows) for rows in asked) == 5      # 4 playouts + 1 of the other state
    assert got.shape == (2, 2, 2) and np.allclose(got[:, 1].sum(axis=1), 1.0)
    assert (got[:, 0].sum(axis=1) <= 244).all()       # R1: 244 points in the deck


def test_the_planner_fed_network_is_one_inference_per_seat_and_step():
    ppo = agents.make("robada", "ppo", seed=0)
    widths = []
    run = ppo.run
    ppo.act = lambda *a, **k: pytest.fail("the playout asked the network row by row")
    ppo.run = lambda o, m: widths.append(o.shape) or run(o, m)
    v = LineupPlayoutValue("robada", [ppo, agents.make("robada", "expert", seed=0)], playouts=2)
    v.seat_lineup([0, 1], env_seed=2)
    v.values([reng.new_game(reng.Config(num_players=2), seed=2)] * 2, actual=0)
    assert widths and all(w[1] == 192 for w in widths) and max(w[0] for w in widths) == 3


@pytest.mark.parametrize("name", ["search", "rollout"])
def test_search_bots_are_played_out_by_their_expert(name):
    bot = agents.make("robada", name, seed=0, determinizations=2)
    v = LineupPlayoutValue("robada", [bot, agents.make("robada", "greedy", seed=0)], playouts=2)
    assert v.bots[0] is bot.playout_surrogate() and type(v.bots[0]).__name__ == "ExpertBot"
    assert v.played_by == ["its playout_surrogate(): ExpertBot", "itself"]
    assert v.bots[0].rules == bot.rules


def test_unbiased_through_the_tournament():
    # expert against greedy: each luck mean's interval holds 0 (the bias check); the expert
    # against itself is at par: opposite corrected margins, win rates adding up to 1, the margin's
    # interval holding 0
    r = run_tournament("robada", ["expert", "greedy"], 40, seed=5, estimator="both", luck_samples=4, value="playout")
    for q in ("margin", "win_rate", "points"):
        _, lo, hi = r.bots[0].corrected["luck_mean"][q]
        assert lo <= 0.0 <= hi, (q, lo, hi)
    assert r.luck["value"] == "playout" and r.luck["events_per_game"] == 6.0
    s = run_tournament("robada", ["expert", "expert"], 20, seed=6, estimator="both", luck_samples=4, value="playout")
    c0, c1 = s.bots[0].corrected, s.bots[1].corrected
    assert c0["margin"] == pytest.approx(-c1["margin"], abs=1e-9)
    assert c0["win_rate"] + c1["win_rate"] == pytest.approx(1.0, abs=1e-9)
    assert c0["margin_ci"][0] <= 0.0 <= c0["margin_ci"][1]


def test_four_players_with_cyclic_seating():
    # 4 players: 4 loose + 4 x 3 cards a deal, 36 / 12 = 3 deals (R6); the playouts seat each
    # game's rotation
    r = run_tournament("robada", ["greedy", "expert", "expert", "expert"], 8, seed=1, estimator="both",
                       luck_samples=2, value="playout", seating="cyclic")
    assert r.luck["events_per_game"] == 3.0
    assert r.luck["played_by"] == {"greedy": "itself", "expert#1": "itself", "expert#2": "itself",
                                   "expert#3": "itself"}
