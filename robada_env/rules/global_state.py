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

from typing import TYPE_CHECKING, Optional

import numpy as np

from hod.core.layout import ObsLayout, Piece

from .cards import COPIES_PER_RANK, DECK_SIZE, NUM_RANKS, TOTAL_POINTS
from .engine import CARDS_PER_DEAL, LOOSE_AT_START, MAX_PLAYERS, MIN_PLAYERS, RUN_CLOSED, Config, State

if TYPE_CHECKING:
    from .batched import BatchedRobadaState

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


def encode_state_batch(record: "BatchedRobadaState", config: Config, games: Optional[np.ndarray] = None,
                       out: Optional[np.ndarray] = None) -> np.ndarray:
    """The global state (the layout :data:`STATE_LAYOUT`) of every game of a batched state record:
    the one definition of the layout, which :func:`encode_state` (one position) and the batched
    engine (:meth:`robada_env.rules.batched.BatchedRobada.global_state`) both call.

    Args:
        record: a :class:`robada_env.rules.batched.BatchedRobadaState` of B games with ``n =
            config.num_players`` seats (the fields of its table: ``hand_cnt``, ``pile_cnt`` int8
            (B, n, 10), ``deck`` int8 (B, 40), ``deck_left``, ``current``, ``last_runner``, the
            ``run_*`` fields, ``terminal`` bool (B,), ...).
        config: the games' :class:`robada_env.rules.engine.Config` (player count, rule options).
        games: int indices (G,) of the games to encode, or None (all B, G = B).
        out: None, or a float32 (G, STATE_SIZE) buffer to write into (every entry is written).

    Returns:
        float32 (G, STATE_SIZE), entries in ``[0, 1]``: each value is the expression of the layout
        table (e.g. ``count / 4``) computed in float64 and rounded once to float32 (ronda_robada.txt;
        RULINGS R1-R9: the deck's ranks, not its order; no suits, R1).
    """
    n = config.num_players
    sel = slice(None) if games is None else np.asarray(games, np.intp)
    r = record
    cur = r.current[sel].astype(np.int64)
    G = cur.shape[0]
    if out is None:
        out = np.zeros((G, STATE_SIZE), np.float32)
    else:
        out[...] = 0.0
    rows = np.arange(G)
    q = 1.0 / COPIES_PER_RANK
    out[:, _O["num_players"] + n - MIN_PLAYERS] = 1.0
    for k, name in enumerate(RULE_FLAGS):
        if getattr(config, name):
            out[:, _O["rules"] + k] = 1.0
    live = np.flatnonzero(~r.terminal[sel])
    out[live, _O["to_act"] + cur[live]] = 1.0
    out[:, _O["hands"]:_O["hands"] + n * _R] = r.hand_cnt[sel].reshape(G, n * _R) * q
    out[:, _O["hand_sizes"]:_O["hand_sizes"] + n] = r.hand_size[sel] / CARDS_PER_DEAL
    out[:, _O["loose"]:_O["loose"] + _R] = r.loose_cnt[sel] * q
    top = r.pile_top[sel].astype(np.int64)                   # (G, n) card id, -1 empty
    g_i, s_i = np.nonzero(top >= 0)
    out[g_i, _O["pile_top"] + s_i * _R + top[g_i, s_i] % _R] = 1.0
    out[:, _O["pile_size"]:_O["pile_size"] + n] = r.pile_size[sel] / DECK_SIZE
    out[:, _O["pile_points"]:_O["pile_points"] + n] = r.pile_pts[sel] / TOTAL_POINTS
    out[:, _O["pile_ranks"]:_O["pile_ranks"] + n * _R] = r.pile_cnt[sel].reshape(G, n * _R) * q
    run = np.flatnonzero(r.run_active[sel])
    if run.size:
        out[run, _O["run_active"]] = 1.0
        out[run, _O["run_start"] + r.run_start[sel][run].astype(np.int64)] = 1.0
        out[run, _O["run_rank"] + r.run_rank[sel][run].astype(np.int64)] = 1.0
        nxt = r.run_next[sel][run].astype(np.int64)
        going = nxt != RUN_CLOSED
        out[run[going], _O["run_next"] + nxt[going]] = 1.0
        out[run[~going], _O["run_closed"]] = 1.0          # closed by the Ace after the Rey (R2)
        out[run, _O["run_gathered"]:_O["run_gathered"] + _R] = r.run_cnt[sel][run] * q
        out[run, _O["run_size"]] = r.run_size[sel][run] / DECK_SIZE
        out[run, _O["run_points"]] = r.run_pts[sel][run] / TOTAL_POINTS
        out[run, _O["run_piles_taken"]:_O["run_piles_taken"] + n] = r.run_taken[sel][run]
    left = r.deck_left[sel].astype(np.int64)
    out[:, _O["deck_left"]] = left / _DECK_MAX
    deck = r.deck[sel].astype(np.int64) % _R                  # (G, 40) ranks in dealing order
    still = np.arange(DECK_SIZE) >= DECK_SIZE - left[:, None]  # the cards not dealt yet
    cnt = np.zeros((G, _R), np.int64)
    np.add.at(cnt, (np.broadcast_to(rows[:, None], deck.shape)[still], deck[still]), 1)
    out[:, _O["deck_ranks"]:_O["deck_ranks"] + _R] = cnt * q
    lr = r.last_runner[sel].astype(np.int64)
    who = np.flatnonzero(lr >= 0)
    out[who, _O["last_runner"] + lr[who]] = 1.0
    return out


def encode_state(s: State) -> np.ndarray:
    """The global state of ``s`` (the layout :data:`STATE_LAYOUT`): :func:`encode_state_batch` of
    its one-game record (``s.record``, a batch of one), so one position and a batch are encoded by
    the same code.

    Args:
        s: the engine state (:class:`robada_env.rules.engine.State`), n = ``s.n`` seats.

    Returns:
        float32 array of shape ``(STATE_SIZE,)`` (a fresh array), entries in ``[0, 1]`` (the values
        of :func:`encode_state_batch`).
    """
    return encode_state_batch(s.record, s.config)[0]
