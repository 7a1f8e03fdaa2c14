"""The fused array paths of batch_norm, layer_norm and the single-node activations, pinned to
torch (float32 and float64), to the composite backward used under ``create_graph=True``, and
to their numerically careful fallbacks."""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
import ember.nn.functional as F


def _run(lib, fn, arrays, grad, create_graph=False):
    """``fn`` of tensors from ``arrays`` (all requiring grad), backward with ``grad``;
    (output, gradients) as NumPy arrays."""
    inputs = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = fn(lib, *inputs)
    grads = (ember if lib is ember else torch).autograd.grad(
        out, inputs, lib.tensor(grad), create_graph=create_graph, allow_unused=True)
    return out.detach().numpy(), [None if g is None else g.detach().numpy() for g in grads]


def _check_as_accurate_as_torch(fn, x32, w, b, grad):
    """ember's float32 output and gradients are as close to a float64 torch reference as torch's
    own float32 ones (within 4x), or within 1e-5 of the reference's scale."""
    ye, ge = _run(ember, fn, [x32, w, b], grad)
    yt, gt = _run(torch, fn, [x32, w, b], grad)
    yr, gr = _run(torch, fn, [x32.astype(np.float64), w.astype(np.float64),
                              b.astype(np.float64)], grad.astype(np.float64))
    for e, t, r in zip([ye] + ge, [yt] + gt, [yr] + gr):
        scale = np.abs(r).max()
        assert np.abs(e - r).max() <= max(4 * np.abs(t - r).max(), 1e-5 * scale)

def _check_against_torch(fn, arrays, rtol, atol, seed=0):
    out_t = fn(torch, *[torch.tensor(a) for a in arrays])
    grad = np.random.default_rng(seed).standard_normal(tuple(out_t.shape)).astype(arrays[0].dtype)
    ye, ge = _run(ember, fn, arrays, grad)
    yt, gt = _run(torch, fn, arrays, grad)
    assert ye.dtype == yt.dtype
    np.testing.assert_allclose(ye, yt, rtol=rtol, atol=atol)
    for e, t in zip(ge, gt):
        assert e.dtype == t.dtype
        np.testing.assert_allclose(e, t, rtol=rtol, atol=atol * max(1.0, np.abs(t).max()))


def _batch_norm(training, affine=True, stats=None):
    def fn(lib, x, *params):
        rm = rv = None
        if stats is not None:
            rm, rv = (lib.tensor(s) for s in stats)
        w, b = params if affine else (None, None)
        return lib.nn.functional.batch_norm(x, rm, rv, w, b, training=training)
    return fn


TOLERANCES = {"float32": (2e-5, 2e-5), "float64": (1e-10, 1e-12)}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5), (3, 4, 5, 6), (2, 3, 2, 3, 4)])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_fused_matches_torch(dtype, shape, training):
    rng = np.random.default_rng(1)
    c = shape[1]
    x = (rng.standard_normal(shape) * 2 + 0.5).astype(dtype)
    w, b = rng.standard_normal(c).astype(dtype), rng.standard_normal(c).astype(dtype)
    stats = (rng.standard_normal(c).astype(dtype), rng.uniform(0.5, 2, c).astype(dtype))
    _check_against_torch(_batch_norm(training, stats=stats), [x, w, b], *TOLERANCES[dtype])


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_fused_without_affine_and_on_a_transposed_input(training):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((5, 4, 3, 2)).astype(np.float32).transpose(3, 1, 2, 0)
    stats = (rng.standard_normal(4).astype(np.float32),
             rng.uniform(0.5, 2, 4).astype(np.float32))
    _check_against_torch(_batch_norm(training, affine=False, stats=stats), [x],
                         *TOLERANCES["float32"])


@pytest.mark.parametrize("offset", [0.0, 2.0, 1e3])
def test_batch_norm_large_mean_stays_accurate(offset):
    """mean**2 / var beyond the one-pass limit takes the two-pass sums: float32 results stay
    as close to the float64 ones as torch's float32 results are."""
    rng = np.random.default_rng(3)
    x64 = rng.standard_normal((8, 3, 6, 6)) + offset
    x64[:, 1] = rng.standard_normal((8, 6, 6)) * 1e-2 + offset  # a narrow channel
    x32 = x64.astype(np.float32)
    w, b = np.ones(3, np.float32), np.zeros(3, np.float32)
    fn = _batch_norm(True)
    _check_as_accurate_as_torch(fn, x32, w, b, rng.standard_normal(x64.shape).astype(np.float32))


def test_batch_norm_running_stats_from_fused_path():
    rng = np.random.default_rng(4)
    x = (rng.standard_normal((6, 3, 4)) + 1).astype(np.float32)
    rm, rv = ember.zeros(3), ember.ones(3)
    rmt, rvt = torch.zeros(3), torch.ones(3)
    F.batch_norm(ember.tensor(x), rm, rv, training=True, momentum=0.3)
    TF.batch_norm(torch.tensor(x), rmt, rvt, training=True, momentum=0.3)
    np.testing.assert_allclose(rm.numpy(), rmt.numpy(), rtol=1e-6)
    np.testing.assert_allclose(rv.numpy(), rvt.numpy(), rtol=1e-5)
    assert rm.dtype == ember.float32 and rv.dtype == ember.float32


def _layer_norm(shape, affine=True):
    def fn(lib, x, *params):
        w, b = params if affine else (None, None)
        return lib.nn.functional.layer_norm(x, shape, w, b)
    return fn


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,normalized", [((7, 5), (5,)), ((2, 3, 4, 5), (4, 5)),
                                              ((3, 8), (3, 8))])
def test_layer_norm_fused_matches_torch(dtype, shape, normalized):
    rng = np.random.default_rng(5)
    x = (rng.standard_normal(shape) * 3 - 1).astype(dtype)
    w = rng.standard_normal(normalized).astype(dtype)
    b = rng.standard_normal(normalized).astype(dtype)
    _check_against_torch(_layer_norm(normalized), [x, w, b], *TOLERANCES[dtype])
    _check_against_torch(_layer_norm(normalized, affine=False), [x], *TOLERANCES[dtype])


@pytest.mark.parametrize("offset", [0.0, 2.0, 1e3])
def test_layer_norm_large_mean_stays_accurate(offset):
    """Rows whose mean**2 / var is beyond the one-pass limit take the centred sums (forward and
    backward): float32 results stay as close to the float64 ones as torch's float32 results."""
    rng = np.random.default_rng(4)
    x64 = rng.standard_normal((6, 5, 32)) + offset
    x64[:, 2] = rng.standard_normal((6, 32)) * 1e-2 + offset  # narrow rows
    x32 = x64.astype(np.float32)
    w = rng.standard_normal(32).astype(np.float32)
    b = rng.standard_normal(32).astype(np.float32)
    fn = _layer_norm((32,))
    _check_as_accurate_as_torch(fn, x32, w, b, rng.standard_normal(x64.shape).astype(np.float32))


def _first_order_equal_under_create_graph(fn, arrays):
    """The array backward and the composite one (create_graph=True) give the same gradients."""
    grad = np.random.default_rng(6).standard_normal(
        tuple(fn(ember, *[ember.tensor(a) for a in arrays]).shape))
    _, fused = _run(ember, fn, arrays, grad)
    _, composite = _run(ember, fn, arrays, grad, create_graph=True)
    for a, b in zip(fused, composite):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("training", [True, False])
def test_norm_array_backward_equals_composite_backward(training):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((4, 3, 5)) + 0.3
    w, b = rng.standard_normal(3), rng.standard_normal(3)
    stats = (rng.standard_normal(3), rng.uniform(0.5, 2, 3))
    _first_order_equal_under_create_graph(_batch_norm(training, stats=stats), [x, w, b])
    _first_order_equal_under_create_graph(_layer_norm((5,)), [x, rng.standard_normal(5),
                                                              rng.standard_normal(5)])


ACTIVATIONS = {
    "relu": lambda lib, x: lib.nn.functional.relu(x),
    "relu6": lambda lib, x: lib.nn.functional.relu6(x),
    "hardtanh": lambda lib, x: lib.nn.functional.hardtanh(x, -0.5, 2.0),
    "leaky_relu": lambda lib, x: lib.nn.functional.leaky_relu(x, 0.2),
    "leaky_relu_zero": lambda lib, x: lib.nn.functional.leaky_relu(x, 0.0),
    "leaky_relu_negative": lambda lib, x: lib.nn.functional.leaky_relu(x, -0.5),
    "leaky_relu_steep": lambda lib, x: lib.nn.functional.leaky_relu(x, 1.5),
    "silu": lambda lib, x: lib.nn.functional.silu(x),
}

SPECIAL_VALUES = [float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 6.0, -0.5, 2.0,
                  -100.0, 100.0, 1e-3, -1e-3]


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_activation_array_backward_matches_torch(name, dtype):
    rng = np.random.default_rng(8)
    x = np.concatenate([rng.standard_normal(40) * 4, SPECIAL_VALUES]).astype(dtype)
    fn = ACTIVATIONS[name]
    grad = rng.standard_normal(x.shape).astype(dtype)
    ye, (ge,) = _run(ember, fn, [x], grad)
    yt, (gt,) = _run(torch, fn, [x], grad)
    assert ye.dtype == yt.dtype == ge.dtype == gt.dtype == np.dtype(dtype)
    np.testing.assert_allclose(ye, yt, rtol=1e-6, atol=1e-30)
    # torch's vectorised and scalar kernels disagree on the gradient at NaN inputs
    number = ~np.isnan(x)
    np.testing.assert_allclose(ge[number], gt[number], rtol=1e-6, atol=1e-30)


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_array_backward_equals_composite_backward(name):
    x = np.random.default_rng(9).standard_normal(30) * 3
    _first_order_equal_under_create_graph(ACTIVATIONS[name], [x])


@pytest.mark.parametrize("name", ["silu"])
def test_activation_second_order_matches_torch(name):
    x = np.random.default_rng(10).standard_normal(12)
    fn = ACTIVATIONS[name]
    results = []
    for lib in (ember, torch):
        t = lib.tensor(x, requires_grad=True)
        (g,) = (ember if lib is ember else torch).autograd.grad(fn(lib, t).sum(), [t],
                                                               create_graph=True)
        (gg,) = (ember if lib is ember else torch).autograd.grad((g * g).sum(), [t])
        results.append((g.detach().numpy(), gg.numpy()))
    for e, t in zip(*results):
        np.testing.assert_allclose(e, t, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("fn,torch_fn", [
    (lambda x: F.leaky_relu(x, 0.2, inplace=True), lambda x: TF.leaky_relu(x, 0.2, inplace=True)),
    (lambda x: F.relu6(x, inplace=True), lambda x: TF.relu6(x, inplace=True)),
    (lambda x: F.silu(x, inplace=True), lambda x: TF.silu(x, inplace=True)),
])
def test_inplace_activations_on_fast_paths(fn, torch_fn):
    x = np.random.default_rng(11).standard_normal((3, 4)).astype(np.float32) * 4
    leaf_e, leaf_t = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ye, yt = fn(leaf_e * 1), torch_fn(leaf_t * 1)
    ye.sum().backward()
    yt.sum().backward()
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(leaf_e.grad.numpy(), leaf_t.grad.numpy(), rtol=1e-6)


def test_leaky_relu_and_silu_node_names():
    x = ember.randn(3, requires_grad=True)
    assert type(F.leaky_relu(x, 0.1).grad_fn).__name__ == "LeakyReluBackward0"
    assert type(F.silu(x).grad_fn).__name__ == "SiluBackward0"


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_activations_keep_half_dtypes(name, dtype):
    x = ember.randn(6).to(getattr(ember, dtype)).requires_grad_()
    y = ACTIVATIONS[name](ember, x)
    y.sum().backward()
    assert y.dtype == x.dtype and x.grad.dtype == x.dtype
