"""torch.fft's functions over the three transforms of ``_spectral``, composed as torch composes
them: integer inputs become the default float dtype and real ones complex where the transform
needs it, each transformed dim is cropped or zero-padded to the requested length, and the
inverse transforms of real input conjugate the forward one."""
import numbers

from .. import _dtype
from ..ops._common import Tensor, write_out
from ..ops.shape import roll
from ._spectral import BY_N, BY_ROOT_N, NONE, fft_c2c, fft_c2r, fft_r2c

__all__ = [
    "fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
    "rfftn", "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn",
    "fftfreq", "rfftfreq", "fftshift", "ifftshift",
]


# -- arguments -------------------------------------------------------------------------------

def _check_input(input, name):
    if not isinstance(input, Tensor):
        raise TypeError(f"fft_{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")


def _norm_mode(norm, forward):
    """The scaling of a transform in direction ``forward`` for torch's ``norm`` argument."""
    if norm is None or norm == "backward":
        return NONE if forward else BY_N
    if norm == "forward":
        return BY_N if forward else NONE
    if norm == "ortho":
        return BY_ROOT_N
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _promote(input, require_complex):
    """``input`` in the dtype the transforms take: integers and bools become the default float
    dtype; only float32 and float64 (and complex) are transformed on the CPU."""
    dt = input._data.dtype
    if dt.kind == "c":
        return input
    if dt.kind in "biu":
        input = input.to(_dtype.get_default_dtype())
    elif dt.char not in "fd":
        raise RuntimeError(f"Unsupported dtype {input.dtype._cpp_name}")
    if require_complex:
        input = input.to(input.dtype.to_complex())
    return input


def _wrap(dim, ndim, name):
    """``dim`` as a non-negative index; a 0-d tensor has no dims to transform."""
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral):
        raise TypeError(f"fft_{name}(): argument 'dim' must be int, not {type(dim).__name__}")
    dim = int(dim)
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], "
                         f"but got {dim})")
    return dim % ndim


def _check_points(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _resized(x, dims, sizes):
    """``x`` cropped or zero-padded along each of ``dims`` to the matching size (differentiable)."""
    shape = x._data.shape
    if all(shape[d] == n for d, n in zip(dims, sizes)):
        return x
    from ..nn.functional.padding import _constant_pad
    pad = [0] * (2 * len(shape))
    for d, n in zip(dims, sizes):
        pad[2 * (len(shape) - 1 - d) + 1] = n - shape[d]
    return _constant_pad(x, pad, 0)


def _shape_and_dims(input, s, dim, name):
    """torch's canonical (sizes, dims) of an n-dimensional transform."""
    ndim = input._data.ndim
    shape = input._data.shape
    dims = None
    if dim is not None:
        dims = [_wrap(d, ndim, name) for d in ((dim,) if isinstance(dim, numbers.Integral) else dim)]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        s = [int(n) for n in ((s,) if isinstance(s, numbers.Integral) else s)]
        if dims is not None and len(dims) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {ndim} "
                               "dimensions.")
        if dims is None:
            dims = list(range(ndim - len(s), ndim))
        sizes = [shape[d] if n == -1 else n for d, n in zip(dims, s)]
    else:
        if dims is None:
            dims = list(range(ndim))
        sizes = [shape[d] for d in dims]
    for n in sizes:
        _check_points(n)
    return sizes, tuple(dims)


def _c2r_shape_and_dims(input, s, dim, name):
    """As ``_shape_and_dims``, for a transform whose last dim is Hermitian: the input sizes
    (n // 2 + 1 points along the last dim) and the real output's length there."""
    sizes, dims = _shape_and_dims(input, s, dim, name)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    if s is None or list(s)[-1] == -1:
        last = 2 * (input._data.shape[dims[-1]] - 1)
    else:
        last = sizes[-1]
    _check_points(last)
    sizes[-1] = last // 2 + 1
    return sizes, dims, last


def _out(result, out, name):
    if out is None:
        return result
    if isinstance(out, Tensor):
        if result.is_complex() and not out.is_complex():
            raise RuntimeError(f"{name} expects a complex output tensor, but got {out.dtype._cpp_name}")
        if not result.is_complex() and out.is_complex():
            raise RuntimeError(f"{name} expects a floating point output tensor, but got "
                               f"{out.dtype._cpp_name}")
    return write_out(result, out, op=f"fft_{name}")


# -- one dim ---------------------------------------------------------------------------------

def _one_dim(input, n, dim, name, promote_complex):
    _check_input(input, name)
    input = _promote(input, promote_complex)
    dim = _wrap(dim, input._data.ndim, name)
    return input, dim


def _c2c_or_r2c(name, input, n, dim, norm, forward, out):
    _check_input(input, name)
    if input.is_complex():
        dim = _wrap(dim, input._data.ndim, name)
        size = input._data.shape[dim] if n is None else n
        _check_points(size)
        x = _resized(input, (dim,), (size,))
        return _out(fft_c2c(x, (dim,), _norm_mode(norm, forward), forward), out, name)
    return _r2c(name, input, n, dim, norm, forward, False, out)


def _r2c(name, input, n, dim, norm, forward, onesided, out):
    _check_input(input, name)
    if input.is_complex():
        raise RuntimeError(f"{name} expects a real input tensor, but got {input.dtype._cpp_name}")
    input, dim = _one_dim(input, n, dim, name, False)
    size = input._data.shape[dim] if n is None else n
    _check_points(size)
    x = _resized(input, (dim,), (size,))
    result = fft_r2c(x, (dim,), _norm_mode(norm, forward), onesided)
    if not forward:   # the inverse transform of real input: the conjugate of the forward one
        result = result.conj()
    return _out(result, out, name)


def _c2r(name, input, n, dim, norm, forward, out):
    input, dim = _one_dim(input, n, dim, name, True)
    size = 2 * (input._data.shape[dim] - 1) if n is None else n
    _check_points(size)
    if n is not None:
        input = _resized(input, (dim,), (size // 2 + 1,))
    if forward:   # hfft: the inverse real transform of the conjugate
        input = input.conj()
    return _out(fft_c2r(input, (dim,), _norm_mode(norm, forward), size), out, name)


def fft(input, n=None, dim=-1, norm=None, *, out=None):
    """The one-dimensional discrete Fourier transform of ``input`` along ``dim``, cropped or
    zero-padded to ``n`` points first when ``n`` is given. ``norm``: ``"backward"`` (the
    default, no scaling), ``"ortho"`` (1/sqrt(n)) or ``"forward"`` (1/n)."""
    return _c2c_or_r2c("fft", input, n, dim, norm, True, out)


def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    """The one-dimensional inverse discrete Fourier transform of ``input`` along ``dim``
    (``norm="backward"``, the default, scales by 1/n)."""
    return _c2c_or_r2c("ifft", input, n, dim, norm, False, out)


def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The Fourier transform of the real ``input`` along ``dim``: only the n // 2 + 1
    non-negative frequencies (the others are their complex conjugates)."""
    return _r2c("rfft", input, n, dim, norm, True, True, out)


def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of :func:`rfft`: a real signal of ``n`` points (2 * (m - 1) by default, m
    being ``input``'s size along ``dim``) from its non-negative frequencies."""
    return _c2r("irfft", input, n, dim, norm, False, out)


def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The Fourier transform of a Hermitian-symmetric signal given by its first half
    (``input``): a real tensor of ``n`` points along ``dim``."""
    return _c2r("hfft", input, n, dim, norm, True, out)


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of :func:`hfft`: the first n // 2 + 1 points of the inverse Fourier
    transform of the real ``input``."""
    return _r2c("ihfft", input, n, dim, norm, False, True, out)


# -- several dims ----------------------------------------------------------------------------

def _fftn(name, input, s, dim, norm, forward, out):
    _check_input(input, name)
    sizes, dims = _shape_and_dims(input, s, dim, name)
    x = _resized(_promote(input, True), dims, sizes)
    return _out(fft_c2c(x, dims, _norm_mode(norm, forward), forward), out, name)


def _rfftn(name, input, s, dim, norm, out):
    _check_input(input, name)
    if input.is_complex():
        raise RuntimeError(f"{name} expects a real-valued input tensor, but got "
                           f"{input.dtype._cpp_name}")
    sizes, dims = _shape_and_dims(input, s, dim, name)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    x = _resized(_promote(input, False), dims, sizes)
    return _out(fft_r2c(x, dims, _norm_mode(norm, True), True), out, name)


def _irfftn(name, input, s, dim, norm, out):
    _check_input(input, name)
    sizes, dims, last = _c2r_shape_and_dims(input, s, dim, name)
    x = _resized(_promote(input, True), dims, sizes)
    return _out(fft_c2r(x, dims, _norm_mode(norm, False), last), out, name)


def _hfftn(name, input, s, dim, norm, out):
    _check_input(input, name)
    sizes, dims, last = _c2r_shape_and_dims(input, s, dim, name)
    x = _resized(_promote(input, True), dims, sizes)
    mode = _norm_mode(norm, True)
    if len(dims) > 1:
        x = fft_c2c(x, dims[:-1], mode, True)
    return _out(fft_c2r(x.conj(), dims[-1:], mode, last), out, name)


def _ihfftn(name, input, s, dim, norm, out):
    _check_input(input, name)
    if input.is_complex():
        raise RuntimeError(f"Only supports floating-point dtypes, but found: {input.dtype._cpp_name}")
    sizes, dims = _shape_and_dims(input, s, dim, name)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    x = _resized(_promote(input, False), dims, sizes)
    mode = _norm_mode(norm, False)
    result = fft_r2c(x, dims[-1:], mode, True).conj()
    if len(dims) > 1:
        result = fft_c2c(result, dims[:-1], mode, False)
    return _out(result, out, name)


def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The two-dimensional discrete Fourier transform of ``input`` (over the last two dims by
    default); ``s`` gives the sizes to crop or zero-pad them to."""
    return _fftn("fft2", input, s, dim, norm, True, out)


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The two-dimensional inverse discrete Fourier transform of ``input``."""
    return _fftn("ifft2", input, s, dim, norm, False, out)


def fftn(input, s=None, dim=None, norm=None, *, out=None):
    """The N-dimensional discrete Fourier transform of ``input`` over ``dim`` (all dims, or
    the last ``len(s)`` when only ``s`` is given)."""
    return _fftn("fftn", input, s, dim, norm, True, out)


def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    """The N-dimensional inverse discrete Fourier transform of ``input``."""
    return _fftn("ifftn", input, s, dim, norm, False, out)


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The two-dimensional Fourier transform of the real ``input``, one-sided along the last
    of ``dim``."""
    return _rfftn("rfft2", input, s, dim, norm, out)


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The inverse of :func:`rfft2`."""
    return _irfftn("irfft2", input, s, dim, norm, out)


def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The N-dimensional Fourier transform of the real ``input``, one-sided along the last of
    ``dim``."""
    return _rfftn("rfftn", input, s, dim, norm, out)


def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The inverse of :func:`rfftn`: a real tensor whose last transformed dim has ``s[-1]``
    points (2 * (m - 1) by default)."""
    return _irfftn("irfftn", input, s, dim, norm, out)


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The two-dimensional Fourier transform of a Hermitian-symmetric ``input`` given by half
    of its last dim: a real tensor."""
    return _hfftn("hfft2", input, s, dim, norm, out)


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The inverse of :func:`hfft2`."""
    return _ihfftn("ihfft2", input, s, dim, norm, out)


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The N-dimensional Fourier transform of a Hermitian-symmetric ``input`` given by half of
    its last transformed dim: a real tensor."""
    return _hfftn("hfftn", input, s, dim, norm, out)


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The inverse of :func:`hfftn`: the one-sided inverse transform of the real ``input``."""
    return _ihfftn("ihfftn", input, s, dim, norm, out)


# -- frequencies and shifts ----------------------------------------------------------------

def _frequencies(name, count, n, d, out, dtype, layout, device, requires_grad, pin_memory):
    from ..ops.creation import arange
    target = dtype if dtype is not None else (out.dtype if out is not None else
                                              _dtype.get_default_dtype())
    target = _dtype.to_dtype(target)
    if not (target.is_floating_point or target.is_complex):
        raise RuntimeError(f"{name} requires a floating point or complex dtype")
    if target.is_complex:   # torch's arange, which it starts from, has no complex loop
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{target._cpp_name}'")
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    values = arange(count, dtype=target, device=device)
    if name == "fftfreq":
        half = (n + 1) // 2
        values._data[half:] = arange(-(n // 2), 0, dtype=target, device=device)._data
    values = values * (1.0 / (n * d))
    if requires_grad:
        values.requires_grad_(True)
    return write_out(values, out, op=f"fft_{name}")


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
            pin_memory=False):
    """The sample frequencies of a signal of ``n`` points ``d`` apart, in the order
    :func:`fft` gives its outputs: ``[0, 1, ..., ceil(n/2) - 1, -floor(n/2), ..., -1] / (d n)``."""
    return _frequencies("fftfreq", n, n, d, out, dtype, layout, device, requires_grad, pin_memory)


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False):
    """The sample frequencies of :func:`rfft`'s outputs for a signal of ``n`` points ``d``
    apart: ``[0, 1, ..., n // 2] / (d n)``."""
    return _frequencies("rfftfreq", n // 2 + 1, n, d, out, dtype, layout, device, requires_grad,
                        pin_memory)


def _shifted(input, dim, shift_of):
    ndim = input._data.ndim
    if dim is None:
        dims = list(range(ndim))
    else:
        dims = [_wrap(d, ndim, "fftshift") for d in ((dim,) if isinstance(dim, numbers.Integral) else dim)]
    shape = input._data.shape
    return roll(input, [shift_of(shape[d]) for d in dims], dims)


def fftshift(input, dim=None):
    """Moves the zero frequency of an :func:`fftn` output to the centre of ``dim`` (all dims by
    default): each is rolled by half its size."""
    return _shifted(input, dim, lambda n: n // 2)


def ifftshift(input, dim=None):
    """The inverse of :func:`fftshift`."""
    return _shifted(input, dim, lambda n: (n + 1) // 2)
