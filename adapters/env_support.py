"""Pieces of the PettingZoo adapter (:mod:`hod.adapters.game_env`), also used by the fake game of
the training tests (docs/DESIGN.md, "Environment contract"): the end-of-game infos, the outcome
of an illegal action under ``illegal_action="lose"``, starting and ending an AEC episode, rendering with no game, and the
error for stepping with no game in progress, and PettingZoo's global state (:class:`GlobalState`:
``state()`` and ``state_space``). Nothing here knows a game's rules: each game passes its own
scores, winners and state encoder.
"""
from __future__ import annotations

from typing import Callable, Optional, Sequence

import gymnasium
import numpy as np
from gymnasium import spaces

from hod.core.errors import ResetNeededError
from hod.core.rewards import win_shares
from .wrappers import GAME_OVER, ILLEGAL_REWARD, NOT_STARTED  # noqa: F401  (the messages, re-exported)

#: What ``render()`` shows before the first ``reset()`` (``ansi``: returned, ``human``: printed).
NO_GAME_TEXT = "(no game: call reset())"


def check_in_game(started: bool, live: bool) -> None:
    """Raise :class:`~hod.core.errors.ResetNeededError` unless a game is in progress.

    Args:
        started: ``reset()`` has been called at least once.
        live: some agent may still step (AEC: ``env.agents`` not empty, a finished agent's
            ``step(None)`` included; Parallel: the game has not ended).
    """
    if not started:
        raise ResetNeededError(NOT_STARTED)
    if not live:
        raise ResetNeededError(GAME_OVER)


def begin_aec_step(env, action, started: bool) -> Optional[str]:
    """The start of every AEC ``step``: check that a game is in progress (:func:`check_in_game`),
    and handle PettingZoo's convention that a finished agent steps ``None`` (``_was_dead_step``).

    Returns:
        The agent to act, or None when the step was a finished agent's (nothing more to do).

    Raises:
        ResetNeededError: not ``started``, or no live agent left.
        ValueError: a finished agent stepped something other than None (PettingZoo's message).
    """
    if not env.agents:
        check_in_game(started, False)
    agent = env.agent_selection
    if env.terminations[agent] or env.truncations[agent]:
        env._was_dead_step(action)
        return None
    return agent


#: The end-of-game info keys with the values they hold while no game has ended: present in the
#: infos of ``reset`` and of every step (AEC and Parallel), so libraries that fix the info keys
#: at reset (TorchRL's ``PettingZooWrapper``) keep them.
PENDING_INFO = {"final_score": 0, "win_share": 0.0}


def pending_infos(agents: Sequence[str]) -> dict[str, dict]:
    """``{agent: {"final_score": 0, "win_share": 0.0}}`` (:data:`PENDING_INFO`), a fresh dict
    per agent: the infos of ``reset``, of every step before the end and of a truncated game."""
    return {a: {"final_score": 0, "win_share": 0.0} for a in agents}   # literal: faster than dict(PENDING_INFO)


def final_infos(scores: Sequence[int], winners: Sequence[int]) -> list[dict]:
    """End-of-game infos per seat: ``{"final_score": int points, "win_share": 1/k for each of
    k tied winners, else 0.0}`` (the game decides the scores and the winners)."""
    ws = win_shares(winners, len(scores))
    return [{"final_score": int(scores[i]), "win_share": float(ws[i])} for i in range(len(scores))]


def forfeit(offenders: Sequence[int], agents: Sequence[str], scores: Sequence[int]) -> tuple[np.ndarray, list[dict]]:
    """Outcome of ``illegal_action="lose"`` (``hod.adapters.wrappers``): every offender gets
    :data:`~hod.adapters.wrappers.ILLEGAL_REWARD`, every other seat 0, and the others share the win.

    Args:
        offenders: seats that played an illegal action this step (at least one).
        agents: agent name of each seat.
        scores: points of each seat so far (reported as ``final_score``).

    Returns:
        ``(rewards, infos)``: float64 (n,) rewards and, per seat, ``{"illegal_action": offender
        name (a list if several), "final_score": int, "win_share": float}``.
    """
    n = len(agents)
    rewards = np.zeros(n)
    rewards[list(offenders)] = ILLEGAL_REWARD
    others = [i for i in range(n) if i not in offenders]
    ws = win_shares(others, n) if others else np.zeros(n)
    names = [agents[i] for i in offenders]
    tag = names[0] if len(names) == 1 else names
    return rewards, [{"illegal_action": tag, "final_score": int(scores[i]), "win_share": float(ws[i])}
                     for i in range(n)]


def start_aec_episode(env) -> None:
    """Make every possible agent live with zero rewards, no termination or truncation and the
    pending infos (:func:`pending_infos`; the per-agent dicts of PettingZoo's ``AECEnv``);
    ``agent_selection`` is left to the caller."""
    env.agents = list(env.possible_agents)
    env.rewards = {a: 0.0 for a in env.agents}
    env._cumulative_rewards = {a: 0.0 for a in env.agents}
    env.terminations = {a: False for a in env.agents}
    env.truncations = {a: False for a in env.agents}
    env.infos = pending_infos(env.agents)


def end_aec_episode(env, rewards: Sequence[float], infos: Sequence[dict], truncated: bool) -> None:
    """End an AEC episode for every live agent (in ``env.agents`` order): set its reward and
    infos, terminate it (or truncate it if ``truncated``) and accumulate the rewards."""
    done = env.truncations if truncated else env.terminations
    for i, a in enumerate(env.agents):
        env.rewards[a] = float(rewards[i])
        env.infos[a] = infos[i]
        done[a] = True
    env._accumulate_rewards()


def render(render_mode: Optional[str], state, text: Callable[[object], str]) -> Optional[str]:
    """``render()`` of both games: ``ansi`` returns ``text(state)``, ``human`` prints it and
    returns None; with no game yet (``state`` None) the text is :data:`NO_GAME_TEXT`. Without a
    render mode it warns (gymnasium's logger) and returns None."""
    if render_mode is None:
        gymnasium.logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'human'")
        return None
    out = NO_GAME_TEXT if state is None else text(state)
    if render_mode == "ansi":
        return out
    print(out)
    return None


#: The message of ``state()`` before the first ``reset()``.
NO_STATE = "state() called before reset(): call reset()"


class GlobalState:
    """PettingZoo's global state for both games and both forms (AEC and Parallel): ``state()``
    returns the game's global-state vector (the game's ``rules/global_state.py``: the whole
    position, hidden cards included, seat-absolute, for critics that see everything during
    training) and ``state_space`` is its ``Box(0, high, (size,), float32)``, built once.

    A game's env core inherits from this (before ``AECEnv``/``ParallelEnv``, whose ``state()``
    raises ``NotImplementedError``) and calls :meth:`_setup_state` in its constructor; the engine
    state in progress is its ``game_state`` (None before the first ``reset``).
    """

    state_space: spaces.Box

    def _setup_state(self, encode: Callable[[object], np.ndarray], high: np.ndarray) -> None:
        """Keep ``encode`` (``encode_state(game_state) -> float32 (size,)``, a module-level
        function, so the env pickles) and build ``state_space`` = ``Box(0, high)`` (``high``
        float32 (size,), the layout's upper bounds)."""
        high = np.asarray(high, np.float32)
        self._encode_state = encode
        self.state_space = spaces.Box(np.zeros_like(high), high, high.shape, np.float32)

    def state(self) -> np.ndarray:
        """The global state now: float32 ``(state_space.shape[0],)``, a fresh array inside
        ``state_space`` (also once the game is over: its final position).

        Raises:
            ResetNeededError: before the first ``reset()``.
        """
        if self.game_state is None:
            raise ResetNeededError(NO_STATE)
        return self._encode_state(self.game_state)
