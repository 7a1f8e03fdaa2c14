"""``ember.testing.make_tensor`` against ``torch.testing.make_tensor``: the same signature, the
same shapes, dtypes, strides and ``requires_grad``, values in the same ranges, and the same
errors and warnings for bad arguments."""
import inspect
import math
import warnings

import pytest
import torch

import ember

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64", "complex64", "complex128"]
FLOATING = {"float16", "bfloat16", "float32", "float64", "complex64", "complex128"}


def _make(lib, *shape, dtype, **kwargs):
    for key in ("memory_format",):
        if isinstance(kwargs.get(key), str):
            kwargs[key] = getattr(lib, kwargs[key])
    return lib.testing.make_tensor(*shape, dtype=getattr(lib, dtype), device="cpu", **kwargs)


def _parts(t):
    """The real values a tensor holds (real and imaginary parts of a complex one) as float64."""
    t = t.detach()
    if t.dtype is torch.bfloat16:  # NumPy has no bfloat16 of torch's
        t = t.float()
    values = t.numpy()
    if values.dtype.kind == "c":
        return [values.real.astype("float64"), values.imag.astype("float64")]
    return [values.astype("float64")]


def test_the_signature_is_torchs():
    assert inspect.signature(ember.testing.make_tensor).parameters.keys() == \
        inspect.signature(torch.testing.make_tensor).parameters.keys()
    for name, param in inspect.signature(torch.testing.make_tensor).parameters.items():
        ours = inspect.signature(ember.testing.make_tensor).parameters[name]
        assert (ours.kind, ours.default) == (param.kind, param.default), name


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, kwargs", [
    ((3, 4), {}),
    (((2, 3),), {}),
    ((), {}),
    ((0, 3), {}),
    ((4, 5), {"noncontiguous": True}),
    ((1,), {"noncontiguous": True}),
    ((2, 3, 4, 5), {"memory_format": "channels_last"}),
])
def test_shapes_dtypes_and_strides_are_torchs(dtype, shape, kwargs):
    ours, theirs = _make(ember, *shape, dtype=dtype, **kwargs), _make(torch, *shape, dtype=dtype,
                                                                     **kwargs)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
    assert ours.stride() == theirs.stride()
    assert ours.is_contiguous() == theirs.is_contiguous()
    assert ours.requires_grad is theirs.requires_grad is False


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("low, high", [(None, None), (-3, 4), (0.5, 2.5), (-1e300, 1e300)])
def test_values_lie_in_torchs_range(dtype, low, high):
    torch.manual_seed(0)
    ours = _make(ember, 4000, dtype=dtype, low=low, high=high)
    theirs = _make(torch, 4000, dtype=dtype, low=low, high=high)
    for mine, its in zip(_parts(ours), _parts(theirs)):
        if dtype in FLOATING:
            # a continuous range [low, high): the same bounds within 2% of the span
            span = float(its.max() - its.min())
            assert its.min() - 0.02 * span <= mine.min() and mine.max() <= its.max() + 0.02 * span
            assert math.isfinite(mine.min()) and math.isfinite(mine.max())
        elif its.max() - its.min() < 100:  # 4000 draws reach every integer of the range
            assert (mine.min(), mine.max()) == (its.min(), its.max())
        else:  # clamped to the dtype's range, and spread over it
            info = torch.iinfo(theirs.dtype)
            quarter = (info.max - info.min) / 4
            assert info.min <= mine.min() < info.min + quarter
            assert info.max - quarter < mine.max() <= info.max


@pytest.mark.parametrize("dtype", DTYPES)
def test_exclude_zero_and_requires_grad(dtype):
    low, high = (0, 2) if dtype != "bool" else (None, None)
    ours = _make(ember, 500, dtype=dtype, low=low, high=high, exclude_zero=True)
    theirs = _make(torch, 500, dtype=dtype, low=low, high=high, exclude_zero=True)
    assert (ours != 0).all().item() and (theirs != 0).all().item()
    if dtype not in FLOATING:  # zeros became ones: the same values as torch's
        assert set(_parts(ours)[0].tolist()) == set(_parts(theirs)[0].tolist())
    if dtype in FLOATING or dtype.startswith("complex"):   # complex leaves may require grad
        assert _make(ember, 3, dtype=dtype, requires_grad=True).requires_grad
        assert _make(torch, 3, dtype=dtype, requires_grad=True).requires_grad


def _outcome(lib, *shape, dtype, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            _make(lib, *shape, dtype=dtype, **kwargs)
        except Exception as e:
            message = str(e).replace("torch.", "ember.").split(" To request support")[0]
            return type(e), message
    return [(w.category, str(w.message).replace("torch.", "ember.")) for w in caught]


@pytest.mark.parametrize("dtype, kwargs", [
    ("float32", {"low": float("nan")}),
    ("int32", {"low": 5, "high": 5}),
    ("int32", {"low": 5, "high": 2}),
    ("uint8", {"low": -20, "high": -10}),
    ("int8", {"low": 200, "high": 300}),
    ("float16", {"low": 1e6, "high": 2e6}),
    ("int64", {"requires_grad": True}),
    ("bool", {"requires_grad": True}),
    ("float32", {"noncontiguous": True, "memory_format": "channels_last"}),
    ("float32", {"low": 1.0, "high": 1.0}),
])
def test_bad_arguments_fail_or_warn_as_torch(dtype, kwargs):
    assert _outcome(ember, 2, 3, dtype=dtype, **kwargs) == _outcome(torch, 2, 3, dtype=dtype,
                                                                      **kwargs)


def test_an_unsupported_dtype_is_a_type_error():
    with pytest.raises(TypeError, match="not supported by ember.testing.make_tensor"):
        ember.testing.make_tensor(2, dtype=None, device="cpu")
