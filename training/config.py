"""Training configuration: one TOML file of defaults per game, every key overridable from the CLI.

``training/configs/<game>.toml`` holds sections (``env``, ``ppo``, ``run``, ``pool``, ``eval``)
whose keys are unique across sections; the command line gets one flag per key
(``--learning-rate 1e-4``, ``--players 2 4``, ``--opponent-deterministic`` /
``--no-opponent-deterministic``), typed after the default's value. The keys are documented in
``docs/training.md``.
"""
from __future__ import annotations

import argparse
import copy
import json
import tomllib
from pathlib import Path
from typing import Any, Optional

from hod import agents
from hod.agents.encoders import get_encoder
from hod.core.errors import ConfigError
from hod.core.games import check_player_counts, game_names, get_game
from hod.core.rewards import REWARD_SCHEMES

from .pool import check_bot_names, check_observation_only

CONFIG_DIR = Path(__file__).resolve().parent / "configs"
SECTIONS = ("env", "ppo", "imitation", "run", "pool", "eval")
#: Values of the ``engine`` key: ``"single"`` = single-game tables (:class:`hod.training.vec_env.TableVecEnv`),
#: ``"batched"`` = the game's vector env over its batched engine (:mod:`hod.training.batched_env`).
ENGINES = ("single", "batched")


def batched_games() -> list[str]:
    """Games whose declaration names a vectorized env over a batched engine."""
    return [g for g in game_names() if get_game(g).vector_env is not None]


def default_config_path(game: str) -> Path:
    """``training/configs/<game>.toml``."""
    return CONFIG_DIR / f"{game}.toml"


def load_config(game: str, path: Optional[str | Path] = None) -> dict[str, dict[str, Any]]:
    """Read a config file (default: the game's) as ``{section: {key: value}}``.

    Raises:
        ConfigError: missing or malformed file, unknown section, or a key in two sections.
    """
    path = Path(path) if path else default_config_path(game)
    try:
        with open(path, "rb") as f:
            cfg = tomllib.load(f)
    except FileNotFoundError:
        raise ConfigError(f"no config file {path}") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML: {e}") from e
    seen: dict[str, str] = {}
    for section, values in cfg.items():
        if section not in SECTIONS or not isinstance(values, dict):
            raise ConfigError(f"{path}: unknown section [{section}]; legal sections: {list(SECTIONS)}")
        for k in values:
            if k in seen:
                raise ConfigError(f"{path}: key {k!r} appears in [{seen[k]}] and [{section}]")
            seen[k] = section
    return cfg


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


def validate_config(game: str, cfg: dict[str, dict[str, Any]]) -> None:
    """Check the values a run needs (types and ranges).

    Raises:
        ConfigError: missing key or illegal value (the message names the key and legal values).
    """


    flat = flatten(cfg)
    required = ["players", "learner_seats", "tables", "reward_scheme", "learning_rate", "n_steps", "batch_size",
                "n_epochs", "gamma", "gae_lambda", "clip_range", "ent_coef", "vf_coef", "max_grad_norm",
                "net_arch", "activation", "total_steps", "seed", "checkpoint_every", "torch_threads", "device",
                "pool_size", "snapshot_every", "p_latest", "p_past", "p_heuristic", "heuristics",
                "opponent_deterministic", "eval_every", "eval_games", "eval_players", "baselines", "eval_seed",
                "eval_workers"]
    missing = [k for k in required if k not in flat]
    if missing:
        raise ConfigError(f"config lacks keys {missing}")
    check_player_counts(game, flat["players"])
    check_player_counts(game, flat["eval_players"])
    spec = get_game(game)
    if flat["learner_seats"] < 1 or flat["learner_seats"] > min(flat["players"]):
        raise ConfigError(f"learner_seats={flat['learner_seats']} must be in 1..{min(flat['players'])}")
    if flat["learner_seats"] > 1 and not spec.simultaneous:
        raise ConfigError(f"{game} is turn-based: learner_seats must be 1")
    if flat["reward_scheme"] not in REWARD_SCHEMES:
        raise ConfigError(f"reward_scheme={flat['reward_scheme']!r}; legal values: {list(REWARD_SCHEMES)}")
    if flat["activation"] not in ("tanh", "relu"):
        raise ConfigError(f"activation={flat['activation']!r}; legal values: ['tanh', 'relu']")
    for k in ("tables", "n_steps", "batch_size", "n_epochs", "total_steps", "checkpoint_every", "snapshot_every",
              "eval_games", "eval_workers", "torch_threads"):
        if not isinstance(flat[k], int) or flat[k] < 1:
            raise ConfigError(f"{k}={flat[k]!r} must be a positive integer")
    for k in ("pool_size", "eval_every", "seed", "eval_seed"):
        if not isinstance(flat[k], int) or flat[k] < 0:
            raise ConfigError(f"{k}={flat[k]!r} must be a non-negative integer (eval_every 0: no evaluation)")
    engine = flat.get("engine", "single")  # configs written before the key existed: single-game tables
    if engine not in ENGINES:
        raise ConfigError(f"engine={engine!r}; legal values: {list(ENGINES)}")
    if engine == "batched":
        if game not in batched_games():
            raise ConfigError(f"engine='batched' is not available for {game!r}; games with a batched engine: "
                              f"{batched_games()} (use engine='single')")
        sizes = len(set(flat["players"]))
        if flat["tables"] < sizes:
            raise ConfigError(f"tables={flat['tables']} must be >= the number of table sizes ({sizes}) with "
                              f"engine='batched' (the tables are split among the sizes)")
    scale = flat.get("reward_scale", 1.0)
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not 0 < scale < float("inf"):
        raise ConfigError(f"reward_scale={scale!r} must be a positive number (1.0: rewards as the game gives them)")

    get_encoder(flat.get("obs_encoder", "none"), game)   # configs from before the key: "none"
    if not flat["net_arch"] or any(h < 1 for h in flat["net_arch"]):
        raise ConfigError(f"net_arch={flat['net_arch']!r} must list positive layer sizes")

    check_observation_only(game, flat["heuristics"])   # pool opponents get no belief samples
    cache = flat.get("bc_cache_dir", "")
    if not isinstance(cache, str) or (cache and Path(cache).exists() and not Path(cache).is_dir()):
        raise ConfigError(f"bc_cache_dir={cache!r} must be \"\" (no cache) or a directory path (it is created)")
    if flat.get("bc_teacher"):
        check_bot_names(game, [flat["bc_teacher"]])
        for k in ("bc_decisions", "bc_epochs"):
            if not isinstance(flat.get(k), int) or flat[k] < 1:
                raise ConfigError(f"{k}={flat.get(k)!r} must be a positive integer when bc_teacher is set")
        if not flat.get("bc_learning_rate", 0) > 0:
            raise ConfigError(f"bc_learning_rate={flat.get('bc_learning_rate')!r} must be positive")
        workers = flat.get("bc_workers", 1)   # configs from before the key: one process
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ConfigError(f"bc_workers={workers!r} must be a positive integer")
        options = flat.get("bc_teacher_options", {})
        if not isinstance(options, dict):
            raise ConfigError(f"bc_teacher_options={options!r} must be a table of the teacher's options, e.g. "
                              "{determinizations = 16}")
        agents.make(game, flat["bc_teacher"], seed=0, **options)   # unknown options: ConfigError naming the legal ones
    if flat["batch_size"] > flat["n_steps"] * flat["tables"] * flat["learner_seats"]:
        raise ConfigError(
            f"batch_size={flat['batch_size']} exceeds the rollout size n_steps*tables*learner_seats="
            f"{flat['n_steps'] * flat['tables'] * flat['learner_seats']}"
        )


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
    cfg = override_keys(load_config(game if default_config_path(game).is_file() else "tapeo"), SMOKE_OVERRIDES)
    return override_keys(cfg, overrides)
