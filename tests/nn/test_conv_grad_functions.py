"""ember.nn.grad (convolution gradients), F.native_channel_shuffle, F.conv_tbc and small
nn.functional names against torch."""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
import ember.nn.functional as F


@pytest.mark.parametrize("dims,in_shape,w_shape,kwargs", [
    (1, (2, 4, 9), (6, 2, 3), dict(stride=2, padding=1, groups=2)),
    (2, (2, 3, 7, 6), (4, 3, 3, 2), dict(stride=(2, 1), padding=1, dilation=2)),
    (2, (1, 2, 5, 5), (2, 2, 3, 3), {}),
    (3, (1, 2, 4, 5, 4), (3, 2, 2, 2, 2), dict(padding=1)),
])
def test_conv_input_and_weight_gradients_match_torch(dims, in_shape, w_shape, kwargs):
    rng = np.random.default_rng(dims)
    x, w = rng.standard_normal(in_shape), rng.standard_normal(w_shape)
    out_shape = getattr(TF, f"conv{dims}d")(torch.tensor(x), torch.tensor(w), **kwargs).shape
    g = rng.standard_normal(tuple(out_shape))
    t_in = getattr(torch.nn.grad, f"conv{dims}d_input")(in_shape, torch.tensor(w), torch.tensor(g),
                                                        **kwargs)
    e_in = getattr(ember.nn.grad, f"conv{dims}d_input")(in_shape, ember.tensor(w), ember.tensor(g),
                                                        **kwargs)
    np.testing.assert_allclose(e_in.numpy(), t_in.numpy(), rtol=1e-10, atol=1e-12)
    t_w = getattr(torch.nn.grad, f"conv{dims}d_weight")(torch.tensor(x), w_shape, torch.tensor(g),
                                                        **kwargs)
    e_w = getattr(ember.nn.grad, f"conv{dims}d_weight")(ember.tensor(x), w_shape, ember.tensor(g),
                                                        **kwargs)
    np.testing.assert_allclose(e_w.numpy(), t_w.numpy(), rtol=1e-10, atol=1e-12)
    assert not e_in.requires_grad and not e_w.requires_grad


def test_conv_input_gradient_is_differentiable_as_torch():
    rng = np.random.default_rng(7)
    w, g = rng.standard_normal((3, 2, 3, 3)), rng.standard_normal((1, 3, 3, 3))
    grads = []
    for lib in (torch, ember):
        tw = lib.tensor(w, requires_grad=True)
        out = lib.nn.grad.conv2d_input((1, 2, 5, 5), tw, lib.tensor(g))
        out.pow(2).sum().backward()
        grads.append(tw.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-10)


def test_native_channel_shuffle_matches_torch():
    x = np.random.default_rng(0).standard_normal((2, 6, 3, 2))
    np.testing.assert_array_equal(F.native_channel_shuffle(ember.tensor(x), 3).numpy(),
                                  TF.native_channel_shuffle(torch.tensor(x), 3).numpy())
    with pytest.raises(RuntimeError):
        TF.native_channel_shuffle(torch.tensor(x), 4)
    with pytest.raises(RuntimeError):
        F.native_channel_shuffle(ember.tensor(x), 4)


@pytest.mark.parametrize("shape,kernel,out_channels,pad", [((7, 2, 3), 3, 4, 1), ((5, 1, 2), 1, 3, 0),
                                                           ((6, 3, 4), 2, 2, 2)])
def test_conv_tbc_matches_torch(shape, kernel, out_channels, pad):
    rng = np.random.default_rng(9)
    x = rng.standard_normal(shape)
    w = rng.standard_normal((kernel, shape[2], out_channels))
    b = rng.standard_normal(out_channels)
    tins = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
    eins = [ember.tensor(a, requires_grad=True) for a in (x, w, b)]
    tout, eout = TF.conv_tbc(*tins, pad), F.conv_tbc(*eins, pad)
    np.testing.assert_allclose(eout.detach().numpy(), tout.detach().numpy(), rtol=1e-10, atol=1e-12)
    g = rng.standard_normal(tuple(tout.shape))
    tout.backward(torch.tensor(g))
    eout.backward(ember.tensor(g))
    for e, t in zip(eins, tins):
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_conv_tbc_errors_match_torch():
    x, w, b = np.zeros((5, 2, 3)), np.zeros((3, 3, 4)), np.zeros(4)
    for args in [(np.zeros((5, 2)), w, b), (x, np.zeros((3, 3)), b), (x, w, np.zeros((4, 1))),
                 (x, np.zeros((3, 2, 4)), b), (x, w, np.zeros(5))]:
        with pytest.raises(RuntimeError) as t_err:
            TF.conv_tbc(*[torch.tensor(a) for a in args])
        with pytest.raises(RuntimeError) as e_err:
            F.conv_tbc(*[ember.tensor(a) for a in args])
        assert str(e_err.value) == str(t_err.value)


def test_grid_sample_mode_tables_and_assert_int_or_pair_match_torch():
    assert F.GRID_SAMPLE_INTERPOLATION_MODES == TF.GRID_SAMPLE_INTERPOLATION_MODES
    assert F.GRID_SAMPLE_PADDING_MODES == TF.GRID_SAMPLE_PADDING_MODES
    for arg in (3, (1, 2), [4, 5]):
        assert F.assert_int_or_pair(arg, "k", "{} bad") is None
        TF.assert_int_or_pair(arg, "k", "{} bad")
    for arg in ((1, 2, 3), [1]):
        with pytest.raises(AssertionError, match="k bad"):
            TF.assert_int_or_pair(arg, "k", "{} bad")
        with pytest.raises(AssertionError, match="k bad"):
            F.assert_int_or_pair(arg, "k", "{} bad")
