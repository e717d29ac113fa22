"""PPO self-play training: ``python -m hod.training.train --game tapeo --players 4 ...``.

sb3-contrib ``MaskablePPO`` learns (as :class:`hod.training.ppo_fast.FastMaskablePPO`: the same run bit
for bit, less overhead per step), through the training env chosen by the ``engine`` key
(``"batched"``: one learner vector env over the game's batched engine,
:class:`hod.training.learner_env.LearnerVecEnv` via :func:`hod.training.learner_env.make_learner_vec_env`;
``"single"``: single-game tables, :class:`hod.training.vec_env.TableVecEnv`), against the opponent
pool (:mod:`hod.training.pool`: frozen copies of itself plus the heuristic bots) over every table
size of ``--players``. Defaults come from ``<game package>/training.toml``; every
key is a flag (``--help`` lists them). A run writes to ``--out`` (default ``runs/<game>_s<seed>``):

* ``checkpoints/latest.zip`` (+ ``latest.json`` model card) every ``checkpoint_every`` steps,
  on Ctrl-C and at the end; ``checkpoints/step_<N>.zip`` (policy only, no pool) each time too;
  ``checkpoints/final.zip`` at the end;
* ``tb/`` TensorBoard logs (``tensorboard --logdir runs``);
* ``eval.json`` (evaluation rows, :mod:`hod.training.evaluate`) and ``learning_curve.png``;
* ``config.json`` (the effective configuration).

``--resume PATH`` continues a run from a checkpoint (its configuration, pool and step count;
flags given on the command line override it) until ``total_steps``.

Environment steps are learner decisions (SB3 timesteps, all env slots together).
"""
from __future__ import annotations

import argparse
import functools
import json
import sys
import time
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np

from hod.agents.encoders import get_encoder
from hod.agents.model_card import MODEL_CARD_FORMAT, MODEL_CARD_VERSION, CheckpointError, library_versions, utc_now
from hod.core.atomic import atomic_write_json, remove_folder_orphans
from hod.core.commands import CommandStopped, interrupted_status, long_command, signal_name
from hod.core.errors import ConfigError
from hod.core.games import game_names, get_game, layout_version
from hod.evaluation.tournament import WorkerDied

from . import config as config_mod
from .blas_threads import set_blas_threads
from .checkpoint import load_checkpoint, read_checkpoint, save_checkpoint
from .critic import card_entry, policy_spec
from .curves import save_learning_curve
from .diagnostics import policy_report, probe_positions
from .evaluate import evaluate_policy, format_rows
from .imitation import behaviour_clone, cached_teacher_decisions
from .learner_env import make_learner_vec_env
from .numpy_policy import PolicyBot
from .pool import OpponentPool, check_bot_names
from .vec_env import make_vec_env


#: Positions of the policy diagnostics (:meth:`Trainer.policy_diagnostics`).
PROBE_POSITIONS = 2000
#: Learner steps between two policy diagnostics logged to TensorBoard (``policy/...``).
DIAGNOSTICS_EVERY = 20_000


class Trainer:
    """One training run (see the module docstring). Build it, then call :meth:`run`.

    Args:
        game: ``"tapeo"`` or ``"robada"``.
        cfg: configuration ``{section: {key: value}}`` (:mod:`hod.training.config`).
        out: run folder.
        resume: checkpoint to resume from (None: new run).
        progress: show SB3's progress bar.
        verbose: SB3 verbosity (0 quiet, 1 rollout tables).
        env_options: extra ``raw_env`` options for the training tables (e.g. ``max_cycles``);
            ``illegal_action`` is always ``"raise"``.
        log: where to print messages (None: silent).

    Raises:
        ConfigError: invalid configuration (a key outside its legal range,
            :func:`hod.training.config.validate_config`) or an ``out`` folder that cannot be
            written (:func:`hod.training.config.check_out_dir`); CheckpointError: unusable
            ``resume`` checkpoint, or an ``init_actor`` file that is unusable or holds another
            network (:func:`hod.training.policy_io.load_init_actor`).
    """

    def __init__(self, game: str, cfg: dict, out: str | Path, resume: Optional[str | Path] = None,
                 progress: bool = True, verbose: int = 0, env_options: Optional[dict] = None,
                 log=print) -> None:
        import torch
        from torch import nn

        from .ppo_fast import FastMaskablePPO, as_fast   # MaskablePPO, the same run with less overhead


        config_mod.validate_config(game, cfg)   # every key against its legal range (the schema)
        config_mod.check_out_dir(out)
        self.game, self.cfg, self.out = game, cfg, Path(out)
        self.c = c = config_mod.flatten(cfg)
        self.progress, self.log = progress, (log or (lambda *a, **k: None))
        torch.set_num_threads(c["torch_threads"])
        set_blas_threads(c["torch_threads"])  # numpy's BLAS too: the batched envs' opponents (hod.training.blas_threads)
        self.pool = OpponentPool(game, c["heuristics"], c["pool_size"], c["p_latest"], c["p_past"],
                                 c["p_heuristic"], c["opponent_deterministic"], options=c.get("heuristic_options"),
                                 search_bots=c.get("engine", "single") == "single",   # single tables give beliefs
                                 weighting=c.get("pool_weighting", "uniform"), pfsp_exponent=c.get("pfsp_exponent", 2.0),
                                 pfsp_prior=c.get("pfsp_prior", 4.0), pfsp_window=c.get("pfsp_window", 2000))
        self.baselines = check_bot_names(game, c["baselines"]) if c["eval_every"] else []
        env_opts = dict(env_options or {}, reward_scheme=c["reward_scheme"], illegal_action="raise")
        self.env_options = env_opts   # also the teacher's games of the warm start (_warm_start)
        info = get_game(game)
        #: the rule options of the training tables (every option of the declaration, defaults filled in)
        self.rules = {**info.rule_defaults, **info.check_rule_options(env_opts)}
        scale = c.get("reward_scale", 1.0)   # configs from before the key: 1.0
        self.encoder = get_encoder(c.get("obs_encoder", "none"), game)
        if c.get("engine", "single") == "batched":   # one learner env: encoder and reward scale inside
            self.env = make_learner_vec_env(game, c["tables"], c["players"], c["learner_seats"], self.pool,
                                            env_opts, seed=c["seed"], encoder=self.encoder, reward_scale=scale)
            if c.get("critic_input", "observation") == "state":   # rows: observation | global state | seat
                self.env.use_global_state()
        else:
            self.env = make_vec_env(game, c["tables"], c["players"], c["learner_seats"], self.pool, env_opts,
                                    seed=c["seed"], engine=c.get("engine", "single"), encoder=self.encoder,
                                    reward_scale=scale)
        #: the actor's input width (the observation after the encoder); the env's rows may be wider
        #: (critic_input = "state": + global state + seat one-hot, hod.training.critic)
        self.obs_size = int(self.env.observation_space.shape[0]) - int(getattr(self.env, "state_extra", 0))
        ppo_kwargs = dict(learning_rate=c["learning_rate"], n_steps=c["n_steps"], batch_size=c["batch_size"],
                          n_epochs=c["n_epochs"], gamma=c["gamma"], gae_lambda=c["gae_lambda"],
                          clip_range=c["clip_range"], ent_coef=c["ent_coef"], vf_coef=c["vf_coef"],
                          max_grad_norm=c["max_grad_norm"], tensorboard_log=str(self.out / "tb"), verbose=verbose)
        self.history: list[dict] = []
        self.imitation: Optional[dict] = None
        self.init_actor: Optional[dict] = None   # {"path", "kind", "steps"} of the init_actor warm start
        self.wall_clock_before = 0.0
        self.resumed_from = None
        if resume is not None:

            _, known = read_checkpoint(resume, game=game)
            if known.get("obs_encoder", "none") != self.encoder.name:
                raise CheckpointError(f"{resume}: the policy reads observations through encoder "
                                      f"{known.get('obs_encoder', 'none')!r}, not the configured "
                                      f"{self.encoder.name!r}; a resumed run keeps its encoder")
            was = "state" if known.get("critic") else "observation"
            if c.get("critic_input", "observation") != was:
                raise CheckpointError(f"{resume}: the checkpoint's critic reads critic_input={was!r}, not the "
                                      f"configured {c.get('critic_input', 'observation')!r}; a resumed run keeps "
                                      f"its critic (legal: {was!r})")
            model, card, snaps = load_checkpoint(resume, game=game, env=self.env, device=c["device"], **ppo_kwargs)
            want = {"net_arch": list(c["net_arch"]), "activation": c["activation"]}
            if card.get("policy") != want:
                raise CheckpointError(f"{resume}: network {card.get('policy')} differs from the configured {want}; "
                                      f"a resumed run keeps its network")
            for name, pol in snaps.items():
                self.pool.add_snapshot(name, pol)
            self.history = list(card.get("evaluation", []))
            self.imitation = card["training"].get("imitation")
            self.init_actor = card["training"].get("init_actor")
            was = (card["training"].get("config", {}).get("imitation") or {}).get("init_actor", "") or ""
            if (c.get("init_actor") or "") != was:   # the card would name a file never used
                raise ConfigError(f"init_actor={c.get('init_actor')!r}: a resumed run keeps its actor (this run "
                                  f"started from {was!r}); legal: {was!r}, or a new run (no --resume)")
            self.wall_clock_before = float(card["training"].get("wall_clock_s", 0.0))
            self.resumed_from = str(resume)
            model.set_random_seed(c["seed"] + int(model.num_timesteps))
            self.model = as_fast(model)
        else:
            act = {"tanh": nn.Tanh, "relu": nn.ReLU}[c["activation"]]
            policy_kwargs = dict(net_arch=dict(pi=list(c["net_arch"]), vf=list(c["net_arch"])), activation_fn=act)
            policy, policy_kwargs = policy_spec(c.get("critic_input", "observation"), self.obs_size, policy_kwargs)
            self.model = FastMaskablePPO(policy, self.env, policy_kwargs=policy_kwargs, seed=c["seed"],
                                         device=c["device"], **ppo_kwargs)
            self.imitation = self._warm_start() if c.get("bc_teacher") else None
            if c.get("init_actor"):   # the actor of an export or checkpoint; the critic stays fresh
                from .policy_io import load_init_actor

                self.init_actor = load_init_actor(self.model.policy, c["init_actor"], game, self.encoder.name)
                self.log(f"actor from {c['init_actor']} ({self.init_actor['kind']}); critic fresh")
        self.start_steps = int(self.model.num_timesteps)
        self._diag = PolicyDiagnostics(game, c, self.env_options, self.out)
        self.diagnostics: list[dict] = self._diag.rows   # the rows of policy_diagnostics.json
        self.learn_time = 0.0
        self.eval_time = 0.0

    def _warm_start(self) -> dict:
        """Behaviour cloning of the ``bc_teacher`` bot before PPO (:mod:`hod.training.imitation`)."""

        c = self.c
        t0 = time.perf_counter()
        data = cached_teacher_decisions(c.get("bc_cache_dir") or None, game=self.game, teacher=c["bc_teacher"],
                                        player_counts=list(c["players"]), num_decisions=c["bc_decisions"],
                                        seed=c["seed"], reward_scheme=c["reward_scheme"], gamma=c["gamma"],
                                        env_options=self.env_options,
                                        teacher_options=c.get("bc_teacher_options") or {},
                                        workers=c.get("bc_workers", 1))
        if not self.encoder.identity:
            data["observation"] = self.encoder.encode_batch(data["observation"], data["action_mask"])
        data["value_target"] = data["value_target"] * np.float32(c.get("reward_scale", 1.0))   # as PPO's returns
        collect_s = time.perf_counter() - t0
        stats = behaviour_clone(self.model, data, c["bc_epochs"], c["bc_learning_rate"],
                                batch_size=c["batch_size"], vf_coef=c["vf_coef"], seed=c["seed"])
        info = {"teacher": c["bc_teacher"], "teacher_options": dict(c.get("bc_teacher_options") or {}),
                "decisions": int(c["bc_decisions"]), "epochs": int(c["bc_epochs"]),
                "collect_s": round(collect_s, 1), **stats}
        self.log(f"behaviour cloning of {c['bc_teacher']!r}: {info}")
        return info

    # ---- pieces the callback calls ----------------------------------------------------------
    def numpy_policy(self):
        from .policy_io import to_numpy_policy

        return to_numpy_policy(self.model.policy, self.encoder.name)

    def snapshot(self) -> None:
        """Add a frozen copy of the learner to the pool as ``step_<N>``."""
        self.pool.add_snapshot(f"step_{self.model.num_timesteps:09d}", self.numpy_policy())

    def evaluate(self) -> list[dict]:
        """Evaluate the learner against the baselines; append to the history, write eval.json and the curve."""
        if not self.baselines:
            return []
        t0 = time.perf_counter()
        rows = evaluate_and_record(self.game, self.c, self.numpy_policy(), int(self.model.num_timesteps), self.out,
                                   self.history, self.log)
        self.eval_time += time.perf_counter() - t0
        return rows

    def policy_diagnostics(self, record: bool = True) -> dict:
        """State dependence and saturation of the current policy (:class:`PolicyDiagnostics`); with
        ``record`` the row is appended to :attr:`diagnostics` and written to ``policy_diagnostics.json``."""
        t0 = time.perf_counter()
        rep = self._diag(self.numpy_policy(), int(self.model.num_timesteps), record)
        self.eval_time += time.perf_counter() - t0
        return rep

    def wall_clock(self) -> float:
        """Seconds of training of the whole run: earlier sessions' (from a resumed checkpoint) plus this one's."""
        return self.wall_clock_before + (time.perf_counter() - self._t_start)

    def steps_per_s(self) -> float:
        """Learner steps per second of this session, evaluation time excluded."""
        steps = int(self.model.num_timesteps) - self.start_steps
        t = (time.perf_counter() - self._t_start) - self.eval_time
        return steps / t if t > 0 else 0.0

    def model_card(self) -> dict[str, Any]:
        """The model card of the current policy (schema in :mod:`hod.agents.model_card`)."""
        return build_model_card(self.game, self.cfg, self.obs_size,
                                int(self.model.action_space.n), self.encoder.name, self.rules, "MaskablePPO", {
                                    "steps": int(self.model.num_timesteps),
                                    "seed": self.c["seed"],
                                    "wall_clock_s": round(self.wall_clock(), 1),
                                    "env_steps_per_s": round(self.steps_per_s(), 1),
                                    "resumed_from": self.resumed_from,
                                    "imitation": self.imitation,
                                    "init_actor": self.init_actor,
                                }, self.history, self.pool.describe())

    def save(self, name: str = "latest", with_pool: bool = True) -> Path:
        """Write ``checkpoints/<name>.zip`` (+ card) atomically."""
        path = self.out / "checkpoints" / f"{name}.zip"
        save_checkpoint(self.model, path, self.model_card(), dict(self.pool.past) if with_pool else None)
        return path

    # ---- the run ----------------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        """Train until ``total_steps`` (or Ctrl-C); returns a summary dict.

        Summary keys: ``checkpoint`` (path of the last checkpoint), ``steps``, ``interrupted``,
        ``wall_clock_s``, ``env_steps_per_s``, ``evaluation`` (last rows), ``diagnostics`` (the
        final policy's :meth:`policy_diagnostics`, None when interrupted).
        """
        self.out.mkdir(parents=True, exist_ok=True)
        remove_folder_orphans(self.out / "checkpoints")   # temporary files of a killed run's last writes
        atomic_write_json(self.out / "config.json", {"game": self.game, **self.cfg})
        self._t_start = time.perf_counter()
        remaining = self.c["total_steps"] - int(self.model.num_timesteps)
        interrupted = False
        cb = _SelfPlayCallback(self)
        rollout = int(self.model.n_steps) * int(self.model.n_envs)
        if remaining > 0 and remaining % rollout:
            end = int(self.model.num_timesteps) + -(-remaining // rollout) * rollout
            self.log(f"total_steps={self.c['total_steps']} is reached in whole rollouts of {rollout} steps "
                     f"(n_steps x env slots): the run stops at {end} steps")
        try:
            if self.c["eval_every"] and not self.history:
                self.evaluate()  # the untrained policy: the curve's first point
            if remaining > 0:
                self.model.learn(remaining, callback=cb, progress_bar=self.progress,
                                 reset_num_timesteps=self.resumed_from is None, tb_log_name="ppo")
            if self.c["eval_every"] and (not self.history or self.history[-1]["steps"] != self.model.num_timesteps):
                self.evaluate()
        except KeyboardInterrupt:   # Ctrl-C, or SIGTERM under hod.core.commands.long_command
            interrupted = True
            self.log(f"interrupted ({signal_name()}): saving a checkpoint")
        except WorkerDied as e:   # an evaluation's worker process died (killed, out of memory)
            path = self.save("latest")
            raise CommandStopped(f"training stopped at step {int(self.model.num_timesteps)}: the evaluation's {e}; "
                                 f"checkpoint saved: {path} (resume from it)") from None
        if not interrupted:
            self.policy_diagnostics()   # the final policy's row of policy_diagnostics.json
        path = self.save("latest")
        if not interrupted:
            path = self.save("final")
        last = [r for r in self.history if r["steps"] == self.history[-1]["steps"]] if self.history else []
        summary = {
            "checkpoint": str(path),
            "steps": int(self.model.num_timesteps),
            "interrupted": interrupted,
            "wall_clock_s": round(self.wall_clock(), 1),
            "env_steps_per_s": round(self.steps_per_s(), 1),
            "evaluation": last,
            "diagnostics": self.diagnostics[-1] if self.diagnostics else None,
        }
        self.log(f"{'stopped' if interrupted else 'done'}: {summary['steps']} steps, "
                 f"{summary['wall_clock_s']} s, {summary['env_steps_per_s']} steps/s (evaluation excluded); "
                 f"checkpoint {path}")
        return summary


class PolicyDiagnostics:
    """The policy diagnostics of a training run, shared by the SB3 and the RLlib trainers: state
    dependence and saturation (:func:`hod.training.diagnostics.policy_report`) on
    :data:`PROBE_POSITIONS` decisions of the ``random`` bot at the ``eval_players`` table sizes of
    the flat config ``c``, seeded by ``eval_seed`` (the same positions every time, recorded when
    first needed), under the training tables' rule options ``env_options``.

    Calling it with a :class:`~hod.training.numpy_policy.NumpyPolicy` and the learner step count
    returns the row ``{"steps", "state_dependence", "ranking", "ranking_names", "decisions",
    "saturated", "unit_std"}``; with ``record`` the row is appended to :attr:`rows` and
    ``out/policy_diagnostics.json`` is rewritten (atomically). :meth:`scalars` names the row's
    TensorBoard scalars (``policy/...``).
    """

    def __init__(self, game: str, c: dict, env_options: dict, out: str | Path) -> None:
        self.game, self.c, self.out = game, c, Path(out)
        self.env_options = {k: v for k, v in env_options.items() if k not in ("reward_scheme", "illegal_action")}
        self.probe: Optional[tuple[np.ndarray, np.ndarray]] = None
        self.rows: list[dict] = []

    def __call__(self, policy, steps: int, record: bool = True) -> dict:
        if self.probe is None:
            self.probe = probe_positions(self.game, self.c["eval_players"], PROBE_POSITIONS, seed=self.c["eval_seed"],
                                         env_options=self.env_options)
        rep = {"steps": int(steps), **policy_report(policy, *self.probe, get_game(self.game).action_names)}
        if record:
            self.rows.append(rep)
            atomic_write_json(self.out / "policy_diagnostics.json", self.rows)
        return rep

    @staticmethod
    def scalars(rep: dict) -> dict[str, float]:
        """The TensorBoard scalars of a row: ``policy/state_dependence``, and per hidden layer ``k``
        (from 1) ``policy/saturated_layer<k>`` and ``policy/unit_std_layer<k>``."""
        out = {"policy/state_dependence": float(rep["state_dependence"])}
        for k, (sat, std) in enumerate(zip(rep["saturated"], rep["unit_std"])):
            out[f"policy/saturated_layer{k + 1}"] = float(sat)
            out[f"policy/unit_std_layer{k + 1}"] = float(std)
        return out


def build_model_card(game: str, cfg: dict, obs_size: int, num_actions: int, encoder: str, rules: dict,
                     algorithm: str, training: dict, history: list, pool: dict) -> dict[str, Any]:
    """The model card of a policy trained with configuration ``cfg`` (schema in
    :mod:`hod.agents.model_card`): ``training`` holds the run's figures (``steps``, ``seed``,
    ``wall_clock_s``, ...; ``config`` is added), ``history`` the evaluation rows, ``pool`` the
    opponent pool's description; ``obs_size`` is the actor's input. With ``critic_input =
    "state"`` the card has a ``critic`` entry (:func:`hod.training.critic.card_entry`); without,
    none. Shared by the SB3 and the RLlib trainers."""
    c = config_mod.flatten(cfg)
    critic = card_entry(game, c.get("critic_input", "observation"), obs_size)
    card = {
        "format": MODEL_CARD_FORMAT,
        "card_version": MODEL_CARD_VERSION,
        "game": game,
        "player_counts": sorted(set(c["players"])),   # distinct: players may repeat a size to weight it
        "obs_layout_version": layout_version(game),
        "obs_size": int(obs_size),
        "obs_encoder": encoder,
        "num_actions": int(num_actions),
        "algorithm": algorithm,
        "policy": {"net_arch": list(c["net_arch"]), "activation": c["activation"]},
        "reward_scheme": c["reward_scheme"],
        "rules": rules,
        "training": {**training, "config": cfg},
        "evaluation": history,
        "pool": pool,
        "libraries": library_versions(),
        "created": utc_now(),
    }
    if critic is not None:
        card["critic"] = critic
    return card


def evaluate_and_record(game: str, c: dict, policy, steps: int, out: Path, history: list, log=None) -> list[dict]:
    """Evaluate the actor ``policy`` (a :class:`~hod.training.numpy_policy.NumpyPolicy`, playing its
    argmax) against the ``baselines`` of the flat config ``c`` (:func:`hod.training.evaluate.evaluate_policy`,
    the tournament; baselines with ``baseline_options`` are built with them), append the rows to ``history`` and write ``out/eval.json`` and
    ``out/learning_curve.png``; returns the new rows (one per table size and baseline)."""
    rows = evaluate_policy(game, functools.partial(PolicyBot, policy, True), c["baselines"], c["eval_players"],
                           c["eval_games"], seed=c["eval_seed"], steps=int(steps), workers=c["eval_workers"],
                           baseline_options=c.get("baseline_options"))
    history.extend(rows)
    atomic_write_json(Path(out) / "eval.json", history)
    save_learning_curve(Path(out) / "learning_curve.png", history,
                        f"{game}: win rate vs baselines ({c['reward_scheme']} reward)")
    if log:
        log(format_rows(rows))
    return rows


def _make_callback_class():
    from stable_baselines3.common.callbacks import BaseCallback

    class SelfPlayCallback(BaseCallback):
        """Refreshes the pool's latest copy each rollout, adds snapshots, evaluates, checkpoints,
        and logs the learner's win share in training games (``selfplay/win_share``)."""

        def __init__(self, trainer: Trainer) -> None:
            super().__init__(verbose=0)
            self.t = trainer
            c = trainer.c
            now = int(trainer.model.num_timesteps)

            def nxt(every):
                return (now // every + 1) * every if every else None

            self.next_snapshot = nxt(c["snapshot_every"])
            self.next_eval = nxt(c["eval_every"])
            self.next_ckpt = nxt(c["checkpoint_every"])
            self.next_diag = now   # the first rollout's end logs the (nearly) untrained policy
            self.shares: list[float] = []

        def _on_training_start(self) -> None:
            self.t.pool.update_latest(self.t.numpy_policy())

        def _on_rollout_start(self) -> None:
            self.t.pool.update_latest(self.t.numpy_policy())
            if self.t.pool.refresh_weights():   # pool_weighting = "pfsp": the results of the last rollout
                for lab, w in self.t.pool.member_weights().items():
                    if not lab.startswith("past:"):
                        self.logger.record(f"pfsp/weight_{lab.replace(':', '_')}", w)
                        self.logger.record(f"pfsp/score_{lab.replace(':', '_')}", self.t.pool.learner_score(lab))

        def _on_step(self) -> bool:
            infos = self.locals["infos"]
            for i in np.flatnonzero(self.locals["dones"]):   # the finished games only, not every slot
                if "win_share" in infos[i]:
                    self.shares.append(float(infos[i]["win_share"]))
            n = self.num_timesteps
            if self.next_snapshot is not None and n >= self.next_snapshot:
                self.t.snapshot()
                self.next_snapshot += self.t.c["snapshot_every"]
            if self.next_eval is not None and n >= self.next_eval:
                for r in self.t.evaluate():
                    self.logger.record(f"eval/{r['num_players']}p_vs_{r['baseline']}", r["win_rate"])
                self.next_eval += self.t.c["eval_every"]
            if n >= self.next_ckpt:
                self.t.save("latest")
                self.t.save(f"step_{n:09d}", with_pool=False)
                self.next_ckpt += self.t.c["checkpoint_every"]
            return True

        def _on_rollout_end(self) -> None:
            if self.shares:
                self.logger.record("selfplay/win_share", float(np.mean(self.shares)))
                self.shares = []
            self.logger.record("selfplay/pool_snapshots", len(self.t.pool.past))
            self.logger.record("selfplay/env_steps_per_s", self.t.steps_per_s())
            if self.num_timesteps >= self.next_diag:
                for name, value in PolicyDiagnostics.scalars(self.t.policy_diagnostics()).items():
                    self.logger.record(name, value)
                self.next_diag = self.num_timesteps + DIAGNOSTICS_EVERY

    return SelfPlayCallback


def _SelfPlayCallback(trainer: Trainer):
    return _make_callback_class()(trainer)


# ---- command line -------------------------------------------------------------------------------
def build_parser(game: str, defaults: dict, prog: str = "python -m hod.training.train",
                 description: str = "PPO self-play training (sb3-contrib MaskablePPO) against an opponent pool.",
                 extra: Optional[Callable[[argparse.ArgumentParser], None]] = None,
                 resumed: bool = False) -> argparse.ArgumentParser:
    """The argparse parser: run options plus one flag per config key of ``defaults``; ``extra``
    adds a trainer's own options (the RLlib trainer's, :mod:`hod.training.rllib.train`);
    ``resumed``: ``--resume`` was given, so ``--game`` defaults to ``game`` (the checkpoint's)
    instead of being required."""
    p = argparse.ArgumentParser(prog=prog, description=description, formatter_class=config_mod.HelpFormatter)
    p.add_argument("--game", choices=game_names(), default=game if resumed else None, required=not resumed,
                   help="the game (with --resume: the checkpoint's game by default)")
    p.add_argument("--config", help="TOML file of defaults (default: <game package>/training.toml)")
    p.add_argument("--out", help="run folder (default: runs/<game>_s<seed>; with --resume: the checkpoint's run)")
    p.add_argument("--resume", metavar="CHECKPOINT", help="continue from this checkpoint (.zip)")
    p.add_argument("--force", action="store_true",
                   help="start a new run in a folder that holds one: the old run's checkpoints/ and tb/ are "
                        "deleted first, so that no checkpoint of it stays beside the new run's")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--verbose", type=int, choices=(0, 1, 2), default=0,
                   help="verbosity (SB3: 1 prints rollout tables, 2 debug messages)")
    if extra is not None:
        extra(p)
    config_mod.add_config_arguments(p, defaults)
    return p


def parse_args(argv: Optional[list[str]] = None, **parser_options: Any):
    """Parse the command line; returns ``(game, cfg, args)``. ``parser_options``: ``prog``,
    ``description``, ``extra`` of :func:`build_parser`. A ``--config`` file replaces the game's
    defaults as a whole (:func:`hod.training.config.load_config`); the flags are every key of the
    game's own file and of the file or checkpoint read, so a key that a file or checkpoint predates
    can still be given.

    Raises:
        SystemExit: argparse errors (usage printed, status 2), among them a ``--config`` file that
            cannot be read (``--config PATH: cannot read (...)``) or lacks a key, and a ``--resume``
            checkpoint whose configuration lacks a key (every missing key named).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    pre = argparse.ArgumentParser(prog=parser_options.get("prog", "python -m hod.training.train"), add_help=False)
    pre.add_argument("--game", choices=game_names())
    pre.add_argument("--config")
    pre.add_argument("--resume")
    known, _ = pre.parse_known_args(argv)
    game = known.game or "tapeo"   # --help without --game shows the defaults of Tapeo's config
    try:
        if known.resume and not known.config:
            _, card = read_checkpoint(known.resume, game=known.game, layout_version=None)
            training = card.get("training")
            defaults = training.get("config") if isinstance(training, dict) else None
            game = known.game or card["game"]   # --resume alone: the checkpoint's game
            if not isinstance(defaults, dict) or not all(isinstance(v, dict) for v in defaults.values()):
                raise ConfigError(f"--resume {known.resume}: the checkpoint's configuration is not a table of "
                                  f"sections; legal: a checkpoint written by hod.training.train")
            config_mod.check_complete(defaults, f"--resume {known.resume}: the checkpoint's configuration", game)
        else:
            defaults = config_mod.load_config(game, known.config)   # a file lacking a key is refused
        try:   # every key of the game's own file gets its flag, whatever the file or checkpoint lists
            layout = config_mod.load_config(game) if known.config or known.resume else defaults
        except ConfigError:   # a game without a training.toml of its own (a test's fake game)
            layout = {}
    except (ConfigError, CheckpointError) as e:
        pre.error(str(e))
    # configurations (and checkpoints) from before the engine key: the single-game tables
    defaults.setdefault("env", {}).setdefault("engine", "single")
    defaults["env"].setdefault("obs_encoder", "none")   # and from before the observation encoders
    defaults["env"].setdefault("reward_scale", 1.0)     # and from before the reward scale
    flags = config_mod.merge_keys(layout, defaults)
    parser = build_parser(game, flags, resumed=bool(known.resume and not known.config), **parser_options)
    args = parser.parse_args(argv)
    have = config_mod.flatten(defaults)
    for section, values in flags.items():   # a key the file or checkpoint predates, given as a flag
        for k in values:
            if k not in have and getattr(args, k, None) is not None:
                defaults.setdefault(section, {})[k] = getattr(args, k)
    cfg = config_mod.apply_overrides(defaults, args)
    return args.game, cfg, args


def check_no_run(out: str | Path, legal: str) -> None:
    """Refuse a folder ``out`` that already holds a training run (its ``checkpoints/latest.zip``),
    so that a new run does not overwrite another's checkpoints; ``legal`` says what the command
    allows instead (e.g. ``"use --resume ..., another --out, or --force"``).

    Raises:
        ConfigError: ``<out> already holds a run; <legal>``.
    """
    if (Path(out) / "checkpoints" / "latest.zip").exists():
        raise ConfigError(f"{out} already holds a run; {legal}")


#: What a run folder holds of its run, removed by ``--force`` before a new run starts there.
RUN_FILES = ("checkpoints", "tb", "eval.json", "learning_curve.png", "policy_diagnostics.json", "config.json")


def clear_run(out: str | Path) -> list[str]:
    """Remove the run a folder ``out`` holds (:data:`RUN_FILES`; only when it holds one, its
    ``checkpoints/latest.zip``), so that a new run started there with ``--force`` leaves no file
    of the old one beside its own (an old ``step_*.zip`` would read as the new run's). Other
    files in ``out`` stay. Returns the names removed (empty: no run there).

    Raises:
        OSError: a file that cannot be removed.
    """
    import shutil

    out = Path(out)
    if not (out / "checkpoints" / "latest.zip").exists():
        return []
    removed = []
    for name in RUN_FILES:
        path = out / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.exists() or path.is_symlink():
            path.unlink()
        else:
            continue
        removed.append(name)
    return removed


def run_folder(game: str, cfg: dict, args: argparse.Namespace, kind: str = "") -> Path:
    """The run folder of a command line (``--out``; with ``--resume`` the checkpoint's run; else
    ``runs/<game><kind>_s<seed>``), after checking every configuration key and that the folder
    can be written.

    Raises:
        ConfigError: a key outside its legal range, a folder that cannot be written, or a folder
            that already holds a run while neither ``--resume`` nor ``--force`` is given.
    """
    config_mod.validate_config(game, cfg)   # first: the folder's name reads the seed
    if args.out:
        out = Path(args.out)
    elif args.resume:
        out = Path(args.resume).resolve().parent.parent
    else:
        out = Path("runs") / f"{game}{kind}_s{config_mod.flatten(cfg)['seed']}"
    config_mod.check_out_dir(out)
    if not args.resume and not args.force:
        check_no_run(out, f"use --resume {out / 'checkpoints' / 'latest.zip'}, another --out, or --force")
    return out


def main(argv: Optional[list[str]] = None) -> int:
    """Entry point of ``python -m hod.training.train``; returns the exit status: 0; 130 after Ctrl-C
    (SIGINT) and 143 after SIGTERM, both once ``latest.zip`` is saved (:mod:`hod.core.commands`);
    2 with a one-line ``error: ...`` on stderr for a configuration key outside its legal range, an
    ``--out`` that cannot be created or written (:func:`hod.training.config.check_out_dir`) or an unusable checkpoint (no traceback, nothing written).

    Raises:
        SystemExit: argparse errors (status 2, usage printed); status 74 with one ``error: cannot
            write <path>: <reason>`` line when a file of the run cannot be written (disk full,
            file-size limit: :func:`hod.core.commands.long_command`).
    """
    game, cfg, args = parse_args(argv)
    # SIGTERM as Ctrl-C, SIGINT even when inherited ignored, a write refused: one line, status 74;
    # from before the checks (checking bot options imports the engines: seconds on a slow machine)
    with long_command():
        try:   # every key and the run folder, before any work
            out = run_folder(game, cfg, args)
        except ConfigError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        if args.force and not args.resume:
            gone = clear_run(out)
            if gone:
                print(f"--force: removed the run {out} held ({', '.join(gone)})", file=sys.stderr)
        try:
            trainer = Trainer(game, cfg, out, resume=args.resume, progress=not args.no_progress,
                              verbose=args.verbose)
        except (ConfigError, CheckpointError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        except OSError as e:   # the run folder could not be made after all (e.g. it changed meanwhile)
            print(f"error: --out {out}: cannot create the run folder: {e}", file=sys.stderr)
            return 2
        summary = trainer.run()
    print(json.dumps({k: v for k, v in summary.items() if k != "evaluation"}, indent=2))
    return interrupted_status() if summary["interrupted"] else 0


if __name__ == "__main__":
    sys.exit(main())
