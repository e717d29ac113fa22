"""The batched Tapeo engine: B games in one state record, stepped by the compiled kernels of
:mod:`tapeo_env.rules.kernels` (one game per kernel call, a loop over the games in compiled code).

The single-game engine :mod:`tapeo_env.rules.engine` is a view over the same kernels (tapeo.txt;
RULINGS T1-T10): ``tests/games/test_tapeo_batched.py`` plays thousands of seeded games through this
engine, the earlier single-game engine and the earlier numpy batched engine (kept as the oracles
``tests/oracles/tapeo_scalar.py`` and ``tests/oracles/tapeo_batched.py``) and requires identical hands, bars, churros, scores, masks,
observations and rewards at every step, bit for bit. Constants (deck, hand sizes, rounds,
scoring numbers, rulings) come from the same :class:`tapeo_env.rules.engine.Config`; this
module holds the deals (the cards from :mod:`hod.core.deal`, counted into the record by the
kernel :func:`~tapeo_env.rules.kernels.deal_counts`), the checks of the arguments and the
rewards (:mod:`hod.core.rewards`); the rules are the kernels'.

Layout. Every state field has a leading batch axis (:class:`BatchedState`). Unlike the single
engine, hands are stored by the seat that *holds* them now: ``hands[b, i]`` is the hand seat ``i``
holds, and passing left is a roll of that axis (tapeo.txt 'Each pick'). Each game has its own
round and pick counter, so games reset at different times may be at different points; every game
must be live when :meth:`BatchedTapeo.step` is called (reset finished games first, as the vector
env :mod:`hod.training.learner_env` does automatically).

Deals. Each game has its own seed (``reset(seeds=...)``, else drawn from the engine's
generator); each round the whole 84-tapa deck is reshuffled (tapeo.txt) from that seed alone by
:func:`hod.core.deal.shuffled_prefix` (stream = the round; a Fisher-Yates shuffle vectorised over
the games, seat ``i`` gets cards ``i * hand_size ...`` of it): the very function the single-game
engine deals with, so game ``i`` reset with seed ``s`` is ``engine.new_game(config, seed=s)``,
deal for deal. Or explicit dealt hands (``reset(deals=...)``).

Memory: about 33 + 33 n bytes of state per game (n seats; 4 players: 165 bytes), see
:attr:`BatchedState.nbytes` (plus ``R * n * K`` bytes per game once explicit deals are used).

Interface: :class:`hod.core.engine.BatchedEngine` (M = n movers: every seat picks on every step),
the one protocol both games' batched engines implement; the state is the record
:class:`BatchedState` (``state``, ``load_state``); single-engine positions become a record with
:func:`state_record` (the search bots branch from them).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from hod.core.deal import as_seeds, check_generator_seed, draw_seeds, shuffled_prefix
from hod.core.engine import EngineStep, StateRecord, check_games, check_record, check_seats, observation_buffer
from hod.core.errors import ConfigError, IllegalActionError, check_choice, check_int_range
from hod.core.jit import parallel_for
from hod.core.rewards import REWARD_SCHEMES, final_rewards_batch

from . import kernels
from .cards import NUM_KINDS, deck_cards, kind_name
from .engine import Config
from .global_state import encode_state_batch
from .observation import OBS_SIZE, _inv_deck

_K = NUM_KINDS


@dataclass
class BatchedState(StateRecord):
    """State of B games (B = batch size, n = seats, K = NUM_KINDS, R = rounds), the record of
    :class:`hod.core.engine.StateRecord` (``copy``, ``take``, ``nbytes``).

    Attributes:
        hands: uint8 (B, n, K), the hand each seat holds now (by holder, not by dealt seat).
        bars: uint8 (B, n, K), each seat's bar this round (Freeloader cards and loot included).
        churros_kept: uint8 (B, n), churros kept from finished rounds (T8).
        undealt: uint8 (B, K), tapas of this round's deck not dealt (hidden).
        round_scores: int16 (B, R, n), points of each finished round.
        final_scores: int16 (B, n), round scores + end churros (T9) once over, else 0.
        winners: bool (B, n), the winners (T10) once over, else False.
        round: int8 (B,), current round, 0-based (``R`` once over).
        pick: int8 (B,), tapas revealed from each hand this round.
        seed: uint64 (B,), each game's seed (every round's deal is drawn from it).
        deals: None, or uint8 (B, R, n, K) explicit deals (``reset(deals=...)``): the counts of
            each kind dealt to each seat each round; a game whose row is all zeros is dealt from
            its seed.
    """

    hands: np.ndarray
    bars: np.ndarray
    churros_kept: np.ndarray
    undealt: np.ndarray
    round_scores: np.ndarray
    final_scores: np.ndarray
    winners: np.ndarray
    round: np.ndarray
    pick: np.ndarray
    seed: np.ndarray
    deals: Optional[np.ndarray] = None

    @classmethod
    def zeros(cls, batch: int, config: Config) -> "BatchedState":
        """A record of ``batch`` games of ``config`` with every array 0 (no game dealt yet), shapes
        and dtypes as the class docstring (B = ``batch``, n = ``config.num_players``, R =
        ``config.num_rounds``); ``deals`` None."""
        n, r = config.num_players, config.num_rounds
        return cls(
            hands=np.zeros((batch, n, _K), np.uint8), bars=np.zeros((batch, n, _K), np.uint8),
            churros_kept=np.zeros((batch, n), np.uint8), undealt=np.zeros((batch, _K), np.uint8),
            round_scores=np.zeros((batch, r, n), np.int16), final_scores=np.zeros((batch, n), np.int16),
            winners=np.zeros((batch, n), bool), round=np.zeros(batch, np.int8), pick=np.zeros(batch, np.int8),
            seed=np.zeros(batch, np.uint64),
        )


#: What :meth:`BatchedTapeo.step` returns: :class:`hod.core.engine.EngineStep` (rewards: the final
#: reward when the game ended on this step, or, with ``round_rewards``, the change of the
#: standings' value at each round end, as :mod:`tapeo_env.env`).
BatchedTapeoStep = EngineStep


def _config(config: int | Config | None) -> Config:
    if isinstance(config, Config):
        return config
    return Config(num_players=4 if config is None else config)


class BatchedTapeo:
    """B Tapeo games stepped together (:class:`hod.core.engine.BatchedEngine`, M = n movers).

    Args:
        config: a :class:`tapeo_env.rules.engine.Config` or a player count (2..6).
        batch_size: B (>= 1).
        seed: seed of the engine's generator (the games' seeds are drawn from it when
            :meth:`reset` is not given them; :meth:`random_actions`).
        reward_scheme: ``"points"``, ``"win_loss"`` or ``"margin"`` (:mod:`hod.core.rewards`).
        round_rewards: also reward each round's end (the env option of the same name).

    Raises:
        ConfigError: a player count, scheme or batch size outside its legal values.

    Example::

        eng = BatchedTapeo(4, 4096, seed=0)
        eng.reset()
        while not eng.terminal.all():
            res = eng.step(eng.random_actions())   # a finished game must be reset before a step
            eng.reset(games=res.game_over)
    """

    num_actions = _K
    obs_size = OBS_SIZE
    #: Batches of at least this many games are stepped and observed by the parallel drivers
    #: (:func:`tapeo_env.rules.kernels.step_batch_par`, ``observe_batch_par``: numba's threads,
    #: ``numba.set_num_threads``) when numba has more than one thread; None (the default) = never.
    #: Off by default: on the shared 2-core machine of docs/throughput.md they did not pay
    #: (measured there); the results are the same either way, bit for bit.
    parallel_min_batch: Optional[int] = None

    def __init__(self, config: int | Config | None, batch_size: int, seed: Optional[int] = None,
                 reward_scheme: str = "points", round_rewards: bool = False) -> None:
        self.config = cfg = _config(config)
        self.batch_size = B = check_int_range("batch_size", batch_size, 1, 1 << 24)
        check_choice("reward_scheme", reward_scheme, REWARD_SCHEMES)
        check_choice("round_rewards", round_rewards, (False, True))
        self.reward_scheme = reward_scheme
        self.round_rewards = bool(round_rewards)
        self.num_players = self.movers = n = cfg.num_players
        self.hand_size = cfg.hand_size
        check_generator_seed(seed)
        self.rng = np.random.default_rng(seed)
        self._reset_called = False
        self._state = BatchedState.zeros(B, cfg)
        self._deck = np.asarray(cfg.deck, np.int16)
        self._deck_cards = deck_cards(cfg.deck).astype(np.int8)
        self._phi = np.zeros((B, n))
        self._zero_rewards = np.zeros((B, n))
        self._no_games = np.zeros(B, bool)
        self._all = np.arange(B, dtype=np.intp)
        self._all_seats = np.arange(n, dtype=np.intp)
        self._flags = np.zeros(B, np.int8)
        self._rul, self._croq = kernels.rulings_array(cfg.rulings)
        self._inv = np.ascontiguousarray(_inv_deck(cfg.deck), np.float64)
        self._lut = kernels.count_table(self._inv)
        self._deck64 = np.asarray(cfg.deck, np.int64)
        self._obs_buffers: dict[tuple, np.ndarray] = {}

    @property
    def state(self) -> BatchedState:
        """The games' :class:`BatchedState` (the engine's live arrays: ``copy()`` it to keep it)."""
        return self._state

    # ---- reset and deals --------------------------------------------------------------------
    def reset(self, games: Optional[np.ndarray] = None, seeds: Optional[np.ndarray] = None,
              seed: Optional[int] = None, deals: Optional[np.ndarray] = None) -> None:
        """Start new games and deal their first round.

        Args:
            games: indices (or a bool mask of shape (B,)) of the games to restart; None = all.
            seeds: int (G,) one seed per restarted game (0..2**64-1): game ``games[k]`` is dealt
                exactly as ``engine.new_game(config, seed=seeds[k])``, every round. Default:
                seeds drawn from the engine's generator.
            seed: reseed the engine's generator first (``numpy.random.default_rng(seed)``).
            deals: explicit deals instead of shuffling, int (G, R, n, K): for each restarted game,
                round and seat, the count of each kind dealt to that seat. Each hand must hold
                ``hand_size`` tapas and a round may not deal more of a kind than the deck has.

        Raises:
            ConfigError: malformed ``deals``, ``seeds`` or ``games`` (nothing is changed).
        """
        g = check_games(games, self.batch_size, distinct=True)
        cfg = self.config
        check_generator_seed(seed)
        if seeds is not None:
            seeds = as_seeds(seeds, len(g))
        if deals is not None:
            deals = np.asarray(deals)
            want = (len(g), cfg.num_rounds, self.num_players, _K)
            if deals.shape != want:
                raise ConfigError(f"deals must have shape {want} (games, rounds, seats, kinds), got {deals.shape}")
            if (deals < 0).any() or (deals.sum(axis=3) != cfg.hand_size).any():
                raise ConfigError(f"every dealt hand must hold {cfg.hand_size} tapas (non-negative counts)")
            if (deals.sum(axis=2) > self._deck).any():
                raise ConfigError(f"a round deals more of a kind than the deck {list(cfg.deck)}")
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        s = self._state
        if deals is not None:
            if s.deals is None:
                s.deals = np.zeros((self.batch_size,) + want[1:], np.uint8)
            s.deals[g] = deals
        elif s.deals is not None:
            s.deals[g] = 0
        s.seed[g] = draw_seeds(self.rng, len(g)) if seeds is None else seeds
        s.churros_kept[g] = 0
        s.round_scores[g] = 0
        s.final_scores[g] = 0
        s.winners[g] = False
        s.round[g] = 0
        self._phi[g] = 0.0
        self._deal(g)
        self._reset_called = True

    def _check_reset(self) -> None:
        if not self._reset_called:
            raise RuntimeError("call reset() (or load_state()) before using the batched engine")

    def load_state(self, state: BatchedState, games: Optional[np.ndarray] = None) -> None:
        """Put the G games of ``state`` (a :class:`BatchedState`, e.g. another engine's
        ``state.take(...)`` or :func:`state_record` of single-engine positions) into rows
        ``games`` (None = all, G = B). They play on exactly as they would have where they came
        from (same later deals, masks, observations; rewards by this engine's scheme, from the
        standings the games have reached).

        Raises:
            ConfigError: a record of another type, game count or shape, or repeated games
                (nothing is changed).
        """
        g = check_games(games, self.batch_size, distinct=True)
        s = self._state
        check_record(state, s, g)
        self._check_values(state)
        if state.deals is not None and state.deals.any() and s.deals is None:
            s.deals = np.zeros((self.batch_size,) + state.deals.shape[1:], np.uint8)
        for name, arr in state.arrays().items():
            getattr(s, name)[g] = arr
        if state.deals is None and s.deals is not None:
            s.deals[g] = 0
        self._set_potentials(g)
        self._reset_called = True

    def _check_values(self, state: BatchedState) -> None:
        """Refuse a record whose values no game of this engine's config can reach, before any
        kernel reads it (the kernels index arrays by these numbers): the round in 0..R, the pick
        in 0..hand_size-1, each hand of a game in play holding ``hand_size - pick`` tapas (empty
        once over), no kind held, on bars or undealt more often than the deck has it, and explicit
        deals as :meth:`reset` checks them.

        Raises:
            ConfigError: naming the field, the first bad game of the record and the legal values.
        """
        cfg = self.config
        R, H = cfg.num_rounds, cfg.hand_size
        rnd, pick = state.round.astype(np.int64), state.pick.astype(np.int64)

        def refuse(field: str, bad: np.ndarray, legal: str) -> None:
            k = int(np.flatnonzero(bad)[0])
            raise ConfigError(f"state record: {field} of game {k} is impossible; legal: {legal} (nothing is changed)")

        if ((rnd < 0) | (rnd > R)).any():
            refuse("round", (rnd < 0) | (rnd > R), f"0..{R}")
        if ((pick < 0) | (pick >= H)).any():
            refuse("pick", (pick < 0) | (pick >= H), f"0..{H - 1}")
        held = state.hands.sum(axis=2, dtype=np.int64)                     # (G, n)
        want = np.where(rnd < R, H - pick, 0)[:, None]
        if (held != want).any():
            refuse("hands", (held != want).any(axis=1), "hand_size - pick tapas in every hand of a game in play, "
                   "none once it is over")
        used = (state.hands.sum(axis=1, dtype=np.int64) + state.bars.sum(axis=1, dtype=np.int64)
                + state.undealt.astype(np.int64))                          # (G, K)
        if (used > self._deck).any():
            refuse("hands, bars and undealt", (used > self._deck).any(axis=1), f"at most the deck {list(cfg.deck)} "
                   "of each kind")
        if state.deals is not None:
            d = state.deals.astype(np.int64)
            dealt = d.any(axis=(1, 2, 3))
            bad = dealt & ((d.sum(axis=3) != H).any(axis=(1, 2)) | (d.sum(axis=2) > self._deck).any(axis=(1, 2)))
            if bad.any():
                refuse("deals", bad, f"all zeros, or {H} tapas in every dealt hand and at most the deck of each kind")

    def _set_potentials(self, g: np.ndarray) -> None:
        """Reward potentials of games ``g``: the value of the standings they have reached (the
        final standings of a finished game; with ``round_rewards``, those after the last round)."""
        s, cfg = self._state, self.config
        self._phi[g] = 0.0
        over = s.round[g] >= cfg.num_rounds
        scores = s.round_scores[g].sum(axis=1, dtype=np.int32)
        if over.any():
            scores[over] = s.final_scores[g[over]]
        keep = over | (self.round_rewards & (s.round[g] > 0))
        if keep.any():
            self._phi[g[keep]] = self._standings_value(scores[keep], s.churros_kept[g[keep]])

    def _standings_value(self, scores: np.ndarray, churros: np.ndarray) -> np.ndarray:
        """float64 (G, n): the reward scheme's value of standings ``scores`` int32 (G, n) with
        winners by T10 (``churros`` kept break ties)."""
        w = np.zeros(scores.shape, bool)
        kernels.winners_batch(scores, np.ascontiguousarray(churros), self._rul, w)
        return final_rewards_batch(scores, w, self.reward_scheme)

    def _deal(self, g: np.ndarray) -> None:
        """Deal round ``round[g]`` of games ``g`` (tapeo.txt: the whole deck reshuffled each round)."""
        s = self._state
        G = len(g)
        if G == 0:
            return
        if s.deals is not None:
            s.bars[g] = 0
            s.pick[g] = 0
            pre = s.deals[g, 0, 0].sum(axis=1) > 0          # an explicit deal holds hand_size tapas
            if pre.any():
                gp = g[pre]
                s.hands[gp] = s.deals[gp, s.round[gp]]
                s.undealt[gp] = self._deck - s.hands[gp].sum(axis=1)
                g = g[~pre]
                G = len(g)
        if G:
            cards = shuffled_prefix(self._deck_cards, s.seed[g], s.round[g], self.num_players * self.hand_size)
            kernels.deal_counts(np.ascontiguousarray(cards), np.ascontiguousarray(g, np.intp), self.hand_size, self._deck64, s.hands,
                                s.undealt, s.bars, s.pick)

    # ---- queries ----------------------------------------------------------------------------
    def nbytes(self) -> dict:
        """Memory held by the game state, in bytes: ``{"state": ..., "per_game_state": ...}``
        (the same keys as ``BatchedRobada.nbytes`` where they mean the same thing)."""
        state = self._state.nbytes
        return {"state": state, "per_game_state": state / self.batch_size}

    @property
    def terminal(self) -> np.ndarray:
        """bool (B,): the game is over (its last round has been scored); a new array."""
        return self._state.round >= self.config.num_rounds

    def scores(self, games: Optional[np.ndarray] = None) -> np.ndarray:
        """int32 (G, n) each seat's score (``engine.scores`` of each game): the finished rounds'
        points, and the final scores (end churros included, T9) once a game is over."""
        g, s = check_games(games, self.batch_size), self._state
        out = s.round_scores[g].sum(axis=1, dtype=np.int32)
        over = s.round[g] >= self.config.num_rounds
        out[over] = s.final_scores[g[over]]
        return out

    def legal_mask(self, games: Optional[np.ndarray] = None) -> np.ndarray:
        """int8 (G, n, K): 1 for each kind in the hand a seat holds (all zeros once over).

        Raises:
            RuntimeError: before the first :meth:`reset` (or :meth:`load_state`).
        """
        self._check_reset()
        hands = self._state.hands if games is None else self._state.hands[check_games(games, self.batch_size)]
        return (hands > 0).view(np.int8)

    def observe(self, games: Optional[np.ndarray] = None, seats=None,
                out: Optional[np.ndarray] = None) -> np.ndarray:
        """Observations float32 (G, len(seats), OBS_SIZE), each row identical to
        :func:`tapeo_env.rules.observation.encode` of that game and seat (the kernel
        :func:`tapeo_env.rules.kernels.observe_game`). ``seats`` default: all seats in order.
        Without ``out``, for the whole batch (``games`` None) the returned array is an internal
        buffer, overwritten by the next such call with as many seats; for some games, a new array.

        Raises:
            ConfigError: bad games, seats (not distinct seats in 0..n-1) or ``out`` (not a
                C-contiguous float32 array of that shape).
            RuntimeError: before the first :meth:`reset` (or :meth:`load_state`).
        """
        self._check_reset()
        g = self._all if games is None else check_games(games, self.batch_size)
        S = self._all_seats if seats is None else check_seats(seats, self.num_players)
        out = observation_buffer(out, (g.size, S.size, OBS_SIZE), games is None, self._obs_buffers)
        s = self._state
        driver = kernels.observe_batch_par if self._parallel(g.size) else kernels.observe_batch
        driver(s.hands, s.bars, s.churros_kept, s.round_scores, s.round, s.pick, g, S, self.hand_size,
               self._lut, self._inv, self._deck64, out)
        return out

    def global_state(self, games: Optional[np.ndarray] = None) -> np.ndarray:
        """The global state (PettingZoo's ``state()``, :mod:`tapeo_env.rules.global_state`) of each
        game: float32 (G, STATE_SIZE), a new array, row ``g`` equal bit for bit to
        ``encode_state`` of that game's position (:func:`~tapeo_env.rules.global_state.encode_state_batch`,
        the one definition of the layout). Seat-absolute (seat 0 first).

        Raises:
            ConfigError: bad games.
            RuntimeError: before the first :meth:`reset` (or :meth:`load_state`).
        """
        self._check_reset()
        g = None if games is None else check_games(games, self.batch_size)
        return encode_state_batch(self._state, self.config, g)

    def random_actions(self, mask: Optional[np.ndarray] = None,
                       rng: Optional[np.random.Generator] = None) -> np.ndarray:
        """Uniformly random legal actions: int64 (G, n), see :func:`random_legal_actions`."""
        return random_legal_actions(self.legal_mask() if mask is None else mask, rng or self.rng)

    def _parallel(self, games: int) -> bool:
        """Whether a call over ``games`` games takes the parallel drivers (:attr:`parallel_min_batch`)."""
        return parallel_for(self.parallel_min_batch, games)

    # ---- step -------------------------------------------------------------------------------
    def step(self, actions: np.ndarray, games: Optional[np.ndarray] = None) -> EngineStep:
        """Reveal one pick of every seat of each of the games and pass the hands left (tapeo.txt
        'Each pick'); then the Freeloaders steal (T6), the last tapa is revealed automatically
        (T7), finished rounds are scored, churros kept and bars cleared (T8), the next round is
        dealt, and finished games get their end churros (T9) and winners (T10)
        (:func:`tapeo_env.rules.kernels.step_game`). The other games do not change.

        Args:
            actions: int (G, n), one kind per seat, each in the hand that seat holds.
            games: the G games stepped (distinct indices or a bool mask; None = all B).

        Returns:
            :class:`hod.core.engine.EngineStep`, rows in the order of ``games``. Without
            ``games``, when no round ended, its arrays are shared zeros (do not write to them).

        Raises:
            ValueError: ``actions`` of the wrong shape, a finished game among ``games``.
            ConfigError: bad or repeated ``games``.
            IllegalActionError: a pick outside a seat's hand (names the first offending game
                and seat and its legal actions); nothing is changed.
        """
        self._check_reset()
        s, n = self._state, self.num_players
        full = games is None
        g = self._all if full else check_games(games, self.batch_size, distinct=True)
        G = g.size
        picks = np.asarray(actions)
        if picks.shape != (G, n):
            raise ValueError(f"actions must have shape ({G}, {n}) (games, seats), got {picks.shape}")
        rnd = s.round if full else s.round[g]
        if (rnd >= self.config.num_rounds).any():
            over = g[np.flatnonzero(rnd >= self.config.num_rounds)]
            raise ValueError(f"games {over[:10].tolist()} are over: reset them first (reset(games=...))")
        if not np.issubdtype(picks.dtype, np.integer):
            raise IllegalActionError("table", picks.dtype, [f"integer kinds in 0..{_K - 1}"])
        picks = np.ascontiguousarray(picks, np.int64)
        bad = kernels.first_illegal(s.hands, g, picks)
        if bad >= 0:
            k, i = divmod(int(bad), n)
            b = int(g[k])
            legal = np.flatnonzero(s.hands[b, i]).tolist()
            raise IllegalActionError(f"game {b} seat {i}", picks[k, i].item(), legal, names=kind_name)
        flags = self._flags if full else np.zeros(G, np.int8)
        driver = kernels.step_batch_par if self._parallel(G) else kernels.step_batch
        driver(s.hands, s.bars, s.churros_kept, s.round_scores, s.final_scores, s.winners, s.round,
               s.pick, g, picks, self.hand_size, self._rul, self._croq, flags)
        if not flags.any():
            if full:
                return EngineStep(self._zero_rewards, self._no_games, self._no_games)
            return EngineStep(np.zeros((G, n)), np.zeros(G, bool), np.zeros(G, bool))
        pos = np.flatnonzero(flags)
        done = flags[pos] == kernels.GAME_OVER
        fin, cont = g[pos[done]], g[pos[~done]]
        self._deal(cont)
        rewards = np.zeros((G, n))
        if fin.size:
            phi = final_rewards_batch(s.final_scores[fin].astype(np.int32), s.winners[fin], self.reward_scheme)
            rewards[pos[done]] = phi - self._phi[fin]
            self._phi[fin] = phi
        if self.round_rewards and cont.size:
            phi = self._standings_value(s.round_scores[cont].sum(axis=1, dtype=np.int32), s.churros_kept[cont])
            rewards[pos[~done]] = phi - self._phi[cont]
            self._phi[cont] = phi
        return EngineStep(rewards, flags > 0, flags == kernels.GAME_OVER)


def state_record(states: list, config: Optional[Config] = None) -> BatchedState:
    """The :class:`BatchedState` of G positions of the single-game engine (search bots branch
    from them: ``eng.load_state(state_record(states), games)``): their one-game records
    (:attr:`tapeo_env.rules.engine.State.record`) stacked, no conversion.

    Game k is ``states[k]`` (:class:`tapeo_env.rules.engine.State`), so stepping it deals later
    rounds exactly as the single engine would (from the state's seed, or from its
    ``preset_deals``, written into the record's ``deals``). The same state object may be repeated
    (its record is stacked once, then its row repeated).

    Args:
        states: G >= 1 single-engine states, all with one :class:`Config`.
        config: the Config they must have (default: the first state's).

    Raises:
        ConfigError: no state, or states of another Config.
    """
    states = list(states)
    if not states:
        raise ConfigError("state_record: no state given")
    cfg = states[0].config if config is None else config
    for st in states:
        if st.config != cfg:
            raise ConfigError(f"state_record: a state plays {st.config}, expected {cfg}")
    n = cfg.num_players
    first: dict[int, int] = {}
    rows = np.array([first.setdefault(id(st), len(first)) for st in states], np.intp)
    uniq = list({id(st): st for st in states}.values())
    U = len(uniq)
    recs = [st.record for st in uniq]
    rec = BatchedState(**{name: np.concatenate([getattr(r, name) for r in recs])
                          for name in recs[0].arrays() if name != "deals"})
    if any(st.preset_deals is not None for st in uniq):
        rec.deals = np.zeros((U, cfg.num_rounds, n, _K), np.uint8)
        for u, st in enumerate(uniq):
            if st.preset_deals is not None:
                rec.deals[u] = [[np.bincount(h, minlength=_K) for h in rnd] for rnd in st.preset_deals]
    return rec if U == len(states) and (rows == np.arange(U)).all() else rec.take(rows)


def redraw_future(record: BatchedState, seeds: np.ndarray) -> None:
    """The later rounds' deals of each game of ``record`` drawn afresh, game k's from game seed
    ``seeds[k]``: its ``seed`` field, the seed every later round is dealt from (tapeo.txt: the
    whole deck reshuffled each round, T1), written in place; the round in play is kept. The luck
    correction's playouts (:mod:`hod.evaluation.luck_playout`) draw the chance still to come so;
    Ronda Robada's counterpart shuffles the cards still to deal
    (:func:`robada_env.rules.batched.redraw_future`).

    Args:
        record: G games. seeds: int (G,) game seeds in 0..2**64-1.

    Raises:
        ConfigError: malformed ``seeds`` (not G ints in 0..2**64-1).
    """
    record.seed[:] = as_seeds(seeds, record.batch_size)


def random_legal_actions(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of ``mask``.

    Args:
        mask: int8 or bool (..., K) legal-action masks; every row must allow an action.
        rng: the generator.

    Returns:
        int64 (...,): for each row, one of its legal actions, each with probability 1/#legal.

    Raises:
        ValueError: a row allows no action.
    """
    m = mask.view(np.int8) if mask.dtype == bool else mask
    k = m.shape[-1]
    count = m[..., 0].astype(np.int16)
    for a in range(1, k):                       # loops over the K kinds beat reductions on a short axis
        count += m[..., a]
    if (count <= 0).any():
        raise ValueError("random_legal_actions: a mask allows no action")
    draw = (rng.random(count.shape, dtype=np.float32) * count).astype(np.int16)   # 0..count-1
    np.minimum(draw, count - 1, out=draw)
    # the action is the (draw+1)-th legal kind: the number of kinds whose running count <= draw
    action = np.zeros(count.shape, np.int64)
    run = np.zeros(count.shape, np.int16)
    for a in range(k - 1):
        run += m[..., a]
        action += run <= draw
    return action
