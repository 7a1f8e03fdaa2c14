"""float32 GEMM on oneDNN (``dnnl_sgemm``, row-major): ``c = a @ b + beta * c`` for 2-D NumPy
arrays, on oneDNN's OpenMP threads (the ones its convolutions use) instead of OpenBLAS's.

A call costs about 10 microseconds more than NumPy's matmul (ctypes and ``dnnl_sgemm``'s own
setup), so products smaller than ``MIN_MULTIPLY_ADDS`` are left to NumPy (the function returns
None): at one thread, OpenBLAS's small products take a third of oneDNN's time, and the two are
even at one to two million multiply-adds (``python -m benchmarks.gemm_threshold``).
"""
import ctypes

import numpy as np

from . import capi
from ..pointers import address

__all__ = ["matmul", "MIN_MULTIPLY_ADDS"]

MIN_MULTIPLY_ADDS = 1 << 21
_FLOAT32 = np.dtype(np.float32)

_SGEMM_ARGS = [ctypes.c_char, ctypes.c_char, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
               ctypes.c_float, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64,
               ctypes.c_float, ctypes.c_void_p, ctypes.c_int64]
_sgemm = []


def _function():
    if not _sgemm:
        fn = capi.lib().dnnl_sgemm
        fn.restype, fn.argtypes = ctypes.c_int, _SGEMM_ARGS
        _sgemm.append(fn)
    return _sgemm[0]


def _operand(a):
    """(transposition, leading dimension) of a 2-D array as a row-major operand, or None."""
    if a.flags.c_contiguous:
        return b"N", max(a.shape[1], 1)
    if a.flags.f_contiguous:
        return b"T", max(a.shape[0], 1)
    return None


def matmul(a, b, out=None):
    """``a @ b`` for 2-D float32 NumPy arrays, C- or F-contiguous; added to ``out`` (a
    C-contiguous array of the product's shape, not overlapping ``a`` or ``b``) when given.
    None where this does not apply."""
    if type(a) is not np.ndarray or type(b) is not np.ndarray or a.ndim != 2 or b.ndim != 2:
        return None
    (m, k), (k2, n) = a.shape, b.shape
    if k != k2 or m * n * k < MIN_MULTIPLY_ADDS or a.dtype != _FLOAT32 or b.dtype != _FLOAT32:
        return None
    layout_a, layout_b = _operand(a), _operand(b)
    if layout_a is None or layout_b is None:
        return None
    beta = 1.0
    if out is None:
        out, beta = np.empty((m, n), np.float32), 0.0
    elif (out.shape != (m, n) or out.dtype != _FLOAT32 or not out.flags.c_contiguous
          or np.may_share_memory(a, out) or np.may_share_memory(b, out)):
        return None
    capi.check(_function()(layout_a[0], layout_b[0], m, n, k, 1.0, address(a), layout_a[1],
                           address(b), layout_b[1], beta, address(out), n),
               "dnnl_sgemm", f"a {m}x{k} by {k}x{n} product")
    return out
