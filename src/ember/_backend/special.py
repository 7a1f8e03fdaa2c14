"""Special functions NumPy lacks: erf, erfc, erfinv, lgamma, digamma, trigamma.

On CuPy arrays they come from ``cupyx.scipy.special``. On NumPy arrays they are evaluated here,
vectorised, in the input's precision (float32 or float64; half-precision inputs compute in
float32), by published approximations:

- erf, erfc: W. J. Cody, "Rational Chebyshev approximations for the error function",
  Math. Comp. 23 (1969), in three ranges, with ``exp(-x*x)`` split so that the large square is
  exact (Cody's CALERF). erf in float32 is instead ``tanh(x * P(x*x))`` with a polynomial ``P``
  fitted for it (``scripts/fit_erf_float32.py``): within 4 ulp on the whole line, in about a
  dozen NumPy passes over cache-sized blocks, several times faster than the ranges.
- lgamma: W. J. Cody and K. E. Hillstrom, "Chebyshev approximations for the natural logarithm
  of the gamma function", Math. Comp. 21 (1967), rational approximations on (0, 12] and
  Stirling's series beyond (Cody and Stoltz's ALGAMA), reflected for negative arguments.
- erfinv: M. Giles, "Approximating the erfinv function" (GPU Computing Gems, 2011), polished
  by Newton steps on erf (on erfc in the tails, where ``1 - |y|`` is exact).
- digamma, trigamma: the recurrence ``psi(x) = psi(x + 1) - 1/x`` up to x >= 10, the
  asymptotic (Bernoulli) series there, reflection for negative arguments.

Each function computes every range only on the elements that fall into it.
"""
import math

import numpy as np

from . import meta
from .choice import KernelChoice


def _is_numpy(xp):
    return xp is np


def _cupy_special(name):
    """``name`` from the array library's scipy.special: CuPy's, or for meta arrays a function
    giving a meta result of the arguments' broadcast shape (at least float32)."""
    def call(*args):
        if any(a.__class__ is meta.MetaArray for a in args):
            arrays = [a for a in args if isinstance(a, np.ndarray)]
            return meta.empty(np.broadcast_shapes(*(a.shape for a in arrays)),
                              np.result_type(np.float32, *(a.dtype for a in arrays)))
        import cupyx.scipy.special as sp
        out = getattr(sp, name)(*args)
        # CuPy's special functions have no float16 loops: they give float64 for float16 input
        if out.dtype != np.float16 and all(getattr(a, "dtype", np.float16) == np.float16 for a in args):
            out = out.astype(np.float16)
        return out
    return call


# ---------------------------------------------------------------------------------------------
# Helpers


def _working(x):
    """``x`` as the float array to compute on: float32 and float64 as they are, other floats
    (float16, bfloat16) and integers in float32."""
    if x.dtype == np.float64 or x.dtype == np.float32:
        return x
    return x.astype(np.float32)


def _polynomial(t, coeffs):
    """``coeffs[0] * t**n + ... + coeffs[n]`` (highest power first), as a new array."""
    acc = t * coeffs[0] if coeffs[0] != 1 else t.copy()
    for c in coeffs[1:-1]:
        acc += c
        acc *= t
    acc += coeffs[-1]
    return acc


def _rational(t, numerator, denominator):
    """``numerator(t) / denominator(t)`` of two coefficient lists (highest power first)."""
    num = _polynomial(t, numerator)
    num /= _polynomial(t, denominator)
    return num


def _by_ranges(x, pieces):
    """``out[mask] = fn(x[mask])`` for each ``(mask, fn)`` of disjoint boolean masks; a mask
    that holds every element is evaluated on ``x`` itself (no gathering). Gathers and scatters
    go through index arrays: NumPy's boolean indexing is ten times slower on mixed masks."""
    out = None
    flat = None
    for mask, fn in pieces:
        index = np.flatnonzero(mask)
        if index.size == x.size:
            return fn(x)
        if index.size:
            if out is None:
                flat = x.reshape(-1)
                out = np.empty_like(flat)
            out[index] = fn(flat.take(index))
    return out.reshape(x.shape) if out is not None else np.empty_like(x)


def _set_where(out, mask, value):
    """``out[mask] = value`` through an index array (see ``_by_ranges``)."""
    index = np.flatnonzero(mask)
    if index.size:
        out.put(index, value)


def _sin_pi(x):
    """``sin(pi * x)`` with the exact reduction ``x - round(x)`` (zero at every integer, so
    poles of the reflection formulas come out exactly); the sign follows ``sin(pi * x)``."""
    n = np.rint(x)
    r = x - n
    s = np.sin(r * math.pi)
    odd = np.fmod(n, 2) != 0
    return np.where(odd, -s, s)


def _evaluate(fn, x):
    """``fn`` of the float array ``_working(x)``, in ``x``'s dtype and shape (a 0-d input is
    computed as one element: NumPy's operators would turn it into a scalar)."""
    w = np.ascontiguousarray(_working(x))  # flat indices then address the flattened views
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        result = fn(w.reshape(1) if w.ndim == 0 else w)
    return result.reshape(x.shape).astype(x.dtype, copy=False)


# Arrays of up to this many elements go element by element through Python's ``math`` module (C,
# in double precision) where it has the function: fewer calls than the vectorised formulas make.
SCALAR_PATH_MAX_ELEMENTS = 32


def _evaluate_small(scalar, x):
    """``scalar`` of each element of ``x`` (float), in ``x``'s dtype and shape."""
    values = [scalar(v) for v in x.reshape(-1).tolist()]
    return np.array(values, dtype=np.float64).reshape(x.shape).astype(x.dtype)


def _lgamma_scalar(v):
    try:
        return math.lgamma(v)
    except (ValueError, OverflowError):   # poles (0, -1, ...) and overflow: +inf, as torch
        return math.inf


# ---------------------------------------------------------------------------------------------
# erf, erfc (Cody)

_ERF_SMALL = 0.46875
_ERF_A = (1.85777706184603153e-1, 3.16112374387056560e00, 1.13864154151050156e02,
          3.77485237685302021e02, 3.20937758913846947e03)
_ERF_B = (1.0, 2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03,
          2.84423683343917062e03)
_ERFC_C = (2.15311535474403846e-8, 5.64188496988670089e-1, 8.88314979438837594e00,
           6.61191906371416295e01, 2.98635138197400131e02, 8.81952221241769090e02,
           1.71204761263407058e03, 2.05107837782607147e03, 1.23033935479799725e03)
_ERFC_D = (1.0, 1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02,
           1.62138957456669019e03, 3.29079923573345963e03, 4.36261909014324716e03,
           3.43936767414372164e03, 1.23033935480374942e03)
_ERFC_P = (1.63153871373020978e-2, 3.05326634961232344e-1, 3.60344899949804439e-1,
           1.25781726111229246e-1, 1.60837851487422766e-2, 6.58749161529837803e-4)
_ERFC_Q = (1.0, 2.56852019228982242e00, 1.87295284992346047e00, 5.27905102951428412e-1,
           6.05183413124413191e-2, 2.33520497626869185e-3)
_INV_SQRT_PI = 0.56418958354775628695
# beyond these erfc underflows to 0 (clipping there also keeps inf out of the formulas)
_ERFC_ZERO_BEYOND = {np.dtype(np.float64): 28.0, np.dtype(np.float32): 10.5}


def _erf_small(x):
    """erf on |x| <= 0.46875: ``x * P(x^2) / Q(x^2)``."""
    r = _rational(x * x, _ERF_A, _ERF_B)
    r *= x
    return r


def _times_exp_minus_square(r, y):
    """``r * exp(-y*y)``, with ``y*y`` split as ``s*s + (y - s)(y + s)``, ``s = trunc(16 y)/16``,
    so that the large part of the exponent is exact."""
    s = np.trunc(y * 16.0)
    s *= 1.0 / 16.0
    rest = (y - s) * (y + s)
    s *= s
    np.negative(s, out=s)
    r *= np.exp(s, out=s)
    np.negative(rest, out=rest)
    r *= np.exp(rest, out=rest)
    return r


def _erfc_mid(y):
    """erfc on 0.46875 < y <= 4."""
    return _times_exp_minus_square(_rational(y, _ERFC_C, _ERFC_D), y)


def _erfc_large(y):
    """erfc on y > 4 (inf and nan included)."""
    y = np.minimum(y, _ERFC_ZERO_BEYOND[y.dtype])
    t = 1.0 / (y * y)
    r = _rational(t, _ERFC_P, _ERFC_Q)
    r *= t
    np.subtract(_INV_SQRT_PI, r, out=r)
    r /= y
    return _times_exp_minus_square(r, y)


def _erf_ranges(ax):
    small = ax <= _ERF_SMALL
    mid = ax <= 4.0
    mid &= ~small
    return small, mid, ~(small | mid)


def _erf(x):
    small, mid, large = _erf_ranges(np.abs(x))

    def outer(erfc_pos):
        def fn(v):
            r = erfc_pos(np.abs(v))
            np.subtract(1.0, r, out=r)
            return np.copysign(r, v, out=r)
        return fn

    return _by_ranges(x, [(small, _erf_small), (mid, outer(_erfc_mid)),
                          (large, outer(_erfc_large))])


def _erfc(x):
    small, mid, large = _erf_ranges(np.abs(x))

    def inner(v):
        r = _erf_small(v)
        return np.subtract(1.0, r, out=r)

    def outer(erfc_pos):
        def fn(v):
            r = erfc_pos(np.abs(v))
            return np.where(v < 0, 2.0 - r, r)
        return fn

    return _by_ranges(x, [(small, inner), (mid, outer(_erfc_mid)), (large, outer(_erfc_large))])


def erf(xp, x):
    if not _is_numpy(xp):
        return _cupy_special("erf")(x)
    if x.size <= SCALAR_PATH_MAX_ELEMENTS:
        return _evaluate_small(math.erf, x)
    if _working(x).dtype == np.float32:
        return _evaluate(erf_float32, x)
    return _evaluate(_erf, x)


def erfc(xp, x):
    if not _is_numpy(xp):
        return _cupy_special("erfc")(x)
    if x.size <= SCALAR_PATH_MAX_ELEMENTS:
        return _evaluate_small(math.erfc, x)
    return _evaluate(_erfc, x)


# ---------------------------------------------------------------------------------------------
# erf in float32: tanh(x * P(x*x))

# P, highest power first: a weighted least-squares fit of atanh(erf(x)) / x on x*x in [0, 16]
# (``scripts/fit_erf_float32.py``). Evaluated in float32 it is within 4 ulp of erf everywhere
# (``tests/test_erf_float32.py``); P is positive and growing beyond the fitted range, so tanh
# rounds to +-1 there as erf does, and inf and nan come out as erf's.
_ERF_TANH_P = (1.4185218649257799e-07, -5.668475124772891e-06, 8.763732561210056e-05,
               -0.000619784658049693, -0.000191830798296355, 0.10276905578841103,
               1.1283792743069638)
# Elements per block of the float32 kernels: a block and two temporaries (1.5 MiB) stay in a
# core's L2 cache. Whole arrays leave the cache; much smaller blocks pay the call overhead, and
# on two threads the threads wait for each other's GIL (benchmarks/gelu_erf.py).
FLOAT32_BLOCK = 1 << 17


def erf_tanh_coefficients(scale=1.0):
    """The float32 coefficients of ``Q`` with ``erf(scale * x) = tanh(x * Q(x*x))``, highest
    power first: ``Q(t) = scale * P(scale**2 * t)``."""
    degree = len(_ERF_TANH_P) - 1
    return tuple(np.float32(c * scale ** (2 * (degree - i) + 1))
                 for i, c in enumerate(_ERF_TANH_P))


_ERF_TANH_Q = erf_tanh_coefficients()


def erf_tanh_into(x, out, square, coeffs):
    """``tanh(x * Q(x*x))`` of the float32 array ``x`` into ``out`` (not ``x``), with ``coeffs``
    from ``erf_tanh_coefficients``; ``square`` (x's size) is left holding ``x * x``."""
    t = np.multiply(x, x, out=square)
    np.multiply(t, coeffs[0], out=out)
    for c in coeffs[1:-1]:
        out += c
        out *= t
    out += coeffs[-1]
    out *= x
    return np.tanh(out, out=out)


def by_blocks(kernel, out, *arrays):
    """``kernel(*blocks, out_block, scratch_block)`` over runs of ``FLOAT32_BLOCK`` elements of
    the same-shaped float32 ``arrays`` and the C-contiguous ``out`` (a new float32 array when
    None), with one float32 scratch buffer of a block; returns ``out``."""
    if out is None:
        out = np.empty(arrays[0].shape, np.float32)
    flat_out = out.reshape(-1)
    flat = [a.reshape(-1) for a in arrays]
    scratch = np.empty(min(FLOAT32_BLOCK, flat_out.size), np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        for start in range(0, flat_out.size, FLOAT32_BLOCK):
            stop = min(flat_out.size, start + FLOAT32_BLOCK)
            kernel(*[a[start:stop] for a in flat], flat_out[start:stop],
                   scratch[:stop - start])
    return out


def erf_float32(x, out=None):
    """erf of a float32 array (into ``out`` when given)."""
    return by_blocks(lambda xb, ob, sq: erf_tanh_into(xb, ob, sq, _ERF_TANH_Q), out, x)


# ---------------------------------------------------------------------------------------------
# erfinv (Giles, then Newton)

_GILES_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                  0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_GILES_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
               -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _giles(a):
    """Giles' single-precision erfinv of ``a`` in [0, 1)."""
    w = -np.log((1.0 - a) * (1.0 + a))
    central = w < 5.0
    return a * _by_ranges(w, [(central, lambda v: _polynomial(v - 2.5, _GILES_CENTRAL)),
                              (~central, lambda v: _polynomial(np.sqrt(v) - 3.0, _GILES_TAIL))])


def _far_tail_guess(a):
    """erfinv of ``a`` with ``1 - a`` below 1e-7 (beyond Giles' single-precision range), from
    the asymptotic ``erfc(r) ~ exp(-r^2) / (r sqrt(pi)) * (1 - 1/(2 r^2))`` by three
    fixed-point steps on ``r^2``."""
    minus_log_rest = -np.log(1.0 - a)
    r2 = minus_log_rest
    for _ in range(3):
        r2 = minus_log_rest - 0.5 * np.log(math.pi * r2) + np.log1p(-0.5 / r2)
    return np.sqrt(r2)


def _erfinv_guess(a):
    far = a > 1.0 - 1e-7
    return _by_ranges(a, [(far, _far_tail_guess), (~far, _giles)])


def _newton_erfinv(r, a, steps):
    """``steps`` Newton steps on ``erf(r) = a`` (``a`` in [0, 1)); where a > 1/2 on
    ``log(erfc(r)) = log(1 - a)`` instead, whose right side is exact and which is close to
    linear in the far tail (where Giles' guess is rough)."""
    tail = a > 0.5
    log_rest = np.log(1.0 - a)
    for _ in range(steps):
        slope = _TWO_OVER_SQRT_PI * np.exp(-(r * r))
        c = _erfc(r)
        residual = np.where(tail, (log_rest - np.log(c)) * c, _erf(r) - a)
        r = r - residual / slope
    return r


def _erfinv(y):
    a = np.abs(y)
    inside = a < 1.0
    steps = 2 if y.dtype == np.float64 else 1
    r = _by_ranges(a, [(inside, lambda v: _newton_erfinv(_erfinv_guess(v), v, steps)),
                       (~inside, lambda v: np.where(v == 1.0, y.dtype.type(np.inf), y.dtype.type(np.nan)))])
    return np.copysign(r, y, out=r)


def erfinv(xp, x):
    if not _is_numpy(xp):
        return _cupy_special("erfinv")(x)
    return _evaluate(_erfinv, x)


# ---------------------------------------------------------------------------------------------
# lgamma (Cody and Hillstrom)

_LGAMMA_D1 = -5.772156649015328605195174e-1
_LGAMMA_P1 = (4.945235359296727046734888e0, 2.018112620856775083915565e2,
              2.290838373831346393026739e3, 1.131967205903380828685045e4,
              2.855724635671635335736389e4, 3.848496228443793359990269e4,
              2.637748787624195437963534e4, 7.225813979700288197698961e3)
_LGAMMA_Q1 = (1.0, 6.748212550303777196073036e1, 1.113332393857199323513008e3,
              7.738757056935398733233834e3, 2.763987074403340708898585e4,
              5.499310206226157329794414e4, 6.161122180066002127833352e4,
              3.635127591501940507276287e4, 8.785536302431013170870835e3)
_LGAMMA_D2 = 4.227843350984671393993777e-1
_LGAMMA_P2 = (4.974607845568932035012064e0, 5.424138599891070494101986e2,
              1.550693864978364947665077e4, 1.847932904445632425417223e5,
              1.088204769468828767498470e6, 3.338152967987029735917223e6,
              5.106661678927352456275255e6, 3.074109054850539556250927e6)
_LGAMMA_Q2 = (1.0, 1.830328399370592604055942e2, 7.765049321445005871323047e3,
              1.331903827966074194402448e5, 1.136705821321969608938755e6,
              5.267964117437946917577538e6, 1.346701454311101692290052e7,
              1.782736530353274213975932e7, 9.533095591844353613395747e6)
_LGAMMA_D4 = 1.791759469228055000094023e0
_LGAMMA_P4 = (1.474502166059939948905062e4, 2.426813369486704502836312e6,
              1.214755574045093227939592e8, 2.663432449630976949898078e9,
              2.940378956634553899906876e10, 1.702665737765398868392998e11,
              4.926125793377430887588120e11, 5.606251856223951465078242e11)
_LGAMMA_Q4 = (-1.0, 2.690530175870899333379843e3, 6.393885654300092398984238e5,
              4.135599930241388052042842e7, 1.120872109616147941376570e9,
              1.488613728678813811542398e10, 1.016803586272438228077304e11,
              3.417476345507377132798597e11, 4.463158187419713286462081e11)
_STIRLING_C = (5.7083835261e-03, -1.910444077728e-03, 8.4171387781295e-04,
               -5.952379913043012e-04, 7.93650793500350248e-04,
               -2.777777777777681622553e-03, 8.333333333333333331554247e-02)
_HALF_LOG_2PI = 0.9189385332046727417803297
_PNT68 = 0.6796875


def _near(t, d, numerator, denominator):
    """``t * (d + t * P(t) / Q(t))``: lgamma near its zeros at 1 and 2 (t = x - 1, x - 2)."""
    r = _rational(t, numerator, denominator)
    r *= t
    r += d
    r *= t
    r += 0.0  # +0 (not -0) at x = 1 and x = 2
    return r


def _lgamma_tiny(y):
    return -np.log(y)


def _lgamma_below_half(y):
    return _near(y, _LGAMMA_D1, _LGAMMA_P1, _LGAMMA_Q1) - np.log(y)


def _lgamma_below_pnt68(y):
    return _near((y - 0.5) - 0.5, _LGAMMA_D2, _LGAMMA_P2, _LGAMMA_Q2) - np.log(y)


def _lgamma_to_3_halves(y):
    return _near((y - 0.5) - 0.5, _LGAMMA_D1, _LGAMMA_P1, _LGAMMA_Q1)


def _lgamma_to_4(y):
    return _near(y - 2.0, _LGAMMA_D2, _LGAMMA_P2, _LGAMMA_Q2)


def _lgamma_to_12(y):
    t = y - 4.0
    r = _rational(t, _LGAMMA_P4, _LGAMMA_Q4)
    r *= t
    r += _LGAMMA_D4
    return r


def _lgamma_large(y):
    """Stirling's series with Cody's minimax correction, y > 12 (inf included)."""
    t = 1.0 / (y * y)
    corr = _polynomial(t, _STIRLING_C)
    corr /= y
    corr += _HALF_LOG_2PI - 0.5
    main = np.log(y)
    main -= 1.0
    main *= y - 0.5  # (y - 1/2)(log y - 1) - 1/2 = (y - 1/2) log y - y, and inf at inf
    corr += main
    return corr


def _lgamma_positive(y):
    """lgamma of y >= 0 (0 and inf give inf, nan gives nan)."""
    eps = np.finfo(y.dtype).eps
    tiny = y <= eps
    r1 = y <= 0.5
    r1 &= ~tiny
    r2 = y < _PNT68
    r2 &= y > 0.5
    r3 = y <= 1.5
    r3 &= y >= _PNT68
    r4 = y <= 4.0
    r4 &= y > 1.5
    r5 = y <= 12.0
    r5 &= y > 4.0
    r6 = ~(tiny | r1 | r2 | r3 | r4 | r5)
    return _by_ranges(y, [(tiny, _lgamma_tiny), (r1, _lgamma_below_half),
                          (r2, _lgamma_below_pnt68), (r3, _lgamma_to_3_halves),
                          (r4, _lgamma_to_4), (r5, _lgamma_to_12), (r6, _lgamma_large)])


def _lgamma_negative(x):
    """Reflection, x < 0: ``Gamma(x) Gamma(-x) = -pi / (x sin(pi x))``; inf at the integers."""
    y = -x
    r = np.log(math.pi / np.abs(x * _sin_pi(x)))
    r -= _lgamma_positive(y)
    _set_where(r, x == np.floor(x), np.inf)
    return r


def _lgamma(x):
    eps = np.finfo(x.dtype).eps
    reflected = x < -eps
    return _by_ranges(x, [(reflected, _lgamma_negative),
                          (~reflected, lambda v: _lgamma_positive(np.abs(v)))])


def on_compiled_loop(name, numpy, loop="compute"):
    """The kernel choice for the special function ``name``: ``special_loops``' compiled loop
    (its function ``loop`` given ``name`` and the arrays after ``xp``) or ``numpy(xp, *arrays)``.
    Callers give it NumPy arrays the loop takes (``special_loops.applies``)."""
    def compiled(xp, *arrays):
        return getattr(_special_loops(), loop)(name, *arrays)
    return KernelChoice(name, onednn=compiled, numpy=numpy)


_loops_module = []


def _special_loops():
    """The module ``special_loops`` (which reads this module's tables), imported on first use."""
    if not _loops_module:
        from . import special_loops
        _loops_module.append(special_loops)
    return _loops_module[0]


def _applies(x):
    return _special_loops().applies(x)


def _lgamma_by_numpy(x):
    if x.size <= SCALAR_PATH_MAX_ELEMENTS:
        return _evaluate_small(_lgamma_scalar, x)
    return _evaluate(_lgamma, x)


_lgamma_choice = on_compiled_loop("lgamma", lambda xp, x: _lgamma_by_numpy(x))


def lgamma(xp, x):
    if not _is_numpy(xp):
        return _cupy_special("gammaln")(x)
    if _applies(x):   # (at every size: the compiled function of small tensors runs the loop)
        return _lgamma_choice(xp, x)
    return _lgamma_by_numpy(x)


# ---------------------------------------------------------------------------------------------
# digamma, trigamma

_SHIFT_TO = 10.0
# psi(x) ~ log x - 1/(2x) - sum B_2k / (2k x^2k): the sum's coefficients in 1/x^2, highest first
_DIGAMMA_SERIES = (-3617.0 / 8160.0, 1.0 / 12.0, -691.0 / 32760.0, 1.0 / 132.0, -1.0 / 240.0,
                   1.0 / 252.0, -1.0 / 120.0, 1.0 / 12.0, 0.0)
# psi'(x) ~ 1/x + 1/(2x^2) + sum B_2k / x^(2k+1): the sum times x, in 1/x^2, highest first
_TRIGAMMA_SERIES = (43867.0 / 798.0, -3617.0 / 510.0, 7.0 / 6.0, -691.0 / 2730.0, 5.0 / 66.0,
                    -1.0 / 30.0, 1.0 / 42.0, -1.0 / 30.0, 1.0 / 6.0, 0.0)


def _shift(y, term):
    """``(y + n, sum of term(y + k) for k < n)`` with n = 10 where y < 10 (else n = 0)."""
    low = np.flatnonzero(y < _SHIFT_TO)
    acc = np.zeros_like(y)
    if not low.size:
        return y, acc
    flat = y.reshape(-1)
    w = flat.take(low)
    total = np.zeros_like(w)
    for _ in range(int(_SHIFT_TO)):
        total += term(w)
        w += 1.0
    shifted = flat.copy()
    shifted[low] = w
    acc.put(low, total)
    return shifted.reshape(y.shape), acc


def _digamma_positive(y):
    """digamma of y > 0."""
    w, below = _shift(y, lambda v: 1.0 / v)
    inv = 1.0 / w
    t = inv * inv
    r = np.log(w)
    r -= 0.5 * inv
    r -= _polynomial(t, _DIGAMMA_SERIES)
    r -= below
    return r


def _digamma(x):
    negative = x < 0
    out = _by_ranges(x, [
        (negative, lambda v: _digamma_positive(1.0 - v) - math.pi / np.tan(math.pi * (v - np.rint(v)))),
        (~negative, lambda v: _digamma_positive(v))])
    # poles: -1/x at zero (-inf at +0, inf at -0), nan at the negative integers and -inf
    _set_where(out, negative & (x == np.floor(x)), np.nan)
    _set_where(out, (x == 0) & ~np.signbit(x), -np.inf)
    _set_where(out, (x == 0) & np.signbit(x), np.inf)
    return out


def _trigamma_of_positive(y):
    """trigamma of y >= 0 (inf at 0)."""
    w, below = _shift(y, lambda v: 1.0 / (v * v))
    inv = 1.0 / w
    t = inv * inv
    r = _polynomial(t, _TRIGAMMA_SERIES)  # sum B_2k / x^2k
    r += 0.5 * inv
    r += 1.0
    r *= inv
    r += below
    return r


def _trigamma(x):
    negative = x < 0

    def reflected(v):
        s = math.pi / _sin_pi(v)
        return s * s - _trigamma_of_positive(1.0 - v)

    return _by_ranges(x, [(negative, reflected), (~negative, _trigamma_of_positive)])


_digamma_choice = on_compiled_loop("digamma", lambda xp, x: _evaluate(_digamma, x))
_trigamma_choice = on_compiled_loop("trigamma", lambda xp, x: _evaluate(_trigamma, x))


def digamma(xp, x):
    if not _is_numpy(xp):
        return _cupy_special("digamma")(x)
    if _applies(x):
        return _digamma_choice(xp, x)
    return _evaluate(_digamma, x)


def trigamma(xp, x):
    if not _is_numpy(xp):
        out = _cupy_special("polygamma")(xp.asarray(1, dtype=x.dtype), x)
        return xp.where(x == -math.inf, math.nan, out)   # CuPy's is inf there, torch's NaN
    if _applies(x):
        return _trigamma_choice(xp, x)
    return _evaluate(_trigamma, x)
