"""Converters of gathers, scatters and indexed assignments: ``ScatterElements`` (with its
reductions) for the scatter/index_* family, indexed assignment as a scatter into the flat
positions the index selects, and the ops whose result length is known only when the graph runs
(``nonzero``, ``masked_select``, ``unique``, ``bincount``) through ``NonZero``, ``Compress`` and
``Unique``."""
import numpy as np

from ._builder import Unsupported
from ._functions import _norm_dim, converts

__all__ = []

_END = 2 ** 62
_REDUCTIONS = {"sum": "add", "add": "add", "prod": "mul", "multiply": "mul", "amax": "max",
               "amin": "min"}


def _reduction(b, reduce):
    mode = _REDUCTIONS.get(reduce)
    if mode is None:
        raise Unsupported(f"scatter with reduce={reduce!r}")
    if mode in ("max", "min") and b.opset < 18:
        raise Unsupported(f"scatter with reduce={reduce!r} before opset 18 (ScatterElements "
                          f"takes max and min from opset 18)")
    return mode


def _updates(ctx, src, index, dtype):
    """The scatter's updates: src sliced to index's shape, or a number expanded to it."""
    b = ctx.b
    shape = b.op("Shape", [index])
    if isinstance(src, (int, float, bool)):
        return b.op("Expand", [b.scalar(src, dtype), shape])
    rank = len(ctx.shape(src))
    sv = ctx.t_as(src, dtype)
    if rank == 0:
        return b.op("Expand", [sv, shape])
    return b.op("Slice", [sv, b.ints([0] * rank), shape, b.ints(range(rank))])


def _identity(b, reduce, dtype):
    return b.scalar({"add": 0, "mul": 1, "max": -np.inf if dtype.is_floating_point else
                     np.iinfo(np.int64).min, "min": np.inf if dtype.is_floating_point else
                     np.iinfo(np.int64).max}[reduce], dtype)


def _scatter(ctx, x, dim, index, updates, reduce, include_self=True, mean=False):
    """ScatterElements of ``updates`` at ``index`` along ``dim``, with a reduction; without
    ``include_self`` the targets are reset to the reduction's identity first; ``mean`` divides
    by how many values met at each target."""
    b = ctx.b
    xv = ctx.t(x)
    if not ctx.shape(x):         # a 0-d tensor: its one element, as a 1-D one
        flat = b.ints([-1])
        index, updates = b.op("Reshape", [index, flat]), b.op("Reshape", [updates, flat])
        out = _scatter_flat(ctx, x, b.op("Reshape", [xv, flat]), dim, index, updates, reduce,
                            include_self, mean)
        return b.op("Reshape", [out, b.ints([])])
    return _scatter_flat(ctx, x, xv, dim, index, updates, reduce, include_self, mean)


def _scatter_flat(ctx, x, xv, dim, index, updates, reduce, include_self, mean):
    b, dtype = ctx.b, ctx.dtype(x)
    original = xv
    if not include_self:
        filler = b.op("Expand", [_identity(b, reduce or "add", dtype), b.op("Shape", [index])])
        xv = b.op("ScatterElements", [xv, index, filler], axis=dim)
    out = b.op("ScatterElements", [xv, index, updates], axis=dim, reduction=reduce)
    if not mean:
        if not include_self:     # targets nothing reached keep their value
            reached = _reached(ctx, original, dim, index)
            return b.op("Where", [reached, out, original])
        return out
    counts = b.op("ScatterElements", [b.op("Expand", [b.scalar(1 if include_self else 0, dtype),
                                                      b.op("Shape", [original])]), index,
                                      b.op("Expand", [b.scalar(1, dtype),
                                                      b.op("Shape", [index])])],
                  axis=dim, reduction="add")
    safe = b.op("Max", [counts, b.scalar(1, dtype)])
    averaged = b.op("Div", [out, safe])
    return b.op("Where", [b.op("Equal", [counts, b.scalar(0, dtype)]), original, averaged])


def _reached(ctx, xv, dim, index):
    b = ctx.b
    zeros = b.op("Expand", [b.const(np.int64(0)), b.op("Shape", [xv])])
    ones = b.op("Expand", [b.const(np.int64(1)), b.op("Shape", [index])])
    hits = b.op("ScatterElements", [zeros, index, ones], axis=dim, reduction="add")
    return b.op("Greater", [hits, b.const(np.int64(0))])


@converts("scatter", "scatter_")
def _scatter_op(ctx, node, a):
    x = a["input"]
    dim = _norm_dim(int(a["dim"]), max(len(ctx.shape(x)), 1))
    index = ctx.t_as(a["index"], ctx.ember.int64)
    src = a.get("src") if a.get("src") is not None else a.get("value")
    updates = _updates(ctx, src, index, ctx.dtype(x))
    reduce = a.get("reduce")
    return _scatter(ctx, x, dim, index, updates, None if reduce is None else
                    _reduction(ctx.b, reduce))


@converts("scatter_add", "scatter_add_")
def _scatter_add(ctx, node, a):
    x = a["input"]
    dim = _norm_dim(int(a["dim"]), max(len(ctx.shape(x)), 1))
    index = ctx.t_as(a["index"], ctx.ember.int64)
    return _scatter(ctx, x, dim, index, _updates(ctx, a["src"], index, ctx.dtype(x)), "add")


def _scatter_extreme(ctx, x, dim, index, updates, index_shape, largest, include_self):
    """amax/amin scatter before opset 18, composed: with ``dim`` moved last, each target
    position takes the extreme of the updates whose index hits it (a comparison with every
    position), the index padded with -1 (hitting nothing) to the target's other sizes."""
    b, dtype = ctx.b, ctx.dtype(x)
    shape = ctx.shape(x)
    rank = len(shape)
    if rank == 0:
        raise Unsupported("amax/amin scatter into a 0-d tensor before opset 18")
    perm = [d for d in range(rank) if d != dim] + [dim]
    back = [perm.index(i) for i in range(rank)]
    xv = b.op("Transpose", [ctx.t(x)], perm=perm)
    iv = b.op("Transpose", [index], perm=perm)
    uv = b.op("Transpose", [updates], perm=perm)
    lead = [shape[d] - index_shape[d] for d in perm[:-1]]
    if any(lead):
        pads = b.ints([0] * rank + lead + [0])
        iv = b.op("Pad", [iv, pads, b.const(np.int64(-1))], mode="constant")
        uv = b.op("Pad", [uv, pads, b.scalar(0, dtype)], mode="constant")
    positions = b.unsqueeze(b.ints(range(shape[dim])), [1])                     # (N, 1)
    hit = b.op("Equal", [b.unsqueeze(iv, [-2]), positions])                     # (..., N, J)
    extreme = (-np.inf if largest else np.inf) if dtype.is_floating_point else (
        np.iinfo(np.int64).min if largest else np.iinfo(np.int64).max)
    candidates = b.op("Where", [hit, b.unsqueeze(uv, [-2]), b.scalar(extreme, dtype)])
    values = b.reduce("ReduceMax" if largest else "ReduceMin", candidates, [-1], False)
    reached = b.op("Greater", [b.reduce("ReduceSum", b.cast(hit, ctx.ember.int64), [-1], False),
                               b.const(np.int64(0))])
    if include_self:
        values = b.op("Max" if largest else "Min", [values, xv])
    out = b.op("Where", [reached, values, xv])
    return b.op("Transpose", [out], perm=back)


def _extreme_before_18(ctx, reduce):
    return reduce in ("amax", "amin") and ctx.b.opset < 18


@converts("scatter_reduce", "scatter_reduce_")
def _scatter_reduce(ctx, node, a):
    x = a["input"]
    dim = _norm_dim(int(a["dim"]), max(len(ctx.shape(x)), 1))
    index = ctx.t_as(a["index"], ctx.ember.int64)
    updates = _updates(ctx, a["src"], index, ctx.dtype(x))
    reduce, include_self = a["reduce"], bool(a.get("include_self", True))
    if _extreme_before_18(ctx, reduce):
        return _scatter_extreme(ctx, x, dim, index, updates, ctx.shape(a["index"]),
                                reduce == "amax", include_self)
    if reduce == "mean":
        return _scatter(ctx, x, dim, index, updates, "add", include_self, mean=True)
    return _scatter(ctx, x, dim, index, updates, _reduction(ctx.b, reduce), include_self)


def _index_along(ctx, index, dim, source):
    """A 1-D ``index`` of positions along ``dim`` as a ScatterElements index shaped as
    ``source``."""
    b = ctx.b
    rank = len(ctx.shape(source))
    shape = [1] * max(rank, 1)
    shape[dim] = -1
    iv = b.op("Reshape", [ctx.t_as(index, ctx.ember.int64), b.ints(shape)])
    return b.op("Expand", [iv, b.op("Shape", [ctx.t(source)])]) if rank else iv


def _source_values(ctx, source, dtype):
    values = ctx.t_as(source, dtype)
    return ctx.b.op("Reshape", [values, ctx.b.ints([-1])]) if not ctx.shape(source) else values


@converts("index_add", "index_add_")
def _index_add(ctx, node, a):
    x, source = a["input"], a["source"]
    dim = _norm_dim(int(a["dim"]), max(len(ctx.shape(x)), 1))
    dtype = ctx.dtype(x)
    updates = _source_values(ctx, source, dtype)
    if a.get("alpha", 1) != 1:
        updates = ctx.b.op("Mul", [updates, ctx.b.scalar(a["alpha"], dtype)])
    return _scatter(ctx, x, dim, _index_along(ctx, a["index"], dim, source), updates, "add")


@converts("index_copy", "index_copy_")
def _index_copy(ctx, node, a):
    x, source = a["input"], a["source"]
    dim = _norm_dim(int(a["dim"]), max(len(ctx.shape(x)), 1))
    return _scatter(ctx, x, dim, _index_along(ctx, a["index"], dim, source),
                    _source_values(ctx, source, ctx.dtype(x)), None)


@converts("index_reduce", "index_reduce_")
def _index_reduce(ctx, node, a):
    x, source = a["input"], a["source"]
    dim = _norm_dim(int(a["dim"]), max(len(ctx.shape(x)), 1))
    index = _index_along(ctx, a["index"], dim, source)
    updates = _source_values(ctx, source, ctx.dtype(x))
    reduce, include_self = a["reduce"], bool(a.get("include_self", True))
    if _extreme_before_18(ctx, reduce):
        return _scatter_extreme(ctx, x, dim, index, updates, ctx.shape(source) or (1,),
                                reduce == "amax", include_self)
    if reduce == "mean":
        return _scatter(ctx, x, dim, index, updates, "add", include_self, mean=True)
    return _scatter(ctx, x, dim, index, updates, _reduction(ctx.b, reduce), include_self)


@converts("index_fill", "index_fill_")
def _index_fill(ctx, node, a):
    x = a["input"]
    b, shape = ctx.b, ctx.shape(x)
    rank = len(shape)
    dim = _norm_dim(int(a["dim"]), max(rank, 1))
    n = shape[dim] if rank else 1
    positions = b.ints(range(n))
    index = b.op("Reshape", [ctx.t_as(a["index"], ctx.ember.int64), b.ints([-1])])
    index = b.op("Mod", [b.op("Add", [index, b.const(np.int64(n))]), b.const(np.int64(n))])
    hit = b.op("Greater", [b.reduce("ReduceSum", b.cast(b.op("Equal", [
        b.unsqueeze(positions, [1]), b.unsqueeze(index, [0])]), ctx.ember.int64), [1], False),
        b.const(np.int64(0))])
    target = [1] * max(rank, 1)
    target[dim] = n
    mask = b.op("Reshape", [hit, b.ints(target)])
    if not rank:
        mask = b.squeeze(mask, [0])
    return b.op("Where", [mask, ctx.t_as(a["value"], ctx.dtype(x)), ctx.t(x)])


def _positions(ctx, x):
    """An int64 tensor of ``x``'s shape numbering its elements in row-major order."""
    b = ctx.b
    shape = b.op("Shape", [ctx.t(x)])
    total = b.reduce("ReduceProd", shape, None, True)
    numbers = b.op("Range", [b.const(np.int64(0)), b.squeeze(total, [0]), b.const(np.int64(1))])
    return b.op("Reshape", [numbers, shape])


def _assign_flat(ctx, x, where, values, accumulate=False):
    """``x`` with the flat positions ``where`` set to (or, accumulating, increased by)
    ``values``, of ``where``'s shape."""
    b = ctx.b
    flat = b.op("Reshape", [ctx.t(x), b.ints([-1])])
    where = b.op("Reshape", [where, b.ints([-1])])
    spread = b.op("Reshape", [values, b.ints([-1])])
    out = b.op("ScatterElements", [flat, where, spread], axis=0,
               reduction="add" if accumulate else None)
    return b.op("Reshape", [out, b.op("Shape", [ctx.t(x)])])


def _broadcast_values(ctx, values, selected, dtype):
    """The assigned values broadcast to the selection (a number as a constant)."""
    b = ctx.b
    v = ctx.t_as(values, dtype)
    return b.op("Expand", [v, b.op("Shape", [selected])])


@converts("setitem")
def _setitem(ctx, node, a):
    """``x[index] = value``: the positions ``x[index]`` selects, read from a tensor numbering
    ``x``'s elements, receive the value."""
    x, index, value = node.args
    rank = len(ctx.shape(x))
    selected = ctx.index_value(_positions(ctx, x), rank, index)
    return _assign_flat(ctx, x, selected, _broadcast_values(ctx, value, selected,
                                                            ctx.dtype(x)))


@converts("index_put", "index_put_")
def _index_put(ctx, node, a):
    x = a["input"]
    indices = tuple(a["indices"])
    rank = len(ctx.shape(x))
    selected = ctx.index_value(_positions(ctx, x), rank, indices)
    values = _broadcast_values(ctx, a["values"], selected, ctx.dtype(x))
    return _assign_flat(ctx, x, selected, values, bool(a.get("accumulate", False)))


@converts("put", "put_")
def _put(ctx, node, a):
    x = a["input"]
    b = ctx.b
    total = b.reduce("ReduceProd", b.op("Shape", [ctx.t(x)]), None, False)
    where = ctx.t_as(a["index"], ctx.ember.int64)
    where = b.op("Mod", [b.op("Add", [where, total]), total])
    values = b.op("Reshape", [ctx.t_as(a["source"], ctx.dtype(x)), b.op("Shape", [where])])
    return _assign_flat(ctx, x, where, values, bool(a.get("accumulate", False)))


@converts("masked_scatter", "masked_scatter_")
def _masked_scatter(ctx, node, a):
    """The k-th True position of the mask (row-major) takes the k-th element of source."""
    x, mask, source = a["input"], a["mask"], a["source"]
    b = ctx.b
    shape = b.op("Shape", [b.op("Expand", [ctx.t(x), b.op("Shape", [ctx.t(mask)])])])
    flat_mask = b.op("Reshape", [b.op("Expand", [ctx.t(mask), shape]), b.ints([-1])])
    rank_of = b.op("Sub", [b.op("CumSum", [b.cast(flat_mask, ctx.ember.int64),
                                           b.const(np.int64(0))]), b.const(np.int64(1))])
    taken = b.op("Gather", [b.op("Reshape", [ctx.t_as(source, ctx.dtype(x)), b.ints([-1])]),
                            b.op("Max", [rank_of, b.const(np.int64(0))])], axis=0)
    flat = b.op("Where", [flat_mask, taken, b.op("Reshape", [
        b.op("Expand", [ctx.t(x), shape]), b.ints([-1])])])
    return b.op("Reshape", [flat, shape])


@converts("take")
def _take(ctx, node, a):
    x = a["input"]
    b = ctx.b
    flat = b.op("Reshape", [ctx.t(x), b.ints([-1])])
    return b.op("Gather", [flat, ctx.t_as(a["index"], ctx.ember.int64)], axis=0)


@converts("take_along_dim")
def _take_along_dim(ctx, node, a):
    x, indices, dim = a["input"], a["indices"], a.get("dim")
    b = ctx.b
    iv = ctx.t_as(indices, ctx.ember.int64)
    if dim is None:
        return b.op("GatherElements", [b.op("Reshape", [ctx.t(x), b.ints([-1])]),
                                       b.op("Reshape", [iv, b.ints([-1])])], axis=0)
    sx, si = list(ctx.shape(x)), list(ctx.shape(indices))
    rank = max(len(sx), len(si))
    dim = _norm_dim(int(dim), rank)
    sx, si = [1] * (rank - len(sx)) + sx, [1] * (rank - len(si)) + si
    common = [max(p, q) for p, q in zip(sx, si)]
    tx, ti = list(common), list(common)
    tx[dim], ti[dim] = sx[dim], si[dim]
    xv = b.op("Expand", [ctx.t(x), b.ints(tx)]) if tx != list(ctx.shape(x)) else ctx.t(x)
    iv = b.op("Expand", [iv, b.ints(ti)]) if ti != list(ctx.shape(indices)) else iv
    return b.op("GatherElements", [xv, iv], axis=dim)


# -- results whose length the values decide -------------------------------------------------------
def _nonzero_rows(ctx, x):
    """(N, rank) indices of the nonzero elements; a 0-d tensor gives (N, 0), N 0 or 1."""
    b = ctx.b
    b.value_dependent = True
    if not ctx.shape(x):
        rows = b.op("Transpose", [b.op("NonZero", [b.op("Reshape", [ctx.t(x), b.ints([1])])])],
                    perm=[1, 0])
        return b.op("Slice", [rows, b.ints([0]), b.ints([0]), b.ints([1])])
    return b.op("Transpose", [b.op("NonZero", [ctx.t(x)])], perm=[1, 0])


@converts("nonzero")
def _nonzero(ctx, node, a):
    x = a["input"]
    if a.get("as_tuple"):
        b = ctx.b
        b.value_dependent = True
        xv = ctx.t(x) if ctx.shape(x) else b.op("Reshape", [ctx.t(x), b.ints([1])])
        rows = b.op("NonZero", [xv])
        n = max(len(ctx.shape(x)), 1)
        return tuple(b.op("Gather", [rows, b.const(np.int64(i))], axis=0) for i in range(n))
    return _nonzero_rows(ctx, x)


@converts("argwhere")
def _argwhere(ctx, node, a):
    return _nonzero_rows(ctx, a["input"])


@converts("masked_select")
def _masked_select(ctx, node, a):
    ctx.b.value_dependent = True
    x, mask = a["input"], a["mask"]
    b = ctx.b
    dtype = ctx.node_dtype(node)
    xv, mv = ctx.t_as(x, dtype), ctx.t(mask)
    shape = b.op("Shape", [b.op("Expand", [xv, b.op("Shape", [mv])])])
    flat = b.op("Reshape", [b.op("Expand", [xv, shape]), b.ints([-1])])
    keep = b.op("Reshape", [b.op("Expand", [mv, shape]), b.ints([-1])])
    return b.op("Compress", [flat, keep], axis=0)


@converts("unique")
def _unique(ctx, node, a):
    """ONNX's Unique (sorted), its inverse reshaped as the input."""
    ctx.b.value_dependent = True
    x = a["input"]
    b = ctx.b
    dim = a.get("dim")
    xv = ctx.t(x)
    dtype = ctx.dtype(x)
    cast_back = None
    if dtype not in (ctx.ember.float32, ctx.ember.int64, ctx.ember.int8):
        cast_back = dtype
        xv = b.cast(xv, ctx.ember.float64 if dtype.is_floating_point else ctx.ember.int64)
        if dtype.is_floating_point and dtype != ctx.ember.float64:
            xv = b.cast(xv, ctx.ember.float32)
    if dim is None:
        values, _, inverse, counts = b.op("Unique", [b.op("Reshape", [xv, b.ints([-1])])],
                                          outputs=4, sorted=1)
        inverse = b.op("Reshape", [inverse, b.op("Shape", [ctx.t(x)])])
    else:
        values, _, inverse, counts = b.op("Unique", [xv], outputs=4, sorted=1,
                                          axis=_norm_dim(int(dim), len(ctx.shape(x))))
    if cast_back is not None:
        values = b.cast(values, cast_back)
    out = [values]
    if a.get("return_inverse"):
        out.append(inverse)
    if a.get("return_counts"):
        out.append(counts)
    return out[0] if len(out) == 1 else tuple(out)


@converts("unique_consecutive")
def _unique_consecutive(ctx, node, a):
    """A value starts a run where it differs from the one before; ``Compress`` keeps those."""
    ctx.b.value_dependent = True
    x = a["input"]
    if a.get("dim") is not None:
        raise Unsupported("unique_consecutive with dim")
    b = ctx.b
    flat = b.op("Reshape", [ctx.t(x), b.ints([-1])])
    later = b.op("Slice", [flat, b.ints([1]), b.ints([_END])])
    earlier = b.op("Slice", [flat, b.ints([0]), b.ints([-1])])
    starts = b.op("Concat", [b.const(np.array([True])), b.op("Not", [b.op("Equal", [
        later, earlier])])], axis=0)
    values = b.op("Compress", [flat, starts], axis=0)
    out = [values]
    if a.get("return_inverse"):
        run = b.op("Sub", [b.op("CumSum", [b.cast(starts, ctx.ember.int64),
                                           b.const(np.int64(0))]), b.const(np.int64(1))])
        out.append(b.op("Reshape", [run, b.op("Shape", [ctx.t(x)])]))
    if a.get("return_counts"):
        positions = b.op("Range", [b.const(np.int64(0)), b.op("Size", [flat]),
                                   b.const(np.int64(1))])
        first = b.op("Compress", [positions, starts], axis=0)
        bounds = b.op("Concat", [first, b.unsqueeze(b.op("Size", [flat]), [0])], axis=0)
        out.append(b.op("Sub", [b.op("Slice", [bounds, b.ints([1]), b.ints([_END])]),
                                b.op("Slice", [bounds, b.ints([0]), b.ints([-1])])]))
    return out[0] if len(out) == 1 else tuple(out)


@converts("bincount")
def _bincount(ctx, node, a):
    """Counts (or summed weights) of each value in 0..max(max + 1, minlength) - 1."""
    ctx.b.value_dependent = True
    x, weights = a["input"], a.get("weights")
    b = ctx.b
    dtype = ctx.node_dtype(node)
    xv = ctx.t_as(x, ctx.ember.int64)
    top = b.op("Add", [b.reduce("ReduceMax", b.op("Concat", [xv, b.const(np.array(
        [-1], dtype=np.int64))], axis=0), None, False), b.const(np.int64(1))])
    length = b.op("Max", [top, b.const(np.int64(int(a.get("minlength", 0))))])
    bins = b.op("Range", [b.const(np.int64(0)), length, b.const(np.int64(1))])
    hits = b.op("Equal", [b.unsqueeze(xv, [1]), b.unsqueeze(bins, [0])])     # (n, bins)
    if weights is None:
        return b.reduce("ReduceSum", b.cast(hits, dtype), [0], False)
    wv = b.unsqueeze(ctx.t_as(weights, dtype), [1])
    return b.reduce("ReduceSum", b.op("Where", [hits, wv, b.scalar(0, dtype)]), [0], False)
