"""Digests of what a learner sees from a vector env, step by step: the golden recordings of
``tests/data/learner_env_golden.json`` (``tests/training/test_training_learner_env.py``).

The recordings were made from the per-game stacks the generic learner env replaced (``TapeoVecEnv``,
``RobadaVecEnv`` and their Gymnasium views, the ``PoolOpponentsVecEnv`` / ``ScaledRewardVecEnv`` /
``EncodedVecEnv`` wrappers, as of commit ``9b45095``), by ``tests/data/record_learner_env_golden.py``
at commit ``df07a59``, the last one that holds them (``git checkout df07a59`` runs it again); the
differential tests had shown the generic env equal to them bit for bit. The same functions digest
the generic env now: a changed bit anywhere in an
observation, a mask, a reward, a done flag or an info value (its type and dtype included) changes
the step's digest.

Each array is digested as its dtype, shape and bytes; an info value by its type name and value
(arrays as above, dicts key by key, object arrays element by element); ``info["episode"]["t"]`` (wall
time) is left out. Only the info keys the old stacks wrote are digested (the generic env writes
more), in sorted order, an absent one as ``absent``.
"""
from __future__ import annotations

import hashlib
from typing import Any, Optional, Sequence

import numpy as np

KINDS = ("obs", "masks", "rewards", "dones", "infos")


def legal_actions(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal action per row of ``masks`` (bool or int8 (N, A)), drawn from ``rng``."""
    cs = np.cumsum(masks, axis=1)
    k = (rng.random(len(masks)) * cs[:, -1]).astype(np.int64)
    return (cs <= k[:, None]).sum(1)


def arr(x: np.ndarray) -> bytes:
    x = np.asarray(x)
    return x.dtype.str.encode() + repr(x.shape).encode() + b"|" + np.ascontiguousarray(x).tobytes()


def canon(v: Any) -> bytes:
    """Type-tagged bytes of one info value."""
    if isinstance(v, np.ndarray):
        if v.dtype == object:
            return b"obj" + repr(v.shape).encode() + b"[" + b",".join(canon(x) for x in v.reshape(-1)) + b"]"
        return b"nd|" + arr(v)
    if isinstance(v, dict):
        return b"{" + b";".join(k.encode() + b"=" + canon(v[k]) for k in sorted(v) if k != "t") + b"}"
    return type(v).__name__.encode() + b"|" + repr(v).encode()


def canon_infos(infos: Sequence[dict], keys: Sequence[str]) -> bytes:
    """The SB3 infos of one step (a list, one dict per slot): the non-empty ones, by slot, over ``keys``."""
    out = []
    for slot, info in enumerate(infos):
        if info:
            out.append(str(slot).encode() + b":" + b";".join(
                k.encode() + b"=" + (canon(info[k]) if k in info else b"absent") for k in keys))
    return b"\n".join(out)


def canon_dict(info: dict, keys: Sequence[str]) -> bytes:
    """The Gymnasium infos of one step (a dict of arrays) over ``keys``."""
    return b";".join(k.encode() + b"=" + (canon(info[k]) if k in info else b"absent") for k in keys)


class Recorder:
    """Per-step digests (16 hex digits of the step's parts) and one sha256 per kind over all steps."""

    def __init__(self) -> None:
        self.steps: list[str] = []
        self.total = {k: hashlib.sha256() for k in KINDS}

    def add(self, **parts: bytes) -> None:
        h = hashlib.sha256()
        for k in KINDS:
            b = parts.get(k, b"")
            self.total[k].update(b)
            h.update(k.encode() + b"#" + hashlib.sha256(b).digest())
        self.steps.append(h.hexdigest()[:16])

    def result(self) -> dict:
        return {"steps": self.steps, "total": {k: self.total[k].hexdigest() for k in KINDS}}


def info_keys_of(infos: Sequence[dict], into: set) -> None:
    for info in infos:
        into.update(info)


def vec_run(env: Any, steps: int, seed: int, keys: Optional[Sequence[str]] = None) -> dict:
    """Play ``env`` (an SB3 ``VecEnv`` with ``action_masks()``) for ``steps`` steps of random legal
    actions (``numpy.random.default_rng(seed)``), after ``env.seed(seed)`` and ``reset()``; returns
    the digests, the info keys seen (``keys`` None: every key the env wrote; else the ones given)
    and a few raw values: the first observation row, the first finished game's final info."""
    env.seed(seed)
    obs = env.reset()
    rec = Recorder()
    rec.add(obs=arr(obs), masks=arr(env.action_masks()))
    rng = np.random.default_rng(seed)
    seen: set = set()
    ends, first = 0, None
    all_infos = []
    for t in range(steps):
        m = env.action_masks().copy()     # the generic env's is a view of its buffer, valid until the next step
        env.step_async(legal_actions(m, rng))
        o, r, d, infos = env.step_wait()
        info_keys_of(infos, seen)
        all_infos.append((o, m, r, d, infos))
        for slot in np.flatnonzero(d):
            ends += 1
            if first is None:
                i = infos[slot]
                first = {"step": t, "slot": int(slot), "final_score": i["final_score"],
                         "win_share": i["win_share"], "episode_r": i["episode"]["r"], "episode_l": i["episode"]["l"],
                         "terminal_observation_sum": float(np.asarray(i["terminal_observation"], np.float64).sum())}
    keys = sorted(seen - {"t"}) if keys is None else list(keys)
    for o, m, r, d, infos in all_infos:
        rec.add(obs=arr(o), masks=arr(m), rewards=arr(r), dones=arr(d), infos=canon_infos(infos, keys))
    return {**rec.result(), "info_keys": keys, "ends": ends, "first_final": first,
            "first_obs_row": [float(x) for x in obs[0]],
            "observation_space": str(env.observation_space), "action_space": str(env.action_space)}


def gym_run(env: Any, steps: int, seed: int, keys: Optional[Sequence[str]] = None) -> dict:
    """Play a Gymnasium ``VectorEnv`` view (``step(actions, hold)``) for ``steps`` steps: reset with
    ``seed``, random legal actions from ``default_rng(1)``; from step 60 on, RLlib's next-step
    autoreset (``hold`` = the previous step's dones; step 60 holds nothing)."""
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(1)
    seen: set = set(info)
    rows = [(obs, None, None, None, info)]
    finals, dones = 0, None
    for t in range(steps):
        a = legal_actions(obs["action_mask"], rng)
        hold = None if t < 60 else (dones.copy() if t > 60 else np.zeros(len(a), bool))
        obs, r, term, trunc, info = env.step(a, hold)
        dones = term
        seen.update(info)
        finals += int(info.get("_final_obs", np.zeros(1, bool)).sum())
        rows.append((obs, r, term, trunc, info))
    keys = sorted(seen) if keys is None else list(keys)
    rec = Recorder()
    for o, r, term, trunc, info in rows:
        rec.add(obs=arr(o["observation"]), masks=arr(o["action_mask"]),
                rewards=b"" if r is None else arr(r),
                dones=b"" if term is None else arr(term) + arr(trunc), infos=canon_dict(info, keys))
    return {**rec.result(), "info_keys": keys, "finals": finals,
            "single_observation_space": str(env.single_observation_space), "action_space": str(env.action_space),
            "metadata": repr(env.metadata)}


def state_dict_digests(state_dict: dict) -> dict:
    """sha256 of every tensor of a torch ``state_dict`` (dtype, shape and bytes)."""
    return {k: hashlib.sha256(arr(v.detach().cpu().numpy())).hexdigest() for k, v in state_dict.items()}
