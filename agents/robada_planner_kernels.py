"""The Ronda Robada expert's planner (:class:`hod.agents.robada_bots.ExpertBot`) as compiled code
(numba ``@njit(cache=True)``), and whole search playouts with the expert in every seat.

What the planner does is the class docstring of :class:`~hod.agents.robada_bots.ExpertBot`
(ronda_robada.txt 'Tips and strategy'): every way to finish the turn (:func:`enumerate_plans`),
each valued in margin points (:func:`evaluate_plan`: the gain, minus the expected damage of the
next seats' best replies, plus the bot's own best run after the next seat's reply). The run rules
it asks are the compiled rules of :mod:`robada_env.rules.kernels` (the one greedy walk
:func:`robada_env.rules.kernels.walk`, the rule tables of
:func:`~robada_env.rules.kernels.rules_array`: R2 ``closing_ace``, R3 ``may_take_own_pile``,
R7 ``leftovers_to_last_runner``) and of :mod:`robada_env.rules.runs` (``can_start``,
``leftovers_receiver``, compiled here from that source). The floating-point operations are those
of the Python planner this replaced, in the same order (no ``fastmath``), so the values and the
choices are the same bit for bit (``tests/agents/test_robada_planner.py`` against
``tests/oracles/robada_planner.py``).

Inputs (seat-relative like the observation, 0 = the seat to act, n seats):

* ``view`` int64 (:data:`VIEW_SIZE`,): what the seat sees, at the ``V_*`` offsets (built from an
  :class:`~robada_env.rules.observation.ObsView` by :func:`hod.agents.robada_bots.view_array`,
  or from a game's record by :func:`view_from_record`, the same numbers);
* ``legal`` int64 (L,): the legal actions, ascending;
* ``rules`` int8 (22,): :func:`robada_env.rules.kernels.rules_array`;
* ``weights`` float64 (3,): the damage weight of the 1st, 2nd, 3rd next seat
  (``ExpertParams.opp_weights``, the last repeated), then ``future_weight`` and ``damage_weight``
  as floats.

Plans are rows of :class:`Plans` arrays (at most :data:`MAX_PLANS`).

The playouts (:func:`playouts`) run one determinized game record (the packed one-game record of
:class:`robada_env.rules.engine.State`) to the end once per candidate move, the expert in every
seat, its tie-breaks drawn from a PCG64 stream per seat that reproduces numpy's
``Generator.integers`` bit for bit (:func:`pcg_integers`), so a playout makes the decisions the
Python expert made with ``numpy.random.default_rng(seed)``.
"""
from __future__ import annotations

import os

import numpy as np
from numba import njit as _njit

from hod.core.jit import cache_kernels
from robada_env.rules import kernels as _k
from robada_env.rules import runs
from robada_env.rules.actions import CONFIRM, DROP, NUM_ACTIONS, START, TAKE, TAP
from robada_env.rules.cards import COPIES_PER_RANK, NUM_RANKS
from robada_env.rules.engine import CARDS_PER_DEAL, MAX_PLAYERS
from robada_env.rules.kernels import R_AFTER_START, R_AFTER_STEP, R_LEFTOVERS, R_TAKE_OWN, _PTS

#: Whether the kernels are cached on disk (:func:`hod.core.jit.cache_kernels`).
CACHED = cache_kernels(__file__, depends=[os.path.dirname(_k.__file__)])   # the rules kernels it calls


def njit(fn):
    """numba's ``njit`` with this module's cache setting (reference counting on: the planner
    allocates its plan arrays)."""
    return _njit(cache=CACHED)(fn)


def njit_inline(fn):
    """:func:`njit`, inlined where another kernel calls it."""
    return _njit(cache=CACHED, inline="always")(fn)


_can_start = njit_inline(runs.can_start)
_leftovers_receiver = njit_inline(runs.leftovers_receiver)
_walk = _k.walk
_must_tap = _k._must_tap
_pile_takeable = _k._pile_takeable

_R = NUM_RANKS
_S = MAX_PLAYERS
_BITS = runs.STEP_BITS
_MASK = runs.STEP_MASK
#: A plan's actions: the start, at most 10 steps, the confirm.
MAX_STEPS = 12
#: Plans of one decision, at most. A run has at most 11 stopping points (the start and 10 steps) and
#: branches only where several piles show the needed rank; a taken pile is empty and the next
#: steps need other ranks, so n <= 4 piles give at most 4 branches in all (4, or 2 x 2): <= 44 plans
#: a start, 3 starts and 3 drops <= 135. :func:`enumerate_plans` raises beyond.
MAX_PLANS = 256
_EPS = 1e-9

# offsets into ``view`` (int64)
V_N = 0
V_HAND = 1                    # (10,) my hand per rank
V_HS = V_HAND + _R            # (4,) hand sizes, seat-relative
V_LOOSE = V_HS + _S           # (10,) loose cards per rank
V_TOP = V_LOOSE + _R          # (4,) visible rank of each pile, -1 empty
V_PTS = V_TOP + _S            # (4,) pile points
V_RUN = V_PTS + _S            # 1 while a run is in progress
V_RSTART = V_RUN + 1          # the run's starting rank
V_NEED = V_RSTART + 1         # the rank the run needs (-1: closed or no run)
V_RPTS = V_NEED + 1           # points the run has gathered
V_DECK = V_RPTS + 1           # cards left in the deck
V_UNSEEN = V_DECK + 1         # (10,) unseen cards per rank
V_LAST = V_UNSEEN + _R        # seat-relative last runner, -1 nobody
#: Length of ``view``.
VIEW_SIZE = V_LAST + 1


# ---- the run pieces the evaluation prices --------------------------------------------------------
@njit
def _opp_run(loose, top, pts, n, j, r, inv, final, rules, lo, tp):
    """The run seat ``j`` makes starting with rank ``r``, every step taken (the walk), the pile of
    most points when several show the needed rank (its own counts 0). ``final``: the game's last
    action (R7 leftovers to j when the rules say so). ``lo`` (10,), ``tp`` (n,) scratch: the loose
    cards and tops after the run. Returns ``(gathered, damage, path, steps)``."""
    for x in range(_R):
        lo[x] = loose[x]
    for x in range(n):
        tp[x] = top[x]
    lo[r] -= 1
    need = rules[R_AFTER_START + r]
    path, steps, end = _walk(need, lo, tp, pts, j, 0, rules[R_TAKE_OWN] != 0, rules[R_AFTER_STEP:R_AFTER_STEP + _R])
    table = 2 * _PTS[r]
    mine = 0
    other = 0
    for i in range(steps):
        code = (path >> (_BITS * i)) & _MASK
        if code == 0:
            table += _PTS[need]
        else:
            seat = code - 1
            if seat == j:
                pass                                     # its own pile: no gain, the run goes on
            elif seat == 0:
                mine += pts[0]
            else:
                other += pts[seat]
        need = rules[R_AFTER_STEP + need]
    if final and _leftovers_receiver(j, rules[R_LEFTOVERS] != 0) == j:
        left = 0
        for x in range(_R):
            left += _PTS[x] * lo[x]
        table += left
    gathered = table + mine + other
    damage = table * inv + mine * (1.0 + inv)
    return gathered, damage, path, steps


@njit
def _my_run_gain(loose, top, pts, n, r, inv, rules, lo, tp):
    """Margin I gain with a run starting with rank ``r``, every step taken (my own pile counts 0,
    another's ``1 + 1/(n-1)`` times its points). ``lo``, ``tp``: scratch."""
    for x in range(_R):
        lo[x] = loose[x]
    for x in range(n):
        tp[x] = top[x]
    lo[r] -= 1
    need = rules[R_AFTER_START + r]
    path, steps, end = _walk(need, lo, tp, pts, 0, 0, rules[R_TAKE_OWN] != 0, rules[R_AFTER_STEP:R_AFTER_STEP + _R])
    gain = 2.0 * _PTS[r]
    for i in range(steps):
        code = (path >> (_BITS * i)) & _MASK
        if code == 0:
            gain += _PTS[need]
        else:
            seat = code - 1
            v = 0 if seat == 0 else pts[seat]
            gain += v * (1.0 + inv)
        need = rules[R_AFTER_STEP + need]
    return gain


@njit_inline
def _p_none(pool, k, h):
    """Chance that ``h`` cards drawn from ``pool`` hold none of ``k`` marked ones (hypergeometric)."""
    p = 1.0
    for i in range(h):
        if pool - k - i <= 0:
            return 0.0
        p *= (pool - k - i) / (pool - i)
    return p


@njit
def _my_best(hand, loose, top, pts, n, inv, rules, lo, tp):
    """My best run gain with a card of ``hand`` on this table (0 if none starts)."""
    best = 0.0
    for r in range(_R):
        if hand[r] and _can_start(r, hand, loose):
            g = _my_run_gain(loose, top, pts, n, r, inv, rules, lo, tp)
            if g > best:
                best = g
    return best


@njit
def _reply(loose, top, pts, hand, j, h, unseen, pool, n, inv, final, last_runner, future, rules, scratch):
    """Seat ``j``'s expected best reply on the table a plan leaves (``loose``, ``top``, ``pts``,
    ``hand`` the cards the plan keeps), ``j`` holding ``h`` of the ``pool`` unseen cards.
    Returns ``(expected damage to my margin, expected best next run of mine or 0.0)``.
    ``scratch`` int64 (8, 10)."""
    lo, tp, lo2, tp2, pp = scratch[0], scratch[1, :n], scratch[2], scratch[3, :n], scratch[4, :n]
    cr, cg, cu = scratch[5], scratch[6], scratch[7]
    cd = np.empty(_R, np.float64)
    if future:
        any_hand = False
        for x in range(_R):
            if hand[x]:
                any_hand = True
        future = any_hand
    c = 0
    for r in range(_R):
        if loose[r] and unseen[r]:           # j may hold a card of rank r
            g, d, path, steps = _opp_run(loose, top, pts, n, j, r, inv, final, rules, lo, tp)
            # stable insertion by gathered, descending (Python's sort on -gathered)
            i = c
            while i > 0 and cg[i - 1] < g:
                cr[i], cg[i], cd[i], cu[i] = cr[i - 1], cg[i - 1], cd[i - 1], cu[i - 1]
                i -= 1
            cr[i], cg[i], cd[i], cu[i] = r, g, d, unseen[r]
            c += 1
    damage = 0.0
    mine = 0.0
    none_before = 1.0
    marked = 0
    for i in range(c):
        marked += cu[i]
        none_now = _p_none(pool, marked, h)
        p = none_before - none_now
        damage += cd[i] * p
        if future and p > 0.0:
            r = cr[i]
            g, d, path, steps = _opp_run(loose, top, pts, n, j, r, inv, final, rules, lo2, tp2)
            for x in range(n):
                pp[x] = pts[x]
            for s in range(steps):
                code = (path >> (_BITS * s)) & _MASK
                if code != 0 and code - 1 != j:
                    pp[code - 1] = 0
            tp2[j] = r
            pp[j] += g
            mine += p * _my_best(hand, lo2, tp2, pp, n, inv, rules, lo, tp)
        none_before = none_now
        if none_now <= 0.0:
            break
    if none_before > 0.0:
        if final:                            # j cannot run: the leftovers (R7)
            left = 0
            for x in range(_R):
                left += _PTS[x] * loose[x]
            receiver = _leftovers_receiver(last_runner, rules[R_LEFTOVERS] != 0)
            if receiver == 0:
                damage -= none_before * left
            elif receiver > 0:
                damage += none_before * left * inv
        if future:                           # j drops a card; the table stays as the plan left it
            mine += none_before * _my_best(hand, loose, top, pts, n, inv, rules, lo, tp)
    return damage, mine


@njit
def evaluate_plan(view, run, gain, loose, top, pts, hand, rules, weights, scratch):
    """The value of one plan in margin points (``ExpertBot.evaluate``): its ``gain`` minus
    ``damage_weight`` x the weighted expected damage of the next seats' replies, plus
    ``future_weight`` x my expected best run after the next seat's reply; at the game's end, the
    leftovers (R7) instead.

    Args:
        view: int64 (VIEW_SIZE,). run: whether the plan ends with a confirmed run. gain: float.
        loose: (10,), top: (n,), pts: (n,), hand: (10,) the table and hand the plan leaves.
        rules: int8 (22,). weights: float64 (5,): 3 seat weights, future weight, damage weight.
        scratch: int64 (8, 10).

    Returns:
        ``(value, damage, follow, replied)``: ``replied`` False when the plan ends the game (then
        damage and follow are 0).
    """
    n = view[V_N]
    inv = 1.0 / (n - 1)
    my_left = 0
    for x in range(_R):
        my_left += hand[x]
    others = np.empty(_S, np.int64)
    cards_after = my_left
    for x in range(1, n):
        others[x - 1] = view[V_HS + x]
        cards_after += view[V_HS + x]
    last_runner = 0 if run else view[V_LAST]
    value = gain
    deck_left = view[V_DECK]
    if cards_after == 0:
        if deck_left == 0:                   # my action ends the game: leftovers (R7)
            left = 0
            for x in range(_R):
                left += _PTS[x] * loose[x]
            receiver = _leftovers_receiver(last_runner, rules[R_LEFTOVERS] != 0)
            if receiver == 0:
                value += left
            elif receiver > 0:
                value -= left * inv
            return value, 0.0, 0.0, False
        for x in range(n - 1):               # re-deal (R6)
            others[x] = CARDS_PER_DEAL
    unseen = view[V_UNSEEN:V_UNSEEN + _R]
    pool = 0
    for x in range(_R):
        pool += unseen[x]
    final_reply = deck_left == 0 and cards_after == 1
    fw = weights[3]
    total_damage = 0.0
    follow = 0.0
    for j in range(1, n):
        h = others[j - 1]
        if h == 0:
            continue
        w = weights[j - 1]
        damage, mine = _reply(loose, top, pts, hand, j, h, unseen, pool, n, inv, final_reply and h == 1,
                              last_runner, fw > 0.0 and j == 1, rules, scratch)
        total_damage += w * damage
        follow += mine
    value += fw * follow - weights[4] * total_damage
    return value, total_damage, follow, True


class Plans:
    """The plan arrays :func:`enumerate_plans` fills (documentation only; the kernels take the
    arrays): ``act`` int64 (P,) the plan's first action; ``gain`` float64 (P,); ``run`` bool (P,);
    ``loose`` int64 (P, 10); ``top``, ``pts`` int64 (P, 4) (the first n used); ``hand`` int64
    (P, 10); ``steps`` int64 (P, 12) and ``nsteps`` int64 (P,): every action of the plan from now
    to the end of the turn (``Plan.steps``)."""


@njit
def new_plans():
    """Empty plan arrays of :data:`MAX_PLANS` rows (see :class:`Plans`)."""
    return (np.empty(MAX_PLANS, np.int64), np.empty(MAX_PLANS, np.float64), np.empty(MAX_PLANS, np.bool_),
            np.empty((MAX_PLANS, _R), np.int64), np.empty((MAX_PLANS, _S), np.int64),
            np.empty((MAX_PLANS, _S), np.int64), np.empty((MAX_PLANS, _R), np.int64),
            np.empty((MAX_PLANS, MAX_STEPS), np.int64), np.empty(MAX_PLANS, np.int64))


@njit
def _emit(c, first, gain, run, lo, tp, pp, hand, path, plen, n, act, pgain, prun, ploose, ptop, ppts, phand, psteps,
          pn):
    if c >= MAX_PLANS:
        raise ValueError("more plans than MAX_PLANS")
    act[c] = first
    pgain[c] = gain
    prun[c] = run
    for x in range(_R):
        ploose[c, x] = lo[x]
        phand[c, x] = hand[x]
    for x in range(n):
        ptop[c, x] = tp[x]
        ppts[c, x] = pp[x]
    for x in range(plen):
        psteps[c, x] = path[x]
    pn[c] = plen
    return c + 1


@njit
def _extend(c, first, start, need, gain, loose, top, pts, hand, n, inv, mid_run, path, plen, rules,
            act, pgain, prun, ploose, ptop, ppts, phand, psteps, pn):
    """Every stopping point of the run from here, depth first (``ExpertBot._extend``): a plan
    that confirms now, then the plans of each next step (a tap, or each takeable pile in seat
    order, R3). An explicit stack in place of the recursion, children pushed in reverse, so the
    plans come in the same order. (Scalar loops, no slice assignments: numba compiles them much
    faster.)"""
    depth = 2 * _R * _S + 4
    s_first = np.empty(depth, np.int64)
    s_need = np.empty(depth, np.int64)
    s_gain = np.empty(depth, np.float64)
    s_mid = np.empty(depth, np.bool_)
    s_lo = np.empty((depth, _R), np.int64)
    s_tp = np.empty((depth, _S), np.int64)
    s_pp = np.empty((depth, _S), np.int64)
    s_path = np.empty((depth, MAX_STEPS), np.int64)
    s_len = np.empty(depth, np.int64)
    lo = np.empty(_R, np.int64)
    tp = np.empty(_S, np.int64)
    pp = np.empty(_S, np.int64)
    pa = np.empty(MAX_STEPS, np.int64)
    t = np.empty(_S, np.int64)
    own = rules[R_TAKE_OWN] != 0
    s_first[0] = first
    s_need[0] = need
    s_gain[0] = gain
    s_mid[0] = mid_run
    s_len[0] = plen
    for x in range(_R):
        s_lo[0, x] = loose[x]
    for x in range(n):
        s_tp[0, x] = top[x]
        s_pp[0, x] = pts[x]
    for x in range(plen):
        s_path[0, x] = path[x]
    sp = 1
    while sp > 0:
        sp -= 1
        f, nd, g, mid, ln = s_first[sp], s_need[sp], s_gain[sp], s_mid[sp], s_len[sp]
        for x in range(_R):
            lo[x] = s_lo[sp, x]
        for x in range(n):
            tp[x] = s_tp[sp, x]
            pp[x] = s_pp[sp, x]
            t[x] = tp[x]
        for x in range(ln):
            pa[x] = s_path[sp, x]
        t[0] = start                                     # the starting card ends on top (R5)
        pa[ln] = CONFIRM
        c = _emit(c, f, g, True, lo, t, pp, hand, pa, ln + 1, n, act, pgain, prun, ploose, ptop, ppts, phand,
                  psteps, pn)
        nxt = rules[R_AFTER_STEP + nd] if nd >= 0 else -1
        tap = _must_tap(nd, lo)
        for k in range(n - 1, -2, -1):                   # the children, pushed in reverse: k = -1 a tap
            if tap:
                if k >= 0:
                    continue
            elif k < 0 or not _pile_takeable(nd, tp[k], k, 0, own):
                continue
            for x in range(_R):
                s_lo[sp, x] = lo[x]
            for x in range(n):
                s_tp[sp, x] = tp[x]
                s_pp[sp, x] = pp[x]
            for x in range(ln):
                s_path[sp, x] = pa[x]
            s_need[sp] = nxt
            s_mid[sp] = False
            s_len[sp] = ln + 1
            if k < 0:                                    # R3: the step is a tap
                s_first[sp] = TAP if mid else f
                s_gain[sp] = g + _PTS[nd]
                s_lo[sp, nd] -= 1
                s_pp[sp, 0] += _PTS[nd]
                s_path[sp, ln] = TAP
            else:                                        # R3: take the pile of seat k
                gk = g
                if k != 0:
                    gk += pp[k] * (1.0 + inv)
                    s_pp[sp, 0] += pp[k]
                    s_pp[sp, k] = 0
                s_first[sp] = TAKE + k if mid else f
                s_gain[sp] = gk
                s_tp[sp, k] = -1
                s_path[sp, ln] = TAKE + k
            sp += 1
    return c


@njit
def enumerate_plans(view, legal, rules, plans):
    """Every way to finish the turn (``ExpertBot.plans``), in its order, into ``plans``
    (:func:`new_plans`). Returns the number of plans (>= 1)."""
    act, pgain, prun, ploose, ptop, ppts, phand, psteps, pn = plans
    n = view[V_N]
    inv = 1.0 / (n - 1)
    hand = np.empty(_R, np.int64)
    loose = np.empty(_R, np.int64)
    h = np.empty(_R, np.int64)
    lo = np.empty(_R, np.int64)
    top = np.empty(_S, np.int64)
    pts = np.empty(_S, np.int64)
    p = np.empty(_S, np.int64)
    for x in range(_R):
        hand[x] = view[V_HAND + x]
        loose[x] = view[V_LOOSE + x]
    for x in range(n):
        top[x] = view[V_TOP + x]
        pts[x] = view[V_PTS + x]
    path = np.zeros(MAX_STEPS, np.int64)
    c = 0
    if view[V_RUN]:
        pts[0] += view[V_RPTS]           # my pile after confirming: + what the run has gathered
        return _extend(c, CONFIRM, view[V_RSTART], view[V_NEED], 0.0, loose, top, pts, hand, n, inv, True, path, 0,
                       rules, act, pgain, prun, ploose, ptop, ppts, phand, psteps, pn)
    for i in range(legal.shape[0]):
        a = legal[i]
        if a >= TAP:
            continue
        r = a - START if a < DROP else a - DROP
        for x in range(_R):
            h[x] = hand[x]
            lo[x] = loose[x]
        for x in range(n):
            p[x] = pts[x]
        h[r] -= 1
        path[0] = a
        if a < DROP:                     # start r: the hand card and a loose card
            lo[r] -= 1
            p[0] += 2 * _PTS[r]
            c = _extend(c, a, r, rules[R_AFTER_START + r], 2.0 * _PTS[r], lo, top, p, h, n, inv, False, path, 1,
                        rules, act, pgain, prun, ploose, ptop, ppts, phand, psteps, pn)
        else:                            # drop r: one more loose card
            lo[r] += 1
            c = _emit(c, a, 0.0, False, lo, top, pts, h, path, 1, n, act, pgain, prun, ploose, ptop, ppts, phand,
                      psteps, pn)
    return c


@njit
def plan_values(view, legal, rules, weights, plans, scores):
    """:func:`enumerate_plans`, then :func:`evaluate_plan` of each into ``scores`` float64
    (MAX_PLANS, 4): value, damage, follow, and 1.0 if the replies were priced (0.0: the plan ends
    the game). Returns the number of plans."""
    c = enumerate_plans(view, legal, rules, plans)
    act, pgain, prun, ploose, ptop, ppts, phand, psteps, pn = plans
    n = view[V_N]
    scratch = np.empty((8, _R), np.int64)
    for i in range(c):
        value, damage, follow, replied = evaluate_plan(view, prun[i], pgain[i], ploose[i], ptop[i, :n], ppts[i, :n],
                                                       phand[i], rules, weights, scratch)
        scores[i, 0] = value
        scores[i, 1] = damage
        scores[i, 2] = follow
        scores[i, 3] = 1.0 if replied else 0.0
    return c


@njit
def new_scores():
    """Empty score rows of :func:`plan_values`: float64 (MAX_PLANS, 4)."""
    return np.empty((MAX_PLANS, 4), np.float64)


@njit
def evaluate_one(view, run, gain, loose, top, pts, hand, rules, weights):
    """:func:`evaluate_plan` of one plan given as arrays (``ExpertBot.evaluate``)."""
    return evaluate_plan(view, run, gain, loose, top, pts, hand, rules, weights, np.empty((8, _R), np.int64))


# ---- numpy's PCG64 stream (the expert's tie-breaks) ---------------------------------------------
_M64 = np.uint64(0xFFFFFFFFFFFFFFFF)
_M32 = np.uint64(0xFFFFFFFF)
_MULT_HI = np.uint64(0x2360ED051FC65DA4)
_MULT_LO = np.uint64(0x4385DF649FCCF645)


@njit_inline
def _mul64(a, b):
    """The 128-bit product of two uint64 as ``(high, low)``."""
    m32 = np.uint64(0xFFFFFFFF)
    s32 = np.uint64(32)
    a_lo, a_hi = a & m32, a >> s32
    b_lo, b_hi = b & m32, b >> s32
    ll = a_lo * b_lo
    lh = a_lo * b_hi
    hl = a_hi * b_lo
    hh = a_hi * b_hi
    mid = (ll >> s32) + (lh & m32) + (hl & m32)
    low = (ll & m32) | (mid << s32)
    high = hh + (lh >> s32) + (hl >> s32) + (mid >> s32)
    return high, low


@njit_inline
def _pcg_next64(st):
    """One step of numpy's PCG64 (128-bit LCG, XSL-RR output) on ``st`` uint64 (6,): state high,
    state low, increment high, increment low, has_uint32, uinteger."""
    hi, lo = st[0], st[1]
    ph, pl = _mul64(lo, _MULT_LO)
    ph = ph + hi * _MULT_LO + lo * _MULT_HI
    nl = pl + st[3]
    carry = np.uint64(1) if nl < pl else np.uint64(0)
    nh = ph + st[2] + carry
    st[0], st[1] = nh, nl
    x = nh ^ nl
    rot = nh >> np.uint64(58)
    return (x >> rot) | (x << ((np.uint64(64) - rot) & np.uint64(63)))


@njit_inline
def _pcg_next32(st):
    """numpy's ``next_uint32`` of PCG64: the buffered half of a 64-bit draw."""
    if st[4] != 0:
        st[4] = 0
        return st[5]
    v = _pcg_next64(st)
    st[4] = 1
    st[5] = v >> np.uint64(32)
    return v & np.uint64(0xFFFFFFFF)


@njit
def pcg_integers(st, k):
    """``numpy.random.Generator(PCG64).integers(k)`` for 2 <= k < 2**32 on the stream ``st``
    (Lemire's bounded draw on 32 bits, as numpy's ``buffered_bounded_lemire_uint32``)."""
    rng_excl = np.uint64(k)
    m = _pcg_next32(st) * rng_excl
    leftover = m & np.uint64(0xFFFFFFFF)
    if leftover < rng_excl:
        threshold = (np.uint64(0xFFFFFFFF) - np.uint64(k - 1)) % rng_excl
        while leftover < threshold:
            m = _pcg_next32(st) * rng_excl
            leftover = m & np.uint64(0xFFFFFFFF)
    return np.int64(m >> np.uint64(32))


def pcg_state(rng: np.random.Generator) -> np.ndarray:
    """The stream of a numpy PCG64 generator as :func:`pcg_integers` reads it: uint64 (6,).

    Raises:
        ValueError: ``rng`` is not driven by PCG64 (``numpy.random.default_rng``'s bit generator).
    """
    st = rng.bit_generator.state
    if st.get("bit_generator") != "PCG64":
        raise ValueError(f"a PCG64 generator is needed (numpy.random.default_rng), got {st.get('bit_generator')!r}")
    s, inc = st["state"]["state"], st["state"]["inc"]
    return np.array([s >> 64, s & 0xFFFFFFFFFFFFFFFF, inc >> 64, inc & 0xFFFFFFFFFFFFFFFF, st["has_uint32"],
                     st["uinteger"]], np.uint64)


def set_pcg_state(rng: np.random.Generator, st: np.ndarray) -> None:
    """Write the stream ``st`` (uint64 (6,), as :func:`pcg_state` reads it) back into the PCG64
    generator ``rng``, so its next draws continue where the kernels' draws stopped.

    Raises:
        ValueError: ``rng`` is not driven by PCG64.
    """
    old = rng.bit_generator.state
    if old.get("bit_generator") != "PCG64":
        raise ValueError(f"a PCG64 generator is needed (numpy.random.default_rng), got {old.get('bit_generator')!r}")
    s = [int(x) for x in st]
    rng.bit_generator.state = {"bit_generator": "PCG64", "state": {"state": (s[0] << 64) | s[1], "inc": (s[2] << 64) | s[3]},
                               "has_uint32": s[4], "uinteger": s[5]}


@njit
def pick(values, c, st):
    """``ExpertBot``'s ``_pick``: the index of the largest of ``values[:c]``; exact ties (within
    1e-9) broken uniformly with one draw of the stream ``st``."""
    best = values[0]
    for i in range(1, c):
        if values[i] > best:
            best = values[i]
    top = 0
    first = -1
    for i in range(c):
        if values[i] >= best - _EPS:
            if first < 0:
                first = i
            top += 1
    if top == 1:
        return first
    want = pcg_integers(st, top)
    for i in range(c):
        if values[i] >= best - _EPS:
            if want == 0:
                return i
            want -= 1
    return first


@njit
def act_rows(views, masks, rules, weights, st, out):
    """The expert's action for each row (``ExpertBot.act`` row after row): a row with one legal
    action gets it with no draw; otherwise :func:`plan_values` and :func:`pick` (a tie: one draw
    of the stream ``st``, in row order, so the draws are those of ``act`` called row by row).

    Args:
        views: int64 (G, VIEW_SIZE), each row's view (:func:`hod.agents.robada_bots.view_arrays`).
        masks: int8 (G, NUM_ACTIONS), each row's legal actions (at least one).
        rules: int8 (22,). weights: float64 (5,). st: uint64 (6,) the bot's PCG64 stream (advanced).
        out: int64 (G,), the actions.

    Returns:
        -1; or the first row whose planned action the mask refuses (the rules differ from the
        table's: ``out`` and ``st`` are then partly written).
    """
    legal = np.empty(NUM_ACTIONS, np.int64)
    plans = new_plans()
    scores = new_scores()
    values = scores[:, 0]
    for g in range(views.shape[0]):
        nl = 0
        for a in range(NUM_ACTIONS):
            if masks[g, a]:
                legal[nl] = a
                nl += 1
        if nl == 1:
            out[g] = legal[0]
            continue
        k = plan_values(views[g], legal[:nl], rules, weights, plans, scores)
        a = plans[0][pick(values, k, st)]
        if not masks[g, a]:
            out[g] = a
            return g
        out[g] = a
    return -1


# ---- playouts ------------------------------------------------------------------------------------
@njit
def view_from_record(b8, b16, bb, lay, seat, view):
    """``view`` int64 (VIEW_SIZE,) of ``seat`` in the packed one-game record (``b8``, ``b16``,
    ``bb`` at the field offsets ``lay`` of :func:`robada_env.rules.kernels.unpack`; the numbers
    of ``robada_env.rules.observation.view_of``: seat-relative, what the seat knows, R9)."""
    n = lay[25]
    view[V_N] = n
    for r in range(_R):
        h = b8[lay[3] + seat * _R + r]                   # hand_cnt
        view[V_HAND + r] = h
        view[V_LOOSE + r] = b8[lay[6] + r]               # loose_cnt
        view[V_UNSEEN + r] = COPIES_PER_RANK - b8[lay[11] + r] - h       # 4 - seen_cnt - my hand
    t = seat
    for k in range(n):
        view[V_HS + k] = b8[lay[4] + t]                  # hand_size
        top = b8[lay[8] + t]                             # pile_top (a card id)
        view[V_TOP + k] = top % _R if top >= 0 else -1
        view[V_PTS + k] = b16[lay[10] + t]               # pile_pts
        t += 1
        if t == n:
            t = 0
    view[V_RUN] = 1 if bb[lay[17]] else 0                # run_active
    view[V_RSTART] = b8[lay[14]]
    view[V_NEED] = b8[lay[16]]                           # run_next
    view[V_RPTS] = b16[lay[19]]
    view[V_DECK] = b8[lay[1]]
    lr = b8[lay[22]]                                     # last_runner
    view[V_LAST] = (lr - seat) % n if lr >= 0 else -1


def record_buffers(s) -> tuple:
    """The packed one-game record of a :class:`robada_env.rules.engine.State` as :func:`playouts`
    reads it: ``(b8 int8, b16 int16, bb bool, lay int64)`` (the state's own buffers, not copied:
    :func:`playouts` copies them before it plays)."""
    return s._b8, s._b16, s._bb, s._t.lay


@njit
def playouts(b8, b16, bb, lay, rules, weights, cand_steps, cand_len, streams, out):
    """Play each candidate move on a copy of the packed game (``b8``, ``b16``, ``bb``, ``lay``:
    :class:`robada_env.rules.engine.State`'s record), then the game to its end with the expert in
    every seat (a seat with one legal action plays it without the expert); the final points of
    each playout into ``out`` (the caller scores them: ``hod.agents.robada_search.playout_score``).

    Args:
        rules: int8 (22,). weights: float64 (5,) (the playout experts' weights).
        cand_steps: int64 (C, 12), cand_len int64 (C,): the candidates' actions.
        streams: uint64 (n, 6): each seat's expert's PCG64 stream at the start of every playout
            (the same for every candidate: common random numbers).
        out: int64 (C, n): the final points of each seat (absolute seats) after each playout.

    Returns:
        -1; or ``c`` when a step of candidate ``c`` is not legal, ``C + c`` when an expert's plan in
        its playout is not (the rules the experts plan under are not the game's): nothing scored.
    """
    s8, s16, sb = b8.copy(), b16.copy(), bb.copy()
    mask = np.zeros((1, 1, NUM_ACTIONS), np.int8)
    st = streams.copy()
    view = np.empty(VIEW_SIZE, np.int64)
    legal = np.empty(NUM_ACTIONS, np.int64)
    plans = new_plans()
    scores = new_scores()
    values = scores[:, 0]
    n = lay[25]
    o_pts, o_cur, o_end = lay[10], lay[21], lay[23]      # pile_pts, current, terminal
    for c in range(cand_steps.shape[0]):
        for x in range(b8.shape[0]):                    # a fresh copy of the game (scalar loops: they
            s8[x] = b8[x]                                # compile faster than slice assignments)
        for x in range(b16.shape[0]):
            s16[x] = b16[x]
        for x in range(bb.shape[0]):
            sb[x] = bb[x]
        for x in range(streams.shape[0]):
            for y in range(streams.shape[1]):
                st[x, y] = streams[x, y]
        _k.start_one(s8, s16, sb, lay, 2, rules, mask)              # the mask alone
        for i in range(cand_len[c]):
            if _k.step_one(s8, s16, sb, lay, cand_steps[c, i], rules, mask) < 0:
                return c
        while not sb[o_end]:
            p = s8[o_cur]
            nl = 0
            for a in range(NUM_ACTIONS):
                if mask[0, 0, a]:
                    legal[nl] = a
                    nl += 1
            if nl == 1:
                a = legal[0]
            else:
                view_from_record(s8, s16, sb, lay, p, view)
                k = plan_values(view, legal[:nl], rules, weights, plans, scores)
                a = plans[0][pick(values, k, st[p])]
            if _k.step_one(s8, s16, sb, lay, a, rules, mask) < 0:
                return cand_steps.shape[0] + c
        for i in range(n):
            out[c, i] = s16[o_pts + i]                  # the final points (R8)
    return -1
