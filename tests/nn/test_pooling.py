"""Pooling functions and layers against torch."""
import numpy as np
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


@pytest.mark.parametrize("fn,shape,args,kwargs", [
    ("max_pool2d", (2, 3, 7, 6), (3, 2, 1), dict(ceil_mode=True, return_indices=True)),
    ("max_pool2d", (2, 3, 7, 6), ((3, 2), (1, 2), 1), dict(dilation=2, return_indices=True)),
    ("max_pool2d", (3, 6, 6), (2,), dict(return_indices=True)),
    ("max_pool1d", (3, 9), (2,), dict(ceil_mode=True, return_indices=True)),
    ("max_pool1d", (2, 3, 9), (3, 2, 1), dict(dilation=2, return_indices=True)),
    ("avg_pool2d", (2, 3, 7, 6), (3, 2, 1), dict(ceil_mode=True)),
    ("avg_pool2d", (2, 3, 7, 6), (3, 2, 1), dict(ceil_mode=True, count_include_pad=False)),
    ("avg_pool2d", (2, 3, 7, 6), (3, 2, 1), dict(divisor_override=5)),
    ("avg_pool1d", (2, 3, 8), (3, 2, 1), dict(ceil_mode=True, count_include_pad=False)),
    ("adaptive_avg_pool2d", (2, 3, 7, 6), ((3, 4),), {}),
    ("adaptive_avg_pool2d", (3, 7, 6), ((None, 4),), {}),
    ("adaptive_avg_pool1d", (2, 3, 7), (5,), {}),
    ("adaptive_max_pool2d", (2, 3, 7, 6), ((3, 4),), dict(return_indices=True)),
    ("adaptive_max_pool2d", (2, 3, 5, 5), (7,), dict(return_indices=True)),
    ("lp_pool2d", (2, 3, 7, 6), (2.0, 3, 2), {}),
    ("lp_pool2d", (2, 3, 6, 6), (3.0, 2), {}),
])
def test_pooling_functions_match_torch(fn, shape, args, kwargs):
    check_function(getattr(F, fn), getattr(TF, fn), [shape], *args, **kwargs)


def test_max_pool_indices_are_torch_flat_indices():
    x = np.random.default_rng(1).standard_normal((2, 2, 5, 7))
    _, ie = F.max_pool2d(ember.tensor(x), 3, 2, 1, return_indices=True)
    _, it = TF.max_pool2d(torch.tensor(x), 3, 2, 1, return_indices=True)
    assert ie.dtype == ember.int64
    np.testing.assert_array_equal(ie.numpy(), it.numpy())


def test_max_unpool2d_matches_torch():
    x = np.random.default_rng(2).standard_normal((2, 3, 5, 5))
    ye, ie = F.max_pool2d(ember.tensor(x), 2, return_indices=True)
    yt, it = TF.max_pool2d(torch.tensor(x), 2, return_indices=True)
    ye.requires_grad_()
    yt.requires_grad_()
    ue = F.max_unpool2d(ye, ie, 2, output_size=(5, 5))
    ut = TF.max_unpool2d(yt, it, 2, output_size=(5, 5))
    np.testing.assert_array_equal(ue.detach().numpy(), ut.detach().numpy())
    g = np.random.default_rng(3).standard_normal((2, 3, 5, 5))
    ue.backward(ember.tensor(g))
    ut.backward(torch.tensor(g))
    np.testing.assert_allclose(ye.grad.numpy(), yt.grad.numpy())


def test_pooling_gradcheck_and_double_backward():
    gradcheck_both(lambda x: F.max_pool2d(x, 3, 2, 1), [(1, 2, 5, 5)])
    gradcheck_both(lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True), [(1, 2, 5, 5)])
    gradcheck_both(lambda x: F.adaptive_avg_pool2d(x, (2, 3)), [(1, 2, 4, 5)])
    gradcheck_both(lambda x: F.adaptive_max_pool2d(x, 2), [(1, 2, 4, 5)])
    gradcheck_both(lambda x: F.lp_pool2d(x.abs() + 0.5, 2.0, 2), [(1, 1, 4, 4)])


def test_max_pool_grad_fn_name():
    x = ember.randn(1, 2, 4, 4, requires_grad=True)
    assert type(F.max_pool2d(x, 2).grad_fn).__name__ == "MaxPool2DWithIndicesBackward0"


@pytest.mark.parametrize("cls,args,kwargs,shape", [
    ("MaxPool1d", (3,), dict(stride=2, padding=1), (2, 3, 8)),
    ("MaxPool2d", (3,), dict(stride=2, padding=1, ceil_mode=True), (2, 3, 7, 8)),
    ("MaxPool2d", (2,), dict(return_indices=True), (2, 3, 6, 6)),
    ("AvgPool1d", (3,), dict(stride=2, count_include_pad=False, padding=1), (2, 3, 8)),
    ("AvgPool2d", ((2, 3),), dict(stride=1, divisor_override=4), (2, 3, 5, 6)),
    ("AdaptiveAvgPool1d", (4,), {}, (2, 3, 9)),
    ("AdaptiveAvgPool2d", ((3, 2),), {}, (2, 3, 7, 5)),
    ("AdaptiveMaxPool2d", (3,), dict(return_indices=True), (2, 3, 7, 5)),
    ("LPPool2d", (2, 2), {}, (2, 3, 6, 6)),
])
def test_pooling_layers_match_torch(cls, args, kwargs, shape):
    check_layer(getattr(nn, cls), getattr(torch.nn, cls), args, shape, kwargs)


def test_max_unpool_layer():
    pool, unpool = nn.MaxPool2d(2, return_indices=True), nn.MaxUnpool2d(2)
    x = ember.randn(1, 1, 4, 4)
    y, i = pool(x)
    out = unpool(y, i)
    assert out.shape == (1, 1, 4, 4)
    assert float((out.amax((2, 3)) - x.amax((2, 3))).abs().max()) == 0


def test_pool_errors():
    with pytest.raises(RuntimeError, match="pad should be at most half of effective kernel size"):
        F.max_pool2d(ember.randn(1, 3, 5, 5), 3, padding=2)
    with pytest.raises(RuntimeError, match="Expected 3D or 4D"):
        F.max_pool2d(ember.randn(5, 5), 2)
