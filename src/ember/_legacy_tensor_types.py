"""The legacy tensor types ``FloatTensor``, ``DoubleTensor``, ``LongTensor``, ... as torch
keeps them: each is a class whose instances are the plain tensors of its dtype on the CPU
(``isinstance(t, ember.FloatTensor)`` is true exactly for float32 CPU tensors, as torch's
metaclass makes it), and calling it makes such a tensor from sizes or from data."""
import numbers

import numpy as np

from . import _dtype
from ._tensor import Size, Tensor

__all__ = []

_CPP_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
              "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int", "int16": "short int",
              "int8": "signed char", "uint8": "unsigned char", "bool": "bool"}


class tensortype(type):
    """The metaclass of the legacy tensor types (``type(ember.FloatTensor)``)."""

    def __instancecheck__(cls, obj):
        return (isinstance(obj, Tensor) and obj._data.dtype == cls.dtype.np
                and obj.device.type == cls._device_type)

    def __call__(cls, *args, **kwargs):
        return _construct(cls, args, kwargs)

    @property
    def is_cuda(cls):
        return cls._device_type == "cuda"

    @property
    def is_sparse(cls):
        return False

    @property
    def layout(cls):
        from ._layout import strided
        return strided


def _arguments(args, kwargs):
    described = ", ".join([type(a).__name__ for a in args]
                          + [f"{k}={type(v).__name__}" for k, v in kwargs.items()])
    return ("new() received an invalid combination of arguments - got (" + described + "), but "
            "expected one of:\n * (*, torch.device device = None)\n * (torch.Storage storage)\n"
            " * (Tensor other)\n * (tuple of ints size, *, torch.device device = None)\n"
            " * (object data, *, torch.device device = None)\n")


def _construct(cls, args, kwargs):
    from .ops.creation import empty, tensor
    device = kwargs.pop("device", None)
    if kwargs:
        raise TypeError(_arguments(args, kwargs))
    dtype = cls.dtype
    device = device if device is not None else cls._device_type
    if not args:
        return empty(0, dtype=dtype, device=device)
    if all(isinstance(a, numbers.Integral) and not isinstance(a, bool) for a in args) or (
            len(args) == 1 and isinstance(args[0], Size)):
        return empty(*args, dtype=dtype, device=device)
    if len(args) != 1:
        raise TypeError(_arguments(args, {}))
    data = args[0]
    if isinstance(data, Tensor):
        if data._data.dtype != dtype.np:
            raise TypeError(f"expected TensorOptions(dtype={_CPP_NAMES[dtype.name]}, device=cpu, "
                            f"layout=Strided) (got TensorOptions(dtype="
                            f"{_CPP_NAMES.get(data.dtype.name, data.dtype.name)}, device=cpu, "
                            "layout=Strided))")
        return data
    if isinstance(data, numbers.Number):
        raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    if isinstance(data, np.ndarray):
        data = data.astype(dtype.np)
    return tensor(data, dtype=dtype, device=device)


def _legacy_type(name, dtype, device_type="cpu"):
    cls = tensortype(name, (), {
        "__doc__": f"The legacy type of {dtype} tensors on the {device_type.upper()}: "
                   f"``{name}(*sizes)`` or ``{name}(data)``.",
        "__module__": "ember" if device_type == "cpu" else "ember.cuda",
        "dtype": dtype, "_device_type": device_type,
    })
    return cls


TENSOR_TYPES = {}
for _name, _dt in (("FloatTensor", _dtype.float32), ("DoubleTensor", _dtype.float64),
                   ("HalfTensor", _dtype.float16), ("BFloat16Tensor", _dtype.bfloat16),
                   ("LongTensor", _dtype.int64), ("IntTensor", _dtype.int32),
                   ("ShortTensor", _dtype.int16), ("CharTensor", _dtype.int8),
                   ("ByteTensor", _dtype.uint8), ("BoolTensor", _dtype.bool)):
    TENSOR_TYPES[_name] = globals()[_name] = _legacy_type(_name, _dt)
    __all__.append(_name)
CUDA_TENSOR_TYPES = {name: _legacy_type(name, cls.dtype, "cuda") for name, cls in TENSOR_TYPES.items()}
del _name, _dt


def parse_type(name):
    """The (dtype, device type) of a legacy type name: ``'torch.FloatTensor'`` (or
    ``'ember.FloatTensor'``, ``'torch.cuda.LongTensor'``); ValueError for anything else."""
    for prefix, device_type in (("torch.cuda.", "cuda"), ("ember.cuda.", "cuda"),
                                ("torch.", "cpu"), ("ember.", "cpu")):
        if name.startswith(prefix):
            short = name[len(prefix):]
            if short in TENSOR_TYPES:
                return TENSOR_TYPES[short].dtype, device_type
            if short in ("ComplexFloatTensor", "ComplexDoubleTensor"):
                return (_dtype.complex64 if short == "ComplexFloatTensor" else _dtype.complex128,
                        device_type)
            break
    raise ValueError(f"invalid type: '{name}'")
