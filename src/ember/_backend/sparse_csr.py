"""The array of a sparse CSR tensor (2-D, compressed rows), and its backend entry.

``crow_indices`` (rows + 1) gives where each row's entries start in ``col_indices`` and
``values``. Arithmetic and products go through the COO form (``to_coo``), whose kernels are in
``sparse_coo``; dense ops without a CSR kernel raise torch's error.
"""
import numpy as np

from .sparse_coo import SparseCOOArray, device_of, from_array, to_host, xp  # noqa: F401

__all__ = ["SparseCSRArray", "from_coo"]


class CSRUnsupported(RuntimeError, AttributeError):
    """torch's ``RuntimeError`` for an op without a CSR kernel; also an ``AttributeError``, so
    that ``hasattr`` on a CSR array answers False."""


def unsupported(what):
    return CSRUnsupported(f"unsupported tensor layout: SparseCsr (ember has no CSR kernel for {what})")


class SparseCSRArray:
    """crow_indices (int64, rows + 1), col_indices (int64, nnz), values (nnz) and a 2-D shape."""

    __slots__ = ("crow_indices", "col_indices", "values", "shape")
    flags = np.ones(1).flags
    base = None
    ndim = 2

    def __init__(self, crow_indices, col_indices, values, shape):
        self.crow_indices = crow_indices
        self.col_indices = col_indices
        self.values = values
        self.shape = tuple(int(s) for s in shape)

    @property
    def dtype(self):
        return self.values.dtype

    @property
    def size(self):
        return self.shape[0] * self.shape[1]

    @property
    def itemsize(self):
        return self.values.itemsize

    @property
    def nbytes(self):
        return self.crow_indices.nbytes + self.col_indices.nbytes + self.values.nbytes

    @property
    def nnz(self):
        return self.col_indices.shape[0]

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise unsupported(name)

    def __getitem__(self, key):
        raise unsupported("indexing")

    def __array__(self, *args, **kwargs):
        raise unsupported("implicit conversion to a dense array")

    def __len__(self):
        return self.shape[0]

    def __repr__(self):
        return f"SparseCSRArray(shape={self.shape}, nnz={self.nnz}, dtype={self.dtype})"

    def to_coo(self):
        rows = np.repeat(np.arange(self.shape[0], dtype=np.int64), np.diff(self.crow_indices))
        return SparseCOOArray(np.stack([rows, self.col_indices.astype(np.int64)]), self.values,
                              self.shape, True)

    def to_dense(self):
        return self.to_coo().to_dense()

    def copy(self, order=None):
        return SparseCSRArray(self.crow_indices.copy(), self.col_indices.copy(), self.values.copy(),
                              self.shape)

    def astype(self, dtype, copy=True):
        if not copy and dtype == self.values.dtype:
            return self
        return SparseCSRArray(self.crow_indices, self.col_indices, self.values.astype(dtype), self.shape)

    def swapaxes(self, d0, d1):
        """The transpose, in COO form (torch's is a CSC tensor, a layout ember does not have)."""
        return self.to_coo().swapaxes(d0, d1)

    @property
    def T(self):
        return self.swapaxes(0, 1)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        name = ufunc.__name__
        if method != "__call__" or kwargs or name not in ("multiply", "add", "subtract", "negative",
                                                           "matmul", "divide", "true_divide"):
            raise unsupported(f"aten::{name}")
        operands = [x.to_coo() if isinstance(x, SparseCSRArray) else x for x in inputs]
        result = ufunc(*operands)
        if isinstance(result, SparseCOOArray):
            return from_coo(result)
        return result

    def __neg__(self):
        return np.negative(self)

    def __mul__(self, other):
        return np.multiply(self, other)

    __rmul__ = __mul__

    def __add__(self, other):
        return np.add(self, other)

    def __radd__(self, other):
        return np.add(other, self)

    def __truediv__(self, other):
        return np.true_divide(self, other)

    def __matmul__(self, other):
        return np.matmul(self, other)

    def __rmatmul__(self, other):
        return np.matmul(other, self)


def from_coo(coo):
    """A 2-D COO array (no dense dimensions) in CSR form."""
    if coo.ndim != 2 or coo.dense_dim:
        raise RuntimeError(f"to_sparse_csr: expected a 2-D tensor without dense dimensions, got "
                           f"{coo.ndim}-D with {coo.dense_dim} dense dimensions (ember has no "
                           "batched or hybrid CSR tensors)")
    coo = coo.coalesce()
    rows, cols = coo.indices
    crow = np.zeros(coo.shape[0] + 1, np.int64)
    np.cumsum(np.bincount(rows, minlength=coo.shape[0]), out=crow[1:])
    return SparseCSRArray(crow, cols.copy(), coo.values, coo.shape)


ndarray = SparseCSRArray
