"""Tapeo baseline bots: ``greedy`` (best immediate points) and ``expert`` (the strategy of the rule
text, tapeo.txt 'Tips and strategy', as an expected-value scorer over the legal actions).

Both decide from the seat's observation dict only, score every tapa with the scoring numbers of
:mod:`tapeo_env.rules.scoring` (the one source of truth: nothing is re-implemented here), and break
ties with their own seeded generator. The greedy bot scores in Python
(:func:`immediate_gains` of the decoded observation); the expert's scorer is compiled
(:mod:`hod.agents.tapeo_expert_kernels`, one row in :meth:`ExpertBot.act`, a whole batch in
:meth:`ExpertBot.act_batch`; its first, Python form is the test oracle
``tests/oracles/tapeo_expert_scalar.py``). This module registers them for the game (:data:`BOTS`):
``agents.make("tapeo", "greedy", seed=0)`` and ``agents.make("tapeo", "expert", seed=0)``.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from tapeo_env.rules.cards import (BREAD, CHURRO, CROQUETA, HAM_KINDS, HAM_SLICES, NUM_KINDS, PEPPER, PRAWNS,
                             TORTILLA)
from tapeo_env.rules.observation import ObsView, decode
from tapeo_env.rules.scoring import (DEFAULT_RULINGS, Rulings, churro_points, croqueta_points, ham_points, pepper_points,
                               prawn_points, tortilla_points)

from . import tapeo_expert_kernels as _batch
from hod.core.errors import ConfigError

from .base import BeliefSampler, Bot, Observation, legal_actions

__all__ = ["immediate_gains", "GreedyBot", "ExpertParams", "ExpertBot", "RankingBot", "BEST_RANKING"]

_EPS = 1e-9


def immediate_gains(view: ObsView, seat: int = 0, rulings: Rulings = DEFAULT_RULINGS,
                    kinds: Optional[np.ndarray] = None) -> np.ndarray:
    """Immediate points of each kind for one seat: how much that seat's score would change if a
    tapa of the kind joined its bar now and the round (for churros: the game) ended at once.

    Args:
        view: decoded observation (:func:`tapeo_env.rules.observation.decode`); seats seat-relative.
        seat: the seat-relative index of the seat valued (0 = the observer, 1 = its left
            neighbour, ...).
        rulings: scoring numbers (:class:`tapeo_env.rules.scoring.Rulings`).
        kinds: the kinds to value (default: all); the other entries are left at 0.

    Returns:
        float64 (NUM_KINDS,), one entry per kind (= action). Rules (tapeo.txt 'How each tapa
        scores', 'End'; RULINGS T2-T5, T9), every one computed by calling :mod:`tapeo_env.rules.scoring`
        on the bars with and without the tapa:

        * tortilla, croqueta, prawns, bread: change of :func:`tortilla_points`,
          :func:`croqueta_points`, :func:`prawn_points` (a bread counts only if it dips a prawns);
        * ham1/2/3: change of the seat's :func:`ham_points` majority prize against every bar now;
        * pepper: change of the seat's :func:`pepper_points` against every bar now (a third pepper
          costs 6 when it makes the seat the table's maximum, T5);
        * churro: change of the seat's end-of-game :func:`churro_points` if the game ended with
          the churros held now (kept + on the bars);
        * freeloader: 0 (it is worth nothing by itself).
    """
    want = [True] * NUM_KINDS if kinds is None else [False] * NUM_KINDS
    if kinds is not None:
        for k in kinds:
            want[k] = True
    bars = view.bars
    row = bars[seat]
    out = np.zeros(NUM_KINDS, np.float64)
    t, c, p, b = int(row[TORTILLA]), int(row[CROQUETA]), int(row[PRAWNS]), int(row[BREAD])
    out[TORTILLA] = tortilla_points(t + 1, rulings) - tortilla_points(t, rulings)
    out[CROQUETA] = croqueta_points(c + 1, rulings) - croqueta_points(c, rulings)
    out[PRAWNS] = prawn_points(p + 1, b, rulings) - prawn_points(p, b, rulings)
    out[BREAD] = prawn_points(p, b + 1, rulings) - prawn_points(p, b, rulings)
    if want[HAM_KINDS[0]] or want[HAM_KINDS[1]] or want[HAM_KINDS[2]]:
        out[list(HAM_KINDS)] = _ham_deltas(bars @ HAM_SLICES, seat, rulings)
    if want[PEPPER]:
        out[PEPPER] = _majority_delta(pepper_points, bars[:, PEPPER], seat, 1, rulings)
    if want[CHURRO]:
        out[CHURRO] = _majority_delta(churro_points, view.churros, seat, 1, rulings)
    return out


@functools.lru_cache(maxsize=1 << 16)
def _cached(rule, counts: tuple, rulings: Rulings) -> tuple:
    """``rule(counts, rulings)`` (a :mod:`tapeo_env.rules.scoring` table rule) as a tuple, memoised:
    the rules are pure and the bots ask the same small count vectors again and again."""
    return tuple(int(x) for x in rule(np.array(counts, np.int64), rulings))


def _majority_delta(rule, counts, seat: int, add: int, rulings: Rulings) -> float:
    """Change of ``seat``'s points under ``rule`` (ham_points, pepper_points, churro_points) when
    ``add`` joins its count."""
    c = [int(x) for x in counts]
    base = _cached(rule, tuple(c), rulings)[seat]
    c[seat] += add
    return float(_cached(rule, tuple(c), rulings)[seat] - base)


def _ham_deltas(slices, seat: int, rulings: Rulings) -> list[float]:
    """Change of ``seat``'s :func:`ham_points` when a ham1 / ham2 / ham3 plate joins its slices."""
    return [_majority_delta(ham_points, slices, seat, int(HAM_SLICES[k]), rulings) for k in HAM_KINDS]


def _pick_best(values: np.ndarray, legal: np.ndarray, rng: np.random.Generator) -> int:
    """The legal action of highest value; ties (within 1e-9) broken uniformly with ``rng``."""
    v = values[legal]
    best = legal[v >= v.max() - _EPS]
    return int(best[0]) if best.size == 1 else int(rng.choice(best))


class GreedyBot(Bot):
    """``greedy``: the legal tapa with the best immediate points (:func:`immediate_gains` of the
    observer); ties broken uniformly at random with the bot's seeded generator.

    Decision rules (documented choices where the issue is silent):

    * tortilla/croqueta/prawns/bread/ham/pepper: the increase of the seat's round score if that
      tapa joined its bar now (ham and peppers against every bar as it is now: a third pepper that
      would make the seat the hottest is -4, a ham plate that takes the lead is worth the prize
      swing);
    * churro: the increase of the seat's end-of-game churro points if the game ended now with the
      churros held (kept + this round's);
    * freeloader: 0 (worth nothing by itself; the greedy bot does not predict the steal).

    Args:
        seed: seed of the tie-break generator.
        rulings: the scoring rulings of the game played (default: the published rules).

    Raises:
        ConfigError: ``rulings`` not a :class:`tapeo_env.rules.scoring.Rulings`; the errors of
            :class:`hod.agents.base.Bot` (seed, unknown options).
    """

    game = "tapeo"
    name = "greedy"

    def __init__(self, seed: Optional[int] = None, rulings: Rulings = DEFAULT_RULINGS, **options: Any) -> None:
        if not isinstance(rulings, Rulings):
            raise ConfigError(f"rulings={rulings!r}: legal values are a tapeo_env.rules.scoring.Rulings "
                              f"(default: the published rules)")
        super().__init__(seed=seed, **options)
        self.rulings = rulings

    def act(self, observation: Observation, belief: Optional[BeliefSampler] = None) -> int:
        """The legal kind of highest :meth:`scores` (a forced pick is returned at once); ties are
        broken with the bot's seeded generator."""
        legal = legal_actions(observation)
        if legal.size == 1:
            return int(legal[0])
        return _pick_best(self.scores(observation["observation"], legal), legal, self.rng)

    def scores(self, observation: np.ndarray, legal: np.ndarray) -> np.ndarray:
        """Immediate points of each kind for the observer, float64 (NUM_KINDS,)
        (:func:`immediate_gains` of the decoded float32 (157,) ``observation``; ``legal`` unused)."""
        return immediate_gains(decode(observation), 0, self.rulings)


@dataclass(frozen=True)
class ExpertParams:
    """Weights of the expert's expected-value scorer (tuned by seeded tournaments, see the report
    in the project note). Every weight is a plain number of points or a probability.

    Attributes:
        take_rate: chance the expert takes a wanted kind from a later hand that holds one (it
            competes with its other needs); the automatic last tapa is always taken.
        pair_cost: points a later pick is worth anyway; a started pair gains ``5 - pair_cost``
            when finished (that pick could have scored something else).
        commit: share of the croquetas expected to come that the expert counts on when it values
            a croqueta (committing: 'One or two barely count').
        bread_weight: share of the 3 points of a dip counted for a bread with no prawns to dip.
        ham_now: weight of the ham prize change against the bars now; the rest goes to the bars
            projected to the end of the round.
        churro_base: points of a churro in rounds 1 and 2 (by round), before the end standing
            takes over; churro_now: weight of the standing now in those rounds.
        deny: weight of the left neighbour's loss, by player count (index n - 2): what they can
            no longer take from the hand passed left, and what a Freeloader takes from them.
        freeloader_unknown: value of a Freeloader at the first pick, when the left hand is unseen.
    """

    take_rate: float = 0.55
    pair_cost: float = 3.5
    commit: float = 0.8
    bread_weight: float = 0.6
    ham_now: float = 0.5
    churro_base: tuple[float, float] = (1.2, 1.8)
    churro_now: tuple[float, float] = (0.3, 0.5)
    deny: tuple[float, ...] = (1.1, 0.45, 0.35, 0.3, 0.25)
    freeloader_unknown: float = 2.5


class ExpertBot(GreedyBot):
    """``expert``: a rule-based player following tapeo.txt 'Tips and strategy', built as an
    expected-value scorer: each legal tapa gets points = what it scores now + what it is expected to
    score by the end of the round (or game, for churros) + what it denies the left neighbour, and
    the best is picked (seeded tie-break). The weights are :class:`ExpertParams`.

    What it uses, all from the observation: its hand and bar, every bar, churros held, the hands it
    has already held this round (known exactly), the unseen tapas, the picks left in the round.
    From these it estimates, for each kind, the share of that kind among the tapas still going
    round (known hands exactly, unseen hands by the unseen counts) and so the chance that a later
    hand reaching it holds one.

    Decision rules:

    1. **Immediate points** are those of :func:`immediate_gains` (the greedy bot's values): a
       second tortilla, prawns, a croqueta, a ham plate against the bars now, a safe pepper.
    2. **Start pairs early, finish late** ('Start what you can finish'): a tortilla that starts a
       pair is worth ``(5 - pair_cost) * P(another tortilla reaches it and it takes it)``; a bread
       with no prawns to dip is worth ``3 * bread_weight * P(prawns come)``. At the **last decision
       of a round** (two tapas in hand) only what scores already counts: the immediate points
       against the bar plus the one tapa still to come, the one the right neighbour leaves of the
       two-tapa hand it holds (known; the right neighbour is modelled as greedy). So a lone
       tortilla is taken at the last pick only if that tapa is a tortilla.
    3. **Commit to croquetas**: a croqueta is worth ``f(c + 1 + X) - f(c + X)`` where ``f`` is the
       croqueta table (interpolated), ``c`` its croquetas and ``X = commit * (croquetas expected
       to come)``; so the second, third... croqueta is worth more than the first.
    4. **Peppers**: two are safe (2 each); a third or later only when another seat already holds
       more than it would (then it cannot be the hottest), else it is worth ``2 - 6``, via
       :func:`pepper_points` on the bars now.
    5. **Majorities across all bars** (ham, churros): a ham plate is valued by the change of its
       ham prize, half against the bars now and half against the bars projected to the end of the
       round (each seat gains its share of the ham still going round); a churro by the change of
       its end-of-game churro points: in the last round against the churros projected to the round's
       end ('in the last round nobody wants to be left with none'), in earlier rounds a blend of a
       fixed value ``churro_base`` and the standing now.
    6. **Deny the left neighbour** ('what you do not pick ... the player on your left gets to eat'):
       the left neighbour is modelled as greedy on the hand passed to it; taking the tapa it wants
       most adds ``deny[n - 2] * (its best gain from the whole hand - its best gain from the hand
       without this tapa)``.
    7. **The Freeloader** ('think about the hand you pass to your left'): it steals what the left
       neighbour reveals this pick, predicted as its greedy choice from the hand it holds now (known
       after the first pick: the expert passed it). The Freeloader is worth the expert's own value of
       that tapa plus ``deny[n - 2]`` times the neighbour's loss; 0 if the neighbour would reveal a
       Freeloader (T6); ``freeloader_unknown`` at the first pick.

    In batch: :meth:`act_batch` decides many observations at once with the same values (the scorer
    compiled, :mod:`hod.agents.tapeo_expert_kernels`); the learner env's opponents
    (:class:`hod.agents.batch_policies.BotPolicy`) and the playout value
    (:class:`hod.evaluation.luck_playout.LineupPlayoutValue`) use it.

    Args:
        seed: seed of the tie-break generator.
        params: the :class:`ExpertParams` (default: the tuned weights).
        rulings: the scoring rulings of the game played (default: the published rules).

    Raises:
        ConfigError: ``params`` neither None nor an :class:`ExpertParams`, ``rulings`` not a
            :class:`tapeo_env.rules.scoring.Rulings`; the errors of :class:`hod.agents.base.Bot`.
    """

    game = "tapeo"
    name = "expert"
    #: The method of the scorer :mod:`hod.agents.tapeo_expert_kernels` compiles: a subclass that
    #: overrides it decides its batches row by row with its own (:meth:`act_batch`).
    _SCORER = ("scores",)

    def __init__(self, seed: Optional[int] = None, params: Optional[ExpertParams] = None,
                 rulings: Rulings = DEFAULT_RULINGS, **options: Any) -> None:
        if params is not None and not isinstance(params, ExpertParams):
            raise ConfigError(f"params={params!r}: legal values are None or an ExpertParams")
        super().__init__(seed=seed, rulings=rulings, **options)
        self.params = params if params is not None else ExpertParams()
        self._arrays: Optional[tuple] = None

    # -- in batch -----------------------------------------------------------------------------

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """The expert's decisions for a batch of observations (one seat each, any mix of table
        sizes), legal actions only: the rule of :meth:`act` (tapeo.txt 'Tips and strategy', the
        class docstring's rules 1-7) with every row's :meth:`scores` computed at once by the
        compiled scorer (:func:`hod.agents.tapeo_expert_kernels.expert_values`, as :meth:`scores`
        computes one row).

        A row with one legal action gets it. Otherwise the legal kind of highest value; a tie
        (within 1e-9) is broken uniformly at random with the bot's own generator :attr:`rng`: one
        draw ``rng.integers(0, k)`` per tied row (k the tied kinds), all in one call. So each
        decision has the distribution :meth:`act` gives it, but the draws are not those of a loop
        of :meth:`act` over the rows (which draws with ``rng.choice`` row by row): a batch and the
        same rows one by one may break ties differently, with the same seed.

        Args:
            observations: float32 (G, 157), each row a Tapeo observation (layout v1,
                docs/tapeo_env.md) of the seat to act.
            action_masks: int8 (or bool) (G, 10), each row that seat's legal kinds.

        Returns:
            int64 (G,): one kind (= action) per row, legal in its mask.

        Raises:
            ConfigError (a ValueError): not numpy arrays, another ndim, width or dtype, a different
                number of rows, a row with no legal action or with no player count set; the
                message names the legal shapes and dtypes or the first bad row. Nothing is drawn
                then: the bot's generator is left as it was.
        """
        obs, masks = _batch.check_batch(observations, action_masks)
        g = obs.shape[0]
        if g == 0:
            return np.empty(0, np.int64)
        legal = masks != 0
        forced = legal.sum(axis=1) == 1
        if all(getattr(type(self), m) is getattr(ExpertBot, m) for m in self._SCORER):
            values = _batch.expert_values(obs, masks, *self._batch_arrays())
        else:                                   # a subclass with a scorer of its own
            values = np.zeros((g, NUM_KINDS))
            for r in np.flatnonzero(~forced):
                values[r] = self.scores(obs[r], np.flatnonzero(masks[r]))
        v = np.where(legal, values, -np.inf)
        tied = legal & (v >= v.max(axis=1, keepdims=True) - _EPS)
        loose = forced | ~tied.any(axis=1)      # (the second: no value to compare, never seen)
        tied[loose] = legal[loose]
        count = tied.sum(axis=1)
        nth = np.zeros(g, np.int64)
        multi = np.flatnonzero(count > 1)
        if multi.size:
            nth[multi] = self.rng.integers(0, count[multi])
        return np.argmax(np.cumsum(tied, axis=1) > nth[:, None], axis=1).astype(np.int64)

    def _batch_arrays(self) -> tuple:
        """The rulings and weights as the compiled scorer reads them
        (:func:`~hod.agents.tapeo_expert_kernels.rulings_arrays`,
        :func:`~hod.agents.tapeo_expert_kernels.params_array`), kept while both are the same."""
        arrays = getattr(self, "_arrays", None)        # (absent from a bot unpickled from an older version)
        if arrays is None or arrays[0] is not self.rulings or arrays[1] is not self.params:
            self._arrays = (self.rulings, self.params,
                            _batch.rulings_arrays(self.rulings) + (_batch.params_array(self.params),))
        return self._arrays[2]

    # -- the scorer ---------------------------------------------------------------------------

    def scores(self, observation: np.ndarray, legal: np.ndarray) -> np.ndarray:
        """Expected value (points) of each kind for the observer, float64 (NUM_KINDS,), only the
        entries of ``legal`` meaningful: the rules of the class docstring, computed by the compiled
        scorer (:func:`hod.agents.tapeo_expert_kernels.expert_values`, one row; its first, Python
        form is the test oracle ``tests/oracles/tapeo_expert_scalar.py``, equal bit for bit).

        Args:
            observation: float32 (157,), the seat's Tapeo observation (layout v1).
            legal: the legal kinds (int array, at least one).

        Raises:
            ConfigError: not one observation of that shape, entries outside the layout's bounds
                (NaN and infinities included), no player count set, or no legal kind
                (:func:`hod.agents.tapeo_expert_kernels.check_batch`; the message names them).
        """
        mask = np.zeros((1, NUM_KINDS), np.int8)
        mask[0, legal] = 1
        obs, mask = _batch.check_batch(np.asarray(observation, np.float32)[None], mask)   # ConfigError if not one
        return _batch.expert_values(obs, mask, *self._batch_arrays())[0]


#: The fixed order of :class:`RankingBot` (best first): of the orders met by
#: ``python -m hod.benchmarks.ranking_search`` (iterated best responses among fixed orders, from
#: the order the demo's policy had collapsed to) and the orders of trained policies, the only one
#: that beats every other in a round robin at 2 and 4 players (docs/training.md 'The ranking bot').
BEST_RANKING: tuple[str, ...] = ("freeloader", "prawns", "ham3", "tortilla", "ham2", "croqueta", "bread", "churro",
                                 "pepper", "ham1")


class RankingBot(Bot):
    """``ranking``: always the legal kind that comes first in one fixed order, whatever the state.

    It is the strongest policy that ignores its observation (the default order is the best one a
    search found, :data:`BEST_RANKING`), so a trained policy that cannot beat it has learned no
    more than a list. Deterministic (the seed is unused).

    Args:
        seed: unused (kept for the bot protocol).
        order: the ten kind names (or indices), best first; default :data:`BEST_RANKING`.

    Raises:
        ConfigError: ``order`` is not a permutation of the ten kinds.
    """

    game = "tapeo"
    name = "ranking"

    def __init__(self, seed: Optional[int] = None, order: Optional[Any] = None, **options: Any) -> None:
        from tapeo_env.rules.cards import KIND_NAMES, kind_index

        super().__init__(seed=seed, **options)
        order = BEST_RANKING if order is None else order
        kinds = [kind_index(k) if isinstance(k, str) else int(k) for k in order]
        if sorted(kinds) != list(range(NUM_KINDS)):
            raise ConfigError(f"order={list(order)!r} must list each of the {NUM_KINDS} kinds once; "
                              f"legal values: permutations of {list(KIND_NAMES)}")
        self.order = np.asarray(kinds, np.int64)
        self.priority = np.empty(NUM_KINDS, np.int64)
        self.priority[self.order] = np.arange(NUM_KINDS)[::-1]   # higher = preferred

    def act(self, observation: Observation, belief: Optional[BeliefSampler] = None) -> int:
        legal = legal_actions(observation)
        return int(legal[np.argmax(self.priority[legal])])


#: Tapeo's bots, registered for the game by this module (entry-point group ``hod.bots``:
#: ``tapeo = "hod.agents.tapeo_bots:BOTS"``, read by :mod:`hod.agents.registry`): registry name ->
#: factory, or the ``"module:attr"`` of one in another module (imported when that bot is made).
BOTS = {
    "random": "hod.agents.base:RandomBot",
    "greedy": GreedyBot,
    "expert": ExpertBot,
    "ranking": RankingBot,
    "search": "hod.agents.tapeo_search:SearchBot",
}
