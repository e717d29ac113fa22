"""The pure, seeded Tapeo rules engine (no PettingZoo): deal, legal picks, simultaneous reveal,
passing to the left, the Freeloader, round and game scoring (tapeo.txt; RULINGS T1-T10).

Game shape (the OpenSpiel-style declaration):

* players 2-6, simultaneous moves, imperfect information, general-sum, chance = the deal;
* 10 distinct actions (one per kind of tapa, hams by slice count, see :mod:`tapeo_env.rules.cards`);
* a round is ``hand_size - 1`` decision picks (the last tapa is revealed automatically, T7), a
  game is 3 rounds: at most ``3 * 9 = 27`` decision picks per seat (2 players).

Seats are ``0..n-1``; the player on the left of seat ``i`` is ``(i + 1) % n``: you pass your hand
to them and your Freeloader steals from them (RULINGS preamble, T6).

Hands are identified by the seat they were dealt to this round: hand ``h`` is held at pick ``p`` by
seat ``(h + p) % n`` (it has been passed left ``p`` times). The state is mutated in place by
:func:`apply_actions` (fast: small int64 arrays, no per-step allocation beyond a few scalars); use
:meth:`State.clone` to branch.

The verbs are those of every game's rules (:mod:`robada_env.rules.engine` has the same):
:func:`new_game`, :func:`legal_actions`, :func:`legal_mask`, :func:`legal_masks`,
:func:`apply_actions` (one action per seat; Tapeo is simultaneous, so there is no
one-seat ``apply_action``; :func:`apply_picks` is the same function under the rules' word),
:func:`is_terminal`, :func:`scores`, :func:`winners`, :meth:`State.clone`.

Deals: the game's seed alone decides every round's deal (:func:`hod.core.deal.shuffled_prefix`,
stream = the round), the same numbers the batched engine :mod:`tapeo_env.rules.batched` deals
from, so ``new_game(config, seed=s)`` and a batched game reset with seed ``s`` are one game.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

from hod.core.deal import draw_seeds, game_seed, shuffled_prefix_one
from hod.core.errors import ConfigError, IllegalActionError, action_id, check_int_range, check_seat

from .cards import (
    CHURRO, DECK_COMPOSITION, FREELOADER, HAND_SIZES, KIND_NAMES, MAX_PLAYERS, MIN_PLAYERS, NUM_KINDS,
    deck_cards, kind_name,
)
from .scoring import DEFAULT_RULINGS, Rulings, churro_points, round_points, winning_seats

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


@dataclass(frozen=True)
class Config:
    """Static parameters of a game (immutable).

    Attributes:
        num_players: 2..6.
        deck: count of each kind (T1, :data:`~tapeo_env.rules.cards.DECK_COMPOSITION`).
        hand_size: cards dealt to each seat per round; ``None`` = the rule's 10/9/8/7/7.
        num_rounds: rounds per game (3).
        rulings: scoring numbers and rulings (:class:`~tapeo_env.rules.scoring.Rulings`).

    Raises:
        ConfigError: player count outside 2..6 (the message lists them), a deck of the wrong
            length or too small for the deal, a hand size below 1.
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
        if len(deck) != NUM_KINDS or min(deck) < 0:
            raise ConfigError(f"deck must give {NUM_KINDS} non-negative counts for {list(KIND_NAMES)}")
        object.__setattr__(self, "deck", deck)
        hs = HAND_SIZES[n] if self.hand_size is None else check_int_range("hand_size", self.hand_size, 1, 20)
        object.__setattr__(self, "hand_size", hs)
        if n * hs > sum(deck):
            raise ConfigError(f"a deck of {sum(deck)} tapas cannot deal {hs} to each of {n} players")
        check_int_range("num_rounds", self.num_rounds, 1, 10)

    @property
    def decision_picks(self) -> int:
        """Picks per round that ask a decision: ``hand_size - 1`` (T7)."""
        return self.hand_size - 1 if LAST_TAPA_AUTOMATIC else self.hand_size


@dataclass
class State:
    """One position of a game. Mutated in place by :func:`apply_actions`.

    Attributes (n = number of seats, K = NUM_KINDS, all arrays int64):
        config: the :class:`Config`.
        round: current round, 0-based (``== num_rounds`` once the game is over).
        pick: tapas already revealed from each hand this round (0-based pick index).
        hands: (n, K) contents of hand h (the hand dealt to seat h this round).
        bars: (n, K) tapas on each seat's bar this round (Freeloader cards and stolen tapas included).
        churros_kept: (n,) churros kept from finished rounds (T8).
        undealt: (K,) tapas of this round's deck not dealt (hidden).
        round_scores: (num_rounds, n) points scored in each finished round.
        dealt: per round, per hand, the kinds dealt in deal order (for records).
        reveals: per round, per pick, the kind each seat revealed (the automatic last tapa included).
        round_bars: bars of each finished round, as they were before clearing.
        final_scores: (n,) once the game is over (round scores + end churros, T9), else None.
        winners: winning seats (T10) once over, else None.
        seed: the game's seed (int, 0..2**64-1): every round's deal is drawn from it.
        preset_deals: explicit deals (record replay) instead.
    """

    config: Config
    round: int
    pick: int
    hands: np.ndarray
    bars: np.ndarray
    churros_kept: np.ndarray
    undealt: np.ndarray
    round_scores: np.ndarray
    dealt: list = field(default_factory=list)
    reveals: list = field(default_factory=list)
    round_bars: list = field(default_factory=list)
    final_scores: Optional[np.ndarray] = None
    winners: Optional[tuple] = None
    seed: int = 0
    preset_deals: Optional[list] = None

    @property
    def num_players(self) -> int:
        return self.config.num_players

    @property
    def terminal(self) -> bool:
        """True once the last round has been scored (the game is over)."""
        return self.round >= self.config.num_rounds

    @property
    def cards_in_hand(self) -> int:
        """Tapas in every hand right now (all hands have the same size)."""
        return 0 if self.terminal else self.config.hand_size - self.pick

    def hand_id(self, seat: int) -> int:
        """The hand (by the seat it was dealt to) that ``seat`` holds now."""
        return (seat - self.pick) % self.config.num_players

    def hand(self, seat: int) -> np.ndarray:
        """Counts (K,) of the hand ``seat`` holds now (a view; do not modify)."""
        return self.hands[(seat - self.pick) % self.config.num_players]

    def churros_held(self) -> np.ndarray:
        """(n,) churros kept from earlier rounds plus those on the bars this round."""
        return self.churros_kept + self.bars[:, CHURRO]

    def scores_so_far(self) -> np.ndarray:
        """(n,) sum of the finished rounds' scores (end churros not included)."""
        return self.round_scores.sum(axis=0)

    def clone(self) -> "State":
        """An independent copy (arrays and lists copied; same seed, so the same later deals)."""
        return State(
            config=self.config, round=self.round, pick=self.pick, hands=self.hands.copy(),
            bars=self.bars.copy(), churros_kept=self.churros_kept.copy(), undealt=self.undealt.copy(),
            round_scores=self.round_scores.copy(), dealt=[[list(h) for h in r] for r in self.dealt],
            reveals=[[tuple(p) for p in r] for r in self.reveals], round_bars=[b.copy() for b in self.round_bars],
            final_scores=None if self.final_scores is None else self.final_scores.copy(),
            winners=self.winners, seed=self.seed,
            preset_deals=self.preset_deals,
        )


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
    n, k = config.num_players, NUM_KINDS
    if deals is not None:
        deals = [[[int(c) for c in hand] for hand in rnd] for rnd in deals]
        if len(deals) != config.num_rounds:
            raise ConfigError(f"deals must hold {config.num_rounds} rounds, got {len(deals)}")
    state = State(
        config=config, round=0, pick=0, hands=np.zeros((n, k), np.int64), bars=np.zeros((n, k), np.int64),
        churros_kept=np.zeros(n, np.int64), undealt=np.zeros(k, np.int64),
        round_scores=np.zeros((config.num_rounds, n), np.int64),
        seed=game_seed(seed, rng), preset_deals=deals,
    )
    _deal(state)
    return state


def _deal(state: State) -> None:
    """Deal round ``state.round``: the whole deck is reshuffled (tapeo.txt), each seat gets
    ``hand_size`` tapas."""
    cfg = state.config
    n, hs = cfg.num_players, cfg.hand_size
    deck, sorted_deck_list, hand_offset = _deal_tables(cfg)
    if state.preset_deals is not None:
        hands = state.preset_deals[state.round]
        if len(hands) != n or any(len(h) != hs for h in hands):
            raise ConfigError(f"round {state.round}: deals must give {n} hands of {hs} tapas")
        if any(not 0 <= c < NUM_KINDS for h in hands for c in h):
            raise ConfigError(f"round {state.round}: dealt kinds must be in 0..{NUM_KINDS - 1}")
        order = [list(h) for h in hands]
        cards = np.array(order, np.int64).ravel()
    else:
        dealt = shuffled_prefix_one(sorted_deck_list, state.seed, state.round, n * hs)
        order = [dealt[i * hs:(i + 1) * hs] for i in range(n)]
        cards = np.array(dealt, np.int64)
    # count each hand's kinds at once: card c of hand h is bin h * K + c
    state.hands[:] = np.bincount(cards + hand_offset, minlength=n * NUM_KINDS).reshape(n, NUM_KINDS)
    state.undealt[:] = deck - state.hands.sum(axis=0)
    if state.undealt.min() < 0:
        raise ConfigError(f"round {state.round}: the deal holds more of a kind than the deck {list(cfg.deck)}")
    state.dealt.append(order)
    state.reveals.append([])
    state.pick = 0
    state.bars[:] = 0


_DEAL_TABLES: dict[tuple, tuple] = {}


def _deal_tables(cfg: Config) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cached per (deck, n, hand size): the deck counts (int64 (K,)), the deck as sorted kinds
    (a tuple, :func:`~tapeo_env.rules.cards.deck_cards`) and ``K * hand`` for each dealt position (n*hs,).
    Read-only: ``rng.permutation`` shuffles a copy."""
    key = (cfg.deck, cfg.num_players, cfg.hand_size)
    tables = _DEAL_TABLES.get(key)
    if tables is None:
        n, hs = cfg.num_players, cfg.hand_size
        tables = (np.asarray(cfg.deck, np.int64), tuple(deck_cards(cfg.deck).tolist()),
                  np.repeat(np.arange(n, dtype=np.int64) * NUM_KINDS, hs))
        for t in (tables[0], tables[2]):
            t.setflags(write=False)
        _DEAL_TABLES[key] = tables
    return tables


def legal_mask(state: State, seat: int) -> np.ndarray:
    """int8 (NUM_KINDS,): 1 for each kind in ``seat``'s hand (all zeros once the game is over).

    Raises:
        ConfigError: ``seat`` is not a seat of the table, an int in ``0..n-1`` (:func:`hod.core.errors.check_seat`).
    """
    seat = check_seat(seat, state.config.num_players)
    if state.terminal:
        return np.zeros(NUM_KINDS, np.int8)
    return (state.hand(seat) > 0).astype(np.int8)


def legal_masks(state: State) -> np.ndarray:
    """int8 (n, NUM_KINDS): row ``i`` is :func:`legal_mask` of seat ``i`` (a fresh array)."""
    n = state.config.num_players
    if state.terminal:
        return np.zeros((n, NUM_KINDS), np.int8)
    return (state.hands.take(_held_hands(n, state.pick), axis=0) > 0).view(np.int8)


_HELD: dict[tuple[int, int], np.ndarray] = {}


def _held_hands(n: int, pick: int) -> np.ndarray:
    """(n,) hand id held by each seat at ``pick``: ``(seat - pick) % n`` (cached)."""
    held = _HELD.get((n, pick))
    if held is None:
        held = _HELD[(n, pick)] = (np.arange(n) - pick) % n
    return held


def legal_actions(state: State, seat: int) -> list[int]:
    """The kinds ``seat`` may pick now, ascending (empty once the game is over).

    Raises:
        ConfigError: ``seat`` is not a seat of the table, an int in ``0..n-1`` (:func:`hod.core.errors.check_seat`).
    """
    seat = check_seat(seat, state.config.num_players)
    if state.terminal:
        return []
    return [int(a) for a in np.flatnonzero(state.hand(seat))]


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
    if (a is None or state.round >= state.config.num_rounds
            or state.hands[(seat - state.pick) % state.config.num_players, a] <= 0):
        raise IllegalActionError(agent or f"seat {seat}", action, legal_actions(state, seat), names=kind_name)
    return a


def apply_actions(state: State, picks: Sequence[int]) -> bool:
    """Reveal one pick of every seat at once and pass the hands left (tapeo.txt 'Each pick').

    The picked tapas go to their pickers' bars, then the Freeloaders steal (T6), then every hand
    moves one seat left. When one tapa is left in each hand it is revealed at once (T7, a
    Freeloader among them steals as usual), the round is scored, churros are kept and bars
    cleared (T8) and the next round is dealt; after the last round the end churros (T9) and the
    winners (T10) are settled.

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
    in that seat's hand. Returns True if this pick finished a round."""
    n = state.config.num_players
    _reveal(state, kinds)
    if state.config.hand_size - state.pick == 1 and LAST_TAPA_AUTOMATIC:
        last = state.hands[_held_hands(n, state.pick)].argmax(axis=1).tolist()  # each hand's one tapa
        _reveal(state, last)
    if state.pick == state.config.hand_size:
        _end_round(state)
        return True
    return False


def _reveal(state: State, kinds: list[int]) -> None:
    """Move each seat's revealed tapa from its hand to its bar, resolve the steals (T6), pass."""
    n = state.config.num_players
    hands, bars, p = state.hands, state.bars, state.pick
    for i, kind in enumerate(kinds):
        hands[(i - p) % n, kind] -= 1
        bars[i, kind] += 1
    for i, kind in enumerate(kinds):
        if kind == FREELOADER:
            victim = (i + 1) % n
            loot = kinds[victim]
            if loot != FREELOADER or FREELOADER_STEALS_FREELOADER:
                bars[victim, loot] -= 1
                bars[i, loot] += 1
    state.reveals[state.round].append(tuple(kinds))
    state.pick = p + 1


def _end_round(state: State) -> None:
    """Score the round, keep churros, clear bars, deal the next round or finish the game."""
    cfg = state.config
    state.round_scores[state.round] = round_points(state.bars, cfg.rulings)
    state.round_bars.append(state.bars.copy())
    if CHURROS_KEPT_ACROSS_ROUNDS:
        state.churros_kept += state.bars[:, CHURRO]
    state.bars[:] = 0
    state.round += 1
    if state.round < cfg.num_rounds:
        _deal(state)
    else:
        state.pick = 0
        state.final_scores = state.round_scores.sum(axis=0) + churro_points(state.churros_kept, cfg.rulings)
        state.winners = winning_seats(state.final_scores, state.churros_kept, cfg.rulings)


def is_terminal(state: State) -> bool:
    """True once the game is over (the last round scored, T9-T10); ``state.terminal``."""
    return state.terminal


def scores(state: State) -> list[int]:
    """Each seat's score, length n: the finished rounds' points, plus the end churros (T9)
    once the game is over (then the final scores)."""
    if state.final_scores is not None:
        return state.final_scores.tolist()
    return state.round_scores.sum(axis=0).tolist()


def winners(state: State) -> list[int]:
    """The seats winning on :func:`scores` (T10: most points, ties broken by the most churros
    held, a remaining tie shared), ascending; the final winners once the game is over."""
    if state.winners is not None:
        return list(state.winners)
    return list(winning_seats(scores(state), state.churros_held(), state.config.rulings))


def known_hands(state: State, seat: int) -> list[Optional[np.ndarray]]:
    """What ``seat`` knows of the hands the other seats hold now, seat-relative.

    Entry ``j - 1`` (j = 1..n-1) is the hand held by seat ``(seat + j) % n``. ``seat`` held that
    hand ``j`` picks ago if ``pick >= j``; every tapa taken from it since was revealed face up, so
    its current contents are known exactly (a view). Otherwise the entry is None (never seen).

    Raises:
        ConfigError: ``seat`` is not a seat of the table, an int in ``0..n-1`` (:func:`hod.core.errors.check_seat`).
    """
    seat = check_seat(seat, state.config.num_players)
    n = state.config.num_players
    return [state.hand((seat + j) % n) if state.pick >= j and not state.terminal else None for j in range(1, n)]


def unseen_counts(state: State, seat: int) -> np.ndarray:
    """(K,) tapas of this round's deck that ``seat`` cannot place: the deck minus its hand, the
    hands it knows (:func:`known_hands`) and every bar this round (= every revealed tapa).
    They are in the unseen hands or were not dealt.

    Raises:
        ConfigError: ``seat`` is not a seat of the table, an int in ``0..n-1`` (:func:`hod.core.errors.check_seat`).
    """
    seat = check_seat(seat, state.config.num_players)
    out = np.asarray(state.config.deck, np.int64) - state.bars.sum(axis=0)
    if state.terminal:
        return out
    out = out - state.hand(seat)
    for h in known_hands(state, seat):
        if h is not None:
            out = out - h
    return out


def sample_consistent_state(state: State, seat: int, rng: np.random.Generator) -> State:
    """A full state ``seat`` cannot tell from ``state``: the unseen tapas (:func:`unseen_counts`)
    redealt at random among the hands ``seat`` has not seen and the undealt pile, and a fresh
    seed for later rounds (explicit deals of a replayed game are dropped: the seat has not seen
    the later rounds' hands). Used by search bots (hod.agents.base ``belief``).

    Raises:
        ConfigError: ``seat`` is not a seat of the table, an int in ``0..n-1`` (:func:`hod.core.errors.check_seat`).
    """
    seat = check_seat(seat, state.config.num_players)
    s = state.clone()
    s.seed = draw_seeds(rng)
    s.preset_deals = None
    if s.terminal:
        return s
    n = s.config.num_players
    unseen_hands = [s.hand_id((seat + j) % n) for j in range(1, n) if s.pick < j]
    pool = rng.permutation(deck_cards(tuple(unseen_counts(s, seat))))
    size, at = s.cards_in_hand, 0
    for h in unseen_hands:
        s.hands[h] = np.bincount(pool[at:at + size], minlength=NUM_KINDS)
        at += size
        revealed = [s.reveals[s.round][q][(h + q) % n] for q in range(s.pick)]
        s.dealt[s.round][h] = revealed + pool[at - size:at].tolist()
    s.undealt[:] = np.bincount(pool[at:], minlength=NUM_KINDS)
    return s
