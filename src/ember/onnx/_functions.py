"""How each ember function, Tensor method and operator of a traced graph becomes ONNX nodes.

A converter is registered under the names a graph may call it by (``relu`` is ``F.relu``,
``ember.relu`` and ``Tensor.relu``; ``add`` is ``ember.add``, ``Tensor.add`` and
``operator.add``) and receives the conversion context, the node and the node's arguments bound
to the parameter names of the ember function (``a["input"]``, ``a["dim"]``). ``ctx.t(value)``
gives the ONNX value of an argument (a constant for a Python number), ``ctx.shape(value)`` and
``ctx.dtype(value)`` what the trace saw.
"""
import math

import numpy as np

from ._builder import Unsupported

__all__ = ["CONVERTERS", "converts"]

CONVERTERS = {}


def converts(*names):
    def register(fn):
        for name in names:
            CONVERTERS[name] = fn
        return fn
    return register


def _ints(value, n):
    if isinstance(value, (list, tuple)):
        return [int(v) for v in value]
    return [int(value)] * n


def _norm_dim(dim, rank):
    return dim + rank if dim < 0 else dim


# -- elementwise -----------------------------------------------------------------------------------
_UNARY = {
    "relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh", "exp": "Exp", "log": "Log",
    "sqrt": "Sqrt", "abs": "Abs", "neg": "Neg", "sin": "Sin", "cos": "Cos", "tan": "Tan",
    "erf": "Erf", "floor": "Floor", "ceil": "Ceil", "sign": "Sign",
    "reciprocal": "Reciprocal", "asin": "Asin", "acos": "Acos", "atan": "Atan", "sinh": "Sinh",
    "cosh": "Cosh", "asinh": "Asinh", "acosh": "Acosh", "atanh": "Atanh", "softsign": "Softsign",
    "bitwise_not": "Not", "invert": "Not", "isnan": "IsNaN",
    "selu": "Selu", "contiguous": "Identity", "clone": "Identity", "detach": "Identity",
    "positive": "Identity", "pos": "Identity",
}


def _unary(onnx_op):
    def convert(ctx, node, a):
        x = ctx.first_tensor(a)
        if onnx_op in ("Not",) and ctx.dtype_of_node_input(node, 0) != ctx.ember.bool:
            raise Unsupported("bitwise not of integer tensors")
        return ctx.b.op(onnx_op, [ctx.t(x)])
    return convert


for _name, _op in _UNARY.items():
    for _alias in (_name, _name + "_"):
        CONVERTERS[_alias] = _unary(_op)


@converts("round", "round_")
def _round(ctx, node, a):
    """Round half to even; with ``decimals``, as torch computes it: round(x * 10^d) / 10^d."""
    x = ctx.first_tensor(a)
    decimals = node.kwargs.get("decimals", 0)
    if not decimals:
        return ctx.b.op("Round", [ctx.t(x)])
    scale = ctx.b.scalar(10.0 ** decimals, ctx.dtype(x))
    return ctx.b.op("Div", [ctx.b.op("Round", [ctx.b.op("Mul", [ctx.t(x), scale])]), scale])


@converts("rsqrt", "rsqrt_")
def _rsqrt(ctx, node, a):
    return ctx.b.op("Reciprocal", [ctx.b.op("Sqrt", [ctx.t(ctx.first_tensor(a))])])


@converts("square")
def _square(ctx, node, a):
    x = ctx.t(ctx.first_tensor(a))
    return ctx.b.op("Mul", [x, x])


@converts("log1p")
def _log1p(ctx, node, a):
    x = ctx.first_tensor(a)
    return ctx.b.op("Log", [ctx.b.op("Add", [ctx.t(x), ctx.b.scalar(1.0, ctx.dtype(x))])])


@converts("expm1")
def _expm1(ctx, node, a):
    x = ctx.first_tensor(a)
    return ctx.b.op("Sub", [ctx.b.op("Exp", [ctx.t(x)]), ctx.b.scalar(1.0, ctx.dtype(x))])


_BINARY = {"add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "truediv": "Div",
           "true_divide": "Div", "pow": "Pow", "maximum": "Max", "minimum": "Min",
           "remainder": "Mod", "mod": "Mod", "fmod": "Mod", "floordiv": "Div",
           "floor_divide": "Div", "and_": "And", "or_": "Or", "xor": "Xor",
           "bitwise_and": "And", "bitwise_or": "Or", "bitwise_xor": "Xor",
           "eq": "Equal", "ne": "Equal", "lt": "Less", "le": "LessOrEqual", "gt": "Greater",
           "ge": "GreaterOrEqual"}
_COMPARISONS = {"eq", "ne", "lt", "le", "gt", "ge"}


def _operands(ctx, node, a):
    """The two operands of a binary node (positional, as the node's args hold them), and the
    alpha of ``add``/``sub``."""
    args = list(node.args)
    if len(args) < 2:
        names = [k for k in ("other", "exponent") if k in node.kwargs]
        args += [node.kwargs[k] for k in names]
    return args[0], args[1], node.kwargs.get("alpha", 1)


def _binary(name, onnx_op):
    def convert(ctx, node, a):
        x, y, alpha = _operands(ctx, node, a)
        ember = ctx.ember
        if name in _COMPARISONS or onnx_op in ("And", "Or", "Xor"):
            dtype = ctx.common_dtype(x, y)
            if onnx_op in ("And", "Or", "Xor"):
                if dtype != ember.bool:
                    raise Unsupported(f"bitwise {name} of integer tensors")
        else:
            dtype = ctx.node_dtype(node)
            if dtype is None:           # arithmetic on sizes: int64 scalars
                dtype = ember.int64
        if onnx_op == "Pow" and not isinstance(y, (int, float)) and ctx.dtype(y) != dtype:
            ex = ctx.t_as(y, ctx.dtype(y))
        else:
            ex = ctx.t_as(y, dtype)
        base = ctx.t_as(x, dtype)
        if alpha != 1:
            ex = ctx.b.op("Mul", [ex, ctx.b.scalar(alpha, dtype)])
        if onnx_op == "Mod" and dtype.is_floating_point:
            out = ctx.b.op("Mod", [base, ex], fmod=1)
            if name in ("remainder", "mod"):    # Python's sign convention: of the divisor
                fix = ctx.b.op("And", [ctx.b.op("Not", [ctx.b.op("Equal", [
                    out, ctx.b.scalar(0, dtype)])]), ctx.b.op("Not", [ctx.b.op("Equal", [
                        ctx.b.op("Less", [out, ctx.b.scalar(0, dtype)]),
                        ctx.b.op("Less", [ex, ctx.b.scalar(0, dtype)])])])])
                out = ctx.b.op("Where", [fix, ctx.b.op("Add", [out, ex]), out])
            return out
        out = ctx.b.op(onnx_op, [base, ex])
        rounding = node.kwargs.get("rounding_mode") if onnx_op == "Div" else None
        if rounding is not None and not dtype.is_floating_point:
            raise Unsupported(f"integer division with rounding_mode={rounding!r}")
        if (name in ("floordiv", "floor_divide") and dtype.is_floating_point) or rounding == "floor":
            out = ctx.b.op("Floor", [out])
        elif rounding == "trunc":   # opset 17 has no Trunc: ceil below zero, floor above
            below = ctx.b.op("Less", [out, ctx.b.scalar(0, dtype)])
            out = ctx.b.op("Where", [below, ctx.b.op("Ceil", [out]), ctx.b.op("Floor", [out])])
        if name == "ne":
            out = ctx.b.op("Not", [out])
        return out
    return convert


for _name, _op in _BINARY.items():
    CONVERTERS[_name] = _binary(_name, _op)
    CONVERTERS[_name + "_"] = _binary(_name, _op)
CONVERTERS["rsub"] = lambda ctx, node, a: ctx.b.op("Sub", [
    ctx.t_as(node.args[1], ctx.node_dtype(node)), ctx.t_as(node.args[0], ctx.node_dtype(node))])
del _name, _op, _alias


@converts("matmul", "mm", "bmm", "__matmul__")
def _matmul(ctx, node, a):
    x, y = node.args[0], node.args[1]
    return ctx.b.op("MatMul", [ctx.t(x), ctx.t(y)])


@converts("where")
def _where(ctx, node, a):
    dtype = ctx.node_dtype(node)
    return ctx.b.op("Where", [ctx.t(a["condition"]), ctx.t_as(a["input"], dtype),
                              ctx.t_as(a["other"], dtype)])


@converts("clamp", "clip", "clamp_", "clip_")
def _clamp(ctx, node, a):
    x = a["input"]
    dtype = ctx.dtype(x)
    lo, hi = a.get("min"), a.get("max")
    if any(b is not None and not isinstance(b, (int, float)) for b in (lo, hi)):
        out = ctx.t(x)   # tensor bounds broadcast: ONNX's Clip takes scalars only
        if lo is not None:
            out = ctx.b.op("Max", [out, ctx.t_as(lo, dtype)])
        if hi is not None:
            out = ctx.b.op("Min", [out, ctx.t_as(hi, dtype)])
        return out
    return ctx.b.op("Clip", [ctx.t(x), None if lo is None else ctx.t_as(lo, dtype),
                             None if hi is None else ctx.t_as(hi, dtype)])


@converts("masked_fill", "masked_fill_")
def _masked_fill(ctx, node, a):
    x = a["input"]
    return ctx.b.op("Where", [ctx.t(a["mask"]), ctx.t_as(a["value"], ctx.dtype(x)), ctx.t(x)])


@converts("to", "type", "float", "double", "half", "long", "int", "bool", "bfloat16", "short",
          "type_as", "byte", "char")
def _cast(ctx, node, a):
    x = node.args[0]
    out_dtype = ctx.node_dtype(node)
    if out_dtype == ctx.dtype(x):
        return ctx.t(x)
    return ctx.b.cast(ctx.t(x), out_dtype)


# -- activations -----------------------------------------------------------------------------------
@converts("relu6")
def _relu6(ctx, node, a):
    x = a["input"]
    return ctx.b.op("Clip", [ctx.t(x), ctx.b.scalar(0.0, ctx.dtype(x)),
                             ctx.b.scalar(6.0, ctx.dtype(x))])


@converts("hardtanh", "hardtanh_")
def _hardtanh(ctx, node, a):
    x = a["input"]
    return ctx.b.op("Clip", [ctx.t(x), ctx.b.scalar(a["min_val"], ctx.dtype(x)),
                             ctx.b.scalar(a["max_val"], ctx.dtype(x))])


@converts("leaky_relu", "leaky_relu_")
def _leaky_relu(ctx, node, a):
    return ctx.b.op("LeakyRelu", [ctx.t(a["input"])], alpha=float(a["negative_slope"]))


@converts("elu", "elu_")
def _elu(ctx, node, a):
    return ctx.b.op("Elu", [ctx.t(a["input"])], alpha=float(a["alpha"]))


@converts("celu", "celu_")
def _celu(ctx, node, a):
    return ctx.b.op("Celu", [ctx.t(a["input"])], alpha=float(a["alpha"]))


@converts("gelu")
def _gelu(ctx, node, a):
    x = a["input"]
    b, dtype, xv = ctx.b, ctx.dtype(a["input"]), ctx.t(a["input"])
    half = b.op("Mul", [xv, b.scalar(0.5, dtype)])
    if a.get("approximate", "none") == "tanh":
        cube = b.op("Mul", [b.op("Mul", [xv, xv]), xv])
        inner = b.op("Mul", [b.op("Add", [xv, b.op("Mul", [cube, b.scalar(0.044715, dtype)])]),
                             b.scalar(math.sqrt(2 / math.pi), dtype)])
        return b.op("Mul", [half, b.op("Add", [b.op("Tanh", [inner]), b.scalar(1.0, dtype)])])
    erf = b.op("Erf", [b.op("Mul", [xv, b.scalar(1 / math.sqrt(2), dtype)])])
    del x
    return b.op("Mul", [half, b.op("Add", [erf, b.scalar(1.0, dtype)])])


@converts("silu", "silu_")
def _silu(ctx, node, a):
    xv = ctx.t(a["input"])
    return ctx.b.op("Mul", [xv, ctx.b.op("Sigmoid", [xv])])


@converts("mish", "mish_")
def _mish(ctx, node, a):
    xv = ctx.t(a["input"])
    return ctx.b.op("Mul", [xv, ctx.b.op("Tanh", [ctx.b.op("Softplus", [xv])])])


@converts("softplus")
def _softplus(ctx, node, a):
    x, beta, threshold = a["input"], a.get("beta", 1.0), a.get("threshold", 20.0)
    b, dtype, xv = ctx.b, ctx.dtype(a["input"]), ctx.t(a["input"])
    scaled = b.op("Mul", [xv, b.scalar(beta, dtype)]) if beta != 1 else xv
    soft = b.op("Softplus", [scaled])
    if beta != 1:
        soft = b.op("Div", [soft, b.scalar(beta, dtype)])
    del x
    return b.op("Where", [b.op("Greater", [scaled, b.scalar(threshold, dtype)]), xv, soft])


@converts("logsigmoid")
def _logsigmoid(ctx, node, a):
    xv = ctx.t(a["input"])
    return ctx.b.op("Neg", [ctx.b.op("Softplus", [ctx.b.op("Neg", [xv])])])


@converts("hardsigmoid", "hardsigmoid_")
def _hardsigmoid(ctx, node, a):
    return ctx.b.op("HardSigmoid", [ctx.t(a["input"])], alpha=1 / 6, beta=0.5)


@converts("hardswish", "hardswish_")
def _hardswish(ctx, node, a):
    return ctx.b.op("HardSwish", [ctx.t(a["input"])])


@converts("tanhshrink")
def _tanhshrink(ctx, node, a):
    xv = ctx.t(a["input"])
    return ctx.b.op("Sub", [xv, ctx.b.op("Tanh", [xv])])


@converts("prelu")
def _prelu(ctx, node, a):
    x, w = a["input"], a["weight"]
    rank, n = len(ctx.shape(x)), ctx.shape(w)[0]
    wv = ctx.t(w)
    if n > 1 and rank > 2:
        wv = ctx.b.op("Reshape", [wv, ctx.b.ints([n] + [1] * (rank - 2))])
    return ctx.b.op("PRelu", [ctx.t(x), wv])


@converts("glu")
def _glu(ctx, node, a):
    x = a["input"]
    dim = _norm_dim(a.get("dim", -1), len(ctx.shape(x)))
    first, second = ctx.b.op("Split", [ctx.t(x), ctx.b.ints([ctx.shape(x)[dim] // 2] * 2)],
                             outputs=2, axis=dim)
    return ctx.b.op("Mul", [first, ctx.b.op("Sigmoid", [second])])


@converts("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
          "feature_alpha_dropout", "dropout_")
def _dropout(ctx, node, a):
    if a.get("training", True) and a.get("p", 0.5) > 0:
        raise Unsupported("dropout in training mode (export runs the model in eval mode; pass "
                          "training=False to the functional call)")
    return ctx.t(a["input"])


@converts("softmax", "log_softmax", "softmin")
def _softmax(ctx, node, a):
    name = node.target if isinstance(node.target, str) else node.target.__name__
    x, dim = a["input"], a.get("dim")
    rank = len(ctx.shape(x))
    if dim is None:
        dim = 0 if rank in (0, 1, 3) else 1
    xv = ctx.t(x)
    if a.get("dtype") is not None:
        xv = ctx.b.cast(xv, a["dtype"])
    if name == "softmin":
        xv = ctx.b.op("Neg", [xv])
    return ctx.b.op("LogSoftmax" if name == "log_softmax" else "Softmax", [xv],
                    axis=_norm_dim(dim, rank))


# -- layers ----------------------------------------------------------------------------------------
@converts("linear")
def _linear(ctx, node, a):
    x, w, bias = a["input"], a["weight"], a.get("bias")
    b = ctx.b
    if len(ctx.shape(x)) == 2:
        return b.op("Gemm", [ctx.t(x), ctx.t(w)] + ([ctx.t(bias)] if bias is not None else []),
                    transB=1)
    out = b.op("MatMul", [ctx.t(x), b.op("Transpose", [ctx.t(w)], perm=[1, 0])])
    return out if bias is None else b.op("Add", [out, ctx.t(bias)])


def _conv_padding(padding, n, kernel, dilation):
    if padding == "valid":
        return [0] * (2 * n)
    if padding == "same":
        total = [d * (k - 1) for k, d in zip(kernel, dilation)]
        return [t // 2 for t in total] + [t - t // 2 for t in total]
    pads = _ints(padding, n)
    return pads + pads


@converts("conv1d", "conv2d", "conv3d")
def _conv(ctx, node, a):
    w = a["weight"]
    kernel = list(ctx.shape(w)[2:])
    n = len(kernel)
    dilation = _ints(a.get("dilation", 1), n)
    inputs = [ctx.t(a["input"]), ctx.t(w)] + ([ctx.t(a["bias"])] if a.get("bias") is not None
                                              else [])
    return ctx.b.op("Conv", inputs, kernel_shape=kernel, strides=_ints(a.get("stride", 1), n),
                    pads=_conv_padding(a.get("padding", 0), n, kernel, dilation),
                    dilations=dilation, group=int(a.get("groups", 1)))


@converts("conv_transpose1d", "conv_transpose2d", "conv_transpose3d")
def _conv_transpose(ctx, node, a):
    w = a["weight"]
    kernel = list(ctx.shape(w)[2:])
    n = len(kernel)
    pads = _ints(a.get("padding", 0), n)
    inputs = [ctx.t(a["input"]), ctx.t(w)] + ([ctx.t(a["bias"])] if a.get("bias") is not None
                                              else [])
    return ctx.b.op("ConvTranspose", inputs, kernel_shape=kernel,
                    strides=_ints(a.get("stride", 1), n), pads=pads + pads,
                    output_padding=_ints(a.get("output_padding", 0), n),
                    dilations=_ints(a.get("dilation", 1), n), group=int(a.get("groups", 1)))


def _pool_geometry(ctx, a, n):
    kernel = _ints(a["kernel_size"], n)
    stride = a.get("stride")
    stride = kernel if stride is None or stride == [] or stride == () else _ints(stride, n)
    pads = _ints(a.get("padding", 0), n)
    return kernel, stride, pads + pads


@converts("max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices",
          "max_pool2d_with_indices", "max_pool3d_with_indices")
def _max_pool(ctx, node, a):
    n = len(ctx.shape(a["input"])) - 2
    if a.get("return_indices"):
        raise Unsupported("max pooling with return_indices=True")
    kernel, stride, pads = _pool_geometry(ctx, a, n)
    return ctx.b.op("MaxPool", [ctx.t(a["input"])], kernel_shape=kernel, strides=stride,
                    pads=pads, dilations=_ints(a.get("dilation", 1), n),
                    ceil_mode=int(bool(a.get("ceil_mode", False))))


@converts("avg_pool1d", "avg_pool2d", "avg_pool3d")
def _avg_pool(ctx, node, a):
    n = len(ctx.shape(a["input"])) - 2
    if a.get("divisor_override") is not None:
        raise Unsupported("average pooling with divisor_override")
    kernel, stride, pads = _pool_geometry(ctx, a, n)
    return ctx.b.op("AveragePool", [ctx.t(a["input"])], kernel_shape=kernel, strides=stride,
                    pads=pads, ceil_mode=int(bool(a.get("ceil_mode", False))),
                    count_include_pad=int(bool(a.get("count_include_pad", True))))


def _adaptive_pool(onnx_global, onnx_pool):
    def convert(ctx, node, a):
        x = a["input"]
        spatial = ctx.shape(x)[2:]
        n = len(spatial)
        out = a["output_size"]
        out = [s if o is None else o for o, s in zip(_ints(out, n) if out is not None else
                                                     spatial, spatial)] \
            if not isinstance(out, int) else [out] * n
        if a.get("return_indices"):
            raise Unsupported("adaptive max pooling with return_indices=True")
        if all(o == 1 for o in out):
            return ctx.b.op(onnx_global, [ctx.t(x)])
        if any(s % o for s, o in zip(spatial, out)):
            raise Unsupported(f"adaptive pooling from {tuple(spatial)} to {tuple(out)} (only "
                              f"output sizes that divide the input's are expressible)")
        kernel = [s // o for s, o in zip(spatial, out)]
        return ctx.b.op(onnx_pool, [ctx.t(x)], kernel_shape=kernel, strides=kernel)
    return convert


for _name in ("adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d"):
    CONVERTERS[_name] = _adaptive_pool("GlobalAveragePool", "AveragePool")
for _name in ("adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
              "adaptive_max_pool2d_with_indices"):
    CONVERTERS[_name] = _adaptive_pool("GlobalMaxPool", "MaxPool")


@converts("batch_norm")
def _batch_norm(ctx, node, a):
    x = a["input"]
    if a.get("training"):
        raise Unsupported("batch_norm with training=True (export runs modules in eval mode)")
    mean, var = a["running_mean"], a["running_var"]
    channels = ctx.shape(x)[1]
    dtype = ctx.dtype(x)
    weight = ctx.t(a["weight"]) if a.get("weight") is not None else ctx.b.const(
        np.ones(channels), dtype)
    bias = ctx.t(a["bias"]) if a.get("bias") is not None else ctx.b.const(
        np.zeros(channels), dtype)
    return ctx.b.op("BatchNormalization", [ctx.t(x), weight, bias, ctx.t(mean), ctx.t(var)],
                    epsilon=float(a.get("eps", 1e-5)))


@converts("layer_norm")
def _layer_norm(ctx, node, a):
    x = a["input"]
    shape = _ints(a["normalized_shape"], 1)
    dtype = ctx.dtype(x)
    weight = ctx.t(a["weight"]) if a.get("weight") is not None else ctx.b.const(
        np.ones(shape), dtype)
    inputs = [ctx.t(x), weight] + ([ctx.t(a["bias"])] if a.get("bias") is not None else [])
    return ctx.b.op("LayerNormalization", inputs, axis=-len(shape),
                    epsilon=float(a.get("eps", 1e-5)))


@converts("group_norm")
def _group_norm(ctx, node, a):
    x = a["input"]
    shape, dtype = ctx.shape(x), ctx.dtype(x)
    groups, b = int(a["num_groups"]), ctx.b
    xv = ctx.t(x)
    grouped = b.op("Reshape", [xv, b.ints([0, groups, -1])])
    normed = b.op("InstanceNormalization", [grouped, b.const(np.ones(groups), dtype),
                                            b.const(np.zeros(groups), dtype)],
                  epsilon=float(a.get("eps", 1e-5)))
    out = b.op("Reshape", [normed, b.op("Shape", [xv])])
    per_channel = [shape[1]] + [1] * (len(shape) - 2)
    if a.get("weight") is not None:
        out = b.op("Mul", [out, b.op("Reshape", [ctx.t(a["weight"]), b.ints(per_channel)])])
    if a.get("bias") is not None:
        out = b.op("Add", [out, b.op("Reshape", [ctx.t(a["bias"]), b.ints(per_channel)])])
    return out


@converts("instance_norm")
def _instance_norm(ctx, node, a):
    x = a["input"]
    if a.get("use_input_stats") is False:
        raise Unsupported("instance_norm with running statistics")
    channels, dtype = ctx.shape(x)[1], ctx.dtype(x)
    weight = ctx.t(a["weight"]) if a.get("weight") is not None else ctx.b.const(
        np.ones(channels), dtype)
    bias = ctx.t(a["bias"]) if a.get("bias") is not None else ctx.b.const(
        np.zeros(channels), dtype)
    return ctx.b.op("InstanceNormalization", [ctx.t(x), weight, bias],
                    epsilon=float(a.get("eps", 1e-5)))


@converts("embedding")
def _embedding(ctx, node, a):
    if a.get("max_norm") is not None:
        raise Unsupported("embedding with max_norm (it renormalizes the weight in place)")
    return ctx.b.op("Gather", [ctx.t(a["weight"]), ctx.t(a["input"])], axis=0)


@converts("normalize")
def _normalize(ctx, node, a):
    x, p, dim, eps = a["input"], a.get("p", 2.0), a.get("dim", 1), a.get("eps", 1e-12)
    b, dtype, xv = ctx.b, ctx.dtype(a["input"]), ctx.t(a["input"])
    if p != 2:
        raise Unsupported(f"normalize with p={p}")
    norm = b.op("ReduceL2", [xv], axes=[int(dim)], keepdims=1) if b.opset < 18 else \
        b.op("ReduceL2", [xv, b.ints([int(dim)])], keepdims=1)
    del x
    return b.op("Div", [xv, b.op("Max", [norm, b.scalar(eps, dtype)])])


@converts("scaled_dot_product_attention")
def _sdpa(ctx, node, a):
    if a.get("dropout_p", 0.0) and a.get("dropout_p") > 0:
        raise Unsupported("scaled_dot_product_attention with dropout_p > 0")
    if a.get("enable_gqa"):
        raise Unsupported("scaled_dot_product_attention with enable_gqa")
    q, k, v = a["query"], a["key"], a["value"]
    return attention(ctx, ctx.t(q), ctx.t(k), ctx.t(v), ctx.shape(q), ctx.shape(k), ctx.dtype(q),
                     a.get("attn_mask"), a.get("is_causal", False), a.get("scale"))


def attention(ctx, q, k, v, q_shape, k_shape, dtype, attn_mask, is_causal, scale):
    """softmax(q kᵀ · scale + mask) v on (..., L, E) queries and (..., S, E) keys."""
    b = ctx.b
    scale = 1 / math.sqrt(q_shape[-1]) if scale is None else scale
    rank = len(k_shape)
    perm = list(range(rank - 2)) + [rank - 1, rank - 2]
    scores = b.op("MatMul", [b.op("Mul", [q, b.scalar(math.sqrt(scale), dtype)]),
                             b.op("Mul", [b.op("Transpose", [k], perm=perm),
                                          b.scalar(math.sqrt(scale), dtype)])])
    if is_causal:
        scores = b.op("Add", [scores, causal_mask(b, scores, dtype)])
    if attn_mask is not None:
        scores = b.op("Add", [scores, additive_mask(ctx, attn_mask, dtype)])
    return b.op("MatMul", [b.op("Softmax", [scores], axis=-1), v])


def causal_mask(b, scores, dtype):
    """The additive causal mask of ``scores`` (..., L, S), built from its shape in the graph so
    that it follows a dynamic sequence length: 0 where key j <= query i, -inf above."""
    shape = b.op("Shape", [scores])
    length = b.op("Gather", [shape, b.const(np.array(-2, dtype=np.int64))], axis=0)
    source = b.op("Gather", [shape, b.const(np.array(-1, dtype=np.int64))], axis=0)
    zero, one = b.const(np.array(0, dtype=np.int64)), b.const(np.array(1, dtype=np.int64))
    rows = b.unsqueeze(b.op("Range", [zero, length, one]), [1])      # (L, 1)
    cols = b.op("Range", [zero, source, one])                        # (S,)
    above = b.op("Greater", [cols, rows])                            # (L, S)
    return b.op("Where", [above, b.scalar(-np.inf, dtype), b.scalar(0.0, dtype)])


def additive_mask(ctx, mask, dtype, attend_when_true=True):
    """A float mask as it is; a boolean one as 0 where attended and -inf elsewhere (True means
    attend for scaled_dot_product_attention, masked out for MultiheadAttention)."""
    if ctx.dtype(mask) == ctx.ember.bool:
        zero, minus_inf = ctx.b.scalar(0.0, dtype), ctx.b.scalar(-np.inf, dtype)
        return ctx.b.op("Where", [ctx.t(mask)] + ([zero, minus_inf] if attend_when_true else
                                                  [minus_inf, zero]))
    return ctx.t_as(mask, dtype)


@converts("pad")
def _pad(ctx, node, a):
    x = a["input"]
    rank = len(ctx.shape(x))
    pad = [int(p) for p in a["pad"]]
    pairs = [(pad[i], pad[i + 1]) for i in range(0, len(pad), 2)]     # last dim first
    begins, ends = [0] * rank, [0] * rank
    for i, (lo, hi) in enumerate(pairs):
        begins[rank - 1 - i], ends[rank - 1 - i] = lo, hi
    mode = {"constant": "constant", "reflect": "reflect", "replicate": "edge",
            "circular": "wrap"}[a.get("mode", "constant")]
    value = a.get("value")
    inputs = [ctx.t(x), ctx.b.ints(begins + ends)]
    if mode == "constant":
        inputs.append(ctx.b.scalar(0.0 if value is None else value, ctx.dtype(x)))
    elif mode == "wrap" and ctx.b.opset < 19:
        raise Unsupported("circular padding before opset 19")
    return ctx.b.op("Pad", inputs, mode=mode)


# -- reductions ------------------------------------------------------------------------------------
def _reduce(onnx_op):
    def convert(ctx, node, a):
        x = ctx.first_tensor(a)
        dim = a.get("dim", a.get("axis"))
        keepdim = a.get("keepdim", False)
        xv = ctx.t(x)
        out_dtype = ctx.node_dtype(node)
        if a.get("dtype") is not None:
            xv = ctx.b.cast(xv, a["dtype"])
        elif out_dtype is not None and out_dtype != ctx.dtype(x) and onnx_op != "ReduceMean":
            xv = ctx.b.cast(xv, out_dtype)     # sums of ints as int64, logsumexp of ints
        bool_extreme = ctx.dtype(x) == ctx.ember.bool and onnx_op in ("ReduceMax", "ReduceMin")
        if bool_extreme:                       # opset 17 reduces no bools: as int32
            xv = ctx.b.cast(xv, ctx.ember.int32)
        axes = None if dim is None or dim == () or dim == [] or not ctx.shape(x) \
            else _ints(dim, 1)
        if onnx_op != "ReduceMean":
            out = ctx.b.reduce(onnx_op, xv, axes, keepdim)
        else:                                  # an empty slice's mean is 0 / 0, NaN, as torch's
            b = ctx.b
            shape = b.op("Shape", [xv])
            sizes = shape if axes is None else b.op("Gather", [shape, b.ints(axes)], axis=0)
            count = b.cast(b.reduce("ReduceProd", sizes, None, False),
                           a.get("dtype") or ctx.dtype(x))
            out = b.op("Div", [b.reduce("ReduceSum", xv, axes, keepdim), count])
        if onnx_op in ("ReduceMax", "ReduceMin") and ctx.dtype(x).is_floating_point:
            out = nan_if_any(ctx, xv, out, axes, keepdim, ctx.dtype(x))
        return ctx.b.cast(out, ctx.ember.bool) if bool_extreme else out
    return convert


def nan_if_any(ctx, xv, value, axes, keepdim, dtype):
    """``value`` (a reduction of ``xv`` over ``axes``) made NaN where a reduced element is NaN,
    as torch's max, min, amax and amin propagate it (ONNX Runtime's skip it)."""
    b = ctx.b
    nans = b.reduce("ReduceSum", b.cast(b.op("IsNaN", [xv]), ctx.ember.int64), axes, keepdim)
    return b.op("Where", [b.op("Greater", [nans, b.const(np.int64(0))]),
                          b.scalar(np.nan, dtype), value])


for _name, _op in (("sum", "ReduceSum"), ("mean", "ReduceMean"), ("amax", "ReduceMax"),
                   ("amin", "ReduceMin"), ("prod", "ReduceProd"),
                   ("logsumexp", "ReduceLogSumExp")):
    CONVERTERS[_name] = _reduce(_op)


def _max_min(onnx_reduce, onnx_arg, onnx_pair):
    def convert(ctx, node, a):
        args = list(node.args) + list(node.kwargs.values())
        x = args[0]
        b, dtype = ctx.b, ctx.dtype(x)
        if len(args) > 1 and (not isinstance(args[1], int) or isinstance(args[1], bool)):
            other = args[1]
            dtype = ctx.node_dtype(node)
            return b.op(onnx_pair, [ctx.t_as(x, dtype), ctx.t_as(other, dtype)])
        xv = ctx.t(x)
        if dtype == ctx.ember.bool:            # opset 17 reduces no bools: as int32
            xv = b.cast(xv, ctx.ember.int32)
        if not ctx.shape(x):
            xv = b.unsqueeze(xv, [0])
        if len(args) == 1:
            values = b.reduce(onnx_reduce, xv, None, False)
            if dtype.is_floating_point:
                values = nan_if_any(ctx, xv, values, None, False, dtype)
            return values if dtype != ctx.ember.bool else b.cast(values, dtype)
        keepdim = bool(args[2]) if len(args) > 2 else False
        axis = int(args[1]) if ctx.shape(x) else 0
        values = b.reduce(onnx_reduce, xv, [axis], keepdim)
        indices = b.op(onnx_arg, [xv], axis=axis, keepdims=int(keepdim), select_last_index=0)
        if dtype.is_floating_point:            # a NaN is the extreme, at its first index
            values, indices = nan_first(ctx, xv, values, indices, axis, keepdim, dtype)
        if dtype == ctx.ember.bool:
            values = b.cast(values, dtype)
        if not ctx.shape(x) and not keepdim:
            return values, indices
        if not ctx.shape(x):
            return b.squeeze(values, [0]), b.squeeze(indices, [0])
        return (values, indices)
    return convert


def nan_first(ctx, xv, values, indices, axis, keepdim, dtype):
    """values NaN and indices at the first NaN along ``axis`` where one is present."""
    b = ctx.b
    nan = b.op("IsNaN", [xv])
    first = b.op("ArgMax", [b.cast(nan, ctx.ember.int32)], axis=axis, keepdims=int(keepdim),
                 select_last_index=0)
    has = b.op("Greater", [b.reduce("ReduceSum", b.cast(nan, ctx.ember.int64), [axis], keepdim),
                           b.const(np.int64(0))])
    return (b.op("Where", [has, b.scalar(np.nan, dtype), values]),
            b.op("Where", [has, first, indices]))


CONVERTERS["max"] = _max_min("ReduceMax", "ArgMax", "Max")
CONVERTERS["min"] = _max_min("ReduceMin", "ArgMin", "Min")


def _arg(onnx_op):
    def convert(ctx, node, a):
        x, dim, keepdim = a["input"], a.get("dim"), bool(a.get("keepdim", False))
        b, dtype = ctx.b, ctx.dtype(x)
        rank = len(ctx.shape(x))
        xv = ctx.t(x)
        flat = dim is None or not rank
        if flat:
            xv, dim = b.op("Reshape", [xv, b.ints([-1])]), 0
        if dtype == ctx.ember.bool:
            xv = b.cast(xv, ctx.ember.int32)
        out = b.op(onnx_op, [xv], axis=int(dim), keepdims=int(keepdim and not flat))
        if dtype.is_floating_point:            # a NaN wins, the first one
            nan = b.op("IsNaN", [xv])
            first = b.op("ArgMax", [b.cast(nan, ctx.ember.int32)], axis=int(dim),
                         keepdims=int(keepdim and not flat))
            has = b.op("Greater", [b.reduce("ReduceSum", b.cast(nan, ctx.ember.int64),
                                            [int(dim)], keepdim and not flat),
                                   b.const(np.int64(0))])
            out = b.op("Where", [has, first, out])
        if flat and keepdim:
            out = b.op("Reshape", [out, b.ints([1] * rank)])
        return out
    return convert


CONVERTERS["argmax"] = _arg("ArgMax")
CONVERTERS["argmin"] = _arg("ArgMin")


@converts("cumsum")
def _cumsum(ctx, node, a):
    x = a["input"]
    b = ctx.b
    xv = ctx.t(x)
    out_dtype = ctx.node_dtype(node)
    if out_dtype != ctx.dtype(x):              # dtype=, and ints and bools summed as int64
        xv = b.cast(xv, out_dtype)
    if not ctx.shape(x):
        return xv
    return b.op("CumSum", [xv, b.const(np.int64(a["dim"]))])


# -- shapes ----------------------------------------------------------------------------------------
@converts("size")
def _size(ctx, node, a):
    shape = ctx.b.op("Shape", [ctx.t(node.args[0])])
    dim = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim")
    if dim is None:
        return shape
    return ctx.b.op("Gather", [shape, ctx.b.const(np.int64(dim))], axis=0)


def _shape_args(node):
    rest = list(node.args[1:])
    if "shape" in node.kwargs:
        rest = [node.kwargs["shape"]]
    if len(rest) == 1 and isinstance(rest[0], (tuple, list)):
        rest = list(rest[0])
    return rest


@converts("view", "reshape")
def _reshape(ctx, node, a):
    return ctx.b.op("Reshape", [ctx.t(node.args[0]), ctx.shape_tensor(_shape_args(node))])


@converts("view_as", "reshape_as")
def _reshape_as(ctx, node, a):
    return ctx.b.op("Reshape", [ctx.t(node.args[0]), ctx.b.op("Shape", [ctx.t(node.args[1])])])


@converts("expand")
def _expand(ctx, node, a):
    x = node.args[0]
    sizes = _shape_args(node)
    rank = len(sizes)
    in_shape = (1,) * (rank - len(ctx.shape(x))) + tuple(ctx.shape(x))
    sizes = [1 if (isinstance(s, int) and not hasattr(s, "op") and s == -1) else s
             for s in sizes]
    del in_shape
    return ctx.b.op("Expand", [ctx.t(x), ctx.shape_tensor(sizes)])


@converts("expand_as")
def _expand_as(ctx, node, a):
    return ctx.b.op("Expand", [ctx.t(node.args[0]), ctx.b.op("Shape", [ctx.t(node.args[1])])])


@converts("repeat")
def _repeat(ctx, node, a):
    x = node.args[0]
    reps = _shape_args(node)
    xv = ctx.t(x)
    extra = len(reps) - len(ctx.shape(x))
    if extra > 0:
        xv = ctx.b.unsqueeze(xv, list(range(extra)))
    return ctx.b.op("Tile", [xv, ctx.shape_tensor(reps)])


@converts("flatten")
def _flatten(ctx, node, a):
    x = a["input"]
    rank = len(ctx.shape(x))
    if rank == 0:
        return ctx.b.op("Reshape", [ctx.t(x), ctx.b.ints([1])])
    start, end = _norm_dim(a.get("start_dim", 0), rank), _norm_dim(a.get("end_dim", -1), rank)
    if start == end:
        return ctx.t(x)
    xv = ctx.t(x)
    shape = ctx.b.op("Shape", [xv])
    pieces = []
    if start > 0:
        pieces.append(ctx.b.op("Slice", [shape, ctx.b.ints([0]), ctx.b.ints([start])]))
    pieces.append(ctx.b.ints([-1]))
    if end < rank - 1:
        pieces.append(ctx.b.op("Slice", [shape, ctx.b.ints([end + 1]), ctx.b.ints([rank])]))
    target = pieces[0] if len(pieces) == 1 else ctx.b.op("Concat", pieces, axis=0)
    return ctx.b.op("Reshape", [xv, target])


@converts("unflatten")
def _unflatten(ctx, node, a):
    x = a["input"]
    rank = len(ctx.shape(x))
    dim = _norm_dim(a["dim"], rank)
    xv = ctx.t(x)
    shape = ctx.b.op("Shape", [xv])
    pieces = []
    if dim > 0:
        pieces.append(ctx.b.op("Slice", [shape, ctx.b.ints([0]), ctx.b.ints([dim])]))
    pieces.append(ctx.shape_tensor(list(a["sizes"])))
    if dim < rank - 1:
        pieces.append(ctx.b.op("Slice", [shape, ctx.b.ints([dim + 1]), ctx.b.ints([rank])]))
    return ctx.b.op("Reshape", [xv, ctx.b.op("Concat", pieces, axis=0)])


def _perm_transpose(rank, d0, d1):
    perm = list(range(rank))
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return perm


@converts("transpose", "swapaxes", "swapdims")
def _transpose(ctx, node, a):
    x = node.args[0]
    rank = len(ctx.shape(x))
    d0 = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim0")
    d1 = node.args[2] if len(node.args) > 2 else node.kwargs.get("dim1")
    return ctx.b.op("Transpose", [ctx.t(x)], perm=_perm_transpose(rank, _norm_dim(d0, rank),
                                                                  _norm_dim(d1, rank)))


@converts("t")
def _t(ctx, node, a):
    x = node.args[0]
    if len(ctx.shape(x)) < 2:
        return ctx.t(x)
    return ctx.b.op("Transpose", [ctx.t(x)], perm=[1, 0])


@converts("getattr")
def _getattr(ctx, node, a):
    x, name = node.args
    rank = len(ctx.shape(x))
    if name in ("T",):
        return ctx.b.op("Transpose", [ctx.t(x)], perm=list(reversed(range(rank))))
    if name in ("mT", "mH") or (name == "H" and rank == 2):
        return ctx.b.op("Transpose", [ctx.t(x)], perm=_perm_transpose(rank, rank - 2, rank - 1))
    if name == "shape":
        return ctx.b.op("Shape", [ctx.t(x)])
    raise Unsupported(f"the attribute {name!r} of a tensor")


@converts("permute")
def _permute(ctx, node, a):
    x = node.args[0]
    dims = _shape_args(node) if "dims" not in node.kwargs else list(node.kwargs["dims"])
    rank = len(ctx.shape(x))
    return ctx.b.op("Transpose", [ctx.t(x)], perm=[_norm_dim(int(d), rank) for d in dims])


@converts("squeeze")
def _squeeze(ctx, node, a):
    x = node.args[0]
    dim = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim")
    shape = ctx.shape(x)
    if dim is None:
        axes = [i for i, s in enumerate(shape) if s == 1]
    else:
        axes = [_norm_dim(d, len(shape)) for d in _ints(dim, 1) if shape[d] == 1]
    if not axes:
        return ctx.t(x)
    return ctx.b.squeeze(ctx.t(x), axes)


@converts("unsqueeze")
def _unsqueeze(ctx, node, a):
    x = node.args[0]
    dim = node.args[1] if len(node.args) > 1 else node.kwargs["dim"]
    rank = len(ctx.shape(x)) + 1
    return ctx.b.unsqueeze(ctx.t(x), [_norm_dim(dim, rank)])


@converts("cat", "concat", "concatenate")
def _cat(ctx, node, a):
    tensors = node.args[0]
    dim = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim", 0)
    dtype = ctx.node_dtype(node)
    rank = len(ctx.node_shape(node))
    kept = [t for t in tensors if ctx.shape(t) != (0,)] or tensors[:1]   # all empty: one
    return ctx.b.op("Concat", [ctx.t_as(t, dtype) for t in kept], axis=_norm_dim(dim, rank))


@converts("stack")
def _stack(ctx, node, a):
    tensors = node.args[0]
    dim = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim", 0)
    rank = len(ctx.node_shape(node))
    axis = _norm_dim(dim, rank)
    dtype = ctx.node_dtype(node)
    return ctx.b.op("Concat", [ctx.b.unsqueeze(ctx.t_as(t, dtype), [axis]) for t in tensors],
                    axis=axis)


def _split_sizes(ctx, x, dim, split):
    length = ctx.shape(x)[dim]
    split = ctx.static_int(split)
    if isinstance(split, int):
        return [min(split, length - i) for i in range(0, length, split)]
    return [ctx.static_int(s) for s in split]


@converts("split")
def _split(ctx, node, a):
    x = node.args[0]
    split = node.args[1] if len(node.args) > 1 else node.kwargs.get(
        "split_size_or_sections", node.kwargs.get("split_size"))
    dim = node.args[2] if len(node.args) > 2 else node.kwargs.get("dim", 0)
    dim = _norm_dim(dim, len(ctx.shape(x)))
    sizes = _split_sizes(ctx, x, dim, split)
    if len(sizes) == 1:
        return (ctx.t(x),)
    return tuple(ctx.b.op("Split", [ctx.t(x), ctx.b.ints(sizes)], outputs=len(sizes), axis=dim))


@converts("chunk")
def _chunk(ctx, node, a):
    x = node.args[0]
    chunks = node.args[1] if len(node.args) > 1 else node.kwargs["chunks"]
    dim = node.args[2] if len(node.args) > 2 else node.kwargs.get("dim", 0)
    dim = _norm_dim(dim, len(ctx.shape(x)))
    each = -(-ctx.shape(x)[dim] // chunks)
    sizes = _split_sizes(ctx, x, dim, each)
    if len(sizes) == 1:
        return (ctx.t(x),)
    return tuple(ctx.b.op("Split", [ctx.t(x), ctx.b.ints(sizes)], outputs=len(sizes), axis=dim))


@converts("unbind")
def _unbind(ctx, node, a):
    x = node.args[0]
    dim = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim", 0)
    dim = _norm_dim(dim, len(ctx.shape(x)))
    n = ctx.shape(x)[dim]
    parts = ctx.b.op("Split", [ctx.t(x), ctx.b.ints([1] * n)], outputs=n, axis=dim) if n > 1 \
        else [ctx.t(x)]
    return tuple(ctx.b.squeeze(p, [dim]) for p in parts)


@converts("narrow")
def _narrow(ctx, node, a):
    x, dim, start, length = a["input"], a["dim"], a["start"], a["length"]
    dim = _norm_dim(dim, len(ctx.shape(x)))
    return ctx.b.op("Slice", [ctx.t(x), ctx.b.ints([start]), ctx.b.ints([start + length]),
                              ctx.b.ints([dim])])


@converts("gather")
def _gather(ctx, node, a):
    x, index = a["input"], a["index"]
    b = ctx.b
    if not ctx.shape(x) or not ctx.shape(index):     # 0-d: as 1-D, then the index's shape
        flat = b.ints([-1])
        out = b.op("GatherElements", [b.op("Reshape", [ctx.t(x), flat]),
                                      b.op("Reshape", [ctx.t(index), flat])], axis=0)
        return b.op("Reshape", [out, b.op("Shape", [ctx.t(index)])])
    return b.op("GatherElements", [ctx.t(x), ctx.t(index)],
                axis=_norm_dim(a["dim"], len(ctx.shape(x))))


@converts("index_select")
def _index_select(ctx, node, a):
    x = a["input"]
    b = ctx.b
    index = b.op("Reshape", [ctx.t(a["index"]), b.ints([-1])])    # a 0-d index keeps the dim
    if not ctx.shape(x):
        out = b.op("Gather", [b.op("Reshape", [ctx.t(x), b.ints([-1])]), index], axis=0)
        return b.op("Reshape", [out, b.ints([])])
    return b.op("Gather", [ctx.t(x), index], axis=_norm_dim(a["dim"], len(ctx.shape(x))))


@converts("triu", "tril", "triu_", "tril_")
def _trilu(ctx, node, a):
    name = node.target if isinstance(node.target, str) else node.target.__name__
    upper = name.rstrip("_") == "triu"
    return ctx.b.op("Trilu", [ctx.t(a["input"]), ctx.b.const(np.int64(a.get("diagonal", 0)))],
                    upper=int(upper))


@converts("einsum")
def _einsum(ctx, node, a):
    equation, *operands = node.args
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = list(operands[0])
    return ctx.b.op("Einsum", [ctx.t(o) for o in operands], equation=equation.replace(" ", ""))


def _like(fill):
    def convert(ctx, node, a):
        x = a["input"]
        dtype = a.get("dtype") or ctx.dtype(x)
        value = fill if fill is not None else a["fill_value"]
        return ctx.b.op("Expand", [ctx.b.scalar(value, dtype),
                                   ctx.b.op("Shape", [ctx.t(x)])])
    return convert


def _filled(fill):
    """zeros/ones (sizes as arguments or one sequence) and full (size, fill_value), whose sizes
    may be computed in the graph (``full((T, T), -inf)`` with ``T = x.size(1)``)."""
    def convert(ctx, node, a):
        args = list(node.args)
        if fill is None:
            size = node.kwargs.get("size", args[0] if args else None)
            value = args[1] if len(args) > 1 else node.kwargs["fill_value"]
        else:
            size = node.kwargs.get("size", args[0] if len(args) == 1 and isinstance(
                args[0], (tuple, list)) else args)
            value = fill
        dtype = node.kwargs.get("dtype")
        if dtype is None:
            dtype = ctx.ember.bool if isinstance(value, bool) else (
                ctx.ember.int64 if isinstance(value, int) and fill is None
                else ctx.ember.get_default_dtype())
        return ctx.b.op("Expand", [ctx.b.scalar(value, dtype), ctx.shape_tensor(list(size))])
    return convert


CONVERTERS["zeros"] = _filled(0)
CONVERTERS["ones"] = _filled(1)
CONVERTERS["full"] = _filled(None)
CONVERTERS["zeros_like"] = _like(0)
CONVERTERS["ones_like"] = _like(1)
CONVERTERS["full_like"] = _like(None)


@converts("getitem")
def _getitem(ctx, node, a):
    x, index = node.args
    value = ctx.value(x)
    if isinstance(value, (tuple, list)):
        return value[index]
    return ctx.index(x, index)
