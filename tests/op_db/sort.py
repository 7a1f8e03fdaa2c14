"""OpInfo entries: sorting, selection and scans (sort, argsort, msort, topk, kthvalue, median,
nanmedian, mode, quantile, nanquantile, unique, unique_consecutive, bincount, histc,
searchsorted, bucketize, cummax, cummin, logcumsumexp, diff, aminmax).

Differentiable samples hold distinct values (random floats), so the element each output
selects is the same in both libraries; ties are only used where torch defines the choice
(stable sort, mode, median over all elements, aminmax, cummax)."""
import math

from .common import Arg, OpInfo, Sample

A = Arg
INT = dict(low=-3, high=4, dtype="int64")
NAN = math.nan
TIES = [[1.0, 3.0, 3.0, 2.0, 1.0, 5.0], [2.0, 2.0, 7.0, 7.0, 0.0, 1.0]]
WITH_NAN = [[1.0, NAN, 3.0, NAN, 0.0], [2.0, 0.5, -1.0, 4.0, 3.0]]
FLOAT_INT = ("float32", "float64", "int64")


def _method(name):
    return lambda lib, x, *a, **k: getattr(x, name)(*a, **k)


def _fn(name):
    return lambda lib, *a, **k: getattr(lib, name)(*a, **k)


OPS = [
    OpInfo("sort", _fn("sort"), [
        Sample((A((3, 4)),)), Sample((A((3, 4)), 0), name="dim0"),
        Sample((A((3, 4), transposed=True),), {"descending": True}, name="desc_t"),
        Sample((A((2, 5), noncontig=True), -1, True), name="desc_noncontig"),
        Sample((A(()),), name="0d"), Sample((A((0, 3)), 0), name="empty"),
        Sample((A((2, 6), values=TIES, requires_grad=False),), {"stable": True}, name="ties"),
        Sample((A((2, 6), values=TIES, requires_grad=False),), {"stable": True, "descending": True},
               name="ties_desc"),
        Sample((A((2, 5), values=WITH_NAN, requires_grad=False), 1, True), name="nan_desc"),
        Sample((A((2, 5), values=WITH_NAN, requires_grad=False),), name="nan")]),
    OpInfo("sort_int", lambda lib, x: x.sort(stable=True, dim=0), [
        Sample((A((4, 3), **INT),)), Sample((A((5,), dtype="bool"),), name="bool")], grad=False),
    OpInfo("sort_method", _method("sort"), [Sample((A((3, 4)),), {"dim": 0, "descending": True})]),
    OpInfo("argsort", _fn("argsort"), [
        Sample((A((3, 4)),)), Sample((A((3, 4)), 0, True), name="desc"),
        Sample((A((2, 6), values=TIES),), {"stable": True}, name="ties")], grad=False),
    OpInfo("msort", _fn("msort"), [Sample((A((4, 3)),)), Sample((A((4,), transposed=False),), name="1d")]),
    OpInfo("topk", _fn("topk"), [
        Sample((A((3, 5)), 2)), Sample((A((3, 5)), 2, 0, False), name="smallest_dim0"),
        Sample((A((4, 3), transposed=True), 3), name="t"), Sample((A((3, 4)), 0), name="k0"),
        Sample((A(()), 1), name="0d"), Sample((A((5,)), 5), {"largest": False}, name="all")]),
    OpInfo("topk_int", _fn("topk"), [
        Sample((A((2, 4), values=[[3, -1, 7, 0], [2, 5, -4, 1]], dtype="int64"), 2, 1, False),)],
        grad=False),
    OpInfo("topk_method", _method("topk"), [Sample((A((2, 6)), 3), {"dim": 1, "largest": True})]),
    OpInfo("kthvalue", _fn("kthvalue"), [
        Sample((A((3, 5)), 2)), Sample((A((4, 3)), 4, 0, True), name="dim0_keepdim"),
        Sample((A((3, 4), noncontig=True), 1), name="noncontig"), Sample((A(()), 1), name="0d"),
        Sample((A((2, 5), values=WITH_NAN, requires_grad=False), 5), name="nan")]),
    OpInfo("median", _fn("median"), [
        Sample((A((3, 5)),)), Sample((A((4,)),), name="even"), Sample((A(()),), name="0d"),
        Sample((A((2, 5), values=WITH_NAN, requires_grad=False),), name="nan_all")]),
    OpInfo("median_dim", lambda lib, x, *a, **k: lib.median(x, *a, **k), [
        Sample((A((3, 5)), 1)), Sample((A((4, 3)), 0, True), name="dim0_keepdim"),
        Sample((A((4, 4), transposed=True), -1), name="t"), Sample((A(()), 0), name="0d"),
        Sample((A((2, 5), values=WITH_NAN, requires_grad=False), 1), name="nan")]),
    OpInfo("nanmedian", _fn("nanmedian"), [
        Sample((A((3, 5)),)), Sample((A((3, 5)), 1), name="dim"),
        Sample((A((2, 5), values=WITH_NAN),), name="nan_all"),
        Sample((A((2, 5), values=WITH_NAN), 1, True), name="nan_dim")]),
    OpInfo("mode", _fn("mode"), [
        Sample((A((2, 6), values=TIES, requires_grad=False),)),
        Sample((A((2, 6), values=TIES, requires_grad=False), 0, True), name="dim0"),
        Sample((A((3, 4), **INT), 1), name="int"), Sample((A((3, 5)),), name="distinct"),
        Sample((A(()),), name="0d")]),
    OpInfo("quantile", _fn("quantile"), [
        Sample((A((3, 5)), 0.3)), Sample((A((3, 5)), 0.25, 1), name="dim"),
        Sample((A((4, 3)), 0.6, 0, True), name="keepdim"),
        Sample((A((2, 3, 2)), 0.5), {"keepdim": True}, name="all_keepdim"),
        Sample((A((3, 4), transposed=True), 1.0, -1), name="t_one"),
        Sample((A(()), 0.5), name="0d"),
        Sample((A((2, 5), values=WITH_NAN, requires_grad=False), 0.5, 1), name="nan")]
        + [Sample((A((3, 5)), 0.4, 1), {"interpolation": m}, name=m)
           for m in ("lower", "higher", "midpoint", "nearest")]),
    OpInfo("quantile_q_tensor", lambda lib, x, q, *a, **k: lib.quantile(x, q.detach(), *a, **k), [
        Sample((A((3, 5)), A((3,), low=0, high=1, requires_grad=False))),
        Sample((A((3, 5)), A((2,), low=0, high=1, requires_grad=False), 1, True), name="dim"),
        Sample((A((4, 3)), A((), low=0, high=1, requires_grad=False), 0), name="0d_q")]),
    OpInfo("nanquantile", _fn("nanquantile"), [
        Sample((A((3, 5)), 0.3)), Sample((A((2, 5), values=WITH_NAN), 0.5, 1), name="nan"),
        Sample((A((2, 5), values=WITH_NAN), 0.7), {"interpolation": "higher"}, name="nan_higher")]),
    OpInfo("unique", _fn("unique"), [
        Sample((A((3, 4), **INT),)), Sample((A((3, 4), **INT),), {"return_inverse": True}, name="inverse"),
        Sample((A((2, 6), values=TIES),), {"return_inverse": True, "return_counts": True}, name="both"),
        Sample((A((4, 2), low=0, high=2, dtype="int64"),), {"dim": 0, "return_inverse": True,
                                                          "return_counts": True}, name="dim"),
        Sample((A((0,), **INT),), {"return_counts": True}, name="empty")], grad=False),
    OpInfo("unique_method", lambda lib, x: x.unique(sorted=True, return_counts=True),
           [Sample((A((6,), **INT),))], grad=False),
    OpInfo("unique_consecutive", _fn("unique_consecutive"), [
        Sample((A((8,), values=[1, 1, 2, 2, 3, 1, 1, 2], dtype="int64"),)),
        Sample((A((8,), values=[1, 1, 2, 2, 3, 1, 1, 2], dtype="int64"),),
               {"return_inverse": True, "return_counts": True}, name="both"),
        Sample((A((4, 2), values=[[1, 2], [1, 2], [0, 1], [1, 2]], dtype="int64"),),
               {"dim": 0, "return_inverse": True, "return_counts": True}, name="dim"),
        Sample((A((2, 6), values=TIES),), {"return_counts": True}, name="float2d")], grad=False),
    OpInfo("bincount", _fn("bincount"), [
        Sample((A((8,), low=0, high=5, dtype="int64"),)),
        Sample((A((8,), low=0, high=5, dtype="int64"),), {"minlength": 7}, name="minlength"),
        Sample((A((8,), low=0, high=5, dtype="int64"), A((8,), requires_grad=False)), name="weights"),
        Sample((A((0,), low=0, high=5, dtype="int64"),), name="empty")], grad=False),
    OpInfo("histc", _fn("histc"), [
        Sample((A((3, 5)),)), Sample((A((10,)),), {"bins": 4, "min": -1, "max": 1}, name="range"),
        Sample((A((6,), values=[0.0, 1.0, 1.0, 2.0, 3.0, 3.0]), 3), name="edges")], grad=False),
    OpInfo("searchsorted", lambda lib, s, v, **k: lib.searchsorted(s.sort().values, v, **k), [
        Sample((A((6,)), A((3, 2)))), Sample((A((6,)), A((4,))), {"right": True}, name="right"),
        Sample((A((2, 5)), A((2, 3))), {"side": "right"}, name="nd"),
        Sample((A((2, 5)), A((2, 3))), name="nd_left"),
        Sample((A((6,)), A((4,))), {"out_int32": True}, name="int32")],
        dtypes=FLOAT_INT, grad=False),
    OpInfo("searchsorted_ties", _fn("searchsorted"), [
        Sample((A((6,), values=[0, 1, 1, 2, 3, 3], dtype="int64"), A((4,), values=[1, 3, -1, 5], dtype="int64"))),
        Sample((A((6,), values=[0, 1, 1, 2, 3, 3], dtype="int64"), A((4,), values=[1, 3, -1, 5], dtype="int64")),
               {"right": True}, name="right"),
        Sample((A((6,), values=[0, 1, 1, 2, 3, 3], dtype="int64"), 1), {"right": True}, name="scalar")],
        grad=False),
    OpInfo("searchsorted_sorter", lambda lib, s, v: lib.searchsorted(s, v, sorter=s.argsort()), [
        Sample((A((6,)), A((3,)))), Sample((A((2, 4)), A((2, 3))), name="nd")], grad=False),
    OpInfo("bucketize", _fn("bucketize"), [
        Sample((A((3, 4)), A((5,), values=[-1.0, -0.5, 0.0, 0.5, 1.0]))),
        Sample((A((3, 4), low=-2, high=3, dtype="int64"), A((3,), values=[-1, 0, 1], dtype="int64")),
               {"right": True}, name="int_right")], grad=False),
    OpInfo("cummax", _fn("cummax"), [
        Sample((A((3, 5)), 1)), Sample((A((4, 3), transposed=True), 0), name="t"),
        Sample((A(()), 0), name="0d"),
        Sample((A((0, 3), requires_grad=False), 0), name="empty"),
        Sample((A((2, 5), values=WITH_NAN, requires_grad=False), 1), name="nan")], dtypes=FLOAT_INT),
    OpInfo("cummin", _fn("cummin"), [
        Sample((A((3, 5)), -1)),
        Sample((A((3, 4), noncontig=True), 0), name="noncontig"),
        Sample((A((2, 5), values=WITH_NAN, requires_grad=False), 1), name="nan")], dtypes=FLOAT_INT),
    OpInfo("logcumsumexp", _fn("logcumsumexp"), [
        Sample((A((3, 5)), 1)), Sample((A((4, 3), transposed=True), 0), name="t"),
        Sample((A((6,), low=-50, high=50), 0), name="wide"), Sample((A(()), 0), name="0d"),
        Sample((A((0, 3)), 1), name="empty")]),
    OpInfo("diff", _fn("diff"), [
        Sample((A((3, 5)),)), Sample((A((4, 3)),), {"n": 2, "dim": 0}, name="n2"),
        Sample((A((3, 4)), 1, -1, A((3, 2)), A((3, 1))), name="prepend_append"),
        Sample((A((5,)),), {"n": 6}, name="n_large"), Sample((A((3, 4), noncontig=True),), name="noncontig"),
        Sample((A((3, 4)),), {"n": 0}, name="n0")], dtypes=FLOAT_INT),
    OpInfo("diff_bool", _fn("diff"), [Sample((A((6,), dtype="bool"),))], grad=False),
    # Ties, where torch's rule picks or shares the gradient; finite differences are undefined there.
    OpInfo("median_ties", _fn("median"), [Sample((A((2, 6), values=TIES),))],
           skip={"gradcheck": "no derivative at ties"}),
    OpInfo("cummax_ties", _fn("cummax"), [Sample((A((2, 6), values=TIES), 1))],
           skip={"gradcheck": "no derivative at ties"}),
    OpInfo("cummin_ties", _fn("cummin"), [Sample((A((2, 6), values=TIES), 1))],
           skip={"gradcheck": "no derivative at ties"}),
    OpInfo("aminmax", _fn("aminmax"), [
        Sample((A((3, 5)),)), Sample((A((3, 5)),), {"dim": 1}, name="dim"),
        Sample((A((3, 4)),), {"dim": 0, "keepdim": True}, name="keepdim"),
        Sample((A((2, 6), values=TIES),), {"dim": 1}, name="ties"), Sample((A(()),), name="0d")],
        dtypes=FLOAT_INT),
    OpInfo("aminmax_max_only", lambda lib, x: lib.aminmax(x, dim=-1).max, [Sample((A((3, 4)),))]),
]
