"""Fractional max pooling (functions and layers) against torch, with the random samples given
so that both libraries pick the same windows."""
import numpy as np
import pytest
import torch
import torch.nn as tnn
import torch.nn.functional as TF

import ember
import ember.nn as nn
import ember.nn.functional as F

CASES = [
    (2, (2, 3, 9, 8), 2, dict(output_size=(4, 5))),
    (2, (3, 7, 7), 3, dict(output_size=3)),
    (2, (2, 2, 10, 9), (2, 3), dict(output_ratio=(0.5, 0.6))),
    (2, (1, 2, 6, 6), 2, dict(output_size=5)),                    # heavily overlapping windows
    (3, (2, 2, 7, 6, 8), 2, dict(output_size=(3, 4, 5))),
    (3, (2, 6, 5, 7), (2, 1, 3), dict(output_ratio=0.5)),
]


def _samples(rng, nd, shape, dtype):
    n = 1 if len(shape) == nd + 1 else shape[0]
    return rng.random((n, shape[-nd - 1], nd)).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("nd,shape,kernel,kwargs", CASES)
def test_fractional_max_pool_matches_torch(nd, shape, kernel, kwargs, dtype):
    rng = np.random.default_rng(nd)
    x = rng.standard_normal(shape).astype(dtype)
    s = _samples(rng, nd, shape, dtype)
    tx, ex = torch.tensor(x, requires_grad=True), ember.tensor(x, requires_grad=True)
    tv, ti = getattr(TF, f"fractional_max_pool{nd}d")(tx, kernel, return_indices=True,
                                                      _random_samples=torch.tensor(s), **kwargs)
    ev, ei = getattr(F, f"fractional_max_pool{nd}d")(ex, kernel, return_indices=True,
                                                     _random_samples=ember.tensor(s), **kwargs)
    np.testing.assert_array_equal(ev.detach().numpy(), tv.detach().numpy())
    np.testing.assert_array_equal(ei.numpy(), ti.numpy())
    assert ei.dtype == ember.int64
    if len(shape) == nd + 2:
        assert type(ev.grad_fn).__name__ == type(tv.grad_fn).__name__
    g = rng.standard_normal(tuple(tv.shape)).astype(dtype)
    tv.backward(torch.tensor(g))
    ev.backward(ember.tensor(g))
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-6)
    only_values = getattr(F, f"fractional_max_pool{nd}d")(ember.tensor(x), kernel,
                                                          _random_samples=ember.tensor(s), **kwargs)
    np.testing.assert_array_equal(only_values.numpy(), tv.detach().numpy())


def test_nan_is_picked_as_torch():
    x = np.random.default_rng(0).standard_normal((1, 1, 6, 6))
    x[0, 0, 2, 3] = np.nan
    s = np.full((1, 1, 2), 0.3)
    tv, ti = TF.fractional_max_pool2d(torch.tensor(x), 2, output_size=4, return_indices=True,
                                      _random_samples=torch.tensor(s))
    ev, ei = F.fractional_max_pool2d(ember.tensor(x), 2, output_size=4, return_indices=True,
                                     _random_samples=ember.tensor(s))
    np.testing.assert_array_equal(ev.numpy(), tv.numpy())
    np.testing.assert_array_equal(ei.numpy(), ti.numpy())


def test_drawn_samples_give_a_valid_pooling():
    x = ember.randn(2, 3, 9, 9)
    v, i = F.fractional_max_pool2d(x, 2, output_ratio=0.5, return_indices=True)
    assert tuple(v.shape) == (2, 3, 4, 4)
    np.testing.assert_array_equal(
        np.take_along_axis(x.numpy().reshape(2, 3, -1), i.numpy().reshape(2, 3, -1), 2),
        v.numpy().reshape(2, 3, -1))


@pytest.mark.parametrize("nd,shape,kernel,kwargs", [
    (2, (1, 2, 5, 5), 4, dict(output_size=3)),
    (2, (1, 2, 5, 5), 2, dict(output_size=(3, 5))),
    (2, (2, 5, 5, 5, 5), 2, dict(output_size=3)),
    (3, (1, 2, 5, 5, 5), 4, dict(output_size=3)),
])
def test_errors_match_torch(nd, shape, kernel, kwargs):
    with pytest.raises(RuntimeError) as t_err:
        getattr(TF, f"fractional_max_pool{nd}d")(torch.zeros(shape), kernel, **kwargs)
    with pytest.raises(RuntimeError) as e_err:
        getattr(F, f"fractional_max_pool{nd}d")(ember.zeros(shape), kernel, **kwargs)
    assert str(e_err.value) == str(t_err.value)


def test_wrong_samples_and_missing_size_match_torch():
    with pytest.raises(RuntimeError) as t_err:
        TF.fractional_max_pool2d(torch.zeros(1, 2, 5, 5), 2, output_size=3,
                                 _random_samples=torch.rand(1, 2, 3))
    with pytest.raises(RuntimeError) as e_err:
        F.fractional_max_pool2d(ember.zeros(1, 2, 5, 5), 2, output_size=3,
                                _random_samples=ember.rand(1, 2, 3))
    assert str(e_err.value) == str(t_err.value)
    with pytest.raises(ValueError) as t_err:
        TF.fractional_max_pool2d(torch.zeros(1, 2, 5, 5), 2)
    with pytest.raises(ValueError) as e_err:
        F.fractional_max_pool2d(ember.zeros(1, 2, 5, 5), 2)
    assert str(e_err.value) == str(t_err.value)


@pytest.mark.parametrize("nd,args,kwargs,shape", [
    (2, (2,), dict(output_ratio=0.5), (2, 3, 8, 9)),
    (2, ((2, 3),), dict(output_size=(4, 3), return_indices=True), (3, 8, 7)),
    (3, (2,), dict(output_size=3), (1, 2, 6, 5, 6)),
])
def test_layers_match_torch(nd, args, kwargs, shape):
    rng = np.random.default_rng(5)
    x = rng.standard_normal(shape)
    s = _samples(rng, nd, shape, np.float64)
    tm = getattr(tnn, f"FractionalMaxPool{nd}d")(*args, **kwargs, _random_samples=torch.tensor(s))
    em = getattr(nn, f"FractionalMaxPool{nd}d")(*args, **kwargs, _random_samples=ember.tensor(s))
    assert repr(em) == repr(tm)
    for attr in ("kernel_size", "output_size", "output_ratio", "return_indices"):
        assert getattr(em, attr) == getattr(tm, attr), attr
    assert list(em.state_dict()) == list(tm.state_dict())
    tout, eout = tm(torch.tensor(x)), em(ember.tensor(x))
    if kwargs.get("return_indices"):
        np.testing.assert_array_equal(eout[1].numpy(), tout[1].numpy())
        tout, eout = tout[0], eout[0]
    np.testing.assert_array_equal(eout.numpy(), tout.numpy())


@pytest.mark.parametrize("kwargs", [{}, dict(output_size=2, output_ratio=0.5),
                                    dict(output_ratio=1.5), dict(output_ratio=(0.5, 0))])
def test_layer_argument_errors_match_torch(kwargs):
    with pytest.raises(ValueError) as t_err:
        tnn.FractionalMaxPool2d(2, **kwargs)
    with pytest.raises(ValueError) as e_err:
        nn.FractionalMaxPool2d(2, **kwargs)
    assert str(e_err.value) == str(t_err.value)
