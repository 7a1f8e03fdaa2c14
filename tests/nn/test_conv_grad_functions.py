"""ember.nn.grad (convolution gradients) and F.native_channel_shuffle against torch."""
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
