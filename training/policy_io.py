"""Conversions of a trained sb3-contrib ``MaskablePPO`` policy (torch) to torch-free forms.

* :func:`to_numpy_policy`: the actor as a :class:`hod.training.numpy_policy.NumpyPolicy`
  (opponent-pool snapshots, fast evaluation).
* :func:`actor_module`: a torch module ``(observation, action_mask) -> (action, masked_logits)``
  used by the ONNX export (:mod:`hod.training.export`).

Only the network SB3 builds for a flat ``Box`` observation is supported: flatten features, an
MLP actor of ``Linear`` + ``Tanh``/``ReLU`` layers, a ``Linear`` action head.
"""
from __future__ import annotations

import torch
from torch import nn

from .numpy_policy import HUGE_NEG, NumpyPolicy


def _mlp_layers(policy) -> tuple[list[nn.Linear], str]:
    from stable_baselines3.common.torch_layers import FlattenExtractor

    fx = policy.pi_features_extractor if hasattr(policy, "pi_features_extractor") else policy.features_extractor
    if not isinstance(fx, FlattenExtractor):
        raise ValueError(f"feature extractor {type(fx).__name__} is not supported; legal: FlattenExtractor "
                         f"(SB3's default for MlpPolicy)")
    linears: list[nn.Linear] = []
    acts: set[str] = set()
    for m in policy.mlp_extractor.policy_net:
        if isinstance(m, nn.Linear):
            linears.append(m)
        elif isinstance(m, nn.Tanh):
            acts.add("tanh")
        elif isinstance(m, nn.ReLU):
            acts.add("relu")
        else:
            raise ValueError(f"unsupported layer {type(m).__name__} in the actor network; legal layers: Linear, Tanh, "
                             f"ReLU")
    if len(acts) > 1:
        raise ValueError(f"mixed activations {sorted(acts)} are not supported; legal: one of ['tanh', 'relu'] "
                         f"throughout")
    return linears, (acts.pop() if acts else "tanh")


def to_numpy_policy(policy, encoder: str = "none") -> NumpyPolicy:
    """Copy the actor of an SB3 ``MaskableActorCriticPolicy`` into a :class:`NumpyPolicy`
    that reads observations through ``encoder`` (:mod:`hod.agents.encoders`, the one it was trained with).

    Raises:
        ValueError: a network other than flatten + MLP (see the module docstring).
    """
    linears, act = _mlp_layers(policy)
    with torch.no_grad():
        layers = [(m.weight.detach().cpu().numpy().copy(), m.bias.detach().cpu().numpy().copy()) for m in linears]
        head = (policy.action_net.weight.detach().cpu().numpy().copy(),
                policy.action_net.bias.detach().cpu().numpy().copy())
    return NumpyPolicy(layers, head, act, encoder)


class MaskedActor(nn.Module):
    """``(observation float32 [B, obs], action_mask int8 [B, A]) -> (action int64 [B], logits float32 [B, A])``.

    ``logits`` are the actor's logits with illegal actions (mask 0) replaced by ``-1e8`` (as in
    sb3-contrib's ``MaskableCategorical``); ``action`` is their argmax, so the returned action is
    always legal when the mask allows any.
    """

    def __init__(self, policy) -> None:
        super().__init__()
        linears, act = _mlp_layers(policy)
        layers: list[nn.Module] = []
        for m in linears:
            layers += [m, nn.Tanh() if act == "tanh" else nn.ReLU()]
        self.body = nn.Sequential(*layers)
        self.head = policy.action_net

    def forward(self, observation: torch.Tensor, action_mask: torch.Tensor):
        logits = self.head(self.body(observation.float()))
        legal = action_mask != 0
        masked = torch.where(legal, logits, torch.full_like(logits, HUGE_NEG))
        return torch.argmax(masked, dim=-1), masked


def actor_module(policy) -> MaskedActor:
    """The :class:`MaskedActor` of an SB3 policy (shares its parameters; call ``.eval()``)."""
    return MaskedActor(policy)
