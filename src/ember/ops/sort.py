"""Sorting, selection and scans: sort, argsort, msort, topk, kthvalue, median, nanmedian, mode,
quantile, nanquantile, unique, unique_consecutive, bincount, histc, searchsorted, bucketize,
cummax, cummin, logcumsumexp, diff and aminmax.

Sorts are stable (equal elements keep their order; NaN sorts as the largest value, as in
torch). Ops that select values along a dim send the gradient back to the selected positions
(torch's value_selecting_reduction_backward), scattering with ember ops so it differentiates
again.
"""
import math

import numpy as np

from .. import _dtype, return_types
from .._backend import openmp_kernels
from .._backend.scans import accumulate
from .._backend.choice import KernelChoice
from . import _compiled_functions
from ._common import (
    check_value_fits, forward_mode, grad_state, make, method, namespace_of, Node, not_implemented, record,
    Tensor, _type_word, widened, with_out, wrap_dim, write_out, write_out_exact,
)
from ..autograd.grad_mode import no_grad
from .index import _along_key, _gather_gradient_kernel
from .pointwise import large_binary
from .shape import cat
from .subscript import advanced_getitem, index_put_zeros
from .reduce import _amax_entry, _amin_entry, _quiet, _share_among_ties
from .ternary import _lerp_forward, lerp, where
from ..amp.policy import autocast_policy
from ..autograd._dual import jvp_by_transposition
from ..autograd.saved_fields import not_kept

__all__ = [
    "sort", "argsort", "msort", "topk", "kthvalue", "median", "nanmedian", "mode", "quantile",
    "nanquantile", "unique", "unique_consecutive", "bincount", "histc", "searchsorted",
    "bucketize", "cummax", "cummin", "logcumsumexp", "diff", "aminmax",
]

_INT64 = _dtype.int64.np


# ----------------------------------------------------------------------------------------
# Picking and scattering along a dim

def _take_along(x, index, dim):
    """``x.gather(dim, index)`` for an index array (differentiable in ``x``)."""
    if not x._data.ndim:
        return x
    return advanced_getitem(x, _along_key(index, dim))


class _ValueSelectingBackward(Node):
    """The gradient of values picked along ``dim`` at the saved indices: scattered (added)
    back to those positions, zero elsewhere."""
    __slots__ = ()
    jvp = jvp_by_transposition

    def backward(self, grad, *unused):
        (indices,) = self.saved_tensors
        shape, dim = self.in_shape, self.dim
        if not shape:
            return (grad.reshape(()),)
        index = indices._data
        if not self.keepdim:
            xp = namespace_of(index)
            index, grad = xp.expand_dims(index, dim), grad.unsqueeze(dim)
        return (index_put_zeros(shape, _along_key(index, dim), grad),)

    def backward_arrays(self, grad):
        """Kept dims, float32: gather's gradient loop (the same scatter-add)."""
        (indices,) = self.saved_tensors
        shape = self.in_shape
        if not (shape and self.keepdim and openmp_kernels.scatter_add_applies(
                grad._data, indices._data, self.dim, shape)):
            return None
        added = _gather_gradient_kernel(grad._data, indices._data, self.dim, shape)
        return None if added is None else (make(added),)


_SELECTING_FIELDS = {"dim": "dim", "indices": 0, "self_sym_sizes": "in_shape"}


def _node_named(name, saved_fields=None):
    return type(name, (_ValueSelectingBackward,), {"__slots__": (), "saved_fields": saved_fields or {}})


SortBackward0 = _node_named("SortBackward0", _SELECTING_FIELDS)
TopkBackward0 = _node_named("TopkBackward0", _SELECTING_FIELDS)
KthvalueBackward0 = _node_named("KthvalueBackward0", dict(_SELECTING_FIELDS, keepdim="keepdim"))
MedianBackward1 = _node_named("MedianBackward1", dict(_SELECTING_FIELDS, keepdim="keepdim"))
NanmedianBackward1 = _node_named("NanmedianBackward1", dict(_SELECTING_FIELDS, keepdim="keepdim"))
ModeBackward0 = _node_named("ModeBackward0", dict(_SELECTING_FIELDS, keepdim="keepdim"))
CummaxBackward0 = _node_named("CummaxBackward0", {"dim": "dim", "indices": 0, "self": not_kept("self")})
CumminBackward0 = _node_named("CumminBackward0", {"dim": "dim", "indices": 0, "self": not_kept("self")})


def _selected(node_cls, input, values, indices, dim, keepdim, named):
    """Wrap (values, indices) arrays as ``named`` and record the gradient to ``input``."""
    values, indices = make(values), make(indices)
    node = record(node_cls, (input,), values)
    if node is not None:
        node.save(indices)
        node.in_shape, node.dim, node.keepdim = input._data.shape, dim, keepdim
    return named(values, indices)


# ----------------------------------------------------------------------------------------
# sort, argsort, msort, topk

def _check_sortable(data):
    if data.dtype.kind == "c":
        raise RuntimeError(" Sort does not support complex dtypes on CPU")


def _refuse(kernel, data, kinds="bc", dispatched=True):
    """torch's NotImplementedError for the dtype kinds (bool, complex) ``kernel`` has no loop for.
    Called after the shape checks, which torch makes first; ``dispatched`` is False where torch
    returns before dispatching on the dtype (some ops, for empty or 0-d input)."""
    if dispatched and data.dtype.kind in kinds:
        raise not_implemented(kernel, data.dtype)


def _sort_arrays(data, dim, descending):
    """Stable sort of ``data`` along ``dim``: (values, int64 indices). Descending order keeps
    equal elements in their original order too (and puts NaN first)."""
    order = _sort_order(data, dim, descending)
    if not data.ndim:
        return data.copy(), order
    return data[_along_key(order, dim)], order   # (NumPy's take_along_axis: microseconds of Python)


def _sort_order(data, dim, descending):
    """The int64 indices of ``_sort_arrays``' stable sort."""
    if not data.ndim:
        return namespace_of(data).zeros((), dtype=_INT64)
    keys = widened(data)  # NumPy orders bfloat16 NaNs as it meets them, not last
    if descending:
        reverse = (slice(None),) * dim + (slice(None, None, -1),)   # (np.flip's key, built here)
        order = keys[reverse].argsort(axis=dim, kind="stable")[reverse]
        order = data.shape[dim] - 1 - order
    else:
        order = keys.argsort(axis=dim, kind="stable")
    return order.astype(_INT64, copy=False)


@with_out()
def sort(input, dim=-1, descending=False, stable=False):
    """Sorts the elements of ``input`` along ``dim`` in ascending order (or descending),
    returning ``(values, indices)`` with the original positions. The sort is always stable
    here: equal elements keep their order."""
    if isinstance(dim, bool):  # sort(input, stable, dim=..., descending=...) in torch's overload
        dim = -1
    return _sort_entry[0](input, dim, descending)


def _python_sort(input, dim, descending):
    """``sort`` in every case its compiled function (``_compiled_functions``) leaves to Python."""
    data = input._data
    _check_sortable(data)
    dim = wrap_dim(dim, data.ndim)
    values, indices = _sort_arrays(data, dim, descending)
    return _selected(SortBackward0, input, values, indices, dim, True, return_types.sort)


def argsort(input, dim=-1, descending=False, stable=None, *, out=None):
    """Returns the indices that sort ``input`` along ``dim`` (the indices of ``sort``).
    ``out=`` is taken with ``stable`` given, as torch's overloads take it."""
    data = input._data
    _check_sortable(data)
    result = make(_sort_order(data, wrap_dim(dim, data.ndim), descending))
    if out is None:
        return result
    if stable is None:
        raise TypeError("argsort(): out= is taken with stable= given (torch's argsort(input, *, stable, "
                        "dim=-1, descending=False, out=None))")
    if input._requires_grad and grad_state.grad_enabled:   # torch's argsort is sort's indices
        raise RuntimeError("functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad.")
    return write_out(result, out, True, "argsort")


def _argsort(input, dim=-1, descending=False, stable=False):
    data = input._data
    _check_sortable(data)
    return make(_sort_order(data, wrap_dim(dim, data.ndim), descending))


def msort(input, *, out=None):
    """Sorts the elements of ``input`` along its first dimension in ascending order."""
    result = sort.__wrapped__(input, 0).values
    return result if out is None else write_out(result, out, True, "msort")


def _msort(input):
    return sort.__wrapped__(input, 0).values


def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):
    """Returns the ``k`` largest (or smallest) elements of ``input`` along ``dim`` with their
    indices, in sorted order."""
    result = _topk(input, k, dim, largest, sorted)
    return result if out is None else write_out(result, out, True, "topk")


def _topk(input, k, dim=-1, largest=True, sorted=True):
    return _topk_entry[0](input, k, dim, largest, sorted)


def _python_topk(input, k, dim, largest, sorted):
    """``topk`` in every case its compiled function (``_compiled_functions``) leaves to Python."""
    data = input._data
    if data.dtype.kind in "bc":
        kind = "bool" if data.dtype.kind == "b" else "complex"
        raise RuntimeError(f"{'' if kind == 'bool' else ' '}topk does not support {kind} dtypes on CPU")
    dim = wrap_dim(dim, data.ndim)
    n = data.shape[dim] if data.ndim else 1
    k = int(k)
    if k < 0 or k > n:
        raise RuntimeError("selected index k out of range")
    picked = (_top_by_extremes(data, dim, k, largest)
              if data.size >= SELECT_MIN_ELEMENTS and 0 < k <= TOPK_MAX_PASSES else None)
    if picked is not None:
        values, indices = picked
    elif data.ndim and 0 < k * TOPK_PARTITION_RATIO <= n:
        values, indices = _top_arrays(data, dim, k, largest)
    else:
        values, indices = _sort_arrays(data, dim, largest)
        if data.ndim:
            key = (slice(None),) * dim + (slice(0, k),)
            values, indices = values[key], indices[key]
    return _selected(TopkBackward0, input, values, indices, dim, True, return_types.topk)


# From this many elements on, topk, kthvalue and the medians select instead of sorting (below,
# the sort takes fewer calls).
SELECT_MIN_ELEMENTS = 2048
# topk takes up to this many elements by one pass of argmax (argmin) each; more by a partition,
# sorting only them, when k is at most TOPK_PARTITION_RATIO-th of the row; else it sorts the row.
TOPK_MAX_PASSES = 8
TOPK_PARTITION_RATIO = 4
# The compiled sort and topk order rows of up to this many elements (by insertion, in C); longer
# ones go to NumPy's sort.
COMPILED_SORT_MAX_ROW = 64

_sort_entry = _compiled_functions.register(_python_sort, SortBackward0, kind="sort",
                                           specifics=(return_types.sort, COMPILED_SORT_MAX_ROW, 1))
_topk_entry = _compiled_functions.register(_python_topk, TopkBackward0, kind="topk",
                                           max_elements=SELECT_MIN_ELEMENTS - 1,
                                           specifics=(return_types.topk, COMPILED_SORT_MAX_ROW, TOPK_PARTITION_RATIO))


def _top_by_extremes(data, dim, k, largest):
    """The ``k`` largest (or smallest) elements along ``dim`` and their int64 indices, as
    ``_sort_arrays`` orders them, by ``k`` passes of argmax (argmin) over a copy in which each
    pick is overwritten by the dtype's lowest (highest) value. None where that is ambiguous: a
    picked value equal to the overwriting one (it may be a pick taken twice), or, for the
    smallest, a NaN (argmin takes NaN first; torch counts it as the largest)."""
    xp = namespace_of(data)
    work = xp.moveaxis(widened(data), dim, -1).copy()
    if work.dtype.kind == "f":
        fill = -xp.inf if largest else xp.inf
    else:
        limits = xp.iinfo(work.dtype)
        fill = limits.min if largest else limits.max
    pick = xp.argmax if largest else xp.argmin
    indices = xp.empty(work.shape[:-1] + (k,), dtype=_INT64)
    for j in range(k):
        chosen = pick(work, axis=-1, keepdims=True)
        indices[..., j:j + 1] = chosen
        xp.put_along_axis(work, chosen, fill, axis=-1)
    values = xp.take_along_axis(xp.moveaxis(data, dim, -1), indices, axis=-1)
    wide = widened(values)
    if (wide == fill).any() or (not largest and work.dtype.kind == "f" and xp.isnan(wide).any()):
        return None
    return xp.moveaxis(values, -1, dim), xp.moveaxis(indices, -1, dim)


def _top_arrays(data, dim, k, largest):
    """The ``k`` largest (or smallest) elements along ``dim`` and their int64 indices, sorted
    as ``_sort_arrays`` sorts: a partition picks them (NaN counting as the largest), they are
    put back in index order, then sorted stably. Where equal values straddle the k-th place,
    which of them are kept is the partition's choice (torch does not define it either)."""
    xp = namespace_of(data)
    n = data.shape[dim]
    part = xp.argpartition(widened(data), n - k if largest else k - 1, axis=dim)
    key = (slice(None),) * dim + (slice(n - k, None) if largest else slice(0, k),)
    chosen = xp.sort(part[key], axis=dim)
    values, order = _sort_arrays(data[_along_key(chosen, dim)], dim, largest)
    return values, chosen[_along_key(order, dim)].astype(_INT64, copy=False)


# ----------------------------------------------------------------------------------------
# kthvalue, median, nanmedian, mode

def _pick_sorted(data, dim, position, keepdim):
    """From ``data`` sorted ascending along ``dim``, the (values, indices) at ``position``
    (an int or an array broadcasting against the kept shape)."""
    xp = namespace_of(data)
    values, order = _sort_arrays(data, dim, False)
    if not data.ndim:
        return values, order
    kept = data.shape[:dim] + (1,) + data.shape[dim + 1:]
    pos = xp.broadcast_to(xp.asarray(position, dtype=_INT64), kept)
    picked_values = xp.take_along_axis(values, pos, axis=dim)
    picked_indices = xp.take_along_axis(order, pos, axis=dim)
    if not keepdim:
        picked_values, picked_indices = picked_values.squeeze(dim), picked_indices.squeeze(dim)
    return picked_values, picked_indices


def _pick_selected(data, dim, position, keepdim):
    """What ``_pick_sorted`` picks, without sorting: a partition puts the values at ``position``
    in place, and of the elements equal to a picked value, the index is the one a stable sort
    would put there (counted among the equal elements in index order; NaNs last)."""
    xp = namespace_of(data)
    if data.size < SELECT_MIN_ELEMENTS or not hasattr(xp, "partition"):
        return _pick_sorted(data, dim, position, keepdim)
    keys = xp.moveaxis(widened(data), dim, -1)
    kept = data.shape[:dim] + (1,) + data.shape[dim + 1:]
    pos = xp.moveaxis(xp.broadcast_to(xp.asarray(position, dtype=_INT64), kept), dim, -1)
    value = xp.take_along_axis(xp.partition(keys, xp.unique(pos), axis=-1), pos, axis=-1)
    equal, less = keys == value, keys < value
    if keys.dtype.kind == "f":
        nan = xp.isnan(keys)
        picked_nan = xp.isnan(value)
        equal = xp.where(picked_nan, nan, equal)
        less = xp.where(picked_nan, ~nan, less)
    occurrence = pos - less.sum(axis=-1, keepdims=True)
    rank = xp.cumsum(equal, axis=-1) - 1
    index = xp.argmax(equal & (rank == occurrence), axis=-1, keepdims=True).astype(_INT64)
    values = xp.take_along_axis(xp.moveaxis(data, dim, -1), index, axis=-1)
    values, index = xp.moveaxis(values, -1, dim), xp.moveaxis(index, -1, dim)
    if not keepdim:
        values, index = values.squeeze(dim), index.squeeze(dim)
    return values, index


# Arrays of up to this many elements are sorted row by row in Python (``sorted`` of each row's
# list): fewer calls than NumPy's sort, gathers and run-finding steps for a handful of elements.
SMALL_ROWS_MAX_ELEMENTS = 64


def _small_rows(data, dim):
    """``data`` (NumPy, one dim or more) of at most ``SMALL_ROWS_MAX_ELEMENTS`` elements as
    (rows, lists): its rows along ``dim`` as a 2-D array and as lists of Python numbers; None
    for other arrays."""
    if type(data) is not np.ndarray or not data.ndim or data.size > SMALL_ROWS_MAX_ELEMENTS:
        return None
    last = data.ndim - 1
    moved = data if dim == last else data.transpose(tuple(d for d in range(data.ndim) if d != dim) + (dim,))
    rows = moved.reshape(-1, data.shape[dim])
    return rows, widened(rows).tolist()


def _stable_order(row):
    """The positions of the numbers in ``row`` in stably sorted order, NaNs last."""
    if any(map(math.isnan, row)):
        return sorted(range(len(row)), key=lambda i: (row[i] != row[i], row[i]))
    return sorted(range(len(row)), key=row.__getitem__)


def _picked_rows(data, dim, keepdim, rows, first, last):
    """(values, indices) of ``data`` along ``dim`` from its ``rows`` (``_small_rows``): each
    row's value at position ``first[r]``, its index ``last[r]``."""
    shape = data.shape[:dim] + (1,) * keepdim + data.shape[dim + 1:]
    values = rows[np.arange(len(first)), np.array(first, dtype=np.intp)].reshape(shape)
    return values, np.array(last, dtype=_INT64).reshape(shape)


def _pick_small(data, dim, keepdim, small, position):
    """``_pick_sorted`` on ``small`` (``_small_rows(data, dim)``) in Python: each row's stably
    sorted position ``position(row)``."""
    rows, lists = small
    picked = [_stable_order(row)[position(row)] for row in lists]
    return _picked_rows(data, dim, keepdim, rows, picked, picked)


def _check_nonempty(op, data, dim):
    if data.ndim and data.shape[dim] == 0:
        raise IndexError(f"{op}(): Expected reduction dim {dim} to have non-zero size.")


def kthvalue(input, k, dim=-1, keepdim=False, *, out=None):
    """Returns the ``k``-th smallest element (counting from 1) of each row of ``input`` along
    ``dim``, with its index."""
    result = _kthvalue(input, k, dim, keepdim)
    return result if out is None else write_out_exact(result, out, "kthvalue", (
        "output values must be of same type as input", "output indices must be of scalar type Long"))


def _kthvalue(input, k, dim=-1, keepdim=False):
    return _kthvalue_entry[0](input, k, dim, keepdim)


def _python_kthvalue(input, k, dim, keepdim):
    """``kthvalue`` in every case its compiled function (``_compiled_functions``) leaves to Python."""
    data = input._data
    dim = wrap_dim(dim, data.ndim)
    _check_nonempty("kthvalue", data, dim)
    n = data.shape[dim] if data.ndim else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim}")
    _refuse("kthvalue_cpu", data, dispatched=data.ndim > 0)
    small = _small_rows(data, dim)
    if small is not None:
        values, indices = _pick_small(data, dim, keepdim, small, lambda row: k - 1)
    else:
        values, indices = _pick_selected(data, dim, k - 1, keepdim)
    return _selected(KthvalueBackward0, input, values, indices, dim, keepdim, return_types.kthvalue)


def _nan_count(data, dim):
    xp = namespace_of(data)
    if data.dtype.kind not in "fc" and data.dtype != _dtype.bfloat16.np:
        return xp.zeros(data.shape[:dim] + (1,) + data.shape[dim + 1:], dtype=_INT64)
    return xp.sum(xp.isnan(data), axis=dim, keepdims=True)


def _median_position(data, dim, ignore_nan):
    """Where the lower median sits in the stably sorted rows: for median, at the first NaN
    when a row has one; for nanmedian, among the values that are not NaN."""
    xp = namespace_of(data)
    n = data.shape[dim]
    nans = _nan_count(data, dim)
    if ignore_nan:
        return xp.maximum((n - nans - 1) // 2, 0)
    return xp.where(nans > 0, n - nans, (n - 1) // 2)


def _median_row_position(row, ignore_nan):
    """``_median_position`` of one row, a list of numbers."""
    n, nans = len(row), sum(map(math.isnan, row))
    if ignore_nan:
        return max((n - nans - 1) // 2, 0)
    return n - nans if nans else (n - 1) // 2


class MedianBackward0(Node):
    """The gradient of the median of all elements: shared evenly between the elements equal
    to it."""
    __slots__ = ()
    saved_fields = {"self": 0, "result": 1}
    jvp = jvp_by_transposition

    def backward(self, grad):
        x, result = self.saved_tensors
        return (_share_among_ties(grad, x, result, tuple(range(x._data.ndim)), False, True),)


class NanmedianBackward0(MedianBackward0):
    __slots__ = ()


def _partitioned_median(flat, ignore_nan):
    """The element a partition of the flat array puts at the median's position."""
    position = int(_median_position(flat, 0, ignore_nan)[0])
    return namespace_of(flat).partition(widened(flat), position)[position].astype(flat.dtype)


# The median of a flat array's elements with ``_median_position``'s rule: a float32, float64 or int64
# NumPy array's by the selection loop (NumPy's partition takes several times longer, most of all where many
# elements are equal), else by a partition.
_lower_median = KernelChoice("median", onednn=openmp_kernels.lower_median, numpy=_partitioned_median)


def _median_all(input, ignore_nan, node_cls):
    data = input._data
    _refuse("median_cpu", data, dispatched=data.size > 0)
    xp = namespace_of(data)
    flat = data.reshape(-1)
    small = _small_rows(flat, 0)
    if flat.size == 0:
        value = xp.asarray(math.nan, dtype=data.dtype)
    elif small is not None:
        row = small[1][0]
        value = flat[_stable_order(row)[_median_row_position(row, ignore_nan)], ...].copy()
    else:   # the value only
        value = _lower_median(flat, ignore_nan)
    out = make(value)
    node = record(node_cls, (input,), out)
    if node is not None:
        node.save(input, out)
    return out


def _median_along(op, input, dim, keepdim, ignore_nan, node_cls, named):
    data = input._data
    dim = wrap_dim(dim, data.ndim)
    _check_nonempty(op, data, dim)
    _refuse("median_out", data)
    small = _small_rows(data, dim)
    if small is not None:
        values, indices = _pick_small(data, dim, keepdim, small, lambda row: _median_row_position(row, ignore_nan))
    else:
        position = _median_position(data, dim, ignore_nan) if data.ndim else 0
        values, indices = _pick_selected(data, dim, position, keepdim)
    return _selected(node_cls, input, values, indices, dim, keepdim, named)


def median(input, dim=None, keepdim=False, *, out=None):
    """``median(input)``: the lower median of all elements (NaN if there is one).
    ``median(input, dim, keepdim=False)``: ``(values, indices)`` of the lower median of each
    row along ``dim`` (``out=`` is taken by this form only, as torch's)."""
    if out is None:
        return _median(input, dim, keepdim)
    return _median_out("median", _median(input, _dim_for_out("median", dim), keepdim), out)


def _median(input, dim=None, keepdim=False):
    return _median_entry[0](input, dim, keepdim)


def _python_median(input, dim, keepdim):
    """``median`` in every case its compiled function (``_compiled_functions``) leaves to Python."""
    if dim is None:
        return _median_all(input, False, MedianBackward0)
    return _median_along("median", input, dim, keepdim, False, MedianBackward1, return_types.median)


def nanmedian(input, dim=None, keepdim=False, *, out=None):
    """As ``median``, ignoring NaN values (NaN only when a row holds nothing else)."""
    if out is None:
        return _nanmedian(input, dim, keepdim)
    return _median_out("nanmedian", _nanmedian(input, _dim_for_out("nanmedian", dim), keepdim), out)


def _nanmedian(input, dim=None, keepdim=False):
    return _nanmedian_entry[0](input, dim, keepdim)


def _python_nanmedian(input, dim, keepdim):
    """``nanmedian`` in every case its compiled function (``_compiled_functions``) leaves to Python."""
    if dim is None:
        return _median_all(input, True, NanmedianBackward0)
    return _median_along("nanmedian", input, dim, keepdim, True, NanmedianBackward1,
                         return_types.nanmedian)


# (arrays of up to SMALL_ROWS_MAX_ELEMENTS elements: the rows the Python ops sort in Python)
_median_entry, _nanmedian_entry, _kthvalue_entry = (
    _compiled_functions.register(python_op, node_cls, kind=kind, max_elements=SMALL_ROWS_MAX_ELEMENTS,
                                 specifics=(named, all_node, ignores_nan))
    for python_op, node_cls, kind, named, all_node, ignores_nan in (
        (_python_median, MedianBackward1, "median", return_types.median, MedianBackward0, False),
        (_python_nanmedian, NanmedianBackward1, "median", return_types.nanmedian, NanmedianBackward0, True),
        (_python_kthvalue, KthvalueBackward0, "kthvalue", return_types.kthvalue, None, False)))


def _dim_for_out(op, dim):
    if dim is None:
        raise TypeError(f"{op}(): out= needs a dim: torch's {op}(input) takes no out")
    return dim


def _median_out(op, result, out):
    values = (f"Expected tensor for 'values' to have the same type as tensor for argument #2 'self'; "
              f"but type torch.{{got}}Tensor does not equal torch.{{want}}Tensor (while checking "
              f"arguments for {op}_out)")
    indices = ("Expected tensor for argument #1 'indices' to have scalar type Long; but got "
               "torch.{got}Tensor instead (while checking arguments for " + op + "_out)")
    return write_out_exact(result, out, op, (values, indices))


def _run_bounds(xp, values, dim):
    """For each position of ``values`` (sorted along ``dim``), the first and last positions of
    its run of equal values."""
    n = values.shape[dim]
    positions = xp.arange(n).reshape((n,) + (1,) * (values.ndim - dim - 1))
    head = xp.ones(values.shape, dtype=bool)
    tail = xp.ones(values.shape, dtype=bool)
    body = (slice(None),) * dim
    differs = values[body + (slice(1, None),)] != values[body + (slice(None, -1),)]
    head[body + (slice(1, None),)] = differs
    tail[body + (slice(None, -1),)] = differs
    start = accumulate("maximum", xp.where(head, positions, 0), dim)
    end = xp.flip(accumulate("minimum", xp.flip(xp.where(tail, positions, n), axis=dim), dim), axis=dim)
    return start, end


def _mode_run(row):
    """The first and last index (in stably sorted order) of the longest run of equal numbers in
    ``row`` sorted, the first such run where several are longest."""
    order = _stable_order(row)
    best, first, last = 0, 0, 0
    start = 0
    for end in range(1, len(order) + 1):
        if end == len(order) or row[order[end]] != row[order[start]]:
            if end - start > best:
                best, first, last = end - start, order[start], order[end - 1]
            start = end
    return first, last


def _mode_by_values(data, dim):
    """``mode``'s (values, indices) along ``dim`` of a NumPy array of a NumPy dtype (``dim`` dropped), without
    an argsort: each row's values sorted (NumPy's sort, many times faster than its stable argsort), the
    first of the longest runs of equal values (NaNs each a run of their own), then where that value lies in
    the row: the value at its first position there, and its last position (a NaN's: the row's first NaN),
    what the stable order's run gives."""
    rows = np.moveaxis(data, dim, -1)
    n = rows.shape[-1]
    flat = np.sort(rows, axis=-1).reshape(-1)
    starts = np.empty(flat.shape, bool)
    starts[0] = True
    np.not_equal(flat[1:], flat[:-1], out=starts[1:])
    starts[::n] = True   # (each row starts a run)
    first = np.flatnonzero(starts)
    lengths = np.diff(first, append=flat.size)
    row_of_run = first // n
    row_starts = np.flatnonzero(np.diff(row_of_run, prepend=-1))   # (every row has a run)
    longest = np.maximum.reduceat(lengths, row_starts)
    chosen = np.flatnonzero(lengths == longest[row_of_run])
    chosen = chosen[np.flatnonzero(np.diff(row_of_run[chosen], prepend=-1))]   # (each row's first)
    value = flat[first[chosen]].reshape(rows.shape[:-1] + (1,))
    if data.dtype.kind == "f":
        nan = np.isnan(value)
        equal = np.where(nan, np.isnan(rows), rows == value)
        at_first = np.argmax(equal, axis=-1)
        at_last = np.where(nan[..., 0], at_first, n - 1 - np.argmax(equal[..., ::-1], axis=-1))
    else:
        equal = rows == value
        at_first, at_last = np.argmax(equal, axis=-1), n - 1 - np.argmax(equal[..., ::-1], axis=-1)
    values = np.take_along_axis(rows, at_first[..., None], axis=-1)[..., 0]
    return values, at_last.astype(_INT64)


def mode(input, dim=-1, keepdim=False, *, out=None):
    """Returns ``(values, indices)``: the most frequent value of each row of ``input`` along
    ``dim`` (the smallest among equally frequent ones) and the last index where it occurs."""
    result = _mode(input, dim, keepdim)
    return result if out is None else write_out_exact(result, out, "mode", (
        "expected scalar type '{want}' but got '{got}' for values output",
        "expected scalar type '{want}' but got '{got}' for indices output"))


def _mode(input, dim=-1, keepdim=False):
    return _mode_entry[0](input, dim, keepdim)


def _python_mode(input, dim, keepdim):
    """``mode`` in every case its compiled function (``_compiled_functions``) leaves to Python."""
    data = input._data
    dim = wrap_dim(dim, data.ndim)
    _check_nonempty("mode", data, dim)
    _refuse("mode_cpu", data, "c", dispatched=data.ndim > 0 and data.size > 0)
    xp = namespace_of(data)
    small = _small_rows(data, dim)
    if not data.ndim:
        values, indices = data.copy(), xp.zeros((), dtype=_INT64)
    elif small is not None:
        runs = [_mode_run(row) for row in small[1]]
        values, indices = _picked_rows(data, dim, keepdim, small[0], [f for f, _ in runs], [last for _, last in runs])
    elif data.__class__ is np.ndarray and data.size and data.dtype.kind in "biuf":
        values, indices = _mode_by_values(data, dim)
        if keepdim:
            values, indices = np.expand_dims(values, dim), np.expand_dims(indices, dim)
    else:
        ordered, order = _sort_arrays(data, dim, False)
        start, end = _run_bounds(xp, ordered, dim)
        best = xp.argmax(end - start, axis=dim, keepdims=True)
        values = xp.take_along_axis(ordered, best, axis=dim)
        indices = xp.take_along_axis(order, xp.take_along_axis(end, best, axis=dim), axis=dim)
        if not keepdim:
            values, indices = values.squeeze(dim), indices.squeeze(dim)
    return _selected(ModeBackward0, input, values, indices, dim, keepdim, return_types.mode)


_mode_entry = _compiled_functions.register(_python_mode, ModeBackward0, kind="mode",
                                           max_elements=SMALL_ROWS_MAX_ELEMENTS,
                                           specifics=(return_types.mode, None, False))


# ----------------------------------------------------------------------------------------
# quantile, nanquantile

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile_q(input, q, op):
    """``q`` as a float array (0-d or 1-d) of the input's dtype, checked as torch checks it."""
    xp = namespace_of(input._data)
    if isinstance(q, Tensor):
        if q._data.ndim > 1:
            raise RuntimeError(f"{op}() q must be a scalar or 1D tensor")
        if q._data.dtype != input._data.dtype:
            raise RuntimeError(f"{op}() q tensor must be same dtype as the input tensor")
        qs = q._data
        if qs.size and not bool(xp.all((qs >= 0) & (qs <= 1))):
            raise RuntimeError(f"{op}() q values must be in the range [0, 1]")
        return qs
    if not 0 <= q <= 1:
        raise RuntimeError(f"{op}() q must be in the range [0, 1] but got {q}")
    return xp.asarray(q, dtype=input._data.dtype)


def _quantile_ranks(xp, ordered, qs, ignore_nan, interpolation):
    """The fractional positions of the quantiles in each row of ``ordered`` (sorted along the
    last dim): shape (..., len(q))."""
    n = ordered.shape[-1]
    nans = xp.sum(xp.isnan(ordered), axis=-1, keepdims=True)
    if ignore_nan:
        ranks = qs.reshape(-1) * (n - nans - 1)
        ranks = xp.where(ranks < 0, 0, ranks)
    else:
        ranks = xp.where(nans > 0, n - 1, qs.reshape(-1) * (n - 1))
    ranks = ranks.astype(ordered.dtype, copy=False)
    if interpolation == "lower":
        ranks = xp.floor(ranks)
    elif interpolation == "higher":
        ranks = xp.ceil(ranks)
    elif interpolation == "nearest":
        ranks = xp.round(ranks)
    return ranks


def _quantile(op, input, q, dim, keepdim, interpolation, ignore_nan):
    data = input._data
    if data.dtype.kind != "f" or data.dtype.itemsize < 4:
        raise RuntimeError(f"{op}() input tensor must be either float or double dtype")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{op}() interpolation must be one of linear, lower, higher, midpoint or "
                           f"nearest, but got {interpolation}")
    qs = _quantile_q(input, q, op)
    xp = namespace_of(data)
    if dim is None:
        rows = input.reshape(-1)
        out_shape = (1,) * data.ndim if keepdim else ()
    else:
        dim = wrap_dim(dim, data.ndim)
        if data.size == 0:
            raise RuntimeError("quantile() input tensor must be non-empty")
        rows = input.unsqueeze(-1).transpose(dim, -1) if data.ndim else input.reshape(1)
        shape = data.shape
        out_shape = shape[:dim] + ((1,) if keepdim else ()) + shape[dim + 1:] if shape else ()
    if rows._data.shape[-1] == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if (data.__class__ is np.ndarray and not forward_mode.active
            and not (grad_state.grad_enabled and input._requires_grad)):   # (nothing records: the steps on arrays)
        return make(_quantiles_of_rows(rows._data, qs, out_shape, interpolation, ignore_nan))
    ordered = sort(rows, -1).values
    ranks = _quantile_ranks(xp, ordered._data, qs, ignore_nan, interpolation)
    below_index = ranks.astype(_INT64)
    below = _take_along(ordered, below_index, ordered._data.ndim - 1)
    if interpolation in ("linear", "midpoint"):
        above = _take_along(ordered, xp.ceil(ranks).astype(_INT64), ordered._data.ndim - 1)
        weights = xp.full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - xp.floor(ranks)
        below = lerp(below, above, make(weights))
    # below: (..., len(q)); put the q dim first
    below = below.movedim(-1, 0).reshape((qs.size,) + out_shape)
    return below.reshape(out_shape) if qs.ndim == 0 else below


def _quantiles_of_rows(rows, qs, out_shape, interpolation, ignore_nan):
    """``_quantile``'s steps on the array of rows (its last dim), where nothing records: the same values."""
    ordered = np.sort(rows, axis=-1)
    last = ordered.ndim - 1
    ranks = _quantile_ranks(np, ordered, qs, ignore_nan, interpolation)
    below = ordered[_along_key(ranks.astype(_INT64), last)]
    if interpolation in ("linear", "midpoint"):
        above = ordered[_along_key(np.ceil(ranks).astype(_INT64), last)]
        weights = np.full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - np.floor(ranks)
        with np.errstate(all="ignore"):
            below = _lerp_forward(below, above, weights)
    below = below.transpose((last,) + tuple(range(last))).reshape((qs.size,) + out_shape)
    return below.reshape(out_shape) if qs.ndim == 0 else below


@autocast_policy("fp32")
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """Computes the ``q``-th quantiles (``q`` a number or a 1-d tensor in [0, 1]) of each row
    of ``input`` along ``dim`` (of all elements when ``dim`` is None), interpolating between
    neighbouring values as ``interpolation`` says. A row holding NaN gives NaN."""
    if out is None:
        return _quantile("quantile", input, q, dim, keepdim, interpolation, False)
    return _quantile_out("quantile", input, q, dim, keepdim, interpolation, False, out)


@autocast_policy("fp32")
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """As ``quantile``, ignoring NaN values (NaN only for a row holding nothing else)."""
    if out is None:
        return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)
    return _quantile_out("nanquantile", input, q, dim, keepdim, interpolation, True, out)


def _quantile_out(op, input, q, dim, keepdim, interpolation, ignore_nan, out):
    """The quantiles into ``out=``: torch's quantile composes ops that write into out, so
    an input requiring grad is taken (out gets no history)."""
    with no_grad():
        result = _quantile(op, input, q, dim, keepdim, interpolation, ignore_nan)
    return write_out_exact(result, out, op, "quantile() out tensor must be same dtype as the input tensor")


def _quantile_method(self, q, dim=None, keepdim=False, *, interpolation="linear"):
    return _quantile("quantile", self, q, dim, keepdim, interpolation, False)


def _nanquantile_method(self, q, dim=None, keepdim=False, *, interpolation="linear"):
    return _quantile("nanquantile", self, q, dim, keepdim, interpolation, True)


# ----------------------------------------------------------------------------------------
# unique, unique_consecutive, bincount, histc

def _unique_outputs(values, inverse, counts, return_inverse, return_counts):
    outs = [make(values)]
    if return_inverse:
        outs.append(make(inverse.astype(_INT64, copy=False)))
    if return_counts:
        outs.append(make(counts.astype(_INT64, copy=False)))
    return outs[0] if len(outs) == 1 else tuple(outs)


def _runs(ordered, return_index, return_counts):
    """The first element of each run of equal elements of the 1-d NumPy array ``ordered`` (with
    elements; NaNs each their own run), each element's run (``return_index``) and the runs' lengths
    (``return_counts``), None where not asked for: on ``openmp_kernels.runs``' loop (one pass, without
    NumPy's mask that mispredicts a branch an element where the runs are short), else NumPy's passes."""
    looped = openmp_kernels.runs(ordered, return_index, return_counts)
    return _runs_in_passes(ordered, return_index, return_counts) if looped is None else looped


def _runs_in_passes(ordered, return_index, return_counts):
    n = ordered.size
    starts = np.empty(n, bool)
    starts[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=starts[1:])
    index = counts = None
    if return_index:
        index = np.cumsum(starts, dtype=np.int64) - 1
    if return_counts:
        first = np.flatnonzero(starts)
        counts = np.empty(first.size, np.int64)
        np.subtract(first[1:], first[:-1], out=counts[:-1])
        counts[-1] = n - first[-1]
    return ordered[starts], index, counts


def _sorted_unique(flat, return_inverse, return_counts):
    """numpy.unique's (values, inverse, counts) of a 1-d NumPy array (NaNs each their own value),
    the inverse and counts computed only where asked for (else None): the runs of the sorted array
    (sorted by index where the inverse is asked for)."""
    if flat.size == 0:
        return flat.copy(), np.empty(0, np.int64), np.empty(0, np.int64)
    if not return_inverse:
        return _runs(np.sort(flat), False, return_counts)
    order = flat.argsort()
    values, runs, counts = _runs(flat[order], True, return_counts)
    inverse = np.empty(flat.size, np.int64)
    inverse[order] = runs
    return values, inverse, counts


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """Returns the unique elements of ``input`` (or unique slices along ``dim``) in ascending
    order, optionally with the index of each input element in them (``return_inverse``) and
    how often each occurs (``return_counts``)."""
    data = input._data
    _refuse("unique" if dim is None else "unique_dim", data, "c")
    if dim is not None and not data.ndim:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    xp = namespace_of(data)
    if dim is None and xp is np:
        values, inverse, counts = _sorted_unique(data.reshape(-1), return_inverse, return_counts)
        if return_inverse:
            inverse = inverse.reshape(data.shape)
    elif dim is None:
        values, inverse, counts = xp.unique(data.reshape(-1), return_inverse=True,
                                            return_counts=True, equal_nan=False)   # NaNs differ
        inverse = inverse.reshape(data.shape)
    else:
        dim = wrap_dim(dim, data.ndim)
        values, inverse, counts = xp.unique(data, return_inverse=True, return_counts=True,
                                            axis=dim)
        inverse = inverse.reshape(-1)
    return _unique_outputs(values, inverse, counts, return_inverse, return_counts)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Keeps the first element of every run of consecutive equal elements of ``input`` (or
    of equal slices along ``dim``), optionally with each element's run (``return_inverse``)
    and the run lengths (``return_counts``)."""
    data = input._data
    _refuse("unique", data, "c")
    if dim is not None and not data.ndim:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    xp = namespace_of(data)
    if dim is None and xp is np and data.size:
        values, inverse, counts = _runs(data.reshape(-1), return_inverse, return_counts)
        return _unique_outputs(values, None if inverse is None else inverse.reshape(data.shape), counts,
                               return_inverse, return_counts)
    rows = data.reshape(-1) if dim is None else xp.moveaxis(data, wrap_dim(dim, data.ndim), 0)
    n = rows.shape[0]
    starts = xp.ones(n, dtype=bool)
    if n > 1:
        changed = rows[1:] != rows[:-1]
        starts[1:] = changed.reshape(n - 1, -1).any(axis=1)
    inverse = xp.cumsum(starts) - 1
    first = xp.nonzero(starts)[0]
    counts = xp.diff(xp.append(first, n))
    values = rows[first]
    if dim is None:
        inverse = inverse.reshape(data.shape)
    else:
        values = xp.moveaxis(values, 0, wrap_dim(dim, data.ndim))
    return _unique_outputs(values, inverse, counts, return_inverse, return_counts)


def bincount(input, weights=None, minlength=0):
    """Counts how often each non-negative integer occurs in the 1-d ``input`` (summing
    ``weights`` instead of ones when given); the result has at least ``minlength`` bins."""
    data = input._data
    if (weights is None and data.__class__ is np.ndarray and data.ndim == 1 and data.dtype.kind == "i"
            and minlength.__class__ is int and minlength >= 0):
        try:   # (NumPy's bincount refuses negative elements as torch does, with its own error)
            return make(np.bincount(data, minlength=minlength).astype(_INT64, copy=False))
        except ValueError:
            raise RuntimeError("bincount only supports 1-d non-negative integral inputs.") from None
    if input.is_floating_point() or data.dtype.kind in "bc":
        raise not_implemented("bincount_cpu", data.dtype)
    if data.ndim == 1 and data.size == 0:   # torch returns before looking at the weights
        return make(namespace_of(data).zeros((max(int(minlength), 0),), dtype=_INT64))
    xp = namespace_of(data)
    if data.ndim != 1 or (data.size and int(data.min()) < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is None:
        return make(xp.bincount(data, minlength=minlength).astype(_INT64))
    w = weights._data
    if w.ndim != 1 or w.shape[0] != data.shape[0]:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    if w.dtype.kind == "c":   # torch takes complex weights as doubles: their real part
        w = w.real.astype(_dtype.float64.np)
    out_dtype = w.dtype if w.dtype in (_dtype.float32.np, _dtype.float64.np) else _dtype.float64.np
    return make(xp.bincount(data, weights=w, minlength=minlength).astype(out_dtype))


@with_out()
def histc(input, bins=100, min=0, max=0):
    """Computes the histogram of ``input``: ``bins`` equal-width bins between ``min`` and
    ``max`` (the data's minimum and maximum when both are zero); elements outside are
    ignored."""
    return _histc_entry[0](input, bins, min, max)


def _python_histc(input, bins, min, max):
    """``histc`` in every case its compiled function (``_compiled_histograms``) leaves to Python."""
    data = input._data
    if not input.is_floating_point():
        check_value_fits(float(min), data.dtype)   # torch converts the bounds (as doubles) first
        check_value_fits(float(max), data.dtype)
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{_type_word(data.dtype)}'")
    if bins <= 0:
        raise RuntimeError("torch.histc: bins must be > 0, but got " + str(bins))
    xp = namespace_of(data)
    low, high = float(min), float(max)
    if low == high and data.size:
        low, high = float(data.min()), float(data.max())
    if low == high:
        low, high = low - 1, high + 1
    if not (math.isfinite(low) and math.isfinite(high)):
        raise RuntimeError(f"torch.histc: range of [{low}, {high}] is not finite")
    if low > high:
        raise RuntimeError(f"torch.histc: max must be larger than min, but got min {min} max {max}")
    if data.dtype == _dtype.bfloat16.np:  # torch bins bfloat16 in bfloat16 arithmetic
        low, high = data.dtype.type(low), data.dtype.type(high)
    flat = data.reshape(-1)
    inside = flat[(flat >= low) & (flat <= high)]
    position = ((inside - low) * bins / (high - low)).astype(_INT64)
    position = xp.minimum(position, bins - 1)
    return make(xp.bincount(position, minlength=bins).astype(data.dtype))


_histc_entry = _compiled_functions.register(_python_histc, None, kind="histc")


# ----------------------------------------------------------------------------------------
# searchsorted, bucketize

def _side(right, side):
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got "
                               f"{side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got "
                               "side of left while right was True")
        return side
    return "right" if right else "left"


def _search_nd(xp, boundaries, values, side):
    """searchsorted row by row: for each value, how many boundaries of its row come before
    it (are smaller, or not larger for ``side='right'``)."""
    b = boundaries[..., None, :]
    v = values[..., None]
    before = (b <= v) if side == "right" else (b < v)
    if boundaries.dtype.kind == "f":  # bfloat16 arrives widened to float32
        before |= xp.isnan(v) & ~xp.isnan(b)
    return xp.sum(before, axis=-1)


_PLAIN_SEARCH_DTYPES = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int64), np.dtype(np.int32))


@with_out()
def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    """Finds the indices where the elements of ``input`` would be inserted in the innermost
    dim of ``sorted_sequence`` to keep it sorted (after the equal ones with ``right=True`` or
    ``side='right'``). ``sorter`` gives the order that sorts an unsorted sequence."""
    side = _side(right, side)
    seq = sorted_sequence._data
    if sorter is not None:
        _check_sorter(sorter, seq)
    if (input.__class__ is Tensor and seq.__class__ is np.ndarray and seq.ndim == 1 and seq.size
            and seq.dtype in _PLAIN_SEARCH_DTYPES and input._data.dtype == seq.dtype and input._data.ndim
            and input._data.size and (sorter is None or sorter._data.__class__ is np.ndarray)):
        # (the common case: the array's own search, without NumPy's Python wrapper; a sorter's order first, the
        # values take_along_axis gives)
        ordered = seq if sorter is None else seq.take(sorter._data)
        found = ordered.searchsorted(input._data, side)
        return make(found.astype(np.int32) if out_int32 else found)
    xp = namespace_of(seq)
    scalar = not isinstance(input, Tensor)
    if seq.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive dimension, but "
                           "got 0 dimension")
    common = _dtype.result_type_of(sorted_sequence, input).np
    # torch dispatches on the common dtype, and not at all for empty input
    _refuse("searchsorted_out_cpu", xp.empty(0, dtype=common),
            dispatched=seq.size > 0 and (scalar or input._data.size > 0))
    values = xp.asarray(input, dtype=seq.dtype) if scalar else input._data
    if sorter is not None:
        seq = xp.take_along_axis(seq, sorter._data, axis=-1)
    seq, values = widened(seq), widened(values)  # NumPy orders bfloat16 NaNs first
    if seq.ndim > 1 and (scalar or seq.shape[:-1] != values.shape[:-1]):
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
            "dimensions of boundaries tensor and input value tensor must match, but we got "
            f"boundaries tensor {list(sorted_sequence._data.shape)} and input value tensor "
            f"{list(values.shape)}")
    if seq.ndim <= 1:
        found = xp.searchsorted(seq.reshape(-1), values, side=side)
    else:
        found = _search_nd(xp, seq, values, side)
    dtype = _dtype.int32.np if out_int32 else _INT64
    return make(xp.asarray(found, dtype=dtype))


def _check_sorter(sorter, seq):
    """torch's checks of searchsorted's ``sorter`` for the sequence ``seq`` (an array): a tensor, of int64, of
    its shape, each index within its innermost dim."""
    if not isinstance(sorter, Tensor):
        raise TypeError(f"searchsorted(): argument 'sorter' must be Tensor, not {type(sorter).__name__}")
    order = sorter._data
    if order.dtype != _INT64:
        raise RuntimeError(f"torch.searchsorted(): sorter must be a tensor of long dtype but got dtype "
                           f"{_type_word(order.dtype)}")
    if order.shape != seq.shape:
        raise RuntimeError(f"torch.searchsorted(): boundary and sorter must have the same size, but got boundary "
                           f"tensor {list(seq.shape)}and got sorter tensor {list(order.shape)}")
    if order.size and (order.min() < 0 or order.max() >= seq.shape[-1]):
        raise RuntimeError("torch.searchsorted(): sorter index out of range")


@with_out()
def bucketize(input, boundaries, *, out_int32=False, right=False):
    """Returns the index of the bucket of ``boundaries`` (1-d, ascending) each element of
    ``input`` falls in: boundaries[i-1] < x <= boundaries[i] (< with ``right=True``)."""
    if boundaries._data.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries._data.ndim})")
    return searchsorted.__wrapped__(boundaries, input, out_int32=out_int32, right=right)   # (no out= here)


# ----------------------------------------------------------------------------------------
# cummax, cummin, logcumsumexp

def _cumulative_extreme(op, input, dim, is_max, node_cls, named):
    """The running maximum (minimum) along ``dim`` and, for each position, the last index
    where it was reached (NaN, once met, propagates with its index)."""
    data = input._data
    _refuse(f"{op}_cpu", data, "c", dispatched=data.ndim > 0 and data.size > 0)
    xp = namespace_of(data)
    if data.ndim and not data.size:   # torch returns empty results without looking at dim
        empty = xp.zeros(data.shape, dtype=_INT64)
        return _selected(node_cls, input, data.copy(), empty, 0, True, named)
    dim = wrap_dim(dim, data.ndim)
    if not data.ndim:
        return _selected(node_cls, input, data.copy(), xp.zeros((), dtype=_INT64), 0, True, named)
    if data.dtype == np.float32 and data.size >= openmp_kernels.SCAN_MIN_ELEMENTS and data.flags.c_contiguous:
        running, indices = _running_extremes[is_max](data, dim)
    else:
        running, indices = _numpy_running_extreme(data, dim, is_max, input.is_floating_point())
    return _selected(node_cls, input, running, indices, dim, True, named)


def _numpy_running_extreme(data, dim, is_max, floating=True):
    xp = namespace_of(data)
    running = accumulate("maximum" if is_max else "minimum", data, dim)
    reached = data == running
    if floating:
        reached |= xp.isnan(data)
    n = data.shape[dim]
    positions = xp.arange(n).reshape((n,) + (1,) * (data.ndim - dim - 1))
    indices = accumulate("maximum", xp.where(reached, positions, 0), dim) if n else \
        xp.zeros(data.shape, dtype=_INT64)
    return running, indices.astype(_INT64, copy=False)


# cummax and cummin of large row-major float32 arrays
_running_extremes = {
    True: KernelChoice("cummax", onednn=lambda data, dim: openmp_kernels.running_extreme_float32(data, dim, True),
                       numpy=lambda data, dim: _numpy_running_extreme(data, dim, True)),
    False: KernelChoice("cummin", onednn=lambda data, dim: openmp_kernels.running_extreme_float32(data, dim, False),
                        numpy=lambda data, dim: _numpy_running_extreme(data, dim, False))}


_SCALAR_TYPE = "expected scalar_type {want} but found {got}"


def cummax(input, dim, *, out=None):
    """Returns ``(values, indices)``: the cumulative maximum of ``input`` along ``dim`` and
    the index where each was found."""
    if out is None:
        return _cummax_entry[0](input, dim)
    return write_out_exact(_python_cummax(input, dim), out, "cummax", (_SCALAR_TYPE, _SCALAR_TYPE))


def _cummax(input, dim):
    return _cummax_entry[0](input, dim)


def _python_cummax(input, dim):
    """``cummax`` in every case its compiled function (``_compiled_functions``) leaves to Python."""
    return _cumulative_extreme("cummax", input, dim, True, CummaxBackward0, return_types.cummax)


def cummin(input, dim, *, out=None):
    """Returns ``(values, indices)``: the cumulative minimum of ``input`` along ``dim`` and
    the index where each was found."""
    if out is None:
        return _cummin_entry[0](input, dim)
    return write_out_exact(_python_cummin(input, dim), out, "cummin", (_SCALAR_TYPE, _SCALAR_TYPE))


def _cummin(input, dim):
    return _cummin_entry[0](input, dim)


def _python_cummin(input, dim):
    """``cummin`` in every case its compiled function (``_compiled_functions``) leaves to Python."""
    return _cumulative_extreme("cummin", input, dim, False, CumminBackward0, return_types.cummin)


_cummax_entry, _cummin_entry = (
    _compiled_functions.register(python_op, node_cls, kind="cumulative", specifics=(result_type, is_max))
    for python_op, node_cls, result_type, is_max in ((_python_cummax, CummaxBackward0, return_types.cummax, True),
                                                     (_python_cummin, CumminBackward0, return_types.cummin, False)))


class LogcumsumexpBackward0(Node):
    """torch's logcumsumexp_backward: the reversed scan done in log space, separately for the
    positive and negative parts of the gradient, so nothing overflows."""
    __slots__ = ()
    saved_fields = {"self": 0, "result": 1, "dim": "dim"}

    def jvp(self, tangent):
        # (its backward takes the log of the gradient: no transposing it at a zero gradient)
        x, result = self.primals[0], self.results[0]
        if not x._data.ndim or not x._data.size:
            return tangent
        shift = x.amax(self.dim, keepdim=True)
        scale = (result - shift).exp()
        # a prefix far below the maximum underflows to 0/0: its tangent is 0, as torch's
        # (backward over backward meets such prefixes: the scans of masked logarithms)
        vanished = scale == 0
        tangent = (tangent * (x - shift).exp()).cumsum(self.dim)
        return where(vanished, 0.0, tangent / where(vanished, 1.0, scale))

    def backward(self, grad):
        x, result = self.saved_tensors
        if not grad._data.ndim or not grad._data.size:
            return (grad,)
        dim = self.dim
        xd = grad._data
        lowest = float(_dtype.finfo(grad.dtype).min)
        with _quiet(namespace_of(xd)):
            log_abs = grad.abs().log()
            positive = where(grad > 0, log_abs, lowest)
            negative = where(grad < 0, log_abs, lowest)
            out_pos = (_reversed_logcumsumexp(positive - result, dim) + x).exp()
            out_neg = (_reversed_logcumsumexp(negative - result, dim) + x).exp()
        return (out_pos - out_neg,)


def _reversed_logcumsumexp(t, dim):
    return _logcumsumexp(t.flip(dim), dim).flip(dim)


def logcumsumexp(input, dim, *, out=None):
    """Returns log(cumsum(exp(input))) along ``dim``, computed without overflow."""
    result = _logcumsumexp(input, dim)
    return result if out is None else write_out_exact(result, out, "logcumsumexp", _SCALAR_TYPE)


def _logcumsumexp(input, dim):
    return _logcumsumexp_entry[0](input, dim)


def _python_logcumsumexp(input, dim):
    """``logcumsumexp`` in every case its compiled function (``_compiled_scans``) leaves to Python."""
    _refuse("logcumsumexp_out_cpu", input._data, "biu")
    data = input._data
    dim = wrap_dim(dim, data.ndim)
    xp = namespace_of(data)
    if data.ndim and data.dtype.kind == "c":   # NumPy's logaddexp has no complex loop
        with _quiet(xp):
            scanned = xp.log(xp.cumsum(xp.exp(data), axis=dim))
    elif data.ndim:
        with _quiet(xp):
            scanned = accumulate("logaddexp", data, dim) if data.size else data.copy()
    else:
        scanned = data.copy()
    out = make(scanned)
    node = record(LogcumsumexpBackward0, (input,), out)
    if node is not None:
        node.save(input, out)
        node.dim = dim
    return out


_logcumsumexp_entry = _compiled_functions.register(_python_logcumsumexp, LogcumsumexpBackward0, ("self", "result"),
                                                   kind="logcumsumexp")


# ----------------------------------------------------------------------------------------
# diff, aminmax

def diff(input, n=1, dim=-1, prepend=None, append=None, *, out=None):
    """Computes the ``n``-th forward difference along ``dim`` (``out[i] = x[i+1] - x[i]``,
    exclusive or for bool), after joining ``prepend`` and ``append`` to ``input``."""
    result = _diff(input, n, dim, prepend, append)
    return result if out is None else write_out(result, out, False, "diff")


_DIFF_ARRAY_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _diff(input, n=1, dim=-1, prepend=None, append=None):
    if not input._data.ndim:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    dim = wrap_dim(dim, input._data.ndim)
    if (prepend is not None or append is not None) and any(
            t is not None and t._data.ndim != input._data.ndim for t in (prepend, append)):
        raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    data = input._data
    if (n > 0 and prepend is None and append is None and data.__class__ is np.ndarray
            and (data.dtype.kind in "biu" or data.dtype in _DIFF_ARRAY_FLOATS)
            and not forward_mode.active and not (grad_state.grad_enabled and input._requires_grad)):
        # (nothing records: the steps below on the arrays, as the ops compute them, the large ones' in
        # sub's loop over rows that lie apart, where NumPy's strided subtraction goes row by row)
        before = (slice(None),) * dim
        for _ in range(n):
            if data.shape[dim] == 0:
                break
            later, earlier = data[before + (slice(1, None),)], data[before + (slice(None, -1),)]
            if data.dtype.kind == "b":
                data = np.not_equal(later, earlier)
            elif later.nbytes >= openmp_kernels.ROWS_MIN_BYTES:
                data = large_binary(np.subtract, later, earlier)
            else:
                data = np.subtract(later, earlier)
        return make(data.copy() if data is input._data else data)
    parts = [t for t in (prepend, input, append) if t is not None]
    x = cat(parts, dim) if len(parts) > 1 else input
    for _ in range(n):
        length = x._data.shape[dim]
        if length == 0:
            break
        later, earlier = x.narrow(dim, 1, length - 1), x.narrow(dim, 0, length - 1)
        x = later.logical_xor(earlier) if x._data.dtype.kind == "b" else later - earlier
    return x


class AminmaxBackward0(Node):
    """Each of min and max passes its gradient to the elements equal to it, shared evenly."""
    __slots__ = ()
    saved_fields = {"self": 0, "min": 1, "max": 2, "dim": "dims", "keepdim": "keepdim"}
    jvp = jvp_by_transposition

    def backward(self, grad_min, grad_max=None):
        x, low, high = self.saved_tensors
        total = None
        for grad, result in ((grad_min, low), (grad_max, high)):
            if grad is not None:
                part = _share_among_ties(grad, x, result, self.dims, self.keepdim, False)
                total = part if total is None else total + part
        return (total,)


def aminmax(input, *, dim=None, keepdim=False, out=None):
    """Returns ``(min, max)`` of ``input`` (of each row along ``dim`` when given)."""
    result = _aminmax(input, dim=dim, keepdim=keepdim)
    return result if out is None else write_out(result, out, True, "aminmax")


_FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _aminmax(input, *, dim=None, keepdim=False):
    data = input._data
    if (not input._requires_grad and not forward_mode.active and data.__class__ is np.ndarray
            and data.dtype in _FLOAT_DTYPES and data.ndim and data.size):
        # nothing to record: amin's and amax's compiled functions, over all dims or along an int dim
        if dim is None and not keepdim:
            return return_types.aminmax(_amin_entry[0](input), _amax_entry[0](input))
        if dim.__class__ is int and -data.ndim <= dim < data.ndim and keepdim.__class__ is bool:
            return return_types.aminmax(_amin_entry[0](input, dim, keepdim), _amax_entry[0](input, dim, keepdim))
    xp = namespace_of(data)
    if dim is None:
        dims = tuple(range(data.ndim))
        if data.size == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                               "operation has no identity.")
    else:
        d = wrap_dim(dim, data.ndim)   # a 0-d input takes dim 0 or -1 only
        dims = (d,) if data.ndim else ()
        if dims and data.shape[dims[0]] == 0:
            raise IndexError(f"aminmax(): Expected reduction dim {dims[0]} to have non-zero size.")
    if dim is not None and not data.ndim and data.dtype.kind == "c":
        raise RuntimeError(f"aminmax not implemented for {_type_word(data.dtype)}")
    _refuse("aminmax_cpu", data, "c")
    axis = dims or None
    # (the arrays' own methods: NumPy's ``min`` and ``max`` wrappers cost more than a small reduction)
    if not keepdim and dim is None and data.ndim:
        low, high = data.min(), data.max()
    else:
        low = data.min(axis=axis, keepdims=keepdim)
        high = data.max(axis=axis, keepdims=keepdim)
    low, high = make(xp.asarray(low)), make(xp.asarray(high))
    node = record(AminmaxBackward0, (input,), low, high)
    if node is not None:
        node.save(input, low, high)
        node.dims, node.keepdim = dims, keepdim
    return return_types.aminmax(low, high)


# ----------------------------------------------------------------------------------------
# Tensor methods

for _name in ("sort", "unique", "unique_consecutive", "bincount", "histc"):
    method(_name)(getattr(globals()[_name], "__wrapped__", globals()[_name]))  # no out=
# the functions below take torch's out=; their Tensor methods, as torch's, take none
for _name in ("argsort", "msort", "topk", "kthvalue", "median", "nanmedian", "mode", "cummax",
              "cummin", "logcumsumexp", "diff", "aminmax"):
    method(_name)(globals()["_" + _name])
method("quantile")(_quantile_method)
method("nanquantile")(_nanquantile_method)
del _name
