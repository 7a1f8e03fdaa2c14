"""Sparse COO tensors: construction, conversion to and from dense, coalescing, the accessors
(``indices``, ``values``, ``sparse_dim``, ...) and their gradients.

A sparse tensor is a ``Tensor`` whose ``_data`` is a ``SparseCOOArray`` (``_backend/sparse_coo``);
the arithmetic torch defines on sparse tensors (``+``, ``-``, ``*``, ``neg``, ``t``, ``@`` with a
dense matrix) runs through the ordinary ops, whose array calls the sparse array answers.
"""
from .._backend import namespace_of
from .._backend.sparse_coo import SparseCOOArray
from .._backend.sparse_csr import SparseCSRArray
from .._layout import sparse_coo, sparse_csr
from ._invariants import check_sparse_tensor_invariants
from ..ops._common import Node, Tensor, make, method, record

__all__ = ["sparse_coo_tensor"]


def is_sparse_array(data):
    return data.__class__ is SparseCOOArray


def _check_sparse(t, what):
    if t._data.__class__ is not SparseCOOArray:
        raise RuntimeError(f"{what} expected sparse coordinate tensor layout but got Strided")
    return t._data


def sparse_of(indices, values, shape, coalesced=False):
    """A sparse tensor (no history) over the given arrays."""
    return make(SparseCOOArray(indices, values, shape, coalesced))


# -- construction ------------------------------------------------------------------------------

class SparseCooTensorWithDimsAndTensorsBackward0(Node):
    __slots__ = ("indices",)

    def backward(self, grad):
        dense = grad.to_dense() if grad.is_sparse else grad
        return (dense[tuple(make(row) for row in self.indices)],)


def check_cpu(device, name):
    """Sparse tensors live on the CPU: another ``device`` raises."""
    from .._device import to_device
    if device is not None and to_device(device).type != "cpu":
        raise NotImplementedError(f"{name}: ember's sparse tensors live on the CPU, not on "
                                  f"{to_device(device)}")


def _as_array(data, dtype=None):
    from ..ops.creation import tensor
    if isinstance(data, Tensor):
        return data._data if dtype is None else data._data.astype(dtype.np)
    return tensor(data, dtype=dtype)._data


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None, is_coalesced=None):
    """Constructs a sparse tensor in COO format: ``values[k]`` sits at the index
    ``indices[:, k]``; repeated indices are summed when the tensor is coalesced. Without
    ``size``, the smallest size that holds every index is inferred."""
    check_cpu(device, "sparse_coo_tensor")
    index_array = _as_array(indices)
    index_array = index_array.astype("int64")   # torch converts indices of any dtype
    if index_array.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(index_array.shape)}")
    value_tensor = values if isinstance(values, Tensor) else None
    value_array = _as_array(values, dtype)
    if value_array.ndim == 0:
        raise RuntimeError("values must have at least one dimension (nnz)")
    sparse_dim, nnz = index_array.shape
    if value_array.shape[0] != nnz:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: {nnz}, "
                           f"nnz from values: {value_array.shape[0]}")
    if check_invariants is None:
        check_invariants = check_sparse_tensor_invariants.is_enabled()
    dense_shape = tuple(value_array.shape[1:])
    if size is None:
        inferred = (index_array.max(axis=1) + 1) if nnz else [0] * sparse_dim
        size = tuple(int(s) for s in inferred) + dense_shape
    else:
        size = tuple(int(s) for s in size)
        if len(size) != sparse_dim + len(dense_shape):
            raise RuntimeError(f"number of dimensions must be sparse_dim ({sparse_dim}) + dense_dim "
                               f"({len(dense_shape)}), but got {len(size)}")
        if tuple(size[sparse_dim:]) != dense_shape:
            raise RuntimeError(f"values has incorrect size, expected {list(dense_shape)}, got "
                               f"{list(size[sparse_dim:])}")
        if check_invariants and nnz:
            for dim in range(sparse_dim):
                top, low = int(index_array[dim].max()), int(index_array[dim].min())
                if top >= size[dim] or low < 0:
                    raise RuntimeError(f"size is inconsistent with indices: for dim {dim}, size is "
                                       f"{size[dim]} but found index {top if top >= size[dim] else low}")
    out = sparse_of(index_array, value_array, size, bool(is_coalesced) or nnz <= 1)
    if requires_grad:
        out.requires_grad_()
    elif value_tensor is not None:
        node = record(SparseCooTensorWithDimsAndTensorsBackward0, (value_tensor,), out)
        if node is not None:
            node.indices = index_array
    return out


# -- conversions -------------------------------------------------------------------------------

class ToSparseBackward0(Node):
    __slots__ = ()

    def backward(self, grad):
        return (grad.to_dense() if grad.is_sparse else grad,)


class ToSparseBackward1(ToSparseBackward0):
    __slots__ = ()


def _dense_to_coo(data, sparse_dim):
    xp = namespace_of(data)
    if not sparse_dim:
        return SparseCOOArray(xp.zeros((0, 1), xp.int64), data[None].copy(), data.shape, True)
    if data.ndim > sparse_dim:
        mask = (data.reshape(data.shape[:sparse_dim] + (-1,)) != 0).any(axis=-1)
    else:
        mask = data != 0
    where = mask.nonzero()
    indices = xp.stack(where).astype(xp.int64)
    return SparseCOOArray(indices, data[where], data.shape, True)


@method("to_sparse")
def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """A sparse COO copy of this tensor holding its nonzero entries (or, with ``sparse_dim``,
    its nonzero slices along the first ``sparse_dim`` dimensions)."""
    data = self._data
    if data.__class__ is SparseCSRArray:
        from ._csr import csr_to_coo
        return csr_to_coo(self, layout)
    if layout is sparse_csr and blocksize is None:
        return self.to_sparse_csr()
    if layout not in (None, sparse_coo) or blocksize is not None:
        raise NotImplementedError(f"to_sparse: layout {layout} is not supported by ember")
    if data.__class__ is SparseCOOArray:
        if sparse_dim is not None and sparse_dim != data.sparse_dim:
            raise RuntimeError("to_sparse: conversion from Sparse to Sparse with sparse_dim argument "
                               "!=self.sparse_dim() is not supported")
        return self
    if sparse_dim is None:
        sparse_dim = data.ndim
    elif not 0 <= sparse_dim <= data.ndim:
        raise RuntimeError(f"sparse_dim argument must be in [0,{data.ndim}] range, but {sparse_dim} is given")
    out = make(_dense_to_coo(data, sparse_dim))
    record(ToSparseBackward1 if sparse_dim == data.ndim else ToSparseBackward0, (self,), out)
    return out


@method()
def to_sparse_coo(self):
    """A sparse COO copy of this tensor (``to_sparse()``)."""
    return to_sparse(self)


class ToDenseBackward0(Node):
    __slots__ = ("mask",)

    def backward(self, grad):
        if self.mask.__class__ is SparseCSRArray:   # the CSR input's gradient: CSR, at its entries
            from .._backend.sparse_csr import from_coo
            return (make(from_coo(grad.sparse_mask(make(self.mask.to_coo()))._data)),)
        masked = grad.sparse_mask(make(self.mask))
        masked._data.coalesced = False   # as torch marks this gradient
        return (masked,)


@method()
def to_dense(self, dtype=None, *, masked_grad=None):
    """A dense (strided) copy of a sparse tensor; a dense tensor returns itself."""
    data = self._data
    if data.__class__ is not SparseCOOArray and data.__class__ is not SparseCSRArray:
        return self if dtype is None else self.to(dtype)
    out = make(data.to_dense() if dtype is None else data.to_dense().astype(dtype.np))
    node = record(ToDenseBackward0, (self,), out)
    if node is not None:
        node.mask = data
    return out


@method()
def sparse_mask(self, mask):
    """The entries of this dense tensor at the indices of the sparse tensor ``mask``, as a
    sparse tensor with ``mask``'s indices."""
    pattern = _check_sparse(mask, "sparse_mask").coalesce()
    if self._data.shape != pattern.shape:
        raise RuntimeError(f"sparse_mask(): operands have incompatible sizes; self has size "
                           f"{list(self.shape)} but mask has size {list(mask.shape)}")
    data = self._data
    if data.__class__ is SparseCOOArray:
        data = data.to_dense()
    values = data[tuple(pattern.indices)] if pattern.nnz else data[:0].reshape((0,) + data.shape[pattern.sparse_dim:])
    return sparse_of(pattern.indices, values, pattern.shape, pattern.coalesced)


class CoalesceBackward0(Node):
    __slots__ = ()

    def backward(self, grad):
        return (grad,)


@method()
def coalesce(self):
    """A coalesced copy: entries sorted by index, values at repeated indices summed (``self``
    when it is coalesced already)."""
    data = _check_sparse(self, "coalesce")
    if data.coalesced:
        return self
    out = make(data.coalesce())
    record(CoalesceBackward0, (self,), out)
    return out


@method()
def is_coalesced(self):
    """Whether the entries of this sparse tensor are known to be sorted and free of repeats."""
    return _check_sparse(self, "is_coalesced").coalesced


@method()
def _coalesced_(self, coalesced):
    _check_sparse(self, "_coalesced_").coalesced = bool(coalesced)
    return self


class ValuesBackward0(Node):
    __slots__ = ("pattern",)

    def backward(self, grad):
        p = self.pattern
        return (sparse_of(p.indices, grad._data, p.shape, False),)


@method()
def values(self):
    """The values of a coalesced sparse tensor (nnz x dense dimensions), differentiable; the
    values of a CSR tensor."""
    if self._data.__class__ is SparseCSRArray:
        return make(self._data.values)
    data = _check_sparse(self, "values")
    if not data.coalesced:
        raise RuntimeError("Cannot get values on an uncoalesced tensor, please call .coalesce() first")
    return _values_of(self, data)


def _values_of(self, data):
    out = make(data.values)
    out._version_counter = self._version_counter
    node = record(ValuesBackward0, (self,), out)
    if node is not None:
        node.pattern = data
    return out


@method()
def _values(self):
    """The values of a sparse tensor as stored (repeats included), without history."""
    return make(_check_sparse(self, "_values").values)


@method()
def indices(self):
    """The indices of a coalesced sparse tensor (sparse_dim x nnz, int64)."""
    data = _check_sparse(self, "indices")
    if not data.coalesced:
        raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
    return make(data.indices)


@method()
def _indices(self):
    """The indices of a sparse tensor as stored (repeats included)."""
    return make(_check_sparse(self, "_indices").indices)


@method()
def sparse_dim(self):
    """The number of sparse dimensions (the tensor's dimension count for a dense tensor)."""
    data = self._data
    return data.sparse_dim if data.__class__ is SparseCOOArray else 0


@method()
def dense_dim(self):
    """The number of dense dimensions of a sparse tensor (trailing dimensions of ``values``)."""
    data = self._data
    return data.dense_dim if data.__class__ is SparseCOOArray else data.ndim


@method()
def _nnz(self):
    """The number of stored entries of a sparse tensor."""
    if self._data.__class__ is SparseCSRArray:
        return self._data.nnz
    return _check_sparse(self, "_nnz").nnz
