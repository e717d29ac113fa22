"""Training checkpoints: one zip file of data only (JSON and ``.npz``), written atomically, that
carries its own model card. Loading one never unpickles anything and never runs code from it.

``NAME.zip`` holds exactly these members (:data:`CHECKPOINT_FORMAT`, version
:data:`CHECKPOINT_VERSION`):

* ``checkpoint.json``: the format and version, the step count and update counters, the
  observation space's dtype, the optimizer's scalar settings (``param_groups``) and the recent
  episode statistics (for the logs);
* ``model_card.json``: the model card (:mod:`hod.agents.model_card`), also written next to the
  archive as ``NAME.json`` for people and tools; the network is rebuilt from its ``policy``
  entry (``net_arch``, ``activation``), sizes and, for a state critic, its ``critic`` entry
  (:mod:`hod.training.critic`: the critic reads ``extra`` more columns than the actor);
* ``policy.npz``: ``policy.state_dict()`` of the ``MaskablePPO`` (actor, critic), one array per
  tensor;
* ``optimizer.npz``: the optimizer's per-parameter state tensors (Adam's moments and step
  counts), as ``<parameter index>/<name>``;
* ``observation_space.npz``: the bounds (``low``, ``high``) of the observation ``Box`` (the
  learner env's rows: ``obs_size`` columns, plus the critic's ``extra`` for a state critic);
* ``pool/<name>.npz``: the opponent pool's past snapshots (:class:`hod.training.pool.OpponentPool`),
  so that training resumes with the same pool.

Every size is checked before what it measures is read or built (the limits of
:mod:`hod.agents.model_card`; docs/training.md, "Limits of what is loaded"): the file, the
members' declared uncompressed sizes (``ZipInfo.file_size``), the JSON members, the card's
network (:data:`~hod.agents.model_card.MAX_PARAMETERS`) and every array's shape from its ``.npy``
header (:mod:`hod.training.npz`), compared with the card's network (:func:`policy_shapes`). Every
``.npz`` is then read with ``numpy.load(..., allow_pickle=False)`` (an object array is refused
from its header), the JSON with :mod:`json`; :func:`load_checkpoint` then builds a fresh
``MaskablePPO`` from the card and puts the arrays back with ``load_state_dict``. An archive with any other member is
refused, in particular the pickle-based archives ``MaskablePPO.save`` writes (the checkpoints of
earlier versions of this project): their ``data`` member is unpickled by SB3's ``load``, so a
crafted file would run its payload. They are refused with a message saying so, never opened.

The archive is assembled in memory and written, together with its side card, by
:func:`hod.core.atomic.atomic_write_many`: both complete and fsynced first, then renamed into
place back to back (the archive first, so the side card is never older than the archive), so a
reader never sees half a checkpoint and a kill leaves no temporary file behind for long.
"""
from __future__ import annotations

import io
import os
import zipfile
import zlib
from pathlib import Path
from typing import Any, Optional

import numpy as np

from hod.core.atomic import atomic_write_many, json_bytes

from hod.agents import model_card
from hod.agents.model_card import (ACTIVATIONS, MAX_FILE_BYTES, MAX_JSON_BYTES, MAX_LAYER_WIDTH, MAX_LAYERS,
                                   MAX_PARAMETERS, CheckpointError, check_network, parse_json, read_limited,
                                   validate_model_card)
from .critic import card_extra, policy_spec
from .npz import ArrayHeader, check_declared_sizes, check_member_count, npz_headers, read_arrays
from .numpy_policy import NumpyPolicy

CHECKPOINT_FORMAT = "house-of-decks-checkpoint"
CHECKPOINT_VERSION = 2   # 1: the pickle-based SB3 archives of earlier versions (refused)
META_MEMBER = "checkpoint.json"
MODEL_CARD_MEMBER = "model_card.json"
POLICY_MEMBER = "policy.npz"
OPTIMIZER_MEMBER = "optimizer.npz"
SPACE_MEMBER = "observation_space.npz"
POOL_PREFIX = "pool/"
MEMBERS = (META_MEMBER, MODEL_CARD_MEMBER, POLICY_MEMBER, OPTIMIZER_MEMBER, SPACE_MEMBER)
#: the members of an archive written by ``stable_baselines3``'s ``save`` (pickled ``data``)
SB3_MEMBERS = ("data", "policy.pth", "policy.optimizer.pth", "pytorch_variables.pth")
#: The most state arrays the optimizer may keep per parameter (Adam keeps 3: ``step``,
#: ``exp_avg``, ``exp_avg_sq``; with ``amsgrad`` 4): bounds ``optimizer.npz`` by the network's size.
MAX_OPTIMIZER_STATES = 4
# the limits (MAX_PARAMETERS, MAX_LAYER_WIDTH, MAX_LAYERS, MAX_FILE_BYTES, MAX_JSON_BYTES) are those
# of hod.agents.model_card, the one place the training configuration and every loader read them from
# (at call time: model_card.MAX_FILE_BYTES, so there is one value to change)
__all__ = ["ACTIVATIONS", "MAX_FILE_BYTES", "MAX_JSON_BYTES", "MAX_LAYER_WIDTH", "MAX_LAYERS", "MAX_PARAMETERS",
           "CheckpointError", "checkpoint_members", "load_checkpoint", "model_card_path", "new_model",
           "policy_shapes", "read_checkpoint", "save_checkpoint"]


def model_card_path(checkpoint: str | os.PathLike) -> Path:
    """Path of the side-car model card of a checkpoint or export (same stem, ``.json``)."""
    return Path(checkpoint).with_suffix(".json")


# ---- writing ------------------------------------------------------------------------------------
def _npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def _json_value(v: Any, what: str) -> Any:
    """``v`` as plain JSON (tuples become lists); TypeError for anything else."""
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return float(v)
    if isinstance(v, (list, tuple)):
        return [_json_value(x, what) for x in v]
    if isinstance(v, dict):
        return {str(k): _json_value(x, what) for k, x in v.items()}
    raise TypeError(f"{what}: a {type(v).__name__} cannot be stored in a data-only checkpoint")


def checkpoint_members(model, card: dict[str, Any],
                       pool_snapshots: Optional[dict[str, NumpyPolicy]] = None) -> dict[str, bytes]:
    """The members of the checkpoint archive of ``model`` (a MaskablePPO): ``{name: bytes}``.

    Raises:
        TypeError: an optimizer setting that is not plain data (a number, bool, str, None, list).
    """
    import torch

    policy = model.policy
    weights = {k: v.detach().cpu().numpy() for k, v in policy.state_dict().items()}
    opt = policy.optimizer.state_dict()
    opt_arrays: dict[str, np.ndarray] = {}
    opt_scalars: dict[str, dict[str, Any]] = {}
    for idx, state in opt["state"].items():
        for name, value in state.items():
            if "/" in name:
                raise TypeError(f"optimizer state key {name!r} cannot be stored")
            if isinstance(value, torch.Tensor):
                opt_arrays[f"{int(idx)}/{name}"] = value.detach().cpu().numpy()
            else:
                opt_scalars.setdefault(str(int(idx)), {})[name] = _json_value(value, f"optimizer state {name!r}")
    space = model.observation_space
    info_buffer = []
    for ep in list(model.ep_info_buffer or []):
        try:
            info_buffer.append(_json_value(dict(ep), "episode info"))
        except TypeError:
            pass   # statistics for the logs only
    meta = {
        "format": CHECKPOINT_FORMAT,
        "version": CHECKPOINT_VERSION,
        "num_timesteps": int(model.num_timesteps),
        "n_updates": int(getattr(model, "_n_updates", 0)),
        "episode_num": int(getattr(model, "_episode_num", 0)),
        "observation_dtype": str(np.dtype(space.dtype)),
        "optimizer": {
            "class": type(policy.optimizer).__name__,
            "param_groups": _json_value(opt["param_groups"], "optimizer param_groups"),
            "state_scalars": opt_scalars,
        },
        "ep_info_buffer": info_buffer,
    }
    members = {
        META_MEMBER: json_bytes(meta),
        MODEL_CARD_MEMBER: json_bytes(card),
        POLICY_MEMBER: _npz_bytes(weights),
        OPTIMIZER_MEMBER: _npz_bytes(opt_arrays),
        SPACE_MEMBER: _npz_bytes({"low": np.asarray(space.low), "high": np.asarray(space.high)}),
    }
    for name, pol in (pool_snapshots or {}).items():
        members[f"{POOL_PREFIX}{name}.npz"] = pol.to_bytes()
    return members


def save_checkpoint(model, path: str | os.PathLike, card: dict[str, Any],
                    pool_snapshots: Optional[dict[str, NumpyPolicy]] = None) -> Path:
    """Write ``model`` (a MaskablePPO) with ``card`` and the pool snapshots to ``path`` (``.zip``),
    atomically, with the side card ``path`` with suffix ``.json`` (format in the module docstring).
    Returns the checkpoint path.

    Raises:
        TypeError: an optimizer setting that is not plain data.
    """
    path = Path(path)
    if path.suffix != ".zip":
        path = path.with_suffix(".zip")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name, data in checkpoint_members(model, card, pool_snapshots).items():
            z.writestr(name, data)
    # the archive first, then its card, renamed back to back: the card is never older
    atomic_write_many([(path, buf.getvalue()), (model_card_path(path), json_bytes(card))])
    return path


# ---- reading ------------------------------------------------------------------------------------
def read_checkpoint(path: str | os.PathLike, game: Optional[str] = None, num_players: Optional[int] = None,
                    layout_version: Optional[int] | str = "current") -> tuple[bytes, dict]:
    """Read and check a checkpoint file (nothing is unpickled, nothing built); returns ``(zip bytes, card)``.

    Sizes are checked before what they measure is read: the file (at most
    :data:`~hod.agents.model_card.MAX_FILE_BYTES`), the members' declared uncompressed sizes
    (together at most ``MAX_FILE_BYTES``, each checked before any member is opened), the card
    (at most :data:`~hod.agents.model_card.MAX_JSON_BYTES`), the members the zip directory lists
    (at most :data:`~hod.agents.model_card.MAX_ZIP_MEMBERS`, counted before the directory is
    parsed) and the network it describes (at
    most :data:`~hod.agents.model_card.MAX_PARAMETERS` parameters, widths and layer count within
    their limits: :func:`hod.agents.model_card.check_network`).

    Raises:
        CheckpointError: missing file, over a limit (the limit is named), not a zip, truncated or
            corrupt (CRC), a pickle-based archive of ``stable_baselines3`` (earlier versions'
            checkpoints), a member that does not belong, no model card or a missing member, a card
            for another game / player count / layout version (see :func:`validate_model_card`),
            or a network this version does not build.
    """
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"{path}: no such checkpoint file")
    try:
        data = read_limited(path, model_card.MAX_FILE_BYTES, "MAX_FILE_BYTES", "checkpoint")
    except OSError as e:
        raise CheckpointError(f"{path}: the checkpoint cannot be read ({e})") from e
    # save_checkpoint writes no zip comment, so a whole file ends with the 22-byte end-of-central-
    # directory record; anything else was cut short (a truncated file may still look like a zip:
    # the npz members inside are zips themselves).
    if len(data) < 22 or data[-22:-18] != b"PK\x05\x06":
        raise CheckpointError(f"{path}: truncated or corrupt checkpoint (the archive does not end with its "
                              f"zip directory record)")
    try:   # before the directory is parsed (zipfile reads it whole)
        check_member_count(data, model_card.MAX_ZIP_MEMBERS, "MAX_ZIP_MEMBERS", str(path))
    except ValueError as e:
        raise CheckpointError(str(e)) from None
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            names = z.namelist()
            if any(n in names for n in SB3_MEMBERS):
                raise CheckpointError(
                    f"{path}: a pickle-based stable-baselines3 archive (member 'data' or '*.pth'), as "
                    f"earlier versions of this project wrote; refused: loading it would unpickle code from "
                    f"the file. Only data-only checkpoints ({CHECKPOINT_FORMAT} version {CHECKPOINT_VERSION}) "
                    f"are loaded; retrain, or re-export it with the version that wrote it "
                    f"(docs/training.md, 'Which files are safe to share')")
            try:   # before any member is opened (testzip reads them all)
                check_declared_sizes(z.infolist(), model_card.MAX_FILE_BYTES, "MAX_FILE_BYTES", str(path))
            except ValueError as e:
                raise CheckpointError(str(e)) from None
            bad = z.testzip()
            if bad is not None:
                raise CheckpointError(f"{path}: corrupt checkpoint (member {bad!r} fails its CRC check)")
            if MODEL_CARD_MEMBER not in names:
                raise CheckpointError(f"{path}: not a House of Decks checkpoint, or a damaged one (no {MODEL_CARD_MEMBER} inside)")
            foreign = [n for n in names if n not in MEMBERS and not _is_pool_member(n)]
            if foreign:
                shown = foreign[:5] + ([f"... {len(foreign) - 5:,} more"] if len(foreign) > 5 else [])
                raise CheckpointError(f"{path}: unexpected members {shown} in the checkpoint; a checkpoint "
                                      f"holds only {list(MEMBERS)} and {POOL_PREFIX}<name>.npz; refused")
            missing = [n for n in MEMBERS if n not in names]
            if missing:
                raise CheckpointError(f"{path}: not a complete House of Decks checkpoint (no {missing} inside)")
            card = parse_json(_member(z, MODEL_CARD_MEMBER, model_card.MAX_JSON_BYTES, "MAX_JSON_BYTES", path),
                              f"{path}: {MODEL_CARD_MEMBER}", model_card.MAX_JSON_BYTES)
    except CheckpointError:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError, KeyError,
            NotImplementedError, zlib.error) as e:   # zlib.error: a damaged compressed member
        raise CheckpointError(f"{path}: truncated or corrupt checkpoint ({type(e).__name__}: {e})") from e
    validate_model_card(card, str(path), game=game, num_players=num_players, layout_version=layout_version)
    check_network(card, str(path))
    return data, card


def _member(z: zipfile.ZipFile, name: str, limit: int, limit_name: str, path) -> bytes:
    """The bytes of member ``name``, read only once its declared size is within ``limit``.

    Raises:
        CheckpointError: a declared size over ``limit`` (named ``limit_name``).
    """
    size = z.getinfo(name).file_size
    if size > limit:
        raise CheckpointError(f"{path}: member {name!r} declares {size:,} bytes uncompressed; the limit is "
                              f"{limit:,} bytes ({limit_name}, hod.agents.model_card); refused before reading it")
    return z.read(name)


def _is_pool_member(name: str) -> bool:
    stem = name[len(POOL_PREFIX):-4] if name.startswith(POOL_PREFIX) and name.endswith(".npz") else ""
    return bool(stem) and "/" not in stem


def _npz(z: zipfile.ZipFile, name: str, path, what: str = "") -> tuple[bytes, dict[str, ArrayHeader]]:
    """The bytes of ``.npz`` member ``name`` and its array headers (:func:`hod.training.npz.npz_headers`):
    nothing of its arrays is read yet.

    Raises:
        CheckpointError: not an ``.npz`` of plain arrays (object arrays are pickles: refused from
            their header), or one whose members declare more than ``MAX_FILE_BYTES``.
    """
    what = what or f"member {name!r}"
    data = _member(z, name, model_card.MAX_FILE_BYTES, "MAX_FILE_BYTES", path)
    try:
        return data, npz_headers(data, model_card.MAX_FILE_BYTES, "MAX_FILE_BYTES", f"{path}: {what}")
    except ValueError as e:
        raise CheckpointError(f"{path}: {what} is not an archive of plain arrays (pickled objects are refused): "
                              f"{e}") from e


def _arrays(data: bytes, headers: dict[str, ArrayHeader], name: str, path) -> dict[str, np.ndarray]:
    """The arrays of an ``.npz`` member whose headers were checked; numbers only."""
    for k, h in headers.items():
        if h.dtype.kind not in "biuf":
            raise CheckpointError(f"{path}: member {name!r} array {k!r} has dtype {h.dtype}; only numbers are loaded")
    try:
        return read_arrays(data, source=f"{path}: member {name!r}")
    except ValueError as e:
        raise CheckpointError(f"{path}: member {name!r} is not an archive of plain arrays (pickled objects "
                              f"are refused): {e}") from e


def _read_json(z: zipfile.ZipFile, name: str, path) -> dict:
    obj = parse_json(_member(z, name, model_card.MAX_JSON_BYTES, "MAX_JSON_BYTES", path), f"{path}: member {name!r}",
                     model_card.MAX_JSON_BYTES)
    if not isinstance(obj, dict):
        raise CheckpointError(f"{path}: member {name!r} is not a JSON object")
    return obj


def policy_shapes(card: dict) -> dict[str, tuple[int, ...]]:
    """``{name: shape}`` of the ``policy.state_dict()`` of the network ``card`` describes (SB3's
    ``MlpPolicy`` with a separate actor and critic, in its parameter order): for each of
    ``mlp_extractor.policy_net`` and ``mlp_extractor.value_net`` the Linear layers ``2k``
    (``weight`` (out, in), ``bias`` (out,)) of the chain ``obs_size -> net_arch``, then
    ``action_net`` (num_actions, last) and ``value_net`` (1, last); a state critic's
    ``value_net`` chain starts at ``obs_size + extra`` (:func:`hod.training.critic.card_extra`).
    Computed from the card alone (call :func:`hod.agents.model_card.check_network` first).

    Raises:
        CheckpointError: a ``critic`` entry that does not fit the installed game's global state."""
    dims = [int(card["obs_size"]), *(int(w) for w in card["policy"]["net_arch"])]
    extra = card_extra(card, "model card")
    out: dict[str, tuple[int, ...]] = {}
    for net in ("policy_net", "value_net"):
        chain = dims if net == "policy_net" else [dims[0] + extra, *dims[1:]]
        for i, (a, b) in enumerate(zip(chain, chain[1:])):
            out[f"mlp_extractor.{net}.{2 * i}.weight"] = (b, a)
            out[f"mlp_extractor.{net}.{2 * i}.bias"] = (b,)
    for head, width in (("action_net", int(card["num_actions"])), ("value_net", 1)):
        out[f"{head}.weight"] = (width, dims[-1])
        out[f"{head}.bias"] = (width,)
    return out


def _check_policy_headers(headers: dict[str, ArrayHeader], card: dict, path) -> None:
    want = policy_shapes(card)
    have = {k: h.shape for k, h in headers.items()}
    if have != want:
        wrong = sorted(k for k in set(have) | set(want) if have.get(k) != want.get(k))
        raise CheckpointError(f"{path}: the stored weights do not fit the network {card['policy']} of the card "
                              f"(obs_size {card['obs_size']}, num_actions {card['num_actions']}): arrays {wrong[:6]} "
                              f"have shapes {[have.get(k) for k in wrong[:6]]}, the card's network "
                              f"{[want.get(k) for k in wrong[:6]]}; refused before reading them")


def _check_optimizer_headers(headers: dict[str, ArrayHeader], card: dict, path) -> None:
    """Each optimizer array ``<index>/<name>`` belongs to a parameter of the card's network and has
    its shape or is a scalar; at most :data:`MAX_OPTIMIZER_STATES` per parameter."""
    shapes = list(policy_shapes(card).values())
    per: dict[int, int] = {}
    for key, h in headers.items():
        idx, _, name = key.partition("/")
        if not idx.isdigit() or not name or int(idx) >= len(shapes) or h.shape not in ((), shapes[int(idx)]):
            raise CheckpointError(f"{path}: {OPTIMIZER_MEMBER} array {key!r} of shape {h.shape} does not belong to "
                                  f"the card's network; legal: '<parameter index 0..{len(shapes) - 1}>/<name>' of "
                                  f"the parameter's shape, or a scalar")
        per[int(idx)] = per.get(int(idx), 0) + 1
        if per[int(idx)] > MAX_OPTIMIZER_STATES:
            raise CheckpointError(f"{path}: {OPTIMIZER_MEMBER} holds more than {MAX_OPTIMIZER_STATES} arrays for "
                                  f"parameter {idx} (MAX_OPTIMIZER_STATES)")


def _policy_kwargs(card: dict, path) -> dict:
    """``policy_kwargs`` of the network the card describes (checked: it will be built)."""
    from torch import nn

    check_network(card, str(path))
    pol = card["policy"]
    return dict(net_arch=dict(pi=list(pol["net_arch"]), vf=list(pol["net_arch"])),
                activation_fn={"tanh": nn.Tanh, "relu": nn.ReLU}[pol["activation"]])


def _policy(card: dict, path) -> tuple[Any, dict]:
    """``(policy, policy_kwargs)`` of ``MaskablePPO`` for the card: ``MlpPolicy``, or the state
    critic's policy (:func:`hod.training.critic.policy_spec`) when the card has a ``critic`` entry."""
    kwargs = _policy_kwargs(card, path)
    if card_extra(card, str(path)):
        return policy_spec("state", int(card["obs_size"]), kwargs)
    return "MlpPolicy", kwargs


def _int_field(meta: dict, key: str, path) -> int:
    v = meta.get(key, 0)
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise CheckpointError(f"{path}: {META_MEMBER} field {key!r}={v!r} must be an integer >= 0")
    return v


def _optimizer_state(meta: dict, arrays: dict[str, np.ndarray], path) -> dict:
    """The optimizer ``state_dict`` rebuilt from its JSON settings and its arrays."""
    import torch

    opt = meta.get("optimizer")
    groups = opt.get("param_groups") if isinstance(opt, dict) else None
    scalars = opt.get("state_scalars", {}) if isinstance(opt, dict) else None
    if not isinstance(groups, list) or not all(isinstance(g, dict) and isinstance(g.get("params"), list)
                                               for g in groups) or not isinstance(scalars, dict):
        raise CheckpointError(f"{path}: {META_MEMBER} lacks the optimizer's param_groups")
    param_groups = []
    for g in groups:
        # JSON has no tuples; torch's optimizers take tuples (Adam's betas)
        param_groups.append({k: (tuple(v) if isinstance(v, list) and k != "params" else v) for k, v in g.items()})
    state: dict[int, dict[str, Any]] = {}
    for key, a in arrays.items():
        idx, _, name = key.partition("/")
        if not idx.isdigit() or not name:
            raise CheckpointError(f"{path}: {OPTIMIZER_MEMBER} has an array named {key!r}")
        state.setdefault(int(idx), {})[name] = torch.from_numpy(np.array(a))
    for idx, values in scalars.items():
        if not str(idx).isdigit() or not isinstance(values, dict):
            raise CheckpointError(f"{path}: {META_MEMBER} has bad optimizer state scalars")
        state.setdefault(int(idx), {}).update(values)
    return {"state": state, "param_groups": param_groups}


def new_model(card: dict, observation_space, device: str = "cpu", source: str = "model card", **ppo_kwargs: Any):
    """A fresh ``MaskablePPO`` (no env attached) with the network the card describes (``policy``,
    ``num_actions``) on ``observation_space`` (a ``Box``): what :func:`load_checkpoint` fills with a
    checkpoint's arrays, and what the RLlib trainer fills with its learner's
    (:mod:`hod.training.rllib.bridge`) to write the same checkpoints.

    Raises:
        CheckpointError: a network the card does not describe (named after ``source``).
    """
    from gymnasium import spaces
    from sb3_contrib import MaskablePPO

    policy, kwargs = _policy(card, source)
    model = MaskablePPO(policy, None, policy_kwargs=kwargs, device=device, _init_setup_model=False, **ppo_kwargs)
    model.observation_space, model.action_space = observation_space, spaces.Discrete(card["num_actions"])
    model.n_envs = 1
    model._setup_model()
    return model


def load_checkpoint(path: str | os.PathLike, game: Optional[str] = None, num_players: Optional[int] = None,
                    layout_version: Optional[int] | str = "current", env=None, device: str = "cpu",
                    **ppo_kwargs: Any):
    """Load a checkpoint written by :func:`save_checkpoint`, after validating it, without unpickling.

    A fresh ``MaskablePPO`` is built from the card (network, sizes) and the stored observation
    bounds, or on ``env``; its policy and optimizer state, step count and update counters are
    then put back from the archive's arrays and JSON.

    Args:
        path: the ``.zip`` file.
        game: the game it must be for (None: any).
        num_players: a table size it must have been trained on (None: any).
        layout_version: expected observation layout version (``"current"``: the installed game's).
        env: VecEnv to attach (for further training); None for inference.
        device: torch device.
        ppo_kwargs: ``MaskablePPO`` hyperparameters (``learning_rate``, ``n_steps``, ...) of the model
            built (None: SB3's defaults; they matter only for further training).

    Returns:
        ``(model, card, pool_snapshots)``: the ``MaskablePPO``, the card (dict) and
        ``{name: NumpyPolicy}`` of the stored opponent pool.

    Raises:
        CheckpointError: see :func:`read_checkpoint`; also a member that is not plain data (an
            object array, i.e. a pickle, or bad JSON), another checkpoint format or version, a
            network the card does not describe, weights or optimizer state that do not fit it,
            or an ``env`` whose spaces differ from the card's.
    """
    from gymnasium import spaces
    from sb3_contrib import MaskablePPO

    data, card = read_checkpoint(path, game, num_players, layout_version)   # the card's network within the limits
    obs_size, num_actions = card["obs_size"], card["num_actions"]
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        meta = _read_json(z, META_MEMBER, path)
        if meta.get("format") != CHECKPOINT_FORMAT or meta.get("version") != CHECKPOINT_VERSION:
            raise CheckpointError(f"{path}: checkpoint format {meta.get('format')!r} version {meta.get('version')!r} "
                                  f"is not supported; this version reads {CHECKPOINT_FORMAT!r} version {CHECKPOINT_VERSION}")
        # every array's shape from its .npy header, checked against the card, before any is read
        policy_npz = _npz(z, POLICY_MEMBER, path)
        _check_policy_headers(policy_npz[1], card, path)
        opt_npz = _npz(z, OPTIMIZER_MEMBER, path)
        _check_optimizer_headers(opt_npz[1], card, path)
        space_npz = _npz(z, SPACE_MEMBER, path)
        pool_npz = {name: _npz(z, name, path, f"pool snapshot {name!r}") for name in z.namelist()
                    if _is_pool_member(name)}
        total = sum(h.size * h.dtype.itemsize for _, headers in [policy_npz, opt_npz, space_npz, *pool_npz.values()]
                    for h in headers.values())
        if total > model_card.MAX_FILE_BYTES:
            raise CheckpointError(f"{path}: the checkpoint's arrays declare {total:,} bytes together; the limit is "
                                  f"{model_card.MAX_FILE_BYTES:,} bytes (MAX_FILE_BYTES, hod.agents.model_card); refused before "
                                  f"reading them")
        weights = _arrays(*policy_npz, POLICY_MEMBER, path)
        opt_arrays = _arrays(*opt_npz, OPTIMIZER_MEMBER, path)
        bounds = _arrays(*space_npz, SPACE_MEMBER, path)
        pool: dict[str, NumpyPolicy] = {}
        for name, (member, _) in pool_npz.items():
            try:
                pool[name[len(POOL_PREFIX):-4]] = NumpyPolicy.from_bytes(member)
            except ValueError as e:
                raise CheckpointError(f"{path}: pool snapshot {name!r} is unreadable (pickled objects are "
                                      f"refused): {e}") from e
    policy, policy_kwargs = _policy(card, path)
    width = obs_size + card_extra(card, path)   # the rows the model reads (the critic's extra columns too)
    steps = _int_field(meta, "num_timesteps", path)
    try:
        dtype = np.dtype(str(meta.get("observation_dtype", "float32")))
        if dtype.kind != "f":
            raise TypeError(f"dtype {dtype}")
        low, high = bounds["low"], bounds["high"]
        if low.shape != (width,) or high.shape != (width,):
            raise ValueError(f"bounds of shape {low.shape}/{high.shape}")
        obs_space = spaces.Box(low.astype(dtype), high.astype(dtype), dtype=dtype)
    except (TypeError, ValueError, KeyError) as e:
        raise CheckpointError(f"{path}: the stored observation space does not fit the card's obs_size "
                              f"{obs_size}: {e}") from e
    if env is not None:
        shape, n = tuple(env.observation_space.shape), getattr(env.action_space, "n", None)
        if shape != (width,) or n != num_actions:
            raise CheckpointError(f"{path}: the policy takes ({width},)/{num_actions} observations/actions, "
                                  f"but the environment has {shape}/{n}")
        model = MaskablePPO(policy, env, policy_kwargs=policy_kwargs, device=device, **ppo_kwargs)
    else:
        model = new_model(card, obs_space, device, path, **ppo_kwargs)
    import torch

    try:
        model.policy.load_state_dict({k: torch.from_numpy(np.array(a)) for k, a in weights.items()}, strict=True)
        model.policy.optimizer.load_state_dict(_optimizer_state(meta, opt_arrays, path))
    except (RuntimeError, ValueError, KeyError, TypeError, IndexError) as e:
        raise CheckpointError(f"{path}: the stored weights or optimizer state do not fit the network "
                              f"{card['policy']} ({type(e).__name__}: {e})") from e
    model.policy.to(model.device)
    model.num_timesteps = steps
    model._n_updates = _int_field(meta, "n_updates", path)
    model._episode_num = _int_field(meta, "episode_num", path)
    infos = meta.get("ep_info_buffer")
    if isinstance(infos, list) and all(isinstance(e, dict) for e in infos):
        from collections import deque

        model.ep_info_buffer = deque(infos, maxlen=model._stats_window_size)
        model.ep_success_buffer = deque(maxlen=model._stats_window_size)
    return model, card, pool
