"""Smaller names of torch's API against torch: ``nn.Buffer``, ``autograd.graph``'s
``GradientEdge`` / ``get_gradient_edge`` / ``increment_version``, and torch.serialization's
helpers."""
import os

import numpy as np
import pytest
import torch

import ember

LIBS = (torch, ember)


def _buffer_program(lib):
    nn = lib.nn

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.kept = nn.Buffer(lib.ones(2))
            self.scratch = nn.Buffer(lib.zeros(1), persistent=False)
            self.weight = nn.Parameter(lib.ones(1))

    m = Model()
    out = [type(m.kept).__name__, sorted(m.state_dict()), sorted(dict(m.named_buffers())),
           isinstance(nn.Buffer(lib.ones(1)), nn.Buffer), isinstance(lib.ones(1), nn.Buffer),
           nn.Buffer().tolist(), nn.Buffer(lib.ones(1, requires_grad=True)).requires_grad]
    m.kept = lib.full((3,), 2.0)          # a tensor assigned to a buffer's name stays a buffer
    m.extra = nn.Buffer(lib.zeros(1))
    out += [sorted(dict(m.named_buffers())), sorted(dict(m.named_parameters())),
            m.state_dict()["kept"].tolist()]
    return out


def test_buffer_as_torch():
    assert _buffer_program(ember) == _buffer_program(torch)


def _edges_program(lib):
    from importlib import import_module
    graph = import_module(f"{lib.__name__}.autograd.graph")
    x = lib.ones(2, requires_grad=True)
    y = x * 2
    edge, leaf = graph.get_gradient_edge(y), graph.get_gradient_edge(x)
    with pytest.raises(RuntimeError, match="does not require gradients"):
        graph.get_gradient_edge(lib.ones(2))
    t = lib.ones(2)
    v = t._version
    graph.increment_version(t)
    graph.increment_version([t, t[:1]])
    a = lib.ones(2, requires_grad=True)
    b = a * 1
    c = b * b
    graph.increment_version(b)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        c.sum().backward()
    return (type(edge).__name__, edge._fields, edge.node is y.grad_fn, edge.output_nr,
            leaf.node.name().split("::")[-1], t._version - v)


def test_gradient_edges_and_versions_as_torch():
    assert _edges_program(ember) == _edges_program(torch)


def test_gradient_edge_inputs_are_refused_clearly():
    from ember.autograd.graph import get_gradient_edge
    x = ember.ones(2, requires_grad=True)
    y = x * 2
    with pytest.raises(NotImplementedError, match="GradientEdge inputs"):
        ember.autograd.grad(y.sum(), get_gradient_edge(y))


def test_serialization_helpers_as_torch(tmp_path):
    import ember.serialization as es
    import torch.serialization as ts
    assert es.location_tag(ember.ones(1)) == ts.location_tag(torch.ones(1)) == "cpu"
    assert es.location_tag(ember.ones(1).untyped_storage()) == \
        ts.location_tag(torch.ones(1).untyped_storage())
    assert es.normalize_storage_type(ember.FloatStorage) is ember.FloatStorage
    assert [e.name for e in es.LoadEndianness] == [e.name for e in ts.LoadEndianness]
    assert [e.value for e in es.LoadEndianness] == [e.value for e in ts.LoadEndianness]
    assert es.get_default_load_endianness() is ts.get_default_load_endianness() is None
    for mod in (ts, es):
        with pytest.raises(TypeError, match="Invalid argument type"):
            mod.set_default_load_endianness("big")
    for version, req in (("1.2.3", (1, 2)), ("1.2.3", (1, 3)), ("2.0.1", (1, 9, 9))):
        class Module:
            __name__ = "m"
            __version__ = version
        assert es.check_module_version_greater_or_equal(Module, req) == \
            ts.check_module_version_greater_or_equal(Module, req)
    Module.__version__ = "x.y"
    for mod in (ts, es):
        with pytest.raises(RuntimeError, match="malformed"):
            mod.check_module_version_greater_or_equal(Module, (1, 2))
        with pytest.warns(UserWarning, match="malformed"):
            assert mod.check_module_version_greater_or_equal(Module, (1, 2), False)
    with es.mkdtemp() as path:
        assert os.path.isdir(path)
    assert not os.path.exists(path)
    assert issubclass(es.SourceChangeWarning, Warning)


def test_load_endianness_fallback(tmp_path):
    import ember.serialization as es
    path = tmp_path / "t.pt"
    ember.save({"t": ember.arange(3.0)}, path, _disable_byteorder_record=True)
    try:
        es.set_default_load_endianness(es.LoadEndianness.LITTLE)
        np.testing.assert_array_equal(ember.load(path)["t"].numpy(), [0.0, 1.0, 2.0])
        es.set_default_load_endianness(es.LoadEndianness.BIG)
        with pytest.raises(Exception, match="big-endian checkpoints are not supported"):
            ember.load(path)
    finally:
        es.set_default_load_endianness(None)


def test_softmax2d_and_nllloss2d_as_torch():
    x = np.random.default_rng(1).standard_normal((2, 3, 4, 5))
    target = np.random.default_rng(2).integers(0, 3, (2, 4, 5))
    out = {}
    for lib in LIBS:
        xt = lib.tensor(x, requires_grad=True)
        y = lib.nn.Softmax2d()(xt)
        loss = lib.nn.NLLLoss2d()(y.log(), lib.tensor(target))
        loss.backward()
        with pytest.raises(ValueError, match="expected input to be 3D or 4D, got 2D"):
            lib.nn.Softmax2d()(lib.ones(2, 2))
        out[lib] = (y.detach().numpy(), loss.item(), xt.grad.numpy(),
                    isinstance(lib.nn.NLLLoss2d(), lib.nn.NLLLoss))
    for a, b in zip(out[ember], out[torch]):
        np.testing.assert_allclose(a, b, rtol=1e-10)


@pytest.mark.parametrize("name,shape", [("eye", (3, 4)), ("dirac", (4, 2, 3, 3))])
def test_deprecated_init_eye_and_dirac(name, shape):
    values = []
    for lib in LIBS:
        t = lib.empty(*shape)
        with pytest.warns(FutureWarning, match=f"nn.init.{name}` is now deprecated in favor of "
                                               f"`nn.init.{name}_`"):
            getattr(lib.nn.init, name)(t)
        values.append(t.numpy())
    np.testing.assert_array_equal(values[0], values[1])


def test_functional_aliases():
    F = ember.nn.functional
    assert F.pdist is ember.pdist and torch.nn.functional.pdist is torch.pdist
    assert F.has_torch_function((ember.ones(1),)) == torch.nn.functional.has_torch_function((torch.ones(1),))
    assert F.has_torch_function_unary(ember.ones(1)) is False
    assert F.has_torch_function_variadic(ember.ones(1), 2) is False


@pytest.mark.parametrize("hard", [False, True])
def test_gumbel_softmax_with_the_same_noise(hard, monkeypatch):
    logits = np.random.default_rng(3).standard_normal((4, 5))
    noise = np.random.default_rng(4).exponential(size=(4, 5))
    out = {}
    for lib in LIBS:
        def exponential_(self, *args, **kwargs):
            self.copy_(lib.tensor(noise).to(self.dtype))
            return self
        monkeypatch.setattr(lib.Tensor, "exponential_", exponential_)
        x = lib.tensor(logits, requires_grad=True)
        y = lib.nn.functional.gumbel_softmax(x, tau=0.7, hard=hard)
        (y * lib.arange(5.0).double()).sum().backward()
        out[lib] = (y.detach().numpy(), x.grad.numpy())
    for a, b in zip(out[ember], out[torch]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_gumbel_softmax_samples_follow_the_categorical():
    ember.manual_seed(0)
    logits = ember.tensor([0.0, 1.0, 2.0]).log_softmax(0)
    samples = ember.nn.functional.gumbel_softmax(logits.expand(20000, 3), hard=True)
    freq = samples.mean(0).numpy()
    np.testing.assert_allclose(freq, logits.exp().numpy(), atol=0.02)
    assert set(np.unique(samples.numpy())) == {0.0, 1.0}


def test_checkpoint_device_states_on_the_cpu():
    import ember.utils.checkpoint as ec
    import torch.utils.checkpoint as tc
    args = (1, [2.0])
    assert ec.get_device_states(ember.ones(1), [ember.ones(2)], {"k": ember.ones(1)}, *args) == \
        tc.get_device_states(torch.ones(1), [torch.ones(2)], {"k": torch.ones(1)}, *args) == ([], [])
    ec.set_device_states([], [])
    assert ec.DefaultDeviceType.get_device_type() == tc.DefaultDeviceType.get_device_type() == "cpu"
    try:
        ec.DefaultDeviceType.set_device_type("cuda")
        assert ec.DefaultDeviceType.get_device_type() == "cuda"
    finally:
        ec.DefaultDeviceType.set_device_type(None)
    with pytest.raises(NotImplementedError, match="ember.cuda has no per-device random state"):
        ec.set_device_states([0], [ember.ones(1)])
