"""The parts of a stable-baselines3 ``VecEnv`` that every vectorized env of this project shares
(``hod.training.tapeo_vector.TapeoVecEnv``, ``hod.training.robada_vector.RobadaVecEnv``,
``hod.training.vec_env.TableVecEnv``): attribute and method access per slot, and the action masks the
way sb3-contrib's ``MaskablePPO`` asks for them (``env_method("action_masks")`` or a bound
``action_masks`` attribute). Needs stable-baselines3 (the ``train`` extra).
"""
from __future__ import annotations

from typing import Any

import numpy as np
from stable_baselines3.common.vec_env.base_vec_env import VecEnv


class MaskedVecEnv(VecEnv):
    """Base of our SB3 vector envs. Subclasses implement ``reset``, ``step_async``, ``step_wait``
    and :meth:`action_masks`; they may override :meth:`_target` (the object that holds slot i's
    attributes and methods; default: the vector env itself) and ``close``."""

    def action_masks(self) -> np.ndarray:
        """bool (num_envs, num_actions): the legal actions of every slot now."""
        raise NotImplementedError

    def _target(self, i: int) -> Any:
        return self

    def close(self) -> None:
        pass

    def _indices(self, indices) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, (int, np.integer)):
            return [int(indices)]
        return list(indices)

    def get_attr(self, attr_name: str, indices=None) -> list[Any]:
        """``render_mode`` (None), ``action_masks`` (the bound method) or the attribute of each
        selected slot's target; AttributeError for an unknown name."""
        idx = self._indices(indices)
        if attr_name == "render_mode":
            return [None for _ in idx]
        if attr_name == "action_masks":
            return [self.action_masks for _ in idx]
        return [getattr(self._target(i), attr_name) for i in idx]

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        """Set ``attr_name`` to ``value`` on the target of each selected slot (:meth:`_target`);
        a target shared by several slots (the vector env itself, by default) is set once.

        Args:
            attr_name: attribute name. value: any object (not copied).
            indices: None (every slot), an int or a sequence of ints in ``0..num_envs-1``.
        """
        for target in {id(self._target(i)): self._target(i) for i in self._indices(indices)}.values():
            setattr(target, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list[Any]:
        """``env_method("action_masks")`` gives one bool mask per selected slot (what sb3-contrib's
        ``get_action_masks`` stacks); other names call the slot target's method once per slot."""
        idx = self._indices(indices)
        if method_name == "action_masks":
            m = self.action_masks()
            return [m[i] for i in idx]
        return [getattr(self._target(i), method_name)(*method_args, **method_kwargs) for i in idx]

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        """One ``False`` per selected slot (a list of bool): the slots are games of a batched
        engine or tables, never Gymnasium envs inside a wrapper, so no ``wrapper_class`` wraps
        them (SB3 asks, e.g. ``evaluate_policy`` about ``Monitor``; these envs report finished
        episodes themselves in ``info["episode"]``)."""
        return [False for _ in self._indices(indices)]


class CoreOpponents:
    """Mixin of the vector envs that keep their games in ``self.core`` (a ``_LearnerTables``):
    :meth:`set_opponents` goes to the core."""

    core: Any

    def set_opponents(self, opponents: Any, weights=None) -> None:
        """Replace the opponent policies and their drawing weights (the core's ``set_opponents``:
        games in progress keep the opponents that stay)."""
        self.core.set_opponents(opponents, weights)
