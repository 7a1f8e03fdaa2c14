"""Recurrent layers, cells and nn.utils.rnn against torch: the same weights (through
state_dict), then outputs, final states and the gradients of inputs, initial states and
parameters compared in float64."""
import numpy as np
import pytest
import torch
import torch.nn.utils.rnn as trnn

import ember
import ember.nn as nn
import ember.nn.utils.rnn as ernn
from ember.nn.functional.recurrent import _rnn_layer

RTOL, ATOL = 1e-7, 1e-10


def close(e, t, what="", rtol=RTOL, atol=ATOL):
    assert e is not None, f"{what}: ember gave no value"
    e = e.detach().cpu().numpy() if hasattr(e, "detach") else np.asarray(e)
    np.testing.assert_allclose(e, t.detach().numpy(), rtol=rtol, atol=atol, err_msg=what)


def twins(kind, dtype="double", device="cpu", **kwargs):
    """The torch and ember layers of class ``kind`` with torch's weights in both (ember's on
    ``device``)."""
    torch.manual_seed(0)
    tm = getattr(torch.nn, kind)(**kwargs)
    em = getattr(nn, kind)(**kwargs)
    tm, em = getattr(tm, dtype)(), getattr(em, dtype)()
    state = tm.state_dict()
    assert list(em.state_dict()) == list(state)
    for key, value in state.items():
        assert tuple(em.state_dict()[key].shape) == tuple(value.shape), key
    em.load_state_dict({k: ember.tensor(v.numpy()) for k, v in state.items()})
    return tm, em.to(device)


def leaf_pair(array, device="cpu"):
    return (ember.tensor(array, requires_grad=True, device=device),
            torch.tensor(array, requires_grad=True))


def flat(x):
    """A tensor, a tuple of tensors or a PackedSequence as a list of tensors."""
    if isinstance(x, (ernn.PackedSequence, trnn.PackedSequence)):
        return [x.data]
    if isinstance(x, tuple):
        return [t for part in x for t in flat(part)]
    return [x]


def run_and_compare(tm, em, make_inputs, seed=0, rtol=RTOL, atol=ATOL):
    """Call both layers on the inputs ``make_inputs(lib, arrays)`` builds and compare all
    outputs and every gradient of a random linear function of them."""
    rng = np.random.default_rng(seed)
    te, tt, leaves_e, leaves_t = make_inputs(rng)
    ye, yt = em(*te), tm(*tt)
    outs_e, outs_t = flat(ye), flat(yt)
    assert len(outs_e) == len(outs_t)
    loss_e, loss_t = 0, 0
    for i, (oe, ot) in enumerate(zip(outs_e, outs_t)):
        assert tuple(oe.shape) == tuple(ot.shape), f"output {i} shape"
        assert oe.device == leaves_e[0].device, f"output {i} device"
        close(oe, ot, f"output {i}", rtol, atol)
        g = rng.standard_normal(tuple(ot.shape))
        loss_e = loss_e + (oe * ember.tensor(g, dtype=oe.dtype, device=oe.device)).sum()
        loss_t = loss_t + (ot * torch.tensor(g, dtype=ot.dtype)).sum()
    loss_e.backward()
    loss_t.backward()
    for i, (le, lt) in enumerate(zip(leaves_e, leaves_t)):
        close(le.grad, lt.grad, f"grad of input {i}", rtol, atol)
    for (name, pe), (_, pt) in zip(em.named_parameters(), tm.named_parameters()):
        if pt.grad is None:
            assert pe.grad is None, name
        else:
            close(pe.grad, pt.grad, f"grad of {name}", rtol, atol)
    return ye, yt


def sequence_inputs(shape, states=(), dtype=np.float64, device="cpu"):
    """A ``make_inputs`` for an input of ``shape`` and initial states of the given shapes
    (a tuple of two for LSTM, one shape otherwise, none for no hx); ember's on ``device``."""
    def make(rng):
        arrays = [rng.standard_normal(shape).astype(dtype)]
        arrays += [rng.standard_normal(s).astype(dtype) for s in states]
        pairs = [leaf_pair(a, device) for a in arrays]
        es, ts = [p[0] for p in pairs], [p[1] for p in pairs]
        if len(states) == 2:
            return [es[0], (es[1], es[2])], [ts[0], (ts[1], ts[2])], es, ts
        return es, ts, es, ts
    return make


LAYER_CASES = [
    ("LSTM", {}, (5, 3, 4)),
    ("LSTM", {"num_layers": 2}, (5, 3, 4)),
    ("LSTM", {"bidirectional": True}, (4, 2, 4)),
    ("LSTM", {"num_layers": 2, "bidirectional": True, "batch_first": True}, (2, 4, 4)),
    ("LSTM", {"proj_size": 2}, (5, 3, 4)),
    ("LSTM", {"proj_size": 2, "num_layers": 2, "bidirectional": True}, (4, 2, 4)),
    ("LSTM", {"bias": False, "num_layers": 2}, (4, 2, 4)),
    ("LSTM", {}, (6, 4)),
    ("LSTM", {"batch_first": True, "proj_size": 3}, (6, 4)),
    ("GRU", {}, (5, 3, 4)),
    ("GRU", {"num_layers": 2, "bidirectional": True}, (4, 2, 4)),
    ("GRU", {"batch_first": True, "bias": False}, (2, 5, 4)),
    ("GRU", {"num_layers": 3}, (6, 4)),
    ("RNN", {}, (5, 3, 4)),
    ("RNN", {"nonlinearity": "relu", "num_layers": 2, "bidirectional": True}, (4, 2, 4)),
    ("RNN", {"batch_first": True, "bias": False}, (2, 5, 4)),
    ("RNN", {"nonlinearity": "relu"}, (6, 4)),
]


def state_shapes(kind, kwargs, shape):
    layers = kwargs.get("num_layers", 1) * (2 if kwargs.get("bidirectional") else 1)
    batched = len(shape) == 3
    batch = (shape[0] if kwargs.get("batch_first") else shape[1]) if batched else None
    hidden = kwargs.get("proj_size") or 5
    lead = (layers, batch) if batched else (layers,)
    if kind == "LSTM":
        return (lead + (hidden,), lead + (5,))
    return (lead + (hidden,),)


@pytest.mark.parametrize("with_state", [False, True])
@pytest.mark.parametrize("kind,kwargs,shape", LAYER_CASES)
def test_layer_matches_torch(kind, kwargs, shape, with_state, device):
    tm, em = twins(kind, input_size=4, hidden_size=5, device=device, **kwargs)
    states = state_shapes(kind, kwargs, shape) if with_state else ()
    for mode in ("train", "eval"):
        tm.train(mode == "train")
        em.train(mode == "train")
        for param in list(em.parameters()) + list(tm.parameters()):
            param.grad = None
        run_and_compare(tm, em, sequence_inputs(shape, states, device=device), seed=len(mode))


def test_lstm_float32_matches_torch():
    tm, em = twins("LSTM", dtype="float", input_size=6, hidden_size=8, num_layers=2)
    run_and_compare(tm, em, sequence_inputs((7, 3, 6), ((2, 3, 8), (2, 3, 8)), np.float32),
                    rtol=1e-4, atol=1e-5)
    out, _ = em(ember.randn(7, 3, 6))
    assert out.dtype == ember.float32


def test_rnn_only_some_outputs_used_and_no_grad_path():
    tm, em = twins("LSTM", input_size=3, hidden_size=4)
    x = np.random.default_rng(0).standard_normal((5, 2, 3))
    xe, xt = leaf_pair(x)
    em(xe)[1][1].sum().backward()  # only c_n
    tm(xt)[1][1].sum().backward()
    close(xe.grad, xt.grad, "grad through c_n only")
    with ember.no_grad():
        out, (h, c) = em(ember.tensor(x, requires_grad=True))
    assert out.grad_fn is None and not out.requires_grad
    close(out, tm(torch.tensor(x))[0], "no_grad output")


def test_lstm_records_one_node_per_layer_named_as_torch():
    lstm = nn.LSTM(3, 4)
    out, (h, c) = lstm(ember.randn(5, 2, 3))
    assert out.grad_fn.name() == "MkldnnRnnLayerBackward0"
    assert h.grad_fn.name() == "StackBackward0"


def test_input_requiring_grad_with_frozen_weights():
    tm, em = twins("GRU", input_size=3, hidden_size=4, num_layers=2)
    for p in list(em.parameters()) + list(tm.parameters()):
        p.requires_grad_(False)
    run_and_compare(tm, em, sequence_inputs((4, 2, 3), ((2, 2, 4),)))


# ---------------------------------------------------------------------------------------------
# PackedSequence inputs


def packed_inputs(lengths, feature, states=(), batch_first=False, enforce_sorted=False):
    def make(rng):
        steps, batch = max(lengths), len(lengths)
        shape = (batch, steps, feature) if batch_first else (steps, batch, feature)
        x = rng.standard_normal(shape)
        (xe, xt) = leaf_pair(x)
        pe = ernn.pack_padded_sequence(xe, lengths, batch_first, enforce_sorted)
        pt = trnn.pack_padded_sequence(xt, lengths, batch_first, enforce_sorted)
        pairs = [leaf_pair(rng.standard_normal(s)) for s in states]
        es, ts = [p[0] for p in pairs], [p[1] for p in pairs]
        hx_e = tuple(es) if len(es) == 2 else (es[0] if es else None)
        hx_t = tuple(ts) if len(ts) == 2 else (ts[0] if ts else None)
        return [pe, hx_e], [pt, hx_t], [xe] + es, [xt] + ts
    return make


PACKED_CASES = [
    ("LSTM", {}, [4, 3, 3, 1], True),
    ("LSTM", {"num_layers": 2, "bidirectional": True}, [2, 4, 1, 3], False),
    ("LSTM", {"proj_size": 2, "bidirectional": True}, [3, 1, 4], False),
    ("GRU", {"num_layers": 2, "bidirectional": True}, [2, 4, 1, 3], False),
    ("GRU", {}, [5, 2], True),
    ("RNN", {"bidirectional": True, "nonlinearity": "relu"}, [1, 3, 2], False),
    ("RNN", {"num_layers": 2}, [3, 3, 2], True),
]


@pytest.mark.parametrize("with_state", [False, True])
@pytest.mark.parametrize("kind,kwargs,lengths,sorted_", PACKED_CASES)
def test_packed_sequence_input_matches_torch(kind, kwargs, lengths, sorted_, with_state):
    tm, em = twins(kind, input_size=3, hidden_size=4, **kwargs)
    states = ()
    if with_state:
        layers = kwargs.get("num_layers", 1) * (2 if kwargs.get("bidirectional") else 1)
        hidden = kwargs.get("proj_size") or 4
        states = ((layers, len(lengths), hidden),)
        if kind == "LSTM":
            states += ((layers, len(lengths), 4),)
    ye, yt = run_and_compare(tm, em, packed_inputs(lengths, 3, states, enforce_sorted=sorted_))
    out_e, out_t = ye[0], yt[0]
    assert isinstance(out_e, ernn.PackedSequence)
    assert out_e.batch_sizes.tolist() == out_t.batch_sizes.tolist()
    for name in ("sorted_indices", "unsorted_indices"):
        e, t = getattr(out_e, name), getattr(out_t, name)
        assert (e is None) == (t is None)
        if t is not None:
            assert e.tolist() == t.tolist()


def test_packed_output_unpacks_like_torch():
    tm, em = twins("GRU", input_size=2, hidden_size=3, batch_first=True)
    rng = np.random.default_rng(3)
    seqs = [rng.standard_normal((n, 2)) for n in (2, 4, 3)]
    out_e, _ = em(ernn.pack_sequence([ember.tensor(s) for s in seqs], enforce_sorted=False))
    out_t, _ = tm(trnn.pack_sequence([torch.tensor(s) for s in seqs], enforce_sorted=False))
    pe, le = ernn.pad_packed_sequence(out_e, batch_first=True, padding_value=-1.0)
    pt, lt = trnn.pad_packed_sequence(out_t, batch_first=True, padding_value=-1.0)
    close(pe, pt, "padded output")
    assert le.tolist() == lt.tolist()


# ---------------------------------------------------------------------------------------------
# Cells

CELL_CASES = [
    ("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}), ("RNNCell", {"bias": False}),
    ("LSTMCell", {}), ("LSTMCell", {"bias": False}), ("GRUCell", {}), ("GRUCell", {"bias": False}),
]


@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("with_state", [False, True])
@pytest.mark.parametrize("kind,kwargs", CELL_CASES)
def test_cell_matches_torch(kind, kwargs, with_state, batched):
    tm, em = twins(kind, input_size=3, hidden_size=4, **kwargs)
    lead = (2,) if batched else ()
    states = ()
    if with_state:
        states = (lead + (4,),) * (2 if kind == "LSTMCell" else 1)
    make = sequence_inputs(lead + (3,), states)
    run_and_compare(tm, em, make)


def test_cell_unrolled_matches_layer():
    """An LSTMCell stepped by hand gives the LSTM layer's outputs (the fused path)."""
    cell = nn.LSTMCell(3, 4).double()
    layer = nn.LSTM(3, 4).double()
    layer.load_state_dict({k + "_l0": v for k, v in cell.state_dict().items()})
    x = ember.randn(5, 2, 3, dtype=ember.float64)
    h = c = ember.zeros(2, 4, dtype=ember.float64)
    outs = []
    for t in range(5):
        h, c = cell(x[t], (h, c))
        outs.append(h)
    out, (h_n, c_n) = layer(x)
    np.testing.assert_allclose(out.detach().numpy(), ember.stack(outs).detach().numpy(),
                               rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(c_n[0].detach().numpy(), c.detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize("dtype", ["float", "double"])
@pytest.mark.parametrize("kind,node", [("LSTMCell", "ThnnFusedLstmCellBackward0"),
                                       ("GRUCell", "ThnnFusedGruCellBackward0")])
def test_cell_step_is_one_node_and_matches_torch(kind, node, dtype):
    """LSTMCell and GRUCell run a step as one fused node: outputs and the gradients of input,
    states and parameters after several steps match torch's composite cell."""
    tm, em = twins(kind, dtype=dtype, input_size=5, hidden_size=4)
    rng = np.random.default_rng(3)
    npdtype = np.float32 if dtype == "float" else np.float64
    x_e, x_t = leaf_pair(rng.standard_normal((6, 3, 5)).astype(npdtype))
    h_e, h_t = leaf_pair(rng.standard_normal((3, 4)).astype(npdtype))
    c_e, c_t = leaf_pair(rng.standard_normal((3, 4)).astype(npdtype))
    lstm = kind == "LSTMCell"
    state_e, state_t = ((h_e, c_e), (h_t, c_t)) if lstm else (h_e, h_t)
    outs_e, outs_t = [], []
    for t in range(6):
        state_e, state_t = em(x_e[t], state_e), tm(x_t[t], state_t)
        outs_e.append(state_e[0] if lstm else state_e)
        outs_t.append(state_t[0] if lstm else state_t)
    assert type(outs_e[-1].grad_fn).__name__ == node
    tol = {"rtol": 1e-5, "atol": 1e-6} if dtype == "float" else {}
    weights = rng.standard_normal((6, 3, 4)).astype(npdtype)
    (ember.stack(outs_e) * ember.tensor(weights)).sum().backward()
    (torch.stack(outs_t) * torch.tensor(weights)).sum().backward()
    close(ember.stack(outs_e), torch.stack(outs_t), "outputs", **tol)
    for name, e, t in [("x", x_e, x_t), ("h", h_e, h_t)] + ([("c", c_e, c_t)] if lstm else []):
        close(e.grad, t.grad, f"grad of {name}", **tol)
    for (name, pe), pt in zip(em.named_parameters(), tm.parameters()):
        close(pe.grad, pt.grad, f"grad of {name}", **tol)


@pytest.mark.parametrize("fn,gates", [("lstm_cell", 4), ("gru_cell", 3)])
def test_fused_cell_double_backward_matches_torch(fn, gates):
    """create_graph through the fused cell (its node recomputes the step in ember ops)."""
    rng = np.random.default_rng(4)
    shapes = [(2, 3), (2, 4)] + [(2, 4)] * (fn == "lstm_cell") + [(gates * 4, 3), (gates * 4, 4),
                                                                  (gates * 4,), (gates * 4,)]
    pairs = [leaf_pair(rng.standard_normal(s)) for s in shapes]

    def grads(lib, args):
        x, h, *rest = args
        state = (h, rest.pop(0)) if fn == "lstm_cell" else h
        out = getattr(lib, fn)(x, state, *rest)
        out = out[0] * out[1] if fn == "lstm_cell" else out
        first = lib.autograd.grad(out.pow(2).sum(), args, create_graph=True)
        return lib.autograd.grad(sum(g.pow(2).sum() for g in first), args)

    for e, t in zip(grads(ember, [e for e, _ in pairs]), grads(torch, [t for _, t in pairs])):
        close(e, t, f"second-order gradient of {fn}")


def test_cell_functions_check_arguments_as_torch_does():
    """ember.lstm_cell / gru_cell raise torch's errors for inconsistent sizes, and take what
    torch takes beyond the fused case (one bias, a list of states)."""
    x, h = np.ones((2, 4)), np.ones((2, 3))
    w_ih, w_hh, b = np.ones((12, 4)), np.ones((12, 3)), np.ones(12)
    bad = [
        ("lstm_cell", (x, (h, h, h), w_ih, w_hh, b, b)),
        ("lstm_cell", (x, (h, np.ones((2, 4))), w_ih, w_hh, b, b)),
        ("lstm_cell", (x, (np.ones((3, 3)), h), w_ih, w_hh, b, b)),
        ("lstm_cell", (x, (h, h), np.ones((13, 4)), w_hh, b, b)),
        ("lstm_cell", (x, (h, h), w_ih, np.ones((12, 4)), b, b)),
        ("lstm_cell", (np.ones((2, 5)), (h, h), w_ih, w_hh, b, b)),
        ("gru_cell", (x, h, np.ones((9, 4)), np.ones((12, 3)))),
        ("gru_cell", (x, np.ones((2, 4)), np.ones((9, 4)), np.ones((9, 3)))),
    ]

    def call(lib, fn, args):
        def convert(a):
            if isinstance(a, (tuple, list)):
                return type(a)(lib.tensor(v) for v in a)
            return None if a is None else lib.tensor(a)
        return getattr(lib, fn)(*(convert(a) for a in args))

    for fn, args in bad:
        with pytest.raises(RuntimeError) as expected:
            call(torch, fn, args)
        with pytest.raises(RuntimeError) as raised:
            call(ember, fn, args)
        assert str(raised.value) == str(expected.value)
    for fn, args in [("lstm_cell", (x, [h, h], w_ih, w_hh, b, None)),
                     ("gru_cell", (x, h, np.ones((9, 4)), np.ones((9, 3)), None, np.ones(9)))]:
        out_e, out_t = call(ember, fn, args), call(torch, fn, args)
        if fn == "gru_cell":
            out_e, out_t = [out_e], [out_t]
        for e, t in zip(out_e, out_t):
            close(e, t, fn)


# ---------------------------------------------------------------------------------------------
# Higher-order gradients of the fused layer


@pytest.mark.parametrize("mode,proj", [("LSTM", 0), ("LSTM", 2), ("GRU", 0), ("RNN_TANH", 0),
                                       ("RNN_RELU", 0)])
@pytest.mark.parametrize("reverse", [False, True])
def test_fused_layer_gradcheck_and_gradgradcheck(mode, proj, reverse):
    rng = np.random.default_rng(1)
    hidden, gates = 3, {"LSTM": 4, "GRU": 3}.get(mode, 1)
    out_size = proj or hidden
    shapes = [(6, 2), (2, out_size)] + ([(2, hidden)] if mode == "LSTM" else [])
    shapes += [(gates * hidden, 2), (gates * hidden, out_size), (gates * hidden,),
               (gates * hidden,)] + ([(proj, hidden)] if proj else [])
    values = [rng.standard_normal(s) for s in shapes]
    if mode == "RNN_RELU":
        values[-1] += 2.0  # keep pre-activations away from relu's kink
    inputs = tuple(ember.tensor(v, requires_grad=True) for v in values)

    def layer(x, h0, *rest):
        c0, weights = (rest[0], rest[1:]) if mode == "LSTM" else (None, rest)
        weights = tuple(weights) + (None,) * (5 - len(weights))
        out, h, c = _rnn_layer(mode, x, [2, 2, 1, 1], h0, c0, weights, reverse)
        return (out, h) + ((c,) if c is not None else ())

    assert ember.autograd.gradcheck(layer, inputs)
    assert ember.autograd.gradgradcheck(layer, inputs)


def test_second_order_gradient_matches_torch():
    tm, em = twins("LSTM", input_size=2, hidden_size=3)
    x = np.random.default_rng(4).standard_normal((3, 2, 2))
    xe, xt = leaf_pair(x)
    (ge,) = ember.autograd.grad(em(xe)[0].pow(2).sum(), xe, create_graph=True)
    (gt,) = torch.autograd.grad(tm(xt)[0].pow(2).sum(), xt, create_graph=True)
    close(ge, gt, "first order")
    ge.pow(2).sum().backward()
    gt.pow(2).sum().backward()
    close(xe.grad, xt.grad, "second order, input")
    for (name, pe), (_, pt) in zip(em.named_parameters(), tm.named_parameters()):
        close(pe.grad, pt.grad, f"second order, {name}")


# ---------------------------------------------------------------------------------------------
# Dropout between layers


def test_dropout_one_zeroes_the_next_layers_input_like_torch():
    tm, em = twins("LSTM", input_size=3, hidden_size=4, num_layers=2, dropout=1.0)
    run_and_compare(tm, em, sequence_inputs((4, 2, 3)))
    em.eval()
    tm.eval()
    for param in list(em.parameters()) + list(tm.parameters()):
        param.grad = None
    run_and_compare(tm, em, sequence_inputs((4, 2, 3)))


def test_dropout_between_layers_is_statistically_right():
    """Layer 0 passes its (positive) input through, layer 1 is relu(x_dropped): the output
    is 0 with probability p and x / (1 - p) otherwise; only in training mode."""
    p, size = 0.3, 40
    rnn = nn.RNN(size, size, num_layers=2, nonlinearity="relu", bias=False, dropout=p).double()
    eye = ember.eye(size, dtype=ember.float64)
    with ember.no_grad():
        for name, param in rnn.named_parameters():
            param.copy_(eye if "ih" in name else eye * 0)
    x = ember.rand(50, 10, size, dtype=ember.float64) + 0.5
    out, _ = rnn(x)
    out, x = out.detach().numpy(), x.numpy()
    dropped = out == 0
    assert abs(dropped.mean() - p) < 0.02
    np.testing.assert_allclose(out[~dropped], x[~dropped] / (1 - p), rtol=1e-12)
    rnn.eval()
    np.testing.assert_allclose(rnn(ember.tensor(x))[0].detach().numpy(), x, rtol=1e-12)


def test_dropout_argument_checks_like_torch():
    with pytest.raises(ValueError, match=r"dropout should be a number in range \[0, 1\]"):
        nn.LSTM(2, 3, dropout=1.5)
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nn.GRU(2, 3, dropout=0.5)


# ---------------------------------------------------------------------------------------------
# Parameters, initialization, module API


def test_parameter_names_shapes_and_flat_weights_match_torch():
    kwargs = dict(input_size=3, hidden_size=5, num_layers=2, bidirectional=True, proj_size=2)
    tm, em = nn.LSTM(**kwargs), torch.nn.LSTM(**kwargs)
    assert [(n, tuple(p.shape)) for n, p in tm.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in em.named_parameters()]
    assert tm._flat_weights_names == em._flat_weights_names
    assert [[tuple(w.shape) for w in ws] for ws in tm.all_weights] == \
        [[tuple(w.shape) for w in ws] for ws in em.all_weights]
    assert tm._flat_weights[0] is tm.weight_ih_l0
    tm.flatten_parameters()
    assert repr(tm) == repr(em)
    assert repr(nn.RNN(2, 3, 1, "relu", bias=False)) == repr(torch.nn.RNN(2, 3, 1, "relu",
                                                                          bias=False))
    assert repr(nn.RNNCell(2, 3, nonlinearity="relu")) == \
        repr(torch.nn.RNNCell(2, 3, nonlinearity="relu"))
    assert repr(nn.GRUCell(2, 3, bias=False)) == repr(torch.nn.GRUCell(2, 3, bias=False))


@pytest.mark.parametrize("cls", ["LSTM", "GRU", "RNN", "LSTMCell", "GRUCell", "RNNCell"])
def test_default_init_is_uniform_in_one_over_sqrt_hidden(cls):
    hidden = 16
    layer = getattr(nn, cls)(8, hidden)
    values = np.concatenate([p.detach().numpy().ravel() for p in layer.parameters()])
    bound = 1 / np.sqrt(hidden)
    assert np.abs(values).max() <= bound
    assert values.max() > 0.9 * bound and values.min() < -0.9 * bound
    assert abs(values.mean()) < 0.05 * bound * 4


def test_gru_and_rnn_are_not_subclasses_of_each_other():
    assert not isinstance(nn.GRU(2, 3), nn.RNN)
    assert not isinstance(nn.GRUCell(2, 3), nn.RNNCell)
    assert isinstance(nn.LSTM(2, 3), nn.RNNBase)
    assert nn.RNN(2, 3, nonlinearity="relu").nonlinearity == "relu"


# ---------------------------------------------------------------------------------------------
# Errors, with torch's types and messages


def same_error(ember_call, torch_call):
    with pytest.raises(Exception) as te:
        torch_call()
    with pytest.raises(type(te.value)) as ee:
        ember_call()
    assert str(ee.value) == str(te.value).replace("torch.", "ember.")


ERROR_CASES = [
    ("LSTM", (10, 20), lambda L: (L.randn(5, 3, 7),)),
    ("LSTM", (10, 20), lambda L: (L.randn(5, 3, 10), (L.randn(1, 2, 20), L.randn(1, 3, 20)))),
    ("LSTM", (10, 20), lambda L: (L.randn(5, 3, 10), (L.randn(1, 3, 20), L.randn(1, 3, 21)))),
    ("LSTM", (10, 20), lambda L: (L.randn(5, 10), (L.randn(1, 3, 20), L.randn(1, 3, 20)))),
    ("LSTM", (10, 20), lambda L: (L.randn(5, 3, 10), (L.randn(3, 20), L.randn(3, 20)))),
    ("LSTM", (10, 20), lambda L: (L.randn(5, 3, 10, dtype=L.float64),)),
    ("LSTM", (10, 20), lambda L: (L.randn(1, 5, 3, 10),)),
    ("GRU", (10, 20), lambda L: (L.randn(5, 3, 10), L.randn(1, 2, 20))),
    ("GRU", (10, 20), lambda L: (L.randn(5, 3, 10), L.randn(2, 20))),
    ("GRU", (10, 20), lambda L: (L.randn(5, 10), L.randn(1, 1, 20))),
    ("GRU", (10, 20), lambda L: (L.randn(1, 5, 3, 10),)),
    ("RNN", (10, 20), lambda L: (L.randn(1, 5, 3, 10),)),
    ("RNN", (10, 20), lambda L: (L.randn(5, 3, 7),)),
    ("LSTMCell", (10, 20), lambda L: (L.randn(3, 7),)),
    ("LSTMCell", (10, 20), lambda L: (L.randn(3, 10), (L.randn(2, 20), L.randn(3, 20)))),
    ("LSTMCell", (10, 20), lambda L: (L.randn(3, 10), (L.randn(3, 20), L.randn(2, 20)))),
    ("LSTMCell", (10, 20), lambda L: (L.randn(3, 10), (L.randn(3, 21), L.randn(3, 20)))),
    ("LSTMCell", (10, 20), lambda L: (L.randn(10), (L.randn(3, 20), L.randn(3, 20)))),
    ("GRUCell", (10, 20), lambda L: (L.randn(3, 10), L.randn(2, 20))),
    ("GRUCell", (10, 20), lambda L: (L.randn(3, 10), L.randn(20))),
    ("RNNCell", (10, 20), lambda L: (L.randn(2, 3, 10),)),
    ("RNNCell", (10, 20), lambda L: (L.randn(3, 10), L.randn(1, 2, 20))),
]


@pytest.mark.parametrize("index", range(len(ERROR_CASES)))
def test_forward_errors_match_torch(index):
    kind, args, make = ERROR_CASES[index]
    em, tm = getattr(nn, kind)(*args), getattr(torch.nn, kind)(*args)
    same_error(lambda: em(*make(ember)), lambda: tm(*make(torch)))


@pytest.mark.parametrize("kind,args,kwargs", [
    ("RNN", (10, 20), {"nonlinearity": "x"}), ("GRU", (10, 20), {"proj_size": 2}),
    ("RNN", (10, 20), {"proj_size": 2}), ("LSTM", (10, 20), {"proj_size": 20}),
    ("LSTM", (10, 20), {"proj_size": -1}), ("LSTM", (0, 20), {}), ("LSTM", (10, 0), {}),
    ("LSTM", (10, 20), {"num_layers": 0}), ("LSTM", (10, 20), {"bias": 1}),
    ("GRU", (10.0, 20), {}), ("GRU", (10, 20), {"batch_first": None}),
])
def test_constructor_errors_match_torch(kind, args, kwargs):
    same_error(lambda: getattr(nn, kind)(*args, **kwargs),
               lambda: getattr(torch.nn, kind)(*args, **kwargs))


# ---------------------------------------------------------------------------------------------
# nn.utils.rnn


def seq_pairs(lengths, trailing=(2,), seed=0):
    rng = np.random.default_rng(seed)
    pairs = [leaf_pair(rng.standard_normal((n,) + trailing)) for n in lengths]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def backward_both(e, t, seed=0):
    g = np.random.default_rng(seed).standard_normal(tuple(t.shape))
    (e * ember.tensor(g)).sum().backward()
    (t * torch.tensor(g)).sum().backward()


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
@pytest.mark.parametrize("trailing", [(), (2,), (2, 3)])
def test_pad_sequence_matches_torch(batch_first, padding_side, trailing):
    es, ts = seq_pairs([3, 5, 1], trailing)
    pe = ernn.pad_sequence(es, batch_first, -2.5, padding_side)
    pt = trnn.pad_sequence(ts, batch_first, -2.5, padding_side)
    assert tuple(pe.shape) == tuple(pt.shape)
    close(pe, pt, "padded")
    backward_both(pe, pt)
    for e, t in zip(es, ts):
        close(e.grad, t.grad, "grad of a sequence")


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("enforce_sorted,lengths", [(True, [4, 3, 3, 1]), (False, [2, 4, 1, 3]),
                                                    (False, [1, 1])])
@pytest.mark.parametrize("as_tensor", [False, True])
def test_pack_padded_sequence_matches_torch(batch_first, enforce_sorted, lengths, as_tensor):
    rng = np.random.default_rng(0)
    steps, batch = max(lengths) + 1, len(lengths)
    x = rng.standard_normal((batch, steps, 2) if batch_first else (steps, batch, 2))
    xe, xt = leaf_pair(x)
    le = ember.tensor(lengths) if as_tensor else lengths
    lt = torch.tensor(lengths) if as_tensor else lengths
    pe = ernn.pack_padded_sequence(xe, le, batch_first, enforce_sorted)
    pt = trnn.pack_padded_sequence(xt, lt, batch_first, enforce_sorted)
    close(pe.data, pt.data, "data")
    assert pe.batch_sizes.tolist() == pt.batch_sizes.tolist()
    assert pe.batch_sizes.dtype == ember.int64
    for name in ("sorted_indices", "unsorted_indices"):
        e, t = getattr(pe, name), getattr(pt, name)
        assert (e is None) == (t is None) and (t is None or e.tolist() == t.tolist())
    backward_both(pe.data, pt.data)
    close(xe.grad, xt.grad, "grad of the padded input")
    for total_length in (None, steps + 2):
        ue, ule = ernn.pad_packed_sequence(pe, batch_first, 7.0, total_length)
        ut, ult = trnn.pad_packed_sequence(pt, batch_first, 7.0, total_length)
        assert tuple(ue.shape) == tuple(ut.shape)
        close(ue, ut, "unpacked")
        assert ule.tolist() == ult.tolist()


def test_pad_packed_sequence_gradient_matches_torch():
    es, ts = seq_pairs([4, 2, 3])
    pe = ernn.pack_sequence(es, enforce_sorted=False)
    pt = trnn.pack_sequence(ts, enforce_sorted=False)
    ue, _ = ernn.pad_packed_sequence(pe, batch_first=True, total_length=6)
    ut, _ = trnn.pad_packed_sequence(pt, batch_first=True, total_length=6)
    backward_both(ue, ut)
    for e, t in zip(es, ts):
        close(e.grad, t.grad, "grad of a sequence")


def test_pack_unpack_and_unpad_round_trip_like_torch():
    es, ts = seq_pairs([2, 5, 3])
    pe = ernn.pack_sequence(es, enforce_sorted=False)
    pt = trnn.pack_sequence(ts, enforce_sorted=False)
    for e, t in zip(ernn.unpack_sequence(pe), trnn.unpack_sequence(pt)):
        close(e, t, "unpacked sequence")
    padded_e, padded_t = ernn.pad_sequence(es), trnn.pad_sequence(ts)
    lengths = [2, 5, 3]
    for e, t in zip(ernn.unpad_sequence(padded_e, ember.tensor(lengths)),
                    trnn.unpad_sequence(padded_t, torch.tensor(lengths))):
        close(e, t, "unpadded sequence")
    assert tuple(padded_e.shape) == (5, 3, 2)  # unpad_sequence left its input as it was


def test_packed_sequence_is_a_namedtuple_with_to():
    es, _ = seq_pairs([3, 1, 2])
    packed = ernn.pack_sequence([e.detach() for e in es], enforce_sorted=False)
    data, batch_sizes, sorted_indices, unsorted_indices = packed
    assert packed._fields == ("data", "batch_sizes", "sorted_indices", "unsorted_indices")
    assert sorted_indices.tolist() == [0, 2, 1] and unsorted_indices.tolist() == [0, 2, 1]
    assert packed.to(ember.float64) is packed
    converted = packed.to(ember.float32)
    assert converted.data.dtype == ember.float32 and isinstance(converted, ernn.PackedSequence)
    assert converted.batch_sizes is packed.batch_sizes
    assert packed.float().data.dtype == ember.float32
    assert not packed.is_cuda
    made = ernn.PackedSequence(data, batch_sizes, ember.tensor([1, 2, 0]))
    assert made.unsorted_indices.tolist() == [2, 0, 1]
    assert ernn.PackedSequence((data, batch_sizes)).sorted_indices is None


@pytest.mark.parametrize("call", [
    lambda L, R: R.pack_padded_sequence(L.randn(3, 2, 1), [3, 4]),
    lambda L, R: R.pack_padded_sequence(L.randn(3, 2, 1), [3, 0]),
    lambda L, R: R.pack_padded_sequence(L.randn(3, 2, 1), [3]),
    lambda L, R: R.pack_padded_sequence(L.randn(3, 2, 1), L.tensor([[3, 2]])),
    lambda L, R: R.pack_padded_sequence(L.randn(0, 2, 1), [1, 1]),
    lambda L, R: R.pad_sequence([]),
    lambda L, R: R.pad_sequence([L.randn(2, 3)], padding_side="mid"),
    lambda L, R: R.pad_sequence(3),
    lambda L, R: R.pad_packed_sequence(R.pack_sequence([L.randn(3, 2), L.randn(2, 2)]),
                                       total_length=2),
])
def test_rnn_utils_errors_match_torch(call):
    same_error(lambda: call(ember, ernn), lambda: call(torch, trnn))
