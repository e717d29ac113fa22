"""The batched Ronda Robada engine: B games in one state record, stepped by the compiled kernels
of :mod:`robada_env.rules.kernels` (one game per kernel call, a loop over the games in compiled
code).

Same rules as the single-game engine :mod:`robada_env.rules.engine` (ronda_robada.txt, RULINGS
R1-R8), with its documented choices and its :class:`~robada_env.rules.engine.Config` (rule
options ``closing_ace`` R2, ``may_take_own_pile`` R3, ``leftovers_to_last_runner`` R7):
``tests/games/test_robada_batched.py`` plays thousands of seeded games through this engine, the
single-game engine and the earlier numpy batched engine (kept as the oracle
``tests/oracles/robada_batched.py``) and requires identical states, masks, observations of every
seat, rewards and scores at every step, bit for bit. This module holds the deals (numpy,
:mod:`hod.core.deal`), the checks of the arguments and the rewards (:mod:`hod.core.rewards`);
the rules are the kernels'.

* the same ``Discrete(27)`` actions (:mod:`robada_env.rules.actions`), one per game per step, for
  the seat to act in that game (a turn is several decisions: ``start``, ``tap``/``take``...,
  ``confirm``; or one ``drop``);
* which copy of a rank is used: the first in hand order (deal order), so the visible card of a
  pile is the same card id (suit included) as in the single engine. Loose cards, piles and runs
  are kept as rank counts: suits never matter for the rules (R1) and the order of the cards
  under a visible card is never observable.

State (the record :class:`BatchedRobadaState`, ``engine.state``; its arrays are also the engine's
read-only attributes of the same names; B = ``batch_size``, n = ``num_players``, every field has
the batch axis first; card ids 0..39 as in :mod:`robada_env.rules.cards`, -1 for "none"):

==============  =============  ==================================================================
field           dtype, shape   meaning
==============  =============  ==================================================================
deck            int8 (B, 40)   the shuffled deck in dealing order (the game's whole deal)
deck_left       int8 (B,)      cards still to deal; the next one is ``deck[b, 40 - deck_left]``
hand_cards      int8 (B,n,3)   hand cards in deal order, -1 for a slot already played
hand_cnt        int8 (B,n,10)  cards of each rank in each hand
hand_size       int8 (B, n)    cards in each hand
hand_total      int8 (B,)      cards in all hands
loose_cnt       int8 (B, 10)   loose cards of each rank on the table
pile_cnt        int8 (B,n,10)  cards of each rank in each pile
pile_top        int8 (B, n)    visible card id of each pile, -1 for an empty pile
pile_size       int8 (B, n)    cards in each pile
pile_pts        int16 (B, n)   points in each pile (the score so far, R8)
seen_cnt        int8 (B, 10)   cards of each rank seen by everyone (loose, piles, run; R9)
run_cnt         int8 (B, 10)   cards of each rank gathered by the run in progress
run_card        int8 (B,)      the hand card that started the run (-1: no run)
run_start       int8 (B,)      rank the run started with (-1: no run)
run_rank        int8 (B,)      rank of the run's latest step (-1: no run)
run_next        int8 (B,)      rank the run needs next (-1: no run or closed, R2)
run_active      bool (B,)      a run is in progress
run_size        int8 (B,)      cards gathered by the run
run_pts         int16 (B,)     points gathered by the run
run_taken       bool (B, n)    seats whose piles the run has taken
current         int8 (B,)      seat to act (after the end: the seat after the last actor)
last_runner     int8 (B,)      seat that confirmed the last run, -1 nobody (R7)
terminal        bool (B,)      the game is over
decisions       int16 (B,)     decisions played in the game so far
==============  =============  ==================================================================

That is ``85 + 29 n`` bytes per game (201 B at 4 players); the mask and observation buffers add
``27 + 4 * 192`` bytes per game (:meth:`BatchedRobada.nbytes`).

Deal: each game has its own seed (``reset(seeds=...)``, else drawn from the engine's
generator) and its deck order is :func:`hod.core.deal.shuffled` of it, the very function
:func:`robada_env.rules.engine.new_game` deals with: game ``i`` reset with seed ``s`` is
``new_game(config, seed=s)``.

Interface: :class:`hod.core.engine.BatchedEngine`, the protocol both games' batched engines
implement with one signature (M = 1 mover: the seat to act; masks (G, 1, 27), observations
(G, S, 192), actions (G, 1)); also ``random_legal_actions``, ``final_rewards``, ``current``,
and the auto-reset step ``step(actions, auto_reset=True, observe=...)`` (finished games dealt
again inside the step's kernel, from :func:`robada_env.rules.kernels.next_game_seed` of their
deck; :attr:`BatchedRobada.ended_scores`).
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Optional, Sequence

import numpy as np

from hod.core.deal import as_seeds, check_generator_seed, draw_seeds, shuffled
from hod.core.engine import EngineStep, StateRecord, check_games, check_record, check_seats, observation_buffer
from hod.core.errors import ConfigError, IllegalActionError, check_choice
from hod.core.jit import parallel_for
from hod.core.rewards import REWARD_SCHEMES, final_rewards_batch, win_shares_batch

from . import kernels
from .actions import NOOP, NUM_ACTIONS, action_name
from .cards import COPIES_PER_RANK, DECK_SIZE, NUM_RANKS, RANK_POINTS
from .engine import CARDS_PER_DEAL, LOOSE_AT_START, MAX_GAME_LENGTH, Config
from .observation import OBS_SIZE

__all__ = ["BatchedRobada", "BatchedRobadaState", "BatchedRobadaStep", "random_legal_actions", "batched_final_rewards",
           "win_shares", "state_record", "redraw_future", "NAME"]

#: Short game name (the benchmark and training registries key on it).
NAME = "robada"

#: The card ids in order (what a deal shuffles).
_CARD_IDS = np.arange(DECK_SIZE, dtype=np.int8)
#: Points of each rank (R8), for the checks of :meth:`BatchedRobada.load_state`.
_PTS = np.array(RANK_POINTS, np.int64)
#: Bytes of state per game: fixed part and part per seat (see the module docstring).
_STATE_BYTES_FIXED = 40 + 1 + 1 + 10 + 10 + 10 + 1 + 1 + 1 + 1 + 1 + 1 + 2 + 1 + 1 + 1 + 2
_STATE_BYTES_PER_SEAT = 3 + 10 + 1 + 10 + 1 + 1 + 2 + 1


def random_legal_actions(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of ``mask`` (one uniform draw per row: the
    k-th legal action, k = floor(u * count)).

    Args:
        mask: int8 or bool (B, NUM_ACTIONS), at least one legal action per row.
        rng: numpy Generator.

    Returns:
        int64 (B,) actions with ``mask[b, a[b]] == 1``.

    Raises:
        ValueError: a row allows no action.
    """
    cs = np.cumsum(np.asarray(mask), axis=1, dtype=np.int16)             # running count of legal actions
    cnt = cs[:, -1]
    if cnt.size and cnt.min() <= 0:
        raise ValueError(f"row {int(np.argmin(cnt))} of the mask allows no action")
    k = (rng.random(cnt.size) * cnt).astype(np.int16)       # pick the k-th legal action (0-based)
    return (cs <= k[:, None]).sum(1, dtype=np.int64)


def batched_final_rewards(scores: np.ndarray, scheme: str) -> np.ndarray:
    """Final reward of every seat of every game: :func:`hod.core.rewards.final_rewards_batch`
    with Ronda Robada's winners (R8: every seat with the highest score; a tie is a shared win).

    Args:
        scores: int (G, n) final points.
        scheme: one of :data:`hod.core.rewards.REWARD_SCHEMES`.

    Returns:
        float64 (G, n), equal to ``final_rewards(scores[g], winners, scheme)`` for each game g.

    Raises:
        ConfigError: unknown scheme.
    """
    s = np.asarray(scores)
    return final_rewards_batch(s, s == s.max(1, keepdims=True), scheme)


def win_shares(scores: np.ndarray) -> np.ndarray:
    """Share of a win per seat (float64 (G, n)): 1/k to each of k tied winners (R8), else 0."""
    s = np.asarray(scores)
    return win_shares_batch(s == s.max(1, keepdims=True))


#: What :meth:`BatchedRobada.step` returns: :class:`hod.core.engine.EngineStep` (rewards: every
#: seat's final reward in the games that ended with this step, 0 elsewhere; ``round_over`` is
#: ``game_over``: the game is one scoring round).
BatchedRobadaStep = EngineStep


@dataclass
class BatchedRobadaState(StateRecord):
    """The state record of B games (fields, dtypes and shapes: the module docstring's table).
    ``engine.state`` holds the engine's live arrays; ``copy()`` / ``take(games)`` copy them."""

    deck: np.ndarray
    deck_left: np.ndarray
    hand_cards: np.ndarray
    hand_cnt: np.ndarray
    hand_size: np.ndarray
    hand_total: np.ndarray
    loose_cnt: np.ndarray
    pile_cnt: np.ndarray
    pile_top: np.ndarray
    pile_size: np.ndarray
    pile_pts: np.ndarray
    seen_cnt: np.ndarray
    run_cnt: np.ndarray
    run_card: np.ndarray
    run_start: np.ndarray
    run_rank: np.ndarray
    run_next: np.ndarray
    run_active: np.ndarray
    run_size: np.ndarray
    run_pts: np.ndarray
    run_taken: np.ndarray
    current: np.ndarray
    last_runner: np.ndarray
    terminal: np.ndarray
    decisions: np.ndarray

    @classmethod
    def empty(cls, batch: int, num_players: int) -> "BatchedRobadaState":
        """B games not dealt yet: no cards anywhere, no run, nobody ran, every game over."""
        B, n, i8 = batch, num_players, np.int8
        return cls(
            deck=np.zeros((B, DECK_SIZE), i8), deck_left=np.zeros(B, i8),
            hand_cards=np.full((B, n, CARDS_PER_DEAL), -1, i8), hand_cnt=np.zeros((B, n, NUM_RANKS), i8),
            hand_size=np.zeros((B, n), i8), hand_total=np.zeros(B, i8), loose_cnt=np.zeros((B, NUM_RANKS), i8),
            pile_cnt=np.zeros((B, n, NUM_RANKS), i8), pile_top=np.full((B, n), -1, i8),
            pile_size=np.zeros((B, n), i8), pile_pts=np.zeros((B, n), np.int16),
            seen_cnt=np.zeros((B, NUM_RANKS), i8), run_cnt=np.zeros((B, NUM_RANKS), i8),
            run_card=np.full(B, -1, i8), run_start=np.full(B, -1, i8), run_rank=np.full(B, -1, i8),
            run_next=np.full(B, -1, i8), run_active=np.zeros(B, bool), run_size=np.zeros(B, i8),
            run_pts=np.zeros(B, np.int16), run_taken=np.zeros((B, n), bool), current=np.zeros(B, i8),
            last_runner=np.full(B, -1, i8), terminal=np.ones(B, bool), decisions=np.zeros(B, np.int16),
        )


_STATE_FIELDS = tuple(f.name for f in fields(BatchedRobadaState))
#: The fields the observation kernel reads, in its argument order.
_OBS_FIELDS = ("deck_left", "hand_cnt", "hand_size", "loose_cnt", "pile_cnt", "pile_top", "pile_size", "pile_pts",
               "seen_cnt", "run_cnt", "run_start", "run_rank", "run_next", "run_active", "run_size", "run_pts",
               "run_taken", "current", "last_runner", "terminal")
#: The fields the mask kernel reads, in its argument order.
_MASK_FIELDS = ("hand_cnt", "loose_cnt", "pile_top", "run_next", "run_active", "current", "terminal")


class BatchedRobada:
    """``batch_size`` games of Ronda Robada with the same :class:`~robada_env.rules.engine.Config`
    (:class:`hod.core.engine.BatchedEngine`, M = 1 mover: the seat to act).

    Args:
        config: a :class:`~robada_env.rules.engine.Config` (rules options R2, R3, R7) or a
            player count 2..4.
        batch_size: B >= 1.
        seed: seed of the engine's own generator (the games' seeds when :meth:`reset` is not
            given them, :meth:`random_actions`).
        reward_scheme: one of :data:`hod.core.rewards.REWARD_SCHEMES` (rewards of :meth:`step`).
        **rules: options of ``Config`` when ``config`` is a player count.

    Raises:
        ConfigError: bad batch size, player count, option or scheme (names the legal values).

    Call :meth:`reset` before anything else. The state fields (module docstring) are readable
    as attributes (``engine.current``, ``engine.pile_pts``, ...): the live arrays, do not write
    to them (use :meth:`load_state`).
    """

    name = NAME
    num_actions = NUM_ACTIONS
    max_game_length = MAX_GAME_LENGTH
    obs_size = OBS_SIZE
    #: one seat decides on each step: the seat to act (``current``)
    movers = 1
    #: Batches of at least this many games are stepped, reset and observed by the parallel
    #: drivers (:func:`robada_env.rules.kernels.step_batch_par`, ``reset_batch_par``,
    #: ``observe_batch_par``: numba's threads, ``numba.set_num_threads``) when numba has more
    #: than one thread (:func:`hod.core.jit.parallel_for`); None (the default) = never. The
    #: results are the same either way, bit for bit.
    parallel_min_batch: Optional[int] = None

    def __init__(self, config: int | Config | None, batch_size: int, seed: Optional[int] = None,
                 reward_scheme: str = "points", **rules) -> None:
        if not isinstance(config, Config):
            unknown = set(rules) - set(Config.option_names())
            if unknown:
                raise ConfigError(f"unknown option(s) {sorted(unknown)}; legal options: {Config.option_names()}")
            config = Config(num_players=2 if config is None else config, **rules)
        elif rules:
            raise ConfigError("give either config or rules options, not both")
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
            raise ConfigError(f"batch_size={batch_size!r} must be a positive integer")
        B = int(batch_size)
        check_choice("reward_scheme", reward_scheme, REWARD_SCHEMES)
        self.config = config
        self.reward_scheme = reward_scheme
        check_generator_seed(seed)
        self.rng = np.random.default_rng(seed)
        self.batch_size = B
        self.num_players = n = config.num_players
        self._state = BatchedRobadaState.empty(B, n)
        # the kernels' arguments: the record's arrays, never replaced (load_state and the kernels
        # write into them), so the tuples stay valid (copies and pickles keep them shared)
        self._all_args = self._args(_STATE_FIELDS)
        self._obs_args = self._args(_OBS_FIELDS)
        self._mask_args = self._args(_MASK_FIELDS)
        self._rules = kernels.rules_array(config)
        self._all = np.arange(B, dtype=np.intp)
        self._to_act = np.full(1, -1, np.intp)                 # observe's default: the seat to act
        #: the legal mask of every game, kept current by the kernels (a game not dealt: no-op only)
        self._mask = np.zeros((B, 1, NUM_ACTIONS), np.int8)
        self._mask[:, 0, NOOP] = 1
        self._obs_buffers: dict[tuple, np.ndarray] = {}
        self._obs_default = self._obs_buffers[(B, 1, OBS_SIZE)] = np.zeros((B, 1, OBS_SIZE), np.float32)
        self._ended = np.zeros(B, bool)
        self._final = np.zeros((B, n), np.int16)                 # final points of an auto-reset step
        self._no_obs = np.zeros((0, 1, OBS_SIZE), np.float32)
        self._obs_fresh = False                                 # _obs_default is the state's (step(observe=True))
        self._ended_final = None                                # those of the last one's ended games
        # the auto-reset drivers' scratch space: one row per chunk of the parallel driver
        self._nums = np.zeros(((B + kernels.PAR_CHUNK - 1) // kernels.PAR_CHUNK, DECK_SIZE), np.uint64)
        self._zero_rewards = np.zeros((B, n))
        self._no_games = np.zeros(B, bool)
        self._no_games.setflags(write=False)
        self._zero_rewards.setflags(write=False)
        self._reset_called = False

    @property
    def state(self) -> BatchedRobadaState:
        """The games' :class:`BatchedRobadaState` (the engine's live arrays: ``copy()`` it to keep it)."""
        return self._state

    @property
    def terminal(self) -> np.ndarray:
        """bool (B,): each game is over (the live array: read it, do not write to it)."""
        return self._state.terminal

    def _args(self, names: Sequence[str]) -> tuple:
        s = self._state
        return tuple(getattr(s, k) for k in names)

    def load_state(self, state: BatchedRobadaState, games: Optional[Sequence[int]] = None) -> None:
        """Put the G games of ``state`` (e.g. another engine's ``state.take(...)``) into rows
        ``games`` (None = all, G = B): they play on exactly as where they came from.

        Raises:
            ConfigError: a record of another type, game count or shape, repeated games, or
                values no game reaches (:meth:`_check_values`); nothing is changed.
        """
        g = check_games(games, self.batch_size)
        check_record(state, self._state, g)
        self._check_values(state)
        self._obs_fresh = False
        for k, arr in state.arrays().items():
            getattr(self._state, k)[g] = arr
        kernels.refresh_masks(*self._mask_args, g, self._rules, self._mask)
        self._reset_called = True

    def _check_values(self, st: BatchedRobadaState) -> None:
        """Refuse a record whose values no game of this engine's config reaches, before any
        kernel reads it (the kernels index arrays by these numbers): the deck a permutation of the
        40 cards, the cards still to deal a multiple of a deal (R6), the hands the cards of the last
        deal not yet played (slot by slot), counts, sizes and points that agree with each other,
        each rank's 4 cards somewhere (hands, table, piles, run, deck), seen = table + piles + run,
        a run's fields consistent with the run order of the config (R2), seats in 0..n-1 (the last
        runner -1 too), a finished game with nothing left to deal or play.

        Raises:
            ConfigError: naming the field, the first bad game of the record and the legal values.
        """
        n, G, R = self.num_players, st.batch_size, NUM_RANKS
        if G == 0:
            return
        i64 = np.int64
        deal = CARDS_PER_DEAL * n

        def refuse(field: str, bad: np.ndarray, legal: str) -> None:
            k = int(np.flatnonzero(bad)[0])
            raise ConfigError(f"state record: {field} of game {k} is impossible; legal: {legal} (nothing is changed)")

        deck = st.deck.astype(i64)
        bad = (np.sort(deck, axis=1) != np.arange(DECK_SIZE)).any(axis=1)
        if bad.any():
            refuse("deck", bad, f"a permutation of the card ids 0..{DECK_SIZE - 1}")
        left = st.deck_left.astype(i64)
        bad = (left < 0) | (left > DECK_SIZE - LOOSE_AT_START - deal) | ((DECK_SIZE - LOOSE_AT_START - left) % deal != 0)
        if bad.any():
            refuse("deck_left", bad, f"{DECK_SIZE - LOOSE_AT_START} - {deal} * k for k = 1, 2, ... (whole deals, R6)")
        for name, lo in (("current", 0), ("last_runner", -1)):
            v = getattr(st, name).astype(i64)
            if ((v < lo) | (v >= n)).any():
                refuse(name, (v < lo) | (v >= n), f"{lo}..{n - 1}")
        dec = st.decisions.astype(i64)
        if ((dec < 0) | (dec > MAX_GAME_LENGTH)).any():
            refuse("decisions", (dec < 0) | (dec > MAX_GAME_LENGTH), f"0..{MAX_GAME_LENGTH}")
        # hands: slot j of seat i holds the card the last deal gave it, or -1 once played
        first = (DECK_SIZE - left - deal)[:, None] + np.arange(deal)
        dealt = np.take_along_axis(deck, first, axis=1).reshape(G, n, CARDS_PER_DEAL)
        hc = st.hand_cards.astype(i64)
        bad = ((hc != dealt) & (hc != -1)).any(axis=(1, 2))
        if bad.any():
            refuse("hand_cards", bad, "the cards the last deal gave each seat, slot by slot, or -1 once played")
        held = hc >= 0
        hcnt = (held[..., None] & (hc[..., None] % R == np.arange(R))).sum(axis=2)          # (G, n, R)
        bad = ((st.hand_cnt != hcnt).any(axis=(1, 2)) | (st.hand_size != held.sum(axis=2)).any(axis=1)
               | (st.hand_total != held.sum(axis=(1, 2))))
        if bad.any():
            refuse("hand_cnt, hand_size and hand_total", bad, "the counts of the hand cards")
        # piles
        pc, ps, pp, top = st.pile_cnt.astype(i64), st.pile_size.astype(i64), st.pile_pts.astype(i64), st.pile_top.astype(i64)
        ok = (pc >= 0).all(axis=2) & (ps == pc.sum(axis=2)) & (pp == pc @ _PTS)
        ok &= np.where(ps == 0, top == -1, (top >= 0) & (top < DECK_SIZE))
        shown = np.take_along_axis(pc, np.maximum(top, 0)[..., None] % R, axis=2)[..., 0]
        ok &= (top < 0) | (shown >= 1)
        if not ok.all():
            refuse("pile_cnt, pile_size, pile_pts and pile_top", ~ok.all(axis=1),
                   "counts >= 0, their size and points, a visible card of a rank in the pile (-1 only when empty)")
        # the run
        rc, act = st.run_cnt.astype(i64), st.run_active
        rstart, rrank, rnext = st.run_start.astype(i64), st.run_rank.astype(i64), st.run_next.astype(i64)
        rcard, rsize, rpts = st.run_card.astype(i64), st.run_size.astype(i64), st.run_pts.astype(i64)
        after_start = self._rules[kernels.R_AFTER_START:kernels.R_AFTER_START + R].astype(i64)
        after_step = self._rules[kernels.R_AFTER_STEP:kernels.R_AFTER_STEP + R].astype(i64)
        in_rank = (rstart >= 0) & (rstart < R) & (rrank >= 0) & (rrank < R)
        rs0, rr0 = np.where(in_rank, rstart, 0), np.where(in_rank, rrank, 0)
        nxt_ok = (rnext == after_step[rr0]) | ((rrank == rstart) & (rnext == after_start[rs0]))
        run_ok = (in_rank & nxt_ok & (rcard >= 0) & (rcard < DECK_SIZE) & (rcard % R == rstart) & (rsize >= 2)
                  & (rc >= 0).all(axis=1) & (rsize == rc.sum(axis=1)) & (rpts == rc @ _PTS)
                  & ~(st.run_taken & (ps > 0)).any(axis=1))
        no_run = ((rcard == -1) & (rstart == -1) & (rrank == -1) & (rnext == -1) & (rsize == 0) & (rpts == 0)
                  & (rc == 0).all(axis=1) & ~st.run_taken.any(axis=1))
        bad = np.where(act, ~run_ok, ~no_run)
        if bad.any():
            refuse("run_*", bad, "a run whose fields agree (rank order R2, counts, size, points, piles taken now "
                   "empty), or no run (-1 and zeros)")
        # every rank's 4 cards: hands + table + piles + run + the deck still to deal; seen = table + piles + run
        lc, seen = st.loose_cnt.astype(i64), st.seen_cnt.astype(i64)
        rest = np.arange(DECK_SIZE) >= (DECK_SIZE - left)[:, None]
        undealt = (rest[..., None] & (deck[..., None] % R == np.arange(R))).sum(axis=1)
        public = lc + pc.sum(axis=1) + rc
        bad = ((lc < 0).any(axis=1) | (seen != public).any(axis=1)
               | (public + hcnt.sum(axis=1) + undealt != COPIES_PER_RANK).any(axis=1))
        if bad.any():
            refuse("loose_cnt and seen_cnt", bad, f"{COPIES_PER_RANK} cards of each rank in all, seen = table + piles + run")
        # in play: the seat to act holds a card unless its run goes on; over: nothing left to deal or play
        term = st.terminal
        acting = np.take_along_axis(st.hand_size.astype(i64), st.current.astype(np.intp)[:, None], axis=1)[:, 0]
        bad = np.where(term, (left != 0) | (st.hand_total != 0) | act, (acting == 0) & ~act)
        if bad.any():
            refuse("terminal", bad, "a game in play whose seat to act holds a card or runs; a finished one with no "
                   "card to deal or play and no run")

    # ---- sizes ---------------------------------------------------------------------------------
    @staticmethod
    def state_bytes_per_game(num_players: int) -> int:
        """Bytes of game state per game for ``num_players`` (the fields of the module docstring)."""
        return _STATE_BYTES_FIXED + _STATE_BYTES_PER_SEAT * num_players

    def nbytes(self) -> dict:
        """Memory actually held, in bytes: ``{"state": ..., "caches": ..., "per_game_state": ...,
        "per_game_total": ...}`` (caches: the mask buffer and the observation buffers made so far)."""
        state = self._state.nbytes
        caches = self._mask.nbytes + sum(b.nbytes for b in self._obs_buffers.values())
        B = self.batch_size
        return {"state": state, "caches": caches, "per_game_state": state / B,
                "per_game_total": (state + caches) / B}

    # ---- reset -----------------------------------------------------------------------------------
    def reset(self, games: Optional[Sequence[int]] = None, seeds: Optional[np.ndarray] = None,
              seed: Optional[int] = None, decks: Optional[np.ndarray] = None) -> None:
        """Shuffle and deal new games (R6): 4 loose cards, then 3 cards to each seat 0, 1, ...;
        seat 0 acts first (:func:`robada_env.rules.kernels.reset_game`).

        Args:
            games: indices (or a bool mask of shape (B,)) of the games to reset (default: all
                B); G = len(games).
            seeds: int (G,) one seed per game (0..2**64-1): game ``games[k]`` is dealt exactly
                as ``engine.new_game(config, seed=seeds[k])`` (deck order
                :func:`hod.core.deal.shuffled`). Default: seeds drawn from the engine's generator.
            seed: reseed the engine's generator first (``numpy.random.default_rng(seed)``): the
                same seed gives the same batch of deals.
            decks: explicit deck orders instead, int (G, 40), each a permutation of 0..39
                (``deck[b]`` deals like ``engine.new_game(deck=deck[b])``).

        Raises:
            ConfigError: ``decks`` of the wrong shape or not permutations of 0..39; malformed
                ``seeds``; a game index out of range (nothing is changed).
        """
        g = self._all if games is None else check_games(games, self.batch_size, distinct=True)
        m = g.size
        check_generator_seed(seed)
        if decks is None:
            if seeds is not None:
                seeds = as_seeds(seeds, m)
            if seed is not None:
                self.rng = np.random.default_rng(seed)
            decks = shuffled(_CARD_IDS, draw_seeds(self.rng, m) if seeds is None else seeds)
        else:
            decks = np.asarray(decks)
            if decks.shape != (m, DECK_SIZE) or not np.array_equal(
                    np.sort(decks, axis=1), np.broadcast_to(np.arange(DECK_SIZE), (m, DECK_SIZE))):
                raise ConfigError(f"decks must be an int array of shape ({m}, {DECK_SIZE}), "
                                  f"each row a permutation of the card ids 0..{DECK_SIZE - 1}")
            if seed is not None:
                self.rng = np.random.default_rng(seed)
        self._obs_fresh = False
        self._state.deck[g] = decks
        driver = kernels.reset_batch_par if parallel_for(self.parallel_min_batch, m) else kernels.reset_batch
        driver(*self._all_args, g, self._rules, self._mask)
        self._reset_called = True

    def _games(self, games) -> np.ndarray:
        return self._all if games is None else check_games(games, self.batch_size)

    def _check_reset(self) -> None:
        if not self._reset_called:
            raise RuntimeError("call reset() before using the batched engine")

    # ---- masks and observations ---------------------------------------------------------------
    def legal_mask(self, games: Optional[Sequence[int]] = None) -> np.ndarray:
        """int8 (G, 1, NUM_ACTIONS) legal actions of the seat to act in each game (as
        ``engine.legal_mask(state, state.current)``; a finished game allows only ``no-op``;
        :func:`robada_env.rules.kernels.mask_game`).

        The kernels keep every game's mask current (each step and reset writes the rows of its
        games again), so this reads it: without ``games``, a read-only view of that buffer, which
        the next step or reset changes (copy it to keep it); with ``games``, a new array.
        """
        self._check_reset()
        if games is None:
            view = self._mask.view()
            view.flags.writeable = False
            return view
        return self._mask[check_games(games, self.batch_size)]

    def observe(self, games: Optional[Sequence[int]] = None, seats=None,
                out: Optional[np.ndarray] = None) -> np.ndarray:
        """Observations, ``[k, j]`` equal to ``observation.encode(state of game games[k], seats[j])``
        bit for bit (:func:`robada_env.rules.kernels.observe_game`).

        Args:
            games: game indices (default: the whole batch).
            seats: S distinct seat numbers observing in every selected game (default: the seat
                to act in each game, S = 1).
            out: optional C-contiguous float32 (G, S, OBS_SIZE) array written and returned.

        Returns:
            float32 (G, S, OBS_SIZE). Without ``out``, for the whole batch, an internal buffer
            (one per seat count), overwritten by the next such call; for some games, a new array.

        Raises:
            ConfigError: bad game indices, seats or ``out``.
        """
        self._check_reset()
        if games is None and seats is None and out is None:        # the common call: one buffer
            if self._obs_fresh:                                    # written by step(observe=True)
                return self._obs_default
            driver = kernels.observe_batch_par if parallel_for(self.parallel_min_batch, self.batch_size) \
                else kernels.observe_batch
            driver(*self._obs_args, self._all, self._to_act, self._obs_default)
            return self._obs_default
        g = self._games(games)
        S = self._to_act if seats is None else check_seats(seats, self.num_players)
        out = observation_buffer(out, (g.size, S.size, OBS_SIZE), games is None, self._obs_buffers)
        driver = kernels.observe_batch_par if parallel_for(self.parallel_min_batch, g.size) else kernels.observe_batch
        driver(*self._obs_args, g, S, out)
        return out

    # ---- step ----------------------------------------------------------------------------------
    def step(self, actions: np.ndarray, games: Optional[Sequence[int]] = None,
             auto_reset: bool = False, observe: bool = False) -> EngineStep:
        """Apply one action per selected game, for the seat to act there (``engine.apply_action``;
        :func:`robada_env.rules.kernels.step_game`).

        A finished game only takes ``no-op`` (and stays finished; reset it with
        ``reset(games=...)``), unless ``auto_reset``. The other games do not change.

        Args:
            actions: int (G, 1) one action per selected game.
            games: distinct game indices or a bool mask (default: the whole batch, G = B).
            auto_reset: deal every game that ends on this step again at once, in the same kernel
                call (:func:`robada_env.rules.kernels.step_batch_auto`; the serial and the
                parallel drivers play the same games bit for bit): the new game of a row is
                ``new_game(config, seed=kernels.next_game_seed(deck of the game that ended))``,
                exactly ``reset(games=[b], seeds=[that seed])``, so the games a row plays one
                after another follow from its first deal alone. The returned rewards and
                ``game_over`` are those of the games that ended; their final points are
                :attr:`ended_scores`; the state, masks and observations are the new games'.
            observe: with ``auto_reset`` and the whole batch: the same kernel pass also writes
                each game's observation of its seat to act after the step (while the game is in
                the cache), which the next :meth:`observe` of the whole batch and the seats to
                act (no ``out``) returns instead of computing it again (the same values bit for
                bit; any later step, reset or load makes it compute again).

        Returns:
            :class:`hod.core.engine.EngineStep`: float64 (G, n) final rewards under
            ``reward_scheme`` for the games that ended with this step (0 elsewhere), and bool
            (G,) which games ended now (``round_over`` and ``game_over`` alike). Without
            ``games``, when no game ended, its arrays are shared read-only zeros.

        Raises:
            IllegalActionError: an action outside its game's mask (names the game, the seat and
                the legal actions); nothing changes in any game.
            ValueError: ``actions`` of the wrong shape or not integers.
            ConfigError: bad or repeated ``games``; ``observe`` without ``auto_reset`` or with
                ``games``.
        """
        self._check_reset()
        self._obs_fresh = False
        full = games is None
        if observe and not (auto_reset and full):
            raise ConfigError("step(observe=True) needs auto_reset=True and the whole batch (games=None)")
        g = self._all if full else check_games(games, self.batch_size, distinct=True)
        a = actions if type(actions) is np.ndarray else np.asarray(actions)
        if a.shape != (g.size, 1) or not (a.dtype.kind in "iu" or a.size == 0):
            raise ValueError(f"actions must be an int array of shape ({g.size}, 1), got {a.dtype} {a.shape}")
        if a.dtype != np.int64 or not a.flags.c_contiguous:
            a = np.ascontiguousarray(a, np.int64)      # a uint64 above 2**63 - 1 wraps negative: refused
        ended = self._ended if full else np.zeros(g.size, bool)
        par = parallel_for(self.parallel_min_batch, g.size)
        if auto_reset:
            final = self._final if full else np.empty((g.size, self.num_players), np.int16)
            driver = kernels.step_batch_auto_par if par else kernels.step_batch_auto
            res = driver(*self._all_args, g, a, self._rules, self._mask, ended, final,
                         self._nums if par else self._nums[0], self._obs_default if observe else self._no_obs)
            self._obs_fresh = observe and res < 0
        else:
            driver = kernels.step_batch_par if par else kernels.step_batch
            res = driver(*self._all_args, g, a, self._rules, self._mask, ended)
        self._ended_final = None
        if res >= 0:
            b = int(g[res])
            legal = np.flatnonzero(self.legal_mask([b])[0, 0]).tolist()
            who = (f"game {b} (finished)" if self._state.terminal[b]
                   else f"player_{int(self._state.current[b])} in game {b}")
            raise IllegalActionError(who, np.asarray(actions).reshape(-1)[res].item(), legal, action_name)
        if res == -1:                                  # no game ended
            if full:
                return EngineStep(self._zero_rewards, self._no_games, self._no_games)
            return EngineStep(np.zeros((g.size, self.num_players)), ended, ended)
        ended = ended.copy()
        pos = np.flatnonzero(ended)
        if auto_reset:
            self._ended_final = scores = final[pos]
        else:
            scores = self._state.pile_pts[g[pos]]
        rewards = np.zeros((g.size, self.num_players))
        rewards[pos] = batched_final_rewards(scores, self.reward_scheme)
        return EngineStep(rewards, ended, ended)

    @property
    def ended_scores(self) -> np.ndarray:
        """int32 (E, n): the final points (R8) of the E games that ended on the last
        ``step(..., auto_reset=True)``, in the order of that step's ``game_over`` (its
        ``np.flatnonzero``); (0, n) when none ended or the last step was not an auto-reset one."""
        if self._ended_final is None:
            return np.zeros((0, self.num_players), np.int32)
        return self._ended_final.astype(np.int32)

    # ---- results ---------------------------------------------------------------------------------
    def scores(self, games: Optional[Sequence[int]] = None) -> np.ndarray:
        """int32 (G, n) points in each pile (R8; the final scores once a game is over)."""
        return self._state.pile_pts[self._games(games)].astype(np.int32)

    def final_rewards(self, games: Optional[Sequence[int]] = None,
                      scheme: Optional[str] = None) -> np.ndarray:
        """float32 (G, n) rewards of the scores under ``scheme`` (default ``reward_scheme``)."""
        r = batched_final_rewards(self._state.pile_pts[self._games(games)], scheme or self.reward_scheme)
        return r.astype(np.float32)

    def random_legal_actions(self, rng: Optional[np.random.Generator] = None,
                             games: Optional[Sequence[int]] = None) -> np.ndarray:
        """One uniformly random legal action per selected game (int64 (G,)), drawn from ``rng``
        (default: the engine's own generator)."""
        return random_legal_actions(self.legal_mask(games)[:, 0], self.rng if rng is None else rng)

    def global_state(self, games: Optional[Sequence[int]] = None) -> np.ndarray:
        """The global state (PettingZoo's ``state()``, :mod:`robada_env.rules.global_state`) of each
        game: float32 (G, STATE_SIZE), a new array, row ``g`` equal bit for bit to
        ``encode_state`` of that game's position (:func:`~robada_env.rules.global_state.encode_state_batch`,
        the one definition of the layout). Seat-absolute (seat 0 first).

        Raises:
            ConfigError: bad games.
            RuntimeError: before the first :meth:`reset` (or :meth:`load_state`).
        """
        from .global_state import encode_state_batch   # global_state imports engine, which imports this module

        self._check_reset()
        g = None if games is None else check_games(games, self.batch_size)
        return encode_state_batch(self._state, self.config, g)

    def random_actions(self, mask: Optional[np.ndarray] = None,
                       rng: Optional[np.random.Generator] = None) -> np.ndarray:
        """Uniformly random legal actions for ``mask`` (int8 (G, 1, NUM_ACTIONS); default: the
        whole batch's mask now), as ``BatchedTapeo.random_actions``. int64 (G, 1).

        Raises:
            ValueError: a row of the mask allows no action."""
        m = (self.legal_mask() if mask is None else np.asarray(mask))[:, 0]
        return random_legal_actions(m, self.rng if rng is None else rng)[:, None]

    def __repr__(self) -> str:
        return (f"BatchedRobada({self.config}, batch_size={self.batch_size}, "
                f"reward_scheme={self.reward_scheme!r})")


def state_record(states: Sequence, config: Optional[Config] = None) -> BatchedRobadaState:
    """The :class:`BatchedRobadaState` of G positions of the single-game engine, for
    ``BatchedRobada(config, G).load_state(record)``: their one-game records
    (:attr:`robada_env.rules.engine.State.record`, the kernels' own arrays) stacked, no conversion.

    Game k is ``states[k]`` (:class:`robada_env.rules.engine.State`): its deck order (the cards
    still to deal, so every later re-deal, R6), hands, table, piles, run and seat to act, so a
    batched engine loaded with the record plays it on exactly as the single engine would (same
    masks, observations and scores for the same actions). The rule options (R2 ``closing_ace``,
    R3 ``may_take_own_pile``, R7 ``leftovers_to_last_runner``) are not in the record: they are the
    engine's :class:`~robada_env.rules.engine.Config`, so every state must play ``config``. What
    the single engine keeps beside the record (the history, which card ids lie loose or in a
    pile) is not carried: no rule reads it (R1: suits never matter). The deck's places of the last
    deal are written with the cards now in hand (a state whose hidden cards were dealt again, by
    :func:`robada_env.rules.chance.redeal` or a belief sampler, changes only the hands and the
    cards still to deal; no rule reads the places already dealt, but
    :meth:`BatchedRobada.load_state` checks them).

    Args:
        states: G >= 1 single-engine states, all with one :class:`~robada_env.rules.engine.Config`.
        config: the Config they must have (default: the first state's).

    Returns:
        a new :class:`BatchedRobadaState` of batch G (arrays of the module docstring's dtypes).

    Raises:
        ConfigError: no state, a state that is not a Ronda Robada engine state, or a state of
            another Config than ``config`` (its rule options are named with the legal ones).
    """
    states = list(states)
    if not states:
        raise ConfigError("state_record: no state given; legal: one or more robada_env.rules.engine.State")
    first = states[0]
    if not isinstance(getattr(first, "config", None), Config):
        raise ConfigError(f"state_record: {type(first).__name__} is not a robada_env.rules.engine.State")
    cfg = first.config if config is None else config
    if not isinstance(cfg, Config):
        raise ConfigError(f"state_record: config={cfg!r}; legal: a robada_env.rules.engine.Config or None")
    for k, st in enumerate(states):
        if getattr(st, "config", None) != cfg:
            raise ConfigError(f"state_record: state {k} plays {getattr(st, 'config', None)}; legal: states of one "
                              f"Config, here {cfg} (the rule options {Config.option_names()[1:]} are the engine's, "
                              f"not the record's)")
    recs = [st.record for st in states]
    rec = BatchedRobadaState(**{name: np.concatenate([getattr(r, name) for r in recs]) for name in _STATE_FIELDS})
    # the last deal's places in the deck hold the cards in hand (a state whose hidden cards were
    # dealt again, e.g. hod.evaluation.luck's re-deal or a belief sample, changed only the hands
    # and the cards still to deal: no rule reads the places already dealt, the record check does)
    n, G = cfg.num_players, len(states)
    first = DECK_SIZE - rec.deck_left.astype(np.intp) - CARDS_PER_DEAL * n
    places = first[:, None] + np.arange(CARDS_PER_DEAL * n)
    held = rec.hand_cards.reshape(G, -1) >= 0
    rows, slots = np.nonzero(held & (places >= LOOSE_AT_START))
    rec.deck[rows, places[rows, slots]] = rec.hand_cards.reshape(G, -1)[rows, slots]
    return rec


def redraw_future(record: BatchedRobadaState, seeds: np.ndarray) -> None:
    """Shuffle the cards still to deal of each game of ``record`` in place, game k's from game
    seed ``seeds[k]`` (:func:`hod.core.deal.shuffled`, the engine's shuffle): the later re-deals
    (R6) drawn afresh, as nobody has seen those cards (R9), the hands, table, piles and run kept.
    The luck correction's playouts (:mod:`hod.evaluation.luck_playout`) draw the chance still to
    come so; Tapeo's counterpart writes its record's ``seed``.

    Args:
        record: G games (``deck_left`` the same in all of them or not).
        seeds: int (G,) game seeds in 0..2**64-1.

    Raises:
        ConfigError: malformed ``seeds`` (not G ints in 0..2**64-1).
    """
    seeds = as_seeds(seeds, record.batch_size)
    left = record.deck_left.astype(np.int64)
    for k in np.unique(left):
        if k < 2:
            continue
        rows = np.flatnonzero(left == k)
        tail = record.deck[rows, DECK_SIZE - k:]
        order = shuffled(np.arange(k, dtype=np.int64), seeds[rows])          # (len(rows), k) positions
        record.deck[rows, DECK_SIZE - k:] = np.take_along_axis(tail, order.astype(np.intp), axis=1)


def _field(name: str) -> property:
    return property(lambda self: getattr(self._state, name),
                    doc=f"The live ``{name}`` array of :attr:`BatchedRobada.state` (read it; do not write to it).")


for _name in _STATE_FIELDS:
    if _name != "terminal":
        setattr(BatchedRobada, _name, _field(_name))
del _name
