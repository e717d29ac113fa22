"""The one learner vector env (:class:`hod.training.learner_env.LearnerVecEnv`, its Gymnasium view
:class:`~hod.training.learner_env.LearnerVectorEnv`) against golden recordings of the per-game stacks it
replaced (``tests/data/learner_env_golden.json``, made by ``tests/data/record_learner_env_golden.py``
from ``TapeoVecEnv`` / ``RobadaVecEnv`` inside ``PoolOpponentsVecEnv``, ``ScaledRewardVecEnv``,
``EncodedVecEnv`` before they were removed; ``tests/_learner_env_digest.py``): what the learner sees
(observations, masks, rewards, dones, the old infos' keys and values, per step) over hundreds of
steps, for both games at several table sizes and seeds, and the policy weights after a short
MaskablePPO run through the trainer, bit for bit; a planted one-ulp change fails the comparison.
Then each game's episodes, masks, final rewards, batch opponents, refusals and short MaskablePPO
runs through the env (moved from tests/games/test_tapeo_batched.py and tests/games/test_robada_batched.py,
where the per-game envs were tested)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import _learner_env_digest as D
from hod.agents.batch_policies import BotPolicy, RandomPolicy
from hod.agents.encoders import get_encoder
from hod.core.errors import ConfigError, IllegalActionError
from hod.training import config as C
from hod.training.learner_env import LearnerVecEnv, LearnerVectorEnv, make_learner_vec_env, random_policy
from hod.training.train import Trainer
from robada_env.rules.actions import CONFIRM, NOOP
from robada_env.rules.batched import random_legal_actions as robada_random_legal
from robada_env.rules.observation import LAYOUT as ROBADA_LAYOUT
from tapeo_env.rules.batched import random_legal_actions as tapeo_random_legal
from tapeo_env.rules.cards import NUM_KINDS as TAPEO_K
from tapeo_env.rules.observation import OBS_SIZE as TAPEO_OBS

GOLDEN_FILE = Path(__file__).resolve().parents[1] / "data" / "learner_env_golden.json"


def _golden() -> dict:
    return json.loads(GOLDEN_FILE.read_text())


class ObsPolicy:
    """A deterministic opponent that reads its observation: the k-th legal action, k = round(1000 *
    sum(obs)) mod #legal; so opponents' observations that differ make the games differ."""

    needs_observation = True

    def __call__(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        cs = np.cumsum(masks, axis=1)
        k = np.round(obs.sum(1).astype(np.float64) * 1000).astype(np.int64) % cs[:, -1]
        return (cs <= k[:, None]).sum(1)


def _opponents(game: str, seed: int) -> list:
    return [random_policy(game, [seed, 11]), ObsPolicy(), random_policy(game, seed + 5)]


CASES = [("tapeo", [2], 1, 0), ("tapeo", [3, 6], 2, 3), ("tapeo", [2, 3, 4, 5, 6], 2, 0), ("tapeo", [4], 4, 3),
         ("tapeo", [5], 3, 7), ("robada", [2], 1, 0), ("robada", [3], 1, 3), ("robada", [2, 3, 4], 1, 0),
         ("robada", [2, 3, 4], 1, 7), ("robada", [4], 1, 3)]


def case_id(case) -> str:
    game, players, learners, seed = case
    return f"{game}-{'.'.join(map(str, players))}-L{learners}-s{seed}"


def case_kwargs(game, players, learners, seed) -> dict:
    return dict(num_tables=12, num_players=players, learner_seats=learners,
                reward_scheme=["points", "win_loss", "margin"][seed % 3], seed=seed, opponent_weights=[0.25, 0.35, 0.4])


# one policy: no draws at all (the single-policy paths); Tapeo's round rewards through the engine option
ONE_POLICY = [("one-tapeo", "tapeo", dict(num_tables=10, num_players=[2, 5], learner_seats=2, reward_scheme="margin",
                                          seed=9, round_rewards=True), 120),
              ("one-robada", "robada", dict(num_tables=10, num_players=[2, 4], learner_seats=1, reward_scheme="points",
                                            seed=9), 150)]
POOL_CASES = [("tapeo", {"reward_scheme": "win_loss"}, "none", 1.0),
              ("robada", {"reward_scheme": "margin", "may_take_own_pile": True}, "robada_plans", 0.01)]
GYM_CASES = [("tapeo", [2, 4], 2), ("robada", [2, 3], 1)]


def gym_kwargs(players, learners) -> dict:
    return dict(num_tables=8, num_players=players, learner_seats=learners, reward_scheme="win_loss", seed=2,
                opponent_weights=[0.25, 0.35, 0.4])


def ppo_config(game: str) -> dict:
    over = {"engine": "batched", "tables": 8, "n_steps": 16, "batch_size": 64, "n_epochs": 2,
            "total_steps": 2 * 8 * 16 * (2 if game == "tapeo" else 1),   # two rollouts
            "eval_every": 0, "heuristics": ["random", "greedy"], "checkpoint_every": 10**9, "torch_threads": 1,
            "players": [2, 3] if game == "tapeo" else [2, 4]}
    if game == "robada":
        over["obs_encoder"] = "robada_plans"     # the default config's encoder and reward scale 0.01
    return C.override_keys(C.load_config(game), over)


def _same_as_golden(got: dict, want: dict) -> None:
    """Everything recorded equal; a differing step named (the first), then the kinds that differ."""
    bad = next((t for t, (a, b) in enumerate(zip(got["steps"], want["steps"])) if a != b), None)
    kinds = [k for k in D.KINDS if got["total"][k] != want["total"][k]]
    assert bad is None and not kinds and len(got["steps"]) == len(want["steps"]), \
        f"first differing step {bad} (0 = the reset), differing kinds {kinds}"
    for k in want:
        if k not in ("steps", "total"):
            assert got[k] == want[k], k


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_the_learner_env_plays_the_old_vector_envs_games_bit_for_bit(case):
    want = _golden()["vec"][case_id(case)]
    game, players, learners, seed = case
    new = LearnerVecEnv(game, opponents=_opponents(game, seed), **case_kwargs(*case))
    _same_as_golden(D.vec_run(new, 200, seed, want["info_keys"]), want)
    assert want["ends"] > 20      # 200 steps of 12 tables: a Tapeo game lasts 12-36 picks, a Robada game ~15-40 decisions


@pytest.mark.parametrize("name,game,kw,steps", ONE_POLICY, ids=[c[0] for c in ONE_POLICY])
def test_one_opponent_policy_and_the_round_rewards_option_play_the_same_games(name, game, kw, steps):
    want = _golden()["vec"][name]
    new = LearnerVecEnv(game, opponents=ObsPolicy(), **kw)
    _same_as_golden(D.vec_run(new, steps, kw["seed"], want["info_keys"]), want)
    assert want["ends"] > 10


@pytest.mark.parametrize("game,opts,encoder,scale", POOL_CASES)
def test_the_pool_stack_with_encoder_and_reward_scale_equals_the_old_wrappers(game, opts, encoder, scale):
    want = _golden()["vec"][f"pool-{game}"]
    enc = get_encoder(encoder, game)
    bots = ["random", "greedy"]    # heuristic bots by name: the batch random policy and a BotPolicy
    new = make_learner_vec_env(game, 8, [2, 4], 1, bots, dict(opts), seed=4, encoder=enc, reward_scale=scale)
    _same_as_golden(D.vec_run(new, 80 if encoder == "none" else 40, 4, want["info_keys"]), want)
    assert want["ends"] > 2


@pytest.mark.parametrize("game", ["tapeo", "robada"])
def test_a_short_maskable_ppo_run_learns_the_same_weights(game, tmp_path):
    want = _golden()["ppo"][game]
    t = Trainer(game, ppo_config(game), tmp_path / "new", progress=False, verbose=0, log=None)
    t.run()
    got = D.state_dict_digests(t.model.policy.state_dict())
    assert got.keys() == want.keys()
    assert [k for k in want if got[k] != want[k]] == []


@pytest.mark.parametrize("game,players,learners", GYM_CASES)
def test_the_gymnasium_view_equals_the_old_vector_env_views(game, players, learners):
    want = _golden()["gym"][game]
    new = LearnerVectorEnv(game, opponents=_opponents(game, 2), **gym_kwargs(players, learners))
    _same_as_golden(D.gym_run(new, 120, 5, want["info_keys"]), want)
    assert want["finals"] > 5
    with pytest.raises(ConfigError):
        new.reset(seed=-1)


def test_a_planted_change_fails_the_golden_comparison():
    # the golden test can fail: one reward of one step changed by the smallest float32 step
    case = CASES[0]
    want = _golden()["vec"][case_id(case)]
    new = LearnerVecEnv(case[0], opponents=_opponents(case[0], case[3]), **case_kwargs(*case))
    wait, calls = new.step_wait, []

    def planted():
        obs, r, d, infos = wait()
        calls.append(1)
        if len(calls) == 7:                # the 7th step: slot 3's reward one float32 step up
            r = r.copy()
            r[3] = np.nextafter(r[3], np.float32(1))
        return obs, r, d, infos

    new.step_wait = planted
    got = D.vec_run(new, 200, case[3], want["info_keys"])
    with pytest.raises(AssertionError, match=r"first differing step 7 \(0 = the reset\), differing kinds \['rewards'\]"):
        _same_as_golden(got, want)


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


# ---- Tapeo through the learner env (moved from tests/games/test_tapeo_batched.py) ---------------------
def test_tapeo_sb3_vec_env_episode_masks_and_final_rewards():
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
    env = LearnerVecEnv("tapeo", num_tables=6, num_players=[2, 3], learner_seats=2, reward_scheme="win_loss", seed=5)
    assert env.num_envs == 12 and is_masking_supported(env)
    obs = env.reset()
    assert obs.shape == (12, TAPEO_OBS) and obs.dtype == np.float32
    rng = np.random.default_rng(0)
    total = np.zeros(12)
    for t in range(27):                               # 2 players: 3 x 9 picks; 3 players: 3 x 8
        masks = get_action_masks(env)
        assert masks.shape == (12, TAPEO_K) and masks.dtype == bool and masks.any(axis=1).all()
        obs, rew, dones, infos = env.step(tapeo_random_legal(masks, rng))
        total += rew
        if t == 23:                                   # 3-player tables (slots 6..11) end at their 24th step
            assert dones[6:].all() and not dones[:6].any()
            for i in range(6, 12):
                assert infos[i]["terminal_observation"].shape == (TAPEO_OBS,)
                assert infos[i]["episode"]["l"] == 24
                assert infos[i]["episode"]["r"] == pytest.approx(total[i])
        if t == 26:
            assert dones[:6].all()
    # win_loss is zero-sum: the 2-player tables' two learner seats get +1/-1 or 0/0
    pair = total[:6].reshape(3, 2)
    assert np.allclose(pair.sum(axis=1), 0.0) and set(np.abs(pair).ravel().tolist()) <= {0.0, 1.0}


def test_tapeo_sb3_vec_env_with_bot_and_several_opponents():
    from hod.agents.base import RandomBot
    calls = []

    class Counting(RandomPolicy):
        def __call__(self, o, m):
            calls.append(len(m))
            assert o.shape[0] == len(m)
            return super().__call__(o, m)

    env = LearnerVecEnv("tapeo", num_tables=8, num_players=4, learner_seats=1,
                        opponents=[RandomBot(seed=1), Counting(2, tapeo_random_legal)], seed=0)
    env.reset()
    obs, rew, dones, infos = env.step(tapeo_random_legal(env.action_masks(), np.random.default_rng(1)))
    assert obs.shape == (8, TAPEO_OBS) and sum(calls) > 0 and sum(calls) < 24
    with pytest.raises(ConfigError):
        BotPolicy(type("Search", (RandomBot,), {"needs_belief": True})(), "tapeo")
    with pytest.raises(IllegalActionError):
        bad = np.where(env.action_masks(), 0, 1).argmax(axis=1)          # an action outside each mask
        env.step(bad)


def test_tapeo_maskable_ppo_learns_a_few_hundred_steps():
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.logger import Logger
    torch.set_num_threads(1)
    env = LearnerVecEnv("tapeo", num_tables=8, num_players=[2, 4], learner_seats=2, reward_scheme="win_loss", seed=0)
    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=128, n_epochs=1, seed=0, device="cpu")
    model.set_logger(Logger(None, []))   # no output: SB3's default would leave an SB3-<date> folder in /tmp
    model.learn(total_timesteps=16 * 32 * 2)
    assert model.num_timesteps >= 1024 and len(model.ep_info_buffer) > 0


def test_tapeo_gymnasium_vector_env_view():
    import gymnasium
    env = LearnerVectorEnv("tapeo", num_tables=4, num_players=2, learner_seats=2, reward_scheme="points", seed=3)
    assert isinstance(env, gymnasium.vector.VectorEnv) and env.num_envs == 8
    obs, info = env.reset(seed=3)
    assert obs["observation"].shape == (8, TAPEO_OBS) and obs["action_mask"].dtype == np.int8
    assert env.observation_space.contains(obs)
    rng = np.random.default_rng(0)
    ret = np.zeros(8)
    for t in range(27):
        obs, rew, term, trunc, info = env.step(tapeo_random_legal(obs["action_mask"], rng))
        ret += rew
    assert term.all() and not trunc.any()
    assert info["_final_obs"].all() and info["final_obs"][0]["observation"].shape == (TAPEO_OBS,)
    # points scheme: the final reward of each seat is its final score
    assert ret.tolist() == info["final_score"].astype(float).tolist()
    obs2, _ = env.reset(seed=3)
    env2 = LearnerVectorEnv("tapeo", num_tables=4, num_players=2, learner_seats=2, seed=99)
    assert np.array_equal(env2.reset(seed=3)[0]["observation"], obs2["observation"])   # same seed, same deals


# ---- Ronda Robada through the learner env (moved from tests/games/test_robada_batched.py) -------------


def test_robada_vec_env_final_reward_reaches_the_learner_seat():
    env = LearnerVecEnv("robada", num_tables=32, num_players=3, seed=1)
    obs = env.reset()
    assert obs.shape == (32, 192) and obs.dtype == np.float32
    rng = np.random.default_rng(0)
    seats = set()
    episodes = []
    returns = np.zeros(32)
    for _ in range(400):
        masks = env.action_masks()
        assert masks.dtype == bool and masks.shape == (32, 27) and masks.any(1).all()
        # the learner is always the seat to act: its observation says "to act: me"
        assert (ROBADA_LAYOUT.view(obs, "to_act")[:, 0] == 1).all()
        seats.update(env.learner_seats_now.tolist())
        obs, rewards, dones, infos = env.step(robada_random_legal(masks, rng))
        returns += rewards
        for i in np.flatnonzero(dones):
            info = infos[i]
            # points scheme: the learner's return over the episode is its final score
            assert returns[i] == info["final_score"] == info["episode"]["r"]
            assert info["terminal_observation"].shape == (192,)
            assert ROBADA_LAYOUT.view(info["terminal_observation"], "to_act").sum() == 0   # game over
            episodes.append(info)
            returns[i] = 0
        assert not rewards[~dones].any()
    assert seats == {0, 1, 2}                       # the learner seat is drawn per game
    assert len(episodes) > 50
    # with 3 seats most games end on an opponent's move; every episode above paid the learner
    assert sum(e["final_score"] for e in episodes) > 0
    assert env.env_method("action_masks", indices=[0])[0].shape == (27,)


def test_robada_vec_env_batched_opponents_and_illegal_learner_action():
    calls = []

    def first_legal(observations, masks):
        calls.append((observations.shape, masks.shape))
        assert (ROBADA_LAYOUT.view(observations, "to_act")[:, 0] == 1).all()   # they see their own turn
        return np.argmax(masks, axis=1)

    env = LearnerVecEnv("robada", num_tables=8, num_players=[2, 4], opponents=[first_legal, random_policy("robada", 0)], seed=0)
    env.reset()
    for _ in range(30):
        env.step(robada_random_legal(env.action_masks(), np.random.default_rng(1)))
    assert calls and all(o[0] == m[0] and o[1] == 192 for o, m in calls)
    assert env.decisions > 30 * 8
    bad = np.where(env.action_masks()[:, CONFIRM], NOOP, CONFIRM)
    with pytest.raises(IllegalActionError):
        env.step(bad)
    with pytest.raises(ConfigError, match="learner_seats"):
        LearnerVecEnv("robada", num_tables=4, learner_seats=2)


def test_robada_maskable_ppo_runs_a_few_hundred_steps():
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.logger import Logger
    env = LearnerVecEnv("robada", num_tables=8, num_players=2, seed=0)
    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=64, n_epochs=1, seed=0, device="cpu")
    model.set_logger(Logger(None, []))   # no output: SB3's default would leave an SB3-<date> folder in /tmp
    model.learn(total_timesteps=512)
    assert model.num_timesteps >= 512


def test_robada_gymnasium_vector_env_same_step_autoreset():
    env = LearnerVectorEnv("robada", num_tables=16, num_players=2, seed=3)
    obs, info = env.reset(seed=3)
    assert obs["observation"].shape == (16, 192) and obs["action_mask"].dtype == np.int8
    assert env.observation_space.contains(obs)
    rng = np.random.default_rng(0)
    finished = 0
    for _ in range(200):
        obs, rew, term, trunc, infos = env.step(robada_random_legal(obs["action_mask"], rng))
        assert not trunc.any()
        if term.any():
            finished += int(term.sum())
            for i in np.flatnonzero(term):
                assert infos["final_obs"][i]["action_mask"].tolist() == [0] * 26 + [1]
                assert rew[i] == infos["final_score"][i]
    assert finished > 0


def _legal_first(masks: np.ndarray) -> np.ndarray:
    return np.array([np.flatnonzero(r)[0] for r in masks])


@pytest.mark.parametrize("game", ["tapeo", "robada"])
def test_an_illegal_action_in_one_table_size_moves_no_game_of_any_size(game):
    # Two table sizes: the illegal action sits in the last (3-player) size. Before, the 2-player
    # games had already stepped when it raised (their states, the observation buffer, the counter).
    env = LearnerVecEnv(game, num_tables=4, num_players=[2, 3], seed=0)
    twin = LearnerVecEnv(game, num_tables=4, num_players=[2, 3], seed=0)
    env.reset()
    twin.reset()
    masks = env.action_masks()
    bad = _legal_first(masks)
    last = env.num_envs - 1
    bad[last] = int(np.flatnonzero(~masks[last])[0])
    decisions, obs = env.decisions, env.observations()
    with pytest.raises(IllegalActionError, match=rf"^illegal action {bad[last]} for env slot {last}; legal "
                                                 rf"actions: \[{', '.join(map(str, np.flatnonzero(masks[last])))}\]$"):
        env.step(bad)
    assert env.decisions == decisions and np.array_equal(env.observations(), obs)
    # and the next legal steps are the twin's, which never saw the refused one
    for _ in range(5):
        a = _legal_first(env.action_masks())
        o1, r1, d1, _ = env.step(a)
        o2, r2, d2, _ = twin.step(a)
        assert np.array_equal(o1, o2) and np.array_equal(r1, r2) and np.array_equal(d1, d2)


def test_step_hold_refuses_ill_typed_actions_and_holds_without_moving():
    env = LearnerVecEnv("robada", num_tables=4, num_players=2, seed=0)
    env.reset()
    a = _legal_first(env.action_masks())
    obs = env.observations()
    with pytest.raises(ValueError, match=r"^actions of dtype float64 and shape \(4,\); legal: integers of shape "
                                         r"\(4,\) \(one action id per env slot, 0\.\.26\)$"):
        env.step_hold(a + 0.4)   # used to play action int(a + 0.4) = a
    with pytest.raises(ValueError, match=r"^actions of dtype <U1 and shape \(4,\); legal: integers of shape \(4,\)"):
        env.step_hold(np.array(["0", "1", "2", "3"]))   # "0" was action 0
    with pytest.raises(ValueError, match=r"^expected 4 actions \(one per env slot\), got 3 \(shape \(3,\)\); "
                                         r"legal: integers of shape \(4,\)$"):
        env.step_hold(a[:3])
    with pytest.raises(ValueError, match=r"^hold of dtype int64 and shape \(4,\); legal: None or bool \(4,\)"):
        env.step_hold(a, np.array([1, 0, 0, 0]))   # used to be ignored: ~1 is nonzero, the game moved
    with pytest.raises(ValueError, match=r"^hold of dtype bool and shape \(1,\)"):
        env.step_hold(a, np.array([True]))
    assert np.array_equal(env.observations(), obs)


def test_a_partial_hold_of_a_simultaneous_size_is_refused_before_any_size_moves():
    # Tapeo at 2 and 3 players: a hold covering one of the two 3-player slots raised only after
    # the 2-player games had stepped (their observations and the decision counter changed).
    env = LearnerVecEnv("tapeo", num_tables=4, num_players=[2, 3], seed=0)
    twin = LearnerVecEnv("tapeo", num_tables=4, num_players=[2, 3], seed=0)
    env.reset()
    twin.reset()
    a = _legal_first(env.action_masks())
    decisions, obs = env.decisions, env.observations()
    with pytest.raises(ValueError, match=r"^hold covers part of the 3-player tables \(slots 2\.\.3\); legal: all of "
                                         r"a table size's slots or none \(its games finish together\)$"):
        env.step_hold(a, np.array([False, False, False, True]))
    assert env.decisions == decisions and np.array_equal(env.observations(), obs)
    o1, r1, d1, _ = env.step_hold(a, np.array([False, False, True, True]))   # the whole size: legal
    o2, r2, d2, _ = twin.step_hold(a, np.array([False, False, True, True]))
    assert np.array_equal(o1, o2) and np.array_equal(r1, r2) and np.array_equal(d1, d2)
    assert np.array_equal(o1[2:], obs[2:]) and not np.array_equal(o1[:2], obs[:2])


def test_a_held_slot_may_send_any_action_the_others_are_checked():
    env = LearnerVecEnv("robada", num_tables=4, num_players=2, seed=0)
    env.reset()
    masks = env.action_masks()
    a = _legal_first(masks)
    a[0] = 99                                           # held: ignored (next-step autoreset sends anything)
    env.step_hold(a, np.array([True, False, False, False]))
    a = _legal_first(env.action_masks())
    a[1] = -1
    with pytest.raises(IllegalActionError, match=r"^illegal action -1 for env slot 1; legal actions: \["):
        env.step_hold(a, np.array([True, False, False, False]))
    a[1] = np.iinfo(np.int64).max                       # no wrap-around into another slot's mask
    with pytest.raises(IllegalActionError, match=rf"^illegal action {a[1]} for env slot 1; legal actions: \["):
        env.step_hold(a)


@pytest.mark.parametrize("seed", [-1, 1.5, True, 2**64])
def test_the_learner_env_refuses_a_bad_seed_naming_the_legal_values(seed):
    # -1 was numpy's bare "expected non-negative integer"; 1.5 and True were truncated to 1
    with pytest.raises(ConfigError, match=rf"^seed={seed!r} is not allowed; legal values: None or an int in "
                                          r"0\.\.2\*\*64-1$".replace("(", "\\(")):
        LearnerVecEnv("tapeo", num_tables=2, num_players=2, seed=seed)
    assert LearnerVecEnv("tapeo", num_tables=2, num_players=2, seed=np.uint64(2**64 - 1)).seed_value == 2**64 - 1


POOL_ENV = dict(game="tapeo", num_envs=8, players=[2], learner_seats=1, env_options={}, seed=0, reward_scale=1.0,
                obs_encoder="none", heuristics=["random"], pool_size=2, p_latest=0.5, p_past=0.3, p_heuristic=0.2,
                opponent_deterministic=False)


@pytest.mark.parametrize("change, message", [
    ({"learner_seats": 0}, r"^learner_seats=0 is out of range; legal values: \[1, 2, 3, 4, 5, 6\]$"),   # ZeroDivisionError
    ({"learner_seats": 1.7}, r"^learner_seats=1\.7 must be an integer"),                                 # truncated to 1
    ({"seed": 1.5}, r"^seed=1\.5 must be an int in 0\.\.2\*\*64-1$"),                                     # truncated
    ({"seed": -1}, r"^seed=-1 must be an int in 0\.\.2\*\*64-1$"),                                        # a bare ValueError
    ({"reward_scale": float("nan")}, r"^reward_scale=nan must be a positive number"),                    # accepted
    ({"p_latest": float("nan")}, r"^pool probabilities .*: legal: each a finite number >= 0"),           # accepted
    ({"env_options": {"bogus": 1}}, r"unexpected keyword argument 'bogus'; legal options: \['config', "
                                    r"'reward_scheme', 'round_rewards'\]$"),
    ({"players": None}, r"^env config lacks \['players'\]"),                                               # KeyError
])
def test_the_rllib_pool_env_refuses_a_bad_config_naming_the_legal_values(change, message):
    from hod.training.rllib.envs import PoolVectorEnv

    config = {**POOL_ENV, **change}
    if change.get("players", 0) is None:
        del config["players"]
    with pytest.raises(ConfigError, match=message):
        PoolVectorEnv(config)
    assert PoolVectorEnv(POOL_ENV).num_envs == 8


def test_the_rllib_pool_env_takes_a_table_size_and_refuses_bad_env_options():
    from hod.training.rllib.envs import PoolVectorEnv

    assert PoolVectorEnv({**POOL_ENV, "players": 2}).num_envs == 8   # a bare count was "'int' object is not iterable"
    with pytest.raises(ConfigError, match=r"^players='23'; legal: a table size or a list of table sizes$"):
        PoolVectorEnv({**POOL_ENV, "players": "23"})
    with pytest.raises(ConfigError, match=r"^env_options=\['points'\]; legal: None or a dict of the env's options"):
        PoolVectorEnv({**POOL_ENV, "env_options": ["points"]})


def test_the_rllib_pool_env_refuses_ill_typed_actions_without_moving():
    from hod.training.rllib.envs import PoolVectorEnv

    env = PoolVectorEnv({**POOL_ENV, "num_envs": 2})
    obs, _ = env.reset(seed=0)
    before = env.venv.env.observations().copy()
    legal = np.array([np.flatnonzero(m)[0] for m in obs["action_mask"]])
    with pytest.raises(ValueError, match=r"^actions of dtype float64 and shape \(2,\); legal: integers of shape "
                                         r"\(2,\) \(one action id per env slot, 0\.\.9\)$"):
        env.step(legal + 0.4)
    with pytest.raises(ValueError, match=r"^expected 2 actions \(one per env slot\), got 1 \(shape \(1,\)\)"):
        env.step(legal[:1])
    assert np.array_equal(env.venv.env.observations(), before) and not env._pending.any()


@pytest.mark.parametrize("config, message", [
    ({"game": "tapeo"}, r"^env config lacks \['num_players'\]; legal: a config with the keys \['game', 'num_players'\]"),
    ({"num_players": 2}, r"^env config lacks \['game'\]"),
    ({"game": "tapeo", "num_players": 2.7}, r"^num_players=2\.7 is not allowed for tapeo; legal values: \[2, 3, 4, 5, 6\]$"),
    ({"game": "tapeo", "num_players": 2, "env_options": 5}, r"^env_options=5; legal: None or a dict"),
    (["tapeo"], r"^env config \['tapeo'\]; legal: a dict with the keys \['game', 'num_players'\]"),
])
def test_the_rllib_per_agent_env_refuses_a_bad_config_naming_the_legal_keys(config, message):
    from hod.training.rllib.envs import make_per_agent_env

    # {"game": "tapeo"} was a bare KeyError: 'num_players'; 2.7 was truncated to 2
    with pytest.raises(ConfigError, match=message):
        make_per_agent_env(config)
