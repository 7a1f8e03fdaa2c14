"""OpInfo entries: reductions (sums, products, means, moments, extremes, norms, logical
reductions) and cumulative scans."""
import math

from .common import Arg, OpInfo, Sample

A = Arg
INF = math.inf
NAN = math.nan


def call(name):
    """``lib.name(*args, **kwargs)``, with a ``dtype`` given by name turned into ``lib``'s."""
    def fn(lib, *args, **kwargs):
        if isinstance(kwargs.get("dtype"), str):
            kwargs = {**kwargs, "dtype": getattr(lib, kwargs["dtype"])}
        return getattr(lib, name)(*args, **kwargs)
    return fn


def method(name):
    """``x.name(*args, **kwargs)``: the Tensor method."""
    def fn(lib, x, *args, **kwargs):
        return getattr(x, name)(*args, **kwargs)
    return fn


def _reduce_samples(low=-2.0, high=2.0, avoid=None):
    return [
        Sample((A((3, 4), low, high, avoid=avoid),), name="all"),
        Sample((A((3, 4), low, high, avoid=avoid),), {"dim": 1}, name="dim1"),
        Sample((A((2, 3, 4), low, high, avoid=avoid),), {"dim": (0, 2), "keepdim": True}, name="dims_keep"),
        Sample((A((2, 3, 4), low, high, avoid=avoid),), {"dim": [-1, 0]}, name="dims_list_neg"),
        Sample((A((2, 3, 4), low, high, avoid=avoid),), {"dim": -1}, name="negdim"),
        Sample((A((2, 3), low, high, avoid=avoid),), {"dim": 0, "keepdim": True}, name="keepdim"),
        Sample((A((), low, high, avoid=avoid),), name="0d"),
        Sample((A((), low, high, avoid=avoid),), {"dim": -1}, name="0d_dim"),
        Sample((A((3, 4), low, high, noncontig=True, avoid=avoid),), {"dim": 0}, name="noncontig"),
        Sample((A((4, 3), low, high, transposed=True, avoid=avoid),), {"dim": 1}, name="transposed"),
    ]


def _int_samples():
    return [
        Sample((A((3, 4), -3, 4, dtype="int64"),), name="int64"),
        Sample((A((3, 4), -3, 4, dtype="int32"),), {"dim": 1}, name="int32_dim"),
        Sample((A((3, 4), 0, 4, dtype="uint8"),), {"dim": 0}, name="uint8"),
        Sample((A((3, 4), dtype="bool"),), name="bool"),
    ]


def _whole_int_samples():
    return [Sample((A((3, 4), low, 4, dtype=name),), name=name)
            for name, low in (("int64", -3), ("uint8", 0), ("bool", 0))]


_ZERO_ONE = [[0.5, -1.5, 0.0, 2.0], [1.2, 0.7, -0.9, 1.1], [0.0, 0.3, 0.0, -1.4]]
_ZERO_THREE = [[0.0, 1.5, 0.0, 2.0], [1.2, 0.0, -0.9, 1.1]]


def _sum_like(name):
    return OpInfo(name, call(name), _reduce_samples() + _int_samples() + [
        Sample((A((0, 3)),), {"dim": 0}, name="empty_dim"),
        Sample((A((0, 3)),), name="empty"),
        Sample((A((3, 4)),), {"dim": 1, "dtype": "float64"}, name="dtype"),
        Sample((A((3, 4), -3, 4, dtype="int64"),), {"dtype": "float32"}, name="int_dtype"),
        Sample((A((3, 4)),), {"dim": ()}, name="empty_tuple"),
    ])


OPS = [
    _sum_like("sum"),
    OpInfo("sum_method", method("sum"), [Sample((A((3, 4)),), {"dim": 1, "keepdim": True})]),
    _sum_like("nansum"),
    OpInfo("nansum_nan", call("nansum"), [
        Sample((A((2, 3), values=[[1.0, NAN, 2.0], [NAN, NAN, 0.5]]),), name="all"),
        Sample((A((2, 3), values=[[1.0, NAN, 2.0], [NAN, NAN, 0.5]]),), {"dim": 1}, name="dim"),
    ]),
    OpInfo("mean", call("mean"), _reduce_samples() + [
        Sample((A((3, 4)),), {"dim": 1, "dtype": "float64"}, name="dtype"),
        Sample((A((3, 4), -3, 4, dtype="int64"),), {"dtype": "float64"}, name="int_dtype"),
        Sample((A((3, 4)),), {"dim": ()}, name="empty_tuple"),
        Sample((A((2, 0)),), {"dim": 1}, name="empty_slices"),
    ]),
    OpInfo("nanmean", call("nanmean"), _reduce_samples() + [
        Sample((A((2, 3), values=[[1.0, NAN, 2.0], [NAN, NAN, 0.5]]),), name="nan"),
        Sample((A((2, 3), values=[[1.0, NAN, 2.0], [NAN, NAN, NAN]]),), {"dim": 1}, name="nan_dim"),
        Sample((A((3, 4)),), {"dim": 0, "dtype": "float64"}, name="dtype"),
    ]),
    OpInfo("prod", call("prod"), [
        Sample((A((3, 4), 0.5, 1.5),), name="all"),
        Sample((A((3, 4)),), {"dim": 1}, name="dim1"),
        Sample((A((2, 3, 4)),), {"dim": -2, "keepdim": True}, name="negdim_keep"),
        Sample((A(()),), name="0d"),
        Sample((A(()),), {"dim": 0}, name="0d_dim"),
        Sample((A((3, 4), noncontig=True),), {"dim": 0}, name="noncontig"),
        Sample((A((0, 3)),), {"dim": 0}, name="empty_dim"),
        Sample((A((0, 3)),), name="empty"),
        Sample((A((3, 1)),), {"dim": 1}, name="size1"),
        Sample((A((3, 4), values=_ZERO_ONE[1:2] + [[0.0, 0.3, 1.3, -1.4]]),), name="one_zero"),
        Sample((A((3, 4), values=_ZERO_ONE),), name="zeros"),
        Sample((A((3, 4), values=_ZERO_ONE),), {"dim": 1}, name="zeros_dim"),
        Sample((A((2, 4), values=_ZERO_THREE),), {"dim": 0, "keepdim": True}, name="zeros_dim0"),
        Sample((A((2, 4), values=_ZERO_THREE),), {"dim": 1}, name="zeros_dim1"),
        Sample((A((3, 4)),), {"dim": 1, "dtype": "float64"}, name="dtype"),
    ] + _int_samples()[:1] + [Sample((A((3, 4), dtype="bool"),), {"dim": 0}, name="bool")]),
    OpInfo("cumsum", call("cumsum"), [
        Sample((A((3, 4)), 1), name="dim1"),
        Sample((A((3, 4)), 0), name="dim0"),
        Sample((A((2, 3, 4)), -2), name="negdim"),
        Sample((A(()), 0), name="0d"),
        Sample((A((3, 4), noncontig=True), 1), name="noncontig"),
        Sample((A((0, 3)), 0), name="empty"),
        Sample((A((3, 4)), 1), {"dtype": "float64"}, name="dtype"),
        Sample((A((3, 4), -3, 4, dtype="int32"), 1), name="int"),
        Sample((A((3, 4), dtype="bool"), 0), name="bool"),
    ]),
    OpInfo("cumsum_method", method("cumsum"), [Sample((A((3, 4)), -1))]),
    OpInfo("cumprod", call("cumprod"), [
        Sample((A((3, 4)), 1), name="dim1"),
        Sample((A((3, 4)), 0), name="dim0"),
        Sample((A((2, 3, 4)), -2), name="negdim"),
        Sample((A(()), 0), name="0d"),
        Sample((A((3, 4), noncontig=True), 1), name="noncontig"),
        Sample((A((0, 3)), 0), name="empty"),
        Sample((A((3, 1)), 1), name="size1"),
        Sample((A((3, 4), values=_ZERO_ONE), 1), name="zeros"),
        Sample((A((3, 4), values=_ZERO_ONE), 0), name="zeros_dim0"),
        Sample((A((2, 4), values=_ZERO_THREE), 1), name="zeros_three"),
        Sample((A((3, 4)), 1), {"dtype": "float64"}, name="dtype"),
        Sample((A((3, 4), -3, 4, dtype="int64"), 1), name="int"),
        Sample((A((3, 4), 0, 4, dtype="uint8"), 0), name="uint8"),
    ]),
]

# -- extremes -------------------------------------------------------------------------------

_TIES2 = [[1.5, 0.2, 1.5, -0.3], [-0.7, -0.7, 0.4, 0.1], [0.9, 0.8, -0.2, 0.9]]
_TIES3 = [[1.5, 1.5, 1.5, -0.3], [-0.7, -0.7, -0.7, 0.1]]
_WITH_NAN = [[1.0, NAN, 2.0], [0.5, -0.5, 0.25]]


def _extreme_samples():
    return [
        Sample((A((3, 4)),), name="all"),
        Sample((A((3, 4)),), {"dim": 1}, name="dim1"),
        Sample((A((2, 3, 4)),), {"dim": (0, 2), "keepdim": True}, name="dims_keep"),
        Sample((A((2, 3, 4)),), {"dim": -1}, name="negdim"),
        Sample((A(()),), name="0d"),
        Sample((A((3, 4), noncontig=True),), {"dim": 0}, name="noncontig"),
        Sample((A((0, 3)),), {"dim": 1}, name="empty_rows"),
        Sample((A((3, 4), values=_TIES2),), name="ties2"),
        Sample((A((3, 4), values=_TIES2),), {"dim": 1}, name="ties2_dim"),
    ] + _int_samples()


def _ties_only(name, fn):
    """Three-way ties: torch's even split is not what finite differences see, so no gradcheck."""
    return OpInfo(name, fn, [
        Sample((A((2, 4), values=_TIES3),), name="all"),
        Sample((A((2, 4), values=_TIES3),), {"dim": 1, "keepdim": True}, name="dim"),
    ], gradcheck=False)


def _max_dim_samples():
    return [
        Sample((A((3, 4)), 1), name="dim1"),
        Sample((A((3, 4)), -2, True), name="negdim_keep"),
        Sample((A((2, 3, 4)), 1), {"keepdim": False}, name="3d"),
        Sample((A(()), 0), name="0d"),
        Sample((A((3, 4), noncontig=True), 0), name="noncontig"),
        Sample((A((4, 3), transposed=True), 1), name="transposed"),
        Sample((A((0, 3)), 1), name="empty_rows"),
        Sample((A((3, 4), -3, 4, dtype="int64"), 1), name="int"),
        Sample((A((3, 4), dtype="bool"), 0), name="bool"),
        Sample((A((2, 3), values=_WITH_NAN), 1), name="nan"),
    ]


OPS += [
    OpInfo("amax", call("amax"), _extreme_samples()),
    OpInfo("amin", call("amin"), _extreme_samples()),
    _ties_only("amax_ties3", call("amax")),
    _ties_only("amin_ties3", call("amin")),
    OpInfo("max_all", lambda lib, x: lib.max(x), [
        Sample((A((3, 4)),), name="2d"),
        Sample((A(()),), name="0d"),
        Sample((A((3, 4), noncontig=True),), name="noncontig"),
        Sample((A((3, 4), values=_TIES2),), name="ties2"),
        Sample((A((2, 3), values=_WITH_NAN),), name="nan"),
    ] + _whole_int_samples()),
    OpInfo("min_all", lambda lib, x: x.min(), [
        Sample((A((3, 4)),), name="2d"),
        Sample((A(()),), name="0d"),
        Sample((A((3, 4), values=_TIES2),), name="ties2"),
    ] + _whole_int_samples()),
    OpInfo("max_all_ties3", lambda lib, x: lib.max(x), [Sample((A((2, 4), values=_TIES3),))], gradcheck=False),
    OpInfo("max_dim", call("max"), _max_dim_samples()),
    OpInfo("min_dim", call("min"), _max_dim_samples()),
    OpInfo("max_dim_method", lambda lib, x: x.max(dim=1, keepdim=True), [Sample((A((3, 4)),))]),
    OpInfo("min_dim_fields", lambda lib, x: tuple(lib.min(x, 0))[::-1], [Sample((A((3, 4)),))]),
    OpInfo("max_dim_named", lambda lib, x: (lib.max(x, -1).values, lib.max(x, -1).indices),
           [Sample((A((3, 4)),))]),
    # gradient all to the first index taken; finite differences would split it
    OpInfo("max_dim_ties", call("max"), [Sample((A((3, 4), values=_TIES2), 1))], gradcheck=False),
    OpInfo("min_dim_ties", call("min"), [Sample((A((3, 4), values=_TIES2), 1))], gradcheck=False),
    OpInfo("max_binary", call("max"), [
        Sample((A((3, 4)), A((3, 4))), name="same"),
        Sample((A((2, 3, 4)), A((4,))), name="bcast"),
    ]),
    OpInfo("min_binary", lambda lib, a, b: a.min(b), [Sample((A((3, 4)), A((1, 4))))]),
    OpInfo("argmax", call("argmax"), [
        Sample((A((3, 4)),), name="flat"),
        Sample((A((3, 4)),), {"keepdim": True}, name="flat_keep"),
        Sample((A((3, 4)),), {"dim": 1}, name="dim1"),
        Sample((A((2, 3, 4)),), {"dim": -2, "keepdim": True}, name="negdim_keep"),
        Sample((A(()),), name="0d"),
        Sample((A(()),), {"dim": 0}, name="0d_dim"),
        Sample((A((3, 4), noncontig=True),), {"dim": 0}, name="noncontig"),
        Sample((A((0, 3)),), {"dim": 1}, name="empty_rows"),
        Sample((A((3, 4), values=_TIES2),), {"dim": 1}, name="ties"),
        Sample((A((2, 3), values=_WITH_NAN),), name="nan"),
    ] + _int_samples()[:3], grad=False),
    OpInfo("argmin", call("argmin"), [
        Sample((A((3, 4)),), name="flat"),
        Sample((A((3, 4)),), {"dim": 0, "keepdim": True}, name="dim0_keep"),
        Sample((A((3, 4), values=_TIES2),), {"dim": 1}, name="ties"),
        Sample((A(()),), name="0d"),
    ] + _int_samples()[:3], grad=False),
]

# -- moments --------------------------------------------------------------------------------


def _moment_samples():
    return [
        Sample((A((3, 4)),), name="all"),
        Sample((A((3, 4)),), {"dim": 1}, name="dim1"),
        Sample((A((2, 3, 4)),), {"dim": (0, 2), "keepdim": True}, name="dims_keep"),
        Sample((A((2, 3, 4)),), {"dim": -1, "correction": 0}, name="correction0"),
        Sample((A((2, 3, 4)),), {"dim": [0, 1], "correction": 2}, name="correction2"),
        Sample((A((3, 4)),), {"dim": 1, "correction": 1.5}, name="correction_float"),
        Sample((A((3, 4)),), {"dim": 0, "unbiased": False, "keepdim": True}, name="unbiased_kw"),
        Sample((A((3, 4)), 1, False), name="unbiased_pos"),
        Sample((A((3, 4)), False), name="unbiased_only"),
        Sample((A((3, 4), noncontig=True),), {"dim": 0}, name="noncontig"),
        Sample((A((0, 3)),), {"dim": 1}, name="empty_rows"),
    ]


OPS += [
    OpInfo("var", call("var"), _moment_samples()),
    OpInfo("std", call("std"), _moment_samples(), atol=2e-5, rtol=1e-5),
    OpInfo("var_mean", call("var_mean"), _moment_samples()),
    OpInfo("std_mean", call("std_mean"), _moment_samples(), atol=2e-5, rtol=1e-5),
    OpInfo("var_mean_only_mean", lambda lib, x, **k: lib.var_mean(x, **k)[1], [
        Sample((A((3, 4)),), {"dim": 1}, name="dim1")]),
    OpInfo("std_mean_only_std", lambda lib, x, **k: lib.std_mean(x, **k)[0], [
        Sample((A((3, 4)),), {"dim": 1}, name="dim1")], atol=2e-5, rtol=1e-5),
    OpInfo("var_method", method("var"), [Sample((A((3, 4)), 1), {"keepdim": True})]),
    OpInfo("std_method", method("std"), [Sample((A((3, 4)),), {"correction": 0})]),
]

# -- logsumexp, norms, logical reductions ------------------------------------------------------

OPS += [
    OpInfo("logsumexp", call("logsumexp"), [
        Sample((A((3, 4)), 1), name="dim1"),
        Sample((A((2, 3, 4)), (0, 2), True), name="dims_keep"),
        Sample((A((2, 3, 4)), -1), name="negdim"),
        Sample((A(()), 0), name="0d"),
        Sample((A((3, 4), noncontig=True), 0), name="noncontig"),
        Sample((A((0, 3)), 0), name="empty"),
        Sample((A((2, 3), values=[[1000.0, 1000.5, 999.0], [-1000.0, -1001.0, -999.5]]), 1),
               name="large"),
        Sample((A((3, 4), -3, 4, dtype="int64"), 1), name="int"),
    ]),
    OpInfo("logsumexp_method", method("logsumexp"), [Sample((A((3, 4)), -1, True))]),
]


def _norm_samples(p):
    return [
        Sample((A((3, 4), avoid=0.0), p), name="all"),
        Sample((A((3, 4), avoid=0.0), p), {"dim": 1}, name="dim1"),
        Sample((A((2, 3, 4), avoid=0.0), p), {"dim": (0, 2), "keepdim": True}, name="dims_keep"),
        Sample((A((2, 3, 4), avoid=0.0), p, -1), name="negdim"),
        Sample((A((), avoid=0.0), p), name="0d"),
        Sample((A((3, 4), noncontig=True, avoid=0.0), p), {"dim": 0}, name="noncontig"),
    ]


OPS += [
    OpInfo(f"norm_{name}", call("norm"), _norm_samples(p))
    for name, p in (("2", 2), ("1", 1), ("inf", INF), ("neginf", -INF), ("0", 0), ("3p5", 3.5),
                    ("1p5", 1.5), ("0p5", 0.5), ("neg1p5", -1.5), ("fro", "fro"))
]
OPS += [
    OpInfo("norm_default", call("norm"), [
        Sample((A((3, 4)),), name="all"),
        Sample((A((3, 4)),), {"dim": 1, "keepdim": True}, name="dim_keep"),
        Sample((A((3, 4)),), {"p": "fro", "dim": (0, 1)}, name="fro_dims"),
        Sample((A((3, 4)),), {"dtype": "float64"}, name="dtype"),
        Sample((A((0, 3)),), name="empty"),
        Sample((A((0, 3)),), {"p": INF, "dim": 1}, name="empty_rows_inf"),
    ]),
    OpInfo("norm_method", lambda lib, x, *a, **k: x.norm(*a, **k), [
        Sample((A((3, 4)),), {"p": 2, "dim": -1}, name="p2"),
        Sample((A((3, 4), avoid=0.0), 3), name="p3"),
    ]),
    # p='nuc' is the matrix norm over two dims (all dims by default), as torch.linalg.matrix_norm
    OpInfo("norm_nuc", call("norm"), [
        Sample((A((3, 4)), "nuc"), name="all"),
        Sample((A((2, 3, 4)), "nuc"), {"dim": (2, 0), "keepdim": True}, name="dims_keep"),
        Sample((A((2, 3, 4)), "nuc", (1, 2)), name="batch"),
        Sample((A((4, 3), noncontig=True), "nuc"), {"dim": [0, 1]}, name="noncontig"),
        Sample((A((3, 4)), "nuc"), {"dtype": "float64"}, name="dtype"),
    ], atol=1e-4, rtol=1e-4),
    OpInfo("norm_method_nuc", lambda lib, x, *a, **k: x.norm(*a, **k), [
        Sample((A((3, 4)),), {"p": "nuc"}, name="nuc"),
        Sample((A((2, 3, 4)),), {"p": "fro", "dim": (0, 2)}, name="fro_dims"),
    ], atol=1e-4, rtol=1e-4),
    # the gradient of the 2-norm at the zero vector is 0 (not NaN), in torch and here
    OpInfo("norm_zero_vector", call("norm"), [
        Sample((A((4,), values=[0.0, 0.0, 0.0, 0.0]),), name="all"),
        Sample((A((2, 3), values=[[0.0, 0.0, 0.0], [1.0, -2.0, 0.5]]),), {"dim": 1}, name="row"),
    ], gradgrad=False),
]


def _logical_samples():
    return [
        Sample((A((3, 4), values=[[1.0, 0.0, 2.0, 3.0], [1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0]]),),
               name="all"),
        Sample((A((3, 4), values=[[1.0, 0.0, 2.0, 3.0], [1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0]]),),
               {"dim": 1}, name="dim1"),
        Sample((A((2, 3, 4), 0, 2, integer=True),), {"dim": (0, 2), "keepdim": True}, name="dims_keep"),
        Sample((A((2, 3, 4), 0, 2, integer=True),), {"dim": ()}, name="empty_tuple"),
        Sample((A((3, 4), 0, 2, dtype="int64"),), {"dim": 0}, name="int64"),
        Sample((A((3, 4), 0, 2, dtype="uint8"),), name="uint8"),
        Sample((A((3, 4), 0, 2, dtype="uint8"),), {"dim": -1, "keepdim": True}, name="uint8_dim"),
        Sample((A((3, 4), dtype="bool"),), {"dim": 1}, name="bool"),
        Sample((A((0, 3)),), name="empty"),
        Sample((A((0, 3)),), {"dim": 0}, name="empty_dim"),
        Sample((A(()),), name="0d"),
    ]


OPS += [
    OpInfo("all", call("all"), _logical_samples(), grad=False),
    OpInfo("any", call("any"), _logical_samples(), grad=False),
    OpInfo("count_nonzero", call("count_nonzero"), [
        Sample((A((3, 4), -1, 2, integer=True),), name="all"),
        Sample((A((3, 4), -1, 2, integer=True),), {"dim": 1}, name="dim1"),
        Sample((A((2, 3, 4), -1, 2, integer=True),), {"dim": (0, -1)}, name="dims"),
        Sample((A((3, 4), 0, 3, dtype="int32"),), {"dim": 0}, name="int"),
        Sample((A((3, 4), dtype="bool"),), name="bool"),
        Sample((A(()),), name="0d"),
        Sample((A((0, 3)),), {"dim": 0}, name="empty"),
    ], grad=False),
    OpInfo("any_method", lambda lib, x: x.any(), [Sample((A((3, 4), 0, 1, dtype="int64"),))], grad=False),
]
