"""Our action-masking RLModule for RLlib's new API stack (public RLlib API only).

:class:`MaskedActorCritic` is a ``TorchRLModule`` with RLlib's public ``ValueFunctionAPI`` (what
RLlib's PPO learner needs). It reads the observation dict of our envs as it is,
``{"observation": float32 (B, obs_size), "action_mask": int8 (B, num_actions)}``, and replaces the
logits of illegal actions (mask 0) by :data:`hod.training.numpy_policy.HUGE_NEG` (``-1e8``, what
sb3-contrib's ``MaskableCategorical`` does), so RLlib's default categorical distribution never
samples an illegal action and PPO's ratios and entropy are those of the masked policy.

The network is the one the SB3 trainer builds for ``net_arch``/``activation``: separate actor and
critic MLPs, a linear action head and a linear value head, with SB3's orthogonal initialisation
(gains sqrt(2), 0.01, 1). Its parameters carry SB3's names (``mlp_extractor.policy_net.0.weight``,
``action_net.bias``, ...), in SB3's order, so weights and Adam moments move between an RLlib
learner and our data-only checkpoints (:mod:`hod.training.checkpoint`) by name
(:mod:`hod.training.rllib.bridge`).

``model_config`` keys: ``net_arch`` (list of layer sizes, default ``[256, 256]``) and
``activation`` (``"tanh"`` or ``"relu"``).
"""
from __future__ import annotations

import logging
from typing import Any, Optional

import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule
from torch import nn

from hod.training.numpy_policy import HUGE_NEG, NumpyPolicy

#: RLlib 2.60's ``RLModule.__init__`` builds a deprecated ``RLModuleConfig`` itself, so it logs
#: "``RLModule(config=[RLModuleConfig object])`` has been deprecated" even for a module built the
#: new way (keyword spaces and ``model_config``, as ``RLModuleSpec.build`` builds ours); a known
#: RLlib issue (ray-project/ray#51630). :class:`_DropModuleConfigWarning` drops that one message.
SPURIOUS_DEPRECATION = "RLModule(config=[RLModuleConfig object])"


class _DropModuleConfigWarning(logging.Filter):
    """Logging filter of Ray's deprecation logger: drops the :data:`SPURIOUS_DEPRECATION` message only."""

    def filter(self, record: logging.LogRecord) -> bool:
        return SPURIOUS_DEPRECATION not in record.getMessage()


_deprecation_logger = logging.getLogger("ray._common.deprecation")
if not any(isinstance(f, _DropModuleConfigWarning) for f in _deprecation_logger.filters):
    _deprecation_logger.addFilter(_DropModuleConfigWarning())

OBS_KEY = "observation"
MASK_KEY = "action_mask"
ACTIVATIONS = {"tanh": nn.Tanh, "relu": nn.ReLU}


def _mlp(sizes: list[int], activation: str) -> nn.Sequential:
    layers: list[nn.Module] = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [nn.Linear(a, b), ACTIVATIONS[activation]()]
    return nn.Sequential(*layers)


def _orthogonal(module: nn.Module, gain: float) -> None:
    for m in module.modules():
        if isinstance(m, nn.Linear):
            nn.init.orthogonal_(m.weight, gain=gain)
            nn.init.zeros_(m.bias)


class MaskedActorCritic(TorchRLModule, ValueFunctionAPI):
    """Masked actor-critic MLP over our ``{"observation", "action_mask"}`` observations.

    Built by RLlib from an ``RLModuleSpec(module_class=MaskedActorCritic, model_config={...})``
    (or directly: ``MaskedActorCritic(observation_space=..., action_space=..., model_config=...)``,
    RLlib's keyword constructor; the deprecated ``config=RLModuleConfig(...)`` is not used):
    ``observation_space`` must be a ``Dict`` with a ``Box`` ``"observation"`` of shape
    ``(obs_size,)`` and an ``"action_mask"`` ``Box`` of shape ``(num_actions,)``;
    ``action_space`` a ``Discrete(num_actions)``.

    Forward passes return ``action_dist_inputs`` float32 (B, num_actions): the actor's logits,
    ``-1e8`` where the mask is 0. :meth:`compute_values` returns float32 (B,) state values.

    Raises:
        ValueError: another observation or action space, an unknown activation or bad layer sizes.
    """

    def setup(self) -> None:
        space = self.observation_space
        spaces = getattr(space, "spaces", None)
        if not isinstance(spaces, dict) or OBS_KEY not in spaces or MASK_KEY not in spaces:
            raise ValueError(f"observation space {space} is not our dict; legal: Dict with keys "
                             f"{[OBS_KEY, MASK_KEY]}")
        n_act = getattr(self.action_space, "n", None)
        if n_act is None or spaces[MASK_KEY].shape != (int(n_act),):
            raise ValueError(f"action space {self.action_space} does not fit the mask {spaces[MASK_KEY].shape}; "
                             f"legal: Discrete(n) with an (n,) mask")
        cfg = dict(self.model_config or {})
        arch = list(cfg.get("net_arch", [256, 256]))
        act = cfg.get("activation", "tanh")
        if act not in ACTIVATIONS:
            raise ValueError(f"activation={act!r}; legal values: {sorted(ACTIVATIONS)}")
        if not arch or not all(isinstance(w, int) and w >= 1 for w in arch):
            raise ValueError(f"net_arch={arch!r}; legal: a non-empty list of layer sizes >= 1")
        obs_size = int(np.prod(spaces[OBS_KEY].shape))
        self.activation = act
        self.mlp_extractor = nn.Module()
        self.mlp_extractor.policy_net = _mlp([obs_size] + arch, act)
        self.mlp_extractor.value_net = _mlp([obs_size] + arch, act)
        self.action_net = nn.Linear(arch[-1], int(n_act))
        self.value_net = nn.Linear(arch[-1], 1)
        _orthogonal(self.mlp_extractor, np.sqrt(2))   # SB3's ActorCriticPolicy initialisation
        _orthogonal(self.action_net, 0.01)
        _orthogonal(self.value_net, 1.0)

    # ---- forward passes ------------------------------------------------------------------------
    def _masked_logits(self, batch: dict[str, Any]) -> torch.Tensor:
        obs = batch[Columns.OBS]
        logits = self.action_net(self.mlp_extractor.policy_net(obs[OBS_KEY].float()))
        return torch.where(obs[MASK_KEY] != 0, logits, torch.full_like(logits, HUGE_NEG))

    def _forward(self, batch: dict[str, Any], **kwargs) -> dict[str, Any]:
        return {Columns.ACTION_DIST_INPUTS: self._masked_logits(batch)}

    def _forward_train(self, batch: dict[str, Any], **kwargs) -> dict[str, Any]:
        return {Columns.ACTION_DIST_INPUTS: self._masked_logits(batch)}

    def compute_values(self, batch: dict[str, Any], embeddings: Optional[Any] = None) -> torch.Tensor:
        """float32 (B,): the critic's value of each observation (the mask is not used)."""
        obs = batch[Columns.OBS][OBS_KEY].float()
        return self.value_net(self.mlp_extractor.value_net(obs)).squeeze(-1)

    # ---- torch-free copy --------------------------------------------------------------------
    def numpy_policy(self, encoder: str = "none") -> NumpyPolicy:
        """The actor as a :class:`hod.training.numpy_policy.NumpyPolicy` (opponent-pool snapshots,
        evaluation, ONNX export), reading observations through ``encoder``."""
        return numpy_policy_from_weights(
            {k: v.detach().cpu().numpy() for k, v in self.state_dict().items()}, self.activation, encoder)


def numpy_policy_from_weights(weights: dict[str, np.ndarray], activation: str, encoder: str = "none") -> NumpyPolicy:
    """A :class:`NumpyPolicy` from the actor's arrays named as in :class:`MaskedActorCritic` (and
    in SB3's ``MlpPolicy``): ``mlp_extractor.policy_net.<i>.weight/bias`` and ``action_net.weight/bias``.

    Raises:
        KeyError: an array missing; ValueError: shapes that do not chain.
    """
    idx = sorted({int(k.split(".")[2]) for k in weights if k.startswith("mlp_extractor.policy_net.")})
    layers = [(np.array(weights[f"mlp_extractor.policy_net.{i}.weight"], np.float32),
               np.array(weights[f"mlp_extractor.policy_net.{i}.bias"], np.float32)) for i in idx]
    head = (np.array(weights["action_net.weight"], np.float32), np.array(weights["action_net.bias"], np.float32))
    return NumpyPolicy(layers, head, activation, encoder)
