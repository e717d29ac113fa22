"""Ronda Robada's single-game engine as it was in the package before the scalar API became a view
over the compiled kernels (:mod:`robada_env.rules.kernels`): the executable specification the new
scalar API is checked against, bit for bit (``tests/games/test_robada_lockstep.py``). Nothing in the
package imports it.

Three parts, each the package's code of that time with only its imports changed
(:class:`~robada_env.rules.engine.Config`, the rule constants, the cards, the actions and the
observation layout stay in the package):

* the run rules (was ``robada_env/rules/runs.py``: ``next_after_start``, ``next_after_step``,
  ``startable_ranks``, ``extension_options``, ``leftovers_receiver``; R2, R3, R7);
* the engine (was ``robada_env/rules/engine.py``): deal, legal actions, one action, the end of a
  turn, re-deal R6, end and leftovers R7, scores and winners R8, belief samples R9; the cards kept
  as lists of card ids;
* the observation encoder (was ``encode`` / ``encode_all`` / ``view_of`` of
  ``robada_env/rules/observation.py``).
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from hod.core.deal import game_seed, shuffled_one
from hod.core.errors import ConfigError, IllegalActionError, check_int_range, check_seat
from robada_env.rules.actions import CONFIRM, DROP, NOOP, NUM_ACTIONS, START, TAKE, TAP, action_name
from robada_env.rules.cards import ACE, CARD_POINTS, COPIES_PER_RANK, DECK_SIZE, NUM_RANKS, REY, TOTAL_POINTS, card_name
from robada_env.rules.engine import CARDS_PER_DEAL, LOOSE_AT_START, MAX_PLAYERS, MIN_PLAYERS, Config
from robada_env.rules.observation import LAYOUT, OBS_SIZE, ObsView

RUN_CLOSED = -1
NOBODY = -1


# ---- the run rules (was robada_env/rules/runs.py) -----------------------------------------------
def next_after_start(rank: int, closing_ace: bool = True) -> int:
    """The rank a run needs right after it started with ``rank`` (R2, 'Card order').

    A..Caballo are followed by the next rank (a run started with an Ace needs the 2: the Ace
    closes a run only after the Rey); the Rey by the closing Ace when ``closing_ace``, else by
    nothing.

    Args:
        rank: int 0..9, the rank of the starting pair.
        closing_ace: ``Config.closing_ace`` (R2).

    Returns:
        int rank 0..9, or :data:`RUN_CLOSED`. E.g. ``next_after_start(0) == 1`` (A -> 2),
        ``next_after_start(9) == 0`` (Rey -> closing Ace), ``next_after_start(9, False) == -1``.
    """
    if rank < REY:
        return rank + 1
    return ACE if closing_ace else RUN_CLOSED


def next_after_step(rank: int, closing_ace: bool = True) -> int:
    """The rank a run needs after an extension step gathered ``rank`` (R2).

    Only the Rey is followed by an Ace, so an Ace reached by extension is always the closing Ace
    and nothing follows it, whatever rank the run started with; otherwise as
    :func:`next_after_start`.

    Args:
        rank: int 0..9, the rank just tapped or taken.
        closing_ace: ``Config.closing_ace`` (R2).

    Returns:
        int rank 0..9, or :data:`RUN_CLOSED`. E.g. ``next_after_step(0) == -1`` (closing Ace),
        ``next_after_step(7) == 8`` (Sota -> Caballo).
    """
    if rank == ACE:
        return RUN_CLOSED
    if rank < REY:
        return rank + 1
    return ACE if closing_ace else RUN_CLOSED


def startable_ranks(hand_ranks: set, loose_ranks: set) -> list[int]:
    """The ranks a run may start with, ascending: :func:`can_start` for every rank, from the sets
    of ranks present in the hand and among the loose cards (the engine's form: no counts needed).

    Args:
        hand_ranks: ranks 0..9 with at least one card in hand.
        loose_ranks: ranks 0..9 with at least one loose card.
    """
    return sorted(hand_ranks & loose_ranks)


def takeable_piles(need: int, tops: Sequence[int], runner: int = 0,
                   may_take_own_pile: bool = True) -> list[int]:
    """The seats whose pile shows ``need`` and that ``runner`` may take (R3), ascending.

    An empty pile (``tops[k] == -1``) has no visible card and is never takeable. This does not
    look at the loose cards: use :func:`extension_options` for the full step rule.

    Args:
        need: the rank the run needs (``RUN_CLOSED`` gives ``[]``).
        tops: (n,) visible rank per seat, -1 for an empty pile (any frame of seats).
        runner: the runner's seat in the same frame.
        may_take_own_pile: ``Config.may_take_own_pile`` (R3).

    Returns:
        list of seat indices into ``tops``.
    """
    if need < 0:
        return []
    return [k for k, t in enumerate(tops) if t == need and (may_take_own_pile or k != runner)]


def extension_options(need: int, loose: Sequence[int], tops: Sequence[int], runner: int = 0,
                      may_take_own_pile: bool = True) -> tuple[bool, list[int]]:
    """How a run in progress may be extended to the rank it needs (R3).

    If a loose card of ``need`` is on the table, the only extension is to tap one; only when
    there is none may the runner take a pile, any seat's (its own only with
    ``may_take_own_pile``) whose visible card has that rank. Confirming is always possible
    besides (R4) and is not listed.

    Args:
        need: the rank the run needs, or :data:`RUN_CLOSED` (then nothing extends it).
        loose: (10,) loose cards per rank.
        tops: (n,) visible rank per seat, -1 for an empty pile.
        runner: the runner's seat in the frame of ``tops``.
        may_take_own_pile: ``Config.may_take_own_pile``.

    Returns:
        ``(tap, seats)``: ``tap`` is True when the step is a tap (then ``seats`` is ``[]``);
        otherwise ``seats`` lists the takeable piles ascending (possibly none: the run must stop).
    """
    if need < 0:
        return False, []
    if loose[need] > 0:
        return True, []
    return False, takeable_piles(need, tops, runner, may_take_own_pile)


def leftovers_receiver(last_runner: int, leftovers_to_last_runner: bool = True) -> int:
    """Who gets the loose cards left at the end of the game (R7, 'End of the game and
    scoring'): the seat that confirmed the last run, or :data:`NOBODY` when nobody ever
    confirmed one or the option ``leftovers_to_last_runner`` is off.

    Args:
        last_runner: seat (any frame) or :data:`NOBODY`.
        leftovers_to_last_runner: ``Config.leftovers_to_last_runner``.
    """
    return last_runner if leftovers_to_last_runner and last_runner >= 0 else NOBODY


# ---- the engine (was robada_env/rules/engine.py) ------------------------------------------------
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


# ---- the observation encoder (was robada_env/rules/observation.py) --------------------------------
_R = NUM_RANKS
_S = MAX_PLAYERS
_DECK_MAX = DECK_SIZE - LOOSE_AT_START
_O = {p.name: LAYOUT.offsets[p.name].start for p in LAYOUT.pieces}
_Q = 1.0 / COPIES_PER_RANK


def encode(s: State, seat: int) -> np.ndarray:
    """Observation of ``seat`` in state ``s`` (the layout table :data:`LAYOUT`).

    Args:
        s: the engine state (:class:`robada_env.rules.engine.State`), n = ``s.n`` seats.
        seat: the observer, an int in 0..n-1 (absolute seat; the pieces are seat-relative to it).

    Returns:
        float32 array of shape (OBS_SIZE,), values in [0, 1].

    Raises:
        ConfigError (a ValueError): ``seat`` not an int in 0..n-1 (the message lists the legal
            seats).

    Depends only on what ``seat`` knows (RULINGS R9): the result is the same for any two states
    that differ only in other seats' hands (same hand sizes) or the order of the deck.
    """
    if type(seat) is not int or not 0 <= seat < s.n:
        seat = check_int_range("seat", seat, 0, s.n - 1)
    return _encode_frame(s, seat)


def encode_all(s: State) -> np.ndarray:
    """Observations of every seat at once.

    Args:
        s: the engine state, n = ``s.n`` seats.

    Returns:
        float32 array of shape ``(n, OBS_SIZE)``, row ``i`` equal to ``encode(s, i)`` bit for bit
        (a fresh array; rows may be handed out as views).
    """
    return _encode_frame(s, None).take(_SEAT_VIEW[s.n])


# How the observations are built (:func:`_encode_frame`): the entries are written in a *frame*.
# For one seat, the frame is that seat's observation itself (seats relative to it). For every
# seat at once, most of an observation is public (R9) and the same for every seat up to the
# seat-relative order, so the state is encoded once in the *table* frame: the layout as seat 0
# would see it (absolute seats), except that the private pieces (own hand, unseen) are kept for
# every seat in two extra blocks; the observation of seat ``i`` is then one gather through
# :data:`_SEAT_VIEW` ``[n][i]``, which rotates the seat-relative pieces by ``i`` and picks seat
# ``i``'s private blocks. The values are the same Python expressions as the layout table's
# (e.g. ``h / CARDS_PER_DEAL``), rounded once to float32.
_HAND_BLOCK = OBS_SIZE                         # hand counts of seat i at _HAND_BLOCK + i * R
_UNSEEN_BLOCK = _HAND_BLOCK + _S * _R          # unseen counts of seat i at _UNSEEN_BLOCK + i * R
_ZERO = _UNSEEN_BLOCK + _S * _R                # always 0: padding seats
_TABLE_SIZE = _ZERO + 1
#: Rank of each card id.
_RANK_OF = tuple(c % _R for c in range(DECK_SIZE))


def _seat_views() -> dict[int, np.ndarray]:
    """Per player count n, the intp (n, OBS_SIZE) gather indices into the table view."""
    seat_pieces = {  # piece -> entries per seat
        "to_act": 1, "hand_sizes": 1, "pile_top": _R, "pile_size": 1, "pile_points": 1,
        "pile_ranks": _R, "run_piles_taken": 1, "last_runner": 1,
    }
    views = {}
    for n in range(MIN_PLAYERS, MAX_PLAYERS + 1):
        view = np.tile(np.arange(OBS_SIZE, dtype=np.intp), (n, 1))
        for seat in range(n):
            row = view[seat]
            for name, width in seat_pieces.items():
                start = _O[name]
                for rel in range(_S):
                    at = start + rel * width
                    if rel < n:
                        row[at:at + width] = start + ((seat + rel) % n) * width + np.arange(width)
                    else:
                        row[at:at + width] = _ZERO
            row[LAYOUT.offsets["hand"]] = _HAND_BLOCK + seat * _R + np.arange(_R)
            row[LAYOUT.offsets["unseen"]] = _UNSEEN_BLOCK + seat * _R + np.arange(_R)
        view.setflags(write=False)
        views[n] = view
    return views


_SEAT_VIEW = _seat_views()
#: Per player count n and observer, the position of each seat relative to the observer.
_RELATIVE = {n: [tuple((i - seat) % n for i in range(n)) for seat in range(n)]
             for n in range(MIN_PLAYERS, MAX_PLAYERS + 1)}
#: Per player count, seats as they are (the table frame).
_ABSOLUTE = {n: tuple(range(n)) for n in range(MIN_PLAYERS, MAX_PLAYERS + 1)}


def _encode_frame(s: State, seat: int | None) -> np.ndarray:
    """The entries of ``s`` in the frame of ``seat`` (its observation, float32 (OBS_SIZE,)), or
    with ``seat=None`` in the table frame (float32 (_TABLE_SIZE,)); see the comment above.

    ``seat`` must be in 0..n-1 (:func:`encode` checks it).
    """
    n = s.n
    if seat is None:
        rel, private, size = _ABSOLUTE[n], range(n), _TABLE_SIZE
    else:
        rel = _RELATIVE[n][seat]
        seat %= n
        private, size = (seat,), OBS_SIZE
    rank_of = _RANK_OF
    idx: list[int] = []
    val: list[float] = []
    add_i = idx.append
    add_v = val.append

    add_i(_O["num_players"] + n - MIN_PLAYERS); add_v(1.0)
    if not s.terminal:
        add_i(_O["to_act"] + rel[s.current]); add_v(1.0)

    seen = [0] * _R
    for c in s.loose:
        seen[rank_of[c]] += 1
    o_loose = _O["loose"]
    for r, k in enumerate(seen):
        if k:
            add_i(o_loose + r); add_v(k * _Q)

    o_hs, o_top, o_size, o_pts, o_ranks = (
        _O["hand_sizes"], _O["pile_top"], _O["pile_size"], _O["pile_points"], _O["pile_ranks"])
    for i in range(n):
        j = rel[i]
        if s.hands[i]:
            add_i(o_hs + j); add_v(len(s.hands[i]) / CARDS_PER_DEAL)
        pile = s.piles[i]
        if pile:
            add_i(o_top + j * _R + rank_of[pile[-1]]); add_v(1.0)
            add_i(o_size + j); add_v(len(pile) / DECK_SIZE)
            add_i(o_pts + j); add_v(s.points[i] / TOTAL_POINTS)
            cnt = [0] * _R
            for c in pile:
                cnt[rank_of[c]] += 1
            base = o_ranks + j * _R
            for r, k in enumerate(cnt):
                if k:
                    seen[r] += k
                    add_i(base + r); add_v(k * _Q)

    if s.run:
        add_i(_O["run_active"]); add_v(1.0)
        add_i(_O["run_start"] + s.run_start); add_v(1.0)
        add_i(_O["run_rank"] + s.run_rank); add_v(1.0)
        if s.run_next != RUN_CLOSED:
            add_i(_O["run_next"] + s.run_next); add_v(1.0)
        else:  # closed by the Ace after the Rey (R2)
            add_i(_O["run_closed"]); add_v(1.0)
        cnt = [0] * _R
        pts = 0
        for c in s.run:
            cnt[rank_of[c]] += 1
            pts += CARD_POINTS[c]
        o = _O["run_gathered"]
        for r, k in enumerate(cnt):
            if k:
                seen[r] += k
                add_i(o + r); add_v(k * _Q)
        add_i(_O["run_size"]); add_v(len(s.run) / DECK_SIZE)
        add_i(_O["run_points"]); add_v(pts / TOTAL_POINTS)
        o = _O["run_piles_taken"]
        for t in s.run_taken:
            add_i(o + rel[t]); add_v(1.0)

    if s.deck:
        add_i(_O["deck_left"]); add_v(len(s.deck) / _DECK_MAX)
    o_seen = _O["seen"]
    for r, k in enumerate(seen):
        if k:
            add_i(o_seen + r); add_v(k * _Q)
    if s.last_runner >= 0:
        add_i(_O["last_runner"] + rel[s.last_runner]); add_v(1.0)

    # private pieces. Own hand (a rank held twice is written twice, with the same value): in the
    # hand block of every seat (seat i at _HAND_BLOCK + i * R), or in the observation's own piece.
    o_hand = _HAND_BLOCK if seat is None else _O["hand"] - seat * _R
    for i in private:
        cards = s.hands[i]
        hand = [0] * _R
        for c in cards:
            hand[rank_of[c]] += 1
        base = o_hand + i * _R
        for c in cards:
            r = rank_of[c]
            add_i(base + r); add_v(hand[r] * _Q)

    if seat is not None:  # unseen = 4 - seen - own hand
        o_unseen = _O["unseen"]
        for r, k in enumerate(seen):
            u = COPIES_PER_RANK - k - hand[r]
            if u:
                add_i(o_unseen + r); add_v(u * _Q)
    out = np.zeros(size, dtype=np.float32)
    out.put(idx, val)
    if seat is None:
        # every seat's unseen block at once: (4 - seen - own hand) / 4 = 1 - seen / 4 - own hand
        # / 4, exact in float32 (multiples of 1/4 in [0, 1]; 0 comes out as +0.0, like an entry
        # never written)
        hands_q = out[_HAND_BLOCK:_HAND_BLOCK + n * _R].reshape(n, _R)
        unseen_q = out[_UNSEEN_BLOCK:_UNSEEN_BLOCK + n * _R].reshape(n, _R)
        np.subtract(1.0 - out[o_seen:o_seen + _R], hands_q, out=unseen_q)
    return out



def view_of(s: State, seat: int) -> ObsView:
    """``decode(encode(s, seat))`` worked out straight from the state, with no float vector: the
    fast path of bots that play many games on engine states (search playouts). What ``seat``
    legitimately knows only (RULINGS R9), seat-relative like :func:`encode`.

    Args:
        s: the engine state, n = ``s.n`` seats.
        seat: the observer, an int in 0..n-1.

    Returns:
        an :class:`ObsView` equal to ``decode(encode(s, seat))`` (tests/games/test_robada_observation.py).

    Raises:
        ConfigError (a ValueError): ``seat`` not an int in 0..n-1.
    """
    n = s.n
    if type(seat) is not int or not 0 <= seat < n:
        seat = check_int_range("seat", seat, 0, n - 1)
    rank_of = _RANK_OF
    order = [(seat + k) % n for k in range(n)]

    def counts(cards) -> list:
        cnt = [0] * _R
        for c in cards:
            cnt[rank_of[c]] += 1
        return cnt

    hand = counts(s.hands[seat])
    loose = counts(s.loose)
    gathered = counts(s.run)
    seen = [a + b for a, b in zip(loose, gathered)]
    pile_ranks = []
    for i in order:
        cnt = counts(s.piles[i])
        pile_ranks.append(tuple(cnt))
        seen = [a + b for a, b in zip(seen, cnt)]
    run = bool(s.run)
    closed = run and s.run_next == RUN_CLOSED
    return ObsView(
        num_players=n,
        to_act=-1 if s.terminal else (s.current - seat) % n,
        hand=tuple(hand),
        hand_sizes=tuple(len(s.hands[i]) for i in order),
        loose=tuple(loose),
        pile_top=tuple(rank_of[s.piles[i][-1]] if s.piles[i] else -1 for i in order),
        pile_size=tuple(len(s.piles[i]) for i in order),
        pile_points=tuple(s.points[i] if s.piles[i] else 0 for i in order),
        pile_ranks=tuple(pile_ranks),
        run_active=run,
        run_start=s.run_start if run else -1,
        run_rank=s.run_rank if run else -1,
        run_next=s.run_next if run and not closed else -1,
        run_closed=closed,
        run_gathered=tuple(gathered),
        run_size=len(s.run),
        run_points=sum(CARD_POINTS[c] for c in s.run),
        run_piles_taken=tuple(1 if i in s.run_taken else 0 for i in order),
        deck_left=len(s.deck),
        seen=tuple(seen),
        unseen=tuple(COPIES_PER_RANK - a - h for a, h in zip(seen, hand)),
        last_runner=(s.last_runner - seat) % n if s.last_runner >= 0 else -1,
    )
