"""grid_sample (bilinear, nearest and bicubic on 4-D input; bilinear and nearest on 5-D input)
and affine_grid (2-D and 3-D affine transforms).

The sampler gathers the input's values at integer positions through ember indexing and
weighs them with ember ops on the grid, so it is differentiable (to any order) in the input
and in the grid, as torch's grid_sampler is.
"""
import itertools

from ...ops._common import make, namespace_of
from ...amp.policy import autocast_policy

__all__ = ["grid_sample", "affine_grid", "GRID_SAMPLE_INTERPOLATION_MODES",
           "GRID_SAMPLE_PADDING_MODES"]

# grid_sample's modes and the numbers torch's kernels know them by
GRID_SAMPLE_INTERPOLATION_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
GRID_SAMPLE_PADDING_MODES = {"zeros": 0, "border": 1, "reflection": 2}


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


def _padded(coord, size, padding_mode, align_corners):
    """An unnormalized coordinate moved inside the input as ``padding_mode`` says (torch's
    compute_coordinates): clamped for 'border', reflected then clamped for 'reflection'."""
    if padding_mode == "border":
        coord = coord.clamp(0, size - 1)
    elif padding_mode == "reflection":
        if align_corners:
            coord = _reflect(coord, 0, 2 * (size - 1))
        else:
            coord = _reflect(coord, -1, 2 * size - 1)
        coord = coord.clamp(0, size - 1)
    return coord


def _gather(image, n_index, index, sizes):
    """``image`` (N, *spatial, C) read at the integer positions ``index`` (one array per
    spatial dim, each shaped like the grid without its last dim); zeros outside."""
    xp = namespace_of(n_index)
    inside = True
    clipped = []
    for i, size in zip(index, sizes):
        inside = inside & (i >= 0) & (i < size)
        clipped.append(make(xp.clip(i, 0, size - 1)))
    values = image[(make(n_index), *clipped)]
    return values * make(inside[..., None].astype(image._data.dtype))


def _check_grid_sample(input, grid, mode):
    nd = input.dim() - 2
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError("grid_sampler(): expected grid and input to have same batch size, but got "
                           f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if grid.shape[-1] != nd:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {nd} in last dimension, but got "
                           f"grid with sizes {list(grid.shape)}")
    for i in range(2, input.dim()):
        if input.shape[i] <= 0:
            raise RuntimeError("grid_sampler(): expected input to have non-empty spatial dimensions, "
                               f"but input has sizes {list(input.shape)} with dimension {i} being empty")
    expected = 4 if input.dim() == 4 else 5
    if input.dim() != expected or grid.dim() != expected:
        raise RuntimeError(f"grid_sampler(): expected {expected}D input and grid with same number of "
                           f"dimensions, but got input with sizes {list(input.shape)} and grid with "
                           f"sizes {list(grid.shape)}")
    if mode == "bicubic" and nd != 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")


def _cubic_coefficients(t, a=-0.75):
    """The four weights of Keys' cubic convolution at fraction ``t`` (torch's
    get_cubic_upsample_coefficients)."""
    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return far(t + 1), near(t), near(1 - t), far(2 - t)


@autocast_policy("fp32")
def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Compute grid sample: the output reads ``input`` (N, C, H, W) or (N, C, D, H, W) at the
    positions in ``grid`` ((x, y) or (x, y, z), normalized to [-1, 1]) by bilinear
    (trilinear for 5-D), nearest or (4-D only) bicubic interpolation."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or "
                         f"'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    _check_grid_sample(input, grid, mode)
    align_corners = bool(align_corners)
    xp = namespace_of(input._data)
    n = input.shape[0]
    sizes = tuple(input.shape[2:])                      # (H, W) or (D, H, W)
    nd = len(sizes)
    image = input.movedim(1, -1)
    n_index = xp.arange(n).reshape((n,) + (1,) * nd)
    # grid's coordinates come x first: coordinate k indexes spatial dim nd - 1 - k
    coords = [_unnormalize(grid[..., nd - 1 - d], sizes[d], align_corners) for d in range(nd)]
    if mode == "bicubic":
        out = _bicubic(image, n_index, coords, sizes, padding_mode, align_corners)
    else:
        coords = [_padded(c, s, padding_mode, align_corners) for c, s in zip(coords, sizes)]
        if mode == "nearest":
            index = [xp.rint(c._data).astype("int64") for c in coords]
            out = _gather(image, n_index, index, sizes)
        else:
            out = _linear(image, n_index, coords, sizes)
    return out.movedim(-1, 1)


def _linear(image, n_index, coords, sizes):
    xp = namespace_of(n_index)
    lows = [xp.floor(c._data) for c in coords]
    upper = [(c - make(low)).unsqueeze(-1) for c, low in zip(coords, lows)]
    weights = [(1 - w, w) for w in upper]
    lows = [low.astype("int64") for low in lows]
    out = 0
    for corner in itertools.product((0, 1), repeat=len(sizes)):
        weight = weights[0][corner[0]]
        for d in range(1, len(sizes)):
            weight = weight * weights[d][corner[d]]
        out = out + _gather(image, n_index, [low + c for low, c in zip(lows, corner)], sizes) * weight
    return out


def _bicubic(image, n_index, coords, sizes, padding_mode, align_corners):
    """torch's bicubic grid sampling: 4 x 4 taps around the unpadded coordinate, each tap's
    position moved inside the input by ``padding_mode`` (zeros outside for 'zeros')."""
    xp = namespace_of(n_index)
    (y, x), (height, width) = coords, sizes
    y0, x0 = xp.floor(y._data), xp.floor(x._data)
    wy = _cubic_coefficients((y - make(y0)).unsqueeze(-1))
    wx = _cubic_coefficients((x - make(x0)).unsqueeze(-1))

    def taps(start, size):
        return [_padded(make(start + k - 1), size, padding_mode, align_corners)._data.astype("int64")
                for k in range(4)]
    rows, columns = taps(y0, height), taps(x0, width)
    out = 0
    for i in range(4):
        row = 0
        for j in range(4):
            row = row + _gather(image, n_index, [rows[i], columns[j]], sizes) * wx[j]
        out = out + row * wy[i]
    return out


def _base_coords(xp, steps, align_corners, dtype):
    if steps <= 1:
        return xp.zeros(steps, dtype=dtype)
    coords = xp.linspace(-1, 1, steps, dtype=dtype)
    return coords if align_corners else coords * ((steps - 1) / steps)


def affine_grid(theta, size, align_corners=None):
    """Generate 2D or 3D flow fields (sampling grids) for a batch of affine matrices ``theta``
    ((N, 2, 3) or (N, 3, 4)), for ``grid_sample`` on an output of ``size`` (N, C, H, W) or
    (N, C, D, H, W)."""
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    if len(size) == 4:
        if theta.dim() != 3 or tuple(theta.shape[1:]) != (2, 3):
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{size}. Got {theta.shape}.")
    elif len(size) == 5:
        if theta.dim() != 3 or tuple(theta.shape[1:]) != (3, 4):
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{size}. Got {theta.shape}.")
    else:
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D affine "
                                  f"transforms, respectively. Got size {size}.")
    spatial = [int(s) for s in size[2:]]
    if not (align_corners and min(spatial) == 1) and min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    n = int(size[0])
    xp = namespace_of(theta._data)
    dtype = theta._data.dtype
    axes = [_base_coords(xp, steps, bool(align_corners), dtype) for steps in spatial]
    # the grid's last dim holds (x, y[, z], 1): x runs along the last spatial dim
    mesh = xp.meshgrid(*axes, indexing="ij")
    base = xp.stack(list(mesh[::-1]) + [xp.ones(tuple(spatial), dtype=dtype)], axis=-1)
    count = 1
    for steps in spatial:
        count *= steps
    grid = make(base.reshape(1, count, len(spatial) + 1)) @ theta.transpose(1, 2)
    return grid.reshape(n, *spatial, len(spatial))
