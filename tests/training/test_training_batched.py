"""Training through the batched engines (``engine = "batched"``): the pool as batch policies,
weighted opponent draws, final rewards of every learner seat, illegal actions, tiny PPO runs."""
from __future__ import annotations

import json

import numpy as np
import pytest
from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported

from hod.core.errors import ConfigError, IllegalActionError
from hod.training import config as C
from hod.agents.batch_policies import random_policy
from hod.training.learner_env import LearnerVecEnv
from hod.training.numpy_policy import NumpyBatchPolicy, NumpyPolicy
from hod.training.pool import BatchOpponents, OpponentPool
from hod.training.train import Trainer
from hod.training.vec_env import make_vec_env

OBS = {"tapeo": 157, "robada": 192}
ACTIONS = {"tapeo": 10, "robada": 27}


def _net(game: str, seed: int) -> NumpyPolicy:
    r = np.random.default_rng(seed)
    return NumpyPolicy([(r.normal(size=(8, OBS[game])).astype(np.float32), np.zeros(8, np.float32))],
                       (r.normal(size=(ACTIONS[game], 8)).astype(np.float32), np.zeros(ACTIONS[game], np.float32)))


# ---- the numpy policy in batch --------------------------------------------------------------------
def _fixed_logits_policy() -> NumpyPolicy:
    # no hidden layer, zero weights: logits = bias = [0, ln 2, ln 3, 100] whatever the observation
    head = (np.zeros((4, 3), np.float32), np.log(np.array([1, 2, 3, np.exp(100.0)], np.float64)).astype(np.float32))
    return NumpyPolicy([], head)


def test_act_batch_samples_the_masked_softmax_and_never_an_illegal_action():
    pol = _fixed_logits_policy()
    m = 60_000
    obs = np.zeros((m, 3), np.float32)
    mask = np.tile(np.array([1, 1, 1, 0], np.int8), (m, 1))   # action 3 (logit 100) is illegal
    acts = pol.act_batch(obs, mask, np.random.default_rng(0))
    freq = np.bincount(acts, minlength=4) / m
    # masked softmax of [0, ln 2, ln 3]: exp = 1, 2, 3 over 6 -> 1/6, 2/6, 3/6; action 3 never
    assert freq[3] == 0.0
    assert np.allclose(freq[:3], [1 / 6, 2 / 6, 3 / 6], atol=0.01)    # sd of each < 0.0021
    # deterministic: the legal action of highest logit is 2 (ln 3)
    assert pol.act_batch(obs[:5], mask[:5], deterministic=True).tolist() == [2] * 5
    # same seed, same draws; the batch policy wrapper seeds its own generator
    assert np.array_equal(pol.act_batch(obs[:50], mask[:50], np.random.default_rng(7)),
                          pol.act_batch(obs[:50], mask[:50], np.random.default_rng(7)))
    a, b = NumpyBatchPolicy(pol, seed=3), NumpyBatchPolicy(pol, seed=3)
    assert np.array_equal(a(obs[:50], mask[:50]), b(obs[:50], mask[:50]))
    with pytest.raises(ValueError, match="allows no action"):
        pol.act_batch(obs[:2], np.array([[1, 0, 0, 0], [0, 0, 0, 0]], np.int8))


class _TopOfRange:
    """A stand-in generator whose uniform draws are all 1.0: u = 1.0 * total mass, the edge that
    float rounding of ``random() * total`` can reach."""

    def random(self, size):
        return np.ones(size)


def test_act_batch_checks_shapes_and_clips_to_the_last_legal_action():
    pol = _fixed_logits_policy()                       # obs_size 3, 4 actions
    with pytest.raises(ValueError, match=r"expected obs \(M, 3\) and mask \(M, 4\) with the same M; "
                                         r"got obs \(2, 3\) and mask \(3, 4\)"):
        pol.act_batch(np.zeros((2, 3), np.float32), np.ones((3, 4), np.int8))
    with pytest.raises(ValueError, match=r"got obs \(2, 5\) and mask \(2, 4\)"):
        pol.act_batch(np.zeros((2, 5), np.float32), np.ones((2, 4), np.int8))
    with pytest.raises(ValueError, match=r"got obs \(2, 3\) and mask \(2, 3\)"):
        pol.act_batch(np.zeros((2, 3), np.float32), np.ones((2, 3), np.int8))
    with pytest.raises(ValueError, match=r"got obs \(3,\) and mask \(4,\)"):
        pol.act_batch(np.zeros(3, np.float32), np.ones(4, np.int8))
    # u equal to the total mass exceeds no cumulative sum: the count is 4 (every entry <= u), one
    # past the end; it must come back as each row's last legal action: row 0 legal {0, 1} -> 1,
    # row 1 legal {1, 3} -> 3, row 2 legal {2} -> 2 (never 3, illegal in rows 0 and 2)
    mask = np.array([[1, 1, 0, 0], [0, 1, 0, 1], [0, 0, 1, 0]], np.int8)
    assert pol.act_batch(np.zeros((3, 3), np.float32), mask, _TopOfRange()).tolist() == [1, 3, 2]


# ---- the pool's sampling scheme as weights --------------------------------------------------------
def test_pool_weights_follow_the_sampling_scheme():
    pool = OpponentPool("tapeo", heuristics=["random", "greedy", "greedy"], max_size=2,
                        p_latest=0.5, p_past=0.3, p_heuristic=0.2)
    src = BatchOpponents("tapeo", pool, seed=0)
    # only heuristics so far: 1 of 3 names is random, 2 of 3 greedy
    assert src.weights_now() == pytest.approx({"heuristic:random": 1 / 3, "heuristic:greedy": 2 / 3})
    pool.update_latest(_net("tapeo", 1))
    # latest and heuristics: 0.5 / 0.7 = 5/7 and 0.2 / 0.7 = 2/7, split 1:2 -> 2/21, 4/21
    assert src.weights_now() == pytest.approx({"latest": 5 / 7, "heuristic:random": 2 / 21,
                                               "heuristic:greedy": 4 / 21})
    pool.add_snapshot("a", _net("tapeo", 2))
    pool.add_snapshot("b", _net("tapeo", 3))
    # all three: latest 0.5; past 0.3 / 2 = 0.15 each; heuristics 0.2 / 3 per name -> random 1/15, greedy 2/15
    assert src.weights_now() == pytest.approx({"latest": 0.5, "past:a": 0.15, "past:b": 0.15,
                                               "heuristic:random": 1 / 15, "heuristic:greedy": 2 / 15})
    pols, weights = src.refresh()
    assert src.labels == ["latest", "past:a", "past:b", "heuristic:random", "heuristic:greedy"]
    assert isinstance(pols[0], NumpyBatchPolicy) and pols[0].policy is pool.latest
    assert type(pols[3]).__name__ == "RandomPolicy" and type(pols[4]).__name__ == "BotPolicy"
    # the pool is full: "c" evicts "a"; the members that stay keep their order and policy objects,
    # the newcomer is appended
    pool.add_snapshot("c", _net("tapeo", 4))
    pols2, weights2 = src.refresh()
    assert src.labels == ["latest", "past:b", "heuristic:random", "heuristic:greedy", "past:c"]
    assert pols2[:4] == [pols[0], pols[2], pols[3], pols[4]]
    # latest 0.5; past 0.3 / 2 each (b, c); heuristics 1/15 and 2/15 as before
    assert weights2 == pytest.approx([0.5, 0.15, 1 / 15, 2 / 15, 0.15])


@pytest.mark.parametrize("game", ["tapeo", "robada"])
def test_vector_envs_draw_opponents_with_the_weights(game):
    # 3000 games x 3 opponent seats (Tapeo: learner in seat 0) or x 4 seats (Ronda Robada: drawn per deal)
    env = LearnerVecEnv(game, 3000, 4, 1, [random_policy(game, 0), random_policy(game, 1)], opponent_weights=[4, 1],
                        seed=0)
    assign = lambda: env.sizes[0].assign              # noqa: E731
    env.reset()
    # weights 4:1 -> policy 0 with probability 0.8; 9,000+ draws, sd < 0.0042
    assert abs(np.mean(assign() == 0) - 0.8) < 0.02
    before = assign().copy()
    env.set_opponents(env.policies, weights=[1, 3])   # new weights: for new deals only
    assert np.array_equal(assign(), before)                        # the games in progress keep theirs
    env.reset()                                                    # every game dealt again: 1:3
    assert abs(np.mean(assign() == 0) - 0.25) < 0.02
    with pytest.raises(ConfigError, match="one per opponent policy"):
        env.set_opponents(env.policies, weights=[1.0])
    with pytest.raises(ConfigError, match=">= 0"):
        env.set_opponents(env.policies, weights=[1.0, -1.0])


class _Tagged:
    """A batch policy that plays uniformly random legal actions (its own generator)."""

    needs_observation = False

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def __call__(self, observations, masks):
        return np.array([self.rng.choice(np.flatnonzero(m)) for m in masks], np.int64)


def _opponents_now(env):
    """The policy object of every opponent seat of every game in progress (the first table size)."""
    return [[env.policies[k] for k in row] for row in env.sizes[0].assign.tolist()]


@pytest.mark.parametrize("game", ["tapeo", "robada"])
def test_games_in_progress_keep_their_opponents_when_the_pool_changes(game):
    a, b, c = _Tagged(1), _Tagged(2), _Tagged(3)
    env = LearnerVecEnv(game, 40, 4, 1, [a, b], seed=0)
    env.reset()
    for _ in range(3):   # games in progress
        env.step(np.array([int(np.flatnonzero(m)[0]) for m in env.action_masks()]))
    before = _opponents_now(env)
    # a member joins (appended), with weights that would give it every new seat
    env.set_opponents([a, b, c], weights=[0, 0, 1])
    assert _opponents_now(env) == before
    # the same members in another order: every seat still has the same policy object
    env.set_opponents([c, b, a])
    assert _opponents_now(env) == before
    # b leaves: the seats that had a keep a; the seats that had b are drawn again with the weights
    # [0, 1] of [a, c], so all of them now have c
    env.set_opponents([a, c], weights=[0, 1])
    after = _opponents_now(env)
    flat_before = [p for row in before for p in row]
    flat_after = [p for row in after for p in row]
    assert b in flat_before and a in flat_before
    assert all(q is (a if p is a else c) for p, q in zip(flat_before, flat_after))
    # new deals draw with the new weights: every seat gets c
    env.reset()
    assert all(p is c for row in _opponents_now(env) for p in row)


def test_pool_growth_mid_game_leaves_the_games_in_progress_alone():
    pool = OpponentPool("tapeo", heuristics=["random", "greedy"], max_size=3, p_latest=0.5, p_past=0.5,
                        p_heuristic=0.0001)
    pool.update_latest(_net("tapeo", 1))
    venv = make_vec_env("tapeo", 30, 4, 1, pool, {"reward_scheme": "points"}, seed=0, engine="batched")
    venv.reset()
    venv.step(np.array([int(np.flatnonzero(m)[0]) for m in venv.action_masks()]))
    before = _opponents_now(venv)
    pool.add_snapshot("s1", _net("tapeo", 2))            # a member added while the games go on
    assert venv.sync()
    assert venv.source.labels == ["latest", "heuristic:random", "heuristic:greedy", "past:s1"]
    assert len(venv.policies) == 4
    assert _opponents_now(venv) == before


def test_round_rewards_must_be_a_bool():
    # the engine's one option check (hod.core.errors.check_choice; the old per-game env had its own wording)
    for bad in (1, "yes", None):
        with pytest.raises(ConfigError, match=rf"round_rewards={bad!r} .*legal values: \[False, True\]"):
            make_vec_env("tapeo", 2, 2, 1, "random", {"round_rewards": bad}, engine="batched")
    make_vec_env("tapeo", 2, 2, 1, "random", {"round_rewards": True}, engine="batched")


# ---- the batched training env ----------------------------------------------------------------------
@pytest.mark.parametrize("game,counts,learners", [("tapeo", [2, 3, 4, 5, 6], 2), ("tapeo", [4], 4),
                                                  ("robada", [2, 3, 4], 1)])
def test_batched_env_every_learner_seat_gets_its_payoff(game, counts, learners):
    pool = OpponentPool(game, heuristics=["random", "greedy"], max_size=2)
    venv = make_vec_env(game, 6, counts, learners, pool, {"reward_scheme": "points", "illegal_action": "raise"},
                        seed=0, engine="batched")
    assert isinstance(venv, LearnerVecEnv) and venv.num_envs == 6 * learners
    assert is_masking_supported(venv)
    venv.reset()
    rng = np.random.default_rng(0)
    returns = np.zeros(venv.num_envs)
    finished, steps = 0, 0
    while finished < 40:
        if steps == 1:
            pool.update_latest(_net(game, 1))        # policy opponents join: drawn in new deals
        if steps == 30:
            pool.add_snapshot("s1", _net(game, 2))
        masks = get_action_masks(venv)
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        _, r, dones, infos = venv.step(acts)
        steps += 1
        returns += r
        for i in np.flatnonzero(dones):
            # points scheme: the return of every learner seat is its final score (whole numbers,
            # exact in float32), delivered also when an opponent moved last
            assert returns[i] == infos[i]["final_score"] == infos[i]["episode"]["r"]
            assert "terminal_observation" in infos[i] and 0.0 <= infos[i]["win_share"] <= 1.0
            returns[i] = 0
            finished += 1
    # the env follows the pool: the two heuristics, then the newcomers in order of arrival
    assert venv.source.labels == ["heuristic:random", "heuristic:greedy", "latest", "past:s1"]
    assert len(venv.policies) == 4


@pytest.mark.parametrize("game", ["tapeo", "robada"])
def test_batched_env_raises_on_an_illegal_learner_action(game):
    venv = make_vec_env(game, 2, 2, 1, "random", {"reward_scheme": "win_loss"}, seed=0, engine="batched")
    venv.reset()
    masks = venv.action_masks()
    with pytest.raises(IllegalActionError):
        venv.step(np.array([int(np.flatnonzero(~m)[0]) for m in masks]))
    with pytest.raises(ConfigError, match="always raise"):
        make_vec_env(game, 2, 2, 1, "random", {"illegal_action": "lose"}, engine="batched")
    with pytest.raises(ConfigError, match="legal values"):
        make_vec_env(game, 2, 2, 1, "random", engine="vectorised")


def test_config_engine_key_is_validated():
    tapeo = C.load_config("tapeo")
    assert C.flatten(tapeo)["engine"] in C.ENGINES
    with pytest.raises(ConfigError, match="legal values"):
        C.validate_config("tapeo", C.override_keys(tapeo, {"engine": "gpu"}))
    # 5 table sizes need at least 5 tables once split among the sizes
    with pytest.raises(ConfigError, match="number of table sizes"):
        C.validate_config("tapeo", C.override_keys(tapeo, {"engine": "batched", "tables": 4, "batch_size": 64}))
    # a configuration without the key (older runs) trains on the single-game tables
    old = C.load_config("robada")
    del old["env"]["engine"]
    C.validate_config("robada", old)


# ---- tiny PPO runs -----------------------------------------------------------------------------------
@pytest.mark.parametrize("game", ["tapeo", "robada"])
def test_smoke_training_batched_engine(game, tmp_path):
    cfg = C.smoke_config(game, engine="batched", players=[2, 4], eval_every=128 if game == "tapeo" else 0)
    t = Trainer(game, cfg, tmp_path, progress=False, log=None)
    assert isinstance(t.env, LearnerVecEnv)   # the one learner env
    s = t.run()
    assert s["steps"] >= 256 and not s["interrupted"] and s["env_steps_per_s"] > 0
    # snapshots every 64 steps, at most 2 kept; the one taken at the last step (256) reaches the env
    # before its next step: then it plays the latest copy, both snapshots and random
    assert t.env.sync()
    # (the heuristic was there first; the others were appended as they arrived, evicted ones removed)
    assert t.env.source.labels == ["heuristic:random", "latest"] + ["past:" + n for n in t.pool.past]
    assert len(t.pool.past) == 2
    card = json.loads((tmp_path / "checkpoints" / "final.json").read_text())
    assert card["training"]["config"]["env"]["engine"] == "batched" and card["player_counts"] == [2, 4]
    if game == "tapeo":   # evaluations at 0, 128 and 256 steps as with the single-game tables
        assert [r["steps"] for r in json.loads((tmp_path / "eval.json").read_text())] == [0, 128, 256]
    # the training env raises on an illegal learner action (a policy ignoring its mask would crash)
    masks = t.env.action_masks()
    with pytest.raises(IllegalActionError):
        t.env.step(np.array([int(np.flatnonzero(~m)[0]) for m in masks]))
