"""Tapeo's rules (floor 1): pure numpy, no gymnasium or PettingZoo. The declaration is
:data:`tapeo_env.rules.game.GAME`.
"""
