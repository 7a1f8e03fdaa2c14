"""OpInfo entries: ember.linalg (decompositions, solves, norms, pseudo-inverse, least squares,
products) and the top-level det, inverse, cholesky, svd, qr, cdist, pdist, dist, cross.

Random samples are made valid inside the op: ``_wc`` adds n*I (well conditioned, invertible)
and ``_spd`` builds ``a a^T + n*I`` (symmetric positive-definite). Decompositions whose factors
are defined up to signs (svd, eigh) are compared through gauge-invariant quantities (singular
values, absolute values of vectors, products such as ``U Vh``), as torch's own OpInfo does.
"""
import math

from .common import Arg, OpInfo, Sample

A = Arg
S = Sample

OPS = []

_LOOSE = dict(atol=1e-4, rtol=1e-4)


def _eye(lib, a):
    return lib.eye(a.shape[-1], dtype=a.dtype, device=a.device)


def _wc(lib, a):
    return a + a.shape[-1] * _eye(lib, a)


def _spd(lib, a):
    return a @ a.mT + a.shape[-1] * _eye(lib, a)


def _sym(a):
    return a + a.mT


_SQUARE = [
    S((A((3, 3)),), name="3x3"),
    S((A((2, 3, 3)),), name="batched"),
    S((A((2, 1, 2, 2)),), name="batch2d"),
    S((A((3, 3), transposed=True),), name="transposed"),
    S((A((3, 3), noncontig=True),), name="noncontig"),
    S((A((1, 1)),), name="1x1"),
]

OPS += [
    OpInfo("linalg.inv", lambda lib, a: lib.linalg.inv(_wc(lib, a)), _SQUARE, **_LOOSE),
    OpInfo("inverse", lambda lib, a: lib.inverse(_wc(lib, a)), _SQUARE[:2], **_LOOSE),
    OpInfo("Tensor.inverse", lambda lib, a: _wc(lib, a).inverse(), _SQUARE[:1], **_LOOSE),
    OpInfo("linalg.inv_ex", lambda lib, a: lib.linalg.inv_ex(_wc(lib, a)), _SQUARE[:2],
           output_index=0, **_LOOSE),
    # a 1x1 determinant's gradient is constant: torch's second-order graph is then empty
    OpInfo("linalg.det", lambda lib, a: lib.linalg.det(_wc(lib, a)), _SQUARE[:-1], **_LOOSE),
    OpInfo("linalg.det_raw", lambda lib, a: lib.linalg.det(a), _SQUARE[:2], **_LOOSE),
    OpInfo("det", lambda lib, a: lib.det(_wc(lib, a)), _SQUARE[:2], **_LOOSE),
    OpInfo("Tensor.det", lambda lib, a: _wc(lib, a).det(), _SQUARE[:1], **_LOOSE),
    OpInfo("linalg.slogdet", lambda lib, a: tuple(lib.linalg.slogdet(a)), _SQUARE, **_LOOSE),
    OpInfo("slogdet", lambda lib, a: tuple(lib.slogdet(a)), _SQUARE[:2], **_LOOSE),
    OpInfo("logdet", lambda lib, a: lib.logdet(_spd(lib, a)), _SQUARE[:2], **_LOOSE),
]

OPS += [
    OpInfo("linalg.solve", lambda lib, a, b, **kw: lib.linalg.solve(_wc(lib, a), b, **kw), [
        S((A((3, 3)), A((3, 2)))),
        S((A((3, 3)), A((3,))), name="vector"),
        S((A((2, 3, 3)), A((2, 3))), name="batched_vector"),
        S((A((2, 3, 3)), A((3, 2))), name="broadcast_b"),
        S((A((3, 3)), A((2, 3, 1))), name="broadcast_a"),
        S((A((3, 3), transposed=True), A((3, 2), noncontig=True)), name="strided"),
        S((A((3, 3)), A((2, 3))), {"left": False}, name="right"),
        S((A((2, 3, 3)), A((1, 4, 3))), {"left": False}, name="right_batched"),
    ], **_LOOSE),
]

_SPD_SAMPLES = [
    S((A((3, 3)),), name="3x3"),
    S((A((2, 3, 3)),), name="batched"),
    S((A((3, 3), transposed=True),), name="transposed"),
    S((A((1, 1)),), name="1x1"),
]

OPS += [
    OpInfo("linalg.cholesky", lambda lib, a, **kw: lib.linalg.cholesky(_spd(lib, a), **kw),
           _SPD_SAMPLES + [S((A((2, 3, 3)),), {"upper": True}, name="upper")], **_LOOSE),
    OpInfo("cholesky", lambda lib, a, **kw: lib.cholesky(_spd(lib, a), **kw),
           _SPD_SAMPLES[:2] + [S((A((3, 3)),), {"upper": True}, name="upper")], **_LOOSE),
    OpInfo("linalg.cholesky_ex", lambda lib, a: lib.linalg.cholesky_ex(_spd(lib, a)),
           _SPD_SAMPLES[:2], output_index=0, **_LOOSE),
]

OPS += [
    OpInfo("linalg.qr", lambda lib, a, **kw: tuple(lib.linalg.qr(a, **kw)), [
        S((A((4, 3)),), name="tall"),
        S((A((3, 3)),), name="square"),
        S((A((3, 4)),), name="wide"),
        S((A((2, 4, 3)),), name="batched"),
        S((A((2, 2, 4)),), name="batched_wide"),
        S((A((3, 3), transposed=True),), {"mode": "complete"}, name="complete_square"),
        S((A((2, 4)),), {"mode": "complete"}, name="complete_wide"),
    ], **_LOOSE),
    OpInfo("linalg.qr_r", lambda lib, a: lib.linalg.qr(a, mode="r")[1],
           [S((A((4, 3)),)), S((A((3, 4)),))], grad=False, **_LOOSE),
    OpInfo("linalg.qr_complete_tall", lambda lib, a: lib.linalg.qr(a, mode="complete")[1],
           [S((A((4, 3)),))], grad=False, **_LOOSE),
    OpInfo("qr", lambda lib, a, **kw: tuple(lib.qr(a, **kw)),
           [S((A((4, 3)),)), S((A((3, 3)),), {"some": False})], **_LOOSE),
]


def _svd_invariants(lib, a, **kw):
    U, S_, Vh = lib.linalg.svd(a, **kw)
    return U.abs(), S_, Vh.abs(), U @ Vh


def _torch_svd_invariants(lib, a, **kw):
    U, S_, V = lib.svd(a, **kw)
    return U.abs(), S_, V.abs()


def _eigh_invariants(lib, a, **kw):
    L, V = lib.linalg.eigh(_sym(a), **kw)
    return L, V.abs()


OPS += [
    OpInfo("linalg.svd", _svd_invariants, [
        S((A((3, 3)),), name="square"),
        S((A((4, 3)),), {"full_matrices": False}, name="tall"),
        S((A((3, 4)),), {"full_matrices": False}, name="wide"),
        S((A((2, 3, 2)),), {"full_matrices": False}, name="batched"),
        S((A((3, 3), transposed=True),), {"full_matrices": False}, name="transposed"),
    ], **_LOOSE),
    OpInfo("linalg.svd_full", lambda lib, a: lib.linalg.svd(a, full_matrices=True)[1],
           [S((A((4, 3)),)), S((A((2, 4)),))], **_LOOSE),
    OpInfo("linalg.svdvals", lambda lib, a: lib.linalg.svdvals(a),
           [S((A((4, 3)),)), S((A((2, 3, 3)),)), S((A((2, 4), noncontig=True),))],
           **_LOOSE),
    OpInfo("svd", _torch_svd_invariants, [
        S((A((4, 3)),)),
        S((A((3, 3)),), {"some": False}, name="full"),
        S((A((2, 3, 2)),), name="batched"),
    ], **_LOOSE),
    OpInfo("svd_no_uv", lambda lib, a: tuple(lib.svd(a, compute_uv=False)),
           [S((A((4, 3)),))], grad=False, **_LOOSE),
    OpInfo("linalg.eigh", _eigh_invariants, [
        S((A((3, 3)),)),
        S((A((2, 3, 3)),), name="batched"),
        S((A((3, 3)),), {"UPLO": "U"}, name="upper"),
        S((A((3, 3), transposed=True),), name="transposed"),
    ], **_LOOSE),
    OpInfo("linalg.eigh_triangle", lambda lib, a, **kw: lib.linalg.eigh(a, **kw)[0],
           [S((A((3, 3)),), {"UPLO": "L"}), S((A((3, 3)),), {"UPLO": "U"})], **_LOOSE),
    OpInfo("linalg.eigvalsh", lambda lib, a, **kw: lib.linalg.eigvalsh(_sym(a), **kw), [
        S((A((3, 3)),)),
        S((A((2, 3, 3)),), {"UPLO": "U"}, name="batched"),
    ], **_LOOSE),
]

OPS += [
    OpInfo("linalg.pinv", lambda lib, a, **kw: lib.linalg.pinv(a, **kw), [
        S((A((3, 4)),), name="wide"),
        S((A((4, 3)),), name="tall"),
        S((A((2, 3, 3)),), name="batched"),
        S((A((3, 3), transposed=True),), {"rtol": 0.01}, name="rtol"),
        S((A((3, 3)),), {"atol": 0.1}, name="atol"),
    ], **_LOOSE),
    OpInfo("linalg.pinv_hermitian", lambda lib, a: lib.linalg.pinv(_spd(lib, a), hermitian=True),
           [S((A((3, 3)),)), S((A((2, 2, 2)),))], **_LOOSE),
    OpInfo("linalg.matrix_power", lambda lib, a, n: lib.linalg.matrix_power(_wc(lib, a) / 3, n), [
        S((A((3, 3)), 0), name="0"),
        S((A((3, 3)), 1), name="1"),
        S((A((3, 3)), 2), name="2"),
        S((A((2, 3, 3)), 3), name="3"),
        S((A((3, 3)), 5), name="5"),
        S((A((3, 3)), -1), name="-1"),
        S((A((2, 2, 2)), -2), name="-2"),
    ], **_LOOSE),
    OpInfo("linalg.matrix_rank", lambda lib, a, **kw: lib.linalg.matrix_rank(a, **kw), [
        S((A((3, 4)),)),
        S((A((2, 3, 3)),), {"hermitian": True}),
        S((A((3, 3)),), {"atol": 1.0, "rtol": 0.0}),
        S((A((3, 3), values=[[1.0, 2, 3], [2, 4, 6], [1, 0, 1]]),)),
    ], grad=False),
    OpInfo("linalg.lstsq", lambda lib, a, b: lib.linalg.lstsq(a, b).solution, [
        S((A((4, 3)), A((4, 2)))),
        S((A((4, 3)), A((4,))), name="vector"),
        S((A((2, 3, 3)), A((2, 3, 2))), name="batched"),
        S((A((3, 3), transposed=True), A((3, 1))), name="square"),
    ], **_LOOSE),
    OpInfo("linalg.lstsq_outputs",
           lambda lib, a, b, **kw: tuple(lib.linalg.lstsq(a, b, **kw))[1:], [
               S((A((4, 3)), A((4, 2))), {"driver": "gelsd"}),
               S((A((4, 3)), A((4, 2))), {"driver": "gelss"}),
               S((A((4, 3)), A((4, 2))), {"driver": "gelsy"}),
           ], grad=False, **_LOOSE),
]

_NORM_ORDS = ["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf]

OPS += [
    OpInfo("linalg.matrix_norm", lambda lib, a, **kw: lib.linalg.matrix_norm(a, **kw),
           [S((A((3, 4)),), {"ord": o}, name=str(o)) for o in _NORM_ORDS]
           + [S((A((2, 3, 3)),), {"ord": o, "keepdim": True}, name=f"{o}_keepdim") for o in _NORM_ORDS]
           + [S((A((3, 2, 4)),), {"ord": o, "dim": (0, 2)}, name=f"{o}_dims") for o in (1, "nuc", math.inf)]
           + [S((A((3, 2, 4)),), {"ord": o, "dim": (2, 0), "keepdim": True}, name=f"{o}_dims_rev")
              for o in (-1, 2, -math.inf)],
           **_LOOSE),
    OpInfo(
        "linalg.vector_norm",
        lambda lib, a, **kw: lib.linalg.vector_norm(
            a, **{k: (getattr(lib, v) if k == "dtype" else v) for k, v in kw.items()}), [
            S((A((3, 4)),)),
            S((A((3, 4)),), {"ord": 1, "dim": 1}, name="1"),
            S((A((3, 4)),), {"ord": math.inf, "dim": (0, 1), "keepdim": True}, name="inf"),
            S((A((3, 4), avoid=0),), {"ord": 3.5, "dim": 0}, name="3.5"),
            S((A((3, 4)),), {"ord": 2, "dtype": "float64"}, name="dtype"),
            S((A(()),), name="0d"),
        ], **_LOOSE),
    OpInfo("linalg.norm", lambda lib, a, **kw: lib.linalg.norm(a, **kw), [
        S((A((2, 3, 2)),), name="flat"),
        S((A((3, 4)),), {"ord": "nuc"}, name="nuc"),
        S((A((3, 4)),), {"ord": 1}, name="matrix_1"),
        S((A((4,)),), {"ord": 1}, name="vector_1"),
        S((A((2, 3, 4)),), {"dim": 1}, name="dim"),
        S((A((2, 3, 4)),), {"ord": -2, "dim": (1, 2)}, name="dims"),
        S((A((2, 3, 4)),), {"ord": math.inf, "dim": -1, "keepdim": True}, name="vector_inf"),
    ], **_LOOSE),
]

OPS += [
    OpInfo("linalg.cross", lambda lib, a, b, **kw: lib.linalg.cross(a, b, **kw), [
        S((A((3,)), A((3,)))),
        S((A((2, 1, 3)), A((1, 4, 3))), name="broadcast"),
        S((A((3, 2)), A((3, 2))), {"dim": 0}, name="dim0"),
        S((A((2, 3), noncontig=True), A((1, 3))), name="noncontig"),
    ]),
    OpInfo("cross", lambda lib, a, b, **kw: lib.cross(a, b, **kw), [
        S((A((3, 2)), A((3, 2))), name="first_dim_of_3"),
        S((A((2, 3)), A((2, 3))), {"dim": 1}, name="dim"),
    ]),
    OpInfo("linalg.multi_dot", lambda lib, *ts: lib.linalg.multi_dot(ts), [
        S((A((2, 3)), A((3, 4)), A((4, 2)))),
        S((A((3,)), A((3, 4)), A((4,))), name="vectors"),
        S((A((3,)), A((3, 2))), name="row"),
        S((A((2, 3), transposed=True), A((3,))), name="column"),
    ]),
    OpInfo("linalg.vander", lambda lib, x, **kw: lib.linalg.vander(x, **kw), [
        S((A((3,)),)),
        S((A((2, 3)),), {"N": 4}, name="batched"),
        S((A((4,), low=-3, high=3, dtype="int64"),), name="int"),
    ]),
]

OPS += [
    OpInfo("cdist", lambda lib, a, b, **kw: lib.cdist(a, b, **kw),
           [S((A((2, 3)), A((4, 3))), {"p": p}, name=str(p)) for p in (2.0, 1.0, math.inf, 0.5, 3.0, 0.0)]
           + [S((A((2, 2, 3)), A((1, 4, 3))), name="batched"),
              S((A((3, 3), transposed=True), A((2, 3), noncontig=True)), name="strided"),
              S((A((2, 2, 3)), A((4, 3))), {"compute_mode": "use_mm_for_euclid_dist"}, name="mm")],
           gradgrad=False, **_LOOSE),  # torch: "the derivative for '_cdist_backward' is not implemented"
    OpInfo("pdist", lambda lib, a, **kw: lib.pdist(a, **kw), [
        S((A((4, 3)),)),
        S((A((3, 2)),), {"p": 1.0}, name="1"),
        S((A((3, 2)),), {"p": 3.0}, name="3"),
    ], gradgrad=False, **_LOOSE),  # torch: "the derivative for '_pdist_backward' is not implemented"
    OpInfo("dist", lambda lib, a, b, **kw: lib.dist(a, b, **kw), [
        S((A((3, 4)), A((4,)))),
        S((A((3,)), A((3,))), {"p": 1}, name="1"),
        S((A((2, 3)), A((2, 3))), {"p": math.inf}, name="inf"),
        S((A(()), A((2,))), {"p": 3}, name="3"),
    ], **_LOOSE),
]


def _lu_solve(lib, a, b, **kw):
    LU, pivots = lib.linalg.lu_factor(_wc(lib, a))
    return lib.linalg.lu_solve(LU, pivots, b, **kw)


# pivoting is exercised: the LU samples are random matrices, not made diagonally dominant
OPS += [
    OpInfo("linalg.solve_triangular",
           lambda lib, a, b, **kw: lib.linalg.solve_triangular(_wc(lib, a), b, **kw), [
               S((A((3, 3)), A((3, 2))), {"upper": True}, name="upper"),
               S((A((3, 3)), A((3, 2))), {"upper": False}, name="lower"),
               S((A((3, 3)), A((2, 3))), {"upper": True, "left": False}, name="right"),
               S((A((2, 3, 3)), A((4, 1, 3, 2))), {"upper": False, "unitriangular": True}, name="unit_bcast"),
               S((A((3, 3), transposed=True), A((2, 3), noncontig=True)),
                 {"upper": False, "left": False, "unitriangular": True}, name="strided_right_unit"),
           ], **_LOOSE),
    OpInfo("linalg.lu_factor", lambda lib, a: lib.linalg.lu_factor(a), [
        S((A((4, 4)),), name="square"),
        S((A((2, 3, 3)),), name="batched"),
        S((A((5, 3)),), name="tall"),
        S((A((3, 5)),), name="wide"),
        S((A((3, 3), transposed=True),), name="transposed"),
    ], output_index=0, **_LOOSE),
    OpInfo("linalg.lu_factor_ex", lambda lib, a: lib.linalg.lu_factor_ex(a),
           [S((A((4, 4)),)), S((A((2, 4, 3)),), name="tall")], output_index=0, **_LOOSE),
    OpInfo("linalg.lu", lambda lib, a: tuple(lib.linalg.lu(a)), [
        S((A((4, 4)),), name="square"),
        S((A((2, 3, 3)),), name="batched"),
        S((A((5, 3)),), name="tall"),
        S((A((3, 5)),), name="wide"),
    ], **_LOOSE),
    OpInfo("linalg.lu_U", lambda lib, a: lib.linalg.lu(a)[2],
           [S((A((4, 4)),)), S((A((5, 3)),), name="tall"), S((A((3, 5)),), name="wide")], **_LOOSE),
    OpInfo("linalg.lu_L", lambda lib, a: lib.linalg.lu(a)[1],
           [S((A((4, 4)),)), S((A((5, 3)),), name="tall"), S((A((3, 5)),), name="wide")], **_LOOSE),
    OpInfo("linalg.lu_solve", _lu_solve, [
        S((A((3, 3)), A((3, 2)))),
        S((A((3, 3)), A((3, 2))), {"adjoint": True}, name="adjoint"),
        S((A((3, 3)), A((2, 3))), {"left": False}, name="right"),
        S((A((3, 3)), A((2, 3))), {"left": False, "adjoint": True}, name="right_adjoint"),
        S((A((2, 3, 3)), A((4, 1, 3, 1))), name="broadcast"),
    ], **_LOOSE),
    OpInfo("linalg.solve_ex", lambda lib, a, b, **kw: lib.linalg.solve_ex(_wc(lib, a), b, **kw), [
        S((A((3, 3)), A((3, 2)))),
        S((A((2, 3, 3)), A((2, 3))), name="batched_vector"),
        S((A((3, 3)), A((2, 3))), {"left": False}, name="right"),
    ], output_index=0, **_LOOSE),
    OpInfo("linalg.cond", lambda lib, a, **kw: lib.linalg.cond(a, **kw),
           [S((A((3, 3)),), name="default"), S((A((2, 3, 4)),), {"p": 2}, name="2_rect"),
            S((A((2, 3, 3)),), {"p": -2}, name="-2"), S((A((3, 3)),), {"p": "nuc"}, name="nuc")],
           **_LOOSE),
    # torch's backward through these orders fails (it fills its inverse in place after saving
    # it); ember's gradient is checked by finite differences in tests/test_linalg_more.py
    OpInfo("linalg.cond_through_inverse", lambda lib, a, **kw: lib.linalg.cond(a, **kw),
           [S((A((2, 3, 3)),), {"p": p}, name=str(p)) for p in (1, -1, math.inf, -math.inf, "fro")],
           grad=False, **_LOOSE),
    OpInfo("linalg.tensorinv", lambda lib, a, **kw: lib.linalg.tensorinv(_wc(lib, a.reshape(6, 6)).reshape(a.shape), **kw),
           [S((A((2, 3, 6)),), {"ind": 2}, name="ind2"), S((A((6, 3, 2)),), {"ind": 1}, name="ind1")],
           **_LOOSE),
    OpInfo("linalg.tensorsolve",
           lambda lib, a, b, **kw: lib.linalg.tensorsolve(_wc(lib, a.reshape(6, 6)).reshape(a.shape), b, **kw),
           [S((A((2, 3, 6)), A((2, 3))), name="plain"),
            S((A((6, 2, 3)), A((2, 3))), {"dims": (0,)}, name="dims")], **_LOOSE),
]

OPS += [
    OpInfo("linalg.householder_product", lambda lib, a, tau: lib.linalg.householder_product(a, tau), [
        S((A((4, 3)), A((2,))), name="tall"),
        S((A((3, 3)), A((3,))), name="square"),
        S((A((2, 5, 3)), A((2, 3))), name="batched"),
        S((A((4, 3), transposed=True), A((3,), noncontig=True)), name="strided"),
        S((A((4, 2)), A((0,))), name="no_reflector"),
    ], **_LOOSE),
    OpInfo("orgqr", lambda lib, a, tau: lib.orgqr(a, tau), [S((A((4, 3)), A((3,))))], **_LOOSE),
    OpInfo("Tensor.orgqr", lambda lib, a, tau: a.orgqr(tau), [S((A((4, 3)), A((1,))))], **_LOOSE),
]

def _eigvals(lib, a):
    if isinstance(a, lib.Tensor) and a.dim() >= 2 and not bool(lib.isfinite(a).all()):
        return lib.linalg.eig(a)[0]   # torch's eigvals crashes the interpreter on NaN input
    return lib.linalg.eigvals(a)


# complex results: ember has no complex autograd yet, so values only (tests/test_linalg_more.py
# checks that asking for a gradient raises its clear error)
OPS += [
    # eigenvectors through |V|: MKL's geev (torch's) signs some complex ones otherwise
    OpInfo("linalg.eig", lambda lib, a: (lib.linalg.eig(a)[0], lib.linalg.eig(a)[1].abs()), [
        S((A((3, 3), requires_grad=False),), name="3x3"),
        S((A((2, 4, 4), requires_grad=False),), name="batched"),
        S((A((3, 3), transposed=True, requires_grad=False),), name="transposed"),
        S((A((1, 1), requires_grad=False),), name="1x1"),
    ], grad=False, **_LOOSE),
    OpInfo("linalg.eigvals", _eigvals,
           [S((A((3, 3), requires_grad=False),)), S((A((2, 4, 4), noncontig=True, requires_grad=False),), name="batched")], grad=False, **_LOOSE),
]


def _ldl_solve(lib, a, b, **kw):
    LD, pivots = lib.linalg.ldl_factor(_sym(a), **kw)
    if b.dim() >= 2 and tuple(b.shape[:-2]) != tuple(LD.shape[:-2]):
        # torch's ldl_solve crashes the interpreter on batch dimensions that differ
        batch = tuple(lib.broadcast_shapes(LD.shape[:-2], b.shape[:-2]))
        LD, pivots = LD.expand(batch + tuple(LD.shape[-2:])), pivots.expand(batch + tuple(pivots.shape[-1:]))
        b = b.expand(batch + tuple(b.shape[-2:]))
    return lib.linalg.ldl_solve(LD, pivots, b, **kw)


# torch differentiates neither (backward raises: tests/test_linalg_more.py)
OPS += [
    OpInfo("linalg.ldl_factor", lambda lib, a, **kw: tuple(lib.linalg.ldl_factor(_sym(a), **kw)), [
        S((A((4, 4)),), name="4x4"),
        S((A((2, 5, 5)),), {"hermitian": True}, name="batched_hermitian"),
        S((A((3, 3), transposed=True),), name="transposed"),
    ], grad=False, **_LOOSE),
    OpInfo("linalg.ldl_factor_ex", lambda lib, a: tuple(lib.linalg.ldl_factor_ex(_sym(a))),
           [S((A((2, 4, 4)),))], grad=False, **_LOOSE),
    OpInfo("linalg.ldl_solve", _ldl_solve, [
        S((A((4, 4)), A((4, 2)))),
        # (torch's ldl_solve crashes on batch dimensions that broadcast: ember's are checked
        # against NumPy in tests/test_linalg_more.py)
        S((A((2, 4, 4)), A((2, 4, 1))), {"hermitian": True}, name="batched"),
    ], grad=False, **_LOOSE),
]


def _torch_lu_solve(lib, a, b):
    LU, pivots = lib.lu(_wc(lib, a))
    return lib.lu_solve(b, LU, pivots)


# the deprecated top-level names
OPS += [
    OpInfo("lu", lambda lib, a, **kw: tuple(lib.lu(a, **kw)),
           [S((A((4, 4)),)), S((A((2, 3, 3)),), {"get_infos": True}, name="infos")], output_index=0, **_LOOSE),
    OpInfo("lu_solve", _torch_lu_solve, [S((A((3, 3)), A((3, 2)))), S((A((2, 3, 3)), A((2, 3, 1))), name="batched")],
           **_LOOSE),
    OpInfo("Tensor.lu_solve", lambda lib, a, b: b.lu_solve(*_wc(lib, a).lu()), [S((A((3, 3)), A((3, 2))))],
           **_LOOSE),
]
