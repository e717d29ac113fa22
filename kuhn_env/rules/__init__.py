"""Kuhn poker's rules (floor 1): numpy only, no gymnasium or PettingZoo; one implementation over
a batch of games (:mod:`kuhn_env.rules.engine`). The declaration is
:data:`kuhn_env.rules.game.GAME`; the rules text is ``kuhn_env/RULES.md``.
"""
