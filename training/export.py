"""Export a checkpoint's policy to ONNX: ``python -m hod.training.export CHECKPOINT [--out DIR] [--name NAME]``.

Writes ``DIR/NAME.onnx`` and ``DIR/NAME.json`` (its model card), atomically. Defaults: ``DIR``
is the checkpoint's folder, ``NAME`` is ``<game>_ppo`` (the name the shipped-opponent registry
looks for in ``agents/opponents/``).

The graph (opset :data:`OPSET`, batch dimension dynamic):

* inputs ``observation`` float32 [B, obs_size] and ``action_mask`` int8 [B, num_actions]
  (1 = legal; the graph tests ``mask != 0``);
* outputs ``action`` int64 [B], the argmax of the masked logits (always a legal action when the
  mask allows any), and ``logits`` float32 [B, num_actions], the actor's logits with illegal
  actions set to -1e8 (as sb3-contrib's ``MaskableCategorical`` does).

The mask is applied inside the graph, so a consumer cannot forget it. The model card (schema in
:mod:`hod.agents.model_card`, plus an ``onnx`` entry) is also stored in the ONNX file's metadata under
the key ``model_card``, so the ``.onnx`` file alone describes itself.
:class:`hod.agents.onnx_policy.OnnxPolicy` runs it with onnxruntime and numpy only.
"""
from __future__ import annotations

import argparse
import copy
import hashlib
import io
import json
import sys
import warnings
from pathlib import Path
from typing import Optional

import numpy as np

from hod.agents.model_card import CheckpointError
from hod.core.atomic import atomic_write_bytes, atomic_write_json
from hod.core.errors import ConfigError

from .checkpoint import load_checkpoint

OPSET = 17
INPUTS = ("observation", "action_mask")
OUTPUTS = ("action", "logits")
METADATA_KEY = "model_card"


def check_name(name: object) -> str:
    """Return ``name``, the file stem of an export, if it names a file inside the output folder.

    Raises:
        ConfigError: not a non-empty string, or one holding a path separator (``/``, ``\\``) or
            ``..`` (the files would land outside ``--out``); the message names the legal values.
    """
    if not isinstance(name, str) or not name.strip() or "/" in name or "\\" in name or ".." in name \
            or name.strip() == ".":
        raise ConfigError(f"--name {name!r}: not a file name; legal values: a plain file stem without '/', '\\' "
                          f"or '..' (e.g. tapeo_ppo), the files are written in --out")
    return name


def check_checkpoint_path(path: str | Path) -> Path:
    """Return ``path`` if it is a file in zip format, what a training checkpoint is.

    Raises:
        CheckpointError: naming what was expected (a ``.zip`` training checkpoint written by
            ``python -m hod.training.train``) and what was found: nothing, a folder, an ONNX
            export, or a file that is not a zip archive.
    """
    import zipfile

    path = Path(path)
    expected = "expected a .zip training checkpoint written by python -m hod.training.train"
    if not path.exists():
        raise CheckpointError(f"{path}: no such file; {expected}")
    if path.is_dir():
        raise CheckpointError(f"{path}: is a folder; {expected} (e.g. {path / 'checkpoints' / 'latest.zip'})")
    if not zipfile.is_zipfile(path):
        if path.suffix.lower() == ".onnx":
            found = "an ONNX export (already exported; play it with hod.agents.onnx_policy.OnnxPolicy)"
        else:
            found = "a file that is not a zip archive"
        raise CheckpointError(f"{path}: found {found}; {expected}")
    return path


def export_onnx(checkpoint: str | Path, out_dir: Optional[str | Path] = None, name: Optional[str] = None,
                opset: int = OPSET, check_samples: int = 256) -> tuple[Path, Path]:
    """Export the policy of ``checkpoint`` (see the module docstring); returns ``(onnx path, card path)``.

    After writing, the export is checked: onnx's model checker, then onnxruntime and torch must
    pick the same actions on ``check_samples`` random observations with random masks.

    Raises:
        CheckpointError: not a zip file (:func:`check_checkpoint_path`: a folder, an ONNX export...),
            an unusable checkpoint (:func:`hod.training.checkpoint.load_checkpoint`), or an
            export that fails its check.
        ConfigError: a ``name`` with a path separator or ``..`` (:func:`check_name`).
    """
    import onnx
    import torch

    from .policy_io import actor_module

    if opset < 14:
        raise ValueError(f"opset={opset} is too old; use 14 or more")
    if name is not None:
        check_name(name)
    checkpoint = check_checkpoint_path(checkpoint)
    model, card, _ = load_checkpoint(checkpoint)
    obs_size, num_actions = card["obs_size"], card["num_actions"]
    module = actor_module(model.policy).eval()
    dummy = (torch.zeros(1, obs_size, dtype=torch.float32), torch.ones(1, num_actions, dtype=torch.int8))
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # the TorchScript exporter (no onnxscript needed)
        torch.onnx.export(
            module, dummy, buf, dynamo=False, input_names=list(INPUTS), output_names=list(OUTPUTS),
            dynamic_axes={k: {0: "batch"} for k in INPUTS + OUTPUTS}, opset_version=opset,
        )
    proto = onnx.load_from_string(buf.getvalue())
    name = name or f"{card['game']}_ppo"
    out_dir = Path(out_dir) if out_dir is not None else checkpoint.parent
    onnx_path = out_dir / f"{name}.onnx"
    card = copy.deepcopy(card)
    card["onnx"] = {
        "file": onnx_path.name,
        "opset": opset,
        "inputs": {"observation": ["batch", obs_size, "float32"], "action_mask": ["batch", num_actions, "int8"]},
        "outputs": {"action": ["batch", "int64"], "logits": ["batch", num_actions, "float32"]},
        "source_checkpoint": checkpoint.name,
    }
    del proto.metadata_props[:]
    entry = proto.metadata_props.add()
    entry.key, entry.value = METADATA_KEY, json.dumps(card)
    proto.producer_name = "house-of-decks-rl hod.training.export"
    onnx.checker.check_model(proto)
    data = proto.SerializeToString()
    _check_against_torch(data, module, obs_size, num_actions, check_samples)
    card["onnx"]["sha256"] = hashlib.sha256(data).hexdigest()
    atomic_write_bytes(onnx_path, data)
    card_file = atomic_write_json(onnx_path.with_suffix(".json"), card)
    return onnx_path, card_file


def _check_against_torch(data: bytes, module, obs_size: int, num_actions: int, samples: int) -> None:
    import onnxruntime as ort
    import torch

    if samples <= 0:
        return
    rng = np.random.default_rng(0)
    obs = rng.random((samples, obs_size), dtype=np.float32)
    mask = (rng.random((samples, num_actions)) < 0.5).astype(np.int8)
    mask[np.arange(samples), rng.integers(num_actions, size=samples)] = 1
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    a_onnx, _ = sess.run(list(OUTPUTS), {"observation": obs, "action_mask": mask})
    with torch.no_grad():
        a_torch, _ = module(torch.as_tensor(obs), torch.as_tensor(mask))
    if not np.array_equal(a_onnx, a_torch.numpy()):
        raise CheckpointError("the ONNX export and the torch policy disagree on random inputs; export aborted")


def main(argv: Optional[list[str]] = None) -> int:
    """Entry point of ``python -m hod.training.export``; returns the exit status: 0, or 2 with a
    one-line ``error: ...`` for an unusable checkpoint, a bad ``--name`` or ``--opset``."""
    p = argparse.ArgumentParser(prog="python -m hod.training.export",
                                description="Export a training checkpoint's policy to ONNX with its model card.")
    p.add_argument("checkpoint", help="checkpoint .zip written by hod.training.train")
    p.add_argument("--out", help="output folder (default: the checkpoint's folder)")
    p.add_argument("--name", help="file stem (default: <game>_ppo)")
    p.add_argument("--opset", type=int, default=OPSET, help="ONNX opset (>= 14)")
    args = p.parse_args(argv)
    try:
        onnx_path, model_card_path = export_onnx(args.checkpoint, args.out, args.name, args.opset)
    except (CheckpointError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {onnx_path} and {model_card_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
