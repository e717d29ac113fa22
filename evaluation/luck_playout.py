"""A value of the whole state that knows the lineup: playouts of the table's own bots.

The luck correction (:mod:`hod.evaluation.luck`) subtracts, at each chance event, ``V(after) -
mean V(dealt again)``. Any ``V`` keeps it unbiased; how much variance it removes depends on how
well ``V`` predicts *these bots'* outcome from the position. A value of the cards alone cannot:
what a deal is worth to one bot against another is how the two play it (docs/results.md,
"Luck-corrected estimates"). :class:`LineupPlayoutValue` asks the bots themselves: ``V(state)``
is the mean outcome of playouts from ``state`` in the game's batched engine, every seat played
by a copy of the bot that sits there in the game being corrected (so it changes with the seat
order of each game), the later chance events dealt from fresh seeds.

With deterministic bots and exact copies this is the conditional expectation of the outcome
given the position, estimated from ``playouts`` games: the luck terms of all events then add up
to the outcome's deviation from its mean, up to the playouts' own noise (``Var / playouts`` per
event) and the re-deals' (``Var / K``). The cost is playing those games: per event ``playouts``
playouts from the actual state plus one from each of the ``K`` re-dealt states, all in one batch.

A bot that searches with beliefs (``needs_belief``) is too slow to play inside playouts; it is
replaced by its ``playout_surrogate()`` (Tapeo ``search``: the network it ranks its candidates
with; Ronda Robada ``search`` and ``rollout``: the expert whose playouts they are built on), a
documented approximation that keeps the estimate unbiased (any ``V`` does).
Network bots (:class:`hod.agents.onnx_policy.OnnxPolicy`, an observation encoder's features
included, e.g. Ronda Robada's ``robada_plans``) are asked once per step for all rows of their
seat, and so are bots with a batch method ``act_batch(observations, action_masks)`` (both games'
``expert``: :meth:`hod.agents.tapeo_bots.ExpertBot.act_batch`,
:meth:`hod.agents.robada_bots.ExpertBot.act_batch`); other bots one row at a time. In a game
whose seats act one at a time (``engine.movers == 1``, Ronda Robada) each step asks, for each
seat, the rows where that seat is to act, and steps only the games not over.

Only games whose batched engine module offers ``state_record(states)`` (single-engine states to
a batched record) and ``redraw_future(record, seeds)`` (the chance still to come drawn from other
seeds: Tapeo's later rounds' seed, Ronda Robada's cards still to deal) are supported: Tapeo and
Ronda Robada.
"""
from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

from hod.agents.batch_policies import BotPolicy
from hod.core.errors import ConfigError
from hod.core.games import get_game

#: The name of this value (``LuckSpec.value = "playout"``, the tournament's ``--value playout``).
NAME = "playout"
#: Third word of the playouts' future seeds (``SeedSequence([game seed, event, tag])``).
_TAG = 0x91A7
#: Third word of the decision values' future seeds (:meth:`LineupPlayoutValue.decision_values`).
_DECISION_TAG = 0x91A8


def _describe(bot: Any) -> str:
    """A bot in a few words: its export's file name, else its registry name or type."""
    path = getattr(bot, "path", None)
    return Path(path).name if path is not None else str(getattr(bot, "name", "") or type(bot).__name__)


def _batched_module(game: str):
    info = get_game(game)
    mod = importlib.import_module(info.batched_engine.split(":")[0]) if info.batched_engine else None
    if mod is None or not hasattr(mod, "state_record") or not hasattr(mod, "redraw_future"):
        raise ConfigError(f"luck value {NAME!r} needs a batched engine that loads single-game states "
                          f"(state_record, redraw_future); {game!r} has none; legal: another value (tournament "
                          f"--value), or game 'tapeo' or 'robada'")
    return mod


class LineupPlayoutValue:
    """``V(state)``: the lineup's own bots played out from ``state`` (module docstring).

    Args:
        game: a game with a batched engine that loads states (``"tapeo"``, ``"robada"``).
        bots: one bot per lineup slot (copies of the table's, not the table's own instances:
            playouts must not move the real bots' generators).
        playouts: playouts from the actual state after each event (int >= 1).

    Call :meth:`seat_lineup` before each game with its seating (seat -> slot). Then
    ``self(state)`` gives float64 (2, n) (row 0 each seat's mean final points, row 1 its mean win
    share, ties shared) and :meth:`values` the rows of several states in one batch.

    Raises:
        ConfigError: a game without such an engine, or ``playouts`` not an int >= 1.
    """

    name = NAME

    def __init__(self, game: str, bots: Sequence[Any], playouts: int = 16,
                 played_by: Optional[Sequence[Optional[str]]] = None) -> None:
        if isinstance(playouts, bool) or not isinstance(playouts, int) or playouts < 1:
            raise ConfigError(f"playouts={playouts!r}; legal values: an int >= 1")
        self._mod = _batched_module(game)
        self.game = game
        self.playouts = int(playouts)
        self.bots = [b.playout_surrogate() if getattr(b, "needs_belief", False) and hasattr(b, "playout_surrogate")
                     else b for b in bots]
        given = list(played_by) if played_by is not None else [None] * len(self.bots)
        #: per slot, what plays it inside the playouts (the run's ``luck["played_by"]``)
        self.played_by = [g if g else ("itself" if new is old else f"its playout_surrogate(): {_describe(new)}")
                          for g, old, new in zip(given, bots, self.bots)]
        for b in self.bots:
            if getattr(b, "needs_belief", False):
                raise ConfigError(f"luck value {NAME!r}: bot {type(b).__name__} searches with beliefs and offers no "
                                  f"playout_surrogate(); legal: bots that play from an observation alone")
        #: per slot, the bot as a batch policy (:class:`hod.agents.batch_policies.BotPolicy`)
        self._as_batch = [BotPolicy(b, game) for b in self.bots]
        self.seating: Optional[np.ndarray] = None
        self.env_seed = 0
        self._engines: dict = {}

    def seat_lineup(self, seating: Sequence[int], env_seed: int = 0) -> None:
        """The next game's seating (``seating[seat]`` = the slot of the bot there) and seed (the
        playouts' future seeds and the bot copies' generators derive from it).

        Raises:
            ConfigError: a seating that is not an order of the slots ``0 .. len(bots) - 1``.
        """
        order = [int(x) for x in seating]
        if sorted(order) != list(range(len(self.bots))):
            raise ConfigError(f"seating={list(seating)!r}; legal: an order of the slots 0..{len(self.bots) - 1}, "
                              f"one per seat")
        self.seating = np.asarray(order, np.int64)
        self.env_seed = int(env_seed)
        for k, b in enumerate(self.bots):
            if hasattr(b, "reset"):
                b.reset(int(np.random.SeedSequence([self.env_seed, k, _TAG]).generate_state(1)[0]))

    def __call__(self, state: Any) -> np.ndarray:
        return self.values([state], actual=0)[0]

    def values(self, states: Sequence[Any], actual: Optional[int] = None, event: int = 0) -> np.ndarray:
        """float64 (len(states), 2, n): the value of each state, all played out in one batch.

        State ``actual`` (the position the game reached) gets :attr:`playouts` playouts whose
        later deals come from the seeds ``f_0 .. f_{P-1}`` (``SeedSequence([game seed, event,
        tag])``, independent of the deal); every other state (a re-dealt one) gets one playout,
        the ``j``-th of them from ``f_{j mod P}``: common random numbers, so the later deals'
        luck, shared, cancels from ``V(actual) - mean V(re-dealt)``, while each side keeps its
        expectation (the seeds do not depend on the deals). Without ``actual`` each state gets
        one playout from its own seed. All states must be at the same point of the game (right
        after one event).
        """
        states = list(states)
        reps = [self.playouts if i == actual else 1 for i in range(len(states))]
        seeds = None
        if actual is not None:   # the later deals: common random numbers for all the states
            futures = np.random.SeedSequence([self.env_seed, int(event), _TAG]).generate_state(self.playouts, np.uint64)
            seeds = np.concatenate([futures if i == actual else futures[[(i - (i > actual)) % self.playouts]]
                                    for i in range(len(states))])
        return self._play_out(states, reps, seeds)

    def decision_values(self, states: Sequence[Any], decision: int, playouts: Optional[int] = None) -> np.ndarray:
        """float64 (len(states), 2, n): the value of each of the positions one decision can
        lead to (the same position after different actions), each from ``playouts`` playouts
        (default :attr:`playouts`) on **common random numbers**: every position's j-th playout
        draws its later chance from the same seed ``f_j`` (``SeedSequence([game seed, decision,
        decision tag])``), and the bot copies start each position from the same generators
        (``default_rng([game seed, decision, slot, decision tag])``), fixed before the actions
        are known; so equal positions get equal values (once positions differ, the copies'
        draws are consumed by different rows). The copies' generators are put back afterwards,
        so the chance events' values are those of a run without decision terms. ``states``: at
        least one, all with one ``Config``.

        Raises:
            RuntimeError: called before :meth:`seat_lineup`.
            ConfigError: ``playouts`` not an int >= 1.
        """
        p = self.playouts if playouts is None else playouts
        if isinstance(p, bool) or not isinstance(p, (int, np.integer)) or p < 1:
            raise ConfigError(f"playouts={playouts!r}; legal values: an int >= 1")
        futures = np.random.SeedSequence([self.env_seed, int(decision), _DECISION_TAG]).generate_state(int(p), np.uint64)
        own = [getattr(b, "rng", None) for b in self.bots]
        out = []
        try:
            for st in states:        # one block per position, each from the same generators
                for k, b in enumerate(self.bots):
                    if own[k] is not None:
                        b.rng = np.random.default_rng([self.env_seed, int(decision), k, _DECISION_TAG])
                out.append(self._play_out([st], [int(p)], futures)[0])
        finally:
            for k, b in enumerate(self.bots):
                if own[k] is not None:
                    b.rng = own[k]
        return np.stack(out)

    def _play_out(self, states: list, reps: list, seeds: Optional[np.ndarray]) -> np.ndarray:
        """float64 (len(states), 2, n): the mean outcome of ``reps[i]`` playouts of state ``i``
        (rows in order; ``seeds``, one per row, redraw the chance still to come, None: keep it)."""
        if self.seating is None:
            raise RuntimeError("seat_lineup(seating) must be called before the values of a game")
        rows = [st for st, r in zip(states, reps) for _ in range(r)]
        cfg = rows[0].config
        rec = self._mod.state_record(rows, cfg)
        if seeds is not None:
            self._mod.redraw_future(rec, seeds)
        eng = self._engine(cfg, len(rows))
        eng.load_state(rec)
        n = cfg.num_players
        if getattr(eng, "movers", n) == 1:     # one seat acts at a time: step the games not over
            while not eng.terminal.all():
                live = np.flatnonzero(~eng.terminal)
                eng.step(self._sequential_picks(eng, live, n), games=live)
            pts = eng.scores().astype(np.float64)
            win = self._mod.win_shares(pts)
        else:
            while not eng.terminal.all():
                eng.step(self._picks(eng, n))
            s = eng.state
            pts = s.final_scores.astype(np.float64)
            win = s.winners.astype(np.float64)
            win /= np.maximum(win.sum(axis=1, keepdims=True), 1.0)
        out = np.empty((len(states), 2, n), np.float64)
        k = 0
        for i, r in enumerate(reps):
            out[i, 0] = pts[k:k + r].mean(axis=0)
            out[i, 1] = win[k:k + r].mean(axis=0)
            k += r
        return out

    def _engine(self, cfg: Any, batch: int):
        key = (cfg, batch)
        eng = self._engines.get(key)
        if eng is None:
            if len(self._engines) > 16:
                self._engines.clear()
            cls = getattr(self._mod, get_game(self.game).batched_engine.split(":")[1])
            eng = self._engines[key] = cls(cfg, batch, seed=0)
        return eng

    def _ask(self, seat: int, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """int64 (G,): the picks of the copy of the bot at ``seat`` for observations (G, W) and
        masks (G, A): a deterministic network in one inference (its encoder's features appended
        when W is the game's observation), else its ``act_batch`` or row by row (BotPolicy)."""
        bot = self.bots[int(self.seating[seat])]
        size = getattr(bot, "obs_size", None)
        if callable(getattr(bot, "run", None)) and getattr(bot, "deterministic", False) and size is not None \
                and obs.shape[1] in (size, size - getattr(getattr(bot, "encoder", None), "extra", 0)):
            return bot.run(obs, mask)[0]
        return self._as_batch[int(self.seating[seat])](obs, mask)

    def _picks(self, eng: Any, n: int) -> np.ndarray:
        """int64 (G, n): each seat's pick by the copy of the bot sitting there (every seat acts)."""
        obs = eng.observe()
        mask = eng.legal_mask()
        picks = np.empty((obs.shape[0], n), np.int64)
        for seat in range(n):
            picks[:, seat] = self._ask(seat, np.ascontiguousarray(obs[:, seat]), np.ascontiguousarray(mask[:, seat]))
        return picks

    def _sequential_picks(self, eng: Any, live: np.ndarray, n: int) -> np.ndarray:
        """int64 (L, 1): in the games ``live``, the pick of the seat to act, by the copy of the
        bot sitting there (one call per seat for the rows where it acts)."""
        obs = eng.observe(games=live)[:, 0]
        mask = eng.legal_mask(games=live)[:, 0]
        seat = eng.current[live]
        picks = np.empty((live.size, 1), np.int64)
        for s in range(n):
            rows = np.flatnonzero(seat == s)
            if rows.size:
                picks[rows, 0] = self._ask(s, np.ascontiguousarray(obs[rows]), np.ascontiguousarray(mask[rows]))
        return picks
