"""PPO self-play on Ray RLlib: ``python -m hod.training.rllib --game tapeo --players 2 4 ...``.

The SB3 trainer's equal (:mod:`hod.training.train`) on RLlib's new API stack, for runs that
outgrow one machine: PPO with our action-masking RLModule
(:class:`hod.training.rllib.module.MaskedActorCritic`, the same network), one policy shared by
every learner seat (parameter sharing), self-play against the opponent pool of its own
snapshots and the heuristic bots (:class:`hod.training.pool.OpponentPool`, same keys, same
sampling scheme). The configuration is the SB3 trainer's (``<game package>/training.toml``, the
schema :class:`hod.training.config.TrainingConfig`, one flag per key); what the keys become in
RLlib:

=====================  ======================================================================
our key                RLlib
=====================  ======================================================================
``tables``             tables per env runner (``num_envs_per_env_runner = tables * learner_seats``)
``n_steps``            ``rollout_fragment_length`` (steps per env slot per rollout)
``batch_size``         ``minibatch_size``; ``n_epochs``: ``num_epochs``
``learning_rate``,     ``lr``, ``gamma``, ``lambda_``, ``clip_param``, ``entropy_coeff``,
``gamma``, ...         ``vf_loss_coeff``, ``grad_clip`` (global norm); no KL term, no value clipping (as SB3)
=====================  ======================================================================

A rollout is ``n_steps * tables * learner_seats`` learner steps per env runner, so the train
batch grows with the env runners (``--env-runners``) and is split among the learners
(``--learners``). Options of this command only: ``--path fast|per-agent`` (the batched engine
with the opponents inside the env, or RLlib's ``PettingZooEnv`` with every seat a learner and no
pool), ``--env-runners``, ``--learners``, ``--address`` (a Ray cluster: ``auto`` or
``ray://host:10001``; default: a Ray started in this process and stopped at the end) and
``--num-cpus`` (that local Ray's CPUs; refused with ``--address``). The warm start (``bc_teacher``
and the other ``bc_*`` keys) is SB3-only: their flags are refused. Env runners and learners take
one CPU each (:func:`cpus_needed`): more than Ray has is refused before anything starts, instead
of waiting for them without end.

A run writes to ``--out`` (default ``runs/<game>_rllib_s<seed>``) what the SB3 trainer writes:
``checkpoints/latest.zip``, ``step_<N>.zip``, ``final.zip`` (our data-only format, through
:mod:`hod.training.rllib.bridge`: ``python -m hod.training.export`` turns them into ONNX + model card,
``--resume`` continues from them), ``tb/`` TensorBoard logs, ``eval.json`` and
``learning_curve.png`` (the same tournament evaluation), ``policy_diagnostics.json`` and the
``policy/`` TensorBoard scalars (the same diagnostics, :class:`hod.training.train.PolicyDiagnostics`),
``config.json`` (written once Ray is up: a run that cannot reach Ray writes nothing). A local Ray
keeps its session folder (logs) in a temporary folder removed at the end, not in ``/tmp/ray``.
"""
from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Optional

import numpy as np

from hod.agents.encoders import get_encoder
from hod.agents.model_card import CheckpointError
from hod.core.atomic import atomic_write_json
from hod.core.commands import interrupted_status, long_command, signal_name
from hod.core.errors import ConfigError
from hod.core.games import get_game
from hod.evaluation.workers import MAX_WORKERS
from hod.training import config as config_mod
from hod.training.blas_threads import set_blas_threads
from hod.training.checkpoint import load_checkpoint
from hod.training.pool import OpponentPool
from hod.training.train import (DIAGNOSTICS_EVERY, PolicyDiagnostics, build_model_card, evaluate_and_record,
                                parse_args, run_folder)

PATHS = ("fast", "per-agent")
FAST_MODULE = "default_policy"     # RLlib's single-agent module id
SHARED_MODULE = "shared"           # the per-agent path's one module for every seat
#: Ray's switch read at import: ``0`` makes a local Ray bind to 127.0.0.1 (set for one-machine runs).
LOOPBACK_VAR = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
#: Environment variable RLlib's processes get (threads of torch and BLAS per process).
THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
#: Seconds to wait for a TCP connection to a cluster's ``host:port`` before ``ray.init`` (which
#: otherwise retries for minutes).
CONNECT_TIMEOUT_S = 5.0


def cpus_needed(env_runners: int, learners: int, gpu: bool = False) -> int:
    """CPUs the algorithm's Ray actors reserve: 1 per env runner (``num_cpus_per_env_runner=1``) and
    1 per learner actor (RLlib's ``num_cpus_per_learner="auto"``: 1 without a GPU, 0 with one). The
    driver (this process: sampling with 0 env runners, updating with 0 learners) reserves none,
    since the algorithm is built outside Ray Tune. Ray waits without end for actors whose CPUs the
    cluster does not have, so the trainer checks this count first (:meth:`RLlibTrainer.start`)."""
    return int(env_runners) + (0 if gpu else int(learners))


def _fits(cpus: int) -> str:
    """The advice of the resource errors: what fits in ``cpus`` CPUs."""
    return (f"what fits: --env-runners + --learners <= {cpus} (e.g. --env-runners {max(0, cpus)} --learners 0)"
            if cpus >= 1 else "what fits: --env-runners 0 --learners 0")


def _check_reachable(address: str) -> None:
    """Fail fast when a cluster ``address`` (``HOST:PORT`` or ``ray://HOST:PORT``) does not accept
    a TCP connection within :data:`CONNECT_TIMEOUT_S`; ``auto``/``local`` are left to ``ray.init``.

    Raises:
        ConfigError: a malformed address or one that does not answer (named with the reason).
    """
    if address in ("auto", "local"):
        return
    hostport = address.split("://", 1)[1] if "://" in address else address
    host, sep, port = hostport.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ConfigError(f"--address {address!r}; legal: auto, HOST:PORT (the head's GCS, port 6379 by default) or "
                          f"ray://HOST:PORT (Ray Client, port 10001)")
    try:
        with socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S):
            pass
    except OSError as e:
        raise ConfigError(f"--address {address}: no Ray cluster answers at {host}:{port} within "
                          f"{CONNECT_TIMEOUT_S:g} s ({e}); start one (ray start --head) or fix the address") from e


def _shared_policy(agent_id, episode, **kwargs) -> str:
    """Policy mapping of the per-agent path: every seat plays the one shared module."""
    return SHARED_MODULE


def _sync_runner(runner, latest: Optional[bytes], names: list[str], new: dict[str, bytes]):
    """Run on each env runner: give its :class:`~hod.training.rllib.envs.PoolVectorEnv` the driver's pool."""
    env = getattr(runner, "env", None)
    if env is None:
        return None
    env.unwrapped.sync_pool(latest, names, new)
    return env.unwrapped.pool_members()


class RLlibTrainer:
    """One RLlib training run (see the module docstring). Build it, then call :meth:`run`.

    Args:
        game: ``"tapeo"`` or ``"robada"``. cfg: configuration ``{section: {key: value}}``.
        out: run folder. resume: a checkpoint of this trainer or of the SB3 trainer (same network).
        path: ``"fast"`` or ``"per-agent"``.
        env_runners: Ray actors stepping envs (0: sampling in the driver).
        learners: Ray actors updating the network (0: in the driver).
        address: Ray cluster address (None: start a local Ray, stopped by :meth:`close`).
        num_cpus: CPUs of the local Ray (None: this machine's count); not with ``address``.
        progress: show a tqdm progress bar. env_options: extra env options (``illegal_action`` is
            always ``"raise"``). log: where messages go (None: silent).

    Raises:
        ConfigError: an invalid configuration (the schema), a key the RLlib trainer does not
            support (``bc_teacher``, ``critic_input = "state"``), ``engine`` other than ``"batched"`` on the fast path,
            bad ``path``/``env_runners``/``learners``/``num_cpus``, ``num_cpus`` with ``address``,
            or env runners and learners that need more CPUs than the local Ray's
            (:func:`cpus_needed`); CheckpointError: an unusable ``resume``.
    """

    def __init__(self, game: str, cfg: dict, out: str | Path, resume: Optional[str | Path] = None,
                 path: str = "fast", env_runners: int = 0, learners: int = 0, address: Optional[str] = None,
                 num_cpus: Optional[int] = None, progress: bool = True, env_options: Optional[dict] = None,
                 log=print) -> None:
        config_mod.validate_config(game, cfg)
        config_mod.check_out_dir(out)
        c = config_mod.flatten(cfg)
        if path not in PATHS:
            raise ConfigError(f"--path {path!r}; legal values: {list(PATHS)}")
        for name, v in (("env_runners", env_runners), ("learners", learners)):
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= MAX_WORKERS:
                raise ConfigError(f"--{name.replace('_', '-')} {v!r}; legal: an integer in 0..{MAX_WORKERS}")
        if num_cpus is not None and (isinstance(num_cpus, bool) or not isinstance(num_cpus, int)
                                     or not 1 <= num_cpus <= MAX_WORKERS):
            raise ConfigError(f"--num-cpus {num_cpus!r}; legal: an integer in 1..{MAX_WORKERS} (default: this "
                              f"machine's {os.cpu_count()})")
        if num_cpus is not None and address:
            raise ConfigError(f"--num-cpus {num_cpus} with --address {address}: a cluster's CPUs are those its "
                              f"nodes declared (ray start --num-cpus); legal: --num-cpus without --address only")
        if not address:
            have = num_cpus or os.cpu_count() or 1
            need = cpus_needed(env_runners, learners, str(c["device"]).startswith("cuda"))
            if need > have:
                raise ConfigError(f"--env-runners {env_runners} and --learners {learners} need {need} CPUs, the local "
                                  f"Ray has {have} (--num-cpus); {_fits(have)}")
        if c.get("bc_teacher"):
            raise ConfigError(f"bc_teacher={c['bc_teacher']!r}: the RLlib trainer has no behaviour-cloning warm "
                              f"start; legal: '' (use python -m hod.training.train for it)")
        if c.get("critic_input", "observation") != "observation":
            raise ConfigError(f"critic_input={c['critic_input']!r}: the RLlib trainer's module has no whole-state "
                              f"critic; legal: 'observation' (use python -m hod.training.train for 'state')")
        if path == "fast" and c.get("engine", "single") != "batched":
            raise ConfigError(f"engine={c.get('engine')!r}: the RLlib fast path steps the batched engine; legal: "
                              f"'batched' (or --path per-agent)")
        self.game, self.cfg, self.out, self.c = game, cfg, Path(out), c
        self.path, self.env_runners, self.learners = path, env_runners, learners
        self.address, self.num_cpus, self.progress = address, num_cpus, progress
        self.log = log or (lambda *a, **k: None)
        self.module_id = FAST_MODULE if path == "fast" else SHARED_MODULE
        info = get_game(game)
        self.env_options = dict(env_options or {}, reward_scheme=c["reward_scheme"])
        self.rules = {**info.rule_defaults, **info.check_rule_options(self.env_options)}
        self.encoder = get_encoder(c.get("obs_encoder", "none"), game)
        if path == "per-agent" and not self.encoder.identity:
            raise ConfigError(f"obs_encoder={self.encoder.name!r}: the per-agent path reads the plain observation; "
                              f"legal there: 'none'")
        self.obs_size = info.layout.size + self.encoder.extra
        self.num_actions = info.num_actions
        self.pool = OpponentPool(game, c["heuristics"], c["pool_size"], c["p_latest"], c["p_past"],
                                 c["p_heuristic"], c["opponent_deterministic"], options=c.get("heuristic_options"))
        self.history: list[dict] = []
        self.steps = 0
        self.wall_clock_before = 0.0
        self.resumed_from: Optional[str] = None
        self._resume_model = None
        if resume is not None:
            model, card, snaps = load_checkpoint(resume, game=game)
            want = {"net_arch": list(c["net_arch"]), "activation": c["activation"]}
            if card.get("policy") != want or card.get("obs_encoder", "none") != self.encoder.name:
                raise CheckpointError(f"{resume}: network {card.get('policy')} with encoder "
                                      f"{card.get('obs_encoder', 'none')!r} differs from the configured {want} with "
                                      f"{self.encoder.name!r}; a resumed run keeps its network")
            for name, pol in snaps.items():
                self.pool.add_snapshot(name, pol)
            self.history = list(card.get("evaluation", []))
            self.wall_clock_before = float(card["training"].get("wall_clock_s", 0.0))
            self.steps = int(model.num_timesteps)
            self.resumed_from = str(resume)
            self._resume_model = model
        self.start_steps = self.steps
        self.algo = None
        self._own_ray = False
        self._ray_tmp: Optional[str] = None   # the own local Ray's temp folder (removed by close)
        self._diag = PolicyDiagnostics(game, c, self.env_options, self.out)
        #: the rows of ``policy_diagnostics.json`` (:class:`hod.training.train.PolicyDiagnostics`)
        self.diagnostics: list[dict] = self._diag.rows
        self._sent: set[str] = set()
        self.eval_time = 0.0
        self.update_time = 0.0
        #: per training iteration: ``steps`` sampled, ``sample_s`` (env runners' sampling, wall) and
        #: ``update_s`` (the learners' update, wall), from RLlib's timers
        self.timings: list[dict] = []

    # ---- Ray and the algorithm -------------------------------------------------------------------
    def algorithm_config(self):
        """The RLlib ``PPOConfig`` of this run (see the module docstring for the key mapping)."""
        from ray.rllib.algorithms.ppo import PPOConfig
        from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
        from ray.rllib.core.rl_module.rl_module import RLModuleSpec

        from .envs import PoolVectorEnv
        from .module import MaskedActorCritic

        c = self.c
        spec = RLModuleSpec(module_class=MaskedActorCritic,
                            model_config={"net_arch": list(c["net_arch"]), "activation": c["activation"]})
        if self.path == "fast":
            slots = c["tables"] * c["learner_seats"]
            env_config = {"game": self.game, "players": list(c["players"]), "learner_seats": c["learner_seats"],
                          "env_options": dict(self.env_options, illegal_action="raise"), "seed": c["seed"],
                          "reward_scale": c.get("reward_scale", 1.0), "obs_encoder": self.encoder.name,
                          "heuristics": list(c["heuristics"]), "pool_size": c["pool_size"], "p_latest": c["p_latest"],
                          "p_past": c["p_past"], "p_heuristic": c["p_heuristic"],
                          "opponent_deterministic": c["opponent_deterministic"],
                          "heuristic_options": dict(c.get("heuristic_options") or {})}
            cfg = PPOConfig().environment(env=PoolVectorEnv, env_config=env_config, disable_env_checking=True)
            cfg = cfg.env_runners(gym_env_vectorize_mode="vector_entry_point")
            cfg = cfg.rl_module(rl_module_spec=spec)
        else:
            from ray.tune.registry import register_env

            from .envs import make_per_agent_env

            slots = c["tables"]
            name = f"hod_{self.game}_per_agent"
            register_env(name, make_per_agent_env)
            env_config = {"game": self.game, "num_players": int(c["players"][0]),
                          "env_options": dict(self.env_options, illegal_action="raise")}
            cfg = PPOConfig().environment(env=name, env_config=env_config, disable_env_checking=True)
            cfg = cfg.multi_agent(policies={SHARED_MODULE}, policy_mapping_fn=_shared_policy)
            cfg = cfg.rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={SHARED_MODULE: spec}))
        batch = c["n_steps"] * slots * max(1, self.env_runners)
        cfg = cfg.env_runners(num_env_runners=self.env_runners, num_envs_per_env_runner=slots,
                              rollout_fragment_length=c["n_steps"], num_cpus_per_env_runner=1)
        cfg = cfg.learners(num_learners=self.learners,
                           num_gpus_per_learner=1 if str(c["device"]).startswith("cuda") else 0)
        cfg = cfg.training(lr=c["learning_rate"], train_batch_size_per_learner=batch // max(1, self.learners),
                           minibatch_size=c["batch_size"], num_epochs=c["n_epochs"], gamma=c["gamma"],
                           lambda_=c["gae_lambda"], clip_param=c["clip_range"], entropy_coeff=c["ent_coef"],
                           vf_loss_coeff=c["vf_coef"], grad_clip=c["max_grad_norm"], grad_clip_by="global_norm",
                           use_kl_loss=False, vf_clip_param=float("inf"))
        return cfg.debugging(seed=c["seed"], log_level="ERROR")

    def start(self) -> None:
        """Connect to Ray (``address``) or start a local Ray, check that its CPUs (and GPUs) hold the
        env runners and learners, then build the algorithm (and put a resumed checkpoint's weights
        and Adam moments into its learner).

        A local Ray keeps its session (logs, sockets) in a temporary folder of its own, removed by
        :meth:`close`. A cluster ``address`` is first tried with a TCP connection
        (:data:`CONNECT_TIMEOUT_S`), so a wrong address fails in seconds.

        Raises:
            ConfigError: Ray cannot be started or reached (the reason in one line), or the cluster
                lacks the CPUs/GPUs of ``env_runners`` and ``learners`` (what fits is named). Ray is
                left as it was (a local Ray started here is shut down).
        """
        import ray

        threads = str(self.c["torch_threads"])
        runtime_env = {"env_vars": {v: threads for v in THREAD_VARS}}
        try:
            if not ray.is_initialized():
                if self.address:
                    _check_reachable(self.address)
                    ray.init(address=self.address, runtime_env=runtime_env, log_to_driver=False)
                else:
                    self._ray_tmp = tempfile.mkdtemp(prefix="hod_ray_")
                    self._own_ray = True
                    ray.init(num_cpus=self.num_cpus, include_dashboard=False, runtime_env=runtime_env,
                             log_to_driver=False, _temp_dir=self._ray_tmp)
            self._check_resources(ray.cluster_resources(), ray.available_resources())
        except ConfigError:
            self.close()
            raise
        except (ConnectionError, ValueError, RuntimeError, TimeoutError, OSError) as e:
            self.close()
            where = f"the Ray cluster at {self.address}" if self.address else "a local Ray"
            first = (str(e).strip().splitlines() or [type(e).__name__])[0]
            raise ConfigError(f"cannot reach {where}: {type(e).__name__}: {first}") from e
        import torch

        torch.set_num_threads(self.c["torch_threads"])
        set_blas_threads(self.c["torch_threads"])
        self.algo = self.algorithm_config().build_algo()
        if self._resume_model is not None:
            from .bridge import restore_learner_state

            state = self.algo.learner_group.get_state()
            self.algo.learner_group.set_state(restore_learner_state(state, self.module_id, self._resume_model))
            self.algo.env_runner_group.sync_weights(from_worker_or_learner_group=self.algo.learner_group,
                                                    inference_only=True)
            self._resume_model = None

    def _check_resources(self, total: dict, free: dict) -> None:
        """Refuse env runners and learners that Ray's ``total`` resources (``ray.cluster_resources()``)
        cannot hold, instead of waiting for them without end; log a warning when the ``free`` ones
        (``ray.available_resources()``) cannot hold them now (the run then waits for other jobs).

        Raises:
            ConfigError: too few CPUs (or GPUs for ``device = "cuda"`` learners); what fits is named.
        """
        gpu = str(self.c["device"]).startswith("cuda")
        need = cpus_needed(self.env_runners, self.learners, gpu)
        have = int(total.get("CPU", 0))
        where = f"the Ray cluster at {self.address}" if self.address else "the Ray of this process"
        if need > have:
            raise ConfigError(f"--env-runners {self.env_runners} and --learners {self.learners} need {need} CPUs, "
                              f"{where} has {have}; {_fits(have)}")
        if gpu and self.learners > int(total.get("GPU", 0)):
            raise ConfigError(f"--learners {self.learners} with device {self.c['device']!r} need a GPU each, {where} "
                              f"has {int(total.get('GPU', 0))}; legal: --learners <= the GPUs (or device 'cpu')")
        if need > free.get("CPU", 0):
            self.log(f"warning: {where} has {free.get('CPU', 0):g} of its {have} CPUs free now; the {need} this "
                     f"run needs will be waited for")

    def close(self) -> None:
        """Stop the algorithm's actors; stop the local Ray this trainer started (by its own handle:
        ``ray.shutdown()`` of this process, never ``ray stop``) and remove its temporary session
        folder; a cluster is left running."""
        import ray

        if self.algo is not None:
            self.algo.stop()
            self.algo = None
        if self._own_ray:
            if ray.is_initialized():
                ray.shutdown()
            self._own_ray = False
        if self._ray_tmp is not None:
            shutil.rmtree(self._ray_tmp, ignore_errors=True)
            self._ray_tmp = None

    # ---- the policy, the pool --------------------------------------------------------------------
    def numpy_policy(self):
        """The learner's actor now as a :class:`~hod.training.numpy_policy.NumpyPolicy`."""
        from .module import numpy_policy_from_weights

        weights = self.algo.learner_group.get_weights([self.module_id])[self.module_id]
        return numpy_policy_from_weights(weights, self.c["activation"], self.encoder.name)

    def push_pool(self, latest) -> None:
        """Refresh the pool's latest copy and send the pool to every env runner (only snapshots
        they lack travel; fast path only)."""
        self.pool.update_latest(latest)
        if self.path != "fast":
            return
        names = list(self.pool.past)
        new = {n: self.pool.past[n].to_bytes() for n in names if n not in self._sent}
        self.algo.env_runner_group.foreach_env_runner(
            functools.partial(_sync_runner, latest=latest.to_bytes(), names=names, new=new))
        self._sent = set(names)

    # ---- evaluation, checkpoints -----------------------------------------------------------------
    def evaluate(self, policy) -> list[dict]:
        """The tournament evaluation of the SB3 trainer (:func:`hod.training.train.evaluate_and_record`)."""
        t0 = time.perf_counter()
        rows = evaluate_and_record(self.game, self.c, policy, self.steps, self.out, self.history, self.log)
        self.eval_time += time.perf_counter() - t0
        return rows

    def wall_clock(self) -> float:
        """Seconds of training of the whole run: earlier sessions' (from a resumed checkpoint) plus this one's."""
        return self.wall_clock_before + (time.perf_counter() - self._t_start)

    def steps_per_s(self) -> float:
        """Learner steps per second of this session, evaluation time excluded."""
        t = (time.perf_counter() - self._t_start) - self.eval_time
        return (self.steps - self.start_steps) / t if t > 0 else 0.0

    def model_card(self) -> dict[str, Any]:
        """The model card (the SB3 trainer's schema, algorithm ``"PPO (Ray RLlib ...)"``)."""
        import ray

        training = {"steps": int(self.steps), "seed": self.c["seed"], "wall_clock_s": round(self.wall_clock(), 1),
                    "env_steps_per_s": round(self.steps_per_s(), 1), "resumed_from": self.resumed_from,
                    "imitation": None,
                    "rllib": {"path": self.path, "env_runners": self.env_runners, "learners": self.learners}}
        pool = self.pool.describe() if self.path == "fast" else {"self_play": "every seat the learner (per-agent path)"}
        return build_model_card(self.game, self.cfg, self.obs_size, self.num_actions, self.encoder.name, self.rules,
                                f"PPO (Ray RLlib {ray.__version__}, {self.path} path)", training, self.history, pool)

    def save(self, name: str = "latest", with_pool: bool = True) -> Path:
        """Write ``checkpoints/<name>.zip`` (+ card) atomically (:mod:`hod.training.rllib.bridge`)."""
        from .bridge import save_learner_checkpoint

        state = self.algo.learner_group.get_state()
        return save_learner_checkpoint(self.out / "checkpoints" / f"{name}.zip", state, self.module_id,
                                       self.model_card(), self.steps, dict(self.pool.past) if with_pool else None)

    # ---- the run ---------------------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        """Train until ``total_steps`` (or Ctrl-C); returns the summary of the SB3 trainer's
        :meth:`~hod.training.train.Trainer.run` (``checkpoint``, ``steps``, ``interrupted``,
        ``wall_clock_s``, ``env_steps_per_s``, ``evaluation``, ``diagnostics``) plus ``iterations`` and
        ``update_s`` (learner time per iteration, mean). Ray is closed at the end (:meth:`close`).
        Nothing is written before Ray is up (:meth:`start`); Ctrl-C during start-up returns
        ``interrupted`` with ``checkpoint`` None.

        Raises:
            ConfigError: Ray cannot be started or reached, or lacks the resources (:meth:`start`).
        """
        from torch.utils.tensorboard import SummaryWriter
        from tqdm import tqdm

        c = self.c
        self._t_start = time.perf_counter()
        try:
            if self.algo is None:
                self.start()   # a failure to reach Ray raises here, before anything is written
        except KeyboardInterrupt:
            self.close()
            self.log("interrupted while starting Ray: nothing written")
            return {"checkpoint": None, "steps": int(self.steps), "interrupted": True, "wall_clock_s": 0.0,
                    "env_steps_per_s": 0.0, "iterations": 0, "update_s": 0.0, "evaluation": [], "diagnostics": None}
        except BaseException:
            self.close()
            raise
        self.out.mkdir(parents=True, exist_ok=True)
        atomic_write_json(self.out / "config.json", {"game": self.game, "rllib_path": self.path, **self.cfg})
        interrupted, iterations = False, 0
        next_diag = self.steps   # the first iteration's end logs the (nearly) untrained policy, as the SB3 trainer
        writer = SummaryWriter(str(self.out / "tb" / f"rllib_{self.path}"))
        bar = tqdm(total=c["total_steps"], initial=min(self.steps, c["total_steps"]), unit="step",
                   disable=not self.progress, desc=f"{self.game} rllib")

        def nxt(every: int) -> Optional[int]:
            return (self.steps // every + 1) * every if every else None

        next_snapshot, next_eval, next_ckpt = nxt(c["snapshot_every"]), nxt(c["eval_every"]), nxt(c["checkpoint_every"])
        try:
            latest = self.numpy_policy()
            self.push_pool(latest)
            if c["eval_every"] and not self.history:
                self.evaluate(latest)   # the untrained policy: the curve's first point
            while self.steps < c["total_steps"]:
                result = self.algo.train()
                iterations += 1
                runners = result.get("env_runners", {})
                n = int(runners.get("num_env_steps_sampled", 0))
                self.steps += n
                bar.update(n)
                timers = result.get("timers", {})
                self.timings.append({"steps": n, "sample_s": float(timers.get("env_runner_sampling_timer", 0.0)),
                                     "update_s": float(timers.get("learner_update_timer", 0.0))})
                self.update_time += self.timings[-1]["update_s"]
                latest = self.numpy_policy()
                if next_snapshot is not None and self.steps >= next_snapshot:
                    self.pool.add_snapshot(f"step_{self.steps:09d}", latest)
                    next_snapshot = nxt(c["snapshot_every"])
                self.push_pool(latest)
                self._log(writer, result)
                if self.steps >= next_diag:
                    self._diagnose(writer, latest)
                    next_diag = self.steps + DIAGNOSTICS_EVERY
                if next_eval is not None and self.steps >= next_eval:
                    for r in self.evaluate(latest):
                        writer.add_scalar(f"eval/{r['num_players']}p_vs_{r['baseline']}", r["win_rate"], self.steps)
                    next_eval = nxt(c["eval_every"])
                if next_ckpt is not None and self.steps >= next_ckpt:
                    self.save("latest")
                    self.save(f"step_{self.steps:09d}", with_pool=False)
                    next_ckpt = nxt(c["checkpoint_every"])
            if c["eval_every"] and (not self.history or self.history[-1]["steps"] != self.steps):
                self.evaluate(self.numpy_policy())
            if not self.diagnostics or self.diagnostics[-1]["steps"] != self.steps:
                self._diagnose(writer, self.numpy_policy())   # the final policy's row, as the SB3 trainer
        except KeyboardInterrupt:   # Ctrl-C, or SIGTERM under hod.core.commands.long_command
            interrupted = True
            self.log(f"interrupted ({signal_name()}): saving a checkpoint")
        finally:
            bar.close()
        try:
            path = self.save("latest")
            if not interrupted:
                path = self.save("final")
            writer.close()
        finally:
            self.close()
        last = [r for r in self.history if r["steps"] == self.history[-1]["steps"]] if self.history else []
        summary = {
            "checkpoint": str(path), "steps": int(self.steps), "interrupted": interrupted,
            "wall_clock_s": round(self.wall_clock(), 1), "env_steps_per_s": round(self.steps_per_s(), 1),
            "iterations": iterations, "update_s": round(self.update_time / max(1, iterations), 3), "evaluation": last,
            "diagnostics": self.diagnostics[-1] if self.diagnostics and not interrupted else None,
        }
        self.log(f"{'stopped' if interrupted else 'done'}: {summary['steps']} steps, {summary['wall_clock_s']} s, "
                 f"{summary['env_steps_per_s']} steps/s (evaluation excluded); checkpoint {path}")
        return summary

    def _diagnose(self, writer, policy) -> None:
        """The SB3 trainer's policy diagnostics (:class:`hod.training.train.PolicyDiagnostics`): a row
        of ``policy_diagnostics.json`` and the ``policy/`` TensorBoard scalars (time not counted in
        the steps per second, as evaluation)."""
        t0 = time.perf_counter()
        for name, value in PolicyDiagnostics.scalars(self._diag(policy, self.steps)).items():
            writer.add_scalar(name, value, self.steps)
        self.eval_time += time.perf_counter() - t0

    def _log(self, writer, result: dict) -> None:
        """TensorBoard scalars of one iteration: ``rollout/`` (episode return and length), ``train/``
        (the learner's losses), ``selfplay/`` (pool size, steps per second)."""
        s = self.steps
        runners = result.get("env_runners", {})
        for ours, theirs in (("rollout/ep_rew_mean", "episode_return_mean"), ("rollout/ep_len_mean", "episode_len_mean")):
            v = runners.get(theirs)
            if v is not None and np.isfinite(float(v)):
                writer.add_scalar(ours, float(v), s)
        for k, v in result.get("learners", {}).get(self.module_id, {}).items():
            if isinstance(v, (int, float, np.number)) and np.isfinite(float(v)):
                writer.add_scalar(f"train/{k}", float(v), s)
        writer.add_scalar("selfplay/pool_snapshots", len(self.pool.past), s)
        writer.add_scalar("selfplay/env_steps_per_s", self.steps_per_s(), s)


# ---- command line --------------------------------------------------------------------------------
def _rllib_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("Ray RLlib")
    g.add_argument("--path", choices=PATHS, default="fast",
                   help="fast: the batched engine, opponents inside the env; per-agent: RLlib's PettingZooEnv, "
                        "every seat a learner (first table size of --players, no pool)")
    g.add_argument("--env-runners", type=int, default=0, help="Ray actors stepping envs (0: in this process)")
    g.add_argument("--learners", type=int, default=0, help="Ray actors updating the network (0: in this process)")
    g.add_argument("--address", help="Ray cluster to join: auto, or ray://HEAD:10001 (default: a local Ray "
                                     "started and stopped by this command)")
    g.add_argument("--num-cpus", type=int, help="CPUs of the local Ray (default: all of this machine); must hold "
                                                "--env-runners + --learners; not with --address")


def main(argv: Optional[list[str]] = None) -> int:
    """Entry point of ``python -m hod.training.rllib``; returns 0, 130 after Ctrl-C, 143 after SIGTERM
    (both with a checkpoint, :mod:`hod.core.commands`), or 2 with a
    one-line ``error: ...`` for a bad configuration, run folder or checkpoint, a ``bc_*`` flag (the
    warm start is SB3-only), too few CPUs for the env runners and learners, or a Ray that cannot be
    started or reached (nothing written).

    Raises:
        SystemExit: argparse errors (status 2, usage printed); status 74 with one ``error: cannot
            write <path>: <reason>`` line when a file of the run cannot be written
            (:func:`hod.core.commands.long_command`).
    """
    game, cfg, args = parse_args(argv, prog="python -m hod.training.rllib", extra=_rllib_options,
                                 description="PPO self-play on Ray RLlib (one machine or a Ray cluster).")
    if not args.address and "ray" not in sys.modules:
        # the local Ray of a one-machine run listens on 127.0.0.1 only (Ray reads this at import)
        os.environ.setdefault(LOOPBACK_VAR, "0")
    try:
        bc = sorted(k for k, v in vars(args).items() if k.startswith("bc_") and v is not None)
        if bc:
            raise ConfigError(f"{', '.join(bc)}: the RLlib trainer has no behaviour-cloning warm start (the bc_* "
                              f"keys); legal: leave them out (python -m hod.training.train has it)")
        out = run_folder(game, cfg, args, kind="_rllib")
        trainer = RLlibTrainer(game, cfg, out, resume=args.resume, path=args.path, env_runners=args.env_runners,
                               learners=args.learners, address=args.address, num_cpus=args.num_cpus,
                               progress=not args.no_progress)
        with long_command():   # a checkpoint that cannot be written: one line, status 74
            summary = trainer.run()
    except (ConfigError, CheckpointError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(json.dumps({k: v for k, v in summary.items() if k != "evaluation"}, indent=2))
    return interrupted_status() if summary["interrupted"] else 0
