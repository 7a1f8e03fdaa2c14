"""ember.jit against torch.jit: the same programs, written once for both libraries, traced by
each; the traced modules' outputs and gradients, the control flow they freeze, the warnings and
check_trace errors must agree. save/load (ember's own format) gets plain round-trip tests."""
import io
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch

import ember
import ember.jit

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
            return F.log_softmax(self.fc2(F.relu(self.fc1(x))), dim=-1)

    return MLP(), (3, 8)


def cnn(lib):
    nn, F = lib.nn, lib.nn.functional

    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 6, 3, padding=1)
            self.bn = nn.BatchNorm2d(6)
            self.fc = nn.Linear(6 * 4 * 4, 5)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
            return self.fc(x.view(x.size(0), -1))

    return CNN(), (2, 3, 8, 8)


def attention(lib):
    nn, F = lib.nn, lib.nn.functional

    class Attention(nn.Module):
        def __init__(self, d=8, heads=2):
            super().__init__()
            self.heads = heads
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)
            self.norm = nn.LayerNorm(d)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.qkv(self.norm(x)).split(C, dim=2)
            q = q.view(B, T, self.heads, C // self.heads).transpose(1, 2)
            k = k.view(B, T, self.heads, C // self.heads).transpose(1, 2)
            v = v.view(B, T, self.heads, C // self.heads).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / (C // self.heads) ** 0.5)
            y = F.softmax(att, dim=-1) @ v
            return x + self.proj(y.transpose(1, 2).contiguous().view(B, T, C))

    return Attention(), (2, 5, 8)


def two_outputs(lib):
    nn = lib.nn

    class TwoOutputs(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(4, 6, batch_first=True)
            self.head = nn.Linear(6, 2)

        def forward(self, x):
            out, (h, c) = self.lstm(x)
            return self.head(out).tanh(), h.sum(0) - 2 * c.mean(0)

    return TwoOutputs(), (3, 5, 4)


PROGRAMS = {"mlp": mlp, "cnn": cnn, "attention": attention, "two_outputs": two_outputs}


def build(name, lib, seed=0):
    lib.manual_seed(seed)
    module, shape = PROGRAMS[name](lib)
    return module, shape


def pair(name):
    t_mod, shape = build(name, torch)
    e_mod, _ = build(name, ember)
    e_mod.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in
                           t_mod.state_dict().items()})
    return t_mod, e_mod, shape


def inputs(shape, seed=1):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return torch.tensor(a), ember.tensor(a)


def outputs(value):
    if isinstance(value, (tuple, list)):
        return [o for v in value for o in outputs(v)]
    return [value]


def assert_same(t_value, e_value, atol=1e-5):
    t_out, e_out = outputs(t_value), outputs(e_value)
    assert len(t_out) == len(e_out)
    for t, e in zip(t_out, e_out):
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-4, atol=atol)


def trace_quietly(lib, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return lib.jit.trace(*args, **kwargs)


# -- outputs and gradients -------------------------------------------------------------------------
@pytest.mark.parametrize("name", PROGRAMS)
@pytest.mark.parametrize("training", [True, False])
def test_traced_module_matches_torch_outputs_and_gradients(name, training):
    t_mod, e_mod, shape = pair(name)
    t_mod.train(training)
    e_mod.train(training)
    tx, ex = inputs(shape)
    t_traced = trace_quietly(torch, t_mod, tx)
    e_traced = trace_quietly(ember, e_mod, ex)
    assert isinstance(e_traced, ember.jit.ScriptModule)
    assert isinstance(e_traced, ember.nn.Module)
    tx2, ex2 = inputs(shape, seed=2)
    tx2.requires_grad_(True)
    ex2.requires_grad_(True)
    t_out, e_out = t_traced(tx2), e_traced(ex2)
    assert_same(t_out, e_out)
    sum(o.sum() for o in outputs(t_out)).backward()
    sum(o.sum() for o in outputs(e_out)).backward()
    np.testing.assert_allclose(ex2.grad.numpy(), tx2.grad.numpy(), rtol=1e-4, atol=1e-5)
    t_grads = {k: p.grad for k, p in t_mod.named_parameters()}
    for k, p in e_mod.named_parameters():      # the traced module trains the original's tensors
        np.testing.assert_allclose(p.grad.numpy(), t_grads[k].numpy(), rtol=1e-4, atol=1e-5)
    assert set(e_traced.state_dict()) == set(t_traced.state_dict())


@pytest.mark.parametrize("name", ["cnn", "attention", "two_outputs"])
def test_sizes_are_recorded_so_another_batch_size_replays(name):
    t_mod, e_mod, shape = pair(name)
    t_mod.eval()
    e_mod.eval()
    t_traced = trace_quietly(torch, t_mod, inputs(shape)[0])
    e_traced = trace_quietly(ember, e_mod, inputs(shape)[1])
    bigger = (shape[0] + 3,) + tuple(shape[1:])
    tx, ex = inputs(bigger, seed=3)
    assert_same(t_traced(tx), e_traced(ex))
    assert_same(e_mod(ex), e_traced(ex))


def test_graph_and_code_name_the_ops():
    _, e_mod, shape = pair("cnn")
    traced = trace_quietly(ember, e_mod, inputs(shape)[1])
    text = str(traced.graph)
    for piece in ("placeholder[target=x]", "call_module[target=conv]", "call_module[target=bn]",
                  "ember.nn.functional.relu", "ember.nn.functional.max_pool2d",
                  "call_method[target=size]", "call_method[target=view]", "call_module[target=fc]"):
        assert piece in text
    assert traced.code.lstrip().startswith("def forward(self, x):")
    assert "self.conv(x)" in traced.code
    assert traced.inlined_graph is traced.graph


def test_trace_of_a_function_and_of_a_tuple_of_inputs():
    def f(lib, a, b):
        return lib.tanh(a) * b + a.sum(dim=0, keepdim=True), b.t()

    ta, ea = inputs((3, 4))
    tb, eb = inputs((3, 4), seed=5)
    t_traced = trace_quietly(torch, lambda a, b: f(torch, a, b), (ta, tb))
    e_traced = trace_quietly(ember, lambda a, b: f(ember, a, b), (ea, eb))
    assert isinstance(e_traced, ember.jit.ScriptFunction)
    ta2, ea2 = inputs((3, 4), seed=7)
    assert_same(t_traced(ta2, tb), e_traced(ea2, eb))


def test_trace_module_traces_other_methods():
    def make(lib):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = lib.nn.Linear(3, 2)

            def forward(self, x):
                return self.fc(x)

            def score(self, x):
                return self.fc(x).sum(-1)
        lib.manual_seed(0)
        return M()

    t_mod, e_mod = make(torch), make(ember)
    e_mod.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in
                           t_mod.state_dict().items()})
    tx, ex = inputs((4, 3))
    t_traced = torch.jit.trace_module(t_mod, {"forward": tx, "score": tx})
    e_traced = ember.jit.trace_module(e_mod, {"forward": ex, "score": ex})
    assert_same(t_traced.score(tx), e_traced.score(ex))
    assert_same(t_traced(tx), e_traced(ex))


# -- frozen control flow and TracerWarning ---------------------------------------------------------
def branchy(lib, x):
    if x.sum() > 0:
        return x * 2
    return x - 1


def test_control_flow_is_frozen_as_torch_freezes_it():
    tx, ex = inputs((3,))
    tx, ex = tx.abs() + 1, ex.abs() + 1
    with warnings.catch_warnings(record=True) as t_w:
        warnings.simplefilter("always")
        t_traced = torch.jit.trace(lambda x: branchy(torch, x), tx)
    with warnings.catch_warnings(record=True) as e_w:
        warnings.simplefilter("always")
        e_traced = ember.jit.trace(lambda x: branchy(ember, x), ex)
    assert_same(t_traced(-tx), e_traced(-ex))          # the positive branch, frozen
    np.testing.assert_allclose(e_traced(-ex).numpy(), (-ex * 2).numpy())
    t_msgs = {str(w.message) for w in t_w if w.category is torch.jit.TracerWarning}
    e_msgs = {str(w.message) for w in e_w if w.category is ember.jit.TracerWarning}
    assert e_msgs == t_msgs and len(e_msgs) == 1


CONVERSIONS = {
    "int": lambda lib, x: x * int(x.sum()),
    "float": lambda lib, x: x * float(x.sum()),
    "tolist": lambda lib, x: x * len(x.tolist()),
    "item": lambda lib, x: x * x.sum().item(),
    "bool": lambda lib, x: x * 2 if x.sum() > 0 else x,
    "numpy": lambda lib, x: x + lib.tensor(x.numpy().sum()),
    "iterate": lambda lib, x: sum(row for row in x),
    "len": lambda lib, x: x * len(x),
}


@pytest.mark.parametrize("case", CONVERSIONS)
def test_tracer_warnings_match_torch(case):
    fn = CONVERSIONS[case]
    tx, ex = inputs((2, 3))
    tx, ex = tx.abs(), ex.abs()
    got = {}
    for lib, x in (("torch", tx), ("ember", ex)):
        mod = LIBS[lib]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            mod.jit.trace(lambda x, mod=mod: fn(mod, x), x, check_trace=False)
        got[lib] = {str(w.message).replace("torch.", "ember.") for w in caught
                    if w.category is mod.jit.TracerWarning}
    assert got["ember"] == got["torch"]
    assert got["ember"]


def test_no_warning_for_sizes_and_parameters():
    _, e_mod, shape = pair("attention")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.jit.trace(e_mod, inputs(shape)[1])


# -- check_trace -----------------------------------------------------------------------------------
def test_check_inputs_taking_another_branch_raise_tracing_check_error():
    tx, ex = inputs((3,))
    tx, ex = tx.abs() + 1, ex.abs() + 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(torch.jit.TracingCheckError, match="Graphs differed"):
            torch.jit.trace(lambda x: branchy(torch, x), tx, check_inputs=[(-tx,)])
        with pytest.raises(ember.jit.TracingCheckError, match="Graphs differed"):
            ember.jit.trace(lambda x: branchy(ember, x), ex, check_inputs=[(-ex,)])
        # the same branch passes
        ember.jit.trace(lambda x: branchy(ember, x), ex, check_inputs=[(ex * 3,)])


def test_nondeterministic_trace_warns_as_torch_does():
    def make(lib):
        lib.manual_seed(0)
        return lib.nn.Sequential(lib.nn.Linear(4, 32), lib.nn.Dropout(0.5))

    def user_dropout(lib):
        class M(lib.nn.Module):
            def forward(self, x):
                return lib.nn.functional.dropout(x, 0.5, training=True)
        return M()

    for builder in (make, user_dropout):
        messages = {}
        for name, lib in LIBS.items():
            x = lib.ones(8, 4)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                lib.jit.trace(builder(lib), x)
            messages[name] = [str(w.message) for w in caught
                              if w.category is lib.jit.TracerWarning]
        for name in messages:
            assert any(m.startswith("Output nr 1. of the traced function does not match")
                       for m in messages[name]), name
    assert any(m.startswith("Trace had nondeterministic nodes") for m in messages["torch"])
    assert any(m.startswith("Trace had nondeterministic nodes") for m in messages["ember"])


def test_strict_list_outputs_warn_and_dict_outputs_raise_as_in_torch():
    for lib in (torch, ember):
        x = lib.ones(2)
        with pytest.warns(lib.jit.TracerWarning, match="Encountering a list at the output"):
            lib.jit.trace(lambda x: [x * 2, x + 1], x, check_trace=False)
        with pytest.raises(RuntimeError, match="Encountering a dict at the output of the tracer"):
            lib.jit.trace(lambda x: {"a": x * 2}, x)
        with warnings.catch_warnings():
            warnings.simplefilter("error", lib.jit.TracerWarning)
            traced = lib.jit.trace(lambda x: [x * 2, x + 1], x, strict=False)
            assert isinstance(traced(x), list)
            traced = lib.jit.trace(lambda x: {"a": x * 2}, x, strict=False)
            assert set(traced(x)) == {"a"}


def test_tracing_a_traced_module_is_a_no_op():
    _, e_mod, shape = pair("mlp")
    traced = ember.jit.trace(e_mod, inputs(shape)[1])
    with pytest.warns(UserWarning, match="tracing it is a no-op"):
        assert ember.jit.trace(traced, inputs(shape)[1]) is traced


# -- is_tracing, decorators, script ----------------------------------------------------------------
def test_is_tracing_and_is_scripting():
    seen = {}
    for name, lib in LIBS.items():
        def f(x, lib=lib, name=name):
            seen[name] = (lib.jit.is_tracing(), lib.jit.is_scripting())
            return x + 1
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lib.jit.trace(f, lib.ones(2), check_trace=False)
        assert not lib.jit.is_tracing()
    assert seen["ember"] == seen["torch"] == (True, False)


def test_script_raises_and_points_to_trace_and_fx():
    with pytest.raises(NotImplementedError, match=r"ember\.jit\.trace.*ember\.fx"):
        ember.jit.script(ember.nn.Linear(2, 2))

    with pytest.raises(NotImplementedError, match="ember.jit.trace"):
        @ember.jit.script
        def f(x):
            return x


def test_torchscript_decorated_code_runs_eagerly():
    jit = ember.jit

    @jit.interface
    class Iface:
        def run(self, x):
            pass

    class M(ember.nn.Module):
        scale: jit.Final[int] = 3

        @jit.ignore
        def helper(self, x):
            return x + 1

        @jit.ignore(drop=True)
        def dropped(self, x):
            return x - 1

        @jit.unused
        def unused(self, x):
            return x * 0

        @jit.export
        def exported(self, x):
            return x * self.scale

        def forward(self, x):
            if jit.is_scripting():
                return x
            fut = jit.fork(self.exported, x)
            y: jit.annotations.List[int] = jit.annotate(list, [1])
            return jit.wait(fut) + self.helper(x) + self.dropped(x) + self.unused(x) + y[0]

    x = ember.ones(2)
    np.testing.assert_allclose(M()(x).numpy(), [3 + 2 + 0 + 0 + 1] * 2)
    assert jit.isinstance([1, 2], jit.annotations.List[int])
    assert not jit.isinstance([1, "a"], jit.annotations.List[int])
    assert jit.isinstance({"a": x}, jit.annotations.Dict[str, ember.Tensor])


def test_freeze_and_optimize_for_inference():
    _, e_mod, shape = pair("cnn")
    traced = ember.jit.trace(e_mod, inputs(shape)[1])
    with pytest.raises(RuntimeError, match="only implemented for modules in eval mode"):
        ember.jit.freeze(traced)
    with pytest.raises(RuntimeError, match="expects a ScriptModule"):
        ember.jit.freeze(e_mod.eval())
    traced.eval()
    frozen = ember.jit.freeze(traced)
    assert not any(p.requires_grad for p in frozen.parameters())
    x = inputs(shape, seed=4)[1]
    assert_same(traced(x), frozen(x))
    assert_same(traced(x), ember.jit.optimize_for_inference(traced)(x))


# -- save and load ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", PROGRAMS)
def test_save_load_round_trip(name, tmp_path):
    _, e_mod, shape = pair(name)
    e_mod.eval()
    traced = trace_quietly(ember, e_mod, inputs(shape)[1])
    path = tmp_path / "traced.pt"
    traced.save(path, _extra_files={"note.txt": "hello"})
    extra = {"note.txt": ""}
    loaded = ember.jit.load(path, _extra_files=extra)
    assert extra["note.txt"] == b"hello"
    assert isinstance(loaded, ember.jit.ScriptModule)
    assert loaded.code == traced.code
    assert str(loaded.graph) == str(traced.graph)
    x = inputs((shape[0] + 1,) + tuple(shape[1:]), seed=9)[1]
    assert_same(traced(x), loaded(x), atol=0)
    state = traced.state_dict()
    for k, v in loaded.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), state[k].numpy())
    assert all(p.requires_grad for p in loaded.parameters())
    out = outputs(loaded(x))[0]
    out.sum().backward()
    assert all(p.grad is not None for p in loaded.parameters() if p.requires_grad)


def test_save_load_of_a_function_and_file_objects():
    def f(x, y):
        return ember.nn.functional.gelu(x)[:, 1:] * y[None, 1:]

    x, y = ember.randn(3, 4), ember.randn(4)
    traced = ember.jit.trace(f, (x, y))
    buffer = io.BytesIO()
    ember.jit.save(traced, buffer)
    buffer.seek(0)
    loaded = ember.jit.load(buffer)
    assert isinstance(loaded, ember.jit.ScriptFunction)
    assert_same(f(x, y), loaded(x, y), atol=0)


def test_load_rejects_other_files(tmp_path):
    path = tmp_path / "state.pt"
    ember.save({"w": ember.ones(2)}, path)
    with pytest.raises(RuntimeError, match="not a file written by ember.jit.save"):
        ember.jit.load(path)
    with pytest.raises(ValueError, match="does not exist"):
        ember.jit.load(tmp_path / "missing.pt")
    with pytest.raises(TypeError, match="made by ember.jit.trace"):
        ember.jit.save(ember.nn.Linear(2, 2), tmp_path / "x.pt")


# -- eager ember is untouched ----------------------------------------------------------------------
def test_trace_restores_everything_it_patched():
    originals = {k: v for k, v in vars(ember.Tensor).items()}
    functions = {k: v for k, v in vars(ember.nn.functional).items()}
    call = ember.nn.Module.__call__
    _, e_mod, shape = pair("attention")
    trace_quietly(ember, e_mod, inputs(shape)[1])
    with pytest.raises(RuntimeError):
        ember.jit.trace(lambda x: {"a": x}, ember.ones(1))
    assert {k: v for k, v in vars(ember.Tensor).items()} == originals
    assert {k: v for k, v in vars(ember.nn.functional).items()} == functions
    assert ember.nn.Module.__call__ is call
    assert not ember.jit.is_tracing()


def test_import_ember_does_not_import_jit_or_onnx():
    code = ("import sys, ember; assert 'ember.jit' not in sys.modules; "
            "assert 'ember.onnx' not in sys.modules; assert 'onnx' not in sys.modules; "
            "ember.jit; assert 'ember.jit' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)
