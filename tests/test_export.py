"""ember.export against torch.export: the same programs, written once for both libraries and
exported by each. Graph signatures (kinds, placeholder names, targets), module() outputs and
gradients against eager, dynamic dimensions and their guard errors, and the errors of bad
input must agree; save/load (ember's own format) and run_decompositions get plain tests."""
import io
import zipfile

import numpy as np
import pytest
import torch
import torch.export

import ember
import ember.export

LIBS = {"torch": torch, "ember": ember}


# -- the programs, written once --------------------------------------------------------------------
def cnn(lib):
    nn, F = lib.nn, lib.nn.functional

    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 4, 3)
            self.bn = nn.BatchNorm2d(4)
            self.fc = nn.Linear(4 * 3 * 3, 3)

        def forward(self, x):
            x = F.max_pool2d(lib.relu(self.bn(self.conv(x))), 2)
            return self.fc(x.flatten(1))

    return CNN().eval(), [(2, 1, 8, 8)]


def mlp_with_state(lib):
    """Nested modules, a non-persistent buffer, a keyword input and a tuple output."""
    nn, F = lib.nn, lib.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(6, 6)
            self.norm = nn.LayerNorm(6)
            self.register_buffer("shift", lib.linspace(-1, 1, 6), persistent=False)

        def forward(self, x):
            return self.norm(F.gelu(self.lin(x)) + self.shift)

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.Sequential(Block(), Block())
            self.head = nn.Linear(6, 2)
            self.register_buffer("scale", lib.full((2,), 0.5))

        def forward(self, x, y):
            h = self.blocks(x) * y
            return self.head(h) * self.scale, F.silu(h).sum(-1)

    return MLP(), [(4, 6), (4, 1)]


def attention(lib):
    nn = lib.nn

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0,
                                                    batch_first=True)

        def forward(self, x):
            return self.layer(x)

    return Encoder().eval(), [(2, 5, 8)]


PROGRAMS = [cnn, mlp_with_state, attention]


def _pair(program):
    """The program built for both libraries, with torch's weights copied into ember's, and the
    example inputs (the same values in both)."""
    torch.manual_seed(0)
    tm, shapes = program(torch)
    em, _ = program(ember)
    em.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in
                        tm.state_dict().items()})
    em.train(tm.training)
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    return tm, em, arrays


def _inputs(lib, arrays, requires_grad=False):
    return tuple(lib.tensor(a).requires_grad_(requires_grad) for a in arrays)


def _specs(signature):
    inputs = [(s.kind.name, s.arg.name, s.target, s.persistent) for s in signature.input_specs]
    outputs = [s.kind.name for s in signature.output_specs]
    return inputs, outputs


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_graph_signature_kinds_and_names_match_torch(program):
    tm, em, arrays = _pair(program)
    tep = torch.export.export(tm, _inputs(torch, arrays))
    eep = ember.export.export(em, _inputs(ember, arrays))
    assert _specs(eep.graph_signature) == _specs(tep.graph_signature)
    assert eep.graph_signature.parameters == list(tep.graph_signature.parameters)
    assert eep.graph_signature.buffers == list(tep.graph_signature.buffers)
    assert eep.graph_signature.user_inputs == list(tep.graph_signature.user_inputs)
    assert list(eep.state_dict) == list(tep.state_dict)
    placeholders = [n.name for n in eep.graph.nodes if n.op == "placeholder"]
    assert placeholders == [n.name for n in tep.graph.nodes if n.op == "placeholder"]
    # a graph of ember functions: nothing is fetched from a module
    assert {n.op for n in eep.graph.nodes} <= {"placeholder", "call_function", "call_method",
                                               "output"}


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_module_outputs_and_gradients_equal_eager(program):
    tm, em, arrays = _pair(program)
    eep = ember.export.export(em, _inputs(ember, arrays))
    run = eep.module()
    t_in, e_in = _inputs(torch, arrays, True), _inputs(ember, arrays, True)
    t_out, e_out = tm(*t_in), run(*e_in)
    t_out = t_out if isinstance(t_out, tuple) else (t_out,)
    e_out = e_out if isinstance(e_out, tuple) else (e_out,)
    assert len(t_out) == len(e_out)
    for t, e in zip(t_out, e_out):
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-5, atol=1e-5)
    sum(t.sum() for t in t_out).backward()
    sum(e.sum() for e in e_out).backward()
    for t, e in zip(t_in, e_in):
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-5)
    t_grads = {k: p.grad for k, p in tm.named_parameters()}
    for name, p in run.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), t_grads[name].numpy(), rtol=1e-4,
                                   atol=1e-5, err_msg=name)
    # module() trains the exported module's own parameters, as torch's state_dict holds them
    assert all(p is eep.state_dict[k] for k, p in run.named_parameters())


def test_module_with_keyword_input_and_nested_output_structure():
    _, em, arrays = _pair(mlp_with_state)
    x, y = _inputs(ember, arrays)
    eep = ember.export.export(em, (x,), {"y": y})
    out = eep.module()(x, y=y)
    assert isinstance(out, tuple) and len(out) == 2
    ember.testing.assert_close(out[0], em(x, y)[0])
    assert eep.example_inputs[0][0] is x and eep.example_inputs[1]["y"] is y


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_run_decompositions_keeps_outputs(program):
    tm, em, arrays = _pair(program)
    eep = ember.export.export(em, _inputs(ember, arrays))
    dec = eep.run_decompositions()
    F = ember.nn.functional
    targets = {n.target for n in dec.graph.nodes if n.op == "call_function"}
    assert not targets & {F.linear, F.gelu, F.silu, F.layer_norm}
    if not em.training:
        assert F.batch_norm not in targets and F.dropout not in targets
    out, ref = dec.module()(*_inputs(ember, arrays)), em(*_inputs(ember, arrays))
    for a, b in zip(out if isinstance(out, tuple) else (out,),
                    ref if isinstance(ref, tuple) else (ref,)):
        ember.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)
    # the signature names the new output nodes
    outputs = [n for n in dec.graph.nodes if n.op == "output"][0].args[0]
    assert dec.graph_signature.user_outputs == [n.name for n in outputs]
    # the original program is unchanged
    assert F.linear in {n.target for n in eep.graph.nodes}


def test_run_decompositions_keeps_training_dropout_and_takes_a_table():
    class Drop(ember.nn.Module):
        def forward(self, x):
            return ember.nn.functional.dropout(ember.nn.functional.relu6(x), 0.5, True)

    ep = ember.export.export(Drop(), (ember.randn(3),))
    dec = ep.run_decompositions()
    targets = {n.target for n in dec.graph.nodes if n.op == "call_function"}
    assert ember.nn.functional.dropout in targets and ember.clamp in targets
    only_dropout = ep.run_decompositions({})
    assert ember.nn.functional.relu6 in {n.target for n in only_dropout.graph.nodes}


def test_dynamic_batch_dim_runs_other_sizes_and_guards_like_torch():
    tm, em, arrays = _pair(cnn)
    tb, eb = torch.export.Dim("batch", max=8), ember.export.Dim("batch", max=8)
    tep = torch.export.export(tm, _inputs(torch, arrays), dynamic_shapes={"x": {0: tb}})
    eep = ember.export.export(em, _inputs(ember, arrays), dynamic_shapes={"x": {0: eb}})
    run = eep.module()
    for batch in (1, 5, 8):
        x = np.random.default_rng(batch).standard_normal((batch, 1, 8, 8)).astype(np.float32)
        np.testing.assert_allclose(run(ember.tensor(x)).detach().numpy(),
                                   tm(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-5)
    for bad in [(9, 1, 8, 8), (3, 1, 9, 9), (3, 2, 8, 8)]:
        with pytest.raises(AssertionError) as t_err:
            tep.module()(torch.zeros(bad))
        with pytest.raises(AssertionError) as e_err:
            run(ember.zeros(bad))
        assert str(e_err.value) == str(t_err.value)
    assert eep.range_constraints == {"batch": (0, 8)}


def test_static_shapes_by_default_and_tuple_form():
    tm, em, arrays = _pair(cnn)
    eep = ember.export.export(em, _inputs(ember, arrays))
    tep = torch.export.export(tm, _inputs(torch, arrays))
    with pytest.raises(AssertionError) as t_err:
        tep.module()(torch.zeros(3, 1, 8, 8))
    with pytest.raises(AssertionError) as e_err:
        eep.module()(ember.zeros(3, 1, 8, 8))
    assert str(e_err.value) == str(t_err.value)
    tuple_form = ember.export.export(em, _inputs(ember, arrays),
                                     dynamic_shapes=({0: ember.export.Dim.AUTO},))
    assert tuple_form.module()(ember.zeros(6, 1, 8, 8)).shape == (6, 3)


def test_dim_bounds_and_shared_dims():
    low = ember.export.Dim("batch", min=2, max=8)
    _, em, arrays = _pair(cnn)
    ep = ember.export.export(em, _inputs(ember, arrays), dynamic_shapes={"x": {0: low}})
    with pytest.raises(AssertionError, match=r"Guard failed: x.size\(\)\[0\] >= 2"):
        ep.module()(ember.zeros(1, 1, 8, 8))
    with pytest.raises(AssertionError) as t_err:
        torch.export.Dim("b", min=5, max=2)
    with pytest.raises(AssertionError) as e_err:
        ember.export.Dim("b", min=5, max=2)
    assert str(e_err.value) == str(t_err.value)
    n = ember.export.Dim("n")
    lin = ember.nn.Linear(3, 3)

    class Add(ember.nn.Module):
        def forward(self, a, b):
            return lin(a) + b
    ep = ember.export.export(Add(), (ember.zeros(2, 3), ember.zeros(2, 3)),
                             dynamic_shapes={"a": {0: n}, "b": {0: n}})
    assert ep.module()(ember.ones(4, 3), ember.ones(4, 3)).shape == (4, 3)
    with pytest.raises(AssertionError, match=r"b.size\(\)\[0\] == a.size\(\)\[0\]"):
        ep.module()(ember.ones(4, 3), ember.ones(5, 3))


def _first_line(err):
    return str(err.value).splitlines()[0]


def test_errors_match_torch():
    tm, em, arrays = _pair(cnn)
    with pytest.raises(ValueError, match="Expected `mod` to be an instance of"):
        torch.export.export(lambda x: x, (torch.ones(2),))
    with pytest.raises(ValueError, match="Expected `mod` to be an instance of"):
        ember.export.export(lambda x: x, (ember.ones(2),))
    with pytest.raises(RuntimeError) as t_err:
        torch.export.export(tm, list(_inputs(torch, arrays)))
    with pytest.raises(ember.export.UserError) as e_err:
        ember.export.export(em, list(_inputs(ember, arrays)))
    assert _first_line(e_err) == _first_line(t_err)
    with pytest.raises(RuntimeError) as t_err:
        torch.export.export(tm, _inputs(torch, arrays), dynamic_shapes={"y": {0: None}})
    with pytest.raises(RuntimeError) as e_err:
        ember.export.export(em, _inputs(ember, arrays), dynamic_shapes={"y": {0: None}})
    assert _first_line(t_err).startswith(_first_line(e_err))
    tep = torch.export.export(tm, _inputs(torch, arrays))
    eep = ember.export.export(em, _inputs(ember, arrays))
    with pytest.raises(RuntimeError) as t_err:
        tep(*_inputs(torch, arrays))
    with pytest.raises(RuntimeError) as e_err:
        eep(*_inputs(ember, arrays))
    assert str(e_err.value) == str(t_err.value)
    with pytest.raises(ValueError, match="Trying to flatten user inputs"):
        tep.module()(*_inputs(torch, arrays), torch.ones(1))
    with pytest.raises(ValueError, match="Trying to flatten user inputs"):
        eep.module()(*_inputs(ember, arrays), ember.ones(1))


def test_branching_on_a_tensor_value_is_an_error():
    def program(lib):
        class Branch(lib.nn.Module):
            def forward(self, x):
                if x.sum() > 0:
                    return x * 2
                return x
        return Branch()

    with pytest.raises(RuntimeError, match="Could not guard on data-dependent expression"):
        torch.export.export(program(torch), (torch.ones(2),))
    with pytest.raises(ember.export.GuardOnDataDependentSymNode,
                       match="Could not guard on data-dependent expression.*test_export.py"):
        ember.export.export(program(ember), (ember.ones(2),))


def test_export_leaves_batch_norm_statistics_alone():
    bn = ember.nn.BatchNorm1d(3).train()
    before = bn.running_mean.clone()
    ep = ember.export.export(bn, (ember.randn(4, 3) + 5,))
    assert ember.equal(bn.running_mean, before)
    assert int(bn.num_batches_tracked) == 0
    ep.module()(ember.randn(4, 3) + 5)          # running it is a training step
    assert not ember.equal(bn.running_mean, before)


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_save_load_round_trip(program, tmp_path):
    _, em, arrays = _pair(program)
    ep = ember.export.export(em, _inputs(ember, arrays),
                             dynamic_shapes=({0: ember.export.Dim("batch", max=16)},) +
                             (None,) * (len(arrays) - 1))
    path = tmp_path / "program.ep"
    ember.export.save(ep, path, extra_files={"note.txt": "digits"})
    extra = {"note.txt": ""}
    loaded = ember.export.load(path, extra_files=extra)
    assert extra["note.txt"] == "digits"
    assert _specs(loaded.graph_signature) == _specs(ep.graph_signature)
    assert loaded.graph_module.code == ep.graph_module.code
    assert loaded.range_constraints == ep.range_constraints
    for k, t in ep.state_dict.items():
        assert ember.equal(loaded.state_dict[k], t.detach())
        assert type(loaded.state_dict[k]) is type(t)
    args = _inputs(ember, arrays)
    out, ref = loaded.module()(*args), em(*args)
    for a, b in zip(out if isinstance(out, tuple) else (out,),
                    ref if isinstance(ref, tuple) else (ref,)):
        ember.testing.assert_close(a, b)
    with pytest.raises(AssertionError, match="Guard failed"):
        loaded.module()(ember.zeros((17,) + tuple(arrays[0].shape[1:])), *args[1:])
    buffer = io.BytesIO()
    ember.export.save(loaded, buffer)
    buffer.seek(0)
    assert ember.export.load(buffer).graph_module.code == ep.graph_module.code


def test_load_rejects_other_files_and_runs_no_code(tmp_path):
    with pytest.raises(FileNotFoundError):
        ember.export.load(tmp_path / "missing.ep")
    other = tmp_path / "other.zip"
    with zipfile.ZipFile(other, "w") as z:
        z.writestr("data.txt", "x")
    with pytest.raises(RuntimeError, match="not a file written by ember.export.save"):
        ember.export.load(other)
    ep = ember.export.export(ember.nn.Linear(2, 2), (ember.zeros(1, 2),))
    path = tmp_path / "p.ep"
    ember.export.save(ep, path)
    with zipfile.ZipFile(path) as z:
        parts = {n: z.read(n) for n in z.namelist()}
    parts["ember_export/program.json"] = parts["ember_export/program.json"].replace(
        b'"ember.nn.functional.linear"', b'"os.system"')
    bad = tmp_path / "bad.ep"
    with zipfile.ZipFile(bad, "w") as z:
        for n, data in parts.items():
            z.writestr(n, data)
    with pytest.raises(RuntimeError, match="'os.system' is not an ember function"):
        ember.export.load(bad)
    with pytest.raises(TypeError, match="ExportedProgram"):
        ember.export.save(ember.nn.Linear(2, 2), tmp_path / "x.ep")


def test_str_shows_code_signature_and_ranges():
    ep = ember.export.export(ember.nn.Linear(3, 2), (ember.zeros(2, 3),),
                             dynamic_shapes={"input": {0: ember.export.Dim("b")}})
    text = str(ep)
    assert "p_weight: PARAMETER target='weight'" in text and "input: USER_INPUT" in text
    assert "ember.nn.functional.linear(input_1, p_weight, p_bias)" in text
    assert "Range constraints: {'b': (0, inf)}" in text


def test_a_value_the_trace_cannot_see_is_an_error_not_a_frozen_constant():
    class Hidden(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = ember.nn.Linear(3, 3)
            self.steps = [ember.sin]        # reached through a list: not recorded

        def forward(self, x):
            return self.lin(self.steps[0](x))

    with pytest.raises(RuntimeError, match=r"computed from the inputs or parameters as a "
                                           r"constant \(_tensor_constant0, made by SinBackward0"):
        ember.export.export(Hidden(), (ember.randn(2, 3),))


@pytest.mark.parametrize("batch_first", [True, False])
def test_recurrent_layer_follows_dynamic_batch_and_time(batch_first):
    lstm = ember.nn.LSTM(4, 5, num_layers=2, bidirectional=True, batch_first=batch_first)
    shape = (2, 6, 4) if batch_first else (6, 2, 4)
    batch, time = ember.export.Dim("batch"), ember.export.Dim("time")
    dims = {0: batch, 1: time} if batch_first else {0: time, 1: batch}
    ep = ember.export.export(lstm, (ember.randn(*shape),), dynamic_shapes=(dims,))
    x = ember.randn(*((3, 9, 4) if batch_first else (9, 3, 4)))
    got, expected = ep.module()(x), lstm(x)
    ember.testing.assert_close(got[0], expected[0])
    ember.testing.assert_close(got[1][0], expected[1][0])
    ember.testing.assert_close(got[1][1], expected[1][1])
    buffer = io.BytesIO()
    ember.export.save(ep, buffer)
    buffer.seek(0)
    ember.testing.assert_close(ember.export.load(buffer).module()(x)[0], expected[0])
