"""Training envs over the games' batched engines (config ``engine = "batched"``).

:func:`make_learner_vec_env` builds what the trainer trains on: the one learner vector env
:class:`hod.training.learner_env.LearnerVecEnv` over any declared game's batched engine, following
the opponent source through :class:`BatchOpponents` (observation encoder and reward scale inside).

:func:`make_batched_vec_env` builds the per-game stack it replaced (kept as its test oracle):
the game's stable-baselines3 ``VecEnv`` over its batched engine
(:class:`hod.training.tapeo_vector.TapeoVecEnv`, :class:`hod.training.robada_vector.RobadaVecEnv`):
all the tables of one size advance together as arrays, and the opponent seats are played in
batch by *batch policies* (``hod.agents.batch_policies``), so a training step never loops over games
in Python (except for heuristic bots, which decide one observation at a time).

The opponent source of the single-game tables (:mod:`hod.training.pool`) is turned into batch
policies by :class:`BatchOpponents`:

===================  =========================================================================
label                batch policy
===================  =========================================================================
``latest``           :class:`hod.training.numpy_policy.NumpyBatchPolicy` on the pool's latest copy
                     (the same object, refreshed in place each rollout, so nothing to swap)
``past:<name>``      :class:`~hod.training.numpy_policy.NumpyBatchPolicy` on that snapshot
``heuristic:random`` :func:`hod.training.learner_env.random_policy` (uniform legal actions, in batch,
                     with the engine module's ``random_legal_actions``)
``heuristic:ppo``    a shipped ONNX opponent on the plain observation (Tapeo's ``ppo``, ``ppo_v1``, ...):
                     a :class:`~hod.training.numpy_policy.NumpyBatchPolicy` on the export's actor
                     (one matrix product per batch; argmax, as the registered bot plays, unless
                     ``heuristic_options`` say ``{ppo = {deterministic = false}}``)
``heuristic:<path>`` an ONNX export file (``*.onnx``, :func:`hod.training.pool.is_export_path`, e.g.
                     an exploiter): the same as a shipped opponent of that file (argmax)
``heuristic:<bot>``  a :class:`hod.training.learner_env.BotPolicy` around ``agents.make(game, bot)``
                     (one call per row: as fast as the bot)
===================  =========================================================================

Each member is drawn with its probability in the pool's sampling scheme (category probability
over the available categories, split evenly among the category's members; see
:class:`hod.training.pool.OpponentPool`), per opponent seat, when a game is dealt (the vector envs'
``opponent_weights``). :class:`PoolOpponentsVecEnv` watches the source: when its members change
(the first latest copy, a snapshot added or evicted) it calls the env's ``set_opponents`` before
the next step. A member that stays keeps its index and its policy object (newcomers are
appended), and the envs match policies by object: games in progress keep their opponents; only
a seat whose opponent left the pool is drawn again, and games dealt from then on draw with the
new weights. Policy opponents sample from their masked softmax unless the pool is
``deterministic``.

Differences from the single-game tables (``engine = "single"``, :mod:`hod.training.vec_env`):

* table sizes: the tables are split evenly among the sizes of ``players`` once (a fixed split,
  one batched engine per size), instead of a size drawn per episode;
* Tapeo: the learner seats are seats ``0..L-1`` of each table (the game is symmetric under
  rotating the table, so nothing is lost); Ronda Robada: the learner's seat is drawn per deal;
* the engines always raise ``IllegalActionError`` on an illegal learner action (``illegal_action``
  must be ``"raise"``); every learner seat gets its final reward on the step that ends its game.
"""
from __future__ import annotations

import importlib
from collections import Counter
from typing import Any, Optional

import numpy as np
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvWrapper

from hod.core.errors import ConfigError
from hod.core.games import get_game, load_object

from .config import batched_games
from .learner_env import LearnerVecEnv, LearnerVectorEnv, bot_policy, random_policy
from .numpy_policy import NumpyBatchPolicy, NumpyPolicy
from .pool import FixedOpponents, OpponentPool, make_named_bot, resolve_opponents



def vector_env_class(game: str) -> type:
    """The vectorized env class of ``game`` (its declaration's ``vector_env``).

    Raises:
        ConfigError: unknown game, or a game without a batched engine (legal games listed).
    """
    info = get_game(game)
    if info.vector_env is None:
        raise ConfigError(f"engine='batched' is not available for {game!r}; legal games: {batched_games()}")
    return load_object(info.vector_env)


class BatchOpponents:
    """An opponent source (:class:`~hod.training.pool.OpponentPool`, :class:`~hod.training.pool.FixedOpponents`,
    or any :class:`~hod.training.pool.OpponentSource`) as batch policies with drawing probabilities.

    Args:
        game: ``"tapeo"`` or ``"robada"``.
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
                pol = random_policy(self.game, seed)   # the engine's sampler (hod.training.learner_env)
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
        ``BotPolicy`` (one call per row)."""
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
        as many or fewer points than it. Finals without those keys (a game's vector env that does
        not report them) are skipped. Returns the number of results recorded."""
        src = self.source
        if not isinstance(src, OpponentPool) or src.weighting != "pfsp":
            return 0
        n = 0
        for info in infos:
            opp = info.get("opponents") if info else None
            if opp is None or "scores" not in info:
                continue
            mine = info["final_score"]
            seats = info.get("opponent_seats")   # the learner env names them; the old envs: seats L..n-1
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


class PoolOpponentsVecEnv(VecEnvWrapper):
    """The batched vector env with its opponents kept in step with an opponent source.

    Before ``reset`` and before every step it compares the source's members with the ones the
    env plays (:meth:`BatchOpponents.signature`) and, when they differ, calls
    ``venv.set_opponents(policies, weights)``. Everything else (``action_masks()``,
    ``env_method("action_masks")``, attributes) goes to the wrapped env.

    Args:
        venv: a ``TapeoVecEnv`` or ``RobadaVecEnv``.
        opponents: the :class:`BatchOpponents` to follow.
    """

    def __init__(self, venv: VecEnv, opponents: BatchOpponents) -> None:
        super().__init__(venv)
        self.opponents = opponents
        self.sync()

    def sync(self) -> bool:
        """Refresh the env's opponents if the source changed; returns whether it did."""
        return self.opponents.push_if_changed(self.venv)

    def reset(self) -> np.ndarray:
        self.sync()
        return self.venv.reset()

    def step_async(self, actions: np.ndarray) -> None:
        self.sync()
        self.venv.step_async(actions)

    def step_wait(self):
        obs, rewards, dones, infos = self.venv.step_wait()
        self.opponents.record_results(infos)
        return obs, rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        """bool (num_envs, num_actions): the learner slots' legal actions now."""
        return self.venv.action_masks()


def make_batched_vec_env(game: str, num_tables: int, num_players, learner_seats: int, opponents,
                         env_options: Optional[dict] = None, seed: int = 0) -> PoolOpponentsVecEnv:
    """The game's batched ``VecEnv`` (arguments as :func:`hod.training.vec_env.make_vec_env`).

    Args:
        game: ``"tapeo"`` or ``"robada"``.
        num_tables: games played at once (at least one per table size).
        num_players: table size or list of sizes (tables split evenly among them).
        learner_seats: learner seats per table (Tapeo: seats ``0..L-1``; Ronda Robada: 1).
        opponents: an opponent source or bot name(s) (see :class:`BatchOpponents`).
        env_options: ``reward_scheme`` (default ``"points"``), ``illegal_action`` (only
            ``"raise"``), Tapeo ``round_rewards`` (a bool), Ronda Robada rule options.
        seed: base seed (deals, learner seats, opponents' draws and sampling).

    Returns:
        :class:`PoolOpponentsVecEnv`; ``num_envs = num_tables * learner_seats``.

    Raises:
        ConfigError: a game without a batched engine, ``illegal_action`` other than ``"raise"``,
            an unknown option, or a value outside its range (named in the message).
    """
    venv, src = _batched_env(game, num_tables, num_players, learner_seats, opponents, env_options, seed,
                             gymnasium_view=False)
    return PoolOpponentsVecEnv(venv, src)


def make_learner_vec_env(game: str, num_tables: int, num_players, learner_seats: int, opponents,
                         env_options: Optional[dict] = None, seed: int = 0, encoder: Any = None,
                         reward_scale: float = 1.0) -> LearnerVecEnv:
    """The training ``VecEnv`` of ``engine = "batched"``: one :class:`hod.training.learner_env.LearnerVecEnv`
    over the game's batched engine, following the opponent source (arguments as
    :func:`make_batched_vec_env`; ``encoder`` and ``reward_scale`` as the env's options). It
    plays the same games, with the same observations, masks, rewards and infos (and more info
    keys), as :func:`make_batched_vec_env` wrapped in :class:`hod.training.reward_scale.ScaledRewardVecEnv`
    and :class:`hod.training.encoded_env.EncodedVecEnv` (``tests/test_training_learner_env.py``).

    Raises:
        ConfigError: as :func:`make_batched_vec_env`, or a bad ``reward_scale``.
    """
    src, players, kw = _learner_options(game, num_players, opponents, env_options, seed)
    return LearnerVecEnv(game, num_tables, players, learner_seats, seed=seed, encoder=encoder,
                         reward_scale=reward_scale, source=src, **kw)


def _learner_options(game: str, num_players, opponents, env_options: Optional[dict], seed: int):
    """``(source, players, keywords)`` both learner envs take: the opponents' source
    (:class:`BatchOpponents`), the table sizes, and ``opponents``, ``opponent_weights``,
    ``reward_scheme`` and the rule options. Raises ConfigError on an ``illegal_action`` other than
    ``"raise"`` or a bad rule option."""
    opts = dict(env_options or {})
    illegal = opts.pop("illegal_action", "raise")
    if illegal != "raise":
        raise ConfigError(f"illegal_action={illegal!r}: the batched engines always raise; legal values: ['raise']")
    reward_scheme = opts.pop("reward_scheme", "points")
    src = BatchOpponents(game, opponents, seed, get_game(game).check_rule_options(opts))
    pols, weights = src.refresh()
    players = list(num_players) if isinstance(num_players, (list, tuple)) else num_players
    return src, players, dict(opponents=pols, opponent_weights=weights, reward_scheme=reward_scheme, **opts)


def make_learner_vector_env(game: str, num_tables: int, num_players, learner_seats: int, opponents,
                            env_options: Optional[dict] = None, seed: int = 0) -> tuple[Any, BatchOpponents]:
    """The Gymnasium ``VectorEnv`` view of the learner env
    (:class:`hod.training.learner_env.LearnerVectorEnv`: dict observations, ``step(actions, hold)``)
    over the same tables as :func:`make_learner_vec_env`, for libraries other than SB3 (Ray RLlib:
    :mod:`hod.training.rllib.envs`); it plays the games of :func:`make_batched_vector_env`.

    Returns:
        ``(venv, opponents)``: call ``opponents.push_if_changed(venv)`` before a step to keep the
        env's opponents in step with the source.

    Raises:
        ConfigError: as :func:`make_batched_vec_env`.
    """
    src, players, kw = _learner_options(game, num_players, opponents, env_options, seed)
    venv = LearnerVectorEnv(game, num_tables=num_tables, num_players=players, learner_seats=learner_seats,
                            seed=seed, **kw)
    src.push_if_changed(venv)
    return venv, src


def make_batched_vector_env(game: str, num_tables: int, num_players, learner_seats: int, opponents,
                            env_options: Optional[dict] = None, seed: int = 0) -> tuple[Any, BatchOpponents]:
    """The Gymnasium ``VectorEnv`` view of the same tables as :func:`make_batched_vec_env` (the
    game's vector module's ``GYMNASIUM_VECTOR_ENV``: dict observations, ``step(actions, hold)``),
    for libraries other than SB3 (Ray RLlib: :mod:`hod.training.rllib.envs`).

    Returns:
        ``(venv, opponents)``: call ``opponents.push_if_changed(venv)`` before a step to keep the
        env's opponents in step with the source (:meth:`BatchOpponents.push_if_changed`).

    Raises:
        ConfigError: as :func:`make_batched_vec_env`.
    """
    venv, src = _batched_env(game, num_tables, num_players, learner_seats, opponents, env_options, seed,
                             gymnasium_view=True)
    src.push_if_changed(venv)
    return venv, src


def _batched_env(game: str, num_tables: int, num_players, learner_seats: int, opponents,
                 env_options: Optional[dict], seed: int, gymnasium_view: bool) -> tuple[Any, BatchOpponents]:
    opts = dict(env_options or {})
    illegal = opts.pop("illegal_action", "raise")
    if illegal != "raise":
        raise ConfigError(f"illegal_action={illegal!r}: the batched engines always raise; legal values: ['raise']")
    reward_scheme = opts.pop("reward_scheme", "points")
    # bots made by name play the table's rule options (hod.agents.rules)
    src = BatchOpponents(game, opponents, seed, get_game(game).check_rule_options(opts))
    pols, weights = src.refresh()
    players = list(num_players) if isinstance(num_players, (list, tuple)) else num_players
    cls = vector_env_class(game)
    if gymnasium_view:
        cls = importlib.import_module(cls.__module__).GYMNASIUM_VECTOR_ENV
    try:
        # the game's own env options (Tapeo: round_rewards; Ronda Robada: its rule options) are
        # checked by its vector env, which names the legal ones
        venv = cls(num_tables=num_tables, num_players=players, learner_seats=learner_seats,
                   opponents=pols, reward_scheme=reward_scheme, seed=seed, opponent_weights=weights, **opts)
    except TypeError as e:
        raise ConfigError(f"{game} batched env: {e}") from e
    return venv, src
