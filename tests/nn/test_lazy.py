"""Lazy modules (shape inference on the first forward) and uninitialized parameters and
buffers, against torch. Random initial values cannot match across libraries, so values are
compared after copying torch's materialized parameters into ember."""
import copy
import pickle

import numpy as np
import pytest
import torch
import torch.nn as tnn
from torch.nn.parameter import UninitializedBuffer as TUninitializedBuffer
from torch.nn.parameter import UninitializedParameter as TUninitializedParameter
from torch.nn.parameter import is_lazy as t_is_lazy

import ember
import ember.nn as nn
from ember.nn.modules.lazy import LazyModuleMixin
from ember.nn.parameter import UninitializedBuffer, UninitializedParameter, is_lazy

# (name, constructor args, constructor kwargs, input shape)
LAZY = [
    ("LazyLinear", (4,), {}, (3, 5)),
    ("LazyLinear", (4,), {"bias": False}, (2, 3, 5)),
    ("LazyLinear", (4,), {}, (5,)),
    ("LazyConv1d", (6, 3), {}, (2, 4, 9)),
    ("LazyConv1d", (6, 3), {"groups": 2, "padding": "same"}, (4, 9)),
    ("LazyConv2d", (6, 3), {"stride": 2, "padding": 1, "bias": False}, (2, 3, 7, 8)),
    ("LazyConv2d", (4, (2, 3)), {"groups": 2, "dilation": 2}, (1, 6, 9, 9)),
    ("LazyConv3d", (2, 2), {}, (2, 3, 4, 5, 4)),
    ("LazyConvTranspose1d", (3, 3), {"stride": 2, "output_padding": 1}, (2, 4, 6)),
    ("LazyConvTranspose2d", (4, 2), {"groups": 2}, (2, 6, 5, 5)),
    ("LazyConvTranspose2d", (3, 3), {"bias": False, "padding": 1}, (4, 5, 5)),
    ("LazyConvTranspose3d", (2, 2), {"stride": 2}, (1, 3, 3, 4, 3)),
    ("LazyBatchNorm1d", (), {}, (6, 5)),
    ("LazyBatchNorm1d", (), {"affine": False}, (6, 5, 4)),
    ("LazyBatchNorm2d", (), {"momentum": None}, (4, 3, 5, 5)),
    ("LazyBatchNorm2d", (), {"track_running_stats": False}, (4, 3, 5, 5)),
    ("LazyBatchNorm3d", (), {"eps": 1e-3}, (2, 3, 3, 4, 3)),
    ("LazyInstanceNorm1d", (), {}, (2, 4, 7)),
    ("LazyInstanceNorm1d", (), {"affine": False, "track_running_stats": False}, (2, 4, 7)),
    ("LazyInstanceNorm2d", (), {}, (2, 3, 5, 6)),
    ("LazyInstanceNorm3d", (), {"affine": False}, (2, 3, 4, 3, 5)),
]
IDS = [f"{name}-{i}" for i, (name, *_) in enumerate(LAZY)]
INFERRED = ("in_features", "in_channels", "num_features")


def _pair(name, args, kwargs):
    kwargs = dict(kwargs, dtype=torch.float64)
    tm = getattr(tnn, name)(*args, **kwargs)
    em = getattr(nn, name)(*args, **dict(kwargs, dtype=ember.float64))
    return em, tm


def _state_to_ember(state):
    return {k: ember.tensor(v.detach().numpy()) for k, v in state.items()}


def _assert_close(e, t, what=""):
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-7, atol=1e-9,
                               err_msg=what)


def _describe_state(state, lazy_check):
    return [(k, lazy_check(v), type(v).__name__ if lazy_check(v) else tuple(v.shape))
            for k, v in state.items()]


def _forward_backward(em, tm, shape, rng):
    x = rng.standard_normal(shape)
    tx = torch.tensor(x, requires_grad=True)
    ex = ember.tensor(x, requires_grad=True)
    tout, eout = tm(tx), em(ex)
    _assert_close(eout, tout, "output")
    g = rng.standard_normal(tuple(tout.shape))
    tout.backward(torch.tensor(g))
    eout.backward(ember.tensor(g))
    _assert_close(ex.grad, tx.grad, "input grad")
    for (name, ep), (_, tp) in zip(em.named_parameters(), tm.named_parameters()):
        _assert_close(ep.grad, tp.grad, f"grad of {name}")


@pytest.mark.parametrize("name,args,kwargs,shape", LAZY, ids=IDS)
def test_uninitialized_state_matches_torch(name, args, kwargs, shape):
    em, tm = _pair(name, args, kwargs)
    assert isinstance(em, LazyModuleMixin)
    assert em.has_uninitialized_params() == tm.has_uninitialized_params()
    assert repr(em) == repr(tm).replace("torch", "ember")
    assert (_describe_state(em.state_dict(), is_lazy)
            == _describe_state(tm.state_dict(), t_is_lazy))
    assert [(n, type(p).__name__) for n, p in em.named_parameters()] == \
        [(n, type(p).__name__) for n, p in tm.named_parameters()]
    assert [(n, type(b).__name__.replace("Tensor", "")) for n, b in em.named_buffers()] == \
        [(n, type(b).__name__.replace("Tensor", "")) for n, b in tm.named_buffers()]
    assert em.cls_to_become.__name__ == tm.cls_to_become.__name__


@pytest.mark.parametrize("name,args,kwargs,shape", LAZY, ids=IDS)
def test_first_forward_infers_shapes_and_becomes_the_layer(name, args, kwargs, shape):
    em, tm = _pair(name, args, kwargs)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape)
    tm(torch.tensor(x))
    em(ember.tensor(x))
    assert type(em).__name__ == type(tm).__name__ and type(em) is getattr(nn, type(tm).__name__)
    assert not isinstance(em, LazyModuleMixin)
    assert not hasattr(em, "_initialize_hook") and not hasattr(em, "_load_hook")
    assert not em._forward_pre_hooks and not em._load_state_dict_pre_hooks
    for attr in INFERRED:
        assert getattr(em, attr, None) == getattr(tm, attr, None), attr
    assert repr(em) == repr(tm)
    state = tm.state_dict()
    assert _describe_state(em.state_dict(), is_lazy) == _describe_state(state, t_is_lazy)
    assert all(type(p) is nn.Parameter for p in em.parameters())
    assert all(type(b) is ember.Tensor for b in em.buffers())
    assert all(p.dtype == ember.float64 for p in em.parameters())
    em.load_state_dict(_state_to_ember(state))
    _forward_backward(em, tm, shape, rng)
    for (bname, eb), (_, tb) in zip(em.named_buffers(), tm.named_buffers()):
        _assert_close(eb, tb, bname)


@pytest.mark.parametrize("name,args,kwargs,shape", LAZY, ids=IDS)
def test_loading_a_state_dict_materializes(name, args, kwargs, shape):
    em, tm = _pair(name, args, kwargs)
    rng = np.random.default_rng(1)
    tsource = getattr(tnn, name)(*args, **dict(kwargs, dtype=torch.float64))
    tsource(torch.tensor(rng.standard_normal(shape)))  # an initialized layer is the source
    tm.load_state_dict(tsource.state_dict())
    em.load_state_dict(_state_to_ember(tsource.state_dict()))
    assert not em.has_uninitialized_params() and not tm.has_uninitialized_params()
    assert isinstance(em, LazyModuleMixin)  # it stays lazy until its first forward
    assert [(k, tuple(v.shape)) for k, v in em.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in tm.state_dict().items()]
    for attr in INFERRED:  # torch leaves the inferred size 0 here, even after the forward
        assert getattr(em, attr, None) == getattr(tm, attr, None)
    x = rng.standard_normal(shape)
    try:
        tm(torch.tensor(x))
    except ValueError as t_err:  # an affine instance norm keeps num_features 0 and refuses
        with pytest.raises(ValueError) as e_err:
            em(ember.tensor(x))
        assert str(e_err.value) == str(t_err)
        return
    _forward_backward(em, tm, shape, rng)
    assert type(em).__name__ == type(tm).__name__
    for attr in INFERRED:
        assert getattr(em, attr, None) == getattr(tm, attr, None), attr


def test_loading_uninitialized_into_uninitialized_and_initialized():
    em = nn.LazyLinear(3)
    em.load_state_dict(nn.LazyLinear(3).state_dict())
    tm = tnn.LazyLinear(3)
    tm.load_state_dict(tnn.LazyLinear(3).state_dict())
    assert is_lazy(em.weight) and t_is_lazy(tm.weight)
    with pytest.raises(RuntimeError) as t_err:
        tnn.Linear(2, 3).load_state_dict(tnn.LazyLinear(3).state_dict())
    with pytest.raises(RuntimeError) as e_err:
        nn.Linear(2, 3).load_state_dict(nn.LazyLinear(3).state_dict())
    assert "Can't access the shape of an uninitialized parameter" in str(t_err.value)
    assert "Can't access the shape of an uninitialized parameter" in str(e_err.value)


@pytest.mark.parametrize("make,bad_shape", [
    (lambda lib: lib.nn.LazyConv2d(4, 3, groups=2), (1, 3, 5, 5)),
    (lambda lib: lib.nn.LazyConvTranspose1d(4, 3, groups=2), (1, 3, 5)),
    (lambda lib: lib.nn.LazyConv2d(4, 3), (1, 1, 3, 5, 5)),
    (lambda lib: lib.nn.LazyConv1d(4, 3), (5,)),
    (lambda lib: lib.nn.LazyConvTranspose3d(4, 3), (2, 2)),
])
def test_bad_first_input_raises_as_torch(make, bad_shape):
    with pytest.raises(Exception) as t_err:
        make(torch)(torch.zeros(bad_shape))
    em = make(ember)
    with pytest.raises(type(t_err.value)) as e_err:
        em(ember.zeros(bad_shape))
    assert str(e_err.value).replace("ember", "torch") == str(t_err.value)
    assert em.has_uninitialized_params()


def test_uninitialized_parameter_refuses_ops_as_torch():
    for lib, mod in ((torch, tnn), (ember, nn)):
        w = mod.LazyLinear(3).weight
        with pytest.raises(RuntimeError, match="Can't access the shape"):
            w.shape
        with pytest.raises(ValueError, match="Attempted to use an uninitialized parameter"):
            w + 1
        with pytest.raises(ValueError, match="Attempted to use an uninitialized parameter"):
            w.numel()
        with pytest.raises(ValueError, match="Attempted to use an uninitialized parameter"):
            lib.matmul(w, w)
        with pytest.raises(RuntimeError, match="Can't share memory"):
            w.share_memory_()
        assert tuple(w.size()) == (0,) and w.is_leaf and w.requires_grad
        assert w.dtype == lib.float32 and w.is_floating_point() and not w.is_complex()
        assert type(w.data).__name__ == "Tensor" and tuple(w.data.shape) == (0,)
        assert type(w.double()).__name__ == "Tensor" and w.double().dtype == lib.float64


def test_optimizer_over_uninitialized_parameters_as_torch():
    results = []
    for lib, mod in ((torch, tnn), (ember, nn)):
        m = mod.LazyLinear(3)
        opt = lib.optim.SGD(m.parameters(), lr=0.1)
        opt.step()  # no gradients yet: nothing to do
        m(lib.ones(2, 4))
        results.append([tuple(p.shape) for p in opt.param_groups[0]["params"]])
        assert opt.param_groups[0]["params"][0] is m.weight
    assert results[0] == results[1] == [(3, 4), (3,)]


def test_initialize_parameters_is_abstract():
    class Bare(LazyModuleMixin, nn.Module):
        pass

    class TBare(tnn.modules.lazy.LazyModuleMixin, tnn.Module):
        pass

    with pytest.raises(NotImplementedError) as t_err:
        TBare()(torch.zeros(1))
    with pytest.raises(NotImplementedError) as e_err:
        Bare()(ember.zeros(1))
    assert str(e_err.value) == str(t_err.value).replace("TBare", "Bare")


def test_custom_lazy_module_must_initialize_everything():
    class Half(LazyModuleMixin, nn.Module):
        def __init__(self):
            super().__init__()
            self.a = UninitializedParameter()
            self.b = UninitializedParameter()

        def initialize_parameters(self, x):
            self.a.materialize(x.shape)

    class THalf(tnn.modules.lazy.LazyModuleMixin, tnn.Module):
        def __init__(self):
            super().__init__()
            self.a = TUninitializedParameter()
            self.b = TUninitializedParameter()

        def initialize_parameters(self, x):
            self.a.materialize(x.shape)

    with pytest.raises(RuntimeError) as t_err:
        THalf()(torch.zeros(2))
    with pytest.raises(RuntimeError) as e_err:
        Half()(ember.zeros(2))
    assert str(e_err.value) == str(t_err.value).replace("THalf", "Half")


@pytest.mark.parametrize("kind", ["parameter", "buffer"])
def test_uninitialized_tensor_protocol(kind):
    e_cls, t_cls = ((UninitializedParameter, TUninitializedParameter) if kind == "parameter"
                    else (UninitializedBuffer, TUninitializedBuffer))
    for cls, lib in ((e_cls, ember), (t_cls, torch)):
        u = cls()
        assert u.requires_grad == (kind == "parameter")
        assert repr(u) == f"<{cls.__name__}>"
        assert is_lazy(u) == (cls is e_cls) and t_is_lazy(u) == (cls is t_cls)
        clones = [pickle.loads(pickle.dumps(u))]
        if kind == "parameter":
            clones.append(copy.deepcopy(u))
        else:  # torch refuses to deepcopy an uninitialized buffer
            with pytest.raises(ValueError, match="Attempted to use an uninitialized"):
                copy.deepcopy(u)
        for clone in clones:
            assert type(clone) is cls and clone.requires_grad == u.requires_grad
        u.materialize((2, 3), dtype=lib.float64)
        assert tuple(u.shape) == (2, 3) and u.dtype == lib.float64
        assert type(u).__name__ == ("Parameter" if kind == "parameter" else "Tensor")
        assert u.requires_grad == (kind == "parameter")
    if kind == "parameter":
        with pytest.raises(RuntimeError):
            TUninitializedParameter(dtype=torch.int64)
        with pytest.raises(RuntimeError):
            UninitializedParameter(dtype=ember.int64)


def test_module_to_before_initialization_as_torch():
    results = []
    for lib, mod in ((torch, tnn), (ember, nn)):
        m = mod.LazyBatchNorm1d().to(lib.float64)
        assert m.has_uninitialized_params()
        assert t_is_lazy(m.running_mean) if lib is torch else is_lazy(m.running_mean)
        m(lib.ones(3, 4, dtype=lib.float64))
        results.append([(n, str(t.dtype).split(".")[-1], tuple(t.shape))
                        for n, t in m.state_dict().items()])
    assert results[0] == results[1]


def test_lazy_module_in_a_container_and_state_dict_round_trip():
    torch.manual_seed(0)
    tnet = tnn.Sequential(tnn.LazyConv2d(4, 3), tnn.LazyBatchNorm2d(), tnn.ReLU(), tnn.Flatten(),
                          tnn.LazyLinear(2)).double()
    enet = nn.Sequential(nn.LazyConv2d(4, 3), nn.LazyBatchNorm2d(), nn.ReLU(), nn.Flatten(),
                         nn.LazyLinear(2)).double()
    assert list(enet.state_dict()) == list(tnet.state_dict())
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 6, 6))
    tnet(torch.tensor(x))
    enet.load_state_dict(_state_to_ember(tnet.state_dict()))  # materializes every lazy layer
    assert [type(m).__name__ for m in enet] == [type(m).__name__ for m in tnet][:0] + \
        ["LazyConv2d", "LazyBatchNorm2d", "ReLU", "Flatten", "LazyLinear"]
    _forward_backward(enet, tnet, x.shape, rng)
    assert [type(m).__name__ for m in enet] == [type(m).__name__ for m in tnet]


@pytest.mark.parametrize("name", ["LazyBatchNorm1d", "LazyInstanceNorm2d"])
def test_norm_without_bias(name):
    shape = (4, 3, 5) if name.endswith("1d") else (2, 3, 4, 5)
    em, tm = _pair(name, (), {"bias": False, "affine": True})
    assert list(em.state_dict()) == list(tm.state_dict()) == [
        "weight", "running_mean", "running_var", "num_batches_tracked"]
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape)
    tm(torch.tensor(x))
    em(ember.tensor(x))
    assert repr(em) == repr(tm) and em.bias is None
    em.load_state_dict(_state_to_ember(tm.state_dict()))
    _forward_backward(em, tm, shape, rng)


@pytest.mark.parametrize("name,args", [("BatchNorm2d", (3,)), ("InstanceNorm2d", (3,)),
                                       ("SyncBatchNorm", (3,))])
def test_norm_bias_keyword(name, args):
    for affine in (True, False):
        tm = getattr(tnn, name)(*args, affine=affine, bias=False)
        em = getattr(nn, name)(*args, affine=affine, bias=False)
        assert repr(em) == repr(tm) and list(em.state_dict()) == list(tm.state_dict())
    conv = nn.SyncBatchNorm.convert_sync_batchnorm(nn.BatchNorm2d(3, bias=False))
    tconv = tnn.SyncBatchNorm.convert_sync_batchnorm(tnn.BatchNorm2d(3, bias=False))
    assert repr(conv) == repr(tconv)


def test_lazy_linear_loaded_then_called_with_other_width_raises_as_torch():
    source = tnn.Linear(3, 2)
    tm, em = tnn.LazyLinear(2), nn.LazyLinear(2)
    tm.load_state_dict(source.state_dict())
    em.load_state_dict(_state_to_ember(source.state_dict()))
    with pytest.raises(AssertionError) as t_err:
        tm(torch.zeros(1, 4))
    with pytest.raises(AssertionError) as e_err:
        em(ember.zeros(1, 4))
    assert str(e_err.value) == str(t_err.value)


def test_instance_norm_warns_on_unused_num_features():
    with pytest.warns(UserWarning, match="does not match num_features"):
        tnn.InstanceNorm1d(3)(torch.zeros(2, 4, 5))
    with pytest.warns(UserWarning, match="does not match num_features"):
        nn.InstanceNorm1d(3)(ember.zeros(2, 4, 5))
