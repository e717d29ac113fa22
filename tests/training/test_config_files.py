"""``--config FILE`` of ``hod.training.train`` and ``hod.training.best_response``: a file that
cannot be read, or that lacks keys, is refused with one line before any work; the flags are the
game's keys whatever the file lists; a resumed checkpoint whose configuration lacks keys is
refused the same way."""
from __future__ import annotations

import json
import zipfile

import pytest

from hod.core.errors import ConfigError
from hod.training import best_response as br
from hod.training import config as C
from hod.training import train

KUHN = C.default_config_path("kuhn")
READ = "legal: a readable UTF-8 TOML file"
#: the required keys of [run] in kuhn_env/training.toml (total_steps, seed, checkpoint_every,
#: torch_threads, device), sorted
RUN_KEYS = ['checkpoint_every', 'device', 'seed', 'torch_threads', 'total_steps']


def _lacks(label: str, keys: list[str]) -> str:
    return (f"{label}: config lacks keys {keys}; legal: a configuration that sets every key of {KUHN} "
            f"that has no default (flags then override single keys)")


def _without_section(tmp_path, section: str) -> str:
    """kuhn_env/training.toml without its ``[section]`` (the section header and its lines)."""
    kept, skip = [], False
    for line in KUHN.read_text().splitlines():
        if line.startswith("["):
            skip = line.strip() == f"[{section}]"
        if not skip:
            kept.append(line)
    path = tmp_path / f"no_{section}.toml"
    path.write_text("\n".join(kept) + "\n")
    return str(path)


@pytest.fixture
def unreadable(tmp_path):
    """``{name: (path, reason)}``: files ``--config`` cannot read."""
    binary = tmp_path / "bin.toml"
    binary.write_bytes(b"\xff\xfe")
    folder = tmp_path / "dir.toml"
    folder.mkdir()
    return {"binary": (str(binary), "not UTF-8 text: byte b'\\xff' at position 0"),
            "folder": (str(folder), "a folder, not a file"),
            "missing": (str(tmp_path / "none.toml"), "no such file")}


@pytest.mark.parametrize("name", ["binary", "folder", "missing"])
def test_read_toml_names_why_a_file_cannot_be_read(unreadable, name):
    path, reason = unreadable[name]
    with pytest.raises(ConfigError) as e:
        C.load_config("kuhn", path)
    assert str(e.value) == f"--config {path}: cannot read ({reason}); {READ}"
    with pytest.raises(ConfigError) as e:   # the library reader names the path alone
        C.read_toml(path)
    assert str(e.value) == f"{path}: cannot read ({reason}); {READ}"


def test_a_partial_file_is_refused_naming_every_missing_key(tmp_path):
    path = _without_section(tmp_path, "run")
    with pytest.raises(ConfigError) as e:
        C.load_config("kuhn", path)
    assert str(e.value) == _lacks(f"--config {path}", RUN_KEYS)
    one = tmp_path / "no_seed.toml"
    one.write_text(KUHN.read_text().replace("seed = 0\n", ""))
    with pytest.raises(ConfigError) as e:
        C.load_config("kuhn", one)
    assert str(e.value) == (f"--config {one}: config lacks key ['seed']; legal: a configuration that sets every "
                            f"key of {KUHN} that has no default (flags then override single keys)")
    C.load_config("kuhn", KUHN)   # the whole file loads


@pytest.mark.parametrize("extra", [[], ["--total-steps", "5"]])
def test_train_refuses_a_partial_file_before_any_work(tmp_path, capsys, extra):
    path = _without_section(tmp_path, "run")
    with pytest.raises(SystemExit) as e:
        train.main(["--game", "kuhn", "--config", path, "--out", str(tmp_path / "run"), *extra])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == "python -m hod.training.train: error: " + _lacks(f"--config {path}", RUN_KEYS)
    assert "Traceback" not in err and not (tmp_path / "run").exists()


@pytest.mark.parametrize("name", ["binary", "folder", "missing"])
def test_train_and_best_response_refuse_an_unreadable_file(tmp_path, capsys, unreadable, name):
    path, reason = unreadable[name]
    with pytest.raises(SystemExit) as e:
        train.main(["--game", "kuhn", "--config", path, "--out", str(tmp_path / "run")])
    assert e.value.code == 2
    line = f"error: --config {path}: cannot read ({reason}); {READ}"
    assert capsys.readouterr().err.splitlines()[-1] == "python -m hod.training.train: " + line
    assert br.main(["--game", "kuhn", "--target", "random", "--config", path, "--out", str(tmp_path / "br")]) == 2
    assert capsys.readouterr().err == line + "\n"
    assert not (tmp_path / "run").exists() and not (tmp_path / "br").exists()


def test_best_response_refuses_a_partial_file(tmp_path, capsys):
    path = _without_section(tmp_path, "env")   # players, learner_seats, tables, reward_scheme (the others: defaults)
    assert br.main(["--game", "kuhn", "--target", "random", "--config", path, "--out", str(tmp_path / "br")]) == 2
    assert capsys.readouterr().err == "error: " + _lacks(
        f"--config {path}", ['learner_seats', 'players', 'reward_scheme', 'tables']) + "\n"
    assert not (tmp_path / "br").exists()


def test_flags_are_the_games_keys_whatever_the_file_lists(tmp_path):
    # a complete file from before the pfsp keys: their flags exist, and a flag given sets the key
    text = "\n".join(line for line in KUHN.read_text().splitlines() if not line.startswith(("pool_weighting", "pfsp_")))
    path = tmp_path / "old.toml"
    path.write_text(text + "\n")
    game, cfg, _ = train.parse_args(["--game", "kuhn", "--config", str(path), "--pool-weighting", "pfsp",
                                     "--pfsp-window", "7", "--tables", "16"])
    assert game == "kuhn" and cfg["pool"]["pool_weighting"] == "pfsp" and cfg["pool"]["pfsp_window"] == 7
    assert cfg["env"]["tables"] == 16 and "pfsp_prior" not in cfg["pool"]   # not given: the schema's default
    _, cfg, _ = train.parse_args(["--game", "kuhn", "--config", str(path)])
    assert "pool_weighting" not in cfg["pool"]


def test_merge_keys_keeps_the_base_sections_and_takes_the_configs_values():
    base = {"env": {"a": 1, "b": 2}, "run": {"c": 3}}
    cfg = {"env": {"b": 20}, "run": {"a": 10, "d": 4}}
    assert C.merge_keys(base, cfg) == {"env": {"a": 10, "b": 20}, "run": {"c": 3, "d": 4}}
    assert base == {"env": {"a": 1, "b": 2}, "run": {"c": 3}}   # unchanged


def test_run_folder_checks_the_configuration_before_reading_the_seed(tmp_path):
    cfg = C.load_config("kuhn")
    del cfg["run"]
    args = train.argparse.Namespace(out=None, resume=None, force=False)
    with pytest.raises(ConfigError) as e:
        train.run_folder("kuhn", cfg, args)
    assert str(e.value) == " | ".join(f"config lacks key {k!r}" for k in
                                      ["total_steps", "seed", "checkpoint_every", "torch_threads", "device"])


def test_resume_refuses_a_checkpoint_whose_configuration_lacks_keys(tmp_path, capsys):
    cfg = C.smoke_config("kuhn", engine="batched", tables=2, n_steps=32, batch_size=64, total_steps=64,
                         checkpoint_every=64, snapshot_every=64, eval_every=0)
    ckpt = train.Trainer("kuhn", cfg, tmp_path / "run", progress=False, log=None).run()["checkpoint"]
    bad = tmp_path / "bad" / "checkpoints" / "latest.zip"
    bad.parent.mkdir(parents=True)
    with zipfile.ZipFile(ckpt) as src, zipfile.ZipFile(bad, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "model_card.json":
                card = json.loads(data)
                del card["training"]["config"]["run"]
                data = json.dumps(card).encode()
            dst.writestr(info, data)
    before = sorted(p.name for p in bad.parent.iterdir())
    with pytest.raises(SystemExit) as e:
        train.main(["--resume", str(bad), "--no-progress"])
    assert e.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == "python -m hod.training.train: error: " + _lacks(
        f"--resume {bad}: the checkpoint's configuration", RUN_KEYS)
    assert sorted(p.name for p in bad.parent.iterdir()) == before == ["latest.zip"]
