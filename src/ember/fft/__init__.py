"""``ember.fft``: torch.fft's discrete Fourier transforms (complex, real and Hermitian, in one,
two and N dimensions, with torch's three normalizations), their sample frequencies and shifts,
all differentiable. They compute with the array namespace's ``fft`` module (NumPy's on the
CPU, CuPy's on a GPU); the three transforms and their gradients are in ``_spectral``."""
from .._tensor import Tensor  # torch.fft.Tensor
from ._functions import (
    fft, fft2, fftfreq, fftn, fftshift, hfft, hfft2, hfftn, ifft, ifft2, ifftn, ifftshift, ihfft,
    ihfft2, ihfftn, irfft, irfft2, irfftn, rfft, rfft2, rfftfreq, rfftn,
)

__all__ = [
    "fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
    "rfftn", "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn",
    "fftfreq", "rfftfreq", "fftshift", "ifftshift", "Tensor",
]
