"""ember.fx behaviour that needs no torch oracle: the table and text formats (literals taken
from torch.fx), tracing leaving eager ember untouched, errors, GraphModule's copies and files,
and Graph editing."""
import copy
import importlib
import math
import subprocess
import sys
import types

import numpy as np
import pytest

import ember
import ember.fx
import ember.nn as nn
import ember.nn.functional as F
from ember.ops import _compiled_methods
from ember.fx import Graph, GraphModule, Interpreter, Proxy, Tracer, symbolic_trace
from ember.fx.proxy import TraceError


class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)

    def forward(self, x, k=1):
        return self.lin(x).sum(dim=k) + self.lin.bias[0]


def test_print_tabular_is_torch_fx_layout(capsys):
    symbolic_trace(Small()).graph.print_tabular()
    # torch.fx's print_tabular (through the tabulate package) prints exactly this
    assert capsys.readouterr().out == (
        "opcode         name      target                       args              kwargs\n"
        "-------------  --------  ---------------------------  ----------------  ----------\n"
        "placeholder    x         x                            ()                {}\n"
        "placeholder    k         k                            (1,)              {}\n"
        "call_module    lin       lin                          (x,)              {}\n"
        "call_method    sum_1     sum                          (lin,)            {'dim': k}\n"
        "get_attr       lin_bias  lin.bias                     ()                {}\n"
        "call_function  getitem   <built-in function getitem>  (lin_bias, 0)     {}\n"
        "call_function  add       <built-in function add>      (sum_1, getitem)  {}\n"
        "output         output    output                       (add,)            {}\n")


def test_graph_str_is_torch_fx_layout():
    assert str(symbolic_trace(Small()).graph) == """graph():
    %x : [num_users=1] = placeholder[target=x]
    %k : [num_users=1] = placeholder[target=k](default=1)
    %lin : [num_users=1] = call_module[target=lin](args = (%x,), kwargs = {})
    %sum_1 : [num_users=1] = call_method[target=sum](args = (%lin,), kwargs = {dim: %k})
    %lin_bias : [num_users=1] = get_attr[target=lin.bias]
    %getitem : [num_users=1] = call_function[target=operator.getitem](args = (%lin_bias, 0), kwargs = {})
    %add : [num_users=1] = call_function[target=operator.add](args = (%sum_1, %getitem), kwargs = {})
    return add"""


# -- tracing leaves eager ember as it was -------------------------------------------------------
def _snapshot():
    import ember.linalg
    import ember.special
    _compiled_methods.install()   # (Tensor's operators are put in place at their first use)
    mods = [ember, F, ember.special, ember.linalg, math, sys.modules[__name__]]
    snap = {id(m): dict(vars(m)) for m in mods}
    classes = {cls: dict(vars(cls)) for cls in (ember.Tensor, nn.Module)}
    return mods, snap, classes


def _assert_unchanged(mods, snap, classes):
    for m in mods:
        now = vars(m)
        before = snap[id(m)]
        assert now.keys() == before.keys(), m.__name__
        changed = [k for k in now if now[k] is not before[k]]
        assert not changed, (m.__name__, changed[:5])
    for cls, before in classes.items():
        now = dict(vars(cls))
        assert now.keys() == before.keys()
        assert not [k for k in now if now[k] is not before[k]], cls


class UsesEverything(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.register_buffer("b", ember.ones(3))

    def forward(self, x):
        y = F.relu(self.lin(x)) + self.b
        y = ember.tanh(y) * self.b + math.sqrt(2.0)
        return ember.special.expit(y).sum(-1)


def test_tracing_restores_every_patched_function_and_method():
    state = _snapshot()
    gm = symbolic_trace(UsesEverything())
    _assert_unchanged(*state)
    assert [n.name for n in gm.graph.nodes] == ["x", "lin", "relu", "b", "add", "tanh", "b_1",
                                               "mul", "add_1", "sigmoid", "sum_1", "output"]


def test_a_trace_that_raises_restores_everything_too():
    class Bad(UsesEverything):
        def forward(self, x):
            y = F.relu(self.lin(x)) + self.b
            if y.sum() > 0:
                return y
            return -y

    state = _snapshot()
    with pytest.raises(TraceError):
        symbolic_trace(Bad())
    _assert_unchanged(*state)


def test_eager_calls_run_the_original_functions_after_a_trace():
    _compiled_methods.install()
    orig_relu, orig_add = F.relu, ember.Tensor.__add__
    symbolic_trace(UsesEverything())
    assert F.relu is orig_relu and ember.relu is orig_relu
    assert ember.Tensor.__add__ is orig_add
    assert not hasattr(F.relu, "__fx_original__")
    assert not ember.fx.is_fx_tracing()


def test_importing_ember_does_not_import_fx():
    code = ("import sys, ember; assert 'ember.fx' not in sys.modules; "
            "assert ember.fx.symbolic_trace; assert 'ember.fx' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_is_fx_tracing_inside_a_trace():
    seen = []

    class M(nn.Module):
        def forward(self, x):
            seen.append(ember.fx.is_fx_tracing())
            return x + 1

    symbolic_trace(M())
    assert seen == [True]


# -- errors ---------------------------------------------------------------------------------------
def test_iterating_a_proxy_raises_trace_error_unpacking_does_not():
    class Loop(nn.Module):
        def forward(self, x):
            for row in x:
                x = x + row
            return x

    class Unpack(nn.Module):
        def forward(self, x):
            a, b = x
            return a - b

    with pytest.raises(TraceError, match="Proxy object cannot be iterated") as err:
        symbolic_trace(Loop())
    assert "for row in x:" in str(err.value)
    gm = symbolic_trace(Unpack())
    assert [n.name for n in gm.graph.nodes] == ["x", "getitem", "getitem_1", "sub", "output"]
    np.testing.assert_array_equal(gm(ember.tensor([[1.0, 2.0], [3.0, 5.0]])).numpy(), [-2.0, -3.0])


def test_len_of_a_proxy_says_to_wrap_len():
    class M(nn.Module):
        def forward(self, x):
            return x * len(x)

    with pytest.raises(RuntimeError, match=r"'len' is not supported in symbolic tracing"):
        symbolic_trace(M())


def test_bad_inputs_raise_torch_fx_errors():
    with pytest.raises(TypeError, match="Module or a function"):
        symbolic_trace(3)
    with pytest.raises(RuntimeError, match="Tracing expected 2 arguments but got 1 concrete"):
        symbolic_trace(Small(), concrete_args=(1,))
    with pytest.raises(RuntimeError, match="'kk', which is not a parameter"):
        symbolic_trace(Small(), concrete_args={"kk": 1})
    with pytest.raises(NotImplementedError, match="wrap must be called at the top level"):
        ember.fx.wrap("len")
    with pytest.raises(RuntimeError, match="Unsupported type for global function"):
        ember.fx.wrap(3)
    g = Graph()
    with pytest.raises(ValueError, match="op 'jump' is not one of"):
        g.create_node("jump", "x")
    with pytest.raises(ValueError, match="but a Callable is expected"):
        g.call_function("not callable")
    x = g.placeholder("x")
    y = g.call_method("neg", (x,))
    g.output(y)
    with pytest.raises(RuntimeError, match="Tried to erase Node x but it still had 1 users"):
        g.erase_node(x)
    with pytest.raises(NotImplementedError, match="argument of type"):
        Tracer().create_arg(object())


def test_lint_names_the_argument_used_before_definition():
    g = Graph()
    x = g.placeholder("x")
    a = g.call_method("neg", (x,))
    b = g.call_method("exp", (a,))
    g.output(b)
    g.lint()
    a.args = (b,)          # now a cycle: a uses b, defined after it
    with pytest.raises(RuntimeError, match="Argument 'exp' of Node 'neg' was used before it has been defined"):
        g.lint()


def test_lint_checks_targets_of_the_owning_module():
    gm = symbolic_trace(Small())
    node = next(n for n in gm.graph.nodes if n.op == "call_module")
    node.target = "nothere"
    with pytest.raises(RuntimeError, match="references nonexistent attribute nothere"):
        gm.graph.lint()


# -- Graph editing --------------------------------------------------------------------------------
def test_graph_built_by_hand_runs():
    g = Graph()
    x = g.placeholder("x")
    w = g.placeholder("w", default_value=2.0)
    m = g.call_function(ember.mul, (x, w))
    r = g.call_method("relu", (m,))
    g.output((r, m))
    gm = GraphModule(nn.Module(), g)
    assert gm.code == ("\n\n\ndef forward(self, x, w = 2.0):\n    mul = ember.mul(x, w);  x = w = None\n"
                       "    relu = mul.relu()\n    return (relu, mul)\n    ")
    out = gm(ember.tensor([-1.0, 3.0]))
    np.testing.assert_array_equal(out[0].numpy(), [0.0, 6.0])
    assert len(g.nodes) == 5
    assert [n.name for n in reversed(g.nodes)] == ["output", "relu", "mul", "w", "x"]
    assert g.find_nodes(op="call_method", target="relu") == [r]
    assert x.next is w and r.prev is m
    assert list(m.users) == [r, next(iter(r.users))]
    assert m.all_input_nodes == [x, w]


def test_node_argument_editing_keeps_users_consistent():
    g = Graph()
    x = g.placeholder("x")
    y = g.placeholder("y")
    a = g.call_function(ember.add, (x, x))
    g.output(a)
    a.update_arg(1, y)
    assert a.args == (x, y) and list(y.users) == [a]
    a.replace_input_with(x, y)
    assert a.args == (y, y) and not x.users
    a.update_kwarg("alpha", 2)
    assert a.kwargs == {"alpha": 2}
    g.lint()
    gm = GraphModule(nn.Module(), g)
    np.testing.assert_array_equal(gm(ember.tensor([1.0]), ember.tensor([3.0])).numpy(), [9.0])
    with pytest.raises(NotImplementedError, match="does not support mutation"):
        b = g.call_function(ember.cat, ([x, y],))
        b.args[0].append(x)


def test_eliminate_dead_code_keeps_impure_nodes():
    g = Graph()
    x = g.placeholder("x")
    g.call_method("neg", (x,))                                   # dead
    g.call_function(ember._assert, (True, "kept"))               # side effect: kept
    g.output(x)
    assert g.eliminate_dead_code()
    assert [n.op for n in g.nodes] == ["placeholder", "call_function", "output"]
    assert not g.eliminate_dead_code()


def test_node_copy_graph_copy_and_deepcopy_of_a_graph():
    gm = symbolic_trace(Small())
    g2 = copy.deepcopy(gm.graph)
    assert [n.name for n in g2.nodes] == [n.name for n in gm.graph.nodes]
    assert all(n.graph is g2 for n in g2.nodes)
    g2.lint()
    gm2 = GraphModule(gm, g2)
    x = ember.tensor([[1.0, 2.0]])
    np.testing.assert_array_equal(gm2(x).detach().numpy(), gm(x).detach().numpy())


# -- GraphModule ----------------------------------------------------------------------------------
def test_graph_module_deepcopy_is_independent():
    gm = symbolic_trace(Small())
    gm2 = copy.deepcopy(gm)
    assert type(gm2).__name__ == "Small" and type(gm2) is not type(gm)
    assert gm2.code == gm.code
    with ember.no_grad():
        gm2.lin.weight.fill_(0.0)
    assert float(gm.lin.weight.detach().abs().sum()) > 0
    x = ember.tensor([[1.0, 2.0]])
    expected = gm2.lin.bias.sum() + gm2.lin.bias[0]
    np.testing.assert_allclose(gm2(x).detach().numpy(), expected.detach().numpy()[None])


def test_recompile_after_editing_the_graph():
    gm = symbolic_trace(Small())
    add = next(n for n in gm.graph.nodes if n.name == "add")
    add.target = __import__("operator").sub
    gm.recompile()
    assert "sub" not in gm.code.split("add = ")[0]
    assert "add = sum_1 - getitem" in gm.code
    x = ember.tensor([[1.0, 2.0]])
    expected = gm.lin(x).sum(dim=1) - gm.lin.bias[0]
    np.testing.assert_allclose(gm(x).detach().numpy(), expected.detach().numpy())


def test_to_folder_writes_an_importable_module(tmp_path):
    class WithBuffers(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 2)
            self.act = nn.ReLU()
            self.register_buffer("keep", ember.arange(2.0))
            self.register_buffer("scratch", ember.full((2,), 3.0), persistent=False)

        def forward(self, x):
            return self.act(self.lin(x)) + self.keep * self.scratch

    gm = symbolic_trace(WithBuffers())
    with pytest.warns(UserWarning, match="saved as pickled files instead: \\['act'\\]"):
        gm.to_folder(tmp_path / "exported", "Exported")
    sys.path.insert(0, str(tmp_path))
    try:
        mod = importlib.import_module("exported")
        loaded = mod.Exported()
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("exported", None)
        sys.modules.pop("exported.module", None)
    x = ember.tensor([[1.0, -2.0, 0.5]])
    np.testing.assert_allclose(loaded(x).detach().numpy(), gm(x).detach().numpy())
    assert list(loaded.state_dict()) == list(gm.state_dict())


def test_print_readable_and_str():
    gm = symbolic_trace(Small())
    text = gm.print_readable(print_output=False)
    assert text.startswith("class Small(ember.nn.Module):\n    def forward(self, x, k = 1):\n"
                           "        # No stacktrace found for following nodes\n")
    assert str(gm).endswith("# To see more debug info, please use `graph_module.print_readable()`")


def test_generated_code_shows_in_tracebacks():
    class M(nn.Module):
        def forward(self, x):
            return ember.mm(x, x)

    gm = symbolic_trace(M())
    with pytest.raises(Exception) as err:
        gm(ember.ones(2, 3))
    frames = [f for f in err.traceback if str(f.path).startswith("<eval_with_key>")]
    assert frames and "ember.mm(x, x)" in str(frames[0].statement)


# -- Tracer subclasses, Proxies by hand ----------------------------------------------------------
def test_tracer_subclass_hooks():
    calls = []

    class Counting(Tracer):
        record_stack_traces = True

        def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None,
                         proxy_factory_fn=None):
            calls.append(kind)
            return super().create_proxy(kind, target, args, kwargs, name, type_expr,
                                        proxy_factory_fn)

        def is_leaf_module(self, m, qualname):
            return False    # trace through ember's own Linear too

    g = Counting().trace(Small())
    assert calls[0] == "placeholder" and "call_module" not in calls
    assert any(n.op == "call_function" and n.target is F.linear for n in g.nodes)
    assert "test_fx_plain.py" in next(n for n in g.nodes if n.op == "call_function").stack_trace


def test_proxy_on_a_hand_made_graph():
    g = Graph()
    x = Proxy(g.placeholder("x"))
    y = ember.relu(x) if False else (x * 2).relu()     # no trace running: methods and operators
    g.output(y.node)
    gm = GraphModule(nn.Module(), g)
    np.testing.assert_array_equal(gm(ember.tensor([-1.0, 2.0])).numpy(), [0.0, 4.0])
    assert repr(y) == "Proxy(relu)"


def test_nn_module_stack_meta():
    class Outer(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = Small()

        def forward(self, x):
            return self.inner(x) * 2

    gm = symbolic_trace(Outer())
    lin = next(n for n in gm.graph.nodes if n.op == "call_module")
    assert lin.name == "inner_lin" and lin.target == "inner.lin"
    assert list(lin.meta["nn_module_stack"]) == ["inner", "inner.lin"]
    mul = next(n for n in gm.graph.nodes if n.name == "mul")
    assert "nn_module_stack" not in mul.meta


def test_tracing_a_function_with_ember_functions_imported_by_name():
    from ember.nn.functional import gelu

    ns = {"gelu": gelu, "ember": ember}
    exec("def f(x, y):\n    return gelu(x) + ember.exp(y)\n", ns)
    gm = symbolic_trace(ns["f"])
    assert [(n.op, n.name) for n in gm.graph.nodes] == [
        ("placeholder", "x"), ("placeholder", "y"), ("call_function", "gelu"),
        ("call_function", "exp"), ("call_function", "add"), ("output", "output")]
    assert ns["gelu"] is gelu
    assert isinstance(gm, GraphModule) and type(gm).__name__ == "f"


def test_interpreter_boxed_run_and_initial_env():
    gm = symbolic_trace(Small())
    x = ember.tensor([[1.0, 2.0]])
    expected = gm(x)
    args = [x, 1]
    np.testing.assert_array_equal(Interpreter(gm).boxed_run(args).detach().numpy(),
                                  expected.detach().numpy())
    assert args == []
    lin = next(n for n in gm.graph.nodes if n.name == "lin")
    out = Interpreter(gm).run(x, initial_env={lin: ember.zeros(1, 2)})
    np.testing.assert_array_equal(out.detach().numpy(), gm.lin.bias[0].detach().numpy()[None])


def test_interpreter_error_names_the_node():
    class M(nn.Module):
        def forward(self, x):
            return ember.mm(x, x)

    gm = symbolic_trace(M())
    with pytest.raises(Exception, match="While executing %mm"):
        Interpreter(gm).run(ember.ones(2, 3))


def test_patched_wrappers_are_functions_of_the_originals():
    from ember.fx._patching import ember_function_wrapper
    w = ember_function_wrapper(ember.exp, "ember")
    assert w.__fx_original__ is ember.exp and isinstance(w, types.FunctionType)
    np.testing.assert_allclose(w(ember.zeros(1)).numpy(), [1.0])
