"""OpInfo entries: views."""
from .common import Arg, OpInfo, Sample

A = Arg

OPS = [
    OpInfo("view", lambda lib, x, s: x.view(s), [Sample((A((3, 4)), (4, 3))), Sample((A((2, 3, 4)), (-1, 4)))]),
    OpInfo("reshape", lambda lib, x, s: lib.reshape(x, s), [
        Sample((A((3, 4)), (2, 6))), Sample((A((3, 4), noncontig=True), (12,)), name="copy"),
        Sample((A((3, 4), transposed=True), (-1,)), name="transposed")]),
    OpInfo("expand", lambda lib, x, s: x.expand(*s), [
        Sample((A((3, 1)), (3, 4))), Sample((A((3,)), (2, 3))), Sample((A((1, 3)), (2, -1, 3)))]),
    OpInfo("permute", lambda lib, x, d: x.permute(*d), [Sample((A((2, 3, 4)), (2, 0, 1)))]),
    OpInfo("transpose", lambda lib, x, a, b: lib.transpose(x, a, b), [Sample((A((2, 3, 4)), 0, -1))]),
    OpInfo("t", lambda lib, x: lib.t(x), [Sample((A((3, 4)),)), Sample((A((3,)),), name="1d")]),
    OpInfo("T_mT", lambda lib, x: x.T + x.mT, [Sample((A((3, 3)),))]),
    OpInfo("squeeze", lambda lib, x, *d: lib.squeeze(x, *d), [
        Sample((A((3, 1, 4, 1)),)), Sample((A((3, 1, 4)), 1), name="dim"),
        Sample((A((3, 1, 4, 1)), (1, 3)), name="tuple")]),
    OpInfo("unsqueeze", lambda lib, x, d: lib.unsqueeze(x, d), [Sample((A((3, 4)), 1)), Sample((A((3, 4)), -1), name="neg")]),
    OpInfo("flatten", lambda lib, x, *a: lib.flatten(x, *a), [Sample((A((2, 3, 4)),)), Sample((A((2, 3, 4)), 1), name="start")]),
    OpInfo("getitem", lambda lib, x, k: x[k], [
        Sample((A((4, 5)), (slice(1, None, 2), -1)), name="slice_int"),
        Sample((A((4, 5)), (None, Ellipsis, slice(None, None, 3))), name="none_ellipsis"),
        Sample((A((4, 5)), 2), name="int"),
        Sample((A((4, 5, 2)), (slice(-3, None), slice(None, -1), 0)), name="negative")]),
]
