"""Reductions over all elements or over ``dim`` (an int or a tuple of ints, negative dims
counted from the end), with ``keepdim``: sums and products, means and moments, extremes and
their indices, vector norms, logical reductions and cumulative scans.

Forwards are one backend call where the op allows it; gradients are written with ember ops, so
``create_graph=True`` gives higher-order gradients. Masks that only select (ties of a max,
NaNs of a nansum) are built from the arrays as constants: their derivative is zero.
"""
import contextlib
import math
import sys
import warnings

import numpy as np

from .._backend import openmp_kernels, vector_math
from .._backend.choice import KernelChoice
from .._torch_function import dispatch_or_raise
from .. import _dtype, return_types
from ._common import (
    complex_autograd, complex_autograd_message,
    apply_inplace, float_array, forward_mode, grad_state, _HALF_PRECISION, make, make_view, method, namespace_of,
    narrowed, Node,
    normalize_dims, not_implemented, out_dtype, record, Size, Tensor, to_np_dtype, _type_word,
    typeid_word, widened, wrap_dim, write_out, write_out_exact,
)
from .shape import flip
from .ternary import where
from .view import expanded_array, slice_scatter_zeros
from . import _compiled_functions, pointwise
from ._array_sums import COLUMN_SUM_MIN_ROWS, ROW_SUM_MIN_ELEMENTS, array_sum, sum_of_squares_over
from ..amp.policy import autocast_policy
from ..autograd._dual import jvp_by_transposition

__all__ = [
    "sum", "mean", "nansum", "nanmean", "prod", "amax", "amin", "max", "min", "argmax", "argmin",
    "var", "std", "var_mean", "std_mean", "logsumexp", "all", "any", "count_nonzero", "norm",
    "cumsum", "cumprod",
]

_INT64 = _dtype.int64.np


# ----------------------------------------------------------------------------------------
# Shared helpers: dims, shapes, dtypes

def _reduce_dims(dim, ndim):
    """``dim`` as a sorted tuple of non-negative dims; None or an empty sequence means all."""
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return tuple(range(ndim))
    return normalize_dims(dim, ndim)


def _axis(dims, ndim):
    """``dims`` as the cheapest equivalent NumPy axis argument (None for all, an int for one)."""
    if len(dims) == ndim:
        return None
    return dims[0] if len(dims) == 1 else dims


def _numpy_names(dim, keepdim, names, op):
    """``dim`` and ``keepdim`` where they were given by NumPy's names ``axis`` and ``keepdims``,
    which torch accepts for them."""
    for name, value in names.items():
        if name == "axis":
            if dim is not None:
                raise TypeError(f"{op}() got multiple values for argument 'dim' (as 'axis')")
            dim = value
        elif name == "keepdims":
            keepdim = value
        else:
            raise TypeError(f"{op}() got an unexpected keyword argument '{name}'")
    return dim, keepdim


def _kept_shape(shape, dims):
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


def _reduced_shape(shape, dims):
    return tuple(s for i, s in enumerate(shape) if i not in dims)


# Gradients the reductions' ``backward_arrays`` take: NumPy computes their arithmetic as the
# ops do (half precision goes through float32 in the ops' means).
_ARRAY_GRAD_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _count(shape, dims):
    """How many elements each reduction over ``dims`` combines."""
    n = 1
    for d in dims:
        n *= shape[d]
    return n


def restore_dims(t, in_shape, dims, keepdim):
    """A reduced tensor reshaped (differentiably) to broadcast against the input."""
    if keepdim or not in_shape:
        return t
    return t.reshape(_kept_shape(in_shape, dims))


def expand_grad(grad, in_shape, dims, keepdim):
    """Broadcast a reduced gradient back over the reduced dims (differentiable)."""
    return restore_dims(grad, in_shape, dims, keepdim).expand(in_shape)


def _as_dtype(t, np_dtype):
    """``t`` cast to ``np_dtype`` (differentiably), e.g. a gradient back to its input's dtype."""
    if t._data.dtype == np_dtype:
        return t
    return t.to(_dtype.from_numpy_dtype(np_dtype))


def _is_inexact(data):
    return data.dtype.kind in "fc" or data.dtype == _dtype.bfloat16.np


def _int_to_int64(data, dtype):
    """The accumulation dtype of sum-like ops: ``dtype``, or int64 for integer and bool input."""
    if dtype is not None:
        return to_np_dtype(dtype)
    if data.dtype.kind in "biu":
        return _INT64
    return None


def _accumulated(fn, data, np_dtype, **kwargs):
    """``fn(data, dtype=np_dtype, **kwargs)`` for a sum-like ``fn``; a half or bfloat16 result
    accumulates in float32 and is rounded once, as torch accumulates them (ml_dtypes would
    add bfloat16 values one at a time in bfloat16)."""
    target = data.dtype if np_dtype is None else np_dtype
    if target not in _HALF_PRECISION:
        return fn(data, dtype=np_dtype, **kwargs)
    return narrowed(fn(widened(data.astype(target, copy=False)), **kwargs), target)


# Reductions of all of a large float32 array's elements.
_whole_sum = KernelChoice("sum", onednn=lambda data: openmp_kernels.whole_reduction("sum", data),
                          numpy=array_sum)
_whole_sum_of_squares = KernelChoice(   # (NumPy's float32 sum of a strided array loses bits)
    "sum of squares", onednn=lambda data: openmp_kernels.whole_reduction("sum_squares", data),
    numpy=lambda data: namespace_of(data).square(data).sum(dtype=np.float64).astype(data.dtype))
_whole_nansum = KernelChoice("nansum", onednn=lambda data: openmp_kernels.whole_reduction("nansum", data),
                             numpy=lambda data: _numpy_nansum(data))
_whole_extremes = {
    True: KernelChoice("max", onednn=lambda data: openmp_kernels.whole_reduction("max", data),
                       numpy=lambda data: data.max()),
    False: KernelChoice("min", onednn=lambda data: openmp_kernels.whole_reduction("min", data),
                        numpy=lambda data: data.min())}


def _large_float32(data, kind):
    """Whether ``data`` is a float32 array large enough for the loop of reduction ``kind``."""
    return data.dtype == np.float32 and data.size >= openmp_kernels.WHOLE_REDUCTION_MIN_ELEMENTS[kind]


# Running sums of a large row-major float32 array, forward (``cumsum``) or from the end.
_running_sums = KernelChoice("cumsum", onednn=openmp_kernels.cumsum_float32,
                             numpy=lambda data, axis, reverse=False: (
                                 _reversed_cumsum_array(namespace_of(data), data, axis) if reverse
                                 else data.cumsum(axis=axis)))


# Running products of a large row-major float32 array (``cumprod``).
_running_products = KernelChoice("cumprod", onednn=openmp_kernels.cumprod_float32,
                                 numpy=lambda data, axis: data.cumprod(axis=axis))


def _cumprod_array(data, dtype=None, axis=0):
    """``cumprod(data, axis, dtype)`` on the backend (a large float32 NumPy array's by the
    kernel choice, copied row-major first where it is not)."""
    if dtype is None and _large_float32_scan(data):
        return _running_products(np.ascontiguousarray(data), axis)
    return namespace_of(data).cumprod(data, axis=axis, dtype=dtype)


def _large_float32_scan(data):
    """Whether ``data`` is a float32 NumPy array large enough for the running loops (one copy
    row-major costs less than NumPy's accumulation, an element at a time, over a strided or
    expanded array)."""
    return (data.dtype == np.float32 and data.size >= openmp_kernels.SCAN_MIN_ELEMENTS
            and data.__class__ is np.ndarray)


def _large_float32_rows(data):
    return _large_float32_scan(data) and data.flags.c_contiguous


def _cumsum_array(data, dtype=None, axis=0):
    """``cumsum(data, axis, dtype)`` on the backend (a large float32 NumPy array's by the
    kernel choice, copied row-major first where it is not)."""
    if dtype is None and _large_float32_scan(data):
        return _running_sums(np.ascontiguousarray(data), axis)
    return data.cumsum(axis=axis, dtype=dtype)   # (the method: NumPy's ``cumsum`` wrapper costs more)


def _float32_sum_of_all(data):
    """The sum of all of a float32 array's elements (a large one's by the kernel choice)."""
    if data.size >= openmp_kernels.SUM_MIN_ELEMENTS:
        return _whole_sum(data)
    return data.sum()


def _quiet(xp):
    """Silence the backend's floating point warnings where torch's inf or nan is the answer."""
    errstate = getattr(xp, "errstate", None)
    return errstate(divide="ignore", invalid="ignore") if errstate else contextlib.nullcontext()


def _accumulating_out(dtype, out, kernel=None):
    """The dtype a sum-like op accumulates in when it writes into ``out=``: ``out``'s, as
    torch computes in it (``dtype``, when given, must be that one); ``kernel`` names the
    op's CPU kernel, which has no bool loop."""
    od = out_dtype(out)
    if od is None:
        return dtype
    if dtype is not None and to_np_dtype(dtype) != od:
        raise RuntimeError(f"Expected out tensor to have dtype {typeid_word(to_np_dtype(dtype))}, but "
                           f"got {typeid_word(od)} instead")
    if kernel is not None and od.kind == "b":
        raise not_implemented(kernel, od)
    return _dtype.from_numpy_dtype(od)


def _nan_out_dtype(input, out):
    """nansum's and nanmean's out= dtype (they compute in it): torch's kernel has no integer,
    bool or complex loop for a floating input."""
    od = out_dtype(out)
    if od is None:
        return None
    if input._data.dtype.kind in "fc" and od.kind not in "f" and od != _dtype.bfloat16.np:
        raise not_implemented("nansum_cpu", od)
    return _dtype.from_numpy_dtype(od)


def _floating_out(result, out, op):
    """write_out for an op whose out= must be floating (or complex), as logsumexp's."""
    od = out_dtype(out)
    if od is not None and od.kind not in "fc" and od != _dtype.bfloat16.np:
        raise RuntimeError(f"{op}(): Expected floating point type for result tensor, but got: {_type_word(od)}")
    return write_out(result, out, False, op)


def _along(dim, index):
    """A basic-indexing key that applies ``index`` to dimension ``dim``."""
    return (slice(None),) * dim + (index,)


# ----------------------------------------------------------------------------------------
# sum, nansum

class SumBackward0(Node):
    __slots__ = ()
    saved_fields = {"self_sym_sizes": "in_shape"}
    sparse_input = None   # ember.sparse.sum's input array: its gradient is sparse, at its entries

    def jvp(self, tangent):
        return tangent.sum()

    def backward(self, grad):
        if self.sparse_input is not None:
            from ..sparse._ops import sum_gradient
            return (sum_gradient(self.sparse_input, grad),)
        return (_as_dtype(grad, self.in_dtype).expand(self.in_shape),)

    def backward_arrays(self, grad):
        """``expand``'s view of the gradient, made without its op."""
        data = grad._data
        if self.sparse_input is not None or data.dtype != self.in_dtype:
            return None
        return (make_view(expanded_array(data, self.in_shape), grad),)


class SumBackward1(Node):
    __slots__ = ()
    saved_fields = {"dim": "dims", "keepdim": "keepdim", "self_sym_sizes": "in_shape"}

    def jvp(self, tangent):
        return tangent.sum(self.dims, keepdim=self.keepdim) if self.dims else tangent.sum()

    def backward(self, grad):
        return (expand_grad(_as_dtype(grad, self.in_dtype), self.in_shape, self.dims, self.keepdim),)

    def backward_arrays(self, grad):
        """``expand``'s view of the gradient (reshaped where the dims were dropped), made
        without its ops."""
        data = grad._data
        if grad.__class__ is not Tensor or data.dtype != self.in_dtype:
            return None
        if not self.keepdim and self.in_shape:
            grad = make_view(data.reshape(_kept_shape(self.in_shape, self.dims)), grad)
        return (make_view(expanded_array(grad._data, self.in_shape), grad),)


def sum(input, dim=None, keepdim=False, *, dtype=None, out=None, **numpy_names):
    """Returns the sum of all elements of ``input``, or of each row over ``dim`` (an int or a
    tuple of ints; an empty tuple means all). Integer and bool inputs sum to int64; ``dtype``
    casts the input before summing. With ``out=`` (only with ``dim``, as torch) the sum is
    taken in ``out``'s dtype. ``axis`` and ``keepdims`` may name ``dim`` and ``keepdim``."""
    if numpy_names:
        dim, keepdim = _numpy_names(dim, keepdim, numpy_names, "sum")
    if out is None:
        return _sum_entry[0](input, dim, keepdim) if dtype is None else _sum(input, dim, keepdim, dtype)
    if dim is None:
        raise TypeError("sum(): out= needs a dim: torch's sum(input, *, dtype=None) takes no out")
    return write_out(_sum(input, dim, keepdim, _accumulating_out(dtype, out)), out, op="sum")


def _sum(input, dim, keepdim, dtype):
    try:
        data = input._data
    except AttributeError as error:   # a tensor-like argument: its __torch_function__
        kwargs = {k: v for k, v in (("dim", dim), ("keepdim", keepdim), ("dtype", dtype)) if v}
        return dispatch_or_raise(sum, (input,), (input,), kwargs, error)
    np_dtype = _int_to_int64(data, dtype)
    if dim is None and not keepdim:
        out = make(_float32_sum_of_all(data) if np_dtype is None and data.dtype == np.float32
                   else _accumulated(array_sum, data, np_dtype))
        node = record(SumBackward0, (input,), out)
        if node is not None:
            node.in_shape, node.in_dtype = data.shape, data.dtype
        return out
    dims = _reduce_dims(dim, data.ndim)
    axis = _axis(dims, data.ndim)
    if axis is None and not keepdim and np_dtype is None and data.dtype == np.float32:   # (every dim)
        out = make(_float32_sum_of_all(data))
    else:
        out = make(_accumulated(array_sum, data, np_dtype, axis=axis, keepdims=keepdim))
    node = record(SumBackward1, (input,), out)
    if node is not None:
        node.in_shape, node.in_dtype, node.dims, node.keepdim = data.shape, data.dtype, dims, keepdim
    return out


def _plain_sum(input, dim=None, keepdim=False):
    """``sum`` without a dtype: what its compiled function (``_compiled_functions``) leaves to Python."""
    return _sum(input, dim, keepdim, None)


def _row_sums(squares):
    """A reduction's ``rows`` (``_compiled_functions.Reduction``): the row loop ``_array_sums`` sums float32 rows
    on (of their squares, ``squares``), and the sizes it takes."""
    return (lambda: openmp_kernels.row_sums_address(squares), ROW_SUM_MIN_ELEMENTS, openmp_kernels.ROW_SUMS_MIN_WIDTH,
            sys.maxsize, openmp_kernels.ROWS_THREADS_MIN_ELEMENTS)   # (rows of any length)


# (a small sum over dims is NumPy's reduction, the one ``_array_sums.sum_over`` takes below this)
_SMALL_SUM_ELEMENTS = COLUMN_SUM_MIN_ROWS - 1
_sum_entry = _compiled_functions.register(
    _plain_sum, SumBackward1, kind="reduce", ufunc=np.add, max_elements=_SMALL_SUM_ELEMENTS,
    addresses=lambda: openmp_kernels.whole_reduction_addresses("sum"),
    specifics=_compiled_functions.Reduction(SumBackward0, ("in",), ("in", "dims"),
                                            loop_min=openmp_kernels.WHOLE_REDUCTION_MIN_ELEMENTS["sum"],
                                            rows=_row_sums(squares=False)))


class NansumBackward0(Node):
    __slots__ = ()
    saved_fields = {"self": 0, "dim": "dims", "keepdim": "keepdim"}
    jvp = jvp_by_transposition

    def backward(self, grad):
        (x,) = self.saved_tensors
        xd = x._data
        grad = expand_grad(_as_dtype(grad, xd.dtype), xd.shape, self.dims, self.keepdim)
        counted = make((~namespace_of(xd).isnan(xd)).astype(xd.dtype))
        with _quiet(namespace_of(xd)):
            return (grad * counted,)  # as torch: an infinite grad gives NaN at NaN inputs


def _nansum_array(data, **kwargs):
    """``nansum`` on arrays (all of a large float32 array's by the kernel choice)."""
    if (kwargs.get("axis") is None and not kwargs.get("keepdims") and kwargs.get("dtype") is None
            and _large_float32(data, "nansum")):
        return _whole_nansum(data)
    return _numpy_nansum(data, **kwargs)


def _numpy_nansum(data, **kwargs):
    """A plain sum when there is no NaN (one pass to find out), else the sum with NaNs replaced
    by zeros."""
    xp = namespace_of(data)
    if data.dtype.kind in "fc":
        nan = xp.isnan(data)
        if nan.any():
            data = xp.where(nan, data.dtype.type(0), data)
    return data.sum(**kwargs)


def nansum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Returns the sum of the elements of ``input``, treating NaN as zero. With ``out=`` the
    sum is taken in ``out``'s dtype."""
    if out is None:
        return _nansum_entry[0](input, dim, keepdim) if dtype is None else _nansum(input, dim, keepdim, dtype=dtype)
    if dtype is not None and out_dtype(out) is not None and to_np_dtype(dtype) != out_dtype(out):
        raise RuntimeError(f"nansum: provided dtype must match dtype of result. Got "
                           f"{_type_word(out_dtype(out))} and {_type_word(to_np_dtype(dtype))}.")
    return write_out(_nansum(input, dim, keepdim, dtype=_nan_out_dtype(input, out)), out, op="nansum")


def _nansum(input, dim=None, keepdim=False, *, dtype=None):
    data = input._data
    if data.dtype.kind == "c":
        raise RuntimeError("nansum on CPU does not support complex inputs")
    dims = _reduce_dims(dim, data.ndim)
    np_dtype = _int_to_int64(data, dtype)
    out = make(_accumulated(_nansum_array, data, np_dtype, axis=_axis(dims, data.ndim),
                            keepdims=keepdim))
    node = record(NansumBackward0, (input,), out)
    if node is not None:
        node.save(input)
        node.dims, node.keepdim = dims, keepdim
    return out


def _plain_nansum(input, dim=None, keepdim=False):
    """``nansum`` without a dtype: what its compiled function leaves to Python."""
    return _nansum(input, dim, keepdim)


# (a small float tensor without NaN: NumPy's sum, as ``_numpy_nansum`` takes it there)
_nansum_entry = _compiled_functions.register(
    _plain_nansum, NansumBackward0, ("self",), kind="reduce", ufunc=np.add,
    max_elements=openmp_kernels.WHOLE_REDUCTION_MIN_ELEMENTS["nansum"] - 1,
    addresses=lambda: openmp_kernels.whole_reduction_addresses("nansum"),
    specifics=_compiled_functions.Reduction(NansumBackward0, ("dims",), ("dims",), without_nan=True,
                                            loop_min=openmp_kernels.WHOLE_REDUCTION_MIN_ELEMENTS["nansum"]))


# ----------------------------------------------------------------------------------------
# mean, nanmean

class MeanBackward0(Node):
    __slots__ = ()
    saved_fields = {"self_sym_sizes": "in_shape", "self_sym_numel": "count"}

    def jvp(self, tangent):
        return tangent.sum() / self.count

    def backward(self, grad):
        return ((_as_dtype(grad, self.in_dtype) / self.count).expand(self.in_shape),)


class MeanBackward1(Node):
    __slots__ = ()
    saved_fields = {"dim": "dims", "keepdim": "keepdim", "self_sym_sizes": "in_shape",
                    "self_sym_numel": lambda node: math.prod(node.in_shape)}

    def jvp(self, tangent):
        return tangent.sum(self.dims, keepdim=self.keepdim) / self.count

    def backward(self, grad):
        grad = _as_dtype(grad, self.in_dtype) / self.count
        return (expand_grad(grad, self.in_shape, self.dims, self.keepdim),)

    def backward_arrays(self, grad):
        """``backward`` on the arrays: the quotient, then ``expand``'s view of it."""
        data = grad._data
        if grad.__class__ is not Tensor or data.dtype != self.in_dtype or data.dtype not in _ARRAY_GRAD_DTYPES:
            return None
        xp = namespace_of(data)
        scaled = xp.asarray(xp.true_divide(data, self.count))   # (a 0-d quotient is a scalar)
        if not self.keepdim and self.in_shape:
            scaled = scaled.reshape(_kept_shape(self.in_shape, self.dims))
        return (make_view(expanded_array(scaled, self.in_shape), make(scaled)),)


def _mean_data(xp, data, dims, keepdim):
    """The mean over ``dims`` in ``data``'s dtype; NaN (without a warning) over no elements."""
    if _count(data.shape, dims) == 0:
        shape = _kept_shape(data.shape, dims) if keepdim else _reduced_shape(data.shape, dims)
        return xp.full(shape, math.nan, dtype=data.dtype)
    axis = _axis(dims, data.ndim)
    if axis is None and not keepdim and data.dtype == np.float32:
        return _float32_sum_of_all(data) / _count(data.shape, dims)
    if data.dtype.kind in "fc" and data.dtype.itemsize >= 4:
        return array_sum(data, axis=axis, keepdims=keepdim) / _count(data.shape, dims)
    return narrowed(xp.mean(widened(data), axis=axis, keepdims=keepdim), data.dtype)


def _mean_input(op, data, dtype):
    """``data`` in the dtype ``op`` averages in, with torch's error for integer dtypes."""
    if dtype is not None:
        target = _dtype.to_dtype(dtype)
        if not (target.is_floating_point or target.is_complex):
            raise RuntimeError(f"{op}(): could not infer output dtype. Optional dtype must be either a "
                               f"floating point or complex dtype. Got: {_type_word(target.np)}")
        return data.astype(target.np, copy=False)
    if not _is_inexact(data):
        raise RuntimeError(f"{op}(): could not infer output dtype. Input dtype must be either a floating "
                           f"point or complex dtype. Got: {_type_word(data.dtype)}")
    return data


def mean(input, dim=None, keepdim=False, *, dtype=None, out=None, **numpy_names):
    """Returns the mean of all elements of ``input``, or of each row over ``dim``; the input
    must have a floating point or complex dtype (or ``dtype`` must name one). With ``out=`` of
    a floating point or complex dtype the mean is taken in it. ``axis`` and ``keepdims`` may
    name ``dim`` and ``keepdim``."""
    if numpy_names:
        dim, keepdim = _numpy_names(dim, keepdim, numpy_names, "mean")
    if out is None:
        return _mean_entry[0](input, dim, keepdim) if dtype is None else _mean(input, dim, keepdim, dtype)
    od = out_dtype(out)
    if od is not None and (od.kind in "fc" or od == _dtype.bfloat16.np):
        dtype = _accumulating_out(dtype, out)
    elif od is not None and dim is None:   # (torch's overload without a dim says so)
        raise RuntimeError(f"mean.dtype_out(): input types can't be cast to the desired output type "
                           f"{_type_word(od)}")
    return write_out(_mean(input, dim, keepdim, dtype), out, op="mean")


def _mean(input, dim, keepdim, dtype):
    try:
        data = _mean_input("mean", input._data, dtype)
    except AttributeError as error:   # a tensor-like argument: its __torch_function__
        kwargs = {k: v for k, v in (("dim", dim), ("keepdim", keepdim), ("dtype", dtype)) if v}
        return dispatch_or_raise(mean, (input,), (input,), kwargs, error)
    dims = _reduce_dims(dim, data.ndim)
    out = make(_mean_data(namespace_of(data), data, dims, keepdim))
    cls = MeanBackward0 if dim is None and not keepdim else MeanBackward1
    node = record(cls, (input,), out)
    if node is not None:
        node.in_shape, node.in_dtype, node.dims, node.keepdim = data.shape, input._data.dtype, dims, keepdim
        node.count = _count(data.shape, dims)
    return out


def _plain_mean(input, dim=None, keepdim=False):
    """``mean`` without a dtype: what its compiled function (``_compiled_functions``) leaves to Python."""
    return _mean(input, dim, keepdim, None)


_mean_entry = _compiled_functions.register(
    _plain_mean, MeanBackward1, kind="reduce", ufunc=np.add, max_elements=_SMALL_SUM_ELEMENTS,
    addresses=lambda: openmp_kernels.whole_reduction_addresses("sum"),
    specifics=_compiled_functions.Reduction(MeanBackward0, ("in", "dims", "count"), ("in", "dims", "count"),
                                            divides=True, loop_min=openmp_kernels.WHOLE_REDUCTION_MIN_ELEMENTS["sum"],
                                            rows=_row_sums(squares=False)))


def nanmean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Returns the mean of the non-NaN elements of ``input`` (NaN where all are NaN). With
    ``out=`` the mean is taken in ``out``'s dtype."""
    if out is None:
        return _nanmean(input, dim, keepdim, dtype=dtype)
    if not _is_inexact(input._data):
        _nanmean(input, dim, keepdim, dtype=dtype)   # torch's error for integer input
    od = _nan_out_dtype(input, out)
    return write_out(_nanmean(input, dim, keepdim, dtype=od if dtype is None else dtype), out,
                     op="nanmean")


def _nanmean(input, dim=None, keepdim=False, *, dtype=None):
    data = input._data
    if not _is_inexact(data):
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype but got "
                           f"{_type_word(data.dtype)}")
    xp = namespace_of(data)
    dims = _reduce_dims(dim, data.ndim)
    axis = _axis(dims, data.ndim)
    if (dtype is None and data.__class__ is np.ndarray and data.dtype in _ARRAY_GRAD_DTYPES and not forward_mode.active
            and not (grad_state.grad_enabled and input._requires_grad)):
        return make(_nanmean_array(data, dims, axis, keepdim))
    counted = make(xp.sum(~xp.isnan(data), axis=axis, keepdims=keepdim))
    with _quiet(xp):
        return _nansum(input, dim, keepdim, dtype=dtype) / counted


def _nanmean_array(data, dims, axis, keepdim):
    """nanmean of a float32 or float64 NumPy array where nothing records: nansum's array over the counts of
    its other elements in the sum's dtype, as the tensors' division computes it (each count the reduction's
    size where no element is NaN); 0 / 0, NaN, without NumPy's warning."""
    nan = np.isnan(data)
    has_nan = nan.any()
    if _large_float32(data, "nansum"):
        total = _nansum_array(data, axis=axis, keepdims=keepdim)
    else:   # (``_numpy_nansum``'s, its NaNs found once)
        total = (np.where(nan, data.dtype.type(0), data) if has_nan else data).sum(axis=axis, keepdims=keepdim)
    if has_nan:
        counts = (~nan).sum(axis=axis, keepdims=keepdim).astype(data.dtype)
    else:
        counts = data.dtype.type(_count(data.shape, dims))
    if counts.all():
        return np.true_divide(total, counts)
    with _quiet(np):
        return np.true_divide(total, counts)


# ----------------------------------------------------------------------------------------
# reversed scans and exclusive products (private helpers of the prod and scan gradients)

def _reversed_cumsum(t, dim):
    """out[i] = sum of t[j] for j >= i along ``dim``."""
    return flip(cumsum(flip(t, dim), dim), dim)


def _exclusive_cumprod(t, dim):
    """out[i] = product of t[j] for j < i along ``dim`` (1 at i = 0); exact with zeros."""
    xp = namespace_of(t._data)
    shape = t._data.shape
    n = shape[dim]
    head = t[_along(dim, slice(0, n - 1))]
    shifted = slice_scatter_zeros(head, shape, _along(dim, slice(1, None)))
    first = xp.zeros((1,) * dim + (n,) + (1,) * (len(shape) - dim - 1), dtype=t._data.dtype)
    first[_along(dim, 0)] = 1
    return cumprod(shifted + make(first), dim)


def _products_of_others(t, dim):
    """out[i] = product of t[j] for j != i along ``dim``, without dividing (zeros are fine)."""
    before = _exclusive_cumprod(t, dim)
    after = flip(_exclusive_cumprod(flip(t, dim), dim), dim)
    return before * after


# ----------------------------------------------------------------------------------------
# prod

def _prod_grad(grad, x, result, dim):
    """torch's prod_backward: grad * result / x, or products of the others where x has zeros."""
    if x._data.ndim == 0:
        return grad
    if not namespace_of(x._data).any(x._data == 0):
        return grad * (result / x)
    if dim is None:
        return (grad * _products_of_others(x.reshape(-1), 0)).reshape(x._data.shape)
    if x._data.shape[dim] == 1:
        return grad.expand(x._data.shape)
    return grad * _products_of_others(x, dim)


class ProdBackward0(Node):
    __slots__ = ()
    saved_fields = {"self": 0, "result": 1}
    jvp = jvp_by_transposition

    def backward(self, grad):
        x, result = self.saved_tensors
        dt = x._data.dtype
        return (_prod_grad(_as_dtype(grad, dt), x, _as_dtype(result, dt), None),)


class ProdBackward1(Node):
    __slots__ = ()
    saved_fields = {"self": 0, "result": 1, "dim": "dim", "keepdim": "keepdim"}
    jvp = jvp_by_transposition

    def backward(self, grad):
        x, result = self.saved_tensors
        dt = x._data.dtype
        grad, result = _as_dtype(grad, dt), _as_dtype(result, dt)
        if not self.keepdim and x._data.ndim:
            grad, result = grad.unsqueeze(self.dim), result.unsqueeze(self.dim)
        return (_prod_grad(grad, x, result, self.dim),)


# From this many elements a float product of all elements multiplies rows of
# ``PRODUCT_BLOCK`` elements together (one vectorized pass) before the last row's product:
# NumPy's product of a whole array is one multiplication after another.
BLOCKED_PRODUCT_MIN_ELEMENTS = 4096
PRODUCT_BLOCK = 256


def _blocked_product_applies(data, np_dtype):
    return (data.__class__ is np.ndarray and data.size >= BLOCKED_PRODUCT_MIN_ELEMENTS
            and data.dtype.kind == "f" and data.dtype.itemsize >= 4
            and (np_dtype is None or np_dtype == data.dtype) and data.flags.c_contiguous)


def _product_of_all(data):
    flat = data.reshape(-1)
    rows = flat.size // PRODUCT_BLOCK
    split = rows * PRODUCT_BLOCK
    product = np.multiply.reduce(flat[:split].reshape(rows, PRODUCT_BLOCK), axis=0).prod()
    return product * flat[split:].prod() if split < flat.size else product


# the product of all of a large float array's elements: float32 on the loop (from its size),
# else in blocks
_whole_product = KernelChoice(
    "prod", onednn=lambda data: openmp_kernels.whole_reduction("prod", data) if data.dtype == np.float32 else None,
    numpy=_product_of_all)


def _array_prod(data, **kwargs):
    """``data.prod(...)``: the array's own method (NumPy's ``prod`` wrapper costs more than a small
    product)."""
    return data.prod(**kwargs)


@autocast_policy("fp32")
def prod(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Returns the product of all elements of ``input``, or of each row over the single
    dimension ``dim``. Integer and bool inputs multiply to int64. With ``out=`` (only with
    ``dim``, as torch) the product is taken in ``out``'s dtype."""
    if out is None:
        return _prod_entry[0](input, dim, keepdim) if dtype is None else _prod(input, dim, keepdim, dtype=dtype)
    if dim is None:
        raise TypeError("prod(): out= needs a dim: torch's prod(input, *, dtype=None) takes no out")
    return write_out(_prod(input, dim, keepdim, dtype=_accumulating_out(dtype, out)), out, op="prod")


def _prod(input, dim=None, keepdim=False, *, dtype=None):
    data = input._data
    np_dtype = _int_to_int64(data, dtype)
    if dim is None:
        out = make(_whole_product(data) if _blocked_product_applies(data, np_dtype)
                   else _accumulated(_array_prod, data, np_dtype))
        node = record(ProdBackward0, (input,), out)
    else:
        if isinstance(dim, (tuple, list)):
            raise TypeError(f"prod(): argument 'dim' must be int, not {type(dim).__name__}")
        d = wrap_dim(dim, data.ndim)
        axis = d if data.ndim else None
        out = make(_accumulated(_array_prod, data, np_dtype, axis=axis, keepdims=keepdim))
        node = record(ProdBackward1, (input,), out)
        if node is not None:
            node.dim, node.keepdim = d, keepdim
    if node is not None:
        node.save(input, out)
    return out


_prod_entry = _compiled_functions.register(_prod, ProdBackward1, kind="prod",
                                           max_elements=BLOCKED_PRODUCT_MIN_ELEMENTS - 1, specifics=(ProdBackward0,))


# ----------------------------------------------------------------------------------------
# cumsum, cumprod

class CumsumBackward0(Node):
    __slots__ = ()
    saved_fields = {"dim": "dim"}

    def jvp(self, tangent):
        return tangent.clone() if not tangent._data.ndim else tangent.cumsum(self.dim)

    def backward(self, grad):
        grad = _as_dtype(grad, self.in_dtype)
        if grad._data.ndim == 0 or grad._data.shape[self.dim] == 0:
            return (grad,)
        return (_reversed_cumsum(grad, self.dim),)

    def backward_arrays(self, grad):
        data = grad._data
        if data.dtype != self.in_dtype or not _large_float32_rows(data):
            return None
        return (make(_running_sums(data, self.dim, True)),)


def _scan(input, dim, dtype, xp_fn, node_cls):
    """A cumulative op along ``dim``; returns its node (or None) and its result."""
    data = input._data
    d = wrap_dim(dim, data.ndim)
    np_dtype = _int_to_int64(data, dtype)
    if data.ndim == 0:
        out = make(data.astype(np_dtype or data.dtype, copy=True))
    else:
        out = make(_accumulated(xp_fn, data, np_dtype, axis=d))
    node = record(node_cls, (input,), out)
    if node is not None:
        node.dim, node.in_dtype = d, data.dtype
    return node, out


def cumsum(input, dim, *, dtype=None, out=None):
    """Returns the cumulative sum of the elements of ``input`` along ``dim``: out[i] = x[0] +
    ... + x[i]. Integer and bool inputs accumulate in int64; with ``out=``, in ``out``'s dtype."""
    if out is None:
        return _cumsum(input, dim, dtype=dtype)
    dtype = _accumulating_out(dtype, out, "cumsum_out_cpu")
    result = _scan(input, dim, dtype, _cumsum_array, CumsumBackward0)[1]
    return write_out(result, out, op="cumsum")


def _cumsum(input, dim, *, dtype=None):
    return _cumsum_entry[0](input, dim) if dtype is None else _python_cumsum(input, dim, dtype)


def _python_cumsum(input, dim, dtype=None):
    return _scan(input, dim, dtype, _cumsum_array, CumsumBackward0)[1]


class CumprodBackward0(Node):
    __slots__ = ()
    saved_fields = {"self": 0, "result": 1, "dim": "dim"}
    jvp = jvp_by_transposition

    def backward(self, grad):
        x, out = self.saved_tensors
        dt = x._data.dtype
        return (_cumprod_grad(_as_dtype(grad, dt), x, _as_dtype(out, dt), self.dim),)

    def backward_arrays(self, grad):
        """With zeros in x, an O(n) masked formula instead of the exact O(n^2) one."""
        x, out = self.saved_tensors
        data = x._data
        if data.size <= 1 or data.shape[self.dim] == 1:
            return None
        xp = namespace_of(data)
        zeros = data == 0
        if not xp.any(zeros):
            return None
        grad, out = _as_dtype(grad, data.dtype), _as_dtype(out, data.dtype)
        return (make(_cumprod_grad_arrays(xp, data, zeros, grad._data, out._data, self.dim)),)


def _cumprod_grad(grad, x, out, dim):
    """torch's cumprod_backward: a reversed cumsum over x where x has no zeros, else an exact
    O(n^2) formula."""
    data = x._data
    if data.size <= 1 or data.shape[dim] == 1:
        return grad
    if not namespace_of(data).any(data == 0):
        return _reversed_cumsum(out * grad, dim) / x
    return _cumprod_grad_pairwise(grad, x, dim)


def _reversed_cumsum_array(xp, a, dim):
    return xp.flip(xp.cumsum(xp.flip(a, axis=dim), axis=dim), axis=dim)


def _cumprod_grad_arrays(xp, x, zeros, g, out, dim):
    """The gradient of cumprod where ``x`` has zeros: before a slice's first zero the usual
    formula, at it the products that skip it, after it zero."""
    zeros_so_far = xp.cumsum(zeros, axis=dim)
    before = zeros_so_far == 0
    first_zero = zeros & (zeros_so_far == 1)
    with _quiet(xp):
        usual = _reversed_cumsum_array(xp, g * out, dim) / xp.where(before, x, 1)
    skipping = xp.cumprod(xp.where(first_zero, 1, x), axis=dim)
    at_zero = _reversed_cumsum_array(xp, g * skipping, dim)
    return xp.where(before, usual, xp.where(first_zero, at_zero, 0))


def _cumprod_grad_pairwise(grad, x, dim):
    """grad_i = sum over k >= i of grad_k * prod(x_j for j <= k, j != i), from an (n, n)
    table per slice built with ember ops (so it differentiates again)."""
    xp = namespace_of(x._data)
    shape = x._data.shape
    n = shape[dim]
    pair_shape = (1,) * dim + (n, n) + (1,) * (len(shape) - dim - 1)
    table = x.unsqueeze(dim).expand(shape[:dim] + (n,) + shape[dim:])  # [.., i, j, ..] = x_j
    skip_i = make(xp.eye(n, dtype=bool).reshape(pair_shape))
    omitted = cumprod(where(skip_i, 1, table), dim + 1)  # [.., i, k, ..] = prod_{j<=k, j!=i} x_j
    k_from_i = make(xp.triu(xp.ones((n, n), dtype=bool)).reshape(pair_shape))
    return where(k_from_i, grad.unsqueeze(dim) * omitted, 0).sum(dim + 1)


def cumprod(input, dim, *, dtype=None, out=None):
    """Returns the cumulative product of the elements of ``input`` along ``dim``: out[i] =
    x[0] * ... * x[i]. Integer and bool inputs accumulate in int64; with ``out=``, in
    ``out``'s dtype."""
    if out is None:
        return _cumprod(input, dim, dtype=dtype)
    return write_out(_cumprod(input, dim, dtype=_accumulating_out(dtype, out, "cumprod_out_cpu")), out,
                     op="cumprod")


def _cumprod(input, dim, *, dtype=None):
    return _cumprod_entry[0](input, dim) if dtype is None else _python_cumprod(input, dim, dtype)


def _python_cumprod(input, dim, dtype=None):
    node, out = _scan(input, dim, dtype, _cumprod_array, CumprodBackward0)
    if node is not None:
        node.save(input, out)
    return out


# (small float32, float64 and int64 tensors: their running sums and products in C)
_cumsum_entry, _cumprod_entry = (
    _compiled_functions.register(python_op, node_cls, kind="scan", max_elements=openmp_kernels.SCAN_MIN_ELEMENTS - 1,
                                 specifics=multiplies)
    for python_op, node_cls, multiplies in ((_python_cumsum, CumsumBackward0, False),
                                            (_python_cumprod, CumprodBackward0, True)))


def _check_scan_dtype(self, dtype, op):
    if self._data.dtype.kind == "b":   # torch's in-place scan has no bool kernel
        raise not_implemented(f"{op}_out_cpu", self._data.dtype)
    if dtype is not None and _dtype.to_dtype(dtype).np != self._data.dtype:
        raise RuntimeError(f"Bad in-place call: input tensor dtype {_type_word(self._data.dtype)} and "
                           f"output tensor dtype {_type_word(_dtype.to_dtype(dtype).np)} should match")


@method("cumsum_")
def _cumsum_(self, dim, *, dtype=None):
    _check_scan_dtype(self, dtype, "cumsum")
    return apply_inplace(self, _cumsum, dim) if dtype is None else apply_inplace(self, _cumsum, dim, dtype=dtype)


@method("cumprod_")
def _cumprod_(self, dim, *, dtype=None):
    _check_scan_dtype(self, dtype, "cumprod")
    return apply_inplace(self, _cumprod, dim) if dtype is None else apply_inplace(self, _cumprod, dim, dtype=dtype)


# ----------------------------------------------------------------------------------------
# amax, amin, max, min, argmax, argmin

def _check_reducible(op, shape, dim):
    """torch's errors for a max-like reduction over zero elements (it has no identity);
    ``dim`` as the caller wrote it (None or () for all dims)."""
    if dim is None or (isinstance(dim, (tuple, list)) and not dim):
        if 0 in shape:
            raise RuntimeError(f"{op}(): Expected reduction dim to be specified for input.numel() == 0. "
                               "Specify the reduction dim with the 'dim' argument.")
        return
    for d in (dim if isinstance(dim, (tuple, list)) else (dim,)):
        if shape and shape[wrap_dim(d, len(shape))] == 0:
            raise IndexError(f"{op}(): Expected reduction dim {d} to have non-zero size.")


def _share_among_ties(grad, x, result, dims, keepdim, nan_ties):
    """The gradient of a max or min over ``dims``: split evenly between the elements equal to
    the result. With ``nan_ties`` NaN counts as equal to a NaN result (torch's ``max()``);
    without, a slice whose result is NaN has no ties and its gradient is NaN throughout
    (torch's ``amax``: the gradient over the count of ties, times the ties)."""
    xd = x._data
    xp = namespace_of(xd)
    r = result._data if keepdim else result._data.reshape(_kept_shape(xd.shape, dims))
    ties = xd == r
    if nan_ties and _is_inexact(xd):
        ties |= xp.isnan(xd) & xp.isnan(r)
    count = xp.sum(ties, axis=_axis(dims, xd.ndim), keepdims=True).astype(xd.dtype)
    with _quiet(xp):
        share = restore_dims(grad, xd.shape, dims, keepdim) / make(count)
    if nan_ties:
        return where(make(ties), share, 0)
    return share * make(ties.astype(xd.dtype))


class AmaxBackward0(Node):
    __slots__ = ()
    saved_fields = {"self": 0, "result": 1, "dim": "dims", "keepdim": "keepdim"}
    jvp = jvp_by_transposition
    nan_ties = False

    def backward(self, grad):
        x, result = self.saved_tensors
        return (_share_among_ties(grad, x, result, self.dims, self.keepdim, self.nan_ties),)


class AminBackward0(AmaxBackward0):
    __slots__ = ()


class MaxBackward1(AmaxBackward0):
    """Gradient of the full max(): shared evenly between ties, a NaN result's among the NaN."""
    __slots__ = ()
    nan_ties = True


class MinBackward1(MaxBackward1):
    __slots__ = ()


_COMPLEX_KERNELS = {"amax": "max_values_cpu", "amin": "min_values_cpu", "max": "max_all", "min": "min_all"}


def _real_dtype(np_dtype):
    """The dtype of a norm or a variance of ``np_dtype`` values: complex ones give real ones."""
    return np.finfo(np_dtype).dtype if np_dtype.kind == "c" else np_dtype


def _extreme(op, input, dim, keepdim, is_max, node_cls):
    data = input._data
    dims = _reduce_dims(dim, data.ndim)
    _check_reducible(op, data.shape, dim)
    if data.dtype.kind == "c" and data.size:   # torch checks shapes first, and skips empty input
        raise not_implemented(_COMPLEX_KERNELS[op], data.dtype)
    axis = _axis(dims, data.ndim)
    # (on one thread the loop's selects take longer than NumPy's vectorized max)
    if (axis is None and not keepdim and _large_float32(data, "max" if is_max else "min")
            and openmp_kernels.thread_count() > 1):
        out = make(_whole_extremes[is_max](data))
    else:
        find = data.max if is_max else data.min
        out = make(find(axis=axis, keepdims=keepdim))
    node = record(node_cls, (input,), out)
    if node is not None:
        node.save(input, out)
        node.dims, node.keepdim = dims, keepdim
    return out


def amax(input, dim=(), keepdim=False, *, out=None):
    """Returns the maximum of each slice of ``input`` over ``dim`` (all dims by default); the
    gradient is shared evenly between equal maxima."""
    if out is None:
        return _amax_entry[0](input, dim, keepdim)
    return write_out_exact(_python_amax(input, dim, keepdim), out, "amax", _SAME_DTYPE)


def _amax(input, dim=(), keepdim=False):
    return _amax_entry[0](input, dim, keepdim)


def _python_amax(input, dim=(), keepdim=False):
    return _extreme("amax", input, dim, keepdim, True, AmaxBackward0)


def amin(input, dim=(), keepdim=False, *, out=None):
    """Returns the minimum of each slice of ``input`` over ``dim`` (all dims by default); the
    gradient is shared evenly between equal minima."""
    if out is None:
        return _amin_entry[0](input, dim, keepdim)
    return write_out_exact(_python_amin(input, dim, keepdim), out, "amin", _SAME_DTYPE)


def _amin(input, dim=(), keepdim=False):
    return _amin_entry[0](input, dim, keepdim)


def _python_amin(input, dim=(), keepdim=False):
    return _extreme("amin", input, dim, keepdim, False, AminBackward0)



_SAME_DTYPE = ("Expected the dtype for input and out to match, but got {want} for input's dtype and "
               "{got} for out's dtype.")


class MaxBackward0(Node):
    """Gradient of max(dim): all of it to the index taken."""
    __slots__ = ()
    saved_fields = {"indices": 0, "dim": "dim", "keepdim": "keepdim", "self_sym_sizes": "in_shape"}
    jvp = jvp_by_transposition

    def backward(self, grad):
        (indices,) = self.saved_tensors
        shape, dim = self.in_shape, self.dim
        if not shape:
            return (grad,)
        xp = namespace_of(indices._data)
        taken = indices._data if self.keepdim else xp.expand_dims(indices._data, dim)
        positions = xp.arange(shape[dim]).reshape((shape[dim],) + (1,) * (len(shape) - dim - 1))
        chosen = make(taken == positions)
        return (where(chosen, restore_dims(grad, shape, (dim,), self.keepdim), 0),)

    def backward_arrays(self, grad):
        """The gradient put at the indices taken, in zeros (rather than a select over a
        one-hot mask of the input's shape)."""
        (indices,) = self.saved_tensors
        shape, dim = self.in_shape, self.dim
        gd, taken = grad._data, indices._data
        if not shape or type(gd) is not np.ndarray or type(taken) is not np.ndarray:
            return None
        if not self.keepdim:
            gd, taken = np.expand_dims(gd, dim), np.expand_dims(taken, dim)
        out = np.zeros(shape, gd.dtype)
        np.put_along_axis(out, taken, gd, dim)
        return (make(out),)


class MinBackward0(MaxBackward0):
    __slots__ = ()


def _extreme_along(op, input, dim, keepdim, is_max):
    """max/min over one dim: (values, indices), the index of the first extreme (or NaN)."""
    if isinstance(dim, (tuple, list)):
        raise TypeError(f"{op}(): argument 'dim' must be int, not {type(dim).__name__}")
    data = input._data
    xp = namespace_of(data)
    d = wrap_dim(dim, data.ndim)
    if data.ndim:
        _check_reducible(op, data.shape, d)
    if data.dtype.kind == "c":
        raise RuntimeError(f"{op}(): does not support complex input")
    if data.ndim == 0:
        values, indices = make(data.copy()), make(xp.zeros((), dtype=_INT64))
    else:
        _check_reducible(op, data.shape, d)
        taken = (xp.argmax if is_max else xp.argmin)(data, axis=d, keepdims=True)
        chosen = xp.take_along_axis(data, taken, axis=d)
        if not keepdim:
            taken, chosen = taken.squeeze(d), chosen.squeeze(d)
        values, indices = make(chosen), make(taken.astype(_INT64, copy=False))
    node = record(MaxBackward0 if is_max else MinBackward0, (input,), values)
    if node is not None:
        node.save(indices)
        node.in_shape, node.dim, node.keepdim = data.shape, d, keepdim
    return (return_types.max if is_max else return_types.min)(values, indices)


def _pairwise_extreme(op, input, other, out=None):
    if not isinstance(other, Tensor):
        raise TypeError(f"{op}(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
    fn = pointwise.maximum if op == "max" else pointwise.minimum
    return fn(input, other) if out is None else fn(input, other, out=out)


def max(input, dim=None, keepdim=False, *, other=None, out=None):
    """``max(input)``: the maximum of all elements (gradient shared evenly between ties).
    ``max(input, dim, keepdim=False)``: a named tuple ``(values, indices)`` of the maximum of
    each row over ``dim`` and its index (gradient to that index).
    ``max(input, other)``: the elementwise maximum, as ``maximum``."""
    if other is not None or isinstance(dim, Tensor):
        return _pairwise_extreme("max", input, dim if other is None else other, out)
    if dim is None:
        if out is None:
            return _max_all_entry[0](input)
        return write_out(_python_max_all(input), out, False, "max")
    if out is None:
        return _max_along_entry[0](input, dim, keepdim)
    return write_out(_extreme_along("max", input, dim, keepdim, True), out, True, "max")


def _max(input, dim=None, keepdim=False, *, other=None):
    if dim.__class__ is Tensor and other is None:   # (the elementwise maximum's common call)
        return pointwise.maximum(input, dim)
    if other is not None or isinstance(dim, Tensor):
        return _pairwise_extreme("max", input, dim if other is None else other)
    if dim is None:
        return _max_all_entry[0](input)
    return _max_along_entry[0](input, dim, keepdim)


def min(input, dim=None, keepdim=False, *, other=None, out=None):
    """``min(input)``, ``min(input, dim, keepdim=False)`` -> ``(values, indices)``, or
    ``min(input, other)``: as ``max``, for the minimum."""
    if other is not None or isinstance(dim, Tensor):
        return _pairwise_extreme("min", input, dim if other is None else other, out)
    if dim is None:
        if out is None:
            return _min_all_entry[0](input)
        return write_out(_python_min_all(input), out, False, "min")
    if out is None:
        return _min_along_entry[0](input, dim, keepdim)
    return write_out(_extreme_along("min", input, dim, keepdim, False), out, True, "min")


def _min(input, dim=None, keepdim=False, *, other=None):
    if dim.__class__ is Tensor and other is None:   # (the elementwise minimum's common call)
        return pointwise.minimum(input, dim)
    if other is not None or isinstance(dim, Tensor):
        return _pairwise_extreme("min", input, dim if other is None else other)
    if dim is None:
        return _min_all_entry[0](input)
    return _min_along_entry[0](input, dim, keepdim)


def _max_along(input, dim, keepdim=False):
    """``max(input, dim, keepdim)``: what its compiled function (``_compiled_functions``) leaves to Python."""
    return _extreme_along("max", input, dim, keepdim, True)


def _min_along(input, dim, keepdim=False):
    """``min(input, dim, keepdim)``: what its compiled function (``_compiled_functions``) leaves to Python."""
    return _extreme_along("min", input, dim, keepdim, False)


def _python_max_all(input):
    """``max(input)``: what its compiled function (``_compiled_functions``) leaves to Python."""
    return _extreme("max", input, None, False, True, MaxBackward1)


def _python_min_all(input):
    """``min(input)``: what its compiled function (``_compiled_functions``) leaves to Python."""
    return _extreme("min", input, None, False, False, MinBackward1)


# amax, amin, and max and min of all elements: NumPy's maximum or minimum reduction from C (below the size
# from which the Python op may take the loop)
_amax_entry, _amin_entry, _max_all_entry, _min_all_entry = (
    _compiled_functions.register(python_op, node_cls, ("self", "result"), kind="reduce", ufunc=ufunc,
                                 max_elements=openmp_kernels.WHOLE_REDUCTION_MIN_ELEMENTS["max"] - 1,
                                 specifics=_compiled_functions.Reduction(node_cls, ("dims",), ("dims",), any_size=True))
    for python_op, node_cls, ufunc in ((_python_amax, AmaxBackward0, np.maximum),
                                       (_python_amin, AminBackward0, np.minimum),
                                       (_python_max_all, MaxBackward1, np.maximum),
                                       (_python_min_all, MinBackward1, np.minimum)))
_max_along_entry, _min_along_entry = (
    _compiled_functions.register(python_op, node_cls, kind="extremes", specifics=(result_type, is_max))
    for python_op, node_cls, result_type, is_max in ((_max_along, MaxBackward0, return_types.max, True),
                                                     (_min_along, MinBackward0, return_types.min, False)))


def _arg_extreme(op, input, dim, keepdim, is_max):
    data = input._data
    if data.dtype.kind in "bc":
        raise RuntimeError(f"{op}(): does not support {'bool' if data.dtype.kind == 'b' else 'complex'} input")
    xp = namespace_of(data)
    find = data.argmax if is_max else data.argmin   # (the array's own methods: no dispatch by function)
    if dim is None:
        if data.size == 0:
            raise IndexError(f"{op}(): Expected reduction dim to be specified for input.numel() == 0.")
        out = xp.asarray(find(), dtype=_INT64).reshape((1,) * data.ndim if keepdim else ())
        return make(out)
    d = wrap_dim(dim, data.ndim)
    if data.ndim == 0:
        return make(xp.zeros((), dtype=_INT64))
    _check_reducible(op, data.shape, d)
    return make(find(axis=d, keepdims=keepdim).astype(_INT64, copy=False))


def argmax(input, dim=None, keepdim=False, *, out=None):
    """Returns the indices of the maximum values of ``input`` over ``dim`` (of the flattened
    input when ``dim`` is None); the first one among ties."""
    result = _arg_extreme("argmax", input, dim, keepdim, True)
    return result if out is None else write_out(result, out, True, "argmax")


def _argmax(input, dim=None, keepdim=False):
    return _arg_extreme("argmax", input, dim, keepdim, True)


def argmin(input, dim=None, keepdim=False, *, out=None):
    """Returns the indices of the minimum values of ``input`` over ``dim`` (of the flattened
    input when ``dim`` is None); the first one among ties."""
    result = _arg_extreme("argmin", input, dim, keepdim, False)
    return result if out is None else write_out(result, out, True, "argmin")


def _argmin(input, dim=None, keepdim=False):
    return _arg_extreme("argmin", input, dim, keepdim, False)


# ----------------------------------------------------------------------------------------
# var, std, var_mean, std_mean

def _correction_of(op, dim, unbiased, correction):
    """(dim, correction) from torch's forms: ``correction=``, legacy ``unbiased`` (also as
    the second positional argument, ``var(input, unbiased)``), or the default 1."""
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(f"{op}(): pass either 'unbiased' or 'correction', not both")
    if correction is None:
        correction = 0 if unbiased is False else 1
    return dim, correction


def _var_data(op, input, dims, correction, keepdim):
    """The variance over ``dims``; half and bfloat16 input give it in float32."""
    data = input._data
    if not _is_inexact(data):
        what = op if op.endswith("_mean") else "std and var"
        raise RuntimeError(f"{what} only support floating point and complex dtypes")
    data = widened(data)
    xp = namespace_of(data)
    count = _count(data.shape, dims)
    dof = count - correction
    if dof > 0:   # an infinite dof (correction -inf) too: the variance is then 0
        if data.dtype.kind == "f" and data.dtype.itemsize >= 4:
            axis = _axis(dims, data.ndim)
            # (the methods: NumPy's ``sum`` wrapper costs more than a small sum)
            centred = data - data.sum(axis=axis, keepdims=True) / count
            return (centred * centred).sum(axis=axis, keepdims=keepdim) / dof
        return xp.var(data, axis=_axis(dims, data.ndim), ddof=correction, keepdims=keepdim)
    with warnings.catch_warnings(), _quiet(xp):
        warnings.simplefilter("ignore")
        # torch takes max(0, dof), so a NaN correction divides by 0 as one past the count does
        ddof = correction if dof == dof else count
        out = xp.var(data, axis=_axis(dims, data.ndim), ddof=ddof, keepdims=keepdim)
    warnings.warn(f"{op}(): degrees of freedom is <= 0. Correction should be strictly less than the "
                  "reduction factor (input numel divided by output numel).", UserWarning, stacklevel=4)
    return out


def _var_grad(grad, x, dims, keepdim, dof):
    """torch's var_backward: 2 / (N - correction) * grad * (x - mean)."""
    scale = 2.0 / dof if dof else math.inf
    centred = x - x.mean(dims, keepdim=True)
    return scale * restore_dims(grad, x._data.shape, dims, keepdim) * centred


def _var_grad_array(grad, x, dims, keepdim, dof):
    """``_var_grad`` on arrays of one float32 or float64 dtype: the same arithmetic."""
    scale = 2.0 / dof if dof else math.inf
    centred = x - _mean_data(namespace_of(x), x, dims, True)
    if not keepdim and x.shape:
        grad = grad.reshape(_kept_shape(x.shape, dims))
    return grad * scale * centred


def _std_to_var_grad(grad, std):
    """The gradient of std passed on as one of var (zero where std is zero)."""
    xp = namespace_of(std._data)
    with _quiet(xp):
        return where(make(std._data == 0), 0, grad / (std * 2))


def _mean_grad(grad, x, dims, keepdim):
    return expand_grad(grad / _count(x._data.shape, dims), x._data.shape, dims, keepdim)


def _correction(node):
    return _count(node.saved_tensors[0]._data.shape, node.dims) - node.dof


class _MomentNode(Node):
    __slots__ = ()
    saved_fields = {"self": 0, "dim": "dims", "keepdim": "keepdim", "correction": _correction}

    def _arrays(self, grad):
        """The arrays of ``grad`` and of the saved tensors where all are float32 or float64 of
        one dtype and the variance combines some elements (else None: ``backward`` runs)."""
        data = grad._data
        if grad.__class__ is not Tensor or data.dtype not in _ARRAY_GRAD_DTYPES:
            return None
        arrays = [data]
        for t in self.saved_tensors:
            if t.__class__ is not Tensor or t._data.dtype != data.dtype:
                return None
            arrays.append(t._data)
        if not _count(arrays[1].shape, self.dims):
            return None
        return arrays

    def _grad(self, grad_var, grad_mean, x):
        gin = None
        if grad_var is not None:
            gin = _var_grad(grad_var, x, self.dims, self.keepdim, self.dof)
        if grad_mean is not None:
            gmean = _mean_grad(grad_mean, x, self.dims, self.keepdim)
            gin = gmean if gin is None else gin + gmean
        return (gin,)


class VarBackward0(_MomentNode):
    __slots__ = ()
    jvp = jvp_by_transposition

    def backward(self, grad):
        (x,) = self.saved_tensors
        return self._grad(grad, None, x)

    def backward_arrays(self, grad):
        arrays = self._arrays(grad)
        if arrays is None:
            return None
        g, x = arrays
        return (make(_var_grad_array(g, x, self.dims, self.keepdim, self.dof)),)


class StdBackward0(_MomentNode):
    __slots__ = ()
    saved_fields = dict(_MomentNode.saved_fields, result=1)
    jvp = jvp_by_transposition

    def backward(self, grad):
        x, std = self.saved_tensors
        return self._grad(_std_to_var_grad(grad, std), None, x)

    def backward_arrays(self, grad):
        """``backward``'s arithmetic on the arrays (``_std_to_var_grad``'s, then
        ``_var_grad_array``)."""
        arrays = self._arrays(grad)
        if arrays is None:
            return None
        g, x, std = arrays
        xp = namespace_of(g)
        with _quiet(xp):
            g = xp.where(std == 0, 0, g / (std * 2))
        return (make(_var_grad_array(g, x, self.dims, self.keepdim, self.dof)),)


class VarMeanBackward0(_MomentNode):
    __slots__ = ()
    jvp = jvp_by_transposition

    def backward(self, grad_var, grad_mean=None):
        (x,) = self.saved_tensors
        return self._grad(grad_var, grad_mean, x)


class StdMeanBackward0(_MomentNode):
    __slots__ = ()
    saved_fields = dict(_MomentNode.saved_fields, result0=1)
    jvp = jvp_by_transposition

    def backward(self, grad_std, grad_mean=None):
        x, std = self.saved_tensors
        grad_var = None if grad_std is None else _std_to_var_grad(grad_std, std)
        return self._grad(grad_var, grad_mean, x)


def _moments(op, input, dim, unbiased, keepdim, correction, take_sqrt, with_mean, node_cls):
    dim, correction = _correction_of(op, dim, unbiased, correction)
    data = input._data
    dims = _reduce_dims(dim, data.ndim)
    xp = namespace_of(data)
    spread = _var_data(op, input, dims, correction, keepdim)
    out = make(narrowed(xp.sqrt(spread) if take_sqrt else spread, _real_dtype(data.dtype)))
    outs = (out, make(_mean_data(xp, data, dims, keepdim))) if with_mean else (out,)
    node = record(node_cls, (input,), *outs)
    if node is not None:
        if data.dtype.kind == "c":
            raise NotImplementedError(complex_autograd_message(node_cls.__name__))
        if take_sqrt:
            node.save(input, out)
        else:
            node.save(input)
        node.dims, node.keepdim = dims, keepdim
        node.dof = _count(data.shape, dims) - correction
    return outs if with_mean else out


def _moment_out(op, input, dim, unbiased, keepdim, correction, take_sqrt, node_cls, out):
    """var or std into ``out=``: computed in ``out``'s dtype where that is a wider floating
    one, as torch does; torch's Python takes ``unbiased`` with out= only after a dim."""
    if isinstance(dim, bool):
        raise TypeError(f"{op}(): out= with unbiased as the second argument: pass dim first, or "
                        "correction=")
    od = out_dtype(out)
    data = input._data
    if od is not None and od.kind == "f" and od.itemsize > data.dtype.itemsize and data.dtype.kind == "f":
        input = input.to(_dtype.from_numpy_dtype(od))
    if od is not None and od.kind == "c" and data.dtype.kind != "c" and data.size \
            and len(_reduce_dims(_correction_of(op, dim, unbiased, correction)[0], data.ndim)) < data.ndim:
        raise not_implemented("std_cpu", od)   # torch's kernel over some dims has no real-to-complex loop
    result = _moments(op, input, dim, unbiased, keepdim, correction, take_sqrt, False, node_cls)
    return write_out(result, out, False, op)


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """Returns the variance of ``input`` over ``dim`` (all dims by default), dividing by
    N - ``correction`` (1 by default, Bessel's correction; ``unbiased=False`` means 0)."""
    if out is None:
        return _var(input, dim, unbiased, keepdim, correction=correction)
    return _moment_out("var", input, dim, unbiased, keepdim, correction, False, VarBackward0, out)


def _correction_given(dim, unbiased, correction):
    """The correction a moment's compiled function takes (``unbiased`` as 1 or 0, 1 by default), or
    None where the call is not its case (``unbiased`` as the second positional argument, or both given:
    the Python op sorts them out)."""
    if dim.__class__ is bool or (unbiased is not None and correction is not None):
        return None
    if correction is not None:
        return correction
    return 0 if unbiased is False else 1


def _var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    given = _correction_given(dim, unbiased, correction)
    if given is not None:
        return _var_entry[0](input, dim, keepdim, given)
    return _moments("var", input, dim, unbiased, keepdim, correction, False, False, VarBackward0)


def _corrected_var(input, dim=None, keepdim=False, correction=1):
    """``var`` with a correction: what its compiled function (``_compiled_functions``) leaves to
    Python."""
    return _moments("var", input, dim, None, keepdim, correction, False, False, VarBackward0)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """Returns the standard deviation of ``input`` over ``dim``: the square root of ``var``."""
    if out is None:
        return _std(input, dim, unbiased, keepdim, correction=correction)
    return _moment_out("std", input, dim, unbiased, keepdim, correction, True, StdBackward0, out)


def _std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    given = _correction_given(dim, unbiased, correction)
    if given is not None:
        return _std_entry[0](input, dim, keepdim, given)
    return _moments("std", input, dim, unbiased, keepdim, correction, True, False, StdBackward0)


def _corrected_std(input, dim=None, keepdim=False, correction=1):
    """``std`` with a correction: what its compiled function (``_compiled_functions``) leaves to
    Python."""
    return _moments("std", input, dim, None, keepdim, correction, True, False, StdBackward0)


_var_entry, _std_entry = (
    _compiled_functions.register(python_op, node_cls, saves, kind="reduce", ufunc=np.add,
                                 specifics=_compiled_functions.Reduction(node_cls, ("dims", "dof"), ("dims", "dof"),
                                                                         moment=moment))
    for python_op, node_cls, saves, moment in ((_corrected_var, VarBackward0, ("self",), "var"),
                                               (_corrected_std, StdBackward0, ("self", "result"), "std")))


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Returns the tuple ``(var, mean)`` of ``input`` over ``dim``."""
    given = _correction_given(dim, unbiased, correction)
    if given is not None:
        return _var_mean_entry[0](input, dim, keepdim, given)
    return _moments("var_mean", input, dim, unbiased, keepdim, correction, False, True,
                    VarMeanBackward0)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Returns the tuple ``(std, mean)`` of ``input`` over ``dim``."""
    given = _correction_given(dim, unbiased, correction)
    if given is not None:
        return _std_mean_entry[0](input, dim, keepdim, given)
    return _moments("std_mean", input, dim, unbiased, keepdim, correction, True, True,
                    StdMeanBackward0)


def _corrected_var_mean(input, dim=None, keepdim=False, correction=1):
    """``var_mean`` with a correction: what its compiled function leaves to Python."""
    return _moments("var_mean", input, dim, None, keepdim, correction, False, True, VarMeanBackward0)


def _corrected_std_mean(input, dim=None, keepdim=False, correction=1):
    """``std_mean`` with a correction: what its compiled function leaves to Python."""
    return _moments("std_mean", input, dim, None, keepdim, correction, True, True, StdMeanBackward0)


# (their means below the size from which ``_mean_data``'s sum over dims may take another order)
_var_mean_entry, _std_mean_entry = (
    _compiled_functions.register(python_op, node_cls, saves, kind="reduce", ufunc=np.add,
                                 max_elements=_SMALL_SUM_ELEMENTS,
                                 specifics=_compiled_functions.Reduction(node_cls, ("dims", "dof"), ("dims", "dof"),
                                                                         moment=moment))
    for python_op, node_cls, saves, moment in (
        (_corrected_var_mean, VarMeanBackward0, ("self",), "var_mean"),
        (_corrected_std_mean, StdMeanBackward0, ("self", "result"), "std_mean")))


# ----------------------------------------------------------------------------------------
# logsumexp

class LogsumexpBackward0(Node):
    __slots__ = ()
    saved_fields = {"self": 0, "result": 1, "dim": "dims", "keepdim": "keepdim"}
    jvp = jvp_by_transposition

    def backward(self, grad):
        x, result = self.saved_tensors
        shape = x._data.shape
        grad = restore_dims(grad, shape, self.dims, self.keepdim)
        return (grad * (x - restore_dims(result, shape, self.dims, self.keepdim)).exp(),)


def _logsumexp_data(xp, data, dims, keepdim):
    """log(sum(exp(data))) over ``dims``, shifted by the maximum so nothing overflows (over the
    last dim of float32 rows, by the kernel choice)."""
    if data.ndim and dims == (data.ndim - 1,):
        return _logsumexp_last(xp, data, dims, keepdim)
    return _numpy_logsumexp(xp, data, dims, keepdim)


def _logsumexp_on_rows(xp, data, dims, keepdim):
    out = vector_math.logsumexp_rows(data)
    if out is None:
        return None
    return out.reshape(data.shape[:-1] + (1,)) if keepdim else out


def _numpy_logsumexp(xp, data, dims, keepdim):
    if _count(data.shape, dims) == 0:
        shape = _kept_shape(data.shape, dims) if keepdim else _reduced_shape(data.shape, dims)
        return xp.full(shape, -math.inf, dtype=data.dtype)
    axis = _axis(dims, data.ndim)
    top = xp.max(data, axis=axis, keepdims=True)
    top = xp.where(xp.isinf(top), 0, top)
    with _quiet(xp):
        out = xp.log(xp.sum(xp.exp(data - top), axis=axis, keepdims=keepdim))
    return out + (top if keepdim else top.reshape(out.shape))


# logsumexp over the last dim on ember's row loop (the peak, then the exponentials' sum, a row at a
# time), else NumPy's passes
_logsumexp_last = KernelChoice("logsumexp", onednn=_logsumexp_on_rows, numpy=_numpy_logsumexp)


def logsumexp(input, dim, keepdim=False, *, out=None):
    """Returns log(sum(exp(input))) over ``dim``, computed stably for large inputs; integer
    inputs give the default float dtype."""
    result = _logsumexp(input, dim, keepdim)
    return result if out is None else _floating_out(result, out, "logsumexp")


def _logsumexp(input, dim, keepdim=False):
    data = float_array(input._data)
    dims = _reduce_dims(dim, data.ndim)
    result = _logsumexp_data(namespace_of(data), widened(data), dims, keepdim)
    out = make(narrowed(result, data.dtype))
    node = record(LogsumexpBackward0, (input,), out)
    if node is not None:
        node.save(input, out)
        node.dims, node.keepdim = dims, keepdim
    return out


# ----------------------------------------------------------------------------------------
# all, any, count_nonzero

def _logical(input, dim, keepdim, find):
    data = input._data
    axis = None if dim is None else normalize_dims(dim, data.ndim)
    if axis is None and keepdim:
        axis = tuple(range(data.ndim))
    if data.__class__ is np.ndarray:   # (what NumPy's any and all call, without their Python wrappers)
        out = (np.logical_or if find is np.any else np.logical_and).reduce(data, axis, np.bool_, None, keepdim)
    else:
        out = find(data, axis=axis, keepdims=keepdim)
    if data.dtype == _dtype.uint8.np:
        return make(namespace_of(data).asarray(out, dtype=data.dtype))
    return make(out)


def _logical_out(result, out, op):
    od = out_dtype(out)
    if od is not None and od.kind != "b" and od != _dtype.uint8.np:
        raise RuntimeError(f"{op} only supports bool tensor for result, got: {_type_word(od)}")
    return write_out(result, out, False, op)


def all(input, dim=None, keepdim=False, *, out=None):
    """Tests if all elements of ``input`` (or of each row over ``dim``) are nonzero. The
    result is bool (uint8 for uint8 input)."""
    result = _logical(input, dim, keepdim, namespace_of(input._data).all)
    return result if out is None else _logical_out(result, out, "all")


def _all(input, dim=None, keepdim=False):
    return _logical(input, dim, keepdim, namespace_of(input._data).all)


def any(input, dim=None, keepdim=False, *, out=None):
    """Tests if any element of ``input`` (or of each row over ``dim``) is nonzero. The result
    is bool (uint8 for uint8 input)."""
    result = _logical(input, dim, keepdim, namespace_of(input._data).any)
    return result if out is None else _logical_out(result, out, "any")


def _any(input, dim=None, keepdim=False):
    return _logical(input, dim, keepdim, namespace_of(input._data).any)


def count_nonzero(input, dim=None):
    """Counts the nonzero values of ``input`` over ``dim`` (all dims by default), as int64."""
    data = input._data
    xp = namespace_of(data)
    dims = _reduce_dims(dim, data.ndim)
    # (over every dim: no axis, NumPy's count in C rather than its Python-level reduction)
    counted = xp.count_nonzero(data, axis=dims if 0 < len(dims) < data.ndim else None)
    return make(xp.asarray(counted, dtype=_INT64))


# ----------------------------------------------------------------------------------------
# norm

def _norm_data(xp, data, p, dims, keepdim):
    axis = _axis(dims, data.ndim)
    if p == 2 and axis is None and not keepdim and _large_float32(data, "sum_squares"):
        return xp.sqrt(_whole_sum_of_squares(data))
    if p == 2 and data.dtype.kind == "f" and _count(data.shape, dims) != 1:   # (|x| * |x| is x * x)
        squares = sum_of_squares_over(data, axis, keepdim)
        return xp.sqrt(array_sum(data * data, axis=axis, keepdims=keepdim) if squares is None else squares)
    size = xp.abs(data)
    if p != 0 and _count(data.shape, dims) == 1:   # one element: |x|, as torch (even for ord NaN)
        return xp.sum(size, axis=axis, keepdims=keepdim)
    if p == 2:
        return xp.sqrt(xp.sum(size * size, axis=axis, keepdims=keepdim))
    if p == 1:
        return xp.sum(size, axis=axis, keepdims=keepdim)
    if p == math.inf:
        return xp.max(size, axis=axis, keepdims=keepdim)
    if p == -math.inf:
        return xp.min(size, axis=axis, keepdims=keepdim)
    if p == 0:
        return xp.sum(size != 0, axis=axis, keepdims=keepdim, dtype=size.dtype)
    with _quiet(xp):
        return xp.sum(size ** p, axis=axis, keepdims=keepdim) ** (1.0 / p)


def _vector_norm_grad(grad, x, norm, p, dims):
    """torch's norm_backward; ``grad`` and ``norm`` broadcast against ``x``."""
    xd = x._data
    xp = namespace_of(xd)
    if p == 1:
        return x.sign() * grad
    norm_is_zero = make(norm._data == 0)
    if p == 2:
        return grad * where(norm_is_zero, 0, x / norm)
    if math.isinf(p):
        size = xp.abs(xd)
        taken = (size == norm._data) | xp.isnan(size)
        count = xp.sum(taken, axis=_axis(dims, xd.ndim), keepdims=True).astype(xd.dtype)
        return x.sign() * where(make(taken), grad / make(count), 0)
    if p < 1:
        scaled = where(make(xd == 0), 0, x.sign() * x.abs().pow(p - 1))
        return scaled * grad * norm.pow(1 - p)
    scaled = x.sign() * x.abs().pow(p - 1) if p < 2 else x * x.abs().pow(p - 2)
    return scaled * where(norm_is_zero, 0, grad / norm.pow(p - 1))


class LinalgVectorNormBackward0(Node):
    __slots__ = ()
    saved_fields = {"self": 0, "result": 1, "dim": "dims", "keepdim": "keepdim",
                    "ord": "ord"}
    jvp = jvp_by_transposition

    def backward(self, grad):
        if self.ord == 0:
            return (None,)
        x, norm = self.saved_tensors
        shape = x._data.shape
        grad = restore_dims(grad, shape, self.dims, self.keepdim)
        norm = restore_dims(norm, shape, self.dims, self.keepdim)
        with _quiet(namespace_of(x._data)):
            return (_vector_norm_grad(grad, x, norm, self.ord, self.dims),)


def _no_identity_error(p, shape, dim):
    """torch's error for a norm (negative or infinite order) over zero elements."""
    head = f"linalg.vector_norm cannot compute the {p:g} norm on "
    tail = "the operation does not have an identity"
    if dim is None or dim == () or dim == []:
        raise RuntimeError(f"{head}an empty tensor because {tail}")
    for d in (dim if isinstance(dim, (tuple, list)) else (dim,)):
        if shape[wrap_dim(d, len(shape))] == 0:
            # torch's message lacks the space before "because"
            raise RuntimeError(f"{head}the dimension {d}because this dimension is empty and {tail}")


def _vector_norm(input, p, dim, keepdim, dtype):
    if not _is_inexact(input._data):   # checked before dtype= casts it
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as input. "
                           f"Got {_type_word(input._data.dtype)}")
    if dtype is not None:
        target = _dtype.to_dtype(dtype)
        if input._data.dtype.kind == "c" and not target.is_complex:
            raise RuntimeError("linalg.vector_norm: dtype should be complex for complex inputs, but got "
                               f"{_type_word(target.np)}")
        input = input.to(dtype)
    data = input._data
    if not _is_inexact(data):
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as input. "
                           f"Got {_type_word(data.dtype)}")
    p = float(p)
    dims = _reduce_dims(dim, data.ndim)
    if (p < 0 or p == math.inf) and _count(data.shape, dims) == 0:
        _no_identity_error(p, data.shape, dim)
    result = _norm_data(namespace_of(data), widened(data), p, dims, keepdim)
    out = make(narrowed(result, _real_dtype(data.dtype)))
    node = record(LinalgVectorNormBackward0, (input,), out)
    if node is not None:
        if data.dtype.kind == "c":
            raise NotImplementedError(complex_autograd_message("LinalgVectorNormBackward0"))
        node.save(input, out)
        node.ord, node.dims, node.keepdim = p, dims, keepdim
    return out


def _python_2_norm(input, dim=None, keepdim=False):
    """``linalg.vector_norm(input, 2, dim, keepdim)``: what its compiled function
    (``_compiled_functions``) leaves to Python."""
    return _vector_norm(input, 2, dim, keepdim, None)


_2_norm_entry = _compiled_functions.register(
    _python_2_norm, LinalgVectorNormBackward0, ("self", "result"), kind="reduce", ufunc=np.add,
    max_elements=_SMALL_SUM_ELEMENTS, addresses=lambda: openmp_kernels.whole_reduction_addresses("sum_squares"),
    specifics=_compiled_functions.Reduction(LinalgVectorNormBackward0, ("dims", "ord"), ("dims", "ord"),
                                            moment="norm",
                                            loop_min=openmp_kernels.WHOLE_REDUCTION_MIN_ELEMENTS["sum_squares"],
                                            rows=_row_sums(squares=True)))


def _python_p_norm(input, dim, keepdim, p):
    """``linalg.vector_norm(input, p, dim, keepdim)`` of an order other than 2: what its compiled
    function (``_compiled_functions``) leaves to Python."""
    return _vector_norm(input, p, dim, keepdim, None)


_p_norm_entry = _compiled_functions.register(
    _python_p_norm, LinalgVectorNormBackward0, ("self", "result"), kind="reduce", ufunc=np.add,
    max_elements=_SMALL_SUM_ELEMENTS,
    specifics=_compiled_functions.Reduction(LinalgVectorNormBackward0, ("dims", "ord"), ("dims", "ord"),
                                            moment="p_norm"))


def _vector_norm_of(input, p, dim, keepdim, dtype):
    """``linalg.vector_norm``'s result: without a dtype, by its compiled functions (the 2-norm's, or
    another order's)."""
    if dtype is None and (p.__class__ is int or p.__class__ is float):
        return _2_norm_entry[0](input, dim, keepdim) if p == 2 else _p_norm_entry[0](input, dim, keepdim, p)
    return _vector_norm(input, p, dim, keepdim, dtype)


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """Returns the norm of ``input`` over ``dim`` (all dims by default): the vector p-norm for
    a number p (inf, -inf and 0 included) or 'fro' (the 2-norm of the elements), and the matrix
    norm over two dims for 'nuc' (the sum of the singular values)."""
    return write_out(_norm(input, p, dim, keepdim, dtype), out, exact=True, op="norm")


def _norm(input, p, dim, keepdim, dtype):
    if not isinstance(p, str):
        return _vector_norm_of(input, 2 if p is None else p, dim, keepdim, dtype)
    if p == "fro" and (dim is None or isinstance(dim, int) or len(dim) <= 2):
        return _vector_norm_of(input, 2, dim, keepdim, dtype)
    from ..linalg import matrix_norm
    if dim is None:
        dims = list(range(input._data.ndim))
    else:
        dims = [dim] if isinstance(dim, int) else dim
    return matrix_norm(input, p, dims, keepdim, dtype=dtype)


@method("norm")
def _norm_method(self, p="fro", dim=None, keepdim=False, dtype=None):
    return _norm(self, p, dim, keepdim, dtype)


# ----------------------------------------------------------------------------------------
# Tensor methods

method("count_nonzero")(count_nonzero)


@method("sum")
def _sum_method(self, dim=None, keepdim=False, *, dtype=None, **numpy_names):
    # (torch's Tensor.sum and Tensor.mean take no out=: an ``out`` here is an unknown name)
    if numpy_names:
        dim, keepdim = _numpy_names(dim, keepdim, numpy_names, "sum")
    return _sum_entry[0](self, dim, keepdim) if dtype is None else _sum(self, dim, keepdim, dtype)


@method("mean")
def _mean_method(self, dim=None, keepdim=False, *, dtype=None, **numpy_names):
    if numpy_names:
        dim, keepdim = _numpy_names(dim, keepdim, numpy_names, "mean")
    return _mean_entry[0](self, dim, keepdim) if dtype is None else _mean(self, dim, keepdim, dtype)


# the functions below take torch's out=; their Tensor methods, as torch's, take none
for _name in ("nansum", "nanmean", "amax", "amin", "max", "min", "argmax", "argmin", "var", "std",
              "logsumexp", "all", "any", "cumsum", "cumprod"):
    method(_name)(globals()["_" + _name])
del _name


@method("prod")
@autocast_policy("fp32")
def _prod_method(input, dim=None, keepdim=False, *, dtype=None):   # (no out=, as torch's)
    return _prod_entry[0](input, dim, keepdim) if dtype is None else _prod(input, dim, keepdim, dtype=dtype)


@method()
def sum_to_size(self, *sizes, size=None):
    """Sums this tensor to ``size``, which must be expandable to this tensor's size."""
    if size is None:
        size = sizes[0] if len(sizes) == 1 and isinstance(sizes[0], (tuple, list, Size)) else sizes
    size = tuple([int(s) for s in size])
    shape = self._data.shape
    lead = len(shape) - len(size)
    dims = list(range(lead)) if lead >= 0 else None   # (the leading dims, and those size has as 1)
    if dims is not None:
        for i, s in enumerate(size):
            if s != shape[lead + i]:
                if s != 1:
                    dims = None
                    break
                dims.append(lead + i)
    if dims is None:
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
    result = _sum_entry[0](self, tuple(dims), True) if dims else self
    return result.reshape(size) if lead else result


# Linear and dtype-preserving: their backward is the same for complex tensors.
for _node_cls in (SumBackward0, SumBackward1, MeanBackward0, MeanBackward1):
    complex_autograd(_node_cls)
