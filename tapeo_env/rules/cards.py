"""The tapas: kinds, the deck composition and the hand sizes (tapeo.txt 'Deck', 'The hand and
the bar'; RULINGS T1).

Cards of one kind are identical, so the engine holds hands and bars as count vectors indexed by
kind (int64, shape ``(NUM_KINDS,)``); the dealt order is kept separately for the game record.
The ten kinds are also the ten actions: an action picks one tapa of that kind from the hand, and
hams are told apart by their slice count (``ham1``, ``ham2``, ``ham3``).
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from hod.core.errors import ConfigError

TORTILLA, CROQUETA, HAM1, HAM2, HAM3, PRAWNS, BREAD, PEPPER, FREELOADER, CHURRO = range(10)

#: Readable name of each kind; also the action names and the names used in game records.
KIND_NAMES: tuple[str, ...] = (
    "tortilla", "croqueta", "ham1", "ham2", "ham3", "prawns", "bread", "pepper", "freeloader", "churro",
)
NUM_KINDS = len(KIND_NAMES)
HAM_KINDS = (HAM1, HAM2, HAM3)
#: Slices on a plate of each kind (0 for non-ham kinds), int64 (NUM_KINDS,).
HAM_SLICES = np.array([0, 0, 1, 2, 3, 0, 0, 0, 0, 0], dtype=np.int64)

#: T1: the 84-tapa deck, count per kind in KIND_NAMES order. The 12 hams are 4 plates of 1 slice,
#: 4 of 2 and 4 of 3 (24 slices).
DECK_COMPOSITION: tuple[int, ...] = (14, 14, 4, 4, 4, 10, 8, 10, 6, 10)
DECK_SIZE = sum(DECK_COMPOSITION)  # 84

MIN_PLAYERS, MAX_PLAYERS = 2, 6
#: Cards dealt to each player at the start of every round, by player count.
HAND_SIZES: Mapping[int, int] = {2: 10, 3: 9, 4: 8, 5: 7, 6: 7}
MAX_HAND_SIZE = max(HAND_SIZES.values())


def kind_name(kind: int) -> str:
    """Readable name of a kind (= action), e.g. ``kind_name(2) == "ham1"``.

    Raises:
        ConfigError: ``kind`` is not in ``0..NUM_KINDS-1``.
    """
    if isinstance(kind, bool) or not isinstance(kind, (int, np.integer)) or not 0 <= kind < NUM_KINDS:
        raise ConfigError(f"kind {kind!r} is not a tapa kind; legal values: {list(range(NUM_KINDS))}")
    return KIND_NAMES[int(kind)]


def kind_index(name: str) -> int:
    """Kind index of a readable name (inverse of :func:`kind_name`).

    Raises:
        ConfigError: unknown name (the message lists the names).
    """
    try:
        return KIND_NAMES.index(name)
    except ValueError:
        raise ConfigError(f"unknown tapa {name!r}; legal values: {list(KIND_NAMES)}") from None


def deck_cards(composition: tuple[int, ...] = DECK_COMPOSITION) -> np.ndarray:
    """The deck as a sorted array of kinds (int64, shape ``(sum(composition),)``)."""
    return np.repeat(np.arange(NUM_KINDS, dtype=np.int64), composition)
