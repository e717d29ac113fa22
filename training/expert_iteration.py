"""Expert iteration: distil a search bot's per-action values into the policy network, fine-tune
with PPO against a pool that holds the search bot, repeat. One machinery for both games.

``python -m hod.training.expert_iteration --game tapeo --out runs/tapeo_expit [--KEY VALUE ...]``

Each iteration ``k = 0 .. iterations - 1`` (DeltaDou's and AlphaZero's loop on small compute,
with PIMC search as the expert):

1. **Search decisions.** The teacher (a search bot, :class:`hod.agents.base.CandidateSearchBot`:
   Tapeo ``search``, Ronda Robada ``rollout``; or Ronda Robada's ``expert`` with its planner's
   values) plays every seat of seeded games at the run's table sizes (or, with
   ``teacher_opponent``, one seat against that bot in the others; with several bots, one
   recording per bot, ``decisions`` split evenly among them, concatenated), and each of its
   decisions is recorded with the values of every candidate it searched,
   the per-candidate playout means (:func:`hod.training.imitation.collect_teacher_decisions` with
   ``action_values=True``; seeded chunks, ``workers`` processes, optional cache). With
   ``own_playout`` the teacher's playouts from iteration 1 on are played by the network of the
   previous iteration (Tapeo ``search`` with ``playout_model``): the search improves the policy it
   searches over.
2. **Distillation.** The policy is fitted to :func:`search_targets`, a softmax of the candidates'
   values at ``temperature`` (not only the search's argmax; imitating the argmax alone did not
   carry the search, docs/results.md run l), and the value head to the search's value of the
   position (:func:`value_targets`), with :func:`hod.training.imitation.behaviour_clone`,
   starting from the current network (iteration 0: ``init``, a checkpoint or an ONNX export's
   actor, or a fresh network). With ``policy_prior`` the targets improve the current policy
   (:func:`search_targets`); with ``clarity_noise`` > 0 each decision's policy loss is weighted by
   how clearly its best candidate beats the second at that noise (:func:`clarity_weights`).
3. **PPO fine-tuning.** ``ppo_steps`` more MaskablePPO steps (:class:`hod.training.train.Trainer`,
   the game's training configuration with the ``train`` overrides) against the self-play pool,
   which also holds ``search_opponent`` at a small budget (a search bot as a training opponent
   needs the single-game tables, ``engine = "single"``, which give it belief samples) and, from
   iteration 1 on, the network as it was before the iteration (``previous_in_pool``).
4. The iteration's checkpoint ``iter_<k>/checkpoints/final.zip`` is exported to
   ``iter_<k>/<game>_expit.onnx`` (:func:`hod.training.export.export_onnx`): the next
   iteration's playout policy and a file to evaluate.

With ``ppo_steps = 0`` (and one iteration) step 3 trains nothing: the distilled network is
evaluated (the trainer's evaluation), checkpointed and exported as it is, which measures a
distillation on its own.

The run writes ``expit.json`` (per iteration: the search data's size and seconds, the
distillation's agreement and losses, the PPO summary), the iterations' run folders (checkpoints,
``eval.json``, ``learning_curve.png`` over all iterations: each iteration resumes the previous
one, so its card carries the whole evaluation history) and ``config.json``.
"""
from __future__ import annotations

import argparse
import inspect
import json
import math
import sys
import time
from pathlib import Path
from typing import Annotated, Any, Literal, Optional

import numpy as np
from pydantic import (BaseModel, ConfigDict, Field, Strict, ValidationInfo, field_validator,
                      model_validator)

from hod import agents
from hod.agents.model_card import CheckpointError
from hod.core.atomic import atomic_write_json
from hod.core.commands import interrupted_status, long_command
from hod.core.errors import ConfigError
from hod.core.games import game_names, get_game

from . import config as config_mod
from .imitation import value_teachers
from .policy_io import load_onnx_actor

#: Default configuration file, in the game's package folder (``tapeo_env/training_expit.toml``).
CONFIG_NAME = "training_expit.toml"
#: File stem of each iteration's ONNX export.
EXPORT_NAME = "{game}_expit"

PositiveInt = Annotated[int, Strict(), Field(ge=1, description="an integer >= 1")]


def search_targets(action_values: np.ndarray, action_mask: np.ndarray, action: np.ndarray,
                   temperature: float, prior_logits: Optional[np.ndarray] = None) -> np.ndarray:
    """Policy targets from a search's per-action values: a softmax at ``temperature``.

    Row ``i``: over the actions with a finite value (the searched candidates),
    ``p[a] = exp((q[a] - max q) / temperature) / sum_b exp((q[b] - max q) / temperature)``; every
    other action gets 0. With ``prior_logits`` (the current policy's logits ``l``) the softmax is
    of ``l[a] + q[a] / temperature``: ``p`` proportional to ``pi(a) * exp(q[a] / temperature)``,
    the KL-regularised improvement of the current policy (as in MPO / AWR), which moves it only
    where the values differ by more than about ``temperature``. A row with no finite value (a
    lone candidate played without search) is one-hot on ``action[i]``.

    Args:
        action_values: float (N, A), the candidates' values (win share + margin / 100 in both
            games' search bots) and NaN elsewhere.
        action_mask: int (N, A), 1 = legal.
        action: int (N,), the action the teacher played.
        temperature: softmax temperature in value units (> 0); small = close to the argmax.
        prior_logits: None, or float (N, A) logits of the current policy (finite on the
            candidates).

    Returns:
        float32 (N, A), rows summing to 1, zero on illegal actions. E.g. values [0.9, 0.7, NaN]
        at temperature 0.1: weights exp(0) = 1 and exp(-2) = 0.1353, so [0.8808, 0.1192, 0];
        with prior logits [0, ln 3, 0]: weights 1 and 3 * 0.1353 = 0.4060, so [0.7112, 0.2888, 0].

    Raises:
        ConfigError: a temperature that is not a finite number > 0, shapes that do not agree, a
            finite value on an illegal action, or (rows without values) an illegal ``action``.
    """
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float, np.integer, np.floating)) \
            or not np.isfinite(temperature) or temperature <= 0:
        raise ConfigError(f"temperature={temperature!r}: legal values are finite numbers > 0")
    q = np.asarray(action_values, np.float64)
    mask = np.asarray(action_mask) != 0
    act = np.asarray(action, np.int64)
    if q.ndim != 2 or mask.shape != q.shape or act.shape != (q.shape[0],):
        raise ConfigError(f"action_values {q.shape}, action_mask {mask.shape} and action {act.shape} must be "
                          f"(N, A), (N, A) and (N,)")
    known = np.isfinite(q)
    if (known & ~mask).any():
        raise ConfigError("action_values has a value on an illegal action (mask 0); a search scores legal "
                          "actions only")
    searched = known.any(axis=1)
    out = np.zeros(q.shape, np.float64)
    if searched.any():
        qs = np.where(known[searched], q[searched] / float(temperature), -np.inf)
        if prior_logits is not None:
            prior = np.asarray(prior_logits, np.float64)
            if prior.shape != q.shape:
                raise ConfigError(f"prior_logits {prior.shape} must have the shape of action_values {q.shape}")
            qs = qs + np.where(known[searched], prior[searched], 0.0)
        z = np.exp(qs - qs.max(axis=1, keepdims=True))
        out[searched] = z / z.sum(axis=1, keepdims=True)
    rows = np.flatnonzero(~searched)
    if rows.size:
        if not mask[rows, act[rows]].all():
            raise ConfigError("an action without search values is illegal in its mask")
        out[rows, act[rows]] = 1.0
    return out.astype(np.float32)


def value_targets(action_values: np.ndarray, returns: np.ndarray, kind: str, reward_scale: float = 1.0) -> np.ndarray:
    """Value-head targets of the distillation.

    Args:
        action_values: float (N, A), the search's candidate values (NaN where not searched).
        returns: float (N,), the acting seat's discounted return from the decision on, in the
            run's reward scheme (:func:`hod.training.imitation.collect_teacher_decisions`).
        kind: ``"search"``: the search's value of the position, the best candidate's value (rows
            without search: the return times ``reward_scale``); ``"return"``: the return times
            ``reward_scale`` (what PPO's critic fits).
        reward_scale: the run's ``reward_scale``.

    Returns:
        float32 (N,). E.g. ``"search"`` with values [0.9, 0.7, NaN] gives 0.9.

    Raises:
        ConfigError: ``kind`` not one of ``"search"``, ``"return"``; shapes that do not agree.
    """
    if kind not in VALUE_TARGETS:
        raise ConfigError(f"value_target={kind!r}: legal values are {list(VALUE_TARGETS)}")
    q = np.asarray(action_values, np.float64)
    ret = np.asarray(returns, np.float64) * float(reward_scale)
    if q.ndim != 2 or ret.shape != (q.shape[0],):
        raise ConfigError(f"action_values {q.shape} and returns {ret.shape} must be (N, A) and (N,)")
    if kind == "return":
        return ret.astype(np.float32)
    known = np.isfinite(q)
    best = np.max(np.where(known, q, -np.inf), axis=1)
    return np.where(known.any(axis=1), best, ret).astype(np.float32)


VALUE_TARGETS = ("search", "return")


def clarity_weights(action_values: np.ndarray, noise: float) -> np.ndarray:
    """Weights of the decisions in the distillation's policy loss: how clearly the search's best
    candidate beats the second, given the noise of the values.

    A searched decision whose two best values ``q1 >= q2`` differ by ``gap = q1 - q2`` gets
    ``erf(gap / (noise * sqrt(2)))`` (``= 2 Phi(gap / noise) - 1``: 0 for a tie, 0.6827 for a gap of
    one ``noise``, 0.9545 for two), ``noise`` the standard error of that difference (value
    units; docs/results.md measures it for Ronda Robada ``search``). Decisions with fewer than
    two searched candidates (a lone candidate played without search) get 1. The weights are then
    divided by their mean, so the loss keeps its scale.

    Args:
        action_values: float (N, A), the candidates' values and NaN elsewhere.
        noise: the standard error of a difference of two candidates' values, a finite number > 0.

    Returns:
        float32 (N,), mean 1 (all 1 when every decision has a weight of 0 or there is none to
        weigh). E.g. values [[0.9, 0.7], [0.5, 0.5], [NaN, NaN]] with noise 0.2: raw weights
        erf(0.2 / (0.2 * sqrt 2)) = 0.682689, 0 and 1, mean 0.560896, so [1.217139, 0, 1.782861].

    Raises:
        ConfigError: a noise that is not a finite number > 0, or values that are not (N, A).
    """
    if isinstance(noise, bool) or not isinstance(noise, (int, float, np.integer, np.floating)) \
            or not np.isfinite(noise) or noise <= 0:
        raise ConfigError(f"clarity_noise={noise!r}: legal values are finite numbers > 0 (0 in the config: off)")
    q = np.asarray(action_values, np.float64)
    if q.ndim != 2:
        raise ConfigError(f"action_values {q.shape} must be (N, A)")
    top2 = -np.sort(-np.where(np.isfinite(q), q, -np.inf), axis=1)[:, :2] if q.shape[1] >= 2 \
        else np.full((len(q), 2), -np.inf)
    two = np.isfinite(top2).all(axis=1)
    w = np.ones(len(q), np.float64)
    scale = float(noise) * math.sqrt(2.0)
    w[two] = [math.erf(g / scale) for g in (top2[two, 0] - top2[two, 1]).tolist()]
    mean = w.mean() if len(w) else 0.0
    return (w / mean if mean > 0 else np.ones(len(q))).astype(np.float32)


def policy_logits(model: Any, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
    """The masked logits (float64 (N, A), illegal actions at -1e8) of ``model``'s policy (an
    sb3-contrib MaskablePPO) on network inputs ``observation`` (N, obs_size)."""
    import torch

    out = []
    with torch.no_grad():
        for s in range(0, len(observation), 8192):
            obs = torch.as_tensor(observation[s:s + 8192], device=model.policy.device)
            dist = model.policy.get_distribution(obs, action_masks=np.asarray(action_mask[s:s + 8192]) != 0)
            out.append(dist.distribution.logits.cpu().numpy().astype(np.float64))
    return np.concatenate(out)


class ExpertIterationConfig(BaseModel):
    """The schema of an expert-iteration run (``<game package>/training_expit.toml``; every key
    is also a flag). The game comes in the validation context (``{"game": name}``); the ``train``
    overrides are checked against the game's training schema
    (:class:`hod.training.config.TrainingConfig`) as they will be used, the search opponent added.
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    iterations: PositiveInt
    teacher: Annotated[str, Strict()] = Field(description="a registered search bot of the game")
    teacher_options: dict[str, Any] = Field(default_factory=dict)
    own_playout: Annotated[bool, Strict()] = False
    teacher_opponent: list[Annotated[str, Strict()]] = Field(
        default_factory=list, description="a list of registered bot names ([], \"\" or [\"\"]: the teacher in every seat)")
    decisions: PositiveInt
    workers: config_mod.WorkerCount = 1
    cache_dir: Annotated[str, Strict()] = ""
    temperature: Annotated[float, Strict()] = Field(gt=0.0, description="a finite number > 0")
    value_target: Literal[VALUE_TARGETS] = "search"
    policy_prior: Annotated[bool, Strict()] = False
    clarity_noise: Annotated[float, Strict()] = Field(0.0, ge=0.0, description="a finite number >= 0 (0: off)")
    distil_epochs: PositiveInt
    distil_learning_rate: Annotated[float, Strict()] = Field(gt=0.0, le=1.0, description="a number in (0, 1]")
    ppo_steps: Annotated[int, Strict()] = Field(ge=0, description="an integer >= 0 (0: no PPO phase)")
    search_opponent: Annotated[str, Strict()] = ""
    search_opponent_options: dict[str, Any] = Field(default_factory=dict)
    previous_in_pool: Annotated[bool, Strict()] = True
    init: Annotated[str, Strict()] = ""
    seed: Annotated[int, Strict()] = Field(0, ge=0, le=config_mod.SEED_MAX,
                                           description=f"an integer in [0, {config_mod.SEED_MAX}]")
    train: dict[str, Any] = Field(default_factory=dict, description="overrides of the game's training config")

    @field_validator("teacher_opponent", mode="before")
    @classmethod
    def _one_name_is_a_list(cls, value: Any) -> Any:
        # a single name (the TOML files and cards before the list): "" = none, "x" = ["x"]; and
        # [""] (the command line's --teacher-opponent '') = none, to override a file that names bots
        if isinstance(value, str):
            return [value] if value else []
        return [] if isinstance(value, list) and value == [""] else value

    @model_validator(mode="after")
    def _across_keys(self, info: ValidationInfo) -> "ExpertIterationConfig":
        game = (info.context or {}).get("game")
        searchers = [n for n in agents.names(game) if agents.needs_belief(game, n)]
        teachers = value_teachers(game)
        if self.teacher not in teachers:
            raise ValueError(f"teacher={self.teacher!r}: legal values are the bots of {game} that give action "
                             f"values: {teachers}")
        bot = agents.make(game, self.teacher, seed=0, **self.teacher_options)
        known = agents.names(game)
        for name in self.teacher_opponent:
            if name not in known:
                raise ValueError(f"teacher_opponent={self.teacher_opponent!r}: {name!r} is not a bot of {game}; legal "
                                 f"values are [] (the teacher in every seat) or registered bots of {game}: {known}")
        if len(set(self.teacher_opponent)) < len(self.teacher_opponent):
            raise ValueError(f"teacher_opponent={self.teacher_opponent!r} names a bot twice; legal: each bot once")
        if len(self.teacher_opponent) > self.decisions:
            raise ValueError(f"teacher_opponent={self.teacher_opponent!r} with decisions={self.decisions}: fewer "
                             f"decisions than recordings; legal: decisions >= {len(self.teacher_opponent)}")
        if self.own_playout and "playout_model" not in inspect.signature(type(bot).__init__).parameters:
            raise ValueError(f"own_playout=True: teacher {self.teacher!r} takes no playout network "
                             f"(playout_model); legal: false")
        if self.search_opponent:
            if self.search_opponent not in searchers:
                raise ValueError(f"search_opponent={self.search_opponent!r}: legal values are \"\" or the search "
                                 f"bots of {game}: {searchers}")
            agents.make(game, self.search_opponent, seed=0, **self.search_opponent_options)
        elif self.search_opponent_options:
            raise ValueError("search_opponent_options without search_opponent; legal: {} or name a search_opponent")
        if self.ppo_steps == 0 and self.iterations > 1:   # each iteration's evaluation is keyed by its step count
            raise ValueError(f"ppo_steps=0 with iterations={self.iterations}: without PPO steps every iteration would "
                             f"be evaluated at the same step; legal: iterations=1 with ppo_steps=0 (one distillation "
                             f"measured alone), or ppo_steps >= 1")
        if self.init and not (self.init.endswith((".zip", ".onnx")) and Path(self.init).is_file()):
            raise ValueError(f"init={self.init!r}: legal values are \"\" (a fresh network) or an existing .zip "
                             f"checkpoint or .onnx export")
        training_config(game, self, 0)   # the train overrides, as the iterations will use them
        return self


def split_decisions(opponents: list[str], decisions: int) -> list[tuple[str, int]]:
    """The recordings of one iteration: ``(opponent, decisions)`` per bot of ``teacher_opponent``,
    ``decisions`` split evenly (the first ones get one more where it does not divide), in the
    order given; ``[("", decisions)]`` (the teacher in every seat) for no bot. Each recording
    keeps the cache key it has alone (the opponent's name, not the list, enters the key), so a
    recording made for one bot is read back as a part of a list that names it.

    >>> split_decisions(["ranking", "expert"], 800_000)
    [('ranking', 400000), ('expert', 400000)]
    >>> split_decisions(["a", "b", "c"], 10)      # 10 = 4 + 3 + 3
    [('a', 4), ('b', 3), ('c', 3)]
    """
    if not opponents:
        return [("", decisions)]
    q, r = divmod(decisions, len(opponents))
    return [(name, q + (i < r)) for i, name in enumerate(opponents)]


def training_config(game: str, cfg: ExpertIterationConfig, iteration: int, playout_model: Optional[str] = None,
                    total_steps: Optional[int] = None) -> dict:
    """The training configuration of one iteration's PPO: the game's defaults, the ``train``
    overrides, the search opponent added to ``heuristics`` (with its options and, with
    ``own_playout``, ``playout_model``), the seed ``seed + iteration``, no behaviour cloning.

    Raises:
        ConfigError: an unknown key or an illegal value (:func:`hod.training.config.validate_config`).
    """
    train = config_mod.override_keys(config_mod.load_config(game), cfg.train)
    flat = config_mod.flatten(train)
    if flat.get("critic_input", "observation") != "observation":   # the distilled value head reads the observation
        raise ConfigError(f"train critic_input={flat['critic_input']!r}: expert iteration distils the search into "
                          f"a network whose critic reads the observation; legal: 'observation'")
    extra: dict[str, Any] = {"seed": int(cfg.seed + iteration) % (config_mod.SEED_MAX + 1), "bc_teacher": "",
                             "total_steps": int(cfg.ppo_steps if total_steps is None else total_steps)}
    if cfg.search_opponent:
        opts = dict(cfg.search_opponent_options)
        if cfg.own_playout and playout_model and "playout_model" in inspect.signature(
                type(agents.make(game, cfg.search_opponent, seed=0)).__init__).parameters:
            opts["playout_model"] = playout_model
        extra["heuristics"] = list(flat["heuristics"]) + [cfg.search_opponent]
        extra["heuristic_options"] = {**dict(flat.get("heuristic_options") or {}), cfg.search_opponent: opts}
    out = config_mod.override_keys(train, extra)
    config_mod.validate_config(game, out)
    return out


def validate(game: str, values: dict) -> ExpertIterationConfig:
    """Check an expert-iteration configuration with :class:`ExpertIterationConfig`.

    Raises:
        ConfigError: unknown game, missing or unknown key, an illegal value; one line naming each
            offending key with its legal values.
    """
    get_game(game)
    return config_mod.validated(ExpertIterationConfig, values, {"game": game})


def load_expit_config(game: str, path: Optional[str | Path] = None) -> dict:
    """The keys of ``path`` (default ``<game package>/training_expit.toml``), section ``[expit]``.

    Raises:
        ConfigError: missing or malformed file, or another section; a game whose package has no
            such file, without ``path`` (the games that have one are named).
    """
    if path is None:
        path = config_mod.default_config_path(game, CONFIG_NAME)
        if not path.is_file():   # a game without expert iteration's defaults (Kuhn poker): say which have them
            from hod.core.games import game_names

            have = [g for g in game_names() if config_mod.default_config_path(g, CONFIG_NAME).is_file()]
            raise ConfigError(f"{game!r} has no expert-iteration configuration ({path.name} in its package); "
                              f"legal: --game {' or '.join(have)}, or --config FILE of your own")
    path = Path(path)
    raw = config_mod.read_toml(path)
    if set(raw) != {"expit"}:
        raise ConfigError(f"{path}: sections {sorted(raw)}; legal: one section [expit]")
    return dict(raw["expit"])


class ExpertIteration:
    """One expert-iteration run (module docstring). Build it, then call :meth:`run`.

    Args:
        game: ``"tapeo"`` or ``"robada"``.
        values: the configuration (keys of :class:`ExpertIterationConfig`).
        out: run folder (``iter_<k>/`` per iteration, ``expit.json``, ``config.json``).
        log: where to print progress (None: silent).

    Raises:
        ConfigError: an invalid configuration (:func:`validate`) or an unwritable ``out``.
    """

    def __init__(self, game: str, values: dict, out: str | Path, log=print) -> None:
        self.cfg = validate(game, values)
        self.game = game
        self.out = config_mod.check_out_dir(out)
        self.log = log or (lambda *a, **k: None)
        self.iterations: list[dict] = []

    def run(self) -> dict:
        """Run every iteration; returns the summary written to ``expit.json``: ``iterations``
        (per iteration: ``data`` rows and seconds, ``distil`` statistics, ``ppo`` summary,
        ``export``), ``final_checkpoint``, ``final_export``, ``wall_clock_s``.

        Ctrl-C (or SIGTERM under :func:`hod.core.commands.long_command`) during an iteration's PPO
        saves its ``latest.zip`` (the trainer), records the iteration (``export`` None) and stops:
        the summary then has ``interrupted: True`` and ``final_checkpoint`` that ``latest.zip``.
        During the data or the distillation it raises ``KeyboardInterrupt`` (the iterations before
        are in ``expit.json``)."""
        from .export import export_onnx
        from .imitation import behaviour_clone, cached_teacher_decisions
        from .train import Trainer

        cfg, game = self.cfg, self.game
        self.out.mkdir(parents=True, exist_ok=True)
        atomic_write_json(self.out / "config.json", {"game": game, **cfg.model_dump()})
        t_run = time.perf_counter()
        prev_ckpt: Optional[Path] = None
        prev_export: Optional[str] = None
        steps = 0
        for k in range(cfg.iterations):
            t0 = time.perf_counter()
            tc = training_config(game, cfg, k, prev_export, total_steps=steps + cfg.ppo_steps)
            trainer = Trainer(game, tc, self.out / f"iter_{k}", resume=prev_ckpt, progress=False, log=self.log)
            if prev_ckpt is None and cfg.init:
                self._load_init(trainer.model)
            c = trainer.c
            if cfg.previous_in_pool and (prev_ckpt is not None or cfg.init):
                trainer.pool.add_snapshot(f"expit_{k - 1}" if k else "expit_init", trainer.numpy_policy())
            teacher_opts = dict(cfg.teacher_options)
            if cfg.own_playout and prev_export:
                teacher_opts["playout_model"] = prev_export
            seed_k = int(np.random.SeedSequence([cfg.seed, k]).generate_state(1)[0]) % (config_mod.SEED_MAX + 1)
            parts = [cached_teacher_decisions(cfg.cache_dir or None, cache_label="--cache-dir", game=game, teacher=cfg.teacher,
                                              player_counts=list(c["players"]), num_decisions=n,
                                              seed=seed_k, reward_scheme=c["reward_scheme"], gamma=c["gamma"],
                                              env_options=trainer.env_options, teacher_options=teacher_opts,
                                              workers=cfg.workers, action_values=True, opponents=opponent)
                     for opponent, n in split_decisions(cfg.teacher_opponent, cfg.decisions)]
            data = {key: np.concatenate([part[key] for part in parts]) for key in parts[0]}
            collect_s = time.perf_counter() - t0
            searched = np.isfinite(data["action_values"]).any(axis=1)
            data = dict(data)
            if not trainer.encoder.identity:
                data["observation"] = trainer.encoder.encode_batch(data["observation"], data["action_mask"])
            prior = policy_logits(trainer.model, data["observation"], data["action_mask"]) if cfg.policy_prior else None
            data["policy_target"] = search_targets(data["action_values"], data["action_mask"], data["action"],
                                                   cfg.temperature, prior)
            data["value_target"] = value_targets(data["action_values"], data["value_target"], cfg.value_target,
                                                 c.get("reward_scale", 1.0))
            if cfg.clarity_noise > 0:
                data["weight"] = clarity_weights(data["action_values"], cfg.clarity_noise)
            stats = behaviour_clone(trainer.model, data, cfg.distil_epochs, cfg.distil_learning_rate,
                                    batch_size=c["batch_size"], vf_coef=c["vf_coef"], seed=seed_k)
            distil = {"teacher": cfg.teacher, "teacher_options": teacher_opts, "decisions": cfg.decisions,
                      "teacher_opponent": list(cfg.teacher_opponent),
                      "searched": int(searched.sum()), "temperature": cfg.temperature,
                      "value_target": cfg.value_target, "policy_prior": cfg.policy_prior,
                      "clarity_noise": cfg.clarity_noise,
                      "epochs": cfg.distil_epochs,
                      "collect_s": round(collect_s, 1), **stats}
            trainer.imitation = {"expert_iteration": k, **distil}
            self.log(f"iteration {k}: distilled {cfg.teacher!r} ({distil})")
            ppo = trainer.run()
            steps = int(ppo["steps"])
            if ppo["interrupted"]:   # Ctrl-C / SIGTERM: latest.zip saved; record the iteration and stop
                self.iterations.append({"iteration": k, "distil": distil,
                                        "ppo": {kk: v for kk, v in ppo.items() if kk != "diagnostics"},
                                        "export": None, "seconds": round(time.perf_counter() - t0, 1)})
                summary = {"game": game, "iterations": self.iterations, "final_checkpoint": ppo["checkpoint"],
                           "final_export": prev_export, "wall_clock_s": round(time.perf_counter() - t_run, 1),
                           "interrupted": True}
                atomic_write_json(self.out / "expit.json", summary)
                return summary
            prev_ckpt = self.out / f"iter_{k}" / "checkpoints" / "final.zip"
            onnx_path, _ = export_onnx(prev_ckpt, self.out / f"iter_{k}", EXPORT_NAME.format(game=game))
            prev_export = str(onnx_path)
            row = {"iteration": k, "distil": distil,
                   "ppo": {kk: v for kk, v in ppo.items() if kk != "diagnostics"},
                   "export": prev_export, "seconds": round(time.perf_counter() - t0, 1)}
            self.iterations.append(row)
            summary = {"game": game, "iterations": self.iterations, "final_checkpoint": str(prev_ckpt),
                       "final_export": prev_export, "wall_clock_s": round(time.perf_counter() - t_run, 1)}
            atomic_write_json(self.out / "expit.json", summary)
        return summary

    def _load_init(self, model: Any) -> None:
        """Start iteration 0 from ``init``: a checkpoint's actor and critic, or an export's actor.

        Raises:
            CheckpointError: an unusable file, or a network of another shape.
        """
        from .checkpoint import load_checkpoint

        init = self.cfg.init
        if init.endswith(".onnx"):
            load_onnx_actor(model.policy, init)
            return
        src, _, _ = load_checkpoint(init, game=self.game)
        try:
            model.policy.load_state_dict(src.policy.state_dict())
        except RuntimeError as e:
            raise CheckpointError(f"{init}: its network does not fit the configured one ({e})") from None


# ---- command line -------------------------------------------------------------------------------
def build_parser(defaults: dict) -> argparse.ArgumentParser:
    """The argparse parser: run options plus one flag per key of ``defaults`` (``--train`` takes
    a JSON object of training-config overrides)."""
    p = argparse.ArgumentParser(prog="python -m hod.training.expert_iteration",
                                description="Expert iteration: distil a search bot into the policy, fine-tune "
                                            "with PPO against a pool holding the search bot, repeat.")
    p.add_argument("--game", choices=game_names(), required=True)
    p.add_argument("--config", help="TOML file with an [expit] section (default: <game package>/training_expit.toml)")
    p.add_argument("--out", required=True, help="run folder")
    p.add_argument("--force", action="store_true", help="write into a folder that holds a run")
    config_mod.add_config_arguments(p, {"expit": defaults})
    return p


def main(argv: Optional[list[str]] = None) -> int:
    """Entry point; returns 0, or 2 with one ``error: ...`` line for a bad key (naming its legal
    values), an unusable ``init`` or an ``--out`` that holds a run (without ``--force``); 130
    after Ctrl-C and 143 after SIGTERM (the iteration's ``latest.zip`` saved), 74 when a file
    cannot be written (:mod:`hod.core.commands`)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--game", choices=game_names())
    pre.add_argument("--config")
    known, _ = pre.parse_known_args(argv)
    try:
        defaults = load_expit_config(known.game or "tapeo", known.config)
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    args = build_parser(defaults).parse_args(argv)
    values = config_mod.apply_overrides({"expit": defaults}, args)["expit"]
    out = Path(args.out)
    if (out / "expit.json").exists() and not args.force:
        print(f"error: {out} already holds an expert-iteration run; use another --out or --force", file=sys.stderr)
        return 2
    try:
        run = ExpertIteration(args.game, values, out)
        # SIGTERM as Ctrl-C (checkpoint saved), a file that cannot be written: one line, status 74
        with long_command():
            summary = run.run()
    except (ConfigError, CheckpointError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(json.dumps({k: v for k, v in summary.items() if k != "iterations"}, indent=2))
    return interrupted_status() if summary.get("interrupted") else 0


if __name__ == "__main__":
    sys.exit(main())
