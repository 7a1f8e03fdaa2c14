"""OpInfo entries: arithmetic and unary math."""
from .common import Arg, OpInfo, Sample

A = Arg


def _binary_samples(low=-2.0, high=2.0, avoid=None):
    return [
        Sample((A((3, 4), low, high), A((3, 4), low, high, avoid=avoid)), name="same"),
        Sample((A((2, 3, 4), low, high), A((4,), low, high, avoid=avoid)), name="bcast"),
        Sample((A((3, 1), low, high), A((1, 4), low, high, avoid=avoid)), name="bcast2"),
        Sample((A((), low, high), A((2, 3), low, high, avoid=avoid)), name="zerodim"),
        Sample((A((3, 4), low, high, noncontig=True), A((3, 4), low, high, transposed=True, avoid=avoid)),
               name="noncontig"),
        Sample((A((0, 3), low, high), A((3,), low, high, avoid=avoid)), name="empty"),
        Sample((A((3, 4), low, high), 1.5 if avoid is None else 1.5), name="scalar"),
    ]


OPS = [
    OpInfo("add", lambda lib, a, b, **k: lib.add(a, b, **k), _binary_samples() + [
        Sample((A((3, 4)), A((4,))), {"alpha": 2.5}, name="alpha")]),
    OpInfo("sub", lambda lib, a, b, **k: lib.sub(a, b, **k), _binary_samples() + [
        Sample((A((3, 4)), A((3, 4))), {"alpha": -0.5}, name="alpha")]),
    OpInfo("mul", lambda lib, a, b: lib.mul(a, b), _binary_samples()),
    OpInfo("div", lambda lib, a, b, **k: lib.div(a, b, **k), _binary_samples(avoid=0.0)),
    OpInfo("div_trunc", lambda lib, a, b: lib.div(a, b, rounding_mode="trunc"),
           _binary_samples(avoid=0.0)[:3], gradcheck=False),
    OpInfo("div_floor", lambda lib, a, b: lib.div(a, b, rounding_mode="floor"),
           _binary_samples(avoid=0.0)[:3], gradcheck=False),
    OpInfo("operators", lambda lib, a, b: (a + b) * 2 - b / 3 + 1 - (a ** 2) + 2 ** b - (3 - a) + 1 / (b + 5),
           _binary_samples()[:5]),
    OpInfo("neg", lambda lib, a: lib.neg(a), [Sample((A((3, 4)),)), Sample((A((3, 4), noncontig=True),))]),
    OpInfo("pow_scalar", lambda lib, a, e: lib.pow(a, e), [
        Sample((A((3, 4), 0.5, 2), 2.5), name="frac"),
        Sample((A((3, 4)), 3), name="int"),
        Sample((A((3, 4)), 0), name="zero"),
        Sample((A((3, 4), 0.5, 2), -1.5), name="neg"),
    ]),
    OpInfo("pow_tensor", lambda lib, a, b: lib.pow(a, b), [
        Sample((A((3, 4), 0.5, 2), A((3, 4))), name="same"),
        Sample((A((2, 3, 4), 0.5, 2), A((4,))), name="bcast"),
    ]),
    OpInfo("pow_scalar_base", lambda lib, b: lib.pow(2.5, b), [Sample((A((3, 4)),))]),
]


def _unary(name, low=-2.0, high=2.0, avoid=None, **kw):
    samples = [
        Sample((A((3, 4), low, high, avoid=avoid),), name="2d"),
        Sample((A((), low, high, avoid=avoid),), name="0d"),
        Sample((A((2, 3, 4), low, high, noncontig=True, avoid=avoid),), name="noncontig"),
        Sample((A((0, 2), low, high),), name="empty"),
    ]
    return OpInfo(name, lambda lib, x: getattr(lib, name)(x), samples, **kw)


OPS += [
    _unary("exp"), _unary("exp2"), _unary("expm1"),
    _unary("log", 0.1, 3), _unary("log2", 0.1, 3), _unary("log10", 0.1, 3), _unary("log1p", -0.9, 3),
    _unary("sqrt", 0.1, 3), _unary("rsqrt", 0.1, 3), _unary("square"), _unary("reciprocal", avoid=0.0),
    _unary("sin"), _unary("cos"), _unary("tan", -1.2, 1.2),
    _unary("asin", -0.9, 0.9), _unary("acos", -0.9, 0.9), _unary("atan"),
    _unary("sinh"), _unary("cosh"), _unary("tanh"),
    _unary("asinh"), _unary("acosh", 1.1, 3), _unary("atanh", -0.9, 0.9),
    _unary("sigmoid", -8, 8), _unary("erf"), _unary("erfc"), _unary("erfinv", -0.9, 0.9),
    _unary("lgamma", 0.1, 5), _unary("digamma", 0.1, 5),
    _unary("abs", avoid=0.0), _unary("sign"),
    _unary("floor", avoid=[-2, -1, 0, 1, 2]), _unary("ceil", avoid=[-2, -1, 0, 1, 2]),
    _unary("trunc", avoid=[-2, -1, 0, 1, 2]), _unary("frac", avoid=[-2, -1, 0, 1, 2]),
]


# -- unary ops with arguments, and predicates --------------------------------------------------

def _special_values():
    return A((2, 4), values=[[float("nan"), float("inf"), -float("inf"), 0.0],
                             [-0.0, 1.5, -2.5, 3.0]])


_INT_DTYPES = ("int64", "int32", "uint8", "bool")

OPS += [
    _unary("round", avoid=[-1.5, -0.5, 0.5, 1.5]),
    OpInfo("round_decimals", lambda lib, x, **k: lib.round(x, **k), [
        Sample((A((3, 4), -20, 20),), {"decimals": 1}, name="pos"),
        Sample((A((3, 4), -200, 200),), {"decimals": -1}, name="neg"),
        Sample((A((2, 3), noncontig=True),), {"decimals": 2}, name="noncontig"),
    ]),
    OpInfo("round_int", lambda lib, x: lib.round(x), [Sample((A((3, 4), -9, 9),))],
           dtypes=("int64", "int32", "uint8")),
    _unary("logit", 0.05, 0.95),
    OpInfo("logit_eps", lambda lib, x, **k: lib.logit(x, **k), [
        Sample((A((3, 4), 0.0, 1.0, avoid=[0.2, 0.8]),), {"eps": 0.2}, name="eps"),
        Sample((A((), 0.3, 0.7),), {"eps": 1e-6}, name="0d"),
    ]),
    OpInfo("logit_outside", lambda lib, x: lib.logit(x), [
        Sample((A((4,), values=[-0.5, 0.0, 1.0, 1.5]),))], gradcheck=False, gradgrad=False),
    OpInfo("logit_int", lambda lib, x: lib.logit(x), [Sample((A((3,), 0, 2),))],
           dtypes=("int64", "bool")),
    OpInfo("nan_to_num", lambda lib, x, *a, **k: lib.nan_to_num(x, *a, **k), [
        Sample((_special_values(),), name="defaults"),
        Sample((_special_values(),), {"nan": 1.0, "posinf": 2.0, "neginf": -3.0}, name="values"),
        Sample((_special_values(), 0.5), name="positional"),
        Sample((A((3, 4), noncontig=True),), name="finite"),
    ], dtypes=("float32", "float64", "float16", "bfloat16"), gradcheck=False),
    OpInfo("nan_to_num_int", lambda lib, x: lib.nan_to_num(x), [Sample((A((3,), -5, 5),))],
           dtypes=_INT_DTYPES),
]

for _name in ("isfinite", "isnan", "isinf", "isposinf", "isneginf", "signbit"):
    OPS.append(OpInfo(_name, lambda lib, x, _n=_name: getattr(lib, _n)(x), [
        Sample((_special_values(),), name="special"),
        Sample((A((2, 3), noncontig=True),), name="noncontig"),
        Sample((A(()),), name="0d"),
    ], dtypes=("float32", "float64", "float16", "bfloat16"), grad=False))
    OPS.append(OpInfo(_name + "_int", lambda lib, x, _n=_name: getattr(lib, _n)(x),
                      [Sample((A((3, 4), -5, 5),))], dtypes=_INT_DTYPES, grad=False))


# -- binary ops --------------------------------------------------------------------------------

def _tensor_samples(low=-2.0, high=2.0, avoid=None):
    """The binary samples without the number operand (for ops that take two tensors only)."""
    return [s for s in _binary_samples(low, high, avoid) if s.name != "scalar"]


def _ties():
    return Sample((A((2, 3), values=[[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]]),
                   A((2, 3), values=[[1.0, 0.0, 3.0], [-1.0, 2.0, 2.5]])), name="ties")


def _nans():
    return Sample((A((2, 3), values=[[float("nan"), 2.0, float("nan")], [-1.0, 0.5, 2.0]]),
                   A((2, 3), values=[[1.0, float("nan"), float("nan")], [-1.0, 2.0, 2.5]])),
                  name="nans")


def _int_samples():
    return [Sample((A((3, 4), -9, 9), A((4,), 1, 9)), name="int"),
            Sample((A((3, 4), -9, 9), 3), name="int_scalar")]


def _fn(name):
    return lambda lib, *a, **k: getattr(lib, name)(*a, **k)


OPS += [
    OpInfo("atan2", _fn("atan2"), _tensor_samples(avoid=0.0)),
    OpInfo("atan2_int", _fn("atan2"), _int_samples()[:1], dtypes=("int64", "bool")),
    OpInfo("arctan2_method", lambda lib, a, b: a.arctan2(b), _tensor_samples(avoid=0.0)[:1]),
    OpInfo("fmod", _fn("fmod"), _binary_samples(-3, 3, avoid=0.0) + [
        Sample((A((3, 4), -3, 3), -0.75), name="neg_scalar")]),
    OpInfo("fmod_int", _fn("fmod"), _int_samples(), dtypes=("int64", "int32")),
    OpInfo("remainder", _fn("remainder"), _binary_samples(-3, 3, avoid=0.0) + [
        Sample((A((3, 4), -3, 3), -0.75), name="neg_scalar")]),
    OpInfo("remainder_scalar_first", _fn("remainder"), [Sample((1.5, A((3, 4), -3, 3, avoid=0.0)))],
           grad=False),
    OpInfo("remainder_int", _fn("remainder"), _int_samples() + [
        Sample((7, A((4,), 1, 9)), name="scalar_first")], dtypes=("int64", "int32", "uint8")),
    OpInfo("floor_divide", _fn("floor_divide"), _binary_samples(-3, 3, avoid=0.0) + [
        Sample((2.5, A((3, 4), 0.5, 3)), name="scalar_first")], grad=False),
    OpInfo("floor_divide_int", _fn("floor_divide"), _int_samples() + [
        Sample((A((3, 4), -9, 9), -4), name="neg_scalar")], dtypes=("int64", "int32", "int8")),
    OpInfo("operators_mod", lambda lib, a, b: (a % b, a // b, 2.5 % b, 7 // b),
           _tensor_samples(0.5, 3)[:3], grad=False),
    OpInfo("hypot", _fn("hypot"), _tensor_samples(avoid=0.0)),
    OpInfo("logaddexp", _fn("logaddexp"), _tensor_samples(-5, 5)),
    OpInfo("logaddexp2", _fn("logaddexp2"), _tensor_samples(-5, 5)),
    OpInfo("copysign", _fn("copysign"), _binary_samples(avoid=0.0) + [
        Sample((A((3, 4), avoid=0.0), -0.0), name="neg_zero")]),
    OpInfo("copysign_int", _fn("copysign"), _int_samples(), dtypes=("int64", "bool")),
    OpInfo("xlogy", _fn("xlogy"), _binary_samples(0.1, 3) + [
        Sample((A((3, 4), 0.1, 3), 2), name="int_scalar"),
        Sample((2.5, A((3, 4), 0.1, 3)), name="scalar_first"),
        Sample((A((4,), values=[0.0, 0.0, 1.0, 2.0]), A((4,), values=[0.0, float("nan"), 0.5, 3.0])),
               name="zeros")], skip={"gradcheck": "inf and NaN in the zeros sample"}),
    OpInfo("xlogy_int", _fn("xlogy"), _int_samples()[:1], dtypes=("int64",)),
]

for _name in ("maximum", "minimum", "fmax", "fmin"):
    OPS += [
        OpInfo(_name, _fn(_name), _tensor_samples(avoid=0.0)),
        OpInfo(_name + "_ties", _fn(_name), [_ties(), _nans()], gradcheck=False),
        OpInfo(_name + "_int", _fn(_name), _int_samples()[:1], dtypes=_INT_DTYPES),
    ]


# -- ternary ops -------------------------------------------------------------------------------

OPS += [
    OpInfo("clamp", lambda lib, x, *a, **k: lib.clamp(x, *a, **k), [
        Sample((A((3, 4), avoid=[-0.5, 0.5]), -0.5, 0.5), name="numbers"),
        Sample((A((3, 4), avoid=[-0.5]),), {"min": -0.5}, name="min"),
        Sample((A((3, 4), avoid=[0.5]),), {"max": 0.5}, name="max"),
        Sample((A((3, 4), avoid=[1]), 2, 1), name="min_gt_max"),
        Sample((A((2, 3, 4), noncontig=True, avoid=[0.0]), 0.0), name="noncontig"),
        Sample((A((0, 3)), 0.0, 1.0), name="empty"),
        Sample((A(()), -1.0, 1.0), name="0d"),
    ]),
    OpInfo("clamp_tensor", lambda lib, x, lo, hi: lib.clamp(x, lo, hi), [
        Sample((A((3, 4)), A((3, 4), -2, -0.2), A((4,), 0.2, 2)), name="both"),
        Sample((A((3, 4)), A((3, 1), -1, 1), None), name="min"),
        Sample((A((3, 4)), None, A((1, 4), -1, 1)), name="max"),
        Sample((A((3, 4)), A((3, 4), 0.2, 1), A((3, 4), -1, -0.2)), name="min_gt_max"),
        Sample((A((4,)), A((2, 1), -1, 0), A((2, 4), 0.1, 1)), name="broadcast_up"),
        Sample((A((3, 4)), -1, A((), 0.5, requires_grad=False)), name="number_and_0d"),
    ], gradcheck=True),
    OpInfo("clamp_ties", lambda lib, x, lo, hi: lib.clamp(x, lo, hi), [
        Sample((A((3,), values=[1.0, 2.0, 3.0]), A((3,), values=[1.0, 0.0, 3.0]),
                A((3,), values=[1.0, 0.0, 3.0])), name="equal_bounds"),
        Sample((A((3,), values=[float("nan"), 2.0, 3.0]), 0.0, 1.5), name="nan")], gradcheck=False),
    OpInfo("clamp_int", lambda lib, x, *a: lib.clamp(x, *a), [
        Sample((A((3, 4), -9, 9), -2, 3), name="ints"),
        Sample((A((3, 4), -9, 9), 0.5), name="float_min"),
        Sample((A((3, 4), -9, 9), A((4,), -2, 2, dtype="int64")), name="tensor")],
        dtypes=("int64", "int32", "uint8")),
    OpInfo("clip_min_max", lambda lib, x: (lib.clip(x, max=0.3), lib.clamp_min(x, -0.2),
                                           lib.clamp_max(x, 0.1), x.clip(-0.4, 0.4)),
           [Sample((A((3, 4), avoid=[-0.4, -0.2, 0.1, 0.3, 0.4]),))], output_index=None),
    OpInfo("lerp", lambda lib, a, b, w: lib.lerp(a, b, w), [
        Sample((A((3, 4)), A((3, 4)), 0.3), name="small"),
        Sample((A((3, 4)), A((4,)), 0.75), name="large_bcast"),
        Sample((A((3, 4)), A((3, 4)), A((3, 4), -1, 2)), name="tensor"),
        Sample((A((3, 1)), A((1, 4)), A((4,), 0, 1)), name="tensor_bcast"),
        Sample((A((3, 4), noncontig=True), A((3, 4), transposed=True), A((), 0.2, 0.8)), name="noncontig"),
        Sample((A((0, 3)), A((3,)), 0.5), name="empty"),
    ]),
    OpInfo("addcmul", lambda lib, s, a, b, **k: lib.addcmul(s, a, b, **k), [
        Sample((A((3, 4)), A((3, 4)), A((3, 4))), name="same"),
        Sample((A((3, 4)), A((4,)), A((3, 1))), {"value": -0.5}, name="bcast"),
        Sample((A((4,)), A((2, 4)), A((3, 1, 4))), {"value": 2}, name="bcast_up"),
        Sample((A(()), A((3, 4), noncontig=True), A((3, 4), transposed=True)), name="noncontig"),
    ]),
    OpInfo("addcmul_int", lambda lib, s, a, b, **k: lib.addcmul(s, a, b, **k), [
        Sample((A((3, 4), -5, 5), A((4,), -5, 5), A((3, 4), -5, 5)), {"value": 3}, name="int"),
        Sample((A((3, 4), -5, 5), A((4,), -2, 2, dtype="float32"), A((3, 4), -5, 5)), name="mixed")],
        dtypes=("int64", "int32")),
    OpInfo("addcdiv", lambda lib, s, a, b, **k: lib.addcdiv(s, a, b, **k), [
        Sample((A((3, 4)), A((3, 4)), A((3, 4), 0.5, 2))),
        Sample((A((3, 4)), A((4,)), A((3, 1), -2, -0.5)), {"value": -0.5}, name="bcast"),
        Sample((A(()), A((3, 4), noncontig=True), A((3, 4), 0.5, 2, transposed=True)), {"value": 2},
               name="noncontig"),
    ]),
    OpInfo("where", lambda lib, c, a, b: lib.where(c, a, b), [
        Sample((A((3, 4), dtype="bool"), A((3, 4)), A((3, 4))), name="same"),
        Sample((A((3, 1), dtype="bool"), A((4,)), A((2, 3, 4))), name="bcast"),
        Sample((A((3, 4), dtype="bool"), A((3, 4), noncontig=True), 0.5), name="number"),
        Sample((A((3, 4), dtype="bool"), -1.0, A(())), name="number_first"),
    ]),
    OpInfo("where_sqrt", lambda lib, x: lib.where(x > 0, x.sqrt(), 0.0),
           [Sample((A((3, 4), avoid=0.0),))], gradcheck=False, gradgrad=False),
    OpInfo("where_safe", lambda lib, x: lib.where(x > 0, x.clamp(min=1e-3).sqrt(), x),
           [Sample((A((3, 4), avoid=[0.0]),))]),
]


# -- sgn, deg2rad, rad2deg, heaviside, gcd, lcm, ldexp, float_power, nextafter, frexp,
#    and the special functions torch also names at the top level ------------------------------

def _zero_and_nan():
    return A((5,), values=[0.0, -0.0, 2.0, -3.0, float("nan")])


OPS += [
    _unary("sgn"), _unary("deg2rad", -200, 200), _unary("rad2deg"),
    OpInfo("deg2rad_int", _fn("deg2rad"), [Sample((A((3, 4), -360, 360),))],
           dtypes=("int64", "bool")),
    OpInfo("heaviside", _fn("heaviside"), [
        Sample((A((3, 4), -2, 2, avoid=0.0), A((4,))), name="bcast"),
        Sample((_zero_and_nan(), A((), values=0.5)), name="zeros"),
    ], grad=False),
    OpInfo("heaviside_int", _fn("heaviside"), [Sample((A((6,), -2, 2), A((6,), 0, 5)))],
           dtypes=("int64", "int32")),
    OpInfo("gcd", _fn("gcd"), _int_samples()[:1] + [
        Sample((A((4,), values=[0, -12, 7, 0], dtype="int64"),
                A((4,), values=[0, 18, -21, 5], dtype="int64")), name="signs")],
           dtypes=("int64", "int32", "uint8")),
    OpInfo("lcm", _fn("lcm"), _int_samples()[:1] + [
        Sample((A((4,), values=[0, -12, 7, 3], dtype="int64"),
                A((4,), values=[0, 18, -21, 5], dtype="int64")), name="signs")],
           dtypes=("int64", "int32")),
    # torch's gradient for a negative integer exponent is 0 (its formula takes 2**other in
    # integers); ember's is grad * 2**other. The forward with negative exponents still compares.
    OpInfo("ldexp", _fn("ldexp"), [
        Sample((A((3, 4)), A((4,), 0, 4, dtype="int64")), name="int_exponent"),
        Sample((A((2, 3)), A((2, 3), -2, 2)), name="float_exponent"),
    ]),
    OpInfo("ldexp_negative", _fn("ldexp"), [Sample((A((3, 4)), A((4,), -3, 0, dtype="int64")))],
           grad=False),
    OpInfo("float_power", _fn("float_power"), [
        Sample((A((3, 4), 0.5, 2), A((4,), -1, 2)), name="tensors"),
        Sample((A((3, 4)), 2), name="int_scalar"),
        Sample((A((3, 4), 0.5, 2), -1.5), name="float_scalar"),
        Sample((2.5, A((3, 4))), name="scalar_base"),
    ]),
    OpInfo("float_power_int", _fn("float_power"), [Sample((A((3, 4), -3, 3), 2))],
           dtypes=("int64", "int32")),
    OpInfo("nextafter", _fn("nextafter"), [
        Sample((A((3, 4)), A((4,))), name="bcast"),
        Sample((_zero_and_nan(), A((5,), values=[1.0, -1.0, 2.0, 0.0, 1.0])), name="special"),
    ], gradcheck=False, gradgrad=False),
    OpInfo("frexp", _fn("frexp"), [
        Sample((A((3, 4), -100, 100),), name="2d"),
        Sample((_zero_and_nan(),), name="special"),
    ], output_index=0, gradgrad=False, skip={"gradcheck": "NaN and zeros in the special sample"}),
    _unary("sinc", avoid=0.0), _unary("i0"),
    OpInfo("polygamma", lambda lib, x, n: lib.polygamma(n, x), [
        Sample((A((3, 4), 0.5, 4), 1), name="trigamma"),
        Sample((A((3, 4), 0.5, 4), 2), name="n2"),
    ]),
    OpInfo("polygamma_method", lambda lib, x: x.polygamma(1), [Sample((A((3,), 0.5, 3),))]),
    OpInfo("mvlgamma", lambda lib, x, p: lib.mvlgamma(x, p), [
        Sample((A((3, 4), 2.0, 5.0), 3), name="p3"),
        Sample((A((3,), 1.0, 4.0), 1), name="p1"),
    ]),
]
