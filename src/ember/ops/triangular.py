"""Solvers for triangular and Cholesky-factored systems, and unpacking LU factors:
``triangular_solve`` (deprecated in torch), ``cholesky_solve``, ``cholesky_inverse`` and
``lu_unpack``."""
import functools
import math

import numpy as np

from .._backend import cblas, lapack, openmp_kernels
from ..autograd.graph import Node
from ..return_types import lu_unpack as _lu_unpack_result, triangular_solve as _triangular_solve_result
from . import _compiled_functions
from ._common import (
    _type_word, check_tensor, make, method, namespace_of, record, sum_to, Tensor, warn_once, with_out, write_out,
)
from .creation import empty, zeros
from .shape import _broadcast_pair, _triangle_data, broadcast_shapes, cat
from .matrix_decompositions import check_matrix, LinAlgError
from ..autograd._dual import jvp_by_transposition

__all__ = ["triangular_solve", "cholesky_solve", "cholesky_inverse", "lu_unpack"]

_TRIANGULAR_SOLVE_DEPRECATED = (
    "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand will be "
    "removed in a future PyTorch release.\ntorch.linalg.solve_triangular has its arguments reversed "
    "and does not return a copy of one of the inputs.\nX = torch.triangular_solve(B, A).solution\n"
    "should be replaced with\nX = torch.linalg.solve_triangular(A, B).")

def _warn_once(message):
    warn_once(message, stacklevel=4)


def _check_rhs_and_matrix(op, b, A, b_name="b", a_name="A"):
    check_tensor(b, op.split(".")[-1], b_name)
    check_tensor(A, op.split(".")[-1], a_name)
    for t, name in ((b, b_name), (A, a_name)):
        if t.dim() < 2:
            raise RuntimeError(f"{op}: Expected {name} to have at least 2 dimensions, but it has "
                               f"{t.dim()} dimensions instead")
    if b.dtype != A.dtype:
        raise RuntimeError(f"Expected {b_name} and {a_name} to have the same dtype, but found "
                           f"{b_name} of type {_type_word(b._data.dtype)} and {a_name} of type "
                           f"{_type_word(A._data.dtype)} instead.")


def _triangle_inverse(A, upper):
    """The inverse of the triangle of ``A``, as LAPACK's trtri gives it: where the triangle is
    finite, one substitution over the identity's columns; otherwise column by column, each from
    its own corner of ``A``, so that a non-finite entry reaches only the columns that read it."""
    xp = namespace_of(A)
    n = A.shape[-1]
    triangle = xp.triu(A) if upper else xp.tril(A)
    if bool(xp.isfinite(triangle).all()):
        return _substitute(xp.eye(n, dtype=A.dtype), A, upper, False, False)
    inverse = xp.zeros(A.shape, dtype=A.dtype)
    for j in range(n):
        part = slice(0, j + 1) if upper else slice(j, n)
        rhs = xp.zeros((j + 1 if upper else n - j, 1), dtype=A.dtype)
        rhs[-1 if upper else 0] = 1
        inverse[..., part, j:j + 1] = _substitute(rhs, A[..., part, part], upper, False, False)
    return inverse


# Rows solved one by one inside a block; the rows already solved reach a block through one
# matrix product.
SUBSTITUTION_BLOCK = 32


def _substitute(b, A, upper, transpose, unitriangular):
    """X with op(T) X = b, T the triangle of ``A``, infinities and zeros on the diagonal giving
    LAPACK's infinities and NaNs, not a singular-matrix error: real float32 and float64 by the
    compiled recursive solve (``openmp_kernels.trsm_recursive``), elsewhere by BLAS's trsm, one
    call per matrix, for batches of at most n n-by-n matrices (each call costs about what a row
    of the substitution costs for the whole batch), else by blocked substitution on the arrays."""
    xp = namespace_of(A)
    if b.shape[:-2] == A.shape[:-2]:
        batch = b.shape[:-2]
        x = xp.array(b, dtype=xp.result_type(A.dtype, b.dtype), order="C")
    else:
        batch = tuple(np.broadcast_shapes(b.shape[:-2], A.shape[:-2]))
        x = xp.array(xp.broadcast_to(b, batch + b.shape[-2:]), dtype=xp.result_type(A.dtype, b.dtype), order="C")
    if xp is np and x.dtype == A.dtype and x.dtype in openmp_kernels._RECURSIVE_TRSMS:
        n, k = x.shape[-2:]
        count = math.prod(batch)
        if math.prod(A.shape[:-2]) == 1:
            matrices = A.reshape((1, n, n))
        elif A.shape[:-2] == batch:
            matrices = A.reshape((count, n, n))
        else:
            matrices = np.ascontiguousarray(np.broadcast_to(A, batch + (n, n))).reshape((count, n, n))
        if openmp_kernels.trsm_recursive(matrices, x.reshape((count, n, k)), upper, transpose, unitriangular):
            return x
    a = xp.broadcast_to(A, batch + A.shape[-2:])
    if math.prod(batch) <= A.shape[-1] and cblas.trsm(a, x, upper, transpose, unitriangular):
        return x
    if transpose:
        a, upper = xp.swapaxes(a, -1, -2), not upper
    n = a.shape[-1]
    starts = range(0, n, SUBSTITUTION_BLOCK)
    blocks = [(s, min(s + SUBSTITUTION_BLOCK, n)) for s in (reversed(starts) if upper else starts)]
    with np.errstate(all="ignore"):
        for start, stop in blocks:
            done = slice(stop, n) if upper else slice(0, start)
            if done.start != done.stop:
                x[..., start:stop, :] -= a[..., start:stop, done] @ x[..., done, :]
            for i in (range(stop - 1, start - 1, -1) if upper else range(start, stop)):
                inside = slice(i + 1, stop) if upper else slice(start, i)
                if inside.start != inside.stop:
                    x[..., i, :] -= (a[..., i:i + 1, inside] @ x[..., inside, :])[..., 0, :]
                if not unitriangular:
                    x[..., i, :] /= a[..., i, i][..., None]
    return x


class TriangularSolveBackward0(Node):
    __slots__ = ("upper", "transpose", "unitriangular", "b_shape", "a_shape")
    jvp = jvp_by_transposition

    def backward(self, grad_x, grad_m=None):
        A, X = self.saved_tensors
        grad_b = grad_A = None
        if grad_x is not None:
            grad_b = _triangular_solve(grad_x, A, self.upper, not self.transpose,
                                       self.unitriangular)[0]
            if self.next_functions[1][0] is not None:
                grad_A = -(X @ grad_b.mT) if self.transpose else -(grad_b @ X.mT)
                unit = int(self.unitriangular)
                grad_A = grad_A.triu(unit) if self.upper else grad_A.tril(-unit)
        if grad_m is not None and self.next_functions[1][0] is not None:
            grad_A = grad_m if grad_A is None else grad_A + grad_m
        if grad_A is not None:
            grad_A = sum_to(grad_A, self.a_shape)
        if grad_b is not None and self.next_functions[0][0] is not None:
            grad_b = sum_to(grad_b, self.b_shape)
        else:
            grad_b = None
        return grad_b, grad_A


def _triangular_solve(b, A, upper, transpose, unitriangular):
    batch = _batch_shape(b, A)
    solution = make(_substitute(b._data, A._data, upper, transpose, unitriangular))
    cloned = make(namespace_of(A._data).array(
        namespace_of(A._data).broadcast_to(A._data, batch + tuple(A.shape[-2:]))))
    node = record(TriangularSolveBackward0, (b, A), solution, cloned)
    if node is not None:
        node.upper, node.transpose, node.unitriangular = upper, transpose, unitriangular
        node.b_shape, node.a_shape = b._data.shape, A._data.shape
        node.save(A, solution)
    return solution, cloned


@method()
@with_out(op="triangular_solve")
def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False):
    """Solves ``A X = input`` (``A^T X = input`` with ``transpose=True``) for a square upper
    (or lower) triangular ``A``, reading only its triangle (and taking its diagonal as ones
    with ``unitriangular=True``). Returns the solution and a copy of ``A``."""
    _warn_once(_TRIANGULAR_SOLVE_DEPRECATED)
    return _triangular_solve_entry[0](input, A, upper, transpose, unitriangular)


def _python_triangular_solve(b, A, upper, transpose, unitriangular):
    _check_rhs_and_matrix("torch.triangular_solve", b, A)
    check_matrix(A, "torch.triangular_solve", kernel="triangular_solve_cpu")
    if b.shape[-2] != A.shape[-1]:
        raise RuntimeError(f"Incompatible matrix sizes for triangular_solve: each A matrix is "
                           f"{A.shape[-2]} by {A.shape[-1]} but each b matrix is {b.shape[-2]} by "
                           f"{b.shape[-1]}")
    return _triangular_solve_result(*_triangular_solve(b, A, upper, transpose, unitriangular))


def _batch_shape(b, A):
    return tuple(broadcast_shapes(b.shape[:-2], A.shape[:-2]))


class CholeskySolveBackward0(Node):
    __slots__ = ("upper", "b_shape")
    jvp = jvp_by_transposition

    def backward(self, grad):
        B, L, X = self.saved_tensors
        grad_B = cholesky_solve(grad, L, self.upper)
        grad_L = None
        if self.next_functions[1][0] is not None:
            common = grad_B @ X.mH
            common = common + common.mH
            grad_L = sum_to(-(L @ common) if self.upper else -(common @ L), L._data.shape)
        if self.next_functions[0][0] is None:
            grad_B = None
        else:
            grad_B = sum_to(grad_B, self.b_shape)
        return grad_B, grad_L


@method()
@with_out(op="cholesky_solve")
def cholesky_solve(input, input2, upper=False):
    """Computes the solution of ``A X = input`` for a symmetric positive-definite ``A`` given
    its Cholesky factor ``input2`` (lower triangular L, A = L L^H; upper U, A = U^H U, with
    ``upper=True``); batch dimensions broadcast."""
    return _cholesky_solve_entry[0](input, input2, upper, upper, False)


def _python_cholesky_solve(input, input2, upper, _transpose, _unitriangular):
    """``cholesky_solve`` in every case its compiled function (``_compiled_factorizations``, the triangular
    solve's kind called with ``upper`` as the first solve's transpose flag) leaves to Python."""
    B, L = input, input2
    check_tensor(B, "cholesky_solve", "input")
    check_tensor(L, "cholesky_solve", "input2")
    if B.dim() < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {B.dim()} dimensions "
                           "instead")
    if L.dim() < 2:
        raise RuntimeError(f"u should have at least 2 dimensions, but has {L.dim()} dimensions "
                           "instead")
    if B.dtype != L.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{_type_word(B._data.dtype)} and A of type {_type_word(L._data.dtype)} "
                           "instead.")
    check_matrix(L, "cholesky_solve", arg="A", kernel="cholesky_solve_cpu")
    if B.shape[-2] != L.shape[-1]:
        raise RuntimeError(f"Incompatible matrix sizes for cholesky_solve: each A matrix is "
                           f"{L.shape[-2]} by {L.shape[-1]} but each b matrix is {B.shape[-2]} by "
                           f"{B.shape[-1]}")
    # LAPACK's potrs: two triangular solves, L Y = B then L^H X = Y (U^H Y = B, U X = Y)
    first = _substitute(B._data, L._data, upper, upper, False)
    result = make(_substitute(first, L._data, upper, not upper, False))
    node = record(CholeskySolveBackward0, (B, L), result)
    if node is not None:
        node.upper = upper
        node.b_shape = B._data.shape
        node.save(B, L, result)
    return result


class CholeskyInverseBackward0(Node):
    __slots__ = ("upper",)

    def jvp(self, tangent):
        # X = (F F^H)^-1 reads one triangle of F: dX = -X dF F^H X - (its conjugate transpose),
        # with F and dF that triangle (the backward, transposed, would take the other too)
        factor, inverse = self.primals[0], self.results[0]
        lower = factor.mH.tril() if self.upper else factor.tril()
        d_lower = tangent.mH.tril() if self.upper else tangent.tril()
        partial = -(inverse @ d_lower @ lower.mH @ inverse)
        return partial + partial.mH

    def backward(self, grad):
        L, inverse = self.saved_tensors
        common = grad + grad.mH
        common = inverse @ (common @ inverse)
        return (-(L @ common) if self.upper else -(common @ L)),


@method()
@with_out(op="cholesky_inverse")
def cholesky_inverse(input, upper=False):
    """Computes the inverse of a symmetric positive-definite matrix ``A`` given its Cholesky
    factor ``input`` (lower triangular L, A = L L^H; upper U, A = U^H U, with
    ``upper=True``)."""
    L = input
    check_tensor(L, "cholesky_inverse")
    if L._data.ndim >= 2 and L._data.dtype.kind not in "fc":
        raise NotImplementedError(f"\"cholesky_inverse_out_cpu\" not implemented for "
                                  f"'{_type_word(L._data.dtype)}'")
    check_matrix(L, "cholesky_inverse", kernel="cholesky_inverse_out_cpu")
    data = L._data
    n = data.shape[-1]
    found = lapack.potri(data.reshape((math.prod(data.shape[:-2]), n, n)), upper)
    if found is not None:   # (real NumPy factors: LAPACK's potri, as torch)
        inverses, info = found
        if info.any():
            bad = int(np.flatnonzero(info)[0])
            prefix = f"(Batch element {bad}): " if data.ndim > 2 else ""
            raise LinAlgError(f"cholesky_inverse: {prefix}The diagonal element {int(info[bad])} is zero, the "
                              "inversion could not be completed because the input matrix is singular.")
        result = make(inverses.reshape(data.shape))
    else:   # LAPACK's potri's steps: the triangle's inverse, then its product with its own transpose
        xp = namespace_of(data)
        inverse = _triangle_inverse(data, upper)
        inverse_h = xp.conj(xp.swapaxes(inverse, -1, -2))
        result = make(inverse @ inverse_h if upper else inverse_h @ inverse)
    node = record(CholeskyInverseBackward0, (L,), result)
    if node is not None:
        node.upper = upper
        node.save(L, result)
    return result


def _pivots_in_range(pivots, m):
    """Whether every 1-based pivot names one of ``m`` rows."""
    if pivots.__class__ is np.ndarray:   # (the ufuncs' reductions, without the methods' Python wrappers)
        return bool(np.minimum.reduce(pivots, None) >= 1) and bool(np.maximum.reduce(pivots, None) <= m)
    return bool(pivots.min() >= 1) and bool(pivots.max() <= m)


def row_order(xp, pivots, m):
    """The rows of P^T A as indices into A's rows, from LAPACK's sequential swaps (batched)."""
    if (xp is np and pivots.dtype == np.int32 and pivots.size and _pivots_in_range(pivots, m)
            and (order := openmp_kernels.row_order(
                pivots.reshape((-1, pivots.shape[-1])), m)) is not None):   # the swaps in C
        return order.reshape(pivots.shape[:-1] + (m,))
    flat = pivots.reshape((math.prod(pivots.shape[:-1]), pivots.shape[-1])) - 1
    order = xp.broadcast_to(xp.arange(m), (flat.shape[0], m)).copy()
    rows = xp.arange(flat.shape[0])
    for i in range(flat.shape[1]):
        j = flat[:, i]
        swapped = order[rows, j].copy()
        order[rows, j] = order[:, i]
        order[:, i] = swapped
    return order.reshape(pivots.shape[:-1] + (m,))


def _permutation(xp, pivots, m, dtype):
    """P with A = P L U from LAPACK's 1-based sequential row swaps ``pivots``."""
    return xp.swapaxes(identity(xp, m, m, dtype)[row_order(xp, pivots, m)], -1, -2)


_INT32 = np.dtype(np.int32)


@functools.lru_cache(maxsize=64)
def _numpy_identity(m, n, dtype):
    eye = np.eye(m, n, dtype=dtype)
    eye.flags.writeable = False
    return eye


def identity(xp, m, n, dtype):
    """The (m, n) identity matrix of ``dtype`` (NumPy's: one read-only array per shape and dtype, made
    once)."""
    return _numpy_identity(m, n, np.dtype(dtype)) if xp is np else xp.eye(m, n, dtype=dtype)


class LuUnpackBackward0(Node):
    """L and U of ``lu_unpack`` (its outputs 1 and 2; P has no gradient): LU_data's gradient is
    L's gradient below the diagonal and U's on and above it, each where it came from."""
    __slots__ = ("m", "n")

    def backward(self, grad_P=None, grad_L=None, grad_U=None):
        m, n = self.m, self.n
        total = None
        if grad_L is not None:
            total = _padded(grad_L.tril(-1), m, n)
        if grad_U is not None:
            upper = _padded(grad_U.triu(), m, n)
            total = upper if total is None else total + upper
        return (total,)

    def jvp(self, tangent):
        k = min(self.m, self.n)
        lower, upper = tangent[..., :, :k].tril(-1), tangent[..., :k, :].triu()
        return None, lower, upper


def _padded(block, m, n):
    """``block`` (the leading rows or columns of an m x n matrix) with zeros after it."""
    rows, columns = block.shape[-2:]
    batch = tuple(block.shape[:-2])
    if rows < m:
        block = cat([block, zeros(batch + (m - rows, columns), dtype=block.dtype, device=block.device)], -2)
    if columns < n:
        block = cat([block, zeros(batch + (m, n - columns), dtype=block.dtype, device=block.device)], -1)
    return block


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """Unpacks the LU decomposition returned by ``linalg.lu_factor`` into the P, L and U
    matrices (A = P L U); L and U are empty with ``unpack_data=False``, P with
    ``unpack_pivots=False``."""
    if out is None and unpack_data.__class__ is bool and unpack_pivots.__class__ is bool and (unpack_data or
                                                                                             unpack_pivots):
        return _lu_unpack_entries[unpack_data, unpack_pivots][0](LU_data, LU_pivots)
    return _checked_lu_unpack(LU_data, LU_pivots, unpack_data, unpack_pivots, out=out)


def _checked_lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    check_tensor(LU_data, "lu_unpack", "LU_data")
    check_tensor(LU_pivots, "lu_unpack", "LU_pivots")
    data, pivots = LU_data._data, LU_pivots._data
    if data.ndim < 2:
        raise RuntimeError("torch.lu_unpack: Expected tensor to have at least 2 dimensions, but it "
                           f"has {data.ndim} dimensions instead")
    if pivots.dtype != _INT32:
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of "
                           "torch.int32 dtype.\nNote: this function is intended to be used with "
                           "the output produced by torch.linalg.lu_factor")
    m, n = data.shape[-2:]
    k = min(m, n)
    xp = namespace_of(data)

    def nothing():   # (an empty tensor of LU_data's dtype and device)
        return make(np.empty(0, data.dtype)) if xp is np else empty(0, dtype=LU_data.dtype, device=LU_data.device)
    if unpack_pivots and pivots.size and not _pivots_in_range(pivots, m):
        raise RuntimeError("pivots passed to lu_unpack must be between 1 and LU.size(-2) "
                           "inclusive.Did you properly pass the result of lu_factor?")
    unpacked = (openmp_kernels.lu_unpack(data, pivots, unpack_data, unpack_pivots)
                if unpack_data or unpack_pivots else None)
    if unpack_data:
        if unpacked is not None:
            L, U = make(unpacked[1]), make(unpacked[2])
        else:
            lower = _triangle_data("tril", data[..., :, :k], -1)
            diagonal = xp.arange(k)
            lower[..., diagonal, diagonal] = 1
            L, U = make(lower), make(_triangle_data("triu", data[..., :k, :], 0))
        node = record(LuUnpackBackward0, (LU_data,), None, L, U)
        if node is not None:
            node.m, node.n = m, n
    else:
        L, U = nothing(), nothing()
    P = nothing()
    if unpack_pivots:
        if unpacked is not None:
            P = make(unpacked[0])
        else:
            P = make(_permutation(xp, pivots, m, data.dtype))
            if P._data.shape[:-2] != data.shape[:-2]:
                P = P.expand(*data.shape[:-2], m, m).clone()
    return write_out(_lu_unpack_result(P, L, U), out, op="lu_unpack")


def _lu_unpack_entry(data, pivots):
    """The compiled function of lu_unpack with these flags (``_compiled_factorizations``: where nothing
    records, the unpacking loop called from C)."""
    def _python_lu_unpack(LU_data, LU_pivots):
        return _checked_lu_unpack(LU_data, LU_pivots, data, pivots)
    return _compiled_functions.register(_python_lu_unpack, None, kind="lu_unpack",
                                        addresses=openmp_kernels.lu_unpack_addresses,
                                        specifics=(_lu_unpack_result, data, pivots))


_lu_unpack_entries = {flags: _lu_unpack_entry(*flags) for flags in ((True, True), (True, False), (False, True))}


class LinalgSolveTriangularBackward0(Node):
    __slots__ = ("upper", "left", "unitriangular", "a_shape", "b_shape")
    jvp = jvp_by_transposition

    def backward(self, grad):
        A, X = self.saved_tensors
        need_A, need_B = (fn is not None for fn, _ in self.next_functions)
        grad_B = solve_triangular(A.mH, grad, upper=not self.upper, left=self.left,
                                  unitriangular=self.unitriangular)
        grad_A = None
        if need_A:
            grad_A = -(grad_B @ X.mH) if self.left else -(X.mH @ grad_B)
            unit = int(self.unitriangular)
            grad_A = sum_to(grad_A.triu(unit) if self.upper else grad_A.tril(-unit), self.a_shape)
        return grad_A, sum_to(grad_B, self.b_shape) if need_B else None


def _check_solve_triangular(A, B, left):
    check_tensor(A, "linalg_solve_triangular", "A")
    check_tensor(B, "linalg_solve_triangular", "B")
    op = "linalg.solve_triangular"
    if B.dim() < 2:
        raise RuntimeError(f"{op}: The input tensor B must have at least 2 dimensions.")
    if A.dim() < 2:
        raise RuntimeError(f"{op}: The input tensor A must have at least 2 dimensions.")
    dt = A._data.dtype
    if dt.kind not in "fc":   # torch's kernel dispatch refuses every other dtype of A
        raise NotImplementedError(f"\"triangular_solve_cpu\" not implemented for '{_type_word(dt)}'")
    check_matrix(A, op, kernel="triangular_solve_cpu")
    n = A.shape[-1]
    rows, cols = B.shape[-2:]
    if (rows if left else cols) != n:
        raise RuntimeError(f"{op}: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {rows}x{cols})")
    _broadcast_pair(B._data.shape[:-2], A._data.shape[:-2])   # torch's message when they do not


def solve_triangular(input, B, *, upper=None, left=True, unitriangular=False, out=None):
    """The solution X of ``A X = B`` (``X A = B`` when ``left=False``) for a square upper (or
    lower, ``upper=False``) triangular ``A``, reading only its triangle, its diagonal taken as
    ones with ``unitriangular=True``. Batch dimensions broadcast; the result has ``A``'s
    dtype."""
    if left is True and out is None and upper.__class__ is bool and unitriangular.__class__ is bool:
        return _solve_triangular_entry[0](B, input, upper, False, unitriangular)
    return _checked_solve_triangular(input, B, upper, left, unitriangular, out)


def _python_solve_triangular(B, A, upper, transpose, unitriangular):
    """``solve_triangular``'s left solve, with the compiled function's arguments (``transpose`` False)."""
    return _checked_solve_triangular(A, B, upper, True, unitriangular, None)


def _checked_solve_triangular(input, B, upper, left, unitriangular, out):
    A = input
    if upper is None:   # a required keyword-only argument, with torch's message
        raise TypeError('linalg_solve_triangular() missing 1 required positional arguments: "upper"')
    _check_solve_triangular(A, B, left)
    if out is not None and isinstance(out, Tensor) and out._data.dtype != A._data.dtype:
        raise RuntimeError(f"expected scalar type {_type_word(A._data.dtype)} but found "
                           f"{_type_word(out._data.dtype)}")
    if B._data.dtype != A._data.dtype:
        B = B.to(A.dtype)
    if left:
        solution = _substitute(B._data, A._data, upper, False, unitriangular)
    else:
        xp = namespace_of(A._data)
        solution = xp.swapaxes(_substitute(xp.swapaxes(B._data, -1, -2), A._data, upper, True,
                                           unitriangular), -1, -2)
    result = make(solution)
    node = record(LinalgSolveTriangularBackward0, (A, B), result)
    if node is not None:
        node.upper, node.left, node.unitriangular = upper, left, unitriangular
        node.a_shape, node.b_shape = A._data.shape, B._data.shape
        node.save(A, result)
    return write_out(result, out, exact=True, op="linalg_solve_triangular")


# (where nothing records: the recursive triangular solve called from C, ``_compiled_factorizations``)
_SOLVE_FORMS = ("plain", "with_clone", "cholesky")   # (``enum solve_form`` in the C source)
_triangular_solve_entry = _compiled_functions.register(
    _python_triangular_solve, None, kind="triangular_solve", addresses=openmp_kernels.recursive_trsm_addresses,
    specifics=lambda: (_triangular_solve_result, _SOLVE_FORMS.index("with_clone"), *openmp_kernels.recursive_gemms()))
_solve_triangular_entry = _compiled_functions.register(
    _python_solve_triangular, None, kind="triangular_solve", addresses=openmp_kernels.recursive_trsm_addresses,
    specifics=lambda: (None, _SOLVE_FORMS.index("plain"), *openmp_kernels.recursive_gemms()))
_cholesky_solve_entry = _compiled_functions.register(
    _python_cholesky_solve, None, kind="triangular_solve", addresses=openmp_kernels.recursive_trsm_addresses,
    specifics=lambda: (None, _SOLVE_FORMS.index("cholesky"), *openmp_kernels.recursive_gemms()))
