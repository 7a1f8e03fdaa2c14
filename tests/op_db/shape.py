"""OpInfo entries: shape ops that copy (cat, stack, flip, roll, repeat, tile, tril, triu)."""
from .common import Arg, OpInfo, Sample

A = Arg
INT = dict(low=-5, high=5, dtype="int64")


def _list_op(name):
    """``lib.<name>([tensors...], dim)``: a sample lists the tensors, then optionally dim."""
    def fn(lib, *args):
        if args and not isinstance(args[-1], lib.Tensor):
            return getattr(lib, name)(list(args[:-1]), args[-1])
        return getattr(lib, name)(list(args))
    return fn


OPS = [
    OpInfo("cat", _list_op("cat"), [
        Sample((A((2, 3)), A((4, 3)))), Sample((A((2, 3)), A((2, 1)), A((2, 2), noncontig=True), 1), name="dim1"),
        Sample((A((2, 3)), A((2, 2), transposed=True), -1), name="negdim"),
        Sample((A((2, 3)), A((0,)), A((1, 3))), name="legacy_empty"),
        Sample((A((0,)), A((0,))), name="all_empty"), Sample((A((0, 3)), A((2, 3))), name="empty_rows")],
        dtypes=("float32", "float64", "int64", "bool")),
    OpInfo("concat", lambda lib, x, y: lib.concat((x, y), dim=1), [Sample((A((2, 2)), A((2, 3))))]),
    OpInfo("concatenate", lambda lib, x, y: lib.concatenate([x, y]), [Sample((A((2,)), A((3,))))]),
    OpInfo("cat_promote", lambda lib, x, y: lib.cat([x, y.double()]), [Sample((A((2, 2)), A((1, 2))))],
           dtypes=("float32",)),
    OpInfo("cat_promote_int", lambda lib, x, i: lib.cat([x, i]), [Sample((A((2, 2)), A((1, 2), **INT)))]),
    OpInfo("stack", _list_op("stack"), [
        Sample((A((2, 3)), A((2, 3)))), Sample((A((2, 3)), A((2, 3), noncontig=True), -1), name="last"),
        Sample((A(()), A(()), A(())), name="0d"), Sample((A((0, 2)), A((0, 2)), 1), name="empty")],
        dtypes=("float32", "float64", "int64")),
    OpInfo("hstack", lambda lib, *ts: lib.hstack(ts), [
        Sample((A((2, 3)), A((2, 1)))), Sample((A((2,)), A((3,))), name="1d"), Sample((A(()), A((2,))), name="0d")]),
    OpInfo("vstack", lambda lib, *ts: lib.vstack(ts), [
        Sample((A((2, 3)), A((1, 3)))), Sample((A((3,)), A((3,))), name="1d"), Sample((A(()), A(())), name="0d")]),
    OpInfo("flip", lambda lib, x, d: lib.flip(x, d), [
        Sample((A((2, 3, 4)), (0, 2))), Sample((A((3, 4), noncontig=True), (-1,)), name="noncontig"),
        Sample((A(()), ()), name="0d"), Sample((A((0, 3)), (0,)), name="empty")],
        dtypes=("float32", "float64", "int64", "bool")),
    OpInfo("flip_method", lambda lib, x: x.flip(1, 0), [Sample((A((2, 3)),))]),
    OpInfo("fliplr", lambda lib, x: lib.fliplr(x), [Sample((A((2, 3, 2)),))]),
    OpInfo("flipud", lambda lib, x: lib.flipud(x), [Sample((A((3,)),)), Sample((A((3, 2), transposed=True),), name="t")]),
    OpInfo("roll", lambda lib, x, *a: lib.roll(x, *a), [
        Sample((A((3, 4)), 1, 0)), Sample((A((3, 4)), (1, -5), (0, 1)), name="tuple"),
        Sample((A((3, 4), transposed=True), 5), name="flat"), Sample((A((3, 4)), 2, -1), name="negdim"),
        Sample((A(()), 1), name="0d")], dtypes=("float32", "float64", "int64")),
    OpInfo("repeat", lambda lib, x, *r: x.repeat(*r), [
        Sample((A((2, 3)), 2, 1)), Sample((A((2,)), 3, 1, 2), name="new_dims"),
        Sample((A((2, 2), noncontig=True), (1, 3)), name="tuple"), Sample((A(()), 2), name="0d"),
        Sample((A((2, 3)), 0, 1), name="zero")], dtypes=("float32", "float64", "int64")),
    OpInfo("tile", lambda lib, x, r: lib.tile(x, r), [
        Sample((A((2, 3)), (2,))), Sample((A((2,)), (2, 2)), name="more"), Sample((A((2, 2, 2)), (1, 2, 1)), name="same")]),
    OpInfo("tril", lambda lib, x, *a: lib.tril(x, *a), [
        Sample((A((4, 4)),)), Sample((A((3, 5)), 1), name="above"), Sample((A((2, 3, 4)), -1), name="batch"),
        Sample((A((3, 4), transposed=True),), name="t")], dtypes=("float32", "float64", "int64", "bool")),
    OpInfo("triu", lambda lib, x, *a: lib.triu(x, *a), [
        Sample((A((4, 4)),)), Sample((A((3, 5)), 2), name="above"), Sample((A((2, 3, 4)), -1), name="batch")],
        dtypes=("float32", "float64", "int64")),
    OpInfo("triu_kw", lambda lib, x: x.triu(diagonal=-1), [Sample((A((3, 3)),))]),
    OpInfo("tril_", lambda lib, x: (x * 1).tril_(1), [Sample((A((3, 4)),))]),
    OpInfo("triu_", lambda lib, x: (x * 1).triu_(-1), [Sample((A((2, 3, 3)),))]),
]
