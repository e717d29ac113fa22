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


# ---- bad numbers and sizes: status 2 and one error line naming the legal values -----------------------
#: (command module, argv, fragment of the one error line). Every case ends in argument parsing or
#: the checks before any work (each of these ran, crashed with a traceback or exited 0 before).
BAD_ARGUMENTS = [
    ("hod.benchmarks.tournament", ["--game", "tapeo", "--lineup", "random", "greedy", "--games", "10000000000000"],
     "argument --games: invalid value '10000000000000'; legal values: an integer in 1..1000000"),
    ("hod.benchmarks.tournament", ["--game", "tapeo", "--lineup", "random", "greedy", "--seed", str(2**64)],
     f"argument --seed: invalid value '{2**64}'; legal values: an integer in 0..2**64-1"),
    ("hod.benchmarks.tournament", ["--game", "tapeo", "--lineup"] + ["random"] * 7 + ["--games", "2"],
     "--lineup names 7 bots: tapeo is played by 2 to 6 players, one bot per seat; legal numbers of bots: "
     "[2, 3, 4, 5, 6]"),
    ("hod.benchmarks.tournament", ["--game", "robada", "--lineup"] + ["random"] * 5 + ["--games", "5"],
     "--lineup names 5 bots: robada is played by 2 to 4 players, one bot per seat; legal numbers of bots: [2, 3, 4]"),
    ("hod.benchmarks.ladder", ["--game", "tapeo", "--games", "10000000000000"],
     "argument --games: invalid value '10000000000000'; legal values: an integer in 1..1000000"),
    # 13 bots at 2 players (ppo_v1 to ppo_v6 among them): 13 * 12 / 2 = 78 tables; 78 x 100000
    # games > 1,000,000, and 1,000,000 // 78 = 12820
    ("hod.benchmarks.ladder", ["--game", "tapeo", "--games", "100000"],
     "error: games=100000 at each of 78 tables is 7,800,000 games, above the most one ladder keeps, 1,000,000; "
     "legal values: games <= 12820"),
    ("hod.benchmarks.ladder", ["--game", "tapeo", "--players", "3", "--tables", "100000000000"],
     "argument --tables: invalid value '100000000000'; legal values: an integer in 1..10000"),
    ("hod.benchmarks.ladder", ["--game", "tapeo", "--seed", "-1"],
     "argument --seed: invalid value '-1'; legal values: an integer in 0..2**64-1"),
    ("hod.benchmarks.env_speed", ["--players", "7"], "--players 7: legal values for tapeo: [2, 3, 4, 5, 6]"),
    ("hod.benchmarks.env_speed", ["--steps", "0"], "argument --steps: invalid value '0'; legal values: an integer >= 1"),
    ("hod.benchmarks.env_speed", ["--seed", "-1"], "argument --seed: invalid value '-1'; legal values: an integer in "
                                                   "0..2**64-1"),
    ("hod.benchmarks.ranking_search", ["--games", "0"],
     "argument --games: invalid value '0'; legal values: an integer in 1..16777216"),
    ("hod.benchmarks.ranking_search", ["--margin", "nan"],
     "argument --margin: invalid value 'nan'; legal values: a finite number in [0, inf)"),
    ("hod.benchmarks.ranking_search", ["--start"] + ["tortilla"] * 10,
     "every kind exactly once; legal values: an order of ['tortilla', 'croqueta', "),
    ("hod.benchmarks.ranking_search", ["--start"] + list("abcdefghij"), "--start: unknown tapa 'a'; legal values: "),
    ("hod.benchmarks.robada_search_edge", ["--deals", "-1"],
     "argument --deals: invalid value '-1'; legal values: an integer >= 1"),
    ("hod.benchmarks.robada_search_edge", ["--predictability", "-1"],
     "argument --predictability: invalid value '-1'; legal values: an integer >= 0"),
    # an empty list ran nothing and exited 0
    ("hod.benchmarks.robada_search_edge", ["--variants"], "argument --variants: expected at least one argument"),
    ("hod.benchmarks.robada_search_speed", ["--positions", "0"],
     "argument --positions: invalid value '0'; legal values: an integer >= 1"),
    ("hod.benchmarks.throughput", ["--seconds", "nan"],
     "argument --seconds: invalid value 'nan'; legal values: a finite number in (0, inf)"),
    ("hod.benchmarks.throughput", ["--ppo-steps", "0"],
     "argument --ppo-steps: invalid value '0'; legal values: an integer >= 1"),
    ("hod.apps.demo", ["--steps", "0"], "argument --steps: invalid value '0'; legal values: an integer >= 1"),
    ("hod.apps.demo", ["--final-games", "0"],
     "argument --final-games: invalid value '0'; legal values: an integer in 1..1000000"),
    ("hod.apps.demo", ["--seed", "-1"], "argument --seed: invalid value '-1'; legal values: an integer in 0..2147483647"),
    ("hod.training.train", ["--game", "tapeo", "--verbose", "-3"],
     "argument --verbose: invalid choice: -3 (choose from 0, 1, 2)"),
    ("hod.training.evaluate", ["expert", "--game", "tapeo", "--games", "10000000000000"],
     "error: --games=10000000000000: input should be less than or equal to 1000000; legal: an integer in 1..1000000"),
    # torch's TorchScript exporter writes opsets up to 20 (a traceback from torch before)
    ("hod.training.export", ["x.zip", "--opset", "1000"],
     "argument --opset: invalid value '1000'; legal values: an integer in 14..20"),
    # a shipped opponent's path is bound by its registry entry (TypeError traceback before)
    ("hod.benchmarks.tournament", ["--game", "tapeo", "--lineup", "ppo", "greedy", "--games", "2",
                                   "--bot-options", '{"ppo": {"path": "/etc/passwd"}}'],
     "option(s) ['path'] of tapeo bot 'ppo' are fixed by its registry entry"),
]


@pytest.mark.parametrize("module, argv, fragment", BAD_ARGUMENTS, ids=lambda x: " ".join(x) if isinstance(x, list) else None)
def test_bad_arguments_exit_2_with_one_error_line(module, argv, fragment, capsys, monkeypatch, tmp_path):
    import importlib

    monkeypatch.chdir(tmp_path)   # a command that wrongly started would write here, not in the checkout
    main = importlib.import_module(module).main
    try:
        code = main(argv)
    except SystemExit as e:
        code = e.code
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if "error:" in line]
    assert code == 2 and "Traceback" not in err
    assert len(errors) == 1 and fragment in errors[0], err


def test_a_lineup_of_the_wrong_size_is_refused_for_its_size():
    from hod.core.errors import ConfigError
    from hod.evaluation.tournament import run_tournament

    # 7 seats and 2 games: the size is what is wrong, not that 2 is not a multiple of 7
    with pytest.raises(ConfigError, match=r"^a lineup of 7 bots: 'tapeo' is played by 2 to 6 players, one bot per "
                                          r"seat; legal values: \[2, 3, 4, 5, 6\]$"):
        run_tournament("tapeo", ["random"] * 7, num_games=2)


def test_a_game_count_above_the_most_is_refused():
    from hod.core.errors import ConfigError
    from hod.evaluation.schedule import MAX_GAMES, check_num_games

    assert check_num_games(MAX_GAMES, 4) == MAX_GAMES
    # 3 seats: 1,000,000 is not a multiple of 3; the largest legal count is 999,999
    with pytest.raises(ConfigError, match=r"num_games=1000003 is above .* 1,000,000 .*; legal values: multiples of 3 "
                                          r"up to 999999$"):
        check_num_games(MAX_GAMES + 3, 3)


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux /proc")
def test_tournament_out_that_cannot_be_written_exits_2_before_playing(capsys):
    """os.access says yes to root in /proc: every game was played, then the write failed (status 74)."""
    from hod.benchmarks.tournament import main

    assert main(["--no-progress", "--game", "tapeo", "--lineup", "expert", "greedy", "--games", "2",
                 "--out", "/proc/x"]) == 2
    out, err = capsys.readouterr()
    assert "--out /proc/x: cannot write in /proc" in err and err.count("\n") == 1
    assert out == ""                                   # no game report: nothing was played


@pytest.mark.parametrize("game, players", [("kuhn", 2), ("tapeo", 4), ("robada", 4)])
def test_env_speed_defaults_to_a_table_size_the_game_has(game, players, monkeypatch):
    # the default was 4 for every game, which Kuhn poker (2 players only) refused
    from hod.benchmarks import env_speed

    seen = []
    monkeypatch.setattr(env_speed, "run", lambda g, n, *a, **k: seen.append((g, n)) or [])
    monkeypatch.setattr(env_speed, "format_table", lambda rows: "")
    env_speed.main(["--game", game])
    assert seen == [(game, players)]
