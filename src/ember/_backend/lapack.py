"""LAPACK routines NumPy does not expose (``getrf``), called through ctypes in the OpenBLAS that
NumPy itself links (``cblas`` finds it), as torch calls its LAPACK: OpenBLAS's getrf is a
blocked, recursive LU with partial pivoting on BLAS-3 kernels.

The routines are looked up under the names NumPy's wheels give the Fortran interface
(``scipy_sgetrf_64_``, 64-bit integers) or the plain Fortran names. Where none is found
(another BLAS, CuPy arrays, other dtypes) the functions here return None and the caller
computes on its own.
"""
import ctypes

import numpy as np

from .cblas import _numpy_blas_handle
from .pointers import address

# (symbol pattern, NumPy dtype of LAPACK's integers): ILP64 builds take 64-bit integers
_NAME_PATTERNS = (("scipy_{}_64_", np.int64), ("{}_64_", np.int64), ("scipy_{}_", np.int32),
                  ("{}_", np.int32))
_PREFIXES = {np.dtype(np.float32): "s", np.dtype(np.float64): "d"}


def _bind(handle, routine, arguments):
    """(the Fortran routine for each supported dtype, the dtype of its integers), every
    argument a pointer; ({}, None) when the library lacks it."""
    if handle is not None:
        for pattern, integer in _NAME_PATTERNS:
            functions = {dtype: getattr(handle, pattern.format(prefix + routine), None)
                         for dtype, prefix in _PREFIXES.items()}
            if all(f is not None for f in functions.values()):
                for function in functions.values():
                    function.argtypes = (ctypes.c_void_p,) * arguments
                    function.restype = None
                return functions, np.dtype(integer)
    return {}, None


_GETRF, _GETRF_INTEGER = _bind(_numpy_blas_handle(), "getrf", 6)   # m, n, a, lda, ipiv, info


def getrf(a):
    """LAPACK's getrf on each matrix of a (count, m, n) float32/float64 NumPy array: (LU
    row-major with L's unit diagonal left out, pivots (count, min(m, n)) 1-based int32, info
    (count,) int32: 1 + the index of the first exactly zero pivot, 0 when there is none); None
    when the routine is not found or ``a`` is not such an array or is empty."""
    function = _GETRF.get(a.dtype) if type(a) is np.ndarray and a.ndim == 3 else None
    if function is None or not a.size:
        return None
    count, m, n = a.shape
    columns = np.empty((count, n, m), a.dtype)   # each matrix in column-major order
    columns[...] = a.transpose(0, 2, 1)
    sizes = np.array([m, n, max(m, 1)], dtype=_GETRF_INTEGER)
    step = sizes.itemsize
    pivots = np.empty((count, min(m, n)), dtype=_GETRF_INTEGER)
    info = np.zeros(count, dtype=_GETRF_INTEGER)
    for i in range(count):
        function(address(sizes), address(sizes) + step, address(columns[i]), address(sizes) + 2 * step,
                 address(pivots[i]), address(info) + i * step)
    lu = np.ascontiguousarray(columns.transpose(0, 2, 1))
    return lu, pivots.astype(np.int32), info.astype(np.int32)
