"""A small value network for luck-corrected evaluation (:mod:`hod.evaluation.luck`): the whole
state right after a chance event -> each seat's expected final points and win share, fitted on
the engine's self-play of a bot, saved without pickle (``.npz`` of arrays and a ``.json`` card).

Command (prints the card, with the fit's wall time)::

    python -m hod.evaluation.luck_value --game tapeo --players 2 --bot expert --games 2000 \\
        --seed 0 --out runs/luck_values/tapeo_2p

then ``python -m hod.benchmarks.tournament ... --value runs/luck_values/tapeo_2p.npz``.

Data: ``games`` games of ``bot`` against copies of itself (the tournament's schedule, duplicate
deals, seed ``seed``); at each chance event (found by the game's chance hook, as the correction
finds them) the global state (``GameInfo.state_encoder``, float32 ``(state_layout.size,)``) and,
as targets, the game's final points and win shares by seat. Model: ``D -> H -> H -> 2n``, tanh,
inputs and targets standardised, Adam on the mean squared error, weight decay, the epoch of the
best held-out loss kept (a fifth of the games held out, whole games). Inference is numpy
(:class:`ValueNet`). Any value function keeps the correction unbiased: a better fit only shrinks
its variance, provided the games it corrects are not those it was fitted on.
"""
from __future__ import annotations

import argparse
import io
import json
import sys
import time
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

from hod.core.atomic import atomic_write_many, json_bytes, json_safe
from hod.core.errors import ConfigError
from hod.core.games import get_game, load_object

from .luck import LuckSpec, LuckTable, LuckTracker, chance_hook
from .play import BotSpec
from .cli_options import players_option, prepare_out_prefix
from .schedule import make_schedule, resolve_seating, seat_orders

#: Version of the file format (the card's ``format``).
FORMAT = 1
#: The arrays of a value file, in order.
ARRAYS = ("x_mean", "x_scale", "w1", "b1", "w2", "b2", "w3", "b3", "y_mean", "y_scale")


class ValueNet:
    """A fitted value function ``V(state) -> float64 (2, n)`` (row 0 expected final points, row 1
    expected win share, by seat), numpy inference of the arrays of :data:`ARRAYS`.

    Attributes:
        name: the card's name (``"tapeo-2p-mlp-v1"``), reported as the run's value function.
        card: the model card (dict).
    """

    def __init__(self, arrays: dict, card: dict):
        self.arrays = {k: np.asarray(arrays[k], np.float64) for k in ARRAYS}
        self.card = dict(card)
        self.name = str(card["name"])
        self.n = int(card["num_players"])
        self._encode = load_object(get_game(card["game"]).state_encoder)

    def __call__(self, state: Any) -> np.ndarray:
        a = self.arrays
        x = (self._encode(state).astype(np.float64) - a["x_mean"]) / a["x_scale"]
        h = np.tanh(x @ a["w1"] + a["b1"])
        h = np.tanh(h @ a["w2"] + a["b2"])
        y = (h @ a["w3"] + a["b3"]) * a["y_scale"] + a["y_mean"]
        return y.reshape(2, self.n)

    def __reduce__(self):   # worker processes get the arrays and the card, not a module reference
        return (ValueNet, (self.arrays, self.card))


def load_value(path: str, game: str, num_players: int) -> ValueNet:
    """The value network of ``path`` (``X.npz`` with its card ``X.json``), checked for the table.

    No pickle: ``numpy.load(allow_pickle=False)`` and ``json``.

    Raises:
        ConfigError: missing or damaged files, a card that is not a JSON object, a card of another
            game, table size or global-state layout (name and version), a format other than
            :data:`FORMAT`, a card without a ``name``, an array whose shape does not fit the game's
            state layout and the table size (:func:`value_shapes`), or an array that is not finite
            (or an ``x_scale`` of 0). The message names what is legal.
    """
    p = Path(path)
    card_path = p.with_suffix(".json")
    try:
        card = json.loads(card_path.read_text())
        with np.load(p, allow_pickle=False) as z:
            arrays = {k: np.asarray(z[k], np.float64) for k in ARRAYS}
    except (OSError, ValueError, TypeError, KeyError) as e:
        raise ConfigError(f"cannot load the value network {str(p)!r} (with its card {str(card_path)!r}): {e}") from e
    if not isinstance(card, dict):
        raise ConfigError(f"the card {str(card_path)!r} of value network {str(p)!r} is {type(card).__name__} "
                          f"{card!r}; legal: a JSON object (written by python -m hod.evaluation.luck_value)")
    info = get_game(game)
    want = {"format": FORMAT, "game": game, "num_players": int(num_players),
            "state_layout": info.state_layout.game, "state_version": int(info.state_layout.version)}
    bad = {k: card.get(k) for k, v in want.items() if card.get(k) != v}
    if bad:
        raise ConfigError(f"value network {str(p)!r} does not fit this table: its card has {bad}; legal: {want}")
    if not isinstance(card.get("name"), str) or not card["name"]:
        raise ConfigError(f"the card of value network {str(p)!r} has name {card.get('name')!r}; legal: a non-empty "
                          f"string")
    d, k = info.state_layout.size, 2 * int(num_players)
    hidden = arrays["w1"].shape[1] if arrays["w1"].ndim == 2 else 0
    wrong = {a: arrays[a].shape for a, shape in value_shapes(d, hidden, int(num_players)).items()
             if arrays[a].shape != shape or not hidden}
    if wrong:
        raise ConfigError(f"value network {str(p)!r} does not fit this table: its arrays have the shapes {wrong}; "
                          f"legal, with D = {d} (the {game} state layout), H >= 1 hidden units and {k} outputs (2 x "
                          f"{num_players} players): x_mean, x_scale (D,); w1 (D, H); b1, b2 (H,); w2 (H, H); w3 (H, "
                          f"{k}); b3, y_mean, y_scale ({k},)")
    unfinite = [k for k in ARRAYS if not np.isfinite(arrays[k]).all()]
    if unfinite or not arrays["x_scale"].all():
        raise ConfigError(f"value network {str(p)!r} is damaged: arrays {unfinite or ['x_scale']} hold "
                          f"{'nan or inf' if unfinite else 'a 0 scale'}; legal: finite numbers, x_scale not 0")
    return ValueNet(arrays, card)


def value_shapes(d: int, hidden: int, num_players: int) -> dict[str, tuple[int, ...]]:
    """The shape of each array of :data:`ARRAYS` for a network of ``d`` inputs (the game's state
    layout size), ``hidden`` units per hidden layer and ``2 * num_players`` outputs."""
    k = 2 * num_players
    return {"x_mean": (d,), "x_scale": (d,), "w1": (d, hidden), "b1": (hidden,), "w2": (hidden, hidden),
            "b2": (hidden,), "w3": (hidden, k), "b3": (k,), "y_mean": (k,), "y_scale": (k,)}


class _Recorder(LuckTracker):
    """A tracker that records the global state at each chance event (no correction)."""

    def __init__(self, hook, encode, num_players: int):
        super().__init__(hook, lambda s: np.zeros((2, num_players)), 1, num_players)
        self.encode = encode
        self.rows: list = []

    def start(self, env_seed: int) -> None:
        super().start(env_seed)
        self.rows = []

    def observe(self, state) -> None:
        c = int(self.hook.count(state))
        if c > self.seen:
            self.rows.append(self.encode(state))
            self.seen = c


def collect(game: str, num_players: int, bot: str, games: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Self-play data: ``(x, y, group)``: float32 (R, D) global states at the chance events,
    float64 (R, 2n) the final points then win shares by seat, int64 (R,) the deal of each row
    (held out together)."""
    info = get_game(game)
    encode = load_object(info.state_encoder)
    specs = [BotSpec(name=bot) for _ in range(num_players)]
    rec = _Recorder(chance_hook(game), encode, num_players)
    table = LuckTable(game, num_players, specs, {}, LuckSpec(), tracker=rec)
    seating = resolve_seating("auto", num_players, games)
    xs, ys, gs = [], [], []
    for spec in make_schedule(games, num_players, seed, True, seating):
        out = table.play(spec)
        seat_slot = list(spec.seating)
        y = np.array([out.points[seat_slot[s]] for s in range(num_players)]
                     + [out.win_share[seat_slot[s]] for s in range(num_players)], np.float64)
        for row in rec.rows:
            xs.append(row)
            ys.append(y)
            gs.append(spec.deal)
    return np.array(xs, np.float32), np.array(ys, np.float64), np.array(gs, np.int64)


def fit(x: np.ndarray, y: np.ndarray, group: np.ndarray, hidden: int = 64, epochs: int = 400, seed: int = 0,
        weight_decay: float = 1e-4) -> tuple[dict, dict]:
    """Fit the network (torch, CPU); returns ``(arrays, metrics)``: the arrays of :data:`ARRAYS`
    and ``{"train_rows", "heldout_rows", "best_epoch", "heldout_r2": {"points", "win_share"}}``."""
    import torch

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    deals = np.unique(group)
    held = set(rng.permutation(deals)[: max(1, len(deals) // 5)].tolist())
    te = np.array([g in held for g in group])
    x_mean = x[~te].mean(0).astype(np.float64)
    x_scale = x[~te].std(0).astype(np.float64)
    x_scale[x_scale < 1e-6] = 1.0
    y_mean, y_scale = y[~te].mean(0), y[~te].std(0)
    y_scale[y_scale < 1e-6] = 1.0
    X = torch.tensor((x - x_mean) / x_scale, dtype=torch.float32)
    Y = torch.tensor((y - y_mean) / y_scale, dtype=torch.float32)
    tr_i, te_i = torch.tensor(np.flatnonzero(~te)), torch.tensor(np.flatnonzero(te))
    d, k = x.shape[1], y.shape[1]
    net = torch.nn.Sequential(torch.nn.Linear(d, hidden), torch.nn.Tanh(), torch.nn.Linear(hidden, hidden),
                              torch.nn.Tanh(), torch.nn.Linear(hidden, k))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3, weight_decay=weight_decay)
    best, best_epoch, best_state = float("inf"), 0, None
    batch = 256
    for epoch in range(epochs):
        perm = tr_i[torch.randperm(len(tr_i))]
        for i in range(0, len(perm), batch):
            j = perm[i:i + batch]
            opt.zero_grad()
            loss = ((net(X[j]) - Y[j]) ** 2).mean()
            loss.backward()
            opt.step()
        with torch.no_grad():
            held_loss = float(((net(X[te_i]) - Y[te_i]) ** 2).mean())
        if held_loss < best:
            best, best_epoch = held_loss, epoch
            best_state = {n_: p.detach().clone() for n_, p in net.state_dict().items()}
    net.load_state_dict(best_state)
    with torch.no_grad():
        pred = net(X[te_i]).numpy().astype(np.float64) * y_scale + y_mean
    truth = y[te]
    n = k // 2

    def r2(cols):
        resid = ((truth[:, cols] - pred[:, cols]) ** 2).sum()
        total = ((truth[:, cols] - truth[:, cols].mean(0)) ** 2).sum()
        return float(1 - resid / total) if total > 0 else float("nan")

    sd = {n_: p.numpy().astype(np.float64) for n_, p in net.state_dict().items()}
    arrays = {"x_mean": x_mean, "x_scale": x_scale, "w1": sd["0.weight"].T, "b1": sd["0.bias"],
              "w2": sd["2.weight"].T, "b2": sd["2.bias"], "w3": sd["4.weight"].T, "b3": sd["4.bias"],
              "y_mean": y_mean, "y_scale": y_scale}
    metrics = {"train_rows": int((~te).sum()), "heldout_rows": int(te.sum()), "best_epoch": best_epoch,
               "heldout_r2": {"points": r2(slice(0, n)), "win_share": r2(slice(n, k))}}
    return arrays, metrics


def save_value(prefix: str, arrays: dict, card: dict) -> list[Path]:
    """Write ``PREFIX.npz`` (the arrays, no pickle) and ``PREFIX.json`` (the card), atomically."""
    buf = io.BytesIO()
    np.savez(buf, **{k: np.asarray(arrays[k], np.float64) for k in ARRAYS})
    return atomic_write_many([(prefix + ".npz", buf.getvalue()), (prefix + ".json", json_bytes(card))])


def deals(num_players: int, games: int) -> int:
    """How many deals :func:`collect` plays in ``games`` games (the tournament's ``"auto"``
    seating: each deal in every seat order)."""
    return games // len(seat_orders(num_players, resolve_seating("auto", num_players, games)))


def min_games(num_players: int) -> int:
    """The fewest games that :func:`fit` can use: a multiple of ``num_players`` making two deals
    (one of them held out)."""
    return next(g for g in range(num_players, 1_000_001, num_players) if deals(num_players, g) >= 2)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Command line: collect self-play, fit, write the files and print the card; 0, or 2 with one
    ``error: ...`` line on bad input."""
    p = argparse.ArgumentParser(prog="python -m hod.evaluation.luck_value", description=__doc__.split("\n\n")[0])
    p.add_argument("--game", required=True, help="a game that declares a chance hook (tapeo, robada)")
    p.add_argument("--players", type=players_option, default=2, help="table size, one --game allows (default 2)")
    p.add_argument("--bot", default="expert", help="the bot whose self-play is fitted (default expert)")
    p.add_argument("--games", type=int, default=2000,
                   help="games, a multiple of --players in 2..1000000 making at least two deals (a fifth of the "
                        "deals, at least one, is held out); each deal is played in every seat order, n of them, or "
                        "n! when the games are a multiple of n! (up to 4 players): the fewest are 4, 9, 8, 10, 12 "
                        "games at 2..6 players (default 2000)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--epochs", type=int, default=400)
    p.add_argument("--out", required=True, metavar="PREFIX", help="write PREFIX.npz and PREFIX.json")
    args = p.parse_args(argv)
    try:
        info = get_game(args.game)
        chance_hook(args.game)
        if args.players not in info.player_counts:
            raise ConfigError(f"--players {args.players}; legal values: {list(info.player_counts)}")
        if not 2 <= args.games <= 1_000_000 or args.games % args.players or deals(args.players, args.games) < 2:
            raise ConfigError(f"--games {args.games}; legal values: a multiple of {args.players} in 2..1000000 that "
                              f"makes at least two deals (one is held out), e.g. {min_games(args.players)} (the "
                              f"smallest)")
        if not 1 <= args.hidden <= 4096 or not 1 <= args.epochs <= 100_000:
            raise ConfigError(f"--hidden {args.hidden} --epochs {args.epochs}; legal values: --hidden 1..4096, "
                              f"--epochs 1..100000")
        prepare_out_prefix(args.out, (".npz", ".json"))   # a bad --out fails now, not after the fit
        t0 = time.perf_counter()
        x, y, g = collect(args.game, args.players, args.bot, args.games, args.seed)
        t1 = time.perf_counter()
        arrays, metrics = fit(x, y, g, hidden=args.hidden, epochs=args.epochs, seed=args.seed)
        t2 = time.perf_counter()
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    card = {
        "format": FORMAT, "name": f"{args.game}-{args.players}p-mlp-v1", "game": args.game,
        "num_players": args.players, "state_layout": info.state_layout.game,
        "state_version": int(info.state_layout.version),
        "outputs": "expected final points by seat, then expected win share by seat (float64 (2, n))",
        "model": f"{x.shape[1]} -> {args.hidden} -> {args.hidden} -> {y.shape[1]}, tanh, standardised inputs and targets",
        "data": f"{args.games} games of {args.bot} against itself (duplicate deals, seed {args.seed}), "
                f"the global state at each chance event ({len(x)} rows)",
        "metrics": metrics, "collect_s": round(t1 - t0, 1), "fit_s": round(t2 - t1, 1),
        "command": "python -m hod.evaluation.luck_value " + " ".join(sys.argv[1:] if argv is None else argv),
        "use": "hod.evaluation.luck (value of the luck correction); not fitted on the games it corrects",
    }
    card = json_safe(card)   # nan (an undefined R^2) becomes null
    save_value(args.out, arrays, card)
    print(json.dumps(card, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
