"""ember.signal.windows against torch.signal.windows (values, dtypes, gradients flags and
errors), and ember.types' names."""
import numpy as np
import pytest
import torch
from torch.signal import windows as twin

import ember
from ember.signal import windows as ewin

WINDOWS = {
    "bartlett": {}, "blackman": {}, "cosine": {}, "exponential": {}, "gaussian": {},
    "general_cosine": {"a": [0.46, 0.3, 0.2, 0.04]}, "general_hamming": {}, "hamming": {},
    "hann": {}, "kaiser": {}, "nuttall": {},
}
EXTRA = [
    ("exponential", {"tau": 2.5}), ("exponential", {"center": 1.5, "sym": False}),
    ("gaussian", {"std": 0.4}), ("kaiser", {"beta": 0.0}), ("kaiser", {"beta": 3.3}),
    ("general_hamming", {"alpha": 0.7}), ("general_cosine", {"a": (1.0,)}),
]


def _compare(name, M, kwargs, dtype):
    t = getattr(twin, name)(M, dtype=getattr(torch, dtype), **kwargs)
    e = getattr(ewin, name)(M, dtype=getattr(ember, dtype), **kwargs)
    assert e.dtype == getattr(ember, dtype) and tuple(e.shape) == tuple(t.shape)
    tol = 1e-6 if dtype == "float32" else 1e-13
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("name", sorted(WINDOWS))
@pytest.mark.parametrize("M", [0, 1, 2, 3, 8, 51])
@pytest.mark.parametrize("sym", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_windows_match_torch(name, M, sym, dtype):
    _compare(name, M, dict(WINDOWS[name], sym=sym), dtype)


@pytest.mark.parametrize("name,kwargs", EXTRA)
@pytest.mark.parametrize("M", [1, 6, 17])
def test_window_parameters_match_torch(name, kwargs, M):
    _compare(name, M, kwargs, "float64")


def test_default_dtype_and_requires_grad():
    ember.set_default_dtype(ember.float64)
    try:
        assert ewin.hann(5).dtype == ember.float64
    finally:
        ember.set_default_dtype(ember.float32)
    assert ewin.hann(5).dtype == ember.float32
    for name in ("bartlett", "gaussian", "hann", "kaiser"):
        t = getattr(twin, name)(6, requires_grad=True)
        e = getattr(ewin, name)(6, requires_grad=True)
        assert e.requires_grad == t.requires_grad
    t, e = twin.cosine(1, requires_grad=True), ewin.cosine(1, requires_grad=True)
    assert e.requires_grad == t.requires_grad and e.is_leaf == t.is_leaf


@pytest.mark.parametrize("call,exc", [
    (lambda w, lib: w.hann(-1), ValueError),
    (lambda w, lib: w.hann(4, dtype=lib.int64), ValueError),
    (lambda w, lib: w.bartlett(4, dtype=lib.float16), ValueError),
    (lambda w, lib: w.kaiser(4, layout=lib.sparse_coo), ValueError),
    (lambda w, lib: w.gaussian(4, std=0.0), ValueError),
    (lambda w, lib: w.exponential(4, tau=-1.0), ValueError),
    (lambda w, lib: w.exponential(4, center=1.0), ValueError),
    (lambda w, lib: w.kaiser(4, beta=-1.0), ValueError),
    (lambda w, lib: w.general_cosine(4, a=[]), ValueError),
    (lambda w, lib: w.general_cosine(4, a=3), TypeError),
])
def test_bad_arguments_raise_as_torch(call, exc):
    with pytest.raises(exc) as t_err:
        call(twin, torch)
    with pytest.raises(exc) as e_err:
        call(ewin, ember)
    assert str(e_err.value) == str(t_err.value).replace("torch.", "ember.")


def test_reachable_as_torch():
    import torch.signal
    assert ember.signal.windows is ewin
    assert ewin.__all__ == twin.__all__
    assert ember.signal.__all__ == torch.signal.__all__


def test_types():
    import torch.types
    assert set(ember.types.__all__) == set(torch.types.__all__)
    assert isinstance(3, ember.types._Number) and isinstance(2.5, ember.types._Number)
    assert ember.types._size.__args__[0] is ember.Size
    assert ember.types.Size is ember.Size and ember.types.Tensor is ember.Tensor
    for name in ("Number", "Device", "FileLike", "Storage", "_size", "_TensorOrTensors",
                 "_TensorOrOptionalTensors", "IntLikeType", "FloatLikeType", "BoolLikeType",
                 "_int", "_float", "_bool", "_dtype", "_device", "_layout"):
        assert hasattr(torch.types, name) and hasattr(ember.types, name), name

    def scale(x: ember.types._TensorOrTensors, device: ember.types.Device = None) -> None:
        return None

    assert scale.__annotations__["device"] == ember.types.Device
