"""Averaging checkpoints' policy weights (hod.training.average_checkpoints, SWA-style)."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest
import torch

from hod.agents.model_card import CheckpointError
from hod.training.average_checkpoints import average_checkpoints, main
from hod.training.checkpoint import load_checkpoint, save_checkpoint
from hod.training.config import smoke_config
from hod.training.train import Trainer


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A tiny Tapeo run (2 players, 256 steps, checkpoints every 128); returns its checkpoints folder."""
    out = tmp_path_factory.mktemp("avg_run")
    Trainer("tapeo", smoke_config("tapeo", players=[2]), out, progress=False, log=None).run()
    return out / "checkpoints"


def _constant(src, dst, value: float, steps: int):
    """Copy checkpoint ``src`` to ``dst`` with every policy tensor set to ``value`` and ``steps`` steps."""
    model, card, pool = load_checkpoint(src)
    with torch.no_grad():
        for t in model.policy.state_dict().values():
            t.fill_(value)
    model.num_timesteps = steps
    card["training"]["steps"] = steps
    return save_checkpoint(model, dst, card, pool)


def _weights(path):
    model, _, _ = load_checkpoint(path)
    return {k: v.numpy().copy() for k, v in model.policy.state_dict().items()}


def test_the_mean_of_constant_weights_and_the_base(run, tmp_path):
    src = run / "final.zip"
    a = _constant(src, tmp_path / "a.zip", 1.0, 100)
    b = _constant(src, tmp_path / "b.zip", 2.0, 300)
    c = _constant(src, tmp_path / "c.zip", 6.0, 200)
    out = average_checkpoints([a, b, c], tmp_path / "avg.zip", game="tapeo")
    w = _weights(out)
    # (1 + 2 + 6) / 3 = 3, in every tensor of actor and critic
    assert w and all(np.all(v == 3.0) and v.dtype == np.float32 for v in w.values())
    model, card, _ = load_checkpoint(out)
    assert model.num_timesteps == 300                       # the base: b, the most steps
    assert card["training"]["steps"] == 300
    assert card["training"]["averaged_from"] == [{"path": str(a), "steps": 100}, {"path": str(b), "steps": 300},
                                                 {"path": str(c), "steps": 200}]
    assert card["evaluation"] == []
    assert json.loads(out.with_suffix(".json").read_text()) == card   # the side card, written with it
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_two_real_checkpoints_average_to_numpys_mean(run, tmp_path):
    first, last = run / "step_000000128.zip", run / "final.zip"
    w1, w2 = _weights(first), _weights(last)
    assert any(not np.array_equal(w1[k], w2[k]) for k in w1)          # training moved them
    out = average_checkpoints([first, last], tmp_path / "avg.zip")
    w = _weights(out)
    for k in w1:
        want = ((w1[k].astype(np.float64) + w2[k].astype(np.float64)) / 2).astype(np.float32)
        assert np.array_equal(w[k], want), k
    # the optimizer state and step count are the base's (the later checkpoint)
    m_out, _, _ = load_checkpoint(out)
    m_last, _, _ = load_checkpoint(last)
    assert m_out.num_timesteps == m_last.num_timesteps
    s_out, s_last = m_out.policy.optimizer.state_dict(), m_last.policy.optimizer.state_dict()
    assert all(torch.equal(s_out["state"][i]["exp_avg"], s_last["state"][i]["exp_avg"]) for i in s_last["state"])


def test_bad_inputs_are_refused(run, tmp_path):
    a, b = run / "step_000000128.zip", run / "final.zip"
    with pytest.raises(ValueError, match="two or more"):
        average_checkpoints([a], tmp_path / "x.zip")
    with pytest.raises(ValueError, match="given twice"):
        average_checkpoints([a, a], tmp_path / "x.zip")
    with pytest.raises(ValueError, match="is one of the inputs"):
        average_checkpoints([a, b], b)
    with pytest.raises(ValueError, match="ending .zip"):
        average_checkpoints([a, b], tmp_path / "x.onnx")
    with pytest.raises(CheckpointError, match="not 'robada'"):
        average_checkpoints([a, b], tmp_path / "x.zip", game="robada")
    assert not (tmp_path / "x.zip").exists()


def test_another_network_is_refused_and_the_cli_says_so(run, tmp_path, capsys):
    other = tmp_path / "other"
    Trainer("tapeo", smoke_config("tapeo", players=[2], net_arch=[16], total_steps=128), other,
            progress=False, log=None).run()
    args = [str(run / "final.zip"), str(other / "checkpoints" / "final.zip"), "--out", str(tmp_path / "x.zip")]
    with pytest.raises(CheckpointError, match="policy = .*16"):
        average_checkpoints(args[:2], tmp_path / "x.zip")
    assert main(args) == 2
    assert capsys.readouterr().err.startswith("error: ")
    assert not (tmp_path / "x.zip").exists()


def test_an_unknown_game_is_refused_naming_the_legal_games(run, tmp_path, capsys):
    """--game nosuch: the installed games named (kuhn, robada, tapeo), before any input is read;
    before the check it said "policy was trained for game 'tapeo', not 'nosuch'"."""
    from hod.core.errors import ConfigError

    a, b = run / "final.zip", run / "latest.zip"
    from hod.core.games import game_names

    assert {"kuhn", "robada", "tapeo"} <= set(game_names())   # and any game another test declares
    message = f"unknown game 'nosuch'; legal values: {game_names()}"
    with pytest.raises(ConfigError, match=f"^{re.escape(message)}$"):
        average_checkpoints([a, b], tmp_path / "avg.zip", game="nosuch")
    with pytest.raises(ConfigError, match=f"^{re.escape(message)}$"):   # checked before the missing inputs
        average_checkpoints([tmp_path / "none1.zip", tmp_path / "none2.zip"], tmp_path / "avg.zip", game="nosuch")
    assert main([str(a), str(b), "--out", str(tmp_path / "avg.zip"), "--game", "nosuch"]) == 2
    assert capsys.readouterr().err == f"error: {message}\n"
    assert list(tmp_path.iterdir()) == []
