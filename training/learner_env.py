"""One learner vector env for every declared game: :class:`LearnerVecEnv`.

It plays ``num_tables`` games of a declared game (:class:`hod.core.games.GameInfo`) on the game's
batched engine (``GameInfo.batched_engine``, the :class:`hod.core.engine.BatchedEngine` protocol),
one engine per table size, and is a stable-baselines3 ``VecEnv`` itself (sb3-contrib's
``MaskablePPO`` reads its masks through ``action_masks()`` / ``env_method("action_masks")``).
Nothing here names a game: the declared ``dynamics`` decide how a step goes.

Slots. Every env slot is one learner seat of one game: ``num_envs = num_tables * L``
(``learner_seats = L``). Slot ``k * L + j`` of a table size's block is learner ``j`` of game
``k``; the blocks follow the table sizes in the order given (``num_players``; the tables are split
as evenly as possible among the sizes, the first sizes taking the remainder).

Dynamics.

* ``"simultaneous"`` (every seat decides at once, ``movers == n``): the learner holds seats
  ``0..L-1`` of every game (a symmetric game loses nothing by it); a step is one joint engine
  step: the learners' actions and the opponents' (seats ``L..n-1``, played in batch) together.
  Every step's rewards are paid (``EngineStep.rewards`` of the learner seats).
* ``"sequential"`` (one seat decides, ``movers == 1``): one learner seat per game (``L = 1``),
  drawn uniformly at every deal; a step applies the learner's action, then the opponents play,
  in batch over the games, until a learner is to act again or the game is over. The learner's
  reward is the sum of its seat's ``EngineStep.rewards`` over those engine steps. The seat to act
  is read from the engine's ``current`` (int (B,), the seat to act, which a sequential engine
  exposes beside the protocol).

Randomness (seeded; the same seed plays the same games). The env's generator is
``numpy.random.default_rng([seed, 1])``; table size ``i``'s engine is built with
``seed=[seed, 2, i]``. A simultaneous game deals from its engine's generator and draws the
opponents' policies from the env's; a sequential game draws everything from the env's generator,
per deal: the games' seeds (:func:`hod.core.deal.draw_seeds`), the learner seats, then the
policies of all n seats (the learner's column unused). These are the draw orders of the per-game
envs this class replaced, so runs made with them (the model cards' commands) replay bit for bit
(``tests/training/test_training_learner_env.py``, against recordings of those envs).

Opponents (:mod:`hod.agents.batch_policies`; the default: the game's uniform random one,
:func:`~hod.agents.batch_policies.random_policy`): batch policies ``policy(obs (m, obs_size), masks
(m, A)) -> actions (m,)``; with several, each opponent seat of a game is given one when the game
is dealt (uniformly or with ``opponent_weights``); :meth:`LearnerVecEnv.set_opponents` swaps them
(games in progress keep those that stay). With ``source`` (a
:class:`hod.training.pool.BatchOpponents`) the env follows the pool itself: before
``reset`` and before every step it pushes the source's members when they changed, and after
every step it gives the source the finished games' results (PFSP).

Options: ``encoder`` (:mod:`hod.agents.encoders`, features appended to every observation from
the same step's masks), ``reward_scale`` (a fixed factor on the rewards PPO sees;
``info["episode"]["r"]`` stays in game units) and ``global_state`` (off by default; on, or after
:meth:`LearnerVecEnv.use_global_state`, every row, ``terminal_observation`` included, is followed
by the game's global state, ``engine.global_state()`` once per step for the whole batch, and the
one-hot learner seat of the row: the input of a state critic, :mod:`hod.training.critic`).

Each step computes the learners' masks once, into one buffer (``action_masks()`` reads it), and
writes the observations straight from the engines into a preallocated buffer. Finished games are
dealt again within the step (SB3's convention): the last observation is in
``info["terminal_observation"]``, with ``"TimeLimit.truncated": False``, ``"episode": {"r", "l",
"t"}`` (SB3's episode statistics, as ``VecMonitor`` writes them: game units, decisions of the
learner, seconds since the env was built), ``"final_score"``, ``"win_share"`` (1/k for each of k
winners, else 0), ``"seat"``, ``"num_players"``, ``"scores"`` (int64 (n,)), ``"opponents"`` (the
policy index of each opponent seat, int64 (n - L,)) and ``"opponent_seats"`` (those seats).
"""
from __future__ import annotations

import importlib
import time
from typing import Any, Optional, Sequence

import gymnasium
import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env.base_vec_env import VecEnv

from hod.adapters.options import check_reset_options, check_seed
from hod.agents import batch_policies
from hod.agents.batch_policies import bot_policy, random_policy
from hod.core.deal import draw_seeds
from hod.core.errors import ConfigError, IllegalActionError, check_int_range
from hod.core.games import GameInfo, get_game, load_object
from hod.core.rewards import win_shares_batch

from .pool import BatchOpponents

__all__ = ["LearnerVecEnv", "LearnerVectorEnv", "MaskedVecEnv", "make_learner_vec_env", "make_learner_vector_env",
           "check_reward_scale", "random_policy", "bot_policy"]


class MaskedVecEnv(VecEnv):
    """Base of our SB3 vector envs (:class:`LearnerVecEnv`, :class:`hod.training.vec_env.TableVecEnv`):
    attribute and method access per slot, and the action masks the way sb3-contrib's
    ``MaskablePPO`` asks for them (``env_method("action_masks")`` or a bound ``action_masks``
    attribute). Subclasses implement ``reset``, ``step_async``, ``step_wait`` and
    :meth:`action_masks`; they may override :meth:`_target` (the object that holds slot i's
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


def _info(game: Any) -> GameInfo:
    return game if isinstance(game, GameInfo) else get_game(game)


def check_slot_actions(ids: np.ndarray, masks: np.ndarray, ignore: Optional[np.ndarray] = None,
                       given: Optional[np.ndarray] = None) -> None:
    """Check one action per env slot against that slot's mask, before any game moves (the vector
    envs' rule: a refused step changes nothing).

    Args:
        ids: int64 (N,), the action ids (-1 or any out-of-range id for an action that is none).
        masks: bool or int8 (N, A), the slots' legal actions.
        ignore: bool (N,) or None: slots not checked (held slots, whose action is ignored).
        given: the actions as the caller received them (N,), shown in the message (default ``ids``).

    Raises:
        IllegalActionError: the first slot whose action is not legal, named with the action and
            the slot's legal actions.

    The common case costs one range test and one gather (a uint64 view makes negative ids huge).
    """
    N, A = masks.shape
    flat = masks.reshape(-1)
    rows = np.arange(N, dtype=np.int64) * A
    if (ids.view(np.uint64) < A).all() and flat[rows + ids].all():
        return
    in_range = (ids >= 0) & (ids < A)
    legal = in_range & (flat[rows + np.where(in_range, ids, 0)] != 0)
    bad = np.flatnonzero(~legal if ignore is None else ~legal & ~ignore)
    if bad.size:
        i = int(bad[0])
        x = (ids if given is None else given)[i]
        raise IllegalActionError(f"env slot {i}", x.item() if isinstance(x, np.generic) else x,
                                 np.flatnonzero(masks[i]).tolist())


def check_reward_scale(scale: Any) -> float:
    """``scale`` as a float: the fixed factor on the rewards a training env returns.

    Raises:
        ConfigError: not a positive finite number (a bool neither), naming the legal values.
    """
    if isinstance(scale, (bool, np.bool_)) or not (
            isinstance(scale, (int, float, np.integer, np.floating)) and np.isfinite(scale) and scale > 0):
        raise ConfigError(f"reward_scale={scale!r} must be a positive number; legal: a finite number > 0")
    return float(scale)


class _Size:
    """The games of one table size: an engine, the learner seats, the opponents' policy indices."""

    def __init__(self, engine: Any, n: int, L: int, tables: int, at: int, drawn: bool) -> None:
        self.engine, self.n, self.L, self.tables = engine, n, L, tables
        self.slots = slice(at, at + tables * L)
        self.drawn = drawn                  # sequential: the learner's seat is drawn per deal
        # policy index per (game, seat): the opponent seats L..n-1 (simultaneous) or every seat (drawn)
        self.assign = np.zeros((tables, n if drawn else n - L), np.int64)
        self.learner = np.zeros(tables, np.int64)          # the learner's seat (drawn) per game
        self.others = np.arange(L, n)
        # drawn: the opponent seats when the learner sits in seat q (every other seat, ascending)
        self.opp_seats = [np.delete(np.arange(n), q) for q in range(n)] if drawn else None
        self.ep_ret = np.zeros(tables * L)
        self.ep_len = np.zeros(tables * L, np.int64)
        self.acc = np.zeros(tables)                         # sequential: the learner's reward this step
        self.opp_obs: Optional[np.ndarray] = None           # simultaneous: opponents' observations now
        self.all_games = np.arange(tables)


class LearnerVecEnv(MaskedVecEnv):
    """A stable-baselines3 ``VecEnv`` of one declared game's batched games (the module docstring).

    Args:
        game: the game's name or its :class:`hod.core.games.GameInfo`.
        num_tables: games played at once (at least one per table size).
        num_players: a table size or a list of sizes in the declaration's range.
        learner_seats: L, learner seats per game (``1..smallest size``; 1 for a sequential game).
        opponents: a batch policy, a Bot, or a list of them; None = the game's uniform random
            policy seeded ``[seed, 7919]``.
        opponent_weights: drawing probability of each opponent policy (None = uniform).
        reward_scheme: one of :data:`hod.core.rewards.REWARD_SCHEMES`.
        seed: base seed (above); None (0) or an int in ``0..2**64-1`` (:func:`hod.adapters.options.check_seed`).
        encoder: an observation encoder (:class:`hod.agents.encoders.Encoder`) or None.
        reward_scale: a positive finite factor on the rewards returned.
        source: a :class:`hod.training.pool.BatchOpponents` to follow, or None.
        global_state: append the global state and the seat one-hot to every row
            (:meth:`use_global_state`).
        **engine_options: the engine's own options (Tapeo: ``round_rewards``; Ronda Robada: its
            rule options), checked by the engine.

    Observation space Box float32 (obs_size + encoder extra [+ state size + max_players],); action space Discrete(A);
    ``action_masks()``: bool (num_envs, A), a view of the step's mask buffer (valid until the
    next step).

    Raises:
        ConfigError: a value outside its legal range (named in the message), a game without a
            batched engine, or an engine option the engine refuses.
        IllegalActionError: in ``step``, a learner action outside its mask (nothing changes in
            any game).
    """

    def __init__(self, game: Any, num_tables: int = 64, num_players: int | Sequence[int] = 2,
                 learner_seats: int = 1, opponents: Any = None, opponent_weights: Optional[Sequence[float]] = None,
                 reward_scheme: str = "points", seed: Optional[int] = 0, encoder: Any = None,
                 reward_scale: float = 1.0, source: Any = None, global_state: bool = False,
                 **engine_options: Any) -> None:
        info = self.info = _info(game)
        if info.batched_engine is None:
            raise ConfigError(f"{info.name!r} declares no batched engine; the learner env needs one")
        counts = [num_players] if isinstance(num_players, (int, np.integer)) else list(num_players)
        if not counts:
            raise ConfigError(f"num_players must be a count or a list of counts in "
                              f"{info.min_players}..{info.max_players}")
        counts = [check_int_range("num_players", c, info.min_players, info.max_players) for c in counts]
        num_tables = check_int_range("num_tables", num_tables, len(counts), 1 << 24)
        self.simultaneous = info.dynamics == "simultaneous"
        L = check_int_range("learner_seats", learner_seats, 1, min(counts) if self.simultaneous else 1)
        self.reward_scale = check_reward_scale(reward_scale)
        seed = check_seed(seed)      # -1 was numpy's bare ValueError, 1.5 and True were truncated
        self.seed_value = 0 if seed is None else seed
        self.rng = np.random.default_rng([self.seed_value, 1])
        pols = ([random_policy(info, [self.seed_value, 7919])] if opponents is None
                else batch_policies.as_policies(opponents, lambda b: bot_policy(info, b)))
        self.policies = pols
        self.weights = batch_policies.check_weights(opponent_weights, len(pols))
        self._needs_obs = any(getattr(p, "needs_observation", True) for p in pols)
        Engine = load_object(info.batched_engine)
        split = [num_tables // len(counts) + (i < num_tables % len(counts)) for i in range(len(counts))]
        self.sizes: list[_Size] = []
        at = 0
        for i, (t, n) in enumerate(zip(split, counts)):
            try:
                eng = Engine(n, t, seed=[self.seed_value, 2, i], reward_scheme=reward_scheme, **engine_options)
            except TypeError as e:   # an option the engine does not take: name the ones it does
                import inspect

                if "legal" in str(e):
                    raise ConfigError(f"{info.name} batched engine: {e}") from e
                fixed = {"self", "num_players", "batch_size", "seed"}
                legal = [p for p, v in inspect.signature(Engine).parameters.items()
                         if p not in fixed and v.kind not in (v.VAR_POSITIONAL, v.VAR_KEYWORD)]
                raise ConfigError(f"{info.name} batched engine: {e}; legal options: {legal}") from e
            self.sizes.append(_Size(eng, n, L, t, at, drawn=not self.simultaneous))
            at += t * L
        self.L = L
        eng0 = self.sizes[0].engine
        self.obs_size, self.num_actions = int(eng0.obs_size), int(eng0.num_actions)
        N = at
        self._obs = np.zeros((N, self.obs_size), np.float32)
        self._masks = np.zeros((N, self.num_actions), np.int8)
        self.encoder = None if encoder is None or getattr(encoder, "identity", False) else encoder
        width = self.obs_size if self.encoder is None else self.encoder.size(self.obs_size)
        if self.encoder is None:   # the bounds of the game's observations (its single-game binding's obs_high)
            space = spaces.Box(0.0, importlib.import_module(info.package).raw_env.rules.obs_high, (width,), np.float32)
        else:
            space = spaces.Box(low=-np.inf, high=np.inf, shape=(width,), dtype=np.float32)
        super().__init__(N, space, spaces.Discrete(self.num_actions))
        self.final_masks = False      # finals carry "terminal_mask" (set by LearnerVectorEnv)
        self.decisions = 0            # every decision applied (learners' and opponents'): agent-steps
        self.t0 = time.time()
        self._actions: Optional[np.ndarray] = None
        self.source = source
        self.state_extra = 0          # columns of global state + seat one-hot after each row (use_global_state)
        self._state: Optional[np.ndarray] = None
        if global_state:
            self.use_global_state()
        if source is not None:
            source.push_if_changed(self)

    def use_global_state(self) -> None:
        """From now on every row is ``[observation (width) | global state (S) | seat one-hot
        (max_players)]``: the game's global state (seat-absolute, the batched engine's
        ``global_state()``, float32 (tables, S), once per step per table size) and a 1 at the
        row's learner seat; ``observation_space`` grows to match (bounds: the game's
        ``state_high``, then 1). Call it before ``reset`` and before a model reads the space.

        Raises:
            ConfigError: a game that declares no global state or whose batched engine has no
                ``global_state()`` (legal then: the observation alone).
        """
        info = self.info
        if info.state_layout is None or not all(hasattr(s.engine, "global_state") for s in self.sizes):
            raise ConfigError(f"{info.name!r}: no global state in its batched engine (global_state()); legal: "
                              f"the observation alone (critic_input='observation')")
        if self._state is not None:
            return
        S, P = int(info.state_layout.size), int(info.max_players)
        high = np.asarray(importlib.import_module(info.package).raw_env.rules.state_high, np.float32)
        space = self.observation_space
        self.observation_space = spaces.Box(np.concatenate([space.low, np.zeros(S + P, np.float32)]),
                                            np.concatenate([space.high, high, np.ones(P, np.float32)]),
                                            dtype=np.float32)
        self.state_extra = S + P
        self._state = np.zeros((self.num_envs, S + P), np.float32)
        for s in self.sizes:
            try:
                self._fill_state(s)
            except RuntimeError:   # not dealt yet (before reset): reset fills it
                pass

    def _state_rows(self, s: _Size, games: Optional[np.ndarray], seats: np.ndarray) -> np.ndarray:
        """float32 (G, L, S + P): the global state of ``games`` (None: all) of one size, one row
        per learner of each game, then the one-hot of its seat (``seats`` int (G, L))."""
        g = s.engine.global_state(games)
        S = g.shape[1]
        out = np.zeros((g.shape[0], seats.shape[1], self.state_extra), np.float32)
        out[:, :, :S] = g[:, None, :]
        G, L = seats.shape
        out[np.arange(G)[:, None], np.arange(L)[None, :], S + seats] = 1.0
        return out

    def _fill_state(self, s: _Size) -> None:
        seats = s.learner[:, None] if s.drawn else np.broadcast_to(np.arange(s.L), (s.tables, s.L))
        self._state[s.slots] = self._state_rows(s, None, seats).reshape(s.tables * s.L, self.state_extra)

    # ---- opponents ---------------------------------------------------------------------------------
    def sync(self) -> bool:
        """Push the ``source``'s members when they changed (:meth:`BatchOpponents.push_if_changed`);
        returns whether it did (False without a source)."""
        return self.source is not None and self.source.push_if_changed(self)

    def set_opponents(self, opponents: Any, weights: Optional[Sequence[float]] = None) -> None:
        """Replace the opponent policies and their drawing probabilities ``weights`` (None:
        uniform). A seat whose policy is still there (the same object) keeps it; only a seat
        whose policy left is drawn again (``batch_policies.carry_over``), with the new weights.

        Raises:
            ConfigError: no policy, an entry that is not a policy, or bad weights (nothing changes).
        """
        pols = batch_policies.as_policies(opponents, lambda b: bot_policy(self.info, b))
        w = batch_policies.check_weights(weights, len(pols))
        for s in self.sizes:
            s.assign = batch_policies.carry_over(s.assign, self.policies, pols, self.rng, w)
        self.policies, self.weights = pols, w
        self._needs_obs = any(getattr(p, "needs_observation", True) for p in pols)

    def _draw(self, s: _Size, games: np.ndarray) -> None:
        if len(self.policies) > 1 and len(games):
            s.assign[games] = batch_policies.draw_policies(self.rng, len(self.policies),
                                                           (len(games), s.assign.shape[1]), self.weights)

    def _deal(self, s: _Size, games: Optional[np.ndarray], seed: Any = None) -> None:
        """Deal ``games`` (None: all) of one size, draw their learner seats and opponents."""
        if s.drawn:
            g = s.all_games if games is None else games
            s.engine.reset(games=g, seeds=draw_seeds(self.rng, g.size))
            s.learner[g] = self.rng.integers(0, s.n, g.size)
            self._draw(s, g)
        else:
            if games is None:
                s.engine.reset(seed=seed)
            else:
                s.engine.reset(games=games)
            self._draw(s, s.all_games if games is None else games)

    def _ask(self, pol: Any, s: _Size, games: np.ndarray, seats: Optional[np.ndarray],
             masks: np.ndarray) -> np.ndarray:
        if getattr(pol, "needs_observation", True):
            obs = s.engine.observe(games, seats=seats)
            obs = obs.reshape(-1, obs.shape[-1])
        else:
            obs = np.empty((masks.shape[0], 0), np.float32)
        return np.asarray(pol(obs, masks)).reshape(masks.shape[0])

    def _play_opponents(self, s: _Size) -> None:
        """Sequential: the opponents decide, in batch, until every game waits for its learner or
        is over; their steps' rewards of the learner's seat go to ``s.acc``."""
        e = s.engine
        one = len(self.policies) == 1
        while True:
            # the games named by a bool mask: the engine need not check indices for repeats
            waiting = (e.current != s.learner) & ~e.terminal
            pend = np.flatnonzero(waiting)
            if pend.size == 0:
                return
            masks = e.legal_mask()[pend, 0]    # the whole batch's mask (no games to check), then the rows
            if one:
                acts = self._ask(self.policies[0], s, waiting, None, masks)
            else:
                who = s.assign[pend, e.current[pend]]
                acts = np.empty(pend.size, np.int64)
                for k, pol in enumerate(self.policies):
                    sub = np.flatnonzero(who == k)
                    if sub.size:
                        acts[sub] = self._ask(pol, s, pend[sub], None, masks[sub])
            res = e.step(acts[:, None], games=waiting)
            self.decisions += pend.size
            if res.game_over.any():
                over = np.flatnonzero(res.game_over)
                s.acc[pend[over]] += res.rewards[over, s.learner[pend[over]]]

    def _opponent_actions(self, s: _Size) -> np.ndarray:
        """Simultaneous: int64 (tables, n - L), the opponent seats' actions now (their observations
        from the step's one ``observe`` of every seat, :meth:`_refresh`)."""
        masks = s.engine.legal_mask()[:, s.L:]
        m = s.tables * (s.n - s.L)
        obs = s.opp_obs
        if obs is None and self._needs_obs:     # the opponents changed since the refresh
            obs = s.engine.observe(seats=s.others).copy()
        if len(self.policies) == 1:
            p = self.policies[0]
            o = obs.reshape(m, self.obs_size) if getattr(p, "needs_observation", True) else \
                np.empty((m, 0), np.float32)
            return np.asarray(p(o, masks.reshape(m, self.num_actions))).reshape(s.tables, s.n - s.L)
        out = np.empty((s.tables, s.n - s.L), np.int64)
        for k, p in enumerate(self.policies):
            sel = s.assign == k
            if sel.any():
                o = obs[sel] if getattr(p, "needs_observation", True) else np.empty((int(sel.sum()), 0), np.float32)
                out[sel] = p(o, masks[sel])
        return out

    def _refresh(self, s: _Size) -> None:
        """Write the learners' observations and masks of one size into the step's buffers (and,
        in a simultaneous game whose opponents read observations, keep theirs: one ``observe``
        of every seat, no seat list to check)."""
        e, sl = s.engine, s.slots
        if s.drawn:     # every game waits for its learner: the deciding seat
            e.observe(out=self._obs[sl].reshape(s.tables, 1, self.obs_size))
            self._masks[sl] = e.legal_mask()[:, 0]
            if self._state is not None:
                self._fill_state(s)
            return
        if self._needs_obs and s.n > s.L:
            every = e.observe()                                   # (tables, n, obs): all seats decide
            self._obs[sl].reshape(s.tables, s.L, self.obs_size)[...] = every[:, :s.L]
            s.opp_obs = every[:, s.L:].copy()
        else:
            e.observe(seats=range(s.L), out=self._obs[sl].reshape(s.tables, s.L, self.obs_size))
            s.opp_obs = None
        self._masks[sl] = e.legal_mask()[:, :s.L].reshape(-1, self.num_actions)
        if self._state is not None:
            self._fill_state(s)

    # ---- the VecEnv ---------------------------------------------------------------------------------
    def _observations(self) -> np.ndarray:
        obs = self._obs.copy() if self.encoder is None else self.encoder.encode_batch(self._obs, self._masks.view(bool))
        if self._state is None:
            return obs
        return np.concatenate([obs, self._state], axis=1)

    def reset(self) -> np.ndarray:
        """Deal every game again (seeded by ``seed()`` before, as SB3 does; else the generators
        go on); returns float32 (num_envs, width) observations.

        Raises:
            ConfigError: a bad seed (the message names the legal values); nothing changes.
        """
        self.sync()
        seed = check_seed(self._seeds[0] if self._seeds else None)
        if seed is not None:
            self.seed_value = seed
            self.rng = np.random.default_rng([seed, 1])
        for i, s in enumerate(self.sizes):
            self._deal(s, None, None if seed is None else [self.seed_value, 2, i])
            if s.drawn:
                self._play_opponents(s)
            s.acc[:] = 0
            s.ep_ret[:] = 0
            s.ep_len[:] = 0
            self._refresh(s)
        self._reset_seeds()
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return self._observations()

    def step_async(self, actions: np.ndarray) -> None:
        self.sync()
        self._actions = np.asarray(actions)

    def step_wait(self):
        return self.step_hold(self._actions, None)

    def step_hold(self, actions: np.ndarray, hold: Optional[np.ndarray] = None):
        """One step of every game but the held ones: SB3's ``(obs, rewards, dones, infos)``.

        Args:
            actions: int (num_envs,), one per slot (a held slot's is ignored).
            hold: bool (num_envs,) or None: slots whose game does not move this step (a game
                dealt on the previous step that waits: next-step autoreset, as RLlib's fast path
                asks). In a simultaneous game a table size is held whole or not at all (its
                games last the same number of steps, so they finish together).

        Raises:
            ValueError: wrong number of actions, actions that are not integers, a ``hold`` that is
                not bool (num_envs,), or one covering part of a simultaneous table size's slots.
            IllegalActionError: an illegal action of a slot that moves (the first one named, with
                its legal actions); checked for every slot before any game moves, so nothing
                changes anywhere.
        """
        given = np.asarray(actions)
        actions = given.reshape(-1)
        N = self.num_envs
        if actions.shape[0] != N:
            raise ValueError(f"expected {N} actions (one per env slot), got {actions.shape[0]} (shape {given.shape}); "
                             f"legal: integers of shape ({N},)")
        if actions.dtype.kind not in "iu":   # 2.4 is not action 2, nor '0' action 0
            raise ValueError(f"actions of dtype {actions.dtype} and shape {given.shape}; legal: integers of shape "
                             f"({N},) (one action id per env slot, 0..{self.num_actions - 1})")
        if hold is not None:
            hold = np.asarray(hold)
            if hold.dtype != bool or hold.shape != (N,):
                raise ValueError(f"hold of dtype {hold.dtype} and shape {hold.shape}; legal: None or bool ({N},), "
                                 f"one per env slot")
            for s in self.sizes:      # before any size steps (it was raised after the earlier sizes moved)
                if not s.drawn and hold[s.slots].any() and not hold[s.slots].all():
                    raise ValueError(f"hold covers part of the {s.n}-player tables (slots {s.slots.start}.."
                                     f"{s.slots.stop - 1}); legal: all of a table size's slots or none (its games "
                                     f"finish together)")
        # every moving slot's action against its mask, before any game moves: a refused step changes nothing
        a = actions if actions.dtype == np.int64 else actions.astype(np.int64)
        check_slot_actions(a, self._masks, ignore=hold, given=actions)   # a held slot's action is ignored
        actions = a
        rewards = np.zeros(N, np.float32)
        dones = np.zeros(N, bool)
        infos: list[dict] = [{} for _ in range(N)]
        for s in self.sizes:
            held = None if hold is None or not hold[s.slots].any() else hold[s.slots]
            if s.drawn:
                moving = None if held is None else np.flatnonzero(~held)
                self._step_sequential(s, actions[s.slots], rewards, dones, infos, moving)
            else:
                if held is not None:      # the whole size (a partial hold was refused above)
                    continue
                self._step_simultaneous(s, actions[s.slots], rewards, dones, infos)
            self._refresh(s)
        if self.reward_scale != 1.0:
            rewards = (rewards * self.reward_scale).astype(np.float32)
        if self.source is not None:
            self.source.record_results(infos)
        return self._observations(), rewards, dones, infos

    def _finals(self, s: _Size, games: np.ndarray, seats: np.ndarray, term: np.ndarray,
                dones: np.ndarray, infos: list) -> None:
        """The final infos of ``games`` (m,) of one size: learner ``j`` of game ``games[a]`` sits in
        ``seats[a, j]`` and saw ``term[a, j]`` last."""
        e = s.engine
        scores = e.scores(games).astype(np.int64)
        winners = getattr(e.state, "winners", None)
        won = winners[games] if winners is not None else scores == scores.max(1, keepdims=True)
        shares = win_shares_batch(won)
        now = round(time.time() - self.t0, 6)
        n, L = s.n, s.L
        for a, k in enumerate(games):
            for j in range(L):
                seat = int(seats[a, j])
                slot = s.slots.start + int(k) * L + j
                r = slot - s.slots.start
                opp = s.opp_seats[seat] if s.drawn else s.others
                dones[slot] = True
                infos[slot] = {
                    "terminal_observation": term[a, j].copy(), "TimeLimit.truncated": False,
                    "final_score": int(scores[a, seat]), "win_share": float(shares[a, seat]),
                    "episode": {"r": float(s.ep_ret[r]), "l": int(s.ep_len[r]), "t": now},
                    "seat": seat, "num_players": n, "scores": scores[a].copy(),
                    "opponents": (s.assign[k, opp] if s.drawn else s.assign[k]).copy(),
                    "opponent_seats": opp.copy(),
                }
        if self.final_masks:   # the Gymnasium view's final_obs carry the finished game's mask
            fm = e.legal_mask(games)
            for a, k in enumerate(games):
                for j in range(L):
                    infos[s.slots.start + int(k) * L + j]["terminal_mask"] = fm[a, 0 if s.drawn else j].copy()
        if self.encoder is not None:
            pad = np.zeros(self.encoder.extra, np.float32)
            for k in games:
                for j in range(L):
                    info = infos[s.slots.start + int(k) * L + j]
                    info["terminal_observation"] = np.concatenate([info["terminal_observation"], pad])
        if self._state is not None:   # the finished game's global state and the learner's seat
            rows = self._state_rows(s, games, np.asarray(seats).reshape(len(games), L))
            for a, k in enumerate(games):
                for j in range(L):
                    info = infos[s.slots.start + int(k) * L + j]
                    info["terminal_observation"] = np.concatenate([info["terminal_observation"], rows[a, j]])

    def _step_simultaneous(self, s: _Size, actions: np.ndarray, rewards: np.ndarray, dones: np.ndarray,
                           infos: list) -> None:
        e, L = s.engine, s.L
        picks = np.empty((s.tables, s.n), np.int64)
        picks[:, :L] = actions.reshape(s.tables, L)
        if s.n > L:
            picks[:, L:] = self._opponent_actions(s)
        res = e.step(picks)
        self.decisions += s.tables * s.n
        r = res.rewards[:, :L].reshape(-1)
        rewards[s.slots] = r
        s.ep_ret += r
        s.ep_len += 1
        if res.game_over.any():
            games = np.flatnonzero(res.game_over)
            term = e.observe(games, seats=range(L))
            self._finals(s, games, np.broadcast_to(np.arange(L), (games.size, L)), term, dones, infos)
            rows = (games[:, None] * L + np.arange(L)).reshape(-1)
            s.ep_ret[rows] = 0
            s.ep_len[rows] = 0
            self._deal(s, games)

    def _step_sequential(self, s: _Size, actions: np.ndarray, rewards: np.ndarray, dones: np.ndarray,
                         infos: list, moving: Optional[np.ndarray] = None) -> None:
        e = s.engine
        s.acc[:] = 0
        if moving is None:
            res = e.step(actions[:, None])
            self.decisions += s.tables
            s.ep_len += 1
            if res.game_over.any():
                over = np.flatnonzero(res.game_over)
                s.acc[over] += res.rewards[over, s.learner[over]]
        elif moving.size:
            res = e.step(actions[moving][:, None], games=moving)
            self.decisions += moving.size
            s.ep_len[moving] += 1
            if res.game_over.any():
                over = moving[np.flatnonzero(res.game_over)]
                s.acc[over] += res.rewards[np.flatnonzero(res.game_over), s.learner[over]]
        self._play_opponents(s)
        term_now = e.terminal
        if not term_now.any():
            return
        d = np.flatnonzero(term_now)
        r = s.acc[d].astype(np.float32)
        rewards[s.slots.start + d] = r
        s.ep_ret[d] += r
        seats = s.learner[d]
        term = e.observe(d, seats=range(s.n))[np.arange(d.size), seats][:, None]
        self._finals(s, d, seats[:, None], term, dones, infos)
        s.ep_ret[d] = 0
        s.ep_len[d] = 0
        self._deal(s, d)
        self._play_opponents(s)

    def action_masks(self) -> np.ndarray:
        """bool (num_envs, A): the legal actions of every learner slot now (the step's mask
        buffer, read once per step from the engines; valid until the next step)."""
        return self._masks.view(bool)

    def observations(self) -> np.ndarray:
        """float32 (num_envs, obs_size): every learner's observation now, before the encoder (a copy)."""
        return self._obs.copy()

    def engine_states(self) -> list:
        """Copies of each table size's engine state record (:class:`hod.core.engine.StateRecord`)."""
        return [s.engine.state.copy() for s in self.sizes]

    @property
    def learner_seats_now(self) -> np.ndarray:
        """int64 (num_envs,): each slot's learner seat now."""
        return np.concatenate([np.repeat(s.learner, s.L) if s.drawn else np.tile(np.arange(s.L), s.tables)
                               for s in self.sizes])


class LearnerVectorEnv(gymnasium.vector.VectorEnv):
    """The Gymnasium ``VectorEnv`` view of a :class:`LearnerVecEnv` (arguments as its; libraries other
    than SB3).

    Observations are dicts ``{"observation": float32 (num_envs, width), "action_mask": int8
    (num_envs, A)}``; actions ``MultiDiscrete([A] * num_envs)``; autoreset ``SAME_STEP``: a finished
    game is dealt again within the step, its last observation and mask are in ``infos["final_obs"]``
    (object array; ``infos["_final_obs"]`` marks the slots), and ``infos["final_score"]``,
    ``infos["win_share"]`` hold the results (``infos["_final_score"]``, ``infos["_win_share"]``
    mark them); ``infos["seat"]`` is always each slot's learner seat. Games are never truncated.

    Raises:
        ConfigError: as :class:`LearnerVecEnv`; in ``reset``, a bad ``seed`` or ``options``.
    """

    metadata = {"autoreset_mode": gymnasium.vector.AutoresetMode.SAME_STEP}

    def __init__(self, game: Any, **kwargs: Any) -> None:
        self.env = LearnerVecEnv(game, **kwargs)
        self.env.final_masks = True
        self.num_envs = n = self.env.num_envs
        A = self.env.num_actions
        self.single_observation_space = spaces.Dict({"observation": self.env.observation_space,
                                                     "action_mask": spaces.Box(0, 1, (A,), np.int8)})
        self.single_action_space = spaces.Discrete(A)
        self.observation_space = gymnasium.vector.utils.batch_space(self.single_observation_space, n)
        self.action_space = spaces.MultiDiscrete([A] * n)

    def set_opponents(self, opponents: Any, weights: Optional[Sequence[float]] = None) -> None:
        """:meth:`LearnerVecEnv.set_opponents`."""
        self.env.set_opponents(opponents, weights)

    def action_masks(self) -> np.ndarray:
        """bool (num_envs, A): the legal actions now."""
        return self.env.action_masks()

    def _obs(self, obs: np.ndarray) -> dict:
        return {"observation": obs, "action_mask": self.env._masks.copy()}

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        """Deal every game again (``seed``: None or an int in ``0..2**64-1`` restarts the draws;
        ``options``: None or a dict, ignored). Returns ``(observations, {"seat": int64 (num_envs,)})``."""
        check_reset_options(options)
        check_seed(seed)
        if seed is not None:
            self.env.seed(seed)
        return self._obs(self.env.reset()), {"seat": self.env.learner_seats_now}

    def step(self, actions, hold: Optional[np.ndarray] = None):
        """Gymnasium's ``(obs, rewards float64, terminations, truncations, infos)`` after one step
        of every game but the held ones (``hold``: :meth:`LearnerVecEnv.step_hold`)."""
        self.env.sync()
        obs, rewards, dones, finals = self.env.step_hold(np.asarray(actions), hold)
        infos: dict[str, Any] = {"seat": self.env.learner_seats_now}
        if dones.any():
            n = self.num_envs
            fo = np.full(n, None, dtype=object)
            score = np.zeros(n, np.int64)
            share = np.zeros(n)
            for slot in np.flatnonzero(dones):
                info = finals[slot]
                fo[slot] = {"observation": info["terminal_observation"], "action_mask": info["terminal_mask"]}
                score[slot] = info["final_score"]
                share[slot] = info["win_share"]
            infos.update({"final_obs": fo, "_final_obs": dones.copy(), "final_score": score,
                          "_final_score": dones.copy(), "win_share": share, "_win_share": dones.copy()})
        return self._obs(obs), rewards.astype(np.float64), dones, np.zeros(self.num_envs, bool), infos


def _learner_options(game: str, num_players, opponents, env_options: Optional[dict], seed: int):
    """``(source, players, keywords)`` both learner envs take from the trainer's options: the
    opponents' source (:class:`hod.training.pool.BatchOpponents`), the table sizes, and
    ``opponents``, ``opponent_weights``, ``reward_scheme`` and the rule options.

    Raises:
        ConfigError: an ``illegal_action`` other than ``"raise"``, or a bad rule option.
    """
    opts = dict(env_options or {})
    illegal = opts.pop("illegal_action", "raise")
    if illegal != "raise":
        raise ConfigError(f"illegal_action={illegal!r}: the batched engines always raise; legal values: ['raise']")
    reward_scheme = opts.pop("reward_scheme", "points")
    # bots made by name play the table's rule options (hod.agents.rules)
    src = BatchOpponents(game, opponents, seed, get_game(game).check_rule_options(opts))
    pols, weights = src.refresh()
    players = list(num_players) if isinstance(num_players, (list, tuple)) else num_players
    return src, players, dict(opponents=pols, opponent_weights=weights, reward_scheme=reward_scheme, **opts)


def make_learner_vec_env(game: str, num_tables: int, num_players, learner_seats: int, opponents,
                         env_options: Optional[dict] = None, seed: int = 0, encoder: Any = None,
                         reward_scale: float = 1.0) -> LearnerVecEnv:
    """The training ``VecEnv`` of ``engine = "batched"``: a :class:`LearnerVecEnv` over the game's
    batched engine, following the opponent source.

    Args:
        game: a declared game with a batched engine.
        num_tables: games played at once (at least one per table size).
        num_players: table size or list of sizes (tables split evenly among them).
        learner_seats: learner seats per game (simultaneous game: seats ``0..L-1``; sequential: 1).
        opponents: an opponent source or bot name(s) (:class:`hod.training.pool.BatchOpponents`).
        env_options: ``reward_scheme`` (default ``"points"``), ``illegal_action`` (only
            ``"raise"``), the engine's own options (Tapeo ``round_rewards``, a bool; Ronda Robada's
            rule options).
        seed: base seed (deals, learner seats, opponents' draws and sampling).
        encoder, reward_scale: the env's options.

    Returns:
        the env; ``num_envs = num_tables * learner_seats``; ``env.source`` is the
        :class:`~hod.training.pool.BatchOpponents` it follows.

    Raises:
        ConfigError: a game without a batched engine, ``illegal_action`` other than ``"raise"``,
            an unknown option, or a value outside its range (named in the message).
    """
    src, players, kw = _learner_options(game, num_players, opponents, env_options, seed)
    return LearnerVecEnv(game, num_tables, players, learner_seats, seed=seed, encoder=encoder,
                         reward_scale=reward_scale, source=src, **kw)


def make_learner_vector_env(game: str, num_tables: int, num_players, learner_seats: int, opponents,
                            env_options: Optional[dict] = None, seed: int = 0) -> tuple[LearnerVectorEnv, BatchOpponents]:
    """The Gymnasium ``VectorEnv`` view (:class:`LearnerVectorEnv`: dict observations,
    ``step(actions, hold)``) over the same tables as :func:`make_learner_vec_env`, for libraries
    other than SB3 (Ray RLlib: :mod:`hod.training.rllib.envs`).

    Returns:
        ``(venv, opponents)``: call ``opponents.push_if_changed(venv)`` before a step to keep the
        env's opponents in step with the source.

    Raises:
        ConfigError: as :func:`make_learner_vec_env`.
    """
    src, players, kw = _learner_options(game, num_players, opponents, env_options, seed)
    venv = LearnerVectorEnv(game, num_tables=num_tables, num_players=players, learner_seats=learner_seats,
                            seed=seed, **kw)
    src.push_if_changed(venv)
    return venv, src
