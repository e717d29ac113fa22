"""PettingZoo wrapper stack and the illegal-action option shared by both games.

Every environment takes ``illegal_action``:

* ``"raise"``: an action outside the mask raises :class:`~hod.core.errors.IllegalActionError`
  naming the legal actions; nothing changes.
* ``"lose"`` (PettingZoo's convention): the offender gets :data:`ILLEGAL_REWARD`, every other
  seat 0, and the game ends for everyone (terminations all True);
  ``infos[agent]["illegal_action"]`` names the offender.

The default, one rule for both games (docs/DESIGN.md, "Environment contract"): the unwrapped
classes (``raw_env``, ``TapeoParallelEnv``, ``RobadaParallelEnv``) default to
:data:`CLASS_ILLEGAL_ACTION` (``"raise"``), the user-facing factory functions (``env()``,
``parallel_env()``) to :data:`FACTORY_ILLEGAL_ACTION` (``"lose"``, through
:func:`factory_options`); an ``illegal_action`` given explicitly always wins.

Nothing ever silently accepts an illegal action.
"""
from __future__ import annotations

from pettingzoo.utils import wrappers

from hod.core.errors import ResetNeededError

ILLEGAL_ACTION_MODES = ("raise", "lose")
#: ``illegal_action`` default of the unwrapped classes (``raw_env``, ``<Game>ParallelEnv``).
CLASS_ILLEGAL_ACTION = "raise"
#: ``illegal_action`` default of the factory functions ``env()`` and ``parallel_env()``.
FACTORY_ILLEGAL_ACTION = "lose"
ILLEGAL_REWARD = -1.0
#: Message of :class:`~hod.core.errors.ResetNeededError` before the first ``reset()``.
NOT_STARTED = "step() called before reset(): call reset()"
#: Message of :class:`~hod.core.errors.ResetNeededError` once every agent is done.
GAME_OVER = "the game is over: call reset()"


class ResetEnforcingWrapper(wrappers.OrderEnforcingWrapper):
    """PettingZoo's ``OrderEnforcingWrapper`` whose ``step`` with no game in progress raises
    :class:`~hod.core.errors.ResetNeededError` (a ``ValueError``), as the raw envs do, instead of
    PettingZoo's ``AssertionError`` before ``reset()`` and its mere warning once every agent is
    done: a loop that forgets to reset fails at once rather than stepping a finished game. A
    refused ``reset`` leaves the wrapper as it was (not reset if it had never been).

    Raises (``step``):
        ResetNeededError: before the first ``reset()`` (:data:`NOT_STARTED`), or once every agent
            is done, the finished agents' ``step(None)`` included (:data:`GAME_OVER`).
    """

    def reset(self, seed=None, options=None) -> None:
        """The raw env's ``reset``; the wrapper counts as reset only once it succeeded, so a
        refused ``reset`` (a bad seed or options: ``ConfigError``) changes nothing here either
        (PettingZoo's wrapper marks itself reset before calling the env).

        Raises:
            ConfigError: whatever the raw env's ``reset`` refuses (nothing changes).
        """
        self.env.reset(seed=seed, options=options)
        self._has_reset = True
        self._has_updated = True

    def step(self, action) -> None:
        if not self._has_reset:
            raise ResetNeededError(NOT_STARTED)
        if not self.env.agents:
            raise ResetNeededError(GAME_OVER)
        # what PettingZoo's step does once both checks passed, without its attribute forwarding
        self._has_updated = True
        self.env.step(action)

    def last(self, observe: bool = True):
        """The raw env's ``last()`` once reset (the same tuple: the raw env reads its own
        attributes, where PettingZoo's ``AECEnv.last`` on the wrapper forwards each through two
        ``__getattr__`` levels).

        Raises:
            ResetNeededError: before the first ``reset()``, from the raw env (PettingZoo's wrapper
                would raise an AttributeError).
        """
        return self.env.last(observe)

    def observe(self, agent):
        """The raw env's ``observe(agent)``; before the first ``reset()`` it raises
        :class:`~hod.core.errors.ResetNeededError`, as the raw env does (PettingZoo's wrapper
        would raise an ``AssertionError``), and an unknown agent is an
        :class:`~hod.core.errors.UnknownAgentError` naming the legal ones."""
        return self.env.observe(agent)

    def state(self):
        """The raw env's global state (``state()``); before the first ``reset()`` it raises
        :class:`~hod.core.errors.ResetNeededError`, as the raw env does (PettingZoo's wrapper
        would raise an ``AssertionError``)."""
        return self.env.state()

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


def factory_options(options: dict) -> dict:
    """The keyword options of a factory function (``env()``, ``parallel_env()``) with
    ``illegal_action`` defaulting to :data:`FACTORY_ILLEGAL_ACTION` (``"lose"``) unless given;
    a new dict, ``options`` is not changed."""
    return {"illegal_action": FACTORY_ILLEGAL_ACTION, **options}
