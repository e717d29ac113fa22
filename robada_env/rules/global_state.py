"""Ronda Robada's global state (PettingZoo's ``state()``): the whole position, every hand and
the deck's contents included, as one flat float32 vector (:data:`STATE_LAYOUT`, version
:data:`STATE_VERSION`), for critics that see everything during training (centralized training,
decentralized execution: MAPPO and the like). A policy that plays must read its seat's
observation (:mod:`robada_env.rules.observation`, RULINGS R9) instead: this vector holds what no
seat knows.

Seat-absolute (seat 0 first, then seat 1, ...; seats beyond the player count are zero padding up
to 4, so the size does not depend on the player count). What is encoded is everything of the
engine's :class:`~robada_env.rules.engine.State` that decides how the game goes on from now
(ronda_robada.txt; RULINGS R1-R9): the seat to act, every hand, the loose cards, every pile (its
visible card, size, points and rank contents), the run in progress, the cards left in the deck by
rank, who confirmed the last run (R7) and the table's rule options (R2, R3, R7). Left out: the
order of the deck (which card comes to whom in the later deals: chance from every seat's point
of view) and the suits (they never matter, R1).

Counts of a rank are divided by 4 (its copies), sizes by 40, points by 244, hand sizes by 3 and
the deck by 36, as in the observation, so every entry lies in ``[0, 1]``.
"""
from __future__ import annotations

import numpy as np

from hod.core.layout import ObsLayout, Piece

from .cards import CARD_POINTS, COPIES_PER_RANK, DECK_SIZE, NUM_RANKS, TOTAL_POINTS
from .engine import CARDS_PER_DEAL, LOOSE_AT_START, MAX_PLAYERS, MIN_PLAYERS, RUN_CLOSED, State

#: Version of the global-state layout; bump it whenever a piece changes.
STATE_VERSION = 1
_R, _S = NUM_RANKS, MAX_PLAYERS
_DECK_MAX = DECK_SIZE - LOOSE_AT_START  # 36, as the observation's deck_left
#: The rule options in the order of the ``rules`` piece (names of ``engine.Config``).
RULE_FLAGS = ("closing_ace", "may_take_own_pile", "leftovers_to_last_runner")

#: The global-state layout (name ``robada_state``).
STATE_LAYOUT = ObsLayout("robada_state", STATE_VERSION, [
    Piece("num_players", 3, "one-hot player count (2, 3, 4)"),
    Piece("rules", 3, "1 for each rule option on: closing_ace (R2), may_take_own_pile (R3), "
                      "leftovers_to_last_runner (R7)"),
    Piece("to_act", _S, "one-hot seat to act, seat 0 first; all 0 once the game is over"),
    Piece("hands", _S * _R, "per seat (seat 0 first), cards of each rank A,2..7,Sota,Caballo,Rey in hand (hidden)",
          "/ 4"),
    Piece("hand_sizes", _S, "cards in hand per seat, seat 0 first", "/ 3"),
    Piece("loose", _R, "loose cards on the table of each rank", "/ 4"),
    Piece("pile_top", _S * _R, "per seat (seat 0 first), one-hot rank of the pile's visible card (all 0: empty pile)"),
    Piece("pile_size", _S, "cards in each seat's pile, seat 0 first", "/ 40"),
    Piece("pile_points", _S, "points in each seat's pile = its score so far (R8), seat 0 first", "/ 244"),
    Piece("pile_ranks", _S * _R, "per seat (seat 0 first), cards of each rank in its pile", "/ 4"),
    Piece("run_active", 1, "1 while a run is in progress"),
    Piece("run_start", _R, "one-hot rank the run started with"),
    Piece("run_rank", _R, "one-hot rank of the run's latest step"),
    Piece("run_next", _R, "one-hot rank the run needs next (all 0: no run, or closed)"),
    Piece("run_closed", 1, "1 when the run can go no further (closed by the Ace after the Rey, R2)"),
    Piece("run_gathered", _R, "cards of each rank gathered by the run (piles taken included)", "/ 4"),
    Piece("run_size", 1, "cards gathered by the run", "/ 40"),
    Piece("run_points", 1, "points gathered by the run", "/ 244"),
    Piece("run_piles_taken", _S, "1 for each seat (seat 0 first) whose pile the run has taken"),
    Piece("deck_left", 1, "cards left in the deck", "/ 36"),
    Piece("deck_ranks", _R, "cards of each rank left in the deck (hidden; not their order)", "/ 4"),
    Piece("last_runner", _S, "one-hot seat (seat 0 first) that confirmed the last run (R7); all 0: nobody"),
])
#: Length of the global-state vector.
STATE_SIZE = STATE_LAYOUT.size
_O = {p.name: STATE_LAYOUT.offsets[p.name].start for p in STATE_LAYOUT.pieces}
#: Upper bounds of each entry (float32 (STATE_SIZE,), all 1); every lower bound is 0.
STATE_HIGH = np.ones(STATE_SIZE, np.float32)
STATE_HIGH.setflags(write=False)


#: Rank of each card id.
_RANK_OF = tuple(c % _R for c in range(DECK_SIZE))


def encode_state(s: State) -> np.ndarray:
    """The global state of ``s`` (the layout :data:`STATE_LAYOUT`), read from the engine state's
    public fields (``hands``, ``loose``, ``piles``, ``points``, ``current``, ``run``,
    ``run_start``, ``run_rank``, ``run_next``, ``run_taken``, ``deck``, ``last_runner``,
    ``terminal``, ``config``).

    Args:
        s: the engine state (:class:`robada_env.rules.engine.State`), n = ``s.n`` seats.

    Returns:
        float32 array of shape ``(STATE_SIZE,)`` (a fresh array), entries in ``[0, 1]``: each
        value is the Python expression of the layout table (e.g. ``count / 4``) rounded once to
        float32.
    """
    n = s.n
    rank_of = _RANK_OF
    q = 1.0 / COPIES_PER_RANK
    idx: list[int] = []
    val: list[float] = []
    add_i, add_v = idx.append, val.append

    def counts(base: int, cards) -> None:        # cards of each rank among ``cards``, / 4
        cnt = [0] * _R
        for c in cards:
            cnt[rank_of[c]] += 1
        for r, k in enumerate(cnt):
            if k:
                add_i(base + r); add_v(k * q)

    add_i(_O["num_players"] + n - MIN_PLAYERS); add_v(1.0)
    cfg = s.config
    for k, name in enumerate(RULE_FLAGS):
        if getattr(cfg, name):
            add_i(_O["rules"] + k); add_v(1.0)
    if not s.terminal:
        add_i(_O["to_act"] + s.current); add_v(1.0)
    for i in range(n):
        hand = s.hands[i]
        if hand:
            counts(_O["hands"] + i * _R, hand)
            add_i(_O["hand_sizes"] + i); add_v(len(hand) / CARDS_PER_DEAL)
        pile = s.piles[i]
        if pile:
            add_i(_O["pile_top"] + i * _R + rank_of[pile[-1]]); add_v(1.0)
            add_i(_O["pile_size"] + i); add_v(len(pile) / DECK_SIZE)
            add_i(_O["pile_points"] + i); add_v(s.points[i] / TOTAL_POINTS)
            counts(_O["pile_ranks"] + i * _R, pile)
    counts(_O["loose"], s.loose)
    if s.run:
        add_i(_O["run_active"]); add_v(1.0)
        add_i(_O["run_start"] + s.run_start); add_v(1.0)
        add_i(_O["run_rank"] + s.run_rank); add_v(1.0)
        if s.run_next != RUN_CLOSED:
            add_i(_O["run_next"] + s.run_next); add_v(1.0)
        else:  # closed by the Ace after the Rey (R2)
            add_i(_O["run_closed"]); add_v(1.0)
        counts(_O["run_gathered"], s.run)
        add_i(_O["run_size"]); add_v(len(s.run) / DECK_SIZE)
        add_i(_O["run_points"]); add_v(sum(CARD_POINTS[c] for c in s.run) / TOTAL_POINTS)
        for t in s.run_taken:
            add_i(_O["run_piles_taken"] + t); add_v(1.0)
    if s.deck:
        add_i(_O["deck_left"]); add_v(len(s.deck) / _DECK_MAX)
        counts(_O["deck_ranks"], s.deck)
    if s.last_runner >= 0:
        add_i(_O["last_runner"] + s.last_runner); add_v(1.0)
    out = np.zeros(STATE_SIZE, np.float32)
    out.put(idx, val)
    return out
