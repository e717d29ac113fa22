"""The scalar Ronda Robada API (a view over the compiled kernels) in lockstep with the engine it
replaced (``tests/oracles/robada_scalar.py``, the executable specification): seeded games at 2-4
players under every rule option of ``Config`` (R2 ``closing_ace``, R3 ``may_take_own_pile``, R7
``leftovers_to_last_runner``), re-deals (R6) and the end with its leftovers (R7); at every step
the same cards in the same places, legal actions and masks of every seat, observations of every
seat (``encode``, ``encode_all``, ``view_of``), scores, winners, final rewards under every reward
scheme, bit for bit; clones, belief samples from the same generator, hand-built positions
(``from_position``), and the same refusals (error type, nothing changed)."""
import copy
import itertools
import pickle

import numpy as np
import pytest

from hod.core.errors import ConfigError, IllegalActionError
from hod.core.rewards import REWARD_SCHEMES, final_rewards
from oracles import robada_scalar as O
from robada_env.rules import engine as E
from robada_env.rules.actions import CONFIRM, DROP, NOOP, NUM_ACTIONS, TAP
from robada_env.rules.observation import encode, encode_all, view_of

#: Every rule option at every player count: 3 counts x 8 option sets.
CONFIGS = [E.Config(num_players=n, closing_ace=ca, may_take_own_pile=own, leftovers_to_last_runner=lo)
           for n in (2, 3, 4) for ca, own, lo in itertools.product((True, False), repeat=3)]


def fields(s) -> dict:
    """Every public field of a state as plain Python values."""
    return {
        "n": s.n, "config": s.config, "deck_order": s.deck_order, "deck": list(s.deck),
        "hands": [list(h) for h in s.hands], "loose": list(s.loose), "piles": [list(p) for p in s.piles],
        "points": list(s.points), "current": s.current, "run": list(s.run), "run_start": s.run_start,
        "run_rank": s.run_rank, "run_next": s.run_next, "run_taken": list(s.run_taken),
        "last_runner": s.last_runner, "terminal": s.terminal, "history": list(s.history),
        "card_count": s.card_count(),
    }


def same(new, old) -> None:
    """The new state answers every query as the oracle's, same values and dtypes."""
    f_new, f_old = fields(new), fields(old)
    assert f_new == f_old
    assert all(type(v) is int for v in f_new["points"] + [f_new["current"], f_new["run_next"], f_new["last_runner"]])
    n = old.n
    assert E.legal_actions(new) == O.legal_actions(old)
    assert E.is_terminal(new) is O.is_terminal(old)
    assert E.scores(new) == O.scores(old) and E.winners(new) == O.winners(old)
    assert E.legal_masks(new).dtype == np.int8
    assert E.legal_masks(new).tobytes() == O.legal_masks(old).tobytes()
    for seat in range(n):
        assert E.legal_actions(new, seat) == O.legal_actions(old, seat)
        m = E.legal_mask(new, seat)
        assert m.dtype == np.int8 and m.tobytes() == O.legal_mask(old, seat).tobytes()
        obs = encode(new, seat)
        assert obs.dtype == np.float32 and obs.tobytes() == O.encode(old, seat).tobytes()
        assert view_of(new, seat) == O.view_of(old, seat)
    every = encode_all(new)
    assert every.dtype == np.float32 and every.tobytes() == O.encode_all(old).tobytes()
    for a in range(-1, NUM_ACTIONS + 1):
        assert E.is_legal(new, a) == O.is_legal(old, a)
    if old.terminal:
        for scheme in REWARD_SCHEMES:
            assert final_rewards(E.scores(new), E.winners(new), scheme).tobytes() == \
                final_rewards(O.scores(old), O.winners(old), scheme).tobytes()


def advance(new, old, steps: int, rng: np.random.Generator, greedy: float) -> None:
    """Play up to ``steps`` actions (fewer if the game ends) in both states, the same actions."""
    for _ in range(steps):
        if old.terminal:
            break
        a = pick(O.legal_actions(old), rng, greedy)
        O.apply_action(old, a)
        E.apply_action(new, a)


def pick(legal: list, rng: np.random.Generator, greedy: float) -> int:
    """A random legal action; with probability ``greedy`` one that keeps a run going (tap, take,
    start) so that runs get long and piles are taken."""
    keep = [a for a in legal if a < DROP or TAP <= a < CONFIRM]
    if keep and rng.random() < greedy:
        return int(keep[rng.integers(len(keep))])
    return int(legal[rng.integers(len(legal))])


def play_lockstep(new, old, rng: np.random.Generator, greedy: float, check_every: int = 1) -> int:
    """Play both states to the end with the same actions; returns the number of actions."""
    k = 0
    same(new, old)
    while not old.terminal:
        a = pick(O.legal_actions(old), rng, greedy)
        O.apply_action(old, a)
        E.apply_action(new, a)
        k += 1
        if k % check_every == 0 or old.terminal:
            same(new, old)
    return k


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c.num_players}p-{int(c.closing_ace)}"
                         f"{int(c.may_take_own_pile)}{int(c.leftovers_to_last_runner)}")
def test_games_in_lockstep(config):
    rng = np.random.default_rng(config.num_players * 100 + hash((config.closing_ace, config.may_take_own_pile,
                                                                   config.leftovers_to_last_runner)) % 97)
    for g in range(4):
        seed = int(rng.integers(2**63))
        new, old = E.new_game(config, seed=seed), O.new_game(config, seed=seed)
        play_lockstep(new, old, rng, greedy=(0.2, 0.5, 0.8, 0.95)[g], check_every=1 if g < 2 else 3)
    # re-deals happened (36 cards to deal), and the games ended
    assert old.terminal and len(old.history) >= 36 // config.num_players


def test_seeds_generators_and_decks_deal_alike():
    for config in CONFIGS[::5]:
        for seed in (0, 1, 2**64 - 1):
            same(E.new_game(config, seed=seed), O.new_game(config, seed=seed))
        new, old = E.new_game(config, rng=np.random.default_rng(7)), O.new_game(config, rng=np.random.default_rng(7))
        same(new, old)
        deck = np.random.default_rng(3).permutation(40).tolist()
        same(E.new_game(config, deck=deck), O.new_game(config, deck=deck))
    assert E.new_game().config == E.Config()


def test_clones_branch_independently():
    rng = np.random.default_rng(11)
    for config in CONFIGS[::3]:
        seed = int(rng.integers(2**63))
        new, old = E.new_game(config, seed=seed), O.new_game(config, seed=seed)
        advance(new, old, int(rng.integers(5, 40)), rng, 0.7)
        before = fields(new)
        c_new, c_old = new.clone(), old.clone()
        same(c_new, c_old)
        play_lockstep(c_new, c_old, rng, 0.6)
        assert fields(new) == before            # the original did not move
        same(new, old)
        for other in (copy.deepcopy(new), pickle.loads(pickle.dumps(new))):
            same(other, old)
            play_lockstep(other, old.clone(), np.random.default_rng(5), 0.5)
        same(new, old)


def test_belief_samples_alike():
    rng = np.random.default_rng(12)
    for config in CONFIGS[::2]:
        seed = int(rng.integers(2**63))
        new, old = E.new_game(config, seed=seed), O.new_game(config, seed=seed)
        while not old.terminal:
            for seat in range(config.num_players):
                k = int(rng.integers(2**32))
                s_new = E.sample_consistent_state(new, seat, np.random.default_rng(k))
                s_old = O.sample_consistent_state(old, seat, np.random.default_rng(k))
                same(s_new, s_old)
                assert encode(s_new, seat).tobytes() == encode(new, seat).tobytes()
            same(new, old)
            advance(new, old, int(rng.integers(1, 9)), rng, 0.6)
        s_new = E.sample_consistent_state(new, 0, np.random.default_rng(1))
        same(s_new, O.sample_consistent_state(old, 0, np.random.default_rng(1)))


def random_position(config, rng):
    """Keyword arguments of a random hand-built position: every card once; hands of 0..3 cards
    (not all empty), a deck of whole deals, loose cards and piles from the rest."""
    n = config.num_players
    cards = rng.permutation(40).tolist()
    sizes = rng.integers(0, 4, n)
    if sizes.sum() == 0:
        sizes[rng.integers(n)] = 1
    deals = int(rng.integers(0, (40 - sizes.sum() - 1) // (3 * n) + 1))
    hands = []
    for k in sizes:
        hands.append(cards[:k])
        cards = cards[k:]
    deck, cards = cards[:3 * n * deals], cards[3 * n * deals:]
    cut = sorted(rng.integers(0, len(cards) + 1, n + 1).tolist())
    loose = cards[:cut[0]]
    piles = [cards[cut[i]:cut[i + 1]] for i in range(n)]
    piles[-1] += cards[cut[n]:]
    runners = [-1] + [i for i in range(n) if piles[i]]          # a last runner has a pile (R5)
    return dict(hands=hands, loose=loose, piles=piles, deck=deck, current=int(rng.integers(n)),
                last_runner=int(rng.choice(runners)))


def test_hand_built_positions_in_lockstep():
    rng = np.random.default_rng(13)
    for g in range(60):
        config = CONFIGS[g % len(CONFIGS)]
        kw = random_position(config, rng)
        new, old = E.from_position(config, **kw), O.from_position(config, **kw)
        play_lockstep(new, old, rng, 0.6)
    # every hand empty: the deck deals (R6); deck out too: the game ends, leftovers to the runner (R7)
    config = E.Config(num_players=2)
    kw = dict(hands=[[], []], loose=list(range(4)), piles=[list(range(4, 20)), list(range(20, 28))],
              deck=list(range(28, 40)), current=1, last_runner=0)
    new, old = E.from_position(config, **kw), O.from_position(config, **kw)
    same(new, old)
    assert new.hands == [[28, 29, 30], [31, 32, 33]] and new.current == 1
    kw.update(piles=[list(range(4, 28)), list(range(28, 40))], deck=[])
    new, old = E.from_position(config, **kw), O.from_position(config, **kw)
    same(new, old)
    assert new.terminal and new.piles[0][-1] == 27 and new.loose == []


def refusals(s, module) -> list:
    """What each bad call raises (the exception type) for ``module``'s API on ``s``."""
    out = []
    illegal = [a for a in range(NUM_ACTIONS) if a not in module.legal_actions(s) and a != NOOP][::7]
    calls = [lambda a=a: module.apply_action(s, a) for a in [-1, NUM_ACTIONS, NOOP, 999, 1.5] + illegal]
    calls += [lambda: module.apply_actions(s, [0]), lambda: module.apply_actions(s, [NOOP] * s.n)]
    calls += [lambda b=b: module.legal_mask(s, b) for b in (-1, s.n, 1.0, "0", None)]
    calls += [lambda b=b: module.legal_actions(s, b) for b in (-1, s.n)]
    calls += [lambda b=b: module.sample_consistent_state(s, b, np.random.default_rng(0)) for b in (-1, s.n)]
    enc = encode if module is E else O.encode
    view = view_of if module is E else O.view_of
    calls += [lambda b=b: enc(s, b) for b in (-1, s.n, 1.5)] + [lambda b=b: view(s, b) for b in (-1, s.n)]
    for call in calls:
        try:
            call()
            out.append(None)
        except Exception as e:             # noqa: BLE001 - the type is what is compared
            out.append(type(e))
    return out


def test_refusals_alike_and_change_nothing():
    rng = np.random.default_rng(14)
    for config in CONFIGS[::4]:
        seed = int(rng.integers(2**63))
        new, old = E.new_game(config, seed=seed), O.new_game(config, seed=seed)
        while True:
            before = fields(new)
            got = refusals(new, E)
            assert got == refusals(old, O)
            assert all(t in (IllegalActionError, ConfigError) or t is None for t in got)
            assert fields(new) == before
            same(new, old)
            if old.terminal:
                break
            advance(new, old, int(rng.integers(1, 12)), rng, 0.7)
    # the joint-action form: the seat to act's action, no-op for the others
    new, old = E.new_game(E.Config(3), seed=9), O.new_game(E.Config(3), seed=9)
    a = O.legal_actions(old)[0]
    joint = [NOOP, NOOP, NOOP]
    joint[old.current] = a
    E.apply_actions(new, joint)
    O.apply_actions(old, joint)
    same(new, old)
    for bad in (dict(hands=[[0]], loose=list(range(1, 40))), dict(hands=[[0], [0]], loose=list(range(1, 40))),
                dict(hands=[[0], [1]], loose=list(range(2, 40)), current=2)):
        for module in (E, O):
            with pytest.raises(ConfigError):
                module.from_position(E.Config(2), **bad)
