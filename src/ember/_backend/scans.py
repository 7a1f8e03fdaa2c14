"""Inclusive scans (``ufunc.accumulate``) along an axis, on any backend.

NumPy has ``accumulate`` for every binary ufunc, CuPy for add and multiply only. For the others
CuPy takes ceil(log2(n)) passes, each combining every element with the one ``shift`` places
before it, ``shift`` doubling (Hillis and Steele's scan): exact for maximum and minimum, for
logaddexp the same sums in another order."""
import numpy as np

from . import namespace_of

__all__ = ["accumulate"]

DEVICE_ACCUMULATE = ("add", "multiply")


def accumulate(name, data, axis):
    """``xp.<name>.accumulate(data, axis=axis)``."""
    xp = namespace_of(data)
    ufunc = getattr(xp, name)
    if xp is np or name in DEVICE_ACCUMULATE:
        return ufunc.accumulate(data, axis=axis)
    axis %= data.ndim
    n = data.shape[axis]
    out = data.copy()
    shift = 1
    while shift < n:
        later = (slice(None),) * axis + (slice(shift, None),)
        earlier = (slice(None),) * axis + (slice(None, n - shift),)
        out[later] = ufunc(out[earlier], out[later])
        shift *= 2
    return out
