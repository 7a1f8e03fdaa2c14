"""Classical orthogonal polynomials ``P_n(x)`` for arrays of ``x`` and of degrees ``n``,
vectorised over any array namespace ``xp``, computed in float64.

Degrees are truncated to integers and a negative degree gives 0, as torch does. Each
polynomial is its three-term recurrence run up to the largest degree asked for, every element
keeping the value at its own degree; torch's special cases are kept: the values at ``x = +-1``
for the Chebyshev and Legendre polynomials, and for the Chebyshev ones with ``|x| < 1`` and a
degree above 6 (T) or 8 (U, V, W), the trigonometric forms (``T_n(cos t) = cos(n t)``, ...).
The shifted Chebyshev polynomials are the Chebyshev ones at ``2x - 1``.
"""

import math

import numpy as np

from . import special_loops
from .choice import KernelChoice


def _whole_degrees(xp, n):
    # torch casts the degree to int64: NaN, infinities and degrees beyond its range become
    # its least value, a negative degree
    if xp is np and (n.__class__ is int or n.__class__ is float):   # (a number: without arrays)
        return np.float64(math.trunc(n) if math.isfinite(n) and abs(n) < 2.0 ** 63 else -1.0)
    n = xp.asarray(n, dtype=np.float64)
    return xp.where(xp.isfinite(n) & (xp.abs(n) < 2.0 ** 63), xp.trunc(n), -1.0)


def _degrees(xp, x, n):
    return xp.broadcast_arrays(xp.asarray(x, dtype=np.float64), _whole_degrees(xp, n))


def _recurrence(xp, x, n, first, second, step):
    """P_n(x) from P_0 = first, P_1 = second(x) and P_k+1 = step(k, x, P_k, P_k-1)."""
    p0 = xp.broadcast_to(xp.asarray(first, dtype=np.float64), x.shape)
    p1 = second(x)
    out = xp.where(n == 0, p0, xp.where(n == 1, p1, 0.0))
    top = int(n.max()) if n.size else 0
    prev, cur = p0, p1
    for k in range(1, top):
        prev, cur = cur, step(k, x, cur, prev)
        out = xp.where(n == k + 1, cur, out)
    return xp.where(n < 0, 0.0, out)


def _chebyshev_step(k, x, cur, prev):
    return 2.0 * x * cur - prev


def _compute(fn):
    """The kernel ``kernel(xp, x, n, shifted=False, dtype=None)``: ``fn(xp, x, n)`` given float64
    ``x`` (``2x - 1`` where ``shifted``) and whole degrees ``n`` broadcast together, in float64
    (to be cast to ``dtype`` by the caller); NumPy arrays with elements on ``special_loops``'
    compiled loop for the polynomial (each element's recurrence to its own degree), which
    returns ``dtype`` itself. Callers ignore NumPy's floating-point errors around it
    (``np.errstate(all="ignore")``): an overflow gives inf, as torch's, and NaN stays NaN."""
    name = fn.__name__.lstrip("_")

    def on_arrays(xp, x, n, shifted, dtype):
        x = xp.asarray(x, dtype=np.float64)
        return fn(xp, *_degrees(xp, x + x - 1.0 if shifted else x, n))

    def on_loop(xp, x, n, shifted, dtype):
        return special_loops.polynomial(name, x, _whole_degrees(xp, n), shifted, dtype)
    choice = KernelChoice(name, onednn=on_loop, numpy=on_arrays)

    def kernel(xp, x, n, shifted=False, dtype=None):
        if (type(x) is np.ndarray or type(n) is np.ndarray) and _has_elements(x) and _has_elements(n):
            return choice(xp, x, n, shifted, dtype)
        return on_arrays(xp, x, n, shifted, dtype)
    kernel.__name__ = name
    return kernel


def _has_elements(value):
    """Whether an array (or a number: one element) has elements."""
    return getattr(value, "size", 1) > 0


def _odd(xp, n):
    return xp.fmod(n, 2.0) != 0


@_compute
def _chebyshev_t(xp, x, n):
    out = _recurrence(xp, x, xp.where((n > 6) & (xp.abs(x) < 1), 0.0, n), 1.0, lambda v: v,
                      _chebyshev_step)
    out = xp.where((n > 6) & (xp.abs(x) < 1), xp.cos(n * xp.arccos(x)), out)
    at_one = xp.where((x > 0) | ~_odd(xp, n), 1.0, -1.0)
    return xp.where(n < 0, 0.0, xp.where(xp.abs(x) == 1, at_one, out))


@_compute
def _chebyshev_u(xp, x, n):
    trig = (n > 8) & (xp.abs(x) < 1)
    out = _recurrence(xp, x, xp.where(trig, 0.0, n), 1.0, lambda v: 2.0 * v, _chebyshev_step)
    t = xp.arccos(x)
    s = xp.sin(t)
    trig_value = xp.where(s != 0, xp.sin((n + 1) * t) / s, (n + 1) * xp.cos((n + 1) * t) / x)
    out = xp.where(trig, trig_value, out)
    at_one = xp.where((x > 0) | ~_odd(xp, n), n + 1, -(n + 1))
    return xp.where(n < 0, 0.0, xp.where(xp.abs(x) == 1, at_one, out))


@_compute
def _chebyshev_v(xp, x, n):
    trig = (n > 8) & (xp.abs(x) < 1)
    out = _recurrence(xp, x, xp.where(trig, 0.0, n), 1.0, lambda v: 2.0 * v - 1.0, _chebyshev_step)
    t = xp.arccos(x)
    half = xp.sin(t / 2)
    trig_value = xp.where(half != 1, xp.cos((n + 0.5) * t) / xp.cos(t / 2),
                          xp.where(_odd(xp, n), -(2 * n + 1), 2 * n + 1))
    out = xp.where(trig, trig_value, out)
    at_one = xp.where(x > 0, 1.0, xp.where(_odd(xp, n), -(2 * n + 1), 2 * n + 1))
    return xp.where(n < 0, 0.0, xp.where(xp.abs(x) == 1, at_one, out))


@_compute
def _chebyshev_w(xp, x, n):
    trig = (n > 8) & (xp.abs(x) < 1)
    out = _recurrence(xp, x, xp.where(trig, 0.0, n), 1.0, lambda v: 2.0 * v + 1.0, _chebyshev_step)
    t = xp.arccos(x)
    half = xp.cos(t / 2)
    trig_value = xp.where(half != 1, xp.sin((n + 0.5) * t) / xp.sin(t / 2),
                          xp.where(x > 0, 2 * n + 1, xp.where(_odd(xp, n), -1.0, 1.0)))
    out = xp.where(trig, trig_value, out)
    at_one = xp.where(x > 0, 2 * n + 1, xp.where(_odd(xp, n), -1.0, 1.0))
    return xp.where(n < 0, 0.0, xp.where(xp.abs(x) == 1, at_one, out))


@_compute
def _hermite_h(xp, x, n):
    return _recurrence(xp, x, n, 1.0, lambda v: 2.0 * v,
                       lambda k, v, cur, prev: 2.0 * v * cur - 2.0 * k * prev)


@_compute
def _hermite_he(xp, x, n):
    return _recurrence(xp, x, n, 1.0, lambda v: v, lambda k, v, cur, prev: v * cur - k * prev)


@_compute
def _laguerre_l(xp, x, n):
    out = _recurrence(xp, x, n, 1.0, lambda v: 1.0 - v,
                      lambda k, v, cur, prev: ((2 * k + 1 - v) * cur - k * prev) / (k + 1))
    return xp.where((x == 0) & (n >= 0), 1.0, out)


@_compute
def _legendre_p(xp, x, n):
    out = _recurrence(xp, x, n, 1.0, lambda v: v,
                      lambda k, v, cur, prev: ((2 * k + 1) * v * cur - k * prev) / (k + 1))
    at_one = xp.where((x > 0) | ~_odd(xp, n), 1.0, -1.0)
    return xp.where(n < 0, 0.0, xp.where(xp.abs(x) == 1, at_one, out))


chebyshev_t = _chebyshev_t
chebyshev_u = _chebyshev_u
chebyshev_v = _chebyshev_v
chebyshev_w = _chebyshev_w
hermite_h = _hermite_h
hermite_he = _hermite_he
laguerre_l = _laguerre_l
legendre_p = _legendre_p


def shifted(kernel):
    """The shifted polynomial ``P*_n(x) = P_n(2x - 1)``."""
    def shifted_kernel(xp, x, n, dtype=None):
        return kernel(xp, x, n, shifted=True, dtype=dtype)
    shifted_kernel.__name__ = "shifted_" + kernel.__name__
    return shifted_kernel



