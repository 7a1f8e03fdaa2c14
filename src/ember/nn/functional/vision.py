"""Vision functions: interpolate (nearest, linear, bilinear, bicubic, trilinear),
grid_sample, affine_grid, pixel_shuffle / pixel_unshuffle, channel_shuffle, fold / unfold.

Linear-family interpolation is one small (out, in) matrix per resized dim applied with
matmul; nearest interpolation reads the input at an index array; grid_sample gathers the
corner values through ember indexing, so all of them are differentiable (to any order) in
every tensor argument.
"""
import math

from ..._backend import im2col
from ...ops._common import Node, make, namespace_of, record
from .conv import tuple_arg
from ...amp.policy import autocast_policy
from ...autograd._dual import jvp_by_transposition

__all__ = ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "grid_sample",
           "affine_grid", "pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "fold", "unfold"]


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


@autocast_policy("native")
def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Down/up samples the input to either the given ``size`` or the given ``scale_factor``."""
    if antialias:
        raise NotImplementedError("ember: interpolate(antialias=True) is not supported")
    nd = input.dim() - 2
    if mode in ("nearest", "nearest-exact", "area"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif mode in _MODE_DIMS:
        if _MODE_DIMS[mode] != nd:
            raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs "
                                      f"{_MODE_DIMS[mode] + 2}D input")
    else:
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got "
                                  f"{input.dim()}D) for the modes: nearest | linear | bilinear | "
                                  f"bicubic | trilinear | area | nearest-exact (got {mode})")
    sizes, scales = _target_sizes(input, size, scale_factor, recompute_scale_factor)
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


# -- grid_sample and affine_grid ----------------------------------------------------------------

def _unnormalize(coord, size, align_corners):
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _reflect(coord, twice_low, twice_high):
    from ...ops.ternary import where
    if twice_low == twice_high:
        return coord * 0
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    coord = (coord - low).abs()
    flips = (coord.detach() / span).floor()
    extra = coord - flips * span
    even = flips.remainder(2) == 0
    return where(even, extra + low, span - extra + low)


def _source_coord(coord, size, padding_mode, align_corners):
    coord = _unnormalize(coord, size, align_corners)
    if padding_mode == "border":
        coord = coord.clamp(0, size - 1)
    elif padding_mode == "reflection":
        if align_corners:
            coord = _reflect(coord, 0, 2 * (size - 1))
        else:
            coord = _reflect(coord, -1, 2 * size - 1)
        coord = coord.clamp(0, size - 1)
    return coord


def _gather_corner(image, n_index, iy, ix, height, width):
    """``image`` (N, H, W, C) read at integer positions (N, Ho, Wo); zeros outside."""
    xp = namespace_of(iy)
    inside = (iy >= 0) & (iy < height) & (ix >= 0) & (ix < width)
    values = image[make(n_index), make(xp.clip(iy, 0, height - 1)), make(xp.clip(ix, 0, width - 1))]
    return values * make(inside[..., None].astype(image._data.dtype))


@autocast_policy("fp32")
def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Compute grid sample: the output reads ``input`` at the (x, y) positions in ``grid``
    (normalized to [-1, 1]), by bilinear or nearest interpolation."""
    if mode not in ("bilinear", "nearest"):
        raise NotImplementedError(f"ember: grid_sample mode '{mode}' is not supported")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if input.dim() != 4 or grid.dim() != 4 or grid.shape[-1] != 2:
        raise RuntimeError("grid_sampler(): expected 4D input and grid with same number of dimensions"
                           f", but got input with sizes {list(input.shape)} and grid with sizes "
                           f"{list(grid.shape)}")
    align_corners = bool(align_corners)
    xp = namespace_of(input._data)
    n, _, height, width = input.shape
    x = _source_coord(grid[..., 0], width, padding_mode, align_corners)
    y = _source_coord(grid[..., 1], height, padding_mode, align_corners)
    image = input.permute(0, 2, 3, 1)
    n_index = xp.arange(n).reshape(n, 1, 1)
    if mode == "nearest":
        ix = xp.rint(x._data).astype("int64")
        iy = xp.rint(y._data).astype("int64")
        return _gather_corner(image, n_index, iy, ix, height, width).permute(0, 3, 1, 2)
    x0 = xp.floor(x._data)
    y0 = xp.floor(y._data)
    wx1 = (x - make(x0)).unsqueeze(-1)
    wy1 = (y - make(y0)).unsqueeze(-1)
    wx0, wy0 = 1 - wx1, 1 - wy1
    x0, y0 = x0.astype("int64"), y0.astype("int64")
    out = (_gather_corner(image, n_index, y0, x0, height, width) * (wy0 * wx0)
           + _gather_corner(image, n_index, y0, x0 + 1, height, width) * (wy0 * wx1)
           + _gather_corner(image, n_index, y0 + 1, x0, height, width) * (wy1 * wx0)
           + _gather_corner(image, n_index, y0 + 1, x0 + 1, height, width) * (wy1 * wx1))
    return out.permute(0, 3, 1, 2)


def _base_coords(xp, steps, align_corners, dtype):
    if steps <= 1:
        return xp.zeros(steps, dtype=dtype)
    coords = xp.linspace(-1, 1, steps, dtype=dtype)
    return coords if align_corners else coords * ((steps - 1) / steps)


def affine_grid(theta, size, align_corners=None):
    """Generate 2D flow fields (sampling grids) for a batch of affine matrices ``theta``
    (N, 2, 3), for ``grid_sample`` on an output of ``size`` (N, C, H, W)."""
    if len(size) != 4:
        raise NotImplementedError("ember: affine_grid supports 4D sizes (N, C, H, W) only")
    if theta.dim() != 3 or tuple(theta.shape[1:]) != (2, 3):
        raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                         f"{list(size)}. Got {list(theta.shape)}.")
    n, _, height, width = size
    xp = namespace_of(theta._data)
    dtype = theta._data.dtype
    xs = _base_coords(xp, width, bool(align_corners), dtype)
    ys = _base_coords(xp, height, bool(align_corners), dtype)
    base = xp.stack([xp.broadcast_to(xs, (height, width)),
                     xp.broadcast_to(ys[:, None], (height, width)),
                     xp.ones((height, width), dtype=dtype)], axis=-1)
    grid = make(base.reshape(1, height * width, 3)) @ theta.transpose(1, 2)
    return grid.reshape(n, height, width, 2)


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
