"""torch's top-level window functions (``torch.hann_window``, ...), computed as ATen computes
them: ``arange(N)`` in the window's dtype, scaled, then the window's formula. ``periodic=True``
(the default) gives the first N points of the symmetric window of N + 1, for spectral
analysis; ``periodic=False`` the symmetric window of N (:mod:`ember.signal.windows` has the same
windows with scipy's ``sym`` convention)."""
import math

from . import _dtype
from ._layout import strided
from .ops.creation import arange, empty, ones, tensor

__all__ = ["bartlett_window", "blackman_window", "hamming_window", "hann_window",
           "kaiser_window"]


def _checks(name, window_length, dtype, layout):
    if layout is not None and layout is not strided:
        raise RuntimeError(f"{name} is not implemented for sparse types, got: {layout}")
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dtype}")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={window_length}")


def _window(name, window_length, periodic, dtype, layout, device, requires_grad, formula):
    """The window of ``formula(points, length)``, ``points = arange(length)`` in ``dtype``."""
    dtype = _dtype.get_default_dtype() if dtype is None else dtype
    _checks(name, window_length, dtype, layout)
    if window_length <= 1:
        make = empty if window_length == 0 else ones
        result = make((window_length,), dtype=dtype, device=device)
    else:
        length = window_length + 1 if periodic else window_length
        result = formula(arange(length, dtype=dtype, device=device), length)
        if periodic:
            result = result[:window_length].contiguous()
    return result.requires_grad_() if requires_grad else result


def _cosine_sum(alpha, beta):
    """``alpha - beta * cos(2 pi n / (N - 1))``."""
    return lambda n, length: (n * (2 * math.pi / (length - 1))).cos() * -beta + alpha


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   layout=strided, device=None, requires_grad=False):
    """Hamming window function: ``w[n] = alpha - beta cos(2 pi n / (N - 1))``."""
    return _window("hamming_window", window_length, periodic, dtype, layout, device,
                   requires_grad, _cosine_sum(alpha, beta))


def hann_window(window_length, periodic=True, *, dtype=None, layout=strided, device=None,
                requires_grad=False):
    """Hann window function: ``w[n] = 0.5 (1 - cos(2 pi n / (N - 1)))``."""
    return _window("hann_window", window_length, periodic, dtype, layout, device,
                   requires_grad, _cosine_sum(0.5, 0.5))


def _blackman(n, length):
    angle = n * (math.pi / (length - 1))
    return (angle * 4).cos() * 0.08 - (angle * 2).cos() * 0.5 + 0.42


def blackman_window(window_length, periodic=True, *, dtype=None, layout=strided, device=None,
                    requires_grad=False):
    """Blackman window function:
    ``w[n] = 0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))``."""
    return _window("blackman_window", window_length, periodic, dtype, layout, device,
                   requires_grad, _blackman)


def _bartlett(n, length):
    window = n * (2.0 / (length - 1))
    first_half = ((length - 1) >> 1) + 1
    return window.where(n < first_half, 2 - window)


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=strided, device=None,
                    requires_grad=False):
    """Bartlett (triangular) window function: ``w[n] = 1 - |2n / (N - 1) - 1|``."""
    return _window("bartlett_window", window_length, periodic, dtype, layout, device,
                   requires_grad, _bartlett)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=strided,
                  device=None, requires_grad=False):
    """Kaiser window function:
    ``w[n] = I_0(beta sqrt(1 - ((n - N/2) / (N/2))^2)) / I_0(beta)``, ``N = window_length - 1``
    and ``I_0`` the zeroth order modified Bessel function of the first kind."""
    from .special import i0

    def formula(n, length):
        half = (length - 1) / 2.0
        beta_t = tensor(beta, dtype=n.dtype, device=n.device)
        return i0((1 - ((n - half) / half).pow(2)).sqrt() * beta_t) / i0(beta_t)

    return _window("kaiser_window", window_length, periodic, dtype, layout, device,
                   requires_grad, formula)
