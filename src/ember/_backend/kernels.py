"""Array-level kernels the array namespaces lack: sliding windows (im2col through strided
views), convolution as GEMMs over channels-last columns (or per-sample GEMMs over
channel-major columns), its adjoints (col2im by a loop over kernel offsets, each a strided
slice add, a convolution with the reversed kernel, or one such convolution per sub-pixel
phase of a strided one), depthwise convolution as per-channel GEMMs along image rows, and
scatter-add along flattened spatial positions.

Every function takes the namespace ``xp`` (NumPy or CuPy) first and works on its arrays only.
Spatial geometry is given per spatial dimension: ``pads`` as ``((low, high), ...)``.
"""
import itertools
import math

# Depthwise convolutions in 1 and 2 dimensions run as per-channel GEMMs along image rows
# (``_DepthwiseRows``); off, they run the tap loop (kept for 3-D and to pin the fast path).
DEPTHWISE_ROWS = True
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

__all__ = ["pad_constant", "windows", "conv_output_size", "conv_forward", "conv_input_grad",
           "conv_weight_grad", "col2im", "scatter_add_flat"]


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


def _column_blocks(xp, x, kernel, stride, pads, dilation):
    """im2col in channels-last order, a block of whole samples at a time: yields
    ``(start, stop, cols)`` with ``cols`` the (B*P, K*C) columns of samples start..stop, one
    row per output position (each row reads runs of C, for stride 1 Kw*C, contiguous values).
    A block's samples are copied channels-last into a zero-padded buffer, and its windows
    into a columns buffer; both buffers (about ``COLUMN_BLOCK_BYTES``, at least
    ``COLUMN_BLOCK_MIN_ROWS`` rows) serve every block, so a block is still in cache when its
    GEMM reads it."""
    n, c = x.shape[:2]
    nd = len(kernel)
    spatial = x.shape[2:]
    out = _output_spatial(spatial, kernel, stride, pads, dilation)
    p, kc = math.prod(out), math.prod(kernel) * c
    rows = max(COLUMN_BLOCK_BYTES // (max(kc, 1) * x.itemsize), COLUMN_BLOCK_MIN_ROWS)
    step = max(1, min(n, rows // max(p, 1)))
    image = xp.zeros((step,) + tuple(s + lo + hi for s, (lo, hi) in zip(spatial, pads)) + (c,),
                     dtype=x.dtype)  # its borders stay zero
    inner = tuple(slice(lo, lo + s) for s, (lo, _) in zip(spatial, pads))
    st = image.strides
    windows_view = xp.lib.stride_tricks.as_strided(
        image, (step,) + out + tuple(kernel) + (c,),
        (st[0],) + tuple(st[1 + i] * stride[i] for i in range(nd))
        + tuple(st[1 + i] * dilation[i] for i in range(nd)) + (st[-1],))
    cols = xp.empty(windows_view.shape, dtype=x.dtype)
    channels_last = (0,) + tuple(range(2, 2 + nd)) + (1,)
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


def _forward_channels_last(xp, x, wmat, kernel, stride, pads, dilation):
    """The convolution as GEMMs ``cols (B*P, K*C) @ wmat (K*C, Cout)`` over blocks of
    samples, each block's product transposed into the (N, Cout, *O) output."""
    n, cout = x.shape[0], wmat.shape[1]
    out = _output_spatial(x.shape[2:], kernel, stride, pads, dilation)
    p = math.prod(out)
    y = xp.empty((n, cout, p), dtype=x.dtype)
    product = None
    for start, stop, cols in _column_blocks(xp, x, kernel, stride, pads, dilation):
        if product is None:
            product = xp.empty((cols.shape[0], cout), dtype=x.dtype)
        part = product[:cols.shape[0]]
        xp.matmul(cols, wmat, out=part)
        y[start:stop] = part.reshape(stop - start, p, cout).transpose(0, 2, 1)
    return y.reshape((n, cout) + out)


def _weight_grad_channels_last(xp, x, gy, kernel, stride, pads, dilation):
    """The weight gradient as a sum over blocks of samples of ``gy (Cout, B*P) @ cols
    (B*P, K*C)``."""
    n, cout = gy.shape[:2]
    c = x.shape[1]
    g = gy.reshape(n, cout, math.prod(gy.shape[2:]))
    gw = None
    for start, stop, cols in _column_blocks(xp, x, kernel, stride, pads, dilation):
        rows = g[start] if stop - start == 1 else \
            g[start:stop].transpose(1, 0, 2).reshape(cout, -1)
        part = xp.matmul(rows, cols)
        gw = part if gw is None else xp.add(gw, part, out=gw)
    if gw is None:  # an empty batch
        gw = xp.zeros((cout, math.prod(kernel) * c), dtype=gy.dtype)
    gw = gw.reshape((cout,) + tuple(kernel) + (c,))
    return xp.ascontiguousarray(xp.moveaxis(gw, -1, 1))


def _is_depthwise(in_channels, out_channels, groups):
    return groups > 1 and in_channels == groups == out_channels


def _depthwise_taps(w):
    """(kernel offset, the weight at that offset shaped to broadcast over (N, C, *O))."""
    nd = w.ndim - 2
    for offset in itertools.product(*(range(k) for k in w.shape[2:])):
        yield offset, w[(slice(None), 0) + offset].reshape((-1,) + (1,) * nd)


class _DepthwiseRows:
    """A 1-D or 2-D depthwise convolution as per-channel matrix products along image rows.

    The padded input is laid out channel-major, (C, N*Hp, Wp): every row of every sample one
    after another. Along the width, kernel row ``i`` of channel ``c`` is a banded (Wp, Ow)
    matrix ``T[c, i]`` (stride and dilation folded in); along the height, kernel row ``i``
    reads the rows ``i*dilation`` below each output row, which is a strided view of that
    layout. So each kernel row is one batched GEMM (C, M, Wp) @ (C, Wp, Ow) over all samples
    at once; the few rows that straddle two samples are computed and dropped.
    """

    def __init__(self, xp, x_shape, kernel, out_spatial, stride, pads, dilation, dtype):
        if len(out_spatial) == 1:  # a 1-D convolution is a 2-D one of height 1
            x_shape, out_spatial = x_shape[:2] + (1,) + x_shape[2:], (1,) + out_spatial
            kernel, stride, dilation = (1,) + kernel, (1,) + stride, (1,) + dilation
            pads = ((0, 0),) + pads
        self.xp, self.x_shape, self.out = xp, x_shape, out_spatial
        self.stride, self.pads = stride, pads
        n, _, h, width = x_shape
        sh, sw = stride
        self.kh, kw = kernel
        self.hp = -(-(h + pads[0][0] + pads[0][1]) // sh) * sh   # a whole number of strides
        self.wp = width + pads[1][0] + pads[1][1]
        self.rows = n * self.hp // sh
        self.shifts = [divmod(i * dilation[0], sh) for i in range(self.kh)]
        self.m = self.rows - max(a for a, _ in self.shifts)
        ow = out_spatial[1]
        band = xp.zeros((kw, self.wp, ow), dtype=dtype)  # band[j, o*sw + j*dw, o] = 1
        j, o = xp.arange(kw)[:, None], xp.arange(ow)[None, :]
        band[j, o * sw + j * dilation[1], o] = 1
        self.band = band

    def taps(self, w):
        """The banded width matrices T (C, Kh, Wp, Ow) of the weight (C, 1, *K)."""
        c, kw = w.shape[0], self.band.shape[0]
        t = self.xp.matmul(w.reshape(c * self.kh, kw), self.band.reshape(kw, -1))
        return t.reshape(c, self.kh, self.wp, self.out[1])

    def padded_input(self, x):
        """``x`` (N, C, H, W) as the zero-padded channel-major rows (C, N*Hp/sh, sh*Wp)."""
        n, c, h, width = self.x_shape
        (top, _), (left, _) = self.pads
        buf = self.xp.zeros((c, n, self.hp, self.wp), dtype=x.dtype)
        buf[:, :, top:top + h, left:left + width] = x.reshape(self.x_shape).transpose(1, 0, 2, 3)
        return buf.reshape(c, self.rows, self.stride[0] * self.wp)

    def row_view(self, padded, i):
        """The (C, M, Wp) input rows that kernel row ``i`` meets."""
        a, b = self.shifts[i]
        return padded[:, a:a + self.m, b * self.wp:(b + 1) * self.wp]

    def output_rows(self, gy):
        """``gy`` (N, C, *O) as channel-major rows (C, M, Ow), zero on the dropped rows."""
        n, c = self.x_shape[:2]
        oh, ow = self.out
        buf = self.xp.zeros((c, self.rows, ow), dtype=gy.dtype)
        buf.reshape(c, n, self.rows // n, ow)[:, :, :oh] = gy.reshape((n, c) + self.out).transpose(1, 0, 2, 3)
        return buf[:, :self.m]

    def forward(self, x, w):
        """The convolution (N, C, Oh, Ow)."""
        xp, t = self.xp, self.taps(w)
        padded = self.padded_input(x)
        y = xp.zeros((x.shape[1], self.rows, self.out[1]), dtype=x.dtype)
        acc = y[:, :self.m]
        for i in range(self.kh):
            acc += xp.matmul(self.row_view(padded, i), t[:, i])
        n, c = self.x_shape[:2]
        y = y.reshape(c, n, self.rows // n, self.out[1])[:, :, :self.out[0]]
        return xp.ascontiguousarray(y.transpose(1, 0, 2, 3))

    def input_grad(self, gy, w):
        """The gradient in the input, (N, C, H, W)."""
        xp, t = self.xp, self.taps(w)
        g = self.output_rows(gy)
        c = g.shape[0]
        acc = xp.zeros((c, self.rows, self.stride[0] * self.wp), dtype=gy.dtype)
        for i in range(self.kh):
            self.row_view(acc, i)[...] += xp.matmul(g, t[:, i].transpose(0, 2, 1))
        n, _, h, width = self.x_shape
        (top, _), (left, _) = self.pads
        padded = acc.reshape(c, n, self.hp, self.wp)[:, :, top:top + h, left:left + width]
        return xp.ascontiguousarray(padded.transpose(1, 0, 2, 3))

    def weight_grad(self, x, gy):
        """The gradient in the weight, (C, 1, Kh, Kw)."""
        xp = self.xp
        padded = self.padded_input(x)
        g = self.output_rows(gy)                                     # (C, M, Ow)
        c, kw = g.shape[0], self.band.shape[0]
        band = self.band.transpose(1, 2, 0).reshape(-1, kw)          # (Wp*Ow, Kw)
        gw = xp.empty((c, 1, self.kh, kw), dtype=gy.dtype)
        for i in range(self.kh):
            products = xp.matmul(self.row_view(padded, i).transpose(0, 2, 1), g)  # (C, Wp, Ow)
            gw[:, 0, i] = xp.matmul(products.reshape(c, -1), band)
        return gw


def _depthwise_rows(xp, x_shape, kernel, out_spatial, stride, pads, dilation, dtype):
    """The row plan of a depthwise convolution, or None where the tap loop applies (3-D,
    negative padding)."""
    if len(out_spatial) > 2 or any(lo < 0 or hi < 0 for lo, hi in pads):
        return None
    return _DepthwiseRows(xp, tuple(x_shape), tuple(kernel), tuple(out_spatial), tuple(stride),
                          tuple(tuple(p) for p in pads), tuple(dilation), dtype)


def _output_spatial(spatial, kernel, stride, pads, dilation):
    return tuple(conv_output_size(s + lo + hi, k, st, d)
                 for s, k, st, (lo, hi), d in zip(spatial, kernel, stride, pads, dilation))


def _depthwise_plan(xp, x_shape, kernel, out_spatial, stride, pads, dilation, dtype):
    if not DEPTHWISE_ROWS:
        return None
    return _depthwise_rows(xp, x_shape, kernel, out_spatial, stride, pads, dilation, dtype)


def conv_forward(xp, x, w, stride, pads, dilation, groups):
    """Cross-correlation of ``x`` (N, C, *S) with ``w`` (Cout, C/G, *K): (N, Cout, *O).
    Ungrouped with enough channels: GEMMs over blocks of channels-last columns; otherwise
    one batched GEMM ``W (G, Coutg, Cg*K) @ cols (N, G, Cg*K, P)`` that lands in the output's
    own layout (also for few input and output channels: one GEMM over the whole batch with
    so few rows runs slower in OpenBLAS than these per-sample GEMMs)."""
    n, cout = x.shape[0], w.shape[0]
    if _is_depthwise(x.shape[1], cout, groups):  # one channel per group: no GEMM to win
        out = _output_spatial(x.shape[2:], w.shape[2:], stride, pads, dilation)
        plan = _depthwise_plan(xp, x.shape, w.shape[2:], out, stride, pads, dilation, x.dtype)
        if plan is not None:
            return plan.forward(x, w).reshape((n, cout) + out)
        return _depthwise_forward_taps(xp, x, w, stride, pads, dilation)
    if _channels_last(x.shape[1], groups, w.shape[2:]):
        return _forward_channels_last(xp, x, _kernel_matrix(xp, w), w.shape[2:], stride, pads,
                                      dilation)
    cols, out = _columns(xp, x, w.shape[2:], stride, pads, dilation)
    p = math.prod(out)
    if groups == 1:
        y = xp.matmul(w.reshape(cout, -1), cols.reshape(n, -1, p))
    else:
        y = xp.matmul(w.reshape(groups, cout // groups, -1), cols.reshape(n, groups, -1, p))
    return y.reshape((n, cout) + out)


def _depthwise_forward_taps(xp, x, w, stride, pads, dilation):
    """The depthwise convolution as a sum over kernel offsets of shifted window views."""
    cols = windows(xp, pad_constant(xp, x, pads), w.shape[2:], stride, dilation)
    y = 0
    for offset, wk in _depthwise_taps(w):
        y = y + cols[(Ellipsis,) + offset] * wk
    return y


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
    if _is_depthwise(w.shape[1] * groups, cout, groups):
        plan = _depthwise_plan(xp, (n, cout) + in_spatial, kernel, out, stride, pads, dilation,
                               gy.dtype)
        if plan is not None:
            return plan.input_grad(gy, w).reshape((n, cout) + in_spatial)
        return _depthwise_input_grad_taps(xp, gy, w, in_spatial, stride, pads, dilation)
    cg = w.shape[1]
    if _is_pointwise(kernel, stride, pads) and groups == 1:  # a plain product per sample
        gx = xp.matmul(w.reshape(cout, cg).T, gy.reshape(n, cout, -1))
        return gx.reshape((n, cg) + in_spatial)
    tpads = _transposed_pads(in_spatial, out, kernel, pads, dilation) if _input_grad_as_conv(
        cout, cg * groups, in_spatial, out, stride) else None
    if tpads is not None:
        return _reversed_kernel_conv(xp, gy, w, stride, tpads, dilation, groups)
    if _input_grad_by_phases(stride, dilation, cg * groups):
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


def _depthwise_input_grad_taps(xp, gy, w, in_spatial, stride, pads, dilation):
    cols = xp.empty(gy.shape[:2] + w.shape[2:] + gy.shape[2:], dtype=gy.dtype)
    for offset, wk in _depthwise_taps(w):
        xp.multiply(gy, wk, out=cols[(slice(None), slice(None)) + offset])
    return xp.ascontiguousarray(col2im(xp, cols, in_spatial, stride, pads, dilation))


def conv_weight_grad(xp, x, gy, kernel, stride, pads, dilation, groups):
    """The gradient of ``conv_forward`` in its weight: (Cout, C/G, *K). Ungrouped with
    enough channels: GEMMs over blocks of channels-last columns, summed; otherwise one GEMM
    over the whole batch ``gy (G, Coutg, N*P) @ cols (G, N*P, Cg*K)`` unless the per-sample
    products are the smaller buffer."""
    n, cout = gy.shape[:2]
    kernel = tuple(kernel)
    if _is_depthwise(x.shape[1], cout, groups):
        plan = _depthwise_plan(xp, x.shape, kernel, gy.shape[2:], stride, pads, dilation,
                               gy.dtype)
        if plan is not None:
            return plan.weight_grad(x, gy).reshape((cout, 1) + kernel)
        return _depthwise_weight_grad_taps(xp, x, gy, kernel, stride, pads, dilation)
    if _channels_last(x.shape[1], groups, kernel):
        return _weight_grad_channels_last(xp, x, gy, kernel, stride, pads, dilation)
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


def _depthwise_weight_grad_taps(xp, x, gy, kernel, stride, pads, dilation):
    cols = windows(xp, pad_constant(xp, x, pads), kernel, stride, dilation)
    gw = xp.empty((gy.shape[1], 1) + kernel, dtype=gy.dtype)
    axes = (0,) + tuple(range(2, gy.ndim))
    for offset in _kernel_offsets(kernel):
        gw[(slice(None), 0) + offset] = (cols[(Ellipsis,) + offset] * gy).sum(axes)
    return gw


def scatter_add_flat(xp, values, indices, size, unique=False):
    """An array (N, C, size) with ``values`` (N, C, *) added at the flat positions
    ``indices`` (same shape) of each (n, c) row; ``unique`` promises that no position repeats
    within a row, so the values are simply written."""
    n, c = values.shape[:2]
    if unique:
        out = xp.zeros((n, c, size), dtype=values.dtype)
        xp.put_along_axis(out, indices.reshape(n, c, -1), values.reshape(n, c, -1), axis=2)
        return out
    rows = xp.arange(n * c).reshape(n, c, *([1] * (values.ndim - 2))) * size
    flat = (indices + rows).reshape(-1)
    out = xp.bincount(flat, weights=values.reshape(-1).astype("float64"), minlength=n * c * size)
    return out.astype(values.dtype).reshape(n, c, size)
