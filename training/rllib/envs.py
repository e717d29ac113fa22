"""The envs RLlib's env runners step: the fast path over our batched engines, and the per-agent path.

Fast path (:class:`PoolVectorEnv`, one per env runner): a ``gymnasium.vector.VectorEnv`` over the
game's batched training tables (:func:`hod.training.learner_env.make_learner_vector_env`: the same
tables, opponents and sampling scheme as the SB3 trainer's ``engine = "batched"``), opponents
played inside the env in batch by the runner's replica of the self-play opponent pool
(:class:`hod.training.pool.OpponentPool`), which the driver keeps in step
(:meth:`PoolVectorEnv.sync_pool`). RLlib builds it through a *vector entry point*
(``config.env_runners(gym_env_vectorize_mode="vector_entry_point", num_envs_per_env_runner=N)``
with a callable env: RLlib calls it with the env config plus ``num_envs``).

RLlib's ``SingleAgentEnvRunner`` expects Gymnasium's *next-step* autoreset: the step that ends
an episode returns that episode's last observation, and the next step returns the new
episode's first observation (the action sent for that slot is ignored). Our batched tables deal
a new game within the step that ends one (same-step autoreset), so :class:`PoolVectorEnv`
returns the finished game's last observation (its action mask all ones: nothing is played from
it) and *holds* the new game for one step (``step(actions, hold)`` of the vector env: that
game does not move, its slot gets reward 0), which is exactly next-step autoreset.

Per-agent path (:func:`make_per_agent_env`): the PettingZoo AEC env in RLlib's own
``PettingZooEnv`` multi-agent wrapper, every seat a learner seat of one shared policy (parameter
sharing). Our raw envs raise on an illegal action, so the whole run is a check that no illegal
action is ever played.

Rewards are multiplied by ``reward_scale`` and observations go through the ``obs_encoder``
(:mod:`hod.agents.encoders`) on the fast path, as the SB3 trainer's wrappers do.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Any, Mapping, Optional

import gymnasium
import numpy as np
from gymnasium import spaces

from hod.agents.encoders import get_encoder
from hod.core.deal import check_seed
from hod.core.errors import ConfigError, check_int_range
from hod.core.games import make_raw_env
from hod.training.learner_env import check_reward_scale, make_learner_vector_env
from hod.training.numpy_policy import NumpyPolicy
from hod.training.pool import OpponentPool

#: The env-config keys of the fast path (besides RLlib's ``num_envs`` and ``worker_index``).
FAST_KEYS = ("game", "players", "learner_seats", "env_options", "seed", "reward_scale", "obs_encoder",
             "heuristics", "pool_size", "p_latest", "p_past", "p_heuristic", "opponent_deterministic")
#: optional env-config keys (default: none): ``heuristic_options``
#: The keys of :data:`FAST_KEYS` an env config may leave out (their defaults: seed 0, no
#: env_options, reward_scale 1, no encoder).
OPTIONAL_KEYS = ("seed", "env_options", "reward_scale", "obs_encoder")


def runner_seed(seed: int, worker_index: int) -> int:
    """The seed of env runner ``worker_index``'s tables: an int in [0, 2**31 - 1) drawn from
    ``numpy.random.default_rng([seed, worker_index])`` (each runner deals other games)."""
    return int(np.random.default_rng([int(seed), int(worker_index)]).integers(2**31 - 1))


class PoolVectorEnv(gymnasium.vector.VectorEnv):
    """Next-step-autoreset ``VectorEnv`` of batched training tables with the opponent pool inside.

    Args:
        config: RLlib's env config (a dict or ``EnvContext``) with the keys of :data:`FAST_KEYS`
            (the training configuration's keys of the same names; ``env_options``: the table's
            options, ``reward_scheme`` included) and ``num_envs`` (learner slots: tables times
            ``learner_seats``); ``worker_index`` (the env runner's, default 0) picks the seed.

    Spaces: observation ``Dict(observation=Box float32 (obs_size,), action_mask=Box int8
    (num_actions,))`` per slot (``obs_size`` includes the encoder's features); action
    ``Discrete(num_actions)``. Infos: at the end of an episode ``final_score`` (int points) and
    ``win_share`` of the learner seat (arrays with ``_final_score``/``_win_share`` masks).

    Raises:
        ConfigError: a missing key, a value outside its legal range (``learner_seats``,
            ``num_envs``, ``reward_scale``, ``seed``, the pool's probabilities: named with the
            legal values); ValueError: ``num_envs`` not a multiple of ``learner_seats``.
    """

    metadata = {"autoreset_mode": gymnasium.vector.AutoresetMode.NEXT_STEP}

    def __init__(self, config: Mapping[str, Any]) -> None:
        c = dict(config)
        missing = [k for k in ("game", "num_envs", *FAST_KEYS) if k not in c and k not in OPTIONAL_KEYS]
        if missing:
            raise ConfigError(f"env config lacks {missing}; legal: a config with 'game', 'num_envs' and the keys "
                              f"{list(FAST_KEYS)} (those of the training configuration)")
        L = check_int_range("learner_seats", c["learner_seats"], 1, 6)     # 1.7 and 0 were truncated / divided by
        n = check_int_range("num_envs", c["num_envs"], 1, 1 << 24)
        check_reward_scale(c.get("reward_scale", 1.0))
        check_seed(c.get("seed", 0))   # -1 and 1.5 were a bare ValueError and a truncation
        if n % L:
            raise ValueError(f"num_envs={n} is not a multiple of learner_seats={L}; legal: tables * learner_seats")
        env_options = _env_options(c.get("env_options"))
        players = c["players"]          # a count, as the learner env takes it, or a list (an int was a TypeError)
        players = [players] if isinstance(players, (int, np.integer)) else players
        if isinstance(players, (str, bytes, Mapping)) or not hasattr(players, "__iter__"):
            raise ConfigError(f"players={players!r}; legal: a table size or a list of table sizes")
        self.game = c["game"]
        self.pool = OpponentPool(self.game, c["heuristics"], c["pool_size"], c["p_latest"], c["p_past"],
                                 c["p_heuristic"], c["opponent_deterministic"], options=c.get("heuristic_options"))
        seed = runner_seed(c.get("seed", 0), getattr(config, "worker_index", c.get("worker_index", 0)))
        self.venv, self.opponents = make_learner_vector_env(self.game, n // L, list(players), L, self.pool,
                                                            env_options, seed=seed)
        self.scale = np.float32(c.get("reward_scale", 1.0))
        self.encoder = get_encoder(c.get("obs_encoder", "none"), self.game)
        self.num_envs = n
        inner = self.venv.single_observation_space
        num_actions = int(self.venv.single_action_space.n)
        obs_size = int(inner["observation"].shape[0]) + int(self.encoder.extra)
        high = np.inf if self.encoder.extra else inner["observation"].high
        self.single_observation_space = spaces.Dict({
            "observation": spaces.Box(np.float32(-np.inf if self.encoder.extra else 0.0), high, (obs_size,),
                                      np.float32),
            "action_mask": spaces.Box(0, 1, (num_actions,), np.int8),
        })
        self.single_action_space = spaces.Discrete(num_actions)
        self.observation_space = gymnasium.vector.utils.batch_space(self.single_observation_space, n)
        self.action_space = spaces.MultiDiscrete([num_actions] * n)
        self._pending = np.zeros(n, bool)   # slots whose new game waits one step (next-step autoreset)

    # ---- the opponent pool, kept in step by the driver -----------------------------------------
    def sync_pool(self, latest: Optional[bytes], snapshots: list[str], new: Mapping[str, bytes]) -> None:
        """Make this env's pool the driver's: ``latest`` the learner's actor (``NumpyPolicy.to_bytes``,
        None: unchanged), the past snapshots ``snapshots`` (names, oldest first) whose arrays are
        either already here or in ``new`` (``{name: NumpyPolicy.to_bytes()}``; nothing is unpickled).
        Games in progress keep their opponents when those stay (``BatchOpponents.refresh``).

        Raises:
            KeyError: a snapshot neither here nor in ``new``.
        """
        if latest is not None:
            self.pool.update_latest(NumpyPolicy.from_bytes(latest))
        have = dict(self.pool.past)
        for name, data in new.items():
            have[name] = NumpyPolicy.from_bytes(data)
        self.pool.past = OrderedDict((name, have[name]) for name in snapshots)

    def pool_members(self) -> list[str]:
        """The pool's labels now (``latest``, ``past:<name>``, ``heuristic:<bot>``)."""
        return self.pool.labels()

    # ---- Gymnasium API ---------------------------------------------------------------------------
    def _encode(self, obs: dict) -> dict:
        if not self.encoder.identity:
            obs["observation"] = self.encoder.encode_batch(obs["observation"], obs["action_mask"])
        return obs

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        """Deal a new game at every table (``seed``: the tables' seed, None: keep the stream;
        ``options`` unused) after giving the tables the pool's current opponents.

        Returns:
            ``(obs, {})``: ``obs`` the batched observation dict, ``"observation"`` float32
            (num_envs, obs_size) and ``"action_mask"`` int8 (num_envs, num_actions); no slot is held.
        """
        self.opponents.push_if_changed(self.venv)
        obs, _ = self.venv.reset(seed=seed)
        self._pending[:] = False
        return self._encode(obs), {}

    def step(self, actions):
        """One step (see the module docstring): held slots show their new game's first
        observation with reward 0; slots whose game ended show its last observation, the
        learner seat's final reward (times ``reward_scale``) and ``terminated``.

        Raises:
            IllegalActionError: an illegal learner action (the tables always raise).
        """
        self.opponents.push_if_changed(self.venv)
        hold = self._pending.copy()
        obs, rewards, dones, truncs, infos = self.venv.step(np.asarray(actions).reshape(-1), hold=hold)
        obs = self._encode(obs)
        if dones.any():
            d = np.flatnonzero(dones)
            last = np.stack([infos["final_obs"][k]["observation"] for k in d])
            obs["observation"][d] = 0.0   # an encoder's features of a finished game: 0 (never acted on)
            obs["observation"][d, :last.shape[1]] = last
            obs["action_mask"][d] = 1     # nothing is played from a last observation (the next step holds)
        self._pending = dones.copy()
        out = {k: infos[k] for k in ("final_score", "_final_score", "win_share", "_win_share") if k in infos}
        return obs, (rewards * self.scale).astype(np.float32), dones, truncs, out


def _env_options(options: Any) -> dict:
    """The ``env_options`` of an env config as a dict (None: none).

    Raises:
        ConfigError: not a mapping (the legal values named).
    """
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise ConfigError(f"env_options={options!r}; legal: None or a dict of the env's options "
                          f"(reward_scheme, rule options...)")
    return dict(options)


def make_fast_env(config: Mapping[str, Any]) -> PoolVectorEnv:
    """RLlib's env creator of the fast path (called with the env config plus ``num_envs``)."""
    return PoolVectorEnv(config)


def make_per_agent_env(config: Mapping[str, Any]):
    """RLlib's ``PettingZooEnv`` around the game's AEC raw env (every seat acts through RLlib).

    Args:
        config: ``game``, ``num_players`` (one table size), ``env_options`` (optional, the env's
            options; ``illegal_action`` is always ``"raise"``).

    Raises:
        ConfigError: a missing key (``game``, ``num_players``; it was a bare KeyError), a bad
            value or option (named with its legal values; ``num_players=2.7`` is refused, not
            truncated).
    """
    if not isinstance(config, Mapping):
        raise ConfigError(f"env config {config!r}; legal: a dict with the keys ['game', 'num_players'] "
                          f"(and optionally 'env_options')")
    missing = [k for k in ("game", "num_players") if k not in config]
    if missing:
        raise ConfigError(f"env config lacks {missing}; legal: a config with the keys ['game', 'num_players'] "
                          f"(and optionally 'env_options')")
    opts = dict(_env_options(config.get("env_options")), illegal_action="raise")
    # num_players as given: the raw env's own check names the game's table sizes (int() truncated 2.7)
    env = make_raw_env(config["game"], num_players=config["num_players"], **opts)
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    return PettingZooEnv(env)
