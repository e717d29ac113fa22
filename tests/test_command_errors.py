"""Commands end bad input with status 2 and one line naming what is legal, never a traceback,
and refuse at the start what would be lost or misplaced at the end."""
from __future__ import annotations

import os

import pytest


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux /proc")
def test_train_out_that_cannot_be_created_exits_2(capsys):
    pytest.importorskip("sb3_contrib")
    from hod.training.train import main

    assert main(["--game", "tapeo", "--out", "/proc/foo"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --out /proc/foo: cannot create a folder in /proc") and err.count("\n") == 1


def test_check_out_dir_leaves_nothing(tmp_path):
    from hod.training.config import check_out_dir

    assert check_out_dir(tmp_path / "a" / "b") == tmp_path / "a" / "b"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv, needle", [
    (["--bot", "bogus"], "no bot 'bogus' for 'tapeo'; registered: ["),
    (["--seed", "-5"], "invalid value '-5'; legal values: a non-negative int"),
])
def test_show_game_bad_options_exit_2(argv, needle, capsys):
    from hod.apps.show_game import main

    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err and "python -m hod.apps.show_game" in err


def test_play_record_that_is_a_folder_is_refused_at_start(tmp_path, capsys):
    from hod.apps import play_robada

    with pytest.raises(SystemExit) as e:
        play_robada.main(["--record", str(tmp_path), "--opponents", "random"])
    assert e.value.code == 2
    assert f"--record {tmp_path}: is a folder; legal values: the path of a file" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["../../x", "a/b", "a\\b", "..", ".", ""])
def test_export_name_outside_out_is_refused(name, tmp_path, capsys):
    from hod.training.export import main

    assert main([str(tmp_path / "nothing.zip"), "--out", str(tmp_path), "--name", name]) == 2
    assert "legal values: a plain file stem" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_export_says_what_it_expected_and_found(tmp_path, capsys):
    from hod.agents.onnx_policy import OPPONENTS_DIR
    from hod.training.export import main

    expected = "expected a .zip training checkpoint written by python -m hod.training.train"
    assert main([str(OPPONENTS_DIR / "tapeo_ppo.onnx")]) == 2
    err = capsys.readouterr().err
    assert "found an ONNX export" in err and expected in err
    assert main([str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path}: is a folder; {expected}" in err
    (tmp_path / "notes.txt").write_text("hello")
    assert main([str(tmp_path / "notes.txt")]) == 2
    assert "found a file that is not a zip archive; " + expected in capsys.readouterr().err
