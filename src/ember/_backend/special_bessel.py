"""Bessel and Airy functions of a real argument, vectorised over any array namespace ``xp``.

Every function computes in float64 and returns the input's dtype, but for float32's ``i1e``,
which computes in float32 (``special_loops.I1E_FLOAT32_TERMS``). Methods:

- J0, J1, Y0, Y1: on [0, 8], Chebyshev expansions in ``x^2`` of J0, J1 / x and of the regular
  parts ``Y0 - (2/pi) log(x) J0`` and ``(Y1 - (2/pi)(log(x) J1 - 1/x)) / x``; beyond 8, Hankel's
  form ``sqrt(2/(pi x)) (P cos chi - Q sin chi)`` with the amplitudes P and Q as Chebyshev
  expansions in ``(8/x)^2``, and ``cos chi``, ``sin chi`` from ``cos x`` and ``sin x`` (no
  rounded ``x - pi/4``).
- I0, I1 (and their scalings by ``exp(-|x|)``): on [0, 8], Chebyshev expansions of ``e^-x I0(x)``
  and ``e^-x I1(x) / x``; beyond, of ``sqrt(x) e^-x I(x)`` in ``8/x``.
- K0, K1 (and their scalings by ``exp(x)``): the series in I0, I1 and ``log(x/2)`` up to x = 2;
  beyond, ``sqrt(x) e^x K(x)`` as a Chebyshev expansion in ``2/x``.
- Ai: a Chebyshev expansion on [-3, 2]; beyond, the asymptotic forms with their amplitudes as
  Chebyshev expansions in ``1/zeta``, ``zeta = (2/3)|x|^(3/2)``.
- spherical j0: ``sin(x) / x`` (1 at 0).

The expansions are computed by ``scripts/fit_special_chebyshev.py`` (``special_chebyshev.py``).
Values at infinities, zeros and negative arguments follow torch's.
"""
import math

import numpy as np

from . import special, special_chebyshev as tables, special_loops

_TWO_OVER_PI = 2.0 / math.pi
_EULER = 0.57721566490153286061
_SERIES_TERMS = 48


def _chebyshev(xp, t, table):
    """Clenshaw's sum of the expansion ``table`` (coefficients, (a, b)) at ``t``."""
    coeffs, (a, b) = table
    s = (2.0 * t - (a + b)) / (b - a)
    two_s = 2.0 * s
    b1 = xp.zeros_like(s)
    b2 = xp.zeros_like(s)
    for c in coeffs[:0:-1]:
        b1, b2 = two_s * b1 - b2 + c, b1
    return s * b1 - b2 + coeffs[0]


def _float64(x):
    return x.astype(np.float64)


def _finish(x, out):
    return out.astype(x.dtype, copy=False)


def _compute(fn, float32=None):
    """``fn(xp, w)`` on the float64 copy ``w`` of ``x`` (``float32(xp, x)`` of a float32 ``x``
    where given), returned in ``x``'s dtype; a float32 or float64 NumPy array on
    ``special_loops``' compiled loop for the function."""
    name = fn.__name__.lstrip("_")

    def on_arrays(xp, x):
        with np.errstate(all="ignore"):
            if float32 is not None and x.dtype == np.float32:
                return float32(xp, x)
            return _finish(x, fn(xp, _float64(x)))
    choice = special.on_compiled_loop(name, on_arrays)

    def kernel(xp, x):
        return choice(xp, x) if special_loops.applies(x) else on_arrays(xp, x)
    kernel.__name__ = name
    kernel.__doc__ = fn.__doc__
    kernel.compiled_loop = ("special", name)   # (float32 and float64 arrays, at every size)
    return kernel


# -- J0, J1, Y0, Y1 --------------------------------------------------------------------------

def _hankel(xp, ax, p_table, q_table, order):
    """(sqrt(2/(pi x)) P, sqrt(2/(pi x)) Q, cos chi, sin chi) for x >= 8."""
    safe = xp.maximum(ax, 8.0)
    w = (8.0 / safe) ** 2
    scale = xp.sqrt(_TWO_OVER_PI / safe)
    p = _chebyshev(xp, w, p_table) * scale
    q = _chebyshev(xp, w, q_table) * (8.0 / safe) * scale
    c, s = xp.cos(safe), xp.sin(safe)
    root_half = math.sqrt(0.5)
    if order == 0:   # chi = x - pi/4
        return p, q, (c + s) * root_half, (s - c) * root_half
    return p, q, (s - c) * root_half, -(s + c) * root_half   # chi = x - 3 pi/4


def _bessel_j0(xp, x):
    ax = xp.abs(x)
    small = _chebyshev(xp, xp.minimum(ax, 8.0) ** 2, tables.J0_SMALL)
    p, q, c, s = _hankel(xp, ax, tables.P0, tables.Q0, 0)
    out = xp.where(ax <= 8.0, small, p * c - q * s)
    return xp.where(xp.isinf(x), math.nan, out)


def _bessel_j1(xp, x):
    ax = xp.abs(x)
    small = x * _chebyshev(xp, xp.minimum(ax, 8.0) ** 2, tables.J1_SMALL)
    p, q, c, s = _hankel(xp, ax, tables.P1, tables.Q1, 1)
    large = xp.where(x < 0, -1.0, 1.0) * (p * c - q * s)
    return xp.where(xp.isinf(x), math.nan, xp.where(ax <= 8.0, small, large))


def _y_domain(xp, x, out):
    """Y's values off (0, inf): -inf at zero, nan below zero and at inf."""
    out = xp.where(x == 0, -math.inf, out)
    return xp.where((x < 0) | xp.isinf(x), math.nan, out)


def _bessel_y0(xp, x):
    small_x = xp.minimum(x, 8.0)
    small = _chebyshev(xp, small_x ** 2, tables.Y0_SMALL) + \
        _TWO_OVER_PI * xp.log(small_x) * _chebyshev(xp, small_x ** 2, tables.J0_SMALL)
    p, q, c, s = _hankel(xp, x, tables.P0, tables.Q0, 0)
    return _y_domain(xp, x, xp.where(x <= 8.0, small, p * s + q * c))


def _bessel_y1(xp, x):
    sx = xp.minimum(x, 8.0)
    j1 = sx * _chebyshev(xp, sx ** 2, tables.J1_SMALL)
    small = sx * _chebyshev(xp, sx ** 2, tables.Y1_SMALL) + _TWO_OVER_PI * (xp.log(sx) * j1 - 1.0 / sx)
    p, q, c, s = _hankel(xp, x, tables.P1, tables.Q1, 1)
    return _y_domain(xp, x, xp.where(x <= 8.0, small, p * s + q * c))


# -- I0, I1 ----------------------------------------------------------------------------------

_I_SERIES_TO = 20.0
_I_CHEBYSHEV_TO = 8.0


def _i_series(xp, ax, order):
    """sum (x^2/4)^k / (k! (k + order)!) on |x| <= 20 (times x/2 for order 1 by the caller): K0
    and K1's series take it on (0, 2]."""
    q = xp.minimum(ax, _I_SERIES_TO) ** 2 / 4.0
    term = xp.ones_like(q) if order == 0 else xp.ones_like(q)
    total = term.copy()
    for k in range(1, _SERIES_TERMS):
        term = term * q / (k * (k + order))
        total = total + term
    return total


def _i_abs_scaled(xp, ax, order):
    """e^-x I_order(x) of x = |x|: on [0, 8] from the expansions of e^-x I0(x) and
    e^-x I1(x) / x, beyond from that of sqrt(x) e^-x I(x) in 8/x (0 at inf)."""
    m = xp.minimum(ax, _I_CHEBYSHEV_TO)
    small = _chebyshev(xp, m, tables.I0E_SMALL) if order == 0 else m * _chebyshev(xp, m, tables.I1E_SMALL)
    w = xp.maximum(ax, _I_CHEBYSHEV_TO)
    large = _chebyshev(xp, _I_CHEBYSHEV_TO / w, tables.I0E_LARGE if order == 0 else tables.I1E_LARGE) / xp.sqrt(w)
    return xp.where(ax <= _I_CHEBYSHEV_TO, small, large)


def _i_scaled(xp, x, order):
    """e^-|x| I_order(x)."""
    out = _i_abs_scaled(xp, xp.abs(x), order)
    return out if order == 0 else xp.where(x < 0, -out, out)


def _i(xp, x, order):
    """I_order(x): the scaled value times e^|x| (inf beyond float64's exp, nan at +-inf)."""
    ax = xp.abs(x)
    out = _i_abs_scaled(xp, ax, order) * xp.exp(ax)
    if order == 1:
        out = xp.where(x < 0, -out, out)
    out = xp.where(x == 0, 0.0 if order else 1.0, out)   # +0 for I1(-0), as torch
    return xp.where(xp.isinf(x), math.nan, out)


def _i0(xp, x):
    return _i(xp, x, 0)


def _i1(xp, x):
    return _i(xp, x, 1)


def _i0e(xp, x):
    return _i_scaled(xp, x, 0)


def _i1e(xp, x):
    return _i_scaled(xp, x, 1)


def _first_terms(name):
    coefficients, interval = getattr(tables, name)
    return coefficients[:special_loops.I1E_FLOAT32_TERMS[name]], interval


def _i1e_float32(xp, x):
    """float32's e^-|x| I1(x), as torch computes it: in float32, on the first terms of the two
    expansions (``special_loops.I1E_FLOAT32_TERMS``)."""
    ax = xp.abs(x)
    m = xp.minimum(ax, _I_CHEBYSHEV_TO)
    small = m * _chebyshev(xp, m, _first_terms("I1E_SMALL"))
    w = xp.maximum(ax, _I_CHEBYSHEV_TO)
    large = _chebyshev(xp, _I_CHEBYSHEV_TO / w, _first_terms("I1E_LARGE")) / xp.sqrt(w)
    out = xp.where(ax <= _I_CHEBYSHEV_TO, small, large)
    return xp.where(x < 0, -out, out)


# -- K0, K1 ----------------------------------------------------------------------------------

def _k_small(xp, x, order):
    """K_order(x) on 0 < x <= 2 from the series in log(x/2), I_order and harmonic numbers."""
    x = xp.minimum(x, 2.0)
    q = x * x / 4.0
    log_half = xp.log(x / 2.0)
    term = xp.ones_like(x)
    if order == 0:
        total = xp.zeros_like(x)     # sum q^k / (k!)^2 H_k
        harmonic = 0.0
        for k in range(1, 30):
            term = term * q / (k * k)
            harmonic += 1.0 / k
            total = total + term * harmonic
        return -(log_half + _EULER) * _i_series(xp, x, 0) + total
    # K1 = 1/x + log(x/2) I1 - (x/4) sum q^k / (k! (k+1)!) (psi(k+1) + psi(k+2))
    harmonic = 0.0
    total = (1.0 - 2.0 * _EULER) * term
    for k in range(1, 30):
        term = term * q / (k * (k + 1))
        harmonic += 1.0 / k
        total = total + term * (2.0 * harmonic + 1.0 / (k + 1) - 2.0 * _EULER)
    return 1.0 / x + log_half * (x / 2.0) * _i_series(xp, x, 1) - x / 4.0 * total


def _k_large_scaled(xp, x, table):
    """e^x K(x) for x >= 2."""
    safe = xp.maximum(x, 2.0)
    return _chebyshev(xp, 2.0 / safe, table) / xp.sqrt(safe)


def _k_domain(xp, x, out, at_inf):
    out = xp.where(x == 0, math.inf, out)
    out = xp.where(x == math.inf, at_inf, out)
    return xp.where(x < 0, math.nan, out)


def _modified_bessel_k0(xp, x):
    large = _k_large_scaled(xp, x, tables.K0E_LARGE) * xp.exp(-xp.maximum(x, 2.0))
    return _k_domain(xp, x, xp.where(x <= 2.0, _k_small(xp, x, 0), large), 0.0)


def _modified_bessel_k1(xp, x):
    large = _k_large_scaled(xp, x, tables.K1E_LARGE) * xp.exp(-xp.maximum(x, 2.0))
    return _k_domain(xp, x, xp.where(x <= 2.0, _k_small(xp, x, 1), large), 0.0)


def _scaled_modified_bessel_k0(xp, x):
    small = _k_small(xp, x, 0) * xp.exp(xp.minimum(x, 2.0))
    large = _k_large_scaled(xp, x, tables.K0E_LARGE)
    return _k_domain(xp, x, xp.where(x <= 2.0, small, large), 0.0)


def _scaled_modified_bessel_k1(xp, x):
    small = _k_small(xp, x, 1) * xp.exp(xp.minimum(x, 2.0))
    large = _k_large_scaled(xp, x, tables.K1E_LARGE)
    return _k_domain(xp, x, xp.where(x <= 2.0, small, large), 0.0)


# -- Airy Ai, spherical j0 -----------------------------------------------------------------

_ZETA2 = 2.0 / 3.0 * 2.0 ** 1.5
_ZETA3 = 2.0 / 3.0 * 3.0 ** 1.5


def _airy_ai(xp, x):
    middle = _chebyshev(xp, xp.clip(x, -3.0, 2.0), tables.AI_MIDDLE)
    xpos = xp.maximum(x, 2.0)
    zeta = 2.0 / 3.0 * xpos * xp.sqrt(xpos)
    positive = _chebyshev(xp, _ZETA2 / zeta, tables.AI_POSITIVE) * xp.exp(-zeta) / (
        2.0 * math.sqrt(math.pi) * xp.sqrt(xp.sqrt(xpos)))
    xneg = xp.maximum(-x, 3.0)
    zeta = 2.0 / 3.0 * xneg * xp.sqrt(xneg)
    u = _ZETA3 / zeta
    f = _chebyshev(xp, u, tables.AI_NEGATIVE_F)
    g = _chebyshev(xp, u, tables.AI_NEGATIVE_G)
    # sin and cos of zeta + pi/4
    s, c = xp.sin(zeta), xp.cos(zeta)
    root_half = math.sqrt(0.5)
    negative = ((s + c) * root_half * f - (c - s) * root_half * g) / (
        math.sqrt(math.pi) * xp.sqrt(xp.sqrt(xneg)))
    out = xp.where(x > 2.0, positive, xp.where(x < -3.0, negative, middle))
    return xp.where(xp.isinf(x), math.nan, out)


def _spherical_bessel_j0(xp, x):
    out = xp.where(x == 0, 1.0, xp.sin(x) / xp.where(x == 0, 1.0, x))
    return xp.where(xp.isinf(x), 0.0, out)


bessel_j0 = _compute(_bessel_j0)
bessel_j1 = _compute(_bessel_j1)
bessel_y0 = _compute(_bessel_y0)
bessel_y1 = _compute(_bessel_y1)
i0 = _compute(_i0)
i1 = _compute(_i1)
i0e = _compute(_i0e)
i1e = _compute(_i1e, _i1e_float32)
modified_bessel_k0 = _compute(_modified_bessel_k0)
modified_bessel_k1 = _compute(_modified_bessel_k1)
scaled_modified_bessel_k0 = _compute(_scaled_modified_bessel_k0)
scaled_modified_bessel_k1 = _compute(_scaled_modified_bessel_k1)
airy_ai = _compute(_airy_ai)
spherical_bessel_j0 = _compute(_spherical_bessel_j0)
