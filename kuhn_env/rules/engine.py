"""Kuhn poker's rules (kuhn_env/RULES.md, K1-K3), written once, as numpy functions over a batch of
games; one game is a batch of one.

The games live in a :class:`KuhnState` record (batch axis first): the two cards, the actions taken
and whether the game is over. The batch functions (:func:`deal`, :func:`legal_masks`,
:func:`apply_actions`, :func:`payoffs`, :func:`winner_masks`) take the record and the indices ``g``
(intp (G,)) of the games they read or change; the batched engine
(:class:`kuhn_env.rules.batched.BatchedKuhn`) calls them on its whole record, the single-game API
below (:class:`State`, :func:`new_game`, :func:`apply_action`, ...) on a record of batch 1. Nothing
here imports gymnasium or PettingZoo.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from hod.core.deal import check_seed, draw_seeds, shuffled
from hod.core.engine import StateRecord
from hod.core.errors import ConfigError, IllegalActionError, action_id, check_choice

#: Card ids (K1): Jack < Queen < King.
JACK, QUEEN, KING = 0, 1, 2
CARD_NAMES = ("J", "Q", "K")
NUM_CARDS = 3
#: Action ids (K2); ``NOOP`` is the Parallel form's action of the seat not to act.
PASS, BET, NOOP = 0, 1, 2
ACTION_NAMES = ("pass", "bet", "no-op")
NUM_ACTIONS = 3
#: Chips each player antes, and the size of a bet (K1, K2).
ANTE, BET_SIZE = 1, 1
#: Most decisions of one game (pass, bet, bet): K2.
MAX_DECISIONS = 3
NUM_PLAYERS = 2
_CARDS = np.arange(NUM_CARDS, dtype=np.int8)
_ONE = np.zeros(1, np.intp)


def action_name(a: int) -> str:
    """Readable name of action id ``a`` (``"pass"``, ``"bet"``, ``"no-op"``)."""
    return ACTION_NAMES[a]


@dataclass(frozen=True)
class Config:
    """A Kuhn table: two players (K1); no rule options.

    Raises:
        ConfigError: ``num_players`` other than 2 (the legal value named).
    """

    num_players: int = NUM_PLAYERS

    def __post_init__(self) -> None:
        check_choice("num_players", self.num_players, (NUM_PLAYERS,))


@dataclass
class KuhnState(StateRecord):
    """B games of Kuhn poker (a :class:`hod.core.engine.StateRecord`).

    Attributes:
        cards: int8 (B, 2), each seat's card id (K1).
        history: int8 (B, 3), the actions taken in order (``PASS``/``BET``), -1 after the last.
        length: int8 (B,), how many actions were taken (0..3).
        terminal: bool (B,), the game is over (K2).
    """

    cards: np.ndarray
    history: np.ndarray
    length: np.ndarray
    terminal: np.ndarray

    @classmethod
    def empty(cls, batch_size: int) -> "KuhnState":
        """B games not dealt yet (every field zero, history -1)."""
        B = int(batch_size)
        return cls(np.zeros((B, NUM_PLAYERS), np.int8), np.full((B, MAX_DECISIONS), -1, np.int8),
                   np.zeros(B, np.int8), np.zeros(B, bool))


# ---- the rules, over the games ``g`` of a record --------------------------------------------------
def deal(rec: KuhnState, g: np.ndarray, seeds: np.ndarray) -> None:
    """New games in rows ``g`` from ``seeds`` (uint64 (G,)): each seat's card is the first two of
    the seed's shuffle of (J, Q, K), seat 0 the first (K1); no action taken yet."""
    rec.cards[g] = shuffled(_CARDS, seeds)[:, :NUM_PLAYERS]
    rec.history[g] = -1
    rec.length[g] = 0
    rec.terminal[g] = False


def to_act(rec: KuhnState, g: np.ndarray) -> np.ndarray:
    """intp (G,): the seat to act, seat 0 first and the seats alternating (K2)."""
    return (rec.length[g] % NUM_PLAYERS).astype(np.intp)


def legal_masks(rec: KuhnState, g: np.ndarray) -> np.ndarray:
    """int8 (G, 3): the legal actions of the seat to act: ``pass`` and ``bet`` in a game going on
    (K2: both are always legal), ``no-op`` only in a finished one."""
    live = ~rec.terminal[g]
    m = np.zeros((g.size, NUM_ACTIONS), np.int8)
    m[live, PASS] = 1
    m[live, BET] = 1
    m[~live, NOOP] = 1
    return m


def illegal(rec: KuhnState, g: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """bool (G,): ``actions`` (int (G,)) outside their game's :func:`legal_masks`."""
    a = np.asarray(actions)
    ok = (a >= 0) & (a < NUM_ACTIONS)
    live = ~rec.terminal[g]
    return ~ok | np.where(live, a == NOOP, a != NOOP)


def apply_actions(rec: KuhnState, g: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """Apply one legal action (int (G,), checked with :func:`illegal`) to each game ``g``; a
    finished game's ``no-op`` changes nothing. Returns bool (G,): the games that ended now.

    Rule (K2): the game ends after pass-pass, after any action that answers a bet (bet-pass,
    bet-bet) and after the third decision (pass-bet-pass, pass-bet-bet).
    """
    a = np.asarray(actions, np.int8)
    live = ~rec.terminal[g]
    gl, al = g[live], a[live]
    n = rec.length[gl].astype(np.intp)
    rec.history[gl, n] = al
    n = n + 1
    rec.length[gl] = n
    h = rec.history[gl]
    ends = (n == MAX_DECISIONS) | ((n == 2) & ~((h[:, 0] == PASS) & (h[:, 1] == BET)))
    rec.terminal[gl] = ends
    out = np.zeros(g.size, bool)
    out[np.flatnonzero(live)[ends]] = True
    return out


def _losers(rec: KuhnState, g: np.ndarray) -> np.ndarray:
    """intp (G,): the loser of each finished game: the seat that passed facing a bet (a fold),
    else the lower card (a showdown): K3."""
    h, n = rec.history[g], rec.length[g].astype(np.intp)
    last = h[np.arange(g.size), np.maximum(n - 1, 0)]
    folded = (last == PASS) & (h == BET).any(axis=1)
    return np.where(folded, (n - 1) % NUM_PLAYERS, np.argmin(rec.cards[g], axis=1)).astype(np.intp)


def payoffs(rec: KuhnState, g: np.ndarray) -> np.ndarray:
    """int32 (G, 2): each seat's payoff (K3): 0 while the game goes on; at its end the winner
    gets what the loser put in (``ANTE`` + ``BET_SIZE`` per bet or call of the loser) and the
    loser loses it."""
    out = np.zeros((g.size, NUM_PLAYERS), np.int32)
    done = np.flatnonzero(rec.terminal[g])
    if done.size:
        gd = g[done]
        loser = _losers(rec, gd)
        h = rec.history[gd]
        # the loser's decisions are positions loser, loser + 2
        bets = ((h == BET) & (np.arange(MAX_DECISIONS)[None, :] % NUM_PLAYERS == loser[:, None])).sum(axis=1)
        stake = ANTE + BET_SIZE * bets
        out[done, loser] = -stake
        out[done, 1 - loser] = stake
    return out


def winner_masks(rec: KuhnState, g: np.ndarray) -> np.ndarray:
    """bool (G, 2): the winner of each finished game (K3); both seats while a game goes on (no
    one is ahead: every payoff is 0)."""
    out = np.ones((g.size, NUM_PLAYERS), bool)
    done = np.flatnonzero(rec.terminal[g])
    if done.size:
        out[done] = False
        out[done, 1 - _losers(rec, g[done])] = True
    return out


def check_games(rec: KuhnState) -> Optional[str]:
    """What is wrong with the games of ``rec`` (a record no game reaches), or None: cards not two
    distinct ids 0..2, a length outside 0..3, actions other than pass/bet in the first ``length``
    places or anything but -1 after them, a history that went on past its end, or ``terminal``
    other than the rule's (K2)."""
    c, h, n, t = rec.cards, rec.history, rec.length.astype(np.intp), rec.terminal
    pos = np.arange(MAX_DECISIONS)[None, :]
    checks = (
        ("cards", (c < 0).any(1) | (c >= NUM_CARDS).any(1) | (c[:, 0] == c[:, 1])),
        ("length", (n < 0) | (n > MAX_DECISIONS)),
        ("history", np.where(pos < n[:, None], (h != PASS) & (h != BET), h != -1).any(1)),
    )
    for name, bad in checks:
        if bad.any():
            return f"field {name} of game {int(np.argmax(bad))}"
    ended_at_2 = ~((h[:, 0] == PASS) & (h[:, 1] == BET))
    want = (n == MAX_DECISIONS) | ((n == 2) & ended_at_2)
    bad = (want != t) | ((n == MAX_DECISIONS) & ended_at_2)
    if bad.any():
        return f"field terminal of game {int(np.argmax(bad))} (or a history that goes on past its end)"
    return None


# ---- one game: a record of batch 1 ----------------------------------------------------------------
class State:
    """One game of Kuhn poker: a :class:`KuhnState` of batch 1 (``record``) and its ``config``.
    Changed in place by :func:`apply_action`."""

    __slots__ = ("config", "record")

    def __init__(self, config: Config, record: KuhnState) -> None:
        self.config = config
        self.record = record

    @property
    def cards(self) -> tuple[int, int]:
        """Each seat's card id."""
        return tuple(int(x) for x in self.record.cards[0])

    @property
    def history(self) -> list[int]:
        """The actions taken, in order."""
        return self.record.history[0, :int(self.record.length[0])].tolist()

    @property
    def current(self) -> int:
        """The seat to act (K2)."""
        return int(self.record.length[0]) % NUM_PLAYERS

    @property
    def terminal(self) -> bool:
        """Whether the game is over."""
        return bool(self.record.terminal[0])


def new_game(config: Config = Config(), seed: Optional[int] = None, cards: Optional[Sequence[int]] = None,
             rng: Optional[np.random.Generator] = None) -> State:
    """A new game: dealt from ``seed`` (an int in ``0..2**64-1``; None: drawn from ``rng`` or
    fresh entropy), or with the given ``cards`` (two distinct card ids, seat 0 first).

    Raises:
        ConfigError: a bad seed, ``cards`` that are not two distinct ids 0..2, or both a seed
            and cards.
    """
    rec = KuhnState.empty(1)
    if cards is not None:
        if seed is not None:
            raise ConfigError("give either seed or cards, not both")
        c = list(cards)
        if (len(c) != NUM_PLAYERS or any(type(x) is not int or not 0 <= x < NUM_CARDS for x in c)
                or c[0] == c[1]):
            raise ConfigError(f"cards={cards!r} must be two distinct card ids; legal ids: 0 (J), 1 (Q), 2 (K)")
        rec.cards[0] = c
    else:
        s = check_seed(seed) if seed is not None else draw_seeds(rng or np.random.default_rng())
        deal(rec, _ONE, np.array([s], np.uint64))
    return State(config, rec)


def legal_actions(state: State) -> list[int]:
    """The legal actions of the seat to act (K2): ``[PASS, BET]``, or ``[NOOP]`` once over."""
    return np.flatnonzero(legal_masks(state.record, _ONE)[0]).tolist()


def legal_mask(state: State, seat: int) -> np.ndarray:
    """int8 (3,): ``seat``'s legal actions: the seat to act's (:func:`legal_actions`), ``no-op``
    only for the other seat."""
    if seat == state.current:
        return legal_masks(state.record, _ONE)[0]
    m = np.zeros(NUM_ACTIONS, np.int8)
    m[NOOP] = 1
    return m


def apply_action(state: State, action: int) -> None:
    """The seat to act plays ``action`` (K2): a Python or numpy integer.

    Raises:
        IllegalActionError: anything but a legal action (:func:`legal_actions`, named: a float,
            a bool or an action outside them); nothing changes.
    """
    a = action_id(action, NUM_ACTIONS)         # a Python or numpy integer of the action space only
    if a is None or illegal(state.record, _ONE, np.array([a]))[0]:
        raise IllegalActionError(f"player_{state.current}", action, legal_actions(state), action_name)
    apply_actions(state.record, _ONE, np.array([a]))


def is_terminal(state: State) -> bool:
    """Whether the game is over (K2)."""
    return state.terminal


def scores(state: State) -> list[int]:
    """Each seat's payoff (K3): 0 and 0 until the end."""
    return payoffs(state.record, _ONE)[0].tolist()


def winners(state: State) -> list[int]:
    """The winning seat once over (K3); both seats before."""
    return np.flatnonzero(winner_masks(state.record, _ONE)[0]).tolist()


def sample_consistent_state(state: State, seat: int, rng: np.random.Generator) -> State:
    """A full game ``seat`` cannot tell from ``state`` (for search bots): its own card and the
    actions kept, the other seat's card drawn uniformly from the two cards it does not hold (K4).
    ``state`` is not changed."""
    rec = state.record.copy()
    own = int(rec.cards[0, seat])
    others = [c for c in range(NUM_CARDS) if c != own]
    rec.cards[0, 1 - seat] = others[int(rng.integers(len(others)))]
    return State(state.config, rec)
