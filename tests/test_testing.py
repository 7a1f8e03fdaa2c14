"""``ember.testing.assert_close`` against ``torch.testing.assert_close``: the same inputs pass
or fail with the same exception type and the same message (numbers, indices and structure),
for tensors of each dtype, scalars, tensor-likes, and sequences and mappings of them."""
import warnings

import numpy as np
import pytest
import torch

import ember

rng = np.random.default_rng(0)


def _outcome(lib, convert, actual, expected, **kwargs):
    try:
        lib.testing.assert_close(convert(lib, actual), convert(lib, expected), **kwargs)
    except Exception as e:
        # class names: torch.Tensor's module is torch, ember.Tensor's ember._tensor
        return type(e), str(e).replace("torch.", "ember.").replace("ember._tensor.", "ember.")
    return None


def _tensors(lib, x):
    """Every NumPy array in a nested structure as a ``lib`` tensor."""
    if isinstance(x, np.ndarray):
        return lib.from_numpy(x.copy())
    if isinstance(x, (list, tuple)):
        return type(x)(_tensors(lib, v) for v in x)
    if isinstance(x, dict):
        return {k: _tensors(lib, v) for k, v in x.items()}
    return x


def _same(actual, expected, convert=_tensors, **kwargs):
    want = _outcome(torch, convert, actual, expected, **kwargs)
    got = _outcome(ember, convert, actual, expected, **kwargs)
    assert got == want
    return want


def _near(x, scale):
    return x + (rng.standard_normal(x.shape) * scale).astype(x.dtype)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.complex64,
                                   np.complex128])
@pytest.mark.parametrize("scale", [0.0, 1e-9, 1e-6, 1e-4, 1e-2, 1.0])
def test_float_tensors_pass_or_fail_with_torchs_message(dtype, scale):
    x = rng.standard_normal((3, 4)).astype(dtype)
    y = _near(x, scale)
    out = _same(y, x)
    if scale >= 1e-2:
        assert out[0] is AssertionError and "Tensor-likes are not close!" in out[1]


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8, np.bool_])
def test_integer_and_bool_tensors_must_be_equal(dtype):
    x = rng.integers(0, 3, (2, 5)).astype(dtype)
    y = x.copy()
    assert _same(y, x) is None
    y.flat[[1, 7]] = np.logical_not(y.flat[[1, 7]]) if dtype is np.bool_ else y.flat[[1, 7]] + 1
    out = _same(y, x)
    assert "Tensor-likes are not equal!" in out[1] and "Mismatched elements: 2 / 10" in out[1]


def test_nan_inf_and_zeros():
    a = np.array([1.0, np.nan, np.inf, 0.0, -np.inf], np.float32)
    assert _same(a, a)[0] is AssertionError
    assert _same(a, a, equal_nan=True) is None
    b = a.copy()
    b[3] = 1.0
    _same(b, a, equal_nan=True)
    _same(a, b, equal_nan=True)
    c = a.copy()
    c[2] = -np.inf
    _same(c, a, equal_nan=True)


@pytest.mark.parametrize("kwargs", [
    {"rtol": 0, "atol": 0}, {"rtol": 1e-2, "atol": 1e-3}, {"rtol": 1e-2}, {"atol": 1.0},
    {"msg": "custom"}, {"msg": lambda m: f"Header\n\n{m}\n\nFooter"}, {"equal_nan": True},
])
def test_tolerances_and_msg(kwargs):
    x = rng.standard_normal(6).astype(np.float32)
    _same(_near(x, 1e-3), x, **kwargs)


def test_attributes_dtype_shape_and_stride():
    x = rng.standard_normal((2, 3)).astype(np.float32)
    assert "attribute 'dtype'" in _same(x.astype(np.float64), x)[1]
    assert _same(x.astype(np.float64), x, check_dtype=False) is None
    _same(_near(x, 1e-3).astype(np.float64), x, check_dtype=False)
    assert "attribute 'shape'" in _same(x[:1], x)[1]

    def transposed(lib, v):
        return lib.from_numpy(v.copy()).t().contiguous().t() if isinstance(v, np.ndarray) else v
    for check_stride in (False, True):
        _same(x, x, convert=lambda lib, v: transposed(lib, v) if v is x else _tensors(lib, v),
              check_stride=check_stride)


def test_zero_dim_tensors_report_as_scalars():
    out = _same(np.array(1.0, np.float32), np.array(2.0, np.float32))
    assert out[1].startswith("Scalars are not close!")


@pytest.mark.parametrize("actual,expected,kwargs", [
    (1.0, 1.0001, {}), (1, 2, {}), (1, 1, {}), (1.0, 1, {}), (1.0, 1, {"check_dtype": False}),
    (True, False, {}), (True, True, {}), (None, None, {}), (None, 1, {}), (1 + 2j, 1 + 2.1j, {}),
    (float("nan"), float("nan"), {}), (float("nan"), float("nan"), {"equal_nan": True}),
    (np.float32(1.0), np.float32(1.5), {}), ("a", "a", {}), (1.0, 0.0, {}),
])
def test_python_scalars(actual, expected, kwargs):
    _same(actual, expected, **kwargs)


@pytest.mark.parametrize("actual,expected", [
    ([np.array([1.0]), 2.0], (np.array([1.0]), 2.0)),
    ([np.array([1.0]), 2.0], [np.array([1.0]), 3.0]),
    ([np.array([1.0]), 2.0], [np.array([1.0])]),
    ({"a": np.array([1.0, 2.0]), "b": 1}, {"b": 1, "a": np.array([1.0, 2.5])}),
    ({"a": 1, "b": 2}, {"a": 1, "c": 2}),
    ([[np.array([1.0])], {"x": [1, 2]}], [[np.array([1.0])], {"x": [1, 3]}]),
    (np.array([1.0]), [1.0]),
])
def test_sequences_and_mappings(actual, expected):
    _same(actual, expected)


def test_numpy_arrays_are_tensor_likes():
    x = rng.standard_normal(4)
    keep = lambda lib, v: v  # noqa: E731
    assert _same(x, x, convert=keep) is None
    assert _same(x + 1e-3, x, convert=keep)[0] is AssertionError


def test_parameters_and_subclasses():
    x = rng.standard_normal(3).astype(np.float32)

    def param(lib, v):
        return lib.nn.Parameter(lib.from_numpy(v.copy())) if v is x else _tensors(lib, v)
    y = x.copy()
    assert _same(x, y, convert=param) is None
    assert _same(x, y, convert=param, allow_subclasses=False)[0] is TypeError


def test_bfloat16_tolerance():
    x = rng.standard_normal(8).astype(np.float32)

    def bf16(lib, v):
        return lib.from_numpy(v.copy()).to(lib.bfloat16)
    for scale in (1e-3, 1e-1):
        _same(_near(x, scale), x, convert=bf16)


def test_assert_allclose_is_deprecated_as_in_torch():
    for lib in (ember, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lib.testing.assert_allclose([1.0, 2.0], [1.0, 2.0 + 1e-6])
            with pytest.raises(AssertionError, match="Tensor-likes are not close"):
                lib.testing.assert_allclose([1.0, 2.0], [1.0, 2.1])
        assert [x.category for x in w] == [FutureWarning, FutureWarning]
