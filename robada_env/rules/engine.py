"""Pure rules engine of Ronda Robada (rules: shared/rules/ronda_robada.txt, RULINGS R1-R9).

No PettingZoo here. A frozen :class:`Config` holds the table's parameters; a :class:`State` is
one position, changed in place by :func:`apply_action` (use :meth:`State.clone` to branch).
Everything is plain ``int`` and ``list`` so that a step costs a few microseconds.

The verbs are those of every game's rules (:mod:`tapeo_env.rules.engine` has the same):
:func:`new_game`, :func:`legal_actions`, :func:`legal_mask`, :func:`legal_masks`,
:func:`apply_actions` (one action per seat, ``no-op`` for the seats not to act) and, the game
being sequential, :func:`apply_action` (the seat to act's action), :func:`is_terminal`,
:func:`scores`, :func:`winners`, :meth:`State.clone`.

Deal: the game's seed alone decides the deck order (:func:`hod.core.deal.shuffled`), the same
numbers the batched engine :mod:`robada_env.rules.batched` deals from, so
``new_game(config, seed=s)`` and a batched game reset with seed ``s`` are one game.

Game description (OpenSpiel style):

* sequential, one seat acts at a time; a turn is one or more decisions
  (``start`` then ``tap``/``take``... then ``confirm``; or a single ``drop``);
* chance only in the shuffle at the start (``new_game``); imperfect information
  (other hands and the deck order are hidden, R9);
* 2-4 players; not zero-sum in points (the reward schemes of :mod:`hod.core.rewards` are);
* 27 distinct actions (:mod:`robada_env.rules.actions`);
* longest game: 36 hand cards, each played in at most 1 start + 10 extensions + 1 confirm
  = 12 decisions, so at most :data:`MAX_GAME_LENGTH` = 432 decisions.

Rulings as named constants or options (documented in docs/robada_rules.md):

=====  ==========================================================================================
R1     :mod:`robada_env.rules.cards` (40 cards, points :data:`~robada_env.rules.cards.RANK_POINTS`).
R2     :func:`~robada_env.rules.runs.next_after_start`, :func:`~robada_env.rules.runs.next_after_step`;
       ``Config.closing_ace`` (default True): an Ace may
       follow the Rey and closes the run, whatever the starting rank.
R3     :func:`~robada_env.rules.runs.extension_options`, :data:`LOOSE_BEFORE_PILES`: a loose card of the needed rank must be tapped; only when none
       is on the table may a pile be taken; ``Config.may_take_own_pile`` (default True); an
       empty pile cannot be taken.
R4     :data:`CONFIRM_RIGHT_AFTER_START`, :data:`DROP_WHILE_NO_RUN`; turn passes to the left.
R5     :data:`STARTING_CARD_ON_TOP`.
R6     :data:`LOOSE_AT_START` = 4, :data:`CARDS_PER_DEAL` = 3; re-deal when every hand is empty.
R7     :func:`~robada_env.rules.runs.leftovers_receiver`, ``Config.leftovers_to_last_runner`` (default True): leftover loose cards go under the
       visible card of the pile of the seat that confirmed the last run; to nobody if no run.
R8     :func:`scores`, :func:`winners` (a tie is a shared win).
R9     what is public: see :mod:`robada_env.rules.observation`.
=====  ==========================================================================================
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Optional, Sequence

import numpy as np

from hod.core.deal import game_seed, shuffled_one
from hod.core.errors import ConfigError, IllegalActionError, check_int_range, check_seat

from .actions import CONFIRM, DROP, NOOP, NUM_ACTIONS, START, TAKE, TAP, action_name
from .cards import CARD_POINTS, DECK_SIZE, NUM_RANKS, card_name
from .runs import (NOBODY, RUN_CLOSED, extension_options, startable_ranks, leftovers_receiver, next_after_start,
                   next_after_step)

#: Player counts the game takes (ronda_robada.txt 'Players').
MIN_PLAYERS, MAX_PLAYERS = 2, 4
#: Loose cards put face up at the start (R6).
LOOSE_AT_START = 4
#: Cards dealt to each player per deal (R6).
CARDS_PER_DEAL = 3
#: R3: while a loose card of the needed rank is on the table, the run can only be extended by
#: tapping it; piles only when none is there. (A fixed rule, not an option.)
LOOSE_BEFORE_PILES = True
#: R4: a run may be confirmed right after it starts (hand card + one loose card).
CONFIRM_RIGHT_AFTER_START = True
#: R4: dropping is allowed whenever no run has started this turn, even if a start is possible.
DROP_WHILE_NO_RUN = True
#: R5: on confirm the hand card that started the run becomes the pile's visible card.
STARTING_CARD_ON_TOP = True
# ``RUN_CLOSED`` (``State.run_next`` when the run can go no further, R2) and ``NOBODY``
# (``State.last_runner`` when nobody has confirmed a run yet, R7) come from :mod:`.runs`.
#: Upper bound on the number of decisions in one game (see the module docstring).
MAX_GAME_LENGTH = 36 * 12


@dataclass(frozen=True)
class Config:
    """Parameters of one table (immutable).

    Attributes:
        num_players: 2..4 (ronda_robada.txt 'Players').
        closing_ace: R2, an Ace may follow the Rey to close a run.
        may_take_own_pile: R3, a runner may take their own pile.
        leftovers_to_last_runner: R7, leftover loose cards go to the last runner's pile
            (False: they go to nobody).

    Raises:
        ConfigError: a value outside its legal set (the message names the legal values).
    """

    num_players: int = 2
    closing_ace: bool = True
    may_take_own_pile: bool = True
    leftovers_to_last_runner: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "num_players", check_int_range("num_players", self.num_players, MIN_PLAYERS, MAX_PLAYERS)
        )
        for f in fields(self):
            if f.type in (bool, "bool") and not isinstance(getattr(self, f.name), bool):
                raise ConfigError(f"{f.name}={getattr(self, f.name)!r} must be True or False")

    @staticmethod
    def option_names() -> list[str]:
        """Names of the options (the keyword arguments of the constructor)."""
        return [f.name for f in fields(Config)]

    def as_dict(self) -> dict:
        """The options as a plain dict (for records)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


class State:
    """One position of a game. Fields are public for encoders, bots and tests; change them only
    through :func:`apply_action` (or build positions with :func:`from_position`).

    Attributes:
        config: the :class:`Config`.
        n: number of players.
        deck_order: the 40 card ids in shuffled order as dealt (``None`` for built positions).
        deck: cards still to deal, next card first (list of card ids).
        hands: per seat, the list of card ids in hand (deal order).
        loose: loose cards on the table (table order: oldest first).
        piles: per seat, the list of card ids in the pile; the visible card is the LAST one.
        points: per seat, the points in the pile (kept in step with ``piles``).
        current: seat to act (meaningless once ``terminal``).
        run: cards gathered by the run in progress, starting card first ([] when no run).
        run_start: rank the run started with (-1 when no run).
        run_rank: rank of the run's latest step (-1 when no run).
        run_next: rank the run needs next, or :data:`RUN_CLOSED` (also when no run).
        run_taken: seats whose piles this run has taken, in order.
        last_runner: seat that confirmed the last run, or :data:`NOBODY` (R7).
        terminal: the game is over.
        history: every action applied, in order (ints).
    """

    __slots__ = (
        "config", "n", "deck_order", "deck", "hands", "loose", "piles", "points", "current",
        "run", "run_start", "run_rank", "run_next", "run_taken", "last_runner", "terminal",
        "history", "_legal",
    )

    def clone(self) -> "State":
        """An independent copy (lists copied)."""
        s = State.__new__(State)
        s.config = self.config
        s.n = self.n
        s.deck_order = self.deck_order
        s.deck = list(self.deck)
        s.hands = [list(h) for h in self.hands]
        s.loose = list(self.loose)
        s.piles = [list(p) for p in self.piles]
        s.points = list(self.points)
        s.current = self.current
        s.run = list(self.run)
        s.run_start = self.run_start
        s.run_rank = self.run_rank
        s.run_next = self.run_next
        s.run_taken = list(self.run_taken)
        s.last_runner = self.last_runner
        s.terminal = self.terminal
        s.history = list(self.history)
        s._legal = self._legal
        return s

    def card_count(self) -> int:
        """Cards anywhere (deck, hands, table, piles, run); 40 at every step."""
        return (
            len(self.deck) + sum(map(len, self.hands)) + len(self.loose)
            + sum(map(len, self.piles)) + len(self.run)
        )

    def __repr__(self) -> str:
        return (
            f"State(n={self.n}, current={self.current}, deck={len(self.deck)}, "
            f"hands={[len(h) for h in self.hands]}, loose={[card_name(c) for c in self.loose]}, "
            f"piles={[len(p) for p in self.piles]}, points={self.points}, run={len(self.run)}, "
            f"terminal={self.terminal})"
        )


def _check_config(config: Optional[Config]) -> Config:
    if config is None:
        return Config()
    if not isinstance(config, Config):
        raise ConfigError(f"config must be a robada_env.rules.engine.Config, got {type(config).__name__}")
    return config


def _empty_state(config: Config) -> State:
    s = State.__new__(State)
    s.config = config
    s.n = config.num_players
    s.deck_order = None
    s.deck = []
    s.hands = [[] for _ in range(s.n)]
    s.loose = []
    s.piles = [[] for _ in range(s.n)]
    s.points = [0] * s.n
    s.current = 0
    s.run = []
    s.run_start = -1
    s.run_rank = -1
    s.run_next = RUN_CLOSED
    s.run_taken = []
    s.last_runner = NOBODY
    s.terminal = False
    s.history = []
    s._legal = None
    return s


_CARD_IDS = np.arange(DECK_SIZE, dtype=np.int8)
_CARD_ID_LIST = _CARD_IDS.tolist()
_CARD_IDS.setflags(write=False)


def shuffled_deck(seed: int) -> list[int]:
    """The 40 card ids in the order game seed ``seed`` (int, 0..2**64-1) shuffles them:
    :func:`hod.core.deal.shuffled` of the ids 0..39, stream 0 (the batched engine's deal)."""
    return shuffled_one(_CARD_ID_LIST, seed)


def new_game(
    config: Optional[Config] = None,
    seed: Optional[int] = None,
    rng: Optional[np.random.Generator] = None,
    deck: Optional[Sequence[int]] = None,
) -> State:
    """Shuffle and deal a new game (R6): 4 loose cards, then 3 cards to each seat 0, 1, ...
    (dealt in blocks of 3 in seat order, the deck's next card first). Seat 0 acts first.

    Args:
        config: table parameters (default ``Config()``: 2 players).
        seed: the game's seed, an int in 0..2**64-1 (None: a fresh one); the deck order is
            :func:`shuffled_deck` of it, as the batched engine deals a game reset with ``seed``.
        rng: draw the seed from this generator instead (takes precedence over ``seed``).
        deck: an explicit deck order (40 distinct card ids) instead of a shuffle.

    Returns:
        the :class:`State` after the first deal, seat 0 to act.

    Raises:
        ConfigError: bad config, a seed that is not an int in 0..2**64-1, or a ``deck`` that
            is not a permutation of 0..39.
    """
    config = _check_config(config)
    if deck is None:
        deck = shuffled_deck(game_seed(seed, rng))
    else:
        deck = [int(c) for c in deck]
        if sorted(deck) != list(range(DECK_SIZE)):
            raise ConfigError(f"deck must be a permutation of the card ids 0..{DECK_SIZE - 1}")
    s = _empty_state(config)
    s.deck_order = tuple(deck)
    s.loose = deck[:LOOSE_AT_START]
    s.deck = deck[LOOSE_AT_START:]
    _deal(s)
    return s


def from_position(
    config: Optional[Config] = None,
    hands: Sequence[Sequence[int]] = (),
    loose: Sequence[int] = (),
    piles: Optional[Sequence[Sequence[int]]] = None,
    deck: Sequence[int] = (),
    current: int = 0,
    last_runner: int = NOBODY,
) -> State:
    """Build a position by hand (tests, puzzles, bots' belief samples). No run in progress.

    Args:
        hands: per seat, card ids in hand (length ``num_players``).
        loose: loose cards on the table.
        piles: per seat, pile cards, visible card last (default: all empty).
        deck: cards still to deal, next first.
        current: seat to act.
        last_runner: seat that confirmed the last run, or ``NOBODY``.

    Raises:
        ConfigError: wrong number of seats, or the cards are not 40 distinct ids.
    """
    config = _check_config(config)
    s = _empty_state(config)
    n = s.n
    piles = piles if piles is not None else [[] for _ in range(n)]
    if len(hands) != n or len(piles) != n:
        raise ConfigError(f"hands and piles need one entry per seat ({n})")
    s.hands = [list(map(int, h)) for h in hands]
    s.loose = list(map(int, loose))
    s.piles = [list(map(int, p)) for p in piles]
    s.points = [sum(CARD_POINTS[c] for c in p) for p in s.piles]
    s.deck = list(map(int, deck))
    s.current = check_int_range("current", current, 0, n - 1)
    s.last_runner = last_runner
    every = s.deck + s.loose + [c for h in s.hands for c in h] + [c for p in s.piles for c in p]
    if sorted(every) != list(range(DECK_SIZE)):
        raise ConfigError(f"a position must hold each of the {DECK_SIZE} card ids exactly once")
    _end_turn_checks(s)
    return s


def _deal(s: State) -> None:
    """R6: 3 cards to each seat in seat order, from the top of the deck."""
    d = s.deck
    k = CARDS_PER_DEAL
    for i in range(s.n):
        s.hands[i].extend(d[i * k:(i + 1) * k])
    del d[: s.n * k]


def legal_actions(s: State, seat: Optional[int] = None) -> list[int]:
    """The legal actions of ``seat`` (default: the seat to act), ascending: empty once terminal
    or when ``seat`` is not to act (its only move is then ``no-op``, see :func:`legal_mask`).
    Cached per state (do not modify the list).

    Rules: no run yet -> ``start r`` for each rank r in hand with a loose card of rank r
    ('How to play'), and ``drop r`` for each rank in hand (R4). Run in progress -> ``tap loose``
    if a loose card of the needed rank is on the table, otherwise ``take pile +k`` for each
    non-empty pile whose visible card has that rank (R3); ``confirm`` always (R4).

    Raises:
        ConfigError: ``seat`` is not a seat of the table, an int in ``0..n-1`` (:func:`hod.core.errors.check_seat`).
    """
    if seat is not None:
        seat = check_seat(seat, s.n)
    if seat is not None and seat != s.current:
        return []
    if s._legal is not None:
        return s._legal
    out: list[int]
    if s.terminal:
        out = []
    elif not s.run:
        held = {c % NUM_RANKS for c in s.hands[s.current]}
        out = [START + r for r in startable_ranks(held, {c % NUM_RANKS for c in s.loose})]
        out.extend(DROP + r for r in sorted(held))
    else:
        n, cur, piles = s.n, s.current, s.piles
        # visible ranks seen from the runner: index k is the pile of seat (cur + k) % n
        tops = [p[-1] % NUM_RANKS if p else -1 for p in (piles[(cur + k) % n] for k in range(n))]
        tap, seats = extension_options(s.run_next, _rank_counts(s.loose), tops, 0, s.config.may_take_own_pile)
        out = [TAP] if tap else [TAKE + k for k in seats]
        out.append(CONFIRM)
    s._legal = out
    return out


def _rank_counts(cards: list[int]) -> list[int]:
    """(10,) cards of each rank in ``cards``."""
    cnt = [0] * NUM_RANKS
    for c in cards:
        cnt[c % NUM_RANKS] += 1
    return cnt


def legal_mask(s: State, seat: int) -> np.ndarray:
    """int8 mask of shape (NUM_ACTIONS,) for ``seat``: its legal actions if it is to act, else
    only ``no-op`` (also once the game is over, so the mask is never empty).

    Raises:
        ConfigError: ``seat`` is not a seat of the table, an int in ``0..n-1`` (:func:`hod.core.errors.check_seat`).
    """
    seat = check_seat(seat, s.n)
    m = np.zeros(NUM_ACTIONS, dtype=np.int8)
    if not s.terminal and seat == s.current:
        m[legal_actions(s)] = 1
    else:
        m[NOOP] = 1
    return m


#: Per player count, the masks of a table where nobody may act but ``no-op`` (int8 (n, NUM_ACTIONS)).
_NOOP_ONLY = {n: np.eye(NUM_ACTIONS, dtype=np.int8)[[NOOP] * n] for n in range(MIN_PLAYERS, MAX_PLAYERS + 1)}


def legal_masks(s: State) -> np.ndarray:
    """int8 (n, NUM_ACTIONS): row ``i`` is :func:`legal_mask` of seat ``i`` (a fresh array)."""
    m = _NOOP_ONLY[s.n].copy()
    if not s.terminal:
        row = m[s.current]
        row[NOOP] = 0
        row[legal_actions(s)] = 1
    return m


def _take_rank(cards: list[int], rank: int) -> int:
    """Remove and return the first card of ``rank`` in ``cards``."""
    for i, c in enumerate(cards):
        if c % NUM_RANKS == rank:
            return cards.pop(i)
    raise AssertionError("no card of that rank")  # unreachable after the legality check


def _advance(s: State, gathered_rank: int) -> None:
    """Record one extension step that gathered ``gathered_rank`` (R2, :func:`next_after_step`)."""
    s.run_rank = gathered_rank
    s.run_next = next_after_step(gathered_rank, s.config.closing_ace)


def apply_action(s: State, action: int) -> None:
    """Apply ``action`` for the seat to act, in place.

    Raises:
        IllegalActionError: ``action`` is not in :func:`legal_actions` (names the legal
            actions); the state is unchanged.
    """
    legal = legal_actions(s)
    if action not in legal:
        who = f"player_{s.current}" if not s.terminal else "nobody (game over)"
        raise IllegalActionError(who, action, legal, action_name)
    a = int(action)
    cur = s.current
    s._legal = None
    s.history.append(a)
    if a < DROP:  # start a run: hand card + loose card of the same rank
        r = a - START
        s.run = [_take_rank(s.hands[cur], r), _take_rank(s.loose, r)]
        s.run_start = r
        s.run_rank = r
        s.run_next = next_after_start(r, s.config.closing_ace)  # a starting Ace needs the 2
        s.run_taken = []
    elif a < TAP:  # drop: the card becomes loose, turn ends (R4)
        s.loose.append(_take_rank(s.hands[cur], a - DROP))
        _end_turn(s)
    elif a == TAP:  # tap a loose card of the needed rank (R3)
        r = s.run_next
        s.run.append(_take_rank(s.loose, r))
        _advance(s, r)
    elif a < CONFIRM:  # take a whole pile (R3)
        t = (cur + a - TAKE) % s.n
        r = s.run_next
        s.run.extend(s.piles[t])
        s.piles[t] = []
        s.points[t] = 0
        s.run_taken.append(t)
        _advance(s, r)
    else:  # confirm (R4, R5): gathered cards to the pile, starting card on top
        run = s.run
        pile = s.piles[cur]
        pile.extend(run[1:])
        pile.append(run[0])
        s.points[cur] += sum(CARD_POINTS[c] for c in run)
        s.last_runner = cur
        s.run = []
        s.run_start = s.run_rank = -1
        s.run_next = RUN_CLOSED
        s.run_taken = []
        _end_turn(s)


def apply_actions(s: State, actions: Sequence[int]) -> None:
    """Apply a joint action, one per seat in seat order (the form of simultaneous games such as
    Tapeo): the seat to act's action is applied with :func:`apply_action`; every other seat
    must give ``no-op``.

    Raises:
        IllegalActionError: a wrong number of actions, a seat not to act that does not give
            ``no-op``, or an illegal action of the seat to act; the state is unchanged.
    """
    if len(actions) != s.n:
        raise IllegalActionError("table", list(actions), [f"{s.n} actions, one per seat"])
    for i, a in enumerate(actions):
        if i != s.current and a != NOOP:
            raise IllegalActionError(f"player_{i}", a, [NOOP], action_name)
    apply_action(s, actions[s.current])


def is_terminal(s: State) -> bool:
    """True once the game is over (R7: every card dealt and played); ``s.terminal``."""
    return s.terminal


def _end_turn(s: State) -> None:
    s.current = (s.current + 1) % s.n  # turn order to the left (RULINGS preamble, R4)
    _end_turn_checks(s)


def _end_turn_checks(s: State) -> None:
    """Re-deal when every hand is empty (R6); end the game when the deck is out too (R7)."""
    if any(s.hands):
        if not s.hands[s.current]:  # cannot happen with equal deals; kept for built positions
            while not s.hands[s.current]:
                s.current = (s.current + 1) % s.n
        return
    if s.deck:
        _deal(s)
        return
    s.terminal = True
    s._legal = None
    w = leftovers_receiver(s.last_runner, s.config.leftovers_to_last_runner)
    if s.loose and w != NOBODY:
        pile = s.piles[w]
        top = pile[-1:]  # the visible card stays the last starting card
        del pile[-1:]
        pile.extend(s.loose)
        pile.extend(top)
        s.points[w] += sum(CARD_POINTS[c] for c in s.loose)
        s.loose = []


def scores(s: State) -> list[int]:
    """Each seat's score: the sum of card points in its pile (R8). Shape (n,), ints."""
    return list(s.points)


def winners(s: State) -> list[int]:
    """Seats with the highest score (R8: a tie is a shared win), ascending."""
    best = max(s.points)
    return [i for i, p in enumerate(s.points) if p == best]


def is_legal(s: State, action: int) -> bool:
    """Whether ``action`` is legal for the seat to act."""
    return action in legal_actions(s)


def sample_consistent_state(state: State, seat: int, rng: np.random.Generator) -> State:
    """A full state that ``seat`` cannot tell from ``state`` (RULINGS R9): the cards hidden from
    ``seat`` (other seats' hands and the deck) are shuffled with ``rng`` and dealt back into the
    same places in the same numbers. Everything public and ``seat``'s own hand are kept, so
    ``observation.encode(result, seat)`` equals ``encode(state, seat)``. Used by search bots
    (``hod.agents.base`` ``belief``). ``deck_order`` of the result is ``None`` (the original deal is
    no longer what this state came from).

    Raises:
        ConfigError: ``seat`` is not a seat of the table, an int in ``0..n-1`` (:func:`hod.core.errors.check_seat`).
    """
    seat = check_seat(seat, state.n)
    s = state.clone()
    s.deck_order = None
    if s.terminal:
        return s
    others = [i for i in range(s.n) if i != seat]
    pool = [c for i in others for c in s.hands[i]] + s.deck
    pool = [pool[i] for i in rng.permutation(len(pool))]
    at = 0
    for i in others:
        k = len(s.hands[i])
        s.hands[i] = pool[at:at + k]
        at += k
    s.deck = pool[at:]
    s._legal = None
    return s
