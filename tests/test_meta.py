"""The meta device against torch's: factories, modules built on meta, ops giving meta results
of torch's shapes, dtypes and strides, conversions, printing and the errors for data access."""
import math
import warnings

import numpy as np
import pytest
import torch

import ember


def _dtype_name(t):
    return str(t.dtype).split(".")[-1]


def _same_meta(got, want, strides=True):
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same_meta(g, w, strides)
        return
    assert got.is_meta and want.is_meta
    assert got.device.type == "meta"
    assert tuple(got.shape) == tuple(want.shape)
    assert _dtype_name(got) == _dtype_name(want)
    if strides:
        assert tuple(got.stride()) == tuple(want.stride())


def _both(fn, shapes, dtypes=None, strides=True):
    dtypes = dtypes or ["float32"] * len(shapes)
    got = fn(ember, *(ember.empty(s, dtype=getattr(ember, d), device="meta") for s, d in zip(shapes, dtypes)))
    want = fn(torch, *(torch.empty(s, dtype=getattr(torch, d), device="meta") for s, d in zip(shapes, dtypes)))
    _same_meta(got, want, strides)


def test_device_and_factories():
    assert ember.device("meta").type == "meta"
    for name, args, kwargs in [("empty", (2, 3), {}), ("zeros", ((4,),), {"dtype": "int64"}),
                               ("ones", (2, 1, 3), {"dtype": "bool"}), ("full", ((2, 2), 1.5), {}),
                               ("full", ((3,), 7), {}), ("arange", (5,), {}), ("linspace", (0, 1, 7), {}),
                               ("eye", (3, 4), {}), ("randn", (2, 5), {}), ("rand", (3,), {"dtype": "float64"}),
                               ("randint", (0, 9, (4, 2)), {}), ("tensor", ([1.0, 2.0],), {}),
                               ("empty_strided", ((2, 3), (1, 2)), {})]:
        def make(lib):
            kw = {k: getattr(lib, v) if k == "dtype" else v for k, v in kwargs.items()}
            return getattr(lib, name)(*args, device="meta", **kw)
        _same_meta(make(ember), make(torch))
    # (ember's *_like functions give row-major strides for a transposed input on every device;
    # torch keeps a dense input's strides)
    for name in ("empty_like", "zeros_like", "ones_like", "rand_like"):
        _same_meta(getattr(ember, name)(ember.empty(2, 3).t(), device="meta"),
                   getattr(torch, name)(torch.empty(2, 3).t(), device="meta"), strides=False)
    _same_meta(ember.full_like(ember.empty(2, 3), 2, device="meta"),
               torch.full_like(torch.empty(2, 3), 2, device="meta"))


def test_a_meta_tensor_holds_no_data():
    t = ember.empty(1 << 20, 1 << 20, device="meta")          # 4 TiB of float32, if it had data
    assert t.is_meta and t.numel() == 1 << 40 and t.stride() == (1 << 20, 1)
    assert t.nbytes == 4 << 40 and t.element_size() == 4
    assert t._data.base.nbytes == 4   # the one element its array views
    assert not ember.empty(2, 3).is_meta


def test_default_device_and_modules_built_on_meta():
    class Net(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = ember.nn.Conv2d(3, 4, 3)
            self.bn = ember.nn.BatchNorm2d(4)
            self.fc = ember.nn.Linear(4, 2)

        def forward(self, x):
            return self.fc(self.bn(self.conv(x)).relu().mean((2, 3)))

    with ember.device("meta"):
        net = Net()
        x = ember.empty(2, 3, 8, 8)
        assert x.is_meta
    assert not ember.empty(1).is_meta
    for name, value in list(net.named_parameters()) + list(net.named_buffers()):
        assert value.is_meta, name
    assert isinstance(net.fc.weight, ember.nn.Parameter) and net.fc.weight.requires_grad
    out = net(x)
    assert out.is_meta and tuple(out.shape) == (2, 2)
    out.sum().backward()
    assert net.conv.weight.grad.is_meta and tuple(net.conv.weight.grad.shape) == (4, 3, 3, 3)


class _Net(ember.nn.Module):
    def __init__(self, lib):
        super().__init__()
        self.body = lib.nn.Sequential(lib.nn.Linear(5, 4), lib.nn.LayerNorm(4), lib.nn.ReLU(),
                                      lib.nn.Linear(4, 3))
        self.register_buffer("scale", lib.ones(3))

    def forward(self, x):
        return self.body(x) * self.scale


def _torch_net():
    class TorchNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.body = torch.nn.Sequential(torch.nn.Linear(5, 4), torch.nn.LayerNorm(4), torch.nn.ReLU(),
                                            torch.nn.Linear(4, 3))
            self.register_buffer("scale", torch.full((3,), 2.0))

        def forward(self, x):
            return self.body(x) * self.scale
    torch.manual_seed(0)
    return TorchNet()


def _ember_state(torch_net):
    return {k: ember.tensor(v.detach().numpy()) for k, v in torch_net.state_dict().items()}


@pytest.mark.parametrize("assign", [False, True])
def test_the_meta_to_empty_load_state_dict_pattern_matches_torch(assign):
    reference = _torch_net()
    x = np.random.default_rng(0).standard_normal((6, 5)).astype(np.float32)
    with ember.device("meta"):
        net = _Net(ember)
    if not assign:
        net.to_empty(device="cpu")
        assert not net.body[0].weight.is_meta and isinstance(net.body[0].weight, ember.nn.Parameter)
    net.load_state_dict(_ember_state(reference), assign=assign)
    for name, value in list(net.named_parameters()) + list(net.named_buffers()):
        assert value.device.type == "cpu", name
    for p in net.parameters():
        assert isinstance(p, ember.nn.Parameter) and p.requires_grad
    np.testing.assert_allclose(net(ember.tensor(x)).detach().numpy(),
                               reference(torch.tensor(x)).detach().numpy(), rtol=1e-6, atol=1e-6)


def test_loading_into_meta_without_assign_warns_as_torch_does():
    state = _ember_state(_torch_net())
    with ember.device("meta"):
        net = _Net(ember)
    with torch.device("meta"):
        torch_net = _torch_net()
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        net.load_state_dict(state)
    with warnings.catch_warnings(record=True) as want:
        warnings.simplefilter("always")
        torch_net.load_state_dict(_torch_net().state_dict())
    assert [str(w.message) for w in got] == [str(w.message) for w in want]
    assert net.body[0].weight.is_meta


def test_assign_keeps_parameter_ness_and_requires_grad_as_torch():
    for lib in (ember, torch):
        net = lib.nn.Linear(3, 2)
        net.bias.requires_grad_(False)
        state = {"weight": lib.ones(2, 3), "bias": lib.nn.Parameter(lib.zeros(2))}
        net.load_state_dict(state, assign=True)
        assert type(net.weight).__name__ == "Parameter" and net.weight.requires_grad
        assert net.bias is state["bias"] and not net.bias.requires_grad
        assert net.weight is not state["weight"] and net.weight.data_ptr() == state["weight"].data_ptr()


def test_module_to_meta_and_back():
    net = ember.nn.Linear(3, 2)
    net.to("meta")
    assert net.weight.is_meta and isinstance(net.weight, ember.nn.Parameter)
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor; no data! Please use "
                                                  "ember.nn.Module.to_empty"):
        net.to("cpu")
    net.to_empty(device="cpu", recurse=False)
    assert net.weight.device.type == "cpu" and tuple(net.weight.shape) == (2, 3)


def test_to_meta_copy_and_data_access_errors_match_torch():
    for lib in (ember, torch):
        t = lib.ones(2, 3).t().to("meta")
        assert t.is_meta and t.stride() == (1, 3) and t.to("meta") is t
        with pytest.raises(RuntimeError, match="a Tensor with 6 elements cannot be converted to Scalar"):
            t.item()
        with pytest.raises(RuntimeError, match=r"Tensor.item\(\) cannot be called on meta tensors"):
            lib.empty((), device="meta").item()
        with pytest.raises(RuntimeError, match=r"Tensor.item\(\) cannot be called on meta tensors"):
            bool(lib.empty((), device="meta"))
        with pytest.raises(RuntimeError, match=r"Tensor.item\(\) cannot be called on meta tensors"):
            float(lib.empty(1, device="meta"))
        with pytest.raises(TypeError, match="can't convert meta device type tensor to numpy"):
            t.numpy()
        for fn in (lambda: t.tolist(), lambda: t.cpu(), lambda: lib.zeros(3, 2).copy_(t)):
            with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor; no data!"):
                fn()
        assert t.copy_(lib.zeros(3, 2)).is_meta


def test_printing_matches_torch():
    cases = [lambda lib: lib.empty(2, 3, device="meta"),
             lambda lib: lib.empty((), device="meta"),
             lambda lib: lib.empty(0, 3, device="meta", dtype=lib.int64),
             lambda lib: lib.empty(4, device="meta", dtype=lib.float64, requires_grad=True),
             lambda lib: lib.empty(2, device="meta", requires_grad=True) * 2,
             lambda lib: lib.nn.Parameter(lib.empty(2, 2, device="meta"))]
    for case in cases:
        assert repr(case(ember)).replace("ember.", "torch.") == repr(case(torch))
        assert str(case(ember)).replace("ember.", "torch.") == str(case(torch))


OPS = [
    ("add", lambda lib, a, b: a + b, [(2, 3), (3,)], None),
    ("mul_scalar", lambda lib, a: a * 2.5, [(2, 3)], None),
    ("int_div", lambda lib, a: a / 2, [(4,)], ["int64"]),
    ("promote", lambda lib, a, b: a * b, [(2, 3), (2, 3)], ["float16", "float64"]),
    ("compare", lambda lib, a, b: a > b, [(2, 1), (1, 4)], None),
    ("where", lambda lib, c, a, b: lib.where(c, a, b), [(2, 3), (3,), (2, 1)], ["bool", "float32", "float32"]),
    ("unary", lambda lib, a: (a.exp(), a.sin(), a.sigmoid(), a.abs(), a.sqrt(), a.neg()), [(3, 4)], None),
    ("clamp", lambda lib, a: a.clamp(0, 1), [(3, 4)], None),
    ("pow", lambda lib, a: a ** 2, [(5,)], None),
    ("matmul", lambda lib, a, b: a @ b, [(2, 3, 4), (4, 5)], None),
    ("matmul_vec", lambda lib, a, b: (a @ b, b @ a.t() if a.dim() == 2 else None), [(3, 4), (4,)], None),
    ("bmm_broadcast", lambda lib, a, b: lib.matmul(a, b), [(2, 1, 3, 4), (5, 4, 2)], None),
    ("linear", lambda lib, x, w, b: lib.nn.functional.linear(x, w, b), [(7, 3), (5, 3), (5,)], None),
    ("addmm", lambda lib, b, x, y: lib.addmm(b, x, y), [(4,), (3, 2), (2, 4)], None),
    ("conv2d", lambda lib, x, w: lib.nn.functional.conv2d(x, w, stride=2, padding=1),
     [(2, 3, 9, 9), (4, 3, 3, 3)], None),
    ("conv1d_groups", lambda lib, x, w: lib.nn.functional.conv1d(x, w, groups=2), [(2, 4, 10), (6, 2, 3)], None),
    ("conv_transpose2d", lambda lib, x, w: lib.nn.functional.conv_transpose2d(x, w, stride=2),
     [(1, 3, 4, 4), (3, 2, 3, 3)], None),
    ("max_pool2d", lambda lib, x: lib.nn.functional.max_pool2d(x, 2), [(2, 3, 8, 8)], None),
    ("avg_pool2d", lambda lib, x: lib.nn.functional.avg_pool2d(x, 3, 2), [(2, 3, 8, 8)], None),
    ("sum", lambda lib, a: (a.sum(), a.sum(1), a.sum((0, 2), keepdim=True)), [(2, 3, 4)], None),
    ("sum_int", lambda lib, a: (a.sum(), a.sum(0)), [(2, 3)], ["int32"]),
    ("mean_var", lambda lib, a: (a.mean(-1), a.var(0), a.std()), [(2, 3, 4)], None),
    ("max_min", lambda lib, a: (a.amax(1), a.min(), a.argmax(0)), [(3, 4)], None),
    ("max_dim", lambda lib, a: tuple(a.max(1)), [(3, 4)], None),
    ("logsumexp", lambda lib, a: a.logsumexp(1), [(3, 4)], None),
    ("softmax", lambda lib, a: (a.softmax(-1), a.log_softmax(0)), [(3, 4)], None),
    ("norm", lambda lib, a: lib.linalg.vector_norm(a, dim=1), [(3, 4)], None),
    ("any_all", lambda lib, a: (a.any(), a.all(1)), [(3, 4)], ["bool"]),
    ("cumsum", lambda lib, a: a.cumsum(1), [(3, 4)], None),
    ("views", lambda lib, a: (a.t(), a.transpose(0, 1), a[1], a[:, 1:3], a[..., None], a.unsqueeze(0),
                              a.view(4, 3), a.view(-1), a.reshape(2, 6), a.expand(2, 3, 4), a.permute(1, 0),
                              a.narrow(1, 1, 2), a.select(0, 2), a.unflatten(1, (2, 2)), a.flatten(),
                              a.mT, a.diagonal(), a.squeeze(), a.movedim(0, 1)), [(3, 4)], None),
    # (not clone(): ember copies a transposed tensor row-major on every device, torch keeps its strides)
    ("reshape_copy", lambda lib, a: (a.t().reshape(12), a.t().contiguous(), a.clone(), a.t().flatten()),
     [(3, 4)], None),
    ("split_chunk", lambda lib, a: tuple(a.split(2, 1)) + tuple(a.chunk(3, 0)) + tuple(a.unbind(0)), [(3, 4)], None),
    ("cat_stack", lambda lib, a, b: (lib.cat([a, b]), lib.cat([a, a], 1), lib.stack([a, b], 1)),
     [(2, 3), (2, 3)], None),
    ("cat_promote", lambda lib, a, b: lib.cat([a, b]), [(2, 3), (1, 3)], ["float32", "float64"]),
    ("index", lambda lib, a, i: (a[i], a.index_select(1, i), lib.gather(a, 1, i.expand(3, 2))),
     [(3, 4), (2,)], ["float32", "int64"]),
    ("pad_repeat", lambda lib, a: (lib.nn.functional.pad(a, (1, 2)), a.repeat(2, 1), a.flip(0), a.roll(1, 0)),
     [(3, 4)], None),
    ("casts", lambda lib, a: (a.to(lib.float64), a.int(), a.bool(), a.half(), a.type_as(a.double())), [(3, 4)], None),
    ("layer_norm", lambda lib, x, w, b: lib.nn.functional.layer_norm(x, (4,), w, b), [(2, 3, 4), (4,), (4,)], None),
    ("batch_norm", lambda lib, x, m, v: lib.nn.functional.batch_norm(x, m, v, training=False),
     [(2, 3, 4), (3,), (3,)], None),
    ("gelu_dropout", lambda lib, a: (lib.nn.functional.gelu(a), lib.nn.functional.dropout(a, 0.0)), [(3, 4)], None),
    ("embedding", lambda lib, i, w: lib.nn.functional.embedding(i, w), [(2, 5), (10, 3)], ["int64", "float32"]),
    ("cross_entropy", lambda lib, x, y: lib.nn.functional.cross_entropy(x, y), [(4, 5), (4,)], ["float32", "int64"]),
    ("mse", lambda lib, x, y: lib.nn.functional.mse_loss(x, y), [(4, 5), (4, 5)], None),
]


@pytest.mark.parametrize("name,fn,shapes,dtypes", OPS, ids=[op[0] for op in OPS])
def test_ops_on_meta_give_torchs_shapes_dtypes_and_strides(name, fn, shapes, dtypes):
    def both(lib, *args):
        out = fn(lib, *args)
        return tuple(o for o in out if o is not None) if isinstance(out, tuple) else out
    _both(both, shapes, dtypes)


def test_backward_on_meta_gives_meta_gradients():
    grads = []
    for lib in (ember, torch):
        x = lib.empty(4, 3, device="meta", requires_grad=True)
        w = lib.empty(5, 3, device="meta", requires_grad=True)
        loss = lib.nn.functional.linear(x, w).tanh().sum()
        loss.backward()
        grads.append((x.grad, w.grad))
    _same_meta(grads[0], grads[1])


def test_in_place_ops_and_init_on_meta_draw_nothing():
    ember.manual_seed(3)
    expected = ember.rand(3)
    ember.manual_seed(3)
    t = ember.empty(1000, 1000, device="meta")
    for fill in (lambda: t.uniform_(-1, 1), lambda: t.normal_(), lambda: ember.nn.init.kaiming_uniform_(t),
                 lambda: t.add_(1), lambda: t.mul_(t), lambda: t.zero_(), lambda: t.fill_(2.0),
                 lambda: t.clamp_(0, 1), lambda: t.copy_(ember.ones(1000))):
        assert fill() is t and t.is_meta
    assert t._version > 0
    ember.manual_seed(3)
    assert ember.equal(ember.rand(3), expected)


def test_data_dependent_ops_raise_on_meta():
    t = ember.empty(3, 4, device="meta")
    with pytest.raises(NotImplementedError):
        t.nonzero()
    with pytest.raises(NotImplementedError):
        t[t > 0]
    assert math.prod(t.shape) == 12
