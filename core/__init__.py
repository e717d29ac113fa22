"""Floor 0, the shared core: errors, atomic writes, observation layouts, reward schemes, JSON
records, the game declarations (:mod:`hod.core.games`), the batched-engine protocol
(:mod:`hod.core.engine`) and the numba cache location of compiled kernels (:mod:`hod.core.jit`).
Nothing here knows a game's rules or imports gymnasium, PettingZoo or torch.
"""
