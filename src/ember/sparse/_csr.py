"""Sparse CSR tensors (2-D): ``sparse_csr_tensor``, ``Tensor.to_sparse_csr``, the accessors
``crow_indices``/``col_indices``, and conversions to dense and COO. Products with dense
matrices run through ``ember.mm``/``matmul``/``@`` (a dense result and dense gradients, as
torch's)."""
from .._backend import namespace_of
from .._backend.sparse_coo import SparseCOOArray
from .._backend.sparse_csr import SparseCSRArray, from_coo
from .._layout import sparse_coo, sparse_csr
from ._invariants import check_sparse_tensor_invariants
from ..ops._common import Node, make, method, record
from ._coo import _as_array, _dense_to_coo, check_cpu

__all__ = ["sparse_csr_tensor"]


def _check_csr(t, what):
    if t._data.__class__ is not SparseCSRArray:
        raise RuntimeError(f"{what} expected sparse row compressed tensor layout but got {_layout_word(t)}")
    return t._data


def _layout_word(t):
    return {SparseCOOArray: "Sparse", SparseCSRArray: "SparseCsr"}.get(t._data.__class__, "Strided")


def sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None, device=None,
                      pin_memory=False, requires_grad=False, check_invariants=None):
    """Constructs a 2-D sparse tensor in CSR format: row ``i``'s entries are
    ``values[crow_indices[i]:crow_indices[i + 1]]`` in the columns ``col_indices`` of the same
    range. Without ``size``, the columns extend to the largest column index."""
    check_cpu(device, "sparse_csr_tensor")
    crow = _as_array(crow_indices).astype("int64")
    cols = _as_array(col_indices).astype("int64")
    vals = _as_array(values, dtype)
    if crow.ndim != 1 or cols.ndim != 1 or vals.ndim != 1:
        raise NotImplementedError("sparse_csr_tensor: ember has CSR tensors of 2 dimensions only "
                                  "(1-D crow_indices, col_indices and values)")
    if cols.shape[0] != vals.shape[0]:
        raise RuntimeError(f"col_indices and values must have the same number of elements, but got "
                           f"{cols.shape[0]} and {vals.shape[0]}")
    if check_invariants is None:
        check_invariants = check_sparse_tensor_invariants.is_enabled()
    if size is None:
        size = (crow.shape[0] - 1, int(cols.max()) + 1 if cols.size else 0)
    size = tuple(int(s) for s in size)
    if len(size) != 2:
        raise NotImplementedError(f"sparse_csr_tensor: ember has CSR tensors of 2 dimensions only, "
                                  f"got size {list(size)}")
    if crow.shape[0] != size[0] + 1:
        raise RuntimeError(f"crow_indices must have {size[0] + 1} elements (rows + 1), but got "
                           f"{crow.shape[0]}")
    if check_invariants:
        xp = namespace_of(crow)
        if crow[0] != 0 or crow[-1] != cols.shape[0] or (xp.diff(crow) < 0).any():
            raise RuntimeError("`crow_indices[..., 0] == 0`, `crow_indices[..., -1] == nnz` and "
                               "`0 <= crow_indices[..., 1:] - crow_indices[..., :-1]` must hold")
        if cols.size and (cols.min() < 0 or cols.max() >= size[1]):
            raise RuntimeError("`0 <= col_indices < ncols` is not satisfied.")
    out = make(SparseCSRArray(crow, cols, vals, size))
    if requires_grad:
        out.requires_grad_()
    return out


class ToSparseCsrBackward0(Node):
    __slots__ = ()

    def backward(self, grad):
        return (grad.to_dense() if grad._data.__class__ is SparseCSRArray else grad,)


@method()
def to_sparse_csr(self, dense_dim=None):
    """A sparse CSR copy of this 2-D tensor (dense or COO) holding its nonzero entries."""
    if dense_dim is not None:
        raise NotImplementedError("to_sparse_csr: ember has no hybrid CSR tensors (dense_dim)")
    data = self._data
    if data.__class__ is SparseCSRArray:
        return self
    if data.ndim != 2:
        raise NotImplementedError(f"to_sparse_csr: ember has CSR tensors of 2 dimensions only, got "
                                  f"{data.ndim}-D")
    coo = data if data.__class__ is SparseCOOArray else _dense_to_coo(data, 2)
    out = make(from_coo(coo))
    record(ToSparseCsrBackward0, (self,), out)
    return out


@method()
def crow_indices(self):
    """The compressed row indices of a CSR tensor (rows + 1, int64)."""
    return make(_check_csr(self, "crow_indices").crow_indices)


@method()
def col_indices(self):
    """The column indices of a CSR tensor's entries (int64)."""
    return make(_check_csr(self, "col_indices").col_indices)


def csr_to_coo(self, layout):
    """``to_sparse()`` of a CSR tensor: its COO form (``layout`` None or ``sparse_coo``), or
    itself for ``sparse_csr``."""
    if layout is sparse_csr:
        return self
    if layout not in (None, sparse_coo):
        raise NotImplementedError(f"to_sparse: layout {layout} is not supported by ember")
    return make(self._data.to_coo())
