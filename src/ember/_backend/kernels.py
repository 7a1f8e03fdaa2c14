"""Array-level kernels the array namespaces lack: sliding windows (im2col through strided
views), convolution as one GEMM, its adjoints (col2im by a loop over kernel offsets, each a
strided slice add), and scatter-add along flattened spatial positions.

Every function takes the namespace ``xp`` (NumPy or CuPy) first and works on its arrays only.
Spatial geometry is given per spatial dimension: ``pads`` as ``((low, high), ...)``.
"""
import itertools
import math

# Up to this many output channels, an ungrouped convolution's forward and weight gradient run
# as one GEMM over the whole batch (columns (C*K, N*P)): per-sample GEMMs with so few rows
# leave BLAS far from its peak, and the extra layout copies cost less than they win.
ONE_GEMM_MAX_OUT_CHANNELS = 16

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


def _one_gemm(out_channels, groups):
    return groups == 1 and out_channels <= ONE_GEMM_MAX_OUT_CHANNELS


def _is_depthwise(in_channels, out_channels, groups):
    return groups > 1 and in_channels == groups == out_channels


def _depthwise_taps(w):
    """(kernel offset, the weight at that offset shaped to broadcast over (N, C, *O))."""
    nd = w.ndim - 2
    for offset in itertools.product(*(range(k) for k in w.shape[2:])):
        yield offset, w[(slice(None), 0) + offset].reshape((-1,) + (1,) * nd)


def conv_forward(xp, x, w, stride, pads, dilation, groups):
    """Cross-correlation of ``x`` (N, C, *S) with ``w`` (Cout, C/G, *K): (N, Cout, *O), as
    one batched GEMM ``W (G, Coutg, Cg*K) @ cols (N, G, Cg*K, P)`` that lands in the output's
    own layout."""
    if _is_depthwise(x.shape[1], w.shape[0], groups):  # one channel per group: no GEMM to win
        cols = windows(xp, pad_constant(xp, x, pads), w.shape[2:], stride, dilation)
        y = 0
        for offset, wk in _depthwise_taps(w):
            y = y + cols[(Ellipsis,) + offset] * wk
        return y
    n, cout = x.shape[0], w.shape[0]
    if _one_gemm(cout, groups):
        cols, out = _batch_columns(xp, x, w.shape[2:], stride, pads, dilation)
        y = xp.matmul(w.reshape(cout, -1), cols).reshape(cout, n, math.prod(out))  # (Cout, N, P)
        return xp.ascontiguousarray(y.transpose(1, 0, 2)).reshape((n, cout) + out)
    cols, out = _columns(xp, x, w.shape[2:], stride, pads, dilation)
    p = math.prod(out)
    if groups == 1:
        y = xp.matmul(w.reshape(cout, -1), cols.reshape(n, -1, p))
    else:
        y = xp.matmul(w.reshape(groups, cout // groups, -1), cols.reshape(n, groups, -1, p))
    return y.reshape((n, cout) + out)


def col2im(xp, cols, in_spatial, stride, pads, dilation):
    """The adjoint of ``_columns``: ``cols`` (N, C, *K, *O) summed back into an array
    (N, C, *S), one strided slice add per kernel offset; padding is cropped."""
    nd = len(in_spatial)
    kernel = cols.shape[2:2 + nd]
    out = cols.shape[2 + nd:]
    padded = tuple(in_spatial[i] + pads[i][0] + pads[i][1] for i in range(nd))
    acc = xp.zeros(cols.shape[:2] + padded, dtype=cols.dtype)
    for offset in itertools.product(*(range(k) for k in kernel)):
        target = tuple(slice(offset[i] * dilation[i],
                             offset[i] * dilation[i] + stride[i] * (out[i] - 1) + 1, stride[i])
                       for i in range(nd))
        acc[(slice(None), slice(None)) + target] += cols[(slice(None), slice(None)) + offset]
    crop = tuple(slice(pads[i][0], pads[i][0] + in_spatial[i]) for i in range(nd))
    return acc[(slice(None), slice(None)) + crop]


def conv_input_grad(xp, gy, w, in_spatial, stride, pads, dilation, groups):
    """The adjoint of ``conv_forward`` in its input (a transposed convolution): ``gy``
    (N, Cout, *O) and ``w`` (Cout, C/G, *K) give (N, C, *in_spatial)."""
    n, cout = gy.shape[:2]
    out = gy.shape[2:]
    kernel = w.shape[2:]
    if _is_depthwise(w.shape[1] * groups, cout, groups):
        cols = xp.empty(gy.shape[:2] + kernel + out, dtype=gy.dtype)
        for offset, wk in _depthwise_taps(w):
            xp.multiply(gy, wk, out=cols[(slice(None), slice(None)) + offset])
        return xp.ascontiguousarray(col2im(xp, cols, in_spatial, stride, pads, dilation))
    cg = w.shape[1]
    p = math.prod(out)
    if groups == 1:
        cols = xp.matmul(w.reshape(cout, -1).T, gy.reshape(n, cout, p))  # (N, C*K, P)
    else:
        wmat = w.reshape(groups, cout // groups, -1).transpose(0, 2, 1)  # (G, Cg*K, Coutg)
        cols = xp.matmul(wmat, gy.reshape(n, groups, cout // groups, p))  # (N, G, Cg*K, P)
    cols = cols.reshape((n, groups * cg) + tuple(kernel) + tuple(out))
    return xp.ascontiguousarray(col2im(xp, cols, in_spatial, stride, pads, dilation))


def conv_weight_grad(xp, x, gy, kernel, stride, pads, dilation, groups):
    """The gradient of ``conv_forward`` in its weight: (Cout, C/G, *K)."""
    n, cout = gy.shape[:2]
    if _is_depthwise(x.shape[1], cout, groups):
        cols = windows(xp, pad_constant(xp, x, pads), kernel, stride, dilation)
        gw = xp.empty((cout, 1) + tuple(kernel), dtype=gy.dtype)
        axes = (0,) + tuple(range(2, gy.ndim))
        for offset in itertools.product(*(range(k) for k in kernel)):
            gw[(slice(None), 0) + offset] = (cols[(Ellipsis,) + offset] * gy).sum(axes)
        return gw
    if _one_gemm(cout, groups):
        cols, _ = _batch_columns(xp, x, kernel, stride, pads, dilation)  # (C*K, N*P)
        gw = xp.matmul(_batch_rows(xp, gy), cols.T)                      # (Cout, C*K)
        return gw.reshape((cout, x.shape[1]) + tuple(kernel))
    cols, out = _columns(xp, x, kernel, stride, pads, dilation)
    p = math.prod(out)
    cols = cols.reshape(n, groups, -1, p)                    # (N, G, Cg*K, P)
    g = gy.reshape(n, groups, cout // groups, p)             # (N, G, Coutg, P)
    gw = xp.matmul(g, cols.transpose(0, 1, 3, 2)).sum(0)     # (G, Coutg, Cg*K)
    return gw.reshape((cout, x.shape[1] // groups) + tuple(kernel))


def scatter_add_flat(xp, values, indices, size):
    """An array (N, C, size) with ``values`` (N, C, *) added at the flat positions
    ``indices`` (same shape) of each (n, c) row."""
    n, c = values.shape[:2]
    rows = xp.arange(n * c).reshape(n, c, *([1] * (values.ndim - 2))) * size
    flat = (indices + rows).reshape(-1)
    out = xp.bincount(flat, weights=values.reshape(-1).astype("float64"), minlength=n * c * size)
    return out.astype(values.dtype).reshape(n, c, size)
