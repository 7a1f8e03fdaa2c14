"""unique and unique_consecutive (flattened) against torch: every combination of the inverse and the
counts, over dtypes and shapes (empty, 0-d, runs, NaNs: each NaN its own value)."""
import itertools

import numpy as np
import pytest
import torch

import ember

SHAPES = [(0,), (), (1,), (2,), (7,), (3, 4), (2, 1, 3), (50,), (1000,)]
DTYPES = ["float32", "float64", "float16", "int64", "int32", "int8", "uint8", "bool"]


def _as_tuple(result):
    return result if isinstance(result, tuple) else (result,)


def _check(name, values, inverse, counts):
    got = _as_tuple(getattr(ember, name)(ember.tensor(values), return_inverse=inverse, return_counts=counts))
    want = _as_tuple(getattr(torch, name)(torch.tensor(values), return_inverse=inverse, return_counts=counts))
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert str(g.dtype) == str(w.dtype).replace("torch", "ember")
        assert tuple(g.shape) == tuple(w.shape)
        if inverse and i == 1 and name == "unique" and np.isnan(values.astype(np.float64)).any():
            continue   # (which NaN takes which of the NaNs' places is torch's sort's order, not defined)
        np.testing.assert_array_equal(g.numpy(), w.numpy())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["unique", "unique_consecutive"])
def test_flattened_unique_is_torch_s(name, dtype):
    rng = np.random.default_rng(3)
    for shape in SHAPES:
        values = rng.integers(-3, 4, shape).astype(dtype)
        if dtype.startswith("float") and values.size > 3:
            values.reshape(-1)[rng.integers(0, values.size, 2)] = np.nan
        for inverse, counts in itertools.product([False, True], repeat=2):
            _check(name, values, inverse, counts)
