"""Window functions (torch.signal.windows): each returns a 1-D tensor of ``M`` points, symmetric
(``sym=True``, for filter design) or periodic (``sym=False``, for spectral analysis), computed
as torch computes it (a ``linspace`` of the points, then the window's formula), in float32 or
float64.

Common keyword arguments: ``sym``, ``dtype`` (the default dtype if None), ``layout`` (strided
only), ``device`` and ``requires_grad``.
"""
import math
from collections.abc import Iterable

from ... import _dtype
from ..._layout import strided
from ...ops.creation import arange, empty, linspace, ones, tensor
from ...ops.pointwise import minimum

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]


def _window_function_checks(function_name, M, dtype, layout):
    if M < 0:
        raise ValueError(f"{function_name} requires non-negative window length, got M={M}")
    if layout is not strided:
        raise ValueError(f"{function_name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (_dtype.float32, _dtype.float64):
        raise ValueError(f"{function_name} expects float32 or float64 dtypes, got: {dtype}")


def _points(start, end, M, dtype, device, requires_grad):
    return linspace(start, end, M, dtype=dtype, device=device, requires_grad=requires_grad)


def _empty(dtype, device, requires_grad):
    return empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)


def _one(dtype, device, requires_grad):
    return ones((1,), dtype=dtype, device=device, requires_grad=requires_grad)


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=strided, device=None,
                requires_grad=False):
    """Computes a window with an exponential waveform (the Poisson window):
    ``w_n = exp(-|n - c| / tau)``, ``c`` the ``center`` (the middle by default), ``tau`` the
    decay. ``center`` must be None for a symmetric window."""
    if dtype is None:
        dtype = _dtype.get_default_dtype()
    _window_function_checks("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return _empty(dtype, device, requires_grad)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    constant = 1 / tau
    k = _points(-center * constant, (-center + (M - 1)) * constant, M, dtype, device,
                requires_grad)
    return (-k.abs()).exp()


def cosine(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """Computes a window with a simple cosine waveform (the sine window):
    ``w_n = sin(pi (n + 0.5) / M)``."""
    if dtype is None:
        dtype = _dtype.get_default_dtype()
    _window_function_checks("cosine", M, dtype, layout)
    if M == 0:
        return _empty(dtype, device, requires_grad)
    start = 0.5
    constant = math.pi / (M + 1 if not sym and M > 1 else M)
    k = _points(start * constant, (start + (M - 1)) * constant, M, dtype, device, requires_grad)
    return k.sin()


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=strided, device=None,
             requires_grad=False):
    """Computes a window with a gaussian waveform: ``w_n = exp(-(n - (M-1)/2)^2 / (2 std^2))``.
    """
    if dtype is None:
        dtype = _dtype.get_default_dtype()
    _window_function_checks("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return _empty(dtype, device, requires_grad)
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    constant = 1 / (std * math.sqrt(2))
    k = _points(start * constant, (start + (M - 1)) * constant, M, dtype, device, requires_grad)
    return (-k ** 2).exp()


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=strided, device=None,
           requires_grad=False):
    """Computes the Kaiser window: ``w_n = I_0(beta sqrt(1 - (2n/(M-1) - 1)^2)) / I_0(beta)``,
    ``I_0`` the zeroth order modified Bessel function of the first kind."""
    from ...special import i0
    if dtype is None:
        dtype = _dtype.get_default_dtype()
    _window_function_checks("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    if M == 0:
        return _empty(dtype, device, requires_grad)
    if M == 1:
        return _one(dtype, device, requires_grad)
    beta = tensor(beta, dtype=dtype, device=device)
    start = -beta
    constant = 2.0 * beta / (M if not sym else M - 1)
    end = minimum(beta, start + (M - 1) * constant)
    k = _points(start.item(), end.item(), M, dtype, device, requires_grad)
    return i0((beta * beta - k.pow(2)).sqrt()) / i0(beta)


def hamming(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """Computes the Hamming window: ``w_n = 0.54 - 0.46 cos(2 pi n / (M - 1))``."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """Computes the Hann window: ``w_n = 0.5 - 0.5 cos(2 pi n / (M - 1))``."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """Computes the Blackman window:
    ``w_n = 0.42 - 0.5 cos(2 pi n / (M - 1)) + 0.08 cos(4 pi n / (M - 1))``."""
    if dtype is None:
        dtype = _dtype.get_default_dtype()
    _window_function_checks("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """Computes the Bartlett window (triangular): ``w_n = 1 - |2n / (M - 1) - 1|``."""
    if dtype is None:
        dtype = _dtype.get_default_dtype()
    _window_function_checks("bartlett", M, dtype, layout)
    if M == 0:
        return _empty(dtype, device, requires_grad)
    if M == 1:
        return _one(dtype, device, requires_grad)
    start = -1
    constant = 2 / (M if not sym else M - 1)
    k = _points(start, start + (M - 1) * constant, M, dtype, device, requires_grad)
    return 1 - k.abs()


def general_cosine(M, *, a, sym=True, dtype=None, layout=strided, device=None,
                   requires_grad=False):
    """Computes the general cosine window: ``w_n = sum_i (-1)^i a_i cos(2 pi i n / (M - 1))``
    for the coefficients ``a`` (a list or tuple)."""
    if dtype is None:
        dtype = _dtype.get_default_dtype()
    _window_function_checks("general_cosine", M, dtype, layout)
    if M == 0:
        return _empty(dtype, device, requires_grad)
    if M == 1:
        return _one(dtype, device, requires_grad)
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    constant = 2 * math.pi / (M if not sym else M - 1)
    k = _points(0, (M - 1) * constant, M, dtype, device, requires_grad)
    a_i = tensor([(-1) ** i * w for i, w in enumerate(a)], device=device, dtype=dtype,
                 requires_grad=requires_grad)
    i = arange(a_i.shape[0], dtype=a_i.dtype, device=a_i.device,
               requires_grad=a_i.requires_grad)
    return (a_i.unsqueeze(-1) * (i.unsqueeze(-1) * k).cos()).sum(0)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=strided, device=None,
                    requires_grad=False):
    """Computes the general Hamming window:
    ``w_n = alpha - (1 - alpha) cos(2 pi n / (M - 1))``."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def nuttall(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """Computes the minimum 4-term Blackman-Harris window according to Nuttall:
    ``w_n = 0.3635819 - 0.4891775 cos(z_n) + 0.1365995 cos(2 z_n) - 0.0106411 cos(3 z_n)``,
    ``z_n = 2 pi n / (M - 1)``."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym,
                          dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)
