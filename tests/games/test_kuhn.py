"""Kuhn poker, the third game (``kuhn_env/``; rules kuhn_env/RULES.md K1-K5), with values worked by
hand: the payoff of every betting sequence, the observation of a position, the rewards of each
scheme, the equilibrium's value -1/18 by enumeration of the 6 deals (exact fractions), the
equilibrium's exploitability 0, and, when OpenSpiel is installed, every node of the game against
OpenSpiel's ``kuhn_poker``. The generic checks (PettingZoo API, engine protocol, records, bots)
are in ``tests/contract/test_game_contract.py`` and ``tests/contract/test_engine_protocol.py``.
"""
from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

import hod.agents as agents
import kuhn_env
from hod.core.errors import ConfigError, IllegalActionError, RecordError
from hod.evaluation.tournament import run_tournament
from kuhn_env.bots import NashBot, bet_probability
from kuhn_env.rules.batched import BatchedKuhn
from kuhn_env.rules.engine import BET, JACK, KING, NOOP, PASS, QUEEN, apply_action, new_game, scores, winners

P, B = PASS, BET
DEALS = list(itertools.permutations((JACK, QUEEN, KING), 2))       # 6 deals, each 1/6 (K1)


def play(cards, actions):
    s = new_game(cards=list(cards))
    for a in actions:
        apply_action(s, a)
    return s


@pytest.mark.parametrize("cards,actions,payoffs", [
    # K3: the winner gets what the loser put in (ante 1, plus 1 per bet or call of the loser)
    ((QUEEN, KING), (P, P), [-1, 1]),          # showdown, K beats Q; each put in 1
    ((KING, JACK), (P, P), [1, -1]),
    ((QUEEN, KING), (B, P), [1, -1]),          # seat 1 folds: it put in its ante, 1
    ((QUEEN, KING), (B, B), [-2, 2]),          # showdown after bet and call: 1 + 1 each
    ((QUEEN, KING), (P, B, P), [-1, 1]),       # seat 0 folds having put in 1
    ((KING, QUEEN), (P, B, B), [2, -2]),       # showdown after check, bet, call
    ((JACK, QUEEN), (P, B, B), [-2, 2]),
])
def test_the_payoff_of_each_betting_sequence(cards, actions, payoffs):
    s = new_game(cards=list(cards))
    for i, a in enumerate(actions):
        assert not s.terminal and s.current == i % 2 and scores(s) == [0, 0] and winners(s) == [0, 1]
        apply_action(s, a)
    assert s.terminal and scores(s) == payoffs
    assert winners(s) == [int(np.argmax(payoffs))]
    with pytest.raises(IllegalActionError, match=r"legal actions: \[2 \(no-op\)\]"):
        apply_action(s, PASS)                  # nothing to decide once over


def test_the_game_goes_on_only_after_check_then_bet():
    """K2: of the two-decision sequences only pass-bet leaves a decision (seat 0's)."""
    for first, second in itertools.product((P, B), repeat=2):
        assert play((JACK, KING), (first, second)).terminal == ((first, second) != (P, B))


def test_the_observation_is_openspiels_information_state_tensor():
    """Cards (Q, K), pass then bet. Seat 0: seat one-hot [1, 0], card Q [0, 1, 0], decision 1
    pass [1, 0], decision 2 bet [0, 1], decision 3 none [0, 0]. Seat 1: [0, 1], K [0, 0, 1], same
    history. The global state shows both cards: Q [0, 1, 0], K [0, 0, 1]."""
    s = play((QUEEN, KING), (P, B))
    np.testing.assert_array_equal(kuhn_env.encode(s, 0), [1, 0, 0, 1, 0, 1, 0, 0, 1, 0, 0])
    np.testing.assert_array_equal(kuhn_env.encode(s, 1), [0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 0])
    from kuhn_env.rules.observation import encode_state
    np.testing.assert_array_equal(encode_state(s), [0, 1, 0, 0, 0, 1, 1, 0, 0, 1, 0, 0])
    assert kuhn_env.decode(kuhn_env.encode(s, 1)) == (1, KING, (P, B))
    assert kuhn_env.encode(s, 0).dtype == np.float32


@pytest.mark.parametrize("scheme,rewards", [("points", [-2.0, 2.0]), ("win_loss", [-1.0, 1.0]),
                                            ("margin", [-4.0, 4.0])])
def test_rewards_of_a_game_worked_by_hand(scheme, rewards):
    """Find the seed dealing (Q, K); seat 0 bets, seat 1 calls: payoffs [-2, 2] (K3). points: the
    payoffs; win_loss: -1/+1; margin: each seat's points minus the other's, [-2 - 2, 2 - (-2)]."""
    seed = next(s for s in range(100) if new_game(seed=s).cards == (QUEEN, KING))
    env = kuhn_env.raw_env(reward_scheme=scheme)
    env.reset(seed=seed)
    env.step(BET)
    assert env.rewards == {"player_0": 0.0, "player_1": 0.0}
    env.step(BET)
    assert list(env.rewards.values()) == rewards and all(env.terminations.values())
    assert env.infos == {"player_0": {"final_score": -2, "win_share": 0.0},
                         "player_1": {"final_score": 2, "win_share": 1.0}}
    par = kuhn_env.parallel_env(reward_scheme=scheme)
    par.reset(seed=seed)
    par.step({"player_0": BET, "player_1": NOOP})
    out = par.step({"player_1": BET})
    assert list(out[1].values()) == rewards


def test_the_batched_engine_says_who_acts():
    """Seat 0 acts first, then seat 1, then seat 0 again after pass-bet (K2)."""
    eng = BatchedKuhn(2, 3, seed=0)
    eng.reset(seeds=[0, 1, 2])
    assert eng.current.tolist() == [0, 0, 0]
    eng.step(np.array([[P], [B], [P]]))
    assert eng.current.tolist() == [1, 1, 1]
    res = eng.step(np.array([[B], [P], [P]]))
    assert res.game_over.tolist() == [False, True, True] and eng.current.tolist() == [0, 0, 0]
    np.testing.assert_array_equal(eng.observe(seats=None)[:, 0, :2], [[1, 0]] * 3)      # seat 0's view


def test_every_deal_is_reached_by_some_seed():
    assert {new_game(seed=s).cards for s in range(60)} == set(DEALS)


# ---- the equilibrium (K5) ---------------------------------------------------------------------------
def value(policies, cards, history=()) -> Fraction:
    """Seat 0's expected payoff from ``history`` on, ``policies[seat](card, history)`` giving the
    probability of ``bet`` (exact)."""
    s = play(cards, history)
    if s.terminal:
        return Fraction(scores(s)[0])
    seat = s.current
    b = Fraction(policies[seat](cards[seat], history))
    return b * value(policies, cards, history + (B,)) + (1 - b) * value(policies, cards, history + (P,))


def game_value(policies) -> Fraction:
    return sum(Fraction(1, 6) * value(policies, c) for c in DEALS)


def nash(alpha):
    return lambda card, history: bet_probability(history, card, alpha)


#: Each seat's information sets: (card, history before its decision).
INFOSETS = {0: [(c, h) for c in range(3) for h in ((), (P, B))], 1: [(c, h) for c in range(3) for h in ((P,), (B,))]}


def pure_strategies(seat):
    """Every pure strategy of ``seat``: bet or not at each of its 6 information sets (64)."""
    for bits in itertools.product((0, 1), repeat=len(INFOSETS[seat])):
        table = dict(zip(INFOSETS[seat], bits))
        yield lambda card, history, table=table: table[(card, history)]


@pytest.mark.parametrize("alpha", [Fraction(0), Fraction(1, 6), Fraction(1, 3)])
def test_the_equilibrium_is_worth_minus_one_eighteenth_to_seat_0(alpha):
    """With alpha = 0, by hand (seat 0 always checks first): (J,Q) -1 (Q checks behind);
    (J,K) -1 (K bets, J folds); (Q,J) 1/3 x (1/3 x 2 + 2/3 x -1) + 2/3 x 1 = 2/3 (J bluffs 1/3,
    Q calls 1/3); (Q,K) 1/3 x -2 + 2/3 x -1 = -4/3; (K,J) 1/3 x 2 + 2/3 x 1 = 4/3; (K,Q) +1.
    Sum -1/3, over 6 deals: -1/18; the same for every alpha in [0, 1/3]."""
    assert game_value([nash(alpha), nash(alpha)]) == Fraction(-1, 18)
    if alpha == 0:
        hand = [-1, -1, Fraction(2, 3), Fraction(-4, 3), Fraction(4, 3), 1]
        assert [value([nash(alpha)] * 2, c) for c in DEALS] == hand


@pytest.mark.parametrize("alpha", [Fraction(0), Fraction(1, 3)])
def test_no_pure_strategy_beats_the_equilibrium(alpha):
    """Exploitability 0: the best of the 64 pure strategies of seat 0 against seat 1's equilibrium
    earns exactly -1/18, and the best of seat 1's against seat 0's earns exactly +1/18."""
    assert max(game_value([s, nash(alpha)]) for s in pure_strategies(0)) == Fraction(-1, 18)
    assert min(game_value([nash(alpha), s]) for s in pure_strategies(1)) == Fraction(-1, 18)


def test_the_nash_bot_plays_the_equilibrium_from_its_observation():
    bot = agents.make("kuhn", "nash", seed=0)
    for seat, sets in INFOSETS.items():
        for card, history in sets:
            cards = (card, (card + 1) % 3) if seat == 0 else ((card + 1) % 3, card)
            s = play(cards, history)
            o = {"observation": kuhn_env.encode(s, seat), "action_mask": kuhn_env.legal_mask(s, seat)}
            p = bot.probabilities(o)
            b = float(bet_probability(history, card, 0))
            np.testing.assert_allclose(p, [1 - b, b, 0.0])
            assert bot.act(o) in ((BET,) if b == 1 else (PASS,) if b == 0 else (PASS, BET))
    s = play((JACK, KING), ())
    assert bot.act({"observation": kuhn_env.encode(s, 1), "action_mask": kuhn_env.legal_mask(s, 1)}) == NOOP
    with pytest.raises(ConfigError, match=r"alpha=0.5 is not allowed; legal values: numbers in \[0, 1/3\]"):
        agents.make("kuhn", "nash", alpha=0.5)
    assert agents.make("kuhn", "nash", alpha=1 / 3).alpha == 1 / 3


def test_the_tournament_plays_kuhn():
    """nash against random over 200 duplicate games (each deal played from both seats). Exact
    expectation of nash's points per game: from seat 0 (alpha = 0: it always checks first; random
    bets or checks with 1/2 each), by hand: (J,Q) -1, (J,K) -1, (Q,J) 1/2 x (1/3 x 2 + 2/3 x -1)
    + 1/2 x 1 = 1/2, (Q,K) 1/2 x (1/3 x -2 + 2/3 x -1) + 1/2 x -1 = -7/6, (K,J) and (K,Q)
    1/2 x 2 + 1/2 x 1 = 3/2: sum 1/3, over 6 deals 1/18. From seat 1, by enumeration: 1/6. Mean
    (1/18 + 1/6) / 2 = 1/9, inside the tournament's 95% interval of nash's mean points."""
    half = lambda card, history: Fraction(1, 2)
    assert game_value([nash(0), half]) == Fraction(1, 18)
    assert -game_value([half, nash(0)]) == Fraction(1, 6)
    res = run_tournament("kuhn", ["nash", "random"], 200, seed=0)
    me, other = res.bots
    assert (me.games, other.games) == (200, 200)
    assert me.points + other.points == pytest.approx(0.0, abs=1e-12)            # zero-sum
    assert me.points_ci[0] <= 1 / 9 <= me.points_ci[1]


# ---- refusals --------------------------------------------------------------------------------------
def test_bad_input_is_refused_naming_the_legal_values():
    with pytest.raises(ConfigError, match=r"num_players=3 is not allowed; legal values: \[2\]"):
        kuhn_env.raw_env(num_players=3)
    with pytest.raises(ConfigError, match="two distinct card ids"):
        new_game(cards=[1, 1])
    with pytest.raises(ConfigError, match="either seed or cards"):
        new_game(seed=1, cards=[0, 1])
    s = new_game(cards=[0, 1])
    for bad in (1.0, True, NOOP, 3, -1, "1"):
        with pytest.raises(IllegalActionError, match=r"for player_0; legal actions: \[0 \(pass\), 1 \(bet\)\]"):
            apply_action(s, bad)
    apply_action(s, np.int64(BET))             # a numpy integer is an action
    assert s.history == [BET] and s.current == 1
    eng = BatchedKuhn(2, 3, seed=0)
    eng.reset(seed=0)
    rec = eng.state.copy()
    rec.cards[1] = [2, 2]
    with pytest.raises(ConfigError, match="field cards of game 1"):
        eng.load_state(rec)
    rec = eng.state.copy()
    rec.history[2] = [B, P, B]
    rec.length[2] = 3
    rec.terminal[2] = True
    with pytest.raises(ConfigError, match="game 2"):
        eng.load_state(rec)                                   # bet-pass ended the game
    assert not eng.state.same_as(rec)
    with pytest.raises(ConfigError, match=r"unknown option\(s\) \['stones'\]"):
        BatchedKuhn(2, 1, stones=5)


def test_a_record_that_does_not_replay_is_refused():
    s = play((QUEEN, KING), (P, B, B))
    rec = kuhn_env.make_record(s, seed=1)
    assert rec["cards"] == ["Q", "K"] and rec["actions"] == ["pass", "bet", "bet"] and rec["payoffs"] == [-2, 2]
    for field, bad, words in (("payoffs", [2, -2], "replay gives"), ("actions", ["pass", "bet"], "do not finish"),
                              ("actions", ["bet", "pass", "bet"], "does not replay"), ("cards", ["Q", "Q"], "cards"),
                              ("payoffs", [-2.0, 2.0], "integers")):
        with pytest.raises(RecordError, match=words):
            kuhn_env.replay({**rec, field: bad})
    with pytest.raises(RecordError, match="finished game"):
        kuhn_env.make_record(play((QUEEN, KING), (P,)))


# ---- against OpenSpiel ------------------------------------------------------------------------------
def test_every_node_equals_openspiels_kuhn_poker():
    """Every deal and every action sequence: the same terminal nodes, legal actions, returns and
    information-state tensors of both seats as OpenSpiel's ``kuhn_poker`` (2 players)."""
    pyspiel = pytest.importorskip("pyspiel")
    game = pyspiel.load_game("kuhn_poker")
    nodes = 0
    for cards in DEALS:
        def walk(history):
            nonlocal nodes
            st = game.new_initial_state()
            for c in cards:
                st.apply_action(c)
            for a in history:
                st.apply_action(a)
            ours = play(cards, history)
            nodes += 1
            assert st.is_terminal() == ours.terminal, (cards, history)
            for seat in (0, 1):
                np.testing.assert_array_equal(st.information_state_tensor(seat), kuhn_env.encode(ours, seat))
            if st.is_terminal():
                assert st.returns() == scores(ours)
                return
            assert st.current_player() == ours.current and st.legal_actions() == [P, B]
            for a in (P, B):
                walk(history + (a,))
        walk(())
    assert nodes == 6 * 9            # per deal: the root, 2 after one action, 4 after two, 2 after three


def test_a_belief_sample_keeps_what_the_seat_knows():
    """K4: seat 1 holding the Queen after seat 0's bet knows its card and the bet; seat 0's card is
    the Jack or the King (each 1/2), never its own Queen; the real game is not changed."""
    s = play((KING, QUEEN), (B,))
    rng = np.random.default_rng(0)
    seen = [kuhn_env.sample_consistent_state(s, 1, rng) for _ in range(200)]
    assert all(x.cards[1] == QUEEN and x.history == [B] and not x.terminal for x in seen)
    assert {x.cards[0] for x in seen} == {JACK, KING}
    assert 70 <= sum(x.cards[0] == JACK for x in seen) <= 130        # about half of 200
    assert s.cards == (KING, QUEEN) and s.history == [B]


def test_the_nash_bot_refuses_bad_input_naming_the_legal_values():
    import numpy as np
    from fractions import Fraction

    from hod.agents import registry
    from hod.core.errors import UnknownOptionError
    from kuhn_env.bots import bet_probability

    # an unknown option was a raw TypeError; now the bots' one error, naming seed and alpha
    with pytest.raises(UnknownOptionError, match=r"^unknown option\(s\) \['bogus'\] for kuhn bot 'nash'; "
                                                 r"legal options: \['seed', 'alpha'\]$"):
        registry.make("kuhn", "nash", seed=0, bogus=1)
    assert registry.make("kuhn", "nash", seed=0, alpha=np.float32(0.25)).alpha == 0.25   # refused before
    with pytest.raises(ConfigError, match=r"alpha=nan is not allowed; legal values: numbers in \[0, 1/3\]"):
        registry.make("kuhn", "nash", seed=0, alpha=float("nan"))
    with pytest.raises(ConfigError, match=r"^card=9; legal values: 0 \(Jack\), 1 \(Queen\), 2 \(King\)$"):
        bet_probability((), 9)                 # a KeyError before
    with pytest.raises(ConfigError, match=r"^history \[1, 0\]: nobody acts after it \(the game is over, "
                                          r"kuhn_env/RULES.md K2\); legal: the histories of a decision, "
                                          r"\[\[\], \[0\], \[1\], \[0, 1\]\]$"):
        bet_probability((1, 0), 0)             # bet then pass: seat 1 folded
    assert bet_probability((0,), 0) == Fraction(1, 3)   # K5: the second player bets a Jack 1/3 after a check
    bot = registry.make("kuhn", "nash", seed=0)
    obs = {"observation": np.zeros(11, np.float32), "action_mask": np.zeros(3, np.int8)}
    with pytest.raises(ValueError, match="the action mask allows no action"):
        bot.act(obs)                           # it answered no-op, an action the mask did not allow


def test_bet_probability_tells_a_finished_game_from_no_history_of_kuhn_poker():
    from kuhn_env.bots import bet_probability

    legal = r"legal: the histories of a decision, \[\[\], \[0\], \[1\], \[0, 1\]\]$"
    # (7,) was "the game is over": 7 is no action of the game
    with pytest.raises(ConfigError, match=r"^history \[7\]: not a history of Kuhn poker \(its actions are 0 \(pass\) "
                                          r"and 1 \(bet\), and the game ends after \[\[0, 0\], \[1, 0\], \[1, 1\], "
                                          r"\[0, 1, 0\], \[0, 1, 1\]\], kuhn_env/RULES.md K2\); " + legal):
        bet_probability((7,), 0)
    with pytest.raises(ConfigError, match=r"^history \[0, 0, 0\]: not a history of Kuhn poker"):
        bet_probability((0, 0, 0), 0)          # an action after the showdown
    with pytest.raises(ConfigError, match=r"^history=None; legal: a tuple of action ids \(0 pass, 1 bet\), one of "):
        bet_probability(None, 0)
    with pytest.raises(ConfigError, match=r"^card=1\.0; legal values: 0 \(Jack\), 1 \(Queen\), 2 \(King\)$"):
        bet_probability((), 1.0)               # read as the Queen before
    with pytest.raises(ConfigError, match=r"^alpha=0\.5 is not allowed; legal values: numbers in \[0, 1/3\]$"):
        bet_probability((), KING, 0.5)         # a probability of 1.5 before
    assert bet_probability([0, 1], QUEEN, Fraction(1, 6)) == Fraction(1, 2)   # a list as the tuple (K5: alpha + 1/3)
    assert bet_probability((), np.int64(KING), np.float32(0.25)) == 0.75


def test_the_nash_bot_refuses_an_observation_or_mask_the_game_never_gives():
    bot = agents.make("kuhn", "nash", seed=0)
    s = play((JACK, KING), ())
    obs, mask = kuhn_env.encode(s, 0), kuhn_env.legal_mask(s, 0)
    legal = (r"; legal: kuhn_env/RULES.md K4's 11 values in \{0, 1\}: the seat one-hot \(2\), the card one-hot \(3\), "
             r"then a pass/bet one-hot per decision taken, in order, zeros after$")
    zero = np.zeros(11, np.float32)            # was played as seat 0's Jack
    with pytest.raises(ConfigError, match=r"^observation \[0\.0, (0\.0, ){9}0\.0\]: not a Kuhn poker observation, its seat "
                                          r"piece \(entries 0\.\.1\) \[0\.0, 0\.0\] is not one-hot" + legal):
        bot.act({"observation": zero, "action_mask": mask})
    no_card = obs.copy()
    no_card[2:5] = 0
    with pytest.raises(ConfigError, match=r"its card piece \(entries 2\.\.4\) \[0\.0, 0\.0, 0\.0\] is not one-hot"):
        bot.act({"observation": no_card, "action_mask": mask})
    gap = obs.copy()
    gap[7] = 1                                  # a second decision without a first
    with pytest.raises(ConfigError, match=r"its history piece \[0\.0, 0\.0, 1\.0, 0\.0, 0\.0, 0\.0\] is not one action"):
        bot.act({"observation": gap, "action_mask": mask})
    half = obs.copy()
    half[0] = 0.5
    with pytest.raises(ConfigError, match=r"not a Kuhn poker observation, values other than 0 and 1"):
        bot.probabilities({"observation": half, "action_mask": mask})
    with pytest.raises(ConfigError, match=r"^action_mask \[1, 0, 0\]: not a Kuhn poker mask; legal: \[1, 1, 0\] \(the "
                                          r"seat acts: pass or bet, K2\) or \[0, 0, 1\] \(it does not: no-op\)$"):
        bot.act({"observation": obs, "action_mask": np.array([1, 0, 0], np.int8)})   # bet 1/3 of the time before
    other = kuhn_env.encode(s, 1)               # seat 1's view at the opening, with a mask to act
    with pytest.raises(ConfigError, match=r"^observation of seat 1 with the history \[\] and a mask to act: seat 0 "
                                          r"acts after it \(kuhn_env/RULES.md K2: seat 0 first, then alternately\)"):
        bot.act({"observation": other, "action_mask": mask})
    assert bot.act({"observation": other, "action_mask": kuhn_env.legal_mask(s, 1)}) == NOOP
    assert bot.act({"observation": obs, "action_mask": mask.astype(bool)}) == PASS   # alpha 0: the Jack checks
