"""Complex numbers: their parts (real, imag, view_as_real, view_as_complex), conjugation,
angle, and building them (complex, polar), with gradients by torch's convention: the gradient
of a real loss L with respect to a complex z is dL/dRe(z) + i dL/dIm(z)."""
from .. import _dtype
from ._common import (
    Node, Tensor, check_tensor, complex_autograd, make, make_view, method, namespace_of, record,
    sum_to, write_out, zeros_like_gradient,
)

__all__ = ["real", "imag", "view_as_real", "view_as_complex", "conj", "conj_physical",
           "conj_physical_", "resolve_conj", "resolve_neg", "angle", "polar", "complex", "isreal"]


def _is_complex(t):
    return t._data.dtype.kind == "c"


# -- view_as_real / view_as_complex -----------------------------------------------------------

class ViewAsRealBackward0(Node):
    __slots__ = ()

    def jvp(self, tangent):
        return view_as_real(tangent)

    def backward(self, grad):
        return (view_as_complex(grad.contiguous()),)


@complex_autograd
class ViewAsComplexBackward0(Node):
    __slots__ = ()

    def jvp(self, tangent):
        return view_as_complex(tangent.contiguous())

    def backward(self, grad):
        return (view_as_real(grad),)


def _real_view_data(data):
    """The (..., 2) real array that shares ``data``'s (complex) memory."""
    xp = namespace_of(data)
    parts = data.real   # a view: the real dtype, the complex array's strides
    return xp.lib.stride_tricks.as_strided(parts, data.shape + (2,),
                                           data.strides + (parts.itemsize,))


def view_as_real(input):
    """A real view of the complex tensor ``input``: one more dimension, of size 2, holding each
    element's real and imaginary parts."""
    check_tensor(input, "view_as_real")
    if not _is_complex(input):
        raise RuntimeError("view_as_real is only supported for complex tensors")
    out = make_view(_real_view_data(input._data), input)
    record(ViewAsRealBackward0, (input,), out)
    return out


def view_as_complex(input):
    """A complex view of ``input`` (float or double, last dimension of size 2 and stride 1):
    each pair along the last dimension is one complex number."""
    check_tensor(input, "view_as_complex")
    data = input._data
    if data.dtype not in _COMPLEX_OF:
        if data.dtype == _dtype.float16.np:
            raise NotImplementedError("view_as_complex of a half tensor: ember has no complex32 "
                                      "(chalf) arrays")
        raise RuntimeError("view_as_complex is only supported for half, float and double tensors, "
                           f"but got a tensor of scalar type: {input.dtype._cpp_name}")
    if not data.ndim or data.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    itemsize = data.itemsize
    if data.strides[-1] != itemsize:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % (2 * itemsize) for s in data.strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if input.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    out = make_view(data.view(_COMPLEX_OF[data.dtype])[..., 0], input)
    record(ViewAsComplexBackward0, (input,), out)
    return out


_COMPLEX_OF = {_dtype.float32.np: _dtype.complex64.np, _dtype.float64.np: _dtype.complex128.np}


# -- real / imag ---------------------------------------------------------------------------

def real(input):
    """The real part of ``input`` (a view of a complex tensor; a real tensor itself)."""
    check_tensor(input, "real")
    if not _is_complex(input):
        return input
    return view_as_real(input).select(-1, 0)


def imag(input):
    """The imaginary part of the complex tensor ``input`` (a view)."""
    check_tensor(input, "imag")
    if not _is_complex(input):
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return view_as_real(input).select(-1, 1)


def _set_part(part):
    def setter(self, value):
        getattr(self, part).copy_(value if isinstance(value, Tensor) else
                                  make(namespace_of(self._data).asarray(value)))
    return setter


method("real")(property(real, _set_part("real")))
method("imag")(property(imag, _set_part("imag")))


# -- conjugation ---------------------------------------------------------------------------

@complex_autograd
class ConjBackward0(Node):
    __slots__ = ()

    def jvp(self, tangent):
        return tangent.conj()

    def backward(self, grad):
        return (grad.conj(),)


@complex_autograd
class ConjPhysicalBackward0(ConjBackward0):
    __slots__ = ()


def _conjugated(input, node_cls):
    if not _is_complex(input):
        return input
    out = make(namespace_of(input._data).conj(input._data))
    record(node_cls, (input,), out)
    return out


@method()
def conj(input):
    """The complex conjugate of ``input`` (``input`` itself when it is real). ember conjugates
    at once, so the result is a new tensor, never a lazily conjugated view."""
    check_tensor(input, "conj")
    return _conjugated(input, ConjBackward0)


@method()
def conj_physical(input, *, out=None):
    """The complex conjugate of ``input``, computed into new memory."""
    check_tensor(input, "conj_physical")
    return write_out(_conjugated(input, ConjPhysicalBackward0), out)


@method()
def conj_physical_(self):
    """Conjugates ``self`` in place."""
    if _is_complex(self):
        self.copy_(self.conj())
    return self


@method()
def isreal(input):
    """True where an element of ``input`` is real: always for a real tensor, where the
    imaginary part is zero for a complex one."""
    check_tensor(input, "isreal")
    xp = namespace_of(input._data)
    if not _is_complex(input):
        return make(xp.ones(input._data.shape, dtype=bool))
    return make(input._data.imag == 0)


@method()
def resolve_conj(input):
    """``input`` itself: ember never makes lazily conjugated tensors."""
    check_tensor(input, "resolve_conj")
    return input


@method()
def resolve_neg(input):
    """``input`` itself: ember never makes lazily negated tensors."""
    check_tensor(input, "resolve_neg")
    return input


# -- angle ---------------------------------------------------------------------------------

class AngleBackward0(Node):
    """For a complex z: d(angle)/dz by torch's convention, i z / |z|^2 (0 at z = 0); a real
    input's angle is piecewise constant (gradient 0)."""
    __slots__ = ()

    def jvp(self, tangent):
        # d angle(z) = Im(conj(z) dz) / |z|^2 (0 at z = 0); a real input's angle is constant
        from .ternary import where
        z = self.primals[0]
        if not _is_complex(z):
            return None
        magnitude2 = z.real * z.real + z.imag * z.imag
        turn = real(tangent) * (-z.imag) + imag(tangent) * z.real
        return where(magnitude2 == 0, 0.0, turn / where(magnitude2 == 0, 1.0, magnitude2))

    def backward(self, grad):
        from .ternary import where
        (z,) = self.saved_tensors
        if not _is_complex(z):
            return (zeros_like_gradient(grad),)
        magnitude2 = z.real * z.real + z.imag * z.imag
        return (where(magnitude2 == 0, 0.0, grad * (z * 1j) / where(magnitude2 == 0, 1.0, magnitude2)),)


@method()
def angle(input, *, out=None):
    """The angle (argument, in radians) of each element of ``input``: for real numbers 0, or pi
    for negative ones."""
    check_tensor(input, "angle")
    data = input._data
    xp = namespace_of(data)
    if data.dtype.kind == "c":
        result = xp.angle(data)
    else:
        if data.dtype.kind in "biu":
            data = data.astype(_dtype.get_default_dtype().np)
        result = xp.where(data < 0, xp.asarray(_PI, dtype=data.dtype),
                          xp.zeros((), dtype=data.dtype))
        result = xp.where(xp.isnan(data), data, result)
    res = make(result)
    node = record(AngleBackward0, (input,), res)
    if node is not None:
        node.save(input)
    return write_out(res, out)


_PI = 3.141592653589793


# -- complex / polar -----------------------------------------------------------------------

def _check_parts(real, imag, name):
    check_tensor(real, name, "real" if name == "complex" else "abs")
    check_tensor(imag, name, "imag" if name == "complex" else "angle")
    a, b = real._data.dtype, imag._data.dtype
    if a not in _COMPLEX_OF or b not in _COMPLEX_OF:
        if a == b == _dtype.float16.np:
            raise NotImplementedError(f"{name} of half tensors: ember has no complex32 (chalf) arrays")
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{real.dtype._cpp_name} and {imag.dtype._cpp_name}")
    if a != b:
        raise RuntimeError(f"Expected object of scalar type {real.dtype._cpp_name} but got scalar "
                           f"type {imag.dtype._cpp_name} for second argument")


@complex_autograd
class ComplexBackward0(Node):
    __slots__ = ()

    def jvp(self, t_real, t_imag):
        if t_real is None:
            t_real = t_imag * 0
        if t_imag is None:
            t_imag = t_real * 0
        return complex(t_real, t_imag)

    def backward(self, grad):
        g_real = g_imag = None
        if self.next_functions[0][0] is not None:
            g_real = sum_to(real(grad), self.shapes[0])
        if self.next_functions[1][0] is not None:
            g_imag = sum_to(imag(grad), self.shapes[1])
        return g_real, g_imag


def complex(real, imag, *, out=None):
    """The complex tensor ``real + i imag`` (float or double parts of one dtype, broadcast)."""
    _check_parts(real, imag, "complex")
    xp = namespace_of(real._data)
    rd, id_ = xp.broadcast_arrays(real._data, imag._data)
    data = xp.empty(rd.shape, dtype=_COMPLEX_OF[rd.dtype])
    data.real, data.imag = rd, id_
    res = make(data)
    node = record(ComplexBackward0, (real, imag), res)
    if node is not None:
        node.shapes = (real._data.shape, imag._data.shape)
    return write_out(res, out)


@complex_autograd
class PolarBackward0(Node):
    """out = abs * e^(i angle): d out/d abs = e^(i angle), d out/d angle = i out; a real input's
    gradient is Re(conj(g) * d out/d input)."""
    __slots__ = ()

    def jvp(self, t_abs, t_angle):
        magnitude, theta = self.primals
        out = None
        if t_abs is not None:
            out = t_abs * complex(theta.cos(), theta.sin())
        if t_angle is not None:
            turn = self.results[0] * 1j * t_angle
            out = turn if out is None else out + turn
        return out

    def backward(self, grad):
        magnitude, theta = self.saved_tensors
        unit = complex(theta.cos(), theta.sin())
        g_abs = g_angle = None
        if self.next_functions[0][0] is not None:
            g_abs = sum_to(real(grad.conj() * unit), magnitude._data.shape)
        if self.next_functions[1][0] is not None:
            g_angle = sum_to(real(grad.conj() * unit * magnitude * 1j), theta._data.shape)
        return g_abs, g_angle


def polar(abs, angle, *, out=None):
    """The complex tensor with magnitudes ``abs`` and angles ``angle``: abs * (cos(angle) +
    i sin(angle))."""
    _check_parts(abs, angle, "polar")
    xp = namespace_of(abs._data)
    a, t = xp.broadcast_arrays(abs._data, angle._data)
    data = xp.empty(a.shape, dtype=_COMPLEX_OF[a.dtype])
    data.real, data.imag = a * xp.cos(t), a * xp.sin(t)
    res = make(data)
    node = record(PolarBackward0, (abs, angle), res)
    if node is not None:
        node.save(abs, angle)
    return write_out(res, out)
