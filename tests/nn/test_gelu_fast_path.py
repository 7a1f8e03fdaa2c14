"""GELU, Hardswish and Hardsigmoid as single nodes: the array backward pinned to the ember-op
backward used under ``create_graph=True`` and to torch (values, gradients, node names,
special values, double backward)."""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
import ember.nn.functional as F

CASES = [("gelu", {}, "GeluBackward0"), ("gelu", {"approximate": "tanh"}, "GeluBackward0"),
         ("hardswish", {}, "HardswishBackward0"), ("hardsigmoid", {}, "HardsigmoidBackward0")]
# float64 at the op table's rtol: torch's float64 backward kernels of gelu(tanh) and hardsigmoid
# use float32 constants (0.044715f, 1/6f), 3e-8 relative away from the exact formulas
TOL = {"float32": dict(rtol=2e-6, atol=2e-6), "float64": dict(rtol=1e-7, atol=1e-14)}


def _inputs(dtype):
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.standard_normal(40) * 3, [-3.0, 3.0, 0.0, -0.0, -6.0, 6.0, -10.0,
                                                       2.9999, -2.9999, 40.0, -40.0]])
    return x.astype(dtype)


def _grad(lib, name, kwargs, x, g, create_graph=False):
    t = lib.tensor(x, requires_grad=True)
    out = getattr(lib.nn.functional, name)(t, **kwargs)
    (gx,) = (ember if lib is ember else torch).autograd.grad(out, t, lib.tensor(g),
                                                               create_graph=create_graph)
    return out, gx


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name, kwargs, node", CASES)
def test_matches_torch(name, kwargs, node, dtype):
    x = _inputs(dtype)
    g = np.random.default_rng(1).standard_normal(x.shape).astype(dtype)
    ye, ge = _grad(ember, name, kwargs, x, g)
    yt, gt = _grad(torch, name, kwargs, x, g)
    assert type(ye.grad_fn).__name__ == yt.grad_fn.name() == node
    assert ye.dtype == ember.float32 if dtype == "float32" else ember.float64
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), **TOL[dtype])
    np.testing.assert_allclose(ge.numpy(), gt.numpy(), **TOL[dtype])


@pytest.mark.parametrize("name, kwargs, node", CASES)
def test_array_backward_equals_the_ember_op_backward(name, kwargs, node):
    """The array formula (no graph) and the ember-op formula (create_graph) agree."""
    x = np.random.default_rng(2).standard_normal((5, 7)) * 4
    x[0, :4] = [-3.0, 3.0, 0.0, 2.5]
    g = np.random.default_rng(3).standard_normal((5, 7))
    _, fast = _grad(ember, name, kwargs, x, g)
    _, composed = _grad(ember, name, kwargs, x, g, create_graph=True)
    assert composed.requires_grad
    assert type(composed.grad_fn).__name__ != node
    np.testing.assert_allclose(fast.numpy(), composed.detach().numpy(), rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("name, kwargs, node", CASES)
def test_double_backward_matches_torch_and_gradgradcheck(name, kwargs, node):
    """(torch has no double backward for hardsigmoid; its second derivative is 0.)"""
    x = np.random.default_rng(4).standard_normal(12) * 2.5
    g = np.random.default_rng(5).standard_normal(12)
    libs = (ember,) if name == "hardsigmoid" else (ember, torch)
    results = [_second_derivative(lib, name, kwargs, x, g) for lib in libs]
    expected = results[1] if len(results) == 2 else np.zeros(12)
    np.testing.assert_allclose(results[0], expected, rtol=1e-10, atol=1e-12)
    fn = lambda t: getattr(F, name)(t, **kwargs)  # noqa: E731
    t = ember.tensor(x, requires_grad=True)
    assert ember.autograd.gradcheck(fn, (t,))
    assert ember.autograd.gradgradcheck(fn, (t,))


def _second_derivative(lib, name, kwargs, x, g):
    t = lib.tensor(x, requires_grad=True)
    _, gx = _grad_of(lib, name, kwargs, t, g)
    (ggx,) = (ember if lib is ember else torch).autograd.grad(gx.sum(), t)
    return ggx.detach().numpy()


def _grad_of(lib, name, kwargs, t, g):
    out = getattr(lib.nn.functional, name)(t, **kwargs)
    (gx,) = (ember if lib is ember else torch).autograd.grad(out, t, lib.tensor(g), create_graph=True)
    return out, gx


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name, kwargs, node", CASES)
def test_special_values_match_torch_float64(name, kwargs, node):
    x = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1e300, -1e300])
    ye, ge = _grad(ember, name, kwargs, x, np.ones_like(x))
    yt, gt = _grad(torch, name, kwargs, x, np.ones_like(x))
    np.testing.assert_array_equal(ye.detach().numpy(), yt.detach().numpy())
    np.testing.assert_allclose(ge.numpy(), gt.numpy(), rtol=1e-7)


@pytest.mark.parametrize("name, kernel", [("gelu", "GeluKernelImpl"), ("hardswish", "hardswish_cpu"),
                                          ("hardsigmoid", "hardsigmoid_cpu")])
def test_integer_inputs_raise_like_torch(name, kernel):
    with pytest.raises(NotImplementedError) as theirs:
        getattr(TF, name)(torch.tensor([1, 2]))
    with pytest.raises(NotImplementedError) as ours:
        getattr(F, name)(ember.tensor([1, 2]))
    assert str(ours.value) == str(theirs.value)
    assert kernel in str(ours.value)


@pytest.mark.parametrize("name", ["hardswish", "hardsigmoid"])
def test_inplace_variants_record_one_node(name):
    x = np.linspace(-4, 4, 9)
    t = ember.tensor(x, requires_grad=True)
    y = t * 1.0
    getattr(F, name)(y, inplace=True)
    y.sum().backward()
    tt = torch.tensor(x, requires_grad=True)
    yt = tt * 1.0
    getattr(TF, name)(yt, inplace=True)
    yt.sum().backward()
    assert type(y.grad_fn).__name__ == yt.grad_fn.name()
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-15)
    np.testing.assert_allclose(t.grad.numpy(), tt.grad.numpy(), rtol=1e-7)


def test_gelu_rejects_an_unknown_approximation():
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh."):
        F.gelu(ember.ones(2), approximate="fast")
