"""ember.special's orthogonal polynomials ``P_n(x)``: Chebyshev (T, U, V, W and their
shifted forms), Hermite (physicists' H and probabilists' He), Laguerre and Legendre. Either
argument may be a number; degrees are truncated to integers and a negative one gives 0. Not
differentiable, as in torch."""
import numpy as np

from .. import _dtype
from .._backend import orthogonal_polynomials as kernels
from ..ops._common import Tensor, is_scalar, make, namespace_of
from ..ops.pointwise import _broadcast_check
from ._common import finish, on_special_loops, refuse

__all__ = []


def _polynomial(name, kernel, what):
    op = f"special_{name}"
    loop = kernel.__name__.removeprefix("shifted_") + "_polynomial"

    def fn(x, n, *, out=None):
        if not isinstance(x, Tensor) and not isinstance(n, Tensor):
            raise TypeError(f"{op}() received an invalid combination of arguments: neither "
                            "'x' nor 'n' is a Tensor")
        for arg, position, arg_name in ((x, 1, "x"), (n, 2, "n")):
            if not isinstance(arg, Tensor) and not is_scalar(arg):
                raise TypeError(f"{op}(): argument '{arg_name}' (position {position}) must be "
                                f"Tensor, not {type(arg).__name__}")
        common = _dtype.result_type_of(x, n) if isinstance(x, Tensor) else \
            _dtype.result_type_of(n, x)
        dtype = common.np if common.is_floating_point or common.is_complex else \
            _dtype.get_default_dtype().np
        refuse(dtype, f"{name}_cpu", "ch")
        if isinstance(x, Tensor) and isinstance(n, Tensor):
            _broadcast_check(op, x, n)
        tensor = x if isinstance(x, Tensor) else n
        xp = namespace_of(tensor._data)
        values_of_x = x._data if isinstance(x, Tensor) else x
        degrees = n._data if isinstance(n, Tensor) else n
        with np.errstate(all="ignore"):   # beyond the dtype's range: inf, as torch's; NaN kept
            values = xp.asarray(kernel(xp, values_of_x, degrees, dtype=dtype)).astype(dtype, copy=False)
        return finish(make(values), out)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{what} ``P_n(x)`` of degree ``n``."
    __all__.append(name)
    def taken():   # (whether shifted, the loops from one float dtype to the other)
        from .._backend import special_loops
        return name.startswith("shifted_"), tuple(special_loops.address(f"{loop}_{x}_{result}") or 0
                                                  for x, result in (("float32", "float64"), ("float64", "float32")))
    return on_special_loops("polynomial", (f"{loop}_float32_float32", f"{loop}_float64_float64"), taken=taken)(fn)


chebyshev_polynomial_t = _polynomial("chebyshev_polynomial_t", kernels.chebyshev_t,
                                     "The Chebyshev polynomial of the first kind")
chebyshev_polynomial_u = _polynomial("chebyshev_polynomial_u", kernels.chebyshev_u,
                                     "The Chebyshev polynomial of the second kind")
chebyshev_polynomial_v = _polynomial("chebyshev_polynomial_v", kernels.chebyshev_v,
                                     "The Chebyshev polynomial of the third kind")
chebyshev_polynomial_w = _polynomial("chebyshev_polynomial_w", kernels.chebyshev_w,
                                     "The Chebyshev polynomial of the fourth kind")
shifted_chebyshev_polynomial_t = _polynomial(
    "shifted_chebyshev_polynomial_t", kernels.shifted(kernels.chebyshev_t),
    "The shifted Chebyshev polynomial of the first kind, ``T_n(2 input - 1)``,")
shifted_chebyshev_polynomial_u = _polynomial(
    "shifted_chebyshev_polynomial_u", kernels.shifted(kernels.chebyshev_u),
    "The shifted Chebyshev polynomial of the second kind, ``U_n(2 input - 1)``,")
shifted_chebyshev_polynomial_v = _polynomial(
    "shifted_chebyshev_polynomial_v", kernels.shifted(kernels.chebyshev_v),
    "The shifted Chebyshev polynomial of the third kind, ``V_n(2 input - 1)``,")
shifted_chebyshev_polynomial_w = _polynomial(
    "shifted_chebyshev_polynomial_w", kernels.shifted(kernels.chebyshev_w),
    "The shifted Chebyshev polynomial of the fourth kind, ``W_n(2 input - 1)``,")
hermite_polynomial_h = _polynomial("hermite_polynomial_h", kernels.hermite_h,
                                   "The physicists' Hermite polynomial")
hermite_polynomial_he = _polynomial("hermite_polynomial_he", kernels.hermite_he,
                                    "The probabilists' Hermite polynomial")
laguerre_polynomial_l = _polynomial("laguerre_polynomial_l", kernels.laguerre_l,
                                    "The Laguerre polynomial")
legendre_polynomial_p = _polynomial("legendre_polynomial_p", kernels.legendre_p,
                                    "The Legendre polynomial")
