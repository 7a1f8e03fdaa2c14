"""nn.init: exact gains and fans against torch, distributions checked statistically."""
import math
import warnings

import numpy as np
import pytest
import torch
import torch.nn.init as tinit

import ember
import ember.nn.init as init


@pytest.mark.parametrize("nonlinearity,param", [
    ("linear", None), ("conv1d", None), ("conv2d", None), ("conv3d", None),
    ("conv_transpose1d", None), ("conv_transpose2d", None), ("conv_transpose3d", None),
    ("sigmoid", None), ("tanh", None), ("relu", None), ("leaky_relu", None),
    ("leaky_relu", 0.2), ("leaky_relu", 1), ("selu", None),
])
def test_calculate_gain_matches_torch(nonlinearity, param):
    assert init.calculate_gain(nonlinearity, param) == tinit.calculate_gain(nonlinearity, param)


def test_calculate_gain_errors():
    for lib in (init, tinit):
        with pytest.raises(ValueError, match="Unsupported nonlinearity foo"):
            lib.calculate_gain("foo")
        with pytest.raises(ValueError, match="negative_slope x not a valid number"):
            lib.calculate_gain("leaky_relu", "x")


@pytest.mark.parametrize("shape", [(3, 4), (5, 2, 3), (4, 3, 2, 2), (2, 3, 1, 2, 2)])
def test_fans_match_torch(shape):
    assert init._calculate_fan_in_and_fan_out(ember.empty(*shape)) == \
        tinit._calculate_fan_in_and_fan_out(torch.empty(*shape))
    for mode in ("fan_in", "fan_out"):
        assert init._calculate_correct_fan(ember.empty(*shape), mode) == \
            tinit._calculate_correct_fan(torch.empty(*shape), mode)


def test_fan_errors():
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init.xavier_uniform_(ember.empty(3))
    with pytest.raises(ValueError, match=r"Mode fan_avg not supported, please use one of \['fan_in', 'fan_out'\]"):
        init.kaiming_uniform_(ember.empty(3, 3), mode="fan_avg")


def _sample(fn, shape=(300, 200), **kwargs):
    t = ember.empty(*shape, requires_grad=True)
    out = fn(t, **kwargs)
    assert out is t and t.requires_grad and t.grad_fn is None  # filled under no_grad
    return t.detach().numpy().astype(np.float64)


def test_uniform_and_normal_moments():
    x = _sample(init.uniform_, a=-2.0, b=4.0)
    assert x.min() >= -2 and x.max() < 4 and abs(x.mean() - 1) < 0.03
    assert abs(x.std() - 6 / math.sqrt(12)) < 0.02
    x = _sample(init.normal_, mean=3.0, std=0.5)
    assert abs(x.mean() - 3) < 0.01 and abs(x.std() - 0.5) < 0.01


def test_trunc_normal_bounds_and_moments():
    x = _sample(init.trunc_normal_, std=1.0, a=-1.0, b=2.0)
    assert x.min() >= -1 and x.max() <= 2
    ref = torch.nn.init.trunc_normal_(torch.empty(300, 200, dtype=torch.float64), std=1.0, a=-1.0, b=2.0)
    assert abs(x.mean() - ref.mean().item()) < 0.02 and abs(x.std() - ref.std().item()) < 0.02


def test_constant_ones_zeros_eye_dirac():
    assert init.constant_(ember.empty(2, 2), 0.5).tolist() == [[0.5, 0.5], [0.5, 0.5]]
    assert init.ones_(ember.empty(2)).tolist() == [1.0, 1.0]
    assert init.zeros_(ember.empty(2)).tolist() == [0.0, 0.0]
    assert init.eye_(ember.empty(2, 3)).tolist() == tinit.eye_(torch.empty(2, 3)).tolist()
    for shape, groups in (((4, 2, 3), 1), ((6, 3, 3, 3), 2), ((4, 4, 3, 1, 3), 1), ((2, 5, 3, 3), 1)):
        assert init.dirac_(ember.empty(*shape), groups).tolist() == \
            tinit.dirac_(torch.empty(*shape), groups).tolist()
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.eye_(ember.empty(3))


@pytest.mark.parametrize("fn,kwargs,expected_std", [
    ("xavier_uniform_", {}, math.sqrt(2 / 500)),
    ("xavier_normal_", {"gain": 2.0}, 2 * math.sqrt(2 / 500)),
    ("kaiming_uniform_", {}, math.sqrt(2) / math.sqrt(200)),
    ("kaiming_uniform_", {"a": math.sqrt(5)}, 1 / math.sqrt(3) / math.sqrt(200)),
    ("kaiming_normal_", {"mode": "fan_out", "nonlinearity": "relu"}, math.sqrt(2) / math.sqrt(300)),
    ("kaiming_normal_", {"nonlinearity": "tanh"}, 5 / 3 / math.sqrt(200)),
])
def test_scaled_initializers_have_torch_std(fn, kwargs, expected_std):
    x = _sample(getattr(init, fn), **kwargs)
    ref = getattr(tinit, fn)(torch.empty(300, 200, dtype=torch.float64), **kwargs).numpy()
    assert abs(x.std() - expected_std) < 0.01 * expected_std * 3
    assert abs(ref.std() - expected_std) < 0.01 * expected_std * 3
    if "uniform" in fn:
        bound = math.sqrt(3) * expected_std
        assert np.abs(x).max() <= bound * (1 + 1e-6)


def test_zero_element_kaiming_warns():
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        init.kaiming_uniform_(ember.empty(0, 3))


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 2, 3)])
def test_orthogonal(shape):
    t = init.orthogonal_(ember.empty(*shape, dtype=ember.float64), gain=2.0)
    flat = t.numpy().reshape(shape[0], -1)
    gram = flat @ flat.T if shape[0] <= flat.shape[1] else flat.T @ flat
    np.testing.assert_allclose(gram, 4 * np.eye(gram.shape[0]), atol=1e-10)


def test_sparse():
    t = init.sparse_(ember.empty(10, 40), sparsity=0.3, std=0.5)
    x = t.numpy()
    assert ((x == 0).sum(0) >= 3).all()
    assert abs(x[x != 0].std() - 0.5) < 0.1


def test_generator_makes_draws_reproducible():
    for fn in (init.uniform_, init.normal_, init.xavier_uniform_, init.kaiming_normal_,
               init.trunc_normal_, init.orthogonal_):
        a = fn(ember.empty(4, 5), generator=ember.Generator().manual_seed(3)).tolist()
        b = fn(ember.empty(4, 5), generator=ember.Generator().manual_seed(3)).tolist()
        assert a == b, fn.__name__


def test_deprecated_aliases_warn():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        init.uniform(ember.empty(2))
    assert any("deprecated" in str(w.message) for w in caught)
