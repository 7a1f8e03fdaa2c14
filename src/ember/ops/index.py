"""The indexing functions: index_select, gather, take, take_along_dim, scatter, scatter_add,
scatter_reduce, index_add, index_copy, index_fill, index_put, masked_fill, masked_select,
masked_scatter, nonzero, argwhere, index_reduce, put, unravel_index and fill_diagonal_ (with
their in-place forms). Subscripting (``x[key]``,
``x[key] = value``) and ``fill_``/``zero_``/``copy_`` are in ``subscript.py``.
"""
import functools
import math
import numbers
import warnings

import numpy as np

from .._backend import openmp_kernels
from .._backend.choice import KernelChoice
from .._backend.rows import (
    add_rows_at, FLAT_INDEX_MIN_ELEMENTS, masked_values, nonzero_positions, take_at, ufunc_at,
)
from .._dtype import _BY_NP
from . import _compiled_functions
from .creation import tensor as _tensor
from ._common import (
    apply_inplace, bump_version, check_inplace, check_value_fits, complex_autograd, forward_mode, grad_state,
    inplace_untracked, conj_if_complex, make, method, namespace_of, Node, record,
    record_not_differentiable, sum_to, Tensor, _type_word, warn_once, wrap_dim, write_out, write_out_exact,
)
from .shape import _broadcast_pair, cat
from .view import slice_scatter_zeros
from .ternary import _select
from ..amp.policy import autocast_policy

from .subscript import (
    _check_value_dtype, IndexPutBackward0, normalize_key, _out_of_range,
    _check_write_shapes, _shape_mismatch, _write,
)
from ..autograd._dual import jvp_by_transposition
from ..autograd.saved_fields import not_kept

__all__ = []


_INT_INDEX = (np.dtype("int64"), np.dtype("int32"))
_LONG = np.dtype("int64")

# the C++ type names torch's masked_fill_ prints for a mask of the wrong dtype
_CPP_TYPE_NAMES = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char",
                   "int16": "short int", "int32": "int", "int64": "long int", "float32": "float",
                   "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
                   "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def _tensor_arg(x, op, name, pos):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument '{name}' (position {pos}) must be Tensor, not "
                        f"{type(x).__name__}")


def _nonempty(data):
    """``data`` with a 0-d array seen as one element: torch's indexing ops treat a scalar as a
    1-d tensor of size 1."""
    return data if data.ndim else data.reshape(1)


def _nonempty_shape(shape):
    return shape or (1,)


def _check_bounds(idx, low, high, error):
    """Raise ``error(i)`` for the first index ``i`` (in memory order) outside [low, high)."""
    if not idx.size:
        return
    if low == 0 and type(idx) is np.ndarray and idx.dtype == _INT64:
        # one pass: a negative index read as unsigned is 2**63 or more, past any size
        if np.maximum.reduce(idx.view(_UINT64), axis=None) < high:
            return
    elif not (idx.min() < low or idx.max() >= high):
        return
    bad = idx[(idx < low) | (idx >= high)]
    raise error(int(bad.reshape(-1)[0]))


_INT64, _UINT64 = np.dtype(np.int64), np.dtype(np.uint64)


def _out_of_bounds(dim, size, cls=RuntimeError, prefix=""):
    return lambda i: cls(f"{prefix}index {i} is out of bounds for dimension {dim} with size {size}")


def _fit_to(grad, shape):
    """``grad`` (covering the leading part of each dim of ``shape``) padded with zeros to
    ``shape``."""
    gshape = grad._data.shape
    if gshape == shape:
        return grad
    if len(gshape) != len(shape):
        return grad.reshape(shape)
    return slice_scatter_zeros(grad, shape, tuple(slice(0, n) for n in gshape))


def _along_key(idx, dim):
    """The fancy key that pairs each element of ``idx`` with its own position in every dim but
    ``dim``: ``data[key]`` is ``gather(data, dim, idx)``."""
    if type(idx) is np.ndarray:
        key = list(_positions_along(idx.shape, dim))
    else:
        xp = namespace_of(idx)
        nd = idx.ndim
        key = [xp.arange(n).reshape((n,) + (1,) * (nd - d - 1)) for d, n in enumerate(idx.shape)]
    key[dim] = idx
    return tuple(key)


@functools.lru_cache(maxsize=16)
def _positions_along(shape, dim):
    """``_along_key``'s positions in every dim but ``dim`` of an index of ``shape`` (NumPy's,
    read-only; the last few shapes' are kept)."""
    key = []
    for d, n in enumerate(shape):
        positions = np.arange(n).reshape((n,) + (1,) * (len(shape) - d - 1))
        positions.flags.writeable = False
        key.append(None if d == dim else positions)
    return tuple(key)


def _dim_key(dim, idx):
    """The key that indexes dim ``dim`` with ``idx``."""
    return (slice(None),) * dim + (idx,)


# -- index_select -----------------------------------------------------------------------------

@complex_autograd
class IndexSelectBackward0(Node):
    __slots__ = ()
    saved_fields = {"dim": "dim", "index": 0, "self_sym_sizes": "in_shape"}

    def jvp(self, tangent):
        return tangent.index_select(self.dim, self.saved_tensors[0])

    def backward(self, grad):
        (index,) = self.saved_tensors
        if not self.in_shape:
            return (grad.reshape(()),)
        zeros = make(namespace_of(grad._data).zeros(self.in_shape, dtype=grad._data.dtype))
        return (zeros.index_add(self.dim, index.reshape(-1), grad),)


_SAME_SCALAR_TYPE = "{op}(): self and result must have the same scalar type"


def index_select(input, dim, index, *, out=None):
    """Returns a new tensor which indexes ``input`` along dimension ``dim`` using the entries
    in ``index`` (a 1-d int64 or int32 tensor)."""
    result = _index_select(input, dim, index)
    return result if out is None else write_out_exact(result, out, "index_select", _SAME_SCALAR_TYPE)


def _index_select(input, dim, index):
    return _index_select_entry[0](input, dim, index)


def _python_index_select(input, dim, index):
    """``index_select`` in every case its compiled function (``_compiled_functions``) leaves to Python."""
    _tensor_arg(index, "index_select", "index", 3)
    data, idx = input._data, index._data
    d = wrap_dim(dim, data.ndim or 1)
    if idx.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if idx.dtype not in _INT_INDEX:
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    size = data.shape[d] if data.ndim else 1
    if not data.ndim and idx.size != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {idx.size} "
                           "value(s)")
    if size == 0 and idx.size:
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    if data.ndim > 1 and d == 1:   # torch's kernel for dim 1 words it its own way
        _check_bounds(idx, 0, size, lambda i: RuntimeError(
            f"INDICES element is out of DATA bounds, id={i} axis_dim={size}"))
    _check_bounds(idx, 0, size, lambda i: IndexError("index out of range in self"))
    if data.ndim:
        out = make(_selected(data, idx.reshape(-1), d))
    elif idx.size != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {idx.size} "
                           "value(s)")
    else:
        out = make(data.copy())
    node = record(IndexSelectBackward0, (input,), out)
    if node is not None:
        node.save(index)
        node.dim, node.in_shape = d, data.shape
    return out


_index_select_entry = _compiled_functions.register(_python_index_select, IndexSelectBackward0, kind="index_select")


# -- gather, take_along_dim --------------------------------------------------------------------

class GatherBackward0(Node):
    __slots__ = ()
    saved_fields = {"dim": "dim", "index": 0, "sparse_grad": lambda node: False}

    def jvp(self, tangent):
        return tangent.gather(self.dim, self.saved_tensors[0])

    def backward(self, grad):
        (index,) = self.saved_tensors
        zeros = make(namespace_of(grad._data).zeros(self.in_shape, dtype=grad._data.dtype))
        return (zeros.scatter_add(self.dim, index, grad),)

    def backward_arrays(self, grad):
        (index,) = self.saved_tensors
        gd = grad._data
        if type(gd) is np.ndarray and gd.dtype == np.float32 and not gd.flags.c_contiguous:
            gd = np.ascontiguousarray(gd)   # (a sum's expanded gradient, say: the loop reads rows)
        if not openmp_kernels.scatter_add_applies(gd, index._data, self.dim, self.in_shape):
            return None
        added = _gather_gradient_kernel(gd, index._data, self.dim, self.in_shape)
        return None if added is None else (make(added),)


# scatter into a copy: True once written (None where the loop does not take the case, False
# where it met an index out of bounds)
_scatter_kernel = KernelChoice("scatter", onednn=openmp_kernels.scatter,
                               numpy=lambda *args: None)

# scatter_add into a copy, likewise
_scatter_add_kernel = KernelChoice("scatter_add", onednn=openmp_kernels.scatter_add_into,
                                   numpy=lambda *args: None)

# (None where the loop meets an index out of bounds: the general backward says which)
_gather_gradient_kernel = KernelChoice("gather backward", onednn=openmp_kernels.scatter_add_float32,
                                       numpy=lambda *args: None)


def _scatter_gather_index(index, op):
    idx = index._data
    if idx.size and idx.dtype not in _INT_INDEX:   # torch returns before checking an empty index
        raise RuntimeError(f"{op}(): Expected dtype int32/int64 for index")
    return idx


def _check_gather_shapes(self_shape, idx_shape, dim):
    s, i = _nonempty_shape(self_shape), _nonempty_shape(idx_shape)
    if len(s) != len(i):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    for d, (n_self, n_idx) in enumerate(zip(s, i)):
        if d != dim and n_idx > n_self:
            raise RuntimeError(f"Size does not match at dimension {d} expected index "
                               f"{list(idx_shape)} to be no larger than self {list(self_shape)} "
                               f"apart from dimension {dim}")


def _gather_numpy(data, idx, d, error):
    _check_bounds(idx, 0, _nonempty_shape(data.shape)[d], error)
    return take_at(_nonempty(data), _along_key(_nonempty(idx), d)).reshape(idx.shape)


def _gather_loop(data, idx, d, error):
    try:
        return openmp_kernels.gather(data, idx, d)
    except ValueError:   # an index out of bounds: the first one named, as torch does
        _check_bounds(idx, 0, data.shape[d], error)
        raise


# ``input.gather(d, index)`` on the arrays (the loop where it takes them), raising ``error(i)``
# for the first index ``i`` out of bounds
_gather_kernel = KernelChoice("gather", onednn=_gather_loop, numpy=_gather_numpy)


def _numpy_selected(data, index, axis):
    return namespace_of(data).take(data, index, axis=axis)


# index_select: large row-major float32 inputs by the kernel choice
_select_kernel = KernelChoice("index_select", onednn=openmp_kernels.index_select_float32,
                              numpy=_numpy_selected)
# index_add into a fresh copy, asked where the loop takes the case (NumPy's: None, for
# ``_index_added``'s own path)
_slices_added = KernelChoice("index_add", onednn=openmp_kernels.index_add_float32,
                             numpy=lambda out, index, values, axis: None)


def _slices_reduced_at(out, index, values, axis, ufunc):
    """``out`` (row-major) with the slices of ``values`` (row-major) along ``axis`` combined in
    at ``index`` by ``getattr(np, ufunc).at``, through flat positions in the loop's order."""
    outer, nx, inner = math.prod(out.shape[:axis]), out.shape[axis], math.prod(out.shape[axis + 1:])
    positions = ((np.arange(outer)[:, None, None] * nx + index[None, :, None]) * inner
                 + np.arange(inner)[None, None, :])
    with np.errstate(invalid="ignore"):   # (NaN in a maximum or minimum)
        getattr(np, ufunc).at(out.reshape(-1), positions.reshape(-1), values.reshape(-1))
    return out


# index_reduce of float32 slices in place, in ``ufunc.at``'s order
_slices_reduced = KernelChoice("index_reduce", onednn=openmp_kernels.index_reduce_float32,
                               numpy=_slices_reduced_at)


def _selected(data, index, axis):
    """``take(data, index, axis)``, for an index within range (by the kernel choice where the
    loop takes the case)."""
    if openmp_kernels.index_select_applies(data, index, axis):
        return _select_kernel(data, index, axis)
    return _numpy_selected(data, index, axis)


def gather(input, dim, index, *, sparse_grad=False, out=None):
    """Gathers values of ``input`` along ``dim``: ``out[i][j] = input[index[i][j]][j]`` for
    ``dim == 0`` (and likewise for other dims). ``index`` has ``input``'s number of dims and is
    no larger than it in every other dim; the result has ``index``'s shape."""
    result = _gather(input, dim, index, sparse_grad=sparse_grad)
    return result if out is None else write_out(result, out, True, "gather")


def _gather(input, dim, index, *, sparse_grad=False):
    if sparse_grad:
        return _python_gather(input, dim, index, sparse_grad=sparse_grad)
    return _gather_entry[0](input, dim, index)


def _python_gather(input, dim, index, *, sparse_grad=False):
    """``gather`` in every case its compiled function (``_compiled_functions``) leaves to Python."""
    _tensor_arg(index, "gather", "index", 3)
    data = input._data
    d = wrap_dim(dim, data.ndim or 1)
    idx = _scatter_gather_index(index, "gather")
    if idx.size:
        _check_gather_shapes(data.shape, idx.shape, d)
        size = _nonempty_shape(data.shape)[d]
        out = make(_gather_kernel(data, idx, d, _out_of_bounds(d, size)))
    else:
        out = make(namespace_of(data).empty(idx.shape, dtype=data.dtype))
    node = record(GatherBackward0, (input,), out)
    if node is not None:
        node.save(index)
        node.dim, node.in_shape = d, data.shape
    return out


_gather_entry = _compiled_functions.register(_python_gather, GatherBackward0, kind="gather")


def take_along_dim(input, indices, dim=None, *, out=None):
    """Selects values from ``input`` at the 1-d positions ``indices`` along ``dim`` (``input``
    and ``indices`` broadcast in the other dims), as the indices argmax and argsort return;
    with ``dim=None`` both are flattened first."""
    result = _take_along_dim(input, indices, dim)
    return result if out is None else write_out(result, out, True, "take_along_dim")


def _take_along_dim(input, indices, dim=None):
    _tensor_arg(indices, "take_along_dim", "indices", 2)
    data, idx = input._data, indices._data
    if dim is None:
        _check_take_along_dtype(idx)
        return gather(input.reshape(-1), 0, indices.reshape(-1))
    if data.ndim != idx.ndim:
        raise RuntimeError("torch.take_along_dim(): input and indices should have the same number "
                           f"of dimensions, but got {data.ndim} dimensions for input, and "
                           f"{idx.ndim} dimensions for indices")
    _check_take_along_dtype(idx)
    if not data.ndim:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = wrap_dim(dim, data.ndim)
    size = data.shape[d]
    if idx.size and size and (idx.min() < 0 or idx.max() >= size):
        indices = make(idx % size)  # torch wraps indices along dim around its size
    if data.shape[:d] == idx.shape[:d] and data.shape[d + 1:] == idx.shape[d + 1:]:
        return gather(input, d, indices)   # (nothing to broadcast)
    index_shape = _broadcast_pair(data.shape[:d] + (idx.shape[d],) + data.shape[d + 1:], idx.shape)
    _broadcast_pair(idx.shape[:d] + (size,) + idx.shape[d + 1:], data.shape)
    input_shape = index_shape[:d] + (size,) + index_shape[d + 1:]
    if data.shape != input_shape:
        input = input.expand(input_shape)
    if idx.shape != index_shape:
        indices = indices.expand(index_shape)
    return gather(input, d, indices)


def _check_take_along_dtype(idx):
    if idx.dtype != _LONG:
        raise RuntimeError("torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{_type_word(idx.dtype)}")


# -- scatter, scatter_add, scatter_reduce ---------------------------------------------------------

def _check_scatter_shapes(self_shape, idx_shape, src_shape, dim):
    """torch's checks, in torch's order: index no larger than self (but along ``dim``) and
    than src; then src of index's rank."""
    s, i = _nonempty_shape(self_shape), _nonempty_shape(idx_shape)
    if len(s) != len(i):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    too_big = False
    for d, n_idx in enumerate(i):
        if d != dim and n_idx > s[d]:
            too_big = True
            break
    if src_shape is not None and src_shape != idx_shape and not too_big:
        too_big = any(n_idx > _size_at(src_shape, d) for d, n_idx in enumerate(i))
    if too_big:
        message = (f"Expected index {list(idx_shape)} to be no larger than self {list(self_shape)} "
                   f"apart from dimension {dim}")
        if src_shape is not None:
            message += f" and to be no larger size than src {list(src_shape)}"
        raise RuntimeError(message)
    if src_shape is not None and len(_nonempty_shape(src_shape)) != len(i):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")


def _size_at(shape, d):
    """``shape[d]`` (1 for a 0-d shape), with torch's IndexError for a dim out of range."""
    if not shape:
        return 1
    if d >= len(shape):
        raise IndexError(f"Dimension out of range (expected to be in range of [{-len(shape)}, "
                         f"{len(shape) - 1}], but got {d})")
    return shape[d]


def _assign(xp, target, key, values, include_self):
    target[key] = values


def _ufunc_at(name, identity):
    """A reducer writing with ``xp.<name>.at`` (repeated positions combine); without
    ``include_self`` the written positions start from ``identity(dtype)``."""
    def reduce(xp, target, key, values, include_self):
        if not include_self:
            target[key] = identity(target.dtype)
        ufunc_at(name, target, key, values)
    return reduce


def _lowest(dtype):
    if dtype.kind in "iu":
        return np.iinfo(dtype).min
    return False if dtype.kind == "b" else -np.inf


def _highest(dtype):
    if dtype.kind in "iu":
        return np.iinfo(dtype).max
    return True if dtype.kind == "b" else np.inf


def _mean_at(xp, target, key, values, include_self):
    counts = (xp.ones if include_self else xp.zeros)(target.shape, dtype=target.dtype)
    if not include_self:
        target[key] = 0
    ufunc_at("add", target, key, values)
    ufunc_at("add", counts, key, 1)
    if not include_self:
        counts[counts == 0] = 1
    divide = xp.floor_divide if target.dtype.kind in "iub" else xp.true_divide
    divide(target, counts, out=target, casting="unsafe")


_REDUCERS = {
    None: _assign,
    "add": _ufunc_at("add", lambda dt: 0), "sum": _ufunc_at("add", lambda dt: 0),
    "multiply": _ufunc_at("multiply", lambda dt: 1), "prod": _ufunc_at("multiply", lambda dt: 1),
    "amax": _ufunc_at("maximum", _lowest), "amin": _ufunc_at("minimum", _highest),
    "max": _ufunc_at("maximum", _lowest), "min": _ufunc_at("minimum", _highest),
    "mean": _mean_at,
}


def _scatter_data(op, input, dim, index, src, reduce=None, include_self=True, into=None):
    """``input``'s values with ``src`` (a tensor or a number) scattered into a copy along
    ``dim`` at ``index`` (or into ``into``, ``input``'s own array, every check made before the first
    write), combined by ``reduce``; checked as torch checks."""
    _tensor_arg(index, op, "index", 3)
    data = input._data
    d = wrap_dim(dim, data.ndim or 1)
    src_is_tensor = isinstance(src, Tensor)
    idx = _scatter_gather_index(index, "scatter")
    if src_is_tensor and src._data.dtype != data.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    out = data.copy() if into is None else into
    if not idx.size:
        return out
    _check_scatter_shapes(data.shape, idx.shape, src._data.shape if src_is_tensor else None, d)
    if not src_is_tensor:
        values = namespace_of(data).asarray(src).astype(data.dtype)
    if into is not None:   # (the loops meet an index out of bounds after writing the ones before it)
        size = _nonempty_shape(data.shape)[d]
        _check_bounds(idx, 0, size, _out_of_bounds(d, size))
    if idx.size >= openmp_kernels.ELEMENTWISE_MIN_ELEMENTS:   # (the loops' size)
        if reduce is None and _scatter_kernel(out, idx, src._data if src_is_tensor else None, d,
                                              0.0 if src_is_tensor else float(values)):
            return out   # (False: an index out of bounds, which the check below names)
        if reduce in ("add", "sum") and include_self and src_is_tensor and _scatter_add_kernel(
                out, idx, src._data, d):
            return out
    size = _nonempty_shape(data.shape)[d]
    _check_bounds(idx, 0, size, _out_of_bounds(d, size))
    idx = _nonempty(idx)
    if src_is_tensor:
        values = _nonempty(src._data)
        if values.shape != idx.shape:
            values = values[tuple(slice(0, n) for n in idx.shape)]
    _REDUCERS[reduce](namespace_of(data), _nonempty(out), _along_key(idx, d), values, include_self)
    return out


class ScatterBackward0(Node):
    """Gradient of scatter with a src tensor: the overwritten positions get none."""
    __slots__ = ()
    jvp = jvp_by_transposition

    def backward(self, grad):
        (index,) = self.saved_tensors
        g_self = grad.scatter(self.dim, index, 0) if self.next_functions[0][0] is not None else None
        g_src = None
        if self.next_functions[1][0] is not None:
            g_src = _fit_to(grad.gather(self.dim, index), self.src_shape)
        return g_self, g_src


class ScatterBackward1(Node):
    __slots__ = ()
    saved_fields = {"dim": "dim", "index": 0}
    jvp = jvp_by_transposition

    def backward(self, grad):
        (index,) = self.saved_tensors
        return (grad.scatter(self.dim, index, 0),)


class ScatterAddBackward0(Node):
    __slots__ = ()
    saved_fields = {"dim": "dim", "index": 0}
    jvp = jvp_by_transposition

    def backward(self, grad):
        (index,) = self.saved_tensors
        g_src = None
        if self.next_functions[1][0] is not None:
            g_src = _fit_to(grad.gather(self.dim, index), self.src_shape)
        return grad, g_src


_SCATTER_SRC_REDUCE_DEPRECATED = (
    "The reduce argument of torch.scatter with Tensor src is deprecated and will be removed in a "
    "future PyTorch release. Use torch.scatter_reduce instead for more reduction options.")


def scatter(input, dim, index, src=None, value=None, *, reduce=None, out=None):
    """Writes ``src`` (a tensor) or ``value`` (a number) into a copy of ``input`` at the
    positions ``index`` gives along ``dim``: ``out[index[i][j]][j] = src[i][j]`` for
    ``dim == 0``. With ``reduce='add'`` or ``'multiply'`` the values are combined with the
    existing ones instead (repeated positions accumulate)."""
    result = _scatter(input, dim, index, src, value, reduce=reduce)
    return result if out is None else write_out(result, out, True, "scatter")


def _scatter(input, dim, index, src=None, value=None, *, reduce=None):
    if value is None and src is not None:
        if reduce is None:
            return _scatter_entry[0](input, dim, index, src)
        if (reduce == "add" or reduce == "multiply") and isinstance(src, Tensor):
            warn_once(_SCATTER_SRC_REDUCE_DEPRECATED, stacklevel=3)   # (the frame _python_scatter's names)
            return _reduced_scatter_entry[0](input, dim, index, src, reduce, True)
    return _python_scatter(input, dim, index, src, value, reduce=reduce)


def _python_reduced_scatter(input, dim, index, src, reduce, include_self):
    """``scatter`` with a src tensor and ``reduce`` in every case its compiled function (``_compiled_scatters``)
    leaves to Python."""
    return _python_scatter(input, dim, index, src, reduce=reduce)


def _python_scatter(input, dim, index, src=None, value=None, *, reduce=None):
    """``scatter`` in every case its compiled function (``_compiled_functions``) leaves to Python."""
    if src is None:
        src = value
    if src is None:
        raise TypeError("scatter() missing 1 required positional argument: 'src' or 'value'")
    if reduce is not None:
        if reduce not in ("add", "multiply"):
            raise RuntimeError("reduce argument must be either add or multiply.")
        if isinstance(src, Tensor):
            warn_once(_SCATTER_SRC_REDUCE_DEPRECATED, stacklevel=4)
    is_tensor = isinstance(src, Tensor)
    if not is_tensor:
        _scalar_value(src, "scatter", "value", 4)
        check_value_fits(src, input._data.dtype)
    out = make(_scatter_data("scatter", input, dim, index, src, reduce))
    if reduce is not None:
        return record_not_differentiable((input, src) if is_tensor else (input,), out,
                                         "derivative for aten::scatter is not implemented")
    node = record(ScatterBackward0 if is_tensor else ScatterBackward1,
                  (input, src) if is_tensor else (input,), out)
    if node is not None:
        node.save(index)
        node.dim = wrap_dim(dim, input._data.ndim or 1)
        if is_tensor:
            node.src_shape = src._data.shape
    return out


def _scalar_value(value, op, name, pos):
    if not isinstance(value, (numbers.Number, np.generic)):
        raise TypeError(f"{op}(): argument '{name}' (position {pos}) must be Number, not "
                        f"{type(value).__name__}")


def scatter_add(input, dim, index, src, *, out=None):
    """Adds every value of ``src`` into a copy of ``input`` at the positions ``index`` gives
    along ``dim`` (values sent to the same position all add up)."""
    result = _scatter_add(input, dim, index, src)
    return result if out is None else write_out(result, out, True, "scatter_add")


def _scatter_add(input, dim, index, src):
    return _scatter_add_entry[0](input, dim, index, src)


def _python_scatter_add(input, dim, index, src):
    """``scatter_add`` in every case its compiled function (``_compiled_functions``) leaves to Python."""
    _tensor_arg(src, "scatter_add", "src", 4)
    out = make(_scatter_data("scatter_add", input, dim, index, src, "add"))
    node = record(ScatterAddBackward0, (input, src), out)
    if node is not None:
        node.save(index)
        node.dim, node.src_shape = wrap_dim(dim, input._data.ndim or 1), src._data.shape
    return out


_scatter_entry = _compiled_functions.register(_python_scatter, ScatterBackward0, kind="scatter",
                                              specifics=(ScatterBackward1, False))
_scatter_add_entry = _compiled_functions.register(_python_scatter_add, ScatterAddBackward0, kind="scatter",
                                                  specifics=(None, True))


_SCATTER_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin", "max", "min")  # max, min: legacy


class ScatterReduceBackward0(Node):
    """torch's gradient of scatter_reduce (FunctionsManual.cpp, scatter_reduce_backward)."""
    __slots__ = ()
    jvp = jvp_by_transposition

    def backward(self, grad):
        input, index, src, result = self.saved_tensors
        if self.reduce not in _SCATTER_REDUCE_GRADS:
            raise RuntimeError("Expected 'reduce' to be one of 'sum', 'prod', 'mean', 'amax', 'amin' "
                               f"but got {self.reduce}.")
        g_self, g_src = _SCATTER_REDUCE_GRADS[self.reduce](
            grad, input, self.dim, index, src, result, self.include_self)
        if not self.include_self:
            g_self = g_self.scatter(self.dim, index, 0)
        return g_self, _fit_to(g_src, self.src_shape)


def _scatter_sum_grad(grad, input, dim, index, src, result, include_self):
    return grad, grad.gather(dim, index)


def _mean_grad(grad, src_shape, spread, pick, include_self):
    """A mean's gradient: ``grad`` divided by the count of values each position took (``spread(t, src)``
    adds ``src`` into ``t`` at the index; ``pick(t)`` takes ``t`` at the index)."""
    xp = namespace_of(grad._data)
    counts = make((xp.ones if include_self else xp.zeros)(grad._data.shape, dtype=grad._data.dtype))
    counts = spread(counts, make(xp.ones(src_shape, dtype=grad._data.dtype)))
    counts = counts.masked_fill(counts == 0, 1)
    return grad / counts, pick(grad) / pick(counts)


def _extreme_grad(grad, input, src, result, spread, pick):
    """An amax's or amin's gradient, shared evenly between the values equal to the result (``spread``,
    ``pick``: as ``_mean_grad``'s)."""
    self_is_result = (input == result).to(grad.dtype)
    src_is_result = (src == pick(result)).to(grad.dtype)
    distributed = grad / spread(self_is_result, src_is_result)
    return self_is_result * distributed, src_is_result * pick(distributed)


def _scattered(dim, index):
    """(spread, pick) along ``dim`` at the positions ``index`` gives: scatter_add and gather."""
    return lambda t, src: t.scatter_add(dim, index, src), lambda t: t.gather(dim, index)


def _scatter_mean_grad(grad, input, dim, index, src, result, include_self):
    return _mean_grad(grad, index._data.shape, *_scattered(dim, index), include_self)


def _scatter_extreme_grad(grad, input, dim, index, src, result, include_self):
    return _extreme_grad(grad, input, _region(src, index), result, *_scattered(dim, index))


def _prod_grad(grad, input, src, result, spread, pick, product):
    """A product's gradient: products divided by the factor, with zero factors handled as torch does
    (``spread``, ``pick``: as ``_mean_grad``'s; ``product(t, src)``: ``src``'s values multiplied into ``t``
    at the index)."""
    from .ternary import where
    masked_self = input.masked_fill(input == 0, 1)
    g_self = grad * product(masked_self, src) / masked_self
    src_zero = src == 0
    zeros = make(namespace_of(grad._data).zeros(input._data.shape, dtype=grad._data.dtype))
    single_zero = src_zero & (pick(spread(zeros, src_zero.to(grad.dtype))) == 1)
    masked_src_result = product(input, src.masked_fill(single_zero, 1))
    g_src = where(single_zero, pick(grad * masked_src_result), pick(grad * result) / src.masked_fill(src_zero, 1))
    return g_self, g_src


def _scatter_prod_grad(grad, input, dim, index, src, result, include_self):
    return _prod_grad(grad, input, _region(src, index), result, *_scattered(dim, index),
                      lambda t, values: t.scatter_reduce(dim, index, values, "prod", include_self=include_self))


def _region(src, index):
    """The part of ``src`` that ``index`` covers."""
    if src._data.shape == index._data.shape:
        return src
    return src[tuple(slice(0, n) for n in index._data.shape)] if src._data.ndim else src.reshape(index.shape)


_SCATTER_REDUCE_GRADS = {"sum": _scatter_sum_grad, "mean": _scatter_mean_grad,
                         "amax": _scatter_extreme_grad, "amin": _scatter_extreme_grad,
                         "prod": _scatter_prod_grad}


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True, out=None):
    """Reduces every value of ``src`` into a copy of ``input`` at the positions ``index`` gives
    along ``dim``, with ``reduce`` one of ``"sum"``, ``"prod"``, ``"mean"``, ``"amax"``,
    ``"amin"``; with ``include_self=False`` the values of ``input`` at the scattered positions
    take no part."""
    result = _scatter_reduce(input, dim, index, src, reduce, include_self=include_self)
    return result if out is None else write_out(result, out, True, "scatter_reduce")


def _scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    return _scatter_reduce_entry[0](input, dim, index, src, reduce, include_self)


def _python_scatter_reduce(input, dim, index, src, reduce, include_self=True):
    """``scatter_reduce`` in every case its compiled function (``_compiled_functions``) leaves to Python."""
    _tensor_arg(src, "scatter_reduce", "src", 4)
    if reduce not in _SCATTER_REDUCTIONS:
        raise RuntimeError("reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    out = make(_scatter_data("scatter_reduce", input, dim, index, src, reduce, include_self))
    node = record(ScatterReduceBackward0, (input, src), out)
    if node is not None:
        node.save(input, index, src, out)
        node.dim, node.src_shape = wrap_dim(dim, input._data.ndim or 1), src._data.shape
        node.reduce, node.include_self = reduce, include_self
    return out


_scatter_reduce_entry = _compiled_functions.register(_python_scatter_reduce, ScatterReduceBackward0,
                                                     kind="scatter_reduce", specifics=False)
_reduced_scatter_entry = _compiled_functions.register(_python_reduced_scatter, None, kind="scatter_reduce",
                                                      specifics=True)


# -- index_add, index_copy, index_fill ----------------------------------------------------------

def _check_index_add(input, d, idx, source):
    data, src = input._data, source._data
    if idx.ndim > 1:
        raise IndexError(f"index_add_(): Index is supposed to be a vector, but got dim: {idx.ndim} "
                         f"with type: {_type_word(idx.dtype)} and size: {list(idx.shape)}")
    if idx.dtype not in _INT_INDEX:
        raise RuntimeError(f"index_add_(): Expected dtype int32/int64 for index but got: "
                           f"{_type_word(idx.dtype)}")
    if src.dtype != data.dtype:
        raise RuntimeError(f"index_add_(): self ({_type_word(data.dtype)}) and source "
                           f"({_type_word(src.dtype)}) must have the same scalar type")
    if d != 0 and d >= src.ndim:
        raise RuntimeError(f"index_add_(): Indexing dim {d} is out of bounds of the source tensor "
                           f"with dim {src.ndim}")
    n_source = src.shape[d] if src.ndim else 1
    if idx.size != n_source:
        raise RuntimeError(f"index_add_(): Number of indices ({idx.size}) should be equal to "
                           f"source.size(dim): ({n_source}), for dim: {d}")
    if data.ndim != src.ndim or any(a != b for i, (a, b) in enumerate(zip(data.shape, src.shape))
                                    if i != d):
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(data.shape)} "
                           f"source.shape = {list(src.shape)}")
    if data.size:   # torch adds nothing into an empty tensor, whatever the indices
        size = _nonempty_shape(data.shape)[d]
        # torch's 1-d kernel words it as IndexError, the others (mostly) as RuntimeError
        _check_bounds(idx, 0, size, (lambda i: IndexError("index out of range in self"))
                      if data.ndim <= 1 else _out_of_bounds(d, size))


@complex_autograd
class IndexAddBackward0(Node):
    __slots__ = ()
    saved_fields = {"dim": "dim", "index": 0, "alpha": "alpha", "source": not_kept("source"),
                    "source_dim": lambda node: len(node.source_shape)}
    jvp = jvp_by_transposition

    def backward(self, grad):
        g_source = None
        if self.next_functions[1][0] is not None:
            (index,) = self.saved_tensors
            g_source = _nonempty_grad(grad).index_select(self.dim, index.reshape(-1))
            if self.alpha != 1:
                g_source = g_source * conj_if_complex(self.alpha)
            g_source = _fit_to(g_source, self.source_shape)
        return grad, g_source


def _nonempty_grad(grad):
    return grad if grad._data.ndim else grad.reshape(1)


def _index_added(data, d, index, values):
    """A copy of ``data`` with the slices of ``values`` along ``d`` added at ``index`` (its
    layout as ``data.copy()``'s): rows along the first dimension, as ``add_rows_at`` adds them
    (large row-major float32 ones by the kernel choice)."""
    xp = namespace_of(data)
    if not data.size:
        return data.copy()
    if openmp_kernels.index_add_applies(data, index, values, d):
        out = _slices_added(data.copy(), index, values, d)
        if out is not None:
            return out
    if not data.ndim or not index.size:
        out = data.copy()
        xp.add.at(_nonempty(out), _dim_key(d, index), values)
        return out
    rows = (data if d == 0 else xp.moveaxis(data, d, 0)).copy(order="C")
    n = rows.shape[0]
    add_rows_at(rows.reshape(n, -1), index,
                (values if d == 0 else xp.moveaxis(values, d, 0)).reshape(index.size, -1))
    return rows if d == 0 else xp.ascontiguousarray(xp.moveaxis(rows, 0, d))


def index_add(input, dim, index, source, *, alpha=1, out=None):
    """Adds ``alpha`` times the slices of ``source`` into a copy of ``input`` at the positions
    ``index`` gives along ``dim`` (slices sent to the same position all add up)."""
    result = _index_add(input, dim, index, source, alpha=alpha)
    return result if out is None else write_out(result, out, True, "index_add")


def _index_add(input, dim, index, source, *, alpha=1):
    if alpha.__class__ is int and alpha == 1:
        return _index_add_entry[0](input, dim, index, source)
    return _python_index_add(input, dim, index, source, alpha=alpha)


def _python_index_add(input, dim, index, source, *, alpha=1):
    """``index_add`` in every case its compiled function (``_compiled_functions``) leaves to Python."""
    _tensor_arg(index, "index_add", "index", 3)
    _tensor_arg(source, "index_add", "source", 4)
    data = input._data
    d = wrap_dim(dim, data.ndim or 1)
    _check_index_add(input, d, index._data, source)
    xp = namespace_of(data)
    values = source._data
    if alpha != 1:
        check_value_fits(alpha, data.dtype)
        values = values * xp.asarray(alpha).astype(data.dtype)
    out = make(_index_added(data, d, index._data.reshape(-1), values))
    node = record(IndexAddBackward0, (input, source), out)
    if node is not None:
        node.save(index)
        node.dim, node.alpha, node.source_shape = d, alpha, source._data.shape
    return out


def _check_index_copy(input, d, idx, source):
    data, src = input._data, source._data
    if idx.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {idx.ndim})")
    if idx.dtype != _LONG:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got "
                           f"{_type_word(idx.dtype)}")
    if src.dtype != data.dtype:
        raise RuntimeError("index_copy_(): self and source expected to have the same dtype, but got "
                           f"(self) {_type_word(data.dtype)} and (source) {_type_word(src.dtype)}")
    if data.ndim and src.ndim and data.ndim != src.ndim:
        raise IndexError("index_copy_(): When source and destination are not scalars, their "
                         f"dimensionality must match. Source dimensionality ({src.ndim}), "
                         f"destination dimensionality ({data.ndim})")
    self_slice = data.shape[:d] + data.shape[d + 1:]
    source_slice = src.shape[:d] + src.shape[d + 1:]
    if src.ndim and self_slice != source_slice:   # torch compares the slices first
        raise RuntimeError("index_copy_(): Source/destination tensor must have same slice shapes. "
                           f"Destination slice shape: {' '.join(map(str, self_slice))} at dimension "
                           f"{d} and source slice shape: {' '.join(map(str, source_slice))} at "
                           "dimension 0.")
    n_source = src.shape[d] if src.ndim else 1
    if idx.size != n_source:
        raise IndexError(f"index_copy_(): Number of indices ({idx.size}) should be equal to "
                         f"source.size(dim) ({n_source})")
    size = _nonempty_shape(data.shape)[d]
    if size == 0 and idx.size:
        raise RuntimeError(f"index_copy_(): cannot copy into dimension {d} of size 0")
    _check_bounds(idx, 0, size, _out_of_bounds(d, size, IndexError, "index_copy_(): "))


class IndexCopyBackward0(Node):
    __slots__ = ()
    saved_fields = {"dim": "dim", "index": 0, "source": not_kept("source"),
                    "source_dim": lambda node: len(node.source_shape)}
    jvp = jvp_by_transposition

    def backward(self, grad):
        (index,) = self.saved_tensors
        g_self = g_source = None
        if self.next_functions[0][0] is not None:
            g_self = grad.index_fill(self.dim, index, 0)
        if self.next_functions[1][0] is not None:
            g_source = _fit_to(_nonempty_grad(grad).index_select(self.dim, index.reshape(-1)),
                               self.source_shape)
        return g_self, g_source


@autocast_policy("promote")
def index_copy(input, dim, index, source, *, out=None):
    """Copies the slices of ``source`` into a copy of ``input`` at the positions ``index``
    gives along ``dim``."""
    result = _index_copy(input, dim, index, source)
    return result if out is None else write_out(result, out, True, "index_copy")


def _index_copy(input, dim, index, source):
    return _index_copy_entry[0](input, dim, index, source)


def _index_copied(input, dim, index, source, into=None):
    """``input``'s values with ``source``'s slices copied in at ``index`` along ``dim``: a copy, or ``into``
    (``input``'s own array, written after every check), and ``dim`` wrapped."""
    _tensor_arg(index, "index_copy", "index", 3)
    _tensor_arg(source, "index_copy", "source", 4)
    data = input._data
    d = wrap_dim(dim, data.ndim or 1)
    _check_index_copy(input, d, index._data, source)
    out = data.copy() if into is None else into
    values = source._data
    if values.ndim and not data.ndim:
        values = values.reshape(())
    _nonempty(out)[_dim_key(d, index._data.reshape(-1))] = values
    return out, d


def _python_index_copy(input, dim, index, source):
    """``index_copy`` in every case its compiled function (``_compiled_functions``) leaves to Python."""
    out, d = _index_copied(input, dim, index, source)
    out = make(out)
    node = record(IndexCopyBackward0, (input, source), out)
    if node is not None:
        node.save(index)
        node.dim, node.source_shape = d, source._data.shape
    return out


class IndexFillBackward0(Node):
    __slots__ = ()
    saved_fields = {"dim": "dim", "index": 0}
    jvp = jvp_by_transposition

    def backward(self, grad):
        (index,) = self.saved_tensors
        return (grad.index_fill(self.dim, index, 0),)


class IndexFillBackward1(Node):
    """Gradient of index_fill with a 0-d value tensor: the value gets the sum of the gradient
    over the filled positions, each counted once."""
    __slots__ = ()
    saved_fields = {"dim": "dim", "index": 0}
    jvp = jvp_by_transposition

    def backward(self, grad):
        (index,) = self.saved_tensors
        g_self = grad.index_fill(self.dim, index, 0) if self.next_functions[0][0] is not None else None
        g_value = None
        if self.next_functions[1][0] is not None:
            xp = namespace_of(index._data)
            size = _nonempty_shape(grad._data.shape)[self.dim]
            filled = make(xp.unique(index._data.reshape(-1) % size))
            g_value = _nonempty_grad(grad).index_select(self.dim, filled).sum()
            if g_value._data.dtype != self.value_dtype:
                g_value = g_value.to(_BY_NP[self.value_dtype])
        return g_self, g_value


def index_fill(input, dim, index, value):
    """Fills the slices of a copy of ``input`` at the positions ``index`` gives along ``dim``
    with ``value`` (a number or a 0-d tensor)."""
    return _index_fill_entry[0](input, dim, index, value)


def _index_filled(input, dim, index, value, into=None):
    """``input``'s values with the slices at ``index`` along ``dim`` set to ``value``: a copy, or ``into``
    (``input``'s own array, written after every check), and ``dim`` wrapped."""
    _tensor_arg(index, "index_fill", "index", 3)
    data, idx = input._data, index._data
    d = wrap_dim(dim, data.ndim or 1)
    if idx.dtype != _LONG:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if idx.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    value_tensor = value if isinstance(value, Tensor) else None
    if value_tensor is not None:
        if value._data.ndim:
            raise RuntimeError("index_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value._data.ndim} dimension(s).")
        if value._data.dtype.kind == "c" and data.dtype.kind != "c":
            raise RuntimeError("index_fill_(): Converting complex Scalar to non-complex type is not "
                               "supported")
        check_value_fits(value, data.dtype)
        fill = value._data.astype(data.dtype)
    else:
        _scalar_value(value, "index_fill", "value", 4)
        check_value_fits(value, data.dtype)
        fill = namespace_of(data).asarray(value).astype(data.dtype)
    size = _nonempty_shape(data.shape)[d]
    if size == 0 and idx.size:
        raise RuntimeError(f"index_fill_(): cannot fill dimension {d} of size 0")
    _check_bounds(idx, -size, size, _out_of_bounds(d, size, IndexError))
    out = data.copy() if into is None else into
    _nonempty(out)[_dim_key(d, idx.reshape(-1))] = fill
    return out, d


def _python_index_fill(input, dim, index, value):
    """``index_fill`` in every case its compiled function (``_compiled_functions``) leaves to Python."""
    out, d = _index_filled(input, dim, index, value)
    value_tensor = value if isinstance(value, Tensor) else None
    out = make(out)
    if value_tensor is None:
        node = record(IndexFillBackward0, (input,), out)
    else:
        node = record(IndexFillBackward1, (input, value_tensor), out)
        if node is not None:
            node.value_dtype = value_tensor._data.dtype
    if node is not None:
        node.save(index)
        node.dim = d
    return out


_index_add_entry, _index_copy_entry, _index_fill_entry = (
    _compiled_functions.register(python_op, node_cls, kind="slices", specifics=writes)
    for python_op, node_cls, writes in ((_python_index_add, IndexAddBackward0, "add"),
                                        (_python_index_copy, IndexCopyBackward0, "copy"),
                                        (_python_index_fill, IndexFillBackward0, "fill")))


# -- index_put ---------------------------------------------------------------------------------

def _index_put_key(op, input, indices):
    """``indices`` (a tuple or list of index tensors) as a key for ``input``'s array."""
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"{op}(): argument 'indices' (position 2) must be tuple of Tensors, not "
                        f"{type(indices).__name__}")
    for i, k in enumerate(indices):
        if not isinstance(k, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 1, but got "
                            f"{type(k).__name__}")
    data = input._data
    if len(indices) > data.ndim:
        raise IndexError(f"too many indices for tensor of dimension {data.ndim} "
                         f"(got {len(indices)})")
    return normalize_key(tuple(indices), data)


def index_put(input, indices, values, accumulate=False):
    """Returns a copy of ``input`` with ``values`` written at ``input[indices]`` (``indices`` a
    tuple of index tensors); with ``accumulate=True`` they are added instead, repeated
    positions adding up."""
    return _index_put_entry[0](input, indices, values, accumulate)


def _python_index_put(input, indices, values, accumulate=False):
    """``index_put`` in every case its compiled function (``_compiled_scatters``) leaves to Python."""
    key = _index_put_key("index_put", input, indices)
    _check_put_values(input, key, indices, values, accumulate)
    data = input._data.copy()
    if accumulate:
        _accumulate(data, key, values._data)
    else:
        _write(data, key, values._data, values, False)
    out = make(data)
    node = record(IndexPutBackward0, (input, values), out)
    if node is not None:
        node.key, node.accumulate = key, accumulate
        node.value_shape, node.value_dtype = values._data.shape, values._data.dtype
    return out


# (its specifics: whether it writes into its input, and whether it is put's flat form)
_index_put_entry = _compiled_functions.register(_python_index_put, None, kind="index_put", specifics=(False, False))


def _check_put_values(input, key, indices, values, accumulate):
    """index_put's checks of ``values`` for ``input[key]``."""
    _tensor_arg(values, "index_put", "values", 3)
    if (not accumulate and len(indices) == 1 and values._data.size == 1
            and indices[0]._data.dtype.kind in "bu" and indices[0]._data.dtype.itemsize == 1):
        # torch's masked_fill case: one mask and a one-element value, written as a number
        _check_bool_mask("masked_fill", indices[0])
        check_value_fits(values, input._data.dtype)
    else:
        _check_value_dtype(input, key, values, strict=True)


def _accumulate(data, key, values):
    """``data[key] += values`` with repeated positions adding up, and torch's errors."""
    _check_write_shapes(data, key, values, False)
    try:
        namespace_of(data).add.at(data, key, values)
    except ValueError:
        raise _shape_mismatch(values.shape, data[key].shape) from None
    except IndexError as e:
        raise _out_of_range(e, key, data.ndim) from None


def index_put_(self, indices, values, accumulate=False):
    """In-place ``index_put``: writes (or with ``accumulate``, adds) ``values`` at
    ``self[indices]``."""
    return _index_put_inplace_entry[0](self, indices, values, accumulate)


def _python_index_put_(self, indices, values, accumulate=False):
    """``index_put_`` in every case its compiled function (``_compiled_scatters``) leaves to Python."""
    key = _index_put_key("index_put_", self, indices)   # torch parses the arguments first
    if (not accumulate and inplace_untracked(self) and isinstance(values, Tensor)
            and not (values._requires_grad and grad_state.grad_enabled)):
        # nothing recorded: written into self's array (NumPy checks the shapes and the indices' range before
        # it writes anything)
        check_inplace(self)
        _check_put_values(self, key, indices, values, accumulate)
        _write(self._data, key, values._data, values, False)
        bump_version(self)
        return self
    return apply_inplace(self, index_put, indices, values, accumulate)


_index_put_inplace_entry = _compiled_functions.register(_python_index_put_, None, kind="index_put",
                                                        specifics=(True, False))


# -- masked_fill, masked_select, masked_scatter --------------------------------------------------

class MaskedFillBackward0(Node):
    __slots__ = ()
    saved_fields = {"mask": 0}

    def jvp(self, tangent):
        (mask,) = self.saved_tensors
        return tangent.expand(self.results[0]._data.shape).masked_fill(mask, 0)

    def backward(self, grad):
        (mask,) = self.saved_tensors
        return (sum_to(grad.masked_fill(mask, 0), self.in_shape),)


class MaskedFillBackward1(Node):
    __slots__ = ()
    saved_fields = {"mask": 0}
    jvp = jvp_by_transposition

    def backward(self, grad):
        (mask,) = self.saved_tensors
        g_self = g_value = None
        if self.next_functions[0][0] is not None:
            g_self = sum_to(grad.masked_fill(mask, 0), self.in_shape)
        if self.next_functions[1][0] is not None:
            g_value = grad.masked_fill(~mask, 0).sum()
            if g_value._data.dtype != self.value_dtype:
                g_value = g_value.to(_BY_NP[self.value_dtype])
        return g_self, g_value


def _check_bool_mask(op, mask):
    dt = mask._data.dtype
    if dt.kind != "b":
        if op == "masked_select":
            raise RuntimeError("masked_select: expected BoolTensor for mask")
        name = _CPP_TYPE_NAMES.get(dt.name, dt.name) if op == "masked_fill" else _type_word(dt)
        raise RuntimeError(f"{op}_ only supports boolean masks, but got mask with dtype {name}")


def masked_fill(input, mask, value):
    """Returns a copy of ``input`` with ``value`` (a number or a 0-d tensor) where the boolean
    ``mask`` (broadcast with ``input``) is True."""
    return _masked_fill_entry[0](input, mask, value)


def _python_masked_fill(input, mask, value):
    """``masked_fill`` in every case its compiled function (``_compiled_functions``) leaves to Python."""
    data, mdata = input._data, mask._data
    fill = _masked_fill_value(input, mask, value)
    value_tensor = value if isinstance(value, Tensor) else None
    if mdata.shape != data.shape:
        _broadcast_pair(mdata.shape, data.shape)
    out = make(_select(namespace_of(data), mdata, fill, data, data.dtype))
    if value_tensor is None:
        node = record(MaskedFillBackward0, (input,), out)
    else:
        node = record(MaskedFillBackward1, (input, value_tensor), out)
        if node is not None:
            node.value_dtype = value_tensor._data.dtype
    if node is not None:
        node.save(mask)
        node.in_shape = data.shape
    return out


_masked_fill_entry = _compiled_functions.register(_python_masked_fill, MaskedFillBackward0, kind="masked_fill")


def _masked_fill_value(input, mask, value):
    """masked_fill's checks; ``value`` as a 0-d array of ``input``'s dtype."""
    _tensor_arg(mask, "masked_fill", "mask", 2)
    _check_bool_mask("masked_fill", mask)
    dtype = input._data.dtype
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value._data.ndim} dimension(s).")
        check_value_fits(value, dtype)
        return value._data.astype(dtype)
    _scalar_value(value, "masked_fill", "value", 3)
    check_value_fits(value, dtype)
    return namespace_of(input._data).asarray(value).astype(dtype)


_FLOAT_RANGES = {np.dtype(np.float32): float(np.finfo(np.float32).max), np.dtype(np.float64): math.inf}


def _float_fills(value, np_dtype):
    """Whether ``value`` is a Python float (or int) that a float32 or float64 tensor takes as it
    is (NumPy rounds it as ``_masked_fill_value`` does), with none of its checks to fail."""
    highest = _FLOAT_RANGES.get(np_dtype)
    if highest is None:
        return False
    if value.__class__ is float:   # (a finite one beyond float32's range: the checks raise)
        return not math.isfinite(value) or abs(value) <= highest
    return value.__class__ is int and abs(value) < 1 << 24


def masked_fill_(self, mask, value):
    """In-place ``masked_fill``: fills ``self`` with ``value`` where ``mask`` is True."""
    _tensor_arg(mask, "masked_fill_", "mask", 1)
    data, mdata = self._data, mask._data
    if mdata.shape != data.shape:
        _broadcast_pair(data.shape, mdata.shape)
    elif (type(data) is np.ndarray and type(mdata) is np.ndarray and data.flags.c_contiguous
          and inplace_untracked(self) and not (isinstance(value, Tensor) and value._requires_grad
                                               and grad_state.grad_enabled)):
        check_inplace(self)
        if mdata.dtype == np.bool_ and _float_fills(value, data.dtype):
            np.copyto(data, value, where=mdata)
        else:   # (written at the mask's true positions, found flat)
            data.reshape(-1)[np.flatnonzero(mdata)] = _masked_fill_value(self, mask, value)
        bump_version(self)
        return self
    return apply_inplace(self, masked_fill, mask, value)


class MaskedSelectBackward0(Node):
    __slots__ = ()
    saved_fields = {"mask": 0, "self": not_kept("self")}
    jvp = jvp_by_transposition

    def backward(self, grad):
        (mask,) = self.saved_tensors
        zeros = make(namespace_of(grad._data).zeros(self.out_shape, dtype=grad._data.dtype))
        if mask._data.shape != self.out_shape:
            mask = mask.expand(self.out_shape)
        return (sum_to(zeros.masked_scatter(mask, grad), self.in_shape),)


def _broadcast_masked(input, mask):
    """``input``'s and ``mask``'s arrays broadcast to their common shape."""
    data, mdata = input._data, mask._data
    if data.shape == mdata.shape:
        return data, mdata
    shape = _broadcast_pair(mdata.shape, data.shape)
    xp = namespace_of(data)
    return xp.broadcast_to(data, shape), xp.broadcast_to(mdata, shape)


def masked_select(input, mask, *, out=None):
    """Returns a new 1-d tensor of the elements of ``input`` where the boolean ``mask``
    (broadcast with ``input``) is True."""
    result = _masked_select(input, mask)
    return result if out is None else write_out_exact(result, out, "masked_select", _SAME_SCALAR_TYPE)


def _masked_select(input, mask):
    _tensor_arg(mask, "masked_select", "mask", 2)
    _check_bool_mask("masked_select", mask)
    data, mdata = _broadcast_masked(input, mask)
    out = make(masked_values(data, mdata))
    node = record(MaskedSelectBackward0, (input,), out)
    if node is not None:
        node.save(mask)
        node.in_shape, node.out_shape = input._data.shape, data.shape
    return out


class MaskedScatterBackward0(Node):
    __slots__ = ()
    saved_fields = {"mask": 0, "source_sym_sizes": "source_shape"}
    jvp = jvp_by_transposition

    def backward(self, grad):
        (mask,) = self.saved_tensors
        g_self = g_source = None
        if self.next_functions[0][0] is not None:
            g_self = sum_to(grad.masked_fill(mask, 0), self.in_shape)
        if self.next_functions[1][0] is not None:
            g_source = _masked_scatter_source_grad(grad, mask, self.source_shape)
        return g_self, g_source


def _masked_scatter_source_grad(grad, mask, source_shape):
    """The gradient at the masked positions, in order, then zeros for the unused rest of
    ``source``."""
    selected = grad.masked_select(mask)
    numel = 1
    for n in source_shape:
        numel *= n
    missing = numel - selected._data.shape[0]
    if missing > 0:
        xp = namespace_of(grad._data)
        selected = cat([selected, make(xp.zeros(missing, dtype=grad._data.dtype))])
    return selected.reshape(source_shape)


def masked_scatter(input, mask, source):
    """Returns a copy of ``input`` with the elements of ``source``, in order, written where the
    boolean ``mask`` (broadcast with ``input``) is True."""
    return _masked_scatter_entry[0](input, mask, source)


def _python_masked_scatter(input, mask, source):
    """``masked_scatter`` in every case its compiled function (``_compiled_scatters``) leaves to Python."""
    data, mdata, values = _masked_scatter_checked(input, mask, source)
    out = data.copy()
    out[mdata] = values
    out = make(out)
    node = record(MaskedScatterBackward0, (input, source), out)
    if node is not None:
        node.save(mask)
        node.in_shape, node.source_shape = input._data.shape, source._data.shape
    return out


_masked_scatter_entry = _compiled_functions.register(_python_masked_scatter, None, kind="masked_scatter")


def _masked_scatter_checked(input, mask, source):
    """masked_scatter's checks (torch's errors) and arrays: ``input``'s and ``mask``'s broadcast, and the
    first of ``source``'s elements, one for each True of the mask."""
    _tensor_arg(mask, "masked_scatter", "mask", 2)
    _tensor_arg(source, "masked_scatter", "source", 3)
    _check_bool_mask("masked_scatter", mask)
    if source._data.dtype != input._data.dtype:
        raise RuntimeError("masked_scatter: expected self and source to have same dtypes but got"
                           f"{_type_word(input._data.dtype)} and {_type_word(source._data.dtype)}")
    data, mdata = _broadcast_masked(input, mask)
    count = int(namespace_of(data).count_nonzero(mdata))
    src = source._data
    if src.size < count:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    return data, mdata, src.reshape(-1)[:count]


def masked_scatter_(self, mask, source):
    """In-place ``masked_scatter``: writes the elements of ``source`` into ``self`` where
    ``mask`` is True."""
    _tensor_arg(mask, "masked_scatter_", "mask", 1)
    if mask._data.shape != self._data.shape:
        mask = mask.expand(self._data.shape)
    return apply_inplace(self, masked_scatter, mask, source)   # (where nothing records: in C, the result copied in)


# -- take, nonzero, argwhere -------------------------------------------------------------------

class TakeBackward0(Node):
    __slots__ = ()
    saved_fields = {"index": 0, "self": not_kept("self")}
    jvp = jvp_by_transposition

    def backward(self, grad):
        (index,) = self.saved_tensors
        numel = 1
        for n in self.in_shape:
            numel *= n
        zeros = make(namespace_of(grad._data).zeros(numel, dtype=grad._data.dtype))
        flat = index_put(zeros, (index.reshape(-1),), grad.reshape(-1), accumulate=True)
        return (flat.reshape(self.in_shape),)

    def backward_arrays(self, grad):
        """``backward`` on the arrays: the gradient added into zeros at the flat positions
        (repeated ones accumulating, in order) by ``add_rows_at``, index_put's own loop."""
        gd = grad._data
        index = self.saved_tensors[0]._data
        if type(gd) is not np.ndarray or type(index) is not np.ndarray or grad.__class__ is not Tensor:
            return None
        numel = math.prod(self.in_shape)
        out = np.zeros(numel, gd.dtype)
        flat = index.reshape(-1)
        if flat.size and numel:
            if flat.min() < 0:
                flat = np.where(flat < 0, flat + numel, flat)
            add_rows_at(out.reshape(numel, 1), flat, gd.reshape(flat.size, 1))
        return (make(out.reshape(self.in_shape)),)


def take(input, index, *, out=None):
    """Returns a new tensor of the elements of ``input``, seen as a 1-d tensor, at ``index``
    (negative indices count from the end); the result has ``index``'s shape."""
    result = _take(input, index)
    return result if out is None else write_out_exact(result, out, "take", _TAKE_DTYPE)


_TAKE_DTYPE = "take(): self and out expected to have the same dtype, but got self.dtype = {want} and out.dtype = {got}"


def _take(input, index):
    return _take_entry[0](input, index)


def _python_take(input, index):
    """``take`` in every case its compiled function (``_compiled_functions``) leaves to Python."""
    _tensor_arg(index, "take", "index", 2)
    data, idx = input._data, index._data
    if idx.dtype != _LONG:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {_type_word(idx.dtype)}")
    n = data.size
    if not n and idx.size:
        raise IndexError("take(): tried to take from an empty tensor")
    _check_bounds(idx, -n, n, lambda i: IndexError(
        f"out of range: tried to access index {i} on a tensor of {n} elements."))
    out = make(namespace_of(data).take(data, idx) if n else data.reshape(idx.shape))
    node = record(TakeBackward0, (input,), out)
    if node is not None:
        node.save(index)
        node.in_shape = data.shape
    return out


_take_entry = _compiled_functions.register(_python_take, TakeBackward0, kind="take")


def nonzero(input, *, as_tuple=False, out=None):
    """The indices of the nonzero elements of ``input``: a 2-d int64 tensor with one row per
    element, or with ``as_tuple=True`` a tuple of 1-d tensors, one per dimension."""
    result = _nonzero(input, as_tuple=as_tuple)
    if out is None:
        return result
    if as_tuple:
        raise RuntimeError("nonzero does not support the out kwarg when as_tuple is True")
    return write_out_exact(result, out, "nonzero", "nonzero: Expected out tensor to have scalar type Long but got "
                                                   "scalar type{got}")


def _nonzero(input, *, as_tuple=False):
    data = input._data
    xp = namespace_of(data)
    if as_tuple:
        return tuple(make(i.astype(_LONG, copy=False)) for i in nonzero_positions(_nonempty(data)))
    if data.ndim >= 2 and data.size >= FLAT_INDEX_MIN_ELEMENTS:
        positions = nonzero_positions(data)
        return make(xp.stack(positions, axis=1).astype(_LONG, copy=False))
    if data.__class__ is np.ndarray and data.ndim:   # (argwhere's steps, without its Python wrappers)
        return make(np.array(data.nonzero()).T.astype(_LONG, copy=False))
    return make(xp.argwhere(data).astype(_LONG, copy=False))


def argwhere(input):
    """The indices of the nonzero elements of ``input``, one row per element (as
    ``nonzero(input)``)."""
    return _nonzero(input)


# -- in-place forms and methods -----------------------------------------------------------------

def _scatter_into_self(op, self, dim, index, src):
    """``self.scatter_(dim, index, src)`` (``src`` a tensor or a number), or ``scatter_add_``'s (``op``
    "scatter_add"), written into ``self``'s own array where nothing records and the index is of the loops' size
    (the out-of-place op's copy, and the copy back, left out): ``self``, or None where ``apply_inplace`` runs the
    out-of-place op."""
    data = self._data
    if (forward_mode.active or data.__class__ is not np.ndarray or not data.flags.c_contiguous
            or index.__class__ is not Tensor or index._data.size < openmp_kernels.ELEMENTWISE_MIN_ELEMENTS
            or (grad_state.grad_enabled and (self._requires_grad or getattr(src, "_requires_grad", False)))):
        return None
    if src.__class__ is Tensor:
        if src._data.__class__ is not np.ndarray or np.may_share_memory(src._data, data):
            return None
    elif op == "scatter" and src.__class__ in (int, float):
        check_value_fits(src, data.dtype)
    else:
        return None
    check_inplace(self)
    _scatter_data(op, self, dim, index, src, None if op == "scatter" else "add", into=data)
    bump_version(self)
    return self


def scatter_(self, dim, index, src=None, value=None, *, reduce=None):
    """In-place ``scatter``."""
    if reduce is None:   # (no keyword: apply_inplace's compiled case)
        done = _scatter_into_self("scatter", self, dim, index, value if src is None else src)
        return done if done is not None else apply_inplace(self, scatter, dim, index, src, value)
    return apply_inplace(self, scatter, dim, index, src, value, reduce=reduce)


def scatter_add_(self, dim, index, src):
    """In-place ``scatter_add``."""
    done = _scatter_into_self("scatter_add", self, dim, index, src) if isinstance(src, Tensor) else None
    return done if done is not None else apply_inplace(self, scatter_add, dim, index, src)


def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    """In-place ``scatter_reduce``."""
    if include_self is True:   # (no keyword: apply_inplace's compiled case)
        return apply_inplace(self, scatter_reduce, dim, index, src, reduce)
    return apply_inplace(self, scatter_reduce, dim, index, src, reduce, include_self=include_self)


def index_add_(self, dim, index, source, *, alpha=1):
    """In-place ``index_add``. Where nothing is recorded, large row-major float32 slices are
    added on the loop straight into ``self``'s memory (no copy out and back)."""
    if (alpha == 1 and isinstance(index, Tensor) and isinstance(source, Tensor)
            and source._data.size >= openmp_kernels.ELEMENTWISE_MIN_ELEMENTS and inplace_untracked(self)
            and not (grad_state.grad_enabled and source._requires_grad)):
        data, idx = self._data, index._data
        d = wrap_dim(dim, data.ndim or 1)
        _check_index_add(self, d, idx, source)
        flat = idx.reshape(-1)
        if openmp_kernels.index_add_applies(data, flat, source._data, d):
            check_inplace(self)
            if _slices_added(data, flat, source._data, d) is not None:
                bump_version(self)
                return self
    if alpha.__class__ is int and alpha == 1:   # (no keyword: apply_inplace's compiled case)
        return apply_inplace(self, index_add, dim, index, source)
    return apply_inplace(self, index_add, dim, index, source, alpha=alpha)


def index_copy_(self, dim, index, source):
    """In-place ``index_copy``. Where nothing records, a large row-major NumPy array takes ``source``'s slices
    itself (no copy of it, nor a copy back), unless ``source`` shares its memory."""
    data = self._data
    if (not forward_mode.active and data.__class__ is np.ndarray and data.flags.c_contiguous
            and data.size >= openmp_kernels.ELEMENTWISE_MIN_ELEMENTS   # (smaller ones: the compiled path)
            and source.__class__ is Tensor and source._data.__class__ is np.ndarray
            and not (grad_state.grad_enabled and (self._requires_grad or source._requires_grad))
            and not np.may_share_memory(source._data, data)):
        check_inplace(self)
        _index_copied(self, dim, index, source, into=data)
        bump_version(self)
        return self
    return apply_inplace(self, index_copy, dim, index, source)


def index_fill_(self, dim, index, value):
    """In-place ``index_fill``. Where nothing records, a large row-major NumPy array takes ``value`` itself (no
    copy of it, nor a copy back)."""
    data = self._data
    if (not forward_mode.active and data.__class__ is np.ndarray and data.flags.c_contiguous
            and data.size >= openmp_kernels.ELEMENTWISE_MIN_ELEMENTS   # (smaller ones: the compiled path)
            and not (grad_state.grad_enabled and (self._requires_grad or getattr(value, "_requires_grad", False)))):
        check_inplace(self)
        _index_filled(self, dim, index, value, into=data)
        bump_version(self)
        return self
    return apply_inplace(self, index_fill, dim, index, value)


for _fn in (index_fill, index_put, masked_fill, masked_scatter, argwhere, scatter_, scatter_add_,
            scatter_reduce_, index_add_, index_copy_, index_fill_, index_put_, masked_fill_, masked_scatter_):
    method()(_fn)
# the functions below take torch's out=; their Tensor methods, as torch's, take none
for _fn in (_index_select, _gather, _take_along_dim, _scatter, _scatter_add, _scatter_reduce, _index_add,
            _masked_select, _take, _nonzero):
    method(_fn.__name__[1:])(_fn)
method("index_copy")(autocast_policy("promote")(_index_copy))
del _fn

# -- index_reduce, put, unravel_index, fill_diagonal_ ----------------------------------------------

_INDEX_REDUCTIONS = ("prod", "mean", "amax", "amin")
_index_reduce_warned = []


def index_reduce(input, dim, index, source, reduce, *, include_self=True, out=None):
    """Reduces (``"prod"``, ``"mean"``, ``"amax"`` or ``"amin"``) the slices of ``source``
    into a copy of ``input`` at the positions along ``dim`` given by ``index``; with
    ``include_self=False`` the values of ``input`` at those positions are left out of the
    reduction."""
    if out is None and _index_reduce_warned:   # (the compiled function's case: torch's warning given)
        return _index_reduce_entry[0](input, dim, index, source, reduce, include_self)
    result = _index_reduce(input, dim, index, source, reduce, include_self=include_self)
    return result if out is None else write_out(result, out, True, "index_reduce")


def _python_index_reduce(input, dim, index, source, reduce, include_self):
    """``index_reduce`` in every case its compiled function (``_compiled_scatters``) leaves to Python."""
    return _index_reduce(input, dim, index, source, reduce, include_self=include_self)


def _index_reduce(input, dim, index, source, reduce, *, include_self=True):
    _tensor_arg(index, "index_reduce", "index", 3)
    _tensor_arg(source, "index_reduce", "source", 4)
    if not _index_reduce_warned:
        _index_reduce_warned.append(True)
        warnings.warn("index_reduce() is in beta and the API may change at any time.", UserWarning,
                      stacklevel=2)
    if reduce not in _INDEX_REDUCTIONS:
        raise RuntimeError("index_reduce(): Expected reduce to be one of prod, mean, amax or amin "
                           f"but got {reduce}.")
    d = wrap_dim(dim, max(input._data.ndim, 1))
    _check_index_add(input, d, index._data, source)
    if forward_mode.active:   # (the composite's tangents)
        return _index_reduce_by_scatter(input, d, index, source, reduce, include_self)
    data = _index_reduced_by_slices(input._data, d, index._data, source._data, reduce, include_self)
    if data is None:
        from ..autograd.grad_mode import no_grad
        with no_grad():
            data = _index_reduce_by_scatter(input, d, index, source, reduce, include_self)._data
    result = make(data)
    node = record(IndexReduceBackward0, (input, source), result)
    if node is not None:
        node.save(input, index, source, result)
        node.dim, node.reduce, node.include_self = d, reduce, include_self
    return result


def _index_reduce_by_scatter(input, d, index, source, reduce, include_self):
    """index_reduce as scatter_reduce with the index spread over the source's shape."""
    if not input._data.ndim:
        input_nd, source_nd = input.reshape(1), source.reshape(1)
    else:
        input_nd, source_nd = input, source
    shape = [1] * source_nd.dim()
    shape[d] = -1
    spread = index.to(_BY_NP[_LONG]).reshape(shape).expand(source_nd.shape)
    result = scatter_reduce(input_nd, d, spread, source_nd, reduce, include_self=include_self)
    return result.reshape(input.shape) if not input._data.ndim else result


class IndexReduceBackward0(Node):
    """torch's gradient of index_reduce (FunctionsManual.cpp, index_reduce_backward): each
    reduction's, with index_select and index_add along ``dim`` where scatter_reduce's has gather
    and scatter_add."""
    __slots__ = ()
    saved_fields = {"self": 0, "index": 1, "source": 2, "result": 3, "dim": "dim", "reduce": "reduce",
                    "include_self": "include_self"}
    jvp = jvp_by_transposition

    def backward(self, grad):
        return self._gradients(grad, *self.saved_tensors)

    def backward_arrays(self, grad):
        """``backward``'s gradients where no graph of them is built, of the saved tensors detached (so that
        the compiled functions take the formula's ops)."""
        input, index, source, result = self.saved_tensors
        return self._gradients(grad, input.detach(), index, source.detach(), result)

    def _gradients(self, grad, input, index, source, result):
        g_self, g_source = _INDEX_REDUCE_GRADS[self.reduce](grad, input, self.dim, index, source, result,
                                                           self.include_self)
        if not self.include_self:
            g_self = g_self.index_fill(self.dim, index, 0)
        return g_self, g_source


def _indexed(dim, index):
    """(spread, pick) of the slices along ``dim`` that ``index`` names: index_add and index_select."""
    return lambda t, src: t.index_add(dim, index, src), lambda t: t.index_select(dim, index)


def _index_mean_grad(grad, input, dim, index, source, result, include_self):
    return _mean_grad(grad, source._data.shape, *_indexed(dim, index), include_self)


def _index_extreme_grad(grad, input, dim, index, source, result, include_self):
    return _extreme_grad(grad, input, source, result, *_indexed(dim, index))


def _index_prod_grad(grad, input, dim, index, source, result, include_self):
    return _prod_grad(grad, input, source, result, *_indexed(dim, index),
                      lambda t, values: index_reduce(t, dim, index, values, "prod", include_self=include_self))


_INDEX_REDUCE_GRADS = {"mean": _index_mean_grad, "amax": _index_extreme_grad, "amin": _index_extreme_grad,
                       "prod": _index_prod_grad}


_INDEX_REDUCE_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))

# index_reduce's reductions: NumPy's ufunc and the value the written slices start from without
# include_self
_INDEX_REDUCE_UFUNCS = {"prod": ("multiply", 1), "mean": ("add", 0), "amax": ("maximum", -np.inf),
                        "amin": ("minimum", np.inf)}


def _index_reduced_by_slices(data, d, idx, src, reduce, include_self):
    """index_reduce of float32 and float64 NumPy arrays of one dim or more (checked): a row-major copy
    of ``data`` with the slices of ``src`` along ``d`` reduced in at ``idx`` as ``ufunc.at`` does (large
    float32 ones by ``_slices_reduced``'s loop), means divided by their counts as ``scatter_reduce``'s;
    None for other arrays (``scatter_reduce``'s path then)."""
    if (type(data) is not np.ndarray or data.dtype not in _INDEX_REDUCE_DTYPES or type(src) is not np.ndarray
            or src.dtype != data.dtype or not data.ndim):
        return None
    ufunc, identity = _INDEX_REDUCE_UFUNCS[reduce]
    out = data.copy()
    if not out.size:
        return out
    flat = idx.reshape(-1).astype(np.int64, copy=False)
    src = np.ascontiguousarray(src)
    if not include_self:
        out[(slice(None),) * d + (flat,)] = identity
    if openmp_kernels.index_add_applies(out, flat, src, d):
        _slices_reduced(out, flat, src, d, ufunc)
    else:
        _slices_reduced_at(out, flat, src.reshape(out.shape[:d] + (flat.size,) + out.shape[d + 1:]), d, ufunc)
    if reduce == "mean":
        counts = np.bincount(flat, minlength=out.shape[d]).astype(out.dtype)
        if include_self:
            counts += 1
        else:
            counts[counts == 0] = 1
        np.true_divide(out, counts.reshape((-1,) + (1,) * (out.ndim - d - 1)), out=out)
    return out


_index_reduce_entry = _compiled_functions.register(_python_index_reduce, None, kind="index_reduce")


def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    if include_self is True:   # (no keyword: apply_inplace's compiled case)
        return apply_inplace(self, index_reduce, dim, index, source, reduce)
    return apply_inplace(self, index_reduce, dim, index, source, reduce, include_self=include_self)


def put(input, index, source, accumulate=False):
    """Copies the elements of ``source`` into a copy of ``input`` at the positions ``index``
    of ``input`` seen as a 1-d tensor (adding them with ``accumulate=True``)."""
    return _put_entry[0](input, index, source, accumulate)


class PutBackward0(Node):
    __slots__ = ()
    saved_fields = {"index": 0, "accumulate": "accumulate", "source": not_kept("source")}
    jvp = jvp_by_transposition

    def backward(self, grad):
        (index,) = self.saved_tensors
        need_input, need_source = (fn is not None for fn, _ in self.next_functions)
        grad_input = grad_source = None
        if need_input:   # (the positions written take no gradient; added ones pass it through)
            zeros = make(namespace_of(grad._data).zeros(self.source_shape, dtype=grad._data.dtype))
            grad_input = grad if self.accumulate else put(grad, index, zeros)
        if need_source:
            grad_source = take(grad, index).reshape(self.source_shape)
        return grad_input, grad_source


def _python_put(input, index, source, accumulate=False):
    """``put`` in every case its compiled function (``_compiled_scatters``) leaves to Python."""
    _check_put(input, index, source, bounds=False)
    if not forward_mode.active:
        out = input._data.copy()   # (row-major: reshaped to 1-d as a view)
        _put_checked(out, index._data, source._data, accumulate)
        result = make(out)
        node = record(PutBackward0, (input, source), result)
        if node is not None:
            node.save(index)
            node.accumulate, node.source_shape = accumulate, source._data.shape
        return result
    _check_put_bounds(input._data, index._data)   # (forward AD: the composite's tangents)
    flat = input.reshape(-1)
    return index_put(flat, (index.reshape(-1),), source.reshape(-1), accumulate).reshape(input.shape)


def _put_checked(array, idx, values, accumulate):
    """``put`` into the row-major ``array`` itself, the index checked first (torch's error, nothing
    written): in one C loop where it applies, else by NumPy's assignment."""
    if not accumulate:
        bad = openmp_kernels.put_elements(array, idx, values)
        if bad is not None:
            if bad >= 0:
                raise _put_out_of_range(array.size)(int(idx.reshape(-1)[bad]))
            return
    _check_put_bounds(array, idx)
    _put_into(array, idx, values, accumulate)


def _put_into(array, idx, values, accumulate):
    """``put`` into the row-major ``array`` itself (the index checked)."""
    flat = array.reshape(-1)
    if accumulate:
        ufunc_at("add", flat, idx.reshape(-1), values.reshape(-1))
    else:
        flat[idx.reshape(-1)] = values.reshape(-1)


def _check_put(input, index, source, bounds=True):
    """put's checks of its arguments, and of the index's bounds unless ``bounds`` is False (the caller's
    ``_check_put_bounds`` or ``_put_checked`` checks them)."""
    _tensor_arg(index, "put", "index", 2)
    _tensor_arg(source, "put", "source", 3)
    idx, data = index._data, input._data
    if idx.dtype != _LONG:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {_type_word(idx.dtype)}")
    if source._data.dtype != data.dtype:
        raise RuntimeError("put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {_type_word(data.dtype)} and source.dtype = "
                           f"{_type_word(source._data.dtype)}")
    if source._data.size != idx.size:
        raise IndexError("put_(): Expected source and index to have the same number of elements, "
                         f"but got source.numel() = {source._data.size}, index.numel() = {idx.size}")
    if not data.size and idx.size:
        raise IndexError("put_(): Tried to put elements into an empty tensor")
    if bounds:
        _check_put_bounds(data, idx)


def _check_put_bounds(data, idx):
    _check_bounds(idx, -data.size, data.size, _put_out_of_range(data.size))


def _put_out_of_range(n):
    return lambda i: IndexError(f"out of range: tried to access index {i} on a tensor of {n} elements.")


def put_(self, index, source, accumulate=False):
    """In-place ``put``."""
    return _put_inplace_entry[0](self, index, source, accumulate)


def _python_put_(self, index, source, accumulate=False):
    """``put_`` in every case its compiled function (``_compiled_scatters``) leaves to Python."""
    if (inplace_untracked(self) and self._data.flags.c_contiguous and isinstance(source, Tensor)
            and not (grad_state.grad_enabled and source._requires_grad)):
        check_inplace(self)
        _check_put(self, index, source, bounds=False)
        _put_checked(self._data, index._data, source._data, accumulate)
        bump_version(self)
        return self
    return apply_inplace(self, put, index, source, accumulate)


_put_entry, _put_inplace_entry = (_compiled_functions.register(python_op, None, kind="index_put", specifics=specifics)
                                  for python_op, specifics in ((_python_put, (False, True)),
                                                               (_python_put_, (True, True))))


def unravel_index(indices, shape):
    """Converts a tensor of flat indices into a tuple of coordinate tensors that index into an
    arbitrary tensor of the specified shape."""
    if isinstance(shape, int):
        shape = (shape,)
    shape = tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    if not isinstance(indices, Tensor):
        indices = _tensor(indices)
    data = indices._data
    if data.dtype.kind not in "iu":
        raise TypeError(f"expected 'indices' to be integer dtype, but got {_BY_NP[data.dtype]}")
    xp = namespace_of(data)
    data = data.astype(_LONG)
    coordinates = []
    stride = 1
    for size in reversed(shape):
        coordinates.append(xp.floor_divide(data, stride) % size if size else xp.zeros_like(data))
        stride *= size
    return tuple(make(c) for c in reversed(coordinates))


def _diagonal_mask(xp, shape, wrap):
    mask = xp.zeros(shape, dtype=bool)
    if mask.size:
        xp.fill_diagonal(mask, True, wrap=wrap)
    return mask


def fill_diagonal_(self, fill_value, wrap=False):
    """Fills the main diagonal of a tensor that has at least 2 dimensions, all of the same
    length when more than 2; ``wrap=True`` continues the diagonal of a tall matrix after N
    columns."""
    data = self._data
    if data.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    if data.ndim > 2 and len(set(data.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    if not isinstance(fill_value, Tensor) and inplace_untracked(self):
        _scalar_value(fill_value, "masked_fill", "value", 3)
        check_value_fits(fill_value, data.dtype)
        check_inplace(self)
        xp = namespace_of(data)
        value = xp.asarray(fill_value).astype(data.dtype)
        if data.size and data.ndim == 2 and data.__class__ is np.ndarray and data.flags.c_contiguous:
            n = data.shape[1]   # (NumPy's fill_diagonal of a matrix, without its Python steps)
            data.reshape(-1)[:None if wrap else n * n:n + 1] = value
        elif data.size:
            xp.fill_diagonal(data, value, wrap=wrap)
        bump_version(self)
        return self
    if data.ndim == 2 and not (wrap and data.shape[0] > data.shape[1] + 1):
        # the diagonal is a view: filled in place, it gives ``self`` torch's CopySlices history
        # (a whole-matrix mask and select cost several passes more, backward too)
        if not isinstance(fill_value, Tensor):
            _scalar_value(fill_value, "masked_fill", "value", 3)
        check_value_fits(fill_value, data.dtype)
        check_inplace(self)
        self.diagonal().fill_(fill_value)
        return self
    mask = make(_diagonal_mask(namespace_of(data), data.shape, wrap))
    return apply_inplace(self, masked_fill, mask, fill_value)


__all__ = ["index_select", "gather", "take_along_dim", "scatter", "scatter_add", "scatter_reduce",
           "index_add", "index_copy", "index_fill", "index_put", "index_put_", "masked_fill",
           "masked_select", "masked_scatter", "take", "nonzero", "argwhere", "index_reduce", "put",
           "unravel_index"]

for _fn in (index_reduce_, put, put_, fill_diagonal_):
    method()(_fn)
del _fn


@method("index_reduce")
def _index_reduce_method(self, dim, index, source, reduce, *, include_self=True):   # (no out=, as torch's)
    if _index_reduce_warned:
        return _index_reduce_entry[0](self, dim, index, source, reduce, include_self)
    return _index_reduce(self, dim, index, source, reduce, include_self=include_self)
