"""What the op table does not check of issue 21's everyday ops: warnings, return types,
metadata (output_nr, new_empty_strided), against torch."""
import warnings

import numpy as np
import pytest
import torch

import ember


def _same_warnings(fn):
    out = []
    for lib in (torch, ember):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fn(lib)
        out.append([(w.category, str(w.message).split(" (Triggered internally")[0]) for w in caught])
    return out


def test_triangular_solve_warns_once_as_torch_does():
    a = np.triu(np.random.default_rng(0).normal(size=(3, 3))) + 3 * np.eye(3)
    b = np.ones((3, 2))
    from ember.ops import _common
    _common._warned.clear()
    got_torch, got_ember = _same_warnings(
        lambda lib: [lib.triangular_solve(lib.tensor(b), lib.tensor(a)) for _ in range(2)])
    assert len(got_ember) == 1 and got_ember[0][0] is UserWarning   # once per process
    assert got_ember[0][1].startswith("torch.triangular_solve is deprecated in favor of")
    if got_torch:   # torch warns once per process too: only if nothing called it before
        assert got_ember == got_torch


@pytest.mark.parametrize("name,call", [
    ("histogram", lambda lib, x: lib.histogram(x, 3)),
    ("histogramdd", lambda lib, x: lib.histogramdd(x.reshape(3, 2), bins=2)),
    ("triangular_solve", lambda lib, x: lib.triangular_solve(
        x.reshape(3, 2), lib.eye(3, dtype=x.dtype))),
    ("lu_unpack", lambda lib, x: lib.lu_unpack(
        x.reshape(2, 3)[:, :2], lib.tensor([2, 2], dtype=lib.int32))),
])
def test_return_types_have_torchs_fields(name, call):
    values = np.arange(6.0) / 7
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = call(torch, torch.tensor(values))
        e = call(ember, ember.tensor(values))
    assert type(e).__name__ == type(t).__name__ == name
    assert len(e) == len(t)
    for field in e._fields:
        getattr(t, field)   # torch's field of that name
    for te, tt in zip(e, t):
        if isinstance(tt, tuple):
            for a, b in zip(te, tt):
                np.testing.assert_allclose(a.numpy(), b.numpy())
        else:
            np.testing.assert_allclose(te.numpy(), tt.numpy())


def test_output_nr_counts_outputs_as_torch_does():
    for lib in (torch, ember):
        x = lib.ones(2, 3, requires_grad=True)
        first, second = x.split(2, dim=1)
        assert (x.output_nr, first.output_nr, second.output_nr) == (0, 0, 1)
        values, indices = x.max(1)
        assert values.output_nr == 0


def test_new_empty_strided_takes_dtype_and_strides():
    e = ember.ones(2).new_empty_strided((2, 3), (1, 2))
    t = torch.ones(2).new_empty_strided((2, 3), (1, 2))
    assert e.stride() == t.stride() and e.dtype.__repr__().split(".")[-1] == str(t.dtype).split(".")[-1]
    e = ember.ones(2).new_empty_strided((2,), (1,), dtype=ember.int64)
    assert e.dtype == ember.int64


def test_index_reduce_warns_beta_once():
    from ember.ops import index
    index._index_reduce_warned.clear()
    x, i, s = ember.ones(3), ember.tensor([0, 2]), ember.tensor([2.0, 3.0])
    with pytest.warns(UserWarning, match="index_reduce\\(\\) is in beta"):
        ember.index_reduce(x, 0, i, s, "prod")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.index_reduce(x, 0, i, s, "prod")


@pytest.mark.parametrize("dtype", ["float32", "complex64"])
@pytest.mark.parametrize("norm", [1e-9, 1e-4, 0.01, 0.3, 1.0, 2.0, 5.0, 20.0, 139.0])
def test_matrix_exp_of_float32_and_complex64_in_their_precision_as_accurate_as_torchs(norm, dtype):
    """(float32 and complex64 on a Taylor polynomial in their own precision, as torch's; within
    three times torch's error of the float64 value at every norm, on 64x64 matrices)"""
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (64, 64))
    if dtype == "complex64":
        x = x + 1j * rng.uniform(-1, 1, x.shape) / 4
    x = (x * norm / np.abs(x).sum(0).max()).astype(dtype)
    exact = torch.matrix_exp(torch.from_numpy(x.astype(np.complex128 if dtype == "complex64" else np.float64)))
    got = ember.matrix_exp(ember.tensor(x)).numpy()
    want = torch.matrix_exp(torch.from_numpy(x))
    assert got.dtype == x.dtype

    def error(values):
        return float((torch.as_tensor(values).to(exact.dtype) - exact).abs().max() / exact.abs().max())
    assert error(got) <= max(3 * error(want), 2e-7)


def test_matrix_exp_taylor_degrees_bound_the_backward_error_by_float32s_unit_roundoff():
    """Each degree's bound: the series of log(exp(-x) T_m(x)), its coefficients' absolute values
    summed, is 2**-24 times x at the tabled norm."""
    mpmath = pytest.importorskip("mpmath")
    from ember.ops import matrix_functions
    mpmath.mp.dps = 40
    terms = 100
    for m, theta in matrix_functions._TAYLOR_THETA.items():
        p = [sum((-1) ** i / mpmath.factorial(i) / mpmath.factorial(k - i) for i in range(max(0, k - m), k + 1))
             for k in range(terms + 1)]   # exp(-x) T_m(x)
        log = [mpmath.mpf(0)] * (terms + 1)
        for k in range(1, terms + 1):   # (p log' = p')
            log[k] = (k * p[k] - sum(j * log[j] * p[k - j] for j in range(1, k))) / k
        bound = sum(abs(log[k]) * mpmath.mpf(theta) ** (k - 1) for k in range(m + 1, terms + 1))
        assert abs(bound / mpmath.mpf(2) ** -24 - 1) < 1e-9, m


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")])
def test_matrix_exp_of_a_matrix_with_inf_or_nan_is_nan_as_torchs(value, dtype):
    x = [[value, 1.0], [0.0, 1.0]]
    want = torch.matrix_exp(torch.tensor(x, dtype=getattr(torch, dtype))).numpy()
    got = ember.matrix_exp(ember.tensor(x, dtype=getattr(ember, dtype))).numpy()
    assert np.isnan(want).all()
    np.testing.assert_array_equal(got, want)


def test_linalg_matrix_exp_is_the_top_level_one():
    a = ember.tensor([[0.0, 1.0], [-1.0, 0.0]])
    expected = np.array([[np.cos(1), np.sin(1)], [-np.sin(1), np.cos(1)]])
    np.testing.assert_allclose(ember.linalg.matrix_exp(a).numpy(), expected, rtol=1e-6)
    np.testing.assert_allclose(a.matrix_exp().numpy(), expected, rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_histograms_bin_values_on_the_edges_as_torch_does(dtype):
    rng = np.random.default_rng(0)
    for trial in range(60):
        x = (rng.integers(-5, 6, size=int(rng.integers(1, 30))) / rng.choice([1, 2, 3, 7])).astype(dtype)
        bins = int(rng.integers(1, 8))
        kw = {} if trial % 3 else {"range": (float(x.min()) - 0.5, float(x.max()))}
        t, e = torch.histogram(torch.tensor(x), bins, **kw), ember.histogram(ember.tensor(x), bins, **kw)
        np.testing.assert_array_equal(e.bin_edges.numpy(), t.bin_edges.numpy())
        np.testing.assert_array_equal(e.hist.numpy(), t.hist.numpy())
        points = rng.integers(-3, 4, size=(int(rng.integers(1, 20)), 2)).astype(dtype) / 2
        t = torch.histogramdd(torch.tensor(points), bins=[bins, 3])
        e = ember.histogramdd(ember.tensor(points), bins=[bins, 3])
        np.testing.assert_array_equal(e.hist.numpy(), t.hist.numpy())
