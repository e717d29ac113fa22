"""Distil the Tapeo ``search`` bot's playout network from the shipped ``ppo``: ``python -m hod.benchmarks.tapeo_playout_distill``.

``python -m hod.benchmarks.tapeo_playout_distill [--out runs/tapeo_playout.onnx] [--hidden 32 32]
[--games 2000] [--epochs 10] [--seed 0]``; replacing the network the search loads takes
``--out agents/tapeo_playout.onnx --overwrite-shipped``.

The search bot (:mod:`hod.agents.tapeo_search`) spends most of a decision in the playout
policy's network. Its playouts only need the teacher's *distribution* over the picks, so a much
smaller network trained to match it (soft targets: the teacher's masked softmax) plays them at a
fraction of the cost; the root candidates are still ranked by the teacher itself.

1. **Rows.** For each table size 2..6, ``--games`` seeded games (engine seeds ``seed + 1000 *
   players + k``) are played in the batched engine (:class:`tapeo_env.rules.batched.BatchedTapeo`)
   with the teacher in every seat, each pick sampled from its masked softmax (the search's own
   playout policy); every row of a seat with more than one legal kind is kept with the teacher's
   logits: the positions a playout meets.
2. **Training.** A tanh MLP ``157 -> hidden... -> 10`` (torch, one thread, Adam, batches of 1024,
   learning rate 2e-3, divided by 4 for the last third of the epochs), loss: the cross-entropy of the student's masked
   softmax against the teacher's (= KL + the teacher's entropy). 5% of the games are held out:
   the report gives their KL (nats per row) and the share of rows where both argmaxes agree.
3. **Export.** The graph is the one :mod:`hod.training.export` writes (inputs ``observation``
   float32 [batch, 157] and ``action_mask`` int8 [batch, 10], the mask applied inside,
   outputs ``action`` and ``logits``), built with ``onnx.helper`` from the weights; the model
   card takes the teacher's interface (game, layout, sizes, player counts, rules; not its
   training, evaluations or pool), with ``algorithm`` ``"distillation"``, the student's
   ``policy.net_arch``, the libraries, and a ``training`` entry naming the teacher (file and
   sha256), the rows, the epochs, the seed and the held-out figures; then its
   golden vectors (:func:`hod.training.export.golden_data`). The three files (``NAME.onnx``,
   ``NAME.json``, ``NAME.golden.json``) are checked as the loader checks them (graph tensors,
   operators, shapes, model card) and written together, all or none
   (:func:`hod.core.atomic.atomic_write_many`). Loaded like every export
   (:class:`hod.agents.onnx_policy.OnnxPolicy`: sha256, operators, shapes; no pickle).

Needs torch and onnx (``pip install house-of-decks-rl[train]``). Seeded: the same command writes
the same rows; torch's training on one thread is repeatable on one machine.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import time
from pathlib import Path
from typing import Optional

import numpy as np

from hod.agents.onnx_policy import OPPONENTS_DIR, OnnxPolicy
from hod.core.atomic import atomic_write_many, json_bytes
from hod.core.deal import SEED_LIMIT
from hod.core.errors import ConfigError

PROG = "python -m hod.benchmarks.tapeo_playout_distill"
#: Where the search bot loads its playout network from (hod.agents.tapeo_search.PLAYOUT_NETWORK):
#: the command writes there only with ``--overwrite-shipped``.
SHIPPED_OUT = OPPONENTS_DIR.parent / "tapeo_playout.onnx"
#: The command's default ``--out``: a run's folder, not the shipped file.
DEFAULT_OUT = Path("runs") / "tapeo_playout.onnx"
#: ``--games``: one batch of the batched engine, at most its limit (``BatchedTapeo``'s batch_size).
MAX_GAMES = 1 << 24
#: ``--seed``: at most 2**63-1, so the engine seeds ``seed + 1000 * players + k`` (players <= 6,
#: k < MAX_GAMES) stay below 2**64 (:data:`hod.core.deal.SEED_LIMIT`); 2**64-1 overflowed.
MAX_SEED = 2**63 - 1
assert MAX_SEED + 1000 * 6 + MAX_GAMES < SEED_LIMIT


def out_files(out: Path) -> list[Path]:
    """The files a run writes: ``out``, its card ``out.with_suffix(".json")`` and its golden
    vectors (:func:`hod.training.export.golden_path`)."""
    from hod.training.export import golden_path

    return [out, out.with_suffix(".json"), golden_path(out)]


def check_out(out: Path) -> list[Path]:
    """Check before any work that ``--out`` can be written: its folder exists or can be made
    (:func:`hod.training.config.check_out_dir`: not a file, writable) and none of
    :func:`out_files` is a folder. Returns :func:`out_files`.

    Raises:
        ConfigError: naming the path and the legal values.
    """
    from hod.training.config import check_out_dir

    try:
        check_out_dir(out.parent)
    except ConfigError as e:
        raise ConfigError(str(e).replace(f"--out {out.parent}", f"--out {out}", 1)) from None
    files = out_files(out)
    taken = [str(f) for f in files if f.is_dir()]
    if taken:
        raise ConfigError(f"--out {out}: {', '.join(taken)} is a folder; legal: an --out whose "
                          f"{', '.join(f.name for f in files)} are files or do not exist yet")
    return files


def playout_rows(teacher: OnnxPolicy, players: int, games: int, seed: int) -> tuple:
    """``(obs float32 (R, 157), mask int8 (R, 10), logits float32 (R, 10), game int64 (R,))``: the
    rows of seats with a choice in ``games`` games of ``players`` players played by ``teacher``
    sampled from its softmax (module docstring, step 1); ``game`` is the row's game index."""
    from tapeo_env.rules import engine
    from tapeo_env.rules.batched import BatchedTapeo

    eng = BatchedTapeo(engine.Config(num_players=players), games, seed=seed)
    eng.reset(seeds=np.arange(games, dtype=np.uint64) + np.uint64(seed + 1000 * players))
    rng = np.random.default_rng(seed + players)
    O, M, L, G = [], [], [], []
    gid = np.repeat(np.arange(games), players)
    while not eng.terminal.all():
        obs = eng.observe().reshape(games * players, -1)
        mask = eng.legal_mask().reshape(games * players, -1)
        picks = mask.argmax(axis=1)              # a forced seat's one kind
        ask = np.flatnonzero(mask.sum(axis=1) > 1)
        if ask.size:
            _, logits = teacher.run(obs[ask], mask[ask])
            z = logits.astype(np.float64)
            p = np.exp(z - z.max(axis=1, keepdims=True))
            cum = np.cumsum(p, axis=1)
            u = rng.random(ask.size)[:, None] * cum[:, -1:] * (1 - 1e-12)
            picks[ask] = (cum <= u).sum(axis=1)
            O.append(obs[ask].copy())
            M.append(mask[ask].copy())
            L.append(logits)
            G.append(gid[ask])
        eng.step(picks.reshape(games, players))
    return np.concatenate(O), np.concatenate(M), np.concatenate(L), np.concatenate(G)


def _soft_ce(student, teacher_logits, mask):
    """Mean over rows of -sum p_teacher log p_student, both softmaxes masked (torch tensors)."""
    legal = mask > 0
    s = student.masked_fill(~legal, -1e9).log_softmax(dim=1)
    p = teacher_logits.masked_fill(~legal, -1e9).softmax(dim=1)
    return -(p * s.masked_fill(~legal, 0.0)).sum(dim=1).mean()


def train(obs, mask, logits, hidden: tuple, epochs: int, seed: int, holdout) -> tuple:
    """Train the student (module docstring, step 2). Returns ``(weights, report)``: weights a list
    of ``(W float32 (out, in), b float32 (out,))`` per layer; report the held-out KL and argmax
    agreement."""
    import torch

    torch.manual_seed(seed)
    torch.set_num_threads(1)
    sizes = [obs.shape[1], *hidden, logits.shape[1]]
    layers = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [torch.nn.Linear(a, b), torch.nn.Tanh()]
    net = torch.nn.Sequential(*layers[:-1])
    X, Mk, T = torch.as_tensor(obs), torch.as_tensor(mask), torch.as_tensor(logits)
    tr = np.flatnonzero(~holdout)
    te = np.flatnonzero(holdout)
    opt = torch.optim.Adam(net.parameters(), lr=2e-3)
    gen = np.random.default_rng(seed)
    bs = 1024
    for ep in range(epochs):
        if ep == (2 * epochs) // 3:
            for g in opt.param_groups:
                g["lr"] *= 0.25
        order = gen.permutation(tr)
        tot = 0.0
        for i in range(0, order.size, bs):
            j = torch.as_tensor(order[i:i + bs])
            loss = _soft_ce(net(X[j]), T[j], Mk[j])
            opt.zero_grad()
            loss.backward()
            opt.step()
            tot += float(loss.detach()) * j.numel()
        print(f"  epoch {ep + 1}/{epochs}: train cross-entropy {tot / order.size:.4f}", flush=True)
    with torch.no_grad():
        j = torch.as_tensor(te)
        out = net(X[j])
        ce = float(_soft_ce(out, T[j], Mk[j]))
        ent = float(_soft_ce(T[j], T[j], Mk[j]))
        legal = Mk[j] > 0
        agree = float((out.masked_fill(~legal, -1e9).argmax(1) == T[j].masked_fill(~legal, -1e9).argmax(1))
                      .float().mean())
    weights = [(m.weight.detach().numpy().astype(np.float32), m.bias.detach().numpy().astype(np.float32))
               for m in net if isinstance(m, torch.nn.Linear)]
    return weights, {"heldout_rows": int(te.size), "heldout_kl_nats": round(ce - ent, 5),
                     "heldout_argmax_agreement": round(agree, 5)}


def graph_bytes(weights: list, card: dict, opset: int = 17) -> bytes:
    """The ONNX bytes of a tanh MLP with the export's interface (module docstring, step 3), the
    card embedded under ``model_card``."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    obs_size, num_actions = weights[0][0].shape[1], weights[-1][0].shape[0]
    inits, nodes = [], [helper.make_node("Cast", ["observation"], ["x0"], to=TensorProto.FLOAT)]
    x = "x0"
    for k, (W, b) in enumerate(weights):
        inits += [numpy_helper.from_array(W, f"layer{k}.weight"), numpy_helper.from_array(b, f"layer{k}.bias")]
        y = f"gemm{k}"
        nodes.append(helper.make_node("Gemm", [x, f"layer{k}.weight", f"layer{k}.bias"], [y], alpha=1.0, beta=1.0,
                                      transB=1))
        if k < len(weights) - 1:
            nodes.append(helper.make_node("Tanh", [y], [f"h{k}"]))
            y = f"h{k}"
        x = y
    nodes += [
        helper.make_node("Cast", ["action_mask"], ["mask64"], to=TensorProto.INT64),
        helper.make_node("Constant", [], ["zero"], value=numpy_helper.from_array(np.array(0, np.int64))),
        helper.make_node("Equal", ["mask64", "zero"], ["illegal"]),
        helper.make_node("Not", ["illegal"], ["legal"]),
        helper.make_node("Shape", [x], ["shape"]),
        helper.make_node("ConstantOfShape", ["shape"], ["floor"],
                         value=numpy_helper.from_array(np.array([-1e8], np.float32))),
        helper.make_node("Where", ["legal", x, "floor"], ["logits"]),
        helper.make_node("ArgMax", ["logits"], ["action"], axis=-1, keepdims=0, select_last_index=0),
    ]
    g = helper.make_graph(
        nodes, "tapeo_playout",
        [helper.make_tensor_value_info("observation", TensorProto.FLOAT, ["batch", obs_size]),
         helper.make_tensor_value_info("action_mask", TensorProto.INT8, ["batch", num_actions])],
        [helper.make_tensor_value_info("action", TensorProto.INT64, ["batch"]),
         helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", num_actions])],
        inits)
    proto = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="house-of-decks-rl hod.benchmarks.tapeo_playout_distill")
    proto.ir_version = 8
    entry = proto.metadata_props.add()
    entry.key, entry.value = "model_card", json.dumps(card)
    onnx.checker.check_model(proto)
    return proto.SerializeToString()


def distill(out: Path = DEFAULT_OUT, hidden: tuple = (32, 32), games: int = 2000, epochs: int = 10,
            seed: int = 0, teacher: str = "ppo") -> dict:
    """Rows, training and export (module docstring, steps 1-3): writes ``out``, its card
    ``out.with_suffix(".json")`` and its golden vectors (``NAME.golden.json``), all three or none
    (:func:`hod.core.atomic.atomic_write_many`), and returns the card.

    Args:
        out: the ``.onnx`` file to write (the search loads :data:`SHIPPED_OUT`).
        hidden: the hidden layers' widths.
        games: games played per table size (2..6) for the rows.
        epochs: passes over the training rows.
        seed: seed of the games, the sampling, the split and torch.
        teacher: the registered Tapeo ONNX bot distilled (default the shipped ``ppo``).

    Raises:
        hod.agents.model_card.CheckpointError: the teacher cannot be loaded, or the export fails
            the loader's checks (graph tensors, model card); nothing is written then.
        OSError: a file cannot be written (a folder in its place...); none is written.
        ImportError: torch or onnx missing.
    """
    from hod import agents
    from hod.agents import model_card
    from hod.agents.onnx_policy import check_graph_tensors, game_sizes
    from hod.training.export import golden_data, golden_path, interface

    t0 = time.time()
    tbot = agents.make("tapeo", teacher, seed=seed)
    parts = [playout_rows(tbot, n, games, seed) for n in range(2, 7)]
    obs = np.concatenate([p[0] for p in parts])
    mask = np.concatenate([p[1] for p in parts])
    logits = np.concatenate([p[2] for p in parts])
    holdout = np.concatenate([p[3] % 20 == 19 for p in parts])      # 5% of the games
    print(f"{obs.shape[0]:,} rows ({', '.join(f'{n}p {p[0].shape[0]:,}' for n, p in zip(range(2, 7), parts))}) "
          f"in {time.time() - t0:.0f} s", flush=True)
    weights, report = train(obs, mask, logits, tuple(hidden), epochs, seed, holdout)
    print(f"held out: {report}", flush=True)
    import onnx
    import torch

    # the teacher's interface (game, layout, sizes, table sizes, rules); not its training,
    # evaluations or pool, which describe the teacher
    card = {k: json.loads(json.dumps(tbot.model_card[k])) for k in
            ("format", "card_version", "game", "player_counts", "obs_layout_version", "obs_size", "obs_encoder",
             "num_actions", "rules") if k in tbot.model_card}
    card["created"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    card["libraries"] = {"numpy": np.__version__, "torch": torch.__version__, "onnx": onnx.__version__}
    card["algorithm"] = "distillation"
    card["policy"] = {"net_arch": [int(h) for h in hidden], "activation": "tanh"}
    card["training"] = {
        "teacher": {"name": teacher, "file": tbot.path.name,
                    "sha256": hashlib.sha256(tbot.path.read_bytes()).hexdigest()},
        "purpose": "the playout policy of the Tapeo search bot (hod.agents.tapeo_search)",
        "loss": "cross-entropy against the teacher's masked softmax",
        "rows": int(obs.shape[0]), "games_per_table_size": int(games), "table_sizes": [2, 3, 4, 5, 6],
        "epochs": int(epochs), "seed": int(seed), "command": f"{PROG} --hidden {' '.join(map(str, hidden))} "
        f"--games {games} --epochs {epochs} --seed {seed}", **report,
        "wall_clock_s": round(time.time() - t0, 1)}
    out = Path(out)
    card["onnx"] = {"file": out.name, "opset": 17,
                    "inputs": {"observation": ["batch", card["obs_size"], "float32"],
                               "action_mask": ["batch", card["num_actions"], "int8"]},
                    "outputs": {"action": ["batch", "int64"], "logits": ["batch", card["num_actions"], "float32"]}}
    data = graph_bytes(weights, card)
    card["onnx"]["sha256"] = hashlib.sha256(data).hexdigest()
    card["onnx"]["interface"] = dict(interface(card), golden=golden_path(out).name)
    # what OnnxPolicy checks when it loads the export, on the bytes and card about to be written
    check_graph_tensors(data, str(out))
    obs_size, num_actions = game_sizes(card["game"])
    model_card.validate_model_card(card, str(out), obs_size=obs_size, num_actions=num_actions)
    golden = golden_data(data, card, out.name)
    onnx_path, card_path, golden_file = out_files(out)
    atomic_write_many([(onnx_path, data), (card_path, json_bytes(card)), (golden_file, json_bytes(golden))])
    return card


def main(argv: Optional[list[str]] = None) -> dict:
    """Entry point: :func:`distill` with the options (it prints the row counts and the held-out
    figures, and writes ``--out``, its card and its golden vectors); returns the card.

    Raises:
        SystemExit: status 2 with argparse's usage error for an option out of range, an ``--out``
            that cannot be written (:func:`check_out`) or the shipped network without
            ``--overwrite-shipped`` (nothing run); 130 (143) with one line on Ctrl-C (SIGTERM),
            74 with one line when a file cannot be written (:func:`hod.core.commands.long_command`).
        hod.agents.model_card.CheckpointError, ImportError: as :func:`distill`.
    """
    from hod.core.commands import long_command
    from hod.evaluation.cli_options import int_option

    ap = argparse.ArgumentParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT,
                    help=f"the export to write (default {DEFAULT_OUT}; the search's own, {SHIPPED_OUT}, only with "
                         f"--overwrite-shipped)")
    ap.add_argument("--overwrite-shipped", action="store_true",
                    help="allow --out to be the shipped playout network the search loads (refused without it)")
    ap.add_argument("--hidden", type=int_option(1, 1024), nargs="+", default=[32, 32], help="hidden widths (default 32 32)")
    ap.add_argument("--games", type=int_option(1, MAX_GAMES), default=2000,
                    help=f"games per table size, 1..{MAX_GAMES} (default 2000)")
    ap.add_argument("--epochs", type=int_option(1), default=10, help="epochs (default 10)")
    ap.add_argument("--seed", type=int_option(0, MAX_SEED, "0..2**63-1"), default=0,
                    help="seed, 0..2**63-1 (default 0; the engine seeds seed + 1000 * players + k stay below 2**64)")
    args = ap.parse_args(argv)
    if args.out.resolve() == SHIPPED_OUT.resolve() and not args.overwrite_shipped:
        ap.error(f"--out {args.out} is the shipped playout network the search loads; legal: another --out "
                 f"(default {DEFAULT_OUT}), or --overwrite-shipped to replace it")
    try:   # before any game or training: a path that cannot be written fails now, not after the run
        check_out(args.out)
    except ConfigError as e:
        ap.error(str(e))
    with long_command():
        return distill(args.out, tuple(args.hidden), args.games, args.epochs, args.seed)


if __name__ == "__main__":
    main()
