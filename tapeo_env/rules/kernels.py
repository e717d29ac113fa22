"""Tapeo's rules as compiled kernels (numba ``@njit(cache=True)``) over the arrays of the state
record :class:`tapeo_env.rules.batched.BatchedState`, one game per kernel call, and batch
drivers that loop over the games a call names.

What is here (tapeo.txt; RULINGS T2-T10): a pick of every seat (reveal, the Freeloaders' steals
T6, passing left, the automatic last tapa T7), the round's scoring (tortilla pairs, croquetas,
ham majorities T2/T3, prawns and bread T4, peppers T5), the kept churros (T8), the end churros
(T9), the winners (T10), and the observation of one seat (:data:`tapeo_env.rules.observation.LAYOUT`,
every entry the same float32 as :func:`tapeo_env.rules.observation.encode`: counts are
``count * (1 / deck count)`` in float64 rounded once to float32, churros ``/ 30``, scores
``/ 100``). Deals are not here: the cards stay :func:`hod.core.deal.shuffled_prefix` (its own kernels);
:func:`deal_counts` writes the dealt cards into the record as counts between kernel calls.

Drivers: serial ones (:func:`step_batch`, :func:`observe_batch`, ...) and parallel ones
(:func:`step_batch_par`, :func:`observe_batch_par`: numba ``prange`` over chunks of
:data:`PAR_CHUNK` games, the same results), which the engine takes only when asked
(:attr:`tapeo_env.rules.batched.BatchedTapeo.parallel_min_batch`).

Layout of the arrays (B games, n seats, K = 10 kinds, R rounds): ``hands`` uint8 (B, n, K) by
the seat that holds the hand now, ``bars`` uint8 (B, n, K), ``kept`` uint8 (B, n) churros kept,
``round_scores`` int16 (B, R, n), ``final_scores`` int16 (B, n), ``winners`` bool (B, n),
``rnd`` / ``pick`` int8 (B,). ``games`` are intp indices, ``picks`` int64 (G, n) kinds.

The scoring numbers come from :class:`tapeo_env.rules.scoring.Rulings` through :func:`rulings_array`
(one source for the numbers). These kernels are the only implementation of the rules: the
scalar API (:mod:`tapeo_env.rules.engine`, :mod:`~tapeo_env.rules.observation`) calls the batch
drivers on its one-game record (the same compiled code as the batched engine, so nothing more
to compile), :mod:`~tapeo_env.rules.scoring` the scoring kernels (and :func:`rule_points`, at the
end of this module); the numpy rules they replaced are the oracles under ``tests/oracles/``.

Compilation: on first use in a process each kernel is compiled once, or loaded from numba's
on-disk cache (``cache=True``: ``NUMBA_CACHE_DIR`` if set, else ``__pycache__`` beside this file,
else numba's per-user cache folder, else a private folder under the temporary directory:
:func:`hod.core.jit.cache_kernels`), so later processes, the tournament's spawned workers
included, load them instead of compiling. See the README's "Times" for the cold and warm figures.
"""
from __future__ import annotations

import numpy as np

from hod.core.jit import cache_kernels, import_numba, prepare_target

import_numba()          # numba without the scipy and yaml imports of its start (hod.core.jit)
from numba import njit as _njit, prange  # noqa: E402
from .cards import BREAD, CHURRO, CROQUETA, FREELOADER, HAM_SLICES, MAX_HAND_SIZE, MAX_PLAYERS, MIN_PLAYERS, NUM_KINDS, PEPPER, PRAWNS, TORTILLA
from .engine import CHURROS_KEPT_ACROSS_ROUNDS, FREELOADER_STEALS_FREELOADER, LAST_TAPA_AUTOMATIC
from .observation import LAYOUT, SCORE_SCALE
from .scoring import Rulings

#: Whether the kernels are cached on disk (:func:`hod.core.jit.cache_kernels`: True but where no
#: cache folder can be written).
CACHED = cache_kernels(__file__)
prepare_target()        # numba's target without its scipy BLAS probe (hod.core.jit)


def njit(fn):
    """numba's ``njit`` with this module's cache setting."""
    return _njit(cache=CACHED)(fn)


_K = NUM_KINDS
_HAM = tuple(int(x) for x in HAM_SLICES)
_SL = LAYOUT.offsets
_NP0, _RD0, _PK0, _HS0 = (_SL[p].start for p in ("num_players", "round", "pick", "hand_size"))
_H0, _B0, _C0, _S0 = (_SL[p].start for p in ("hand", "bars", "churros", "scores"))
_KH0, _KF0, _U0 = (_SL[p].start for p in ("known_hands", "known_flags", "unseen"))
#: Seats of the seat-relative pieces (padded to the most players) and known-hand flags.
_C0_PAD = _SL["churros"].stop - _SL["churros"].start
_KF_PAD = _SL["known_flags"].stop - _SL["known_flags"].start
_PICK_DIV = float(MAX_HAND_SIZE - 1)
_SIZE_DIV = float(MAX_HAND_SIZE)
_CHURRO_DIV = 30.0
_SCORE_DIV = float(SCORE_SCALE)
_STEAL_FREELOADER = bool(FREELOADER_STEALS_FREELOADER)
_LAST_AUTO = bool(LAST_TAPA_AUTOMATIC)
_KEEP_CHURROS = bool(CHURROS_KEPT_ACROSS_ROUNDS)
_OBS = LAYOUT.size
#: Row of :func:`observe_rows`' ``cum`` scratch holding the deck minus every bar's tapas.
_FREE = 2 * MAX_PLAYERS + 1
#: The observation's float32 values of churros held (``c / 30``, c = 0..511), of points (``x /
#: 100``, x = -_SCORE_OFF.._SCORE_OFF - 1, at index x + _SCORE_OFF), of the pick (``p / (MAX_HAND_SIZE
#: - 1)``) and of the hand size (``h / MAX_HAND_SIZE``; p, h = 0..255: a Config's hand size may
#: exceed MAX_HAND_SIZE, up to 20), each computed in float64 and rounded once
#: (the same float32 as dividing in the kernel; frozen into the compiled kernels as constants).
_SCORE_OFF = 4096
_CHURRO_T = (np.arange(512, dtype=np.float64) / _CHURRO_DIV).astype(np.float32)
_SCORE_T = (np.arange(-_SCORE_OFF, _SCORE_OFF, dtype=np.float64) / _SCORE_DIV).astype(np.float32)
_PICK_T = (np.arange(256, dtype=np.float64) / _PICK_DIV).astype(np.float32)
_SIZE_T = (np.arange(256, dtype=np.float64) / _SIZE_DIV).astype(np.float32)

#: Indices into :func:`rulings_array`.
(R_TORTILLA, R_HAM_FIRST, R_HAM_SECOND, R_PRAWN, R_BREAD, R_PEPPER, R_HOT_MIN, R_HOT_PENALTY,
 R_CHURRO_MOST, R_CHURRO_FEWEST, R_TWO_FEWEST, R_TIE_CHURROS) = range(12)

#: What :func:`step_batch` writes per game.
CONTINUES, ROUND_OVER, GAME_OVER = 0, 1, 2


def rulings_array(rulings: Rulings) -> tuple[np.ndarray, np.ndarray]:
    """The numbers of ``rulings`` as the kernels take them: ``(int64 (12,) by the ``R_*``
    indices, int64 croqueta table)``."""
    r = np.array([rulings.tortilla_pair, rulings.ham_first, rulings.ham_second, rulings.prawn,
                  rulings.bread_dip, rulings.pepper, rulings.hot_pepper_min, rulings.hot_pepper_penalty,
                  rulings.churro_most, rulings.churro_fewest, int(rulings.two_player_fewest_loses),
                  int(rulings.tie_break_by_churros)], np.int64)
    return r, np.asarray(rulings.croqueta_table, np.int64)


# ---- scoring (one game) -----------------------------------------------------------------------------
@njit
def round_points(bars, rul, croq, out):
    """Round score of each seat (tapeo.txt 'How each tapa scores', T2-T5) into ``out`` int (n,).

    ``bars`` uint8 (n, K): the bars at the end of the round (churros and Freeloaders score nothing)."""
    n = bars.shape[0]
    slices = np.zeros(n, np.int64)
    top_ham = 0
    top_pepper = 0
    for i in range(n):
        t, c, p, b, pe = (np.int64(bars[i, TORTILLA]), np.int64(bars[i, CROQUETA]), np.int64(bars[i, PRAWNS]),
                          np.int64(bars[i, BREAD]), np.int64(bars[i, PEPPER]))
        pts = rul[R_TORTILLA] * (t // 2) + croq[min(c, croq.shape[0] - 1)]
        pts += rul[R_PRAWN] * p + rul[R_BREAD] * min(p, b)
        pts += rul[R_PEPPER] * pe
        out[i] = pts
        s = 0
        for k in range(_K):
            s += _HAM[k] * np.int64(bars[i, k])
        slices[i] = s
        top_ham = max(top_ham, s)
        top_pepper = max(top_pepper, pe)
    if top_pepper >= rul[R_HOT_MIN]:                     # T5: every seat at the maximum loses
        for i in range(n):
            if np.int64(bars[i, PEPPER]) == top_pepper:
                out[i] -= rul[R_HOT_PENALTY]
    if top_ham > 0:                                      # T2, T3: positive slices only
        leaders = 0
        for i in range(n):
            leaders += slices[i] == top_ham
        for i in range(n):
            if slices[i] == top_ham:
                out[i] += rul[R_HAM_FIRST] // leaders
        if leaders == 1:
            second = 0
            for i in range(n):
                if slices[i] < top_ham and slices[i] > second:
                    second = slices[i]
            if second > 0:
                runners = 0
                for i in range(n):
                    runners += slices[i] == second
                for i in range(n):
                    if slices[i] == second:
                        out[i] += rul[R_HAM_SECOND] // runners


@njit
def churro_points(kept, rul, out):
    """End churros (T9) into ``out`` int (n,): the most share ``churro_most``, the fewest share the
    loss of ``churro_fewest`` (not with 2 players unless ``two_player_fewest_loses``)."""
    n = kept.shape[0]
    hi = np.int64(kept[0])
    lo = hi
    for i in range(n):
        hi = max(hi, np.int64(kept[i]))
        lo = min(lo, np.int64(kept[i]))
    most = 0
    fewest = 0
    for i in range(n):
        most += np.int64(kept[i]) == hi
        fewest += np.int64(kept[i]) == lo
    for i in range(n):
        out[i] = 0
        if np.int64(kept[i]) == hi:
            out[i] += rul[R_CHURRO_MOST] // most
    if n > 2 or rul[R_TWO_FEWEST] != 0:
        for i in range(n):
            if np.int64(kept[i]) == lo:
                out[i] -= rul[R_CHURRO_FEWEST] // fewest


@njit
def winning_seats(scores, churros, rul, out):
    """T10 into ``out`` bool (n,): the most points, then (``tie_break_by_churros``) the most
    churros among them; a remaining tie is a shared win."""
    n = scores.shape[0]
    best = scores[0]
    for i in range(n):
        best = max(best, scores[i])
    most = np.int64(-1)
    for i in range(n):
        if scores[i] == best:
            most = max(most, np.int64(churros[i]))
    for i in range(n):
        out[i] = scores[i] == best and (rul[R_TIE_CHURROS] == 0 or np.int64(churros[i]) == most)


# ---- a pick (one game) ------------------------------------------------------------------------------
@njit
def _reveal(hands, bars, kinds):
    """Every seat's tapa from its hand to its bar, then the Freeloaders steal what the left
    neighbour revealed (T6), then every hand passes left (seat i + 1 holds what seat i held)."""
    n = hands.shape[0]
    for i in range(n):
        hands[i, kinds[i]] -= 1
        bars[i, kinds[i]] += 1
    for i in range(n):
        if kinds[i] == FREELOADER:
            j = (i + 1) % n
            loot = kinds[j]
            if _STEAL_FREELOADER or loot != FREELOADER:
                bars[i, loot] += 1
                bars[j, loot] -= 1
    for k in range(_K):
        last = hands[n - 1, k]
        for i in range(n - 1, 0, -1):
            hands[i, k] = hands[i - 1, k]
        hands[0, k] = last


@njit
def step_game(hands, bars, kept, round_scores, final_scores, winners, rnd, pick, b, picks, hand_size,
              rul, croq):
    """One pick of every seat of game ``b`` (``picks`` int64 (n,), legal), then the automatic last
    tapa (T7) and, at the round's end, its scoring, the kept churros (T8) and at the game's end the
    end churros (T9), final scores and winners (T10). Returns :data:`CONTINUES`,
    :data:`ROUND_OVER` (deal the next round: bars and pick are cleared by the deal) or
    :data:`GAME_OVER` (bars and pick cleared)."""
    h = hands[b]
    br = bars[b]
    n = h.shape[0]
    _reveal(h, br, picks)
    pick[b] += 1
    if _LAST_AUTO and hand_size - pick[b] == 1:
        auto = np.empty(n, np.int64)
        for i in range(n):
            a = 0
            for k in range(_K):
                if h[i, k] > h[i, a]:
                    a = k
            auto[i] = a
        _reveal(h, br, auto)
        pick[b] += 1
    if pick[b] != hand_size:
        return CONTINUES
    r = rnd[b]
    pts = np.zeros(n, np.int64)
    round_points(br, rul, croq, pts)
    for i in range(n):
        round_scores[b, r, i] = pts[i]
        if _KEEP_CHURROS:
            kept[b, i] += br[i, CHURRO]
    rnd[b] = r + 1
    if r + 1 < round_scores.shape[1]:
        return ROUND_OVER
    br[:] = 0
    pick[b] = 0
    end = np.zeros(n, np.int64)
    churro_points(kept[b], rul, end)
    for i in range(n):
        total = np.int64(0)
        for q in range(round_scores.shape[1]):
            total += round_scores[b, q, i]
        end[i] += total
        final_scores[b, i] = end[i]
    winning_seats(end, kept[b], rul, winners[b])
    return GAME_OVER


# ---- observations (one game) ----------------------------------------------------------------------
def count_table(inv: np.ndarray) -> np.ndarray:
    """float32 (K, 256): ``count * inv[kind]`` in float64 rounded once to float32, for every
    count 0..255 (the observation's value of a count; ``inv`` = 1 / deck count, 0 for an absent
    kind)."""
    return (np.arange(256, dtype=np.float64)[None, :] * np.asarray(inv, np.float64)[:, None]).astype(np.float32)


@njit
def observe_game(hands, bars, kept, round_scores, rnd, pick, b, seats, hand_size, lut, inv, deck, out,
                 sbars, shands, churro_v, score_v, placed):
    """``out[j]`` (float32 (S, OBS_SIZE)) = ``observation.encode`` of seat ``seats[j]`` in game
    ``b`` (every entry written once). ``lut`` is :func:`count_table` of ``inv`` (1 / deck count);
    ``sbars``, ``shands`` float32 (n, K), ``churro_v``, ``score_v`` float32 (n,), ``placed`` int64
    (K,) are scratch space (:func:`observe_rows`)."""
    head, cum = observe_scratch()
    observe_rows(hands, bars, kept, round_scores, rnd, pick, b, seats, hand_size, lut, inv, deck, out,
                 sbars.reshape(sbars.size), shands.reshape(shands.size), churro_v, score_v, head, cum)


@njit
def observe_scratch():
    """Scratch space of :func:`observe_rows` besides the per-seat arrays: float32 (10,) (a row's
    first entries), int64 (2 * MAX_PLAYERS + 2, K) (running hand counts, deck minus the bars)."""
    return np.empty(_H0, np.float32), np.empty((_FREE + 1, _K), np.int64)


@njit
def observe_rows(hands, bars, kept, round_scores, rnd, pick, b, seats, hand_size, lut, inv, deck, out,
                 sb, sh, cv, sv, head, cum):
    """The observations of seats ``seats`` in game ``b`` (``observation.encode`` of each, every
    entry written once) into ``out[j]`` (float32 (S, OBS_SIZE)).

    Counts are ``lut[kind, count]`` (:func:`count_table`: ``count * (1 / deck count)`` in float64
    rounded once to float32; ``count * inv[kind]`` past the table), churros ``/ 30``, scores
    ``/ 100``, pick and hand size as the layout says (tables of those float32 values). Method: what
    every seat's row shares is computed once per game into the scratch arrays: ``sb``, ``sh``
    float32 (n * K,) the scaled bars and hands by seat, ``cv``, ``sv`` float32 (n,) churros and
    scores, ``head`` the row's first 10 entries (:func:`observe_scratch`); ``cum``
    holds the running count of each kind over the hands of seats 0..n-1 (the hands an observer
    knows are a window of it, wrapping round the table) and in row ``_FREE`` the deck minus every
    bar. Each row is then written front to back, its seat-relative pieces as two contiguous runs
    (seats ``seat..n-1``, then ``0..seat-1``)."""
    n = hands.shape[1]
    R = round_scores.shape[1]
    nb = n * _K
    r = rnd[b]
    over = r >= R
    p = np.int64(pick[b])
    kp = 0 if over else min(p, n - 1)
    for k in range(_K):
        cum[0, k] = 0
        cum[_FREE, k] = deck[k]                          # deck minus every bar's tapas
    for t in range(n):
        cv[t] = _CHURRO_T[np.int64(kept[b, t]) + np.int64(bars[b, t, CHURRO])]
        sc = np.int64(0)
        for q in range(R):
            sc += round_scores[b, q, t]
        sv[t] = _SCORE_T[sc + _SCORE_OFF] if -_SCORE_OFF <= sc < _SCORE_OFF else np.float32(sc / _SCORE_DIV)
        for k in range(_K):
            c = bars[b, t, k]
            cum[_FREE, k] -= np.int64(c)
            sb[t * _K + k] = lut[k, c]
            h = hands[b, t, k]
            sh[t * _K + k] = lut[k, h]
            cum[t + 1, k] = cum[t, k] + np.int64(h)
    for q in range(_PK0):                                # player count and round, one-hot; pick; hand size
        head[q] = 0.0
    head[_NP0 + n - MIN_PLAYERS] = 1.0
    head[_RD0 + min(min(r, R - 1), 2)] = 1.0
    left = hand_size - p
    head[_PK0] = 0.0 if over else (_PICK_T[p] if 0 <= p < 256 else np.float32(p / _PICK_DIV))
    head[_HS0] = 0.0 if over else (_SIZE_T[left] if 0 <= left < 256 else np.float32(left / _SIZE_DIV))
    known = 0 if over else kp + 1                        # hands the observer knows: its own, seat + 1 .. seat + kp
    for j in range(seats.shape[0]):
        seat = seats[j]
        row = out[j]
        for q in range(_H0):
            row[q] = head[q]
        if over:
            for q in range(_K):
                row[_H0 + q] = 0.0
        else:
            for q in range(_K):
                row[_H0 + q] = sh[seat * _K + q]
        a = (n - seat) * _K                              # bars: seats seat..n-1, then 0..seat-1
        for q in range(a):
            row[_B0 + q] = sb[seat * _K + q]
        for q in range(nb - a):
            row[_B0 + a + q] = sb[q]
        for q in range(_B0 + nb, _C0):
            row[q] = 0.0
        a = n - seat
        for q in range(a):
            row[_C0 + q] = cv[seat + q]
            row[_S0 + q] = sv[seat + q]
        for q in range(seat):
            row[_C0 + a + q] = cv[q]
            row[_S0 + a + q] = sv[q]
        for q in range(n, _C0_PAD):
            row[_C0 + q] = 0.0
            row[_S0 + q] = 0.0
        a = min(kp, n - 1 - seat) * _K                   # known hands: seats seat + 1 .. seat + kp (mod n)
        for q in range(a):
            row[_KH0 + q] = sh[(seat + 1) * _K + q]
        for q in range(kp * _K - a):
            row[_KH0 + a + q] = sh[q]
        for q in range(_KH0 + kp * _K, _KF0):
            row[q] = 0.0
        for q in range(kp):
            row[_KF0 + q] = 1.0
        for q in range(kp, _KF_PAD):
            row[_KF0 + q] = 0.0
        top = seat + known                               # unseen: deck - every bar - the hands it knows
        if top <= n:
            for k in range(_K):
                u = cum[_FREE, k] - (cum[top, k] - cum[seat, k])
                row[_U0 + k] = lut[k, u] if u < 256 else np.float32(u * inv[k])
        else:
            for k in range(_K):
                u = cum[_FREE, k] - (cum[n, k] - cum[seat, k] + cum[top - n, k])
                row[_U0 + k] = lut[k, u] if u < 256 else np.float32(u * inv[k])


# ---- batch drivers --------------------------------------------------------------------------------
@njit
def first_illegal(hands, games, picks):
    """``k * n + i`` of the first pick ``picks[k, i]`` not in the hand seat ``i`` holds in game
    ``games[k]`` (or outside ``0..K-1``); -1 if every pick is legal."""
    n = picks.shape[1]
    for k in range(games.shape[0]):
        b = games[k]
        for i in range(n):
            a = picks[k, i]
            if a < 0 or a >= _K or hands[b, i, a] == 0:
                return k * n + i
    return -1


@njit
def step_batch(hands, bars, kept, round_scores, final_scores, winners, rnd, pick, games, picks, hand_size,
               rul, croq, flags):
    """:func:`step_game` of game ``games[k]`` with ``picks[k]`` for every k; ``flags[k]`` gets its
    result."""
    for k in range(games.shape[0]):
        flags[k] = step_game(hands, bars, kept, round_scores, final_scores, winners, rnd, pick, games[k],
                             picks[k], hand_size, rul, croq)


@njit
def observe_batch(hands, bars, kept, round_scores, rnd, pick, games, seats, hand_size, lut, inv, deck, out):
    """``out[k]`` (float32 (G, S, OBS_SIZE)) = the observations of ``seats`` in game ``games[k]``
    (:func:`observe_rows`)."""
    n = hands.shape[1]
    sb = np.empty(n * _K, np.float32)
    sh = np.empty(n * _K, np.float32)
    cv = np.empty(n, np.float32)
    sv = np.empty(n, np.float32)
    head, cum = observe_scratch()
    for k in range(games.shape[0]):
        observe_rows(hands, bars, kept, round_scores, rnd, pick, games[k], seats, hand_size, lut, inv, deck, out[k],
                     sb, sh, cv, sv, head, cum)


@njit
def winners_batch(scores, churros, rul, out):
    """:func:`winning_seats` of every row: ``scores`` int (G, n), ``churros`` (G, n), ``out`` bool (G, n)."""
    for g in range(scores.shape[0]):
        winning_seats(scores[g], churros[g], rul, out[g])


@njit
def deal_counts(cards, games, hand_size, deck, hands, undealt, bars, pick):
    """Write a round's deal into games ``games`` (intp (G,)): ``cards`` (G, n * hand_size) the
    dealt kinds of each game in deal order (:func:`hod.core.deal.shuffled_prefix`), card ``j`` to
    seat ``j // hand_size``; ``hands[b]`` gets the counts, ``undealt[b]`` = ``deck`` minus them,
    the bars and the pick of the round are cleared (tapeo.txt: a new round starts with empty bars)."""
    n = hands.shape[1]
    for g in range(games.shape[0]):
        b = games[g]
        for i in range(n):
            for k in range(_K):
                hands[b, i, k] = 0
                bars[b, i, k] = 0
        for j in range(n * hand_size):
            hands[b, j // hand_size, cards[g, j]] += 1
        for k in range(_K):
            u = np.int64(deck[k])
            for i in range(n):
                u -= np.int64(hands[b, i, k])
            undealt[b, k] = u
        pick[b] = 0


# ---- parallel batch drivers (numba prange; the engine picks them for large batches) -----------------
#: Games per task of the parallel drivers (each task has its own scratch space).
PAR_CHUNK = 256


@_njit(cache=CACHED, parallel=True)
def step_batch_par(hands, bars, kept, round_scores, final_scores, winners, rnd, pick, games, picks, hand_size,
                   rul, croq, flags):
    """:func:`step_batch` with the games split over numba's threads (``prange``; games are
    independent, each task writes only its games' rows)."""
    G = games.shape[0]
    for c in prange((G + PAR_CHUNK - 1) // PAR_CHUNK):
        for k in range(c * PAR_CHUNK, min(G, (c + 1) * PAR_CHUNK)):
            flags[k] = step_game(hands, bars, kept, round_scores, final_scores, winners, rnd, pick, games[k],
                                 picks[k], hand_size, rul, croq)


@_njit(cache=CACHED, parallel=True)
def observe_batch_par(hands, bars, kept, round_scores, rnd, pick, games, seats, hand_size, lut, inv, deck, out):
    """:func:`observe_batch` with the games split over numba's threads (``prange``, scratch space
    per task)."""
    n = hands.shape[1]
    G = games.shape[0]
    for c in prange((G + PAR_CHUNK - 1) // PAR_CHUNK):
        sb = np.empty(n * _K, np.float32)
        sh = np.empty(n * _K, np.float32)
        cv = np.empty(n, np.float32)
        sv = np.empty(n, np.float32)
        head, cum = observe_scratch()
        for k in range(c * PAR_CHUNK, min(G, (c + 1) * PAR_CHUNK)):
            observe_rows(hands, bars, kept, round_scores, rnd, pick, games[k], seats, hand_size, lut, inv, deck,
                         out[k], sb, sh, cv, sv, head, cum)


# ---- scoring helpers (tapeo_env.rules.scoring) -------------------------------------------------------
@njit
def rule_points(bars, ruls, croqs, out):
    """``out[r]`` (int64 (R, n)) = :func:`round_points` of ``bars`` (int (n, K)) with the numbers
    ``ruls[r]``, ``croqs[r]`` (int64 (R, 12), (R, L)): given the numbers of one round rule with
    every other rule's set to 0, the points of that rule alone, as
    :func:`tapeo_env.rules.scoring.round_breakdown` shows them (one row of all the numbers: the
    round points)."""
    for r in range(ruls.shape[0]):
        round_points(bars, ruls[r], croqs[r], out[r])
