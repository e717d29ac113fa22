"""Trained policies exported to ONNX, played with onnxruntime and numpy only (no torch, no pickle).

An export is ``NAME.onnx`` (written by ``python -m training.export``) and, next to it,
``NAME.json``, its model card. The graph takes ``observation`` float32 [B, obs_size] and
``action_mask`` int8 [B, num_actions], applies the mask itself and returns ``action`` (argmax of
the masked logits) and ``logits`` (illegal actions at -1e8). The card is also embedded in the
ONNX metadata (key ``model_card``); the embedded card is the one checked.

Shipped opponents live in ``agents/opponents/<game>_ppo*.onnx``;
:func:`register_shipped_opponents` registers each as ``agents.make(game, "ppo")``
(``<game>_ppo.onnx``) or ``agents.make(game, "ppo_<suffix>")`` (``<game>_ppo_<suffix>.onnx``).
"""
from __future__ import annotations

import functools
import hashlib
import json
import warnings
from pathlib import Path
from typing import Any, Optional

import numpy as np

from .base import Bot, BeliefSampler, Observation, legal_actions

OPPONENTS_DIR = Path(__file__).resolve().parent / "opponents"
METADATA_KEY = "model_card"


def _checkpoint_error():
    from training.card import CheckpointError

    return CheckpointError


@functools.lru_cache(maxsize=32)
def _load(path: str, threads: int, stamp: tuple = ()):
    """(session, card) of an export; cached per (path, threads, file stamp): sessions are safe to
    share between bots, and a rewritten file (new mtime/size) is loaded again."""
    import onnxruntime as ort

    err = _checkpoint_error()
    p = Path(path)
    if not p.is_file():
        raise err(f"{p}: no such ONNX file")
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    data = p.read_bytes()
    side = p.with_suffix(".json")
    side_card = None
    if side.is_file():
        # The card beside the export records the file's sha256: a corrupt byte anywhere (even in
        # the weights, which onnxruntime cannot notice) fails here.
        try:
            side_card = json.loads(side.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as e:
            raise err(f"{side}: the model card is not valid JSON (truncated or corrupt?): {e}") from e
        want = (side_card.get("onnx") or {}).get("sha256") if isinstance(side_card, dict) else None
        if want is not None and hashlib.sha256(data).hexdigest() != want:
            raise err(f"{p}: the file's sha256 does not match its model card {side.name} (corrupt or replaced file)")
    else:
        warnings.warn(f"{p}: no model card {side.name} beside it; the file's integrity is not checked")
    try:
        sess = ort.InferenceSession(data, sess_options=opts, providers=["CPUExecutionProvider"])
    except Exception as e:  # onnxruntime raises its own exception types
        raise err(f"{p}: not a loadable ONNX model (truncated or corrupt?): {e}") from e
    meta = sess.get_modelmeta().custom_metadata_map
    if METADATA_KEY in meta:
        try:
            card = json.loads(meta[METADATA_KEY])
        except json.JSONDecodeError as e:
            raise err(f"{p}: the embedded model card is not valid JSON: {e}") from e
    elif side_card is not None:
        card = side_card
    else:
        raise err(f"{p}: no embedded model card and no {side.name} beside it")
    if side_card is not None:
        for key in ("game", "obs_layout_version", "obs_size", "num_actions", "player_counts"):
            if key in card and side_card.get(key) != card.get(key):
                raise err(f"{p}: the embedded model card and {side.name} disagree on {key!r} "
                          f"({card.get(key)!r} vs {side_card.get(key)!r})")
    names_in = [i.name for i in sess.get_inputs()]
    names_out = [o.name for o in sess.get_outputs()]
    if names_in != ["observation", "action_mask"] or names_out[:2] != ["action", "logits"]:
        raise err(f"{p}: graph inputs {names_in} / outputs {names_out} are not those of a policy export "
                  f"(inputs ['observation', 'action_mask'], outputs ['action', 'logits'])")
    return sess, card


class OnnxPolicy(Bot):
    """A bot playing an ONNX policy export.

    Args:
        path: the ``.onnx`` file.
        game: the game it must play (checked against the card; None: the card's game).
        num_players: a table size the policy must have been trained on (None: not checked).
        deterministic: play the graph's ``action`` (argmax of the masked logits); False samples
            from the masked softmax with the bot's generator.
        seed: the bot's seed.
        threads: onnxruntime intra-op threads.

    Raises:
        CheckpointError (a ValueError): missing, truncated or corrupt file, no/invalid model card,
            or a card for another game, player count or observation layout version than the
            installed game's.
        ImportError: onnxruntime is not installed (``pip install house-of-decks-rl[onnx]``).
    """

    name = "onnx"

    def __init__(self, path: str | Path, game: Optional[str] = None, num_players: Optional[int] = None,
                 deterministic: bool = True, seed: Optional[int] = None, threads: int = 1, **options: Any) -> None:
        super().__init__(seed=seed, **options)
        from training.card import validate_card

        self.path = Path(path).resolve()
        try:
            st = self.path.stat()
            stamp = (st.st_mtime_ns, st.st_size)
        except OSError:
            stamp = ()
        self.session, card = _load(str(self.path), threads, stamp)
        self.card = validate_card(card, str(self.path), game=game, num_players=num_players)
        self.game = self.card["game"]
        self.deterministic = deterministic
        self.obs_size = int(self.card["obs_size"])
        self.num_actions = int(self.card["num_actions"])

    def run(self, observation: np.ndarray, action_mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Batch inference: ``(action int64 [B], masked logits float32 [B, A])``.

        Args:
            observation: float32 [B, obs_size] (or [obs_size]).
            action_mask: int8/bool [B, num_actions] (or [num_actions]).

        Raises:
            ValueError: wrong shapes (the expected ones are named).
        """
        obs = np.asarray(observation, dtype=np.float32)
        mask = np.asarray(action_mask).astype(np.int8)
        if obs.ndim == 1:
            obs, mask = obs[None], mask[None]
        if obs.shape[1:] != (self.obs_size,) or mask.shape != (obs.shape[0], self.num_actions):
            raise ValueError(f"{self.path.name}: expected observation (B, {self.obs_size}) and action_mask "
                             f"(B, {self.num_actions}), got {obs.shape} and {mask.shape}")
        action, logits = self.session.run(["action", "logits"], {"observation": obs, "action_mask": mask})
        return action, logits

    def act(self, observation: Observation, belief: Optional[BeliefSampler] = None) -> int:
        legal_actions(observation)  # raises on an empty mask
        action, logits = self.run(observation["observation"], observation["action_mask"])
        if self.deterministic:
            return int(action[0])
        z = logits[0].astype(np.float64)
        p = np.exp(z - z.max())
        p /= p.sum()
        return int(self.rng.choice(p.size, p=p))


def shipped_opponents(directory: str | Path = OPPONENTS_DIR) -> dict[tuple[str, str], Path]:
    """``{(game, registry name): path}`` of the exports in ``directory`` named ``<game>_ppo*.onnx``.

    ``tapeo_ppo.onnx`` -> ``("tapeo", "ppo")``; ``tapeo_ppo_4p.onnx`` -> ``("tapeo", "ppo_4p")``.
    Files of unknown games are ignored. A missing folder gives ``{}``.
    """
    from .registry import GAMES

    out: dict[tuple[str, str], Path] = {}
    d = Path(directory)
    if not d.is_dir():
        return out
    for f in sorted(d.glob("*_ppo*.onnx")):
        game, sep, rest = f.stem.partition("_")
        if game in GAMES and sep and rest.startswith("ppo"):
            out[(game, rest)] = f
    return out


def _make_shipped(path: Path, seed: Optional[int] = None, **kwargs: Any) -> OnnxPolicy:
    return OnnxPolicy(path, seed=seed, **kwargs)


def register_shipped_opponents(directory: str | Path = OPPONENTS_DIR) -> list[tuple[str, str]]:
    """Register every shipped export (:func:`shipped_opponents`) with :func:`agents.register`.

    Nothing is loaded until a bot is made, so this never fails on a missing onnxruntime or
    a missing folder; it returns the ``(game, name)`` pairs registered.
    """
    from .registry import register

    found = shipped_opponents(directory)
    for (game, name), path in found.items():
        register(game, name, functools.partial(_make_shipped, path, game=game))
    return sorted(found)
