"""Training checkpoints: one zip file, written atomically, that carries its own model card.

``NAME.zip`` is the archive ``MaskablePPO.save`` writes (policy and optimizer weights, hyper-
parameters, step count) with two more kinds of members:

* ``model_card.json``: the model card (:mod:`hod.agents.model_card`), also written next to the archive
  as ``NAME.json`` for people and tools;
* ``pool/<name>.npz``: the opponent pool's past snapshots (:class:`hod.training.pool.OpponentPool`),
  so that training resumes with the same pool.

The archive is assembled in memory and written with :func:`hod.core.atomic.atomic_write_bytes`
(temporary file + ``os.replace``), so a reader never sees half a checkpoint.

:func:`load_checkpoint` validates before it unpickles anything SB3 stored: the zip's CRCs, the
card, the game, the player count and the observation layout version; any failure is a
:class:`hod.agents.model_card.CheckpointError` (a ``ValueError``) with a clear message.
"""
from __future__ import annotations

import io
import json
import os
import zipfile
from pathlib import Path
from typing import Any, Optional

from hod.core.atomic import atomic_write_bytes, atomic_write_json

from hod.agents.model_card import CheckpointError, validate_model_card
from .numpy_policy import NumpyPolicy

CARD_MEMBER = "model_card.json"
POOL_PREFIX = "pool/"


def card_path(checkpoint: str | os.PathLike) -> Path:
    """Path of the side-car model card of a checkpoint or export (same stem, ``.json``)."""
    return Path(checkpoint).with_suffix(".json")


def save_checkpoint(model, path: str | os.PathLike, card: dict[str, Any],
                    pool_snapshots: Optional[dict[str, NumpyPolicy]] = None) -> Path:
    """Write ``model`` (a MaskablePPO) with ``card`` and the pool snapshots to ``path`` (``.zip``), atomically.

    Also writes the card to ``path`` with suffix ``.json``. Returns the checkpoint path.
    """
    path = Path(path)
    if path.suffix != ".zip":
        path = path.with_suffix(".zip")
    buf = io.BytesIO()
    model.save(buf)
    with zipfile.ZipFile(buf, "a", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr(CARD_MEMBER, json.dumps(card, indent=2))
        for name, pol in (pool_snapshots or {}).items():
            z.writestr(f"{POOL_PREFIX}{name}.npz", pol.to_bytes())
    atomic_write_bytes(path, buf.getvalue())
    atomic_write_json(card_path(path), card)
    return path


def read_checkpoint(path: str | os.PathLike, game: Optional[str] = None, num_players: Optional[int] = None,
                    layout_version: Optional[int] | str = "current") -> tuple[bytes, dict]:
    """Read and check a checkpoint file without unpickling it; returns ``(zip bytes, card)``.

    Raises:
        CheckpointError: missing file, not a zip, truncated or corrupt (CRC), no model card, or a
            card for another game / player count / layout version (see :func:`validate_model_card`).
    """
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"{path}: no such checkpoint file")
    data = path.read_bytes()
    # save_checkpoint writes no zip comment, so a whole file ends with the 22-byte end-of-central-
    # directory record; anything else was cut short (a truncated file may still look like a zip:
    # the torch weights inside are zips themselves).
    if len(data) < 22 or data[-22:-18] != b"PK\x05\x06":
        raise CheckpointError(f"{path}: truncated or corrupt checkpoint (the archive does not end with its "
                              f"zip directory record)")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            bad = z.testzip()
            if bad is not None:
                raise CheckpointError(f"{path}: corrupt checkpoint (member {bad!r} fails its CRC check)")
            if CARD_MEMBER not in z.namelist():
                raise CheckpointError(f"{path}: not a House of Decks checkpoint, or a damaged one (no {CARD_MEMBER} inside)")
            card = json.loads(z.read(CARD_MEMBER).decode("utf-8"))
    except CheckpointError:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError, KeyError) as e:
        raise CheckpointError(f"{path}: truncated or corrupt checkpoint ({type(e).__name__}: {e})") from e
    validate_model_card(card, str(path), game=game, num_players=num_players, layout_version=layout_version)
    return data, card


def load_checkpoint(path: str | os.PathLike, game: Optional[str] = None, num_players: Optional[int] = None,
                    layout_version: Optional[int] | str = "current", env=None, device: str = "cpu",
                    **load_kwargs: Any):
    """Load a checkpoint written by :func:`save_checkpoint`, after validating it.

    Args:
        path: the ``.zip`` file.
        game: the game it must be for (None: any).
        num_players: a table size it must have been trained on (None: any).
        layout_version: expected observation layout version (``"current"``: the installed game's).
        env: VecEnv to attach (for further training); None for inference.
        device: torch device.

    Returns:
        ``(model, card, pool_snapshots)``: the ``MaskablePPO``, the card (dict) and
        ``{name: NumpyPolicy}`` of the stored opponent pool.

    Raises:
        CheckpointError: see :func:`read_checkpoint`; also an archive SB3 cannot load, or whose
            spaces differ from the card's.
    """
    from sb3_contrib import MaskablePPO

    data, card = read_checkpoint(path, game, num_players, layout_version)
    try:
        model = MaskablePPO.load(io.BytesIO(data), env=env, device=device, **load_kwargs)
    except Exception as e:
        raise CheckpointError(f"{path}: stable-baselines3 cannot load this checkpoint ({type(e).__name__}: {e})") from e
    obs_shape = tuple(model.observation_space.shape)
    if obs_shape != (card["obs_size"],) or int(model.action_space.n) != card["num_actions"]:
        raise CheckpointError(
            f"{path}: the stored policy has spaces {obs_shape}/{model.action_space.n}, but its card says "
            f"({card['obs_size']},)/{card['num_actions']}"
        )
    pool: dict[str, NumpyPolicy] = {}
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        for name in z.namelist():
            if name.startswith(POOL_PREFIX) and name.endswith(".npz"):
                try:
                    pool[name[len(POOL_PREFIX):-4]] = NumpyPolicy.from_bytes(z.read(name))
                except ValueError as e:
                    raise CheckpointError(f"{path}: pool snapshot {name!r} is unreadable: {e}") from e
    return model, card, pool
