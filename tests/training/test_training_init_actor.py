"""The ``init_actor`` warm start (an ONNX export's or a checkpoint's actor, critic fresh) and a
shipped ONNX opponent (Tapeo's ``ppo``) as a member of the batched envs' pool."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from hod import agents
from hod.agents.model_card import CheckpointError
from hod.core.errors import ConfigError
from hod.training import config as C
from hod.training.learner_env import make_learner_vec_env
from hod.training.numpy_policy import NumpyBatchPolicy
from hod.training.policy_io import onnx_numpy_policy
from hod.training.pool import BatchOpponents, OpponentPool
from hod.training.train import Trainer

SHIPPED = Path(__file__).resolve().parents[2] / "agents" / "opponents" / "tapeo_ppo.onnx"   # [256, 256] tanh


def _positions(n_tables: int = 10) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of the first decisions of seeded games at 2-6 players."""
    env = make_learner_vec_env("tapeo", n_tables, [2, 3, 4, 5, 6], 1, "random", seed=3)
    obs = env.reset()
    return obs, env.action_masks()


def _probs(policy, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    with torch.no_grad():
        return policy.get_distribution(torch.as_tensor(obs), action_masks=mask).distribution.probs.numpy()


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z.astype(np.float64)
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _trainer(tmp_path, name: str, resume=None, **kw) -> Trainer:
    cfg = C.smoke_config("tapeo", net_arch=[256, 256], **kw)
    return Trainer("tapeo", cfg, tmp_path / name, resume=resume, progress=False, log=None)


def _critic(t: Trainer) -> dict:
    p = t.model.policy
    return {**{f"vf.{k}": v.clone() for k, v in p.mlp_extractor.value_net.state_dict().items()},
            **{f"value.{k}": v.clone() for k, v in p.value_net.state_dict().items()}}


def _actor(policy) -> dict:
    return {**{f"pi.{k}": v.clone() for k, v in policy.mlp_extractor.policy_net.state_dict().items()},
            **{f"head.{k}": v.clone() for k, v in policy.action_net.state_dict().items()}}


def test_init_actor_from_an_export_starts_with_its_action_probabilities(tmp_path):
    obs, mask = _positions()
    fresh = _trainer(tmp_path, "fresh")
    warm = _trainer(tmp_path, "warm", init_actor=str(SHIPPED))
    bot = agents.make("tapeo", "ppo", seed=0)          # onnxruntime on the same file
    _, logits = bot.run(obs, mask.astype(np.int8))
    want = _softmax(logits)
    got = _probs(warm.model.policy, obs, mask)
    assert np.abs(got - want).max() < 1e-5              # float32 rounding only
    assert np.abs(_probs(fresh.model.policy, obs, mask) - want).max() > 0.1   # a fresh actor does not
    # the critic is the fresh one of the same seed, bit for bit
    a, b = _critic(fresh), _critic(warm)
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert warm.init_actor == {"path": str(SHIPPED), "kind": "onnx", "steps": None}


def test_init_actor_from_a_checkpoint_copies_its_actor_only(tmp_path):
    src = _trainer(tmp_path, "src", total_steps=128)   # one rollout: 2 tables x 2 learner seats x 32 steps
    src.run()
    ckpt = tmp_path / "src" / "checkpoints" / "final.zip"
    fresh = _trainer(tmp_path, "fresh", seed=5)
    warm = _trainer(tmp_path, "warm", seed=5, init_actor=str(ckpt), total_steps=64)
    a, b = _actor(src.model.policy), _actor(warm.model.policy)
    assert all(torch.equal(a[k], b[k]) for k in a)
    c, d = _critic(fresh), _critic(warm)
    assert all(torch.equal(c[k], d[k]) for k in c)
    assert not torch.equal(_critic(src)["value.weight"], d["value.weight"])
    assert warm.init_actor == {"path": str(ckpt), "kind": "checkpoint", "steps": 128}
    with pytest.raises(CheckpointError, match="trained with activation 'tanh', the run is configured with 'relu'"):
        _trainer(tmp_path, "relu", seed=5, init_actor=str(ckpt), activation="relu")
    warm.run()   # the warm start is recorded in the run's model card
    assert warm.model_card()["training"]["init_actor"] == {"path": str(ckpt), "kind": "checkpoint", "steps": 128}
    # resuming keeps the actor: another init_actor on --resume would be recorded but never used
    final = tmp_path / "warm" / "checkpoints" / "final.zip"
    with pytest.raises(ConfigError, match=r"a resumed run keeps its actor \(this run started from '.*final.zip'\)"):
        _trainer(tmp_path, "warm", seed=5, init_actor=str(SHIPPED), total_steps=128, resume=final)
    again = _trainer(tmp_path, "warm", seed=5, init_actor=str(ckpt), total_steps=128, resume=final)
    assert again.init_actor == {"path": str(ckpt), "kind": "checkpoint", "steps": 128}


def test_init_actor_bad_values_name_what_is_accepted(tmp_path):
    cfg = C.smoke_config("tapeo")
    with pytest.raises(ConfigError, match=r"init_actor='nope.onnx': no such file; legal: \"\" \(a fresh actor\)"):
        C.validate_config("tapeo", C.override_keys(cfg, {"init_actor": "nope.onnx"}))
    other = tmp_path / "weights.pt"
    other.write_bytes(b"\x80\x04 pickle")
    with pytest.raises(ConfigError, match="not a file ending .onnx or .zip"):
        C.validate_config("tapeo", C.override_keys(cfg, {"init_actor": str(other)}))
    with pytest.raises(ConfigError, match="two warm starts"):
        C.validate_config("tapeo", C.override_keys(cfg, {"init_actor": str(SHIPPED), "bc_teacher": "greedy"}))
    fake = tmp_path / "fake.onnx"
    fake.write_bytes(b"not protobuf at all")
    with pytest.raises(CheckpointError, match="fake.onnx"):
        _trainer(tmp_path, "fake", init_actor=str(fake))
    with pytest.raises(CheckpointError, match="differ from the policy's"):   # the export is [256, 256]
        Trainer("tapeo", C.smoke_config("tapeo", init_actor=str(SHIPPED)), tmp_path / "small", progress=False,
                log=None)
    # the shipped export's hidden layers are tanh (its card): a relu run of the same shape is refused
    with pytest.raises(CheckpointError, match=r"use \['tanh'\], the run is configured with activation 'relu'"):
        _trainer(tmp_path, "relu", init_actor=str(SHIPPED), activation="relu")


def test_shipped_ppo_is_a_batch_member_of_the_batched_pool_with_its_own_share():
    # heuristics ranking, ppo, ppo: the heuristic share 0.6 split 1/3 : 2/3 (a name listed twice
    # counts twice); latest 0.4 (the only other category with a member)
    pool = OpponentPool("tapeo", ["ranking", "ppo", "ppo"], 5, p_latest=0.4, p_past=0.2, p_heuristic=0.6)
    pool.update_latest(onnx_numpy_policy(SHIPPED, "tanh"))
    src = BatchOpponents("tapeo", pool, seed=0)
    pols, weights = src.refresh()
    assert src.labels == ["latest", "heuristic:ranking", "heuristic:ppo"]
    # past has no snapshot: latest 0.4 / (0.4 + 0.6) = 0.4, ranking 0.6 / 3 = 0.2, ppo 2 * 0.2 = 0.4
    assert weights == pytest.approx([0.4, 0.2, 0.4], abs=1e-12)
    ppo = pols[2]
    assert isinstance(ppo, NumpyBatchPolicy) and ppo.deterministic   # plays the argmax, as the registered bot
    obs, mask = _positions(20)
    action, logits = agents.make("tapeo", "ppo", seed=0).run(obs, mask.astype(np.int8))
    assert np.abs(ppo.policy.masked_logits(obs, mask) - logits).max() < 1e-4
    top2 = np.sort(logits, axis=1)[:, -2:]
    clear = top2[:, 1] - top2[:, 0] > 1e-3              # no near-tie that rounding could flip
    assert clear.sum() >= 15
    assert np.array_equal(ppo(obs, mask)[clear], action[clear])


def test_onnx_numpy_policy_refuses_a_file_that_is_not_an_export(tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x00" * 10)
    with pytest.raises(CheckpointError, match="bad.onnx"):
        onnx_numpy_policy(bad, "tanh")
    with pytest.raises(CheckpointError, match="legal values"):
        onnx_numpy_policy(SHIPPED, "sigmoid")
