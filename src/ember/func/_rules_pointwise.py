"""Batching rules of elementwise ops: mapped dimensions to the front, ranks aligned for
broadcasting, then the op itself once on the whole batch."""
from .._tensor import Tensor
from ._dispatch import _is_inplace, dispatch, register
from ._rules_common import front, is_batched, tree_map, wrap_outputs

__all__ = ["elementwise", "ELEMENTWISE"]

_UNARY = """abs absolute acos acosh arccos arccosh arcsin arcsinh arctan arctanh asin asinh atan
atanh ceil cos cosh deg2rad digamma erf erfc erfinv exp exp2 expm1 fix floor frac isfinite isinf
isnan isneginf isposinf lgamma log log10 log1p log2 logit nan_to_num rad2deg reciprocal round
rsqrt sgn sigmoid sign signbit sin sinh sqrt tan tanh trunc neg negative square positive conj
angle sinc i0 mvlgamma polygamma bitwise_not logical_not relu""".split()
_BINARY = """add arctan2 atan2 copysign div divide float_power floor_divide fmax fmin fmod frexp gcd
heaviside hypot igamma igammac lcm ldexp logaddexp logaddexp2 maximum minimum mul multiply nextafter pow
remainder rsub sub subtract true_divide xlogy bitwise_and bitwise_left_shift bitwise_or
bitwise_right_shift bitwise_xor eq ge greater greater_equal gt le less less_equal logical_and
logical_or logical_xor lt ne not_equal isclose addcdiv addcmul clamp clamp_max clamp_min clip
lerp where""".split()
_METHODS_ONLY = """float double half bfloat16 long int short char byte bool to type type_as clone
contiguous detach cpu cuda zero_ copy_ fill_ masked_fill masked_fill_ __add__ __radd__ __sub__
__rsub__ __mul__ __rmul__ __truediv__ __rtruediv__ __floordiv__ __rfloordiv__ __mod__ __rmod__
__pow__ __rpow__ __and__ __rand__ __or__ __ror__ __xor__ __rxor__ __lshift__ __rshift__
__rlshift__ __rrshift__ __neg__ __pos__ __abs__ __invert__ __lt__ __le__ __gt__ __ge__ __eq__
__ne__ __iadd__ __isub__ __imul__ __itruediv__ __ifloordiv__ __imod__ __ipow__ __iand__ __ior__
__ixor__ __ilshift__ __irshift__ real imag""".split()
_LIKE = "zeros_like ones_like full_like empty_like".split()
_SPECIAL = """airy_ai bessel_j0 bessel_j1 bessel_y0 bessel_y1 chebyshev_polynomial_t
chebyshev_polynomial_u chebyshev_polynomial_v chebyshev_polynomial_w digamma entr erf erfc erfcx
erfinv exp2 expit expm1 gammainc gammaincc gammaln hermite_polynomial_h hermite_polynomial_he i0
i0e i1 i1e laguerre_polynomial_l legendre_polynomial_p log1p log_ndtr logit modified_bessel_i0
modified_bessel_i1 modified_bessel_k0 modified_bessel_k1 multigammaln ndtr ndtri polygamma psi
round scaled_modified_bessel_k0 scaled_modified_bessel_k1 shifted_chebyshev_polynomial_t
shifted_chebyshev_polynomial_u shifted_chebyshev_polynomial_v shifted_chebyshev_polynomial_w sinc
spherical_bessel_j0 xlog1py xlogy zeta""".split()
_ACTIVATIONS = """celu elu gelu hardshrink hardsigmoid hardswish hardtanh leaky_relu logsigmoid mish
relu relu6 selu sigmoid silu softplus softshrink softsign tanh tanhshrink threshold celu_ elu_
hardtanh_ leaky_relu_ relu_ selu_ threshold_""".split()

ELEMENTWISE = (_UNARY + _BINARY + _LIKE + ["." + n for n in _METHODS_ONLY]
               + ["." + n + "_" for n in _UNARY + _BINARY if n not in ("where", "isclose")]
               + ["special." + n for n in _SPECIAL] + ["F." + n for n in _ACTIVATIONS])


def _tensors(obj, out):
    if isinstance(obj, Tensor):
        out.append(obj)
    elif type(obj) in (tuple, list):
        for x in obj:
            _tensors(x, out)
    elif type(obj) is dict:
        for x in obj.values():
            _tensors(x, out)
    return out


def _kind(t):
    if t.is_complex():
        return 3
    if t.is_floating_point():
        return 2
    return 0 if str(t.dtype).endswith("bool") else 1


def elementwise(fn, level, args, kwargs):
    """Mapped dimensions first; a mapped operand of fewer dimensions than the widest operand
    gets size-1 dimensions after its mapped one, so that broadcasting lines samples up."""
    tensors = _tensors((args, kwargs), [])
    rank = max(t.ndim for t in tensors)
    for t in tensors:
        # a mapped 0-d operand takes part in type promotion as a dimensioned one: where that
        # changes the result's dtype (another operand of its kind, bool/int/float/complex, with
        # another dtype), the samples run one by one
        if is_batched(t, level) and t.ndim == 0 and any(
                u.dtype != t.dtype and _kind(u) == _kind(t) for u in tensors):
            return NotImplemented
    inplace = _is_inplace(getattr(fn, "__name__", ""), kwargs)
    self = args[0] if inplace else None

    def align(x):
        if not is_batched(x, level):
            return x
        v = front(x, level)
        missing = rank - x.ndim
        if missing and x is not self:
            shape = tuple(v.shape)
            v = v.reshape(shape[:1] + (1,) * missing + shape[1:])
        return v

    out = dispatch(fn, tree_map(align, args), tree_map(align, kwargs))
    if inplace and is_batched(self, level):
        return self
    return wrap_outputs(out, level)


def _scalar_value(fn, level, args, kwargs):
    """masked_fill and fill_ take a 0-d value: a mapped one goes to the per-sample loop."""
    value = args[-1] if len(args) > 1 else kwargs.get("value")
    name = getattr(fn, "__name__", "")
    if is_batched(value, level) and name == "masked_fill" and len(args) == 3 and not kwargs:
        from ._dispatch import original
        x, mask, value = args
        if value.ndim != 0:
            return NotImplemented
        return dispatch(original("where"), (mask, value.to(x.dtype), x), {})
    if is_batched(value, level):
        return NotImplemented
    return elementwise(fn, level, args, kwargs)


register(elementwise, *ELEMENTWISE)
register(_scalar_value, ".masked_fill", ".masked_fill_", ".fill_")
