"""Usage lines name the command as typed; the tournament report counts in words that agree."""
from __future__ import annotations

import importlib

import pytest


@pytest.mark.parametrize("module", ["hod.apps.show_game", "hod.benchmarks.throughput", "hod.benchmarks.env_speed",
                                    "hod.training.train", "hod.training.best_response"])
def test_usage_line_is_python_dash_m(module, capsys):
    mod = importlib.import_module(module)
    with pytest.raises(SystemExit):
        mod.main(["--no-such-option-xyz"] if module != "hod.training.train" else ["--game", "nope"])
    err = capsys.readouterr().err
    assert f"usage: python -m {module}" in err and ".py" not in err.splitlines()[0]


def test_report_says_1_deal():
    from hod.evaluation.report import scheme_line
    from hod.evaluation.tournament import run_tournament

    r = run_tournament("tapeo", ["random", "random"], num_games=2, seed=0)
    assert scheme_line(r) == "2 games = 1 deal x 2 seat rotations (duplicate deals), seed 0."
    r = run_tournament("tapeo", ["random", "random"], num_games=2, seed=0, duplicate=False)
    assert scheme_line(r) == "2 games = 2 deals, one game each, seat rotation advancing every game, seed 0."
