"""Record ``tests/data/learner_env_golden.json`` from the per-game learner-env stacks. It imports
them, so it runs only at commit df07a59, the last that holds them (their code as of 9b45095);
after their removal it documents how the recordings were made:

    git checkout df07a59 && .venv/bin/python tests/data/record_learner_env_golden.py

(It wrote the file with ``indent=1``; the committed file holds the same JSON value, one line per
recording.)
"""
from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import _learner_env_digest as D  # noqa: E402
import test_training_learner_env as T  # noqa: E402

from hod.agents.encoders import get_encoder  # noqa: E402
from hod.training import config as C  # noqa: E402
from hod.training import train as train_mod  # noqa: E402
from hod.training.batched_env import make_batched_vec_env  # noqa: E402
from hod.training.encoded_env import EncodedVecEnv  # noqa: E402
from hod.training.reward_scale import ScaledRewardVecEnv  # noqa: E402
from hod.training.robada_vector import RandomPolicy as RobadaRandom, RobadaVecEnv, RobadaVectorEnv  # noqa: E402
from hod.training.tapeo_vector import RandomPolicy as TapeoRandom, TapeoVecEnv, TapeoVectorEnv  # noqa: E402
from hod.training.train import Trainer  # noqa: E402

OLD = {"tapeo": (TapeoVecEnv, TapeoRandom, TapeoVectorEnv), "robada": (RobadaVecEnv, RobadaRandom, RobadaVectorEnv)}


def _old_opponents(game, seed):
    rnd = OLD[game][1]
    return [rnd([seed, 11]), T.ObsPolicy(), rnd(seed + 5)]


def _old_stack(game, tables, players, learners, opponents, env_options, seed, encoder, reward_scale):
    """The trainer's ``engine = "batched"`` env before the learner env."""
    env = make_batched_vec_env(game, tables, players, learners, opponents, env_options, seed=seed)
    if reward_scale != 1.0:
        env = ScaledRewardVecEnv(env, reward_scale)
    if not encoder.identity:
        env = EncodedVecEnv(env, encoder)
    return env


def main() -> None:
    out: dict = {"source": "the per-game stacks of commit 9b45095 (TapeoVecEnv, RobadaVecEnv, their Gymnasium views, "
                           "PoolOpponentsVecEnv + ScaledRewardVecEnv + EncodedVecEnv)", "vec": {}, "gym": {}, "ppo": {}}
    for case in T.CASES:
        game, players, learners, seed = case
        old = OLD[game][0](opponents=_old_opponents(game, seed), **T.case_kwargs(*case))
        out["vec"][T.case_id(case)] = D.vec_run(old, 200, seed)
    for name, game, kw, steps in T.ONE_POLICY:
        old = OLD[game][0](opponents=T.ObsPolicy(), **kw)
        out["vec"][name] = D.vec_run(old, steps, kw["seed"])
    for game, opts, encoder, scale in T.POOL_CASES:
        enc = get_encoder(encoder, game)
        old = _old_stack(game, 8, [2, 4], 1, ["random", "greedy"], dict(opts), 4, enc, scale)
        out["vec"][f"pool-{game}"] = D.vec_run(old, 80 if encoder == "none" else 40, 4)
    for game, players, learners in T.GYM_CASES:
        old = OLD[game][2](opponents=_old_opponents(game, 2), **T.gym_kwargs(players, learners))
        out["gym"][game] = D.gym_run(old, 120, 5)
    for game in ("tapeo", "robada"):
        with tempfile.TemporaryDirectory() as tmp:
            train_mod.make_learner_vec_env = _old_stack
            t = Trainer(game, T.ppo_config(game), Path(tmp) / "old", progress=False, verbose=0, log=None)
            t.run()
            out["ppo"][game] = D.state_dict_digests(t.model.policy.state_dict())
    (HERE / "learner_env_golden.json").write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
