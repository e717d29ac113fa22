"""PettingZoo's global state (``state()``, ``state_space``) of both games: the layouts
(``<game>_env/rules/global_state.py``, version 1), exact values of hand-built positions, shapes,
dtypes and bounds over random games at every table size, the same state in the AEC and Parallel
forms, PettingZoo's API and state tests, and that the state holds what no observation does."""
import copy
import pickle
import warnings

import numpy as np
import pytest
from gymnasium import spaces
from pettingzoo.test import api_test, parallel_api_test
from pettingzoo.test.state_test import state_test

import robada_env
import tapeo_env
from hod.core.errors import ResetNeededError
from hod.core.games import get_game, load_object
from robada_env.rules import global_state as rgs
from robada_env.rules.cards import card
from robada_env.rules.engine import apply_action, from_position
from tapeo_env.rules import global_state as tgs

GAMES = {"tapeo": tapeo_env, "robada": robada_env}
STATES = {"tapeo": tgs, "robada": rgs}


# ---------------------------------------------------------------- the declarations

@pytest.mark.parametrize("game", ["tapeo", "robada"])
def test_the_declaration_names_the_layout_and_the_encoder(game):
    info, mod = get_game(game), STATES[game]
    assert info.state_layout is mod.STATE_LAYOUT and info.state_layout.version == 1
    assert load_object(info.state_encoder) is mod.encode_state
    assert mod.STATE_HIGH.shape == (mod.STATE_SIZE,) and mod.STATE_HIGH.dtype == np.float32


def test_layout_sizes():
    # Tapeo: 5 + 3 + 1 + 1 + 1 + 60 + 60 + 6 + 6 + 10 = 153
    assert tgs.STATE_SIZE == 153
    # Ronda Robada: 3 + 3 + 4 + 40 + 4 + 10 + 40 + 4 + 4 + 40 + 1 + 10 + 10 + 10 + 1 + 10 + 1 + 1 + 4 + 1
    # + 10 + 4 = 215
    assert rgs.STATE_SIZE == 215


@pytest.mark.parametrize("game", ["tapeo", "robada"])
def test_the_docs_list_the_state_layout(game):
    page = open(f"docs/{game}_env.md", encoding="utf-8").read()
    assert STATES[game].STATE_LAYOUT.markdown_table("Global-state layout") in page


# ---------------------------------------------------------------- exact values by hand

def _tapeo_position():
    """2 players, explicit deals: seat 0 gets 5 tortilla + 5 croqueta, seat 1 4 prawns + 6 bread
    (every round the same); then seat 0 picks tortilla, seat 1 prawns."""
    deal = [[0] * 5 + [1] * 5, [5] * 4 + [6] * 6]
    s = tapeo_env.new_game(tapeo_env.Config(num_players=2), seed=0, deals=[deal] * 3)
    tapeo_env.apply_actions(s, [0, 5])
    return s


def test_tapeo_state_of_a_hand_built_position():
    x = tgs.encode_state(_tapeo_position())
    L = tgs.STATE_LAYOUT
    want = np.zeros(153, np.float32)
    want[0] = 1                       # 2 players
    want[5] = 1                       # round 1
    want[9] = np.float32(1 / 9)       # pick 1 of 9 decision picks
    want[10] = np.float32(9 / 10)     # 10 - 1 = 9 tapas in each hand
    # the hands moved left (2 players: swapped). Seat 0 holds seat 1's rest: 3 prawns (/ 10 in the
    # deck), 6 bread (/ 8); seat 1 holds 4 tortilla, 5 croqueta (/ 14 each).
    h = 11
    want[h + 5], want[h + 6] = np.float32(3 / 10), np.float32(6 / 8)
    want[h + 10 + 0], want[h + 10 + 1] = np.float32(4 / 14), np.float32(5 / 14)
    b = 71                            # bars: seat 0 one tortilla, seat 1 one prawns
    want[b + 0], want[b + 10 + 5] = np.float32(1 / 14), np.float32(1 / 10)
    # undealt = deck (14, 14, 4, 4, 4, 10, 8, 10, 6, 10) - dealt (5, 5, 0, 0, 0, 4, 6, 0, 0, 0)
    #         = (9, 9, 4, 4, 4, 6, 2, 10, 6, 10), each / its deck count
    u = 143
    want[u:u + 10] = np.array([9 / 14, 9 / 14, 1, 1, 1, 6 / 10, 2 / 8, 1, 1, 1], np.float32)
    assert L.offsets["hands"].start == h and L.offsets["bars"].start == b and L.offsets["undealt"].start == u
    np.testing.assert_array_equal(x, want)        # churros kept and scores: 0


def test_tapeo_state_at_the_end_has_the_scores_and_churros():
    s = tapeo_env.new_game(tapeo_env.Config(num_players=3), seed=11)
    rng = np.random.default_rng(0)
    while not s.terminal:
        tapeo_env.apply_actions(s, [int(rng.choice(tapeo_env.legal_actions(s, i))) for i in range(3)])
    x = tgs.encode_state(s)
    L = tgs.STATE_LAYOUT
    assert L.view(x, "game_over")[0] == 1 and not L.view(x, "round").any()
    np.testing.assert_array_equal(L.view(x, "scores")[:3], (s.round_scores.sum(axis=0) / 100).astype(np.float32))
    np.testing.assert_array_equal(L.view(x, "churros_kept")[:3], (s.churros_kept / 30).astype(np.float32))
    assert not L.view(x, "hands").any() and not L.view(x, "scores")[3:].any()


def test_tapeo_state_of_a_longer_game_shows_later_rounds_as_the_third():
    """Config allows up to 10 rounds; the state's round piece has 3 entries, so round 4 of a
    5-round game shows as round 3, as seat 0's observation does, and game_over stays 0 (the
    entry after the round piece, which a plain one-hot of round index 3 would have set)."""
    s = tapeo_env.new_game(tapeo_env.Config(num_players=2, num_rounds=5), seed=3)
    s.round = 3                                   # 0-based: the fourth of five rounds
    L, O = tgs.STATE_LAYOUT, tapeo_env.LAYOUT
    x = tgs.encode_state(s)
    np.testing.assert_array_equal(L.view(x, "round"), [0, 0, 1])
    assert L.view(x, "game_over")[0] == 0
    np.testing.assert_array_equal(O.view(tapeo_env.encode(s, 0), "round"), [0, 0, 1])


def _robada_position():
    """2 players: seat 0 holds A oros and 2 oros, seat 1 Rey copas; loose A copas; seat 0's pile
    is the 6 oros; the other 35 cards are the deck; seat 0 to act, seat 0 confirmed the last run."""
    used = [card(0, 0), card(1, 0), card(9, 1), card(0, 1), card(5, 0)]
    return from_position(robada_env.Config(num_players=2), hands=[[card(0, 0), card(1, 0)], [card(9, 1)]],
                         loose=[card(0, 1)], piles=[[card(5, 0)], []],
                         deck=[c for c in range(40) if c not in used], current=0, last_runner=0)


def _robada_want_common():
    w = {n: np.zeros(p.size, np.float32) for n, p in zip(rgs.STATE_LAYOUT.names(), rgs.STATE_LAYOUT.pieces)}
    w["num_players"][0] = 1
    w["rules"][:] = 1                                   # every option at its default, True
    w["to_act"][0] = 1
    w["hands"][10 + 9] = 0.25                           # seat 1: one Rey / 4
    w["pile_top"][5] = 1                                # seat 0's pile shows a 6 (rank 5)
    w["pile_size"][0] = np.float32(1 / 40)
    w["pile_points"][0] = np.float32(6 / 244)
    w["pile_ranks"][5] = 0.25
    w["deck_left"][0] = np.float32(35 / 36)
    # deck by rank: 4 of each minus the 5 placed (A x2, 2, 6, Rey): (2, 3, 4, 4, 4, 3, 4, 4, 4, 3) / 4
    w["deck_ranks"][:] = np.array([2, 3, 4, 4, 4, 3, 4, 4, 4, 3], np.float32) / 4
    w["last_runner"][0] = 1
    return w


def test_robada_state_of_a_hand_built_position():
    s = _robada_position()
    w = _robada_want_common()
    w["hands"][0], w["hands"][1] = 0.25, 0.25           # seat 0: an A and a 2
    w["hand_sizes"][:2] = np.float32(2 / 3), np.float32(1 / 3)
    w["loose"][0] = 0.25                                # the loose A
    np.testing.assert_array_equal(rgs.encode_state(s), np.concatenate(list(w.values())))
    # start A: the hand's A and the loose A make the run; it needs a 2 next
    apply_action(s, 0)
    w["hands"][0] = 0
    w["hand_sizes"][0] = np.float32(1 / 3)
    w["loose"][0] = 0
    w["run_active"][0] = 1
    w["run_start"][0] = w["run_rank"][0] = 1
    w["run_next"][1] = 1
    w["run_gathered"][0] = 0.5                          # two Aces / 4
    w["run_size"][0] = np.float32(2 / 40)
    w["run_points"][0] = np.float32(2 / 244)            # Ace = 1 point each
    np.testing.assert_array_equal(rgs.encode_state(s), np.concatenate(list(w.values())))


def test_robada_rule_options_are_in_the_state():
    s = robada_env.new_game(robada_env.Config(num_players=3, closing_ace=False, leftovers_to_last_runner=False), seed=2)
    np.testing.assert_array_equal(rgs.STATE_LAYOUT.view(rgs.encode_state(s), "rules"), [0, 1, 0])


# ---------------------------------------------------------------- random games, every table size

def _first_legal(obs) -> int:
    return int(np.flatnonzero(obs["action_mask"])[0])


def _random_parallel_game(par, seed):
    """Play one seeded game of random legal actions; yield the state after reset and every step."""
    rng = np.random.default_rng(seed)
    obs, _ = par.reset(seed=seed)
    yield par.state()
    while par.agents:
        acts = {a: int(rng.choice(np.flatnonzero(obs[a]["action_mask"]))) for a in par.agents}
        obs, *_ = par.step(acts)
        yield par.state()


@pytest.mark.parametrize("game", ["tapeo", "robada"])
def test_shapes_dtypes_and_bounds_over_random_games(game):
    mod, info = GAMES[game], get_game(game)
    size = STATES[game].STATE_SIZE
    for n in info.player_counts:
        par = mod.parallel_env(num_players=n)
        assert isinstance(par.state_space, spaces.Box) and par.state_space.shape == (size,)
        assert par.state_space.dtype == np.float32
        assert par.state_space is par.state_space   # built once
        count = 0
        for x in _random_parallel_game(par, seed=n):
            assert x.shape == (size,) and x.dtype == np.float32
            assert par.state_space.contains(x), n
            assert STATES[game].STATE_LAYOUT.view(x, "num_players")[n - info.min_players] == 1
            count += 1
        assert count > 5


@pytest.mark.parametrize("game", ["tapeo", "robada"])
def test_state_is_the_same_in_the_aec_and_parallel_forms(game):
    mod = GAMES[game]
    for n in (2, 3):
        par, aec = mod.parallel_env(num_players=n), mod.env(num_players=n)
        obs, _ = par.reset(seed=21)
        aec.reset(seed=21)
        np.testing.assert_array_equal(aec.state(), par.state())
        steps = 0
        while par.agents:
            acts = {a: _first_legal(obs[a]) for a in par.agents}
            if game == "tapeo":       # one Parallel step = every seat's AEC step
                for a in list(aec.agents):
                    aec.step(acts[a])
            else:                     # one Parallel step = the actor's AEC step
                aec.step(acts[aec.agent_selection])
            obs, *_ = par.step(acts)
            np.testing.assert_array_equal(aec.state(), par.state())
            steps += 1
        assert steps > 5


@pytest.mark.parametrize("game", ["tapeo", "robada"])
def test_state_is_the_engine_states_encoding_and_a_fresh_array(game):
    env = GAMES[game].raw_env(num_players=2)
    env.reset(seed=4)
    a, b = env.state(), env.state()
    np.testing.assert_array_equal(a, STATES[game].encode_state(env.game_state))
    a[:] = 7
    assert not np.array_equal(a, b)


@pytest.mark.parametrize("game", ["tapeo", "robada"])
@pytest.mark.parametrize("form", ["env", "raw_env", "parallel_env"])
def test_state_before_reset_says_call_reset(game, form):
    env = getattr(GAMES[game], form)(num_players=2)
    with pytest.raises(ResetNeededError, match="call reset"):
        env.state()
    assert env.state_space.shape == (STATES[game].STATE_SIZE,)


@pytest.mark.parametrize("game", ["tapeo", "robada"])
def test_state_survives_pickle_and_deepcopy(game):
    env = GAMES[game].env(num_players=3)
    env.reset(seed=9)
    for twin in (pickle.loads(pickle.dumps(env)), copy.deepcopy(env)):
        np.testing.assert_array_equal(twin.state(), env.state())


# ---------------------------------------------------------------- PettingZoo's own tests

@pytest.mark.parametrize("game", ["tapeo", "robada"])
def test_pettingzoo_api_and_state_tests_pass(game):
    mod = GAMES[game]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(mod.env(num_players=3), num_cycles=20)
        parallel_api_test(mod.parallel_env(num_players=3), num_cycles=20)
        state_test(mod.env(num_players=3), mod.parallel_env(num_players=3), num_cycles=20)


# ---------------------------------------------------------------- more than any observation

def test_tapeo_state_tells_apart_hidden_hands_that_seat_0_cannot():
    # seat 0's hand is the same; seat 1's differs (2 tortilla <-> 2 pepper), before any pick
    a = [[0] * 5 + [1] * 5, [5] * 4 + [6] * 4 + [0] * 2]
    b = [[0] * 5 + [1] * 5, [5] * 4 + [6] * 4 + [7] * 2]
    sa = tapeo_env.new_game(tapeo_env.Config(num_players=2), seed=0, deals=[a] * 3)
    sb = tapeo_env.new_game(tapeo_env.Config(num_players=2), seed=0, deals=[b] * 3)
    np.testing.assert_array_equal(tapeo_env.encode(sa, 0), tapeo_env.encode(sb, 0))
    assert not np.array_equal(tgs.encode_state(sa), tgs.encode_state(sb))


def test_robada_state_tells_apart_hidden_hands_that_seat_0_cannot():
    s = _robada_position()
    t = s.clone()
    # seat 1's Rey copas swapped with the deck's first card (a 2, rank 1): seat 0 sees no change
    t.hands[1][0], t.deck[0] = t.deck[0], t.hands[1][0]
    assert t.hands[1][0] % 10 != 9
    np.testing.assert_array_equal(robada_env.rules.observation.encode(s, 0),
                                  robada_env.rules.observation.encode(t, 0))
    assert not np.array_equal(rgs.encode_state(s), rgs.encode_state(t))


# ---------------------------------------------------------------- against the observation and the deck

@pytest.mark.parametrize("n", [2, 4, 6])
def test_tapeo_state_agrees_with_seat_0s_observation_and_holds_the_whole_deck(n):
    # seat 0's observation is seat-relative from seat 0, so its shared pieces are seat-absolute
    L, O = tgs.STATE_LAYOUT, tapeo_env.LAYOUT
    par = tapeo_env.parallel_env(num_players=n)
    deck = np.array(tapeo_env.DECK_COMPOSITION, np.float64)
    for x in _random_parallel_game(par, seed=100 + n):
        o = tapeo_env.encode(par.game_state, 0)
        for name in ("num_players", "pick", "hand_size", "bars", "scores"):
            np.testing.assert_array_equal(L.view(x, name), O.view(o, name), name)
        np.testing.assert_array_equal(L.view(x, "hands")[:10], O.view(o, "hand"))
        if not par.game_state.terminal:
            np.testing.assert_array_equal(L.view(x, "round"), O.view(o, "round"))
            # every tapa of this round's deck is in a hand, on a bar or undealt (T1, 'Each pick')
            counts = lambda v: np.rint(v.astype(np.float64).reshape(-1, 10) * deck).sum(axis=0)
            np.testing.assert_array_equal(counts(L.view(x, "hands")) + counts(L.view(x, "bars"))
                                          + counts(L.view(x, "undealt")), deck)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_robada_state_agrees_with_seat_0s_observation_and_holds_the_whole_deck(n):
    L, O = rgs.STATE_LAYOUT, robada_env.LAYOUT
    par = robada_env.parallel_env(num_players=n)
    shared = ("num_players", "to_act", "hand_sizes", "loose", "pile_top", "pile_size", "pile_points",
              "pile_ranks", "run_active", "run_start", "run_rank", "run_next", "run_closed", "run_gathered",
              "run_size", "run_points", "run_piles_taken", "deck_left", "last_runner")
    for x in _random_parallel_game(par, seed=200 + n):
        o = robada_env.rules.observation.encode(par.game_state, 0)
        for name in shared:
            np.testing.assert_array_equal(L.view(x, name), O.view(o, name), name)
        np.testing.assert_array_equal(L.view(x, "hands")[:10], O.view(o, "hand"))
        # every rank's 4 cards are in a hand, loose, in a pile, in the run or in the deck (R1)
        total = (L.view(x, "hands").reshape(4, 10).sum(axis=0) + L.view(x, "loose")
                 + L.view(x, "pile_ranks").reshape(4, 10).sum(axis=0) + L.view(x, "run_gathered")
                 + L.view(x, "deck_ranks")) * 4
        np.testing.assert_array_equal(total, np.full(10, 4.0))


def test_tapeo_state_through_pettingzoos_conversions():
    from pettingzoo.utils.conversions import aec_to_parallel, parallel_to_aec
    direct = tapeo_env.parallel_env(num_players=3)
    direct.reset(seed=1)
    for conv in (parallel_to_aec(tapeo_env.parallel_env(num_players=3)), aec_to_parallel(tapeo_env.env(num_players=3))):
        conv.reset(seed=1)
        assert conv.state_space.shape == (tgs.STATE_SIZE,)
        np.testing.assert_array_equal(conv.state(), direct.state())


# ---------------------------------------------------------------- one definition: batches and positions
# The batched engines' global_state() and the one-position encode_state are one function
# (encode_state_batch; encode_state is it at B = 1). These tests play seeded random games in the
# batched engine and in the single-game engine side by side (one seed, one game in both) and
# require, at every step of every game, the batched rows, encode_state of the single game and the
# layout's first implementation (the per-position Python code of version 1, kept below as the
# oracle) to agree bit for bit: every table size, other decks/hand sizes/rounds (Tapeo), every
# combination of the rule options (Ronda Robada).

from itertools import product  # noqa: E402

from hod.core.deal import draw_seeds  # noqa: E402
from robada_env.rules import cards as rcards  # noqa: E402
from robada_env.rules.batched import BatchedRobada, random_legal_actions  # noqa: E402
from robada_env.rules.engine import Config as RConfig  # noqa: E402
from robada_env.rules.engine import new_game as robada_new_game  # noqa: E402
from tapeo_env.rules import observation as tobs  # noqa: E402
from tapeo_env.rules.batched import BatchedTapeo  # noqa: E402


def _old_tapeo_state(state) -> np.ndarray:
    cfg = state.config
    n = cfg.num_players
    inv = tobs._inv_deck(cfg.deck)   # 1 / deck count per kind, the observation's
    out = np.zeros(tgs.STATE_SIZE, np.float32)
    out[tgs._NUM_PLAYERS + n - tgs.MIN_PLAYERS] = 1.0
    if state.terminal:
        out[tgs._GAME_OVER] = 1.0
    else:
        out[tgs._ROUND + state.round] = 1.0
    out[tgs._PICK] = state.pick / (tgs.MAX_HAND_SIZE - 1)
    out[tgs._HAND_SIZE] = state.cards_in_hand / tgs.MAX_HAND_SIZE
    out[tgs._HANDS:tgs._HANDS + n * tgs._K] = (state.hands * inv).ravel()      # uint8 * float64: float64
    out[tgs._BARS:tgs._BARS + n * tgs._K] = (state.bars * inv).ravel()
    out[tgs._CHURROS:tgs._CHURROS + n] = state.churros_kept / tgs.CHURRO_SCALE
    out[tgs._SCORES:tgs._SCORES + n] = state.scores_so_far() / tgs.SCORE_SCALE
    out[tgs._UNDEALT:tgs._UNDEALT + tgs._K] = state.undealt * inv
    return out


def _old_robada_state(s) -> np.ndarray:
    n = s.n
    rank_of = [c % rgs._R for c in range(40)]
    q = 1.0 / rgs.COPIES_PER_RANK
    idx: list[int] = []
    val: list[float] = []
    add_i, add_v = idx.append, val.append

    def counts(base: int, cards) -> None:        # cards of each rank among ``cards``, / 4
        cnt = [0] * rgs._R
        for c in cards:
            cnt[rank_of[c]] += 1
        for r, k in enumerate(cnt):
            if k:
                add_i(base + r); add_v(k * q)

    add_i(rgs._O["num_players"] + n - rgs.MIN_PLAYERS); add_v(1.0)
    cfg = s.config
    for k, name in enumerate(rgs.RULE_FLAGS):
        if getattr(cfg, name):
            add_i(rgs._O["rules"] + k); add_v(1.0)
    if not s.terminal:
        add_i(rgs._O["to_act"] + s.current); add_v(1.0)
    for i in range(n):
        hand = s.hands[i]
        if hand:
            counts(rgs._O["hands"] + i * rgs._R, hand)
            add_i(rgs._O["hand_sizes"] + i); add_v(len(hand) / rgs.CARDS_PER_DEAL)
        pile = s.piles[i]
        if pile:
            add_i(rgs._O["pile_top"] + i * rgs._R + rank_of[pile[-1]]); add_v(1.0)
            add_i(rgs._O["pile_size"] + i); add_v(len(pile) / rgs.DECK_SIZE)
            add_i(rgs._O["pile_points"] + i); add_v(s.points[i] / rgs.TOTAL_POINTS)
            counts(rgs._O["pile_ranks"] + i * rgs._R, pile)
    counts(rgs._O["loose"], s.loose)
    if s.run:
        add_i(rgs._O["run_active"]); add_v(1.0)
        add_i(rgs._O["run_start"] + s.run_start); add_v(1.0)
        add_i(rgs._O["run_rank"] + s.run_rank); add_v(1.0)
        if s.run_next != rgs.RUN_CLOSED:
            add_i(rgs._O["run_next"] + s.run_next); add_v(1.0)
        else:  # closed by the Ace after the Rey (R2)
            add_i(rgs._O["run_closed"]); add_v(1.0)
        counts(rgs._O["run_gathered"], s.run)
        add_i(rgs._O["run_size"]); add_v(len(s.run) / rgs.DECK_SIZE)
        add_i(rgs._O["run_points"]); add_v(sum(rcards.CARD_POINTS[c] for c in s.run) / rgs.TOTAL_POINTS)
        for t in s.run_taken:
            add_i(rgs._O["run_piles_taken"] + t); add_v(1.0)
    if s.deck:
        add_i(rgs._O["deck_left"]); add_v(len(s.deck) / rgs._DECK_MAX)
        counts(rgs._O["deck_ranks"], s.deck)
    if s.last_runner >= 0:
        add_i(rgs._O["last_runner"] + s.last_runner); add_v(1.0)
    out = np.zeros(rgs.STATE_SIZE, np.float32)
    out.put(idx, val)
    return out


def _tapeo_lockstep(cfg, games, seed):
    """Play ``games`` seeded games to the end in both engines; returns the positions compared."""
    rng = np.random.default_rng(seed)
    seeds = draw_seeds(rng, games)
    eng = BatchedTapeo(cfg, games)
    eng.reset(seeds=seeds)
    singles = [tapeo_env.new_game(cfg, seed=int(s)) for s in seeds]
    compared = 0
    while True:
        rows = eng.global_state()
        assert rows.shape == (games, tgs.STATE_SIZE) and rows.dtype == np.float32
        for b, s in enumerate(singles):
            want = _old_tapeo_state(s)
            np.testing.assert_array_equal(rows[b], want)
            np.testing.assert_array_equal(tgs.encode_state(s), want)
            compared += 1
        live = np.flatnonzero(~eng.terminal)
        if live.size == 0:
            return compared
        sub = live[::2] if live.size > 1 else live               # a subset: the games argument too
        np.testing.assert_array_equal(eng.global_state(sub), rows[sub])
        picks = eng.random_actions(rng=rng)[live]
        eng.step(picks, games=live)
        for a, b in enumerate(live):
            tapeo_env.apply_actions(singles[b], [int(x) for x in picks[a]])


@pytest.mark.parametrize("cfg", [tapeo_env.Config(num_players=n) for n in range(2, 7)]
                         + [tapeo_env.Config(num_players=3, hand_size=5, num_rounds=2),
                            tapeo_env.Config(num_players=2, deck=(14, 14, 4, 4, 4, 0, 8, 10, 6, 10))],
                         ids=lambda c: f"{c.num_players}p-h{c.hand_size}-r{c.num_rounds}-d{sum(c.deck)}")
def test_tapeo_batched_state_is_encode_state_bit_for_bit(cfg):
    # every position of 12 whole games (3 rounds of up to 9 picks: ~28 positions each)
    assert _tapeo_lockstep(cfg, 12, seed=cfg.num_players) >= 12 * (cfg.num_rounds * (cfg.hand_size - 1))


def _robada_lockstep(cfg, games, seed):
    rng = np.random.default_rng(seed)
    seeds = draw_seeds(rng, games)
    eng = BatchedRobada(cfg, games)
    eng.reset(seeds=seeds)
    singles = [robada_new_game(cfg, seed=int(s)) for s in seeds]
    compared = 0
    features = np.zeros(rgs.STATE_SIZE, bool)   # which entries ever were non-zero
    while True:
        rows = eng.global_state()
        assert rows.shape == (games, rgs.STATE_SIZE) and rows.dtype == np.float32
        features |= (rows != 0).any(0)
        for b, s in enumerate(singles):
            want = _old_robada_state(s)
            np.testing.assert_array_equal(rows[b], want)
            np.testing.assert_array_equal(rgs.encode_state(s), want)
            compared += 1
        if eng.terminal.all():
            return compared, features
        live = ~eng.terminal
        acts = random_legal_actions(eng.legal_mask()[:, 0], rng)
        eng.step(acts[:, None])
        for b in np.flatnonzero(live):
            apply_action(singles[b], int(acts[b]))


@pytest.mark.parametrize("n", [2, 3, 4])
@pytest.mark.parametrize("flags", list(product([True, False], repeat=3)), ids=lambda f: "".join("TF"[not x] for x in f))
def test_robada_batched_state_is_encode_state_bit_for_bit(n, flags):
    cfg = RConfig(num_players=n, **dict(zip(rgs.RULE_FLAGS, flags)))
    compared, seen = _robada_lockstep(cfg, 6, seed=10 * n + sum(flags))
    assert compared > 6 * 40                                    # whole games: dozens of decisions each
    L = rgs.STATE_LAYOUT.offsets
    # the run pieces, the piles and the deck were exercised, not only zeros
    for piece in ("run_active", "run_gathered", "pile_top", "pile_ranks", "deck_ranks", "hands"):
        assert seen[L[piece]].any(), piece
