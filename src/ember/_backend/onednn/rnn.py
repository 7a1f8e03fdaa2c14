"""LSTM, GRU and Elman RNN layers on oneDNN's RNN primitives (the LSTM's is the kernel torch's
CPU ``nn.LSTM`` runs): one direction of one layer, float32, forward (training, keeping the
workspace its backward reads, or inference) and backward.

Arrays are torch's: the input ``(T, N, I)``, the states ``(N, H)``, the weights ``w_ih (G*H,
I)`` and ``w_hh (G*H, H)`` for ``G`` gates, read in place as oneDNN's ``ldgoi`` layout and
reordered into the packed layout the primitive chose on each call (they change every optimizer
step); the backward writes the weight gradients in the same layout. The gates are in oneDNN's
order: for the LSTM torch's (input, forget, cell, output), with one bias ``b_ih + b_hh``; for
the GRU oneDNN's linear-before-reset cell, which is torch's GRU, with the gates (update, reset,
new) and four biases (the three gates' ``b_ih + b_hh``, but the new gate's ``b_ih`` alone, then
its ``b_hh``): the caller puts torch's (reset, update, new) in that order; for the Elman RNN
one gate and ``b_ih + b_hh``. Projections, packed
sequences whose batch shrinks over time and cells are not here: the caller runs NumPy's path.
"""
import ctypes

import numpy as np

from . import capi
from .capi import OneDNNError, call
from .runtime import MemoryDesc, Plan, destroy_attr, engine, plans, scratchpad_attr

__all__ = ["lstm_forward", "lstm_backward", "gru_forward", "gru_backward", "elman_forward",
           "elman_backward"]

_LEFT_TO_RIGHT, _RIGHT_TO_LEFT = 1, 2    # dnnl_rnn_direction_t
_OVERWRITE_DIFF_WEIGHTS = 1              # dnnl_rnn_flags_diff_weights_overwrite
_FLOAT32 = np.dtype(np.float32)


class _Cell:
    """What differs between the RNN primitives: the gates, the biases, whether there is a cell
    state ``c``, the functions that create the primitive descriptors, and, for the Elman RNN,
    its activation (oneDNN's ``dnnl_alg_kind_t``), which those functions take before the
    direction, with the activation's two parameters after the flags."""

    def __init__(self, name, gates, biases, cell_state, forward, backward, activation=None):
        self.name, self.gates, self.biases, self.cell_state = name, gates, biases, cell_state
        self.forward, self.backward, self.activation = forward, backward, activation

    def lead(self, prop, direction):
        """The creation functions' arguments before the memory descriptors."""
        return (prop, direction) if self.activation is None else (prop, self.activation, direction)

    def tail(self, flags):
        """Their arguments after the memory descriptors (before the hint and the attributes)."""
        return (flags,) if self.activation is None else (flags, 0.0, 0.0)


LSTM = _Cell("LSTM", 4, 4, True, "dnnl_lstm_forward_primitive_desc_create",
             "dnnl_lstm_backward_primitive_desc_create")
GRU = _Cell("GRU", 3, 4, False, "dnnl_lbr_gru_forward_primitive_desc_create",
            "dnnl_lbr_gru_backward_primitive_desc_create")
RNN_TANH, RNN_RELU = (
    _Cell(f"RNN ({name})", 1, 1, False, "dnnl_vanilla_rnn_forward_primitive_desc_create",
          "dnnl_vanilla_rnn_backward_primitive_desc_create", activation)
    for name, activation in (("tanh", capi.ELTWISE_TANH), ("relu", capi.ELTWISE_RELU)))


class _Shapes:
    """The memory descriptors of one layer's arrays, in the layouts ember holds them."""

    def __init__(self, cell, steps, batch, inputs, hidden):
        gates = cell.gates
        self.cell = cell
        self.sequence_in = MemoryDesc.strided((steps, batch, inputs), (batch * inputs, inputs, 1), _FLOAT32)
        self.sequence_out = MemoryDesc.strided((steps, batch, hidden), (batch * hidden, hidden, 1), _FLOAT32)
        self.state = MemoryDesc.strided((1, 1, batch, hidden), (batch * hidden, batch * hidden, hidden, 1),
                                        _FLOAT32)
        self.bias = MemoryDesc.strided((1, 1, cell.biases, hidden), (cell.biases * hidden,) * 2 + (hidden, 1),
                                       _FLOAT32)
        self.w_ih, self.w_hh = _ldgoi(inputs, gates, hidden), _ldgoi(hidden, gates, hidden)
        self.any_w_ih = MemoryDesc.any((1, 1, inputs, gates, hidden), _FLOAT32)
        self.any_w_hh = MemoryDesc.any((1, 1, hidden, gates, hidden), _FLOAT32)
        self.ldigo_w_ih, self.ldigo_w_hh = _ldigo(inputs, gates, hidden), _ldigo(hidden, gates, hidden)

    def states(self):
        """The descriptors of the input and output states (h, and c for the LSTM)."""
        return (self.state, self.state) if self.cell.cell_state else (self.state,)

    def forward_args(self, weights_ih, weights_hh):
        """The forward's descriptors in the order its creation function takes them."""
        states = self.states()
        extra = (None, None) if self.cell.cell_state else ()   # the LSTM's peephole, projection
        return (self.sequence_in.handle, *(s.handle for s in states), weights_ih.handle,
                weights_hh.handle, *extra, self.bias.handle, self.sequence_out.handle,
                *(s.handle for s in states))


def _ldgoi(inputs, gates, hidden):
    """torch's ``(G*H, inputs)`` weight as oneDNN's 5-D RNN weight (layers, directions,
    inputs, gates, outputs), read in place."""
    size = gates * hidden * inputs
    return MemoryDesc.strided((1, 1, inputs, gates, hidden), (size, size, 1, hidden * inputs, inputs),
                              _FLOAT32)


def _ldigo(inputs, gates, hidden):
    """The dense layout oneDNN's backward writes weight gradients in: ``(inputs, G*H)``."""
    size = gates * hidden * inputs
    return MemoryDesc.strided((1, 1, inputs, gates, hidden), (size, size, gates * hidden, hidden, 1),
                              _FLOAT32)


def _forward_pd(s, prop, direction, attr):
    pd = ctypes.c_void_p()
    call(s.cell.forward, ctypes.byref(pd), engine().engine, *s.cell.lead(prop, direction),
         *s.forward_args(s.any_w_ih, s.any_w_hh), *s.cell.tail(0), attr,
         what=f"{s.cell.name} forward")
    return pd


def _backward_pd(s, direction, hint, attr):
    pd = ctypes.c_void_p()
    diffs = s.forward_args(s.ldigo_w_ih, s.ldigo_w_hh)
    call(s.cell.backward, ctypes.byref(pd), engine().engine, *s.cell.lead(capi.BACKWARD, direction),
         *s.forward_args(s.any_w_ih, s.any_w_hh), *diffs, *s.cell.tail(_OVERWRITE_DIFF_WEIGHTS),
         hint, attr, what=f"{s.cell.name} backward")
    return pd


def _applies(*arrays):
    return all(type(a) is np.ndarray and a.dtype == _FLOAT32 and a.flags.c_contiguous and a.size
               for a in arrays)


def _build(make):
    try:
        return make()
    except OneDNNError:
        return None


def _state_args(cell, diff=False):
    """The state arguments (inputs then outputs): h, and c for the LSTM."""
    if diff:
        args = ((capi.ARG_DIFF_SRC_ITER, capi.ARG_DIFF_SRC_ITER_C),
                (capi.ARG_DIFF_DST_ITER, capi.ARG_DIFF_DST_ITER_C))
    else:
        args = ((capi.ARG_SRC_ITER, capi.ARG_SRC_ITER_C), (capi.ARG_DST_ITER, capi.ARG_DST_ITER_C))
    count = 2 if cell.cell_state else 1
    return args[0][:count] + args[1][:count]


def _forward(cell, x, states, w_ih, w_hh, bias, reverse, training):
    if not _applies(x, *states, w_ih, w_hh, bias) or x.ndim != 3:
        return None
    steps, batch, inputs = x.shape
    hidden = states[0].shape[1]
    prop = capi.FORWARD_TRAINING if training else capi.FORWARD_INFERENCE
    direction = _RIGHT_TO_LEFT if reverse else _LEFT_TO_RIGHT
    key = (f"{cell.name} forward", steps, batch, inputs, hidden, prop, direction)

    def make():
        s = _Shapes(cell, steps, batch, inputs, hidden)
        attr = scratchpad_attr()
        try:
            pd = _forward_pd(s, prop, direction, attr)
        finally:
            destroy_attr(attr)
        fixed = {capi.ARG_SRC_LAYER: s.sequence_in, capi.ARG_BIAS: s.bias,
                 capi.ARG_DST_LAYER: s.sequence_out}
        fixed.update((arg, s.state) for arg in _state_args(cell))
        return Plan(pd, f"{cell.name} forward",
                    {capi.ARG_WEIGHTS_LAYER: (s.w_ih, (capi.QUERY_WEIGHTS_MD, 0)),
                     capi.ARG_WEIGHTS_ITER: (s.w_hh, (capi.QUERY_WEIGHTS_MD, 1))}, {}, fixed)

    plan = plans.get(key, lambda: _build(make))
    if plan is None:
        return None
    out = np.empty((steps, batch, hidden), np.float32)
    finals = tuple(np.empty_like(s) for s in states)
    workspace = np.empty(plan.workspace_bytes, np.uint8) if training else None
    arrays = {capi.ARG_SRC_LAYER: x, capi.ARG_WEIGHTS_LAYER: w_ih, capi.ARG_WEIGHTS_ITER: w_hh,
              capi.ARG_BIAS: bias, capi.ARG_DST_LAYER: out, capi.ARG_WORKSPACE: workspace}
    arrays.update(zip(_state_args(cell), states + finals))
    plan(arrays)
    return (out, *finals, workspace)


def _backward(cell, x, states, w_ih, w_hh, bias, out, finals, workspace, grad_out, grad_finals,
              reverse):
    if not _applies(grad_out, *grad_finals):
        return None
    steps, batch, inputs = x.shape
    hidden = states[0].shape[1]
    direction = _RIGHT_TO_LEFT if reverse else _LEFT_TO_RIGHT
    key = (f"{cell.name} backward", steps, batch, inputs, hidden, direction)

    def make():
        s = _Shapes(cell, steps, batch, inputs, hidden)
        attr = scratchpad_attr()
        try:
            hint = _forward_pd(s, capi.FORWARD_TRAINING, direction, attr)
            try:
                pd = _backward_pd(s, direction, hint, attr)
            finally:
                capi.lib().dnnl_primitive_desc_destroy(hint)
        finally:
            destroy_attr(attr)
        fixed = {capi.ARG_SRC_LAYER: s.sequence_in, capi.ARG_BIAS: s.bias,
                 capi.ARG_DST_LAYER: s.sequence_out, capi.ARG_DIFF_SRC_LAYER: s.sequence_in,
                 capi.ARG_DIFF_DST_LAYER: s.sequence_out, capi.ARG_DIFF_BIAS: s.bias}
        fixed.update((arg, s.state) for arg in _state_args(cell) + _state_args(cell, diff=True))
        return Plan(pd, f"{cell.name} backward",
                    {capi.ARG_WEIGHTS_LAYER: (s.w_ih, (capi.QUERY_WEIGHTS_MD, 0)),
                     capi.ARG_WEIGHTS_ITER: (s.w_hh, (capi.QUERY_WEIGHTS_MD, 1))},
                    {capi.ARG_DIFF_WEIGHTS_LAYER: (s.w_ih, (capi.QUERY_DIFF_WEIGHTS_MD, 0)),
                     capi.ARG_DIFF_WEIGHTS_ITER: (s.w_hh, (capi.QUERY_DIFF_WEIGHTS_MD, 1))}, fixed)

    plan = plans.get(key, lambda: _build(make))
    if plan is None:
        return None
    d_x = np.empty_like(x)
    d_states = tuple(np.empty_like(s) for s in states)
    d_w_ih, d_w_hh, d_bias = np.empty_like(w_ih), np.empty_like(w_hh), np.empty_like(bias)
    arrays = {capi.ARG_SRC_LAYER: x, capi.ARG_WEIGHTS_LAYER: w_ih, capi.ARG_WEIGHTS_ITER: w_hh,
              capi.ARG_BIAS: bias, capi.ARG_DST_LAYER: out, capi.ARG_WORKSPACE: workspace,
              capi.ARG_DIFF_DST_LAYER: grad_out, capi.ARG_DIFF_SRC_LAYER: d_x,
              capi.ARG_DIFF_WEIGHTS_LAYER: d_w_ih, capi.ARG_DIFF_WEIGHTS_ITER: d_w_hh,
              capi.ARG_DIFF_BIAS: d_bias}
    arrays.update(zip(_state_args(cell), states + finals))
    arrays.update(zip(_state_args(cell, diff=True), d_states + grad_finals))
    plan(arrays)
    return (d_x, *d_states, d_w_ih, d_w_hh, d_bias)


def lstm_forward(x, h0, c0, w_ih, w_hh, bias, reverse, training):
    """``(out (T, N, H), h_n, c_n, workspace)`` of one LSTM layer over ``x`` (``T`` steps of
    ``N`` rows) from the states ``h0``, ``c0``; ``workspace`` (what the backward reads) is None
    unless ``training``. None where oneDNN does not apply."""
    return _forward(LSTM, x, (h0, c0), w_ih, w_hh, bias, reverse, training)


def lstm_backward(x, h0, c0, w_ih, w_hh, bias, out, h_n, c_n, workspace, grad_out, grad_h,
                  grad_c, reverse):
    """``(d_x, d_h0, d_c0, d_w_ih, d_w_hh, d_bias)`` of the layer ``lstm_forward`` ran in
    training (its arrays, outputs and workspace) for the output gradients ``grad_out (T, N,
    H)``, ``grad_h`` and ``grad_c`` (zeros where an output is unused). None where oneDNN does
    not apply."""
    return _backward(LSTM, x, (h0, c0), w_ih, w_hh, bias, out, (h_n, c_n), workspace, grad_out,
                     (grad_h, grad_c), reverse)


def gru_forward(x, h0, w_ih, w_hh, bias, reverse, training):
    """``(out (T, N, H), h_n, workspace)`` of one GRU layer (gates and biases in oneDNN's
    order, above), as ``lstm_forward``."""
    return _forward(GRU, x, (h0,), w_ih, w_hh, bias, reverse, training)


def gru_backward(x, h0, w_ih, w_hh, bias, out, h_n, workspace, grad_out, grad_h, reverse):
    """``(d_x, d_h0, d_w_ih, d_w_hh, d_bias)`` of the layer ``gru_forward`` ran in training,
    in oneDNN's gate order, as ``lstm_backward``."""
    return _backward(GRU, x, (h0,), w_ih, w_hh, bias, out, (h_n,), workspace, grad_out,
                     (grad_h,), reverse)


def elman_forward(x, h0, w_ih, w_hh, bias, relu, reverse, training):
    """``(out (T, N, H), h_n, workspace)`` of one Elman RNN layer (tanh, or ReLU where
    ``relu``) with the bias ``b_ih + b_hh``, as ``lstm_forward``."""
    return _forward(RNN_RELU if relu else RNN_TANH, x, (h0,), w_ih, w_hh, bias, reverse, training)


def elman_backward(x, h0, w_ih, w_hh, bias, out, h_n, workspace, grad_out, grad_h, relu, reverse):
    """``(d_x, d_h0, d_w_ih, d_w_hh, d_bias)`` of the layer ``elman_forward`` ran in training,
    as ``lstm_backward``."""
    return _backward(RNN_RELU if relu else RNN_TANH, x, (h0,), w_ih, w_hh, bias, out, (h_n,),
                     workspace, grad_out, (grad_h,), reverse)
