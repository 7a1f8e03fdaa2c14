"""The one-GEMM convolution layout (few output channels) against the per-sample GEMM layout."""
import numpy as np
import pytest

from ember._backend import kernels

CASES = [  # x shape, w shape, stride, pads, dilation
    ((3, 4, 7, 6), (5, 4, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1)),
    ((2, 3, 9, 8), (6, 3, 3, 2), (2, 1), ((0, 1), (2, 0)), (1, 2)),
    ((2, 2, 5, 5), (3, 2, 1, 1), (2, 2), ((0, 0), (0, 0)), (1, 1)),
    ((1, 2, 6), (4, 2, 3), (1,), ((1, 1),), (2,)),
]


def both_layouts(monkeypatch, fn):
    monkeypatch.setattr(kernels, "ONE_GEMM_MAX_OUT_CHANNELS", 0)
    general = fn()
    monkeypatch.setattr(kernels, "ONE_GEMM_MAX_OUT_CHANNELS", 10**9)
    return general, fn()


@pytest.mark.parametrize("x_shape, w_shape, stride, pads, dilation", CASES)
def test_one_gemm_layout_matches_per_sample_layout(x_shape, w_shape, stride, pads, dilation,
                                                   monkeypatch):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(x_shape)
    w = rng.standard_normal(w_shape)
    general, fast = both_layouts(
        monkeypatch, lambda: kernels.conv_forward(np, x, w, stride, pads, dilation, 1))
    assert fast.shape == general.shape and fast.flags.c_contiguous
    np.testing.assert_allclose(fast, general, rtol=1e-12, atol=1e-12)
    gy = rng.standard_normal(general.shape)
    general, fast = both_layouts(monkeypatch, lambda: kernels.conv_weight_grad(
        np, x, gy, w_shape[2:], stride, pads, dilation, 1))
    assert fast.shape == general.shape == w_shape
    np.testing.assert_allclose(fast, general, rtol=1e-12, atol=1e-12)
