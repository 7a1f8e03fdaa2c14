"""Converters of elementwise ops ONNX has no single operator for, each an exact composition of
standard ONNX operators (``log2`` as ``Log`` over ln 2, ``atan2`` as ``Atan`` with the quadrant
corrections, ``fmax`` as ``Max`` that skips NaN)."""
import math

import numpy as np

from ._builder import Unsupported
from ._functions import CONVERTERS, converts

__all__ = []


def _float_input(ctx, node, x):
    """``x`` in the node's (floating) result dtype."""
    return ctx.t_as(x, ctx.node_dtype(node))


def _sign_bit(b, xv, dtype):
    """True where ``x`` is negative or -0.0 (1/x tells the zeros apart)."""
    zero = b.scalar(0.0, dtype)
    negative_zero = b.op("And", [b.op("Equal", [xv, zero]), b.op("Less", [
        b.op("Div", [b.scalar(1.0, dtype), xv]), zero])])
    return b.op("Or", [b.op("Less", [xv, zero]), negative_zero])


def _trunc_value(b, xv, dtype):
    below = b.op("Less", [xv, b.scalar(0, dtype)])
    return b.op("Where", [below, b.op("Ceil", [xv]), b.op("Floor", [xv])])


@converts("exp2", "exp2_")
def _exp2(ctx, node, a):
    dtype = ctx.node_dtype(node)
    return ctx.b.op("Pow", [ctx.b.scalar(2.0, dtype), _float_input(ctx, node, a["input"])])


def _log_base(base):
    def convert(ctx, node, a):
        dtype = ctx.node_dtype(node)
        return ctx.b.op("Div", [ctx.b.op("Log", [_float_input(ctx, node, a["input"])]),
                                ctx.b.scalar(math.log(base), dtype)])
    return convert


for _name, _base in (("log2", 2.0), ("log10", 10.0)):
    CONVERTERS[_name] = CONVERTERS[_name + "_"] = _log_base(_base)


@converts("erfc", "erfc_")
def _erfc(ctx, node, a):
    dtype = ctx.node_dtype(node)
    return ctx.b.op("Sub", [ctx.b.scalar(1.0, dtype),
                            ctx.b.op("Erf", [_float_input(ctx, node, a["input"])])])


@converts("ndtr")
def _ndtr(ctx, node, a):
    b, dtype = ctx.b, ctx.node_dtype(node)
    erf = b.op("Erf", [b.op("Mul", [_float_input(ctx, node, a["input"]),
                                    b.scalar(1 / math.sqrt(2), dtype)])])
    return b.op("Mul", [b.op("Add", [erf, b.scalar(1.0, dtype)]), b.scalar(0.5, dtype)])


@converts("trunc", "trunc_", "fix", "fix_")
def _trunc(ctx, node, a):
    x = a["input"]
    dtype = ctx.dtype(x)
    if not dtype.is_floating_point:
        return ctx.t(x)
    return _trunc_value(ctx.b, ctx.t(x), dtype)


@converts("frac", "frac_")
def _frac(ctx, node, a):
    x = a["input"]
    xv, dtype = ctx.t(x), ctx.dtype(x)
    return ctx.b.op("Sub", [xv, _trunc_value(ctx.b, xv, dtype)])


@converts("logit", "logit_")
def _logit(ctx, node, a):
    b, dtype = ctx.b, ctx.node_dtype(node)
    xv = _float_input(ctx, node, a["input"])
    eps = a.get("eps")
    if eps is not None:
        xv = b.op("Clip", [xv, b.scalar(eps, dtype), b.scalar(1.0 - eps, dtype)])
    return b.op("Log", [b.op("Div", [xv, b.op("Sub", [b.scalar(1.0, dtype), xv])])])


@converts("nan_to_num", "nan_to_num_")
def _nan_to_num(ctx, node, a):
    x = a["input"]
    dtype = ctx.dtype(x)
    if not dtype.is_floating_point:
        return ctx.t(x)
    b, xv = ctx.b, ctx.t(x)
    finfo = ctx.ember.finfo(dtype)
    posinf = finfo.max if a.get("posinf") is None else a["posinf"]
    neginf = finfo.min if a.get("neginf") is None else a["neginf"]
    nan = 0.0 if a.get("nan") is None else a["nan"]
    out = b.op("Where", [b.op("IsInf", [xv], detect_negative=0), b.scalar(posinf, dtype), xv])
    out = b.op("Where", [b.op("IsInf", [xv], detect_positive=0), b.scalar(neginf, dtype), out])
    return b.op("Where", [b.op("IsNaN", [xv]), b.scalar(nan, dtype), out])


def _constant_like(ctx, x, value):
    return ctx.b.op("Expand", [ctx.b.const(np.bool_(value)), ctx.b.op("Shape", [ctx.t(x)])])


def _is_inf(positive, negative):
    def convert(ctx, node, a):
        x = a["input"]
        if not ctx.dtype(x).is_floating_point:
            return _constant_like(ctx, x, False)
        return ctx.b.op("IsInf", [ctx.t(x)], detect_positive=int(positive),
                        detect_negative=int(negative))
    return convert


CONVERTERS["isinf"] = _is_inf(True, True)
CONVERTERS["isposinf"] = _is_inf(True, False)
CONVERTERS["isneginf"] = _is_inf(False, True)


@converts("isfinite")
def _isfinite(ctx, node, a):
    x = a["input"]
    if not ctx.dtype(x).is_floating_point:
        return _constant_like(ctx, x, True)
    xv = ctx.t(x)
    return ctx.b.op("Not", [ctx.b.op("Or", [ctx.b.op("IsInf", [xv]), ctx.b.op("IsNaN", [xv])])])


@converts("signbit")
def _signbit(ctx, node, a):
    """x < 0 or x is -0.0 (a NaN's sign bit is not visible to ONNX operators: NaNs give False)."""
    x = a["input"]
    dtype = ctx.dtype(x)
    if not dtype.is_floating_point:
        return ctx.b.op("Less", [ctx.t(x), ctx.b.scalar(0, dtype)])
    return _sign_bit(ctx.b, ctx.t(x), dtype)


@converts("sgn", "sgn_")
def _sgn(ctx, node, a):
    x = a["input"]
    if ctx.dtype(x).is_complex:
        raise Unsupported("sgn of complex tensors")
    return ctx.b.op("Sign", [ctx.t(x)])


def _binary_operands(ctx, node, a, first="input", second="other"):
    dtype = ctx.node_dtype(node)
    return ctx.t_as(a[first], dtype), ctx.t_as(a[second], dtype), dtype


@converts("atan2", "atan2_", "arctan2", "arctan2_")
def _atan2(ctx, node, a):
    """atan(y / x), moved by ±pi where x < 0 and set to ±pi/2 (or 0) where x == 0."""
    b = ctx.b
    y, x, dtype = _binary_operands(ctx, node, a)
    zero = b.scalar(0.0, dtype)
    base = b.op("Atan", [b.op("Div", [y, x])])
    turn = b.op("Where", [b.op("GreaterOrEqual", [y, zero]), b.scalar(math.pi, dtype),
                          b.scalar(-math.pi, dtype)])
    out = b.op("Where", [b.op("Less", [x, zero]), b.op("Add", [base, turn]), base])
    on_axis = b.op("Mul", [b.op("Sign", [y]), b.scalar(math.pi / 2, dtype)])
    return b.op("Where", [b.op("Equal", [x, zero]), on_axis, out])


@converts("hypot", "hypot_")
def _hypot(ctx, node, a):
    b = ctx.b
    x, y, _ = _binary_operands(ctx, node, a)
    return b.op("Sqrt", [b.op("Add", [b.op("Mul", [x, x]), b.op("Mul", [y, y])])])


def _logaddexp(base):
    def convert(ctx, node, a):
        """max + log_base(1 + base^-|x - y|); equal operands (infinities too) give x + log 2."""
        b = ctx.b
        x, y, dtype = _binary_operands(ctx, node, a)
        ln = math.log(base)
        gap = b.op("Neg", [b.op("Abs", [b.op("Sub", [x, y])])])
        power = b.op("Exp", [gap if base == math.e else b.op("Mul", [gap, b.scalar(ln, dtype)])])
        tail = b.op("Log", [b.op("Add", [b.scalar(1.0, dtype), power])])
        if base != math.e:
            tail = b.op("Div", [tail, b.scalar(ln, dtype)])
        out = b.op("Add", [b.op("Max", [x, y]), tail])
        same = b.op("Add", [x, b.scalar(math.log(2) / ln, dtype)])
        return b.op("Where", [b.op("Equal", [x, y]), same, out])
    return convert


CONVERTERS["logaddexp"] = _logaddexp(math.e)
CONVERTERS["logaddexp2"] = _logaddexp(2.0)


@converts("copysign", "copysign_")
def _copysign(ctx, node, a):
    b = ctx.b
    x, y, dtype = _binary_operands(ctx, node, a)
    magnitude = b.op("Abs", [x])
    return b.op("Where", [_sign_bit(b, y, dtype), b.op("Neg", [magnitude]), magnitude])


def _xlog(log1p):
    def convert(ctx, node, a):
        """x * log(y) (log1p(y)), 0 where x == 0 unless y is NaN."""
        b = ctx.b
        x, y, dtype = _binary_operands(ctx, node, a)
        if log1p:
            y_log = b.op("Log", [b.op("Add", [y, b.scalar(1.0, dtype)])])
        else:
            y_log = b.op("Log", [y])
        out = b.op("Where", [b.op("Equal", [x, b.scalar(0.0, dtype)]), b.scalar(0.0, dtype),
                             b.op("Mul", [x, y_log])])
        return b.op("Where", [b.op("IsNaN", [y]), y, out])
    return convert


CONVERTERS["xlogy"] = CONVERTERS["xlogy_"] = _xlog(False)
CONVERTERS["xlog1py"] = _xlog(True)


@converts("entr")
def _entr(ctx, node, a):
    """-x log x for x > 0, 0 at 0, -inf below (NaN stays NaN)."""
    b, dtype = ctx.b, ctx.node_dtype(node)
    xv = _float_input(ctx, node, a["input"])
    zero = b.scalar(0.0, dtype)
    out = b.op("Neg", [b.op("Mul", [xv, b.op("Log", [xv])])])
    out = b.op("Where", [b.op("Equal", [xv, zero]), zero, out])
    return b.op("Where", [b.op("Less", [xv, zero]), b.scalar(-np.inf, dtype), out])


def _nan_skipping(onnx_op):
    def convert(ctx, node, a):
        b = ctx.b
        x, y, dtype = _binary_operands(ctx, node, a)
        if not dtype.is_floating_point:
            return b.op(onnx_op, [x, y])
        out = b.op(onnx_op, [x, y])
        out = b.op("Where", [b.op("IsNaN", [y]), x, out])
        return b.op("Where", [b.op("IsNaN", [x]), y, out])
    return convert


CONVERTERS["fmax"] = _nan_skipping("Max")
CONVERTERS["fmin"] = _nan_skipping("Min")


def _clamp_side(onnx_op, bound):
    def convert(ctx, node, a):
        x = a["input"]
        dtype = ctx.node_dtype(node)
        return ctx.b.op(onnx_op, [ctx.t_as(x, dtype), ctx.t_as(a[bound], dtype)])
    return convert


CONVERTERS["clamp_min"] = CONVERTERS["clamp_min_"] = _clamp_side("Max", "min")
CONVERTERS["clamp_max"] = CONVERTERS["clamp_max_"] = _clamp_side("Min", "max")


@converts("lerp", "lerp_")
def _lerp(ctx, node, a):
    """As torch computes it: start + w (end - start) for w < 0.5, end - (end - start)(1 - w)
    above."""
    b = ctx.b
    start, end, dtype = _binary_operands(ctx, node, a, "input", "end")
    weight = ctx.t_as(a["weight"], dtype)
    diff = b.op("Sub", [end, start])
    low = b.op("Add", [start, b.op("Mul", [weight, diff])])
    high = b.op("Sub", [end, b.op("Mul", [diff, b.op("Sub", [b.scalar(1.0, dtype), weight])])])
    return b.op("Where", [b.op("Less", [b.op("Abs", [weight]), b.scalar(0.5, dtype)]), low, high])


def _addc(onnx_op):
    def convert(ctx, node, a):
        b, dtype = ctx.b, ctx.node_dtype(node)
        term = b.op(onnx_op, [ctx.t_as(a["tensor1"], dtype), ctx.t_as(a["tensor2"], dtype)])
        value = a.get("value", 1)
        if value != 1:
            term = b.op("Mul", [term, b.scalar(value, dtype)])
        return b.op("Add", [ctx.t_as(a["input"], dtype), term])
    return convert


CONVERTERS["addcmul"] = CONVERTERS["addcmul_"] = _addc("Mul")
CONVERTERS["addcdiv"] = CONVERTERS["addcdiv_"] = _addc("Div")


def _scaled(factor):
    def convert(ctx, node, a):
        dtype = ctx.node_dtype(node)
        return ctx.b.op("Mul", [_float_input(ctx, node, a["input"]), ctx.b.scalar(factor, dtype)])
    return convert


CONVERTERS["deg2rad"] = CONVERTERS["deg2rad_"] = _scaled(math.pi / 180)
CONVERTERS["rad2deg"] = CONVERTERS["rad2deg_"] = _scaled(180 / math.pi)


@converts("heaviside", "heaviside_")
def _heaviside(ctx, node, a):
    b = ctx.b
    x, values, dtype = _binary_operands(ctx, node, a, "input", "values")
    step = b.cast(b.op("Greater", [x, b.scalar(0, dtype)]), dtype)
    return b.op("Where", [b.op("Equal", [x, b.scalar(0, dtype)]), values, step])


@converts("ldexp", "ldexp_")
def _ldexp(ctx, node, a):
    b, dtype = ctx.b, ctx.node_dtype(node)
    power = b.op("Pow", [b.scalar(2.0, dtype), ctx.t_as(a["other"], dtype)])
    return b.op("Mul", [ctx.t_as(a["input"], dtype), power])


@converts("float_power", "float_power_")
def _float_power(ctx, node, a):
    dtype = ctx.node_dtype(node)
    return ctx.b.op("Pow", [ctx.t_as(a["input"], dtype), ctx.t_as(a["exponent"], dtype)])


@converts("sinc", "sinc_")
def _sinc(ctx, node, a):
    b, dtype = ctx.b, ctx.node_dtype(node)
    xv = _float_input(ctx, node, a["input"])
    scaled = b.op("Mul", [xv, b.scalar(math.pi, dtype)])
    ratio = b.op("Div", [b.op("Sin", [scaled]), scaled])
    return b.op("Where", [b.op("Equal", [xv, b.scalar(0.0, dtype)]), b.scalar(1.0, dtype), ratio])


@converts("spherical_bessel_j0")
def _spherical_bessel_j0(ctx, node, a):
    b, dtype = ctx.b, ctx.node_dtype(node)
    xv = _float_input(ctx, node, a["input"])
    ratio = b.op("Div", [b.op("Sin", [xv]), xv])
    ratio = b.op("Where", [b.op("IsInf", [xv]), b.scalar(0.0, dtype), ratio])
    return b.op("Where", [b.op("Equal", [xv, b.scalar(0.0, dtype)]), b.scalar(1.0, dtype), ratio])


@converts("isclose")
def _isclose(ctx, node, a):
    """|x - y| <= atol + rtol |y| between finite values; equal values (infinities too) are
    close, and NaNs are when ``equal_nan``."""
    b = ctx.b
    dtype = ctx.common_dtype(a["input"], a["other"])
    x, y = ctx.t_as(a["input"], dtype), ctx.t_as(a["other"], dtype)
    equal = b.op("Equal", [x, y])
    if not dtype.is_floating_point:
        dtype = ctx.ember.float64 if dtype == ctx.ember.int64 else ctx.ember.float32
        x, y = b.cast(x, dtype), b.cast(y, dtype)
    limit = b.op("Add", [b.scalar(a.get("atol", 1e-8), dtype),
                         b.op("Mul", [b.scalar(a.get("rtol", 1e-5), dtype), b.op("Abs", [y])])])
    close = b.op("LessOrEqual", [b.op("Abs", [b.op("Sub", [x, y])]), limit])
    finite = b.op("Not", [b.op("Or", [b.op("IsInf", [x]), b.op("IsInf", [y])])])
    out = b.op("Or", [equal, b.op("And", [close, finite])])
    if a.get("equal_nan"):
        out = b.op("Or", [out, b.op("And", [b.op("IsNaN", [x]), b.op("IsNaN", [y])])])
    return out


def truth(ctx, x):
    """``x`` as a bool ONNX value (nonzero is True, NaN included)."""
    if ctx.dtype(x) == ctx.ember.bool:
        return ctx.t(x)
    return ctx.b.cast(ctx.t(x), ctx.ember.bool)


def _logical(onnx_op):
    def convert(ctx, node, a):
        return ctx.b.op(onnx_op, [truth(ctx, a["input"]), truth(ctx, a["other"])])
    return convert


for _name, _op in (("logical_and", "And"), ("logical_or", "Or"), ("logical_xor", "Xor")):
    CONVERTERS[_name] = _logical(_op)


@converts("logical_not")
def _logical_not(ctx, node, a):
    return ctx.b.op("Not", [truth(ctx, a["input"])])


@converts("hardshrink")
def _hardshrink(ctx, node, a):
    x = a["input"]
    b, dtype, xv = ctx.b, ctx.dtype(x), ctx.t(x)
    lambd = b.scalar(a.get("lambd", 0.5), dtype)
    keep = b.op("Greater", [b.op("Abs", [xv]), lambd])
    return b.op("Where", [keep, xv, b.scalar(0.0, dtype)])
