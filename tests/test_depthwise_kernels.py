"""The depthwise convolution kernels (``_backend/depthwise.py``) in every configuration of
their fast paths (the row plan over one or several channel blocks, a last block shorter than
the others, the stride-1 input gradient as a forward convolution), pinned to the tap loop
(the general path) and to the convolution's definition, in float32 and float64; and the
depthwise ``conv2d`` against torch, double backward included."""
import numpy as np
import pytest
import torch

import ember
from ember._backend import depthwise

from test_conv_kernels import direct_conv

CASES = [  # x shape, kernel, stride, pads, dilation
    ((3, 5, 9, 8), (3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1)),      # MobileNet's 3x3
    ((3, 5, 9, 8), (3, 3), (2, 2), ((1, 1), (1, 1)), (1, 1)),      # strided
    ((2, 7, 6, 7), (3, 2), (2, 1), ((0, 2), (1, 0)), (1, 2)),      # odd everything
    ((2, 4, 5, 5), (5, 5), (1, 1), ((2, 2), (2, 2)), (1, 1)),      # 5x5
    ((2, 3, 8, 8), (3, 3), (1, 1), ((3, 0), (0, 1)), (1, 2)),      # pads too large for a forward
    ((2, 5, 11), (3,), (1,), ((1, 1),), (1,)),                     # 1-D
    ((2, 5, 11), (3,), (3,), ((0, 2),), (2,)),                     # 1-D, strided, dilated
    ((2, 3, 4, 5, 4), (2, 3, 2), (1, 2, 1), ((1, 0), (1, 1), (0, 2)), (1, 1, 2)),  # 3-D
]

# the fast paths: the dense matrices; rows in blocks of one channel, of two (the last one
# shorter), and all in one, with output rows in tiles of one column, of three (the last one
# shorter), and untiled
FAST_SETTINGS = [dict(DEPTHWISE_DENSE=True, DENSE_MAX_ENTRIES=10**6)] + [
    dict(DEPTHWISE_DENSE=False, DEPTHWISE_ROWS=True, INPUT_GRAD_AS_FORWARD=True,
         CHANNEL_BLOCK_BYTES=b, TILE_WIDTH=t) for b, t in ((1, 1), (None, 3), (1 << 30, 16))]
GENERAL = dict(DEPTHWISE_DENSE=False, DEPTHWISE_ROWS=False, INPUT_GRAD_AS_FORWARD=False)


def three_kernels(x, w, gy, stride, pads, dilation):
    return (depthwise.forward(np, x, w, stride, pads, dilation),
            depthwise.input_grad(np, gy, w, x.shape[2:], stride, pads, dilation),
            depthwise.weight_grad(np, x, gy, w.shape[2:], stride, pads, dilation))


def apply(monkeypatch, settings, x_shape, kernel, dtype):
    for name, value in settings.items():
        if name == "CHANNEL_BLOCK_BYTES" and value is None:  # two channels a block
            value = 2 * x_shape[0] * np.prod(
                [s + 2 * k for s, k in zip(x_shape[2:], kernel)]) * np.dtype(dtype).itemsize
        monkeypatch.setattr(depthwise, name, value)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("settings", FAST_SETTINGS)
@pytest.mark.parametrize("x_shape, kernel, stride, pads, dilation", CASES)
def test_depthwise_fast_paths_match_the_tap_loop(x_shape, kernel, stride, pads, dilation,
                                                 settings, dtype, monkeypatch):
    rng = np.random.default_rng(0)
    c = x_shape[1]
    x = rng.standard_normal(x_shape).astype(dtype)
    w = rng.standard_normal((c, 1) + kernel).astype(dtype)
    y = direct_conv(x.astype(np.float64), w.astype(np.float64), stride, pads, dilation, c)
    gy = rng.standard_normal(y.shape).astype(dtype)
    apply(monkeypatch, settings, x_shape, kernel, dtype)
    fast = three_kernels(x, w, gy, stride, pads, dilation)
    apply(monkeypatch, GENERAL, x_shape, kernel, dtype)
    general = three_kernels(x, w, gy, stride, pads, dilation)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(fast[0], y, rtol=tol, atol=tol)
    for a, b, shape in zip(fast, general, (y.shape, x.shape, w.shape)):
        assert a.dtype == dtype and a.shape == shape and a.flags.c_contiguous
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("stride", [1, 2])
@pytest.mark.parametrize("dense", [True, False])
def test_depthwise_conv2d_matches_torch_with_double_backward(dense, stride, dtype, monkeypatch):
    monkeypatch.setattr(depthwise, "DEPTHWISE_DENSE", dense)
    monkeypatch.setattr(depthwise, "CHANNEL_BLOCK_BYTES", 1)  # several blocks
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal((2, 6, 7, 9)), rng.standard_normal((6, 1, 3, 3))]
    results = {}
    for lib in (ember, torch):
        ldtype = getattr(lib, str(dtype).split(".")[1])
        x, w = (lib.tensor(a, dtype=ldtype, requires_grad=True) for a in arrays)
        y = lib.nn.functional.conv2d(x, w, stride=stride, padding=1, groups=6)
        gx, gw = (ember if lib is ember else torch).autograd.grad(
            (y * y).sum(), (x, w), create_graph=True)
        ggx, ggw = (ember if lib is ember else torch).autograd.grad(
            (gx * gx).sum() + (gw * gw).sum(), (x, w))
        results[lib] = [t.detach().numpy() for t in (y, gx, gw, ggx, ggw)]
    tol = 1e-4 if dtype == torch.float32 else 1e-10
    for e, t in zip(results[ember], results[torch]):
        np.testing.assert_allclose(e, t, rtol=tol, atol=tol * max(1.0, np.abs(t).max()))
