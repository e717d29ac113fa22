"""Observation encoder of Ronda Robada: what one seat legitimately knows (RULINGS R9), as a flat
float32 vector with named pieces (:data:`LAYOUT`, version :data:`OBS_VERSION`).

Public information (R9): the loose cards, every pile's visible card, and, since everything that
entered a pile was seen by everyone, each pile's size, point total and rank contents; the run in
progress; the number of cards left in the deck and in each hand; who confirmed the last run.
Private: the seat's own hand. Hidden (never encoded): other hands and the deck order.

Seats are seat-relative: entry 0 is the observing seat, 1 the seat on its left
((seat + 1) % n), and so on; seats beyond the player count (up to 4) are zero padding, so the
size does not depend on the player count and one policy can play every table size.
The layout table is ``LAYOUT.markdown_table()`` (reproduced in docs/robada_env.md).
"""
from __future__ import annotations

import numpy as np

from hod_common.layout import ObsLayout, Piece

from .cards import CARD_POINTS, COPIES_PER_RANK, DECK_SIZE, NUM_RANKS, TOTAL_POINTS
from .engine import CARDS_PER_DEAL, LOOSE_AT_START, MAX_PLAYERS, MIN_PLAYERS, RUN_CLOSED, State

#: Version of the layout; bump it whenever a piece changes (policies record it).
OBS_VERSION = 1
_R = NUM_RANKS
_S = MAX_PLAYERS
_DECK_MAX = DECK_SIZE - LOOSE_AT_START  # 36: more than any deck left after the first deal

#: The observation layout (name ``robada``).
LAYOUT = ObsLayout("robada", OBS_VERSION, [
    Piece("num_players", 3, "one-hot player count (2, 3, 4)"),
    Piece("to_act", _S, "one-hot seat to act, seat-relative (0 = me); all 0 once the game is over"),
    Piece("hand", _R, "my hand: cards of each rank A,2..7,Sota,Caballo,Rey", "/ 4"),
    Piece("hand_sizes", _S, "cards in hand per seat, seat-relative", "/ 3"),
    Piece("loose", _R, "loose cards on the table of each rank", "/ 4"),
    Piece("pile_top", _S * _R, "per seat (seat-relative), one-hot rank of the pile's visible card (all 0: empty pile)"),
    Piece("pile_size", _S, "cards in each seat's pile, seat-relative", "/ 40"),
    Piece("pile_points", _S, "points in each seat's pile = its score so far (R8), seat-relative", "/ 244"),
    Piece("pile_ranks", _S * _R, "per seat (seat-relative), cards of each rank in its pile (public, R9)", "/ 4"),
    Piece("run_active", 1, "1 while a run is in progress"),
    Piece("run_start", _R, "one-hot rank the run started with"),
    Piece("run_rank", _R, "one-hot rank of the run's latest step"),
    Piece("run_next", _R, "one-hot rank the run needs next (all 0: no run, or closed)"),
    Piece("run_closed", 1, "1 when the run can go no further (closed by the Ace after the Rey, R2)"),
    Piece("run_gathered", _R, "cards of each rank gathered by the run (piles taken included)", "/ 4"),
    Piece("run_size", 1, "cards gathered by the run", "/ 40"),
    Piece("run_points", 1, "points gathered by the run", "/ 244"),
    Piece("run_piles_taken", _S, "1 for each seat (seat-relative) whose pile the run has taken"),
    Piece("deck_left", 1, "cards left in the deck", "/ 36"),
    Piece("seen", _R, "cards of each rank seen by everyone: in piles, loose or in the run (R9)", "/ 4"),
    Piece("unseen", _R, "cards of each rank I have not seen (other hands or deck) = 4 - seen - my hand", "/ 4"),
    Piece("last_runner", _S, "one-hot seat (seat-relative) that confirmed the last run (R7); all 0: nobody"),
])
#: Length of the observation vector.
OBS_SIZE = LAYOUT.size

_O = {p.name: LAYOUT.offsets[p.name].start for p in LAYOUT.pieces}
_Q = 1.0 / COPIES_PER_RANK


def encode(s: State, seat: int) -> np.ndarray:
    """Observation of ``seat`` in state ``s``.

    Returns:
        float32 array of shape (OBS_SIZE,), values in [0, 1].

    Depends only on what ``seat`` knows (R9): the result is the same for any two states that
    differ only in other seats' hands (same hand sizes) or the order of the deck.
    """
    n = s.n
    idx: list[int] = []
    val: list[float] = []
    add_i = idx.append
    add_v = val.append

    add_i(_O["num_players"] + n - MIN_PLAYERS); add_v(1.0)
    if not s.terminal:
        add_i(_O["to_act"] + (s.current - seat) % n); add_v(1.0)

    seen = [0] * _R
    hand = [0] * _R
    for c in s.hands[seat]:
        hand[c % _R] += 1
    loose = [0] * _R
    for c in s.loose:
        loose[c % _R] += 1
        seen[c % _R] += 1
    o_hand, o_loose = _O["hand"], _O["loose"]
    for r in range(_R):
        if hand[r]:
            add_i(o_hand + r); add_v(hand[r] * _Q)
        if loose[r]:
            add_i(o_loose + r); add_v(loose[r] * _Q)

    o_hs, o_top, o_size, o_pts, o_ranks = (
        _O["hand_sizes"], _O["pile_top"], _O["pile_size"], _O["pile_points"], _O["pile_ranks"])
    for i in range(n):
        rel = (i - seat) % n
        h = len(s.hands[i])
        if h:
            add_i(o_hs + rel); add_v(h / CARDS_PER_DEAL)
        pile = s.piles[i]
        if pile:
            add_i(o_top + rel * _R + pile[-1] % _R); add_v(1.0)
            add_i(o_size + rel); add_v(len(pile) / DECK_SIZE)
            add_i(o_pts + rel); add_v(s.points[i] / TOTAL_POINTS)
            cnt = [0] * _R
            for c in pile:
                cnt[c % _R] += 1
            base = o_ranks + rel * _R
            for r in range(_R):
                if cnt[r]:
                    seen[r] += cnt[r]
                    add_i(base + r); add_v(cnt[r] * _Q)

    if s.run:
        add_i(_O["run_active"]); add_v(1.0)
        add_i(_O["run_start"] + s.run_start); add_v(1.0)
        add_i(_O["run_rank"] + s.run_rank); add_v(1.0)
        if s.run_next != RUN_CLOSED:
            add_i(_O["run_next"] + s.run_next); add_v(1.0)
        else:  # closed by the Ace after the Rey (R2)
            add_i(_O["run_closed"]); add_v(1.0)
        cnt = [0] * _R
        pts = 0
        for c in s.run:
            cnt[c % _R] += 1
            pts += CARD_POINTS[c]
        o = _O["run_gathered"]
        for r in range(_R):
            if cnt[r]:
                seen[r] += cnt[r]
                add_i(o + r); add_v(cnt[r] * _Q)
        add_i(_O["run_size"]); add_v(len(s.run) / DECK_SIZE)
        add_i(_O["run_points"]); add_v(pts / TOTAL_POINTS)
        o = _O["run_piles_taken"]
        for t in s.run_taken:
            add_i(o + (t - seat) % n); add_v(1.0)

    if s.deck:
        add_i(_O["deck_left"]); add_v(len(s.deck) / _DECK_MAX)
    o_seen, o_unseen = _O["seen"], _O["unseen"]
    for r in range(_R):
        if seen[r]:
            add_i(o_seen + r); add_v(seen[r] * _Q)
        u = COPIES_PER_RANK - seen[r] - hand[r]
        if u:
            add_i(o_unseen + r); add_v(u * _Q)
    if s.last_runner >= 0:
        add_i(_O["last_runner"] + (s.last_runner - seat) % n); add_v(1.0)

    obs = np.zeros(OBS_SIZE, dtype=np.float32)
    obs[idx] = val
    return obs
