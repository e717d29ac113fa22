"""The batched Tapeo engine: B games advanced at once as numpy arrays (no Python loop over games).

Same rules as the single-game engine :mod:`tapeo_env.rules.engine` (tapeo.txt; RULINGS T1-T10), which
stays the reference: ``tests/games/test_tapeo_batched.py`` plays thousands of seeded games through both
and requires identical hands, bars, churros, scores, masks, observations and rewards at every
step. Constants (deck, hand sizes, rounds, scoring numbers, rulings) come from the same
:class:`tapeo_env.rules.engine.Config`; the scoring is :mod:`tapeo_env.rules.batched_scoring`, the
observations :mod:`tapeo_env.rules.batched_obs`.

Layout. Every state field has a leading batch axis (:class:`BatchedState`). Unlike the single
engine, hands are stored by the seat that *holds* them now: ``hands[b, i]`` is the hand seat ``i``
holds, and passing left is a roll of that axis (tapeo.txt 'Each pick'). Each game has its own
round and pick counter, so games reset at different times may be at different points; every game
must be live when :meth:`BatchedTapeo.step` is called (reset finished games first, as the generic
learner env :mod:`hod.training.learner_env` does automatically).

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

from hod.core.deal import as_seeds, draw_seeds, shuffled_prefix
from hod.core.engine import EngineStep, StateRecord, check_games, check_record
from hod.core.errors import ConfigError, IllegalActionError, check_choice, check_int_range
from hod.core.rewards import REWARD_SCHEMES, final_rewards_batch

from .tapeo_batched_obs import BatchedEncoder
from .tapeo_batched_scoring import churro_points_batch, round_points_batch, winning_seats_batch
from tapeo_env.rules.cards import CHURRO, FREELOADER, NUM_KINDS, deck_cards, kind_name
from tapeo_env.rules.engine import CHURROS_KEPT_ACROSS_ROUNDS, FREELOADER_STEALS_FREELOADER, LAST_TAPA_AUTOMATIC, Config
from tapeo_env.rules.observation import OBS_SIZE

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
        self.rng = np.random.default_rng(seed)
        self._state = BatchedState.zeros(B, cfg)
        self._deck = np.asarray(cfg.deck, np.int16)
        self._deck_cards = deck_cards(cfg.deck).astype(np.int8)
        self._seat_of_card = np.repeat(np.arange(n, dtype=np.intp), cfg.hand_size)
        self._seat_base = (np.arange(B * n, dtype=np.intp) * _K).reshape(B, n)
        self._next_seat = (np.arange(n) + 1) % n
        self._phi = np.zeros((B, n))
        self._scratch = np.empty_like(self._state.hands)
        self._zero_rewards = np.zeros((B, n))
        self._no_games = np.zeros(B, bool)
        self._obs_encoder = None

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
        g = check_games(games, self.batch_size)
        cfg = self.config
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
        g = check_games(games, self.batch_size)
        s = self._state
        check_record(state, s, g)
        if state.deals is not None and state.deals.any() and s.deals is None:
            s.deals = np.zeros((self.batch_size,) + state.deals.shape[1:], np.uint8)
        for name, arr in state.arrays().items():
            getattr(s, name)[g] = arr
        if state.deals is None and s.deals is not None:
            s.deals[g] = 0
        self._set_potentials(g)

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
            phi = final_rewards_batch(scores, winning_seats_batch(scores, s.churros_kept[g], cfg.rulings),
                                      self.reward_scheme)
            self._phi[g[keep]] = phi[keep]

    def _deal(self, g: np.ndarray) -> None:
        """Deal round ``round[g]`` of games ``g`` (tapeo.txt: the whole deck reshuffled each round)."""
        s = self._state
        G = len(g)
        if G == 0:
            return
        s.bars[g] = 0
        s.pick[g] = 0
        if s.deals is not None:
            pre = s.deals[g, 0, 0].sum(axis=1) > 0          # an explicit deal holds hand_size tapas
            if pre.any():
                gp = g[pre]
                s.hands[gp] = s.deals[gp, s.round[gp]]
                s.undealt[gp] = self._deck - s.hands[gp].sum(axis=1)
                g = g[~pre]
                G = len(g)
        if G:
            counts = self._shuffled_hands(g)
            s.hands[g] = counts
            s.undealt[g] = self._deck - counts.sum(axis=1)

    def _shuffled_hands(self, g: np.ndarray) -> np.ndarray:
        """Counts int (G, n, K) of the hands dealt this round to games ``g``: the first
        ``n * hand_size`` cards of :func:`hod.core.deal.shuffled_prefix` (each game's seed, stream
        = its round), card j to seat ``j // hand_size`` (as ``engine.new_game``)."""
        n = self.num_players
        s = self._state
        cards = shuffled_prefix(self._deck_cards, s.seed[g], s.round[g], n * self.hand_size)
        G = len(g)
        idx = (np.arange(G, dtype=np.intp)[:, None] * n + self._seat_of_card[None, :]) * _K + cards
        return np.bincount(idx.ravel(), minlength=G * n * _K).reshape(G, n, _K)

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
        """int8 (G, n, K): 1 for each kind in the hand a seat holds (all zeros once over)."""
        hands = self._state.hands if games is None else self._state.hands[check_games(games, self.batch_size)]
        return (hands > 0).view(np.int8)

    def observe(self, games: Optional[np.ndarray] = None, seats=None,
                out: Optional[np.ndarray] = None) -> np.ndarray:
        """Observations float32 (G, len(seats), OBS_SIZE), each row identical to
        :func:`tapeo_env.rules.observation.encode` of that game and seat (see
        :class:`tapeo_env.rules.batched_obs.BatchedEncoder`). ``seats`` default: all seats in
        order. Without ``out`` the returned array is the encoder's buffer, overwritten by the
        next call.

        Raises:
            ConfigError: bad games, seats (not distinct seats in 0..n-1) or ``out`` shape.
        """
        if self._obs_encoder is None:
            self._obs_encoder = BatchedEncoder(self.config)
        st = self._state if games is None else self._state.take(check_games(games, self.batch_size))
        try:
            return self._obs_encoder.encode(st, seats, out)
        except ValueError as e:
            raise ConfigError(str(e)) from None

    def random_actions(self, mask: Optional[np.ndarray] = None,
                       rng: Optional[np.random.Generator] = None) -> np.ndarray:
        """Uniformly random legal actions: int64 (G, n), see :func:`random_legal_actions`."""
        return random_legal_actions(self.legal_mask() if mask is None else mask, rng or self.rng)

    # ---- step -------------------------------------------------------------------------------
    def step(self, actions: np.ndarray, games: Optional[np.ndarray] = None) -> EngineStep:
        """Reveal one pick of every seat of each of the games and pass the hands left (tapeo.txt
        'Each pick'); then the Freeloaders steal (T6), the last tapa is revealed automatically
        (T7), finished rounds are scored, churros kept and bars cleared (T8), the next round is
        dealt, and finished games get their end churros (T9) and winners (T10). The other games
        do not change.

        Args:
            actions: int (G, n), one kind per seat, each in the hand that seat holds.
            games: the G games stepped (distinct indices or a bool mask; None = all B).

        Returns:
            :class:`hod.core.engine.EngineStep`, rows in the order of ``games``.

        Raises:
            ValueError: ``actions`` of the wrong shape, a finished game among ``games``.
            ConfigError: bad or repeated ``games``.
            IllegalActionError: a pick outside a seat's hand (names the first offending game
                and seat and its legal actions); nothing is changed.
        """
        s, n = self._state, self.num_players
        full = games is None
        g = None if full else check_games(games, self.batch_size)
        if not full and np.unique(g).size != g.size:
            raise ConfigError("step: the games named must be distinct")
        G = self.batch_size if full else g.size
        picks = np.asarray(actions)
        if picks.shape != (G, n):
            raise ValueError(f"actions must have shape ({G}, {n}) (games, seats), got {picks.shape}")
        rnd = s.round if full else s.round[g]
        if (rnd >= self.config.num_rounds).any():
            over = np.flatnonzero(rnd >= self.config.num_rounds)
            over = over if full else g[over]
            raise ValueError(f"games {over[:10].tolist()} are over: reset them first (reset(games=...))")
        if not np.issubdtype(picks.dtype, np.integer):
            raise IllegalActionError("table", picks.dtype, [f"integer kinds in 0..{_K - 1}"])
        in_range = (picks >= 0) & (picks < _K)
        base = self._seat_base if full else self._seat_base[g]
        flat = base + np.where(in_range, picks, 0)
        ok = in_range & (s.hands.reshape(-1)[flat] > 0)
        if not ok.all():
            k, i = np.argwhere(~ok)[0]
            b = k if full else g[k]
            legal = np.flatnonzero(s.hands[b, i]).tolist()
            raise IllegalActionError(f"game {b} seat {i}", picks[k, i].item(), legal, names=kind_name)
        self._reveal(picks, flat, g)
        pick = s.pick if full else s.pick[g]
        if LAST_TAPA_AUTOMATIC:
            last = np.flatnonzero(self.hand_size - pick == 1)
            if len(last) == G and full:
                auto = s.hands.argmax(axis=2)
                self._reveal(auto, self._seat_base + auto, None)
            elif len(last):
                lg = last if full else g[last]
                auto = s.hands[lg].argmax(axis=2)
                self._reveal(auto, self._seat_base[lg] + auto, lg)
            pick = s.pick if full else s.pick[g]
        ended = pick == self.hand_size
        if not ended.any():
            if full:
                return EngineStep(self._zero_rewards, self._no_games, self._no_games)
            return EngineStep(np.zeros((G, n)), np.zeros(G, bool), np.zeros(G, bool))
        pos = np.flatnonzero(ended)
        rewards, game_over = np.zeros((G, n)), np.zeros(G, bool)
        self._end_round(pos, pos if full else g[pos], rewards, game_over)
        return EngineStep(rewards, ended, game_over)

    def _reveal(self, kinds: np.ndarray, flat: np.ndarray, g: Optional[np.ndarray]) -> None:
        """Move each seat's tapa from its hand to its bar, resolve the steals (T6), pass left.

        ``kinds`` (G, n) are legal, ``flat`` their flat indices in hands/bars; ``g`` the games
        (None: all)."""
        s = self._state
        hf, bf = s.hands.reshape(-1), s.bars.reshape(-1)
        hf[flat] -= 1
        bf[flat] += 1
        free = kinds == FREELOADER
        if free.any():
            loot = kinds[:, self._next_seat]            # what the left neighbour revealed
            steal = free if FREELOADER_STEALS_FREELOADER else free & (loot != FREELOADER)
            gi, si = np.nonzero(steal)
            if len(gi):
                games = gi if g is None else g[gi]
                lk = loot[gi, si]
                bf[self._seat_base[games, si] + lk] += 1
                bf[self._seat_base[games, self._next_seat[si]] + lk] -= 1
        if g is None:
            s.pick += 1
            h, tmp = s.hands, self._scratch
            tmp[:] = h
            h[:, 1:] = tmp[:, :-1]                      # seat i+1 now holds what seat i held
            h[:, 0] = tmp[:, -1]
        else:
            s.pick[g] += 1
            s.hands[g] = np.roll(s.hands[g], 1, axis=1)

    def _end_round(self, pos: np.ndarray, e: np.ndarray, rewards: np.ndarray, game_over: np.ndarray) -> None:
        """Score the round of games ``e`` (rows ``pos`` of ``rewards`` and ``game_over``, which
        are written), keep churros, clear bars, deal or finish (T8-T10)."""
        s, cfg = self._state, self.config
        bars = s.bars[e]
        r = s.round[e].astype(np.intp)
        s.round_scores[e, r] = round_points_batch(bars, cfg.rulings)
        if CHURROS_KEPT_ACROSS_ROUNDS:
            s.churros_kept[e] += bars[:, :, CHURRO]
        s.round[e] += 1
        done = s.round[e] >= cfg.num_rounds
        fin, cont = e[done], e[~done]
        s.bars[fin] = 0
        s.pick[fin] = 0
        self._deal(cont)
        game_over[pos[done]] = True
        if len(fin):
            kept = s.churros_kept[fin]
            final = s.round_scores[fin].sum(axis=1, dtype=np.int32) + churro_points_batch(kept, cfg.rulings)
            s.final_scores[fin] = final
            s.winners[fin] = w = winning_seats_batch(final, kept, cfg.rulings)
            phi = final_rewards_batch(final, w, self.reward_scheme)
            rewards[pos[done]] = phi - self._phi[fin]
            self._phi[fin] = phi
        if self.round_rewards and len(cont):
            scores = s.round_scores[cont].sum(axis=1, dtype=np.int32)
            churros = s.churros_kept[cont]
            phi = final_rewards_batch(scores, winning_seats_batch(scores, churros, cfg.rulings), self.reward_scheme)
            rewards[pos[~done]] = phi - self._phi[cont]
            self._phi[cont] = phi


def state_record(states: list, config: Optional[Config] = None) -> BatchedState:
    """The :class:`BatchedState` of G positions of the single-game engine (search bots branch
    from them: ``eng.load_state(state_record(states), games)``).

    Game k is ``states[k]`` (:class:`tapeo_env.rules.engine.State`): its hands (re-indexed by
    holder: the hand seat ``i`` holds is ``state.hand(i)``), bars, kept churros, undealt tapas,
    round scores, round, pick and seed, so stepping it deals later rounds exactly as the single
    engine would (from the state's seed, or from its ``preset_deals``). A finished state gives a
    finished game (final scores and winners). The same state object may be repeated (it is
    converted once).

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
    rec = BatchedState.zeros(U, cfg)
    for u, st in enumerate(uniq):
        if not st.terminal:
            rec.hands[u] = st.hands[(np.arange(n) - st.pick) % n]
        else:
            rec.final_scores[u] = st.final_scores
            rec.winners[u, list(st.winners)] = True
    rec.bars[:] = [st.bars for st in uniq]
    rec.churros_kept[:] = [st.churros_kept for st in uniq]
    rec.undealt[:] = [st.undealt for st in uniq]
    rec.round_scores[:] = [st.round_scores for st in uniq]
    rec.round[:] = [st.round for st in uniq]
    rec.pick[:] = [st.pick for st in uniq]
    rec.seed[:] = np.array([st.seed for st in uniq], np.uint64)
    if any(st.preset_deals is not None for st in uniq):
        rec.deals = np.zeros((U, cfg.num_rounds, n, _K), np.uint8)
        for u, st in enumerate(uniq):
            if st.preset_deals is not None:
                rec.deals[u] = [[np.bincount(h, minlength=_K) for h in rnd] for rnd in st.preset_deals]
    return rec if U == len(states) and (rows == np.arange(U)).all() else rec.take(rows)


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
