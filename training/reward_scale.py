"""A fixed scale on the training env's rewards (config key ``reward_scale``).

``margin`` and ``points`` rewards are in game points (Ronda Robada margins reach +-200), which
makes the critic's squared error, and with it the gradient norm that ``max_grad_norm`` clips,
hundreds of times larger than with ``win_loss`` (+-1): the clipping then shrinks the policy's
share of the update too. :class:`ScaledRewardVecEnv` multiplies every reward by a constant
(e.g. 0.01 for Ronda Robada margins) before PPO sees it. Unlike SB3's ``VecNormalize`` the
factor is fixed, so it needs no statistics in the checkpoint and the same run always sees the
same rewards. ``info["episode"]["r"]`` (SB3's episode statistics) stays in game units.
"""
from __future__ import annotations

import numpy as np
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvWrapper


class ScaledRewardVecEnv(VecEnvWrapper):
    """``venv`` with rewards multiplied by ``scale`` (a positive float).

    Raises:
        ValueError: ``scale`` not a positive finite number.
    """

    def __init__(self, venv: VecEnv, scale: float) -> None:
        if isinstance(scale, (bool, np.bool_)) or not (isinstance(scale, (int, float, np.integer, np.floating))
                                                       and np.isfinite(scale) and scale > 0):
            raise ValueError(f"reward_scale={scale!r} must be a positive number; legal: a finite number > 0")
        super().__init__(venv)
        self.scale = float(scale)

    def reset(self) -> np.ndarray:
        return self.venv.reset()

    def step_wait(self):
        obs, rewards, dones, infos = self.venv.step_wait()
        return obs, (rewards * self.scale).astype(np.float32), dones, infos

    def action_masks(self) -> np.ndarray:
        """bool (num_envs, num_actions): the learner slots' legal actions now."""
        return self.venv.action_masks()
