"""Creation functions checked against torch: values, dtype inference, memory sharing, errors."""
import numpy as np
import pytest
import torch

import ember

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", None]


def _same(e, t):
    """ember tensor ``e`` equals torch tensor ``t`` bit for bit: shape, dtype and values."""
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    tn = t.float().numpy() if t.dtype == torch.bfloat16 else t.numpy()
    en = np.asarray(e._data).astype(tn.dtype)
    np.testing.assert_array_equal(en, tn)


def _both(fn):
    """fn(lib) for both libraries; the same exception type and message if either raises."""
    try:
        expected = fn(torch)
    except Exception as exc:
        with pytest.raises(type(exc)) as info:
            fn(ember)
        assert str(info.value) == str(exc)
        return None, None
    return fn(ember), expected


def _dt(lib, name):
    return None if name is None else getattr(lib, name)


@pytest.mark.parametrize("data", [
    [1, 2], [1.0, 2], True, 3.5, 7, [[1, 2], [3, 4.5]], [True, 2], [1 + 2j, 3], [], [[], []],
    [True, False], [[[1], [2]], [[3], [4]]], -2 ** 63, [1.5, 2 ** 70],
    np.ones(3, np.float32), np.ones(3, np.int32), np.float64(2.5), np.float32(2.5),
    [np.float64(2.5), 1], [np.float32(1.5), 2.0], [1, np.float32(2.0)], [True, np.float16(2.0)],
    np.arange(6).reshape(2, 3).T,
], ids=repr)
def test_tensor_infers_dtype_like_torch(data):
    e, t = _both(lambda lib: lib.tensor(data))
    _same(e, t)


def test_tensor_of_tensors():
    e = ember.tensor([ember.tensor(1.0), ember.tensor(2.0)])
    _same(e, torch.tensor([torch.tensor(1.0), torch.tensor(2.0)]))


@pytest.mark.parametrize("data", [
    [[1, 2], [3]], [[1, 2], [3, 4, 5]], [[[1], [2]], [[3], [4, 5]]], "a", None, [1, None],
    2 ** 63, [1, 2 ** 63], [[1, 2], [3, "a"]],
], ids=repr)
def test_tensor_errors_like_torch(data):
    assert _both(lambda lib: lib.tensor(data)) == (None, None)


def test_ragged_message():
    with pytest.raises(ValueError, match=r"expected sequence of length 2 at dim 1 \(got 3\)"):
        ember.tensor([[1, 2], [3, 4, 5]])


def test_tensor_dtype_argument_and_copy():
    arr = np.array([1.7, -1.7])
    _same(ember.tensor(arr, dtype=ember.int64), torch.tensor(arr, dtype=torch.int64))
    _same(ember.tensor([0, 1, 2], dtype=ember.bool), torch.tensor([0, 1, 2], dtype=torch.bool))
    t = ember.tensor(arr)
    arr[0] = 5
    assert t[0].item() == 1.7  # a copy


def test_from_numpy_shares_memory_both_ways():
    arr = np.zeros(3, np.float32)
    t = ember.from_numpy(arr)
    arr[0] = 1
    assert t[0].item() == 1
    t.add_(1) if hasattr(t, "add_") else t._data.__iadd__(1)
    assert arr.tolist() == [2, 1, 1]
    assert t.dtype == ember.float32
    with pytest.raises(TypeError):
        ember.from_numpy([1, 2])


def test_as_tensor_shares_when_possible():
    arr = np.arange(3.0)
    shared = ember.as_tensor(arr)
    arr[1] = 7
    assert shared[1].item() == 7
    copied = ember.as_tensor(arr, dtype=ember.float32)
    arr[1] = 8
    assert copied[1].item() == 7
    t = ember.ones(2)
    assert ember.as_tensor(t) is t
    _same(ember.as_tensor([1, 2.0]), torch.as_tensor([1, 2.0]))


@pytest.mark.parametrize("fn", [
    lambda lib: lib.zeros(2, 3), lambda lib: lib.zeros((2, 3), dtype=lib.int32),
    lambda lib: lib.zeros([2]), lambda lib: lib.zeros(()), lambda lib: lib.ones(2, 3, dtype=lib.float64),
    lambda lib: lib.zeros(lib.Size([2, 3])),
    lambda lib: lib.full((2,), 3), lambda lib: lib.full((2,), 3.0), lambda lib: lib.full((2,), True),
    lambda lib: lib.full((2,), 1j), lambda lib: lib.full((2,), 3, dtype=lib.float16),
    lambda lib: lib.full([2, 2], 1.5),
    lambda lib: lib.ones_like(lib.tensor([1, 2])),
    lambda lib: lib.zeros_like(lib.tensor([1, 2]), dtype=lib.float64),
    lambda lib: lib.full_like(lib.tensor([1, 2]), 2.7), lambda lib: lib.full_like(lib.tensor([1.0, 2]), 2),
    lambda lib: lib.zeros_like(lib.tensor(3)),
    lambda lib: lib.eye(3), lambda lib: lib.eye(2, 4), lambda lib: lib.eye(3, dtype=lib.int64),
    lambda lib: lib.eye(2, dtype=lib.bool), lambda lib: lib.eye(0),
    lambda lib: lib.scalar_tensor(3), lambda lib: lib.scalar_tensor(True),
    lambda lib: lib.tensor([1, 2]).new_zeros(2, 3),
    lambda lib: lib.tensor([1.0, 2], dtype=lib.float64).new_ones((2,)),
    lambda lib: lib.tensor([1, 2]).new_full((2,), 3.7),
    lambda lib: lib.tensor([1.0, 2], dtype=lib.float64).new_tensor([1, 2]),
    lambda lib: lib.zeros(lib.tensor([1, 2]).new_empty(2, 3).shape, dtype=lib.tensor([1, 2]).new_empty(1).dtype),
    lambda lib: lib.Tensor([1, 2]), lambda lib: lib.Tensor(),
    lambda lib: lib.zeros(lib.Tensor(2, 3).shape, dtype=lib.Tensor(2, 3).dtype),
    lambda lib: lib.zeros(lib.Tensor(lib.Size([2, 3])).shape),
    lambda lib: lib.tensor(lib.empty_strided((2, 3), (1, 2)).stride()),
    lambda lib: lib.zeros(lib.empty_strided((2, 3), (1, 2)).shape),
    lambda lib: lib.zeros(lib.empty(2, 3, dtype=lib.int16).shape, dtype=lib.empty(1, dtype=lib.int16).dtype),
])
def test_factories_like_torch(fn):
    e, t = _both(fn)
    _same(e, t)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.zeros(2, -1), lambda lib: lib.zeros((2, -3)), lambda lib: lib.ones(-2),
    lambda lib: lib.empty(2, -3), lambda lib: lib.full((-1,), 1.5), lambda lib: lib.full(2, 1.5),
    lambda lib: lib.zeros(2.0), lambda lib: lib.zeros(2, 3.0), lambda lib: lib.zeros(),
    lambda lib: lib.eye(-1), lambda lib: lib.eye(2, -1), lambda lib: lib.Tensor(-1),
    lambda lib: lib.Tensor(2.5), lambda lib: lib.empty_strided((2, -3), (1, 2)),
    lambda lib: lib.arange(0, 1, 0), lambda lib: lib.arange(0, 1, -1),
    lambda lib: lib.arange(0, float("nan")), lambda lib: lib.arange(0, float("inf")),
    lambda lib: lib.arange(3, dtype=lib.bool), lambda lib: lib.arange(0, 1, 0.1, dtype=lib.int64),
    lambda lib: lib.linspace(0, 1, -1), lambda lib: lib.logspace(0, 1, -1),
])
def test_factory_errors_like_torch(fn):
    assert _both(fn) == (None, None)


ARANGE_ARGS = [(0, 1, 0.1), (0, 10, 3), (1, 2.5, 0.5), (-1, 1, 0.3), (0, 1, 1 / 3), (10, 0, -1.5),
               (0.5,), (5,), (0, 5.5), (1e6, 1e6 + 10, 0.7), (0, 1, 0.01), (2, -2, -0.3),
               (-3.3, 7.1, 0.0123), (0, 500, 0.37), (-7, 3), (3, -7, -2)]


@pytest.mark.parametrize("args", ARANGE_ARGS, ids=repr)
@pytest.mark.parametrize("dtype", DTYPES)
def test_arange_matches_torch_exactly(args, dtype):
    e, t = _both(lambda lib: lib.arange(*args, dtype=_dt(lib, dtype)))
    if t is not None:
        _same(e, t)


def test_arange_tenth_has_torch_length_and_values():
    e, t = ember.arange(0, 1, 0.1), torch.arange(0, 1, 0.1)
    assert len(e) == 10
    _same(e, t)
    _same(ember.arange(ember.tensor(5)), torch.arange(torch.tensor(5)))


SPACE_ARGS = [(0, 1, 5), (0, 1, 11), (-3.3, 7.7, 17), (1, 1, 1), (0, 10, 0), (5, -5, 101), (0, 1, 2),
              (0.1, 0.9, 7), (0, 100, 1000), (-2.5, 9.1, 64), (3, 3, 4), (2.5, 7.9, 1)]


@pytest.mark.parametrize("args", SPACE_ARGS, ids=repr)
@pytest.mark.parametrize("dtype", DTYPES)
def test_linspace_matches_torch_exactly(args, dtype):
    _same(ember.linspace(*args, dtype=_dt(ember, dtype)), torch.linspace(*args, dtype=_dt(torch, dtype)))


@pytest.mark.parametrize("args", SPACE_ARGS, ids=repr)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("base", [10.0, 2.0, 2.5])
def test_logspace_matches_torch_exactly(args, dtype, base):
    if dtype in ("int64", "int32") and max(args[:2]) > 9:
        pytest.skip("beyond the integer range")
    _same(ember.logspace(*args, base=base, dtype=_dt(ember, dtype)),
          torch.logspace(*args, base=base, dtype=_dt(torch, dtype)))


def test_linspace_tensor_bounds():
    _same(ember.linspace(ember.tensor(0.0), ember.tensor(1.0), 5), torch.linspace(0.0, 1.0, 5))


def test_default_dtype_affects_creation():
    before = ember.get_default_dtype()
    try:
        ember.set_default_dtype(ember.float64)
        torch_before = torch.get_default_dtype()
        torch.set_default_dtype(torch.float64)
        try:
            for fn in (lambda lib: lib.tensor([1.0, 2]), lambda lib: lib.zeros(2),
                       lambda lib: lib.full((2,), 1.5), lambda lib: lib.arange(0, 1, 0.25),
                       lambda lib: lib.linspace(0, 1, 3), lambda lib: lib.eye(2),
                       lambda lib: lib.tensor([1 + 1j]), lambda lib: lib.Tensor([1])):
                _same(fn(ember), fn(torch))
        finally:
            torch.set_default_dtype(torch_before)
    finally:
        ember.set_default_dtype(before)
    assert ember.zeros(1).dtype == before


def test_requires_grad_and_empty_strided_layout():
    t = ember.zeros(2, requires_grad=True)
    assert t.requires_grad and t.is_leaf
    s = ember.empty_strided((2, 3), (1, 2))
    assert s._data.strides == (4, 8)


def test_python_floats_convert_straight_to_the_requested_dtype():
    # never through the default float32 first
    values = [0.1, 0.3, 1e-300, 123456789.123456789]
    got = ember.tensor(values, dtype=ember.float64).tolist()
    assert got == torch.tensor(values, dtype=torch.float64).tolist() == values
