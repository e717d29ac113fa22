"""RLlib learner state <-> our data-only checkpoints (:mod:`hod.training.checkpoint`).

:class:`hod.training.rllib.module.MaskedActorCritic` names its parameters as SB3's ``MlpPolicy``
does and registers them in the same order, so the RLlib learner's state (module weights and the
Adam moments of its one optimizer, indexed by parameter position) is the state of an sb3-contrib
``MaskablePPO`` with the same network. :func:`save_learner_checkpoint` puts the learner's arrays
into such a model (:func:`hod.training.checkpoint.new_model`) and writes it with
:func:`hod.training.checkpoint.save_checkpoint`: the same archive, model card and pool snapshots as the
SB3 trainer's, so ``python -m hod.training.export``, ``python -m hod.training.evaluate``, the bots
and ``--resume`` read RLlib runs unchanged, and nothing is ever unpickled (RLlib's own checkpoints
hold pickles; we do not load them). :func:`restore_learner_state` goes the other way.
"""
from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Optional

import numpy as np

from hod.agents.model_card import CheckpointError
from hod.training.checkpoint import new_model, save_checkpoint
from hod.training.numpy_policy import NumpyPolicy

LEARNER, RL_MODULE, OPTIMIZER = "learner", "rl_module", "optimizer"


def _optimizer_key(module_id: str) -> str:
    return f"{module_id}_default_optimizer"


def learner_arrays(state: dict, module_id: str) -> tuple[dict[str, np.ndarray], dict[int, dict[str, Any]]]:
    """The module's weights ``{name: array}`` and its optimizer's per-parameter state
    ``{index: {"step": float, "exp_avg": array, "exp_avg_sq": array}}`` from
    ``LearnerGroup.get_state()``.

    Raises:
        KeyError: the state holds no such module or optimizer.
    """
    learner = state[LEARNER]
    weights = {k: np.asarray(v) for k, v in learner[RL_MODULE][module_id].items()}
    opt = learner[OPTIMIZER][_optimizer_key(module_id)]["state"]["state"]
    return weights, {int(i): dict(v) for i, v in opt.items()}


def save_learner_checkpoint(path: str | Path, state: dict, module_id: str, card: dict, steps: int,
                            pool: Optional[dict[str, NumpyPolicy]] = None) -> Path:
    """Write the learner's policy as a checkpoint of :mod:`hod.training.checkpoint` (atomically, with
    its side card); returns its path.

    Args:
        path: the ``.zip`` file. state: ``LearnerGroup.get_state()``. module_id: the module.
        card: the model card (``policy``, ``obs_size``, ``num_actions`` describe the network).
        steps: learner steps so far (stored as the step count). pool: past snapshots to store.

    Raises:
        CheckpointError: weights that do not fit the card's network.
    """
    import torch
    from gymnasium import spaces

    weights, opt = learner_arrays(state, module_id)
    space = spaces.Box(-np.inf, np.inf, (int(card["obs_size"]),), np.float32)
    model = new_model(card, space, source=str(path))
    try:
        model.policy.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in weights.items()}, strict=True)
        sd = model.policy.optimizer.state_dict()
        sd["state"] = {i: {k: (torch.tensor(float(v)) if k == "step" else torch.from_numpy(np.array(v)))
                           for k, v in s.items()} for i, s in opt.items()}
        model.policy.optimizer.load_state_dict(sd)
    except (RuntimeError, ValueError, KeyError) as e:
        raise CheckpointError(f"{path}: the learner's weights do not fit the network {card['policy']}: {e}") from e
    model.num_timesteps = int(steps)
    return save_checkpoint(model, path, card, pool)


def restore_learner_state(state: dict, module_id: str, model) -> dict:
    """A copy of ``state`` (``LearnerGroup.get_state()``) with the module's weights and Adam
    moments taken from ``model`` (a ``MaskablePPO`` of :func:`hod.training.checkpoint.load_checkpoint`),
    for ``LearnerGroup.set_state``.

    Raises:
        CheckpointError: the checkpoint's network does not fit the learner's (names or shapes).
    """
    out = copy.deepcopy(state)
    mod = out[LEARNER][RL_MODULE][module_id]
    sd = {k: v.detach().cpu().numpy() for k, v in model.policy.state_dict().items()}
    if set(sd) != set(mod) or any(np.shape(mod[k]) != sd[k].shape for k in sd):
        raise CheckpointError(f"the checkpoint's network {sorted((k, sd[k].shape) for k in sd)} does not fit the "
                              f"learner's {sorted((k, np.shape(v)) for k, v in mod.items())}")
    for k, v in sd.items():
        mod[k] = v.astype(np.asarray(mod[k]).dtype)
    opt = out[LEARNER][OPTIMIZER][_optimizer_key(module_id)]["state"]
    saved = model.policy.optimizer.state_dict()["state"]
    opt["state"] = {int(i): {k: (float(v) if k == "step" else v.detach().cpu().numpy()) for k, v in s.items()}
                    for i, s in saved.items()}
    return out
