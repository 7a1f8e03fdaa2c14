"""Every nn layer class of ember (the entries of tests/test_graph_layers.py) compiled with
``ember.compile(layer, backend="eager")``: the layer's own code is captured (the root is traced
through), and the replay must give the eager layer's outputs and gradients."""
import pytest

import ember
import ember.compiler
from test_graph_layers import LAYERS, _make_inputs, _run


def _fresh(inputs):
    return [x.detach().requires_grad_(x.requires_grad) for x in inputs]


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_compiled_layer_gives_eager_outputs_and_gradients(name):
    ember.manual_seed(0)
    make, spec = LAYERS[name]
    module = make()
    module(*_make_inputs(spec, 0))          # lazy layers take their shapes on a first call
    inputs = _make_inputs(spec, 1)
    compiled = ember.compile(module, backend="eager")
    ember.manual_seed(1)
    expected_out, expected_grads = _run(module, _fresh(inputs))
    ember.manual_seed(1)
    _run(compiled, _fresh(inputs))           # captures
    ember.manual_seed(1)
    got_out, got_grads = _run(compiled, _fresh(inputs))    # replays
    assert len(got_out) == len(expected_out) > 0
    for got, expected in zip(got_out, expected_out):
        ember.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)
    assert len(got_grads) == len(expected_grads)
    for got, expected in zip(got_grads, expected_grads):
        assert (got is None) == (expected is None)
        if got is not None:
            ember.testing.assert_close(got, expected, rtol=1e-4, atol=1e-5)
    cache = compiled._compiled
    assert cache.graph_break is not None or len(cache.entries) == 1


def test_layers_that_break_on_their_own_are_single_calls_inside_a_model():
    lstm = ember.nn.LSTM(3, 4, batch_first=True)
    head = ember.nn.Linear(4, 2)

    class Model(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm, self.head = lstm, head

        def forward(self, x):
            return self.head(self.lstm(x)[0][:, -1])

    model = Model()
    compiled = ember.compile(model, backend="eager")
    x = ember.randn(2, 5, 3)
    for _ in range(2):
        ember.testing.assert_close(compiled(x), model(x))
    assert compiled._compiled.graph_break is None
    gm = compiled._compiled.entries[0].graph_module
    assert [n.target for n in gm.graph.nodes if n.op == "call_module"] == ["lstm", "head"]


@pytest.mark.parametrize("mode", ["RNN", "LSTM", "GRU"])
def test_recurrent_layer_compiled_alone_records_one_call_per_pass(mode):
    """Each layer and direction's pass over the sequence is one ``recurrent_layer`` call of
    the graph (no graph break), with grad mode on or off."""
    from ember.jit._layers import recurrent_layer
    layer = getattr(ember.nn, mode)(3, 4, num_layers=2, bidirectional=True)
    x = ember.randn(5, 2, 3)
    for grad in (False, True):
        compiled = ember.compile(layer, backend="eager")
        with ember.set_grad_enabled(grad):
            for _ in range(2):
                got = compiled(x)
            expected = layer(x)
        ember.testing.assert_close(got[0], expected[0])
        cache = compiled._compiled
        assert cache.graph_break is None and len(cache.entries) == 1
        calls = [n for n in cache.entries[0].graph_module.graph.nodes
                 if n.target is recurrent_layer]
        assert len(calls) == 4
