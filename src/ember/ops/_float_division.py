"""torch's fmod, remainder and floor division of float32 (and widened half) arrays by whole-array
passes in float64, with each element's C library result only where those passes can be inexact.

For float32 operands whose float64 quotient is below ``EXACT_QUOTIENT`` in magnitude (and a
finite, nonzero divisor), that quotient never rounds across an integer, so its trunc and floor
are the exact ones; ``a - trunc(q) * b`` is then exact in float64 (it is the float32 fmod), and
one float64 addition rounded to float32 is float32's own rounding. torch's floor division of such
operands is the exact floor of the quotient, with the sign of ``a / b`` on a zero. The other
elements (huge quotients, infinities, NaN, zero divisors) take torch's algorithm element by
element: ``fmod`` and the corrections torch applies to it.
"""
import math

import numpy as np

from ._common import namespace_of

# Below this magnitude, a float32 quotient has room in float64's 53 bits for its integer part and
# the fraction that separates it from the next integer, and torch's float32 steps round back to it.
EXACT_QUOTIENT = 2.0 ** 22
# Smaller arrays keep the element-by-element loop, which makes fewer calls.
MIN_ELEMENTS = 1024


def fast_path_applies(a, b):
    """Whether ``a`` (an array) and ``b`` (an array or number of its dtype, or a Python number)
    take the whole-array passes."""
    if a.dtype != np.float32 or a.size < MIN_ELEMENTS:
        return False
    if hasattr(b, "ndim") and b.ndim > 0:
        return b.dtype == np.float32
    return math.isfinite(float(b))


def _quotient(a, b):
    """float64 copies of ``a`` and ``b`` (``b`` rounded to float32 first when a number, as
    torch's wrapped scalar is) and their quotient."""
    xp = namespace_of(a)
    a64 = a.astype(xp.float64)
    b64 = b.astype(xp.float64) if hasattr(b, "ndim") and b.ndim > 0 else float(np.float32(b))
    with np.errstate(all="ignore"):
        return a64, b64, a64 / b64


def _inexact(q, b):
    """None when the passes are exact everywhere, else the mask of elements where they are not."""
    xp = namespace_of(q)
    array_b = hasattr(b, "ndim") and b.ndim > 0
    if -EXACT_QUOTIENT < q.min() and q.max() < EXACT_QUOTIENT and not (array_b and xp.isinf(b).any()):
        return None   # (a NaN quotient fails both comparisons)
    exact = xp.abs(q) < EXACT_QUOTIENT
    if array_b:
        exact &= xp.isfinite(b)
    return ~exact


def _patch(out, inexact, a, b, slow):
    """``out`` with ``slow(a, b)`` on the ``inexact`` elements (broadcast as ``out``)."""
    if inexact is None:
        return out
    xp = namespace_of(out)
    ab = xp.broadcast_to(a, out.shape)[inexact]
    bb = xp.broadcast_to(b, out.shape)[inexact] if hasattr(b, "ndim") and b.ndim > 0 else b
    with np.errstate(all="ignore"):
        out[inexact] = slow(ab, bb)
    return out


def _minus_multiple(xp, a64, b64, whole):
    """``a - whole * b`` in float64 (in ``whole``'s memory), rounded to float32."""
    xp.multiply(whole, b64, out=whole)
    return xp.subtract(a64, whole, out=whole).astype(xp.float32)


def torch_fmod(a, b):
    """C's fmod, element by element."""
    return namespace_of(a).fmod(a, b)


def torch_remainder(a, b):
    """torch's float remainder, element by element: fmod, plus the divisor where the two signs
    differ. That is NumPy's remainder except for zeros, which keep the fmod's sign."""
    xp = namespace_of(a)
    out = xp.asarray(xp.remainder(a, b))   # (of 0-d arrays: a NumPy scalar)
    _zeros_signed_as(out, a)
    return out


def torch_div_floor(a, b):
    """torch's float floor division: the quotient from ``a - fmod(a, b)``, so that an infinite
    dividend gives NaN (not floor(inf / b)) and a finite one over an infinite divisor -1 or 0."""
    xp = namespace_of(a)
    quotient = xp.true_divide(a, b)
    mod = xp.fmod(a, b)
    bb = xp.asarray(b)
    div = (a - mod) / b
    div = xp.where((mod != 0) & ((bb < 0) != (mod < 0)), div - 1, div)
    floor = xp.floor(div)
    floor = xp.where(div - floor > 0.5, floor + 1, floor)
    out = xp.where(div != 0, floor, xp.copysign(xp.zeros_like(quotient), quotient))
    return xp.where(bb == 0, quotient, out)


def _zeros_signed_as(out, a):
    """Give ``out``'s zeros the sign of ``a``'s elements, as fmod's zeros have (float64's
    ``x - x`` is +0)."""
    xp = namespace_of(out)
    zero = out == 0
    if zero.any():
        xp.copysign(out, xp.broadcast_to(a, out.shape), out=out, where=zero)


def fmod(a, b):
    """torch's fmod of a float32 array ``a`` by ``b`` (see ``fast_path_applies``)."""
    xp = namespace_of(a)
    a64, b64, q = _quotient(a, b)
    inexact = _inexact(q, b)
    with np.errstate(all="ignore"):
        out = _minus_multiple(xp, a64, b64, xp.trunc(q))
    _zeros_signed_as(out, a)
    return _patch(out, inexact, a, b, torch_fmod)


def remainder(a, b):
    """torch's remainder of a float32 array ``a`` by ``b`` (see ``fast_path_applies``): the
    floor's remainder, one rounding of the fmod plus the divisor where torch adds it."""
    xp = namespace_of(a)
    a64, b64, q = _quotient(a, b)
    inexact = _inexact(q, b)
    with np.errstate(all="ignore"):
        out = _minus_multiple(xp, a64, b64, xp.floor(q))
    _zeros_signed_as(out, a)
    return _patch(out, inexact, a, b, torch_remainder)


def div_floor(a, b):
    """torch's floor division of a float32 array ``a`` by ``b`` (see ``fast_path_applies``)."""
    xp = namespace_of(a)
    _, _, q = _quotient(a, b)
    inexact = _inexact(q, b)
    out = xp.floor(q).astype(xp.float32)
    return _patch(out, inexact, a, b, torch_div_floor)
