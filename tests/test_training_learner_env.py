"""The one learner vector env (:class:`hod.training.learner_env.LearnerVecEnv`) against the per-game
batched stack it replaces (the oracle: ``TapeoVecEnv`` / ``RobadaVecEnv`` inside
``PoolOpponentsVecEnv``, ``ScaledRewardVecEnv``, ``EncodedVecEnv``), bit for bit: what the learner
sees (observations, masks, rewards, dones, the old infos' keys and values) over hundreds of steps,
for both games at several table sizes and seeds, and the policy weights after a short MaskablePPO
run through the trainer."""
from __future__ import annotations

import numpy as np
import pytest

from hod.agents.encoders import get_encoder
from hod.core.errors import ConfigError, IllegalActionError
from hod.training import config as C
from hod.training import train as train_mod
from hod.training.batched_env import make_batched_vec_env, make_learner_vec_env
from hod.training.encoded_env import EncodedVecEnv
from hod.training.learner_env import LearnerVecEnv, LearnerVectorEnv, random_policy
from hod.training.reward_scale import ScaledRewardVecEnv
from hod.training.robada_vector import RandomPolicy as RobadaRandom, RobadaVecEnv, RobadaVectorEnv
from hod.training.tapeo_vector import RandomPolicy as TapeoRandom, TapeoVecEnv, TapeoVectorEnv
from hod.training.train import Trainer

OLD = {"tapeo": (TapeoVecEnv, TapeoRandom), "robada": (RobadaVecEnv, RobadaRandom)}


class _ObsPolicy:
    """A deterministic opponent that reads its observation: the k-th legal action, k = round(1000 *
    sum(obs)) mod #legal; so opponents' observations that differ make the games differ."""

    needs_observation = True

    def __call__(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        cs = np.cumsum(masks, axis=1)
        k = np.round(obs.sum(1).astype(np.float64) * 1000).astype(np.int64) % cs[:, -1]
        return (cs <= k[:, None]).sum(1)


def _legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    cs = np.cumsum(masks, axis=1)
    k = (rng.random(len(masks)) * cs[:, -1]).astype(np.int64)
    return (cs <= k[:, None]).sum(1)


def _same_infos(old: list, new: list, step: int) -> int:
    ends = 0
    for slot, (a, b) in enumerate(zip(old, new)):
        assert set(a) <= set(b), (step, slot, set(a) - set(b))
        for key, v in a.items():
            w = b[key]
            if key == "episode":   # "t" is wall time
                assert (v["r"], v["l"]) == (w["r"], w["l"]), (step, slot, v, w)
                assert type(v["r"]) is type(w["r"]) and type(v["l"]) is type(w["l"])
            else:
                assert type(v) is type(w) and np.array_equal(v, w), (step, slot, key, v, w)
                if isinstance(v, np.ndarray):
                    assert v.dtype == w.dtype, (step, slot, key)
        ends += bool(a)
    return ends


def _play_both(old, new, steps: int, seed: int) -> int:
    """Step both envs with the same legal actions; assert everything the learner sees is equal;
    returns the number of finished episodes seen."""
    old.seed(seed)
    new.seed(seed)
    o, n = old.reset(), new.reset()
    assert o.dtype == n.dtype == np.float32 and np.array_equal(o, n)
    assert old.observation_space == new.observation_space and old.action_space == new.action_space
    rng = np.random.default_rng(seed)
    ends = 0
    for t in range(steps):
        m = old.action_masks()
        assert np.array_equal(m, new.action_masks()) and new.action_masks().dtype == bool, t
        a = _legal(m, rng)
        old.step_async(a)
        new.step_async(a)
        ro, rn = old.step_wait(), new.step_wait()
        for x, y, what in zip(ro[:3], rn[:3], ("obs", "rewards", "dones")):
            assert x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y), (t, what)
        ends += _same_infos(ro[3], rn[3], t)
    return ends


def _opponents(game: str, seed: int, new: bool) -> list:
    rnd = (lambda s: random_policy(game, s)) if new else OLD[game][1]
    return [rnd([seed, 11]), _ObsPolicy(), rnd(seed + 5)]


CASES = [("tapeo", [2], 1, 0), ("tapeo", [3, 6], 2, 3), ("tapeo", [2, 3, 4, 5, 6], 2, 0), ("tapeo", [4], 4, 3),
         ("tapeo", [5], 3, 7), ("robada", [2], 1, 0), ("robada", [3], 1, 3), ("robada", [2, 3, 4], 1, 0),
         ("robada", [2, 3, 4], 1, 7), ("robada", [4], 1, 3)]


@pytest.mark.parametrize("game,players,learners,seed", CASES)
def test_the_learner_env_plays_the_old_vector_envs_games_bit_for_bit(game, players, learners, seed):
    scheme = ["points", "win_loss", "margin"][seed % 3]
    kw = dict(num_tables=12, num_players=players, learner_seats=learners, reward_scheme=scheme, seed=seed,
              opponent_weights=[0.25, 0.35, 0.4])
    old = OLD[game][0](opponents=_opponents(game, seed, False), **kw)
    new = LearnerVecEnv(game, opponents=_opponents(game, seed, True), **kw)
    ends = _play_both(old, new, 200, seed)
    assert ends > 20      # 200 steps of 12 tables: a Tapeo game lasts 12-36 picks, a Robada game ~15-40 decisions


def test_one_opponent_policy_and_the_round_rewards_option_play_the_same_games():
    # one policy: no draws at all (the single-policy paths); Tapeo's round rewards through the engine option
    kw = dict(num_tables=10, num_players=[2, 5], learner_seats=2, reward_scheme="margin", seed=9)
    old = TapeoVecEnv(opponents=_ObsPolicy(), round_rewards=True, **kw)
    new = LearnerVecEnv("tapeo", opponents=_ObsPolicy(), round_rewards=True, **kw)
    assert _play_both(old, new, 120, 9) > 10
    kw = dict(num_tables=10, num_players=[2, 4], learner_seats=1, reward_scheme="points", seed=9)
    old = RobadaVecEnv(opponents=_ObsPolicy(), **kw)
    new = LearnerVecEnv("robada", opponents=_ObsPolicy(), **kw)
    assert _play_both(old, new, 150, 9) > 10


def _old_stack(game, tables, players, learners, opponents, env_options, seed, encoder, reward_scale):
    """The trainer's ``engine = "batched"`` env before the learner env (the oracle)."""
    env = make_batched_vec_env(game, tables, players, learners, opponents, env_options, seed=seed)
    if reward_scale != 1.0:
        env = ScaledRewardVecEnv(env, reward_scale)
    if not encoder.identity:
        env = EncodedVecEnv(env, encoder)
    return env


@pytest.mark.parametrize("game,opts,encoder,scale", [
    ("tapeo", {"reward_scheme": "win_loss"}, "none", 1.0),
    ("robada", {"reward_scheme": "margin", "may_take_own_pile": True}, "robada_plans", 0.01),
])
def test_the_pool_stack_with_encoder_and_reward_scale_equals_the_old_wrappers(game, opts, encoder, scale):
    enc = get_encoder(encoder, game)
    bots = ["random", "greedy"]    # heuristic bots by name: the batch random policy and a BotPolicy
    old = _old_stack(game, 8, [2, 4], 1, bots, dict(opts), 4, enc, scale)
    new = make_learner_vec_env(game, 8, [2, 4], 1, bots, dict(opts), seed=4, encoder=enc, reward_scale=scale)
    assert _play_both(old, new, 80 if encoder == "none" else 40, 4) > 2


@pytest.mark.parametrize("game", ["tapeo", "robada"])
def test_a_short_maskable_ppo_run_learns_the_same_weights(game, tmp_path, monkeypatch):
    import torch

    over = {"engine": "batched", "tables": 8, "n_steps": 16, "batch_size": 64, "n_epochs": 2,
            "total_steps": 2 * 8 * 16 * (2 if game == "tapeo" else 1),   # two rollouts
            "eval_every": 0, "heuristics": ["random", "greedy"], "checkpoint_every": 10**9, "torch_threads": 1,
            "players": [2, 3] if game == "tapeo" else [2, 4]}
    if game == "robada":
        over["obs_encoder"] = "robada_plans"     # the default config's encoder and reward scale 0.01
    cfg = C.override_keys(C.load_config(game), over)
    weights = []
    for builder in (make_learner_vec_env, _old_stack):
        monkeypatch.setattr(train_mod, "make_learner_vec_env", builder)
        t = Trainer(game, cfg, tmp_path / builder.__name__, progress=False, verbose=0, log=None)
        t.run()
        weights.append({k: v.detach().clone() for k, v in t.model.policy.state_dict().items()})
    assert weights[0].keys() == weights[1].keys()
    for k in weights[0]:
        assert torch.equal(weights[0][k], weights[1][k]), k


def test_refusals_name_the_legal_values_and_change_nothing():
    with pytest.raises(ConfigError, match="learner_seats"):
        LearnerVecEnv("robada", 4, [2], learner_seats=2)          # sequential: one learner seat
    with pytest.raises(ConfigError, match="num_players"):
        LearnerVecEnv("tapeo", 4, [7])
    with pytest.raises(ConfigError, match="num_tables"):
        LearnerVecEnv("tapeo", 1, [2, 3])
    with pytest.raises(ConfigError, match="reward_scale"):
        LearnerVecEnv("tapeo", 4, [2], reward_scale=0.0)
    with pytest.raises(ConfigError):
        LearnerVecEnv("tapeo", 4, [2], no_such_option=1)
    env = LearnerVecEnv("robada", 4, [2], seed=1)
    env.reset()
    before = env.engine_states()
    masks = env.action_masks().copy()
    bad = np.array([int(np.flatnonzero(~m)[0]) for m in masks])
    env.step_async(bad)
    with pytest.raises(IllegalActionError):
        env.step_wait()
    assert all(a.same_as(b) for a, b in zip(before, env.engine_states()))
    assert np.array_equal(masks, env.action_masks())


@pytest.mark.parametrize("game,players,learners", [("tapeo", [2, 4], 2), ("robada", [2, 3], 1)])
def test_the_gymnasium_view_equals_the_old_vector_env_views(game, players, learners):
    Old = {"tapeo": TapeoVectorEnv, "robada": RobadaVectorEnv}[game]
    kw = dict(num_tables=8, num_players=players, learner_seats=learners, reward_scheme="win_loss", seed=2,
              opponent_weights=[0.25, 0.35, 0.4])
    old = Old(opponents=_opponents(game, 2, False), **kw)
    new = LearnerVectorEnv(game, opponents=_opponents(game, 2, True), **kw)
    assert old.single_observation_space == new.single_observation_space
    assert old.action_space == new.action_space and new.metadata == old.metadata
    (o1, i1), (o2, i2) = old.reset(seed=5), new.reset(seed=5)
    rng = np.random.default_rng(1)
    finals = 0
    for t in range(120):
        assert o1.keys() == o2.keys() and all(np.array_equal(o1[k], o2[k]) and o1[k].dtype == o2[k].dtype for k in o1)
        assert set(i1) <= set(i2), (t, set(i1) - set(i2))
        for k, v in i1.items():
            if k == "final_obs":
                for a, b in zip(v, i2[k]):
                    assert (a is None) == (b is None)
                    if a is not None:
                        finals += 1
                        assert all(np.array_equal(a[q], b[q]) and a[q].dtype == b[q].dtype for q in a)
            else:
                assert np.array_equal(v, i2[k]) and v.dtype == i2[k].dtype, (t, k)
        a = _legal(o1["action_mask"], rng)
        hold = None if t < 60 else (dones.copy() if t > 60 else np.zeros(len(a), bool))   # RLlib's next-step autoreset
        *r1, i1 = old.step(a, hold)
        *r2, i2 = new.step(a, hold)
        dones = r1[2]
        o1, o2 = r1[0], r2[0]
        for x, y in zip(r1[1:], r2[1:]):
            assert np.array_equal(x, y) and x.dtype == y.dtype, t
    assert finals > 5
    with pytest.raises(ConfigError):
        new.reset(seed=-1)
