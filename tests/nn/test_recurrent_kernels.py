"""float32 LSTM, GRU and Elman RNN layers on each kernel library (oneDNN's RNN primitives,
NumPy's steps) against torch, whose CPU LSTM runs oneDNN's primitive: outputs, final states and
every gradient; the cases oneDNN does not take (projections, packed sequences whose batch
shrinks, float64) left to NumPy; a backward on NumPy after a forward on oneDNN."""
import numpy as np
import pytest
import torch
import torch.nn.utils.rnn as trnn

import ember
import ember.nn.utils.rnn as ernn
from ember._backend import choice
from ember.nn.functional import recurrent

from test_rnn import run_and_compare, sequence_inputs, twins

ONEDNN_IN_USE = choice.enabled(choice.ONEDNN)
LIBRARIES = [choice.NUMPY] + ([choice.ONEDNN] if ONEDNN_IN_USE else [])
needs_onednn = pytest.mark.skipif(not ONEDNN_IN_USE,
                                  reason="oneDNN is not in use (not installed, or EMBER_ONEDNN=0)")
TOL = {"rtol": 2e-5, "atol": 2e-6}

CASES = [  # (module kwargs, input shape (batch_first where asked), state shape or None)
    ({"num_layers": 2}, (9, 4, 6), (2, 4, 8)),
    ({"num_layers": 1}, (9, 4, 6), None),
    ({"bidirectional": True}, (5, 3, 6), (2, 3, 8)),
    ({"num_layers": 2, "bidirectional": True, "bias": False}, (5, 3, 6), None),
    ({"batch_first": True}, (3, 7, 6), (1, 3, 8)),
    ({"num_layers": 1}, (1, 1, 6), (1, 1, 8)),
]


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN", "RNN relu"])
@pytest.mark.parametrize("kwargs,shape,state", CASES)
def test_layer_on_each_library_matches_torch(library, kind, kwargs, shape, state, monkeypatch):
    monkeypatch.setattr(recurrent, "ELMAN_MIN_STEPS", 0)   # (short sequences on oneDNN too)
    if kind == "RNN relu":
        kind, kwargs = "RNN", {**kwargs, "nonlinearity": "relu"}
    tm, em = twins(kind, dtype="float", input_size=6, hidden_size=8, **kwargs)
    states = () if state is None else (state, state) if kind == "LSTM" else (state,)
    with choice.only(library):
        run_and_compare(tm, em, sequence_inputs(shape, states, np.float32), **TOL)
        with ember.no_grad():
            out, h = em(ember.tensor(np.ones(shape, np.float32)))
    expected, h_t = tm(torch.ones(shape))
    np.testing.assert_allclose(out.numpy(), expected.detach().numpy(), **TOL)
    if kind == "LSTM":
        np.testing.assert_allclose(h[1].numpy(), h_t[1].detach().numpy(), **TOL)


@needs_onednn
@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
def test_gradients_on_numpy_after_a_forward_on_onednn(kind, monkeypatch):
    """The backward recomputes the steps on NumPy when oneDNN's is not to run (its forward
    kept only oneDNN's workspace)."""
    monkeypatch.setattr(recurrent, "ELMAN_MIN_STEPS", 0)
    tm, em = twins(kind, dtype="float", input_size=6, hidden_size=8, num_layers=2)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((6, 2, 6)).astype(np.float32)
    g = rng.standard_normal((6, 2, 8)).astype(np.float32)
    xe, xt = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    with choice.only(choice.ONEDNN):
        out_e, h_e = em(xe)
    assert out_e.grad_fn.on_onednn
    with choice.only(choice.NUMPY):
        ((out_e * ember.tensor(g)).sum() + h_e[0].sum()).backward()
    out_t, h_t = tm(xt)
    ((out_t * torch.tensor(g)).sum() + h_t[0].sum()).backward()
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), **TOL)
    for (name, pe), (_, pt) in zip(em.named_parameters(), tm.named_parameters()):
        np.testing.assert_allclose(pe.grad.numpy(), pt.grad.numpy(), err_msg=name, **TOL)


@needs_onednn
def test_frozen_lstm_gives_the_input_its_gradient_alone():
    tm, em = twins("LSTM", dtype="float", input_size=6, hidden_size=8)
    for p in list(em.parameters()) + list(tm.parameters()):
        p.requires_grad_(False)
    x = np.random.default_rng(2).standard_normal((4, 3, 6)).astype(np.float32)
    xe, xt = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    with choice.only(choice.ONEDNN):
        em(xe)[0].sum().backward()
    tm(xt)[0].sum().backward()
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), **TOL)
    assert all(p.grad is None for p in em.parameters())


@needs_onednn
@pytest.mark.parametrize("case", ["projection", "shrinking batch", "float64", "short Elman RNN"])
def test_cases_outside_onednns_rnn_primitives_are_declined(case):
    x = ember.randn(5, 2, 6)
    if case == "short Elman RNN":
        layer = ember.nn.RNN(6, 8)
    elif case == "projection":
        layer = ember.nn.LSTM(6, 8, proj_size=4)
    elif case == "float64":
        layer = ember.nn.RNN(6, 8).double()
        x = x.double()
    else:
        layer = ember.nn.GRU(6, 8)
        x = ernn.pack_sequence([ember.randn(5, 6), ember.randn(3, 6)])
    with choice.only(choice.ONEDNN), pytest.raises(choice.KernelNotApplicable, match="recurrent"):
        layer(x)
    with choice.only(choice.NUMPY):
        assert layer(x)[0] is not None


@needs_onednn
def test_packed_sequence_of_equal_lengths_runs_on_onednn_and_matches_torch():
    tm, em = twins("LSTM", dtype="float", input_size=6, hidden_size=8)
    rows = np.random.default_rng(3).standard_normal((2, 5, 6)).astype(np.float32)
    with choice.only(choice.ONEDNN):
        out_e, (h_e, _) = em(ernn.pack_sequence([ember.tensor(r) for r in rows]))
    out_t, (h_t, _) = tm(trnn.pack_sequence([torch.tensor(r) for r in rows]))
    np.testing.assert_allclose(out_e.data.detach().numpy(), out_t.data.detach().numpy(), **TOL)
    np.testing.assert_allclose(h_e.detach().numpy(), h_t.detach().numpy(), **TOL)
