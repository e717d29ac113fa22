"""Export a checkpoint's policy to ONNX: ``python -m hod.training.export CHECKPOINT [--out DIR] [--name NAME]``.

Writes ``DIR/NAME.onnx``, ``DIR/NAME.json`` (its model card) and ``DIR/NAME.golden.json`` (golden
test vectors, :func:`write_golden`), atomically. ``python -m hod.training.export --golden
EXPORT.onnx`` writes the golden vectors of an existing export and its card's consumer
interface (``onnx.interface``) without exporting again. Defaults: ``DIR``
is the checkpoint's folder, ``NAME`` is ``<game>_ppo`` (the name the shipped-opponent registry
looks for in ``agents/opponents/``). The three files are built in memory first and written
together (:func:`hod.core.atomic.atomic_write_many`): all of them or, when a write is refused
(a folder in place of one of them, a full disk), none. The command refuses an ``--out`` that is
the installed ``hod/agents/opponents`` folder (:func:`check_not_shipped`), whatever ``NAME``,
unless ``--overwrite-shipped`` is given.

The graph (opset :data:`OPSET`, batch dimension dynamic):

* inputs ``observation`` float32 [B, obs_size] and ``action_mask`` int8 [B, num_actions]
  (1 = legal; the graph tests ``mask != 0``);
* outputs ``action`` int64 [B], the argmax of the masked logits (always a legal action when the
  mask allows any), and ``logits`` float32 [B, num_actions], the actor's logits with illegal
  actions set to -1e8 (as sb3-contrib's ``MaskableCategorical`` does).

The mask is applied inside the graph, so a consumer cannot forget it. The card's ``onnx.interface``
(:func:`interface`) spells out what a consumer outside Python (e.g. onnxruntime-web in a web page)
must feed: the input and output names, shapes and dtypes, the observation layout (game, version,
size) and whether the network input is the game's plain observation (``self_contained``) or
needs an observation encoder's features computed in Python first. The golden file holds
observations met in seeded random games, their masks, and the actions and logits onnxruntime in
Python gives: a consumer that reproduces them (0 action mismatches, logits within 1e-5) runs the
export correctly. The model card (schema in
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

from hod.agents import model_card
from hod.agents.model_card import CheckpointError, parse_json, read_limited
from hod.core.atomic import atomic_write_many, json_bytes
from hod.core.commands import EXIT_WRITE_FAILED, write_error_line
from hod.core.errors import ConfigError
from hod.evaluation.cli_options import int_option

from .checkpoint import load_checkpoint

OPSET = 17
#: The newest opset torch's TorchScript exporter (``dynamo=False``, what we use) writes, torch 2.13.
MAX_OPSET = 20
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


def check_not_shipped(checkpoint: str | Path, out_dir: Optional[str | Path], name: Optional[str]) -> None:
    """Refuse an export into the shipped opponents' folder: ``out_dir`` (default: the
    checkpoint's folder) resolves to the installed shipped-opponent folder
    (:data:`hod.agents.onnx_policy.OPPONENTS_DIR`, wherever the package is installed; the same
    folder spelled another way or through a symbolic link included), whatever the ``name``: a
    new name there would become a shipped opponent (the registry loads every ``<game>_ppo*.onnx``
    of that folder). The message names the shipped ``NAME.onnx``, ``NAME.json`` or
    ``NAME.golden.json`` the export would replace, if any (``name`` None: the default
    ``<game>_ppo``, the game read from the checkpoint's card). The command line skips this check
    with ``--overwrite-shipped``.

    Raises:
        ConfigError: ``out_dir`` is the shipped opponents' folder (the files it would replace and
            the ways out named).
        CheckpointError: ``name`` is None, ``out_dir`` is the shipped folder and the checkpoint's
            card cannot be read.
    """
    from hod.agents import onnx_policy

    shipped = Path(onnx_policy.OPPONENTS_DIR)
    target = Path(out_dir) if out_dir is not None else Path(checkpoint).parent
    if target.resolve() != shipped.resolve():
        return
    if name is None:
        from .checkpoint import read_checkpoint

        name = f"{read_checkpoint(checkpoint)[1]['game']}_ppo"
    found = [f"{name}{sfx}" for sfx in (".onnx", ".json", ".golden.json") if (shipped / f"{name}{sfx}").exists()]
    what = (f"would replace the shipped {', '.join(found)}" if found
            else f"would add {name}.onnx to the shipped opponents")
    raise ConfigError(f"--out {out_dir or target} is the shipped opponents' folder ({shipped}) and {what}; legal: "
                      f"an --out of your own (e.g. runs/<run>/export), or --overwrite-shipped to write there")


def check_export_targets(out_dir: str | Path, name: str) -> list[Path]:
    """Return the three files an export named ``name`` writes in ``out_dir`` (``NAME.onnx``,
    ``NAME.json``, ``NAME.golden.json``) once ``out_dir`` is a folder that exists or can be
    created (:func:`hod.training.config.check_out_dir`) and none of the three is a folder.
    Checked before the export's work; the writes check the targets again
    (:func:`hod.core.atomic.atomic_write_many`).

    Raises:
        ConfigError: ``out_dir`` (or a folder above it) is a file, not a folder, or no folder
            can be created there; or one of the three files is a folder (named, with the legal
            values).
    """
    from .config import check_out_dir

    out_dir = check_out_dir(out_dir)
    onnx_path = out_dir / f"{name}.onnx"
    targets = [onnx_path, onnx_path.with_suffix(".json"), golden_path(onnx_path)]
    for t in targets:
        if t.is_dir():
            raise ConfigError(f"--out {out_dir}: {t} is a folder, not a file; legal: an --out or --name whose "
                              f"{', '.join(x.name for x in targets)} are files or do not exist yet")
    return targets


def check_golden_not_shipped(onnx_path: str | Path) -> None:
    """Refuse ``--golden`` on a shipped opponent's export (``onnx_path`` in
    :data:`hod.agents.onnx_policy.OPPONENTS_DIR`): it would rewrite the shipped golden vectors and
    model card. The command line skips this check with ``--overwrite-shipped``.

    Raises:
        ConfigError: the export is a shipped opponent's (the way out named).
    """
    from hod.agents import onnx_policy

    p, shipped = Path(onnx_path), Path(onnx_policy.OPPONENTS_DIR)
    if p.is_file() and shipped.is_dir() and p.resolve().parent == shipped.resolve():
        raise ConfigError(f"--golden {onnx_path} would rewrite the shipped opponent's golden vectors and model card "
                          f"in {shipped}; legal: a copy of the export outside that folder, or --overwrite-shipped")


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


def actor_onnx_bytes(policy, obs_size: int, num_actions: int, opset: int = OPSET) -> bytes:
    """The ONNX bytes of ``policy``'s masked actor (:func:`hod.training.policy_io.actor_module`):
    inputs ``observation`` float32 [batch, obs_size] and ``action_mask`` int8 [batch,
    num_actions], outputs ``action`` and ``logits``, at ``opset``, with torch's TorchScript
    exporter. The graph uses only :data:`hod.agents.onnx_policy.EXPORT_OPERATORS` (checked here,
    so that an export the loaders would refuse fails when it is written).

    Raises:
        hod.agents.model_card.CheckpointError: the exporter wrote an operator outside that list.
    """
    import onnx
    import torch

    from hod.agents.onnx_policy import check_graph_operators

    from .policy_io import actor_module

    module = actor_module(policy).eval()
    dummy = (torch.zeros(1, obs_size, dtype=torch.float32), torch.ones(1, num_actions, dtype=torch.int8))
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # the TorchScript exporter (no onnxscript needed)
        torch.onnx.export(
            module, dummy, buf, dynamo=False, input_names=list(INPUTS), output_names=list(OUTPUTS),
            dynamic_axes={k: {0: "batch"} for k in INPUTS + OUTPUTS}, opset_version=opset,
        )
    data = buf.getvalue()
    check_graph_operators(onnx.load_from_string(data), f"the export at opset {opset}")
    return data


def export_onnx(checkpoint: str | Path, out_dir: Optional[str | Path] = None, name: Optional[str] = None,
                opset: int = OPSET, check_samples: int = 256) -> tuple[Path, Path]:
    """Export the policy of ``checkpoint`` (see the module docstring); returns ``(onnx path, card path)``.

    Before anything is written the export is checked: onnx's model checker, then onnxruntime and
    torch must pick the same actions on ``check_samples`` random observations with random masks.
    The ONNX file, its card and its golden vectors (:func:`golden_data`) are built in memory and
    written together (:func:`hod.core.atomic.atomic_write_many`): all three, or none.

    Raises:
        ValueError: ``opset`` outside 14..:data:`MAX_OPSET`.
        CheckpointError: not a zip file (:func:`check_checkpoint_path`: a folder, an ONNX export...),
            an unusable checkpoint (:func:`hod.training.checkpoint.load_checkpoint`), or an
            export that fails its check or the checks :class:`hod.agents.onnx_policy.OnnxPolicy`
            makes when it loads one (graph sizes, model card); nothing is written then.
        ConfigError: a ``name`` with a path separator or ``..`` (:func:`check_name`); ``out_dir``
            a file, not a folder, or one of the three files a folder (:func:`check_export_targets`).
        OSError: a write refused (disk full...; its ``filename`` the file); nothing is written.
    """
    import onnx

    from .policy_io import actor_module

    if not 14 <= opset <= MAX_OPSET:
        raise ValueError(f"opset={opset}: legal values 14..{MAX_OPSET} (older ones lack what the export uses, "
                         f"newer ones torch's exporter does not write)")
    if name is not None:
        check_name(name)
    checkpoint = check_checkpoint_path(checkpoint)
    model, card, _ = load_checkpoint(checkpoint)
    name = name or f"{card['game']}_ppo"
    out_dir = Path(out_dir) if out_dir is not None else checkpoint.parent
    onnx_path, card_path, golden_file = check_export_targets(out_dir, name)
    obs_size, num_actions = card["obs_size"], card["num_actions"]
    module = actor_module(model.policy).eval()
    proto = onnx.load_from_string(actor_onnx_bytes(model.policy, obs_size, num_actions, opset))
    card = copy.deepcopy(card)
    card["obs_layout_version"] = network_layout_version(card)
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
    card["onnx"]["interface"] = dict(interface(card), golden=golden_file.name)
    # what OnnxPolicy checks when it loads the export, on the bytes and card about to be written
    from hod.agents.onnx_policy import check_graph_tensors, game_sizes

    check_graph_tensors(data, str(onnx_path))
    game_obs, game_actions = game_sizes(card["game"])
    model_card.validate_model_card(card, str(onnx_path), obs_size=game_obs, num_actions=game_actions)
    golden = golden_data(data, card, onnx_path.name)
    atomic_write_many([(onnx_path, data), (card_path, json_bytes(card)), (golden_file, json_bytes(golden))])
    return onnx_path, card_path


GOLDEN_FORMAT = "house-of-decks-golden"
GOLDEN_VERSION = 1
#: Golden vectors written per export, and the seed of the games they come from.
GOLDEN_COUNT = 32
GOLDEN_SEED = 0


def golden_path(onnx_path: str | Path) -> Path:
    """``NAME.golden.json`` beside the export ``NAME.onnx``."""
    p = Path(onnx_path)
    return p.with_name(p.stem + ".golden.json")


def network_layout_version(card: dict) -> int:
    """The observation layout an export's network reads: its encoder's layout when the encoded
    vector is itself a layout of the game (``robada_v2``: Ronda Robada layout 2, the env's
    ``observation_version=2`` vector, docs/robada_env.md), else the card's ``obs_layout_version``
    (the layout the training env emitted). An int, e.g. 2 for a ``robada_v2`` card that says 1.

    Raises:
        CheckpointError: an encoder unknown or of another game (:func:`hod.agents.encoders.get_encoder`).
    """
    from hod.agents.encoders import get_encoder

    try:
        encoder = get_encoder(card.get("obs_encoder", "none"), card["game"])
    except ConfigError as e:
        raise CheckpointError(str(e)) from None
    return int(encoder.layout_version if encoder.layout_version is not None else card["obs_layout_version"])


def interface(card: dict) -> dict:
    """What a consumer of the export must feed and reads back, from its model card ``card``:
    ``{"inputs": [...], "outputs": [...], "obs_layout": {"game", "version", "size"},
    "obs_encoder", "self_contained", "golden"}``; each input/output is ``{"name", "shape",
    "dtype", "meaning"}`` with ``"batch"`` for the dynamic first dimension. ``self_contained`` is
    True when the network input is an observation layout of the game (no encoder, or one whose
    vector is itself a layout: ``robada_v2``, layout 2, the env's ``observation_version=2``;
    :func:`network_layout_version`), so a page holding that observation can run it alone."""
    from hod.agents.encoders import get_encoder
    from hod.core.games import obs_layout

    layout = obs_layout(card["game"])
    encoder = card.get("obs_encoder", "none")
    obs_size, num_actions = int(card["obs_size"]), int(card["num_actions"])
    version = network_layout_version(card)
    # robada_v2: the whole input is layout 2; otherwise the game's layout plus the encoder's features
    size = obs_size if get_encoder(encoder, card["game"]).layout_version is not None else int(layout.size)
    extra = obs_size - size
    obs_meaning = (f"the game's observation vector (layout {card['game']} v{version}, "
                   f"{size} floats, docs/{card['game']}_env.md)")
    if extra:
        obs_meaning += f" followed by the {extra} features of the observation encoder {encoder!r} (hod.agents.encoders)"
    return {
        "inputs": [{"name": "observation", "shape": ["batch", obs_size], "dtype": "float32", "meaning": obs_meaning},
                   {"name": "action_mask", "shape": ["batch", num_actions], "dtype": "int8",
                    "meaning": "1 for each legal action, 0 otherwise (the env's action_mask)"}],
        "outputs": [{"name": "action", "shape": ["batch"], "dtype": "int64",
                     "meaning": "argmax of the masked logits: the action to play"},
                    {"name": "logits", "shape": ["batch", num_actions], "dtype": "float32",
                     "meaning": "the actor's logits, illegal actions set to -1e8"}],
        "obs_layout": {"game": card["game"], "version": version, "size": size},
        "obs_encoder": encoder,
        "self_contained": extra == 0,
        "golden": None,
    }


def _short(x: np.ndarray) -> list:
    """float32 values as the shortest decimal that reads back to the same float32 (compact JSON)."""
    return [float(np.format_float_positional(v, unique=True, trim="0")) for v in np.asarray(x, np.float32).ravel()]


def sample_positions(game: str, player_counts, count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``count`` positions met in seeded games of random legal play: the acting seat's game
    observation float32 (count, obs) and action mask int8 (count, num_actions). Table sizes
    cycle through ``player_counts``; each decision is kept with probability 1/4, so the positions
    spread over whole games."""
    from hod.core.games import make_raw_env

    rng = np.random.default_rng(seed)
    obs, masks = [], []
    sizes = [int(k) for k in player_counts]
    game_no = 0
    while len(obs) < count:
        env = make_raw_env(game, sizes[game_no % len(sizes)])
        env.reset(seed=int(rng.integers(1 << 30)))
        game_no += 1
        for agent in env.agent_iter():
            if env.terminations[agent] or env.truncations[agent]:
                env.step(None)
                continue
            o = env.observe(agent)
            if rng.random() < 0.25 and len(obs) < count:
                obs.append(o["observation"].copy())
                masks.append(o["action_mask"].copy())
            env.step(int(rng.choice(np.flatnonzero(o["action_mask"]))))
    return np.array(obs, np.float32), np.array(masks, np.int8)


def golden_data(onnx_bytes: bytes, card: dict, model_name: str, count: int = GOLDEN_COUNT,
                seed: int = GOLDEN_SEED) -> dict:
    """The golden vectors (what ``NAME.golden.json`` holds) of the export whose ONNX bytes are
    ``onnx_bytes`` and whose model card is ``card``, computed in memory (nothing is read or written).

    The vectors are network inputs met in seeded games of random legal play (table sizes cycling
    through the card's ``player_counts``; ``count`` decisions spread over whole games), encoded
    as the export reads them (the card's observation encoder, as
    :meth:`hod.agents.onnx_policy.OnnxPolicy.run` applies it), with onnxruntime's outputs. JSON
    keys: ``format`` (:data:`GOLDEN_FORMAT`), ``version``, ``model`` (``model_name``, the file
    name), ``sha256`` (of ``onnx_bytes``), ``interface`` (:func:`interface`), ``count``, ``seed``,
    ``observation`` float32 [count][obs_size], ``action_mask`` int8 [count][num_actions],
    ``action`` int64 [count], ``logits`` float32 [count][num_actions] (floats as the shortest
    decimal of the float32 value).

    Raises:
        CheckpointError: the card's encoder is unknown or of another game.
    """
    import onnxruntime as ort

    from hod.agents.encoders import get_encoder

    try:
        encoder = get_encoder(card.get("obs_encoder", "none"), card["game"])
    except ConfigError as e:
        raise CheckpointError(str(e)) from None
    opts = ort.SessionOptions()   # as OnnxPolicy builds its session (one thread)
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(onnx_bytes, sess_options=opts, providers=["CPUExecutionProvider"])
    o, m = sample_positions(card["game"], card["player_counts"], count, seed)
    x = encoder.network_input(o, m, int(card["obs_size"]))
    action, logits = sess.run(list(OUTPUTS), {"observation": x, "action_mask": m})
    return {"format": GOLDEN_FORMAT, "version": GOLDEN_VERSION, "model": model_name,
            "sha256": hashlib.sha256(onnx_bytes).hexdigest(), "interface": interface(card),
            "count": int(count), "seed": int(seed),
            "observation": [_short(row) for row in x], "action_mask": m.astype(int).tolist(),
            "action": [int(a) for a in action], "logits": [_short(row) for row in logits]}


def _load_export(onnx_path: Path) -> tuple[bytes, dict]:
    """The bytes of the export ``onnx_path`` and its model card, once
    :class:`hod.agents.onnx_policy.OnnxPolicy` loads it (card beside it, sha256, sizes)."""
    from hod.agents.onnx_policy import OnnxPolicy

    policy = OnnxPolicy(onnx_path)
    return read_limited(onnx_path, model_card.MAX_FILE_BYTES, "MAX_FILE_BYTES", "ONNX file"), policy.model_card


def write_golden(onnx_path: str | Path, count: int = GOLDEN_COUNT, seed: int = GOLDEN_SEED) -> Path:
    """Write ``NAME.golden.json`` (:func:`golden_data`) beside the export ``onnx_path``
    (atomically) and return its path.

    Raises:
        CheckpointError: the export cannot be loaded (see :class:`hod.agents.onnx_policy.OnnxPolicy`).
        OSError: the file cannot be read or written (its ``filename`` named).
    """
    onnx_path = Path(onnx_path)
    data, card = _load_export(onnx_path)
    return atomic_write_many([(golden_path(onnx_path), json_bytes(golden_data(data, card, onnx_path.name, count,
                                                                               seed)))])[0]


def load_golden(path: str | Path) -> dict:
    """Read a golden file (:func:`write_golden`) as numpy arrays: ``observation`` float32 (N, W),
    ``action_mask`` int8 (N, A), ``action`` int64 (N,), ``logits`` float32 (N, A), plus the
    other keys as read. JSON only (nothing is executed or unpickled).

    Raises:
        CheckpointError: unreadable, larger than :data:`~hod.agents.model_card.MAX_JSON_BYTES`
            (refused before it is read), JSON nested too deeply, another format or version, or
            arrays of inconsistent shapes.
    """
    p = Path(path)
    try:
        data = parse_json(read_limited(p, model_card.MAX_JSON_BYTES, "MAX_JSON_BYTES", "golden file"),
                          f"{p}: not a readable golden file")
    except OSError as e:
        raise CheckpointError(f"{p}: not a readable golden file: {e}") from e
    if not isinstance(data, dict) or data.get("format") != GOLDEN_FORMAT or data.get("version") != GOLDEN_VERSION:
        raise CheckpointError(f"{p}: not a golden file (format {GOLDEN_FORMAT!r} version {GOLDEN_VERSION} expected)")
    try:
        out = dict(data, observation=np.array(data["observation"], np.float32),
                   action_mask=np.array(data["action_mask"], np.int8), action=np.array(data["action"], np.int64),
                   logits=np.array(data["logits"], np.float32))
    except (KeyError, ValueError, TypeError) as e:
        raise CheckpointError(f"{p}: golden arrays missing or ragged: {e}") from e
    n = len(out["action"])
    if not (out["observation"].ndim == 2 and out["observation"].shape[0] == n and out["action_mask"].shape[0] == n
            and out["logits"].shape == out["action_mask"].shape):
        raise CheckpointError(f"{p}: golden arrays of inconsistent shapes")
    return out


def document_export(onnx_path: str | Path) -> tuple[Path, Path]:
    """Write the golden vectors of the export ``onnx_path`` and add its consumer interface
    (``onnx.interface``, with ``golden`` naming the golden file) to the model card beside it.
    Returns ``(golden path, card path)``. The card embedded in the ONNX file is left as it is
    (rewriting it would change the file and its sha256).

    Both files are written together (:func:`hod.core.atomic.atomic_write_many`): both, or neither.

    Raises:
        CheckpointError: no readable model card beside the export, or an export that cannot be loaded.
        OSError: a file cannot be written (a folder in place of the golden file, a full disk; its
            ``filename`` named); neither file is changed.
    """
    onnx_path = Path(onnx_path)
    card_path = onnx_path.with_suffix(".json")
    data, embedded = _load_export(onnx_path)
    try:
        card = parse_json(read_limited(card_path, model_card.MAX_JSON_BYTES, "MAX_JSON_BYTES", "model card"),
                          f"{card_path}: no readable model card beside the export")
    except OSError as e:
        raise CheckpointError(f"{card_path}: no readable model card beside the export: {e}") from e
    if not isinstance(card, dict) or not isinstance(card.setdefault("onnx", {}), dict):
        raise CheckpointError(f"{card_path}: the model card is not a JSON object with an onnx object")
    golden = golden_path(onnx_path)
    card["onnx"]["interface"] = dict(interface(card), golden=golden.name)
    atomic_write_many([(golden, json_bytes(golden_data(data, embedded, onnx_path.name))),
                       (card_path, json_bytes(card))])
    return golden, card_path


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
    """Entry point of ``python -m hod.training.export``; returns the exit status: 0; 2 with a
    one-line ``error: ...`` for an unusable checkpoint, a bad ``--name`` or ``--opset``, an
    ``--out`` that is a file or whose target file is a folder (:func:`check_export_targets`), or
    an ``--out`` that is the shipped opponents' folder without ``--overwrite-shipped``
    (:func:`check_not_shipped`); 74 (:data:`hod.core.commands.EXIT_WRITE_FAILED`) with one line
    ``error: [cannot write ]<path>: <reason>`` when a file cannot be written (nothing is
    written then)."""
    p = argparse.ArgumentParser(prog="python -m hod.training.export",
                                description="Export a training checkpoint's policy to ONNX with its model card.")
    p.add_argument("checkpoint", help="checkpoint .zip written by hod.training.train (with --golden: an .onnx export)")
    p.add_argument("--golden", action="store_true",
                   help="write the golden test vectors (NAME.golden.json) and the card's consumer interface of an "
                        "existing export instead of exporting")
    p.add_argument("--out", help="output folder (default: the checkpoint's folder)")
    p.add_argument("--name", help="file stem (default: <game>_ppo)")
    p.add_argument("--opset", type=int_option(14, MAX_OPSET), default=OPSET,
                   help=f"ONNX opset (14..{MAX_OPSET}, default %(default)s)")
    p.add_argument("--overwrite-shipped", action="store_true",
                   help="allow --out to be the shipped opponents' folder (agents/opponents) and replace a shipped "
                        "opponent of the same name, or --golden to rewrite a shipped opponent's golden vectors and "
                        "card (refused without it)")
    args = p.parse_args(argv)
    if args.golden:
        try:
            if not args.overwrite_shipped:
                check_golden_not_shipped(args.checkpoint)
            golden, card_path = document_export(args.checkpoint)
        except (CheckpointError, ValueError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        except OSError as e:   # a write refused: nothing changed
            print(write_error_line(e), file=sys.stderr)
            return EXIT_WRITE_FAILED
        print(f"wrote {golden} and updated {card_path}")
        return 0
    try:
        if args.name is not None:
            check_name(args.name)                   # the same refusals, in export_onnx's order,
        check_checkpoint_path(args.checkpoint)      # before the shipped check reads the card
        if not args.overwrite_shipped:
            check_not_shipped(args.checkpoint, args.out, args.name)
        onnx_path, model_card_path = export_onnx(args.checkpoint, args.out, args.name, args.opset)
    except (CheckpointError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OSError as e:   # a write refused (disk full...): nothing written
        print(write_error_line(e), file=sys.stderr)
        return EXIT_WRITE_FAILED
    print(f"wrote {onnx_path}, {model_card_path} and {golden_path(onnx_path)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
