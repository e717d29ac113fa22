"""Pieces shared by both games' environments; nothing here knows any game's rules.

``errors`` (exceptions and option checks), ``options`` (validation of the env options shared by
both games: render mode, reward scheme, illegal-action mode, max_cycles, seeds), ``env_support``
(end-of-game infos and forfeits shared by the PettingZoo adapters), ``rewards`` (reward schemes,
one game and batched), ``layout`` (named pieces of flat observations), ``atomic`` (atomic file
writes), ``records`` (JSON game records), ``wrappers`` (the PettingZoo wrapper stack).
"""
