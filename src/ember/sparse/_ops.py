"""The ``ember.sparse`` functions: products of a sparse and a dense matrix (``mm``, ``addmm``),
sums over dimensions and the softmax family over the specified entries, with their gradients
(the sparse operand's gradient is sparse, with the operand's indices, as torch's)."""
from .._backend import namespace_of
from .._backend.sparse_coo import SparseCOOArray, _linear
from .._tensor import _wrap_dim
from ..ops._common import Node, Tensor, make, record
from ..ops.reduce import SumBackward0
from ._coo import _check_sparse, _dense_to_coo, sparse_of

__all__ = ["mm", "addmm", "sum", "softmax", "log_softmax"]


def _dense_array(grad):
    data = grad._data
    return data.to_dense() if data.__class__ is SparseCOOArray else data


def _gathered(dense, pattern):
    """The entries of the dense array ``dense`` at the indices of ``pattern``."""
    return dense[tuple(pattern.indices)]


# -- products ----------------------------------------------------------------------------------

class SparseAddmmBackward0(Node):
    __slots__ = ("beta", "alpha", "input_shape")

    def backward(self, grad):
        from ..ops._common import sum_to
        mat1, mat2 = self.saved_tensors
        g_input = g1 = g2 = None
        if self.next_functions[0][0] is not None:
            g_input = sum_to(grad * self.beta if self.beta != 1 else grad, self.input_shape)
        if self.next_functions[1][0] is not None:
            pattern = mat1._data
            values = _gathered(grad._data @ mat2._data.T, pattern)
            if self.alpha != 1:
                values = values * self.alpha
            g1 = sparse_of(pattern.indices, values, pattern.shape, False)
        if self.next_functions[2][0] is not None:
            g2 = mat1.t().mm(grad)
            if self.alpha != 1:
                g2 = g2 * self.alpha
        return g_input, g1, g2


class SparseSparseMatmulBackward0(Node):
    """``ember.sparse.mm`` of two sparse matrices: each gradient is sparse, at its operand's
    entries."""
    __slots__ = ()

    def backward(self, grad):
        mat1, mat2 = self.saved_tensors
        a, b = mat1._data, mat2._data
        g = grad._data
        if g.__class__ is not SparseCOOArray:
            g = _dense_to_coo(g, 2)
        g1 = g2 = None
        if self.next_functions[0][0] is not None:
            g1 = _on_entries_of(g @ b.T, a)
        if self.next_functions[1][0] is not None:
            g2 = _on_entries_of(a.T @ g, b)
        return g1, g2


def _on_entries_of(product, pattern):
    """The entries of the sparse ``product`` where ``pattern`` has entries (torch's mask)."""
    pattern = pattern.coalesce()
    ones = pattern.with_values(namespace_of(pattern.values).ones_like(pattern.values))
    masked = product * ones
    masked.coalesced = False
    return make(masked)


def _sparse_sparse_mm(mat1, mat2):
    a, b = mat1._data, mat2._data
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected mat1 and mat2 to have the same dtype, but got: "
                           f"{mat1.dtype} != {mat2.dtype}")
    out = make(a @ b)
    node = record(SparseSparseMatmulBackward0, (mat1, mat2), out)
    if node is not None:
        node.save(mat1, mat2)
    return out


def _check_product(mat1, mat2, name):
    s = _check_sparse(mat1, name)
    if not isinstance(mat2, Tensor) or mat2._data.__class__ is SparseCOOArray:
        raise NotImplementedError(f"{name}: ember adds the product of a sparse and a dense matrix "
                                  f"only (a sparse mat2 is not implemented)")
    if s.ndim != 2 or s.dense_dim or mat2._data.ndim != 2:
        raise RuntimeError(f"{name}: expected 2-D matrices, got {s.ndim}-D (with {s.dense_dim} dense "
                           f"dimensions) and {mat2._data.ndim}-D")
    if s.shape[1] != mat2._data.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({s.shape[0]}x{s.shape[1]} and "
                           f"{mat2._data.shape[0]}x{mat2._data.shape[1]})")
    if s.dtype != mat2._data.dtype:
        raise RuntimeError(f"expected mat1 and mat2 to have the same dtype, but got: "
                           f"{mat1.dtype} != {mat2.dtype}")
    return s


def mm(mat1, mat2, reduce="sum"):
    """The product of a sparse matrix ``mat1`` and a dense matrix ``mat2`` (dense), or of two
    sparse matrices (sparse); the gradient of a sparse operand is sparse, at its indices."""
    if reduce != "sum":
        raise NotImplementedError(f"ember.sparse.mm: reduce={reduce!r} is not implemented")
    if mat1._data.__class__ is not SparseCOOArray:
        from ..ops.linalg import mm as dense_mm
        return dense_mm(mat1, mat2)
    if isinstance(mat2, Tensor) and mat2._data.__class__ is SparseCOOArray:
        return _sparse_sparse_mm(mat1, mat2)
    return _addmm(None, mat1, mat2, 0, 1, "sparse.mm")


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """``beta * mat + alpha * (mat1 @ mat2)`` for a sparse ``mat1`` and dense ``mat`` and
    ``mat2``."""
    return _addmm(mat, mat1, mat2, beta, alpha, "sparse.addmm")


def _addmm(bias, mat1, mat2, beta, alpha, name):
    s = _check_product(mat1, mat2, name)
    data = s @ mat2._data
    if alpha != 1:
        data = data * alpha
    if bias is not None:
        data = data + (bias._data * beta if beta != 1 else bias._data)
    out = make(data.astype(s.dtype, copy=False))
    node = record(SparseAddmmBackward0, (bias, mat1, mat2), out)
    if node is not None:
        node.beta, node.alpha = beta, alpha
        node.input_shape = None if bias is None else bias._data.shape
        node.save(mat1, mat2)
    return out


# -- sums --------------------------------------------------------------------------------------

def sum_gradient(pattern, grad):
    """The gradient of the sum of all of a sparse tensor's entries: sparse, at its indices."""
    values = namespace_of(pattern.values).broadcast_to(grad._data, pattern.values.shape)
    return sparse_of(pattern.indices, values.astype(pattern.dtype), pattern.shape, pattern.coalesced)


class SparseSumBackward0(Node):
    __slots__ = ("pattern", "dims")

    def backward(self, grad):
        p = self.pattern
        xp = namespace_of(p.values)
        kept = _dense_array(grad)
        for d in sorted(self.dims):   # the summed dimensions back, as size 1
            kept = xp.expand_dims(kept, d)
        index = tuple(p.indices[d] if d not in self.dims else 0 for d in range(p.sparse_dim))
        values = xp.broadcast_to(kept[index], p.values.shape).astype(p.dtype)
        return (sparse_of(p.indices, values, p.shape, False),)


def sum(input, dim=None, dtype=None):
    """The sum of a sparse tensor's entries, over all dimensions or over ``dim`` (an int or a
    list of ints). Summing over every sparse dimension gives a dense tensor; otherwise the
    result is sparse."""
    data = _check_sparse(input, "sparse.sum")
    if dtype is not None:
        data = data.astype(dtype.np)
    if dim is None:
        out = make(data.values.sum(dtype=data.dtype))
        node = record(SumBackward0, (input,), out)
        if node is not None:
            node.in_shape, node.in_dtype, node.sparse_input = data.shape, data.dtype, data
        return out
    dims = sorted({_wrap_dim(d, data.ndim) for d in ([dim] if isinstance(dim, int) else dim)})
    out = make(data.sum_over(dims))
    node = record(SparseSumBackward0, (input,), out)
    if node is not None:
        node.pattern, node.dims = data, dims
    return out


# -- softmax -----------------------------------------------------------------------------------

def _groups(pattern, dim):
    """For each entry, the number of its group: the entries that share every sparse index but
    the one along ``dim``."""
    xp = namespace_of(pattern.indices)
    others = [d for d in range(pattern.sparse_dim) if d != dim]
    sizes = [pattern.shape[d] for d in others]
    keys = _linear(pattern.indices[others], sizes)
    _, inverse = xp.unique(keys, return_inverse=True)
    return inverse.reshape(-1), int(inverse.max()) + 1 if inverse.size else 0


def _group_sum(values, groups, count):
    xp = namespace_of(values)
    out = xp.zeros((count,) + values.shape[1:], values.dtype)
    xp.add.at(out, groups, values)
    return out


def _softmax_values(pattern, dim, log):
    xp = namespace_of(pattern.values)
    values = pattern.values
    if dim >= pattern.sparse_dim:   # along a dense dimension: each entry's values on their own
        axis = dim - pattern.sparse_dim + 1
        shifted = values - values.max(axis=axis, keepdims=True)
        total = xp.exp(shifted).sum(axis=axis, keepdims=True)
        return shifted - xp.log(total) if log else xp.exp(shifted) / total
    groups, count = _groups(pattern, dim)
    top = xp.full((count,) + values.shape[1:], -xp.inf, values.dtype)
    xp.maximum.at(top, groups, values)
    shifted = values - top[groups]
    exps = xp.exp(shifted)
    total = _group_sum(exps, groups, count)[groups]
    return shifted - xp.log(total) if log else exps / total


class SparseSoftmaxBackward0(Node):
    __slots__ = ("pattern", "dim")
    log = False

    def backward(self, grad):
        p = self.pattern   # the output's entries
        xp = namespace_of(p.values)
        g = _gathered(_dense_array(grad), p)
        y = p.values
        if self.dim >= p.sparse_dim:
            axis = self.dim - p.sparse_dim + 1
            if self.log:
                gi = g - xp.exp(y) * g.sum(axis=axis, keepdims=True)
            else:
                gi = y * (g - (g * y).sum(axis=axis, keepdims=True))
        else:
            groups, count = _groups(p, self.dim)
            if self.log:
                gi = g - xp.exp(y) * _group_sum(g, groups, count)[groups]
            else:
                gi = y * (g - _group_sum(g * y, groups, count)[groups])
        return (sparse_of(p.indices, gi.astype(p.dtype, copy=False), p.shape, False),)


class SparseLogSoftmaxBackward0(SparseSoftmaxBackward0):
    __slots__ = ()
    log = True


def _softmax(input, dim, dtype, log):
    data = _check_sparse(input, "sparse.log_softmax" if log else "sparse.softmax")
    if data.dtype.kind != "f":
        raise RuntimeError(f"{'log_softmax' if log else 'softmax'}: expected a floating point sparse "
                           f"tensor, got {input.dtype}")
    data = data.coalesce()
    if dtype is not None:
        data = data.astype(dtype.np)
    dim = _wrap_dim(dim, data.ndim)
    result = data.with_values(_softmax_values(data, dim, log).astype(data.dtype, copy=False), True)
    out = make(result)
    node = record(SparseLogSoftmaxBackward0 if log else SparseSoftmaxBackward0, (input,), out)
    if node is not None:
        node.pattern, node.dim = result, dim
    return out


def softmax(input, dim, *, dtype=None):
    """Softmax of a sparse tensor along ``dim`` over its specified entries only (unspecified
    entries count as minus infinity, so they stay unspecified)."""
    return _softmax(input, dim, dtype, False)


def log_softmax(input, dim, *, dtype=None):
    """Log-softmax of a sparse tensor along ``dim`` over its specified entries only."""
    return _softmax(input, dim, dtype, True)
