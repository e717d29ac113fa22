"""Bots for both games behind one protocol (:class:`hod.agents.base.Bot`), and their registry."""
from .base import Bot, RandomBot, legal_actions
from .registry import GAMES, make, names, needs_belief, register

__all__ = ["Bot", "RandomBot", "legal_actions", "GAMES", "make", "names", "needs_belief", "register"]

from . import robada_bots, robada_search, tapeo_bots  # noqa: E402,F401  (register "greedy", "expert", "rollout")

from .onnx_policy import register_shipped_opponents as _register_shipped_opponents  # noqa: E402

_register_shipped_opponents()  # "ppo" opponents exported under agents/opponents/, when present
