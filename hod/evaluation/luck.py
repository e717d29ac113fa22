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

Not here: corrections at the decisions of bots whose action probabilities are known (AIVAT's
action terms); only chance events are corrected.
"""
from __future__ import annotations

import math
import signal
from dataclasses import dataclass
from typing import Any, Callable, Optional, Protocol, Sequence

import numpy as np

from hod.core.errors import ConfigError
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
#: Rows of a value: expected final points, expected win share.
QUANTITIES = ("points", "win_share")


class ChanceHook(Protocol):
    """A game's chance events (found through ``GameInfo.chance_hook``, never by the game's name).

    ``count(state) -> int``: chance events that have happened in the state's game so far.
    ``redeal(state, seed) -> state``: a copy of a state right after a chance event in which that
    event is dealt again from game seed ``seed`` (the engine's own deal code; ``state`` is not
    changed). ``value(state) -> float64 (2, n)``: a cheap value of the whole state (points, win
    share), named ``value_name``.
    """

    value_name: str

    def count(self, state: Any) -> int: ...

    def redeal(self, state: Any, seed: int) -> Any: ...

    def value(self, state: Any) -> np.ndarray: ...


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
    if not isinstance(estimator, str) or estimator not in ESTIMATORS:
        raise ConfigError(f"estimator={estimator!r}; legal values: {list(ESTIMATORS)}")
    return estimator


def check_samples(samples: object) -> int:
    """Return ``samples`` (chance outcomes dealt again per event) if it is an int in 1..4096.

    Raises:
        ConfigError: anything else.
    """
    if isinstance(samples, bool) or not isinstance(samples, int) or not 1 <= samples <= 4096:
        raise ConfigError(f"luck_samples={samples!r}; legal values: an int in 1..4096")
    return int(samples)


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
    """

    def __init__(self, hook: ChanceHook, value: Callable[[Any], np.ndarray], samples: int, num_players: int):
        self.hook, self.value, self.samples, self.n = hook, value, check_samples(samples), int(num_players)
        self.start(0)

    def start(self, env_seed: int) -> None:
        """A new game dealt from ``env_seed``: no event seen, luck 0."""
        self.env_seed = int(env_seed)
        self.seen = 0
        self.luck = np.zeros((2, self.n), np.float64)

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
        actual = self._value(state)
        mean = np.zeros_like(actual)
        for s in resample_seeds(self.env_seed, self.seen, self.samples):
            mean += self._value(self.hook.redeal(state, int(s)))
        self.luck += actual - mean / self.samples
        self.seen = c


@dataclass(frozen=True)
class LuckOutcome(GameOutcome):
    """A :class:`~hod.evaluation.play.GameOutcome` with its luck, by lineup slot:
    ``luck_points[k]`` and ``luck_win_share[k]`` summed over the game's ``events`` chance events
    (corrected = plain - luck)."""

    luck_points: tuple[float, ...] = ()
    luck_win_share: tuple[float, ...] = ()
    events: int = 0


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
        self._tracker.observe(self._env.unwrapped.game_state)


@dataclass(frozen=True)
class LuckSpec:
    """What a worker needs to track luck: the value function (None = the hook's cheap value) and
    ``samples`` (picklable when workers > 1)."""

    value: Optional[Callable[[Any], np.ndarray]] = None
    samples: int = DEFAULT_SAMPLES


def value_name(game: str, value: Optional[Callable]) -> str:
    """The name of the value function a run uses: its ``name`` attribute, the hook's
    ``value_name`` for None, else its type's name."""
    if value is None:
        return chance_hook(game).value_name
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
            tracker = LuckTracker(hook, luck.value or hook.value, luck.samples, num_players)
        self.tracker = tracker
        self.env = _ObservedEnv(self.env, self.tracker)

    def _play(self, spec: ScheduledGame) -> LuckOutcome:
        self.tracker.start(spec.env_seed)
        out = super()._play(spec)
        self.tracker.observe(self.env.unwrapped.game_state)
        luck = self.tracker.luck
        lp, lw = [0.0] * self.n, [0.0] * self.n
        for seat in range(self.n):
            slot = spec.seating[seat]
            lp[slot], lw[slot] = float(luck[0, seat]), float(luck[1, seat])
        return LuckOutcome(out.index, out.points, out.win_share, out.steps, tuple(lp), tuple(lw), self.tracker.seen)


def init_luck_worker(game: str, num_players: int, specs: Sequence[BotSpec], env_kwargs: dict, luck: LuckSpec) -> None:
    """Process-pool initializer of a luck-tracking tournament: the signals of
    :func:`hod.evaluation.play.init_worker`, and this worker's table is a :class:`LuckTable`, so
    :func:`hod.evaluation.play.play_chunk` (its failures carried back the same way) plays on it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _play._TABLE = LuckTable(game, num_players, specs, env_kwargs, luck)


def _interval(values: np.ndarray) -> tuple[float, float, float, float]:
    """(mean, low, high, sample variance) of independent observations (t 95%)."""
    m, lo, hi = _stats.t_interval(values)
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
        95% t over deal means), ``"plain_win_ci_t"`` (the plain win rate's t interval over
        deal means, the like-for-like comparison), ``"var_ratio"``: ``{quantity: corrected /
        plain variance of the deal means}`` (``half_width_ratio`` = its square root), and
        ``"luck_mean"``: ``{quantity: (mean, low, high)}`` of the luck (the bias check: 0 in
        expectation).
    """
    out: dict = {"var_ratio": {}, "half_width_ratio": {}, "luck_mean": {}}
    for q, plain, luck in (("win_rate", plain_w, luck_w), ("points", plain_p, luck_p), ("margin", plain_m, luck_m)):
        pd = _stats.deal_means(plain, deals)
        cd = _stats.deal_means(plain - luck, deals)
        pm, plo, phi, pvar = _interval(pd)
        cm, clo, chi, cvar = _interval(cd)
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
