"""Matrix functions and matrix-shaped products: ``matrix_exp`` (with its own node), ``addr``
(its own node for real floats, else composed), and ``adjoint``, ``vander`` and ``renorm``,
composed of other ember ops so that their gradients come from the parts."""
import math

import numpy as np

from .. import _flop_hook
from .._backend import openmp_kernels
from . import _compiled_functions
from ..autograd.graph import Node
from ._common import (
    apply_inplace, broadcasts_to, bump_version, check_inplace, check_tensor, forward_mode, grad_state,
    inplace_untracked, make, method, namespace_of, record, sum_to, with_out, wrap_dim, write_out, Tensor,
)
from .. import _dtype
from .creation import ones, zeros_like
from .linalg import _AFFINE_DTYPES, outer, rank_one_array, rank_one_untracked
from .matrix_decompositions import check_matrix
from .reduce import _norm_data, _reduce_dims, _vector_norm, _vector_norm_grad
from .shape import cat
from .ternary import where
from .._dtype import bool as _bool, float32 as _float32
from ..autograd._dual import jvp_by_transposition

__all__ = ["matrix_exp", "addr", "adjoint", "vander", "renorm"]


# ----------------------------------------------------------------------------------------
# matrix_exp: scaling and squaring, over the [13/13] Pade approximant in float64 (Higham, 2005)
# and over a Taylor polynomial in float32 and complex64, as torch computes those (no solve)

_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
           129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
           40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152

# Taylor degree m -> the largest 1-norm for which the degree-m polynomial's backward error is at
# most float32's unit roundoff 2**-24 (Al-Mohy and Higham's bound on the series of
# log(exp(-A) T_m(A)), its coefficients' absolute values summed; computed with mpmath)
_TAYLOR_THETA = {1: 1.192092800768788e-07, 2: 5.978858893805233e-04, 4: 5.116619363445086e-02,
                 6: 2.495289322846698e-01, 9: 7.795113374358031e-01, 12: 1.461661507209034e+00,
                 16: 2.478280877521971e+00, 20: 3.550926214706495e+00, 25: 4.926899843755911e+00}


def _squarings(norm, theta):
    return math.ceil(math.log2(norm / theta)) if theta < norm < math.inf else 0


def _stockmeyer_split(m):
    """(q, products) of Paterson and Stockmeyer's evaluation of a degree-m polynomial: the
    powers A^2..A^q, then Horner's rule in A^q over blocks of q terms."""
    q = max(1, math.isqrt(m) + (math.isqrt(m) ** 2 < m))
    return q, (q - 1) + (math.ceil(m / q) - 1)


_TAYLOR_PRODUCTS = {m: _stockmeyer_split(m)[1] for m in _TAYLOR_THETA}


def _taylor_degree(norm):
    """The degree whose products and squarings are fewest for a matrix of this 1-norm (the
    fewer squarings where two tie); the highest for an infinite or NaN norm, whose products
    spread NaN over the matrix as torch's do."""
    if not norm < math.inf:
        return max(_TAYLOR_THETA)
    if norm <= _TAYLOR_THETA[1]:
        return 1
    return min(_TAYLOR_THETA, key=lambda m: (_TAYLOR_PRODUCTS[m] + _squarings(norm, _TAYLOR_THETA[m]),
                                           _squarings(norm, _TAYLOR_THETA[m])))


def _taylor(xp, a, m):
    """sum over k <= m of a^k / k!, by Paterson and Stockmeyer's scheme."""
    q, _ = _stockmeyer_split(m)
    eye = xp.broadcast_to(xp.eye(a.shape[-1], dtype=a.dtype), a.shape)
    powers = [eye, a]
    for _ in range(2, q + 1):
        powers.append(powers[-1] @ a)
    coefficient = [1.0 / math.factorial(k) for k in range(m + 1)]

    def block(first, last):
        return sum(coefficient[k] * powers[k - first] for k in range(first, last + 1))
    blocks = math.ceil(m / q)
    result = block((blocks - 1) * q, m)   # (the last block takes up to A^q itself)
    for j in range(blocks - 2, -1, -1):
        result = result @ powers[q] + block(j * q, j * q + q - 1)
    return result


def _matrix_exp_data(data):
    xp = namespace_of(data)
    n = data.shape[-1]
    if data.size == 0:
        return data.copy()
    if data.dtype in (xp.float32, xp.complex64):
        norm = float(xp.abs(data).sum(-2).max())
        m = _taylor_degree(norm)
        squarings = _squarings(norm, _TAYLOR_THETA[m])
        r = _taylor(xp, data / data.real.dtype.type(2.0 ** squarings), m)
    else:
        a = data.astype(xp.complex128 if data.dtype.kind == "c" else xp.float64)
        norm = float(xp.abs(a).sum(-2).max())
        squarings = _squarings(norm, _THETA13)
        a = a / (2.0 ** squarings)
        b = _PADE13
        eye = xp.eye(n, dtype=a.dtype)
        a2 = a @ a
        a4 = a2 @ a2
        a6 = a4 @ a2
        u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2
                 + b[1] * eye)
        v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * eye
        r = xp.linalg.solve(v - u, v + u)
    for _ in range(squarings):
        r = r @ r
    return r.astype(data.dtype, copy=False)


class LinalgMatrixExpBackward0(Node):
    """gA = exp([[A^H, G], [0, A^H]]) upper right block (the Frechet derivative's adjoint)."""
    __slots__ = ()
    saved_fields = {"self": 0}
    jvp = jvp_by_transposition

    def backward(self, grad):
        (A,) = self.saved_tensors
        n = A.shape[-1]
        A_h = A.mH
        top = cat([A_h, grad], -1)
        bottom = cat([zeros_like(A_h), A_h], -1)
        big = matrix_exp(cat([top, bottom], -2))
        return (big[..., :n, n:],)


@method()
def matrix_exp(input):
    """Computes the matrix exponential of a square matrix or of each square matrix in a batch:
    the sum over k of input^k / k!."""
    A = input
    check_tensor(A, "matrix_exp", "input")
    if A.is_floating_point() and A._data.dtype.itemsize == 2:   # torch computes in half too
        check_matrix(A.to(_float32), "linalg.matrix_exp")
    else:
        check_matrix(A, "linalg.matrix_exp")
    result = make(_matrix_exp_data(A._data))
    node = record(LinalgMatrixExpBackward0, (A,), result)
    if node is not None:
        node.save(A)
    return result


# ----------------------------------------------------------------------------------------
# addr, adjoint, vander, renorm

def _check_addr(input, vec1, vec2):
    for t, name in ((input, "input"), (vec1, "vec1"), (vec2, "vec2")):
        check_tensor(t, "addr", name)
    if vec1._data.ndim != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {vec1.dim()}-D")
    if vec2._data.ndim != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec2, but got {vec2.dim()}-D")


def _check_addr_scalars(input, vec1, vec2, beta, alpha):
    if beta.__class__ is int and alpha.__class__ is int:   # (the defaults: nothing to refuse)
        return
    bool_result = all(t.dtype == _dtype.bool for t in (input, vec1, vec2))
    if not bool_result:
        for value, name in ((beta, "beta"), (alpha, "alpha")):
            if isinstance(value, bool):
                raise RuntimeError(f"Boolean {name} only supported for Boolean results.")
        floating = any(t.is_floating_point() for t in (input, vec1, vec2))
        for value, name in ((beta, "beta"), (alpha, "alpha")):
            if not floating and isinstance(value, float):
                raise RuntimeError(f"For integral input tensors, argument {name} must not be a "
                                   "floating point number.")


@method()
@with_out(exact=False, op="addr")
def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """Performs the outer-product of vectors ``vec1`` and ``vec2`` and adds it to the matrix
    ``input``: ``beta * input + alpha * outer(vec1, vec2)`` (``input`` is ignored when
    ``beta`` is 0, so that its NaN and inf do not propagate)."""
    return _addr_entry[0](input, vec1, vec2, beta, alpha)


def _python_addr(input, vec1, vec2, beta=1, alpha=1):
    """``addr`` in every case its compiled function (``ops._compiled_functions``) leaves to Python."""
    _check_addr(input, vec1, vec2)
    _check_addr_scalars(input, vec1, vec2, beta, alpha)
    untracked = rank_one_untracked(vec1, vec2, input, beta, alpha)
    if untracked is not None:
        return untracked
    tracked = _addr_recorded(input, vec1, vec2, beta, alpha)
    if tracked is not None:
        return tracked
    if all(t.dtype == _dtype.bool for t in (input, vec1, vec2)):
        product = outer(vec1, vec2) & bool(alpha)
        return (product | (input & bool(beta))).expand(product.shape).clone()
    product = outer(vec1, vec2)
    if alpha != 1:
        product = product * alpha
    if beta == 0:
        return _plus_ignored(product, input)
    return (input * beta if beta != 1 else input) + product


class AddrBackward0(Node):
    """Backward of ``beta * input + alpha * outer(vec1, vec2)`` for real floats: the input's
    gradient ``beta * grad`` summed to its shape, the vectors' ``alpha * grad @ vec2`` and
    ``alpha * vec1 @ grad`` (matrix-vector products, not elementwise ones summed)."""
    __slots__ = ("beta", "alpha", "input_shape")
    saved_fields = {"vec1": 0, "vec2": 1, "beta": "beta", "alpha": "alpha"}
    jvp = jvp_by_transposition

    def backward(self, grad):
        vec1, vec2 = self.saved_tensors
        need_input, need_vec1, need_vec2 = (fn is not None for fn, _ in self.next_functions)
        g_input = g_vec1 = g_vec2 = None
        if need_input:
            g_input = sum_to(grad * self.beta if self.beta != 1 else grad, self.input_shape)
        gd = grad._data
        dense = gd.flags.c_contiguous or gd.flags.f_contiguous or gd.size < _BROADCAST_GEMV_MAX_ELEMENTS
        if need_vec1:   # (a large broadcast gradient, as a sum's: products summed, not a slow GEMV)
            g_vec1 = grad.mv(vec2) if dense else (grad * vec2).sum(1)
            g_vec1 = g_vec1 * self.alpha if self.alpha != 1 else g_vec1
        if need_vec2:
            g_vec2 = grad.t().mv(vec1) if dense else (grad * vec1.unsqueeze(1)).sum(0)
            g_vec2 = g_vec2 * self.alpha if self.alpha != 1 else g_vec2
        return g_input, g_vec1, g_vec2


# a broadcast gradient (a sum's) of this many elements or more takes products summed, not the
# GEMV, which reads it element by element
_BROADCAST_GEMV_MAX_ELEMENTS = 1 << 12


def _addr_recorded(input, vec1, vec2, beta, alpha):
    """``addr`` of real float tensors of one dtype as one node (``AddrBackward0``, torch's),
    where a gradient is recorded and no tangent or FLOP counter is: the product by one GEMM
    where ``rank_one_array`` takes it, else by the composite's NumPy operations in its order;
    None for the other cases (the composite of ember ops)."""
    a, b, d = vec1._data, vec2._data, input._data
    if (forward_mode.active or _flop_hook.counter is not None or not grad_state.grad_enabled
            or not (input._requires_grad or vec1._requires_grad or vec2._requires_grad)
            or type(a) is not np.ndarray or type(b) is not np.ndarray or type(d) is not np.ndarray
            or a.dtype not in _AFFINE_DTYPES or b.dtype != a.dtype or d.dtype != a.dtype
            or not broadcasts_to(d.shape, (a.shape[0], b.shape[0]))):
        return None
    c = rank_one_array(a, b, d, beta, alpha)
    if c is None:
        c = a.reshape(-1, 1) * b
        if alpha != 1:
            c = c * alpha
        if beta != 0:
            c = (d * beta if beta != 1 else d) + c
    out = make(c)
    node = record(AddrBackward0, (input, vec1, vec2), out)
    node.beta, node.alpha, node.input_shape = beta, alpha, d.shape
    node.save(vec1, vec2)
    return out


# (where nothing records: the rank-one loop called from C)
_addr_entry = _compiled_functions.register(_python_addr, None, kind="rank_one",
                                           addresses=openmp_kernels.rank_one_addresses, specifics=(_flop_hook,))


def _plus_ignored(product, input):
    """``product`` broadcast with ``input`` (whose values are ignored; its gradient is zero)."""
    return where(ones((), dtype=_bool, device=product.device), product, input)


@method()
def addr_(self, vec1, vec2, *, beta=1, alpha=1):
    """In-place ``addr``. Where nothing records, a row-major float NumPy matrix takes the loop's result itself
    (no copy of it, nor a copy back), unless a vector shares its memory."""
    _check_addr(self, vec1, vec2)
    data = self._data
    if data.shape != (vec1._data.shape[0], vec2._data.shape[0]):
        raise RuntimeError(f"size mismatch, input: {list(self.shape)}, v1: {list(vec1.shape)}, "
                           f"v2: {list(vec2.shape)}")
    if (data.__class__ is np.ndarray and data.flags.c_contiguous and inplace_untracked(self)
            and data.size >= openmp_kernels.ELEMENTWISE_MIN_ELEMENTS   # (smaller ones: the compiled path)
            and _flop_hook.counter is None and not (grad_state.grad_enabled and (vec1._requires_grad
                                                                                 or vec2._requires_grad))
            and _real_numbers(beta, alpha) and not any(np.may_share_memory(v._data, data) for v in (vec1, vec2))):
        check_inplace(self)
        if openmp_kernels.rank_one(vec1._data, vec2._data, data, beta, alpha, out=data) is not None:
            bump_version(self)
            return self
    return apply_inplace(self, _addr_entry[0], vec1, vec2, beta, alpha)


def _real_numbers(*values):
    return all(v.__class__ in (int, float) for v in values)


@method()
def adjoint(input):
    """Returns a view of ``input`` conjugated and with its last two dimensions transposed."""
    check_tensor(input, "adjoint")
    if input.dim() == 0:
        return input.view(())
    if input.dim() < 2:
        raise RuntimeError("tensor.adjoint() is only supported on matrices or batches of matrices. "
                           f"Got {input.dim()}-D tensor.")
    if input._data.dtype.kind == "c":   # ember has no conjugate views: a conjugated copy
        return make(namespace_of(input._data).conj(input._data.swapaxes(-1, -2)))
    return input.mT


def vander(x, N=None, increasing=False):
    """Generates a Vandermonde matrix of the 1-D ``x``: its columns are powers of ``x``,
    decreasing from ``x^(N-1)`` to ``x^0`` (increasing with ``increasing=True``); N is the
    length of ``x`` by default."""
    return _vander_entry[0](x, N, increasing)


def _python_vander(x, N, increasing):
    """``vander`` in every case its compiled function (``_compiled_vander``) leaves to Python."""
    check_tensor(x, "vander", "x")
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0]
    N = n if N is None else N
    if N < 0:
        raise RuntimeError("N must be non-negative.")
    if N and vandermonde_untracked(x):
        powers = powers_array(x._data, N)
        return make(powers if increasing else powers[:, ::-1].copy())
    if not (x.is_floating_point() or x.is_complex()):  # bfloat16 is floating
        x = x.to(_dtype.int64)
    columns = [ones(n, 1, dtype=x.dtype, device=x.device)] if N else []
    if N > 1:
        columns.append(x.unsqueeze(-1).expand(n, N - 1).cumprod(-1))
    result = cat(columns, -1) if columns else x.new_empty((n, 0))
    return result if increasing else result.flip(-1)


_vander_entry = _compiled_functions.register(_python_vander, None, kind="vander", specifics=False)

_POWERS_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def vandermonde_untracked(x):
    """Whether a Vandermonde matrix of ``x`` is ``powers_array``'s: an ordinary tensor of NumPy float32,
    float64 or integers where nothing records."""
    data = x._data
    return (x.__class__ is Tensor and data.__class__ is np.ndarray and (data.dtype in _POWERS_DTYPES
                                                                      or data.dtype.kind in "iu")
            and not forward_mode.active and not (grad_state.grad_enabled and x._requires_grad))


def powers_array(data, N):
    """The powers x^0 ... x^(N - 1) of the NumPy array ``data`` (*, n) as a new array (*, n, N), integers as
    int64 (wrapping around): each the one before times x, a running product (float32's in float64, as
    torch's ``cumprod`` keeps it)."""
    if data.dtype.kind in "iu":
        data = data.astype(np.int64)
    out = np.empty(data.shape + (N,), data.dtype)
    out[..., 0] = 1
    if N > 1:
        repeated = np.broadcast_to(data[..., None], data.shape + (N - 1,))
        if data.dtype == np.float32:
            out[..., 1:] = np.multiply.accumulate(repeated, axis=-1, dtype=np.float64)
        else:
            np.multiply.accumulate(repeated, axis=-1, out=out[..., 1:])
    return out


def renorm(input, p, dim, maxnorm, *, out=None):
    """Returns a tensor where each sub-tensor of ``input`` along ``dim`` is normalized such
    that its ``p``-norm is lower than or equal to ``maxnorm`` (sub-tensors whose norm is
    already lower are left as they are)."""
    result = _renorm(input, p, dim, maxnorm)
    return result if out is None else write_out(result, out, True, "renorm")


_RENORM_ARRAY_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _checked_renorm_dim(input, p, dim, maxnorm):
    """renorm's checks of its arguments; ``dim`` wrapped."""
    check_tensor(input, "renorm")
    if isinstance(p, complex) or p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    ndim = input.dim()
    if ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {ndim} dimensions")
    return wrap_dim(dim, ndim)


@method("renorm")
def _renorm(input, p, dim, maxnorm):
    dim = _checked_renorm_dim(input, p, dim, maxnorm)
    ndim = input.dim()
    others = tuple(d for d in range(ndim) if d != dim)
    data = input._data
    if data.__class__ is np.ndarray and data.dtype in _RENORM_ARRAY_DTYPES and data.size and inplace_untracked(input):
        # (nothing records: the steps below in one loop, or on the arrays as the ops compute them)
        looped = openmp_kernels.renorm(data, p, dim, maxnorm)
        if looped is not None:
            return make(looped)
        norm = _norm_data(np, data, float(p), _reduce_dims(others, ndim), True)
        with np.errstate(all="ignore"):
            factor = np.where(norm > maxnorm, np.reciprocal(norm + 1e-7) * maxnorm, 1.0)
        return make(data * factor)
    if data.__class__ is np.ndarray and data.dtype in _RENORM_ARRAY_DTYPES and data.size and not forward_mode.active:
        # (one node, torch's, where the composite's records five)
        looped = openmp_kernels.renorm(data, p, dim, maxnorm)
        if looped is None:
            norm = _norm_data(np, data, float(p), _reduce_dims(others, ndim), True)
            with np.errstate(all="ignore"):
                looped = data * np.where(norm > maxnorm, np.reciprocal(norm + 1e-7) * maxnorm, 1.0)
        out = make(looped.astype(data.dtype, copy=False))
        node = record(RenormBackward0, (input,), out)
        if node is not None:
            node.save(input)
            node.p, node.dim, node.maxnorm = p, dim, maxnorm
        return out
    norm = _vector_norm(input, p, others, True, None)
    factor = where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)
    return input * factor.to(input.dtype)


class RenormBackward0(Node):
    __slots__ = ()
    saved_fields = {"self": 0, "p": "p", "dim": "dim", "maxnorm": "maxnorm"}
    jvp = jvp_by_transposition

    def backward(self, grad):
        """The input's gradient, as torch's renorm_backward: within the norm, ``grad``; beyond it, ``grad``
        scaled by ``maxnorm / (norm + 1e-7)`` less the scale's own derivative along the norm's."""
        (x,) = self.saved_tensors
        dims = tuple(d for d in range(x.dim()) if d != self.dim)
        norm = _vector_norm(x, self.p, dims, True, None)
        along = _vector_norm_grad((x * grad).sum(dims, keepdim=True), x, norm, self.p, dims)
        inverse = (norm + 1e-7).reciprocal()
        factor = inverse * self.maxnorm
        return (where(norm > self.maxnorm, factor * grad - (factor * inverse) * along, grad),)


@method()
def renorm_(self, p, dim, maxnorm):
    """In-place ``renorm``. Where nothing records, a row-major float NumPy array is scaled in the loop itself
    (no copy of it, nor a copy back)."""
    data = self._data
    if (data.__class__ is np.ndarray and data.dtype in _RENORM_ARRAY_DTYPES and data.flags.c_contiguous
            and data.size and inplace_untracked(self)):
        d = _checked_renorm_dim(self, p, dim, maxnorm)
        check_inplace(self)
        if openmp_kernels.renorm(data, p, d, maxnorm, into=True) is not None:
            bump_version(self)
            return self
    return apply_inplace(self, _renorm, p, dim, maxnorm)
