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
    _unary("lgamma", 0.1, 5), _unary("digamma", 0.1, 5, gradgrad=False),
    _unary("abs", avoid=0.0), _unary("sign"),
    _unary("floor", avoid=[-2, -1, 0, 1, 2]), _unary("ceil", avoid=[-2, -1, 0, 1, 2]),
    _unary("trunc", avoid=[-2, -1, 0, 1, 2]), _unary("frac", avoid=[-2, -1, 0, 1, 2]),
]
