"""What we load cannot exhaust memory: checkpoints, pool snapshots and ONNX exports are measured
from what they declare (the card's network, the zip directory, the ``.npy`` headers, the ONNX
initializers' dims) and refused, naming the limit, before anything of that size is allocated;
the training configuration refuses a network those loaders would refuse (one limit, checked
where the value enters).

Caps are patched small where a real file at the limit would be large; allocations are watched
with ``tracemalloc`` (numpy reports its arrays to it) or by making the builder fail if called.
"""
from __future__ import annotations

import io
import json
import shutil
import tracemalloc
import zipfile
from pathlib import Path

import numpy as np
import pytest

from hod.agents import model_card
from hod.agents.model_card import MODEL_CARD_FORMAT, CheckpointError
from hod.core.games import layout_version
from hod.training import checkpoint as ckpt_mod

OPPONENTS = Path(__file__).resolve().parents[2] / "agents" / "opponents"
MiB = 1 << 20


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """``(path, card)``: a checkpoint of a Tapeo network [8] (obs 157, 10 actions) after one Adam
    step (so the optimizer state holds arrays), with one pool snapshot; built, not trained."""
    from gymnasium import spaces

    from hod.training.checkpoint import new_model, save_checkpoint
    from hod.training.policy_io import to_numpy_policy

    card = {"format": MODEL_CARD_FORMAT, "card_version": 1, "game": "tapeo", "player_counts": [2],
            "obs_layout_version": layout_version("tapeo"), "obs_size": 157, "num_actions": 10,
            "algorithm": "MaskablePPO", "policy": {"net_arch": [8], "activation": "tanh"}}
    model = new_model(card, spaces.Box(-1.0, 1.0, (157,), np.float32))
    sum(p.sum() for p in model.policy.parameters()).backward()
    model.policy.optimizer.step()
    path = save_checkpoint(model, tmp_path_factory.mktemp("small") / "small.zip", card,
                           {"past_0": to_numpy_policy(model.policy)})
    return path, card


def _rewrite(src: Path, dst: Path, replace: dict[str, bytes] | None = None, card=None) -> Path:
    """Copy checkpoint ``src`` to ``dst`` (deflated) with members replaced or added, and its card
    replaced by ``card`` when given."""
    replace = dict(replace or {})
    if card is not None:
        replace[ckpt_mod.MODEL_CARD_MEMBER] = json.dumps(card).encode()
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for name in zin.namelist():
            zout.writestr(name, replace.pop(name, zin.read(name)))
        for name, data in replace.items():
            zout.writestr(name, data)
    return dst


def _member_arrays(path: Path, member: str) -> dict[str, np.ndarray]:
    with zipfile.ZipFile(path) as z, np.load(io.BytesIO(z.read(member)), allow_pickle=False) as f:
        return {k: f[k] for k in f.files}


def _npz(arrays: dict[str, np.ndarray], compressed: bool = False) -> bytes:
    buf = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(buf, **arrays)
    return buf.getvalue()


def _forged_npy(shape: tuple[int, ...], dtype: str = "<f4") -> bytes:
    """An ``.npy`` whose header declares ``shape`` but that holds 16 bytes of data."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": dtype, "fortran_order": False, "shape": shape})
    return buf.getvalue() + bytes(16)


def _npz_with(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in members.items():
            z.writestr(name + ".npy", data)
    return buf.getvalue()


def _no_model_built(monkeypatch) -> None:
    """Building a MaskablePPO (what allocates a card's network) fails the test."""
    import sb3_contrib

    def built(*args, **kwargs):
        raise AssertionError("a network was built")

    monkeypatch.setattr(sb3_contrib, "MaskablePPO", built)


def _refused(fn, error=ValueError) -> tuple[str, int]:
    """``(message, peak bytes traced)`` of ``fn()``, which must raise ``error``."""
    tracemalloc.start()
    try:
        with pytest.raises(error) as info:
            fn()
        return str(info.value), tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _save(a: np.ndarray) -> bytes:
    """``a`` as ``.npy`` bytes."""
    buf = io.BytesIO()
    np.save(buf, a)
    return buf.getvalue()


# ---- the card's network -----------------------------------------------------------------------
def test_the_card_gives_the_network_s_exact_size(small):
    from hod.agents.model_card import network_parameters
    from hod.training.checkpoint import load_checkpoint, policy_shapes

    # [8] on obs 157, 10 actions: actor and critic 157*8+8 = 1264 each, action head 8*10+10 = 90,
    # value head 8+1 = 9: 2*1264 + 90 + 9 = 2627
    assert network_parameters([8], 157, 10) == 2627
    # [8, 6] on obs 7, 5 actions: 2*(7*8+8 + 8*6+6) + (6*5+5) + (6+1) = 2*118 + 35 + 7 = 278
    assert network_parameters([8, 6], 7, 5) == 278
    path, card = small
    model, _, _ = load_checkpoint(path)
    have = [(k, tuple(v.shape)) for k, v in model.policy.state_dict().items()]
    assert have == list(policy_shapes(card).items())   # the names, shapes and order SB3 builds
    assert sum(p.numel() for p in model.policy.parameters()) == 2627


def test_a_card_asking_for_a_huge_net_is_refused_before_anything_is_built(small, tmp_path, monkeypatch):
    from hod.training.checkpoint import load_checkpoint

    path, card = small
    # 32 layers of 65536: within the per-layer width and layer-count limits, but
    # 2*(157*65536+65536 + 31*(65536*65536+65536)) + (65536*10+10) + (65536+1)
    # = 2*(10,354,688 + 133,146,017,792) + 655,370 + 65,537 = 266,313,465,867 parameters (~1 TB)
    huge = dict(card, policy={"net_arch": [65536] * 32, "activation": "tanh"})
    bad = _rewrite(path, tmp_path / "huge.zip", card=huge)
    _no_model_built(monkeypatch)
    message, peak = _refused(lambda: load_checkpoint(bad), CheckpointError)
    assert "266,313,465,867 parameters; the limit is MAX_PARAMETERS = 16,777,216" in message
    assert peak < 8 * MiB


def test_the_parameter_cap_is_one_named_limit(small, monkeypatch):
    from hod.training.checkpoint import load_checkpoint

    path, _ = small
    monkeypatch.setattr(model_card, "MAX_PARAMETERS", 2626)   # one below the network's 2627
    with pytest.raises(CheckpointError, match=r"2,627 parameters; the limit is MAX_PARAMETERS = 2,626"):
        load_checkpoint(path)
    monkeypatch.setattr(model_card, "MAX_PARAMETERS", 2627)
    load_checkpoint(path)


# ---- .npy headers -------------------------------------------------------------------------------
def test_an_npy_header_declaring_a_huge_array_is_refused_before_reading(small, tmp_path, monkeypatch):
    from hod.training.checkpoint import load_checkpoint

    path, _ = small
    members = {k: _save(v) for k, v in _member_arrays(path, ckpt_mod.POLICY_MEMBER).items()}
    members["mlp_extractor.policy_net.0.weight"] = _forged_npy((2**20, 2**20))   # 2**40 float32: 4 TiB
    bad = _rewrite(path, tmp_path / "forged.zip", {ckpt_mod.POLICY_MEMBER: _npz_with(members)})
    _no_model_built(monkeypatch)
    message, peak = _refused(lambda: load_checkpoint(bad), CheckpointError)
    assert "declares shape (1048576, 1048576)" in message
    assert peak < 8 * MiB


def test_arrays_that_do_not_fit_the_card_are_refused_before_reading(small, tmp_path, monkeypatch):
    from hod.training.checkpoint import load_checkpoint

    path, _ = small
    weights = _member_arrays(path, ckpt_mod.POLICY_MEMBER)
    weights["mlp_extractor.policy_net.0.weight"] = np.zeros((2048, 2048), np.float32)   # 16 MiB, deflates to KBs
    bad = _rewrite(path, tmp_path / "big.zip", {ckpt_mod.POLICY_MEMBER: _npz(weights, compressed=True)})
    _no_model_built(monkeypatch)
    message, peak = _refused(lambda: load_checkpoint(bad), CheckpointError)
    assert "do not fit the network" in message and "(2048, 2048)" in message
    assert peak < 8 * MiB   # the 16 MiB array was never read


def test_optimizer_state_of_another_shape_is_refused(small, tmp_path):
    from hod.training.checkpoint import load_checkpoint

    path, _ = small
    state = _member_arrays(path, ckpt_mod.OPTIMIZER_MEMBER)
    assert state["0/exp_avg"].shape == (8, 157)   # parameter 0: the actor's first weight
    state["0/exp_avg"] = np.zeros((3, 3), np.float32)
    bad = _rewrite(path, tmp_path / "opt.zip", {ckpt_mod.OPTIMIZER_MEMBER: _npz(state)})
    with pytest.raises(CheckpointError, match=r"optimizer.npz array '0/exp_avg' of shape \(3, 3\) does not belong"):
        load_checkpoint(bad)


# ---- declared member sizes ------------------------------------------------------------------------
def _opened(monkeypatch) -> list[str]:
    """Names of the zip members opened from now on (any archive)."""
    names: list[str] = []
    real = zipfile.ZipFile.open

    def spy(self, name, *args, **kwargs):
        names.append(name.filename if isinstance(name, zipfile.ZipInfo) else name)
        return real(self, name, *args, **kwargs)

    monkeypatch.setattr(zipfile.ZipFile, "open", spy)
    return names


def _declaring(data: bytes, member: str, size: int) -> bytes:
    """The zip ``data`` with the uncompressed size of ``member`` in its central directory set to
    ``size`` (the entry's bytes 24..28; entries: 46 bytes + name, extra field and comment)."""
    data = bytearray(data)
    pos = int.from_bytes(data[-6:-2], "little")   # the end record's offset of the central directory
    while data[pos:pos + 4] == b"PK\x01\x02":
        name_len, extra_len, comment_len = (int.from_bytes(data[pos + i:pos + i + 2], "little") for i in (28, 30, 32))
        if data[pos + 46:pos + 46 + name_len].decode() == member:
            data[pos + 24:pos + 28] = size.to_bytes(4, "little")
            return bytes(data)
        pos += 46 + name_len + extra_len + comment_len
    raise AssertionError(f"no member {member}")


def test_a_member_declaring_more_than_the_limit_is_refused_before_it_is_read(small, tmp_path, monkeypatch):
    from hod.training.checkpoint import load_checkpoint

    path, _ = small
    forged = tmp_path / "forged.zip"
    forged.write_bytes(_declaring(path.read_bytes(), ckpt_mod.POLICY_MEMBER, 0xFFFFFFF0))   # 4 GiB
    with zipfile.ZipFile(forged) as z:
        assert z.getinfo(ckpt_mod.POLICY_MEMBER).file_size == 0xFFFFFFF0
    opened = _opened(monkeypatch)
    with pytest.raises(CheckpointError, match=r"member 'policy.npz' declares 4,294,967,280 bytes uncompressed, which "
                                              r"takes the archive over 1,073,741,824 bytes, the limit MAX_FILE_BYTES"):
        load_checkpoint(forged)
    assert opened == []   # nothing was opened, let alone decompressed


def test_a_decompression_bomb_is_refused_before_it_is_read(small, tmp_path, monkeypatch):
    from hod.training.checkpoint import load_checkpoint

    path, _ = small
    bomb = _rewrite(path, tmp_path / "bomb.zip", {"pool/bomb.npz": bytes(8 * MiB)})   # deflates to ~8 KB
    assert bomb.stat().st_size < MiB
    monkeypatch.setattr(model_card, "MAX_FILE_BYTES", 4 * MiB)
    opened = _opened(monkeypatch)
    with pytest.raises(CheckpointError, match=r"member 'pool/bomb.npz' declares 8,388,608 bytes uncompressed.*"
                                              r"the limit MAX_FILE_BYTES; refused before reading it"):
        load_checkpoint(bomb)
    assert "pool/bomb.npz" not in opened


def _zip_parses(monkeypatch) -> list:
    """Record every zip directory parse (``zipfile.ZipFile``'s constructor) from now on."""
    parsed: list = []
    real = zipfile.ZipFile.__init__

    def init(self, file, *args, **kwargs):
        parsed.append(file)
        real(self, file, *args, **kwargs)
    monkeypatch.setattr(zipfile.ZipFile, "__init__", init)
    return parsed


def test_a_zip_listing_too_many_members_is_refused_before_its_directory_is_parsed(small, tmp_path, monkeypatch):
    from hod.training.checkpoint import load_checkpoint

    path, _ = small
    # 5 members of the checkpoint + 1 pool snapshot + 4,091 empty pool members = 4,097: one over
    # MAX_ZIP_MEMBERS = 2**12 = 4,096
    many = _rewrite(path, tmp_path / "many.zip", {f"pool/p{i}.npz": b"" for i in range(4091)})
    with zipfile.ZipFile(many) as z:
        assert len(z.infolist()) == 4097
    parsed = _zip_parses(monkeypatch)
    with pytest.raises(CheckpointError, match=r"the zip directory lists 4,097 members; the limit is 4,096 "
                                              r"\(MAX_ZIP_MEMBERS\); refused before parsing it"):
        load_checkpoint(many)
    assert parsed == []   # zipfile never read the directory


def test_a_policy_npz_listing_too_many_members_is_refused_before_its_directory_is_parsed(monkeypatch):
    from hod.training.npz import npz_headers

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for i in range(9):
            z.writestr(f"a{i}.npy", b"")
    parsed = _zip_parses(monkeypatch)
    # 9 members against a limit of 8
    with pytest.raises(ValueError, match=r"policy: the zip directory lists 9 members; the limit is 8"):
        npz_headers(buf.getvalue(), MiB, "MAX_FILE_BYTES", "policy", max_members=8)
    assert parsed == []


def test_a_zip64_directory_is_refused_and_a_file_without_a_directory_record_is_not_a_zip(tmp_path):
    from hod.training.npz import check_member_count

    # an end-of-central-directory record declaring 0xFFFF entries (the zip64 marker): 4 + 2 + 2
    # bytes, then 0xFFFF twice, then size, offset and comment length
    eocd = b"PK\x05\x06" + bytes(4) + b"\xff\xff\xff\xff" + bytes(10)
    with pytest.raises(ValueError, match=r"x: a zip64 directory; refused before parsing it"):
        check_member_count(eocd, 4096, "MAX_ZIP_MEMBERS", "x")
    (tmp_path / "plain.bin").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match=r"y: not a zip archive, or one cut short"):
        check_member_count(tmp_path / "plain.bin", 4096, "MAX_ZIP_MEMBERS", "y")


def test_a_zip_that_understates_its_member_count_is_refused_by_its_directory_size(small, tmp_path, monkeypatch):
    """zipfile parses as many entries as the directory's size holds, whatever count the record
    states (the critic's bypass: 300,000 members stated as 1). 4,097 members with names of 1-4
    characters stated as 1: the directory takes about 4,097 * 50 bytes, room for more than 4,096
    entries of the smallest size (46 bytes)."""
    import struct

    from hod.training.checkpoint import load_checkpoint

    path, _ = small
    many = _rewrite(path, tmp_path / "many.zip", {f"pool/p{i}.npz": b"" for i in range(4091)})
    data = bytearray(many.read_bytes())
    struct.pack_into("<HH", data, len(data) - 22 + 8, 1, 1)   # entries on this disk, entries in all
    many.write_bytes(bytes(data))
    parsed = _zip_parses(monkeypatch)
    with pytest.raises(CheckpointError, match=r"the zip directory takes [\d,]+ bytes, room for up to [\d,]+ members; "
                                              r"the limit is 4,096 members \(MAX_ZIP_MEMBERS\); refused before parsing"):
        load_checkpoint(many)
    assert parsed == []


def test_a_zip64_locator_is_refused():
    from hod.training.npz import check_member_count

    # a zip64 locator (20 bytes, signature PK\x06\x07) just before a plain record stating 1 entry
    locator = b"PK\x06\x07" + bytes(16)
    eocd = b"PK\x05\x06" + bytes(4) + b"\x01\x00\x01\x00" + bytes(10)
    with pytest.raises(ValueError, match=r"z: a zip64 directory; refused before parsing it"):
        check_member_count(locator + eocd, 4096, "MAX_ZIP_MEMBERS", "z")


def test_the_pool_size_is_capped_so_a_checkpoint_stays_under_the_member_limit():
    from hod.training.config import TrainingConfig

    assert model_card.MAX_POOL_SNAPSHOTS + 5 <= model_card.MAX_ZIP_MEMBERS   # 1,024 + 5 members <= 4,096
    field = TrainingConfig.model_fields["pool_size"]
    assert any(getattr(m, "le", None) == 1024 for m in field.metadata)


def test_the_arrays_of_a_checkpoint_are_capped_together(small, tmp_path, monkeypatch):
    from hod.training.checkpoint import load_checkpoint
    from hod.training.numpy_policy import NumpyPolicy

    path, _ = small
    # four snapshots of a [512] actor: (512*157 + 512 + 10*512 + 10) * 4 bytes = 342,568 bytes of
    # float32 each, 1,370,272 together; compressed, each member takes a few KB
    layers = [(np.zeros((512, 157), np.float32), np.zeros(512, np.float32))]
    snap = NumpyPolicy(layers, (np.zeros((10, 512), np.float32), np.zeros(10, np.float32)))
    with np.load(io.BytesIO(snap.to_bytes()), allow_pickle=False) as f:
        packed = _npz({k: f[k] for k in f.files}, compressed=True)
    bad = _rewrite(path, tmp_path / "pool.zip", {f"pool/s{i}.npz": packed for i in range(4)})
    monkeypatch.setattr(model_card, "MAX_FILE_BYTES", MiB)   # each snapshot fits, the four do not
    with pytest.raises(CheckpointError, match=r"the checkpoint's arrays declare [\d,]+ bytes together; the limit is "
                                              r"1,048,576 bytes \(MAX_FILE_BYTES"):
        load_checkpoint(bad)


def test_a_pool_snapshot_is_measured_from_its_headers(small):
    from hod.training.numpy_policy import NumpyPolicy

    path, _ = small
    with zipfile.ZipFile(path) as z:
        data = z.read("pool/past_0.npz")
    # the actor of [8]: 157*8+8 + 8*10+10 = 1264 + 90 = 1354 weights and biases
    with pytest.raises(ValueError, match=r"1,354 weights and biases; the limit is 1,353 \(MAX_PARAMETERS"):
        NumpyPolicy.from_bytes(data, max_parameters=1353)
    assert NumpyPolicy.from_bytes(data, max_parameters=1354).obs_size == 157
    with np.load(io.BytesIO(data), allow_pickle=False) as f:
        members = {k: _save(f[k]) for k in f.files}
    members["w0"] = _forged_npy((2**20, 2**20))
    message, peak = _refused(lambda: NumpyPolicy.from_bytes(_npz_with(members)))
    assert "declares shape (1048576, 1048576)" in message and peak < 8 * MiB


# ---- ONNX exports -------------------------------------------------------------------------------
onnx = pytest.importorskip("onnx")


def _export_copy(tmp_path: Path, edit=None, name: str = "x") -> Path:
    """The shipped Tapeo export, edited by ``edit(model_proto)``, written without its card
    (loaded with ``verify=False``)."""
    proto = onnx.load(str(OPPONENTS / "tapeo_ppo.onnx"), load_external_data=False)
    if edit is not None:
        edit(proto)
    out = tmp_path / f"{name}.onnx"
    out.write_bytes(proto.SerializeToString())
    return out


def _no_session_built(monkeypatch) -> None:
    import onnxruntime

    def built(*args, **kwargs):
        raise AssertionError("an inference session was built")

    monkeypatch.setattr(onnxruntime, "InferenceSession", built)


def test_the_numbers_an_export_stores_are_counted_from_its_dims(tmp_path, monkeypatch):
    from hod.agents.onnx_policy import OnnxPolicy, check_graph_tensors

    # the shipped Tapeo actor [256, 256] on obs 157, 10 actions: 157*256+256 + 256*256+256 + 256*10+10
    # = 40,448 + 65,792 + 2,570 = 108,810 weights and biases, plus two one-number constants (the
    # masked logits' fill value and ConstantOfShape's value): 108,812
    assert check_graph_tensors((OPPONENTS / "tapeo_ppo.onnx").read_bytes(), "tapeo_ppo.onnx") == 108812
    path = _export_copy(tmp_path)
    monkeypatch.setattr(model_card, "MAX_PARAMETERS", 108811)
    with pytest.raises(CheckpointError, match=r"more than 108,811 numbers.*MAX_PARAMETERS = 108,811"):
        OnnxPolicy(path, verify=False)
    monkeypatch.setattr(model_card, "MAX_PARAMETERS", 108812)
    assert OnnxPolicy(path, verify=False).num_actions == 10


def test_an_export_declaring_huge_initializers_is_refused_before_a_session_is_built(tmp_path, monkeypatch):
    from hod.agents.onnx_policy import OnnxPolicy

    def add_huge(proto):
        t = proto.graph.initializer.add()
        t.name, t.data_type = "junk", onnx.TensorProto.FLOAT
        t.dims.extend([2**20, 2**20])   # 2**40 floats declared, no data

    path = _export_copy(tmp_path, add_huge)
    _no_session_built(monkeypatch)
    with pytest.raises(CheckpointError, match=r"initializer 'junk' takes the count over.*MAX_PARAMETERS = 16,777,216"):
        OnnxPolicy(path, verify=False)


def test_a_constant_of_shape_fed_by_a_constant_is_refused_before_a_session_is_built(tmp_path, monkeypatch):
    """The critic's shape bomb: ConstantOfShape given a constant shape [2**15, 2**15] (a few bytes
    in the file, 2**30 floats = 4 GiB at run time)."""
    from onnx import helper, numpy_helper

    from hod.agents.onnx_policy import OnnxPolicy

    def bomb(proto):
        node = next(n for n in proto.graph.node if n.op_type == "ConstantOfShape")
        shape = numpy_helper.from_array(np.array([2**15, 2**15], np.int64), "bomb_shape")
        proto.graph.node.insert(0, helper.make_node("Constant", [], ["bomb_shape"], value=shape))
        node.input[0] = "bomb_shape"

    path = _export_copy(tmp_path, bomb)
    _no_session_built(monkeypatch)
    with pytest.raises(CheckpointError, match=r"\(ConstantOfShape\) takes its shape from \['bomb_shape'\], not from "
                                              r"a Shape node"):
        OnnxPolicy(path, verify=False)


@pytest.mark.parametrize("op, domain", [("Expand", ""), ("Tile", ""), ("Loop", ""), ("Gemm", "com.microsoft")])
def test_an_operator_no_export_uses_is_refused_naming_the_legal_ones(op, domain, tmp_path, monkeypatch):
    from onnx import helper

    from hod.agents.onnx_policy import OnnxPolicy

    def add(proto):
        proto.graph.node.append(helper.make_node(op, ["observation"], ["extra"], name="extra", domain=domain))

    path = _export_copy(tmp_path, add)
    _no_session_built(monkeypatch)
    shown = f"{domain}:{op}" if domain else op
    with pytest.raises(CheckpointError, match=rf"node 'extra' uses operator '{shown}', which a policy export does not; "
                                              rf"legal operators: \['Add', 'ArgMax', 'Cast'"):
        OnnxPolicy(path, verify=False)


def test_a_partial_shape_of_an_empty_initializer_is_refused(tmp_path, monkeypatch):
    """The critic's bypass of the ConstantOfShape rule: Shape(start=1) of a stored [0, 10**8]
    tensor (0 numbers stored) gives [10**8], from a Shape node; onnxruntime folded it into 400 MB."""
    from onnx import helper

    from hod.agents.onnx_policy import OnnxPolicy

    def bomb(proto):
        node = next(n for n in proto.graph.node if n.op_type == "ConstantOfShape")
        t = proto.graph.initializer.add()
        t.name, t.data_type = "z0", onnx.TensorProto.FLOAT
        t.dims.extend([0, 10**8])
        proto.graph.node.insert(0, helper.make_node("Shape", ["z0"], ["z_shape"], name="zs", start=1))
        node.input[0] = "z_shape"

    path = _export_copy(tmp_path, bomb)
    _no_session_built(monkeypatch)
    with pytest.raises(CheckpointError, match=r"node 'zs' \(Shape\) takes part of a shape \(start/end\)"):
        OnnxPolicy(path, verify=False)


def test_a_broadcast_that_builds_a_large_value_is_refused_by_its_inferred_shape(tmp_path, monkeypatch):
    """Add of a stored [10,000, 1] and [1, 10,000] (20,000 numbers stored, within MAX_PARAMETERS)
    would compute 10,000 * 10,000 = 100,000,000 numbers: over MAX_LAYER_WIDTH = 65,536 per row."""
    from onnx import helper, numpy_helper

    from hod.agents.onnx_policy import OnnxPolicy

    def broadcast(proto):
        for name, shape in (("col", (10_000, 1)), ("row", (1, 10_000))):
            proto.graph.initializer.append(numpy_helper.from_array(np.zeros(shape, np.float32), name))
        proto.graph.node.append(helper.make_node("Add", ["col", "row"], ["square"], name="sq"))
        proto.graph.output.append(helper.make_tensor_value_info("square", onnx.TensorProto.FLOAT, None))

    path = _export_copy(tmp_path, broadcast)
    _no_session_built(monkeypatch)
    with pytest.raises(CheckpointError, match=r"'square' would hold 100,000,000 numbers per batch row \(shape "
                                              r"\[10000, 10000\]\); the limit is 65,536 \(MAX_LAYER_WIDTH"):
        OnnxPolicy(path, verify=False)


def test_a_node_carrying_a_subgraph_is_refused(tmp_path, monkeypatch):
    from onnx import helper

    from hod.agents.onnx_policy import OnnxPolicy

    def nest(proto):
        body = helper.make_graph([], "body", [], [])
        proto.graph.node.append(helper.make_node("Identity", ["observation"], ["same"], name="idg", body=body))

    path = _export_copy(tmp_path, nest)
    _no_session_built(monkeypatch)
    with pytest.raises(CheckpointError, match=r"node 'idg' \(Identity\) carries a subgraph"):
        OnnxPolicy(path, verify=False)


def test_every_export_the_exporter_writes_passes_the_operator_check(tmp_path):
    """Both activations at the first and last opset offered (14, 20) export graphs the loader
    accepts: the allow-list holds what the exporter writes."""
    from gymnasium import spaces

    from hod.agents.onnx_policy import check_graph_operators
    from hod.training.checkpoint import new_model
    from hod.training.export import MAX_OPSET, actor_onnx_bytes

    for activation in ("tanh", "relu"):
        card = {"format": MODEL_CARD_FORMAT, "card_version": 1, "game": "tapeo", "player_counts": [2],
                "obs_layout_version": layout_version("tapeo"), "obs_size": 157, "num_actions": 10,
                "algorithm": "MaskablePPO", "policy": {"net_arch": [8], "activation": activation}}
        model = new_model(card, spaces.Box(-1.0, 1.0, (157,), np.float32))
        for opset in (14, MAX_OPSET):
            proto = onnx.load_model_from_string(actor_onnx_bytes(model.policy, 157, 10, opset))
            check_graph_operators(proto, f"{activation} opset {opset}")


def test_an_export_with_external_data_is_refused(tmp_path, monkeypatch):
    from hod.agents.onnx_policy import OnnxPolicy

    def externalise(proto):
        t = next(t for t in proto.graph.initializer if t.name == "head.bias")
        t.ClearField("raw_data")
        t.data_location = onnx.TensorProto.EXTERNAL
        for k, v in (("location", "/dev/zero"), ("length", str(2**40))):
            e = t.external_data.add()
            e.key, e.value = k, v

    path = _export_copy(tmp_path, externalise)
    _no_session_built(monkeypatch)
    with pytest.raises(CheckpointError, match=r"initializer 'head.bias' keeps its data in an external file; refused"):
        OnnxPolicy(path, verify=False)


def test_the_expert_iteration_warm_start_reads_exports_under_the_same_checks(tmp_path):
    from hod.training.expert_iteration import load_onnx_actor

    def externalise(proto):
        t = next(t for t in proto.graph.initializer if t.name == "body.0.weight")
        t.ClearField("raw_data")
        t.data_location = onnx.TensorProto.EXTERNAL
        e = t.external_data.add()
        e.key, e.value = "location", "weights.bin"

    (tmp_path / "weights.bin").write_bytes(bytes(256 * 157 * 4))
    path = _export_copy(tmp_path, externalise)
    with pytest.raises(CheckpointError, match=r"initializer 'body.0.weight' keeps its data in an external file"):
        load_onnx_actor(None, path)   # refused before the policy is touched


def test_an_export_file_over_the_limit_is_refused_before_reading(tmp_path, monkeypatch):
    from hod.agents.onnx_policy import OnnxPolicy

    path = tmp_path / "t.onnx"
    shutil.copy(OPPONENTS / "tapeo_ppo.onnx", path)
    size = path.stat().st_size
    monkeypatch.setattr(model_card, "MAX_FILE_BYTES", size - 1)
    with pytest.raises(CheckpointError, match=rf"larger than {size - 1:,} bytes, the limit MAX_FILE_BYTES"):
        OnnxPolicy(path, verify=False)
    monkeypatch.setattr(model_card, "MAX_FILE_BYTES", size)
    OnnxPolicy(path, verify=False)


def test_deeply_nested_cards_and_golden_files_are_checkpoint_errors(tmp_path):
    from hod.agents.onnx_policy import OnnxPolicy
    from hod.training.export import load_golden

    path = tmp_path / "t.onnx"
    shutil.copy(OPPONENTS / "tapeo_ppo.onnx", path)
    path.with_suffix(".json").write_text("[" * 100000)
    with pytest.raises(CheckpointError, match="nested too deeply"):
        OnnxPolicy(path)
    golden = tmp_path / "t.golden.json"
    golden.write_text("[" * 100000)
    with pytest.raises(CheckpointError, match="nested too deeply"):
        load_golden(golden)


# ---- --net-arch: one limit, checked where the value enters ---------------------------------------------
TINY_RUN = ["--players", "2", "--engine", "single", "--total-steps", "64", "--eval-every", "0", "--tables", "2", "--n-steps", "32", "--batch-size", "64",
            "--n-epochs", "1", "--no-progress"]


@pytest.mark.parametrize("widths, limit", [
    (["65537"], "less than or equal to 65536"),
    # 2*(157*4096+4096 + 4096*4096+4096) + (4096*10+10) + (4096+1) = 34,902,027 parameters
    (["4096", "4096"], "a network of 34,902,027 parameters.*legal: at most 16,777,216 \\(MAX_PARAMETERS"),
    (["1"] * 33, "at most 32 items"),
])
def test_train_refuses_a_net_arch_its_loaders_would_refuse(widths, limit, tmp_path, capsys):
    import re

    from hod.training.train import main

    out = tmp_path / "run"
    assert main(["--game", "tapeo", "--out", str(out), "--net-arch", *widths, *TINY_RUN]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: net_arch") and err.count("\n") == 1, err
    assert re.search(limit, err), err
    assert "MAX_LAYER" in err or "MAX_PARAMETERS" in err
    assert not out.exists()   # refused before training


def test_the_config_and_the_loaders_share_the_parameter_cap(small, tmp_path, monkeypatch, capsys):
    from hod.core.errors import ConfigError
    from hod.training.config import smoke_config, validate_config
    from hod.training.export import main as export_main

    cfg = smoke_config("tapeo", net_arch=[8])   # 2627 parameters (test_the_card_gives_the_network_s_exact_size)
    monkeypatch.setattr(model_card, "MAX_PARAMETERS", 2626)
    with pytest.raises(ConfigError, match=r"a network of 2,627 parameters.*at most 2,626 \(MAX_PARAMETERS"):
        validate_config("tapeo", cfg)
    assert export_main([str(small[0]), "--out", str(tmp_path / "export")]) == 2   # the export: the same cap
    assert "2,627 parameters; the limit is MAX_PARAMETERS = 2,626" in capsys.readouterr().err
    assert not (tmp_path / "export").exists()
    monkeypatch.setattr(model_card, "MAX_PARAMETERS", 2627)
    validate_config("tapeo", cfg)


def test_an_imitation_cache_is_measured_from_its_headers(tmp_path):
    import hod.training.imitation as imitation

    kw = dict(game="tapeo", teacher="greedy", player_counts=[2], num_decisions=20, seed=3)
    first = imitation.cached_teacher_decisions(str(tmp_path), **kw)
    (cache,) = tmp_path.glob("bc_*.npz")
    with np.load(cache, allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files}
    assert arrays["action_mask"].shape == (20, 10)
    arrays["action_mask"] = np.zeros((20, 2**21), np.int8)   # 40 MiB of zeros, deflated to KBs
    cache.write_bytes(_npz(arrays, compressed=True))
    tracemalloc.start()
    try:
        with pytest.warns(UserWarning, match="unusable teacher-decision cache"):
            again = imitation.cached_teacher_decisions(str(tmp_path), **kw)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * MiB   # the 40 MiB array was never read; the decisions were recorded again
    assert all(np.array_equal(first[k], again[k]) for k in first)
