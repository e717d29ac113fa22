"""Opponents for the learner: fixed bot lists and the self-play opponent pool.

An *opponent source* hands the training environments one label per opponent seat per episode
(``sample(rng)``) and builds the bot for a label (``make_bot(label, seed)``). Two sources:

* :class:`FixedOpponents`: registry bots by name (``"random"``, ``"greedy"``, ``"expert"``),
  drawn uniformly per seat.
* :class:`OpponentPool` (self-play), sampling scheme, per opponent seat and per episode:

  =============  ==============  =========================================================
  category       probability     member
  =============  ==============  =========================================================
  ``latest``     ``p_latest``    a frozen copy of the learner, refreshed at the start of
                                 every rollout (so it lags the learner by < one rollout)
  ``past``       ``p_past``      one of the stored snapshots, uniformly; a snapshot is
                                 added every ``snapshot_every`` steps, at most ``max_size``
                                 are kept, the oldest is dropped first
  ``heuristic``  ``p_heuristic`` one of the heuristic bots, uniformly
  =============  ==============  =========================================================

  A heuristic is a registered bot name or the path of an ONNX export on the plain observation
  (``*.onnx``, ``python -m hod.training.export``; :func:`is_export_path`), e.g. an exploiter (a best
  response to the learner, :mod:`hod.training.best_response`) kept as a fixed league member: it is
  built as :class:`hod.agents.onnx_policy.OnnxPolicy` (argmax of its masked logits), its table
  sizes read from its model card.

  A category with no member yet (no snapshot, no latest copy) is skipped and the other
  probabilities are renormalised. Policy opponents sample from their masked softmax
  (``deterministic=False``, more varied play) unless told otherwise.

  With ``weighting="pfsp"`` (prioritized fictitious self-play, as in AlphaStar's league) each
  member's share of its category, ``p_category / len(category)``, is multiplied by
  ``(1 - p) ** exponent``, where ``p`` is the learner's recent pairwise score against that
  member (1 for a higher final score than that seat, 1/2 for an equal one, 0 for a lower one;
  the last ``window`` results, plus ``prior`` pseudo-results of 1/2), and the products are
  normalised over the pool: opponents that beat the learner are drawn more often, the ones it
  beats less. The factors change only at :meth:`OpponentPool.refresh_weights` (the trainer calls
  it once per rollout), from the results the training env reports
  (:meth:`OpponentPool.record_result`).

:class:`BatchOpponents` turns any source into the batch policies and drawing probabilities of the
learner vector env (:class:`hod.training.learner_env.LearnerVecEnv`, ``engine = "batched"``):

===================  =========================================================================
label                batch policy
===================  =========================================================================
``latest``           :class:`hod.training.numpy_policy.NumpyBatchPolicy` on the pool's latest copy
                     (the same object, refreshed in place each rollout, so nothing to swap)
``past:<name>``      :class:`~hod.training.numpy_policy.NumpyBatchPolicy` on that snapshot
``heuristic:random`` :func:`hod.agents.batch_policies.random_policy` (uniform legal actions, in batch,
                     with the engine module's ``random_legal_actions``)
``heuristic:ppo``    a shipped ONNX opponent on the plain observation (Tapeo's ``ppo``, ``ppo_v1``, ...):
                     a :class:`~hod.training.numpy_policy.NumpyBatchPolicy` on the export's actor
                     (one matrix product per batch; argmax, as the registered bot plays, unless
                     ``heuristic_options`` say ``{ppo = {deterministic = false}}``)
``heuristic:<path>`` an ONNX export file (``*.onnx``, :func:`is_export_path`, e.g. an exploiter): the
                     same as a shipped opponent of that file (argmax)
``heuristic:<bot>``  a :class:`hod.agents.batch_policies.BotPolicy` around ``agents.make(game, bot)``
                     (the bot's ``act_batch`` when it has one, Tapeo's ``expert``; else one call per row)
===================  =========================================================================

Each member is drawn with its probability in the pool's sampling scheme (category probability
over the available categories, split evenly among the category's members), per opponent seat,
when a game is dealt (the env's ``opponent_weights``). The env watches the source
(:meth:`BatchOpponents.push_if_changed` before every step): when its members change (the first
latest copy, a snapshot added or evicted) it calls the env's ``set_opponents``. A member that
stays keeps its index and its policy object (newcomers are appended), and the env matches
policies by object: games in progress keep their opponents; only a seat whose opponent left the
pool is drawn again, and games dealt from then on draw with the new weights. Search bots
(``needs_belief``) cannot be batch opponents: they need the single-game tables
(:mod:`hod.training.table`, ``engine = "single"``), which give them belief samples.

Nothing here imports torch: policies are :class:`hod.training.numpy_policy.NumpyPolicy`.
"""
from __future__ import annotations

from collections import Counter, OrderedDict, deque
from pathlib import Path
from typing import Any, Iterable, Optional, Protocol, Sequence, runtime_checkable

import numpy as np

from hod import agents
from hod.agents.base import Bot
from hod.agents.batch_policies import bot_policy, random_policy
from hod.core.errors import ConfigError
from hod.core.games import game_names, get_game

from .numpy_policy import NumpyBatchPolicy, NumpyPolicy, PolicyBot

CATEGORIES = ("latest", "past", "heuristic")
#: Values of the pool's ``weighting``: ``"uniform"`` (each member its category's probability split
#: evenly) or ``"pfsp"`` (that share times ``(1 - p) ** exponent``, module docstring).
WEIGHTINGS = ("uniform", "pfsp")


@runtime_checkable
class OpponentSource(Protocol):
    """What the training environments need from an opponent source."""

    def sample(self, rng: np.random.Generator) -> str:
        """Label (a str, one of :meth:`labels`) of the opponent for one seat of one episode, drawn
        with ``rng`` (the only source of randomness: same generator state, same label)."""

    def make_bot(self, label: str, seed: Optional[int] = None) -> Bot:
        """A fresh :class:`hod.agents.base.Bot` for ``label`` (one of :meth:`labels`), its generator
        seeded with ``seed`` (None: unseeded).

        Raises:
            KeyError or ConfigError: a label the source does not hold (now).
        """

    def labels(self) -> list[str]:
        """Labels that :meth:`sample` may currently return (a new list of str, in a fixed order;
        a label listed twice is drawn twice as often where the source says so)."""


def is_export_path(name: Any) -> bool:
    """Whether a pool member ``name`` is the path of an ONNX export (a str ending ``.onnx``) rather
    than a registered bot name (no registered name ends so)."""
    return isinstance(name, str) and name.endswith(".onnx")


def bot_player_counts(game: str, name: str) -> Optional[tuple]:
    """The table sizes bot ``name`` plays (None: every size): an export path's from its model card
    (:func:`hod.agents.onnx_policy.card_player_counts`, None when the card is missing: building the
    bot then fails with the reason), a registered bot's from :func:`hod.agents.player_counts`.

    Raises:
        ConfigError: an unregistered name that is not an export path (the registered names listed).
    """
    if is_export_path(name):
        from hod.agents.onnx_policy import card_player_counts

        return card_player_counts(name)
    return agents.player_counts(game, name)


def registered_bot_names(game: str) -> list[str]:
    """Bot names ``agents.make`` knows for ``game``.

    Raises:
        ConfigError: unknown game (legal values listed).
    """
    return agents.names(game)


def make_named_bot(game: str, name: str, seed: Optional[int] = None, **rules: Any) -> Bot:
    """``agents.make(game, name, seed=seed, **rules)``; for an export path (:func:`is_export_path`)
    ``OnnxPolicy(name, game=game, seed=seed, **rules)`` (its card checked against the game).

    Args:
        rules: the table's rule options (:mod:`hod.agents.rules`), and the bot's own options if any
            (e.g. ``determinizations=4`` for a search bot).

    Raises:
        ConfigError: unknown game or bot name (the registered names are listed) or a bad rule
            option (the legal values are named).
        hod.agents.model_card.CheckpointError: an export path whose file or card is unusable or
            made for another game (the reason named).
    """
    if is_export_path(name):
        from hod.agents.onnx_policy import OnnxPolicy

        return OnnxPolicy(name, game=game, seed=seed, **rules)
    return agents.make(game, name, seed=seed, **rules)


def check_bot_names(game: str, names: Iterable[str], observation_only: bool = False,
                    exports: bool = False) -> list[str]:
    """Return ``names`` as a list after checking each is registered.

    Args:
        observation_only: also refuse search bots (``needs_belief``): opponents of the training
            envs decide from their observation alone, nobody gives them belief samples.
        exports: also accept the paths of existing ONNX exports (:func:`is_export_path`; the
            pool's ``heuristics``); the file is loaded only when the bot is made.

    Raises:
        ConfigError: empty list, unknown name (the registered names are listed), an export path
            that is not an existing file (or any export path without ``exports``) or, with
            ``observation_only``, a search bot (the usable names are listed).
    """
    names = [names] if isinstance(names, str) else list(names)
    known = registered_bot_names(game)
    if not names:
        raise ConfigError(f"give at least one opponent; registered for {game}: {known}")
    for n in names:
        if exports and is_export_path(n):
            if not Path(n).is_file():
                raise ConfigError(f"no such file {n!r}; legal: a registered bot of {game!r} {known} or the path of "
                                  f"an existing ONNX export (.onnx, python -m hod.training.export)")
        elif n not in known:
            raise ConfigError(f"no bot {n!r} for {game!r}; registered: {known}"
                              + (" or the path of an existing ONNX export (.onnx)" if exports else ""))
    if observation_only:
        check_observation_only(game, names)
    return names


def check_observation_only(game: str, names: Iterable[str]) -> None:
    """Refuse registered search bots (``agents.needs_belief``) among ``names`` (unregistered names
    are left to the caller).

    Raises:
        ConfigError: a search bot; the message lists the names that decide from the observation.
    """
    known = registered_bot_names(game)
    search = [n for n in names if n in known and agents.needs_belief(game, n)]
    if search:
        usable = [n for n in known if not agents.needs_belief(game, n)]
        raise ConfigError(f"{search} are search bots (they need belief samples of the hidden cards); "
                          f"training opponents decide from their observation only; usable: {usable}")


class FixedOpponents:
    """Registry bots drawn uniformly per seat: ``FixedOpponents("tapeo", ["greedy", "expert"])``.

    Raises:
        ConfigError: unknown bot name, or a search bot (:func:`check_observation_only`).
    """

    def __init__(self, game: str, names: str | Sequence[str]) -> None:
        self.game = game
        self.names = check_bot_names(game, names, observation_only=True)

    def sample(self, rng: np.random.Generator) -> str:
        """One of the bot names, uniformly (a name listed twice is twice as likely): exactly
        ``names[rng.integers(len(names))]``."""
        return self.names[int(rng.integers(len(self.names)))]

    def make_bot(self, label: str, seed: Optional[int] = None) -> Bot:
        """``agents.make(game, label, seed=seed)`` (:func:`make_named_bot`).

        Raises:
            ConfigError: ``label`` is not a registered bot name (the registered ones are listed).
        """
        return make_named_bot(self.game, label, seed)

    def labels(self) -> list[str]:
        """The bot names as given (a new list of str, repeats kept)."""
        return list(self.names)

    def __repr__(self) -> str:
        return f"FixedOpponents({self.game!r}, {self.names})"


def resolve_opponents(game: str, opponents) -> OpponentSource:
    """Turn the ``opponents`` option of the training envs into an :class:`OpponentSource`.

    Accepts a bot name, a sequence of names (drawn uniformly per seat) or a source.

    Raises:
        ConfigError: unknown bot name. TypeError: anything else.
    """
    if isinstance(opponents, str) or (isinstance(opponents, (list, tuple)) and all(isinstance(o, str) for o in opponents)):
        return FixedOpponents(game, opponents)
    if isinstance(opponents, OpponentSource):
        return opponents
    raise TypeError(
        f"opponents={opponents!r}: give a bot name, a list of bot names or an opponent source "
        f"(hod.training.pool.OpponentPool / FixedOpponents)"
    )


class OpponentPool:
    """Self-play opponent pool (sampling scheme in the module docstring).

    Args:
        game: game name (for the heuristic bots).
        heuristics: heuristic bot names (at least one, each registered and, unless
            ``search_bots``, deciding from its observation alone).
        max_size: most past snapshots kept (>= 0).
        p_latest, p_past, p_heuristic: category probabilities (>= 0, not all 0; normalised).
        deterministic: whether policy opponents play argmax (True) or sample (False).
        options: ``{heuristic name: {option: value}}``, the options each heuristic bot is built
            with (e.g. ``{"search": {"determinizations": 4}}``; checked when a bot is made;
            entries of bots that are not heuristics are unused).
        search_bots: accept search bots (``needs_belief``) among ``heuristics``: only for
            environments that give their opponents belief samples (the single-game tables,
            :class:`hod.training.table.LearnerTable`).
        weighting: ``"uniform"`` (today's scheme) or ``"pfsp"`` (:data:`WEIGHTINGS`, module docstring).
        pfsp_exponent: ``exponent`` of the factor ``(1 - p) ** exponent`` (a finite number > 0).
        pfsp_prior: pseudo-results of 1/2 added to each member's results (a finite number > 0,
            so that ``p < 1`` and no member's factor is ever 0).
        pfsp_window: results kept per member, the most recent (an integer >= 1).

    Raises:
        ConfigError: a probability that is negative or not finite, all zero, a ``deterministic``
            that is not a bool, negative ``max_size``, an empty or unknown
            name among ``heuristics`` (the registered names are listed), a search bot among them
            without ``search_bots`` (:func:`check_observation_only`), an unknown ``weighting``
            or a PFSP parameter outside its range (the legal values are named).
    """

    def __init__(self, game: str, heuristics: Sequence[str] = ("greedy", "expert"), max_size: int = 10,
                 p_latest: float = 0.5, p_past: float = 0.3, p_heuristic: float = 0.2,
                 deterministic: bool = False, options: Optional[dict[str, dict]] = None,
                 search_bots: bool = False, weighting: str = "uniform", pfsp_exponent: float = 2.0,
                 pfsp_prior: float = 4.0, pfsp_window: int = 2000) -> None:
        probs = {"latest": p_latest, "past": p_past, "heuristic": p_heuristic}
        if weighting not in WEIGHTINGS:
            raise ConfigError(f"pool weighting={weighting!r}; legal values: {list(WEIGHTINGS)}")
        for key, v in (("pfsp_exponent", pfsp_exponent), ("pfsp_prior", pfsp_prior)):
            if (isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating))
                    or not np.isfinite(v) or v <= 0):   # numpy floats (np.float32(2)) as Python's
                raise ConfigError(f"{key}={v!r}; legal: a finite number > 0")
        if isinstance(pfsp_window, bool) or not isinstance(pfsp_window, (int, np.integer)) or pfsp_window < 1:
            raise ConfigError(f"pfsp_window={pfsp_window!r}; legal: an integer >= 1")
        if (any(isinstance(p, bool) or not isinstance(p, (int, float, np.integer, np.floating)) or not np.isfinite(p)
                or p < 0 for p in probs.values()) or not 0 < sum(probs.values()) < np.inf):
            # nan passed "p < 0" before; a sum of inf (3 x 1e308) normalised them all to 0
            raise ConfigError(f"pool probabilities {probs}: legal: each a finite number >= 0 (they are normalised), "
                              f"not all 0, their sum finite")
        if isinstance(max_size, bool) or not isinstance(max_size, (int, np.integer)) or max_size < 0:
            raise ConfigError(f"pool max_size={max_size!r} must be >= 0; legal values: integers 0, 1, 2, ...")
        if not isinstance(deterministic, (bool, np.bool_)):   # "no" was truthy: argmax play
            raise ConfigError(f"deterministic={deterministic!r}; legal values: [False, True]")
        self.game = game
        self.heuristics = check_bot_names(game, heuristics, observation_only=not search_bots, exports=True)
        self.options = {k: dict(v) for k, v in (options or {}).items()}
        self.max_size = int(max_size)
        self.probs = {k: float(v) for k, v in probs.items()}
        self.deterministic = deterministic
        self.latest: Optional[NumpyPolicy] = None
        self.past: "OrderedDict[str, NumpyPolicy]" = OrderedDict()
        self.weighting = weighting
        self.pfsp_exponent, self.pfsp_prior = float(pfsp_exponent), float(pfsp_prior)
        self.pfsp_window = int(pfsp_window)
        self.results: dict[str, deque] = {}     # label -> the learner's last pairwise scores (0, 0.5, 1)
        self.factors: dict[str, float] = {}     # label -> PFSP factor, as of the last refresh_weights()
        self.weights_version = 0                # bumped by refresh_weights(): the envs' weights changed

    # ---- members -----------------------------------------------------------------------------
    def update_latest(self, policy: NumpyPolicy) -> None:
        """Refresh the ``latest`` copy (in place once it exists, so live bots follow)."""
        if self.latest is None:
            self.latest = NumpyPolicy(policy.layers, policy.head, policy.activation, policy.encoder.name)
            self.latest.layers = [(w.copy(), b.copy()) for w, b in self.latest.layers]
            self.latest.head = (self.latest.head[0].copy(), self.latest.head[1].copy())
        else:
            self.latest.copy_from(policy)

    def add_snapshot(self, name: str, policy: NumpyPolicy) -> None:
        """Store a frozen snapshot as ``past:<name>``; drops the oldest beyond ``max_size`` (and
        its PFSP results)."""
        if self.max_size == 0:
            return
        self.past[name] = policy
        self.past.move_to_end(name)
        while len(self.past) > self.max_size:
            old, _ = self.past.popitem(last=False)
            self.results.pop("past:" + old, None)
            self.factors.pop("past:" + old, None)

    # ---- prioritized fictitious self-play ----------------------------------------------------
    def record_result(self, label: str, score: float) -> None:
        """Record one result of the learner against the member ``label``: ``score`` 1 (the learner
        finished with more points than that seat), 0.5 (as many), 0 (fewer). Kept for every label
        (the newest ``pfsp_window`` per member); used only with ``weighting="pfsp"``, at the next
        :meth:`refresh_weights`.

        Raises:
            ValueError: ``score`` not one of 0, 0.5, 1.
        """
        if score not in (0.0, 0.5, 1.0):
            raise ValueError(f"score={score!r}; legal values: 0, 0.5, 1")
        q = self.results.get(label)
        if q is None:
            q = self.results[label] = deque(maxlen=self.pfsp_window)
        q.append(float(score))

    def learner_score(self, label: str) -> float:
        """The learner's estimated pairwise score against ``label``:
        ``(sum of its kept results + prior / 2) / (their count + prior)`` (1/2 with no result)."""
        q = self.results.get(label, ())
        return (float(sum(q)) + 0.5 * self.pfsp_prior) / (len(q) + self.pfsp_prior)

    def pfsp_factor(self, label: str) -> float:
        """``(1 - learner_score(label)) ** pfsp_exponent``, in (0, 1)."""
        return (1.0 - self.learner_score(label)) ** self.pfsp_exponent

    def refresh_weights(self) -> bool:
        """With ``weighting="pfsp"``, recompute every member's factor from the results recorded so
        far (:attr:`factors`) and bump :attr:`weights_version` (the batched envs then take the new
        weights before their next step); returns whether it did (False: ``"uniform"``)."""
        if self.weighting != "pfsp":
            return False
        self.factors = {lab: self.pfsp_factor(lab) for lab in self.labels()}
        self.weights_version += 1
        return True

    def member_weights(self) -> dict[str, float]:
        """``{label: probability}`` of drawing each member now (sums to 1; members of weight 0 left
        out): the category's probability (:meth:`category_probs`) split evenly among its members
        (a heuristic listed twice counts twice) and, with ``weighting="pfsp"``, multiplied by the
        member's factor of the last :meth:`refresh_weights` (one not refreshed yet: the factor of
        no result, ``(1/2) ** exponent``), then normalised."""
        probs = self.category_probs()
        members = {"latest": ["latest"] if self.latest is not None else [],
                   "past": ["past:" + n for n in self.past],
                   "heuristic": ["heuristic:" + h for h in self.heuristics]}
        w: dict[str, float] = {}
        for cat, labels in members.items():
            for lab in labels:
                w[lab] = w.get(lab, 0.0) + probs[cat] / len(labels)
        if self.weighting == "pfsp":
            none = 0.5 ** self.pfsp_exponent
            w = {lab: v * self.factors.get(lab, none) for lab, v in w.items()}
            total = sum(w.values())
            w = {lab: v / total for lab, v in w.items()}
        return {k: float(v) for k, v in w.items() if v > 0}

    def category_probs(self) -> dict[str, float]:
        """Probabilities of the categories that have members now (sums to 1)."""
        avail = {
            "latest": self.latest is not None,
            "past": len(self.past) > 0,
            "heuristic": len(self.heuristics) > 0,
        }
        p = {k: (v if avail[k] else 0.0) for k, v in self.probs.items()}
        total = sum(p.values())
        if total == 0:  # e.g. only p_latest > 0 before the first refresh
            p = {k: float(avail[k]) for k in p}
            total = sum(p.values())
        return {k: v / total for k, v in p.items()}

    # ---- OpponentSource ---------------------------------------------------------------------
    def sample(self, rng: np.random.Generator) -> str:
        """Label of one seat's opponent: a category drawn with :meth:`category_probs` (one
        ``rng.choice``), then a member of it uniformly (one ``rng.integers``): ``"latest"``,
        ``"past:<snapshot name>"`` or ``"heuristic:<bot name>"``. With ``weighting="pfsp"``: one
        ``rng.choice`` over :meth:`member_weights` instead."""
        if self.weighting == "pfsp":
            w = self.member_weights()
            labels = list(w)
            return labels[int(rng.choice(len(labels), p=[w[lab] for lab in labels]))]
        p = self.category_probs()
        cat = CATEGORIES[int(rng.choice(len(CATEGORIES), p=[p[c] for c in CATEGORIES]))]
        if cat == "latest":
            return "latest"
        if cat == "past":
            names = list(self.past)
            return "past:" + names[int(rng.integers(len(names)))]
        return "heuristic:" + self.heuristics[int(rng.integers(len(self.heuristics)))]

    def make_bot(self, label: str, seed: Optional[int] = None) -> Bot:
        """Bot for ``label`` (``latest``, ``past:<name>`` or ``heuristic:<name>``).

        Returns:
            a :class:`hod.training.numpy_policy.PolicyBot` on the latest copy or on the snapshot
            (sharing its weights; ``deterministic`` as the pool), or the registry's heuristic
            bot, seeded with ``seed``.

        Raises:
            KeyError: label not in the pool (e.g. an evicted snapshot, or no latest copy yet).
            ConfigError: ``heuristic:<name>`` of an unregistered bot.
        """
        if label == "latest":
            if self.latest is None:
                raise KeyError("the pool has no latest policy yet")
            return PolicyBot(self.latest, self.deterministic, seed)
        kind, _, name = label.partition(":")
        if kind == "past":
            return PolicyBot(self.past[name], self.deterministic, seed)
        if kind == "heuristic":
            return make_named_bot(self.game, name, seed, **self.options.get(name, {}))
        raise KeyError(f"unknown pool label {label!r}; labels: {self.labels()}")

    def labels(self) -> list[str]:
        """The members now (a new list of str): ``"latest"`` once there is a latest copy, then
        ``"past:<name>"`` for each snapshot (oldest first), then ``"heuristic:<name>"`` for each
        heuristic (repeats kept)."""
        out = ["latest"] if self.latest is not None else []
        out += ["past:" + n for n in self.past]
        out += ["heuristic:" + h for h in self.heuristics]
        return out

    def describe(self) -> dict:
        """Summary for model cards and logs (JSON-serialisable)."""
        return {
            "probabilities": self.probs,
            "max_size": self.max_size,
            "heuristics": list(self.heuristics),
            "heuristic_options": {k: dict(v) for k, v in self.options.items()},
            "snapshots": list(self.past),
            "deterministic": self.deterministic,
            "weighting": self.weighting,
            **({"pfsp": {"exponent": self.pfsp_exponent, "prior": self.pfsp_prior, "window": self.pfsp_window,
                         "learner_score": {lab: round(self.learner_score(lab), 4) for lab in self.labels()},
                         "weights": {lab: round(v, 4) for lab, v in self.member_weights().items()}}}
               if self.weighting == "pfsp" else {}),
        }

    def __repr__(self) -> str:
        return f"OpponentPool({self.game!r}, labels={self.labels()})"


def batched_games() -> list[str]:
    """Games whose declaration names a batched engine (``GameInfo.batched_engine``): the learner
    env (:class:`hod.training.learner_env.LearnerVecEnv`) trains any of them, and reports every
    seat's final points and the opponent seats' policies (``info["scores"]``, ``info["opponents"]``,
    ``info["opponent_seats"]``), what ``pool_weighting = "pfsp"`` learns from."""
    return [g for g in game_names() if get_game(g).batched_engine is not None]


class BatchOpponents:
    """An opponent source (:class:`~hod.training.pool.OpponentPool`, :class:`~hod.training.pool.FixedOpponents`,
    or any :class:`~hod.training.pool.OpponentSource`) as batch policies with drawing probabilities.

    Args:
        game: a declared game with a batched engine.
        source: the source, or what ``resolve_opponents`` accepts (a bot name, a list of names).
        seed: base seed of the policies' generators (the k-th policy made uses ``[seed, 1000 + k]``).
        rules: the table's rule options (``GameInfo.check_rule_options``), given to every bot
            made by name (``heuristic:<bot>`` and fixed bot names).

    Weights: for a pool, each available category's probability (``category_probs()``) split
    evenly among its members (a name listed twice counts twice); for any other source, uniform
    over its ``labels()`` (again counting repeats), which is how those sources ``sample``.

    Raises:
        ConfigError: a game without a batched engine, or an unknown bot name.
    """

    def __init__(self, game: str, source: Any, seed: Optional[int] = 0, rules: Optional[dict] = None) -> None:
        self.game = game
        self.rules = dict(rules or {})   # the table's rule options, given to bots made by name
        if get_game(game).batched_engine is None:
            raise ConfigError(f"engine='batched' is not available for {game!r}; legal games: {batched_games()}")
        self.source = resolve_opponents(game, source)
        self.seed = 0 if seed is None else int(seed)
        self.labels: list[str] = []          # label of each policy index, stable across refreshes
        self._pushed: Optional[tuple] = None  # signature of the members last given to an env (push_if_changed)
        self._made = 0
        self._cache: dict[str, tuple[Any, Any]] = {}   # label -> (network or None, batch policy)

    # ---- what the source holds now --------------------------------------------------------
    def signature(self) -> tuple:
        """Changes whenever the source's members change, or its PFSP weights
        (``OpponentPool.refresh_weights``); cheap, checked before every step."""
        return (tuple(self.source.labels()), id(getattr(self.source, "latest", None)),
                getattr(self.source, "weights_version", 0))

    def weights_now(self) -> dict[str, float]:
        """``{label: probability}`` of the members that can be drawn now (sums to 1; zero weights left out)."""
        src = self.source
        if isinstance(src, OpponentPool):
            return src.member_weights()   # categories split evenly (and PFSP factors: weighting "pfsp")
        w: Counter = Counter()
        labels = list(src.labels())
        for lab in labels:
            w[lab] += 1.0 / len(labels)
        return {k: float(v) for k, v in w.items() if v > 0}

    def _network(self, label: str) -> Optional[NumpyPolicy]:
        src = self.source
        if not isinstance(src, OpponentPool):
            return None
        if label == "latest":
            return src.latest
        kind, _, name = label.partition(":")
        return src.past.get(name) if kind == "past" else None

    def policy(self, label: str):
        """The batch policy of ``label`` (made once and cached while its network is the same object)."""
        net = self._network(label)
        hit = self._cache.get(label)
        if hit is not None and hit[0] is net:
            return hit[1]
        seed = [self.seed, 1000 + self._made]
        self._made += 1
        src = self.source
        if net is not None:
            pol = NumpyBatchPolicy(net, getattr(src, "deterministic", False), seed)
        else:
            if isinstance(src, OpponentPool):
                bot_name: Optional[str] = label.partition(":")[2]     # "heuristic:<bot>"
            elif isinstance(src, FixedOpponents):
                bot_name = label                                      # labels are bot names
            else:
                bot_name = None
            bot_seed = int(np.random.default_rng(seed).integers(2**31 - 1))
            if bot_name == "random":
                pol = random_policy(self.game, seed)   # the engine's sampler (hod.agents.batch_policies)
            elif bot_name is not None:
                own = getattr(src, "options", {}).get(bot_name, {})   # the pool's options of that bot
                pol = self._batch_or_bot(make_named_bot(self.game, bot_name, seed=bot_seed, **self.rules, **own), seed)
            else:
                pol = self._batch_or_bot(src.make_bot(label, bot_seed), seed)
        self._cache[label] = (net, pol)
        return pol

    def _batch_or_bot(self, bot: Any, seed: list) -> Any:
        """The batch policy of a bot made by name: a shipped ONNX opponent on the plain observation
        (:class:`hod.agents.onnx_policy.OnnxPolicy`, e.g. Tapeo's ``ppo``) as a
        :class:`~hod.training.numpy_policy.NumpyBatchPolicy` on its actor
        (:func:`hod.training.policy_io.onnx_numpy_policy`: the whole batch in one product, playing
        the argmax or sampling as the bot was built, ``deterministic``), any other bot as the game's
        :class:`~hod.agents.batch_policies.BotPolicy` (its ``act_batch`` when it has one, else one call per row)."""
        from hod.agents.onnx_policy import OnnxPolicy

        if isinstance(bot, OnnxPolicy) and bot.encoder.identity:
            from .policy_io import onnx_numpy_policy

            net = onnx_numpy_policy(bot.path, bot.model_card["policy"]["activation"], "none")
            return NumpyBatchPolicy(net, bool(bot.deterministic), seed)
        return bot_policy(self.game, bot)

    def refresh(self) -> tuple[list, list[float]]:
        """Policies and weights for the source's members now: ``(policies, weights)``, one float
        per policy, in the order of :attr:`labels`. The members already present keep their order
        (and their cached policy objects, so the envs' ``set_opponents`` leaves the games in
        progress with them); newcomers are appended, in the source's order."""
        w = self.weights_now()
        order = [lab for lab in self.labels if lab in w] + [lab for lab in w if lab not in self.labels]
        self.labels = order
        alive = set(order)
        self._cache = {k: v for k, v in self._cache.items() if k in alive}
        return [self.policy(lab) for lab in order], [w[lab] for lab in order]

    def record_results(self, infos: list) -> int:
        """Give an :class:`~hod.training.pool.OpponentPool` with ``weighting="pfsp"`` the learner's
        pairwise results of the games that ended (:meth:`OpponentPool.record_result`): for each
        slot's final info carrying ``"opponents"`` (the policy index of each opponent seat, seats
        ``L..n-1``, into :attr:`labels`), ``"scores"`` (every seat's final points) and
        ``"final_score"`` (the learner seat's), and ``"opponent_seats"`` (those seats; without it, seats
``n - len(opponents)..n-1``), a score of 1, 0.5 or 0 per opponent seat for more,
        as many or fewer points than it. Finals without those keys are skipped. Returns the number of results recorded."""
        src = self.source
        if not isinstance(src, OpponentPool) or src.weighting != "pfsp":
            return 0
        n = 0
        for info in infos:
            opp = info.get("opponents") if info else None
            if opp is None or "scores" not in info:
                continue
            mine = info["final_score"]
            seats = info.get("opponent_seats")   # the learner env names them; without: seats n - len(opp)..n-1
            theirs = (np.asarray(info["scores"])[seats] if seats is not None
                      else np.asarray(info["scores"])[len(info["scores"]) - len(opp):])
            for idx, pts in zip(opp, theirs):
                src.record_result(self.labels[int(idx)], 1.0 if mine > pts else 0.5 if mine == pts else 0.0)
                n += 1
        return n

    def push_if_changed(self, venv: Any) -> bool:
        """Give ``venv`` (a vector env with ``set_opponents(policies, weights)``) the source's
        members when they changed since the last push (:meth:`signature`); returns whether it did."""
        sig = self.signature()
        if sig == self._pushed:
            return False
        pols, weights = self.refresh()
        venv.set_opponents(pols, weights)
        self._pushed = sig
        return True
