"""Per-action values from playouts of the true state, and a policy fitted to them by KL-regularised
all-action policy improvement (Monte-Carlo action values, as DouZero's, on our batched engines).

A turn-based game's batched engine (``GameInfo.dynamics == "sequential"``) plays ``games`` tables
with a *continuation* policy in every seat (a registered bot with ``act_batch``, e.g. Ronda
Robada's ``expert``, or an ONNX export of the game, played greedily). At each decision of those
games with at least two legal actions, with probability ``sample_prob``, the position is
*sampled*: its observation and mask are recorded, and for **every** legal action ``a`` a copy of
the whole state (hidden cards and the deck's order included) takes ``a`` and is played to the end
by the continuation policy in every seat, the acting seat's later decisions too. The acting seat's
outcome of that playout is the value of ``a``:

    value = win share + margin / 100

(win share: 1, or 1/k for k tied winners, else 0; margin: the seat's points minus the mean of
the others'; the unit of both games' search bots, ``CandidateSearchBot``); the win share alone is
kept too. The copies of one position share the true hidden cards and the deck's order (common
random numbers): with a deterministic continuation (an export, played greedily) the values of two
actions differ only by what the action changes; a continuation that breaks ties with its
generator (Ronda Robada's ``expert``) draws from one generator for the whole batch of playouts, so
its copies also differ by its tie-breaks (noise, not bias), and the values depend on the batch
(``games``, ``playout_rows``) as well as the seed.

What the fit learns: each bot decides from its own observation, so the hidden cards in the data
are drawn as the game draws them given what the acting seat has seen; the expected value of an
action given the observation is the continuation's expected outcome after it over the positions
consistent with the observation (what the search bots estimate by determinization). :func:`fit_policy`
moves the policy ``pi0`` towards ``pi0(a) exp(A[a] / kl_weight)`` (``A`` the centred outcomes,
:func:`advantages`): a regularised policy-improvement step over the continuation; with the fitted
network as the next continuation, repeated, it is approximate policy iteration.

Rules: the game's batched engine (Ronda Robada: ronda_robada.txt and RULINGS R1-R9 through
:mod:`robada_env.rules.batched`); this module adds no rule.

``python -m hod.training.playout_values`` records, fits, evaluates and exports (:func:`improve`;
docs/training.md "Playout values").
"""
from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Annotated, Any, Literal, Optional, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, Strict, field_validator, model_validator

from hod import agents
from hod.core.atomic import atomic_write_bytes
from hod.core.errors import ConfigError
from hod.core.games import get_game, load_object
from hod.core.rewards import final_rewards_batch, win_shares_batch

from . import config as config_mod
from .npz import npz_headers, read_arrays

#: Positions per cached chunk file.
CHUNK_STATES = 20_000
#: Bumped when the recorded arrays' meaning changes (enters the chunk files' names).
CACHE_FORMAT = 3
_KEYS = ("observation", "action_mask", "action_values", "action_wins", "action", "players")


def continuation_policy(game: str, continuation: str, seed: int, rules: Optional[dict] = None,
                        num_players: Optional[int] = None):
    """The batch policy that plays every seat: ``policy(obs float32 (M, obs_size), masks int8 (M, A))
    -> int64 (M,)``.

    Args:
        game: a declared game.
        continuation: a registered bot of ``game`` with ``act_batch`` (its batch method, e.g.
            Ronda Robada ``expert``), or the path of an ONNX export of ``game`` (``*.onnx`` with
            its model card beside it), played greedily (argmax of the masked logits) by numpy.
        seed: the bot's seed.
        rules: the table's rule options (given to a bot).
        num_players: the table size it plays (None: not checked): an export must list it in its
            card's ``player_counts``.

    Raises:
        ConfigError: an unknown bot or one without ``act_batch``, an export of another game,
            without its card or trained for other table sizes (the legal values are named).
    """
    if continuation.endswith(".onnx"):
        from .numpy_policy import NumpyBatchPolicy
        from .policy_io import onnx_numpy_policy

        if not Path(continuation).is_file():
            raise ConfigError(f"continuation={continuation!r}: no such file; legal: an existing .onnx export of "
                              f"{game} (its model card beside it) or a bot of {game} with act_batch")
        card_path = Path(continuation).with_suffix(".json")
        try:
            card = json.loads(card_path.read_text())
        except (OSError, ValueError) as e:
            raise ConfigError(f"continuation={continuation!r}: its model card {card_path} is unreadable ({e}); "
                              f"legal: an export written by hod.training.export") from None
        if card.get("game") != game:
            raise ConfigError(f"continuation={continuation!r} is an export of {card.get('game')!r}; legal: an "
                              f"export of {game!r}")
        sizes = card.get("player_counts")
        if num_players is not None and sizes and num_players not in sizes:
            raise ConfigError(f"continuation={continuation!r} was trained for {list(sizes)} players, not "
                              f"{num_players}; legal table sizes for it: {list(sizes)}")
        net = onnx_numpy_policy(continuation, (card.get("policy") or {}).get("activation", "tanh"),
                                card.get("obs_encoder", "none"))
        return NumpyBatchPolicy(net, deterministic=True, seed=seed)
    names = agents.names(game)
    if continuation not in names:
        raise ConfigError(f"continuation={continuation!r}: legal values are a bot of {game} with act_batch or an "
                          f".onnx export; bots: {names}")
    bot = agents.make(game, continuation, seed=seed, **(rules or {}),
                      **({} if num_players is None else {"num_players": num_players}))
    if not hasattr(bot, "act_batch"):
        raise ConfigError(f"continuation={continuation!r} has no act_batch (batch play); legal: a bot with "
                          f"act_batch or an .onnx export")
    return bot.act_batch


def _concat(records: Sequence[Any]) -> Any:
    """One state record of the games of ``records`` (same type), in order."""
    arrays = [r.arrays() for r in records]
    return type(records[0])(**{k: np.concatenate([a[k] for a in arrays]) for k in arrays[0]})


def _outcomes(scores: np.ndarray, seats: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """float64 (G,) win share + margin / 100, and float64 (G,) win share, of seat ``seats[g]`` in
    final ``scores`` (G, n): the rewards of :mod:`hod.core.rewards` (``margin``, :func:`win_shares_batch`;
    the winners are the seats with the top score, R8)."""
    s = np.asarray(scores, np.float64)
    rows = np.arange(len(s))
    top = s == s.max(axis=1, keepdims=True)
    share = win_shares_batch(top)[rows, seats]
    margin = final_rewards_batch(s, top, "margin")[rows, seats]
    return share + margin / 100.0, share


def _play_out(engine_cls, config: Any, record: Any, first: np.ndarray, seats: np.ndarray,
              policy) -> tuple[np.ndarray, np.ndarray]:
    """Load ``record`` (G games), apply ``first`` (G,) in each, play every game to its end with
    ``policy`` in every seat; the outcomes (:func:`_outcomes`) of ``seats``."""
    g = len(first)
    eng = engine_cls(config, g)
    eng.load_state(record)
    eng.step(first.reshape(g, 1))
    while True:
        live = np.flatnonzero(~eng.terminal)
        if live.size == 0:
            break
        obs = eng.observe(live)[:, 0]
        masks = eng.legal_mask(live)[:, 0]
        eng.step(np.asarray(policy(obs, masks), np.int64).reshape(-1, 1), games=live)
    return _outcomes(eng.scores(), seats)


def _records_playouts(game: str) -> bool:
    """True if ``game`` is turn-based and its batched engine deals finished games again inside a
    step (``step(actions, auto_reset=True)``, :class:`hod.core.engine.BatchedEngine`), which the
    recording plays on."""
    import inspect

    info = get_game(game)
    if info.dynamics != "sequential" or info.batched_engine is None:
        return False
    return "auto_reset" in inspect.signature(load_object(info.batched_engine).step).parameters


def check_game(game: str):
    """The :class:`hod.core.games.GameInfo` of ``game`` if playout values can be recorded for it.

    Raises:
        ConfigError: a simultaneous game, one without a batched engine, or one whose engine has no
            auto-reset step (Kuhn poker); the legal games are named.
    """
    from hod.core.games import game_names

    info = get_game(game)
    if not _records_playouts(game):
        legal = [g for g in game_names() if _records_playouts(g)]
        why = ("simultaneous" if info.dynamics != "sequential" else "without a batched engine"
               if info.batched_engine is None else "a batched engine without step(..., auto_reset=True)")
        raise ConfigError(f"playout values need a turn-based game whose batched engine deals finished games "
                          f"again inside a step; {game!r} is {why}; legal games: {legal}")
    return info


def record_playout_values(game: str, num_players: int, num_states: int, seed: int = 0,
                          continuation: str = "expert", sample_prob: float = 0.25, games: int = 256,
                          playout_rows: int = 8192, rules: Optional[dict] = None) -> dict[str, np.ndarray]:
    """Record ``num_states`` sampled positions of ``num_players``-seat games with every legal
    action's playout value (module docstring).

    Args:
        game: a declared turn-based game with a batched engine (Ronda Robada).
        num_players: the table size (the game's legal sizes).
        num_states: positions to record (N >= 1).
        seed: seeds the deals, the sampling and the policies (same seed, same data).
        continuation: what plays every seat (:func:`continuation_policy`).
        sample_prob: chance that a decision with two or more legal actions is sampled, in (0, 1].
        games: tables played at once.
        playout_rows: playouts are run together once this many are pending.
        rules: the table's rule options (``GameInfo.check_rule_options``).

    Returns:
        ``{"observation": float32 (N, obs_size), "action_mask": int8 (N, A), "action_values":
        float32 (N, A)}``: the acting seat's observation (the game's layout), its legal actions,
        each legal action's value and NaN on illegal ones; ``"action_wins"``, float32 (N, A), the
        same playouts' win shares alone; ``"action": int64 (N,)``, the
        continuation policy's own choice there (the action its game went on with); ``"players":
        int8 (N,)``.

    Raises:
        ConfigError: a simultaneous game or one without a batched engine, an illegal table size,
            ``num_states`` < 1, ``sample_prob`` outside (0, 1], a bad continuation or rule option
            (the legal values are named).
    """
    info = check_game(game)
    if not info.min_players <= num_players <= info.max_players:
        raise ConfigError(f"num_players={num_players!r}; legal values: {info.min_players}..{info.max_players}")
    if isinstance(num_states, bool) or not isinstance(num_states, (int, np.integer)) or num_states < 1:
        raise ConfigError(f"num_states={num_states!r}; legal values: integers >= 1")
    if isinstance(sample_prob, bool) or not (isinstance(sample_prob, (int, float)) and 0.0 < sample_prob <= 1.0):
        raise ConfigError(f"sample_prob={sample_prob!r}; legal values: numbers in (0, 1]")
    for key, v in (("games", games), ("playout_rows", playout_rows)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ConfigError(f"{key}={v!r}; legal values: integers >= 1")
    unknown = set(rules or {}) - {o.name for o in info.rule_options}
    if unknown:
        raise ConfigError(f"unknown rule option(s) {sorted(unknown)}; legal: {[o.name for o in info.rule_options]}")
    rules = info.check_rule_options(dict(rules or {}))
    engine_cls = load_object(info.batched_engine)
    ss = np.random.SeedSequence([int(seed), int(num_players), 7])
    s_deal, s_sample, s_play, s_out = (int(x) for x in ss.generate_state(4))
    play = continuation_policy(game, continuation, s_play, rules, num_players)
    play_out = continuation_policy(game, continuation, s_out, rules, num_players)
    eng = engine_cls(num_players, games, seed=s_deal, **rules)
    config = eng.config
    eng.reset()
    rng = np.random.default_rng(s_sample)
    A = info.num_actions
    obs_out, mask_out, val_out, win_out, act_out = [], [], [], [], []
    pending: list[tuple] = []          # (record, first actions, seats, position index of each row)
    pending_rows = 0
    recorded = 0

    def flush() -> None:
        nonlocal pending, pending_rows
        if not pending:
            return
        record = _concat([p[0] for p in pending])
        first = np.concatenate([p[1] for p in pending])
        seats = np.concatenate([p[2] for p in pending])
        where = np.concatenate([p[3] for p in pending])
        values, wins = _play_out(engine_cls, config, record, first, seats, play_out)
        for pos, a, v, w in zip(where.tolist(), first.tolist(), values.tolist(), wins.tolist()):
            val_out[pos][a] = v
            win_out[pos][a] = w
        pending, pending_rows = [], 0

    while recorded < num_states:
        obs = eng.observe()[:, 0]
        masks = eng.legal_mask()[:, 0]
        legal_n = (masks != 0).sum(axis=1)
        pick = np.flatnonzero((legal_n >= 2) & ~eng.terminal & (rng.random(len(masks)) < sample_prob))
        pick = pick[:num_states - recorded]
        if pick.size:
            rows_g, rows_a = np.nonzero(masks[pick] != 0)
            games_rep = pick[rows_g]
            first_pos = len(obs_out)
            for k in range(pick.size):
                obs_out.append(obs[pick[k]].copy())
                mask_out.append(masks[pick[k]].copy())
                val_out.append(np.full(A, np.nan, np.float32))
                win_out.append(np.full(A, np.nan, np.float32))
            pending.append((eng.state.take(games_rep), rows_a.astype(np.int64),
                            eng.current[games_rep].astype(np.int64), first_pos + rows_g))
            pending_rows += rows_a.size
            recorded += pick.size
            if pending_rows >= playout_rows:
                flush()
        actions = np.asarray(play(obs, masks), np.int64)
        act_out.extend(actions[pick].tolist())
        eng.step(actions.reshape(-1, 1), auto_reset=True)
    flush()
    return {"observation": np.asarray(obs_out, np.float32).reshape(-1, info.layout.size),
            "action_mask": np.asarray(mask_out, np.int8).reshape(-1, A),
            "action_values": np.asarray(val_out, np.float32).reshape(-1, A),
            "action_wins": np.asarray(win_out, np.float32).reshape(-1, A),
            "action": np.asarray(act_out, np.int64),
            "players": np.full(len(obs_out), num_players, np.int8)}


def cached_playout_values(cache_dir: str | Path, game: str, player_counts: Sequence[int], num_states: int,
                          seed: int = 0, continuation: str = "expert", sample_prob: float = 0.25,
                          rules: Optional[dict] = None, log=None) -> dict[str, np.ndarray]:
    """:func:`record_playout_values` split evenly over ``player_counts`` in chunks of
    :data:`CHUNK_STATES` positions, each chunk kept in ``cache_dir`` (written atomically, read back
    with ``allow_pickle=False``) and recorded only when its file is missing or unreadable.

    Chunk ``i`` of table size ``n`` is ``record_playout_values(..., n, CHUNK_STATES, seed=[seed, i])``
    (its own seed: a recording stopped part-way resumes, and a run with more positions reuses the
    chunks); the files are ``pv<CACHE_FORMAT>_<game>_<n>p_<continuation stem>_s<seed>_p<sample_prob><rules>_<i>.npz``,
    ``<rules>`` naming each rule option that differs from its default (e.g. ``_closing_ace0``).
    A file that is unreadable or holds arrays of other shapes is recorded again.
    A continuation network's file name enters the key, not its contents: clear the folder after
    changing a network in place.

    Returns:
        the arrays of :func:`record_playout_values`, the chunks of every table size concatenated
        (sizes interleaved chunk by chunk), cut to ``num_states`` rows.

    Raises:
        ConfigError: as :func:`record_playout_values`; ``player_counts`` empty or naming a size twice.
    """
    if not player_counts or len(set(player_counts)) < len(player_counts):
        raise ConfigError(f"player_counts={list(player_counts)}; legal: one or more distinct table sizes of the game")
    folder = Path(cache_dir)
    folder.mkdir(parents=True, exist_ok=True)
    stem = Path(continuation).stem if continuation.endswith(".onnx") else continuation
    info = get_game(game)
    options = info.check_rule_options(dict(rules or {}))
    changed = {o.name: options[o.name] for o in info.rule_options if o.name in options and options[o.name] != o.default}
    rules_key = "".join(f"_{k}{int(v) if isinstance(v, bool) else v}" for k, v in sorted(changed.items()))
    per = -(-num_states // len(player_counts))
    chunks = -(-per // CHUNK_STATES)
    parts = []
    for i in range(chunks):
        for n in player_counts:
            path = folder / f"pv{CACHE_FORMAT}_{game}_{n}p_{stem}_s{seed}_p{sample_prob}{rules_key}_{i}.npz"
            data = None
            if path.is_file():
                try:
                    npz_headers(str(path), 2 ** 31, "cache", str(path))
                    data = read_arrays(str(path), list(_KEYS),
                                       str(path))
                    A = info.num_actions
                    want = {"observation": (CHUNK_STATES, info.layout.size), "action_mask": (CHUNK_STATES, A),
                            "action_values": (CHUNK_STATES, A), "action_wins": (CHUNK_STATES, A),
                            "action": (CHUNK_STATES,), "players": (CHUNK_STATES,)}
                    if any(data[k].shape != shape for k, shape in want.items()):
                        data = None
                except ValueError:
                    data = None
            if data is None:
                s = int(np.random.SeedSequence([int(seed), i]).generate_state(1)[0] % (2 ** 31))
                data = record_playout_values(game, n, CHUNK_STATES, s, continuation, sample_prob, rules=rules)
                buf = io.BytesIO()
                np.savez(buf, **data)
                atomic_write_bytes(path, buf.getvalue())
                if log:
                    log(f"recorded {path.name}")
            parts.append(data)
    out = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    return {k: v[:num_states] for k, v in out.items()}


#: What the policy is fitted to: the playouts' win share alone, or win share + margin / 100.
TARGETS = ("win", "value")


def advantages(data: dict[str, np.ndarray], target: str = "win") -> np.ndarray:
    """Each legal action's playout outcome minus the mean of the legal actions' outcomes (0 on
    illegal actions): the centred targets of :func:`fit_policy` (the common part of the outcomes,
    what the deal decides whatever the action, cancels).

    Args:
        data: :func:`record_playout_values`'s arrays (``action_wins`` and ``action_values``).
        target: ``"win"``: the win shares; ``"value"``: win share + margin / 100.

    Returns:
        float32 (N, A). E.g. win shares [1, 0, NaN]: [0.5, -0.5, 0]; values [1.3, -0.2, NaN] (won
        by 30, lost by 20 at 2 players): [0.75, -0.75, 0].

    Raises:
        ConfigError: an unknown ``target`` (the legal ones are named).
    """
    if target not in TARGETS:
        raise ConfigError(f"target={target!r}; legal values: {list(TARGETS)}")
    v = np.asarray(data["action_wins" if target == "win" else "action_values"], np.float64)
    known = np.isfinite(v)
    v = np.where(known, v, 0.0)
    mean = v.sum(axis=1, keepdims=True) / np.maximum(known.sum(axis=1, keepdims=True), 1)
    return np.where(known, v - mean, 0.0).astype(np.float32)


PositiveFloat = Annotated[float, Strict(), Field(gt=0.0, description="a finite number > 0")]


class FitSettings(BaseModel):
    """The settings of :func:`fit_policy` (Adam's passes, step size and minibatch, the KL weight)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    epochs: config_mod.PositiveInt = 3
    learning_rate: PositiveFloat = 1e-4
    kl_weight: PositiveFloat = 0.03
    batch_size: config_mod.PositiveInt = 1024


class PlayoutValuesConfig(FitSettings):
    """The settings of a playout-values run (:func:`improve`; every key is a flag of
    ``python -m hod.training.playout_values``): what is recorded (``players``, ``states``,
    ``continuation``, ``sample_prob``, ``seed``), what the fit starts from (``init``) and is fitted
    to (``target``), and the fit's own settings (:class:`FitSettings`). ``train`` (overrides of the
    game's training configuration) is checked by that configuration's schema. The semantic checks
    that need the game (table sizes, continuations) follow in :func:`improve`."""

    players: list[Annotated[int, Strict()]] = Field(min_length=1, description="one or more distinct table sizes")
    states: list[config_mod.PositiveInt] = Field(min_length=1, description="integers >= 1, one per table size")
    init: Annotated[str, Strict()] = Field(description="an existing .onnx export or .zip checkpoint")
    continuation: list[Annotated[str, Strict()]] = Field(
        ["expert"], min_length=1, description="one or more distinct bot names or .onnx exports")
    sample_prob: Annotated[float, Strict()] = Field(0.25, gt=0.0, le=1.0, description="a number in (0, 1]")
    seed: Annotated[int, Strict()] = Field(0, ge=0, le=config_mod.SEED_MAX,
                                           description=f"an integer in [0, {config_mod.SEED_MAX}]")
    target: Literal[TARGETS] = "win"
    train: dict[str, Any] = Field(default_factory=dict, description="a mapping of training-configuration keys")

    @field_validator("continuation", mode="before")
    @classmethod
    def _one_name_is_a_list(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @model_validator(mode="after")
    def _across_keys(self) -> "PlayoutValuesConfig":
        if len(self.players) != len(self.states):
            raise ValueError(f"players {self.players} and states {self.states} must be of the same length (the "
                             f"positions recorded at each table size)")
        if len(set(self.players)) < len(self.players):
            raise ValueError(f"players {self.players} names a table size twice; legal: each size once")
        if len(set(self.continuation)) < len(self.continuation):
            raise ValueError(f"continuation={self.continuation!r}; legal: one or more distinct bot names or "
                             f".onnx exports")
        if not (self.init.endswith((".onnx", ".zip")) and Path(self.init).is_file()):
            raise ValueError(f"init={self.init!r}: legal values are an existing .onnx export or .zip checkpoint")
        return self


def check_fit_settings(epochs: int, learning_rate: float, kl_weight: float, batch_size: int) -> None:
    """Refuse fit settings outside their legal values (:class:`FitSettings`; one line naming each).

    Raises:
        ConfigError: ``epochs`` or ``batch_size`` not an integer >= 1, ``learning_rate`` or
            ``kl_weight`` not a finite number > 0.
    """
    config_mod.validated(FitSettings, {"epochs": epochs, "learning_rate": learning_rate, "kl_weight": kl_weight,
                                       "batch_size": batch_size})


def fit_policy(actor: Any, observation: np.ndarray, action_mask: np.ndarray, adv: np.ndarray,
               prior_logits: np.ndarray, played: np.ndarray, epochs: int, learning_rate: float,
               kl_weight: float, batch_size: int = 1024, seed: int = 0, holdout: float = 0.05) -> dict:
    """Fit a policy to the playouts' advantages by KL-regularised all-action policy improvement.

    Each row's loss is ``-sum_a pi(a) A[a] + kl_weight * KL(pi || pi0)`` over its legal actions,
    ``A`` the centred playout outcomes (:func:`advantages`) and ``pi0`` the policy the fit starts
    from; its minimiser, given the expected advantages, is ``pi0(a) exp(A[a] / kl_weight)``
    normalised (the regularised improvement step of MPO / AWR), which a noisy ``A`` only reaches
    on average over many positions: the fit is the average.

    Args:
        actor: a torch module ``(observation float32 [B, obs], mask [B, A]) -> (action, logits)``
            with masked logits (:func:`hod.training.policy_io.actor_module` of the SB3 policy: its
            parameters are trained in place).
        observation: float32 (N, obs), the network's inputs (the run's encoder applied).
        action_mask: int8 (N, A).
        adv: float32 (N, A), :func:`advantages`.
        prior_logits: float (N, A), ``pi0``'s masked logits (illegal ones at about -1e8).
        played: int (N,), the continuation policy's action (for the statistics only).
        epochs, learning_rate, batch_size, seed: Adam's passes, step size, minibatch, order.
        kl_weight: ``> 0``, in the units of ``A``.
        holdout: the share of rows kept out of the fit, for the statistics.

    Returns:
        ``{"before": s, "after": s, "positions": N, "held_out": M, "seconds"}``, each ``s`` on the
        held-out rows: ``greedy_gain`` (mean advantage of the argmax action), ``continuation_gain``
        (of the continuation's action), ``agreement`` (argmax = continuation's action), ``kl``.

    Raises:
        ConfigError: shapes that do not agree, settings refused by :func:`check_fit_settings`,
            ``holdout`` outside [0, 0.5].
    """
    import time

    import torch

    n = len(observation)
    if not (action_mask.shape == adv.shape == np.shape(prior_logits) and action_mask.shape[0] == n == len(played)):
        raise ConfigError(f"observation ({n}, ...), action_mask {action_mask.shape}, adv {adv.shape}, prior_logits "
                          f"{np.shape(prior_logits)} and played {np.shape(played)} must have N rows and (N, A) shapes")
    check_fit_settings(epochs, learning_rate, kl_weight, batch_size)
    if not 0 <= holdout <= 0.5:
        raise ConfigError(f"holdout={holdout!r}; legal values: numbers in [0, 0.5]")
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    order = rng.permutation(n)
    cut = int(round(n * holdout))
    held, train = order[:cut], order[cut:]
    X = torch.as_tensor(np.ascontiguousarray(observation, np.float32))
    Mk = torch.as_tensor(np.ascontiguousarray(action_mask, np.int8))
    legal = Mk != 0
    Ad = torch.as_tensor(np.ascontiguousarray(adv, np.float32))
    logp0 = torch.log_softmax(torch.as_tensor(np.asarray(prior_logits, np.float32)), dim=1)
    P = torch.as_tensor(np.asarray(played, np.int64))

    def losses(idx):
        _, logits = actor(X[idx], Mk[idx])
        lp = torch.log_softmax(logits, dim=1)
        p = lp.exp()
        kl = torch.where(legal[idx], p * (lp - logp0[idx]), torch.zeros_like(p)).sum(dim=1)
        return -(p * Ad[idx]).sum(dim=1), kl, logits

    def stats(idx) -> dict:
        if len(idx) == 0:
            return {}
        with torch.no_grad():
            idx = torch.as_tensor(idx)
            _, kl, logits = losses(idx)
            pick = logits.argmax(dim=1)
            return {"greedy_gain": round(float(Ad[idx].gather(1, pick[:, None]).mean()), 5),
                    "continuation_gain": round(float(Ad[idx].gather(1, P[idx][:, None]).mean()), 5),
                    "agreement": round(float((pick == P[idx]).float().mean()), 4),
                    "kl": round(float(kl.mean()), 5)}

    before = stats(held)
    opt = torch.optim.Adam(actor.parameters(), lr=learning_rate)
    actor.train()
    for _ in range(epochs):
        perm = train[rng.permutation(len(train))]
        for s in range(0, len(perm), batch_size):
            idx = torch.as_tensor(perm[s:s + batch_size])
            gain, kl, _ = losses(idx)
            loss = (gain + kl_weight * kl).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    actor.eval()
    return {"before": before, "after": stats(held), "positions": int(len(train)), "held_out": int(cut),
            "seconds": round(time.perf_counter() - t0, 1)}


# ---- the command ----------------------------------------------------------------------------------
def actor_logits(actor: Any, observation: np.ndarray, action_mask: np.ndarray, rows: int = 8192) -> np.ndarray:
    """float32 (N, A) masked logits of ``actor`` (as :func:`fit_policy`'s) on ``observation``."""
    import torch

    out = []
    with torch.no_grad():
        for s in range(0, len(observation), rows):
            _, logits = actor(torch.as_tensor(observation[s:s + rows]), torch.as_tensor(action_mask[s:s + rows]))
            out.append(logits.numpy())
    return np.concatenate(out).astype(np.float32)


def improve(game: str, out: str | Path, players: Sequence[int], states: Sequence[int], init: str,
            cache_dir: str | Path, continuation: str | Sequence[str] = "expert", sample_prob: float = 0.25,
            seed: int = 0, target: str = "win", kl_weight: float = 0.03, epochs: int = 3, learning_rate: float = 1e-4,
            batch_size: int = 1024, train: Optional[dict] = None, name: Optional[str] = None, log=print,
            force: bool = False) -> dict:
    """Record (or read back) the playout values, fit the network started from ``init`` to them
    (:func:`fit_policy`), evaluate, checkpoint and export it. The run folder gets the trainer's
    files (``checkpoints/final.zip``, ``eval.json``, the card with this fit under
    ``training.imitation``) and ``<name>.onnx`` with its card; returns the summary also written to
    ``playout_values.json``.

    Args:
        players, states: the table sizes and the positions recorded at each (same lengths).
        init: the ONNX export or checkpoint whose actor is ``pi0`` and the start (the training
            config's ``init_actor``).
        continuation: one continuation policy, or several: each contributes ``states`` positions
            at each table size, recorded (or read back) with its own playouts, and the fit sees
            them all (every set's advantages are an improvement step over its own continuation).
        train: overrides of the game's training configuration (``obs_encoder``, ``eval_*``, ...);
            ``total_steps`` is 0 (no PPO) and ``init_actor`` is ``init``.
        name: the export's file stem (default ``<game>_playout``).
        log: where to print progress (None: silent).
        force: write into an ``out`` that already holds a run (``playout_values.json``).
        Others: :func:`cached_playout_values`, :func:`advantages`, :func:`fit_policy`.

    Every setting is checked before anything is recorded (the network is built and ``init``
    loaded first).

    Raises:
        ConfigError: a game :func:`check_game` refuses, a ``name`` that is not a file stem
            (:func:`hod.training.export.check_name`), a setting refused by :class:`PlayoutValuesConfig` (``players`` and
            ``states`` of different lengths, a size named twice, a count < 1, ``train`` not a
            mapping, ...; one line naming each setting and its legal values), an ``out`` that
            holds a run (without ``force``), or any error of the functions named;
            CheckpointError: an unusable ``init``.
    """
    import time

    from hod.core.atomic import atomic_write_json

    from .export import check_name, export_onnx
    from .policy_io import actor_module
    from .train import Trainer

    log = log or (lambda *a, **k: None)
    check_game(game)
    if name is not None:
        check_name(name)
    run = config_mod.validated(PlayoutValuesConfig, {
        "players": players, "states": states, "init": str(init), "continuation": continuation,
        "sample_prob": sample_prob, "seed": seed, "target": target, "kl_weight": kl_weight, "epochs": epochs,
        "learning_rate": learning_rate, "batch_size": batch_size, "train": {} if train is None else train})
    players, states, continuations = run.players, run.states, run.continuation
    seed, sample_prob, target, kl_weight = run.seed, run.sample_prob, run.target, run.kl_weight
    epochs, learning_rate, batch_size = run.epochs, run.learning_rate, run.batch_size
    if (Path(out) / "playout_values.json").exists() and not force:
        raise ConfigError(f"{out} already holds a playout-values run; legal: another --out, or --force")
    for c in continuations:   # the table sizes, each continuation (its sizes) and the rule options, before recording
        for n in players:
            continuation_policy(game, c, 0, None, int(n))
    cfg = config_mod.override_keys(config_mod.load_config(game),
                                   {**run.train, "total_steps": 0, "bc_teacher": "", "init_actor": str(init),
                                    "players": [int(n) for n in players]})
    config_mod.validate_config(game, cfg)
    trainer = Trainer(game, cfg, out, progress=False, log=log)   # builds the network and loads init
    t0 = time.perf_counter()
    parts = [cached_playout_values(cache_dir, game, [int(n)], int(k), seed, c, sample_prob, log=log)
             for c in continuations for n, k in zip(players, states)]
    data = {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}
    del parts
    record_s = time.perf_counter() - t0
    obs = data.pop("observation")
    if not trainer.encoder.identity:   # the network's inputs, encoded in slices (memory); the layout-1 rows go
        raw, masks, step = obs, data["action_mask"], 100_000
        first = trainer.encoder.encode_batch(raw[:step], masks[:step])
        obs = np.empty((len(raw), first.shape[1]), np.float32)
        obs[:len(first)] = first
        for s in range(step, len(raw), step):
            obs[s:s + step] = trainer.encoder.encode_batch(raw[s:s + step], masks[s:s + step])
        del raw, first
    actor = actor_module(trainer.model.policy)
    prior = actor_logits(actor.eval(), obs, data["action_mask"])
    fit = fit_policy(actor, obs, data["action_mask"], advantages(data, target), prior, data["action"],
                     epochs, learning_rate, kl_weight, batch_size, seed)
    settings = {"method": "playout_values", "players": [int(n) for n in players], "states": [int(k) for k in states],
                "continuation": continuations[0] if len(continuations) == 1 else continuations,
                "sample_prob": sample_prob, "seed": seed, "target": target, "kl_weight": kl_weight, "epochs": epochs,
                "learning_rate": learning_rate, "init": str(init), "record_s": round(record_s, 1)}
    trainer.imitation = {**settings, **fit}
    log(f"fitted: {fit}")
    ppo = trainer.run()
    onnx_path, card_path = export_onnx(ppo["checkpoint"], out, name or f"{game}_playout")
    summary = {**settings, "fit": fit, "evaluation": ppo["evaluation"], "diagnostics": ppo["diagnostics"],
               "checkpoint": ppo["checkpoint"], "export": str(onnx_path),
               "wall_clock_s": round(time.perf_counter() - t0, 1)}
    atomic_write_json(Path(out) / "playout_values.json", summary)
    return summary


def main(argv: Optional[list[str]] = None) -> int:
    """``python -m hod.training.playout_values``: :func:`improve` from the command line. Returns 0,
    or 2 with one ``error: ...`` line naming the legal values (argparse's usage errors too); 130
    after Ctrl-C, 143 after SIGTERM, 74 when a file cannot be written (:mod:`hod.core.commands`)."""
    import argparse

    from hod.core.commands import long_command
    from hod.core.games import game_names

    p = argparse.ArgumentParser(prog="python -m hod.training.playout_values", description=__doc__.split("\n\n")[0])
    p.add_argument("--game", choices=game_names(), required=True)
    p.add_argument("--out", required=True, help="run folder")
    p.add_argument("--init", required=True, help="the ONNX export or checkpoint the fit starts from (pi0)")
    p.add_argument("--players", type=int, nargs="+", required=True, help="table sizes")
    p.add_argument("--states", type=int, nargs="+", required=True, help="positions recorded at each table size")
    p.add_argument("--cache-dir", required=True, help="folder of the recorded chunks (reused, resumable)")
    p.add_argument("--continuation", nargs="+", default=["expert"],
                   help="bot with act_batch, or an .onnx export; several: each one's positions, all fitted together")
    p.add_argument("--sample-prob", type=float, default=0.25)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--target", choices=TARGETS, default="win")
    p.add_argument("--kl-weight", type=float, default=0.03)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--learning-rate", type=float, default=1e-4)
    p.add_argument("--batch-size", type=int, default=1024)
    p.add_argument("--train", type=config_mod._json_object, default={}, help="JSON overrides of the training configuration")
    p.add_argument("--name", default=None, help="the export's file stem")
    p.add_argument("--force", action="store_true", help="write into an --out that holds a run")
    a = p.parse_args(argv)
    from hod.agents.model_card import CheckpointError

    try:
        with long_command():
            summary = improve(a.game, a.out, a.players, a.states, a.init, a.cache_dir, a.continuation,
                              a.sample_prob, a.seed, a.target, a.kl_weight, a.epochs, a.learning_rate, a.batch_size,
                              a.train, a.name, force=a.force)
    except (ConfigError, CheckpointError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(json.dumps({k: summary[k] for k in ("fit", "evaluation", "export", "wall_clock_s")}, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
