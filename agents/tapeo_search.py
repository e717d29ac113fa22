"""Tapeo search bot ``search``: determinized playouts over the unseen hands, batched.

Perfect Information Monte Carlo (PIMC) over Tapeo's hidden hands, with the simultaneous pick
handled by sampling the other seats' picks from a playout policy (tapeo.txt 'Each pick': every
seat picks at once, in secret):

1. **Candidates.** The legal kinds, ranked by the playout policy's preference at the real
   observation (the network's logits for an ONNX policy such as the shipped ``ppo``, the shipped
   network itself even when the playouts run the distilled one (step 3), else the
   expert's values, :meth:`hod.agents.tapeo_bots.ExpertBot.scores`), at most ``candidates`` of
   them. A decision with one candidate (one kind in hand, or ``candidates=1``) plays it, with no
   search.
2. **Determinizations.** ``determinizations`` times, a full state the seat cannot tell from the
   real one is drawn from ``belief(rng)`` (the game's
   :func:`tapeo_env.rules.engine.sample_consistent_state`: the seat's own hand, every bar, the
   kept churros and the hands it held earlier this round, T6-T8, are as they are; the unseen
   tapas are redealt among the hands it has not seen and the undealt pile; later rounds are dealt
   from a fresh seed).
3. **Playouts.** For each determinization, ``playouts`` times: the other seats' picks at this
   decision are drawn from the playout policy (once, shared by every candidate: the picks are
   simultaneous, so they cannot depend on the candidate), then for each candidate the pick is
   revealed and the game is played to its end with the playout policy in every seat (the bot's
   own later picks included). With ``playout="ppo"`` (the default) the playouts sample from
   :data:`PLAYOUT_NETWORK`, a 157 -> 32 -> 32 -> 10 network distilled from the shipped ``ppo``
   (its softmax matched on 766,409 positions of ``ppo``'s own games at 2-6 players; held out:
   0.0021 nats of KL per row, the same argmax on 99.1% of rows; ``python -m
   hod.benchmarks.tapeo_playout_distill``, its card names the teacher), about 10x cheaper per row
   than ``ppo``; ``distilled=False`` samples from ``ppo`` itself. Every candidate sees the same
   determinizations, the same picks of the others at this decision and the same random numbers
   in its playouts (common random numbers), so the comparison between candidates has little
   noise.
4. **Value.** A finished playout scores ``win share + margin_weight * margin / 100`` for the seat:
   the win share is 1 for the only winner and 1/k for each of k shared winners, 0 otherwise
   (T10: most points, then most churros); the margin is the seat's final points minus the mean of
   the others' (round points plus the end churros, T9). The candidate with the best mean over the
   ``determinizations x playouts`` games is played (exact ties: the bot's seeded generator).

All the playouts of one decision run together in the batched engine
(:class:`tapeo_env.rules.batched.BatchedTapeo`, loaded with the record of the samples,
:func:`~tapeo_env.rules.batched.state_record`): ``candidates x determinizations x
playouts`` games step at once, and an ONNX playout policy is asked in one call per pick, for
every seat of every game that has more than one legal kind in hand (a forced seat picks its one
kind); the shipped ``ppo`` (``distilled=False`` or ``playout_model``) once per distinct
(observation, mask) too (equal rows get equal logits: at the benchmark's positions 18% fewer
rows), the distilled network, for which finding the repeats costs more than asking them, for
every such row. Decisions per second: ``python -m hod.benchmarks.tapeo_search_speed``; with the
distilled playouts a decision takes about 10 ms of one core at the benchmark's 4-player
positions, of which the playout network is about a quarter, the 32 belief samples a fifth and
the batched engine (observe, step, load) another quarter (docs/results.md, "Distilled
playouts"); with ``distilled=False`` about 3x longer, the network then 60-70% of it. A playout
policy that is a per-row bot (``"expert"``, ``"greedy"``, ``"random"``) is asked row by row and
is far slower (the expert: about 0.3 ms per seat and pick).

The seat searched for is ``belief.seat`` when the belief carries it (the tournament's does),
checked against the first sample; otherwise the seat whose observation of every sample equals
the observation given (:func:`tapeo_env.rules.observation.encode`; the first such seat if a
position looks the same from several). A belief whose samples no seat's observation matches is
refused.
"""
from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Optional

import numpy as np
from numba import njit

from hod.core.errors import ConfigError
from hod.core.jit import cache_kernels
from tapeo_env.rules import engine
from tapeo_env.rules.batched import BatchedTapeo, state_record
from tapeo_env.rules.observation import encode

from .base import BeliefSampler, CandidateSearchBot, Observation, legal_actions
from .onnx_policy import OnnxPolicy
from .tapeo_bots import ExpertBot

__all__ = ["SearchBot", "playout_values", "PLAYOUT_POLICIES", "PLAYOUT_NETWORK", "MAX_SAMPLES", "MAX_PLAYOUTS_PER_CANDIDATE"]

#: Playout policies a :class:`SearchBot` accepts: the registered Tapeo bots that decide from the
#: observation alone (the search bot itself needs a belief, so it is not one of them).
PLAYOUT_POLICIES = ("ppo", "expert", "greedy", "random")
#: The network the playouts of ``playout="ppo"`` run (``distilled=True``, the default): a small
#: network trained to pick as the shipped ``ppo`` picks (``python -m
#: hod.benchmarks.tapeo_playout_distill``; its model card names the teacher), loaded by name.
PLAYOUT_NETWORK = Path(__file__).resolve().with_name("tapeo_playout.onnx")


def playout_values(final_scores: np.ndarray, winners: np.ndarray, seat: int, margin_weight: float) -> np.ndarray:
    """Scores of finished games for ``seat``: win share + ``margin_weight`` x margin / 100.

    Args:
        final_scores: int (G, n) final points of each game (round points + end churros, T9).
        winners: bool (G, n) the winners of each game (T10: most points, then most churros).
        seat: the seat scored, 0..n-1.
        margin_weight: weight of the margin (points minus the others' mean) per 100 points.

    Returns:
        float64 (G,); e.g. final scores [8, 4] with seat 0 the only winner, weight 1:
        1 + (8 - 4) / 100 = 1.04.

    Raises:
        ConfigError: shapes that differ, fewer than 2 seats, or ``seat`` not one of them.
    """
    pts = np.asarray(final_scores, np.float64)
    won = np.asarray(winners, bool)
    if pts.ndim != 2 or won.shape != pts.shape or pts.shape[1] < 2 or not 0 <= seat < pts.shape[1]:
        raise ConfigError(f"final_scores {pts.shape} and winners {won.shape} must be (G, n >= 2) with seat "
                          f"{seat!r} in 0..n-1")
    n = pts.shape[1]
    share = np.where(won[:, seat], 1.0 / np.maximum(won.sum(axis=1), 1), 0.0)
    margin = pts[:, seat] - (pts.sum(axis=1) - pts[:, seat]) / (n - 1)
    return share + margin_weight * margin / 100.0


_CACHED = cache_kernels(__file__, depends=[os.path.dirname(engine.__file__)])   # the rules kernels it calls
#: The masked logit of an illegal kind (the export's graph writes -1e8 there).
_ILLEGAL = np.float32(-1e8)


@njit(cache=_CACHED)
def _rows_to_ask(obs, mask, out, ask, which):
    """The rows a playout pick must ask the network for, without repeats.

    A row with one legal kind gets it in ``out`` (int64 (R,): the pick of a forced seat; the
    other rows' entries are overwritten later). The rows with more than one legal kind are asked
    once per distinct (observation, mask): the first row of each distinct one goes to
    ``ask[:u]``, and ``which[r]`` (int64 (R,)) is the index in ``ask`` of the row that row ``r``
    repeats (itself if first; -1 for a forced row). Rows are equal when their bytes are (the
    float32 observation compared bit for bit). Returns u.

    Args: ``obs`` float32 (R, W) and ``mask`` int8 (R, K), C-contiguous, at least one legal kind
    per row.
    """
    R, W = obs.shape
    K = mask.shape[1]
    bits = obs.view(np.uint32)
    size = 1
    while size < 2 * R:
        size *= 2
    table = np.full(size, -1, np.int64)
    u = 0
    for r in range(R):
        legal, last = 0, -1
        h = np.uint64(14695981039346656037)
        for k in range(K):
            if mask[r, k]:
                legal += 1
                last = k
            h = (h ^ np.uint64(mask[r, k])) * np.uint64(1099511628211)
        out[r] = last
        which[r] = -1
        if legal < 2:
            continue
        for j in range(W):
            h = (h ^ np.uint64(bits[r, j])) * np.uint64(1099511628211)
        slot = np.int64(h & np.uint64(size - 1))
        while True:
            e = table[slot]
            if e < 0:
                table[slot] = u
                ask[u] = r
                which[r] = u
                u += 1
                break
            q = ask[e]
            same = True
            for k in range(K):
                if mask[q, k] != mask[r, k]:
                    same = False
                    break
            if same:
                for j in range(W):
                    if bits[q, j] != bits[r, j]:
                        same = False
                        break
            if same:
                which[r] = e
                break
            slot = (slot + 1) & (size - 1)
    return u


@njit(cache=_CACHED)
def _rows_with_choice(mask, out, ask, which):
    """The rows a playout pick asks the network for when repeats are not looked for (a small
    network: asking a repeated row again costs less than finding it): a row with one legal kind
    gets it in ``out`` (int64 (R,)) and ``which[r] = -1``; the others go to ``ask[:u]`` in order,
    ``which[r]`` their index there. ``mask`` int8 (R, K), at least one legal kind per row.
    Returns u."""
    R, K = mask.shape
    u = 0
    for r in range(R):
        legal, last = 0, -1
        for k in range(K):
            if mask[r, k]:
                legal += 1
                last = k
        out[r] = last
        if legal < 2:
            which[r] = -1
        else:
            ask[u] = r
            which[r] = u
            u += 1
    return u


@njit(cache=_CACHED)
def _sampled_picks(logits, which, u, out):
    """``out[r]`` for each row r with ``which[r] >= 0``: the inverse of the softmax's cumulative
    distribution of ``logits[which[r]]`` (float32 (m, K), masked: illegal kinds at -1e8, so their
    probability is 0) at ``u[r]`` (float64 (R,), in [0, 1)), scaled by ``1 - 1e-12`` so that the
    pick is a legal kind. The same float64 operations, in the same order, as numpy's
    ``exp(z - z.max())``, ``cumsum`` and ``(cum <= u * total * (1 - 1e-12)).sum()`` on each row."""
    K = logits.shape[1]
    cum = np.empty(K, np.float64)
    for r in range(which.shape[0]):
        if which[r] < 0:
            continue
        z = logits[which[r]]
        top = np.float64(z[0])
        for k in range(1, K):
            top = max(top, np.float64(z[k]))
        acc = 0.0
        for k in range(K):
            if z[k] > _ILLEGAL:                  # an illegal kind's exp(-1e8 - top) is 0.0: acc unchanged
                acc += np.exp(np.float64(z[k]) - top)
            cum[k] = acc
        x = u[r] * acc * (1.0 - 1e-12)
        c = 0
        for k in range(K):
            c += cum[k] <= x
        out[r] = c


#: The most determinizations (and playouts per determinization) one decision may ask for; their
#: product is at most :data:`MAX_PLAYOUTS_PER_CANDIDATE`.
MAX_SAMPLES = 4096
#: The most games one candidate's batch may play (determinizations x playouts): each decision plays
#: that many games for each of up to 10 candidates at once (about 225 bytes of engine state and a
#: 157-float observation a game), so this bounds a decision's memory to a few hundred MB.
MAX_PLAYOUTS_PER_CANDIDATE = 16_384


def _check_int(name: str, value: Any, low: int, high: Optional[int] = None) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low \
            or (high is not None and value > high):
        span = f">= {low}" if high is None else f"in {low}..{high}"
        raise ConfigError(f"{name}={value!r}: legal values are integers {span}")
    return int(value)


class SearchBot(CandidateSearchBot):
    """Determinized, batched playouts (module docstring; registry name ``"search"``).

    Args:
        seed: seed of the bot's generator (determinizations, the others' picks, playout random
            numbers, ties) and of its playout policy.
        determinizations: hidden-hand samples per decision (int in 1..:data:`MAX_SAMPLES`).
        playouts: playouts per determinization and candidate (int in 1..:data:`MAX_SAMPLES`; with
            ``determinizations`` a product of at most :data:`MAX_PLAYOUTS_PER_CANDIDATE`).
        playout: the playout policy, one of :data:`PLAYOUT_POLICIES` (``"ppo"``: the shipped
            network, sampled from its softmax; the others: those bots, one row at a time).
        candidates: at most this many kinds are searched, the playout policy's favourites first
            (int >= 1; 10 = every legal kind).
        margin_weight: weight of the margin per 100 points in a playout's score (finite number
            >= 0; 0 = win share only).
        playout_model: None (the shipped network for ``playout="ppo"``) or the path of another
            Tapeo ONNX export (with its card beside it) to use as the playout policy, e.g. a
            network of an expert-iteration run searching over its own policy
            (:mod:`hod.training.expert_iteration`).
        distilled: with ``playout="ppo"`` and no ``playout_model``: True (default) plays the
            playouts with :data:`PLAYOUT_NETWORK`, the small network distilled from the shipped
            ``ppo`` (the candidates are still ranked by ``ppo`` itself); False plays them with
            ``ppo`` (the bot before 2026-12-02's distillation, decision for decision; about 3x
            slower). Ignored otherwise.

    Raises:
        ConfigError: an option outside its legal values (the message names them), an unknown
            option, or ``act`` needing a search without ``belief``.
        CheckpointError: a ``playout_model`` (or, ``distilled``, :data:`PLAYOUT_NETWORK`) that is
            not a usable Tapeo export.
        ImportError: ``playout="ppo"`` without onnxruntime.
    """

    game = "tapeo"
    name = "search"
    needs_belief = True
    #: At its defaults (``playout="ppo"``) it runs the shipped network: onnxruntime is needed.
    needs_onnx = True

    def __init__(self, seed: Optional[int] = None, determinizations: int = 32, playouts: int = 1,
                 playout: str = "ppo", candidates: int = 10, margin_weight: float = 1.0,
                 playout_model: Optional[str] = None, distilled: bool = True, **options: Any) -> None:
        super().__init__(seed, **options)
        self.determinizations = _check_int("determinizations", determinizations, 1, MAX_SAMPLES)
        self.playouts = _check_int("playouts", playouts, 1, MAX_SAMPLES)
        if self.determinizations * self.playouts > MAX_PLAYOUTS_PER_CANDIDATE:
            raise ConfigError(f"determinizations={self.determinizations} x playouts={self.playouts} = "
                              f"{self.determinizations * self.playouts} games per candidate; legal: a product of at "
                              f"most {MAX_PLAYOUTS_PER_CANDIDATE:,} (a decision plays it for each candidate at once)")
        self.candidates = _check_int("candidates", candidates, 1)
        if playout not in PLAYOUT_POLICIES:
            raise ConfigError(f"playout={playout!r}: legal values are {list(PLAYOUT_POLICIES)}")
        if isinstance(margin_weight, bool) or not isinstance(margin_weight, (int, float, np.integer, np.floating)) \
                or not 0 <= margin_weight < math.inf:
            raise ConfigError(f"margin_weight={margin_weight!r}: legal values are finite numbers >= 0")
        self.margin_weight = float(margin_weight)
        self.playout = playout
        self.playout_model = playout_model
        if playout_model is not None:
            if playout != "ppo" or not isinstance(playout_model, (str, Path)) or not str(playout_model).endswith(".onnx"):
                raise ConfigError(f"playout_model={playout_model!r} (with playout={playout!r}): legal values are None "
                                  f"or the path of a Tapeo ONNX export (.onnx, its card beside it), with playout='ppo'")
            self._policy = OnnxPolicy(playout_model, game="tapeo", seed=seed)   # CheckpointError if unusable
        else:
            from .registry import make   # the registry imports the declarations, which name this module
            self._policy = make("tapeo", playout, seed=seed)
        if not isinstance(distilled, (bool, np.bool_)):
            raise ConfigError(f"distilled={distilled!r}: legal values are True and False")
        self.distilled = bool(distilled)
        self._network = isinstance(self._policy, OnnxPolicy)
        # the network of the playouts (the ranking at the root stays self._policy's)
        self._playout_net = self._policy
        if self._network and self.distilled and playout_model is None:
            self._playout_net = OnnxPolicy(PLAYOUT_NETWORK, game="tapeo", seed=seed)   # CheckpointError if unusable
        self._expert = self._policy if isinstance(self._policy, ExpertBot) else ExpertBot(seed=seed)
        self._engines: dict = {}

    def reset(self, seed: Optional[int] = None) -> None:
        """Start a new game; reseeds the bot's generator (and its policy's) when ``seed`` is given."""
        super().reset(seed)
        self._policy.reset(seed)
        if self._playout_net is not self._policy:
            self._playout_net.reset(seed)
        self._expert.reset(seed)

    def resample_actions(self, observation: Observation, belief: Optional[BeliefSampler],
                         seeds) -> Optional[list]:
        """:meth:`hod.agents.base.CandidateSearchBot.resample_actions` when the playouts are
        played by a network (their draws come from this bot's generator); None with a per-row
        playout bot, which draws from a generator of its own."""
        if not self._network:
            return None
        return super().resample_actions(observation, belief, seeds)

    def playout_surrogate(self) -> Any:
        """The bot that stands in for this one inside the playouts of a value that plays the
        lineup (:class:`hod.evaluation.luck_playout.LineupPlayoutValue`: a search per playout
        step would cost a search per row): the policy it ranks its candidates with (default the
        shipped ``ppo``, its argmax), which agrees with the search's choice on about half of the
        searched decisions (docs/results.md, "Round 6"). An approximation of this bot's play;
        the luck correction stays unbiased with any value."""
        return self._policy

    # ---- step 1 -----------------------------------------------------------------------------
    def candidate_actions(self, observation: Observation) -> list:
        """The kinds to search, the playout policy's favourites first (step 1).

        Args:
            observation: the seat's ``{"observation": float32 (157,), "action_mask": int8 (10,)}``.

        Returns:
            list of int legal kinds, 1 to ``candidates`` long (ties in ascending kind order).
        """
        legal = legal_actions(observation)
        if legal.size == 1:
            return [int(legal[0])]
        if self._network:
            _, logits = self._policy.run(observation["observation"], observation["action_mask"])
            pref = logits[0].astype(np.float64)
        else:
            pref = self._expert.scores(observation["observation"], legal)
        order = legal[np.argsort(-pref[legal], kind="stable")]
        return [int(a) for a in order[: self.candidates]]

    # ---- steps 2-4 --------------------------------------------------------------------------
    def action_values(self, observation: Observation, belief: Optional[BeliefSampler],
                      candidates: Optional[list] = None) -> dict:
        """Mean playout score of each candidate (steps 2-4 of the module docstring).

        Args:
            observation: the seat's observation dict.
            belief: ``belief(rng) -> State``, full states the seat cannot tell from the real one.
            candidates: kinds to score (default: :meth:`candidate_actions`), each legal.

        Returns:
            ``{kind: mean of win share + margin_weight x margin / 100}`` over the
            ``determinizations x playouts`` playouts.

        Raises:
            ConfigError: ``belief`` is None, or its first sample matches no seat's observation.
        """
        if belief is None:
            raise ConfigError(
                "SearchBot is a search bot (needs_belief): act(observation, belief) needs "
                "belief(rng) -> State, e.g. lambda rng: tapeo_env.sample_consistent_state(state, seat, rng)")
        cands = self.candidate_actions(observation) if candidates is None else [int(a) for a in candidates]
        D, P, C = self.determinizations, self.playouts, len(cands)
        states = [belief(self.rng) for _ in range(D)]
        seat = self._seat(states, observation, getattr(belief, "seat", None))
        cfg = states[0].config
        n = cfg.num_players
        eng = self._engine(cfg, D * P * C)
        # game (d, p, c) is row (d * P + p) * C + c: the candidates of one playout are neighbours
        eng.load_state(state_record(states, cfg).take(np.repeat(np.arange(D), P * C)))
        u = self.rng.random((D * P, n))
        # the others' picks (D * P, n): one game of each playout asked (its candidates' games are equal now)
        picks = self._policy_picks(eng, u, games=np.arange(0, D * P * C, C) if C > 1 else None)
        picks = np.repeat(picks, C, axis=0)
        picks[:, seat] = np.tile(np.asarray(cands, np.int64), D * P)
        eng.step(picks)
        while not eng.terminal.any():
            u = self.rng.random((D * P, n))
            eng.step(self._policy_picks(eng, np.repeat(u, C, axis=0)))
        s = eng.state
        vals = playout_values(s.final_scores, s.winners, seat, self.margin_weight).reshape(D * P, C).mean(axis=0)
        return {a: float(v) for a, v in zip(cands, vals)}

    def _seat(self, samples: list, observation: Observation, told: Optional[int]) -> int:
        """The seat searched for (module docstring): ``told`` if given and its observation of the
        first sample is ``observation``, else the first seat whose observation of every sample is
        ``observation`` (a seat matching by chance in one sample fails in another).

        Raises:
            ConfigError: no such seat.
        """
        obs = np.asarray(observation["observation"])
        seats = range(samples[0].config.num_players) if told is None else [int(told)]
        for i in seats:
            if all(np.array_equal(encode(st, i), obs) for st in (samples if told is None else samples[:1])):
                return i
        raise ConfigError("SearchBot: the belief's samples match no seat's observation (a belief of "
                          "another seat or another game?)")

    def _engine(self, cfg: "engine.Config", batch: int) -> BatchedTapeo:
        """A batched engine of ``batch`` games for ``cfg`` (kept for the next decisions)."""
        key = (cfg, batch)
        eng = self._engines.get(key)
        if eng is None:
            if len(self._engines) > 64:
                self._engines.clear()
            eng = self._engines[key] = BatchedTapeo(cfg, batch, seed=0)
        return eng

    def _policy_picks(self, eng: BatchedTapeo, u: np.ndarray, games: Optional[np.ndarray] = None) -> np.ndarray:
        """The playout policy's picks, int64 (G, n), for the games ``games`` (None: all, in order).

        ``u`` (G, n) are uniform numbers in [0, 1): a network's pick is the inverse of its
        softmax's cumulative distribution at ``u`` (so equal positions with equal ``u`` pick
        alike); a seat with one legal kind picks it without asking the network (the inverse at
        any ``u`` is that kind: every other kind's probability is 0), and rows equal bit for bit
        are asked once (onnxruntime's logits of a row do not depend on the other rows of the
        batch); a per-row bot is asked with its own generator."""
        n = eng.num_players
        obs = eng.observe(games)
        mask = eng.legal_mask(games)
        G = obs.shape[0]
        obs = obs.reshape(G * n, -1)
        mask = mask.reshape(G * n, -1)
        if self._network:
            # a forced seat picks its one legal kind; equal rows are asked once (equal logits)
            out, ask, which = np.empty(G * n, np.int64), np.empty(G * n, np.int64), np.empty(G * n, np.int64)
            if self._playout_net is self._policy:   # the big network: repeats are worth finding
                ask = ask[:_rows_to_ask(obs, mask, out, ask, which)]
            else:
                ask = ask[:_rows_with_choice(mask, out, ask, which)]
            if ask.size:
                net = self._playout_net
                if net.obs_size == obs.shape[1]:   # the game's observation is the network's input
                    logits = net.logits(obs[ask], mask[ask])
                else:
                    _, logits = net.run(obs[ask], mask[ask])
                _sampled_picks(logits, which, np.ascontiguousarray(u, np.float64).reshape(-1), out)
            return out.reshape(G, n)
        out = np.empty(G * n, np.int64)
        for r in range(G * n):
            out[r] = self._policy.act({"observation": obs[r], "action_mask": mask[r]})
        return out.reshape(G, n)
