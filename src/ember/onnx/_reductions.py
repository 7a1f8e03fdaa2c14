"""Converters of reductions and scans ONNX composes: variance and standard deviation with a
correction, vector and matrix norms, all/any, NaN-skipping sums, cumulative products, maxima
and log-sum-exps (as a reduction over a lower-triangular mask), sorting and order statistics
through ``TopK``, histograms and bucketing by comparison."""
import math

import numpy as np

from ._builder import Unsupported
from ._functions import CONVERTERS, _ints, _norm_dim, converts
from ._pointwise import truth

__all__ = ["reduce_axes", "vector_norm", "sort_along"]


def reduce_axes(ctx, x, dim):
    """The axes ``dim`` names (all of ``x``'s when None or empty), normalized."""
    rank = len(ctx.shape(x))
    if dim is None or dim == () or dim == []:
        return list(range(rank))
    return [_norm_dim(int(d), max(rank, 1)) for d in _ints(dim, 1)]


def _count(ctx, xv, axes, dtype):
    """How many elements the reduction over ``axes`` of ``xv`` takes, as a ``dtype`` scalar."""
    b = ctx.b
    sizes = b.op("Gather", [b.op("Shape", [xv]), b.ints(axes)], axis=0) if axes else b.ints([1])
    return b.cast(b.reduce("ReduceProd", sizes, None, False), dtype)


def _moments(ctx, a, want):
    x = a["input"]
    b, dtype = ctx.b, ctx.dtype(x)
    xv = ctx.t(x)
    if isinstance(a.get("dim"), bool):          # var(x, False): the legacy unbiased flag
        a = dict(a, unbiased=a["dim"], dim=None)
    axes = reduce_axes(ctx, x, a.get("dim"))
    keepdim = bool(a.get("keepdim", False))
    correction = a.get("correction")
    if correction is None:
        correction = 0 if a.get("unbiased") is False else 1
    if not ctx.shape(x):
        axes = []
    mean_kept = b.reduce("ReduceMean", xv, axes or None, True)
    centered = b.op("Sub", [xv, mean_kept])
    total = b.reduce("ReduceSum", b.op("Mul", [centered, centered]), axes or None, keepdim)
    n = _count(ctx, xv, axes, dtype)
    var = b.op("Div", [total, b.op("Max", [b.op("Sub", [n, b.scalar(correction, dtype)]),
                                           b.scalar(0.0, dtype)])])
    out = []
    for what in want:
        if what == "var":
            out.append(var)
        elif what == "std":
            out.append(b.op("Sqrt", [var]))
        else:
            out.append(mean_kept if keepdim else b.reduce("ReduceMean", xv, axes or None, False))
    return out[0] if len(out) == 1 else tuple(out)


CONVERTERS["var"] = lambda ctx, node, a: _moments(ctx, a, ["var"])
CONVERTERS["std"] = lambda ctx, node, a: _moments(ctx, a, ["std"])
CONVERTERS["var_mean"] = lambda ctx, node, a: _moments(ctx, a, ["var", "mean"])
CONVERTERS["std_mean"] = lambda ctx, node, a: _moments(ctx, a, ["std", "mean"])


def vector_norm(ctx, xv, dtype, p, axes, keepdim):
    """The p-norm of ``xv`` over ``axes`` (all when None), p any number or ±inf."""
    b = ctx.b
    if p == 2:
        return b.reduce("ReduceL2", xv, axes, keepdim)
    if p == 1:
        return b.reduce("ReduceL1", xv, axes, keepdim)
    if p == math.inf:
        return b.reduce("ReduceMax", b.op("Abs", [xv]), axes, keepdim)
    if p == -math.inf:
        return b.reduce("ReduceMin", b.op("Abs", [xv]), axes, keepdim)
    if p == 0:
        nonzero = b.cast(b.op("Not", [b.op("Equal", [xv, b.scalar(0.0, dtype)])]), dtype)
        return b.reduce("ReduceSum", nonzero, axes, keepdim)
    powered = b.op("Pow", [b.op("Abs", [xv]), b.scalar(float(p), dtype)])
    return b.op("Pow", [b.reduce("ReduceSum", powered, axes, keepdim),
                        b.scalar(1.0 / p, dtype)])


def _norm_input(ctx, node, x, dtype_arg):
    dtype = ctx.node_dtype(node)
    if ctx.dtype(x).is_complex:
        raise Unsupported("the norm of a complex tensor")
    return ctx.t_as(x, dtype), dtype


@converts("norm")
def _norm(ctx, node, a):
    x, p = a["input"], a.get("p", "fro")
    xv, dtype = _norm_input(ctx, node, x, a.get("dtype"))
    dim, keepdim = a.get("dim"), bool(a.get("keepdim", False))
    if p == "nuc":
        raise Unsupported("the nuclear norm (it needs singular values, and ONNX has no SVD)")
    axes = None if dim is None else reduce_axes(ctx, x, dim)
    return vector_norm(ctx, xv, dtype, 2 if p in ("fro", None) else p, axes, keepdim)


@converts("vector_norm")
def _vector_norm(ctx, node, a):
    x = a["input"]
    xv, dtype = _norm_input(ctx, node, x, a.get("dtype"))
    dim = a.get("dim")
    axes = None if dim is None else reduce_axes(ctx, x, dim)
    return vector_norm(ctx, xv, dtype, a.get("ord", 2), axes, bool(a.get("keepdim", False)))


def _matrix_norm_value(ctx, xv, dtype, ord, dims, rank, keepdim):
    b = ctx.b
    d0, d1 = (_norm_dim(int(d), rank) for d in dims)
    if ord == "fro":
        return b.reduce("ReduceL2", xv, [d0, d1], keepdim)
    if ord in (1, -1, math.inf, -math.inf):
        summed, kept = (d0, d1) if ord in (1, -1) else (d1, d0)
        sums = b.reduce("ReduceSum", b.op("Abs", [xv]), [summed], True)
        out = b.reduce("ReduceMax" if ord > 0 else "ReduceMin", sums, [kept], True)
        return out if keepdim else b.squeeze(out, sorted([d0, d1]))
    raise Unsupported(f"the matrix norm of ord={ord!r} (it needs singular values, and ONNX has "
                      f"no SVD)")


@converts("matrix_norm")
def _matrix_norm(ctx, node, a):
    A = a["A"] if "A" in a else a["input"]
    xv, dtype = _norm_input(ctx, node, A, a.get("dtype"))
    return _matrix_norm_value(ctx, xv, dtype, a.get("ord", "fro"), a.get("dim", (-2, -1)),
                              len(ctx.shape(A)), bool(a.get("keepdim", False)))


@converts("ember.linalg.norm")
def _linalg_norm(ctx, node, a):
    A = a["A"] if "A" in a else a["input"]
    xv, dtype = _norm_input(ctx, node, A, a.get("dtype"))
    ord, dim, keepdim = a.get("ord"), a.get("dim"), bool(a.get("keepdim", False))
    rank = len(ctx.shape(A))
    if isinstance(dim, int):
        dim = [dim]
    if (dim is not None and len(dim) == 2) or (dim is None and ord is not None and rank == 2):
        return _matrix_norm_value(ctx, xv, dtype, "fro" if ord is None else ord,
                                  dim or (-2, -1), rank, keepdim)
    axes = None if dim is None else reduce_axes(ctx, A, dim)
    return vector_norm(ctx, xv, dtype, 2 if ord is None else ord, axes, keepdim)


@converts("dist")
def _dist(ctx, node, a):
    dtype = ctx.node_dtype(node)
    diff = ctx.b.op("Sub", [ctx.t_as(a["input"], dtype), ctx.t_as(a["other"], dtype)])
    return vector_norm(ctx, diff, dtype, a.get("p", 2), None, False)


@converts("cdist")
def _cdist(ctx, node, a):
    """The p-norm of each pair's difference, (..., P, 1, M) against (..., 1, R, M)."""
    b, dtype = ctx.b, ctx.node_dtype(node)
    x1 = b.unsqueeze(ctx.t_as(a["x1"], dtype), [-2])
    x2 = b.unsqueeze(ctx.t_as(a["x2"], dtype), [-3])
    return vector_norm(ctx, b.op("Sub", [x1, x2]), dtype, a.get("p", 2.0), [-1], False)


@converts("pdist")
def _pdist(ctx, node, a):
    """The distances of the rows i < j, in row-major order (the pairs from the traced row
    count)."""
    x = a["input"]
    b, dtype = ctx.b, ctx.node_dtype(node)
    n = ctx.shape(x)[0]
    rows, cols = np.triu_indices(n, 1)
    xv = ctx.t_as(x, dtype)
    diff = b.op("Sub", [b.op("Gather", [xv, b.ints(rows)], axis=0),
                        b.op("Gather", [xv, b.ints(cols)], axis=0)])
    return vector_norm(ctx, diff, dtype, a.get("p", 2), [-1], False)


@converts("renorm", "renorm_")
def _renorm(ctx, node, a):
    x = a["input"]
    b, dtype, xv = ctx.b, ctx.dtype(x), ctx.t(x)
    rank = len(ctx.shape(x))
    dim = _norm_dim(int(a["dim"]), rank)
    others = [d for d in range(rank) if d != dim]
    norms = vector_norm(ctx, xv, dtype, a["p"], others, True)
    maxnorm = b.scalar(a["maxnorm"], dtype)
    factor = b.op("Where", [b.op("Greater", [norms, maxnorm]), b.op("Div", [
        maxnorm, b.op("Add", [norms, b.scalar(1e-7, dtype)])]), b.scalar(1.0, dtype)])
    return b.op("Mul", [xv, factor])


def _all_any(reduce_all):
    def convert(ctx, node, a):
        """all: no element is zero; any: some element is not (as counts, so that an empty
        reduction gives True for all and False for any)."""
        x = a["input"]
        b = ctx.b
        flag = truth(ctx, x)
        if a.get("dim") in ((), []):            # no dimension named: nothing is reduced
            out = flag
        else:
            if reduce_all:
                flag = b.op("Not", [flag])
            axes = reduce_axes(ctx, x, a.get("dim")) if ctx.shape(x) else None
            counted = b.reduce("ReduceSum", b.cast(flag, ctx.ember.int64), axes,
                               bool(a.get("keepdim", False)))
            zero = b.const(np.int64(0))
            out = b.op("Equal" if reduce_all else "Greater", [counted, zero])
        dtype = ctx.node_dtype(node)
        return out if dtype in (None, ctx.ember.bool) else b.cast(out, dtype)
    return convert


CONVERTERS["all"] = _all_any(True)
CONVERTERS["any"] = _all_any(False)


@converts("count_nonzero")
def _count_nonzero(ctx, node, a):
    x = a["input"]
    dim = a.get("dim")
    axes = reduce_axes(ctx, x, dim) if ctx.shape(x) else None
    return ctx.b.reduce("ReduceSum", ctx.b.cast(truth(ctx, x), ctx.ember.int64), axes, False)


def _nan_reduce(mean):
    def convert(ctx, node, a):
        x = a["input"]
        b, dtype = ctx.b, ctx.node_dtype(node)
        xv = ctx.t_as(x, dtype)
        axes = reduce_axes(ctx, x, a.get("dim")) if ctx.shape(x) else None
        keepdim = bool(a.get("keepdim", False))
        if not dtype.is_floating_point:
            return b.reduce("ReduceSum", xv, axes, keepdim)
        nan = b.op("IsNaN", [xv])
        total = b.reduce("ReduceSum", b.op("Where", [nan, b.scalar(0.0, dtype), xv]), axes,
                         keepdim)
        if not mean:
            return total
        count = b.reduce("ReduceSum", b.cast(b.op("Not", [nan]), dtype), axes, keepdim)
        return b.op("Div", [total, count])
    return convert


CONVERTERS["nansum"] = _nan_reduce(False)
CONVERTERS["nanmean"] = _nan_reduce(True)


@converts("aminmax")
def _aminmax(ctx, node, a):
    x = a["input"]
    dim, keepdim = a.get("dim"), bool(a.get("keepdim", False))
    axes = None if dim is None or not ctx.shape(x) else reduce_axes(ctx, x, dim)
    xv = ctx.t(x)
    return (ctx.b.reduce("ReduceMin", xv, axes, keepdim),
            ctx.b.reduce("ReduceMax", xv, axes, keepdim))


# -- scans -----------------------------------------------------------------------------------------
def _scan_operand(ctx, x, dim):
    """``x`` with ``dim`` moved last, the permutation back, and the (n, n) mask of j <= i built
    from its length in the graph."""
    b = ctx.b
    rank = len(ctx.shape(x))
    xv = ctx.t(x)
    if rank == 0:
        xv = b.unsqueeze(xv, [0])
        rank, dim = 1, 0
    dim = _norm_dim(int(dim), rank)
    perm = list(range(rank))
    perm.append(perm.pop(dim))
    if dim != rank - 1:
        xv = b.op("Transpose", [xv], perm=perm)
    length = b.op("Gather", [b.op("Shape", [xv]), b.const(np.int64(-1))], axis=0)
    positions = b.op("Range", [b.const(np.int64(0)), length, b.const(np.int64(1))])
    upto = b.op("LessOrEqual", [positions, b.unsqueeze(positions, [1])])      # [i, j]: j <= i
    back = [perm.index(i) for i in range(rank)]
    return xv, upto, positions, (back if dim != rank - 1 else None), ctx.shape(x) == ()


def _scan_result(ctx, out, back, was_scalar):
    if back is not None:
        out = ctx.b.op("Transpose", [out], perm=back)
    return ctx.b.squeeze(out, [0]) if was_scalar else out


def _masked_rows(ctx, xv, upto, fill, dtype):
    """(..., n, n): row i holds x[j] for j <= i and ``fill`` after."""
    b = ctx.b
    return b.op("Where", [upto, b.unsqueeze(xv, [-2]), b.scalar(fill, dtype)])


@converts("cumprod", "cumprod_")
def _cumprod(ctx, node, a):
    x = a["input"]
    dtype = ctx.node_dtype(node)
    xv, upto, _, back, scalar = _scan_operand(ctx, x, a["dim"])
    if dtype != ctx.dtype(x):
        xv = ctx.b.cast(xv, dtype)
    out = ctx.b.reduce("ReduceProd", _masked_rows(ctx, xv, upto, 1, dtype), [-1], False)
    return _scan_result(ctx, out, back, scalar)


@converts("logcumsumexp")
def _logcumsumexp(ctx, node, a):
    x = a["input"]
    dtype = ctx.node_dtype(node)
    xv, upto, _, back, scalar = _scan_operand(ctx, x, a["dim"])
    rows = _masked_rows(ctx, xv, upto, -np.inf, dtype)
    b = ctx.b
    peak = b.reduce("ReduceMax", rows, [-1], True)
    peak = b.op("Where", [b.op("IsInf", [peak]), b.scalar(0.0, dtype), peak])
    summed = b.reduce("ReduceSum", b.op("Exp", [b.op("Sub", [rows, peak])]), [-1], False)
    out = b.op("Add", [b.op("Log", [summed]), b.squeeze(peak, [-1])])
    return _scan_result(ctx, out, back, scalar)


def _cumulative_extreme(largest):
    def convert(ctx, node, a):
        """Values: the extreme of x[:i+1]; indices: the last j <= i holding it (as torch),
        or, once a NaN has appeared, NaN and the last NaN's index."""
        x = a["input"]
        b, dtype = ctx.b, ctx.dtype(x)
        xv, upto, positions, back, scalar = _scan_operand(ctx, x, a["dim"])
        fill = (-np.inf if largest else np.inf) if dtype.is_floating_point else (
            np.iinfo(np.int64).min if largest else np.iinfo(np.int64).max)
        rows = _masked_rows(ctx, xv, upto, fill, dtype)
        values = b.reduce("ReduceMax" if largest else "ReduceMin", rows, [-1], True)
        hit = b.op("And", [upto, b.op("Equal", [rows, values])])
        if dtype.is_floating_point:    # a NaN is the extreme from where it appears
            nan_rows = b.op("And", [upto, b.op("IsNaN", [rows])])
            any_nan = b.op("Greater", [b.reduce("ReduceSum", b.cast(nan_rows, ctx.ember.int64),
                                                [-1], True), b.const(np.int64(0))])
            values = b.op("Where", [any_nan, b.scalar(np.nan, dtype), values])
            last_nan = b.reduce("ReduceMax", b.op("Where", [
                nan_rows, positions, b.const(np.int64(-1))]), [-1], True)
            hit = b.op("Or", [b.op("And", [any_nan, b.op("Equal", [positions, last_nan])]),
                              b.op("And", [b.op("Not", [any_nan]), hit])])
        indices = b.reduce("ReduceMax", b.op("Where", [hit, positions, b.const(np.int64(-1))]),
                           [-1], False)
        values = b.squeeze(values, [-1])
        return (_scan_result(ctx, values, back, scalar),
                _scan_result(ctx, indices, back, scalar))
    return convert


CONVERTERS["cummax"] = _cumulative_extreme(True)
CONVERTERS["cummin"] = _cumulative_extreme(False)


@converts("diff")
def _diff(ctx, node, a):
    x = a["input"]
    b, dtype = ctx.b, ctx.dtype(x)
    rank = len(ctx.shape(x))
    dim = _norm_dim(int(a.get("dim", -1)), rank)
    pieces = [p for p in (a.get("prepend"), x, a.get("append")) if p is not None]
    out = ctx.t(x) if len(pieces) == 1 else b.op(
        "Concat", [_along(ctx, p, dim, rank) for p in pieces], axis=dim)
    for _ in range(int(a.get("n", 1))):
        later = b.op("Slice", [out, b.ints([1]), b.ints([2 ** 62]), b.ints([dim])])
        earlier = b.op("Slice", [out, b.ints([0]), b.ints([-1]), b.ints([dim])])
        out = b.op("Xor" if dtype == ctx.ember.bool else "Sub", [later, earlier])
    return out


def _along(ctx, value, dim, rank):
    """A prepend/append value of diff: a tensor, or a number broadcast to one slice."""
    if not isinstance(value, (int, float)):
        return ctx.t(value)
    raise Unsupported("diff with a number as prepend or append")


# -- order statistics ------------------------------------------------------------------------------
def sort_along(ctx, xv, dim, largest, k=None):
    """``TopK`` of ``xv`` along ``dim``: all of it (sorted) when ``k`` is None. Ties keep their
    order (ONNX's TopK puts the lower index first)."""
    b = ctx.b
    if k is None:
        k = b.op("Gather", [b.op("Shape", [xv]), b.const(np.int64(dim))], axis=0)
        k = b.unsqueeze(k, [0])
    elif isinstance(k, int):
        k = b.ints([k])
    else:
        k = b.unsqueeze(ctx.b.cast(k, ctx.ember.int64), [0])
    return b.op("TopK", [xv, k], outputs=2, axis=dim, largest=int(largest), sorted=1)


def _sortable(ctx, x):
    """``x``'s ONNX value and the dtype TopK runs in (bools and small ints as int64)."""
    dtype = ctx.dtype(x)
    if dtype in (ctx.ember.float32, ctx.ember.float64, ctx.ember.int64, ctx.ember.int32,
                 ctx.ember.float16):
        return ctx.t(x), None
    if dtype.is_floating_point:
        return ctx.b.cast(ctx.t(x), ctx.ember.float32), dtype
    return ctx.b.cast(ctx.t(x), ctx.ember.int64), dtype


def _restore(ctx, values, dtype):
    return values if dtype is None else ctx.b.cast(values, dtype)


def _sort_pair(ctx, x, dim, descending):
    rank = len(ctx.shape(x))
    xv, dtype = _sortable(ctx, x)
    if rank == 0:
        return ctx.t(x), ctx.b.op("Expand", [ctx.b.const(np.int64(0)), ctx.b.ints([])])
    values, indices = sort_along(ctx, xv, _norm_dim(int(dim), rank), descending)
    return _restore(ctx, values, dtype), indices


@converts("sort")
def _sort(ctx, node, a):
    return _sort_pair(ctx, a["input"], a.get("dim", -1), bool(a.get("descending", False)))


@converts("argsort")
def _argsort(ctx, node, a):
    return _sort_pair(ctx, a["input"], a.get("dim", -1), bool(a.get("descending", False)))[1]


@converts("msort")
def _msort(ctx, node, a):
    return _sort_pair(ctx, a["input"], 0, False)[0]


@converts("topk")
def _topk(ctx, node, a):
    x = a["input"]
    rank = len(ctx.shape(x))
    if not rank:                          # k is 0 or 1 of the one element
        return ctx.t(x), ctx.b.const(np.int64(0))
    xv, dtype = _sortable(ctx, x)
    values, indices = sort_along(ctx, xv, _norm_dim(int(a.get("dim", -1)), max(rank, 1)),
                                 bool(a.get("largest", True)), a["k"])
    return _restore(ctx, values, dtype), indices


def _kth_smallest(ctx, x, k, dim, keepdim):
    """The k-th smallest (1-based) along ``dim`` and its index."""
    b = ctx.b
    rank = len(ctx.shape(x))
    xv, dtype = _sortable(ctx, x)
    values, indices = sort_along(ctx, xv, dim, False, k)
    last = b.ints([-1])
    values = b.op("Slice", [values, last, b.ints([2 ** 62]), b.ints([dim])])
    indices = b.op("Slice", [indices, last, b.ints([2 ** 62]), b.ints([dim])])
    if not keepdim and rank:
        values, indices = b.squeeze(values, [dim]), b.squeeze(indices, [dim])
    return _restore(ctx, values, dtype), indices


@converts("kthvalue")
def _kthvalue(ctx, node, a):
    x = a["input"]
    rank = len(ctx.shape(x))
    if not rank:
        return ctx.t(x), ctx.b.const(np.int64(0))
    return _kth_smallest(ctx, x, int(a["k"]), _norm_dim(int(a.get("dim", -1)), max(rank, 1)),
                         bool(a.get("keepdim", False)))


@converts("median")
def _median(ctx, node, a):
    """The lower median (the ((n - 1) // 2 + 1)-th smallest); NaN where a NaN is present."""
    x, dim = a["input"], a.get("dim")
    b = ctx.b
    if dim is None:
        flat = b.op("Reshape", [ctx.t(x), b.ints([-1])])
        n = int(np.prod(ctx.shape(x), dtype=np.int64))
        values, _ = sort_along(ctx, flat, 0, False, (n - 1) // 2 + 1)
        value = b.squeeze(b.op("Slice", [values, b.ints([-1]), b.ints([2 ** 62])]), [0])
        return _nan_if_any(ctx, ctx.t(x), value, None, False, ctx.dtype(x))
    rank = len(ctx.shape(x))
    keepdim = bool(a.get("keepdim", False))
    if not rank:
        return ctx.t(x), b.const(np.int64(0))
    dim = _norm_dim(int(dim), rank)
    xv = ctx.t(x)
    n = b.op("Gather", [b.op("Shape", [xv]), b.const(np.int64(dim))], axis=0)
    k = b.op("Add", [b.op("Div", [b.op("Sub", [n, b.const(np.int64(1))]), b.const(np.int64(2))]),
                     b.const(np.int64(1))])
    values, indices = _kth_smallest(ctx, x, k, dim, keepdim)
    if not ctx.dtype(x).is_floating_point:
        return values, indices
    nan = b.op("IsNaN", [xv])
    shape = [1] * rank
    shape[dim] = -1
    positions = b.op("Reshape", [b.op("Range", [b.const(np.int64(0)), n, b.const(np.int64(1))]),
                                 b.ints(shape)])
    first_nan = b.reduce("ReduceMin", b.op("Where", [nan, positions, n]), [dim], keepdim)
    has_nan = b.op("Less", [first_nan, n])
    return (b.op("Where", [has_nan, b.scalar(np.nan, ctx.dtype(x)), values]),
            b.op("Where", [has_nan, first_nan, indices]))


def _nan_if_any(ctx, xv, value, axes, keepdim, dtype):
    if not dtype.is_floating_point:
        return value
    b = ctx.b
    nans = b.reduce("ReduceSum", b.cast(b.op("IsNaN", [xv]), ctx.ember.int64), axes, keepdim)
    nan = b.scalar(np.nan, dtype)
    return b.op("Where", [b.op("Greater", [nans, b.const(np.int64(0))]), nan, value])


@converts("nanmedian")
def _nanmedian(ctx, node, a):
    """The lower median of the values that are not NaN (NaN where all are), NaNs sorted last
    as +inf; ``k`` differs per row, so the pick is a GatherElements."""
    x, dim = a["input"], a.get("dim")
    b, dtype = ctx.b, ctx.dtype(x)
    xv = ctx.t(x)
    keepdim = bool(a.get("keepdim", False))
    if dim is None:
        xv, dim = b.op("Reshape", [xv, b.ints([-1])]), 0
    else:
        dim = _norm_dim(int(dim), max(len(ctx.shape(x)), 1))
    nan = b.op("IsNaN", [xv])
    values, indices = sort_along(ctx, b.op("Where", [nan, b.scalar(np.inf, dtype), xv]), dim,
                                 False)
    present = b.reduce("ReduceSum", b.cast(b.op("Not", [nan]), ctx.ember.int64), [dim], True)
    pick = b.op("Max", [b.op("Div", [b.op("Sub", [present, b.const(np.int64(1))]),
                                     b.const(np.int64(2))]), b.const(np.int64(0))])
    value = b.op("GatherElements", [values, pick], axis=dim)
    index = b.op("GatherElements", [indices, pick], axis=dim)
    value = b.op("Where", [b.op("Equal", [present, b.const(np.int64(0))]),
                           b.scalar(np.nan, dtype), value])
    if a.get("dim") is None:
        return b.squeeze(value, [0])
    if not keepdim:
        value, index = b.squeeze(value, [dim]), b.squeeze(index, [dim])
    return value, index


def _interpolation_weight(ctx, a, position, low, dtype):
    """How far from the lower neighbour the quantile lies, by ``interpolation``."""
    b = ctx.b
    mode = a.get("interpolation", "linear")
    if mode == "linear":
        return b.op("Sub", [position, low])
    if mode == "nearest":                     # round half to even, as torch ranks
        return b.op("Sub", [b.op("Round", [position]), low])
    fixed = {"lower": 0.0, "higher": 1.0, "midpoint": 0.5}.get(mode)
    if fixed is None:
        raise Unsupported(f"quantile with interpolation={mode!r}")
    return b.op("Mul", [b.op("Sub", [b.op("Ceil", [position]), low]), b.scalar(fixed, dtype)])


@converts("quantile")
def _quantile(ctx, node, a):
    """Linear interpolation between the sorted values at floor and ceil of q (n - 1)."""
    x, q = a["input"], a["q"]
    b, dtype = ctx.b, ctx.dtype(x)
    dim, keepdim = a.get("dim"), bool(a.get("keepdim", False))
    xv = ctx.t(x)
    rank = len(ctx.shape(x))
    if dim is None:
        xv, dim, rank_used = b.op("Reshape", [xv, b.ints([-1])]), 0, 1
    else:
        dim, rank_used = _norm_dim(int(dim), max(rank, 1)), rank
    values, _ = sort_along(ctx, xv, dim, False)
    n = b.cast(b.op("Gather", [b.op("Shape", [xv]), b.const(np.int64(dim))], axis=0), dtype)
    qv = ctx.t_as(q, dtype)
    q_scalar = isinstance(q, (int, float)) or ctx.shape(q) == ()
    position = b.op("Mul", [qv, b.op("Sub", [n, b.scalar(1.0, dtype)])])
    low = b.op("Floor", [position])
    high = b.op("Ceil", [position])
    weight = _interpolation_weight(ctx, a, position, low, dtype)
    low_i, high_i = b.cast(low, ctx.ember.int64), b.cast(high, ctx.ember.int64)
    lower = b.op("Gather", [values, low_i], axis=dim)
    upper = b.op("Gather", [values, high_i], axis=dim)
    if not q_scalar:     # q's axis (inserted at dim by Gather) goes first, as torch returns it
        if dim:
            perm = [dim] + [i for i in range(rank_used) if i != dim]
            lower = b.op("Transpose", [lower], perm=perm)
            upper = b.op("Transpose", [upper], perm=perm)
        weight = b.op("Reshape", [weight, b.ints([-1] + [1] * (rank_used - 1))])
        dim += 1
    out = b.op("Add", [lower, b.op("Mul", [weight, b.op("Sub", [upper, lower])])])
    if dtype.is_floating_point:           # a NaN anywhere in the reduced values gives NaN
        nans = b.reduce("ReduceSum", b.cast(b.op("IsNaN", [xv]), ctx.ember.int64),
                        [dim - (0 if q_scalar else 1)], False)
        out = b.op("Where", [b.op("Greater", [nans, b.const(np.int64(0))]),
                             b.scalar(np.nan, dtype), out])
    if keepdim:
        if a.get("dim") is None:
            return b.op("Reshape", [out, b.ints(([-1] if not q_scalar else []) + [1] * rank)])
        return b.unsqueeze(out, [dim])
    return out


@converts("histc")
def _histc(ctx, node, a):
    """Counts of floor((x - min) bins / (max - min)) per bin (x == max in the last bin, values
    outside [min, max] not counted); min == max takes the data's range."""
    x = a["input"]
    b, dtype = ctx.b, ctx.dtype(x)
    bins = int(a.get("bins", 100))
    lo, hi = float(a.get("min", 0)), float(a.get("max", 0))
    xv = b.op("Reshape", [ctx.t(x), b.ints([-1])])
    if lo == hi:
        low, high = b.reduce("ReduceMin", xv, None, False), b.reduce("ReduceMax", xv, None, False)
        same = b.op("Equal", [low, high])
        low = b.op("Where", [same, b.op("Sub", [low, b.scalar(1.0, dtype)]), low])
        high = b.op("Where", [same, b.op("Add", [high, b.scalar(1.0, dtype)]), high])
    else:
        low, high = b.scalar(lo, dtype), b.scalar(hi, dtype)
    scaled = b.op("Div", [b.op("Mul", [b.op("Sub", [xv, low]), b.scalar(float(bins), dtype)]),
                          b.op("Sub", [high, low])])
    index = b.op("Min", [b.cast(b.op("Floor", [scaled]), ctx.ember.int64),
                         b.const(np.int64(bins - 1))])
    inside = b.op("And", [b.op("GreaterOrEqual", [xv, low]), b.op("LessOrEqual", [xv, high])])
    hits = b.op("And", [b.op("Equal", [b.unsqueeze(index, [1]),
                                       b.ints(range(bins))]), b.unsqueeze(inside, [1])])
    return b.reduce("ReduceSum", b.cast(hits, dtype), [0], False)


def _bucket(ctx, boundaries, values, right, out_int32, batched):
    """How many boundaries lie below each value (at or below when ``right``)."""
    b = ctx.b
    if isinstance(boundaries, tuple):      # an ONNX value already computed, and its dtype
        boundaries, bound_dtype = boundaries
        dtype = ctx.ember.promote_types(bound_dtype, ctx.dtype(values))
        bv = boundaries if bound_dtype == dtype else b.cast(boundaries, dtype)
    else:
        dtype = ctx.common_dtype(boundaries, values)
        bv = ctx.t_as(boundaries, dtype)
    vv = ctx.t_as(values, dtype)
    if batched:
        bv = b.unsqueeze(bv, [-2])
    below = b.op("LessOrEqual" if right else "Less", [bv, b.unsqueeze(vv, [-1])])
    count = b.reduce("ReduceSum", b.cast(below, ctx.ember.int64), [-1], False)
    return b.cast(count, ctx.ember.int32) if out_int32 else count


@converts("searchsorted")
def _searchsorted(ctx, node, a):
    seq, values = a["sorted_sequence"], a["input"]
    right = bool(a.get("right", False)) or a.get("side") == "right"
    if a.get("sorter") is not None:
        seq = ctx.b.op("GatherElements", [ctx.t(seq), ctx.t(a["sorter"])], axis=-1)
        seq_dtype, batched = ctx.dtype(a["sorted_sequence"]), len(ctx.shape(a["sorter"])) > 1
        return _bucket(ctx, (seq, seq_dtype), values, right, bool(a.get("out_int32", False)),
                       batched)
    return _bucket(ctx, seq, values, right, bool(a.get("out_int32", False)),
                   len(ctx.shape(seq)) > 1)


@converts("bucketize")
def _bucketize(ctx, node, a):
    return _bucket(ctx, a["boundaries"], a["input"], bool(a.get("right", False)),
                   bool(a.get("out_int32", False)), False)


@converts("isin")
def _isin(ctx, node, a):
    b = ctx.b
    elements, tests = a["elements"], a["test_elements"]
    dtype = ctx.common_dtype(elements, tests)
    flat = b.op("Reshape", [ctx.t_as(tests, dtype), b.ints([-1])])
    equal = b.op("Equal", [b.unsqueeze(ctx.t_as(elements, dtype), [-1]), flat])
    found = b.op("Greater", [b.reduce("ReduceSum", b.cast(equal, ctx.ember.int64), [-1], False),
                             b.const(np.int64(0))])
    return b.op("Not", [found]) if a.get("invert") else found


@converts("mode")
def _mode(ctx, node, a):
    """The smallest of the most frequent values along ``dim`` (counted by pairwise equality)
    and the last index holding it, as torch returns them."""
    x = a["input"]
    b, dtype = ctx.b, ctx.dtype(x)
    keepdim = bool(a.get("keepdim", False))
    xv, _, positions, back, scalar = _scan_operand(ctx, x, a.get("dim", -1))
    equal = b.op("Equal", [b.unsqueeze(xv, [-1]), b.unsqueeze(xv, [-2])])
    counts = b.reduce("ReduceSum", b.cast(equal, ctx.ember.int64), [-1], False)
    best = b.reduce("ReduceMax", counts, [-1], True)
    top = np.inf if dtype.is_floating_point else np.iinfo(np.int64).max
    candidates = b.op("Where", [b.op("Equal", [counts, best]), xv, b.scalar(top, dtype)])
    value = b.reduce("ReduceMin", candidates, [-1], True)
    index = b.reduce("ReduceMax", b.op("Where", [b.op("Equal", [xv, value]), positions,
                                                 b.const(np.int64(-1))]), [-1], True)
    out = []
    for v in (value, index):
        v = _scan_result(ctx, v, back, False)
        if scalar:
            v = b.op("Reshape", [v, b.ints([])])
        elif not keepdim:
            rank = len(ctx.shape(x))
            v = b.squeeze(v, [_norm_dim(int(a.get("dim", -1)), rank)])
        out.append(v)
    return tuple(out)


@converts("nanquantile")
def _nanquantile(ctx, node, a):
    """quantile over the values that are not NaN (NaNs sorted last as +inf, so each row's
    positions come from its own count); NaN where a row has none."""
    x, q = a["input"], a["q"]
    if not (isinstance(q, (int, float)) or ctx.shape(q) == ()):
        raise Unsupported("nanquantile with a tensor of several q")
    b, dtype = ctx.b, ctx.dtype(x)
    dim, keepdim = a.get("dim"), bool(a.get("keepdim", False))
    xv = ctx.t(x)
    rank = len(ctx.shape(x))
    if dim is None:
        xv, dim = b.op("Reshape", [xv, b.ints([-1])]), 0
    else:
        dim = _norm_dim(int(dim), max(rank, 1))
    nan = b.op("IsNaN", [xv])
    values, _ = sort_along(ctx, b.op("Where", [nan, b.scalar(np.inf, dtype), xv]), dim, False)
    present = b.cast(b.reduce("ReduceSum", b.cast(b.op("Not", [nan]), ctx.ember.int64), [dim],
                              True), dtype)
    last = b.op("Max", [b.op("Sub", [present, b.scalar(1.0, dtype)]), b.scalar(0.0, dtype)])
    position = b.op("Mul", [ctx.t_as(q, dtype), last])
    low = b.op("Floor", [position])
    weight = _interpolation_weight(ctx, a, position, low, dtype)
    lower = b.op("GatherElements", [values, b.cast(low, ctx.ember.int64)], axis=dim)
    upper = b.op("GatherElements", [values, b.cast(b.op("Ceil", [position]), ctx.ember.int64)],
                 axis=dim)
    out = b.op("Add", [lower, b.op("Mul", [weight, b.op("Sub", [upper, lower])])])
    out = b.op("Where", [b.op("Equal", [present, b.scalar(0.0, dtype)]),
                         b.scalar(np.nan, dtype), out])
    if a.get("dim") is None:
        return b.op("Reshape", [out, b.ints([1] * rank if keepdim else [])])
    return out if keepdim else b.squeeze(out, [dim])


@converts("histogramdd")
def _histogramdd(ctx, node, a):
    """Counts over the grid of per-dimension bins (equal bins over ``range`` or the data's
    span, or given edges): each sample's bin index in each dimension from the inner edges
    at or below it, combined row-major; samples outside any range are not counted."""
    x = a["input"]
    if a.get("density"):
        raise Unsupported("histogramdd with density=True")
    b, dtype = ctx.b, ctx.dtype(x)
    d = ctx.shape(x)[-1]
    samples = b.op("Reshape", [ctx.t(x), b.ints([-1, d])])
    bins = a.get("bins", 10)
    bins = [bins] * d if isinstance(bins, int) else list(bins)
    span = a.get("range")
    sizes, all_edges = [], []
    flat, inside = None, None
    for k, spec in enumerate(bins):
        column = b.op("Gather", [samples, b.const(np.int64(k))], axis=1)        # (N,)
        if isinstance(spec, int):
            if span is not None:
                low, high = b.scalar(float(span[2 * k]), dtype), b.scalar(float(span[2 * k + 1]),
                                                                           dtype)
            else:
                low = b.reduce("ReduceMin", column, None, False)
                high = b.reduce("ReduceMax", column, None, False)
            edges = b.op("Add", [low, b.op("Mul", [b.op("Sub", [high, low]),
                                                   b.const(np.arange(spec + 1) / spec, dtype)])])
            count = spec
        else:
            edges = ctx.t_as(spec, dtype)
            count = ctx.shape(spec)[0] - 1
            low = b.op("Gather", [edges, b.const(np.int64(0))], axis=0)
            high = b.op("Gather", [edges, b.const(np.int64(-1))], axis=0)
        inner = b.op("Slice", [edges, b.ints([1]), b.ints([-1])])
        index = b.reduce("ReduceSum", b.cast(b.op("GreaterOrEqual", [
            b.unsqueeze(column, [1]), b.unsqueeze(inner, [0])]), ctx.ember.int64), [1], False)
        within = b.op("And", [b.op("GreaterOrEqual", [column, low]),
                              b.op("LessOrEqual", [column, high])])
        flat = index if flat is None else b.op("Add", [
            b.op("Mul", [flat, b.const(np.int64(count))]), index])
        inside = within if inside is None else b.op("And", [inside, within])
        sizes.append(count)
        all_edges.append(edges)
    total = int(np.prod(sizes, dtype=np.int64))
    hits = b.op("And", [b.op("Equal", [b.unsqueeze(flat, [1]), b.ints(range(total))]),
                        b.unsqueeze(inside, [1])])
    weight = a.get("weight")
    if weight is None:
        counts = b.reduce("ReduceSum", b.cast(hits, dtype), [0], False)
    else:
        wv = b.unsqueeze(b.op("Reshape", [ctx.t_as(weight, dtype), b.ints([-1])]), [1])
        counts = b.reduce("ReduceSum", b.op("Where", [hits, wv, b.scalar(0, dtype)]), [0], False)
    return b.op("Reshape", [counts, b.ints(sizes)]), tuple(all_edges)
