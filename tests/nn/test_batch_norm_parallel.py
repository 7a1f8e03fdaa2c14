"""Batch norm's elementwise passes split over ember's threads (parts of the batch at once,
``_backend.parallel``) against the same passes run serially (the same bits: each element is
computed the same way) and against torch, float32 and float64, odd batches, with blocks
inside each half; and serial where OpenBLAS's thread count cannot be controlled."""
import numpy as np
import pytest
import torch

import ember
from ember._backend import cblas, parallel
from ember.nn.functional import normalization

from test_batch_norm_hardtanh_blocks import _batch_norm_run

pytestmark = pytest.mark.usefixtures("numpy_kernels")  # the split is NumPy's path's


def _split_calls(monkeypatch):
    calls = []
    over_parts = parallel.over_parts
    monkeypatch.setattr(parallel, "over_parts",
                        lambda n, compute: calls.append(n) or over_parts(n, compute))
    return calls


@pytest.mark.skipif(cblas.num_threads() is None, reason="OpenBLAS's thread count cannot be set")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("shape", [(7, 3, 5, 4), (5, 4, 9), (2, 6), (9, 2, 3, 3, 2)])
def test_split_batch_norm_matches_serial_and_torch(shape, training, dtype, monkeypatch,
                                                   ember_threads):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(shape) * 2 + 0.5).astype(dtype)
    w, b = rng.standard_normal(shape[1]).astype(dtype), rng.standard_normal(shape[1]).astype(dtype)
    grad = rng.standard_normal(shape).astype(dtype)
    monkeypatch.setattr(normalization, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(normalization, "SAMPLE_BLOCK_BYTES", 1)  # blocks of one sample
    ember_threads(2)
    calls = _split_calls(monkeypatch)
    split = _batch_norm_run(ember, x, w, b, grad, training)
    assert calls
    ember_threads(1)
    serial = _batch_norm_run(ember, x, w, b, grad, training)
    for got, want in zip(split, serial):
        np.testing.assert_array_equal(got, want)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    for got, want in zip(split, _batch_norm_run(torch, x, w, b, grad, training)):
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_batch_norm_serial_without_blas_thread_control(monkeypatch, ember_threads):
    monkeypatch.setattr(cblas, "_THREAD_CONTROL", None)
    ember_threads(2)
    monkeypatch.setattr(normalization, "PARALLEL_MIN_BYTES", 0)
    calls = _split_calls(monkeypatch)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((5, 3, 4)).astype(np.float32)
    w, b = np.ones(3, np.float32), np.zeros(3, np.float32)
    result = _batch_norm_run(ember, x, w, b, np.ones_like(x), True)
    assert not calls
    expected = _batch_norm_run(torch, x, w, b, np.ones_like(x), True)
    for got, want in zip(result, expected):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.skipif(cblas.num_threads() is None, reason="OpenBLAS's thread count cannot be set")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_split_channel_sums_add_blocks_in_order(dtype, monkeypatch, ember_threads):
    """The parts' block sums are added in block order: the serial sums' bits."""
    rng = np.random.default_rng(4)
    x, y = (rng.standard_normal((11, 5, 13)).astype(dtype) for _ in range(2))
    monkeypatch.setattr(normalization, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(normalization, "SAMPLE_BLOCK_BYTES", 2 * x[0].nbytes)  # 6 blocks
    ember_threads(3)
    calls = _split_calls(monkeypatch)
    total, product = normalization._channel_sums(np, x, y)
    assert calls == [6]
    want_total = want_product = 0
    for start in range(0, 11, 2):
        block = slice(start, start + 2)
        want_total = want_total + np.einsum("ncl->c", x[block])
        want_product = want_product + np.einsum("ncl,ncl->c", x[block], y[block])
    np.testing.assert_array_equal(total, want_total)
    np.testing.assert_array_equal(product, want_product)
