"""The three transforms every ``ember.fft`` function is built from, as in torch: complex to
complex (``fft_c2c``), real to complex (``fft_r2c``, the full or the one-sided spectrum) and
one-sided complex to real (``fft_c2r``), over any dims, each with its gradient node.

``norm`` is the scaling applied whatever the direction: ``NONE``, ``BY_ROOT_N`` (1/sqrt(n)) or
``BY_N`` (1/n), n being the number of points transformed. The gradient of each transform is
its adjoint: the transform the other way, with the same scaling."""
from ..ops._common import Node, complex_autograd, make, namespace_of, record
from ..ops.complex import real

NONE, BY_ROOT_N, BY_N = 0, 1, 2

# the ``norm`` argument of the array namespace's fft functions that applies each scaling
_FORWARD_NORM = {NONE: "backward", BY_ROOT_N: "ortho", BY_N: "forward"}
_INVERSE_NORM = {NONE: "forward", BY_ROOT_N: "ortho", BY_N: "backward"}


@complex_autograd
class FftC2CBackward0(Node):
    __slots__ = ()

    def jvp(self, tangent):   # a linear map: the same transform of the tangent
        return fft_c2c(tangent, self.dims, self.norm, self.forward)

    def backward(self, grad):
        return (fft_c2c(grad, self.dims, self.norm, not self.forward),)


def fft_c2c(input, dims, norm, forward):
    """The discrete Fourier transform of the complex ``input`` over ``dims`` (the inverse
    direction when not ``forward``), scaled by ``norm``."""
    data = input._data
    fft = namespace_of(data).fft
    if forward:
        result = fft.fftn(data, axes=dims, norm=_FORWARD_NORM[norm])
    else:
        result = fft.ifftn(data, axes=dims, norm=_INVERSE_NORM[norm])
    out = make(result.astype(data.dtype, copy=False))
    node = record(FftC2CBackward0, (input,), out)
    if node is not None:
        node.dims, node.norm, node.forward = dims, norm, forward
    return out


@complex_autograd
class FftR2CBackward0(Node):
    """The adjoint of the full transform, of the gradient completed with zeros where the
    one-sided spectrum left the upper half out; the input is real, so its real part."""
    __slots__ = ()

    def jvp(self, tangent):
        return fft_r2c(tangent, self.dims, self.norm, self.onesided)

    def backward(self, grad):
        if self.onesided:
            missing = self.last_dim_size - grad._data.shape[self.dims[-1]]
            if missing > 0:
                grad = _pad_dim(grad, self.dims[-1], missing)
        return (real(fft_c2c(grad, self.dims, self.norm, False)),)


def fft_r2c(input, dims, norm, onesided):
    """The forward transform of the real ``input`` over ``dims``: only the first n // 2 + 1
    frequencies of the last of ``dims`` when ``onesided``."""
    data = input._data
    fft = namespace_of(data).fft
    if onesided:
        result = fft.rfftn(data, axes=dims, norm=_FORWARD_NORM[norm])
    else:
        result = fft.fftn(data, axes=dims, norm=_FORWARD_NORM[norm])
    out = make(result.astype(_COMPLEX_OF[data.dtype.char], copy=False))
    node = record(FftR2CBackward0, (input,), out)
    if node is not None:
        node.dims, node.norm, node.onesided = dims, norm, onesided
        node.last_dim_size = data.shape[dims[-1]]
    return out


class FftC2RBackward0(Node):
    """The forward one-sided transform of the gradient, with the frequencies that stand for
    two (all but the first, and the last for an even length) counted twice."""
    __slots__ = ()

    def jvp(self, tangent):
        return fft_c2r(tangent, self.dims, self.norm, self.results[0]._data.shape[self.dims[-1]])

    def backward(self, grad):
        g = fft_r2c(grad, self.dims, self.norm, True)
        dim = self.dims[-1]
        doubled = grad._data.shape[dim] - g._data.shape[dim]
        if doubled > 0:
            xp = namespace_of(g._data)
            shape = [1] * g._data.ndim
            shape[dim] = g._data.shape[dim]
            weight = xp.ones(shape, dtype=grad._data.dtype)
            weight[(slice(None),) * dim + (slice(1, 1 + doubled),)] = 2
            g = g * make(weight)
        return (g,)


def fft_c2r(input, dims, norm, last_dim_size):
    """The inverse transform of the one-sided (Hermitian) spectrum ``input`` over ``dims``: a
    real tensor with ``last_dim_size`` points along the last of ``dims``."""
    data = input._data
    fft = namespace_of(data).fft
    sizes = [data.shape[d] for d in dims[:-1]] + [last_dim_size]
    result = fft.irfftn(data, s=sizes, axes=dims, norm=_INVERSE_NORM[norm])
    out = make(result.astype(_REAL_OF[data.dtype.char], copy=False))
    node = record(FftC2RBackward0, (input,), out)
    if node is not None:
        node.dims, node.norm = dims, norm
    return out


_COMPLEX_OF = {"f": "complex64", "d": "complex128"}
_REAL_OF = {"F": "float32", "D": "float64"}


def _pad_dim(t, dim, amount):
    """``t`` with ``amount`` zeros appended along ``dim`` (differentiable)."""
    from ..nn.functional.padding import _constant_pad
    pad = [0, 0] * (t._data.ndim - 1 - dim) + [0, amount]
    return _constant_pad(t, pad, 0)
