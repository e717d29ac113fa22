"""Ronda Robada baseline bots: ``greedy`` (best immediate points) and ``expert`` (the strategy of
the rule text, ronda_robada.txt 'Tips and strategy', as a one-turn planner that prices what the
next players can do with the table it leaves).

Both decide from the seat's observation dict only (decoded with
:func:`robada_env.rules.observation.decode`): their own hand, the loose cards, every pile's visible card
and points, the run in progress, hand sizes, cards left in the deck and which ranks are unseen.
A turn is several decisions (``start`` or ``drop``, then ``tap`` / ``take`` ..., then ``confirm``);
each decision is made afresh from the current observation, which holds the run in progress. The
returned action is always one the mask allows. Ties are broken with the bot's own seeded
generator. Importing this module registers them: ``agents.make("robada", "greedy", seed=0)`` and
``agents.make("robada", "expert", seed=0)``.

Run mechanics both bots rely on (docs/robada_rules.md, RULINGS R2-R5): a run started with rank
``s`` needs ``s + 1``, ``s + 2``, ... up to the Rey, then one closing Ace (after which nothing
follows); a step takes a loose card of the needed rank if there is one, otherwise any pile showing
that rank (the whole pile); on confirm the starting card becomes the pile's visible card. Given
the table, a run is therefore deterministic except for which pile to take when several show the
needed rank, so a bot can work out every possible stopping point exactly.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from robada_env.rules.actions import CONFIRM, DROP, START, TAKE, TAP
from robada_env.rules.cards import ACE, NUM_RANKS, RANK_POINTS, REY
from robada_env.rules.observation import ObsView, decode

from .base import BeliefSampler, Bot, Observation, legal_actions

__all__ = ["GreedyBot", "ExpertParams", "ExpertBot", "greedy_run_points", "Plan"]

_P = RANK_POINTS
_EPS = 1e-9


def _after(rank: int) -> int:
    """Rank a run needs after gathering ``rank`` by an extension step (R2): the next rank, the
    closing Ace after the Rey, and nothing (-1) after a closing Ace."""
    if rank == ACE:
        return -1
    return ACE if rank == REY else rank + 1


def _after_start(rank: int) -> int:
    """Rank a run needs right after starting with ``rank`` (a starting Ace is followed by the 2,
    a starting Rey by the closing Ace, R2)."""
    return ACE if rank == REY else rank + 1


def _pick(values: list, rng: np.random.Generator) -> int:
    """Index of the largest value; exact ties (within 1e-9) broken uniformly with ``rng``."""
    best = max(values)
    top = [i for i, v in enumerate(values) if v >= best - _EPS]
    return top[0] if len(top) == 1 else top[int(rng.integers(len(top)))]


# --------------------------------------------------------------------------------------------
# greedy
# --------------------------------------------------------------------------------------------

def greedy_run_points(view: ObsView, start: int) -> int:
    """Points a turn gathers when it starts with ``start`` and is extended the greedy way.

    The greedy way (:class:`GreedyBot`): after the start (hand card + loose card, 2 x the rank's
    points), tap a loose card of the needed rank while there is one; otherwise take the pile of
    another seat showing the needed rank (the one with most points); stop when neither exists
    (the actor's own pile adds nothing, so greedy does not take it). Closing Ace after the Rey,
    nothing after it (R2).

    Args:
        view: decoded observation of the seat to act, no run in progress.
        start: rank 0..9 the run starts with (the caller checks that it can start).

    Returns:
        int points (the hand card included).
    """
    loose = list(view.loose)
    loose[start] -= 1
    top = list(view.pile_top)
    pts = view.pile_points
    total = 2 * _P[start]
    need = _after_start(start)
    while need >= 0:
        if loose[need] > 0:
            loose[need] -= 1
            total += _P[need]
        else:
            best, best_pts = -1, 0
            for k in range(1, view.num_players):
                if top[k] == need and pts[k] > best_pts:
                    best, best_pts = k, pts[k]
            if best < 0:
                break
            top[best] = -1
            total += best_pts
        need = _after(need)
    return total


class GreedyBot(Bot):
    """The action with the best immediate points (issue 4 'greedy').

    Decision rules, applied to the current observation:

    1. **No run yet, a start is legal**: start the rank whose run gathers the most points this
       turn when extended the greedy way (:func:`greedy_run_points`: hand card + loose card +
       every loose card tapped + every other seat's pile taken). It always starts when it can.
    2. **No start possible**: drop the card with the fewest points (the lowest rank; Ace = 1).
    3. **Run in progress**: tap a loose card if that is legal (every tap adds the card's points);
       otherwise take the pile of another seat with the most points (every non-empty pile adds
       points); otherwise confirm. Taking one's own pile adds nothing, so greedy confirms instead.

    Ties (two starts gathering the same points, two piles with the same points) are broken
    uniformly with the bot's seeded generator.
    """

    def act(self, observation: Observation, belief: Optional[BeliefSampler] = None) -> int:
        legal = legal_actions(observation).tolist()
        if len(legal) == 1:
            return int(legal[0])
        view = decode(observation["observation"])
        if CONFIRM in legal:  # a run is in progress
            if TAP in legal:
                return TAP
            takes = [a for a in legal if TAKE < a < CONFIRM]  # other seats' piles (k >= 1)
            if takes:
                return takes[_pick([view.pile_points[a - TAKE] for a in takes], self.rng)]
            return CONFIRM
        starts = [a for a in legal if a < DROP]
        if starts:
            return starts[_pick([greedy_run_points(view, a - START) for a in starts], self.rng)]
        drops = [a for a in legal if DROP <= a < TAP]
        return min(drops)  # ranks are in point order: the lowest rank has the fewest points


# --------------------------------------------------------------------------------------------
# expert
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ExpertParams:
    """Weights of :class:`ExpertBot` (defaults: the tuned values).

    Attributes:
        opp_weights: weight of the expected damage from the 1st, 2nd, 3rd next seat's reply
            (later seats see a table the earlier ones may already have changed).
        future_weight: weight of the bot's own best run next turn with the cards it keeps
            (rule 7 of :class:`ExpertBot`).
        damage_weight: weight of the expected damage of the replies (rule 2); above 1 the bot
            is more careful than the plain expectation, which measured slightly stronger.

    The defaults were tuned against ``greedy`` (400-800 games, 2 players): future weight 0 ->
    63% wins, 1.0 -> 72%, 2.0 -> 67%; damage weight 1.0 -> 72%, 1.3 -> 73%.
    """

    opp_weights: tuple = (1.0, 0.75, 0.5)
    future_weight: float = 1.0
    damage_weight: float = 1.3


@dataclass
class Plan:
    """One way to finish the current turn, with the table it leaves (seat-relative, 0 = me).

    Attributes:
        action: the first action of the plan (what to play now).
        gain: change of my margin (my points minus the others' mean) from now to the end of
            the turn, in points.
        run: True if the turn ends with a confirmed run (False: a drop).
        loose: (10,) loose cards per rank after the turn.
        top: (n,) visible rank of each pile after the turn (-1: empty).
        pts: (n,) points of each pile after the turn.
        hand: (10,) my hand after the turn.
        value: ``gain`` minus the expected damage of the replies (filled by the evaluation).
        damage: the replies' expected damage, weighted per seat by ``opp_weights`` (before
            ``damage_weight``; filled by the evaluation).
        follow: my expected best run next turn (before ``future_weight``; filled by the
            evaluation).
    """

    action: int
    gain: float
    run: bool
    loose: list
    top: list
    pts: list
    hand: list
    value: float = 0.0
    damage: float = 0.0
    follow: float = 0.0


class ExpertBot(Bot):
    """Rule-based player following ronda_robada.txt 'Tips and strategy' (issue 4 'expert').

    At every decision it lists every way to finish the turn from the current observation and
    plays the first action of the best one. The plans (:meth:`plans`):

    * every legal ``start s`` followed by every stopping point of the run (the run is
      deterministic given the table, so each stopping point is worked out exactly; when several
      piles show the needed rank, each choice is a separate plan);
    * during a run, confirming now or at any later stopping point;
    * every legal ``drop r``.

    Each plan is valued in margin points (my points minus the mean of the others') (:meth:`evaluate`):

    1. **Prefer runs that take piles** ('climbing further only pays if you collect piles'): the
       gain counts every card gathered at its points, and another seat's pile at its points
       times ``1 + 1/(n-1)`` (I gain it and its owner loses it); my own pile counts 0 (it is
       mine either way; taking it only lets the run go on).
    2. **Stop before leaving starters** ('every card you leave on the table is a loose card
       somebody else can start their own run with'): for each of the next seats, the expected
       damage of its best reply on the table the plan leaves: for each loose rank, the run that
       seat would make starting there (taking every step, the biggest pile when there is a
       choice), ranked by what it gathers; the chance that the seat's best start is that rank
       follows from the hypergeometric chance that its hand (size known) holds that rank and none
       of the better ones, drawing from the cards I have not seen. Damage = what it gathers from
       the table / (n-1), plus my pile (if its run reaches my pile) times ``1 + 1/(n-1)``.
       Weighted by ``opp_weights`` per seat.
    3. **Protect your pile's visible card** ('avoid leaving a card showing that fits the
       sequences other people are building'): after a run my pile shows the starting rank, so
       rule 2 already prices the risk that a reply reaches my pile through that card; a bigger
       pile makes the risk costlier, so with a big pile the bot prefers starts whose rank nobody
       is likely to reach, and may make a short run purely to change the card on top.
    4. **Close with the Ace after the Rey**: the closing Ace is one more step of the run: it
       gathers the Ace (or a pile showing an Ace) and takes away a loose Ace someone could start
       with, so a run that reaches the Rey with an Ace available is valued higher closed.
    5. **Drop cards that start nothing for others**: a drop is a plan with gain 0 whose table
       has one more loose card; rule 2 prices the runs that card starts for the next seats
       (ranks whose copies are mostly seen, that match no other loose card and lead to no pile
       cost least). A loose card of the rank my pile shows also shields my pile (a step must
       tap a loose card before it may take a pile, R3), which rule 2 sees as well.
    6. **End of the game**: when the plan's action is the last of the game, the leftover loose
       cards go to the last runner (R7) and there is no reply; when the next seat's reply is the
       last, its run also gets the leftovers and, if it cannot run, the last runner does.
    7. **Keep a follow-up**: for each reply of the next seat weighed in rule 2 (and for "it
       cannot start", when the table stays as left), my best run next turn with the cards the
       plan keeps in hand, on the table after that reply (which may now show the replier's pile,
       ready to be taken back), times ``future_weight``. This values keeping a card that pairs
       with a loose card the next seat is unlikely to take, and a card that can reach a pile.

    Value = gain - ``damage_weight`` x sum over next seats of ``opp_weights[j]`` x damage
    + ``future_weight`` x follow-up.

    The best plan (highest value; exact ties broken with the seeded generator) gives the action.
    Typical cost: well under a millisecond per decision (plain-Python integer arithmetic).
    """

    def __init__(self, seed: Optional[int] = None, params: Optional[ExpertParams] = None,
                 **options: Any) -> None:
        super().__init__(seed, **options)
        self.params = params if params is not None else ExpertParams()

    def act(self, observation: Observation, belief: Optional[BeliefSampler] = None) -> int:
        legal = legal_actions(observation).tolist()
        if len(legal) == 1:
            return int(legal[0])
        view = decode(observation["observation"])
        plans = self.plans(view, legal)
        values = [self.evaluate(view, p) for p in plans]
        action = plans[_pick(values, self.rng)].action
        return action if action in legal else CONFIRM if CONFIRM in legal else int(legal[0])

    # -- plans ------------------------------------------------------------------------------

    def plans(self, view: ObsView, legal: list) -> list:
        """Every way to finish the turn (see the class docstring), as :class:`Plan` objects."""
        n = view.num_players
        inv = 1.0 / (n - 1)
        out: list = []
        hand = list(view.hand)
        loose = list(view.loose)
        top = list(view.pile_top)
        pts = list(view.pile_points)
        if view.run_active:
            # my pile after confirming = what it holds now + everything the run has gathered
            # (if the run took my pile, pile_points[0] is 0 and the run holds it)
            pts[0] += view.run_points
            need = -1 if view.run_closed else view.run_next
            self._extend(out, CONFIRM, view.run_start, need, 0.0, loose, top, pts, hand, n, inv, True)
            return out
        for a in legal:
            if a < DROP:
                s = a - START
                h = list(hand)
                h[s] -= 1
                lo = list(loose)
                lo[s] -= 1
                p = list(pts)
                p[0] += 2 * _P[s]
                self._extend(out, a, s, _after_start(s), 2.0 * _P[s], lo, top, p, h, n, inv, False)
            elif a < TAP:
                r = a - DROP
                h = list(hand)
                h[r] -= 1
                lo = list(loose)
                lo[r] += 1
                out.append(Plan(a, 0.0, False, lo, list(top), list(pts), h))
        return out

    def _extend(self, out: list, first: int, start: int, need: int, gain: float, loose: list,
                top: list, pts: list, hand: list, n: int, inv: float, mid_run: bool) -> None:
        """Depth-first walk of a run's stopping points. ``first`` is the plan's action (for a run
        in progress: CONFIRM until the walk takes a step, then that step's action)."""
        t = list(top)
        t[0] = start  # the starting card ends on top of my pile (R5)
        out.append(Plan(first, gain, True, loose, t, pts, hand))
        if need < 0:
            return
        if loose[need] > 0:
            lo = list(loose)
            lo[need] -= 1
            p = list(pts)
            p[0] += _P[need]
            self._extend(out, TAP if mid_run else first, start, _after(need), gain + _P[need],
                         lo, top, p, hand, n, inv, False)
            return
        for k in range(n):
            if top[k] == need:
                tp = list(top)
                tp[k] = -1
                p = list(pts)
                g = gain
                if k != 0:
                    g += pts[k] * (1.0 + inv)
                    p[0] += pts[k]
                    p[k] = 0
                self._extend(out, TAKE + k if mid_run else first, start, _after(need), g,
                             loose, tp, p, hand, n, inv, False)

    # -- evaluation -------------------------------------------------------------------------

    def evaluate(self, view: ObsView, plan: Plan) -> float:
        """Value of ``plan`` in margin points: its gain minus the expected damage of the next
        seats' replies (rules 2, 3, 5, 6 of the class docstring). Also stored in ``plan.value``."""
        n = view.num_players
        inv = 1.0 / (n - 1)
        my_left = sum(plan.hand)
        others = list(view.hand_sizes[1:])
        cards_after = my_left + sum(others)
        last_runner = 0 if plan.run else view.last_runner
        value = plan.gain
        if cards_after == 0:
            if view.deck_left == 0:  # my action ends the game: leftovers to the last runner (R7)
                left = sum(_P[r] * plan.loose[r] for r in range(NUM_RANKS))
                if last_runner == 0:
                    value += left
                elif last_runner > 0:
                    value -= left * inv
                plan.value = value
                return value
            others = [3] * (n - 1)  # re-deal (R6): every seat gets 3 fresh cards
        unseen = view.unseen
        pool = sum(unseen)
        final_reply = view.deck_left == 0 and cards_after == 1
        weights = self.params.opp_weights
        fw = self.params.future_weight
        total_damage = 0.0
        follow = 0.0
        for j in range(1, n):
            h = others[j - 1]
            if h == 0:
                continue
            w = weights[min(j - 1, len(weights) - 1)]
            damage, mine = _reply(plan, j, h, unseen, pool, n, inv, final_reply and h == 1,
                                  last_runner, fw > 0.0 and j == 1)
            total_damage += w * damage
            follow += mine
        value += fw * follow - self.params.damage_weight * total_damage
        plan.damage, plan.follow = total_damage, follow
        plan.value = value
        return value


def _opp_run(loose: list, top: list, pts: list, n: int, j: int, r: int, inv: float,
             final: bool, want_table: bool = False) -> tuple:
    """The run seat ``j`` would make starting with rank ``r``: every step taken, the pile with
    most points for ``j`` when several show the needed rank. ``final``: this run is the game's
    last action, so j also gets the leftovers (R7).

    Returns:
        ``(what j gathers, damage to my margin)``, plus ``(loose, top, pts)`` after the run when
        ``want_table``.
    """
    lo = list(loose)
    lo[r] -= 1
    table = 2 * _P[r]
    mine = 0
    other = 0
    taken = 0  # bit set of seats whose pile this run took
    need = _after_start(r)
    while need >= 0:
        if lo[need] > 0:
            lo[need] -= 1
            table += _P[need]
        else:
            best, best_v = -1, -1
            for k in range(n):
                if top[k] == need and not taken >> k & 1:
                    v = pts[k] if k != j else 0
                    if v > best_v:
                        best, best_v = k, v
            if best < 0:
                break
            taken |= 1 << best
            if best == j:
                pass  # its own pile: no gain, the run just goes on
            elif best == 0:
                mine += pts[0]
            else:
                other += pts[best]
        need = _after(need)
    if final:
        table += sum(_P[x] * lo[x] for x in range(NUM_RANKS))
    gathered = table + mine + other
    damage = table * inv + mine * (1.0 + inv)
    if not want_table:
        return gathered, damage
    tp = list(top)
    p = list(pts)
    for k in range(n):
        if taken >> k & 1:
            tp[k] = -1
            if k != j:
                p[k] = 0
    tp[j] = r
    p[j] += gathered
    return gathered, damage, lo, tp, p


def _my_run_gain(loose: list, top: list, pts: list, n: int, r: int, inv: float) -> float:
    """Margin I gain with a run starting with rank ``r`` and taking every step (the pile with
    most points when several show the needed rank; my own pile counts 0, another's
    ``1 + 1/(n-1)`` times its points)."""
    lo = list(loose)
    lo[r] -= 1
    gain = 2.0 * _P[r]
    taken = 0
    need = _after_start(r)
    while need >= 0:
        if lo[need] > 0:
            lo[need] -= 1
            gain += _P[need]
        else:
            best, best_v = -1, -1
            for k in range(n):
                if top[k] == need and not taken >> k & 1:
                    v = pts[k] if k != 0 else 0
                    if v > best_v:
                        best, best_v = k, v
            if best < 0:
                break
            taken |= 1 << best
            gain += best_v * (1.0 + inv)
        need = _after(need)
    return gain


def _p_none(pool: int, k: int, h: int) -> float:
    """Chance that ``h`` cards drawn from ``pool`` hold none of ``k`` marked ones
    (hypergeometric: C(pool - k, h) / C(pool, h))."""
    p = 1.0
    for i in range(h):
        if pool - k - i <= 0:
            return 0.0
        p *= (pool - k - i) / (pool - i)
    return p


def _my_best(hand: list, loose: list, top: list, pts: list, n: int, inv: float) -> float:
    """My best run gain (margin points) with a card of ``hand`` on this table; 0 if none starts."""
    best = 0.0
    for r in range(NUM_RANKS):
        if hand[r] and loose[r]:
            g = _my_run_gain(loose, top, pts, n, r, inv)
            if g > best:
                best = g
    return best


def _reply(plan: Plan, j: int, h: int, unseen: tuple, pool: int, n: int, inv: float,
           final: bool, last_runner: int, future: bool) -> tuple:
    """Seat ``j``'s best reply on the table ``plan`` leaves, when ``j`` holds ``h`` cards drawn
    from the ``pool`` cards I have not seen (``unseen`` per rank). ``final``: j's reply is the
    game's last action (leftovers, R7). ``future``: also return my expected best run on the
    table after the reply (with the cards ``plan`` keeps in my hand).

    Returns:
        ``(expected damage to my margin, expected best next run of mine or 0.0)``.
    """
    loose, top, pts = plan.loose, plan.top, plan.pts
    future = future and any(plan.hand)
    cands = []
    for r in range(NUM_RANKS):
        if loose[r] and unseen[r]:
            cands.append((r,) + _opp_run(loose, top, pts, n, j, r, inv, final) + (unseen[r],))
    cands.sort(key=lambda x: -x[1])
    damage = 0.0
    mine = 0.0
    none_before = 1.0
    marked = 0
    for r, g, d, u in cands:
        marked += u
        none_now = _p_none(pool, marked, h)
        p = none_before - none_now
        damage += d * p
        if future and p > 0.0:
            _, _, lo, tp, pp = _opp_run(loose, top, pts, n, j, r, inv, final, True)
            mine += p * _my_best(plan.hand, lo, tp, pp, n, inv)
        none_before = none_now
        if none_now <= 0.0:
            break
    if none_before > 0.0:
        if final:  # j cannot run: the leftovers go to the last runner
            left = sum(_P[x] * loose[x] for x in range(NUM_RANKS))
            if last_runner == 0:
                damage -= none_before * left
            elif last_runner > 0:
                damage += none_before * left * inv
        if future:  # j drops a card; the table I see stays as the plan left it
            mine += none_before * _my_best(plan.hand, loose, top, pts, n, inv)
    return damage, mine
