"""LAPACK routines NumPy does not expose (``orgqr``, ``gelsy``, ``gelsd``, ``gelss``, ``sytrs``,
``potri``), or runs only in float64 (``geqrf``, ``gesdd``, ``syevd``, ``geev``: NumPy's qr, svd,
eigh and eig compute a float32 array in float64, at about twice torch's time), in the OpenBLAS
that NumPy itself links (``cblas`` finds it), called through ``native_calls``' extension (QR,
orgqr, SVD, eigh and eig through C drivers: ``openmp_kernels.small_qr``, ``small_orgqr``,
``small_gesdd``, ``small_syevd`` and ``small_geev``), as torch calls its LAPACK: orgqr applies the
reflectors in blocks; gelsy is the least-squares driver torch's CPU lstsq takes by default (a QR
factorization with column pivoting), gelsd and gelss the drivers by SVD it takes where asked;
sytrs solves from an LDL factorization with Bunch-Kaufman pivoting (sytrf's, which ``ops.ldl``
computes).

The routines are looked up under the names NumPy's wheels give the Fortran interface
(``scipy_sorgqr_64_``, 64-bit integers) or the plain Fortran names. Where none is found
(another BLAS, CuPy arrays, other dtypes) the functions here return None and the caller
computes on its own.
"""
import ctypes

import numpy as np

from . import native_calls, openmp_kernels
from .cblas import _numpy_blas_handle
from .pointers import address

# (symbol pattern, NumPy dtype of LAPACK's integers): ILP64 builds take 64-bit integers
_NAME_PATTERNS = (("scipy_{}_64_", np.int64), ("{}_64_", np.int64), ("scipy_{}_", np.int32),
                  ("{}_", np.int32))
_PREFIXES = {np.dtype(np.float32): "s", np.dtype(np.float64): "d"}


class _Routine:
    """A Fortran routine whose every argument is a pointer, called with arrays (for their data),
    addresses (ints) or None through ``native_calls``' extension, which reads the pointers in C
    (bound at the first call: ctypes' conversions where it cannot be built)."""
    __slots__ = ("function", "kinds", "bound", "address")

    def __init__(self, function, arguments):
        self.function, self.kinds, self.bound = function, "p" * arguments, None
        # (for compiled code that calls the routine: ``openmp_kernels``' small drivers)
        self.address = ctypes.cast(function, ctypes.c_void_p).value

    def __call__(self, *arguments):
        if self.bound is None:
            self.bound = native_calls.bind(self.function, self.kinds)
        self.bound(*arguments)


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
                return {dtype: _Routine(f, arguments) for dtype, f in functions.items()}, np.dtype(integer)
    return {}, None


_handle = _numpy_blas_handle()
_GEQRF, _GEQRF_INTEGER = _bind(_handle, "geqrf", 8)   # m, n, a, lda, tau, work, lwork, info
_ORGQR, _ORGQR_INTEGER = _bind(_handle, "orgqr", 9)   # m, n, k, a, lda, tau, work, lwork, info
# m, n, nrhs, a, lda, b, ldb, jpvt, rcond, rank, work, lwork, info
_GELSY, _GELSY_INTEGER = _bind(_handle, "gelsy", 13)
# m, n, nrhs, a, lda, b, ldb, s, rcond, rank, work, lwork, iwork, info (gelss: no iwork)
_GELSD, _GELSD_INTEGER = _bind(_handle, "gelsd", 14)
_GELSS, _GELSS_INTEGER = _bind(_handle, "gelss", 13)
# uplo, n, nrhs, a, lda, ipiv, b, ldb, info, then the length of uplo (gfortran's hidden argument)
_SYTRS, _SYTRS_INTEGER = _bind(_handle, "sytrs", 10)
# uplo, n, a, lda, info, then the length of uplo
_POTRI, _POTRI_INTEGER = _bind(_handle, "potri", 6)
# jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, iwork, info, then the length of jobz
_GESDD, _GESDD_INTEGER = _bind(_handle, "gesdd", 15)
# jobz, uplo, n, a, lda, w, work, lwork, iwork, liwork, info, then the lengths of jobz and uplo
_SYEVD, _SYEVD_INTEGER = _bind(_handle, "syevd", 13)
# jobvl, jobvr, n, a, lda, wr, wi, vl, ldvl, vr, ldvr, work, lwork, info, then the lengths of the jobs
_GEEV, _GEEV_INTEGER = _bind(_handle, "geev", 16)
_LOWER = ctypes.create_string_buffer(b"L")


def _element_addresses(sizes):
    """The address of each element of the 1-D array ``sizes`` (LAPACK takes its sizes by reference)."""
    start, step = address(sizes), sizes.itemsize
    return [start + i * step for i in range(sizes.shape[0])]


def _each_matrix(call, count, dtype, sizes, lwork, info, failure=None):
    """A LAPACK routine's workspace query, then the routine on each of ``count`` matrices:
    ``call(i, work)`` calls it on matrix i with the workspace (an array), first ``call(0,
    query)`` with ``sizes[lwork]`` -1, after which ``sizes[lwork]`` holds the workspace's
    length. A nonzero ``sizes[info]`` raises numpy.linalg.LinAlgError(``failure``) where a
    message is given."""
    optimal = np.zeros(1, dtype)
    call(0, optimal)
    sizes[lwork] = max(int(optimal[0]), 1)
    work = np.empty(sizes[lwork], dtype)   # (kept alive while the routine writes into it)
    for i in range(count):
        call(i, work)
        if failure is not None and sizes[info] != 0:
            raise np.linalg.LinAlgError(failure)


def _column_major(a):
    """A copy of the (count, m, n) array with each matrix in column-major order."""
    columns = np.empty((a.shape[0], a.shape[2], a.shape[1]), a.dtype)
    columns[...] = a.transpose(0, 2, 1)
    return columns.transpose(0, 2, 1)


def _row_major(columns):
    """A row-major copy of the (count, m, n) array."""
    return np.ascontiguousarray(columns)


def qr(a, mode):
    """numpy.linalg.qr's (Q, R) for each matrix of a (count, m, n) float32/float64 NumPy array,
    both row-major (Q None for ``mode`` "r"), by LAPACK's geqrf and orgqr in the array's own
    precision (NumPy's qr computes a float32 array's in float64); None when the routines are
    not found or the array is not such or is empty."""
    function = _GEQRF.get(a.dtype) if type(a) is np.ndarray and a.ndim == 3 else None
    if function is None or not a.size or (mode != "r" and a.dtype not in _ORGQR):
        return None
    count, m, n = a.shape
    k = min(m, n)
    looped = openmp_kernels.small_qr(function.address, _ORGQR[a.dtype].address if mode != "r" else 0,
                                     np.ascontiguousarray(a), m if mode == "complete" else k,
                                     m if mode == "complete" else k, _GEQRF_INTEGER == np.int64)
    if looped is not None:   # (the steps below in one C call)
        return looped
    columns = _column_major(a)
    tau = np.empty((count, k), a.dtype)
    sizes = np.array([m, n, max(m, 1), -1, 0], dtype=_GEQRF_INTEGER)
    size = _element_addresses(sizes)   # m, n, lda, lwork, info
    _each_matrix(lambda i, work: function(size[0], size[1], columns[i], size[2], tau[i], work,
                                          size[3], size[4]),
                 count, a.dtype, sizes, 3, 4)
    rows = m if mode == "complete" else k
    r = np.triu(columns[:, :rows, :])
    if mode == "r":
        return None, r
    width = m if mode == "complete" else k
    if width <= n:
        q = columns[:, :, :width]   # (the reflectors: LAPACK's column-major storage as it is)
    else:   # a complete Q of a tall matrix: the reflectors in its first n columns
        q = np.zeros((count, width, m), a.dtype).transpose(0, 2, 1)
        q[:, :, :n] = columns
    return _orgqr_columns(q, tau), r


def qr_routines():
    """(geqrf's address for float32, for float64, orgqr's for float32, for float64 (each 0 where it is
    not found), whether their integers are int64): what QR's compiled functions give its C driver."""
    orgqrs = _ORGQR if _ORGQR_INTEGER == _GEQRF_INTEGER else {}
    return (*(_GEQRF[d].address if d in _GEQRF else 0 for d in _PREFIXES),
            *(orgqrs[d].address if d in orgqrs else 0 for d in _PREFIXES), int(_GEQRF_INTEGER == np.int64))


def orgqr(a, tau):
    """LAPACK's orgqr on each matrix of a (count, m, n) float32/float64 NumPy array with
    (count, k) scales: the first n columns of H_0 ... H_{k-1}, v_i read from column i below
    the diagonal, row-major; None when the routine is not found or the arrays are not such or
    are empty."""
    function = _ORGQR.get(a.dtype) if type(a) is np.ndarray and a.ndim == 3 else None
    if function is None or not a.size or type(tau) is not np.ndarray or tau.dtype != a.dtype:
        return None
    a, tau = np.ascontiguousarray(a), np.ascontiguousarray(tau)
    looped = openmp_kernels.small_orgqr(function.address, a, tau, _ORGQR_INTEGER == np.int64)
    if looped is not None:   # (the steps below in one C call)
        return looped
    return _orgqr_columns(_column_major(a), tau)


def _orgqr_columns(columns, tau):
    """orgqr on each matrix of ``columns`` ((count, m, n), each matrix column-major and
    contiguous: the reflectors; overwritten) with ``tau`` ((count, k), C-contiguous): Q's
    first n columns, row-major."""
    function = _ORGQR[columns.dtype]
    count, m, n = columns.shape
    sizes = np.array([m, n, tau.shape[-1], max(m, 1), -1, 0], dtype=_ORGQR_INTEGER)
    size = _element_addresses(sizes)   # m, n, k, lda, lwork, info
    _each_matrix(lambda i, work: function(*size[:3], columns[i], size[3], tau[i], work,
                                          size[4], size[5]),
                 count, columns.dtype, sizes, 4, 5)
    return _row_major(columns)


def _least_squares_systems(functions, a, b):
    """(the routine of ``functions`` for ``a``'s dtype, ``a``'s matrices column-major, ``b``'s right sides as
    (count, k, max(m, n)): each (max(m, n), k) system column-major, zeros past row m) for (count, m, n) and
    (count, m, k) float32/float64 NumPy arrays of one dtype with elements; None otherwise."""
    function = functions.get(a.dtype) if type(a) is np.ndarray and a.ndim == 3 else None
    if (function is None or not a.size or type(b) is not np.ndarray or b.dtype != a.dtype
            or b.ndim != 3 or not b.size or b.shape[:2] != a.shape[:2]):
        return None
    count, m, n = a.shape
    right = np.zeros((count, b.shape[2], max(m, n)), a.dtype)
    right[:, :, :m] = b.transpose(0, 2, 1)
    return function, _column_major(a), right


def gelsy(a, b, rcond):
    """LAPACK's gelsy on each system of (count, m, n) and (count, m, k) float32/float64 NumPy
    arrays of one dtype: (the minimum-norm least-squares solutions (count, n, k) row-major, the
    ranks (count,) int64 gelsy found, columns whose R-diagonal estimate falls below ``rcond``
    times the largest left out); None when the routine is not found or the arrays are not such
    or are empty."""
    systems = _least_squares_systems(_GELSY, a, b)
    if systems is None:
        return None
    function, columns, right = systems
    count, m, n = a.shape
    k, rows = right.shape[1:]
    sizes = np.array([m, n, k, max(m, 1), rows, -1, 0, 0], dtype=_GELSY_INTEGER)
    # m, n, nrhs, lda, ldb, lwork, rank, info
    size = _element_addresses(sizes)
    pivots = np.zeros(n, dtype=_GELSY_INTEGER)
    threshold = np.array([rcond], a.dtype)
    ranks = np.empty(count, np.int64)
    optimal = np.zeros(1, a.dtype)
    function(*size[:3], columns[0], size[3], right[0], size[4], pivots,
             threshold, size[6], optimal, size[5], size[7])
    sizes[5] = max(int(optimal[0]), 1)
    work = np.empty(sizes[5], a.dtype)
    for i in range(count):
        pivots[:] = 0   # (every column free to move)
        function(*size[:3], columns[i], size[3], right[i], size[4], pivots,
                 threshold, size[6], work, size[5], size[7])
        ranks[i] = sizes[6]
    return _row_major(right[:, :, :n].transpose(0, 2, 1)), ranks


def svd_least_squares(a, b, rcond, driver):
    """LAPACK's gelsd (``driver`` "gelsd": divide and conquer) or gelss ("gelss") on each system of (count, m,
    n) and (count, m, k) float32/float64 NumPy arrays of one dtype, as torch's CPU lstsq calls them: (the
    right sides as the routine leaves them (count, max(m, n), k) row-major, the minimum-norm least-squares
    solutions their first n rows, rows n..m-1 those whose squares sum to the residuals; the singular values
    (count, min(m, n)); the ranks (count,) int64, singular values at most ``rcond`` times the largest left
    out); numpy.linalg.LinAlgError where an SVD does not converge; None when the routine is not found or
    the arrays are not such or are empty."""
    functions, integer = (_GELSD, _GELSD_INTEGER) if driver == "gelsd" else (_GELSS, _GELSS_INTEGER)
    systems = _least_squares_systems(functions, a, b)
    if systems is None:
        return None
    function, columns, right = systems
    count, m, n = a.shape
    k, rows = right.shape[1:]
    values = np.empty((count, min(m, n)), a.dtype)
    sizes = np.array([m, n, k, max(m, 1), rows, -1, 0, 0], dtype=integer)
    size = _element_addresses(sizes)   # m, n, nrhs, lda, ldb, lwork, rank, info
    threshold = np.array([rcond], a.dtype)
    ranks = np.empty(count, np.int64)
    iwork = np.zeros(1, integer)
    optimal = np.zeros(1, a.dtype)

    def call(i, work):
        function(*size[:3], columns[i], size[3], right[i], size[4], values[i], threshold, size[6], work, size[5],
                 *((iwork,) if driver == "gelsd" else ()), size[7])
    call(0, optimal)
    sizes[5] = max(int(optimal[0]), 1)
    work = np.empty(sizes[5], a.dtype)
    if driver == "gelsd":
        iwork = np.empty(max(int(iwork[0]), 1), integer)
    for i in range(count):
        call(i, work)
        if sizes[7] != 0:
            raise np.linalg.LinAlgError("SVD did not converge")
        ranks[i] = sizes[6]
    return _row_major(right.transpose(0, 2, 1)), values, ranks


def sytrs(a, pivots, b):
    """LAPACK's sytrs on each system of (count, n, n) and (count, n, k) float32/float64 NumPy
    arrays of one dtype, the factors in the lower triangle of ``a`` with sytrf's 1-based
    ``pivots`` (count, n) (negative for both rows of a 2 x 2 block): the solutions (count, n, k)
    row-major; None when the routine is not found or the arrays are not such or are empty."""
    function = _SYTRS.get(a.dtype) if type(a) is np.ndarray and a.ndim == 3 else None
    if (function is None or not a.size or type(b) is not np.ndarray or b.dtype != a.dtype
            or b.ndim != 3 or not b.size or b.shape[:2] != a.shape[:2]):
        return None
    count, n, k = b.shape
    columns = _column_major(a)
    right = _column_major(b)
    pivots = np.ascontiguousarray(pivots, dtype=_SYTRS_INTEGER)
    sizes = np.array([n, k, max(n, 1), 0], dtype=_SYTRS_INTEGER)   # n, nrhs, lda (= ldb), info
    size = _element_addresses(sizes)
    lower = ctypes.addressof(_LOWER)
    for i in range(count):
        function(lower, size[0], size[1], columns[i], size[2], pivots[i],
                 right[i], size[2], size[3], 1)
    return _row_major(right)


def potri(a, upper):
    """LAPACK's potri on each Cholesky factor of a (count, n, n) float32/float64 NumPy array (its lower triangle,
    or its upper one where ``upper``; the other not read), as torch's cholesky_inverse calls it, through one C
    driver (``openmp_kernels.small_potri``): (the inverses of the matrices they factor, row-major; potri's info
    for each, (count,) int64: k > 0 where the k-th diagonal element is zero, that inverse unfinished); None
    when the routine or the driver is not found or the array is not such or is empty."""
    function = _POTRI.get(a.dtype) if type(a) is np.ndarray and a.ndim == 3 else None
    if function is None or not a.size:
        return None
    return openmp_kernels.small_potri(function.address, np.ascontiguousarray(a), upper, _POTRI_INTEGER == np.int64)


def gesdd(a, full_matrices, compute_uv):
    """numpy.linalg.svd's result for a (count, m, n) float32/float64 NumPy array of finite
    numbers, by LAPACK's gesdd in the array's own precision in one C call (``openmp_kernels.small_gesdd``):
    (U, S, Vh) row-major, or S alone without ``compute_uv``; numpy.linalg.LinAlgError where it does not
    converge; None when the routine or the driver is not found or the array is not such or is empty."""
    function = _GESDD.get(a.dtype) if type(a) is np.ndarray and a.ndim == 3 else None
    if function is None or not a.size:
        return None
    job = "A" if full_matrices and compute_uv else "S" if compute_uv else "N"
    return openmp_kernels.small_gesdd(function.address, np.ascontiguousarray(a), job, _GESDD_INTEGER == np.int64)


def syevd(a, lower, eigenvectors):
    """numpy.linalg.eigh's (eigenvalues, eigenvectors) (``eigvalsh``'s eigenvalues without
    ``eigenvectors``) for a (count, n, n) float32/float64 NumPy array, from its lower (or
    upper) triangle, by LAPACK's syevd in the array's own precision in one C call
    (``openmp_kernels.small_syevd``), the eigenvectors row-major; numpy.linalg.LinAlgError where it does
    not converge; None when the routine or the driver is not found or the array is not such or is empty."""
    function = _SYEVD.get(a.dtype) if type(a) is np.ndarray and a.ndim == 3 else None
    if function is None or not a.size:
        return None
    return openmp_kernels.small_syevd(function.address, np.ascontiguousarray(a), lower, eigenvectors,
                                      _SYEVD_INTEGER == np.int64)


def geev(a, vectors):
    """numpy.linalg.eig's (eigenvalues, eigenvectors) (``eigvals``'s eigenvalues without
    ``vectors``) for a (count, n, n) float32/float64 NumPy array of finite numbers, by LAPACK's geev in
    the array's own precision in one C call (``openmp_kernels.small_geev``): complex64/complex128, the
    eigenvectors row-major, each complex eigenvalue's turned so that its first component of largest
    magnitude is real and positive; numpy.linalg.LinAlgError where it does not converge; None when the
    routine or the driver is not found or the array is not such or is empty."""
    function = _GEEV.get(a.dtype) if type(a) is np.ndarray and a.ndim == 3 else None
    if function is None or not a.size:
        return None
    return openmp_kernels.small_geev(function.address, np.ascontiguousarray(a), vectors, _GEEV_INTEGER == np.int64)


def driver_routines(routine):
    """(``routine``'s address for float32, for float64 (each 0 where it is not found), whether its integers
    are int64), ``routine`` "gesdd", "syevd", "geev" or "orgqr": what the compiled functions give its C
    driver."""
    functions, integer = {"gesdd": (_GESDD, _GESDD_INTEGER), "syevd": (_SYEVD, _SYEVD_INTEGER),
                          "geev": (_GEEV, _GEEV_INTEGER), "orgqr": (_ORGQR, _ORGQR_INTEGER)}[routine]
    return (*(functions[d].address if d in functions else 0 for d in _PREFIXES), int(integer == np.int64))
