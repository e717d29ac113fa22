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

from hod.agents.base import BeliefSampler, Bot, Observation, check_observation, legal_actions
from hod.core.errors import ConfigError
from kuhn_env.rules.engine import BET, JACK, KING, NOOP, NUM_ACTIONS, PASS, QUEEN
from kuhn_env.rules.observation import LAYOUT, ObsView

#: Probability of ``bet`` (a bet or a call) by (seat, history so far, card), K5; seat 0's use
#: ``alpha`` (filled in by :func:`bet_probability`).
_SECOND = {
    (PASS,): {JACK: Fraction(1, 3), QUEEN: Fraction(0), KING: Fraction(1)},       # after a check: bet
    (BET,): {JACK: Fraction(0), QUEEN: Fraction(1, 3), KING: Fraction(1)},        # facing a bet: call
}


#: The histories (action ids so far) after which a seat decides, K2: the opening, after a check,
#: facing a bet, and facing a bet after one's own check.
DECISION_HISTORIES = ((), (PASS,), (BET,), (PASS, BET))
#: The histories that end the game, K2 (pass-pass, bet-pass, bet-bet, pass-bet-pass, pass-bet-bet).
FINAL_HISTORIES = ((PASS, PASS), (BET, PASS), (BET, BET), (PASS, BET, PASS), (PASS, BET, BET))
_LEGAL_HISTORIES = f"the histories of a decision, {[list(h) for h in DECISION_HISTORIES]}"


def _is_int(x: object) -> bool:
    return (type(x) is int or isinstance(x, np.integer)) and not isinstance(x, (bool, np.bool_))


def check_alpha(alpha: object) -> Fraction | float | int:
    """``alpha`` (the first player's parameter of K5) if it is a number in [0, 1/3]: an int, a
    float, a Fraction or a numpy number, which is returned as a Python one (a Fraction or an int
    stays exact).

    Raises:
        ConfigError: anything else (nan, inf, a bool, a string, a number outside [0, 1/3]); the
            legal values are named.
    """
    if (isinstance(alpha, (bool, np.bool_)) or not isinstance(alpha, (int, float, Fraction, np.integer, np.floating))
            or not 0 <= alpha <= Fraction(1, 3)):   # nan fails the comparison
        raise ConfigError(f"alpha={alpha!r} is not allowed; legal values: numbers in [0, 1/3]")
    return int(alpha) if isinstance(alpha, np.integer) else float(alpha) if isinstance(alpha, np.floating) else alpha


def check_history(history: object) -> tuple:
    """``history`` (a tuple or list of action ids) as a tuple of ints if a seat acts after it
    (:data:`DECISION_HISTORIES`, K2).

    Raises:
        ConfigError: not a sequence of action ids, a history that ended the game
            (:data:`FINAL_HISTORIES`: "nobody acts after it"), or no history of Kuhn poker (an
            action other than 0 (pass) and 1 (bet), or actions after the end); the message names
            the legal histories.
    """
    if not isinstance(history, (tuple, list)) or not all(_is_int(a) for a in history):
        raise ConfigError(f"history={history!r}; legal: a tuple of action ids (0 pass, 1 bet), one of "
                          f"{_LEGAL_HISTORIES}")
    h = tuple(int(a) for a in history)
    if h in DECISION_HISTORIES:
        return h
    if h in FINAL_HISTORIES:
        raise ConfigError(f"history {list(h)}: nobody acts after it (the game is over, kuhn_env/RULES.md K2); "
                          f"legal: {_LEGAL_HISTORIES}")
    raise ConfigError(f"history {list(h)}: not a history of Kuhn poker (its actions are 0 (pass) and 1 (bet), and "
                      f"the game ends after {[list(f) for f in FINAL_HISTORIES]}, kuhn_env/RULES.md K2); "
                      f"legal: {_LEGAL_HISTORIES}")


def bet_probability(history: tuple, card: int, alpha: Fraction | float = 0) -> Fraction | float:
    """The equilibrium probability (K5) of ``bet`` for the seat to act after ``history`` (a tuple
    or list of action ids) holding ``card``; ``alpha`` in [0, 1/3] is the first player's
    parameter. Exact (a Fraction) when ``alpha`` is.

    Raises:
        ConfigError: a ``card`` that is not a Jack, Queen or King (the ints 0, 1, 2), a
            ``history`` after which nobody acts (:func:`check_history`: the game is over, or not
            a history of Kuhn poker, K2) or a bad ``alpha`` (:func:`check_alpha`); the legal
            values are named.
    """
    if not _is_int(card) or card not in (JACK, QUEEN, KING):   # 1.0 and True were read as the Queen
        raise ConfigError(f"card={card!r}; legal values: {JACK} (Jack), {QUEEN} (Queen), {KING} (King)")
    history = check_history(history)
    alpha = check_alpha(alpha)
    if history == ():
        return {JACK: alpha, QUEEN: 0 * alpha, KING: 3 * alpha}[card]
    if history in _SECOND:
        return _SECOND[history][card]
    # (PASS, BET): seat 0, facing a bet after its check: call
    return {JACK: 0 * alpha, QUEEN: alpha + Fraction(1, 3), KING: 1 + 0 * alpha}[card]


_SEAT, _CARD, _HISTORY = LAYOUT.offsets["seat"], LAYOUT.offsets["card"], LAYOUT.offsets["history"]
_LEGAL_OBS = ("legal: kuhn_env/RULES.md K4's 11 values in {0, 1}: the seat one-hot (2), the card one-hot (3), "
              "then a pass/bet one-hot per decision taken, in order, zeros after")


def decode_checked(obs: np.ndarray) -> ObsView:
    """The :class:`kuhn_env.rules.observation.ObsView` of an observation (float (11,), K4),
    which must be one the game gives (``decode`` reads any vector: all zeros as seat 0's Jack).

    Raises:
        ConfigError: a value other than 0 and 1, a seat or card piece that is not one-hot, a
            decision with both actions or a decision after one not taken; the legal values named.
    """
    o = np.asarray(obs)
    def bad(what: str) -> ConfigError:
        return ConfigError(f"observation {o.tolist()}: not a Kuhn poker observation, {what}; {_LEGAL_OBS}")
    if not ((o == 0) | (o == 1)).all():
        raise bad("values other than 0 and 1")
    for name, piece in (("seat", _SEAT), ("card", _CARD)):
        if o[piece].sum() != 1:
            raise bad(f"its {name} piece (entries {piece.start}..{piece.stop - 1}) {o[piece].tolist()} is not one-hot")
    h = o[_HISTORY].reshape(-1, 2)
    taken = h.sum(axis=1)
    n = int(np.count_nonzero(taken))
    if (taken > 1).any() or taken[:n].min(initial=1) != 1:
        raise bad(f"its history piece {o[_HISTORY].tolist()} is not one action per decision taken, in order")
    return ObsView(int(np.argmax(o[_SEAT])), int(np.argmax(o[_CARD])), tuple(int(a) for a in np.argmax(h[:n], axis=1)))


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
        self.alpha = check_alpha(alpha)     # numpy scalars as Python numbers (a Fraction or an int stays exact)

    def probabilities(self, observation: Observation) -> np.ndarray:
        """float64 (3,): the probability of each action (pass, bet, no-op) in this position; a
        seat not to act (its mask allows only ``no-op``) plays ``no-op``.

        Raises:
            ValueError: a mask that allows no action (:func:`hod.agents.base.legal_actions`).
            ConfigError: not a Kuhn poker observation dict (:func:`hod.agents.base.check_observation`),
                a mask other than the game's two (``[1, 1, 0]``: the seat acts, ``[0, 0, 1]``: it
                does not), an observation vector the game never gives (:func:`decode_checked`:
                all zeros was played as seat 0's Jack), or a seat to act that is not the one the
                history gives (K2: seat 0 first, then alternately).
        """
        check_observation(observation, self.game)
        legal_actions(observation)   # an empty mask is refused (it used to be answered with no-op)
        mask = np.asarray(observation["action_mask"]) != 0
        acts = bool(mask[PASS] and mask[BET] and not mask[NOOP])
        if not acts and (mask[PASS] or mask[BET]):   # [1, 0, 0] was answered with bet 1/3 of the time
            raise ConfigError(f"action_mask {mask.astype(int).tolist()}: not a Kuhn poker mask; legal: [1, 1, 0] "
                              f"(the seat acts: pass or bet, K2) or [0, 0, 1] (it does not: no-op)")
        view = decode_checked(observation["observation"])
        p = np.zeros(NUM_ACTIONS)
        if not acts:
            p[NOOP] = 1.0
            return p
        if view.seat != len(view.history) % 2:
            raise ConfigError(f"observation of seat {view.seat} with the history {list(view.history)} and a mask to "
                              f"act: seat {len(view.history) % 2} acts after it (kuhn_env/RULES.md K2: seat 0 first, "
                              f"then alternately); legal: the mask [0, 0, 1] for the seat not to act")
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
