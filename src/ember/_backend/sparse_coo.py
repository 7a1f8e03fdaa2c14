"""The array of a sparse COO tensor, and its backend entry.

A sparse tensor is an ordinary ``Tensor`` whose ``_data`` is a ``SparseCOOArray``: an int64
``indices`` array (sparse_dim x nnz), a ``values`` array (nnz x dense dims) of the tensor's
dtype, the full shape and whether the entries are known to be coalesced (sorted, no repeated
index). It answers the attributes dense code reads for metadata (``shape``, ``dtype``,
``ndim``), computes the few array operations torch defines on sparse tensors (arithmetic,
products with dense arrays, transposes, sums) and raises torch's ``NotImplementedError`` for
the others, so dense ops need no test of the layout on their own path.
"""
import numpy as np

__all__ = ["SparseCOOArray", "xp", "device_of", "to_host", "from_array", "unsupported"]


class SparseUnsupported(NotImplementedError, AttributeError):
    """torch's ``NotImplementedError`` for an op without a sparse kernel; also an
    ``AttributeError``, so that ``hasattr`` on a sparse array answers False."""


def unsupported(what):
    """torch's error for an op that has no sparse kernel."""
    return SparseUnsupported(
        f"Could not run '{what}' with arguments from the 'SparseCPU' backend: the operation is "
        "not defined for sparse COO tensors (convert with .to_dense() first)")


def _linear(indices, sizes):
    """Each entry's row-major position among the sparse dimensions (int64)."""
    flat = np.zeros(indices.shape[1], np.int64)
    for row, size in zip(indices, sizes):
        flat = flat * size + row
    return flat


def _unravel(flat, sizes):
    if not len(sizes):
        return np.zeros((0, flat.shape[0]), np.int64)
    return np.stack(np.unravel_index(flat, sizes)).astype(np.int64).reshape(len(sizes), -1)


class SparseCOOArray:
    """indices (int64, sparse_dim x nnz), values (nnz x dense dims) and the full ``shape``."""

    __slots__ = ("indices", "values", "shape", "coalesced")
    made = False   # whether any sparse array was made (optimizers look for sparse gradients then)
    flags = np.ones(1).flags   # metadata readers see a row-major layout
    base = None                # owns its arrays

    def __init__(self, indices, values, shape, coalesced=False):
        SparseCOOArray.made = True
        self.indices = indices
        self.values = values
        self.shape = tuple(int(s) for s in shape)
        self.coalesced = coalesced

    def __reduce__(self):
        return (SparseCOOArray, (self.indices, self.values, self.shape, self.coalesced))

    # -- metadata ---------------------------------------------------------------------------
    @property
    def dtype(self):
        return self.values.dtype

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def itemsize(self):
        return self.values.itemsize

    @property
    def nbytes(self):
        return self.indices.nbytes + self.values.nbytes

    @property
    def sparse_dim(self):
        return self.indices.shape[0]

    @property
    def dense_dim(self):
        return self.values.ndim - 1

    @property
    def nnz(self):
        return self.indices.shape[1]

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise unsupported(f"aten::{name}")

    def __getitem__(self, key):
        """``select``: an integer at one dimension, full slices before it (``s[i]``,
        ``s[:, i]``)."""
        key = key if isinstance(key, tuple) else (key,)
        if len(key) > 1 and key[-1] is Ellipsis:
            key = key[:-1]
        *leading, index = key
        if not (isinstance(index, (int, np.integer)) and not isinstance(index, bool)
                and all(k == slice(None) for k in leading) and len(leading) < self.ndim):
            raise unsupported("aten::index")
        return self.select(len(leading), int(index))

    def select(self, dim, index):
        """The slice at ``index`` along ``dim`` (marked uncoalesced, as torch marks it)."""
        size = self.shape[dim]
        if not -size <= index < size:
            raise IndexError(f"select(): index {index} out of range for tensor of size "
                             f"{list(self.shape)} at dimension {dim}")
        index %= size
        shape = self.shape[:dim] + self.shape[dim + 1:]
        if dim >= self.sparse_dim:
            values = np.take(self.values, index, axis=dim - self.sparse_dim + 1)
            return SparseCOOArray(self.indices, values, shape, False)
        keep = self.indices[dim] == index
        rows = [d for d in range(self.sparse_dim) if d != dim]
        return SparseCOOArray(self.indices[rows][:, keep], self.values[keep], shape, False)

    def __setitem__(self, key, value):
        if key is Ellipsis and _is_number(value) and value == 0:   # zero_(): no entries left
            self.indices = self.indices[:, :0]
            self.values = self.values[:0]
            self.coalesced = True
            return
        raise unsupported("aten::index_put_")

    def assign(self, other):
        """Take ``other``'s entries (an in-place op's result)."""
        self.indices, self.values, self.coalesced = other.indices, other.values.astype(self.dtype), other.coalesced

    def __array__(self, *args, **kwargs):
        raise unsupported("aten::_to_dense (implicit conversion to a dense array)")

    def __len__(self):
        return self.shape[0]

    def __repr__(self):
        return f"SparseCOOArray(shape={self.shape}, nnz={self.nnz}, dtype={self.dtype})"

    # -- conversions ------------------------------------------------------------------------
    def with_values(self, values, coalesced=None):
        return SparseCOOArray(self.indices, values, self.shape,
                              self.coalesced if coalesced is None else coalesced)

    def copy(self, order=None):
        return SparseCOOArray(self.indices.copy(), self.values.copy(), self.shape, self.coalesced)

    def astype(self, dtype, copy=True):
        if not copy and dtype == self.values.dtype:
            return self
        return self.with_values(self.values.astype(dtype))

    def coalesce(self):
        """Entries sorted by index with repeated indices summed (zeros are kept)."""
        if self.coalesced:
            return self
        sizes = self.shape[:self.sparse_dim]
        flat = _linear(self.indices, sizes)
        unique, inverse = np.unique(flat, return_inverse=True)
        values = np.zeros((unique.shape[0],) + self.values.shape[1:], self.values.dtype)
        np.add.at(values, inverse.reshape(-1), self.values)
        return SparseCOOArray(_unravel(unique, sizes), values, self.shape, True)

    def to_dense(self):
        out = np.zeros(self.shape, self.values.dtype)
        if self.nnz:
            np.add.at(out, tuple(self.indices), self.values)
        return out

    # -- shape ------------------------------------------------------------------------------
    def swapaxes(self, d0, d1):
        d0, d1 = d0 % self.ndim, d1 % self.ndim
        sd = self.sparse_dim
        if d0 >= sd or d1 >= sd:
            if d0 < sd or d1 < sd:
                raise RuntimeError("transpose(): sparse_dim and dense_dim dimensions cannot be "
                                   "swapped with each other")
            values = self.values.swapaxes(d0 - sd + 1, d1 - sd + 1)
            indices = self.indices
        else:
            order = list(range(sd))
            order[d0], order[d1] = order[d1], order[d0]
            indices, values = self.indices[order], self.values
        shape = list(self.shape)
        shape[d0], shape[d1] = shape[d1], shape[d0]
        return SparseCOOArray(indices, values, shape, self.coalesced and d0 == d1)

    @property
    def T(self):
        return self.swapaxes(0, 1) if self.ndim == 2 else self

    def sum(self, axis=None, dtype=None, keepdims=False, **kwargs):
        """All entries summed (a dense 0-d array), or over ``axis`` (as ``sum_over``)."""
        if kwargs or keepdims:
            raise unsupported("aten::sum.dim_IntList (keepdim=True)")
        source = self if dtype is None else self.astype(dtype)
        if axis is not None:
            return source.sum_over(sorted(axis) if isinstance(axis, tuple) else [axis])
        total = source.values.sum(axis=0)
        return np.asarray(total.sum(), dtype=total.dtype)

    def sum_over(self, dims):
        """The sum over the (sorted, non-negative) ``dims``: dense when they cover every sparse
        dimension, else sparse (coalesced)."""
        sparse_dim = self.sparse_dim
        dense_axes = tuple(d - sparse_dim + 1 for d in dims if d >= sparse_dim)
        values = self.values.sum(axis=dense_axes) if dense_axes else self.values
        kept = [d for d in range(sparse_dim) if d not in dims]
        if not kept:
            return values.sum(axis=0)
        shape = tuple(s for d, s in enumerate(self.shape) if d not in dims)
        return SparseCOOArray(self.indices[kept], values, shape, False).coalesce()

    # -- arithmetic ---------------------------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        name = ufunc.__name__
        out = kwargs.pop("out", None)
        kwargs.pop("casting", None)
        dtype = kwargs.pop("dtype", None)
        if method != "__call__" or kwargs:
            raise unsupported(f"aten::{name}")
        if dtype is not None:
            inputs = tuple(x.astype(dtype) if isinstance(x, SparseCOOArray) else x for x in inputs)
        if out is not None:   # an in-place op: dense += sparse, or sparse *= number, ...
            target, = out
            result = self.__array_ufunc__(ufunc, method, *inputs)
            if isinstance(target, SparseCOOArray):
                if not isinstance(result, SparseCOOArray) or result.shape != target.shape:
                    raise unsupported(f"aten::{name}_ (a dense result into a sparse tensor)")
                target.assign(result)
            else:
                target[...] = result
            return target
        if name in _ZERO_PRESERVING and len(inputs) == 1:   # f(0) == 0: applied to the entries
            return self.with_values(ufunc(self.values))
        if name in ("maximum", "minimum") and inputs[0] is self and _is_number(inputs[1]) and inputs[1] == 0:
            return self.with_values(ufunc(self.values, inputs[1]))   # relu and its mirror
        if name == "power" and inputs[0] is self and _is_number(inputs[1]) and inputs[1] > 0:
            return self.with_values(ufunc(self.values, inputs[1]))
        if name in ("add", "subtract", "multiply", "divide", "true_divide", "matmul") and len(inputs) == 2:
            a, b = inputs
            if name in ("add", "subtract") and a is self and not isinstance(b, SparseCOOArray):
                raise RuntimeError(f"{name[:3]}(sparse, dense) is not supported. Use "
                                   f"{name[:3]}(dense, sparse) instead.")
            return _BINARY[name](a, b)
        raise unsupported(f"aten::{name}")

    def __neg__(self):
        return self.with_values(-self.values)

    __hash__ = object.__hash__

    def __eq__(self, other):
        raise unsupported("aten::eq.Tensor")

    def __ne__(self, other):
        if _is_number(other) and other == 0:   # false at the unspecified entries
            return self.with_values(self.values != 0)
        raise unsupported("aten::ne.Tensor")

    def __gt__(self, other):
        if _is_number(other) and not 0 > other:   # false at the unspecified entries
            return self.with_values(self.values > other)
        raise unsupported("aten::gt")

    def __lt__(self, other):
        if _is_number(other) and not 0 < other:
            return self.with_values(self.values < other)
        raise unsupported("aten::lt")

    def __rtruediv__(self, other):
        raise unsupported("aten::div.Tensor (divided by a sparse tensor)")

    def __add__(self, other):
        return add(self, other)

    def __radd__(self, other):
        return add(other, self)

    def __sub__(self, other):
        return subtract(self, other)

    def __rsub__(self, other):
        return subtract(other, self)

    def __mul__(self, other):
        return multiply(self, other)

    def __rmul__(self, other):
        return multiply(other, self)

    def __truediv__(self, other):
        return divide(self, other)

    def __matmul__(self, other):
        return matmul(self, other)

    def __rmatmul__(self, other):
        return matmul(other, self)


def _is_number(x):
    return isinstance(x, (int, float, complex, np.generic)) or (isinstance(x, np.ndarray) and x.ndim == 0)


def _same_shape(a, b, op):
    if a.shape != b.shape:
        raise RuntimeError(f"{op}: expected sizes of 'self' and 'other' to match, but "
                           f"{list(a.shape)} != {list(b.shape)}")


def add(a, b):
    """Sparse + sparse (sparse: the entries of both, coalesced when both were), or a sum with a
    dense array (dense)."""
    if isinstance(a, SparseCOOArray) and isinstance(b, SparseCOOArray):
        _same_shape(a, b, "add")
        if a.sparse_dim != b.sparse_dim:
            raise RuntimeError("add: expected 'self' and 'other' to have same sparse dimensions")
        dtype = np.result_type(a.dtype, b.dtype)
        out = SparseCOOArray(np.concatenate([a.indices, b.indices], axis=1),
                             np.concatenate([a.values.astype(dtype), b.values.astype(dtype)]),
                             a.shape, False)
        return out.coalesce() if a.coalesced and b.coalesced else out
    if isinstance(a, SparseCOOArray):
        a, b = b, a
    if _is_number(a):
        raise unsupported("aten::add.Scalar")
    return a + b.to_dense()


def subtract(a, b):
    if isinstance(b, SparseCOOArray):
        return add(a, -b)
    return a.to_dense() - b if not _is_number(b) else add(a, -b)


def multiply(a, b):
    """Sparse times a number (sparse), or sparse times sparse of the same shape (sparse, the
    common entries)."""
    if not isinstance(a, SparseCOOArray):
        a, b = b, a
    if _is_number(b):
        return a.with_values(a.values * b)
    if isinstance(b, SparseCOOArray):
        _same_shape(a, b, "mul")
        a, b = a.coalesce(), b.coalesce()
        sizes = a.shape[:a.sparse_dim]
        fa, fb = _linear(a.indices, sizes), _linear(b.indices, sizes)
        common, ia, ib = np.intersect1d(fa, fb, assume_unique=True, return_indices=True)
        return SparseCOOArray(a.indices[:, ia], a.values[ia] * b.values[ib], a.shape, True)
    if b.shape != a.shape:
        raise unsupported("aten::mul.Tensor (a sparse tensor and a dense one of another shape)")
    return a.with_values(a.values * b[tuple(a.indices)])


def divide(a, b):
    if isinstance(a, SparseCOOArray) and _is_number(b):
        return a.with_values(a.values / b)
    raise unsupported("aten::div.Tensor")


def sparse_dense_product(a, b):
    """``a @ b`` for a 2-D sparse ``a`` (no dense dimensions) and a 1-D or 2-D dense ``b``, or
    the batched product of a 3-D sparse ``a`` and a 3-D dense ``b`` (``bmm``)."""
    if a.ndim == 3 and not a.dense_dim and b.ndim == 3:
        batch, rows, cols = a.indices
        out = np.zeros((a.shape[0], a.shape[1], b.shape[2]), np.result_type(a.dtype, b.dtype))
        np.add.at(out, (batch, rows), a.values[:, None] * b[batch, cols])
        return out
    if a.ndim != 2 or a.dense_dim:
        raise RuntimeError(f"mm: expected a 2-D sparse matrix with no dense dimensions, got "
                           f"{a.sparse_dim} sparse and {a.dense_dim} dense dimensions")
    rows, cols = a.indices
    dtype = np.result_type(a.dtype, b.dtype)
    out = np.zeros((a.shape[0],) + b.shape[1:], dtype)
    scale = a.values.reshape((-1,) + (1,) * (b.ndim - 1))
    np.add.at(out, rows, scale * b[cols])
    return out


def sparse_sparse_product(a, b):
    """``a @ b`` for 2-D sparse ``a`` and ``b`` (no dense dimensions): sparse, coalesced."""
    for x in (a, b):
        if x.ndim != 2 or x.dense_dim:
            raise RuntimeError(f"mm: expected 2-D sparse matrices with no dense dimensions, got "
                               f"{x.sparse_dim} sparse and {x.dense_dim} dense dimensions")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and "
                           f"{b.shape[0]}x{b.shape[1]})")
    a, b = a.coalesce(), b.coalesce()   # b's entries sorted by row
    (a_rows, a_cols), (b_rows, b_cols) = a.indices, b.indices
    counts = np.bincount(b_rows, minlength=b.shape[0])
    starts = np.cumsum(counts) - counts
    reps = counts[a_cols]   # each entry of a meets the entries of b's row a_col
    a_pick = np.repeat(np.arange(a.nnz), reps)
    within = np.arange(reps.sum()) - np.repeat(np.cumsum(reps) - reps, reps)
    b_pick = np.repeat(starts[a_cols], reps) + within
    values = a.values[a_pick] * b.values[b_pick]
    indices = np.stack([a_rows[a_pick], b_cols[b_pick]]).reshape(2, -1)
    return SparseCOOArray(indices, values, (a.shape[0], b.shape[1]), False).coalesce()


def matmul(a, b):
    if isinstance(a, SparseCOOArray) and isinstance(b, SparseCOOArray):
        return sparse_sparse_product(a, b)
    if isinstance(a, SparseCOOArray):
        return sparse_dense_product(a, b)
    if b.ndim != 2:
        raise unsupported("aten::matmul (dense @ sparse)")
    return sparse_dense_product(b.T, a.T if a.ndim == 2 else a[:, None]).T.reshape(a.shape[:-1] + b.shape[1:])


# NumPy's unary ufuncs with f(0) == 0, which torch computes on a sparse tensor's entries
_ZERO_PRESERVING = frozenset((
    "negative", "positive", "absolute", "sign", "sin", "tan", "sinh", "tanh", "arcsin", "arctan",
    "arcsinh", "arctanh", "sqrt", "square", "expm1", "log1p", "trunc", "floor", "ceil", "rint",
    "deg2rad", "rad2deg"))

_BINARY = {"add": add, "subtract": subtract, "multiply": multiply, "divide": divide,
           "true_divide": divide, "matmul": matmul}


class _Namespace:
    """What ``namespace_of`` gives for a sparse array: NumPy's ufuncs (which reach
    ``SparseCOOArray.__array_ufunc__``) and the few functions a sparse array defines."""

    _FUNCTIONS = ("swapaxes", "sum")

    def __getattr__(self, name):
        fn = getattr(np, name, None)
        if isinstance(fn, np.ufunc) or name in self._FUNCTIONS:
            return fn
        raise unsupported(f"aten::{name}")


xp = _Namespace()
ndarray = SparseCOOArray


def device_of(array):
    from . import backend_of
    return backend_of(array.values).device_of(array.values)


def to_host(array, non_blocking=False):
    return array


def from_array(array, index=None, non_blocking=False):
    return array
