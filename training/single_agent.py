"""The single-agent (Gymnasium) view of a game: one learner seat against given opponents.

``gymnasium.make("tapeo_env/Tapeo-v0", num_players=4, opponents="expert")`` (after
:func:`hod.adapters.registration.register_envs`) builds a :class:`SingleAgentEnv`:

* observation: the seat's ``"observation"`` vector (``Box`` float32, same size at every table
  size); action: ``Discrete(num_actions)``; the action mask is ``action_masks()`` (int8 ->
  bool array, the method sb3-contrib's ``MaskablePPO`` looks for) and ``info["action_mask"]``;
* the learner's seat is drawn per episode (it learns every seat), and so is the table size when
  ``num_players`` is a list; the opponents come from ``opponents`` (a bot name, a list of names,
  or an opponent source such as :class:`hod.training.pool.OpponentPool`; default ``"random"``,
  the uniform random bot at every opponent seat);
* reward: everything the game credited to the learner since its previous decision; the final
  reward always arrives, even when an opponent acted last (see :mod:`hod.training.table`);
* at the end ``info`` carries ``final_score``, ``win_share``, ``seat`` and ``num_players``.

``illegal_action`` is ``"lose"`` by default here (an illegal action ends the episode with reward
-1, like PettingZoo's ``env()``); training uses ``"raise"``.

Nothing here imports torch.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import gymnasium as gym
import numpy as np

from .table import LearnerTable


class SingleAgentEnv(gym.Env):
    """One learner seat of ``game`` against opponents (a Gymnasium env).

    Args:
        game: ``"tapeo"`` or ``"robada"``.
        num_players: table size or list of sizes drawn per episode.
        opponents: bot name (``"random"``, ``"greedy"``, ``"expert"``...), list of names drawn per
            seat, or an opponent source (:mod:`hod.training.pool`). Default ``"random"``: every
            opponent seat is the uniform random bot (:class:`hod.agents.base.RandomBot`), also
            when the env is made with ``gymnasium.make(id)`` and no ``opponents``.
        reward_scheme: ``"points"``, ``"win_loss"`` or ``"margin"`` (:mod:`hod.core.rewards`).
        illegal_action: ``"lose"`` (default) or ``"raise"``.
        render_mode: passed to the game env (only ``None`` is used by training).
        **env_options: other options of the game's ``raw_env``.

    Raises:
        ConfigError: unknown game, table size, bot name or option value.
    """

    metadata = {"render_modes": []}

    def __init__(self, game: str, num_players: int | Sequence[int] = 2, opponents: Any = "random",
                 reward_scheme: str = "win_loss", illegal_action: str = "lose",
                 render_mode: Optional[str] = None, **env_options: Any) -> None:
        super().__init__()
        self.game = game
        self.render_mode = render_mode
        self.table = LearnerTable(game, num_players, 1, opponents,
                           dict(env_options, reward_scheme=reward_scheme, illegal_action=illegal_action))
        self.observation_space = self.table.observation_space
        self.action_space = self.table.action_space
        self._obs: Optional[dict[str, np.ndarray]] = None

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        """Start an episode (seat, table size, opponents and deal drawn from ``self.np_random``)."""
        super().reset(seed=seed)
        (self._obs,) = self.table.reset(self.np_random)
        return self._obs["observation"], {"action_mask": self._obs["action_mask"]}

    def step(self, action):
        """Play ``action`` for the learner, then the opponents until the learner decides again.

        ``action`` must be an int of the action space: a Python ``int`` or a numpy integer
        scalar in ``0..num_actions-1`` (the games' one check, :func:`hod.core.errors.action_id`).
        Anything else (``1.0``, ``True``, ``None``, ``numpy.array([0])``, a string) is an illegal
        action, like a masked one: under ``illegal_action="lose"`` the episode ends with the
        forfeit's reward, under ``"raise"`` :class:`hod.core.errors.IllegalActionError` naming
        the legal actions.

        Returns:
            ``(observation float32 (obs_size,), reward float, terminated, truncated, info)``.
        """
        if self._obs is None:
            raise RuntimeError("call reset() before step()")
        out = self.table.step([action])
        (self._obs,) = out.observations
        info = out.infos[0] if out.done else {}
        info["action_mask"] = self._obs["action_mask"]
        terminated = out.done and not out.truncated
        return self._obs["observation"], float(out.rewards[0]), terminated, out.truncated, info

    def action_masks(self) -> np.ndarray:
        """Legal actions now: bool (num_actions,) (the method ``MaskablePPO`` calls)."""
        if self._obs is None:
            raise RuntimeError("call reset() before action_masks()")
        return self._obs["action_mask"].astype(bool)

    @property
    def seat(self) -> int:
        """The learner's seat in the current episode."""
        return self.table.env.possible_agents.index(self.table.learners[0])

    def close(self) -> None:
        for e in self.table._envs.values():
            e.close()
