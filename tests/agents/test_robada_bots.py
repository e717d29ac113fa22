"""Ronda Robada baseline bots (hod.agents.robada_bots) and the observation decoder they read
(robada_env.rules.observation.decode): legality over many seeded games through the raw env (which
raises on an illegal action), determinism per seed, and hand-built positions where a rule of the
bots' docstrings forces the decision (worked out by hand in the comments)."""
import numpy as np
import pytest

from hod import agents
import hod.agents.robada_bots  # noqa: F401  (registers robada greedy / expert)
import robada_env
from _robada_helpers import position
from hod.agents.robada_bots import ExpertBot, GreedyBot, greedy_run_points
from hod.core.errors import ConfigError
from robada_env.rules.actions import CONFIRM, DROP, START, TAKE, TAP
from robada_env.rules.cards import ACE, CABALLO, REY, SOTA
from robada_env.rules.engine import Config, apply_action, legal_actions, legal_mask, new_game
from robada_env.rules.observation import decode, encode


def obs_of(s, seat=None):
    seat = s.current if seat is None else seat
    return {"observation": encode(s, seat), "action_mask": legal_mask(s, seat)}


# ------------------------------------------------------------------------ decoder

def _facts(s, seat):
    """The visible facts of ``seat`` computed straight from the engine state."""
    n = s.n
    order = [(seat + k) % n for k in range(n)]

    def per_rank(cards):
        out = [0] * 10
        for x in cards:
            out[x % 10] += 1
        return tuple(out)

    hand = per_rank(s.hands[seat])
    seen = [a + b + c for a, b, c in zip(per_rank(s.loose), per_rank(s.run),
                                         per_rank([x for p in s.piles for x in p]))]
    return dict(
        num_players=n,
        to_act=-1 if s.terminal else (s.current - seat) % n,
        hand=hand,
        hand_sizes=tuple(len(s.hands[i]) for i in order),
        loose=per_rank(s.loose),
        pile_top=tuple(s.piles[i][-1] % 10 if s.piles[i] else -1 for i in order),
        pile_size=tuple(len(s.piles[i]) for i in order),
        pile_points=tuple(s.points[i] for i in order),
        pile_ranks=tuple(per_rank(s.piles[i]) for i in order),
        run_active=bool(s.run),
        run_start=s.run_start if s.run else -1,
        run_rank=s.run_rank if s.run else -1,
        run_next=s.run_next if s.run else -1,
        run_closed=bool(s.run) and s.run_next == -1,
        run_gathered=per_rank(s.run),
        run_size=len(s.run),
        run_points=sum(robada_env.rules.cards.CARD_POINTS[x] for x in s.run),
        run_piles_taken=tuple(1 if i in s.run_taken else 0 for i in order),
        deck_left=len(s.deck),
        seen=tuple(seen),
        unseen=tuple(4 - a - b for a, b in zip(seen, hand)),
        last_runner=-1 if s.last_runner < 0 else (s.last_runner - seat) % n,
    )


@pytest.mark.parametrize("n", [2, 3, 4])
def test_decode_gives_back_the_visible_facts(n):
    # random legal play through whole games; at every step every seat's decoded observation
    # equals the facts read from the state (mid-run positions and taken piles included)
    rng = np.random.default_rng(n)
    for g in range(3):
        s = new_game(Config(num_players=n), seed=100 + g)
        while True:
            for seat in range(n):
                view = decode(encode(s, seat))
                assert view.__dict__ == _facts(s, seat)
            if s.terminal:
                break
            apply_action(s, int(rng.choice(legal_actions(s))))


def test_decode_rejects_bad_input():
    with pytest.raises(ValueError, match="shape"):
        decode(np.zeros(10, np.float32))
    with pytest.raises(ValueError, match="player count"):
        decode(np.zeros(robada_env.OBS_SIZE, np.float32))


# ------------------------------------------------------------------------ legality, determinism

def _play(lineup, env_seed, bot_seed):
    """One game through the raw AEC env (illegal action -> IllegalActionError); returns the
    engine's action history and the final scores."""
    n = len(lineup)
    env = robada_env.raw_env(num_players=n, illegal_action="raise")
    bots = [agents.make("robada", name, seed=bot_seed + i) for i, name in enumerate(lineup)]
    env.reset(seed=env_seed)
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        a = bots[int(agent.split("_")[1])].act(obs)
        assert obs["action_mask"][a] == 1
        env.step(a)
    state = env.unwrapped.game_state
    assert state.terminal
    return list(state.history), list(state.points)


LINEUPS = [("greedy", "random"), ("expert", "greedy"), ("expert", "expert"),
           ("expert", "random", "greedy"), ("expert", "greedy", "greedy", "greedy"),
           ("random", "expert", "random", "expert")]


@pytest.mark.parametrize("lineup", LINEUPS, ids="-".join)
def test_bots_play_legal_actions_in_many_games(lineup):
    for g in range(25):
        _play(lineup, env_seed=g, bot_seed=10 * g)


@pytest.mark.parametrize("lineup", [("expert", "greedy"), ("greedy", "expert", "expert", "greedy")], ids="-".join)
def test_same_seed_same_game(lineup):
    for g in range(5):
        assert _play(lineup, env_seed=g, bot_seed=7) == _play(lineup, env_seed=g, bot_seed=7)


def test_registered_names():
    assert {"greedy", "expert", "random"} <= set(agents.names("robada"))
    assert isinstance(agents.make("robada", "greedy", seed=0), GreedyBot)
    assert isinstance(agents.make("robada", "expert", seed=0), ExpertBot)


# ------------------------------------------------------------------------ greedy positions

def test_greedy_confirms_when_no_step_adds_points():
    # seat 0 holds 5 o; loose 5 c. Start 5: gathers 5 o + 5 c; the run needs a 6. No loose 6;
    # the only pile showing a 6 is seat 0's own (6 c on top): taking it adds 0 points to seat 0,
    # so greedy confirms (rule 3), although "take pile +0" is legal.
    s = position(["5o 2o", "3b"], loose="5c", piles=[["Rc", "6c"], ["Ab"]])
    apply_action(s, START + 4)
    assert set(legal_actions(s)) == {TAKE + 0, CONFIRM}
    assert GreedyBot(seed=0).act(obs_of(s)) == CONFIRM


def test_greedy_taps_then_takes_the_biggest_pile():
    # 3 players. Seat 0 starts 5 (5 o + 5 c), taps the loose 6 (rule 3: every tap adds points),
    # then needs a 7: seat 1 shows 7 o over Rey o (12 + 7 = 19), seat 2 shows 7 c over A c
    # (1 + 7 = 8); greedy takes the pile with more points, seat 1's = take pile +1.
    s = position(["5o", "2b", "3b"], loose="5c 6o", piles=[[], ["Ro", "7o"], ["Ac", "7c"]], n=3)
    apply_action(s, START + 4)
    bot = GreedyBot(seed=0)
    assert bot.act(obs_of(s)) == TAP
    apply_action(s, TAP)
    assert set(legal_actions(s)) == {TAKE + 1, TAKE + 2, CONFIRM}
    assert bot.act(obs_of(s)) == TAKE + 1


def test_greedy_starts_the_run_gathering_most_points():
    # hand 5 o, Caballo o; loose 5 c, 6 c, 7 c, Caballo c.
    # start 5: 5 + 5 + 6 + 7 = 23, then needs a Sota: none loose, no pile -> 23 points;
    # start Caballo: 11 + 11 = 22, then a Rey: none -> 22 points. Greedy starts the 5.
    s = position(["5o Co 2o", "3b"], loose="5c 6c 7c Cc")
    view = decode(encode(s, 0))
    assert greedy_run_points(view, 4) == 23
    assert greedy_run_points(view, CABALLO) == 22
    assert GreedyBot(seed=0).act(obs_of(s)) == START + 4


def test_greedy_drops_the_lowest_card_when_nothing_starts():
    # hand A o, 6 o, Rey o; loose 2 c, 3 c: no hand rank matches a loose card -> drop the card
    # with fewest points: the Ace (1 point).
    s = position(["Ao 6o Ro", "3b"], loose="2c 3c")
    assert GreedyBot(seed=0).act(obs_of(s)) == DROP + ACE


# ------------------------------------------------------------------------ expert positions

def test_expert_closes_with_the_ace_after_the_rey():
    # Seat 0 started with Caballo (Caballo o + Caballo c), tapped the loose Rey; the run needs the
    # closing Ace and a loose Ace is on the table. Closing gathers it (+1 point) and takes away a
    # card the next seat could start with; the pile shows the Caballo either way (R5), so
    # rule 4: tap (the tap then closes the run, R2).
    s = position(["Co 2o", "3b 4b"], loose="Cc Rc Ac 7b")
    apply_action(s, START + CABALLO)
    apply_action(s, TAP)
    assert set(legal_actions(s)) == {TAP, CONFIRM}
    assert ExpertBot(seed=0).act(obs_of(s)) == TAP
    apply_action(s, TAP)
    assert legal_actions(s) == [CONFIRM]   # closed: nothing after the Ace


def test_expert_takes_a_pile_when_the_run_reaches_it():
    # Seat 0 started 6 (6 o + 6 c); the run needs a 7: no loose 7, seat 1's pile shows 7 b over
    # Rey b + Sota b (12 + 10 + 7 = 29 points). Rule 1: taking it gains 29 for me and costs
    # seat 1 29, a 58-point margin swing; stopping gains nothing.
    s = position(["6o 2o", "3b"], loose="6c", piles=[["Ac"], ["Rb", "Sb", "7b"]])
    apply_action(s, START + 5)
    assert set(legal_actions(s)) == {TAKE + 1, CONFIRM}
    assert ExpertBot(seed=0).act(obs_of(s)) == TAKE + 1


# my big pile: 3 Reyes, 2 Caballos, 3 Sotas, two 7s and a 2 on top: 36 + 22 + 30 + 14 + 2 = 104
_BIG_PILE = ["Ro", "Rc", "Re", "Co", "Ce", "So", "Sc", "Se", "7o", "7e", "2o"]


def test_expert_protects_a_big_pile():
    # Hand 5 c, Caballo b, 2 c; loose 4 c, 5 o, 6 o, 7 c, Caballo c; my pile is worth 104.
    # start 5: 5 + 5 + 6 + 7 = 23 points, then needs a Sota (none) -> my pile shows a 5 and the
    #   loose 4 stays: the next seat, if it holds a 4, starts 4, finds no loose 5 and takes my
    #   pile (104 + 23 = 127). I have not seen 21 cards (40 - 3 in hand - 5 loose - 11 in my
    #   pile), three of them 4s, so its 3 cards hold a 4 with chance
    #   1 - (18*17*16)/(21*20*19) = 0.39: about 0.39 * (8 + 2 * 127) ~ 100 margin points lost.
    # start Caballo: 11 + 11 = 22 (no loose Rey) -> my pile shows a Caballo; a run reaches it only
    #   through a Sota, and no Sota is loose or on a pile: the pile is safe.
    # Greedy takes the 23 (its rule 1); the expert (rule 3) starts the Caballo.
    s = position(["5c Cb 2c", "3b Ab 4b"], loose="4c 5o 6o 7c Cc", piles=[_BIG_PILE, []])
    assert GreedyBot(seed=0).act(obs_of(s)) == START + 4
    assert ExpertBot(seed=0).act(obs_of(s)) == START + CABALLO


def test_expert_drops_the_card_that_starts_nothing_for_others():
    # Hand A b, 6 b, Rey b; loose 2 c, 3 c, 4 c, 5 c; no start possible. The other three Reyes
    # are in my pile (seen), so nobody can hold a Rey: a dropped Rey starts nothing, and no run
    # can reach it (no loose Sota or Caballo and no pile showing one). A dropped Ace lets a seat
    # holding an Ace gather A + A + 2 + 3 + 4 + 5 = 16; a dropped 6 lets a seat holding a 2
    # chain 2 + 2 + 3 + 4 + 5 + 6 = 22 (or a 6 holder gather 12). Rule 5: drop the Rey.
    # Greedy drops the Ace (fewest points).
    s = position(["Ab 6b Rb", "3b 7b 7c"], loose="2c 3c 4c 5c", piles=[["Ro", "Rc", "Re"], []])
    assert GreedyBot(seed=0).act(obs_of(s)) == DROP + ACE
    assert ExpertBot(seed=0).act(obs_of(s)) == DROP + REY


def test_expert_runs_on_the_last_card_for_the_leftovers():
    # Last card of the game (deck empty, every other hand empty). Hand Sota o; loose Sota c,
    # 2 b, 3 b. Starting the Sota and confirming makes me the last runner: the leftover 2 + 3
    # come to me too (R7): 10 + 10 + 5 = 25. Dropping leaves the leftovers (and my Sota) to
    # seat 1, the last runner so far. Rule 6: start.
    s = position(["So", ""], loose="Sc 2b 3b", piles=[["Ao"], ["Ab"]], to_deck=False, last_runner=1)
    assert s.deck == []
    assert ExpertBot(seed=0).act(obs_of(s)) == START + SOTA


def test_expert_params_must_be_expert_params():
    with pytest.raises(ConfigError, match="params='x': legal values are None or an ExpertParams"):
        ExpertBot(seed=0, params="x")
