"""Model cards: the JSON description stored with every checkpoint and ONNX export, and its checks.

Schema (``card_version`` 1); every key is always present unless marked optional:

=====================  =======================================================================
key                    value
=====================  =======================================================================
``format``             ``"house-of-decks-policy"``
``card_version``       ``1``
``game``               ``"tapeo"`` or ``"robada"``
``player_counts``      table sizes the policy was trained on (list of int)
``obs_layout_version`` version of the game's observation layout (``<game>_env.LAYOUT``); with an encoder
                       whose vector is itself a layout of the game (``robada_v2``: layout 2) an
                       export names that layout (:func:`hod.training.export.export_onnx`)
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

import json
import os
import platform
import stat
import time
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Optional, Sequence

from hod.agents.encoders import get_encoder
from hod.core.errors import ConfigError
from hod.core.games import game_names, get_game, layout_version

MODEL_CARD_FORMAT = "house-of-decks-policy"
MODEL_CARD_VERSION = 1
REQUIRED_KEYS = ("format", "card_version", "game", "player_counts", "obs_layout_version", "obs_size", "num_actions")
ACTIVATIONS = ("tanh", "relu")

# ---- the limits of what is built and read (docs/training.md, "Limits of what is loaded") ---------
#: The widest layer a network may have (units): each ``net_arch`` width of the training
#: configuration (:class:`hod.training.config.TrainingConfig`), and the card's ``obs_size`` and
#: ``num_actions``, checked by every loader (:func:`check_network`).
MAX_LAYER_WIDTH = 1 << 16
#: The most hidden layers (``net_arch`` entries) a network may have.
MAX_LAYERS = 32
#: The most parameters (weights and biases of the actor and the critic together, what a
#: checkpoint's ``policy.npz`` holds; :func:`network_parameters`) a network may have:
#: 2**24 = 16,777,216, 64 MiB of float32. The training configuration refuses a bigger
#: ``net_arch``; the loaders refuse a card describing one before any network is built, a pool
#: snapshot or ONNX export holding more from its ``.npy`` headers or initializer dims before any
#: weight is read.
MAX_PARAMETERS = 1 << 24
#: The largest checkpoint or ONNX export file read (bytes), and the most bytes the members of one
#: archive (a checkpoint, an ``.npz`` inside it) may declare uncompressed, all members together:
#: each member's declared size is checked before it is read. 1 GiB holds a checkpoint of a network
#: at :data:`MAX_PARAMETERS` (weights 64 MiB, Adam's two moments 128 MiB) with a pool of a dozen
#: snapshots of its actor.
MAX_FILE_BYTES = 1 << 30
#: The largest JSON file read beside a policy (bytes): a model card, a checkpoint's
#: ``checkpoint.json``, a golden file. 16 MiB.
MAX_JSON_BYTES = 1 << 24
#: The most members a zip archive read (a checkpoint, an ``.npz`` inside it) may list in its
#: directory, read from the end-of-central-directory record before the directory is parsed:
#: 4,096. A checkpoint holds 5 members and one per pool snapshot (the training configuration's
#: ``pool_size`` is at most :data:`MAX_POOL_SNAPSHOTS`); a policy ``.npz`` one per array.
MAX_ZIP_MEMBERS = 1 << 12
#: The most pool snapshots a checkpoint keeps (the configuration's ``pool_size``), so that a
#: checkpoint never lists more than :data:`MAX_ZIP_MEMBERS` members.
MAX_POOL_SNAPSHOTS = 1024


class CheckpointError(ValueError):
    """A checkpoint or export that cannot be used: missing, truncated or corrupt file, no or bad
    model card, or made for another game, player count, observation layout or space size."""


def network_parameters(net_arch: Sequence[int], obs_size: int, num_actions: int) -> int:
    """The parameter count of the network a card describes: SB3's ``MlpPolicy`` with a separate
    actor and critic of widths ``net_arch``, i.e. twice the chain ``obs_size -> net_arch[0] ->
    ... -> net_arch[-1]`` (weights and biases), the action head ``net_arch[-1] -> num_actions``
    and the value head ``net_arch[-1] -> 1``. E.g. ``net_arch=[8, 6]``, ``obs_size=7``,
    ``num_actions=5``: 2 * (7*8+8 + 8*6+6) + (6*5+5) + (6+1) = 278. An int (no overflow)."""
    dims = [int(obs_size), *(int(w) for w in net_arch)]
    chain = sum(a * b + b for a, b in zip(dims, dims[1:]))
    last = dims[-1]
    return 2 * chain + (last * int(num_actions) + int(num_actions)) + (last + 1)


def check_network(card: dict, source: str) -> int:
    """Check that the network ``card`` describes (``policy``: ``net_arch``, ``activation``;
    ``obs_size``, ``num_actions``) is one this version builds, from the card alone (nothing is
    built or read); return its parameter count (:func:`network_parameters`).

    Raises:
        CheckpointError: ``net_arch`` not a list of at most :data:`MAX_LAYERS` ints in
            1..:data:`MAX_LAYER_WIDTH`, an activation outside :data:`ACTIVATIONS`, ``obs_size`` or
            ``num_actions`` not an int in 1..:data:`MAX_LAYER_WIDTH`, or more than
            :data:`MAX_PARAMETERS` parameters (each message names the limit).
    """
    for key in ("obs_size", "num_actions"):
        v = card.get(key)
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= MAX_LAYER_WIDTH:
            raise CheckpointError(f"{source}: the card's {key}={v!r} is not a size this version builds; legal: an "
                                  f"integer in 1..{MAX_LAYER_WIDTH} (MAX_LAYER_WIDTH)")
    pol = card.get("policy")
    arch = pol.get("net_arch") if isinstance(pol, dict) else None
    act = pol.get("activation") if isinstance(pol, dict) else None
    if (not isinstance(arch, list) or len(arch) > MAX_LAYERS
            or not all(isinstance(w, int) and not isinstance(w, bool) and 1 <= w <= MAX_LAYER_WIDTH for w in arch)
            or act not in ACTIVATIONS):
        raise CheckpointError(f"{source}: the card's policy {pol!r} is not a network this version builds; legal: "
                              f"net_arch at most {MAX_LAYERS} widths (MAX_LAYERS) in 1..{MAX_LAYER_WIDTH} "
                              f"(MAX_LAYER_WIDTH), activation one of {list(ACTIVATIONS)}")
    n = network_parameters(arch, card["obs_size"], card["num_actions"])
    if n > MAX_PARAMETERS:
        raise CheckpointError(f"{source}: the card's network (net_arch {arch}, obs_size {card['obs_size']}, "
                              f"num_actions {card['num_actions']}) has {n:,} parameters; the limit is "
                              f"MAX_PARAMETERS = {MAX_PARAMETERS:,} (hod.agents.model_card); refused before "
                              f"building it")
    return n


def parse_json(data: bytes | str, source: str, limit: Optional[int] = None) -> Any:
    """Parse the JSON text ``data`` (UTF-8 bytes or str) of a model card, ``checkpoint.json`` or
    golden file, at most ``limit`` bytes (None: :data:`MAX_JSON_BYTES`).

    Raises:
        CheckpointError: longer than ``limit`` (checked before parsing), not UTF-8, not JSON, or
            nested too deeply for Python's parser (a ``RecursionError`` inside :mod:`json`).
    """
    limit = MAX_JSON_BYTES if limit is None else limit
    if len(data) > limit:
        raise CheckpointError(f"{source}: {len(data):,} bytes of JSON; the limit is {limit:,} bytes "
                              f"(MAX_JSON_BYTES, hod.agents.model_card)")
    try:
        return json.loads(data)
    except RecursionError:
        raise CheckpointError(f"{source}: JSON nested too deeply to read (legal: a model card's few levels)") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CheckpointError(f"{source}: not valid JSON (truncated or corrupt?): {e}") from e


def read_limited(path: str | os.PathLike, limit: int, limit_name: str, what: str = "file") -> bytes:
    """The bytes of ``path``, read only if it holds at most ``limit`` bytes (``limit_name`` names
    the limit in the message). A regular file's size is checked before anything is read; any
    file is then read in pieces that stop past ``limit``, so a file that grows meanwhile, or a
    special file (a pipe, ``/dev/zero``), cannot exhaust memory either.

    Raises:
        CheckpointError: longer than ``limit``.
        OSError: the file cannot be opened or read.
    """
    def refuse() -> CheckpointError:
        return CheckpointError(f"{path}: the {what} is larger than {limit:,} bytes, the limit {limit_name} "
                               f"(hod.agents.model_card); refused")

    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        if st.st_size > limit:
            raise refuse()
        # a regular file in one read of its size (one byte more shows that it grew), then pieces
        pieces = [f.read(st.st_size + 1) if stat.S_ISREG(st.st_mode) else b""]
        total = len(pieces[0])
        while total <= limit and (more := f.read(min(1 << 20, limit + 1 - total))):
            pieces.append(more)
            total += len(more)
    if total > limit:
        raise refuse()
    return pieces[0] if len(pieces) == 1 else b"".join(pieces)


#: The libraries a policy depends on: import name -> distribution name (the card's keys are the import names).
_LIBRARIES = {"numpy": "numpy", "torch": "torch", "stable_baselines3": "stable-baselines3", "sb3_contrib": "sb3-contrib",
              "gymnasium": "gymnasium", "pettingzoo": "pettingzoo", "onnx": "onnx", "onnxruntime": "onnxruntime",
              "house_of_decks_rl": "house-of-decks-rl"}


def library_versions() -> dict[str, str]:
    """Versions of the libraries a policy depends on (those installed here): ``{"python": "3.11.x",
    import name: version}``, read from the installed distributions' metadata, so recording them
    imports nothing (importing onnx and onnxruntime for their ``__version__`` cost about a second
    of a training run's first checkpoint)."""
    out = {"python": platform.python_version()}
    for mod, dist in _LIBRARIES.items():
        try:
            out[mod] = version(dist)
        except PackageNotFoundError:  # not installed: not recorded
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



def _is_int(v: Any) -> bool:
    """True for a Python int that is not a bool (JSON ``true`` and ``2.0`` are not ints here)."""
    return isinstance(v, int) and not isinstance(v, bool)


def check_card_fields(card: dict, source: str) -> None:
    """Check the types and legal values of a model card's fields, before any is used (a card
    holding ``player_counts: null`` must be refused by name, not fail with a ``TypeError``):

    * ``card_version``: an int (not a bool) among the versions this code reads
      (:data:`MODEL_CARD_VERSION`);
    * ``game``: one of :func:`hod.core.games.game_names`;
    * ``player_counts``: a non-empty list of ints (not bools), each one of the game's legal
      table sizes (:attr:`hod.core.games.GameInfo.player_counts`); a size may repeat (a run that
      weighted it, e.g. the shipped ``tapeo_ppo_v2`` card's ``[2, 2, 3, 4, 5, 6]``: the bot
      plays each size once);
    * ``obs_layout_version``: an int (not a bool or a float; its value is compared with the
      installed game's by :func:`validate_model_card`); ``obs_size``, ``num_actions``: positive
      ints (not bools or floats);
    * ``rules`` (optional): a dict whose keys are rule options of the game
      (:attr:`hod.core.games.GameInfo.rule_options`), each value among the option's legal values.

    Raises:
        CheckpointError: the first field that fails, named with its value and its legal values.
    """
    v = card.get("card_version")
    if not _is_int(v) or v != MODEL_CARD_VERSION:
        raise CheckpointError(f"{source}: model card version {v!r} is not supported; this version reads "
                              f"{MODEL_CARD_VERSION} (an integer; legal values: [{MODEL_CARD_VERSION}])")
    game = card.get("game")
    try:
        info = get_game(game)
    except ConfigError:
        raise CheckpointError(f"{source}: the card names unknown game {game!r}; legal values: {game_names()}") from None
    legal_counts = list(info.player_counts)
    counts = card.get("player_counts")
    if (not isinstance(counts, list) or not counts
            or not all(_is_int(n) and n in info.player_counts for n in counts)):
        raise CheckpointError(f"{source}: the card's player_counts {counts!r} is not legal for {game}; legal: a "
                              f"non-empty list of integers, each one of {legal_counts}")
    v = card.get("obs_layout_version")   # the version itself is checked against the installation's later
    if not _is_int(v):
        raise CheckpointError(f"{source}: the card's obs_layout_version {v!r} is not legal; legal: an integer "
                              f"(the game's layout version, {info.obs_version} here)")
    for key in ("obs_size", "num_actions"):
        v = card.get(key)
        if not _is_int(v) or v < 1:
            raise CheckpointError(f"{source}: the card's {key} {v!r} is not legal; legal: a positive integer")
    if "rules" in card:
        rules = card["rules"]
        options = {o.name: o for o in info.rule_options}
        if not isinstance(rules, dict):
            raise CheckpointError(f"{source}: the card's rules {rules!r} is not legal; legal: an object whose keys "
                                  f"are rule options of {game} ({list(options)})")
        unknown = [k for k in rules if k not in options]
        if unknown:
            raise CheckpointError(f"{source}: the card's rules name {unknown}, not rule option(s) of {game}; legal "
                                  f"options: {list(options)}")
        try:
            info.check_rule_options(rules)
        except ConfigError as e:
            raise CheckpointError(f"{source}: the card's rules: {e}") from None


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
            from the installed game package; None skips the check. A card whose encoder's vector
            is itself a layout of the game (``robada_v2``: layout 2) may also name that version.
        obs_size, num_actions: expected sizes (None: not checked).

    Raises:
        CheckpointError: not a card, missing keys, a field of the wrong type or outside its legal
            values (:func:`check_card_fields`: ``card_version``, ``game``, ``player_counts``,
            ``obs_layout_version``, ``obs_size``, ``num_actions``, ``rules``), or any mismatch (the
            message says what was expected and what the file holds).
    """
    if not isinstance(card, dict) or card.get("format") != MODEL_CARD_FORMAT:
        raise CheckpointError(f"{source}: not a House of Decks model card (format must be {MODEL_CARD_FORMAT!r})")
    missing = [k for k in REQUIRED_KEYS if k not in card]
    if missing:
        raise CheckpointError(f"{source}: model card lacks keys {missing}")
    check_card_fields(card, source)
    if game is not None and card["game"] != game:
        raise CheckpointError(f"{source}: policy was trained for game {card['game']!r}, not {game!r}")
    if num_players is not None and num_players not in card["player_counts"]:
        raise CheckpointError(f"{source}: policy was trained for {card['player_counts']} players, "
                              f"not {num_players}")
    try:
        encoder = get_encoder(card.get("obs_encoder", "none"), card["game"])
    except ConfigError as e:
        raise CheckpointError(f"{source}: {e}") from None
    if layout_version == "current":
        layout_version = current_layout_version(card["game"])
    # an encoder whose vector is itself a layout of the game (robada_v2: layout v2, the env's
    # observation_version=2) lets the card name that layout (exports do) or the one it reads
    legal = sorted({layout_version} | ({encoder.layout_version} if encoder.layout_version is not None else set())) \
        if layout_version is not None else []
    if legal and card["obs_layout_version"] not in legal:
        raise CheckpointError(
            f"{source}: policy expects observation layout version {card['obs_layout_version']} of "
            f"{card['game']}, but this installation has version {layout_version}"
            + (f" (or {encoder.layout_version}, the layout of its encoder {encoder.name!r})"
               if encoder.layout_version is not None else "") + "; retrain or re-export it"
        )
    if obs_size is not None and card["obs_size"] != encoder.size(obs_size):
        why = (f" (observation {obs_size} + {encoder.extra} features of encoder {encoder.name!r})"
               if encoder.extra else "")
        raise CheckpointError(f"{source}: policy takes observations of size {card['obs_size']}, not "
                              f"{encoder.size(obs_size)}{why}")
    if num_actions is not None and card["num_actions"] != num_actions:
        raise CheckpointError(f"{source}: policy has {card['num_actions']} actions, not {num_actions}")
    return card
