"""Ronda Robada search bot ``rollout``: determinized Monte Carlo rollouts of the expert.

A one-step policy improvement of :class:`hod.agents.robada_bots.ExpertBot` (the "rollout algorithm"
of Bertsekas, here over sampled hidden cards as in Perfect Information Monte Carlo, PIMC):

1. The candidates are the legal actions whose best plan, as the expert values it
   (:meth:`ExpertBot.plans` and :meth:`ExpertBot.evaluate`), is within ``window`` margin points
   of the expert's best, at most ``candidates`` of them, best first (exact ties in the order of
   the expert's plans). A decision with one candidate plays it, with no search: a best action of
   the expert (on an exact tie not always the one :class:`ExpertBot` would draw).
2. ``determinizations`` times: draw a full state the seat cannot tell from the real one (the
   ``belief`` sampler: other hands and the deck reshuffled, RULINGS R9); for each candidate, play
   it on a copy of that state and then play the game out with the expert in every seat (the
   seat's own later decisions included), with the same expert seeds for every candidate (common
   random numbers: the candidates are compared on the same deals and the same tie-breaks).
3. Each playout scores ``win share + margin_weight * margin / 100``: the win share is 1 for the
   only top score, 1/k when k seats share it, 0 otherwise (ronda_robada.txt 'End of the game and
   scoring'); the margin is the seat's points minus the mean of the others', in game points.
4. The candidate with the best mean score is played (exact ties: the bot's seeded generator).

Whole-turn moves (``whole_turn=True``; off by default, measured weaker: docs/results.md): a turn
is the seat's alone and the table it plays on is public, so a whole turn (start, every tap or
take, confirm; or a drop; ronda_robada.txt 'How to play') can be one move. The candidates of
step 1 are then the expert's best plans (:attr:`hod.agents.robada_bots.Plan.steps`), not their
first actions; each playout plays the whole move before the expert takes over, and the chosen
move's later steps are played without searching again (one search per turn). At the same
budget this lost about 4.5 points of win rate at 2 players against searching each decision of
the turn on its own (which spends fresh determinizations on every stopping decision).

It needs the hidden state only through ``belief`` (``needs_belief = True``): the tournament
(``hod.evaluation.tournament``), the play CLI and the imitation warm start
(``hod.training.imitation``) pass ``belief(rng) -> State`` built on
``robada_env.sample_consistent_state``. Cost: about ``candidates x determinizations`` playouts per
decision with more than one candidate, each one call of the compiled playout kernel
(:func:`hod.agents.robada_planner_kernels.playouts`, about 0.5-1 ms a playout: the candidate's
move, then the compiled expert in every seat to the end); about 0.6-0.8 s per 2-player game
for ``search`` at its defaults on one core (docs/throughput.md).

Rules: the bot is told the table's rule options like every Ronda Robada bot (``rules=`` or
``closing_ace`` / ``may_take_own_pile`` / ``leftovers_to_last_runner``); its expert and the
playout experts plan under them, and the playouts run the engine on the belief states, whose
``Config`` must hold the same options (else :class:`~hod.agents.robada_bots.RulesMismatchError`).
"""
from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np

from hod.core.errors import ConfigError
from robada_env.rules import engine
from robada_env.rules.engine import Config
from robada_env.rules.kernels import rules_array
from robada_env.rules.observation import decode

from . import robada_planner_kernels as _pk
from .base import BeliefSampler, CandidateSearchBot, Observation, check_observation, legal_actions
from .robada_bots import ExpertBot, ExpertParams, RulesMismatchError, _check_planned, planner_weights
from .robada_inference import ExpertModel, InferenceBelief
from .rules import ROBADA_RULE_OPTIONS, robada_rules

__all__ = ["RolloutBot", "SearchBot", "playout_score", "MAX_DETERMINIZATIONS"]

#: The most determinizations one decision may ask for (each plays one playout per candidate).
MAX_DETERMINIZATIONS = 4096


def playout_score(points: list, seat: int, margin_weight: float) -> float:
    """Score of a finished game for ``seat``: win share + ``margin_weight`` x margin / 100.

    Args:
        points: final points per seat (ints, game points).
        seat: the seat scored.
        margin_weight: weight of the margin (points minus the others' mean) per 100 points.

    Returns:
        float; e.g. points [120, 100] for seat 0 with weight 1: 1 + (120 - 100) / 100 = 1.2.

    Raises:
        ConfigError: fewer than 2 seats, or ``seat`` not one of them.
    """
    points = [int(p) for p in points]
    if len(points) < 2 or not 0 <= seat < len(points):
        raise ConfigError(f"points={points!r}, seat={seat!r}: need 2-4 seats' points and a seat in 0..{len(points) - 1}")
    best = max(points)
    share = 1.0 / points.count(best) if points[seat] == best else 0.0
    others = [p for i, p in enumerate(points) if i != seat]
    return share + margin_weight * (points[seat] - sum(others) / len(others)) / 100.0


class RolloutBot(CandidateSearchBot):
    """Determinized rollouts of the expert (module docstring; registry name ``"rollout"``).

    Args:
        seed: seed of the bot's generator (determinizations, playout seeds, ties).
        determinizations: hidden-card samples per decision (int in 1..:data:`MAX_DETERMINIZATIONS`).
        candidates: at most this many actions are searched, the expert's best first (int >= 1).
        window: only actions whose expert value is within this many margin points of the best
            are searched (finite float >= 0).
        margin_weight: weight of the margin per 100 points in the playout score (finite float
            >= 0).
        whole_turn: search whole-turn moves (bool; :meth:`decide`): the candidates are the
            expert's best plans (start, every tap or take, confirm; or a drop), each played out
            whole, and the chosen plan's later steps are played without searching again.
        rules: the table's rules (:class:`robada_env.rules.engine.Config`), or give the rule
            options themselves (``closing_ace``, ``may_take_own_pile``,
            ``leftovers_to_last_runner``; default: the published rules).

    Raises:
        ConfigError: an option outside its legal values (the message names them), or ``act``
            called without ``belief``.
    """

    needs_belief = True
    rule_options = ROBADA_RULE_OPTIONS

    def __init__(self, seed: Optional[int] = None, determinizations: int = 48, candidates: int = 4,
                 window: float = 30.0, margin_weight: float = 1.0, whole_turn: bool = False,
                 rules: Optional[Config] = None, **options: Any) -> None:
        self.rules = robada_rules(rules, options)
        super().__init__(seed, **options)
        for name, value, high in (("determinizations", determinizations, MAX_DETERMINIZATIONS),
                                  ("candidates", candidates, None)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1 \
                    or (high is not None and value > high):
                raise ConfigError(f"{name}={value!r}: legal values are integers "
                                  f"{'>= 1' if high is None else f'in 1..{high}'}")
        for name, value in (("window", window), ("margin_weight", margin_weight)):
            if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
                    or not 0 <= value < math.inf:
                raise ConfigError(f"{name}={value!r}: legal values are finite numbers >= 0")
        if not isinstance(whole_turn, (bool, np.bool_)):
            raise ConfigError(f"whole_turn={whole_turn!r}: legal values are True and False")
        self.whole_turn = bool(whole_turn)
        self._committed: list = []  # the rest of the whole-turn move being played (whole_turn)
        self._last_key, self._last_action = b"", -1  # the last position of a move answered, and how
        self.determinizations = int(determinizations)
        self.candidates = int(candidates)
        self.window = float(window)
        self.margin_weight = float(margin_weight)
        self._expert = ExpertBot(seed=seed, rules=self.rules)
        # the playout experts (the shipped expert's weights), as the compiled planner takes them
        self._rules_array = rules_array(self.rules)
        self._playout_weights = planner_weights(ExpertParams())

    def reset(self, seed: Optional[int] = None) -> None:
        """Start a new game; reseeds the bot's generator (and its expert's) when ``seed`` is given."""
        super().reset(seed)
        self._expert.reset(seed)
        self._committed, self._last_key, self._last_action = [], b"", -1

    def resample_actions(self, observation: Observation, belief: Optional[BeliefSampler],
                         seeds) -> Optional[list]:
        """:meth:`hod.agents.base.CandidateSearchBot.resample_actions`; None with ``whole_turn``
        (the rest of a chosen move is state that ``act`` keeps)."""
        if self.whole_turn:
            return None
        return super().resample_actions(observation, belief, seeds)

    def playout_surrogate(self) -> ExpertBot:
        """The bot that stands in for this one inside the playouts of a value that plays the
        lineup (:class:`hod.evaluation.luck_playout.LineupPlayoutValue`: a search per playout
        step would cost a search per row): the expert its candidates and playouts are built on
        (:class:`~hod.agents.robada_bots.ExpertBot` with this bot's rules and seed, the shipped
        weights), played in batch there (:meth:`~hod.agents.robada_bots.ExpertBot.act_batch`).
        An approximation of this bot's play (the search improves on the expert); the luck
        correction stays unbiased with any value."""
        return self._expert

    def candidate_actions(self, observation: Observation) -> list:
        """The actions to search, the expert's best first (step 1 of the module docstring).

        Args:
            observation: the seat's ``{"observation": float32 (192,), "action_mask": int8 (27,)}``.

        Returns:
            list of int legal actions, 1 to ``candidates`` long.

        Raises:
            RulesMismatchError: a plan of the expert is not in the mask (the bot was told other
                rule options than the table plays).
        """
        legal = legal_actions(observation).tolist()
        if len(legal) == 1:
            return [int(legal[0])]
        view = decode(observation["observation"])
        best: dict = {}
        for a, v in zip(*self._expert.plan_values(view, legal)):  # never empty (ExpertBot.plans)
            _check_planned(self, a, legal)
            if v > best.get(a, -np.inf):
                best[a] = v
        ranked = sorted(best, key=lambda a: -best[a])
        top = best[ranked[0]]
        return [int(a) for a in ranked[: self.candidates] if best[a] >= top - self.window]

    def candidate_plans(self, observation: Observation) -> list:
        """The whole-turn moves to search, the expert's best first (``whole_turn``).

        Args:
            observation: the seat's ``{"observation": float32 (192,), "action_mask": int8 (27,)}``.

        Returns:
            list of 1 to ``candidates`` tuples of int actions, each the rest of the turn from now
            (:attr:`hod.agents.robada_bots.Plan.steps`: ``start``, taps and takes, ``confirm``; or
            one ``drop``; mid-run, from the next step on), whose expert value is within
            ``window`` margin points of the best plan's (exact ties in the order of the expert's plans).

        Raises:
            RulesMismatchError: a plan of the expert is not in the mask (other rule options than the table's).
        """
        legal = legal_actions(observation).tolist()
        view = decode(observation["observation"])
        best: dict = {}
        for plan in self._expert.plans(view, legal):  # never empty (ExpertBot.plans)
            _check_planned(self, plan.action, legal)
            best[plan.steps] = max(best.get(plan.steps, -np.inf), self._expert.evaluate(view, plan))
        ranked = sorted(best, key=lambda steps: -best[steps])
        top = best[ranked[0]]
        return [steps for steps in ranked[: self.candidates] if best[steps] >= top - self.window]

    def plan_values(self, observation: Observation, belief: Optional[BeliefSampler], plans: list) -> dict:
        """Mean playout score of each whole-turn move (steps 2-3 of the module docstring, every
        action of the move played before the expert takes over).

        Args:
            observation: the seat's observation dict (the seat is the one to act).
            belief: ``belief(rng) -> robada_env.rules.engine.State`` (see :meth:`action_values`).
            plans: tuples of int actions, e.g. from :meth:`candidate_plans`.

        Returns:
            ``{plan: mean score}`` (floats; win share + margin_weight x margin / 100).

        Raises:
            ConfigError: ``belief`` is None.
            RulesMismatchError: a belief state plays other rule options than the bot was told.
        """
        if belief is None:
            raise ConfigError(
                f"{type(self).__name__} is a search bot (needs_belief): act(observation, belief) needs "
                "belief(rng) -> State, e.g. lambda rng: robada_env.sample_consistent_state(state, seat, rng)"
            )
        totals = np.zeros(len(plans))
        weights = 0.0
        steps = np.zeros((len(plans), _pk.MAX_STEPS), np.int64)
        lengths = np.array([len(p) for p in plans], np.int64)
        for i, p in enumerate(plans):
            steps[i, :len(p)] = p
        for base, w in self._determinizations(observation, belief):
            self._check_rules(base.config)
            seeds = self.rng.integers(2**31, size=base.n)
            totals += w * self._playouts(base, steps, lengths, seeds)
            weights += w
        return {steps: float(t) / weights for steps, t in zip(plans, totals)}

    def decide(self, observation: Observation, belief: Optional[BeliefSampler] = None) -> tuple[int, dict]:
        """:meth:`act` with the values it chose from (see
        :meth:`hod.agents.base.CandidateSearchBot.decide`).

        With ``whole_turn``: in the middle of a move it chose, the move's next step, unsearched
        (the same action again when asked about the same position twice; a new search when the
        rest of the move is no longer a way to finish the turn, e.g. another step was played);
        else the first action of the whole-turn move (:meth:`candidate_plans`) of best mean playout score (:meth:`plan_values`; exact ties: the bot's generator), whose later steps
        are then played at the next decisions of the turn (the turn is the seat's alone and its
        table known, so they stay legal). The values returned: per first action, its best
        move's score (empty when nothing was searched).

        Raises:
            ConfigError: a bad observation dict, or several candidates and no ``belief``.
            RulesMismatchError: as :meth:`candidate_actions`.
        """
        if not self.whole_turn:
            return super().decide(observation, belief)
        check_observation(observation, self.game)
        legal = legal_actions(observation).tolist()
        view = decode(observation["observation"])
        key = observation["observation"].tobytes() + observation["action_mask"].tobytes()
        if view.run_active and key == self._last_key:  # asked again about the same position
            return self._last_action, {}
        if self._committed and view.run_active and \
                tuple(self._committed) in {p.steps for p in self._expert.plans(view, legal)}:
            # the rest of the chosen move is still a way to finish this turn from here
            action = int(self._committed.pop(0))
            self._last_key, self._last_action = key, action
            return action, {}
        self._committed = []
        if len(legal) == 1:
            return int(legal[0]), {}
        plans = self.candidate_plans(observation)
        values: dict = {}
        if len(plans) == 1:
            chosen = plans[0]
        else:
            scores = self.plan_values(observation, belief, plans)
            chosen = self.best_candidate(scores, plans)
            for steps, v in scores.items():
                values[steps[0]] = max(values.get(steps[0], -np.inf), v)
        self._committed = list(chosen[1:])
        self._last_key, self._last_action = key, int(chosen[0])
        return int(chosen[0]), values

    def action_values(self, observation: Observation, belief: Optional[BeliefSampler],
                      candidates: Optional[list] = None) -> dict:
        """Mean playout score of each candidate (steps 2-3 of the module docstring).

        Args:
            observation: the seat's observation dict (the seat is the one to act).
            belief: ``belief(rng) -> robada_env.rules.engine.State``, a full state the seat cannot tell
                from the real one.
            candidates: actions to score (default: :meth:`candidate_actions`).

        Returns:
            ``{action: mean score}`` (floats; win share + margin_weight x margin / 100).

        Raises:
            ConfigError: ``belief`` is None.
            RulesMismatchError: a belief state plays other rule options than the bot was told.
        """
        cands = self.candidate_actions(observation) if candidates is None else list(candidates)
        values = self.plan_values(observation, belief, [(a,) for a in cands])
        return {a: values[(a,)] for a in cands}

    def _determinizations(self, observation: Observation, belief: BeliefSampler):
        """``determinizations`` pairs ``(state, weight)``: here uniform belief samples, weight 1."""
        for _ in range(self.determinizations):
            yield belief(self.rng), 1.0

    def _check_rules(self, config: Config) -> None:
        """Raise :class:`RulesMismatchError` unless ``config`` has the bot's rule options."""
        if any(getattr(config, k) != getattr(self.rules, k) for k in ROBADA_RULE_OPTIONS):
            raise RulesMismatchError(
                f"RolloutBot was told the rules {self.rules.as_dict()} but its belief states play "
                f"{config.as_dict()} (options {list(ROBADA_RULE_OPTIONS)}): give it the table's rule options")

    def _playouts(self, base: "engine.State", steps: np.ndarray, lengths: np.ndarray, seeds: np.ndarray) -> np.ndarray:
        """The score of each candidate's playout on ``base`` (one call of
        :func:`hod.agents.robada_planner_kernels.playouts`): play candidate ``i``'s actions
        ``steps[i, :lengths[i]]`` on a copy of ``base``, then the expert in every seat to the end,
        seat ``k``'s expert drawing its tie-breaks from ``numpy.random.default_rng(seeds[k])``
        anew for every candidate (common random numbers); scored for the seat to act in ``base``
        by :func:`playout_score`. Returns float64 (C,).

        Raises:
            IllegalActionError: a candidate's step is not legal (as ``engine.apply_action``).
            RulesMismatchError: a playout expert's plan is not legal in the game (its rules are
                not the bot's).
        """
        streams = np.stack([_pk.pcg_state(np.random.default_rng(int(x))) for x in seeds])
        points = np.empty((len(lengths), base.n), np.int64)
        b8, b16, bb, lay = _pk.record_buffers(base)
        bad = _pk.playouts(b8, b16, bb, lay, self._rules_array, self._playout_weights, steps, lengths, streams, points)
        if 0 <= bad < len(lengths):      # the move itself: the engine's own refusal (IllegalActionError)
            s = base.clone()
            for a in steps[bad, :lengths[bad]].tolist():
                engine.apply_action(s, a)
        if bad >= 0:
            raise RulesMismatchError(
                f"{type(self).__name__}: a playout expert's plan is not legal in the belief state (the bot plays the "
                f"rules {self.rules.as_dict()}; give it the table's rule options {list(ROBADA_RULE_OPTIONS)})")
        seat = base.current
        return np.array([playout_score(p, seat, self.margin_weight) for p in points.tolist()], np.float64)


class SearchBot(RolloutBot):
    """Rollouts of the expert on determinizations weighted by the opponents' play (registry name
    ``"search"``).

    :class:`RolloutBot` with the belief of :mod:`hod.agents.robada_inference`: per decision, one
    belief sample gives what the seat knows (table, own hand, the public history); each
    opponent's current hand is drawn from its posterior given the actions it took since the deal
    under an opponent model (the expert; ``temperature`` and ``epsilon`` soften it), the deck
    uniformly; the playout scores are averaged with the samples' importance weights (a position
    built by hand, whose history cannot be replayed, gets the uniform belief samples). The
    playout score weighs the margin only as a tie-break by default (``margin_weight=0.01``: 100
    points of margin count as 1/100 of a win), so the bot optimises its win share.

    Args:
        seed, determinizations (default 32), candidates, window, margin_weight, whole_turn, rules,
            rule options: as :class:`RolloutBot`.
        temperature: the opponent model's softmax temperature in margin points (0: the expert
            exactly, a filter).
        epsilon: share of the uniform legal action mixed into the opponent model, in [0, 1).

    Raises:
        ConfigError: an option outside its legal values (the message names them), or ``act``
            called without ``belief``.
    """

    def __init__(self, seed: Optional[int] = None, determinizations: int = 32, candidates: int = 4,
                 window: float = 30.0, margin_weight: float = 0.01, whole_turn: bool = False,
                 temperature: float = 0.0, epsilon: float = 0.05, rules: Optional[Config] = None,
                 **options: Any) -> None:
        super().__init__(seed, determinizations=determinizations, candidates=candidates, window=window,
                         margin_weight=margin_weight, whole_turn=whole_turn, rules=rules, **options)
        self.model = ExpertModel(self.rules, temperature=temperature, epsilon=epsilon)
        self._cache: dict = {}

    def reset(self, seed: Optional[int] = None) -> None:
        """Start a new game (clears the likelihood cache); reseeds as :meth:`RolloutBot.reset`."""
        super().reset(seed)
        self._cache = {}

    def _determinizations(self, observation: Observation, belief: BeliefSampler):
        """``determinizations`` pairs ``(state, importance weight)`` from the posterior
        (:class:`hod.agents.robada_inference.InferenceBelief`)."""
        base = belief(self.rng)
        self._check_rules(base.config)
        if len(self._cache) > 200_000:
            self._cache = {}
        try:
            inference = InferenceBelief(base, base.current, self.model, self._cache)
        except ValueError:  # a position built by hand, with no history to replay: uniform samples
            yield base, 1.0
            for _ in range(self.determinizations - 1):
                yield belief(self.rng), 1.0
            return
        for _ in range(self.determinizations):
            yield inference.draw(self.rng)
