"""OpInfo entries: matrix products, einsum, tensordot."""
from .common import Arg, OpInfo, Sample

A = Arg
INT = dict(low=-4, high=4, dtype="int64")


def _matmul_samples():
    return [
        Sample((A((4,)), A((4,))), name="1d_1d"),
        Sample((A((3, 4)), A((4,))), name="2d_1d"),
        Sample((A((4,)), A((4, 3))), name="1d_2d"),
        Sample((A((3, 4)), A((4, 2))), name="2d_2d"),
        Sample((A((2, 3, 4)), A((2, 4, 2))), name="3d_3d"),
        Sample((A((2, 3, 4)), A((4, 2))), name="3d_2d"),
        Sample((A((2, 3, 4)), A((4,))), name="3d_1d"),
        Sample((A((4,)), A((2, 4, 3))), name="1d_3d"),
        Sample((A((3, 4)), A((2, 4, 2))), name="2d_3d"),
        Sample((A((2, 1, 2, 3)), A((3, 3, 2))), name="bcast_batch"),
        Sample((A((1, 2, 3)), A((2, 1, 3, 2))), name="bcast_batch2"),
        Sample((A((3, 4), transposed=True), A((4, 2), noncontig=True)), name="noncontig"),
        Sample((A((2, 3, 4), noncontig=True), A((4, 2), transposed=True)), name="noncontig_3d"),
        Sample((A((0, 4)), A((4, 2))), name="empty_rows"),
        Sample((A((3, 0)), A((0, 2))), name="empty_inner"),
        Sample((A((2, 3), **INT), A((3, 2), **INT)), name="int"),
        Sample((A((2, 2, 3), **INT), A((3,), **INT)), name="int_3d_1d"),
    ]


OPS = [
    OpInfo("matmul", lambda lib, a, b: lib.matmul(a, b), _matmul_samples()),
    OpInfo("matmul_operator", lambda lib, a, b: a @ b, _matmul_samples()[:12]),
    OpInfo("rmatmul", lambda lib, a, b: b.__rmatmul__(a), _matmul_samples()[:6]),
    OpInfo("matmul_method", lambda lib, a, b: a.matmul(b), _matmul_samples()[3:6]),
    OpInfo("matmul_lowp", lambda lib, a, b: lib.matmul(a, b), [
        Sample((A((3, 4)), A((4, 2))), name="2d"),
        Sample((A((2, 3, 4)), A((2, 4, 2))), name="3d"),
        Sample((A((4,)), A((4,))), name="dot"),
    ], dtypes=("float16", "bfloat16"), grad=False),
    OpInfo("mm", lambda lib, a, b: lib.mm(a, b), [
        Sample((A((3, 4)), A((4, 2)))),
        Sample((A((3, 4), transposed=True), A((4, 2), noncontig=True)), name="noncontig"),
        Sample((A((3, 0)), A((0, 2))), name="empty"),
        Sample((A((2, 3), **INT), A((3, 2), **INT)), name="int"),
        Sample((A((2, 3), requires_grad=False), A((3, 2))), name="one_grad"),
    ]),
    OpInfo("mm_method", lambda lib, a, b: a.mm(b), [Sample((A((3, 4)), A((4, 2))))]),
    OpInfo("bmm", lambda lib, a, b: lib.bmm(a, b), [
        Sample((A((2, 3, 4)), A((2, 4, 2)))),
        Sample((A((2, 3, 4), transposed=True), A((2, 4, 2), noncontig=True)), name="noncontig"),
        Sample((A((0, 3, 4)), A((0, 4, 2))), name="empty"),
        Sample((A((2, 2, 3), **INT), A((2, 3, 2), **INT)), name="int"),
    ]),
    OpInfo("mv", lambda lib, a, b: lib.mv(a, b), [
        Sample((A((3, 4)), A((4,)))),
        Sample((A((3, 4), transposed=True), A((4,), noncontig=True)), name="noncontig"),
        Sample((A((0, 4)), A((4,))), name="empty"),
        Sample((A((2, 3), **INT), A((3,), **INT)), name="int"),
    ]),
    OpInfo("dot", lambda lib, a, b: lib.dot(a, b), [
        Sample((A((5,)), A((5,)))),
        Sample((A((5,), noncontig=True), A((5,))), name="noncontig"),
        Sample((A((0,)), A((0,))), name="empty"),
        Sample((A((4,), **INT), A((4,), **INT)), name="int"),
    ]),
    OpInfo("vdot", lambda lib, a, b: lib.vdot(a, b), [Sample((A((5,)), A((5,))))]),
    OpInfo("inner", lambda lib, a, b: lib.inner(a, b), [
        Sample((A((4,)), A((4,))), name="1d"),
        Sample((A((2, 4)), A((3, 4))), name="2d"),
        Sample((A((2, 3, 4)), A((4,))), name="3d_1d"),
        Sample((A(()), A((2, 3))), name="0d"),
    ]),
    OpInfo("outer", lambda lib, a, b: lib.outer(a, b), [
        Sample((A((3,)), A((4,)))),
        Sample((A((3,), noncontig=True), A((0,))), name="empty"),
        Sample((A((3,), **INT), A((4,))), name="int_float"),
    ]),
    OpInfo("ger", lambda lib, a, b: a.ger(b), [Sample((A((3,)), A((4,))))]),
    OpInfo("addmm", lambda lib, c, a, b, **k: lib.addmm(c, a, b, **k), [
        Sample((A((3, 2)), A((3, 4)), A((4, 2))), name="plain"),
        Sample((A((2,)), A((3, 4)), A((4, 2))), {"beta": 0.5, "alpha": 2.0}, name="bcast_scaled"),
        Sample((A(()), A((3, 4), transposed=True), A((4, 2))), {"beta": 0}, name="beta0"),
        Sample((A((3, 1)), A((3, 4)), A((4, 2), noncontig=True)), {"alpha": -1.5}, name="bcast_col"),
        Sample((A((2, 2), **INT), A((2, 3), **INT), A((3, 2), **INT)), {"beta": 2, "alpha": 3}, name="int"),
    ]),
    OpInfo("addmm_method", lambda lib, c, a, b: c.addmm(a, b, beta=2, alpha=0.5),
           [Sample((A((3, 2)), A((3, 4)), A((4, 2))))]),
    OpInfo("addmm_", lambda lib, c, a, b: (c * 1).addmm_(a, b, alpha=2),
           [Sample((A((3, 2)), A((3, 4)), A((4, 2))))]),
    OpInfo("addmv", lambda lib, c, a, b, **k: lib.addmv(c, a, b, **k), [
        Sample((A((3,)), A((3, 4)), A((4,))), name="plain"),
        Sample((A(()), A((3, 4), transposed=True), A((4,))), {"beta": 0.5, "alpha": 2}, name="scaled"),
    ]),
    OpInfo("baddbmm", lambda lib, c, a, b, **k: lib.baddbmm(c, a, b, **k), [
        Sample((A((2, 3, 2)), A((2, 3, 4)), A((2, 4, 2))), name="plain"),
        Sample((A((3, 1)), A((2, 3, 4)), A((2, 4, 2), transposed=True)), {"beta": -1, "alpha": 0.5},
               name="bcast_scaled"),
        Sample((A((2, 3, 2)), A((2, 3, 4)), A((2, 4, 2))), {"beta": 0}, name="beta0"),
    ]),
    OpInfo("addbmm", lambda lib, c, a, b, **k: lib.addbmm(c, a, b, **k), [
        Sample((A((3, 2)), A((2, 3, 4)), A((2, 4, 2))), name="plain"),
        Sample((A((2,)), A((2, 3, 4)), A((2, 4, 2))), {"beta": 0.5, "alpha": 2}, name="bcast_scaled"),
    ]),
    OpInfo("einsum", lambda lib, eq, *ops: lib.einsum(eq, *ops), [
        Sample(("ij,jk->ik", A((3, 4)), A((4, 2))), name="mm"),
        Sample(("bij,bjk->bik", A((2, 3, 4)), A((2, 4, 2), transposed=True)), name="bmm"),
        Sample(("i,i->", A((5,)), A((5,))), name="dot"),
        Sample(("i,j->ij", A((3,)), A((4,))), name="outer"),
        Sample(("ij->ji", A((3, 4), noncontig=True)), name="transpose"),
        Sample(("ij->i", A((3, 4))), name="rowsum"),
        Sample(("ii->i", A((3, 3))), name="diag"),
        Sample(("ii", A((3, 3))), name="trace"),
        Sample(("iij,jk->ik", A((2, 2, 3)), A((3, 2))), name="diag_mm"),
        Sample(("...ij,...jk->...ik", A((2, 3, 4)), A((4, 2))), name="ellipsis"),
        Sample(("...ij,...jk", A((2, 1, 2, 3)), A((3, 3, 2))), name="ellipsis_bcast"),
        Sample(("ij,jk", A((3, 4)), A((4, 2))), name="implicit"),
        Sample(("ba,ab", A((2, 3)), A((3, 2))), name="implicit_scalar"),
        Sample(("i j , j k -> k i", A((3, 4)), A((4, 2))), name="spaces"),
        Sample(("ij,jk,kl->il", A((2, 3)), A((3, 4)), A((4, 2))), name="three"),
        Sample(("ij,ij->ij", A((3, 1)), A((3, 4))), name="bcast_letter"),
        Sample(("bi,bj->b", A((0, 3)), A((0, 2))), name="empty"),
        Sample(("ij,jk->ik", A((2, 3), **INT), A((3, 2), **INT)), name="int"),
    ]),
    OpInfo("einsum_list", lambda lib, eq, a, b: lib.einsum(eq, [a, b]),
           [Sample(("ij,kj->ik", A((3, 4)), A((2, 4))))]),
    OpInfo("tensordot", lambda lib, a, b, **k: lib.tensordot(a, b, **k), [
        Sample((A((2, 3, 4)), A((3, 4, 2))), name="default"),
        Sample((A((2, 3)), A((3, 4))), {"dims": 1}, name="int1"),
        Sample((A((2, 3)), A((4, 2))), {"dims": 0}, name="int0"),
        Sample((A((2, 3, 4)), A((4, 2, 3), noncontig=True)), {"dims": ([1, 2], [2, 0])}, name="lists"),
        Sample((A((3, 4)), A((4, 3))), {"dims": ([0], [1])}, name="list1"),
    ]),
]

OPS += [
    OpInfo("linalg.matmul", lambda lib, a, b: lib.linalg.matmul(a, b), _matmul_samples()[:12]),
    OpInfo("linalg.vecdot", lambda lib, a, b, **k: lib.linalg.vecdot(a, b, **k), [
        Sample((A((3, 4)), A((3, 4))), name="plain"),
        Sample((A((2, 1, 3)), A((4, 3), noncontig=True)), name="broadcast"),
        Sample((A((3, 2)), A((3, 2), transposed=False)), {"dim": 0}, name="dim0"),
        Sample((A(()), A(())), name="0d"),
    ]),
    OpInfo("linalg.diagonal", lambda lib, a, **k: lib.linalg.diagonal(a, **k), [
        Sample((A((3, 4)),), name="plain"),
        Sample((A((2, 3, 4)),), {"offset": 1}, name="offset"),
        Sample((A((2, 3, 4), noncontig=True),), {"offset": -1, "dim1": 0, "dim2": 2}, name="dims"),
    ]),
]
