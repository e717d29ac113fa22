"""Behaviour-cloning warm start: fit the PPO policy to a heuristic teacher before self-play.

Self-play PPO from a random network spends millions of steps rediscovering what the heuristic
bots already know (in Ronda Robada especially, where a turn is a chain of decisions and the
reward comes only at the end). The ``[imitation]`` section of a training config (``bc_teacher``,
``bc_teacher_options``, ``bc_decisions``, ``bc_workers``, ``bc_cache_dir``, ``bc_epochs``,
``bc_learning_rate``) starts a new run by:

1. :func:`collect_teacher_decisions`: the teacher bot plays every seat of seeded games through the
   raw AEC env (illegal actions raise; the run's env options, e.g. Tapeo ``round_rewards`` or
   Ronda Robada rule options, as in training), over the run's table sizes; each decision is
   recorded as (observation, action mask, action) with the value target the acting seat's
   discounted return from that decision on: ``sum_k gamma ** k * r_k``, ``r_k`` the rewards the
   seat receives after its k-th next decision (before the one after it, or at the game's end).
2. :func:`behaviour_clone`: minimises the cross-entropy of the masked policy on the teacher's
   actions plus ``vf_coef`` times the squared error of the value head, with Adam, in minibatches.

PPO then continues from that policy (the usual schedule, opponent pool and evaluations). The
warm start is recorded in the model card (``hod.training.imitation``).
"""
from __future__ import annotations

import hashlib
import io
import json
import time
import warnings
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

from hod import agents
from hod.core.atomic import atomic_write_bytes
from hod.core.errors import ConfigError
from hod.core.games import check_player_counts, env_module, get_game
from hod.evaluation.workers import check_workers, effective_workers, map_in_workers

from .npz import npz_headers, read_arrays

#: Decisions recorded per chunk: chunk 0 is seeded with the run's seed, chunk i > 0 with
#: ``numpy.random.SeedSequence([seed, i])``, so the data does not depend on how many worker
#: processes record the chunks.
CHUNK_DECISIONS = 5_000


def collect_teacher_decisions(game: str, teacher: str, player_counts: Sequence[int], num_decisions: int,
                              seed: int = 0, reward_scheme: str = "win_loss", gamma: float = 1.0,
                              env_options: Optional[dict] = None, teacher_options: Optional[dict] = None,
                              workers: int = 1, action_values: bool = False, opponents: str = "",
                              chunk_cache: Optional[str | Path] = None) -> dict[str, np.ndarray]:
    """Decisions of ``teacher`` playing every seat, until ``num_decisions`` are recorded.

    The decisions are recorded in chunks of :data:`CHUNK_DECISIONS` (seeded per chunk, see there),
    ``workers`` chunks at a time in worker processes. A search teacher (``needs_belief``, e.g.
    Ronda Robada ``rollout``) gets ``belief(rng)``: full states consistent with what its seat knows,
    from the game's ``sample_consistent_state`` (RULINGS R9).

    Args:
        game: ``"tapeo"`` or ``"robada"``.
        teacher: a registered bot name (``agents.names(game)``).
        player_counts: table sizes, drawn uniformly per game (legal sizes of the game, at least one).
        num_decisions: decisions to record (N >= 1).
        seed: seeds the table sizes, the deals and the bots (same seed, same data, for any ``workers``).
        reward_scheme: scheme of the rewards (``hod.core.rewards``).
        gamma: discount of the value targets per later decision of the same seat.
        env_options: other options of the game's ``raw_env`` (the trainer's: Tapeo
            ``round_rewards``, Ronda Robada rule options, ...); ``illegal_action`` is always
            ``"raise"`` and ``reward_scheme`` is the argument above.
        teacher_options: keyword options of the teacher bot (e.g. ``{"determinizations": 16}``).
        workers: processes asked to record chunks in parallel (int in ``1..MAX_WORKERS``,
            :mod:`hod.evaluation.workers`); ``min(workers, chunks, usable CPUs)`` run (1 = this
            process).
        action_values: also record the values the teacher chose from (a search bot with
            ``decide``, :class:`hod.agents.base.CandidateSearchBot`): the expert-iteration
            targets of :mod:`hod.training.expert_iteration`.
        opponents: ``""``: the teacher plays every seat; else a registered bot name: per game the
            teacher plays one seat (drawn) and this bot the others, and only the teacher's
            decisions are recorded (the positions of the teacher against that opponent).
        chunk_cache: None, or a file prefix (``<dir>/chunk_<key>``, given by
            :func:`cached_teacher_decisions`): each chunk ``i`` of ``size`` decisions is kept in
            ``<prefix>_<i>_<size>.npz`` as soon as it is recorded and read from there when the
            file is already whole (same shapes), so an interrupted recording resumes and a
            smaller ``num_decisions`` with the same other arguments reuses the chunks.

    Returns:
        ``{"observation": float32 (N, obs_size), "action_mask": int8 (N, A), "action": int64 (N,),
        "value_target": float32 (N,)}``. The value target of a seat's decision j (of k) is its
        discounted return from there: ``sum_{m=j}^{k-1} gamma ** (m - j) * r_m``, where ``r_m`` is
        the reward the seat receives after its decision m and before its decision m + 1 (for
        the last one, until the game ends). With rewards only at the end this is
        ``gamma ** (k - 1 - j) * final reward``. With ``action_values`` also ``"action_values":
        float32 (N, A)``, each searched candidate's value and NaN elsewhere (all NaN where the
        teacher played a lone candidate without search).

    Raises:
        ConfigError: unknown game or bot name, ``num_decisions`` not an int >= 1, ``workers`` not
            an int in ``1..MAX_WORKERS``, no
            table size or an illegal one (the messages name the legal values), an unknown env or
            teacher option, a search teacher for a game without ``sample_consistent_state``, or
            ``action_values`` with a teacher that does not search candidates.
    """

    mod = env_module(game)
    if isinstance(num_decisions, bool) or not isinstance(num_decisions, (int, np.integer)) or num_decisions < 1:
        raise ConfigError(f"num_decisions={num_decisions!r} must be an integer >= 1; legal values: 1, 2, 3, ...")
    workers = check_workers(int(workers) if isinstance(workers, np.integer) else workers)
    counts = list(player_counts) if not isinstance(player_counts, (int, np.integer)) else [player_counts]
    if not counts:
        raise ConfigError(f"player_counts must name at least one table size; legal values: "
                          f"{list(get_game(game).player_counts)}")
    check_player_counts(game, counts)   # each a legal table size
    if teacher_options is not None and not isinstance(teacher_options, dict):
        raise ConfigError(f"teacher_options={teacher_options!r} must be a dict of the teacher's options, "
                          "e.g. {'determinizations': 16}")
    probe = agents.make(game, teacher, seed=0, **(teacher_options or {}))   # unknown bot or option: ConfigError
    if opponents:
        agents.make(game, opponents, seed=0)   # unknown bot: ConfigError naming the registered ones
    if getattr(probe, "needs_belief", False) and not hasattr(mod, "sample_consistent_state"):
        raise ConfigError(f"teacher {teacher!r} needs belief samples but {game!r} provides no sample_consistent_state")
    if action_values and not callable(getattr(probe, "decide", None)):
        raise ConfigError(f"teacher {teacher!r} gives no action values; legal teachers with action values for "
                          f"{game!r}: {value_teachers(game)}")
    opts = dict(env_options or {})
    opts.update(illegal_action="raise", reward_scheme=reward_scheme)
    sizes = [CHUNK_DECISIONS] * (num_decisions // CHUNK_DECISIONS)
    if num_decisions % CHUNK_DECISIONS:
        sizes.append(num_decisions % CHUNK_DECISIONS)
    jobs = [(game, teacher, dict(teacher_options or {}), counts, size,
             seed if i == 0 else np.random.SeedSequence([seed, i]), gamma, opts, bool(action_values), opponents)
            for i, size in enumerate(sizes)]
    if chunk_cache is not None:
        width = mod.LAYOUT.size
        jobs = [(f"{chunk_cache}_{i}_{job[4]}.npz", _shapes(job[4], width, get_game(game).num_actions, action_values),
                 *job) for i, job in enumerate(jobs)]
    task = _collect_chunk if chunk_cache is None else _cached_chunk
    running = effective_workers(workers, len(jobs))   # never more processes than chunks or CPUs
    if running == 1:
        parts = [task(*job) for job in jobs]
    else:
        parts = map_in_workers(task, jobs, running)   # Ctrl-C: the workers end, no traceback of theirs
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def value_teachers(game: str) -> list[str]:
    """Registered bots of ``game`` that give action values (a ``decide`` method: the search bots,
    :class:`hod.agents.base.CandidateSearchBot`, and Ronda Robada's ``expert``, whose values are
    its planner's)."""
    return [n for n in agents.names(game)
            if isinstance(f := agents.factory(game, n), type) and callable(getattr(f, "decide", None))]


#: Version of the cache files of :func:`cached_teacher_decisions` (part of their key).
CACHE_FORMAT = 1


def cached_teacher_decisions(cache_dir: Optional[str], cache_label: str = "bc_cache_dir",
                             **kwargs: Any) -> dict[str, np.ndarray]:
    """:func:`collect_teacher_decisions` (``kwargs`` are its arguments), kept in ``cache_dir``.

    The file is ``<cache_dir>/bc_<key>.npz``, ``key`` a SHA-256 of what decides the data: the
    arguments but ``workers`` (normalised: no options = ``{}``, ints as ints), the game's
    observation layout version, :data:`CHUNK_DECISIONS` and :data:`CACHE_FORMAT`; so a run with
    another teacher, seed, table sizes, reward or layout records afresh. (A change of a bot's
    code is not seen: clear the directory after one.) A missing, truncated or malformed file
    (wrong keys, shapes or length), or one holding pickled objects (read with
    ``allow_pickle=False``: never unpickled), is recorded again, with a warning, and rewritten
    atomically. While recording, each finished chunk is kept beside it
    (``<cache_dir>/chunk_<key'>_<i>_<size>.npz``, ``key'`` the same key without the number of
    decisions; ``chunk_cache`` of :func:`collect_teacher_decisions`): a recording stopped part-way
    resumes from its chunks, and a smaller ``num_decisions`` reuses them. ``cache_dir``
    empty or None: no cache. ``cache_label``: how the caller's user names ``cache_dir`` (the
    training key ``bc_cache_dir``, expert iteration's ``--cache-dir``), in the error message.

    Returns:
        the dict of :func:`collect_teacher_decisions`.

    Raises:
        ConfigError: ``cache_dir`` is not a directory and cannot be made one (checked before
            recording), or any error of :func:`collect_teacher_decisions`.
    """
    if not cache_dir:
        return collect_teacher_decisions(**kwargs)
    folder = Path(cache_dir)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ConfigError(f"{cache_label}={str(cache_dir)!r} is not a usable directory: {e}; legal: a folder, or "
                          f"a path where one can be made") from None
    game = kwargs.get("game")
    layout = env_module(game).LAYOUT
    counts = kwargs.get("player_counts")
    keyed = {
        "game": game, "teacher": kwargs.get("teacher"),
        "teacher_options": dict(kwargs.get("teacher_options") or {}),
        "player_counts": [int(c) for c in ([counts] if isinstance(counts, (int, np.integer)) else counts)],
        "num_decisions": int(kwargs.get("num_decisions")), "seed": int(kwargs.get("seed", 0)),
        "reward_scheme": kwargs.get("reward_scheme", "win_loss"), "gamma": float(kwargs.get("gamma", 1.0)),
        "env_options": dict(kwargs.get("env_options") or {}),
        **({"action_values": True} if kwargs.get("action_values") else {}),   # absent: the keys of older caches
        **({"opponents": kwargs["opponents"]} if kwargs.get("opponents") else {}),
        "layout": [layout.game, layout.version, layout.size], "chunk": CHUNK_DECISIONS, "format": CACHE_FORMAT,
    }
    key = hashlib.sha256(json.dumps(keyed, sort_keys=True, default=str).encode()).hexdigest()[:16]
    path = folder / f"bc_{key}.npz"
    n = keyed["num_decisions"]
    shapes = _shapes(n, layout.size, get_game(game).num_actions, bool(keyed.get("action_values")))
    if path.exists():
        data, why = _read_cache(path, shapes)
        if data is not None:
            return data
        warnings.warn(f"{path}: unusable teacher-decision cache ({why}); recording the decisions again")
    # the chunks' own key: the same but the number of decisions (chunk i is the same for any total)
    chunk_key = hashlib.sha256(json.dumps({k: v for k, v in keyed.items() if k != "num_decisions"},
                                          sort_keys=True, default=str).encode()).hexdigest()[:16]
    data = collect_teacher_decisions(**kwargs, chunk_cache=folder / f"chunk_{chunk_key}")
    _write_npz(path, data)
    return data


def _shapes(n: int, width: int, num_actions: int, action_values: bool) -> dict[str, tuple]:
    """The arrays of ``n`` recorded decisions and their shapes (``width`` the observation size)."""
    shapes = {"observation": (n, width), "action": (n,), "value_target": (n,)}
    if action_values:
        shapes["action_values"] = (n, num_actions)
    shapes["action_mask"] = (n, num_actions)
    return shapes


def _read_cache(path: Path, shapes: dict[str, tuple]) -> tuple[Optional[dict[str, np.ndarray]], str]:
    """The arrays of the cache file ``path`` if it holds exactly ``shapes`` (numbers only), else
    ``(None, why)``. The shapes come from the .npy headers first (nothing read before they match,
    so a forged header allocates nothing); data only: an object array (a pickle) is refused."""
    why = "wrong keys or shapes"
    try:
        limit = sum(8 * int(np.prod(v)) for v in shapes.values()) + (1 << 20)   # 8 bytes a number at most
        headers = npz_headers(path, limit, "the cache's expected size", str(path))
        if {k: h.shape for k, h in headers.items() if k in shapes} == shapes \
                and all(headers[k].dtype.kind in "biuf" for k in shapes):
            return read_arrays(path, list(shapes), str(path)), ""
    except Exception as e:   # truncated, foreign or pickled file: record again
        why = f"{type(e).__name__}: {e}"
    return None, why


def _write_npz(path: Path, data: dict[str, np.ndarray]) -> None:
    """``data`` as an uncompressed .npz at ``path``, written atomically."""
    buf = io.BytesIO()
    np.savez(buf, **data)
    atomic_write_bytes(path, buf.getvalue())


def _cached_chunk(path: str, shapes: dict[str, tuple], *job: Any) -> dict[str, np.ndarray]:
    """:func:`_collect_chunk` ``(*job)`` kept in the file ``path`` (read back when it holds
    ``shapes``; else recorded, with a warning if an unusable file was there, and written atomically)."""
    p = Path(path)
    if p.exists():
        data, why = _read_cache(p, shapes)
        if data is not None:
            return data
        warnings.warn(f"{p}: unusable chunk of the teacher-decision cache ({why}); recording it again")
    data = _collect_chunk(*job)
    _write_npz(p, data)
    return data


def _collect_chunk(game: str, teacher: str, teacher_options: dict, counts: list, num_decisions: int,
                   seed: Any, gamma: float, opts: dict, action_values: bool = False,
                   opponents: str = "") -> dict[str, np.ndarray]:
    """One chunk of :func:`collect_teacher_decisions` (arguments checked there): whole seeded
    games until ``num_decisions`` are recorded, the last game cut where the chunk is full."""

    mod = env_module(game)
    sampler = getattr(mod, "sample_consistent_state", None)
    rng = np.random.default_rng(seed)
    obs, masks, acts, targets, qs = [], [], [], [], []
    while len(acts) < num_decisions:
        n = int(rng.choice(counts))
        env = mod.raw_env(num_players=n, **opts)
        env.reset(seed=int(rng.integers(2**31)))
        bots = {a: agents.make(game, teacher, seed=int(rng.integers(2**31)), **teacher_options) for a in env.agents}
        recorded = list(env.agents)
        if opponents:   # the teacher in one seat (drawn), the opponent bot in the others; only the teacher recorded
            recorded = [env.agents[int(rng.integers(n))]]
            for a in env.agents:
                if a not in recorded:
                    bots[a] = agents.make(game, opponents, seed=int(rng.integers(2**31)))
        seat_of = {a: i for i, a in enumerate(env.possible_agents)}
        rows: dict[str, list[int]] = {a: [] for a in recorded}
        after: dict[str, list[float]] = {a: [] for a in env.agents}   # reward after each decision
        for agent in env.agent_iter():
            o, r, term, trunc, _ = env.last()
            if after[agent]:   # what the seat received since its last decision
                after[agent][-1] += float(r)
            if term or trunc:
                env.step(None)
                continue
            # every registry bot takes the optional belief; only search bots draw from it
            belief = None if sampler is None else (
                lambda g, seat=seat_of[agent]: sampler(env.unwrapped.game_state, seat, g))
            if agent not in rows:   # an opponent seat: played, not recorded
                env.step(int(bots[agent].act(o, belief)))
                continue
            if action_values:   # the teacher's choice and the values it chose from
                a, vals = bots[agent].decide(o, belief)
                q = np.full(len(o["action_mask"]), np.nan, np.float32)
                for k, v in vals.items():
                    q[int(k)] = v
                qs.append(q)
                a = int(a)
            else:
                a = int(bots[agent].act(o, belief))
            rows[agent].append(len(acts))
            after[agent].append(0.0)
            obs.append(np.array(o["observation"], np.float32))
            masks.append(np.array(o["action_mask"], np.int8))
            acts.append(a)
            targets.append(0.0)
            env.step(a)
        for agent, idx in rows.items():
            ret = 0.0
            for i, r in zip(reversed(idx), reversed(after[agent])):   # G_j = r_j + gamma * G_{j+1}
                ret = r + gamma * ret
                targets[i] = ret
    sl = slice(0, num_decisions)
    out = {"observation": np.stack(obs[sl]), "action_mask": np.stack(masks[sl]),
           "action": np.array(acts[sl], np.int64), "value_target": np.array(targets[sl], np.float32)}
    if action_values:
        out["action_values"] = np.stack(qs[sl])
    return out


def behaviour_clone(model: Any, data: dict[str, np.ndarray], epochs: int, learning_rate: float,
                    batch_size: int = 1024, vf_coef: float = 0.5, seed: int = 0) -> dict[str, float]:
    """Fit ``model.policy`` (an sb3-contrib ``MaskablePPO`` policy) to the teacher's decisions.

    The policy loss is the cross-entropy of the masked policy on the teacher's actions or, when
    ``data`` holds ``"policy_target"`` (float32 (N, A) distributions over the legal actions, e.g.
    a softmax of a search's values, :func:`hod.training.expert_iteration.search_targets`), on
    those: ``-sum_a target[a] * log pi(a)``.

    Args:
        model: the MaskablePPO model (its policy is trained in place).
        data: the output of :func:`collect_teacher_decisions`, optionally with ``"policy_target"``
            and ``"weight"`` (float (N,) >= 0: each decision's policy loss is multiplied by it, e.g.
            :func:`hod.training.expert_iteration.clarity_weights`; the value loss is not).
        epochs: passes over the data.
        learning_rate: Adam step size.
        batch_size: minibatch size.
        vf_coef: weight of the value loss.
        seed: order of the minibatches.

    Returns:
        ``{"accuracy": float, "cross_entropy": float, "value_mse": float, "seconds": float}`` on the
        data after training (accuracy: share of decisions where the policy's argmax is the
        teacher's action).

    Raises:
        ConfigError: epochs < 1 or empty data, or a ``weight`` of another length or with a
            negative or non-finite entry.
    """
    import torch

    if epochs < 1 or len(data["action"]) == 0:
        raise ConfigError(f"behaviour cloning needs epochs >= 1 and data (epochs={epochs}, "
                          f"decisions={len(data['action'])})")
    t0 = time.perf_counter()
    policy = model.policy
    dev = policy.device
    obs = torch.as_tensor(data["observation"], device=dev)
    masks = torch.as_tensor(data["action_mask"].astype(bool), device=dev)
    acts = torch.as_tensor(data["action"], device=dev)
    targ = torch.as_tensor(data["value_target"], device=dev)
    soft = data.get("policy_target")
    soft = None if soft is None else torch.as_tensor(np.asarray(soft, np.float32), device=dev)
    weight = data.get("weight")
    if weight is not None:
        weight = np.asarray(weight, np.float32)
        if weight.shape != (len(data["action"]),) or not (np.isfinite(weight) & (weight >= 0)).all():
            raise ConfigError(f"weight {weight.shape} must be (N,) = ({len(data['action'])},) finite numbers >= 0")
        weight = torch.as_tensor(weight, device=dev)

    def losses(sl):
        """(policy loss per row, values) of the rows ``sl``."""
        if soft is None:
            values, log_prob, _ = policy.evaluate_actions(obs[sl], acts[sl], action_masks=masks[sl])
            return -log_prob, values.flatten()
        dist = policy.get_distribution(obs[sl], action_masks=masks[sl])
        logp = torch.clamp(dist.distribution.logits, min=-1e4)   # masked entries: target 0, kept finite
        return -(soft[sl] * logp).sum(dim=1), policy.predict_values(obs[sl]).flatten()

    opt = torch.optim.Adam(policy.parameters(), lr=learning_rate)
    rng = np.random.default_rng(seed)
    n = len(acts)
    policy.set_training_mode(True)
    for _ in range(epochs):
        order = rng.permutation(n)
        for s in range(0, n, batch_size):
            idx = torch.as_tensor(order[s:s + batch_size], device=dev)
            pi_loss, values = losses(idx)
            if weight is not None:
                pi_loss = pi_loss * weight[idx]
            loss = pi_loss.mean() + vf_coef * torch.mean((values - targ[idx]) ** 2)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
            opt.step()
    policy.set_training_mode(False)
    with torch.no_grad():
        ce, correct, mse = 0.0, 0, 0.0
        for s in range(0, n, 8192):
            sl = slice(s, s + 8192)
            pi_loss, values = losses(sl)
            dist = policy.get_distribution(obs[sl], action_masks=masks[sl].cpu().numpy())
            pred = dist.distribution.probs.argmax(dim=1)
            ce += float(pi_loss.sum())
            correct += int((pred == acts[sl]).sum())
            mse += float(((values - targ[sl]) ** 2).sum())
    return {"accuracy": correct / n, "cross_entropy": ce / n, "value_mse": mse / n,
            "seconds": round(time.perf_counter() - t0, 1)}
