"""The policy diagnostics (training/diagnostics.py) on hand-built policies, and the ``ranking`` bot.

A policy that plays one fixed order of preference whatever the state must measure exactly 0
(also when its logits move with the state but never change order); a policy whose choice follows
its hand must measure far above 0. The trained policy's own test is in test_learned_play.py.
"""
import numpy as np
import pytest

from hod import agents
from hod.agents.tapeo_bots import BEST_RANKING, RankingBot
from hod.core.errors import ConfigError
from hod.training.diagnostics import (fit_ranking, masked_argmax, policy_report, probe_positions, ranking_choices,
                                      saturation, state_dependence)
from hod.training.numpy_policy import NumpyPolicy
from tapeo_env.rules.cards import KIND_NAMES, NUM_KINDS, kind_index
from tapeo_env.rules.observation import LAYOUT, OBS_SIZE

ORDER = [kind_index(k) for k in ("churro", "ham1", "pepper", "tortilla", "bread", "freeloader", "croqueta", "ham3",
                                "prawns", "ham2")]


@pytest.fixture(scope="module")
def positions():
    return probe_positions("tapeo", (2, 4), 1000, seed=7)


def fixed_ranking_policy(order, hidden: bool = False) -> NumpyPolicy:
    """Logits = a constant per kind (rank) + a shift common to all kinds that depends on the state."""
    rng = np.random.default_rng(0)
    b = np.zeros(NUM_KINDS, np.float32)
    b[np.asarray(order)] = np.arange(NUM_KINDS, 0, -1, dtype=np.float32)
    if not hidden:
        return NumpyPolicy([], (np.zeros((NUM_KINDS, OBS_SIZE), np.float32), b))
    w1 = rng.normal(0, 1, (16, OBS_SIZE)).astype(np.float32)
    row = rng.normal(0, 3, (1, 16)).astype(np.float32)   # every kind gets the same state-dependent shift
    return NumpyPolicy([(w1, np.zeros(16, np.float32))], (np.repeat(row, NUM_KINDS, 0), b))


def hand_policy() -> NumpyPolicy:
    """Logit of each kind = its share in the own hand (plus a small fixed tie-break): picks what it holds most of."""
    w = np.zeros((NUM_KINDS, OBS_SIZE), np.float32)
    start = LAYOUT.offsets["hand"].start
    for k in range(NUM_KINDS):
        w[k, start + k] = 1.0
    return NumpyPolicy([], (w, np.linspace(0, 1e-3, NUM_KINDS, dtype=np.float32)))


def test_ranking_choices_take_the_first_legal_kind_of_the_order():
    masks = np.zeros((3, NUM_KINDS), np.int8)
    masks[0, [0, 5, 9]] = 1
    masks[1, [3]] = 1
    masks[2, :] = 1
    assert ranking_choices(ORDER, masks).tolist() == [9, 3, ORDER[0]]
    assert masked_argmax(np.arange(NUM_KINDS, dtype=np.float32)[None].repeat(3, 0), masks).tolist() == [9, 3, 9]


@pytest.mark.parametrize("hidden", [False, True])
def test_a_fixed_ranking_measures_zero_and_its_ranking_is_recovered(positions, hidden):
    obs, masks = positions
    pol = fixed_ranking_policy(ORDER, hidden)
    logits = pol.logits(obs)
    if hidden:   # the logits do move with the state, by a lot ...
        assert logits.std(axis=0).min() > 1.0
    rep = state_dependence(logits, masks)
    assert rep["state_dependence"] == 0.0        # ... but never change order
    assert rep["ranking"] == ORDER
    assert rep["decisions"] == int(((masks != 0).sum(axis=1) >= 2).sum()) > 500


def test_a_state_dependent_policy_measures_far_above_zero(positions):
    obs, masks = positions
    rep = state_dependence(hand_policy().logits(obs), masks)
    # its best-fitting fixed ranking still explains many choices (most hands hold one or two of
    # each kind, so ties fall to the fixed tie-break), but a quarter of the decisions and more
    # differ from it (measured: 0.36)
    assert rep["state_dependence"] > 0.25


def test_the_fitted_ranking_is_at_least_as_good_as_the_true_one_on_a_noisy_ranking(positions):
    """A fixed ranking with a few state-dependent exceptions: the fit explains at least as many choices."""
    obs, masks = positions
    logits = fixed_ranking_policy(ORDER).logits(obs) + hand_policy().logits(obs) * 3.0
    rep = state_dependence(logits, masks)
    legal = masks != 0
    keep = legal.sum(axis=1) >= 2
    true_err = np.mean(ranking_choices(ORDER, legal[keep]) != masked_argmax(logits[keep], legal[keep]))
    assert 0 < rep["state_dependence"] <= true_err
    assert fit_ranking(logits[keep], legal[keep]).tolist() == rep["ranking"]


def test_saturation_of_tanh_layers(positions):
    obs, masks = positions
    rng = np.random.default_rng(1)
    big = NumpyPolicy([(rng.normal(0, 1, (32, OBS_SIZE)).astype(np.float32), np.full(32, 50, np.float32))],
                      (np.zeros((NUM_KINDS, 32), np.float32), np.zeros(NUM_KINDS, np.float32)))
    small = NumpyPolicy([(rng.normal(0, 0.01, (32, OBS_SIZE)).astype(np.float32), np.zeros(32, np.float32))],
                        (np.zeros((NUM_KINDS, 32), np.float32), np.zeros(NUM_KINDS, np.float32)))
    assert saturation(big, obs)["saturated"] == [1.0]
    assert saturation(big, obs)["unit_std"][0] < 1e-3
    assert saturation(small, obs)["saturated"] == [0.0]
    rep = policy_report(big, obs, masks, KIND_NAMES)
    assert rep["state_dependence"] == 0.0 and len(rep["ranking_names"]) == NUM_KINDS


def test_ranking_bot_plays_the_first_legal_kind_of_its_order():
    assert "ranking" in agents.names("tapeo")
    bot = agents.make("tapeo", "ranking", seed=0)
    assert [KIND_NAMES[k] for k in bot.order] == list(BEST_RANKING)
    mask = np.zeros(NUM_KINDS, np.int8)
    mask[[kind_index("pepper"), kind_index("ham1"), kind_index("croqueta")]] = 1
    obs = {"observation": np.zeros(OBS_SIZE, np.float32), "action_mask": mask}
    want = min((BEST_RANKING.index(k), k) for k in ("pepper", "ham1", "croqueta"))[1]
    assert bot.act(obs) == kind_index(want)
    custom = RankingBot(order=ORDER)
    assert custom.act(obs) == kind_index("ham1")
    with pytest.raises(ConfigError, match="each of the 10 kinds"):
        RankingBot(order=ORDER[:-1])
    with pytest.raises(ConfigError, match="unknown option"):
        RankingBot(orderr=ORDER)
