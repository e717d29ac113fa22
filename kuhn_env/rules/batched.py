"""B games of Kuhn poker at once: :class:`BatchedKuhn`, the game's
:class:`hod.core.engine.BatchedEngine` (shapes: :mod:`hod.core.engine`; M = 1, the seat to act).

It is the rules' batch functions (:mod:`kuhn_env.rules.engine`, :mod:`kuhn_env.rules.observation`)
called on its whole record: the single-game engine is the same functions on a record of batch 1,
so game ``k`` reset with ``seeds[k]`` is ``new_game(config, seed=seeds[k])`` and plays on as it.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from hod.core.deal import as_seeds, check_generator_seed, draw_seeds
from hod.core.engine import EngineStep, check_games, check_record, check_seats, observation_buffer
from hod.core.errors import ConfigError, IllegalActionError, UnknownOptionError, check_choice
from hod.core.rewards import REWARD_SCHEMES, final_rewards_batch

from . import engine
from .engine import NOOP, NUM_ACTIONS, NUM_PLAYERS, Config, KuhnState, action_name
from .observation import OBS_SIZE, encode_batch


def random_legal_actions(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of ``mask`` (int8 or bool (G, 3), at least one
    legal action per row): int64 (G,), the k-th legal action for k = floor(u * count).

    Raises:
        ValueError: a row allows no action.
    """
    cs = np.cumsum(np.asarray(mask), axis=1, dtype=np.int16)
    cnt = cs[:, -1]
    if cnt.size and cnt.min() <= 0:
        raise ValueError(f"row {int(np.argmin(cnt))} of the mask allows no action")
    k = (rng.random(cnt.size) * cnt).astype(np.int16)
    return (cs <= k[:, None]).sum(1, dtype=np.int64)


class BatchedKuhn:
    """B games of Kuhn poker (:class:`hod.core.engine.BatchedEngine`, sequential: M = 1).

    Args:
        config: a :class:`~kuhn_env.rules.engine.Config`, or the player count (2), or None (2).
        batch_size: B >= 1.
        seed: seed of :attr:`rng` (None, an int in ``0..2**64-1`` or a list of such ints).
        reward_scheme: one of :data:`hod.core.rewards.REWARD_SCHEMES`; the rewards of a step are
            0 except in the games that end on it, which get the scheme's value of their payoffs.

    Raises:
        ConfigError: any bad value (named with the legal ones); ``UnknownOptionError`` for any
            option (the game has none).
    """

    movers = 1
    num_actions = NUM_ACTIONS
    obs_size = OBS_SIZE

    def __init__(self, config: int | Config | None, batch_size: int, seed: Optional[int] = None,
                 reward_scheme: str = "points", **options) -> None:
        if options:
            raise UnknownOptionError(f"unknown option(s) {sorted(options)}; legal options: [] (Kuhn poker has none)")
        if not isinstance(config, Config):
            config = Config(num_players=NUM_PLAYERS if config is None else config)
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
            raise ConfigError(f"batch_size={batch_size!r} must be a positive integer")
        check_choice("reward_scheme", reward_scheme, REWARD_SCHEMES)
        check_generator_seed(seed)
        self.config = config
        self.batch_size = B = int(batch_size)
        self.num_players = NUM_PLAYERS
        self.reward_scheme = reward_scheme
        self.rng = np.random.default_rng(seed)
        self._state = KuhnState.empty(B)
        self._all = np.arange(B, dtype=np.intp)
        self._obs_buffers: dict = {}
        self._dealt = False

    # ---- state ------------------------------------------------------------------------------------
    @property
    def state(self) -> KuhnState:
        """The games' :class:`KuhnState` (the live arrays: ``copy()`` it to keep it)."""
        return self._state

    @property
    def terminal(self) -> np.ndarray:
        """bool (B,): each game is over (the live array: read it, do not write to it)."""
        return self._state.terminal

    @property
    def current(self) -> np.ndarray:
        """int8 (B,): the seat to act in each game (K2; after the end: the seat after the last
        actor), as Ronda Robada's engine's ``current``. A new array."""
        return (self._state.length % NUM_PLAYERS).astype(np.int8)

    def load_state(self, state: KuhnState, games=None) -> None:
        """Put the G games of ``state`` into rows ``games`` (None: all B).

        Raises:
            ConfigError: a record of another type, count or shape, or games no play reaches
                (:func:`kuhn_env.rules.engine.check_games`: the field and game named); nothing
                changes.
        """
        g = check_games(games, self.batch_size, distinct=True)
        check_record(state, self._state, g)
        bad = engine.check_games(state)
        if bad:
            raise ConfigError(f"load_state: {bad} is not a Kuhn game (kuhn_env/RULES.md K1-K2)")
        for name, arr in state.arrays().items():
            getattr(self._state, name)[g] = arr
        self._dealt = True

    def nbytes(self) -> dict:
        """``{"state": bytes of the record, "per_game_state": bytes per game}``."""
        n = self._state.nbytes
        return {"state": n, "per_game_state": n / self.batch_size}

    # ---- play -------------------------------------------------------------------------------------
    def reset(self, games=None, seeds=None, seed: Optional[int] = None) -> None:
        """Deal new games (:func:`kuhn_env.rules.engine.deal`): ``seeds`` uint64 (G,), else drawn
        from :attr:`rng` (reseeded by ``seed`` first).

        Raises:
            ConfigError: bad or repeated games, bad seeds; nothing changes.
        """
        g = check_games(games, self.batch_size, distinct=True)
        check_generator_seed(seed)
        if seeds is not None:
            seeds = as_seeds(seeds, g.size)
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        engine.deal(self._state, g, draw_seeds(self.rng, g.size) if seeds is None else seeds)
        self._dealt = True

    def _check_dealt(self) -> None:
        if not self._dealt:
            raise RuntimeError("call reset() before using the batched engine")

    def legal_mask(self, games=None) -> np.ndarray:
        """int8 (G, 1, 3): the seat to act's legal actions (``pass``, ``bet``; a finished game:
        ``no-op`` only)."""
        self._check_dealt()
        return engine.legal_masks(self._state, check_games(games, self.batch_size))[:, None, :]

    def observe(self, games=None, seats=None, out: Optional[np.ndarray] = None) -> np.ndarray:
        """float32 (G, S, 11): the observation of each of ``seats`` (None: the seat to act), each
        row :func:`kuhn_env.rules.observation.encode` of that seat.

        Raises:
            ConfigError: bad games or seats, or an ``out`` of another shape or dtype.
        """
        self._check_dealt()
        g = check_games(games, self.batch_size)
        if seats is None:
            s = engine.to_act(self._state, g)[:, None]
        else:
            s = np.broadcast_to(check_seats(seats, NUM_PLAYERS)[None, :], (g.size, len(seats)))
        buf = observation_buffer(out, (g.size, s.shape[1], OBS_SIZE), games is None, self._obs_buffers)
        return encode_batch(self._state, g, s, buf)

    def step(self, actions, games=None) -> EngineStep:
        """One action of the seat to act in each game: ``actions`` int (G, 1).

        Raises:
            ValueError: ``actions`` not an int array of shape (G, 1).
            IllegalActionError: an action outside its game's mask (the game, the seat and the
                legal actions named); nothing changes in any game.
            ConfigError: bad or repeated games.
        """
        self._check_dealt()
        g = check_games(games, self.batch_size, distinct=True)
        a = np.asarray(actions)
        if a.shape != (g.size, 1) or not (a.dtype.kind in "iu" or a.size == 0):
            raise ValueError(f"actions must be an int array of shape ({g.size}, 1), got {a.dtype} {a.shape}")
        a = a[:, 0].astype(np.int64)
        bad = np.flatnonzero(engine.illegal(self._state, g, a))
        if bad.size:
            k = int(bad[0])
            b = int(g[k])
            legal = np.flatnonzero(engine.legal_masks(self._state, g[k:k + 1])[0]).tolist()
            who = (f"game {b} (finished)" if self._state.terminal[b]
                   else f"player_{int(engine.to_act(self._state, g[k:k + 1])[0])} in game {b}")
            raise IllegalActionError(who, int(a[k]), legal, action_name)
        ended = engine.apply_actions(self._state, g, a)
        rewards = np.zeros((g.size, NUM_PLAYERS))
        pos = np.flatnonzero(ended)
        if pos.size:
            rewards[pos] = final_rewards_batch(engine.payoffs(self._state, g[pos]),
                                               engine.winner_masks(self._state, g[pos]), self.reward_scheme)
        return EngineStep(rewards, ended, ended.copy())

    def scores(self, games=None) -> np.ndarray:
        """int32 (G, 2): each seat's payoff (K3; 0 until the game's end)."""
        return engine.payoffs(self._state, check_games(games, self.batch_size))

    def random_actions(self, mask: Optional[np.ndarray] = None,
                       rng: Optional[np.random.Generator] = None) -> np.ndarray:
        """int64 (G, 1): a uniformly random legal action per row of ``mask`` (int8 (G, 1, 3);
        default: the whole batch's mask now), drawn from ``rng`` (default :attr:`rng`).

        Raises:
            ValueError: a row of the mask allows no action."""
        m = (self.legal_mask() if mask is None else np.asarray(mask))[:, 0]
        return random_legal_actions(m, self.rng if rng is None else rng)[:, None]


__all__ = ["BatchedKuhn", "NOOP", "random_legal_actions"]
