"""``MultiheadAttention``: attention over several representation subspaces at once."""
from .. import init
from ...backends import mha
from ..functional import attention as FA
from ..parameter import Parameter
from .linear import Linear, _empty
from .module import Module

__all__ = ["MultiheadAttention"]


class NonDynamicallyQuantizableLinear(Linear):
    """The output projection of :class:`MultiheadAttention` (a plain Linear)."""


class MultiheadAttention(Module):
    """Allows the model to jointly attend to information from different representation
    subspaces: ``MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O`` with
    ``head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)``."""

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        super().__init__()
        kwargs = {"device": device, "dtype": dtype}
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        self._make_in_projection(kwargs)
        if bias:
            self.in_proj_bias = Parameter(_empty(3 * embed_dim, **kwargs))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **kwargs)
        if add_bias_kv:
            self.bias_k = Parameter(_empty(1, 1, embed_dim, **kwargs))
            self.bias_v = Parameter(_empty(1, 1, embed_dim, **kwargs))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _make_in_projection(self, kwargs):
        """One packed (3E, E) weight, or separate q/k/v weights when kdim/vdim differ."""
        e = self.embed_dim
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(_empty(3 * e, e, **kwargs))
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = Parameter(_empty(e, e, **kwargs))
            self.k_proj_weight = Parameter(_empty(e, self.kdim, **kwargs))
            self.v_proj_weight = Parameter(_empty(e, self.vdim, **kwargs))
            self.register_parameter("in_proj_weight", None)

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def __setstate__(self, state):
        state.setdefault("_qkv_same_embed_dim", True)
        super().__setstate__(state)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True, is_causal=False):
        """Attention output (L, N, E) (or (N, L, E) with ``batch_first``) and, with
        ``need_weights``, the attention weights (N, L, S), or (N, num_heads, L, S) when
        ``average_attn_weights`` is False."""
        is_batched = query.dim() == 3
        key_padding_mask = FA._canonical_mask(key_padding_mask, "key_padding_mask",
                                              FA._none_or_dtype(attn_mask), "attn_mask",
                                              query.dtype)
        attn_mask = FA._canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                       check_other=False)
        if self._packed_self_attention_applies(query, key, value, key_padding_mask,
                                               need_weights, attn_mask, is_causal):
            return FA.packed_self_attention_forward(
                query, self.num_heads, self.in_proj_weight, self.in_proj_bias,
                self.out_proj.weight, self.out_proj.bias, attn_mask, is_causal,
                self.batch_first), None
        if self.batch_first and is_batched:
            query, key, value = _sequence_first(query, key, value)
        separate = not self._qkv_same_embed_dim
        output, weights = FA.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=separate, q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights, is_causal=is_causal)
        if self.batch_first and is_batched:
            return output.transpose(1, 0), weights
        return output, weights

    def _packed_self_attention_applies(self, query, key, value, key_padding_mask, need_weights,
                                       attn_mask, is_causal):
        """Whether the forward is batched self-attention (``query is key is value``) with the
        packed projection, no extra keys, dropout, padding mask or weights returned, and a
        causal, (L, L) or no mask: ``FA.packed_self_attention_forward`` then computes it.
        Never while ``ember.backends.mha.set_fastpath_enabled(False)``."""
        if not mha._is_fastpath_enabled:
            return False
        if not (query is key and key is value and query.dim() == 3 and key_padding_mask is None
                and not need_weights and self._qkv_same_embed_dim and self.bias_k is None
                and not self.add_zero_attn and (self.dropout == 0.0 or not self.training)):
            return False
        if query.shape[-1] != self.embed_dim or query.dtype != self.in_proj_weight.dtype:
            return False
        length = query.shape[1 if self.batch_first else 0]
        if is_causal:
            return attn_mask is not None  # (without a mask the general path raises)
        return attn_mask is None or tuple(attn_mask.shape) == (length, length)

    def merge_masks(self, attn_mask, key_padding_mask, query):
        """Combine ``attn_mask`` and ``key_padding_mask`` into one (N, num_heads, L, S) float
        mask; returns it with its type (0: attn_mask, 1: key_padding_mask, 2: both)."""
        if attn_mask is None and key_padding_mask is None:
            return None, None
        batch, seq_len = query.shape[0], query.shape[1]
        heads = self.num_heads
        merged, mask_type = None, None
        if key_padding_mask is not None:
            mask_type = 1
            merged = key_padding_mask
        if attn_mask is not None:
            mask_type = 2
            if attn_mask.dim() == 3:
                expanded = attn_mask.reshape(batch, -1, seq_len, seq_len)
            else:
                expanded = attn_mask.reshape(1, 1, seq_len, seq_len).expand(batch, heads, -1, -1)
            merged = expanded
            if key_padding_mask is not None:
                padding = key_padding_mask.reshape(batch, 1, 1, seq_len).expand(-1, heads, -1, -1)
                merged = expanded + padding
        return merged, mask_type


def _sequence_first(query, key, value):
    """(N, L, E) -> (L, N, E), transposing a shared input once, so that self-attention keeps
    ``query is key is value`` and projects q, k and v in one matmul."""
    if query is key and key is value:
        query = key = value = query.transpose(1, 0)
        return query, key, value
    if key is value:
        key = value = key.transpose(1, 0)
        return query.transpose(1, 0), key, value
    return query.transpose(1, 0), key.transpose(1, 0), value.transpose(1, 0)
