"""Kuhn poker's bots, registered for the game by this module (entry-point group ``hod.bots``:
``kuhn = "kuhn_env.bots:BOTS"``, read by :mod:`hod.agents.registry`): ``random`` and ``nash``.

``nash`` plays the equilibrium family of kuhn_env/RULES.md K5 (Kuhn 1950): as the first player
(seat 0) with the parameter ``alpha`` in [0, 1/3] (default 0), as the second the unique
equilibrium strategy. Against any strategy of the second player it earns at least -1/18 per game
as seat 0 and at least +1/18 as seat 1, the value of the game. It decides from the seat's
observation dict only (:func:`kuhn_env.rules.observation.decode`) and draws its mixed actions
from its own seeded generator. Bots floor: it imports nothing from the adapters.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Optional

import numpy as np

from hod.agents.base import BeliefSampler, Bot, Observation, legal_actions
from hod.core.errors import ConfigError
from kuhn_env.rules.engine import BET, JACK, KING, NOOP, NUM_ACTIONS, PASS, QUEEN
from kuhn_env.rules.observation import decode

#: Probability of ``bet`` (a bet or a call) by (seat, history so far, card), K5; seat 0's use
#: ``alpha`` (filled in by :func:`bet_probability`).
_SECOND = {
    (PASS,): {JACK: Fraction(1, 3), QUEEN: Fraction(0), KING: Fraction(1)},       # after a check: bet
    (BET,): {JACK: Fraction(0), QUEEN: Fraction(1, 3), KING: Fraction(1)},        # facing a bet: call
}


#: The histories (action ids so far) after which a seat decides, K2: the opening, after a check,
#: facing a bet, and facing a bet after one's own check.
DECISION_HISTORIES = ((), (PASS,), (BET,), (PASS, BET))


def bet_probability(history: tuple, card: int, alpha: Fraction | float = 0) -> Fraction | float:
    """The equilibrium probability (K5) of ``bet`` for the seat to act after ``history`` (a tuple
    of action ids) holding ``card``; ``alpha`` in [0, 1/3] is the first player's parameter. Exact
    (a Fraction) when ``alpha`` is.

    Raises:
        ConfigError: a ``card`` that is not a Jack, Queen or King (0, 1, 2), or a ``history`` after
            which nobody acts (the game is over, or not a history of Kuhn poker, K2); the legal
            values are named.
    """
    if card not in (JACK, QUEEN, KING) or isinstance(card, bool):
        raise ConfigError(f"card={card!r}; legal values: {JACK} (Jack), {QUEEN} (Queen), {KING} (King)")
    if history not in DECISION_HISTORIES:
        raise ConfigError(f"history {list(history)}: nobody acts after it (kuhn_env/RULES.md K2); legal: the "
                          f"histories of a decision, {[list(h) for h in DECISION_HISTORIES]}")
    if history == ():
        return {JACK: alpha, QUEEN: 0 * alpha, KING: 3 * alpha}[card]
    if history in _SECOND:
        return _SECOND[history][card]
    if history == (PASS, BET):                       # seat 0, facing a bet after its check: call
        return {JACK: 0 * alpha, QUEEN: alpha + Fraction(1, 3), KING: 1 + 0 * alpha}[card]
    raise ConfigError(f"history {list(history)}: the game is over, nobody acts (kuhn_env/RULES.md K2)")


class NashBot(Bot):
    """The equilibrium strategy of Kuhn poker (K5), ``alpha`` the first player's parameter.

    Args:
        seed: its generator's seed (the mixed actions).
        alpha: in [0, 1/3] (default 0); read only when it plays seat 0.

    Raises:
        ConfigError: ``alpha`` outside [0, 1/3] or not a number; an unknown option
            (:class:`hod.core.errors.UnknownOptionError`, the legal ones named).
    """

    name = "nash"

    def __init__(self, seed: Optional[int] = None, alpha: float = 0.0, **options) -> None:
        super().__init__(seed, **options)   # an unknown option: UnknownOptionError naming seed and alpha
        if (isinstance(alpha, (bool, np.bool_)) or not isinstance(alpha, (int, float, Fraction, np.integer, np.floating))
                or not 0 <= alpha <= Fraction(1, 3)):   # nan fails the comparison
            raise ConfigError(f"alpha={alpha!r} is not allowed; legal values: numbers in [0, 1/3]")
        # numpy scalars as Python numbers (a Fraction or an int stays exact)
        self.alpha = int(alpha) if isinstance(alpha, np.integer) else float(alpha) if isinstance(alpha, np.floating) else alpha

    def probabilities(self, observation: Observation) -> np.ndarray:
        """float64 (3,): the probability of each action (pass, bet, no-op) in this position; a
        seat not to act (its mask allows only ``no-op``) plays ``no-op``."""
        p = np.zeros(NUM_ACTIONS)
        mask = np.asarray(observation["action_mask"])
        legal_actions(observation)   # an empty mask is refused (it used to be answered with no-op)
        if not mask[PASS] and not mask[BET]:
            p[NOOP] = 1.0
            return p
        view = decode(observation["observation"])
        b = float(bet_probability(view.history, view.card, self.alpha))
        p[BET], p[PASS] = b, 1.0 - b
        return p

    def act(self, observation: Observation, belief: Optional[BeliefSampler] = None) -> int:
        p = self.probabilities(observation)
        if p[NOOP]:
            return NOOP
        return BET if self.rng.random() < p[BET] else PASS


#: The registry's table for Kuhn poker (registry name -> factory or ``"module:attr"``).
BOTS = {"random": "hod.agents.base:RandomBot", "nash": NashBot}
