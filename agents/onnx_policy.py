"""Trained policies exported to ONNX, played with onnxruntime and numpy only (no torch, no pickle).

An export is ``NAME.onnx`` (written by ``python -m hod.training.export``) and, next to it,
``NAME.json``, its model card. The graph takes ``observation`` float32 [B, obs_size] and
``action_mask`` int8 [B, num_actions], applies the mask itself and returns ``action`` (argmax of
the masked logits) and ``logits`` (illegal actions at -1e8). The card is also embedded in the
ONNX metadata (key ``model_card``); the embedded card is the one checked, against the card
beside it, the graph's input widths and the installed game. The card beside the export also
records the file's sha256 (``onnx.sha256``): :class:`OnnxPolicy` refuses an export without that
card unless told ``verify=False``.

Before onnxruntime builds a session, the file is at most
:data:`~hod.agents.model_card.MAX_FILE_BYTES`, its card at most ``MAX_JSON_BYTES``, and the
tensors the graph stores are measured from their declared dims (:func:`check_graph_tensors`,
read with the ``onnx`` package: protobuf only): at most
:data:`~hod.agents.model_card.MAX_PARAMETERS` numbers, none kept in external data, and its
operators are those an export uses (:func:`check_graph_operators`) and every value it computes has
an inferred shape of at most ``MAX_LAYER_WIDTH`` numbers per batch row (:func:`check_graph_shapes`).

Shipped opponents live in ``agents/opponents/<game>_ppo*.onnx``;
:func:`register_shipped_opponents` registers each as ``agents.make(game, "ppo")``
(``<game>_ppo.onnx``) or ``agents.make(game, "ppo_<suffix>")`` (``<game>_ppo_<suffix>.onnx``).
"""
from __future__ import annotations

import functools
import hashlib
import json
import math
from pathlib import Path
from typing import Any, Iterator, Optional

import numpy as np

from hod.core.errors import ConfigError

from .base import Bot, BeliefSampler, Observation, legal_actions
from .encoders import get_encoder
from .rules import check_rules, rule_options

OPPONENTS_DIR = Path(__file__).resolve().parent / "opponents"
METADATA_KEY = "model_card"


def _checkpoint_error():
    from hod.agents.model_card import CheckpointError

    return CheckpointError


def _file_stamp(path: Path) -> tuple:
    """``(mtime_ns, size)`` of ``path``, or ``()`` when it cannot be read (so a cache key changes
    when the file is rewritten, created or removed)."""
    try:
        st = path.stat()
    except OSError:
        return ()
    return (st.st_mtime_ns, st.st_size)


def _fixed_width(arg) -> Optional[int]:
    """The second dimension of a graph input ``[batch, width]`` when it is a fixed int, else None."""
    shape = list(arg.shape or [])
    return shape[1] if len(shape) == 2 and isinstance(shape[1], int) else None


def _graph_tensors(graph) -> Iterator[tuple[str, Any]]:
    """``(where, TensorProto)`` of every tensor stored in ``graph`` (a ``GraphProto``, or a
    ``FunctionProto``: nodes only) and its subgraphs: initializers, sparse initializers (values
    and indices) and the tensors of node attributes (``Constant``'s ``value``, ...)."""
    from onnx import AttributeProto

    for t in getattr(graph, "initializer", ()):
        yield f"initializer {t.name!r}", t
    for sp in getattr(graph, "sparse_initializer", ()):
        yield f"sparse initializer {sp.values.name!r}", sp.values
        yield f"sparse initializer {sp.values.name!r} indices", sp.indices
    for node in graph.node:
        for a in node.attribute:
            where = f"node {node.name or node.op_type!r} attribute {a.name!r}"
            if a.type == AttributeProto.TENSOR:
                yield where, a.t
            elif a.type == AttributeProto.TENSORS:
                yield from ((where, t) for t in a.tensors)
            elif a.type in (AttributeProto.SPARSE_TENSOR, AttributeProto.SPARSE_TENSORS):
                for sp in ([a.sparse_tensor] if a.type == AttributeProto.SPARSE_TENSOR else a.sparse_tensors):
                    yield where, sp.values
                    yield f"{where} indices", sp.indices
            elif a.type == AttributeProto.GRAPH:
                yield from _graph_tensors(a.g)
            elif a.type == AttributeProto.GRAPHS:
                for g in a.graphs:
                    yield from _graph_tensors(g)


def check_graph_tensors(data: bytes, source: str, limit: Optional[int] = None) -> int:
    """Check the tensors an ONNX model stores (initializers, constants, in its graph, subgraphs
    and functions) from the dims their protobuf declares, before anything is allocated for them:
    none keeps its data outside the file (external data is never loaded), no dim is negative, and
    they hold at most ``limit`` numbers in all (None: :data:`hod.agents.model_card.MAX_PARAMETERS`).
    Returns that count. Its operators and the shapes of the values it computes are checked too
    (:func:`check_graph_operators`, :func:`check_graph_shapes`: what can allocate at run time). The bytes are parsed with ``onnx`` (protobuf only: nothing runs).

    Raises:
        CheckpointError: not an ONNX model, external data, a negative dim, more numbers than
            ``limit`` (the limit is named), or an operator a policy export does not use.
        ImportError: the ``onnx`` package is missing (``pip install house-of-decks-rl[onnx]``).
    """
    import onnx

    from hod.agents import model_card

    err = _checkpoint_error()
    limit = model_card.MAX_PARAMETERS if limit is None else limit
    try:
        proto = onnx.load_model_from_string(data)
    except Exception as e:   # protobuf's DecodeError and friends
        raise err(f"{source}: not a loadable ONNX model (truncated or corrupt?): {type(e).__name__}: {e}") from e
    check_graph_operators(proto, source)
    check_graph_shapes(proto, source)
    total = 0
    for g in [proto.graph, *proto.functions]:
        for where, t in _graph_tensors(g):
            if t.data_location == onnx.TensorProto.EXTERNAL or len(t.external_data):
                raise err(f"{source}: {where} keeps its data in an external file; refused (an export holds its "
                          f"weights inside the .onnx file, and external data is never loaded)")
            if any(d < 0 for d in t.dims):
                raise err(f"{source}: {where} declares dims {list(t.dims)}; legal: dims >= 0")
            total += math.prod(t.dims)
            if total > limit:
                raise err(f"{source}: the graph stores more than {limit:,} numbers (its initializers and constants, "
                          f"from their declared dims; {where} takes the count over); the limit is MAX_PARAMETERS = "
                          f"{limit:,} (hod.agents.model_card); refused before building an inference session")
    return total


#: The operators a policy export may use: those :mod:`hod.training.export` writes at every opset
#: it offers (14..20) and both activations (the MLP: ``Gemm``, ``Tanh`` / ``Relu``; the mask:
#: ``Shape``, ``ConstantOfShape``, ``Equal``, ``Not``, ``Where``, ``Cast``; ``ArgMax``; ``Constant``),
#: plus ``MatMul``, ``Add`` and ``Identity``, which other exporters write for the same layers.
#: ``ConstantOfShape`` must take its shape from a whole ``Shape`` (the mask's shape); a shape from
#: a constant could ask for any size at run time (``ConstantOfShape``, ``Expand``, ``Tile``,
#: ``Range``... : a 389-byte file made onnxruntime take 2 GB). Broadcasting can still grow a value
#: (``Add`` of [N, 1] and [1, N]): :func:`check_graph_shapes` bounds every value's inferred shape.
EXPORT_OPERATORS = frozenset({"ArgMax", "Cast", "Constant", "ConstantOfShape", "Equal", "Gemm", "Not", "Shape",
                              "Tanh", "Relu", "Where", "MatMul", "Add", "Identity"})


def check_graph_operators(proto, source: str) -> None:
    """Check that an ONNX model (a ``ModelProto``) is a policy export's kind of graph before a
    session is built: only :data:`EXPORT_OPERATORS` of the default domain (``ai.onnx``), no
    functions, no subgraphs (those operators have none), and every ``ConstantOfShape`` fed by a
    ``Shape`` node, so that no operator can allocate a tensor larger than the graph's inputs and
    stored weights.

    Raises:
        CheckpointError: the first operator, domain, function or shape source that is not allowed,
            named with the legal ones.
    """
    from onnx import AttributeProto

    err = _checkpoint_error()
    if len(proto.functions):
        raise err(f"{source}: the graph defines functions ({', '.join(f.name for f in proto.functions)}); a "
                  f"policy export has none; refused before building an inference session")
    shapes = {out for node in proto.graph.node if node.op_type == "Shape" and node.domain in ("", "ai.onnx")
              for out in node.output}
    for node in proto.graph.node:
        if node.domain not in ("", "ai.onnx") or node.op_type not in EXPORT_OPERATORS:
            op = f"{node.domain}:{node.op_type}" if node.domain else node.op_type
            raise err(f"{source}: node {node.name or node.op_type!r} uses operator {op!r}, which a policy export "
                      f"does not; legal operators: {sorted(EXPORT_OPERATORS)} (hod.agents.onnx_policy."
                      f"EXPORT_OPERATORS); refused before building an inference session")
        if any(a.type in (AttributeProto.GRAPH, AttributeProto.GRAPHS) for a in node.attribute):
            raise err(f"{source}: node {node.name or node.op_type!r} ({node.op_type}) carries a subgraph; a policy "
                      f"export has none; refused before building an inference session")
        if node.op_type == "Shape" and any(a.name in ("start", "end") for a in node.attribute):
            raise err(f"{source}: node {node.name or node.op_type!r} (Shape) takes part of a shape (start/end); a "
                      f"policy export takes a whole one; refused before building an inference session")
        if node.op_type == "ConstantOfShape" and (len(node.input) != 1 or node.input[0] not in shapes):
            raise err(f"{source}: node {node.name or node.op_type!r} (ConstantOfShape) takes its shape from "
                      f"{list(node.input)}, not from a Shape node: it could allocate any size at run time; "
                      f"refused before building an inference session")


def check_graph_shapes(proto, source: str, limit: Optional[int] = None) -> None:
    """Check that no value an ONNX policy graph computes can be large: with the shapes inferred
    by ``onnx.shape_inference`` (strict, with data propagation, so a ``ConstantOfShape`` gets the
    shape its ``Shape`` input gives), every input, intermediate and output has a known shape made
    of fixed sizes and at most one batch dimension (the graph input's symbolic first one), and its
    fixed sizes multiply to at most ``limit`` numbers per batch row (None:
    :data:`hod.agents.model_card.MAX_LAYER_WIDTH`). Broadcasting (``Add`` of a [N, 1] and a [1, N]
    tensor: N**2 numbers from 2N stored) and shapes built from stored tensors are then refused
    before onnxruntime builds anything.

    Raises:
        CheckpointError: a shape that cannot be inferred, or a value with more numbers per row
            than ``limit`` (named, with its inferred shape).
    """
    from onnx import shape_inference

    from hod.agents import model_card

    err = _checkpoint_error()
    limit = model_card.MAX_LAYER_WIDTH if limit is None else limit
    try:
        g = shape_inference.infer_shapes(proto, check_type=True, strict_mode=True, data_prop=True).graph
    except Exception as e:   # onnx's InferenceError, ValidationError and friends
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise err(f"{source}: the graph's shapes cannot be inferred ({type(e).__name__}: {first}); refused before "
                  f"building an inference session") from None
    batch = g.input[0].type.tensor_type.shape.dim[0].dim_param if len(g.input) and \
        len(g.input[0].type.tensor_type.shape.dim) else ""
    known = {vi.name: vi for vi in [*g.input, *g.value_info, *g.output]}
    for name in [i.name for i in g.input] + [o for node in g.node for o in node.output if o]:
        vi = known.get(name)
        t = vi.type.tensor_type if vi is not None else None
        if t is None or not t.HasField("shape"):
            raise err(f"{source}: the shape of {name!r} cannot be inferred; a policy export's values all have "
                      f"known shapes; refused before building an inference session")
        size, batches, dims = 1, 0, []
        for d in t.shape.dim:
            if d.HasField("dim_value"):
                size *= d.dim_value
                dims.append(d.dim_value)
            elif d.dim_param == batch and batch and not batches:
                batches += 1
                dims.append(batch)
            else:
                raise err(f"{source}: {name!r} has a dimension of unknown size ({d.dim_param or '?'}); a policy "
                          f"export's values are [batch, fixed sizes]; refused before building an inference session")
        if size > limit:
            raise err(f"{source}: {name!r} would hold {size:,} numbers per batch row (shape {dims}); the limit is "
                      f"{limit:,} (MAX_LAYER_WIDTH, hod.agents.model_card); refused before building an inference "
                      f"session")


@functools.lru_cache(maxsize=32)
def _load(path: str, threads: int, stamp: tuple = (), verify: bool = True):
    """(session, card) of an export; cached per (path, threads, stamp, verify): sessions are safe
    to share between bots, and ``stamp`` (:meth:`OnnxPolicy.__init__` passes the mtime/size of
    the ``.onnx`` file and of the card beside it) makes a rewritten file or card load again.

    Raises:
        CheckpointError: see :class:`OnnxPolicy`.
    """
    import onnxruntime as ort

    from hod.agents import model_card
    from hod.agents.model_card import parse_json, read_limited

    err = _checkpoint_error()
    p = Path(path)
    if not p.is_file():
        raise err(f"{p}: no such ONNX file")
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    data = read_limited(p, model_card.MAX_FILE_BYTES, "MAX_FILE_BYTES", "ONNX export")
    side = p.with_suffix(".json")
    side_card = None
    if side.is_file():
        side_card = parse_json(read_limited(side, model_card.MAX_JSON_BYTES, "MAX_JSON_BYTES", "model card"),
                               f"{side}: the model card")
        if not isinstance(side_card, dict):
            raise err(f"{side}: the model card is not a JSON object")
    if verify:
        # The card beside the export records the file's sha256: a corrupt byte anywhere (even in
        # the weights, which onnxruntime cannot notice) fails here.
        if side_card is None:
            raise err(f"{p}: no model card {side.name} beside it, so the file's integrity cannot be checked "
                      f"(export with python -m hod.training.export, or pass verify=False to load it unchecked)")
        onnx_entry = side_card.get("onnx")
        want = onnx_entry.get("sha256") if isinstance(onnx_entry, dict) else None
        if not isinstance(want, str):
            raise err(f"{side}: the model card holds no onnx.sha256, so the file's integrity cannot be checked "
                      f"(pass verify=False to load it unchecked)")
        if hashlib.sha256(data).hexdigest() != want:
            raise err(f"{p}: the file's sha256 does not match its model card {side.name} (corrupt or replaced file)")
    check_graph_tensors(data, str(p))   # sizes from the declared dims, before onnxruntime allocates anything
    try:
        sess = ort.InferenceSession(data, sess_options=opts, providers=["CPUExecutionProvider"])
    except Exception as e:  # onnxruntime raises its own exception types
        raise err(f"{p}: not a loadable ONNX model (truncated or corrupt?): {e}") from e
    meta = sess.get_modelmeta().custom_metadata_map
    if METADATA_KEY in meta:
        card = parse_json(meta[METADATA_KEY], f"{p}: the embedded model card")
    elif side_card is not None:
        card = side_card
    else:
        raise err(f"{p}: no embedded model card and no {side.name} beside it")
    if not isinstance(card, dict):
        raise err(f"{p}: the embedded model card is not a JSON object")
    if side_card is not None:
        for key in ("game", "obs_layout_version", "obs_size", "num_actions", "player_counts", "obs_encoder"):
            if (key in card or key in side_card) and side_card.get(key) != card.get(key):
                raise err(f"{p}: the embedded model card and {side.name} disagree on {key!r} "
                          f"({card.get(key)!r} vs {side_card.get(key)!r})")
    inputs, outputs = sess.get_inputs(), sess.get_outputs()
    names_in = [i.name for i in inputs]
    names_out = [o.name for o in outputs]
    if names_in != ["observation", "action_mask"] or names_out[:2] != ["action", "logits"]:
        raise err(f"{p}: graph inputs {names_in} / outputs {names_out} are not those of a policy export "
                  f"(inputs ['observation', 'action_mask'], outputs ['action', 'logits'])")
    for arg, key in zip(inputs, ("obs_size", "num_actions")):
        width = _fixed_width(arg)
        if width is None or width != card.get(key):
            raise err(f"{p}: graph input {arg.name!r} has shape {arg.shape}, but the model card says "
                      f"{key} = {card.get(key)!r} (expected [batch, {card.get(key)!r}])")
    return sess, card


def game_sizes(game: str) -> tuple[int, int]:
    """``(obs_size, num_actions)`` of the installed ``game``: the length of its observation layout
    (``hod.core.games.obs_layout(game).size``) and of its action list (``<game>_env.ACTION_NAMES``).

    Raises:
        CheckpointError: unknown game (the message lists the known ones).
    """
    from hod.core.games import env_module, obs_layout

    try:
        return int(obs_layout(game).size), len(env_module(game).ACTION_NAMES)
    except ConfigError as e:
        raise _checkpoint_error()(str(e)) from e


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
        verify: check the file's integrity against the model card beside it (``NAME.json``, as
            ``python -m hod.training.export`` writes it and as the shipped opponents have): the card
            must exist and hold ``onnx.sha256``, the sha256 of the file's bytes. ``verify=False``
            loads an export without that card (or with another file's bytes) unchecked; the other
            checks below still apply.

    Raises:
        CheckpointError (a ValueError): missing, truncated or corrupt file; a file, card or graph
            over the limits of :mod:`hod.agents.model_card` (``MAX_FILE_BYTES``,
            ``MAX_JSON_BYTES``, ``MAX_PARAMETERS``: :func:`check_graph_tensors`) or a tensor with
            external data, refused before a session is built; (``verify``) no card
            beside it, a card without ``onnx.sha256`` or a sha256 that differs; no/invalid model
            card, or a card for another game, player count or observation layout version than
            the installed game's; a card whose ``obs_size``/``num_actions`` differ from the
            graph's input widths or from the installed game's observation size and action count.
        ImportError: onnxruntime or onnx is not installed (``pip install house-of-decks-rl[onnx]``).
        ConfigError: an unknown option or a bad rule option (the legal ones are named);
            ``deterministic`` or ``verify`` not a bool, ``threads`` not an int >= 1,
            ``num_players`` neither None nor an int.

    Rule options of ``game`` (``**options``, only with ``game`` given, e.g. Ronda Robada's
    ``closing_ace``; :mod:`hod.agents.rules`) reach the card's observation encoder: the
    ``robada_plans`` features are then computed under the table's rules. The network itself
    was trained under the rules recorded in its card (the published ones for the shipped
    opponents), so it plays other rules through those features and the action mask.
    """

    name = "onnx"

    def __init__(self, path: str | Path, game: Optional[str] = None, num_players: Optional[int] = None,
                 deterministic: bool = True, seed: Optional[int] = None, threads: int = 1, verify: bool = True,
                 **options: Any) -> None:
        for key, value in (("deterministic", deterministic), ("verify", verify)):
            if not isinstance(value, (bool, np.bool_)):
                raise ConfigError(f"{key}={value!r}; legal values: True or False")
        if isinstance(threads, (bool, np.bool_)) or not isinstance(threads, (int, np.integer)) or threads < 1:
            raise ConfigError(f"threads={threads!r}; legal values: an int >= 1 (onnxruntime intra-op threads)")
        if num_players is not None and (isinstance(num_players, (bool, np.bool_))
                                        or not isinstance(num_players, (int, np.integer))):
            raise ConfigError(f"num_players={num_players!r}; legal values: None or an int (a table size the "
                              f"network was trained on, its card's player_counts)")
        self.rule_options = rule_options(game) if game is not None else ()   # listed in the unknown-option error
        rules = {k: options.pop(k) for k in self.rule_options if k in options}
        if rules:
            check_rules(game, rules)
        super().__init__(seed=seed, **options)
        from hod.agents.model_card import validate_model_card

        self.path = Path(path).resolve()
        # the card beside the export is part of the key: a changed card is read and checked again
        stamp = (_file_stamp(self.path), _file_stamp(self.path.with_suffix(".json")))
        self.session, card = _load(str(self.path), threads, stamp, bool(verify))
        card = validate_model_card(card, str(self.path), game=game, num_players=num_players)
        obs_size, num_actions = game_sizes(card["game"])
        self.model_card = validate_model_card(card, str(self.path), layout_version=None, obs_size=obs_size,
                                  num_actions=num_actions)
        self.game = self.model_card["game"]
        self.deterministic = deterministic
        self.rules = rules
        self.encoder = get_encoder(self.model_card.get("obs_encoder", "none"), self.game).with_rules(**rules)
        self.obs_size = int(self.model_card["obs_size"])
        self.num_actions = int(self.model_card["num_actions"])
        # distinct and sorted: a card of a run weighting its table sizes lists a size twice ([2, 2, 3])
        self.player_counts = tuple(sorted({int(k) for k in self.model_card["player_counts"]}))

    def run(self, observation: np.ndarray, action_mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Batch inference: ``(action int64 [B], masked logits float32 [B, A])``.

        Args:
            observation: float32 [B, W] (or [W]): the game's observation (the card's
                ``obs_encoder`` then appends its features, :mod:`hod.agents.encoders`) or, W =
                ``obs_size``, an already encoded one.
            action_mask: int8/bool [B, num_actions] (or [num_actions]).

        Raises:
            ValueError: wrong shapes (the expected ones are named); ConfigError (a ValueError): a
                NaN or infinite observation entry (the first one is named).
        """
        obs = np.asarray(observation, dtype=np.float32)
        mask = np.asarray(action_mask).astype(np.int8)
        if obs.ndim == 1:
            obs, mask = obs[None], mask[None]
        if obs.ndim != 2 or mask.shape != (obs.shape[0], self.num_actions):
            raise ValueError(f"{self.path.name}: expected observation (B, W) and action_mask "
                             f"(B, {self.num_actions}), got {obs.shape} and {mask.shape}")
        if not np.isfinite(obs).all():
            row, col = np.argwhere(~np.isfinite(obs))[0]
            raise ConfigError(f"{self.path.name}: observation row {row}, entry {col} = {obs[row, col]}; legal: "
                              f"finite values (the game's observation)")
        try:
            obs = self.encoder.network_input(obs, mask, self.obs_size)
        except ValueError as e:
            raise ValueError(f"{self.path.name}: {e}") from None
        action, logits = self.session.run(["action", "logits"], {"observation": obs, "action_mask": mask})
        return action, logits

    def logits(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """The masked logits float32 [B, A] of network inputs already in the graph's form: the
        second output of :meth:`run`, bit for bit, without its conversions and checks and without
        the argmax (for a caller in a loop that builds the arrays itself, e.g. the Tapeo search's
        playouts).

        Args:
            observation: float32 C-contiguous [B, obs_size] (an encoder's features included).
            action_mask: int8 [B, num_actions].

        Raises:
            onnxruntime's own errors on other dtypes or shapes (nothing is converted).
        """
        return self.session.run(["logits"], {"observation": observation, "action_mask": action_mask})[0]

    def act(self, observation: Observation, belief: Optional[BeliefSampler] = None) -> int:
        legal_actions(observation)  # raises on an empty mask
        action, logits = self.run(observation["observation"], observation["action_mask"])
        if self.deterministic:
            return int(action[0])
        z = logits[0].astype(np.float64)
        p = np.exp(z - z.max())
        p /= p.sum()
        return int(self.rng.choice(p.size, p=p))


def shipped_opponents(game: str, directory: str | Path = OPPONENTS_DIR) -> dict[str, Path]:
    """``{registry name: path}`` of ``game``'s exports in ``directory``, named ``<game>_ppo*.onnx``.

    ``tapeo_ppo.onnx`` -> ``"ppo"``; ``tapeo_ppo_4p.onnx`` -> ``"ppo_4p"``. A missing folder gives
    ``{}``.
    """
    d = Path(directory)
    if not d.is_dir():
        return {}
    return {f.stem[len(game) + 1:]: f for f in sorted(d.glob(f"{game}_ppo*.onnx"))}


def _make_shipped(path: Path, seed: Optional[int] = None, **kwargs: Any) -> OnnxPolicy:
    return OnnxPolicy(path, seed=seed, **kwargs)


def card_player_counts(path: str | Path) -> Optional[tuple]:
    """The ``player_counts`` of the model card beside the export ``path`` (``NAME.json``) as a
    sorted tuple of distinct sizes, read without loading the model (no onnxruntime); None when the
    card is missing or unreadable (loading the bot then fails with the reason); ``()``, no table
    size, when its fields are not those :class:`OnnxPolicy` accepts
    (:func:`hod.agents.model_card.check_card_fields`: e.g. ``player_counts: null`` or ``[2.0]``), so
    that no list of bots offers one that cannot be loaded."""
    from hod.agents.model_card import CheckpointError, check_card_fields

    try:
        card = json.loads(Path(path).with_suffix(".json").read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(card, dict):
        return None
    try:
        check_card_fields(card, str(path))
    except CheckpointError:
        return ()
    return tuple(sorted(set(card["player_counts"])))   # distinct, as OnnxPolicy.player_counts


def shipped_factories(game: str, directory: str | Path = OPPONENTS_DIR) -> dict[str, Any]:
    """``{registry name: factory(seed=..., **kwargs) -> OnnxPolicy}`` of :func:`shipped_opponents`.

    Nothing is loaded until a bot is made, so this never fails on a missing onnxruntime or a
    missing folder.
    """
    return {name: functools.partial(_make_shipped, path, game=game)
            for name, path in shipped_opponents(game, directory).items()}
