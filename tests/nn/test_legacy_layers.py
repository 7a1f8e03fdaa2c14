"""nn.CrossMapLRN2d (torch's legacy cross-channel LRN, with its own windows and backward) and
nn.factory_kwargs, against torch."""
import numpy as np
import pytest
import torch

import ember


@pytest.mark.parametrize("size,channels", [(3, 3), (3, 8), (4, 6), (5, 8), (2, 5), (7, 4)])
def test_cross_map_lrn2d_matches_torch(size, channels):
    rng = np.random.default_rng(size * channels)
    x = rng.standard_normal((2, channels, 4, 5))
    g = rng.standard_normal(x.shape)
    tx, ex = torch.tensor(x, requires_grad=True), ember.tensor(x, requires_grad=True)
    tm = torch.nn.CrossMapLRN2d(size, 0.1, 0.75, 2)
    em = ember.nn.CrossMapLRN2d(size, 0.1, 0.75, 2)
    assert repr(em) == repr(tm) and not list(em.state_dict())
    tout, eout = tm(tx), em(ex)
    np.testing.assert_allclose(eout.detach().numpy(), tout.detach().numpy(), rtol=1e-12)
    assert type(eout.grad_fn).__name__ == type(tout.grad_fn).__name__
    tout.backward(torch.tensor(g))
    eout.backward(ember.tensor(g))
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_cross_map_lrn2d_differs_from_local_response_norm_as_in_torch():
    x = np.random.default_rng(0).standard_normal((1, 8, 3, 3))
    t = torch.nn.CrossMapLRN2d(3, 0.5)(torch.tensor(x)) - torch.nn.LocalResponseNorm(3, 0.5)(
        torch.tensor(x))
    e = ember.nn.CrossMapLRN2d(3, 0.5)(ember.tensor(x)) - ember.nn.LocalResponseNorm(3, 0.5)(
        ember.tensor(x))
    assert np.abs(t.numpy()).max() > 1e-3
    np.testing.assert_allclose(e.numpy(), t.numpy(), atol=1e-12)


def test_cross_map_lrn2d_wants_4d_input_as_torch():
    with pytest.raises(ValueError) as t_err:
        torch.nn.CrossMapLRN2d(3)(torch.zeros(2, 3, 4))
    with pytest.raises(ValueError) as e_err:
        ember.nn.CrossMapLRN2d(3)(ember.zeros(2, 3, 4))
    assert str(e_err.value) == str(t_err.value)


@pytest.mark.parametrize("kwargs", [
    None, {}, {"device": "cpu"}, {"dtype": "D", "memory_format": "M"},
    {"factory_kwargs": {"dtype": "D"}, "device": "cpu"},
])
def test_factory_kwargs_as_torch(kwargs):
    assert ember.nn.factory_kwargs(kwargs) == torch.nn.factory_kwargs(kwargs)


@pytest.mark.parametrize("kwargs", [{"bias": True}, {"dtype": "a", "factory_kwargs": {"dtype": "b"}}])
def test_factory_kwargs_errors_as_torch(kwargs):
    with pytest.raises(TypeError) as t_err:
        torch.nn.factory_kwargs(kwargs)
    with pytest.raises(TypeError) as e_err:
        ember.nn.factory_kwargs(kwargs)
    assert str(e_err.value) == str(t_err.value)
