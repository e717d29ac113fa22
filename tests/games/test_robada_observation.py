"""Ronda Robada observation encoder: layout, exact values in a hand-built position, seat-relative
order, and that hidden information (other hands, deck order) never shows (RULINGS R9)."""
import numpy as np
import pytest

from _robada_helpers import cs, position
from robada_env.rules.actions import START, TAKE
from robada_env.rules.engine import Config, apply_action, legal_actions, new_game
from robada_env.rules.observation import LAYOUT, OBS_SIZE, OBS_VERSION, encode


def piece(obs, name):
    return LAYOUT.view(obs, name).tolist()


def test_layout_size_does_not_depend_on_player_count():
    assert OBS_SIZE == LAYOUT.size == 192 and OBS_VERSION == 1
    for n in (2, 3, 4):
        o = encode(new_game(Config(num_players=n), seed=0), 0)
        assert o.shape == (192,) and o.dtype == np.float32
        assert 0.0 <= o.min() and o.max() <= 1.0
        assert piece(o, "num_players") == [1.0 if k == n else 0.0 for k in (2, 3, 4)]


def _two_piles_mid_run():
    # 3 players, seat 1 to act; seat 0's pile Rey c + 7 o (visible) = 19; seat 2's Sota o + 6 c = 16
    s = position(["2b", "5o 2c", "3b"], loose="5c", piles=[["Rc", "7o"], [], ["So", "6c"]], n=3, current=1)
    apply_action(s, START + 4)     # 5 o + 5 c
    apply_action(s, TAKE + 1)      # takes seat 2's pile; now needs a 7
    return s


def test_exact_values_from_seat_0():
    o = encode(_two_piles_mid_run(), 0)
    q = 0.25
    assert piece(o, "to_act") == [0, 1, 0, 0]                      # seat 1 is my left
    assert piece(o, "hand") == [0, q, 0, 0, 0, 0, 0, 0, 0, 0]       # one 2
    assert piece(o, "hand_sizes") == pytest.approx([1 / 3, 1 / 3, 1 / 3, 0])   # seat 1 kept its 2 c
    assert piece(o, "loose") == [0] * 10                            # the loose 5 is in the run
    top = np.array(piece(o, "pile_top")).reshape(4, 10)
    assert top[0].tolist() == [0, 0, 0, 0, 0, 0, 1, 0, 0, 0]        # my 7 o is visible
    assert top[1:].sum() == 0                                       # the others are empty
    assert piece(o, "pile_size") == pytest.approx([2 / 40, 0, 0, 0])
    assert piece(o, "pile_points") == pytest.approx([19 / 244, 0, 0, 0])
    assert piece(o, "run_active") == [1]
    assert piece(o, "run_start") == [0, 0, 0, 0, 1, 0, 0, 0, 0, 0]  # started with a 5
    assert piece(o, "run_rank") == [0, 0, 0, 0, 0, 1, 0, 0, 0, 0]   # reached the 6
    assert piece(o, "run_next") == [0, 0, 0, 0, 0, 0, 1, 0, 0, 0]   # needs a 7
    assert piece(o, "run_closed") == [0]
    # gathered 5 o, 5 c, Sota o, 6 c: two 5s, one 6, one Sota; 5+5+10+6 = 26 points
    assert piece(o, "run_gathered") == [0, 0, 0, 0, 2 * q, q, 0, q, 0, 0]
    assert piece(o, "run_size") == pytest.approx([4 / 40])
    assert piece(o, "run_points") == pytest.approx([26 / 244])
    assert piece(o, "run_piles_taken") == [0, 0, 1, 0]              # seat 2 = 2 to my left
    # deck: 40 - 3 hand cards - 2 in piles - 4 in the run = 31 cards
    assert piece(o, "deck_left") == pytest.approx([31 / 36])
    # seen: my pile (Rey, 7) + the run (5, 5, Sota, 6)
    assert piece(o, "seen") == [0, 0, 0, 0, 2 * q, q, q, q, 0, q]
    # unseen = 4 - seen - my hand: A 4, 2 3, 3 4, 4 4, 5 2, 6 3, 7 3, Sota 3, Caballo 4, Rey 3
    assert piece(o, "unseen") == [1, 3 * q, 1, 1, 2 * q, 3 * q, 3 * q, 3 * q, 1, 3 * q]
    assert piece(o, "last_runner") == [0, 0, 0, 0]


def test_seat_relative_order_from_seat_2():
    o = encode(_two_piles_mid_run(), 2)
    assert piece(o, "to_act") == [0, 0, 1, 0]                       # seat 1 = (1 - 2) % 3 = 2
    assert piece(o, "run_piles_taken") == [1, 0, 0, 0]              # my own pile was taken
    top = np.array(piece(o, "pile_top")).reshape(4, 10)
    assert top[1, 6] == 1                                           # seat 0 is on my left


def test_hidden_information_does_not_show():
    # same public position, same hand for seat 0; seat 1's hand and the deck order differ
    a = position(["5o 6o 7o", "Rb Cb Sb"], loose="5c 2c", piles=[["Ao"], ["Ae"]])
    b = a.clone()
    b.hands[1] = cs("3e 4e 5e")                     # swap seat 1's hand with deck cards
    b.deck = [x for x in a.deck if x not in b.hands[1]] + a.hands[1]
    b.deck.reverse()                                # and reorder the deck
    assert sorted(b.deck + b.hands[1]) == sorted(a.deck + a.hands[1])
    assert np.array_equal(encode(a, 0), encode(b, 0))
    # the test can fail: seat 1 itself sees the difference
    assert not np.array_equal(encode(a, 1), encode(b, 1))


def test_hidden_information_in_random_mid_game_states():
    rng = np.random.default_rng(3)
    for g in range(30):
        s = new_game(Config(num_players=2 + g % 3), seed=g)
        for _ in range(int(rng.integers(1, 40))):
            if s.terminal:
                break
            la = legal_actions(s)
            apply_action(s, la[int(rng.integers(len(la)))])
        me = s.current
        t = s.clone()
        pool = t.deck + [x for i, h in enumerate(t.hands) if i != me for x in h]
        rng.shuffle(pool)                           # redistribute the hidden cards
        for i in range(t.n):
            if i != me:
                k = len(t.hands[i])
                t.hands[i], pool = pool[:k], pool[k:]
        t.deck = pool
        assert np.array_equal(encode(s, me), encode(t, me))


def test_env_page_shows_the_current_layout_table():
    from pathlib import Path
    page = (Path(__file__).resolve().parents[2] / "docs" / "robada_env.md").read_text(encoding="utf-8")
    assert LAYOUT.markdown_table() in page


def test_sample_consistent_state_keeps_what_the_seat_knows():
    from robada_env.rules.engine import sample_consistent_state
    rng = np.random.default_rng(7)
    s = new_game(Config(num_players=3), seed=7)
    apply_action(s, legal_actions(s)[0])        # seat 0 starts a run (or drops)
    me = s.current
    changed = False
    for _ in range(20):
        t = sample_consistent_state(s, me, rng)
        assert np.array_equal(encode(t, me), encode(s, me))
        assert t.hands[me] == s.hands[me] and [len(h) for h in t.hands] == [len(h) for h in s.hands]
        assert sorted(t.deck + [x for h in t.hands for x in h]) == sorted(s.deck + [x for h in s.hands for x in h])
        changed |= t.deck != s.deck
    assert changed                              # the hidden cards really are redealt


def test_seat_outside_the_table_is_a_value_error_naming_the_legal_seats():
    from hod.core.errors import ConfigError

    s = new_game(Config(num_players=3), seed=0)
    for bad in (3, -1, 7):   # 3 players: seats 0, 1, 2 (no wrap-around, no negative index)
        with pytest.raises(ConfigError, match=rf"seat={bad} is out of range; legal values: \[0, 1, 2\]"):
            encode(s, bad)
    with pytest.raises(ValueError, match="must be an integer"):
        encode(s, 1.0)
    assert np.array_equal(encode(s, np.int64(2)), encode(s, 2))


@pytest.mark.parametrize("n", [2, 3, 4])
def test_view_of_is_decode_of_encode(n):
    # the playouts' fast path must tell a bot exactly what the observation vector does, from
    # every seat, in random games to the end (terminal state included)
    from robada_env.rules.observation import decode, view_of
    rng = np.random.default_rng(n)
    for g in range(4):
        s = new_game(Config(num_players=n), seed=g)
        while True:
            for seat in range(n):
                assert view_of(s, seat) == decode(encode(s, seat))
            if s.terminal:
                break
            apply_action(s, int(rng.choice(legal_actions(s))))
