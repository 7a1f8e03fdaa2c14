"""Data types and torch's type-promotion rules.

Every ember dtype wraps one NumPy dtype (bfloat16 comes from ml_dtypes). Promotion follows
torch, not NumPy: e.g. int64 + float16 gives float16, a Python float does not upcast a float16
tensor, and int / int true division gives the default float dtype.
"""
import builtins

import ml_dtypes
import numpy as np

__all__ = [
    "dtype", "float16", "half", "bfloat16", "float32", "float", "float64", "double",
    "uint8", "int8", "int16", "short", "int32", "int", "int64", "long", "bool",
    "complex64", "cfloat", "complex128", "cdouble",
    "get_default_dtype", "set_default_dtype", "promote_types", "result_type", "can_cast",
    "finfo", "iinfo",
]

# Categories, in promotion order.
_BOOL, _INT, _FLOAT, _COMPLEX = 0, 1, 2, 3


class dtype:
    """A tensor element type, e.g. ``ember.float32``."""

    __slots__ = ("name", "np", "itemsize", "is_floating_point", "is_complex", "is_signed",
                 "_category", "__weakref__")

    def __init__(self, name, np_dtype, category):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.itemsize = self.np.itemsize
        self._category = category
        self.is_floating_point = category == _FLOAT
        self.is_complex = category == _COMPLEX
        self.is_signed = name not in ("uint8", "bool")

    def __repr__(self):
        return "ember." + self.name

    def __reduce__(self):
        return (_dtype_by_name, (self.name,))

    def to_real(self):
        return {complex64: float32, complex128: float64}.get(self, self)

    def to_complex(self):
        return {float32: complex64, float64: complex128, float16: complex64,
                bfloat16: complex64}.get(self, self)


float16 = half = dtype("float16", np.float16, _FLOAT)
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, _FLOAT)
float32 = float = dtype("float32", np.float32, _FLOAT)
float64 = double = dtype("float64", np.float64, _FLOAT)
uint8 = dtype("uint8", np.uint8, _INT)
int8 = dtype("int8", np.int8, _INT)
int16 = short = dtype("int16", np.int16, _INT)
int32 = int = dtype("int32", np.int32, _INT)
int64 = long = dtype("int64", np.int64, _INT)
bool = dtype("bool", np.bool_, _BOOL)
complex64 = cfloat = dtype("complex64", np.complex64, _COMPLEX)
complex128 = cdouble = dtype("complex128", np.complex128, _COMPLEX)

ALL_DTYPES = (float16, bfloat16, float32, float64, uint8, int8, int16, int32, int64, bool,
              complex64, complex128)
_BY_NAME = {d.name: d for d in ALL_DTYPES}
_BY_NP = {d.np: d for d in ALL_DTYPES}


def _dtype_by_name(name):
    return _BY_NAME[name]


def from_numpy_dtype(np_dtype):
    """The ember dtype of a NumPy dtype; TypeError for types ember has no counterpart for."""
    try:
        return _BY_NP[np_dtype]
    except KeyError:
        pass
    try:
        return _BY_NP[np.dtype(np_dtype)]
    except (KeyError, TypeError):
        raise TypeError(
            f"can't convert np.ndarray of type {np.dtype(np_dtype)}. The only supported types are: "
            "float64, float32, float16, bfloat16, complex64, complex128, int64, int32, int16, "
            "int8, uint8, and bool.") from None


def to_dtype(obj):
    """Accept an ember dtype, a NumPy dtype or a Python type (float, int, bool, complex)."""
    if obj.__class__ is dtype:
        return obj
    if obj is builtins.float:
        return get_default_dtype()
    if obj is builtins.int:
        return int64
    if obj is builtins.bool:
        return bool
    if obj is builtins.complex:
        return get_default_dtype().to_complex()
    try:
        return from_numpy_dtype(obj)
    except TypeError:
        raise TypeError(f"expected a dtype, but got {type(obj).__name__} ({obj!r})") from None


# ---------------------------------------------------------------------------------------------
# Default dtype

class _Defaults:
    dtype = float32


def get_default_dtype():
    """Get the current default floating point dtype (float32 at start)."""
    return _Defaults.dtype


def set_default_dtype(d):
    """Sets the default floating point dtype; only float16, bfloat16, float32 and float64."""
    if d.__class__ is not dtype:
        raise TypeError("invalid dtype object: only floating-point types are supported as the "
                        "default type")
    if d not in (float16, bfloat16, float32, float64):
        raise TypeError("only floating-point types are supported as the default type")
    _Defaults.dtype = d


# ---------------------------------------------------------------------------------------------
# Promotion

def _promote_pair(a, b):
    if a is b:
        return a
    ca, cb = a._category, b._category
    if ca < cb:
        a, b, ca, cb = b, a, cb, ca
    # now a has the higher (or equal) category
    if ca == _BOOL:
        return bool
    if ca != cb:
        if ca == _COMPLEX and cb == _FLOAT:
            return complex128 if (b is float64 or a is complex128) else complex64
        return a
    if ca == _FLOAT:
        if {a, b} == {float16, bfloat16}:
            return float32
        return a if a.itemsize >= b.itemsize else b
    if ca == _COMPLEX:
        return a if a.itemsize >= b.itemsize else b
    # both integer: NumPy's rules agree with torch's for these types (uint8 + int8 -> int16)
    return _BY_NP[np.promote_types(a.np, b.np)]


_PROMOTE = {(a, b): _promote_pair(a, b) for a in ALL_DTYPES for b in ALL_DTYPES}


def promote_types(type1, type2):
    """The dtype of the smallest size and scalar kind to which both types may be promoted."""
    return _PROMOTE[(to_dtype(type1), to_dtype(type2))]


def _scalar_dtype(value):
    """The dtype a wrapped Python number stands for in promotion."""
    cls = value.__class__
    if cls is builtins.bool or cls is np.bool_:
        return bool
    if cls is builtins.int:
        return int64
    if cls is builtins.float:
        return _Defaults.dtype
    if cls is builtins.complex:
        return _Defaults.dtype.to_complex()
    if isinstance(value, np.generic):
        kind = value.dtype.kind
        return {"b": bool, "i": int64, "u": int64, "f": _Defaults.dtype,
                "c": _Defaults.dtype.to_complex()}[kind]
    raise TypeError(f"unsupported scalar type {cls.__name__}")


def _combine_categories(higher, lower):
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.is_complex:
        return higher
    if lower.is_complex:
        return higher.to_complex() if higher.is_floating_point else lower
    if higher.is_floating_point:
        return higher
    if higher is bool or lower.is_floating_point:
        return _PROMOTE[(higher, lower)]
    return higher


def result_type_of(*operands):
    """torch's result_type over tensors and Python numbers: dimensioned tensors win over
    zero-dimensional tensors, which win over Python scalars, unless a lower-priority operand
    belongs to a higher category (bool < integer < floating < complex)."""
    dim = zero = wrapped = None
    for x in operands:
        d = getattr(x, "dtype", None)
        if d is not None and d.__class__ is dtype:
            if x.ndim:
                dim = d if dim is None else _PROMOTE[(dim, d)]
            else:
                zero = d if zero is None else _PROMOTE[(zero, d)]
        else:
            d = _scalar_dtype(x)
            wrapped = d if wrapped is None else _PROMOTE[(wrapped, d)]
    return _combine_categories(dim, _combine_categories(zero, wrapped))


def result_type(tensor1, tensor2):
    """Returns the dtype that would result from an arithmetic operation on the operands."""
    return result_type_of(tensor1, tensor2)


def can_cast(from_, to):
    """Whether a cast from ``from_`` to ``to`` is allowed under torch's casting rules (no cast
    to a lower category: float to int, complex to float, non-bool to bool)."""
    from_, to = to_dtype(from_), to_dtype(to)
    return from_._category <= to._category


class finfo:
    """Machine limits for floating point types."""

    def __init__(self, type=None):
        type = get_default_dtype() if type is None else to_dtype(type)
        if not (type.is_floating_point or type.is_complex):
            raise TypeError("ember.finfo() requires a floating point input type. Use ember.iinfo "
                            "to handle 'ember.finfo'")
        real = type.to_real()
        info = ml_dtypes.finfo(real.np)
        self.dtype = real.name
        self.bits = info.bits
        self.eps = builtins.float(info.eps)
        self.max = builtins.float(info.max)
        self.min = builtins.float(info.min)
        self.tiny = self.smallest_normal = builtins.float(info.tiny)
        self.resolution = 10.0 ** -builtins.int(info.precision)

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.tiny:g}, tiny={self.tiny:g}, "
                f"dtype={self.dtype})")


class iinfo:
    """Machine limits for integer types."""

    def __init__(self, type):
        type = to_dtype(type)
        if type is bool:
            raise TypeError("ember.bool is not supported by ember.iinfo")
        if type._category != _INT:
            raise TypeError("ember.iinfo() requires an integer input type. Use ember.finfo to "
                            "handle 'ember.iinfo'")
        info = np.iinfo(type.np)
        self.dtype = type.name
        self.bits = 8 * type.itemsize
        self.min = builtins.int(info.min)
        self.max = builtins.int(info.max)

    def __repr__(self):
        return f"iinfo(min={builtins.float(self.min):g}, max={builtins.float(self.max):g}, dtype={self.dtype})"
