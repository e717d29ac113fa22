"""Luck-corrected outcomes (control variates at the chance events, as AIVAT: Burch et al., 2018).

At each chance event ``e`` of a game (a deal or a re-deal) the luck the outcome drew is

    luck_e = V(state after e) - E_chance[V(state after e) | state before e]

for a value function ``V`` of the whole state (float64 ``(2, n)``: row 0 each seat's expected
final points, row 1 its expected win share), the expectation estimated by dealing the same event
again ``K`` times from the same state with the engine (the game's declared chance hook,
:class:`ChanceHook`), from seeds that do not depend on the actual deal beyond the game's seed
(``SeedSequence([env_seed, e, tag])``: independent of the deal's outcome, so the average of the
``K`` values has the conditional expectation of ``V`` given the state before the event).
The corrected outcome of a seat is the plain outcome minus the sum of its luck terms over the
game's events. Each term has expectation 0 given the state before its event, whatever ``V`` is,
so the corrected mean is unbiased for any ``V`` (a constant ``V`` gives corrections of exactly
0); a ``V`` that follows the game's value removes the part of the outcome's variance the deals
put there. Margins are linear in points, so their luck is :func:`hod.evaluation.stats.margins`
of the points' luck.

Pieces:

* :class:`ChanceHook` is the protocol of a game's hook (``GameInfo.chance_hook``,
  e.g. ``tapeo_env.rules.chance:HOOK``): ``count(state)``, ``redeal(state, seed)``,
  ``value(state)`` (a cheap value with no training), ``value_name``.
* :class:`LuckTracker` accumulates one game's luck terms from the states it is shown.
* :class:`LuckTable` is the tournament's table (:class:`hod.evaluation.play.TournamentTable`)
  that also tracks luck; its games return :class:`LuckOutcome`.
* :func:`luck_stats` turns per-game outcomes and luck into the corrected rows.
* :func:`crossfit` is the *fitted* estimate beside them: ``plain - controls @ beta`` with
  ``beta`` fitted by ridge least squares on other deals than the ones it corrects (cross-fitted),
  the controls being luck terms (each of expectation 0): every event's luck of ``V`` by slot and,
  optionally (``LuckSpec.features``), the luck of a feature vector of the state (the game's
  global state) by the row's seat: a value linear in the whole state, fitted on the run's own
  games, so one that knows the lineup (:func:`row_controls`).

* :mod:`hod.evaluation.luck_playout` is a value that knows the lineup: playouts of copies of
  the table's own bots (``value="playout"``).

Decision terms (AIVAT's action terms, ``LuckSpec.decisions = M > 0``): at each decision of a bot
whose play is random and that can say how it would have played with other draws
(:meth:`hod.agents.base.Bot.resample_actions`: the search bots, whose randomness is their
determinizations), the bot is asked ``M`` more times from independent generators
(``SeedSequence([env_seed, decision, tag])``, the same whatever it played) and the term

    luck_d = V(state after the action played) - mean_m V(state after the m-th resampled action)

is added to the luck (the other seats' actions of a simultaneous step as played; ``V`` of the
positions after each action by :meth:`hod.evaluation.luck_playout.LineupPlayoutValue.decision_values`
on common random numbers, else ``V`` itself). The resampled actions are draws of the same policy
as the action played, independent of it, so each term has expectation 0 given everything before
the decision whatever ``V`` is: the estimate stays unbiased, and the part of the outcome that the
bot's own dice put there is removed as far as ``V`` tells the actions apart. A decision whose
draws all equal the action played adds exactly 0 (nothing is played out). Bots that return None
(every deterministic bot) get no term. Cost: ``M`` more decisions of the bot, and ``playouts``
playouts of each distinct action when the draws disagree.
"""
from __future__ import annotations

import math
import signal
from dataclasses import dataclass
from typing import Any, Callable, Optional, Protocol, Sequence

import numpy as np

from hod.core.errors import ConfigError, check_choice
from hod.core.games import game_names, get_game, load_object

from . import play as _play
from . import stats as _stats
from .play import BotSpec, GameOutcome, TournamentTable
from .schedule import ScheduledGame

#: Values of ``estimator`` (:func:`hod.evaluation.tournament.run_tournament`, ``--estimator``).
ESTIMATORS = ("plain", "corrected", "both")
#: Chance outcomes dealt again per event (the default ``K``).
DEFAULT_SAMPLES = 16
#: Third word of the resampling seeds' ``SeedSequence`` (keeps them apart from other streams).
_TAG = 0x1AC4
#: Third word of the decision terms' resampling seeds (the bots' other draws).
_DECISION_TAG = 0x1AC5
#: Most draws per decision (``LuckSpec.decisions``, the tournament's ``--luck-decisions``).
MAX_DECISIONS = 64
#: Rows of a value: expected final points, expected win share.
QUANTITIES = ("points", "win_share")
#: Values of ``LuckSpec.features`` by name: no feature luck, or the game's global state
#: (``GameInfo.state_encoder``, float32 ``(state_layout.size,)``).
FEATURES = ("none", "state")
#: Folds of the fitted estimate's cross-fitting (deals split at random, seeded, into this many
#: folds; each fold corrected with the ``beta`` fitted on the others).
FOLDS = 2
#: Ridge penalties the fit chooses from (inner cross-validation over the training deals, the
#: controls standardised; in units of squared standardised control x deals).
PENALTIES = (0.0, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1e3, 3e3, 1e4, 1e5, 1e6)
#: Fewest deals the fit needs (``2 * FOLDS`` training deals for each inner fold); below it the
#: fitted estimate is the plain one (``beta = 0``).
MIN_FIT_DEALS = 8


class ChanceHook(Protocol):
    """A game's chance events (found through ``GameInfo.chance_hook``, never by the game's name).

    ``count(state) -> int``: chance events that have happened in the state's game so far.
    ``redeal(state, seed) -> state``: a copy of a state right after a chance event in which that
    event is dealt again from game seed ``seed`` (the engine's own deal code; ``state`` is not
    changed). ``value(state) -> float64 (2, n)``: a cheap value of the whole state (points, win
    share), named ``value_name``.
    """

    value_name: str

    def count(self, state: Any) -> int:
        """The chance events that have happened in ``state``'s game so far, an int >= 1 (the
        first deal included; Tapeo: one deal per round)."""

    def redeal(self, state: Any, seed: int) -> Any:
        """A copy of ``state`` (a position right after a chance event) in which that event is dealt
        again from game seed ``seed`` (an int in ``0..2**64-1``) by the engine's own deal code;
        ``state`` is not changed.

        Raises:
            ConfigError: ``state`` is not right after a chance event, or a bad seed.
        """

    def value(self, state: Any) -> np.ndarray:
        """float64 (2, n): a cheap value of the whole state, row 0 each seat's expected final
        points, row 1 its expected win share (:data:`QUANTITIES`); named :attr:`value_name`."""


def chance_hook(game: str) -> ChanceHook:
    """The chance hook of ``game`` (``GameInfo.chance_hook``, loaded).

    Raises:
        ConfigError: unknown game, or a game that declares no chance hook (the games that do
            are named).
    """
    info = get_game(game)
    if info.chance_hook is None:
        having = [g for g in game_names() if get_game(g).chance_hook]
        raise ConfigError(f"{game!r} declares no chance hook, so its outcomes cannot be luck-corrected; legal: "
                          f"estimator='plain', or a game with one: {having}")
    return load_object(info.chance_hook)


def check_estimator(estimator: object) -> str:
    """Return ``estimator`` if it is one of :data:`ESTIMATORS`.

    Raises:
        ConfigError: anything else (the legal values are named).
    """
    check_choice("estimator", estimator, ESTIMATORS)
    return estimator


def check_samples(samples: object) -> int:
    """Return ``samples`` (chance outcomes dealt again per event) if it is an int in 1..4096.

    Raises:
        ConfigError: anything else.
    """
    if isinstance(samples, bool) or not isinstance(samples, int) or not 1 <= samples <= 4096:
        raise ConfigError(f"luck_samples={samples!r}; legal values: an int in 1..4096")
    return int(samples)


def check_decisions(decisions: object) -> int:
    """Return ``decisions`` (the draws per decision of the decision terms; 0 = none) if it is an
    int in 0..:data:`MAX_DECISIONS`.

    Raises:
        ConfigError: anything else.
    """
    if isinstance(decisions, bool) or not isinstance(decisions, (int, np.integer)) \
            or not 0 <= decisions <= MAX_DECISIONS:
        raise ConfigError(f"luck_decisions={decisions!r}; legal values: an int in 0..{MAX_DECISIONS} "
                          f"(0: no decision terms)")
    return int(decisions)


def check_decision_samples(samples: object) -> int:
    """Return ``samples`` (playouts of each action's position for the decision terms; 0 = the
    chance events' ``K``) if it is 0 or an int in 1..4096 (:func:`check_samples`).

    Raises:
        ConfigError: anything else, named as ``luck_decision_samples``.
    """
    if isinstance(samples, (int, np.integer)) and not isinstance(samples, bool) and samples == 0:
        return 0
    try:
        return check_samples(int(samples) if isinstance(samples, np.integer) else samples)
    except ConfigError:
        raise ConfigError(f"luck_decision_samples={samples!r}; legal values: an int in 0..4096 "
                          f"(0: luck_samples)") from None


def decision_seeds(env_seed: int, decision: int, draws: int) -> list[int]:
    """The generator seeds of the ``draws`` resampled actions of decision ``decision`` (the
    game's resampled decisions counted from 0) of the game dealt from ``env_seed``: ints below
    2**63 from ``SeedSequence([env_seed, decision, tag])``, whatever the bot played."""
    raw = np.random.SeedSequence([int(env_seed), int(decision), _DECISION_TAG]).generate_state(draws, np.uint64)
    return [int(x >> np.uint64(1)) for x in raw]


def resample_seeds(env_seed: int, event: int, samples: int) -> np.ndarray:
    """The game seeds event ``event`` of the game dealt from ``env_seed`` is dealt again from:
    uint64 (samples,), ``SeedSequence([env_seed, event, tag]).generate_state(samples, uint64)``.
    The same for every seat order of a duplicate deal (common random numbers)."""
    return np.random.SeedSequence([int(env_seed), int(event), _TAG]).generate_state(samples, np.uint64)


class LuckTracker:
    """The luck terms of one game, from the states it is shown (after the deal and after every
    step).

    Args:
        hook: the game's :class:`ChanceHook`.
        value: ``V(state) -> float64 (2, n)`` (points, win share per seat).
        samples: ``K``, outcomes dealt again per event.
        num_players: n.
        features: optional ``F(state) -> (m,)`` array: its luck, ``F(after) - mean F(dealt
            again)`` (the same re-deals), summed over the game's events, is kept too
            (``feature_luck``, float64 (m,), seat-absolute as ``F``).

        apply: ``apply(state, move)``, the game's rules applying a move in place (the env's
            ``rules.apply``), needed for decision terms (:meth:`decided`).
        simultaneous: every seat picks each step (a move is the picks of all n seats).
        decision_playouts: playouts of each action's position (passed to the value's
            ``decision_values``; None: its default).

    Attributes (of the game being tracked): ``luck`` float64 (2, n) by seat, summed over the
    events and the decision terms; ``event_luck`` list of float64 (2, n), one per event;
    ``feature_luck`` float64 (m,) or None; ``decision_luck`` float64 (2, n), the decision terms'
    part of ``luck`` (every seat's share of each term: a term is ``V`` of the positions, a
    (2, n) value); ``resampled`` and ``disagreed``: the decisions drawn again, and those whose
    draws differed from the action played.
    """

    def __init__(self, hook: ChanceHook, value: Callable[[Any], np.ndarray], samples: int, num_players: int,
                 features: Optional[Callable[[Any], np.ndarray]] = None,
                 apply: Optional[Callable[[Any, Any], Any]] = None, simultaneous: bool = False,
                 decision_playouts: Optional[int] = None):
        self.hook, self.value, self.samples, self.n = hook, value, check_samples(samples), int(num_players)
        self.features = features
        self.apply, self.simultaneous = apply, bool(simultaneous)
        self.decision_playouts = decision_playouts
        self.start(0)

    def start(self, env_seed: int) -> None:
        """A new game dealt from ``env_seed``: no event seen, luck 0."""
        self.env_seed = int(env_seed)
        self.seen = 0
        self.luck = np.zeros((2, self.n), np.float64)
        self.event_luck: list = []
        self.feature_luck: Optional[np.ndarray] = None
        #: float64 (2, n) by seat: the decision terms' part of :attr:`luck`
        self.decision_luck = np.zeros((2, self.n), np.float64)
        #: decisions resampled this game, and those whose draws disagreed (played out)
        self.resampled, self.disagreed = 0, 0
        self._picks: dict = {}      # seat -> action, of the move being made
        self._draws: dict = {}      # seat -> (resampled actions, decision number), for seats whose draws differ
        self._before = None         # the state before the move (kept when some draws differ)

    def decided(self, state, seat: int, action: int, draws: Optional[Sequence[int]]) -> None:
        """Seat ``seat`` chose ``action`` in ``state`` (the position before the move); ``draws``
        are its resampled actions (None: a bot without decision terms). Call before the step.

        Raises:
            RuntimeError: draws that differ from the action and no ``apply`` to play them.
        """
        self._picks[int(seat)] = int(action)
        if draws is None:
            return
        number = self.resampled
        self.resampled += 1
        if all(int(d) == int(action) for d in draws):
            return                                  # the term is exactly 0
        if self.apply is None:
            raise RuntimeError("decision terms need the game's apply(state, move); legal: a tracker built with apply")
        if self._before is None:
            self._before = state.clone()
        self._draws[int(seat)] = ([int(d) for d in draws], number)

    def moved(self) -> None:
        """After a step: when the move is complete (every seat's pick of a simultaneous step, or
        the one decision of a sequential game), add the decision terms of the seats whose draws
        disagreed and forget the move.

        Raises:
            ValueError: a value (its ``decision_values``, or ``V`` itself) of the wrong shape (the
                legal one is named).
        """
        if self.simultaneous and len(self._picks) < self.n:
            return
        for seat, (draws, number) in self._draws.items():
            self._decision_term(seat, draws, number)
        self._picks, self._draws, self._before = {}, {}, None

    def _decision_term(self, seat: int, draws: list, number: int) -> None:
        """Add the term of ``seat``'s decision: the values float64 (len(actions), 2, n) of the
        positions after each distinct action among the one played and its ``draws``; the term,
        (2, n), is the played action's value minus the mean over the M draws (duplicates
        counted), added to :attr:`luck` and :attr:`decision_luck`."""
        actual = self._picks[seat]
        actions = sorted({actual, *draws})
        states = []
        for a in actions:
            st = self._before.clone()
            if self.simultaneous:
                move = [self._picks[k] for k in range(self.n)]
                move[seat] = a
            else:
                move = a
            self.apply(st, move)
            states.append(st)
        if callable(getattr(self.value, "decision_values", None)):
            extra = {} if self.decision_playouts is None else {"playouts": self.decision_playouts}
            vals = np.asarray(self.value.decision_values(states, number, **extra), np.float64)
            if vals.shape != (len(states), 2, self.n):
                raise ValueError(f"the value function returned shape {vals.shape}; legal: ({len(states)}, 2, {self.n})")
        else:
            vals = np.stack([self._value(st) for st in states])
        at = {a: i for i, a in enumerate(actions)}
        term = vals[at[actual]] - np.mean([vals[at[d]] for d in draws], axis=0)
        self.luck += term
        self.decision_luck += term
        self.disagreed += 1

    def _value(self, state) -> np.ndarray:
        v = np.asarray(self.value(state), np.float64)
        if v.shape != (2, self.n):
            raise ValueError(f"the value function returned shape {v.shape}; legal: (2, {self.n}) (points, win share)")
        return v

    def observe(self, state) -> None:
        """Add the luck of a chance event that happened since the last call (``state`` is the
        state right after it; at most one event between two calls).

        Raises:
            RuntimeError: two events happened since the last call (the first cannot be dealt
                again from this state).
        """
        c = int(self.hook.count(state))
        if c == self.seen:
            return
        if c != self.seen + 1:
            raise RuntimeError(f"{c - self.seen} chance events between two observations; legal: observe after each step")
        f_actual = None if self.features is None else np.asarray(self.features(state), np.float64)
        f_mean = None if f_actual is None else np.zeros_like(f_actual)
        agains = [self.hook.redeal(state, int(s)) for s in resample_seeds(self.env_seed, self.seen, self.samples)]
        if callable(getattr(self.value, "values", None)):   # a value that plays all the states in one batch
            vals = np.asarray(self.value.values([state, *agains], actual=0, event=self.seen), np.float64)
            if vals.shape != (1 + self.samples, 2, self.n):
                raise ValueError(f"the value function returned shape {vals.shape}; legal: "
                                 f"({1 + self.samples}, 2, {self.n})")
            actual, mean = vals[0], vals[1:].sum(axis=0)
        else:
            actual = self._value(state)
            mean = np.zeros_like(actual)
            for again in agains:
                mean += self._value(again)
        if f_mean is not None:
            for again in agains:
                f_mean += np.asarray(self.features(again), np.float64)
        term = actual - mean / self.samples
        self.luck += term
        self.event_luck.append(term)
        if f_actual is not None:
            f = f_actual - f_mean / self.samples
            self.feature_luck = f if self.feature_luck is None else self.feature_luck + f
        self.seen = c


@dataclass(frozen=True)
class LuckOutcome(GameOutcome):
    """A :class:`~hod.evaluation.play.GameOutcome` with its luck, by lineup slot:
    ``luck_points[k]`` and ``luck_win_share[k]`` summed over the game's ``events`` chance events
    and its decision terms (corrected = plain - luck); ``event_luck[e][q][k]`` the term of event ``e`` (q = 0 points,
    1 win share); ``feature_luck`` the luck of the features (seat-absolute, () without)."""

    luck_points: tuple[float, ...] = ()
    luck_win_share: tuple[float, ...] = ()
    events: int = 0
    event_luck: tuple = ()
    feature_luck: tuple[float, ...] = ()
    #: the decision terms' part of the luck, ``[q][k]`` (q = 0 points, 1 win share; () without)
    decision_luck: tuple = ()
    #: decisions resampled, and those whose draws disagreed with the action played
    resampled: int = 0
    disagreed: int = 0


class _ObservedEnv:
    """The table's env, showing the game state to a :class:`LuckTracker` before and after
    every step (everything else forwarded)."""

    def __init__(self, env, tracker: LuckTracker):
        self._env, self._tracker = env, tracker

    def __getattr__(self, name):
        return getattr(self._env, name)

    def step(self, action):
        self._tracker.observe(self._env.unwrapped.game_state)
        self._env.step(action)
        if action is not None:
            self._tracker.moved()
        self._tracker.observe(self._env.unwrapped.game_state)


@dataclass(frozen=True)
class LuckSpec:
    """What a worker needs to track luck: the value function (None = the hook's cheap value;
    ``"playout"`` = :class:`hod.evaluation.luck_playout.LineupPlayoutValue`, playouts of copies of
    the table's own bots, ``samples`` of them from each actual state, ``surrogates`` standing in for
    some of them), ``samples`` and ``features`` (a name of :data:`FEATURES`: ``"state"`` tracks the luck of
    the game's global state too, the fitted estimate's extra controls) (picklable when
    workers > 1)."""

    value: Optional[Callable[[Any], np.ndarray] | str] = None
    samples: int = DEFAULT_SAMPLES
    features: str = "none"
    #: per lineup slot, the ONNX export that plays that slot's bot inside a ``"playout"`` value's
    #: playouts (None: a copy of the bot itself); empty: none anywhere.
    surrogates: tuple = ()
    #: draws per decision of the decision terms (module docstring; 0: chance events only)
    decisions: int = 0
    #: playouts of each action's position for the decision terms (value ``"playout"``; 0: ``samples``)
    decision_samples: int = 0


def check_features(features: object) -> str:
    """Return ``features`` if it is one of :data:`FEATURES`.

    Raises:
        ConfigError: anything else (the legal values are named).
    """
    check_choice("luck_features", features, FEATURES)
    return features


#: Values named by a string (``LuckSpec.value``, the tournament's ``--value``): built per table from its bots.
VALUE_NAMES = ("playout",)


def check_value(value: object) -> object:
    """Return ``value`` if it is None, a callable or one of :data:`VALUE_NAMES`.

    Raises:
        ConfigError: anything else (the legal values are named).
    """
    if value is None or callable(value):
        return value
    check_choice("luck_value", value, VALUE_NAMES)
    return value


def lineup_value(game: str, name: str, bots: Sequence[Any], samples: int,
                 played_by: Optional[Sequence[Optional[str]]] = None) -> Callable[[Any], np.ndarray]:
    """The value named ``name`` (:data:`VALUE_NAMES`) for a table of ``bots`` (one per slot,
    fresh copies or surrogates, described by ``played_by``): ``"playout"`` is
    :class:`hod.evaluation.luck_playout.LineupPlayoutValue` with ``samples`` playouts from each
    actual state.

    Raises:
        ConfigError: an unknown name, or a game the value cannot play.
    """
    check_value(name)
    from .luck_playout import LineupPlayoutValue

    return LineupPlayoutValue(game, bots, playouts=samples, played_by=played_by)


def surrogate_bot(game: str, path: str, num_players: int) -> Any:
    """The bot of a playout surrogate: the ONNX export at ``path`` (its card beside it, checked)
    playing its argmax.

    Raises:
        CheckpointError: not a usable export of ``game`` for ``num_players`` players.
    """
    from hod.agents.onnx_policy import OnnxPolicy

    return OnnxPolicy(path, game=game, num_players=num_players, seed=0)


def check_surrogates(surrogates: object, bases: Sequence[str], value: object) -> tuple:
    """The per-slot surrogate paths of ``surrogates`` (``{lineup bot name: ONNX path}``) for a
    lineup whose slots are named ``bases``; ``()`` for None or ``{}``.

    Raises:
        ConfigError: surrogates without ``value="playout"``, not a dict of str to ``.onnx``
            paths, or a name that no slot of the lineup has (the lineup's names are given).
    """
    if not surrogates:
        return ()
    if value != "playout":
        raise ConfigError(f"luck_surrogates stand in for bots inside the playouts of value 'playout'; legal: with "
                          f"value='playout' (got value={value!r})")
    if not isinstance(surrogates, dict) or not all(isinstance(k, str) and isinstance(v, str) and v.endswith(".onnx")
                                                   for k, v in surrogates.items()):
        raise ConfigError(f"luck_surrogates={surrogates!r}; legal: a dict of lineup bot names to ONNX export paths, "
                          f"e.g. {{'expert': 'runs/expert_clone.onnx'}}")
    unknown = sorted(set(surrogates) - set(bases))
    if unknown:
        raise ConfigError(f"luck_surrogates names {unknown}, which no lineup slot plays; legal names: {sorted(set(bases))}")
    return tuple(surrogates.get(b) for b in bases)


def value_name(game: str, value: Optional[Callable]) -> str:
    """The name of the value function a run uses: its ``name`` attribute, the hook's
    ``value_name`` for None, else its type's name."""
    if value is None:
        return chance_hook(game).value_name
    if isinstance(value, str):
        return value
    return str(getattr(value, "name", "") or getattr(value, "__name__", "") or type(value).__name__)


class LuckTable(TournamentTable):
    """A :class:`~hod.evaluation.play.TournamentTable` whose games also return their luck
    (:class:`LuckOutcome`).

    Args:
        game, num_players, specs, env_kwargs: as the base table's.
        luck: the value function and samples (:class:`LuckSpec`).
        tracker: the :class:`LuckTracker` shown the states (default: one built from ``luck``
            and the game's chance hook; :mod:`hod.evaluation.luck_value` passes a recorder).

    Raises:
        ConfigError: the game declares no chance hook; the errors of the base table.
    """

    def __init__(self, game: str, num_players: int, specs: Sequence[BotSpec], env_kwargs: dict, luck: LuckSpec,
                 tracker: Optional[LuckTracker] = None):
        super().__init__(game, num_players, specs, env_kwargs)
        if tracker is None:
            hook = chance_hook(game)
            feats = None
            if check_features(luck.features) == "state":
                feats = load_object(get_game(game).state_encoder)
            value = luck.value or hook.value
            if isinstance(value, str):
                if any(s.instance is not None for s in specs):
                    raise ConfigError(f"luck value {value!r} plays copies of the lineup's bots; legal: bots given by "
                                      f"name or factory (a ready instance cannot be copied)")
                paths = tuple(luck.surrogates) or (None,) * len(specs)
                bots = [surrogate_bot(game, p, num_players) if p else s.build(game, self.rules)
                        for s, p in zip(specs, paths)]
                value = lineup_value(game, value, bots, luck.samples, [f"surrogate {p}" if p else None for p in paths])
            tracker = LuckTracker(hook, value, luck.samples, num_players, feats, self.env.unwrapped.rules.apply,
                                  get_game(game).simultaneous, luck.decision_samples or None)
        self.tracker = tracker
        self.decisions = check_decisions(luck.decisions)
        self.env = _ObservedEnv(self.env, self.tracker)

    def _act(self, bot: Any, observation: dict, belief: Optional[Callable], seat: int) -> int:
        """The bot's action; with decision terms, first its :data:`decisions` resampled actions
        (:meth:`hod.agents.base.Bot.resample_actions`, asked before ``act``; a bot without the
        method gives none), told to the tracker with the action (the bot's own generator
        untouched: the game is the plain one).

        Raises:
            ConfigError: draws other than None or that many legal actions (the legal ones are named).
        """
        draws = None
        resample = getattr(bot, "resample_actions", None)   # a duck-typed bot without it: no draws
        if self.decisions and resample is not None:
            seeds = decision_seeds(self.tracker.env_seed, self.tracker.resampled, self.decisions)
            draws = resample(observation, belief, seeds)
            if draws is not None:
                mask = np.asarray(observation["action_mask"])
                ok = isinstance(draws, (list, tuple)) and len(draws) == len(seeds) and all(
                    isinstance(d, (int, np.integer)) and not isinstance(d, bool) and 0 <= d < mask.size and mask[d]
                    for d in draws)
                if not ok:
                    raise ConfigError(f"{bot!r}.resample_actions returned {draws!r}; legal: None, or a list of "
                                      f"{len(seeds)} legal actions (mask entries 1: "
                                      f"{np.flatnonzero(mask).tolist()})")
        action = super()._act(bot, observation, belief, seat)
        self.tracker.decided(self.env.unwrapped.game_state, seat, action, draws)
        return action

    def _play(self, spec: ScheduledGame) -> LuckOutcome:
        self.tracker.start(spec.env_seed)
        if callable(getattr(self.tracker.value, "seat_lineup", None)):   # a value that knows who sits where
            self.tracker.value.seat_lineup(spec.seating, spec.env_seed)
        out = super()._play(spec)
        self.tracker.observe(self.env.unwrapped.game_state)
        luck = self.tracker.luck
        slot_of = np.asarray(spec.seating, np.int64)        # seat -> slot
        by_slot = np.empty((2, self.n), np.float64)
        events = []
        for term in self.tracker.event_luck:
            e = np.empty((2, self.n), np.float64)
            e[:, slot_of] = term
            events.append(tuple(tuple(float(v) for v in q) for q in e))
        by_slot[:, slot_of] = luck
        fl = self.tracker.feature_luck
        dec = np.empty((2, self.n), np.float64)
        dec[:, slot_of] = self.tracker.decision_luck
        return LuckOutcome(out.index, out.points, out.win_share, out.steps, tuple(float(v) for v in by_slot[0]),
                           tuple(float(v) for v in by_slot[1]), self.tracker.seen, tuple(events),
                           () if fl is None else tuple(float(v) for v in fl),
                           tuple(tuple(float(v) for v in q) for q in dec) if self.decisions else (),
                           self.tracker.resampled, self.tracker.disagreed)


def init_luck_worker(game: str, num_players: int, specs: Sequence[BotSpec], env_kwargs: dict, luck: LuckSpec) -> None:
    """Process-pool initializer of a luck-tracking tournament: the signals of
    :func:`hod.evaluation.play.init_worker`, and this worker's table is a :class:`LuckTable`, so
    :func:`hod.evaluation.play.play_chunk` (its failures carried back the same way) plays on it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _play._TABLE = LuckTable(game, num_players, specs, env_kwargs, luck)


def _interval(values: np.ndarray, share: bool = False) -> tuple[float, float, float, float]:
    """(mean, low, high, sample variance) of independent observations (t 95%); with ``share``
    (a win rate) the interval's ends are clipped to [0, 1] (the mean is not: a corrected or fitted
    mean may leave [0, 1] by its correction, and clipping it would bias it)."""
    m, lo, hi = _stats.t_interval(values)
    if share and lo == lo:
        lo, hi = min(max(lo, 0.0), 1.0), min(max(hi, 0.0), 1.0)
    var = float(np.var(values, ddof=1)) if values.size > 1 else math.nan
    return m, lo, hi, var


def luck_stats(plain_w: np.ndarray, plain_p: np.ndarray, plain_m: np.ndarray, luck_w: np.ndarray,
               luck_p: np.ndarray, luck_m: np.ndarray, deals: np.ndarray) -> dict:
    """The corrected estimates of one row (a slot, or a group's per-game mean).

    Args:
        plain_w, plain_p, plain_m: float64 (G,) plain win share, points and margin per game.
        luck_w, luck_p, luck_m: float64 (G,) their luck (corrected = plain - luck).
        deals: int64 (G,) deal of each game (intervals over deal means, as the plain ones).

    Returns:
        ``{"win_rate", "win_ci", "points", "points_ci", "margin", "margin_ci"}`` (corrected,
        95% t over deal means; the win rate's interval clipped to [0, 1], its mean not),
        ``"plain_win_ci_t"`` (the plain win rate's t interval over deal means, the like-for-like
        comparison, clipped the same way), ``"var_ratio"``: ``{quantity: corrected /
        plain variance of the deal means}`` (``half_width_ratio`` = its square root), and
        ``"luck_mean"``: ``{quantity: (mean, low, high)}`` of the luck (the bias check: 0 in
        expectation).
    """
    out: dict = {"var_ratio": {}, "half_width_ratio": {}, "luck_mean": {}}
    for q, plain, luck in (("win_rate", plain_w, luck_w), ("points", plain_p, luck_p), ("margin", plain_m, luck_m)):
        pd = _stats.deal_means(plain, deals)
        cd = _stats.deal_means(plain - luck, deals)
        pm, plo, phi, pvar = _interval(pd, q == "win_rate")
        cm, clo, chi, cvar = _interval(cd, q == "win_rate")
        lm, llo, lhi = _stats.t_interval(_stats.deal_means(luck, deals))
        key = "win" if q == "win_rate" else q
        out[q], out[f"{key}_ci"] = cm, (clo, chi)
        if q == "win_rate":
            out["plain_win_ci_t"] = (plo, phi)
        ratio = cvar / pvar if pvar > 0 else math.nan
        out["var_ratio"][q] = ratio
        out["half_width_ratio"][q] = math.sqrt(ratio) if ratio == ratio else math.nan
        out["luck_mean"][q] = (lm, llo, lhi)
    return out


def slot_luck(outcomes: Sequence[GameOutcome]) -> Optional[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """``(luck_points, luck_win_share, events)`` of played games, float64 (G, n) by slot and
    int64 (G,), or None when any game carries no luck (a plain run)."""
    if not outcomes or not all(isinstance(o, LuckOutcome) for o in outcomes):
        return None
    return (np.array([o.luck_points for o in outcomes], np.float64),
            np.array([o.luck_win_share for o in outcomes], np.float64),
            np.array([o.events for o in outcomes], np.int64))


def _group_means(x: np.ndarray, deals: np.ndarray) -> np.ndarray:
    """Mean of the rows of ``x`` (G, c) over the games of each deal: float64 (D, c)."""
    d = int(deals.max()) + 1
    out = np.zeros((d, x.shape[1]), np.float64)
    np.add.at(out, deals, x)
    return out / np.bincount(deals, minlength=d)[:, None]


def _ridge(y: np.ndarray, x: np.ndarray, penalties: Sequence[float]) -> list[np.ndarray]:
    """Ridge coefficients of ``y`` (N,) on ``x`` (N, c) with an unpenalised intercept, the
    controls standardised, one float64 (c,) per penalty (in ``x``'s own units; an intercept is
    fitted and dropped: it is not part of the correction)."""
    xm, xs = x.mean(0), x.std(0)
    xs = np.where(xs > 1e-12, xs, 1.0)
    z = (x - xm) / xs
    u, sv, vt = np.linalg.svd(z, full_matrices=False)
    uty = u.T @ (y - y.mean())
    keep = sv > 1e-10 * (sv.max() if sv.size else 1.0)
    out = []
    for lam in penalties:
        d = np.where(keep, sv / np.where(keep, sv * sv + lam, 1.0), 0.0)
        out.append((vt.T @ (d * uty)) / xs)
    return out


def _choose_penalty(y: np.ndarray, x: np.ndarray, rng: np.random.Generator, inner: int = 5) -> float:
    """The penalty of :data:`PENALTIES` with the least squared error over ``inner`` folds of the
    rows (deal means) given."""
    fold = rng.permutation(len(y)) % inner
    err = np.zeros(len(PENALTIES))
    for f in range(inner):
        tr, te = fold != f, fold == f
        for i, b in enumerate(_ridge(y[tr], x[tr], PENALTIES)):
            r = y[te] - y[tr].mean() - (x[te] - x[tr].mean(0)) @ b
            err[i] += float(r @ r)
    return float(PENALTIES[int(np.argmin(err))])


def crossfit(y: np.ndarray, x: np.ndarray, deals: np.ndarray, folds: int = FOLDS, seed: int = 0) -> dict:
    """The cross-fitted control-variate correction of one quantity: ``y - x @ beta``, ``beta``
    fitted by ridge least squares of the deal means of ``y`` on those of ``x``, on the deals of
    the other folds (penalty of :data:`PENALTIES` chosen by inner cross-validation on them).

    Unbiased by construction when every control has expectation 0 (luck terms do, whatever the
    value function): the ``beta`` applied to a deal is fitted on other deals, whose games are
    independent of it, so ``E[x @ beta] = E[x] @ E[beta] = 0``. The interval of the corrected
    values (:func:`luck_stats`) is the t interval of their deal means, as for plain ones; it
    leaves out the spread of ``beta`` itself (valid as the deals grow, as in double machine
    learning's cross-fitting; with a useless control ``beta`` is near 0 and the interval is the
    plain one's, slightly wider).

    Args:
        y: float64 (G,) the plain value per game.
        x: float64 (G, c) the controls per game (each of expectation 0).
        deals: int64 (G,) deal of each game (a deal's games stay in one fold; the D deals present
            are numbered 0..D-1 in order, so a partial run's gaps do not matter).
        folds: number of folds (2..D).
        seed: seed of the split of the deals into folds and of the inner folds.

    Returns:
        ``{"values": float64 (G,) corrected per game, "beta": float64 (folds, c),
        "penalty": [float] * folds, "fold": int64 (D,) fold of each deal}``; with fewer than
        :data:`MIN_FIT_DEALS` deals (or no control) ``beta`` is 0 and the values are ``y``.
    """
    y = np.asarray(y, np.float64)
    x = np.asarray(x, np.float64).reshape(len(y), -1)
    deals = np.unique(np.asarray(deals), return_inverse=True)[1].reshape(-1)   # a partial run's deals, renumbered
    d = int(deals.max()) + 1
    rng = np.random.default_rng([int(seed), _TAG])
    fold = rng.permutation(d) % folds
    beta = np.zeros((folds, x.shape[1]), np.float64)
    penalty: list = [None] * folds
    if d < max(MIN_FIT_DEALS, 2 * folds) or x.shape[1] == 0:
        return {"values": y.copy(), "beta": beta, "penalty": penalty, "fold": fold}
    yd, xd = _stats.deal_means(y, deals), _group_means(x, deals)
    values = np.empty_like(y)
    for f in range(folds):
        tr = fold != f
        lam = _choose_penalty(yd[tr], xd[tr], rng)
        beta[f] = _ridge(yd[tr], xd[tr], [lam])[0]
        penalty[f] = lam
        games = fold[deals] == f
        values[games] = y[games] - x[games] @ beta[f]
    return {"values": values, "beta": beta, "penalty": penalty, "fold": fold}


def row_controls(event_luck: np.ndarray, slots: Sequence[int], feature_luck: Optional[np.ndarray] = None,
                 seat_of_slot: Optional[np.ndarray] = None, decision_luck: Optional[np.ndarray] = None) -> np.ndarray:
    """The controls of a row's fitted estimate: float64 (G, c).

    Columns: every event's luck of the value by slot (``event_luck`` float64 (G, E, 2, n),
    flattened: E * 2 * n columns, the same for every row: its own terms and the others'); and,
    for a one-slot row given ``feature_luck`` float64 (G, m) (seat-absolute) and
    ``seat_of_slot`` int64 (G, n), the feature luck by the row's seat (n * m columns: column
    ``s * m + j`` is feature ``j``'s luck in the games where the row sits at seat ``s``, else 0),
    so the fitted value is a linear value of the whole state for this lineup at each seat; and
    the decision terms ``decision_luck`` float64 (G, 2, n) by slot when given (2 * n columns).
    """
    g = event_luck.shape[0]
    cols = [event_luck.reshape(g, -1)]
    if decision_luck is not None:
        cols.append(decision_luck.reshape(g, -1))
    if feature_luck is not None and feature_luck.size and len(slots) == 1 and seat_of_slot is not None:
        n = seat_of_slot.shape[1]
        onehot = np.eye(n)[seat_of_slot[:, slots[0]]]                     # (G, n)
        cols.append((onehot[:, :, None] * feature_luck[:, None, :]).reshape(g, -1))
    return np.concatenate(cols, axis=1)


def fitted_stats(plain_w: np.ndarray, plain_p: np.ndarray, plain_m: np.ndarray, controls: np.ndarray,
                 deals: np.ndarray, folds: int = FOLDS, seed: int = 0) -> dict:
    """The fitted (cross-fitted control-variate) estimates of one row: as :func:`luck_stats`'s
    corrected ones (``"win_rate"``, ``"win_ci"``, ``"points"``, ``"points_ci"``, ``"margin"``,
    ``"margin_ci"``, ``"var_ratio"``, ``"half_width_ratio"``: fitted / plain over the deal means),
    each quantity corrected by :func:`crossfit` on ``controls`` (G, c); ``"controls"``: c;
    ``"penalty"``: ``{quantity: [per fold]}``; ``"beta_norm"``: ``{quantity: max |beta| over the
    folds' coefficients}``."""
    out: dict = {"var_ratio": {}, "half_width_ratio": {}, "penalty": {}, "beta_norm": {},
                 "controls": int(controls.shape[1]), "folds": int(folds)}
    for q, plain in (("win_rate", plain_w), ("points", plain_p), ("margin", plain_m)):
        cf = crossfit(plain, controls, deals, folds, seed)
        _, _, _, pvar = _interval(_stats.deal_means(plain, deals))
        cm, clo, chi, cvar = _interval(_stats.deal_means(cf["values"], deals), q == "win_rate")
        key = "win" if q == "win_rate" else q
        out[q], out[f"{key}_ci"] = cm, (clo, chi)
        ratio = cvar / pvar if pvar > 0 else math.nan
        out["var_ratio"][q] = ratio
        out["half_width_ratio"][q] = math.sqrt(ratio) if ratio == ratio else math.nan
        out["penalty"][q] = cf["penalty"]
        out["beta_norm"][q] = float(np.abs(cf["beta"]).max()) if cf["beta"].size else 0.0
    return out


def decision_summary(outcomes: Sequence[GameOutcome], deals: np.ndarray) -> dict:
    """The decision terms of a run (``{}`` when none were tracked): ``resampled_per_game`` and
    ``disagreed_per_game`` (decisions resampled, and those whose draws differed from the action
    played, per game), and ``decision_luck_mean``: ``{"points" | "win_share": [(mean, low,
    high) per slot, in lineup order]}`` (t 95% over the deal means, ``deals`` int64 (G,) as the other intervals:
    the bias check of the decision terms alone, 0 in expectation)."""
    dec = [o for o in outcomes if isinstance(o, LuckOutcome) and o.decision_luck]
    if not dec or len(dec) != len(outcomes):
        return {}
    arr = np.array([o.decision_luck for o in dec], np.float64)            # (G, 2, n)
    return {"resampled_per_game": float(np.mean([o.resampled for o in dec])),
            "disagreed_per_game": float(np.mean([o.disagreed for o in dec])),
            "decision_luck_mean": {q: [tuple(float(v) for v in _stats.t_interval(
                                           _stats.deal_means(arr[:, i, k], deals))) for k in range(arr.shape[2])]
                                   for i, q in enumerate(QUANTITIES)}}


def event_luck_array(outcomes: Sequence[GameOutcome]) -> np.ndarray:
    """float64 (G, E, 2, n) every game's per-event luck by slot (E the most events of a game;
    a game with fewer is padded with 0: no event, no luck)."""
    e = max(len(o.event_luck) for o in outcomes)
    n = len(outcomes[0].points)
    out = np.zeros((len(outcomes), e, 2, n), np.float64)
    for i, o in enumerate(outcomes):
        if o.event_luck:
            out[i, :len(o.event_luck)] = np.array(o.event_luck, np.float64)
    return out


def decision_luck_array(outcomes: Sequence[GameOutcome]) -> Optional[np.ndarray]:
    """float64 (G, 2, n) every game's decision terms (index 0 points, 1 win share; slots in lineup
    order), or None when the run tracked none
    or resampled no decision (no bot of the lineup offers draws: all terms 0)."""
    if not all(getattr(o, "decision_luck", ()) for o in outcomes) or not any(o.resampled for o in outcomes):
        return None
    return np.array([o.decision_luck for o in outcomes], np.float64)


def feature_luck_array(outcomes: Sequence[GameOutcome]) -> Optional[np.ndarray]:
    """float64 (G, m) every game's feature luck, or None when the run tracked none."""
    if not outcomes[0].feature_luck:
        return None
    return np.array([o.feature_luck for o in outcomes], np.float64)


def _option(check: Callable[[int], int], legal: str) -> Callable[[str], int]:
    """An argparse ``type=``: ``check(int(text))``, else argparse's usage error (exit status 2)
    naming ``legal``."""
    def convert(text: str) -> int:
        import argparse

        try:
            return check(int(text))
        except (ValueError, ConfigError):
            raise argparse.ArgumentTypeError(f"invalid value {text!r}; legal values: {legal}") from None

    return convert


#: argparse ``type=`` of a ``--luck-samples`` option: an int in 1..4096.
samples_option = _option(check_samples, "an int in 1..4096")
#: argparse ``type=`` of a ``--luck-decisions`` option: an int in 0..:data:`MAX_DECISIONS`.
decisions_option = _option(check_decisions, f"an int in 0..{MAX_DECISIONS}")


def add_estimator_options(p) -> None:
    """Add ``--estimator`` (default None: the command's default, :func:`default_estimator`) and
    ``--luck-samples`` to an argparse parser."""
    p.add_argument("--estimator", choices=ESTIMATORS, default=None,
                   help="plain: the plain estimates only (the output as before); corrected / both: also the "
                        "luck-corrected and fitted win rates and margins, with their intervals and variance ratios "
                        "(default both; plain for a game that declares no chance hook; docs/tournament.md)")
    p.add_argument("--luck-samples", type=samples_option, default=DEFAULT_SAMPLES, metavar="K",
                   help=f"outcomes dealt again per chance event for the correction, 1..4096 (default {DEFAULT_SAMPLES})")


def default_estimator(game: str, estimator: Optional[str]) -> str:
    """``estimator``, or when None ``"both"`` for a game that declares a chance hook and
    ``"plain"`` for one that does not (the commands' default)."""
    if estimator is not None:
        return check_estimator(estimator)
    return "both" if get_game(game).chance_hook else "plain"
