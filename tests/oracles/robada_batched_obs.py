"""Observations of the batched Ronda Robada engine, in batch (the test oracle
:mod:`oracles.robada_batched`'s encoder, as it was in the package before the kernels).

:func:`encode_batch` writes, for each selected game, exactly the float32 vector that
:func:`robada_env.rules.observation.encode` gives for that game's state and seat (same layout
:data:`robada_env.rules.observation.LAYOUT`, same values bit for bit: rank counts are multiples of
1/4, exact in float32, and every other scaled value is read from a table built with the single
encoder's own expressions, e.g. ``h / CARDS_PER_DEAL``, cast to float32). Only the observing
seat of each game is encoded (by default the seat to act).

The output is written feature-major, ``(OBS_SIZE, G)`` C-order, which makes every piece a
contiguous row write (several times faster in numpy than writing columns of a ``(G, OBS_SIZE)``
array); :meth:`robada_env.rules.batched.BatchedRobada.observe` hands out its transpose, a
``(G, OBS_SIZE)`` view.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import numpy as np

from robada_env.rules.cards import COPIES_PER_RANK, DECK_SIZE, NUM_RANKS, TOTAL_POINTS
from robada_env.rules.engine import CARDS_PER_DEAL, MAX_PLAYERS, MIN_PLAYERS
from robada_env.rules.observation import _DECK_MAX, _Q, LAYOUT, OBS_SIZE

if TYPE_CHECKING:  # pragma: no cover
    from .robada_batched import BatchedRobada

_R = NUM_RANKS
_O = {p.name: LAYOUT.offsets[p.name].start for p in LAYOUT.pieces}


def _table(values) -> np.ndarray:
    return np.array([np.float32(v) for v in values], np.float32)


#: The encoder's expressions, per integer value: ``h / 3`` for hand sizes, ``k / 40`` for pile
#: and run sizes, ``p / 244`` for points, ``d / 36`` for the deck.
_HAND_SIZE = _table([h / CARDS_PER_DEAL for h in range(CARDS_PER_DEAL + 1)])
_SIZE = _table([k / DECK_SIZE for k in range(DECK_SIZE + 1)])
_POINTS = _table([p / TOTAL_POINTS for p in range(TOTAL_POINTS + 1)])
_DECK = _table([d / _DECK_MAX for d in range(_DECK_MAX + 1)])
#: Rank counts are scaled by 1/4 (exact in float32).
_QF = np.float32(_Q)
assert _QF == 1.0 / COPIES_PER_RANK
#: Rank of a card id, -1 for none (index -1).
_RANK_OF = np.array([c % _R for c in range(DECK_SIZE)] + [-1], np.int8)
#: Column vectors compared with an index to build one-hot rows (-1 matches nothing).
_RANKS_COL = np.arange(_R, dtype=np.int8)[:, None]
_SEATS_COL = np.arange(MAX_PLAYERS, dtype=np.intp)[:, None]


def encode_batch(st: "BatchedRobada", g: Optional[np.ndarray], seats: Optional[np.ndarray],
                 out: np.ndarray, hand: Optional[np.ndarray] = None) -> None:
    """Write the observations of ``seats`` in games ``g`` of ``st`` into ``out``.

    Args:
        st: the batched engine.
        g: intp (G,) game indices, or None for the whole batch (no gathers).
        seats: int (G,) observing seat per game, or None for the seat to act.
        out: float32 (OBS_SIZE, G), C-order (feature-major). Rows of seats beyond the player
            count must already be 0 (they are never written: the padding of
            :mod:`robada_env.rules.observation`).
        hand: optional int8 (G, 10) hand counts of the observing seats (if already gathered).
    """
    assert out.shape[0] == OBS_SIZE
    n = st.num_players
    full = g is None
    take = (lambda x: x) if full else (lambda x: x[g])
    base = st.flat_base if full else g * n
    cur = take(st.current)
    term = take(st.terminal)
    o = _O
    on = o["num_players"]
    out[on:on + 3] = 0.0
    out[on + n - MIN_PLAYERS] = 1.0
    # to_act: the seat to act relative to me, none once the game is over
    if seats is None:
        seat = cur
        rel = -term.view(np.int8)                                   # 0, or -1 once over
    else:
        seat = seats
        rel = np.where(term, -1, (cur.astype(np.intp) - seat) % n)
    oa = o["to_act"]
    np.equal(_SEATS_COL, rel, out=out[oa:oa + MAX_PLAYERS], casting="unsafe")
    # seats in seat-relative order: k = 0 is the observer
    seat_add = st.seat_at_offset
    flat = [base + seat_add[seat, k] for k in range(n)]
    if hand is None:
        hand = np.take(st.hand_cnt_flat, flat[0], axis=0)                         # (G, 10) int8
    oh = o["hand"]
    np.multiply(hand.T, _QF, out=out[oh:oh + _R])
    ol = o["loose"]
    np.multiply(take(st.loose_cnt).T, _QF, out=out[ol:ol + _R])
    o_hs, o_top, o_size, o_pts, o_ranks, o_taken = (
        o["hand_sizes"], o["pile_top"], o["pile_size"], o["pile_points"], o["pile_ranks"],
        o["run_piles_taken"])
    for k in range(n):
        f = flat[k]
        np.take(_HAND_SIZE, st.hand_size_flat[f], out=out[o_hs + k], mode="clip")
        top = _RANK_OF[st.pile_top_flat[f]]
        np.equal(_RANKS_COL, top, out=out[o_top + k * _R:o_top + (k + 1) * _R], casting="unsafe")
        np.take(_SIZE, st.pile_size_flat[f], out=out[o_size + k], mode="clip")
        np.take(_POINTS, st.pile_pts_flat[f], out=out[o_pts + k], mode="clip")
        np.multiply(np.take(st.pile_cnt_flat, f, axis=0).T, _QF,
                    out=out[o_ranks + k * _R:o_ranks + (k + 1) * _R])
        out[o_taken + k] = st.run_taken_flat[f]
    # the run in progress
    active = take(st.run_active)
    nxt = take(st.run_next)
    out[o["run_active"]] = active
    for name, v in (("run_start", take(st.run_start)), ("run_rank", take(st.run_rank)), ("run_next", nxt)):
        np.equal(_RANKS_COL, v, out=out[o[name]:o[name] + _R], casting="unsafe")
    out[o["run_closed"]] = active & (nxt < 0)
    og = o["run_gathered"]
    np.multiply(take(st.run_cnt).T, _QF, out=out[og:og + _R])
    np.take(_SIZE, take(st.run_size), out=out[o["run_size"]], mode="clip")
    np.take(_POINTS, take(st.run_pts), out=out[o["run_points"]], mode="clip")
    np.take(_DECK, take(st.deck_left), out=out[o["deck_left"]], mode="clip")
    # seen (public, R9) and unseen by me = 4 - seen - my hand
    seen = take(st.seen_cnt)
    os_, ou = o["seen"], o["unseen"]
    np.multiply(seen.T, _QF, out=out[os_:os_ + _R])
    np.multiply((COPIES_PER_RANK - seen - hand).T, _QF, out=out[ou:ou + _R])
    # relative seat of the last runner: table [seat, last_runner + 1], -1 for nobody
    rel = st.relative_seat[seat * (n + 1) + take(st.last_runner) + 1]
    olr = o["last_runner"]
    np.equal(_SEATS_COL, rel, out=out[olr:olr + MAX_PLAYERS], casting="unsafe")
