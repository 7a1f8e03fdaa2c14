"""OpInfo entries: statistics (isin, cov, corrcoef, histograms), integration and
differentiation of samples (trapezoid, cumulative_trapezoid, gradient), matrix functions
(matrix_exp, addr, adjoint, vander, renorm), triangular and Cholesky solvers, lu_unpack, and
the indexing ops index_reduce, put, unravel_index and fill_diagonal_."""
from .common import Arg, OpInfo, Sample

A = Arg
INT = dict(low=-4, high=4, dtype="int64")
POS = dict(low=0.5, high=2.0)


def _well_conditioned(lib, A):
    """A + 3 I: a triangle of it is far from singular."""
    return A + 3 * lib.eye(A.shape[-1], dtype=A.dtype, device=A.device)


OPS = [
    OpInfo("isin", lambda lib, a, b, **k: lib.isin(a, b, **k), [
        Sample((A((3, 4), **INT), A((5,), **INT))),
        Sample((A((3, 4), **INT), A((5,), **INT)), {"invert": True}, name="invert"),
        Sample((A((6,), values=[1.0, 2.5, 3.0, 2.5, 0.0, -1.0]),
                A((3,), values=[2.5, -1.0, 7.0])), name="float"),
        Sample((A((4,), **INT), 2), name="scalar_test"),
        Sample((A((0,), **INT), A((3,), **INT)), name="empty"),
    ], grad=False),
    OpInfo("cov", lambda lib, x, f=None, a=None, **k: lib.cov(x, fweights=f, aweights=a, **k), [
        Sample((A((3, 5)),)),
        Sample((A((5,)),), name="1d"),
        Sample((A((3, 5), noncontig=True),), {"correction": 0}, name="correction0"),
        Sample((A((2, 4)), A((4,), values=[1, 2, 0, 3], dtype="int64")), name="fweights"),
        Sample((A((2, 4)), None, A((4,), low=0.1, high=1.0, requires_grad=False)),
               name="aweights"),
        Sample((A((2, 4)), A((4,), values=[1, 2, 1, 3], dtype="int64"),
                A((4,), low=0.1, high=1.0, requires_grad=False)), name="both_weights"),
        Sample((A((2, 4), **INT),), name="int"),
    ]),
    OpInfo("cov_method", lambda lib, x: x.cov(), [Sample((A((3, 5)),))]),
    OpInfo("corrcoef", lambda lib, x: lib.corrcoef(x), [
        Sample((A((3, 6)),)),
        Sample((A((6,)),), name="1d"),
    ]),
    OpInfo("histogram", lambda lib, x, bins, w=None, **k: tuple(lib.histogram(x, bins, weight=w, **k)), [
        Sample((A((20,)), 5), name="bins"),
        Sample((A((4, 5)), 4), {"range": (-1.0, 1.0)}, name="range"),
        Sample((A((10,)), 4, A((10,), 0.0, 1.0)), {"density": True}, name="density"),
        Sample((A((10,)), A((4,), values=[-2.0, -0.5, 0.25, 2.0])), name="edges"),
    ], grad=False),
    OpInfo("histogramdd", lambda lib, x, **k: lib.histogramdd(x, **k)[0], [
        Sample((A((20, 2)),), {"bins": [3, 4]}, name="bins"),
        Sample((A((10, 3)),), {"bins": 2, "range": [-1.0, 1.0, -2.0, 2.0, 0.0, 1.0]},
               name="range"),
    ], grad=False),
    OpInfo("histogramdd_edges", lambda lib, x, e1, e2: tuple(lib.histogramdd(x, bins=[e1, e2])[0:1])
           + tuple(lib.histogramdd(x, bins=[e1, e2])[1]), [
        Sample((A((10, 2)), A((3,), values=[-2.0, 0.0, 2.0]), A((3,), values=[-2.0, 1.0, 2.0])))
    ], grad=False),
    OpInfo("trapezoid", lambda lib, y, *a, **k: lib.trapezoid(y, *a, **k), [
        Sample((A((3, 5)),), name="default"),
        Sample((A((3, 5)),), {"dx": 0.5, "dim": 0}, name="dx"),
        Sample((A((3, 5)), A((5,))), name="x_1d"),
        Sample((A((3, 5)), A((3, 5))), {"dim": 1}, name="x_full"),
        Sample((A((3, 0)),), name="empty"),
        Sample((A((4,), **INT),), name="int"),
    ]),
    OpInfo("trapz", lambda lib, y, *a, **k: lib.trapz(y, *a, **k), [
        Sample((A((3, 5)), A((5,))), name="x"),
        Sample((A((3, 5)),), {"dx": 2.0}, name="dx"),
    ]),
    OpInfo("cumulative_trapezoid", lambda lib, y, *a, **k: lib.cumulative_trapezoid(y, *a, **k), [
        Sample((A((3, 5)),), name="default"),
        Sample((A((3, 5)),), {"dx": 0.5, "dim": 0}, name="dx"),
        Sample((A((3, 5)), A((5,))), name="x_1d"),
    ]),
    OpInfo("gradient", lambda lib, x, **k: lib.gradient(x, **k), [
        Sample((A((4, 5)),), name="default"),
        Sample((A((4, 5)),), {"spacing": 2.0, "dim": 1, "edge_order": 2}, name="edge2"),
        Sample((A((4, 5)),), {"spacing": [0.5, 2.0]}, name="spacings"),
        Sample((A((3, 4), **INT),), {"dim": 0}, name="int"),
    ]),
    OpInfo("gradient_coordinates", lambda lib, x, c, **k: lib.gradient(x, spacing=(c,), **k), [
        Sample((A((5,)), A((5,), values=[0.0, 0.5, 1.5, 1.75, 3.0], requires_grad=False))),
        Sample((A((5,)), A((5,), values=[0.0, 0.5, 1.5, 1.75, 3.0], requires_grad=False)),
               {"edge_order": 2}, name="edge2"),
    ]),
    OpInfo("matrix_exp", lambda lib, x: lib.matrix_exp(x), [
        Sample((A((3, 3)),)),
        Sample((A((2, 4, 4), low=-3, high=3),), name="batch"),
        Sample((A((3, 3), transposed=True),), name="transposed"),
        Sample((A((1, 1)),), name="1x1"),
        Sample((A((0, 0)),), name="empty"),
    ], gradgrad=False, grad_atol=1e-4),   # (torch's gradient of the 1x1 sample is 1.1e-5 off the exact one)
    OpInfo("matrix_exp_method", lambda lib, x: x.matrix_exp(), [Sample((A((3, 3)),))],
           gradgrad=False),
    OpInfo("linalg_matrix_exp", lambda lib, x: lib.linalg.matrix_exp(x), [
        Sample((A((3, 3), low=-8, high=8),), name="scaled")], gradgrad=False),
    OpInfo("addr", lambda lib, m, a, b, **k: lib.addr(m, a, b, **k), [
        Sample((A((3, 4)), A((3,)), A((4,)))),
        Sample((A((3, 4)), A((3,)), A((4,))), {"beta": 0.5, "alpha": 2.0}, name="scaled"),
        Sample((A((4,)), A((3,)), A((4,))), name="broadcast"),
        Sample((A((3, 4)), A((3,)), A((4,))), {"beta": 0}, name="beta0"),
        Sample((A((3, 4), **INT), A((3,), **INT), A((4,), **INT)), {"alpha": 2}, name="int"),
    ]),
    OpInfo("addr_", lambda lib, m, a, b: m.clone().addr_(a, b, alpha=3), [
        Sample((A((3, 4)), A((3,)), A((4,))))]),
    OpInfo("adjoint", lambda lib, x: lib.adjoint(x), [
        Sample((A((3, 4)),)), Sample((A((2, 3, 4)),), name="batch")]),
    OpInfo("adjoint_method", lambda lib, x: x.adjoint(), [Sample((A((3, 4)),))]),
    OpInfo("vander", lambda lib, x, **k: lib.vander(x, **k), [
        Sample((A((4,)),)),
        Sample((A((3,)),), {"N": 5, "increasing": True}, name="increasing"),
        Sample((A((3,)),), {"N": 1}, name="N1"),
        Sample((A((3,)),), {"N": 0}, name="N0"),
        Sample((A((4,), **INT),), name="int"),
    ], skip={kind: "torch's own backward of vander raises (an in-place write it saved for)"
             for kind in ("grad", "gradgrad")}),
    OpInfo("renorm", lambda lib, x, *a: lib.renorm(x, *a), [
        Sample((A((3, 4)), 2, 0, 1.0), name="p2"),
        Sample((A((3, 4, 2)), 1, 1, 2.0), name="p1"),
        Sample((A((3, 4)), float("inf"), -1, 1.0), name="inf"),
        Sample((A((3, 4), low=-0.1, high=0.1), 2, 0, 5.0), name="below"),
    ]),
    OpInfo("renorm_", lambda lib, x: x.clone().renorm_(2, 0, 1.0), [Sample((A((3, 4)),))]),
    OpInfo("triangular_solve", lambda lib, b, a, **k: tuple(
        lib.triangular_solve(b, _well_conditioned(lib, a), **k)), [
        Sample((A((3, 2)), A((3, 3)))),
        Sample((A((3, 2)), A((3, 3))), {"upper": False}, name="lower"),
        Sample((A((3, 2)), A((3, 3))), {"transpose": True}, name="transpose"),
        Sample((A((3, 2)), A((3, 3))), {"unitriangular": True, "upper": False}, name="unit"),
        Sample((A((2, 3, 1)), A((3, 3))), name="broadcast"),
    ], output_index=0),
    OpInfo("cholesky_solve", lambda lib, b, L, **k: lib.cholesky_solve(
        b, _well_conditioned(lib, L), **k), [
        Sample((A((3, 2)), A((3, 3)))),
        Sample((A((3, 2)), A((3, 3))), {"upper": True}, name="upper"),
        Sample((A((2, 3, 2)), A((3, 3))), name="broadcast"),
    ]),
    OpInfo("cholesky_inverse", lambda lib, L, **k: lib.cholesky_inverse(
        _well_conditioned(lib, L), **k), [
        Sample((A((3, 3)),)),
        Sample((A((3, 3)),), {"upper": True}, name="upper"),
    ]),
    OpInfo("lu_unpack", lambda lib, lu, piv, **k: tuple(
        t for t in lib.lu_unpack(lu, piv.int(), **k)), [
        Sample((A((3, 3)), A((3,), values=[2, 2, 3], dtype="int32"))),
        Sample((A((4, 2)), A((2,), values=[3, 4], dtype="int32")), name="tall"),
        Sample((A((2, 4)), A((2,), values=[2, 2], dtype="int32")), name="wide"),
        Sample((A((2, 3, 3)), A((2, 3), values=[[1, 3, 3], [3, 2, 3]], dtype="int32")),
               name="batch"),
    ], output_index=1),
    OpInfo("lu_unpack_u", lambda lib, lu, piv: lib.lu_unpack(lu, piv.int(), unpack_pivots=False)[2],
           [Sample((A((3, 3)), A((3,), values=[1, 2, 3], dtype="int32")))]),
    OpInfo("index_reduce", lambda lib, x, d, i, s, r, **k: lib.index_reduce(x, d, i, s, r, **k), [
        Sample((A((4, 3), **POS), 0, A((3,), values=[0, 2, 0], dtype="int64"), A((3, 3), **POS),
                "prod"), name="prod"),
        Sample((A((4, 3)), 1, A((2,), values=[2, 0], dtype="int64"), A((4, 2)), "mean"),
               name="mean"),
        Sample((A((4, 3)), 0, A((3,), values=[1, 3, 0], dtype="int64"), A((3, 3)), "amax"),
               {"include_self": False}, name="amax_noself"),
        Sample((A((4, 3)), 0, A((2,), values=[1, 3], dtype="int64"), A((2, 3)), "amin"),
               name="amin"),
    ]),
    OpInfo("index_reduce_", lambda lib, x, i, s: x.clone().index_reduce_(0, i, s, "mean"), [
        Sample((A((4, 3)), A((3,), values=[0, 2, 0], dtype="int64"), A((3, 3))))]),
    OpInfo("put", lambda lib, x, i, s, **k: lib.put(x, i, s, **k), [
        Sample((A((3, 4)), A((3,), values=[0, 5, -1], dtype="int64"), A((3,)))),
        Sample((A((3, 4), transposed=True), A((2, 2), values=[[0, 5], [0, 11]], dtype="int64"),
                A((4,))), {"accumulate": True}, name="accumulate"),
    ]),
    OpInfo("put_", lambda lib, x, i, s: x.clone().put_(i, s), [
        Sample((A((3, 4)), A((2,), values=[1, 6], dtype="int64"), A((2,))))]),
    OpInfo("unravel_index", lambda lib, i, shape: lib.unravel_index(i, shape), [
        Sample((A((5,), values=[0, 5, 11, 23, 17], dtype="int64"), (2, 3, 4))),
        Sample((A((2, 2), values=[[-1, 30], [7, 0]], dtype="int64"), (4, 6)), name="wrap"),
    ], grad=False),
    OpInfo("fill_diagonal_", lambda lib, x, **k: x.clone().fill_diagonal_(2.5, **k), [
        Sample((A((3, 3)),)),
        Sample((A((7, 3)),), {"wrap": True}, name="wrap"),
        Sample((A((7, 3)),), name="tall"),
        Sample((A((3, 5)),), name="wide"),
        Sample((A((3, 3, 3)),), name="3d"),
    ]),
    OpInfo("sum_to_size", lambda lib, x, *s: x.sum_to_size(*s), [
        Sample((A((2, 3, 4)), 3, 1), name="lead"),
        Sample((A((2, 3, 4)), (1, 3, 4)), name="tuple"),
        Sample((A((2, 3)), 2, 3), name="same"),
    ]),
    OpInfo("hardshrink_method", lambda lib, x: x.hardshrink(0.3), [
        Sample((A((4, 5), avoid=[-0.3, 0.3]),))], gradgrad=False),   # piecewise linear
    OpInfo("prelu_method", lambda lib, x, w: x.prelu(w), [Sample((A((2, 3, 4)), A((3,))))]),
    OpInfo("fill", lambda lib, x, v: lib.fill(x, v), [
        Sample((A((3, 2)), 1.5), name="scalar"),
        Sample((A((3, 2)), A(())), name="tensor"),
    ]),
]
