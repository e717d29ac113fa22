"""Single-engine Ronda Robada positions in the batched engine (robada_env.rules.batched.state_record,
BatchedRobada.load_state) and the deck still to deal drawn afresh (redraw_future).

A batched engine loaded from the record of positions of seeded single-engine games (right after
the first deal, mid-turn with a run in progress, right after a re-deal, later; 2, 3 and 4 players,
every rule option off in turn) plays them on exactly as the single engine: the same legal mask,
observation of the seat to act, points and end at every step for the same actions, to the end.
The deal of a fixed deck is worked out by hand.
"""
import numpy as np
import pytest

from hod.core.errors import ConfigError
from robada_env.rules.chance import redeal
from robada_env.rules.batched import BatchedRobada, redraw_future, state_record
from robada_env.rules.engine import Config, apply_action, legal_mask, new_game
from robada_env.rules.observation import encode

CONFIGS = [Config(num_players=n) for n in (2, 3, 4)] + [
    Config(num_players=3, closing_ace=False), Config(num_players=2, may_take_own_pile=False),
    Config(num_players=4, leftovers_to_last_runner=False)]


def _positions(config, seed):
    """Positions of one seeded game of random legal play: right after the first deal, the first
    one with a run in progress (mid-turn), right after the first re-deal, and the 40th decision."""
    rng = np.random.default_rng(seed)
    s = new_game(config, seed=seed)
    kept = {"dealt": s.clone()}
    deck = len(s.deck)
    while not s.terminal:
        apply_action(s, int(rng.choice(np.flatnonzero(legal_mask(s, s.current)))))
        if s.run and "run" not in kept:
            kept["run"] = s.clone()
        if len(s.deck) < deck and "redealt" not in kept and not s.terminal:
            kept["redealt"] = s.clone()
        deck = len(s.deck)
        if len(s.history) == 40 and not s.terminal:
            kept["40th"] = s.clone()
    assert set(kept) == {"dealt", "run", "redealt", "40th"}
    return list(kept.values())


@pytest.mark.parametrize("config", CONFIGS, ids=str)
def test_the_loaded_engine_plays_on_as_the_single_engine(config):
    states = [st for seed in (3, 4) for st in _positions(config, seed)]
    states.append(states[0])                                  # a state repeated
    # the first re-deal and the first deal dealt again from other seeds (the luck correction's
    # re-deals: new hands and deck, so a record whose last deal is rewritten)
    states += [redeal(states[2], 17), redeal(states[0], 18)]
    eng = BatchedRobada(config, len(states), seed=0)
    eng.load_state(state_record(states, config))
    rng = np.random.default_rng(9)
    singles = [st.clone() for st in states]
    steps = 0
    while not all(s.terminal for s in singles):
        mask = eng.legal_mask()[:, 0]
        obs = eng.observe()[:, 0]
        acts = np.zeros((len(singles), 1), np.int64)
        for k, s in enumerate(singles):
            assert np.array_equal(eng.scores()[k], s.points)
            assert bool(eng.terminal[k]) == s.terminal
            if s.terminal:
                continue
            assert np.array_equal(mask[k], legal_mask(s, s.current)), (k, steps)
            assert np.array_equal(obs[k], encode(s, s.current)), (k, steps)
            acts[k, 0] = rng.choice(np.flatnonzero(mask[k]))
        live = np.flatnonzero(~eng.terminal)
        eng.step(acts[live], games=live)
        for k in live:
            apply_action(singles[k], int(acts[k, 0]))
        steps += 1
    assert eng.terminal.all() and np.array_equal(eng.scores(), [s.points for s in singles])
    assert steps > 20


def test_a_fixed_deck_by_hand():
    # deck 0..39 in order (rank = id % 10): 4 loose cards (ids 0..3: one Ace, 2, 3, 4), then 3
    # cards to seat 0 (ids 4, 5, 6) and 3 to seat 1 (7, 8, 9); 40 - 4 - 6 = 30 cards to deal
    rec = state_record([new_game(Config(num_players=2), deck=list(range(40)))])
    assert rec.batch_size == 1 and rec.deck_left.tolist() == [30]
    assert rec.hand_cards.tolist() == [[[4, 5, 6], [7, 8, 9]]]
    assert rec.loose_cnt.tolist() == [[1, 1, 1, 1, 0, 0, 0, 0, 0, 0]]
    assert rec.hand_cnt[0, 1].tolist() == [0, 0, 0, 0, 0, 0, 0, 1, 1, 1]
    assert rec.current.tolist() == [0] and rec.pile_top.tolist() == [[-1, -1]]


def test_other_rule_options_are_refused_with_the_legal_values():
    a, b = new_game(Config(num_players=2), seed=1), new_game(Config(num_players=2, closing_ace=False), seed=1)
    with pytest.raises(ConfigError, match=r"legal: states of one Config.*closing_ace.*may_take_own_pile"
                                          r".*leftovers_to_last_runner"):
        state_record([a, b])
    with pytest.raises(ConfigError, match="legal: states of one Config"):
        state_record([a], Config(num_players=2, leftovers_to_last_runner=False))
    with pytest.raises(ConfigError, match="no state given"):
        state_record([])
    with pytest.raises(ConfigError, match="not a robada_env.rules.engine.State"):
        state_record([object()])


def test_redraw_future_shuffles_only_the_cards_still_to_deal():
    s = _positions(Config(num_players=3), 5)[2]             # right after the first re-deal
    rec = state_record([s, s, s])
    before = rec.copy()
    redraw_future(rec, np.array([1, 2, 1], np.uint64))
    k = int(s.record.deck_left[0])
    assert k == 40 - 4 - 2 * 9                                # two deals of 3 cards to 3 seats
    head = slice(0, 40 - k)
    assert np.array_equal(rec.deck[:, head], before.deck[:, head])
    assert all(sorted(rec.deck[i, 40 - k:]) == sorted(before.deck[i, 40 - k:]) for i in range(3))
    assert np.array_equal(rec.deck[0], rec.deck[2]) and not np.array_equal(rec.deck[0], rec.deck[1])
    for name in ("hand_cards", "loose_cnt", "pile_pts", "current"):
        assert np.array_equal(getattr(rec, name), getattr(before, name))
    BatchedRobada(Config(num_players=3), 3).load_state(rec)    # still a game the engine accepts
    with pytest.raises(ConfigError, match="one seed per game"):
        redraw_future(rec, np.array([1], np.uint64))
