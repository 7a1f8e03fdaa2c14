"""OpInfo entries: shape and composition ops (cat, stack and friends, splits, flip, roll, rot90,
repeat, tile, repeat_interleave, tril, triu, broadcasting, meshgrid, cartesian_prod,
combinations, atleast_nd, diag, diag_embed, trace, the scatters into a copy, block_diag, kron,
cross, as_strided, ravel)."""
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
    OpInfo("tensor_split", lambda lib, x, *a: lib.tensor_split(x, *a), [
        Sample((A((7, 2)), 3)), Sample((A((2, 5)), 2, 1), name="sections_dim1"),
        Sample((A((6, 2)), [1, 4]), name="indices"), Sample((A((6,)), (2, 2, 8)), name="indices_past"),
        Sample((A((6, 2)), [-2]), name="negative"), Sample((A((3, 4), transposed=True), 5, -1), name="more_than_size"),
        Sample((A((6,)), A((2,), values=[1, 3], dtype="int64")), name="tensor_indices"),
        Sample((A((6,)), A((), values=3, dtype="int64")), name="tensor_sections")],
        dtypes=("float32", "float64", "int64")),
    OpInfo("tensor_split_method", lambda lib, x: x.tensor_split([1], dim=1), [Sample((A((2, 3)),))]),
    OpInfo("hsplit", lambda lib, x, s: lib.hsplit(x, s), [
        Sample((A((2, 6)), 3)), Sample((A((6,)), [2, 3]), name="1d"), Sample((A((2, 4, 2)), 2), name="3d")]),
    OpInfo("vsplit", lambda lib, x, s: lib.vsplit(x, s), [Sample((A((4, 2)), 2)), Sample((A((4, 3)), [1]), name="idx")]),
    OpInfo("dsplit", lambda lib, x, s: lib.dsplit(x, s), [Sample((A((2, 2, 4)), 2)), Sample((A((1, 2, 3)), [1, 2]), name="idx")]),
    OpInfo("dstack", lambda lib, *ts: lib.dstack(ts), [
        Sample((A((2, 3)), A((2, 3)))), Sample((A((3,)), A((3,))), name="1d"), Sample((A(()), A(())), name="0d"),
        Sample((A((2, 2, 1)), A((2, 2, 2))), name="3d")]),
    OpInfo("column_stack", lambda lib, *ts: lib.column_stack(ts), [
        Sample((A((3,)), A((3, 2)))), Sample((A((3,)), A((3,))), name="1d"), Sample((A(()), A(())), name="0d")]),
    OpInfo("row_stack", lambda lib, *ts: lib.row_stack(ts), [Sample((A((3,)), A((2, 3))))]),
    OpInfo("rot90", lambda lib, x, *a: lib.rot90(x, *a), [
        Sample((A((2, 3)),)), Sample((A((2, 3)), 2), name="k2"), Sample((A((2, 3)), -1), name="k-1"),
        Sample((A((2, 3, 2)), 3, [2, 0]), name="dims"), Sample((A((2, 3)), 0), name="k0"),
        Sample((A((3, 4), noncontig=True), 5, (1, 0)), name="noncontig")], dtypes=("float32", "float64", "int64")),
    OpInfo("repeat_interleave", lambda lib, x, *a, **k: lib.repeat_interleave(x, *a, **k), [
        Sample((A((2, 3)), 2)), Sample((A((2, 3)), 2, 0), name="dim0"),
        Sample((A((3, 2)), A((3,), values=[1, 0, 2], dtype="int64"), 0), name="tensor_repeats"),
        Sample((A((2, 3), transposed=True), A((3,), values=[2, 1, 3], dtype="int64"), -1), {"output_size": 6}, name="output_size"),
        Sample((A((2, 2)), A((1,), values=[2], dtype="int64")), name="one_repeat"), Sample((A(()), 3), name="0d")],
        dtypes=("float32", "float64", "int64")),
    OpInfo("repeat_interleave_counts", lambda lib, r: lib.repeat_interleave(r), [
        Sample((A((4,), values=[1, 0, 3, 2], dtype="int64"),))], grad=False),
    OpInfo("repeat_interleave_method", lambda lib, x: x.repeat_interleave(2, dim=1), [Sample((A((2, 2)),))]),
    OpInfo("broadcast_to", lambda lib, x, s: lib.broadcast_to(x, s), [
        Sample((A((3,)), (2, 3))), Sample((A((2, 1)), (2, -1, 4)), name="neg"), Sample((A(()), (2, 2)), name="0d")]),
    OpInfo("broadcast_tensors", lambda lib, *ts: lib.broadcast_tensors(*ts), [
        Sample((A((3,)), A((2, 1)))), Sample((A((2, 3)), A(()), A((1, 3))), name="three"),
        Sample((A((2, 2)), A((2, 2))), name="same")], dtypes=("float32", "float64", "int64")),
    OpInfo("meshgrid_ij", lambda lib, *ts: lib.meshgrid(*ts, indexing="ij"), [
        Sample((A((2,)), A((3,)))), Sample((A((2,)), A(()), A((3,))), name="three"), Sample((A((3,)),), name="one")]),
    OpInfo("meshgrid_xy", lambda lib, *ts: lib.meshgrid(ts, indexing="xy"), [
        Sample((A((2,)), A((3,)))), Sample((A((2,)), A((4,)), A((3,))), name="three")],
        dtypes=("float32", "float64", "int64")),
    OpInfo("cartesian_prod", lambda lib, *ts: lib.cartesian_prod(*ts), [
        Sample((A((2,)), A((3,)))), Sample((A((2,)), A((1,)), A((2,))), name="three"), Sample((A((3,)),), name="one")],
        dtypes=("float32", "float64", "int64")),
    OpInfo("combinations", lambda lib, x, *a, **k: lib.combinations(x, *a, **k), [
        Sample((A((4,)),)), Sample((A((4,)), 3), name="r3"), Sample((A((3,)),), {"with_replacement": True}, name="repl"),
        Sample((A((2,)), 3), name="r_gt_n"), Sample((A((3,)), 1), name="r1")], dtypes=("float32", "float64", "int64")),
    OpInfo("atleast_1d", lambda lib, *ts: lib.atleast_1d(*ts), [
        Sample((A(()),)), Sample((A((2, 3)),), name="2d"), Sample((A(()), A((2,), requires_grad=False)), name="many")]),
    OpInfo("atleast_2d", lambda lib, *ts: lib.atleast_2d(*ts), [
        Sample((A(()),)), Sample((A((3,)),), name="1d"), Sample((A((3,)), A((2, 2, 2), requires_grad=False)), name="many")]),
    OpInfo("atleast_3d", lambda lib, *ts: lib.atleast_3d(ts), [
        Sample((A(()),)), Sample((A((3,)),), name="1d"), Sample((A((2, 3)), A((1, 2, 3, 1), requires_grad=False)), name="many")]),
    OpInfo("diag", lambda lib, x, *a: lib.diag(x, *a), [
        Sample((A((3,)),)), Sample((A((3,)), 1), name="1d_above"), Sample((A((2,)), -2), name="1d_below"),
        Sample((A((3, 4)),), name="2d"), Sample((A((3, 4)), 1), name="2d_above"),
        Sample((A((4, 3), transposed=True), -1), name="2d_t"), Sample((A((2, 2)), 5), name="2d_far")],
        dtypes=("float32", "float64", "int64", "bool")),
    OpInfo("diag_embed", lambda lib, x, *a: lib.diag_embed(x, *a), [
        Sample((A((2, 3)),)), Sample((A((2, 3)), 1, 0, 2), name="dims"), Sample((A((3,)), -1, -1, 0), name="neg"),
        Sample((A((2, 2), noncontig=True), 0, 1, 2), name="noncontig")], dtypes=("float32", "float64", "int64")),
    OpInfo("trace", lambda lib, x: lib.trace(x), [
        Sample((A((3, 3)),)), Sample((A((2, 4)),), name="wide"), Sample((A((4, 2), transposed=True),), name="t"),
        Sample((A((0, 2)),), name="empty")], dtypes=("float32", "float64", "int64")),
    OpInfo("trace_method", lambda lib, x: x.trace(), [Sample((A((3, 2)),))]),
    OpInfo("diagonal_scatter", lambda lib, x, s, *a: lib.diagonal_scatter(x, s, *a), [
        Sample((A((3, 3)), A((3,)))), Sample((A((3, 4)), A((3,)), 1), name="offset"),
        Sample((A((2, 3, 2)), A((3, 2)), 0, 0, 2), name="dims"), Sample((A((3, 3), transposed=True), A((2,)), -1), name="t")],
        dtypes=("float32", "float64", "int64")),
    OpInfo("select_scatter", lambda lib, x, s, *a: lib.select_scatter(x, s, *a), [
        Sample((A((3, 4)), A((4,)), 0, 1)), Sample((A((3, 4)), A((3,)), 1, -1), name="neg"),
        Sample((A((2, 3), noncontig=True), A((2,)), -1, 0), name="noncontig")], dtypes=("float32", "float64", "int64")),
    OpInfo("slice_scatter", lambda lib, x, s, *a, **k: lib.slice_scatter(x, s, *a, **k), [
        Sample((A((4, 3)), A((2, 3)), 0, 0, 2)), Sample((A((3, 5)), A((3, 2)), 1, 1, 5, 2), name="step"),
        Sample((A((4, 3)), A((1, 3))), {"start": -1}, name="neg"),
        Sample((A((3, 4)), A((3, 0)), 1, 2, 2), name="empty")], dtypes=("float32", "float64", "int64")),
    OpInfo("block_diag", lambda lib, *ts: lib.block_diag(*ts), [
        Sample((A((2, 2)), A((1, 3)))), Sample((A(()), A((2,)), A((2, 1))), name="mixed"),
        Sample((A((2, 0)), A((1, 2))), name="empty_cols")], dtypes=("float32", "float64", "int64")),
    OpInfo("block_diag_promote", lambda lib, x, i: lib.block_diag(x, i), [Sample((A((2, 2)), A((1, 2), **INT)))]),
    OpInfo("kron", lambda lib, x, y: lib.kron(x, y), [
        Sample((A((2, 3)), A((2, 2)))), Sample((A((3,)), A((2, 2))), name="ranks"), Sample((A(()), A((2,))), name="0d"),
        Sample((A((2, 2), noncontig=True), A((2, 1, 2))), name="noncontig")], dtypes=("float32", "float64", "int64")),
    OpInfo("cross", lambda lib, x, y, **k: lib.cross(x, y, **k), [
        Sample((A((2, 3)), A((2, 3))), {"dim": 1}), Sample((A((3, 2)), A((3, 1))), {"dim": 0}, name="broadcast"),
        Sample((A((3, 4), transposed=True), A((3, 4))), {"dim": -2}, name="t")], dtypes=("float32", "float64", "int64")),
    OpInfo("cross_method", lambda lib, x, y: x.cross(y, dim=-1), [Sample((A((2, 3)), A((1, 3))))]),
    OpInfo("as_strided", lambda lib, x, *a: lib.as_strided(x, *a), [
        Sample((A((3, 4)), (2, 2), (1, 2))), Sample((A((3, 4)), (3, 3), (1, 1), 2), name="overlap_offset"),
        Sample((A((6,)), (2, 3), (0, 1)), name="stride0"), Sample((A((2, 3)), (), (), 5), name="0d"),
        Sample((A((4, 3), transposed=True), (2, 2), (3, 1)), name="t")], dtypes=("float32", "float64", "int64")),
    OpInfo("as_strided_of_view", lambda lib, x: x[1:].as_strided((2, 2), (1, 1)), [Sample((A((6,)),))]),
    OpInfo("ravel", lambda lib, x: lib.ravel(x), [
        Sample((A((2, 3)),)), Sample((A((2, 3), transposed=True),), name="t"), Sample((A(()),), name="0d")],
        dtypes=("float32", "float64", "int64")),
    OpInfo("squeeze_tuple", lambda lib, x: x.squeeze((0, 2)), [Sample((A((1, 3, 1, 2)),))]),
]
