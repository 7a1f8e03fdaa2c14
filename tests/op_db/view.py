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


def _setitem(key):
    def fn(lib, x, v):
        y = x.clone()
        y[key] = v
        return y
    return fn


def _setitem_scalar(key, value):
    def fn(lib, x):
        y = x * 1
        y[key] = value
        return y
    return fn


def _index_key(lib, key):
    """A key with ``("t", values)`` / ``("mask", values)`` items made tensors of ``lib``."""
    def conv(k):
        if isinstance(k, tuple) and k and k[0] == "t":
            return lib.tensor(k[1], dtype=lib.int64)
        if isinstance(k, tuple) and k and k[0] == "mask":
            return lib.tensor(k[1], dtype=lib.bool)
        return k
    return tuple(conv(k) for k in key) if isinstance(key, tuple) and not (key and key[0] in ("t", "mask")) \
        else conv(key)


def _adv(key):
    return lambda lib, x: x[_index_key(lib, key)]


_MASK = [[True, False, True, False, True], [False, False, True, True, False], [True, True, False, False, False],
         [False, True, False, True, True]]

OPS += [
    OpInfo("narrow", lambda lib, x, *a: lib.narrow(x, *a), [
        Sample((A((4, 5)), 0, 1, 2)), Sample((A((4, 5)), -1, -3, 2), name="neg"),
        Sample((A((4, 5), noncontig=True), 1, 0, 0), name="empty")]),
    OpInfo("select", lambda lib, x, *a: lib.select(x, *a), [
        Sample((A((4, 5)), 0, 1)), Sample((A((2, 3, 4), transposed=True), -1, -2), name="neg")]),
    OpInfo("unbind", lambda lib, x, *a: lib.unbind(x, *a), [
        Sample((A((3, 4)),)), Sample((A((2, 3, 4), noncontig=True), 1), name="dim")]),
    OpInfo("unbind_some", lambda lib, x: x.unbind(1)[2] * 2, [Sample((A((3, 4)),))]),
    OpInfo("chunk", lambda lib, x, *a: lib.chunk(x, *a), [
        Sample((A((5, 4)), 2)), Sample((A((3, 5)), 3, 1), name="uneven"), Sample((A((0, 3)), 2), name="empty")]),
    OpInfo("split", lambda lib, x, *a: lib.split(x, *a), [
        Sample((A((5, 4)), 2)), Sample((A((3, 5)), [1, 0, 4], 1), name="sizes"),
        Sample((A((3, 5), transposed=True), 3, -1), name="transposed")]),
    OpInfo("split_some", lambda lib, x: x.split([1, 2, 2], 1)[1].exp(), [Sample((A((3, 5)),))]),
    OpInfo("chunk_some", lambda lib, x: lib.chunk(x, 3)[0] + lib.chunk(x, 3)[2].sum(), [Sample((A((3, 2)),))]),
    OpInfo("diagonal", lambda lib, x, *a: lib.diagonal(x, *a), [
        Sample((A((4, 4)),)), Sample((A((3, 5)), 1), name="above"), Sample((A((3, 5)), -2), name="below"),
        Sample((A((2, 3, 4)), 1, 0, 2), name="dims"), Sample((A((2, 3, 4), noncontig=True), 0, -1, 1), name="noncontig"),
        Sample((A((3, 4)), 5), name="empty")]),
    OpInfo("movedim", lambda lib, x, s, d: lib.movedim(x, s, d), [
        Sample((A((2, 3, 4)), 0, -1)), Sample((A((2, 3, 4)), (0, 1), (2, 0)), name="seq")]),
    OpInfo("moveaxis", lambda lib, x, s, d: x.moveaxis(s, d), [Sample((A((2, 3, 4)), [2], [0]))]),
    OpInfo("unflatten", lambda lib, x, d, s: x.unflatten(d, s), [
        Sample((A((2, 6)), 1, (2, 3))), Sample((A((6, 2), transposed=True), 0, (-1, 2)), name="infer")]),
    OpInfo("unfold", lambda lib, x, *a: x.unfold(*a), [
        Sample((A((3, 6)), 1, 2, 1)), Sample((A((7, 2)), 0, 3, 2), name="step"),
        Sample((A((2, 5), noncontig=True), -1, 2, 3), name="noncontig"), Sample((A(()), 0, 1, 1), name="0d"),
        Sample((A((4,)), 0, 2, 1), name="overlap")]),
    OpInfo("getitem_step", lambda lib, x: x[1::2, ::3, -1], [Sample((A((5, 7, 2)),))]),
    OpInfo("index_list", _adv([0, 2, 0]), [Sample((A((3, 4)),)), Sample((A((3, 4), transposed=True),), name="t")]),
    OpInfo("index_tensor", _adv((slice(None), ("t", [[0, 1], [3, 3]]))), [Sample((A((2, 4)),))]),
    OpInfo("index_neg", _adv(("t", [-1, 0, -3]),), [Sample((A((3, 2)),))]),
    OpInfo("index_two", _adv((("t", [0, 2, 2]), slice(1, None), ("t", [1, 0, 1]))), [Sample((A((3, 3, 2)),))]),
    OpInfo("index_apart", _adv((("t", [0, 1]), slice(None), ("t", [1, 0]))), [Sample((A((2, 3, 2)),))]),
    OpInfo("index_none_ellipsis", _adv((None, Ellipsis, ("t", [[1], [0]]))), [Sample((A((2, 3)),))]),
    OpInfo("index_mask", _adv(("mask", _MASK)), [Sample((A((4, 5)),)), Sample((A((4, 5), noncontig=True),), name="nc")]),
    OpInfo("index_mask_row", _adv((slice(None), ("mask", [True, False, True]), 1)), [Sample((A((2, 3, 2)),))]),
    OpInfo("index_empty", _adv(("t", [[]]),), [Sample((A((2, 3)),))]),
    OpInfo("index_int_dtype", lambda lib, x, i: x[i], [
        Sample((A((4, 3)), A((5,), 0, 4, dtype="int64")), name="int64"),
        Sample((A((4, 3)), A((2, 2), 0, 3, dtype="int32")), name="int32")], dtypes=("float32", "float64", "int64")),
    OpInfo("setitem_basic", _setitem((slice(1, None), 0)), [
        Sample((A((3, 4)), A((2,)))), Sample((A((3, 4)), A((1,))), name="broadcast"),
        Sample((A((3, 4), transposed=True), A(())), name="0d")]),
    OpInfo("setitem_advanced", _setitem(([2, 0],)), [
        Sample((A((3, 4)), A((2, 4)))), Sample((A((3, 4)), A((4,))), name="broadcast")]),
    OpInfo("setitem_advanced_repeated", _setitem(([0, 2, 0],)), [
        Sample((A((3, 4)), A((3, 4)))), Sample((A((3, 4)), A((4,))), name="broadcast")],
           cuda_undefined="an index repeated: which write lands is undefined on CUDA, in torch as in CuPy"),
    OpInfo("setitem_mask", lambda lib, x, v: _setitem(lib.tensor([True, False, True]))(lib, x, v), [
        Sample((A((3, 2)), A((2,))))]),
    OpInfo("setitem_scalar", _setitem_scalar((Ellipsis, slice(None, None, 2)), 1.5), [Sample((A((3, 4)),))],
           dtypes=("float32", "float64", "int64")),
    OpInfo("fill_", lambda lib, x, v: (x * 1).fill_(v), [
        Sample((A((3, 4)), A(())), name="tensor")]),
    OpInfo("fill_number", lambda lib, x: (x * 1).fill_(2.5), [Sample((A((3, 4)),))], dtypes=("float32", "int64")),
    OpInfo("zero_", lambda lib, x: (x * 1).zero_(), [Sample((A((3, 4), noncontig=True),))]),
    OpInfo("copy_", lambda lib, x, s: (x * 1).copy_(s), [
        Sample((A((3, 4)), A((3, 4)))), Sample((A((3, 4)), A((4,))), name="broadcast"),
        Sample((A((3, 4), transposed=True), A((1, 4), noncontig=True)), name="noncontig")]),
    OpInfo("copy_dtype", lambda lib, x, s: (x * 1).copy_(s.double()), [Sample((A((3, 4)), A((4,))))],
           dtypes=("float32",)),
]
