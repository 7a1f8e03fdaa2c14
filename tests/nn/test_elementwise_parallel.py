"""Elementwise passes split over ember's threads (``_backend.parallel.elementwise``: parts of
the flattened arrays, or of the leading dimension when operands broadcast) against the same
passes on one thread (the same bits: each element is computed the same way) and against torch:
add/sub/mul with broadcasting, ReLU, ReLU6/Hardtanh and LeakyReLU forward and backward (NaN
and boundary values included), and cross-entropy's exponentials split by rows."""
import numpy as np
import pytest
import torch

import ember
from ember._backend import cblas, parallel

from test_norm_activation_fast_paths import ACTIVATIONS

pytestmark = pytest.mark.skipif(cblas.num_threads() is None,
                                reason="OpenBLAS's thread count cannot be set")


def special_values(shape, dtype, seed=0):
    x = np.random.default_rng(seed).standard_normal(shape).astype(dtype) * 4
    flat = x.reshape(-1)
    flat[:6] = [np.nan, 0.0, -0.0, 6.0, -1.0, 1.0][:flat.size]
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("a_shape, b_shape", [
    ((5, 3, 4, 2), (5, 3, 4, 2)),  # same shape: split flat
    ((5, 3, 4, 2), (3, 1, 1)),  # a per-channel bias: split by the leading dimension
    ((7, 6), (6,)),
    ((1, 9), (4, 1, 9)),  # the result's leading dimension comes from b
    ((6, 4), ()),  # a scalar tensor
])
def test_split_arithmetic_matches_serial_and_torch(a_shape, b_shape, dtype, split_everything,
                                                   ember_threads):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal(a_shape).astype(dtype), rng.standard_normal(b_shape).astype(dtype)
    for op in ("add", "sub", "mul"):
        split_everything.clear()
        got = getattr(ember, op)(ember.tensor(a), ember.tensor(b)).numpy()
        assert split_everything or a.size == 1, f"{op} did not split"
        np.testing.assert_array_equal(got, getattr(np, {"sub": "subtract",
                                                        "mul": "multiply"}.get(op, op))(a, b))
        want = getattr(torch, op)(torch.from_numpy(a), torch.from_numpy(b)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-6)
    assert got.dtype == dtype


def test_split_keeps_numpy_promotion(split_everything):
    ints = np.arange(24, dtype=np.int32).reshape(4, 6)
    got = parallel.elementwise(np.add, ints, np.float32(0.5))
    assert split_everything and got.dtype == np.add(ints, np.float32(0.5)).dtype
    np.testing.assert_array_equal(got, ints + np.float32(0.5))


def activation_run(lib, fn, x, grad):
    t = lib.tensor(x, requires_grad=True) if lib is ember else \
        torch.tensor(x, requires_grad=True)
    y = fn(lib, t)
    y.backward(lib.tensor(grad) if lib is ember else torch.tensor(grad))
    return y.detach().numpy(), t.grad.numpy()


# the activations whose array kernels split (SiLU's do not)
SPLIT_ACTIVATIONS = {name: fn for name, fn in ACTIVATIONS.items() if name != "silu"}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(6, 5, 4), (3, 7), (9,)])
@pytest.mark.parametrize("name", sorted(SPLIT_ACTIVATIONS))
def test_split_activations_match_serial_and_torch(name, shape, dtype, split_everything,
                                                  ember_threads):
    x = special_values(shape, dtype)
    grad = np.random.default_rng(2).standard_normal(shape).astype(dtype)
    split = activation_run(ember, SPLIT_ACTIVATIONS[name], x, grad)
    assert split_everything, "nothing split"
    ember_threads(1)
    serial = activation_run(ember, SPLIT_ACTIVATIONS[name], x, grad)
    for got, want in zip(split, serial):
        np.testing.assert_array_equal(got, want)
    # torch's gradient at a NaN input depends on whether its kernel ran vectorized, so NaN
    # positions are left out here (the serial comparison above covers them)
    finite = ~np.isnan(x)
    for got, want in zip(split, activation_run(torch, SPLIT_ACTIVATIONS[name], x, grad)):
        np.testing.assert_allclose(got[finite], want[finite], rtol=1e-6, atol=1e-12)


@pytest.mark.parametrize("weighted", [False, True])
def test_split_cross_entropy_matches_serial_and_torch(weighted, split_everything,
                                                      ember_threads, monkeypatch):
    from ember.nn.functional import loss
    monkeypatch.setattr(loss, "_EXP_BLOCK_ELEMENTS", 16)  # several blocks in each part
    monkeypatch.setattr(loss, "_UNSHIFTED_MIN_ELEMENTS", 0)   # the path that splits
    rng = np.random.default_rng(3)
    logits = rng.standard_normal((37, 11)).astype(np.float32) * 3
    target = rng.integers(0, 11, 37)
    weight = rng.random(11).astype(np.float32) if weighted else None

    def run(lib):
        x = lib.tensor(logits, requires_grad=True)
        w = None if weight is None else lib.tensor(weight)
        value = lib.nn.functional.cross_entropy(x, lib.tensor(target), weight=w)
        value.backward()
        return value.detach().numpy(), x.grad.numpy()
    split = run(ember)
    assert 37 in split_everything, "the rows did not split"
    ember_threads(1)
    for got, want in zip(split, run(ember)):
        np.testing.assert_array_equal(got, want)
    for got, want in zip(split, run(torch)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


def test_small_or_serial_passes_do_not_split(monkeypatch, ember_threads):
    calls = []
    monkeypatch.setattr(parallel, "over_parts", lambda n, compute: calls.append(n))
    ember_threads(2)
    ember.nn.functional.relu(ember.randn(8, 8))  # below ELEMENTWISE_MIN_BYTES
    monkeypatch.setattr(parallel, "ELEMENTWISE_MIN_BYTES", 0)
    ember_threads(1)
    ember.nn.functional.relu(ember.randn(8, 8)) + 1
    assert not calls
