"""The batched-engine protocol every game's batched engine implements, and its state record; and
the single-game interface (:class:`SingleGame`) each game binds for the PettingZoo adapter.

A batched engine plays B games of one game (one ``Config``) at once. Every game declares its
engine in its :class:`hod.core.games.GameInfo` (``batched_engine = "module:Class"``); the
benchmarks, the vector envs of :mod:`hod.training` and the search bots use only what this
protocol declares, with one signature for every game (``tests/contract/test_engine_protocol.py`` checks
each declared game against it).

Shapes. B = ``batch_size``, G = the number of games a call names (``games``: None for all B, an
int array of distinct indices, or a bool mask of shape (B,)), n = ``num_players``, A =
``num_actions``, and M = ``movers``, the seats that decide on each step of a game: every seat
(M = n) in a simultaneous game (Tapeo: every seat picks at once), one seat, the seat to act
(M = 1), in a sequential game (Ronda Robada).

Constructor::

    Engine(config, batch_size, seed=None, reward_scheme="points", **options)

``config`` is the game's ``Config`` or a player count; ``seed`` seeds the engine's own generator
(``rng``: the games' seeds when :meth:`BatchedEngine.reset` is not given them, and
:meth:`BatchedEngine.random_actions`); ``reward_scheme`` is one of
:data:`hod.core.rewards.REWARD_SCHEMES`; ``options`` are game-specific (Tapeo: ``round_rewards``;
Ronda Robada: its rule options when ``config`` is a player count). Bad values raise
:class:`hod.core.errors.ConfigError` naming the legal ones.

State. :attr:`BatchedEngine.state` is a :class:`StateRecord`, a dataclass of numpy arrays with
the batch axis first, holding everything that decides how the games go on (hands, piles, the
seeds later deals are drawn from, ...). ``state.copy()`` is an independent copy,
``state.take(games)`` the record of some games, and ``engine.load_state(record, games)`` puts a
record's G games into the engine's rows ``games``: an engine loaded with another engine's record
plays those games on exactly as the other would (same deals, masks, observations, rewards).
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, NamedTuple, Optional, Protocol, runtime_checkable

import numpy as np

__all__ = ["BatchedEngine", "EngineStep", "SingleGame", "StateRecord"]


class EngineStep(NamedTuple):
    """What :meth:`BatchedEngine.step` returns, for the G games stepped (in the order named).

    Attributes:
        rewards: float64 (G, n), each seat's reward for this step under the engine's reward
            scheme (0 where nothing was scored).
        round_over: bool (G,), a scoring round ended on this step (a game without rounds, e.g.
            Ronda Robada, has one: its end).
        game_over: bool (G,), the game ended on this step.
    """

    rewards: np.ndarray
    round_over: np.ndarray
    game_over: np.ndarray


@dataclass
class StateRecord:
    """Base of the games' state records: a dataclass whose fields are numpy arrays with the batch
    axis first (a field may be None: an optional part no game of the batch uses).

    Subclasses only declare their fields; copying, selecting and writing rows is generic.
    """

    @property
    def batch_size(self) -> int:
        """B, the number of games held (the first array field's length; 0 if none holds one)."""
        return next((len(v) for f in fields(self) if (v := getattr(self, f.name)) is not None), 0)

    @property
    def nbytes(self) -> int:
        """Bytes held by the record's arrays (int)."""
        return sum(v.nbytes for v in self.arrays().values())

    def arrays(self) -> dict[str, np.ndarray]:
        """The fields that hold an array, by name (the arrays themselves, not copies)."""
        return {f.name: v for f in fields(self) if (v := getattr(self, f.name)) is not None}

    def copy(self) -> "StateRecord":
        """An independent copy (every array copied; sharing nothing with this record)."""
        return type(self)(**{f.name: None if (v := getattr(self, f.name)) is None else v.copy()
                             for f in fields(self)})

    def take(self, games) -> "StateRecord":
        """A new record of the games ``games`` (int indices, or a bool mask of shape (B,)), copied."""
        g = np.asarray(games)
        g = np.flatnonzero(g) if g.dtype == bool else g.astype(np.intp, copy=False).reshape(-1)
        return type(self)(**{f.name: None if (v := getattr(self, f.name)) is None else v[g]
                             for f in fields(self)})

    def same_as(self, other: "StateRecord") -> bool:
        """Whether ``other`` holds the same games: same type and equal arrays, field by field
        (a None field equals an all-zero one)."""
        if type(other) is not type(self):
            return False
        for f in fields(self):
            a, b = getattr(self, f.name), getattr(other, f.name)
            if a is None and b is None:
                continue
            if a is None or b is None:
                if (b if a is None else a).any():
                    return False
                continue
            if a.shape != b.shape or a.dtype != b.dtype or not np.array_equal(a, b):
                return False
        return True


@runtime_checkable
class BatchedEngine(Protocol):
    """B games of one game stepped together (shapes: the module docstring).

    Attributes:
        config: the game's ``Config`` every game plays.
        batch_size: B.
        num_players: n.
        num_actions: A, the size of the game's action space.
        obs_size: length of one seat's observation (the game's ``LAYOUT.size``).
        movers: M, seats deciding on each step: n (simultaneous game) or 1 (sequential game).
        reward_scheme: the scheme of :meth:`step`'s rewards.
        rng: the engine's own ``numpy.random.Generator``.

    Two more members that not every game has, read by the learner env
    (:mod:`hod.training.learner_env`) where present: a sequential game's engine has
    ``current``, int (B,), the seat to act in each game; a game whose winners are not simply the
    seats with the top score (Tapeo's tie-break on kept churros, T10) keeps them in its state
    record as ``winners``, bool (B, n). Ronda Robada's engine also takes
    ``step(actions, auto_reset=True, observe=True)``: finished games dealt again inside the step's
    kernel (their final points in ``ended_scores``), for the batch on several cores.
    """

    config: Any
    batch_size: int
    num_players: int
    num_actions: int
    obs_size: int
    movers: int
    reward_scheme: str
    rng: np.random.Generator

    def reset(self, games=None, seeds: Optional[np.ndarray] = None, seed: Optional[int] = None) -> None:
        """Deal new games: ``seeds`` int (G,) in ``0..2**64-1`` (game ``games[k]`` is dealt as the
        single-game engine's ``new_game(config, seed=seeds[k])``), else seeds drawn from ``rng``;
        ``seed`` reseeds ``rng`` first. Raises ``ConfigError`` on bad games or seeds (nothing
        changes)."""

    def legal_mask(self, games=None):
        """int8 (G, M, A): 1 for each legal action of each deciding seat (seat i in column i of
        a simultaneous game; the seat to act in a sequential one). May be an internal buffer,
        valid until the next step or reset: copy it to keep it."""

    def observe(self, games=None, seats=None, out: Optional[np.ndarray] = None):
        """float32 (G, S, obs_size): the observation of each of ``seats`` (S distinct seat
        numbers, the same in every game; None = the deciding seats, S = M), each row equal to
        the game's single encoder ``observation.encode(state, seat)``. Written into ``out``
        (float32 (G, S, obs_size)) when given; otherwise possibly an internal buffer, valid
        until the next step or reset. Raises ``ConfigError`` on bad games or seats."""

    def step(self, actions, games=None) -> EngineStep:
        """Apply one action per deciding seat of each of the G games: ``actions`` int (G, M).
        Returns :class:`EngineStep`. Raises ``ValueError`` (wrong shape or dtype, a game that
        takes no step) or ``hod.core.errors.IllegalActionError`` (an action outside its mask,
        naming the game, the seat and the legal actions); nothing changes in any game then."""

    @property
    def terminal(self) -> np.ndarray:
        """bool (B,): each game is over (read it; do not write to it)."""

    def scores(self, games=None) -> np.ndarray:
        """int32 (G, n): each seat's points so far (the final scores once a game is over)."""

    @property
    def state(self) -> StateRecord:
        """The games' state record (the engine's live arrays: ``copy()`` it to keep it)."""

    def load_state(self, state: StateRecord, games=None) -> None:
        """Put the G games of ``state`` into rows ``games`` (G = len(games); None = all, G = B).
        Raises ``ConfigError`` on a record of another type, count or shape (nothing changes)."""

    def random_actions(self, mask: Optional[np.ndarray] = None,
                       rng: Optional[np.random.Generator] = None) -> np.ndarray:
        """int64 (G, M): a uniformly random legal action per row of ``mask`` (default: the whole
        batch's mask now), drawn from ``rng`` (default: the engine's)."""

    def nbytes(self) -> dict:
        """Memory held in bytes: at least ``{"state": ..., "per_game_state": ...}``."""


@runtime_checkable
class SingleGame(Protocol):
    """One game at a time, as the PettingZoo adapter (:mod:`hod.adapters.game_env`) plays it: the
    single-game interface each game binds in its ``env.py`` over its single-game engine
    (``rules/engine.py``, ``observation.py``, ``render.py``, ``record.py``, ``global_state.py``).
    ``tests/adapters/test_game_env.py`` checks every declared game's binding against it.

    Built once per environment, ``Rules(config, **env_options)``: ``config`` the game's
    ``Config``, the env options those the class declares (``options``). ``state`` below is the
    engine's state of one game (its ``State``), changed in place by :meth:`apply`; ``seat`` an int
    in ``0..n-1``; A = ``num_actions`` of the game's declaration.

    Class attributes:
        Config: the game's rules ``Config`` class, built as ``Config(num_players=n, **rule
            options)`` (the declaration's ``rule_options``); it refuses bad values
            (``ConfigError`` naming the legal ones).
        default_num_players: the table size when none is given.
        options: the env options (``hod.adapters.game_env.EnvOption``) besides the common ones
            and the rule options (Tapeo: ``round_rewards``; Ronda Robada: ``observation_version``).
        obs_high, state_high: upper bounds of the observation and of the global state (a float
            or float32 arrays of the layouts' sizes; the lower bound is 0).
        noop: the action of a seat that is not to act (a sequential game's Parallel form), or
            None (a simultaneous game: every seat acts).

    Attributes:
        config: the ``Config`` of the table.
        layout: the layout of the observations emitted (:class:`hod.core.layout.ObsLayout`).
        turn_ends: per action id (a tuple of A ints, 1 or 0), whether that decision of a
            sequential game ends the seat's turn (``max_cycles`` counts turns; Ronda Robada: a
            ``drop`` or a ``confirm``). A simultaneous step is every seat's turn (not read).
        round_rewards: whether the change of the standings' value is paid at each round's end
            (Tapeo's ``round_rewards`` option); else only at the game's end.
    """

    Config: Any
    default_num_players: int
    options: tuple
    obs_high: Any
    state_high: Any
    noop: Optional[int]
    config: Any
    layout: Any
    round_rewards: bool
    turn_ends: tuple

    def new_game(self, seed: int) -> Any:
        """The game of this table dealt from ``seed`` (an int in ``0..2**64-1``): the engine's
        ``new_game(config, seed=seed)``."""

    def to_act(self, state: Any) -> int:
        """The seat to decide now: the seat to act in a sequential game; 0 in a simultaneous one
        (its AEC form then asks the seats in seat order)."""

    def legal_mask(self, state: Any, seat: int) -> np.ndarray:
        """int8 (A,): 1 for each action ``seat`` may take now (a fresh array); once the game is
        over, and for a seat that is not to act, the game's own convention (Tapeo: all 0; Ronda
        Robada: ``no-op`` only)."""

    def check_action(self, state: Any, seat: int, action: object, agent: str) -> int:
        """``action`` as an int if ``seat`` may take it now: any seat of a simultaneous game, the
        seat to act of a sequential one (the adapter itself refuses anything but ``noop`` from
        the others). Actions are Python or numpy integers of the action space only
        (:func:`hod.core.errors.action_id`). Raises ``IllegalActionError`` naming ``agent`` and
        the legal actions; changes nothing."""

    def apply(self, state: Any, move: Any) -> Optional[bool]:
        """Apply a checked move: a simultaneous game's list of one action per seat, a sequential
        game's one action of the seat to act. Returns True if a scoring round ended (read only
        while the game goes on and only when :attr:`round_rewards`: a game with no round before
        its end may return None)."""

    def observe(self, state: Any, seat: int) -> tuple:
        """``(observation float32 (layout.size,), mask int8 (A,))`` of ``seat``, fresh arrays."""

    def observe_all(self, state: Any) -> tuple:
        """``(float32 (n, layout.size), int8 (n, A))``: :meth:`observe` of every seat, fresh arrays."""

    def terminal(self, state: Any) -> bool:
        """Whether the game is over."""

    def scores(self, state: Any) -> Any:
        """Each seat's points, length n: so far, the final scores once the game is over."""

    def winners(self, state: Any) -> Any:
        """The seats winning on :meth:`scores` now (the final winners once over), ascending."""

    def render(self, state: Any, agents: list) -> str:
        """The position as text (``agents``: the name of each seat)."""

    def record(self, state: Any, seed: Optional[int], players: Optional[list]) -> dict:
        """The JSON record of the finished game (the game's ``rules/record.py`` ``make_record``;
        ``RecordError`` when it is not finished)."""

    def encode_state(self, state: Any) -> np.ndarray:
        """The global state, float32 (state layout size,), in ``[0, state_high]``
        (PettingZoo's ``state()``; a module-level function, so the environments pickle)."""


def check_games(games, batch_size: int, distinct: bool = False) -> np.ndarray:
    """The game indices a call names: intp (G,) from None (all), int indices in
    ``0..batch_size-1`` or a bool mask of shape (batch_size,). Calls that change games (``reset``,
    ``step``, ``load_state``) ask for ``distinct`` indices: a repeated game would take two seeds,
    actions or records and keep one.

    Raises:
        ConfigError: a mask of another shape, indices out of range, not integers, or repeated
            where ``distinct``.
    """
    from .errors import ConfigError

    if games is None:
        return np.arange(batch_size)
    g = np.asarray(games)
    if g.dtype == bool:
        if g.shape != (batch_size,):
            raise ConfigError(f"a bool games mask must have shape ({batch_size},), got {g.shape}")
        return np.flatnonzero(g)
    if g.ndim != 1 or not (np.issubdtype(g.dtype, np.integer) or g.size == 0):
        raise ConfigError(f"games must be distinct indices in 0..{batch_size - 1} or a bool mask "
                          f"of shape ({batch_size},)")
    g = g.astype(np.intp, copy=False)
    if g.size and (g.min() < 0 or g.max() >= batch_size):
        raise ConfigError(f"game indices must be in 0..{batch_size - 1}")
    if distinct and g.size > 1:
        values, counts = np.unique(g, return_counts=True)
        if (counts > 1).any():
            raise ConfigError(f"the games named must be distinct; repeated: {values[counts > 1][:10].tolist()}")
    return g


def check_seats(seats, num_players: int) -> np.ndarray:
    """The seats an ``observe`` call names: intp (S,) from distinct seat numbers in
    ``0..num_players-1`` (a sequence, an int array or a ``range``).

    Raises:
        ConfigError: no seats, a repeated seat, a seat out of range, or not integers.
    """
    from .errors import ConfigError

    S = np.asarray(list(seats) if isinstance(seats, range) else seats)
    if (S.ndim != 1 or S.size == 0 or not np.issubdtype(S.dtype, np.integer) or S.min() < 0
            or S.max() >= num_players or np.unique(S).size != S.size):
        raise ConfigError(f"seats must be distinct seat numbers in 0..{num_players - 1}, got {S.tolist()}")
    return S.astype(np.intp, copy=False)


def observation_buffer(out: Optional[np.ndarray], shape: tuple, whole_batch: bool, buffers: dict) -> np.ndarray:
    """Where an ``observe`` call writes: ``out`` when given (checked: a writable C-contiguous
    float32 ndarray of ``shape``), else for the whole batch the engine's buffer of that shape
    (kept in ``buffers``, made once, overwritten by the next such call), else a new array.

    Raises:
        ConfigError: an ``out`` that is not such an array (the shape named).
    """
    from .errors import ConfigError

    if out is not None:
        if (not isinstance(out, np.ndarray) or out.shape != shape or out.dtype != np.float32
                or not out.flags.c_contiguous or not out.flags.writeable):
            raise ConfigError(f"out must be a writable C-contiguous float32 array of shape {shape}, got "
                              f"{getattr(out, 'dtype', type(out).__name__)} {getattr(out, 'shape', '')}")
        return out
    if not whole_batch:
        return np.empty(shape, np.float32)
    buf = buffers.get(shape)
    if buf is None:
        buf = buffers[shape] = np.zeros(shape, np.float32)
    return buf


def check_record(state: Any, like: StateRecord, games: np.ndarray) -> None:
    """Check that ``state`` can be loaded into rows ``games`` of ``like``: same record type, G
    games, and every field of the shape and dtype of ``like``'s (None only where ``like``'s is
    None: an optional part no game uses).

    Raises:
        ConfigError: what differs.
    """
    from .errors import ConfigError

    if type(state) is not type(like):
        raise ConfigError(f"load_state takes a {type(like).__name__}, got {type(state).__name__}")
    G = len(games)
    if state.batch_size != G:
        raise ConfigError(f"load_state: a record of {state.batch_size} games for {G} games")
    if len(np.unique(games)) != G:
        raise ConfigError("load_state: the games named must be distinct")
    for f in fields(like):
        a, b = getattr(like, f.name), getattr(state, f.name)
        if b is None and a is not None:
            raise ConfigError(f"load_state: field {f.name} is None; it must be {a.dtype} {(G,) + a.shape[1:]}")
        if b is None:
            continue
        want = (G,) + a.shape[1:] if a is not None else None
        if a is not None and (b.shape != want or b.dtype != a.dtype):
            raise ConfigError(f"load_state: field {f.name} must be {a.dtype} {want}, got {b.dtype} {b.shape}")
