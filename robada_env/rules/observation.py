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
from typing import TYPE_CHECKING

import numpy as np

from hod.core.errors import check_int_range
from hod.core.layout import ObsLayout, Piece

from .actions import NUM_ACTIONS
from .cards import COPIES_PER_RANK, DECK_SIZE, NUM_RANKS, TOTAL_POINTS
from .engine import CARDS_PER_DEAL, LOOSE_AT_START, MAX_PLAYERS, MIN_PLAYERS

if TYPE_CHECKING:
    from .engine import State

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
#: A rank count's scale in the observation (``k / 4``).
_Q = 1.0 / COPIES_PER_RANK


def encode(s: State, seat: int) -> np.ndarray:
    """Observation of ``seat`` in state ``s`` (the layout table :data:`LAYOUT`;
    :func:`robada_env.rules.kernels.observe_game` on the state's record, the batched engine's
    observation).

    Args:
        s: the engine state (:class:`robada_env.rules.engine.State`), n = ``s.n`` seats.
        seat: the observer, an int in 0..n-1 (absolute seat; the pieces are seat-relative to it).

    Returns:
        float32 array of shape (OBS_SIZE,), values in [0, 1] (a fresh array).

    Raises:
        ConfigError (a ValueError): ``seat`` not an int in 0..n-1 (the message lists the legal
            seats).

    Depends only on what ``seat`` knows (RULINGS R9): the result is the same for any two states
    that differ only in other seats' hands (same hand sizes) or the order of the deck.
    """
    if type(seat) is not int or not 0 <= seat < s.n:
        seat = check_int_range("seat", seat, 0, s.n - 1)
    t = s._t
    out = np.empty(OBS_SIZE, np.float32)
    kernels.observe_one(s._b8, s._b16, s._bb, t.lay, t.seat[seat], out.reshape(1, OBS_SIZE))
    return out


def encode_all(s: State) -> np.ndarray:
    """Observations of every seat at once (one kernel call).

    Args:
        s: the engine state, n = ``s.n`` seats.

    Returns:
        float32 array of shape ``(n, OBS_SIZE)``, row ``i`` equal to ``encode(s, i)`` bit for bit
        (a fresh array; rows may be handed out as views).
    """
    t = s._t
    out = np.empty((s.n, OBS_SIZE), np.float32)
    kernels.observe_one(s._b8, s._b16, s._bb, t.lay, t.seats, out)
    return out


#: Divisor of each entry of the vector (1 for 0/1 entries): ``rint(obs * _SCALE)`` are the counts.
_SCALE = np.ones(OBS_SIZE, np.float64)
for _name, _div in (("hand", COPIES_PER_RANK), ("hand_sizes", CARDS_PER_DEAL), ("loose", COPIES_PER_RANK),
                    ("pile_size", DECK_SIZE), ("pile_points", TOTAL_POINTS), ("pile_ranks", COPIES_PER_RANK),
                    ("run_gathered", COPIES_PER_RANK), ("run_size", DECK_SIZE), ("run_points", TOTAL_POINTS),
                    ("deck_left", _DECK_MAX), ("seen", COPIES_PER_RANK), ("unseen", COPIES_PER_RANK)):
    _SCALE[LAYOUT.offsets[_name]] = _div
del _name, _div


def decode_counts(observations: np.ndarray) -> np.ndarray:
    """The counts behind G observation vectors at once: int64 (G, OBS_SIZE), entry ``[g, i]`` the
    integer :func:`decode` reads at offset ``i`` (``rint(obs * divisor)``, the divisors of the
    layout table: ``/ 4`` for rank counts, ``/ 3`` hand sizes, ``/ 40`` sizes, ``/ 244`` points,
    ``/ 36`` the deck; 1 for one-hot entries). Batch readers (the batched expert,
    :meth:`hod.agents.robada_bots.ExpertBot.act_batch`) cut the pieces from it at
    ``LAYOUT.offsets``.

    Args:
        observations: float32 (or float64) (G, OBS_SIZE), rows of :func:`encode`.

    Raises:
        ValueError: not a 2-D array of width OBS_SIZE.
    """
    obs = np.asarray(observations)
    if obs.ndim != 2 or obs.shape[1] != OBS_SIZE:
        raise ValueError(f"Ronda Robada observations have shape (G, {OBS_SIZE}), got {obs.shape}")
    return np.rint(obs.astype(np.float64) * _SCALE).astype(np.int64)


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
    """``decode(encode(s, seat))`` read straight from the state's record, with no float vector:
    the fast path of bots that play many games on engine states (search playouts). What ``seat``
    legitimately knows only (RULINGS R9), seat-relative like :func:`encode`.

    Args:
        s: the engine state, n = ``s.n`` seats.
        seat: the observer, an int in 0..n-1.

    Returns:
        an :class:`ObsView` equal to ``decode(encode(s, seat))`` (tests/games/test_robada_observation.py).

    Raises:
        ConfigError (a ValueError): ``seat`` not an int in 0..n-1.
    """
    n = s.n
    if type(seat) is not int or not 0 <= seat < n:
        seat = check_int_range("seat", seat, 0, n - 1)
    t = s._t
    b8, b16, bb = s._b8.tolist(), s._b16.tolist(), s._bb.tolist()     # the packed record, read once
    order = t.order[seat]
    o = t.hand_cnt + seat * _R
    hand = b8[o:o + _R]
    seen = b8[t.seen_cnt:t.seen_cnt + _R]
    run = bb[t.run_active]
    need = b8[t.run_next]
    lr = b8[t.last_runner]
    o_cnt, o_top, o_size, o_pts, o_hs, o_taken = t.pile_cnt, t.pile_top, t.pile_size, t.pile_pts, t.hand_size, t.run_taken
    return ObsView(
        num_players=n,
        to_act=-1 if bb[t.terminal] else (b8[t.current] - seat) % n,
        hand=tuple(hand),
        hand_sizes=tuple(b8[o_hs + i] for i in order),
        loose=tuple(b8[t.loose_cnt:t.loose_cnt + _R]),
        pile_top=tuple(b8[o_top + i] % _R if b8[o_top + i] >= 0 else -1 for i in order),
        pile_size=tuple(b8[o_size + i] for i in order),
        pile_points=tuple(b16[o_pts + i] for i in order),
        pile_ranks=tuple(tuple(b8[o_cnt + i * _R:o_cnt + (i + 1) * _R]) for i in order),
        run_active=run,
        run_start=b8[t.run_start],
        run_rank=b8[t.run_rank],
        run_next=need,
        run_closed=run and need < 0,
        run_gathered=tuple(b8[t.run_cnt:t.run_cnt + _R]),
        run_size=b8[t.run_size],
        run_points=b16[t.run_pts],
        run_piles_taken=tuple(1 if bb[o_taken + i] else 0 for i in order),
        deck_left=b8[t.deck_left],
        seen=tuple(seen),
        unseen=tuple(COPIES_PER_RANK - a - h for a, h in zip(seen, hand)),
        last_runner=(lr - seat) % n if lr >= 0 else -1,
    )


from . import kernels  # noqa: E402  (after the layout: the kernels read it)
