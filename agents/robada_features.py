"""Plan features of Ronda Robada: what the expert's one-turn planner thinks of each action.

A learned policy that sees only the raw observation (layout ``robada`` v1, 192 floats) has to
rediscover how a run unfolds, which piles it reaches and what the next seats can do with the
table it leaves; behaviour cloning of :class:`hod.agents.robada_bots.ExpertBot` from the raw
observation reaches only ~87% agreement. The ``robada_plans`` observation encoder
(:mod:`hod.agents.encoders`) appends, for every action, the numbers the expert's planner computes
for it, so the network starts from the expert's judgement and learns where to depart from it.

For each action ``a`` of the 27 (``robada_env.rules.actions``), among the plans that start with ``a``
(:meth:`ExpertBot.plans`: every way to finish the turn), the one the expert values most gives
five features (points in margin points, i.e. my points minus the others' mean, divided by
:data:`SCALE`):

====  ==========================================================================================
k     feature of action ``a`` (index ``27 * k + a`` of the appended block)
====  ==========================================================================================
0     value of the best plan (:meth:`ExpertBot.evaluate`: gain - damage + follow-up) / SCALE
1     its gain this turn / SCALE
2     expected damage of the next seats' replies (weighted per seat, ``Plan.damage``) / SCALE
3     my expected best run next turn after those replies (``Plan.follow``) / SCALE
4     1 if ``a`` is a best action of the expert (all of them on an exact tie), else 0
====  ==========================================================================================

Actions without a plan (illegal ones, the no-op) get 0 in rows 0-3. When only one action is
legal nothing is planned: rows 0-3 are 0 and row 4 marks that action. The features are a pure
function of the observation and the mask (the expert decides from the observation alone), so
they add no information a seat does not have (hidden-information invariance holds).

The planner plays the table's rules: ``rules`` (a :class:`robada_env.rules.engine.Config`, default
the published rules) reaches every run rule the expert uses (:mod:`robada_env.rules.runs`). The
encoder ``robada_plans`` passes the table's rule options (``Encoder.with_rules``).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from robada_env.rules.actions import NUM_ACTIONS
from robada_env.rules.engine import Config
from robada_env.rules.observation import LAYOUT, decode

from .robada_bots import _EPS, ExpertBot, _check_planned

#: Margin points per feature unit.
SCALE = 100.0
#: Features per action.
PER_ACTION = 5
#: Length of the appended block: 5 x 27 = 135.
SIZE = PER_ACTION * NUM_ACTIONS

#: One planner per rules (the expert's plans and values depend only on the observation and the
#: rules; its generator is never drawn from here).
_PLANNERS: dict = {}


def _planner(rules: Optional[Config]) -> ExpertBot:
    key = Config() if rules is None else rules
    bot = _PLANNERS.get(key)
    if bot is None:
        bot = _PLANNERS[key] = ExpertBot(seed=0, rules=key)
    return bot


def plan_features(observation: np.ndarray, action_mask: np.ndarray, rules: Optional[Config] = None) -> np.ndarray:
    """The plan features of one decision.

    Args:
        observation: float32 (192,), layout ``robada`` v1 (:mod:`robada_env.rules.observation`).
        action_mask: int8 (27,), nonzero = legal.
        rules: the table's rules (default: the published rules; ``num_players`` unused).

    Returns:
        float32 (135,): feature ``k`` of action ``a`` at index ``27 * k + a`` (table above).

    Raises:
        ValueError: wrong shapes (the expected ones are named), a mask that allows nothing, or
            a vector that is not a Ronda Robada observation (no player count set; from
            :func:`robada_env.rules.observation.decode`).
        RulesMismatchError: a plan of the planner is not in the mask (``rules`` differ from the
            table's, :class:`hod.agents.robada_bots.RulesMismatchError`).
    """

    obs = np.asarray(observation, np.float32)
    mask = np.asarray(action_mask)
    if obs.shape != (LAYOUT.size,) or mask.shape != (NUM_ACTIONS,):
        raise ValueError(f"expected observation ({LAYOUT.size},) and action_mask ({NUM_ACTIONS},); "
                         f"got {obs.shape} and {mask.shape}")
    legal = np.flatnonzero(mask).tolist()
    if not legal:
        raise ValueError("the action mask allows no action")
    out = np.zeros((PER_ACTION, NUM_ACTIONS), np.float32)
    if len(legal) == 1:
        out[4, legal[0]] = 1.0
        return out.reshape(-1)
    view = decode(obs)
    planner = _planner(rules)
    best: dict[int, object] = {}
    for plan in planner.plans(view, legal):
        _check_planned(planner, plan.action, legal)
        planner.evaluate(view, plan)
        cur = best.get(plan.action)
        if cur is None or plan.value > cur.value:
            best[plan.action] = plan
    top = max(p.value for p in best.values())
    for a, p in best.items():
        out[:4, a] = (p.value / SCALE, p.gain / SCALE, p.damage / SCALE, p.follow / SCALE)
        out[4, a] = 1.0 if p.value >= top - _EPS else 0.0
    return out.reshape(-1)


def plan_features_batch(observations: np.ndarray, action_masks: np.ndarray,
                        rules: Optional[Config] = None) -> np.ndarray:
    """:func:`plan_features` of M decisions: float32 (M, 135) for observations float32 (M, 192)
    and masks (M, 27) (one row at a time: one planner kernel call per row), under ``rules``.

    Raises:
        ValueError: not two 2-D arrays with the same M, or any row :func:`plan_features` refuses.
    """
    obs = np.asarray(observations, np.float32)
    masks = np.asarray(action_masks)
    if obs.ndim != 2 or masks.ndim != 2 or len(obs) != len(masks):
        raise ValueError(f"expected observations (M, 192) and action_masks (M, 27); got {obs.shape} and {masks.shape}")
    out = np.empty((len(obs), SIZE), np.float32)
    for i in range(len(obs)):
        out[i] = plan_features(obs[i], masks[i], rules)
    return out
