"""Conversions of a trained sb3-contrib ``MaskablePPO`` policy (torch) to torch-free forms.

* :func:`to_numpy_policy`: the actor as a :class:`hod.training.numpy_policy.NumpyPolicy`
  (opponent-pool snapshots, fast evaluation).
* :func:`actor_module`: a torch module ``(observation, action_mask) -> (action, masked_logits)``
  used by the ONNX export (:mod:`hod.training.export`).

Only the network SB3 builds for a flat ``Box`` observation is supported: flatten features, an
MLP actor of ``Linear`` + ``Tanh``/``ReLU`` layers, a ``Linear`` action head.
"""
from __future__ import annotations

import numpy as np
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


# ---- reading an actor back: ONNX exports and checkpoints ----------------------------------------
def _read_export(path):
    """The ``onnx.ModelProto`` of an export, read with ``onnx`` (protobuf: no code runs) after the
    checks of :class:`hod.agents.onnx_policy.OnnxPolicy` (see :func:`onnx_actor_weights`)."""
    import onnx

    from hod.agents import model_card
    from hod.agents.model_card import CheckpointError
    from hod.agents.onnx_policy import check_graph_tensors

    try:
        data = model_card.read_limited(path, model_card.MAX_FILE_BYTES, "MAX_FILE_BYTES", "ONNX export")
    except OSError as e:   # missing or unreadable file
        raise CheckpointError(f"{path}: not a readable ONNX export ({type(e).__name__}: {e})") from None
    check_graph_tensors(data, str(path))
    try:
        return onnx.load_model_from_string(data)
    except Exception as e:   # protobuf's DecodeError and friends: not an ONNX file
        raise CheckpointError(f"{path}: not an ONNX model ({type(e).__name__}: {e})") from None


def onnx_actor_weights(path) -> dict:
    """The actor tensors of an ONNX export (:mod:`hod.training.export`): ``{name: float array}``
    for the initializers ``body.<2k>.weight/bias`` and ``head.weight/bias`` (weights ``(out,
    in)``, torch's layout). The file is read with ``onnx`` (protobuf: no code runs) after the
    checks of :class:`hod.agents.onnx_policy.OnnxPolicy`: its size
    (:data:`hod.agents.model_card.MAX_FILE_BYTES`) and the sizes its tensors declare
    (:func:`hod.agents.onnx_policy.check_graph_tensors`; no external data is loaded).

    Raises:
        CheckpointError: a missing or unreadable file, not an ONNX file, or one over the limits of
            :mod:`hod.agents.model_card`.
    """
    from onnx import numpy_helper

    proto = _read_export(path)
    return {t.name: np.array(numpy_helper.to_array(t), dtype=np.float32) for t in proto.graph.initializer
            if t.name.startswith(("body.", "head."))}


#: ONNX operator of each ``activation`` of the config (what :mod:`hod.training.export` writes).
_ACTIVATION_OPS = {"tanh": "Tanh", "relu": "Relu"}


def onnx_activations(path) -> set:
    """The ``activation`` names (``"tanh"``, ``"relu"``) whose operators an export's graph uses.

    Raises:
        CheckpointError: as :func:`onnx_actor_weights`.
    """
    ops = {n.op_type for n in _read_export(path).graph.node}
    return {a for a, op in _ACTIVATION_OPS.items() if op in ops}


def _activation_of(policy) -> str:
    """``"tanh"`` or ``"relu"``: the activation of an SB3 policy's hidden layers."""
    return "relu" if policy.activation_fn is nn.ReLU else "tanh"


def load_onnx_actor(policy, path) -> None:
    """Copy the actor of an ONNX export (:func:`onnx_actor_weights`) into an SB3
    ``MaskableActorCriticPolicy`` (its ``mlp_extractor.policy_net`` linears and ``action_net``);
    the critic is left as it is.

    Raises:
        CheckpointError: not a readable ONNX file, one over the limits of
            :mod:`hod.agents.model_card`, or layers whose names or shapes differ from the
            policy's actor (the message names both).
    """
    from hod.agents.model_card import CheckpointError

    weights = onnx_actor_weights(path)
    linears, _ = _mlp_layers(policy)
    names = [f"body.{2 * i}" for i in range(len(linears))] + ["head"]
    modules = linears + [policy.action_net]
    want = {f"{n}.{p}": tuple(getattr(m, p).shape) for n, m in zip(names, modules) for p in ("weight", "bias")}
    have = {k: tuple(v.shape) for k, v in weights.items()}
    if have != want:
        raise CheckpointError(f"{path}: actor layers {have} differ from the policy's {want}; the export must "
                              f"have the configured net_arch and the game's sizes")
    with torch.no_grad():
        for n, m in zip(names, modules):
            for p in ("weight", "bias"):
                getattr(m, p).copy_(torch.as_tensor(weights[f"{n}.{p}"], dtype=getattr(m, p).dtype))


def onnx_numpy_policy(path, activation: str, encoder: str = "none") -> NumpyPolicy:
    """The actor of an ONNX export as a :class:`NumpyPolicy` (for batch play without
    onnxruntime: the batched training envs' ``ppo`` opponents, :class:`hod.training.pool.BatchOpponents`).
    ``activation`` (``"tanh"`` or ``"relu"``) and ``encoder`` are the export's, from its model card.
    Its masked logits equal the export's to float32 rounding.

    Raises:
        CheckpointError: as :func:`onnx_actor_weights`, or tensors that do not chain into an MLP
            (``body.0``, ``body.2``, ... then ``head``, each layer's input the previous one's output),
            or an unknown ``activation`` (the legal ones are named).
    """
    from hod.agents.model_card import CheckpointError

    w = onnx_actor_weights(path)
    k = 0
    layers = []
    while f"body.{2 * k}.weight" in w:
        layers.append((w[f"body.{2 * k}.weight"], w[f"body.{2 * k}.bias"]))
        k += 1
    if "head.weight" not in w or not layers or len(w) != 2 * k + 2:
        raise CheckpointError(f"{path}: actor tensors {sorted(w)}; expected body.0 ... body.{2 * max(k - 1, 0)} "
                              f"(weight, bias) and head (weight, bias), as hod.training.export writes")
    try:
        return NumpyPolicy(layers, (w["head.weight"], w["head.bias"]), activation, encoder)
    except ValueError as e:   # shapes that do not chain, an unknown activation
        raise CheckpointError(f"{path}: {e}") from None


def load_init_actor(policy, path, game: str, encoder: str = "none") -> dict:
    """Start a run's actor from ``path`` (config key ``init_actor``): an ONNX export
    (``.onnx``, :func:`load_onnx_actor`) or a checkpoint (``.zip``,
    :func:`hod.training.checkpoint.load_checkpoint`, no unpickling) of the same network; only the
    actor (``mlp_extractor.policy_net`` and ``action_net``) is copied, the critic stays as
    built (fresh).

    Args:
        policy: the SB3 ``MaskableActorCriticPolicy`` to fill.
        game: the game the file must be for.
        encoder: the run's ``obs_encoder``; a checkpoint must have been trained with it.

    Returns:
        ``{"path", "kind", "steps"}`` for the model card (``steps``: the checkpoint's learner
        steps, None for an export).

    Raises:
        CheckpointError: an unusable file (:func:`load_onnx_actor`, ``load_checkpoint``), a
            checkpoint of another game or encoder, a network of another activation or shape.
    """
    from hod.agents.model_card import CheckpointError

    from .checkpoint import load_checkpoint

    path = str(path)
    want = _activation_of(policy)
    if path.endswith(".onnx"):
        have = onnx_activations(path)
        if have != {want}:
            raise CheckpointError(f"{path}: its hidden layers use {sorted(have) or 'no known activation'}, the run "
                                  f"is configured with activation {want!r}; legal: an export of the same activation")
        load_onnx_actor(policy, path)
        return {"path": path, "kind": "onnx", "steps": None}
    src, card, _ = load_checkpoint(path, game=game)
    have = (card.get("policy") or {}).get("activation", "tanh")
    if have != want:
        raise CheckpointError(f"{path}: trained with activation {have!r}, the run is configured with {want!r}; "
                              f"legal: a checkpoint of the same activation")
    if card.get("obs_encoder", "none") != encoder:
        raise CheckpointError(f"{path}: trained with obs_encoder {card.get('obs_encoder', 'none')!r}, the run "
                              f"uses {encoder!r}; legal: a checkpoint of the same encoder")
    try:
        policy.mlp_extractor.policy_net.load_state_dict(src.policy.mlp_extractor.policy_net.state_dict())
        policy.action_net.load_state_dict(src.policy.action_net.state_dict())
    except RuntimeError as e:
        raise CheckpointError(f"{path}: its actor does not fit the configured network ({e})") from None
    return {"path": path, "kind": "checkpoint", "steps": int(card["training"]["steps"])}
