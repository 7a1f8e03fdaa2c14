"""Vision functions: interpolate (nearest, linear, bilinear, bicubic, trilinear; bilinear,
bicubic and lanczos with antialiasing), pixel_shuffle / pixel_unshuffle, channel_shuffle, fold / unfold.

Linear-family interpolation is one small (out, in) matrix per resized dim applied with
matmul; nearest interpolation reads the input at an index array, so both are differentiable
(to any order). grid_sample and affine_grid are in ``sampling.py``.
"""
import math

from ..._backend import im2col
from ...ops._common import Node, make, namespace_of, record
from .conv import tuple_arg
from ...amp.policy import autocast_policy
from ...autograd._dual import jvp_by_transposition

__all__ = ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "pixel_shuffle",
           "pixel_unshuffle", "channel_shuffle", "native_channel_shuffle", "fold", "unfold"]


# -- interpolate --------------------------------------------------------------------------------

_MODE_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}


def _target_sizes(input, size, scale_factor, recompute_scale_factor):
    nd = input.dim() - 2
    if (size is None) == (scale_factor is None):
        raise ValueError("either size or scale_factor should be defined" if size is None else
                         "only one of size or scale_factor should be defined")
    if size is not None:
        sizes = tuple_arg(size, nd, "size") if not isinstance(size, (tuple, list)) else tuple(size)
        if len(sizes) != nd:
            raise ValueError(f"Input and output must have the same number of spatial dimensions, but "
                             f"got input with spatial dimensions of {list(input.shape[2:])} and output "
                             f"size of {list(sizes)}. Please provide input tensor in (N, C, d1, d2, "
                             "...,dK) format and output size in (o1, o2, ...,oK) format.")
        return sizes, [None] * nd
    scales = list(scale_factor) if isinstance(scale_factor, (tuple, list)) else [scale_factor] * nd
    sizes = tuple(int(math.floor(input.shape[2 + i] * scales[i])) for i in range(nd))
    return sizes, [None] * nd if recompute_scale_factor else [float(s) for s in scales]


def _source_scale(in_size, out_size, align_corners, scale):
    if align_corners:
        return (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    return 1.0 / scale if scale is not None and scale > 0 else in_size / out_size


def _source_coords(xp, in_size, out_size, align_corners, scale, cubic):
    ratio = _source_scale(in_size, out_size, align_corners, scale)
    dst = xp.arange(out_size, dtype="float64")
    if align_corners:
        return dst * ratio
    src = (dst + 0.5) * ratio - 0.5
    return src if cubic else xp.maximum(src, 0.0)


def _cubic_weights(t, a=-0.75):
    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return far(t + 1), near(t), near(1 - t), far(2 - t)


def _interp_matrix(xp, in_size, out_size, align_corners, scale, cubic, dtype):
    """The (out, in) matrix that resizes one dim by linear or cubic interpolation."""
    src = _source_coords(xp, in_size, out_size, align_corners, scale, cubic)
    base = xp.floor(src)
    t = src - base
    base = base.astype("int64")
    if cubic:
        taps = [(base + k - 1, w) for k, w in zip(range(4), _cubic_weights(t))]
    else:
        taps = [(base, 1 - t), (base + 1, t)]
    columns = xp.arange(in_size)
    m = 0
    for index, weight in taps:
        index = xp.clip(index, 0, in_size - 1)
        m = m + weight[:, None] * (index[:, None] == columns)
    return m.astype(dtype)


def _nearest_index(xp, in_size, out_size, scale, exact):
    ratio = _source_scale(in_size, out_size, False, scale)
    dst = xp.arange(out_size, dtype="float64")
    src = xp.floor((dst + 0.5) * ratio) if exact else xp.floor(dst * ratio)
    return xp.minimum(src.astype("int64"), in_size - 1)


def _aa_filter(mode, xp, x):
    """The antialiasing filters of torch's ``_upsample_*_aa`` kernels (PIL's): triangle,
    Keys' cubic with a = -0.5, and Lanczos with three lobes."""
    x = xp.abs(x)
    if mode == "bilinear":
        return xp.maximum(1 - x, 0.0)
    if mode == "bicubic":
        a = -0.5
        near = ((a + 2) * x - (a + 3)) * x * x + 1
        far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
        return xp.where(x < 1, near, xp.where(x < 2, far, 0.0))
    lobes = 3
    return xp.where(x < lobes, xp.sinc(x) * xp.sinc(x / lobes), 0.0)


_AA_TAPS = {"bilinear": 2, "bicubic": 4, "lanczos": 6}


def _aa_matrix(xp, in_size, out_size, align_corners, scale, mode, dtype):
    """The (out, in) matrix of torch's antialiased resize of one dim: each output averages the
    inputs under the filter stretched by the downscaling ratio, weights normalized to 1."""
    ratio = _source_scale(in_size, out_size, align_corners, scale)
    support = _AA_TAPS[mode] * 0.5 * (ratio if ratio >= 1 else 1.0)
    stretch = 1 / ratio if ratio >= 1 else 1.0
    center = ratio * (xp.arange(out_size, dtype="float64") + 0.5)
    first = xp.maximum(xp.trunc(center - support + 0.5), 0)
    last = xp.minimum(xp.minimum(xp.trunc(center + support + 0.5), in_size),
                      first + math.ceil(support) * 2 + 1)
    columns = xp.arange(in_size, dtype="float64")
    taken = (columns >= first[:, None]) & (columns < last[:, None])
    m = _aa_filter(mode, xp, (columns - center[:, None] + 0.5) * stretch) * taken
    total = m.sum(1, keepdims=True)
    m = m / xp.where(total == 0, 1.0, total)
    return m.astype(dtype)


@autocast_policy("native")
def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Down/up samples the input to either the given ``size`` or the given ``scale_factor``;
    ``antialias=True`` (bilinear, bicubic or lanczos on 4-D input) filters as it downsamples."""
    nd = input.dim() - 2
    if mode in ("nearest", "nearest-exact", "area"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif mode in _MODE_DIMS:
        if _MODE_DIMS[mode] != nd:
            raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs "
                                      f"{_MODE_DIMS[mode] + 2}D input")
    elif mode != "lanczos":
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got "
                                  f"{input.dim()}D) for the modes: nearest | linear | bilinear | "
                                  f"bicubic | trilinear | area | nearest-exact (got {mode})")
    sizes, scales = _target_sizes(input, size, scale_factor, recompute_scale_factor)
    if antialias and not (mode in _AA_TAPS and input.dim() == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and "
                         "requires a 4-D tensor as input")
    if mode == "lanczos" and not antialias:
        raise ValueError("Lanczos mode requires antialias=True")
    xp = namespace_of(input._data)
    out = input
    if mode == "area":
        from .pooling import _adaptive_avg_poolnd
        return _adaptive_avg_poolnd("adaptive_avg_pool", nd, input, sizes)
    for i in range(nd):
        dim = 2 + i
        if mode.startswith("nearest"):
            index = _nearest_index(xp, input.shape[dim], sizes[i], scales[i], mode == "nearest-exact")
            out = out[(slice(None),) * dim + (make(index),)]
            continue
        if antialias:
            m = _aa_matrix(xp, input.shape[dim], sizes[i], bool(align_corners), scales[i], mode,
                           input._data.dtype)
        else:
            m = _interp_matrix(xp, input.shape[dim], sizes[i], bool(align_corners), scales[i],
                               mode == "bicubic", input._data.dtype)
        out = (out.movedim(dim, -1) @ make(m).t()).movedim(-1, dim)
    return out


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Upsample input (deprecated in torch in favour of ``interpolate``)."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# -- pixel and channel shuffles -----------------------------------------------------------------

def pixel_shuffle(input, upscale_factor):
    """Rearranges elements in a tensor of shape (*, C * r^2, H, W) to a tensor of shape
    (*, C, H * r, W * r), where r is the ``upscale_factor``."""
    r = upscale_factor
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by "
                           f"the square of upscale_factor, but input.size(-3)={c} is not divisible by "
                           f"{r * r}")
    k = len(lead)
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    x = x.permute(*range(k), k, k + 3, k + 1, k + 4, k + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input, downscale_factor):
    """Reverses the PixelShuffle operation: (*, C, H * r, W * r) to (*, C * r^2, H, W)."""
    r = downscale_factor
    *lead, c, h, w = input.shape
    if h % r or w % r:
        raise RuntimeError(f"pixel_unshuffle expects height to be divisible by downscale_factor, but "
                           f"input.size(-2)={h} is not divisible by {r}" if h % r else
                           f"pixel_unshuffle expects width to be divisible by downscale_factor, but "
                           f"input.size(-1)={w} is not divisible by {r}")
    k = len(lead)
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    x = x.permute(*range(k), k, k + 2, k + 4, k + 1, k + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)


def channel_shuffle(input, groups):
    """Divide the channels in a tensor of shape (*, C , H, W) into g groups and rearrange
    them as (*, C/g, g, H, W), while keeping the original tensor shape."""
    n, c = input.shape[:2]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and "
                           f"{groups} groups.")
    rest = tuple(input.shape[2:])
    return input.reshape((n, groups, c // groups) + rest).transpose(1, 2).reshape(input.shape)


def native_channel_shuffle(input, groups):
    """:func:`channel_shuffle` under the name of torch's native kernel (same result)."""
    return channel_shuffle(input, groups)


# -- fold and unfold ----------------------------------------------------------------------------

class Im2ColBackward0(Node):
    __slots__ = ()
    jvp = jvp_by_transposition

    def backward(self, grad):
        return (_fold(grad, self.spatial, *self.geometry),)


class Col2ImBackward0(Node):
    __slots__ = ()
    jvp = jvp_by_transposition

    def backward(self, grad):
        return (_unfold(grad, *self.geometry),)


def _unfold(input, kernel, dilation, padding, stride):
    xp = namespace_of(input._data)
    pads = tuple((p, p) for p in padding)
    cols = im2col.windows(xp, im2col.pad_constant(xp, input._data, pads), kernel, stride, dilation)
    n, c = cols.shape[:2]
    nd = len(kernel)
    order = (0, 1) + tuple(range(2 + nd, 2 + 2 * nd)) + tuple(range(2, 2 + nd))
    out = make(xp.ascontiguousarray(cols.transpose(order)).reshape(n, c * math.prod(kernel), -1))
    node = record(Im2ColBackward0, (input,), out)
    if node is not None:
        node.spatial = tuple(input.shape[2:])
        node.geometry = (kernel, dilation, padding, stride)
    return out


def _fold(input, output_size, kernel, dilation, padding, stride):
    xp = namespace_of(input._data)
    nd = len(kernel)
    out_blocks = tuple(im2col.conv_output_size(output_size[i] + 2 * padding[i], kernel[i],
                                                stride[i], dilation[i]) for i in range(nd))
    n = input.shape[0]
    c = input.shape[1] // math.prod(kernel)
    cols = input._data.reshape((n, c) + tuple(kernel) + out_blocks)
    data = im2col.col2im(xp, cols, tuple(output_size), stride,
                          tuple((p, p) for p in padding), dilation)
    out = make(xp.ascontiguousarray(data))
    node = record(Col2ImBackward0, (input,), out)
    if node is not None:
        node.geometry = (kernel, dilation, padding, stride)
    return out


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Extract sliding local blocks from a batched input tensor (N, C, H, W) into
    (N, C * prod(kernel_size), L)."""
    if input.dim() not in (3, 4):
        raise NotImplementedError(f"Input Error: Only 3D or 4D input Tensors are supported (got "
                                  f"{input.dim()}D)")
    unbatched = input.dim() == 3
    x = input.unsqueeze(0) if unbatched else input
    out = _unfold(x, tuple_arg(kernel_size, 2), tuple_arg(dilation, 2, "dilation"),
                  tuple_arg(padding, 2, "padding"), tuple_arg(stride, 2, "stride"))
    return out.squeeze(0) if unbatched else out


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Combine an array of sliding local blocks (N, C * prod(kernel_size), L) into a large
    containing tensor (N, C, *output_size), summing overlapping values."""
    if input.dim() not in (2, 3):
        raise NotImplementedError(f"Input Error: Only unbatched (2D) or batched (3D) input Tensors "
                                  f"are supported (got {input.dim()}D)")
    kernel = tuple_arg(kernel_size, 2)
    dilation, padding = tuple_arg(dilation, 2, "dilation"), tuple_arg(padding, 2, "padding")
    stride, output_size = tuple_arg(stride, 2, "stride"), tuple_arg(output_size, 2, "output_size")
    unbatched = input.dim() == 2
    x = input.unsqueeze(0) if unbatched else input
    blocks = math.prod(im2col.conv_output_size(output_size[i] + 2 * padding[i], kernel[i],
                                                stride[i], dilation[i]) for i in range(2))
    if x.shape[1] % math.prod(kernel):
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of "
                           f"kernel_size, but got input.size(1)={x.shape[1]} and "
                           f"kernel_size={kernel}")
    if x.shape[2] != blocks:
        raise RuntimeError(f"Given output_size={output_size}, kernel_size={kernel}, "
                           f"dilation={dilation}, padding={padding}, stride={stride}, expected "
                           f"size of input's dimension 2 to match the calculated number of sliding "
                           f"blocks {blocks}, but got input.size(2)={x.shape[2]}.")
    out = _fold(x, output_size, kernel, dilation, padding, stride)
    return out.squeeze(0) if unbatched else out
