"""Pooling: max (with torch's flat indices), unpooling, average, adaptive, power-average.

Max and average pooling each choose their kernel (``KernelChoice``): oneDNN's pooling
primitive for float32 (forward and backward; max pooling's backward reads the window
positions its forward kept in a workspace, from which torch's indices are derived where they
are asked for), else NumPy's. NumPy's max pooling gathers every window's positions (an index
array built by broadcasting, no per-pixel loop) and takes the argmax; its backward
scatter-adds the gradient at the winning positions, and that scatter's own backward gathers,
so gradients of any order work. NumPy's average pooling is a depthwise convolution with a
kernel of ones divided by each window's divisor, and its adjoint (a transposed convolution)
is the backward, built from ember ops when the backward is itself differentiated. Adaptive
average pooling is average pooling where the input divides into equal windows, else one
small linear map per spatial dimension. Pooling keeps channels-last inputs channels-last.
"""
import itertools
import math

from ... import _dtype
from ... import _memory_format as _mf
from ..._backend import convolution, im2col, onednn
from ..._backend.choice import KernelChoice
from ...ops._common import Node, Tensor, _type_word, grad_state, make, namespace_of, record
from .conv import _Geometry, _conv_transpose, tuple_arg
from ...amp.op_lists import max_pool3d_runs_in_fp32
from ...amp.policy import autocast_policy
from ...autograd._dual import jvp_by_transposition
from ...autograd.saved_fields import not_kept

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices",
           "max_pool2d_with_indices", "max_pool3d_with_indices", "max_unpool1d", "max_unpool2d",
           "max_unpool3d",
           "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
           "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
           "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
           "adaptive_max_pool3d_with_indices", "lp_pool1d", "lp_pool2d", "lp_pool3d"]

# Max pooling runs on oneDNN from inputs of this many elements (``python -m
# benchmarks.onednn_layers --only pool``); below it the ctypes calls around oneDNN's forward
# and backward cost more than NumPy's passes. Average pooling has no size rule: NumPy's is a
# convolution, slower than oneDNN's pooling at every size measured.
MAX_POOL_ONEDNN_MIN_ELEMENTS = 16384


# -- scatter and gather along the flattened spatial positions ----------------------------------

class _ScatterNode(Node):
    __slots__ = ()
    jvp = jvp_by_transposition

    def backward(self, grad):
        (indices,) = self.saved_tensors
        return (_gather_flat(grad, indices),)


def _max_pool_indices(node):
    (saved,) = node.saved_tensors
    window = node.__dict__.get("window")
    return saved if window is None else make(window.onednn_indices(saved._data))


def _pool_window(node):
    return node.__dict__.get("window") or node.geometry


def _window_field(name):
    return lambda node: getattr(_pool_window(node), name)


_POOL_FIELDS = {"self": not_kept("self"), "kernel_size": _window_field("kernel"),
                "stride": _window_field("stride"), "padding": _window_field("padding"),
                "ceil_mode": _window_field("ceil_mode")}


class MaxPool2DWithIndicesBackward0(_ScatterNode):
    """Backward of max pooling: the gradient goes to each window's maximum. Saves the flat
    indices of the maxima, or, where oneDNN ran the forward, its workspace (``window`` then
    holds the pooling's geometry)."""
    __slots__ = ()
    geometry = None
    saved_fields = dict(_POOL_FIELDS, dilation=_window_field("dilation"), result1=_max_pool_indices)
    jvp = jvp_by_transposition

    def backward(self, grad):
        (saved,) = self.saved_tensors
        window = self.__dict__.get("window")
        indices = saved if window is None else make(window.onednn_indices(saved._data))
        return (_scatter_flat(grad, indices, self.in_shape, ScatterBackward,
                              self.__dict__.get("unique", False)),)

    def backward_arrays(self, grad):
        window = self.__dict__.get("window")
        if window is None:  # NumPy's forward: the scatter at its indices
            return None
        (workspace,) = self.saved_tensors
        return (make(_max_pool_backward(grad._data, workspace._data, window)),)


class MaxPool3DWithIndicesBackward0(MaxPool2DWithIndicesBackward0):
    __slots__ = ()


class ScatterBackward(_ScatterNode):
    __slots__ = ()


class MaxUnpool2DBackward0(_ScatterNode):
    __slots__ = ()


class MaxUnpool3DBackward0(_ScatterNode):
    __slots__ = ()


class PoolingGatherBackward(Node):
    __slots__ = ()
    jvp = jvp_by_transposition

    def backward(self, grad):
        (indices,) = self.saved_tensors
        return (_scatter_flat(grad, indices, self.in_shape, ScatterBackward),)


def _scatter_flat(values, indices, out_shape, node_cls, unique=False):
    """(N, C, *out_spatial) zeros with ``values`` added at the flat spatial ``indices``
    (``unique``: no index repeats within a row)."""
    xp = namespace_of(values._data)
    size = math.prod(out_shape[2:])
    data = im2col.scatter_add_flat(xp, values._data, indices._data, size, unique)
    out = make(data.reshape(out_shape))
    node = record(node_cls, (values,), out)
    if node is not None:
        node.save(indices)
    return out


def _assign_flat(values, indices, out_shape, node_cls):
    """(N, C, *out_spatial) zeros with ``values`` written at the flat spatial ``indices``; an
    index given twice (overlapping pooling windows) holds the one value, not a sum."""
    xp = namespace_of(values._data)
    n, c = out_shape[:2]
    data = xp.zeros((n, c, math.prod(out_shape[2:])), dtype=values._data.dtype)
    rows = xp.arange(n).reshape(n, 1, 1), xp.arange(c).reshape(1, c, 1)
    data[rows[0], rows[1], indices._data.reshape(n, c, -1)] = values._data.reshape(n, c, -1)
    out = make(data.reshape(out_shape))
    node = record(node_cls, (values,), out)
    if node is not None:
        node.save(indices)
    return out


def _gather_flat(x, indices):
    """``x`` (N, C, *S) read at the flat spatial ``indices`` (N, C, *O) of each (n, c) row."""
    xp = namespace_of(x._data)
    n, c = x.shape[:2]
    flat = x._data.reshape(n, c, -1)
    idx = indices._data.reshape(n, c, -1)
    out = make(xp.take_along_axis(flat, idx, axis=2).reshape(indices.shape))
    node = record(PoolingGatherBackward, (x,), out)
    if node is not None:
        node.in_shape = tuple(x.shape)
        node.save(indices)
    return out


# -- window positions ---------------------------------------------------------------------------

def _flat_positions(xp, coords, sizes):
    """Per-dim coordinates (O_i, K_i) combined into flat positions (*O, *K) of an array of
    spatial ``sizes``."""
    nd = len(coords)
    flat = 0
    for i, c in enumerate(coords):
        shape = [1] * (2 * nd)
        shape[i], shape[nd + i] = c.shape
        flat = flat + c.reshape(shape) * math.prod(sizes[i + 1:])
    return flat


def _floating(data):
    return data.dtype.kind == "f" or data.dtype == _dtype.bfloat16.np


def _window_max(xp, data, coords, padded_sizes, pads):
    """Max over windows of ``data`` (N, C, *S) given per-dim coordinates (in the padded input)
    of each window's elements; returns (values, flat indices into the unpadded input)."""
    nd = len(coords)
    n, c = data.shape[:2]
    floating = _floating(data)
    sizes = data.shape[2:]
    if any(lo or hi for lo, hi in pads):
        low = -xp.inf if floating else xp.iinfo(data.dtype).min
        data = im2col.pad_constant(xp, data, pads, low)
    positions = _flat_positions(xp, coords, padded_sizes)
    out_spatial = positions.shape[:nd]
    positions = positions.reshape(math.prod(out_spatial), -1)
    values = data.reshape(n, c, -1)[:, :, positions]  # (N, C, P, KK)
    if floating:
        nan = xp.isnan(values)
        last_nan = nan.shape[-1] - 1 - nan[..., ::-1].argmax(-1)  # torch keeps the last NaN
        arg = xp.where(nan.any(-1), last_nan, values.argmax(-1))
    else:
        arg = values.argmax(-1)
    result = xp.take_along_axis(values, arg[..., None], -1)[..., 0]
    unpadded = _flat_positions(xp, [co - lo for co, (lo, _) in zip(coords, pads)],
                               sizes).reshape(positions.shape)
    indices = unpadded[xp.arange(positions.shape[0]), arg]
    return result.reshape((n, c) + out_spatial), indices.reshape((n, c) + out_spatial)


def _record_max(node_cls, x, values, indices, unique=False, window=None):
    """The max pooling's output tensors, with ``node_cls`` recorded over ``x`` (saving the
    flat ``indices``; ``unique``: no index repeats within a row; ``window``: the pooling's
    geometry, kept for its saved fields)."""
    out, idx = make(values), make(indices)
    node = record(node_cls, (x,), out)
    if node is not None:
        node.in_shape = tuple(x.shape)
        node.unique, node.geometry = unique, window
        node.save(idx)
    return out, idx


# -- non-overlapping windows -------------------------------------------------------------------

# Max pooling whose windows tile the input (stride == kernel, no padding or dilation) takes
# the maximum over the kernel offsets of strided views; off, it runs the general gather.
TILED_MAX_POOL = True


def _tiles_input(kernel, stride, padding, dilation, out, sizes):
    return (tuple(stride) == tuple(kernel) and not any(padding) and all(d == 1 for d in dilation)
            and all(o * k <= s for o, k, s in zip(out, kernel, sizes)))


def _tiled_max(xp, data, kernel, out):
    """Max pooling over the non-overlapping windows ``kernel`` of ``data`` (N, C, *S): the
    maximum over the kernel offsets (the first maximum of a window wins, its last NaN if it
    has one, as in torch), and the flat index of each maximum."""
    n, c = data.shape[:2]
    sizes = data.shape[2:]
    data = data[(Ellipsis,) + tuple(slice(0, o * k) for o, k in zip(out, kernel))]
    tiles = data.reshape((n, c) + tuple(d for o, k in zip(out, kernel) for d in (o, k)))
    offsets = list(itertools.product(*(range(k) for k in kernel)))
    views = [tiles[(slice(None), slice(None)) + tuple(i for o in offset for i in (slice(None), o))]
             for offset in offsets]
    best, arg = _first_maximum(xp, views)
    if _floating(best) and xp.isnan(best).any():
        best, arg = _running_maximum(xp, views)
    indices = _tile_origins(xp, out, kernel, sizes) + _offset_positions(xp, offsets, sizes)[arg]
    return best, indices


def _offset_dtype(xp, count):
    return xp.uint8 if count < 256 else xp.int64


def _first_maximum(xp, views):
    """The elementwise maximum of ``views`` and the position of its first occurrence (a NaN
    anywhere makes the maximum NaN and its position meaningless)."""
    best = views[0].copy()
    for view in views[1:]:
        xp.maximum(best, view, out=best)
    # arg = ne_0 * (1 + ne_1 * (1 + ...)) with ne_t = (views[t] != best): the count of views
    # before the first equal one, in in-place ufuncs (masked copies run several times slower)
    arg = xp.zeros(best.shape, dtype=_offset_dtype(xp, len(views)))
    differs = xp.empty(best.shape, dtype=bool)
    for view in reversed(views[:-1]):
        xp.add(arg, 1, out=arg)
        xp.not_equal(view, best, out=differs)
        xp.multiply(arg, differs, out=arg)
    return best, arg


def _running_maximum(xp, views):
    """The running maximum over ``views`` with its position, where a NaN beats every number
    and a later NaN an earlier one."""
    best = views[0].copy()
    arg = xp.zeros(best.shape, dtype=_offset_dtype(xp, len(views)))
    for t, view in enumerate(views[1:], 1):
        better = (view > best) | xp.isnan(view)
        xp.copyto(best, view, where=better)
        xp.copyto(arg, t, where=better)
    return best, arg


def _tile_origins(xp, out, kernel, sizes):
    """The flat input position (*O) of each window's first element."""
    coords = [(xp.arange(o) * k)[:, None] for o, k in zip(out, kernel)]
    return _flat_positions(xp, coords, sizes)[(Ellipsis,) + (0,) * len(out)]


def _offset_positions(xp, offsets, sizes):
    """The flat distance of each kernel offset from its window's first element."""
    strides = [math.prod(sizes[i + 1:]) for i in range(len(sizes))]
    return xp.asarray([sum(o * s for o, s in zip(offset, strides)) for offset in offsets],
                      dtype=xp.int64)


# -- max pooling --------------------------------------------------------------------------------

def _pool_output_size(size, kernel, stride, pad, dilation, ceil_mode):
    span = size + 2 * pad - dilation * (kernel - 1) - 1
    out = (-(-span // stride) if ceil_mode else span // stride) + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _shape_str(shape):
    return "[" + ", ".join(map(str, shape)) + "]"


def _check_pool_input(op, input, nd):
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if input.dim() not in (nd + 1, nd + 2) or any(s == 0 for s in input.shape[-nd:]):
        raise RuntimeError(f"{op}: Expected {nd + 1}D or {nd + 2}D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:{_shape_str(input.shape)}")


def _pool_args(nd, kernel_size, stride, padding, dilation):
    kernel = tuple_arg(kernel_size, nd)
    stride = kernel if stride is None or stride == [] or stride == () else tuple_arg(stride, nd, "stride")
    padding = tuple_arg(padding, nd, "padding")
    dilation = tuple_arg(dilation, nd, "dilation")
    for p, k, d in zip(padding, kernel, dilation):
        if p > (d * (k - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p}, "
                               f"kernel_size={k} and dilation={d}")
    return kernel, stride, padding, dilation


def _batched(input, nd):
    if input.dim() == nd + 1:
        return input.unsqueeze(0), True
    return input, False


class _Window:
    """A pooling's geometry: ``kernel``, ``stride``, ``padding`` (the low side) and
    ``dilation`` per spatial dimension, the output's spatial size ``out`` and the input's
    shape and memory format; for average pooling, ``count_include_pad`` and
    ``divisor_override``."""
    __slots__ = ("kernel", "stride", "padding", "dilation", "out", "in_shape", "fmt",
                 "count_include_pad", "divisor_override", "ceil_mode")

    def __init__(self, x, kernel, stride, padding, dilation, out, count_include_pad=True,
                 divisor_override=None, ceil_mode=False):
        self.kernel, self.stride, self.padding = tuple(kernel), tuple(stride), tuple(padding)
        self.dilation, self.out = tuple(dilation), tuple(out)
        self.in_shape, self.fmt = tuple(x.shape), _mf.suggest(x)
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override
        self.ceil_mode = ceil_mode

    def geometry(self):
        """(kernel, stride, padding, dilation), as oneDNN's pooling takes them."""
        return self.kernel, self.stride, self.padding, self.dilation

    def disjoint(self):
        """Whether no two windows share an input position (so no maximum's index repeats)."""
        return all(s >= d * (k - 1) + 1 for k, s, d in zip(self.kernel, self.stride,
                                                            self.dilation))

    def tiled(self):
        """Whether NumPy's max pooling takes its path for windows that tile the input."""
        return TILED_MAX_POOL and _tiles_input(self.kernel, self.stride, self.padding,
                                               self.dilation, self.out, self.in_shape[2:])

    def high_pads(self):
        """The padding on both sides that the windows reach into (the high side as far as
        ``ceil_mode``'s last window goes)."""
        return tuple((p, max(0, (o - 1) * s + d * (k - 1) + 1 - size - p))
                     for size, k, s, p, d, o in zip(self.in_shape[2:], self.kernel, self.stride,
                                                    self.padding, self.dilation, self.out))

    def onednn_indices(self, workspace):
        """torch's flat indices of the maxima from oneDNN's max pooling ``workspace``."""
        return onednn.pooling.window_argmax_indices(workspace, self.in_shape[2:], *self.geometry())


def _in_format(array, fmt):
    """``array`` in memory format ``fmt`` (channels-last pooling keeps channels-last)."""
    return array if fmt is _mf.contiguous_format else _mf.copy_as(array, fmt)


def _numpy_max_pool(data, window, keep_workspace):
    """``(values, indices, None)``: the NumPy max pooling, its values in the input's format."""
    xp = namespace_of(data)
    kernel, stride, padding, dilation = window.geometry()
    sizes, out = data.shape[2:], window.out
    if window.tiled():
        values, indices = _tiled_max(xp, data, kernel, out)
    else:
        coords = [xp.arange(o)[:, None] * s + xp.arange(k) * d
                  for o, k, s, d in zip(out, kernel, stride, dilation)]
        pads = [(p, max(0, int(c.max()) + 1 - size - p))
                for c, size, p in zip(coords, sizes, padding)]
        padded = [size + lo + hi for size, (lo, hi) in zip(sizes, pads)]
        values, indices = _window_max(xp, data, coords, padded, pads)
    return _in_format(values, window.fmt), indices, None


def _has_nan_or_minus_inf(data):
    """Whether ``data`` holds a NaN or -inf, which oneDNN's max pooling does not treat as
    torch does (it skips NaNs; a window of -inf gives the lowest finite float): its sum is
    NaN or -inf then (and, harmlessly, where it overflows below)."""
    total = float(data.sum())
    return math.isnan(total) or total == -math.inf


def _onednn_max_pool(data, window, keep_workspace):
    """``(values, None, workspace)`` from oneDNN's max pooling (``keep_workspace``: the
    training forward, which writes the workspace its backward reads)."""
    if data.size < MAX_POOL_ONEDNN_MIN_ELEMENTS:
        return None
    pooled = onednn.pooling.pool_forward(data, onednn.pooling.MAX, *window.geometry(),
                                         window.out, keep_workspace)
    if pooled is None or _has_nan_or_minus_inf(data):
        return None
    return pooled[0], None, pooled[1]


_max_pool = KernelChoice("max pooling", onednn=_onednn_max_pool, numpy=_numpy_max_pool)


def _numpy_max_pool_backward(grad, workspace, window):
    indices = window.onednn_indices(workspace)
    size = math.prod(window.in_shape[2:])
    gx = im2col.scatter_add_flat(namespace_of(grad), grad, indices, size, window.disjoint())
    return _in_format(gx.reshape(window.in_shape), window.fmt)


def _onednn_max_pool_backward(grad, workspace, window):
    return onednn.pooling.pool_backward(grad, workspace, onednn.pooling.MAX, window.in_shape,
                                        *window.geometry(), window.fmt)


_max_pool_backward = KernelChoice("max pooling backward", onednn=_onednn_max_pool_backward,
                                  numpy=_numpy_max_pool_backward)


def _max_poolnd(op, nd, input, kernel_size, stride, padding, dilation, ceil_mode, with_indices):
    """``(values, indices)``, the indices None unless ``with_indices``."""
    _check_pool_input(op, input, nd)
    kernel, stride, padding, dilation = _pool_args(nd, kernel_size, stride, padding, dilation)
    x, unbatched = _batched(input, nd)
    sizes = x.shape[2:]
    out = [_pool_output_size(sizes[i], kernel[i], stride[i], padding[i], dilation[i], ceil_mode)
           for i in range(nd)]
    if any(o <= 0 for o in out):
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, x.shape[1:]))}). Calculated output "
                           f"size: ({'x'.join(map(str, [x.shape[1]] + out))}). Output size is too small")
    node_cls = MaxPool3DWithIndicesBackward0 if nd == 3 else MaxPool2DWithIndicesBackward0
    window = _Window(x._data, kernel, stride, padding, dilation, out, ceil_mode=ceil_mode)
    training = x._requires_grad and grad_state.grad_enabled
    values, indices, workspace = _max_pool(x._data, window, training or with_indices)
    if workspace is None:
        values, indices = _record_max(node_cls, x, values, indices, window.tiled(), window)
    else:
        values = make(values)
        node = record(node_cls, (x,), values)
        if node is not None:
            node.in_shape, node.window, node.unique = window.in_shape, window, window.disjoint()
            node.save(make(workspace))
        indices = make(window.onednn_indices(workspace)) if with_indices else None
    if unbatched:
        values = values.squeeze(0)
        indices = None if indices is None else indices.squeeze(0)
    return values, indices


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return _max_poolnd("max_pool1d", 1, input, kernel_size, stride, padding, dilation, ceil_mode,
                       True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return _max_poolnd("max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode,
                       True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return _max_poolnd("max_pool3d", 3, input, kernel_size, stride, padding, dilation, ceil_mode,
                       True)


def _maybe_indices(result, return_indices):
    return result if return_indices else result[0]


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Applies a 1D max pooling over an input signal composed of several input planes."""
    return _maybe_indices(_max_poolnd("max_pool1d", 1, input, kernel_size, stride, padding,
                                      dilation, ceil_mode, return_indices), return_indices)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Applies a 2D max pooling over an input signal composed of several input planes."""
    return _maybe_indices(_max_poolnd("max_pool2d", 2, input, kernel_size, stride, padding,
                                      dilation, ceil_mode, return_indices), return_indices)


@autocast_policy("fp32", only_if=max_pool3d_runs_in_fp32)
def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Applies a 3D max pooling over an input signal composed of several input planes."""
    return _maybe_indices(_max_poolnd("max_pool3d", 3, input, kernel_size, stride, padding,
                                      dilation, ceil_mode, return_indices), return_indices)


def _max_unpoolnd(op, nd, input, indices, kernel_size, stride, padding, output_size):
    kernel = tuple_arg(kernel_size, nd)
    stride = kernel if stride is None else tuple_arg(stride, nd, "stride")
    padding = tuple_arg(padding, nd, "padding")
    x, unbatched = _batched(input, nd)
    idx = indices.unsqueeze(0) if unbatched else indices
    default = [(x.shape[2 + i] - 1) * stride[i] - 2 * padding[i] + kernel[i] for i in range(nd)]
    if output_size is None:
        size = default
    else:
        size = list(output_size)[-nd:]
    if indices.shape != input.shape:
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({_shape_str(input.shape)}) but got indices tensor with shape: "
                           f"{_shape_str(indices.shape)}")
    out = _assign_flat(x, idx, tuple(x.shape[:2]) + tuple(size),
                       MaxUnpool3DBackward0 if nd == 3 else MaxUnpool2DBackward0)
    return out.squeeze(0) if unbatched else out


@autocast_policy("fp32")
def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Computes a partial inverse of MaxPool1d."""
    return _max_unpoolnd("max_unpool1d", 1, input, indices, kernel_size, stride, padding, output_size)


@autocast_policy("fp32")
def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Computes a partial inverse of MaxPool2d."""
    return _max_unpoolnd("max_unpool2d", 2, input, indices, kernel_size, stride, padding, output_size)


@autocast_policy("fp32")
def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Computes a partial inverse of MaxPool3d."""
    return _max_unpoolnd("max_unpool3d", 3, input, indices, kernel_size, stride, padding, output_size)


# -- average pooling ----------------------------------------------------------------------------

def _window_counts(xp, size, kernel, stride, pad, out, count_include_pad):
    """How many elements each output position's window averages over, along one dim."""
    start = xp.arange(out) * stride - pad
    end = xp.minimum(start + kernel, size + pad)
    if count_include_pad:
        return end - start
    return xp.minimum(end, size) - xp.maximum(start, 0)


class AvgPool2DBackward0(Node):
    """Backward of average pooling: each output's gradient spread over its window, divided
    by the window's divisor (``window`` holds the pooling's geometry)."""
    __slots__ = ()
    saved_fields = dict(_POOL_FIELDS, count_include_pad=_window_field("count_include_pad"),
                        divisor_override=_window_field("divisor_override"))
    jvp = jvp_by_transposition

    def backward(self, grad):
        return (_avg_pool_adjoint(grad, self.window),)

    def backward_arrays(self, grad):
        return (make(_avg_pool_backward(grad._data, self.window)),)


class AvgPool3DBackward0(AvgPool2DBackward0):
    __slots__ = ()


class AdaptiveAvgPool2DBackward0(AvgPool2DBackward0):
    __slots__ = ()
    saved_fields = {"self": not_kept("self")}


class AdaptiveAvgPool3DBackward0(AvgPool2DBackward0):
    __slots__ = ()
    saved_fields = {"self": not_kept("self")}


def _divisor(xp, window, dtype):
    """What each output's window sum is divided by: ``divisor_override``, else the count of
    its elements (padding included or not), an array broadcasting over the output."""
    if window.divisor_override is not None:
        return window.divisor_override
    divisor = 1
    nd = len(window.kernel)
    for i, (size, k, s, p, o) in enumerate(zip(window.in_shape[2:], window.kernel, window.stride,
                                               window.padding, window.out)):
        counts = _window_counts(xp, size, k, s, p, o, window.count_include_pad)
        divisor = divisor * counts.reshape((-1,) + (1,) * (nd - 1 - i))
    return divisor.astype(dtype)


def _ones_kernel(xp, window, dtype):
    return xp.ones((1, 1) + window.kernel, dtype=dtype)


def _planes(window, spatial):
    """The shape (N * C, 1, *spatial) that pools every plane as one depthwise convolution."""
    n, c = window.in_shape[:2]
    return (n * c, 1) + tuple(spatial)


def _numpy_avg_pool(data, window):
    """Each window's sum (a convolution with a kernel of ones) over its divisor."""
    xp = namespace_of(data)
    nd = len(window.kernel)
    summed = convolution.forward(data.reshape(_planes(window, data.shape[2:])),
                                 _ones_kernel(xp, window, data.dtype), None, window.stride,
                                 window.high_pads(), (1,) * nd, 1)
    result = summed.reshape(window.in_shape[:2] + window.out) / _divisor(xp, window, data.dtype)
    return _in_format(result, window.fmt)


def _numpy_avg_pool_backward(grad, window):
    """The adjoint of ``_numpy_avg_pool``: the gradient over the divisor, spread over each
    window by the transposed convolution."""
    xp = namespace_of(grad)
    nd = len(window.kernel)
    scaled = grad / _divisor(xp, window, grad.dtype)
    gx = convolution.input_grad(scaled.reshape(_planes(window, window.out)),
                                _ones_kernel(xp, window, grad.dtype), None, window.in_shape[2:],
                                window.stride, window.high_pads(), (1,) * nd, 1)
    return _in_format(gx.reshape(window.in_shape), window.fmt)


def _avg_pool_adjoint(grad, window):
    """``_numpy_avg_pool_backward`` in ember ops, differentiable again."""
    xp = namespace_of(grad._data)
    nd = len(window.kernel)
    divisor = _divisor(xp, window, grad._data.dtype)
    scaled = grad / (divisor if window.divisor_override is not None else make(divisor))
    gx = _conv_transpose(scaled.reshape(_planes(window, window.out)),
                         make(_ones_kernel(xp, window, grad._data.dtype)), None,
                         _Geometry(window.stride, window.high_pads(), (1,) * nd, 1),
                         window.in_shape[2:])
    return gx.reshape(window.in_shape)


def _onednn_algorithm(window):
    """oneDNN's average that divides as torch's does. Including the padding, torch counts the
    window's elements inside the padded input: without padding, those inside the input, as
    oneDNN's average excluding padding does (its including one counts the whole kernel)."""
    if window.count_include_pad and any(window.padding):
        return onednn.pooling.AVG_INCLUDE_PADDING
    return onednn.pooling.AVG_EXCLUDE_PADDING


def _onednn_avg_pool(data, window):
    if window.divisor_override is not None:
        return None
    pooled = onednn.pooling.pool_forward(data, _onednn_algorithm(window), *window.geometry(),
                                         window.out, False)
    return None if pooled is None else pooled[0]


def _onednn_avg_pool_backward(grad, window):
    if window.divisor_override is not None:
        return None
    return onednn.pooling.pool_backward(grad, None, _onednn_algorithm(window), window.in_shape,
                                        *window.geometry(), window.fmt)


_avg_pool = KernelChoice("average pooling", onednn=_onednn_avg_pool, numpy=_numpy_avg_pool)
_avg_pool_backward = KernelChoice("average pooling backward", onednn=_onednn_avg_pool_backward,
                                  numpy=_numpy_avg_pool_backward)


def _avg_pool_node(x, window, node_cls):
    """Average pooling of ``x`` (N, C, *S) over ``window``, recorded as ``node_cls``."""
    out = make(_avg_pool(x._data, window))
    node = record(node_cls, (x,), out)
    if node is not None:
        node.window = window
    return out


def _avg_poolnd(op, nd, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                divisor_override):
    _check_pool_input(op, input, nd)
    kernel, stride, padding, _ = _pool_args(nd, kernel_size, stride, padding, 1)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    x, unbatched = _batched(input, nd)
    sizes = x.shape[2:]
    out = [_pool_output_size(sizes[i], kernel[i], stride[i], padding[i], 1, ceil_mode)
           for i in range(nd)]
    window = _Window(x._data, kernel, stride, padding, (1,) * nd, out, count_include_pad,
                     divisor_override, ceil_mode)
    result = _avg_pool_node(x, window, AvgPool3DBackward0 if nd == 3 else AvgPool2DBackward0)
    return result.squeeze(0) if unbatched else result


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """Applies a 1D average pooling over an input signal composed of several input planes."""
    return _avg_poolnd("avg_pool1d", 1, input, kernel_size, stride, padding, ceil_mode,
                       count_include_pad, None)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """Applies 2D average-pooling operation in kH x kW regions by step size sH x sW steps."""
    return _avg_poolnd("avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode,
                       count_include_pad, divisor_override)


@autocast_policy("fp32")
def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """Applies 3D average-pooling operation in kT x kH x kW regions by step size sT x sH x sW."""
    if isinstance(input, Tensor) and input.dtype in (_dtype.float16, _dtype.bfloat16):
        raise NotImplementedError("\"avg_pool3d_out_frame\" not implemented for "
                                  f"'{_type_word(input._data.dtype)}'")
    return _avg_poolnd("avg_pool3d", 3, input, kernel_size, stride, padding, ceil_mode,
                       count_include_pad, divisor_override)


# -- adaptive pooling ---------------------------------------------------------------------------

def _adaptive_bounds(xp, size, out):
    i = xp.arange(out)
    return (i * size) // out, -((-(i + 1) * size) // out)


def _adaptive_matrix(xp, size, out, dtype):
    """The (out, size) averaging matrix of adaptive average pooling along one dim."""
    start, end = _adaptive_bounds(xp, size, out)
    j = xp.arange(size)
    inside = (j >= start[:, None]) & (j < end[:, None])
    return (inside / (end - start)[:, None]).astype(dtype)


def _output_size(output_size, nd, sizes):
    out = tuple_arg(output_size, nd, "output_size") if not isinstance(output_size, (tuple, list)) \
        else tuple(output_size)
    return tuple(sizes[i] if o is None else int(o) for i, o in enumerate(out))


def _adaptive_avg_poolnd(op, nd, input, output_size):
    _check_pool_input(op, input, nd)
    xp = namespace_of(input._data)
    sizes = input.shape[-nd:]
    out = _output_size(output_size, nd, sizes)
    if all(o == 1 for o in out):  # global average pooling: a mean, as torch records it
        return input.mean(tuple(range(-nd, 0)), keepdim=True)
    if all(o and size % o == 0 for size, o in zip(sizes, out)):  # equal windows: average pooling
        x, unbatched = _batched(input, nd)
        kernel = tuple(size // o for size, o in zip(sizes, out))
        window = _Window(x._data, kernel, kernel, (0,) * nd, (1,) * nd, out)
        result = _avg_pool_node(x, window, AdaptiveAvgPool3DBackward0 if nd == 3
                                else AdaptiveAvgPool2DBackward0)
        return result.squeeze(0) if unbatched else result
    result = input
    for i in range(nd):
        dim = input.dim() - nd + i
        m = make(_adaptive_matrix(xp, input.shape[dim], out[i], input._data.dtype))
        result = (result.movedim(dim, -1) @ m.t()).movedim(-1, dim)
    return result


@autocast_policy("native")
def adaptive_avg_pool1d(input, output_size):
    """Applies a 1D adaptive average pooling over an input signal composed of several input
    planes."""
    return _adaptive_avg_poolnd("adaptive_avg_pool1d", 1, input, output_size)


@autocast_policy("native")
def adaptive_avg_pool2d(input, output_size):
    """Applies a 2D adaptive average pooling over an input signal composed of several input
    planes."""
    return _adaptive_avg_poolnd("adaptive_avg_pool2d", 2, input, output_size)


@autocast_policy("native")
def adaptive_avg_pool3d(input, output_size):
    """Applies a 3D adaptive average pooling over an input signal composed of several input
    planes."""
    return _adaptive_avg_poolnd("adaptive_avg_pool3d", 3, input, output_size)


def _adaptive_max_poolnd(op, nd, input, output_size):
    _check_pool_input(op, input, nd)
    x, unbatched = _batched(input, nd)
    xp = namespace_of(x._data)
    sizes = x.shape[2:]
    out = _output_size(output_size, nd, sizes)
    coords = []
    for i in range(nd):
        start, end = _adaptive_bounds(xp, sizes[i], out[i])
        widest = int((end - start).max())
        coords.append(xp.minimum(start[:, None] + xp.arange(widest), end[:, None] - 1))
    node_cls = AdaptiveMaxPool3DBackward0 if nd == 3 else AdaptiveMaxPool2DBackward0
    values, indices = _record_max(node_cls, x,
                                  *_window_max(xp, x._data, coords, sizes, [(0, 0)] * nd))
    if unbatched:
        return values.squeeze(0), indices.squeeze(0)
    return values, indices


class AdaptiveMaxPool2DBackward0(MaxPool2DWithIndicesBackward0):
    __slots__ = ()
    saved_fields = {"self": not_kept("self"), "result1": _max_pool_indices}


class AdaptiveMaxPool3DBackward0(MaxPool2DWithIndicesBackward0):
    __slots__ = ()
    saved_fields = {"self": not_kept("self"), "result1": _max_pool_indices}


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    return _adaptive_max_poolnd("adaptive_max_pool1d", 1, input, output_size)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    return _adaptive_max_poolnd("adaptive_max_pool2d", 2, input, output_size)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    return _adaptive_max_poolnd("adaptive_max_pool3d", 3, input, output_size)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Applies a 1D adaptive max pooling over an input signal composed of several input
    planes."""
    return _maybe_indices(adaptive_max_pool1d_with_indices(input, output_size), return_indices)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Applies a 2D adaptive max pooling over an input signal composed of several input
    planes."""
    return _maybe_indices(adaptive_max_pool2d_with_indices(input, output_size), return_indices)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Applies a 3D adaptive max pooling over an input signal composed of several input
    planes."""
    return _maybe_indices(adaptive_max_pool3d_with_indices(input, output_size), return_indices)


# -- power-average pooling ----------------------------------------------------------------------

def _lp_poolnd(nd, input, norm_type, kernel_size, stride, ceil_mode):
    kernel = tuple_arg(kernel_size, nd)
    pool = (avg_pool1d, avg_pool2d, avg_pool3d)[nd - 1]
    out = pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    from .activation import relu   # (torch's formula: relu's gradient lets NaN through)
    return (out.sign() * relu(out.abs())).mul(math.prod(kernel)).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Applies a 1D power-average pooling over an input signal composed of several input
    planes. If the sum of all inputs to the power of ``p`` is zero, the gradient is set to
    zero as well."""
    return _lp_poolnd(1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Applies a 2D power-average pooling over an input signal composed of several input
    planes. If the sum of all inputs to the power of ``p`` is zero, the gradient is set to
    zero as well."""
    return _lp_poolnd(2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Applies a 3D power-average pooling over an input signal composed of several input
    planes. If the sum of all inputs to the power of ``p`` is zero, the gradient is set to
    zero as well."""
    return _lp_poolnd(3, input, norm_type, kernel_size, stride, ceil_mode)
