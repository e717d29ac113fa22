"""Vectorized training environments of Ronda Robada over the batched engine.

B games run in one :class:`~robada_env.rules.batched.BatchedRobada`. In each game one seat is the
learner (drawn uniformly per game at every deal); the other seats are played, in batch, by
opponent policies, so a learner step never steps games one at a time:

* :class:`RobadaVecEnv`: a stable-baselines3 ``VecEnv`` (``num_envs = B``) with
  ``action_masks()`` as sb3-contrib's ``MaskablePPO`` asks for it. Observations float32
  (B, 192); actions ``Discrete(27)``.
* :class:`RobadaVectorEnv`: a ``gymnasium.vector.VectorEnv`` view (dict observations
  ``{"observation", "action_mask"}``, same-step autoreset) for other libraries.

Every ``step`` applies the learner's action in every game, then lets the opponents play until
it is the learner's turn again (a turn is several decisions; the learner keeps the turn while
its run goes on) or the game is over. The learner's reward is 0 until the end; at the end it is
the learner seat's final reward under ``reward_scheme`` (``hod.core.rewards``), also when an
opponent made the last move. A finished game is reset at once (SB3's convention: its last
observation goes to ``info["terminal_observation"]``; ``info["episode"]`` feeds SB3's episode
statistics; ``final_score``, ``win_share``, ``seat`` and ``num_players`` come with it).

Opponent policies (as in :mod:`hod.training.tapeo_vector`): a callable ``policy(observations, masks) ->
actions`` on float32 (m, 192) observations of the seats to act and their int8 (m, 27) masks,
returning m legal actions. A policy with ``needs_observation = False`` (like
:class:`RandomPolicy`, the default) gets an empty (m, 0) array instead of observations, which
saves encoding the opponents' seats. :class:`BotPolicy` turns a per-observation
``hod.agents.base.Bot`` into a batch policy. With several policies, each opponent seat of each game is
given one, drawn when that game is dealt: uniformly, or with the probabilities
``opponent_weights`` (one per policy; the self-play pool's sampling scheme in
``hod.training.batched_env``).

Table sizes: ``num_players`` may be a list of sizes; the tables are then split as evenly as
possible among them (each size is its own batched engine), as in :mod:`hod.training.tapeo_vector`.
Ronda Robada is turn-based, so there is exactly one learner seat per game (``learner_seats=1``).
"""
from __future__ import annotations

import time
from typing import Any, Optional, Sequence, Union

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv as GymVectorEnv
from gymnasium.vector.utils import batch_space

from hod.adapters.options import check_reset_options, check_seed
from hod.agents import batch_policies
from hod.training.sb3_vec_env import CoreOpponents, MaskedVecEnv
from hod.core.errors import ConfigError, check_int_range

from robada_env.rules.actions import NOOP, NUM_ACTIONS
from hod.core.deal import draw_seeds
from robada_env.rules.batched import NAME, BatchedRobada, random_legal_actions, win_shares
from robada_env.rules.engine import MAX_PLAYERS, MIN_PLAYERS
from robada_env.rules.observation import OBS_SIZE

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

    game = NAME


def _as_policies(opponents: Any) -> list:
    return batch_policies.as_policies(opponents, BotPolicy)


class LearnerGames:
    """B games of one table size, a learner seat per game, opponents played in batch: the core
    of :class:`RobadaVecEnv` and :class:`RobadaVectorEnv`.

    Args:
        num_games: B.
        num_players: 2..4.
        policies: opponent batch policies (at least one).
        reward_scheme: see ``hod.core.rewards``.
        rng: generator of the deals, learner seats and opponents' draws.
        weights: drawing probability of each policy (from ``batch_policies.check_weights``;
            None = uniform).
        **rules: options of :class:`robada_env.rules.engine.Config`.

    Attributes:
        engine: the :class:`~robada_env.rules.batched.BatchedRobada`.
        learner: int8 (B,) the learner's seat in each game (drawn uniformly at each deal).
        decisions: total decisions applied so far (learners' and opponents').
    """

    def __init__(self, num_games: int, num_players: int, policies: list, reward_scheme: str,
                 rng: np.random.Generator, weights: Optional[np.ndarray] = None, **rules: Any) -> None:
        self.engine = BatchedRobada(num_players, num_games, reward_scheme=reward_scheme, **rules)
        self.num_games = B = num_games
        self.n = self.engine.num_players
        self.rng = rng
        self.policies = policies
        self.weights = weights
        self.assign = np.zeros((B, self.n), np.int16)      # policy index per (game, seat)
        self.learner = np.zeros(B, np.int8)
        self.ep_return = np.zeros(B, np.float64)
        self.ep_len = np.zeros(B, np.int64)
        self.decisions = 0

    def _deal(self, games: Optional[np.ndarray]) -> None:
        g = np.arange(self.num_games) if games is None else games
        self.engine.reset(games=g, seeds=draw_seeds(self.rng, g.size))
        self.learner[g] = self.rng.integers(0, self.n, g.size)
        if len(self.policies) > 1:
            self.assign[g] = batch_policies.draw_policies(self.rng, len(self.policies), (g.size, self.n),
                                                          self.weights)
        self.ep_return[g] = 0
        self.ep_len[g] = 0

    def reset(self) -> None:
        """New deals and learner seats everywhere, played up to each learner's first decision."""
        self._deal(None)
        self.play_opponents()

    def play_opponents(self) -> None:
        """Let the opponents decide, in batch, until every game waits for its learner or is over."""
        e = self.engine
        while True:
            pend = np.flatnonzero((e.current != self.learner) & ~e.terminal)
            if pend.size == 0:
                return
            masks = e.legal_mask(pend)[:, 0]
            if len(self.policies) == 1:
                acts = self._ask(self.policies[0], pend, masks)
            else:
                who = self.assign[pend, e.current[pend]]
                acts = np.empty(pend.size, np.int64)
                for k, pol in enumerate(self.policies):
                    sub = np.flatnonzero(who == k)
                    if sub.size:
                        acts[sub] = self._ask(pol, pend[sub], masks[sub])
            e.step(acts[:, None], games=pend)
            self.decisions += pend.size

    def _ask(self, pol, games: np.ndarray, masks: np.ndarray) -> np.ndarray:
        if getattr(pol, "needs_observation", True):
            obs = self.engine.observe(games)[:, 0]
        else:
            obs = np.empty((games.size, 0), np.float32)
        return np.asarray(pol(obs, masks)).reshape(games.size)

    def step(self, actions: np.ndarray, games: Optional[np.ndarray] = None):
        """Apply the learners' actions, let the opponents play, deal again where a game ended.

        Args:
            actions: int (B,) one action per game (only those of ``games`` are used).
            games: int indices of the games that move (None: all); the others keep their
                position (a game dealt on the previous step that waits, for next-step autoreset).

        Returns:
            ``(rewards float32 (B,), dones bool (B,), finished)``: ``finished`` is None, or for
            the m games that ended, a dict of ``games`` (indices), ``final_obs`` float32
            (m, 192) (the learner's last observation), ``final_score``, ``win_share``, ``seat``,
            ``return``, ``length`` (m,) each.

        Raises:
            IllegalActionError: a learner action outside its mask (nothing changes).
        """
        e = self.engine
        actions = np.asarray(actions).reshape(self.num_games)
        if games is None:
            e.step(actions[:, None])
            self.decisions += self.num_games
            self.ep_len += 1
        elif len(games):
            e.step(actions[games][:, None], games=games)
            self.decisions += len(games)
            self.ep_len[games] += 1
        self.play_opponents()
        dones = e.terminal.copy()
        rewards = np.zeros(self.num_games, np.float32)
        if not dones.any():
            return rewards, dones, None
        d = np.flatnonzero(dones)
        rows = np.arange(d.size)
        seat = self.learner[d].astype(np.intp)
        r = e.final_rewards(d)[rows, seat]
        rewards[d] = r
        self.ep_return[d] += r
        scores = e.scores(d)
        finished = {
            "games": d, "final_obs": e.observe(d, seats=np.arange(self.n))[rows, seat],
            "final_score": scores[rows, seat].astype(np.int64),
            "win_share": win_shares(scores)[rows, seat], "seat": seat,
            "return": self.ep_return[d].copy(), "length": self.ep_len[d].copy(),
        }
        self._deal(d)
        self.play_opponents()
        return rewards, dones, finished


class _LearnerTables:
    """Several :class:`LearnerGames` (one per table size) seen as one vector of games."""

    def __init__(self, num_tables: int, num_players: Union[int, Sequence[int]], learner_seats: int,
                 opponents: Any, reward_scheme: str, seed: Optional[int], rules: dict,
                 opponent_weights: Optional[Sequence[float]] = None) -> None:
        counts = [num_players] if isinstance(num_players, (int, np.integer)) else list(num_players)
        if not counts:
            raise ConfigError(f"num_players must be a count or a list of counts in {MIN_PLAYERS}..{MAX_PLAYERS}")
        counts = [check_int_range("num_players", c, MIN_PLAYERS, MAX_PLAYERS) for c in counts]
        if isinstance(num_tables, bool) or not isinstance(num_tables, (int, np.integer)) or num_tables < len(counts):
            raise ConfigError(f"num_tables={num_tables!r} must be an integer >= {len(counts)} (one per table size)")
        check_int_range("learner_seats", learner_seats, 1, 1)    # turn-based: one learner seat per game
        self.seed = 0 if seed is None else int(seed)
        self.policies = [RandomPolicy([self.seed, 7919])] if opponents is None else _as_policies(opponents)
        self.weights = batch_policies.check_weights(opponent_weights, len(self.policies))
        self.rng = np.random.default_rng([self.seed, 1])
        split = [num_tables // len(counts) + (i < num_tables % len(counts)) for i in range(len(counts))]
        self.groups = [LearnerGames(t, n, self.policies, reward_scheme, self.rng, self.weights, **rules)
                       for t, n in zip(split, counts)]
        self.num_envs = num_tables
        self.slices, at = [], 0
        for g in self.groups:
            self.slices.append(slice(at, at + g.num_games))
            at += g.num_games
        self.t0 = time.time()

    @property
    def decisions(self) -> int:
        return sum(g.decisions for g in self.groups)

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
        self.policies, self.weights = pols, w
        for g in self.groups:
            g.assign = batch_policies.carry_over(g.assign, g.policies, pols, self.rng, w)
            g.policies, g.weights = pols, w

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
            for g in self.groups:
                g.rng = self.rng
        for g in self.groups:
            g.reset()

    def observations(self) -> np.ndarray:
        """float32 (N, 192): every learner's observation now (a new array)."""
        if len(self.groups) == 1:
            return self.groups[0].engine.observe()[:, 0].copy()
        return np.concatenate([g.engine.observe()[:, 0] for g in self.groups])

    def masks(self) -> np.ndarray:
        """int8 (N, 27): every learner's legal actions now (a new array)."""
        if len(self.groups) == 1:
            return self.groups[0].engine.legal_mask()[:, 0].copy()
        return np.concatenate([g.engine.legal_mask()[:, 0] for g in self.groups])

    def seats(self) -> np.ndarray:
        """int64 (N,): the learner's seat in each game."""
        return np.concatenate([g.learner for g in self.groups]).astype(np.int64)

    def step(self, actions: np.ndarray, hold: Optional[np.ndarray] = None):
        """Apply the learners' actions (except in held games), let the opponents play.

        Args:
            actions: int (N,) one per game. hold: bool (N,) games that do not move this step
                (a new game dealt on the previous step that waits: next-step autoreset), or None.

        Returns:
            ``(rewards float32 (N,), dones bool (N,), final: dict slot -> info)``; a held game
            gets reward 0 and done False.
        """
        actions = np.asarray(actions).reshape(-1)
        if actions.shape[0] != self.num_envs:
            raise ValueError(f"expected {self.num_envs} actions (one per game), got {actions.shape[0]}")
        rewards = np.zeros(self.num_envs, np.float32)
        dones = np.zeros(self.num_envs, bool)
        final: dict[int, dict] = {}
        now = round(time.time() - self.t0, 6)
        for g, sl in zip(self.groups, self.slices):
            moving = None if hold is None or not hold[sl].any() else np.flatnonzero(~hold[sl])
            r, d, fin = g.step(actions[sl], moving)
            rewards[sl] = r
            dones[sl] = d
            if fin is None:
                continue
            for i, k in enumerate(fin["games"]):
                final[sl.start + int(k)] = {
                    "terminal_observation": fin["final_obs"][i].copy(), "TimeLimit.truncated": False,
                    "final_score": int(fin["final_score"][i]), "win_share": float(fin["win_share"][i]),
                    "seat": int(fin["seat"][i]), "num_players": g.n,
                    "episode": {"r": float(fin["return"][i]), "l": int(fin["length"][i]), "t": now},
                }
        return rewards, dones, final


class RobadaVecEnv(MaskedVecEnv):
    """stable-baselines3 ``VecEnv`` of Ronda Robada games over the batched engine, one learner
    seat per game (see the module docstring); sb3-contrib's ``MaskablePPO`` reads its masks
    through ``action_masks()`` / ``env_method("action_masks")``.

    Args:
        num_tables: games played at once (= ``num_envs``; at least the number of table sizes).
        num_players: table size 2..4, or a list of sizes (tables split evenly among them).
        learner_seats: must be 1 (turn-based game; the argument mirrors ``TapeoVecEnv``).
        opponents: a batch policy, an ``hod.agents.base.Bot``, or a list of them (drawn per seat and
            game); None = :class:`RandomPolicy`.
        reward_scheme: ``"points"``, ``"win_loss"`` or ``"margin"``.
        seed: base seed (deals, learner seats, opponents' draws).
        opponent_weights: probability of each entry of ``opponents`` (normalised; None = uniform).
        **rules: options of :class:`robada_env.rules.engine.Config`.

    Observation space: Box float32 (192,); action space: Discrete(27); ``action_masks()``:
    bool (num_envs, 27).

    Raises:
        ConfigError: a value outside its legal range (named in the message).
        IllegalActionError: in ``step``, a learner action outside its mask (nothing changes).
    """

    def __init__(self, num_tables: int = 64, num_players: Union[int, Sequence[int]] = 2,
                 learner_seats: int = 1, opponents: Any = None, reward_scheme: str = "points",
                 seed: Optional[int] = 0, opponent_weights: Optional[Sequence[float]] = None,
                 **rules: Any) -> None:
        self.core = _LearnerTables(num_tables, num_players, learner_seats, opponents, reward_scheme, seed, rules,
                                   opponent_weights)
        super().__init__(self.core.num_envs, spaces.Box(0.0, 1.0, (OBS_SIZE,), np.float32),
                         spaces.Discrete(NUM_ACTIONS))
        self._actions: Optional[np.ndarray] = None

    def set_opponents(self, opponents: Any, weights: Optional[Sequence[float]] = None) -> None:
        """See :meth:`_LearnerTables.set_opponents`."""
        self.core.set_opponents(opponents, weights)

    @property
    def learner_seats_now(self) -> np.ndarray:
        """int64 (num_envs,): the learner's seat in each game now."""
        return self.core.seats()

    @property
    def decisions(self) -> int:
        """Total decisions applied (learners' and opponents'): the agent-steps played."""
        return self.core.decisions

    def reset(self) -> np.ndarray:
        seed = self._seeds[0] if self._seeds else None
        self.core.reset(seed)
        self._reset_seeds()
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return self.core.observations()

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions)

    def step_wait(self):
        rewards, dones, final = self.core.step(self._actions)
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for slot, info in final.items():
            infos[slot] = info
        return self.core.observations(), rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        """bool (num_envs, 27): the legal actions of every learner now."""
        return self.core.masks().astype(bool)


class RobadaVectorEnv(CoreOpponents, GymVectorEnv):
    """Gymnasium ``VectorEnv`` view of the same games (arguments as :class:`RobadaVecEnv`).

    Observations are dicts ``{"observation": float32 (num_envs, 192), "action_mask": int8
    (num_envs, 27)}``; actions ``MultiDiscrete([27] * num_envs)``; autoreset ``SAME_STEP``: a
    finished game is dealt again within the step, its last observation is in
    ``infos["final_obs"]`` (object array, ``infos["_final_obs"]`` marks the games) and
    ``infos["final_score"]``, ``infos["win_share"]`` hold the results (``infos["_final_score"]``
    marks them). ``infos["seat"]`` is always the learner's seat in each game. Games are never
    truncated (a game ends within ``engine.MAX_GAME_LENGTH`` decisions).
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(self, num_tables: int = 64, num_players: Union[int, Sequence[int]] = 2,
                 learner_seats: int = 1, opponents: Any = None, reward_scheme: str = "points",
                 seed: Optional[int] = 0, opponent_weights: Optional[Sequence[float]] = None,
                 **rules: Any) -> None:
        self.core = _LearnerTables(num_tables, num_players, learner_seats, opponents, reward_scheme, seed, rules,
                                   opponent_weights)
        self.num_envs = n = self.core.num_envs
        self.single_observation_space = spaces.Dict({
            "observation": spaces.Box(0.0, 1.0, (OBS_SIZE,), np.float32),
            "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), np.int8),
        })
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, n)
        self.action_space = spaces.MultiDiscrete([NUM_ACTIONS] * n)

    def _obs(self) -> dict:
        return {"observation": self.core.observations(), "action_mask": self.core.masks()}

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        """Deal every game again (``seed``: :meth:`_LearnerTables.reset`; ``options``: None or a
        dict, ignored). Raises ConfigError for a bad ``seed`` or ``options``; nothing changes."""
        check_reset_options(options)
        self.core.reset(seed)
        return self._obs(), {"seat": self.core.seats()}

    def step(self, actions, hold: Optional[np.ndarray] = None):
        """Gymnasium's ``(obs, rewards, terminations, truncations, infos)`` after one step of every
        game but the held ones (``hold``: bool (num_envs,), :meth:`_LearnerTables.step`)."""
        rewards, dones, final = self.core.step(actions, hold)
        infos: dict[str, Any] = {"seat": self.core.seats()}
        if final:
            n = self.num_envs
            fo = np.full(n, None, dtype=object)
            score = np.zeros(n, np.int64)
            share = np.zeros(n)
            for slot, info in final.items():
                fo[slot] = {"observation": info["terminal_observation"], "action_mask": _FINAL_MASK.copy()}
                score[slot] = info["final_score"]
                share[slot] = info["win_share"]
            infos.update({"final_obs": fo, "_final_obs": dones.copy(), "final_score": score,
                          "_final_score": dones.copy(), "win_share": share, "_win_share": dones.copy()})
        return self._obs(), rewards.astype(np.float64), dones, np.zeros(self.num_envs, bool), infos

    def action_masks(self) -> np.ndarray:
        """bool (num_envs, 27) legal actions now."""
        return self.core.masks().astype(bool)


#: Mask of a finished game (only ``no-op``), as ``engine.legal_mask`` gives it.
_FINAL_MASK = np.zeros(NUM_ACTIONS, np.int8)
_FINAL_MASK[NOOP] = 1


#: The Gymnasium ``VectorEnv`` view of this game's batched training tables (the SB3 ``VecEnv`` is the
#: declaration's ``vector_env``); :func:`hod.training.batched_env.make_batched_vector_env` finds it here.
GYMNASIUM_VECTOR_ENV = RobadaVectorEnv
