"""Array-level kernels the array namespaces lack: sliding windows (im2col through strided
views), convolution as one GEMM, its adjoints (col2im by a loop over kernel offsets, each a
strided slice add), and scatter-add along flattened spatial positions.

Every function takes the namespace ``xp`` (NumPy or CuPy) first and works on its arrays only.
Spatial geometry is given per spatial dimension: ``pads`` as ``((low, high), ...)``.
"""
import itertools
import math

__all__ = ["pad_constant", "windows", "conv_output_size", "conv_forward", "conv_input_grad",
           "conv_weight_grad", "col2im", "scatter_add_flat"]


def pad_constant(xp, x, pads, value=0):
    """``x`` (N, C, *S) padded on its spatial dims by ``pads`` with ``value``; no copy when
    nothing is padded."""
    if not any(lo or hi for lo, hi in pads):
        return x
    width = ((0, 0),) * (x.ndim - len(pads)) + tuple(pads)
    return xp.pad(x, width, mode="constant", constant_values=value)


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


def _columns(xp, x, kernel, stride, pads, dilation, groups):
    """im2col: (G, N*P, Cg*KK) rows of window values (one copy), and the output size O."""
    cols = windows(xp, pad_constant(xp, x, pads), kernel, stride, dilation)
    n, c = x.shape[:2]
    nd = len(kernel)
    out = cols.shape[2:2 + nd]
    cols = cols.reshape((n, groups, c // groups) + cols.shape[2:])
    # (N, G, Cg, *O, *K) -> (G, N, *O, Cg, *K)
    order = (1, 0) + tuple(range(3, 3 + nd)) + (2,) + tuple(range(3 + nd, 3 + 2 * nd))
    rows = n * math.prod(out)
    return xp.ascontiguousarray(cols.transpose(order)).reshape(groups, rows, -1), out


def _is_depthwise(in_channels, out_channels, groups):
    return groups > 1 and in_channels == groups == out_channels


def _depthwise_taps(w):
    """(kernel offset, the weight at that offset shaped to broadcast over (N, C, *O))."""
    nd = w.ndim - 2
    for offset in itertools.product(*(range(k) for k in w.shape[2:])):
        yield offset, w[(slice(None), 0) + offset].reshape((-1,) + (1,) * nd)


def conv_forward(xp, x, w, stride, pads, dilation, groups):
    """Cross-correlation of ``x`` (N, C, *S) with ``w`` (Cout, C/G, *K): (N, Cout, *O)."""
    if _is_depthwise(x.shape[1], w.shape[0], groups):  # one channel per group: no GEMM to win
        cols = windows(xp, pad_constant(xp, x, pads), w.shape[2:], stride, dilation)
        y = 0
        for offset, wk in _depthwise_taps(w):
            y = y + cols[(Ellipsis,) + offset] * wk
        return y
    n = x.shape[0]
    cout = w.shape[0]
    kernel = w.shape[2:]
    cols, out = _columns(xp, x, kernel, stride, pads, dilation, groups)
    wmat = w.reshape(groups, cout // groups, -1)
    y = xp.matmul(cols, wmat.transpose(0, 2, 1))  # (G, N*P, Coutg)
    y = y.reshape((groups, n, math.prod(out), cout // groups)).transpose(1, 0, 3, 2)
    return xp.ascontiguousarray(y).reshape((n, cout) + out)


def col2im(xp, cols, in_spatial, stride, pads, dilation):
    """The adjoint of ``windows``: ``cols`` (N, C, *O, *K) summed back into an array
    (N, C, *S), one strided slice add per kernel offset; padding is cropped."""
    nd = len(in_spatial)
    out = cols.shape[2:2 + nd]
    kernel = cols.shape[2 + nd:]
    padded = tuple(in_spatial[i] + pads[i][0] + pads[i][1] for i in range(nd))
    acc = xp.zeros(cols.shape[:2] + padded, dtype=cols.dtype)
    for offset in itertools.product(*(range(k) for k in kernel)):
        target = tuple(slice(offset[i] * dilation[i],
                             offset[i] * dilation[i] + stride[i] * (out[i] - 1) + 1, stride[i])
                       for i in range(nd))
        acc[(slice(None), slice(None)) + target] += cols[(Ellipsis,) + offset]
    crop = tuple(slice(pads[i][0], pads[i][0] + in_spatial[i]) for i in range(nd))
    return acc[(slice(None), slice(None)) + crop]


def conv_input_grad(xp, gy, w, in_spatial, stride, pads, dilation, groups):
    """The adjoint of ``conv_forward`` in its input (a transposed convolution): ``gy``
    (N, Cout, *O) and ``w`` (Cout, C/G, *K) give (N, C, *in_spatial)."""
    n, cout = gy.shape[:2]
    nd = len(in_spatial)
    out = gy.shape[2:]
    if _is_depthwise(w.shape[1] * groups, cout, groups):
        cols = xp.empty(gy.shape + w.shape[2:], dtype=gy.dtype)
        for offset, wk in _depthwise_taps(w):
            xp.multiply(gy, wk, out=cols[(Ellipsis,) + offset])
        return xp.ascontiguousarray(col2im(xp, cols, in_spatial, stride, pads, dilation))
    cg = w.shape[1]
    kernel = w.shape[2:]
    g = gy.reshape((n, groups, cout // groups, math.prod(out))).transpose(1, 0, 3, 2)
    wmat = w.reshape(groups, cout // groups, -1)
    cols = xp.matmul(g, wmat[:, None])  # (G, N, P, Cg*KK)
    cols = cols.reshape((groups, n) + out + (cg,) + kernel)
    # -> (N, G, Cg, *O, *K)
    order = (1, 0, 2 + nd) + tuple(range(2, 2 + nd)) + tuple(range(3 + nd, 3 + 2 * nd))
    cols = cols.transpose(order).reshape((n, groups * cg) + out + kernel)
    gx = col2im(xp, cols, in_spatial, stride, pads, dilation)
    return xp.ascontiguousarray(gx)


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
    cols, out = _columns(xp, x, kernel, stride, pads, dilation, groups)
    g = gy.reshape((n, groups, cout // groups, -1)).transpose(1, 2, 0, 3)
    g = g.reshape(groups, cout // groups, -1)  # (G, Coutg, N*P)
    gw = xp.matmul(g, cols)  # (G, Coutg, Cg*KK)
    return gw.reshape((cout, x.shape[1] // groups) + tuple(kernel))


def scatter_add_flat(xp, values, indices, size):
    """An array (N, C, size) with ``values`` (N, C, *) added at the flat positions
    ``indices`` (same shape) of each (n, c) row."""
    n, c = values.shape[:2]
    rows = xp.arange(n * c).reshape(n, c, *([1] * (values.ndim - 2))) * size
    flat = (indices + rows).reshape(-1)
    out = xp.bincount(flat, weights=values.reshape(-1).astype("float64"), minlength=n * c * size)
    return out.astype(values.dtype).reshape(n, c, size)
