"""LU factorization with partial pivoting and the solvers built on it, with gradients:
``linalg.lu_factor``, ``lu_factor_ex``, ``lu``, ``lu_solve`` and ``solve_ex``.

NumPy exposes no getrf. Real float32 and float64 matrices are factored by a compiled
recursive LU (``openmp_kernels.getrf_recursive``) whose products are NumPy's own CBLAS gemm:
faster than OpenBLAS's getrf here, which needs the matrix copied to column-major order and
back. Elsewhere the factorization is written here on arrays, blocked as LAPACK's getrf: each
panel of ``LU_BLOCK`` columns is factored column by column (the pivot is the first entry of
largest magnitude, |re| + |im| for complex entries, as LAPACK's i?amax takes it), then the rows
to its right are solved against the panel's unit lower triangle and the trailing matrix is
updated by one matrix product. The pivots are LAPACK's: 1-based int32 row swaps, in
order.
"""
import math

import numpy as np

from .. import _dtype, return_types
from .._backend import openmp_kernels
from . import _compiled_functions
from ._common import _type_word, check_tensor, make, namespace_of, Node, record, sum_to, write_out
from .matrix_decompositions import (
    LinAlgError, LinalgSolveExBackward0, _batch_prefix, _first_nonzero, check_matrix, solve_operands,
)
from .shape import _broadcast_pair, _triangle_data
from .triangular import _permutation, _pivots_in_range, _substitute, identity, lu_unpack, row_order, solve_triangular
from ..autograd._dual import jvp_by_transposition

__all__ = []

linalg_lu_factor = return_types._return_type("linalg_lu_factor", ("LU", "pivots"))
linalg_lu_factor_ex = return_types._return_type("linalg_lu_factor_ex", ("LU", "pivots", "info"))
linalg_lu = return_types._return_type("linalg_lu", ("P", "L", "U"))
linalg_solve_ex = return_types._return_type("linalg_solve_ex", ("result", "info"))

# Columns factored one by one inside a panel; the trailing matrix is updated once per panel.
LU_BLOCK = 32


def _magnitude(xp, column):
    """The pivot search's sizes: NaN never wins, as in i?amax's comparisons (by >)."""
    size = xp.abs(column.real) + xp.abs(column.imag) if column.dtype.kind == "c" else xp.abs(column)
    return xp.where(xp.isnan(size), -xp.inf, size)


def getrf(data):
    """LAPACK's getrf on a (batch of) m x n matrices: (LU, pivots, info), with L's unit
    diagonal left out of LU, pivots 1-based (batch, min(m, n)) int32 and info 1 + the index of
    the first exactly zero pivot (0 when there is none). The factorization goes on past a zero
    pivot, as LAPACK's does. Real float32/float64 NumPy matrices go to the compiled recursive
    LU (``openmp_kernels.getrf_recursive``: the products on NumPy's CBLAS gemm, the panels of
    up to 32 columns with ``_factor_panel``'s arithmetic); elsewhere (complex, CuPy, no
    compiler) the blocked loop below, its real float32 and float64 panels by the compiled
    panel loop (``openmp_kernels.getrf_panel``)."""
    factored = getrf_compiled(data)
    if factored is not None:
        return factored
    xp = namespace_of(data)
    m, n = data.shape[-2:]
    k = min(m, n)
    count = math.prod(data.shape[:-2])
    batch = data.shape[:-2]
    a = xp.array(data.reshape((count, m, n)), copy=True)
    rows = xp.arange(count)
    pivots = xp.empty((count, k), dtype=np.int32)
    info = xp.zeros(count, dtype=np.int32)
    compiled = (xp is np and a.dtype in openmp_kernels._GETRF_PANELS and a.size
                and a.flags.c_contiguous)
    with np.errstate(all="ignore"):
        for start in range(0, k, LU_BLOCK):
            stop = min(start + LU_BLOCK, k)
            if not (compiled and openmp_kernels.getrf_panel(a, pivots, info, start, stop)):
                _factor_panel(xp, a, rows, pivots, info, start, stop)
            if stop < n:
                a[:, start:stop, stop:] = _substitute(a[:, start:stop, stop:], a[:, start:stop, start:stop],
                                                      False, False, True)
                if stop < m:
                    a[:, stop:, stop:] -= a[:, stop:, start:stop] @ a[:, start:stop, stop:]
    return a.reshape(data.shape), pivots.reshape(batch + (k,)), info.reshape(batch)


def getrf_compiled(data):
    """``getrf`` by the compiled recursive LU, for a real float32/float64 NumPy array with
    elements; None elsewhere, or where the loop is not built."""
    if type(data) is not np.ndarray or data.dtype not in openmp_kernels._RECURSIVE_GETRFS or not data.size:
        return None
    *batch, m, n = data.shape
    a = np.array(data.reshape((-1, m, n)), order="C")
    factored = openmp_kernels.getrf_recursive(a)
    if factored is None:
        return None
    pivots, info = factored
    batch = tuple(batch)
    return a.reshape(data.shape), pivots.reshape(batch + (min(m, n),)), info.reshape(batch)


def _factor_panel(xp, a, rows, pivots, info, start, stop):
    """Columns ``start``..``stop - 1`` of the (count, m, n) ``a`` factored one by one, in place:
    the pivot search, the swap of whole rows, the column below divided by the pivot and the
    panel's columns to the right updated."""
    m = a.shape[1]
    for j in range(start, stop):
        p = xp.argmax(_magnitude(xp, a[:, j:, j]), axis=1) + j
        pivots[:, j] = p + 1
        moved = p != j
        if bool(moved.any()):
            r, pr = rows[moved], p[moved]
            row = a[r, pr].copy()
            a[r, pr] = a[r, j]
            a[r, j] = row
        pivot = a[:, j, j]
        zero = pivot == 0
        info[(info == 0) & zero] = j + 1
        if j + 1 < m:
            a[:, j + 1:, j] /= xp.where(zero, 1, pivot)[:, None]
            if j + 1 < stop:
                a[:, j + 1:, j + 1:stop] -= a[:, j + 1:, j:j + 1] * a[:, j:j + 1, j + 1:stop]


def _check_lu_input(A, op, pivot):
    check_tensor(A, op.split(".")[-1], "A")
    if A._data.ndim < 2:
        raise RuntimeError(f"{op}: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(A._data.shape)} instead")
    dt = A._data.dtype
    if dt.kind not in "fc" or dt == np.float16:
        raise NotImplementedError(f"\"lu_cpu\" not implemented for '{_type_word(dt)}'")
    check_matrix(A, op, square=False, kernel="lu_cpu")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")


def _raise_zero_pivot(op, data, info):
    flat = info.reshape(-1)
    bad = _first_nonzero(flat)
    k = int(flat[bad])
    raise RuntimeError(f"{op}: {_batch_prefix(data, bad)}U[{k},{k}] is zero and using it on lu_solve "
                       "would result in a division by zero. If you still want to perform the "
                       "factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, "
                       "pivot)")


def _lu_grad(grad_L, grad_U, P, L, U):
    """torch's linalg_lu_backward: the gradient of A = P L U from those of L and U."""
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    if m == n:
        grad = None if grad_L is None else (L.mH @ grad_L).tril(-1)
        if grad_U is not None:
            upper = (grad_U @ U.mH).triu()
            grad = upper if grad is None else grad + upper
        grad = solve_triangular(U.mH, grad, upper=False, left=False)
        grad = solve_triangular(L.mH, grad, upper=True, unitriangular=True)
        return P @ grad
    from .shape import cat
    from .creation import zeros
    if m < n:
        grad = None if grad_L is None else L.mH @ grad_L
        if grad_U is not None:
            upper = grad_U.triu() @ U.mH
            grad = -upper if grad is None else grad - upper
        grad = solve_triangular(U[..., :k].mH, grad.tril(-1), upper=False, left=False)
        if grad_U is not None:
            grad = cat([grad + grad_U[..., :k].triu(), grad_U[..., k:]], -1)
        grad = solve_triangular(L.mH, grad, upper=True, unitriangular=True)
        if grad_U is None:
            grad = cat([grad, zeros(grad.shape[:-1] + (n - k,), dtype=grad.dtype, device=grad.device)], -1)
        return P @ grad
    grad = None if grad_U is None else grad_U @ U.mH
    if grad_L is not None:
        lower = L.mH @ grad_L.tril(-1)
        grad = -lower if grad is None else grad - lower
    grad = solve_triangular(L[..., :k, :].mH, grad.triu(), upper=True, unitriangular=True)
    if grad_L is not None:
        grad = cat([grad + grad_L[..., :k, :].tril(-1), grad_L[..., k:, :]], -2)
    grad = solve_triangular(U.mH, grad, upper=False, left=False)
    if grad_L is None:
        grad = cat([grad, zeros(grad.shape[:-2] + (m - k, n), dtype=grad.dtype, device=grad.device)], -2)
    return P @ grad


class LinalgLuFactorExBackward0(Node):
    __slots__ = ("pivots",)
    jvp = jvp_by_transposition

    def backward(self, grad, *unused):
        (LU,) = self.saved_tensors
        P, L, U = lu_unpack(LU, make(self.pivots))
        k = min(LU.shape[-2:])
        return _lu_grad(grad[..., :, :k], grad[..., :k, :], P, L, U),


def _lu_factor_ex(A, op, check_errors):
    data = A._data
    lu_data, pivots, info = getrf(data)
    if check_errors and bool(info.any()):
        _raise_zero_pivot(op, data, info)
    LU = make(lu_data)
    node = record(LinalgLuFactorExBackward0, (A,), LU, None, None)
    if node is not None:
        node.pivots = pivots
        node.save(LU)
    return LU, make(pivots), make(info)


def _python_lu_factor_ex(A, pivot=True, check_errors=False, out=None):
    _check_lu_input(A, "torch.lu_factor", pivot)
    result = linalg_lu_factor_ex(*_lu_factor_ex(A, "torch.linalg.lu_factor_ex", check_errors))
    return write_out(result, out, exact=True, op="linalg_lu_factor_ex")


def _python_lu_factor(A, pivot=True, out=None):
    _check_lu_input(A, "torch.lu_factor", pivot)
    LU, pivots, _ = _lu_factor_ex(A, "torch.linalg.lu_factor", True)
    return write_out(linalg_lu_factor(LU, pivots), out, exact=True, op="linalg_lu_factor")


# (where nothing records: the recursive LU loop called from C, ``_compiled_factorizations``)
_lu_factor_ex_entry = _compiled_functions.register(
    _python_lu_factor_ex, None, kind="lu_factor", addresses=openmp_kernels.recursive_getrf_addresses,
    specifics=lambda: (linalg_lu_factor_ex, False, *openmp_kernels.recursive_gemms(), False, 0, 0))
_lu_factor_entry = _compiled_functions.register(
    _python_lu_factor, None, kind="lu_factor", addresses=openmp_kernels.recursive_getrf_addresses,
    specifics=lambda: (linalg_lu_factor, True, *openmp_kernels.recursive_gemms(), False, 0, 0))


def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """The LU factorization with partial pivoting of a (batch of) matrices: LU (L below the
    diagonal, its unit diagonal left out, U on and above it), LAPACK's pivots (1-based int32)
    and ``info`` (1 + the index of the first zero pivot, 0 when there is none); raises only
    when ``check_errors``."""
    if pivot is True and check_errors is False and out is None:
        return _lu_factor_ex_entry[0](A)
    return _python_lu_factor_ex(A, pivot, check_errors, out)


def lu_factor(A, *, pivot=True, out=None):
    """The compact LU factorization with partial pivoting (A = P L U): LU and LAPACK's pivots
    (1-based int32), as ``lu_unpack`` reads them. Raises when a pivot is zero (use
    ``lu_factor_ex`` to go on)."""
    if pivot is True and out is None:
        return _lu_factor_entry[0](A)
    return _python_lu_factor(A, pivot, out)


class LinalgLuBackward0(Node):
    __slots__ = ()
    jvp = jvp_by_transposition

    def backward(self, grad_P=None, grad_L=None, grad_U=None):
        if grad_L is None and grad_U is None:
            return (None,)
        P, L, U = self.saved_tensors
        return _lu_grad(grad_L, grad_U, P, L, U),


def lu(A, *, pivot=True, out=None):
    """The LU factorization with partial pivoting ``A = P L U``: P a permutation matrix, L
    lower triangular with unit diagonal (m x k) and U upper triangular (k x n), k = min(m, n)."""
    if pivot is True and out is None:
        return _lu_entry[0](A)
    return _python_lu(A, pivot, out)


def _python_lu(A, pivot=True, out=None):
    _check_lu_input(A, "linalg.lu", pivot)
    data = A._data
    xp = namespace_of(data)
    lu_data, pivots, _ = getrf(data)
    m, n = data.shape[-2:]
    k = min(m, n)
    unpacked = openmp_kernels.lu_unpack(lu_data, pivots)
    if unpacked is not None:
        P, L, U = map(make, unpacked)
    else:
        P = make(_permutation(xp, pivots, m, data.dtype))
        L = make(_triangle_data("tril", lu_data[..., :, :k], -1) + identity(xp, m, k, data.dtype))
        U = make(_triangle_data("triu", lu_data[..., :k, :], 0))
    node = record(LinalgLuBackward0, (A,), None, L, U)
    if node is not None:
        node.save(P, L, U)
    return write_out(linalg_lu(P, L, U), out, exact=True, op="linalg_lu")


# (where nothing records: the recursive LU loop and the unpacking loop called from C)
_lu_entry = _compiled_functions.register(
    _python_lu, None, kind="lu_factor", addresses=openmp_kernels.recursive_getrf_addresses,
    specifics=lambda: (linalg_lu, False, *openmp_kernels.recursive_gemms(), True,
                       *(address or 0 for address in openmp_kernels.lu_unpack_addresses())))


# ----------------------------------------------------------------------------------------
# Solving from the factors

def lu_solve_arrays(lu_data, pivots, b, transpose, conjugate):
    """X with op(A) X = b, A = P L U given by getrf's ``lu_data`` and ``pivots``: op(A) = A or
    A^T, on the conjugate of A when ``conjugate``. Batch dimensions broadcast."""
    solved = _lu_solve_compiled(lu_data, pivots, b, transpose)
    if solved is not None:
        return solved
    xp = namespace_of(lu_data)
    n = lu_data.shape[-1]
    batch = tuple(np.broadcast_shapes(lu_data.shape[:-2], b.shape[:-2]))
    factors = xp.conj(lu_data) if conjugate else lu_data
    order = row_order(xp, pivots, n)[..., :, None]
    if not transpose:   # U^-1 L^-1 P^T b
        if pivots.ndim == 1:   # one order for every matrix: a gather of rows
            permuted = xp.take(b, order[:, 0], axis=-2)
        else:
            permuted = xp.take_along_axis(xp.broadcast_to(b, batch + b.shape[-2:]),
                                          xp.broadcast_to(order, batch + (n, 1)), axis=-2)
        y = _substitute(permuted, factors, False, False, True)
        return _substitute(y, factors, True, False, False)
    y = _substitute(b, factors, True, True, False)     # P L^-T U^-T b
    y = _substitute(y, factors, False, True, True)
    x = xp.empty_like(y)
    order = xp.broadcast_to(order, y.shape[:-2] + (n, 1))
    xp.put_along_axis(x, xp.broadcast_to(order, y.shape), y, axis=-2)
    return x


def _lu_solve_compiled(lu_data, pivots, b, transpose):
    """``lu_solve_arrays``' result by one call of the compiled solve (``openmp_kernels.getrs_recursive``:
    its steps in C) for real float32/float64 NumPy arrays with pivots in range, the factors' batch
    B's or a single matrix; None elsewhere."""
    if (type(lu_data) is not np.ndarray or type(b) is not np.ndarray or lu_data.dtype not in _GETRS_DTYPES
            or b.dtype != lu_data.dtype or type(pivots) is not np.ndarray):
        return None
    n, k = b.shape[-2:]
    if lu_data.shape[:-2] == b.shape[:-2] or lu_data.ndim == 2:
        batch = b.shape[:-2]
    else:
        return None
    if not pivots.size or not _pivots_in_range(pivots, n):
        return None
    count = math.prod(batch)
    solved = openmp_kernels.getrs_recursive(lu_data.reshape((-1, n, n)), pivots.reshape((-1, n)),
                                            np.ascontiguousarray(b).reshape((count, n, k)), transpose)
    return None if solved is None else solved.reshape(batch + (n, k))


_GETRS_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


class LinalgLuSolveBackward0(Node):
    __slots__ = ("left", "adjoint", "pivots", "lu_shape", "b_shape")
    jvp = jvp_by_transposition

    def backward(self, grad):
        LU, X = self.saved_tensors
        need_LU, _, need_B = (fn is not None for fn, _ in self.next_functions)
        pivots = make(self.pivots)
        grad_B = lu_solve(LU, pivots, grad, left=self.left, adjoint=not self.adjoint)
        grad_LU = None
        if need_LU:
            # the gradient of the matrix A = P L U the factors stand for, then of L and U
            if self.left:
                grad_A = -(X @ grad_B.mH) if self.adjoint else -(grad_B @ X.mH)
            else:
                grad_A = -(grad_B.mH @ X) if self.adjoint else -(X.mH @ grad_B)
            P, L, U = lu_unpack(LU, pivots)
            grad_PA = P.mT @ grad_A
            grad_LU = sum_to((grad_PA @ U.mH).tril(-1) + (L.mH @ grad_PA).triu(), self.lu_shape)
        return grad_LU, None, sum_to(grad_B, self.b_shape) if need_B else None


def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """The solution X of ``A X = B`` from ``A``'s LU factorization (``LU`` and ``pivots`` as
    ``lu_factor`` returns them); ``X A = B`` when ``left=False``, with ``A^H`` for ``A`` when
    ``adjoint=True``. Batch dimensions broadcast."""
    op = "linalg.lu_solve"
    check_tensor(LU, "linalg_lu_solve", "LU")
    check_tensor(pivots, "linalg_lu_solve", "pivots")
    check_tensor(B, "linalg_lu_solve", "B")
    if B._data.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor B must have at least 2 dimensions.")
    check_matrix(LU, "torch.linalg.lu_solve", arg="A", kernel="lu_solve_cpu")
    n = LU.shape[-1]
    rows, cols = B.shape[-2:]
    if (rows if left else cols) != n:
        raise RuntimeError(f"{op}: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {rows}x{cols})")
    if B._data.dtype != LU._data.dtype:
        raise RuntimeError(f"{op}: Expected LU and B to have the same dtype, but found LU of type "
                           f"{_type_word(LU._data.dtype)} and B of type {_type_word(B._data.dtype)} "
                           "instead")
    if pivots.dtype != _dtype.int32:
        raise RuntimeError(f"{op}: pivots should be a Tensor of scalar type torch.int32")
    if tuple(pivots.shape) != tuple(LU.shape[:-1]):
        raise RuntimeError(f"{op}: Number of pivots per batch should be same as the dimension of the "
                           "matrix")
    _broadcast_pair(B._data.shape[:-2], LU._data.shape[:-2])
    xp = namespace_of(LU._data)
    if left:
        solution = lu_solve_arrays(LU._data, pivots._data, B._data, adjoint, adjoint)
    else:   # X op(A) = B: op(A)^T X^T = B^T
        solution = xp.swapaxes(lu_solve_arrays(LU._data, pivots._data, xp.swapaxes(B._data, -1, -2),
                                               not adjoint, adjoint), -1, -2)
    result = make(solution)
    node = record(LinalgLuSolveBackward0, (LU, pivots, B), result)
    if node is not None:
        node.left, node.adjoint, node.pivots = left, adjoint, pivots._data
        node.lu_shape, node.b_shape = LU._data.shape, B._data.shape
        node.save(LU, result)
    return write_out(result, out, exact=True, op="linalg_lu_solve")


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """``linalg.solve``'s solution with ``info`` (1 + the index of the first zero pivot of A's
    LU factorization, 0 when A is invertible): a singular A gives infinities or NaNs, as
    LAPACK's substitutions through the zero pivot do, instead of an error, unless
    ``check_errors``."""
    B2, vector = solve_operands(A, B, left, "linalg.solve")
    data = A._data
    lu_data, pivots, info = getrf(data)
    if check_errors and bool(info.any()):
        bad = _first_nonzero(info.reshape(-1))
        raise LinAlgError(f"torch.linalg.solve_ex: {_batch_prefix(data, bad)}The solver failed because "
                          "the input matrix is singular.")
    if left:
        X = _solve_from_factors(A, B2, lu_data, pivots, False)
    else:
        X = _solve_from_factors(A.mT, B2.mT, lu_data, pivots, True).mT
    result = linalg_solve_ex(X.squeeze(-1) if vector else X, make(info))
    return write_out(result, out, exact=True, op="linalg_solve_ex")


def _solve_from_factors(A, B, lu_data, pivots, transpose):
    """X with A X = B (matrix B, batch dimensions broadcast), ``A`` given by getrf's factors
    of A (``transpose``: of A^T), recorded as ``linalg.solve``'s node."""
    _broadcast_pair(A._data.shape[:-2], B._data.shape[:-2])
    result = make(lu_solve_arrays(lu_data, pivots, B._data, transpose, False))
    node = record(LinalgSolveExBackward0, (A, B), result)
    if node is not None:
        node.save(A, result)
        node.b_shape = B._data.shape
    return result
