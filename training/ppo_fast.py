"""sb3-contrib's ``MaskablePPO`` with its per-step overhead taken out, bit for bit the same run.

:class:`FastMaskablePPO` is ``sb3_contrib.MaskablePPO`` (2.9) with two methods rewritten,
``collect_rollouts`` and ``train``: the same floating-point operations on the same values in the
same order (so the same autograd graph and the same sums), the same draws from torch's and
numpy's global generators, the same rollout buffer and logger records; only Python and
conversions that do not touch a number are gone. Two rollouts and updates of either class give
equal ``state_dict``, optimizer state and rollout buffers, for both games' default
configurations (``tests/training/test_training_ppo_fast.py``). ``hod.training.train`` trains with it.

What is gone (measured on a loaded 2-core machine, docs/throughput.md "MaskablePPO: where the
time goes"; a few per cent of a training step, the rest is the networks' arithmetic and the env):

* the masked distribution: sb3-contrib builds a ``MaskableCategorical`` twice per forward (once
  unmasked, once masked), each a ``torch.distributions.Categorical`` with argument validation
  (``validate_args`` is on by default in torch: a NaN check of the logits and a support check of
  every action, whose values are legal by construction here). :func:`masked_logits`,
  :func:`sample`, :func:`log_prob` and :func:`entropy` are the same tensor operations as
  ``Categorical.__init__`` (``logits - logits.logsumexp(-1)``), ``apply_masking``
  (``where(mask, logits, -1e8)``, normalised again), ``sample`` (``multinomial(softmax(logits),
  1, True)``), ``log_prob`` (``broadcast_tensors`` then ``gather``) and the masked ``entropy``,
  without the objects and checks;
* the masks: read once per step from the env's own buffer (``action_masks()`` of a
  :class:`hod.training.learner_env.MaskedVecEnv`) into the rollout buffer, not through
  ``env_method`` and ``np.stack`` (other envs: sb3-contrib's ``get_action_masks``);
* the update's minibatches: the flattened buffer is made torch tensors once per update (actions
  already ``long``, masks already ``bool``) and each minibatch is indexed from them, instead of
  numpy fancy indexing plus a copy per array per minibatch and a float-to-bool mask conversion
  per forward; the minibatch order is the same ``np.random.permutation`` per epoch;
* the timeout bootstrap loop visits the finished slots only (``np.flatnonzero(dones)``), not
  every slot; the buffer rows are written in place.

* Adam's step: sb3's Adam (``foreach=None``) runs torch's per-parameter loop on the CPU; the step
  runs its ``foreach`` form instead (on the CPU the same kernels in the same order: equal bits;
  the param groups are restored after each step, so saved optimizer states are unchanged).

Unchanged: the networks' forward and backward, Adam's arithmetic, gradient clipping, GAE, the callback calls
(``on_rollout_start``, ``update_locals`` + ``on_step`` each step, ``on_rollout_end``), the
episode info buffer. The rollout's forward runs under ``torch.no_grad()`` as before
(``torch.inference_mode`` was not tried).

Only the configurations the project trains take the rewritten path (:meth:`FastMaskablePPO.fast_path`:
a ``Discrete`` action space, a Box observation space with the (non-Dict)
``MaskableRolloutBuffer``, a ``MaskableActorCriticPolicy`` with a ``MaskableCategoricalDistribution``,
masking on); any other falls back to sb3-contrib's own methods. The rewrite follows sb3-contrib
2.9.x line by line: :data:`CHECKED_SB3_CONTRIB` names the versions it was checked against, and
:class:`FastMaskablePPO` falls back to the parent methods under any other version.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
import sb3_contrib
import torch as th
from gymnasium import spaces
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.buffers import MaskableRolloutBuffer
from sb3_contrib.common.maskable.distributions import MaskableCategoricalDistribution
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
from stable_baselines3.common.utils import explained_variance, obs_as_tensor
from torch.nn import functional as F

from .learner_env import MaskedVecEnv

__all__ = ["FastMaskablePPO", "as_fast", "as_sb3_contrib", "masked_logits", "sample", "log_prob", "entropy", "CHECKED_SB3_CONTRIB"]

#: sb3-contrib versions (major.minor) whose ``MaskablePPO.collect_rollouts`` / ``train`` and
#: ``MaskableCategorical`` the rewrite reproduces; under any other the parent methods run.
CHECKED_SB3_CONTRIB = ("2.9",)

_HUGE_NEG = -1e8   # sb3-contrib's masked logit (MaskableCategorical.apply_masking)


def masked_logits(logits: th.Tensor, masks: th.Tensor) -> th.Tensor:
    """The normalised log-probabilities of sb3-contrib's ``MaskableCategorical(logits=logits)``
    after ``apply_masking(masks)``, by the same operations: ``l = logits - logsumexp(logits)``,
    ``m = where(masks, l, -1e8)``, ``m - logsumexp(m)``.

    Args:
        logits: float (B, A), the action net's output (any view of that shape).
        masks: bool (B, A), True where legal (at least one per row).

    Returns:
        float (B, A), same dtype and device (part of the autograd graph when ``logits`` is).
    """
    logits = logits - logits.logsumexp(dim=-1, keepdim=True)
    logits = th.where(masks, logits, th.tensor(_HUGE_NEG, dtype=logits.dtype, device=logits.device))
    return logits - logits.logsumexp(dim=-1, keepdim=True)


def sample(logp: th.Tensor) -> th.Tensor:
    """``Categorical.sample()`` of normalised log-probabilities ``logp`` float (B, A): int64 (B,),
    one ``torch.multinomial(softmax(logp), 1, True)`` draw from torch's global generator."""
    with th.no_grad():
        return th.multinomial(F.softmax(logp, dim=-1), 1, True).T.reshape(-1)


def log_prob(logp: th.Tensor, actions: th.Tensor) -> th.Tensor:
    """``Categorical.log_prob(actions)``: float (B,), ``logp`` (B, A) at ``actions`` (B,) (any
    integer or float dtype holding whole numbers), by ``broadcast_tensors`` and ``gather`` as torch does."""
    value = actions.long().unsqueeze(-1)
    value, log_pmf = th.broadcast_tensors(value, logp)
    return log_pmf.gather(-1, value[..., :1]).squeeze(-1)


def entropy(logp: th.Tensor, masks: th.Tensor) -> th.Tensor:
    """``MaskableCategorical.entropy()``: float (B,), ``-sum(where(masks, logp * softmax(logp), 0))``
    (masked actions contribute 0)."""
    p_log_p = logp * F.softmax(logp, dim=-1)
    p_log_p = th.where(masks, p_log_p, th.tensor(0.0, device=logp.device))
    return -p_log_p.sum(-1)


class _foreach_adam:
    """Within the block, a CPU ``torch.optim.Adam`` left at ``foreach=None`` (which on the CPU runs
    the per-parameter loop) takes its ``foreach`` implementation: on the CPU the same per-tensor
    kernels in the same order (equal bits, ``tests/training/test_training_ppo_fast.py``), with less Python
    per parameter. The param groups are restored after the step, so the optimizer's
    ``state_dict`` (saved in checkpoints) is unchanged; any other optimizer, device or setting: untouched."""

    def __init__(self, optimizer: th.optim.Optimizer) -> None:
        groups = optimizer.param_groups
        self.groups = groups if (type(optimizer) is th.optim.Adam and all(
            g.get("foreach") is None and not g.get("fused") and not g.get("capturable")
            and not g.get("differentiable") and all(p.device.type == "cpu" for p in g["params"])
            for g in groups)) else []

    def __enter__(self) -> None:
        for g in self.groups:
            g["foreach"] = True

    def __exit__(self, *exc: Any) -> None:
        for g in self.groups:
            g["foreach"] = None


def _forward(policy: MaskableActorCriticPolicy, obs: th.Tensor) -> tuple[th.Tensor, th.Tensor]:
    """``(latent_pi, latent_vf)`` as ``MaskableActorCriticPolicy.forward`` computes them (actor first)."""
    features = policy.extract_features(obs)
    if policy.share_features_extractor:
        return policy.mlp_extractor(features)
    pi_features, vf_features = features
    return policy.mlp_extractor.forward_actor(pi_features), policy.mlp_extractor.forward_critic(vf_features)


class FastMaskablePPO(MaskablePPO):
    """``sb3_contrib.MaskablePPO`` (same constructor, attributes, saving and loading) whose
    ``collect_rollouts`` and ``train`` compute the same numbers with less overhead (the module
    docstring). A checkpoint written from it loads as a ``MaskablePPO`` and the other way round."""

    def fast_path(self, env: Any = None, use_masking: bool = True) -> bool:
        """Whether the rewritten methods apply: sb3-contrib of a checked version, a ``Discrete``
        action space, a Box observation space with a ``MaskableRolloutBuffer``, a
        ``MaskableActorCriticPolicy`` with a ``MaskableCategoricalDistribution``, masking on,
        no gSDE. Otherwise the parent's methods run."""
        return (".".join(sb3_contrib.__version__.split(".")[:2]) in CHECKED_SB3_CONTRIB
                and use_masking and not self.use_sde
                and isinstance(self.action_space, spaces.Discrete)
                and isinstance(self.observation_space, spaces.Box)
                and type(self.rollout_buffer) is MaskableRolloutBuffer
                and isinstance(self.policy, MaskableActorCriticPolicy)
                and isinstance(self.policy.action_dist, MaskableCategoricalDistribution))

    # ---- the rollout -------------------------------------------------------------------------------
    def collect_rollouts(self, env, callback, rollout_buffer, n_rollout_steps: int, use_masking: bool = True) -> bool:
        """``MaskablePPO.collect_rollouts``: fill ``rollout_buffer`` with ``n_rollout_steps`` steps
        of every env slot; returns False when the callback stopped the run (as the parent)."""
        if not (self.fast_path(env, use_masking) and rollout_buffer is self.rollout_buffer):
            return super().collect_rollouts(env, callback, rollout_buffer, n_rollout_steps, use_masking)
        assert self._last_obs is not None, "No previous observation was provided"
        policy = self.policy
        policy.set_training_mode(False)
        n_steps = 0
        rollout_buffer.reset()
        if not is_masking_supported(env):
            raise ValueError("Environment does not support action masking. Consider using ActionMasker wrapper")
        # the env's own mask buffer when its env_method("action_masks") is MaskedVecEnv's (the same rows)
        own_masks = isinstance(env, MaskedVecEnv) and type(env).env_method is MaskedVecEnv.env_method
        n_envs, A = rollout_buffer.n_envs, rollout_buffer.mask_dims
        callback.on_rollout_start()

        while n_steps < n_rollout_steps:
            pos = rollout_buffer.pos
            with th.no_grad():
                obs_tensor = obs_as_tensor(self._last_obs, self.device)
                action_masks = np.array(env.action_masks(), dtype=bool) if own_masks else get_action_masks(env)
                latent_pi, latent_vf = _forward(policy, obs_tensor)
                values = policy.value_net(latent_vf)
                logp = masked_logits(policy.action_net(latent_pi).view(-1, A),
                                     th.as_tensor(action_masks, dtype=th.bool, device=self.device).reshape(-1, A))
                actions = sample(logp)
                log_probs = log_prob(logp, actions)
            actions = actions.cpu().numpy()
            new_obs, rewards, dones, infos = env.step(actions)
            self.num_timesteps += env.num_envs

            callback.update_locals(locals())
            if not callback.on_step():
                return False
            self._update_info_buffer(infos, dones)
            n_steps += 1
            actions = actions.reshape(-1, 1)

            for idx in np.flatnonzero(dones):   # timeouts bootstrap with the value function (SB3 #633)
                if infos[idx].get("terminal_observation") is not None and infos[idx].get("TimeLimit.truncated", False):
                    terminal_obs = policy.obs_to_tensor(infos[idx]["terminal_observation"])[0]
                    with th.no_grad():
                        terminal_value = policy.predict_values(terminal_obs)[0]
                    rewards[idx] += self.gamma * terminal_value

            # rollout_buffer.add(...), written in place
            rollout_buffer.action_masks[pos] = action_masks.reshape((n_envs, A))
            rollout_buffer.observations[pos] = self._last_obs
            rollout_buffer.actions[pos] = actions.reshape((n_envs, rollout_buffer.action_dim))
            rollout_buffer.rewards[pos] = rewards
            rollout_buffer.episode_starts[pos] = self._last_episode_starts
            rollout_buffer.values[pos] = values.cpu().numpy().flatten()
            rollout_buffer.log_probs[pos] = log_probs.cpu().numpy()
            rollout_buffer.pos += 1
            if rollout_buffer.pos == rollout_buffer.buffer_size:
                rollout_buffer.full = True
            self._last_obs = new_obs
            self._last_episode_starts = dones

        with th.no_grad():
            values = policy.predict_values(obs_as_tensor(new_obs, self.device))
        rollout_buffer.compute_returns_and_advantage(last_values=values, dones=dones)
        callback.on_rollout_end()
        return True

    # ---- the update --------------------------------------------------------------------------------
    def _minibatch_source(self) -> dict[str, th.Tensor]:
        """The flattened rollout buffer as torch tensors, once per update (the buffer is flattened
        in place as its ``get`` does, so it ends as the parent leaves it)."""
        buf = self.rollout_buffer
        assert buf.full, ""
        if not buf.generator_ready:
            for name in ("observations", "actions", "values", "log_probs", "advantages", "returns", "action_masks"):
                buf.__dict__[name] = buf.swap_and_flatten(buf.__dict__[name])
            buf.generator_ready = True
        t = {name: buf.to_torch(getattr(buf, name)) for name in
             ("observations", "actions", "values", "log_probs", "advantages", "returns")}
        return {"observations": t["observations"], "actions": t["actions"].long().flatten(),
                "old_values": t["values"].flatten(), "old_log_prob": t["log_probs"].flatten(),
                "advantages": t["advantages"].flatten(), "returns": t["returns"].flatten(),
                "action_masks": th.as_tensor(buf.to_torch(buf.action_masks.reshape(-1, buf.mask_dims)),
                                             dtype=th.bool)}

    def train(self) -> None:
        """``MaskablePPO.train``: ``n_epochs`` passes over the rollout buffer in minibatches of
        ``batch_size``, the same losses, clipping, early stop (``target_kl``) and logger records."""
        if not self.fast_path():
            return super().train()
        policy = self.policy
        policy.set_training_mode(True)
        self._update_learning_rate(policy.optimizer)
        clip_range = self.clip_range(self._current_progress_remaining)  # type: ignore[operator]
        if self.clip_range_vf is not None:
            clip_range_vf = self.clip_range_vf(self._current_progress_remaining)  # type: ignore[operator]
        entropy_losses, pg_losses, value_losses, clip_fractions = [], [], [], []
        continue_training = True
        data: Optional[dict[str, th.Tensor]] = None
        buf = self.rollout_buffer
        total = buf.buffer_size * buf.n_envs
        A = buf.mask_dims

        for epoch in range(self.n_epochs):
            approx_kl_divs = []
            indices = np.random.permutation(total)       # the buffer's get(): one permutation per pass
            if data is None:
                data = self._minibatch_source()
            batch_size = total if self.batch_size is None else self.batch_size
            for start in range(0, total, batch_size):
                idx = th.as_tensor(indices[start:start + batch_size], device=self.device)
                observations = data["observations"][idx]
                actions = data["actions"][idx]
                masks = data["action_masks"][idx]
                old_log_prob = data["old_log_prob"][idx]

                # policy.evaluate_actions: actor and critic, masked distribution, log_prob, value, entropy
                latent_pi, latent_vf = _forward(policy, observations)
                logp = masked_logits(policy.action_net(latent_pi).view(-1, A), masks.reshape(-1, A))
                log_prob_ = log_prob(logp, actions)
                values = policy.value_net(latent_vf)
                entropy_ = entropy(logp, masks.reshape(-1, A))

                values = values.flatten()
                advantages = data["advantages"][idx]
                if self.normalize_advantage:
                    advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
                ratio = th.exp(log_prob_ - old_log_prob)
                policy_loss_1 = advantages * ratio
                policy_loss_2 = advantages * th.clamp(ratio, 1 - clip_range, 1 + clip_range)
                policy_loss = -th.min(policy_loss_1, policy_loss_2).mean()
                pg_losses.append(policy_loss.item())
                clip_fraction = th.mean((th.abs(ratio - 1) > clip_range).float()).item()
                clip_fractions.append(clip_fraction)
                if self.clip_range_vf is None:
                    values_pred = values
                else:
                    old_values = data["old_values"][idx]
                    values_pred = old_values + th.clamp(values - old_values, -clip_range_vf, clip_range_vf)
                value_loss = F.mse_loss(data["returns"][idx], values_pred)
                value_losses.append(value_loss.item())
                entropy_loss = -th.mean(entropy_)
                entropy_losses.append(entropy_loss.item())
                loss = policy_loss + self.ent_coef * entropy_loss + self.vf_coef * value_loss

                with th.no_grad():
                    log_ratio = log_prob_ - old_log_prob
                    approx_kl_div = th.mean((th.exp(log_ratio) - 1) - log_ratio).cpu().numpy()
                    approx_kl_divs.append(approx_kl_div)
                if self.target_kl is not None and approx_kl_div > 1.5 * self.target_kl:
                    continue_training = False
                    if self.verbose >= 1:
                        print(f"Early stopping at step {epoch} due to reaching max kl: {approx_kl_div:.2f}")
                    break

                policy.optimizer.zero_grad()
                loss.backward()
                th.nn.utils.clip_grad_norm_(policy.parameters(), self.max_grad_norm)
                with _foreach_adam(policy.optimizer):
                    policy.optimizer.step()

            self._n_updates += 1
            if not continue_training:
                break
        explained_var = explained_variance(buf.values.flatten(), buf.returns.flatten())

        self.logger.record("train/entropy_loss", np.mean(entropy_losses))
        self.logger.record("train/policy_gradient_loss", np.mean(pg_losses))
        self.logger.record("train/value_loss", np.mean(value_losses))
        self.logger.record("train/approx_kl", np.mean(approx_kl_divs))
        self.logger.record("train/clip_fraction", np.mean(clip_fractions))
        self.logger.record("train/loss", loss.item())
        self.logger.record("train/explained_variance", explained_var)
        self.logger.record("train/n_updates", self._n_updates, exclude="tensorboard")
        self.logger.record("train/clip_range", clip_range)
        if self.clip_range_vf is not None:
            self.logger.record("train/clip_range_vf", clip_range_vf)


def as_fast(model: MaskablePPO) -> FastMaskablePPO:
    """``model`` itself, now a :class:`FastMaskablePPO` (its class switched in place: the subclass
    adds no state), e.g. a ``MaskablePPO`` built by :func:`hod.training.checkpoint.load_checkpoint`.

    Raises:
        TypeError: ``model`` is not a ``MaskablePPO`` (the message names the type).
    """
    if not isinstance(model, MaskablePPO):
        raise TypeError(f"as_fast needs a sb3_contrib MaskablePPO, not {type(model).__name__}")
    if type(model) is MaskablePPO:
        model.__class__ = FastMaskablePPO
    return model  # type: ignore[return-value]


def as_sb3_contrib(model: MaskablePPO) -> MaskablePPO:
    """``model`` itself, now a plain ``MaskablePPO`` (the inverse of :func:`as_fast`: sb3-contrib's
    own methods, e.g. for a before/after benchmark, ``hod.benchmarks.ppo_speed``).

    Raises:
        TypeError: ``model`` is not a ``MaskablePPO`` (the message names the type).
    """
    if not isinstance(model, MaskablePPO):
        raise TypeError(f"as_sb3_contrib needs a sb3_contrib MaskablePPO, not {type(model).__name__}")
    if type(model) is FastMaskablePPO:
        model.__class__ = MaskablePPO
    return model
