"""Copies and conversions: clone, contiguous, to(dtype/device), the dtype shorthands, cpu."""
import numpy as np

from .. import _dtype
from .. import _memory_format as _mf
from .._backend import backend_for, vector_math
from .._backend.choice import KernelChoice
from .._device import device as _device_cls, to_device
from ._common import Node, Tensor, complex_autograd, make, method, real_part_for, record

__all__ = ["clone"]


@complex_autograd
class CloneBackward0(Node):
    __slots__ = ()

    def backward(self, grad):
        return (grad,)

    def jvp(self, tangent):
        return tangent.clone()


@method()
def clone(input, *, memory_format=None):
    """Returns a copy of ``input`` (differentiable). With the default ``preserve_format``, a
    channels-last input stays channels-last and any other input is copied row-major."""
    data = input._data
    if memory_format is None and data.__class__ is np.ndarray and data.flags.c_contiguous:
        out = make(data.copy())   # (a row-major array: its row-major copy, what the steps below give)
    else:
        fmt = _mf.suggest(data) if memory_format in (None, _mf.preserve_format) else memory_format
        out = make(_mf.copy_as(data, fmt))
    record(CloneBackward0, (input,), out)
    return out


@method()
def contiguous(self, memory_format=None):
    """A tensor with the same data, contiguous in ``memory_format`` (row-major by default;
    ``ember.channels_last`` for NHWC strides); self if it already is."""
    fmt = _mf.contiguous_format if memory_format is None else memory_format
    if fmt is _mf.preserve_format:
        if self._data.flags.c_contiguous:
            return self
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    if _mf.is_contiguous_as(self._data, fmt):
        return self
    _mf.check_rank(self._data, fmt)
    out = make(_mf.copy_as(self._data, fmt))
    record(CloneBackward0, (self,), out)
    return out


@method()
def is_contiguous(self, memory_format=None):
    """True if the tensor is contiguous in memory in ``memory_format`` (row-major by default;
    size-1 dims are ignored)."""
    return _mf.is_contiguous_as(self._data, memory_format)


@complex_autograd
class ToCopyBackward0(Node):
    __slots__ = ()

    def jvp(self, tangent):   # (cast to the result's dtype by the caller)
        return tangent.clone()

    def backward(self, grad):
        src_dtype, src_device = self.src
        g = grad
        if g._data.dtype != src_dtype.np:
            if not (src_dtype.is_floating_point or src_dtype.is_complex):
                return (None,)
            g = _convert(real_part_for(g, src_dtype.np), src_dtype, None)
        if src_device != g.device:
            g = _convert(g, None, src_device)
        return (g,)


_conversion_kernel = KernelChoice("conversion", onednn=lambda data, dtype: vector_math.convert(data, dtype.np),
                                  numpy=_dtype.cast_array)


def _cast(data, dtype):
    """``cast_array(data, dtype)``, large conversions that ``vector_math`` has a loop for by the
    kernel choice."""
    target = dtype.np   # (None for the dtypes that make no tensors: cast_array says so)
    if (target is not None and data.size >= vector_math.CONVERSION_MIN_ELEMENTS
            and vector_math.converts(data.dtype, target)):
        return _conversion_kernel(data, dtype)
    return _dtype.cast_array(data, dtype)


def _convert(t, dtype, device, copy=False, non_blocking=False):
    data = t._data
    if device is not None and device != t.device:
        data = backend_for(device).from_array(data, device.index, non_blocking)
        copy = False
    if dtype is not None and data.dtype != dtype.np:
        if t._data.dtype.kind == "c" and not dtype.is_complex:
            import warnings
            warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=3)
            data = data.real
        data = _cast(data, dtype)
        copy = False
    if copy:
        data = data.copy()
    if data is t._data:
        return t
    out = make(data)
    if (dtype is None or dtype.is_floating_point or dtype.is_complex):
        node = record(ToCopyBackward0, (t,), out)
        if node is not None:
            node.src = (t.dtype, t.device)
    return out


_TO_SIGNATURES = (
    " * (ember.device device = None, ember.dtype dtype = None, bool non_blocking = False, "
    "bool copy = False, *, ember.memory_format memory_format = None)\n"
    " * (ember.dtype dtype, bool non_blocking = False, bool copy = False, *, "
    "ember.memory_format memory_format = None)\n"
    " * (Tensor tensor, bool non_blocking = False, bool copy = False, *, "
    "ember.memory_format memory_format = None)\n")


def _type_label(value):
    if isinstance(value, Tensor):
        return "Tensor"
    if isinstance(value, (_dtype.dtype, _device_cls)):
        return f"ember.{value.__class__.__name__}"
    return value.__class__.__name__


def _bad_to_args(args, kwargs):
    got = [_type_label(a) for a in args] + [f"{k}={_type_label(v)}" for k, v in kwargs.items()]
    listed = ", ".join(got) + (", " if kwargs else "")
    return TypeError(f"to() received an invalid combination of arguments - got ({listed}), but "
                     f"expected one of:\n{_TO_SIGNATURES}")


def _is_device_like(value):
    return value is None or isinstance(value, (str, _device_cls)) or (
        isinstance(value, int) and not isinstance(value, bool))


def _parse_to_args(args, kwargs):
    """torch's three forms: ``to(device=None, dtype=None, non_blocking=False, copy=False)``,
    ``to(dtype, non_blocking=False, copy=False)`` and ``to(tensor, non_blocking=False,
    copy=False)``; returns (dtype or None, device or None, copy)."""
    names = ("device", "dtype", "non_blocking", "copy")
    first = args[0] if args else None
    if isinstance(first, Tensor):
        names = ("tensor", "non_blocking", "copy")
    elif isinstance(first, _dtype.dtype):
        names = ("dtype", "non_blocking", "copy")
    if len(args) > len(names):
        raise _bad_to_args(args, kwargs)
    bound = dict(zip(names, args))
    for key, value in kwargs.items():
        if key not in names + ("memory_format",) or key in bound:
            raise _bad_to_args(args, kwargs)
        bound[key] = value
    bound.pop("memory_format", None)
    dtype, device = bound.get("dtype"), bound.get("device")
    if "tensor" in bound:
        dtype, device = bound["tensor"].dtype, bound["tensor"].device
    if (not _is_device_like(device) or not (dtype is None or isinstance(dtype, _dtype.dtype))
            or not all(isinstance(bound.get(k, False), bool) for k in ("non_blocking", "copy"))):
        raise _bad_to_args(args, kwargs)
    return dtype, None if device is None else to_device(device), bound.get("copy", False)


def _non_blocking_arg(args, kwargs):
    """The ``non_blocking`` flag of a ``to()`` call (already checked by ``_parse_to_args``)."""
    if "non_blocking" in kwargs:
        return kwargs["non_blocking"]
    position = 2 if not args or not isinstance(args[0], (Tensor, _dtype.dtype)) else 1
    return args[position] if len(args) > position else False


@method()
def to(self, *args, **kwargs):
    """Performs dtype and/or device conversion: ``to(dtype)``, ``to(device, dtype=None)``,
    ``to(other)``, and ``memory_format=`` conversion (``ember.channels_last``); returns self
    when nothing changes and ``copy`` is False. With
    ``non_blocking=True`` a copy between host and GPU may run asynchronously."""
    dtype, device, copy = _parse_to_args(args, kwargs)
    if device is None:
        out = _convert(self, dtype, None, copy)
    else:
        out = _convert(self, dtype, device, copy, _non_blocking_arg(args, kwargs))
    fmt = kwargs.get("memory_format")
    if fmt is None or fmt is _mf.preserve_format:
        return out
    return out.contiguous(memory_format=fmt)


@method()
def cpu(self, memory_format=None):
    """A copy of this tensor in CPU memory (self if it is there already)."""
    return _convert(self, None, _device_cls("cpu"))


@method()
def type(self, dtype=None, non_blocking=False, **kwargs):
    """With no argument, torch's type string (``'torch.FloatTensor'``); else this tensor
    converted to ``dtype``: a dtype, a legacy type (``ember.DoubleTensor``) or its name
    (``'torch.DoubleTensor'``, ``'ember.DoubleTensor'``, ``'torch.cuda.FloatTensor'``)."""
    if dtype is None:
        from .._tensor_str import type_name
        return type_name(self)
    from .._legacy_tensor_types import parse_type, tensortype
    device = None
    if isinstance(dtype, str):
        dtype, device_type = parse_type(dtype)
        if device_type != self.device.type:
            device = _device_cls(device_type)
    elif isinstance(dtype, tensortype):
        if dtype._device_type != self.device.type:
            device = _device_cls(dtype._device_type)
        dtype = dtype.dtype
    return _convert(self, _dtype.to_dtype(dtype), device)


@method()
def type_as(self, other):
    return _convert(self, other.dtype, None)


def _shorthand(name, dtype):
    def conv(self, memory_format=None):
        return _convert(self, dtype, None)
    conv.__name__ = name
    conv.__doc__ = f"``self.to({dtype})``"
    method(name)(conv)


for _name, _dt in (("float", _dtype.float32), ("double", _dtype.float64), ("half", _dtype.float16),
                   ("bfloat16", _dtype.bfloat16), ("long", _dtype.int64), ("int", _dtype.int32),
                   ("short", _dtype.int16), ("char", _dtype.int8), ("byte", _dtype.uint8),
                   ("bool", _dtype.bool), ("cfloat", _dtype.complex64), ("cdouble", _dtype.complex128)):
    _shorthand(_name, _dt)


method("output_nr")(property(lambda self: self._output_nr, doc=(
    "The index of this tensor among the outputs of the node that produced it (its "
    "``grad_fn``); 0 for a leaf.")))
