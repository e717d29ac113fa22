"""Ronda Robada's rules (floor 1): pure numpy, no gymnasium or PettingZoo. The declaration is
:data:`robada_env.rules.game.GAME`.
"""
from . import engine  # noqa: F401  (first: the engine, then the kernels and the encoder it imports)
