"""Bots for both games behind one protocol (:class:`hod.agents.base.Bot`), and their registry.

``agents.make(game, name, seed=...)`` builds any bot registered for the game by its bot module (the
entry-point group ``hod.bots``, :mod:`hod.agents.registry`), a shipped trained opponent
(``"ppo"``) or a bot registered with :func:`register`; a bot named by a ``"module:attr"`` string
has its module imported when a bot of that name is made.
"""
from .base import Bot, RandomBot, check_player_count, legal_actions
from .registry import factory, make, names, needs_belief, player_counts, register
from .strength import strength

__all__ = ["Bot", "RandomBot", "check_player_count", "legal_actions", "factory", "make", "names", "needs_belief",
           "player_counts", "register", "strength"]
