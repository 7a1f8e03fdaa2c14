"""OpInfo entries: comparisons, logical and bitwise ops (forward only)."""
from .common import Arg, OpInfo, Sample

A = Arg

_ALL = ("float32", "float64", "int64", "int32", "uint8", "bool")
_INT = ("int64", "int32", "int16", "int8", "uint8", "bool")


def _pair_samples(low=-3, high=3):
    return [
        Sample((A((3, 4), low, high, integer=True), A((3, 4), low, high, integer=True)), name="same"),
        Sample((A((2, 3, 4), low, high, integer=True), A((4,), low, high, integer=True)), name="bcast"),
        Sample((A((), low, high, integer=True), A((2, 3), low, high, integer=True)), name="zerodim"),
        Sample((A((3, 4), low, high, integer=True, noncontig=True),
                A((3, 4), low, high, integer=True, transposed=True)), name="noncontig"),
        Sample((A((0, 3)), A((3,))), name="empty"),
    ]


def _scalar_samples():
    return [Sample((A((3, 4), -3, 3, integer=True), 1), name="int"),
            Sample((A((3, 4), -3, 3, integer=True), 0.5), name="float"),
            Sample((A((3, 4), -3, 3, integer=True), True), name="bool")]


def _fn(name):
    return lambda lib, *a, **k: getattr(lib, name)(*a, **k)


OPS = []
for _name in ("eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal",
              "not_equal"):
    OPS.append(OpInfo(_name, _fn(_name), _pair_samples() + _scalar_samples(), dtypes=_ALL, grad=False))

OPS += [
    OpInfo("compare_mixed", lambda lib, a, b: (a == b, a < b, a >= b),
           [Sample((A((3, 4), -3, 3, integer=True), A((4,), -3, 3, dtype="float64", integer=True)))],
           dtypes=("int64", "uint8", "bool", "float32"), grad=False),
    OpInfo("compare_operators", lambda lib, a, b: (a == b, a != b, a < b, a <= b, a > b, a >= b,
                                                   a == 1, 1 < a, 0.5 >= a),
           _pair_samples()[:4], dtypes=_ALL, grad=False),
    OpInfo("compare_nan", lambda lib, a, b: (a == b, a != b, a < b, a >= b), [
        Sample((A((3,), values=[float("nan"), 1.0, float("inf")]),
                A((3,), values=[float("nan"), float("nan"), float("inf")])))], grad=False),
    OpInfo("uint8_wraps_numbers", lambda lib, a: (a > -1, a == 257, a < 300),
           [Sample((A((5,), 0, 5),))], dtypes=("uint8",), grad=False),
    OpInfo("equal", _fn("equal"), [
        Sample((A((3, 4), values=[[1, 2, 3, 4]] * 3), A((3, 4), values=[[1, 2, 3, 4]] * 3)), name="equal"),
        Sample((A((3, 4), values=[[1, 2, 3, 4]] * 3), A((3, 4), values=[[1, 2, 3, 5]] * 3)), name="differ"),
        Sample((A((3, 4)), A((4,))), name="shape"),
        Sample((A((2,), values=[1, 2]), A((2,), values=[1.0, 2.0], dtype="float64")), name="dtypes"),
        Sample((A((1,), values=[float("nan")]), A((1,), values=[float("nan")])), name="nan"),
    ], dtypes=("float32", "int64"), grad=False),
    OpInfo("isclose", lambda lib, a, b, **k: lib.isclose(a, b, **k), [
        Sample((A((3, 4)), A((3, 4))), name="far"),
        Sample((A((5,), values=[1.0, 1e-9, float("inf"), float("nan"), -float("inf")]),
                A((5,), values=[1.0 + 1e-6, 0.0, float("inf"), float("nan"), float("inf")])), name="special"),
        Sample((A((5,), values=[1.0, 1e-9, float("inf"), float("nan"), -float("inf")]),
                A((5,), values=[1.0 + 1e-6, 0.0, float("inf"), float("nan"), float("inf")])),
               {"equal_nan": True, "rtol": 0.0, "atol": 1e-8}, name="equal_nan"),
        Sample((A((2, 3)), A((3,))), {"atol": 2.0}, name="bcast"),
    ], dtypes=("float32", "float64"), grad=False),
    OpInfo("isclose_int", lambda lib, a, b, **k: lib.isclose(a, b, **k), [
        Sample((A((3, 4), -3, 3), A((3, 4), -3, 3)), {"atol": 1}, name="int")],
        dtypes=("int64",), grad=False),
    OpInfo("allclose", lambda lib, a, b, **k: lib.allclose(a, b, **k), [
        Sample((A((3,), values=[1.0, 2.0, 3.0]), A((3,), values=[1.0, 2.0, 3.0 + 1e-7])), name="close"),
        Sample((A((3,), values=[1.0, 2.0, 3.0]), A((3,), values=[1.0, 2.1, 3.0])), name="far"),
        Sample((A((3,), values=[1.0, 2.0, 3.0]), A((3,), values=[1.0, 2.1, 3.0])), {"atol": 0.2},
               name="atol"),
    ], dtypes=("float64",), grad=False),
]

for _name in ("logical_and", "logical_or", "logical_xor"):
    OPS.append(OpInfo(_name, _fn(_name), _pair_samples(-1, 2) + [
        Sample((A((3, 4), -1, 2, integer=True), A((4,), -1, 2, dtype="float32", integer=True)),
               name="mixed")], dtypes=_ALL, grad=False))
OPS.append(OpInfo("logical_not", _fn("logical_not"), [
    Sample((A((3, 4), -1, 2, integer=True),)), Sample((A((3, 4), -1, 2, integer=True, noncontig=True),),
                                                      name="noncontig")], dtypes=_ALL, grad=False))

for _name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
    OPS.append(OpInfo(_name, _fn(_name), _pair_samples(0, 16) + [
        Sample((A((3, 4), 0, 16), 5), name="scalar"),
        Sample((5, A((3, 4), 0, 16)), name="scalar_first"),
        Sample((A((3, 4), 0, 16), True), name="bool_scalar")], dtypes=_INT, grad=False))
OPS += [
    OpInfo("bitwise_not", _fn("bitwise_not"), [Sample((A((3, 4), -8, 8),)),
                                               Sample((A((3, 4), -8, 8, noncontig=True),), name="noncontig")],
           dtypes=_INT, grad=False),
    OpInfo("bitwise_operators", lambda lib, a, b: (a & b, a | b, a ^ b, ~a, 3 & a, 6 | a, 5 ^ a),
           _pair_samples(0, 8)[:4], dtypes=_INT, grad=False),
    OpInfo("shifts", lambda lib, a, b: (lib.bitwise_left_shift(a, b), lib.bitwise_right_shift(a, b),
                                        a << 2, a >> 1, 1 << b, 64 >> b), [
        Sample((A((3, 4), -8, 8), A((3, 4), 0, 4)), name="small"),
        Sample((A((3, 4), -8, 8), A((4,), 0, 70)), name="past_width"),
        Sample((A((3, 4), -8, 8), A((4,), -3, 0)), name="negative_shift"),
    ], dtypes=("int64", "int32", "int16", "int8", "uint8"), grad=False),
]
