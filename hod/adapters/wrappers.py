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

    def render(self):
        """The raw env's render, also before ``reset()`` (it shows ``(no game: call reset())``,
        as the raw and Parallel envs do; PettingZoo's wrapper would raise instead)."""
        if not self._has_reset:
            return self.env.render()
        return super().render()


def wrap_aec(raw):
    """Compose the AEC wrapper over a raw env: order enforcing (:class:`ResetEnforcingWrapper`,
    which raises ``ResetNeededError`` where PettingZoo's only warns).

    No ``AssertOutOfBoundsWrapper``: the raw env checks every action itself, with the one check
    of both games (:func:`hod.core.errors.action_id`), so that an out-of-range or ill-typed
    action (``10``, ``1.0``, ``"0"``, an array, ``None`` for a live agent) is an illegal action
    under ``illegal_action`` (a loss with ``"lose"``, an ``IllegalActionError`` naming the legal
    actions with ``"raise"``), in the AEC and Parallel forms alike, rather than a bare
    ``AssertionError`` that ``python -O`` would skip. The raw env should have been built with
    ``illegal_action="lose"`` (what ``env()`` does).
    """
    return ResetEnforcingWrapper(raw)
