"""Ronda Robada's rules as compiled kernels (numba ``@njit(cache=True)``) over the arrays of the
state record :class:`robada_env.rules.batched.BatchedRobadaState`, one game per kernel call, and
batch drivers that loop over the games a call names.

What is here (ronda_robada.txt; RULINGS R2-R8): the legal mask of the seat to act ('How to
play', R3, R4), one action of that seat (``start``, ``drop``, ``tap``, ``take``, ``confirm``:
the run order R2 through the rule tables of :func:`rules_array`, loose cards before piles R3,
the starting card on top R5), the end of a turn (to the left, the re-deal R6, the end and the
leftovers R7), and the observation of one seat (:data:`robada_env.rules.observation.LAYOUT`,
every entry the same float32 as :func:`robada_env.rules.observation.encode`: rank counts
``k / 4`` exact in float32, the other scaled values read from tables built with the encoder's
own divisors). Deals are not here: they stay :mod:`hod.core.deal`; the engine writes the dealt
deck into the record, then :func:`reset_batch` lays out the table from it, or the auto-reset
step drivers (:func:`step_batch_auto`, :func:`step_batch_auto_par`) deal a finished game again
themselves with deal's one shuffle kernel (``shuffle_game``, the one ``shuffled`` runs) from
the seed :func:`next_game_seed` derives from its deck.

Arrays (B games, n seats; card ids 0..39 of :mod:`robada_env.rules.cards`, -1 for none): the
fields of :class:`~robada_env.rules.batched.BatchedRobadaState` under their names (int8 but
``pile_pts``, ``run_pts``, ``decisions`` int16; ``run_active``, ``run_taken``, ``terminal`` bool).
``games`` are intp indices, ``actions`` int64 (G, 1), ``masks`` int8 (B, 1, 27) the engine's
mask of every game (kept current by the drivers that change a game), observations float32
(G, S, 192). The rule options come in one int8 array (:func:`rules_array`): the rank a run needs
after each starting rank and after each step (built by :func:`robada_env.rules.runs.next_after_start`
and :func:`~robada_env.rules.runs.next_after_step`, R2), ``may_take_own_pile`` (R3) and
``leftovers_to_last_runner`` (R7).

The single-game engine :mod:`robada_env.rules.engine` runs the same per-game kernels on one game
packed in three flat buffers (:func:`unpack`; entry points :func:`step_one`, :func:`start_one`,
:func:`observe_one`, :func:`resample_one`). The run rules they ask are compiled from
:mod:`robada_env.rules.runs` (``can_start``, ``must_tap``, ``pile_takeable``,
``leftovers_receiver``), the functions the bots' planner calls.

Compilation: on first use in a process each kernel is compiled once, or loaded from numba's
on-disk cache (:func:`hod.core.jit.cache_kernels`, as :mod:`tapeo_env.rules.kernels`), so later
processes, the tournament's spawned workers included, load them instead of compiling.
"""
from __future__ import annotations

import numpy as np
from numba import njit as _njit, prange

from hod.core.deal import numbers_into, shuffle_game
from hod.core.jit import cache_kernels

from .actions import CONFIRM, DROP, NOOP, NUM_ACTIONS, START, TAKE, TAP
from .cards import COPIES_PER_RANK, DECK_SIZE, NUM_RANKS, RANK_POINTS, TOTAL_POINTS
from .engine import CARDS_PER_DEAL, LOOSE_AT_START, MAX_PLAYERS, MIN_PLAYERS, Config
from .observation import _DECK_MAX, LAYOUT
from . import runs
from .runs import leftovers_receiver, may_take_pile, next_after_start, next_after_step

#: Whether the kernels are cached on disk (:func:`hod.core.jit.cache_kernels`).
CACHED = cache_kernels(__file__)


# The kernels allocate nothing (every array comes from the driver), so they are compiled without
# numba's reference counting (``_nrt=False``): with it, each per-game call and each row view costs
# an atomic increment and decrement of every array's count, which halved the observation's speed
# (measured on the shared 2-core machine: 489 -> 235 ns per observation of a 2-player game at
# B = 4096).
def njit(fn):
    """numba's ``njit`` with this module's cache setting, without reference counting."""
    return _njit(cache=CACHED, _nrt=False)(fn)


def njit_inline(fn):
    """:func:`njit`, and inlined where another kernel calls it (numba IR inlining: no call with
    two dozen array arguments per game)."""
    return _njit(cache=CACHED, _nrt=False, inline="always")(fn)


#: The run rules of :mod:`robada_env.rules.runs` that the mask and the step ask, compiled from
#: that one source (inlined): 'How to play' (a start), R3 (tap before piles; which pile), R7.
_can_start = njit_inline(runs.can_start)
_must_tap = njit_inline(runs.must_tap)
_pile_takeable = njit_inline(runs.pile_takeable)
_leftovers_receiver = njit_inline(runs.leftovers_receiver)
#: The greedy walk of a run (:func:`robada_env.rules.runs.walk`: taps first, else the takeable pile of
#: highest value, R2, R3), compiled from the one source over the compiled rules above; the v2
#: summaries (:func:`walk_gain`) and the expert's planner (:mod:`hod.agents.robada_planner_kernels`)
#: both walk with it.
walk = njit_inline(runs._walk_source(_must_tap, _pile_takeable))

_R = NUM_RANKS
_S = MAX_PLAYERS
_O = {p.name: LAYOUT.offsets[p.name].start for p in LAYOUT.pieces}
(_NP0, _ACT0, _HAND0, _HS0, _LOOSE0, _TOP0, _PSIZE0, _PPTS0, _PRANKS0, _RACT0, _RSTART0, _RRANK0, _RNEXT0,
 _RCLOSED0, _RGATH0, _RSIZE0, _RPTS0, _RTAKEN0, _DECK0, _SEEN0, _UNSEEN0, _LAST0) = (
    _O[p.name] for p in LAYOUT.pieces)
_DEAL = CARDS_PER_DEAL
_LOOSE_AT_START = LOOSE_AT_START
_DECK_SIZE = DECK_SIZE
_COPIES = COPIES_PER_RANK
#: Points of each rank (R8).
_PTS = np.array(RANK_POINTS, np.int64)


def _table(values) -> np.ndarray:
    return np.array([np.float32(v) for v in values], np.float32)


#: Rank counts are ``k / 4`` in the observation: ``k * 0.25`` in float32, exact.
_QUARTER = np.float32(1.0 / COPIES_PER_RANK)
#: The observation's value of the other integers, as the encoder writes them (a Python float
#: rounded once to float32): hand sizes ``h / 3``, pile and run sizes ``k / 40``, points ``p / 244``,
#: the deck ``d / 36``.
_HAND_SIZE = _table([h / CARDS_PER_DEAL for h in range(CARDS_PER_DEAL + 1)])
_SIZE = _table([k / DECK_SIZE for k in range(DECK_SIZE + 1)])
_POINTS = _table([p / TOTAL_POINTS for p in range(TOTAL_POINTS + 1)])
_DECK = _table([d / _DECK_MAX for d in range(_DECK_MAX + 1)])

#: Indices into :func:`rules_array`: the rank needed after starting with rank r at
#: ``R_AFTER_START + r``, after a step that gathered rank r at ``R_AFTER_STEP + r``; then the two
#: flags.
R_AFTER_START, R_AFTER_STEP, R_TAKE_OWN, R_LEFTOVERS = 0, _R, 2 * _R, 2 * _R + 1


def rules_array(config: Config) -> np.ndarray:
    """The rule options of ``config`` as the kernels take them: int8 (22,), by the ``R_*``
    indices. Built by the rule functions of :mod:`robada_env.rules.runs` (the one source of R2,
    R3 and R7)."""
    out = np.zeros(2 * _R + 2, np.int8)
    for r in range(_R):
        out[R_AFTER_START + r] = next_after_start(r, config.closing_ace)
        out[R_AFTER_STEP + r] = next_after_step(r, config.closing_ace)
    out[R_TAKE_OWN] = may_take_pile(0, 0, config.may_take_own_pile)          # the runner's own pile
    out[R_LEFTOVERS] = leftovers_receiver(0, config.leftovers_to_last_runner) == 0
    return out


# ---- the legal mask (one game) -------------------------------------------------------------------
@njit_inline
def mask_game(hand_cnt, loose_cnt, pile_top, run_next, run_active, current, terminal, b, rules, out):
    """The legal actions of the seat to act in game ``b`` into ``out`` int8 (27,) (every entry
    written; ``engine.legal_mask`` of that seat): no run -> ``start r`` for each rank r with a
    hand card and a loose card, ``drop r`` for each rank in hand (R4); a run -> ``tap`` if a loose
    card of the needed rank is on the table, else ``take +k`` for each pile showing that rank
    (R3; the own pile only with ``may_take_own_pile``), and ``confirm`` (R4). A finished game:
    ``no-op`` only."""
    for a in range(NUM_ACTIONS):
        out[a] = 0
    if terminal[b]:
        out[NOOP] = 1
        return
    cur = current[b]
    hand, loose = hand_cnt[b, cur], loose_cnt[b]
    if not run_active[b]:
        for r in range(_R):
            if hand[r] > 0:
                out[DROP + r] = 1
                if _can_start(r, hand, loose):
                    out[START + r] = 1
        return
    need = run_next[b]
    if _must_tap(need, loose):
        out[TAP] = 1
    elif need >= 0:
        n = pile_top.shape[1]
        own = rules[R_TAKE_OWN] != 0
        t = cur                                          # the seat k places to the runner's left
        for k in range(n):
            top = pile_top[b, t]
            if _pile_takeable(need, top % _R if top >= 0 else -1, k, 0, own):
                out[TAKE + k] = 1
            t += 1
            if t == n:
                t = 0
    out[CONFIRM] = 1


# ---- one action (one game) -----------------------------------------------------------------------
@njit_inline
def _deal(deck, deck_left, hand_cards, hand_cnt, hand_size, hand_total, b):
    """R6: 3 cards to each seat in seat order from the top of the deck (every hand is empty). A
    deck of fewer cards (only a hand-built position, ``engine.from_position``, has one) deals what
    it holds, in the same order."""
    n = hand_cnt.shape[1]
    at = _DECK_SIZE - deck_left[b]
    for i in range(n):
        k = 0
        while k < _DEAL and at < _DECK_SIZE:
            c = deck[b, at]
            at += 1
            hand_cards[b, i, k] = c
            hand_cnt[b, i, c % _R] += 1
            k += 1
        hand_size[b, i] = k
        hand_total[b] += k
    deck_left[b] = _DECK_SIZE - at


@njit_inline
def _clear_run(run_cnt, run_card, run_start, run_rank, run_next, run_active, run_size, run_pts, run_taken, b):
    for r in range(_R):
        run_cnt[b, r] = 0
    run_card[b] = -1
    run_start[b] = -1
    run_rank[b] = -1
    run_next[b] = -1
    run_active[b] = False
    run_size[b] = 0
    run_pts[b] = 0
    for i in range(run_taken.shape[1]):
        run_taken[b, i] = False


@njit_inline
def step_game(deck, deck_left, hand_cards, hand_cnt, hand_size, hand_total, loose_cnt, pile_cnt, pile_top, pile_size,
              pile_pts, seen_cnt, run_cnt, run_card, run_start, run_rank, run_next, run_active, run_size, run_pts,
              run_taken, current, last_runner, terminal, decisions, b, a, rules):
    """Apply action ``a`` (legal: :func:`mask_game`) of the seat to act in game ``b``
    (``engine.apply_action``). Returns 1 if the game ended on it, else 0.

    start r: the first hand card of rank r (hand order) and a loose card of rank r begin the run;
    drop r: that hand card becomes loose and the turn ends (R4); tap: a loose card of the needed
    rank joins the run; take +k: the whole pile of seat (actor + k) % n joins it (R3); confirm:
    everything gathered goes to the actor's pile, the starting card visible (R5), and the turn
    ends. At the end of a turn the seat on the left acts; when every hand is empty the deck deals
    again (R6), or, with the deck out too, the game ends and the leftover loose cards go under
    the visible card of the last runner's pile (R7, ``leftovers_to_last_runner``)."""
    if a == NOOP:                                        # legal only once the game is over
        return 0
    n = hand_cnt.shape[1]
    cur = current[b]
    decisions[b] += 1
    if a < TAP:                                          # start or drop: a hand card leaves the hand
        r = a - START if a < DROP else a - DROP
        j = 0
        while j < _DEAL - 1 and (hand_cards[b, cur, j] < 0 or hand_cards[b, cur, j] % _R != r):
            j += 1
        card = hand_cards[b, cur, j]
        hand_cards[b, cur, j] = -1
        hand_cnt[b, cur, r] -= 1
        hand_size[b, cur] -= 1
        hand_total[b] -= 1
        seen_cnt[b, r] += 1
        if a < DROP:                                     # the hand card + a loose card of its rank
            loose_cnt[b, r] -= 1
            run_cnt[b, r] = 2
            run_card[b] = card
            run_start[b] = r
            run_rank[b] = r
            run_next[b] = rules[R_AFTER_START + r]       # a starting Ace needs the 2 (R2)
            run_active[b] = True
            run_size[b] = 2
            run_pts[b] = 2 * _PTS[r]
            return 0
        loose_cnt[b, r] += 1                             # drop: the turn ends (R4)
    elif a == TAP:                                       # R3: a loose card of the needed rank
        r = run_next[b]
        loose_cnt[b, r] -= 1
        run_cnt[b, r] += 1
        run_size[b] += 1
        run_pts[b] += _PTS[r]
        run_rank[b] = r
        run_next[b] = rules[R_AFTER_STEP + r]
        return 0
    elif a < CONFIRM:                                    # R3: the whole pile of seat cur + k
        t = (cur + a - TAKE) % n
        for r in range(_R):
            run_cnt[b, r] += pile_cnt[b, t, r]
            pile_cnt[b, t, r] = 0
        run_size[b] += pile_size[b, t]
        run_pts[b] += pile_pts[b, t]
        pile_size[b, t] = 0
        pile_pts[b, t] = 0
        pile_top[b, t] = -1
        run_taken[b, t] = True
        r = run_next[b]
        run_rank[b] = r
        run_next[b] = rules[R_AFTER_STEP + r]
        return 0
    else:                                                # confirm (R4, R5)
        for r in range(_R):
            pile_cnt[b, cur, r] += run_cnt[b, r]
        pile_size[b, cur] += run_size[b]
        pile_pts[b, cur] += run_pts[b]
        pile_top[b, cur] = run_card[b]
        last_runner[b] = cur
        _clear_run(run_cnt, run_card, run_start, run_rank, run_next, run_active, run_size, run_pts, run_taken, b)
    current[b] = cur + 1 if cur + 1 < n else 0           # the end of the turn: to the left (R4)
    return end_of_turn(deck, deck_left, hand_cards, hand_cnt, hand_size, hand_total, loose_cnt, pile_cnt, pile_size,
                       pile_pts, current, last_runner, terminal, b, rules)


@njit_inline
def end_of_turn(deck, deck_left, hand_cards, hand_cnt, hand_size, hand_total, loose_cnt, pile_cnt, pile_size, pile_pts,
                current, last_runner, terminal, b, rules):
    """What follows a turn in game ``b`` (``current`` already the next seat): cards in some
    hand -> the play goes on (past the seats with an empty hand, which only a hand-built position
    has); every hand empty -> the deck deals again (R6); the deck out too -> the game ends and the
    leftover loose cards go under the visible card of the last runner's pile (R7,
    ``leftovers_to_last_runner``). Returns 1 if the game ended, else 0."""
    n = hand_cnt.shape[1]
    if hand_total[b] > 0:
        while hand_size[b, current[b]] == 0:
            current[b] = current[b] + 1 if current[b] + 1 < n else 0
        return 0
    if deck_left[b] > 0:
        _deal(deck, deck_left, hand_cards, hand_cnt, hand_size, hand_total, b)
        return 0
    terminal[b] = True
    w = _leftovers_receiver(last_runner[b], rules[R_LEFTOVERS] != 0)
    if w >= 0:                                           # under the visible card: pile_top stays
        for r in range(_R):
            k = loose_cnt[b, r]
            pile_cnt[b, w, r] += k
            pile_size[b, w] += k
            pile_pts[b, w] += k * _PTS[r]
            loose_cnt[b, r] = 0
    return 1


@njit_inline
def reset_game(deck, deck_left, hand_cards, hand_cnt, hand_size, hand_total, loose_cnt, pile_cnt, pile_top, pile_size,
               pile_pts, seen_cnt, run_cnt, run_card, run_start, run_rank, run_next, run_active, run_size, run_pts,
               run_taken, current, last_runner, terminal, decisions, b):
    """A new game ``b`` from the deck order the driver wrote in ``deck[b]`` (R6): 4 loose cards,
    then 3 cards to each seat 0, 1, ...; seat 0 acts first."""
    n = hand_cnt.shape[1]
    for r in range(_R):
        loose_cnt[b, r] = 0
    for q in range(_LOOSE_AT_START):
        loose_cnt[b, deck[b, q] % _R] += 1
    for r in range(_R):
        seen_cnt[b, r] = loose_cnt[b, r]
    for i in range(n):
        for j in range(_DEAL):
            hand_cards[b, i, j] = -1
        for r in range(_R):
            hand_cnt[b, i, r] = 0
            pile_cnt[b, i, r] = 0
        pile_top[b, i] = -1
        pile_size[b, i] = 0
        pile_pts[b, i] = 0
    _clear_run(run_cnt, run_card, run_start, run_rank, run_next, run_active, run_size, run_pts, run_taken, b)
    current[b] = 0
    last_runner[b] = -1
    terminal[b] = False
    decisions[b] = 0
    deck_left[b] = _DECK_SIZE - _LOOSE_AT_START
    hand_total[b] = 0
    _deal(deck, deck_left, hand_cards, hand_cnt, hand_size, hand_total, b)


# ---- the observation of one seat (one game) --------------------------------------------------------
@njit_inline
def observe_game(deck_left, hand_cnt, hand_size, loose_cnt, pile_cnt, pile_top, pile_size, pile_pts, seen_cnt, run_cnt,
                 run_start, run_rank, run_next, run_active, run_size, run_pts, run_taken, current, last_runner,
                 terminal, b, seat, row):
    """``row`` float32 (192,) = ``observation.encode`` of ``seat`` in game ``b``: zeroed, then the
    entries that are not 0 written (seats relative to ``seat``, padding seats 0; what ``seat``
    knows only, R9)."""
    n = hand_cnt.shape[1]
    for i in range(row.shape[0]):
        row[i] = 0.0
    hand = hand_cnt[b, seat]
    loose = loose_cnt[b]
    seen = seen_cnt[b]
    gath = run_cnt[b]
    piles = pile_cnt[b]
    tops = pile_top[b]
    sizes = pile_size[b]
    pts = pile_pts[b]
    hsz = hand_size[b]
    taken = run_taken[b]
    row[_NP0 + n - MIN_PLAYERS] = 1.0
    if not terminal[b]:                                  # to_act: nobody once the game is over
        to_act = current[b] - seat
        if to_act < 0:
            to_act += n
        row[_ACT0 + to_act] = 1.0
    lr = last_runner[b]
    if lr >= 0:
        lr -= seat
        if lr < 0:
            lr += n
        row[_LAST0 + lr] = 1.0
    # rank counts / 4 (exact in float32), one short loop per piece (they vectorize)
    for r in range(_R):
        row[_HAND0 + r] = hand[r] * _QUARTER
    for r in range(_R):
        row[_LOOSE0 + r] = loose[r] * _QUARTER
    for r in range(_R):
        row[_RGATH0 + r] = gath[r] * _QUARTER
    for r in range(_R):
        row[_SEEN0 + r] = seen[r] * _QUARTER
    for r in range(_R):                                  # unseen by me = 4 - seen - my hand
        row[_UNSEEN0 + r] = (_COPIES - seen[r] - hand[r]) * _QUARTER
    t = seat                                             # the seat k places to my left
    for k in range(n):
        row[_HS0 + k] = _HAND_SIZE[hsz[t]]
        top = tops[t]
        if top >= 0:
            row[_TOP0 + k * _R + top % _R] = 1.0
            row[_PSIZE0 + k] = _SIZE[sizes[t]]
            row[_PPTS0 + k] = _POINTS[pts[t]]
            base_ranks = _PRANKS0 + k * _R
            for r in range(_R):
                row[base_ranks + r] = piles[t, r] * _QUARTER
        if taken[t]:
            row[_RTAKEN0 + k] = 1.0
        t += 1
        if t == n:
            t = 0
    if run_active[b]:
        row[_RACT0] = 1.0
        row[_RSTART0 + run_start[b]] = 1.0
        row[_RRANK0 + run_rank[b]] = 1.0
        rn = run_next[b]
        if rn >= 0:
            row[_RNEXT0 + rn] = 1.0
        else:                                            # closed by the Ace after the Rey (R2)
            row[_RCLOSED0] = 1.0
        row[_RSIZE0] = _SIZE[run_size[b]]
        row[_RPTS0] = _POINTS[run_pts[b]]
    row[_DECK0] = _DECK[deck_left[b]]



# ---- batch drivers ---------------------------------------------------------------------------------
# The engine keeps the legal mask of every game in ``masks`` int8 (B, 1, 27) (row b: :func:`mask_game`
# of game b): every driver that changes a game writes its row again, so a step checks its actions
# against it and the mask of the whole batch is read, not computed.
@njit_inline
def first_illegal(games, actions, masks, lo, hi):
    """The first position k in ``lo..hi-1`` whose action ``actions[k, 0]`` is outside 0..26 or
    not in the mask row of its game ``games[k]``, else -1 (the drivers' check before any change)."""
    for k in range(lo, hi):
        a = actions[k, 0]
        if a < 0 or a >= NUM_ACTIONS or masks[games[k], 0, a] == 0:
            return k
    return -1


@njit
def refresh_masks(hand_cnt, loose_cnt, pile_top, run_next, run_active, current, terminal, games, rules, masks):
    """``masks[b, 0]`` = :func:`mask_game` of game b, for every b in ``games``."""
    for k in range(games.shape[0]):
        b = games[k]
        mask_game(hand_cnt, loose_cnt, pile_top, run_next, run_active, current, terminal, b, rules, masks[b, 0])


@njit
def step_batch(deck, deck_left, hand_cards, hand_cnt, hand_size, hand_total, loose_cnt, pile_cnt, pile_top, pile_size,
               pile_pts, seen_cnt, run_cnt, run_card, run_start, run_rank, run_next, run_active, run_size, run_pts,
               run_taken, current, last_runner, terminal, decisions, games, actions, rules, masks, ended):
    """:func:`step_game` of game ``games[k]`` (distinct) with ``actions[k, 0]`` for every k, then
    its mask row again; ``ended[k]`` (bool (G,)) whether it ended. Every action is checked against
    ``masks`` first: if one is illegal (or outside 0..26) nothing changes and its position k is
    returned; else ``-1 - e``, e the number of games that ended."""
    k = first_illegal(games, actions, masks, 0, games.shape[0])
    if k >= 0:
        return k
    over = 0
    for k in range(games.shape[0]):
        b = games[k]
        e = step_game(deck, deck_left, hand_cards, hand_cnt, hand_size, hand_total, loose_cnt, pile_cnt, pile_top,
                      pile_size, pile_pts, seen_cnt, run_cnt, run_card, run_start, run_rank, run_next, run_active,
                      run_size, run_pts, run_taken, current, last_runner, terminal, decisions, b, actions[k, 0], rules)
        ended[k] = e != 0
        over += e
        mask_game(hand_cnt, loose_cnt, pile_top, run_next, run_active, current, terminal, b, rules, masks[b, 0])
    return -1 - over


#: The card ids in order (what a deal shuffles: ``batched._CARD_IDS``) and the stream of a deal
#: (:func:`hod.core.deal.shuffled`'s default, 0), as deal's kernels take them (uint64).
_CARD_IDS = np.arange(DECK_SIZE, dtype=np.int8)
_DEAL_STREAM = np.uint64(0)
_U64_0, _U64_8 = np.uint64(0), np.uint64(8)


@njit_inline
def next_game_seed(deck, b, nums):
    """The seed of the game that follows game ``b`` in its row under an auto-reset step: a hash
    of its deck order alone (``deck[b]``, 40 card ids), so that the games a row plays one after
    another depend on its first deal only (not on the actions played, the other rows, nor how
    the batch is split over threads). The 40 cards are packed 8 to a uint64 word; the hash
    starts at 0 and each word w moves it to number 0 of stream w of the hash so far
    (:func:`hod.core.deal.stream_numbers`' counter-based SplitMix64, ``numbers_into``).
    ``nums`` uint64 (>= 1,) scratch. Returns a uint64 game seed."""
    h = _U64_0
    for w in range(_DECK_SIZE // 8):
        x = _U64_0
        for j in range(8):
            x = (x << _U64_8) | np.uint64(deck[b, 8 * w + j])
        numbers_into(h, x, nums[:1])
        h = nums[0]
    return h


@_njit(cache=CACHED)
def next_seeds(deck, games, out):
    """``out[k]`` (uint64 (G,)) = :func:`next_game_seed` of game ``games[k]``."""
    nums = np.empty(1, np.uint64)
    for k in range(games.shape[0]):
        out[k] = next_game_seed(deck, games[k], nums)


@njit
def step_batch_auto(deck, deck_left, hand_cards, hand_cnt, hand_size, hand_total, loose_cnt, pile_cnt, pile_top,
                    pile_size, pile_pts, seen_cnt, run_cnt, run_card, run_start, run_rank, run_next, run_active,
                    run_size, run_pts, run_taken, current, last_runner, terminal, decisions, games, actions, rules,
                    masks, ended, final, nums, obs):
    """:func:`step_batch` with every game that ends dealt again at once (an auto-reset step):
    after :func:`step_game` of game ``b = games[k]``, if it ended, ``final[k]`` (int16 (G, n))
    gets its final points (``pile_pts[b]``, R8), then the game is dealt anew from the seed
    :func:`next_game_seed` of its deck (deck order: deal's ``shuffle_game``, stream 0, exactly
    ``reset(games=[b], seeds=[that seed])``; table: :func:`reset_game`); then its mask row.
    ``nums`` uint64 (40,) scratch. Rows of ``final`` of games that did not end are not written.
    ``obs`` float32 (G, 1, 192) or (0, 1, 192): when it has G rows, ``obs[k, 0]`` also gets
    :func:`observe_game` of the seat to act in game ``b`` after its step (and re-deal), while the
    game is in the cache (what :func:`observe_batch` with seat -1 writes); with 0 rows nothing.
    Every action is checked first; returns as :func:`step_batch` (an illegal action's position,
    nothing changed; else ``-1 - e``)."""
    k = first_illegal(games, actions, masks, 0, games.shape[0])
    if k >= 0:
        return k
    n = hand_cnt.shape[1]
    look = obs.shape[0] > 0
    over = 0
    for k in range(games.shape[0]):
        b = games[k]
        e = step_game(deck, deck_left, hand_cards, hand_cnt, hand_size, hand_total, loose_cnt, pile_cnt, pile_top,
                      pile_size, pile_pts, seen_cnt, run_cnt, run_card, run_start, run_rank, run_next, run_active,
                      run_size, run_pts, run_taken, current, last_runner, terminal, decisions, b, actions[k, 0], rules)
        ended[k] = e != 0
        if e != 0:
            over += 1
            for i in range(n):
                final[k, i] = pile_pts[b, i]
            seed = next_game_seed(deck, b, nums)
            shuffle_game(_CARD_IDS, seed, _DEAL_STREAM, nums, deck[b])
            reset_game(deck, deck_left, hand_cards, hand_cnt, hand_size, hand_total, loose_cnt, pile_cnt, pile_top,
                       pile_size, pile_pts, seen_cnt, run_cnt, run_card, run_start, run_rank, run_next, run_active,
                       run_size, run_pts, run_taken, current, last_runner, terminal, decisions, b)
        mask_game(hand_cnt, loose_cnt, pile_top, run_next, run_active, current, terminal, b, rules, masks[b, 0])
        if look:
            observe_game(deck_left, hand_cnt, hand_size, loose_cnt, pile_cnt, pile_top, pile_size, pile_pts, seen_cnt,
                         run_cnt, run_start, run_rank, run_next, run_active, run_size, run_pts, run_taken, current,
                         last_runner, terminal, b, current[b], obs[k, 0])
    return -1 - over


@njit
def reset_batch(deck, deck_left, hand_cards, hand_cnt, hand_size, hand_total, loose_cnt, pile_cnt, pile_top, pile_size,
                pile_pts, seen_cnt, run_cnt, run_card, run_start, run_rank, run_next, run_active, run_size, run_pts,
                run_taken, current, last_runner, terminal, decisions, games, rules, masks):
    """:func:`reset_game` of every game ``games[k]`` (their decks already written), and its mask row."""
    for k in range(games.shape[0]):
        b = games[k]
        reset_game(deck, deck_left, hand_cards, hand_cnt, hand_size, hand_total, loose_cnt, pile_cnt, pile_top,
                   pile_size, pile_pts, seen_cnt, run_cnt, run_card, run_start, run_rank, run_next, run_active, run_size,
                   run_pts, run_taken, current, last_runner, terminal, decisions, b)
        mask_game(hand_cnt, loose_cnt, pile_top, run_next, run_active, current, terminal, b, rules, masks[b, 0])


@njit
def observe_batch(deck_left, hand_cnt, hand_size, loose_cnt, pile_cnt, pile_top, pile_size, pile_pts, seen_cnt, run_cnt,
                  run_start, run_rank, run_next, run_active, run_size, run_pts, run_taken, current, last_runner,
                  terminal, games, seats, out):
    """``out[k, j]`` (float32 (G, S, 192)) = :func:`observe_game` of seat ``seats[j]`` in game
    ``games[k]``; a seat of -1 is the seat to act of each game."""
    for k in range(games.shape[0]):
        b = games[k]
        for j in range(seats.shape[0]):
            seat = seats[j]
            if seat < 0:
                seat = current[b]
            observe_game(deck_left, hand_cnt, hand_size, loose_cnt, pile_cnt, pile_top, pile_size, pile_pts, seen_cnt,
                         run_cnt, run_start, run_rank, run_next, run_active, run_size, run_pts, run_taken, current,
                         last_runner, terminal, b, seat, out[k, j])


# ---- parallel batch drivers: numba prange over chunks of games, each chunk run by the serial driver
# above (one body per rule); the engine takes them only when asked
# (robada_env.rules.batched.BatchedRobada.parallel_min_batch) -------------------------------------
#: Games per task of the parallel drivers.
PAR_CHUNK = 256


@_njit(cache=CACHED, parallel=True)
def _first_illegal_par(games, actions, masks):
    """:func:`first_illegal` over all G positions, each chunk of games checked by the thread that
    steps it (its mask rows are in that core's cache; one thread checking the whole batch read
    half of them from the other core's: the 2-thread step of 4096 games went 241 -> 221 us with
    this, p5 of 1,500 steps on the loaded 2-core machine)."""
    G = games.shape[0]
    first = np.empty((G + PAR_CHUNK - 1) // PAR_CHUNK, np.int64)
    for c in prange(first.shape[0]):
        first[c] = first_illegal(games, actions, masks, c * PAR_CHUNK, min(G, (c + 1) * PAR_CHUNK))
    for c in range(first.shape[0]):
        if first[c] >= 0:
            return first[c]
    return -1


@_njit(cache=CACHED, parallel=True)
def step_batch_par(deck, deck_left, hand_cards, hand_cnt, hand_size, hand_total, loose_cnt, pile_cnt, pile_top,
                   pile_size, pile_pts, seen_cnt, run_cnt, run_card, run_start, run_rank, run_next, run_active,
                   run_size, run_pts, run_taken, current, last_runner, terminal, decisions, games, actions, rules,
                   masks, ended):
    """:func:`step_batch` with the games split over numba's threads (each task runs the serial
    driver on its chunk of games; the games are independent): every action is checked first, so
    an illegal one still changes nothing; the same results and return value."""
    G = games.shape[0]
    k = _first_illegal_par(games, actions, masks)
    if k >= 0:
        return k
    over = np.zeros((G + PAR_CHUNK - 1) // PAR_CHUNK, np.int64)
    for c in prange(over.shape[0]):
        lo, hi = c * PAR_CHUNK, min(G, (c + 1) * PAR_CHUNK)
        over[c] = -1 - step_batch(deck, deck_left, hand_cards, hand_cnt, hand_size, hand_total, loose_cnt, pile_cnt,
                                  pile_top, pile_size, pile_pts, seen_cnt, run_cnt, run_card, run_start, run_rank,
                                  run_next, run_active, run_size, run_pts, run_taken, current, last_runner, terminal,
                                  decisions, games[lo:hi], actions[lo:hi], rules, masks, ended[lo:hi])
    return -1 - over.sum()


@_njit(cache=CACHED, parallel=True)
def step_batch_auto_par(deck, deck_left, hand_cards, hand_cnt, hand_size, hand_total, loose_cnt, pile_cnt, pile_top,
                        pile_size, pile_pts, seen_cnt, run_cnt, run_card, run_start, run_rank, run_next, run_active,
                        run_size, run_pts, run_taken, current, last_runner, terminal, decisions, games, actions, rules,
                        masks, ended, final, nums, obs):
    """:func:`step_batch_auto` with the games split over numba's threads: each task runs the
    serial auto-reset driver on its chunk of games (its own row of ``nums``, uint64 (C, 40), C
    >= the number of chunks), so the finished games of a chunk are dealt again inside that
    task (and, when ``obs`` has G rows, observed there: ``obs[lo:hi]``; with 0 rows every slice
    has 0 rows). A game's next deal depends on its deck alone (:func:`next_game_seed`), so the games
    are those of the serial driver bit for bit, whatever the split. Every action is checked
    first; the same return value."""
    G = games.shape[0]
    k = _first_illegal_par(games, actions, masks)
    if k >= 0:
        return k
    over = np.zeros((G + PAR_CHUNK - 1) // PAR_CHUNK, np.int64)
    for c in prange(over.shape[0]):
        lo, hi = c * PAR_CHUNK, min(G, (c + 1) * PAR_CHUNK)
        over[c] = -1 - step_batch_auto(deck, deck_left, hand_cards, hand_cnt, hand_size, hand_total, loose_cnt,
                                       pile_cnt, pile_top, pile_size, pile_pts, seen_cnt, run_cnt, run_card,
                                       run_start, run_rank, run_next, run_active, run_size, run_pts, run_taken,
                                       current, last_runner, terminal, decisions, games[lo:hi], actions[lo:hi], rules,
                                       masks, ended[lo:hi], final[lo:hi], nums[c], obs[lo:hi])
    return -1 - over.sum()


@_njit(cache=CACHED, parallel=True)
def reset_batch_par(deck, deck_left, hand_cards, hand_cnt, hand_size, hand_total, loose_cnt, pile_cnt, pile_top,
                    pile_size, pile_pts, seen_cnt, run_cnt, run_card, run_start, run_rank, run_next, run_active,
                    run_size, run_pts, run_taken, current, last_runner, terminal, decisions, games, rules, masks):
    """:func:`reset_batch` with the games split over numba's threads (the serial driver per chunk)."""
    G = games.shape[0]
    for c in prange((G + PAR_CHUNK - 1) // PAR_CHUNK):
        lo, hi = c * PAR_CHUNK, min(G, (c + 1) * PAR_CHUNK)
        reset_batch(deck, deck_left, hand_cards, hand_cnt, hand_size, hand_total, loose_cnt, pile_cnt, pile_top,
                    pile_size, pile_pts, seen_cnt, run_cnt, run_card, run_start, run_rank, run_next, run_active,
                    run_size, run_pts, run_taken, current, last_runner, terminal, decisions, games[lo:hi], rules,
                    masks)


@_njit(cache=CACHED, parallel=True)
def observe_batch_par(deck_left, hand_cnt, hand_size, loose_cnt, pile_cnt, pile_top, pile_size, pile_pts, seen_cnt,
                      run_cnt, run_start, run_rank, run_next, run_active, run_size, run_pts, run_taken, current,
                      last_runner, terminal, games, seats, out):
    """:func:`observe_batch` with the games split over numba's threads (each task runs the serial
    driver on its chunk)."""
    G = games.shape[0]
    for c in prange((G + PAR_CHUNK - 1) // PAR_CHUNK):
        lo, hi = c * PAR_CHUNK, min(G, (c + 1) * PAR_CHUNK)
        observe_batch(deck_left, hand_cnt, hand_size, loose_cnt, pile_cnt, pile_top, pile_size, pile_pts, seen_cnt,
                      run_cnt, run_start, run_rank, run_next, run_active, run_size, run_pts, run_taken, current,
                      last_runner, terminal, games[lo:hi], seats, out[lo:hi])


# ---- one game packed in three flat buffers (the single-game engine, robada_env.rules.engine) --------
# A numba call costs about 0.2 us per array argument: the batch drivers' 25 arrays make a call of
# a one-game record cost more than the game's step. The single-game engine keeps its record as
# three flat buffers instead (int8, int16, bool: every field of BatchedRobadaState, batch 1, C
# order, at the offsets ``lay`` gives in the record's field order, ``lay[-1]`` the player count),
# and these entry points cut the field arrays out of them (views, no copy) and run the same
# per-game kernels the batch drivers run.
#: The fields held in the int16 and in the bool buffer (the others are int8).
WIDE_FIELDS = ("pile_pts", "run_pts", "decisions")
FLAG_FIELDS = ("run_active", "run_taken", "terminal")


@njit_inline
def unpack(b8, b16, bb, lay):
    """The 25 field arrays (batch 1, the record's shapes) of a game packed by ``lay``."""
    n = lay[25]
    return (b8[lay[0]:lay[0] + _DECK_SIZE].reshape((1, _DECK_SIZE)), b8[lay[1]:lay[1] + 1],
            b8[lay[2]:lay[2] + n * _DEAL].reshape((1, n, _DEAL)), b8[lay[3]:lay[3] + n * _R].reshape((1, n, _R)),
            b8[lay[4]:lay[4] + n].reshape((1, n)), b8[lay[5]:lay[5] + 1], b8[lay[6]:lay[6] + _R].reshape((1, _R)),
            b8[lay[7]:lay[7] + n * _R].reshape((1, n, _R)), b8[lay[8]:lay[8] + n].reshape((1, n)),
            b8[lay[9]:lay[9] + n].reshape((1, n)), b16[lay[10]:lay[10] + n].reshape((1, n)),
            b8[lay[11]:lay[11] + _R].reshape((1, _R)), b8[lay[12]:lay[12] + _R].reshape((1, _R)),
            b8[lay[13]:lay[13] + 1], b8[lay[14]:lay[14] + 1], b8[lay[15]:lay[15] + 1], b8[lay[16]:lay[16] + 1],
            bb[lay[17]:lay[17] + 1], b8[lay[18]:lay[18] + 1], b16[lay[19]:lay[19] + 1],
            bb[lay[20]:lay[20] + n].reshape((1, n)), b8[lay[21]:lay[21] + 1], b8[lay[22]:lay[22] + 1],
            bb[lay[23]:lay[23] + 1], b16[lay[24]:lay[24] + 1])


@njit
def step_one(b8, b16, bb, lay, a, rules, mask):
    """:func:`step_game` of the packed game with action ``a``, then its mask (int8 (1, 1, 27))
    again. Returns -1 (nothing changed) if ``a`` is outside the mask, else 1 if the game ended."""
    if a < 0 or a >= NUM_ACTIONS or mask[0, 0, a] == 0:
        return -1
    (deck, deck_left, hand_cards, hand_cnt, hand_size, hand_total, loose_cnt, pile_cnt, pile_top, pile_size, pile_pts,
     seen_cnt, run_cnt, run_card, run_start, run_rank, run_next, run_active, run_size, run_pts, run_taken, current,
     last_runner, terminal, decisions) = unpack(b8, b16, bb, lay)
    e = step_game(deck, deck_left, hand_cards, hand_cnt, hand_size, hand_total, loose_cnt, pile_cnt, pile_top, pile_size,
                  pile_pts, seen_cnt, run_cnt, run_card, run_start, run_rank, run_next, run_active, run_size, run_pts,
                  run_taken, current, last_runner, terminal, decisions, 0, a, rules)
    mask_game(hand_cnt, loose_cnt, pile_top, run_next, run_active, current, terminal, 0, rules, mask[0, 0])
    return e


@njit
def start_one(b8, b16, bb, lay, how, rules, mask):
    """The packed game's table laid out and its mask: ``how`` 0 = :func:`reset_game` (a new game
    from the deck order in its ``deck``), 1 = :func:`end_of_turn` (a position laid out by hand),
    2 = the mask alone. Returns 1 if the game is over."""
    (deck, deck_left, hand_cards, hand_cnt, hand_size, hand_total, loose_cnt, pile_cnt, pile_top, pile_size, pile_pts,
     seen_cnt, run_cnt, run_card, run_start, run_rank, run_next, run_active, run_size, run_pts, run_taken, current,
     last_runner, terminal, decisions) = unpack(b8, b16, bb, lay)
    if how == 0:
        reset_game(deck, deck_left, hand_cards, hand_cnt, hand_size, hand_total, loose_cnt, pile_cnt, pile_top,
                   pile_size, pile_pts, seen_cnt, run_cnt, run_card, run_start, run_rank, run_next, run_active, run_size,
                   run_pts, run_taken, current, last_runner, terminal, decisions, 0)
    elif how == 1:
        end_of_turn(deck, deck_left, hand_cards, hand_cnt, hand_size, hand_total, loose_cnt, pile_cnt, pile_size,
                    pile_pts, current, last_runner, terminal, 0, rules)
    mask_game(hand_cnt, loose_cnt, pile_top, run_next, run_active, current, terminal, 0, rules, mask[0, 0])
    return 1 if terminal[0] else 0


@njit
def observe_one(b8, b16, bb, lay, seats, out):
    """``out[j]`` (float32 (S, 192)) = :func:`observe_game` of seat ``seats[j]`` in the packed game."""
    (deck, deck_left, hand_cards, hand_cnt, hand_size, hand_total, loose_cnt, pile_cnt, pile_top, pile_size, pile_pts,
     seen_cnt, run_cnt, run_card, run_start, run_rank, run_next, run_active, run_size, run_pts, run_taken, current,
     last_runner, terminal, decisions) = unpack(b8, b16, bb, lay)
    for j in range(seats.shape[0]):
        observe_game(deck_left, hand_cnt, hand_size, loose_cnt, pile_cnt, pile_top, pile_size, pile_pts, seen_cnt,
                     run_cnt, run_start, run_rank, run_next, run_active, run_size, run_pts, run_taken, current,
                     last_runner, terminal, 0, seats[j], out[j])


@njit
def resample_one(b8, b16, bb, lay, seat, perm, rules, mask, pool):
    """The packed game's hidden cards for ``seat`` dealt again (R9, ``engine.sample_consistent_state``):
    the pool (the other seats' hand cards in seat and slot order, then the deck still to deal,
    next first) becomes ``pool[perm]``, written back into the same places (hand slots, deck), the
    hands' rank counts recounted and the mask written again. ``perm`` int64 (P,): a permutation
    of the pool's P cards; ``pool`` int8 (40,) scratch space."""
    (deck, deck_left, hand_cards, hand_cnt, hand_size, hand_total, loose_cnt, pile_cnt, pile_top, pile_size, pile_pts,
     seen_cnt, run_cnt, run_card, run_start, run_rank, run_next, run_active, run_size, run_pts, run_taken, current,
     last_runner, terminal, decisions) = unpack(b8, b16, bb, lay)
    n = hand_cnt.shape[1]
    first = _DECK_SIZE - deck_left[0]
    p = perm.shape[0]
    k = 0
    for i in range(n):
        if i != seat:
            for j in range(_DEAL):
                if hand_cards[0, i, j] >= 0:
                    pool[k] = hand_cards[0, i, j]
                    k += 1
    for q in range(first, _DECK_SIZE):
        pool[k] = deck[0, q]
        k += 1
    k = 0
    for i in range(n):
        if i != seat:
            for r in range(_R):
                hand_cnt[0, i, r] = 0
            for j in range(_DEAL):
                if hand_cards[0, i, j] >= 0:
                    c = pool[perm[k]]
                    hand_cards[0, i, j] = c
                    hand_cnt[0, i, c % _R] += 1
                    k += 1
    for q in range(first, _DECK_SIZE):
        deck[0, q] = pool[perm[k]]
        k += 1
    mask_game(hand_cnt, loose_cnt, pile_top, run_next, run_active, current, terminal, 0, rules, mask[0, 0])
    return p


# ---- helpers for per-action summaries (robada_env.rules.action_features) ---------------------------
@njit_inline
def walk_gain(need, loose, tops, pts, runner, rules):
    """Follow a run that needs rank ``need`` (-1: closed) to its end, every step the rules allow
    (R2, R3): :func:`walk` with the piles' points as their values, the runner's own pile valued 0
    (taking it gains the runner nothing): each step taps a loose card of the needed rank when there
    is one (R3), else takes the takeable pile (showing that rank; the runner's own only with
    ``may_take_own_pile``, R3) of highest value, the first in seat order on a tie; with none the
    run stops. The next rank after each step is ``rules[R_AFTER_STEP + r]`` (R2).

    Args:
        need: int, the rank needed next, or -1.
        loose: int64 (10,) loose cards per rank; the tapped ones are removed (in place).
        tops: int64 (n,) visible rank of each pile (any frame of seats), -1 for an empty pile;
            taken piles are set to -1 (in place).
        pts: int64 (n,) points of each pile (read only).
        runner: the runner's seat in the frame of ``tops``.
        rules: int8 (22,), :func:`rules_array`.

    Returns:
        ``(gain, steps, taken, need)``: the points the walk adds to the runner (tapped cards and
        the piles of other seats), the number of steps, a bit mask of the seats whose pile was
        taken (bit k: seat k), and the rank the run would need next when it stopped (-1: closed).
    """
    path, steps, end = walk(need, loose, tops, pts, runner, 0, rules[R_TAKE_OWN] != 0,
                            rules[R_AFTER_STEP:R_AFTER_STEP + _R])
    gain = 0
    taken = 0
    for i in range(steps):
        code = (path >> (runs.STEP_BITS * i)) & runs.STEP_MASK
        if code == 0:                                    # a tapped loose card
            gain += _PTS[need]
        else:                                            # a pile: another seat's adds its points
            k = code - 1
            if k != runner:
                gain += pts[k]
            taken |= 1 << k
        need = rules[R_AFTER_STEP + need]
    return gain, steps, taken, end
