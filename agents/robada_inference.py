"""Ronda Robada beliefs from the opponents' play: determinizations weighted by how likely each
opponent's actions since the deal are under an opponent model (inference about hidden hands).

What is hidden from a seat (RULINGS R9) is the other seats' hands and the deck order. Every card
dealt before the current deal has been played face up by now (a re-deal comes only when every
hand is empty, R6), so what an opponent did in earlier deals tells nothing about the cards hidden
now; its actions *in the current deal* depend on its current hand (plus the cards it has played
from it since the deal, which are public), and on nothing else hidden. Hence the posterior over
an opponent's current hand, as a count per rank ``m`` (suits never matter, R1), is

    P(m | play) ~ C(u, m) * prod_t P_model(a_t | view_t(m))

over the opponent's decisions t of the current deal, where ``u`` are the cards of each rank the
seat has not seen (other hands + deck), ``C(u, m) = prod_r binom(u_r, m_r)`` counts the card ids
of that shape (the uniform prior, as :func:`robada_env.sample_consistent_state` draws), and
``view_t(m)`` is the opponent's observation at t: the public table at t (replayed from the public
history) with the hand ``m`` + the cards it played from hand after t, and its unseen counts
``4 - seen - hand``.

Sources of what the seat knows: a belief sample ``belief(rng) -> State`` (the tournament's, the
play app's): its public parts (table, piles, counts), the seat's own hand and its ``history``
(every action applied, all of them public in Ronda Robada: starts and drops show the card, taps
and takes the table). The hidden parts of the sample are never read: the replay
(:func:`current_deal_decisions`) uses them only as placeholders, and the sampler
(:func:`sample_world`) draws them afresh.

Opponent models (:class:`ExpertModel`): the expert (:class:`hod.agents.robada_bots.ExpertBot`)
exactly (``temperature=0``: it plays one of its best plans, exact ties uniformly, so the
likelihood is 0 or the share of tied best plans: a filter), or softened (``temperature > 0``:
a softmax over each action's best plan value in margin points), mixed with ``epsilon`` of the
uniform legal action (so that a player who is not the expert never empties the posterior).

At 3-4 players the opponents' hands share one pool of cards; :func:`sample_world` draws them one
opponent after the other from its posterior on the cards left, and returns the importance weight
``prod_j Z_j`` (the normalisers on the pool left) that makes the weighted samples exact for the
joint posterior. At 2 players the weight is constant and the draws are exact.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from itertools import combinations_with_replacement
from typing import Optional, Sequence

import numpy as np

from hod.core.errors import ConfigError, check_seat
from robada_env.rules import engine
from robada_env.rules.actions import CONFIRM, DROP, START, TAP
from robada_env.rules.cards import COPIES_PER_RANK, DECK_SIZE, NUM_RANKS
from robada_env.rules.engine import CARDS_PER_DEAL, LOOSE_AT_START, Config, State
from robada_env.rules.observation import ObsView, decode, encode
from robada_env.rules.runs import startable_ranks

from .robada_bots import ExpertBot, ExpertParams

__all__ = ["OpponentDecision", "ExpertModel", "HandPosterior", "turn_seats", "current_deal_decisions",
           "hand_posteriors", "sample_world", "InferenceBelief"]

#: binom(u, k) for u, k in 0..4 (copies of a rank).
_COMB = np.array([[math.comb(u, k) for k in range(COPIES_PER_RANK + 1)] for u in range(COPIES_PER_RANK + 1)],
                 dtype=np.float64)


@dataclass(frozen=True)
class OpponentDecision:
    """One decision of an opponent in the current deal, as the observing seat can reconstruct it.

    Attributes:
        index: its position in the game's history.
        seat: the opponent's absolute seat.
        view: its observation at the decision (decoded), with the hand of the replay's placeholder
            hand: only the public pieces are meaningful (:meth:`view_with_hand` puts a hand in).
        legal: the legal actions if no run is in progress is ``None`` (they depend on the hand);
            during a run, the legal actions (tuple of ints; they do not depend on the hand).
        action: the action it took (int).
        played_after: (10,) ranks it played from hand from this decision on (this decision's own
            ``start``/``drop`` included) until now, in the current deal.
    """

    index: int
    seat: int
    view: ObsView
    legal: Optional[tuple]
    action: int
    played_after: tuple

    def hand_at(self, current_hand: Sequence[int]) -> tuple:
        """(10,) the hand it held at this decision if it holds ``current_hand`` now."""
        return tuple(int(c) + p for c, p in zip(current_hand, self.played_after))

    def view_with_hand(self, hand: tuple) -> ObsView:
        """Its observation at this decision had it held ``hand`` (10,) then: the public pieces of
        :attr:`view`, ``hand``, and unseen = 4 - seen - hand (observation.py 'unseen')."""
        unseen = tuple(COPIES_PER_RANK - s - h for s, h in zip(self.view.seen, hand))
        return replace(self.view, hand=hand, unseen=unseen)

    def legal_with_hand(self, hand: tuple) -> list:
        """The legal actions with ``hand`` (engine.legal_actions: starts of ranks held with a loose
        card of that rank, drops of ranks held; during a run, :attr:`legal`)."""
        if self.legal is not None:
            return list(self.legal)
        held = {r for r in range(NUM_RANKS) if hand[r]}
        out = [START + r for r in startable_ranks(held, {r for r in range(NUM_RANKS) if self.view.loose[r]})]
        return out + [DROP + r for r in sorted(held)]


class ExpertModel:
    """The expert as an opponent model: ``probability(view, legal, action)``.

    Args:
        rules: the table's rules (:class:`robada_env.rules.engine.Config`; the expert plans under them).
        params: the expert's weights (default: :class:`ExpertParams`, the shipped expert).
        temperature: 0 -> the expert exactly (uniform over its tied best plans); > 0 -> softmax
            over each legal action's best plan value divided by ``temperature`` (margin points).
        epsilon: mixed-in share of the uniform legal action, in [0, 1).

    Raises:
        ConfigError: ``temperature`` < 0 or ``epsilon`` outside [0, 1).
    """

    def __init__(self, rules: Optional[Config] = None, params: Optional[ExpertParams] = None,
                 temperature: float = 0.0, epsilon: float = 0.0) -> None:
        if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or not temperature >= 0:
            raise ConfigError(f"temperature={temperature!r}: legal values are numbers >= 0")
        if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not 0 <= epsilon < 1:
            raise ConfigError(f"epsilon={epsilon!r}: legal values are numbers in [0, 1)")
        self.rules = rules if rules is not None else Config()
        self.temperature = float(temperature)
        self.epsilon = float(epsilon)
        self._expert = ExpertBot(params=params, rules=self.rules)

    def probability(self, view: ObsView, legal: Sequence[int], action: int) -> float:
        """P(``action`` | the seat sees ``view``, may play ``legal``) under the model (float in [0, 1])."""
        legal = list(legal)
        if action not in legal:
            return 0.0
        if len(legal) == 1:
            return 1.0
        plans = self._expert.plans(view, legal)
        values = [self._expert.evaluate(view, p) for p in plans]
        best = max(values)
        if self.temperature == 0.0:
            top = [p.action for p, v in zip(plans, values) if v >= best - 1e-9]  # ExpertBot's _pick
            p = top.count(action) / len(top)
        else:
            per: dict = {}
            for plan, v in zip(plans, values):
                per[plan.action] = max(per.get(plan.action, -np.inf), v)
            z = {a: math.exp((v - best) / self.temperature) for a, v in per.items()}
            p = z.get(action, 0.0) / sum(z.values())
        return (1.0 - self.epsilon) * p + self.epsilon / len(legal)


def turn_seats(history: Sequence[int], n: int) -> list:
    """Per action of ``history``: ``(turn, seat, deal)``. Seat 0 starts, a turn ends with a
    ``drop`` or a ``confirm`` and passes to the left (R4); every seat plays one card a turn and gets
    3 per deal (R6), so deal ``k`` is turns ``3n k .. 3n (k + 1) - 1`` and turn t is seat t mod n.

    Args:
        history: the actions applied since the game started (ints), ``State.history``.
        n: number of players, 2..4.
    """
    out = []
    t = 0
    for a in history:
        out.append((t, t % n, t // (CARDS_PER_DEAL * n)))
        if DROP <= a < TAP or a == CONFIRM:
            t += 1
    return out


def _played_rank(a: int) -> int:
    """The hand card's rank that ``a`` plays (``start r``/``drop r``), -1 for the other actions."""
    if START <= a < DROP:
        return a - START
    if DROP <= a < TAP:
        return a - DROP
    return -1


def current_deal_decisions(state: State, seat: int) -> list:
    """The decisions of the other seats in the current deal, reconstructed from the public history.

    The game is replayed with the engine from a deck order built from ``state``: the initial loose
    cards and every card played from a hand are public (taken from the piles, loose cards and run by
    rank), the current hands and deck of ``state`` fill the rest (placeholders: only the public
    pieces of the replayed views are used). Card ids of a rank are interchangeable (R1).

    Args:
        state: a full state consistent with what ``seat`` knows (e.g. a belief sample), with its
            ``history`` (every action since the game started).
        seat: the observing seat (absolute, 0..n-1).

    Returns:
        list of :class:`OpponentDecision`, in play order.

    Raises:
        ConfigError: ``seat`` not a seat; ValueError: ``state`` is not a game dealt by the rules
            with this history (e.g. a hand-built position with a history that does not fit).
    """
    seat = check_seat(seat, state.n)
    n = state.n
    hist = list(state.history)
    turns = turn_seats(hist, n)
    per_deal = CARDS_PER_DEAL * n
    dealt = DECK_SIZE - LOOSE_AT_START - len(state.deck)  # cards dealt to hands so far (R6)
    if dealt <= 0 or dealt % per_deal:
        raise ValueError(f"a deck of {len(state.deck)} cards does not fit whole deals at {n} players")
    deals = dealt // per_deal - 1  # index of the current deal
    # every card played from a hand, by (deal, seat)
    played = {}
    for a, (t, s, d) in zip(hist, turns):
        r = _played_rank(a)
        if r >= 0:
            played.setdefault((d, s), []).append(r)
    public: list = [[] for _ in range(NUM_RANKS)]
    for c in [c for p in state.piles for c in p] + list(state.loose) + list(state.run):
        public[c % NUM_RANKS].append(c)
    order_blocks = []
    for d in range(deals + 1):
        for s in range(n):
            block = []
            for r in played.get((d, s), []):
                if not public[r]:
                    raise ValueError("the history plays a card the public cards do not hold")
                block.append(public[r].pop())
            if d == deals:
                block += list(state.hands[s])
            if len(block) != CARDS_PER_DEAL:
                raise ValueError(f"seat {s} got {len(block)} cards in deal {d}, not {CARDS_PER_DEAL}")
            order_blocks.append(block)
    first = [c for r in public for c in r]
    if len(first) != LOOSE_AT_START:
        raise ValueError("the public cards do not fit the history (initial loose cards)")
    order = first + [c for b in order_blocks for c in b] + list(state.deck)
    r = engine.new_game(state.config, deck=order)
    start_turn = deals * per_deal
    out = []
    for i, (a, (t, s, d)) in enumerate(zip(hist, turns)):
        if d == deals and t >= start_turn and s != seat:
            later = [0] * NUM_RANKS
            for b, (t2, s2, d2) in zip(hist[i:], turns[i:]):
                if s2 == s and d2 == deals and _played_rank(b) >= 0:
                    later[_played_rank(b)] += 1
            view = decode(encode(r, s))
            legal = tuple(engine.legal_actions(r)) if r.run else None
            out.append(OpponentDecision(i, s, view, legal, int(a), tuple(later)))
        engine.apply_action(r, a)
    if encode(r, seat).tobytes() != encode(state, seat).tobytes():
        raise ValueError("replaying the history does not give the state's public position")
    return out


@dataclass
class HandPosterior:
    """Posterior over one opponent's current hand (counts per rank).

    Attributes:
        seat: the opponent's absolute seat.
        hands: int64 (K, 10), every hand shape with the opponent's hand size drawn from the unseen
            cards.
        likelihood: float64 (K,), P(its actions this deal | hand) under the model.
    """

    seat: int
    hands: np.ndarray
    likelihood: np.ndarray


def _shapes(size: int, pool: Sequence[int]) -> np.ndarray:
    """int64 (K, 10): every count vector with sum ``size`` and entry r at most ``pool[r]``."""
    rows = []
    for combo in combinations_with_replacement(range(NUM_RANKS), size):
        m = [0] * NUM_RANKS
        for r in combo:
            m[r] += 1
        if all(m[r] <= pool[r] for r in range(NUM_RANKS)):
            rows.append(m)
    return np.array(rows, dtype=np.int64).reshape(-1, NUM_RANKS)


def hand_posteriors(state: State, seat: int, model: ExpertModel, cache: Optional[dict] = None) -> list:
    """Per opponent (seats after ``seat`` in turn order), the :class:`HandPosterior` of its hand.

    Args:
        state: a full state consistent with what ``seat`` knows (its hidden parts are not read).
        seat: the observing seat.
        model: the opponent model (``probability(view, legal, action)``).
        cache: optional dict reused across calls within a game: ``(view, hand, action) -> probability``.

    Returns:
        list of :class:`HandPosterior` (one per other seat, in the order seat+1, seat+2, ...).
    """
    cache = {} if cache is None else cache
    n = state.n
    mine = decode(encode(state, seat))
    pool = mine.unseen
    decisions = current_deal_decisions(state, seat)
    out = []
    for k in range(1, n):
        j = (seat + k) % n
        hands = _shapes(len(state.hands[j]), pool)
        lik = np.ones(len(hands))
        mine_d = [d for d in decisions if d.seat == j]
        for i, m in enumerate(hands.tolist()):
            p = 1.0
            for d in mine_d:
                h = d.hand_at(m)
                key = (d.view, h, d.action)
                q = cache.get(key)
                if q is None:
                    q = model.probability(d.view_with_hand(h), d.legal_with_hand(h), d.action)
                    cache[key] = q
                p *= q
                if p == 0.0:
                    break
            lik[i] = p
        out.append(HandPosterior(j, hands, lik))
    return out


def sample_world(state: State, seat: int, posteriors: Sequence[HandPosterior],
                 rng: np.random.Generator, tries: int = 50) -> tuple:
    """A full state for ``seat`` with the opponents' hands drawn from their posteriors.

    The opponents are drawn in the order of ``posteriors``, each from ``C(left, m) * L(m)`` on the
    unseen cards still left; the card ids of each rank are picked uniformly, the rest is the deck in
    a uniform order. A draw where a later opponent has no hand left that explains its play (weight
    0 in the joint posterior) is drawn again, up to ``tries`` times; after that, and for an
    opponent whose play the model explains with no hand at all (not the model's player), that
    opponent's hand follows the uniform prior.

    Args:
        state: a full state consistent with what ``seat`` knows (hidden parts are redrawn).
        seat: the observing seat.
        posteriors: from :func:`hand_posteriors` on ``state``.
        rng: the generator.
        tries: draws before the prior fallback (int >= 1).

    Returns:
        ``(sample, weight)``: the :class:`State` (``encode(sample, seat) == encode(state, seat)``)
        and its importance weight ``prod_j Z_j`` (float > 0; equal for every sample at 2 players).
    """
    for _ in range(tries):
        out = _draw_world(state, seat, posteriors, rng, strict=True)
        if out is not None:
            return out
    return _draw_world(state, seat, posteriors, rng, strict=False)


def _draw_world(state: State, seat: int, posteriors: Sequence[HandPosterior], rng: np.random.Generator,
                strict: bool) -> Optional[tuple]:
    """One draw of :func:`sample_world`; None (``strict``) when an opponent whose play the model
    explains has no hand left in the pool that explains it."""
    s = state.clone()
    s.deck_order = None
    ids: list = [[] for _ in range(NUM_RANKS)]
    for j in range(s.n):
        if j != seat:
            for c in s.hands[j]:
                ids[c % NUM_RANKS].append(c)
    for c in s.deck:
        ids[c % NUM_RANKS].append(c)
    for r in range(NUM_RANKS):
        ids[r] = [ids[r][i] for i in rng.permutation(len(ids[r]))]
    left = np.array([len(x) for x in ids], dtype=np.int64)
    weight = 1.0
    for post in posteriors:
        fits = (post.hands <= left).all(axis=1)
        prior = np.where(fits, _COMB[left[None, :], np.minimum(post.hands, left[None, :])].prod(axis=1), 0.0)
        w = prior * post.likelihood
        z = w.sum()
        if z <= 0.0:
            if strict and post.likelihood.sum() > 0.0:
                return None
            w, z = prior, prior.sum()
        weight *= z
        m = post.hands[int(rng.choice(len(w), p=w / z))]
        hand = []
        for r in range(NUM_RANKS):
            for _ in range(int(m[r])):
                hand.append(ids[r].pop())
        s.hands[post.seat] = hand
        left -= m
    rest = [c for r in ids for c in r]
    s.deck = [rest[i] for i in rng.permutation(len(rest))]
    s._legal = None
    return s, weight


class InferenceBelief:
    """Weighted determinizations for one decision of ``seat``: ``draw(rng) -> (State, weight)``.

    Built from one belief sample (what the seat knows): the posteriors are computed once
    (:func:`hand_posteriors`), then every draw is :func:`sample_world`.

    Args:
        state: a full state consistent with what ``seat`` knows, with its history.
        seat: the observing seat.
        model: the opponent model.
        cache: optional likelihood cache (see :func:`hand_posteriors`).
    """

    def __init__(self, state: State, seat: int, model: ExpertModel, cache: Optional[dict] = None) -> None:
        self.state = state
        self.seat = seat
        self.posteriors = hand_posteriors(state, seat, model, cache)

    def draw(self, rng: np.random.Generator) -> tuple:
        """One ``(State, weight)`` (:func:`sample_world`)."""
        return sample_world(self.state, self.seat, self.posteriors, rng)
