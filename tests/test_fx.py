"""ember.fx against torch.fx: the same programs, written once for both libraries, traced by each;
the graphs (ops, node names, targets), the generated code and the GraphModules' results and
gradients must agree."""
import math

import numpy as np
import pytest
import torch
import torch.fx

import ember
import ember.fx
from ember.fx.passes.shape_prop import ShapeProp

LIBS = {"torch": torch, "ember": ember}


# -- the programs, written once --------------------------------------------------------------------
def mlp(lib):
    nn, F = lib.nn, lib.nn.functional

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(8, 16)
            self.fc2 = nn.Linear(16, 4)

        def forward(self, x):
            h = F.relu(self.fc1(x))
            h = F.dropout(h, 0.1, training=self.training)
            return F.log_softmax(self.fc2(h), dim=-1)

    return MLP(), ((3, 8),)


def cnn(lib):
    nn, F = lib.nn, lib.nn.functional

    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 6, 3, padding=1)
            self.bn1 = nn.BatchNorm2d(6)
            self.pool = nn.MaxPool2d(2)
            self.conv2 = nn.Conv2d(6, 8, 3)
            self.fc = nn.Linear(8 * 2 * 2, 5)

        def forward(self, x):
            x = self.pool(F.relu(self.bn1(self.conv1(x))))
            x = F.max_pool2d(self.conv2(x).relu(), 1)
            y = x.view(x.size(0), -1)
            z = lib.flatten(x, 1)
            return self.fc(y) + self.fc(z) * 0.5

    return CNN(), ((2, 3, 8, 8),)


def transformer_block(lib):
    nn, F = lib.nn, lib.nn.functional

    class Attention(nn.Module):
        def __init__(self, d, heads):
            super().__init__()
            self.heads = heads
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.qkv(x).split(C, dim=2)
            q = q.view(B, T, self.heads, C // self.heads).transpose(1, 2)
            k = k.view(B, T, self.heads, C // self.heads).transpose(1, 2)
            v = v.view(B, T, self.heads, C // self.heads).transpose(1, 2)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            y = y.transpose(1, 2).contiguous().view(B, T, C)
            return self.proj(y)

    class Block(nn.Module):
        def __init__(self, d=8, heads=2):
            super().__init__()
            self.ln1 = nn.LayerNorm(d)
            self.attn = Attention(d, heads)
            self.ln2 = nn.LayerNorm(d)
            self.mha = nn.MultiheadAttention(d, heads, batch_first=True)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

        def forward(self, x):
            x = x + self.attn(self.ln1(x))
            h = self.ln2(x)
            x = x + self.mha(h, h, h, need_weights=False)[0]
            return x + self.mlp(x)

    return Block(), ((2, 5, 8),)


def buffers_and_lists(lib):
    nn = lib.nn

    class Inner(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)
            self.scale = nn.Parameter(lib.ones(4))

        def forward(self, x, *, shift=0.0):
            return self.lin(x) * self.scale + shift

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("offset", lib.arange(4.0))
            self.blocks = nn.ModuleList([Inner() for _ in range(2)])
            self.act = nn.Tanh()

        def forward(self, x, scale=2.0):
            for block in self.blocks:
                x = self.act(block(x, shift=1.0))
            x = (x - self.offset) * scale
            out = {"sum": x.sum(dim=-1, keepdim=True), "max": x.max(dim=-1)[0]}
            return out, x.shape[-1], x.T

    return Model(), ((3, 4),)


PROGRAMS = [mlp, cnn, transformer_block, buffers_and_lists]


# -- helpers ---------------------------------------------------------------------------------------
def _pair(program, seed=0):
    torch.manual_seed(seed)
    tm, shapes = program(torch)
    em, _ = program(ember)
    em.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    tm.eval()
    em.eval()
    rng = np.random.default_rng(seed)
    xs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    return tm, em, xs


def _target_name(target):
    return target if isinstance(target, str) else target.__name__


def _nodes(gm):
    return [(n.op, n.name, _target_name(n.target)) for n in gm.graph.nodes]


def _torch_code_as_ember(code):
    return (code.replace("torch._C._nn.", "ember.nn.functional.").replace("torch.", "ember.")
            .replace("ember.functional.", "ember."))


def _flat(out):
    if isinstance(out, dict):
        return [v for k in sorted(out) for v in _flat(out[k])]
    if isinstance(out, (tuple, list)):
        return [v for o in out for v in _flat(o)]
    return [out]


def _close(e, t):
    if isinstance(t, torch.Tensor):
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-4, atol=1e-5)
    else:
        assert e == t


# -- tracing real models ---------------------------------------------------------------------------
@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_graph_matches_torch_fx(program):
    tm, em, _ = _pair(program)
    tg = torch.fx.symbolic_trace(tm)
    eg = ember.fx.symbolic_trace(em)
    assert _nodes(eg) == _nodes(tg)
    assert [len(n.users) for n in eg.graph.nodes] == [len(n.users) for n in tg.graph.nodes]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_generated_code_matches_torch_fx(program):
    tm, em, _ = _pair(program)
    tcode = _torch_code_as_ember(torch.fx.symbolic_trace(tm).code)
    ecode = ember.fx.symbolic_trace(em).code
    assert ecode == tcode


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_graph_module_runs_like_the_model(program):
    tm, em, xs = _pair(program)
    gm = ember.fx.symbolic_trace(em)
    ex = [ember.tensor(x) for x in xs]
    tx = [torch.tensor(x) for x in xs]
    with ember.no_grad():
        expected = em(*ex)
        got = gm(*ex)
    for g, e, t in zip(_flat(got), _flat(expected), _flat(tm(*tx))):
        _close(g, t)
        _close(g, e) if not isinstance(e, ember.Tensor) else \
            np.testing.assert_array_equal(g.numpy(), e.numpy())


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_gradients_through_graph_module(program):
    tm, em, xs = _pair(program)
    gm = ember.fx.symbolic_trace(em)
    tgm = torch.fx.symbolic_trace(tm)
    ex = ember.tensor(xs[0], requires_grad=True)
    tx = torch.tensor(xs[0], requires_grad=True)
    sum(o.sum() for o in _flat(gm(ex)) if isinstance(o, ember.Tensor)).backward()
    sum(o.sum() for o in _flat(tgm(tx)) if isinstance(o, torch.Tensor)).backward()
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-5)
    tparams = dict(tgm.named_parameters())
    for name, p in gm.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), tparams[name].grad.numpy(), rtol=1e-4,
                                   atol=1e-5, err_msg=name)


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_state_dict_is_the_traced_modules(program):
    _, em, _ = _pair(program)
    gm = ember.fx.symbolic_trace(em)
    assert list(gm.state_dict()) == list(em.state_dict())
    gstate = gm.state_dict()
    for k, v in em.state_dict().items():
        assert np.shares_memory(gstate[k].numpy(), v.numpy()), k


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_graph_str_matches_torch_fx(program):
    tm, em, _ = _pair(program)
    tstr = _torch_code_as_ember(str(torch.fx.symbolic_trace(tm).graph))
    estr = str(ember.fx.symbolic_trace(em).graph)
    # torch's layer classes live in torch.nn.modules..., ember's in ember.nn.modules...
    assert estr.replace("ember.nn.functional.", "F.") == tstr.replace("ember.nn.functional.", "F.")


def test_print_readable_matches_torch_fx():
    tm, em, _ = _pair(mlp)
    t = torch.fx.symbolic_trace(tm).print_readable(print_output=False)
    e = ember.fx.symbolic_trace(em).print_readable(print_output=False)
    assert e == _torch_code_as_ember(t)


def test_str_of_graph_module_matches_torch_fx():
    tm, em, _ = _pair(mlp)
    assert str(ember.fx.symbolic_trace(em)) == _torch_code_as_ember(str(torch.fx.symbolic_trace(tm)))


def test_operators_functions_and_methods_match_torch_fx():
    def program(lib):
        F = lib.nn.functional

        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.t = lib.ones(3)

            def forward(self, x, y):
                a = (2 + x, x - 1, 3 * x, x / 2, x // 2, x ** 2, 2 ** x, -x, x @ y, ~(x > 0),
                     x[:, 1:2, ..., None], x < 3, x == y, x != y, x >= 1, x <= 1)
                b = (self.t * x, self.t - x, self.t / x, self.t @ y, self.t < x, self.t == x,
                     self.t // x, self.t % x)
                c = (lib.cat([x, y], dim=0), lib.stack((x, y)), lib.max(x, dim=1), x.max(1)[0],
                     F.gelu(x), lib.sigmoid(x), F.layer_norm(x, (3,)), lib.sum(x, 1),
                     lib.matmul(x, y), x.transpose(0, 1).contiguous(), x.permute(1, 0),
                     F.softmax(x, dim=1), F.silu(x), F.mse_loss(x, y), x.float(),
                     x.to(lib.float64), x.dtype, x.ndim, x.T, x.reshape(-1), x.unsqueeze(0),
                     lib.split(x, 1), lib.zeros(3) + x, lib.where(x > 0, x, y))
                return a, b, c

        return program_module(M)

    def program_module(M):
        return M()

    tg = torch.fx.symbolic_trace(program(torch))
    eg = ember.fx.symbolic_trace(program(ember))
    assert _nodes(eg) == _nodes(tg)
    assert eg.code == _torch_code_as_ember(tg.code)
    x = np.random.default_rng(0).standard_normal((3, 3)).astype(np.float32)
    y = np.random.default_rng(1).standard_normal((3, 3)).astype(np.float32)
    for g, t in zip(_flat(eg(ember.tensor(x), ember.tensor(y))),
                    _flat(tg(torch.tensor(x), torch.tensor(y)))):
        if isinstance(t, torch.dtype):
            assert str(g).split(".")[-1] == str(t).split(".")[-1]
        else:
            _close(g, t)


def test_functional_kwargs_recorded_as_torch_fx_records_them():
    def program(lib):
        F = lib.nn.functional

        def f(x, t):
            return (F.relu(x), F.relu(x, True), F.dropout(x, 0.2), F.softmax(x, 1),
                    F.log_softmax(x, dim=0), F.cross_entropy(x, t), F.max_pool2d(x, 2),
                    F.embedding(t, x), F.adaptive_avg_pool2d(x, 1), F.normalize(x),
                    F.leaky_relu(x), F.pad(x, (1, 1)), F.interpolate(x, scale_factor=2.0))
        return f

    tg = torch.fx.symbolic_trace(program(torch))
    eg = ember.fx.symbolic_trace(program(ember))
    tnodes = [(n.name, n.args, dict(n.kwargs)) for n in tg.graph.nodes]
    enodes = [(n.name, n.args, dict(n.kwargs)) for n in eg.graph.nodes]
    assert [str(e) for e in enodes] == [str(t) for t in tnodes]


torch.fx.wrap("_wrapped_helper")
ember.fx.wrap("_wrapped_helper")


def test_concrete_args_and_wrap_match_torch_fx():
    def program(lib):
        class M(lib.nn.Module):
            def forward(self, x, flag=True, z=None):
                y = _wrapped_helper(x, 2)
                r = math.sqrt(x)
                if flag:
                    y = y + 1
                if z is None:
                    y = y * 2
                return y, r

        return M()

    tg = torch.fx.symbolic_trace(program(torch), concrete_args={"flag": True, "z": None})
    eg = ember.fx.symbolic_trace(program(ember), concrete_args={"flag": True, "z": None})
    assert _nodes(eg) == _nodes(tg)
    assert eg.code == _torch_code_as_ember(tg.code).replace("ember.fx._symbolic_trace.",
                                                            "ember.fx.tracer.")
    out = eg(ember.tensor([4.0]), True, None)
    np.testing.assert_allclose(out[0].numpy(), [14.0])
    with pytest.raises(AssertionError, match="flag has been specialized to have value True"):
        eg(ember.tensor([4.0]), False, None)


def _wrapped_helper(x, n):
    return x + n


def test_data_dependent_control_flow_raises_trace_error_naming_the_line():
    def program(lib):
        class M(lib.nn.Module):
            def forward(self, x):
                if x.sum() > 0:  # the line the error names
                    return x
                return -x
        return M()

    with pytest.raises(torch.fx.proxy.TraceError) as terr:
        torch.fx.symbolic_trace(program(torch))
    with pytest.raises(ember.fx.proxy.TraceError) as eerr:
        ember.fx.symbolic_trace(program(ember))
    assert str(eerr.value).startswith(str(terr.value))
    assert __file__ in str(eerr.value)
    assert "if x.sum() > 0:  # the line the error names" in str(eerr.value)


def test_graph_surgery_matches_torch_fx():
    results = {}
    for name, lib in LIBS.items():
        torch.manual_seed(0)
        model, _ = mlp(lib)
        gm = lib.fx.symbolic_trace(model)
        g = gm.graph
        for node in list(g.nodes):
            if node.op == "call_function" and node.name == "relu":
                with g.inserting_after(node):
                    new = g.call_function(lib.nn.functional.gelu, (node.args[0],))
                node.replace_all_uses_with(new)
                g.erase_node(node)
            if node.name == "dropout":
                with g.inserting_before(node):
                    extra = g.call_method("neg", (node.args[0],))
                    g.call_function(lib.sigmoid, (extra,))       # unused: dead code
        g.lint()
        assert g.eliminate_dead_code()
        gm.recompile()
        results[name] = (gm.code, _nodes(gm))
    assert results["ember"][0] == _torch_code_as_ember(results["torch"][0])
    assert results["ember"][1] == results["torch"][1]


def test_interpreter_and_transformer_match_torch_fx():
    outs = {}
    for name, lib in LIBS.items():
        torch.manual_seed(0)
        model, _ = mlp(lib)
        if name == "ember":
            model.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in
                                   mlp_state().items()})
        model.eval()
        gm = lib.fx.symbolic_trace(model)
        log_softmax = lib.nn.functional.log_softmax

        class Swap(lib.fx.Interpreter):
            def call_function(self, target, args, kwargs):
                if target is log_softmax:
                    return lib.sigmoid(args[0])
                return super().call_function(target, args, kwargs)

        class ToGelu(lib.fx.Transformer):
            def call_function(self, target, args, kwargs):
                if getattr(target, "__name__", "") == "relu":
                    return lib.nn.functional.gelu(args[0])
                return super().call_function(target, args, kwargs)

        x = lib.tensor(np.linspace(-1, 1, 24, dtype=np.float32).reshape(3, 8))
        new = ToGelu(gm).transform()
        outs[name] = (Swap(gm).run(x), lib.fx.Interpreter(gm).run(x), new(x), new.code,
                      _nodes(new))
    for i in range(3):
        _close(outs["ember"][i], outs["torch"][i])
    assert outs["ember"][3] == _torch_code_as_ember(outs["torch"][3])
    assert outs["ember"][4] == outs["torch"][4]


def mlp_state():
    torch.manual_seed(0)
    return mlp(torch)[0].state_dict()


def test_replace_pattern_matches_torch_fx():
    res = {}
    for name, lib in LIBS.items():
        def pattern(x, w):
            return lib.relu(lib.add(x, w))

        def replacement(x, w):
            return lib.sigmoid(lib.sub(x, w))

        class M(lib.nn.Module):
            def forward(self, x, w):
                a = lib.relu(lib.add(x, w))
                b = lib.relu(lib.add(a, 1.0))
                c = lib.add(b, w)
                return lib.relu(c) + a

        gm = lib.fx.symbolic_trace(M())
        matches = lib.fx.replace_pattern(gm, pattern, replacement)
        x = lib.tensor([[-1.0, 2.0]])
        w = lib.tensor([[0.5, -3.0]])
        res[name] = (len(matches), _nodes(gm), gm(x, w),
                     sorted(n.name for n in matches[0].nodes_map.values()), matches[0].anchor.name)
    assert res["ember"][0] == res["torch"][0] == 3
    assert res["ember"][1] == res["torch"][1]
    _close(res["ember"][2], res["torch"][2])
    assert res["ember"][3:] == res["torch"][3:]


def test_shape_prop_matches_torch_fx():
    tm, em, xs = _pair(cnn)
    tgm, egm = torch.fx.symbolic_trace(tm), ember.fx.symbolic_trace(em)
    torch.fx.passes.shape_prop.ShapeProp(tgm).propagate(torch.tensor(xs[0]))
    ShapeProp(egm).propagate(ember.tensor(xs[0]))
    for tn, en in zip(tgm.graph.nodes, egm.graph.nodes):
        assert ("tensor_meta" in tn.meta) == ("tensor_meta" in en.meta), en.name
        if "tensor_meta" not in tn.meta:
            continue
        t, e = tn.meta["tensor_meta"], en.meta["tensor_meta"]
        assert tuple(e.shape) == tuple(t.shape), en.name
        assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        assert tuple(e.stride) == tuple(t.stride), en.name
        assert e.requires_grad == t.requires_grad
        assert str(e.memory_format).split(".")[-1] == str(t.memory_format).split(".")[-1], en.name
        assert en.meta["type"].__name__ == tn.meta["type"].__name__


def test_tracer_subclass_leaf_modules_match_torch_fx():
    res = {}
    for name, lib in LIBS.items():
        torch.manual_seed(0)
        model, _ = transformer_block(lib)

        class AttentionLeaf(lib.fx.Tracer):
            def is_leaf_module(self, m, qualname):
                return type(m).__name__ == "Attention" or super().is_leaf_module(m, qualname)

        class Sequentials(lib.fx.Tracer):
            def is_leaf_module(self, m, qualname):
                return False if type(m).__name__ == "Sequential" else \
                    super().is_leaf_module(m, qualname)

        g1 = AttentionLeaf().trace(model)
        g2 = Sequentials().trace(model)
        res[name] = ([(n.op, n.name) for n in g1.nodes], [(n.op, n.name) for n in g2.nodes],
                     lib.fx.GraphModule(model, g1).code)
    assert res["ember"][:2] == res["torch"][:2]
    assert res["ember"][2] == _torch_code_as_ember(res["torch"][2])


# -- the benchmark models --------------------------------------------------------------------------
def _benchmark_inputs(name, module_name, rng):
    if name == "lstm_lm":
        return rng.integers(0, 10000, size=(7, 2))
    if name == "transformer_lm":
        return rng.integers(0, 1000, size=(2, 64))
    if name == "dcgan":
        shape = (2, 100, 1, 1) if module_name == "generator" else (2, 3, 32, 32)
    else:
        shape = {"mlp": (2, 784), "lenet": (2, 1, 28, 28)}.get(name, (2, 3, 32, 32))
    return rng.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("name", ["mlp", "lenet", "resnet20", "mobilenetv2", "lstm_lm",
                                  "transformer_lm", "dcgan"])
def test_benchmark_models_trace_like_torch_and_run_like_eager(name):
    from benchmarks.models import MODELS, copy_weights
    tw = MODELS[name](torch, batch=2)
    ew = MODELS[name](ember, batch=2)
    copy_weights(tw, ew)
    rng = np.random.default_rng(0)
    for module_name, em in ew.modules.items():
        tm = tw.modules[module_name]
        tm.eval()
        em.eval()
        tg, eg = torch.fx.symbolic_trace(tm), ember.fx.symbolic_trace(em)
        assert _nodes(eg) == _nodes(tg)
        assert eg.code == _torch_code_as_ember(tg.code)
        x = _benchmark_inputs(name, module_name, rng)
        with ember.no_grad():
            got, eager = eg(ember.tensor(x)), em(ember.tensor(x))
        np.testing.assert_array_equal(got.numpy(), eager.numpy())
        _close(got, tg(torch.tensor(x)))
