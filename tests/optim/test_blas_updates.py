"""SGD's updates on NumPy's BLAS (``_backend/cblas.py``: ``axpy``, ``axpby``) against torch's
kernels and against the ufunc fallback.

torch's ``add_(x, alpha=a)`` rounds each element once (a fused multiply-add). OpenBLAS's
``axpy`` does too on some CPUs' kernels, while others (its Haswell kernels, which it also picks
on AMD Zen 5) round part of the elements twice (``a * x``, then the sum): where this BLAS's
``axpy`` fuses, SGD on it follows torch bit for bit; elsewhere every element is one of the two
roundings, within an ulp of torch's."""
from fractions import Fraction

import numpy as np
import pytest
import torch

import ember
from ember._backend import cblas as _blas
from ember._backend import choice, openmp_kernels
from ember.optim import _flat_ops as ops
from ember.optim import _flat_buffers as flat_buffers

needs_blas = pytest.mark.skipif(not _blas.available(), reason="NumPy's BLAS has no axpy/axpby")

SIZES = [0, 1, 7, 1000, 100003]
DTYPES = [np.float32, np.float64]


def arrays(n, dtype, count, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(n).astype(dtype) for _ in range(count)]


def rounded(value, dtype):
    """The exact rational ``value`` rounded to the nearest ``dtype`` number, ties to even."""
    guess = dtype(float(value))
    candidates = (np.nextafter(guess, dtype(-np.inf)), guess, np.nextafter(guess, dtype(np.inf)))
    return min(candidates, key=lambda c: (abs(Fraction(float(c)) - value),
                                          int(np.array(c).view(f"u{c.itemsize}")) & 1))


def fused_axpy(alpha, x, y):
    """``y + alpha * x`` with one rounding per element, computed exactly."""
    a = Fraction(float(x.dtype.type(alpha)))
    return np.array([rounded(Fraction(float(yi)) + a * Fraction(float(xi)), x.dtype.type)
                     for xi, yi in zip(x, y)], dtype=x.dtype)


def unfused_axpy(alpha, x, y):
    """``y + alpha * x`` with the product rounded, then the sum."""
    return y + x.dtype.type(alpha) * x


def blas_axpy_fuses(dtype):
    """Whether this BLAS's ``axpy`` rounds every element once, on tails and bodies alike."""
    for n in range(1, 80):
        x, y = arrays(n, dtype, 2, seed=n)
        want = fused_axpy(-0.01, x, y)
        _blas.axpy(-0.01, x, y)
        if not np.array_equal(y, want):
            return False
    return True


@needs_blas
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_axpy_rounds_each_element_once_or_as_product_then_sum(n, dtype):
    x, y = arrays(n, dtype, 2)
    count = min(n, 2000)  # the exact reference is slow: the elements checked one by one
    fused, unfused = fused_axpy(-0.01, x[:count], y[:count]), unfused_axpy(-0.01, x, y)
    want = torch.from_numpy(y.copy()).add_(torch.from_numpy(x), alpha=-0.01).numpy()
    np.testing.assert_array_equal(want[:count], fused)  # torch's kernel: one rounding
    assert _blas.axpy(-0.01, x, y)
    assert np.all((y[:count] == fused) | (y[:count] == unfused[:count]))
    np.testing.assert_array_max_ulp(y, want, maxulp=1)
    if blas_axpy_fuses(dtype):
        np.testing.assert_array_equal(y, want)


@needs_blas
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_axpby_rounds_as_torch_mul_then_add(n, dtype):
    x, y = arrays(n, dtype, 2)
    want = torch.from_numpy(y.copy()).mul_(0.9).add_(torch.from_numpy(x)).numpy()
    assert _blas.axpby(1.0, x, 0.9, y)
    np.testing.assert_array_equal(y, want)


def not_qualifying():
    x, y = arrays(12, np.float32, 2)
    readonly = y.copy()
    readonly.flags.writeable = False
    return {
        "strided target": (x[::2], y[::2]),
        "float16": (x.astype(np.float16), y.astype(np.float16)),
        "mixed dtypes": (x, y.astype(np.float64)),
        "sizes differ": (x[:5], y),
        "overlapping": (y[1:], y[:-1]),
        "read-only target": (x, readonly),
        "not an ndarray": (x.tolist(), y),
    }


@pytest.mark.parametrize("case", sorted(not_qualifying()))
def test_unsupported_operands_are_left_to_ufuncs(case):
    x, y = not_qualifying()[case]
    before = np.array(y, copy=True)
    assert not _blas.axpy(0.5, x, y)
    assert not _blas.axpby(1.0, x, 0.5, y)
    np.testing.assert_array_equal(y, before)


@pytest.mark.parametrize("dtype", DTYPES + [np.float16])
def test_flat_ops_fall_back_to_the_same_formulas(dtype, monkeypatch):
    monkeypatch.setattr(ops, "BLAS_MIN_SIZE", 0)
    x, y = arrays(33, dtype, 2)
    fused_add, fused_decay = y.copy(), y.copy()
    ops.add_scaled_(np, fused_add, -0.1, x)
    ops.decay_add_(np, fused_decay, 0.9, x)
    monkeypatch.setattr(_blas, "_AXPY", {})
    monkeypatch.setattr(_blas, "_AXPBY", {})
    plain_add, plain_decay = y.copy(), y.copy()
    with choice.only(choice.NUMPY):   # (not the threads' loops either)
        ops.add_scaled_(np, plain_add, -0.1, x)
        ops.decay_add_(np, plain_decay, 0.9, x)
    np.testing.assert_array_equal(plain_add, y - x * dtype(0.1))
    np.testing.assert_array_equal(plain_decay, y * dtype(0.9) + x)
    np.testing.assert_array_equal(fused_decay, plain_decay)  # rounded the same way
    tol = {np.float16: 1e-3, np.float32: 1e-6, np.float64: 1e-14}[dtype]
    np.testing.assert_allclose(fused_add, plain_add, rtol=tol, atol=tol)


@pytest.mark.skipif(not openmp_kernels.available() or not choice.enabled(choice.ONEDNN),
                    reason="no C compiler, or oneDNN off (the loops run where it does): the loops are not used here")
@pytest.mark.parametrize("n", [1, 7, 100003])
def test_updates_on_the_threads_round_as_torch(n, monkeypatch):
    """On two threads or more, large float32 updates run as OpenMP loops: ``add_(x, alpha)``
    rounded once per element and ``mul_(decay).add_(x)`` twice, torch's bits."""
    monkeypatch.setattr(ops, "BLAS_MIN_SIZE", 0)
    monkeypatch.setattr(openmp_kernels, "thread_count", lambda: 2)
    x, y = arrays(n, np.float32, 2)
    added, decayed = y.copy(), y.copy()
    with choice.only(choice.ONEDNN):   # (the loops, or KernelNotApplicable)
        ops.add_scaled_(np, added, -0.01, x)
        ops.decay_add_(np, decayed, 0.9, x)
    ty, tx = torch.from_numpy(y), torch.from_numpy(x)
    np.testing.assert_array_equal(added, ty.clone().add_(tx, alpha=-0.01).numpy())
    np.testing.assert_array_equal(decayed, ty.clone().mul_(0.9).add_(tx).numpy())
    monkeypatch.setattr(openmp_kernels, "thread_count", lambda: 1)   # one thread: BLAS's
    assert openmp_kernels.add_scaled(y.copy(), 0.5, x) is None


SGD_SETTINGS = [{"lr": 0.1}, {"lr": 0.01, "momentum": 0.9},
                {"lr": 0.01, "momentum": 0.9, "dampening": 0.2},
                {"lr": 0.01, "momentum": 0.9, "nesterov": True, "weight_decay": 0.1}]
SHAPES = [(37, 5), (5,), (3, 4, 2)]


def sgd_trajectory(lib, settings, dtype, direct, monkeypatch, steps=6):
    monkeypatch.setattr(flat_buffers, "DIRECT_MIN_MEAN_SIZE", 0 if direct else 10**12)
    rng = np.random.default_rng(3)
    params = [lib.nn.Parameter(lib.tensor(rng.standard_normal(s).astype(dtype)))
              for s in SHAPES]
    opt = lib.optim.SGD(params, **settings)
    history = []
    for _ in range(steps):
        for p in params:
            p.grad = lib.tensor(rng.standard_normal(p.shape).astype(dtype))
        opt.step()
        history.append([p.detach().numpy().copy() for p in params])
    return history


@needs_blas
@pytest.mark.parametrize("direct", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("settings", SGD_SETTINGS[:2])
def test_sgd_on_blas_follows_torch_bit_for_bit_where_axpy_fuses(settings, dtype, direct,
                                                                 monkeypatch):
    monkeypatch.setattr(ops, "BLAS_MIN_SIZE", 0)
    want = sgd_trajectory(torch, settings, dtype, direct, monkeypatch)
    got = sgd_trajectory(ember, settings, dtype, direct, monkeypatch)
    exact = blas_axpy_fuses(dtype)
    tol = 1e-6 if dtype == np.float32 else 1e-14
    for got_step, want_step in zip(got, want):
        for a, b in zip(got_step, want_step):
            if exact:
                np.testing.assert_array_equal(a, b)
            else:
                np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


@pytest.mark.parametrize("direct", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("settings", SGD_SETTINGS)
def test_sgd_without_blas_matches_torch(settings, dtype, direct, monkeypatch):
    want = sgd_trajectory(torch, settings, dtype, direct, monkeypatch)
    monkeypatch.setattr(_blas, "_AXPY", {})
    monkeypatch.setattr(_blas, "_AXPBY", {})
    got = sgd_trajectory(ember, settings, dtype, direct, monkeypatch)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for got_step, want_step in zip(got, want):
        for a, b in zip(got_step, want_step):
            np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def test_sgd_updates_a_non_contiguous_parameter():
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    p = ember.nn.Parameter(ember.tensor(base))
    p._data = base.T  # a strided view: BLAS does not apply, the ufuncs do
    p.grad = ember.ones(6, 4)
    opt = ember.optim.SGD([p], lr=0.5, momentum=0.9)
    opt.step()
    opt.step()
    np.testing.assert_allclose(base.T, np.arange(24, dtype=np.float32).reshape(4, 6).T - 1.45,
                               rtol=1e-6, atol=1e-6)


def test_small_tensors_stay_on_numpy_large_ones_take_blas(monkeypatch):
    calls = []
    real = _blas.axpy
    monkeypatch.setattr(_blas, "axpy", lambda *a: calls.append(a[1].size) or real(*a))
    monkeypatch.setattr(openmp_kernels, "thread_count", lambda: 1)   # (on two, the loops)
    params = [ember.nn.Parameter(ember.zeros(n)) for n in (ops.BLAS_MIN_SIZE - 1,
                                                           ops.BLAS_MIN_SIZE)]
    for p in params:
        p.grad = ember.ones(p.shape)
    ember.optim.SGD(params, lr=0.5).step()
    assert calls == [ops.BLAS_MIN_SIZE] if _blas.available() else calls == []
    for p in params:
        np.testing.assert_array_equal(p.detach().numpy(), np.full(p.shape, -0.5, np.float32))
