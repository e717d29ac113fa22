"""Tapeo's single-game engine as it was in the package before the scalar API became a view over
the compiled kernels (:mod:`tapeo_env.rules.kernels`): the executable specification the new scalar
API is checked against, bit for bit (``tests/games/test_tapeo_engine.py``, ``tests/games/test_tapeo_scoring.py``,
``tests/games/test_tapeo_lockstep.py``). Nothing in the package imports it.

Three parts, each the package's code of that time with only its imports changed:

* the scoring rules (was ``tapeo_env/rules/scoring.py``; :class:`Rulings` itself stays in the
  package, the numbers of a game);
* the engine (was ``tapeo_env/rules/engine.py``; :class:`Config` and the rulings constants stay in
  the package): deal, legal picks, simultaneous reveal, passing left, the Freeloader, round and
  game scoring (tapeo.txt; RULINGS T1-T10), with hands stored by the seat they were dealt to;
* the observation encoder (was ``encode`` / ``encode_all`` of ``tapeo_env/rules/observation.py``).
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

from hod.core.deal import draw_seeds, game_seed, shuffled_prefix_one
from hod.core.errors import ConfigError, IllegalActionError, action_id, check_int_range, check_seat
from tapeo_env.rules.cards import (
    BREAD, CHURRO, CROQUETA, FREELOADER, HAM_SLICES, MAX_HAND_SIZE, MIN_PLAYERS, NUM_KINDS, PEPPER, PRAWNS,
    TORTILLA, deck_cards, kind_name,
)
from tapeo_env.rules.engine import (CHURROS_KEPT_ACROSS_ROUNDS, FREELOADER_STEALS_FREELOADER, LAST_TAPA_AUTOMATIC,
                                    Config)
from tapeo_env.rules.observation import LAYOUT, OBS_SIZE, SCORE_SCALE
from tapeo_env.rules.scoring import DEFAULT_RULINGS, Rulings

_K = NUM_KINDS
_SL = LAYOUT.offsets


# ---- scoring (was tapeo_env/rules/scoring.py) --------------------------------------------------
def split_points(points: int, ways: int) -> int:
    """T2: points shared by ``ways`` tied players, rounded down to whole points (6 by 4 -> 1)."""
    return points // ways


def tortilla_points(tortillas: int, rulings: Rulings = DEFAULT_RULINGS) -> int:
    """Tortilla: ``tortilla_pair`` per complete pair (3 tortillas -> 1 pair -> 5)."""
    return rulings.tortilla_pair * (int(tortillas) // 2)


def croqueta_points(croquetas: int, rulings: Rulings = DEFAULT_RULINGS) -> int:
    """Croquetas: 1, 3, 6, 10, 15 for one to five; more than five still 15."""
    table = rulings.croqueta_table
    return table[min(int(croquetas), len(table) - 1)]


def prawn_points(prawns: int, breads: int, rulings: Rulings = DEFAULT_RULINGS) -> int:
    """T4: ``3*P + 3*min(P, B)``; bread with no prawns to dip scores nothing."""
    p, b = int(prawns), int(breads)
    return rulings.prawn * p + rulings.bread_dip * min(p, b)


def ham_points(slices: Sequence[int], rulings: Rulings = DEFAULT_RULINGS) -> np.ndarray:
    """Ham majorities for one round (T2, T3).

    Args:
        slices: total ham slices on each seat's bar, length n.

    Returns:
        int64 (n,): the most slices take ``ham_first`` (split, rounded down, among tied leaders,
        and then nobody is runner-up); with a lone leader, the next-highest positive count takes
        ``ham_second`` (split among ties). Seats without ham never score (T3).
    """
    s = np.asarray(slices, dtype=np.int64)
    out = np.zeros(len(s), dtype=np.int64)
    positive = s[s > 0]
    if positive.size == 0:
        return out
    top = positive.max()
    leaders = s == top
    k = int(leaders.sum())
    out[leaders] = split_points(rulings.ham_first, k)
    if k > 1:
        return out
    rest = positive[positive < top]
    if rest.size:
        runners = s == rest.max()
        out[runners] = split_points(rulings.ham_second, int(runners.sum()))
    return out


def pepper_points(peppers: Sequence[int], rulings: Rulings = DEFAULT_RULINGS) -> np.ndarray:
    """Padrón peppers (T5): 2 each; every seat at the table's maximum, if that maximum is at
    least 3, loses 6. Returns int64 (n,)."""
    p = np.asarray(peppers, dtype=np.int64)
    out = rulings.pepper * p
    top = p.max() if p.size else 0
    if top >= rulings.hot_pepper_min:
        out[p == top] -= rulings.hot_pepper_penalty
    return out


def churro_points(churros: Sequence[int], rulings: Rulings = DEFAULT_RULINGS) -> np.ndarray:
    """End-of-game churros (T9): the most gain ``churro_most`` split (T2), the fewest lose
    ``churro_fewest`` split (T2), except with 2 players where nobody loses. All tied: with 3+
    players the two cancel (net 0), with 2 players each gets +3. Returns int64 (n,)."""
    c = np.asarray(churros, dtype=np.int64)
    out = np.zeros(len(c), dtype=np.int64)
    most = c == c.max()
    out[most] += split_points(rulings.churro_most, int(most.sum()))
    if len(c) > 2 or rulings.two_player_fewest_loses:
        fewest = c == c.min()
        out[fewest] -= split_points(rulings.churro_fewest, int(fewest.sum()))
    return out


#: Names of the round scoring rules, in the order of :func:`round_breakdown`'s rows.
ROUND_RULES = ("tortilla", "croqueta", "ham", "prawns", "pepper")


def round_breakdown(bars: np.ndarray, rulings: Rulings = DEFAULT_RULINGS) -> dict[str, np.ndarray]:
    """Points of each round rule for each seat.

    Args:
        bars: int (n, NUM_KINDS) counts of the tapas on each bar at the end of the round
            (Freeloader cards and churros included; they score nothing here).

    Returns:
        ``{rule: int64 (n,)}`` for each name in :data:`ROUND_RULES`.
    """
    bars = np.asarray(bars, dtype=np.int64)
    # per-seat rules on plain Python ints (one tolist() instead of a numpy scalar per seat)
    tortillas, croquetas = bars[:, TORTILLA].tolist(), bars[:, CROQUETA].tolist()
    prawns, breads = bars[:, PRAWNS].tolist(), bars[:, BREAD].tolist()
    return {
        "tortilla": np.array([tortilla_points(t, rulings) for t in tortillas], np.int64),
        "croqueta": np.array([croqueta_points(c, rulings) for c in croquetas], np.int64),
        "ham": ham_points(bars @ HAM_SLICES, rulings),
        "prawns": np.array([prawn_points(p, b, rulings) for p, b in zip(prawns, breads)], np.int64),
        "pepper": pepper_points(bars[:, PEPPER], rulings),
    }


def round_points(bars: np.ndarray, rulings: Rulings = DEFAULT_RULINGS) -> np.ndarray:
    """Round score of each seat: the sum of :func:`round_breakdown` (int64 (n,)). Churros and
    Freeloader cards score nothing in the round."""
    return sum(round_breakdown(bars, rulings).values())


def winning_seats(scores: Sequence[int], churros: Sequence[int], rulings: Rulings = DEFAULT_RULINGS) -> tuple[int, ...]:
    """T10: seats with the most points; among them, those with the most churros kept; a tie that
    remains is a shared win. Returns the winning seats, ascending."""
    s = np.asarray(scores)
    c = np.asarray(churros)
    best = np.flatnonzero(s == s.max())
    if rulings.tie_break_by_churros and best.size > 1:
        cb = c[best]
        best = best[cb == cb.max()]
    return tuple(int(i) for i in best)



# ---- engine (was tapeo_env/rules/engine.py) ----------------------------------------------------
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


# ---- observation encoder (was tapeo_env/rules/observation.py) -----------------------------------
def encode(state: State, seat: int, out: np.ndarray | None = None) -> np.ndarray:
    """Observation of ``seat``: what that seat knows (tapeo.txt; the layout table :data:`LAYOUT`).

    Args:
        state: the engine state (:class:`tapeo_env.rules.engine.State`), n = ``state.config.num_players``.
        seat: the observer, an int in 0..n-1 (absolute seat; the pieces are seat-relative to it).
        out: optional float32 array of shape ``(OBS_SIZE,)`` to fill (every entry is written).

    Returns:
        float32 array of shape ``(OBS_SIZE,)``, entries in ``[0, OBS_HIGH]`` (``out`` when given).

    Raises:
        ConfigError (a ValueError): ``seat`` not an int in 0..n-1 (the message lists the legal
            seats); nothing is written.
    """
    n = state.config.num_players
    if type(seat) is not int or not 0 <= seat < n:
        seat = check_int_range("seat", seat, 0, n - 1)
    obs = _encoder(state.config).encode(state, seat)
    if out is None:
        return obs
    out[...] = obs
    return out


def encode_all(state: State) -> np.ndarray:
    """Observations of every seat at once.

    Args:
        state: the engine state, n = ``state.config.num_players`` seats.

    Returns:
        float32 array of shape ``(n, OBS_SIZE)``, row ``i`` equal to ``encode(state, i)`` bit for
        bit (a fresh array; rows may be handed out as views).
    """
    return _encoder(state.config).encode_all(state)


class _Encoder:
    """The encoder of one table shape (player count, hand size, deck, rounds), built once.

    Method: every entry of an observation is either 0, 1, a per-pick constant (the ``pick`` and
    ``hand_size`` pieces) or a scaled count of the state. Each call writes the scaled counts of
    the state once into a float32 *source* buffer, computed in float64 as ``count * (1 / deck
    count)``, ``churros / 30`` and ``points / 100`` and rounded once to float32 (the arithmetic
    the layout documents; one division by the deck count instead where that gives the same
    float32 for every count, see :func:`_exact_divisors`), and the observations are one gather
    ``source[index]`` through an index table per (round, pick) that places every seat-relative
    piece. So the cost hardly depends on the player count or on how many seats are encoded.
    tests/games/test_tapeo_batched.py checks the result bit for bit against the independent batched
    observation kernel (:func:`tapeo_env.rules.kernels.observe_game`) at every step of many seeded games.

    Source buffer (``n`` seats, ``K`` kinds): ``[0, 1, pick values (hand_size), hand-size values
    (hand_size), hands (n*K, by hand id), bars (n*K), unseen (n*K, by observer), churros held
    (n), scores (n)]``. Its counts are linear in the state, so they come from one product
    ``mix(pick) @ x``, with ``x`` the state's integers ``[hands, bars, churros kept, round
    scores, 1]`` (float64, exact for such small integers); unseen of seat ``s`` = deck - every
    bar - its own hand - the hands it knows at that pick.
    """

    def __init__(self, config) -> None:
        n, hs, k = config.num_players, config.hand_size, _K
        self.n, self.hand_size, self.num_rounds = n, hs, config.num_rounds
        self.deck = config.deck
        zero, one, pick0, size0 = 0, 1, 2, 2 + hs
        counts0 = size0 + hs
        tallies0 = counts0 + 3 * n * k
        self.src = np.zeros(tallies0 + 2 * n, np.float32)
        self.src[one] = 1.0
        p = np.arange(hs)
        self.src[pick0:pick0 + hs] = p / (MAX_HAND_SIZE - 1)
        self.src[size0:size0 + hs] = (hs - p) / MAX_HAND_SIZE
        # Writable views of the source regions, filled by ufuncs with out=.
        self.scaled_v = self.src[counts0:]
        self.counts_v = self.src[counts0:tallies0]
        self.tallies_v = self.src[tallies0:]
        #: Multiplier of each count (1 / deck count of its kind) and divisor of the churros and
        #: scores entries (divided, not multiplied by an inverse, as the layout says).
        self.count_inv = np.tile(_inv_deck(config.deck), 3 * n)
        self.tally_div = np.array([30.0] * n + [SCORE_SCALE] * n)
        #: One divisor per source entry, when dividing a count by its deck count gives the same
        #: float32 as multiplying it by the inverse, for every count up to 1023 (checked here;
        #: true for the published deck); else None and the two are done apart.
        self.divisor = _exact_divisors(config.deck, n, self.tally_div)
        self.one = np.ones(1)
        self._mix: dict[int, np.ndarray] = {}
        self._index: dict = {}
        self._plans: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
        self._regions = (zero, one, pick0, size0, counts0, tallies0)

    def mix(self, pick: int) -> np.ndarray:
        """The float64 matrix (3nK + 2n, 2nK + n + rounds*n + 1) from ``x`` to the source counts
        at ``pick`` (``pick == hand_size``: the finished game, no hand held); built on first use."""
        m = self._mix.get(pick)
        if m is not None:
            return m
        n, k, nk = self.n, _K, self.n * _K
        kept0, scores0 = 2 * nk, 2 * nk + n
        const = scores0 + self.num_rounds * n
        m = np.zeros((3 * nk + 2 * n, const + 1))
        m[np.arange(2 * nk), np.arange(2 * nk)] = 1.0  # hands and bars, as they are
        for s in range(n):
            rows = 2 * nk + s * k + np.arange(k)  # unseen of observer s
            m[rows, const] = self.deck
            for t in range(n):
                m[rows, nk + t * k + np.arange(k)] = -1.0  # every bar
            if pick < self.hand_size:
                for j in range(min(pick, n - 1) + 1):  # own hand (j = 0), hands seen j picks ago
                    h = (s - pick + j) % n
                    m[rows, h * k + np.arange(k)] = -1.0
            m[3 * nk + s, kept0 + s] = m[3 * nk + s, nk + s * k + CHURRO] = 1.0  # churros held
            m[3 * nk + n + s, scores0 + s + n * np.arange(self.num_rounds)] = 1.0  # finished rounds
        m.setflags(write=False)
        self._mix[pick] = m
        return m

    def index(self, rnd: int, pick: int | None) -> np.ndarray:
        """Index table (n, OBS_SIZE) into the source for round ``rnd`` (0-based, capped at 2) and
        pick ``pick`` (None once the game is over); built on first use."""
        key = (rnd, pick)
        idx = self._index.get(key)
        if idx is not None:
            return idx
        zero, one, pick0, size0, counts0, tallies0 = self._regions
        n, k = self.n, _K
        hands0, bars0, unseen0 = counts0, counts0 + n * k, counts0 + 2 * n * k
        churros0, scores0 = tallies0, tallies0 + n
        kinds = np.arange(k)
        idx = np.full((n, OBS_SIZE), zero, np.intp)
        for s in range(n):
            row = idx[s]
            row[_SL["num_players"].start + n - MIN_PLAYERS] = one
            row[_SL["round"].start + rnd] = one
            for j in range(n):  # seat-relative pieces: seat s + j
                t = (s + j) % n
                b = _SL["bars"].start + j * k
                row[b:b + k] = bars0 + t * k + kinds
                row[_SL["churros"].start + j] = churros0 + t
                row[_SL["scores"].start + j] = scores0 + t
            row[_SL["unseen"]] = unseen0 + s * k + kinds
            if pick is not None:
                row[_SL["pick"].start] = pick0 + pick
                row[_SL["hand_size"].start] = size0 + pick
                row[_SL["hand"]] = hands0 + ((s - pick) % n) * k + kinds
                for j in range(1, min(pick, n - 1) + 1):  # hands held by seat+j, seen j picks ago
                    b = _SL["known_hands"].start + (j - 1) * k
                    row[b:b + k] = hands0 + ((s + j - pick) % n) * k + kinds
                    row[_SL["known_flags"].start + j - 1] = one
        idx.setflags(write=False)
        self._index[key] = idx
        return idx

    def plan(self, rnd: int, pick: int) -> tuple[np.ndarray, np.ndarray]:
        """``(mix, index table)`` for a state at round ``rnd`` and pick ``pick`` (cached)."""
        plan = self._plans.get((rnd, pick))
        if plan is None:
            over = rnd >= self.num_rounds
            plan = (self.mix(self.hand_size if over else pick),
                    self.index(min(min(rnd, self.num_rounds - 1), 2), None if over else pick))
            self._plans[rnd, pick] = plan
        return plan

    def _fill(self, state: State) -> np.ndarray:
        """Write the scaled counts of ``state`` into the source; return the index table."""
        mix, index = self.plan(state.round, state.pick)
        x = np.concatenate((state.hands.ravel(), state.bars.ravel(), state.churros_kept,
                            state.round_scores.ravel(), self.one), dtype=np.float64)
        y = mix @ x
        if self.divisor is not None:
            np.divide(y, self.divisor, out=self.scaled_v)
        else:
            split = len(self.counts_v)
            np.multiply(y[:split], self.count_inv, out=self.counts_v)
            np.divide(y[split:], self.tally_div, out=self.tallies_v)
        return index

    def encode(self, state: State, seat: int) -> np.ndarray:
        return self.src.take(self._fill(state)[seat % self.n])  # seats count modulo n, as ever

    def encode_all(self, state: State) -> np.ndarray:
        return self.src.take(self._fill(state))


def _exact_divisors(deck: tuple, n: int, tally_div: np.ndarray) -> np.ndarray | None:
    """Divisors ``[deck count of each kind (inf for an absent kind), tiled 3n times; tally_div]``
    if ``count / d`` rounds to the same float32 as ``count * (1 / d)`` (the layout's
    arithmetic) for every count 0..1023 and kind; else None."""
    counts = np.arange(1024, dtype=np.float64)[:, None]
    inv = _inv_deck(deck)
    d = np.where(np.asarray(deck) > 0, np.asarray(deck, np.float64), np.inf)
    multiplied, divided = (counts * inv).astype(np.float32), (counts / d).astype(np.float32)
    if not np.array_equal(multiplied.view(np.int32), divided.view(np.int32)):
        return None
    return np.concatenate((np.tile(d, 3 * n), tally_div))


class _EncoderCache(threading.local):
    """Encoders by table shape, one set per thread: an encoder's source buffer is scratch space
    written on every call, so threads must not share it."""

    def __init__(self) -> None:
        self.by_shape: dict[tuple, _Encoder] = {}
        self.last_config = None  # the usual case: every call for the same table
        self.last: _Encoder | None = None


_CACHE = _EncoderCache()


def _encoder(config) -> _Encoder:
    """The encoder of ``config``'s table shape (built once per thread)."""
    cache = _CACHE
    if cache.last_config is config:
        return cache.last
    key = (config.num_players, config.hand_size, config.deck, config.num_rounds)
    enc = cache.by_shape.get(key)
    if enc is None:
        enc = cache.by_shape[key] = _Encoder(config)
    cache.last_config, cache.last = config, enc
    return enc


_INV_CACHE: dict[tuple, np.ndarray] = {}


def _inv_deck(deck: tuple) -> np.ndarray:
    inv = _INV_CACHE.get(deck)
    if inv is None:
        d = np.asarray(deck, np.float64)
        inv = np.where(d > 0, 1.0 / np.maximum(d, 1), 0.0)
        _INV_CACHE[deck] = inv
    return inv


