"""Batch norm's and hardtanh's array kernels with their passes cut into blocks (several
blocks, a last one shorter than the others), pinned to torch and to the unblocked results, in
float32 and float64, on contiguous and transposed inputs."""
import numpy as np
import pytest
import torch

import ember
from ember.nn.functional import activation, normalization


def _batch_norm_run(lib, x, w, b, grad, training):
    xt, wt, bt = (lib.tensor(a, requires_grad=True) for a in (x, w, b))
    rm, rv = lib.tensor(np.zeros(x.shape[1], x.dtype)), lib.tensor(np.ones(x.shape[1], x.dtype))
    y = lib.nn.functional.batch_norm(xt, rm, rv, wt, bt, training=training)
    grads = (ember if lib is ember else torch).autograd.grad(y, (xt, wt, bt), lib.tensor(grad))
    return [t.detach().numpy() for t in (y, *grads, rm, rv)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("shape", [(7, 3, 5, 4), (5, 4, 9), (9, 6)])
def test_batch_norm_in_sample_blocks_matches_torch_and_one_block(shape, training, dtype,
                                                                 monkeypatch):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 2 + 0.5).astype(dtype)
    w, b = rng.standard_normal(shape[1]).astype(dtype), rng.standard_normal(shape[1]).astype(dtype)
    grad = rng.standard_normal(shape).astype(dtype)
    expected = _batch_norm_run(torch, x, w, b, grad, training)
    whole = _batch_norm_run(ember, x, w, b, grad, training)
    per_sample = x[0].nbytes
    monkeypatch.setattr(normalization, "SAMPLE_BLOCK_BYTES", 2 * per_sample)  # 2, 2, 2, 1
    blocked = _batch_norm_run(ember, x, w, b, grad, training)
    tol = 2e-5 if dtype == np.float32 else 1e-11
    for e, one, t in zip(blocked, whole, expected):
        assert e.dtype == dtype
        np.testing.assert_allclose(e, one, rtol=tol, atol=tol)
        np.testing.assert_allclose(e, t, rtol=tol, atol=tol * max(1.0, np.abs(t).max()))


def test_batch_norm_in_sample_blocks_on_a_transposed_input(monkeypatch):
    monkeypatch.setattr(normalization, "SAMPLE_BLOCK_BYTES", 1)  # one sample a block
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 5, 6, 4)).transpose(3, 1, 0, 2)  # (4, 5, 6, 3), not contiguous
    w, b, grad = rng.standard_normal(5), rng.standard_normal(5), rng.standard_normal(x.shape)
    for e, t in zip(_batch_norm_run(ember, x, w, b, grad, True),
                    _batch_norm_run(torch, np.ascontiguousarray(x), w, b, grad, True)):
        np.testing.assert_allclose(e, t, rtol=1e-10, atol=1e-10)


SPECIAL = [float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 6.0, -0.5, 2.0, 1e-3, -1e-3]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("block", [1, 7, 1 << 16])
@pytest.mark.parametrize("lo, hi", [(0.0, 6.0), (-0.5, 2.0)])
def test_hardtanh_grad_in_blocks_matches_torch(lo, hi, block, dtype, monkeypatch):
    monkeypatch.setattr(activation, "HARDTANH_GRAD_BLOCK", block)
    rng = np.random.default_rng(2)
    x = np.concatenate([rng.standard_normal(50) * 4, SPECIAL]).astype(dtype)
    x = x.reshape(6, 10).T  # not contiguous
    grad = rng.standard_normal(x.shape).astype(dtype)
    results = []
    for lib in (ember, torch):
        t = lib.tensor(x, requires_grad=True)
        (g,) = (ember if lib is ember else torch).autograd.grad(
            lib.nn.functional.hardtanh(t, lo, hi), [t], lib.tensor(grad))
        results.append(g.numpy())
    ember_grad, torch_grad = results
    assert ember_grad.dtype == dtype
    number = ~np.isnan(x)  # torch's kernels disagree among themselves at NaN inputs
    np.testing.assert_array_equal(ember_grad[number], torch_grad[number])
    np.testing.assert_array_equal(ember_grad[~number], grad[~number])  # NaN passes the gradient
