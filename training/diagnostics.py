"""Does a policy read its observation? Two measures on a fixed set of positions.

A policy can beat weak baselines by playing one fixed order of preference over the actions,
whatever the state (in Tapeo: always the legal tapa kind that comes first in one list). The
win rates against ``random``, ``greedy`` and ``expert`` do not tell such a policy from learned
play, so the trainer logs these measures to TensorBoard (``policy/...``) and the demo reports them:

* :func:`state_dependence`: the share of decisions on which the policy's (deterministic, masked)
  choice differs from the choice of the **fixed ranking that best fits the policy itself**
  (:func:`fit_ranking`: the order of the actions by pairwise majority of the policy's masked
  logits, refined by swaps that lower the disagreement), counting only decisions with at
  least two legal actions. 0 means the policy is a fixed ranking on these positions; the more
  its choices depend on the state, the higher. Because the ranking is fitted to the policy, this
  is a (near) lower bound of its distance to *any* fixed ranking.
* :func:`saturation`: per hidden layer, the share of (position, unit) activations with
  ``|tanh| > 0.99`` (a saturated tanh passes almost no gradient and no information about the
  state), and the mean over units of each unit's standard deviation across positions.

:func:`probe_positions` records the positions: decisions of a bot (default ``random``) playing every
seat of seeded games, so the same seed gives the same positions at every evaluation.
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from .numpy_policy import NumpyPolicy

#: |tanh| above this counts as saturated.
SATURATION_THRESHOLD = 0.99


def probe_positions(game: str, player_counts: Sequence[int] = (2, 4), num: int = 2000, seed: int = 2024,
                    bot: str = "random", env_options: Optional[dict] = None) -> tuple[np.ndarray, np.ndarray]:
    """``num`` decisions of ``bot`` playing every seat of seeded games (table sizes drawn uniformly
    from ``player_counts``; ``env_options``: the game's rule options): ``(observations float32
    (num, obs_size), masks int8 (num, num_actions))``. The default ``random`` bot plays under any
    rule options and reaches varied positions.
    """
    from .imitation import collect_teacher_decisions

    d = collect_teacher_decisions(game, bot, list(player_counts), num, seed=seed, env_options=env_options)
    return d["observation"], d["action_mask"]


def hidden_activations(policy: NumpyPolicy, obs: np.ndarray) -> list[np.ndarray]:
    """The activations of every hidden layer of ``policy`` on ``obs`` float32 (N, obs_size):
    one float32 (N, units) array per layer."""
    x = np.asarray(obs, np.float32)
    out = []
    for w, b in policy.layers:
        x = x @ w.T + b
        x = np.tanh(x) if policy.activation == "tanh" else np.maximum(x, 0.0)
        out.append(x)
    return out


def saturation(policy: NumpyPolicy, obs: np.ndarray, masks: Optional[np.ndarray] = None,
               threshold: float = SATURATION_THRESHOLD) -> dict:
    """Per hidden layer, on the positions ``obs`` (the game's observations; ``masks``: their action
    masks, which an observation encoder may need; default all legal): ``saturated`` (tanh: share of activations with ``|a| > threshold``;
    relu: share of units that are 0 on every position, i.e. dead) and ``unit_std`` (mean over
    units of the standard deviation of the unit across the positions).

    Returns:
        ``{"saturated": [float per layer], "unit_std": [float per layer]}``.
    """
    if masks is None:
        masks = np.ones((len(obs), policy.num_actions), np.int8)
    sat, std = [], []
    for a in hidden_activations(policy, policy.prepare(obs, masks)):
        if policy.activation == "tanh":
            sat.append(float(np.mean(np.abs(a) > threshold)))
        else:
            sat.append(float(np.mean(np.all(a <= 0.0, axis=0))))
        std.append(float(np.mean(a.std(axis=0))))
    return {"saturated": sat, "unit_std": std}


def ranking_choices(ranking: Sequence[int], masks: np.ndarray) -> np.ndarray:
    """The choice of the fixed ranking (best first) on each mask: its first legal action; int64 (N,)."""
    masks = np.asarray(masks) != 0
    prio = np.empty(masks.shape[1], np.int64)
    prio[np.asarray(ranking, np.int64)] = np.arange(len(ranking))[::-1]   # higher = preferred
    return np.argmax(np.where(masks, prio[None, :], -1), axis=1).astype(np.int64)


def masked_argmax(logits: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """The legal action of highest logit in each row; int64 (N,)."""
    return np.argmax(np.where(np.asarray(masks) != 0, logits, -np.inf), axis=1).astype(np.int64)


def fit_ranking(logits: np.ndarray, masks: np.ndarray, max_passes: int = 20) -> np.ndarray:
    """The fixed ranking (best first, int64 (num_actions,)) that best fits the masked argmax of ``logits``.

    Start: actions sorted by how often they beat each other action on the decisions where both are
    legal (pairwise majority of the logits, Copeland's rule; ties by the mean pairwise win share);
    for a policy that is a fixed ranking this is exactly its ranking. Then swaps of two
    actions are kept while one lowers the share of decisions where the ranking's choice differs
    from the policy's (at most ``max_passes`` passes over the pairs).
    """
    logits = np.asarray(logits, np.float64)
    legal = np.asarray(masks) != 0
    n_act = logits.shape[1]
    both = legal[:, :, None] & legal[:, None, :]
    beats = (logits[:, :, None] > logits[:, None, :]) & both
    n_both = both.sum(axis=0)
    share = np.where(n_both > 0, beats.sum(axis=0) / np.maximum(n_both, 1), 0.5)
    np.fill_diagonal(share, 0.5)
    copeland = (share > 0.5).sum(axis=1) + 0.5 * (share == 0.5).sum(axis=1)
    ranking = np.lexsort((-share.mean(axis=1), -copeland)).astype(np.int64)
    chosen = masked_argmax(logits, legal)

    def errors(r):
        return int(np.sum(ranking_choices(r, legal) != chosen))

    best = errors(ranking)
    for _ in range(max_passes):
        improved = False
        for i in range(n_act):
            for j in range(i + 1, n_act):
                cand = ranking.copy()
                cand[i], cand[j] = cand[j], cand[i]
                e = errors(cand)
                if e < best:
                    ranking, best, improved = cand, e, True
        if not improved or best == 0:
            break
    return ranking


def state_dependence(logits: np.ndarray, masks: np.ndarray) -> dict:
    """How much the masked argmax of ``logits`` depends on the state (module docstring).

    Args:
        logits: float (N, num_actions) unmasked logits of the policy on N positions.
        masks: (N, num_actions) action masks (nonzero = legal).

    Returns:
        ``{"state_dependence": share of decisions (with >= 2 legal actions) where the policy's
        choice differs from its best-fitting fixed ranking's, "ranking": that ranking (list, best
        first), "decisions": how many decisions counted}``.
    """
    logits = np.asarray(logits, np.float64)
    legal = np.asarray(masks) != 0
    keep = legal.sum(axis=1) >= 2
    logits, legal = logits[keep], legal[keep]
    if len(logits) == 0:
        return {"state_dependence": 0.0, "ranking": list(range(np.shape(masks)[1])), "decisions": 0}
    ranking = fit_ranking(logits, legal)
    differs = ranking_choices(ranking, legal) != masked_argmax(logits, legal)
    return {"state_dependence": float(differs.mean()), "ranking": [int(a) for a in ranking],
            "decisions": int(len(logits))}


def policy_report(policy: NumpyPolicy, obs: np.ndarray, masks: np.ndarray,
                  action_names: Optional[Sequence[str]] = None) -> dict:
    """:func:`state_dependence` and :func:`saturation` of a numpy policy on the positions
    ``obs`` (the game's observations), ``masks``; the ranking also by name when ``action_names`` is given."""
    rep = state_dependence(policy.logits(policy.prepare(obs, masks)), masks)
    rep.update(saturation(policy, obs, masks))
    if action_names is not None:
        rep["ranking_names"] = [action_names[a] for a in rep["ranking"]]
    return rep
