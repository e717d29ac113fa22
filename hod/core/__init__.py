"""Floor 0, the shared core: errors, atomic writes, observation layouts, reward schemes, JSON
records, and the game declarations (:mod:`hod.core.games`). Nothing here knows a game's rules or
imports gymnasium, PettingZoo or torch.
"""
