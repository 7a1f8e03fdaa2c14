"""``linalg.householder_product`` (LAPACK's orgqr): the first n columns of the product of
Householder reflectors H_i = I - tau_i v_i v_i^H, v_i read from the columns of ``A`` below the
diagonal (with a one on it), as ``geqrf`` stores them; with its gradient."""
import math

import numpy as np

from .._backend import lapack
from ..amp.policy import autocast_policy
from ._common import _type_word, check_tensor, make, method, namespace_of, Node, record, with_out, write_out
from ..autograd._dual import jvp_by_transposition

__all__ = ["orgqr"]

_OP = "torch.linalg.householder_product"


def householder_product_arrays(a, tau):
    """Q = H_0 H_1 ... H_{k-1} I[:, :n] on arrays: batches of at most n real matrices with two
    or more reflectors by the LAPACK NumPy links (``lapack.orgqr``, one call per matrix),
    others with the reflectors applied right to left on the arrays."""
    xp = namespace_of(a)
    m, n = a.shape[-2:]
    k = tau.shape[-1]
    batch = a.shape[:-2]
    count = math.prod(batch)
    if xp is np and count <= n and k > 1:   # (one reflector: cheaper on the arrays than the copies)
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


@autocast_policy("fp32")
def householder_product(input, tau, *, out=None):
    """The first n columns of the product H_0 ... H_{k-1} of Householder reflectors
    H_i = I - tau_i v_i v_i^H, where v_i is column i of ``A`` (m x n, m >= n) below the diagonal,
    with a one on it and zeros above (as ``geqrf`` stores them), and ``tau`` holds k <= n
    scales. Batch dimensions must agree."""
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
    return write_out(result, out, exact=True, op="linalg_householder_product")


@method()
@with_out(op="orgqr")
@autocast_policy("fp32")
def orgqr(input, input2):
    """The product of Householder reflectors: alias of ``linalg.householder_product`` (with
    ``input2`` the scales tau)."""
    return householder_product(input, input2)
