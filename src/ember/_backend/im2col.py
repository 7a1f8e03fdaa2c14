"""Array-level kernels the array namespaces lack: sliding windows (im2col through strided
views), convolution as GEMMs over channels-last columns (or per-sample GEMMs over
channel-major columns), its adjoints (col2im by a loop over kernel offsets, each a strided
slice add, a convolution with the reversed kernel, or one such convolution per sub-pixel
phase of a strided one; where a backward needs both gradients and both read the same
columns, they come from one pass over those columns), and scatter-add along flattened
spatial positions.

Every function takes the namespace ``xp`` (NumPy or CuPy) first and works on its arrays only.
Spatial geometry is given per spatial dimension: ``pads`` as ``((low, high), ...)``.
"""
import itertools
import math

from . import depthwise

# The input gradient of a stride-1 convolution runs as a convolution of the padded gradient
# with the reversed kernel (an im2col copy and a GEMM) instead of a GEMM and col2im.
INPUT_GRAD_AS_CONV = True
# Ungrouped convolutions with at least this many input channels (and a kernel larger than
# 1x1) build their columns from a channels-last copy of the input, (N*P, K*C), so that the
# GEMM's long side is the batch's positions rather than the 16-64 output channels.
CHANNELS_LAST_MIN_CHANNELS = 4
# Those columns are built and multiplied a block of whole samples at a time, about this many
# bytes per block, so that a block is still in (L2) cache when its GEMM reads it: a tile of
# the computation (ResNet-20 at batch 32: 32, 8 and 2 blocks for 32x32, 16x16 and 8x8) ...
COLUMN_BLOCK_BYTES = 1 << 20
# ... but at least this many rows, so that the GEMMs of deep columns (large K*C, few
# positions per sample) stay large enough to run near BLAS's peak.
COLUMN_BLOCK_MIN_ROWS = 1024
# The input gradient of a strided convolution (a strided transposed convolution) with at
# least this many input channels runs as one stride-1 convolution per sub-pixel phase
# instead of a GEMM and col2im (each phase's GEMM has that many columns).
INPUT_GRAD_PHASES_MIN_CHANNELS = 16
# A stride-1 input gradient that is not a convolution runs its col2im on the flat padded
# grid (``_input_grad_flat``) where that grid is at most twice the output.
FLAT_COL2IM = True
# Where the backward needs both gradients and both read the same channels-last columns (the
# stride-1 input gradient's columns of the padded output gradient also give the weight
# gradient; a transposed convolution's two gradients both read columns of its upstream
# gradient), the columns are built once (``conv_backward``, ``conv_forward_and_weight_grad``).
FUSED_BACKWARD = True
__all__ = ["pad_constant", "windows", "conv_output_size", "conv_forward", "conv_input_grad",
           "conv_weight_grad", "conv_backward", "conv_forward_and_weight_grad", "col2im",
           "scatter_add_flat"]


def pad_constant(xp, x, pads, value=0):
    """``x`` (N, C, *S) padded on its spatial dims by ``pads`` with ``value``; no copy when
    nothing is padded."""
    if not any(lo or hi for lo, hi in pads):
        return x
    lead = x.ndim - len(pads)
    if any(lo < 0 or hi < 0 for lo, hi in pads):  # cropping: the general routine
        width = ((0, 0),) * lead + tuple(pads)
        return xp.pad(x, width, mode="constant", constant_values=value)
    shape = x.shape[:lead] + tuple(s + lo + hi for s, (lo, hi) in zip(x.shape[lead:], pads))
    out = xp.zeros(shape, dtype=x.dtype) if value == 0 else xp.full(shape, value, dtype=x.dtype)
    out[(slice(None),) * lead + tuple(slice(lo, lo + s) for s, (lo, _) in zip(x.shape[lead:], pads))] = x
    return out


def conv_output_size(size, kernel, stride, dilation):
    return (size - dilation * (kernel - 1) - 1) // stride + 1


def windows(xp, x, kernel, stride, dilation):
    """The view (N, C, *O, *K) of every kernel window of ``x`` (N, C, *S)."""
    nd = len(kernel)
    spatial = x.shape[2:]
    out = tuple(conv_output_size(spatial[i], kernel[i], stride[i], dilation[i]) for i in range(nd))
    st = x.strides
    shape = x.shape[:2] + out + tuple(kernel)
    strides = (st[:2] + tuple(st[2 + i] * stride[i] for i in range(nd))
               + tuple(st[2 + i] * dilation[i] for i in range(nd)))
    return xp.lib.stride_tricks.as_strided(x, shape, strides)


def _columns(xp, x, kernel, stride, pads, dilation):
    """im2col: (N, C, *K, *O) window values in one copy whose innermost axis runs along the
    output row (a contiguous read when the stride is 1), and the output size O."""
    cols = windows(xp, pad_constant(xp, x, pads), kernel, stride, dilation)  # (N, C, *O, *K)
    nd = len(kernel)
    out = cols.shape[2:2 + nd]
    order = (0, 1) + tuple(range(2 + nd, 2 + 2 * nd)) + tuple(range(2, 2 + nd))
    return xp.ascontiguousarray(cols.transpose(order)), out


def _batch_columns(xp, x, kernel, stride, pads, dilation):
    """im2col with the batch moved next to the output positions: (C*K, N*P) in one copy, and
    the output size O."""
    cols = windows(xp, pad_constant(xp, x, pads), kernel, stride, dilation)  # (N, C, *O, *K)
    nd = len(kernel)
    out = cols.shape[2:2 + nd]
    order = (1,) + tuple(range(2 + nd, 2 + 2 * nd)) + (0,) + tuple(range(2, 2 + nd))
    cols = xp.ascontiguousarray(cols.transpose(order))
    return cols.reshape(x.shape[1] * math.prod(kernel), x.shape[0] * math.prod(out)), out


def _batch_rows(xp, a):
    """(N, R, *O) as a contiguous (R, N*P) matrix."""
    n, r = a.shape[:2]
    p = math.prod(a.shape[2:])
    return xp.ascontiguousarray(a.reshape(n, r, p).transpose(1, 0, 2)).reshape(r, n * p)


def _block_samples(xp, n, positions, row_width, itemsize):
    """How many whole samples a block of channels-last columns holds: about
    ``COLUMN_BLOCK_BYTES`` of rows ``row_width`` values wide, at least
    ``COLUMN_BLOCK_MIN_ROWS`` rows, ``positions`` rows per sample. On a GPU, the whole batch:
    one GEMM instead of a kernel launch per cache-sized block."""
    if getattr(xp, "__name__", "") != "numpy":
        return max(n, 1)
    rows = max(COLUMN_BLOCK_BYTES // (max(row_width, 1) * itemsize), COLUMN_BLOCK_MIN_ROWS)
    return max(1, min(n, rows // max(positions, 1)))


def _padded_channels_last(xp, samples, spatial, pads, channels, dtype):
    """A zero buffer (B, *padded S, C) for blocks of samples laid out channels-last, and the
    slices of its interior (its borders stay zero)."""
    image = xp.zeros((samples,) + tuple(s + lo + hi for s, (lo, hi) in zip(spatial, pads))
                     + (channels,), dtype=dtype)
    return image, tuple(slice(lo, lo + s) for s, (lo, _) in zip(spatial, pads))


def _channels_last_windows(xp, image, out, kernel, stride, dilation):
    """The view (B, *O, *K, C) of every kernel window of a channels-last ``image``
    (B, *S, C)."""
    nd = len(kernel)
    st = image.strides
    return xp.lib.stride_tricks.as_strided(
        image, image.shape[:1] + tuple(out) + tuple(kernel) + image.shape[-1:],
        (st[0],) + tuple(st[1 + i] * stride[i] for i in range(nd))
        + tuple(st[1 + i] * dilation[i] for i in range(nd)) + (st[-1],))


def _channels_last_order(nd):
    """The axes that move a (N, C, *S) array to (N, *S, C)."""
    return (0,) + tuple(range(2, 2 + nd)) + (1,)


def _column_blocks(xp, x, kernel, stride, pads, dilation):
    """im2col in channels-last order, a block of whole samples at a time: yields
    ``(start, stop, cols)`` with ``cols`` the (B*P, K*C) columns of samples start..stop, one
    row per output position (each row reads runs of C, for stride 1 Kw*C, contiguous values).
    A block's samples are copied channels-last into a zero-padded buffer, and its windows
    into a columns buffer; both buffers (about ``COLUMN_BLOCK_BYTES``, at least
    ``COLUMN_BLOCK_MIN_ROWS`` rows) serve every block, so a block is still in cache when its
    GEMM reads it."""
    n, c = x.shape[:2]
    spatial = x.shape[2:]
    out = _output_spatial(spatial, kernel, stride, pads, dilation)
    p, kc = math.prod(out), math.prod(kernel) * c
    step = _block_samples(xp, n, p, kc, x.itemsize)
    image, inner = _padded_channels_last(xp, step, spatial, pads, c, x.dtype)
    windows_view = _channels_last_windows(xp, image, out, kernel, stride, dilation)
    cols = xp.empty(windows_view.shape, dtype=x.dtype)
    channels_last = _channels_last_order(len(kernel))
    for start in range(0, n, step):
        b = min(n, start + step) - start
        image[(slice(0, b),) + inner] = x[start:start + b].transpose(channels_last)
        xp.copyto(cols[:b], windows_view[:b])
        yield start, start + b, cols[:b].reshape(b * p, kc)


def _kernel_matrix(xp, w):
    """``w`` (Cout, C, *K) as the (K*C, Cout) matrix that multiplies channels-last columns
    (the transposed view of a (Cout, K*C) copy: BLAS reads either layout)."""
    return xp.ascontiguousarray(xp.moveaxis(w, 1, -1)).reshape(w.shape[0], -1).T


def _flipped_kernel_matrix(xp, w):
    """The (K*Cout, C) kernel matrix of the transposed convolution: ``w`` (Cout, C, *K) with
    its kernel reversed, in one copy."""
    nd = w.ndim - 2
    wt = w.transpose(tuple(range(2, 2 + nd)) + (0, 1))[(slice(None, None, -1),) * nd]
    return xp.ascontiguousarray(wt).reshape(-1, w.shape[1])


def _channels_last(in_channels, groups, kernel):
    return (groups == 1 and in_channels >= CHANNELS_LAST_MIN_CHANNELS
            and not all(k == 1 for k in kernel))


def _channels_last_products(xp, x, kernel, stride, pads, dilation, wmat=None, gy=None):
    """One pass over the channels-last column blocks of ``x`` (``_column_blocks``) that
    multiplies each block by what is given: ``wmat`` (K*C, Cout) for the convolution, GEMMs
    ``cols (B*P, K*C) @ wmat`` each transposed into the (N, Cout, *O) output; ``gy``
    (N, Cg, *O) for the weight gradient, the sum of ``gy (Cg, B*P) @ cols`` as a (Cg, K*C)
    matrix. Returns ``(y, gw)``, None for what was not asked."""
    n = x.shape[0]
    out = _output_spatial(x.shape[2:], kernel, stride, pads, dilation)
    p = math.prod(out)
    y = None
    if wmat is not None:
        y = xp.empty((n, wmat.shape[1], p), dtype=x.dtype)
    gw = _products_of_samples(xp, x, kernel, stride, pads, dilation, out, wmat, gy, y)
    if y is not None:
        y = y.reshape((n, wmat.shape[1]) + out)
    return y, gw


def _products_of_samples(xp, x, kernel, stride, pads, dilation, out, wmat, gy, y):
    """``_channels_last_products`` of the samples ``x``: writes the
    convolution into ``y`` (N, Cout, P) when ``wmat`` is given, returns the weight gradient
    matrix when ``gy`` is (else None)."""
    n = x.shape[0]
    p = math.prod(out)
    product = gw = None
    if gy is not None:
        g = gy.reshape(n, gy.shape[1], p)
    for start, stop, cols in _column_blocks(xp, x, kernel, stride, pads, dilation):
        if wmat is not None:
            if product is None:
                product = xp.empty((cols.shape[0], wmat.shape[1]), dtype=x.dtype)
            part = product[:cols.shape[0]]
            xp.matmul(cols, wmat, out=part)
            y[start:stop] = part.reshape(stop - start, p, wmat.shape[1]).transpose(0, 2, 1)
        if gy is not None:
            rows = g[start] if stop - start == 1 else \
                g[start:stop].transpose(1, 0, 2).reshape(g.shape[1], -1)
            part = xp.matmul(rows, cols)
            gw = part if gw is None else xp.add(gw, part, out=gw)
    if gy is not None and gw is None:  # an empty batch
        gw = xp.zeros((gy.shape[1], math.prod(kernel) * x.shape[1]), dtype=gy.dtype)
    return gw


def _forward_channels_last(xp, x, wmat, kernel, stride, pads, dilation):
    """The convolution as GEMMs ``cols (B*P, K*C) @ wmat (K*C, Cout)`` over blocks of
    samples, each block's product transposed into the (N, Cout, *O) output."""
    return _channels_last_products(xp, x, kernel, stride, pads, dilation, wmat=wmat)[0]


def _weight_from_matrix(xp, gw, kernel, channels):
    """A channels-last weight gradient matrix (Cg, K*C) as the weight (Cg, C, *K)."""
    gw = gw.reshape((gw.shape[0],) + tuple(kernel) + (channels,))
    return xp.ascontiguousarray(xp.moveaxis(gw, -1, 1))


def _weight_grad_channels_last(xp, x, gy, kernel, stride, pads, dilation):
    """The weight gradient as a sum over blocks of samples of ``gy (Cout, B*P) @ cols
    (B*P, K*C)``."""
    gw = _channels_last_products(xp, x, kernel, stride, pads, dilation, gy=gy)[1]
    return _weight_from_matrix(xp, gw, kernel, x.shape[1])


def _output_spatial(spatial, kernel, stride, pads, dilation):
    return tuple(conv_output_size(s + lo + hi, k, st, d)
                 for s, k, st, (lo, hi), d in zip(spatial, kernel, stride, pads, dilation))


def conv_forward(xp, x, w, stride, pads, dilation, groups):
    """Cross-correlation of ``x`` (N, C, *S) with ``w`` (Cout, C/G, *K): (N, Cout, *O).
    Ungrouped with enough channels: GEMMs over blocks of channels-last columns; otherwise
    one batched GEMM ``W (G, Coutg, Cg*K) @ cols (N, G, Cg*K, P)`` that lands in the output's
    own layout (also for few input and output channels: one GEMM over the whole batch with
    so few rows runs slower in OpenBLAS than these per-sample GEMMs)."""
    if _channels_last(x.shape[1], groups, w.shape[2:]):
        return _forward_channels_last(xp, x, _kernel_matrix(xp, w), w.shape[2:], stride, pads,
                                      dilation)
    return _conv_forward_general(xp, x, w, stride, pads, dilation, groups)


def _conv_forward_general(xp, x, w, stride, pads, dilation, groups):
    """``conv_forward`` by the paths that are not channels-last."""
    n, cout = x.shape[0], w.shape[0]
    if depthwise.is_depthwise(x.shape[1], cout, groups):  # one channel per group: no GEMM
        return depthwise.forward(xp, x, w, stride, pads, dilation)
    cols, out = _columns(xp, x, w.shape[2:], stride, pads, dilation)
    p = math.prod(out)
    if groups == 1:
        y = xp.matmul(w.reshape(cout, -1), cols.reshape(n, -1, p))
    else:
        y = xp.matmul(w.reshape(groups, cout // groups, -1), cols.reshape(n, groups, -1, p))
    return y.reshape((n, cout) + out)


def _kernel_offsets(kernel):
    return itertools.product(*(range(k) for k in kernel))


def _offset_target(offset, stride, dilation, out):
    """The strided slices of the padded input that kernel ``offset`` touches."""
    return tuple(slice(o * d, o * d + s * (n - 1) + 1, s)
                 for o, s, d, n in zip(offset, stride, dilation, out))


def col2im(xp, cols, in_spatial, stride, pads, dilation):
    """The adjoint of ``_columns``: ``cols`` (N, C, *K, *O) summed back into an array
    (N, C, *S), one strided slice add per kernel offset; padding is cropped."""
    nd = len(in_spatial)
    kernel = cols.shape[2:2 + nd]
    out = cols.shape[2 + nd:]
    padded = tuple(in_spatial[i] + pads[i][0] + pads[i][1] for i in range(nd))
    acc = xp.zeros(cols.shape[:2] + padded, dtype=cols.dtype)
    lead = (slice(None), slice(None))
    for offset in _kernel_offsets(kernel):
        acc[lead + _offset_target(offset, stride, dilation, out)] += cols[lead + offset]
    crop = tuple(slice(pads[i][0], pads[i][0] + in_spatial[i]) for i in range(nd))
    return acc[lead + crop]


def _col2im_channel_major(xp, cols, batch, in_spatial, stride, pads, dilation):
    """col2im of one-GEMM columns (C, *K, N, *O): the (N, C, *S) input they sum to."""
    nd = len(in_spatial)
    kernel = cols.shape[1:1 + nd]
    out = cols.shape[2 + nd:]
    padded = tuple(s + lo + hi for s, (lo, hi) in zip(in_spatial, pads))
    acc = xp.zeros((cols.shape[0], batch) + padded, dtype=cols.dtype)
    lead = (slice(None), slice(None))
    for offset in _kernel_offsets(kernel):
        acc[lead + _offset_target(offset, stride, dilation, out)] += \
            cols[(slice(None),) + offset + (slice(None),)]
    crop = tuple(slice(lo, lo + s) for s, (lo, _) in zip(in_spatial, pads))
    order = (1, 0) + tuple(range(2, 2 + nd))
    return xp.ascontiguousarray(acc[lead + crop].transpose(order))


def _flipped_transposed(xp, w, groups):
    """``w`` (Cout, C/G, *K) as the weight (C, Cout/G, *K) of the transposed convolution,
    kernel reversed."""
    cout, cg = w.shape[:2]
    kernel = w.shape[2:]
    wt = w.reshape((groups, cout // groups, cg) + kernel).swapaxes(1, 2)
    wt = wt[(Ellipsis,) + (slice(None, None, -1),) * len(kernel)]
    return xp.ascontiguousarray(wt).reshape((groups * cg, cout // groups) + kernel)


def _reversed_kernel_conv(xp, gy, w, stride, pads, dilation, groups):
    """The convolution of ``gy`` (N, Cout, *O) with the reversed, transposed kernel of ``w``
    (Cout, C/G, *K)."""
    if _channels_last(gy.shape[1], groups, w.shape[2:]):
        return _forward_channels_last(xp, gy, _flipped_kernel_matrix(xp, w), w.shape[2:], stride,
                                      pads, dilation)
    return conv_forward(xp, gy, _flipped_transposed(xp, w, groups), stride, pads, dilation,
                        groups)


def _transposed_pads(in_spatial, out, kernel, pads, dilation):
    """Per-side padding of the upstream gradient that turns the input gradient of a
    stride-1 convolution into a plain convolution with the reversed kernel; None where a
    side would need cropping."""
    result = []
    for size, o, k, (lo, _), d in zip(in_spatial, out, kernel, pads, dilation):
        low = d * (k - 1) - lo
        high = size - o - low + d * (k - 1)
        if low < 0 or high < 0:
            return None
        result.append((low, high))
    return tuple(result)


def conv_input_grad(xp, gy, w, in_spatial, stride, pads, dilation, groups):
    """The adjoint of ``conv_forward`` in its input (a transposed convolution): ``gy``
    (N, Cout, *O) and ``w`` (Cout, C/G, *K) give (N, C, *in_spatial)."""
    n, cout = gy.shape[:2]
    out = gy.shape[2:]
    kernel = w.shape[2:]
    in_spatial = tuple(in_spatial)
    if depthwise.is_depthwise(w.shape[1] * groups, cout, groups):
        return depthwise.input_grad(xp, gy, w, in_spatial, stride, pads, dilation)
    cg = w.shape[1]
    if _is_pointwise(kernel, stride, pads) and groups == 1:  # a plain product per sample
        gx = xp.matmul(w.reshape(cout, cg).T, gy.reshape(n, cout, -1))
        return gx.reshape((n, cg) + in_spatial)
    tpads = _transposed_pads(in_spatial, out, kernel, pads, dilation) if _input_grad_as_conv(
        cout, cg * groups, in_spatial, out, stride) else None
    if tpads is not None:
        return _reversed_kernel_conv(xp, gy, w, stride, tpads, dilation, groups)
    if _input_grad_by_phases(stride, dilation, cg * groups):
        if groups == 1 and _channels_last(cout, groups, kernel):
            return _input_grad_phases_channels_last(xp, gy, w, in_spatial, stride, pads)
        return _input_grad_by_phases_of(xp, gy, w, in_spatial, stride, pads, groups)
    if _flat_col2im(in_spatial, out, stride, pads):
        return _input_grad_flat(xp, gy, w, in_spatial, pads, dilation, groups)
    g = _batch_rows(xp, gy).reshape(groups, cout // groups, -1)      # (G, Coutg, N*P)
    wmat = w.reshape(groups, cout // groups, -1).transpose(0, 2, 1)  # (G, Cg*K, Coutg)
    cols = xp.matmul(wmat, g).reshape((groups * cg,) + tuple(kernel) + (n,) + tuple(out))
    return _col2im_channel_major(xp, cols, n, in_spatial, stride, pads, dilation)


def _input_grad_by_phases(stride, dilation, in_channels):
    return (in_channels >= INPUT_GRAD_PHASES_MIN_CHANNELS and any(s > 1 for s in stride)
            and all(d == 1 for d in dilation))


def _phase(size, out, k, s, r, lo):
    """One phase ``r`` of a strided input gradient along one dimension: the input positions
    ``q = m*s + r`` (padded coordinates) read kernel taps r, r+s, ... only. Returns the
    sub-kernel's taps, the stride-1 padding (low, high) of the gradient that makes it a plain
    correlation with the reversed sub-kernel, and the first cropped position written with
    its count; None when the phase reads no tap or no position."""
    taps = range(r, k, s)
    m0 = -((r - lo) // s)                 # ceil((lo - r) / s)
    count = -((r - lo - size) // s) - m0  # ceil((lo + size - r) / s) - m0
    if not taps or count <= 0:
        return None
    low = len(taps) - 1 - m0
    return taps, (low, count + m0 - out), m0 * s + r - lo, count


def _input_grad_by_phases_of(xp, gy, w, in_spatial, stride, pads, groups):
    """The input gradient of a strided convolution split by the position of each input
    element modulo the stride (sub-pixel phases): every phase is a stride-1 convolution of
    the gradient with the reversed sub-kernel of the taps that reach it, written into a
    strided slice of the result. No col2im; the GEMMs do the same FLOPs as the columns'."""
    n = gy.shape[0]
    cg = w.shape[1]
    out = gy.shape[2:]
    kernel = w.shape[2:]
    nd = len(kernel)
    per_dim = [[_phase(in_spatial[i], out[i], kernel[i], stride[i], r, pads[i][0])
                for r in range(stride[i])] for i in range(nd)]
    complete = all(p is not None for phases in per_dim for p in phases)
    gx = (xp.empty if complete else xp.zeros)((n, cg * groups) + in_spatial, dtype=gy.dtype)
    for phase in itertools.product(*per_dim):
        if any(p is None for p in phase):
            continue
        sub = w[(slice(None), slice(None)) + tuple(slice(t.start, t.stop, t.step)
                                                   for t, _, _, _ in phase)]
        g, tpads = gy, []
        for i, (_, (low, high), _, _) in enumerate(phase):  # crop where a side is negative
            crop = slice(max(0, -low), g.shape[2 + i] - max(0, -high))
            g = g[(slice(None),) * (2 + i) + (crop,)]
            tpads.append((max(0, low), max(0, high)))
        part = _reversed_kernel_conv(xp, g, sub, (1,) * nd, tuple(tpads), (1,) * nd, groups)
        target = tuple(slice(first, first + stride[i] * (count - 1) + 1, stride[i])
                       for i, (_, _, first, count) in enumerate(phase))
        gx[(slice(None), slice(None)) + target] = part
    return gx


class _PhaseColumns:
    """One sub-pixel phase of ``_input_grad_phases_channels_last``: the windows of the shared
    channels-last gradient image it reads, its columns buffer and its GEMM's, its reversed
    sub-kernel matrix, and the strided slice of the input gradient it writes."""

    def __init__(self, xp, phase, w, image, lows, stride, block):
        nd = len(phase)
        taps = tuple(slice(t.start, t.stop, t.step) for t, _, _, _ in phase)
        kernel = tuple(len(t) for t, _, _, _ in phase)
        self.count = tuple(count for _, _, _, count in phase)
        origin = tuple(slice(lo - low, None) for lo, (_, (low, _), _, _) in zip(lows, phase))
        self.windows = _channels_last_windows(xp, image[(slice(None),) + origin], self.count,
                                              kernel, (1,) * nd, (1,) * nd)
        self.cols = xp.empty(self.windows.shape, dtype=image.dtype)
        self.positions = math.prod(self.count)
        self.product = xp.empty((block * self.positions, w.shape[1]), dtype=image.dtype)
        self.wmat = _flipped_kernel_matrix(xp, w[(slice(None), slice(None)) + taps])
        self.target = tuple(slice(first, first + stride[i] * (count - 1) + 1, stride[i])
                            for i, (_, _, first, count) in enumerate(phase))

    def product_of(self, xp, b):
        """The phase's (b, *count, C) share of the input gradient of the first ``b`` samples
        of the image: their columns times the reversed sub-kernel."""
        xp.copyto(self.cols[:b], self.windows[:b])
        part = self.product[:b * self.positions]
        xp.matmul(self.cols[:b].reshape(b * self.positions, -1), self.wmat, out=part)
        return part.reshape((b,) + self.count + (-1,))


def _input_grad_phases_channels_last(xp, gy, w, in_spatial, stride, pads):
    """The input gradient by sub-pixel phases (as ``_input_grad_by_phases_of``) of an
    ungrouped convolution whose gradient has channels enough for channels-last columns:
    a block of ``gy`` is copied once into a channels-last image zero-padded for the widest
    phase, every phase's columns are windows of that image, and each phase's product goes
    into its strided slice of a channels-last block of the result (runs of C values), which
    is transposed once."""
    n, cout = gy.shape[:2]
    c = w.shape[1]
    out, kernel = gy.shape[2:], w.shape[2:]
    nd = len(kernel)
    per_dim = [[_phase(in_spatial[i], out[i], kernel[i], stride[i], r, pads[i][0])
                for r in range(stride[i])] for i in range(nd)]
    plan = [p for p in itertools.product(*per_dim) if all(d is not None for d in p)]
    if not plan:  # no tap reaches any input position
        return xp.zeros((n, c) + tuple(in_spatial), dtype=gy.dtype)
    lows = [max([0] + [p[i][1][0] for p in plan]) for i in range(nd)]
    highs = [max([0] + [p[i][1][1] for p in plan]) for i in range(nd)]
    # every phase's columns of a block are alive at once: size the block by all of them
    widest = max(math.prod(len(d[0]) for d in p) for p in plan) * cout
    positions = sum(math.prod(d[3] for d in p) for p in plan)
    step = _block_samples(xp, n, positions, widest, gy.itemsize)
    image, inner = _padded_channels_last(xp, step, out, tuple(zip(lows, highs)), cout, gy.dtype)
    phases = [_PhaseColumns(xp, p, w, image, lows, stride, step) for p in plan]
    complete = all(p is not None for d in per_dim for p in d)
    result = (xp.empty if complete else xp.zeros)((step,) + tuple(in_spatial) + (c,),
                                                  dtype=gy.dtype)  # unwritten places stay 0
    gx = xp.empty((n, c) + tuple(in_spatial), dtype=gy.dtype)
    channels_last = _channels_last_order(nd)
    channels_first = (0, nd + 1) + tuple(range(1, nd + 1))
    for start in range(0, n, step):
        b = min(n, start + step) - start
        image[(slice(0, b),) + inner] = gy[start:start + b].transpose(channels_last)
        for ph in phases:
            result[(slice(0, b),) + ph.target] = ph.product_of(xp, b)
        gx[start:start + b] = result[:b].transpose(channels_first)
    return gx


def _flat_col2im(in_spatial, out, stride, pads):
    """Whether a stride-1 col2im runs on the flat padded grid: when that grid has at most
    twice as many positions as the output (its extra positions are multiplied too)."""
    padded = math.prod(s + lo + hi for s, (lo, hi) in zip(in_spatial, pads))
    return FLAT_COL2IM and all(s == 1 for s in stride) and padded <= 2 * math.prod(out)


def _input_grad_flat(xp, gy, w, in_spatial, pads, dilation, groups):
    """The input gradient of a stride-1 convolution as a GEMM and col2im on a flat padded
    grid: the gradient is laid on the padded input's grid (zero where no output is), so a
    kernel offset's contribution is the whole product row shifted by a constant flat
    distance: one long contiguous add per offset, no strided slices. The grid is laid out
    (*S[:-1], N, S[-1]), the batch inside the rows, so that along the first spatial dim it
    spans the output's extent only (the other rows' shifted contributions land past it)."""
    n, cout = gy.shape[:2]
    out = gy.shape[2:]
    kernel = w.shape[2:]
    nd, c = len(kernel), w.shape[1] * groups
    padded = tuple(s + lo + hi for s, (lo, hi) in zip(in_spatial, pads))
    grid_shape = (out[:1] + padded[1:-1] if nd > 1 else ()) + (n, padded[-1])
    grid = xp.zeros((cout,) + grid_shape, dtype=gy.dtype)
    rows_last = (1,) + tuple(range(2, nd + 1)) + (0, nd + 1)  # (N, C, *S) -> (C, *S[:-1], N, S[-1])
    grid[(slice(None),) + tuple(slice(0, o) for o in out[:-1]) + (slice(None), slice(0, out[-1]))] = \
        gy.transpose(rows_last)
    spanned = math.prod(grid_shape)
    wmat = w.reshape(groups, cout // groups, -1).transpose(0, 2, 1)      # (G, Cg*K, Coutg)
    cols = xp.matmul(wmat, grid.reshape(groups, cout // groups, spanned))
    cols = cols.reshape(c, math.prod(kernel), spanned)
    acc_shape = padded[:-1] + (n, padded[-1])
    pitch = [math.prod(acc_shape[i + 1:]) for i in range(nd - 1)] + [1]
    shifts = [sum(o * d * p for o, d, p in zip(offset, dilation, pitch))
              for offset in _kernel_offsets(kernel)]
    total = math.prod(acc_shape)
    acc = xp.zeros((c, max(total, max(shifts) + spanned)), dtype=gy.dtype)  # a tail for the spill
    for t, shift in enumerate(shifts):
        acc[:, shift:shift + spanned] += cols[:, t]
    crop = tuple(slice(lo, lo + s) for s, (lo, _) in zip(in_spatial, pads))
    acc = acc[:, :total].reshape((c,) + acc_shape)[(slice(None),) + crop[:-1] + (slice(None), crop[-1])]
    return xp.ascontiguousarray(acc.transpose((nd, 0) + tuple(range(1, nd)) + (nd + 1,)))


def _is_pointwise(kernel, stride, pads):
    return all(k == 1 for k in kernel) and all(s == 1 for s in stride) and \
        not any(lo or hi for lo, hi in pads)


def _input_grad_as_conv(out_channels, in_channels, in_spatial, out, stride):
    """Whether the input gradient is cheaper as a convolution of the padded gradient: stride
    1, no more columns (Cout*K per position) than col2im's (C*K), and not much more padding
    than output (the transposed convolution of a small input multiplies mostly zeros)."""
    return (INPUT_GRAD_AS_CONV and all(s == 1 for s in stride) and out_channels <= in_channels
            and 4 * math.prod(in_spatial) <= 5 * math.prod(out))


def conv_weight_grad(xp, x, gy, kernel, stride, pads, dilation, groups):
    """The gradient of ``conv_forward`` in its weight: (Cout, C/G, *K). Ungrouped with
    enough channels: GEMMs over blocks of channels-last columns, summed; otherwise one GEMM
    over the whole batch ``gy (G, Coutg, N*P) @ cols (G, N*P, Cg*K)`` unless the per-sample
    products are the smaller buffer."""
    kernel = tuple(kernel)
    if _channels_last(x.shape[1], groups, kernel):
        return _weight_grad_channels_last(xp, x, gy, kernel, stride, pads, dilation)
    n, cout = gy.shape[:2]
    if depthwise.is_depthwise(x.shape[1], cout, groups):
        return depthwise.weight_grad(xp, x, gy, kernel, stride, pads, dilation)
    ck = x.shape[1] // groups * math.prod(kernel)
    p = math.prod(gy.shape[2:])
    if cout * ck > (ck + cout) * p:
        cols, _ = _batch_columns(xp, x, kernel, stride, pads, dilation)   # (C*K, N*P)
        g = _batch_rows(xp, gy).reshape(groups, cout // groups, -1)       # (G, Coutg, N*P)
        gw = xp.matmul(g, cols.reshape(groups, -1, cols.shape[1]).transpose(0, 2, 1))
    else:  # per-sample products (N, G, Coutg, Cg*K) are smaller than the columns' copies
        cols, _ = _columns(xp, x, kernel, stride, pads, dilation)
        cols = cols.reshape(n, groups, -1, p)                    # (N, G, Cg*K, P)
        g = gy.reshape(n, groups, cout // groups, p)             # (N, G, Coutg, P)
        gw = xp.matmul(g, cols.transpose(0, 1, 3, 2)).sum(0)     # (G, Coutg, Cg*K)
    return gw.reshape((cout, x.shape[1] // groups) + kernel)


def conv_forward_and_weight_grad(xp, x, gy, w, stride, pads, dilation, groups):
    """``conv_forward(x, w)`` and ``conv_weight_grad(x, gy)`` from one set of channels-last
    columns of ``x`` (the backward of a transposed convolution needs both): ``(y, gw)``, or
    None where the columns are not channels-last (then the two kernels run apart)."""
    kernel = tuple(w.shape[2:])
    if not FUSED_BACKWARD or not _channels_last(x.shape[1], groups, kernel):
        return None
    y, gw = _channels_last_products(xp, x, kernel, stride, pads, dilation,
                                    wmat=_kernel_matrix(xp, w), gy=gy)
    return y, _weight_from_matrix(xp, gw, kernel, x.shape[1])


def conv_backward(xp, x, gy, w, stride, pads, dilation, groups):
    """Both gradients of ``conv_forward``, ``(gx, gw)``, where the input gradient runs as a
    stride-1 convolution over channels-last columns of the padded ``gy``
    (``_reversed_kernel_conv``): those columns hold, for every input position, the ``gy``
    values its kernel window meets, so ``x (C, B*P) @ cols`` is the weight gradient too,
    with the kernel reversed and the channel axes swapped. One set of columns instead of
    two. None where the input gradient takes another path. (Read off the sub-pixel phases'
    columns of a strided one, the weight gradient measured slower than on its own: the
    phases' GEMMs are narrower and ``x`` has to be gathered phase by phase.)"""
    kernel = tuple(w.shape[2:])
    cout, c = w.shape[:2]
    in_spatial, out = tuple(x.shape[2:]), tuple(gy.shape[2:])
    if not (FUSED_BACKWARD and groups == 1 and _channels_last(cout, groups, kernel)
            and _input_grad_as_conv(cout, c, in_spatial, out, stride)):
        return None
    tpads = _transposed_pads(in_spatial, out, kernel, pads, dilation)
    if tpads is None:
        return None
    gx, gw = _channels_last_products(xp, gy, kernel, stride, tpads, dilation,
                                     wmat=_flipped_kernel_matrix(xp, w), gy=x)
    reversed_kernel = (slice(None),) + (slice(None, None, -1),) * len(kernel)
    gw = gw.reshape((c,) + kernel + (cout,))[reversed_kernel]     # (C, *K, Cout)
    return gx, xp.ascontiguousarray(xp.moveaxis(gw, -1, 0))


def scatter_add_flat(xp, values, indices, size, unique=False):
    """An array (N, C, size) with ``values`` (N, C, *) added at the flat positions
    ``indices`` (same shape) of each (n, c) row; ``unique`` promises that no position repeats
    within a row, so the values are simply written."""
    n, c = values.shape[:2]
    rows = xp.arange(n * c).reshape(n, c, *([1] * (values.ndim - 2))) * size
    flat = (indices + rows).reshape(-1)
    if unique:  # one flat fancy assignment, without put_along_axis's index grids
        out = xp.zeros(n * c * size, dtype=values.dtype)
        out[flat] = values.reshape(-1)
        return out.reshape(n, c, size)
    out = xp.bincount(flat, weights=values.reshape(-1).astype("float64"), minlength=n * c * size)
    return out.astype(values.dtype).reshape(n, c, size)
