"""The vectorized training environment: K game tables, each with L learner seats.

:class:`TableVecEnv` is a stable-baselines3 ``VecEnv`` whose environment slots are
``(table k, learner seat j)`` pairs, ``num_envs = K * L``. Every slot is one learner seat's
trajectory: the policy is shared (parameter sharing) and each seat has its own rollout stream,
so advantages never mix seats.

* Tapeo (simultaneous picks): L learner seats per table play at once, the rest of the table is
  filled from the opponent pool; one ``step`` plays one pick at every table.
* Ronda Robada (turn-based): L = 1, so this is exactly a vector of K single-agent envs
  (:class:`hod.training.single_agent.SingleAgentEnv`), without the per-env wrappers of
  ``DummyVecEnv``; both are built on :class:`hod.training.table.LearnerTable`.

Finished tables reset themselves (SB3's auto-reset convention: the last observation goes to
``info["terminal_observation"]``, ``info["episode"] = {"r", "l", "t"}`` feeds SB3's episode
statistics, and the env's final ``infos`` (``final_score``, ``win_share``...) are passed on).
``action_masks()`` and ``env_method("action_masks")`` give the masks the way sb3-contrib's
``MaskablePPO`` asks for them. Options as the learner vector env's: ``encoder`` (features appended
to every observation from the same step's masks, :mod:`hod.agents.encoders`; a
``terminal_observation`` gets zero features) and ``reward_scale`` (a fixed factor on the rewards
returned; ``info["episode"]["r"]`` stays in game units).

All tables live in this process (they share the opponent pool's policies with the trainer); on
2 cores this is also the fastest layout.

:func:`make_vec_env` builds this env (``engine="single"``) or, with ``engine="batched"``, the
learner vector env over the game's batched engine (:func:`hod.training.learner_env.make_learner_vec_env`).

Why a second stack: the single-game tables play any bot, search bots too (``needs_belief``:
they are given belief samples drawn from the table's full game state, history included, as in
the tournament), and draw the table size and the learner seats per episode; the batched engines
keep no history, so the learner vector env takes only bots that decide from the observation.
The Gymnasium single-agent view (:class:`hod.training.single_agent.SingleAgentEnv`, the
registered Gymnasium ids) is one table too.
"""
from __future__ import annotations

import time
from typing import Any, Optional, Sequence

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env.base_vec_env import VecEnv

from hod.adapters.options import check_seed
from hod.core.errors import ConfigError, action_id, check_int_range

from .learner_env import MaskedVecEnv, check_reward_scale, check_slot_actions, make_learner_vec_env
from .table import LearnerTable


class TableVecEnv(MaskedVecEnv):
    """SB3 VecEnv over :class:`LearnerTable` objects (see the module docstring).

    Args:
        tables: the tables (all of the same game, same ``num_learners``).
        seed: base seed, None (0) or an int in ``0..2**64-1``; table k draws from
            ``numpy.random.default_rng([seed, k])``.
        encoder: an observation encoder (:class:`hod.agents.encoders.Encoder`) or None; observation
            space then Box float32 (obs_size + extra,) unbounded.
        reward_scale: a positive finite factor on the rewards returned.

    Raises:
        ValueError: no table, or tables with different spaces or learner counts.
        ConfigError: a bad ``reward_scale`` or ``seed`` (the legal values named).
    """

    def __init__(self, tables: Sequence[LearnerTable], seed: Optional[int] = 0, encoder: Any = None,
                 reward_scale: float = 1.0) -> None:
        if not tables:
            raise ValueError("TableVecEnv needs at least one table; legal: a non-empty list of LearnerTable")
        self.tables = list(tables)
        self.L = self.tables[0].num_learners
        t0 = self.tables[0]
        for t in self.tables:
            if t.num_learners != self.L or t.observation_space.shape != t0.observation_space.shape \
                    or t.action_space.n != t0.action_space.n:
                raise ValueError("all tables must have the same spaces and number of learner seats; legal: tables "
                                 "built with the same game, player counts and learner seats")
        seed = check_seed(seed)      # -1 was numpy's bare "expected non-negative integer"
        self._base_seed = seed
        self._rngs = [np.random.default_rng([seed if seed is not None else 0, k]) for k in range(len(self.tables))]
        n = len(self.tables) * self.L
        self.reward_scale = check_reward_scale(reward_scale)
        self.encoder = None if encoder is None or getattr(encoder, "identity", False) else encoder
        space = t0.observation_space if self.encoder is None else spaces.Box(
            low=-np.inf, high=np.inf, shape=(self.encoder.size(t0.observation_space.shape[0]),), dtype=np.float32)
        super().__init__(n, space, t0.action_space)
        self._obs = np.zeros((n,) + t0.observation_space.shape, np.float32)
        self._masks = np.zeros((n, t0.action_space.n), bool)
        self._ep_ret = np.zeros(n)
        self._ep_len = np.zeros(n, np.int64)
        self._t0 = time.time()
        self._actions: Optional[np.ndarray] = None

    # ---- VecEnv API -------------------------------------------------------------------------
    def _set(self, k: int, obs_list) -> None:
        for j, o in enumerate(obs_list):
            i = k * self.L + j
            self._obs[i] = o["observation"]
            self._masks[i] = o["action_mask"] != 0

    def reset(self) -> np.ndarray:
        """Deal a new game at every table (seeded by ``seed()`` before, as SB3 does; else the
        generators go on); returns the observations.

        Raises:
            ConfigError: a seed given to ``seed()`` that is not None or an int in ``0..2**64-1``;
                nothing changes.
        """
        for k in range(len(self.tables)):     # every seed before any table deals
            check_seed(self._seeds[k * self.L])
        for k, table in enumerate(self.tables):
            s = self._seeds[k * self.L]
            if s is not None:
                self._rngs[k] = np.random.default_rng([s, k])
            self._set(k, table.reset(self._rngs[k]))
        self._seeds = [None] * self.num_envs
        self._ep_ret[:] = 0
        self._ep_len[:] = 0
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return self._observations()

    def _observations(self) -> np.ndarray:
        if self.encoder is None:
            return self._obs.copy()
        return self.encoder.encode_batch(self._obs.copy(), self._masks.copy())

    def step_async(self, actions: np.ndarray) -> None:
        """Store one action per slot for :meth:`step_wait`.

        Raises:
            ValueError: not ``num_envs`` actions (the count named).
        """
        a = np.asarray(actions)
        if a.size != self.num_envs:
            raise ValueError(f"expected {self.num_envs} actions (one per env slot), got {a.size} (shape {a.shape}); "
                             f"legal: integers of shape ({self.num_envs},)")
        self._actions = a.reshape(self.num_envs)

    def step_wait(self):
        """One step of every table: SB3's ``(obs, rewards, dones, infos)``.

        Raises:
            IllegalActionError: (the tables' ``illegal_action="raise"``, the default) an action
                outside its slot's mask, checked for every table before any table moves, so a
                refused step changes nothing anywhere; the first one is named with its legal
                actions. An ill-typed action (``1.0``, ``True``, ``"0"``) is an illegal action, as
                the tables judge it (:func:`hod.core.errors.action_id`), also checked first.
        """
        if all(t.env_options.get("illegal_action") == "raise" for t in self.tables):
            a = self._actions
            n = self._masks.shape[1]
            if a.dtype.kind in "iu":       # the hot path: one gather
                ids = a.astype(np.int64, copy=False)
            else:                           # 2.0 was played by the first tables before a later one raised
                ids = np.array([-1 if (v := action_id(x, n)) is None else v for x in a], np.int64)
            check_slot_actions(ids, self._masks, given=a)
        rewards = np.zeros(self.num_envs, np.float32)
        dones = np.zeros(self.num_envs, bool)
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for k, table in enumerate(self.tables):
            sl = slice(k * self.L, (k + 1) * self.L)
            out = table.step(self._actions[sl])
            rewards[sl] = out.rewards
            self._ep_ret[sl] += out.rewards
            self._ep_len[sl] += 1
            if not out.done:
                self._set(k, out.observations)
                continue
            dones[sl] = True
            for j in range(self.L):
                i = k * self.L + j
                info = dict(out.infos[j])
                term = out.observations[j]["observation"]
                info["terminal_observation"] = term if self.encoder is None else np.concatenate(
                    [np.asarray(term, np.float32), np.zeros(self.encoder.extra, np.float32)])
                info["TimeLimit.truncated"] = out.truncated
                info["episode"] = {"r": float(self._ep_ret[i]), "l": int(self._ep_len[i]),
                                   "t": round(time.time() - self._t0, 6)}
                infos[i] = info
            self._ep_ret[sl] = 0
            self._ep_len[sl] = 0
            self._set(k, table.reset(self._rngs[k]))
        if self.reward_scale != 1.0:
            rewards = (rewards * self.reward_scale).astype(np.float32)
        return self._observations(), rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        """Legal actions of every slot: bool (num_envs, num_actions)."""
        return self._masks.copy()

    def close(self) -> None:
        for t in self.tables:
            for e in t._envs.values():
                e.close()

    def _target(self, i: int) -> Any:
        return self.tables[i // self.L]


def make_vec_env(game: str, num_tables: int, num_players, learner_seats: int, opponents,
                 env_options: Optional[dict] = None, seed: int = 0, engine: str = "single", encoder: Any = None,
                 reward_scale: float = 1.0) -> VecEnv:
    """The training ``VecEnv`` of ``num_tables`` tables of ``game``.

    ``engine="single"`` (default): a :class:`TableVecEnv` of single-game :class:`LearnerTable` objects
    (see :class:`LearnerTable` for the arguments); ``env_options`` default to ``illegal_action="raise"``
    (training never plays an illegal move). ``engine="batched"``: the learner vector env over the
    game's batched engine with the opponents as batch policies
    (:func:`hod.training.learner_env.make_learner_vec_env`, same arguments). ``encoder`` and
    ``reward_scale``: the envs' options.

    Raises:
        ConfigError: unknown ``engine`` (legal values listed), a ``num_tables`` that is not an
            integer in ``1..2**24`` or a bad ``seed`` (the learner vector env's checks), or what
            the chosen builder raises.
    """
    if engine == "batched":
        return make_learner_vec_env(game, num_tables, num_players, learner_seats, opponents, env_options, seed=seed,
                                    encoder=encoder, reward_scale=reward_scale)
    if engine != "single":
        raise ConfigError(f"engine={engine!r}; legal values: ['single', 'batched']")
    # the learner vector env's checks, before any table is built (2.5 was a bare TypeError, 0 a ValueError)
    num_tables = check_int_range("num_tables", num_tables, 1, 1 << 24)
    check_seed(seed)
    tables = [LearnerTable(game, num_players, learner_seats, opponents, env_options) for _ in range(num_tables)]
    return TableVecEnv(tables, seed=seed, encoder=encoder, reward_scale=reward_scale)
