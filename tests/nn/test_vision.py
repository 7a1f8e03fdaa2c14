"""Padding, interpolation, grid sampling, shuffles and fold/unfold against torch."""
import pytest
import torch
import torch.nn.functional as TF

import ember
import ember.nn as nn
import ember.nn.functional as F

try:
    from ._oracle_layers import check_function, check_layer, gradcheck_both
except ImportError:
    from _oracle_layers import check_function, check_layer, gradcheck_both


@pytest.mark.parametrize("shape,pad,mode", [
    ((2, 3, 4, 5), (1, 2, 2, 1), "constant"),
    ((2, 3, 4, 5), (1, 2, 2, 1), "reflect"),
    ((2, 3, 4, 5), (1, 2, 2, 1), "replicate"),
    ((2, 3, 4, 5), (1, 2, 2, 1), "circular"),
    ((2, 3, 4, 5), (1, -2, 0, 1, 1, 1), "constant"),
    ((2, 3, 4, 5, 3), (1, 2, 2, 1, 1, 0), "replicate"),
    ((3, 5), (2, 3), "reflect"),
    ((2, 3, 4, 5, 3), (1, 2, 2, 1, 1, 2), "circular"),
])
def test_pad_matches_torch(shape, pad, mode):
    check_function(F.pad, TF.pad, [shape], pad, mode=mode)


def test_pad_value_and_errors():
    check_function(F.pad, TF.pad, [(2, 3)], (1, 1), value=2.5)
    with pytest.raises(NotImplementedError, match="Padding size 2 is not supported for 4D input"):
        F.pad(ember.randn(1, 2, 3, 4), (1, 2), mode="reflect")
    with pytest.raises(RuntimeError, match="Padding length must be divisible by 2"):
        F.pad(ember.randn(1, 2, 3, 4), (1,))


@pytest.mark.parametrize("cls,args,shape", [
    ("ZeroPad2d", ((1, 0, 2, 1),), (2, 3, 4, 4)),
    ("ConstantPad1d", (2, 1.5), (2, 3, 4)),
    ("ConstantPad2d", (1, -1.0), (2, 3, 4, 4)),
    ("ReflectionPad1d", (2,), (2, 3, 4)),
    ("ReflectionPad2d", ((1, 2, 0, 3),), (2, 3, 4, 5)),
    ("ReplicationPad1d", (3,), (2, 3, 4)),
    ("ReplicationPad2d", (2,), (2, 3, 4, 4)),
    ("CircularPad2d", ((1, 2, 2, 1),), (2, 3, 4, 4)),
    ("PixelShuffle", (2,), (2, 8, 3, 4)),
    ("PixelUnshuffle", (2,), (2, 2, 4, 6)),
    ("ChannelShuffle", (3,), (2, 6, 3, 4)),
    ("Unfold", ((2, 3),), (2, 3, 5, 6)),
    ("Fold", ((4, 5), 2), (2, 12, 12)),
])
def test_vision_layers_match_torch(cls, args, shape):
    check_layer(getattr(nn, cls), getattr(torch.nn, cls), args, shape, modes=("train",), steps=1)


@pytest.mark.parametrize("kwargs,shape", [
    (dict(scale_factor=2), (2, 3, 4, 5)),
    (dict(size=(7, 3), mode="nearest-exact"), (2, 3, 4, 5)),
    (dict(size=(7, 3), mode="bilinear", align_corners=True), (2, 3, 4, 5)),
    (dict(size=(7, 3), mode="bilinear", align_corners=False), (2, 3, 4, 5)),
    (dict(scale_factor=1.7, mode="bicubic", align_corners=True), (2, 3, 4, 5)),
    (dict(scale_factor=(0.6, 1.7), mode="bicubic", align_corners=False), (2, 3, 5, 5)),
    (dict(scale_factor=2.5, mode="linear"), (2, 3, 4)),
    (dict(size=(3, 4, 2), mode="trilinear", align_corners=True), (1, 2, 2, 3, 4)),
])
def test_interpolate_matches_torch(kwargs, shape):
    check_function(F.interpolate, TF.interpolate, [shape], **kwargs)


def test_upsample_layer():
    check_layer(nn.Upsample, torch.nn.Upsample, (), (2, 3, 4, 5),
                dict(scale_factor=2, mode="bilinear", align_corners=False), modes=("train",))


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [True, False])
def test_grid_sample_matches_torch(mode, padding_mode, align_corners):
    def fe(x, grid):
        return F.grid_sample(x, grid * 1.3, mode, padding_mode, align_corners)

    def ft(x, grid):
        return TF.grid_sample(x, grid * 1.3, mode, padding_mode, align_corners)
    check_function(fe, ft, [(2, 3, 4, 5), (2, 3, 6, 2)])


@pytest.mark.parametrize("align_corners", [True, False])
def test_affine_grid_matches_torch(align_corners):
    check_function(F.affine_grid, TF.affine_grid, [(2, 2, 3)], (2, 3, 4, 5),
                   align_corners=align_corners)


def test_vision_gradcheck_and_double_backward():
    gradcheck_both(lambda x: F.pad(x, (1, 2, 0, 1), mode="reflect"), [(1, 1, 3, 3)])
    gradcheck_both(lambda x: F.interpolate(x, scale_factor=2, mode="bicubic"), [(1, 1, 2, 3)])
    gradcheck_both(lambda x, g: F.grid_sample(x, g * 0.9, align_corners=False),
                   [(1, 1, 3, 3), (1, 2, 2, 2)], second_order=False)
    gradcheck_both(lambda x: F.unfold(x, 2, padding=1, stride=2), [(1, 2, 3, 3)])
    gradcheck_both(lambda x: F.fold(x, (3, 3), 2), [(1, 4, 4)])
