"""Matrix decompositions and the ops built on them, with gradients: inverse, determinant,
solve, Cholesky, QR, SVD, symmetric eigendecomposition, pseudo-inverse, cross products and
pairwise distances.

Forwards run NumPy's batched ``linalg`` (LAPACK) on the leading batch dimensions. Backwards
are torch's formulas (``FunctionsManual``) for real inputs, written with ember ops so that
``create_graph=True`` differentiates them again. The public names live in ``ember.linalg``;
this module exports the top-level ones (``ember.det``, ``ember.inverse``, ``ember.svd``, ...).
"""
import functools
import math

import numpy as np

from .. import _dtype, return_types
from . import _compiled_functions
from ._common import (
    check_tensor, forward_mode, grad_state, make, method, namespace_of, Node, record, sum_to, Tensor,
    with_out, wrap_dim,
)
from ._common import _type_word
from .shape import _broadcast_pair
from ..amp.policy import autocast_policy
from .._backend import lapack, openmp_kernels, products
from .._backend.precision import narrowed, widened
from ..autograd._dual import jvp_by_transposition

__all__ = ["det", "logdet", "slogdet", "inverse", "cholesky", "svd", "qr", "cdist", "pdist",
           "dist"]

_new_return_type = return_types._return_type
linalg_inv_ex = _new_return_type("linalg_inv_ex", ("inverse", "info"))
linalg_cholesky_ex = _new_return_type("linalg_cholesky_ex", ("L", "info"))
linalg_slogdet = _new_return_type("linalg_slogdet", ("sign", "logabsdet"))
slogdet_type = _new_return_type("slogdet", ("sign", "logabsdet"))
linalg_qr = _new_return_type("linalg_qr", ("Q", "R"))
qr_type = _new_return_type("qr", ("Q", "R"))
linalg_svd = _new_return_type("linalg_svd", ("U", "S", "Vh"))
svd_type = _new_return_type("svd", ("U", "S", "V"))
linalg_eigh = _new_return_type("linalg_eigh", ("eigenvalues", "eigenvectors"))


class LinAlgError(RuntimeError):
    """Raised when a decomposition cannot be computed (singular or not positive-definite
    input), as ``torch.linalg.LinAlgError``."""


# ----------------------------------------------------------------------------------------
# Argument checks with torch's messages

_LOW_PRECISION = (np.dtype(np.float16), _dtype.bfloat16.np)


def check_matrix(A, op, square=True, arg="A", kernel=None):
    """``A`` must be a float (batched) matrix; square unless told otherwise. ``kernel`` names
    torch's CPU kernel where torch refuses float16/bfloat16 by that kernel's dtype dispatch
    (NotImplementedError) rather than by the op's own check (RuntimeError)."""
    check_tensor(A, op.split(".")[-1], arg)
    data = A._data
    if data.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor {arg} must have at least 2 dimensions.")
    dt = data.dtype
    if dt in _LOW_PRECISION and kernel is not None:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_type_word(dt)}\'')
    if dt in _LOW_PRECISION:
        raise RuntimeError(f"{op}: Low precision dtypes not supported. Got {_type_word(dt)}")
    if dt.kind not in "fc":
        raise RuntimeError(f"{op}: Expected a floating point or complex tensor as input. Got "
                           f"{_type_word(dt)}")
    if square and data.shape[-1] != data.shape[-2]:
        raise RuntimeError(f"{op}: {arg} must be batches of square matrices, but they are "
                           f"{data.shape[-2]} by {data.shape[-1]} matrices")


def _batch_prefix(data, index):
    return f"(Batch element {index}): " if data.ndim > 2 else ""


def _zero_pivots(data):
    """getrf's ``info`` for each matrix of the batch: 1 + the index of the first exactly zero
    pivot of the LU factorization with partial pivoting, 0 when there is none."""
    xp = namespace_of(data)
    n = data.shape[-1]
    a = data.reshape((-1, n, n)).copy()
    rows = xp.arange(a.shape[0])
    info = xp.zeros(a.shape[0], dtype=np.int32)
    for k in range(n):
        p = xp.argmax(xp.abs(a[:, k:, k]), axis=1) + k
        pivot_rows = a[rows, p].copy()
        a[rows, p] = a[:, k]
        a[:, k] = pivot_rows
        pivot = a[:, k, k]
        zero = pivot == 0
        info = xp.where((info == 0) & zero, k + 1, info).astype(np.int32)
        factors = a[:, k + 1:, k] / xp.where(zero, 1, pivot)[:, None]
        factors[zero] = 0
        a[:, k + 1:, :] -= factors[:, :, None] * a[:, None, k, :]
    return info.reshape(data.shape[:-2])


def _first_nonzero(info):
    """The flat index of ``info``'s first nonzero entry (0 when there is none)."""
    nonzero = namespace_of(info).flatnonzero(info)
    return int(nonzero[0]) if nonzero.size else 0


def _raise_singular(op, data, message):
    info = _zero_pivots(data).reshape(-1)
    bad = _first_nonzero(info)
    raise LinAlgError(f"{op}: {_batch_prefix(data, bad)}{message(int(info[bad]) if info.size else 0)}")


def _diag_embed(v):
    """The (batched) diagonal matrix with ``v`` on its diagonal, differentiable in ``v``."""
    from .creation import eye
    return v.unsqueeze(-1) * eye(v._data.shape[-1], dtype=v.dtype, device=v.device)


# ----------------------------------------------------------------------------------------
# inv, det, slogdet

class LinalgInvExBackward0(Node):
    __slots__ = ()
    saved_fields = {"inverse": 0}
    jvp = jvp_by_transposition

    def backward(self, grad, grad_info=None):
        (inverse,) = self.saved_tensors
        inverse_h = inverse.mT
        return (-(inverse_h @ grad @ inverse_h),)


# From these orders on, a real float32/float64 matrix's inverse and linear solves run as torch's
# do, getrf's factorization then two triangular solves (the compiled recursive LU and solves),
# rather than NumPy's gesv, which costs less below them (BENCHMARKS.md, "LU and triangular
# solves compiled").
FACTORED_INVERSE_MIN_ORDER = 48
FACTORED_SOLVE_MIN_ORDER = 100
_FACTORED_SOLVE_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _factored_solve(a, b):
    """X with A X = B for each matrix of the real NumPy batch ``a`` of order
    ``FACTORED_SOLVE_MIN_ORDER`` or more (``FACTORED_INVERSE_MIN_ORDER`` for the inverse), ``b``
    broadcast to its batch (``None``: the identity, so X is A's inverse), by getrf's factors
    and two triangular solves; None where this does not apply or a matrix is singular (the
    callers' NumPy path raises torch's error)."""
    if (type(a) is not np.ndarray or a.dtype not in _FACTORED_SOLVE_DTYPES
            or a.shape[-1] < (FACTORED_INVERSE_MIN_ORDER if b is None else FACTORED_SOLVE_MIN_ORDER)
            or (b is not None and b.dtype != a.dtype)):
        return None
    from .lu import getrf, lu_solve_arrays
    lu_data, pivots, info = getrf(a)
    if info.any():
        return None
    if b is None:
        b = np.eye(a.shape[-1], dtype=a.dtype)
    return lu_solve_arrays(lu_data, pivots, b, False, False)


def _inv_data(op, data):
    xp = namespace_of(data)
    inverse = _factored_solve(data, None)
    if inverse is not None:
        return inverse
    try:
        return xp.linalg.inv(data)
    except np.linalg.LinAlgError:
        _raise_singular(op, data, lambda k: f"The diagonal element {k} is zero, the inversion could "
                        "not be completed because the input matrix is singular.")


def _inverse_if_regular(data):
    """NumPy's inverse of each matrix of the batch, None where one is singular (NumPy raises
    exactly where getrf finds an exactly zero pivot)."""
    inverse = _factored_solve(data, None)
    if inverse is not None:
        return inverse
    try:
        return np.linalg.inv(data).astype(data.dtype, copy=False)
    except np.linalg.LinAlgError:
        return None


@with_out(op="linalg_inv")
@autocast_policy("fp32")
def inv(A):
    """The inverse of a square matrix (of each matrix of a batch). Raises ``LinAlgError``
    when it is singular."""
    check_matrix(A, "linalg.inv")
    result = make(_inv_data("linalg.inv", A._data))
    node = record(LinalgInvExBackward0, (A,), result)
    if node is not None:
        node.save(result)
    return result


@with_out()
@autocast_policy("fp32")
def inverse(input):
    """The inverse of a square matrix: alias of ``ember.linalg.inv``."""
    return inv(input)


@with_out(op="linalg_inv_ex")
@autocast_policy("fp32")
def inv_ex(A, *, check_errors=False):
    """The inverse of a square matrix and ``info`` (0 where it succeeded, else getrf's index
    of the zero pivot); raises only when ``check_errors``."""
    check_matrix(A, "linalg.inv_ex")
    data = A._data
    xp = namespace_of(data)
    inverse = _inverse_if_regular(data) if xp is np else None
    if inverse is not None:
        info = xp.zeros(data.shape[:-2], dtype=np.int32)
    else:
        info = _zero_pivots(data)
        if check_errors and bool(info.any()):
            _inv_data("linalg.inv_ex", data)
        singular = (info != 0)[..., None, None]
        safe = xp.where(singular, xp.eye(data.shape[-1], dtype=data.dtype), data)
        inverse = xp.where(singular, xp.nan, xp.linalg.inv(safe)).astype(data.dtype)
    result = make(inverse)
    node = record(LinalgInvExBackward0, (A,), result)
    if node is not None:
        node.save(result)
    return linalg_inv_ex(result, make(info))


class LinalgDetBackward0(Node):
    __slots__ = ()
    jvp = jvp_by_transposition

    def backward(self, grad):
        A, determinant = self.saved_tensors
        g = grad.unsqueeze(-1).unsqueeze(-1)
        try:
            return (g * determinant.unsqueeze(-1).unsqueeze(-1) * inv(A).mT,)
        except LinAlgError:
            return (g * _cofactor(A),)


def _cofactor(A):
    """The cofactor matrix adj(A)^T = det(U) det(V) U diag(prod_{j != i} s_j) V^T, defined for
    singular matrices too (what the determinant's gradient is there)."""
    from .ternary import where
    U, S, Vh = _svd(A, False)
    xp = namespace_of(A._data)
    sign = make(xp.linalg.det(U._data) * xp.linalg.det(Vh._data))
    n = S._data.shape[-1]
    others = where(make(xp.eye(n, dtype=bool)), 1, S.unsqueeze(-2).expand(*S._data.shape[:-1], n, n))
    return sign.unsqueeze(-1).unsqueeze(-1) * ((U * others.prod(-1).unsqueeze(-2)) @ Vh)


def det(input):
    """The determinant of a square matrix (of each matrix of a batch): ``linalg.det`` under
    torch.det's keyword ``input``."""
    return linalg_det.__wrapped__(input)


# Determinants from the compiled LU where the batch's count * order^3 reaches this; NumPy's
# det and slogdet (OpenBLAS's getrf with copies to column-major order and back) cost less
# below it (BENCHMARKS.md, "LU and triangular solves compiled").
DET_BY_LU_MIN_WORK = 1 << 18


def _lapack_work(data):
    """A batch of matrices' count * m * n * min(m, n), for the rules above (0 below 2-D)."""
    return data.size * min(data.shape[-2:]) if data.ndim >= 2 else 0


def per_matrix(routine, data, *arguments):
    """``routine(matrices, *arguments)`` (a ``_backend.lapack`` wrapper) on ``data`` as one
    (count, m, n) batch, its result (an array, or a tuple of arrays and Nones) given ``data``'s
    batch shape back; None where the routine declines."""
    batch = data.shape[:-2]
    result = routine(data.reshape((math.prod(batch), *data.shape[-2:])), *arguments)
    if result is None:
        return None

    def unflattened(r):
        return None if r is None else r.reshape(batch + r.shape[1:])
    return tuple(map(unflattened, result)) if isinstance(result, tuple) else unflattened(result)


def _lu_diagonal(data):
    """(U's diagonal, the sign of the rows' permutation) of each matrix of ``data`` from the
    compiled LU, as torch computes determinants; None where that LU does not run or NumPy's
    det costs less (``DET_BY_LU_MIN_WORK``)."""
    if _lapack_work(data) < DET_BY_LU_MIN_WORK:
        return None
    from .lu import getrf_compiled
    factored = getrf_compiled(data)
    if factored is None:
        return None
    lu_data, pivots, _ = factored
    swaps = np.count_nonzero(pivots != np.arange(1, pivots.shape[-1] + 1, dtype=np.int32), axis=-1)
    return np.diagonal(lu_data, axis1=-2, axis2=-1), (1 - 2 * (swaps % 2)).astype(data.dtype)


def _det_data(data):
    factored = _lu_diagonal(data)
    if factored is None:
        return namespace_of(data).linalg.det(data).astype(data.dtype, copy=False)
    diagonal, sign = factored
    with np.errstate(over="ignore", invalid="ignore"):
        return np.multiply(diagonal.prod(-1), sign)


@with_out(op="linalg_det")
def linalg_det(A):
    """The determinant of a square matrix (of each matrix of a batch)."""
    check_matrix(A, "linalg.det", kernel="lu_cpu")
    data = A._data
    result = make(_det_data(data))
    node = record(LinalgDetBackward0, (A,), result)
    if node is not None:
        node.save(A, result)
    return result


class LinalgSlogdetBackward0(Node):
    __slots__ = ()
    jvp = jvp_by_transposition

    def backward(self, grad_sign, grad_logabsdet=None):
        if grad_logabsdet is None:
            return (None,)
        (A,) = self.saved_tensors
        return (grad_logabsdet.unsqueeze(-1).unsqueeze(-1) * inv(A).mT,)


def _slogdet(A, op, result_type):
    check_matrix(A, op)
    data = A._data
    factored = _lu_diagonal(data)
    if factored is None:
        sign, logabsdet = namespace_of(data).linalg.slogdet(data)
    else:
        diagonal, sign = factored
        with np.errstate(divide="ignore", invalid="ignore"):
            sign = np.multiply(np.sign(diagonal).prod(-1), sign)
            logabsdet = np.log(np.abs(diagonal)).sum(-1)
    sign = make(sign.astype(data.dtype, copy=False))
    real = np.finfo(data.dtype).dtype if data.dtype.kind == "c" else data.dtype   # |det| is real
    logabsdet = make(logabsdet.astype(real, copy=False))
    node = record(LinalgSlogdetBackward0, (A,), sign, logabsdet)
    if node is not None:
        node.save(A)
    return result_type(sign, logabsdet)


@with_out(op="linalg_slogdet")
def linalg_slogdet_fn(A):
    """The sign and the natural logarithm of the absolute value of the determinant."""
    return _slogdet(A, "linalg.slogdet", linalg_slogdet)


@with_out()
def slogdet(input):
    """The sign and the log of the absolute value of the determinant of a square matrix."""
    return _slogdet(input, "linalg.slogdet", slogdet_type)


def logdet(input):
    """The log of the determinant of a square matrix: nan when it is negative, -inf when 0."""
    sign, logabsdet = _slogdet(input, "logdet", slogdet_type)
    xp = namespace_of(sign._data)
    with np.errstate(divide="ignore", invalid="ignore"):
        return logabsdet + make(xp.log(sign._data))


# ----------------------------------------------------------------------------------------
# solve

class LinalgSolveExBackward0(Node):
    __slots__ = ()
    jvp = jvp_by_transposition

    def backward(self, grad, grad_info=None):
        A, X = self.saved_tensors
        grad_B = _solve_matrix(A.mT, grad)
        grad_A = -(grad_B @ X.mT) if self.next_functions[0][0] is not None else None
        if grad_A is not None:
            grad_A = sum_to(grad_A, A._data.shape)
        return grad_A, sum_to(grad_B, self.b_shape) if self.next_functions[1][0] is not None else None


def _solve_matrix(A, B):
    """X with A X = B for matrix B (batch dims broadcast)."""
    a, b = A._data, B._data
    xp = namespace_of(a)
    from .shape import _broadcast_pair
    batch = _broadcast_pair(a.shape[:-2], b.shape[:-2])   # torch's message when they do not
    a_full = xp.broadcast_to(a, batch + a.shape[-2:])
    b_full = xp.broadcast_to(b, batch + b.shape[-2:])
    x = _factored_solve(a_full, b_full)
    try:
        if x is None:
            x = xp.linalg.solve(a_full, b_full)
    except np.linalg.LinAlgError:
        bad = _first_nonzero(_zero_pivots(a_full))
        raise LinAlgError(f"torch.linalg.solve: {_batch_prefix(a_full, bad)}The solver failed "
                          "because the input matrix is singular.") from None
    result = make(x)
    node = record(LinalgSolveExBackward0, (A, B), result)
    if node is not None:
        node.save(A, result)
        node.b_shape = b.shape
    return result


def solve_operands(A, B, left, op):
    """``linalg.solve``'s checks, with torch's messages: returns ``B`` as a (batch of)
    matrices and whether it was a (batch of) vector(s)."""
    check_tensor(A, "solve", "A")
    check_tensor(B, "solve", "B")
    if B._data.dtype != A._data.dtype:   # torch compares the dtypes first
        raise RuntimeError(f"{op}: Expected A and B to have the same dtype, but found A of "
                           f"type {_type_word(A._data.dtype)} and B of type {_type_word(B._data.dtype)} "
                           "instead")
    check_matrix(A, op, kernel="lu_cpu")
    if B._data.ndim < 1:
        raise RuntimeError(f"{op}: The input tensor B must have at least 2 dimensions.")
    a_shape, b_shape = A._data.shape, B._data.shape
    vector = len(b_shape) == 1 or (len(b_shape) == len(a_shape) - 1 and b_shape == a_shape[:-1])
    B2 = B.unsqueeze(-1) if vector else B
    rows, cols = B2._data.shape[-2:]
    n = a_shape[-1]
    if (rows if left else cols) != n:
        raise RuntimeError(f"{op}: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {rows}x{cols})")
    return B2, vector


@with_out(op="linalg_solve")
@autocast_policy("fp32")
def solve(A, B, *, left=True):
    """The solution X of ``A X = B`` (``X A = B`` when ``left=False``) for square, invertible
    ``A``; batch dimensions broadcast, and ``B`` may be a (batch of) vector(s)."""
    B2, vector = solve_operands(A, B, left, "linalg.solve")
    X = _solve_matrix(A, B2) if left else _solve_matrix(A.mT, B2.mT).mT
    return X.squeeze(-1) if vector else X


# ----------------------------------------------------------------------------------------
# Cholesky

class LinalgCholeskyExBackward0(Node):
    """gA = L^-H Phi(L^H gL) L^-1, Phi taking the lower triangle with the diagonal halved."""
    __slots__ = ()
    saved_fields = {"L": 0, "upper": "upper"}
    jvp = jvp_by_transposition

    def backward(self, grad, grad_info=None):
        (L,) = self.saved_tensors
        if self.upper:
            L, grad = L.mT, grad.mT
        from .triangular import solve_triangular
        phi = (L.mT @ grad).tril()
        phi = 0.5 * (phi + phi.tril(-1).mT)
        # L^-T phi L^-1, as two triangular solves
        return (solve_triangular(L.mT, solve_triangular(L, phi, upper=False, left=False), upper=True),)


class CholeskyBackward0(LinalgCholeskyExBackward0):
    __slots__ = ()
    saved_fields = {"result": 0, "upper": "upper"}


def _potrf(xp, data):
    """The backend's Cholesky factor, failing (NumPy's LinAlgError) where a diagonal entry
    comes out NaN: LAPACK's potrf stops at a NaN pivot, OpenBLAS's goes on with it. Real
    float32/float64 NumPy matrices go to the compiled recursive factorization
    (``openmp_kernels.potrf_recursive``), which stops there too."""
    if type(data) is np.ndarray and data.dtype in openmp_kernels._RECURSIVE_POTRFS and data.size:
        n = data.shape[-1]
        factor = np.array(data.reshape((-1, n, n)), order="C")
        info = openmp_kernels.potrf_recursive(factor)
        if info is not None:
            if info.any():
                raise np.linalg.LinAlgError("Matrix is not positive definite")
            return factor.reshape(data.shape)
    factor = xp.linalg.cholesky(data)
    if bool(xp.isnan(xp.diagonal(factor, axis1=-2, axis2=-1)).any()):
        raise np.linalg.LinAlgError("Matrix is not positive definite")
    return factor


def _cholesky_data(op, data):
    xp = namespace_of(data)
    try:
        return _potrf(xp, data)
    except np.linalg.LinAlgError:
        batch, order = _not_positive_definite(data)
        raise LinAlgError(f"{op}: {_batch_prefix(data, batch)}The factorization could not be "
                          "completed because the input is not positive-definite (the leading minor "
                          f"of order {order} is not positive-definite).") from None


def _not_positive_definite(data):
    """(batch index, order of the first leading minor that is not positive-definite)."""
    xp = namespace_of(data)
    n = data.shape[-1]
    flat = data.reshape((-1, n, n))
    for order in range(1, n + 1):
        minors = flat[:, :order, :order]
        for b in range(flat.shape[0]):
            try:
                _potrf(xp, minors[b])
            except np.linalg.LinAlgError:
                return b, order
    return 0, n


def _cholesky(A, upper, op, node_cls):
    check_matrix(A, op, kernel="cholesky_cpu")
    data = A._data
    lower = _cholesky_data(op, data)
    result = make(_transposed(lower) if upper else lower)
    node = record(node_cls, (A,), result)
    if node is not None:
        node.save(result)
        node.upper = upper
    return result


def _transposed(data):
    return namespace_of(data).swapaxes(data, -1, -2).copy()


@with_out()
@autocast_policy("fp32")
def linalg_cholesky(input, *, upper=False):
    """The Cholesky factor L (lower triangular, ``A = L L^H``) of a symmetric positive-definite
    matrix; ``upper=True`` returns ``L^H`` instead."""
    if upper.__class__ is bool:
        return _linalg_cholesky_entries[upper][0](input)
    return _python_linalg_cholesky(input, upper)


def _python_linalg_cholesky(input, upper):
    return _cholesky(input, upper, "linalg.cholesky", LinalgCholeskyExBackward0)


@with_out(exact=False)
@autocast_policy("fp32")
def cholesky(input, upper=False):
    """The Cholesky factor of a symmetric positive-definite matrix (deprecated in torch in
    favour of ``linalg.cholesky``)."""
    if upper.__class__ is bool:
        return _cholesky_entries[upper][0](input)
    return _python_cholesky(input, upper)


def _python_cholesky(input, upper):
    check_tensor(input, "cholesky", "input")
    if input._data.dtype.kind in "biu":   # torch's kernel dispatch refuses it first
        raise NotImplementedError(f"\"cholesky_cpu\" not implemented for '{_type_word(input._data.dtype)}'")
    return _cholesky(input, upper, "cholesky", CholeskyBackward0)


@with_out(op="linalg_cholesky_ex")
@autocast_policy("fp32")
def cholesky_ex(input, *, upper=False, check_errors=False):
    """The Cholesky factor and ``info`` (0, or the order of the leading minor that is not
    positive-definite); raises only when ``check_errors``."""
    if upper.__class__ is bool and check_errors is False:
        return _cholesky_ex_entries[upper][0](input)
    return _python_cholesky_ex(input, upper, check_errors)


def _python_cholesky_ex(input, upper=False, check_errors=False):
    check_matrix(input, "linalg.cholesky_ex", kernel="cholesky_cpu")
    data = input._data
    xp = namespace_of(data)
    n = data.shape[-1]
    flat = data.reshape((math.prod(data.shape[:-2]), n, n))
    info = xp.zeros(flat.shape[0], dtype=np.int32)
    factors = xp.zeros_like(flat)
    for b in range(flat.shape[0]):
        try:
            factors[b] = _potrf(xp, flat[b])
        except np.linalg.LinAlgError:
            if check_errors:
                _cholesky_data("linalg.cholesky_ex", data)
            info[b] = _not_positive_definite(flat[b])[1]
            factors[b] = xp.nan
    lower = factors.reshape(data.shape)
    result = make(_transposed(lower) if upper else lower)
    node = record(LinalgCholeskyExBackward0, (input,), result)
    if node is not None:
        node.save(result)
        node.upper = upper
    return linalg_cholesky_ex(result, make(info.reshape(data.shape[:-2])))


def _cholesky_entry(python_op, upper, result_type):
    """The compiled function of a Cholesky factorization (``_compiled_factorizations``: where nothing records,
    the recursive factorization called from C) giving the ``upper`` factor, with ``info`` in ``result_type``
    where that is given."""
    def _python_cholesky_factor(A):
        return python_op(A, upper)
    return _compiled_functions.register(
        _python_cholesky_factor, None, kind="cholesky", addresses=openmp_kernels.recursive_potrf_addresses,
        specifics=lambda: (result_type, upper, result_type is not None, *openmp_kernels.recursive_gemms()))


_linalg_cholesky_entries = {upper: _cholesky_entry(_python_linalg_cholesky, upper, None) for upper in (False, True)}
_cholesky_entries = {upper: _cholesky_entry(_python_cholesky, upper, None) for upper in (False, True)}
_cholesky_ex_entries = {upper: _cholesky_entry(_python_cholesky_ex, upper, linalg_cholesky_ex)
                        for upper in (False, True)}


# ----------------------------------------------------------------------------------------
# QR

class LinalgQrBackward0(Node):
    __slots__ = ()
    saved_fields = {"Q": 0, "R": 1, "mode": "mode"}
    jvp = jvp_by_transposition

    def backward(self, grad_Q=None, grad_R=None):
        if self.mode == "r":
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when "
                               "mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to "
                               "differentiate through linalg.qr.")
        Q, R = self.saved_tensors[:2]
        m, n = self.shape[-2:]
        if self.mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and "
                               "nrows > ncols.")
        grad_Q = grad_Q if grad_Q is not None else _zeros_like(Q)
        grad_R = grad_R if grad_R is not None else _zeros_like(R)
        if m >= n:
            return (_qr_tall_grad(Q, R, grad_Q, grad_R),)
        from .shape import cat
        Y = self.saved_tensors[2][..., m:]
        grad_Y = Q @ grad_R[..., m:]
        grad_X = _qr_tall_grad(Q, R[..., :m], grad_Q + Y @ grad_R[..., m:].mT, grad_R[..., :m])
        return (cat([grad_X, grad_Y], -1),)


def _zeros_like(t):
    return make(namespace_of(t._data).zeros_like(t._data))


def _qr_tall_grad(Q, R, grad_Q, grad_R):
    """gA = (gQ + Q copyltu(M)) R^-H with M = R gR^H - gQ^H Q (A = QR with m >= n)."""
    M = R @ grad_R.mT - grad_Q.mT @ Q
    lower = M.tril(-1)
    copyltu = lower + lower.mT + _diag_embed(M.diagonal(0, -2, -1))
    b = grad_Q + Q @ copyltu
    return _solve_matrix(R, b.mT).mT


@with_out(op="linalg_qr")
@autocast_policy("fp32")
def linalg_qr_fn(A, mode="reduced"):
    """The QR decomposition ``A = QR`` (Q orthonormal columns, R upper triangular); ``mode``
    is 'reduced', 'complete' or 'r' (R only, Q empty)."""
    entry = _linalg_qr_entries.get(mode) if mode.__class__ is str else None
    if entry is not None:
        return entry[0](A)
    return _checked_qr(A, mode, linalg_qr)


def _checked_qr(A, mode, result_type):
    check_matrix(A, "linalg.qr", square=False, kernel="geqrf_cpu")
    return _qr(A, mode, result_type)


def _qr(A, mode, result_type):
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' "
                           "(default), 'r', or 'complete'")
    data = A._data
    xp = namespace_of(data)
    factored = per_matrix(lapack.qr, data, mode)
    if factored is not None:   # (LAPACK in float32 for float32, where NumPy's qr computes in float64)
        q, r = factored
        R = make(r)
        Q = make(xp.zeros((0,), dtype=data.dtype) if q is None else q)
    elif mode == "r":
        R = make(xp.linalg.qr(data, mode="r").astype(data.dtype, copy=False))
        Q = make(xp.zeros((0,), dtype=data.dtype))
    else:
        q, r = xp.linalg.qr(data, mode=mode)
        Q, R = make(q), make(r)
    node = record(LinalgQrBackward0, (A,), Q, R)
    if node is not None:
        wide = data.shape[-2] < data.shape[-1]
        node.save(*((Q, R, A) if wide else (Q, R)))
        node.mode, node.shape = mode, data.shape
    return result_type(Q, R)


@with_out()
@autocast_policy("fp32")
def qr(input, some=True):
    """The QR decomposition: reduced when ``some`` (the default), complete otherwise."""
    return _qr_entries["reduced" if some else "complete"][0](input)


def _qr_entry(mode, result_type):
    """The compiled function of QR in ``mode`` (``_compiled_factorizations``: where nothing records, the
    QR driver called from C), in ``result_type``."""
    def _python_qr(A):
        return _checked_qr(A, mode, result_type)
    return _compiled_functions.register(
        _python_qr, None, kind="qr", addresses=openmp_kernels.small_qr_addresses,
        specifics=lambda: (result_type, _QR_MODES.index(mode), *lapack.qr_routines()))


_QR_MODES = ("reduced", "complete", "r")   # (``enum qr_mode`` in the C source)
_linalg_qr_entries = {mode: _qr_entry(mode, linalg_qr) for mode in _QR_MODES}
_qr_entries = {mode: _qr_entry(mode, qr_type) for mode in _QR_MODES[:2]}


# ----------------------------------------------------------------------------------------
# SVD

class LinalgSvdBackward0(Node):
    __slots__ = ()
    jvp = jvp_by_transposition

    def backward(self, grad_U=None, grad_S=None, grad_Vh=None):
        U, S, Vh = self.saved_tensors
        if grad_U is None and grad_S is None and grad_Vh is None:
            return (None,)
        k = S._data.shape[-1]
        if self.full_matrices:
            U, Vh = U[..., :k], Vh[..., :k, :]
            grad_U = None if grad_U is None else grad_U[..., :k]
            grad_Vh = None if grad_Vh is None else grad_Vh[..., :k, :]
        return (_svd_grad(U, S, Vh, grad_U, grad_S, grad_Vh),)


def _skew(X):
    return X - X.mT


def _svd_grad(U, S, Vh, grad_U, grad_S, grad_Vh):
    """torch's svd_backward for real inputs (reduced factors)."""
    if grad_U is None and grad_Vh is None:
        return (U * grad_S.unsqueeze(-2)) @ Vh
    m, n = U._data.shape[-2], Vh._data.shape[-1]
    k = S._data.shape[-1]
    S2 = S * S
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + _eye_like(S, k)
    UhgU = _skew(U.mT @ grad_U) if grad_U is not None else None
    VhgV = _skew(Vh @ grad_Vh.mT) if grad_Vh is not None else None
    if UhgU is not None and VhgV is not None:
        inner = (UhgU * S.unsqueeze(-2) + S.unsqueeze(-1) * VhgV) / E
    elif UhgU is not None:
        inner = (UhgU / E) * S.unsqueeze(-2)
    else:
        inner = S.unsqueeze(-1) * (VhgV / E)
    if grad_S is not None:
        inner = inner + _diag_embed(grad_S)
    if m > k and grad_U is not None:
        left = U @ inner + (grad_U - U @ (U.mT @ grad_U)) / S.unsqueeze(-2)
        return left @ Vh
    if n > k and grad_Vh is not None:
        right = inner @ Vh + (grad_Vh - (grad_Vh @ Vh.mT) @ Vh) / S.unsqueeze(-1)
        return U @ right
    return U @ inner @ Vh


def _eye_like(t, n):
    from .creation import eye
    return eye(n, dtype=t.dtype, device=t.device)


@with_out(op="linalg_svd")
@autocast_policy("fp32")
def linalg_svd_fn(A, full_matrices=True, *, driver=None):
    """The singular value decomposition ``A = U diag(S) Vh`` (S in descending order)."""
    entry = _linalg_svd_entries.get(full_matrices) if full_matrices.__class__ is bool else None
    if entry is not None:
        return entry[0](A)
    return _python_linalg_svd(A, full_matrices)


def _python_linalg_svd(A, full_matrices):
    check_matrix(A, "linalg.svd", square=False, kernel="linalg_svd_cpu")
    return linalg_svd(*_svd(A, full_matrices))


def svd_arrays(data, full_matrices=False, compute_uv=True):
    """The backend's SVD of ``data`` (a batch of matrices; real float32/float64 NumPy ones by
    LAPACK's gesdd in their own precision, ``lapack.gesdd``, one C call at every size: cheaper than
    NumPy's svd, which computes float32 in float64), with torch's LinAlgError for a matrix holding
    NaN. A matrix holding an infinity (and no NaN) gets NaN factors without LAPACK, whose SVD can
    loop forever on one (OpenBLAS's dbdsqr)."""
    xp = namespace_of(data)
    finite = xp.isfinite(data).all(axis=(-2, -1))
    if bool(finite.all()):
        result = per_matrix(lapack.gesdd, data, full_matrices, compute_uv)
        if result is None:
            return xp.linalg.svd(data, full_matrices=full_matrices, compute_uv=compute_uv)
        return result
    nan = xp.isnan(data).any(axis=(-2, -1)).reshape(-1)
    if bool(nan.any()):
        raise LinAlgError(f"linalg.svd: {_batch_prefix(data, _first_nonzero(nan))}The algorithm "
                          "failed to converge because the input matrix contained non-finite values.")
    safe = xp.where(finite[..., None, None], data, 0)
    result = xp.linalg.svd(safe, full_matrices=full_matrices, compute_uv=compute_uv)
    if not compute_uv:
        return xp.where(finite[..., None], result, xp.nan).astype(result.dtype, copy=False)
    return tuple(xp.where(finite[..., None, None] if r.ndim == data.ndim else finite[..., None], r, xp.nan)
                 .astype(r.dtype, copy=False) for r in result)


def eigh_arrays(data, UPLO="L", eigenvectors=True):
    """The backend's ``eigh`` (``eigvalsh``) of ``data`` (real float32/float64 NumPy matrices
    by LAPACK's syevd in their own precision, ``lapack.syevd``, one C call at every size), with
    torch's LinAlgError where it does not converge (NaN in the triangle read, for one)."""
    xp = namespace_of(data)
    try:
        result = per_matrix(lapack.syevd, data, UPLO == "L", eigenvectors)
        if result is not None:
            return result
        if eigenvectors:
            return xp.linalg.eigh(data, UPLO=UPLO)
        return xp.linalg.eigvalsh(data, UPLO=UPLO)
    except np.linalg.LinAlgError:
        bad = ~xp.isfinite(xp.tril(data) if UPLO == "L" else xp.triu(data)).all(axis=(-2, -1))
        raise LinAlgError(f"linalg.eigh: {_batch_prefix(data, _first_nonzero(bad.reshape(-1)))}The "
                          "algorithm failed to converge because the input matrix is ill-conditioned "
                          "or has too many repeated eigenvalues.") from None


def _svd(A, full_matrices):
    data = A._data
    u, s, vh = svd_arrays(data, full_matrices=full_matrices)
    U, S, Vh = make(u), make(s), make(vh)
    node = record(LinalgSvdBackward0, (A,), U, S, Vh)
    if node is not None:
        node.save(U, S, Vh)
        node.full_matrices = full_matrices
    return U, S, Vh


@with_out(op="linalg_svdvals")
@autocast_policy("fp32")
def svdvals(A, *, driver=None):
    """The singular values of ``A`` in descending order."""
    return _svdvals_entry[0](A)


def _python_svdvals(A):
    check_matrix(A, "linalg.svdvals", square=False, kernel="linalg_svd_cpu")
    data = A._data
    if (A._requires_grad and grad_state.grad_enabled) or forward_mode.active:
        return _svd(A, False)[1]
    return make(svd_arrays(data, compute_uv=False))


@with_out()
@autocast_policy("fp32")
def svd(input, some=True, compute_uv=True):
    """The singular value decomposition ``input = U diag(S) V^H``, returning V (not V^H);
    ``some=False`` gives square U and V; without ``compute_uv`` U and V are zero-filled."""
    entry = (_svd_entries.get((some, compute_uv)) if some.__class__ is bool and compute_uv.__class__ is bool
             else None)
    if entry is not None:
        return entry[0](input)
    return _python_svd(input, some, compute_uv)


def _python_svd(input, some, compute_uv):
    check_matrix(input, "linalg.svd", square=False, kernel="linalg_svd_cpu")
    if not compute_uv:
        data = input._data
        xp = namespace_of(data)
        m, n = data.shape[-2:]
        batch = data.shape[:-2]
        S = svdvals(input)
        return svd_type(make(xp.zeros(batch + (m, m), dtype=data.dtype)), S,
                        make(xp.zeros(batch + (n, n), dtype=data.dtype)))
    U, S, Vh = _svd(input, not some)
    return svd_type(U, S, Vh.mT)


_DECOMPOSITION_FORMS = ("linalg.svd", "svdvals", "svd", "svd without uv", "eigh", "eigvalsh")   # (``enum
# decomposition_form`` in the C source)
_GESDD_JOBS = ("N", "S", "A")


def _decomposition_entry(python_op, form, job, result_type=None):
    """The compiled function of an SVD or eigh in ``form`` (``_compiled_decompositions``: where nothing records,
    the gesdd or syevd driver called from C) with the routine's ``job`` (gesdd's jobz; syevd's uplo, 1 for
    "L"), in ``result_type`` where that is given."""
    routine = "syevd" if form.startswith("eig") else "gesdd"
    return _compiled_functions.register(
        python_op, None, kind="eigh" if routine == "syevd" else "svd",
        addresses=lambda: openmp_kernels.lapack_driver_addresses(routine),
        specifics=lambda: (result_type, _DECOMPOSITION_FORMS.index(form), job, *lapack.driver_routines(routine)))


def _linalg_svd_entry(full_matrices):
    def _python_linalg_svd_factors(A):
        return _python_linalg_svd(A, full_matrices)
    return _decomposition_entry(_python_linalg_svd_factors, "linalg.svd", 2 if full_matrices else 1, linalg_svd)


def _svd_entry(some, compute_uv):
    def _python_svd_factors(input):
        return _python_svd(input, some, compute_uv)
    if not compute_uv:
        return _decomposition_entry(_python_svd_factors, "svd without uv", 0, svd_type)
    return _decomposition_entry(_python_svd_factors, "svd", 1 if some else 2, svd_type)


_linalg_svd_entries = {full_matrices: _linalg_svd_entry(full_matrices) for full_matrices in (False, True)}
_svdvals_entry = _decomposition_entry(_python_svdvals, "svdvals", 0)
_svd_entries = {(some, compute_uv): _svd_entry(some, compute_uv)
                for some in (False, True) for compute_uv in (False, True)}


# ----------------------------------------------------------------------------------------
# eigh

class LinalgEighBackward0(Node):
    __slots__ = ()
    jvp = jvp_by_transposition

    def backward(self, grad_L=None, grad_V=None):
        L, V = self.saved_tensors
        if grad_V is None:
            if grad_L is None:
                return (None,)
            return ((V * grad_L.unsqueeze(-2)) @ V.mT,)
        VhgV = V.mT @ grad_V
        VhgV = 0.5 * (VhgV - VhgV.mT)
        n = L._data.shape[-1]
        E = L.unsqueeze(-2) - L.unsqueeze(-1) + _eye_like(L, n)
        inner = VhgV / E
        if grad_L is not None:
            inner = inner + _diag_embed(grad_L)
        return (V @ inner @ V.mT,)


def _check_uplo(UPLO):
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")


def _eigh(A, UPLO):
    data = A._data
    w, v = eigh_arrays(data, UPLO)
    L, V = make(w), make(v)
    node = record(LinalgEighBackward0, (A,), L, V)
    if node is not None:
        node.save(L, V)
    return L, V


@with_out(op="linalg_eigh")
@autocast_policy("fp32")
def eigh(input, UPLO="L"):
    """Eigenvalues (ascending) and orthonormal eigenvectors of a symmetric matrix, read from
    its lower (``UPLO='L'``) or upper triangle."""
    entry = _eigh_entries.get(UPLO) if UPLO.__class__ is str else None
    if entry is not None:
        return entry[0](input)
    return _python_eigh(input, UPLO)


def _python_eigh(input, UPLO):
    _check_eigh(input, "linalg.eigh", UPLO)
    return linalg_eigh(*_eigh(input, UPLO))


def _check_eigh(A, op, UPLO):
    check_tensor(A, op.split(".")[-1], "A")
    if A._data.dtype.kind not in "fc":
        raise NotImplementedError(f"\"linalg_eigh_cpu\" not implemented for '{_type_word(A._data.dtype)}'")
    check_matrix(A, op, kernel="linalg_eigh_cpu")
    _check_uplo(UPLO)


@with_out(op="linalg_eigvalsh")
@autocast_policy("fp32")
def eigvalsh(input, UPLO="L"):
    """The eigenvalues of a symmetric matrix, in ascending order."""
    entry = _eigvalsh_entries.get(UPLO) if UPLO.__class__ is str else None
    if entry is not None:
        return entry[0](input)
    return _python_eigvalsh(input, UPLO)


def _python_eigvalsh(input, UPLO):
    _check_eigh(input, "linalg.eigvalsh", UPLO)
    if (input._requires_grad and grad_state.grad_enabled) or forward_mode.active:
        return _eigh(input, UPLO)[0]
    data = input._data
    return make(eigh_arrays(data, UPLO, eigenvectors=False))


def _eigh_entry(python_op, form, UPLO):
    def _python_eigh_factors(input):
        return python_op(input, UPLO)
    return _decomposition_entry(_python_eigh_factors, form, int(UPLO == "L"), linalg_eigh if form == "eigh" else None)


_eigh_entries = {UPLO: _eigh_entry(_python_eigh, "eigh", UPLO) for UPLO in ("L", "U")}
_eigvalsh_entries = {UPLO: _eigh_entry(_python_eigvalsh, "eigvalsh", UPLO) for UPLO in ("L", "U")}


# ----------------------------------------------------------------------------------------
# pinv

class LinalgPinvBackward0(Node):
    __slots__ = ()
    saved_fields = {"self": 0, "result": 1}
    jvp = jvp_by_transposition

    def backward(self, grad):
        A, pinv_A = self.saved_tensors
        return (_pinv_grad(grad, pinv_A, A),)


def _pinv_grad(grad, pinv_A, A):
    """torch's pinv_backward: the products are ordered to keep matrices small."""
    m, n = A._data.shape[-2:]
    pinv_Ah, grad_h = pinv_A.mT, grad.mT
    if m <= n:
        K = grad_h @ pinv_A
        K_pinv_Ah = K @ pinv_Ah
        return (-(pinv_A @ K).mT + K_pinv_Ah - (A @ pinv_A) @ K_pinv_Ah
                + (pinv_Ah @ pinv_A) @ (grad_h - K @ A))
    K = pinv_A @ grad_h
    pinv_Ah_K = pinv_Ah @ K
    return (-(K @ pinv_A).mT + (grad_h - A @ K) @ pinv_A @ pinv_Ah + pinv_Ah_K
            - pinv_Ah_K @ pinv_A @ A)


def largest(values):
    """The largest of the non-negative ``values`` over the last axis; 0 where that axis is empty
    (``max(-1, initial=0)``, which CuPy lacks)."""
    if values.shape[-1]:
        return values.max(-1)
    return namespace_of(values).zeros(values.shape[:-1], values.dtype)


@functools.cache
def _epsilon(dtype):
    """The machine epsilon of a float or complex dtype (NumPy's finfo, a Python class, read once)."""
    return np.finfo(dtype).eps


def tolerance(xp, values_max, shape, dtype, atol, rtol):
    """max(atol, rtol * largest singular value), with torch's default rtol (eps * max(m, n),
    or 0 when only a positive atol is given)."""
    if atol is None and rtol is None:   # (rtol's default alone: its product, in the values' dtype)
        return values_max * (_epsilon(dtype) * max(shape[-2:]))
    if rtol is None:
        given_atol = atol is not None and not (isinstance(atol, (int, float)) and atol <= 0)
        rtol = 0.0 if given_atol else _epsilon(dtype) * max(shape[-2:])
    atol = 0.0 if atol is None else atol
    atol = atol._data if isinstance(atol, Tensor) else atol
    rtol = rtol._data if isinstance(rtol, Tensor) else rtol
    return xp.maximum(xp.asarray(atol), xp.asarray(rtol) * values_max)


def _adjoint(xp, x):
    """The conjugate transpose of each matrix of ``x`` (a view of a real one's transpose)."""
    swapped = x.swapaxes(-1, -2)
    return xp.conj(swapped) if x.dtype.kind == "c" else swapped


@with_out(exact=False, op="linalg_pinv")
def pinv(input, *, atol=None, rtol=None, hermitian=False, rcond=None):
    """The Moore-Penrose pseudo-inverse; singular values below max(atol, rtol * sigma_max)
    are treated as zero. ``hermitian=True`` uses an eigendecomposition."""
    check_tensor(input, "pinv", "input")
    data = input._data
    if data.ndim < 2 and atol is not None:   # torch reads A.size(-2) first on that path
        raise IndexError("Dimension specified as -2 but tensor has no dimensions" if not data.ndim else
                         "Dimension out of range (expected to be in range of [-1, 0], but got -2)")
    if data.ndim < 2 or data.dtype.kind not in "fc" or data.dtype in _LOW_PRECISION:
        raise RuntimeError(f"linalg.pinv({_type_word(data.dtype)}{{{list(data.shape)}}}): expected a "
                           "tensor with 2 or more dimensions of float, double, cfloat or cdouble types")
    if rcond is not None:
        rtol = rcond
    xp = namespace_of(data)
    if hermitian:
        w, v = eigh_arrays(data)
        size = xp.abs(w)
        tol = tolerance(xp, largest(size), data.shape, data.dtype, atol, rtol)
        inv_w = xp.where(size > tol[..., None], 1 / xp.where(size == 0, 1, w), 0).astype(data.dtype)
        result = (v * inv_w[..., None, :]) @ _adjoint(xp, v)   # V diag(1/w) V^H
    else:
        if (input.__class__ is Tensor and data.__class__ is np.ndarray and not forward_mode.active
                and not (grad_state.grad_enabled and input._requires_grad)):
            u, s, vh = (t._data for t in _linalg_svd_entries[False][0](input))   # (its compiled function)
        else:
            u, s, vh = svd_arrays(data)
        tol = tolerance(xp, largest(s), data.shape, data.dtype, atol, rtol)
        inv_s = xp.where(s > tol[..., None], 1 / xp.where(s == 0, 1, s), 0).astype(data.dtype, copy=False)
        result = (_adjoint(xp, vh) * inv_s[..., None, :]) @ _adjoint(xp, u)   # V diag(1/s) U^H
    out = make(result.astype(data.dtype, copy=False))
    node = record(LinalgPinvBackward0, (input,), out)
    if node is not None:
        node.save(input, out)
    return out


# ----------------------------------------------------------------------------------------
# cross

class LinalgCrossBackward0(Node):
    __slots__ = ()
    saved_fields = {"self": 0, "other": 1, "dim": lambda node: node.dim % max(
        t._data.ndim for t in node.saved_tensors)}
    jvp = jvp_by_transposition

    def backward(self, grad):
        a, b = self.saved_tensors
        dim = self.dim
        need_a, need_b = (fn is not None for fn, _ in self.next_functions)
        grad_a = sum_to(linalg_cross(b, grad, dim=dim), a._data.shape) if need_a else None
        grad_b = sum_to(linalg_cross(grad, a, dim=dim), b._data.shape) if need_b else None
        return grad_a, grad_b


def _cross_arrays(xp, a, b, axis):
    """NumPy's ``cross(a, b, axis=axis)`` of two arrays of one dtype (broadcast; ``axis``
    negative, of length 3 in both), each component a product minus a product as NumPy
    computes it, into a row-major array: without ``cross``'s axis moves, several times its
    cost on small arrays."""
    rest = (slice(None),) * (-axis - 1)
    at = [(Ellipsis, k) + rest for k in range(3)]
    a0, a1, a2 = a[at[0]], a[at[1]], a[at[2]]
    b0, b1, b2 = b[at[0]], b[at[1]], b[at[2]]
    out = xp.empty(np.broadcast_shapes(a.shape, b.shape), a.dtype)
    out[at[0]] = a1 * b2 - a2 * b1
    out[at[1]] = a2 * b0 - a0 * b2
    out[at[2]] = a0 * b1 - a1 * b0
    return out


@with_out()
def linalg_cross(input, other, *, dim=-1):
    """The cross product of 3-vectors along ``dim`` (the other dimensions broadcast)."""
    return _cross_entry[0](input, other, dim)


def _python_cross(input, other, dim=-1):
    """``linalg.cross`` in every case its compiled function (``_compiled_functions``) leaves to Python."""
    check_tensor(input, "cross", "input")
    check_tensor(other, "cross", "other")
    a, b = input._data, other._data
    if a.ndim != b.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    ndim = a.ndim
    d = wrap_dim(dim, ndim) - ndim
    if a.shape[d] != 3 or b.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{a.shape[d]} and {b.shape[d]}")
    _broadcast_pair(a.shape, b.shape)
    if a.dtype == np.bool_:
        raise NotImplementedError("\"cross\" not implemented for 'Bool'")
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected scalar type {_type_word(a.dtype)} but found {_type_word(b.dtype)}")
    result = make(_cross_arrays(namespace_of(a), a, b, d))
    node = record(LinalgCrossBackward0, (input, other), result)
    if node is not None:
        node.save(input, other)
        node.dim = d
    return result


_cross_entry = _compiled_functions.register(_python_cross, LinalgCrossBackward0, kind="cross")


# ----------------------------------------------------------------------------------------
# Distances

class CdistBackward0(Node):
    __slots__ = ()
    saved_fields = {"x1": 0, "x2": 1, "result": 2, "p": "p"}
    jvp = jvp_by_transposition

    def backward(self, grad):
        x1, x2, distance = self.saved_tensors
        p = self.p
        if p == 0:
            return _zeros_like(x1), _zeros_like(x2)
        from .ternary import where
        diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
        d = distance.unsqueeze(-1)
        zero = make(d._data == 0)
        if p == 1:
            weight = diff.sign()
        elif p == 2:
            weight = where(zero, 0, diff / where(zero, 1, d))
        elif math.isinf(p):
            weight = diff.sign() * make(namespace_of(diff._data).abs(diff._data) == d._data)
        else:
            scale = where(zero, 0, 1 / where(zero, 1, d).pow(p - 1))
            weight = diff.sign() * diff.abs().pow(p - 1) * scale
        contribution = grad.unsqueeze(-1) * weight
        grad_x1 = sum_to(contribution.sum(-2), x1._data.shape) if self.next_functions[0][0] is not None else None
        grad_x2 = sum_to(-contribution.sum(-3), x2._data.shape) if self.next_functions[1][0] is not None else None
        return grad_x1, grad_x2


def _check_cdist(x1, x2, p, by_product=False):
    for name, x in (("X1", x1), ("X2", x2)):
        if x._data.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x._data.ndim}D")
    for name, x in (("X1", x1), ("X2", x2)):
        if not x.is_floating_point():
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{_type_word(x._data.dtype)}")
    if x1._data.shape[-1] != x2._data.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1._data.shape[-1]} "
                           f"X2: {x2._data.shape[-1]}")
    from .shape import _broadcast_pair
    _broadcast_pair(x1._data.shape[:-2], x2._data.shape[:-2])   # the batch dims, as torch says
    if not p >= 0:   # NaN too
        raise RuntimeError("cdist only supports non-negative p values")
    if not by_product and x1._data.dtype in _LOW_PRECISION and x1._data.size and x2._data.size:
        raise NotImplementedError(f"\"cdist\" not implemented for '{_type_word(x1._data.dtype)}'")
    if x1._data.dtype != x2._data.dtype and x1._data.size and x2._data.size:
        raise RuntimeError(f"expected scalar type {_type_word(x1._data.dtype)} but found "
                           f"{_type_word(x2._data.dtype)}")


def _pairwise_norm(diff, p):
    """The p-norm over the last dim of an array of differences."""
    xp = namespace_of(diff)
    size = xp.abs(diff)
    if p == 0:   # as torch: a NaN difference counts as NaN, not as nonzero
        return xp.sum(xp.where(xp.isnan(size), xp.nan, size != 0), axis=-1).astype(diff.dtype)
    if math.isinf(p):   # torch's running max(agg, |d|) passes a NaN difference over
        return largest(xp.where(xp.isnan(size), 0, size))
    if p == 1:
        return size.sum(-1)
    if p == 2:
        return xp.sqrt((size * size).sum(-1))
    return (size ** p).sum(-1) ** (1.0 / p)


# compute_mode -> when p=2 distances go through a matrix product: torch's three modes
_CDIST_MODES = {"use_mm_for_euclid_dist_if_necessary": "if_necessary",
                "use_mm_for_euclid_dist": "always", "donot_use_mm_for_euclid_dist": "never"}
# "if_necessary": when either side has more rows than this, as torch decides
_CDIST_MM_MIN_ROWS = 25


class EuclideanDistBackward0(Node):
    __slots__ = ()
    jvp = jvp_by_transposition

    def backward(self, grad):
        from .ternary import where
        x1, x2, distance = self.saved_tensors
        ratio = where(distance == 0, 0, grad / distance)
        grad_x1 = grad_x2 = None
        if self.next_functions[0][0] is not None:
            grad_x1 = x1 * ratio.sum(-1, keepdim=True) - ratio @ x2
        if self.next_functions[1][0] is not None:
            grad_x2 = x2 * ratio.sum(-2).unsqueeze(-1) - ratio.mT @ x1
        return grad_x1, grad_x2


def _euclidean_dist(x1, x2):
    """Distances between the rows of ``x1`` and ``x2`` (both B x N x M) through one matrix
    product, as torch computes them: [-2 x1, |x1|^2, 1] @ [x2, 1, |x2|^2]^T, clamped at 1e-30
    before the square root."""
    a, b = widened(x1._data), widened(x2._data)   # half precision: in float32, rounded once
    xp = namespace_of(a)
    a_norm = (a * a).sum(-1, keepdims=True)
    b_norm = (b * b).sum(-1, keepdims=True)
    left = xp.concatenate([a * -2, a_norm, xp.ones_like(a_norm)], axis=-1)
    right = xp.concatenate([b, xp.ones_like(b_norm), b_norm], axis=-1)
    squared = products.matmul(left, xp.swapaxes(right, -1, -2))
    distance = xp.sqrt(xp.maximum(squared, squared.dtype.type(1e-30)), out=squared)
    out = make(narrowed(distance, x1._data.dtype))
    node = record(EuclideanDistBackward0, (x1, x2), out)
    if node is not None:
        node.save(x1, x2, out)
    return out


def _cdist_by_product(x1, x2):
    """torch's matrix-product path: both sides broadcast to one batch and flattened to 3-D."""
    from .shape import broadcast_shapes
    batch = tuple(broadcast_shapes(x1.shape[:-2], x2.shape[:-2]))
    flat = (math.prod(batch),)
    a = x1.expand(batch + tuple(x1.shape[-2:])).reshape(flat + tuple(x1.shape[-2:]))
    b = x2.expand(batch + tuple(x2.shape[-2:])).reshape(flat + tuple(x2.shape[-2:]))
    return _euclidean_dist(a, b).view(batch + (x1.shape[-2], x2.shape[-2]))


@autocast_policy("fp32")
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """The p-norm distance between each pair of rows of ``x1`` (B x P x M) and ``x2``
    (B x R x M): a B x P x R tensor; batch dimensions broadcast. For p = 2, ``compute_mode``
    says when the distances come from one matrix product (faster, less exact for near
    points): "use_mm_for_euclid_dist_if_necessary" (when P or R exceeds 25), "use_mm_for_euclid_dist"
    or "donot_use_mm_for_euclid_dist"."""
    return _cdist_entry[0](x1, x2, p, compute_mode)


def _python_cdist(x1, x2, p, compute_mode):
    """``cdist`` in every case its compiled function (``_compiled_distances``) leaves to Python."""
    check_tensor(x1, "cdist", "x1")
    check_tensor(x2, "cdist", "x2")
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    a, b = x1._data, x2._data
    mode = _CDIST_MODES[compute_mode]
    by_product = (p == 2 and a.size and b.size and mode != "never" and a.ndim >= 2 and b.ndim >= 2
                  and (mode == "always" or max(a.shape[-2], b.shape[-2]) > _CDIST_MM_MIN_ROWS))
    _check_cdist(x1, x2, p, by_product)
    if by_product:   # torch's path takes half precision too (its matrix product does)
        return _cdist_by_product(x1, x2)
    diff = a[..., :, None, :] - b[..., None, :, :]
    out = make(_pairwise_norm(diff, float(p)).astype(a.dtype, copy=False))
    node = record(CdistBackward0, (x1, x2), out)
    if node is not None:
        node.save(x1, x2, out)
        node.p = float(p)
    return out


_cdist_entry = _compiled_functions.register(_python_cdist, CdistBackward0, kind="cdist")


class PdistBackward0(Node):
    __slots__ = ()
    jvp = jvp_by_transposition

    def backward(self, grad):
        from .creation import zeros
        from .ternary import where
        x, distance = self.saved_tensors
        n = x.shape[0]
        rows, cols = namespace_of(x._data).triu_indices(n, 1)
        ratio = where(distance == 0, 0, grad / distance)
        weights = zeros((n, n), dtype=x.dtype, device=x.device).index_put(
            (make(rows), make(cols)), ratio)
        weights = weights + weights.mT
        return (x * weights.sum(-1, keepdim=True) - weights @ x),

    def backward_arrays(self, grad):
        x, distance = self.saved_tensors
        data = x._data
        if not (type(data) is np.ndarray and data.dtype in openmp_kernels.PDIST_DTYPES
                and type(grad._data) is np.ndarray and grad._data.shape == distance._data.shape):
            return None
        out = openmp_kernels.pdist_euclidean_backward(grad._data, data, distance._data)
        return None if out is None else (make(out),)


def _pdist_euclidean(data):
    """The distances of each row to the rows after it, row by row, without a product's
    cancellation: an OpenMP loop over the pairs for NumPy's float32 and float64 matrices, else
    a pass per row."""
    if type(data) is np.ndarray and data.dtype in openmp_kernels.PDIST_DTYPES and data.shape[0] > 1:
        out = openmp_kernels.pdist_euclidean(data)
        if out is not None:
            return out
    xp = namespace_of(data)
    n = data.shape[0]
    out = xp.empty(n * (n - 1) // 2, dtype=data.dtype)
    start = 0
    for i in range(n - 1):
        diff = data[i + 1:] - data[i]
        stop = start + n - 1 - i
        xp.sqrt(xp.einsum("ij,ij->i", diff, diff), out=out[start:stop])
        start = stop
    return out


def pdist(input, p=2):
    """The p-norm distance between every pair of rows of ``input`` (N x M): the upper
    triangle of ``cdist(input, input)``, row by row, N (N - 1) / 2 values."""
    return _pdist_entry[0](input, p)


def _python_pdist(input, p):
    """``pdist`` in every case its compiled function (``_compiled_distances``) leaves to Python."""
    check_tensor(input, "pdist", "input")
    if input._data.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input._data.ndim}D")
    if input._data.dtype.kind != "f" and input._data.dtype not in _LOW_PRECISION:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if not p >= 0:   # NaN too
        raise RuntimeError("pdist only supports non-negative p values")
    n = input._data.shape[0]
    if input._data.dtype in _LOW_PRECISION and n > 1:
        raise NotImplementedError(f"\"pdist\" not implemented for "
                                  f"'{_type_word(input._data.dtype)}'")
    if p == 2 and input._data.shape[1]:
        out = make(_pdist_euclidean(input._data))
        node = record(PdistBackward0, (input,), out)
        if node is not None:
            node.save(input, out)
        return out
    rows, cols = namespace_of(input._data).triu_indices(n, 1)
    return (input[rows] - input[cols]).norm(float(p), dim=-1)


_pdist_entry = _compiled_functions.register(_python_pdist, PdistBackward0, ("self", "result"), kind="pdist",
                                            addresses=openmp_kernels.pdist_addresses)


def dist(input, other, p=2):
    """The p-norm of ``input - other`` (broadcast)."""
    return (input - other).norm(p)


for _name, _fn in (("det", det), ("logdet", logdet), ("slogdet", slogdet), ("inverse", inverse),
                   ("cholesky", cholesky), ("svd", svd), ("qr", qr), ("pinverse", None),
                   ("dist", dist)):
    if _fn is not None:
        method(_name)(getattr(_fn, "__wrapped__", _fn))   # methods take no out=
method("pinverse")(lambda self, rcond=1e-15: pinv(self, rtol=rcond))
