"""Smaller names of torch.autograd, torch.utils.hooks, torch.nn and torch.nn.utils that
ordinary programs use (Variable, set_multithreading_enabled, unserializable_hook,
warn_if_has_hooks, skip_init, convert_conv*_weight_memory_format, stateless.functional_call,
Container), against torch."""
import io
import warnings

import numpy as np
import pytest
import torch

import ember


def _np(t):
    return t.detach().numpy()


# -- autograd.Variable ---------------------------------------------------------------------------

@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("source", ["leaf", "leaf_requiring_grad", "computed"])
def test_variable_as_torch(source, requires_grad):
    results = []
    for lib in (torch, ember):
        base = lib.tensor([1.0, -2.0, 3.0], requires_grad=source != "leaf")
        data = base * 2 if source == "computed" else base
        v = lib.autograd.Variable(data, requires_grad=requires_grad)
        assert isinstance(v, lib.autograd.Variable) and isinstance(data, lib.autograd.Variable)
        assert type(v) is lib.Tensor and v is not data
        with lib.no_grad():
            v.mul_(1)  # shares memory with data
            data.add_(1)
        results.append((v.requires_grad, v.is_leaf, v.grad_fn is None, _np(v).tolist()))
    assert results[0] == results[1]


def test_variable_errors_and_defaults_as_torch():
    for lib in (torch, ember):
        assert tuple(lib.autograd.Variable().shape) == (0,)
        with pytest.raises(TypeError, match="Variable data has to be a tensor, but got list"):
            lib.autograd.Variable([1, 2])
        with pytest.raises(RuntimeError, match="Only Tensors of floating point"):
            lib.autograd.Variable(lib.tensor([1, 2]), requires_grad=True)
        with pytest.warns(UserWarning, match="volatile was removed"):
            lib.autograd.Variable(lib.ones(1), volatile=True)
        with pytest.raises(TypeError, match="_grad_fn has to be a Function object or None"):
            lib.autograd.Variable(lib.ones(1), True, False, 3)
        with pytest.raises(RuntimeError, match=r"autograd.variable\(...\) is deprecated"):
            lib.autograd.variable(lib.ones(1))
        assert not isinstance(np.ones(1), lib.autograd.Variable)


def test_variable_trains_as_torch():
    x = np.random.default_rng(0).standard_normal((4, 3))
    grads = []
    for lib in (torch, ember):
        w = lib.autograd.Variable(lib.tensor(x), requires_grad=True)
        (w.sin() * lib.autograd.Variable(lib.tensor(x))).sum().backward()
        grads.append(_np(w.grad))
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12)


# -- autograd.set_multithreading_enabled --------------------------------------------------------

def test_set_multithreading_enabled_as_torch():
    from ember.autograd.grad_mode import is_multithreading_enabled
    states = []
    for lib, is_enabled in ((torch, torch._C._is_multithreading_enabled),
                            (ember, is_multithreading_enabled)):
        seen = [is_enabled()]
        with lib.autograd.set_multithreading_enabled(False):
            seen.append(is_enabled())
            x = lib.ones(3, requires_grad=True)
            (x * 2).sum().backward()
            seen.append(_np(x.grad).tolist())
        seen.append(is_enabled())
        lib.autograd.set_multithreading_enabled(False)
        seen.append(is_enabled())
        lib.autograd.set_multithreading_enabled(True)
        seen.append(is_enabled())
        states.append(seen)
        with pytest.raises(TypeError):
            lib.autograd.set_multithreading_enabled(1)
    assert states[0] == states[1] == [True, False, [2.0, 2.0, 2.0], True, False, True]


# -- utils.hooks ---------------------------------------------------------------------------------

def _hook_warnings(lib, marked, computed):
    t = lib.ones(2, requires_grad=True)
    if computed:
        t = t * 2

    def hook(grad):
        return grad

    t.register_hook(lib.utils.hooks.unserializable_hook(hook) if marked else hook)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lib.utils.hooks.warn_if_has_hooks(t)
        lib.save(t.detach() if computed else t, io.BytesIO())
        n_direct = len(caught)
        if not computed:
            lib.save(t, io.BytesIO())
    return n_direct, [str(w.message).replace("torch", "LIB").replace("ember", "LIB").split(" at ")[0]
                      for w in caught]


@pytest.mark.parametrize("marked", [False, True])
@pytest.mark.parametrize("computed", [False, True])
def test_hook_serialization_warnings_as_torch(marked, computed):
    assert _hook_warnings(ember, marked, computed) == _hook_warnings(torch, marked, computed)


def test_unserializable_hook_marks_the_function():
    def f(grad):
        return grad
    assert ember.utils.hooks.unserializable_hook(f) is f and f.__torch_unserializable__


# -- nn.utils.skip_init --------------------------------------------------------------------------

@pytest.mark.parametrize("cls,args,kwargs", [("Linear", (5, 3), {}), ("Conv2d", (2, 4, 3), {}),
                                             ("BatchNorm1d", (), {"num_features": 6}),
                                             ("Linear", (2, 2), {"bias": False, "device": "cpu"})])
def test_skip_init_as_torch(cls, args, kwargs):
    tm = torch.nn.utils.skip_init(getattr(torch.nn, cls), *args, **kwargs)
    em = ember.nn.utils.skip_init(getattr(ember.nn, cls), *args, **kwargs)
    assert type(em).__name__ == type(tm).__name__
    assert [(k, tuple(v.shape), str(v.dtype).split(".")[1], v.device.type)
            for k, v in em.state_dict().items()] == \
        [(k, tuple(v.shape), str(v.dtype).split(".")[1], v.device.type)
         for k, v in tm.state_dict().items()]
    assert all(isinstance(p, ember.nn.Parameter) for p in em.parameters())


def test_skip_init_errors_as_torch():
    class NoDevice(torch.nn.Module):
        def __init__(self):
            super().__init__()

    class ENoDevice(ember.nn.Module):
        def __init__(self):
            super().__init__()

    for lib, nodevice in ((torch, NoDevice), (ember, ENoDevice)):
        with pytest.raises(RuntimeError, match="Expected a Module"):
            lib.nn.utils.skip_init(int)
        with pytest.raises(RuntimeError, match="Module must support a 'device' arg"):
            lib.nn.utils.skip_init(nodevice)


# -- nn.utils.convert_conv*_weight_memory_format --------------------------------------------------

@pytest.mark.parametrize("dims", [2, 3])
def test_convert_conv_weight_memory_format_as_torch(dims):
    results = []
    for lib in (torch, ember):
        nn = lib.nn
        conv = getattr(nn, f"Conv{dims}d")
        convt = getattr(nn, f"ConvTranspose{dims}d")
        other = getattr(nn, f"Conv{5 - dims}d")  # the other rank is left alone
        model = nn.Sequential(conv(3, 4, 2), nn.Sequential(convt(4, 2, 2)), other(2, 2, 2))
        fmt = lib.channels_last if dims == 2 else lib.channels_last_3d
        convert = getattr(nn.utils, f"convert_conv{dims}d_weight_memory_format")
        before = [_np(m.weight).copy() for m in (model[0], model[1][0], model[2])]
        weights = [model[0].weight, model[1][0].weight]
        assert convert(model, fmt) is model
        assert model[0].weight is weights[0] and model[1][0].weight is weights[1]
        for m, b in zip((model[0], model[1][0], model[2]), before):
            np.testing.assert_array_equal(_np(m.weight), b)
        results.append([(m.weight.stride(), m.weight.is_contiguous())
                        for m in (model[0], model[1][0], model[2])])
    assert results[0] == results[1]


# -- nn.utils.stateless.functional_call ----------------------------------------------------------

def test_stateless_functional_call_as_torch():
    x = np.random.default_rng(1).standard_normal((2, 3))
    w = np.random.default_rng(2).standard_normal((4, 3))
    outs = []
    for lib in (torch, ember):
        model = lib.nn.Linear(3, 4)
        with pytest.warns(FutureWarning, match="stateless.functional_call` is deprecated"):
            out = lib.nn.utils.stateless.functional_call(
                model, {"weight": lib.tensor(w), "bias": lib.zeros(4, dtype=lib.float64)},
                (lib.tensor(x),))
        outs.append(_np(out))
        assert model.weight.dtype == lib.float32  # the module's own parameters are back
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-12)


# -- nn.Container -------------------------------------------------------------------------------

def test_container_as_torch():
    reprs = []
    for lib in (torch, ember):
        with pytest.warns(FutureWarning, match="`nn.Container` is deprecated"):
            c = lib.nn.Container(a=lib.nn.Linear(2, 3), b=lib.nn.ReLU())
        assert list(dict(c.named_children())) == ["a", "b"]
        assert list(c.state_dict()) == ["a.weight", "a.bias"]
        reprs.append(repr(c))
    assert reprs[0] == reprs[1]
