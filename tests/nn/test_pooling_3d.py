"""3-D adaptive, power-average and unpooling (functions and layers) against torch."""
import numpy as np
import pytest
import torch
import torch.nn as tnn
import torch.nn.functional as TF

import ember
import ember.nn as nn
import ember.nn.functional as F

try:
    from ._oracle_layers import check_function, check_layer, gradcheck_both
except ImportError:
    from _oracle_layers import check_function, check_layer, gradcheck_both


@pytest.mark.parametrize("fn,shape,args,kwargs", [
    ("adaptive_avg_pool3d", (2, 3, 6, 4, 8), ((3, 2, 4),), {}),     # equal windows
    ("adaptive_avg_pool3d", (2, 3, 7, 5, 6), ((3, None, 4),), {}),  # overlapping windows
    ("adaptive_avg_pool3d", (3, 5, 4, 6), (1,), {}),                # unbatched, global
    ("adaptive_max_pool3d", (2, 3, 7, 5, 6), ((3, 2, 4),), dict(return_indices=True)),
    ("adaptive_max_pool3d", (3, 4, 5, 5), (7,), dict(return_indices=True)),
    ("adaptive_max_pool3d", (2, 2, 4, 4, 4), (2,), {}),
    ("lp_pool3d", (2, 3, 6, 5, 6), (2.0, 3, 2), {}),
    ("lp_pool3d", (2, 3, 4, 4, 4), (3.0, (2, 1, 2)), dict(ceil_mode=True)),
])
def test_3d_pooling_functions_match_torch(fn, shape, args, kwargs):
    check_function(getattr(F, fn), getattr(TF, fn), [shape], *args, **kwargs)


def test_adaptive_max_pool3d_with_indices_match_torch():
    x = np.random.default_rng(0).standard_normal((2, 3, 7, 5, 6))
    ve, ie = F.adaptive_max_pool3d_with_indices(ember.tensor(x), (3, 2, 4))
    vt, it = TF.adaptive_max_pool3d_with_indices(torch.tensor(x), (3, 2, 4))
    np.testing.assert_array_equal(ve.numpy(), vt.numpy())
    np.testing.assert_array_equal(ie.numpy(), it.numpy())
    assert ie.dtype == ember.int64


@pytest.mark.parametrize("shape,kernel,stride,padding,output_size", [
    ((2, 3, 4, 6, 4), 2, None, 0, None),
    ((2, 3, 5, 5, 5), 2, None, 0, (5, 5, 5)),
    ((3, 5, 7, 5), 3, 2, 1, None),
])
def test_max_unpool3d_matches_torch(shape, kernel, stride, padding, output_size):
    x = np.random.default_rng(2).standard_normal(shape)
    ye, ie = F.max_pool3d(ember.tensor(x), kernel, stride, padding, return_indices=True)
    yt, it = TF.max_pool3d(torch.tensor(x), kernel, stride, padding, return_indices=True)
    ye.requires_grad_()
    yt.requires_grad_()
    ue = F.max_unpool3d(ye, ie, kernel, stride, padding, output_size=output_size)
    ut = TF.max_unpool3d(yt, it, kernel, stride, padding, output_size=output_size)
    np.testing.assert_array_equal(ue.detach().numpy(), ut.detach().numpy())
    if len(shape) == 5:  # (ember records an unbatched input's unsqueeze and squeeze)
        assert type(ue.grad_fn).__name__ == type(ut.grad_fn).__name__
    g = np.random.default_rng(3).standard_normal(tuple(ut.shape))
    ue.backward(ember.tensor(g))
    ut.backward(torch.tensor(g))
    np.testing.assert_allclose(ye.grad.numpy(), yt.grad.numpy())
    me = nn.MaxUnpool3d(kernel, stride, padding)
    mt = tnn.MaxUnpool3d(kernel, stride, padding)
    assert repr(me) == repr(mt)
    np.testing.assert_array_equal(me(ye, ie, output_size).detach().numpy(),
                                  mt(yt, it, output_size).detach().numpy())


def test_max_unpool3d_checks_indices_shape_as_torch():
    x = ember.zeros(1, 1, 2, 2, 2)
    with pytest.raises(RuntimeError):
        TF.max_unpool3d(torch.zeros(1, 1, 2, 2, 2), torch.zeros(1, 1, 2, 2, 1, dtype=torch.long), 2)
    with pytest.raises(RuntimeError):
        F.max_unpool3d(x, ember.zeros(1, 1, 2, 2, 1, dtype=ember.int64), 2)


@pytest.mark.parametrize("name,args,shape", [
    ("AdaptiveAvgPool3d", ((2, 3, 2),), (2, 3, 5, 6, 4)),
    ("AdaptiveAvgPool3d", (1,), (3, 4, 5, 6)),
    ("AdaptiveMaxPool3d", ((2, None, 3),), (2, 3, 5, 6, 4)),
    ("LPPool3d", (2, 2), (2, 3, 4, 4, 4)),
    ("LPPool3d", (1.5, (2, 3, 2), 1), (2, 2, 4, 5, 4)),
])
def test_3d_pooling_layers_match_torch(name, args, shape):
    assert repr(getattr(nn, name)(*args)) == repr(getattr(tnn, name)(*args))
    check_layer(getattr(nn, name), getattr(tnn, name), args, shape)


def test_adaptive_max_pool3d_layer_returns_indices_as_torch():
    x = np.random.default_rng(4).standard_normal((2, 3, 5, 6, 4))
    ve, ie = nn.AdaptiveMaxPool3d(2, return_indices=True)(ember.tensor(x))
    vt, it = tnn.AdaptiveMaxPool3d(2, return_indices=True)(torch.tensor(x))
    np.testing.assert_array_equal(ve.numpy(), vt.numpy())
    np.testing.assert_array_equal(ie.numpy(), it.numpy())


def test_3d_pooling_gradcheck():
    gradcheck_both(lambda x: F.adaptive_avg_pool3d(x, (2, 3, 2)), [(1, 2, 3, 4, 3)])
    gradcheck_both(lambda x: F.adaptive_max_pool3d(x, 2), [(1, 2, 3, 4, 3)])
    gradcheck_both(lambda x: F.lp_pool3d(x.abs() + 0.5, 2.0, 2), [(1, 1, 4, 4, 4)])


def test_max_unpool2d_with_overlapping_windows_matches_torch():
    # overlapping windows can pick one element twice: unpooling writes it once, as torch does
    x = np.random.default_rng(5).standard_normal((2, 3, 7, 7))
    ye, ie = F.max_pool2d(ember.tensor(x), 3, 1, return_indices=True)
    yt, it = TF.max_pool2d(torch.tensor(x), 3, 1, return_indices=True)
    assert len(np.unique(it.numpy()[0, 0])) < it.numpy()[0, 0].size
    ue = F.max_unpool2d(ye.requires_grad_(), ie, 3, 1, output_size=(7, 7))
    ut = TF.max_unpool2d(yt.requires_grad_(), it, 3, 1, output_size=(7, 7))
    np.testing.assert_array_equal(ue.detach().numpy(), ut.detach().numpy())
    g = np.random.default_rng(6).standard_normal((2, 3, 7, 7))
    ue.backward(ember.tensor(g))
    ut.backward(torch.tensor(g))
    np.testing.assert_allclose(ye.grad.numpy(), yt.grad.numpy())
