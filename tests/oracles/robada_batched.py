"""Batched numpy engine of Ronda Robada: B games advanced at once.

The test oracle (tests/oracles): Ronda Robada's batched engine as it was in the package before
the compiled kernels (:mod:`robada_env.rules.kernels`) replaced it, with its observations
(:mod:`oracles.robada_batched_obs`); ``tests/games/test_robada_batched.py`` plays it in lockstep with
the compiled engine. Nothing in the package imports it.

The rules are those of the single-game engine :mod:`robada_env.rules.engine` (ronda_robada.txt,
RULINGS R1-R8), including its documented choices, and its constants are reused from there and
from :mod:`robada_env.rules.cards` (one source of truth for the rule constants):

* the same ``Discrete(27)`` actions (:mod:`robada_env.rules.actions`), one per game per step, for the
  seat to act in that game (a turn is several decisions: ``start``, ``tap``/``take``...,
  ``confirm``; or one ``drop``);
* the same deal order (4 loose cards, then blocks of 3 per seat, seat 0 first, R6), turn order
  (to the left), re-deal when every hand is empty (R6), leftovers to the last runner under the
  visible card (R7, ``Config.leftovers_to_last_runner``), ``closing_ace`` (R2) and
  ``may_take_own_pile`` (R3);
* which copy of a rank is used: the first in hand order (deal order). The visible card of a pile
  is therefore the same card id (suit included) as in the single engine. Loose cards, piles and
  runs are kept as rank counts: suits never matter for the rules (R1) and the order of the
  cards under a visible card is never observable.

The observation of a seat equals :func:`robada_env.rules.observation.encode` bit for bit (float32) and
the mask equals :func:`robada_env.rules.engine.legal_mask` for the seat to act (int8). Both are built
in batch by :mod:`oracles.robada_batched_obs`. ``tests/games/test_robada_batched.py`` plays thousands of
seeded games through both engines and requires identical states, masks, observations and
rewards at every step.

State (the record :class:`BatchedRobadaState`, ``engine.state``; its arrays are also the engine's
attributes of the same names; B = ``batch_size``, n = ``num_players``, every field has the batch
axis first; card ids 0..39 as in :mod:`robada_env.rules.cards`, -1 for "none"):

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

That is ``85 + 29 n`` bytes per game (201 B at 4 players), well under the 2 KiB target; the
observation, mask and hand caches add ``4 * 192 + 27 + 10`` bytes per game
(:meth:`BatchedRobada.nbytes`).

Deal: each game has its own seed (``reset(seeds=...)``, else drawn from the engine's
generator) and its deck order is :func:`hod.core.deal.shuffled` of it, the very function
:func:`robada_env.rules.engine.new_game` deals with: game ``i`` reset with seed ``s`` is
``new_game(config, seed=s)``.

Interface: :class:`hod.core.engine.BatchedEngine`, the protocol both games' batched engines
implement with one signature (M = 1 mover: the seat to act; masks (G, 1, 27), observations
(G, S, 192), actions (G, 1)); also ``random_legal_actions``, ``final_rewards``, ``current``.
Copies (``copy.deepcopy``, pickle) rebuild the engine's internal flat views of the state, so a
copy plays on exactly as the original.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Optional, Sequence

import numpy as np

from hod.core.deal import as_seeds, check_generator_seed, draw_seeds, shuffled
from hod.core.engine import EngineStep, StateRecord, check_games, check_record
from hod.core.errors import ConfigError, IllegalActionError, check_choice
from hod.core.rewards import REWARD_SCHEMES, final_rewards_batch, win_shares_batch

from robada_env.rules.actions import CONFIRM, DROP, NOOP, NUM_ACTIONS, START, TAKE, TAKE_SEATS, TAP, action_name
from robada_env.rules.cards import ACE, DECK_SIZE, NUM_RANKS, RANK_POINTS, REY
from robada_env.rules.engine import CARDS_PER_DEAL, LOOSE_AT_START, MAX_GAME_LENGTH, Config
from robada_env.rules.observation import OBS_SIZE
from robada_env.rules.runs import NOBODY, RUN_CLOSED, leftovers_receiver, may_take_pile, next_after_start, next_after_step

from .robada_batched_obs import encode_batch

__all__ = ["BatchedRobada", "BatchedRobadaState", "BatchedRobadaStep", "random_legal_actions", "batched_final_rewards", "win_shares", "NAME"]

#: Short game name (the benchmark and training registries key on it).
NAME = "robada"

# ---- lookup tables (built from the single engine's constants) ---------------------------------
#: Rank of each card id; index -1 (no card) gives -1.
_RANK_OF = np.array([c % NUM_RANKS for c in range(DECK_SIZE)] + [-1], np.int8)
#: One-hot rank counts of each card id (int8 (41, 10)); row -1 (no card) is zeros.
_CARD_ONEHOT = np.zeros((DECK_SIZE + 1, NUM_RANKS), np.int8)
_CARD_ONEHOT[np.arange(DECK_SIZE), np.arange(DECK_SIZE) % NUM_RANKS] = 1
#: The card ids in order (what a deal shuffles).
_CARD_IDS = np.arange(DECK_SIZE, dtype=np.int8)
#: Points of each rank (R8).
_PTS = np.array(RANK_POINTS, np.int16)
#: Points of a run just started (two cards of the rank).
_PTS2 = 2 * _PTS
#: Action kind: 0 start, 1 drop, 2 tap, 3 take, 4 confirm, 5 no-op.
_K_START, _K_DROP, _K_TAP, _K_TAKE, _K_CONFIRM, _K_NOOP = range(6)
_KIND = np.empty(NUM_ACTIONS, np.int8)
_KIND[START:DROP] = _K_START
_KIND[DROP:TAP] = _K_DROP
_KIND[TAP] = _K_TAP
_KIND[TAKE:CONFIRM] = _K_TAKE
_KIND[CONFIRM] = _K_CONFIRM
_KIND[NOOP] = _K_NOOP
#: Rank named by a start/drop action (else 0).
_ACTION_RANK = np.zeros(NUM_ACTIONS, np.int8)
_ACTION_RANK[START:DROP] = np.arange(NUM_RANKS)
_ACTION_RANK[DROP:TAP] = np.arange(NUM_RANKS)
#: Bytes of state per game: fixed part and part per seat (see the module docstring).
_STATE_BYTES_FIXED = 40 + 1 + 1 + 10 + 10 + 10 + 1 + 1 + 1 + 1 + 1 + 1 + 2 + 1 + 1 + 1 + 2
_STATE_BYTES_PER_SEAT = 3 + 10 + 1 + 10 + 1 + 1 + 2 + 1


def random_legal_actions(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of ``mask`` (one uniform draw per row).

    Args:
        mask: int8 or bool (B, NUM_ACTIONS), at least one legal action per row. Fastest when
            ``mask.T`` is C-contiguous (the masks :meth:`BatchedRobada.legal_mask` returns).
        rng: numpy Generator.

    Returns:
        int64 (B,) actions with ``mask[b, a[b]] == 1``.

    Raises:
        ValueError: a row allows no action.
    """
    mt = np.asarray(mask).T                                   # (A, B): one row per action
    cs = np.empty(mt.shape, np.int16)
    np.copyto(cs[0], mt[0], casting="unsafe")
    for j in range(1, mt.shape[0]):                           # running count of legal actions
        np.add(cs[j - 1], mt[j], out=cs[j], casting="unsafe")
    cnt = cs[-1]
    if cnt.size and cnt.min() <= 0:
        raise ValueError(f"row {int(np.argmin(cnt))} of the mask allows no action")
    k = (rng.random(cnt.size) * cnt).astype(np.int16)       # pick the k-th legal action (0-based)
    return (cs <= k).sum(0, dtype=np.int64)


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


_STATE_FIELDS = tuple(f.name for f in fields(BatchedRobadaState))


class BatchedRobada:
    """``batch_size`` games of Ronda Robada with the same :class:`~robada_env.rules.engine.Config`,
    as numpy arrays (fields in the module docstring).

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

    Call :meth:`reset` before anything else.
    """

    name = NAME
    num_actions = NUM_ACTIONS
    max_game_length = MAX_GAME_LENGTH
    obs_size = OBS_SIZE
    #: one seat decides on each step: the seat to act (``current``)
    movers = 1

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
        self.rng = np.random.default_rng(seed)
        self.batch_size = B
        self.num_players = n = config.num_players
        # rules tables from the config, built by the rule functions of robada_env.rules.runs (R2, R3)
        self._next_after_start = np.array(
            [next_after_start(r, config.closing_ace) for r in range(NUM_RANKS)], np.int8)
        # a rank reached by extension: an Ace there is the closing Ace, nothing follows (R2)
        self._next_after_step = np.array(
            [next_after_step(r, config.closing_ace) for r in range(NUM_RANKS)], np.int8)
        assert self._next_after_start[REY] in (ACE, RUN_CLOSED)
        #: relative seats k (0 = the runner) whose piles a run may take (R3)
        self._take_offsets = [k for k in range(n) if may_take_pile(k, 0, config.may_take_own_pile)]
        self._seat_next = np.array([(i + 1) % n for i in range(n)], np.int8)
        #: seat (i + k) % n at [i, k]: the seat k places to the left of seat i, int8 (n, TAKE_SEATS)
        self.seat_at_offset = np.array([[(i + k) % n for k in range(TAKE_SEATS)] for i in range(n)], np.int8)
        #: relative seat of seat t seen from seat s, at [s * (n + 1) + t + 1]; t = -1 (nobody): -1
        self.relative_seat = np.array([[-1] + [(t - s) % n for t in range(n)] for s in range(n)], np.int8).reshape(-1)
        self._deal_offsets = np.arange(n * CARDS_PER_DEAL, dtype=np.intp)
        self._arange = np.arange(B, dtype=np.intp)
        #: row of each game's seat 0 in the flat per-seat views (``g * n``), intp (B,)
        self.flat_base = self._arange * n
        # state
        i8 = np.int8
        self.deck = np.zeros((B, DECK_SIZE), i8)
        self.deck_left = np.zeros(B, i8)
        self.hand_cards = np.full((B, n, CARDS_PER_DEAL), -1, i8)
        self.hand_cnt = np.zeros((B, n, NUM_RANKS), i8)
        self.hand_size = np.zeros((B, n), i8)
        self.hand_total = np.zeros(B, i8)
        self.loose_cnt = np.zeros((B, NUM_RANKS), i8)
        self.pile_cnt = np.zeros((B, n, NUM_RANKS), i8)
        self.pile_top = np.full((B, n), -1, i8)
        self.pile_size = np.zeros((B, n), i8)
        self.pile_pts = np.zeros((B, n), np.int16)
        self.seen_cnt = np.zeros((B, NUM_RANKS), i8)
        self.run_cnt = np.zeros((B, NUM_RANKS), i8)
        self.run_card = np.full(B, -1, i8)
        self.run_start = np.full(B, -1, i8)
        self.run_rank = np.full(B, -1, i8)
        self.run_next = np.full(B, RUN_CLOSED, i8)
        self.run_active = np.zeros(B, bool)
        self.run_size = np.zeros(B, i8)
        self.run_pts = np.zeros(B, np.int16)
        self.run_taken = np.zeros((B, n), bool)
        self.current = np.zeros(B, i8)
        self.last_runner = np.full(B, NOBODY, i8)
        self.terminal = np.ones(B, bool)
        self.decisions = np.zeros(B, np.int16)
        self._bind_views()
        self._reset_called = False

    def _bind_views(self) -> None:
        """(Re)build the flat views of the state arrays and the caches (after ``__init__`` and
        after a copy: a copied view would no longer share the memory of its base)."""
        B, n, i8 = self.batch_size, self.num_players, np.int8
        # flat (B * n, ...) views of the per-seat fields: row b * n + seat (the *_flat ones are
        # read by the batched observation encoder, oracles.robada_batched_obs)
        self._hcards_f = self.hand_cards.reshape(B * n, CARDS_PER_DEAL)
        self.hand_cnt_flat = self.hand_cnt.reshape(B * n, NUM_RANKS)
        self.hand_size_flat = self.hand_size.reshape(B * n)
        self.pile_cnt_flat = self.pile_cnt.reshape(B * n, NUM_RANKS)
        self.pile_top_flat = self.pile_top.reshape(B * n)
        self.pile_size_flat = self.pile_size.reshape(B * n)
        self.pile_pts_flat = self.pile_pts.reshape(B * n)
        self.run_taken_flat = self.run_taken.reshape(B * n)
        # flat 1-D views for (row, column) updates: index row * columns + column
        self._hcards1 = self.hand_cards.reshape(-1)
        self._deck1 = self.deck.reshape(-1)
        self._hcnt1 = self.hand_cnt.reshape(-1)
        self._loose1 = self.loose_cnt.reshape(-1)
        self._seen1 = self.seen_cnt.reshape(-1)
        self._run1 = self.run_cnt.reshape(-1)
        # caches of the whole batch's mask / observation of the seats to act
        # caches of the whole batch's mask / observation / hand of the seats to act, valid while
        # their version equals ``_version`` (bumped by every step and reset); feature-major
        self._version = 0
        self._mask_t = np.zeros((NUM_ACTIONS, B), i8)
        self._mask_ver = -1
        self._obs_t = np.zeros((OBS_SIZE, B), np.float32)
        self._obs_ver = -1
        self._hand_buf = np.zeros((B, NUM_RANKS), i8)
        self._hand_ver = -1

    _VIEWS = ("_hcards_f", "hand_cnt_flat", "hand_size_flat", "pile_cnt_flat", "pile_top_flat",
              "pile_size_flat", "pile_pts_flat", "run_taken_flat", "_hcards1", "_deck1", "_hcnt1",
              "_loose1", "_seen1", "_run1", "_mask_t", "_obs_t", "_hand_buf")

    def __getstate__(self) -> dict:
        """Pickle / deepcopy: the state arrays, not the views over them (rebuilt on load)."""
        return {k: v for k, v in vars(self).items() if k not in self._VIEWS}

    def __setstate__(self, d: dict) -> None:
        self.__dict__.update(d)
        self._bind_views()
        self._version = 0

    @property
    def state(self) -> BatchedRobadaState:
        """The games' :class:`BatchedRobadaState` (the engine's live arrays: ``copy()`` it to keep it)."""
        return BatchedRobadaState(**{k: getattr(self, k) for k in _STATE_FIELDS})

    def load_state(self, state: BatchedRobadaState, games: Optional[Sequence[int]] = None) -> None:
        """Put the G games of ``state`` (e.g. another engine's ``state.take(...)``) into rows
        ``games`` (None = all, G = B): they play on exactly as where they came from.

        Raises:
            ConfigError: a record of another type, game count or shape, or repeated games
                (nothing is changed).
        """
        g = check_games(games, self.batch_size)
        check_record(state, self.state, g)
        for k, arr in state.arrays().items():
            getattr(self, k)[g] = arr                 # in place: the flat views stay valid
        self._version += 1
        self._reset_called = True

    # ---- sizes ---------------------------------------------------------------------------------
    @staticmethod
    def state_bytes_per_game(num_players: int) -> int:
        """Bytes of game state per game for ``num_players`` (the fields of the module docstring)."""
        return _STATE_BYTES_FIXED + _STATE_BYTES_PER_SEAT * num_players

    def nbytes(self) -> dict:
        """Memory actually held, in bytes: ``{"state": ..., "caches": ..., "per_game_state": ...,
        "per_game_total": ...}`` (caches: the mask and observation buffers)."""
        state = self.state.nbytes
        caches = self._mask_t.nbytes + self._obs_t.nbytes + self._hand_buf.nbytes
        B = self.batch_size
        return {"state": state, "caches": caches, "per_game_state": state / B,
                "per_game_total": (state + caches) / B}

    # ---- reset -----------------------------------------------------------------------------------
    def reset(self, games: Optional[Sequence[int]] = None, seeds: Optional[np.ndarray] = None,
              seed: Optional[int] = None, decks: Optional[np.ndarray] = None) -> None:
        """Shuffle and deal new games (R6): 4 loose cards, then 3 cards to each seat 0, 1, ...;
        seat 0 acts first.

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
                ``seeds``; a game index out of range.
        """
        g = self._games(games)
        m = g.size
        check_generator_seed(seed)
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        if decks is None:
            seeds = draw_seeds(self.rng, m) if seeds is None else as_seeds(seeds, m)
            decks = shuffled(_CARD_IDS, seeds)
        else:
            decks = np.asarray(decks)
            if decks.shape != (m, DECK_SIZE) or not np.array_equal(
                    np.sort(decks, axis=1), np.broadcast_to(np.arange(DECK_SIZE), (m, DECK_SIZE))):
                raise ConfigError(f"decks must be an int array of shape ({m}, {DECK_SIZE}), "
                                  f"each row a permutation of the card ids 0..{DECK_SIZE - 1}")
        self.deck[g] = decks
        self.deck_left[g] = DECK_SIZE - LOOSE_AT_START
        self.loose_cnt[g] = _CARD_ONEHOT[self.deck[g, :LOOSE_AT_START]].sum(1, dtype=np.int8)
        self.seen_cnt[g] = self.loose_cnt[g]
        self.pile_cnt[g] = 0
        self.pile_top[g] = -1
        self.pile_size[g] = 0
        self.pile_pts[g] = 0
        self._clear_run(g)
        self.current[g] = 0
        self.last_runner[g] = NOBODY
        self.terminal[g] = False
        self.decisions[g] = 0
        self._deal(g)
        self._version += 1
        self._reset_called = True

    def _games(self, games) -> np.ndarray:
        return self._arange if games is None else check_games(games, self.batch_size)

    def _clear_run(self, g: np.ndarray) -> None:
        self.run_cnt[g] = 0
        self.run_card[g] = -1
        self.run_start[g] = -1
        self.run_rank[g] = -1
        self.run_next[g] = RUN_CLOSED
        self.run_active[g] = False
        self.run_size[g] = 0
        self.run_pts[g] = 0
        self.run_taken[g] = False

    def _deal(self, g: np.ndarray) -> None:
        """R6: 3 cards to each seat in seat order from the top of the deck (games ``g``)."""
        if g.size == 0:
            return
        n = self.num_players
        start = g * DECK_SIZE + (DECK_SIZE - self.deck_left[g])
        cards = self._deck1[start[:, None] + self._deal_offsets]               # (m, 3n)
        self.hand_cards[g] = cards.reshape(-1, n, CARDS_PER_DEAL)
        self.hand_cnt[g] = 0
        ranks = _RANK_OF[cards]
        hcnt1 = self._hcnt1
        for i in range(n):
            row = (g * n + i) * NUM_RANKS
            for j in range(i * CARDS_PER_DEAL, (i + 1) * CARDS_PER_DEAL):
                hcnt1[row + ranks[:, j]] += 1       # one card per game: no repeated index
        self.hand_size[g] = CARDS_PER_DEAL
        self.hand_total[g] = n * CARDS_PER_DEAL
        self.deck_left[g] -= n * CARDS_PER_DEAL

    # ---- masks and observations ---------------------------------------------------------------
    def _acting_hand(self) -> np.ndarray:
        """int8 (B, 10) hand counts of the seat to act in every game (cached per position)."""
        if self._hand_ver != self._version:
            np.take(self.hand_cnt_flat, self.flat_base + self.current, axis=0, out=self._hand_buf)
            self._hand_ver = self._version
        return self._hand_buf

    def legal_mask(self, games: Optional[Sequence[int]] = None) -> np.ndarray:
        """int8 (G, 1, NUM_ACTIONS) legal actions of the seat to act in each game (as
        ``engine.legal_mask(state, state.current)``; a finished game allows only ``no-op``).

        Without ``games`` the whole batch's mask is returned: a view of an internal
        feature-major buffer (``(NUM_ACTIONS, B)`` transposed), valid until the next
        :meth:`step`/:meth:`reset` (copy it to keep it). With ``games``, a new array.
        """
        return self._mask(games)[:, None, :]

    def _mask(self, games: Optional[Sequence[int]] = None) -> np.ndarray:
        """:meth:`legal_mask` without the movers axis: int8 (G, NUM_ACTIONS)."""
        if games is None:
            if self._mask_ver != self._version:
                self._check_reset()
                self._compute_mask(None, self._mask_t)
                self._mask_ver = self._version
            return self._mask_t.T
        g = self._games(games)
        if self._mask_ver == self._version:
            return self._mask_t.T[g]
        out = np.empty((NUM_ACTIONS, g.size), np.int8)
        self._compute_mask(g, out)
        return out.T

    def _compute_mask(self, g: Optional[np.ndarray], out: np.ndarray) -> None:
        """Rules of ``engine.legal_actions``, written into ``out`` (int8 (NUM_ACTIONS, G)):
        no run -> ``start r`` (hand and loose card of rank r) and ``drop r`` (hand card of rank
        r, R4); run -> ``tap`` if a loose card of the needed rank is there, else ``take +k`` for
        each pile showing it (R3); ``confirm``; a finished game: ``no-op`` only."""
        n = self.num_players
        if g is None:
            loose, active, need, term = self.loose_cnt, self.run_active, self.run_next, self.terminal
            cur = self.current
            base = self.flat_base
            hand = self._acting_hand()
        else:
            loose, active, need, term = (self.loose_cnt[g], self.run_active[g], self.run_next[g],
                                         self.terminal[g])
            cur = self.current[g]
            base = g * n
            hand = np.take(self.hand_cnt_flat, base + cur, axis=0)
        norun = ~active
        drop = out[DROP:TAP]
        np.greater(hand.T, 0, out=drop, casting="unsafe")
        drop &= norun
        np.greater(loose.T, 0, out=out[START:DROP], casting="unsafe")
        out[START:DROP] &= drop
        open_run = need >= 0                                                   # run active, not closed
        m = need.size
        loose_need = np.take(loose.reshape(-1), np.arange(0, m * NUM_RANKS, NUM_RANKS) + np.maximum(need, 0)) > 0
        out[TAP] = open_run & loose_need
        piles_ok = open_run & ~loose_need
        out[TAKE:CONFIRM] = 0
        seat_add = self.seat_at_offset
        for k in self._take_offsets:
            top_rank = _RANK_OF[self.pile_top_flat[base + seat_add[cur, k]]]
            np.equal(top_rank, need, out=out[TAKE + k], casting="unsafe")
            out[TAKE + k] &= piles_ok
        out[CONFIRM] = active
        out[NOOP] = term

    def observe(self, games: Optional[Sequence[int]] = None, seats=None,
                out: Optional[np.ndarray] = None) -> np.ndarray:
        """Observations, ``[k, j]`` equal to ``observation.encode(state of game games[k], seats[j])``.

        Args:
            games: game indices (default: the whole batch).
            seats: S distinct seat numbers observing in every selected game (default: the seat
                to act in each game, S = 1).
            out: optional float32 (G, S, OBS_SIZE) array written and returned.

        Returns:
            float32 (G, S, OBS_SIZE). Without ``out``, for the whole batch with the default
            seat, it is a view of an internal feature-major buffer, valid until the next
            :meth:`step` or :meth:`reset` (copy it to keep it); otherwise a new array (views of
            feature-major arrays: ``np.ascontiguousarray`` gives rows).

        Raises:
            ConfigError: bad game indices, seats or ``out``.
        """
        self._check_reset()
        if seats is None:
            obs = self._observe_seats(games, None)[:, None, :]
        else:
            S = np.asarray(seats)
            n = self.num_players
            if (S.ndim != 1 or S.size == 0 or not np.issubdtype(S.dtype, np.integer) or S.min() < 0
                    or S.max() >= n or np.unique(S).size != S.size):
                raise ConfigError(f"seats must be distinct seat numbers in 0..{n - 1}, got {S.tolist()}")
            g = self._games(games)
            obs = np.empty((g.size, S.size, OBS_SIZE), np.float32)
            for j, seat in enumerate(S.tolist()):
                obs[:, j] = self._observe_seats(g, np.full(g.size, seat, np.intp))
        if out is not None:
            if out.shape != obs.shape or out.dtype != np.float32:
                raise ConfigError(f"out must be float32 of shape {obs.shape}, got {out.dtype} {out.shape}")
            out[...] = obs
            return out
        return obs

    def _observe_seats(self, games, seats: Optional[np.ndarray]) -> np.ndarray:
        """float32 (G, OBS_SIZE): ``seats[k]`` (default: the seat to act) observing game ``games[k]``."""
        if games is None and seats is None:
            if self._obs_ver != self._version:
                encode_batch(self, None, None, self._obs_t, hand=self._acting_hand())
                self._obs_ver = self._version
            return self._obs_t.T
        g = self._games(games)
        out = np.zeros((OBS_SIZE, g.size), np.float32)
        encode_batch(self, g, seats, out)
        return out.T

    def _check_reset(self) -> None:
        if not self._reset_called:
            raise RuntimeError("call reset() before using the batched engine")

    # ---- step ----------------------------------------------------------------------------------
    def step(self, actions: np.ndarray, games: Optional[Sequence[int]] = None) -> EngineStep:
        """Apply one action per selected game, for the seat to act there (``engine.apply_action``).

        A finished game only takes ``no-op`` (and stays finished; reset it with
        ``reset(games=...)``). The other games do not change.

        Args:
            actions: int (G, 1) one action per selected game.
            games: distinct game indices or a bool mask (default: the whole batch, G = B).

        Returns:
            :class:`hod.core.engine.EngineStep`: float64 (G, n) final rewards under
            ``reward_scheme`` for the games that ended with this step (0 elsewhere), and bool
            (G,) which games ended now (``round_over`` and ``game_over`` alike).

        Raises:
            IllegalActionError: an action outside its game's mask (names the game, the seat and
                the legal actions); nothing changes in any game.
            ValueError: ``actions`` of the wrong shape or not integers.
            ConfigError: bad or repeated ``games``.
        """
        self._check_reset()
        full = games is None
        g = self._arange if full else self._games(games)
        if not full and np.unique(g).size != g.size:
            raise ConfigError("step: the games named must be distinct")
        a = np.asarray(actions)
        if a.shape != (g.size, 1) or not (a.dtype.kind in "iu" or a.size == 0):
            raise ValueError(f"actions must be an int array of shape ({g.size}, 1), got {a.dtype} {a.shape}")
        a = a.reshape(g.size)
        self._check_actions(g, a, full)
        if a.dtype != np.intp:
            a = a.astype(np.intp)
        n = self.num_players
        R = NUM_RANKS
        kind = _KIND[a]
        cur_all = self.current
        pick = np.flatnonzero if full else (lambda sel: g[sel])
        # --- start / drop: a hand card leaves the hand (first of its rank in hand order) -------
        sel = kind <= _K_DROP
        gh = pick(sel)
        gd = gh[:0]
        if gh.size:
            ah = a[sel]
            rh = _ACTION_RANK[ah]
            fh = gh * n + cur_all[gh]
            f3 = fh * CARDS_PER_DEAL
            hc1 = self._hcards1
            j = np.where(_RANK_OF[hc1[f3]] == rh, 0, np.where(_RANK_OF[hc1[f3 + 1]] == rh, 1, 2))
            f3 += j
            played = hc1[f3]
            hc1[f3] = -1
            self._hcnt1[fh * R + rh] -= 1
            self.hand_size_flat[fh] -= 1
            self.hand_total[gh] -= 1
            fr = gh * R + rh                                   # (game, rank) flat index
            self._seen1[fr] += 1
            st = ah < DROP
            gs = gh[st]
            if gs.size:                    # start: hand card + loose card of the same rank
                rs = rh[st]
                frs = fr[st]
                self._loose1[frs] -= 1
                self._run1[frs] = 2
                self.run_card[gs] = played[st]
                self.run_start[gs] = rs
                self.run_rank[gs] = rs
                self.run_next[gs] = self._next_after_start[rs]     # a starting Ace needs the 2
                self.run_active[gs] = True
                self.run_size[gs] = 2
                self.run_pts[gs] = _PTS2[rs]
            if gs.size < gh.size:          # drop: the card becomes loose, the turn ends (R4)
                dr = ~st
                gd = gh[dr]
                self._loose1[fr[dr]] += 1
        # --- tap / take: extend the run by the needed rank (R3) ---------------------------------
        sel = kind == _K_TAP
        gt = pick(sel)
        if gt.size:
            r = self.run_next[gt]
            fr = gt * R + r
            self._loose1[fr] -= 1
            self._run1[fr] += 1
            self.run_size[gt] += 1
            self.run_pts[gt] += _PTS[r]
            self.run_rank[gt] = r
            self.run_next[gt] = self._next_after_step[r]
        sel = kind == _K_TAKE
        gk = pick(sel)
        if gk.size:
            t = self.seat_at_offset[cur_all[gk], a[sel] - TAKE]
            ft = gk * n + t
            self.run_cnt[gk] += np.take(self.pile_cnt_flat, ft, axis=0)
            self.run_size[gk] += self.pile_size_flat[ft]
            self.run_pts[gk] += self.pile_pts_flat[ft]
            self.pile_cnt_flat[ft] = 0
            self.pile_size_flat[ft] = 0
            self.pile_pts_flat[ft] = 0
            self.pile_top_flat[ft] = -1
            self.run_taken_flat[ft] = True
            r = self.run_next[gk]
            self.run_rank[gk] = r
            self.run_next[gk] = self._next_after_step[r]
        # --- confirm: everything gathered to the pile, starting card on top (R5) ---------------
        sel = kind == _K_CONFIRM
        gc = pick(sel)
        if gc.size:
            c = cur_all[gc]
            fc = gc * n + c
            self.pile_cnt_flat[fc] += np.take(self.run_cnt, gc, axis=0)
            self.pile_size_flat[fc] += self.run_size[gc]
            self.pile_pts_flat[fc] += self.run_pts[gc]
            self.pile_top_flat[fc] = self.run_card[gc]
            self.last_runner[gc] = c
            self._clear_run(gc)
            ge = np.concatenate((gd, gc)) if gd.size else gc
        else:
            ge = gd
        played_any = kind != _K_NOOP
        self.decisions[g[played_any] if not played_any.all() else g] += 1
        self._version += 1
        # --- end of turn: to the left; re-deal or end the game (R6, R7) ------------------------
        rewards = np.zeros((g.size, n))
        ended_games = g[:0]
        if ge.size:
            self.current[ge] = self._seat_next[self.current[ge]]
            gz = ge[self.hand_total[ge] == 0]
            if gz.size:
                more = self.deck_left[gz] > 0
                self._deal(gz[more])
                ended_games = gz[~more]
                if ended_games.size:
                    self._finish(ended_games)
        if ended_games.size:
            if full:
                pos = ended_games
                ended = np.zeros(g.size, bool)
                ended[pos] = True
            else:
                ended = np.isin(g, ended_games)
                pos = np.flatnonzero(ended)
            rewards[pos] = batched_final_rewards(self.pile_pts[ended_games], self.reward_scheme)
        else:
            ended = np.zeros(g.size, bool)
        return EngineStep(rewards, ended, ended)

    def _check_actions(self, g: np.ndarray, a: np.ndarray, full: bool) -> None:
        bad = (a < 0) | (a >= NUM_ACTIONS)
        if not bad.any():
            mask = self._mask(None if full else g)
            bad = mask[np.arange(g.size), a] == 0
        if bad.any():
            i = int(np.argmax(bad))
            b = int(g[i])
            legal = np.flatnonzero(self._mask([b])[0]).tolist()
            who = (f"game {b} (finished)" if self.terminal[b]
                   else f"player_{int(self.current[b])} in game {b}")
            raise IllegalActionError(who, int(a[i]), legal, action_name)

    def _finish(self, g: np.ndarray) -> None:
        """R7: the game is over; leftover loose cards go under the visible card of the last
        runner's pile (``Config.leftovers_to_last_runner``), to nobody if nobody ran."""
        self.terminal[g] = True
        w = self.last_runner[g]
        has = w >= 0
        if leftovers_receiver(0, self.config.leftovers_to_last_runner) == NOBODY:  # option off: to nobody
            return
        gw = g[has]
        if gw.size == 0:
            return
        fw = gw * self.num_players + w[has]
        lc = self.loose_cnt[gw]
        self.pile_cnt_flat[fw] += lc
        self.pile_size_flat[fw] += lc.sum(1, dtype=np.int8)
        self.pile_pts_flat[fw] += lc.astype(np.int16) @ _PTS
        self.loose_cnt[gw] = 0

    # ---- results ---------------------------------------------------------------------------------
    def scores(self, games: Optional[Sequence[int]] = None) -> np.ndarray:
        """int32 (G, n) points in each pile (R8; the final scores once a game is over)."""
        return self.pile_pts[self._games(games)].astype(np.int32)

    def final_rewards(self, games: Optional[Sequence[int]] = None,
                      scheme: Optional[str] = None) -> np.ndarray:
        """float32 (G, n) rewards of the scores under ``scheme`` (default ``reward_scheme``)."""
        r = batched_final_rewards(self.pile_pts[self._games(games)], scheme or self.reward_scheme)
        return r.astype(np.float32)

    def random_legal_actions(self, rng: Optional[np.random.Generator] = None,
                             games: Optional[Sequence[int]] = None) -> np.ndarray:
        """One uniformly random legal action per selected game (int64 (G,)), drawn from ``rng``
        (default: the engine's own generator)."""
        return random_legal_actions(self._mask(games), self.rng if rng is None else rng)

    def random_actions(self, mask: Optional[np.ndarray] = None,
                       rng: Optional[np.random.Generator] = None) -> np.ndarray:
        """Uniformly random legal actions for ``mask`` (int8 (G, 1, NUM_ACTIONS); default: the
        whole batch's mask now), as ``BatchedTapeo.random_actions``. int64 (G, 1).

        Raises:
            ValueError: a row of the mask allows no action."""
        m = self._mask() if mask is None else np.asarray(mask)[:, 0]
        return random_legal_actions(m, self.rng if rng is None else rng)[:, None]

    def __repr__(self) -> str:
        return (f"BatchedRobada({self.config}, batch_size={self.batch_size}, "
                f"reward_scheme={self.reward_scheme!r})")
