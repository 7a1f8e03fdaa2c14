"""ember.save / ember.load against real torch.save / torch.load."""
import collections
import fractions
import io
import os
import pathlib
import pickle
import struct
import zipfile

import numpy as np
import pytest
import torch

import ember
from ember import serialization

DTYPES = ["float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
          "bool", "complex64"]


def as_numpy(t):
    """A float64/complex/bool NumPy copy of an ember or torch tensor, for comparisons."""
    if isinstance(t, torch.Tensor):
        t = t.detach()
        return (t.to(torch.float64) if t.dtype in (torch.bfloat16, torch.float16) else t).numpy()
    data = t.detach().numpy()
    return data.astype(np.float64) if data.dtype.kind == "V" or data.dtype.name == "bfloat16" else data


def sample(lib, dtype_name):
    dtype = getattr(lib, dtype_name)
    return (lib.arange(12) % 7 - 3).to(dtype).reshape(3, 4)


# --- ember writes, torch reads ------------------------------------------------------------
@pytest.mark.parametrize("dtype_name", DTYPES)
def test_torch_reads_ember_file_of_each_dtype(tmp_path, dtype_name):
    x = sample(ember, dtype_name)
    ember.save({"x": x}, tmp_path / "t.pt")
    y = torch.load(tmp_path / "t.pt", weights_only=True)["x"]
    assert y.dtype == getattr(torch, dtype_name)
    np.testing.assert_array_equal(as_numpy(y), as_numpy(x))


@pytest.mark.parametrize("dtype_name", DTYPES)
def test_ember_reads_torch_file_of_each_dtype(tmp_path, dtype_name):
    x = sample(torch, dtype_name)
    torch.save({"x": x}, tmp_path / "t.pt")
    y = ember.load(tmp_path / "t.pt")["x"]
    assert y.dtype == getattr(ember, dtype_name)
    np.testing.assert_array_equal(as_numpy(y), as_numpy(x))


def test_ember_file_layout_matches_torch(tmp_path):
    ember.save({"a": ember.ones(3), "b": ember.zeros(2, dtype=ember.int64)}, tmp_path / "model.pt")
    with zipfile.ZipFile(tmp_path / "model.pt") as archive:
        names = archive.namelist()
        assert names == ["model/data.pkl", "model/.format_version", "model/.storage_alignment",
                         "model/byteorder", "model/data/0", "model/data/1", "model/version",
                         "model/.data/serialization_id"]
        assert archive.read("model/byteorder") == b"little"
        assert archive.read("model/version") == b"3\n"
        assert archive.read("model/.storage_alignment") == b"64"
        assert all(info.compress_type == zipfile.ZIP_STORED for info in archive.infolist())
        raw = (tmp_path / "model.pt").read_bytes()
        for info in archive.infolist():
            name_len, extra_len = struct.unpack("<HH", raw[info.header_offset + 26:info.header_offset + 30])
            assert (info.header_offset + 30 + name_len + extra_len) % 64 == 0, info.filename
        pickled = archive.read("model/data.pkl")
    assert pickled[:2] == b"\x80\x02"
    assert b"torch._utils\n_rebuild_tensor_v2" in pickled and b"torch\nFloatStorage" in pickled


def test_state_dict_round_trip_with_torch(tmp_path):
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    torch.save(net.state_dict(), tmp_path / "torch.pt")
    state = ember.load(tmp_path / "torch.pt")
    assert isinstance(state, collections.OrderedDict) and list(state) == list(net.state_dict())
    mine = ember.nn.Sequential(ember.nn.Linear(4, 3), ember.nn.ReLU(), ember.nn.Linear(3, 2))
    mine.load_state_dict(state)
    x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
    expected = net(torch.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(mine(ember.from_numpy(x)).detach().numpy(), expected, rtol=1e-6)
    ember.save(mine.state_dict(), tmp_path / "ember.pt")
    back = torch.load(tmp_path / "ember.pt", weights_only=True)
    for key, value in net.state_dict().items():
        assert torch.equal(back[key], value)


def test_optimizer_state_dict_round_trip_with_torch(tmp_path):
    torch.manual_seed(0)
    w = torch.nn.Parameter(torch.randn(3))
    opt = torch.optim.Adam([w], lr=0.1)
    w.sum().backward()
    opt.step()
    torch.save(opt.state_dict(), tmp_path / "opt.pt")
    state = ember.load(tmp_path / "opt.pt")
    assert state["param_groups"][0]["betas"] == (0.9, 0.999)
    assert state["param_groups"][0]["params"] == [0]
    np.testing.assert_array_equal(state["state"][0]["exp_avg"].numpy(), opt.state[w]["exp_avg"].numpy())
    ember.save(state, tmp_path / "again.pt")
    again = torch.load(tmp_path / "again.pt", weights_only=True)
    assert again["param_groups"] == opt.state_dict()["param_groups"]
    assert torch.equal(again["state"][0]["exp_avg_sq"], opt.state[w]["exp_avg_sq"])
    assert torch.equal(again["state"][0]["step"], opt.state[w]["step"])
    opt.load_state_dict(again)


def test_nested_containers_and_plain_values(tmp_path):
    obj = {"list": [ember.ones(2), 3, 2.5, "text", None, True],
           "tuple": (ember.zeros(1), {"deep": [ember.arange(3)]}),
           "bytes": b"\x00\xff", "size": ember.Size([2, 3]), "dtype": ember.float16,
           "device": ember.device("cpu"), "set": {1, 2}}
    ember.save(obj, tmp_path / "n.pt")
    for loaded in (torch.load(tmp_path / "n.pt", weights_only=True), ember.load(tmp_path / "n.pt")):
        assert loaded["list"][1:] == [3, 2.5, "text", None, True]
        assert loaded["bytes"] == b"\x00\xff" and loaded["set"] == {1, 2}
        assert list(loaded["tuple"][1]["deep"][0].tolist()) == [0, 1, 2]
        assert tuple(loaded["size"]) == (2, 3)
    loaded = ember.load(tmp_path / "n.pt")
    assert loaded["dtype"] is ember.float16 and isinstance(loaded["size"], ember.Size)
    assert loaded["device"] == ember.device("cpu")


# --- strides, offsets and shared storages ---------------------------------------------------
def test_non_contiguous_tensor_keeps_its_strides(tmp_path):
    base = ember.arange(12.0).reshape(3, 4)
    ember.save({"t": base.t(), "col": base[:, 1]}, tmp_path / "s.pt")
    theirs = torch.load(tmp_path / "s.pt", weights_only=True)
    assert theirs["t"].stride() == (1, 4) and theirs["col"].stride() == (4,)
    assert theirs["col"].storage_offset() == 1
    assert theirs["t"].untyped_storage().nbytes() == 48   # the storage, not a copy per view
    np.testing.assert_array_equal(theirs["t"].numpy(), base.t().numpy())
    ours = ember.load(tmp_path / "s.pt")
    assert ours["t"].stride() == (1, 4) and ours["col"].stride() == (4,)
    np.testing.assert_array_equal(ours["col"].numpy(), [1, 5, 9])


def test_torch_non_contiguous_tensor_loads_with_strides(tmp_path):
    x = torch.arange(24.0).reshape(2, 3, 4).permute(2, 0, 1)[1:]
    torch.save(x, tmp_path / "p.pt")
    y = ember.load(tmp_path / "p.pt")
    assert y.stride() == x.stride() and tuple(y.shape) == tuple(x.shape)
    assert y.storage_offset() == x.storage_offset()
    np.testing.assert_array_equal(y.numpy(), x.numpy())


@pytest.mark.parametrize("writer", ["ember", "torch"])
def test_views_of_one_storage_stay_shared(tmp_path, writer):
    lib = ember if writer == "ember" else torch
    base = lib.arange(6.0)
    lib.save([base, base[2:], base.reshape(2, 3).t()], tmp_path / "v.pt")
    a, b, c = ember.load(tmp_path / "v.pt")
    b.add_(10)
    assert a.tolist() == [0, 1, 12, 13, 14, 15]
    assert c.t().reshape(-1).tolist() == a.tolist()
    assert a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
    if writer == "ember":
        ta, tb, _ = torch.load(tmp_path / "v.pt", weights_only=True)
        assert ta.untyped_storage().data_ptr() == tb.untyped_storage().data_ptr()


@pytest.mark.parametrize("writer", ["ember", "torch"])
def test_parameter_round_trip(tmp_path, writer):
    lib = ember if writer == "ember" else torch
    p = lib.nn.Parameter(lib.ones(2, 2))
    frozen = lib.nn.Parameter(lib.zeros(1), requires_grad=False)
    lib.save({"p": p, "frozen": frozen}, tmp_path / "p.pt")
    ours = ember.load(tmp_path / "p.pt")
    assert isinstance(ours["p"], ember.nn.Parameter) and ours["p"].requires_grad
    assert isinstance(ours["frozen"], ember.nn.Parameter) and not ours["frozen"].requires_grad
    theirs = torch.load(tmp_path / "p.pt", weights_only=True)
    assert isinstance(theirs["p"], torch.nn.Parameter) and theirs["p"].requires_grad
    assert not theirs["frozen"].requires_grad


def test_requires_grad_of_plain_tensor_is_kept(tmp_path):
    ember.save(ember.ones(2, requires_grad=True), tmp_path / "g.pt")
    assert torch.load(tmp_path / "g.pt", weights_only=True).requires_grad
    assert ember.load(tmp_path / "g.pt").requires_grad


# --- files, map_location, mmap ----------------------------------------------------------------
def test_paths_path_objects_and_file_objects(tmp_path):
    x = ember.arange(4.0)
    ember.save(x, str(tmp_path / "a.pt"))
    ember.save(x, pathlib.Path(tmp_path / "b.pt"))
    buffer = io.BytesIO()
    ember.save(x, buffer)
    buffer.seek(0)
    assert torch.load(buffer, weights_only=True).tolist() == [0, 1, 2, 3]
    buffer.seek(0)
    for source in (str(tmp_path / "a.pt"), tmp_path / "b.pt", buffer):
        assert ember.load(source).tolist() == [0, 1, 2, 3]
    with open(tmp_path / "a.pt", "rb") as f:
        assert ember.load(f).tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize("map_location", ["cpu", ember.device("cpu"), {"cpu": "cpu"},
                                          lambda storage, location: storage, None])
def test_map_location_forms(tmp_path, map_location):
    torch.save({"x": torch.arange(3.0)}, tmp_path / "m.pt")
    y = ember.load(tmp_path / "m.pt", map_location=map_location)["x"]
    assert y.device == ember.device("cpu") and y.tolist() == [0, 1, 2]


def test_map_location_callable_gets_storage_and_location(tmp_path):
    torch.save(torch.arange(3.0), tmp_path / "m.pt")
    seen = []
    ember.load(tmp_path / "m.pt", map_location=lambda storage, location: seen.append(location))
    assert seen == ["cpu"]


def test_mmap_maps_storages_from_the_file(tmp_path):
    torch.save({"w": torch.arange(20.0).reshape(4, 5).t(), "i": torch.arange(3)}, tmp_path / "mm.pt")
    state = ember.load(tmp_path / "mm.pt", mmap=True)
    np.testing.assert_array_equal(state["w"].numpy(), torch.arange(20.0).reshape(4, 5).t().numpy())
    owner = state["w"].numpy()
    while not isinstance(owner, np.memmap) and isinstance(owner.base, np.ndarray):
        owner = owner.base
    assert isinstance(owner, np.memmap) and owner.filename == str(tmp_path / "mm.pt")
    state["w"].add_(1)   # copy-on-write: the file stays as it was
    assert ember.load(tmp_path / "mm.pt")["w"][0, 0].item() == 0


def test_mmap_needs_a_path():
    buffer = io.BytesIO()
    ember.save(ember.ones(1), buffer)
    buffer.seek(0)
    with pytest.raises(ValueError, match="file path"):
        ember.load(buffer, mmap=True)


def test_legacy_format_written_by_torch(tmp_path):
    torch.manual_seed(0)
    base = torch.randn(4, 3)
    obj = collections.OrderedDict(w=base, t=base.t(), row=base[1], i=torch.arange(5),
                                  h=torch.ones(2, dtype=torch.float16), p=torch.nn.Parameter(torch.ones(2)))
    torch.save(obj, tmp_path / "old.pt", _use_new_zipfile_serialization=False)
    assert not zipfile.is_zipfile(tmp_path / "old.pt")
    state = ember.load(tmp_path / "old.pt")
    for key, value in obj.items():
        np.testing.assert_array_equal(as_numpy(state[key]), as_numpy(value))
    assert state["t"].stride() == (1, 3) and isinstance(state["p"], ember.nn.Parameter)
    state["w"].zero_()
    assert state["row"].tolist() == [0, 0, 0]


# --- weights_only ---------------------------------------------------------------------------
class _Exploit:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (os.system, (f"touch {self.path}",))


def _zip_checkpoint_with(pickled):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("archive/data.pkl", pickled)
        archive.writestr("archive/byteorder", b"little")
        archive.writestr("archive/version", b"3\n")
    buffer.seek(0)
    return buffer


@pytest.mark.parametrize("fmt", ["zip", "legacy"])
def test_weights_only_refuses_arbitrary_globals_without_running_them(tmp_path, fmt):
    marker = tmp_path / "pwned"
    pickled = pickle.dumps({"x": _Exploit(marker)}, protocol=2)
    if fmt == "zip":
        source = _zip_checkpoint_with(pickled)
    else:
        source = io.BytesIO(pickle.dumps(serialization._LEGACY_MAGIC, 2)
                            + pickle.dumps(serialization._LEGACY_PROTOCOL, 2)
                            + pickle.dumps({"little_endian": True}, 2) + pickled)
    with pytest.raises(pickle.UnpicklingError, match=r"(?s)Weights only load failed.*Unsupported global: "
                                                     r"GLOBAL (os|posix)\.system"):
        ember.load(source)
    assert not marker.exists()


def test_weights_only_false_loads_trusted_objects_and_safe_globals_allow_them():
    source = _zip_checkpoint_with(pickle.dumps({"f": fractions.Fraction(1, 3)}, protocol=2))
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL fractions.Fraction"):
        ember.load(source)
    source.seek(0)
    assert ember.load(source, weights_only=False)["f"] == fractions.Fraction(1, 3)
    with serialization.safe_globals([fractions.Fraction]):
        assert fractions.Fraction in serialization.get_safe_globals()
        source.seek(0)
        assert ember.load(source)["f"] == fractions.Fraction(1, 3)
    assert fractions.Fraction not in serialization.get_safe_globals()
    serialization.add_safe_globals([fractions.Fraction])
    try:
        source.seek(0)
        assert ember.load(source)["f"] == fractions.Fraction(1, 3)
    finally:
        serialization.clear_safe_globals()


# --- safe writes and damaged files -------------------------------------------------------------
def test_failed_save_leaves_old_file_and_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.pt"
    ember.save({"a": ember.ones(3), "b": ember.ones(3)}, path)
    before = path.read_bytes()
    calls = []
    real_write = serialization._write_storage

    def failing_write(archive, name, flat):
        calls.append(name)
        if len(calls) == 2:
            raise OSError("disk full")
        real_write(archive, name, flat)

    monkeypatch.setattr(serialization, "_write_storage", failing_write)
    with pytest.raises(OSError, match="disk full"):
        ember.save({"a": ember.zeros(3), "b": ember.zeros(3)}, path)
    assert len(calls) == 2
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["ckpt.pt"]
    assert ember.load(path)["b"].tolist() == [1, 1, 1]


def test_save_to_path_replaces_old_file(tmp_path):
    path = tmp_path / "ckpt.pt"
    ember.save(ember.ones(1), path)
    ember.save(ember.zeros(1), path)
    assert ember.load(path).tolist() == [0] and os.listdir(tmp_path) == ["ckpt.pt"]


@pytest.mark.parametrize("cut", [0.5, 0.9, 0.2])
def test_truncated_checkpoint_is_reported_as_damaged(tmp_path, cut):
    ember.save({"w": ember.ones(100)}, tmp_path / "full.pt")
    raw = (tmp_path / "full.pt").read_bytes()
    (tmp_path / "cut.pt").write_bytes(raw[:int(len(raw) * cut)])
    with pytest.raises(serialization.CheckpointError, match="damaged"):
        ember.load(tmp_path / "cut.pt")


def test_garbage_file_is_reported_as_damaged(tmp_path):
    (tmp_path / "junk.pt").write_bytes(b"not a checkpoint at all" * 10)
    with pytest.raises(RuntimeError, match="damaged"):
        ember.load(tmp_path / "junk.pt")


def test_corrupted_pickle_is_reported_as_damaged():
    source = _zip_checkpoint_with(b"\x80\x02}q\x00(X\x01")
    with pytest.raises(serialization.CheckpointError, match="damaged"):
        ember.load(source)


def test_tensor_outside_its_storage_is_reported_as_damaged(tmp_path):
    torch.save(torch.ones(4), tmp_path / "ok.pt")
    with zipfile.ZipFile(tmp_path / "ok.pt") as archive:
        records = {name: archive.read(name) for name in archive.namelist()}
    prefix = "ok/"
    records[prefix + "data/0"] = records[prefix + "data/0"][:8]
    with zipfile.ZipFile(tmp_path / "bad.pt", "w") as archive:
        for name, data in records.items():
            archive.writestr(name, data)
    with pytest.raises(serialization.CheckpointError, match="damaged"):
        ember.load(tmp_path / "bad.pt")


def test_unsupported_dtype_is_named(tmp_path):
    torch.save({"x": torch.zeros(2, dtype=torch.complex32)}, tmp_path / "u.pt")
    with pytest.raises(TypeError, match="complex32"):
        ember.load(tmp_path / "u.pt")


NEWER_DTYPES = ["uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
                "float8_e5m2fnuz", "float8_e8m0fnu"]


@pytest.mark.parametrize("name", NEWER_DTYPES)
def test_newer_dtypes_round_trip_with_torch(tmp_path, name):
    """torch saves these dtypes' storages untyped, with the dtype beside them
    (``_rebuild_tensor_v3``): ember writes and reads them so."""
    values = [1.0, 2.0, 3.0, 4.0, 6.0, 8.0]
    x = ember.tensor(values).to(getattr(ember, name)).reshape(2, 3)[:, ::2]
    ember.save({"x": x, "dtype": x.dtype, "q": ember.qint8}, tmp_path / "e.pt")
    t = torch.load(tmp_path / "e.pt")
    assert t["x"].dtype == t["dtype"] == getattr(torch, name) and t["q"] is torch.qint8
    assert t["x"].float().tolist() == x.float().tolist()
    back = ember.load(tmp_path / "e.pt")
    assert back["x"].dtype is back["dtype"] is x.dtype and back["q"] is ember.qint8
    assert back["x"].float().tolist() == x.float().tolist()
    torch.save({"x": torch.tensor(values).to(getattr(torch, name))[1:]}, tmp_path / "t.pt")
    loaded = ember.load(tmp_path / "t.pt")["x"]
    assert loaded.dtype is getattr(ember, name)
    assert loaded.float().tolist() == torch.tensor(values).to(getattr(torch, name))[1:].float().tolist()


def test_resaving_loaded_views_keeps_one_storage(tmp_path):
    base = ember.arange(6.0)
    ember.save([base, base[2:]], tmp_path / "a.pt")
    a, b = ember.load(tmp_path / "a.pt")
    ember.save([a, b.reshape(2, 2).t()], tmp_path / "b.pt")
    with zipfile.ZipFile(tmp_path / "b.pt") as archive:
        assert [n for n in archive.namelist() if "/data/" in n] == ["b/data/0"]
    x, y = torch.load(tmp_path / "b.pt", weights_only=True)
    assert y.tolist() == [[2, 4], [3, 5]] and y.storage_offset() == 2
    assert x.untyped_storage().data_ptr() == y.untyped_storage().data_ptr()


def test_ember_optimizer_state_loads_into_torch_optimizer(tmp_path):
    w = ember.nn.Parameter(ember.ones(3))
    opt = ember.optim.Adam([w], lr=0.1)
    (w * w).sum().backward()
    opt.step()
    ember.save({"opt": opt.state_dict(), "w": w}, tmp_path / "o.pt")
    saved = torch.load(tmp_path / "o.pt", weights_only=True)
    tw = torch.nn.Parameter(saved["w"].detach().clone())
    topt = torch.optim.Adam([tw], lr=0.1)
    topt.load_state_dict(saved["opt"])
    np.testing.assert_array_equal(topt.state[tw]["exp_avg"].numpy(), opt.state[w]["exp_avg"].numpy())
    tw.grad = torch.from_numpy(2 * w.detach().numpy().copy())
    opt.zero_grad()
    (w * w).sum().backward()
    topt.step()
    opt.step()
    np.testing.assert_allclose(tw.detach().numpy(), w.detach().numpy(), rtol=1e-6)
