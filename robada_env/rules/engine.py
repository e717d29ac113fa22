"""Pure rules engine of Ronda Robada (rules: shared/rules/ronda_robada.txt, RULINGS R1-R9).

No PettingZoo here. A frozen :class:`Config` holds the table's parameters; a :class:`State` is
one position, changed in place by :func:`apply_action` (use :meth:`State.clone` to branch).

The rules are the compiled kernels' (:mod:`robada_env.rules.kernels`, which the batched engine
:mod:`robada_env.rules.batched` steps too): a :class:`State` is a one-game record of the kernels'
arrays (a :class:`~robada_env.rules.batched.BatchedRobadaState` of batch 1, :attr:`State.record`),
and each function here is one call of a batch driver on it (:func:`apply_action`:
``kernels.step_one``, :func:`new_game` and :func:`from_position`: ``kernels.start_one``, the
observations: ``kernels.observe_one``; masks: the mask the kernels keep): entry points that run
the per-game kernels the batch drivers run (``step_game``, ``reset_game``, ``end_of_turn``,
``observe_game``, ``mask_game``) on the state's record packed in three flat buffers (a numba
call costs about 0.2 us per array argument, and the record has 25), so no rule is written twice. Besides the
record a state keeps what the kernels do not: the history of actions and, for renders, records
and apps, *which* card ids lie loose, in each pile and in the run (the kernels keep those as rank
counts, suits never mattering, R1). These lists follow what the kernel did (the rank it moved,
the pile it emptied, who got the leftovers), taking the first loose card of a rank in table order
(:mod:`robada_env.rules.actions`); hands and deck are read from (and written into) the record.

The engine as it was before it became a view of the kernels is the executable specification
``tests/oracles/robada_scalar.py``; ``tests/games/test_robada_lockstep.py`` plays many seeded games and
hand-built positions through both and requires the same cards, masks, observations, scores and
winners bit for bit.

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
R2     :func:`~robada_env.rules.runs.next_after_start`, :func:`~robada_env.rules.runs.next_after_step`
       (the kernels' rule table :func:`~robada_env.rules.kernels.rules_array`);
       ``Config.closing_ace`` (default True): an Ace may
       follow the Rey and closes the run, whatever the starting rank.
R3     :func:`~robada_env.rules.kernels.mask_game`, :data:`LOOSE_BEFORE_PILES`: a loose card of the needed rank must be tapped; only when none
       is on the table may a pile be taken; ``Config.may_take_own_pile`` (default True); an
       empty pile cannot be taken.
R4     :data:`CONFIRM_RIGHT_AFTER_START`, :data:`DROP_WHILE_NO_RUN`; turn passes to the left.
R5     :data:`STARTING_CARD_ON_TOP`.
R6     :data:`LOOSE_AT_START` = 4, :data:`CARDS_PER_DEAL` = 3; re-deal when every hand is empty.
R7     :func:`~robada_env.rules.kernels.end_of_turn`, ``Config.leftovers_to_last_runner`` (default True): leftover loose cards go under the
       visible card of the pile of the seat that confirmed the last run; to nobody if no run.
R8     :func:`scores`, :func:`winners` (a tie is a shared win).
R9     what is public: see :mod:`robada_env.rules.observation`.
=====  ==========================================================================================
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, fields
from typing import Optional, Sequence

import numpy as np

from hod.core.deal import game_seed, shuffled_one
from hod.core.errors import ConfigError, IllegalActionError, check_int_range, check_seat

from .actions import CONFIRM, DROP, NOOP, NUM_ACTIONS, TAKE, TAP, action_name
from .cards import CARD_POINTS, DECK_SIZE, NUM_RANKS, card_name
from .runs import NOBODY, RUN_CLOSED

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


# after the constants and Config: the kernels and the record read them from this module
from . import kernels  # noqa: E402
from .batched import _STATE_FIELDS, BatchedRobadaState  # noqa: E402

_R = NUM_RANKS


class _Tables:
    """What the kernels take for one :class:`Config`, built once per config: the rule table
    (:func:`robada_env.rules.kernels.rules_array`), the layout of the packed one-game record
    (:func:`robada_env.rules.kernels.unpack`: ``lay``, and here each field's buffer, offset and
    shape), seat indices and masks."""

    def __init__(self, config: Config) -> None:
        n = self.n = config.num_players
        self.rules = kernels.rules_array(config)
        empty = BatchedRobadaState.empty(1, n)
        self.fields = {}                                   # name -> (buffer 0/1/2, offset, shape)
        sizes = [0, 0, 0]
        init = [[], [], []]
        for name in _STATE_FIELDS:
            arr = getattr(empty, name)
            k = 1 if name in kernels.WIDE_FIELDS else 2 if name in kernels.FLAG_FIELDS else 0
            self.fields[name] = (k, sizes[k], arr.shape)
            sizes[k] += arr.size
            init[k].extend(arr.ravel().tolist())
        self.lay = np.array([self.fields[k][1] for k in _STATE_FIELDS] + [n], np.int64)
        self.blank = (np.array(init[0], np.int8), np.array(init[1], np.int16), np.array(init[2], bool))
        f = {k: v[1] for k, v in self.fields.items()}
        self.deck, self.deck_left, self.hand_cards, self.hand_cnt = f["deck"], f["deck_left"], f["hand_cards"], f["hand_cnt"]
        self.hand_size, self.hand_total, self.loose_cnt, self.pile_cnt = (f["hand_size"], f["hand_total"], f["loose_cnt"],
                                                                          f["pile_cnt"])
        self.pile_top, self.pile_size, self.pile_pts, self.seen_cnt = (f["pile_top"], f["pile_size"], f["pile_pts"],
                                                                       f["seen_cnt"])
        self.run_cnt, self.run_card, self.run_start, self.run_rank = (f["run_cnt"], f["run_card"], f["run_start"],
                                                                      f["run_rank"])
        self.run_next, self.run_active, self.run_size, self.run_pts = (f["run_next"], f["run_active"], f["run_size"],
                                                                       f["run_pts"])
        self.run_taken, self.current, self.last_runner, self.terminal = (f["run_taken"], f["current"], f["last_runner"],
                                                                         f["terminal"])
        self.seat = [np.array([i], np.intp) for i in range(n)]
        self.seats = np.arange(n, dtype=np.intp)
        self.pool = np.empty(DECK_SIZE, np.int8)          # scratch of kernels.resample_one
        self.noop_only = np.eye(NUM_ACTIONS, dtype=np.int8)[[NOOP] * n]
        self.noop_row = self.noop_only[0].copy()
        self.order = [tuple((seat + k) % n for k in range(n)) for seat in range(n)]


@functools.lru_cache(maxsize=64)
def _tables(config: Config) -> _Tables:
    """The tables of ``config`` (a frozen, hashable dataclass), built once per config."""
    return _Tables(config)


class _Cards(list):
    """A list of card ids read from the record (a hand, or the deck: ``seat`` -1) that writes
    itself back into the record when changed (belief samplers and tests build positions so)."""

    __slots__ = ("_state", "_seat")

    def __init__(self, cards, state: "State", seat: int) -> None:
        super().__init__(cards)
        self._state, self._seat = state, seat

    def _sync(self) -> None:
        if self._seat < 0:
            _write_deck(self._state, self)
        else:
            _write_hand(self._state, self._seat, self)
        _refresh(self._state)


def _changes(name: str):
    method = getattr(list, name)

    def changed(self, *args):
        out = method(self, *args)
        self._sync()
        return out
    changed.__name__ = name
    return changed


for _m in ("__setitem__", "__delitem__", "__iadd__", "append", "extend", "insert", "pop", "remove", "clear", "sort",
           "reverse"):
    setattr(_Cards, _m, _changes(_m))
del _m


class _Hands(list):
    """The hands of every seat (``State.hands``): ``hands[i] = cards`` writes seat i's hand."""

    __slots__ = ("_state",)

    def __init__(self, state: "State") -> None:
        super().__init__(_Cards(h, state, i) for i, h in enumerate(_hand_lists(state)))
        self._state = state

    def __setitem__(self, i, cards) -> None:
        i = check_seat(i, self._state.n)
        super().__setitem__(i, _Cards(cards, self._state, i))
        _write_hand(self._state, i, list(cards))
        _refresh(self._state)


class State:
    """One position of a game: a one-game record of the kernels' arrays, the history and the
    card ids of the loose cards, piles and run. Change it only through :func:`apply_action` (or
    build positions with :func:`from_position`; a belief sampler may give hands and deck new
    cards, written into the record).

    Attributes:
        config: the :class:`Config`.
        n: number of players.
        record: the :class:`~robada_env.rules.batched.BatchedRobadaState` of this one game (batch
            1; its arrays are views of this state's packed record: see
            :func:`robada_env.rules.kernels.unpack`).
        deck_order: the 40 card ids in shuffled order as dealt (``None`` for built positions).
        deck: cards still to deal, next card first (list of card ids; assigning it, or changing
            it in place, writes the record).
        hands: per seat, the list of card ids in hand (deal order; ``hands[i] = cards`` writes
            the record; at most 3 cards, R6).
        loose: loose cards on the table (table order: oldest first).
        piles: per seat, the list of card ids in the pile; the visible card is the LAST one.
        points: per seat, the points in the pile (ints; the record's ``pile_pts``).
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

    __slots__ = ("config", "n", "deck_order", "loose", "piles", "run", "run_taken", "history", "_legal", "_b8",
                 "_b16", "_bb", "_mask", "_t")

    def __init__(self, config: Config, buffers: tuple, mask: np.ndarray, deck_order, loose: list, piles: list,
                 run: list, run_taken: list, history: list, tables: Optional[_Tables] = None) -> None:
        self.config = config
        self.n = config.num_players
        self._t = tables or _tables(config)
        self._b8, self._b16, self._bb = buffers
        self._mask = mask
        self.deck_order, self.loose, self.piles, self.run, self.run_taken = deck_order, loose, piles, run, run_taken
        self.history = history
        self._legal = None

    # ---- the record's values -----------------------------------------------------------------
    @property
    def record(self) -> BatchedRobadaState:
        """The one-game :class:`~robada_env.rules.batched.BatchedRobadaState`: views of this state's
        packed record (writing into them writes the state; the kept mask is not refreshed)."""
        bufs = (self._b8, self._b16, self._bb)
        return BatchedRobadaState(**{name: bufs[k][o:o + int(np.prod(shape))].reshape(shape)
                                     for name, (k, o, shape) in self._t.fields.items()})

    @property
    def current(self) -> int:
        """The seat to act, an int in ``0..n-1`` (meaningless once :attr:`terminal`; R4: turn passes
        to the left)."""
        return int(self._b8[self._t.current])

    @property
    def terminal(self) -> bool:
        """Whether the game is over: every hand and the deck empty after a turn (R7's leftovers given)."""
        return bool(self._bb[self._t.terminal])

    @property
    def last_runner(self) -> int:
        """The seat that confirmed the last run, or :data:`NOBODY` (-1) before any (R7)."""
        return int(self._b8[self._t.last_runner])

    @property
    def run_start(self) -> int:
        """The rank (0..9) the run in progress started with, -1 when no run."""
        return int(self._b8[self._t.run_start])

    @property
    def run_rank(self) -> int:
        """The rank (0..9) of the run's latest step, -1 when no run."""
        return int(self._b8[self._t.run_rank])

    @property
    def run_next(self) -> int:
        """The rank (0..9) the run needs next (R2), or :data:`RUN_CLOSED` (-1) when it can go no
        further or there is no run."""
        return int(self._b8[self._t.run_next])

    @property
    def points(self) -> list:
        """Per seat, the points in its pile (R1's card points; R8 scores them): a new list of n
        ints, the record's ``pile_pts``."""
        o = self._t.pile_pts
        return self._b16[o:o + self.n].tolist()

    @property
    def hands(self) -> list:
        """Per seat, the list of card ids (0..39) in hand, deal order, at most 3 (R6): a new list
        read from the record; ``hands[i] = cards``, a change of ``hands[i]`` in place, or assigning
        n lists writes the record. Assigning raises ``ConfigError`` for a count other than n, a hand
        of more than 3 cards or a card id outside 0..39."""
        return _Hands(self)

    @hands.setter
    def hands(self, hands) -> None:
        if len(hands) != self.n:
            raise ConfigError(f"hands needs one entry per seat ({self.n})")
        _write_hands(self, [list(h) for h in hands])
        _refresh(self)

    @property
    def deck(self) -> list:
        """The card ids (0..39) still to deal, next card first: a new list read from the record;
        changing it in place or assigning it writes the record (``ConfigError`` for more than the
        36 cards a deck can hold to deal)."""
        t = self._t
        left = int(self._b8[t.deck_left])
        return _Cards(self._b8[t.deck + DECK_SIZE - left:t.deck + DECK_SIZE].tolist(), self, -1)

    @deck.setter
    def deck(self, cards) -> None:
        _write_deck(self, list(cards))
        _refresh(self)

    def clone(self) -> "State":
        """An independent copy (the record and the lists copied)."""
        return State(self.config, (self._b8.copy(), self._b16.copy(), self._bb.copy()), self._mask.copy(),
                     self.deck_order, self.loose.copy(), [p.copy() for p in self.piles], self.run.copy(),
                     self.run_taken.copy(), self.history.copy(), self._t)

    def __getstate__(self) -> tuple:
        """Pickle and deepcopy keep the packed record, the mask and the lists."""
        return (self.config, (self._b8, self._b16, self._bb), self._mask, self.deck_order, self.loose, self.piles,
                self.run, self.run_taken, self.history)

    def __setstate__(self, state: tuple) -> None:
        self.__init__(*state)

    def card_count(self) -> int:
        """Cards anywhere (deck, hands, table, piles, run); 40 at every step."""
        t = self._t
        return (int(self._b8[t.deck_left]) + int(self._b8[t.hand_total]) + len(self.loose)
                + sum(map(len, self.piles)) + len(self.run))

    def __repr__(self) -> str:
        return (
            f"State(n={self.n}, current={self.current}, deck={len(self.deck)}, "
            f"hands={[len(h) for h in self.hands]}, loose={[card_name(c) for c in self.loose]}, "
            f"piles={[len(p) for p in self.piles]}, points={self.points}, run={len(self.run)}, "
            f"terminal={self.terminal})"
        )


def _hand_lists(s: State) -> list:
    """Per seat, the card ids in hand in slot (deal) order."""
    o, k = s._t.hand_cards, CARDS_PER_DEAL
    slots = s._b8[o:o + s.n * k].tolist()
    return [[c for c in slots[i * k:(i + 1) * k] if c >= 0] for i in range(s.n)]


def _write_hand(s: State, seat: int, cards: list) -> None:
    """Seat ``seat``'s hand becomes ``cards`` (card ids, at most 3) in the record."""
    hands = _hand_lists(s)
    hands[seat] = cards
    _write_hands(s, hands)


def _write_hands(s: State, hands: list) -> None:
    """Every seat's hand becomes ``hands[i]`` (card ids, at most 3 each) in the record."""
    slots, cnt, sizes = [], [0] * (s.n * _R), []
    for i, cards in enumerate(hands):
        if len(cards) > CARDS_PER_DEAL:
            raise ConfigError(f"a hand holds at most {CARDS_PER_DEAL} cards (R6), got {len(cards)}")
        for c in cards:
            if type(c) is not int:
                c = int(c)
            if not 0 <= c < DECK_SIZE:
                raise ConfigError(f"card ids are 0..{DECK_SIZE - 1}, got {c}")
            slots.append(c)
            cnt[i * _R + c % _R] += 1
        slots.extend([-1] * (CARDS_PER_DEAL - len(cards)))
        sizes.append(len(cards))
    t, b8 = s._t, s._b8
    b8[t.hand_cards:t.hand_cards + len(slots)] = slots
    b8[t.hand_cnt:t.hand_cnt + len(cnt)] = cnt
    b8[t.hand_size:t.hand_size + s.n] = sizes
    b8[t.hand_total] = sum(sizes)


def _write_deck(s: State, cards: list) -> None:
    """The cards still to deal become ``cards`` (next first) in the record."""
    if len(cards) > DECK_SIZE - LOOSE_AT_START:
        raise ConfigError(f"the deck holds at most {DECK_SIZE - LOOSE_AT_START} cards to deal, got {len(cards)}")
    t = s._t
    if cards:
        s._b8[t.deck + DECK_SIZE - len(cards):t.deck + DECK_SIZE] = cards
    s._b8[t.deck_left] = len(cards)


def _refresh(s: State) -> None:
    """The kept mask again after the record was written from outside the kernels."""
    t = s._t
    kernels.start_one(s._b8, s._b16, s._bb, t.lay, 2, t.rules, s._mask)
    s._legal = None


def _check_config(config: Optional[Config]) -> Config:
    if config is None:
        return Config()
    if not isinstance(config, Config):
        raise ConfigError(f"config must be a robada_env.rules.engine.Config, got {type(config).__name__}")
    return config


_CARD_IDS = np.arange(DECK_SIZE, dtype=np.int8)
_CARD_ID_LIST = _CARD_IDS.tolist()
_CARD_IDS.setflags(write=False)


def shuffled_deck(seed: int) -> list[int]:
    """The 40 card ids in the order game seed ``seed`` (int, 0..2**64-1) shuffles them:
    :func:`hod.core.deal.shuffled` of the ids 0..39, stream 0 (the batched engine's deal)."""
    return shuffled_one(_CARD_ID_LIST, seed)


def _blank(config: Config) -> State:
    """A state of ``config`` with an empty one-game record (nothing dealt) and no cards listed."""
    t = _tables(config)
    return State(config, tuple(b.copy() for b in t.blank), np.zeros((1, 1, NUM_ACTIONS), np.int8), None, [],
                 [[] for _ in range(t.n)], [], [], [], t)


def new_game(
    config: Optional[Config] = None,
    seed: Optional[int] = None,
    rng: Optional[np.random.Generator] = None,
    deck: Optional[Sequence[int]] = None,
) -> State:
    """Shuffle and deal a new game (R6): 4 loose cards, then 3 cards to each seat 0, 1, ...
    (dealt in blocks of 3 in seat order, the deck's next card first). Seat 0 acts first
    (:func:`robada_env.rules.kernels.reset_game`, through ``kernels.start_one``).

    Args:
        config: table parameters (default ``Config()``: 2 players).
        seed: the game's seed, an int in 0..2**64-1 (None: a fresh one); the deck order is
            :func:`shuffled_deck` of it, as the batched engine deals a game reset with ``seed``.
        rng: draw the seed from this generator instead (takes precedence over ``seed``).
        deck: an explicit deck order (40 distinct card ids) instead of a shuffle (then no
            ``seed`` or ``rng``: the deck alone decides the deal).

    Returns:
        the :class:`State` after the first deal, seat 0 to act.

    Raises:
        ConfigError: bad config, a seed that is not an int in 0..2**64-1, a ``deck`` that is
            not a permutation of 0..39, or a ``deck`` given with a ``seed`` or an ``rng``.
    """
    config = _check_config(config)
    if deck is not None and (seed is not None or rng is not None):
        raise ConfigError("new_game: give a seed (or rng) or a deck, not both: a deck decides the whole deal")
    if deck is None:
        deck = shuffled_deck(game_seed(seed, rng))
    else:
        deck = _card_ids("deck", deck)
        if sorted(deck) != list(range(DECK_SIZE)):
            raise ConfigError(f"deck must be a permutation of the card ids 0..{DECK_SIZE - 1}"
                              f"{_missing_and_repeated(deck)}")
    s = _blank(config)
    t = s._t
    s.deck_order = tuple(deck)
    s.loose = deck[:LOOSE_AT_START]
    s._b8[t.deck:t.deck + DECK_SIZE] = deck
    kernels.start_one(s._b8, s._b16, s._bb, t.lay, 0, t.rules, s._mask)
    return s


def _card_ids(name: str, cards) -> list[int]:
    """``cards`` as a list of card ids (ints 0..39; numpy integers too, bools and floats refused).

    Raises:
        ConfigError: not a sequence, or an element that is not a card id (the legal range named).
    """
    try:
        items = list(cards)
    except TypeError:
        raise ConfigError(f"{name}={cards!r} must be a sequence of card ids (integers 0..{DECK_SIZE - 1})") from None
    return [check_int_range(f"{name} card", c, 0, DECK_SIZE - 1) for c in items]


def _missing_and_repeated(cards: list[int]) -> str:
    """``": missing [...], repeated [...]"`` for an error message about a set of card ids."""
    seen: dict[int, int] = {}
    for c in cards:
        seen[c] = seen.get(c, 0) + 1
    missing = [c for c in range(DECK_SIZE) if c not in seen]
    repeated = sorted(c for c, k in seen.items() if k > 1)
    return f": missing {missing}, repeated {repeated}"


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
    What follows the end of a turn is settled at once (:func:`robada_env.rules.kernels.end_of_turn`):
    a seat to act with an empty hand passes to the next seat holding cards; with every hand empty
    the deck deals (R6), or the game is over (R7).

    Args:
        hands: per seat, card ids in hand (length ``num_players``; at most 3 each, R6).
        loose: loose cards on the table.
        piles: per seat, pile cards, visible card last (default: all empty).
        deck: cards still to deal, next first.
        current: seat to act.
        last_runner: seat that confirmed the last run (its pile is not empty, R5), or ``NOBODY``.

    Raises:
        ConfigError: wrong number of seats, the cards are not 40 distinct ids, a hand of more
            than 3 cards, ``current`` not a seat, ``last_runner`` neither ``NOBODY`` nor a seat
            with a pile.
    """
    config = _check_config(config)
    n = config.num_players
    piles = piles if piles is not None else [[] for _ in range(n)]
    if len(hands) != n or len(piles) != n:
        raise ConfigError(f"hands and piles need one entry per seat ({n})")
    hands = [_card_ids(f"hands[{i}]", h) for i, h in enumerate(hands)]
    loose = _card_ids("loose", loose)
    piles = [_card_ids(f"piles[{i}]", p) for i, p in enumerate(piles)]
    deck = _card_ids("deck", deck)
    current = check_int_range("current", current, 0, n - 1)
    every = deck + loose + [c for h in hands for c in h] + [c for p in piles for c in p]
    if sorted(every) != list(range(DECK_SIZE)):
        raise ConfigError(f"a position must hold each of the {DECK_SIZE} card ids exactly once"
                          f"{_missing_and_repeated(every)}")
    last_runner = check_int_range("last_runner", last_runner, NOBODY, n - 1)
    if last_runner != NOBODY and not piles[last_runner]:
        raise ConfigError(f"last_runner={last_runner}: the seat that confirmed the last run has a pile (R5); "
                          f"legal: {NOBODY} (nobody) or a seat with a pile")
    s = _blank(config)
    t, b8 = s._t, s._b8
    _write_hands(s, hands)
    in_deck = set(deck)
    b8[t.deck:t.deck + DECK_SIZE] = [c for c in range(DECK_SIZE) if c not in in_deck] + deck
    b8[t.deck_left] = len(deck)
    for c in loose:
        b8[t.loose_cnt + c % _R] += 1
        b8[t.seen_cnt + c % _R] += 1
    for i, p in enumerate(piles):
        for c in p:
            b8[t.pile_cnt + i * _R + c % _R] += 1
            b8[t.seen_cnt + c % _R] += 1
        b8[t.pile_top + i] = p[-1] if p else -1
        b8[t.pile_size + i] = len(p)
        s._b16[t.pile_pts + i] = sum(CARD_POINTS[c] for c in p)
    b8[t.current] = current
    b8[t.last_runner] = last_runner
    s._bb[t.terminal] = False
    s.loose, s.piles = loose, piles
    if kernels.start_one(b8, s._b16, s._bb, t.lay, 1, t.rules, s._mask):
        _leftovers(s)
    return s


def _leftovers(s: State) -> None:
    """The game just ended: if the kernel gave the leftover loose cards to the last runner (R7),
    they go under the visible card of its pile's list too."""
    t = s._t
    if s.loose and not s._b8[t.loose_cnt:t.loose_cnt + _R].any():
        pile = s.piles[int(s._b8[t.last_runner])]
        top = pile[-1:]                               # the visible card stays the last starting card
        del pile[-1:]
        pile.extend(s.loose)
        pile.extend(top)
        s.loose = []


def legal_actions(s: State, seat: Optional[int] = None) -> list[int]:
    """The legal actions of ``seat`` (default: the seat to act), ascending: empty once terminal
    or when ``seat`` is not to act (its only move is then ``no-op``, see :func:`legal_mask`).
    Cached per state (do not modify the list).

    Rules (:func:`robada_env.rules.kernels.mask_game`): no run yet -> ``start r`` for each rank r
    in hand with a loose card of rank r ('How to play'), and ``drop r`` for each rank in hand
    (R4). Run in progress -> ``tap loose`` if a loose card of the needed rank is on the table,
    otherwise ``take pile +k`` for each non-empty pile whose visible card has that rank (R3);
    ``confirm`` always (R4).

    Raises:
        ConfigError: ``seat`` is not a seat of the table, an int in ``0..n-1`` (:func:`hod.core.errors.check_seat`).
    """
    if seat is not None:
        seat = check_seat(seat, s.n)
        if seat != s._b8[s._t.current]:
            return []
    out = s._legal
    if out is None:
        out = s._legal = [] if s._bb[s._t.terminal] else s._mask[0, 0].nonzero()[0].tolist()
    return out


def legal_mask(s: State, seat: int) -> np.ndarray:
    """int8 mask of shape (NUM_ACTIONS,) for ``seat``: its legal actions if it is to act, else
    only ``no-op`` (also once the game is over, so the mask is never empty). A fresh array.

    Raises:
        ConfigError: ``seat`` is not a seat of the table, an int in ``0..n-1`` (:func:`hod.core.errors.check_seat`).
    """
    seat = check_seat(seat, s.n)
    if seat == s._b8[s._t.current]:
        return s._mask[0, 0].copy()                   # a finished game's kept mask is no-op only
    return s._t.noop_row.copy()


def legal_masks(s: State) -> np.ndarray:
    """int8 (n, NUM_ACTIONS): row ``i`` is :func:`legal_mask` of seat ``i`` (a fresh array)."""
    m = s._t.noop_only.copy()
    m[s._b8[s._t.current]] = s._mask[0, 0]
    return m


def apply_action(s: State, action: int) -> None:
    """Apply ``action`` for the seat to act, in place (one call of
    :func:`robada_env.rules.kernels.step_one` on the state's record: ``start``, ``drop``,
    ``tap``, ``take``, ``confirm``, then the end of the turn, the re-deal R6, the end and the
    leftovers R7); then the card lists follow what the kernel did.

    Raises:
        IllegalActionError: ``action`` is not in :func:`legal_actions` (names the legal
            actions); the state is unchanged.
    """
    legal = s._legal
    if legal is None:
        legal = legal_actions(s)
    if action not in legal:
        who = f"player_{s.current}" if not s.terminal else "nobody (game over)"
        raise IllegalActionError(who, action, legal, action_name)
    a = int(action)
    t, b8 = s._t, s._b8
    cur = int(b8[t.current])
    if a < TAP:
        o = t.hand_cards + cur * CARDS_PER_DEAL
        slots = b8[o:o + CARDS_PER_DEAL].tolist()
    elif a == TAP:
        need = int(b8[t.run_next])
    over = kernels.step_one(b8, s._b16, s._bb, t.lay, a, t.rules, s._mask) == 1
    s._legal = None
    s.history.append(a)
    if a < TAP:                                       # start or drop: the hand card played, the
        r = a % _R                                    # first of its rank in hand order, as the kernel's
        for card in slots:
            if card >= 0 and card % _R == r:
                break
        if a < DROP:                                  # start: with the first loose card of its rank
            s.run = [card, _take_rank(s.loose, card % _R)]
            s.run_taken = []
        else:
            s.loose.append(card)
    elif a == TAP:
        s.run.append(_take_rank(s.loose, need))
    elif a < CONFIRM:                                 # take the whole pile of seat (cur + k) % n
        seat = (cur + a - TAKE) % s.n
        s.run.extend(s.piles[seat])
        s.piles[seat] = []
        s.run_taken.append(seat)
    else:                                             # confirm: the starting card on top (R5)
        run = s.run
        pile = s.piles[cur]
        pile.extend(run[1:])
        pile.append(run[0])
        s.run = []
        s.run_taken = []
    if over:
        _leftovers(s)


def _take_rank(cards: list[int], rank: int) -> int:
    """Remove and return the first card of ``rank`` in ``cards`` (the copy a move uses)."""
    for i, c in enumerate(cards):
        if c % _R == rank:
            return cards.pop(i)
    raise AssertionError("no card of that rank")  # unreachable: the kernel moved one


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
    cur = s.current
    for i, a in enumerate(actions):
        if i != cur and a != NOOP:
            raise IllegalActionError(f"player_{i}", a, [NOOP], action_name)
    apply_action(s, actions[cur])


def is_terminal(s: State) -> bool:
    """True once the game is over (R7: every card dealt and played); ``s.terminal``."""
    return bool(s._bb[s._t.terminal])


def scores(s: State) -> list[int]:
    """Each seat's score: the sum of card points in its pile (R8). Shape (n,), ints."""
    o = s._t.pile_pts
    return s._b16[o:o + s.n].tolist()


def winners(s: State) -> list[int]:
    """Seats with the highest score (R8: a tie is a shared win), ascending."""
    points = s.points
    best = max(points)
    return [i for i, p in enumerate(points) if p == best]


def is_legal(s: State, action: int) -> bool:
    """Whether ``action`` is legal for the seat to act."""
    return action in legal_actions(s)


def sample_consistent_state(state: State, seat: int, rng: np.random.Generator) -> State:
    """A full state that ``seat`` cannot tell from ``state`` (RULINGS R9): the cards hidden from
    ``seat`` (other seats' hands and the deck) are shuffled with ``rng`` and dealt back into the
    same places in the same numbers (:func:`robada_env.rules.kernels.resample_one`, with the
    permutation ``rng.permutation`` of the pool gives). Everything public and ``seat``'s own hand are kept, so
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
    t, b8 = s._t, s._b8
    hidden = int(b8[t.hand_total]) - int(b8[t.hand_size + seat]) + int(b8[t.deck_left])
    kernels.resample_one(b8, s._b16, s._bb, t.lay, seat, rng.permutation(hidden), t.rules, s._mask, t.pool)
    s._legal = None
    return s
