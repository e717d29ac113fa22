"""The training env's observations passed through the policy's observation encoder.

:class:`EncodedVecEnv` wraps a training ``VecEnv`` (:func:`hod.training.vec_env.make_vec_env`) and
appends the encoder's features (:mod:`hod.agents.encoders`) to every observation it returns, using
the action masks of the same step (``venv.action_masks()``), so the learner's network reads
exactly what the pool's snapshots, :class:`hod.agents.onnx_policy.OnnxPolicy` and
:class:`hod.training.ppo_bot.PPOBot` read. A ``terminal_observation`` (a finished game: no decision, no
mask) gets zero features; SB3 reads it only on truncation, which these games never do.
"""
from __future__ import annotations

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvWrapper

from hod.agents.encoders import Encoder


class EncodedVecEnv(VecEnvWrapper):
    """``venv`` with observations float32 (num_envs, obs + extra) (module docstring).

    Args:
        venv: a training VecEnv with ``action_masks()`` (bool (num_envs, num_actions)).
        encoder: the encoder (the trainer only wraps for a non-identity one; with the identity
            the wrapper changes nothing).
    """

    def __init__(self, venv: VecEnv, encoder: Encoder) -> None:
        inner = venv.observation_space
        width = encoder.size(inner.shape[0])
        space = spaces.Box(low=-np.inf, high=np.inf, shape=(width,), dtype=np.float32)
        super().__init__(venv, observation_space=space)
        self.encoder = encoder

    def _encode(self, obs: np.ndarray) -> np.ndarray:
        return self.encoder.encode_batch(obs, self.venv.action_masks())

    def reset(self) -> np.ndarray:
        return self._encode(self.venv.reset())

    def step_wait(self):
        obs, rewards, dones, infos = self.venv.step_wait()
        for info in infos:
            term = info.get("terminal_observation")
            if term is not None:
                info["terminal_observation"] = np.concatenate(
                    [np.asarray(term, np.float32), np.zeros(self.encoder.extra, np.float32)])
        return self._encode(obs), rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        """bool (num_envs, num_actions): the learner slots' legal actions now."""
        return self.venv.action_masks()
