"""Every refusal of the training code, the tournament library and its command line names what is legal."""
from __future__ import annotations

import numpy as np
import pytest

from hod import agents
from hod.benchmarks import tournament as tournament_cli
from hod.core.errors import ConfigError
from hod.evaluation.tournament import run_tournament
from hod.training.learner_env import LearnerVecEnv, check_reward_scale
from hod.training.numpy_policy import NumpyPolicy
from hod.training.pool import OpponentPool
from hod.training.vec_env import TableVecEnv


def _policy() -> NumpyPolicy:
    rng = np.random.default_rng(0)
    return NumpyPolicy([(rng.random((4, 3), dtype=np.float32), np.zeros(4, np.float32))],
                       (rng.random((2, 4), dtype=np.float32), np.zeros(2, np.float32)))


CASES = {
    "empty mask": lambda: _policy().act(np.zeros(3, np.float32), np.zeros(2, np.int8)),
    "empty mask batch": lambda: _policy().act_batch(np.zeros((1, 3), np.float32), np.zeros((1, 2), np.int8),
                                                    np.random.default_rng(0)),
    "not an archive": lambda: NumpyPolicy.from_bytes(b"junk"),
    "layers do not chain": lambda: NumpyPolicy([(np.zeros((4, 3)), np.zeros(4))], (np.zeros((2, 5)), np.zeros(2))),
    "reward scale": lambda: check_reward_scale(-1.0),
    "learner env reward scale": lambda: LearnerVecEnv("tapeo", 2, 2, reward_scale=float("nan")),
    "no tables": lambda: TableVecEnv([]),
    "no opponent policies": lambda: LearnerVecEnv("tapeo", 2, 2, 1, [], reward_scheme="win_loss", seed=0),
    "pool size": lambda: OpponentPool("tapeo", heuristics=["random"], max_size=-1),
    "pool probabilities": lambda: OpponentPool("tapeo", heuristics=["random"], p_latest=-1),
    "lineup not a list": lambda: run_tournament("tapeo", "expert", 2),
    "lineup of one": lambda: run_tournament("tapeo", ["expert"], 2),
    "factory not callable": lambda: run_tournament("tapeo", [("mine", 3), "random"], 2),
    "bot of another game": lambda: run_tournament("tapeo", [agents.make("robada", "random"), "random"], 2),
    "reserved env option": lambda: run_tournament("tapeo", ["random", "random"], 2, env_kwargs={"num_players": 2}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_refusal_names_what_is_legal(case):
    with pytest.raises((ValueError, ConfigError)) as e:
        CASES[case]()
    assert "legal" in str(e.value), str(e.value)


@pytest.mark.parametrize("argv, legal", [
    (["--game", "tapeo", "--lineup", "random", "random", "--games", "2", "--env-kwargs", "{x"],
     'legal: a JSON object such as \'{"reward_scheme": "points"}\''),
    (["--game", "tapeo", "--lineup", "random", "random", "--games", "2", "--env-kwargs", "[1]"], "legal: e.g."),
])
def test_tournament_cli_refusals_name_what_is_legal(argv, legal, capsys):
    assert tournament_cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and legal in err


def test_tournament_cli_without_lineup_lists_the_bots(capsys):
    with pytest.raises(SystemExit) as e:
        tournament_cli.main(["--game", "tapeo"])
    assert e.value.code == 2
    assert "--lineup is required: one bot per seat, from ['expert', 'greedy'" in capsys.readouterr().err
