"""Hurwitz's zeta function, polygamma and the regularized incomplete gamma functions,
vectorised over NumPy (CuPy arrays go to ``cupyx.scipy.special``), computed in float64.

- zeta(x, q) = sum over k >= 0 of (q + k)^-x: the first terms summed directly until q + k > 9
  (and at least nine of them), then the Euler-Maclaurin remainder with twelve Bernoulli terms.
  As torch (and Cephes): inf at x = 1 and at q a non-positive integer, nan for x < 1 and for
  q < 0 with a non-integer x.
- polygamma(n, x) = (-1)^(n+1) n! zeta(n + 1, x) for n >= 2 (digamma and trigamma below).
- gammainc P(a, x) and gammaincc Q(a, x): the power series of P where x < a + 1 (or x < 1),
  Legendre's continued fraction of Q (modified Lentz) elsewhere, both iterated until every
  element has converged; the prefactor ``x^a e^-x / Gamma(a)`` as ``exp(a log x - x -
  lgamma(a))``, whose rounding grows with ``a`` (about ``a log a`` ulps).
"""
import math
from fractions import Fraction

import numpy as np

from . import namespace_of, special as _s

_EPS = np.finfo(np.float64).eps
# the incomplete gamma functions' relative tolerance for results in float32 or lower: their
# rounding to float32 did not change from float64's tolerance on 270,000 arguments in (0, 30)
# and (e^-10, e^6)
SINGLE_EPS = 1e-13


def _bernoulli(count):
    """B_2, B_4, ..., B_2count as Fractions (Akiyama-Tanigawa)."""
    n_max = 2 * count
    a = [Fraction(0)] * (n_max + 1)
    out = []
    for m in range(n_max + 1):
        a[m] = Fraction(1, m + 1)
        for j in range(m, 0, -1):
            a[j - 1] = j * (a[j - 1] - a[j])
        if m >= 2 and m % 2 == 0:
            out.append(a[0])
    return out


# B_2j / (2j)!, j = 1..12
_EULER_MACLAURIN = [float(b / math.factorial(2 * j)) for j, b in enumerate(_bernoulli(12), 1)]


_MAX_DIRECT_TERMS = 100000


def _zeta(x, q):
    """Hurwitz's zeta of float64 arrays of one backend (NumPy's or CuPy's), as torch defines it at the edges."""
    xp = namespace_of(x)
    x, q = xp.broadcast_arrays(x, q)
    x = x.astype(xp.float64)
    q = q.astype(xp.float64)
    total = xp.zeros(x.shape)
    a = q.copy()
    # direct terms: q + k for k = 0.. while q + k <= 9 or fewer than nine were taken
    finite_q = q[xp.isfinite(q)]
    lowest = max(min(float(finite_q.min()), 9.0) if finite_q.size else 9.0, -_MAX_DIRECT_TERMS)
    steps = max(9, int(math.ceil(9.0 - lowest)) + 1)
    need = xp.ones(x.shape, bool)
    for k in range(steps):
        term = xp.where(need, a ** -x, 0.0)
        total += term
        a = xp.where(need, a + 1.0, a)
        need = need & ((k + 1 < 9) | (a <= 9.0))
    # Euler-Maclaurin remainder at a
    rest = a ** (1.0 - x) / (x - 1.0) + 0.5 * a ** -x
    factor = x * a ** (-x - 1.0)   # x (x+1) ... (x+2j-2) a^(-x-2j+1)
    correction = xp.zeros(x.shape)
    for j, coeff in enumerate(_EULER_MACLAURIN):
        correction += coeff * factor
        factor = factor * (x + 2 * j + 1) * (x + 2 * j + 2) / (a * a)
    out = total + rest + correction
    # the edges in torch's order of precedence (the last applied wins)
    out = xp.where(q == math.inf, math.nan, out)
    out = xp.where(x == math.inf, xp.where(q == 1, 1.0, xp.where(q < 1, math.inf, math.nan)), out)
    nonpositive = q <= 0
    out = xp.where(nonpositive & (x != xp.floor(x)), math.nan, out)
    out = xp.where(nonpositive & (q == xp.floor(q)), math.inf, out)
    out = xp.where(x < 1.0, math.nan, out)
    return xp.where(x == 1.0, math.inf, out)


def _as_arrays(*arrays):
    return [np.asarray(a, dtype=np.float64) for a in arrays]


def _on_loop(name, numpy):
    """``numpy(a, b)`` of two float64 arrays, or ``special_loops``' compiled loop for ``name``
    (the same arithmetic in C, each element iterating until it has converged)."""
    choice = _s.on_compiled_loop(name, lambda xp, a, b: numpy(a, b), loop="two_arguments")

    def kernel(a, b):
        return choice(np, a, b) if a.size and b.size else numpy(a, b)
    return kernel


# Hurwitz's zeta takes the compiled loop below this many elements: above, NumPy's vectorized
# pow makes its passes faster than the loop's scalar one (``benchmarks.ops --only special_zeta``)
ZETA_LOOP_MAX_ELEMENTS = 1 << 12

_zeta_on_loop = _on_loop("zeta", _zeta)


def _zeta_kernel(x, q):
    if max(x.size, q.size) < ZETA_LOOP_MAX_ELEMENTS:
        return _zeta_on_loop(x, q)
    return _zeta(x, q)


def zeta(xp, x, q):
    """Hurwitz's zeta of arrays ``x`` and ``q`` (broadcast; ``q`` may be a number), in float64."""
    if not _s._is_numpy(xp):
        return _zeta(x.astype(xp.float64), xp.asarray(q, dtype=xp.float64))
    with np.errstate(all="ignore"):
        return _zeta_kernel(*_as_arrays(x, q))


def polygamma_factor(n):
    """``(-1)**(n + 1) n!``: polygamma(n, x) is it times zeta(n + 1, x) for n >= 2 (OverflowError
    beyond n = 170)."""
    return (-1.0 if n % 2 == 0 else 1.0) * math.exp(math.lgamma(n + 1))


def polygamma(xp, n, x):
    """polygamma(n, x) for n >= 2, in float64."""
    if not _s._is_numpy(xp):
        return polygamma_factor(n) * _zeta(xp.asarray(float(n + 1)), x.astype(xp.float64))
    with np.errstate(all="ignore"):
        return polygamma_factor(n) * _zeta_kernel(np.asarray(float(n + 1)), np.asarray(x, np.float64))


# -- the incomplete gamma functions ---------------------------------------------------------

_MAX_ITERATIONS = 5000


def _log_prefactor(a, x):
    """log(x^a e^-x / Gamma(a))."""
    return a * np.log(x) - x - _s._lgamma(a)


def _lower_series(a, x, eps):
    """P(a, x) by its power series: prefactor / a * sum x^n / ((a+1)...(a+n)), until a term is
    at most eps of the sum."""
    term = np.ones_like(x)
    total = np.ones_like(x)
    denominator = a.copy()
    active = np.ones(x.shape, bool)
    for _ in range(_MAX_ITERATIONS):
        denominator = denominator + 1.0
        term = np.where(active, term * (x / denominator), 0.0)
        total += term
        active = active & (term > total * eps)
        if not active.any():
            break
    return np.exp(_log_prefactor(a, x)) * total / a


# the continued fraction's convergents are scaled by FRACTION_SCALE (exactly) beyond FRACTION_BIG
FRACTION_BIG = 2.0 ** 500
FRACTION_SCALE = 2.0 ** -500


def _upper_fraction(a, x, eps):
    """Q(a, x) by Legendre's continued fraction ``1 / (b0 + a1 / (b1 + a2 / (b2 + ...)))``,
    ``b_n = x + 1 - a + 2n``, ``a_n = -n (n - a)``: its convergents ``h = B / A`` by the
    recurrences of their numerators and denominators, until h changes by at most eps of
    itself."""
    b = x + 1.0 - a
    numerator, numerator_before = b.copy(), np.ones_like(x)
    denominator, denominator_before = np.ones_like(x), np.zeros_like(x)
    h = denominator / numerator
    active = np.ones(x.shape, bool)
    for i in range(1, _MAX_ITERATIONS):
        an = -i * (i - a)
        b = b + 2.0
        numerator, numerator_before = b * numerator + an * numerator_before, numerator
        denominator, denominator_before = b * denominator + an * denominator_before, denominator
        scale = np.where(np.abs(numerator) > FRACTION_BIG, FRACTION_SCALE, 1.0)
        numerator, numerator_before = numerator * scale, numerator_before * scale
        denominator, denominator_before = denominator * scale, denominator_before * scale
        next_h = denominator / numerator
        converged = ~(np.abs(next_h - h) > eps * np.abs(next_h))
        h = np.where(active, next_h, h)
        active = active & ~converged
        if not active.any():
            break
    return np.exp(_log_prefactor(a, x)) * h


def _incomplete(a, x, upper, eps=_EPS):
    a, x = np.broadcast_arrays(*_as_arrays(a, x))
    shape = a.shape
    a = np.ascontiguousarray(a).reshape(-1)
    x = np.ascontiguousarray(x).reshape(-1)
    out = np.full(a.shape, math.nan)
    regular = (a > 0) & (x > 0) & np.isfinite(a) & np.isfinite(x)
    by_series = regular & ((x < a + 1.0) | (x < 1.0))
    by_fraction = regular & ~by_series
    for mask, fn in ((by_series, _lower_series), (by_fraction, _upper_fraction)):
        index = np.flatnonzero(mask)
        if index.size:
            value = fn(a[index], x[index], eps)
            from_series = fn is _lower_series
            out[index] = (1.0 - value) if from_series == upper else value
    # edges, as torch: negative arguments give nan; P(0, x > 0) = 1, P(a, 0) = 0, P(inf, x) = 0,
    # P(a, inf) = 1 (a NaN other argument included), P(0, 0) and P(inf, inf) are nan
    defined = ~((a < 0) | (x < 0))
    p_zero = defined & (((x == 0) & ~(a <= 0)) | ((a == math.inf) & (x != math.inf)))
    p_one = defined & (((a == 0) & (x > 0)) | ((x == math.inf) & (a != math.inf)))
    out = np.where(p_zero, 1.0 if upper else 0.0, out)
    out = np.where(p_one, 0.0 if upper else 1.0, out)
    return out.reshape(shape)


# op name -> (whether the upper function, the tolerance): float64's, and for results in float32
# or lower SINGLE_EPS
INCOMPLETE_GAMMA = {"gammainc": (False, _EPS), "gammaincc": (True, _EPS),
                    "gammainc_single": (False, SINGLE_EPS), "gammaincc_single": (True, SINGLE_EPS)}
_incomplete_kernels = {name: _on_loop(name, lambda a, x, upper=upper, eps=eps: _incomplete(a, x, upper, eps))
                       for name, (upper, eps) in INCOMPLETE_GAMMA.items()}


def _incomplete_kernel(name, a, x):
    """The kernel ``name`` of ``a`` and ``x`` in float64, to the tolerance of their precision."""
    single = np.result_type(a, x) != np.float64
    with np.errstate(all="ignore"):
        return _incomplete_kernels[name + "_single" if single else name](*_as_arrays(a, x))


def gammainc(xp, a, x):
    if not _s._is_numpy(xp):
        return _s._cupy_special("gammainc")(a, x)
    return _incomplete_kernel("gammainc", a, x)


def gammaincc(xp, a, x):
    if not _s._is_numpy(xp):
        return _s._cupy_special("gammaincc")(a, x)
    return _incomplete_kernel("gammaincc", a, x)
