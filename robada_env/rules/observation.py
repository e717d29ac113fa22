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
:func:`decode` is the inverse of :func:`encode` (an :class:`ObsView` of counts and ranks, for bots).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hod.core.errors import check_int_range
from hod.core.layout import ObsLayout, Piece

from .actions import NUM_ACTIONS
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

#: Observation layout versions an env can emit (``observation_version``): 1 (:data:`LAYOUT`) and
#: 2 (:data:`LAYOUT_V2`).
OBS_VERSIONS = (1, 2)
#: Per-action summaries of layout version 2, in block order: ``(name, meaning, normalisation)``.
#: Entry ``192 + 27 * k + a`` is summary ``k`` of action ``a`` (``robada_env.rules.actions``),
#: computed by :mod:`robada_env.rules.action_features` from the version-1 vector and the mask
#: (what the seat sees, R9). "The turn ends here" means: the action, then ``confirm`` at once
#: (for ``start``, ``tap``, ``take``), or the action itself (``confirm``, ``drop``).
ACTION_SUMMARIES = (
    ("act_legal", "1 if the action is legal (the mask)", "0/1"),
    ("act_gain", "points the action adds to my total if the run is confirmed: start r 2 x points(r), tap the "
                 "needed card's points, take another seat's pile its points; take my own pile, confirm, drop 0 (R3, R5, R8)",
     "/ 244"),
    ("act_steal", "points the action takes from another seat's pile (take +1..+3)", "/ 244"),
    ("act_reach", "points a greedy walk can still add after the action (runs.walk_run: taps first, else the "
                  "pile of most points, my own valued 0, R2, R3); 0 for confirm and drop", "/ 244"),
    ("act_continues", "1 if after the action the run can still be extended (start, tap, take)", "0/1"),
    ("act_score", "my pile's points if the turn ends here (R5)", "/ 244"),
    ("act_reply", "best next-seat reply on the table the turn leaves: over ranks with a loose card and an unseen "
                  "card, 2 x points + its greedy walk's gain (its own pile valued 0)", "/ 244"),
    ("act_exposed", "my pile's points if one of those replies' walks takes it (the most such), else 0", "/ 244"),
    ("act_top", "rank + 1 of my pile's visible card if the turn ends here (R5; 0: empty pile)", "/ 10"),
    ("act_loose_ranks", "ranks with a loose card on the table the turn leaves", "/ 10"),
)
#: Summaries per action in layout version 2.
NUM_SUMMARIES = len(ACTION_SUMMARIES)
#: Observation layout version 2: version 1's pieces, then the per-action summaries (27 each).
LAYOUT_V2 = ObsLayout("robada", 2, list(LAYOUT.pieces) + [
    Piece(name, NUM_ACTIONS, f"per action (27), {meaning}", scale) for name, meaning, scale in ACTION_SUMMARIES])
#: Length of the version-2 observation vector.
OBS_SIZE_V2 = LAYOUT_V2.size
#: The layout of each version.
LAYOUTS = {1: LAYOUT, 2: LAYOUT_V2}

_O = {p.name: LAYOUT.offsets[p.name].start for p in LAYOUT.pieces}
_Q = 1.0 / COPIES_PER_RANK


def encode(s: State, seat: int) -> np.ndarray:
    """Observation of ``seat`` in state ``s`` (the layout table :data:`LAYOUT`).

    Args:
        s: the engine state (:class:`robada_env.rules.engine.State`), n = ``s.n`` seats.
        seat: the observer, an int in 0..n-1 (absolute seat; the pieces are seat-relative to it).

    Returns:
        float32 array of shape (OBS_SIZE,), values in [0, 1].

    Raises:
        ConfigError (a ValueError): ``seat`` not an int in 0..n-1 (the message lists the legal
            seats).

    Depends only on what ``seat`` knows (RULINGS R9): the result is the same for any two states
    that differ only in other seats' hands (same hand sizes) or the order of the deck.
    """
    if type(seat) is not int or not 0 <= seat < s.n:
        seat = check_int_range("seat", seat, 0, s.n - 1)
    return _encode_frame(s, seat)


def encode_all(s: State) -> np.ndarray:
    """Observations of every seat at once.

    Args:
        s: the engine state, n = ``s.n`` seats.

    Returns:
        float32 array of shape ``(n, OBS_SIZE)``, row ``i`` equal to ``encode(s, i)`` bit for bit
        (a fresh array; rows may be handed out as views).
    """
    return _encode_frame(s, None).take(_SEAT_VIEW[s.n])


# How the observations are built (:func:`_encode_frame`): the entries are written in a *frame*.
# For one seat, the frame is that seat's observation itself (seats relative to it). For every
# seat at once, most of an observation is public (R9) and the same for every seat up to the
# seat-relative order, so the state is encoded once in the *table* frame: the layout as seat 0
# would see it (absolute seats), except that the private pieces (own hand, unseen) are kept for
# every seat in two extra blocks; the observation of seat ``i`` is then one gather through
# :data:`_SEAT_VIEW` ``[n][i]``, which rotates the seat-relative pieces by ``i`` and picks seat
# ``i``'s private blocks. The values are the same Python expressions as the layout table's
# (e.g. ``h / CARDS_PER_DEAL``), rounded once to float32.
_HAND_BLOCK = OBS_SIZE                         # hand counts of seat i at _HAND_BLOCK + i * R
_UNSEEN_BLOCK = _HAND_BLOCK + _S * _R          # unseen counts of seat i at _UNSEEN_BLOCK + i * R
_ZERO = _UNSEEN_BLOCK + _S * _R                # always 0: padding seats
_TABLE_SIZE = _ZERO + 1
#: Rank of each card id.
_RANK_OF = tuple(c % _R for c in range(DECK_SIZE))


def _seat_views() -> dict[int, np.ndarray]:
    """Per player count n, the intp (n, OBS_SIZE) gather indices into the table view."""
    seat_pieces = {  # piece -> entries per seat
        "to_act": 1, "hand_sizes": 1, "pile_top": _R, "pile_size": 1, "pile_points": 1,
        "pile_ranks": _R, "run_piles_taken": 1, "last_runner": 1,
    }
    views = {}
    for n in range(MIN_PLAYERS, MAX_PLAYERS + 1):
        view = np.tile(np.arange(OBS_SIZE, dtype=np.intp), (n, 1))
        for seat in range(n):
            row = view[seat]
            for name, width in seat_pieces.items():
                start = _O[name]
                for rel in range(_S):
                    at = start + rel * width
                    if rel < n:
                        row[at:at + width] = start + ((seat + rel) % n) * width + np.arange(width)
                    else:
                        row[at:at + width] = _ZERO
            row[LAYOUT.offsets["hand"]] = _HAND_BLOCK + seat * _R + np.arange(_R)
            row[LAYOUT.offsets["unseen"]] = _UNSEEN_BLOCK + seat * _R + np.arange(_R)
        view.setflags(write=False)
        views[n] = view
    return views


_SEAT_VIEW = _seat_views()
#: Per player count n and observer, the position of each seat relative to the observer.
_RELATIVE = {n: [tuple((i - seat) % n for i in range(n)) for seat in range(n)]
             for n in range(MIN_PLAYERS, MAX_PLAYERS + 1)}
#: Per player count, seats as they are (the table frame).
_ABSOLUTE = {n: tuple(range(n)) for n in range(MIN_PLAYERS, MAX_PLAYERS + 1)}


def _encode_frame(s: State, seat: int | None) -> np.ndarray:
    """The entries of ``s`` in the frame of ``seat`` (its observation, float32 (OBS_SIZE,)), or
    with ``seat=None`` in the table frame (float32 (_TABLE_SIZE,)); see the comment above.

    ``seat`` must be in 0..n-1 (:func:`encode` checks it).
    """
    n = s.n
    if seat is None:
        rel, private, size = _ABSOLUTE[n], range(n), _TABLE_SIZE
    else:
        rel = _RELATIVE[n][seat]
        seat %= n
        private, size = (seat,), OBS_SIZE
    rank_of = _RANK_OF
    idx: list[int] = []
    val: list[float] = []
    add_i = idx.append
    add_v = val.append

    add_i(_O["num_players"] + n - MIN_PLAYERS); add_v(1.0)
    if not s.terminal:
        add_i(_O["to_act"] + rel[s.current]); add_v(1.0)

    seen = [0] * _R
    for c in s.loose:
        seen[rank_of[c]] += 1
    o_loose = _O["loose"]
    for r, k in enumerate(seen):
        if k:
            add_i(o_loose + r); add_v(k * _Q)

    o_hs, o_top, o_size, o_pts, o_ranks = (
        _O["hand_sizes"], _O["pile_top"], _O["pile_size"], _O["pile_points"], _O["pile_ranks"])
    for i in range(n):
        j = rel[i]
        if s.hands[i]:
            add_i(o_hs + j); add_v(len(s.hands[i]) / CARDS_PER_DEAL)
        pile = s.piles[i]
        if pile:
            add_i(o_top + j * _R + rank_of[pile[-1]]); add_v(1.0)
            add_i(o_size + j); add_v(len(pile) / DECK_SIZE)
            add_i(o_pts + j); add_v(s.points[i] / TOTAL_POINTS)
            cnt = [0] * _R
            for c in pile:
                cnt[rank_of[c]] += 1
            base = o_ranks + j * _R
            for r, k in enumerate(cnt):
                if k:
                    seen[r] += k
                    add_i(base + r); add_v(k * _Q)

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
            cnt[rank_of[c]] += 1
            pts += CARD_POINTS[c]
        o = _O["run_gathered"]
        for r, k in enumerate(cnt):
            if k:
                seen[r] += k
                add_i(o + r); add_v(k * _Q)
        add_i(_O["run_size"]); add_v(len(s.run) / DECK_SIZE)
        add_i(_O["run_points"]); add_v(pts / TOTAL_POINTS)
        o = _O["run_piles_taken"]
        for t in s.run_taken:
            add_i(o + rel[t]); add_v(1.0)

    if s.deck:
        add_i(_O["deck_left"]); add_v(len(s.deck) / _DECK_MAX)
    o_seen = _O["seen"]
    for r, k in enumerate(seen):
        if k:
            add_i(o_seen + r); add_v(k * _Q)
    if s.last_runner >= 0:
        add_i(_O["last_runner"] + rel[s.last_runner]); add_v(1.0)

    # private pieces. Own hand (a rank held twice is written twice, with the same value): in the
    # hand block of every seat (seat i at _HAND_BLOCK + i * R), or in the observation's own piece.
    o_hand = _HAND_BLOCK if seat is None else _O["hand"] - seat * _R
    for i in private:
        cards = s.hands[i]
        hand = [0] * _R
        for c in cards:
            hand[rank_of[c]] += 1
        base = o_hand + i * _R
        for c in cards:
            r = rank_of[c]
            add_i(base + r); add_v(hand[r] * _Q)

    if seat is not None:  # unseen = 4 - seen - own hand
        o_unseen = _O["unseen"]
        for r, k in enumerate(seen):
            u = COPIES_PER_RANK - k - hand[r]
            if u:
                add_i(o_unseen + r); add_v(u * _Q)
    out = np.zeros(size, dtype=np.float32)
    out.put(idx, val)
    if seat is None:
        # every seat's unseen block at once: (4 - seen - own hand) / 4 = 1 - seen / 4 - own hand
        # / 4, exact in float32 (multiples of 1/4 in [0, 1]; 0 comes out as +0.0, like an entry
        # never written)
        hands_q = out[_HAND_BLOCK:_HAND_BLOCK + n * _R].reshape(n, _R)
        unseen_q = out[_UNSEEN_BLOCK:_UNSEEN_BLOCK + n * _R].reshape(n, _R)
        np.subtract(1.0 - out[o_seen:o_seen + _R], hands_q, out=unseen_q)
    return out


#: Divisor of each entry of the vector (1 for 0/1 entries): ``rint(obs * _SCALE)`` are the counts.
_SCALE = np.ones(OBS_SIZE, np.float64)
for _name, _div in (("hand", COPIES_PER_RANK), ("hand_sizes", CARDS_PER_DEAL), ("loose", COPIES_PER_RANK),
                    ("pile_size", DECK_SIZE), ("pile_points", TOTAL_POINTS), ("pile_ranks", COPIES_PER_RANK),
                    ("run_gathered", COPIES_PER_RANK), ("run_size", DECK_SIZE), ("run_points", TOTAL_POINTS),
                    ("deck_left", _DECK_MAX), ("seen", COPIES_PER_RANK), ("unseen", COPIES_PER_RANK)):
    _SCALE[LAYOUT.offsets[_name]] = _div
del _name, _div


def _onehot(counts: list, start: int, size: int) -> int:
    """Index of the set entry of the one-hot piece at ``counts[start:start + size]``, -1 if none."""
    for i in range(size):
        if counts[start + i]:
            return i
    return -1


@dataclass(frozen=True)
class ObsView:
    """The visible facts of one seat, decoded from its observation (:func:`decode`); the inverse
    of :func:`encode`. Plain ints and tuples of ints (cheap to read in bots' inner loops).

    Seats are seat-relative and cut to the player count ``n``: index 0 is the observer, 1 the seat
    on its left (which plays next), ... ``n - 1`` the seat on its right. Ranks are 0..9 (A, 2..7,
    Sota, Caballo, Rey). A rank of ``-1`` means none.

    Attributes:
        num_players: n, 2..4.
        to_act: seat-relative seat to act, -1 once the game is over.
        hand: (10,) my hand cards of each rank.
        hand_sizes: (n,) cards in hand per seat.
        loose: (10,) loose cards on the table of each rank.
        pile_top: (n,) rank of each pile's visible card, -1 for an empty pile.
        pile_size: (n,) cards in each pile.
        pile_points: (n,) points in each pile (the scores so far, R8).
        pile_ranks: (n,) tuples (10,): cards of each rank in each pile (public, R9).
        run_active: a run is in progress.
        run_start: rank the run started with (-1: no run).
        run_rank: rank of the run's latest step (-1: no run).
        run_next: rank the run needs next (-1: no run, or closed).
        run_closed: the run was closed by the Ace after the Rey (R2).
        run_gathered: (10,) cards of each rank gathered by the run (piles taken included).
        run_size: cards gathered by the run.
        run_points: points gathered by the run.
        run_piles_taken: (n,) 1 for each seat whose pile the run has taken.
        deck_left: cards left in the deck.
        seen: (10,) cards of each rank seen by everyone (piles, loose, run).
        unseen: (10,) cards of each rank the observer has not seen (other hands or deck).
        last_runner: seat-relative seat that confirmed the last run, -1 for nobody (R7).
    """

    num_players: int
    to_act: int
    hand: tuple
    hand_sizes: tuple
    loose: tuple
    pile_top: tuple
    pile_size: tuple
    pile_points: tuple
    pile_ranks: tuple
    run_active: bool
    run_start: int
    run_rank: int
    run_next: int
    run_closed: bool
    run_gathered: tuple
    run_size: int
    run_points: int
    run_piles_taken: tuple
    deck_left: int
    seen: tuple
    unseen: tuple
    last_runner: int


def decode(obs: np.ndarray) -> ObsView:
    """Inverse of :func:`encode`: the counts and ranks behind one observation vector.

    Args:
        obs: float32 (OBS_SIZE,), a vector of :func:`encode` (the ``"observation"`` entry of the
            env's observation dict).

    Returns:
        an :class:`ObsView` (every count rounded to the nearest integer).

    Raises:
        ValueError: wrong shape, or no player count set (not an observation of :func:`encode`).
    """
    obs = np.asarray(obs)
    if obs.shape != (OBS_SIZE,):
        raise ValueError(f"a Ronda Robada observation has shape ({OBS_SIZE},), got {obs.shape}")
    x = np.rint(obs.astype(np.float64) * _SCALE).astype(np.int64).tolist()
    n = _onehot(x, _O["num_players"], 3) + MIN_PLAYERS
    if n < MIN_PLAYERS:
        raise ValueError("the observation has no player count set; not a Ronda Robada observation")

    def cut(name: str, size: int = _R, start: int = 0) -> tuple:
        o = _O[name] + start
        return tuple(x[o:o + size])

    run_active = bool(x[_O["run_active"]])
    return ObsView(
        num_players=n,
        to_act=_onehot(x, _O["to_act"], n),
        hand=cut("hand"),
        hand_sizes=cut("hand_sizes", n),
        loose=cut("loose"),
        pile_top=tuple(_onehot(x, _O["pile_top"] + i * _R, _R) for i in range(n)),
        pile_size=cut("pile_size", n),
        pile_points=cut("pile_points", n),
        pile_ranks=tuple(cut("pile_ranks", _R, i * _R) for i in range(n)),
        run_active=run_active,
        run_start=_onehot(x, _O["run_start"], _R),
        run_rank=_onehot(x, _O["run_rank"], _R),
        run_next=_onehot(x, _O["run_next"], _R),
        run_closed=bool(x[_O["run_closed"]]),
        run_gathered=cut("run_gathered"),
        run_size=x[_O["run_size"]],
        run_points=x[_O["run_points"]],
        run_piles_taken=cut("run_piles_taken", n),
        deck_left=x[_O["deck_left"]],
        seen=cut("seen"),
        unseen=cut("unseen"),
        last_runner=_onehot(x, _O["last_runner"], n),
    )


def view_of(s: State, seat: int) -> ObsView:
    """``decode(encode(s, seat))`` worked out straight from the state, with no float vector: the
    fast path of bots that play many games on engine states (search playouts). What ``seat``
    legitimately knows only (RULINGS R9), seat-relative like :func:`encode`.

    Args:
        s: the engine state, n = ``s.n`` seats.
        seat: the observer, an int in 0..n-1.

    Returns:
        an :class:`ObsView` equal to ``decode(encode(s, seat))`` (tests/test_robada_observation.py).

    Raises:
        ConfigError (a ValueError): ``seat`` not an int in 0..n-1.
    """
    n = s.n
    if type(seat) is not int or not 0 <= seat < n:
        seat = check_int_range("seat", seat, 0, n - 1)
    rank_of = _RANK_OF
    order = [(seat + k) % n for k in range(n)]

    def counts(cards) -> list:
        cnt = [0] * _R
        for c in cards:
            cnt[rank_of[c]] += 1
        return cnt

    hand = counts(s.hands[seat])
    loose = counts(s.loose)
    gathered = counts(s.run)
    seen = [a + b for a, b in zip(loose, gathered)]
    pile_ranks = []
    for i in order:
        cnt = counts(s.piles[i])
        pile_ranks.append(tuple(cnt))
        seen = [a + b for a, b in zip(seen, cnt)]
    run = bool(s.run)
    closed = run and s.run_next == RUN_CLOSED
    return ObsView(
        num_players=n,
        to_act=-1 if s.terminal else (s.current - seat) % n,
        hand=tuple(hand),
        hand_sizes=tuple(len(s.hands[i]) for i in order),
        loose=tuple(loose),
        pile_top=tuple(rank_of[s.piles[i][-1]] if s.piles[i] else -1 for i in order),
        pile_size=tuple(len(s.piles[i]) for i in order),
        pile_points=tuple(s.points[i] if s.piles[i] else 0 for i in order),
        pile_ranks=tuple(pile_ranks),
        run_active=run,
        run_start=s.run_start if run else -1,
        run_rank=s.run_rank if run else -1,
        run_next=s.run_next if run and not closed else -1,
        run_closed=closed,
        run_gathered=tuple(gathered),
        run_size=len(s.run),
        run_points=sum(CARD_POINTS[c] for c in s.run),
        run_piles_taken=tuple(1 if i in s.run_taken else 0 for i in order),
        deck_left=len(s.deck),
        seen=tuple(seen),
        unseen=tuple(COPIES_PER_RANK - a - h for a, h in zip(seen, hand)),
        last_runner=(s.last_runner - seat) % n if s.last_runner >= 0 else -1,
    )
