"""Scaled dot-product attention as one autograd node, for the common case: 4-D float32 or
float64 query, key and value of the same batch shape, no dropout, a causal, boolean or float
mask (or none). Forward and backward run on arrays (two batched GEMMs each way and one softmax
pass); with ``create_graph`` the node differentiates the composite written in ember ops, so
higher-order gradients stay exact.

``packed_self_attention`` is the same computation for MultiheadAttention's self-attention:
query, key and value are read as strided views of the packed input projection (N, L, 3E)
and the output is written straight into the (N, L, E) layout the output projection reads,
so the heads are never split into or merged from copies.
"""
import contextlib
import functools
import math

import numpy as np

from ..._backend import products, vector_math
from ..._backend.choice import KernelChoice
from ...autograd.grad_mode import enable_grad
from ...ops._common import Node, make, namespace_of, record
from .softmax_family import row_peak, softmax_backward_rows_
from ...autograd._dual import jvp_by_transposition

__all__ = ["fused_attention", "packed_self_attention", "packed_self_attention_applies"]

_FLOATS = ("float32", "float64")
# The attention softmax recomputes its failed rows one by one (each with its own copy of the
# keys) while they are at most this fraction of all rows; beyond, all rows at once.
FEW_FAILED_ROWS = 16


def _applies(query, key, value, attn_mask, dropout_p, enable_gqa):
    """Whether the fused node computes what the composite does (else None is returned)."""
    q, k, v = query._data, key._data, value._data
    if dropout_p > 0.0 or q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        return False
    if q.dtype.name not in _FLOATS or k.dtype != q.dtype or v.dtype != q.dtype:
        return False
    if q.shape[:2] != k.shape[:2] or k.shape[:3] != v.shape[:3] or q.shape[3] != k.shape[3]:
        return False  # broadcast batches, grouped heads and shape errors: the composite
    return _mask_applies(attn_mask, q.dtype, q.shape[:3] + k.shape[2:3])


def _mask_applies(attn_mask, dtype, scores_shape):
    """Whether ``attn_mask`` (or None) is a constant boolean or ``dtype`` mask that
    broadcasts to the scores."""
    if attn_mask is None:
        return True
    m = attn_mask._data
    if attn_mask._requires_grad or (m.dtype.kind != "b" and m.dtype != dtype):
        return False
    return m.ndim <= 4 and all(a in (1, b) for a, b in zip(m.shape[::-1], scores_shape[::-1]))


def _causal_bias(xp, length, source, dtype):
    """The (length, source) additive causal mask; on the host built once per shape and
    dtype (read-only), on a device each time (it would belong to one device)."""
    if xp is np:
        return _host_causal_bias(length, source, dtype)
    return xp.triu(xp.full((length, source), -xp.inf, dtype), 1)


@functools.lru_cache(maxsize=16)
def _host_causal_bias(length, source, dtype):
    bias = np.triu(np.full((length, source), -np.inf, dtype), 1)
    bias.flags.writeable = False
    return bias


def _mask_bias(xp, attn_mask, is_causal, length, source, dtype):
    """The additive mask: 0 where a key takes part, -inf where it does not (None: no mask)."""
    if is_causal:
        return _causal_bias(xp, length, source, dtype)
    if attn_mask is None:
        return None
    m = attn_mask._data
    if m.dtype.kind == "b":
        return xp.where(m, dtype.type(0), dtype.type(-xp.inf))
    return m


# -- the arrays: forward ----------------------------------------------------------------------

def _product(xp, a, b, out=None):
    """``a @ b`` (into ``out`` where given): NumPy's arrays by the kernel choice (the heads'
    batches on oneDNN's matmul primitive past its size rule), others by ``xp.matmul``."""
    return products.matmul(a, b, out) if xp is np else xp.matmul(a, b, out=out)


def _attention_forward(xp, q, k, v, bias, scale, out=None):
    """``softmax(q k^T * scale + bias) v`` on arrays (into ``out`` if given); returns the
    output, the weights and ``q * scale``, which the backward reuses."""
    scaled_query = xp.multiply(q, q.dtype.type(scale))
    weights = _attention_weights(xp, scaled_query, k, bias)
    return _product(xp, weights, v, out), weights, scaled_query


def _biased_scores(xp, scaled_query, k, bias):
    scores = _product(xp, scaled_query, k.swapaxes(-1, -2))
    if bias is not None:
        scores += bias
    return scores


def _attention_weights(xp, scaled_query, k, bias):
    """Softmax over the keys of the biased scores, rows masked out entirely giving 0."""
    return _safe_softmax(_biased_scores(xp, scaled_query, k, bias), scaled_query, k, bias)


def _numpy_safe_softmax(scores, scaled_query, k, bias):
    """The weights by NumPy's passes, in place in ``scores``: unshifted where that is exact
    (``_softmax_unshifted_``), the failed rows recomputed shifted."""
    xp = namespace_of(scores)
    failed = _softmax_unshifted_(xp, scores)
    if failed is None:
        return scores
    return _redo_rows_shifted(xp, scores, failed, scaled_query, k, bias)


# The attention weights: ember's softmax row loop on the threads (a row of only -inf giving
# zeros) where oneDNN's side of the kernel choice is in use, else NumPy's passes.
_safe_softmax = KernelChoice(
    "attention softmax", numpy=_numpy_safe_softmax,
    onednn=lambda scores, scaled_query, k, bias: vector_math.softmax_rows(scores, False, safe=True))


def _softmax_unshifted_(xp, scores):
    """Softmax of each row in place as ``exp(s) / sum(exp(s))``, without the usual shift by
    the row max (NumPy's max over short rows costs four passes' time). The shift only keeps
    ``exp`` in range: where no ``exp`` overflows and the row sum lies far above the subnormal
    numbers (so that entries lost to underflow weigh nothing against it), the unshifted
    weights are as accurate. Returns None, or the boolean (..., L) mask of the rows where that
    does not hold (large or inf/NaN scores, every key masked), left holding garbage."""
    if not scores.size:  # no queries, or no keys: every weight (none) is 0
        return None
    with _overflow_ignored(xp):
        xp.exp(scores, out=scores)
    total = xp.matmul(scores, xp.ones(scores.shape[-1], scores.dtype))  # BLAS row sums
    ok = xp.isfinite(total)
    ok &= total >= _smallest_safe_total(scores.dtype)
    failed = None
    if not ok.all():
        failed = xp.logical_not(ok)
        total[failed] = 1
    scores *= xp.reciprocal(total)[..., None]  # in place, a multiply is cheaper than a divide
    return failed


def _redo_rows_shifted(xp, scores, failed, scaled_query, k, bias):
    """The weights with the ``failed`` rows recomputed by the max-shifted softmax: those rows
    alone when they are few (in ``scores``), else all rows (a new array)."""
    rows = xp.nonzero(failed)
    if rows[0].size * FEW_FAILED_ROWS > failed.size:
        return _softmax_shifted_by_peak_(xp, _biased_scores(xp, scaled_query, k, bias))
    row_scores = xp.matmul(k[rows[:-1]], scaled_query[rows][:, :, None])[:, :, 0]
    if bias is not None:
        row_scores += xp.broadcast_to(bias, scores.shape)[rows]
    scores[rows] = _softmax_shifted_by_peak_(xp, row_scores)
    return scores


def _smallest_safe_total(dtype):
    """The least row sum of ``exp`` for which the unshifted softmax is accurate: the square
    root of the smallest normal number (about 1e-19 in float32), so that an entry's
    underflow error (below the smallest subnormal) is some 1e-26 of the row's total."""
    return float(np.finfo(dtype).tiny) ** 0.5


def _overflow_ignored(xp):
    """NumPy's overflow and invalid-value warnings off (the caller checks the result)."""
    errstate = getattr(xp, "errstate", None)
    return errstate(over="ignore", invalid="ignore") if errstate else contextlib.nullcontext()


def _softmax_shifted_by_peak_(xp, scores):
    """Softmax of each row in place, shifted by its max; rows with every key masked give 0,
    as the composite's safe softmax."""
    scores -= row_peak(scores, -1)
    xp.exp(scores, out=scores)
    total = scores.sum(axis=-1, keepdims=True)
    total[total == 0] = 1
    scores /= total
    return scores


# -- the arrays: backward ---------------------------------------------------------------------

# The weights' softmax backward, ``w * (g - sum(g * w))`` by rows: ember's row loop on the
# threads (``vector_math.softmax_rows_backward``), else NumPy's passes in place in ``g``.
_softmax_backward = KernelChoice(
    "attention softmax backward", numpy=softmax_backward_rows_,
    onednn=lambda grad, weights: vector_math.softmax_rows_backward(grad, weights, False))


def _attention_backward(xp, grad, weights, scaled_query, k, v, scale, need, outs=(None,) * 3):
    """Gradients of query, key and value (None where ``need`` says so), each written into
    the matching array of ``outs`` when one is given."""
    d_query = d_key = d_value = None
    if need[2]:
        d_value = _product(xp, weights.swapaxes(-1, -2), grad, outs[2])
    if need[0] or need[1]:
        d_scores = _softmax_backward(_product(xp, grad, v.swapaxes(-1, -2)), weights)
        if need[0]:
            d_query = _product(xp, d_scores, xp.multiply(k, k.dtype.type(scale)), outs[0])
        if need[1]:
            d_key = _product(xp, d_scores.swapaxes(-1, -2), scaled_query, outs[1])
    return d_query, d_key, d_value


class _RecomputingNode(Node):
    """A fused attention node whose ``create_graph`` backward differentiates ``composite``
    (ember ops, called with the saved tensors and ``composite_args``)."""

    __slots__ = ()

    def _backward_by_recomputation(self, grad):
        from ...autograd import grad as autograd_grad
        inputs = self.saved_tensors
        wanted = [i for i, (fn, _) in enumerate(self.next_functions) if fn is not None]
        with enable_grad():
            out = self.composite(*inputs, *self.composite_args)
        found = autograd_grad([out], [inputs[i] for i in wanted], [grad], create_graph=True,
                              allow_unused=True)
        result = [None] * len(inputs)
        for i, g in zip(wanted, found):
            result[i] = g
        return tuple(result)

    def release(self):
        self.weights = self.scaled_query = self.composite_args = None
        super().release()


class ScaledDotProductFlashAttentionForCpuBackward0(_RecomputingNode):
    """Attention over (query, key, value); saves the three, the weights and the scaled
    query."""

    __slots__ = ()
    jvp = jvp_by_transposition

    def backward(self, grad):
        return self._backward_by_recomputation(grad)

    def backward_arrays(self, grad):
        _, key, value = self.saved_tensors
        need = [fn is not None for fn, _ in self.next_functions]
        found = _attention_backward(namespace_of(grad._data), grad._data, self.weights,
                                    self.scaled_query, key._data, value._data, self.scale,
                                    need)
        return tuple(None if a is None else make(a) for a in found)


def fused_attention(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa,
                    composite):
    """``softmax(Q K^T * scale + mask) V`` as one node, or None where the fused path does not
    apply (the caller then runs ``composite``, which also serves ``create_graph``)."""
    if not _applies(query, key, value, attn_mask, dropout_p, enable_gqa):
        return None
    q, k = query._data, key._data
    xp = namespace_of(q)
    length, source = q.shape[-2], k.shape[-2]
    bias = _mask_bias(xp, attn_mask, is_causal, length, source, q.dtype)
    data, weights, scaled_query = _attention_forward(xp, q, k, value._data, bias, scale)
    out = make(data)
    node = record(ScaledDotProductFlashAttentionForCpuBackward0, (query, key, value), out)
    if node is not None:
        node.save(query, key, value)
        node.weights, node.scaled_query, node.scale = weights, scaled_query, scale
        node.composite = composite
        node.composite_args = (attn_mask, 0.0, is_causal, scale)
    return out


# -- packed self-attention --------------------------------------------------------------------

def _head_views(packed, parts, num_heads, batch_first):
    """(N, L, parts * E) (or (L, N, parts * E)) -> ``parts`` views (N, heads, L, E / heads),
    without copying a contiguous ``packed``."""
    a, b, width = packed.shape
    split = packed.reshape(a, b, parts, num_heads, width // (parts * num_heads))
    return split.transpose((2, 0, 3, 1, 4) if batch_first else (2, 1, 3, 0, 4))


def packed_self_attention_applies(qkv, num_heads, batch_first, attn_mask):
    """Whether ``packed_self_attention`` takes this packed projection and mask (a constant
    (L, L) mask or none)."""
    data = qkv._data
    if data.ndim != 3 or data.dtype.name not in _FLOATS or data.shape[-1] % (3 * num_heads):
        return False
    length = data.shape[1 if batch_first else 0]
    return attn_mask is None or (attn_mask._data.shape == (length, length)
                                 and _mask_applies(attn_mask, data.dtype, (length, length)))


class PackedSelfAttentionBackward0(_RecomputingNode):
    """Self-attention over the packed (q, k, v) projection; saves it, the weights and the
    scaled query. The gradient is written as one packed array, q, k and v parts in place."""

    __slots__ = ()
    jvp = jvp_by_transposition

    def backward(self, grad):
        return self._backward_by_recomputation(grad)

    def backward_arrays(self, grad):
        (qkv,) = self.saved_tensors
        data = qkv._data
        xp = namespace_of(data)
        heads, batch_first = self.composite_args[0], self.composite_args[1]
        _, k, v = _head_views(data, 3, heads, batch_first)
        d_qkv = xp.empty(data.shape, data.dtype)
        g = _head_views(grad._data, 1, heads, batch_first)[0]
        _attention_backward(xp, g, self.weights, self.scaled_query, k, v, self.scale,
                            (True, True, True), _head_views(d_qkv, 3, heads, batch_first))
        return (make(d_qkv),)


def packed_self_attention(qkv, num_heads, batch_first, attn_mask, is_causal, composite):
    """Multi-head self-attention of the packed projection ``qkv`` ((N, L, 3E) with
    ``batch_first``, else (L, N, 3E); q, k, v in that order, each head-major) under a causal
    mask, a constant (L, L) boolean or float mask, or none; the output is (N, L, E) (resp.
    (L, N, E)), contiguous. ``composite(qkv, num_heads, batch_first, attn_mask, is_causal)``
    computes the same in ember ops; it serves ``create_graph``."""
    data = qkv._data
    xp = namespace_of(data)
    q, k, v = _head_views(data, 3, num_heads, batch_first)
    length, scale = q.shape[-2], 1.0 / math.sqrt(q.shape[-1])
    bias = _mask_bias(xp, attn_mask, is_causal, length, length, data.dtype)
    out = xp.empty(data.shape[:2] + (data.shape[2] // 3,), data.dtype)
    _, weights, scaled_query = _attention_forward(
        xp, q, k, v, bias, scale, out=_head_views(out, 1, num_heads, batch_first)[0])
    result = make(out)
    node = record(PackedSelfAttentionBackward0, (qkv,), result)
    if node is not None:
        node.save(qkv)
        node.weights, node.scaled_query, node.scale = weights, scaled_query, scale
        node.composite = composite
        node.composite_args = (num_heads, batch_first, attn_mask, is_causal)
    return result
