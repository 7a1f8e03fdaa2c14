"""ember's constants, layouts and default device against torch's: ``e``, ``pi``, ``inf``,
``nan``, ``newaxis``, ``strided`` / ``Tensor.layout``, ``get_default_device`` /
``set_default_device`` and ``with ember.device(...)`` around the factory functions."""
import math
import pickle
import threading

import numpy as np
import pytest
import torch

import ember


@pytest.mark.parametrize("name", ["e", "pi", "inf"])
def test_numeric_constants_are_torchs_floats(name):
    got, want = getattr(ember, name), getattr(torch, name)
    assert type(got) is type(want) is float
    assert got == want


def test_nan_and_newaxis():
    assert type(ember.nan) is float and math.isnan(ember.nan) and math.isnan(torch.nan)
    assert ember.newaxis is torch.newaxis is None
    x = np.arange(6.0).reshape(2, 3)
    assert ember.tensor(x)[:, ember.newaxis].shape == torch.tensor(x)[:, torch.newaxis].shape


def test_layouts_have_torchs_names_and_tensors_are_strided():
    names = sorted(n for n in dir(torch) if isinstance(getattr(torch, n), torch.layout)
                   and not n.startswith("_"))
    assert names == sorted(n for n in dir(ember) if isinstance(getattr(ember, n), ember.layout))
    for n in names:
        assert repr(getattr(ember, n)) == repr(getattr(torch, n)).replace("torch", "ember")
    t = ember.zeros(2, 3).t()
    assert t.layout is ember.strided and t.layout == ember.strided != ember.sparse_coo
    assert torch.zeros(2, 3).t().layout is torch.strided
    assert pickle.loads(pickle.dumps(ember.strided)) is ember.strided


def test_default_device_starts_on_the_cpu():
    assert ember.get_default_device() == ember.device("cpu")
    assert str(ember.get_default_device()) == str(torch.get_default_device()) == "cpu"
    assert type(ember.get_default_device()) is ember.device


# every factory function torch's DeviceContext gives the default device to (that ember has)
FACTORIES = [
    ("tensor", lambda lib: lib.tensor([1.0, 2.0])),
    ("as_tensor", lambda lib: lib.as_tensor([1, 2])),
    ("asarray", lambda lib: lib.asarray([1, 2])),
    ("scalar_tensor", lambda lib: lib.scalar_tensor(3.0)),
    ("zeros", lambda lib: lib.zeros(2, 3)),
    ("ones", lambda lib: lib.ones(2)),
    ("empty", lambda lib: lib.empty(2)),
    ("empty_strided", lambda lib: lib.empty_strided((2, 3), (1, 2))),
    ("full", lambda lib: lib.full((2,), 1.5)),
    ("arange", lambda lib: lib.arange(5)),
    ("linspace", lambda lib: lib.linspace(0, 1, 4)),
    ("logspace", lambda lib: lib.logspace(0, 1, 4)),
    ("eye", lambda lib: lib.eye(3)),
    ("rand", lambda lib: lib.rand(2)),
    ("randn", lambda lib: lib.randn(2)),
    ("randint", lambda lib: lib.randint(0, 5, (3,))),
    ("randperm", lambda lib: lib.randperm(4)),
    ("tril_indices", lambda lib: lib.tril_indices(3, 3)),
    ("triu_indices", lambda lib: lib.triu_indices(3, 3)),
]


@pytest.mark.parametrize("name,make", FACTORIES, ids=[f[0] for f in FACTORIES])
def test_factories_take_the_default_device(name, make):
    """With 'meta' as default, every factory call without ``device`` allocates there, as
    torch's do. An explicit ``device`` wins."""
    with torch.device("meta"):
        assert make(torch).device.type == "meta"
    with ember.device("meta"):
        assert make(ember).device.type == "meta"
    with ember.device("cpu"):
        assert make(ember).device == ember.device("cpu")
    ember.set_default_device("meta")
    try:
        assert make(ember).device.type == "meta"
    finally:
        ember.set_default_device(None)
    assert make(ember).device == ember.device("cpu")


def test_explicit_device_like_functions_and_from_numpy_ignore_the_default():
    a = np.zeros(3)
    with torch.device("meta"):
        assert torch.zeros(2, device="cpu").device.type == "cpu"
        assert torch.from_numpy(a).device.type == "cpu"
        assert torch.zeros_like(torch.zeros(2, device="cpu")).device.type == "cpu"
    src = ember.zeros(2)
    with ember.device("meta"):
        assert ember.zeros(2, device="cpu").device.type == "cpu"
        assert ember.from_numpy(a).device.type == "cpu"
        for like in (ember.zeros_like, ember.ones_like, ember.empty_like, ember.rand_like,
                     ember.randn_like):
            assert like(src).device.type == "cpu"
        assert ember.full_like(src, 2.0).device.type == "cpu"


def test_a_default_device_without_a_backend_is_refused():
    with ember.device("xpu"), pytest.raises(RuntimeError, match="device type 'xpu'"):
        ember.zeros(2)


def test_module_parameters_follow_the_default_device():
    with torch.device("meta"):
        assert torch.nn.Linear(2, 3).weight.device.type == "meta"
    with ember.device("meta"):
        assert ember.nn.Linear(2, 3).weight.device.type == "meta"
    with ember.device("cpu"):
        assert ember.nn.Linear(2, 3).weight.device.type == "cpu"


def _history(lib):
    """What ``get_default_device`` says through nested blocks and ``set_default_device``."""
    seen = [lib.get_default_device()]
    with lib.device("meta") as d:
        seen.append(d)
        seen.append(lib.get_default_device())
        with lib.device("cpu"):
            seen.append(lib.get_default_device())
        seen.append(lib.get_default_device())
    seen.append(lib.get_default_device())
    lib.set_default_device("meta")
    seen.append(lib.get_default_device())
    with lib.device("cpu"):
        seen.append(lib.get_default_device())
    seen.append(lib.get_default_device())
    lib.set_default_device(None)
    seen.append(lib.get_default_device())
    return [str(d) for d in seen]


def test_nesting_and_set_default_device_follow_torch():
    assert _history(ember) == _history(torch)


def test_set_default_device_inside_a_block_lasts_until_the_block_ends():
    # torch agrees inside and right after the block, but its mode stack then keeps 'meta'
    # past a later set_default_device(None); ember's rule is the plain one
    with ember.device("cpu"):
        ember.set_default_device("meta")
        assert str(ember.get_default_device()) == "meta"
    assert str(ember.get_default_device()) == "cpu"
    ember.set_default_device(None)
    assert str(ember.get_default_device()) == "cpu"


def test_the_default_device_is_per_thread():
    def in_thread(lib):
        lib.set_default_device("meta")
        try:
            seen = []
            t = threading.Thread(target=lambda: seen.append(str(lib.get_default_device())))
            t.start()
            t.join()
            return seen
        finally:
            lib.set_default_device(None)
    assert in_thread(ember) == in_thread(torch) == ["cpu"]


@pytest.mark.parametrize("bad", [1.5, "foo", "cpu:x"])
def test_bad_devices_raise_torchs_errors_and_change_nothing(bad):
    with pytest.raises(Exception) as want:
        torch.set_default_device(bad)
    with pytest.raises(type(want.value)):
        ember.set_default_device(bad)
    assert str(ember.get_default_device()) == str(torch.get_default_device()) == "cpu"
