"""OpInfo entries: reductions."""
from .common import Arg, OpInfo, Sample

A = Arg


def _reduce_samples():
    return [
        Sample((A((3, 4)),), name="all"),
        Sample((A((3, 4)),), {"dim": 1}, name="dim1"),
        Sample((A((2, 3, 4)),), {"dim": (0, 2), "keepdim": True}, name="dims_keep"),
        Sample((A((2, 3, 4)),), {"dim": -1}, name="negdim"),
        Sample((A(()),), name="0d"),
        Sample((A((3, 4), noncontig=True),), {"dim": 0}, name="noncontig"),
    ]


OPS = [
    OpInfo("sum", lambda lib, x, **k: lib.sum(x, **k), _reduce_samples() + [
        Sample((A((0, 3)),), {"dim": 0}, name="empty")]),
    OpInfo("mean", lambda lib, x, **k: lib.mean(x, **k), _reduce_samples()),
]
