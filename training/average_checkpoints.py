"""Average the policy weights of same-shaped checkpoints (stochastic weight averaging, SWA):
``python -m hod.training.average_checkpoints A.zip B.zip [C.zip ...] --out OUT.zip``.

Late in a PPO run the policy oscillates from checkpoint to checkpoint around its level (Tapeo
league round 3: two checkpoints 200k steps apart differed by 11 points on one row); the mean of
the last few checkpoints' weights (Izmailov et al. 2018, "Averaging Weights Leads to Wider Optima
and Better Generalization") is one network at the centre of that oscillation instead of one
sample of it. It is meaningful for checkpoints of one run taken close together (a low learning
rate), which share a basin; nothing here can check that, so the caller chooses the checkpoints.

What is written (:func:`average_checkpoints`), one data-only checkpoint (format of
:mod:`hod.training.checkpoint`), atomically with its side card:

* ``policy.npz``: every floating-point tensor of ``policy.state_dict()`` (actor and critic) the
  arithmetic mean over the inputs, computed in float64 and stored in the tensor's own dtype;
  tensors of any other dtype must be equal in every input (else refused);
* everything else (optimizer state, step count, observation bounds, the pool's snapshots) from
  the *base*: the input with the most steps (the last such one given, on a tie), so that
  ``--resume OUT.zip`` continues from the base's step count;
* the card: the base's, with ``training.averaged_from`` = ``[{"path", "steps"}, ...]`` (the inputs
  in the order given) and ``evaluation`` emptied (the trainer's evaluations were of the base
  alone, not of the average).

The inputs must agree on the game, table sizes, observation layout and size, observation encoder,
action count, network (``policy``: ``net_arch``, ``activation``), observation bounds and the
state dict's names, shapes and dtypes; every input is read with
:func:`hod.training.checkpoint.load_checkpoint` (validated, nothing unpickled).
"""
from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from hod.agents.model_card import CheckpointError
from hod.core.games import game_names, get_game

from .checkpoint import load_checkpoint, save_checkpoint

#: Card entries every input must share (besides the state dict's shapes and the observation bounds).
SAME_KEYS = ("game", "player_counts", "obs_layout_version", "obs_size", "obs_encoder", "num_actions", "policy")


def average_checkpoints(paths: Sequence[str | Path], out: str | Path, game: Optional[str] = None) -> Path:
    """Write to ``out`` (``.zip``) the checkpoint whose policy weights are the mean of ``paths``'
    (module docstring: what is averaged, what comes from the base, the card). Returns the path
    written.

    Args:
        paths: two or more checkpoint ``.zip`` files written by ``hod.training.train``, distinct.
        out: the checkpoint to write; its folder must exist; not one of ``paths``.
        game: the game every input must be for (None: any, but all the same); one of
            :func:`hod.core.games.game_names`.

    Raises:
        ConfigError (a ValueError): ``game`` not a known game (the legal ones named), checked
            before any input is read.
        ValueError: fewer than two inputs, an input given twice, ``out`` one of the inputs or not
            ending ``.zip``.
        CheckpointError: an unreadable input (:func:`~hod.training.checkpoint.load_checkpoint`'s
            checks), or inputs that differ in a :data:`SAME_KEYS` entry, the observation bounds, or
            the state dict's names, shapes or dtypes, or in a non-floating tensor.
    """
    if game is not None:
        get_game(game)   # an unknown game: ConfigError naming the legal ones, not "trained for game X, not Y"
    paths = [Path(p) for p in paths]
    if len(paths) < 2:
        raise ValueError(f"{len(paths)} checkpoint(s) given; legal: two or more to average")
    resolved = [p.resolve() for p in paths]
    if len(set(resolved)) != len(resolved):
        raise ValueError("a checkpoint is given twice; legal: distinct checkpoints")
    out = Path(out)
    if out.suffix != ".zip":
        raise ValueError(f"out={str(out)!r}; legal: a path ending .zip")
    if out.resolve() in resolved:
        raise ValueError(f"out={str(out)!r} is one of the inputs; legal: a new path")

    loaded = [load_checkpoint(p, game=game) for p in paths]
    first_card = loaded[0][1]
    weights = []
    for p, (model, card, _) in zip(paths, loaded):
        for k in SAME_KEYS:
            if card.get(k) != first_card.get(k):
                raise CheckpointError(f"{p}: {k} = {card.get(k)!r}, but {paths[0]} has {first_card.get(k)!r}; "
                                      f"legal: checkpoints of the same network")
        low, high = np.asarray(model.observation_space.low), np.asarray(model.observation_space.high)
        m0 = loaded[0][0].observation_space
        if not (np.array_equal(low, np.asarray(m0.low)) and np.array_equal(high, np.asarray(m0.high))):
            raise CheckpointError(f"{p}: observation bounds differ from {paths[0]}'s")
        weights.append({k: v.detach().cpu().numpy() for k, v in model.policy.state_dict().items()})
    names = list(weights[0])
    for p, w in zip(paths, weights):
        if list(w) != names or any(w[k].shape != weights[0][k].shape or w[k].dtype != weights[0][k].dtype
                                   for k in names):
            raise CheckpointError(f"{p}: its policy tensors (names, shapes, dtypes) differ from {paths[0]}'s")

    averaged = {}
    for k in names:
        ref = weights[0][k]
        if np.issubdtype(ref.dtype, np.floating):
            averaged[k] = np.mean(np.stack([w[k].astype(np.float64) for w in weights]), axis=0).astype(ref.dtype)
        else:
            for p, w in zip(paths, weights):
                if not np.array_equal(w[k], ref):
                    raise CheckpointError(f"{p}: tensor {k!r} ({ref.dtype}) differs from {paths[0]}'s and cannot "
                                          f"be averaged")
            averaged[k] = ref

    steps = [int(m.num_timesteps) for m, _, _ in loaded]
    base = max(range(len(paths)), key=lambda i: (steps[i], i))
    model, card, pool = loaded[base]
    import torch

    model.policy.load_state_dict({k: torch.from_numpy(np.array(a)) for k, a in averaged.items()}, strict=True)
    card = copy.deepcopy(card)
    card.setdefault("training", {})["averaged_from"] = [{"path": str(p), "steps": s} for p, s in zip(paths, steps)]
    if "evaluation" in card:
        card["evaluation"] = []
    return save_checkpoint(model, out, card, pool)


def main(argv: Optional[list[str]] = None) -> int:
    """Entry point of ``python -m hod.training.average_checkpoints``; returns 0, or 2 with a
    one-line ``error: ...`` for unusable or mismatched inputs, an unknown ``--game`` (the legal
    games named) or a bad ``--out``."""
    p = argparse.ArgumentParser(prog="python -m hod.training.average_checkpoints",
                                description="Average the policy weights of same-shaped training checkpoints (SWA).")
    p.add_argument("checkpoints", nargs="+", help="two or more checkpoint .zip files of one run")
    p.add_argument("--out", required=True, help="checkpoint .zip to write (not one of the inputs)")
    p.add_argument("--game", help=f"the game every input must be for (one of {', '.join(game_names())})")
    args = p.parse_args(argv)
    try:
        path = average_checkpoints(args.checkpoints, args.out, args.game)
    except (CheckpointError, ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {path} (the mean of {len(args.checkpoints)} checkpoints' policy weights)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
