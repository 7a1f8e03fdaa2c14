"""Multi-head attention: ``multi_head_attention_forward`` and its mask helpers."""
import math
import warnings

from ... import _dtype, _flop_hook
from ...ops import creation
from ...ops.shape import cat
from .softmax_family import softmax
from .dropout import dropout
from .fused_attention import packed_self_attention, packed_self_attention_applies
from .linear import linear
from .misc import scaled_dot_product_attention
from .padding import pad

__all__ = ["multi_head_attention_forward", "packed_self_attention_forward"]


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A boolean mask (True: masked out) becomes an additive float mask of ``target_type``
    holding ``-inf``; a float mask is returned as is."""
    if mask is None:
        return None
    is_float = mask.dtype.is_floating_point
    if mask.dtype is not _dtype.bool and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. "
                      "Use same type for both instead.", stacklevel=3)
    if not is_float:
        mask = creation.zeros_like(mask, dtype=target_type).masked_fill_(mask, float("-inf"))
    return mask


def _none_or_dtype(input):
    return None if input is None else input.dtype


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """Whether the input is batched (3-D query), after checking the other shapes agree."""
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError("For batched (3-D) `query`, expected `key` and `value` to be 3-D"
                                 f" but found {key.dim()}-D and {value.dim()}-D tensors "
                                 "respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError("For batched (3-D) `query`, expected `key_padding_mask` to be "
                                 f"`None` or 2-D but found {key_padding_mask.dim()}-D tensor "
                                 "instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError("For batched (3-D) `query`, expected `attn_mask` to be `None`, "
                                 f"2-D or 3-D but found {attn_mask.dim()}-D tensor instead")
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError("For unbatched (2-D) `query`, expected `key` and `value` to be "
                                 f"2-D but found {key.dim()}-D and {value.dim()}-D tensors "
                                 "respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError("For unbatched (2-D) `query`, expected `key_padding_mask` to be "
                                 f"`None` or 1-D but found {key_padding_mask.dim()}-D tensor "
                                 "instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError("For unbatched (2-D) `query`, expected `attn_mask` to be "
                                     f"`None`, 2-D or 3-D but found {attn_mask.dim()}-D tensor "
                                     "instead")
            expected = (num_heads, query.shape[0], key.shape[0])
            if attn_mask.dim() == 3 and tuple(attn_mask.shape) != expected:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                     f"{attn_mask.shape}")
        return False
    raise AssertionError("query should be unbatched 2D or batched 3D tensor but received "
                         f"{query.dim()}-D query tensor")


def _in_projection_packed(q, k, v, w, b=None):
    """Project q, k and v with the rows of ``w`` (and ``b``) packed in q, k, v order."""
    if q is k and k is v:  # self-attention: one matmul
        return linear(q, w, b).chunk(3, dim=-1)
    w_q, w_k, w_v = w.chunk(3)
    b_q = b_k = b_v = None
    if b is not None:
        b_q, b_k, b_v = b.chunk(3)
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _in_projection(q, k, v, w_q, w_k, w_v, b_q=None, b_k=None, b_v=None):
    """Project q, k and v with their own weights, after checking the weights' shapes."""
    eq, ek, ev = q.shape[-1], k.shape[-1], v.shape[-1]
    for name, w, expected in (("query", w_q, (eq, eq)), ("key", w_k, (eq, ek)),
                              ("value", w_v, (eq, ev))):
        if tuple(w.shape) != expected:
            raise AssertionError(f"expecting {name} weights shape of {expected}, but got "
                                 f"{w.shape}")
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _check_attn_mask_shape(attn_mask, tgt_len, src_len, bsz, num_heads):
    """A 2-D mask gains a leading dim; a 3-D one must be (bsz * num_heads, L, S)."""
    if attn_mask.dim() == 2:
        if tuple(attn_mask.shape) != (tgt_len, src_len):
            raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should "
                               f"be {(tgt_len, src_len)}.")
        return attn_mask.unsqueeze(0)
    if attn_mask.dim() == 3:
        expected = (bsz * num_heads, tgt_len, src_len)
        if tuple(attn_mask.shape) != expected:
            raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should "
                               f"be {expected}.")
        return attn_mask
    raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")


def _pad_last(mask):
    return None if mask is None else pad(mask, (0, 1))


def _split_heads(x, length, bsz, num_heads, head_dim):
    """(length, bsz, E) -> (bsz * num_heads, length, head_dim)."""
    return x.reshape(length, bsz * num_heads, head_dim).transpose(0, 1)


def _merge_key_padding(attn_mask, key_padding_mask, bsz, num_heads, src_len):
    """Add the (bsz, S) padding mask, spread over heads, to the attention mask."""
    if tuple(key_padding_mask.shape) != (bsz, src_len):
        dim, want = (0, bsz) if key_padding_mask.shape[0] != bsz else (1, src_len)
        raise AssertionError(f"Expected key_padded_mask.shape[{dim}] to be {want}, but got "
                             f"{key_padding_mask.shape[dim]}")
    spread = (key_padding_mask.reshape(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1)
              .reshape(bsz * num_heads, 1, src_len))
    return spread if attn_mask is None else attn_mask + spread


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight,
                                 in_proj_bias, bias_k, bias_v, add_zero_attn, dropout_p,
                                 out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    """Forward method for MultiHeadAttention: query (L, N, E) or (L, E), key and value
    (S, N, E) or (S, E). Returns the attention output and, with ``need_weights``, the
    attention weights (averaged over heads with ``average_attn_weights``)."""
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       _none_or_dtype(attn_mask), "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                    check_other=False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match "
                                 f"value's {value.shape[:2]}")
        b_q = b_k = b_v = None
        if in_proj_bias is not None:
            b_q, b_k, b_v = in_proj_bias.chunk(3)
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight, v_proj_weight,
                                 b_q, b_k, b_v)
    else:
        if tuple(key.shape) != tuple(value.shape):
            raise AssertionError(f"key shape {key.shape} does not match value shape "
                                 f"{value.shape}")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    if attn_mask is not None:
        attn_mask = _check_attn_mask_shape(attn_mask, tgt_len, src_len, bsz, num_heads)
    if bias_k is not None and bias_v is not None:
        k = cat([k, bias_k.repeat(1, bsz, 1)])
        v = cat([v, bias_v.repeat(1, bsz, 1)])
        attn_mask, key_padding_mask = _pad_last(attn_mask), _pad_last(key_padding_mask)
    q = _split_heads(q, tgt_len, bsz, num_heads, head_dim)
    k = _split_heads(k, k.shape[0], bsz, num_heads, head_dim) if static_k is None else static_k
    v = _split_heads(v, v.shape[0], bsz, num_heads, head_dim) if static_v is None else static_v
    if add_zero_attn:
        zeros = creation.zeros((bsz * num_heads, 1, head_dim), dtype=k.dtype, device=k.device)
        k, v = cat([k, zeros], dim=1), cat([v, zeros], dim=1)
        attn_mask, key_padding_mask = _pad_last(attn_mask), _pad_last(key_padding_mask)
    src_len = k.shape[1]
    if key_padding_mask is not None:
        attn_mask = _merge_key_padding(attn_mask, key_padding_mask, bsz, num_heads, src_len)
    if not training:
        dropout_p = 0.0
    if need_weights:
        weights = _attention_weights(q, k, attn_mask, dropout_p)
        output = weights.bmm(v).transpose(0, 1)
        output = _project_out(output, tgt_len, bsz, embed_dim, out_proj_weight, out_proj_bias)
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not is_batched:
            output, weights = output.squeeze(1), weights.squeeze(0)
        return output, weights
    if attn_mask is not None:
        attn_mask = (attn_mask.unsqueeze(0) if attn_mask.shape[0] == 1
                     else attn_mask.reshape(bsz, num_heads, -1, src_len))
    output = scaled_dot_product_attention(
        q.reshape(bsz, num_heads, tgt_len, head_dim), k.reshape(bsz, num_heads, src_len, head_dim),
        v.reshape(bsz, num_heads, src_len, head_dim), attn_mask, dropout_p,
        is_causal and attn_mask is None)
    output = output.permute(2, 0, 1, 3)
    output = _project_out(output, tgt_len, bsz, embed_dim, out_proj_weight, out_proj_bias)
    return (output if is_batched else output.squeeze(1)), None


def _attention_weights(q, k, attn_mask, dropout_p):
    """softmax(q k^T / sqrt(head_dim) + mask), with dropout: (bsz * heads, L, S)."""
    q_scaled = q * math.sqrt(1.0 / float(q.shape[-1]))
    scores = q_scaled.bmm(k.transpose(-2, -1))
    if attn_mask is not None:
        scores = scores + attn_mask
    weights = softmax(scores, dim=-1)
    if dropout_p > 0.0:
        weights = dropout(weights, p=dropout_p)
    return weights


def _project_out(output, tgt_len, bsz, embed_dim, weight, bias):
    """Heads laid out (L, bsz, heads..., head_dim) -> the output projection, (L, bsz, E)."""
    output = output.reshape(tgt_len * bsz, embed_dim)
    output = linear(output, weight, bias)
    return output.reshape(tgt_len, bsz, output.shape[1])


def packed_self_attention_forward(x, num_heads, in_proj_weight, in_proj_bias, out_proj_weight,
                                  out_proj_bias, attn_mask, is_causal, batch_first):
    """Self-attention of ``x`` ((N, L, E) with ``batch_first``, else (L, N, E)) with the packed
    (3E, E) input projection, no dropout and a causal, (L, L) or no mask: what
    ``multi_head_attention_forward`` computes for ``query is key is value`` without
    ``need_weights``, in ``x``'s layout throughout (no transposes, no per-head copies)."""
    qkv = linear(x, in_proj_weight, in_proj_bias)
    mask = None if is_causal else attn_mask
    if _flop_hook.counter is None and packed_self_attention_applies(qkv, num_heads,
                                                                     batch_first, mask):
        heads = packed_self_attention(qkv, num_heads, batch_first, mask, is_causal,
                                      _packed_attention_composite)
    else:
        heads = _packed_attention_composite(qkv, num_heads, batch_first, mask, is_causal)
    return linear(heads, out_proj_weight, out_proj_bias)


def _packed_attention_composite(qkv, num_heads, batch_first, attn_mask, is_causal):
    """The packed self-attention in ember ops: q, k and v split from ``qkv`` into heads,
    ``scaled_dot_product_attention``, the heads merged back into ``qkv``'s layout."""
    if not batch_first:
        qkv = qkv.transpose(0, 1)
    n, length, width = qkv.shape
    heads = qkv.reshape(n, length, 3, num_heads, width // (3 * num_heads)).permute(2, 0, 3, 1, 4)
    q, k, v = heads.unbind(0)
    out = scaled_dot_product_attention(q, k, v, attn_mask, 0.0, is_causal)
    out = out.transpose(1, 2).reshape(n, length, width // 3)
    return out if batch_first else out.transpose(0, 1)
