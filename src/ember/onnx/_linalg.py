"""Converters of products and linear-algebra ops ONNX expresses: the matrix-vector and
scaled-accumulate products (``addmm`` and its family as ``MatMul`` and scaled ``Add``),
``tensordot``, ``multi_dot``, ``eye``, determinants through ``Det``, integer matrix powers by
repeated squaring, covariance, trapezoid integration, ``gradient`` and histograms."""
import numpy as np

from ._builder import Unsupported
from ._functions import CONVERTERS, _norm_dim, converts

__all__ = []

_END = 2 ** 62


@converts("eye")
def _eye(ctx, node, a):
    b = ctx.b
    n = a["n"]
    m = a.get("m")
    dtype = a.get("dtype") or ctx.ember.get_default_dtype()
    nv = ctx.t_as(n, ctx.ember.int64)
    mv = nv if m is None else ctx.t_as(m, ctx.ember.int64)
    zero, one = b.const(np.int64(0)), b.const(np.int64(1))
    rows = b.op("Range", [zero, nv, one])
    cols = b.op("Range", [zero, mv, one])
    return b.cast(b.op("Equal", [b.unsqueeze(rows, [1]), b.unsqueeze(cols, [0])]), dtype)


def _product_dtype(ctx, node):
    return ctx.node_dtype(node)


@converts("mv", "dot", "inner", "vdot")
def _mv(ctx, node, a):
    dtype = _product_dtype(ctx, node)
    x = a["input"]
    y = a.get("vec", a.get("other", a.get("tensor")))
    if y is None:
        y = node.args[1]
    if ctx.dtype(x).is_complex:
        raise Unsupported("products of complex tensors")
    b = ctx.b
    xv, yv = ctx.t_as(x, dtype), ctx.t_as(y, dtype)
    if not ctx.shape(x) or not ctx.shape(y):      # inner with a scalar
        return b.op("Mul", [xv, yv])
    if len(ctx.shape(y)) > 1:                      # inner: contract the last axes
        rank = len(ctx.shape(y))
        shape_x, shape_y = ctx.shape(x), ctx.shape(y)
        flat_y = b.op("Reshape", [b.op("Transpose", [yv], perm=[rank - 1] + list(
            range(rank - 1))), b.ints([shape_y[-1], -1])])
        out = b.op("MatMul", [xv, flat_y])
        return b.op("Reshape", [out, b.ints(list(shape_x[:-1]) + list(shape_y[:-1]))])
    return b.op("MatMul", [xv, yv])


@converts("outer", "ger")
def _outer(ctx, node, a):
    dtype = _product_dtype(ctx, node)
    y = a.get("vec2", a.get("other"))
    if y is None:
        y = node.args[1]
    return ctx.b.op("Mul", [ctx.b.unsqueeze(ctx.t_as(a["input"], dtype), [1]),
                            ctx.b.unsqueeze(ctx.t_as(y, dtype), [0])])


def _scaled_sum(ctx, node, a, product):
    """beta * input + alpha * product (input left out when beta is 0, as torch ignores it)."""
    b, dtype = ctx.b, ctx.node_dtype(node)
    alpha, beta = a.get("alpha", 1), a.get("beta", 1)
    if alpha != 1:
        product = b.op("Mul", [product, b.scalar(alpha, dtype)])
    if beta == 0:
        return b.op("Expand", [product, b.op("Shape", [b.op("Add", [
            product, b.op("Mul", [ctx.t_as(a["input"], dtype), b.scalar(0, dtype)])])])])
    base = ctx.t_as(a["input"], dtype)
    if beta != 1:
        base = b.op("Mul", [base, b.scalar(beta, dtype)])
    return b.op("Add", [base, product])


def _addmm_like(first, second, reduce_batch=False, outer=False):
    def convert(ctx, node, a):
        b, dtype = ctx.b, ctx.node_dtype(node)
        x, y = ctx.t_as(a[first], dtype), ctx.t_as(a[second], dtype)
        if outer:
            product = b.op("Mul", [b.unsqueeze(x, [1]), b.unsqueeze(y, [0])])
        else:
            product = b.op("MatMul", [x, y])
        if reduce_batch:
            product = b.reduce("ReduceSum", product, [0], False)
        return _scaled_sum(ctx, node, a, product)
    return convert


CONVERTERS["addmm"] = CONVERTERS["addmm_"] = _addmm_like("mat1", "mat2")
CONVERTERS["addmv"] = CONVERTERS["addmv_"] = _addmm_like("mat", "vec")
CONVERTERS["baddbmm"] = CONVERTERS["baddbmm_"] = _addmm_like("batch1", "batch2")
CONVERTERS["addbmm"] = CONVERTERS["addbmm_"] = _addmm_like("batch1", "batch2", reduce_batch=True)
CONVERTERS["addr"] = CONVERTERS["addr_"] = _addmm_like("vec1", "vec2", outer=True)


@converts("tensordot")
def _tensordot(ctx, node, a):
    """The contracted axes of a moved last and of b first, both flattened to a MatMul."""
    x, y, dims = a["a"] if "a" in a else a["input"], a["b"], a.get("dims", 2)
    b, dtype = ctx.b, ctx.node_dtype(node)
    sx, sy = ctx.shape(x), ctx.shape(y)
    if isinstance(dims, int):
        dx, dy = list(range(len(sx) - dims, len(sx))), list(range(dims))
    else:
        dx, dy = ([d] if isinstance(d, int) else list(d) for d in dims)
        dx = [_norm_dim(int(d), len(sx)) for d in dx]
        dy = [_norm_dim(int(d), len(sy)) for d in dy]
    free_x = [d for d in range(len(sx)) if d not in dx]
    free_y = [d for d in range(len(sy)) if d not in dy]
    k = int(np.prod([sx[d] for d in dx], dtype=np.int64))
    xv = b.op("Transpose", [ctx.t_as(x, dtype)], perm=free_x + dx)
    yv = b.op("Transpose", [ctx.t_as(y, dtype)], perm=dy + free_y)
    out = b.op("MatMul", [b.op("Reshape", [xv, b.ints([-1, k])]),
                          b.op("Reshape", [yv, b.ints([k, -1])])])
    return b.op("Reshape", [out, b.ints([sx[d] for d in free_x] + [sy[d] for d in free_y])])


@converts("multi_dot")
def _multi_dot(ctx, node, a):
    tensors = list(a["tensors"])
    dtype = ctx.node_dtype(node)
    out = ctx.t_as(tensors[0], dtype)
    for t in tensors[1:]:
        out = ctx.b.op("MatMul", [out, ctx.t_as(t, dtype)])
    return out


# -- determinants and powers -----------------------------------------------------------------------
def _det_input(ctx, a):
    x = a.get("A", a.get("input"))
    if ctx.dtype(x).is_complex:
        raise Unsupported("the determinant of a complex matrix")
    return ctx.t(x)


@converts("det", "ember.linalg.det")
def _det(ctx, node, a):
    return ctx.b.op("Det", [_det_input(ctx, a)])


@converts("logdet")
def _logdet(ctx, node, a):
    return ctx.b.op("Log", [ctx.b.op("Det", [_det_input(ctx, a)])])


@converts("slogdet", "ember.linalg.slogdet")
def _slogdet(ctx, node, a):
    det = ctx.b.op("Det", [_det_input(ctx, a)])
    return ctx.b.op("Sign", [det]), ctx.b.op("Log", [ctx.b.op("Abs", [det])])


@converts("matrix_power")
def _matrix_power(ctx, node, a):
    """A ** n for n >= 0 by repeated squaring (n = 0 gives the identity); negative powers need
    an inverse, which ONNX does not have."""
    x = a.get("A", a.get("input"))
    n = int(a["n"])
    if n < 0:
        raise Unsupported("a negative matrix power (it needs a matrix inverse, and ONNX has none)")
    b = ctx.b
    xv = ctx.t(x)
    if n == 0:
        eye = b.const(np.eye(ctx.shape(x)[-1]), ctx.dtype(x))
        return b.op("Expand", [eye, b.op("Shape", [xv])])
    result, power = None, xv
    while n:
        if n & 1:
            result = power if result is None else b.op("MatMul", [result, power])
        n >>= 1
        if n:
            power = b.op("MatMul", [power, power])
    return result


# -- statistics ------------------------------------------------------------------------------------
def _covariance(ctx, x, correction, dtype, fweights=None, aweights=None):
    """(x - mean) (x - mean)^T over the observations, weighted by fweights * aweights when
    given, divided by sum(w) - correction (times sum(w aweights) / sum(w) with aweights)."""
    b = ctx.b
    rank = len(ctx.shape(x))
    xv = ctx.t_as(x, dtype)
    if rank < 2:
        xv = b.op("Reshape", [xv, b.ints([1, -1])])
    weights = [ctx.t_as(w, dtype) for w in (fweights, aweights) if w is not None]
    if not weights:
        centered = b.op("Sub", [xv, b.reduce("ReduceMean", xv, [1], True)])
        n = b.cast(b.op("Gather", [b.op("Shape", [xv]), b.const(np.int64(1))], axis=0), dtype)
        scale = b.op("Sub", [n, b.scalar(correction, dtype)])
        weighted = centered
    else:
        w = weights[0] if len(weights) == 1 else b.op("Mul", weights)
        total = b.reduce("ReduceSum", w, None, False)
        mean = b.op("Div", [b.reduce("ReduceSum", b.op("Mul", [xv, w]), [1], True), total])
        centered = b.op("Sub", [xv, mean])
        weighted = b.op("Mul", [centered, w])
        if aweights is None:
            scale = b.op("Sub", [total, b.scalar(correction, dtype)])
        else:
            spread = b.op("Div", [b.reduce("ReduceSum", b.op("Mul", [
                w, ctx.t_as(aweights, dtype)]), None, False), total])
            scale = b.op("Sub", [total, b.op("Mul", [b.scalar(correction, dtype), spread])])
    scale = b.op("Max", [scale, b.scalar(0, dtype)])
    product = b.op("MatMul", [weighted, b.op("Transpose", [centered], perm=[1, 0])])
    return b.op("Div", [product, scale]), rank < 2


@converts("cov")
def _cov(ctx, node, a):
    dtype = ctx.node_dtype(node)
    out, single = _covariance(ctx, a["input"], a.get("correction", 1), dtype,
                              a.get("fweights"), a.get("aweights"))
    return ctx.b.op("Reshape", [out, ctx.b.ints([])]) if single else out


@converts("corrcoef")
def _corrcoef(ctx, node, a):
    b, dtype = ctx.b, ctx.node_dtype(node)
    c, single = _covariance(ctx, a["input"], 1, dtype)
    variances = b.op("Sqrt", [b.reduce("ReduceSum", b.op("Mul", [
        c, b.op("EyeLike", [c])]), [1], False)])
    out = b.op("Div", [b.op("Div", [c, b.unsqueeze(variances, [1])]),
                       b.unsqueeze(variances, [0])])
    out = b.op("Clip", [out, b.scalar(-1.0, dtype), b.scalar(1.0, dtype)])
    return b.op("Reshape", [out, b.ints([])]) if single else out


# -- integration and differences -------------------------------------------------------------------
def _slice_along(b, v, start, stop, dim):
    return b.op("Slice", [v, b.ints([start]), b.ints([stop]), b.ints([dim])])


def _spacing_along(ctx, x, dim, rank, dtype):
    """The differences of the sample points x along ``dim`` (a 1-D x laid along ``dim``)."""
    b = ctx.b
    xv = ctx.t_as(x, dtype)
    x_rank = len(ctx.shape(x))
    axis = dim if x_rank == rank else 0
    steps = b.op("Sub", [_slice_along(b, xv, 1, _END, axis), _slice_along(b, xv, 0, -1, axis)])
    if x_rank == 1 and rank > 1:
        shape = [1] * rank
        shape[dim] = -1
        steps = b.op("Reshape", [steps, b.ints(shape)])
    return steps


def _trapezoids(ctx, node, a):
    y = a["y"] if "y" in a else a["input"]
    b, dtype = ctx.b, ctx.node_dtype(node)
    rank = len(ctx.shape(y))
    dim = _norm_dim(int(a.get("dim", -1)), rank)
    yv = ctx.t_as(y, dtype)
    pairs = b.op("Add", [_slice_along(b, yv, 1, _END, dim), _slice_along(b, yv, 0, -1, dim)])
    x, dx = a.get("x"), a.get("dx")
    if x is not None and not isinstance(x, (int, float)):
        width = _spacing_along(ctx, x, dim, rank, dtype)
    else:
        width = b.scalar(float(dx if dx is not None else (x if x is not None else 1.0)), dtype)
    return b.op("Mul", [b.op("Mul", [pairs, width]), b.scalar(0.5, dtype)]), dim


@converts("trapezoid", "trapz")
def _trapezoid(ctx, node, a):
    areas, dim = _trapezoids(ctx, node, a)
    return ctx.b.reduce("ReduceSum", areas, [dim], False)


@converts("cumulative_trapezoid")
def _cumulative_trapezoid(ctx, node, a):
    areas, dim = _trapezoids(ctx, node, a)
    return ctx.b.op("CumSum", [areas, ctx.b.const(np.int64(dim))])


@converts("gradient")
def _gradient(ctx, node, a):
    """Central differences inside, one-sided at the edges (edge_order=1), with unit, scalar or
    coordinate spacing, one result per dimension."""
    x = a["input"]
    second_order = int(a.get("edge_order", 1)) == 2
    b = ctx.b
    dtype = ctx.dtype(x) if ctx.dtype(x).is_floating_point else ctx.ember.get_default_dtype()
    rank = len(ctx.shape(x))
    dims = a.get("dim")
    dims = list(range(rank)) if dims is None else [
        _norm_dim(int(d), rank) for d in ([dims] if isinstance(dims, int) else dims)]
    spacing = a.get("spacing", 1)
    spacing = list(spacing) if isinstance(spacing, (list, tuple)) else [spacing] * len(dims)
    if len(spacing) == 1 and len(dims) > 1:
        spacing = spacing * len(dims)
    xv = ctx.t_as(x, dtype)
    out = []
    for dim, h in zip(dims, spacing):
        f = xv
        ahead, behind = _slice_along(b, f, 2, _END, dim), _slice_along(b, f, 0, -2, dim)
        first = b.op("Sub", [_slice_along(b, f, 1, 2, dim), _slice_along(b, f, 0, 1, dim)])
        last = b.op("Sub", [_slice_along(b, f, -1, _END, dim), _slice_along(b, f, -2, -1, dim)])
        if isinstance(h, (int, float)):
            inner = b.op("Div", [b.op("Sub", [ahead, behind]), b.scalar(2.0 * h, dtype)])
            first = b.op("Div", [first, b.scalar(float(h), dtype)])
            last = b.op("Div", [last, b.scalar(float(h), dtype)])
            if second_order:
                step = b.scalar(float(h), dtype)
                first, last = _second_order_edges(ctx, f, dim, dtype, step, step, step, step)
        else:
            inner, first, last = _uneven(ctx, f, h, dim, rank, dtype, first, last)
            if second_order:
                steps = _spacing_along(ctx, h, dim, rank, dtype)
                first, last = _second_order_edges(ctx, f, dim, dtype, *(
                    _slice_along(b, steps, i, i + 1 if i != -1 else _END, dim)
                    for i in (0, 1, -2, -1)))
        out.append(b.op("Concat", [first, inner, last], axis=dim))
    return tuple(out)


def _second_order_edges(ctx, f, dim, dtype, d1, d2, e1, e2):
    """The one-sided second-order differences at both ends (as numpy.gradient with
    edge_order=2), from the first two (d1, d2) and the last two (e1, e2) spacings."""
    b = ctx.b

    def at(v, i):
        return _slice_along(b, v, i, i + 1 if i != -1 else _END, dim)

    def weighted(terms):
        out = None
        for coefficient, value in terms:
            term = b.op("Mul", [coefficient, value])
            out = term if out is None else b.op("Add", [out, term])
        return out

    two = b.scalar(2.0, dtype)
    total = b.op("Add", [d1, d2])
    first = weighted([
        (b.op("Neg", [b.op("Div", [b.op("Add", [b.op("Mul", [two, d1]), d2]),
                                   b.op("Mul", [d1, total])])]), at(f, 0)),
        (b.op("Div", [total, b.op("Mul", [d1, d2])]), at(f, 1)),
        (b.op("Neg", [b.op("Div", [d1, b.op("Mul", [d2, total])])]), at(f, 2))])
    total = b.op("Add", [e1, e2])
    last = weighted([
        (b.op("Div", [e2, b.op("Mul", [e1, total])]), at(f, -3)),
        (b.op("Neg", [b.op("Div", [total, b.op("Mul", [e1, e2])])]), at(f, -2)),
        (b.op("Div", [b.op("Add", [b.op("Mul", [two, e2]), e1]), b.op("Mul", [e2, total])]),
         at(f, -1))])
    return first, last


def _uneven(ctx, f, coordinates, dim, rank, dtype, first, last):
    """Second-order differences on uneven coordinates (as numpy.gradient):
    (hl^2 f[i+1] - hr^2 f[i-1] + (hr^2 - hl^2) f[i]) / (hl hr (hl + hr))."""
    b = ctx.b
    steps = _spacing_along(ctx, coordinates, dim, rank, dtype)
    hl = _slice_along(b, steps, 0, -1, dim)
    hr = _slice_along(b, steps, 1, _END, dim)
    ahead, centre, behind = (_slice_along(b, f, 2, _END, dim), _slice_along(b, f, 1, -1, dim),
                             _slice_along(b, f, 0, -2, dim))
    hl2, hr2 = b.op("Mul", [hl, hl]), b.op("Mul", [hr, hr])
    top = b.op("Add", [b.op("Sub", [b.op("Mul", [hl2, ahead]), b.op("Mul", [hr2, behind])]),
                       b.op("Mul", [b.op("Sub", [hr2, hl2]), centre])])
    inner = b.op("Div", [top, b.op("Mul", [b.op("Mul", [hl, hr]), b.op("Add", [hl, hr])])])
    first = b.op("Div", [first, _slice_along(b, steps, 0, 1, dim)])
    last = b.op("Div", [last, _slice_along(b, steps, -1, _END, dim)])
    return inner, first, last


@converts("histogram")
def _histogram(ctx, node, a):
    """(hist, bin_edges) for a number of equal bins over ``range`` or the data's span; a value
    on an inner edge falls in the bin above it, the last edge in the last bin."""
    x = a["input"]
    bins = a.get("bins")
    b, dtype = ctx.b, ctx.dtype(x)
    flat = b.op("Reshape", [ctx.t(x), b.ints([-1])])
    if isinstance(bins, int):
        span = a.get("range")
        if span is None:
            low = b.reduce("ReduceMin", flat, None, False)
            high = b.reduce("ReduceMax", flat, None, False)
        else:
            low, high = b.scalar(float(span[0]), dtype), b.scalar(float(span[1]), dtype)
        steps = b.const(np.arange(bins + 1) / bins, dtype)
        edges = b.op("Add", [low, b.op("Mul", [b.op("Sub", [high, low]), steps])])
    else:                                      # the edges given
        edges = ctx.t_as(bins, dtype)
        bins = ctx.shape(a["bins"])[0] - 1
        low = b.op("Gather", [edges, b.const(np.int64(0))], axis=0)
        high = b.op("Gather", [edges, b.const(np.int64(-1))], axis=0)
    inner = _slice_along(b, edges, 1, -1, 0)
    index = b.reduce("ReduceSum", b.cast(b.op("GreaterOrEqual", [
        b.unsqueeze(flat, [1]), b.unsqueeze(inner, [0])]), ctx.ember.int64), [1], False)
    inside = b.op("And", [b.op("GreaterOrEqual", [flat, low]), b.op("LessOrEqual", [flat, high])])
    hits = b.op("And", [b.op("Equal", [b.unsqueeze(index, [1]), b.ints(range(bins))]),
                        b.unsqueeze(inside, [1])])
    weight = a.get("weight")
    if weight is None:
        counts = b.reduce("ReduceSum", b.cast(hits, dtype), [0], False)
    else:
        wv = b.unsqueeze(b.op("Reshape", [ctx.t_as(weight, dtype), b.ints([-1])]), [1])
        counts = b.reduce("ReduceSum", b.op("Where", [hits, wv, b.scalar(0, dtype)]), [0], False)
    if a.get("density"):                       # counts / (their total * each bin's width)
        widths = b.op("Sub", [_slice_along(b, edges, 1, _END, 0), _slice_along(b, edges, 0, -1, 0)])
        counts = b.op("Div", [counts, b.op("Mul", [b.reduce("ReduceSum", counts, None, False),
                                                   widths])])
    return counts, edges


@converts("lu_unpack")
def _lu_unpack(ctx, node, a):
    """(P, L, U) from packed LU factors: L the unit lower triangle, U the upper one, and P the
    permutation the 1-based row swaps of the pivots make (applied in order, one
    ScatterElements each), as A = P L U."""
    lu, pivots = a["LU_data"], a["LU_pivots"]
    b, dtype = ctx.b, ctx.dtype(lu)
    shape = ctx.shape(lu)
    if len(shape) != 2:
        raise Unsupported("lu_unpack of a batch of factorizations")
    m, n = shape
    k = min(m, n)
    luv = ctx.t(lu)
    empty = b.const(np.zeros((0,)), dtype)
    if a.get("unpack_data", True):
        lower = b.op("Trilu", [b.op("Slice", [luv, b.ints([0]), b.ints([k]), b.ints([1])]),
                               b.const(np.int64(-1))], upper=0)
        lower = b.op("Add", [lower, b.const(np.eye(m, k), dtype)])
        upper = b.op("Trilu", [b.op("Slice", [luv, b.ints([0]), b.ints([k]), b.ints([0])]),
                               b.const(np.int64(0))], upper=1)
    else:
        lower = upper = empty
    if not a.get("unpack_pivots", True):
        return empty, lower, upper
    swaps = b.op("Sub", [ctx.t_as(pivots, ctx.ember.int64), b.const(np.int64(1))])
    order = b.ints(range(m))
    for i in range(ctx.shape(pivots)[0]):
        j = b.op("Gather", [swaps, b.const(np.int64(i))], axis=0)
        at_i = b.op("Gather", [order, b.const(np.int64(i))], axis=0)
        at_j = b.op("Gather", [order, j], axis=0)
        targets = b.op("Concat", [b.ints([i]), b.unsqueeze(j, [0])], axis=0)
        order = b.op("ScatterElements", [order, targets, b.op("Concat", [
            b.unsqueeze(at_j, [0]), b.unsqueeze(at_i, [0])], axis=0)], axis=0)
    one_hot = b.op("Equal", [b.unsqueeze(order, [1]), b.ints(range(m))])     # [i, c]: order[i] == c
    return b.cast(b.op("Transpose", [one_hot], perm=[1, 0]), dtype), lower, upper


@converts("ember.linalg.vecdot", "vecdot")
def _vecdot(ctx, node, a):
    """``sum(x * y)`` over ``dim`` after broadcasting (torch conjugates ``x``: real tensors only)."""
    x, y = a["input"], a["y"]
    if ctx.dtype(x).is_complex or ctx.dtype(y).is_complex:
        raise Unsupported("products of complex tensors")
    dtype = ctx.node_dtype(node)
    rank = max(len(ctx.shape(x)), len(ctx.shape(y)))
    product = ctx.b.op("Mul", [ctx.t_as(x, dtype), ctx.t_as(y, dtype)])
    return ctx.b.reduce("ReduceSum", product, [a.get("dim", -1) % rank], False)
