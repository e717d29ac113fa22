"""Model cards: the JSON description stored with every checkpoint and ONNX export, and its checks.

Schema (``card_version`` 1); every key is always present unless marked optional:

=====================  =======================================================================
key                    value
=====================  =======================================================================
``format``             ``"house-of-decks-policy"``
``card_version``       ``1``
``game``               ``"tapeo"`` or ``"robada"``
``player_counts``      table sizes the policy was trained on (list of int)
``obs_layout_version`` version of the game's observation layout (``<game>_env.LAYOUT``)
``obs_size``           width of the network input: the observation vector plus the encoder's features
``obs_encoder`` (opt.) observation encoder (:mod:`hod.agents.encoders`); absent means ``"none"``
``num_actions``        size of the ``Discrete`` action space (= action mask length)
``algorithm``          ``"MaskablePPO"`` (sb3-contrib)
``policy``             ``{"net_arch": [...], "activation": "tanh"|"relu"}``
``reward_scheme``      reward scheme trained on
``rules`` (opt.)       the rule options of the training tables, every option of the game's declaration
                       (:attr:`hod.core.games.GameInfo.rule_options`) with its value; absent in cards
                       written before the key: the defaults
``training``           ``{"steps", "seed", "wall_clock_s", "env_steps_per_s", "config"}``
``evaluation``         list of evaluation rows (see :mod:`hod.training.evaluate`), latest last
``pool``               opponent pool summary (:meth:`hod.training.pool.OpponentPool.describe`)
``libraries``          versions of python, numpy, torch, stable_baselines3, sb3_contrib,
                       gymnasium, pettingzoo, onnx/onnxruntime when present
``created``            UTC time, ISO 8601
``onnx`` (optional)    export only: ``{"file", "opset", "inputs", "outputs", "sha256"}``
=====================  =======================================================================

Nothing here imports torch.
"""
from __future__ import annotations

import importlib
import platform
import time
from importlib.metadata import version
from typing import Any, Optional

from hod.agents.encoders import get_encoder
from hod.core.errors import ConfigError
from hod.core.games import layout_version

MODEL_CARD_FORMAT = "house-of-decks-policy"
MODEL_CARD_VERSION = 1
REQUIRED_KEYS = ("format", "card_version", "game", "player_counts", "obs_layout_version", "obs_size", "num_actions")


class CheckpointError(ValueError):
    """A checkpoint or export that cannot be used: missing, truncated or corrupt file, no or bad
    model card, or made for another game, player count, observation layout or space size."""


def library_versions() -> dict[str, str]:
    """Versions of the libraries a policy depends on (those importable here)."""
    out = {"python": platform.python_version()}
    for mod in ("numpy", "torch", "stable_baselines3", "sb3_contrib", "gymnasium", "pettingzoo", "onnx",
                "onnxruntime"):
        try:
            out[mod] = str(importlib.import_module(mod).__version__)
        except Exception:  # not installed: not recorded
            pass
    try:

        out["house_of_decks_rl"] = version("house-of-decks-rl")
    except Exception:
        pass
    return out


def utc_now() -> str:
    """The current UTC time to the second, ISO 8601 with a ``Z`` suffix (the card's ``created``):
    a str like ``"2026-11-29T18:40:01Z"``."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def current_layout_version(game: str) -> int:
    """Layout version of the installed game package (raises CheckpointError for an unknown game)."""

    try:
        return layout_version(game)
    except ValueError as e:
        raise CheckpointError(str(e)) from e


def validate_model_card(card: Any, source: str, game: Optional[str] = None, num_players: Optional[int] = None,
                  layout_version: Optional[int] | str = "current", obs_size: Optional[int] = None,
                  num_actions: Optional[int] = None) -> dict:
    """Check a model card; return it.

    Args:
        card: the parsed JSON.
        source: file name for the messages.
        game: expected game (None: any).
        num_players: a table size the policy must have been trained on (None: any).
        layout_version: expected observation layout version; ``"current"`` (default) reads it
            from the installed game package; None skips the check.
        obs_size, num_actions: expected sizes (None: not checked).

    Raises:
        CheckpointError: not a card, missing keys, or any mismatch (the message says what was
            expected and what the file holds).
    """
    if not isinstance(card, dict) or card.get("format") != MODEL_CARD_FORMAT:
        raise CheckpointError(f"{source}: not a House of Decks model card (format must be {MODEL_CARD_FORMAT!r})")
    missing = [k for k in REQUIRED_KEYS if k not in card]
    if missing:
        raise CheckpointError(f"{source}: model card lacks keys {missing}")
    if card["card_version"] != MODEL_CARD_VERSION:
        raise CheckpointError(f"{source}: model card version {card['card_version']!r} is not supported; "
                              f"this version reads {MODEL_CARD_VERSION}")
    if game is not None and card["game"] != game:
        raise CheckpointError(f"{source}: policy was trained for game {card['game']!r}, not {game!r}")
    if num_players is not None and num_players not in card["player_counts"]:
        raise CheckpointError(f"{source}: policy was trained for {card['player_counts']} players, "
                              f"not {num_players}")
    if layout_version == "current":
        layout_version = current_layout_version(card["game"])
    if layout_version is not None and card["obs_layout_version"] != layout_version:
        raise CheckpointError(
            f"{source}: policy expects observation layout version {card['obs_layout_version']} of "
            f"{card['game']}, but this installation has version {layout_version}; retrain or re-export it"
        )

    try:
        encoder = get_encoder(card.get("obs_encoder", "none"), card["game"])
    except ConfigError as e:
        raise CheckpointError(f"{source}: {e}") from None
    if obs_size is not None and card["obs_size"] != encoder.size(obs_size):
        why = (f" (observation {obs_size} + {encoder.extra} features of encoder {encoder.name!r})"
               if encoder.extra else "")
        raise CheckpointError(f"{source}: policy takes observations of size {card['obs_size']}, not "
                              f"{encoder.size(obs_size)}{why}")
    if num_actions is not None and card["num_actions"] != num_actions:
        raise CheckpointError(f"{source}: policy has {card['num_actions']} actions, not {num_actions}")
    return card
