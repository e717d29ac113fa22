"""Training configuration: one TOML file of defaults per game, every key overridable from the CLI.

A game keeps its training defaults in its own folder, ``<game package>/training.toml``
(:func:`default_config_path`: ``tapeo_env/training.toml``, ``robada_env/training.toml``), so that a
game is one folder and nothing under ``training/`` names a game. The file holds sections (``env``, ``ppo``, ``run``, ``pool``, ``eval``)
whose keys are unique across sections; the command line gets one flag per key
(``--learning-rate 1e-4``, ``--players 2 4``, ``--opponent-deterministic`` /
``--no-opponent-deterministic``), typed after the default's value. The keys are documented in
``docs/training.md``.
"""
from __future__ import annotations

import argparse
import copy
import importlib.util
import json
import os
import tempfile
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal, Optional

import numpy as np
from pydantic import (BaseModel, ConfigDict, Field, Strict, ValidationError, ValidationInfo, field_validator,
                      model_validator)

from hod import agents
from hod.agents import model_card
from hod.agents.encoders import get_encoder
from hod.agents.model_card import MAX_LAYER_WIDTH, MAX_LAYERS, MAX_PARAMETERS, MAX_POOL_SNAPSHOTS, network_parameters
from hod.core.errors import ConfigError
from hod.core.games import check_player_counts, get_game, load_object
from hod.core.rewards import REWARD_SCHEMES
from hod.evaluation.schedule import MAX_GAMES
from hod.evaluation.workers import MAX_WORKERS

from .critic import CRITIC_INPUTS, critic_extra
from .pool import WEIGHTINGS, batched_games, bot_player_counts, check_bot_names, check_observation_only

#: File name of a game's training defaults, in the game's package folder.
CONFIG_FILE = "training.toml"
SECTIONS = ("env", "ppo", "imitation", "run", "pool", "eval")
#: Values of the ``engine`` key: ``"single"`` = single-game tables (:class:`hod.training.vec_env.TableVecEnv`),
#: ``"batched"`` = the learner vector env over the game's batched engine (:class:`hod.training.learner_env.LearnerVecEnv`).
ENGINES = ("single", "batched")


def game_folder(game: str) -> Path:
    """The folder of ``game``'s package (its declaration's ``package``), where its training
    defaults live.

    Raises:
        ConfigError: unknown game (legal values listed), or a package that cannot be found.
    """
    package = get_game(game).package
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(f"game {game!r}: package {package!r} not found")
    return Path(list(spec.submodule_search_locations)[0])


def default_config_path(game: str, name: str = CONFIG_FILE) -> Path:
    """``<game package folder>/<name>`` (default ``training.toml``, e.g. ``tapeo_env/training.toml``).

    Raises:
        ConfigError: as :func:`game_folder`.
    """
    return game_folder(game) / name


def read_toml(path: str | Path, label: Optional[str] = None) -> dict[str, Any]:
    """The TOML file ``path`` as a dict (data only).

    Args:
        label: how errors name the file (default: its path; the command lines pass
            ``"--config PATH"``).

    Raises:
        ConfigError: a file that cannot be read (missing, a folder, not UTF-8, no permission:
            ``<label>: cannot read (<reason>)``), or not valid TOML (the parser's message).
    """
    label = label or str(path)
    legal = "legal: a readable UTF-8 TOML file"
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{label}: not valid TOML: {e}") from e
    except UnicodeDecodeError as e:
        raise ConfigError(f"{label}: cannot read (not UTF-8 text: byte {e.object[e.start:e.start + 1]!r} at "
                          f"position {e.start}); {legal}") from None
    except FileNotFoundError:
        raise ConfigError(f"{label}: cannot read (no such file); {legal}") from None
    except IsADirectoryError:
        raise ConfigError(f"{label}: cannot read (a folder, not a file); {legal}") from None
    except OSError as e:
        raise ConfigError(f"{label}: cannot read ({e.strerror or e}); {legal}") from None


def required_keys() -> list[str]:
    """The keys every configuration must set (those of :class:`TrainingConfig` without a default;
    the keys added after the first configs have defaults), sorted."""
    return sorted(k for k, f in TrainingConfig.model_fields.items() if f.is_required())


def check_complete(cfg: dict[str, dict[str, Any]], label: str, game: Optional[str] = None) -> None:
    """Refuse a configuration ``cfg`` that lacks a required key (:func:`required_keys`), before
    anything reads it: ``label`` names where it came from (``"--config PATH"``, a checkpoint);
    ``game`` names the game whose default file shows every key.

    Raises:
        ConfigError: one line naming every missing key.
    """
    have = set(flatten(cfg))
    missing = [k for k in required_keys() if k not in have]
    if missing:
        where = "the game's training.toml"
        if game is not None:
            try:
                where = str(default_config_path(game))
            except ConfigError:
                pass
        raise ConfigError(f"{label}: config lacks key{'s' if len(missing) > 1 else ''} {missing}; legal: a "
                          f"configuration that sets every key of {where} that has no default (flags then override "
                          f"single keys)")


def load_config(game: str, path: Optional[str | Path] = None) -> dict[str, dict[str, Any]]:
    """Read a config file (default: the game's) as ``{section: {key: value}}``. A file replaces the
    game's defaults as a whole, so it must set every required key (:func:`check_complete`).

    Raises:
        ConfigError: a file that cannot be read (``--config PATH: cannot read (...)``), not valid
            TOML, an unknown section, a key in two sections, or a missing key (every one named).
    """
    label = f"--config {path}" if path else None
    path = Path(path) if path else default_config_path(game)
    label = label or str(path)
    cfg = read_toml(path, label)
    seen: dict[str, str] = {}
    for section, values in cfg.items():
        if section not in SECTIONS or not isinstance(values, dict):
            raise ConfigError(f"{label}: unknown section [{section}]; legal sections: {list(SECTIONS)}")
        for k in values:
            if k in seen:
                raise ConfigError(f"{label}: key {k!r} appears in [{seen[k]}] and [{section}]")
            seen[k] = section
    check_complete(cfg, label, game)
    return cfg


def merge_keys(base: dict[str, dict[str, Any]], cfg: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Every key of ``base`` and of ``cfg``, in ``base``'s sections (``cfg``'s for its own keys),
    with ``cfg``'s values where it has the key (``base``'s section and order for a key of both): the keys a command line offers flags for (a
    configuration from before a key still gets the key's flag)."""
    out = copy.deepcopy(base)
    where = {k: section for section, values in out.items() for k in values}
    for section, values in cfg.items():
        for k, v in values.items():
            out.setdefault(where.get(k, section), {})[k] = copy.deepcopy(v)
    return out


def flatten(cfg: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """``{key: value}`` over all sections."""
    return {k: v for section in cfg.values() for k, v in section.items()}


def add_config_arguments(parser: argparse.ArgumentParser, defaults: dict[str, dict[str, Any]]) -> None:
    """Add one ``--key`` option per config key (default None = keep the file's value)."""
    for section, values in defaults.items():
        group = parser.add_argument_group(f"[{section}] (defaults from the config file)")
        for key, value in values.items():
            flag = "--" + key.replace("_", "-")
            shown = f"default: {value!r}"
            if isinstance(value, bool):
                group.add_argument(flag, dest=key, action=argparse.BooleanOptionalAction, default=None, help=shown)
            elif isinstance(value, dict):
                group.add_argument(flag, dest=key, type=_json_object, default=None,
                                   help=f"{shown} (a JSON object)")
            elif isinstance(value, list):
                elem = type(value[0]) if value else str
                group.add_argument(flag, dest=key, nargs="+", type=elem, default=None, help=shown)
            else:
                group.add_argument(flag, dest=key, type=type(value), default=None, help=shown)


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """``--help`` with each option's default, except ``None`` defaults (such an option's help says
    its default itself: a config key's flag names the file's value, ``--config`` the game's file)
    and switches that take no value (``--force``, ``--no-reference``: their help says what they do)."""

    def _get_help_string(self, action):
        if action.default is None or action.nargs == 0:
            return action.help
        return super()._get_help_string(action)


def _json_object(text: str) -> dict:
    """A command-line value that must be a JSON object (dict-valued keys, e.g. ``bc_teacher_options``)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise argparse.ArgumentTypeError(f"not JSON: {e}; expected an object such as '{{\"determinizations\": 16}}'")
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"{text!r} is not a JSON object; expected e.g. '{{\"determinizations\": 16}}'")
    return value


def apply_overrides(cfg: dict[str, dict[str, Any]], args: argparse.Namespace | dict) -> dict[str, dict[str, Any]]:
    """A copy of ``cfg`` with every key given (not None) in ``args`` replaced."""
    given = vars(args) if isinstance(args, argparse.Namespace) else dict(args)
    out = copy.deepcopy(cfg)
    for section in out.values():
        for k in section:
            if given.get(k) is not None:
                section[k] = given[k]
    return out


def override_keys(cfg: dict[str, dict[str, Any]], overrides: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Like :func:`apply_overrides` for a plain dict, but an unknown key raises ConfigError."""
    known = flatten(cfg)
    for k in overrides:
        if k not in known:
            raise ConfigError(f"unknown config key {k!r}; legal keys: {sorted(known)}")
    return apply_overrides(cfg, overrides)


def _python_values(value: Any) -> Any:
    """numpy scalars and arrays as the Python numbers and lists they hold, through dicts, lists
    and tuples, kept as they are (the schemas are strict: a bool is not an integer, a string not a number, but a
    ``np.int64`` from a caller's array is an integer)."""
    if isinstance(value, np.ndarray):
        return _python_values(value.tolist() if value.ndim else value.item())
    if isinstance(value, dict):
        return {k: _python_values(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_python_values(v) for v in value)
    if isinstance(value, np.generic):
        return value.item()
    return value


def validated(model: type[BaseModel], values: dict[str, Any], context: Optional[dict] = None,
              names: Optional[dict[str, str]] = None) -> Any:
    """``model.model_validate(values, context=context)``, numpy numbers and arrays read as the
    Python values they hold, a refusal turned into one :class:`ConfigError` line naming each
    offending key (as ``names`` calls it), its value and what is legal (the one way the training
    floor's schemas check and report a setting).

    Raises:
        ConfigError: the schema refuses ``values``.
    """
    try:
        return model.model_validate(_python_values(values), context=context)
    except ValidationError as e:
        raise ConfigError(_describe_errors(e, model, names)) from None


def validate_config(game: str, cfg: dict[str, dict[str, Any]]) -> "TrainingConfig":
    """Check every key of ``cfg`` against its legal range with the schema :class:`TrainingConfig`
    (the one check of the TOML files, the command-line flags and the Python API).

    Returns:
        the validated :class:`TrainingConfig` (``cfg`` itself is left as it is).

    Raises:
        ConfigError: unknown game, missing or unknown key, or an illegal value; one line naming
            every offending key with its legal values or range.
    """
    get_game(game)   # unknown game: ConfigError naming the installed ones
    return validated(TrainingConfig, flatten(cfg), {"game": game})


def validate_evaluation(game: str, values: dict[str, Any], names: Optional[dict[str, str]] = None) -> EvaluationConfig:
    """Check evaluation settings (the keys of :class:`EvaluationConfig`) with the same schema as a
    training configuration's.

    Args:
        names: how to call each key in the error (e.g. ``{"eval_players": "--players"}``).

    Raises:
        ConfigError: unknown game, missing or unknown key, or an illegal value (one line naming
            each offending key with its legal values or range).
    """
    get_game(game)
    return validated(EvaluationConfig, values, {"game": game}, names)


def check_out_dir(out: str | Path) -> Path:
    """Check that a run folder ``out`` can be created and written, leaving nothing behind: a
    temporary folder is made (and removed) in ``out`` or, when it does not exist yet, in the
    nearest existing folder above it, so a folder the system refuses (``/proc/foo``, a
    read-only mount) is caught here rather than by the run's first write.

    Returns:
        ``out`` as a Path.

    Raises:
        ConfigError: ``out`` (or a folder above it) is a file, or no folder can be created in the
            nearest existing folder above it (the system's reason is named; legal: a writable
            folder, existing or not).
    """
    out = Path(out)
    probe = out
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    legal = "a folder that exists and is writable, or that can be created in a writable folder"
    if probe.exists() and not probe.is_dir():
        raise ConfigError(f"--out {out}: {probe} is a file, not a folder; legal: {legal}")
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".write-probe-", dir=probe))
    except OSError as e:
        raise ConfigError(f"--out {out}: cannot create a folder in {probe} ({e.strerror or e}); legal: {legal}") from None
    return out


# ---- the schema ---------------------------------------------------------------------------------
PositiveInt = Annotated[int, Strict(), Field(ge=1, description="an integer >= 1")]
NonNegativeInt = Annotated[int, Strict(), Field(ge=0, description="an integer >= 0")]
Probability = Annotated[float, Strict(), Field(ge=0.0, le=1.0, description="a number in [0, 1]")]
#: worker counts (``bc_workers``, ``eval_workers``): at most min(value, jobs, usable CPUs) run (hod.evaluation.workers)
WorkerCount = Annotated[int, Strict(), Field(ge=1, le=MAX_WORKERS, description=f"an integer in 1..{MAX_WORKERS}")]
#: seeds feed ``numpy.random.seed`` (with the step count added on resume), which takes < 2**32
SEED_MAX = 2**31 - 1
#: The most learner steps one rollout may hold (``n_steps * tables * learner_seats``): 2**20 =
#: 1,048,576, whose observations alone take 0.6 GiB (Tapeo, 157 float32) to 0.75 GiB (Ronda
#: Robada, 192) in SB3's rollout buffer; the defaults hold 4,096.
MAX_ROLLOUT = 1 << 20


def _check_bots(game: str, names: list[str], observation_only: bool = False, exports: bool = False) -> list[str]:
    return check_bot_names(game, names, observation_only=observation_only, exports=exports)


def _check_table_sizes(game: str, names: list[str], sizes: list[int], key: str, sizes_key: str) -> None:
    """Refuse a bot of ``names`` that does not play every table size of ``sizes``: a trained
    policy plays the sizes of its model card (:func:`hod.training.pool.bot_player_counts`: a
    registered bot's or an export path's).

    Raises:
        ValueError: the bot, the sizes it plays and the sizes asked are named.
    """
    for name in dict.fromkeys(names):
        counts = bot_player_counts(game, name)
        bad = sorted({p for p in sizes if counts is not None and p not in counts})
        if bad:
            raise ValueError(f"{key}: {name!r} plays {sorted(set(counts))} players, not {bad} of {sizes_key}="
                             f"{sizes}; legal: a bot that plays every table size asked, or {sizes_key} within "
                             f"{sorted(set(counts))}")


def check_bot_options(game: str, options: dict[str, dict[str, Any]], key: str) -> None:
    """Check a table of bot options ``{bot name: {option: value}}`` (config keys ``baseline_options``
    and ``heuristic_options``): every name must be a registered bot and every bot must build with
    its options (``agents.make``, which names the bot's legal options). An entry applies when its
    bot is used (a baseline, a heuristic); others are kept unused, so that overriding the list of
    bots on the command line does not invalidate the table.

    Raises:
        ValueError: (inside the schema's validators) an unregistered name, or options the bot
            refuses; the message names the registered bots or the bot's legal options.
    """
    known = agents.names(game)
    for name, opts in options.items():
        if name not in known:
            raise ValueError(f"{key} names {name!r}, no bot of {game}; legal names: {known}")
        try:
            agents.make(game, name, seed=0, **opts)
        except ConfigError as e:
            raise ValueError(f"{key}[{name!r}]: {e}") from None


def available_devices() -> list[str]:
    """The torch devices this machine has (``cpu``, ``auto``, ``cuda``/``cuda:<i>`` when CUDA is
    available, ``mps`` when Apple's backend is)."""
    import torch

    legal = ["cpu", "auto"]
    if torch.cuda.is_available():
        legal += ["cuda"] + [f"cuda:{i}" for i in range(torch.cuda.device_count())]
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        legal.append("mps")
    return legal


class EvaluationConfig(BaseModel):
    """The schema of the evaluation keys (``[eval]`` minus ``eval_every``): shared by
    :class:`TrainingConfig` and the command line of :mod:`hod.training.evaluate`. The game comes in
    the validation context (``{"game": name}``)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    eval_games: Annotated[int, Strict()] = Field(ge=1, le=MAX_GAMES, description=f"an integer in 1..{MAX_GAMES}")
    eval_players: list[Annotated[int, Strict()]] = Field(min_length=1, description="table sizes of the game")
    baselines: list[Annotated[str, Strict()]] = Field(min_length=1, description="registered bot names")
    baseline_options: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="a table {baseline name: {option: value}}, e.g. {search = {determinizations = 4}}")
    eval_seed: Annotated[int, Strict()] = Field(ge=0, le=SEED_MAX, description=f"an integer in [0, {SEED_MAX}]")
    eval_workers: WorkerCount

    @field_validator("eval_players")
    @classmethod
    def _eval_table_sizes(cls, v: list[int], info: ValidationInfo) -> list[int]:
        check_player_counts(_game(info), v)
        return v

    @field_validator("baselines")
    @classmethod
    def _baselines(cls, v: list[str], info: ValidationInfo) -> list[str]:
        return _check_bots(_game(info), v)

    @model_validator(mode="after")
    def _baseline_options(self, info: ValidationInfo) -> "EvaluationConfig":
        check_bot_options(_game(info), self.baseline_options, "baseline_options")
        _check_table_sizes(_game(info), self.baselines, self.eval_players, "baselines", "eval_players")
        return self


class TrainingConfig(EvaluationConfig):
    """The schema of a training configuration: every key of a game's ``training.toml`` (flat,
    sections merged) with its type and legal range; cross-key and per-game rules are checked by
    the validators (the game comes in the validation context: ``{"game": name}``).

    Integers and booleans are strict (``1.5``, ``"3"``, ``true`` for an integer are refused); a
    float key takes an integer. Lists may be given as tuples. Keys added after the first configs
    (``engine``, ``obs_encoder``, ``reward_scale``, ``[imitation]``, ``init_actor``, ``critic_input``) have defaults so that older
    configurations stored in checkpoints still load; every other key is required, and unknown
    keys are refused.
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    # [env]
    players: list[Annotated[int, Strict()]] = Field(min_length=1, description="table sizes of the game")
    learner_seats: PositiveInt = Field(description="1..min(players), 1 for turn-based games")
    tables: PositiveInt
    reward_scheme: Literal[REWARD_SCHEMES]
    reward_scale: Annotated[float, Strict()] = Field(1.0, gt=0.0, description="a finite number > 0")
    engine: Literal[ENGINES] = "single"   # configs written before the key: single-game tables
    obs_encoder: Annotated[str, Strict()] = "none"
    # [ppo]
    learning_rate: Annotated[float, Strict()] = Field(gt=0.0, le=1.0, description="a number in (0, 1]")
    n_steps: PositiveInt
    batch_size: Annotated[int, Strict()] = Field(ge=2, description="an integer >= 2 (SB3's PPO)")
    n_epochs: PositiveInt
    gamma: Probability
    gae_lambda: Probability
    clip_range: Annotated[float, Strict()] = Field(gt=0.0, le=1.0, description="a number in (0, 1]")
    ent_coef: Annotated[float, Strict()] = Field(ge=0.0, description="a finite number >= 0")
    vf_coef: Annotated[float, Strict()] = Field(ge=0.0, description="a finite number >= 0")
    max_grad_norm: Annotated[float, Strict()] = Field(gt=0.0, description="a finite number > 0")
    net_arch: list[Annotated[int, Strict(), Field(ge=1, le=MAX_LAYER_WIDTH)]] = Field(
        min_length=1, max_length=MAX_LAYERS,
        description=f"a list of 1..{MAX_LAYERS} layer sizes (MAX_LAYERS), each in 1..{MAX_LAYER_WIDTH} "
                    f"(MAX_LAYER_WIDTH), with at most {MAX_PARAMETERS:,} parameters in all (MAX_PARAMETERS, "
                    f"hod.agents.model_card)")
    activation: Literal["tanh", "relu"]
    critic_input: Literal[CRITIC_INPUTS] = "observation"   # configs written before the key: the observation
    # [imitation]
    bc_teacher: Annotated[str, Strict()] = ""
    bc_teacher_options: dict[str, Any] = Field(default_factory=dict,
                                               description="a table of the teacher's options")
    bc_decisions: PositiveInt = 200_000
    bc_workers: WorkerCount = 1
    bc_cache_dir: Annotated[str, Strict()] = ""
    bc_epochs: PositiveInt = 4
    bc_learning_rate: Annotated[float, Strict()] = Field(0.001, gt=0.0, le=1.0, description="a number in (0, 1]")
    init_actor: Annotated[str, Strict()] = ""   # configs written before the key: a fresh actor
    # [run]
    total_steps: Annotated[int, Strict()] = Field(ge=0, description="an integer >= 0 (0: no learning, the "
                                                                  "start's evaluation and checkpoints only)")
    seed: Annotated[int, Strict()] = Field(ge=0, le=SEED_MAX, description=f"an integer in [0, {SEED_MAX}]")
    checkpoint_every: PositiveInt
    torch_threads: PositiveInt
    device: Annotated[str, Strict()]
    # [pool]
    pool_size: Annotated[int, Strict()] = Field(ge=0, le=MAX_POOL_SNAPSHOTS,
                                                 description=f"an integer in [0, {MAX_POOL_SNAPSHOTS}]")
    snapshot_every: PositiveInt
    p_latest: Probability
    p_past: Probability
    p_heuristic: Probability
    heuristics: list[Annotated[str, Strict()]] = Field(min_length=1, description="registered bot names or ONNX export paths (.onnx)")
    heuristic_options: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="a table {heuristic name: {option: value}}")
    opponent_deterministic: Annotated[bool, Strict()]
    pool_weighting: Literal[WEIGHTINGS] = "uniform"   # configs written before the key: today's scheme
    pfsp_exponent: Annotated[float, Strict()] = Field(2.0, gt=0.0, description="a finite number > 0")
    pfsp_prior: Annotated[float, Strict()] = Field(4.0, gt=0.0, description="a finite number > 0")
    pfsp_window: PositiveInt = 2000
    # [eval] (the other keys: EvaluationConfig)
    eval_every: NonNegativeInt = Field(description="an integer >= 0 (0: no evaluation)")

    # ---- per-game checks of single keys (the game is in the validation context)
    @field_validator("players")
    @classmethod
    def _table_sizes(cls, v: list[int], info: ValidationInfo) -> list[int]:
        check_player_counts(_game(info), v)
        return v

    @field_validator("obs_encoder")
    @classmethod
    def _encoder(cls, v: str, info: ValidationInfo) -> str:
        get_encoder(v, _game(info))
        return v

    @field_validator("heuristics")
    @classmethod
    def _heuristics(cls, v: list[str], info: ValidationInfo) -> list[str]:
        return _check_bots(_game(info), v, exports=True)   # search bots: only with engine "single" (_across_keys)

    @field_validator("bc_teacher")
    @classmethod
    def _teacher(cls, v: str, info: ValidationInfo) -> str:
        if v:
            _check_bots(_game(info), [v])
        return v

    @field_validator("init_actor")
    @classmethod
    def _init_actor(cls, v: str) -> str:
        if v and not (v.endswith((".onnx", ".zip")) and Path(v).is_file()):
            what = "no such file" if not Path(v).exists() else "not a file ending .onnx or .zip"
            raise ValueError(f"{what}; legal: \"\" (a fresh actor), an existing ONNX export (.onnx, "
                             f"python -m hod.training.export) or checkpoint (.zip) of the configured network")
        return v

    @field_validator("bc_cache_dir")
    @classmethod
    def _cache_dir(cls, v: str) -> str:
        if v and Path(v).exists() and not Path(v).is_dir():
            raise ValueError(f"{v!r} is a file; legal: \"\" (no cache) or a directory path (it is created)")
        return v

    @field_validator("device")
    @classmethod
    def _device(cls, v: str) -> str:
        if v in ("cpu", "auto"):
            return v
        legal = available_devices()
        if v not in legal:
            raise ValueError(f"not a torch device of this machine; legal here: {legal}")
        return v

    # ---- rules across keys
    @model_validator(mode="after")
    def _across_keys(self, info: ValidationInfo) -> "TrainingConfig":
        game = _game(info)
        spec = get_game(game)
        top = min(self.players)
        if self.learner_seats > top:
            raise ValueError(f"learner_seats={self.learner_seats}: legal range 1..{top} (the smallest of players)")
        if self.learner_seats > 1 and not spec.simultaneous:
            raise ValueError(f"learner_seats={self.learner_seats}: {game} is turn-based; legal value: 1")
        if self.engine == "batched":
            if game not in batched_games():
                raise ValueError(f"engine='batched' is not available for {game!r}; games with a batched engine: "
                                 f"{batched_games()}; legal for {game!r}: 'single'")
            sizes = len(set(self.players))
            if self.tables < sizes:
                raise ValueError(f"tables={self.tables}: with engine='batched' legal values are >= {sizes}, "
                                 f"the number of table sizes (the tables are split among the sizes)")
        if self.engine == "batched":   # the batched envs' opponents get no belief samples (single tables do)
            try:
                check_observation_only(game, self.heuristics)
            except ConfigError as e:
                raise ValueError(f"heuristics={self.heuristics!r} with engine='batched': {e}; "
                                 f"or engine='single', whose tables give search bots belief samples") from None
        check_bot_options(game, self.heuristic_options, "heuristic_options")
        _check_table_sizes(game, self.heuristics, self.players, "heuristics", "players")
        if self.pool_weighting == "pfsp" and self.engine != "batched":
            raise ValueError(f"pool_weighting='pfsp' needs engine='batched' (the learner env reports each "
                             f"game's results per seat); here engine="
                             f"{self.engine!r}, game {game!r}; legal here: 'uniform'")
        if self.p_latest + self.p_past + self.p_heuristic <= 0:
            raise ValueError("p_latest, p_past, p_heuristic are all 0; legal: each in [0, 1], not all 0")
        rollout = self.n_steps * self.tables * self.learner_seats
        if rollout > MAX_ROLLOUT:   # SB3's buffer holds rollout x obs_size float32 (+ masks, values)
            raise ValueError(f"n_steps*tables*learner_seats = {self.n_steps}*{self.tables}*{self.learner_seats} = "
                             f"{rollout:,} learner steps per rollout; legal: at most {MAX_ROLLOUT:,} (MAX_ROLLOUT: "
                             f"the rollout buffer takes about {MAX_ROLLOUT * spec.layout.size * 4 / 2**30:.1f} GiB "
                             f"of observations then)")
        if self.batch_size > rollout:
            raise ValueError(f"batch_size={self.batch_size} exceeds the rollout size n_steps*tables*learner_seats"
                             f"={rollout}; legal range 2..{rollout}")
        # the limit every loader (checkpoints, --resume, export) applies, checked where the value enters
        obs_size = get_encoder(self.obs_encoder, game).size(spec.layout.size)
        params = network_parameters(self.net_arch, obs_size, spec.num_actions)
        if self.critic_input == "state":   # the critic's first layer reads the global state and the seat too
            if self.engine != "batched":
                raise ValueError(f"critic_input='state' needs engine='batched' (the batched engine computes the "
                                 f"global state of every row); here engine={self.engine!r}; legal here: "
                                 f"'observation'")
            try:
                params += critic_extra(game) * self.net_arch[0]
            except ConfigError as e:
                raise ValueError(str(e)) from None
            if not hasattr(load_object(spec.batched_engine), "global_state"):
                raise ValueError(f"critic_input='state': {game!r}'s batched engine computes no global state "
                                 f"(global_state()); legal for {game!r}: 'observation'")
            if self.bc_teacher:
                raise ValueError(f"critic_input='state' with bc_teacher={self.bc_teacher!r}: the warm start's "
                                 f"recorded decisions hold no global state for the critic; legal: "
                                 f"critic_input='observation', or bc_teacher='' (init_actor works)")
        if params > model_card.MAX_PARAMETERS:
            raise ValueError(f"net_arch={self.net_arch}: a network of {params:,} parameters (actor and critic, "
                             f"observation {obs_size}, {spec.num_actions} actions); legal: at most "
                             f"{model_card.MAX_PARAMETERS:,} (MAX_PARAMETERS, hod.agents.model_card), what "
                             f"checkpoints, --resume and export load")
        if self.init_actor and self.bc_teacher:
            raise ValueError(f"init_actor={self.init_actor!r} and bc_teacher={self.bc_teacher!r}: two warm starts; "
                             f"legal: at most one of them non-empty")
        if self.bc_teacher:   # unknown options: ConfigError naming the legal ones
            agents.make(game, self.bc_teacher, seed=0, **self.bc_teacher_options)
        return self


def _game(info: ValidationInfo) -> str:
    """The game of the validation context (set by :func:`validate_config`)."""
    ctx = info.context or {}
    if "game" not in ctx:
        raise ValueError("TrainingConfig needs the game: model_validate(..., context={'game': name})")
    return ctx["game"]


def _describe_errors(e: ValidationError, model: type[BaseModel], names: Optional[dict[str, str]] = None) -> str:
    """One line naming each offending key (as ``names`` calls it), its value and what is legal."""
    fields = model.model_fields
    names = names or {}
    parts = []
    for err in e.errors():
        loc = [str(x) for x in err["loc"]]
        key = loc[0] if loc else ""
        where = names.get(key, key) + "".join(f"[{x}]" for x in loc[1:])
        msg = err["msg"]
        if err["type"] == "missing":
            parts.append(f"config lacks key {key!r}")
        elif err["type"] == "extra_forbidden":
            parts.append(f"unknown config key {key!r}; legal keys: {sorted(fields)}")
        elif err["type"] == "value_error":   # our validators name the legal values themselves
            text = msg.removeprefix("Value error, ")
            parts.append(text if not key else f"{where}={err['input']!r}: {text}")
        elif err["type"] == "literal_error":
            parts.append(f"{where}={err['input']!r}; legal values: {err['ctx']['expected']}")
        else:
            desc = fields[key].description if key in fields else None
            legal = f"; legal: {desc}" if desc else ""
            parts.append(f"{where}={err['input']!r}: {msg.lower()}{legal}")
    return " | ".join(parts)


#: Overrides that make a run tiny (a few seconds): used by the smoke tests (single-game tables;
#: ``engine="batched"`` needs at least one table per table size).
SMOKE_OVERRIDES: dict[str, Any] = {
    "engine": "single", "tables": 2, "n_steps": 32, "batch_size": 64, "n_epochs": 1, "net_arch": [32, 32], "total_steps": 256,
    "snapshot_every": 64, "checkpoint_every": 128, "pool_size": 2, "eval_every": 0, "eval_games": 8,
    "eval_players": [2], "baselines": ["random"], "heuristics": ["random"],
    "obs_encoder": "none", "reward_scale": 1.0,   # the plain observation (the encoder has its own tests)
}


def smoke_config(game: str, **overrides: Any) -> dict[str, dict[str, Any]]:
    """The game's default config with :data:`SMOKE_OVERRIDES` and then ``overrides`` applied."""
    try:
        own = default_config_path(game).is_file()
    except ConfigError:   # a test's fake game without a package folder
        own = False
    cfg = override_keys(load_config(game if own else "tapeo"), SMOKE_OVERRIDES)
    return override_keys(cfg, overrides)
