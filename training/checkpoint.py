"""Training checkpoints: one zip file of data only (JSON and ``.npz``), written atomically, that
carries its own model card. Loading one never unpickles anything and never runs code from it.

``NAME.zip`` holds exactly these members (:data:`CHECKPOINT_FORMAT`, version
:data:`CHECKPOINT_VERSION`):

* ``checkpoint.json``: the format and version, the step count and update counters, the
  observation space's dtype, the optimizer's scalar settings (``param_groups``) and the recent
  episode statistics (for the logs);
* ``model_card.json``: the model card (:mod:`hod.agents.model_card`), also written next to the
  archive as ``NAME.json`` for people and tools; the network is rebuilt from its ``policy``
  entry (``net_arch``, ``activation``) and sizes;
* ``policy.npz``: ``policy.state_dict()`` of the ``MaskablePPO`` (actor, critic), one array per
  tensor;
* ``optimizer.npz``: the optimizer's per-parameter state tensors (Adam's moments and step
  counts), as ``<parameter index>/<name>``;
* ``observation_space.npz``: the bounds (``low``, ``high``) of the observation ``Box``;
* ``pool/<name>.npz``: the opponent pool's past snapshots (:class:`hod.training.pool.OpponentPool`),
  so that training resumes with the same pool.

Every ``.npz`` is read with ``numpy.load(..., allow_pickle=False)`` (an object array is refused),
the JSON with :mod:`json`; :func:`load_checkpoint` then builds a fresh ``MaskablePPO`` from the
card and puts the arrays back with ``load_state_dict``. An archive with any other member is
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
import json
import os
import zipfile
import zlib
from pathlib import Path
from typing import Any, Optional

import numpy as np

from hod.core.atomic import atomic_write_many, json_bytes

from hod.agents.model_card import CheckpointError, validate_model_card
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
ACTIVATIONS = ("tanh", "relu")
MAX_LAYER_WIDTH = 1 << 16
MAX_LAYERS = 32


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

    Raises:
        CheckpointError: missing file, not a zip, truncated or corrupt (CRC), a pickle-based
            archive of ``stable_baselines3`` (earlier versions' checkpoints), a member that does not
            belong, no model card or a missing member, or a card for another game / player count /
            layout version (see :func:`validate_model_card`).
    """
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"{path}: no such checkpoint file")
    data = path.read_bytes()
    # save_checkpoint writes no zip comment, so a whole file ends with the 22-byte end-of-central-
    # directory record; anything else was cut short (a truncated file may still look like a zip:
    # the npz members inside are zips themselves).
    if len(data) < 22 or data[-22:-18] != b"PK\x05\x06":
        raise CheckpointError(f"{path}: truncated or corrupt checkpoint (the archive does not end with its "
                              f"zip directory record)")
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
            bad = z.testzip()
            if bad is not None:
                raise CheckpointError(f"{path}: corrupt checkpoint (member {bad!r} fails its CRC check)")
            if MODEL_CARD_MEMBER not in names:
                raise CheckpointError(f"{path}: not a House of Decks checkpoint, or a damaged one (no {MODEL_CARD_MEMBER} inside)")
            foreign = [n for n in names if n not in MEMBERS and not _is_pool_member(n)]
            if foreign:
                raise CheckpointError(f"{path}: unexpected members {foreign} in the checkpoint; a checkpoint "
                                      f"holds only {list(MEMBERS)} and {POOL_PREFIX}<name>.npz; refused")
            missing = [n for n in MEMBERS if n not in names]
            if missing:
                raise CheckpointError(f"{path}: not a complete House of Decks checkpoint (no {missing} inside)")
            card = json.loads(z.read(MODEL_CARD_MEMBER).decode("utf-8"))
    except CheckpointError:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError, KeyError,
            NotImplementedError, zlib.error) as e:   # zlib.error: a damaged compressed member
        raise CheckpointError(f"{path}: truncated or corrupt checkpoint ({type(e).__name__}: {e})") from e
    validate_model_card(card, str(path), game=game, num_players=num_players, layout_version=layout_version)
    return data, card


def _is_pool_member(name: str) -> bool:
    stem = name[len(POOL_PREFIX):-4] if name.startswith(POOL_PREFIX) and name.endswith(".npz") else ""
    return bool(stem) and "/" not in stem


def _read_npz(z: zipfile.ZipFile, name: str, path) -> dict[str, np.ndarray]:
    """The arrays of member ``name`` (an ``.npz``), read without pickle.

    Raises:
        CheckpointError: not an ``.npz`` of plain arrays (object arrays are pickles: refused).
    """
    try:
        with np.load(io.BytesIO(z.read(name)), allow_pickle=False) as f:
            if not isinstance(f, np.lib.npyio.NpzFile):
                raise ValueError("not an .npz archive")
            out = {k: f[k] for k in f.files}
    except (ValueError, OSError, EOFError, KeyError, zipfile.BadZipFile) as e:
        raise CheckpointError(f"{path}: member {name!r} is not an archive of plain arrays (pickled objects "
                              f"are refused): {e}") from e
    for k, a in out.items():
        if a.dtype.kind not in "biuf":
            raise CheckpointError(f"{path}: member {name!r} array {k!r} has dtype {a.dtype}; only numbers are loaded")
    return out


def _read_json(z: zipfile.ZipFile, name: str, path) -> dict:
    try:
        obj = json.loads(z.read(name).decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise CheckpointError(f"{path}: member {name!r} is not JSON: {e}") from e
    if not isinstance(obj, dict):
        raise CheckpointError(f"{path}: member {name!r} is not a JSON object")
    return obj


def _policy_kwargs(card: dict, path) -> dict:
    """``policy_kwargs`` of the network the card describes (checked: it will be built)."""
    from torch import nn

    pol = card.get("policy")
    arch = pol.get("net_arch") if isinstance(pol, dict) else None
    act = pol.get("activation") if isinstance(pol, dict) else None
    if (not isinstance(arch, list) or len(arch) > MAX_LAYERS
            or not all(isinstance(w, int) and not isinstance(w, bool) and 1 <= w <= MAX_LAYER_WIDTH for w in arch)
            or act not in ACTIVATIONS):
        raise CheckpointError(f"{path}: the card's policy {pol!r} is not a network this version builds "
                              f"(net_arch: at most {MAX_LAYERS} widths in 1..{MAX_LAYER_WIDTH}; "
                              f"activation one of {list(ACTIVATIONS)})")
    return dict(net_arch=dict(pi=list(arch), vf=list(arch)), activation_fn={"tanh": nn.Tanh, "relu": nn.ReLU}[act])


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

    model = MaskablePPO("MlpPolicy", None, policy_kwargs=_policy_kwargs(card, source), device=device,
                        _init_setup_model=False, **ppo_kwargs)
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

    data, card = read_checkpoint(path, game, num_players, layout_version)
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        meta = _read_json(z, META_MEMBER, path)
        if meta.get("format") != CHECKPOINT_FORMAT or meta.get("version") != CHECKPOINT_VERSION:
            raise CheckpointError(f"{path}: checkpoint format {meta.get('format')!r} version {meta.get('version')!r} "
                                  f"is not supported; this version reads {CHECKPOINT_FORMAT!r} version {CHECKPOINT_VERSION}")
        weights = _read_npz(z, POLICY_MEMBER, path)
        opt_arrays = _read_npz(z, OPTIMIZER_MEMBER, path)
        bounds = _read_npz(z, SPACE_MEMBER, path)
        pool: dict[str, NumpyPolicy] = {}
        for name in z.namelist():
            if _is_pool_member(name):
                try:
                    pool[name[len(POOL_PREFIX):-4]] = NumpyPolicy.from_bytes(z.read(name))
                except ValueError as e:
                    raise CheckpointError(f"{path}: pool snapshot {name!r} is unreadable (pickled objects are "
                                          f"refused): {e}") from e
    obs_size, num_actions = card["obs_size"], card["num_actions"]
    for key, v in (("obs_size", obs_size), ("num_actions", num_actions)):
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= MAX_LAYER_WIDTH:
            raise CheckpointError(f"{path}: the card's {key}={v!r} is not a size this version builds")
    policy_kwargs = _policy_kwargs(card, path)
    steps = _int_field(meta, "num_timesteps", path)
    try:
        dtype = np.dtype(str(meta.get("observation_dtype", "float32")))
        if dtype.kind != "f":
            raise TypeError(f"dtype {dtype}")
        low, high = bounds["low"], bounds["high"]
        if low.shape != (obs_size,) or high.shape != (obs_size,):
            raise ValueError(f"bounds of shape {low.shape}/{high.shape}")
        obs_space = spaces.Box(low.astype(dtype), high.astype(dtype), dtype=dtype)
    except (TypeError, ValueError, KeyError) as e:
        raise CheckpointError(f"{path}: the stored observation space does not fit the card's obs_size "
                              f"{obs_size}: {e}") from e
    if env is not None:
        shape, n = tuple(env.observation_space.shape), getattr(env.action_space, "n", None)
        if shape != (obs_size,) or n != num_actions:
            raise CheckpointError(f"{path}: the policy takes ({obs_size},)/{num_actions} observations/actions, "
                                  f"but the environment has {shape}/{n}")
        model = MaskablePPO("MlpPolicy", env, policy_kwargs=policy_kwargs, device=device, **ppo_kwargs)
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
