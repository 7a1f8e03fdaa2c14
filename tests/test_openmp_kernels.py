"""ember's OpenMP loops (``_backend/openmp_kernels.py``): ReLU, LeakyReLU and Hardtanh forward
and backward on inputs large enough to take them, against torch, with NaN, signed zeros and
values at the bounds, in row-major and channels-last layouts; and the fallback to NumPy where
they cannot be built."""
import contextlib
import itertools

import numpy as np
import pytest
import torch

import ember
from ember._backend import choice, openmp_kernels
from ember.ops import lu, matrix_decompositions, triangular

SHAPE = (4, 16, 32, 32)   # 65536 elements: above the loops' threshold

# ember's loops sit in the kernel choices' oneDNN slot: with oneDNN off (EMBER_ONEDNN=0) they do not run
pytestmark = pytest.mark.skipif(not choice.enabled(choice.ONEDNN), reason="oneDNN is off (EMBER_ONEDNN=0)")

needs_loops = pytest.mark.skipif(not openmp_kernels.available(),
                                 reason="no C compiler: ember's OpenMP loops cannot be built here")


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(SHAPE) * 4).astype(np.float32)
    flat = x.reshape(-1)
    flat[::101] = np.nan
    flat[1::103] = -0.0
    flat[2::107] = 0.0
    flat[3::109] = 6.0
    flat[4::113] = -1.0
    g = rng.standard_normal(SHAPE).astype(np.float32)
    return x, g


def _run(lib, name, x, g, fmt):
    layout = getattr(lib, fmt)
    xt = lib.tensor(x).contiguous(memory_format=layout).requires_grad_()
    fn = {"relu": lib.nn.functional.relu, "relu6": lib.nn.functional.relu6,
          "hardtanh": lambda t: lib.nn.functional.hardtanh(t, -1.0, 2.5),
          "leaky_relu": lambda t: lib.nn.functional.leaky_relu(t, 0.2),
          "hardshrink": lambda t: lib.nn.functional.hardshrink(t, 1.0)}[name]
    y = fn(xt)
    y.backward(lib.tensor(g).contiguous(memory_format=layout))
    return y.detach().numpy(), xt.grad.numpy(), y.is_contiguous(memory_format=layout)


def _spy_on(monkeypatch, *choices):
    """Record, for each call of the oneDNN-side kernel of each ``KernelChoice`` in ``choices``,
    whether it took the case (returned an array); returns the list of records."""
    taken = []
    for choice_ in choices:
        (library, real), numpy_kernel = choice_.kernels

        def spy(*args, real=real):
            out = real(*args)
            taken.append(out is not None)
            return out
        monkeypatch.setattr(choice_, "kernels", ((library, spy), numpy_kernel))
    return taken


@needs_loops
@pytest.mark.parametrize("fmt", ["contiguous_format", "channels_last"])
@pytest.mark.parametrize("name", ["relu", "relu6", "hardtanh", "leaky_relu", "hardshrink"])
def test_activations_on_the_openmp_loops_match_torch(name, fmt):
    x, g = _inputs()
    if name in ("relu6", "hardtanh"):
        x.reshape(-1)[::101] = 0.5   # NaN's gradient under Hardtanh differs by layout in torch
    want_y, want_g, _ = _run(torch, name, x, g, fmt)
    with choice.only(choice.ONEDNN):
        got_y, got_g, kept = _run(ember, name, x, g, fmt)
    assert kept
    np.testing.assert_array_equal(got_y, want_y)   # NaN in the same places
    assert np.array_equal(np.signbit(got_y), np.signbit(want_y))   # relu(-0.0) is -0.0
    np.testing.assert_array_equal(got_g, want_g)


@needs_loops
@pytest.mark.parametrize("shape, channels", [((2, 3, 4), 3), ((5, 2), 1), ((2, 3), 3), ((1, 4, 2, 2), 4)])
def test_small_prelu_forward_takes_its_loop_and_gives_torchs_bits(shape, channels, spy):
    """A small input's forward on the loop too (one thread): torch's output bit for bit, NaN and -0.0 in."""
    rng = np.random.default_rng(16)
    x = rng.standard_normal(shape).astype(np.float32)
    x.reshape(-1)[:2] = [np.nan, -0.0]
    w = rng.uniform(-0.5, 0.5, channels).astype(np.float32)
    taken = spy(openmp_kernels, "_channel_rows")   # (the forward loop's)
    with choice.only(choice.ONEDNN):
        got = ember.nn.functional.prelu(ember.tensor(x), ember.tensor(w)).numpy()
    assert len(taken) == 1
    want = torch.nn.functional.prelu(torch.tensor(x), torch.tensor(w)).numpy()
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


@needs_loops
@pytest.mark.parametrize("shape, channels", [((4, 8, 32, 24), 8), ((3, 16, 512), 1), ((40, 512), 512)])
def test_prelu_on_the_openmp_loops_matches_torch(shape, channels, spy):
    """Per-channel and single weights over the (N, C, L) rows, NaN and -0.0 among the inputs:
    torch's output bit for bit and its gradients (the weight's summed in another order)."""
    rng = np.random.default_rng(15)
    x = rng.standard_normal(shape).astype(np.float32)
    x.reshape(-1)[::97] = np.nan
    x.reshape(-1)[5::89] = -0.0
    w = rng.uniform(-0.5, 0.5, channels).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    results = {}
    for lib in (torch, ember):
        with choice.only(choice.NUMPY) if lib is ember else contextlib.nullcontext():
            xt, wt = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
            y = lib.nn.functional.prelu(xt, wt)
            y.backward(lib.tensor(g))
        results[lib] = y.detach().numpy(), xt.grad.numpy(), wt.grad.numpy()
    rows = spy(openmp_kernels, "_channel_rows")   # (the forward loop's and the backward's)
    with choice.only(choice.ONEDNN):
        xt, wt = ember.tensor(x, requires_grad=True), ember.tensor(w, requires_grad=True)
        y = ember.nn.functional.prelu(xt, wt)
        y.backward(ember.tensor(g))
    assert len(rows) == 2
    (want_y, want_gx, want_gw), got = results[torch], (y.detach().numpy(), xt.grad.numpy(), wt.grad.numpy())
    np.testing.assert_array_equal(got[0], want_y)
    assert np.array_equal(np.signbit(got[0]), np.signbit(want_y))
    np.testing.assert_array_equal(got[1], want_gx)
    np.testing.assert_allclose(got[2], want_gw, rtol=1e-4, atol=1e-3)
    for a, b in zip(results[ember], got):   # the NumPy path's
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-3)


@needs_loops
def test_relu_passes_the_gradient_at_nan_as_torch():
    x, g = _inputs(1)
    _, want_g, _ = _run(torch, "relu", x, g, "contiguous_format")
    with choice.only(choice.ONEDNN):
        _, got_g, _ = _run(ember, "relu", x, g, "contiguous_format")
    nan = np.isnan(x)
    assert nan.any()
    np.testing.assert_array_equal(got_g[nan], want_g[nan])


def test_small_and_strided_inputs_take_numpy():
    small = np.ones(100, np.float32)
    assert openmp_kernels.relu_forward(small) is None
    strided = np.ones((256, 256), np.float32)[:, ::2]
    assert openmp_kernels.relu_forward(strided) is None
    assert openmp_kernels.relu_backward(np.ones((256, 256), np.float32),
                                        np.ones((256, 256), np.float64)) is None


def test_without_a_compiler_numpy_runs(monkeypatch):
    monkeypatch.setattr(openmp_kernels, "_functions",
                        {name: None for name in ("relu_forward", "relu_backward",
                                                 "hardtanh_forward", "hardtanh_backward",
                                                 "leaky_relu_forward", "leaky_relu_backward")})
    x, g = _inputs()
    with choice.only(choice.ONEDNN), pytest.raises(choice.KernelNotApplicable):
        _run(ember, "relu", x, g, "contiguous_format")
    want_y, want_g, _ = _run(torch, "relu", x, g, "contiguous_format")
    got_y, got_g, _ = _run(ember, "relu", x, g, "contiguous_format")
    np.testing.assert_array_equal(got_y, want_y)
    np.testing.assert_array_equal(got_g, want_g)


@needs_loops
@pytest.mark.parametrize("beta1", [0.9, 0.3])
def test_adam_loop_rounds_as_numpys_passes(beta1):
    """The fused Adam loop gives the NumPy path's bits (each operation rounded in turn)."""
    from ember.optim import _flat_ops
    rng = np.random.default_rng(0)
    n = 100003
    grad = rng.standard_normal(n).astype(np.float32)
    state = [rng.standard_normal(n).astype(np.float32), rng.random(n).astype(np.float32)]
    args = (beta1, 0.999, (1 - 0.999 ** 3) ** 0.5, 1e-8, 1e-3 / (1 - beta1 ** 3))
    fused = [a.copy() for a in state] + [np.empty(n, np.float32)]
    passes = [a.copy() for a in state] + [np.empty(n, np.float32)]
    assert openmp_kernels.adam_update(grad, *fused, *args) is not None
    _flat_ops._numpy_adam_moments_and_step(grad, *passes, *args)
    for a, b in zip(fused, passes):
        np.testing.assert_array_equal(a, b)


@needs_loops
@pytest.mark.parametrize("name", ["Adam", "AdamW"])
def test_adam_on_the_loop_follows_torch(name):
    rng = np.random.default_rng(5)
    shapes = [(300, 200), (64,), (50, 3, 3)]
    values = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    grads = [[rng.standard_normal(s).astype(np.float32) for s in shapes] for _ in range(4)]
    results = {}
    for lib in (torch, ember):
        params = [lib.nn.Parameter(lib.tensor(v.copy())) for v in values]
        opt = getattr(lib.optim, name)(params, lr=1e-2, weight_decay=0.01)
        for step in grads:
            for p, g in zip(params, step):
                p.grad = lib.tensor(g)
            opt.step()
        results[lib] = [p.detach().numpy() for p in params]
    for a, b in zip(results[ember], results[torch]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@needs_loops
@pytest.mark.parametrize("fmt", ["contiguous_format", "channels_last"])
@pytest.mark.parametrize("op", ["add", "sub", "mul"])
@pytest.mark.parametrize("other", ["tensor", "number", "broadcast"])
def test_large_binary_ops_on_the_loop_match_torch(op, other, fmt, monkeypatch):
    from ember.ops import pointwise
    taken = _spy_on(monkeypatch, pointwise._large_binary_kernel)
    rng = np.random.default_rng(3)
    shape = (8, 16, 64, 64)   # 2 MiB: large enough for the loop
    x = rng.standard_normal(shape).astype(np.float32)
    x.reshape(-1)[::97] = np.nan
    x.reshape(-1)[1::89] = np.inf
    y = rng.standard_normal(shape if other == "tensor" else (16, 1, 1)).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    results = []
    for lib in (torch, ember):
        layout = getattr(lib, fmt)
        a = lib.tensor(x).contiguous(memory_format=layout).requires_grad_()
        b = 0.37 if other == "number" else lib.tensor(y).requires_grad_()
        if other == "tensor":
            b = b.detach().contiguous(memory_format=layout).requires_grad_()
        out = getattr(lib, op)(a, b)
        forward_taken = list(taken)
        out.backward(lib.tensor(g).contiguous(memory_format=layout))
        grads = [a.grad.numpy()] + ([] if other == "number" else [b.grad.numpy()])
        results.append([out.detach().numpy()] + grads)
    for got, want in zip(results[1], results[0]):   # a broadcast operand's gradient is a sum
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, equal_nan=True)
    np.testing.assert_array_equal(results[1][0], results[0][0])   # the same roundings
    assert any(forward_taken) == (other != "broadcast")   # broadcasting takes NumPy's ufunc


def _whole_sum_spy(monkeypatch):
    from ember.ops import reduce
    return _spy_on(monkeypatch, reduce._whole_sum)


@needs_loops
@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "transposed", "strided"])
@pytest.mark.parametrize("op", ["sum", "mean"])
def test_whole_sums_of_large_float32_arrays_on_the_loop_match_torch(op, layout, monkeypatch, python_functions):
    """The loop adds in float64: within float32 rounding of torch's sum, for any dense layout
    (the elements' order does not matter); a strided view takes NumPy's sum."""
    taken = _whole_sum_spy(monkeypatch)
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((4, 32, 32, 33)) + 0.25).astype(np.float32)   # 135168 elements
    g = np.float32(1.7)
    results = []
    for lib in (torch, ember):
        t = lib.tensor(x)
        if layout == "channels_last":
            t = t.contiguous(memory_format=lib.channels_last)
        elif layout == "transposed":
            t = t.transpose(0, 3)
        elif layout == "strided":
            t = lib.tensor(np.concatenate([x, x], axis=-1))[..., ::2]
        t.requires_grad_()
        out = getattr(t, op)()
        out.backward(lib.tensor(g))
        results.append((out.item(), t.grad.numpy()))
    (want, want_grad), (got, got_grad) = results
    np.testing.assert_allclose(got, want, rtol=2e-6)
    np.testing.assert_array_equal(got_grad, want_grad)
    assert taken == [layout != "strided"]


@needs_loops
def test_whole_sum_on_the_loop_carries_nan_and_inf_and_rounds_as_torchs():
    """Each lane adds 16 elements in float32 (torch's vectorized sum adds in float32 too), the
    lanes' sums in float64."""
    x = np.ones(1 << 18, np.float32)
    x[7] = 2.0 ** 24   # its lane's float32 partial sum drops the 15 ones added to it, as torch's
    assert ember.tensor(x).sum().item() == torch.tensor(x).sum().item() == 2 ** 24 + (1 << 18) - 16
    x[7] = 1.0
    x[::3] = 1e-3
    assert ember.tensor(x).sum().item() == pytest.approx(float(x.sum(dtype=np.float64)), rel=1e-7)
    x[11] = np.inf
    assert ember.tensor(x).sum().item() == np.inf
    x[12] = -np.inf
    assert np.isnan(ember.tensor(x).sum().item())
    x[12] = np.nan
    assert np.isnan(ember.tensor(x).mean().item())


@needs_loops
def test_whole_product_of_a_large_float32_array_on_the_loop_matches_torch(monkeypatch):
    """prod of all elements multiplies in float32 lanes (as torch's vectorized loop): torch's
    value and gradient within float32 rounding, the blocked NumPy kernel's likewise; zero, NaN
    and inf carried; float64 takes the NumPy kernel."""
    from ember.ops import reduce
    taken = _spy_on(monkeypatch, reduce._whole_product)
    rng = np.random.default_rng(9)
    x = rng.uniform(0.99, 1.01, (230, 301)).astype(np.float32)   # 69230 elements: a partial block
    results = []
    for lib in (torch, ember):
        t = lib.tensor(x).requires_grad_()
        out = t.prod()
        out.backward()
        results.append((out.item(), t.grad.numpy()))
    (want, want_grad), (got, got_grad) = results
    assert taken == [True]
    # (69230 float32 roundings in a different order: a few 1e-5 apart, as each is from float64's)
    exact = np.prod(x.astype(np.float64))
    for value in (got, want):
        np.testing.assert_allclose(value, exact, rtol=1e-4)
    np.testing.assert_allclose(got_grad, want_grad, rtol=1e-4)
    with choice.only(choice.NUMPY):
        np.testing.assert_allclose(ember.tensor(x).prod().item(), exact, rtol=1e-4)
    for special in (0.0, np.nan, np.inf):
        y = x.copy()
        y[100, 7] = special
        np.testing.assert_equal(ember.tensor(y).prod().item(), special)
    np.testing.assert_allclose(ember.tensor(x.astype(np.float64)).prod().item(), np.prod(x.astype(np.float64)),
                               rtol=1e-12)
    assert taken == [True] * 4 + [False]


def test_small_whole_sums_take_numpy(monkeypatch):
    taken = _whole_sum_spy(monkeypatch)
    x = np.arange(openmp_kernels.SUM_MIN_ELEMENTS - 1, dtype=np.float32)
    assert ember.tensor(x).sum().item() == x.sum()
    assert taken == []


@needs_loops
@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_running_sums_on_the_loop_match_torch(dim, monkeypatch):
    """cumsum and its gradient (the running sums from the end) in float64 on the loop: torch's
    float32 cumsum adds the same way, bit for bit; NaN and inf carried along."""
    from ember.ops import reduce
    taken = _spy_on(monkeypatch, reduce._running_sums)
    rng = np.random.default_rng(8)
    x = (rng.standard_normal((24, 40, 37)) + 0.5).astype(np.float32)   # 35520 elements
    x[3, 5, 7] = np.nan
    x[10, 2, 30] = np.inf
    g = rng.standard_normal(x.shape).astype(np.float32)
    results = []
    for lib in (torch, ember):
        t = lib.tensor(x).requires_grad_()
        out = lib.cumsum(t, dim)
        out.backward(lib.tensor(g))
        results.append((out.detach().numpy(), t.grad.numpy()))
    for got, want in zip(results[1], results[0]):
        np.testing.assert_array_equal(got, want)   # the same additions in float64, rounded once
    assert taken == [True, True]


@needs_loops
def test_strided_running_sums_take_the_loop_after_a_copy_and_small_ones_numpy(monkeypatch):
    """A large transposed or expanded input is copied row-major for the loop (which adds in
    float64, as torch's cumsum and cumprod do): torch's results; a small one stays on NumPy."""
    from ember.ops import reduce
    taken = _spy_on(monkeypatch, reduce._running_sums, reduce._running_products)
    x = np.arange(2 * openmp_kernels.SCAN_MIN_ELEMENTS, dtype=np.float32).reshape(2, -1)
    np.testing.assert_array_equal(ember.tensor(x).t().cumsum(0).numpy(), torch.tensor(x).t().cumsum(0).numpy())
    column = np.linspace(0.999, 1.001, 128, dtype=np.float32)[:, None]
    got = ember.tensor(column).expand(128, 256).cumprod(1).numpy()
    want = torch.tensor(column).expand(128, 256).cumprod(1).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert taken == [True, True]
    np.testing.assert_array_equal(ember.tensor(x[:, :100]).cumsum(1).numpy(), np.cumsum(x[:, :100], 1))
    assert taken == [True, True]


def _gather_spy(monkeypatch):
    """The calls of gather's kernel and of its gradient's (the tests that spy on them put the compiled
    functions' Python paths in place: the compiled gather takes small gathers itself)."""
    from ember.ops import index
    return _spy_on(monkeypatch, index._gather_kernel, index._gather_gradient_kernel)


def _gathered_both_ways(x, dim, idx, g):
    """``[(gather's values, x's gradient given g)]`` by torch, then by ember."""
    results = []
    for lib in (torch, ember):
        t = lib.tensor(x).requires_grad_()
        out = lib.gather(t, dim, lib.tensor(idx))
        out.backward(lib.tensor(g))
        results.append((out.detach().numpy(), t.grad.numpy()))
    return results


@needs_loops
@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_gather_on_the_loop_matches_torch(dim, monkeypatch, python_functions):
    taken = _gather_spy(monkeypatch)
    rng = np.random.default_rng(9)
    x = rng.standard_normal((20, 40, 50)).astype(np.float32)
    x[1, 2, 3] = np.nan
    shape = list(x.shape)
    shape[dim] = 33 if dim == 0 else 36   # more or fewer picks than the dimension has
    idx = rng.integers(0, x.shape[dim], shape)
    g = rng.standard_normal(shape).astype(np.float32)
    results = _gathered_both_ways(x, dim, idx, g)
    np.testing.assert_array_equal(results[1][0], results[0][0])
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-5, atol=1e-5)
    assert taken == [True, True]   # forward and backward
    expected = np.zeros_like(x)   # the gradient's terms added in add.at's order
    np.add.at(expected, tuple(np.indices(idx.shape, sparse=True)[:dim % 3]) + (idx,)
              + tuple(np.indices(idx.shape, sparse=True)[dim % 3 + 1:]), g)
    np.testing.assert_array_equal(results[1][1], expected)


@needs_loops
@pytest.mark.parametrize("bad", [-1, 40])
def test_gather_on_the_loop_names_the_first_index_out_of_bounds_as_torch(bad, monkeypatch, python_functions):
    taken = _gather_spy(monkeypatch)
    idx = np.zeros((12, 40, 50), np.int64)
    idx[3, 4, 5], idx[7, 0, 0] = bad, 99
    x = np.ones((12, 40, 50), np.float32)
    with pytest.raises(RuntimeError) as theirs:
        torch.gather(torch.tensor(x), 1, torch.tensor(idx))
    with pytest.raises(RuntimeError) as ours:
        ember.gather(ember.tensor(x), 1, ember.tensor(idx))
    assert str(ours.value) == str(theirs.value)
    assert taken == []   # (the loop raised: the error names the first bad index)


@needs_loops
@pytest.mark.parametrize("shape, dim, picks", [((3, 5), 1, 4), ((4, 3, 2), 0, 6), ((1, 1), 0, 1)])
def test_small_gathers_on_the_loop_match_torch(shape, dim, picks, monkeypatch, python_functions):
    """The gather and scatter loops take index arrays of any size (one thread up to
    ``PICKS_SERIAL_MAX_ELEMENTS``): small ones give torch's values, gradients and errors."""
    taken = _gather_spy(monkeypatch)
    rng = np.random.default_rng(11)
    x = rng.standard_normal(shape).astype(np.float32)
    index_shape = list(shape)
    index_shape[dim] = picks
    idx = rng.integers(0, shape[dim], index_shape)
    g = rng.standard_normal(index_shape).astype(np.float32)
    results = _gathered_both_ways(x, dim, idx, g)
    np.testing.assert_array_equal(results[1][0], results[0][0])
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-6, atol=1e-6)
    assert taken == [True, True]
    idx.reshape(-1)[-1] = shape[dim]
    with pytest.raises(RuntimeError) as theirs:
        torch.gather(torch.tensor(x), dim, torch.tensor(idx))
    with pytest.raises(RuntimeError) as ours:
        ember.gather(ember.tensor(x), dim, ember.tensor(idx))
    assert str(ours.value) == str(theirs.value)


def test_gathers_the_loop_does_not_take_run_on_numpy(monkeypatch, python_functions):
    taken = _gather_spy(monkeypatch)
    rng = np.random.default_rng(10)
    x = rng.standard_normal((30, 40, 50)).astype(np.float32)
    idx = rng.integers(0, 40, (20, 40, 50))   # smaller than x in another dim
    np.testing.assert_array_equal(ember.gather(ember.tensor(x), 1, ember.tensor(idx)).numpy(),
                                  torch.gather(torch.tensor(x), 1, torch.tensor(idx)).numpy())
    assert not any(taken)   # (the loop declined)


def _scatter_spy(monkeypatch):
    from ember.ops import index as index_ops
    return _spy_on(monkeypatch, index_ops._scatter_kernel)


@needs_loops
@pytest.mark.parametrize("dim", [0, 1, 2, -1])
@pytest.mark.parametrize("src", ["tensor", "value"])
def test_scatter_on_the_loop_matches_torch(dim, src, monkeypatch):
    """scatter's values written on the loop, repeated positions keeping the last value (NumPy's
    assignment; torch's CPU kernel writes in the same order); the gradients as torch's."""
    taken = _scatter_spy(monkeypatch)
    rng = np.random.default_rng(11)
    x = rng.standard_normal((20, 40, 50)).astype(np.float32)
    shape = list(x.shape)
    shape[dim] = 33 if dim == 0 else 36   # more or fewer picks than the dimension has
    idx = rng.integers(0, x.shape[dim], shape)
    s = rng.standard_normal(shape).astype(np.float32)
    g = rng.standard_normal(x.shape).astype(np.float32)
    results = []
    for lib in (torch, ember):
        t = lib.tensor(x).requires_grad_()
        value = lib.tensor(s).requires_grad_() if src == "tensor" else -1.25
        out = lib.scatter(t, dim, lib.tensor(idx), value)
        out.backward(lib.tensor(g))
        results.append((out.detach().numpy(), t.grad.numpy(),
                        value.grad.numpy() if src == "tensor" else None))
    expected = x.copy()
    np.put_along_axis(expected, idx, s if src == "tensor" else np.float32(-1.25), dim)
    np.testing.assert_array_equal(results[1][0], expected)
    np.testing.assert_array_equal(results[0][1], results[1][1])
    if src == "tensor":
        np.testing.assert_array_equal(results[0][2], results[1][2])
    assert taken[:2] == [True, True]   # the forward, and the input's gradient (a zero scattered)


@needs_loops
@pytest.mark.parametrize("dtype", ["int64", "int32", "float64"])
@pytest.mark.parametrize("dim", [0, -1])
def test_gather_and_scatter_of_other_4_and_8_byte_numbers_on_the_loop(dtype, dim, monkeypatch):
    """gather and scatter (of a src tensor) move integers and float64 on the loops as they are:
    torch's results bit for bit (the last of repeated positions kept); scatter of a number into
    them stays on NumPy's path; scatter_add adds them on the loop."""
    from ember.ops import index as index_ops
    taken = _spy_on(monkeypatch, index_ops._gather_kernel, index_ops._scatter_kernel)
    rng = np.random.default_rng(12)
    x = rng.integers(-1000, 1000, (20, 40, 50)).astype(dtype)
    if dtype == "float64":
        x = x / 7.0
        x[1, 2, 3] = np.nan
    idx = rng.integers(0, x.shape[dim], x.shape)
    src = (x[::-1] * 3).copy()
    got = ember.gather(ember.tensor(x), dim, ember.tensor(idx)).numpy()
    np.testing.assert_array_equal(got, torch.gather(torch.tensor(x), dim, torch.tensor(idx)).numpy())
    assert got.dtype == x.dtype
    got = ember.scatter(ember.tensor(x), dim, ember.tensor(idx), ember.tensor(src)).numpy()
    np.testing.assert_array_equal(got, torch.scatter(torch.tensor(x), dim, torch.tensor(idx),
                                                     torch.tensor(src)).numpy())
    assert taken == [True, True]
    np.testing.assert_array_equal(ember.scatter(ember.tensor(x), dim, ember.tensor(idx), 5).numpy(),
                                  torch.scatter(torch.tensor(x), dim, torch.tensor(idx), 5).numpy())
    assert taken == [True, True, False]
    added = _spy_on(monkeypatch, index_ops._scatter_add_kernel)
    if dtype != "float64":   # integers wrap around, as torch's and NumPy's
        src[0, 0, 0] = np.iinfo(dtype).max
    got = ember.scatter_add(ember.tensor(x), dim, ember.tensor(idx), ember.tensor(src)).numpy()
    want = torch.scatter_add(torch.tensor(x), dim, torch.tensor(idx), torch.tensor(src)).numpy()
    assert added == [True]
    if dtype == "float64":   # (repeated positions add up in index order; torch's order may differ)
        np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


@needs_loops
@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_scatter_add_on_the_loop_adds_in_add_at_order_as_torch(dim, monkeypatch):
    """scatter_add into a copy on the loop: repeated positions add up in index order, as
    NumPy's add.at adds them (the same bits); values and gradients as torch's."""
    from ember.ops import index as index_ops
    taken = _spy_on(monkeypatch, index_ops._scatter_add_kernel)
    rng = np.random.default_rng(12)
    x = rng.standard_normal((20, 40, 50)).astype(np.float32)
    shape = list(x.shape)
    shape[dim] = 33 if dim == 0 else 60   # fewer or more picks than the dimension has
    idx = rng.integers(0, x.shape[dim], shape)
    s = rng.standard_normal(shape).astype(np.float32)
    results = []
    for lib in (torch, ember):
        t, src = lib.tensor(x).requires_grad_(), lib.tensor(s).requires_grad_()
        out = lib.scatter_add(t, dim, lib.tensor(idx), src)
        out.backward(lib.tensor(x))
        results.append((out.detach().numpy(), t.grad.numpy(), src.grad.numpy()))
    expected = x.copy()
    d = dim % 3
    np.add.at(expected, tuple(np.indices(idx.shape, sparse=True)[:d]) + (idx,)
              + tuple(np.indices(idx.shape, sparse=True)[d + 1:]), s)
    np.testing.assert_array_equal(results[1][0], expected)
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-5, atol=1e-5)
    for want, got in zip(results[0][1:], results[1][1:]):
        np.testing.assert_array_equal(got, want)
    assert taken == [True]


@needs_loops
@pytest.mark.parametrize("bad", [-1, 40])
def test_scatter_on_the_loop_names_the_index_out_of_bounds_as_torch(bad, monkeypatch):
    taken = _scatter_spy(monkeypatch)
    idx = np.zeros((12, 40, 50), np.int64)
    idx[3, 4, 5] = bad
    x = np.ones((12, 40, 50), np.float32)
    errors = []
    for lib in (torch, ember):
        t = lib.tensor(x)
        with pytest.raises(RuntimeError) as error:
            lib.scatter(t, 1, lib.tensor(idx), 2.0)
        errors.append(str(error.value))
        np.testing.assert_array_equal(t.numpy(), x)
    assert errors[0] == errors[1]
    assert taken == [True]   # (the loop ran and reported it: the check after the loop names it)


# the reductions of all elements besides sum and mean: (ember op, torch op, KernelChoice name)
WHOLE_REDUCTIONS = {
    "nansum": (lambda t: t.nansum(), "_whole_nansum"),
    "norm": (lambda t: t.norm(), "_whole_sum_of_squares"),
    "vector_norm": (lambda t: (ember if isinstance(t, ember.Tensor) else torch).linalg.vector_norm(t),
                    "_whole_sum_of_squares"),
    "amax": (lambda t: t.amax(), "max"),
    "max": (lambda t: t.max(), "max"),
    "amin": (lambda t: t.amin(), "min"),
    "min": (lambda t: t.min(), "min"),
}


def _whole_reduction_spy(monkeypatch, name):
    from ember.ops import reduce
    choice_ = (reduce._whole_extremes[name == "max"] if name in ("max", "min")
               else getattr(reduce, name))
    return _spy_on(monkeypatch, choice_)


@needs_loops
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided"])
@pytest.mark.parametrize("op", sorted(WHOLE_REDUCTIONS))
def test_whole_reductions_on_the_loop_match_torch(op, layout, monkeypatch, python_functions):
    """nansum and the 2-norm add in float64 on the loop (within float32 rounding of torch's),
    the extremes are exact; with NaN among the elements nansum skips them and the extremes
    give NaN, as torch's; values and gradients."""
    fn, kernel = WHOLE_REDUCTIONS[op]
    taken = _whole_reduction_spy(monkeypatch, kernel)
    monkeypatch.setattr(openmp_kernels, "thread_count", lambda: 2)   # (extremes: 2 or more)
    for extreme in ("max", "min"):   # (they take the loop from a larger size)
        monkeypatch.setitem(openmp_kernels.WHOLE_REDUCTION_MIN_ELEMENTS, extreme, 1 << 16)
    rng = np.random.default_rng(6)
    x = (rng.standard_normal((4, 32, 32, 33)) + 0.25).astype(np.float32)   # 135168 elements
    x.reshape(-1)[12345] = 9.5
    x.reshape(-1)[54321] = -9.5
    for with_nan in (False, True):
        data = x.copy()
        if with_nan:
            data.reshape(-1)[777] = np.nan
        results = []
        for lib in (torch, ember):
            t = lib.tensor(data)
            if layout == "transposed":
                t = t.transpose(0, 3)
            elif layout == "strided":
                t = lib.tensor(np.concatenate([data, data], axis=-1))[..., ::2]
            t.requires_grad_()
            out = fn(t)
            out.backward()
            results.append((out.item(), t.grad.numpy()))
        (want, want_grad), (got, got_grad) = results
        # (torch's float32 sum of squares of the strided view drifts up to some 7e-6 from the
        # exact one, and the norm's gradient with it; ember's NumPy path adds it in float64)
        rtol = 1e-5 if layout == "strided" else 5e-6
        np.testing.assert_allclose(got, want, rtol=rtol, equal_nan=True)
        np.testing.assert_allclose(got_grad, want_grad, rtol=rtol, atol=1e-9, equal_nan=True)
    assert taken == [layout != "strided"] * 2


def test_small_whole_reductions_take_numpy(monkeypatch):
    taken = _whole_reduction_spy(monkeypatch, "max")
    monkeypatch.setattr(openmp_kernels, "thread_count", lambda: 2)
    x = np.arange(openmp_kernels.EXTREMES_MIN_ELEMENTS - 1, dtype=np.float32)
    assert ember.tensor(x).amax().item() == x.max()
    assert taken == []


@needs_loops
@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_index_select_on_the_loop_matches_torch(dim, monkeypatch):
    """index_select copies slices on the loop, and its gradient adds them back at the index
    (repeated indices included) in add.at's order: values and gradients as torch's."""
    from ember.ops import index as index_ops
    taken = _spy_on(monkeypatch, index_ops._select_kernel, index_ops._slices_added)
    # (rows are copied on the loop only at two threads or more, from a size larger than this)
    monkeypatch.setattr(openmp_kernels, "INDEX_ROWS_MIN_ELEMENTS", 1 << 14)
    monkeypatch.setattr(openmp_kernels, "thread_count", lambda: 2)
    rng = np.random.default_rng(9)
    x = rng.standard_normal((24, 40, 70)).astype(np.float32)
    size = x.shape[dim]
    idx = rng.integers(0, size, size + 7)   # repeats
    g = rng.standard_normal(np.take(x, idx, axis=dim).shape).astype(np.float32)
    results = []
    for lib in (torch, ember):
        t = lib.tensor(x, requires_grad=True)
        out = t.index_select(dim, lib.tensor(idx))
        out.backward(lib.tensor(g))
        results.append((out.detach().numpy(), t.grad.numpy()))
    (want, want_grad), (got, got_grad) = results
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(got_grad, want_grad, rtol=1e-6, atol=1e-6)
    expected = np.zeros_like(x)
    np.add.at(np.moveaxis(expected, dim, 0), idx, np.moveaxis(g, dim, 0))
    np.testing.assert_array_equal(got_grad, expected)   # add.at's order, bit for bit
    assert taken == [True, True]


def test_index_selects_the_loop_does_not_take_run_on_numpy(monkeypatch):
    from ember.ops import index as index_ops
    taken = _spy_on(monkeypatch, index_ops._select_kernel, index_ops._slices_added)
    x = np.arange(40 * 500, dtype=np.float32).reshape(40, 500)
    for data, idx in ((x, np.array([3, 1, 3], np.int32)),        # an int32 index
                      (x[:, ::2], np.array([3, 1, 3])),           # a strided input
                      (x[:4, :8], np.array([3, 1, 3]))):          # a small one
        got = ember.tensor(data).index_select(0, ember.tensor(idx)).numpy()
        np.testing.assert_array_equal(got, np.take(data, idx, axis=0))
    assert taken == []


@needs_loops
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_running_products_on_the_loop_match_torch(dim, monkeypatch):
    """cumprod multiplies in float64 on the loop, as torch's float32 cumprod does: the same
    bits; its gradient (through cumsum's loop) as torch's."""
    from ember.ops import reduce
    taken = _spy_on(monkeypatch, reduce._running_products)
    rng = np.random.default_rng(10)
    x = rng.uniform(0.5, 1.5, (24, 40, 37)).astype(np.float32)   # 35520 elements
    x.reshape(-1)[::997] = -1.25
    g = rng.standard_normal(x.shape).astype(np.float32)
    results = []
    for lib in (torch, ember):
        t = lib.tensor(x, requires_grad=True)
        out = t.cumprod(dim)
        out.backward(lib.tensor(g))
        results.append((out.detach().numpy(), t.grad.numpy()))
    (want, want_grad), (got, got_grad) = results
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(got_grad, want_grad, rtol=2e-5, atol=1e-5)
    assert taken == [True]


@needs_loops
@pytest.mark.parametrize("op", ["cummax", "cummin"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_running_extremes_on_the_loop_match_torch(op, dim, monkeypatch):
    """cummax and cummin on the loop: torch's values and indices (a tie moves the index on;
    NaN, once met, stays, its index the latest NaN's) and gradients (on gather's gradient
    loop, as sort's, topk's and the other value-selecting ops' are)."""
    from ember.ops import index as index_ops, sort
    taken = _spy_on(monkeypatch, sort._running_extremes[op == "cummax"],
                    index_ops._gather_gradient_kernel)   # (the gradient: gather's scatter-add)
    rng = np.random.default_rng(11)
    x = rng.integers(-4, 5, (24, 40, 37)).astype(np.float32)   # many ties
    x.reshape(-1)[::1009] = np.nan
    g = rng.standard_normal(x.shape).astype(np.float32)
    results = []
    for lib in (torch, ember):
        t = lib.tensor(x, requires_grad=True)
        values, indices = getattr(t, op)(dim)
        values.backward(lib.tensor(g))
        results.append((values.detach().numpy(), indices.numpy(), t.grad.numpy()))
    for got, want in zip(results[1], results[0]):
        np.testing.assert_array_equal(got, want)
    assert taken == [True, True]


@needs_loops
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64", "uint8", "bool",
                                   "complex64"])
@pytest.mark.parametrize("dims", [(2,), (0, 2), (1, 2), (0, 1, 2)])
def test_flips_of_the_last_axis_on_the_row_loop_match_torch(dtype, dims, monkeypatch, python_functions):
    """flip along the last axis (with others or not) copies rows backwards on the loop, for
    every item size; the gradient is flipped back the same way."""
    from ember.ops import shape
    taken = _spy_on(monkeypatch, shape._reversed_rows)
    x = torch.randn(16, 40, 65, dtype=torch.float32).mul(50)   # above the loop's size rule
    x = x.to(getattr(torch, dtype)) if dtype != "complex64" else torch.complex(x, -x)
    got = ember.tensor(x.numpy() if dtype != "bfloat16" else x.float().numpy())
    if dtype == "bfloat16":
        got = got.bfloat16()
    flipped = got.flip(dims)
    want = x.flip(dims)
    as_numpy = (lambda t: t.float().numpy()) if dtype == "bfloat16" else (lambda t: t.numpy())
    np.testing.assert_array_equal(as_numpy(flipped), as_numpy(want))
    assert flipped.stride() == want.stride()
    assert taken == [True]


@needs_loops
@pytest.mark.parametrize("k", [1, 2, 3, 4, -1])
def test_rot90_strides_values_and_gradient_match_torch(k, monkeypatch):
    """rot90 is a flip along one of its dims, transposed as torch leaves it (not copied), and
    its gradient the rotation back."""
    rng = np.random.default_rng(12)
    x = rng.standard_normal((3, 120, 100)).astype(np.float32)
    g = rng.standard_normal((3, 120, 100) if k % 2 == 0 else (3, 100, 120)).astype(np.float32)
    results = []
    for lib in (torch, ember):
        t = lib.tensor(x, requires_grad=True)
        out = lib.rot90(t, k, (1, 2))
        out.backward(lib.tensor(g))
        results.append((out.detach().numpy(), out.stride(), t.grad.numpy()))
    (want, want_stride, want_grad), (got, got_stride, got_grad) = results
    np.testing.assert_array_equal(got, want)
    assert got_stride == want_stride
    np.testing.assert_array_equal(got_grad, want_grad)


def test_flips_of_other_axes_and_small_ones_take_numpy(monkeypatch):
    from ember.ops import shape
    taken = _spy_on(monkeypatch, shape._reversed_rows)
    x = np.random.default_rng(13).standard_normal((64, 128)).astype(np.float32)
    np.testing.assert_array_equal(ember.flip(ember.tensor(x), 0).numpy(), x[::-1])
    np.testing.assert_array_equal(ember.flip(ember.tensor(x[:8, :8]), 1).numpy(), x[:8, 7::-1])
    np.testing.assert_array_equal(ember.flip(ember.tensor(x).t(), 1).numpy(), x.T[:, ::-1])
    assert taken == []


def _lu_cases(dtype):
    rng = np.random.default_rng(5)
    for shape in [(1, 1), (4, 4), (7, 3), (3, 8), (32, 32), (5, 33, 20), (2, 2, 9, 9), (70, 70),
                  (2, 40, 75), (75, 40)]:
        for kind in ("normal", "zero row and column", "non-finite", "ties"):
            d = rng.standard_normal(shape).astype(dtype)
            if kind == "zero row and column":   # zero pivots: info, and division by 1
                d[..., 0, :] = 0
                d[..., :, -1] = 0
            elif kind == "non-finite":
                d.reshape(-1)[rng.integers(0, d.size, 3)] = [np.nan, np.inf, -np.inf]
            elif kind == "ties":
                d = np.round(d).astype(dtype)
            yield d


@needs_loops
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lu_panel_loop_gives_the_numpy_factorization_bit_for_bit(dtype, spy, monkeypatch):
    from ember.ops import lu
    monkeypatch.setattr(openmp_kernels, "_RECURSIVE_GETRFS", {})   # (the blocked loop's panels)
    for d in _lu_cases(dtype):
        taken = spy(openmp_kernels, "getrf_panel")
        got = lu.getrf(d)
        assert len(taken) == -(-min(d.shape[-2:]) // lu.LU_BLOCK)   # every panel
        with monkeypatch.context() as m:
            m.setattr(openmp_kernels, "_GETRF_PANELS", {})   # the NumPy path
            want = lu.getrf(d)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_array_equal(g, w)


@needs_loops
def test_lu_panel_loop_is_left_for_complex_and_column_major_copies(spy, monkeypatch):
    from ember.ops import lu
    monkeypatch.setattr(openmp_kernels, "_RECURSIVE_GETRFS", {})
    taken = spy(openmp_kernels, "getrf_panel")
    lu.getrf(np.ones((4, 4), np.complex64))
    lu.getrf(np.arange(16.0).reshape(4, 4).T)   # (copied in its column-major layout)
    assert taken == []


@needs_loops
def test_lu_factor_on_the_panel_loop_matches_torch(monkeypatch):
    monkeypatch.setattr(openmp_kernels, "_RECURSIVE_GETRFS", {})
    a = np.random.default_rng(6).standard_normal((3, 6, 6)).astype(np.float32)
    lu_e, piv_e = ember.linalg.lu_factor(ember.tensor(a))
    lu_t, piv_t = torch.linalg.lu_factor(torch.from_numpy(a))
    np.testing.assert_array_equal(piv_e.numpy(), piv_t.numpy())
    np.testing.assert_allclose(lu_e.numpy(), lu_t.numpy(), rtol=1e-5, atol=1e-5)


@needs_loops
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lu_on_the_recursive_loop_matches_torch(dtype, spy):
    """Real matrices on the compiled recursive LU (70 and 75 columns: halves, solves and
    products; up to 32: one panel): torch's info always, its pivots and factors where the input
    is finite (with NaN or infinities the pivot searches of MKL and the panels differ)."""
    from ember.ops import lu
    for kind, d in zip(itertools.cycle(("normal", "zero row and column", "non-finite", "ties")),
                       _lu_cases(dtype)):
        taken = spy(openmp_kernels, "getrf_recursive")
        got = lu.getrf(d)
        assert len(taken) == 1
        want = torch.linalg.lu_factor_ex(torch.from_numpy(d))
        np.testing.assert_array_equal(got[2], want.info.numpy())
        if kind != "non-finite":
            np.testing.assert_array_equal(got[1], want.pivots.numpy())
            tolerance = 1e-4 if dtype == np.float32 else 1e-10
            np.testing.assert_allclose(got[0], want.LU.numpy(), rtol=tolerance, atol=tolerance)


@needs_loops
def test_recursive_lu_of_one_panel_is_the_blocked_loop_s_bit_for_bit(monkeypatch):
    from ember.ops import lu
    d = np.random.default_rng(8).standard_normal((3, 40, 32)).astype(np.float32)
    got = lu.getrf(d)
    monkeypatch.setattr(openmp_kernels, "_RECURSIVE_GETRFS", {})
    for g, w in zip(got, lu.getrf(d)):
        np.testing.assert_array_equal(g, w)


@needs_loops
def test_row_order_loop_gives_the_numpy_path_s_rows(spy, monkeypatch):
    from ember.ops import triangular
    rng = np.random.default_rng(7)
    for shape, m in [((1,), 1), ((4,), 4), ((3, 5), 7), ((2, 2, 64), 64), ((6, 3), 3)]:
        pivots = (rng.integers(0, m, shape) + 1).astype(np.int32)
        taken = spy(openmp_kernels, "row_order")
        got = triangular.row_order(np, pivots, m)
        assert len(taken) == 1
        with monkeypatch.context() as patched:
            patched.setattr(openmp_kernels, "row_order", lambda pivots, m: None)
            want = triangular.row_order(np, pivots, m)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


@needs_loops
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lu_unpack_loop_gives_the_numpy_path_s_factors(dtype, spy, monkeypatch):
    """lu_unpack's and linalg.lu's Python paths on the loop: the Python path's P, L and U bit for bit (NaN, signed
    zeros and infinities copied as they are), square, tall, wide and batched, each part alone."""
    rng = np.random.default_rng(9)
    for shape in [(1, 1), (4, 4), (5, 3), (3, 5), (2, 3, 4, 4), (2, 6, 2)]:
        data = rng.standard_normal(shape).astype(dtype)
        flat = data.reshape(-1)
        flat[:3] = [np.nan, -0.0, -np.inf][: flat.size]
        m, n = shape[-2:]
        pivots = (rng.integers(0, m, shape[:-2] + (min(m, n),)) + 1).astype(np.int32)
        LU, piv = ember.tensor(data), ember.tensor(pivots)
        for parts in [(True, True), (True, False), (False, True)]:
            taken = spy(openmp_kernels, "lu_unpack")
            got = triangular._checked_lu_unpack(LU, piv, *parts)   # (the Python path)
            assert len(taken) == 1
            with monkeypatch.context() as patched:
                patched.setattr(openmp_kernels, "lu_unpack", lambda *a, **k: None)
                want = triangular._checked_lu_unpack(LU, piv, *parts)
            for g, w in zip(got, want):
                assert g.dtype == w.dtype and g.shape == w.shape
                np.testing.assert_array_equal(g.numpy().view(f"u{g.element_size()}"),
                                              w.numpy().view(f"u{w.element_size()}"))
        A = ember.tensor(rng.standard_normal(shape).astype(dtype))
        taken = spy(openmp_kernels, "lu_unpack")
        got = lu._python_lu(A)   # (the Python path: the compiled function calls the loop from C)
        assert len(taken) == 1
        with monkeypatch.context() as patched:
            patched.setattr(openmp_kernels, "lu_unpack", lambda *a, **k: None)
            want = lu._python_lu(A)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.numpy(), w.numpy())


@needs_loops
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_getrs_loop_gives_the_substitutions_bits(dtype, spy, monkeypatch):
    """lu_solve_arrays by the compiled solve: the steps on the arrays' bits (rows in P^T's order, the
    two substitutions), A X = B and A^T X = B, one factor for a batch, gemm's recursion (40, 70 rows),
    no columns."""
    from ember.ops import lu
    rng = np.random.default_rng(10)
    for lu_batch, b_batch, n, k in [((), (), 4, 2), ((3,), (3,), 5, 1), ((), (2, 3), 3, 4), ((2,), (2,), 40, 3),
                                    ((), (), 70, 5), ((2,), (2,), 1, 1), ((), (), 6, 0)]:
        factors, pivots, _ = lu.getrf(rng.standard_normal(lu_batch + (n, n)).astype(dtype))
        b = rng.standard_normal(b_batch + (n, k)).astype(dtype)
        for transpose in (False, True):
            taken = spy(openmp_kernels, "getrs_recursive")
            got = lu.lu_solve_arrays(factors, pivots, b, transpose, False)
            assert len(taken) == 1
            with monkeypatch.context() as patched:
                patched.setattr(openmp_kernels, "getrs_recursive", lambda *a: None)
                want = lu.lu_solve_arrays(factors, pivots, b, transpose, False)
            assert got.shape == want.shape and got.dtype == want.dtype
            np.testing.assert_array_equal(got.view(f"u{got.itemsize}"), want.view(f"u{want.itemsize}"))


@needs_loops
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_linspace_loop_gives_the_numpy_path_s_and_torch_s_values(dtype, spy, monkeypatch):
    """linspace of float32 and float64 on the loop: the NumPy path's bits (its emulated fused
    multiply-adds) and torch's, from 2 to 5,000 steps, ends of every magnitude, equal ends."""
    from ember.ops import creation
    rng = np.random.default_rng(11)
    dt = np.dtype(dtype)
    for trial in range(400):
        start, end = rng.standard_normal(2) * 10.0 ** rng.integers(-30, 30)
        end = start if trial % 7 == 0 else end
        steps = int(rng.integers(2, 50 if trial % 5 else 5000))
        taken = spy(openmp_kernels, "linspace")
        got = creation._linspace_float(start, end, steps, dt)
        assert len(taken) == 1
        with monkeypatch.context() as patched:
            patched.setattr(openmp_kernels, "linspace", lambda *a: None)
            want = creation._linspace_float(start, end, steps, dt)
        np.testing.assert_array_equal(got.view(f"u{dt.itemsize}"), want.view(f"u{dt.itemsize}"))
        theirs = torch.linspace(float(dt.type(start)), float(dt.type(end)), steps,
                                dtype=torch.float32 if dtype == np.float32 else torch.float64).numpy()
        np.testing.assert_array_equal(got.view(f"u{dt.itemsize}"), theirs.view(f"u{dt.itemsize}"))


@needs_loops
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_small_qr_driver_gives_the_lapack_path_s_bits(dtype, spy, monkeypatch):
    """lapack.qr by the C driver (geqrf and orgqr called from one loop): the Python LAPACK path's Q and R
    bit for bit in every mode, square, tall, wide, one row or column, batched, and large enough to block."""
    from ember._backend import lapack
    if not (lapack._GEQRF and lapack._ORGQR):
        pytest.skip("NumPy's LAPACK not found")
    rng = np.random.default_rng(15)
    for shape in [(1, 4, 4), (1, 5, 3), (1, 3, 5), (3, 6, 6), (2, 40, 9), (2, 6, 11), (1, 1, 1), (1, 1, 7),
                  (1, 7, 1), (2, 70, 70)]:
        a = rng.standard_normal(shape).astype(dtype)
        for mode in ("reduced", "complete", "r"):
            taken = spy(openmp_kernels, "small_qr")
            got = lapack.qr(a, mode)
            assert len(taken) == 1
            with monkeypatch.context() as patched:
                patched.setattr(openmp_kernels, "small_qr", lambda *args: None)
                want = lapack.qr(a, mode)
            for g, w in zip(got, want):
                assert (g is None) == (w is None)
                if g is not None:
                    assert g.shape == w.shape
                    np.testing.assert_array_equal(g.view(f"u{g.itemsize}"), w.view(f"u{w.itemsize}"))


@needs_loops
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_small_orgqr_driver_gives_the_lapack_path_s_bits(dtype, spy, monkeypatch):
    """lapack.orgqr by the C driver: the Python LAPACK path's Q bit for bit, with no, one and every
    reflector, square, tall, one column, batched, and large enough to block."""
    from ember._backend import lapack
    if not lapack._ORGQR:
        pytest.skip("NumPy's LAPACK not found")
    rng = np.random.default_rng(16)
    for (count, m, n), k in [((1, 4, 4), 4), ((1, 5, 3), 3), ((3, 5, 3), 1), ((2, 6, 4), 0), ((1, 7, 1), 1),
                             ((1, 1, 1), 1), ((2, 70, 40), 40)]:
        a = rng.standard_normal((count, m, n)).astype(dtype)
        tau = rng.uniform(0, 2, (count, k)).astype(dtype)
        taken = spy(openmp_kernels, "small_orgqr")
        got = lapack.orgqr(a, tau)
        assert len(taken) == 1
        with monkeypatch.context() as patched:
            patched.setattr(openmp_kernels, "small_orgqr", lambda *args: None)
            want = lapack.orgqr(a, tau)
        assert got.shape == want.shape == (count, m, n)
        np.testing.assert_array_equal(got.view(f"u{got.itemsize}"), want.view(f"u{want.itemsize}"))


@needs_loops
def test_row_order_loop_is_not_given_pivots_out_of_range(spy):
    from ember.ops import triangular
    taken = spy(openmp_kernels, "row_order")
    for bad in ([0, 2], [3, 2], [-1, 2]):
        try:
            triangular.row_order(np, np.array(bad, np.int32), 2)
        except IndexError:
            pass
    assert taken == []


@needs_loops
@pytest.mark.parametrize("shape", [(2, 3), (5, 3), (9, 17), (70, 33), (1, 4)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pdist_loops_match_the_numpy_path_and_torch(shape, dtype, spy):
    """Euclidean pdist and its gradient on the loops (pairs four at a time and the rest, repeated
    rows at distance 0, whose gradient torch makes 0): the NumPy path's distances, and torch's
    distances and gradients."""
    rng = np.random.default_rng(sum(shape))
    x = rng.standard_normal(shape).astype(dtype)
    if shape[0] > 2:
        x[2] = x[0]
    forward, backward = spy(openmp_kernels, "pdist_euclidean"), spy(openmp_kernels, "pdist_euclidean_backward")
    ours = ember.tensor(x, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    distances = matrix_decompositions._python_pdist(ours, 2)   # (the compiled function's: the same loop, from C)
    expected = torch.pdist(theirs)
    tolerance = {"rtol": 1e-5, "atol": 1e-6} if dtype == np.float32 else {"rtol": 1e-12, "atol": 1e-13}
    np.testing.assert_allclose(distances.detach().numpy(), expected.detach().numpy(), **tolerance)
    rows = [x[i + 1:] - x[i] for i in range(shape[0] - 1)]
    by_rows = np.sqrt(np.concatenate([np.einsum("ij,ij->i", d, d) for d in rows])) if rows else np.zeros(0, dtype)
    np.testing.assert_allclose(distances.detach().numpy(), by_rows, **tolerance)
    grad = rng.standard_normal(expected.shape).astype(dtype)
    distances.backward(ember.tensor(grad))
    expected.backward(torch.tensor(grad))
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), **tolerance)
    if shape[0] > 1:
        assert len(forward) == 1 and len(backward) == 1


def _symmetric_cases(dtype):
    """Symmetric batches: random, with a zero pivot, with a NaN, scaled so that 2 x 2 pivots are
    chosen, and with a zero diagonal (2 x 2 pivots throughout)."""
    rng = np.random.default_rng(12)
    cases = []
    for n in (0, 1, 2, 3, 5, 17, 40):
        a = rng.standard_normal((3, n, n)).astype(dtype)
        a = a + np.swapaxes(a, -1, -2)
        cases.append(a)
        if n > 2:
            b = a.copy()
            b[0, 1, :] = b[0, :, 1] = 0
            b[1, n - 1, 0] = b[1, 0, n - 1] = np.nan
            b[2] *= 1e-3
            b[2, 0, 0] = 0
            c = np.zeros((1, n, n), dtype)
            c[0, np.arange(n - 1), np.arange(1, n)] = c[0, np.arange(1, n), np.arange(n - 1)] = 1
            cases += [b, c]
    return cases


@needs_loops
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ldl_factor_loop_computes_the_numpy_paths_bits(dtype, spy, monkeypatch):
    """Bunch-Kaufman's LDL of real matrices on the C loop: the NumPy path's factors, pivots and
    info bit for bit (1 x 1 and 2 x 2 pivots, row swaps, zero pivots, NaN)."""
    from ember.ops import ldl
    calls = spy(openmp_kernels, "ldl_factor")
    cases = _symmetric_cases(dtype)
    got = [ldl.sytrf(a, False) for a in cases]
    assert len(calls) == len(cases)
    monkeypatch.setattr(openmp_kernels, "ldl_factor", lambda a, alpha: None)
    for a, ours in zip(cases, got):
        for g, w in zip(ours, ldl.sytrf(a, False)):
            assert g.shape == w.shape and g.dtype == w.dtype
            np.testing.assert_array_equal(g, w)
    assert any((pivots < 0).any() for _, pivots, _ in got) and any(info.any() for _, _, info in got)


@needs_loops
def test_index_add_in_place_on_the_loop_writes_into_self_as_torch(monkeypatch):
    """Nothing recorded: the loop adds straight into ``self`` (a row-major view of a larger
    tensor here, repeated indices among them), its version bumped; torch's values."""
    from ember.ops import index
    taken = _spy_on(monkeypatch, index._slices_added)
    rng = np.random.default_rng(20)
    x = rng.standard_normal((300, 200)).astype(np.float32)
    src = rng.standard_normal((250, 200)).astype(np.float32)
    idx = rng.integers(0, 280, 250)
    base, want_base = ember.tensor(x), torch.tensor(x)
    view, want_view = base[20:], want_base[20:]
    before = base._version
    assert view.index_add_(0, ember.tensor(idx), ember.tensor(src)) is view
    want_view.index_add_(0, torch.tensor(idx), torch.tensor(src))
    assert taken == [True] and base._version == before + 1
    np.testing.assert_array_equal(base.numpy(), want_base.numpy())


@needs_loops
@pytest.mark.filterwarnings("ignore:index_reduce")
@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dim", [0, 1])
def test_index_reduce_on_the_loop_as_torch(reduce, include_self, dim, monkeypatch):
    """Nothing recorded: index_reduce of large float32 tensors on the loop (repeated indices,
    NaN, a strided source): torch's values, and the NumPy kernel's bits; with a gradient wanted,
    the loop too, the result's bits and torch's node."""
    from ember.ops import index
    taken = _spy_on(monkeypatch, index._slices_reduced)
    rng = np.random.default_rng(21)
    x = rng.uniform(0.5, 1.5, (300, 200)).astype(np.float32)
    src = rng.uniform(0.5, 1.5, (200, 250)).astype(np.float32).T   # (250, 200), strided
    if dim == 1:
        x, src = x.T.copy(), src.T
    idx = rng.integers(0, 280, 250)
    x[(slice(None),) * dim + (idx[3],)] = np.nan
    src[(slice(None),) * dim + (7,)] = np.nan

    def ember_index_reduce(x):
        return ember.index_reduce(x, dim, ember.tensor(idx), ember.tensor(src), reduce, include_self=include_self)
    want = torch.index_reduce(torch.tensor(x), dim, torch.tensor(idx), torch.tensor(np.ascontiguousarray(src)),
                              reduce, include_self=include_self).numpy()
    got = ember_index_reduce(ember.tensor(x)).numpy()
    assert taken == [True]
    np.testing.assert_allclose(got, want, rtol=1e-5, equal_nan=True)
    with choice.only(choice.NUMPY):
        np.testing.assert_array_equal(ember_index_reduce(ember.tensor(x)).numpy(), got)
    tracked = ember_index_reduce(ember.tensor(x, requires_grad=True))
    assert taken == [True, True] and type(tracked.grad_fn).__name__ == "IndexReduceBackward0"
    np.testing.assert_array_equal(tracked.detach().numpy(), got)


@needs_loops
@pytest.mark.parametrize("bounds", [(-0.5, 0.5), (0.0, 1.0), (None, 0.3), (-0.2, None), (1.0, -1.0),
                                    (-0.0, 0.0), (0.0, -0.0), (-np.inf, 2.0)])
def test_clamp_to_numbers_on_the_loop_gives_numpys_clip_bit_for_bit(bounds, monkeypatch, python_functions):
    """clamp of a large float32 tensor to number bounds on the loop: NumPy's clip and torch's
    clamp bit for bit (NaN kept, infinities, the sign of a zero equal to a bound, max where
    min > max); int64 with both bounds likewise."""
    from ember.ops import ternary
    taken = _spy_on(monkeypatch, ternary._clipped)
    rng = np.random.default_rng(13)
    x = rng.standard_normal((222, 295)).astype(np.float32)
    x[0, :5] = [np.nan, -0.0, 0.0, np.inf, -np.inf]
    lo, hi = bounds
    got = ember.clamp(ember.tensor(x), lo, hi).numpy()
    with choice.only(choice.NUMPY):
        numpy_path = ember.clamp(ember.tensor(x), lo, hi).numpy()
    want = torch.clamp(torch.tensor(x), lo, hi).numpy()
    assert taken == [True]
    np.testing.assert_array_equal(got.view(np.int32), numpy_path.view(np.int32))
    np.testing.assert_array_equal(got.view(np.int32), want.view(np.int32))
    if lo is not None and hi is not None and np.isfinite(lo):
        n = rng.integers(-100, 100, (222, 295))
        np.testing.assert_array_equal(ember.clamp(ember.tensor(n), int(lo * 10), int(hi * 10)).numpy(),
                                      torch.clamp(torch.tensor(n), int(lo * 10), int(hi * 10)).numpy())
        assert taken == [True, True]


@needs_loops
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_histogram_bins_loop_gives_the_numpy_path_s_bins(dtype, monkeypatch, spy):
    """Each point's bin from the loop is ``_bins_of``'s, equal-width and given edges alike:
    values on the edges (the last edge in the last bin), outside them, NaN and infinities; and
    torch's histogram and histogramdd on the loop."""
    from ember.ops import statistics
    rng = np.random.default_rng(9)
    values = np.concatenate([rng.uniform(-1.5, 1.5, 200), np.linspace(-1, 1, 11),
                             [np.nan, np.inf, -np.inf, -1.0, 1.0, 0.0]]).astype(dtype)
    points = np.stack([values, rng.permutation(values)], -1)
    for local, edges in ((True, [np.linspace(-1, 1, 11, dtype=dtype), np.linspace(-0.5, 1.5, 4, dtype=dtype)]),
                         (False, [np.array([-2.0, -0.5, 0.25, 1.0], dtype), np.array([-1.0, 0.0, 3.0], dtype)])):
        got = openmp_kernels.histogram_bins(points, edges, local)
        shape = [e.size - 1 for e in edges]
        want = np.zeros(points.shape[0], np.int64)
        outside = np.zeros(points.shape[0], bool)
        for d, e in enumerate(edges):
            pos = statistics._bins_of(np, points[:, d], e, "local" if local else "binary")
            outside |= pos < 0
            want = want * shape[d] + np.maximum(pos, 0)
        np.testing.assert_array_equal(got, np.where(outside, -1, want))
    finite = values[np.isfinite(values)]
    taken = spy(openmp_kernels, "histogram_bins")
    for lib in (torch, ember):
        x = lib.tensor(finite)
        # (ember's Python op: its compiled function calls the same loop from C)
        histogram = lib.histogram if lib is torch else statistics._python_histogram
        result = [histogram(x, 7), histogram(x, lib.tensor(np.array([-1.0, 0.1, 0.7], dtype))),
                  lib.histogramdd(lib.tensor(np.stack([finite, finite[::-1]], -1)), [3, 4], weight=x)]
        if lib is torch:
            want = [[r.numpy() for r in (h.hist, h.bin_edges)] for h in result[:2]] + [[result[2].hist.numpy()]]
        else:
            got = [[r.numpy() for r in (h.hist, h.bin_edges)] for h in result[:2]] + [[result[2].hist.numpy()]]
    assert len(taken) == 3
    for w, g in zip(want, got):
        for a, b in zip(w, g):
            np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-6)


@needs_loops
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_inverse_by_potri_is_torchs(dtype, upper, spy, monkeypatch):
    """cholesky_inverse of real factors by LAPACK's potri through the C driver: torch's inverses (its
    LAPACK's potri too), NaN and infinities where torch has them, torch's error for a zero on the diagonal
    (the first failing matrix of a batch named); the substitution path (where potri is not found) agrees."""
    from ember._backend import lapack
    if not lapack._POTRI:
        pytest.skip("NumPy's LAPACK not found")
    rng = np.random.default_rng(27)
    tolerance = 1e-4 if dtype == np.float32 else 1e-10
    for shape in [(1, 1), (3, 3), (2, 4, 4), (40, 40)]:
        factor = (rng.standard_normal(shape) + 3 * np.eye(shape[-1])).astype(dtype)
        taken = spy(openmp_kernels, "small_potri")
        got = ember.cholesky_inverse(ember.tensor(factor), upper=upper).numpy()
        assert len(taken) == 1
        want = torch.cholesky_inverse(torch.tensor(factor), upper=upper).numpy()
        np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance)
        with monkeypatch.context() as patched:
            patched.setattr(lapack, "_POTRI", {})
            np.testing.assert_allclose(ember.cholesky_inverse(ember.tensor(factor), upper=upper).numpy(), want,
                                       rtol=tolerance * 10, atol=tolerance * 10)
    for values in ([[2.0, 0.0], [np.nan, 3.0]], [[2.0, 0.0], [np.inf, 3.0]]):
        factor = np.array(values, dtype)
        factor = factor.T.copy() if upper else factor
        np.testing.assert_array_equal(ember.cholesky_inverse(ember.tensor(factor), upper=upper).numpy(),
                                      torch.cholesky_inverse(torch.tensor(factor), upper=upper).numpy())
    singular = np.array([[[2.0, 0.0], [1.0, 1.0]], [[2.0, 0.0], [1.0, 0.0]]], dtype)
    errors = []
    for lib in (ember, torch):
        with pytest.raises(RuntimeError) as caught:
            lib.cholesky_inverse(lib.tensor(singular), upper=upper)
        errors.append(str(caught.value))
    assert errors[0] == errors[1]


@needs_loops
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int8", "bool", "complex64", "float16"])
def test_put_on_its_loop_is_numpys_assignment(dtype, spy, monkeypatch, python_functions):
    """put and put_ (no accumulation) on the loop: the NumPy assignment's result (a repeated index keeps its
    last value), negative indices from the end; an index out of range raises torch's error and writes
    nothing, in place either."""
    rng = np.random.default_rng(30)
    for shape, idx in [((3, 4), [0, 5, -1]), ((3, 4), [[0, 5], [0, 11]]), ((5,), [4, -5, 2, 2]), ((2, 3), [])]:
        a = (rng.standard_normal(shape) * 3).astype(dtype)
        i = np.array(idx, np.int64)
        v = (rng.standard_normal(i.shape) * 3).astype(dtype)
        taken = spy(openmp_kernels, "put_elements")
        got = ember.put(ember.tensor(a), ember.tensor(i), ember.tensor(v))
        assert len(taken) == 1
        with monkeypatch.context() as patched:
            patched.setattr(openmp_kernels, "put_elements", lambda *args: None)
            want = ember.put(ember.tensor(a), ember.tensor(i), ember.tensor(v))
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        inplace = ember.tensor(a)
        inplace.put_(ember.tensor(i), ember.tensor(v))
        np.testing.assert_array_equal(inplace.numpy(), want.numpy())
    for bad in ([0, 12], [-13, 1], [3, 99, -100]):
        x = ember.tensor(np.arange(12).reshape(3, 4).astype(dtype))
        before = x.numpy().copy()
        errors = []
        for call in (lambda: ember.put(x, ember.tensor(bad), ember.tensor(np.ones(len(bad), dtype))),
                     lambda: x.put_(ember.tensor(bad), ember.tensor(np.ones(len(bad), dtype)))):
            with pytest.raises(IndexError) as caught:
                call()
            errors.append(str(caught.value))
        np.testing.assert_array_equal(x.numpy(), before)
        with pytest.raises(IndexError) as caught:
            torch.put(torch.tensor(before), torch.tensor(bad), torch.tensor(np.ones(len(bad), dtype)))
        assert errors == [str(caught.value)] * 2


def _median_inputs(dtype, rng):
    n = 4099
    ties = np.resize(np.array([1, 3, 3, 2, 1, 5, 2, 2, 7, 7, 0, 1]), n)
    arrays = [ties, rng.standard_normal(n) * 100, np.arange(n), np.arange(n)[::-1], np.full(n, 3), np.arange(13),
              np.array([4]), rng.integers(-3, 3, 64)]
    if dtype != "int64":
        with_nan = rng.standard_normal(n)
        with_nan[rng.integers(0, n, 40)] = np.nan
        arrays += [with_nan, np.full(20, np.nan), np.array([np.nan, 1.0, -0.0, 0.0])]
    return [a.astype(dtype) for a in arrays]


@needs_loops
@pytest.mark.parametrize("steps", [openmp_kernels.SELECT_STEPS, 1, 2])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_medians_of_all_elements_on_the_selection_loop_are_the_partitions_and_torchs(dtype, steps, monkeypatch,
                                                                                     python_functions):
    """median and nanmedian of all elements on the quickselect loop (after a given number of steps, a heap
    select on the range left): the element a partition puts at the lower median's position (NaN first
    for median), torch's value; ties, sorted and reversed runs, NaN among the elements or all of them."""
    from ember.ops import sort
    monkeypatch.setattr(openmp_kernels, "SELECT_STEPS", steps)
    taken = _spy_on(monkeypatch, sort._lower_median)
    for x in _median_inputs(dtype, np.random.default_rng(31)):
        for name in ("median", "nanmedian") if dtype != "int64" else ("median",):
            got = getattr(ember, name)(ember.tensor(x)).numpy()
            want = torch.tensor(getattr(torch, name)(torch.tensor(x)).item(), dtype=getattr(torch, dtype)).numpy()
            np.testing.assert_array_equal(got, sort._partitioned_median(x, name == "nanmedian"))
            np.testing.assert_array_equal(got, want)
    assert len(taken) >= 5 and all(taken)   # (the small ones: the small rows' sort)


@needs_loops
@pytest.mark.parametrize("squares", [False, True])
def test_row_sums_on_the_loop_are_near_the_exact_sums_on_any_thread_count(squares, monkeypatch):
    """Rows of whole lane blocks, of a part of one after them, of a part alone, of several chunks of 1,024
    elements; sums of the elements or of their squares: within float32 rounding of the float64 sums, the
    same bits on one thread and two; rows narrower than the loop takes are left to einsum (None)."""
    rng = np.random.default_rng(32)
    for rows, width in ((300, 128), (222, 295), (2000, 33), (64, 1024), (10, 32), (20, 1025), (8, 2365),
                        (3, 5000)):
        x = rng.standard_normal((rows, width)).astype(np.float32)
        got = []
        for threads in (1, 2):
            monkeypatch.setattr(openmp_kernels, "ROWS_THREADS_MIN_ELEMENTS", 1 if threads == 2 else 1 << 40)
            monkeypatch.setattr(openmp_kernels, "thread_count", lambda threads=threads: threads)
            got.append(openmp_kernels.row_sums(x, squares))
        np.testing.assert_array_equal(got[0], got[1])
        exact = (x.astype(np.float64) ** (2 if squares else 1)).sum(1)
        np.testing.assert_allclose(got[0], exact, rtol=1e-5, atol=1e-4)
    assert openmp_kernels.row_sums(np.ones((100, openmp_kernels.ROW_SUMS_MIN_WIDTH - 1), np.float32)) is None


@needs_loops
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int8", "bool", "complex64"])
@pytest.mark.parametrize("shape", [(222, 295), (295, 222), (3, 150, 140), (20000, 3)])
def test_triangles_on_the_row_loop_are_the_masks_and_torchs(shape, dtype, spy, python_functions):
    """tril and triu of row-major arrays from the loop's size, new and in place, diagonals inside and past the
    matrix: the mask path's bits (NaN kept, the dropped elements' bytes zeroed), torch's values; the loop
    declines a strided view (NumPy's path writes it in place)."""
    from ember.ops import shape as shape_ops
    data = np.random.default_rng(34).standard_normal(shape).astype(dtype)
    if dtype.startswith(("float", "complex")):
        data.reshape(-1)[::7] = np.nan
    taken = spy(openmp_kernels, "triangle", 0)
    for op in ("tril", "triu"):
        for diagonal in (0, 1, -2, 300, -300):
            want = getattr(torch, op)(torch.from_numpy(data), diagonal).numpy()
            masked = shape_ops._triangle_in_numpy(op, data, diagonal, None)
            got = getattr(ember, op)(ember.from_numpy(data), diagonal).numpy()
            np.testing.assert_array_equal(got.view(np.uint8), masked.view(np.uint8))
            np.testing.assert_array_equal(got, want)
            x = ember.from_numpy(data.copy())
            assert getattr(x, op + "_")(diagonal) is x
            np.testing.assert_array_equal(x.numpy().view(np.uint8), masked.view(np.uint8))
    assert len(taken) == 20 and openmp_kernels.triangle(True, data, 1) is not None   # (the loop answers)
    view = ember.from_numpy(data.copy())[..., ::2]
    assert openmp_kernels.triangle(False, view._data, 1, view._data) is None
    view.tril_(1)
    np.testing.assert_array_equal(view.numpy(), torch.from_numpy(data.copy())[..., ::2].tril(1).numpy())


@needs_loops
@pytest.mark.parametrize("op", ["maximum", "minimum", "fmax", "fmin"])
def test_int64_extremes_with_a_row_take_the_rows_loop(op, spy):
    """The maximum or minimum (fmax, fmin) of a large int64 tensor and a row repeated over its rows, the row
    with a leading 1 too: the rows loop, NumPy's and torch's values (the extremes of int64 among them); a
    column, or a transposed tensor, is NumPy's."""
    rng = np.random.default_rng(36)
    x = rng.integers(-2 ** 62, 2 ** 62, (222, 295))
    x[0, :2] = [np.iinfo(np.int64).min, np.iinfo(np.int64).max]
    taken = spy(openmp_kernels, "int64_extreme_rows", 0)
    for row in (rng.integers(-2 ** 62, 2 ** 62, 295), rng.integers(-9, 9, (1, 295))):
        got = getattr(ember, op)(ember.tensor(x), ember.tensor(row)).numpy()
        np.testing.assert_array_equal(got, getattr(np, op)(x, row))
        np.testing.assert_array_equal(got, getattr(torch, op)(torch.tensor(x), torch.tensor(row)).numpy())
    assert taken == [op in ("maximum", "fmax")] * 2
    assert openmp_kernels.int64_extreme_rows(True, x, row) is not None   # (the loop answers)
    assert openmp_kernels.int64_extreme_rows(True, x, x[:, :1].copy()) is None
    assert openmp_kernels.int64_extreme_rows(True, x.T, x[0, :222].copy()) is None


@needs_loops
def test_a_long_rows_sum_is_its_chunks_sums_added_in_float64():
    """A row over 1,024 elements: its chunks of 1,024 (the last with the elements after it) each summed as a
    row of their own, the chunks' sums added in float64 and rounded once."""
    x = np.random.default_rng(33).standard_normal((6, 3100)).astype(np.float32)
    chunks = [openmp_kernels.row_sums(np.ascontiguousarray(x[:, a:b])) for a, b in ((0, 1024), (1024, 2048),
                                                                                     (2048, 3100))]
    want = ((chunks[0].astype(np.float64) + chunks[1]) + chunks[2]).astype(np.float32)
    np.testing.assert_array_equal(openmp_kernels.row_sums(x), want)


@needs_loops
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "int16", "uint8", "bool"])
def test_runs_on_the_loop_are_numpys_passes_bits(dtype):
    """The runs of equal consecutive elements (unique_consecutive's, and unique's of the sorted elements): each
    run's first element (its bits: -0.0 after 0.0 stays in 0.0's run, as 0.0), each element's run and the
    runs' lengths, as NumPy's passes give them; NaN its own run; short runs and long ones."""
    from ember.ops import sort
    rng = np.random.default_rng(33)
    for n, values in ((1, 2), (7, 2), (5000, 3), (5000, 400)):
        x = rng.integers(0, values, n)
        x = x > 0 if dtype == "bool" else x.astype(dtype)
        if dtype.startswith("float") and n > 1:
            x[rng.integers(0, n, 5)] = np.nan
            x[rng.integers(0, n, 5)] = -0.0
        for index, counts in itertools.product((False, True), repeat=2):
            looped = openmp_kernels.runs(x, index, counts)
            passes = sort._runs_in_passes(x, index, counts)
            assert looped is not None
            for got, want in zip(looped, passes):
                assert (got is None) == (want is None)
                if got is not None:
                    assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
    assert openmp_kernels.runs(np.ones(4, np.float16), True, True) is None   # (float16: NumPy's passes)


@needs_loops
@pytest.mark.parametrize("n,dim", [(1, -1), (2, -1), (1, 0)])
def test_diff_of_a_large_float32_array_subtracts_on_the_row_slices_loop(n, dim, monkeypatch):
    """Nothing recorded: diff's neighbouring columns (rows lying apart) on the loop from
    ROWS_MIN_BYTES, NumPy's bits and torch's values; along dim 0 (whole rows) NumPy's."""
    from ember.ops import pointwise
    taken = _spy_on(monkeypatch, pointwise._row_slices_binary_kernel)
    x = np.random.default_rng(5).standard_normal((158, 264)).astype(np.float32)
    x[3, :4] = [np.nan, np.inf, -np.inf, 0.0]
    got = ember.diff(ember.tensor(x), n, dim).numpy()
    assert taken == ([True] * n if dim == -1 else [])
    np.testing.assert_array_equal(got, np.diff(x, n, dim))
    np.testing.assert_array_equal(got, torch.diff(torch.from_numpy(x), n, dim).numpy())


@needs_loops
@pytest.mark.parametrize("op", ["floor_divide", "remainder", "fmod"])
@pytest.mark.parametrize("magnitude", [9, 2 ** 52 - 1, 2 ** 62])
@pytest.mark.parametrize("divisor", ["row", "same shape"])
def test_int64_floor_division_on_the_rows_loop_gives_numpys_values(op, magnitude, divisor, monkeypatch):
    """int64 floor division, its remainder and fmod by an int64 array from INT64_DIVISION_MIN_ELEMENTS on the rows loop
    (float64 division where every value is under 2**52, integer division in rows with larger ones):
    NumPy's values and torch's, the extremes and -1 divisors included; a zero divisor raises torch's error."""
    from ember.ops import pointwise
    taken, real = [], openmp_kernels.int64_division_rows

    def spy(*args):
        out = real(*args)
        taken.append(out is not None)
        return out
    monkeypatch.setattr(openmp_kernels, "int64_division_rows", spy)
    rng = np.random.default_rng(9)
    x = rng.integers(-magnitude, magnitude, (100, 300), endpoint=True)
    y = rng.integers(-magnitude, magnitude, 300 if divisor == "row" else x.shape, endpoint=True)
    y[y == 0] = 3
    y[..., :2] = [-1, 1]
    x[0, :4] = [np.iinfo(np.int64).min, np.iinfo(np.int64).max, 0, -1] if magnitude > 2 ** 52 else [0, -1, 1, 5]
    assert x.size >= pointwise.INT64_DIVISION_MIN_ELEMENTS
    got = getattr(ember, op)(ember.tensor(x), ember.tensor(y)).numpy()
    assert taken == [True]
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(got, getattr(np, op)(x, y))
    np.testing.assert_array_equal(got, getattr(torch, op)(torch.from_numpy(x), torch.from_numpy(y)).numpy())
    y[5] = 0
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        getattr(ember, op)(ember.tensor(x), ember.tensor(y))


@needs_loops
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_kron_of_float_matrices_on_the_rows_loop(dtype):
    """kron of two float matrices where nothing records: the loop itself answers (row-major operands), its
    bits those of NumPy's kron and torch's, NaN and infinities included; transposed operands take the
    broadcast product, with the same bits."""
    rng = np.random.default_rng(30)
    a, b = rng.standard_normal((41, 61)).astype(dtype), rng.standard_normal((33, 17)).astype(dtype)
    a[3, :3] = [np.nan, np.inf, -np.inf]
    looped = openmp_kernels.kron(a, b)
    assert looped is not None and looped.shape == (41 * 33, 61 * 17)
    np.testing.assert_array_equal(looped, np.kron(a, b))
    got = ember.kron(ember.tensor(a), ember.tensor(b)).numpy()
    np.testing.assert_array_equal(got, torch.kron(torch.from_numpy(a), torch.from_numpy(b)).numpy())
    transposed = ember.kron(ember.tensor(a.T.copy()).T, ember.tensor(b)).numpy()
    np.testing.assert_array_equal(transposed, got)
    assert openmp_kernels.kron(a.T, b) is None
