"""Convolution kernels split over ember's threads (``_backend.parallel``: parts of the batch at
once, OpenBLAS on one thread) against the same kernels run serially, the BLAS thread count's
handling (held to one inside a split, also on exceptions; no split with one thread or without
control of it), and a convolution module's gradients against torch with the split forced."""
import threading

import numpy as np
import pytest
import torch
from threadpoolctl import threadpool_limits

import ember
from ember._backend import cblas, im2col, parallel

from test_conv_fused_backward import FUSED_CASES
from test_conv_kernels import KERNEL_CASES

needs_thread_control = pytest.mark.skipif(cblas.num_threads() is None,
                                          reason="OpenBLAS's thread count cannot be set")


@pytest.fixture
def two_blas_threads(monkeypatch, ember_threads):
    """ember on two threads and every kernel large enough to split."""
    monkeypatch.setattr(im2col, "PARALLEL_MIN_MULTIPLY_ADDS", 0)
    monkeypatch.setattr(im2col, "PARALLEL_GENERAL_MIN_MULTIPLY_ADDS", 0)
    ember_threads(2)
    yield ember_threads


def _count_splits(monkeypatch):
    calls = []
    run_parts = parallel.run_parts
    monkeypatch.setattr(parallel, "run_parts",
                        lambda tasks: calls.append(len(tasks)) or run_parts(tasks))
    return calls


def all_kernels(x, w, gy, stride, pads, dilation, groups):
    """Every convolution kernel's result for these operands (None where a fused one has no
    path)."""
    args = (stride, pads, dilation, groups)
    return (im2col.conv_forward(np, x, w, *args),
            im2col.conv_input_grad(np, gy, w, x.shape[2:], *args),
            im2col.conv_weight_grad(np, x, gy, w.shape[2:], *args),
            im2col.conv_backward(np, x, gy, w, *args),
            im2col.conv_forward_and_weight_grad(np, x, gy, w, *args) if groups == 1 else None)


def operands(x_shape, w_shape, stride, pads, dilation, groups, batch, dtype):
    rng = np.random.default_rng(batch)
    x = rng.standard_normal((batch,) + x_shape[1:]).astype(dtype)
    w = rng.standard_normal(w_shape).astype(dtype)
    y = im2col.conv_forward(np, x, w, stride, pads, dilation, groups)
    return x, w, rng.standard_normal(y.shape).astype(dtype)


def close(result, expected, tol):
    """Equal up to ``tol`` relative to the largest magnitude (sums of products cancel)."""
    scale = float(np.abs(expected).max()) if expected.size else 1.0
    np.testing.assert_allclose(result, expected, rtol=tol, atol=tol * scale)


def assert_same(split, serial, tol):
    """Equal to a tight tolerance: weight gradients are summed per half, and OpenBLAS on one
    thread (inside the split) may sum a product in another order than on two."""
    forward, input_grad, weight_grad, both, transposed_pair = split
    for result, expected in zip((forward, input_grad, weight_grad), serial):
        assert result.dtype == expected.dtype and result.shape == expected.shape
        close(result, expected, tol)
    for pair, expected in ((both, serial[3]), (transposed_pair, serial[4])):
        assert (pair is None) == (expected is None)
        if pair is not None:
            close(pair[0], expected[0], tol)
            close(pair[1], expected[1], tol)


@needs_thread_control
@pytest.mark.parametrize("batch", [2, 5])
@pytest.mark.parametrize("dtype, tol", [(np.float64, 1e-12), (np.float32, 1e-5)])
@pytest.mark.parametrize("x_shape, w_shape, stride, pads, dilation, groups",
                         FUSED_CASES + KERNEL_CASES)
def test_split_kernels_match_serial(x_shape, w_shape, stride, pads, dilation, groups, batch,
                                    dtype, tol, two_blas_threads, monkeypatch):
    x, w, gy = operands(x_shape, w_shape, stride, pads, dilation, groups, batch, dtype)
    calls = _count_splits(monkeypatch)
    split = all_kernels(x, w, gy, stride, pads, dilation, groups)
    assert bool(calls) == (groups == 1), "grouped convolutions stay serial, others split"
    two_blas_threads(1)
    assert_same(split, all_kernels(x, w, gy, stride, pads, dilation, groups), tol)


@needs_thread_control
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_split_resnet_block_sizes_match_serial(dtype, two_blas_threads, monkeypatch):
    """A ResNet-sized layer with several column blocks per half and an odd batch."""
    x, w, gy = operands((1, 16, 16, 16), (16, 16, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1,
                        7, dtype)
    geometry = ((1, 1), ((1, 1), (1, 1)), (1, 1), 1)
    split = all_kernels(x, w, gy, *geometry)
    two_blas_threads(1)
    assert_same(split, all_kernels(x, w, gy, *geometry), 1e-5 if dtype == np.float32 else 1e-12)


@needs_thread_control
def test_one_sample_and_small_kernels_stay_serial(two_blas_threads, monkeypatch):
    monkeypatch.setattr(parallel, "run_parts", lambda tasks: pytest.fail("split"))
    x, w, gy = operands((1, 8, 6, 6), (8, 8, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1, 1,
                        np.float32)
    all_kernels(x, w, gy, (1, 1), ((1, 1), (1, 1)), (1, 1), 1)
    monkeypatch.setattr(im2col, "PARALLEL_MIN_MULTIPLY_ADDS", 1 << 40)
    monkeypatch.setattr(im2col, "PARALLEL_GENERAL_MIN_MULTIPLY_ADDS", 1 << 40)
    x, w, gy = operands((1, 8, 6, 6), (8, 8, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1, 4,
                        np.float32)
    all_kernels(x, w, gy, (1, 1), ((1, 1), (1, 1)), (1, 1), 1)


@needs_thread_control
def test_no_split_on_one_thread(monkeypatch, ember_threads):
    monkeypatch.setattr(im2col, "PARALLEL_MIN_MULTIPLY_ADDS", 0)
    ember_threads(1)
    assert not parallel.available() and cblas.num_threads() == 1
    assert parallel.run_parts([threading.get_ident, threading.get_ident]) == \
        [threading.get_ident()] * 2


def test_no_split_without_blas_thread_control(monkeypatch, ember_threads):
    """Where OpenBLAS's thread count cannot be read and set, kernels run serially, and the
    results are the serial ones."""
    monkeypatch.setattr(cblas, "_THREAD_CONTROL", None)
    monkeypatch.setattr(im2col, "PARALLEL_MIN_MULTIPLY_ADDS", 0)
    ember_threads(2)
    assert cblas.num_threads() is None and not cblas.set_num_threads(1)
    assert not parallel.available() and ember.get_num_threads() == 2
    on_caller = []
    parallel.run_parts([lambda: on_caller.append(threading.get_ident()),
                        lambda: on_caller.append(threading.get_ident())])
    assert on_caller == [threading.get_ident()] * 2
    with cblas.one_thread():
        pass
    x, w, gy = operands((1, 8, 6, 6), (8, 8, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1, 3,
                        np.float64)
    geometry = ((1, 1), ((1, 1), (1, 1)), (1, 1), 1)
    result = all_kernels(x, w, gy, *geometry)
    ember_threads(1)
    assert_same(result, all_kernels(x, w, gy, *geometry), 0)


@needs_thread_control
def test_parts_hold_blas_to_one_thread_and_restore_it(two_blas_threads):
    assert cblas.num_threads() == 2
    assert parallel.run_parts([cblas.num_threads, cblas.num_threads]) == [1, 1]
    assert cblas.num_threads() == 2


@needs_thread_control
@pytest.mark.parametrize("failing", ["first", "second", "both"])
def test_parts_raise_and_recover_from_exceptions(failing, two_blas_threads):
    def half(name):
        def run():
            if failing in (name, "both"):
                raise ValueError(name)
            return name
        return run
    with pytest.raises(ValueError, match="first" if failing != "second" else "second"):
        parallel.run_parts([half("first"), half("second")])
    assert cblas.num_threads() == 2
    assert not parallel._region_lock.locked()
    assert parallel.run_parts([lambda: "x", lambda: "y"]) == ["x", "y"]  # the worker serves on


@needs_thread_control
def test_nested_parts_run_serially(two_blas_threads):
    def nested():
        return parallel.run_parts([cblas.num_threads, threading.get_ident])
    (threads, ident), _ = parallel.run_parts([nested, lambda: None])
    assert threads == 1 and ident == threading.get_ident()


@needs_thread_control
def test_one_thread_context_restores_on_exceptions():
    with threadpool_limits(2, user_api="blas"):
        with pytest.raises(KeyError):
            with cblas.one_thread():
                assert cblas.num_threads() == 1
                raise KeyError
        assert cblas.num_threads() == 2


@needs_thread_control
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_conv_module_gradients_match_torch_with_split(dtype, two_blas_threads):
    torch.manual_seed(0)
    conv_t = torch.nn.Conv2d(6, 8, 3, padding=1, stride=1).to(dtype)
    short_t = torch.nn.Conv2d(3, 6, 1, stride=2).to(dtype)
    x_t = torch.randn(5, 3, 12, 11, dtype=dtype, requires_grad=True)
    conv_e, short_e = ember.nn.Conv2d(6, 8, 3, padding=1), ember.nn.Conv2d(3, 6, 1, stride=2)
    ember_dtype = ember.float32 if dtype == torch.float32 else ember.float64
    for module_e, module_t in ((conv_e, conv_t), (short_e, short_t)):
        module_e.to(ember_dtype)
        for p_e, p_t in zip(module_e.parameters(), module_t.parameters()):
            p_e.data = ember.from_numpy(p_t.detach().numpy().copy())
    x_e = ember.from_numpy(x_t.detach().numpy().copy()).requires_grad_()
    conv_t(short_t(x_t)).square().sum().backward()
    conv_e(short_e(x_e)).square().sum().backward()
    tol = 1e-4 if dtype == torch.float32 else 1e-10
    np.testing.assert_allclose(x_e.grad.numpy(), x_t.grad.numpy(), rtol=tol, atol=tol)
    for module_e, module_t in ((conv_e, conv_t), (short_e, short_t)):
        for p_e, p_t in zip(module_e.parameters(), module_t.parameters()):
            np.testing.assert_allclose(p_e.grad.numpy(), p_t.grad.numpy(), rtol=tol, atol=tol)
