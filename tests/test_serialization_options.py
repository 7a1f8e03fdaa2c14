"""ember.save's pickle_module / pickle_protocol / legacy-format options and ember.load's
pickle_module, against torch.save / torch.load."""
import collections
import io
import pickle
import types
import zipfile

import numpy as np
import pytest
import torch

import ember


def _as_numpy(t):
    t = t.detach()
    if isinstance(t, torch.Tensor):
        return (t.to(torch.float64) if t.dtype in (torch.bfloat16, torch.float16) else t).numpy()
    return t.to(ember.float64).numpy() if t.dtype in (ember.bfloat16, ember.float16) else t.numpy()


def _checkpoint(lib):
    base = lib.arange(12, dtype=lib.float32).reshape(4, 3) / 7
    return collections.OrderedDict(
        w=base, t=base.t(), row=base[1], i=lib.arange(5), h=lib.ones(2, dtype=lib.float16) / 3,
        b=lib.linspace(0, 1, 6, dtype=lib.bfloat16), flag=lib.tensor([True, False]),
        p=lib.nn.Parameter(lib.ones(2, dtype=lib.float64)), frozen=lib.nn.Parameter(lib.zeros(3), requires_grad=False),
        nested={"list": [lib.full((2,), 5), 3.5, "text"]}, n=lib.tensor(2.5))


def _assert_same(got, want):
    assert set(got) == set(want)
    for key, value in want.items():
        if key == "nested":
            np.testing.assert_array_equal(_as_numpy(got[key]["list"][0]), _as_numpy(value["list"][0]))
            assert got[key]["list"][1:] == value["list"][1:]
            continue
        assert tuple(got[key].shape) == tuple(value.shape) and str(got[key].dtype)[6:] == str(value.dtype)[6:]
        np.testing.assert_array_equal(_as_numpy(got[key]), _as_numpy(value))
        assert tuple(got[key].stride()) == tuple(value.stride())
    for key in ("p", "frozen"):
        assert type(got[key]).__name__ == "Parameter"
        assert got[key].requires_grad == want[key].requires_grad


def test_torch_reads_embers_legacy_file(tmp_path):
    ember.save(_checkpoint(ember), tmp_path / "old.pt", _use_new_zipfile_serialization=False)
    assert not zipfile.is_zipfile(tmp_path / "old.pt")
    state = torch.load(tmp_path / "old.pt")          # weights_only=True
    _assert_same(state, _checkpoint(torch))
    state["w"].zero_()                                # the views share their base's storage
    assert state["row"].tolist() == [0, 0, 0] and state["t"][0].tolist() == [0, 0, 0, 0]


def test_ember_reads_torchs_legacy_file(tmp_path):
    torch.save(_checkpoint(torch), tmp_path / "old.pt", _use_new_zipfile_serialization=False)
    state = ember.load(tmp_path / "old.pt")
    _assert_same(state, _checkpoint(ember))
    state["w"].zero_()
    assert state["row"].tolist() == [0, 0, 0]


def test_legacy_files_are_byte_compatible_in_layout():
    """The same object written by torch and ember in the legacy format has the same length,
    header pickles and storage records (the storage keys differ: torch's are addresses)."""
    ember_buffer, torch_buffer = io.BytesIO(), io.BytesIO()
    ember.save({"x": ember.arange(6.0)}, ember_buffer, _use_new_zipfile_serialization=False)
    torch.save({"x": torch.arange(6.0)}, torch_buffer, _use_new_zipfile_serialization=False)
    for buffer in (ember_buffer, torch_buffer):
        buffer.seek(0)
    headers = [[pickle.load(b) for _ in range(3)] for b in (ember_buffer, torch_buffer)]
    assert headers[0] == headers[1]
    assert ember_buffer.getvalue()[-32:] == torch_buffer.getvalue()[-32:]   # count + raw float32s


def test_legacy_round_trip_through_a_file_object_and_map_location():
    buffer = io.BytesIO()
    ember.save(_checkpoint(ember), buffer, _use_new_zipfile_serialization=False)
    buffer.seek(0)
    _assert_same(ember.load(buffer, map_location="cpu"), _checkpoint(ember))


@pytest.mark.filterwarnings("ignore:Detected pickle protocol")   # torch's, for protocols past 2
@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
@pytest.mark.parametrize("zip_format", [True, False])
def test_pickle_protocol_is_written_and_torch_reads_it(tmp_path, protocol, zip_format):
    path = tmp_path / "p.pt"
    ember.save(_checkpoint(ember), path, pickle_protocol=protocol,
               _use_new_zipfile_serialization=zip_format)
    # torch's weights-only unpickler has no FRAME opcode (protocols 4 and 5), even for its own files
    _assert_same(torch.load(path, weights_only=protocol < 4), _checkpoint(torch))
    _assert_same(ember.load(path), _checkpoint(ember))
    if zip_format:
        with zipfile.ZipFile(path) as archive:
            pickled = archive.read("p/data.pkl")
    else:
        pickled = path.read_bytes()
    assert pickled[:2] == bytes([0x80, protocol])
    torch.save(_checkpoint(torch), tmp_path / "torch.pt", pickle_protocol=protocol,
               _use_new_zipfile_serialization=zip_format)
    _assert_same(ember.load(tmp_path / "torch.pt"), _checkpoint(ember))


class _CountingPickler(pickle._Pickler):
    made = 0   # counted on this class, also for the subclasses torch and ember make

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        _CountingPickler.made += 1


class _CountingUnpickler(pickle.Unpickler):
    made = 0

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        _CountingUnpickler.made += 1


def _pickle_module():
    return types.SimpleNamespace(__name__="counting_pickle", Pickler=_CountingPickler,
                                 Unpickler=_CountingUnpickler, load=pickle.load, dump=pickle.dump)


@pytest.mark.parametrize("zip_format", [True, False])
def test_pickle_module_pickles_and_unpickles(tmp_path, zip_format):
    module = _pickle_module()
    _CountingPickler.made = _CountingUnpickler.made = 0
    ember.save(_checkpoint(ember), tmp_path / "m.pt", pickle_module=module,
               _use_new_zipfile_serialization=zip_format)
    assert _CountingPickler.made == 1
    _assert_same(torch.load(tmp_path / "m.pt"), _checkpoint(torch))
    _assert_same(ember.load(tmp_path / "m.pt", pickle_module=module), _checkpoint(ember))
    assert _CountingUnpickler.made >= 1
    _assert_same(torch.load(tmp_path / "m.pt", pickle_module=module), _checkpoint(torch))


def test_pickle_module_with_weights_only_is_refused_as_in_torch(tmp_path):
    ember.save({"x": ember.ones(2)}, tmp_path / "x.pt")
    torch.save({"x": torch.ones(2)}, tmp_path / "y.pt")
    for lib, path in ((ember, "x.pt"), (torch, "y.pt")):
        with pytest.raises(RuntimeError, match="Can not safely load weights when explicit pickle_module"):
            lib.load(tmp_path / path, pickle_module=pickle, weights_only=True)
        # an explicit pickle_module makes weights_only default to False: arbitrary globals load
        assert lib.load(tmp_path / path, pickle_module=pickle)["x"].tolist() == [1.0, 1.0]


def test_pickle_module_with_a_c_pickler_is_not_supported():
    module = types.SimpleNamespace(__name__="c_pickle", Pickler=pickle.Pickler, Unpickler=pickle.Unpickler)
    with pytest.raises(NotImplementedError, match="pure-Python pickle._Pickler"):
        ember.save({"x": ember.ones(1)}, io.BytesIO(), pickle_module=module)
