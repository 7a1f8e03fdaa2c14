"""OpInfo entries: ember.special (torch.special), values and, where torch has them, gradients.

Each function gets random samples over its interesting range and a sample of edge values
(zeros, the ends of the kernels' ranges, infinities, NaN) whose inputs need no gradient."""
import math

from .common import Arg, OpInfo, Sample

A = Arg
inf, nan = math.inf, math.nan


def _special(name):
    return lambda lib, *a, **k: getattr(lib.special, name)(*a, **k)


def _edges(values):
    return Sample((A((len(values),), values=values, requires_grad=False),), name="edges")


def _unary(name, low, high, edges, avoid=None, grad=True, dtypes=("float32", "float64"), **kw):
    samples = [
        Sample((A((3, 4), low, high, avoid=avoid),), name="2d"),
        Sample((A((), low, high, avoid=avoid),), name="0d"),
        Sample((A((2, 3, 4), low, high, noncontig=True, avoid=avoid),), name="noncontig"),
        Sample((A((0, 2), low, high),), name="empty"),
        _edges(edges),
    ]
    return OpInfo("special_" + name, _special(name), samples, dtypes=dtypes, grad=grad, **kw)


# torch's float64 J0, J1, Y0 and Y1 are off by up to 1e-6 beyond x = 5, its Ai by up to 3e-6
# around x = -2.09 where its asymptotic form begins (ember's, within a few ulps, are checked
# against scipy in tests/test_special_functions.py)
_TORCH_LESS_EXACT = {name: (5e-6, 1e-5) for name in (
    "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "airy_ai")}


def _int_input(name):
    return OpInfo(f"special_{name}_int", _special(name), [Sample((A((5,), -3, 4),))],
                  dtypes=("int64", "bool"), grad=False, float64_tolerances=_TORCH_LESS_EXACT.get(name))


_BESSEL_J = [0.0, -0.0, 1e-5, 7.99, 8.0, 8.01, -8.5, 50.5, 300.0, 1e4, -inf, inf, nan]
_BESSEL_Y = [0.0, -1.0, 1e-10, 1e-3, 7.99, 8.0, 8.01, 100.0, 1e4, inf, nan]
_BESSEL_I = [0.0, -0.0, 1e-6, 19.99, 20.0, 20.01, -25.0, 80.0, 700.0, -inf, inf, nan]
_BESSEL_K = [0.0, 1e-8, 1.99, 2.0, 2.01, -1.0, 50.0, 800.0, inf, nan]

_NO_GRAD = [
    _unary("bessel_j0", -30, 30, _BESSEL_J, grad=False, float64_tolerances=_TORCH_LESS_EXACT["bessel_j0"]),
    _unary("bessel_j1", -30, 30, _BESSEL_J, grad=False, float64_tolerances=_TORCH_LESS_EXACT["bessel_j1"]),
    _unary("bessel_y0", 0.05, 30, _BESSEL_Y, grad=False, float64_tolerances=_TORCH_LESS_EXACT["bessel_y0"]),
    _unary("bessel_y1", 0.05, 30, _BESSEL_Y, grad=False, float64_tolerances=_TORCH_LESS_EXACT["bessel_y1"]),
    _unary("modified_bessel_i0", -30, 30, _BESSEL_I, grad=False),
    _unary("modified_bessel_i1", -30, 30, _BESSEL_I, grad=False),
    _unary("modified_bessel_k0", 0.05, 30, _BESSEL_K, grad=False),
    _unary("modified_bessel_k1", 0.05, 30, _BESSEL_K, grad=False),
    _unary("scaled_modified_bessel_k0", 0.05, 30, _BESSEL_K, grad=False),
    _unary("scaled_modified_bessel_k1", 0.05, 30, _BESSEL_K, grad=False),
    _unary("spherical_bessel_j0", -20, 20, [0.0, 1e-8, -0.4, 0.6, 1e5, -inf, inf, nan], grad=False),
    _unary("airy_ai", -20, 10, [-100.0, -3.01, -3.0, -2.99, 0.0, 1.99, 2.0, 2.01, 50.0, 120.0, nan],
           grad=False, float64_tolerances=_TORCH_LESS_EXACT["airy_ai"]),
]

_WITH_GRAD = [
    _unary("i0", -12, 12, _BESSEL_I, dtypes=("float32", "float64", "float16", "bfloat16")),
    _unary("i0e", -30, 30, _BESSEL_I, avoid=0.0, dtypes=("float32", "float64", "float16", "bfloat16")),
    _unary("i1", -12, 12, _BESSEL_I, dtypes=("float32", "float64", "float16", "bfloat16")),
    _unary("i1e", -30, 30, _BESSEL_I, avoid=0.0, dtypes=("float32", "float64", "float16", "bfloat16")),
    _unary("erfcx", -3, 30, [-30.0, -26.0, -1.0, -0.4, 0.0, 0.46875, 4.0, 1e10, inf, -inf, nan]),
    _unary("ndtri", 0.01, 0.99, [0.0, 1.0, 1e-300, 1e-20, 0.5, 0.9999, -0.1, 1.1, nan]),
    # the gradient exp(-(log_ndtr(x) + x^2/2)) cancels: in float32 it keeps about 5 digits
    _unary("log_ndtr", -20, 10, [-1e10, -40.0, -1.0, 0.0, 40.0, inf, -inf, nan], rtol=5e-5),
    _unary("ndtr", -5, 5, [-40.0, 0.0, 40.0, inf, -inf, nan],
           dtypes=("float32", "float64", "float16", "bfloat16")),
    _unary("entr", 0.05, 3, [-1.0, 0.0, 1.0, inf, nan],
           dtypes=("float32", "float64", "float16", "bfloat16")),
    _unary("sinc", -3, 3, [0.0, 1.0, -2.0, 1e-20, inf, nan], avoid=0.0,
           dtypes=("float32", "float64", "float16", "bfloat16")),
    OpInfo("special_i1_at_zero", _special("i1"), [Sample((A((2,), values=[0.0, 1.5]),))]),
]

_INT = [_int_input(name) for name in (
    "bessel_j0", "bessel_y1", "modified_bessel_k0", "airy_ai", "i0", "i1e", "erfcx", "ndtri",
    "log_ndtr", "ndtr", "entr", "sinc", "spherical_bessel_j0")]


def _pair(low_x, high_x, low_y, high_y, grad_x=True):
    """Samples of two tensors (and numbers); ``grad_x``: whether x gets a gradient."""
    return [
        Sample((A((3, 4), low_x, high_x, requires_grad=grad_x), A((3, 4), low_y, high_y)), name="same"),
        Sample((A((2, 3, 4), low_x, high_x, requires_grad=grad_x), A((4,), low_y, high_y)), name="bcast"),
        Sample((A((), low_x, high_x, requires_grad=grad_x), A((2, 3), low_y, high_y)), name="zerodim"),
        Sample((A((3, 4), low_x, high_x, noncontig=True, requires_grad=grad_x),
                A((3, 4), low_y, high_y, transposed=True)), name="noncontig"),
        Sample((A((0, 3), low_x, high_x, requires_grad=grad_x), A((3,), low_y, high_y)), name="empty"),
    ]


def _grid(xs, ys):
    return Sample((A((len(xs), 1), values=[[v] for v in xs], requires_grad=False),
                   A((len(ys),), values=ys, requires_grad=False)), name="edges")


_EDGE = [-inf, -2.0, -1.5, -0.0, 0.0, 0.5, 1.0, 2.0, 30.0, inf, nan]

_BINARY = [
    OpInfo("special_xlog1py", _special("xlog1py"), _pair(-2, 2, -0.9, 3) + [
        Sample((A((3, 4)), 2), name="int_scalar"),
        Sample((2.5, A((3, 4), -0.9, 3)), name="scalar_first"),
        Sample((A((4,), values=[0.0, 0.0, 1.0, 2.0]), A((4,), values=[-1.0, nan, -0.5, 3.0])),
               name="zeros"),
        _grid(_EDGE, _EDGE),
    ], dtypes=("float32", "float64", "float16", "bfloat16"),
        skip={"gradcheck": "inf and NaN in the zeros sample"}),
    OpInfo("special_zeta", _special("zeta"), _pair(1.1, 6, 0.1, 5, grad_x=False) + [
        Sample((2.0, A((3, 4), 0.1, 5)), name="scalar_first"),
        Sample((A((3, 4), 1.1, 6, requires_grad=False), 2.5), name="scalar_second"),
        Sample((A((3,), values=[2.0, 3.0, 4.0], requires_grad=False),
                A((3,), values=[-1.5, -2.5, -0.25])), name="negative_q"),
        Sample((A((3,), values=[20.0, 50.0, 1.5], requires_grad=False), A((3,), 20, 60)), name="large"),
        _grid(_EDGE, _EDGE),
    ]),
    OpInfo("special_gammainc", _special("gammainc"), _pair(0.1, 6, 0.05, 10, grad_x=False) + [
        Sample((A((4,), values=[30.0, 25.0, 1e-3, 100.0], requires_grad=False), A((4,), 10, 60)),
               name="wide"),
        _grid(_EDGE, _EDGE),
    ], dtypes=("float32", "float64", "float16", "bfloat16")),
    OpInfo("special_gammaincc", _special("gammaincc"), _pair(0.1, 6, 0.05, 10, grad_x=False) + [
        Sample((A((4,), values=[30.0, 25.0, 1e-3, 100.0], requires_grad=False), A((4,), 10, 60)),
               name="wide"),
        _grid(_EDGE, _EDGE),
    ], dtypes=("float32", "float64", "float16", "bfloat16")),
    OpInfo("igamma", lambda lib, a, x: lib.igamma(a, x), _pair(0.1, 6, 0.05, 10, grad_x=False),
           dtypes=("float32", "float64")),
    OpInfo("igammac_method", lambda lib, a, x: a.igammac(x), _pair(0.1, 6, 0.05, 10, grad_x=False),
           dtypes=("float32", "float64")),
    OpInfo("igamma_inplace", lambda lib, a, x: a.clone().igamma_(x),
           _pair(0.1, 6, 0.05, 10, grad_x=False)[:2], dtypes=("float32", "float64")),
    OpInfo("igammac_inplace", lambda lib, a, x: a.clone().igammac_(x),
           _pair(0.1, 6, 0.05, 10, grad_x=False)[:2], dtypes=("float32", "float64")),
    OpInfo("special_incomplete_gamma_mixed", lambda lib, a, x: (lib.special.gammainc(a, x),
                                                                 lib.special.gammaincc(a, x)),
           [Sample((A((3,), values=[1.0, 2.0, 3.0], dtype="int64"), A((3,), 0.1, 4)))], grad=False),
]

# torch's polygamma(1, -2.0) is 1.6e32 (sin(-2 pi) is not 0 in floating point), ember's inf
_POLYGAMMA_EDGES = {n: [-1.5, 0.0, -0.0, 1e-300, 1e5, inf, -inf, nan] + ([] if n == 1 else [-2.0])
                    for n in (0, 1, 2, 3, 5)}

_GAMMA_FAMILY = [
    OpInfo(f"special_polygamma_{n}", lambda lib, x, _n=n: lib.special.polygamma(_n, x), [
        Sample((A((3, 4), 0.1, 5),), name="positive"),
        Sample((A((), 0.1, 5),), name="0d"),
        _edges(_POLYGAMMA_EDGES[n]),
    ], dtypes=("float32", "float64", "float16", "bfloat16"), gradgrad=n < 4)
    for n in (0, 1, 2, 3, 5)
] + [
    # between the poles the reflection formula loses digits in float32 (torch's and ember's
    # differently)
    OpInfo(f"special_polygamma_{n}_negative", lambda lib, x, _n=n: lib.special.polygamma(_n, x), [
        Sample((A((2, 3), -3, -0.1, avoid=[-3, -2, -1]),), name="negative"),
    ], rtol=2e-5, gradgrad=n < 3)
    for n in (0, 1, 2, 3)
] + [
    OpInfo("special_multigammaln", lambda lib, x, p: lib.special.multigammaln(x, p), [
        Sample((A((3, 4), 1.6, 6), 1), name="p1"),
        Sample((A((3, 4), 1.6, 6), 3), name="p3"),
        Sample((A((2, 3), 2.6, 6, noncontig=True), 5), name="p5"),
    ], dtypes=("float32", "float64", "float16", "bfloat16")),
    OpInfo("special_multigammaln_int", lambda lib, x: lib.special.multigammaln(x, 2),
           [Sample((A((4,), 2, 9),))], dtypes=("int64",), grad=False),
    OpInfo("special_polygamma_int", lambda lib, x: lib.special.polygamma(2, x),
           [Sample((A((4,), 1, 9),))], dtypes=("int64", "bool"), grad=False),
]

_POLYNOMIALS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
                "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
                "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
                "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
                "laguerre_polynomial_l", "legendre_polynomial_p"]


def _polynomial(name):
    low, high = (-0.1, 1.1) if name.startswith("shifted") else (-1.2, 1.2)
    ends = [0.0, 1.0] if name.startswith("shifted") else [-1.0, 1.0]
    return OpInfo("special_" + name, _special(name), [
        Sample((A((3, 5), low, high), A((5,), values=[0.0, 1.0, 2.0, 5.0, 7.0])), name="degrees"),
        Sample((A((2, 12), low, high),
                A((12,), values=[-1.0, 0.0, 1.0, 2.0, 3.0, 4.0, 6.0, 7.0, 9.0, 10.0, 12.0, 2.7])),
               name="high_degrees"),
        Sample((A((3, 4), low, high), 3), name="scalar_degree"),
        Sample((A((3, 4), low, high), 11), name="scalar_high_degree"),
        Sample((0.5 * (low + high) + 0.13, A((6,), values=[0.0, 1.0, 2.0, 3.0, 8.0, 10.0])),
               name="scalar_x"),
        Sample((A((3, 4), low, high), A((4,), 0, 9, dtype="int64")), name="int_degrees"),
        Sample((A((2, 1), values=[[ends[0]], [ends[1]]]), A((10,), values=[float(k) for k in range(10)])),
               name="ends"),
        Sample((A((3, 4), -3, 3), A((4,), values=[0.0, 2.0, 5.0, 8.0])), name="outside"),
    ], grad=False, rtol=1e-5)


_POLY = [_polynomial(name) for name in _POLYNOMIALS] + [
    OpInfo("special_polynomial_int", lambda lib, x, n: lib.special.legendre_polynomial_p(x, n),
           [Sample((A((4,), -3, 3), A((4,), 0, 5)))], dtypes=("int64",), grad=False),
]

_ALIASES = [
    OpInfo("special_softmax", lambda lib, x, d, **k: lib.special.softmax(x, d, **k), [
        Sample((A((3, 4)), 1), name="dim1"), Sample((A((3, 4)), 0), {"dtype": None}, name="dim0")]),
    OpInfo("special_log_softmax", lambda lib, x, d, **k: lib.special.log_softmax(x, d, **k), [
        Sample((A((3, 4)), 1), name="dim1"), Sample((A((3, 4)), -1), name="last")]),
    OpInfo("special_logsumexp", lambda lib, x, d, **k: lib.special.logsumexp(x, d, **k), [
        Sample((A((3, 4)), 1), name="dim1"), Sample((A((3, 4)), (0, 1)), {"keepdim": True}, name="keep")]),
    OpInfo("special_aliases", lambda lib, x: (
        lib.special.erf(x), lib.special.erfc(x), lib.special.expit(x), lib.special.exp2(x),
        lib.special.expm1(x), lib.special.gammaln(x + 3), lib.special.psi(x + 3),
        lib.special.digamma(x + 3), lib.special.log1p(x + 3), lib.special.erfinv(x / 3),
        lib.special.logit(x / 5 + 0.5), lib.special.round(x), lib.special.xlogy(x, x + 3)),
        [Sample((A((3, 4), avoid=[-1.5, -0.5, 0.5, 1.5]),))], gradgrad=False),
]

OPS = _NO_GRAD + _WITH_GRAD + _INT + _BINARY + _GAMMA_FAMILY + _POLY + _ALIASES
