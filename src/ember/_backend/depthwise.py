"""Depthwise convolution (one input and one output channel per group): the forward pass and
its two adjoints. Small images run as one GEMM with a dense per-channel convolution matrix
(``_DepthwiseDense``); other 1-D and 2-D ones as per-channel GEMMs along image rows
(``_DepthwiseRows``); the rest as a loop over kernel taps of shifted window views.

``kernels`` dispatches here; the arguments follow its conventions (``xp`` first, ``pads`` as
``((low, high), ...)``).
"""
import functools
import itertools
import math

from . import im2col

# Depthwise convolutions whose per-channel matrix (input positions x output positions) has at
# most this many entries (8x8 images and smaller) run as one batched GEMM with that matrix.
DEPTHWISE_DENSE = True
DENSE_MAX_ENTRIES = 4096
# Other depthwise convolutions in 1 and 2 dimensions run as per-channel GEMMs along image rows
# (``_DepthwiseRows``); off, they run the tap loop (kept for larger 3-D ones and to pin the
# fast paths).
DEPTHWISE_ROWS = True
# With the row plan, the input gradient of a stride-1 convolution runs as the forward
# convolution of the padded gradient with the reversed kernel.
INPUT_GRAD_AS_FORWARD = True
# The row plan goes through the channels in blocks of about this many bytes of padded input.
CHANNEL_BLOCK_BYTES = 1 << 19
# Its forward and weight gradient split output rows at least twice this wide into tiles of
# this many columns, so that each banded matrix spans a tile's input columns rather than the
# whole padded row (a third of the multiplications at 32 columns); None: never.
TILE_WIDTH = 16


def is_depthwise(in_channels, out_channels, groups):
    """Whether a convolution has one input and one output channel per group."""
    return groups > 1 and in_channels == groups == out_channels


def forward(xp, x, w, stride, pads, dilation):
    """The depthwise cross-correlation of ``x`` (N, C, *S) with ``w`` (C, 1, *K)."""
    n, c = x.shape[:2]
    out = _output_spatial(x.shape[2:], w.shape[2:], stride, pads, dilation)
    plan = _depthwise_plan(xp, x.shape, w.shape[2:], out, stride, pads, dilation, x.dtype)
    if plan is not None:
        return plan.forward(x, w).reshape((n, c) + out)
    return _depthwise_forward_taps(xp, x, w, stride, pads, dilation)


def input_grad(xp, gy, w, in_spatial, stride, pads, dilation):
    """The adjoint of ``forward`` in its input: (N, C, *in_spatial)."""
    n, c = gy.shape[:2]
    in_spatial = tuple(in_spatial)
    tpads = _input_grad_as_forward(in_spatial, gy.shape[2:], w.shape[2:], stride, pads, dilation)
    if tpads is not None:
        return forward(xp, gy, _reversed(w), stride, tpads, dilation)
    plan = _depthwise_plan(xp, (n, c) + in_spatial, w.shape[2:], gy.shape[2:], stride, pads,
                           dilation, gy.dtype, tiled=False)
    if plan is not None:
        return plan.input_grad(gy, w).reshape((n, c) + in_spatial)
    return _depthwise_input_grad_taps(xp, gy, w, in_spatial, stride, pads, dilation)


def _input_grad_as_forward(in_spatial, out, kernel, stride, pads, dilation):
    """The padding that makes a stride-1 input gradient the forward convolution of the
    padded gradient with the reversed kernel (the row plan's forward is cheaper than its
    adjoint; the dense plan's is not); None where that does not apply."""
    if not (DEPTHWISE_ROWS and INPUT_GRAD_AS_FORWARD and len(out) <= 2
            and all(s == 1 for s in stride)) or _dense(in_spatial, out):
        return None
    return im2col._transposed_pads(in_spatial, out, kernel, pads, dilation)


def _reversed(w):
    return w[(Ellipsis,) + (slice(None, None, -1),) * (w.ndim - 2)]


def weight_grad(xp, x, gy, kernel, stride, pads, dilation):
    """The adjoint of ``forward`` in its weight: (C, 1, *kernel)."""
    kernel = tuple(kernel)
    plan = _depthwise_plan(xp, x.shape, kernel, gy.shape[2:], stride, pads, dilation, gy.dtype)
    if plan is not None:
        return plan.weight_grad(x, gy).reshape((gy.shape[1], 1) + kernel)
    return _depthwise_weight_grad_taps(xp, x, gy, kernel, stride, pads, dilation)


def _output_spatial(spatial, kernel, stride, pads, dilation):
    return tuple(im2col.conv_output_size(s + lo + hi, k, st, d)
                 for s, k, st, (lo, hi), d in zip(spatial, kernel, stride, pads, dilation))


def _depthwise_taps(w):
    """(kernel offset, the weight at that offset shaped to broadcast over (N, C, *O))."""
    nd = w.ndim - 2
    for offset in itertools.product(*(range(k) for k in w.shape[2:])):
        yield offset, w[(slice(None), 0) + offset].reshape((-1,) + (1,) * nd)


class _DepthwiseRows:
    """A 1-D or 2-D depthwise convolution as per-channel matrix products along image rows.

    The input, padded along the height, is laid out channel-major, (C, N*Hp, W): every row of
    every sample one after another. Along the width, kernel row ``i`` of channel ``c`` is a
    banded (W, Ow) matrix ``T[c, i]`` (stride, dilation and the padding of the width folded
    in); along the height, kernel row ``i`` reads the rows ``i*dilation`` below each output
    row, which is a strided view of that layout. So each kernel row is one batched GEMM
    (C, M, W) @ (C, W, Ow) over all samples at once; the few rows that straddle two samples
    are computed and dropped. With ``tile_width``, wide output rows are cut into tiles of that
    many columns, each computed from the Kt input columns it meets,
    (C, tiles, M, Kt) @ (C, 1, Kt, tile_width); the rows then keep their padding columns
    (Wp wide), so that every tile reads the same band.

    The channels go through in blocks of about ``CHANNEL_BLOCK_BYTES`` of padded rows, each
    block's buffers reused, so that the layout copies, products and sums of a block stay in
    cache and no temporary the size of the activation is made.
    """

    def __init__(self, xp, x_shape, kernel, out_spatial, stride, pads, dilation, dtype,
                 tile_width=None):
        if len(out_spatial) == 1:  # a 1-D convolution is a 2-D one of height 1
            x_shape, out_spatial = x_shape[:2] + (1,) + x_shape[2:], (1,) + out_spatial
            kernel, stride, dilation = (1,) + kernel, (1,) + stride, (1,) + dilation
            pads = ((0, 0),) + pads
        self.xp, self.x_shape, self.out, self.dtype = xp, x_shape, out_spatial, dtype
        self.stride, self.pads = stride, pads
        n, c, h, width = x_shape
        sh, sw = stride
        self.kh, kw = kernel
        self.hp = -(-(h + pads[0][0] + pads[0][1]) // sh) * sh   # a whole number of strides
        self.rows = n * self.hp // sh
        self.shifts = [divmod(i * dilation[0], sh) for i in range(self.kh)]
        self.m = self.rows - max(a for a, _ in self.shifts)
        ow = out_spatial[1]
        if tile_width is not None and ow >= 2 * tile_width:
            self.tile, self.tiles = tile_width, -(-ow // tile_width)
            self.kt = (tile_width - 1) * sw + (kw - 1) * dilation[1] + 1
            # the padding columns, and zero columns on the right for the last tile's input
            self.left = pads[1][0]
            self.wp = max(width + sum(pads[1]), (self.tiles - 1) * tile_width * sw + self.kt)
        else:  # no padding columns: the band skips them
            self.tile, self.tiles, self.kt = ow, 1, width
            self.left, self.wp = 0, width
        # band[j, o*sw + j*dw - (left padding the rows leave out), o] = 1, inside the row
        j, o = xp.meshgrid(xp.arange(kw), xp.arange(self.tile), indexing="ij")
        column = j * dilation[1] + o * sw - (pads[1][0] - self.left)
        inside = (column >= 0) & (column < self.kt)
        self.band = xp.zeros((kw, self.kt, self.tile), dtype=dtype)
        self.band[j[inside], column[inside], o[inside]] = 1
        per_channel = n * self.hp * self.wp * xp.dtype(dtype).itemsize
        self.block = max(1, min(c, CHANNEL_BLOCK_BYTES // per_channel))

    def blocks(self):
        """(first, end) channel of each block."""
        c = self.x_shape[1]
        return [(c0, min(c, c0 + self.block)) for c0 in range(0, c, self.block)]

    def taps(self, w):
        """The banded width matrices T (C, Kh, Kt, tile) of the weight (C, 1, *K)."""
        c, kw = w.shape[0], self.band.shape[0]
        t = self.xp.matmul(w.reshape(c * self.kh, kw), self.band.reshape(kw, -1))
        return t.reshape(c, self.kh, self.kt, self.tile)

    def padded_buffer(self):
        """A zeroed buffer for one block's padded input, (block, N, Hp, Wp); filling it
        writes the interior only, so its border stays zero from block to block."""
        n = self.x_shape[0]
        return self.xp.zeros((self.block, n, self.hp, self.wp), dtype=self.dtype)

    def padded_input(self, buf, x):
        """A block ``x`` (N, k, H, W) written into ``buf`` as the zero-padded channel-major rows
        (k, N*Hp/sh, sh*Wp)."""
        k, h, width = x.shape[1:]
        top, left = self.pads[0][0], self.left
        buf = buf[:k]
        buf[:, :, top:top + h, left:left + width] = x.transpose(1, 0, 2, 3)
        return buf.reshape(k, self.rows, self.stride[0] * self.wp)

    def row_view(self, padded, i):
        """The (k, M, Wp) input rows that kernel row ``i`` meets (Wp: the rows' width, W or,
        with tiles, W and the padding columns)."""
        a, b = self.shifts[i]
        return padded[:, a:a + self.m, b * self.wp:(b + 1) * self.wp]

    def tile_view(self, padded, i):
        """The (k, tiles, M, Kt) input columns of each tile in the rows of kernel row ``i``."""
        rows = self.row_view(padded, i)
        k, m, _ = rows.shape
        st = rows.strides
        return self.xp.lib.stride_tricks.as_strided(
            rows, (k, self.tiles, m, self.kt), (st[0], self.tile * self.stride[1] * st[2]) + st[1:])

    def output_buffer(self):
        """A buffer for one block's channel-major output rows (block, N, Hp/sh, tiles*tile),
        zero on the rows past each sample's output and the columns past the last tile's end
        (which filling it never writes)."""
        n = self.x_shape[0]
        width = self.tiles * self.tile
        return self.xp.zeros((self.block, n, self.rows // n, width), dtype=self.dtype)

    def output_rows(self, buf, gy):
        """A block ``gy`` (N, k, *O) written into ``buf`` as channel-major rows (k, M, Ow)."""
        k = gy.shape[1]
        oh, ow = self.out
        buf = buf[:k]
        buf[:, :, :oh, :ow] = gy.transpose(1, 0, 2, 3)
        return buf.reshape(k, self.rows, buf.shape[-1])[:, :self.m]

    def forward(self, x, w):
        """The convolution (N, C, Oh, Ow)."""
        xp, t = self.xp, self.taps(w)
        n, c = self.x_shape[:2]
        oh, ow = self.out
        x = x.reshape(self.x_shape)
        y = xp.empty((n, c, oh, ow), dtype=self.dtype)
        padded_buf = self.padded_buffer()
        # the rows past m belong to the last sample's dropped rows: never read
        rows = xp.empty((self.block, self.tiles, self.rows, self.tile), dtype=self.dtype)
        product = xp.empty((self.block, self.tiles, self.m, self.tile), dtype=self.dtype)
        for c0, c1 in self.blocks():
            k = c1 - c0
            padded = self.padded_input(padded_buf, x[:, c0:c1])
            acc = rows[:k, :, :self.m]
            self.row_products(padded, t[c0:c1], 0, acc)
            for i in range(1, self.kh):
                acc += self.row_products(padded, t[c0:c1], i, product[:k])
            for j in range(self.tiles):
                first, end = j * self.tile, min(ow, (j + 1) * self.tile)
                tile = rows[:k, j].reshape(k, n, self.rows // n, self.tile)
                y[:, c0:c1, :, first:end] = tile[:, :, :oh, :end - first].transpose(1, 0, 2, 3)
        return y

    def row_products(self, padded, t, i, out):
        """Kernel row ``i``'s contribution to a block's output rows, written into ``out``
        (k, tiles, M, tile) and returned."""
        if self.tiles == 1:  # a plain batched GEMM runs faster than through the tile view
            self.xp.matmul(self.row_view(padded, i), t[:, i], out=out[:, 0])
        else:
            self.xp.matmul(self.tile_view(padded, i), t[:, i, None], out=out)
        return out

    def input_grad(self, gy, w):
        """The gradient in the input, (N, C, H, W)."""
        xp = self.xp
        t = xp.ascontiguousarray(self.taps(w).transpose(0, 1, 3, 2))  # (C, Kh, Ow, Wp)
        n, c, h, width = self.x_shape
        sh = self.stride[0]
        gy = gy.reshape((n, c) + self.out)
        gx = xp.empty(self.x_shape, dtype=self.dtype)
        out_buf = self.output_buffer()
        # phase-major, (block, sh, N*Hp/sh, Wp): every kernel row adds to a contiguous block
        acc_buf = xp.empty((self.block, sh, self.rows, self.wp), dtype=self.dtype)
        product = xp.empty((self.block, self.m, self.wp), dtype=self.dtype)
        for c0, c1 in self.blocks():
            k = c1 - c0
            g = self.output_rows(out_buf, gy[:, c0:c1])
            acc = acc_buf[:k]
            acc[...] = 0
            for i, (a, b) in enumerate(self.shifts):
                acc[:, b, a:a + self.m] += xp.matmul(g, t[c0:c1, i], out=product[:k])
            self.crop_phases(acc, gx[:, c0:c1])
        return gx

    def crop_phases(self, acc, gx):
        """Writes the phase-major padded rows ``acc`` (k, sh, N*Hp/sh, Wp) of a block, without
        their padding, into its slice ``gx`` (N, k, H, W)."""
        n, _, h, width = self.x_shape
        k, sh = acc.shape[:2]
        top, left = self.pads[0][0], self.left
        for b in range(sh):  # the input rows of phase b: padded rows r*sh + b
            first = (b - top) % sh
            count = len(range(first, h, sh))
            r0 = (first + top) // sh
            rows = acc[:, b].reshape(k, n, self.hp // sh, self.wp)[:, :, r0:r0 + count]
            gx[:, :, first::sh] = rows[..., left:left + width].transpose(1, 0, 2, 3)

    def weight_grad(self, x, gy):
        """The gradient in the weight, (C, 1, Kh, Kw)."""
        xp = self.xp
        n, c = self.x_shape[:2]
        x = x.reshape(self.x_shape)
        gy = gy.reshape((n, c) + self.out)
        kw = self.band.shape[0]
        band = self.band.transpose(1, 2, 0).reshape(-1, kw)          # (Kt*tile, Kw)
        gw = xp.empty((c, 1, self.kh, kw), dtype=self.dtype)
        padded_buf, out_buf = self.padded_buffer(), self.output_buffer()
        products = xp.empty((self.block, self.tiles, self.kt, self.tile), dtype=self.dtype)
        for c0, c1 in self.blocks():
            k = c1 - c0
            padded = self.padded_input(padded_buf, x[:, c0:c1])
            g = self.output_rows(out_buf, gy[:, c0:c1])              # (k, M, tiles*tile)
            for i in range(self.kh):
                summed = self.weight_products(padded, g, i, products[:k])  # (k, Kt, tile)
                gw[c0:c1, 0, i] = xp.matmul(summed.reshape(k, -1), band)
        return gw

    def weight_products(self, padded, g, i, out):
        """The products of kernel row ``i``'s input columns with the output gradient ``g``
        (k, M, tiles*tile) of a block, summed over tiles: (k, Kt, tile); ``out`` (k, tiles, Kt,
        tile) is their buffer."""
        xp = self.xp
        if self.tiles == 1:
            return xp.matmul(self.row_view(padded, i).transpose(0, 2, 1), g, out=out[:, 0])
        g = g.reshape(g.shape[0], self.m, self.tiles, self.tile).transpose(0, 2, 1, 3)
        return xp.matmul(self.tile_view(padded, i).transpose(0, 1, 3, 2), g, out=out).sum(1)


class _DepthwiseDense:
    """A depthwise convolution as one matrix product per channel over flattened positions:
    ``y[n, c] = x[n, c] @ T[c]``, where ``T[c]`` (Pin, Pout) is the sum over kernel taps of
    ``w[c, tap] * S[tap]`` and ``S[tap]`` is 0/1, taking each output position to the input
    position it reads at that tap (none where that is padding). The products run batched
    over channels on (C, N, P) views of the (N, C, P) arrays: no padding, no layout copies.
    It spends Pin/K times the multiplications of the convolution, so it is for small images.
    (``T`` as one GEMM ``w (C, K) @ S (K, Pin*Pout)`` rather than by scattering ``w``.)
    """

    def __init__(self, xp, in_spatial, kernel, out_spatial, stride, pads, dilation, dtype):
        self.xp, self.in_spatial, self.out = xp, in_spatial, out_spatial
        geometry = (in_spatial, kernel, out_spatial, tuple(stride),
                    tuple(tuple(p) for p in pads), tuple(dilation), xp.dtype(dtype))
        self.shifts = _shift_matrices(xp, *geometry)                       # (K, Pin, Pout)
        self.shifts_transposed = _transposed_shift_matrices(xp, *geometry)  # (K, Pout, Pin)

    def matrices(self, w, shifts):
        """The per-channel matrices (C, A, B) of the weight (C, 1, *K) over ``shifts``
        (K, A, B)."""
        c, taps = w.shape[0], shifts.shape[0]
        t = self.xp.matmul(w.reshape(c, taps), shifts.reshape(taps, -1))
        return t.reshape((c,) + shifts.shape[1:])

    def forward(self, x, w):
        """The convolution (N, C, *O)."""
        return self._apply(x, self.matrices(w, self.shifts), self.out)

    def input_grad(self, gy, w):
        """The gradient in the input, (N, C, *S)."""
        return self._apply(gy, self.matrices(w, self.shifts_transposed), self.in_spatial)

    def _apply(self, a, t, out_spatial):
        """``a`` (N, C, *) times the per-channel matrices ``t`` (C, P, Q): (N, C, *out_spatial)."""
        n, c = a.shape[:2]
        out = self.xp.empty((n, c) + tuple(out_spatial), dtype=a.dtype)
        rows = a.reshape(n, c, t.shape[1]).transpose(1, 0, 2)              # (C, N, P)
        self.xp.matmul(rows, t, out=out.reshape(n, c, t.shape[2]).transpose(1, 0, 2))
        return out

    def weight_grad(self, x, gy):
        """The gradient in the weight, (C, 1, K): per channel, the products of input and
        output positions summed over the batch, against each tap's 0/1 matrix."""
        xp = self.xp
        n, c = x.shape[:2]
        taps = self.shifts.shape[0]
        products = xp.matmul(x.reshape(n, c, -1).transpose(1, 2, 0),
                             gy.reshape(n, c, -1).transpose(1, 0, 2))     # (C, Pin, Pout)
        gw = xp.matmul(products.reshape(c, -1), self.shifts.reshape(taps, -1).T)
        return gw.reshape(c, 1, taps)


@functools.lru_cache(maxsize=16)
def _shift_matrices(xp, in_spatial, kernel, out_spatial, stride, pads, dilation, dtype):
    """S (K, Pin, Pout): ``S[tap, i, o] = 1`` where output position ``o`` reads input position
    ``i`` at kernel offset ``tap`` (positions flattened in C order). Cached: read only."""
    pin, pout = math.prod(in_spatial), math.prod(out_spatial)
    shifts = xp.zeros((math.prod(kernel), pin, pout), dtype=dtype)
    outputs = xp.arange(pout)
    coords = xp.unravel_index(outputs, out_spatial)
    for tap, offset in enumerate(itertools.product(*(range(k) for k in kernel))):
        inside, flat = True, 0
        for o, size, s, (low, _), k, d in zip(coords, in_spatial, stride, pads, offset, dilation):
            position = o * s - low + k * d
            inside = inside & (position >= 0) & (position < size)
            flat = flat * size + position
        shifts[tap, flat[inside], outputs[inside]] = 1
    return shifts


@functools.lru_cache(maxsize=16)
def _transposed_shift_matrices(xp, *geometry):
    """S transposed, (K, Pout, Pin). Cached: read only."""
    return xp.ascontiguousarray(_shift_matrices(xp, *geometry).transpose(0, 2, 1))


def _depthwise_rows(xp, x_shape, kernel, out_spatial, stride, pads, dilation, dtype,
                    tile_width=None):
    """The row plan of a depthwise convolution, or None where the tap loop applies (3-D,
    negative padding)."""
    if len(out_spatial) > 2 or any(lo < 0 or hi < 0 for lo, hi in pads):
        return None
    return _DepthwiseRows(xp, tuple(x_shape), tuple(kernel), tuple(out_spatial), tuple(stride),
                          tuple(tuple(p) for p in pads), tuple(dilation), dtype, tile_width)


def _dense(in_spatial, out_spatial):
    return DEPTHWISE_DENSE and math.prod(in_spatial) * math.prod(out_spatial) <= DENSE_MAX_ENTRIES


def _depthwise_plan(xp, x_shape, kernel, out_spatial, stride, pads, dilation, dtype,
                    tiled=True):
    """The dense plan for small images, else the row plan (None where it is off or does not
    apply); ``tiled``: with output tiles (the input gradient's row plan has none)."""
    if _dense(x_shape[2:], out_spatial):
        return _DepthwiseDense(xp, tuple(x_shape[2:]), tuple(kernel), tuple(out_spatial),
                               stride, pads, dilation, dtype)
    if not DEPTHWISE_ROWS:
        return None
    return _depthwise_rows(xp, x_shape, kernel, out_spatial, stride, pads, dilation, dtype,
                           TILE_WIDTH if tiled else None)


def _depthwise_forward_taps(xp, x, w, stride, pads, dilation):
    """The depthwise convolution as a sum over kernel offsets of shifted window views."""
    cols = im2col.windows(xp, im2col.pad_constant(xp, x, pads), w.shape[2:], stride, dilation)
    y = 0
    for offset, wk in _depthwise_taps(w):
        y = y + cols[(Ellipsis,) + offset] * wk
    return y


def _depthwise_input_grad_taps(xp, gy, w, in_spatial, stride, pads, dilation):
    cols = xp.empty(gy.shape[:2] + w.shape[2:] + gy.shape[2:], dtype=gy.dtype)
    for offset, wk in _depthwise_taps(w):
        xp.multiply(gy, wk, out=cols[(slice(None), slice(None)) + offset])
    return xp.ascontiguousarray(im2col.col2im(xp, cols, in_spatial, stride, pads, dilation))


def _depthwise_weight_grad_taps(xp, x, gy, kernel, stride, pads, dilation):
    cols = im2col.windows(xp, im2col.pad_constant(xp, x, pads), kernel, stride, dilation)
    gw = xp.empty((gy.shape[1], 1) + kernel, dtype=gy.dtype)
    axes = (0,) + tuple(range(2, gy.ndim))
    for offset in im2col._kernel_offsets(kernel):
        gw[(slice(None), 0) + offset] = (cols[(Ellipsis,) + offset] * gy).sum(axes)
    return gw
