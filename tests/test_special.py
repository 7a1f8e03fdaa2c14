"""The vectorised special functions of the NumPy backend (erf, erfc, erfinv, lgamma, digamma,
trigamma), measured in ulps on dense grids, extremes included, against exact references:
the C library's erf/erfc through ``math`` element by element (the implementation they
replace), mpmath at 40 digits, scipy.special; and against torch for special values and for
float32 results."""
import math

import mpmath
import numpy as np
import pytest
import scipy.special as sps
import torch

from ember._backend import special

mpmath.mp.dps = 40

_math_erf = np.vectorize(math.erf, otypes=[np.float64])
_math_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def _mp_reference(fn):
    """``fn`` (an mpmath function) element by element, rounded to float64."""
    def ref(x):
        return np.array([float(fn(mpmath.mpf(float(v)))) for v in np.ravel(x)]).reshape(np.shape(x))
    return ref


_mp_lgamma = _mp_reference(lambda v: mpmath.log(abs(mpmath.gamma(v))))
_mp_digamma = _mp_reference(mpmath.digamma)
_mp_trigamma = _mp_reference(lambda v: mpmath.polygamma(1, v))
_mp_erfinv = _mp_reference(mpmath.erfinv)


def _ulps(actual, exact):
    """|actual - exact| in units of the last place of ``exact`` rounded to actual's dtype;
    0 where both agree exactly (infinities, NaNs, signed zeros included)."""
    exact = np.asarray(exact, np.float64)
    rounded = exact.astype(actual.dtype)
    same = (actual == rounded) | (np.isnan(actual) & np.isnan(rounded))
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.abs(actual.astype(np.float64) - exact) / np.spacing(np.abs(rounded)).astype(np.float64)
    return np.where(same, 0.0, err)


def _report(name, x, actual, exact):
    u = _ulps(actual, exact)
    worst = int(np.argmax(u))
    print(f"\n{name} ({actual.dtype}): max {u.max():.3g} ulp at x={x.ravel()[worst]!r}, "
          f"median {np.median(u):.2g}")
    return u.max()


def _grid(*parts):
    return np.unique(np.concatenate([np.asarray(p, np.float64).ravel() for p in parts]))


def _symmetric(values):
    return _grid(values, -np.asarray(values))


ERF_GRID = _symmetric(_grid(np.linspace(0, 7, 70001), np.geomspace(1e-308, 1, 3000),
                            np.geomspace(1, 30, 3000), [0.46875, 4.0, 5e-324, 1e300]))


# ---------------------------------------------------------------------------------------------
# erf, erfc against the C library (the previous element-by-element implementation)


@pytest.mark.parametrize("name, reference, bound", [("erf", _math_erf, 6), ("erfc", _math_erfc, 8)])
def test_erf_erfc_float64_against_the_c_library(name, reference, bound):
    x = ERF_GRID
    actual = getattr(special, name)(np, x)
    exact = reference(x)
    assert actual.dtype == np.float64
    normal = np.abs(exact) >= np.finfo(np.float64).tiny
    assert _report(name, x[normal], actual[normal], exact[normal]) <= bound
    # results in the subnormal range keep their absolute accuracy
    np.testing.assert_allclose(actual[~normal], exact[~normal], rtol=0, atol=1e-320)


@pytest.mark.parametrize("name, reference", [("erf", _math_erf), ("erfc", _math_erfc)])
def test_erf_erfc_float32_computes_in_float32_to_a_few_ulps(name, reference):
    with np.errstate(over="ignore"):
        x = ERF_GRID.astype(np.float32)
    actual = getattr(special, name)(np, x)
    assert actual.dtype == np.float32
    exact = reference(x.astype(np.float64))
    normal = np.abs(exact) >= np.finfo(np.float32).tiny
    assert _report(name, x[normal], actual[normal], exact[normal]) <= 10
    np.testing.assert_allclose(actual[~normal], exact[~normal], rtol=0, atol=1e-44)


def test_erf_erfc_agree_with_scipy():
    x = ERF_GRID
    np.testing.assert_allclose(special.erf(np, x), sps.erf(x), rtol=2e-15, atol=0)
    np.testing.assert_allclose(special.erfc(np, x), sps.erfc(x), rtol=1e-13, atol=1e-310)  # scipy's is the less exact


# ---------------------------------------------------------------------------------------------
# erfinv


def test_erfinv_float64_to_a_few_ulps():
    y = _symmetric(_grid(np.linspace(0, 1, 801)[:-1], 1 - np.geomspace(1.2e-16, 0.5, 300),
                         np.geomspace(1e-300, 0.5, 100)))
    actual = special.erfinv(np, y)
    exact = _mp_erfinv(y)
    assert _report("erfinv", y, actual, exact) <= 8
    np.testing.assert_allclose(actual, sps.erfinv(y), rtol=2e-15, atol=0)
    # and it inverts erf
    inside = np.abs(y) < 0.99
    np.testing.assert_allclose(_math_erf(actual[inside]), y[inside], rtol=2e-15, atol=1e-300)


def test_erfinv_float32_to_a_few_ulps():
    y = np.unique(_symmetric(_grid(np.linspace(0, 1, 20001)[:-1],
                                   1 - np.geomspace(6e-8, 0.5, 400))).astype(np.float32))
    y = y[np.abs(y) < 1]
    actual = special.erfinv(np, y)
    assert actual.dtype == np.float32
    assert _report("erfinv", y, actual, sps.erfinv(y.astype(np.float64))) <= 8


# ---------------------------------------------------------------------------------------------
# lgamma, digamma, trigamma against mpmath (Python's math.lgamma is itself off by up to 1e-11
# relative near lgamma's zeros at 1 and 2, so it is no reference there)

LGAMMA_GRID = _grid(np.linspace(0.01, 15, 1001), np.geomspace(1e-300, 1e-2, 200),
                    np.geomspace(15, 1e305, 150), [0.5, 0.6796875, 1.5, 4.0, 12.0],
                    1 + np.geomspace(1e-15, 0.3, 100), 1 - np.geomspace(1e-15, 0.3, 100),
                    2 + np.geomspace(1e-15, 0.3, 100), 2 - np.geomspace(1e-15, 0.3, 100))
NEGATIVE_GRID = -_grid(np.linspace(0.005, 30, 1001), np.geomspace(1e-300, 1e-2, 60),
                       np.geomspace(30, 1e15, 100) + 0.25)
NEGATIVE_GRID = NEGATIVE_GRID[NEGATIVE_GRID != np.floor(NEGATIVE_GRID)]


def test_lgamma_positive_float64_to_a_few_ulps():
    x = LGAMMA_GRID
    actual = special.lgamma(np, x)
    assert _report("lgamma", x, actual, _mp_lgamma(x)) <= 4


def test_lgamma_negative_float64():
    """Reflection: a few ulps, except near lgamma's zeros (where the result is the small
    difference of two larger terms): there the absolute error stays at the ulp of those."""
    x = NEGATIVE_GRID
    actual = special.lgamma(np, x)
    exact = _mp_lgamma(x)
    u = _ulps(actual, exact)
    away = np.abs(exact) > 0.1
    assert _report("lgamma x<0, |lgamma|>0.1", x[away], actual[away], exact[away]) <= 16
    scale = np.maximum(np.abs(exact), np.abs(special.lgamma(np, -x)))
    assert np.all(np.abs(actual - exact) <= 16 * np.spacing(scale)), u.max()


def test_digamma_float64_to_a_few_ulps_away_from_its_root():
    x = _grid(LGAMMA_GRID[LGAMMA_GRID < 1e200], NEGATIVE_GRID)
    actual = special.digamma(np, x)
    exact = _mp_digamma(x)
    away = np.abs(exact) > 1
    assert _report("digamma, |digamma|>1", x[away], actual[away], exact[away]) <= 8
    # near its zeros (x = 1.4616..., and one in each negative unit interval) the absolute
    # error is a few ulps of the terms summed
    reflection = np.where(x < 0, np.abs(np.pi / np.tan(np.pi * x)), 0.0)
    scale = np.maximum(1.0, np.abs(special.digamma(np, np.abs(x) + 1)) + 1 / np.abs(x) + reflection)
    assert np.all(np.abs(actual - exact) <= 16 * np.spacing(scale))


def test_trigamma_float64_to_a_few_ulps():
    x = _grid(LGAMMA_GRID[LGAMMA_GRID < 1e150][::4], NEGATIVE_GRID[NEGATIVE_GRID > -1e6][::4])
    actual = special.trigamma(np, x)
    exact = _mp_trigamma(x)
    assert _report("trigamma", x, actual, exact) <= 16


@pytest.mark.parametrize("name, reference", [
    ("lgamma", sps.gammaln), ("digamma", sps.psi), ("trigamma", lambda v: sps.polygamma(1, v))])
def test_gamma_family_float32_against_scipy(name, reference):
    x = np.unique(_grid(np.linspace(0.01, 40, 40001), np.geomspace(1e-30, 1e30, 2000),
                        -np.linspace(0.01, 20, 20001)).astype(np.float32))
    x = x[x != np.floor(x)]
    actual = getattr(special, name)(np, x)
    assert actual.dtype == np.float32
    exact = reference(x.astype(np.float64))
    # float32 evaluation: a few ulps, as absolute error near the functions' zeros
    representable = np.abs(exact) < np.finfo(np.float32).max
    actual, exact = actual[representable], exact[representable]
    err = np.abs(actual.astype(np.float64) - exact)
    scale = np.maximum(np.abs(exact), 1.0).astype(np.float32)
    assert np.all(err <= 16 * np.spacing(scale).astype(np.float64)), \
        _report(name, x[representable], actual, exact)


# ---------------------------------------------------------------------------------------------
# Special values, dtypes and shapes as torch gives them

SPECIAL_VALUES = [0.0, -0.0, 1.0, 2.0, -1.0, -2.0, -2.5, -1e-310, 1e-310, 1e300, -1e300,
                  -1e15 - 0.5, 3e38, np.inf, -np.inf, np.nan, 0.5, 1.0 - 2 ** -53,
                  1.5, 4.0, 12.0, 26.5, 28.0, -6.0, 27.2]
TORCH = {"erf": torch.erf, "erfc": torch.erfc, "erfinv": torch.erfinv, "lgamma": torch.lgamma,
         "digamma": torch.digamma}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(TORCH))
def test_special_values_match_torch(name, dtype):
    with np.errstate(over="ignore"):
        x = np.array(SPECIAL_VALUES).astype(dtype)
    actual = getattr(special, name)(np, x)
    expected = TORCH[name](torch.from_numpy(x)).numpy()
    exact = ~np.isfinite(expected) | (expected == 0)
    np.testing.assert_array_equal(actual[exact], expected[exact])
    signed = np.isinf(expected) | (expected == 0)
    np.testing.assert_array_equal(np.signbit(actual[signed]), np.signbit(expected[signed]))
    np.testing.assert_allclose(actual, expected, rtol=2e-6 if dtype == "float32" else 1e-13,
                               atol=1e-6 if dtype == "float32" else 1e-15)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_trigamma_special_values(dtype):
    """Like torch at 0, +-inf and nan; the poles at the negative integers give inf (torch
    evaluates sin(pi x) unreduced there and returns large finite values)."""
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, -3.0, 1e-30, 1e30], dtype)
    actual = special.trigamma(np, x)
    expected = torch.polygamma(1, torch.from_numpy(x)).numpy()
    np.testing.assert_array_equal(actual[:5], expected[:5])
    assert np.all(np.isposinf(actual[5:7]))
    np.testing.assert_allclose(actual[7:], expected[7:], rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(TORCH))
def test_float32_and_float64_match_torch_on_a_dense_grid(name, dtype):
    """Within the op table's tolerances (float32: atol 1e-5, rtol 1.3e-6)."""
    low, high = {"erfinv": (-0.9999, 0.9999), "lgamma": (-12, 30), "digamma": (-12, 30)}.get(name, (-6, 6))
    x = np.linspace(low, high, 100003).astype(dtype)
    if name in ("lgamma", "digamma"):
        x = x[(x > 0) | (np.abs(x - np.round(x)) > 1e-3)]
    actual = getattr(special, name)(np, x)
    expected = TORCH[name](torch.from_numpy(x)).numpy()
    atol, rtol = (1e-5, 1.3e-6) if dtype == "float32" else (1e-10, 1e-7)
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", sorted(TORCH) + ["trigamma"])
def test_shapes_and_half_precision(name):
    fn = getattr(special, name)
    zero_d = np.array(0.25)
    assert fn(np, zero_d).shape == () and fn(np, zero_d).dtype == np.float64
    assert fn(np, np.zeros((0, 3), np.float32)).shape == (0, 3)
    x = np.linspace(0.1, 0.9, 12).reshape(3, 4)
    strided = np.linspace(0.1, 0.9, 24).reshape(4, 6)[:, ::2].T
    np.testing.assert_array_equal(fn(np, strided), fn(np, np.ascontiguousarray(strided)))
    half = fn(np, x.astype(np.float16))
    assert half.dtype == np.float16
    np.testing.assert_allclose(half, fn(np, x), rtol=2e-3)
