"""The discrete action space of Tapeo: one action per kind of tapa (10 actions).

=========  =====================================================================================
action     meaning (tapeo.txt 'Each pick'; RULINGS T1 for the hams by slice count)
=========  =====================================================================================
0          pick a ``tortilla`` from the hand
1          pick a ``croqueta``
2, 3, 4    pick a ``ham1``, ``ham2``, ``ham3`` (a plate of 1, 2 or 3 slices)
5          pick ``prawns``
6          pick ``bread``
7          pick a ``pepper``
8          pick a ``freeloader``
9          pick a ``churro``
=========  =====================================================================================

A pick is legal when the seat's hand holds a tapa of that kind; which copy is taken does not
matter (copies of a kind are identical). The same module name and names as
:mod:`robada_env.rules.actions`: ``NUM_ACTIONS``, ``ACTION_NAMES``, :func:`action_name`.
"""
from __future__ import annotations

from .cards import KIND_NAMES, NUM_KINDS, kind_name

#: Size of the Discrete action space (one per kind).
NUM_ACTIONS = NUM_KINDS
#: Readable name of each action, in action order.
ACTION_NAMES: tuple[str, ...] = KIND_NAMES


def action_name(a: int) -> str:
    """Readable name of action ``a`` (the kind it picks), e.g. ``action_name(2) == "ham1"``.

    Raises:
        ConfigError: ``a`` is not in ``0..NUM_ACTIONS-1`` (the legal values are named).
    """
    return kind_name(a)
