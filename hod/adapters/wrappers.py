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

from hod.core.errors import ResetNeededError

ILLEGAL_ACTION_MODES = ("raise", "lose")
ILLEGAL_REWARD = -1.0
#: Message of :class:`~hod.core.errors.ResetNeededError` before the first ``reset()``.
NOT_STARTED = "step() called before reset(): call reset()"
#: Message of :class:`~hod.core.errors.ResetNeededError` once every agent is done.
GAME_OVER = "the game is over: call reset()"


class ResetEnforcingWrapper(wrappers.OrderEnforcingWrapper):
    """PettingZoo's ``OrderEnforcingWrapper`` whose ``step`` with no game in progress raises
    :class:`~hod.core.errors.ResetNeededError` (a ``ValueError``), as the raw envs do, instead of
    PettingZoo's ``AssertionError`` before ``reset()`` and its mere warning once every agent is
    done: a loop that forgets to reset fails at once rather than stepping a finished game.

    Raises (``step``):
        ResetNeededError: before the first ``reset()`` (:data:`NOT_STARTED`), or once every agent
            is done, the finished agents' ``step(None)`` included (:data:`GAME_OVER`).
    """

    def step(self, action) -> None:
        if not self._has_reset:
            raise ResetNeededError(NOT_STARTED)
        if not self.env.agents:
            raise ResetNeededError(GAME_OVER)
        super().step(action)


def wrap_aec(raw):
    """Compose PettingZoo's standard AEC wrappers over a raw env: bounds check
    (``AssertOutOfBoundsWrapper``) and order enforcing (:class:`ResetEnforcingWrapper`, which
    raises ``ResetNeededError`` where PettingZoo's only warns).

    The raw env should have been built with ``illegal_action="lose"``: illegal-move handling is
    done by the env itself so that the AEC and Parallel forms behave the same.
    """
    env = wrappers.AssertOutOfBoundsWrapper(raw)
    env = ResetEnforcingWrapper(env)
    return env
