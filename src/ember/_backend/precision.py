"""Reduced-precision arrays in kernels: NumPy has no float16/bfloat16 arithmetic of its own
(ml_dtypes would add bfloat16 values one at a time in bfloat16), so kernels that sum or
multiply them run in float32 and round their result once, as torch's CPU kernels accumulate
them."""
import ml_dtypes
import numpy as np

HALF_PRECISION = frozenset((np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)))


def widened(data):
    """``data`` as float32 when it is half or bfloat16, else unchanged."""
    return data.astype(np.float32) if data.dtype in HALF_PRECISION else data


def narrowed(result, dtype):
    """A result computed on ``widened`` arrays, rounded once to the input's ``dtype``."""
    return result if result.dtype == dtype else result.astype(dtype)


# Where ``exp`` of a float dtype stays finite: the largest argument not overflowing, rounded down.
_EXP_LIMITS = {np.dtype(np.float32): 88.0, np.dtype(np.float64): 709.0}
# Up to this many elements, a maximum tells whether ``exp`` may overflow (cheaper than entering
# ``np.errstate``); above it, the errstate's cost is nothing beside the pass a maximum would add.
EXP_CHECK_MAX_ELEMENTS = 4096


def exp_in_place(xp, a):
    """``exp(a)`` into the float array ``a``, an overflow giving inf (the answer wanted) without
    NumPy's RuntimeWarning."""
    errstate = getattr(xp, "errstate", None)   # CuPy does not warn
    if errstate is None:
        return xp.exp(a, out=a)
    limit = _EXP_LIMITS.get(a.dtype)
    if limit is not None and a.size <= EXP_CHECK_MAX_ELEMENTS and a.size \
            and np.maximum.reduce(a, axis=None) <= limit:
        return np.exp(a, out=a)
    with errstate(over="ignore"):
        return xp.exp(a, out=a)
