"""Playing tournament games through the AEC environment, in this process or in worker processes.

Each process builds one raw environment (``illegal_action="raise"``, so a bot that returns an
action outside the mask stops the tournament with
:class:`~hod.core.errors.IllegalActionError`) and one bot per lineup slot (a bot built by name is
given the table's rule options, the ``env_kwargs`` its ``GameInfo.rule_options`` names),
then for every game:
resets each bot with its seed, resets the environment with the deal's seed and walks
``env.agent_iter()``, asking the bot of the seat to act ``bot.act(observation_dict)`` (bots with
``needs_belief`` also get ``belief(rng) -> state`` built on the game's
``sample_consistent_state(state, seat, rng)``).
"""
from __future__ import annotations

import pickle
import signal
import traceback
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence, Union

from hod import agents
from hod.agents.base import check_player_count
from hod.core.errors import ConfigError
from hod.core.games import get_game

from .schedule import ScheduledGame

#: Game name -> module that provides ``raw_env`` (the contract of docs/DESIGN.md).


@dataclass(frozen=True)
class BotSpec:
    """How to build the bot of one lineup slot in any process.

    Exactly one of the fields is set: ``name`` (registry name, built with ``agents.make`` and the
    table's rule options), ``factory`` (zero-argument callable returning a bot) or ``instance`` (a
    ready bot, only usable in the main process). Factories and instances are built by the caller,
    who must give them the table's rule options.
    """

    name: Optional[str] = None
    factory: Optional[Callable[[], Any]] = None
    instance: Any = None

    def build(self, game: str, rules: Optional[dict] = None) -> Any:
        """Return the bot.

        Args:
            game: ``"tapeo"`` or ``"robada"``.
            rules: the table's rule options (:func:`hod.agents.rules.table_rules`), given to a bot
                built by ``name`` (``agents.make(game, name, **rules)``).

        Raises:
            TypeError: a factory returns something that is not a bot.
            ConfigError: a bad rule option (from ``agents.make``).
        """
        if self.instance is not None:
            return self.instance
        if self.name is not None:
            return agents.make(game, self.name, **(rules or {}))
        bot = self.factory()
        check_is_bot(bot, "the factory's return value")
        return bot


def check_is_bot(obj: Any, what: str) -> None:
    """Raise TypeError unless ``obj`` follows the bot protocol (``act`` and ``reset`` methods)."""
    if not (callable(getattr(obj, "act", None)) and callable(getattr(obj, "reset", None))):
        raise TypeError(f"{what} is {obj!r}, not a bot (needs act(observation) and reset(seed))")


def check_game(game: object) -> str:
    """Return ``game`` if it names a declared game (:func:`hod.core.games.game_names`).

    Raises:
        ConfigError: unknown game (the legal ones are named).
    """
    get_game(game)  # type: ignore[arg-type]
    return game  # type: ignore[return-value]


def env_module(game: str):
    """The game package of ``game`` (provides ``raw_env``).

    Raises:
        ConfigError: unknown game (names the legal ones).
    """
    return get_game(game).module()


def make_env(game: str, num_players: int, env_kwargs: dict):
    """Build the raw AEC environment with ``illegal_action="raise"``."""
    return env_module(game).raw_env(num_players=num_players, illegal_action="raise", **env_kwargs)


@dataclass(frozen=True)
class GameOutcome:
    """Result of one game, indexed by lineup slot (not by seat).

    Attributes:
        index: game number.
        points: final game points (``infos[agent]["final_score"]``) per slot.
        win_share: ``infos[agent]["win_share"]`` per slot (1/k for each of k tied winners).
        steps: number of actions the bots took in the game.
    """

    index: int
    points: tuple[int, ...]
    win_share: tuple[float, ...]
    steps: int


class TournamentTable:
    """One environment and one bot per slot, reused for many games (one per process)."""

    def __init__(self, game: str, num_players: int, specs: Sequence[BotSpec], env_kwargs: dict):
        self.game = game
        self.n = num_players
        self.env = make_env(game, num_players, env_kwargs)
        # every bot built by name is told the table's rule options: the env_kwargs that the game
        # declares as rule options (GameInfo.rule_options; hod.agents.rules)
        self.rules = get_game(game).check_rule_options(env_kwargs)
        self.bots = [s.build(game, self.rules) for s in specs]
        for slot, bot in enumerate(self.bots):   # a trained bot plays only its model card's table sizes
            check_player_count(bot, num_players, f"lineup slot {slot}: ")
        agents_ = list(self.env.possible_agents)
        if len(agents_) != num_players:
            raise RuntimeError(f"{game} env has {len(agents_)} agents, expected {num_players}")
        self.seat_of = {a: i for i, a in enumerate(agents_)}
        # Search bots (``needs_belief``) get belief(rng) -> state from the game's
        # ``sample_consistent_state(state, seat, rng)`` (agents/base.py).
        self.sampler = getattr(env_module(game), "sample_consistent_state", None)
        self.needs_belief = [bool(getattr(b, "needs_belief", False)) for b in self.bots]
        for slot, bot in enumerate(self.bots):
            if self.needs_belief[slot] and self.sampler is None:
                raise ConfigError(
                    f"lineup slot {slot}: {bot!r} needs belief samples but {game!r} provides no "
                    f"sample_consistent_state; legal for {game!r}: bots without needs_belief"
                )

    def play(self, spec: ScheduledGame) -> GameOutcome:
        """Play one game of the schedule; errors carry a note naming the game and its seed."""
        try:
            return self._play(spec)
        except Exception as e:  # add context, keep the type (IllegalActionError stays one)
            if hasattr(e, "add_note"):
                e.add_note(
                    f"in tournament game {spec.index} (env seed {spec.env_seed}, "
                    f"seat -> slot {list(spec.seating)})"
                )
            raise

    def _belief(self, seat: int):
        """``belief(rng) -> state``: a full state consistent with what ``seat`` knows now; the
        function carries the seat as ``belief.seat`` (:class:`hod.agents.base.Bot`)."""
        env, sampler = self.env, self.sampler

        def belief(rng):
            return sampler(env.unwrapped.game_state, seat, rng)

        belief.seat = seat
        return belief

    def _act(self, bot: Any, observation: dict, belief: Optional[Callable], seat: int) -> int:
        """``bot``'s action at ``seat`` (``belief`` for a search bot, else None)."""
        return bot.act(observation) if belief is None else bot.act(observation, belief)

    def _play(self, spec: ScheduledGame) -> GameOutcome:
        env = self.env
        for slot, bot in enumerate(self.bots):
            bot.reset(seed=spec.bot_seeds[slot])
        env.reset(seed=spec.env_seed)
        bot_of = {a: self.bots[spec.seating[s]] for a, s in self.seat_of.items()}
        belief_of = {a: self.needs_belief[spec.seating[s]] for a, s in self.seat_of.items()}
        finals: dict[str, dict] = {}
        steps = 0
        for agent in env.agent_iter():
            if env.terminations[agent] or env.truncations[agent]:
                finals[agent] = dict(env.infos[agent])
                env.step(None)
                continue
            seat = self.seat_of[agent]
            action = self._act(bot_of[agent], env.observe(agent), self._belief(seat) if belief_of[agent] else None,
                               seat)
            env.step(action)
            steps += 1
        points = [0] * self.n
        shares = [0.0] * self.n
        for agent, seat in self.seat_of.items():
            info = finals.get(agent, {})
            if "final_score" not in info or "win_share" not in info:
                raise RuntimeError(
                    f"{self.game}: {agent} ended without infos['final_score'] / ['win_share'] "
                    f"(truncated game? infos: {info})"
                )
            slot = spec.seating[seat]
            points[slot] = int(info["final_score"])
            shares[slot] = float(info["win_share"])
        return GameOutcome(spec.index, tuple(points), tuple(shares), steps)


_TABLE: Optional[TournamentTable] = None


def init_worker(game: str, num_players: int, specs: Sequence[BotSpec], env_kwargs: dict) -> None:
    """Process-pool initializer: build this worker's :class:`TournamentTable`.

    The worker ignores SIGINT (Ctrl-C reaches every process of the terminal's group: the main
    process alone handles it, keeps the finished games and ends the workers) and takes SIGTERM's
    default action (a forked worker would otherwise inherit the command's handler,
    :func:`hod.core.commands.long_command`, and print a traceback when the main process ends it).
    """
    global _TABLE
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _TABLE = TournamentTable(game, num_players, specs, env_kwargs)


@dataclass(frozen=True)
class WorkerFailure:
    """An exception raised in a worker, carried back as (class, args, attributes, traceback).

    Not every exception survives pickling (one whose ``__init__`` takes other arguments than its
    message, such as :class:`~hod.core.errors.IllegalActionError`, does not, and would break the
    process pool), so the worker sends its parts and :meth:`rebuild` makes it again, same type.
    """

    cls: type
    args: tuple
    state: dict
    traceback: str

    def rebuild(self) -> BaseException:
        """The exception, same class, args and attributes (notes included), plus the worker's
        traceback as a note."""
        exc = self.cls.__new__(self.cls, *self.args)
        exc.args = self.args
        exc.__dict__.update(self.state)
        if hasattr(exc, "add_note"):
            exc.add_note("worker traceback:\n" + self.traceback)
        return exc


def play_chunk(chunk: Sequence[ScheduledGame]) -> Union[list[GameOutcome], WorkerFailure]:
    """Play consecutive games in a worker (after :func:`init_worker`).

    Returns the outcomes, or a :class:`WorkerFailure` if a game raised.
    """
    assert _TABLE is not None, "init_worker was not called"
    try:
        return [_TABLE.play(s) for s in chunk]
    except Exception as e:
        failure = WorkerFailure(type(e), tuple(e.args), dict(e.__dict__), traceback.format_exc())
        try:
            pickle.loads(pickle.dumps(failure))
        except Exception:  # class or attributes not picklable: keep the text only
            failure = WorkerFailure(
                RuntimeError, (f"{type(e).__name__}: {e}",), {}, traceback.format_exc()
            )
        return failure
