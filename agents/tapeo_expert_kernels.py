"""The Tapeo expert's scorer (:meth:`hod.agents.tapeo_bots.ExpertBot.scores`) over a batch of
observations, compiled (numba ``@njit(cache=True)``).

:func:`expert_values` gives, for float32 (G, 157) observations (Tapeo layout v1,
:data:`tapeo_env.rules.observation.LAYOUT`, decoded as :func:`tapeo_env.rules.observation.decode`
does with the published deck) and int8 (G, 10) action masks, the float64 (G, 10) values that
the expert's first, Python scorer gives row by row (the test oracle
``tests/oracles/tapeo_expert_scalar.py``: ``ScalarExpert(params, rulings).values(decode(observation),
legal)``): the rules of the class docstring of :class:`~hod.agents.tapeo_bots.ExpertBot` (tapeo.txt 'Tips and strategy'),
the same steps in the same order. The scores it asks are the rules kernels'
(:func:`tapeo_env.rules.kernels.round_points` with the numbers of one round rule alone, as
:mod:`tapeo_env.rules.scoring` asks them; :func:`tapeo_env.rules.kernels.churro_points`), so
the rules keep one source. The rulings and the weights are plain arrays
(:func:`rulings_arrays`, :func:`params_array`), so one compiled kernel serves every
:class:`~tapeo_env.rules.scoring.Rulings` and :class:`~hod.agents.tapeo_bots.ExpertParams`.

**Exact, bit for bit** (``tests/agents/test_tapeo_expert_batch.py`` asserts equality, not a
tolerance, on every entry of thousands of rows). The floating-point operations are those of
the Python scorer, in its order (no ``fastmath``), and where numpy computes a number its own way
this module does the same:

* ``total.sum()`` and ``np.mean``: numpy's pairwise summation (:func:`_pairwise`);
* ``density @ HAM_SLICES``: numpy's 1-D float64 dot, which OpenBLAS computes as fused
  multiply-adds in index order (:func:`_fma`, LLVM's ``llvm.fma.f64``; checked against numpy
  here). It reaches the values only through a rounding to whole tapas (the projected bars), so
  a BLAS that adds otherwise could change a value only for a projection within one unit in the
  last place of a half;
* ``(1.0 - density) ** size``: numpy's float64 ``power`` (on AVX-512 machines Intel's SVML, not
  libm's ``pow``: they differ in the last bit of about 5% of the results) is not recomputed here:
  :func:`expert_values` takes those powers from numpy itself, between its two kernels
  (:func:`density_batch`, then numpy, then :func:`values_batch`); numpy's result is the same
  element by element for one row or a whole batch (checked).

Rows with no legal action get NaN values. Compiled on first use (about 20 s of CPU), then
loaded from numba's disk cache (:func:`hod.core.jit.cache_kernels`; the cache is checked against
this folder, ``core`` and Tapeo's ``rules`` folder, whose kernels it calls).
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np

from hod.core.errors import ConfigError
from hod.core.jit import cache_kernels, import_numba, prepare_target
from tapeo_env.rules import kernels as _k
from tapeo_env.rules import scoring as _scoring
from tapeo_env.rules.cards import (BREAD, CHURRO, CROQUETA, DECK_COMPOSITION, FREELOADER, HAM1, HAM2, HAM3, HAM_SLICES,
                                   MAX_HAND_SIZE, MAX_PLAYERS, MIN_PLAYERS, NUM_KINDS, PEPPER, PRAWNS, TORTILLA)
from tapeo_env.rules.observation import LAYOUT, OBS_HIGH

from .base import check_batch_arrays

import_numba()          # numba without the scipy and yaml imports of its start (hod.core.jit)
from llvmlite import ir as _ir  # noqa: E402
from numba import njit as _njit, types as _types  # noqa: E402
from numba.extending import intrinsic as _intrinsic  # noqa: E402

__all__ = ["expert_values", "density_batch", "values_batch", "rulings_arrays", "params_array", "check_batch",
           "OBS_WIDTH", "PARAMS_SIZE"]

#: Whether the kernels are cached on disk (:func:`hod.core.jit.cache_kernels`).
CACHED = cache_kernels(__file__, depends=[os.path.dirname(_k.__file__)])   # the rules kernels it calls
prepare_target()


def njit(fn):
    """numba's ``njit`` with this module's cache setting."""
    return _njit(cache=CACHED)(fn)


_K = NUM_KINDS
_EPS = 1e-9                                 # hod.agents.tapeo_bots._EPS: ties within 1e-9
_HAM = tuple(int(x) for x in HAM_SLICES)
_HAMF = tuple(float(x) for x in HAM_SLICES)
_DECK = np.asarray(DECK_COMPOSITION, np.float64)   # decode's divisors (the published deck, T1)
_SL = LAYOUT.offsets
_NP0, _RD0, _HS0 = _SL["num_players"].start, _SL["round"].start, _SL["hand_size"].start
_NPN = _SL["num_players"].stop - _NP0
_RDN = _SL["round"].stop - _RD0
_H0, _B0, _C0 = _SL["hand"].start, _SL["bars"].start, _SL["churros"].start
_KH0, _KF0, _U0 = _SL["known_hands"].start, _SL["known_flags"].start, _SL["unseen"].start
_SIZE_MUL = float(MAX_HAND_SIZE)
#: Width of an observation row (the Tapeo layout v1).
OBS_WIDTH = LAYOUT.size
#: Rows of the rule-alone numbers (:data:`tapeo_env.rules.scoring.ROUND_RULES` order).
_RT, _RC, _RH, _RP, _RPE = (_scoring.ROUND_RULES.index(r) for r in ("tortilla", "croqueta", "ham", "prawns", "pepper"))

#: Offsets into :func:`params_array` (float64): the :class:`~hod.agents.tapeo_bots.ExpertParams`
#: weights; ``churro_base`` and ``churro_now`` by round (2 each), ``deny`` by player count (5).
(P_TAKE, P_PAIR, P_COMMIT, P_BREAD, P_HAM_NOW, P_CHURRO_BASE) = range(6)
P_CHURRO_NOW = P_CHURRO_BASE + 2
P_DENY = P_CHURRO_NOW + 2
P_FREE_UNKNOWN = P_DENY + (MAX_PLAYERS - MIN_PLAYERS + 1)
#: Length of :func:`params_array`.
PARAMS_SIZE = P_FREE_UNKNOWN + 1


# ---- the numbers as arrays --------------------------------------------------------------------------
def rulings_arrays(rulings: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The numbers of a :class:`~tapeo_env.rules.scoring.Rulings` as the kernels read them:
    ``(rul int64 (12,), ruls int64 (5, 12), croqs int64 (5, L))``: every number
    (:func:`tapeo_env.rules.kernels.rulings_array`), then those of each round rule alone (the other
    rules' numbers 0, :data:`tapeo_env.rules.scoring.RULE_NUMBERS`), the arrays
    :mod:`tapeo_env.rules.scoring` scores ``tortilla_points``, ``ham_points``, ... with."""
    rul, _croq, ruls, croqs = _scoring._numbers(rulings)[:4]
    return (np.ascontiguousarray(rul, np.int64), np.ascontiguousarray(ruls, np.int64),
            np.ascontiguousarray(croqs, np.int64))


def params_array(params: Any) -> np.ndarray:
    """The weights of an :class:`~hod.agents.tapeo_bots.ExpertParams` as float64
    (:data:`PARAMS_SIZE`,) at the ``P_*`` offsets.

    Raises:
        ConfigError: ``churro_base`` or ``churro_now`` with fewer than 2 entries, or ``deny``
            with fewer than 5 (one per player count 2..6); the message names the legal lengths.
    """
    need = {"churro_base": 2, "churro_now": 2, "deny": MAX_PLAYERS - MIN_PLAYERS + 1}
    for name, size in need.items():
        if len(getattr(params, name)) < size:
            raise ConfigError(f"ExpertParams.{name}={getattr(params, name)!r} has {len(getattr(params, name))} "
                              f"entries; legal: at least {size} (the batched expert reads one per "
                              f"{'round 1, 2' if size == 2 else 'player count 2..6'})")
    out = np.empty(PARAMS_SIZE, np.float64)
    out[P_TAKE], out[P_PAIR], out[P_COMMIT] = params.take_rate, params.pair_cost, params.commit
    out[P_BREAD], out[P_HAM_NOW], out[P_FREE_UNKNOWN] = params.bread_weight, params.ham_now, params.freeloader_unknown
    out[P_CHURRO_BASE:P_CHURRO_BASE + 2] = params.churro_base[:2]
    out[P_CHURRO_NOW:P_CHURRO_NOW + 2] = params.churro_now[:2]
    out[P_DENY:P_DENY + need["deny"]] = params.deny[:need["deny"]]
    return out


def check_batch(observations: Any, action_masks: Any) -> tuple[np.ndarray, np.ndarray]:
    """The batch as the kernels take it: ``(float32 (G, 157) C-contiguous, int8 (G, 10)
    C-contiguous)`` (a bool mask is read as 0/1).

    Raises:
        ConfigError: not numpy arrays, another ndim, width or dtype (the message names the legal
            shapes and dtypes), a different number of rows, a row with no legal action, an entry
            outside the layout's bounds ``[0, OBS_HIGH]`` (NaN and infinities included), or a row
            with no player count set (not a Tapeo observation); the message names the first bad
            row.
    """
    obs, masks = check_batch_arrays(observations, action_masks, OBS_WIDTH, _K, "kinds")
    # every entry in the layout's bounds [0, OBS_HIGH] (a NaN, an infinity or a huge count would
    # reach the kernels' integer conversions and allocations: a crash, not an answer)
    outside = ~((obs >= 0.0) & (obs <= OBS_HIGH)).all(axis=1)
    if outside.any():
        r = int(np.argmax(outside))
        c = int(np.argmax(~((obs[r] >= 0.0) & (obs[r] <= OBS_HIGH))))
        raise ConfigError(f"row {r} of observations has entry {c} = {float(obs[r, c])!r} ({int(outside.sum())} such "
                          f"rows); legal: finite values in [0, {float(OBS_HIGH[c]):g}] for that entry (Tapeo layout "
                          f"v{LAYOUT.version}, docs/tapeo_env.md)")
    unset = ~obs[:, _NP0:_NP0 + _NPN].any(axis=1)
    if unset.any():
        r = int(np.argmax(unset))
        raise ConfigError(f"row {r} of observations has no player count set (not a Tapeo observation); legal: "
                          f"Tapeo layout v{LAYOUT.version} rows, a one-hot player count in entries "
                          f"{_NP0}..{_NP0 + _NPN - 1}")
    return obs, masks


def expert_values(observations: np.ndarray, action_masks: np.ndarray, rul: np.ndarray, ruls: np.ndarray,
                  croqs: np.ndarray, params: np.ndarray) -> np.ndarray:
    """``ExpertBot.scores`` of every row, float64 (G, 10) (module docstring: equal bit for bit to the Python oracle).

    Args:
        observations: float32 (G, 157) Tapeo observations; action_masks: int8 (G, 10) (both as
            :func:`check_batch` returns them: checked, C-contiguous).
        rul, ruls, croqs: :func:`rulings_arrays` of the rulings played.
        params: :func:`params_array` of the expert's weights.

    Returns:
        float64 (G, 10): the expert's value of each kind; only the legal entries are meaningful
        (as for ``ExpertBot.scores``); rows with no legal action are NaN.
    """
    g = observations.shape[0]
    density = np.empty((g, _K), np.float64)
    ch = np.empty(g, np.int64)
    density_batch(observations, density, ch)
    top = int(ch.max()) - 1 if g else 0
    # (1.0 - density) ** size for size = 2 .. top: numpy's own power (module docstring), as _prospects
    powers = np.empty((max(top, 1), g, _K), np.float64)
    if top >= 2:
        one = 1.0 - density
        for size in range(2, top + 1):
            powers[size - 1] = one ** size
    out = np.empty((g, _K), np.float64)
    values_batch(observations, action_masks, density, powers, rul, ruls, croqs, params, out)
    return out


# ---- numpy's float arithmetic -----------------------------------------------------------------------
@_intrinsic
def _fma(typingctx, a, b, c):
    """``a * b + c`` rounded once (LLVM's ``llvm.fma.f64``: the instruction where the CPU has it)."""
    sig = _types.float64(_types.float64, _types.float64, _types.float64)

    def codegen(context, builder, signature, args):
        d = _ir.DoubleType()
        fn = builder.module.declare_intrinsic("llvm.fma", [d], _ir.FunctionType(d, (d, d, d)))
        return builder.call(fn, args)

    return sig, codegen


@njit
def _pairwise(a, n):
    """``a[:n].sum()`` as numpy adds float64 (its pairwise summation, n <= 128: one block)."""
    if n < 8:
        res = -0.0
        for i in range(n):
            res += a[i]
        return res
    r0, r1, r2, r3, r4, r5, r6, r7 = a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]
    i = 8
    while i < n - (n % 8):
        r0 += a[i]
        r1 += a[i + 1]
        r2 += a[i + 2]
        r3 += a[i + 3]
        r4 += a[i + 4]
        r5 += a[i + 5]
        r6 += a[i + 6]
        r7 += a[i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[i]
        i += 1
    return res


# ---- the observation --------------------------------------------------------------------------------
@njit
def _one_hot_index(o, start, size):
    """The index of the first largest of ``o[start:start + size]`` (``np.argmax`` of a one-hot piece)."""
    j = 0
    best = o[start]
    for i in range(1, size):
        if o[start + i] > best:
            best = o[start + i]
            j = i
    return j


@njit
def _decode(o, hand, bars, churros, kh, known, unseen):
    """:func:`tapeo_env.rules.observation.decode` of one row into the given int64 arrays (``known``
    bool); returns ``(n, round, cards_in_hand)``."""
    n = _one_hot_index(o, _NP0, _NPN) + MIN_PLAYERS
    r = _one_hot_index(o, _RD0, _RDN)
    ch = np.int64(np.rint(np.float64(o[_HS0]) * _SIZE_MUL))
    for k in range(_K):
        hand[k] = np.int64(np.rint(np.float64(o[_H0 + k]) * _DECK[k]))
        unseen[k] = np.int64(np.rint(np.float64(o[_U0 + k]) * _DECK[k]))
    for i in range(n):
        for k in range(_K):
            bars[i, k] = np.int64(np.rint(np.float64(o[_B0 + i * _K + k]) * _DECK[k]))
        churros[i] = np.int64(np.rint(np.float64(o[_C0 + i]) * 30.0))
    for i in range(n - 1):
        for k in range(_K):
            kh[i, k] = np.int64(np.rint(np.float64(o[_KH0 + i * _K + k]) * _DECK[k]))
        known[i] = o[_KF0 + i] > 0.5
    return n, r, ch


@njit
def _density(hand, kh, known, unseen, n, ch, total):
    """``ScalarExpert._density`` (the oracle) into ``total`` float64 (K,)."""
    nk = 0
    for i in range(n - 1):
        nk += known[i]
    unknown = n - 1 - nk
    for k in range(_K):
        total[k] = np.float64(hand[k])
    if nk > 0:
        for k in range(_K):
            s = 0
            for i in range(n - 1):
                if known[i]:
                    s += kh[i, k]
            total[k] = total[k] + np.float64(s)
    us = 0
    for k in range(_K):
        us += unseen[k]
    if unknown != 0 and us != 0:
        f = (unknown * ch) / us
        for k in range(_K):
            total[k] = total[k] + np.float64(unseen[k]) * f
    s = _pairwise(total, _K)
    if s != 0.0:
        for k in range(_K):
            total[k] = total[k] / s


@njit
def density_batch(observations, density, ch):
    """Phase 1 of :func:`expert_values`: each row's ``ScalarExpert._density`` (the oracle) into
    ``density`` float64 (G, K) and its cards in hand into ``ch`` int64 (G,)."""
    hand = np.zeros(_K, np.int64)
    unseen = np.zeros(_K, np.int64)
    bars = np.zeros((MAX_PLAYERS, _K), np.int64)
    churros = np.zeros(MAX_PLAYERS, np.int64)
    kh = np.zeros((MAX_PLAYERS - 1, _K), np.int64)
    known = np.zeros(MAX_PLAYERS - 1, np.bool_)
    for g in range(observations.shape[0]):
        n, _r, c = _decode(observations[g], hand, bars, churros, kh, known, unseen)
        ch[g] = c
        _density(hand, kh, known, unseen, n, c, density[g])


# ---- the scoring rules (the rules kernels, one rule alone) ------------------------------------------
@njit
def _seat_points(rule, ka, ca, kb, cb, ruls, croqs, b1, o1):
    """Points of round rule ``rule`` alone for one seat whose bar holds ``ca`` of kind ``ka`` (and
    ``cb`` of ``kb`` when ``kb >= 0``): ``tortilla_points``, ``croqueta_points``,
    ``prawn_points``."""
    for k in range(_K):
        b1[0, k] = 0
    b1[0, ka] = ca
    if kb >= 0:
        b1[0, kb] = cb
    _k.round_points(b1, ruls[rule], croqs[rule], o1)
    return o1[0]


@njit
def _table_points(counts, n, rule, ruls, croqs, rul, bn, on):
    """Points of every seat into ``on[:n]`` for the counts ``counts[:n]``: ``rule`` >= 0 a round
    rule alone on the counts as one-slice hams or peppers (``ham_points``, ``pepper_points``),
    -1 the end churros (``churro_points``)."""
    if rule < 0:
        _k.churro_points(counts[:n], rul, on[:n])
        return
    kind = HAM1 if rule == _RH else PEPPER
    for i in range(n):
        for k in range(_K):
            bn[i, k] = 0
        bn[i, kind] = counts[i]
    _k.round_points(bn[:n], ruls[rule], croqs[rule], on[:n])


@njit
def _majority_delta(counts, n, seat, add, rule, ruls, croqs, rul, bn, on):
    """``tapeo_bots._majority_delta``: the change of ``seat``'s points under ``rule``
    (:func:`_table_points`) when ``add`` joins its count (``counts`` restored after)."""
    _table_points(counts, n, rule, ruls, croqs, rul, bn, on)
    base = on[seat]
    counts[seat] += add
    _table_points(counts, n, rule, ruls, croqs, rul, bn, on)
    counts[seat] -= add
    return np.float64(on[seat] - base)


@njit
def _gains(bars, churros, n, seat, want, ruls, croqs, rul, out, sc):
    """:func:`hod.agents.tapeo_bots.immediate_gains` of ``seat`` into ``out`` float64 (K,): the
    majorities (ham, pepper, churro) only where ``want`` asks them, the other entries 0. ``sc``:
    the scratch arrays of :func:`_scratch`."""
    b1, o1, bn, on, cnt = sc
    for k in range(_K):
        out[k] = 0.0
    t, c, p, b = bars[seat, TORTILLA], bars[seat, CROQUETA], bars[seat, PRAWNS], bars[seat, BREAD]
    out[TORTILLA] = np.float64(_seat_points(_RT, TORTILLA, t + 1, -1, 0, ruls, croqs, b1, o1)
                               - _seat_points(_RT, TORTILLA, t, -1, 0, ruls, croqs, b1, o1))
    out[CROQUETA] = np.float64(_seat_points(_RC, CROQUETA, c + 1, -1, 0, ruls, croqs, b1, o1)
                               - _seat_points(_RC, CROQUETA, c, -1, 0, ruls, croqs, b1, o1))
    base = _seat_points(_RP, PRAWNS, p, BREAD, b, ruls, croqs, b1, o1)
    out[PRAWNS] = np.float64(_seat_points(_RP, PRAWNS, p + 1, BREAD, b, ruls, croqs, b1, o1) - base)
    out[BREAD] = np.float64(_seat_points(_RP, PRAWNS, p, BREAD, b + 1, ruls, croqs, b1, o1) - base)
    if want[HAM1] or want[HAM2] or want[HAM3]:
        for i in range(n):
            s = 0
            for k in range(_K):
                s += _HAM[k] * bars[i, k]
            cnt[i] = s
        for kk in (HAM1, HAM2, HAM3):
            out[kk] = _majority_delta(cnt, n, seat, _HAM[kk], _RH, ruls, croqs, rul, bn, on)
    if want[PEPPER]:
        for i in range(n):
            cnt[i] = bars[i, PEPPER]
        out[PEPPER] = _majority_delta(cnt, n, seat, 1, _RPE, ruls, croqs, rul, bn, on)
    if want[CHURRO]:
        for i in range(n):
            cnt[i] = churros[i]
        out[CHURRO] = _majority_delta(cnt, n, seat, 1, -1, ruls, croqs, rul, bn, on)


@njit
def _scratch():
    """The scratch arrays of :func:`_gains`: ``(b1 int64 (1, K), o1 (1,), bn (6, K), on (6,), cnt (6,))``."""
    return (np.zeros((1, _K), np.int64), np.zeros(1, np.int64), np.zeros((MAX_PLAYERS, _K), np.int64),
            np.zeros(MAX_PLAYERS, np.int64), np.zeros(MAX_PLAYERS, np.int64))


@njit
def _croq_interp(x, ruls, croqs, b1, o1):
    """``_croq_interp`` of the oracle (tests/oracles/tapeo_expert_scalar.py): croqueta points
    linearly interpolated between whole counts."""
    lo = np.int64(np.floor(x))
    a = _seat_points(_RC, CROQUETA, lo, -1, 0, ruls, croqs, b1, o1)
    b = _seat_points(_RC, CROQUETA, lo + 1, -1, 0, ruls, croqs, b1, o1)
    return a + (x - lo) * (b - a)


# ---- the expert's rules -----------------------------------------------------------------------------
@njit
def _last_pick_gains(hand, bars, churros, kh, known, n, gains, ruls, croqs, rul, sc):
    """``ScalarExpert._last_pick_gains`` (the oracle) into ``gains`` (left as it is when the right
    neighbour's hand is not known): the tapa revealed after the last decision is the one the right neighbour,
    modelled as greedy, leaves of its two-tapa hand; the gains against the bar plus that tapa,
    averaged over its tied choices."""
    if not known[n - 2]:
        return
    want = np.zeros(_K, np.bool_)
    present = np.zeros(_K, np.bool_)
    for k in range(_K):
        want[k] = kh[n - 2, k] != 0
        present[k] = hand[k] != 0
    rv = np.zeros(_K, np.float64)
    _gains(bars, churros, n, n - 1, want, ruls, croqs, rul, rv, sc)
    top = -np.inf
    for k in range(_K):
        if want[k] and rv[k] > top:
            top = rv[k]
    acc = np.zeros(_K, np.float64)
    g2 = np.zeros(_K, np.float64)
    bars2 = np.empty((n, _K), np.int64)
    churros2 = np.empty(n, np.int64)
    taken = 0
    for k in range(_K):
        if not (want[k] and rv[k] >= top - _EPS):
            continue
        taken += 1
        auto = 0                              # np.argmax of the hand left: its first largest count
        most = kh[n - 2, 0] - (1 if k == 0 else 0)
        for x in range(1, _K):
            c = kh[n - 2, x] - (1 if k == x else 0)
            if c > most:
                most = c
                auto = x
        for i in range(n):
            for x in range(_K):
                bars2[i, x] = bars[i, x]
            churros2[i] = churros[i]
        bars2[0, auto] += 1
        churros2[0] += 1 if auto == CHURRO else 0
        _gains(bars2, churros2, n, 0, present, ruls, croqs, rul, g2, sc)
        for x in range(_K):
            acc[x] = acc[x] + g2[x]
    if taken == 0:                            # no tapa in that hand: the Python scorer fails here
        return
    for x in range(_K):
        gains[x] = acc[x] / taken


@njit
def _freeloader_value(kh, known, val, left, deny, unknown_value):
    """``ScalarExpert._freeloader_value`` (the oracle): the value of the tapa the left neighbour is
    predicted to reveal now (rule 7)."""
    if not known[0]:
        return unknown_value
    top = -np.inf
    nk = 0
    for k in range(_K):
        if kh[0, k] != 0:
            nk += 1
            if left[k] > top:
                top = left[k]
    if nk == 0:                               # no tapa in that hand: the Python scorer fails here
        return 0.0
    terms = np.zeros(_K, np.float64)
    ntop = 0
    m = 0
    for k in range(_K):
        if kh[0, k] != 0 and left[k] >= top - _EPS:
            ntop += 1
            if k != FREELOADER:
                terms[m] = val[k] + deny * left[k]
                m += 1
    if m == 0 or m < ntop / 2:
        return 0.0
    return _pairwise(terms, m) / m


@njit
def values_batch(observations, masks, density, powers, rul, ruls, croqs, prm, out):
    """Phase 2 of :func:`expert_values`: ``ExpertBot.scores`` of every row into ``out`` float64
    (G, K), given each row's density (:func:`density_batch`) and ``powers[s - 1, g]`` =
    ``(1.0 - density[g]) ** s`` (numpy's) for the sizes s >= 2 the row asks."""
    hand = np.zeros(_K, np.int64)
    unseen = np.zeros(_K, np.int64)
    bars = np.zeros((MAX_PLAYERS, _K), np.int64)
    churros = np.zeros(MAX_PLAYERS, np.int64)
    kh = np.zeros((MAX_PLAYERS - 1, _K), np.int64)
    known = np.zeros(MAX_PLAYERS - 1, np.bool_)
    want = np.zeros(_K, np.bool_)
    gains = np.zeros(_K, np.float64)
    left = np.zeros(_K, np.float64)
    miss = np.zeros(_K, np.float64)
    expected = np.zeros(_K, np.float64)
    more1 = np.zeros(_K, np.float64)
    sc = _scratch()
    b1, o1, bn, on, _ = sc
    cnt = np.zeros(MAX_PLAYERS, np.int64)
    rate = prm[P_TAKE]
    for g in range(observations.shape[0]):
        val = out[g]
        mask = masks[g]
        any_legal = False
        for k in range(_K):
            any_legal = any_legal or mask[k] != 0
        if not any_legal:
            for k in range(_K):
                val[k] = np.nan
            continue
        n, rnd, ch = _decode(observations[g], hand, bars, churros, kh, known, unseen)
        last = ch <= 2
        steal = hand[FREELOADER] != 0 and known[0]        # rule 7 values the left hand's kinds too
        for k in range(_K):
            want[k] = (hand[k] + kh[0, k]) != 0 if steal else hand[k] != 0
        _gains(bars, churros, n, 0, want, ruls, croqs, rul, gains, sc)
        if last:
            _last_pick_gains(hand, bars, churros, kh, known, n, gains, ruls, croqs, rul, sc)
        for k in range(_K):
            val[k] = gains[k]
        d = density[g]
        # _prospects: later picks from hands of ch - i tapas at take_rate, then the automatic last one
        for k in range(_K):
            miss[k] = 1.0
            expected[k] = 0.0
        for i in range(1, ch):
            size = ch - i
            for k in range(_K):
                if size > 1:
                    q = (1.0 - powers[size - 1, g, k]) * rate
                else:
                    q = d[k]
                miss[k] = miss[k] * (1.0 - q)
                expected[k] = expected[k] + q
        for k in range(_K):
            more1[k] = 1.0 - miss[k]
        if not last:
            # Rule 2: start pairs; bread waiting for prawns.
            if bars[0, TORTILLA] % 2 == 0:
                val[TORTILLA] = (rul[_k.R_TORTILLA] - prm[P_PAIR]) * more1[TORTILLA]
            if bars[0, BREAD] >= bars[0, PRAWNS]:
                val[BREAD] = rul[_k.R_BREAD] * prm[P_BREAD] * more1[PRAWNS]
            # Rule 3: commit to croquetas.
            c = bars[0, CROQUETA]
            x = prm[P_COMMIT] * expected[CROQUETA]
            val[CROQUETA] = (_croq_interp(c + 1 + x, ruls, croqs, b1, o1)
                             - _croq_interp(c + x, ruls, croqs, b1, o1))
        # Rule 5: ham majority, now and projected.
        if hand[HAM1] != 0 or hand[HAM2] != 0 or hand[HAM3] != 0:
            hd = 0.0
            for k in range(_K):                                # numpy's dot: fused, in index order
                hd = _fma(d[k], _HAMF[k], hd)
            future = ch - 1
            for i in range(n):
                s = 0
                for k in range(_K):
                    s += _HAM[k] * bars[i, k]
                cnt[i] = np.int64(np.rint(s + future * hd * rate))
            for kk in (HAM1, HAM2, HAM3):
                proj = _majority_delta(cnt, n, 0, _HAM[kk], _RH, ruls, croqs, rul, bn, on)
                val[kk] = prm[P_HAM_NOW] * gains[kk] + (1 - prm[P_HAM_NOW]) * proj
        # Rule 5: churros.
        if hand[CHURRO] != 0:
            now = gains[CHURRO]
            if rnd >= 2:
                future = ch - 1
                for i in range(n):
                    cnt[i] = np.int64(np.rint(churros[i] + future * d[CHURRO] * rate))
                val[CHURRO] = 0.5 * now + 0.5 * _majority_delta(cnt, n, 0, 1, -1, ruls, croqs, rul, bn, on)
            else:
                cn = prm[P_CHURRO_NOW + rnd]
                val[CHURRO] = cn * now + (1 - cn) * prm[P_CHURRO_BASE + rnd]
        # Rules 6 and 7: the left neighbour, modelled as greedy on the kinds it may see now.
        deny = prm[P_DENY + n - 2]
        for k in range(_K):
            want[k] = (hand[k] + kh[0, k]) != 0 if known[0] else hand[k] != 0
        _gains(bars, churros, n, 1, want, ruls, croqs, rul, left, sc)
        if hand[FREELOADER] != 0:
            val[FREELOADER] = _freeloader_value(kh, known, val, left, deny, prm[P_FREE_UNKNOWN])
        best_all = -np.inf
        npresent = 0
        for k in range(_K):
            if hand[k] != 0:
                npresent += 1
                if left[k] > best_all:
                    best_all = left[k]
        if npresent == 0:                     # an empty hand: the Python scorer fails here
            continue
        for a in range(_K):
            if mask[a] != 0 and hand[a] == 1:
                rest = -np.inf
                for k in range(_K):
                    if hand[k] != 0 and k != a and left[k] > rest:
                        rest = left[k]
                if npresent > 1:
                    val[a] += deny * (best_all - rest)
