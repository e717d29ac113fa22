"""The seeded Tapeo rules engine of one game (no PettingZoo): deal, legal picks, simultaneous
reveal, passing to the left, the Freeloader, round and game scoring (tapeo.txt; RULINGS T1-T10),
as a view over the compiled kernels of :mod:`tapeo_env.rules.kernels` (the one implementation of
the rules, which the batched engine :mod:`tapeo_env.rules.batched` steps too).

Game shape (the OpenSpiel-style declaration):

* players 2-6, simultaneous moves, imperfect information, general-sum, chance = the deal;
* 10 distinct actions (one per kind of tapa, hams by slice count, see :mod:`tapeo_env.rules.cards`);
* a round is ``hand_size - 1`` decision picks (the last tapa is revealed automatically, T7), a
  game is 3 rounds: at most ``3 * 9 = 27`` decision picks per seat (2 players).

Seats are ``0..n-1``; the player on the left of seat ``i`` is ``(i + 1) % n``: you pass your hand
to them and your Freeloader steals from them (RULINGS preamble, T6).

A :class:`State` is a one-game record of the kernels' arrays (a
:class:`tapeo_env.rules.batched.BatchedState` of batch 1, :attr:`State.record`) plus the game's
history (the deals in deal order and the reveals, for records and apps). Its arrays are views of
that record's row, with the record's layout and dtypes: ``hands[i]`` is the hand seat ``i`` *holds*
now (uint8), so passing left moves the rows. A hand is also named by the seat it was dealt to this
round: seat ``i`` holds hand ``(i - pick) % n`` (:meth:`State.hand_id`). The state is mutated in
place by :func:`apply_actions` (one kernel call, the batch driver
:func:`tapeo_env.rules.kernels.step_batch` over the record's one game); use :meth:`State.clone` to
branch. Stacking the records of states is a batched engine's state
(:func:`tapeo_env.rules.batched.state_record`).

The verbs are those of every game's rules (:mod:`robada_env.rules.engine` has the same):
:func:`new_game`, :func:`legal_actions`, :func:`legal_mask`, :func:`legal_masks`,
:func:`apply_actions` (one action per seat; Tapeo is simultaneous, so there is no
one-seat ``apply_action``; :func:`apply_picks` is the same function under the rules' word),
:func:`is_terminal`, :func:`scores`, :func:`winners`, :meth:`State.clone`.

Deals: the game's seed alone decides every round's deal (:func:`hod.core.deal.shuffled_prefix`,
stream = the round), the same numbers the batched engine :mod:`tapeo_env.rules.batched` deals
from, so ``new_game(config, seed=s)`` and a batched game reset with seed ``s`` are one game.

The engine as it was before it became a view of the kernels is kept as the executable
specification ``tests/oracles/tapeo_scalar.py``; ``tests/games/test_tapeo_lockstep.py`` plays many seeded
games through both and requires the same masks, observations, scores and winners bit for bit.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from hod.core.deal import draw_seeds, game_seed, shuffled_prefix_one
from hod.core.errors import ConfigError, IllegalActionError, action_id, check_int_range, check_seat

from .cards import (
    CHURRO, DECK_COMPOSITION, HAND_SIZES, KIND_NAMES, MAX_PLAYERS, MIN_PLAYERS, NUM_KINDS, deck_cards, kind_name,
)

#: Rounds per game (tapeo.txt 'End': "After the third round").
NUM_ROUNDS = 3
#: T7: the last tapa of each hand is revealed automatically (no decision asked).
LAST_TAPA_AUTOMATIC = True
#: T6: a Freeloader revealed opposite another Freeloader steals nothing.
FREELOADER_STEALS_FREELOADER = False
#: T8: bars are cleared at the end of each round, except churros, which are kept (as a tally:
#: the whole 84-tapa deck, churros included, is reshuffled every round, tapeo.txt 'The hand and
#: the bar').
CHURROS_KEPT_ACROSS_ROUNDS = True

# after the constants: the kernels (imported by scoring) read them from this module
from .scoring import DEFAULT_RULINGS, Rulings  # noqa: E402

#: The most of one kind a deck may hold, and the most churros a seat may keep over a game: the
#: kernels' record holds such counts as uint8.
MAX_COUNT = 255


@dataclass(frozen=True)
class Config:
    """Static parameters of a game (immutable).

    Attributes:
        num_players: 2..6.
        deck: count of each kind (T1, :data:`~tapeo_env.rules.cards.DECK_COMPOSITION`), each
            0..255.
        hand_size: cards dealt to each seat per round; ``None`` = the rule's 10/9/8/7/7.
        num_rounds: rounds per game (3).
        rulings: scoring numbers and rulings (:class:`~tapeo_env.rules.scoring.Rulings`).

    Raises:
        ConfigError: player count outside 2..6 (the message lists them), a deck of the wrong
            length, with a count outside 0..255, or too small for the deal, a hand size below 1,
            or more churros in the deck than 255 can keep over the rounds (the record's uint8
            counts).
    """

    num_players: int = 4
    deck: tuple[int, ...] = DECK_COMPOSITION
    hand_size: Optional[int] = None
    num_rounds: int = NUM_ROUNDS
    rulings: Rulings = DEFAULT_RULINGS

    def __post_init__(self) -> None:
        n = check_int_range("num_players", self.num_players, MIN_PLAYERS, MAX_PLAYERS)
        object.__setattr__(self, "num_players", n)
        deck = tuple(int(c) for c in self.deck)
        if len(deck) != NUM_KINDS or min(deck) < 0 or max(deck) > MAX_COUNT:
            raise ConfigError(f"deck must give {NUM_KINDS} counts in 0..{MAX_COUNT} for {list(KIND_NAMES)}")
        object.__setattr__(self, "deck", deck)
        hs = HAND_SIZES[n] if self.hand_size is None else check_int_range("hand_size", self.hand_size, 1, 20)
        object.__setattr__(self, "hand_size", hs)
        if n * hs > sum(deck):
            raise ConfigError(f"a deck of {sum(deck)} tapas cannot deal {hs} to each of {n} players")
        check_int_range("num_rounds", self.num_rounds, 1, 10)
        if self.num_rounds * deck[CHURRO] > MAX_COUNT:
            raise ConfigError(f"{self.num_rounds} rounds of a deck of {deck[CHURRO]} churros may keep more than "
                              f"{MAX_COUNT} churros; legal: num_rounds * churros <= {MAX_COUNT}")

    @property
    def decision_picks(self) -> int:
        """Picks per round that ask a decision: ``hand_size - 1`` (T7)."""
        return self.hand_size - 1 if LAST_TAPA_AUTOMATIC else self.hand_size


class _Tables:
    """What the kernels take for one :class:`Config`, built once per config (read by every state
    of that config; never written)."""

    def __init__(self, config: Config) -> None:
        n = config.num_players
        self.n, self.hand_size, self.num_rounds = n, config.hand_size, config.num_rounds
        self.rul, self.croq = kernels.rulings_array(config.rulings)
        self.inv = np.ascontiguousarray(observation._inv_deck(config.deck), np.float64)
        self.lut = kernels.count_table(self.inv)
        self.deck = np.asarray(config.deck, np.int64)
        self.deck_list = tuple(deck_cards(config.deck).tolist())
        self.hand_offset = np.repeat(np.arange(n, dtype=np.int64) * NUM_KINDS, config.hand_size)
        self.game = np.zeros(1, np.intp)               # the one game of a one-game record
        self.seat = [np.array([i], np.intp) for i in range(n)]
        self.seats = np.arange(n, dtype=np.intp)
        self.zero_masks = np.zeros((n, NUM_KINDS), np.int8)


@functools.lru_cache(maxsize=256)
def _tables(config: Config) -> _Tables:
    """The tables of ``config`` (a frozen, hashable dataclass), built once per config."""
    return _Tables(config)


class State:
    """One position of a game: a one-game record of the kernels' arrays and the game's history.
    Mutated in place by :func:`apply_actions`.

    Attributes (n = number of seats, K = NUM_KINDS, R = rounds; the arrays are views of
    :attr:`record`'s row: writing into them writes the record; they cannot be replaced):
        config: the :class:`Config`.
        record: the :class:`tapeo_env.rules.batched.BatchedState` of this one game (batch 1):
            what the kernels read and write.
        round: current round, 0-based (``== num_rounds`` once the game is over); settable.
        pick: tapas already revealed from each hand this round (0-based pick index); settable.
        hands: uint8 (n, K), the hand each seat holds now (by holder: row ``i`` is seat ``i``'s).
        bars: uint8 (n, K), tapas on each seat's bar this round (Freeloader cards and stolen
            tapas included).
        churros_kept: uint8 (n,), churros kept from finished rounds (T8).
        undealt: uint8 (K,), tapas of this round's deck not dealt (hidden).
        round_scores: int16 (R, n), points scored in each finished round.
        final_scores: int64 (n,) once the game is over (round scores + end churros, T9), else None.
        winners: the winning seats (T10, a tuple, ascending) once over, else None.
        seed: the game's seed (int, 0..2**64-1): every round's deal is drawn from it; settable.
        dealt: per round, per hand (by the seat it was dealt to), the kinds dealt in deal order
            (for records).
        reveals: per round, per pick, the kind each seat revealed (the automatic last tapa
            included).
        round_bars: int64 (n, K) bars of each finished round, as they were before clearing.
        preset_deals: explicit deals (record replay) instead of the seed, or None.
    """

    __slots__ = ("config", "record", "dealt", "reveals", "round_bars", "preset_deals", "_t",
                 "_hands", "_bars", "_kept", "_undealt", "_round_scores", "_round", "_pick")

    def __init__(self, config: Config, record, dealt: list, reveals: list, round_bars: list,
                 preset_deals: Optional[list], tables: Optional[_Tables] = None) -> None:
        self.config = config
        self.record = record
        self.dealt, self.reveals, self.round_bars, self.preset_deals = dealt, reveals, round_bars, preset_deals
        self._t = tables or _tables(config)
        self._hands, self._bars = record.hands[0], record.bars[0]
        self._kept, self._undealt = record.churros_kept[0], record.undealt[0]
        self._round_scores = record.round_scores[0]
        self._round, self._pick = record.round, record.pick

    # the arrays: views of the record's row (write into them; they cannot be replaced)
    @property
    def hands(self) -> np.ndarray:
        """uint8 (n, NUM_KINDS): the tapas of each kind in the hand each seat holds now (row ``i``:
        seat ``i``'s; a view of the record)."""
        return self._hands

    @property
    def bars(self) -> np.ndarray:
        """uint8 (n, NUM_KINDS): the tapas of each kind on each seat's bar this round, Freeloader
        cards and stolen tapas included (a view of the record)."""
        return self._bars

    @property
    def churros_kept(self) -> np.ndarray:
        """uint8 (n,): the churros each seat kept from the finished rounds (T8; a view of the record)."""
        return self._kept

    @property
    def undealt(self) -> np.ndarray:
        """uint8 (NUM_KINDS,): the tapas of each kind of this round's deck not dealt (hidden; a view
        of the record)."""
        return self._undealt

    @property
    def round_scores(self) -> np.ndarray:
        """int16 (num_rounds, n): the points each seat scored in each finished round (0 for the
        rounds not finished; a view of the record)."""
        return self._round_scores

    @property
    def round(self) -> int:
        """The current round, 0-based (``num_rounds`` once the game is over). Settable: an int in
        ``0..num_rounds``, else ``ConfigError`` (:func:`hod.core.errors.check_int_range`)."""
        return int(self._round[0])

    @round.setter
    def round(self, value: int) -> None:
        self._round[0] = check_int_range("round", value, 0, self.config.num_rounds)

    @property
    def pick(self) -> int:
        """Tapas already revealed from each hand this round (the 0-based pick index). Settable: an
        int in ``0..hand_size``, else ``ConfigError``."""
        return int(self._pick[0])

    @pick.setter
    def pick(self, value: int) -> None:
        self._pick[0] = check_int_range("pick", value, 0, self.config.hand_size)

    @property
    def seed(self) -> int:
        """The game's seed, an int in ``0..2**64-1``: every round's deal is drawn from it. Settable
        (:func:`hod.core.deal.game_seed`: None draws a fresh one; ``ConfigError`` for anything but
        None or an int in range)."""
        return int(self.record.seed[0])

    @seed.setter
    def seed(self, value: int) -> None:
        self.record.seed[0] = game_seed(value)

    @property
    def final_scores(self) -> Optional[np.ndarray]:
        """int64 (n,) the final scores once the game is over (a new array), else None."""
        return self.record.final_scores[0].astype(np.int64) if self.terminal else None

    @property
    def winners(self) -> Optional[tuple]:
        """The winning seats (T10), ascending, once the game is over, else None."""
        return tuple(np.flatnonzero(self.record.winners[0]).tolist()) if self.terminal else None

    @property
    def num_players(self) -> int:
        """n, the seats at the table (``config.num_players``, 2..6)."""
        return self.config.num_players

    @property
    def terminal(self) -> bool:
        """True once the last round has been scored (the game is over)."""
        return bool(self._round[0] >= self._t.num_rounds)

    @property
    def cards_in_hand(self) -> int:
        """Tapas in every hand right now (all hands have the same size)."""
        return 0 if self.terminal else self.config.hand_size - self.pick

    def hand_id(self, seat: int) -> int:
        """The hand (by the seat it was dealt to this round) that ``seat`` holds now."""
        return (seat - self.pick) % self.config.num_players

    def hand(self, seat: int) -> np.ndarray:
        """Counts uint8 (K,) of the hand ``seat`` holds now (a view of :attr:`hands`; do not modify)."""
        return self.hands[seat]

    def churros_held(self) -> np.ndarray:
        """int64 (n,) churros kept from earlier rounds plus those on the bars this round."""
        return self.churros_kept.astype(np.int64) + self.bars[:, CHURRO]

    def scores_so_far(self) -> np.ndarray:
        """int64 (n,) sum of the finished rounds' scores (end churros not included)."""
        return self.round_scores.sum(axis=0, dtype=np.int64)

    def clone(self) -> "State":
        """An independent copy (the record and the history copied; same seed, so the same later deals)."""
        r = self.record
        rec = type(r)(hands=r.hands.copy(), bars=r.bars.copy(), churros_kept=r.churros_kept.copy(),
                      undealt=r.undealt.copy(), round_scores=r.round_scores.copy(), final_scores=r.final_scores.copy(),
                      winners=r.winners.copy(), round=r.round.copy(), pick=r.pick.copy(), seed=r.seed.copy(),
                      deals=None if r.deals is None else r.deals.copy())     # StateRecord.copy, faster
        return State(self.config, rec, [[list(h) for h in d] for d in self.dealt], [list(p) for p in self.reveals],
                     [b.copy() for b in self.round_bars], self.preset_deals, self._t)

    def __getstate__(self) -> tuple:
        """Pickle and deepcopy keep the record and the history; the views are rebuilt from the record."""
        return (self.config, self.record, self.dealt, self.reveals, self.round_bars, self.preset_deals)

    def __setstate__(self, state: tuple) -> None:
        self.__init__(*state)

    def __repr__(self) -> str:
        return (f"State(num_players={self.num_players}, round={self.round}, pick={self.pick}, "
                f"seed={self.seed}, terminal={self.terminal})")


def new_game(config: Config | None = None, seed: int | None = None, rng: np.random.Generator | None = None,
             deals: Sequence[Sequence[Sequence[int]]] | None = None) -> State:
    """Start a game and deal the first round (the whole deck is reshuffled each round).

    Args:
        config: the :class:`Config` (default: 4 players).
        seed: the game's seed, an int in 0..2**64-1 (None: a fresh one). Round r's deal is
            the first ``n * hand_size`` cards of :func:`hod.core.deal.shuffled_prefix` of the
            sorted deck (stream r); seat i gets cards ``i * hand_size ...``. The batched
            engine deals a game reset with the same seed identically.
        rng: draw the seed from this generator instead (takes precedence over ``seed``).
        deals: explicit deals instead of shuffling: per round, per seat, the list of kinds dealt
            (used by :func:`tapeo_env.rules.record.replay`). Each hand must have ``hand_size`` tapas and
            a round may not deal more of a kind than the deck holds.

    Returns:
        the :class:`State` of round 0, pick 0.

    Raises:
        ConfigError: malformed ``deals``; a seed that is not an int in 0..2**64-1.
    """
    config = config or Config()
    if deals is not None:
        deals = [[[int(c) for c in hand] for hand in rnd] for rnd in deals]
        if len(deals) != config.num_rounds:
            raise ConfigError(f"deals must hold {config.num_rounds} rounds, got {len(deals)}")
    rec = batched.BatchedState.zeros(1, config)
    rec.seed[0] = game_seed(seed, rng)
    state = State(config, rec, [], [], [], deals)
    _deal(state)
    return state


def _deal(state: State) -> None:
    """Deal round ``state.round``: the whole deck is reshuffled (tapeo.txt), each seat gets
    ``hand_size`` tapas (at pick 0 each seat holds the hand dealt to it)."""
    t = state._t
    n, hs, r = t.n, t.hand_size, state.round
    if state.preset_deals is not None:
        hands = state.preset_deals[r]
        if len(hands) != n or any(len(h) != hs for h in hands):
            raise ConfigError(f"round {r}: deals must give {n} hands of {hs} tapas")
        if any(not 0 <= c < NUM_KINDS for h in hands for c in h):
            raise ConfigError(f"round {r}: dealt kinds must be in 0..{NUM_KINDS - 1}")
        order = [list(h) for h in hands]
        cards = np.array(order, np.int64).ravel()
    else:
        dealt = shuffled_prefix_one(t.deck_list, state.seed, r, n * hs)
        order = [dealt[i * hs:(i + 1) * hs] for i in range(n)]
        cards = np.array(dealt, np.int64)
    # count each hand's kinds at once: card c of hand h is bin h * K + c
    counts = np.bincount(cards + t.hand_offset, minlength=n * NUM_KINDS).reshape(n, NUM_KINDS)
    undealt = t.deck - counts.sum(axis=0)
    if undealt.min() < 0:
        raise ConfigError(f"round {r}: the deal holds more of a kind than the deck {list(state.config.deck)}")
    state.hands[:] = counts
    state.undealt[:] = undealt
    state.dealt.append(order)
    state.reveals.append([])
    state._pick[0] = 0
    state.bars[:] = 0


def legal_mask(state: State, seat: int) -> np.ndarray:
    """int8 (NUM_KINDS,): 1 for each kind in ``seat``'s hand (all zeros once the game is over).

    Raises:
        ConfigError: ``seat`` is not a seat of the table, an int in ``0..n-1`` (:func:`hod.core.errors.check_seat`).
    """
    seat = check_seat(seat, state.config.num_players)
    if state.terminal:
        return np.zeros(NUM_KINDS, np.int8)
    return (state._hands[seat] > 0).view(np.int8)


def legal_masks(state: State) -> np.ndarray:
    """int8 (n, NUM_KINDS): row ``i`` is :func:`legal_mask` of seat ``i`` (a fresh array)."""
    if state.terminal:
        return state._t.zero_masks.copy()
    return (state._hands > 0).view(np.int8)


def legal_actions(state: State, seat: int) -> list[int]:
    """The kinds ``seat`` may pick now, ascending (empty once the game is over).

    Raises:
        ConfigError: ``seat`` is not a seat of the table, an int in ``0..n-1`` (:func:`hod.core.errors.check_seat`).
    """
    seat = check_seat(seat, state.config.num_players)
    if state.terminal:
        return []
    return np.flatnonzero(state.hands[seat]).tolist()


def check_pick(state: State, seat: int, action: object, agent: str | None = None) -> int:
    """Return ``action`` as int if ``seat`` may pick it now.

    Raises:
        ConfigError: ``seat`` is not a seat of the table, an int in ``0..n-1`` (:func:`hod.core.errors.check_seat`).
        IllegalActionError: not an action id (a Python or numpy int in 0..9, see
            :func:`hod.core.errors.action_id`: ``1.0``, ``True``, arrays are refused) of a kind in
            the seat's hand, or the game is over (the message
            names the legal actions); nothing is changed.
    """
    seat = check_seat(seat, state.config.num_players)
    # the type and range check of both games (hod.core.errors.action_id); a plain int skips the call
    a = action if (type(action) is int and 0 <= action < NUM_KINDS) else action_id(action, NUM_KINDS)
    if a is None or state._round[0] >= state._t.num_rounds or state._hands[seat, a] == 0:
        raise IllegalActionError(agent or f"seat {seat}", action, legal_actions(state, seat), names=kind_name)
    return a


def apply_actions(state: State, picks: Sequence[int]) -> bool:
    """Reveal one pick of every seat at once and pass the hands left (tapeo.txt 'Each pick').

    The picked tapas go to their pickers' bars, then the Freeloaders steal (T6), then every hand
    moves one seat left. When one tapa is left in each hand it is revealed at once (T7, a
    Freeloader among them steals as usual), the round is scored, churros are kept and bars
    cleared (T8) and the next round is dealt; after the last round the end churros (T9) and the
    winners (T10) are settled (:func:`tapeo_env.rules.kernels.step_game`).

    Args:
        picks: one kind per seat (seat order), each in that seat's hand.

    Returns:
        True if this pick finished a round.

    Raises:
        IllegalActionError: a pick outside a seat's hand, a wrong number of picks or a finished
            game; the state is unchanged.
    """
    n = state.config.num_players
    if len(picks) != n:
        raise IllegalActionError("table", list(picks), [f"{n} picks, one per seat"])
    return apply_checked_actions(state, [check_pick(state, i, a) for i, a in enumerate(picks)])


#: The rules' word for :func:`apply_actions` (tapeo.txt 'Each pick'); the same function.
apply_picks = apply_actions


def apply_checked_actions(state: State, kinds: list[int]) -> bool:
    """:func:`apply_actions` without the checks, for callers (the environments) that have just
    checked every pick with :func:`check_pick`: ``kinds`` holds one int kind per seat, each
    in that seat's hand. Returns True if this pick finished a round.

    One kernel call (the batch driver :func:`tapeo_env.rules.kernels.step_batch` over the one game
    of the record: the batched engine's compiled code, nothing more to compile); on a pick that
    ends the round, the history (the automatic last tapas, T7, and the bars before clearing, T8)
    is read from two more calls of the same kernel on a copy of the hands and bars, with a hand
    size that keeps the round going (:func:`_round_end_history`)."""
    t = state._t
    rec = state.record
    picks = np.array([kinds], np.int64)
    nxt = int(state._pick[0]) + 1
    auto = LAST_TAPA_AUTOMATIC and t.hand_size - nxt == 1
    history = _round_end_history(state, picks, auto) if auto or nxt == t.hand_size else None
    state.reveals[int(state._round[0])].append(tuple(kinds))
    flag = np.zeros(1, np.int8)
    kernels.step_batch(rec.hands, rec.bars, rec.churros_kept, rec.round_scores, rec.final_scores, rec.winners,
                       rec.round, rec.pick, t.game, picks, t.hand_size, t.rul, t.croq, flag)
    if flag[0] == kernels.CONTINUES:
        return False
    last, bars = history
    if last is not None:
        state.reveals[-1].append(last)
    state.round_bars.append(bars)
    if flag[0] == kernels.ROUND_OVER:
        _deal(state)
    return True


def _round_end_history(state: State, picks: np.ndarray, auto: bool) -> tuple[Optional[tuple], np.ndarray]:
    """What the records keep of a round that ``picks`` (int64 (1, n)) ends: the automatic last
    tapa of each seat (T7; None if ``auto`` is False) and int64 (n, K) the bars before they are
    cleared (T8).

    Read from :func:`tapeo_env.rules.kernels.step_batch` on copies of the hands, bars and pick,
    stepped with a hand size two larger (so the kernel reveals and passes without revealing the
    last tapa or ending the round): the picks, then, if ``auto``, the one tapa each seat then
    holds. The state is not changed."""
    t, rec = state._t, state.record
    hands, bars, pick = rec.hands.copy(), rec.bars.copy(), rec.pick.copy()
    size, flag = t.hand_size + 2, np.zeros(1, np.int8)
    kernels.step_batch(hands, bars, rec.churros_kept, rec.round_scores, rec.final_scores, rec.winners, rec.round,
                       pick, t.game, picks, size, t.rul, t.croq, flag)
    last = None
    if auto:
        kinds = hands[0].argmax(axis=1)                  # each seat now holds one tapa
        last = tuple(kinds.tolist())
        kernels.step_batch(hands, bars, rec.churros_kept, rec.round_scores, rec.final_scores, rec.winners, rec.round,
                           pick, t.game, kinds[None, :], size, t.rul, t.croq, flag)
    return last, bars[0].astype(np.int64)


def is_terminal(state: State) -> bool:
    """True once the game is over (the last round scored, T9-T10); ``state.terminal``."""
    return state.terminal


def scores(state: State) -> list[int]:
    """Each seat's score, length n: the finished rounds' points, plus the end churros (T9)
    once the game is over (then the final scores)."""
    if state.terminal:
        return state.record.final_scores[0].tolist()
    return state.round_scores.sum(axis=0, dtype=np.int64).tolist()


def winners(state: State) -> list[int]:
    """The seats winning on :func:`scores` (T10: most points, ties broken by the most churros
    held, a remaining tie shared; :func:`tapeo_env.rules.kernels.winning_seats`), ascending;
    the final winners once the game is over."""
    if state.terminal:
        return np.flatnonzero(state.record.winners[0]).tolist()
    out = np.zeros((1, state.config.num_players), bool)
    churros = state.churros_kept + state.bars[:, CHURRO]          # uint8: Config bounds the churros
    kernels.winners_batch(state.round_scores.sum(axis=0, dtype=np.int32)[None, :], churros[None, :], state._t.rul, out)
    return np.flatnonzero(out[0]).tolist()


def _seen(state: State, seat: int) -> np.ndarray:
    """float32 (OBS_SIZE,) the observation of ``seat`` (:func:`tapeo_env.rules.observation.encode`),
    what :func:`known_hands` and :func:`unseen_counts` read their facts from."""
    return observation.encode(state, seat)


def known_hands(state: State, seat: int) -> list[Optional[np.ndarray]]:
    """What ``seat`` knows of the hands the other seats hold now, seat-relative.

    Entry ``j - 1`` (j = 1..n-1) is the hand held by seat ``(seat + j) % n``. ``seat`` held that
    hand ``j`` picks ago if ``pick >= j``; every tapa taken from it since was revealed face up, so
    its current contents are known exactly (a view of :attr:`State.hands`, uint8). Otherwise the
    entry is None (never seen). Which hands are known is the observation's ``known_flags``
    (:func:`tapeo_env.rules.kernels.observe_game`).

    Raises:
        ConfigError: ``seat`` is not a seat of the table, an int in ``0..n-1`` (:func:`hod.core.errors.check_seat`).
    """
    seat = check_seat(seat, state.config.num_players)
    n = state.config.num_players
    flags = _seen(state, seat)[_KNOWN_FLAGS]
    return [state.hands[(seat + j) % n] if flags[j - 1] > 0.5 else None for j in range(1, n)]


def unseen_counts(state: State, seat: int) -> np.ndarray:
    """int64 (K,) tapas of this round's deck that ``seat`` cannot place: the deck minus its hand,
    the hands it knows (:func:`known_hands`) and every bar this round (= every revealed tapa).
    They are in the unseen hands or were not dealt. The observation's ``unseen`` piece
    (:func:`tapeo_env.rules.kernels.observe_game`) times the deck count.

    Raises:
        ConfigError: ``seat`` is not a seat of the table, an int in ``0..n-1`` (:func:`hod.core.errors.check_seat`).
    """
    seat = check_seat(seat, state.config.num_players)
    return _unseen(state, _seen(state, seat))


def _unseen(state: State, obs: np.ndarray) -> np.ndarray:
    """The unseen counts (int64 (K,)) of an observation of ``state``: each entry is
    ``count * (1 / deck count)`` rounded once to float32, which times the deck count rounds back
    to the count (a count of an absent kind is 0)."""
    return np.rint(obs[_UNSEEN].astype(np.float64) * state._t.deck).astype(np.int64)


def sample_consistent_state(state: State, seat: int, rng: np.random.Generator) -> State:
    """A full state ``seat`` cannot tell from ``state``: the unseen tapas (:func:`unseen_counts`)
    redealt at random among the hands ``seat`` has not seen and the undealt pile, and a fresh
    seed for later rounds (explicit deals of a replayed game are dropped: the seat has not seen
    the later rounds' hands). Used by search bots (hod.agents.base ``belief``).

    Random numbers: one seed (:func:`hod.core.deal.draw_seeds`), then one permutation of the
    unseen tapas (``rng.permutation``), dealt to the unseen hands in seat order from ``seat + 1``
    on, the rest undealt.

    Raises:
        ConfigError: ``seat`` is not a seat of the table, an int in ``0..n-1`` (:func:`hod.core.errors.check_seat`).
    """
    seat = check_seat(seat, state.config.num_players)
    s = state.clone()
    s.record.seed[0] = draw_seeds(rng)
    s.preset_deals = None
    if s.terminal:
        return s
    n, p, r = s.config.num_players, s.pick, s.round
    obs = _seen(s, seat)
    flags = obs[_KNOWN_FLAGS]
    unseen_holders = [(seat + j) % n for j in range(1, n) if flags[j - 1] <= 0.5]
    pool = rng.permutation(deck_cards(tuple(_unseen(s, obs))))
    size, at = s.cards_in_hand, 0
    for holder in unseen_holders:
        s.hands[holder] = np.bincount(pool[at:at + size], minlength=NUM_KINDS)
        at += size
        h = (holder - p) % n                              # the seat it was dealt to
        revealed = [s.reveals[r][q][(h + q) % n] for q in range(p)]
        s.dealt[r][h] = revealed + pool[at - size:at].tolist()
    s.undealt[:] = np.bincount(pool[at:], minlength=NUM_KINDS)
    return s


# The kernels, the record and the observation layout import this module's constants and Config:
# imported last, so that any of these modules may be imported first.
from . import batched, kernels, observation  # noqa: E402

_KNOWN_FLAGS = observation.LAYOUT.offsets["known_flags"]
_UNSEEN = observation.LAYOUT.offsets["unseen"]
