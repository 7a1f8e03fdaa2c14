"""Decompositions of ember's composite functions into simpler ember ops, for
``ExportedProgram.run_decompositions``.

Each entry maps an ember function to a function written in ember ops with the same signature.
A decomposition raises NotImplementedError for the cases it does not cover (dropout and batch
norm in training mode, softmax with a ``dtype``): the call is then kept as it is. Every other
ember function has no decomposition and stays in the graph unchanged.
"""
import math

import ember
import ember.nn.functional as F

__all__ = ["default_decompositions"]


def _linear(input, weight, bias=None):
    out = ember.matmul(input, weight.t())
    return out if bias is None else out + bias


def _silu(input, inplace=False):
    return input * ember.sigmoid(input)


def _hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    return ember.clamp(input, min_val, max_val)


def _relu6(input, inplace=False):
    return ember.clamp(input, 0.0, 6.0)


def _hardsigmoid(input, inplace=False):
    return ember.clamp(input + 3.0, 0.0, 6.0) / 6.0


def _hardswish(input, inplace=False):
    return input * ember.clamp(input + 3.0, 0.0, 6.0) / 6.0


def _gelu(input, approximate="none"):
    if approximate == "tanh":
        inner = math.sqrt(2.0 / math.pi) * (input + 0.044715 * input * input * input)
        return 0.5 * input * (1.0 + ember.tanh(inner))
    return 0.5 * input * (1.0 + ember.erf(input * (1.0 / math.sqrt(2.0))))


def _dropout(input, p=0.5, training=True, inplace=False):
    if training:
        raise NotImplementedError("dropout in training mode is random: kept as it is")
    return input


def _softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None or dtype is not None:
        raise NotImplementedError("softmax without dim or with a dtype is kept as it is")
    shifted = input - ember.amax(input, dim, keepdim=True)
    e = ember.exp(shifted)
    return e / ember.sum(e, dim, keepdim=True)


def _log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None or dtype is not None:
        raise NotImplementedError("log_softmax without dim or with a dtype is kept as it is")
    return input - ember.logsumexp(input, dim, keepdim=True)


def _batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
                momentum=0.1, eps=1e-5):
    if training:
        raise NotImplementedError("batch_norm in training mode updates its buffers: kept")
    # channels moved last, so that the per-channel vectors broadcast for any number of dims
    x = input.transpose(1, -1)
    out = (x - running_mean) * ember.rsqrt(running_var + eps)
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out.transpose(1, -1)


def _layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    dims = tuple(range(-len(normalized_shape), 0))
    mean = ember.mean(input, dims, keepdim=True)
    centered = input - mean
    var = ember.mean(centered * centered, dims, keepdim=True)
    out = centered * ember.rsqrt(var + eps)
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


_TABLE = {
    F.linear: _linear, F.silu: _silu, F.hardtanh: _hardtanh, F.relu6: _relu6,
    F.hardsigmoid: _hardsigmoid, F.hardswish: _hardswish, F.gelu: _gelu, F.dropout: _dropout,
    F.softmax: _softmax, F.log_softmax: _log_softmax, F.batch_norm: _batch_norm,
    F.layer_norm: _layer_norm,
}


def default_decompositions():
    """The decomposition table ``run_decompositions`` uses by default: ember function ->
    its decomposition in simpler ember ops (a new dict each call, which may be edited)."""
    return dict(_TABLE)
