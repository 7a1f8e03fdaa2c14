"""The convolution kernels against their definition, and each fast path against the general one."""
import numpy as np
import pytest

from ember._backend import choice, depthwise, im2col

# -- each fast path against the general one, and all against a direct sum over kernel offsets --

def direct_conv(x, w, stride, pads, dilation, groups):
    """The convolution by its definition: a sum over kernel offsets of strided window views."""
    xpad = np.pad(x, ((0, 0), (0, 0)) + tuple(pads))
    win = im2col.windows(np, xpad, w.shape[2:], stride, dilation)  # (N, C, *O, *K)
    n, c = x.shape[:2]
    cout, cg = w.shape[:2]
    nd = len(stride)
    win = win.reshape((n, groups, cg) + win.shape[2:])
    wg = w.reshape((groups, cout // groups, cg) + w.shape[2:])
    letters = "ijk"[:nd]
    kl = "uvw"[:nd]
    y = np.einsum(f"ngc{letters}{kl},gdc{kl}->ngd{letters}", win, wg)
    return y.reshape((n, cout) + y.shape[3:])


FLAT_COL2IM_CASES = [  # stride-1 input gradients with more output than input channels
    ((2, 6, 14, 14), (16, 6, 5, 5), (1, 1), ((0, 0), (0, 0)), (1, 1), 1),   # LeNet's second
    ((2, 3, 10, 9), (8, 3, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 2), 1),     # dilated
    ((2, 4, 9, 8), (6, 2, 3, 3), (1, 1), ((1, 0), (0, 1)), (1, 1), 2),      # grouped
    ((2, 3, 12), (5, 3, 3), (1,), ((1, 2),), (2,), 1),                      # 1-D
    ((1, 2, 6, 7, 6), (4, 2, 2, 3, 2), (1, 1, 1), ((0, 1), (1, 0), (0, 0)), (1, 1, 1), 1),
]

KERNEL_CASES = [  # x shape, w shape, stride, pads, dilation, groups
    ((2, 4, 7, 6), (4, 1, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 4),      # depthwise
    ((2, 4, 9, 8), (4, 1, 3, 2), (2, 1), ((0, 1), (2, 0)), (1, 2), 4),      # depthwise, odd
    ((2, 3, 9, 9), (3, 1, 3, 3), (2, 3), ((1, 1), (1, 1)), (2, 1), 3),      # depthwise, strided
    ((2, 3, 10), (3, 1, 3), (2,), ((1, 1),), (1,), 3),                      # depthwise 1-D
    ((1, 2, 4, 5, 5), (2, 1, 2, 3, 3), (1, 1, 2), ((1, 0), (1, 1), (0, 1)), (1, 1, 1), 2),
    ((2, 4, 7, 6), (6, 2, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 2),      # grouped
    ((2, 4, 7, 6), (3, 4, 3, 3), (1, 1), ((1, 1), (1, 1)), (2, 1), 1),      # as a convolution
    ((2, 4, 7, 6), (20, 4, 3, 3), (2, 2), ((1, 1), (1, 1)), (1, 1), 1),     # col2im
    ((2, 4, 7, 6), (6, 4, 1, 1), (1, 1), ((0, 0), (0, 0)), (1, 1), 1),      # 1x1
    ((2, 4, 7, 6), (6, 4, 1, 1), (1, 1), ((1, 1), (1, 1)), (1, 1), 1),      # 1x1, padded
    ((3, 40, 4, 4), (5, 40, 4, 4), (1, 1), ((0, 0), (0, 0)), (1, 1), 1),    # 1x1 output
    ((3, 4, 8, 8), (5, 4, 4, 4), (2, 2), ((1, 1), (1, 1)), (1, 1), 1),      # DCGAN's phases
    ((2, 4, 9, 8), (6, 4, 2, 3), (3, 2), ((0, 2), (1, 0)), (1, 1), 1),      # a tapless phase
    ((2, 6, 9, 7), (4, 3, 3, 3), (2, 2), ((2, 1), (0, 1)), (1, 1), 2),      # grouped phases
    ((2, 4, 11), (3, 4, 3), (2,), ((1, 1),), (1,), 1),                      # 1-D phases
    ((1, 2, 5, 6, 5), (3, 2, 3, 2, 3), (2, 1, 2), ((1, 1), (0, 1), (1, 0)), (1, 1, 1), 1),
    ((2, 3, 8, 8), (4, 3, 1, 1), (2, 2), ((0, 0), (0, 0)), (1, 1), 1),      # 1x1 shortcut
    ((3, 1, 8, 7), (6, 1, 5, 5), (1, 1), ((2, 2), (2, 2)), (1, 1), 1),      # LeNet's first
    ((2, 3, 9, 8), (6, 3, 3, 2), (2, 1), ((0, 1), (2, 0)), (1, 2), 1),      # few channels
] + FLAT_COL2IM_CASES

# each flag's value for the fast paths (all taken, in blocks of one sample) and for the
# general path they are pinned to
FAST_PATH_FLAGS = {"depthwise.DEPTHWISE_DENSE": (True, False),
                   "depthwise.DEPTHWISE_ROWS": (True, False),
                   "depthwise.INPUT_GRAD_AS_FORWARD": (True, False),
                   "INPUT_GRAD_AS_CONV": (True, False),
                   "INPUT_GRAD_PHASES_MIN_CHANNELS": (1, 10**9), "FLAT_COL2IM": (True, False),
                   "CHANNELS_LAST_MIN_CHANNELS": (1, 10**9), "COLUMN_BLOCK_BYTES": (1, 1 << 20)}


def set_paths(monkeypatch, which):
    """Sets every flag to its fast (``which`` 0) or general (1) value."""
    for name, values in FAST_PATH_FLAGS.items():
        module, _, attr = name.rpartition(".")
        monkeypatch.setattr({"depthwise": depthwise, "": im2col}[module], attr, values[which])


def all_three(x, w, gy, stride, pads, dilation, groups):
    return (im2col.conv_forward(np, x, w, stride, pads, dilation, groups),
            im2col.conv_input_grad(np, gy, w, x.shape[2:], stride, pads, dilation, groups),
            im2col.conv_weight_grad(np, x, gy, w.shape[2:], stride, pads, dilation, groups))


@pytest.mark.parametrize("x_shape, w_shape, stride, pads, dilation, groups", KERNEL_CASES)
def test_conv_kernels_match_direct_sum_and_general_paths(x_shape, w_shape, stride, pads,
                                                         dilation, groups, monkeypatch):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(x_shape)
    w = rng.standard_normal(w_shape)
    y = direct_conv(x, w, stride, pads, dilation, groups)
    gy = rng.standard_normal(y.shape)
    set_paths(monkeypatch, 0)
    fast = all_three(x, w, gy, stride, pads, dilation, groups)
    # the adjoints by their definition: <conv(x), gy> = <x, gx> = <w, gw>
    np.testing.assert_allclose(fast[0], y, rtol=1e-10, atol=1e-10)
    assert fast[1].shape == x.shape and fast[2].shape == w.shape
    assert fast[0].flags.c_contiguous and fast[1].flags.c_contiguous
    dx, dw = rng.standard_normal(x.shape), rng.standard_normal(w.shape)
    np.testing.assert_allclose(np.vdot(direct_conv(dx, w, stride, pads, dilation, groups), gy),
                               np.vdot(dx, fast[1]), rtol=1e-10)
    np.testing.assert_allclose(np.vdot(direct_conv(x, dw, stride, pads, dilation, groups), gy),
                               np.vdot(dw, fast[2]), rtol=1e-10)
    set_paths(monkeypatch, 1)
    general = all_three(x, w, gy, stride, pads, dilation, groups)
    for a, b in zip(fast, general):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)


def test_fast_kernels_keep_float32(monkeypatch):
    rng = np.random.default_rng(2)
    set_paths(monkeypatch, 0)
    for x_shape, w_shape, stride, pads, dilation, groups in KERNEL_CASES:
        x = rng.standard_normal(x_shape, dtype=np.float32)
        w = rng.standard_normal(w_shape, dtype=np.float32)
        y = im2col.conv_forward(np, x, w, stride, pads, dilation, groups)
        results = all_three(x, w, np.ones_like(y), stride, pads, dilation, groups)
        assert all(r.dtype == np.float32 for r in results)


@pytest.mark.parametrize("with_nan", [False, True])
@pytest.mark.parametrize("shape, kernel", [((2, 3, 8, 8), 2), ((2, 3, 9, 7), 2), ((2, 2, 9, 9), 3),
                                           ((2, 3, 12), 4), ((1, 2, 4, 6, 6), 2)])
def test_tiled_max_pool_matches_general_gather(shape, kernel, with_nan, monkeypatch):
    import ember
    from ember.nn.functional import pooling
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape).astype(np.float32)
    x.reshape(-1)[:4] = x.reshape(-1)[4]  # ties: the first maximum wins
    if with_nan:  # windows with one and with two NaNs: the last NaN wins
        x.reshape(-1)[[1, 6, 7, 20]] = np.nan
    pool = getattr(ember.nn.functional, f"max_pool{len(shape) - 2}d")

    def run():  # NumPy's two paths (oneDNN's max pooling is tested in test_onednn.py)
        t = ember.tensor(x, requires_grad=True)
        with choice.only(choice.NUMPY):
            out, idx = pool(t, kernel, return_indices=True)
            g = np.arange(out.numel(), dtype=np.float32).reshape(tuple(out.shape))
            out.backward(ember.tensor(g))
        return out.detach().numpy(), idx.numpy(), t.grad.numpy()

    fast = run()
    monkeypatch.setattr(pooling, "TILED_MAX_POOL", False)
    general = run()
    for a, b in zip(fast, general):
        np.testing.assert_array_equal(a, b)
    assert fast[0].dtype == fast[2].dtype == np.float32
    assert np.isnan(fast[0]).any() == with_nan


@pytest.mark.parametrize("x_shape, w_shape, stride, pads, dilation, groups", FLAT_COL2IM_CASES)
def test_flat_col2im_cases_take_the_flat_path(x_shape, w_shape, stride, pads, dilation, groups,
                                              monkeypatch):
    calls = []
    flat = im2col._input_grad_flat
    monkeypatch.setattr(im2col, "_input_grad_flat", lambda *a: calls.append(1) or flat(*a))
    out = im2col._output_spatial(x_shape[2:], w_shape[2:], stride, pads, dilation)
    gy = np.ones((x_shape[0], w_shape[0]) + out)
    im2col.conv_input_grad(np, gy, np.ones(w_shape), x_shape[2:], stride, pads, dilation, groups)
    assert calls
