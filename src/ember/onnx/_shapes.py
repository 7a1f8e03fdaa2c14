"""Converters of shape, stacking, splitting and diagonal ops: flips and rolls as ``Slice`` and
``Concat``, the stack family through the ``atleast_*d`` reshapes, diagonals as a ``Gather`` and
a mask, tensor outer products (``kron``, ``block_diag``, ``cartesian_prod``) and the in-place
fills as the values they leave.

Sizes that decide how many values come out (a split's sections, a diagonal's length, a roll's
shift modulo the length) are the traced ones, as for ``split`` and ``chunk``."""
import itertools

import numpy as np

from ._builder import Unsupported
from ._functions import CONVERTERS, _norm_dim, converts

__all__ = ["flip", "move_dims_last"]

_END = 2 ** 62


def _arg(node, a, index, *names, default=None):
    """An argument given by position or by one of ``names``."""
    if len(node.args) > index:
        return node.args[index]
    for name in names:
        if name in node.kwargs:
            return node.kwargs[name]
        if name in a:
            return a[name]
    return default


def _dims(value, rank):
    if isinstance(value, int):
        value = [value]
    return [_norm_dim(int(d), rank) for d in value]


def flip(b, xv, dims):
    return b.op("Slice", [xv, b.ints([-1] * len(dims)), b.ints([-_END] * len(dims)),
                          b.ints(dims), b.ints([-1] * len(dims))])


@converts("flip")
def _flip(ctx, node, a):
    x = node.args[0]
    dims = list(node.args[1:]) if len(node.args) > 1 else node.kwargs["dims"]
    if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
        dims = dims[0]
    dims = _dims(dims, len(ctx.shape(x)))
    return ctx.t(x) if not dims else flip(ctx.b, ctx.t(x), dims)


CONVERTERS["fliplr"] = lambda ctx, node, a: flip(ctx.b, ctx.t(a["input"]), [1])
CONVERTERS["flipud"] = lambda ctx, node, a: flip(ctx.b, ctx.t(a["input"]), [0])


def _roll_axis(b, xv, shift, dim, n):
    shift = shift % n if n else 0
    if not shift:
        return xv
    tail = b.op("Slice", [xv, b.ints([n - shift]), b.ints([_END]), b.ints([dim])])
    head = b.op("Slice", [xv, b.ints([0]), b.ints([n - shift]), b.ints([dim])])
    return b.op("Concat", [tail, head], axis=dim)


@converts("roll")
def _roll(ctx, node, a):
    x = a["input"]
    b, shape = ctx.b, ctx.shape(x)
    shifts, dims = a["shifts"], a.get("dims")
    shifts = [shifts] if isinstance(shifts, int) else list(shifts)
    if dims is None or dims == () or dims == []:
        flat = b.op("Reshape", [ctx.t(x), b.ints([-1])])
        rolled = _roll_axis(b, flat, int(shifts[0]), 0, int(np.prod(shape, dtype=np.int64)))
        return b.op("Reshape", [rolled, b.op("Shape", [ctx.t(x)])])
    out = ctx.t(x)
    for shift, dim in zip(shifts, _dims(dims, len(shape))):
        out = _roll_axis(b, out, int(shift), dim, shape[dim])
    return out


@converts("tile")
def _tile(ctx, node, a):
    x = a["input"]
    reps = list(a["dims"])
    rank = len(ctx.shape(x))
    xv = ctx.t(x)
    if len(reps) < rank:
        reps = [1] * (rank - len(reps)) + reps
    elif len(reps) > rank:
        xv = ctx.b.unsqueeze(xv, list(range(len(reps) - rank)))
    return ctx.b.op("Tile", [xv, ctx.shape_tensor(reps)])


def _slices(b, xv, dim, bounds):
    return tuple(b.op("Slice", [xv, b.ints([lo]), b.ints([hi]), b.ints([dim])])
                 for lo, hi in zip(bounds[:-1], bounds[1:]))


def _split_bounds(n, sections):
    if isinstance(sections, int):
        size, extra = divmod(n, sections)
        bounds, at = [0], 0
        for i in range(sections):
            at += size + (1 if i < extra else 0)
            bounds.append(at)
        return bounds
    return [0] + [min(max(_norm_dim(int(i), n), 0), n) for i in sections] + [n]


def _tensor_split_at(ctx, x, sections, dim):
    rank = len(ctx.shape(x))
    dim = _norm_dim(int(dim), rank)
    sections = ctx.static_int(sections) if not isinstance(sections, (list, tuple)) else \
        [ctx.static_int(s) for s in sections]
    bounds = _split_bounds(ctx.shape(x)[dim], sections)
    if not isinstance(sections, int):
        bounds = [bounds[0]] + [max(bounds[i], bounds[i - 1]) if i else bounds[i]
                                for i in range(1, len(bounds))]
    return _slices(ctx.b, ctx.t(x), dim, bounds)


@converts("tensor_split")
def _tensor_split(ctx, node, a):
    sections = _arg(node, a, 1, "indices_or_sections", "sections", "indices")
    return _tensor_split_at(ctx, node.args[0], sections, _arg(node, a, 2, "dim", default=0))


def _named_split(dim_of):
    def convert(ctx, node, a):
        x = node.args[0]
        sections = _arg(node, a, 1, "indices_or_sections", "sections", "indices")
        return _tensor_split_at(ctx, x, sections, dim_of(len(ctx.shape(x))))
    return convert


CONVERTERS["hsplit"] = _named_split(lambda rank: 1 if rank > 1 else 0)
CONVERTERS["vsplit"] = _named_split(lambda rank: 0)
CONVERTERS["dsplit"] = _named_split(lambda rank: 2)


def _at_least(ctx, x, n):
    shape = ctx.shape(x)
    rank = len(shape)
    if rank >= n:
        return ctx.t(x)
    target = {(1, 0): [1], (2, 0): [1, 1], (2, 1): [1, -1], (3, 0): [1, 1, 1],
              (3, 1): [1, -1, 1], (3, 2): [0, 0, 1]}[(n, rank)]
    return ctx.b.op("Reshape", [ctx.t(x), ctx.b.ints(target)])


def _tensors_arg(node):
    tensors = list(node.args)
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = list(tensors[0])
    return tensors


def _atleast(n):
    def convert(ctx, node, a):
        tensors = _tensors_arg(node)
        out = tuple(_at_least(ctx, t, n) for t in tensors)
        single = len(node.args) == 1 and not isinstance(node.args[0], (list, tuple))
        return out[0] if single else out
    return convert


for _n in (1, 2, 3):
    CONVERTERS[f"atleast_{_n}d"] = _atleast(_n)


def _stacker(n, dim_of):
    def convert(ctx, node, a):
        tensors = _tensors_arg(node)
        dtype = ctx.node_dtype(node)
        values = []
        for t in tensors:
            v = _at_least(ctx, t, n)
            values.append(v if ctx.dtype(t) == dtype else ctx.b.cast(v, dtype))
        return ctx.b.op("Concat", values, axis=dim_of(ctx, tensors))
    return convert


CONVERTERS["hstack"] = _stacker(1, lambda ctx, ts: 0 if all(len(ctx.shape(t)) <= 1 for t in ts)
                                else 1)
CONVERTERS["vstack"] = CONVERTERS["row_stack"] = _stacker(2, lambda ctx, ts: 0)
CONVERTERS["dstack"] = _stacker(3, lambda ctx, ts: 2)


@converts("column_stack")
def _column_stack(ctx, node, a):
    dtype = ctx.node_dtype(node)
    values = []
    for t in _tensors_arg(node):
        v = ctx.t_as(t, dtype)
        if len(ctx.shape(t)) <= 1:
            v = ctx.b.op("Reshape", [v, ctx.b.ints([-1, 1])])
        values.append(v)
    return ctx.b.op("Concat", values, axis=1)


@converts("rot90")
def _rot90(ctx, node, a):
    x = a["input"]
    rank = len(ctx.shape(x))
    d0, d1 = _dims(a.get("dims", (0, 1)), rank)
    k = int(a.get("k", 1)) % 4
    b, xv = ctx.b, ctx.t(x)
    perm = list(range(rank))
    perm[d0], perm[d1] = perm[d1], perm[d0]
    if k == 1:
        return b.op("Transpose", [flip(b, xv, [d1])], perm=perm)
    if k == 2:
        return flip(b, xv, [d0, d1])
    if k == 3:
        return b.op("Transpose", [flip(b, xv, [d0])], perm=perm)
    return xv


@converts("repeat_interleave")
def _repeat_interleave(ctx, node, a):
    """Constant repeats: each element repeated along a new axis, then merged. A tensor of
    repeats: the source index of each output element, from the cumulative counts (the output's
    length is their sum, known when the graph runs)."""
    x, repeats, dim = a["input"], a.get("repeats"), a.get("dim")
    b = ctx.b
    if repeats is None:         # repeat_interleave(counts): the indices repeated
        x, counts = None, ctx.t_as(x, ctx.ember.int64)
    elif isinstance(repeats, int):
        counts = None
    else:
        counts = ctx.t_as(repeats, ctx.ember.int64)
    xv = None if x is None else ctx.t(x)
    if x is not None and dim is None:
        xv, dim = b.op("Reshape", [xv, b.ints([-1])]), 0
    if counts is not None:
        if x is not None:           # one count for all is broadcast along dim
            dim = _norm_dim(int(dim), len(ctx.shape(x)) if a.get("dim") is not None else 1)
            length = b.op("Slice", [b.op("Shape", [xv]), b.ints([dim]), b.ints([dim + 1])])
            counts = b.op("Expand", [b.op("Reshape", [counts, b.ints([-1])]), length])
        b.value_dependent = True
        ends = b.op("CumSum", [counts, b.const(np.int64(0))])
        total = b.reduce("ReduceSum", counts, None, False)
        positions = b.op("Range", [b.const(np.int64(0)), total, b.const(np.int64(1))])
        source = b.reduce("ReduceSum", b.cast(b.op("LessOrEqual", [
            b.unsqueeze(ends, [0]), b.unsqueeze(positions, [1])]), ctx.ember.int64), [1], False)
        return source if x is None else b.op("Gather", [xv, source], axis=dim)
    rank = 1 if a.get("dim") is None else len(ctx.shape(x))
    dim = _norm_dim(int(dim), rank)
    shape = b.op("Shape", [xv])
    expanded = b.op("Expand", [b.unsqueeze(xv, [dim + 1]), b.op("Concat", [
        b.op("Slice", [shape, b.ints([0]), b.ints([dim + 1])]), b.ints([int(repeats)]),
        b.op("Slice", [shape, b.ints([dim + 1]), b.ints([_END])])], axis=0)])
    target = b.op("Concat", [b.op("Slice", [shape, b.ints([0]), b.ints([dim])]), b.ints([-1]),
                             b.op("Slice", [shape, b.ints([dim + 1]), b.ints([_END])])], axis=0)
    return b.op("Reshape", [expanded, target])


@converts("broadcast_to")
def _broadcast_to(ctx, node, a):
    size = [1 if isinstance(s, int) and s == -1 else s for s in a["size"]]
    return ctx.b.op("Expand", [ctx.t(a["input"]), ctx.shape_tensor(size)])


def _common_shape(ctx, values):
    b = ctx.b
    acc = values[0]
    for v in values[1:]:
        acc = b.op("Expand", [acc, b.op("Shape", [v])])
    return b.op("Shape", [acc])


@converts("broadcast_tensors")
def _broadcast_tensors(ctx, node, a):
    values = [ctx.t(t) for t in _tensors_arg(node)]
    shape = _common_shape(ctx, values)
    return tuple(ctx.b.op("Expand", [v, shape]) for v in values)


def _grid(ctx, tensors, xy):
    b = ctx.b
    n = len(tensors)
    values = [b.op("Reshape", [ctx.t(t), b.ints([-1])]) for t in tensors]
    order = list(range(n))
    if xy and n >= 2:
        order[0], order[1] = 1, 0
    sizes = [b.op("Shape", [values[i]]) for i in order]
    shape = b.op("Concat", sizes, axis=0)
    out = []
    for i, v in enumerate(values):
        axis = order.index(i)
        target = [1] * n
        target[axis] = -1
        out.append(b.op("Expand", [b.op("Reshape", [v, b.ints(target)]), shape]))
    return out


@converts("meshgrid")
def _meshgrid(ctx, node, a):
    indexing = node.kwargs.get("indexing") or "ij"
    return tuple(_grid(ctx, _tensors_arg(node), indexing == "xy"))


@converts("cartesian_prod")
def _cartesian_prod(ctx, node, a):
    tensors = _tensors_arg(node)
    if len(tensors) == 1:
        return ctx.t(tensors[0])
    b = ctx.b
    columns = [b.op("Reshape", [g, b.ints([-1, 1])]) for g in _grid(ctx, tensors, False)]
    return b.op("Concat", columns, axis=1)


@converts("combinations")
def _combinations(ctx, node, a):
    x = a["input"]
    r = int(a.get("r", 2))
    n = ctx.shape(x)[0]
    pick = itertools.combinations_with_replacement if a.get("with_replacement") else \
        itertools.combinations
    rows = np.array(list(pick(range(n), r)), dtype=np.int64).reshape(-1, r)
    if rows.shape[0] == 0:
        return ctx.b.op("Reshape", [ctx.b.op("Slice", [ctx.t(x), ctx.b.ints([0]),
                                                       ctx.b.ints([0])]), ctx.b.ints([0, r])])
    return ctx.b.op("Gather", [ctx.t(x), ctx.b.const(rows)], axis=0)


# -- diagonals -------------------------------------------------------------------------------------
def move_dims_last(b, xv, rank, d0, d1):
    """``xv`` with axes d0, d1 moved last (in that order), and the permutation back."""
    perm = [d for d in range(rank) if d not in (d0, d1)] + [d0, d1]
    if perm == list(range(rank)):
        return xv, None
    return b.op("Transpose", [xv], perm=perm), [perm.index(i) for i in range(rank)]


def _diagonal_geometry(rows, cols, offset):
    length = max(0, min(rows + min(offset, 0), cols - max(offset, 0)))
    start_row, start_col = max(-offset, 0), max(offset, 0)
    return length, start_row, start_col


def _take_diagonal(ctx, xv, dtype, rows, cols, offset):
    """(..., rows, cols) -> (..., L): the row of each diagonal element, then its column picked
    by a one-hot mask (a sum with zeros: exact)."""
    b = ctx.b
    length, r0, c0 = _diagonal_geometry(rows, cols, offset)
    picked = b.op("Gather", [xv, b.ints(range(r0, r0 + length))], axis=-2)    # (..., L, cols)
    mask = np.zeros((length, cols), dtype=bool)
    mask[np.arange(length), c0 + np.arange(length)] = True
    zero = b.scalar(0, dtype)
    return b.reduce("ReduceSum", b.op("Where", [b.const(mask), picked, zero]), [-1], False)


@converts("diagonal")
def _diagonal(ctx, node, a):
    x = a["input"]
    shape = ctx.shape(x)
    rank = len(shape)
    d0, d1 = _dims([a.get("dim1", 0), a.get("dim2", 1)], rank)
    xv, _ = move_dims_last(ctx.b, ctx.t(x), rank, d0, d1)
    return _take_diagonal(ctx, xv, ctx.dtype(x), shape[d0], shape[d1], int(a.get("offset", 0)))


def _embed(ctx, values, n, offset, fill):
    """(..., n) -> (..., m, m) with the values on the ``offset`` diagonal and ``fill`` (an ONNX
    value broadcast to the result) elsewhere."""
    b = ctx.b
    m = n + abs(offset)
    rows, cols = np.meshgrid(np.arange(m), np.arange(m), indexing="ij")
    on = (cols - rows) == offset
    source = np.clip(np.minimum(rows, cols), 0, max(n - 1, 0)).astype(np.int64)
    spread = b.op("Gather", [values, b.const(source)], axis=-1)     # (..., m, m)
    return b.op("Where", [b.const(on), spread, fill])


@converts("diag_embed")
def _diag_embed(ctx, node, a):
    x = a["input"]
    shape, dtype = ctx.shape(x), ctx.dtype(x)
    offset = int(a.get("offset", 0))
    rank = len(shape) + 1
    d0, d1 = _dims([a.get("dim1", -2), a.get("dim2", -1)], rank)
    out = _embed(ctx, ctx.t(x), shape[-1], offset, ctx.b.scalar(0, dtype))
    if (d0, d1) != (rank - 2, rank - 1):
        order = [d for d in range(rank) if d not in (d0, d1)]
        perm = [0] * rank
        for src, dst in enumerate(order + [d0, d1]):
            perm[dst] = src
        out = ctx.b.op("Transpose", [out], perm=perm)
    return out


@converts("diag")
def _diag(ctx, node, a):
    x = a["input"]
    shape = ctx.shape(x)
    offset = int(a.get("diagonal", 0))
    if len(shape) == 1:
        return _embed(ctx, ctx.t(x), shape[0], offset, ctx.b.scalar(0, ctx.dtype(x)))
    return _take_diagonal(ctx, ctx.t(x), ctx.dtype(x), shape[0], shape[1], offset)


@converts("trace")
def _trace(ctx, node, a):
    x = a["input"]
    shape = ctx.shape(x)
    dtype = ctx.node_dtype(node)
    diagonal = _take_diagonal(ctx, ctx.t_as(x, dtype), dtype, shape[0], shape[1], 0)
    return ctx.b.reduce("ReduceSum", diagonal, None, False)


@converts("diagonal_scatter")
def _diagonal_scatter(ctx, node, a):
    x, src = a["input"], a["src"]
    b, shape = ctx.b, ctx.shape(x)
    rank = len(shape)
    d0, d1 = _dims([a.get("dim1", 0), a.get("dim2", 1)], rank)
    offset = int(a.get("offset", 0))
    rows, cols = shape[d0], shape[d1]
    xv, back = move_dims_last(b, ctx.t(x), rank, d0, d1)
    length, r0, c0 = _diagonal_geometry(rows, cols, offset)
    index = np.zeros((rows, cols), dtype=np.int64)
    on = np.zeros((rows, cols), dtype=bool)
    on[r0 + np.arange(length), c0 + np.arange(length)] = True
    index[on] = np.arange(length)
    spread = b.op("Gather", [ctx.t_as(src, ctx.dtype(x)), b.const(index)], axis=-1)
    out = b.op("Where", [b.const(on), spread, xv])
    return out if back is None else b.op("Transpose", [out], perm=back)


def _along_mask(b, n, dim, rank, hit):
    """A bool constant of shape (1, .., n, .., 1) at ``dim``, True at the positions ``hit``."""
    mask = np.zeros(n, dtype=bool)
    mask[hit] = True
    shape = [1] * rank
    shape[dim] = n
    return b.const(mask.reshape(shape))


@converts("select")
def _select(ctx, node, a):
    x = a["input"]
    rank = len(ctx.shape(x))
    index = a["index"]
    iv = ctx.t_as(index, ctx.ember.int64) if not isinstance(index, int) else \
        ctx.b.const(np.int64(index))
    return ctx.b.op("Gather", [ctx.t(x), iv], axis=_norm_dim(int(a["dim"]), rank))


@converts("select_scatter")
def _select_scatter(ctx, node, a):
    x, src = a["input"], a["src"]
    b, shape = ctx.b, ctx.shape(x)
    rank = len(shape)
    dim = _norm_dim(int(a["dim"]), rank)
    mask = _along_mask(b, shape[dim], dim, rank, int(a["index"]))
    return b.op("Where", [mask, b.unsqueeze(ctx.t_as(src, ctx.dtype(x)), [dim]), ctx.t(x)])


@converts("slice_scatter")
def _slice_scatter(ctx, node, a):
    x, src = a["input"], a["src"]
    b, shape = ctx.b, ctx.shape(x)
    rank = len(shape)
    dim = _norm_dim(int(a.get("dim", 0)), rank)
    positions = np.arange(shape[dim])[slice(a.get("start"), a.get("end"), a.get("step", 1))]
    target = [1] * rank
    target[dim] = len(positions)
    index = b.op("Expand", [b.const(positions.astype(np.int64).reshape(target)),
                            b.op("Shape", [ctx.t(src)])])
    return b.op("ScatterElements", [ctx.t(x), index, ctx.t_as(src, ctx.dtype(x))], axis=dim)


@converts("block_diag")
def _block_diag(ctx, node, a):
    b, dtype = ctx.b, ctx.node_dtype(node)
    tensors = _tensors_arg(node)
    blocks = []
    for t in tensors:
        v = ctx.t_as(t, dtype)
        shape = ctx.shape(t)
        if len(shape) < 2:
            v = b.op("Reshape", [v, b.ints([1, -1])])
            shape = (1, int(np.prod(shape, dtype=np.int64)))
        blocks.append((v, shape))
    width = sum(s[1] for _, s in blocks)
    rows, left = [], 0
    for v, (_, cols) in blocks:
        pads = b.ints([0, left, 0, width - left - cols])
        rows.append(b.op("Pad", [v, pads, b.scalar(0, dtype)], mode="constant"))
        left += cols
    return b.op("Concat", rows, axis=0)


@converts("kron")
def _kron(ctx, node, a):
    """a (.., m, ..) times b (.., n, ..) interleaved: a as (.., m, 1, ..), b as (.., 1, n, ..)."""
    b, dtype = ctx.b, ctx.node_dtype(node)
    x, y = a["input"], a["other"]
    sx, sy = ctx.shape(x), ctx.shape(y)
    rank = max(len(sx), len(sy))
    sx, sy = (1,) * (rank - len(sx)) + tuple(sx), (1,) * (rank - len(sy)) + tuple(sy)
    xs = [d for s in sx for d in (s, 1)]
    ys = [d for s in sy for d in (1, s)]
    product = b.op("Mul", [b.op("Reshape", [ctx.t_as(x, dtype), b.ints(xs)]),
                           b.op("Reshape", [ctx.t_as(y, dtype), b.ints(ys)])])
    return b.op("Reshape", [product, b.ints([p * q for p, q in zip(sx, sy)])])


def _cross(ctx, node, x, y, dim):
    b, dtype = ctx.b, ctx.node_dtype(node)
    xv, yv = ctx.t_as(x, dtype), ctx.t_as(y, dtype)
    ahead, behind = b.ints([1, 2, 0]), b.ints([2, 0, 1])

    def turn(v, index):
        return b.op("Gather", [v, index], axis=dim)

    return b.op("Sub", [b.op("Mul", [turn(xv, ahead), turn(yv, behind)]),
                        b.op("Mul", [turn(xv, behind), turn(yv, ahead)])])


@converts("cross")
def _cross_op(ctx, node, a):
    x, y, dim = a["input"], a["other"], a.get("dim")
    rank = len(ctx.node_shape(node))
    if dim is None:
        shape = ctx.node_shape(node)
        dim = next(i for i, s in enumerate(shape) if s == 3)
    return _cross(ctx, node, x, y, _norm_dim(int(dim), rank))


@converts("linalg_cross")
def _linalg_cross(ctx, node, a):
    rank = len(ctx.node_shape(node))
    return _cross(ctx, node, a["input"], a["other"], _norm_dim(int(a.get("dim", -1)), rank))


_VIEW_OPS = {"getitem", "view", "transpose", "t", "permute", "narrow", "select", "expand",
             "diagonal", "unfold", "as_strided", "squeeze", "unsqueeze", "swapaxes", "swapdims",
             "movedim", "moveaxis", "split", "chunk", "unbind", "reshape", "flatten",
             "unflatten", "view_as", "expand_as", "real", "imag", "tensor_split", "hsplit",
             "vsplit", "dsplit", "mT", "T", "adjoint", "getattr"}


@converts("as_strided")
def _as_strided(ctx, node, a):
    """Elements of the input's row-major storage at offset + sum(i_k stride_k) (a Gather on the
    flattened input: its storage when the input is a whole tensor, not a view)."""
    from ..fx.node import Node
    x = a["input"]
    source = x.target if isinstance(x, Node) and x.op in ("call_function", "call_method") \
        else None
    name = source if isinstance(source, str) else getattr(source, "__name__", None)
    if name in _VIEW_OPS:
        raise Unsupported("as_strided of a view (it addresses the base tensor's storage, and "
                          "an ONNX value has no storage)")
    size, stride = [int(s) for s in a["size"]], [int(s) for s in a["stride"]]
    offset = int(a.get("storage_offset") or 0)
    index = np.full(size, offset, dtype=np.int64)
    for axis, (n, step) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[axis] = n
        index = index + (np.arange(n, dtype=np.int64) * step).reshape(shape)
    flat = ctx.b.op("Reshape", [ctx.t(x), ctx.b.ints([-1])])
    return ctx.b.op("Gather", [flat, ctx.b.const(index)], axis=0)


@converts("ravel")
def _ravel(ctx, node, a):
    return ctx.b.op("Reshape", [ctx.t(a["input"]), ctx.b.ints([-1])])


def _filled_like(ctx, x, value):
    dtype = ctx.dtype(x)
    return ctx.b.op("Expand", [ctx.t_as(value, dtype), ctx.b.op("Shape", [ctx.t(x)])])


@converts("fill_", "fill")
def _fill(ctx, node, a):
    value = node.args[1] if len(node.args) > 1 else a["value"]
    return _filled_like(ctx, node.args[0], value)


@converts("zero_")
def _zero(ctx, node, a):
    return _filled_like(ctx, node.args[0], 0)


@converts("copy_")
def _copy(ctx, node, a):
    return _filled_like(ctx, node.args[0], node.args[1] if len(node.args) > 1 else a["src"])


@converts("fill_diagonal_")
def _fill_diagonal(ctx, node, a):
    x = a["input"]
    mask = np.zeros(ctx.shape(x), dtype=bool)
    np.fill_diagonal(mask, True, wrap=bool(a.get("wrap", False)))
    return ctx.b.op("Where", [ctx.b.const(mask), ctx.t_as(a["fill_value"], ctx.dtype(x)),
                              ctx.t(x)])


@converts("sum_to_size")
def _sum_to_size(ctx, node, a):
    x = node.args[0]
    size = list(node.args[1:]) if len(node.args) > 1 else list(node.kwargs["size"])
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        size = list(size[0])
    shape = ctx.shape(x)
    lead = len(shape) - len(size)
    axes = list(range(lead)) + [lead + i for i, s in enumerate(size)
                                if s == 1 and shape[lead + i] != 1]
    if not axes:
        return ctx.t(x)
    out = ctx.b.reduce("ReduceSum", ctx.t(x), axes, True)
    return ctx.b.op("Reshape", [out, ctx.b.ints(size)])


@converts("adjoint")
def _adjoint(ctx, node, a):
    x = a["input"]
    if ctx.dtype(x).is_complex:
        raise Unsupported("adjoint of a complex tensor")
    rank = len(ctx.shape(x))
    perm = list(range(rank))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return ctx.b.op("Transpose", [ctx.t(x)], perm=perm)


def _powers(ctx, node, x, n, increasing):
    b, dtype = ctx.b, ctx.node_dtype(node)
    exponents = np.arange(n) if increasing else np.arange(n)[::-1].copy()
    return b.op("Pow", [b.unsqueeze(ctx.t_as(x, dtype), [-1]), b.const(exponents, dtype)])


@converts("vander")
def _vander(ctx, node, a):
    x = a["input"]
    n = a.get("N")
    return _powers(ctx, node, x, ctx.shape(x)[-1] if n is None else int(n),
                   bool(a.get("increasing", False)))


@converts("ember.linalg.vander")
def _linalg_vander(ctx, node, a):
    x = a["input"]
    n = a.get("N")
    return _powers(ctx, node, x, ctx.shape(x)[-1] if n is None else int(n), True)


@converts("unravel_index")
def _unravel_index(ctx, node, a):
    indices, shape = a["indices"], a["shape"]
    shape = [shape] if isinstance(shape, int) else [int(s) for s in shape]
    b = ctx.b
    iv = ctx.t_as(indices, ctx.ember.int64)
    total = int(np.prod(shape, dtype=np.int64))
    iv = b.op("Mod", [b.op("Add", [iv, b.const(np.int64(total))]), b.const(np.int64(total))])
    out, stride = [], total
    for size in shape:
        stride //= size
        out.append(b.op("Mod", [b.op("Div", [iv, b.const(np.int64(stride))]),
                                b.const(np.int64(size))]))
    return tuple(out)


@converts("movedim", "moveaxis")
def _movedim(ctx, node, a):
    x = a["input"]
    rank = len(ctx.shape(x))
    source = _dims(a["source"], rank)
    destination = _dims(a["destination"], rank)
    order = [d for d in range(rank) if d not in source]
    perm = [None] * rank
    for s, d in zip(source, destination):
        perm[d] = s
    rest = iter(order)
    perm = [p if p is not None else next(rest) for p in perm]
    return ctx.b.op("Transpose", [ctx.t(x)], perm=perm)


@converts("unfold")
def _unfold(ctx, node, a):
    """Windows of ``size`` every ``step`` along ``dimension``, as a Gather of their indices
    (a new axis of windows at ``dimension``, the window's own axis last)."""
    x = a["input"]
    b, shape = ctx.b, ctx.shape(x)
    rank = len(shape)
    if rank == 0:
        return b.unsqueeze(ctx.t(x), [0])
    dim = _norm_dim(int(a["dimension"]), rank)
    size, step = int(a["size"]), int(a["step"])
    count = (shape[dim] - size) // step + 1
    index = np.arange(count)[:, None] * step + np.arange(size)[None, :]
    out = b.op("Gather", [ctx.t(x), b.const(index.astype(np.int64))], axis=dim)
    perm = [d for d in range(rank + 1) if d != dim + 1] + [dim + 1]
    return b.op("Transpose", [out], perm=perm)
