"""PettingZoo wrapper stack and the illegal-action option shared by both games.

Raw environments take ``illegal_action``:

* ``"raise"`` (default for ``raw_env``): an action outside the mask raises
  :class:`~hod.core.errors.IllegalActionError` naming the legal actions; nothing changes.
* ``"lose"`` (PettingZoo's convention, used by ``env()`` and ``parallel_env()``): the offender
  gets :data:`ILLEGAL_REWARD`, every other seat 0, and the game ends for everyone
  (terminations all True); ``infos[agent]["illegal_action"]`` names the offender.

Nothing ever silently accepts an illegal action.
"""
from __future__ import annotations

from pettingzoo.utils import wrappers

ILLEGAL_ACTION_MODES = ("raise", "lose")
ILLEGAL_REWARD = -1.0


def wrap_aec(raw):
    """Compose PettingZoo's standard AEC wrappers over a raw env (bounds check, order enforcing).

    The raw env should have been built with ``illegal_action="lose"``: illegal-move handling is
    done by the env itself so that the AEC and Parallel forms behave the same.
    """
    env = wrappers.AssertOutOfBoundsWrapper(raw)
    env = wrappers.OrderEnforcingWrapper(env)
    return env
