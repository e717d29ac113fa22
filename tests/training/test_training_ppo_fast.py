""":class:`hod.training.ppo_fast.FastMaskablePPO` against sb3-contrib's ``MaskablePPO`` (the oracle),
bit for bit: two rollouts and updates through the trainer with each game's default PPO
configuration (tables, rollout, minibatch, epochs, [256, 256] tanh actor and critic) give equal
rollout buffers (before and after each update), policy ``state_dict``, Adam state, logger records,
step counts and global generator states; the options the trainer does not use (value clipping,
early stop on ``target_kl``, no advantage normalisation, one minibatch) likewise on a small run;
the parent's methods run where the rewrite does not apply."""
from __future__ import annotations

import time

import numpy as np
import pytest
import torch
from sb3_contrib import MaskablePPO

from hod.training import config as C
from hod.training import ppo_fast
from hod.training import train as train_mod
from hod.training.learner_env import LearnerVecEnv
from hod.training.ppo_fast import FastMaskablePPO, as_fast, entropy, log_prob, masked_logits
from hod.training.train import Trainer

BUFFER = ("observations", "actions", "rewards", "episode_starts", "values", "log_probs", "advantages", "returns",
          "action_masks")


def _snapshots(model) -> list:
    """Wrap ``model.train`` to keep copies of the rollout buffer before and after each update."""
    shots: list = []
    inner = model.train

    def train():
        buf = model.rollout_buffer
        shots.append({k: getattr(buf, k).copy() for k in BUFFER})
        inner()
        shots.append({k: getattr(buf, k).copy() for k in BUFFER})

    model.train = train
    return shots


def _state(model) -> dict:
    opt = model.policy.optimizer.state_dict()
    return {"policy": {k: v.detach().clone() for k, v in model.policy.state_dict().items()},
            "adam": [(int(s["step"]), s["exp_avg"].clone(), s["exp_avg_sq"].clone()) for s in opt["state"].values()],
            "groups": [{k: v for k, v in g.items() if k != "params"} for g in opt["param_groups"]],
            "logs": dict(model.logger.name_to_value), "steps": int(model.num_timesteps),
            "updates": int(model._n_updates), "torch_rng": torch.get_rng_state().clone(),
            "numpy_rng": np.random.get_state()[1].copy()}


def _assert_same(a: dict, b: dict, shots_a: list, shots_b: list) -> None:
    assert len(shots_a) == len(shots_b) == 4   # two updates, before and after each
    for i, (x, y) in enumerate(zip(shots_a, shots_b)):
        for k in BUFFER:
            assert x[k].dtype == y[k].dtype and np.array_equal(x[k], y[k]), (i, k)
    assert a["policy"].keys() == b["policy"].keys()
    for k in a["policy"]:
        assert torch.equal(a["policy"][k], b["policy"][k]), k
    assert len(a["adam"]) == len(b["adam"]) > 0
    for (sa, ma, va), (sb, mb, vb) in zip(a["adam"], b["adam"]):
        assert sa == sb and torch.equal(ma, mb) and torch.equal(va, vb)
    assert a["logs"].keys() == b["logs"].keys() and len(a["logs"]) >= 9
    for k in a["logs"]:
        assert np.array_equal(a["logs"][k], b["logs"][k]), (k, a["logs"][k], b["logs"][k])
    assert a["groups"] == b["groups"] and a["groups"][0]["foreach"] is None   # Adam's settings as saved
    for k in ("steps", "updates"):
        assert a[k] == b[k], k
    assert torch.equal(a["torch_rng"], b["torch_rng"]) and np.array_equal(a["numpy_rng"], b["numpy_rng"])


def _trainer_run(game: str, fast: bool, out, monkeypatch, **over):
    if not fast:   # the trainer as it was: sb3-contrib's class
        monkeypatch.setattr(ppo_fast, "FastMaskablePPO", MaskablePPO)
        monkeypatch.setattr(ppo_fast, "as_fast", lambda m: m)
    cfg = C.override_keys(C.load_config(game), {"eval_every": 0, "checkpoint_every": 10**9, "heuristics": ["random"],
                                                "obs_encoder": "none", **over})
    flat = C.flatten(cfg)
    t = Trainer(game, cfg, out, progress=False, verbose=0, log=None)
    assert type(t.model) is (FastMaskablePPO if fast else MaskablePPO)
    shots = _snapshots(t.model)
    # Trainer.run's learn: the self-play callback (pool refresh from the learner each rollout, the
    # policy diagnostics) without its final diagnostics and checkpoint writes
    t._t_start = time.perf_counter()
    t.model.learn(2 * flat["n_steps"] * flat["tables"] * flat["learner_seats"], callback=train_mod._SelfPlayCallback(t),
                  progress_bar=False, tb_log_name="ppo")
    state = _state(t.model)
    monkeypatch.undo()
    return state, shots


@pytest.mark.parametrize("game", ["tapeo", "robada"])
def test_two_default_rollouts_and_updates_are_bit_for_bit_sb3_contribs(game, tmp_path, monkeypatch):
    # the default PPO configuration of the game (training.toml): Tapeo 64 tables x 2 learner seats,
    # Robada 128 x 1, n_steps 32 (rollout 4,096), batch 1,024, 4 epochs (16 minibatches an update)
    flat = C.flatten(C.load_config(game))
    assert (flat["n_steps"], flat["batch_size"], flat["n_epochs"], list(flat["net_arch"])) == (32, 1024, 4, [256, 256])
    old, old_shots = _trainer_run(game, False, tmp_path / "sb3", monkeypatch)
    new, new_shots = _trainer_run(game, True, tmp_path / "fast", monkeypatch)
    assert new["steps"] == 2 * 4096 and new["updates"] == 2 * 4
    _assert_same(old, new, old_shots, new_shots)
    # the buffers saw finished games and masked actions (the cases the rewrite must get right)
    assert old_shots[0]["episode_starts"][1:].any() and not old_shots[0]["action_masks"].all()


def test_the_encoder_and_reward_scale_run_is_bit_for_bit_too(tmp_path, monkeypatch):
    # Robada's shipped encoder (robada_plans: planner values appended) and reward scale 0.01, small run
    over = {"obs_encoder": "robada_plans", "tables": 8, "n_steps": 16, "batch_size": 64, "n_epochs": 2}
    old, old_shots = _trainer_run("robada", False, tmp_path / "sb3", monkeypatch, **over)
    new, new_shots = _trainer_run("robada", True, tmp_path / "fast", monkeypatch, **over)
    assert new["steps"] == 2 * 8 * 16 and new["updates"] == 2 * 2
    _assert_same(old, new, old_shots, new_shots)


def _direct(cls, **kw):
    env = LearnerVecEnv("tapeo", num_tables=8, num_players=[2, 4], learner_seats=2, seed=3, reward_scheme="points")
    model = cls("MlpPolicy", env, n_steps=8, seed=5, device="cpu",
                policy_kwargs=dict(net_arch=dict(pi=[32], vf=[32])), **kw)
    shots = _snapshots(model)
    return model, shots


@pytest.mark.parametrize("kw", [
    dict(batch_size=32, n_epochs=3, clip_range_vf=0.1, normalize_advantage=False),
    dict(batch_size=None, n_epochs=5, target_kl=1e-4, learning_rate=0.05),   # stops early
])
def test_the_options_the_trainer_leaves_at_default_are_bit_for_bit(kw):
    states, all_shots = [], []
    for cls in (MaskablePPO, FastMaskablePPO):
        torch.manual_seed(0)
        np.random.seed(0)
        model, shots = _direct(cls, **kw)
        model.learn(2 * 8 * 2 * 8)   # two rollouts of 8 steps x 16 slots
        states.append(_state(model))
        all_shots.append(shots)
    _assert_same(*states, *all_shots)
    if "target_kl" in kw:   # the early stop fired: fewer than 5 passes an update
        assert states[0]["updates"] < 2 * 5


def test_the_parents_methods_run_where_the_rewrite_does_not_apply(monkeypatch):
    model, _ = _direct(FastMaskablePPO, batch_size=32)
    assert model.fast_path() and not model.fast_path(use_masking=False)
    calls = []
    monkeypatch.setattr(MaskablePPO, "collect_rollouts", lambda self, *a, **k: calls.append("collect") or False)
    model.learn(128, use_masking=False)
    assert calls == ["collect"]
    monkeypatch.setattr(ppo_fast, "CHECKED_SB3_CONTRIB", ("0.0",))   # an sb3-contrib the rewrite was not checked on
    assert not model.fast_path()
    monkeypatch.setattr(MaskablePPO, "train", lambda self: calls.append("train"))
    model.train()
    assert calls == ["collect", "train"]


def test_the_distribution_pieces_equal_maskable_categorical():
    from sb3_contrib.common.maskable.distributions import MaskableCategorical

    g = torch.Generator().manual_seed(1)
    logits = (torch.randn(64, 10, generator=g) * 3).requires_grad_()
    masks = torch.rand(64, 10, generator=g) < 0.5
    masks[:, 3] = True
    acts = torch.multinomial(masks.float(), 1, generator=g)[:, 0]
    d = MaskableCategorical(logits=logits, masks=masks)
    logp = masked_logits(logits, masks)
    assert torch.equal(logp, d.logits)
    assert torch.equal(log_prob(logp, acts), d.log_prob(acts))
    assert torch.equal(entropy(logp, masks), d.entropy())
    # an illegal action's log-probability is about -1e8 (the masked logit), a legal row sums to 1
    assert torch.allclose(logp.exp().sum(1), torch.ones(64))
    assert float(logp.detach()[~masks].max()) < -9e7
    torch.manual_seed(7)
    a = ppo_fast.sample(logp)
    torch.manual_seed(7)
    assert torch.equal(a, d.sample()) and bool(masks[torch.arange(64), a].all())


def test_as_fast_switches_a_maskable_ppo_and_refuses_other_objects():
    model, _ = _direct(MaskablePPO, batch_size=32)
    same = as_fast(model)
    assert same is model and type(model) is FastMaskablePPO
    assert as_fast(model) is model
    with pytest.raises(TypeError, match="MaskablePPO, not dict"):
        as_fast({})


def test_the_floor_benchmark_runs_the_arithmetic_of_a_rollout_and_an_update():
    from hod.benchmarks import ppo_speed

    r = ppo_speed.floor(12, num_actions=4, envs=4, n_steps=2, batch=4, epochs=1, repeats=1)
    assert set(r) == {"rollout_us", "update_us", "env_steps_per_s"}
    # 8 env steps: env_steps_per_s = 8 / (8 * (rollout_us + update_us) * 1e-6)
    assert r["rollout_us"] > 0 and r["update_us"] > 0
    assert r["env_steps_per_s"] == pytest.approx(1e6 / (r["rollout_us"] + r["update_us"]))
