"""Scaled dot-product attention as one autograd node, for the common case: 4-D float32 or
float64 query, key and value of the same batch shape, no dropout, a causal, boolean or float
mask (or none). Forward and backward run on arrays (two batched GEMMs each way and one softmax
pass); with ``create_graph`` the node differentiates the composite written in ember ops, so
higher-order gradients stay exact."""
from ...autograd.grad_mode import enable_grad
from ...ops._common import Node, grad_state, make, namespace_of, record
from .activation import row_peak, softmax_backward_array

__all__ = ["fused_attention"]

_FLOATS = ("float32", "float64")


def _applies(query, key, value, attn_mask, dropout_p, enable_gqa):
    """Whether the fused node computes what the composite does (else None is returned)."""
    q, k, v = query._data, key._data, value._data
    if dropout_p > 0.0 or q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        return False
    if q.dtype.name not in _FLOATS or k.dtype != q.dtype or v.dtype != q.dtype:
        return False
    if q.shape[:2] != k.shape[:2] or k.shape[:3] != v.shape[:3] or q.shape[3] != k.shape[3]:
        return False  # broadcast batches, grouped heads and shape errors: the composite
    if attn_mask is not None:
        m = attn_mask._data
        if attn_mask._requires_grad or (m.dtype.kind != "b" and m.dtype != q.dtype):
            return False
        scores = q.shape[:3] + k.shape[2:3]
        if m.ndim > 4 or any(a not in (1, b) for a, b in zip(m.shape[::-1], scores[::-1])):
            return False
    return True


def _mask_bias(xp, attn_mask, is_causal, length, source, dtype):
    """The additive mask: 0 where a key takes part, -inf where it does not (None: no mask)."""
    if is_causal:
        return xp.triu(xp.full((length, source), -xp.inf, dtype), 1)
    if attn_mask is None:
        return None
    m = attn_mask._data
    if m.dtype.kind == "b":
        return xp.where(m, dtype.type(0), dtype.type(-xp.inf))
    return m


def _attention_weights(xp, q, k, bias, scale):
    """``softmax(q k^T * scale + bias)`` over the keys, rows masked out entirely giving 0."""
    scores = xp.matmul(q, k.swapaxes(-1, -2))
    scores *= scores.dtype.type(scale)
    if bias is not None:
        scores += bias
    scores -= row_peak(scores, -1)
    xp.exp(scores, out=scores)
    total = scores.sum(axis=-1, keepdims=True)
    total[total == 0] = 1  # every key masked: weights 0, as the composite's safe softmax
    scores /= total
    return scores


class ScaledDotProductFlashAttentionForCpuBackward0(Node):
    """Attention over (query, key, value); saves the three and the weights."""

    __slots__ = ()

    def backward(self, grad):
        query, key, value = self.saved_tensors
        if grad_state.grad_enabled:
            return self._backward_by_recomputation(query, key, value, grad)
        xp = namespace_of(grad._data)
        weights, g = self.weights, grad._data
        need = [fn is not None for fn, _ in self.next_functions]
        d_value = xp.matmul(weights.swapaxes(-1, -2), g) if need[2] else None
        d_scores = None
        if need[0] or need[1]:
            d_scores = softmax_backward_array(xp.matmul(g, value._data.swapaxes(-1, -2)),
                                              weights, -1)
            d_scores *= d_scores.dtype.type(self.scale)
        d_query = xp.matmul(d_scores, key._data) if need[0] else None
        d_key = xp.matmul(d_scores.swapaxes(-1, -2), query._data) if need[1] else None
        return tuple(None if a is None else make(a) for a in (d_query, d_key, d_value))

    def _backward_by_recomputation(self, query, key, value, grad):
        from ...autograd import grad as autograd_grad
        inputs = (query, key, value)
        wanted = [i for i, (fn, _) in enumerate(self.next_functions) if fn is not None]
        with enable_grad():
            out = self.composite(query, key, value, self.attn_mask, 0.0, self.is_causal,
                                 self.scale)
        found = autograd_grad([out], [inputs[i] for i in wanted], [grad], create_graph=True,
                              allow_unused=True)
        result = [None, None, None]
        for i, g in zip(wanted, found):
            result[i] = g
        return tuple(result)

    def release(self):
        self.weights = self.attn_mask = None
        super().release()


def fused_attention(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa,
                    composite):
    """``softmax(Q K^T * scale + mask) V`` as one node, or None where the fused path does not
    apply (the caller then runs ``composite``, which also serves ``create_graph``)."""
    if not _applies(query, key, value, attn_mask, dropout_p, enable_gqa):
        return None
    q = query._data
    xp = namespace_of(q)
    bias = _mask_bias(xp, attn_mask, is_causal, q.shape[-2], key._data.shape[-2], q.dtype)
    weights = _attention_weights(xp, q, key._data, bias, scale)
    out = make(xp.matmul(weights, value._data))
    node = record(ScaledDotProductFlashAttentionForCpuBackward0, (query, key, value), out)
    if node is not None:
        node.save(query, key, value)
        node.weights, node.scale, node.composite = weights, scale, composite
        node.attn_mask, node.is_causal = attn_mask, is_causal
    return out
