"""``ember.compile``'s ahead-of-time backward (backend ``aot_eager``): values
and gradients against eager ember (itself tested against torch op by op), one
``CompiledFunctionBackward`` node per compiled region, and eager's errors; the recurrent
layers and ResNet-20's batch norms with the default backend against torch."""
import copy
import logging

import numpy as np
import pytest
import torch

import ember
import ember.compiler
from benchmarks import models
from test_compile_layers import _fresh
from test_graph_layers import LAYERS, _make_inputs, _run

AOT = "CompiledFunctionBackward"


def _close(got, expected, rtol=1e-4, atol=1e-5):
    assert (got is None) == (expected is None)
    if got is not None:
        ember.testing.assert_close(got, expected, rtol=rtol, atol=atol)


def _grads(module):
    return [p.grad.clone() if p.grad is not None else None
            for _, p in sorted(module.named_parameters())]


# -- models --------------------------------------------------------------------------------------

def _tokens(rng, shape, vocab):
    return ember.from_numpy(rng.integers(0, vocab, size=shape, dtype=np.int64))


def _mlp(rng):
    model = ember.nn.Sequential(ember.nn.Linear(20, 16), ember.nn.ReLU(), ember.nn.Linear(16, 16),
                                ember.nn.ReLU(), ember.nn.Linear(16, 10))
    return model, lambda: ember.from_numpy(rng.standard_normal((8, 20), dtype=np.float32)), 10


def _lenet(rng):
    nn = ember.nn
    model = nn.Sequential(
        nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
        nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10))
    return model, lambda: ember.from_numpy(
        rng.standard_normal((4, 1, 28, 28), dtype=np.float32)), 10


def _transformer(rng):
    model = models._transformer_lm_class(ember)(50, 8, 32, 2, 64, 2)
    return model, lambda: _tokens(rng, (3, 8), 50), 50


def _lstm(rng):
    model = models._lstm_lm_class(ember)(50, 16)
    return model, lambda: _tokens(rng, (6, 3), 50), 50


MODELS = {"mlp": _mlp, "lenet": _lenet, "transformer_lm": _transformer, "lstm_lm": _lstm}


@pytest.mark.parametrize("backend", ["aot_eager"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_trains_as_eager(name, backend):
    build = MODELS[name]
    rng = np.random.default_rng(0)
    ember.manual_seed(0)
    model, batch, classes = build(rng)
    compiled = ember.compile(model, backend=backend)
    for step in range(3):
        x = batch()
        y = ember.from_numpy(rng.integers(0, classes, size=x.shape[0] * (
            x.shape[1] if x.dtype == ember.int64 else 1), dtype=np.int64))
        model.zero_grad()
        expected = ember.nn.functional.cross_entropy(model(x).reshape(-1, classes), y)
        expected.backward()
        expected_grads = _grads(model)
        model.zero_grad()
        out = compiled(x)
        loss = ember.nn.functional.cross_entropy(out.reshape(-1, classes), y)
        loss.backward()
        _close(loss, expected)
        for got, want in zip(_grads(model), expected_grads):
            _close(got, want)
        if step:
            assert out.grad_fn.name() == AOT


# -- layers -------------------------------------------------------------------------------------

# layers that get no ahead-of-time backward, and why
NO_AOT = {
    # no output has a gradient (the inputs require none, no parameters) or the output is the
    # input itself or a view of it: the graph replays
    "AlphaDropout", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "FeatureAlphaDropout",
    "Identity", "Flatten", "Unflatten",
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_compiled_layer_with_aot_backward_gives_eager_gradients(name):
    ember.manual_seed(0)
    make, spec = LAYERS[name]
    module = make()
    module(*_make_inputs(spec, 0))          # lazy layers take their shapes on a first call
    compiled = ember.compile(module, backend="aot_eager")
    _run(compiled, _fresh(_make_inputs(spec, 1)))           # captures
    inputs = _make_inputs(spec, 2)          # other values: nothing of the capture is reused
    ember.manual_seed(1)
    expected_out, expected_grads = _run(module, _fresh(inputs))
    ember.manual_seed(1)
    got_out, got_grads = _run(compiled, _fresh(inputs))
    assert len(got_out) == len(expected_out) > 0
    for got, expected in zip(got_out, expected_out):
        _close(got, expected, rtol=1e-5)
    assert len(got_grads) == len(expected_grads)
    for got, expected in zip(got_grads, expected_grads):
        _close(got, expected)
    entries = compiled._compiled.entries
    assert (bool(entries) and getattr(entries[-1].run, "aot", False)) == (name not in NO_AOT)


def test_backward_runs_one_node_for_the_region():
    model = ember.nn.Sequential(ember.nn.Linear(4, 8), ember.nn.Tanh(), ember.nn.Linear(8, 3))
    compiled = ember.compile(model, backend="aot_eager")
    compiled(ember.randn(5, 4, requires_grad=True))
    x = ember.randn(5, 4, requires_grad=True)
    out = compiled(x)
    node = out.grad_fn
    assert node.name() == AOT
    inner = {fn for fn, _ in node.next_functions if fn is not None}
    assert all(type(fn).__name__ == "AccumulateGrad" for fn in inner)
    assert len(inner) == 5      # x and the four parameters
    ran = []
    node.register_prehook(lambda grads: ran.append(node.name()))
    out.sum().backward()
    assert ran == [AOT]
    x2 = x.detach().requires_grad_()
    model.zero_grad()
    model(x2).sum().backward()
    _close(x.grad, x2.grad)


def test_inputs_that_do_not_require_grad_and_non_leaf_inputs():
    w = ember.randn(3, 3, requires_grad=True)

    def f(a, b, c):
        return (a @ b).sin() * c, a.shape[0], "label"

    compiled = ember.compile(f, backend="aot_eager")
    for _ in range(2):
        base = ember.randn(4, 3, requires_grad=True)
        a = base * 2                        # not a leaf: its gradient flows on to base
        c = ember.randn(4, 3)
        out, n, label = compiled(a, w, c)
        assert (n, label) == (4, "label")
        out.sum().backward()
        got = base.grad, w.grad.clone()
        w.grad = None
        base2 = base.detach().requires_grad_()
        f(base2 * 2, w, c)[0].sum().backward()
        _close(got[0], base2.grad)
        _close(got[1], w.grad)
        w.grad = None
    assert out.grad_fn.name() == AOT


def test_multiple_outputs_and_a_gradient_for_one_only():
    def f(x):
        return x.exp(), (x * 3).tanh()

    compiled = ember.compile(f, backend="aot_eager")
    compiled(ember.randn(5, requires_grad=True))
    x = ember.randn(5, requires_grad=True)
    a, b = compiled(x)
    assert a.grad_fn is b.grad_fn and a.grad_fn.name() == AOT
    b.sum().backward()
    x2 = x.detach().requires_grad_()
    f(x2)[1].sum().backward()
    _close(x.grad, x2.grad)


def test_recompiles_when_requires_grad_changes():
    compiled = ember.compile(lambda x: (x * x).sum(), backend="aot_eager")
    compiled(ember.randn(3))
    compiled(ember.randn(3))
    x = ember.randn(3, requires_grad=True)
    compiled(x)
    out = compiled(x)
    assert len(compiled._ember_compiled.entries) == 2
    assert out.grad_fn.name() == AOT
    out.backward()
    _close(x.grad, 2 * x.detach())


def test_graph_break_falls_back_to_eager_and_trains():
    def f(x):
        y = x.sin()
        if y.sum() > 0:          # a graph break: the function runs eagerly
            return y * 2
        return y * 3

    compiled = ember.compile(f, backend="aot_eager")
    for _ in range(3):
        x = ember.randn(6, requires_grad=True)
        compiled(x).sum().backward()
        x2 = x.detach().requires_grad_()
        f(x2).sum().backward()
        _close(x.grad, x2.grad)
    assert compiled._ember_compiled.graph_break is not None


def test_second_backward_without_retain_graph_raises_as_eager():
    compiled = ember.compile(lambda x: x.sin() * x, backend="aot_eager")
    compiled(ember.randn(3, requires_grad=True))
    x = ember.randn(3, requires_grad=True)
    out = compiled(x).sum()
    out.backward(retain_graph=True)
    out.backward()
    _close(x.grad, 2 * (x.detach().cos() * x.detach() + x.detach().sin()))
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        out.backward()
    eager = (x.sin() * x).sum()
    eager.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        eager.backward()


def test_inplace_change_of_a_saved_input_raises_as_eager():
    compiled = ember.compile(lambda x: x.sin() * x, backend="aot_eager")
    compiled(ember.randn(3, requires_grad=True))
    x = ember.randn(3, requires_grad=True)
    for fn in (compiled, lambda x: x.sin() * x):
        y = x.detach().requires_grad_()
        z = y * 1
        out = fn(z)
        with ember.no_grad():
            z.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            out.sum().backward()


def test_create_graph_gives_second_derivatives():
    def f(x):
        return (x ** 3).sum()

    compiled = ember.compile(f, backend="aot_eager")
    compiled(ember.randn(4, requires_grad=True))
    x = ember.randn(4, requires_grad=True)
    out = compiled(x)
    assert out.grad_fn.name() == AOT
    (g,) = ember.autograd.grad(out, x, create_graph=True)
    _close(g, 3 * x.detach() ** 2)
    (h,) = ember.autograd.grad(g.sum(), x)
    _close(h, 6 * x.detach())


def test_eager_backend_keeps_per_op_nodes():
    compiled = ember.compile(lambda x: x.sin() * 2, backend="eager")
    compiled(ember.randn(3, requires_grad=True))
    assert compiled(ember.randn(3, requires_grad=True)).grad_fn.name() == "MulBackward0"


def test_no_grad_call_of_an_aot_graph_records_nothing():
    compiled = ember.compile(lambda x: x.exp(), backend="aot_eager")
    x = ember.randn(3, requires_grad=True)
    compiled(x)
    with ember.no_grad():
        assert compiled(x).grad_fn is None


def test_anomaly_detection_runs_the_compiled_backward():
    compiled = ember.compile(lambda x: (x.sin() * x).sum(), backend="aot_eager")
    compiled(ember.randn(3, requires_grad=True))
    x = ember.randn(3, requires_grad=True)
    with ember.autograd.set_detect_anomaly(True):
        compiled(x).backward()
    x2 = x.detach().requires_grad_()
    (x2.sin() * x2).sum().backward()
    _close(x.grad, x2.grad)


def test_dropout_in_training_trains_as_eager():
    model = ember.nn.Sequential(ember.nn.Linear(6, 6), ember.nn.Dropout(0.5), ember.nn.Linear(6, 2))
    compiled = ember.compile(model, backend="aot_eager")
    for step in range(3):
        x = ember.randn(4, 6)
        model.zero_grad()
        ember.manual_seed(step)
        expected = model(x)
        expected.sum().backward()
        want = _grads(model)
        model.zero_grad()
        ember.manual_seed(step)
        got = compiled(x)
        got.sum().backward()
        _close(got, expected)
        for g, w in zip(_grads(model), want):
            _close(g, w)
    assert got.grad_fn.name() == AOT


def _saved_placeholders(compiled):
    aot = compiled._ember_compiled.entries[0].run
    return [n for n in aot.backward_graph.graph.nodes if n.op == "placeholder"
            and n.name.startswith("saved")]


@pytest.mark.parametrize("op, saved", [("relu", 1), ("abs", 1), ("sin", 2), ("gelu", 2)])
def test_cheap_pointwise_results_are_recomputed_in_the_backward_instead_of_saved(op, saved):
    """h = x * 2 is recomputed from x; a cheap op's result from h, a transcendental one's
    (sin, GELU's erf) is kept, as eager keeps it."""
    def f(x):
        fn = getattr(ember.nn.functional, op, None) or getattr(ember, op)  # (patched while
        h = x * 2                                                          # it captures)
        return (fn(h) * h).sum()

    compiled = ember.compile(f, backend="aot_eager")
    compiled(ember.randn(5, requires_grad=True))
    x = ember.randn(5, requires_grad=True)
    compiled(x).backward()
    x2 = x.detach().requires_grad_()
    f(x2).backward()
    _close(x.grad, x2.grad)
    assert len(_saved_placeholders(compiled)) == saved


def test_a_graph_made_dynamic_replays_with_eager_autograd():
    model = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.Tanh())
    compiled = ember.compile(model, backend="aot_eager")
    for batch in (4, 4, 6, 8, 9):
        x = ember.randn(batch, 3, requires_grad=True)
        compiled(x).sum().backward()
        x2 = x.detach().requires_grad_()
        model(x2).sum().backward()
        _close(x.grad, x2.grad)


def test_fullgraph_gets_the_aot_backward():
    model = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.GELU(), ember.nn.LayerNorm(4))
    compiled = ember.compile(model, fullgraph=True, backend="aot_eager")
    for _ in range(2):
        x = ember.randn(5, 3, requires_grad=True)
        out = compiled(x)
        out.pow(2).sum().backward()
        x2 = x.detach().requires_grad_()
        model(x2).pow(2).sum().backward()
        _close(x.grad, x2.grad)
    assert out.grad_fn.name() == AOT


def test_parameter_gradients_accumulate_into_grad_as_eager():
    model = ember.nn.Linear(3, 2)
    compiled = ember.compile(model, backend="aot_eager")
    x = ember.randn(4, 3)
    compiled(x).sum().backward()
    model.zero_grad()
    for _ in range(2):
        out = compiled(x)
        out.sum().backward()
    assert out.grad_fn.name() == AOT
    got = model.weight.grad.clone()
    model.zero_grad()
    for _ in range(2):
        model(x).sum().backward()
    _close(got, model.weight.grad)


def test_the_default_backend_takes_the_aot_backward_unless_asked_not_to():
    """``inductor`` (the default) builds the ahead-of-time backward for training calls (its
    graphs fused); its ``aot_backward`` option (or ``ember._inductor.config.aot_backward``)
    set to False replays them with eager autograd."""
    model = ember.nn.Sequential(ember.nn.Linear(4, 3), ember.nn.GELU())
    x = ember.randn(2, 4)
    model(x).sum().backward()
    expected = model[0].weight.grad.clone()
    for options, node in ((None, AOT), ({"aot_backward": False}, "GeluBackward0"),
                          ({"aot_backward": True}, AOT)):
        model.zero_grad()
        compiled = ember.compile(model, options=options)
        compiled(x)
        out = compiled(x)
        assert out.grad_fn.name() == node
        out.sum().backward()
        _close(model[0].weight.grad, expected)


# -- the backward graph calls eager's array kernels ----------------------------------------------

def test_backward_graph_runs_the_nodes_array_kernels_as_eager_does():
    """Each node with an array backward (oneDNN's GELU backward, the fused layer-norm and
    softmax backward, one GEMM per input of a linear) is one ``run_node_arrays`` call of the
    backward graph, not its formula re-derived in ember ops (no erf for GELU); the cross
    entropy, which keeps arrays of its run, is the node its forward call made."""
    nn = ember.nn
    model = nn.Sequential(nn.Linear(12, 32), nn.GELU(), nn.LayerNorm(32), nn.SiLU(),
                          nn.Linear(32, 16), nn.Tanh(), nn.Linear(16, 16), nn.Sigmoid(),
                          nn.Linear(16, 10), nn.LogSoftmax(dim=1))
    target = ember.tensor([1, 0, 4, 9, 3, 3])

    def loss(x):
        out = model(x)
        return ember.nn.functional.cross_entropy(out, target) + out.softmax(1).pow(2).sum()

    compiled = ember.compile(loss, backend="aot_eager")
    compiled(ember.randn(6, 12))
    for _ in range(2):
        x = ember.randn(6, 12, requires_grad=True)
        model.zero_grad()
        got = compiled(x)
        got.backward()
        got_grads = _grads(model)
        x2 = x.detach().requires_grad_()
        model.zero_grad()
        expected = loss(x2)
        expected.backward()
        _close(got, expected)
        _close(x.grad, x2.grad)
        for g, w in zip(got_grads, _grads(model)):
            _close(g, w)
    assert got.grad_fn.name() == AOT
    code = compiled._ember_compiled.entries[-1].run.backward_graph.code
    for name in ("AddmmBackward0", "GeluBackward0", "NativeLayerNormBackward0", "SiluBackward0",
                 "TanhBackward0", "SigmoidBackward0", "LogSoftmaxBackward0", "SoftmaxBackward0"):
        assert f"{name}, " in code
    # the four linears, six activations or norms and the softmax; view nodes with an array
    # backward (a linear's transposed weight) are calls too
    assert code.count("run_node_arrays(") >= 11
    assert "run_node_backward(" in code                  # the cross entropy's node
    assert "erf" not in code and "_gelu_grad" not in code


def test_convolutions_backward_is_their_array_kernel_not_a_replay():
    """A convolution's node keeps its geometry as a tuple of literals, so the backward graph
    calls its array kernel (oneDNN's backward primitives) rather than running its forward
    again to get the node back; values and gradients match eager."""
    nn = ember.nn
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8),
                          nn.ReLU(), nn.Conv2d(8, 8, 3, stride=2, padding=1),
                          nn.ConvTranspose2d(8, 4, 4, stride=2, padding=1), nn.Flatten())
    compiled = ember.compile(model)
    x = ember.randn(2, 3, 8, 8)
    for _ in range(3):
        model.zero_grad()
        got = compiled(x)
        got.pow(2).sum().backward()
        got_grads = _grads(model)
        model.zero_grad()
        expected = model(x)
        expected.pow(2).sum().backward()
        _close(got, expected)
        for g, w in zip(got_grads, _grads(model)):
            _close(g, w)
    assert got.grad_fn.name() == AOT
    code = compiled._compiled.entries[-1].run.backward_graph.code
    assert code.count("run_node_arrays(ember.nn.functional.conv.ConvolutionBackward0") == 2
    assert code.count("run_node_arrays(ember.nn.functional.conv.ConvolutionTransposeBackward0") == 1
    assert "run_node_backward(" not in code


class _Scaled(ember.autograd.graph.Node):
    """A node class with a slot and an array backward that declines negative factors."""

    __slots__ = ("factor",)

    def backward(self, grad):
        return (grad * self.factor,)

    def backward_arrays(self, grad):
        if self.factor < 0:
            return None
        return (ember.from_numpy(grad.numpy() * self.factor),)


@pytest.mark.parametrize("factor", [3.0, -2.0])
def test_run_node_arrays_sets_slots_and_falls_back_to_the_formula(factor):
    from ember._dynamo._aot import run_node_arrays
    grad = ember.randn(4)
    (got,) = run_node_arrays(_Scaled, {"factor": factor}, (0,), (), grad)
    _close(got, grad * factor)


def test_forward_graph_takes_the_roots_tensors_as_arguments_while_they_are_the_same():
    """The forward graph gets the parameters as arguments (not fetched through the modules):
    changes in place are seen, and a parameter replaced by another recompiles."""
    model = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.Tanh(), ember.nn.Linear(4, 2))
    compiled = ember.compile(model, backend="aot_eager")
    x = ember.randn(5, 3)
    compiled(x)
    compiled(x)
    run = compiled._compiled.entries[-1].run
    assert any(t is model[0].weight for t in run.lifted)
    for change in ("in place", "replaced"):
        if change == "in place":
            with ember.no_grad():
                model[2].weight.mul_(2)
        else:
            model[2].weight = ember.nn.Parameter(ember.randn(2, 4))
            compiled(x)                     # the guard fails: captured again
        model.zero_grad()
        out = compiled(x)
        out.sum().backward()
        got = _grads(model)
        model.zero_grad()
        expected = model(x)
        expected.sum().backward()
        _close(out, expected)
        for g, w in zip(got, _grads(model)):
            _close(g, w)
        assert out.grad_fn.name() == AOT
    assert len(compiled._compiled.entries) == 2


# -- recurrent layers and batch norm with the default backend, against torch ----------------------

def _torch_copy(module, tmodule):
    tmodule.load_state_dict({k: torch.tensor(v.detach().numpy())
                             for k, v in module.state_dict().items()})
    return tmodule


def _close_to_torch(got, expected, rtol=1e-4, atol=1e-5):
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=rtol,
                               atol=atol)


def _grads_close_to_torch(module, tmodule):
    tparams = dict(tmodule.named_parameters())
    for name, p in module.named_parameters():
        assert p.grad is not None, name
        _close_to_torch(p.grad, tparams[name].grad)


def _one_node_over_leaves(out):
    """The output's node is the region's one node, and every edge out of it leads to a leaf."""
    node = out.grad_fn
    assert node.name() == AOT
    assert all(type(fn).__name__ == "AccumulateGrad" for fn, _ in node.next_functions
               if fn is not None)


def test_lstm_language_model_trains_through_one_node_as_torch():
    rng = np.random.default_rng(0)
    ember.manual_seed(0)
    model = models._lstm_lm_class(ember)(50, 16)
    tmodel = _torch_copy(model, models._lstm_lm_class(torch)(50, 16))
    compiled = ember.compile(model)
    for _ in range(3):
        tokens = rng.integers(0, 50, size=(6, 3), dtype=np.int64)
        targets = rng.integers(0, 50, size=(18,), dtype=np.int64)
        model.zero_grad()
        tmodel.zero_grad()
        out = compiled(ember.from_numpy(tokens))
        loss = ember.nn.functional.cross_entropy(out.reshape(-1, 50), ember.from_numpy(targets))
        loss.backward()
        tout = tmodel(torch.from_numpy(tokens))
        tloss = torch.nn.functional.cross_entropy(tout.reshape(-1, 50),
                                                  torch.from_numpy(targets))
        tloss.backward()
        _close_to_torch(out, tout)
        _close_to_torch(loss, tloss)
        _grads_close_to_torch(model, tmodel)
    _one_node_over_leaves(out)
    code = compiled._compiled.entries[-1].run.backward_graph.code
    # each layer's backpropagation through time is one call of its array kernel
    assert code.count("run_node_arrays(ember.nn.functional.recurrent.MkldnnRnnLayerBackward0") \
        == 2


@pytest.mark.parametrize("mode, options, batch_first", [
    ("GRU", {}, True), ("RNN", {"nonlinearity": "relu"}, False),
    ("RNN", {"num_layers": 2, "bidirectional": True}, True),
    ("LSTM", {"num_layers": 2, "bidirectional": True, "dropout": 0.0}, False)])
def test_recurrent_layer_compiles_at_each_size_as_torch(mode, options, batch_first):
    """The input and the initial state (GRU, RNN) get gradients through the region's one node;
    another sequence length and batch size recompile, and each size's graph is used again."""
    ember.manual_seed(0)
    layer = getattr(ember.nn, mode)(3, 4, batch_first=batch_first, **options)
    tlayer = _torch_copy(layer, getattr(torch.nn, mode)(3, 4, batch_first=batch_first,
                                                         **options))
    compiled = ember.compile(layer)
    rng = np.random.default_rng(1)
    states = layer.num_layers * (2 if layer.bidirectional else 1)
    for time, batch in [(5, 2), (5, 2), (3, 4), (3, 4)]:
        shape = (batch, time, 3) if batch_first else (time, batch, 3)
        x = rng.standard_normal(shape, dtype=np.float32)
        h0 = rng.standard_normal((states, batch, 4), dtype=np.float32)
        inputs = [ember.from_numpy(x).requires_grad_()]
        tinputs = [torch.from_numpy(x).requires_grad_()]
        if mode != "LSTM":      # (an LSTM's state is a tuple: no input in a container)
            inputs.append(ember.from_numpy(h0).requires_grad_())
            tinputs.append(torch.from_numpy(h0).requires_grad_())
        layer.zero_grad()
        tlayer.zero_grad()
        out, h = compiled(*inputs)
        tout, th = tlayer(*tinputs)
        if mode == "LSTM":
            h, th = h[1], th[1]
        (out.pow(2).sum() + h.sum()).backward()
        (tout.pow(2).sum() + th.sum()).backward()
        _close_to_torch(out, tout)
        _close_to_torch(h, th)
        _grads_close_to_torch(layer, tlayer)
        for a, ta in zip(inputs, tinputs):
            _close_to_torch(a.grad, ta.grad)
    _one_node_over_leaves(out)
    assert len(compiled._compiled.entries) == 2


def test_packed_sequence_runs_eagerly_and_says_why(caplog):
    from ember.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
    ember.manual_seed(0)
    lstm = ember.nn.LSTM(3, 4)
    tlstm = _torch_copy(lstm, torch.nn.LSTM(3, 4))
    compiled = ember.compile(lstm)
    x = np.random.default_rng(2).standard_normal((5, 3, 3), dtype=np.float32)
    with caplog.at_level(logging.INFO, logger="ember._dynamo"):
        for _ in range(2):
            lstm.zero_grad()
            tlstm.zero_grad()
            packed = pack_padded_sequence(ember.from_numpy(x), [5, 3, 2])
            out = pad_packed_sequence(compiled(packed)[0])[0]
            tpacked = torch.nn.utils.rnn.pack_padded_sequence(torch.from_numpy(x), [5, 3, 2])
            tout = torch.nn.utils.rnn.pad_packed_sequence(tlstm(tpacked)[0])[0]
            out.pow(2).sum().backward()
            tout.pow(2).sum().backward()
            _close_to_torch(out, tout)
            _grads_close_to_torch(lstm, tlstm)
    assert "a tensor converted to a Python list" in caplog.text
    assert compiled._compiled.graph_break is not None


def test_resnet20_batch_norm_statistics_follow_eager_and_torch():
    """Two training steps, the second through the ahead-of-time backward: BatchNorm's
    running_mean, running_var and num_batches_tracked end as eager's (float32 rounding
    apart) and torch's."""
    rng = np.random.default_rng(3)
    model = models.resnet20(ember, batch=2).modules["model"]
    eager = copy.deepcopy(model)
    tmodel = _torch_copy(model, models.resnet20(torch, batch=2).modules["model"])
    compiled = ember.compile(model)
    for _ in range(2):
        x = rng.standard_normal((2, 3, 16, 16), dtype=np.float32)  # pooled to 1x1 anyway
        y = rng.integers(0, 10, size=(2,), dtype=np.int64)
        for m in (model, eager, tmodel):
            m.zero_grad()
        out = compiled(ember.from_numpy(x))
        ember.nn.functional.cross_entropy(out, ember.from_numpy(y)).backward()
        expected = eager(ember.from_numpy(x))
        ember.nn.functional.cross_entropy(expected, ember.from_numpy(y)).backward()
        tout = tmodel(torch.from_numpy(x))
        torch.nn.functional.cross_entropy(tout, torch.from_numpy(y)).backward()
        _close(out, expected)
        _close_to_torch(out, tout)
        _grads_close_to_torch(model, tmodel)
        for got, want in zip(_grads(model), _grads(eager)):
            _close(got, want)
    _one_node_over_leaves(out)
    buffers = dict(eager.named_buffers())
    tbuffers = dict(tmodel.named_buffers())
    assert any(name.endswith("num_batches_tracked") for name in buffers)
    for name, b in model.named_buffers():
        if name.endswith("num_batches_tracked"):
            assert b.item() == buffers[name].item() == tbuffers[name].item() == 2, name
            continue
        np.testing.assert_allclose(b.numpy(), buffers[name].numpy(), rtol=1e-6, atol=1e-7,
                                   err_msg=name)
        _close_to_torch(b, tbuffers[name])
