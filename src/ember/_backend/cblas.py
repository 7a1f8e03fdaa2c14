"""CBLAS routines NumPy does not expose (``axpy``, ``axpby``, ``gemm`` with ``beta``, ``trsm``), called
through ctypes in the OpenBLAS that NumPy itself links, so they share its threads and
``threadpoolctl`` limits.

``y += alpha * x`` is one fused pass in BLAS where NumPy needs two passes and a temporary.
``gemm`` with ``beta = 1`` adds a product into an array that already holds a bias, which saves
the separate pass over the result that ``a @ b + bias`` makes. The level-1
routines round as torch's CPU kernels do where OpenBLAS's kernel for the CPU does:
OpenBLAS's ``axpby(1, x, beta, y)`` kernels round ``beta * y`` before adding ``x``, like
``y.mul_(beta).add_(x)``, and ``axpy`` is one fused multiply-add per element, like
``y.add_(x, alpha=alpha)``, on kernels that fuse throughout; its Haswell kernels (which it
also picks on AMD Zen 5) round some elements twice, within an ulp of torch's
(``tests/optim/test_blas_updates.py`` checks both against torch).

The routines are looked up in NumPy's own extension module, whose dependencies include the BLAS
it was built with, under the names NumPy's wheels give them (``scipy_cblas_saxpy64_``) or the
plain CBLAS names. Where none is found (another BLAS, CuPy arrays, other dtypes, strided arrays)
the functions here return False and the caller falls back to NumPy.
"""
import ctypes

import numpy as np

from .pointers import address

# (symbol pattern, C integer type of the sizes): ILP64 builds take 64-bit sizes.
_NAME_PATTERNS = (("scipy_cblas_{}64_", ctypes.c_int64), ("cblas_{}64_", ctypes.c_int64),
                  ("scipy_cblas_{}", ctypes.c_int), ("cblas_{}", ctypes.c_int))
_SCALAR_TYPES = {np.dtype(np.float32): ("s", ctypes.c_float),
                 np.dtype(np.float64): ("d", ctypes.c_double)}
_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112
_UPPER, _LOWER, _NON_UNIT, _UNIT, _LEFT = 121, 122, 131, 132, 141


def _numpy_blas_handle():
    try:
        from numpy._core import _multiarray_umath
        return ctypes.CDLL(_multiarray_umath.__file__)
    except (ImportError, OSError, AttributeError):
        return None


def _bind(handle, routine, arg_kinds):
    """The CBLAS function ``routine`` for each supported dtype, with ctypes argument types;
    {} when the library lacks it. ``arg_kinds`` spells the arguments: n = size, a = scalar,
    p = array pointer, e = enum (layout, transposition)."""
    if handle is None:
        return {}
    for pattern, size_type in _NAME_PATTERNS:
        bound = {}
        for dtype, (prefix, scalar_type) in _SCALAR_TYPES.items():
            function = getattr(handle, pattern.format(prefix + routine), None)
            if function is None:
                break
            kinds = {"n": size_type, "a": scalar_type, "p": ctypes.c_void_p, "e": ctypes.c_int}
            function.argtypes = tuple(kinds[k] for k in arg_kinds)
            function.restype = None
            bound[dtype] = function
        else:
            return bound
    return {}


_handle = _numpy_blas_handle()
_AXPY = _bind(_handle, "axpy", "nanpn")  # n, alpha, x, incx, y, incy
_AXPBY = _bind(_handle, "axpby", "nanpan")  # n, alpha, x, incx, beta, y, incy
# layout, trans a, trans b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc
_GEMM = _bind(_handle, "gemm", "eeennnapnpnapn")
# layout, side, upper/lower, trans a, unit diagonal, m, n, alpha, a, lda, b, ldb
_TRSM = _bind(_handle, "trsm", "eeeeennapnpn")
# (gemv and dot only for their addresses: ``product_addresses``) layout, trans, m, n, alpha, a, lda, x, incx, beta,
# y, incy; n, x, incx, y, incy
_GEMV = _bind(_handle, "gemv", "eennapnpnapn")
_DOT = _bind(_handle, "dot", "npnpn")
_MAX_SIZE = 2**31 - 1


def available():
    """Whether ``axpy`` and ``axpby`` were found."""
    return bool(_AXPY) and bool(_AXPBY)


def supports(array):
    """Whether ``axpy`` and ``axpby`` were found for arrays of this type and dtype."""
    return type(array) is np.ndarray and array.dtype in _AXPY and array.dtype in _AXPBY


def _operands(x, y, table):
    """The bound routine when ``x`` and ``y`` are distinct C-contiguous NumPy arrays of one
    float32/float64 dtype and size, ``y`` writable; else None."""
    if type(x) is not np.ndarray or type(y) is not np.ndarray:
        return None
    function = table.get(x.dtype)
    if (function is None or y.dtype != x.dtype or x.size != y.size or x.size > _MAX_SIZE
            or not (x.flags.c_contiguous and y.flags.c_contiguous and y.flags.writeable)
            or np.may_share_memory(x, y)):
        return None
    return function


def axpy(alpha, x, y):
    """``y += alpha * x`` in place (one fused multiply-add per element where the BLAS kernel
    fuses); False (nothing done) when the operands do not qualify."""
    function = _operands(x, y, _AXPY)
    if function is None:
        return False
    if x.size:
        function(x.size, alpha, address(x), 1, address(y), 1)
    return True


def axpby(alpha, x, beta, y):
    """``y = alpha * x + beta * y`` in place; False (nothing done) when the operands do not
    qualify."""
    function = _operands(x, y, _AXPBY)
    if function is None:
        return False
    if x.size:
        function(x.size, alpha, address(x), 1, beta, address(y), 1)
    return True


def _matrix_operand(a):
    """(transposition, leading dimension) of a 2-D array as a row-major BLAS operand, or None
    when it is neither C- nor F-contiguous."""
    if a.flags.c_contiguous:
        return _NO_TRANS, max(a.shape[1], 1)
    if a.flags.f_contiguous:
        return _TRANS, max(a.shape[0], 1)
    return None


def gemm_supports(a, b):
    """Whether ``gemm`` can multiply ``a`` by ``b`` (into a fresh C-contiguous result)."""
    return (type(a) is np.ndarray and type(b) is np.ndarray and a.ndim == b.ndim == 2
            and a.dtype == b.dtype and a.dtype in _GEMM and a.size > 0 and b.size > 0
            and _matrix_operand(a) is not None and _matrix_operand(b) is not None)


def gemm(a, b, c, alpha=1.0, beta=1.0):
    """``c = alpha * a @ b + beta * c`` in place, for 2-D NumPy arrays of one float32/float64
    dtype: ``a`` and ``b`` C- or F-contiguous, ``c`` C-contiguous and writable, none of them
    empty or overlapping ``c``. False (nothing done) when they do not qualify."""
    arrays = (a, b, c)
    if any(type(x) is not np.ndarray for x in arrays) or any(
            x.ndim != 2 or x.dtype != c.dtype or not x.size for x in arrays):
        return False
    function = _GEMM.get(c.dtype)
    (m, k), (k2, n) = a.shape, b.shape
    if (function is None or k != k2 or c.shape != (m, n) or max(m, n, k) > _MAX_SIZE
            or not (c.flags.c_contiguous and c.flags.writeable)
            or np.may_share_memory(a, c) or np.may_share_memory(b, c)):
        return False
    layout_a, layout_b = _matrix_operand(a), _matrix_operand(b)
    if layout_a is None or layout_b is None:
        return False
    function(_ROW_MAJOR, layout_a[0], layout_b[0], m, n, k, alpha, address(a), layout_a[1],
             address(b), layout_b[1], beta, address(c), n)
    return True


def gemm_address(dtype):
    """(the address of the gemm for ``dtype``, whether its sizes are int64), for compiled code
    that calls it (``openmp_kernels``' recursive factorizations and solves); None where it was
    not found."""
    found = _GEMM_ADDRESSES.get(dtype, False)
    if found is False:
        function = _GEMM.get(dtype)
        found = _GEMM_ADDRESSES[dtype] = None if function is None else (
            ctypes.cast(function, ctypes.c_void_p).value, function.argtypes[3] is ctypes.c_int64)
    return found


_GEMM_ADDRESSES = {}


def product_addresses():
    """The addresses of gemm, gemv and dot for float32 and float64 (``sgemm, dgemm, sgemv, dgemv, sdot,
    ddot``, all 0 where one of them was not found) and whether their sizes are int64: the routines
    NumPy's matmul and dot call, which the compiled products call in the same cases
    (``ops._compiled_products``)."""
    dtypes = (np.dtype(np.float32), np.dtype(np.float64))
    tables = (_GEMM, _GEMV, _DOT)
    if not all(dtype in table for table in tables for dtype in dtypes):
        return (0,) * 6 + (0,)
    addresses = tuple(ctypes.cast(table[dtype], ctypes.c_void_p).value for table in tables for dtype in dtypes)
    return addresses + (int(_GEMM[dtypes[0]].argtypes[3] is ctypes.c_int64),)


def trsm(a, b, upper, transpose, unitriangular):
    """``b = op(T)^-1 b`` in place for each matrix of a batch, T the upper or lower triangle
    of ``a``'s matrix (its other entries are not read), op(T) = T or T^T, a unit diagonal
    assumed when ``unitriangular``; ``a`` (..., n, n) with ``b``'s batch shape (broadcast views
    allowed), ``b`` (..., n, k) C-contiguous. A zero on the diagonal gives infinities and NaNs,
    as the substitution does. False (nothing done) when they do not qualify."""
    if (type(a) is not np.ndarray or type(b) is not np.ndarray or a.dtype != b.dtype
            or a.dtype not in _TRSM or not (b.flags.c_contiguous and b.flags.writeable)
            or a.shape[:-2] != b.shape[:-2] or max(b.shape[-2:], default=0) > _MAX_SIZE
            or np.may_share_memory(a, b)):
        return False
    function = _TRSM[b.dtype]
    n, k = b.shape[-2:]
    if not (n and k):
        return True
    diagonal = _UNIT if unitriangular else _NON_UNIT
    for index in np.ndindex(b.shape[:-2]):
        matrix = a[index]
        layout = _matrix_operand(matrix)
        if layout is None:
            matrix = np.ascontiguousarray(matrix)
            layout = _matrix_operand(matrix)
        trans, lda = layout
        # an F-contiguous matrix is its transpose in row-major order: the other triangle of that
        uplo = _UPPER if upper == (trans == _NO_TRANS) else _LOWER
        op = trans if not transpose else (_TRANS if trans == _NO_TRANS else _NO_TRANS)
        function(_ROW_MAJOR, _LEFT, uplo, op, diagonal, n, k, 1.0, address(matrix), lda,
                 address(b[index]), k)
    return True


def _bind_thread_control(handle):
    """OpenBLAS's ``(set_num_threads, get_num_threads)`` under the names NumPy's wheels give
    them (``scipy_openblas_set_num_threads64_``) or the plain ones; None where absent."""
    if handle is None:
        return None
    for prefix, suffix in (("scipy_openblas", "64_"), ("scipy_openblas", ""),
                           ("openblas", "64_"), ("openblas", "")):
        setter = getattr(handle, f"{prefix}_set_num_threads{suffix}", None)
        getter = getattr(handle, f"{prefix}_get_num_threads{suffix}", None)
        if setter is not None and getter is not None:
            setter.argtypes, setter.restype = (ctypes.c_int,), None
            getter.argtypes, getter.restype = (), ctypes.c_int
            return setter, getter
    return None


_THREAD_CONTROL = _bind_thread_control(_handle)


def num_threads():
    """How many threads NumPy's OpenBLAS uses now (threadpoolctl limits included); None when
    that cannot be read."""
    return None if _THREAD_CONTROL is None else _THREAD_CONTROL[1]()


def set_num_threads(count):
    """Sets how many threads NumPy's OpenBLAS uses; False (nothing done) when it cannot."""
    if _THREAD_CONTROL is None:
        return False
    _THREAD_CONTROL[0](int(count))
    return True
