"""Vectorized Tapeo environments over the batched engine (:mod:`tapeo_env.rules.batched`).

* :class:`TapeoVecEnv`: a stable-baselines3 ``VecEnv`` for training (sb3-contrib ``MaskablePPO``
  reads its masks through ``action_masks()`` / ``env_method("action_masks")``).
* :class:`TapeoVectorEnv`: the same games as a ``gymnasium.vector.VectorEnv`` for other libraries.

Slots. ``num_tables`` games are played at once; in each the learner holds seats ``0..L-1``
(``learner_seats=L``) and each env slot is one learner seat of one game (``num_envs =
num_tables * L``; slot ``k * L + j`` is seat j of game k). Tapeo is symmetric under rotating the
table (every seat picks at once, the deal is random, observations are seat-relative), so fixed
learner seats lose nothing. The other seats are played in batch by opponent policies.

Opponent policies (:data:`BatchPolicy`): a callable ``policy(observations, action_masks) ->
actions`` taking float32 (M, OBS_SIZE) observations and int8 (M, 10) masks of M seats and
returning M legal actions. A policy with ``needs_observation = False`` (like
:class:`RandomPolicy`, the default) is given an empty observation array, which saves encoding
the opponent seats. :class:`BotPolicy` turns per-observation ``hod.agents.base.Bot`` objects into a
batch policy. With several policies, each opponent seat of each game is given one, drawn when
that game starts: uniformly, or with the probabilities ``opponent_weights`` (one per policy; the
self-play pool's sampling scheme in ``hod.training.batched_env``).

Table sizes: ``num_players`` may be a list; the tables are then split as evenly as possible
among the sizes (a fixed split; each size is its own batched engine).

Episodes. A step plays one pick at every table. Rewards follow ``reward_scheme`` (default
``"points"``, as the PettingZoo envs) and ``round_rewards``; the final reward is delivered to
every learner seat on the step that ends the game. Finished games restart at once (SB3's
convention: the returned observation is the new game's, the last one is in
``info["terminal_observation"]``; ``info["episode"] = {"r", "l", "t"}``, ``info["final_score"]``,
``info["win_share"]``, ``info["scores"]`` (int64 (n,), every seat's final points) and
``info["opponents"]`` (int64 (n - L,), the policy index of seats ``L..n-1``); the Gymnasium view uses ``AutoresetMode.SAME_STEP`` and
``infos["final_obs"]``).
"""
from __future__ import annotations

import time
from typing import Any, Optional, Sequence

import gymnasium
import numpy as np
from gymnasium import spaces

from hod.adapters.options import check_reset_options, check_seed
from hod.agents import batch_policies
from hod.training.sb3_vec_env import CoreOpponents, MaskedVecEnv
from hod.core.errors import ConfigError, check_int_range

from tapeo_env.rules.batched import BatchedTapeo, random_legal_actions
from tapeo_env.rules.cards import MAX_PLAYERS, MIN_PLAYERS, NUM_KINDS
from tapeo_env.rules.engine import Config
from tapeo_env.rules.observation import OBS_HIGH, OBS_SIZE

#: A batch policy: (observations float32 (M, OBS_SIZE), action masks int8 (M, K)) -> int actions (M,).
BatchPolicy = batch_policies.BatchPolicy


class RandomPolicy(batch_policies.RandomPolicy):
    """Uniformly random legal actions in batch (needs no observation); the default opponent.

    Args:
        seed: seed of its ``numpy.random.default_rng``.
    """

    sampler = staticmethod(random_legal_actions)


class BotPolicy(batch_policies.BotPolicy):
    """A batch policy asking a per-observation :class:`hod.agents.base.Bot` for each row (see
    :class:`hod.agents.batch_policies.BotPolicy`)."""

    game = "tapeo"


def _as_policies(opponents: Any) -> list:
    return batch_policies.as_policies(opponents, BotPolicy)


class _Group:
    """One table size: a batched engine and its opponents' assignment."""

    def __init__(self, tables: int, n: int, L: int, policies: list, reward_scheme: str, round_rewards: bool,
                 seed: int, weights: Optional[np.ndarray] = None) -> None:
        self.engine = BatchedTapeo(Config(num_players=n), tables, seed=seed, reward_scheme=reward_scheme,
                                   round_rewards=round_rewards)
        self.n, self.L, self.tables = n, L, tables
        self.learners = list(range(L))
        self.others = list(range(L, n))
        self.assign = np.zeros((tables, n - L), np.int64)
        self.policies = policies
        self.weights = weights
        self.needs_obs = any(getattr(p, "needs_observation", True) for p in policies)

    def draw_opponents(self, games: np.ndarray, rng: np.random.Generator) -> None:
        """Draw the policy of every opponent seat of ``games`` (the games being dealt).

        Args:
            games: int (k,) indices of games in ``0..tables-1``.
            rng: the generator of the draws (``batch_policies.draw_policies`` with
                :attr:`weights`; nothing is drawn with a single policy or no game).

        Writes ``assign[games]``: int64 (k, n - L) indices into :attr:`policies`, column ``j``
        for seat ``L + j``.
        """
        if len(self.policies) > 1 and len(games):
            self.assign[games] = batch_policies.draw_policies(rng, len(self.policies),
                                                              (len(games), self.n - self.L), self.weights)

    def opponent_actions(self) -> np.ndarray:
        """int64 (tables, n - L): the opponents' picks now."""
        eng = self.engine
        masks = eng.legal_mask()[:, self.L:]
        obs = eng.observe(seats=self.others) if self.needs_obs else np.empty((self.tables, self.n - self.L, 0),
                                                                             np.float32)
        if len(self.policies) == 1:
            m = self.tables * (self.n - self.L)
            a = self.policies[0](obs.reshape(m, obs.shape[-1]), masks.reshape(m, NUM_KINDS))
            return np.asarray(a).reshape(self.tables, self.n - self.L)
        out = np.empty((self.tables, self.n - self.L), np.int64)
        for k, p in enumerate(self.policies):
            sel = self.assign == k
            if sel.any():
                out[sel] = p(obs[sel], masks[sel])
        return out


class _LearnerTables:
    """The game logic shared by :class:`TapeoVecEnv` and :class:`TapeoVectorEnv`."""

    def __init__(self, num_tables: int, num_players: int | Sequence[int], learner_seats: int,
                 opponents: Any, reward_scheme: str, round_rewards: bool, seed: Optional[int],
                 opponent_weights: Optional[Sequence[float]] = None) -> None:
        if not isinstance(round_rewards, (bool, np.bool_)):
            raise ConfigError(f"round_rewards={round_rewards!r} must be a bool; legal values: [False, True]")
        round_rewards = bool(round_rewards)
        counts = [num_players] if isinstance(num_players, (int, np.integer)) else list(num_players)
        if not counts:
            raise ConfigError(f"num_players must be a count or a list of counts in {MIN_PLAYERS}..{MAX_PLAYERS}")
        counts = [check_int_range("num_players", c, MIN_PLAYERS, MAX_PLAYERS) for c in counts]
        num_tables = check_int_range("num_tables", num_tables, len(counts), 1 << 24)
        self.L = L = check_int_range("learner_seats", learner_seats, 1, min(counts))
        pols = [RandomPolicy(None if seed is None else seed + 7919)] if opponents is None else (
            _as_policies(opponents))
        if not pols:
            raise ConfigError("opponents hold no policy; legal: a batch policy, a Bot, or a non-empty list of them")
        weights = batch_policies.check_weights(opponent_weights, len(pols))
        self.seed = 0 if seed is None else int(seed)
        self.rng = np.random.default_rng([self.seed, 1])
        split = [num_tables // len(counts) + (i < num_tables % len(counts)) for i in range(len(counts))]
        self.groups = [_Group(t, n, L, pols, reward_scheme, round_rewards, seed=[self.seed, 2, i], weights=weights)
                       for i, (t, n) in enumerate(zip(split, counts))]
        self.num_envs = num_tables * L
        self.slices, at = [], 0
        for g in self.groups:
            self.slices.append(slice(at, at + g.tables * L))
            at += g.tables * L
        self.obs = np.zeros((self.num_envs, OBS_SIZE), np.float32)
        self.masks = np.zeros((self.num_envs, NUM_KINDS), np.int8)
        self.ep_ret = np.zeros(self.num_envs)
        self.ep_len = np.zeros(self.num_envs, np.int64)
        self.t0 = time.time()
        self._opp: list[Optional[np.ndarray]] = [None] * len(self.groups)

    def set_opponents(self, opponents: Any, weights: Optional[Sequence[float]] = None) -> None:
        """Replace the opponent policies (e.g. the self-play pool after a snapshot joined or left)
        and their drawing probabilities ``weights`` (None: uniform).

        Games in progress keep their opponents: a seat whose policy is still in ``opponents``
        (the same object; ``batch_policies.carry_over``) keeps it, whatever its new index, and
        only a seat whose policy left is drawn again, with the new weights. Games dealt from now
        on draw with the new weights.

        Raises:
            ConfigError: no policy, an entry that is not a policy, or bad weights (nothing changes).
        """
        pols = _as_policies(opponents)
        w = batch_policies.check_weights(weights, len(pols))
        for g in self.groups:
            g.assign = batch_policies.carry_over(g.assign, g.policies, pols, self.rng, w)
            g.policies = pols
            g.weights = w
            g.needs_obs = any(getattr(p, "needs_observation", True) for p in pols)

    def _refresh(self, i: int) -> None:
        g, sl = self.groups[i], self.slices[i]
        eng = g.engine
        self.obs[sl] = eng.observe(seats=g.learners).reshape(-1, OBS_SIZE)
        self.masks[sl] = eng.legal_mask()[:, :g.L].reshape(-1, NUM_KINDS)

    def reset(self, seed: Optional[int] = None) -> None:
        """Deal every table again; ``seed`` (None or an int in ``0..2**64-1``, the envs' one seed
        check :func:`hod.adapters.options.check_seed`) restarts the deals' and opponents' draws.

        Raises:
            ConfigError: a bad ``seed`` (the message names the legal values); nothing changes.
        """
        seed = check_seed(seed)
        if seed is not None:
            self.seed = seed
            self.rng = np.random.default_rng([self.seed, 1])
        for i, g in enumerate(self.groups):
            g.engine.reset(seed=None if seed is None else [self.seed, 2, i])
            g.draw_opponents(np.arange(g.tables), self.rng)
            self._refresh(i)
        self.ep_ret[:] = 0
        self.ep_len[:] = 0

    def step(self, actions: np.ndarray, hold: Optional[np.ndarray] = None):
        """Play one pick at every table (except the held ones).

        Args:
            actions: int (N,) the learner slots' picks (ignored for held slots).
            hold: bool (N,) slots whose table does not move this step (their new game was dealt
                on the previous step and waits; what next-step autoreset needs, as in
                :mod:`hod.training.rllib.envs`), or None. Every Tapeo game of a table size lasts
                the same number of picks (its rounds times its hand size), so the tables of a
                size finish together and are held together: a size is held whole or not at all.

        Returns:
            (rewards float32 (N,), dones bool (N,), done info per slot: dict slot -> info); a
            held slot gets reward 0 and done False.

        Raises:
            ValueError: wrong number of actions, or ``hold`` covering part of a table size's slots.
        """
        actions = np.asarray(actions).reshape(-1)
        if actions.shape[0] != self.num_envs:
            raise ValueError(f"expected {self.num_envs} actions (one per env slot), got {actions.shape[0]}")
        rewards = np.zeros(self.num_envs, np.float32)
        dones = np.zeros(self.num_envs, bool)
        final: dict[int, dict] = {}
        for i, g in enumerate(self.groups):
            sl, eng, L = self.slices[i], g.engine, g.L
            if hold is not None and hold[sl].any():
                if not hold[sl].all():
                    raise ValueError(f"hold covers part of the {g.n}-player tables; legal: all of a table size's "
                                     f"slots or none (its games finish together)")
                continue
            picks = np.empty((g.tables, g.n), np.int64)
            picks[:, :L] = actions[sl].reshape(g.tables, L)
            if g.n > L:
                picks[:, L:] = g.opponent_actions()
            res = eng.step(picks)
            r = res.rewards[:, :L].reshape(-1)
            rewards[sl] = r
            self.ep_ret[sl] += r
            self.ep_len[sl] += 1
            over = res.game_over
            if over.any():
                games = np.flatnonzero(over)
                term = eng.observe(seats=g.learners)[games]
                st = eng.state
                now = round(time.time() - self.t0, 6)
                for a, k in enumerate(games):
                    w = st.winners[k]
                    share = 1.0 / int(w.sum())
                    for j in range(L):
                        slot = sl.start + k * L + j
                        dones[slot] = True
                        final[slot] = {
                            "terminal_observation": term[a, j].copy(), "TimeLimit.truncated": False,
                            "final_score": int(st.final_scores[k, j]), "win_share": share if w[j] else 0.0,
                            "episode": {"r": float(self.ep_ret[slot]), "l": int(self.ep_len[slot]), "t": now},
                            # every seat's final points and the opponent seats' policy indices (PFSP)
                            "scores": st.final_scores[k].astype(np.int64), "opponents": g.assign[k].copy(),
                        }
                rows = (games[:, None] * L + np.arange(L)).reshape(-1) + sl.start
                self.ep_ret[rows] = 0
                self.ep_len[rows] = 0
                eng.reset(games=games)
                g.draw_opponents(games, self.rng)
            self._refresh(i)
        return rewards, dones, final


class TapeoVecEnv(MaskedVecEnv):
    """stable-baselines3 ``VecEnv`` of Tapeo games over the batched engine (see the module doc).

    Args:
        num_tables: games played at once (>= the number of table sizes).
        num_players: table size 2..6, or a list of sizes (tables split evenly among them).
        learner_seats: learner seats per game L (seats 0..L-1; 1..smallest size).
        opponents: a batch policy, an ``hod.agents.base.Bot``, or a list of them (drawn per seat
            and game); None = :class:`RandomPolicy`.
        reward_scheme: ``"points"``, ``"win_loss"`` or ``"margin"``. round_rewards: see the envs.
        seed: base seed (deals, opponents' draws).
        opponent_weights: probability of each entry of ``opponents`` (normalised; None = uniform).

    Observation space: Box float32 (OBS_SIZE,); action space: Discrete(10); ``action_masks()``:
    bool (num_envs, 10).

    Raises:
        ConfigError: a value outside its legal range (named in the message).
    """

    def __init__(self, num_tables: int = 64, num_players: int | Sequence[int] = 4, learner_seats: int = 1,
                 opponents: Any = None, reward_scheme: str = "points", seed: Optional[int] = 0,
                 opponent_weights: Optional[Sequence[float]] = None, round_rewards: bool = False) -> None:
        self.core = _LearnerTables(num_tables, num_players, learner_seats, opponents, reward_scheme, round_rewards,
                                   seed, opponent_weights)
        super().__init__(self.core.num_envs, spaces.Box(0.0, OBS_HIGH, (OBS_SIZE,), np.float32),
                         spaces.Discrete(NUM_KINDS))
        self._actions: Optional[np.ndarray] = None

    def set_opponents(self, opponents: Any, weights: Optional[Sequence[float]] = None) -> None:
        """See :meth:`_LearnerTables.set_opponents`."""
        self.core.set_opponents(opponents, weights)

    def reset(self) -> np.ndarray:
        seed = self._seeds[0]
        self.core.reset(seed)
        self._reset_seeds()
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return self.core.obs.copy()

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions)

    def step_wait(self):
        rewards, dones, final = self.core.step(self._actions)
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for slot, info in final.items():
            infos[slot] = info
        return self.core.obs.copy(), rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        """bool (num_envs, 10): the legal actions of every slot now."""
        return self.core.masks.astype(bool)


class TapeoVectorEnv(CoreOpponents, gymnasium.vector.VectorEnv):
    """Gymnasium ``VectorEnv`` view of the same games (arguments as :class:`TapeoVecEnv`).

    Observations are dicts ``{"observation": float32 (num_envs, OBS_SIZE), "action_mask": int8
    (num_envs, 10)}``; actions ``MultiDiscrete([10] * num_envs)``; autoreset ``SAME_STEP``: a
    finished game restarts within the step, its last observation is in ``infos["final_obs"]``
    (object array, ``infos["_final_obs"]`` marks the slots) and ``infos["final_score"]``,
    ``infos["win_share"]`` hold the results (``infos["_final_score"]`` marks them).
    """

    metadata = {"autoreset_mode": gymnasium.vector.AutoresetMode.SAME_STEP}

    def __init__(self, num_tables: int = 64, num_players: int | Sequence[int] = 4, learner_seats: int = 1,
                 opponents: Any = None, reward_scheme: str = "points", seed: Optional[int] = 0,
                 opponent_weights: Optional[Sequence[float]] = None, round_rewards: bool = False) -> None:
        self.core = _LearnerTables(num_tables, num_players, learner_seats, opponents, reward_scheme, round_rewards,
                                   seed, opponent_weights)
        self.num_envs = n = self.core.num_envs
        self.single_observation_space = spaces.Dict({
            "observation": spaces.Box(0.0, OBS_HIGH, (OBS_SIZE,), np.float32),
            "action_mask": spaces.Box(0, 1, (NUM_KINDS,), np.int8),
        })
        self.single_action_space = spaces.Discrete(NUM_KINDS)
        self.observation_space = gymnasium.vector.utils.batch_space(self.single_observation_space, n)
        self.action_space = spaces.MultiDiscrete([NUM_KINDS] * n)

    def _obs(self) -> dict:
        return {"observation": self.core.obs.copy(), "action_mask": self.core.masks.copy()}

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        """Deal every game again (``seed``: :meth:`_LearnerTables.reset`; ``options``: None or a
        dict, ignored). Raises ConfigError for a bad ``seed`` or ``options``; nothing changes."""
        check_reset_options(options)
        self.core.reset(seed)
        return self._obs(), {}

    def step(self, actions, hold: Optional[np.ndarray] = None):
        """Gymnasium's ``(obs, rewards, terminations, truncations, infos)`` after one step of every
        table but the held ones (``hold``: bool (num_envs,), :meth:`_LearnerTables.step`)."""
        rewards, dones, final = self.core.step(actions, hold)
        infos: dict[str, Any] = {}
        if final:
            n = self.num_envs
            fo = np.full(n, None, dtype=object)
            score = np.zeros(n, np.int64)
            share = np.zeros(n)
            for slot, info in final.items():
                fo[slot] = {"observation": info["terminal_observation"],
                            "action_mask": np.zeros(NUM_KINDS, np.int8)}
                score[slot] = info["final_score"]
                share[slot] = info["win_share"]
            infos = {"final_obs": fo, "_final_obs": dones.copy(), "final_score": score, "_final_score": dones.copy(),
                     "win_share": share, "_win_share": dones.copy()}
        return self._obs(), rewards.astype(np.float64), dones, np.zeros(self.num_envs, bool), infos

    def action_masks(self) -> np.ndarray:
        """bool (num_envs, 10) legal actions now."""
        return self.core.masks.astype(bool)


#: The Gymnasium ``VectorEnv`` view of this game's batched training tables (the SB3 ``VecEnv`` is the
#: declaration's ``vector_env``); :func:`hod.training.batched_env.make_batched_vector_env` finds it here.
GYMNASIUM_VECTOR_ENV = TapeoVectorEnv
