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

Final step's mask and vector autoreset. The step that ends an episode (terminated or truncated)
returns the mask :data:`END_MASK`: every action allowed (int8 ones in ``info["action_mask"]``,
``action_masks()`` all True), in both games. Nothing is played from a last observation: under
``gymnasium.make_vec`` with the default ``AutoresetMode.NEXT_STEP``, the action sent on the
next step only resets the sub-env and is ignored, yet a policy samples it from that mask, so
the mask must allow some action (an all-zero mask, the game's own at the end of a Tapeo game,
makes ``Discrete.sample(mask=...)`` return 0 silently and gives ``MaskablePPO`` a distribution
with no legal action). All ones is the rule of the project's other next-step env (RLlib's
``hod.training.rllib.envs.PoolVectorEnv``). Both autoreset modes work:
``AutoresetMode.SAME_STEP`` (``vector_kwargs={"autoreset_mode": ...}``) returns the new
episode's first observation and mask in the step that ends one (the last ones in
``info["final_obs"]``, ``info["final_info"]``), so every mask a vector env hands out is one an
agent acts on: the mode to use with a loop that does not skip the step after an end. With
``NEXT_STEP`` (what RLlib expects), the action after an end is ignored, as Gymnasium documents.

Torch threads. Training a torch policy (SB3, sb3-contrib) on this view with torch's default
thread count (one per core) was reported about 9x slower than with one thread on a 2-core
machine: the networks are small, and the threads' synchronisation costs more than it saves. Call
``torch.set_num_threads(1)`` before training (our trainer does it, ``torch_threads = 1`` by
default, and also limits numpy's BLAS with :func:`hod.training.blas_threads.set_blas_threads`).

Nothing here imports torch.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import gymnasium as gym
import numpy as np

from hod.adapters.options import check_reset_options, check_seed
from hod.core.errors import ResetNeededError

from .table import LearnerTable

#: What ``info["action_mask"]`` and ``action_masks()`` allow once an episode has ended: every
#: action (``1``; the mask is then ``numpy.full(num_actions, END_MASK, numpy.int8)``). See the
#: module docstring, "Final step's mask and vector autoreset".
END_MASK = 1


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

    The step that ends an episode gives the mask all ones (:data:`END_MASK`, for
    ``gymnasium.make_vec``'s autoreset modes); train a torch policy on it after
    ``torch.set_num_threads(1)`` (see the module docstring for both).

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
        self._ended = False   # the last step ended the episode: step() needs a reset() first

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        """Start an episode (seat, table size, opponents and deal drawn from ``self.np_random``,
        which ``seed`` reseeds).

        Args:
            seed: None or an int in ``0..2**64-1``, the games' one seed check
                (:func:`hod.adapters.options.check_seed`).
            options: None or a dict (its keys are ignored: the view takes no reset options).

        Returns:
            ``(observation float32 (obs_size,), {"action_mask": int8 (num_actions,)})``.

        Raises:
            ConfigError: a bad ``seed`` or ``options`` (the message names the legal values);
                nothing changes (the episode in progress, ``np_random`` and so the next
                unseeded reset's episode stay as they were).
        """
        seed = check_seed(seed)
        check_reset_options(options)
        super().reset(seed=seed)
        (self._obs,) = self.table.reset(self.np_random)
        self._ended = False
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
            ``(observation float32 (obs_size,), reward float, terminated, truncated, info)``;
            ``info["action_mask"]`` int8 (num_actions,): the legal actions, or all ones
            (:data:`END_MASK`) on the step that ends the episode.

        Raises:
            hod.core.errors.ResetNeededError (a ``ValueError`` and a ``RuntimeError``): no
                episode in progress, before the first ``reset()`` or after the step that ended
                one (a vector env's autoreset calls ``reset()`` there, never ``step()``);
                nothing changes.
            hod.core.errors.IllegalActionError: an illegal action under ``illegal_action="raise"``.
        """
        if self._obs is None:
            raise ResetNeededError("step() called before reset(); call reset() first")
        if self._ended:
            raise ResetNeededError("step() called after the episode ended (terminated or truncated); call reset() "
                                   "to start the next one")
        out = self.table.step([action])
        self._ended = bool(out.done)
        (self._obs,) = out.observations
        if out.done:   # nothing is played from a last observation: every action allowed
            self._obs = dict(self._obs, action_mask=np.full(self.action_space.n, END_MASK, np.int8))
        info = out.infos[0] if out.done else {}
        info["action_mask"] = self._obs["action_mask"]
        terminated = out.done and not out.truncated
        return self._obs["observation"], float(out.rewards[0]), terminated, out.truncated, info

    def action_masks(self) -> np.ndarray:
        """Legal actions now: bool (num_actions,) (the method ``MaskablePPO`` calls); all True
        once the episode has ended (:data:`END_MASK`)."""
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
