"""The ember layers an export keeps whole (their internals are not ember ops a trace can see)
and how each becomes ONNX nodes: LSTM, GRU and RNN as ONNX's recurrent ops, MultiheadAttention
as its decomposition (projections, per-head scaled dot-product attention, output projection)."""
import numpy as np

from ._builder import Unsupported
from ._functions import additive_mask

__all__ = ["MODULE_CONVERTERS", "is_export_leaf"]


def _module_classes():
    from ..nn import GRU, LSTM, RNN, MultiheadAttention
    return {LSTM: _lstm, GRU: _gru, RNN: _rnn, MultiheadAttention: _multihead_attention}


MODULE_CONVERTERS = {}


def converter_for(module):
    if not MODULE_CONVERTERS:
        MODULE_CONVERTERS.update(_module_classes())
    return MODULE_CONVERTERS.get(type(module))


def is_export_leaf(module):
    """The modules an export records as call_module nodes: those converted whole."""
    return converter_for(module) is not None


# -- recurrent layers ------------------------------------------------------------------------------
def _gate_blocks(array, order, hidden):
    blocks = [array[i * hidden:(i + 1) * hidden] for i in range(len(order))]
    return np.concatenate([blocks[i] for i in order], axis=0)


def _recurrent(ctx, module, a, onnx_op, gate_order, extra_attrs):
    if getattr(module, "proj_size", 0):
        raise Unsupported("LSTM with proj_size > 0")
    b = ctx.b
    x, hx = a["input"], a.get("hx")
    x_shape = ctx.shape(x)
    if len(x_shape) != 3:
        raise Unsupported(f"{type(module).__name__} on unbatched (2-D) input")
    dtype = ctx.dtype(x)
    hidden, layers = module.hidden_size, module.num_layers
    directions = 2 if module.bidirectional else 1
    xv = ctx.t(x)
    if module.batch_first:
        xv = b.op("Transpose", [xv], perm=[1, 0, 2])
    h0 = c0 = None
    if hx is not None:
        if onnx_op == "LSTM":
            h_all, c_all = ctx.t(hx[0]), ctx.t(hx[1])
        else:
            h_all, c_all = ctx.t(hx), None
        h0, c0 = h_all, c_all
    h_out, c_out = [], []
    layer_input = xv
    for layer in range(layers):
        ws, rs, bs = [], [], []
        for direction in range(directions):
            suffix = f"_l{layer}" + ("_reverse" if direction else "")
            w_ih = getattr(module, "weight_ih" + suffix).detach().numpy()
            w_hh = getattr(module, "weight_hh" + suffix).detach().numpy()
            if module.bias:
                b_ih = getattr(module, "bias_ih" + suffix).detach().numpy()
                b_hh = getattr(module, "bias_hh" + suffix).detach().numpy()
            else:
                b_ih = b_hh = np.zeros(w_ih.shape[0], dtype=w_ih.dtype)
            ws.append(_gate_blocks(w_ih, gate_order, hidden))
            rs.append(_gate_blocks(w_hh, gate_order, hidden))
            bs.append(np.concatenate([_gate_blocks(b_ih, gate_order, hidden),
                                      _gate_blocks(b_hh, gate_order, hidden)]))
        prefix = ctx.module_path
        inputs = [layer_input, b.const(np.stack(ws), dtype, name=b.fresh(f"{prefix}.W{layer}")),
                  b.const(np.stack(rs), dtype, name=b.fresh(f"{prefix}.R{layer}")),
                  b.const(np.stack(bs), dtype, name=b.fresh(f"{prefix}.B{layer}")), None]
        span = [b.ints([layer * directions]), b.ints([(layer + 1) * directions])]
        inputs.append(None if h0 is None else b.op("Slice", [h0] + span))
        if onnx_op == "LSTM":
            inputs.append(None if c0 is None else b.op("Slice", [c0] + span))
        outs = b.op(onnx_op, inputs, outputs=3 if onnx_op == "LSTM" else 2, hidden_size=hidden,
                    direction="bidirectional" if directions == 2 else "forward", **extra_attrs)
        y = outs[0]
        h_out.append(outs[1])
        if onnx_op == "LSTM":
            c_out.append(outs[2])
        # Y is (seq, directions, batch, hidden): directions side by side in the features
        y = b.op("Transpose", [y], perm=[0, 2, 1, 3])
        layer_input = b.op("Reshape", [y, b.ints([0, 0, directions * hidden])])
    output = layer_input
    if module.batch_first:
        output = b.op("Transpose", [output], perm=[1, 0, 2])
    h_n = h_out[0] if layers == 1 else b.op("Concat", h_out, axis=0)
    if onnx_op == "LSTM":
        c_n = c_out[0] if layers == 1 else b.op("Concat", c_out, axis=0)
        return (output, (h_n, c_n))
    return (output, h_n)


def _lstm(ctx, module, a):
    # torch's gates i, f, g, o; ONNX's i, o, f, c
    return _recurrent(ctx, module, a, "LSTM", (0, 3, 1, 2), {})


def _gru(ctx, module, a):
    # torch's gates r, z, n; ONNX's z, r, h, with the reset gate applied after the product
    return _recurrent(ctx, module, a, "GRU", (1, 0, 2), {"linear_before_reset": 1})


def _rnn(ctx, module, a):
    activation = {"tanh": "Tanh", "relu": "Relu"}[module.nonlinearity]
    directions = 2 if module.bidirectional else 1
    return _recurrent(ctx, module, a, "RNN", (0,), {"activations": [activation] * directions})


# -- attention -------------------------------------------------------------------------------------
def _multihead_attention(ctx, module, a):
    if module.bias_k is not None or module.add_zero_attn:
        raise Unsupported("MultiheadAttention with add_bias_kv or add_zero_attn")
    b = ctx.b
    query, key, value = a["query"], a["key"], a["value"]
    q_shape = ctx.shape(query)
    if len(q_shape) != 3:
        raise Unsupported("MultiheadAttention on unbatched (2-D) input")
    dtype = ctx.dtype(query)
    heads, embed = module.num_heads, module.embed_dim
    head_dim = embed // heads
    prefix = ctx.module_path
    if module._qkv_same_embed_dim:
        w = module.in_proj_weight.detach().numpy()
        weights = [w[:embed], w[embed:2 * embed], w[2 * embed:]]
    else:
        weights = [module.q_proj_weight.detach().numpy(), module.k_proj_weight.detach().numpy(),
                   module.v_proj_weight.detach().numpy()]
    bias = (module.in_proj_bias.detach().numpy() if module.in_proj_bias is not None else None)

    def project(x, i, name):
        xv = ctx.t(x)
        if not module.batch_first:
            xv = b.op("Transpose", [xv], perm=[1, 0, 2])          # (N, L, E)
        out = b.op("MatMul", [xv, b.const(weights[i].T, dtype,
                                          name=b.fresh(f"{prefix}.{name}_weight_t"))])
        if bias is not None:
            out = b.op("Add", [out, b.const(bias[i * embed:(i + 1) * embed], dtype,
                                            name=b.fresh(f"{prefix}.{name}_bias"))])
        return b.op("Transpose", [b.op("Reshape", [out, b.ints([0, 0, heads, head_dim])])],
                    perm=[0, 2, 1, 3])                              # (N, H, L, D)

    q, k, v = project(query, 0, "q"), project(key, 1, "k"), project(value, 2, "v")
    scores = b.op("MatMul", [b.op("Mul", [q, b.scalar(1 / np.sqrt(head_dim), dtype)]),
                             b.op("Transpose", [k], perm=[0, 1, 3, 2])])
    attn_mask, padding = a.get("attn_mask"), a.get("key_padding_mask")
    if attn_mask is not None:
        mask = additive_mask(ctx, attn_mask, dtype, attend_when_true=False)
        if len(ctx.shape(attn_mask)) == 3:
            mask = b.op("Reshape", [mask, b.ints([-1, heads] + list(ctx.shape(attn_mask)[1:]))])
        scores = b.op("Add", [scores, mask])
    elif a.get("is_causal"):
        raise Unsupported("MultiheadAttention with is_causal=True and no attn_mask")
    if padding is not None:
        mask = additive_mask(ctx, padding, dtype, attend_when_true=False)
        scores = b.op("Add", [scores, b.unsqueeze(mask, [1, 2])])
    weights_out = b.op("Softmax", [scores], axis=-1)
    heads_out = b.op("MatMul", [weights_out, v])                    # (N, H, L, D)
    merged = b.op("Reshape", [b.op("Transpose", [heads_out], perm=[0, 2, 1, 3]),
                              b.ints([0, 0, embed])])
    out = b.op("MatMul", [merged, b.const(module.out_proj.weight.detach().numpy().T, dtype,
                                          name=b.fresh(f"{prefix}.out_proj.weight_t"))])
    if module.out_proj.bias is not None:
        out = b.op("Add", [out, ctx.param(f"{prefix}.out_proj.bias", module.out_proj.bias)])
    if not module.batch_first:
        out = b.op("Transpose", [out], perm=[1, 0, 2])
    if not a.get("need_weights", True):
        return (out, None)
    attn = weights_out
    if a.get("average_attn_weights", True):
        attn = b.reduce("ReduceMean", attn, [1], False)
    return (out, attn)
