"""nn.utils.parametrize, parametrizations (weight_norm, spectral_norm), the deprecated
hook-based weight_norm/spectral_norm and the conv/linear + batch-norm fusion, against torch."""
import copy
import pickle
import warnings

import numpy as np
import pytest
import torch
import torch.nn as tnn
import torch.nn.utils.parametrize as tP

import ember
import ember.nn as nn
import ember.nn.utils.parametrize as P
from ember.nn.utils import parametrizations

try:
    from ._oracle_layers import assert_close, to_ember
except ImportError:
    from _oracle_layers import assert_close, to_ember

ATOL = 1e-10


class Symmetric(nn.Module):
    def forward(self, x):
        return x.triu() + x.triu(1).transpose(-1, -2)

    def right_inverse(self, a):
        return a.triu()


class TorchSymmetric(tnn.Module):
    def forward(self, x):
        return x.triu() + x.triu(1).transpose(-1, -2)

    def right_inverse(self, a):
        return a.triu()


class Double(nn.Module):
    def forward(self, x):
        return x * 2


class Split(nn.Module):
    """A parametrization in terms of two tensors (right_inverse returns a pair)."""

    def forward(self, a, b):
        return a + b

    def right_inverse(self, w):
        return w * 0.25, w * 0.75


def _load(tm, em):
    tm, em = tm.double(), em.double()
    state = tm.state_dict()
    assert list(em.state_dict().keys()) == list(state.keys())
    em.load_state_dict({k: to_ember(v) for k, v in state.items()})
    return tm, em


def _step_and_compare(tm, em, input_shape, modes=("train", "eval"), steps=2, seed=0):
    rng = np.random.default_rng(seed)
    for mode in modes:
        tm.train(mode == "train")
        em.train(mode == "train")
        for _ in range(steps):
            tm.zero_grad()
            em.zero_grad()
            x = rng.standard_normal(input_shape)
            xt, xe = torch.tensor(x, requires_grad=True), ember.tensor(x, requires_grad=True)
            yt, ye = tm(xt), em(xe)
            assert_close(ye, yt, ATOL, what=f"{mode} output")
            g = rng.standard_normal(tuple(yt.shape))
            yt.backward(torch.tensor(g))
            ye.backward(ember.tensor(g))
            assert_close(xe.grad, xt.grad, ATOL, what=f"{mode} input grad")
            for (name, pe), (_, pt) in zip(em.named_parameters(), tm.named_parameters()):
                assert_close(pe.grad, pt.grad, ATOL, what=f"{mode} grad of {name}")
            for (name, be), (_, bt) in zip(em.named_buffers(), tm.named_buffers()):
                assert_close(be, bt, ATOL, what=f"{mode} buffer {name}")


# -- parametrize ---------------------------------------------------------------------------

def test_register_parametrization_matches_torch():
    torch.manual_seed(0)
    tm, em = tnn.Linear(4, 4), nn.Linear(4, 4)
    tm, em = _load(tm, em)
    tP.register_parametrization(tm, "weight", TorchSymmetric())
    P.register_parametrization(em, "weight", Symmetric())
    assert type(em).__name__ == "ParametrizedLinear" and isinstance(em, nn.Linear)
    assert P.type_before_parametrizations(em) is nn.Linear
    assert list(em.state_dict()) == list(tm.state_dict()) == [
        "bias", "parametrizations.weight.original"]
    assert P.is_parametrized(em) and P.is_parametrized(em, "weight")
    assert not P.is_parametrized(em, "bias")
    w = em.weight.detach().numpy()
    np.testing.assert_allclose(w, w.T)
    assert_close(em.parametrizations.weight.original, tm.parametrizations.weight.original)
    _step_and_compare(tm, em, (3, 4))


def test_assigning_calls_right_inverse_and_chained_parametrizations():
    em = nn.Linear(3, 3).double()
    P.register_parametrization(em, "weight", Symmetric())
    target = ember.tensor(np.arange(9.0).reshape(3, 3))
    em.weight = target + target.T
    np.testing.assert_allclose(em.weight.detach().numpy(), (target + target.T).numpy())
    P.register_parametrization(em, "weight", Double())
    assert len(em.parametrizations.weight) == 2
    np.testing.assert_allclose(em.weight.detach().numpy(), 2 * (target + target.T).numpy())
    with pytest.raises(RuntimeError, match="parametrization Double does not implement "
                                           "right_inverse"):
        em.weight = target


def test_sequence_right_inverse_and_unsafe():
    em = nn.Linear(3, 2).double()
    w0 = em.weight.detach().numpy().copy()
    P.register_parametrization(em, "weight", Split())
    names = [n for n, _ in em.named_parameters()]
    assert names == ["bias", "parametrizations.weight.original0",
                     "parametrizations.weight.original1"]
    np.testing.assert_allclose(em.weight.detach().numpy(), w0)
    with pytest.raises(ValueError, match="may not change the shape of the tensor"):
        P.register_parametrization(nn.Linear(3, 2), "weight", _Transpose())
    m = P.register_parametrization(nn.Linear(3, 2), "weight", _Transpose(), unsafe=True)
    assert tuple(m.weight.shape) == (3, 2)
    with pytest.raises(ValueError, match="Cannot leave unparametrized"):
        P.remove_parametrizations(em, "weight", leave_parametrized=False)
    P.remove_parametrizations(em, "weight")
    assert isinstance(em.weight, nn.Parameter) and not P.is_parametrized(em)
    np.testing.assert_allclose(em.weight.detach().numpy(), w0)


class _Transpose(nn.Module):
    def forward(self, x):
        return x.T


@pytest.mark.parametrize("leave_parametrized", [True, False])
def test_remove_parametrizations_matches_torch(leave_parametrized):
    torch.manual_seed(1)
    tm, em = _load(tnn.Linear(4, 4), nn.Linear(4, 4))
    tP.register_parametrization(tm, "weight", TorchSymmetric())
    P.register_parametrization(em, "weight", Symmetric())
    tP.remove_parametrizations(tm, "weight", leave_parametrized=leave_parametrized)
    P.remove_parametrizations(em, "weight", leave_parametrized=leave_parametrized)
    assert type(em) is nn.Linear and not hasattr(em, "parametrizations")
    assert list(em.state_dict()) == list(tm.state_dict()) == ["bias", "weight"]
    assert isinstance(em.weight, nn.Parameter)
    assert_close(em.weight, tm.weight)
    with pytest.raises(ValueError, match="does not have a parametrization on weight"):
        P.remove_parametrizations(em, "weight")


def test_cached_computes_once_and_errors():
    calls = []

    class Counting(nn.Module):
        def forward(self, x):
            calls.append(1)
            return x * 1

    em = nn.Linear(2, 2)
    P.register_parametrization(em, "weight", Counting())
    calls.clear()
    with P.cached():
        a, b = em.weight, em.weight
        assert a is b
    assert len(calls) == 1
    em.weight
    assert len(calls) == 2
    with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a "
                                         "parametrized element with name 'nope'"):
        P.register_parametrization(em, "nope", Counting())
    with pytest.raises(RuntimeError, match="Serialization of parametrized modules is only "
                                           "supported through state_dict"):
        pickle.dumps(em)
    clone = copy.deepcopy(em)
    assert P.is_parametrized(clone, "weight") and clone.weight is not em.weight


# -- weight_norm / spectral_norm -----------------------------------------------------------

@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_parametrization_matches_torch(dim):
    torch.manual_seed(2)
    tm, em = _load(tnn.Conv1d(3, 4, 2), nn.Conv1d(3, 4, 2))
    tnn.utils.parametrizations.weight_norm(tm, dim=dim)
    parametrizations.weight_norm(em, dim=dim)
    tm, em = _load(tm, em)
    assert list(em.state_dict()) == ["bias", "parametrizations.weight.original0",
                                     "parametrizations.weight.original1"]
    _step_and_compare(tm, em, (2, 3, 5))


@pytest.mark.parametrize("module,shape,kwargs", [
    ("Linear", (3, 4), {}),
    ("Linear", (3, 4), {"n_power_iterations": 3, "eps": 1e-6}),
    ("Conv2d", (2, 2, 5, 5), {"dim": 1}),
    ("ConvTranspose2d", (2, 2, 5, 5), {}),
])
def test_spectral_norm_parametrization_matches_torch(module, shape, kwargs):
    args = (4, 5) if module == "Linear" else (2, 3, 3)
    torch.manual_seed(3)
    tm = tnn.utils.parametrizations.spectral_norm(getattr(tnn, module)(*args).double(),
                                                  **kwargs)
    em = parametrizations.spectral_norm(getattr(nn, module)(*args).double(), **kwargs)
    assert list(em.state_dict()) == ["bias", "parametrizations.weight.original",
                                     "parametrizations.weight.0._u",
                                     "parametrizations.weight.0._v"]
    tm, em = _load(tm, em)  # copies u and v too
    _step_and_compare(tm, em, shape)


def test_spectral_norm_normalizes_the_top_singular_value():
    ember.manual_seed(0)
    em = parametrizations.spectral_norm(nn.Linear(6, 5).double(), n_power_iterations=5)
    for _ in range(40):
        em(ember.randn(1, 6, dtype=ember.float64))
    sigma = np.linalg.svd(em.weight.detach().numpy(), compute_uv=False)[0]
    assert abs(sigma - 1.0) < 1e-6
    with pytest.raises(ValueError, match="Expected n_power_iterations to be positive"):
        parametrizations.spectral_norm(nn.Linear(2, 2), n_power_iterations=0)


def test_deprecated_weight_norm_matches_torch():
    torch.manual_seed(4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm = tnn.utils.weight_norm(tnn.Linear(3, 4).double())
    with pytest.warns(FutureWarning, match="weight_norm` is deprecated"):
        em = nn.utils.weight_norm(nn.Linear(3, 4).double())
    assert list(em.state_dict()) == ["bias", "weight_g", "weight_v"]
    tm, em = _load(tm, em)
    _step_and_compare(tm, em, (2, 3))
    tnn.utils.remove_weight_norm(tm)
    nn.utils.remove_weight_norm(em)
    assert list(em.state_dict()) == list(tm.state_dict())
    assert_close(em.weight, tm.weight)


def test_deprecated_spectral_norm_matches_torch():
    torch.manual_seed(5)
    tm = tnn.utils.spectral_norm(tnn.Linear(3, 4).double(), n_power_iterations=2)
    em = nn.utils.spectral_norm(nn.Linear(3, 4).double(), n_power_iterations=2)
    assert list(em.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    tm, em = _load(tm, em)
    _step_and_compare(tm, em, (2, 3))
    tnn.utils.remove_spectral_norm(tm)
    nn.utils.remove_spectral_norm(em)
    assert list(em.state_dict()) == list(tm.state_dict())
    assert_close(em.weight, tm.weight)


def test_weight_norm_loads_old_state_dict_keys():
    old = nn.utils.parametrizations.weight_norm(nn.Linear(3, 2))
    g = ember.ones(2, 1)
    v = ember.ones(2, 3)
    old.load_state_dict({"bias": ember.zeros(2), "weight_g": g, "weight_v": v})
    np.testing.assert_allclose(old.weight.detach().numpy(), np.full((2, 3), 1 / np.sqrt(3)),
                               rtol=1e-6)


# -- fusion -----------------------------------------------------------------------------------

def _with_stats(tbn):
    rng = np.random.default_rng(6)
    n = tbn.num_features
    with torch.no_grad():
        tbn.running_mean.copy_(torch.tensor(rng.standard_normal(n)))
        tbn.running_var.copy_(torch.tensor(rng.random(n) + 0.5))
        tbn.weight.copy_(torch.tensor(rng.standard_normal(n)))
        tbn.bias.copy_(torch.tensor(rng.standard_normal(n)))
    return tbn


@pytest.mark.parametrize("bias", [True, False])
def test_fuse_conv_bn_eval_matches_torch(bias):
    torch.manual_seed(7)
    tc, ec = _load(tnn.Conv2d(2, 3, 3, bias=bias), nn.Conv2d(2, 3, 3, bias=bias))
    tb, eb = _load(_with_stats(tnn.BatchNorm2d(3)), nn.BatchNorm2d(3))
    for m in (tc, ec, tb, eb):
        m.eval()
    tf = tnn.utils.fuse_conv_bn_eval(tc, tb)
    ef = nn.utils.fuse_conv_bn_eval(ec, eb)
    assert list(ef.state_dict()) == list(tf.state_dict())
    for (name, pe), (_, pt) in zip(ef.named_parameters(), tf.named_parameters()):
        assert isinstance(pe, nn.Parameter) and pe.grad_fn is None
        assert_close(pe, pt, ATOL, what=name)
    x = ember.randn(2, 2, 5, 5, dtype=ember.float64)
    assert_close(ef(x), eb(ec(x)), 1e-10, what="fused output")
    ct, ce = _load(tnn.ConvTranspose2d(3, 2, 2), nn.ConvTranspose2d(3, 2, 2))
    tb2, eb2 = _load(_with_stats(tnn.BatchNorm2d(2)), nn.BatchNorm2d(2))
    for m in (ct, ce, tb2, eb2):
        m.eval()
    tf = tnn.utils.fuse_conv_bn_eval(ct, tb2, transpose=True)
    ef = nn.utils.fuse_conv_bn_eval(ce, eb2, transpose=True)
    assert_close(ef.weight, tf.weight, ATOL)
    assert_close(ef.bias, tf.bias, ATOL)
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        nn.utils.fuse_conv_bn_eval(nn.Conv2d(1, 1, 1), nn.BatchNorm2d(1))


def test_fuse_linear_bn_eval_matches_torch():
    torch.manual_seed(8)
    tl, el = _load(tnn.Linear(3, 4), nn.Linear(3, 4))
    tb, eb = _load(_with_stats(tnn.BatchNorm1d(4)), nn.BatchNorm1d(4))
    for m in (tl, el, tb, eb):
        m.eval()
    tf = tnn.utils.fuse_linear_bn_eval(tl, tb)
    ef = nn.utils.fuse_linear_bn_eval(el, eb)
    assert_close(ef.weight, tf.weight, ATOL)
    assert_close(ef.bias, tf.bias, ATOL)
    w, b = nn.utils.fuse_linear_bn_weights(el.weight, None, eb.running_mean, eb.running_var,
                                           eb.eps, eb.weight, eb.bias)
    tw, tbias = tnn.utils.fuse_linear_bn_weights(tl.weight, None, tb.running_mean,
                                                 tb.running_var, tb.eps, tb.weight, tb.bias)
    assert_close(b, tbias, ATOL)
    assert b.requires_grad == tbias.requires_grad
