"""``ember.special``: the special functions of ``torch.special``.

The functions ember already has (erf, erfc, erfinv, expm1, exp2, log1p, lgamma as gammaln,
digamma as psi, sigmoid as expit, logit, round, xlogy, logsumexp, softmax, log_softmax) are
the same functions here, with the same gradient nodes; the others live in ``_unary`` (Bessel,
Airy and normal-distribution functions, erfcx, entr, sinc), ``_binary`` (xlog1py, zeta, the
incomplete gamma functions, polygamma, multigammaln) and ``_polynomials`` (the orthogonal
polynomials), over the array kernels of ``ember._backend`` (``special_bessel``,
``special_normal``, ``special_gamma``, ``orthogonal_polynomials``).
"""
from ..nn.functional import log_softmax as _nn_log_softmax, softmax as _nn_softmax
from ..ops._common import Tensor, wrap_dim as _wrap_dim
from ..ops.pointwise import xlogy
from ..ops.reduce import logsumexp
from ..ops.unary import digamma, erf, erfc, erfinv, exp2, expm1, lgamma as gammaln, log1p, logit
from ..ops.unary import round as _round, sigmoid as expit
from ._common import check_tensor as _check_tensor, refuse as _refuse, refuse_integers as _refuse_integers
from ._binary import gammainc, gammaincc, multigammaln, polygamma, xlog1py, zeta
from ._polynomials import (
    chebyshev_polynomial_t, chebyshev_polynomial_u, chebyshev_polynomial_v, chebyshev_polynomial_w,
    hermite_polynomial_h, hermite_polynomial_he, laguerre_polynomial_l, legendre_polynomial_p,
    shifted_chebyshev_polynomial_t, shifted_chebyshev_polynomial_u, shifted_chebyshev_polynomial_v,
    shifted_chebyshev_polynomial_w,
)
from ._unary import (
    airy_ai, bessel_j0, bessel_j1, bessel_y0, bessel_y1, entr, erfcx, i0, i0e, i1, i1e, log_ndtr,
    modified_bessel_i0, modified_bessel_i1, modified_bessel_k0, modified_bessel_k1, ndtr, ndtri,
    scaled_modified_bessel_k0, scaled_modified_bessel_k1, sinc, spherical_bessel_j0,
)

psi = digamma


def round(input, *, decimals=0, out=None):
    """Rounds the elements of ``input`` to the nearest integer (halves to even), or to
    ``decimals`` decimal places. Unlike ``ember.round``, integer and bool tensors are refused,
    as torch.special.round refuses them."""
    _check_tensor(input, "special_round")
    _refuse_integers(input._data.dtype, "round_vml_cpu" if decimals == 0 else "round_cpu")
    return _round(input, decimals=decimals, out=out)


def _softmax_dtype_check(input, dim, dtype, name):
    """torch's refusal of integer, bool and complex softmaxes, named after its kernel."""
    _check_tensor(input, name)
    computed = input._data.dtype if dtype is None else dtype.np
    if computed.kind in "biuc":
        ndim = input._data.ndim
        last = ndim == 0 or _wrap_dim(dim, ndim) == ndim - 1
        kernel = f"{name}{'_lastdim' if last else ''}_kernel_impl"
        _refuse_integers(computed, kernel)
        _refuse(computed, kernel, "c")


def softmax(input, dim, *, dtype=None):
    """Softmax along ``dim``: ``exp(input) / sum(exp(input))``, in ``dtype`` when given (the
    input is cast first). Float inputs only, as torch's."""
    if dtype is None and input.__class__ is Tensor and input._data.dtype.kind == "f":   # (nothing to refuse)
        return _nn_softmax(input, dim)
    _softmax_dtype_check(input, dim, dtype, "softmax")
    return _nn_softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    """Logarithm of the softmax along ``dim``, computed directly (more accurate than
    ``softmax(...).log()``), in ``dtype`` when given. Float inputs only, as torch's."""
    if dtype is None and input.__class__ is Tensor and input._data.dtype.kind == "f":   # (nothing to refuse)
        return _nn_log_softmax(input, dim)
    _softmax_dtype_check(input, dim, dtype, "log_softmax")
    return _nn_log_softmax(input, dim, dtype=dtype)


__all__ = [
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
    "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma",
    "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc",
    "gammaln", "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1", "i1e",
    "laguerre_polynomial_l", "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax",
    "logit", "logsumexp", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
    "modified_bessel_k1", "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round",
    "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "sinc", "softmax", "spherical_bessel_j0", "xlog1py",
    "xlogy", "zeta",
]
