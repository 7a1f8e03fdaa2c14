"""Module and containers: registration, iteration order, state_dict, modes, conversions,
hooks, printing and pickling, checked against torch where torch defines the behaviour."""
import copy
import pickle

import numpy as np
import pytest
import torch
import torch.nn as tnn

import ember
import ember.nn as nn

try:
    from ._oracle_layers import to_ember
except ImportError:
    from _oracle_layers import to_ember


def build(lib):
    """The same small network in either library: nested containers, a shared module, a
    buffer and a non-persistent buffer."""
    class Block(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = lib.nn.Linear(3, 4)
            self.register_buffer("count", lib.zeros(2))
            self.register_buffer("scratch", lib.ones(1), persistent=False)
            self.scale = lib.nn.Parameter(lib.ones(4))

        def forward(self, x):
            return self.fc(x) * self.scale

    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.block = Block()
            shared = lib.nn.Linear(4, 4)
            self.seq = lib.nn.Sequential(shared, lib.nn.ReLU(), shared)
            self.heads = lib.nn.ModuleDict({"a": lib.nn.Linear(4, 2), "b": lib.nn.Linear(4, 1, bias=False)})
            self.extra = lib.nn.ModuleList([lib.nn.Tanh(), lib.nn.Tanh(), lib.nn.Identity()])
            self.plist = lib.nn.ParameterList([lib.nn.Parameter(lib.zeros(2))])

        def forward(self, x):
            h = self.seq(self.block(x))
            return self.heads["a"](h).sum() + self.heads["b"](h).sum() + self.plist[0].sum()

    return Net()


@pytest.fixture
def nets():
    torch.manual_seed(0)
    return build(ember), build(torch)


def test_iteration_order_and_names_match_torch(nets):
    e, t = nets
    assert [n for n, _ in e.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert [n for n, _ in e.named_parameters(remove_duplicate=False)] == \
        [n for n, _ in t.named_parameters(remove_duplicate=False)]
    assert [n for n, _ in e.named_parameters(prefix="m", recurse=False)] == \
        [n for n, _ in t.named_parameters(prefix="m", recurse=False)]
    assert [n for n, _ in e.named_buffers()] == [n for n, _ in t.named_buffers()]
    assert [n for n, _ in e.named_modules()] == [n for n, _ in t.named_modules()]
    assert [n for n, _ in e.named_modules(remove_duplicate=False, prefix="x")] == \
        [n for n, _ in t.named_modules(remove_duplicate=False, prefix="x")]
    assert [n for n, _ in e.named_children()] == [n for n, _ in t.named_children()]
    assert len(list(e.parameters())) == len(list(t.parameters()))
    assert len(list(e.modules())) == len(list(t.modules()))
    assert len(list(e.children())) == len(list(t.children()))
    assert len(list(e.buffers(recurse=False))) == 0


def test_state_dict_keys_and_round_trip(nets):
    e, t = nets
    state = t.state_dict()
    assert list(e.state_dict()) == list(state)
    result = e.load_state_dict({k: to_ember(v) for k, v in state.items()})
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    np.testing.assert_allclose(e(ember.tensor(x)).item(), t(torch.tensor(x)).item(), rtol=1e-5)
    sd = e.state_dict()
    assert not sd["block.fc.weight"].requires_grad
    assert e.state_dict(keep_vars=True)["block.fc.weight"] is e.block.fc.weight
    assert list(e.state_dict(prefix="p.")) == ["p." + k for k in state]


def test_load_state_dict_errors_list_every_problem_and_change_nothing(nets):
    e, t = nets
    state = {k: to_ember(v) for k, v in t.state_dict().items()}
    del state["block.count"]
    state["block.fc.weight"] = ember.zeros(5, 3)
    state["bogus"] = ember.zeros(1)
    state["heads.c.weight"] = ember.zeros(1)
    tstate = {k: torch.tensor(v.numpy()) for k, v in state.items()}
    before = {k: v.clone() for k, v in e.state_dict().items()}
    with pytest.raises(RuntimeError) as exc_e:
        e.load_state_dict(state)
    with pytest.raises(RuntimeError) as exc_t:
        t.load_state_dict(tstate)
    assert str(exc_e.value) == str(exc_t.value).replace("torch.Size", "ember.Size")
    for k, v in e.state_dict().items():
        assert (v.numpy() == before[k].numpy()).all(), k
    del state["block.fc.weight"]
    del tstate["block.fc.weight"]
    re, rt = e.load_state_dict(state, strict=False), t.load_state_dict(tstate, strict=False)
    assert re.missing_keys == rt.missing_keys and re.unexpected_keys == rt.unexpected_keys
    assert repr(re) == repr(rt)
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        e.load_state_dict([1])


def test_load_state_dict_assign_and_scalar_compat():
    m = nn.Linear(2, 1)
    w = ember.ones(1, 2)
    m.load_state_dict({"weight": w, "bias": ember.zeros(1)}, assign=True)
    assert isinstance(m.weight, nn.Parameter) and m.weight.requires_grad
    assert m.weight.tolist() == [[1.0, 1.0]]


def test_repr_matches_torch(nets):
    e, t = nets
    assert repr(e) == repr(t).replace("torch.", "ember.")
    assert repr(nn.Sequential()) == repr(tnn.Sequential())
    assert repr(nn.ModuleList()) == repr(tnn.ModuleList())


def test_getattr_setattr_delattr_semantics():
    m = nn.Linear(2, 3)
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'foo'"):
        m.foo
    m.bias = None
    assert m.bias is None and "bias" in m._parameters
    with pytest.raises(TypeError, match=r"cannot assign 'torch.FloatTensor' as parameter 'weight' "
                                        r"\(ember.nn.Parameter or None expected\)"):
        m.weight = ember.zeros(3, 2)
    m.register_buffer("buf", ember.zeros(1))
    with pytest.raises(TypeError, match="cannot assign 'int' as buffer 'buf'"):
        m.buf = 3
    m.buf = ember.ones(2)
    assert m.buf.tolist() == [1.0, 1.0]
    m.sub = nn.ReLU()
    with pytest.raises(TypeError, match="cannot assign 'int' as child module 'sub'"):
        m.sub = 1
    m.sub = nn.Parameter(ember.zeros(1))  # a parameter replaces the module
    assert "sub" not in m._modules and "sub" in m._parameters
    del m.sub
    del m.buf
    assert "sub" not in m._parameters and "buf" not in m._buffers
    m.plain = 5
    del m.plain
    with pytest.raises(AttributeError):
        m.plain
    d = dir(m)
    assert "weight" in d and "forward" in d and "in_features" in d


def test_registration_errors_match_torch():
    for lib in (ember, torch):
        m = lib.nn.Module()
        m.x = 1
        with pytest.raises(KeyError, match="attribute 'x' already exists"):
            m.register_buffer("x", lib.zeros(1))
        with pytest.raises(KeyError, match='contain "."'):
            m.register_parameter("a.b", None)
        with pytest.raises(KeyError, match='be empty string'):
            m.register_buffer("", None)
        with pytest.raises(TypeError, match="is not a Module subclass"):
            m.add_module("y", 3)
        with pytest.raises(TypeError, match="parameter name should be a string"):
            m.register_parameter(1, None)
        with pytest.raises(ValueError, match="Cannot assign non-leaf Tensor to parameter 'p'"):
            leaf = lib.nn.Parameter(lib.ones(1))
            param = lib.nn.Parameter(lib.ones(1))
            param.grad_fn
            nonleaf = leaf * 2
            nonleaf.__class__ = lib.nn.Parameter
            m.register_parameter("p", nonleaf)

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(ember.zeros(1))

    with pytest.raises(AttributeError, match=r"cannot assign parameters before Module.__init__\(\) call"):
        Early()


def test_get_submodule_parameter_buffer(nets):
    e, t = nets
    assert e.get_submodule("block.fc") is e.block.fc
    assert e.get_submodule("") is e
    assert e.get_parameter("block.fc.weight") is e.block.fc.weight
    assert e.get_buffer("block.count") is e.block.count
    for net in (e, t):
        with pytest.raises(AttributeError, match="Block has no attribute `nope`"):
            net.get_submodule("block.nope")
        with pytest.raises(AttributeError, match="`count` is not an nn.Parameter"):
            net.get_parameter("block.count")
        with pytest.raises(AttributeError, match="`scale` is not a buffer"):
            net.get_buffer("block.scale")


def test_train_eval_requires_grad_zero_grad_apply(nets):
    e, _ = nets
    assert e.training and e.block.training
    assert e.eval() is e
    assert not any(m.training for m in e.modules())
    e.train()
    assert all(m.training for m in e.modules())
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        e.train(1)
    e(ember.randn(2, 3)).backward()
    assert all(p.grad is not None for p in e.parameters())
    e.zero_grad(set_to_none=False)
    assert all(not p.grad.numpy().any() for p in e.parameters())
    e.zero_grad()
    assert all(p.grad is None for p in e.parameters())
    e.requires_grad_(False)
    assert not any(p.requires_grad for p in e.parameters())
    seen = []
    e.apply(lambda m: seen.append(type(m).__name__))
    assert seen[-1] == "Net" and seen[0] == "Linear"


def test_conversions_keep_parameter_identity(nets):
    e, _ = nets
    w = e.block.fc.weight
    e(ember.randn(2, 3)).backward()
    assert e.double() is e
    assert e.block.fc.weight is w and w.dtype == ember.float64 and w.grad.dtype == ember.float64
    assert e.block.count.dtype == ember.float64 and isinstance(w, nn.Parameter)
    e.to(ember.float32)
    assert w.dtype == ember.float32
    e.half()
    assert w.dtype == ember.float16
    e.bfloat16()
    assert w.dtype == ember.bfloat16
    e.float().cpu()
    assert w.dtype == ember.float32
    e.to("cpu", ember.float64)
    assert w.dtype == ember.float64
    e.type(ember.float32)
    assert w.dtype == ember.float32
    m = nn.Module()
    m.register_buffer("steps", ember.tensor([1, 2]))
    m.double()
    assert m.steps.dtype == ember.int64
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point or complex dtypes"):
        m.to(ember.int32)
    assert e(ember.randn(2, 3)).dtype == ember.float32


class PicklableNet(nn.Module):
    def __init__(self):
        super().__init__()
        shared = nn.Linear(3, 3)
        self.seq = nn.Sequential(shared, nn.ReLU(), shared)
        self.register_buffer("steps", ember.zeros(1))

    def forward(self, x):
        return self.seq(x).sum()


def test_pickle_and_deepcopy():
    e = PicklableNet()
    x = ember.randn(2, 3)
    for clone in (copy.deepcopy(e), pickle.loads(pickle.dumps(e))):
        assert clone.seq[0].weight is not e.seq[0].weight
        assert isinstance(clone.seq[0].weight, nn.Parameter)
        assert clone.seq[0] is clone.seq[2]  # sharing survives
        assert clone(x).item() == pytest.approx(e(x).item())
        assert list(clone.state_dict()) == list(e.state_dict())


def test_forward_hooks_with_and_without_kwargs():
    m = nn.Linear(2, 2)
    calls = []

    def pre(mod, args):
        calls.append("pre")
        return (args[0] * 0,)

    def pre_kw(mod, args, kwargs):
        calls.append("pre_kw")
        return args, kwargs

    def post(mod, args, out):
        calls.append("post")
        return out + 1

    def post_kw(mod, args, kwargs, out):
        calls.append("post_kw")

    handles = [m.register_forward_pre_hook(pre), m.register_forward_pre_hook(pre_kw, with_kwargs=True),
               m.register_forward_hook(post), m.register_forward_hook(post_kw, with_kwargs=True)]
    first = m.register_forward_pre_hook(lambda mod, args: calls.append("first"), prepend=True)
    out = m(ember.randn(1, 2))
    assert calls == ["first", "pre", "pre_kw", "post", "post_kw"]
    np.testing.assert_allclose(out.detach().numpy(), (m.bias + 1).detach().numpy()[None])
    for h in handles + [first]:
        h.remove()
    calls.clear()
    m(ember.randn(1, 2))
    assert calls == []
    with m.register_forward_hook(post):
        m(ember.randn(1, 2))
    m(ember.randn(1, 2))
    assert calls == ["post"]


def test_full_backward_hooks_match_torch():
    records = {}

    def run(lib):
        torch.manual_seed(0)
        m = tnn.Linear(3, 2)
        layer = m if lib is torch else nn.Linear(3, 2)
        if lib is ember:
            layer.load_state_dict({k: to_ember(v) for k, v in m.state_dict().items()})
        got = []
        layer.register_full_backward_pre_hook(lambda mod, go: got.append(("pre", [g.tolist() for g in go])))

        def hook(mod, gi, go):
            got.append(("hook", [None if g is None else g.tolist() for g in gi], [g.tolist() for g in go]))
            return (gi[0] * 2,)

        layer.register_full_backward_hook(hook)
        x = lib.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]], requires_grad=True)
        layer(x).pow(2).sum().backward()
        records[lib] = (got, x.grad.tolist(), layer.weight.grad.tolist())

    run(ember)
    run(torch)
    (ge, xe, we), (gt, xt, wt) = records[ember], records[torch]
    assert [g[0] for g in ge] == [g[0] for g in gt]
    np.testing.assert_allclose(np.array(ge[0][1]), np.array(gt[0][1]), rtol=1e-6)
    np.testing.assert_allclose(np.array(ge[1][1]), np.array(gt[1][1]), rtol=1e-6)
    np.testing.assert_allclose(np.array(xe), np.array(xt), rtol=1e-6)
    np.testing.assert_allclose(np.array(we), np.array(wt), rtol=1e-6)


def test_backward_hook_when_input_needs_no_grad():
    m = nn.Linear(3, 2)
    seen = []
    m.register_full_backward_hook(lambda mod, gi, go: seen.append((gi, len(go))))
    m(ember.randn(4, 3)).sum().backward()
    assert seen == [((None,), 1)]


def test_sequential_operations_match_torch():
    for lib in (ember, torch):
        a, b, c = lib.nn.ReLU(), lib.nn.Tanh(), lib.nn.Sigmoid()
        s = lib.nn.Sequential(a, b)
        assert len(s) == 2 and s[0] is a and s[-1] is b
        assert isinstance(s[0:1], lib.nn.Sequential) and len(s[0:1]) == 1
        s.append(c)
        assert [n for n, _ in s.named_children()] == ["0", "1", "2"]
        s.insert(1, lib.nn.Identity())
        assert isinstance(s[1], lib.nn.Identity) and s[3] is c
        assert s.pop(1).__class__.__name__ == "Identity"
        del s[0]
        assert list(s._modules) == ["0", "1"] and s[0] is b
        s.extend(lib.nn.Sequential(a))
        assert list(iter(s)) == [b, c, a]
        s[0] = a
        assert s[0] is a
        with pytest.raises(IndexError, match="index 5 is out of range"):
            s[5]
        s2 = lib.nn.Sequential(__import__("collections").OrderedDict([("x", a), ("y", b)]))
        assert list(s2._modules) == ["x", "y"]
        assert len(s2 + s) == 5
    x = ember.randn(2, 3)
    np.testing.assert_allclose(nn.Sequential(nn.ReLU(), nn.Tanh())(x).numpy(), np.tanh(np.maximum(x.numpy(), 0)))


def test_module_list_dict_and_parameter_containers():
    ml = nn.ModuleList([nn.ReLU()])
    ml.append(nn.Tanh()).extend([nn.Sigmoid()])
    ml.insert(0, nn.Identity())
    assert [type(m).__name__ for m in ml] == ["Identity", "ReLU", "Tanh", "Sigmoid"]
    assert isinstance(ml[1:], nn.ModuleList) and len(ml[1:]) == 3
    del ml[0]
    assert list(ml._modules) == ["0", "1", "2"]
    with pytest.raises(IndexError, match="index 3 is out of range"):
        ml[3]
    md = nn.ModuleDict({"b": nn.ReLU(), "a": nn.Tanh()})
    assert list(md.keys()) == ["b", "a"] and "a" in md and len(md) == 2
    md.update([("c", nn.Identity())])
    assert md.pop("b").__class__.__name__ == "ReLU" and list(md) == ["a", "c"]
    pl = nn.ParameterList([ember.zeros(2), nn.Parameter(ember.ones(3))])
    assert all(isinstance(p, nn.Parameter) for p in pl) and len(pl) == 2
    pl.append(ember.ones(1))
    assert [n for n, _ in pl.named_parameters()] == ["0", "1", "2"]
    theirs = tnn.ParameterList([torch.zeros(2), torch.ones(3), torch.ones(1)])
    # ember spells dtypes "ember.float32" but type strings as torch does ("torch.FloatTensor")
    assert repr(pl) == repr(theirs).replace("torch.", "ember.").replace("ember.FloatTensor", "torch.FloatTensor")
    pd = nn.ParameterDict({"w": ember.zeros(2, 3)})
    pd["v"] = ember.ones(1)
    assert list(pd.keys()) == ["w", "v"] and isinstance(pd["v"], nn.Parameter)
    assert [n for n, _ in pd.named_parameters()] == ["w", "v"]
    tpd = tnn.ParameterDict({"w": torch.zeros(2, 3)})
    tpd["v"] = torch.ones(1)
    assert repr(pd) == repr(tpd).replace("torch.", "ember.").replace("ember.FloatTensor", "torch.FloatTensor")
    assert list(nn.ParameterDict({"b": ember.ones(1), "a": ember.ones(1)})) == ["a", "b"]  # sorted
    with pytest.raises(RuntimeError, match="ParameterList should not be called."):
        pl(1)


def test_state_dict_with_containers_matches_torch_keys():
    e = nn.Sequential(nn.Linear(2, 3), nn.ModuleList([nn.Linear(3, 3)]), nn.ModuleDict({"h": nn.Linear(3, 1)}))
    t = tnn.Sequential(tnn.Linear(2, 3), tnn.ModuleList([tnn.Linear(3, 3)]), tnn.ModuleDict({"h": tnn.Linear(3, 1)}))
    assert list(e.state_dict()) == list(t.state_dict())
    assert list(nn.ParameterList([ember.ones(1)]).state_dict()) == ["0"]


def test_extra_state_and_load_hooks():
    class WithExtra(nn.Module):
        def __init__(self):
            super().__init__()
            self.value = 1

        def get_extra_state(self):
            return {"value": self.value}

        def set_extra_state(self, state):
            self.value = state["value"]

    m = WithExtra()
    sd = m.state_dict()
    assert sd["_extra_state"] == {"value": 1}
    sd["_extra_state"] = {"value": 7}
    seen = []
    m.register_load_state_dict_post_hook(lambda mod, keys: seen.append(tuple(keys)))
    m.load_state_dict(sd)
    assert m.value == 7 and seen == [([], [])]


def test_custom_layer_example_trains():
    import os
    import re
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=os.path.join(root, "src"))
    out = subprocess.run([sys.executable, os.path.join(root, "examples", "custom_layer.py")],
                         env=env, capture_output=True, text=True, timeout=120, check=True).stdout
    first, last, accuracy = map(float, re.search(
        r"loss fell from ([\d.]+) to ([\d.]+); accuracy ([\d.]+)", out).groups())
    assert last < first / 5 and accuracy > 0.95
    assert "(0): GatedLinear(\n    in_features=2, out_features=16" in out


def test_full_backward_hook_with_two_inputs_matches_torch():
    results = {}
    for lib in (ember, torch):
        torch.manual_seed(0)
        tlayer = tnn.Bilinear(2, 3, 1)
        layer = tlayer if lib is torch else nn.Bilinear(2, 3, 1)
        if lib is ember:
            layer.load_state_dict({k: to_ember(v) for k, v in tlayer.state_dict().items()})
        seen = []
        layer.register_full_backward_hook(
            lambda mod, gi, go: seen.append([None if g is None else np.array(g.tolist()) for g in gi]))
        a = lib.tensor([[1.0, 2.0]], requires_grad=True)
        b = lib.tensor([[0.5, -1.0, 3.0]])
        layer(a, b).sum().backward()
        results[lib] = seen
    (ge,), (gt,) = results[ember], results[torch]
    assert len(ge) == len(gt) == 2
    np.testing.assert_allclose(ge[0], gt[0], rtol=1e-6)
    np.testing.assert_array_equal(ge[1], gt[1])  # zeros for the input that needs no grad


def test_always_call_forward_hook_runs_when_forward_raises():
    class Broken(nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    m = Broken()
    seen = []
    m.register_forward_hook(lambda mod, args, out: seen.append(("always", out)), always_call=True)
    m.register_forward_hook(lambda mod, args, out: seen.append("normal"))
    with pytest.raises(ValueError, match="boom"):
        m(ember.ones(1))
    assert seen == [("always", None)]
