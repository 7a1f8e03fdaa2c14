"""The scaled complementary error function and the normal distribution's functions: erfcx,
ndtri, log_ndtr, vectorised over NumPy (CuPy arrays go to ``cupyx.scipy.special``).

- erfcx ``exp(x^2) erfc(x)``: W. J. Cody's rational approximations of erfc (``special.py``)
  without their ``exp(-x^2)`` factor for x > 0.46875; ``exp(x^2) erfc(x)`` below, and
  ``2 exp(x^2) - erfcx(-x)`` for x < -0.46875 (``exp(x^2)`` split so that its large part is
  exact).
- ndtri: ``-sqrt(2) erfcinv(2p)`` for p < 1/2 and ``-ndtri(1 - p)`` above (``1 - p`` is exact
  there); erfcinv's first guess is Giles' erfinv (or the tail's asymptotic form), polished by
  Newton steps on ``erf(r) = 1 - y`` where y >= 1/2 and on ``log erfc(r) = log y`` below: two
  for float64, one for the lower precisions.
- log_ndtr: ``log1p(-erfc(x / sqrt 2) / 2)`` for x > -1, ``log(erfcx(-x / sqrt 2) / 2) - x^2/2``
  below (no underflow).
"""
import math

import numpy as np

from . import special as _s

_SQRT_HALF = math.sqrt(0.5)
_SQRT2 = math.sqrt(2.0)


def _erfcx_positive(y):
    """erfcx of y >= 0."""
    small, mid, large = _s._erf_ranges(y)

    def near_zero(v):
        return np.exp(v * v) * _s._erfc(v)

    def far(v):
        w = np.minimum(v, 1e300)   # 1/(v sqrt(pi)) to the end; inf gives 0
        t = 1.0 / (w * w)
        r = _s._rational(t, _s._ERFC_P, _s._ERFC_Q)
        r *= t
        return np.where(np.isinf(v), 0.0, (_s._INV_SQRT_PI - r) / w)

    return _s._by_ranges(y, [(small, near_zero), (mid, lambda v: _s._rational(v, _s._ERFC_C, _s._ERFC_D)),
                             (large, far)])


def _exp_square(y):
    """exp(y*y) with y*y split as s*s + (y - s)(y + s), s = trunc(16 y)/16."""
    s = np.trunc(y * 16.0) / 16.0
    return np.where(np.isinf(y), math.inf, np.exp(s * s) * np.exp((y - s) * (y + s)))


def _erfcx(x):
    negative = x < -_s._ERF_SMALL
    return _s._by_ranges(x, [
        (negative, lambda v: 2.0 * _exp_square(v) - _erfcx_positive(-v)),
        (~negative, lambda v: np.where(v < 0, np.exp(v * v) * _s._erfc(v), _erfcx_positive(np.abs(v))))])


def _on_loop(name, fn, whole=False):
    """The kernel ``name``: ``fn`` by ``_float64_kernel`` (or ``fn`` of the array itself, where
    ``whole``), float32 and float64 NumPy arrays on ``special_loops``' compiled loop for it (the
    same arithmetic in C)."""
    def numpy_path(x):
        return fn(x) if whole else _float64_kernel(fn, x)
    choice = _s.on_compiled_loop(name, lambda xp, x: numpy_path(x))

    def kernel(xp, x):
        if not _s._is_numpy(xp):
            return _s._cupy_special(name)(x)
        if _s._applies(x):
            return choice(xp, x)
        return numpy_path(x)
    kernel.__name__ = name
    kernel.compiled_loop = ("special", name)   # (float32 and float64 arrays, at every size)
    return kernel


erfcx = _on_loop("erfcx", _erfcx)


# Newton steps after the first guess: it is good to about 1e-8 (Giles' single-precision
# erfinv), one step takes that to about 1e-16, which float32 rounds correctly, and a second
# takes float64 to the last bit or two; more steps only move the last bit about
NDTRI_NEWTON_STEPS = {"float32": 1, "float64": 2}
# erfc(r) = y below this takes the tail's first guess (Giles' polynomials end here)
NDTRI_FAR = 1e-7


def _far_guess(y):
    """r with erfc(r) ~ y for y < NDTRI_FAR: the asymptotic ``erfc(r) ~ exp(-r^2) / (r sqrt(pi))
    * (1 - 1/(2 r^2))`` by three fixed-point steps on ``r^2``."""
    minus_log = -np.log(y)
    r2 = minus_log
    for _ in range(3):
        r2 = minus_log - 0.5 * np.log(math.pi * r2) + np.log1p(-0.5 / r2)
    return np.sqrt(r2)


def _erfcinv_below_one(y, steps):
    """r > 0 with erfc(r) = y, for 0 < y < 1, by ``steps`` Newton steps on ``erf(r) = 1 - y``
    where y >= 1/2 and on ``log erfc(r) = log y`` below."""
    upper = y >= 0.5
    a = 1.0 - y   # exact where y >= 1/2
    far = y < NDTRI_FAR
    r = _s._by_ranges(y, [(far, _far_guess), (~far, lambda v: _s._giles(1.0 - v))])
    log_y = np.log(y)
    for _ in range(steps):
        slope = _s._TWO_OVER_SQRT_PI * np.exp(-(r * r))
        c = _s._erfc(r)
        residual = np.where(upper, _s._erf(r) - a, (log_y - np.log(c)) * c)
        r = r - residual / slope
    return r


def _ndtri(p, steps):
    lower = p < 0.5
    q = np.where(lower, p, 1.0 - p)   # <= 1/2
    inside = (q > 0) & (p == p)
    r = np.zeros_like(p)
    index = np.flatnonzero(inside)
    if index.size:
        r.put(index, _erfcinv_below_one(2.0 * q.reshape(-1).take(index), steps))
    out = np.where(lower, -_SQRT2 * r, _SQRT2 * r)
    out = np.where(p == 0, -math.inf, np.where(p == 1, math.inf, out))
    return np.where((p < 0) | (p > 1) | np.isnan(p), math.nan, out)


def _ndtri_of_dtype(x):
    """ndtri of ``x``, float64 by two Newton steps and the lower precisions by one."""
    steps = NDTRI_NEWTON_STEPS["float64" if x.dtype == np.float64 else "float32"]
    return _float64_kernel(lambda w: _ndtri(w, steps), x)


ndtri = _on_loop("ndtri", _ndtri_of_dtype, whole=True)


def _log_ndtr(x):
    upper = x > -1.0
    return _s._by_ranges(x, [
        (upper, lambda v: np.log1p(-0.5 * _s._erfc(v * _SQRT_HALF))),
        (~upper, lambda v: np.log(0.5 * _erfcx(-v * _SQRT_HALF)) - 0.5 * v * v)])


log_ndtr = _on_loop("log_ndtr", _log_ndtr)


def _float64_kernel(fn, x):
    """``fn`` on x in float64 (0-d as one element), returned in x's dtype and shape."""
    w = np.ascontiguousarray(x, dtype=np.float64).reshape(-1)
    with np.errstate(all="ignore"):
        return fn(w).reshape(x.shape).astype(x.dtype, copy=False)
