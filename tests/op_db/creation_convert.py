"""OpInfo entries: conversions and copies (creation functions have plain tests)."""
from .common import Arg, OpInfo, Sample

A = Arg

OPS = [
    OpInfo("clone", lambda lib, x: x.clone(), [Sample((A((3, 4)),)), Sample((A((3, 4), noncontig=True),))]),
    OpInfo("contiguous", lambda lib, x: x.contiguous(), [Sample((A((3, 4), transposed=True),))]),
    OpInfo("to_double", lambda lib, x: x.to(lib.float64) * 2, [Sample((A((3, 4)),))]),
    OpInfo("float_half", lambda lib, x: x.half().float(), [Sample((A((3, 4)),))], dtypes=("float32",),
           gradcheck=False),
]
