"""Shared pieces of the terminal play commands (apps/play.py): opponent choice, option
checks and the validating prompt."""
from __future__ import annotations

import io

import pytest

from hod.apps.play import (EXIT_INTERRUPTED, Choice, Quit, Terminal, bot_seed, build_parser, parse_opponents,
                             parse_table, run, strongest)
from hod.core.errors import ConfigError


def test_strongest_follows_ppo_expert_greedy_random():
    assert strongest(["random"]) == "random"
    assert strongest(["greedy", "random"]) == "greedy"
    assert strongest(["expert", "greedy", "random"]) == "expert"
    assert strongest(["expert", "greedy", "ppo", "random"]) == "ppo"
    # a shipped variant ranks with ppo, below plain ppo, above expert
    assert strongest(["expert", "ppo_4p", "random"]) == "ppo_4p"
    assert strongest(["ppo_4p", "ppo"]) == "ppo"
    # unknown names rank last
    assert strongest(["mcts_debug", "random"]) == "random"
    with pytest.raises(ConfigError):
        strongest([])


def test_parse_opponents_one_name_or_one_per_seat():
    assert parse_opponents("tapeo", ["random"], 3) == ["random"] * 3
    assert parse_opponents("tapeo", ["random", "random"], 2) == ["random", "random"]
    assert parse_opponents("tapeo", ["random,random,random"], 3) == ["random"] * 3
    with pytest.raises(ConfigError, match=r"1 name \(every opponent seat\) or 3"):
        parse_opponents("tapeo", ["random", "random"], 3)
    with pytest.raises(ConfigError, match="registered bots"):
        parse_opponents("robada", ["no_such_bot"], 1)


def test_bad_options_exit_2_naming_legal_values(capsys):
    ap = build_parser("tapeo", "play", "", 2, 6, 4)
    with pytest.raises(SystemExit) as e:
        parse_table(ap, "tapeo", ["--players", "4", "--seat", "4"])
    assert e.value.code == 2
    assert "legal values: [0, 1, 2, 3]" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        parse_table(ap, "tapeo", ["--players", "7"])
    assert e.value.code == 2
    with pytest.raises(SystemExit) as e:
        parse_table(ap, "tapeo", ["--opponents", "nobody"])
    assert e.value.code == 2
    assert "registered bots" in capsys.readouterr().err


def test_table_seats_and_seeds():
    ap = build_parser("tapeo", "play", "", 2, 6, 4)
    t = parse_table(ap, "tapeo", ["--players", "3", "--seat", "1", "--seed", "5", "--no-record",
                                  "--opponents", "random"])
    # opponents sit at the seats after the person's, to the left: 2, then 0
    assert t.opponents == {2: "random", 0: "random"}
    assert t.record is None and t.seed == 5
    assert bot_seed(5, 2) == bot_seed(5, 2) != bot_seed(5, 0)


CHOICES = [Choice(3, "ham3", "ham (3 slices)", ("ham 3",)), Choice(9, "churro", "churro")]


def _term(text: str) -> tuple[Terminal, io.StringIO]:
    out = io.StringIO()
    return Terminal(io.StringIO(text), out), out


def test_choose_reprompts_until_legal():
    term, out = _term("0\n3\nfoo\n\n?\n -1\nHAM 3\n")
    c = term.choose("Pick", CHOICES)
    assert c.action == 3
    text = out.getvalue()
    assert text.count("Pick [1-2") == 7  # six refused lines (one of them "?") and the accepted one
    assert "0 is not a choice number; choose 1 to 2." in text
    assert "'foo' is not a legal choice now." in text
    assert "Legal choices: 1=ham3, 2=churro" in text


def test_non_ascii_digits_and_double_signs_are_refused_not_crashed():
    # "+-1" is no integer, "\u00b2" (superscript two) and "\u0661" (Arabic-Indic one) are not
    # ASCII digits: each is refused with the normal message, then "+2" (choice 2) is accepted
    term, out = _term("+-1\n\u00b2\n\u0661\n+2\n")
    assert term.choose("Pick", CHOICES).action == 9
    text = out.getvalue()
    assert text.count("Pick [1-2") == 4
    for bad in ("+-1", "\u00b2", "\u0661"):
        assert f"{bad!r} is not a legal choice now. Legal choices: 1=ham3, 2=churro" in text


def test_negative_seed_is_a_usage_error(capsys):
    ap = build_parser("tapeo", "play", "", 2, 6, 4)
    for bad in ("-1", "1.5", "x"):
        with pytest.raises(SystemExit) as e:
            parse_table(ap, "tapeo", ["--seed", bad, "--no-record"])
        assert e.value.code == 2
        err = capsys.readouterr().err
        assert f"argument --seed: invalid value {bad!r}; legal values: a non-negative int (0, 1, 2, ...)" in err
    assert parse_table(ap, "tapeo", ["--seed", "0", "--no-record", "--opponents", "random"]).seed == 0


def test_choose_by_number_and_name():
    assert _term("2\n")[0].choose("Pick", CHOICES).action == 9
    assert _term("Churro\n")[0].choose("Pick", CHOICES).action == 9


def test_eof_and_quit_raise_quit():
    with pytest.raises(Quit):
        _term("")[0].choose("Pick", CHOICES)
    with pytest.raises(Quit):
        _term("7\nquit\n")[0].choose("Pick", CHOICES)


class _Session:
    def __init__(self, exc):
        self.exc, self.why = exc, None

    def play(self):
        raise self.exc

    def abandoned(self, why):
        self.why = why


def test_run_exit_codes():
    term, _ = _term("")
    s = _Session(Quit("end of input"))
    assert run(s, term) == 0 and s.why.startswith("End of input")
    s = _Session(KeyboardInterrupt())
    assert run(s, term) == EXIT_INTERRUPTED == 130 and "Ctrl-C" in s.why


def test_default_is_the_strongest_registered():
    from hod.agents.onnx_policy import OPPONENTS_DIR

    # agents/opponents/tapeo_ppo.onnx is shipped: Tapeo's default is the trained policy "ppo"
    assert (OPPONENTS_DIR / "tapeo_ppo.onnx").is_file()
    assert parse_opponents("tapeo", None, 2) == ["ppo", "ppo"]
    # no Robada export is shipped (yet): the strongest of expert > greedy > random is "expert"
    robada = "ppo" if (OPPONENTS_DIR / "robada_ppo.onnx").is_file() else "expert"
    assert parse_opponents("robada", None, 3) == [robada] * 3


def test_random_input_never_crashes():
    """Lines drawn at random from numbers, names and garbage: every game still ends normally."""
    import random

    import hod.apps.play_robada as rp
    import hod.apps.play_tapeo as tp

    words = ["1", "2", "3", "5", "8", "0", "-3", "x", "", "?", "tortilla", "churro", "ham3", "freeloader",
             "confirm", "tap", "start Sota", "drop 4", "take pile +1", "c", "99999999999999999999", "1.5", " 2 ",
             "+-1", "\u00b2", "\u0661"]   # "+-1", superscript two, Arabic-Indic one: not choice numbers
    for trial in range(4):
        r = random.Random(trial)
        text = "\n".join(r.choice(words) for _ in range(3000)) + "\n"
        for mod, top in ((tp, 6), (rp, 4)):
            n = r.randint(2, top)
            out = io.StringIO()
            argv = ["--players", str(n), "--seat", str(r.randrange(n)), "--seed", str(trial), "--opponents", "random",
                    "--no-record"]
            assert mod.main(argv, io.StringIO(text), out) == 0
            assert "=== Game over ===" in out.getvalue()


def test_record_path_in_a_missing_folder_is_a_usage_error(tmp_path, capsys):
    import pytest as _pytest

    from hod.apps.play import build_parser, parse_table

    ap = build_parser("tapeo", "python -m hod.apps.play_tapeo", "Tapeo", 2, 6, 4)
    with _pytest.raises(SystemExit) as e:
        parse_table(ap, "tapeo", ["--players", "2", "--opponents", "random", "--record",
                                  str(tmp_path / "missing" / "r.json")])
    assert e.value.code == 2
    assert "does not exist or is not writable" in capsys.readouterr().err


def test_record_write_failure_is_reported_not_raised(tmp_path):
    from hod.apps.play import record_line

    def failing_save():
        raise PermissionError(13, "Permission denied")

    line = record_line(str(tmp_path / "r.json"), "tapeo", failing_save, "load_record")
    assert line.startswith("Could not write the game record to ")


# ---------------------------------------------------------------- a core install (no onnxruntime)

@pytest.fixture
def no_onnxruntime(monkeypatch):
    """Simulate a core install: ``import onnxruntime`` raises ImportError."""
    import sys
    monkeypatch.setitem(sys.modules, "onnxruntime", None)


def test_play_tapeo_falls_back_to_expert_without_onnxruntime(no_onnxruntime):
    from hod.apps import play_tapeo
    out = io.StringIO()
    code = play_tapeo.main(["--players", "2", "--seed", "5", "--no-record"], io.StringIO("1\n" * 40), out)
    text = out.getvalue()
    assert code == 0 and "=== Game over ===" in text
    assert ("Note: the default opponent 'ppo' (a trained policy shipped as ONNX) needs onnxruntime, which is "
            "not installed; playing 'expert' instead. To play 'ppo': pip install 'house-of-decks-rl[onnx]'") in text
    assert "player_1 (expert)" in text


def test_naming_ppo_without_onnxruntime_is_a_usage_error(no_onnxruntime, capsys):
    from hod.apps import play_tapeo
    with pytest.raises(SystemExit) as e:
        play_tapeo.main(["--players", "2", "--opponents", "ppo", "--no-record"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "need onnxruntime, which is not installed (pip install 'house-of-decks-rl[onnx]')" in err
    # the search bot's playouts run the shipped network: not playable without onnxruntime either
    assert "bots playable now: ['expert', 'greedy', 'random', 'ranking']" in err


def test_running_the_shared_module_names_the_play_commands_instead_of_exiting_silently():
    import subprocess
    import sys

    # `python -m hod.apps.play` used to exit 0 printing nothing; it is not a command itself, so it
    # exits 2 (a usage error, as argparse does) and names the two play commands of the two games.
    done = subprocess.run([sys.executable, "-m", "hod.apps.play"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert "python -m hod.apps.play_tapeo" in done.stderr and "python -m hod.apps.play_robada" in done.stderr
