"""Antialiased interpolation, bicubic and 5-D grid sampling and 3-D affine grids against torch
(values and gradients in float64, gradcheck)."""
import pytest
import torch
import torch.nn.functional as TF

import ember
import ember.nn.functional as F

try:
    from ._oracle_layers import check_function, gradcheck_both
except ImportError:
    from _oracle_layers import check_function, gradcheck_both


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("kwargs,shape", [
    (dict(size=(5, 4), align_corners=False), (2, 3, 17, 13)),
    (dict(scale_factor=0.37, align_corners=False), (1, 2, 9, 10)),
    (dict(size=(3, 3), align_corners=True), (1, 2, 8, 8)),
    (dict(size=(11, 3), align_corners=False), (1, 2, 5, 6)),          # up in one dim, down in the other
    (dict(scale_factor=(0.5, 2.3), recompute_scale_factor=True, align_corners=False), (1, 1, 7, 9)),
    (dict(size=(2, 7), align_corners=False), (1, 1, 40, 7)),
])
def test_interpolate_antialias_matches_torch(mode, kwargs, shape):
    check_function(F.interpolate, TF.interpolate, [shape], mode=mode, antialias=True, **kwargs)


def test_interpolate_antialias_lanczos_matches_torch():
    check_function(F.interpolate, TF.interpolate, [(1, 2, 13, 9)], size=(4, 5), mode="lanczos",
                   antialias=True)


def test_interpolate_antialias_float32_and_gradcheck():
    x = torch.randn(2, 3, 12, 10)
    got = F.interpolate(ember.tensor(x.numpy()), size=(5, 3), mode="bicubic", antialias=True)
    want = TF.interpolate(x, size=(5, 3), mode="bicubic", antialias=True)
    assert got.dtype == ember.float32
    assert torch.allclose(torch.from_numpy(got.numpy()), want, atol=1e-5)
    gradcheck_both(lambda t: F.interpolate(t, size=(2, 3), mode="bilinear", antialias=True),
                   [(1, 1, 5, 7)])


def test_interpolate_antialias_errors_match_torch():
    for kwargs, shape in [(dict(mode="linear"), (1, 2, 6)), (dict(mode="nearest"), (1, 2, 6, 6)),
                          (dict(mode="trilinear"), (1, 1, 4, 4, 4))]:
        for lib, fn in ((torch, TF.interpolate), (ember, F.interpolate)):
            with pytest.raises(ValueError, match="Anti-alias option is restricted to bilinear"):
                fn(lib.zeros(shape), scale_factor=0.5, antialias=True, **kwargs)
    for lib, fn in ((torch, TF.interpolate), (ember, F.interpolate)):
        with pytest.raises(ValueError, match="Lanczos mode requires antialias=True"):
            fn(lib.zeros(1, 1, 4, 4), size=2, mode="lanczos")


def _grid_sample_pair(mode, padding_mode, align_corners, spread):
    def fe(x, grid):
        return F.grid_sample(x, grid * spread, mode, padding_mode, align_corners)

    def ft(x, grid):
        return TF.grid_sample(x, grid * spread, mode, padding_mode, align_corners)
    return fe, ft


@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [True, False])
def test_grid_sample_bicubic_matches_torch(padding_mode, align_corners):
    fe, ft = _grid_sample_pair("bicubic", padding_mode, align_corners, 1.4)
    check_function(fe, ft, [(2, 3, 4, 5), (2, 3, 6, 2)])


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [True, False])
def test_grid_sample_5d_matches_torch(mode, padding_mode, align_corners):
    fe, ft = _grid_sample_pair(mode, padding_mode, align_corners, 1.3)
    check_function(fe, ft, [(2, 3, 3, 4, 5), (2, 2, 3, 4, 3)])


def test_grid_sample_size_one_dims_match_torch():
    for mode, shapes in (("bicubic", [(1, 2, 1, 3), (1, 2, 2, 2)]),
                         ("bilinear", [(1, 2, 1, 1, 3), (1, 2, 2, 1, 3)])):
        fe, ft = _grid_sample_pair(mode, "reflection", True, 1.5)
        check_function(fe, ft, shapes)


def test_grid_sample_gradcheck():
    gradcheck_both(lambda x, g: F.grid_sample(x, g * 0.9, mode="bicubic", align_corners=False),
                   [(1, 1, 3, 3), (1, 2, 2, 2)], second_order=False)
    gradcheck_both(lambda x, g: F.grid_sample(x, g * 0.9, padding_mode="border", align_corners=True),
                   [(1, 1, 2, 3, 3), (1, 2, 1, 2, 3)], second_order=False)


@pytest.mark.parametrize("input_shape,grid_shape,mode,message", [
    ((1, 2, 3, 4, 5), (1, 2, 2, 2, 3), "bicubic", "bicubic interpolation only supports 4D input"),
    ((1, 2, 3, 4), (1, 2, 2, 2, 3), "bilinear", "expected grid to have size 2 in last dimension"),
    ((1, 2, 3, 4), (1, 2, 2, 2, 2), "bilinear", "expected 4D input and grid with same number"),
    ((1, 2, 3, 4, 5, 6), (1, 2, 2, 2, 2, 4), "bilinear", "expected 5D input and grid with same number"),
    ((2, 2, 3, 4), (1, 2, 2, 2), "nearest", "expected grid and input to have same batch size"),
    ((1, 2, 0, 4), (1, 2, 2, 2), "nearest", "expected input to have non-empty spatial dimensions"),
])
def test_grid_sample_errors_match_torch(input_shape, grid_shape, mode, message):
    for lib, fn in ((torch, TF.grid_sample), (ember, F.grid_sample)):
        with pytest.raises(RuntimeError, match=message):
            fn(lib.zeros(input_shape), lib.zeros(grid_shape), mode=mode, align_corners=False)
    for lib, fn in ((torch, TF.grid_sample), (ember, F.grid_sample)):
        with pytest.raises(ValueError, match="expected mode to be 'bilinear', 'nearest' or 'bicubic'"):
            fn(lib.zeros(1, 1, 2, 2), lib.zeros(1, 1, 1, 2), mode="area", align_corners=False)


@pytest.mark.filterwarnings("ignore:Since version 1.3.0, affine_grid behavior")   # torch's, for size 1
@pytest.mark.parametrize("align_corners", [True, False])
@pytest.mark.parametrize("size", [(2, 3, 4, 5, 6), (2, 1, 1, 3, 2)])
def test_affine_grid_5d_matches_torch(align_corners, size):
    check_function(F.affine_grid, TF.affine_grid, [(2, 3, 4)], size, align_corners=align_corners)


def test_affine_grid_5d_feeds_grid_sample():
    def pipeline(lib, fn, theta, x):
        return fn.grid_sample(x, fn.affine_grid(theta, list(x.shape), align_corners=False),
                              align_corners=False)
    check_function(lambda t, x: pipeline(ember, F, t, x), lambda t, x: pipeline(torch, TF, t, x),
                   [(2, 3, 4), (2, 2, 3, 4, 5)])
    gradcheck_both(lambda t: F.affine_grid(t, (1, 1, 2, 3, 2), align_corners=False), [(1, 3, 4)])


def test_affine_grid_errors_match_torch():
    cases = [((2, 2, 3), (2, 1, 3, 4, 5), ValueError, "Expected a batch of 3D affine matrices"),
             ((2, 3, 4), (2, 1, 3, 4), ValueError, "Expected a batch of 2D affine matrices"),
             ((2, 3, 4), (2, 1, 3), NotImplementedError, "affine_grid only supports 4D and 5D"),
             ((2, 3, 4), (2, 1, 0, 4, 5), ValueError, "Expected non-zero, positive output size")]
    for theta, size, error, message in cases:
        for lib, fn in ((torch, TF.affine_grid), (ember, F.affine_grid)):
            with pytest.raises(error, match=message):
                fn(lib.zeros(theta), size, align_corners=False)
    for lib, fn in ((torch, TF.affine_grid), (ember, F.affine_grid)):
        with pytest.raises(ValueError, match="Expected theta to have floating point type"):
            fn(lib.zeros((1, 2, 3), dtype=lib.int64), (1, 1, 2, 2), align_corners=False)
