"""ONNX export: same actions and logits as the torch policy, self-checking model card, torch-free bot."""
from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import onnx
import pytest
import torch

from hod import agents
from hod.agents import registry
from hod.agents.base import observed_player_count
from hod.agents.onnx_policy import OnnxPolicy, shipped_factories, shipped_opponents
from hod.training.ppo_bot import PPOBot
from hod.agents.model_card import CheckpointError
from hod.training.config import smoke_config
from hod.training.export import METADATA_KEY, export_onnx, main as export_main
from hod.training.train import Trainer


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """A Tapeo policy trained for a few hundred steps (2 and 4 players), and its export."""
    out = tmp_path_factory.mktemp("export_run")
    t = Trainer("tapeo", smoke_config("tapeo", players=[2, 4], net_arch=[64, 64]), out, progress=False, log=None)
    s = t.run()
    onnx_path, model_card_path = export_onnx(s["checkpoint"], out / "export")
    return s["checkpoint"], onnx_path, model_card_path


def recorded_observations(count: int, seed: int = 0):
    """``count`` observation dicts met by every seat in random games of Tapeo (2-6 players)."""
    import tapeo_env

    rng = np.random.default_rng(seed)
    obs, masks = [], []
    while len(obs) < count:
        env = tapeo_env.raw_env(num_players=int(rng.integers(2, 7)))
        env.reset(seed=int(rng.integers(1 << 30)))
        for agent in env.agent_iter():
            if env.terminations[agent] or env.truncations[agent]:
                env.step(None)
                continue
            o = env.observe(agent)
            obs.append(o["observation"].copy())
            masks.append(o["action_mask"].copy())
            env.step(int(rng.choice(np.flatnonzero(o["action_mask"]))))
    return np.array(obs[:count], np.float32), np.array(masks[:count], np.int8)


def test_onnx_and_torch_agree_on_1000_recorded_observations(exported):
    ckpt, onnx_path, _ = exported
    obs, masks = recorded_observations(1000)
    assert len({m.tobytes() for m in masks}) > 10  # many different masks
    torch_bot = PPOBot(ckpt, game="tapeo")
    onnx_bot = OnnxPolicy(onnx_path, game="tapeo")
    a_onnx, z_onnx = onnx_bot.run(obs, masks)
    policy = torch_bot.model.policy
    with torch.no_grad():
        o = torch.as_tensor(obs)
        latent = policy.mlp_extractor.forward_actor(policy.extract_features(o, policy.pi_features_extractor))
        z_torch = policy.action_net(latent).numpy()
        dist = policy.get_distribution(o, action_masks=masks.astype(bool))
        logp_torch = dist.distribution.logits.numpy()  # normalised, as MaskablePPO samples them
    a_torch, _ = torch_bot.model.predict(obs, action_masks=masks.astype(bool), deterministic=True)
    legal = masks.astype(bool)
    assert np.array_equal(a_onnx, a_torch)
    assert all(legal[i, a_onnx[i]] for i in range(1000))
    # the bots play the table sizes they were trained on (2 and 4; act refuses the others)
    trained = [i for i in range(len(obs)) if observed_player_count("tapeo", {"observation": obs[i]}) in (2, 4)][:50]
    assert len(trained) == 50
    assert [onnx_bot.act({"observation": obs[i], "action_mask": masks[i]}) for i in trained] == \
        [torch_bot.act({"observation": obs[i], "action_mask": masks[i]}) for i in trained]
    assert np.abs(z_onnx[legal] - z_torch[legal]).max() <= 1e-5
    assert (z_onnx[~legal] == np.float32(-1e8)).all()
    z = z_onnx.astype(np.float64)
    zl = np.where(legal, z, -np.inf)
    logp_onnx = zl - (np.log(np.exp(zl - zl.max(1, keepdims=True)).sum(1, keepdims=True)) + zl.max(1, keepdims=True))
    assert np.abs(logp_onnx[legal] - logp_torch[legal]).max() <= 1e-5


def test_export_graph_and_card(exported):
    ckpt, onnx_path, model_card_path = exported
    proto = onnx.load(onnx_path)
    assert max(o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")) >= 14
    assert [i.name for i in proto.graph.input] == ["observation", "action_mask"]
    assert [o.name for o in proto.graph.output] == ["action", "logits"]
    assert proto.graph.input[1].type.tensor_type.elem_type == onnx.TensorProto.INT8
    card = json.loads(model_card_path.read_text())
    embedded = json.loads({p.key: p.value for p in proto.metadata_props}[METADATA_KEY])
    assert card["game"] == embedded["game"] == "tapeo" and card["player_counts"] == [2, 4]
    assert card["onnx"]["file"] == "tapeo_ppo.onnx" and len(card["onnx"]["sha256"]) == 64


def test_onnx_policy_rejects_wrong_game_count_layout_and_damaged_files(exported, tmp_path):
    _, onnx_path, _ = exported
    with pytest.raises(CheckpointError, match="not 'robada'"):
        OnnxPolicy(onnx_path, game="robada")
    with pytest.raises(CheckpointError, match=r"\[2, 4\] players, not 3"):
        OnnxPolicy(onnx_path, game="tapeo", num_players=3)
    proto = onnx.load(onnx_path)
    for p in proto.metadata_props:
        if p.key == METADATA_KEY:
            card = json.loads(p.value)
            card["obs_layout_version"] = 0
            p.value = json.dumps(card)
    stale = tmp_path / "stale.onnx"
    stale.write_bytes(proto.SerializeToString())
    # no card beside these two: only verify=False gets past the integrity check to the others
    with pytest.raises(CheckpointError, match="layout version 0"):
        OnnxPolicy(stale, verify=False)
    trunc = tmp_path / "trunc.onnx"
    data = onnx_path.read_bytes()
    trunc.write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match="truncated or corrupt"):
        OnnxPolicy(trunc, verify=False)
    with pytest.raises(CheckpointError, match="no such ONNX file"):
        OnnxPolicy(tmp_path / "missing.onnx")
    bot = OnnxPolicy(onnx_path)
    with pytest.raises(ValueError, match=r"expected observation \(B, 157\)"):
        bot.run(np.zeros(5, np.float32), np.ones(10, np.int8))


def test_onnx_policy_rejects_a_flipped_weight_byte_and_a_contradicting_card(exported, tmp_path):
    import shutil

    _, onnx_path, model_card_path = exported
    # One byte flipped in the middle of the file (inside the weights: onnxruntime alone would load
    # it and compute other logits); the card beside it records the sha256 of the original bytes.
    data = bytearray(onnx_path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    bad = tmp_path / "flipped.onnx"
    bad.write_bytes(bytes(data))
    shutil.copy(model_card_path, tmp_path / "flipped.json")
    with pytest.raises(CheckpointError, match="sha256 does not match"):
        OnnxPolicy(bad)
    # The same bytes as the export, but a card beside it for another game.
    same = tmp_path / "other.onnx"
    shutil.copy(onnx_path, same)
    card = json.loads(model_card_path.read_text())
    card["game"] = "robada"
    (tmp_path / "other.json").write_text(json.dumps(card))
    with pytest.raises(CheckpointError, match="disagree on 'game'"):
        OnnxPolicy(same)


def _export_with_card(onnx_path, folder, stem, **changes):
    """Copy of the export whose embedded card has ``changes``, with a matching card beside it
    (same changes, the sha256 of the new bytes); returns its path."""
    import hashlib

    proto = onnx.load(onnx_path)
    for p in proto.metadata_props:
        if p.key == METADATA_KEY:
            card = json.loads(p.value)
            card.update(changes)
            p.value = json.dumps(card)
    data = proto.SerializeToString()
    path = folder / f"{stem}.onnx"
    path.write_bytes(data)
    card["onnx"] = {"file": path.name, "sha256": hashlib.sha256(data).hexdigest()}
    (folder / f"{stem}.json").write_text(json.dumps(card))
    return path


def test_onnx_policy_needs_its_card_unless_verify_is_false(exported, tmp_path):
    import shutil

    _, onnx_path, model_card_path = exported
    bare = tmp_path / "bare.onnx"
    shutil.copy(onnx_path, bare)
    with pytest.raises(CheckpointError, match=r"no model card bare\.json beside it.*verify=False"):
        OnnxPolicy(bare)
    assert OnnxPolicy(bare, verify=False).game == "tapeo"       # explicitly unchecked: loads
    # a card beside it without onnx.sha256 cannot vouch for the bytes either
    card = json.loads(model_card_path.read_text())
    del card["onnx"]["sha256"]
    (tmp_path / "bare.json").write_text(json.dumps(card))
    with pytest.raises(CheckpointError, match="holds no onnx.sha256"):
        OnnxPolicy(bare)
    # the card is part of the cache key: once the right card is written the same file loads...
    shutil.copy(model_card_path, tmp_path / "bare.json")
    assert OnnxPolicy(bare).game == "tapeo"
    # ...and a card changed afterwards (another sha256) is read and checked again, not served from cache
    card = json.loads(model_card_path.read_text())
    card["onnx"]["sha256"] = "0" * 64
    (tmp_path / "bare.json").write_text(json.dumps(card))
    with pytest.raises(CheckpointError, match="sha256 does not match"):
        OnnxPolicy(bare)


def test_onnx_policy_checks_sizes_against_the_graph_and_the_installed_game(exported, tmp_path):
    _, onnx_path, _ = exported
    # the card claims 158 observation entries; the graph's input is [batch, 157]
    wide = _export_with_card(onnx_path, tmp_path, "wide", obs_size=158)
    with pytest.raises(CheckpointError, match=r"graph input 'observation' has shape \['batch', 157\].*obs_size = 158"):
        OnnxPolicy(wide)
    narrow = _export_with_card(onnx_path, tmp_path, "narrow", num_actions=9)
    with pytest.raises(CheckpointError, match=r"graph input 'action_mask'.*num_actions = 9"):
        OnnxPolicy(narrow)
    # card and graph agree (157, 10) but say Ronda Robada, whose observation has 192 entries and
    # 27 actions (robada_env LAYOUT / ACTION_NAMES)
    other = _export_with_card(onnx_path, tmp_path, "other_game", game="robada", player_counts=[2])
    with pytest.raises(CheckpointError, match="observations of size 157, not 192"):
        OnnxPolicy(other)


@pytest.mark.parametrize("player_counts, shown", [(None, "None"), ("2", "'2'"), ([], "[]"), ([2.0], "[2.0]"),
                                                  ([True, 2], "[True, 2]"), ([7], "[7]")])
def test_onnx_policy_refuses_a_card_with_bad_player_counts(exported, tmp_path, player_counts, shown):
    """Before the card's checks: a TypeError (None, "2") or a bot accepted (the others); Tapeo
    is played by 2 to 6 players."""
    _, onnx_path, _ = exported
    path = _export_with_card(onnx_path, tmp_path, "bad_counts", player_counts=player_counts)
    message = (f"{path}: the card's player_counts {shown} is not legal for tapeo; legal: a non-empty list of "
               f"integers, each one of [2, 3, 4, 5, 6]")
    with pytest.raises(CheckpointError, match=f"^{re.escape(message)}$"):
        OnnxPolicy(path)
    with pytest.raises(CheckpointError, match=f"^{re.escape(message)}$"):
        OnnxPolicy(path, game="tapeo", num_players=2)
    # and the side-card reading that lists bots per table size (the web page's) offers it at none:
    # null read as "every size" and [2.0, 4.0] as (2, 4) before
    from hod.agents.onnx_policy import card_player_counts
    assert card_player_counts(path) == ()


def test_a_card_repeating_a_table_size_plays_each_size_once(exported, tmp_path):
    from hod.agents.onnx_policy import card_player_counts

    _, onnx_path, _ = exported
    # a run with ``players = [2, 2, 4]`` (the 2-player tables weighted twice) plays sizes 2 and 4
    path = _export_with_card(onnx_path, tmp_path, "weighted", player_counts=[2, 2, 4])
    assert card_player_counts(path) == (2, 4) and OnnxPolicy(path).player_counts == (2, 4)


def test_onnx_policy_runs_without_torch(exported):
    _, onnx_path, _ = exported
    code = (
        "import sys, numpy as np\n"
        "from hod.agents.onnx_policy import OnnxPolicy\n"
        f"b = OnnxPolicy({str(onnx_path)!r}, game='tapeo', seed=0)\n"
        "m = np.zeros(10, np.int8); m[[2, 5]] = 1\n"
        "a = b.act({'observation': np.zeros(157, np.float32), 'action_mask': m})\n"
        "assert a in (2, 5)\n"
        "bad = [k for k in ('torch', 'stable_baselines3', 'sb3_contrib') if k in sys.modules]\n"
        "assert not bad, bad\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_shipped_opponents_registry(exported, tmp_path, monkeypatch):
    _, onnx_path, _ = exported
    assert shipped_opponents("tapeo", tmp_path / "absent") == {}  # no folder: nothing, no error
    for stem in ("tapeo_ppo", "tapeo_ppo_4p"):   # each with its card beside it, as shipped
        (tmp_path / f"{stem}.onnx").write_bytes(onnx_path.read_bytes())
        (tmp_path / f"{stem}.json").write_bytes(onnx_path.with_suffix(".json").read_bytes())
    (tmp_path / "chess_ppo.onnx").write_bytes(b"ignored: unknown game")
    assert shipped_opponents("tapeo", tmp_path) == {"ppo": tmp_path / "tapeo_ppo.onnx",
                                                   "ppo_4p": tmp_path / "tapeo_ppo_4p.onnx"}
    monkeypatch.setattr(registry, "shipped_factories", lambda game: shipped_factories(game, tmp_path))
    assert {"ppo", "ppo_4p"} <= set(agents.names("tapeo"))
    bot = agents.make("tapeo", "ppo", seed=0)
    assert isinstance(bot, OnnxPolicy) and bot.name == "ppo" and bot.game == "tapeo"
    from hod.evaluation.tournament import run_tournament

    res = run_tournament("tapeo", ["ppo", "random"], num_games=4, seed=0)
    assert res.num_games == 4 and abs(sum(b.wins for b in res.bots) - 4) < 1e-9


def test_export_cli(exported, tmp_path, capsys):
    ckpt, _, _ = exported
    assert export_main([ckpt, "--out", str(tmp_path), "--name", "mine"]) == 0
    assert (tmp_path / "mine.onnx").is_file() and (tmp_path / "mine.json").is_file()
    assert export_main([str(tmp_path / "mine.json"), "--out", str(tmp_path)]) == 2
    assert "error:" in capsys.readouterr().err


def test_export_writes_golden_vectors_and_the_consumer_interface(exported, tmp_path, capsys):
    from hod.training.export import golden_path, load_golden

    _, onnx_path, model_card_path = exported
    card = json.loads(model_card_path.read_text())
    iface = card["onnx"]["interface"]
    assert iface["golden"] == "tapeo_ppo.golden.json" and iface["self_contained"] is True
    # Tapeo's layout v1 is 157 floats (docs/tapeo_env.md), its actions the 10 kinds
    assert [(i["name"], i["shape"], i["dtype"]) for i in iface["inputs"]] == [
        ("observation", ["batch", 157], "float32"), ("action_mask", ["batch", 10], "int8")]
    assert iface["obs_layout"] == {"game": "tapeo", "version": 1, "size": 157}
    golden = load_golden(golden_path(onnx_path))
    assert golden["observation"].shape == (32, 157) and golden["action_mask"].shape == (32, 10)
    action, logits = OnnxPolicy(onnx_path).run(golden["observation"], golden["action_mask"])
    assert np.array_equal(action, golden["action"]) and np.abs(logits - golden["logits"]).max() <= 1e-5
    # illegal actions carry the graph's -1e8 (written as such in the file)
    assert np.all(golden["logits"][golden["action_mask"] == 0] == np.float32(-1e8))
    # --golden regenerates them for an existing export, same seed, same vectors
    before = golden_path(onnx_path).read_bytes()
    golden_path(onnx_path).unlink()
    assert export_main([str(onnx_path), "--golden"]) == 0 and "golden.json" in capsys.readouterr().out
    assert golden_path(onnx_path).read_bytes() == before
    assert export_main([str(tmp_path / "none.onnx"), "--golden"]) == 2
    # a golden file of another format is refused
    bad = tmp_path / "bad.golden.json"
    bad.write_text('{"format": "something else"}')
    with pytest.raises(CheckpointError, match="not a golden file"):
        load_golden(bad)


def test_export_cli_refuses_to_replace_a_shipped_opponent(exported, tmp_path, capsys, monkeypatch):
    """--out at the installed agents/opponents with a shipped name: status 2, one line, nothing
    written; --overwrite-shipped replaces it; a new name there is refused too (it would become a
    shipped opponent), as --help says."""
    from hod.agents import onnx_policy

    ckpt, _, _ = exported
    real = onnx_policy.OPPONENTS_DIR
    before = {p.name: p.stat().st_mtime_ns for p in real.iterdir()}
    # the shipped folder itself, the same folder spelled another way, and the default name
    # (<game>_ppo = tapeo_ppo, the checkpoint is a Tapeo one): all refused before any export
    for args in (["--out", str(real), "--name", "tapeo_ppo"], ["--out", str(real / ".." / "opponents")],
                 ["--out", str(real), "--name", "robada_ppo"]):
        assert export_main([ckpt] + args) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: --out ") and err.count("\n") == 1 and "--overwrite-shipped" in err
        assert "shipped opponents' folder" in err and "_ppo.onnx, " in err
    assert {p.name: p.stat().st_mtime_ns for p in real.iterdir()} == before
    # a stand-in shipped folder: refused, then replaced with the flag; another name is not a shipped opponent
    fake = tmp_path / "opponents"
    fake.mkdir()
    (fake / "tapeo_ppo.onnx").write_bytes(b"old")
    monkeypatch.setattr(onnx_policy, "OPPONENTS_DIR", fake)
    assert export_main([ckpt, "--out", str(fake)]) == 2
    assert "the shipped tapeo_ppo.onnx;" in capsys.readouterr().err and (fake / "tapeo_ppo.onnx").read_bytes() == b"old"
    assert export_main([ckpt, "--out", str(fake), "--name", "tapeo_ppo_mine"]) == 2
    err = capsys.readouterr().err
    assert err == (f"error: --out {fake} is the shipped opponents' folder ({fake}) and would add tapeo_ppo_mine.onnx "
                   f"to the shipped opponents; legal: an --out of your own (e.g. runs/<run>/export), or "
                   f"--overwrite-shipped to write there\n")
    assert sorted(p.name for p in fake.iterdir()) == ["tapeo_ppo.onnx"]
    assert export_main([ckpt, "--out", str(fake), "--overwrite-shipped"]) == 0
    assert export_main([ckpt, "--out", str(fake), "--name", "tapeo_ppo_mine", "--overwrite-shipped"]) == 0
    assert onnx.load(str(fake / "tapeo_ppo.onnx")).graph.input[0].name == "observation"
    assert (fake / "tapeo_ppo.json").is_file() and (fake / "tapeo_ppo_mine.onnx").is_file()


def test_a_new_name_in_the_shipped_folder_is_refused_before_any_write(exported, capsys, monkeypatch):
    """The installed agents/opponents itself (never written: check_export_targets and the writes
    would raise if reached), with a name no shipped opponent has and the default name."""
    from hod.agents import onnx_policy
    from hod.training import export

    ckpt, _, _ = exported
    real = onnx_policy.OPPONENTS_DIR
    before = {p.name: p.stat().st_mtime_ns for p in real.iterdir()}

    def no_export(*args, **kwargs):
        raise AssertionError("the export was reached")

    monkeypatch.setattr(export, "export_onnx", no_export)
    for args in (["--out", str(real), "--name", "tapeo_ppo_brand_new"], ["--out", str(real / ".." / "opponents"),
                                                                          "--name", "zz_not_shipped"]):
        assert export_main([ckpt] + args) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "is the shipped opponents' folder" in err and "--overwrite-shipped" in err
        assert f"would add {args[-1]}.onnx to the shipped opponents" in err
    assert {p.name: p.stat().st_mtime_ns for p in real.iterdir()} == before


@pytest.mark.parametrize("suffix", [".onnx", ".json", ".golden.json"])
def test_export_with_a_folder_in_place_of_one_file_writes_none(exported, tmp_path, capsys, suffix):
    """A folder named like one of the three files: status 2, one line naming it, none of the
    three written (before: an IsADirectoryError traceback, the .onnx left without its card, or
    the .onnx and card without golden vectors)."""
    ckpt, _, _ = exported
    (tmp_path / f"mine{suffix}").mkdir()
    assert export_main([ckpt, "--out", str(tmp_path), "--name", "mine"]) == 2
    err = capsys.readouterr().err
    assert err == (f"error: --out {tmp_path}: {tmp_path / f'mine{suffix}'} is a folder, not a file; legal: an --out or "
                   f"--name whose mine.onnx, mine.json, mine.golden.json are files or do not exist yet\n")
    assert [p.name for p in tmp_path.iterdir()] == [f"mine{suffix}"]


def test_export_writes_its_three_files_together_or_none(exported, tmp_path, capsys, monkeypatch):
    """Past the early check (a folder appearing meanwhile): the writes refuse the golden file's
    folder before renaming anything, so neither the .onnx nor the card is written; status 74
    (a file could not be written, hod.core.commands) with one line."""
    from hod.training import export

    ckpt, _, _ = exported
    (tmp_path / "mine.golden.json").mkdir()
    monkeypatch.setattr(export, "check_export_targets",
                        lambda out, name: [out / f"{name}.onnx", out / f"{name}.json", out / f"{name}.golden.json"])
    assert export_main([ckpt, "--out", str(tmp_path), "--name", "mine"]) == 74
    assert capsys.readouterr().err == f"error: {tmp_path / 'mine.golden.json'}: Is a directory\n"
    assert [p.name for p in tmp_path.iterdir()] == ["mine.golden.json"]


def test_export_to_an_out_that_is_a_file_is_refused(exported, tmp_path, capsys):
    ckpt, _, _ = exported
    (tmp_path / "notes").write_text("mine")
    for out in (tmp_path / "notes", tmp_path / "notes" / "sub"):
        assert export_main([ckpt, "--out", str(out)]) == 2   # before: a FileExistsError traceback
        assert capsys.readouterr().err == (f"error: --out {out}: {tmp_path / 'notes'} is a file, not a folder; "
                                           f"legal: a folder that exists and is writable, or that can be created "
                                           f"in a writable folder\n")
    assert [p.name for p in tmp_path.iterdir()] == ["notes"] and (tmp_path / "notes").read_text() == "mine"


def test_a_write_refused_for_want_of_room_is_one_line_and_status_74(exported, tmp_path):
    """A file-size limit of 1,000 bytes (the .onnx of this 64x64 network is tens of kB): one line
    ``error: cannot write <the .onnx>: File too large`` (EFBIG), status 74, nothing written."""
    ckpt, _, _ = exported
    code = ("import resource, sys\n"
            "resource.setrlimit(resource.RLIMIT_FSIZE, (1000, resource.RLIM_INFINITY))\n"
            "from hod.training.export import main\n"
            f"sys.exit(main([{str(ckpt)!r}, '--out', {str(tmp_path / 'out')!r}]))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 74, r.stderr
    assert r.stderr == f"error: cannot write {tmp_path / 'out' / 'tapeo_ppo.onnx'}: File too large\n"
    assert not (tmp_path / "out").exists() or list((tmp_path / "out").iterdir()) == []


def test_golden_refuses_to_rewrite_a_shipped_opponent_s_card(exported, tmp_path, capsys, monkeypatch):
    """--golden on an export in the shipped folder: status 2, one line naming --overwrite-shipped,
    the card and golden file untouched; with the flag (a stand-in shipped folder) it writes."""
    import shutil

    from hod.agents import onnx_policy

    real = onnx_policy.OPPONENTS_DIR
    before = {p.name: p.stat().st_mtime_ns for p in real.iterdir()}
    assert export_main(["--golden", str(real / "tapeo_ppo.onnx")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --golden ") and err.count("\n") == 1 and "--overwrite-shipped" in err
    assert {p.name: p.stat().st_mtime_ns for p in real.iterdir()} == before
    _, onnx_path, card_path = exported
    fake = tmp_path / "opponents"
    fake.mkdir()
    for p in (onnx_path, card_path):
        shutil.copy(p, fake / p.name)
    monkeypatch.setattr(onnx_policy, "OPPONENTS_DIR", fake)
    assert export_main(["--golden", str(fake / onnx_path.name)]) == 2
    assert not (fake / onnx_path.name).with_suffix(".golden.json").exists()
    capsys.readouterr()
    assert export_main(["--golden", str(fake / onnx_path.name), "--overwrite-shipped"]) == 0
    assert (fake / onnx_path.name).with_suffix(".golden.json").is_file()
