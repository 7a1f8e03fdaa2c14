"""Fractional max pooling (Graham, "Fractional Max-Pooling"): max over pseudo-random,
overlapping windows whose starts are drawn per plane from ``_random_samples`` in [0, 1)."""
import math
import numbers

from ...ops._common import namespace_of
from ...ops.random import rand
from .conv import tuple_arg
from .pooling import MaxPool2DWithIndicesBackward0, _record_max

__all__ = ["fractional_max_pool2d", "fractional_max_pool3d", "fractional_max_pool2d_with_indices",
           "fractional_max_pool3d_with_indices"]

_DIM_WORDS = {2: ("height", "width"), 3: ("time", "height", "width")}


class FractionalMaxPool2DBackward0(MaxPool2DWithIndicesBackward0):
    __slots__ = ()


class FractionalMaxPool3DBackward0(MaxPool2DWithIndicesBackward0):
    __slots__ = ()


def _window_starts(xp, samples, in_size, out_size, kernel):
    """Each plane's window starts along one dim (N, C, out_size), computed in the samples'
    dtype as torch's kernel does."""
    starts = xp.empty(samples.shape + (out_size,), dtype=xp.int64)
    if out_size > 1:
        alpha = samples.dtype.type(in_size - kernel) / samples.dtype.type(out_size - 1)
        i = xp.arange(out_size - 1, dtype=samples.dtype)
        starts[..., :-1] = (((i + samples[..., None]) * alpha).astype(xp.int64)
                            - (samples * alpha).astype(xp.int64)[..., None])
    if out_size > 0:
        starts[..., -1] = in_size - kernel
    return starts


def _fractional_max_poolnd(nd, input, kernel_size, output_size, output_ratio, samples):
    name = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    kernel = tuple_arg(kernel_size, nd)
    if output_size is None:
        ratio = ((output_ratio,) * nd if isinstance(output_ratio, numbers.Real)
                 else tuple(output_ratio))
        if len(ratio) != nd:
            raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple of "
                             "Ints.")
        output_size = [int(input.size(-nd + i) * ratio[i]) for i in range(nd)]
    out = tuple_arg(output_size, nd, "output_size")
    if input.dim() not in (nd + 1, nd + 2):
        shape = list(input.shape)
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: {shape}")
    unbatched = input.dim() == nd + 1
    x = input.unsqueeze(0) if unbatched else input
    n, c = x.shape[:2]
    sizes = tuple(x.shape[2:])
    for word, k, o, size in zip(_DIM_WORDS[nd], kernel, out, sizes):
        if o + k - 1 > size:
            prefix = name + ("_out()" if nd == 3 else "()")
            raise RuntimeError(f"{prefix}: pool {word} {k} too large relative to input {word} {size}")
    if samples is None:
        samples = rand(n, c, nd, dtype=input.dtype, device=input.device)
    if samples.shape[2] != nd:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {nd}; got {samples.shape[2]}.")
    xp = namespace_of(x._data)
    sample_data = samples._data
    # the samples' last axis runs (width, height) for 2-D and (time, height, width) for 3-D
    order = (1, 0) if nd == 2 else (0, 1, 2)
    flat = xp.zeros((n, c) + out + (1,) * nd, dtype=xp.int64)
    stride = 1
    for d in reversed(range(nd)):
        starts = _window_starts(xp, sample_data[:, :, order[d]], sizes[d], out[d], kernel[d])
        pos = starts[..., :, None] + xp.arange(kernel[d])  # (N, C, out_d, k_d)
        shape = [n, c] + [1] * (2 * nd)
        shape[2 + d], shape[2 + nd + d] = out[d], kernel[d]
        flat = flat + pos.reshape(shape) * stride
        stride *= sizes[d]
    positions = flat.reshape(n, c, -1)
    values = xp.take_along_axis(x._data.reshape(n, c, -1), positions, axis=2)
    values = values.reshape((n, c, -1, math.prod(kernel)))
    positions = positions.reshape(values.shape)
    nan = xp.isnan(values)
    last_nan = nan.shape[-1] - 1 - nan[..., ::-1].argmax(-1)  # torch keeps the last NaN
    arg = xp.where(nan.any(-1), last_nan, values.argmax(-1))
    result = xp.take_along_axis(values, arg[..., None], -1)[..., 0].reshape((n, c) + out)
    indices = xp.take_along_axis(positions, arg[..., None], -1)[..., 0].reshape((n, c) + out)
    node_cls = FractionalMaxPool3DBackward0 if nd == 3 else FractionalMaxPool2DBackward0
    values_t, indices_t = _record_max(node_cls, x, result, indices)
    if unbatched:
        return values_t.squeeze(0), indices_t.squeeze(0)
    return values_t, indices_t


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """2-D fractional max pooling over (N, C, H, W) or (C, H, W) input; returns
    ``(output, indices)``. ``output_size`` or ``output_ratio`` (of the input's size) sets the
    output's size; ``_random_samples`` (N, C, 2) in [0, 1) fixes the windows (else drawn)."""
    return _fractional_max_poolnd(2, input, kernel_size, output_size, output_ratio,
                                  _random_samples)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """2-D fractional max pooling (see :func:`fractional_max_pool2d_with_indices`); returns the
    output, and the indices with ``return_indices``."""
    out = fractional_max_pool2d_with_indices(input, kernel_size, output_size, output_ratio,
                                             return_indices, _random_samples)
    return out if return_indices else out[0]


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """3-D fractional max pooling over (N, C, T, H, W) or (C, T, H, W) input; returns
    ``(output, indices)``; ``_random_samples`` is (N, C, 3)."""
    return _fractional_max_poolnd(3, input, kernel_size, output_size, output_ratio,
                                  _random_samples)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """3-D fractional max pooling (see :func:`fractional_max_pool3d_with_indices`); returns the
    output, and the indices with ``return_indices``."""
    out = fractional_max_pool3d_with_indices(input, kernel_size, output_size, output_ratio,
                                             return_indices, _random_samples)
    return out if return_indices else out[0]
