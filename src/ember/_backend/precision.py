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
