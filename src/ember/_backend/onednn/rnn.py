"""LSTM layers on oneDNN's RNN primitive (the kernel torch's CPU ``nn.LSTM`` runs): one
direction of one layer, float32, forward (training, keeping the workspace its backward reads,
or inference) and backward.

Arrays are torch's: the input ``(T, N, I)``, the states ``(N, H)``, the weights ``w_ih (4H,
I)`` and ``w_hh (4H, H)`` with the gates in torch's order (input, forget, cell, output; oneDNN's
order too), and one bias ``(4H,)`` (``b_ih + b_hh``). The weights are read in place as oneDNN's
``ldgoi`` layout and reordered into the packed layout the primitive chose on each call (they
change every optimizer step); the backward writes the weight gradients straight into torch's
layout. Projections (``proj_size``) and packed sequences whose batch shrinks over time are
not in oneDNN's LSTM: those return None, and the caller runs NumPy's path.
"""
import ctypes

import numpy as np

from . import capi
from .capi import OneDNNError, call
from .runtime import MemoryDesc, Plan, destroy_attr, engine, plans, scratchpad_attr

__all__ = ["lstm_forward", "lstm_backward"]

_LEFT_TO_RIGHT, _RIGHT_TO_LEFT = 1, 2    # dnnl_rnn_direction_t
_OVERWRITE_DIFF_WEIGHTS = 1              # dnnl_rnn_flags_diff_weights_overwrite
_FLOAT32 = np.dtype(np.float32)


class _Shapes:
    """The memory descriptors of one LSTM layer's arrays, in the layouts ember holds them."""

    def __init__(self, steps, batch, inputs, hidden):
        self.sequence_in = MemoryDesc.strided((steps, batch, inputs), (batch * inputs, inputs, 1), _FLOAT32)
        self.sequence_out = MemoryDesc.strided((steps, batch, hidden), (batch * hidden, hidden, 1), _FLOAT32)
        self.state = MemoryDesc.strided((1, 1, batch, hidden), (batch * hidden, batch * hidden, hidden, 1),
                                        _FLOAT32)
        self.w_ih = _ldgoi(inputs, hidden)
        self.w_hh = _ldgoi(hidden, hidden)
        self.bias = MemoryDesc.strided((1, 1, 4, hidden), (4 * hidden, 4 * hidden, hidden, 1), _FLOAT32)
        self.any_w_ih = MemoryDesc.any((1, 1, inputs, 4, hidden), _FLOAT32)
        self.any_w_hh = MemoryDesc.any((1, 1, hidden, 4, hidden), _FLOAT32)
        self.ldigo_w_ih = _ldigo(inputs, hidden)
        self.ldigo_w_hh = _ldigo(hidden, hidden)


def _ldgoi(inputs, hidden):
    """torch's ``(4H, inputs)`` weight as oneDNN's 5-D LSTM weight (layers, directions,
    inputs, gates, outputs), read in place."""
    return MemoryDesc.strided((1, 1, inputs, 4, hidden),
                              (4 * hidden * inputs, 4 * hidden * inputs, 1, hidden * inputs, inputs), _FLOAT32)


def _ldigo(inputs, hidden):
    """The dense layout oneDNN's LSTM backward writes weight gradients in: ``(inputs, 4H)``."""
    return MemoryDesc.strided((1, 1, inputs, 4, hidden),
                              (4 * hidden * inputs, 4 * hidden * inputs, 4 * hidden, hidden, 1), _FLOAT32)


def _forward_pd(s, prop, direction, attr):
    pd = ctypes.c_void_p()
    call("dnnl_lstm_forward_primitive_desc_create", ctypes.byref(pd), engine().engine, prop,
         direction, s.sequence_in.handle, s.state.handle, s.state.handle, s.any_w_ih.handle,
         s.any_w_hh.handle, None, None, s.bias.handle, s.sequence_out.handle, s.state.handle,
         s.state.handle, 0, attr, what="LSTM forward")
    return pd


def _applies(*arrays):
    return all(type(a) is np.ndarray and a.dtype == _FLOAT32 and a.flags.c_contiguous and a.size
               for a in arrays)


def _build(make):
    try:
        return make()
    except OneDNNError:
        return None


_STATE_ARGS = (capi.ARG_SRC_ITER, capi.ARG_SRC_ITER_C, capi.ARG_DST_ITER, capi.ARG_DST_ITER_C)


def lstm_forward(x, h0, c0, w_ih, w_hh, bias, reverse, training):
    """``(out (T, N, H), h_n, c_n, workspace)`` of one LSTM layer over ``x`` (``T`` steps of
    ``N`` rows) from the states ``h0``, ``c0``; ``workspace`` (what the backward reads) is None
    unless ``training``. None where oneDNN does not apply."""
    if not _applies(x, h0, c0, w_ih, w_hh, bias) or x.ndim != 3:
        return None
    steps, batch, inputs = x.shape
    hidden = h0.shape[1]
    prop = capi.FORWARD_TRAINING if training else capi.FORWARD_INFERENCE
    direction = _RIGHT_TO_LEFT if reverse else _LEFT_TO_RIGHT
    key = ("lstm_forward", steps, batch, inputs, hidden, prop, direction)

    def make():
        s = _Shapes(steps, batch, inputs, hidden)
        attr = scratchpad_attr()
        try:
            pd = _forward_pd(s, prop, direction, attr)
        finally:
            destroy_attr(attr)
        fixed = {capi.ARG_SRC_LAYER: s.sequence_in, capi.ARG_BIAS: s.bias,
                 capi.ARG_DST_LAYER: s.sequence_out}
        fixed.update((arg, s.state) for arg in _STATE_ARGS)
        return Plan(pd, "LSTM forward",
                    {capi.ARG_WEIGHTS_LAYER: (s.w_ih, (capi.QUERY_WEIGHTS_MD, 0)),
                     capi.ARG_WEIGHTS_ITER: (s.w_hh, (capi.QUERY_WEIGHTS_MD, 1))}, {}, fixed)

    plan = plans.get(key, lambda: _build(make))
    if plan is None:
        return None
    out = np.empty((steps, batch, hidden), np.float32)
    h_n, c_n = np.empty_like(h0), np.empty_like(c0)
    workspace = np.empty(plan.workspace_bytes, np.uint8) if training else None
    plan({capi.ARG_SRC_LAYER: x, capi.ARG_SRC_ITER: h0, capi.ARG_SRC_ITER_C: c0,
          capi.ARG_WEIGHTS_LAYER: w_ih, capi.ARG_WEIGHTS_ITER: w_hh, capi.ARG_BIAS: bias,
          capi.ARG_DST_LAYER: out, capi.ARG_DST_ITER: h_n, capi.ARG_DST_ITER_C: c_n,
          capi.ARG_WORKSPACE: workspace})
    return out, h_n, c_n, workspace


def lstm_backward(x, h0, c0, w_ih, w_hh, bias, out, h_n, c_n, workspace, grad_out, grad_h,
                  grad_c, reverse):
    """``(d_x, d_h0, d_c0, d_w_ih, d_w_hh, d_bias)`` of the layer ``lstm_forward`` ran in
    training (its arrays, outputs and workspace) for the output gradients ``grad_out (T, N,
    H)``, ``grad_h`` and ``grad_c`` (zeros where an output is unused). None where oneDNN does
    not apply."""
    if not _applies(grad_out, grad_h, grad_c):
        return None
    steps, batch, inputs = x.shape
    hidden = h0.shape[1]
    direction = _RIGHT_TO_LEFT if reverse else _LEFT_TO_RIGHT
    key = ("lstm_backward", steps, batch, inputs, hidden, direction)

    def make():
        s = _Shapes(steps, batch, inputs, hidden)
        attr = scratchpad_attr()
        try:
            hint = _forward_pd(s, capi.FORWARD_TRAINING, direction, attr)
            try:
                pd = ctypes.c_void_p()
                call("dnnl_lstm_backward_primitive_desc_create", ctypes.byref(pd), engine().engine,
                     capi.BACKWARD, direction, s.sequence_in.handle, s.state.handle, s.state.handle,
                     s.any_w_ih.handle, s.any_w_hh.handle, None, None, s.bias.handle,
                     s.sequence_out.handle, s.state.handle, s.state.handle, s.sequence_in.handle,
                     s.state.handle, s.state.handle, s.ldigo_w_ih.handle, s.ldigo_w_hh.handle, None, None,
                     s.bias.handle, s.sequence_out.handle, s.state.handle, s.state.handle,
                     _OVERWRITE_DIFF_WEIGHTS, hint, attr, what="LSTM backward")
            finally:
                capi.lib().dnnl_primitive_desc_destroy(hint)
        finally:
            destroy_attr(attr)
        fixed = {capi.ARG_SRC_LAYER: s.sequence_in, capi.ARG_BIAS: s.bias,
                 capi.ARG_DST_LAYER: s.sequence_out, capi.ARG_DIFF_SRC_LAYER: s.sequence_in,
                 capi.ARG_DIFF_DST_LAYER: s.sequence_out, capi.ARG_DIFF_BIAS: s.bias}
        fixed.update((arg, s.state) for arg in _STATE_ARGS + _DIFF_STATE_ARGS)
        return Plan(pd, "LSTM backward",
                    {capi.ARG_WEIGHTS_LAYER: (s.w_ih, (capi.QUERY_WEIGHTS_MD, 0)),
                     capi.ARG_WEIGHTS_ITER: (s.w_hh, (capi.QUERY_WEIGHTS_MD, 1))},
                    {capi.ARG_DIFF_WEIGHTS_LAYER: (s.w_ih, (capi.QUERY_DIFF_WEIGHTS_MD, 0)),
                     capi.ARG_DIFF_WEIGHTS_ITER: (s.w_hh, (capi.QUERY_DIFF_WEIGHTS_MD, 1))}, fixed)

    plan = plans.get(key, lambda: _build(make))
    if plan is None:
        return None
    d_x = np.empty_like(x)
    d_h0, d_c0 = np.empty_like(h0), np.empty_like(c0)
    d_w_ih, d_w_hh, d_bias = np.empty_like(w_ih), np.empty_like(w_hh), np.empty_like(bias)
    plan({capi.ARG_SRC_LAYER: x, capi.ARG_SRC_ITER: h0, capi.ARG_SRC_ITER_C: c0,
          capi.ARG_WEIGHTS_LAYER: w_ih, capi.ARG_WEIGHTS_ITER: w_hh, capi.ARG_BIAS: bias,
          capi.ARG_DST_LAYER: out, capi.ARG_DST_ITER: h_n, capi.ARG_DST_ITER_C: c_n,
          capi.ARG_WORKSPACE: workspace,
          capi.ARG_DIFF_DST_LAYER: grad_out, capi.ARG_DIFF_DST_ITER: grad_h,
          capi.ARG_DIFF_DST_ITER_C: grad_c,
          capi.ARG_DIFF_SRC_LAYER: d_x, capi.ARG_DIFF_SRC_ITER: d_h0, capi.ARG_DIFF_SRC_ITER_C: d_c0,
          capi.ARG_DIFF_WEIGHTS_LAYER: d_w_ih, capi.ARG_DIFF_WEIGHTS_ITER: d_w_hh,
          capi.ARG_DIFF_BIAS: d_bias})
    return d_x, d_h0, d_c0, d_w_ih, d_w_hh, d_bias


_DIFF_STATE_ARGS = (capi.ARG_DIFF_SRC_ITER, capi.ARG_DIFF_SRC_ITER_C, capi.ARG_DIFF_DST_ITER,
                    capi.ARG_DIFF_DST_ITER_C)
