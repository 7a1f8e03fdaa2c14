"""Special functions NumPy lacks (erf, erfc, erfinv, lgamma, digamma, trigamma).

On CuPy arrays they come from ``cupyx.scipy.special``; on NumPy arrays they are computed here:
erf, erfc and lgamma element by element with the C library's functions through ``math`` (exact
to double precision), erfinv by Giles' approximation polished with Newton steps on erf, and the
digamma family by recurrence plus asymptotic series.
"""
import math

import numpy as np

_erf = np.frompyfunc(math.erf, 1, 1)
_erfc = np.frompyfunc(math.erfc, 1, 1)
_lgamma = np.frompyfunc(lambda v: math.lgamma(v) if v > 0 or v != math.floor(v) else math.inf, 1, 1)


def _is_numpy(xp):
    return xp is np


def _cupy_special(name):
    import cupyx.scipy.special as sp
    return getattr(sp, name)


def _elementwise(fn, x):
    return np.asarray(fn(x.astype(np.float64)), dtype=np.float64).astype(x.dtype)


def erf(xp, x):
    if not _is_numpy(xp):
        return _cupy_special("erf")(x)
    return _elementwise(_erf, x)


def erfc(xp, x):
    if not _is_numpy(xp):
        return _cupy_special("erfc")(x)
    return _elementwise(_erfc, x)


def lgamma(xp, x):
    if not _is_numpy(xp):
        return _cupy_special("gammaln")(x)
    return _elementwise(_lgamma, x)


def erfinv(xp, x):
    if not _is_numpy(xp):
        return _cupy_special("erfinv")(x)
    y = x.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = -np.log((1.0 - y) * (1.0 + y))
        small = w < 5.0
        ws = w - 2.5
        p_small = 2.81022636e-08
        for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
                  -0.00417768164, 0.246640727, 1.50140941):
            p_small = c + p_small * ws
        wl = np.sqrt(w) - 3.0
        p_large = -0.000200214257
        for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
                  0.00943887047, 1.00167406, 2.83297682):
            p_large = c + p_large * wl
        r = np.where(small, p_small, p_large) * y
        # two Newton steps on erf(r) = y bring it to double precision
        two_over_sqrt_pi = 2.0 / math.sqrt(math.pi)
        for _ in range(2):
            err = np.asarray(_erf(r), dtype=np.float64) - y
            r = r - err / (two_over_sqrt_pi * np.exp(-r * r))
        r = np.where(y == 1, np.inf, np.where(y == -1, -np.inf, r))
        r = np.where(np.abs(y) > 1, np.nan, r)
    return r.astype(x.dtype)


def digamma(xp, x):
    if not _is_numpy(xp):
        return _cupy_special("digamma")(x)
    v = x.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.zeros_like(v)
        # reflection for negative arguments: psi(1-x) - psi(x) = pi cot(pi x)
        neg = v < 0
        w = np.where(neg, 1.0 - v, v)
        shift = np.zeros_like(w)
        while True:
            low = w < 6.0
            if not low.any():
                break
            shift = shift - np.where(low, 1.0 / np.where(low, w, 1.0), 0.0)
            w = np.where(low, w + 1.0, w)
        inv = 1.0 / w
        inv2 = inv * inv
        series = np.log(w) - 0.5 * inv - inv2 * (1.0 / 12 - inv2 * (1.0 / 120 - inv2 * (
            1.0 / 252 - inv2 * (1.0 / 240 - inv2 * (1.0 / 132)))))
        out = series + shift
        out = np.where(neg, out - np.pi / np.tan(np.pi * v), out)
        # poles at 0 and the negative integers (torch gives -inf at 0, nan below)
        out = np.where(v == 0, -np.inf, out)
        out = np.where((v < 0) & (v == np.floor(v)), np.nan, out)
    return out.astype(x.dtype)


def trigamma(xp, x):
    if not _is_numpy(xp):
        return _cupy_special("polygamma")(1, x)
    v = x.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        neg = v < 0
        w = np.where(neg, 1.0 - v, v)
        acc = np.zeros_like(w)
        while True:
            low = w < 6.0
            if not low.any():
                break
            acc = acc + np.where(low, 1.0 / np.where(low, w * w, 1.0), 0.0)
            w = np.where(low, w + 1.0, w)
        inv = 1.0 / w
        inv2 = inv * inv
        series = inv + inv2 / 2 + inv * inv2 * (1.0 / 6 - inv2 * (1.0 / 30 - inv2 * (
            1.0 / 42 - inv2 * (1.0 / 30 - inv2 * (5.0 / 66)))))
        out = series + acc
        # reflection: psi1(1-x) + psi1(x) = pi^2 / sin^2(pi x)
        out = np.where(neg, -out + (np.pi / np.sin(np.pi * v)) ** 2, out)
    return out.astype(x.dtype)
