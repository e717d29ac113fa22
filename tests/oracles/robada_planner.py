"""The Ronda Robada expert's planner as it was in Python before it moved onto compiled kernels
(:mod:`hod.agents.robada_planner_kernels`): the executable specification the compiled planner is
checked against, bit for bit (``tests/agents/test_robada_planner.py``). Nothing in the package imports it.

The package's code of that time with only its imports changed and the bot's shell cut away
(:class:`~robada_env.rules.engine.Config`, the card points, the actions and
:class:`~robada_env.rules.observation.ObsView` stay in the package):

* the run rules the planner asked (was ``robada_env/rules/runs.py``: ``next_after_start``,
  ``next_after_step``, ``can_start``, ``must_tap``, ``pile_takeable``, ``takeable_piles``,
  ``extension_options``, ``walk_run``, ``leftovers_receiver``; R2, R3, R7);
* ``greedy_run_points``, ``ExpertParams``, ``Plan`` and ``_pick`` (was ``agents/robada_bots.py``);
* :class:`OraclePlanner`: ``ExpertBot``'s ``plans``, ``_extend``, ``evaluate`` (with its memo of
  replies) and ``decide``, and the functions they call (``_opp_run``, ``_my_run_gain``,
  ``_p_none``, ``_my_best``, ``_reply``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, Optional, Sequence

import numpy as np

from robada_env.rules.actions import CONFIRM, DROP, START, TAKE, TAP
from robada_env.rules.cards import ACE, NUM_RANKS, RANK_POINTS, REY
from robada_env.rules.engine import Config
from robada_env.rules.observation import ObsView

#: The rank a run needs when it can go no further (after the closing Ace, or after the Rey
#: without ``closing_ace``, R2).
RUN_CLOSED = -1
#: No seat (R7: nobody has confirmed a run yet).
NOBODY = -1
#: The seat recorded for a step of :class:`RunWalk` that tapped a loose card (R3).
TAP_STEP = -1


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


def can_start(rank: int, hand: Sequence[int], loose: Sequence[int]) -> bool:
    """Whether a run may start with ``rank``: a hand card and a loose card of that rank
    ('How to play'; a run never starts against a pile's visible card, 'Frequently asked
    questions').

    Args:
        rank: int 0..9.
        hand: (10,) hand cards per rank.
        loose: (10,) loose cards per rank.
    """
    return hand[rank] > 0 and loose[rank] > 0


def must_tap(need: int, loose: Sequence[int]) -> bool:
    """Whether the run's next step must tap a loose card (R3: while a loose card of the needed
    rank is on the table, the run can only be extended by tapping it).

    Args:
        need: the rank the run needs, or :data:`RUN_CLOSED` (then False: nothing extends it).
        loose: (10,) loose cards per rank.
    """
    return need >= 0 and loose[need] > 0


def pile_takeable(need: int, top: int, seat: int, runner: int, may_take_own_pile: bool = True) -> bool:
    """Whether the pile of ``seat``, visible rank ``top`` (-1: empty), may extend a run of
    ``runner`` that needs ``need`` when no loose card of that rank is on the table (R3): it
    shows the needed rank, and it is not the runner's own unless ``may_take_own_pile``.

    Args:
        need: the rank the run needs (``RUN_CLOSED``: never).
        top: the pile's visible rank, -1 for an empty pile (never takeable).
        seat, runner: the pile's seat and the runner's, in one frame.
        may_take_own_pile: ``Config.may_take_own_pile`` (R3).
    """
    return need >= 0 and top == need and (may_take_own_pile or seat != runner)


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
    return [k for k, t in enumerate(tops) if pile_takeable(need, t, k, runner, may_take_own_pile)]


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
    if must_tap(need, loose):
        return True, []
    return False, takeable_piles(need, tops, runner, may_take_own_pile)


class RunWalk(NamedTuple):
    """A run followed to its end by :func:`walk_run`.

    Attributes:
        steps: the extension steps in order, ``(rank, seat)``: ``seat`` is :data:`TAP_STEP`
            for a tapped loose card, else the seat whose whole pile was taken.
        loose: (10,) loose cards per rank after the run (the starting loose card removed).
        tops: (n,) visible ranks after the run, taken piles at -1 (the runner's own pile is not
            changed: the caller knows what the confirm puts on top, R5).
        need: the rank the run would need next when it stopped, or :data:`RUN_CLOSED`.
    """

    steps: list
    loose: list
    tops: list
    need: int


def walk_run(start: int, loose: Sequence[int], tops: Sequence[int], runner: int = 0,
             pile_values: Optional[Sequence[Optional[float]]] = None, closing_ace: bool = True,
             may_take_own_pile: bool = True) -> RunWalk:
    """Follow the run that starts with ``start``, taking every step the rules allow (R2, R3).

    Each step taps a loose card of the needed rank when there is one (R3); otherwise it takes
    the takeable pile (:func:`extension_options`) of highest ``pile_values[seat]`` (the first
    one in seat order on a tie; a seat valued ``None`` is never taken); with no such pile the
    run stops. Nothing here chooses to stop early: the caller picks the stopping point from
    ``steps``.

    Args:
        start: rank 0..9 of the starting pair; the caller checks :func:`can_start`.
        loose: (10,) loose cards per rank before the start (the starting loose card included).
        tops: (n,) visible rank per seat, -1 for an empty pile.
        runner: the runner's seat in the frame of ``tops``.
        pile_values: (n,) value of taking each seat's pile, ``None`` for a pile the caller never
            takes; default: every takeable pile worth 0.
        closing_ace: ``Config.closing_ace`` (R2).
        may_take_own_pile: ``Config.may_take_own_pile`` (R3).

    Returns:
        :class:`RunWalk`.

    Raises:
        ValueError: ``start`` is not a rank or no loose card of that rank is on the table.
    """
    if not 0 <= start < NUM_RANKS or loose[start] <= 0:
        raise ValueError(f"a run cannot start with rank {start!r}: it needs a loose card of that rank")
    lo = list(loose)
    lo[start] -= 1
    tp = list(tops)
    steps: list = []
    after = _AFTER_STEP[bool(closing_ace)]
    need = _AFTER_START[bool(closing_ace)][start]
    while need >= 0:
        if must_tap(need, lo):  # R3: a loose card of the needed rank must be tapped
            lo[need] -= 1
            steps.append((need, TAP_STEP))
        else:  # R3: else the best takeable pile (takeable_piles), if any
            best, best_v = -1, None
            for k, t in enumerate(tp):                 # (t == need first: a fast pre-filter)
                if t == need and pile_takeable(need, t, k, runner, may_take_own_pile):
                    v = 0 if pile_values is None else pile_values[k]
                    if v is not None and (best_v is None or v > best_v):
                        best, best_v = k, v
            if best < 0:
                break
            tp[best] = -1
            steps.append((need, best))
        need = after[need]
    return RunWalk(steps, lo, tp, need)


#: ``next_after_start`` / ``next_after_step`` of every rank, by ``closing_ace`` (lookup tables
#: built from the two functions, for the inner loop of :func:`walk_run`).
_AFTER_START = {ca: tuple(next_after_start(r, ca) for r in range(NUM_RANKS)) for ca in (True, False)}
_AFTER_STEP = {ca: tuple(next_after_step(r, ca) for r in range(NUM_RANKS)) for ca in (True, False)}


def leftovers_receiver(last_runner: int, leftovers_to_last_runner: bool = True) -> int:
    """Who gets the loose cards left at the end of the game (R7, 'End of the game and
    scoring'): the seat that confirmed the last run, or :data:`NOBODY` when nobody ever
    confirmed one or the option ``leftovers_to_last_runner`` is off.

    Args:
        last_runner: seat (any frame) or :data:`NOBODY`.
        leftovers_to_last_runner: ``Config.leftovers_to_last_runner``.
    """
    return last_runner if leftovers_to_last_runner and last_runner >= 0 else NOBODY


_P = RANK_POINTS
_EPS = 1e-9
#: The published rules (every option at its default).
_DEFAULT_RULES = Config()
#: Entries of an expert's memo of replies before it is cleared (bounded memory).
_REPLY_CACHE = 20_000


def _pick(values: list, rng: np.random.Generator) -> int:
    """Index of the largest value; exact ties (within 1e-9) broken uniformly with ``rng``."""
    best = max(values)
    top = [i for i, v in enumerate(values) if v >= best - _EPS]
    return top[0] if len(top) == 1 else top[int(rng.integers(len(top)))]


def greedy_run_points(view: ObsView, start: int, rules: Config = _DEFAULT_RULES) -> int:
    """Points a turn gathers when it starts with ``start`` and is extended the greedy way.

    The greedy way (:class:`GreedyBot`): after the start (hand card + loose card, 2 x the rank's
    points), tap a loose card of the needed rank while there is one; otherwise take the pile of
    another seat showing the needed rank (the one with most points); stop when neither exists
    (the actor's own pile adds nothing, so greedy does not take it). The run follows ``rules``
    (:func:`robada_env.rules.runs.walk_run`: R2 with ``closing_ace``, R3).

    Args:
        view: decoded observation of the seat to act, no run in progress.
        start: rank 0..9 the run starts with (the caller checks that it can start).
        rules: the table's rules (:class:`robada_env.rules.engine.Config`; ``num_players`` unused).

    Returns:
        int points (the hand card included).

    Raises:
        ValueError: no loose card of rank ``start`` (from ``walk_run``).
    """
    pts = view.pile_points
    values = [None] + list(pts[1:])  # never my own pile
    walk = walk_run(start, view.loose, view.pile_top, 0, values, rules.closing_ace, rules.may_take_own_pile)
    total = 2 * _P[start]
    for rank, seat in walk.steps:
        total += _P[rank] if seat == TAP_STEP else pts[seat]
    return total


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
        steps: every action of the plan from now to the end of the turn, in order (the first is
            ``action``; a run ends with ``CONFIRM``, a drop is one action): the whole-turn move
            the search bots play out (:class:`hod.agents.robada_search.SearchBot`).
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
    steps: tuple = ()

    @property
    def loose_key(self) -> tuple:
        """The table and hand the plan leaves, as one hashable key (the replies depend on them only)."""
        return (tuple(self.loose), tuple(self.top), tuple(self.pts), tuple(self.hand))




class OraclePlanner:
    """``ExpertBot``'s planner as it was: ``plans``, ``evaluate`` and ``decide`` on a decoded
    observation, under ``rules`` and ``params``, ties drawn from ``rng`` (``ExpertBot._pick``)."""

    def __init__(self, rules: Optional[Config] = None, params: Optional[ExpertParams] = None,
                 seed: Optional[int] = None) -> None:
        self.rules = rules if rules is not None else Config()
        self.params = params if params is not None else ExpertParams()
        self.rng = np.random.default_rng(seed)
        self._replies: dict = {}

    def decide(self, view: ObsView, legal: list) -> tuple:
        """``ExpertBot.decide`` after its observation checks: ``(action, {action: value / 100})``."""
        if len(legal) == 1:
            return int(legal[0]), {}
        plans = self.plans(view, legal)
        values = [self.evaluate(view, p) for p in plans]
        action = int(plans[_pick(values, self.rng)].action)
        best: dict = {}
        for plan, v in zip(plans, values):
            best[plan.action] = max(best.get(plan.action, -np.inf), v / 100.0)
        return action, best

    def plans(self, view: ObsView, legal: list) -> list:
        """Every way to finish the turn (see the class docstring), as :class:`Plan` objects.

        Args:
            view: the decoded observation of the seat to act.
            legal: the legal actions (ints) of its mask.

        Returns:
            list of :class:`Plan`, at least one (a run in progress can always be confirmed, and
            with no run every ``drop`` of ``legal`` is a plan).
        """
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
            self._extend(out, CONFIRM, view.run_start, need, 0.0, loose, top, pts, hand, n, inv, True, ())
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
                self._extend(out, a, s, next_after_start(s, self.rules.closing_ace), 2.0 * _P[s], lo, top, p, h,
                             n, inv, False, (a,))
            elif a < TAP:
                r = a - DROP
                h = list(hand)
                h[r] -= 1
                lo = list(loose)
                lo[r] += 1
                out.append(Plan(a, 0.0, False, lo, list(top), list(pts), h, steps=(a,)))
        return out

    def _extend(self, out: list, first: int, start: int, need: int, gain: float, loose: list,
                top: list, pts: list, hand: list, n: int, inv: float, mid_run: bool, path: tuple) -> None:
        """Depth-first walk of a run's stopping points. ``first`` is the plan's action (for a run
        in progress: CONFIRM until the walk takes a step, then that step's action); ``path`` the
        actions taken so far this walk. The steps are those of
        :func:`robada_env.rules.runs.extension_options` under the bot's rules."""
        t = list(top)
        t[0] = start  # the starting card ends on top of my pile (R5)
        out.append(Plan(first, gain, True, loose, t, pts, hand, steps=path + (CONFIRM,)))
        rules = self.rules
        tap, seats = extension_options(need, loose, top, 0, rules.may_take_own_pile)
        if tap:
            lo = list(loose)
            lo[need] -= 1
            p = list(pts)
            p[0] += _P[need]
            self._extend(out, TAP if mid_run else first, start, next_after_step(need, rules.closing_ace),
                         gain + _P[need], lo, top, p, hand, n, inv, False, path + (TAP,))
            return
        for k in seats:
            tp = list(top)
            tp[k] = -1
            p = list(pts)
            g = gain
            if k != 0:
                g += pts[k] * (1.0 + inv)
                p[0] += pts[k]
                p[k] = 0
            self._extend(out, TAKE + k if mid_run else first, start, next_after_step(need, rules.closing_ace),
                         g, loose, tp, p, hand, n, inv, False, path + (TAKE + k,))

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
        rules = self.rules
        if cards_after == 0:
            if view.deck_left == 0:  # my action ends the game: leftovers to the last runner (R7)
                left = sum(_P[r] * plan.loose[r] for r in range(NUM_RANKS))
                receiver = leftovers_receiver(last_runner, rules.leftovers_to_last_runner)
                if receiver == 0:
                    value += left
                elif receiver > 0:
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
            key = (plan.loose_key, j, h, unseen, final_reply and h == 1, last_runner, fw > 0.0 and j == 1)
            got = self._replies.get(key)
            if got is None:
                got = _reply(plan, j, h, unseen, pool, n, inv, final_reply and h == 1,
                             last_runner, fw > 0.0 and j == 1, rules)
                if len(self._replies) >= _REPLY_CACHE:
                    self._replies.clear()
                self._replies[key] = got
            damage, mine = got
            total_damage += w * damage
            follow += mine
        value += fw * follow - self.params.damage_weight * total_damage
        plan.damage, plan.follow = total_damage, follow
        plan.value = value
        return value


def _opp_run(loose: list, top: list, pts: list, n: int, j: int, r: int, inv: float,
             final: bool, want_table: bool = False, rules: Config = _DEFAULT_RULES) -> tuple:
    """The run seat ``j`` would make starting with rank ``r``: every step taken
    (:func:`robada_env.rules.runs.walk_run` under ``rules``), the pile with most points for ``j``
    when several show the needed rank (its own pile, if it may take it, counts 0). ``final``:
    this run is the game's last action, so j also gets the leftovers when the rules give them to
    the last runner (R7).

    Returns:
        ``(what j gathers, damage to my margin)``, plus ``(loose, top, pts)`` after the run when
        ``want_table``.
    """
    values = list(pts)
    values[j] = 0  # its own pile gains it nothing
    walk = walk_run(r, loose, top, j, values, rules.closing_ace, rules.may_take_own_pile)
    lo = walk.loose
    table = 2 * _P[r]
    mine = 0
    other = 0
    for rank, seat in walk.steps:
        if seat == TAP_STEP:
            table += _P[rank]
        elif seat == j:
            pass  # its own pile: no gain, the run just goes on
        elif seat == 0:
            mine += pts[0]
        else:
            other += pts[seat]
    if final and leftovers_receiver(j, rules.leftovers_to_last_runner) == j:
        table += sum(_P[x] * lo[x] for x in range(NUM_RANKS))
    gathered = table + mine + other
    damage = table * inv + mine * (1.0 + inv)
    if not want_table:
        return gathered, damage
    tp = walk.tops  # taken piles at -1
    p = list(pts)
    for _, seat in walk.steps:
        if seat != TAP_STEP and seat != j:
            p[seat] = 0
    tp[j] = r
    p[j] += gathered
    return gathered, damage, lo, tp, p


def _my_run_gain(loose: list, top: list, pts: list, n: int, r: int, inv: float,
                 rules: Config = _DEFAULT_RULES) -> float:
    """Margin I gain with a run starting with rank ``r`` and taking every step
    (:func:`robada_env.rules.runs.walk_run` under ``rules``; the pile with most points when
    several show the needed rank; my own pile counts 0, another's ``1 + 1/(n-1)`` times its
    points)."""
    values = list(pts)
    values[0] = 0  # my own pile gains me nothing
    walk = walk_run(r, loose, top, 0, values, rules.closing_ace, rules.may_take_own_pile)
    gain = 2.0 * _P[r]
    for rank, seat in walk.steps:
        if seat == TAP_STEP:
            gain += _P[rank]
        else:
            gain += values[seat] * (1.0 + inv)
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


def _my_best(hand: list, loose: list, top: list, pts: list, n: int, inv: float,
             rules: Config = _DEFAULT_RULES) -> float:
    """My best run gain (margin points) with a card of ``hand`` on this table; 0 if none starts
    (:func:`robada_env.rules.runs.can_start`)."""
    best = 0.0
    for r in range(NUM_RANKS):
        if hand[r] and can_start(r, hand, loose):
            g = _my_run_gain(loose, top, pts, n, r, inv, rules)
            if g > best:
                best = g
    return best


def _reply(plan: Plan, j: int, h: int, unseen: tuple, pool: int, n: int, inv: float,
           final: bool, last_runner: int, future: bool, rules: Config = _DEFAULT_RULES) -> tuple:
    """Seat ``j``'s best reply on the table ``plan`` leaves, when ``j`` holds ``h`` cards drawn
    from the ``pool`` cards I have not seen (``unseen`` per rank). ``final``: j's reply is the
    game's last action (leftovers, R7). ``future``: also return my expected best run on the
    table after the reply (with the cards ``plan`` keeps in my hand). Runs follow ``rules``.

    Returns:
        ``(expected damage to my margin, expected best next run of mine or 0.0)``.
    """
    loose, top, pts = plan.loose, plan.top, plan.pts
    future = future and any(plan.hand)
    cands = []
    for r in range(NUM_RANKS):
        if loose[r] and unseen[r]:  # j may hold a card of rank r (can_start with an unseen hand)
            cands.append((r,) + _opp_run(loose, top, pts, n, j, r, inv, final, False, rules) + (unseen[r],))
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
            _, _, lo, tp, pp = _opp_run(loose, top, pts, n, j, r, inv, final, True, rules)
            mine += p * _my_best(plan.hand, lo, tp, pp, n, inv, rules)
        none_before = none_now
        if none_now <= 0.0:
            break
    if none_before > 0.0:
        if final:  # j cannot run: the leftovers go to the last runner, if the rules say so (R7)
            left = sum(_P[x] * loose[x] for x in range(NUM_RANKS))
            receiver = leftovers_receiver(last_runner, rules.leftovers_to_last_runner)
            if receiver == 0:
                damage -= none_before * left
            elif receiver > 0:
                damage += none_before * left * inv
        if future:  # j drops a card; the table I see stays as the plan left it
            mine += none_before * _my_best(plan.hand, loose, top, pts, n, inv, rules)
    return damage, mine
