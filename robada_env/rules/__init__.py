"""Ronda Robada's rules (floor 1): pure numpy, no gymnasium or PettingZoo. The declaration is
:data:`robada_env.rules.game.GAME`.
"""
