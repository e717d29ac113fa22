"""The scalar Tapeo API (a view over the compiled kernels) in lockstep with the engine it replaced
(``tests/oracles/tapeo_scalar.py``, the executable specification): many seeded games, every
player count 2..6, other hand sizes, round counts, decks and rulings, explicit deals; at every
step the same state, masks, legal actions, observations of every seat, known hands, unseen
counts, scores and winners, bit for bit, and the same belief samples from the same generator."""
import copy
import pickle

import numpy as np
import pytest

from oracles import tapeo_scalar as O
from tapeo_env.rules import engine as E
from tapeo_env.rules.observation import encode, encode_all
from tapeo_env.rules.scoring import Rulings

_ODD_RULINGS = Rulings(tortilla_pair=4, croqueta_table=(0, 2, 4), ham_first=5, ham_second=2, prawn=2, bread_dip=4,
                       pepper=1, hot_pepper_min=2, hot_pepper_penalty=7, churro_most=5, churro_fewest=3,
                       two_player_fewest_loses=True, tie_break_by_churros=False)
_ZERO_HOT = Rulings(hot_pepper_min=0, hot_pepper_penalty=4)
#: (config, games): every player count with the rules' defaults, then the other rule options.
CONFIGS = [(E.Config(num_players=n), 6) for n in range(2, 7)] + [
    (E.Config(num_players=2, rulings=Rulings(two_player_fewest_loses=True)), 3),
    (E.Config(num_players=3, rulings=_ODD_RULINGS), 3),
    (E.Config(num_players=4, rulings=_ZERO_HOT), 3),
    (E.Config(num_players=5, hand_size=3, num_rounds=5), 3),
    (E.Config(num_players=4, hand_size=1, num_rounds=2), 2),
    (E.Config(num_players=6, hand_size=2), 2),
    (E.Config(num_players=3, deck=(9, 0, 3, 3, 3, 6, 6, 9, 9, 6), hand_size=12, num_rounds=4), 3),
]


def same_state(new, old):
    """Every field of the new state equals the oracle's (hands by holder: ``old.hand(i)``)."""
    n = old.config.num_players
    assert new.config == old.config and new.seed == old.seed
    assert (new.round, new.pick, new.terminal, new.cards_in_hand) == (old.round, old.pick, old.terminal,
                                                                     old.cards_in_hand)
    for i in range(n):
        assert new.hand(i).tolist() == old.hand(i).tolist()
        assert new.hand_id(i) == old.hand_id(i)
    assert new.bars.tolist() == old.bars.tolist()
    assert new.churros_kept.tolist() == old.churros_kept.tolist()
    assert new.undealt.tolist() == old.undealt.tolist()
    assert new.round_scores.tolist() == old.round_scores.tolist()
    assert new.churros_held().tolist() == old.churros_held().tolist()
    assert new.scores_so_far().tolist() == old.scores_so_far().tolist()
    assert new.dealt == old.dealt and new.reveals == old.reveals and new.preset_deals == old.preset_deals
    assert [b.tolist() for b in new.round_bars] == [b.tolist() for b in old.round_bars]
    assert all(b.dtype == np.int64 for b in new.round_bars)
    if old.terminal:
        assert new.final_scores.tolist() == old.final_scores.tolist() and new.final_scores.dtype == np.int64
        assert new.winners == old.winners
    else:
        assert new.final_scores is None and new.winners is None


def same_views(new, old):
    """Every query of the API gives the oracle's answer, same values and dtypes."""
    n = old.config.num_players
    a, b = E.legal_masks(new), O.legal_masks(old)
    assert a.dtype == b.dtype == np.int8 and np.array_equal(a, b)
    obs_new, obs_old = encode_all(new), O.encode_all(old)
    assert obs_new.dtype == np.float32 and np.array_equal(obs_new.view(np.int32), obs_old.view(np.int32))
    for i in range(n):
        m = E.legal_mask(new, i)
        assert m.dtype == np.int8 and np.array_equal(m, O.legal_mask(old, i))
        assert E.legal_actions(new, i) == O.legal_actions(old, i)
        assert np.array_equal(encode(new, i).view(np.int32), O.encode(old, i).view(np.int32))
        assert np.array_equal(encode(new, i).view(np.int32), obs_new[i].view(np.int32))
        kn, ko = E.known_hands(new, i), O.known_hands(old, i)
        assert [None if h is None else h.tolist() for h in kn] == [None if h is None else h.tolist() for h in ko]
        u = E.unseen_counts(new, i)
        assert u.dtype == np.int64 and u.tolist() == O.unseen_counts(old, i).tolist()
    assert E.scores(new) == O.scores(old) and E.winners(new) == O.winners(old)
    assert E.is_terminal(new) == O.is_terminal(old)
    for buf in (np.full(obs_old.shape[1], 7, np.float32), np.full(obs_old.shape[1], 7.0)):   # every entry written
        assert encode(new, n - 1, out=buf) is buf and np.array_equal(buf, O.encode(old, n - 1))


def play_both(cfg, seed, deals=None, belief_every=3):
    rng = np.random.default_rng(seed)
    new = E.new_game(cfg, seed=seed, deals=deals)
    old = O.new_game(cfg, seed=seed, deals=deals)
    steps = 0
    while True:
        same_state(new, old)
        same_views(new, old)
        if steps % belief_every == 0:
            seat = int(rng.integers(cfg.num_players))
            k = int(rng.integers(1 << 30))
            bn = E.sample_consistent_state(new, seat, np.random.default_rng(k))
            bo = O.sample_consistent_state(old, seat, np.random.default_rng(k))
            same_state(bn, bo)
            same_views(bn, bo)
            assert np.array_equal(encode(bn, seat), encode(new, seat))
        if old.terminal:
            break
        picks = [int(rng.choice(O.legal_actions(old, i))) for i in range(cfg.num_players)]
        assert E.apply_actions(new, picks) == O.apply_actions(old, picks)
        steps += 1
    return new


@pytest.mark.parametrize("cfg,games", CONFIGS, ids=lambda c: repr(c)[:60] if isinstance(c, E.Config) else str(c))
def test_seeded_games_in_lockstep_with_the_oracle(cfg, games):
    for g in range(games):
        play_both(cfg, seed=1000 * cfg.num_players + g)


def test_explicit_deals_in_lockstep_with_the_oracle():
    # a replay's deals (record.replay): every round dealt from them, in the same deal order
    cfg = E.Config(num_players=3)
    deals = [O.new_game(cfg, seed=s).dealt[0] for s in (7, 8, 9)]
    s = play_both(cfg, seed=5, deals=deals)
    assert s.dealt == deals


def test_clones_branch_alike():
    cfg = E.Config(num_players=4)
    new, old = E.new_game(cfg, seed=3), O.new_game(cfg, seed=3)
    for _ in range(5):
        picks = [O.legal_actions(old, i)[0] for i in range(4)]
        E.apply_actions(new, picks)
        O.apply_actions(old, picks)
    cn, co = new.clone(), old.clone()
    picks = [O.legal_actions(old, i)[-1] for i in range(4)]
    E.apply_actions(cn, picks)
    O.apply_actions(co, picks)
    same_state(cn, co)
    same_state(new, old)                 # the originals did not move


@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_pickled_and_deep_copied_states_play_on_alike(how):
    # the copy's arrays are views of its own record again (the kernels write the record)
    copier = (lambda x: pickle.loads(pickle.dumps(x))) if how == "pickle" else copy.deepcopy
    cfg, rng = E.Config(num_players=3), np.random.default_rng(2)
    new, old = E.new_game(cfg, seed=8), O.new_game(cfg, seed=8)
    for _ in range(4):
        picks = [int(rng.choice(O.legal_actions(old, i))) for i in range(3)]
        E.apply_actions(new, picks)
        O.apply_actions(old, picks)
    new = copier(new)
    assert np.shares_memory(new.hands, new.record.hands)
    while not old.terminal:
        picks = [int(rng.choice(O.legal_actions(old, i))) for i in range(3)]
        E.apply_actions(new, picks)
        O.apply_actions(old, picks)
        same_state(new, old)
        same_views(new, old)
