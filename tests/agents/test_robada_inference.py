"""Beliefs from the opponents' play (hod.agents.robada_inference): turns from the history, a
hand-worked posterior under a toy opponent model, and, on positions of seeded expert games, samples
that fit the seat's observation and contradict no observed action of an exact-expert opponent."""
import math

import numpy as np
import pytest

from _robada_helpers import cs
from hod.agents.robada_bots import ExpertBot
from hod.agents.robada_inference import (ExpertModel, hand_posteriors, sample_world, turn_seats)
from hod.agents.robada_search import SearchBot
from hod.core.errors import ConfigError
from robada_env.rules import engine
from robada_env.rules.actions import CONFIRM, DROP, START, TAP
from robada_env.rules.cards import NUM_RANKS
from robada_env.rules.engine import Config
from robada_env.rules.observation import decode, encode

CABALLO, REY = 8, 9


def obs_of(s, seat):
    return {"observation": encode(s, seat), "action_mask": engine.legal_mask(s, seat)}


def test_turn_seats_follow_drops_confirms_and_deals():
    # 2 players, 3 cards each a deal -> 6 turns a deal. Turn 0 (seat 0): start 3, tap, confirm;
    # turn 1 (seat 1): drop 5; turns 2..5 drops; turn 6 is seat 0 again, in deal 1.
    hist = [START + 2, TAP, CONFIRM, DROP + 4, DROP + 1, DROP + 1, DROP + 1, DROP + 1, DROP + 3]
    assert turn_seats(hist, 2) == [(0, 0, 0), (0, 0, 0), (0, 0, 0), (1, 1, 0), (2, 0, 0), (3, 1, 0),
                                   (4, 0, 0), (5, 1, 0), (6, 0, 1)]
    # 3 players: 9 turns a deal; the 4th turn is seat 0's second
    assert [x[1] for x in turn_seats([DROP] * 4, 3)] == [0, 1, 2, 0]


class LowestDropModel:
    """Toy opponent: starts the highest startable rank, else drops its lowest rank (deterministic)."""

    def probability(self, view, legal, action):
        starts = [a for a in legal if a < DROP]
        if view.run_active:
            return 1.0 if action == CONFIRM else 0.0
        want = max(starts) if starts else min(a for a in legal if DROP <= a < TAP)
        return 1.0 if action == want else 0.0


def _toy_game():
    # Deck: loose A 3 5 7 (ids Ao 3o 5o 7o); seat 0 gets 2o 4o 6o; seat 1 gets Ro Rc Co; the rest
    # follows. Seat 0 drops its 2; seat 1 has no start (no loose Rey or Caballo) and drops its lowest
    # rank, the Caballo. Seat 0 is to act again.
    first = cs("Ao 3o 5o 7o 2o 4o 6o Ro Rc Co")
    deck = first + [x for x in range(40) if x not in first]
    s = engine.new_game(Config(), deck=deck)
    engine.apply_action(s, DROP + 1)
    engine.apply_action(s, DROP + CABALLO)
    assert s.current == 0 and sorted(x % NUM_RANKS for x in s.hands[1]) == [REY, REY]
    return s


def test_toy_model_posterior_worked_by_hand():
    s = _toy_game()
    (post,) = hand_posteriors(s, 0, LowestDropModel())
    # Seat 1 dropped a Caballo with loose A, 2, 3, 5, 7 on the table: its hand then had none of
    # those ranks and nothing below the Caballo, so its two cards now are Caballos or Reyes.
    support = {tuple(int(x) for x in m) for m, p in zip(post.hands, post.likelihood) if p > 0}
    assert support == {tuple(2 if r == CABALLO else 0 for r in range(10)),
                       tuple(1 if r in (CABALLO, REY) else 0 for r in range(10)),
                       tuple(2 if r == REY else 0 for r in range(10))}
    # Unseen by seat 0: 3 Caballos (one dropped), 4 Reyes. Card sets: C(3,2) = 3 with two Caballos,
    # 3 x 4 = 12 with one of each, C(4,2) = 6 with two Reyes: P(two Reyes) = 6 / 21 = 2/7.
    rng = np.random.default_rng(0)
    reyes = 0
    draws = 2100
    for _ in range(draws):
        w, weight = sample_world(s, 0, [post], rng)
        ranks = sorted(x % NUM_RANKS for x in w.hands[1])
        assert ranks in ([CABALLO, CABALLO], [CABALLO, REY], [REY, REY])
        reyes += ranks == [REY, REY]
        assert weight == pytest.approx(21.0)  # Z = 3 + 12 + 6 card sets of likelihood 1
    # binomial sd sqrt(2100 x 2/7 x 5/7) = 20.7 around 600: 5 sd is +-104
    assert abs(reyes - 600) < 104


def _expert_positions(n, games, every=3):
    """(state, seat to act) at every ``every``-th decision of seat 0 in expert-only games, with a
    log of every opponent decision: (index in history, seat, true state before it, action)."""
    config = Config(num_players=n)
    out = []
    for g in range(games):
        bots = [ExpertBot(seed=10 * g + k, rules=config) for k in range(n)]
        s = engine.new_game(config, seed=1000 + g)
        log = []
        k = 0
        while not s.terminal:
            p = s.current
            if p == 0:
                if k % every == 0:
                    out.append((s.clone(), list(log)))
                k += 1
            a = bots[p].act(obs_of(s, p))
            if p != 0:
                log.append((len(s.history), p, s.clone(), a))
            engine.apply_action(s, a)
    return out


@pytest.mark.parametrize("n", [2, 4])
def test_samples_fit_the_observation_and_every_observed_expert_action(n):
    config = Config(num_players=n)
    model = ExpertModel(config)  # the expert exactly: a filter
    rng = np.random.default_rng(1)
    expert = ExpertBot(rules=config)
    checked = 0
    for s, log in _expert_positions(n, 2):
        base = engine.sample_consistent_state(s, 0, rng)  # what seat 0 knows, hidden parts scrambled
        posts = hand_posteriors(base, 0, model)
        per_deal = 3 * n
        dealt = 36 - len(s.deck)
        deal_turn0 = (dealt // per_deal - 1) * per_deal
        for _ in range(3):
            w, weight = sample_world(base, 0, posts, rng)
            assert weight > 0
            # consistent with seat 0's observation: same encoding, own hand, hand sizes, deck size
            assert np.array_equal(encode(w, 0), encode(s, 0))
            assert w.hands[0] == s.hands[0]
            assert [len(h) for h in w.hands] == [len(h) for h in s.hands] and len(w.deck) == len(s.deck)
            assert sorted([x for h in w.hands for x in h] + w.deck + [x for p in w.piles for x in p] + w.loose
                          + w.run) == list(range(40))
            # no observed action of an opponent in this deal is one the expert would not play with
            # the sampled hand: put back the cards it played since (taken from the true states)
            turns = turn_seats(s.history, n)
            for idx, seat, before, action in log:
                if turns[idx][0] < deal_turn0:
                    continue
                played_since = [x for x in before.hands[seat] if x not in s.hands[seat]]
                t = before.clone()
                hypo = w.hands[seat] + played_since
                # the other hidden cards do not change the opponent's observation: swap hands only
                t.hands[seat] = hypo
                t._legal = None  # the legal actions depend on the hand
                o = obs_of(t, seat)
                legal = list(np.flatnonzero(o["action_mask"]))
                if len(legal) == 1:
                    assert legal == [action]
                    continue
                view = decode(o["observation"])
                plans = expert.plans(view, legal)
                values = [expert.evaluate(view, p) for p in plans]
                top = {p.action for p, v in zip(plans, values) if v >= max(values) - 1e-9}
                assert action in top
                checked += 1
    assert checked > 10


def test_expert_model_checks_its_options_and_mixes_epsilon():
    with pytest.raises(ConfigError, match="temperature"):
        ExpertModel(temperature=-1.0)
    with pytest.raises(ConfigError, match="epsilon"):
        ExpertModel(epsilon=1.0)
    s = _toy_game()
    view = decode(encode(s, 0))
    legal = engine.legal_actions(s)
    exact = ExpertModel()
    probs = [exact.probability(view, legal, a) for a in legal]
    assert sum(probs) == pytest.approx(1.0)
    # epsilon 0.2 over k legal actions: (1 - 0.2) p + 0.2 / k
    mixed = ExpertModel(epsilon=0.2)
    k = len(legal)
    for a, p in zip(legal, probs):
        assert mixed.probability(view, legal, a) == pytest.approx(0.8 * p + 0.2 / k)
    assert exact.probability(view, legal, CONFIRM) == 0.0  # not legal with no run


def test_search_bot_plays_legal_actions_and_gives_values():
    s = _toy_game()
    bot = SearchBot(seed=0, determinizations=2)
    values = bot.action_values(obs_of(s, 0), lambda rng: engine.sample_consistent_state(s, 0, rng))
    assert values and all(engine.legal_mask(s, 0)[a] == 1 for a in values)
    assert all(math.isfinite(v) for v in values.values())


def test_search_bot_on_a_hand_built_position_uses_uniform_samples():
    # Last two cards (tests/agents/test_robada_search.py): I hold 5o, seat 1 holds 7c, loose 5c, seat 1's
    # pile shows 6b over every other card. No history to replay: the belief samples are used as
    # they come. Starting the 5 takes seat 1's pile (the run needs a 6): I win every playout, so
    # win share 1 + 0.01 x (244 - 0) / 100 = 1.0244; dropping the 5 loses: 0 + 0.01 x (1 - 243) / 100.
    from _robada_helpers import position
    s = position(["5o", "7c"], loose="5c", piles=[["Ao"], ["6b"]], to_deck=False, last_runner=1)
    bot = SearchBot(seed=0, determinizations=2, window=1e9)
    values = bot.action_values(obs_of(s, 0), lambda rng: engine.sample_consistent_state(s, 0, rng))
    assert values == {START + 4: pytest.approx(1.0244), DROP + 4: pytest.approx(-0.0242)}
