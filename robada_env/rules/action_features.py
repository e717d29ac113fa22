"""Per-action summaries of Ronda Robada: the block that observation layout version 2 appends to
version 1 (:data:`robada_env.rules.observation.LAYOUT_V2`, ``ACTION_SUMMARIES``).

For each of the 27 actions (``robada_env.rules.actions``), ten numbers saying what the action does
to the run and the turn: whether it is legal, the points it adds to my total and takes from
another pile, how far a greedy walk can still go after it (``runs.walk_run``'s rule: tap a loose
card of the needed rank first, else the pile of most points, R2, R3), whether the run can go on,
my pile's points and visible card if the turn ends there (R5), the best reply of the next seat on
the table the turn leaves (over the ranks with a loose card that some unseen card could start,
its greedy walk's gain) and how much of my pile that reply could take, and how many ranks stay
loose. The summary ``k`` of action ``a`` is entry ``27 * k + a`` of the block (the order of
``observation.ACTION_SUMMARIES``).

One source of the rules: everything is computed by one numba kernel (:func:`features_batch`)
from the seat's version-1 observation vector and its action mask (and the table's rule options,
:func:`robada_env.rules.kernels.rules_array`), through the run rules of
:mod:`robada_env.rules.kernels` (:func:`~robada_env.rules.kernels.walk_gain` and the rule tables
built by :mod:`robada_env.rules.runs`). A pure function of what the seat sees (R9): two states
that differ only in hidden cards have the same version-1 vector and mask, hence the same
summaries. The env (``observation_version=2``), the batched engine (:func:`observe_batched`) and
the policy encoder ``robada_v2`` (:mod:`hod.agents.encoders`) all call :func:`action_features`.

Actions not in the mask get 0 everywhere. A seat that is not to act (mask: ``no-op`` only) gets
``act_legal`` 1 for ``no-op`` and nothing else.
"""
from __future__ import annotations

from typing import Optional

import numpy as np
from numba import njit as _njit

from hod.core.jit import cache_kernels

from .actions import CONFIRM, DROP, NOOP, NUM_ACTIONS, START, TAKE, TAP
from .cards import COPIES_PER_RANK, NUM_RANKS, TOTAL_POINTS
from .engine import Config, MAX_PLAYERS
from .kernels import R_AFTER_START, R_AFTER_STEP, R_TAKE_OWN, _PTS, rules_array, walk_gain
from .observation import LAYOUT, LAYOUT_V2, NUM_SUMMARIES, OBS_SIZE, OBS_SIZE_V2

__all__ = ["SIZE", "action_features", "encode_v2", "observe_batched", "features_batch"]

#: Length of the appended block: 10 summaries x 27 actions = 270.
SIZE = NUM_SUMMARIES * NUM_ACTIONS
assert OBS_SIZE + SIZE == OBS_SIZE_V2

_R = NUM_RANKS
_A = NUM_ACTIONS
_O = {p.name: LAYOUT.offsets[p.name].start for p in LAYOUT.pieces}
_NP0, _HAND0, _LOOSE0, _TOP0, _PPTS0 = _O["num_players"], _O["hand"], _O["loose"], _O["pile_top"], _O["pile_points"]
_RACT0, _RSTART0, _RNEXT0, _RPTS0, _UNSEEN0 = (_O["run_active"], _O["run_start"], _O["run_next"], _O["run_points"],
                                              _O["unseen"])
# the summaries' rows in the block (observation.ACTION_SUMMARIES order)
_V2 = {p.name: (LAYOUT_V2.offsets[p.name].start - OBS_SIZE) // NUM_ACTIONS for p in LAYOUT_V2.pieces[len(LAYOUT.pieces):]}
(F_LEGAL, F_GAIN, F_STEAL, F_REACH, F_CONT, F_SCORE, F_REPLY, F_EXPOSED, F_TOP, F_LOOSE) = (
    _V2[k] for k in ("act_legal", "act_gain", "act_steal", "act_reach", "act_continues", "act_score", "act_reply",
                     "act_exposed", "act_top", "act_loose_ranks"))
_COPIES = float(COPIES_PER_RANK)
_TOTAL = float(TOTAL_POINTS)
_INV_TOTAL = 1.0 / TOTAL_POINTS
_INV_R = 1.0 / _R
_S = MAX_PLAYERS
#: Whether the kernels are cached on disk (:func:`hod.core.jit.cache_kernels`).
CACHED = cache_kernels(__file__)


def njit(fn):
    """numba's ``njit`` with this module's cache setting (reference counting on: the batch
    kernel allocates its scratch arrays)."""
    return _njit(cache=CACHED)(fn)


@njit
def _onehot(row, start, size):
    """Index of the set entry of ``row[start:start + size]``, -1 if none."""
    for i in range(size):
        if row[start + i] > 0.5:
            return i
    return -1


@njit
def _reply(lo, tp, pp, un, lo2, tp2, rules):
    """The next seat's best reply on the table ``lo`` (loose per rank), ``tp`` (visible ranks,
    seat-relative: 0 = me, 1 = the next seat), ``pp`` (pile points): over the ranks r with a loose
    card and an unseen card (``un``), 2 x points(r) + :func:`walk_gain` of a run of seat 1 started
    with r; returns ``(best, exposed)``, exposed the most of my pile's points such a walk takes."""
    best = 0
    exposed = 0
    n = tp.shape[0]
    for r in range(_R):
        if lo[r] > 0 and un[r] > 0:
            for q in range(_R):
                lo2[q] = lo[q]
            lo2[r] -= 1
            for k in range(n):
                tp2[k] = tp[k]
            gain, steps, taken, need = walk_gain(rules[R_AFTER_START + r], lo2, tp2, pp, 1, rules)
            v = 2 * _PTS[r] + gain
            if v > best:
                best = v
            if taken & 1 and pp[0] > exposed:
                exposed = pp[0]
    return best, exposed


@njit
def features_row(row, mask, rules, out, lo0, lo, lo2, un, tp0, tp, tp2, pp0, pp):
    """The summaries of one decision into ``out`` float32 (270,) (zeroed by the caller): ``row``
    float32 (192,) the version-1 observation, ``mask`` (27,) its action mask, ``rules`` int8 (22,);
    the other arguments are int64 scratch arrays, (10,) and (4,)."""
    n = _onehot(row, _NP0, 3) + 2
    if n < 2:
        return
    for r in range(_R):
        lo0[r] = np.int64(np.rint(row[_LOOSE0 + r] * _COPIES))
        un[r] = np.int64(np.rint(row[_UNSEEN0 + r] * _COPIES))
    for k in range(n):
        tp0[k] = _onehot(row, _TOP0 + k * _R, _R)
        pp0[k] = np.int64(np.rint(row[_PPTS0 + k] * _TOTAL)) if tp0[k] >= 0 else 0
    run = row[_RACT0] > 0.5
    start0 = -1
    need = -1
    run_pts = 0
    if run:
        start0 = _onehot(row, _RSTART0, _R)
        need = _onehot(row, _RNEXT0, _R)
        run_pts = np.int64(np.rint(row[_RPTS0] * _TOTAL))
    tpn = tp[:n]
    tp2n = tp2[:n]
    ppn = pp[:n]
    for a in range(_A):
        if mask[a] == 0:
            continue
        out[F_LEGAL * _A + a] = 1.0
        if a == NOOP:
            continue
        for r in range(_R):
            lo[r] = lo0[r]
        for k in range(n):
            tp[k] = tp0[k]
            pp[k] = pp0[k]
        gain = 0
        steal = 0
        banked = 0          # the run's points after the action
        nxt = -1            # the rank needed after the action (-1: none, or the turn ends)
        start = start0
        extends = False
        drop = False
        if a < DROP:                                     # start r: a hand card + a loose card
            r = a - START
            lo[r] -= 1
            gain = 2 * _PTS[r]
            banked = gain
            nxt = rules[R_AFTER_START + r]
            start = r
            extends = True
        elif a < TAP:                                    # drop r: the card becomes loose (R4)
            lo[a - DROP] += 1
            drop = True
        elif a == TAP:                                   # R3: a loose card of the needed rank
            lo[need] -= 1
            gain = _PTS[need]
            banked = run_pts + gain
            nxt = rules[R_AFTER_STEP + need]
            extends = True
        elif a < CONFIRM:                                # R3: the whole pile of seat +k
            k = a - TAKE
            v = pp[k]
            tp[k] = -1
            pp[k] = 0
            if k > 0:
                gain = v
                steal = v
            banked = run_pts + v
            nxt = rules[R_AFTER_STEP + need]
            extends = True
        else:                                            # confirm (R5)
            banked = run_pts
        if extends and nxt >= 0:
            cont = lo[nxt] > 0
            if not cont:
                for k in range(n):
                    if tp[k] == nxt and (k != 0 or rules[R_TAKE_OWN] != 0):
                        cont = True
            if cont:
                out[F_CONT * _A + a] = 1.0
                for r in range(_R):
                    lo2[r] = lo[r]
                for k in range(n):
                    tp2[k] = tp[k]
                reach, steps, taken, end = walk_gain(nxt, lo2, tp2n, ppn, 0, rules)
                out[F_REACH * _A + a] = reach * _INV_TOTAL
        if not drop:                                     # the turn ends: my pile gets the run (R5)
            pp[0] += banked
            tp[0] = start
        best, exposed = _reply(lo, tpn, ppn, un, lo2, tp2n, rules)
        loose_ranks = 0
        for r in range(_R):
            if lo[r] > 0:
                loose_ranks += 1
        out[F_GAIN * _A + a] = gain * _INV_TOTAL
        out[F_STEAL * _A + a] = steal * _INV_TOTAL
        out[F_SCORE * _A + a] = pp[0] * _INV_TOTAL
        out[F_REPLY * _A + a] = best * _INV_TOTAL
        out[F_EXPOSED * _A + a] = exposed * _INV_TOTAL
        out[F_TOP * _A + a] = (tp[0] + 1) * _INV_R
        out[F_LOOSE * _A + a] = loose_ranks * _INV_R


@njit
def features_batch(obs, masks, rules, out):
    """:func:`features_row` of every row: ``obs`` float32 (M, 192), ``masks`` int8 (M, 27),
    ``rules`` int8 (22,), ``out`` float32 (M, 270) zeroed by the caller."""
    lo0 = np.zeros(_R, np.int64)
    lo = np.zeros(_R, np.int64)
    lo2 = np.zeros(_R, np.int64)
    un = np.zeros(_R, np.int64)
    tp0 = np.full(_S, -1, np.int64)
    tp = np.full(_S, -1, np.int64)
    tp2 = np.full(_S, -1, np.int64)
    pp0 = np.zeros(_S, np.int64)
    pp = np.zeros(_S, np.int64)
    for i in range(obs.shape[0]):
        features_row(obs[i], masks[i], rules, out[i], lo0, lo, lo2, un, tp0, tp, tp2, pp0, pp)


_DEFAULT_RULES = rules_array(Config())
_RULES_CACHE: dict = {}


def _rules(rules: Optional[Config]) -> np.ndarray:
    if rules is None:
        return _DEFAULT_RULES
    if not isinstance(rules, Config):
        raise TypeError(f"rules must be a robada_env.rules.engine.Config or None, got {type(rules).__name__}")
    key = (rules.closing_ace, rules.may_take_own_pile, rules.leftovers_to_last_runner)
    arr = _RULES_CACHE.get(key)
    if arr is None:
        arr = _RULES_CACHE[key] = rules_array(rules)
    return arr


def action_features(observations: np.ndarray, action_masks: np.ndarray, rules: Optional[Config] = None) -> np.ndarray:
    """The per-action summaries of M decisions (the block of layout version 2).

    Args:
        observations: float32 (M, 192), layout ``robada`` version 1, each from the seat whose mask
            is the same row of ``action_masks``.
        action_masks: (M, 27) int, nonzero = legal.
        rules: the table's rule options (:class:`robada_env.rules.engine.Config`; ``num_players``
            unused); None: the published rules.

    Returns:
        float32 (M, 270): summary ``k`` of action ``a`` at column ``27 * k + a``
        (``observation.ACTION_SUMMARIES``), every value in [0, 1].

    Raises:
        ValueError: not two 2-D arrays of those widths with the same M (the expected shapes are named).
        TypeError: ``rules`` neither a Config nor None.
    """
    obs = np.ascontiguousarray(observations, np.float32)
    masks = np.ascontiguousarray(action_masks, np.int8)
    if obs.ndim != 2 or masks.ndim != 2 or obs.shape[1] != OBS_SIZE or masks.shape[1] != NUM_ACTIONS \
            or len(obs) != len(masks):
        raise ValueError(f"expected observations (M, {OBS_SIZE}) and action_masks (M, {NUM_ACTIONS}); "
                         f"got {np.shape(observations)} and {np.shape(action_masks)}")
    out = np.zeros((len(obs), SIZE), np.float32)
    features_batch(obs, masks, _rules(rules), out)
    return out


def encode_v2(observation: np.ndarray, action_mask: np.ndarray, rules: Optional[Config] = None) -> np.ndarray:
    """One observation of layout version 2: float32 (462,) = the version-1 ``observation``
    (192,) followed by :func:`action_features` of it and ``action_mask`` (27,).

    Raises:
        ValueError, TypeError: as :func:`action_features`.
    """
    obs = np.asarray(observation, np.float32)
    mask = np.asarray(action_mask)
    if obs.shape != (OBS_SIZE,) or mask.shape != (NUM_ACTIONS,):
        raise ValueError(f"expected observation ({OBS_SIZE},) and action_mask ({NUM_ACTIONS},); "
                         f"got {obs.shape} and {mask.shape}")
    return np.concatenate([obs, action_features(obs[None], mask[None], rules)[0]])


def observe_batched(engine, games=None) -> np.ndarray:
    """Observations of layout version 2 from the batched engine
    (:class:`robada_env.rules.batched.BatchedRobada`), of the seat to act in each game:
    float32 (G, 1, 462), ``[k, 0]`` equal to the env's version-2 observation of that seat in game
    ``games[k]`` (its version-1 ``engine.observe`` and ``engine.legal_mask``, then
    :func:`action_features` under the engine's rules).

    Raises:
        ConfigError: bad game indices (from the engine).
    """
    obs = engine.observe(games)
    masks = engine.legal_mask(games)
    g, s = obs.shape[:2]
    feats = action_features(obs.reshape(g * s, OBS_SIZE), masks.reshape(g * s, NUM_ACTIONS), engine.config)
    return np.concatenate([obs, feats.reshape(g, s, SIZE)], axis=2)
