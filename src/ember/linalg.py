"""``ember.linalg``: linear algebra with gradients, as ``torch.linalg``.

Decompositions and the ops with their own backward live in ``ember.ops.matrix_decompositions``; the norms,
powers, ranks, least squares and products here are composed of those and of other ember ops,
so their gradients (and higher-order ones) come from the parts.
"""
import math

import numpy as np

from . import _dtype
from ._backend import lapack as _lapack
from .autograd import grad_mode as _grad
from .autograd._dual import forward as _forward
from .ops._common import _type_word, check_tensor, make, namespace_of, with_out, wrap_dim, write_out
from .ops.creation import ones as _ones
from .ops.shape import cat as _cat
from .ops import _compiled_functions, matrix_decompositions as _decomp
from .ops.matrix_decompositions import (
    LinAlgError, cholesky_ex, eigh, eigvalsh, inv, inv_ex, pinv, solve, svdvals,
)
from .ops.reduce import _vector_norm_of
from .ops.matrix_functions import vandermonde_untracked, matrix_exp, powers_array
from .ops.linalg import matmul
from .ops.eig import eig, eigvals
from .ops.householder import householder_product
from .ops.ldl import ldl_factor, ldl_factor_ex, ldl_solve
from .ops.lu import lu, lu_factor, lu_factor_ex, lu_solve, solve_ex
from .ops.triangular import solve_triangular
from .amp.policy import autocast_policy

__all__ = ["LinAlgError", "inv", "inv_ex", "det", "slogdet", "solve", "solve_ex", "cholesky",
           "cholesky_ex", "qr", "svd", "svdvals", "eigh", "eigvalsh", "norm", "vector_norm",
           "matrix_norm", "cond", "pinv", "matrix_power", "matrix_rank", "lstsq", "cross", "multi_dot",
           "vander", "matrix_exp", "matmul", "vecdot", "diagonal", "solve_triangular", "lu", "lu_factor",
           "lu_factor_ex", "lu_solve", "tensorinv", "tensorsolve", "householder_product",
           "eig", "eigvals", "ldl_factor", "ldl_factor_ex", "ldl_solve"]

# The notes torch's linalg docstrings share, by name.
common_notes = {
    "experimental_warning": "This function is \"experimental\" and it may change in a future release.",
    "sync_note": "When inputs are on a CUDA device, this function synchronizes that device with the CPU.",
    "sync_note_ex": "When the inputs are on a CUDA device, this function synchronizes only when "
                    ":attr:`check_errors`\\ `= True`.",
    "sync_note_has_ex": "When inputs are on a CUDA device, this function synchronizes that device with "
                        "the CPU. For a version of this function that does not synchronize, see "
                        ":func:`{}`.",
}

slogdet = _decomp.linalg_slogdet_fn
det = _decomp.linalg_det
cholesky = _decomp.linalg_cholesky
qr = _decomp.linalg_qr_fn
svd = _decomp.linalg_svd_fn
cross = _decomp.linalg_cross
_linalg_lstsq = _decomp._new_return_type(
    "linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))


# ----------------------------------------------------------------------------------------
# Norms

@with_out(op="linalg_vector_norm")
def vector_norm(input, ord=2, dim=None, keepdim=False, *, dtype=None):
    """The vector ``ord``-norm of ``x`` over ``dim`` (all elements by default): ord a number,
    inf, -inf or 0 (the count of non-zeros)."""
    check_tensor(input, "vector_norm", "input")
    return _vector_norm_of(input, ord, dim, keepdim, dtype)


def _matrix_dims(A, dim):
    if A._data.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        raise RuntimeError("linalg.matrix_norm: dim must be a 2-tuple. Got "
                           f"{' '.join(map(str, dim)) if isinstance(dim, (tuple, list)) else dim}")
    d0, d1 = (wrap_dim(d, A._data.ndim) for d in dim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, {dim[1]})")
    return d0, d1


def _restore(result, dims, keepdim):
    if keepdim:
        for d in sorted(dims):
            result = result.unsqueeze(d)
    return result


@with_out(op="linalg_matrix_norm")
def matrix_norm(input, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """The matrix norm of ``A`` over the two dims ``dim``: 'fro', 'nuc' (sum of singular
    values), 2 / -2 (largest / smallest singular value), 1 / -1 (max / min column sum of
    absolute values), inf / -inf (max / min row sum)."""
    check_tensor(input, "matrix_norm", "input")
    dt = input._data.dtype
    if dt.kind not in "fc" and dt != _dtype.bfloat16.np:
        raise RuntimeError("linalg.matrix_norm: Expected a floating point or complex tensor as input. "
                           f"Got {_decomp._type_word(dt)}")
    if (ord == "nuc" or ord in (2, -2)) and dt in _decomp._LOW_PRECISION:
        raise RuntimeError(f"linalg.matrix_norm: Low precision dtypes not supported. Got {_decomp._type_word(dt)}")
    d0, d1 = _matrix_dims(input, dim)
    if dtype is not None:
        input = input.to(dtype)
    if isinstance(ord, str):
        if ord == "fro":
            return vector_norm(input, 2, (d0, d1), keepdim)
        if ord != "nuc":
            raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    elif ord not in (1, -1, 2, -2, math.inf, -math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord:g} not supported.")
    if ord == "nuc" or ord in (2, -2):
        values = svdvals(input.movedim((d0, d1), (-2, -1)))
        reduced = values.sum(-1) if ord == "nuc" else (_largest(values, -1, False) if ord == 2
                                                        else values.amin(-1))
        return _restore(reduced, (d0, d1), keepdim)
    if math.isinf(ord):
        d0, d1 = d1, d0
    sums = input.abs().sum(d0, keepdim=keepdim)
    if not keepdim and d1 > d0:
        d1 -= 1
    return _largest(sums, d1, keepdim) if ord > 0 else sums.amin(d1, keepdim=keepdim)


def _largest(t, dim, keepdim):
    """``t.amax(dim)``, 0 over no elements: the largest of nonnegative sizes, as torch's
    matrix norms take it (a smallest one over no elements is an error there too)."""
    if t._data.shape[dim] == 0:
        from .ops.creation import zeros
        shape = list(t._data.shape)
        if keepdim:
            shape[dim] = 1
        else:
            del shape[dim]
        return zeros(shape, dtype=t.dtype, device=t.device)
    return t.amax(dim, keepdim=keepdim)


@with_out(op="linalg_norm")
def norm(input, ord=None, dim=None, keepdim=False, *, dtype=None):
    """A vector or matrix norm: a matrix norm when ``dim`` is a 2-tuple (or ``A`` is 2-D and
    ``ord`` is given without ``dim``), else a vector norm; ``ord=None`` means the 2-norm of
    the flattened tensor or 'fro'."""
    check_tensor(input, "norm", "input")
    if dim is not None:
        dims = tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
        if len(dims) == 2 or (isinstance(ord, str) and input._data.ndim < 2):
            return matrix_norm(input, "fro" if ord is None else ord, dims, keepdim, dtype=dtype)
        return vector_norm(input, 2 if ord is None else ord, dims, keepdim, dtype=dtype)
    if ord is None:
        return vector_norm(input, 2, None, keepdim, dtype=dtype)
    ndim = input._data.ndim
    if ndim == 2 or (ndim < 2 and isinstance(ord, str)):   # 'fro', 'nuc' are matrix norms
        return matrix_norm(input, ord, (-2, -1), keepdim, dtype=dtype)
    if ndim == 1:
        return vector_norm(input, ord, None, keepdim, dtype=dtype)
    raise RuntimeError("linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                       f"Got {ndim}D.")


# ----------------------------------------------------------------------------------------
# Powers, ranks, least squares

def matrix_power(input, n, *, out=None):
    """The square matrices ``input`` (``A`` in torch's documentation; torch's keyword is
    ``input``) raised to the integer power ``n`` (a matrix product of ``n`` copies); ``n = 0``
    gives the identity and a negative ``n`` the power of the inverse."""
    result = _matrix_power(input, n)
    return result if out is None else write_out(result, out, True, "linalg_matrix_power")


def _matrix_power(input, n):
    check_tensor(input, "matrix_power", "input")
    data = input._data
    if data.ndim < 2 or data.shape[-1] != data.shape[-2]:
        raise RuntimeError("linalg.matrix_power: A must be batches of square matrices, but they are "
                           f"{data.shape[-2] if data.ndim > 1 else data.shape[-1]} by "
                           f"{data.shape[-1]} matrices")
    n = int(n)
    if n == 0:
        xp = namespace_of(data)
        identity = make(xp.eye(data.shape[-1], dtype=data.dtype))
        if input._requires_grad:
            return input * 0 + identity
        return make(xp.broadcast_to(identity._data, data.shape).copy())
    if n < 0:
        input, n = inv(input), -n
    result, square = None, input
    while True:
        if n & 1:
            result = square if result is None else result @ square
        n >>= 1
        if not n:
            return result
        square = square @ square


def _singular_sizes(A, hermitian):
    data = A._data
    xp = namespace_of(data)
    if data.size == 0:   # no values, whatever the shape (torch asks no square matrix then)
        return xp.zeros(data.shape[:-2] + (min(data.shape[-2:]),), dtype=np.finfo(data.dtype).dtype)
    if hermitian:
        return xp.abs(_decomp.eigh_arrays(data, eigenvectors=False))
    return _decomp.svd_arrays(data, compute_uv=False)


def _check_float_double_or_complex(A):
    """torch's tolerance-based functions (matrix_rank, lstsq) accept float32, float64 and the
    complex types only; every other dtype is refused by this check of their own."""
    dt = A._data.dtype
    if dt.kind not in "fc" or dt in _decomp._LOW_PRECISION:
        raise RuntimeError("This function doesn't handle types other than float and double")


@with_out(exact=False, op="linalg_matrix_rank")
@autocast_policy("fp32")
def matrix_rank(input, *, atol=None, rtol=None, hermitian=False, tol=None):
    """The numerical rank: the number of singular values (eigenvalue magnitudes when
    ``hermitian``) above max(atol, rtol * the largest one)."""
    check_tensor(input, "matrix_rank", "input")
    data = input._data
    if data.ndim < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at least 2 "
                           "dimensions.")
    if tol is not None:
        atol, rtol = tol, 0.0
    if rtol is None:
        _check_float_double_or_complex(input)  # the default rtol needs the dtype's epsilon
    elif hermitian:
        _decomp._check_eigh(input, "linalg.eigh", "L")
    else:
        _decomp.check_matrix(input, "linalg.svd", square=False, kernel="linalg_svd_cpu")
    if hermitian and data.size:
        _decomp.check_matrix(input, "linalg.eigh")
    sizes = _singular_sizes(input, hermitian)
    limit = _decomp.tolerance(namespace_of(data), _decomp.largest(sizes), data.shape, data.dtype, atol, rtol)
    return make((sizes > limit[..., None]).sum(-1).astype("int64"))


@autocast_policy("fp32")
def lstsq(input, b, rcond=None, *, driver=None, out=None):
    """The least-squares solution of ``A X = B`` (minimum norm when ``A`` is rank deficient),
    with the squared residuals (drivers gelsd, gelss, gels; when m > n and A has full rank),
    the rank (all drivers but gels) and the singular values (gelsd, gelss). ``out=`` takes
    a tuple of four tensors, each of a dtype its result casts to."""
    result = _lstsq(input, b, rcond, driver=driver)
    return result if out is None else write_out(result, out, False, "linalg_lstsq")


def _lstsq(input, b, rcond=None, *, driver=None):
    check_tensor(input, "lstsq", "self")
    check_tensor(b, "lstsq", "b")
    _check_float_double_or_complex(input)
    _decomp.check_matrix(input, "torch.linalg.lstsq", square=False)
    driver = driver or "gelsy"
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, "
                           "gelss)")
    if b._data.ndim < 1:
        raise RuntimeError("torch.linalg.lstsq: other must have at least 1 dimension.")
    if not 0 <= input._data.ndim - b._data.ndim <= 1:
        raise RuntimeError("torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and "
                           "(input.dim() - other.dim()) <= 1")
    vector = b._data.ndim == input._data.ndim - 1 and b._data.shape == input._data.shape[:-1]
    B2 = b.unsqueeze(-1) if vector else b
    m, n = input._data.shape[-2:]
    if B2._data.shape[-2] != m:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    if driver == "gelsy":
        solved = _lstsq_by_gelsy(input, B2, rcond)
        if solved is not None:
            solution, rank = solved
            empty = np.zeros((0,), dtype=input._data.dtype)
            return _linalg_lstsq(solution.squeeze(-1) if vector else solution, make(empty), make(rank),
                                 make(empty))
    if driver in ("gelsd", "gelss"):
        solved = _lstsq_by_svd(input, B2, rcond, driver, vector)
        if solved is not None:
            return solved
    solution = pinv(input, rtol=rcond) @ B2
    data, xp = input._data, namespace_of(input._data)
    sizes = _decomp.svd_arrays(data, compute_uv=False)
    rank = (sizes > _decomp.tolerance(xp, _decomp.largest(sizes), data.shape, data.dtype, None,
                                      rcond)[..., None]).sum(-1)
    residuals = xp.zeros((0,), dtype=data.dtype)
    if driver != "gelsy" and m > n and bool((rank == n).all()):
        gap = data @ solution._data - B2._data
        residuals = (gap * gap).sum(-2)   # (a vector's too keep their last dim, as torch's)
    empty = xp.zeros((0,), dtype=data.dtype)
    return _linalg_lstsq(solution.squeeze(-1) if vector else solution, make(residuals),
                         make(rank.astype("int64")) if driver != "gels" else make(empty.astype("int64")),
                         make(sizes) if driver in ("gelsd", "gelss") else make(empty))


def _on_lapack(A, B):
    """Whether A X = B goes to one of LAPACK's least-squares drivers, as torch's CPU lstsq: a batch of at
    most max(m, n) real systems of one batch shape where nothing is recorded (the gradient goes through
    ``pinv``)."""
    a, b = A._data, B._data
    return (type(a) is np.ndarray and a.shape[:-2] == b.shape[:-2] and math.prod(a.shape[:-2]) <= max(a.shape[-2:])
            and not _forward.active and not (_grad.state.grad_enabled and (A._requires_grad or B._requires_grad)))


def _lapack_rcond(a, rcond):
    """torch's default rcond (the dtype's eps times max(m, n)) where ``rcond`` is None."""
    return float(np.finfo(a.dtype).eps * max(a.shape[-2:]) if rcond is None else rcond)


def _lstsq_by_gelsy(A, B, rcond):
    """(solution, rank) of A X = B by LAPACK's gelsy, as torch's CPU default (``_on_lapack``); None
    where that does not apply."""
    if not _on_lapack(A, B):
        return None
    a, b = A._data, B._data
    m, n = a.shape[-2:]
    count = math.prod(a.shape[:-2])
    solved = _lapack.gelsy(a.reshape((count, m, n)), b.reshape((count, m, b.shape[-1])), _lapack_rcond(a, rcond))
    if solved is None:
        return None
    solution, rank = solved
    return make(solution.reshape(a.shape[:-2] + solution.shape[-2:])), rank.reshape(a.shape[:-2])


def _lstsq_by_svd(A, B, rcond, driver, vector):
    """linalg.lstsq's result of A X = B by LAPACK's gelsd or gelss (``driver``), as torch's CPU lstsq
    (``_on_lapack``): the solution, the squared residuals where m > n and every matrix has rank n (the
    squares of the rows past n the routine leaves, summed), the ranks and the singular values; None where
    that does not apply."""
    if not _on_lapack(A, B):
        return None
    a, b = A._data, B._data
    m, n = a.shape[-2:]
    batch, count = a.shape[:-2], math.prod(a.shape[:-2])
    solved = _lapack.svd_least_squares(a.reshape((count, m, n)), b.reshape((count, m, b.shape[-1])),
                                       _lapack_rcond(a, rcond), driver)
    if solved is None:
        return None
    right, values, ranks = (part.reshape(batch + part.shape[1:]) for part in solved)
    solution = right[..., :n, :]
    residuals = np.zeros((0,), dtype=a.dtype)
    if m > n and bool((ranks == n).all()):
        raw = right[..., n:, :]
        residuals = (raw * raw).sum(-2)   # (a vector's too keep their last dim, as torch's)
    return _linalg_lstsq(make(solution[..., 0] if vector else np.ascontiguousarray(solution)), make(residuals),
                         make(ranks), make(values))


# ----------------------------------------------------------------------------------------
# Products and structured matrices

@with_out(op="linalg_multi_dot")
def multi_dot(tensors):
    """The product of a chain of matrices; the first may be a row vector and the last a column
    vector (1-D tensors)."""
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    first, last = tensors[0], tensors[-1]
    if first._data.ndim not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {first._data.ndim}D")
    if last._data.ndim not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last._data.ndim}D")
    for i, t in enumerate(tensors[1:-1], 1):
        if t._data.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t._data.ndim}D")
    row, column = first._data.ndim == 1, last._data.ndim == 1
    tensors[0] = first.unsqueeze(0) if row else first
    tensors[-1] = last.unsqueeze(-1) if column else last
    result = tensors[0]
    for t in tensors[1:]:
        result = result.mm(t)
    if row:
        result = result.squeeze(0)
    if column:
        result = result.squeeze(-1)
    return result


def vander(x, N=None):
    """The Vandermonde matrix of ``x`` (*, n): columns x^0, x^1, ..., x^(N-1) (N = n by
    default)."""
    return _vander_entry[0](x, N, True)


def _python_vander(x, N, increasing):
    """``vander`` in every case its compiled function (``ops._compiled_vander``) leaves to Python."""
    check_tensor(x, "vander", "x")
    if x.dtype in (_dtype.float16, _dtype.bfloat16, _dtype.bool):
        raise RuntimeError("linalg.vander supports floating point, complex, and integer tensors, "
                           f"but got {_type_word(x._data.dtype)}")
    n = x._data.shape[-1] if x._data.ndim else 1
    N = n if N is None else N
    if N <= 1:
        raise RuntimeError("N must be greater than 1.")
    if vandermonde_untracked(x):
        return make(powers_array(x._data.reshape(-1) if not x._data.ndim else x._data, N))
    if not x._data.ndim:   # torch takes a 0-d x as one value
        x = x.reshape(1)
    powers = x.unsqueeze(-1).expand(*x._data.shape, N - 1).cumprod(-1)
    first = _ones(*x._data.shape, 1, dtype=powers.dtype, device=x.device)
    return _cat([first, powers], -1)


_vander_entry = _compiled_functions.register(_python_vander, None, kind="vander", specifics=True)


@with_out(op="linalg_vecdot")
@autocast_policy("lower")
def vecdot(x, y, *, dim=-1):
    """The dot product of the vectors of ``x`` and ``y`` along ``dim`` (the other dimensions
    broadcast), conjugating ``x``: ``sum(x.conj() * y, dim)``."""
    check_tensor(x, "linalg_vecdot", "x")
    check_tensor(y, "linalg_vecdot", "y")
    xd, yd = x._data.dtype, y._data.dtype
    if xd != yd:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
                           f"{_type_word(xd)} and y of type {_type_word(yd)} instead")
    if xd.kind not in "fc" and xd != _dtype.bfloat16.np:
        raise RuntimeError("linalg.vecdot: Expected a floating point or complex tensor as input. Got "
                           f"{_type_word(xd)}")
    if xd.kind == "c":   # ember has no complex autograd (nor conj) yet: conjugate the values
        from .ops._common import grad_state
        from ._tensor import _COMPLEX_AUTOGRAD
        if grad_state.grad_enabled and (x._requires_grad or y._requires_grad):
            raise NotImplementedError(_COMPLEX_AUTOGRAD)
        x = make(namespace_of(x._data).conj(x._data))
    return (x * y).sum(dim)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonal of ``A`` (of each matrix of a batch by default) as a view: ``offset`` above
    (positive) or below (negative) the main one, between dims ``dim1`` and ``dim2``."""
    check_tensor(A, "linalg_diagonal", "A")
    return A.diagonal(offset, dim1, dim2)


_COND_ORDS = (1, -1, 2, -2, math.inf, -math.inf)


@with_out(op="linalg_cond")
@autocast_policy("fp32")
def cond(input, p=None):
    """The condition number of ``A`` in the matrix norm ``p``: the ratio of the largest to the
    smallest singular value for ``p`` None or 2 (-2: its inverse), else
    ``norm(A, p) * norm(inv(A), p)`` for square ``A`` ('fro', 'nuc', 1, -1, inf, -inf); a singular
    ``A`` gives inf."""
    A = input
    check_tensor(A, "linalg_cond", "A")
    if A._data.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    ord = 2 if p is None else p
    if isinstance(ord, str) and ord not in ("fro", "nuc") or not isinstance(ord, str) and ord not in _COND_ORDS:
        raise RuntimeError(f"linalg.cond got an invalid norm type: {ord if isinstance(ord, str) else f'{ord:g}'}")
    data = A._data
    if ord in (2, -2):
        _decomp.check_matrix(A, "linalg.svd", square=False, kernel="linalg_svd_cpu")
        if not data.size:
            return _empty_cond(A)
        values = svdvals(A)
        largest, smallest = values[..., :1], values[..., -1:]
        return (smallest / largest if ord == -2 else largest / smallest).squeeze(-1)
    if data.shape[-1] != data.shape[-2]:
        raise RuntimeError(f"linalg.cond(ord={ord if isinstance(ord, str) else f'{ord:g}'}): A must be "
                           f"batches of square matrices, but they are {data.shape[-2]} by {data.shape[-1]} "
                           "matrices")
    if ord == "nuc":
        _decomp.check_matrix(A, "linalg.svd", kernel="linalg_svd_cpu")
        if not data.size:
            return _empty_cond(A)
        values = svdvals(A)
        return values.sum(-1) * values.reciprocal().sum(-1)
    _decomp.check_matrix(A, "linalg.inv")
    if not data.size:
        return _empty_cond(A)
    inverse, info = inv_ex(A)
    inverse = inverse.masked_fill((info > 0).unsqueeze(-1).unsqueeze(-1), math.inf)
    return (matrix_norm(A, ord) * matrix_norm(inverse, ord)).nan_to_num(math.inf, math.inf, -math.inf)


def _empty_cond(A):
    """torch's condition number of 0 x 0 matrices: zeros."""
    data = A._data
    xp = namespace_of(data)
    return make(xp.zeros(data.shape[:-2], dtype=np.finfo(data.dtype).dtype))


@with_out(op="linalg_tensorinv")
@autocast_policy("fp32")
def tensorinv(input, ind=2):
    """The inverse of ``A`` for ``tensordot`` over ``ind`` dimensions: ``A`` read as the square
    matrix of shape (prod(A.shape[:ind]), prod(A.shape[ind:])), inverted, and shaped as
    ``A.shape[ind:] + A.shape[:ind]``."""
    A = input
    check_tensor(A, "linalg_tensorinv", "A")
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    shape = tuple(A.shape)
    rows, cols = math.prod(shape[:ind]), math.prod(shape[ind:])
    if rows != cols:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    try:
        inverse = inv(A.reshape(cols, cols))
    except LinAlgError as error:
        raise LinAlgError(str(error).replace("linalg.inv:", "inv:", 1)) from None
    return inverse.reshape(shape[ind:] + shape[:ind])


@with_out(op="linalg_tensorsolve")
@autocast_policy("fp32")
def tensorsolve(input, other, dims=None):
    """The X with ``tensordot(A, X, X.ndim) = B``: the dims ``dims`` of ``A`` are moved to its
    end, ``A`` is read as a square matrix of prod(B.shape) rows and solved against ``B``
    flattened; X has the shape of ``A``'s trailing dims."""
    A, B = input, other
    check_tensor(A, "linalg_tensorsolve", "A")
    check_tensor(B, "linalg_tensorsolve", "B")
    ndim = A._data.ndim
    if dims is not None:
        dims = list(dims)
        A = A.movedim(dims, list(range(ndim - len(dims), ndim)))
    result_shape = tuple(A.shape)[B._data.ndim:]
    result_size, b_size = math.prod(result_shape), math.prod(B.shape)
    if result_size != b_size:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           f"prod(self.shape[:other.ndim]), but got {result_size} != {b_size}")
    return solve(A.reshape(result_size, result_size), B.flatten()).reshape(result_shape)
