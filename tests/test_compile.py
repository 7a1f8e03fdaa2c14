"""ember.compile against eager ember, and its behaviour against torch.compile's where cheap:
the API (decorator forms, OptimizedModule, Module.compile, backends, bad arguments),
guards and recompiles (counted by a backend that counts its calls, in both libraries), graph
breaks (correct, logged, fullgraph raises), randomness stays fresh, ember.compiler's controls."""
import logging
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch._dynamo

import ember
import ember._dynamo
import ember.compiler

LIBS = {"torch": torch, "ember": ember}


@pytest.fixture(autouse=True)
def _fresh_caches():
    ember.compiler.reset()
    torch._dynamo.reset()
    yield
    ember.compiler.reset()
    torch._dynamo.reset()


def counting_backend(calls):
    def backend(gm, example_inputs):
        calls.append(gm)
        return gm.forward
    return backend


def _np(t):
    return t.detach().numpy()


# -- the API -------------------------------------------------------------------------------------
def test_import_ember_does_not_import_the_compile_machinery():
    code = ("import sys, ember; print(any(m.startswith(('ember._dynamo', 'ember.compiler', "
            "'ember.fx', 'ember.jit')) for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("lib_name", ["torch", "ember"])
def test_decorator_forms(lib_name):
    lib = LIBS[lib_name]

    compile_ = lib.compile if lib is ember else lib.compile(backend="eager")

    @compile_
    def plain(x):
        return x.sin() * 2

    @lib.compile(backend="eager", dynamic=False)
    def with_args(x):
        return x.cos() + 1

    @lib.compile(backend="eager")
    def empty_call(x):
        return x - 3

    x = lib.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(_np(plain(x)), np.sin(np.arange(6.0)).reshape(2, 3) * 2,
                               rtol=1e-6)
    np.testing.assert_allclose(_np(with_args(x)), np.cos(np.arange(6.0)).reshape(2, 3) + 1,
                               rtol=1e-6)
    np.testing.assert_allclose(_np(empty_call(x)), np.arange(6.0).reshape(2, 3) - 3)
    assert plain.__name__ == "plain"
    assert ember.compile()(plain.__wrapped__)(x).shape == x.shape if lib is ember else True


def test_compiled_method_of_a_module_class():
    class Net(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = ember.nn.Linear(3, 2)

        @ember.compile(backend="eager")
        def forward(self, x):
            return ember.relu(self.fc(x)) + self.fc.bias

    net = Net()
    x = ember.randn(4, 3)
    expected = ember.relu(net.fc(x)) + net.fc.bias
    for _ in range(2):
        np.testing.assert_allclose(_np(net(x)), _np(expected), rtol=1e-6)


def _two_layers(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Linear(8, 2))


def test_optimized_module_state_dict_keys_and_attributes_as_torch():
    em, tm = _two_layers(ember), _two_layers(torch)
    eo, to = ember.compile(em), torch.compile(tm)
    assert type(eo).__name__ == type(to).__name__ == "OptimizedModule"
    assert list(eo.state_dict()) == list(to.state_dict())
    assert eo._orig_mod is em
    em.custom, tm.custom = 5, 5                 # attributes come from the original module
    assert eo.custom == to.custom == 5
    assert [n for n, _ in eo.named_parameters()] == [n for n, _ in to.named_parameters()]
    eo.eval()
    assert not em.training and not em[0].training


def test_module_compile_in_place_keeps_the_module_and_its_keys():
    em = _two_layers(ember)
    keys = list(em.state_dict())
    x = ember.randn(5, 4)
    expected = em(x)
    assert em.compile(backend="eager") is None
    assert list(em.state_dict()) == keys
    for _ in range(2):
        np.testing.assert_allclose(_np(em(x)), _np(expected), rtol=1e-6)
    assert len(em.forward._ember_compiled.entries) == 1


def test_backends_and_bad_arguments_as_torch():
    for name in ("eager", "aot_eager", "inductor"):
        f = ember.compile(lambda x: x * 2, backend=name)
        np.testing.assert_allclose(_np(f(ember.ones(2))), [2, 2])
    for lib in LIBS.values():
        with pytest.raises(RuntimeError, match="Invalid backend: 'xyz'") as info:
            lib.compile(lambda x: x, backend="xyz")
        assert type(info.value).__name__ == "InvalidBackend"
        with pytest.raises(RuntimeError, match="Unrecognized mode=foo"):
            lib.compile(lambda x: x, mode="foo")
        with pytest.raises(RuntimeError, match="Either mode or options"):
            lib.compile(lambda x: x, mode="default", options={})
        with pytest.raises(AssertionError, match="A callable function is expected"):
            lib.compile(3)
    with pytest.raises(ember._dynamo.exc.InvalidBackend, match="torch backend that ember "
                       "does not have.*aot_eager, eager, inductor"):
        ember.compile(lambda x: x, backend="cudagraphs")
    assert ember.compiler.list_backends() == ["inductor"]
    assert ember.compiler.list_backends(exclude_tags=()) == ["aot_eager", "eager", "inductor"]


def test_disable_returns_the_model():
    def f(x):
        return x
    assert ember.compile(f, disable=True) is f


def test_callable_backend_receives_a_graph_module_and_the_inputs():
    seen = []

    def backend(gm, example_inputs):
        seen.append((gm, example_inputs))
        return gm.forward

    f = ember.compile(lambda x, y: ember.tanh(x) @ y, backend=backend)
    x, y = ember.randn(2, 3), ember.randn(3, 4)
    out = f(x, y)
    gm, inputs = seen[0]
    assert isinstance(gm, ember.fx.GraphModule)
    assert inputs[0] is x and inputs[1] is y
    assert [n.op for n in gm.graph.nodes] == ["placeholder", "placeholder", "call_function",
                                              "call_function", "output"]
    np.testing.assert_allclose(_np(out), _np(ember.tanh(x) @ y), rtol=1e-6)


def test_a_failing_backend_raises_backend_compiler_failed():
    def broken(gm, example_inputs):
        raise ValueError("no")

    f = ember.compile(lambda x: x + 1, backend=broken)
    with pytest.raises(ember._dynamo.exc.BackendCompilerFailed, match="ValueError: no"):
        f(ember.ones(2))


def test_replay_runs_the_graph_not_the_python_function():
    calls = []

    def f(x):
        calls.append(1)
        return x * 3

    g = ember.compile(f, backend="eager")
    for _ in range(3):
        np.testing.assert_allclose(_np(g(ember.ones(2))), [3, 3])
    assert len(calls) == 1


# -- guards and recompiles, counted as torch counts them --------------------------------------------
def _count(lib, fn, calls_inputs, **kwargs):
    calls = []
    compiled = lib.compile(fn, backend=counting_backend(calls), **kwargs)
    for make in calls_inputs:
        make(compiled)
    return len(calls)


@pytest.mark.parametrize("case", ["auto_dynamic", "static_limit", "dtype", "requires_grad",
                                  "grad_mode", "dynamic_true"])
def test_recompile_counts_match_torch(case):
    def f(x):
        return x * 2 + 1

    def shapes(sizes):
        return [lambda c, n=n, lib=lib: c(lib.ones(n)) for n in sizes]

    counts = {}
    for name, lib in LIBS.items():
        kwargs = {}
        if case == "auto_dynamic":
            inputs = shapes([2, 3, 4, 5])
        elif case == "static_limit":
            inputs, kwargs = shapes(range(2, 14)), {"dynamic": False}
        elif case == "dynamic_true":
            inputs, kwargs = shapes([3, 4, 5]), {"dynamic": True}
        elif case == "dtype":
            inputs = [lambda c, dt=dt, lib=lib: c(lib.ones(3, dtype=getattr(lib, dt)))
                      for dt in ("float32", "float64", "float16", "float32")]
        elif case == "requires_grad":
            inputs = [lambda c, lib=lib: c(lib.ones(3)),
                      lambda c, lib=lib: c(lib.ones(3, requires_grad=True)),
                      lambda c, lib=lib: c(lib.ones(3))]
        else:
            def no_grad_call(c, lib=lib):
                with lib.no_grad():
                    c(lib.ones(3, requires_grad=True))
            inputs = [lambda c, lib=lib: c(lib.ones(3, requires_grad=True)), no_grad_call]
        counts[name] = _count(lib, f, inputs, **kwargs)
    assert counts["ember"] == counts["torch"]


def test_training_flag_is_a_guard_as_torch():
    counts = {}
    for name, lib in LIBS.items():
        lib.manual_seed(0)
        calls = []
        m = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Dropout(0.5))
        om = lib.compile(m, backend=counting_backend(calls))
        x = lib.ones(3, 2)
        om(x), om(x)
        om.eval()
        out1, out2 = om(x), om(x)
        np.testing.assert_allclose(_np(out1), _np(out2))
        om.train()
        om(x)
        counts[name] = len(calls)
    assert counts["ember"] == counts["torch"] == 2


def test_dynamic_graph_replays_at_other_batch_sizes():
    calls = []
    m = _two_layers(ember)

    def f(x):
        return m(x).view(x.size(0), -1).sum(1, keepdim=True) * x.shape[0]

    g = ember.compile(f, backend=counting_backend(calls))
    for n in (2, 3, 7, 11):
        x = ember.randn(n, 4)
        np.testing.assert_allclose(_np(g(x)), _np(f(x)), rtol=1e-5)
    assert len(calls) == 2


def test_size_specialization_keeps_graphs_static():
    calls = []

    def f(x):
        if x.size(0) > 4:
            return x * 2
        return x * 3

    g = ember.compile(f, backend=counting_backend(calls))
    for n in (2, 3, 5, 6):
        x = ember.ones(n)
        np.testing.assert_allclose(_np(g(x)), _np(f(x)))
    assert len(calls) == 4


def test_recompile_reasons_and_the_limit_are_logged(caplog):
    def f(x):
        return x + 1

    g = ember.compile(f, backend="eager", dynamic=False)
    with caplog.at_level(logging.INFO, logger="ember._dynamo"):
        for n in range(2, 13):
            np.testing.assert_allclose(_np(g(ember.ones(n))), np.full(n, 2.0))
    text = caplog.text
    assert "Recompiling function f in" in text
    assert "- 0/0: tensor 'x' size mismatch at index 0. expected 2, actual 3" in text.replace(
        f"{g._ember_compiled.frame_id}/0", "0/0")
    limit = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(limit) == 1
    assert "hit config.recompile_limit (8)" in limit[0].getMessage()
    assert "function: 'f'" in limit[0].getMessage()
    frame = g._ember_compiled.frame_id
    assert (f"last reason: {frame}/7: tensor 'x' size mismatch at index 0. expected 9, "
            f"actual 10") in limit[0].getMessage()
    assert len(g._ember_compiled.entries) == 8


def test_recompile_limit_is_configurable_under_both_names():
    saved = ember._dynamo.config.recompile_limit
    try:
        ember._dynamo.config.cache_size_limit = 2
        assert ember._dynamo.config.recompile_limit == 2
        g = ember.compile(lambda x: x * 2, backend="eager", dynamic=False)
        for n in range(2, 6):
            g(ember.ones(n))
        assert len(g._ember_compiled.entries) == 2
    finally:
        ember._dynamo.config.recompile_limit = saved


def test_reassigned_parameter_recaptures():
    m = ember.nn.Linear(2, 2)

    class Wrapper(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = m

        def forward(self, x):
            return x @ self.m.weight.t()

    w = Wrapper()
    om = ember.compile(w, backend="eager")
    x = ember.ones(1, 2)
    om(x)
    m.weight = ember.nn.Parameter(ember.full((2, 2), 5.0))
    np.testing.assert_allclose(_np(om(x)), [[10.0, 10.0]])
    assert len(om._compiled.entries) == 2


def test_inputs_and_python_scalars_are_guarded():
    calls = []
    g = ember.compile(lambda x, k: x * k, backend=counting_backend(calls))
    np.testing.assert_allclose(_np(g(ember.ones(2), 2)), [2, 2])
    np.testing.assert_allclose(_np(g(ember.ones(2), 3)), [3, 3])
    np.testing.assert_allclose(_np(g(ember.ones(2), 3)), [3, 3])
    assert len(calls) == 2


# -- graph breaks ----------------------------------------------------------------------------------
def _branchy(x):
    if x.sum() > 0:
        return x * 2
    return x - 1


def test_graph_break_on_tensor_condition_stays_correct_and_is_logged(caplog):
    g = ember.compile(_branchy, backend="eager")
    with caplog.at_level(logging.INFO, logger="ember._dynamo"):
        for sign in (1, -1, 1, -1):
            x = ember.ones(3) * sign
            np.testing.assert_allclose(_np(g(x)), _np(_branchy(x)))
    assert f"Graph break in user code at {__file__}:" in caplog.text
    assert "a tensor converted to a Python boolean" in caplog.text
    compiled = g._ember_compiled
    assert compiled.graph_break.lineno == _branchy.__code__.co_firstlineno + 1
    assert compiled.graph_breaks == 4 and compiled.entries == []


@pytest.mark.parametrize("kind", ["item", "tolist", "print", "iterate", "int"])
def test_value_uses_break_the_graph(kind, capsys):
    def f(x):
        if kind == "item":
            return x * x.max().item()
        if kind == "tolist":
            return x + len([v for v in x.tolist() if v > 0])
        if kind == "print":
            print(x)
            return x + 1
        if kind == "iterate":
            return ember.stack([row * 2 for row in x])
        return x * int(x[0])

    g = ember.compile(f, backend="eager")
    for x in (ember.tensor([1.0, -2.0, 3.0]), ember.tensor([4.0, 5.0, -6.0])):
        np.testing.assert_allclose(_np(g(x)), _np(f(x)))
    assert g._ember_compiled.graph_break is not None
    if kind == "print":
        assert capsys.readouterr().out.count("tensor(") == 4


def test_fullgraph_raises_unsupported_naming_the_line_as_torch():
    for lib in LIBS.values():
        g = lib.compile(_branchy, backend="eager", fullgraph=True)
        with pytest.raises(RuntimeError) as info:
            g(lib.ones(3))
        assert type(info.value).__name__ == "Unsupported"
    with pytest.raises(ember._dynamo.exc.Unsupported,
                       match=f"{__file__}:{_branchy.__code__.co_firstlineno + 1}"):
        ember.compile(_branchy, fullgraph=True)(ember.ones(3))


def test_compiler_disable_breaks_and_is_compiling():
    seen = []

    @ember.compiler.disable
    def helper(x):
        seen.append(ember.compiler.is_compiling())
        return x + 1

    def f(x):
        seen.append(ember.compiler.is_compiling())
        return helper(x) * 2

    g = ember.compile(f, backend="eager")
    np.testing.assert_allclose(_np(g(ember.ones(2))), [4, 4])
    assert seen[0] is True
    assert g._ember_compiled.graph_break is not None
    assert "ember.compiler.disable" in g._ember_compiled.graph_break.reason
    assert not ember.compiler.is_compiling()
    with pytest.raises(ember._dynamo.exc.Unsupported, match="helper"):
        ember.compile(f, fullgraph=True)(ember.ones(2))


def test_explain_counts_graphs_and_breaks():
    out = ember._dynamo.explain(lambda x: ember.relu(x) + 1)(ember.ones(3))
    assert out.graph_count == 1 and out.graph_break_count == 0 and out.op_count == 2
    out = ember._dynamo.explain(_branchy)(ember.ones(3))
    assert out.graph_count == 0 and out.graph_break_count == 1
    assert "Graph Break Count: 1" in str(out)


def test_reset_forgets_graphs():
    calls = []
    g = ember.compile(lambda x: x + 1, backend=counting_backend(calls))
    g(ember.ones(2))
    ember.compiler.reset()
    g(ember.ones(2))
    assert len(calls) == 2


# -- values the replay must make afresh ------------------------------------------------------------
def test_random_calls_draw_fresh_numbers_on_replay():
    def f(x):
        return x + ember.randn(3) + ember.nn.functional.dropout(ember.ones(3), 0.5)

    g = ember.compile(f, backend="eager")
    outs = [_np(g(ember.zeros(3))) for _ in range(4)]
    assert len(g._ember_compiled.entries) == 1
    assert not all(np.array_equal(outs[0], o) for o in outs[1:])


def test_factory_results_are_fresh_tensors():
    def f(x):
        buf = ember.zeros(3)
        buf[0] = x.sum()
        return buf

    g = ember.compile(f, backend="eager")
    a = g(ember.ones(2))
    b = g(ember.ones(2) * 2)
    assert a is not b
    np.testing.assert_allclose(_np(a), [2, 0, 0])
    np.testing.assert_allclose(_np(b), [4, 0, 0])


def test_nested_compiled_functions_and_jit_trace_record_through():
    inner = ember.compile(lambda x: x.exp(), backend="eager")
    outer = ember.compile(lambda x: inner(x) + 1, backend="eager")
    x = ember.randn(3)
    np.testing.assert_allclose(_np(outer(x)), _np(x.exp() + 1), rtol=1e-6)
    assert inner._ember_compiled.entries == []
    traced = ember.jit.trace(lambda x: inner(x) * 2, (x,))
    np.testing.assert_allclose(_np(traced(x)), _np(x.exp() * 2), rtol=1e-6)


def test_a_break_in_a_submodule_runs_that_submodule_eagerly_inside_the_graph(caplog):
    class Gate(ember.nn.Module):
        def forward(self, x):
            if x.mean() > 0:
                return x * 2
            return x - 1

    class Net(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = ember.nn.Linear(3, 3)
            self.gate = Gate()
            self.fc2 = ember.nn.Linear(3, 2)

        def forward(self, x):
            return self.fc2(self.gate(ember.relu(self.fc1(x))))

    net = Net()
    om = ember.compile(net, backend="eager")
    with caplog.at_level(logging.INFO, logger="ember._dynamo"):
        for sign in (1, -1, 1, 1, -1):
            x = ember.randn(4, 3) * sign
            np.testing.assert_allclose(_np(om(x)), _np(net(x)), rtol=1e-6)
    compiled = om._compiled
    assert compiled.graph_break is None
    assert len(compiled.entries) == 1
    gm = compiled.entries[0].graph_module
    assert [n.target for n in gm.graph.nodes if n.op == "call_module"] == ["fc1", "gate", "fc2"]
    assert "The submodule Gate runs eagerly" in caplog.text


def test_python_attributes_of_the_module_are_guarded_as_torch():
    counts = {}
    for name, lib in LIBS.items():
        class Scaled(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.scale = 2.0

            def forward(self, x):
                return x * self.scale

        calls = []
        m = Scaled()
        om = lib.compile(m, backend=counting_backend(calls))
        x = lib.ones(2)
        np.testing.assert_allclose(_np(om(x)), [2, 2])
        m.scale = 3.0
        np.testing.assert_allclose(_np(om(x)), [3, 3])
        np.testing.assert_allclose(_np(om(x)), [3, 3])
        counts[name] = len(calls)
    assert counts["ember"] == counts["torch"] == 2


def test_autocast_applies_when_a_graph_replays():
    w = ember.randn(4, 4)
    g = ember.compile(lambda x: x @ w, backend="eager")
    x = ember.randn(2, 4)
    assert g(x).dtype == ember.float32
    with ember.autocast("cpu", dtype=ember.bfloat16):
        eager = x @ w
        assert g(x).dtype == eager.dtype == ember.bfloat16
    assert g(x).dtype == ember.float32


def test_set_stance_as_torch():
    for lib in LIBS.values():
        calls = []
        f = lib.compile(lambda x: x + 1, backend=counting_backend(calls), dynamic=False)
        with lib.compiler.set_stance("force_eager"):
            np.testing.assert_allclose(_np(f(lib.ones(2))), [2, 2])
        assert calls == []
        f(lib.ones(2))
        with lib.compiler.set_stance("fail_on_recompile"):
            f(lib.ones(2))
            with pytest.raises(RuntimeError, match="(?s)Detected recompile when .* stance is "
                               "'fail_on_recompile'.*size mismatch at index 0. expected 2, "
                               "actual 3"):
                f(lib.ones(3))
        with lib.compiler.set_stance("eager_on_recompile"):
            np.testing.assert_allclose(_np(f(lib.ones(4))), [2, 2, 2, 2])
        assert len(calls) == 1
    with pytest.raises(RuntimeError, match="Unknown stance"):
        ember.compiler.set_stance("bogus")


def test_compiler_compile_and_is_exporting():
    seen = []

    def f(x):
        seen.append(ember.compiler.is_exporting())
        return x * 2

    np.testing.assert_allclose(_np(ember.compiler.compile(f, backend="eager")(ember.ones(2))),
                               [2, 2])

    class M(ember.nn.Module):
        def forward(self, x):
            return f(x)

    ember.export.export(M(), (ember.ones(2),))
    assert seen == [False, True]


def test_outputs_a_graph_cannot_return_break_to_eager():
    class Result:
        def __init__(self, value):
            self.value = value

    def f(x):
        return Result(x * 2)

    g = ember.compile(f, backend="eager")
    for _ in range(2):
        np.testing.assert_allclose(_np(g(ember.ones(2)).value), [2, 2])
    assert "returns a Result" in g._ember_compiled.graph_break.reason
    h = ember.compile(lambda x: {"y": x * 2, "name": "y", "shape": x.shape}, backend="eager")
    for _ in range(2):
        out = h(ember.ones(2))
    assert out["name"] == "y" and tuple(out["shape"]) == (2,)
    assert h._ember_compiled.graph_break is None


def test_setting_a_module_attribute_in_forward_runs_eagerly():
    class Counter(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.calls = 0

        def forward(self, x):
            self.calls += 1
            return x + self.calls

    m = Counter()
    om = ember.compile(m, backend="eager")
    for expected in (1, 2, 3):
        np.testing.assert_allclose(_np(om(ember.zeros(2))), [expected, expected])
    assert m.calls == 3
    assert "sets a module attribute (Counter.calls" in om._compiled.graph_break.reason


@pytest.mark.parametrize("use", ["int", "range", "float_division", "comparison", "numel", "len"])
def test_a_size_used_as_a_python_value_keeps_graphs_static(use):
    def f(x):
        if use == "int":
            return x * int(x.size(0))
        if use == "range":
            return ember.stack([x[i] for i in range(x.size(0))]) * 2
        if use == "float_division":
            return x * (1.0 / x.shape[0])
        if use == "comparison":
            return x * 2 if x.size(0) > 3 else x * 3
        if use == "numel":
            return x * x.numel()
        return x * len(x)

    calls = []
    g = ember.compile(f, backend=counting_backend(calls))
    for n in (2, 3, 4, 5):
        x = ember.arange(float(n))
        np.testing.assert_allclose(_np(g(x)), _np(f(x)), rtol=1e-6)
    assert len(calls) == 4


def test_a_sequence_length_becomes_dynamic_as_torch():
    counts = {}
    for name, lib in LIBS.items():
        def f(x, lib=lib):
            return lib.softmax(x @ x.transpose(-1, -2), -1).sum(-1)

        calls = []
        c = lib.compile(f, backend=counting_backend(calls))
        for t in (3, 4, 5, 7):
            np.testing.assert_allclose(_np(c(lib.ones(2, t, 4))), np.ones((2, t)), rtol=1e-6)
        counts[name] = len(calls)
    assert counts["ember"] == counts["torch"] == 2
