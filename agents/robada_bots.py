"""Ronda Robada baseline bots: ``greedy`` (best immediate points) and ``expert`` (the strategy of
the rule text, ronda_robada.txt 'Tips and strategy', as a one-turn planner that prices what the
next players can do with the table it leaves).

Both decide from the seat's observation dict only (decoded with
:func:`robada_env.rules.observation.decode`): their own hand, the loose cards, every pile's visible card
and points, the run in progress, hand sizes, cards left in the deck and which ranks are unseen.
A turn is several decisions (``start`` or ``drop``, then ``tap`` / ``take`` ..., then ``confirm``);
each decision is made afresh from the current observation, which holds the run in progress. The
returned action is always one the mask allows. Ties are broken with the bot's own seeded
generator. This module registers them for the game (:data:`BOTS`): ``agents.make("robada", "greedy", seed=0)`` and
``agents.make("robada", "expert", seed=0)``.

Run mechanics both bots rely on (docs/robada_rules.md, RULINGS R2-R5, R7) come from the rules
package, :mod:`robada_env.rules.runs` (the functions the engine itself uses): the rank a run
needs next (``next_after_start`` / ``next_after_step``, R2 and ``closing_ace``), how a step goes
(``extension_options``: tap a loose card of the needed rank if there is one, otherwise take a
pile showing that rank, one's own only with ``may_take_own_pile``, R3), a whole run followed to
its end (``walk_run``) and who gets the leftovers (``leftovers_receiver``, R7 and
``leftovers_to_last_runner``). On confirm the starting card becomes the pile's visible card (R5).
Given the table, a run is therefore deterministic except for which pile to take when several
show the needed rank, so a bot can work out every possible stopping point exactly. The expert's
planner runs compiled (:mod:`hod.agents.robada_planner_kernels`) on the same rules: the one greedy
walk (:func:`robada_env.rules.runs.walk`, compiled by :mod:`robada_env.rules.kernels`) and the
rule tables of :func:`robada_env.rules.kernels.rules_array`.

The observation does not say which rule options the table plays, so the bots are told: every bot
here takes ``rules=Config(...)`` or the options themselves as keyword arguments
(``agents.make("robada", "expert", seed=0, closing_ace=False)``; default: the published rules).
A plan is legal by construction under the bot's rules; if the table's mask refuses it anyway (the
bot was given other rules than the table's), ``act`` raises :class:`RulesMismatchError` instead
of playing something else.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from hod.core.errors import ConfigError
from robada_env.rules.actions import CONFIRM, DROP, NUM_ACTIONS, START, TAKE, TAP, action_name
from robada_env.rules.cards import RANK_POINTS
from robada_env.rules.engine import MAX_PLAYERS, MIN_PLAYERS, Config
from robada_env.rules.kernels import rules_array
from robada_env.rules.observation import LAYOUT, OBS_SIZE, ObsView, decode, decode_counts
from robada_env.rules.runs import TAP_STEP, walk_run

from . import robada_planner_kernels as _pk
from .base import BeliefSampler, Bot, Observation, check_batch_arrays, check_observation, legal_actions
from .rules import ROBADA_RULE_OPTIONS, robada_rules

__all__ = ["GreedyBot", "ExpertParams", "ExpertBot", "greedy_run_points", "Plan", "RulesMismatchError", "view_array",
           "view_arrays"]

_P = RANK_POINTS
_EPS = 1e-9
#: The published rules (every option at its default).
_DEFAULT_RULES = Config()


class RulesMismatchError(RuntimeError):
    """A bot's plan is not legal at the table: the bot was told other rule options than the
    table plays (pass the table's options to the bot, e.g. ``agents.make(..., **options)``)."""


def _check_planned(bot: Bot, action: int, legal: list) -> int:
    """``action`` if the mask allows it; otherwise raise :class:`RulesMismatchError` (no silent
    fallback: under the bot's own rules its plans are legal by construction)."""
    if action in legal:
        return int(action)
    raise RulesMismatchError(
        f"{type(bot).__name__} planned {action} ({action_name(action)}), which the table does not allow "
        f"(legal: {[f'{a} ({action_name(a)})' for a in legal]}); the bot plays the rules {bot.rules.as_dict()} "
        f"(options {list(ROBADA_RULE_OPTIONS)}): give it the table's rule options"
    )


def _pick(values: list, rng: np.random.Generator) -> int:
    """Index of the largest value; exact ties (within 1e-9) broken uniformly with ``rng``."""
    best = max(values)
    top = [i for i, v in enumerate(values) if v >= best - _EPS]
    return top[0] if len(top) == 1 else top[int(rng.integers(len(top)))]


# --------------------------------------------------------------------------------------------
# greedy
# --------------------------------------------------------------------------------------------

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


class GreedyBot(Bot):
    """The action with the best immediate points (the ``greedy`` baseline).

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

    Args:
        seed: seed of the bot's generator.
        rules: the table's rules (:class:`robada_env.rules.engine.Config`), or give the rule
            options themselves: ``closing_ace``, ``may_take_own_pile``,
            ``leftovers_to_last_runner`` (bools; default: the published rules).

    Raises:
        ConfigError: an unknown option or a bad value (the legal ones are named).
    """

    rule_options = ROBADA_RULE_OPTIONS

    def __init__(self, seed: Optional[int] = None, rules: Optional[Config] = None, **options: Any) -> None:
        self.rules = robada_rules(rules, options)
        super().__init__(seed, **options)

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
            return starts[_pick([greedy_run_points(view, a - START, self.rules) for a in starts], self.rng)]
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
    #: ``(view, value, damage, follow, replied)`` computed with the plan by :meth:`ExpertBot.plans`
    #: (one kernel call for every plan), read back by :meth:`ExpertBot.evaluate` for that same view
    _score: Any = field(default=None, repr=False, compare=False)

    @property
    def loose_key(self) -> tuple:
        """The table and hand the plan leaves, as one hashable key (the replies depend on them only)."""
        return (tuple(self.loose), tuple(self.top), tuple(self.pts), tuple(self.hand))


#: The methods of :class:`ExpertBot` through which it decides: a subclass overriding any of them is
#: asked row by row by :meth:`ExpertBot.act_batch` (its own act), never through the compiled planner.
_DECIDING_METHODS = ("act", "act_view", "decide", "plan_values", "plans", "evaluate")


class ExpertBot(Bot):
    """Rule-based player following ronda_robada.txt 'Tips and strategy' (the ``expert`` baseline).

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
    The planner is compiled (:mod:`hod.agents.robada_planner_kernels`, one kernel call per
    decision: tens of microseconds); its first use in a fresh install compiles it (about 40 s
    of CPU once, then numba's disk cache loads it).

    Every run rule comes from :mod:`robada_env.rules.runs` under the bot's ``rules`` (R2
    ``closing_ace``, R3 ``may_take_own_pile``, R7 ``leftovers_to_last_runner``), for its own plans
    and for the replies it prices, so the plans are legal by construction.

    Args:
        seed: seed of the bot's generator.
        params: :class:`ExpertParams` (default: the tuned weights).
        rules: the table's rules (:class:`robada_env.rules.engine.Config`), or give the rule
            options themselves: ``closing_ace``, ``may_take_own_pile``,
            ``leftovers_to_last_runner`` (bools; default: the published rules).

    Raises:
        ConfigError: an unknown option or a bad value (the legal ones are named).
    """

    rule_options = ROBADA_RULE_OPTIONS

    def __init__(self, seed: Optional[int] = None, params: Optional[ExpertParams] = None,
                 rules: Optional[Config] = None, **options: Any) -> None:
        self.rules = robada_rules(rules, options)
        super().__init__(seed, **options)
        if params is not None and not isinstance(params, ExpertParams):
            raise ConfigError(f"params={params!r}: legal values are None or an ExpertParams")
        self.params = params if params is not None else ExpertParams()
        self._rules = rules_array(self.rules)
        self._weights = planner_weights(self.params)
        self._plans = _pk.new_plans()          # the planner's plan and score rows (reused)
        self._scores = _pk.new_scores()

    def act(self, observation: Observation, belief: Optional[BeliefSampler] = None) -> int:
        """The first action of the best plan.

        Raises:
            RulesMismatchError: that action is not in the mask (the bot was told other rule
                options than the table plays).
        """
        return self.decide(observation, belief)[0]

    def decide(self, observation: Observation, belief: Optional[BeliefSampler] = None) -> tuple[int, dict]:
        """:meth:`act` with the values it chose from (expert-iteration targets,
        :mod:`hod.training.expert_iteration`; the same protocol as
        :meth:`hod.agents.base.CandidateSearchBot.decide`).

        Returns:
            ``(action, {action: value / 100})``: the action :meth:`act` plays (same generator
            draws) and, for each first action of a plan, the value of its best plan
            (:meth:`evaluate`, margin points) divided by 100, the unit of the search bots'
            ``margin / 100``; with one legal action, no plan and an empty dict.

        Raises:
            RulesMismatchError: as :meth:`act`.
            ConfigError: a bad observation dict (:func:`hod.agents.base.check_observation`).
        """
        check_observation(observation, self.game)
        legal = legal_actions(observation).tolist()
        if len(legal) == 1:
            return int(legal[0]), {}
        actions, values = self.plan_values(decode(observation["observation"]), legal)
        action = _check_planned(self, actions[_pick(values, self.rng)], legal)
        best: dict = {}
        for a, v in zip(actions, values):
            best[a] = max(best.get(a, -np.inf), v / 100.0)
        return action, best

    def act_view(self, view: ObsView, legal: list) -> int:
        """:meth:`act` on a decoded observation and its legal actions (list of ints, at least
        one), e.g. from :func:`robada_env.rules.observation.view_of`; the same generator draws as
        :meth:`act`.

        Raises:
            RulesMismatchError: as :meth:`act`.
        """
        if len(legal) == 1:
            return int(legal[0])
        actions, values = self.plan_values(view, legal)
        return _check_planned(self, actions[_pick(values, self.rng)], legal)

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """:meth:`act` for G rows at once (the seat to act of G tables, any mix of table sizes),
        exactly: the same actions and the same draws of the bot's generator :attr:`rng` as
        ``[act(row) for row in rows]`` in row order (a row with one legal action gets it with no
        draw; otherwise the best plan of the compiled planner, an exact tie broken by one
        ``rng.integers(k)``), the whole loop in one kernel call
        (:func:`hod.agents.robada_planner_kernels.act_rows`: the views decoded at once by
        :func:`view_arrays`, the generator's PCG64 stream drawn in the kernel and written back).

        Args:
            observations: float32 (G, 192), each row a Ronda Robada observation (layout v1) of the
                seat to act.
            action_masks: int8 (or bool) (G, 27), each row that seat's legal actions.

        Returns:
            int64 (G,): one legal action per row.

        Raises:
            ConfigError (a ValueError): not numpy arrays, another ndim, width or dtype, a different
                number of rows, a row with no legal action or no player count set (the message
                names the legal shapes and dtypes or the first bad row); the generator unchanged.
            RulesMismatchError: a row's planned action is not in its mask (the bot was told other
                rule options than the table plays); the generator unchanged.
        """
        obs, masks = _check_batch(observations, action_masks)
        g = obs.shape[0]
        out = np.empty(g, np.int64)
        if g == 0:
            return out
        if any(getattr(type(self), m) is not getattr(ExpertBot, m) for m in _DECIDING_METHODS):
            # a subclass that decides or plans in a way of its own: its act, row by row
            for r in range(g):
                out[r] = self.act({"observation": obs[r], "action_mask": masks[r]})
            return out
        st = _pk.pcg_state(self.rng)
        bad = _pk.act_rows(view_arrays(obs), masks, self._rules, self._weights, st, out)
        if bad >= 0:
            _check_planned(self, int(out[bad]), np.flatnonzero(masks[bad]).tolist())
        _pk.set_pcg_state(self.rng, st)
        return out

    # -- plans ------------------------------------------------------------------------------

    def plan_values(self, view: ObsView, legal: list) -> tuple[list, list]:
        """The first action and the value (:meth:`evaluate`) of every plan (:meth:`plans`), in
        the plans' order, from one call of the compiled planner
        (:func:`hod.agents.robada_planner_kernels.plan_values`), without building the plans.

        Args:
            view: the decoded observation of the seat to act.
            legal: the legal actions (ints) of its mask.

        Returns:
            ``(actions, values)``: two lists of the same length >= 1 (ints, floats in margin points).
        """
        c = _pk.plan_values(view_array(view), np.asarray(legal, np.int64), self._rules, self._weights,
                            self._plans, self._scores)
        return self._plans[0][:c].tolist(), self._scores[:c, 0].tolist()

    def plans(self, view: ObsView, legal: list) -> list:
        """Every way to finish the turn (see the class docstring), as :class:`Plan` objects
        (:func:`hod.agents.robada_planner_kernels.enumerate_plans`: the start or a drop, then, for a
        run, every stopping point, depth first; with a run in progress, confirming now first).

        Args:
            view: the decoded observation of the seat to act.
            legal: the legal actions (ints) of its mask.

        Returns:
            list of :class:`Plan`, at least one (a run in progress can always be confirmed, and
            with no run every ``drop`` of ``legal`` is a plan).
        """
        c = _pk.plan_values(view_array(view), np.asarray(legal, np.int64), self._rules, self._weights,
                            self._plans, self._scores)
        n = view.num_players
        act, gain, run, loose, top, pts, hand, steps, nsteps = (x[:c].tolist() for x in self._plans)
        scores = self._scores[:c].tolist()
        return [Plan(act[i], gain[i], run[i], loose[i], top[i][:n], pts[i][:n], hand[i],
                     steps=tuple(steps[i][:nsteps[i]]), _score=(view, *scores[i]))
                for i in range(c)]

    # -- evaluation -------------------------------------------------------------------------

    def evaluate(self, view: ObsView, plan: Plan) -> float:
        """Value of ``plan`` in margin points: its gain minus the expected damage of the next
        seats' replies (rules 2, 3, 5, 6, 7 of the class docstring;
        :func:`hod.agents.robada_planner_kernels.evaluate_plan`). Also stored in ``plan.value``
        (and the replies' damage and my follow-up in ``plan.damage`` and ``plan.follow``, unless
        the plan ends the game)."""
        got = plan._score
        if got is not None and got[0] is view:       # valued with the plan (plans), same numbers
            value, damage, follow, replied = got[1:]
        else:
            value, damage, follow, replied = _pk.evaluate_one(
                view_array(view), bool(plan.run), float(plan.gain), np.asarray(plan.loose, np.int64),
                np.asarray(plan.top, np.int64), np.asarray(plan.pts, np.int64), np.asarray(plan.hand, np.int64),
                self._rules, self._weights)
        if replied:
            plan.damage, plan.follow = float(damage), float(follow)
        plan.value = float(value)
        return plan.value


def planner_weights(params: ExpertParams) -> np.ndarray:
    """The weights of ``params`` as the compiled planner takes them: float64 (5,), the damage
    weight of the 1st, 2nd and 3rd next seat (``opp_weights``, its last entry repeated for later
    seats), ``future_weight``, ``damage_weight``.

    Raises:
        ConfigError: ``opp_weights`` is empty.
    """
    w = tuple(params.opp_weights)
    if not w:
        raise ConfigError(f"opp_weights={params.opp_weights!r}: legal values are non-empty tuples of numbers")
    seats = [float(w[min(i, len(w) - 1)]) for i in range(MAX_PLAYERS - 1)]
    return np.array(seats + [float(params.future_weight), float(params.damage_weight)], np.float64)


def view_array(view: ObsView) -> np.ndarray:
    """What the compiled planner reads of ``view`` (:mod:`hod.agents.robada_planner_kernels`,
    the ``V_*`` offsets): int64 (VIEW_SIZE,), seat-relative, seats past n zero.

    Args:
        view: a decoded observation (:func:`robada_env.rules.observation.decode` or ``view_of``).
    """
    pad = (0,) * (MAX_PLAYERS - view.num_players)
    return np.array((view.num_players, *view.hand, *view.hand_sizes, *pad, *view.loose, *view.pile_top, *pad,
                     *view.pile_points, *pad, 1 if view.run_active else 0, view.run_start,
                     -1 if view.run_closed else view.run_next, view.run_points, view.deck_left, *view.unseen,
                     view.last_runner), np.int64)


def _check_batch(observations: Any, action_masks: Any) -> tuple[np.ndarray, np.ndarray]:
    """The batch as :func:`hod.agents.robada_planner_kernels.act_rows` takes it: ``(float32 (G,
    192), int8 (G, 27) C-contiguous)`` (:func:`hod.agents.base.check_batch_arrays`), every entry
    in the layout's bounds [0, 1].

    Raises:
        ConfigError: as :func:`~hod.agents.base.check_batch_arrays`, or an entry outside [0, 1]
            (NaN and infinities included; the first bad row is named).
    """
    obs, masks = check_batch_arrays(observations, action_masks, OBS_SIZE, NUM_ACTIONS)
    outside = ~((obs >= 0.0) & (obs <= 1.0)).all(axis=1)
    if outside.any():
        r = int(np.argmax(outside))
        raise ConfigError(f"row {r} of observations has an entry outside [0, 1]; legal: finite values in [0, 1] "
                          f"(Ronda Robada layout v{LAYOUT.version}, docs/robada_env.md)")
    return obs, masks


def _onehots(x: np.ndarray, piece: str, size: int, start: int = 0) -> np.ndarray:
    """int64 (G,): the index of the set entry of a one-hot piece in each row of counts, -1 if none."""
    o = LAYOUT.offsets[piece].start + start
    block = x[:, o:o + size] != 0
    return np.where(block.any(axis=1), np.argmax(block, axis=1), -1)


def view_arrays(observations: np.ndarray) -> np.ndarray:
    """:func:`view_array` of G observations at once: int64 (G, VIEW_SIZE), row g equal to
    ``view_array(decode(observations[g]))`` (seat-relative, the entries of seats past a row's
    player count 0).

    Args:
        observations: float32 (G, 192), rows of :func:`robada_env.rules.observation.encode`.

    Raises:
        ConfigError: a row with no player count set (not a Ronda Robada observation; the first
            such row is named).
        ValueError: not a 2-D array of width 192.
    """
    x = decode_counts(observations)
    g, S, R = x.shape[0], MAX_PLAYERS, len(RANK_POINTS)
    n = _onehots(x, "num_players", 3) + MIN_PLAYERS
    if (n < MIN_PLAYERS).any():
        raise ConfigError(f"row {int(np.argmax(n < MIN_PLAYERS))} of observations has no player count set; legal: "
                          f"Ronda Robada observations (layout v1)")
    seated = np.arange(S)[None, :] < n[:, None]                      # (G, 4): seats of each row's table
    off = LAYOUT.offsets

    def cut(name: str, size: int) -> np.ndarray:
        o = off[name].start
        return x[:, o:o + size]

    top = np.stack([_onehots(x, "pile_top", R, i * R) for i in range(S)], axis=1)
    view = np.zeros((g, _pk.VIEW_SIZE), np.int64)
    view[:, _pk.V_N] = n
    view[:, _pk.V_HAND:_pk.V_HAND + R] = cut("hand", R)
    view[:, _pk.V_HS:_pk.V_HS + S] = np.where(seated, cut("hand_sizes", S), 0)
    view[:, _pk.V_LOOSE:_pk.V_LOOSE + R] = cut("loose", R)
    view[:, _pk.V_TOP:_pk.V_TOP + S] = np.where(seated, top, 0)
    view[:, _pk.V_PTS:_pk.V_PTS + S] = np.where(seated, cut("pile_points", S), 0)
    view[:, _pk.V_RUN] = x[:, off["run_active"].start] != 0
    view[:, _pk.V_RSTART] = _onehots(x, "run_start", R)
    view[:, _pk.V_NEED] = np.where(x[:, off["run_closed"].start] != 0, -1, _onehots(x, "run_next", R))
    view[:, _pk.V_RPTS] = x[:, off["run_points"].start]
    view[:, _pk.V_DECK] = x[:, off["deck_left"].start]
    view[:, _pk.V_UNSEEN:_pk.V_UNSEEN + R] = cut("unseen", R)
    last = _onehots(x, "last_runner", S)
    view[:, _pk.V_LAST] = np.where(last < n, last, -1)
    return view


#: Ronda Robada's bots, registered for the game by this module (entry-point group ``hod.bots``:
#: ``robada = "hod.agents.robada_bots:BOTS"``, read by :mod:`hod.agents.registry`): registry name ->
#: factory, or the ``"module:attr"`` of one in another module (imported when that bot is made).
BOTS = {
    "random": "hod.agents.base:RandomBot",
    "greedy": GreedyBot,
    "expert": ExpertBot,
    "rollout": "hod.agents.robada_search:RolloutBot",
    "search": "hod.agents.robada_search:SearchBot",
}
