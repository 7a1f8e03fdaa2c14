"""The fused convolution backward kernels (both gradients from one set of columns) against
the two kernels they replace, and the convolution modules' gradients against torch with and
without them, first and second order."""
import numpy as np
import pytest
import torch

import ember
from ember._backend import choice, im2col

from test_conv_kernels import KERNEL_CASES, direct_conv

# x shape, w shape, stride, pads, dilation, groups: each takes a fused path (the strided ones
# only for the transposed convolution's backward)
FUSED_CASES = [
    ((2, 16, 10, 9), (16, 16, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1),  # ResNet's 3x3
    ((2, 6, 9, 8), (5, 6, 3, 2), (1, 1), ((1, 0), (0, 1)), (1, 1), 1),      # odd pads
    ((2, 6, 9, 9), (4, 6, 3, 3), (1, 1), ((2, 2), (2, 2)), (2, 2), 1),      # dilated
    ((2, 5, 12), (4, 5, 3), (1,), ((1, 1),), (1,), 1),                      # 1-D
    ((1, 4, 5, 6, 5), (4, 4, 3, 3, 2), (1, 1, 1), ((1, 1), (1, 1), (0, 1)), (1, 1, 1), 1),
    ((3, 16, 8, 8), (6, 16, 4, 4), (2, 2), ((1, 1), (1, 1)), (1, 1), 1),    # DCGAN's phases
    ((2, 16, 9, 8), (6, 16, 2, 3), (3, 2), ((0, 2), (1, 0)), (1, 1), 1),    # a tapless phase
    ((2, 16, 11), (4, 16, 3), (2,), ((1, 1),), (1,), 1),                    # 1-D phases
    ((1, 16, 5, 6, 5), (4, 16, 3, 2, 3), (2, 1, 2), ((1, 1), (0, 1), (1, 0)), (1, 1, 1), 1),
]


def separate(x, w, gy, stride, pads, dilation, groups):
    """(conv(x, w), its input gradient, its weight gradient) by the separate kernels."""
    return (im2col.conv_forward(np, x, w, stride, pads, dilation, groups),
            im2col.conv_input_grad(np, gy, w, x.shape[2:], stride, pads, dilation, groups),
            im2col.conv_weight_grad(np, x, gy, w.shape[2:], stride, pads, dilation, groups))


@pytest.mark.parametrize("dtype, tol", [(np.float64, 1e-10), (np.float32, 2e-5)])
@pytest.mark.parametrize("x_shape, w_shape, stride, pads, dilation, groups",
                         FUSED_CASES + KERNEL_CASES)
def test_fused_kernels_match_separate_kernels(x_shape, w_shape, stride, pads, dilation, groups,
                                              dtype, tol, monkeypatch):
    monkeypatch.setattr(im2col, "COLUMN_BLOCK_BYTES", 1)  # blocks of one sample: the sums too
    rng = np.random.default_rng(4)
    x = rng.standard_normal(x_shape).astype(dtype)
    w = rng.standard_normal(w_shape).astype(dtype)
    gy = rng.standard_normal(direct_conv(x, w, stride, pads, dilation, groups).shape).astype(dtype)
    y, gx, gw = separate(x, w, gy, stride, pads, dilation, groups)
    both = im2col.conv_backward(np, x, gy, w, stride, pads, dilation, groups)
    if both is not None:
        for got, want in zip(both, (gx, gw)):
            assert got.dtype == dtype and got.shape == want.shape and got.flags.c_contiguous
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())
    # the backward of a transposed convolution: conv(x, w) and the weight gradient against gy
    both_t = im2col.conv_forward_and_weight_grad(np, x, gy, w, stride, pads, dilation, groups)
    if both_t is not None:
        for got, want in zip(both_t, (y, gw)):
            assert got.dtype == dtype and got.shape == want.shape and got.flags.c_contiguous
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())
    if (x_shape, w_shape, stride, pads, dilation, groups) in FUSED_CASES:
        assert both_t is not None
        assert (both is not None) == all(s == 1 for s in stride)


def test_fused_kernels_step_aside_when_switched_off(monkeypatch):
    monkeypatch.setattr(im2col, "FUSED_BACKWARD", False)
    x_shape, w_shape, stride, pads, dilation, groups = FUSED_CASES[0]
    x, w = np.ones(x_shape), np.ones(w_shape)
    gy = np.ones(direct_conv(x, w, stride, pads, dilation, groups).shape)
    assert im2col.conv_backward(np, x, gy, w, stride, pads, dilation, groups) is None
    assert im2col.conv_forward_and_weight_grad(np, x, gy, w, stride, pads, dilation,
                                                groups) is None


@pytest.mark.parametrize("x_shape, w_shape, stride, pads, dilation, groups", FUSED_CASES)
def test_fused_kernels_on_an_empty_batch(x_shape, w_shape, stride, pads, dilation, groups):
    x, w = np.ones((0,) + x_shape[1:]), np.ones(w_shape)
    gy = np.ones((0,) + direct_conv(np.ones(x_shape), w, stride, pads, dilation, groups).shape[1:])
    pairs = [im2col.conv_forward_and_weight_grad(np, x, gy, w, stride, pads, dilation, groups),
             im2col.conv_backward(np, x, gy, w, stride, pads, dilation, groups)]
    for pair, first_shape in zip(pairs, (gy.shape, x.shape)):
        if pair is not None:
            assert pair[0].shape == first_shape
            assert pair[1].shape == w.shape and not pair[1].any()
    gx = im2col.conv_input_grad(np, gy, w, x.shape[2:], stride, pads, dilation, groups)
    assert gx.shape == x.shape


MODULE_CASES = [  # (transposed, in channels, out channels, kernel, stride, padding, input shape)
    (False, 16, 16, 3, 1, 1, (3, 16, 11, 10)),
    (False, 6, 5, (3, 2), 1, (1, 0), (2, 6, 9, 8)),
    (True, 12, 8, 4, 2, 1, (3, 12, 5, 4)),
    (True, 10, 6, 3, 1, 0, (2, 10, 6, 7)),
]


def _grads(lib, case, dtype, x_data, w_data, g_data, create_graph):
    transposed, *_ = case
    x = lib.tensor(x_data, requires_grad=True)
    w = lib.tensor(w_data, requires_grad=True)
    stride, padding = case[4], case[5]
    f = lib.nn.functional
    y = (f.conv_transpose2d if transposed else f.conv2d)(x, w, stride=stride, padding=padding)
    gx, gw = lib.autograd.grad(y, (x, w), lib.tensor(g_data), create_graph=create_graph)
    if not create_graph:
        return gx, gw
    # second order: the gradient of a function of both first-order gradients
    (gx * gx).sum().add((gw * gw).sum()).backward()
    return gx, gw, x.grad, w.grad


def _case_data(case, dtype):
    transposed, cin, cout, kernel, stride, padding, x_shape = case
    rng = np.random.default_rng(5)
    k = (kernel, kernel) if isinstance(kernel, int) else kernel
    w_shape = (cin, cout) + k if transposed else (cout, cin) + k
    x_data = rng.standard_normal(x_shape).astype(dtype)
    w_data = rng.standard_normal(w_shape).astype(dtype)
    f = torch.nn.functional
    out = (f.conv_transpose2d if transposed else f.conv2d)(
        torch.tensor(x_data), torch.tensor(w_data), stride=stride, padding=padding)
    g_data = rng.standard_normal(tuple(out.shape)).astype(dtype)
    return x_data, w_data, g_data


def _assert_grads_match(got, want, dtype):
    tol = 1e-4 if dtype == np.float32 else 1e-10
    for a, b in zip(got, want):
        b = b.detach().numpy()
        assert a.dtype == (ember.float32 if dtype == np.float32 else ember.float64)
        np.testing.assert_allclose(a.detach().numpy(), b, rtol=tol, atol=tol * np.abs(b).max())


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("case", MODULE_CASES)
def test_conv_gradients_on_onednn_match_torch(case, create_graph):
    if not choice.enabled(choice.ONEDNN):
        pytest.skip("oneDNN is not in use (not installed, or EMBER_ONEDNN=0)")
    x_data, w_data, g_data = _case_data(case, np.float32)
    want = _grads(torch, case, np.float32, x_data, w_data, g_data, create_graph)
    with choice.only(choice.ONEDNN):
        got = _grads(ember, case, np.float32, x_data, w_data, g_data, create_graph)
    _assert_grads_match(got, want, np.float32)


@pytest.mark.parametrize("fused", [True, False])
@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", MODULE_CASES)
def test_conv_gradients_match_torch(case, dtype, create_graph, fused, monkeypatch):
    """NumPy's path, with and without its fused backward kernels."""
    monkeypatch.setattr(im2col, "FUSED_BACKWARD", fused)
    fused_calls = []
    for name in ("conv_backward", "conv_forward_and_weight_grad"):
        def spy(*args, kernel=getattr(im2col, name)):
            result = kernel(*args)
            fused_calls.append(result is not None)
            return result
        monkeypatch.setattr(im2col, name, spy)
    x_data, w_data, g_data = _case_data(case, dtype)
    want = _grads(torch, case, dtype, x_data, w_data, g_data, create_graph)
    with choice.only(choice.NUMPY):
        got = _grads(ember, case, dtype, x_data, w_data, g_data, create_graph)
    assert any(fused_calls) == (fused and not create_graph)  # the graph needs separate ops
    _assert_grads_match(got, want, dtype)
