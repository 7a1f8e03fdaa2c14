"""Odds and ends: ``normalize``, ``scaled_dot_product_attention``, ``assert_int_or_pair``."""
import math

from ...ops._common import make, namespace_of
from ...ops.ternary import where
from .softmax_family import softmax
from .dropout import dropout
from .fused_attention import fused_attention
from ... import _flop_hook
from ...backends.cuda import _sdp
from ...amp.policy import autocast_policy
from ...overrides import has_torch_function, has_torch_function_unary, has_torch_function_variadic

__all__ = ["normalize", "scaled_dot_product_attention", "has_torch_function",
           "has_torch_function_unary", "has_torch_function_variadic", "assert_int_or_pair"]


def assert_int_or_pair(arg, arg_name, message):
    """Raise AssertionError(``message.format(arg_name)``) unless ``arg`` is an int or a pair."""
    if not (isinstance(arg, int) or len(arg) == 2):
        raise AssertionError(message.format(arg_name))


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """``v / max(||v||_p, eps)`` for each vector ``v`` along ``dim``."""
    denom = input.norm(p, dim, keepdim=True).clamp(min=eps)
    return input / denom


def _safe_softmax(scores):
    """Softmax over the last dim, with zeros (not NaN) for rows masked out entirely."""
    data = scores._data
    xp = namespace_of(data)
    dead = make(xp.isneginf(data).all(-1, keepdims=True))
    if not dead._data.any():
        return softmax(scores, -1)
    return where(dead, 0.0, softmax(where(dead, 0.0, scores), -1))


@autocast_policy("lower")
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """``softmax(Q K^T * scale + mask) V``: ``attn_mask`` is boolean (True: take part) or a
    float bias; ``is_causal`` masks the upper triangle; ``dropout_p`` drops attention
    weights."""
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                           "when is_causal=True")
    if not (_sdp.enabled["math"] or _sdp.enabled["flash"]):
        raise RuntimeError(_sdp.NO_BACKEND)
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    if _flop_hook.counter is None:  # a FLOP counter counts the composite's products
        fused = fused_attention(query, key, value, attn_mask, dropout_p, is_causal, scale,
                                enable_gqa, _composite_attention)
        if fused is not None:
            return fused
    return _composite_attention(query, key, value, attn_mask, dropout_p, is_causal, scale,
                                enable_gqa)


def _composite_attention(query, key, value, attn_mask, dropout_p, is_causal, scale,
                         enable_gqa=False):
    length, source = query.shape[-2], key.shape[-2]
    if enable_gqa and query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        repeat = query.shape[-3] // key.shape[-3]
        key = key.repeat_interleave(repeat, -3)
        value = value.repeat_interleave(repeat, -3)
    scores = query.matmul(key.transpose(-2, -1)) * scale
    if is_causal:
        xp = namespace_of(query._data)
        attn_mask = make(xp.tril(xp.ones((length, source), dtype=bool)))
    if attn_mask is not None:
        if attn_mask.dtype.is_floating_point:
            scores = scores + attn_mask
        else:
            scores = where(attn_mask, scores, float("-inf"))
    weights = _safe_softmax(scores)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, training=True)
    return weights.matmul(value)
