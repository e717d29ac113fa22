"""Ronda Robada rules engine: hand-worked positions and games (values worked out from
shared/rules/ronda_robada.txt and RULINGS R1-R9; card points A=1, 2..7 face, Sota 10,
Caballo 11, Rey 12), and invariants over many seeded random games."""
import numpy as np
import pytest

from _robada_helpers import c, cs, position
from hod.core.errors import ConfigError, IllegalActionError
from robada_env.rules.actions import CONFIRM, DROP, NOOP, NUM_ACTIONS, START, TAKE, TAP, action_name
from robada_env.rules.cards import ACE, CABALLO, CARD_POINTS, REY, SOTA, TOTAL_POINTS, card_name
from robada_env.rules.engine import (RUN_CLOSED, Config, apply_action, legal_actions, legal_mask, new_game,
                               scores, winners)


def play(s, actions):
    for a in actions:
        apply_action(s, a)


# ---------------------------------------------------------------- cards and deal (R1, R6)

def test_deck_points_and_names():
    # 4 suits x (1+2+3+4+5+6+7+10+11+12 = 61) = 244
    assert TOTAL_POINTS == 244
    assert CARD_POINTS[c("So")] == 10 and CARD_POINTS[c("Cc")] == 11 and CARD_POINTS[c("Re")] == 12
    assert card_name(c("Cb")) == "Caballo of bastos"
    assert action_name(START + SOTA) == "start Sota" and action_name(DROP + ACE) == "drop A"
    assert action_name(TAKE + 1) == "take pile +1" and action_name(NOOP) == "no-op"
    with pytest.raises(ValueError, match="0..26"):
        action_name(27)


def test_deal_order_and_redeal_r6():
    s = new_game(Config(num_players=3), deck=list(range(40)))
    # 4 loose cards first, then blocks of 3 in seat order
    assert s.loose == [0, 1, 2, 3]
    assert s.hands == [[4, 5, 6], [7, 8, 9], [10, 11, 12]]
    assert len(s.deck) == 40 - 4 - 9 == 27 and s.current == 0
    # everybody drops its first card 3 times round: 9 turns empty every hand -> re-deal of 3 each,
    # seat 0 to act again (9 turns % 3 seats = 0)
    for _ in range(9):
        apply_action(s, [a for a in legal_actions(s) if a >= DROP][0])
    assert [len(h) for h in s.hands] == [3, 3, 3] and len(s.deck) == 18 and s.current == 0
    assert s.hands[0] == [13, 14, 15]


def test_bad_player_counts():
    for n in (1, 5):
        with pytest.raises(ConfigError, match=r"\[2, 3, 4\]"):
            Config(num_players=n)
    with pytest.raises(ConfigError, match="permutation"):
        new_game(Config(), deck=[0] * 40)


# ---------------------------------------------------------------- starting and dropping

def test_start_only_against_a_loose_card_and_drop_always_allowed():
    # seat 0 holds a 5 and a 6; a loose 5 is on the table; seat 1's pile shows a 6.
    s = position(["5o 6o", "7o 7c"], loose="5c", piles=[[], ["6c"]])
    # start 5 is possible (loose 5); start 6 is not (only a pile shows a 6: no start against
    # piles); both cards may be dropped even though the 5 could start a run (R4)
    assert legal_actions(s) == [START + 4, DROP + 4, DROP + 5]


# ---------------------------------------------------------------- runs (R2, R3, R4, R5)

def test_run_through_rey_closed_by_an_ace():
    s = position(["So 2c", "3b 4b"], loose="Sc Ce Rb Ao Ac 2o")
    apply_action(s, START + SOTA)          # Sota of oros + Sota of copas; needs Caballo
    assert s.run_next == CABALLO and legal_actions(s) == [TAP, CONFIRM]
    apply_action(s, TAP)                   # Caballo; needs Rey
    apply_action(s, TAP)                   # Rey; needs the closing Ace
    assert s.run_next == ACE and legal_actions(s) == [TAP, CONFIRM]
    apply_action(s, TAP)                   # closing Ace: nothing may follow (another Ace and a 2
    assert s.run_next == RUN_CLOSED        # are loose, but the run is closed)
    assert legal_actions(s) == [CONFIRM]
    apply_action(s, CONFIRM)
    # pile: Sota c (10) + Caballo e (11) + Rey b (12) + Ace o (1) + Sota o (10) = 44,
    # the starting Sota of oros visible on top (R5)
    assert s.points[0] == 44 and len(s.piles[0]) == 5
    assert s.piles[0][-1] == c("So")
    assert s.loose == cs("Ac 2o") and s.current == 1 and s.last_runner == 0


def test_run_started_with_an_ace_and_closed_by_another():
    s = position(["Ao 5b", "6b 7b"], loose="Ac 2o 3o 4o 5o 6o 7o So Co Ro Ae")
    apply_action(s, START + ACE)           # Ace o + Ace c: needs a 2 (a starting Ace is no close)
    assert s.run_next == 1
    for _ in range(9):                     # 2, 3, 4, 5, 6, 7, Sota, Caballo, Rey
        apply_action(s, TAP)
    assert s.run_next == ACE               # after the Rey: the closing Ace (R2)
    apply_action(s, TAP)
    assert legal_actions(s) == [CONFIRM]
    apply_action(s, CONFIRM)
    # 3 Aces (3) + 2..7 (27) + Sota, Caballo, Rey (33) = 63 points in 2 + 9 + 1 = 12 cards
    assert s.points[0] == 63 and len(s.piles[0]) == 12 and s.piles[0][-1] == c("Ao")
    assert s.loose == []


def test_no_closing_ace_option():
    s = position(["Ro 5b", "6b 7b"], loose="Rc Ao", closing_ace=False)
    apply_action(s, START + REY)           # started with a Rey: nothing may follow it
    assert legal_actions(s) == [CONFIRM]
    s = position(["Ro 5b", "6b 7b"], loose="Rc Ao")
    apply_action(s, START + REY)           # default: the Ace closes after a starting Rey too
    assert legal_actions(s) == [TAP, CONFIRM]


def test_pile_may_not_be_taken_while_a_loose_card_of_that_rank_is_there():
    # seat 1's pile shows a 5 (5e), and a loose 5 (5c) is on the table
    s = position(["4o 2b", "7b 7c"], loose="4c 5c", piles=[[], ["Rb", "5e"]])
    apply_action(s, START + 3)             # start 4: needs a 5
    assert legal_actions(s) == [TAP, CONFIRM]   # no TAKE+1: the loose 5 must be tapped (R3)
    with pytest.raises(IllegalActionError, match="tap loose"):
        apply_action(s, TAKE + 1)
    apply_action(s, TAP)
    assert s.piles[1] == cs("Rb 5e")       # the pile stays where it was
    assert legal_actions(s) == [CONFIRM]   # needs a 6: none anywhere


def test_taking_your_own_pile_changes_its_top_card():
    # own pile: Rey o, 2 c, 3 c (visible) = 12 + 2 + 3 = 17 points
    s = position(["2o 5b", "7b 7c"], loose="2e", piles=[["Ro", "2c", "3c"], []])
    apply_action(s, START + 1)             # 2 o + 2 e: needs a 3; no loose 3
    assert legal_actions(s) == [TAKE + 0, CONFIRM]   # own pile shows the 3
    apply_action(s, TAKE + 0)
    assert s.piles[0] == [] and s.run_taken == [0] and s.run_next == 3
    apply_action(s, CONFIRM)
    # 17 + 2 e + 2 o = 21 points, 5 cards, now the 2 of oros is visible instead of the 3
    assert s.points[0] == 21 and len(s.piles[0]) == 5 and s.piles[0][-1] == c("2o")


def test_may_take_own_pile_option():
    s = position(["2o 5b", "7b 7c"], loose="2e", piles=[["Ro", "2c", "3c"], []], may_take_own_pile=False)
    apply_action(s, START + 1)
    assert legal_actions(s) == [CONFIRM]


def test_taking_two_piles_in_one_run():
    # 3 players, seat 1 to act. Seat 2's pile: Sota o, 6 c (visible) = 16;
    # seat 0's pile: Rey c, 7 o (visible) = 19.
    s = position(["2b", "5o 2c", "3b"], loose="5c", piles=[["Rc", "7o"], [], ["So", "6c"]], n=3, current=1)
    apply_action(s, START + 4)             # 5 o + 5 c: needs a 6
    assert legal_actions(s) == [TAKE + 1, CONFIRM]   # seat (1 + 1) % 3 = 2 shows the 6
    apply_action(s, TAKE + 1)
    assert legal_actions(s) == [TAKE + 2, CONFIRM]   # seat (1 + 2) % 3 = 0 shows the 7
    apply_action(s, TAKE + 2)
    assert s.run_taken == [2, 0] and s.run_next == SOTA
    apply_action(s, CONFIRM)
    # 5 + 5 + 16 + 19 = 45 points, 2 + 2 + 2 = 6 cards, the starting 5 of oros visible
    assert s.points == [0, 45, 0] and s.piles[0] == [] and s.piles[2] == []
    assert len(s.piles[1]) == 6 and s.piles[1][-1] == c("5o") and s.current == 2


def test_an_empty_pile_cannot_be_taken_and_a_pile_only_by_its_visible_card():
    # seat 1's pile holds a 6 under a visible Rey: the run needing a 6 cannot use it
    s = position(["5o 2b", "7b 7c"], loose="5c", piles=[[], ["6e", "Rb"]])
    apply_action(s, START + 4)
    assert legal_actions(s) == [CONFIRM]


def test_illegal_action_names_legal_ones_and_changes_nothing():
    s = position(["5o 6o", "7o 7c"], loose="5c")
    before = (s.hands[0][:], s.loose[:], s.current, s.history[:])
    with pytest.raises(IllegalActionError, match=r"legal actions: \[4 \(start 5\), 14 \(drop 5\), 15 \(drop 6\)\]"):
        apply_action(s, CONFIRM)
    assert (s.hands[0], s.loose, s.current, s.history) == before
    assert legal_mask(s, 0).tolist() == [1 if a in (4, 14, 15) else 0 for a in range(NUM_ACTIONS)]
    assert legal_mask(s, 1).tolist() == [1 if a == NOOP else 0 for a in range(NUM_ACTIONS)]


# ---------------------------------------------------------------- end of game (R7, R8)

def _last_turns(**rules):
    # deck out, last cards: seat 0 holds 3 o, seat 1 holds Rey e; loose 3 c and 6 b.
    # Seat 1's pile holds the other 36 cards: 244 - (3 + 3 + 6 + 12) = 220 points.
    s = position(["3o", "Re"], loose="3c 6b", piles=[[], ["2b"]], to_deck=False, **rules)
    assert s.points[1] == 220 and not s.deck
    apply_action(s, START + 2)             # 3 o + 3 c; needs a 4: none loose, seat 1 shows a 2
    assert legal_actions(s) == [CONFIRM]
    apply_action(s, CONFIRM)               # seat 0: 6 points, last runner
    assert legal_actions(s) == [DROP + REY]  # seat 1: no loose Rey -> only the drop
    apply_action(s, DROP + REY)
    return s


def test_leftover_loose_cards_go_to_the_last_runner():
    s = _last_turns()
    # every hand and the deck are empty: 6 b and Rey e (18) go to seat 0: 6 + 18 = 24
    assert s.terminal and s.loose == []
    assert scores(s) == [24, 220] and winners(s) == [1]
    assert s.piles[0][-1] == c("3o")       # the visible card stays the starting card
    assert legal_actions(s) == []


def test_leftovers_to_nobody_option():
    s = _last_turns(leftovers_to_last_runner=False)
    assert scores(s) == [6, 220] and s.loose == cs("6b Re")


def test_game_with_no_run_at_all_leftovers_go_to_nobody():
    s = new_game(Config(num_players=3), seed=5)
    while not s.terminal:
        apply_action(s, [a for a in legal_actions(s) if DROP <= a < TAP][0])
    # 36 drops: all 40 cards loose, nobody ever confirmed a run -> nobody gets them (R7)
    assert len(s.loose) == 40 and scores(s) == [0, 0, 0] and winners(s) == [0, 1, 2]
    assert len(s.history) == 36


# A whole 2-player game on a hand-made deck. Loose: Ao 2o 3o 4o; then per deal seat 0's three
# cards, then seat 1's.
FULL_DECK = cs(
    "Ao 2o 3o 4o "
    "Ac 5o 6o 2c 7o So "      # deal 1
    "5c Co Ro Ae 3c 4c "      # deal 2
    "Cc 2e 6c 5e Ab Rc "      # deal 3
    "5b Sc 3e 4e 4b Se "      # deal 4
    "7c 6e 2b 3b 7e Ce "      # deal 5
    "6b 7b Sb Cb Rb Re"       # deal 6
)
T, CF = TAP, CONFIRM
FULL_ACTIONS = [
    # deal 1
    START + 0, T, T, T, CF,   # s0: A c + A o, 2 o, 3 o, 4 o -> pile0 1+1+2+3+4 = 11
    DROP + 1, DROP + 4, DROP + 6, DROP + 5, DROP + 7,   # 2c, 5o, 7o, 6o, So loose
    # deal 2
    START + 4, T, T, T, CF,   # s0: 5 c + 5 o, 6 o, 7 o, So -> +5+5+6+7+10 = 33 -> 44
    DROP + 0, DROP + 8, DROP + 2, DROP + 9, DROP + 3,   # Ae, Co, 3c, Ro, 4c loose
    # deal 3
    START + 8, T, T, CF,      # s0: C c + C o, R o, closing A e -> +11+11+12+1 = 35 -> 79
    DROP + 0,                 # s1: A b
    START + 1, T, T, CF,      # s0: 2 e + 2 c, 3 c, 4 c -> +2+2+3+4 = 11 -> 90
    DROP + 4, DROP + 5, DROP + 9,   # 5e, 6c, Rc loose
    # deal 4
    START + 4, T, CF,         # s0: 5 b + 5 e, 6 c -> +5+5+6 = 16 -> 106, 5 b visible
    DROP + 3, DROP + 7,       # s1 4e, s0 Sc
    START + 3, TAKE + 1, CF,  # s1: 4 b + 4 e, takes seat 0's pile (5 b) -> 4+4+106 = 114
    DROP + 2,                 # s0: 3e
    START + 7, CF,            # s1: S e + S c -> +20 -> 134
    # deal 5
    DROP + 5,                 # s0: 6e
    START + 2, CF,            # s1: 3 b + 3 e -> +6 -> 140
    DROP + 1, DROP + 8, DROP + 6,   # s0 2b, s1 Ce, s0 7c
    START + 6, CF,            # s1: 7 e + 7 c -> +14 -> 154, 7 e visible
    # deal 6
    START + 5, TAKE + 1, CF,  # s0: 6 b + 6 e, takes seat 1's pile (7 e) -> 6+6+154 = 166
    START + 8, T, T, CF,      # s1: C b + C e, R c, closing A b -> 11+11+12+1 = 35
    DROP + 6, DROP + 9, DROP + 7,   # s0 7b, s1 Rb, s0 Sb
    START + 9, CF,            # s1: R e + R b -> +24 -> 59; last run
]


def test_full_scored_game_every_pile_counted():
    s = new_game(Config(num_players=2), deck=FULL_DECK)
    play(s, FULL_ACTIONS[:5])
    assert s.points == [11, 0] and s.piles[0][-1] == c("Ac")
    i = FULL_ACTIONS.index(TAKE + 1)
    play(s, FULL_ACTIONS[5:i + 2])          # through seat 1's first steal and its confirm
    assert s.points == [0, 114] and s.piles[0] == [] and len(s.piles[1]) == 23
    play(s, FULL_ACTIONS[i + 2:])
    assert s.terminal
    # leftovers 2 b, 7 b, Sota b (2+7+10 = 19) go to seat 1, the last runner: 35 + 24 + 19 = 78.
    # seat 0: 6 e + 6 b + seat 1's 154-point pile = 166. 166 + 78 = 244, every card counted.
    assert scores(s) == [166, 78] and winners(s) == [0]
    assert len(s.piles[0]) == 31 and len(s.piles[1]) == 9
    assert s.piles[0][-1] == c("6b") and s.piles[1][-1] == c("Re")
    assert s.loose == [] and s.last_runner == 1


# ---------------------------------------------------------------- invariants

def _check_invariants(s, tops):
    every = s.deck + s.loose + s.run + [x for h in s.hands for x in h] + [x for p in s.piles for x in p]
    assert sorted(every) == list(range(40))                      # 40 cards conserved
    for i, p in enumerate(s.piles):
        assert (p[-1] if p else None) == tops[i]                 # visible = last starting card
        assert s.points[i] == sum(CARD_POINTS[x] for x in p)     # score = sum of pile cards


@pytest.mark.parametrize("n", [2, 3, 4])
def test_invariants_over_random_games(n):
    rng = np.random.default_rng(1000 + n)
    for g in range(300):
        s = new_game(Config(num_players=n), seed=g)
        tops = [None] * n
        while not s.terminal:
            legal = legal_actions(s)
            assert legal and legal == np.flatnonzero(legal_mask(s, s.current)).tolist()
            a = legal[int(rng.integers(len(legal)))]
            if TAKE <= a < CONFIRM:
                tops[(s.current + a - TAKE) % n] = None
            if a == CONFIRM:
                tops[s.current] = s.run[0]
            apply_action(s, a)
            _check_invariants(s, tops)
        assert sum(scores(s)) + sum(CARD_POINTS[x] for x in s.loose) == 244
        assert len(s.history) <= 432


def test_card_ids_must_be_integers_and_the_error_names_what_is_missing():
    import robada_env.rules.engine as E

    two = Config(num_players=2)
    # True is not card 1, 1.0 not card 1; numpy integers are card ids
    for bad in ([[True], [0]], [[1.0], [0]]):
        with pytest.raises(ConfigError, match=r"hands\[0\] card=.* must be an integer; legal values: integers 0..39"):
            E.from_position(two, hands=bad, deck=range(2, 40))
    E.from_position(two, hands=[[np.int8(1)], [0]], deck=range(2, 40))
    with pytest.raises(ConfigError, match=r"hands\[0\]=0 must be a sequence of card ids"):
        E.from_position(two, hands=[0, 1])
    # cards 1 and 0 in hand, the deck 3..39: card 2 is nowhere
    with pytest.raises(ConfigError, match=r"exactly once: missing \[2\], repeated \[\]"):
        E.from_position(two, hands=[[1], [0]], deck=range(3, 40))
    # 0 twice (hand and deck), so 1 is missing
    with pytest.raises(ConfigError, match=r"missing \[1\], repeated \[0\]"):
        E.from_position(two, hands=[[0], [0]], deck=range(2, 40))
    with pytest.raises(ConfigError, match=r"deck card=0.0 must be an integer"):
        new_game(deck=[float(i) for i in range(40)])


def test_a_deck_with_a_seed_is_refused_rather_than_the_seed_ignored():
    """new_game(seed=..., deck=...) used to deal the deck and drop the seed without a word."""
    with pytest.raises(ConfigError, match="not both"):
        new_game(Config(), seed=3, deck=list(range(40)))
    with pytest.raises(ConfigError, match="not both"):
        new_game(Config(), rng=np.random.default_rng(0), deck=list(range(40)))
    assert new_game(Config(), deck=list(range(40))).deck_order == tuple(range(40))
