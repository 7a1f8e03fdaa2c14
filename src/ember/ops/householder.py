"""``linalg.householder_product`` (LAPACK's orgqr): the first n columns of the product of
Householder reflectors H_i = I - tau_i v_i v_i^H, v_i read from the columns of ``A`` below the
diagonal (with a one on it), as ``geqrf`` stores them; with its gradient."""
import math

import numpy as np

from .._backend import lapack, openmp_kernels
from . import _compiled_functions
from ..amp.policy import autocast_policy
from ._common import (
    _type_word, check_tensor, make, method, namespace_of, Node, record, Tensor, with_out, write_out,
)
from ..autograd._dual import jvp_by_transposition

__all__ = ["orgqr"]

_OP = "torch.linalg.householder_product"


def householder_product_arrays(a, tau):
    """Q = H_0 H_1 ... H_{k-1} I[:, :n] on arrays: real NumPy matrices by the LAPACK NumPy links
    (``lapack.orgqr``), others with the reflectors applied right to left on the arrays."""
    xp = namespace_of(a)
    m, n = a.shape[-2:]
    k = tau.shape[-1]
    batch = a.shape[:-2]
    count = math.prod(batch)
    if xp is np:
        q = lapack.orgqr(a.reshape((count, m, n)), tau.reshape((count, k)))
        if q is not None:
            return q.reshape(a.shape)
    q = xp.array(xp.broadcast_to(xp.eye(m, n, dtype=a.dtype), batch + (m, n)))
    for i in reversed(range(k)):   # H_i acts on rows i: of columns i: (the others hold zeros there)
        v = xp.zeros(batch + (m - i,), dtype=a.dtype)
        v[..., 0] = 1
        v[..., 1:] = a[..., i + 1:, i]
        rows = q[..., i:, i:]
        product = xp.einsum("...r,...rc->...c", xp.conj(v), rows)
        rows -= tau[..., i, None, None] * v[..., :, None] * product[..., None, :]
    return q


def _reflector(A, i):
    """v_i as a differentiable tensor: zeros above row i, one at row i, A's column i below."""
    from .creation import ones, zeros
    from .shape import cat
    batch = tuple(A.shape[:-2])
    head = zeros(batch + (i,), dtype=A.dtype, device=A.device)
    one = ones(batch + (1,), dtype=A.dtype, device=A.device)
    return cat([head, one, A[..., i + 1:, i]], -1)


class LinalgHouseholderProductBackward0(Node):
    """With Q = L_i H_i R_i (L_i the reflectors before H_i, R_i those after it applied to
    I[:, :n]), the gradient reaching H_i is G_i = L_i^T gQ R_i^T, so that
    g tau_i = -v_i^T G_i v_i and g v_i = -tau_i (G_i + G_i^T) v_i."""
    __slots__ = ()
    jvp = jvp_by_transposition

    def backward(self, grad):
        from .creation import eye, zeros
        from .shape import cat, stack
        A, tau = self.saved_tensors
        m, n = A.shape[-2:]
        k = tau.shape[-1]
        batch = tuple(A.shape[:-2])
        if k == 0:
            return zeros(A.shape, dtype=A.dtype), zeros(tau.shape, dtype=tau.dtype)
        vectors = [_reflector(A, i).unsqueeze(-1) for i in range(k)]
        scales = [tau[..., i, None, None] for i in range(k)]
        # each reflector applied as the rank-one update it is: L H_i = L - tau_i (L v_i) v_i^T
        # and H_i R = R - tau_i v_i (v_i^T R), not as a product with an m x m matrix
        before = [eye(m, dtype=A.dtype, device=A.device)]
        for v, scale in zip(vectors[:-1], scales):
            before.append(before[-1] - (scale * (before[-1] @ v)) @ v.mT)
        after = [None] * k
        right = eye(m, n, dtype=A.dtype, device=A.device)
        for i in reversed(range(k)):
            after[i] = right
            right = right - (scales[i] * vectors[i]) @ (vectors[i].mT @ right)
        grad_tau, grad_columns = [], []
        for i, v in enumerate(vectors):
            left_v = before[i] @ v                  # L_i v
            grad_right_v = grad @ (after[i].mT @ v)   # gQ R_i^T v
            grad_tau.append(-(left_v * grad_right_v).sum((-2, -1)))
            grad_v = before[i].mT @ grad_right_v + after[i] @ (grad.mT @ left_v)
            column = -tau[..., i, None] * grad_v[..., 0]
            grad_columns.append(cat([zeros(batch + (i + 1,), dtype=A.dtype, device=A.device),
                                     column[..., i + 1:]], -1))
        grad_A = stack(grad_columns, -1)
        if k < n:
            grad_A = cat([grad_A, zeros(batch + (m, n - k), dtype=A.dtype, device=A.device)], -1)
        return grad_A, stack(grad_tau, -1)

    def backward_arrays(self, grad):
        """``backward``'s formulas on the arrays of real NumPy matrices, one matrix at a time:
        ``backward`` keeps the k products L_i (m x m) before each reflector as tensors; here
        L_i and R_i live in one array each, updated in place reflector by reflector over the
        columns (rows) the reflector changes, in three sweeps (L_i v_i forward; R_i's terms
        backward; L_i^T's terms forward again)."""
        A, tau = self.saved_tensors
        a, t = A._data, tau._data
        if (grad.__class__ is not Tensor or type(a) is not np.ndarray or a.dtype.kind != "f"
                or grad._data.dtype != a.dtype):
            return None
        m, n = a.shape[-2:]
        k = t.shape[-1]
        if not (k and a.size):
            return make(np.zeros(a.shape, a.dtype)), make(np.zeros(t.shape, a.dtype))
        matrices, scales = a.reshape((-1, m, n)), t.reshape((-1, k))
        grads = np.broadcast_to(grad._data, a.shape).reshape((-1, m, n))
        grad_a, grad_tau = np.zeros(matrices.shape, a.dtype), np.empty(scales.shape, a.dtype)
        with np.errstate(all="ignore"):
            for i in range(matrices.shape[0]):
                _householder_gradient(matrices[i], scales[i], grads[i], grad_a[i], grad_tau[i])
        return make(grad_a.reshape(a.shape)), make(grad_tau.reshape(t.shape))


def _householder_gradient(a, tau, grad, grad_a, grad_tau):
    """``LinalgHouseholderProductBackward0.backward``'s gradients of one real m x n matrix
    ``a`` and its k scales, written into ``grad_a`` (zeros) and ``grad_tau``."""
    m, n = a.shape
    k = tau.shape[0]
    vectors = np.triu(a[:, :k].T, 1)   # v_i as rows: zeros before i, one at i, a's column below
    vectors[np.arange(k), np.arange(k)] = 1
    before = np.eye(m, dtype=a.dtype)   # L_i = H_0 ... H_{i-1}: H_i changes columns i: only
    left = np.empty((k, m), a.dtype)    # L_i v_i
    for i in range(k):
        v = vectors[i, i:]
        left[i] = before[:, i:] @ v
        before[:, i:] -= np.outer(tau[i] * left[i], v)
    after = np.eye(m, n, dtype=a.dtype)   # R_i = H_{i+1} ... H_{k-1} I[:, :n]: H_i changes rows i:
    grad_right = np.empty((k, m), a.dtype)   # gQ R_i^T v_i
    through_right = np.empty((k, m), a.dtype)   # R_i gQ^T L_i v_i
    for i in reversed(range(k)):
        v = vectors[i, i:]
        after_v = v @ after[i:, :]
        grad_right[i] = grad @ after_v
        through_right[i] = after @ (left[i] @ grad)
        after[i:, :] -= np.outer(tau[i] * v, after_v)
    grad_tau[:] = -np.einsum("im,im->i", left, grad_right)
    before = np.eye(m, dtype=a.dtype)
    for i in range(k):
        grad_v = grad_right[i] @ before + through_right[i]   # L_i^T gQ R_i^T v_i + R_i gQ^T L_i v_i
        grad_a[i + 1:, i] = -tau[i] * grad_v[i + 1:]
        before[:, i:] -= np.outer(tau[i] * left[i], vectors[i, i:])


@autocast_policy("fp32")
def householder_product(input, tau, *, out=None):
    """The first n columns of the product H_0 ... H_{k-1} of Householder reflectors
    H_i = I - tau_i v_i v_i^H, where v_i is column i of ``A`` (m x n, m >= n) below the diagonal,
    with a one on it and zeros above (as ``geqrf`` stores them), and ``tau`` holds k <= n
    scales. Batch dimensions must agree."""
    if out is None:
        return _householder_product_entry[0](input, tau)
    return write_out(_python_householder_product(input, tau), out, exact=True, op="linalg_householder_product")


def _python_householder_product(input, tau):
    """``householder_product`` in every case its compiled function (``_compiled_decompositions``) leaves to
    Python."""
    A = input
    check_tensor(A, "linalg_householder_product", "input")
    check_tensor(tau, "linalg_householder_product", "tau")
    a, t = A._data, tau._data
    if a.ndim < 2:
        raise RuntimeError(f"{_OP}: input must have at least 2 dimensions.")
    if a.shape[-2] < a.shape[-1]:
        raise RuntimeError(f"{_OP}: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if t.ndim < 1:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    if a.shape[-1] < t.shape[-1]:
        raise RuntimeError(f"{_OP}: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    if t.ndim != a.ndim - 1:
        raise RuntimeError(f"{_OP}: Expected tau to have one dimension less than input, but got tau.ndim "
                           f"equal to {t.ndim} and input.ndim is equal to {a.ndim}")
    if t.shape[:-1] != a.shape[:-2]:
        raise RuntimeError(f"{_OP}: Expected batch dimensions of tau to be equal to input.shape[:-2], but "
                           f"got {list(t.shape[:-1])}")
    if t.dtype != a.dtype:
        raise RuntimeError(f"{_OP}: tau dtype {_type_word(t.dtype)} does not match input dtype "
                           f"{_type_word(a.dtype)}")
    if a.dtype.kind not in "fc" or a.dtype.itemsize < 4:
        raise NotImplementedError(f"\"orgqr_cpu\" not implemented for '{_type_word(a.dtype)}'")
    result = make(householder_product_arrays(a, t))
    node = record(LinalgHouseholderProductBackward0, (A, tau), result)
    if node is not None:
        node.save(A, tau)
    return result


_householder_product_entry = _compiled_functions.register(
    _python_householder_product, None, kind="orgqr", addresses=lambda: openmp_kernels.lapack_driver_addresses("orgqr"),
    specifics=lambda: lapack.driver_routines("orgqr"))


@method()
@with_out(op="orgqr")
@autocast_policy("fp32")
def orgqr(input, input2):
    """The product of Householder reflectors: alias of ``linalg.householder_product`` (with
    ``input2`` the scales tau)."""
    return householder_product(input, input2)
