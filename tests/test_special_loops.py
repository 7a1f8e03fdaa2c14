"""The Bessel and Airy functions on ``special_loops``' compiled loops: NumPy's path's bits for
float32 (the same arithmetic in the same order) and its values to a few ulp for float64 (glibc's
vector ``exp``, ``log``, ``sin`` and ``cos`` against NumPy's), NaN, infinities and zeros
included; torch's values on large inputs; and NumPy's path where the loops cannot be built."""
import numpy as np
import pytest
import torch

import ember
from ember._backend import choice, special_bessel, special_loops

# ember's loops sit in the kernel choices' oneDNN slot: with oneDNN off (EMBER_ONEDNN=0) they do not run
pytestmark = pytest.mark.skipif(not choice.enabled(choice.ONEDNN), reason="oneDNN is off (EMBER_ONEDNN=0)")

needs_loops = pytest.mark.skipif(not special_loops.available(),
                                 reason="no C compiler or libmvec: the special-function loops cannot be built here")


# special_loops' op -> the ember and torch functions computing it
PUBLIC = {
    "bessel_j0": "bessel_j0", "bessel_j1": "bessel_j1", "bessel_y0": "bessel_y0",
    "bessel_y1": "bessel_y1", "i0": "i0", "i1": "i1", "i0e": "i0e", "i1e": "i1e",
    "modified_bessel_k0": "modified_bessel_k0", "modified_bessel_k1": "modified_bessel_k1",
    "scaled_modified_bessel_k0": "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1": "scaled_modified_bessel_k1", "airy_ai": "airy_ai",
    "spherical_bessel_j0": "spherical_bessel_j0",
}


def _inputs(dtype, n=60_000):
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-30, 30, n // 2), rng.uniform(-3, 3, n // 2),
                        rng.uniform(0, 800, 500),
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-300, 8.0, -8.0, 2.0, -2.0, 3.0,
                         -3.0, 20.0, -20.0, 700.0, 710.0, -710.0, 1e-5, 89.0, -89.0]])
    return x.astype(dtype)


def test_every_function_has_a_loop_per_dtype():
    for op in special_loops.FUNCTIONS:
        assert callable(getattr(special_bessel, op))
        for dtype in ("float32", "float64"):
            assert f"void {op}_{dtype}(" in special_loops.SOURCE


@needs_loops
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", sorted(special_loops.FUNCTIONS))
def test_the_loops_compute_what_numpys_path_computes(op, dtype):
    x = _inputs(dtype)
    kernel = getattr(special_bessel, op)
    with choice.only(choice.ONEDNN):
        got = kernel(np, x)
    with choice.only(choice.NUMPY):
        want = kernel(np, x)
    assert got.dtype == want.dtype == x.dtype
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    if dtype == "float32":
        np.testing.assert_array_equal(got, want)
    else:   # (near the functions' zeros the relative error of either is larger)
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)


@needs_loops
@pytest.mark.parametrize("op", sorted(special_loops.FUNCTIONS))
def test_large_float32_inputs_match_torch(op):
    """(Within [-10, 10]: further out torch's float32 kernels overflow where the value does not,
    I0(89) is inf, or lose digits, Ai(-29); ember's NumPy path differs from torch there too.)"""
    x = np.random.default_rng(1).uniform(-10, 10, 200_000).astype(np.float32)
    x[:6] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-5]
    got = getattr(ember.special, PUBLIC[op])(ember.tensor(x)).numpy()
    want = getattr(torch.special, PUBLIC[op])(torch.from_numpy(x)).numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    # (ember's expansion of Ai on [-3, 2], in its NumPy path as on the loop, is within 4e-6 of
    # the exact values; torch's kernel is closer)
    atol = 5e-6 if op == "airy_ai" else 1e-6
    torch.testing.assert_close(torch.from_numpy(got), torch.from_numpy(want), equal_nan=True,
                               rtol=1e-5, atol=atol)



@pytest.mark.parametrize("path", [choice.ONEDNN, choice.NUMPY])
def test_float32_i1e_sums_the_terms_float32_resolves_in_float32_as_torch(path):
    """(Two thirds of the values carry torch's bits and nine tenths are within an ulp of them; the
    float64 sums rounded to float32 carry them for less than half, within an ulp for 85%.)"""
    if path == choice.ONEDNN and not special_loops.available():
        pytest.skip("no C compiler or libmvec: the special-function loops cannot be built here")
    x = np.random.default_rng(3).uniform(-30, 30, 200_000).astype(np.float32)
    x[:6] = [0.0, -0.0, np.inf, -np.inf, np.nan, 8.0]
    with choice.only(path):
        got = special_bessel.i1e(np, x)
    assert got.dtype == np.float32
    want = torch.special.i1e(torch.from_numpy(x)).numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    finite = np.isfinite(x)
    ulps = np.abs(got[finite].view(np.int32).astype(np.int64) - want[finite].view(np.int32).astype(np.int64))
    assert (ulps == 0).mean() > 0.6 and (ulps <= 1).mean() > 0.9
    exact = special_bessel.i1e(np, x[finite].astype(np.float64))
    np.testing.assert_allclose(got[finite], exact, rtol=2e-6, atol=0)
    np.testing.assert_array_equal(got[2:4], [0.0, -0.0])
    np.testing.assert_array_equal(np.signbit(got[2:4]), [False, True])

@needs_loops
def test_a_strided_input_and_the_public_ops_take_the_loop(spy):
    calls = spy(special_loops, "compute")
    x = _inputs("float32").reshape(-1, 4)
    got = ember.special.i1e(ember.tensor(x)[:, ::2]).numpy()
    assert calls == ["i1e"]
    with choice.only(choice.NUMPY):
        np.testing.assert_array_equal(got, special_bessel.i1e(np, x[:, ::2]))


def test_without_the_loops_numpy_runs(monkeypatch):
    monkeypatch.setattr(special_loops, "_functions", {f"{op}_{dtype}": None for op in special_loops.FUNCTIONS
                                                      for dtype in ("float32", "float64")})
    x = _inputs("float32", 1000)
    got = ember.special.bessel_j0(ember.tensor(x)).numpy()
    with choice.only(choice.NUMPY):
        np.testing.assert_array_equal(got, special_bessel.bessel_j0(np, x))


def _polynomial_arguments(degrees):
    rng = np.random.default_rng(2)
    x = np.concatenate([rng.uniform(-1.5, 1.5, 20_000), [1.0, -1.0, 0.0, np.nan, np.inf, -np.inf, 0.5]])
    if degrees == "array":
        return x, rng.integers(-2, 30, x.size).astype(np.float64)
    if degrees == "specials":
        return x[-7:], np.array([3.7, -1.0, np.nan, 1e30, 0.0, 1.0, 9.0])
    return x, float(degrees)


@needs_loops
@pytest.mark.parametrize("degrees", ["array", "specials", 5, 12])
@pytest.mark.parametrize("op", sorted(special_loops.POLYNOMIALS))
def test_polynomial_loops_compute_what_numpys_path_computes(op, degrees):
    """Each element's recurrence to its own degree: the NumPy path's values (its trigonometric
    forms of the Chebyshev polynomials through the C library's acos, cos and sin, to an ulp)."""
    from ember._backend import orthogonal_polynomials
    x, n = _polynomial_arguments(degrees)
    kernel = getattr(orthogonal_polynomials, op)
    with choice.only(choice.ONEDNN):
        got = kernel(np, x, n)
    with choice.only(choice.NUMPY):
        want = kernel(np, x, n)
    assert got.shape == want.shape and got.dtype == want.dtype == np.float64
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    if op.startswith("chebyshev"):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    else:
        np.testing.assert_array_equal(got, want)


@needs_loops
@pytest.mark.parametrize("name", ["chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
                                  "hermite_polynomial_h", "laguerre_polynomial_l", "legendre_polynomial_p"])
def test_public_polynomials_on_the_loop_match_torch(name):
    rng = np.random.default_rng(3)
    x = rng.uniform(-1.2, 1.2, (300, 200)).astype(np.float32)
    n = rng.integers(0, 12, (300, 200))
    for degrees in (n, 7):
        got = getattr(ember.special, name)(ember.tensor(x), ember.tensor(degrees) if degrees is n else 7)
        want = getattr(torch.special, name)(torch.from_numpy(x), torch.from_numpy(n) if degrees is n else 7)
        # (near the polynomials' zeros torch's float32 recurrence loses digits that ember's
        # float64 one keeps: the tolerance is relative to the largest value)
        torch.testing.assert_close(torch.from_numpy(got.numpy()), want, rtol=1e-4,
                                   atol=1e-6 * float(want.abs().max()))


# special_loops' functions in the input's own precision -> torch's
IN_OWN_PRECISION = {"lgamma": torch.lgamma, "digamma": torch.digamma,
                    "trigamma": lambda t: torch.polygamma(1, t)}


def test_every_function_in_own_precision_has_a_loop_per_dtype():
    assert set(special_loops.IN_OWN_PRECISION) == set(IN_OWN_PRECISION)
    for op in special_loops.IN_OWN_PRECISION:
        for dtype in ("float32", "float64"):
            assert f"void {op}_{dtype}(" in special_loops.SOURCE


@needs_loops
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", sorted(IN_OWN_PRECISION))
def test_gamma_functions_on_the_loop_as_accurate_as_numpys_path_and_torchs(op, dtype, spy):
    """lgamma, digamma and trigamma compiled, in the input's precision: within a few ulp of the
    NumPy path's results (the C library's log, sin and tan against NumPy's; where a result is a
    difference of two terms, within 2e-6 of the terms in float32), infinities and NaN in the
    same places, and torch's values."""
    from ember._backend import special
    calls = spy(special_loops, "compute")
    x = _inputs(dtype)
    x[:2000] = np.random.default_rng(4).uniform(-6, 6, 2000)   # (the zeros, poles and ranges)
    x[2000:2020] = [1.0, 2.0, -1.0, -2.5, 0.5, 0.6796875, 1.5, 4.0, 12.0, 1e-8, -1e-8, 1e-30,
                    3e38, -3e38, 1e-45, -1e-45, 1e5, -1e5 + 0.5, 0.25, -0.25]
    with choice.only(choice.ONEDNN):
        got = getattr(special, op)(np, x)
    assert calls == [op]
    with choice.only(choice.NUMPY):
        want = getattr(special, op)(np, x)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    finite = np.isfinite(want)
    scale = np.maximum(np.abs(want[finite]), 1.0)
    bound = 2e-6 if dtype == "float32" else 1e-13
    assert (np.abs(got[finite] - want[finite]) <= bound * scale).all()
    # (torch's float32 trigamma of negative inputs is further off; ember's NumPy path is not)
    compared = finite & (x > 0) if op == "trigamma" else finite
    expected = IN_OWN_PRECISION[op](torch.from_numpy(x)).numpy()
    torch_bound = 5e-6 if dtype == "float32" else 1e-9   # (torch's float64 polygamma: 5e-10)
    close = np.abs(got[compared] - expected[compared]) <= torch_bound * np.maximum(np.abs(expected[compared]), 1.0)
    assert close.all()


def _normal_inputs(op, dtype):
    rng = np.random.default_rng(5)
    if op == "ndtri":   # probabilities, the tails included
        x = np.concatenate([rng.uniform(0, 1, 20_000), np.exp(rng.uniform(-700, 0, 5_000)),
                            1 - np.exp(rng.uniform(-36, 0, 500)),
                            [0.0, 1.0, 0.5, -0.1, 1.1, np.nan, np.inf, 1e-300, 5e-324, 1e-8, 0.75]])
    else:
        x = np.concatenate([rng.uniform(-40, 30, 20_000), rng.uniform(-1.5, 1.5, 5_000),
                            [0.0, -0.0, np.inf, -np.inf, np.nan, 26.6, -26.6, -0.46875, 0.46875,
                             4.0, -1.0, -0.999, 1e-300]])
    with np.errstate(over="ignore"):
        return x.astype(dtype)


@needs_loops
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", sorted(special_loops.NORMAL))
def test_normal_functions_on_the_loop_compute_what_numpys_path_computes(op, dtype, spy):
    """erfcx, ndtri and log_ndtr compiled on Cody's erf and erfc: the NumPy path's bits for
    float32, its values to a few ulp for float64 (the C library's exp and log against NumPy's),
    and torch's values."""
    from ember._backend import special_normal
    calls = spy(special_loops, "compute")
    x = _normal_inputs(op, dtype)
    kernel = getattr(special_normal, op)
    with choice.only(choice.ONEDNN):
        got = kernel(np, x)
    assert calls == [op]
    with choice.only(choice.NUMPY):
        want = kernel(np, x)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    if dtype == "float32":
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)
    expected = getattr(torch.special, op)(torch.from_numpy(x)).numpy()
    # (log_ndtr far up the upper tail is about -1e-37 in float32, where torch's may give 0)
    torch.testing.assert_close(torch.from_numpy(got), torch.from_numpy(expected), equal_nan=True,
                               rtol=1e-5 if dtype == "float32" else 1e-8,
                               atol=1e-30 if dtype == "float32" else 0)


@needs_loops
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_ndtri_loop_by_blocks(dtype, spy):
    """ndtri's loop works by blocks of 64: blocks holding no probability in (0, 1) (integers,
    edges) take the edges alone, blocks with a far-tail probability fix those up; a length that
    is not a multiple of 64 ends in a partial block. The NumPy path's bits and torch's values."""
    from ember._backend import special_normal
    calls = spy(special_loops, "compute")
    rng = np.random.default_rng(7)
    edges = rng.integers(-3, 4, 200).astype(dtype)
    probabilities = rng.uniform(0, 1, 150)
    probabilities[[3, 70, 149]] = [1e-30, 1 - 1e-9, 3e-8]   # far tails, a lone one per block
    x = np.concatenate([edges, probabilities.astype(dtype), [0.0, 1.0, np.nan, 0.25, -np.inf]]).astype(dtype)
    with choice.only(choice.ONEDNN):
        got = special_normal.ndtri(np, x)
    assert calls == ["ndtri"]
    with choice.only(choice.NUMPY):
        want = special_normal.ndtri(np, x)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    if dtype == "float32":
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)
    expected = torch.special.ndtri(torch.from_numpy(x)).numpy()
    torch.testing.assert_close(torch.from_numpy(got), torch.from_numpy(expected), equal_nan=True,
                               rtol=1e-5 if dtype == "float32" else 1e-8, atol=0)
    of_edges = got[:edges.size]
    assert np.isneginf(of_edges[edges == 0]).all() and np.isposinf(of_edges[edges == 1]).all()
    assert np.isnan(of_edges[(edges != 0) & (edges != 1)]).all()


def _two_arguments(op):
    rng = np.random.default_rng(6)
    a = np.concatenate([rng.uniform(0, 30, 8_000), np.exp(rng.uniform(-10, 6, 2_000)),
                        [0.0, 0.0, 1.0, np.inf, np.inf, -1.0, np.nan, 2.0, 5.0, 1e-300]])
    x = np.concatenate([rng.uniform(0, 30, 8_000), np.exp(rng.uniform(-10, 6, 2_000)),
                        [0.0, 1.0, 0.0, 1.0, np.inf, 1.0, 1.0, np.nan, np.inf, 3.0]])
    return a, x


@needs_loops
@pytest.mark.parametrize("op", ["gammainc", "gammaincc"])
def test_incomplete_gamma_on_the_loop_computes_what_numpys_path_computes(op, spy):
    """gammainc and gammaincc, each element iterating until it has converged: the NumPy path's
    values (the C library's exp and log against NumPy's) and edges, one
    argument broadcast against the other included, and torch's values."""
    from ember._backend import special_gamma
    calls = spy(special_loops, "two_arguments")
    a, b = _two_arguments(op)
    kernel = getattr(special_gamma, op)
    for first, second in ((a, b), (a[:1], b), (a, b[5:6])):
        with choice.only(choice.ONEDNN):
            got = kernel(np, first, second)
        with choice.only(choice.NUMPY):
            want = kernel(np, first, second)
        assert got.shape == want.shape
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    assert calls == [op] * 3
    got = getattr(ember.special, op)(ember.tensor(a), ember.tensor(b)).numpy()
    expected = getattr(torch.special, op)(torch.from_numpy(a), torch.from_numpy(b)).numpy()
    torch.testing.assert_close(torch.from_numpy(got), torch.from_numpy(expected), equal_nan=True,
                               rtol=1e-8, atol=1e-9)


@needs_loops
@pytest.mark.parametrize("op", ["gammainc", "gammaincc"])
def test_incomplete_gamma_of_float32_converges_to_float32s_tolerance(op, spy):
    """float32 arguments take the loop that stops at ``SINGLE_EPS``: the NumPy path's values at
    that tolerance, within an ulp of float64's tolerance rounded to float32, and torch's."""
    from ember._backend import special_gamma
    calls = spy(special_loops, "two_arguments")
    a, b = (v.astype(np.float32) for v in _two_arguments(op))
    kernel = getattr(special_gamma, op)
    with choice.only(choice.ONEDNN):
        got = kernel(np, a, b)
    assert calls == [op + "_single"]
    with choice.only(choice.NUMPY):
        want = kernel(np, a, b)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    finest = kernel(np, a.astype(np.float64), b.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_max_ulp(got.astype(np.float32), finest, maxulp=1)
    got = getattr(ember.special, op)(ember.tensor(a), ember.tensor(b)).numpy()
    assert got.dtype == np.float32
    expected = getattr(torch.special, op)(torch.from_numpy(a), torch.from_numpy(b)).numpy()
    torch.testing.assert_close(torch.from_numpy(got), torch.from_numpy(expected), equal_nan=True,
                               rtol=2e-5, atol=1e-6)


@needs_loops
def test_zeta_on_the_loop_below_its_size_rule_computes_what_numpys_path_computes(spy):
    """Hurwitz's zeta (and polygamma of order 2 and up through it) on the loop for small
    arrays: the NumPy path's values within an ulp or two (the C library's pow against NumPy's),
    its edges (poles, negative q, infinities), and torch's values; large arrays stay on NumPy."""
    from ember._backend import special_gamma
    rng = np.random.default_rng(8)
    x = np.concatenate([rng.uniform(1, 12, 2_000), [1.0, 2.0, 3.0, np.inf, np.nan, 0.5, 7.0, 2.5, 4.0, np.inf]])
    q = np.concatenate([rng.uniform(-25, 25, 2_000), [0.0, -3.0, -2.5, 1.0, 2.0, np.inf, -np.inf, 1e-3,
                                                      -1e6 - 0.5, 0.5]])
    calls = spy(special_loops, "two_arguments")
    for first, second in ((x, q), (x[:1], q), (x, q[5:6])):
        with choice.only(choice.ONEDNN):
            got = special_gamma.zeta(np, first, second)
        with choice.only(choice.NUMPY):
            want = special_gamma.zeta(np, first, second)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)
    assert calls == ["zeta"] * 3
    big = np.full(special_gamma.ZETA_LOOP_MAX_ELEMENTS, 3.0)
    special_gamma.zeta(np, big, big)
    assert calls == ["zeta"] * 3
    x, q = np.delete(x, 2008), np.delete(q, 2008)   # (q below -100000: ember's sum is capped there)
    got = ember.special.zeta(ember.tensor(x), ember.tensor(q)).numpy()
    expected = torch.special.zeta(torch.from_numpy(x), torch.from_numpy(q)).numpy()
    torch.testing.assert_close(torch.from_numpy(got), torch.from_numpy(expected), equal_nan=True,
                               rtol=1e-9, atol=1e-12)
    y = rng.uniform(0.1, 8, 15)
    got = ember.special.polygamma(3, ember.tensor(y)).numpy()
    expected = torch.special.polygamma(3, torch.from_numpy(y)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-10)


def _gamma_gradient_inputs():
    """Gamma shapes and samples, and Beta marginals of Dirichlet samples, over every branch of
    ``gamma_gradients``, with zeros, infinities and NaN."""
    rng = np.random.default_rng(9)
    n = 20_000
    alpha = np.exp(rng.uniform(-4, 4, n))
    total = alpha + np.exp(rng.uniform(-4, 4, n))
    x_gamma = np.concatenate([rng.gamma(alpha), [0.0, 1e-300, np.inf, np.nan, 1.0, 0.79, 0.81, 9.0]])
    x_beta = np.concatenate([rng.beta(alpha, total - alpha), [0.0, 1.0, 0.5, np.nan, 1e-300, 0.25, 0.75, 0.5]])
    edges = np.array([1.0, 2.0, np.inf, 3.0, np.nan, 8.5, 0.1, 7.0])
    return (np.concatenate([alpha, edges]), x_gamma,
            x_beta, np.concatenate([alpha, edges]), np.concatenate([total, edges + 8.0]))


@needs_loops
@pytest.mark.parametrize("op", ["standard_gamma_grad", "dirichlet_grad"])
def test_gamma_gradients_on_the_loop_compute_what_numpys_path_computes(op, spy):
    """The reparameterised gradients of gamma and Dirichlet samples, each element taking its own
    branch in C: the NumPy path's values (glibc's vector exp and log against NumPy's, which the
    series' cancellations magnify to about 1e-12) and its NaN, broadcasting included."""
    from ember._backend import gamma_gradients
    alpha, x_gamma, x_beta, alpha_beta, total = _gamma_gradient_inputs()
    if op == "standard_gamma_grad":
        loop, cases = "two_arguments", [(alpha, x_gamma), (alpha[:1], x_gamma)]
    else:
        loop, cases = "three_arguments", [(x_beta, alpha_beta, total), (x_beta, alpha_beta[:1], total[:1])]
    calls = spy(special_loops, loop)
    kernel = getattr(gamma_gradients, op)
    for arrays in cases:
        with choice.only(choice.ONEDNN):
            got = kernel(np, *arrays)
        with choice.only(choice.NUMPY):
            want = kernel(np, *arrays)
        assert got.shape == want.shape and got.dtype == want.dtype == np.float64
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-300)
    assert calls == [op] * 2
