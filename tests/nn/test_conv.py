"""Convolution functions and layers against torch."""
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


@pytest.mark.parametrize("shapes,kwargs", [
    ([(2, 4, 7, 6), (6, 2, 3, 2), (6,)], dict(stride=(2, 1), padding=1, dilation=(1, 2), groups=2)),
    ([(2, 4, 7, 6), (8, 1, 3, 3), (8,)], dict(padding="same", groups=4)),   # depthwise, x2
    ([(2, 3, 6, 5), (4, 3, 2, 2)], dict(padding="valid", stride=2)),
    ([(3, 6, 5), (4, 3, 2, 2)], dict(padding=(1, 0))),                      # unbatched
])
def test_conv2d_matches_torch(shapes, kwargs, device):
    check_function(F.conv2d, TF.conv2d, shapes, device=device, **kwargs)


@pytest.mark.parametrize("shapes,kwargs", [
    ([(2, 3, 9), (5, 3, 4)], dict(padding="same", dilation=2)),
    ([(2, 4, 9), (4, 2, 3), (4,)], dict(stride=3, padding=2, groups=2)),
])
def test_conv1d_matches_torch(shapes, kwargs):
    check_function(F.conv1d, TF.conv1d, shapes, **kwargs)


def test_conv3d_matches_torch():
    check_function(F.conv3d, TF.conv3d, [(2, 2, 5, 4, 5), (3, 2, 2, 3, 2), (3,)],
                   stride=2, padding=(1, 0, 1))


@pytest.mark.parametrize("fn,shapes,kwargs", [
    ("conv_transpose2d", [(2, 4, 4, 5), (4, 3, 3, 2), (6,)],
     dict(stride=2, padding=1, output_padding=1, groups=2, dilation=(1, 2))),
    ("conv_transpose2d", [(4, 4, 5), (4, 3, 3, 3)], dict(stride=(1, 2))),
    ("conv_transpose1d", [(2, 3, 5), (3, 2, 3), (2,)], dict(stride=3, padding=1, output_padding=2)),
])
def test_conv_transpose_matches_torch(fn, shapes, kwargs):
    check_function(getattr(F, fn), getattr(TF, fn), shapes, **kwargs)


def test_gradcheck_conv_and_double_backward():
    gradcheck_both(lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1),
                   [(1, 2, 4, 4), (3, 2, 2, 2), (3,)])
    gradcheck_both(lambda x, w: F.conv1d(x, w, groups=2, dilation=2), [(2, 4, 5), (2, 2, 2)])
    gradcheck_both(lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1),
                   [(1, 3, 2, 3), (3, 2, 2, 2), (2,)])


def test_conv_grad_fn_name():
    x = ember.randn(1, 2, 4, 4, requires_grad=True)
    assert F.conv2d(x, ember.randn(3, 2, 2, 2)).grad_fn.name() == "ConvolutionBackward0"
    assert F.conv_transpose2d(x, ember.randn(2, 3, 2, 2)).grad_fn.name() == "ConvolutionBackward0"


@pytest.mark.parametrize("mode", ["zeros", "reflect", "replicate", "circular"])
def test_conv2d_layer_padding_modes(mode):
    check_layer(nn.Conv2d, torch.nn.Conv2d, (3, 4, 3), (2, 3, 6, 5),
                dict(padding=(1, 2), stride=(1, 2), padding_mode=mode))


@pytest.mark.parametrize("cls,args,kwargs,shape", [
    ("Conv1d", (4, 6, 3), dict(groups=2, padding="same"), (2, 4, 7)),
    ("Conv2d", (4, 4, 3), dict(groups=4, bias=False), (2, 4, 6, 6)),
    ("Conv3d", (2, 3, 2), dict(stride=2, padding=1), (2, 2, 4, 5, 4)),
    ("ConvTranspose1d", (3, 4, 3), dict(stride=2, output_padding=1), (2, 3, 5)),
    ("ConvTranspose2d", (4, 2, 3), dict(stride=2, padding=1, groups=2, dilation=2), (2, 4, 3, 4)),
])
def test_conv_layers_match_torch(cls, args, kwargs, shape):
    check_layer(getattr(nn, cls), getattr(torch.nn, cls), args, shape, kwargs)


def test_conv_transpose_output_size():
    check_layer(nn.ConvTranspose2d, torch.nn.ConvTranspose2d, (2, 3, 3), (1, 2, 4, 4),
                dict(stride=2), call_kwargs=dict(output_size=(10, 9)))


def test_conv_init_like_torch():
    ember.manual_seed(0)
    m = nn.Conv2d(4, 8, 3)
    bound = 1 / (4 * 9) ** 0.5
    assert float(m.weight.detach().abs().max()) <= bound and float(m.bias.detach().abs().max()) <= bound
    assert float(m.weight.detach().std()) > bound / 3


def test_conv_errors_name_shapes():
    conv = nn.Conv2d(3, 8, 3)
    with pytest.raises(RuntimeError, match=r"expected input\[1, 4, 5, 5\] to have 3 channels, but "
                                           r"got 4 channels instead"):
        conv(ember.randn(1, 4, 5, 5))
    with pytest.raises(RuntimeError, match=r"Expected 3D \(unbatched\) or 4D \(batched\) input to "
                                           r"conv2d, but got input of size: \[4, 5, 5, 5, 5\]"):
        conv(ember.randn(4, 5, 5, 5, 5))
    with pytest.raises(RuntimeError, match="Kernel size can't be greater than actual input size"):
        conv(ember.randn(1, 3, 2, 2))
    with pytest.raises(RuntimeError, match="padding='same' is not supported for strided"):
        F.conv2d(ember.randn(1, 3, 5, 5), ember.randn(8, 3, 3, 3), stride=2, padding="same")
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.Conv2d(3, 8, 3, groups=2)
    with pytest.raises(RuntimeError, match=r"Given transposed=1, weight of size \[3, 4, 3, 3\]"):
        nn.ConvTranspose2d(3, 4, 3)(ember.randn(1, 4, 5, 5))
