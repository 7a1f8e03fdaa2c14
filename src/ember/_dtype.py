"""Data types and torch's type-promotion rules.

Every ember dtype of tensors wraps one NumPy dtype (bfloat16 and the float8 types come from
ml_dtypes). Promotion follows torch, not NumPy: e.g. int64 + float16 gives float16, a Python
float does not upcast a float16 tensor, int / int true division gives the default float dtype,
and uint16/uint32/uint64 and the float8 types promote with almost nothing (torch's
RuntimeErrors). torch's dtypes that ember has no tensors of (the bits, sub-byte integer,
quantized, complex32 and float4 types) exist as dtype objects that print, compare, promote and
pickle as torch's; making a tensor of one raises.
"""
import builtins
import math

import ml_dtypes
import numpy as np

__all__ = [
    "dtype", "float16", "half", "bfloat16", "float32", "float", "float64", "double",
    "uint8", "int8", "int16", "short", "int32", "int", "int64", "long", "bool",
    "complex64", "cfloat", "complex128", "cdouble",
    "uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
    "float8_e5m2fnuz", "float8_e8m0fnu",
    "bits16", "bits1x8", "bits2x4", "bits4x2", "bits8", "bit", "int1", "int2", "int3", "int4",
    "int5", "int6", "int7", "uint1", "uint2", "uint3", "uint4", "uint5", "uint6", "uint7",
    "qint8", "quint8", "qint32", "quint4x2", "quint2x4", "complex32", "chalf",
    "float4_e2m1fn_x2",
    "get_default_dtype", "set_default_dtype", "promote_types", "result_type", "can_cast",
    "finfo", "iinfo",
]

# Categories, in promotion order.
_BOOL, _INT, _FLOAT, _COMPLEX = 0, 1, 2, 3


class dtype:
    """A tensor element type, e.g. ``ember.float32``."""

    __slots__ = ("name", "np", "itemsize", "is_floating_point", "is_complex", "is_signed",
                 "_category", "_cpp_name", "__weakref__")

    def __init__(self, name, np_dtype, category, cpp_name):
        self.name = name
        self.np = None if np_dtype is None else np.dtype(np_dtype)
        self.itemsize = None if np_dtype is None else self.np.itemsize
        self._category = category
        self.is_floating_point = category == _FLOAT
        self.is_complex = category == _COMPLEX
        self.is_signed = not (name.startswith("uint") or name in ("bool", "float8_e8m0fnu"))
        self._cpp_name = cpp_name

    def __repr__(self):
        return "ember." + self.name

    def __reduce__(self):
        return (_dtype_by_name, (self.name,))

    def to_real(self):
        return {complex64: float32, complex128: float64}.get(self, self)

    def to_complex(self):
        if self in _FLOAT8:
            raise RuntimeError(f"Unknown Complex ScalarType for {self._cpp_name}")
        return {float32: complex64, float64: complex128, float16: complex64,
                bfloat16: complex64}.get(self, self)


float16 = half = dtype("float16", np.float16, _FLOAT, "Half")
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, _FLOAT, "BFloat16")
float32 = float = dtype("float32", np.float32, _FLOAT, "Float")
float64 = double = dtype("float64", np.float64, _FLOAT, "Double")
uint8 = dtype("uint8", np.uint8, _INT, "Byte")
int8 = dtype("int8", np.int8, _INT, "Char")
int16 = short = dtype("int16", np.int16, _INT, "Short")
int32 = int = dtype("int32", np.int32, _INT, "Int")
int64 = long = dtype("int64", np.int64, _INT, "Long")
bool = dtype("bool", np.bool_, _BOOL, "Bool")
complex64 = cfloat = dtype("complex64", np.complex64, _COMPLEX, "ComplexFloat")
complex128 = cdouble = dtype("complex128", np.complex128, _COMPLEX, "ComplexDouble")

# Barely-promoting types: torch promotes each only with itself (and the unsigned integers
# with the floating types), and implements few ops on them.
uint16 = dtype("uint16", np.uint16, _INT, "UInt16")
uint32 = dtype("uint32", np.uint32, _INT, "UInt32")
uint64 = dtype("uint64", np.uint64, _INT, "UInt64")
float8_e4m3fn = dtype("float8_e4m3fn", ml_dtypes.float8_e4m3fn, _FLOAT, "Float8_e4m3fn")
float8_e5m2 = dtype("float8_e5m2", ml_dtypes.float8_e5m2, _FLOAT, "Float8_e5m2")
float8_e4m3fnuz = dtype("float8_e4m3fnuz", ml_dtypes.float8_e4m3fnuz, _FLOAT, "Float8_e4m3fnuz")
float8_e5m2fnuz = dtype("float8_e5m2fnuz", ml_dtypes.float8_e5m2fnuz, _FLOAT, "Float8_e5m2fnuz")
float8_e8m0fnu = dtype("float8_e8m0fnu", ml_dtypes.float8_e8m0fnu, _FLOAT, "Float8_e8m0fnu")

ALL_DTYPES = (float16, bfloat16, float32, float64, uint8, int8, int16, int32, int64, bool,
              complex64, complex128, uint16, uint32, uint64, float8_e4m3fn, float8_e5m2,
              float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu)
_UNSIGNED_WIDE = frozenset((uint16, uint32, uint64))
_INTEGRAL = frozenset((uint8, int8, int16, int32, int64, uint16, uint32, uint64))
_FLOAT8 = frozenset((float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu))


class _NoTensorDtype(dtype):
    """A torch dtype ember has no tensors of: a dtype object that prints, compares, promotes
    and pickles as torch's (``np`` is None; ``to_dtype`` refuses it)."""
    __slots__ = ("_kind",)

    def __init__(self, name, itemsize, category, cpp_name, kind):
        super().__init__(name, None, category, cpp_name)
        self.itemsize = itemsize
        self._kind = kind
        if category == _FLOAT:  # float4_e2m1fn_x2
            self.is_signed = True

    def __getattribute__(self, name):
        if name == "is_signed" and object.__getattribute__(self, "_kind") in ("bits", "quantized"):
            kind = object.__getattribute__(self, "_kind")
            raise RuntimeError("Bits types are undefined" if kind == "bits" else
                               "isSignedType not supported for quantized types")
        return object.__getattribute__(self, name)


def _no_tensor(name, itemsize, kind, cpp_name, category=_INT):
    return _NoTensorDtype(name, itemsize, category, cpp_name, kind)


bits16 = _no_tensor("bits16", 2, "bits", "Bits16")
bits1x8 = _no_tensor("bits1x8", 1, "bits", "Bits1x8")
bits2x4 = _no_tensor("bits2x4", 1, "bits", "Bits2x4")
bits4x2 = _no_tensor("bits4x2", 1, "bits", "Bits4x2")
bits8 = _no_tensor("bits8", 1, "bits", "Bits8")
int1, int2, int3, int4, int5, int6, int7 = (
    _no_tensor(f"int{n}", 1, "subbyte", f"Int{n}") for n in range(1, 8))
uint1, uint2, uint3, uint4, uint5, uint6, uint7 = (
    _no_tensor(f"uint{n}", 1, "subbyte", f"UInt{n}") for n in range(1, 8))
bit = uint1
qint8 = _no_tensor("qint8", 1, "quantized", "QInt8")
quint8 = _no_tensor("quint8", 1, "quantized", "QUInt8")
qint32 = _no_tensor("qint32", 4, "quantized", "QInt32")
quint4x2 = _no_tensor("quint4x2", 1, "quantized", "QUInt4x2")
quint2x4 = _no_tensor("quint2x4", 1, "quantized", "QUInt2x4")
complex32 = chalf = _no_tensor("complex32", 4, "complex32", "ComplexHalf", _COMPLEX)
float4_e2m1fn_x2 = _no_tensor("float4_e2m1fn_x2", 1, "float4", "Float4_e2m1fn_x2", _FLOAT)

_BARELY_UNSIGNED = _UNSIGNED_WIDE | {uint1, uint2, uint3, uint4, uint5, uint6, uint7}
NO_TENSOR_DTYPES = (bits16, bits1x8, bits2x4, bits4x2, bits8, int1, int2, int3, int4, int5,
                    int6, int7, uint1, uint2, uint3, uint4, uint5, uint6, uint7, qint8, quint8,
                    qint32, quint4x2, quint2x4, complex32, float4_e2m1fn_x2)
_BY_NAME = {d.name: d for d in ALL_DTYPES + NO_TENSOR_DTYPES}
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
            "float64, float32, float16, bfloat16, float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, "
            "float8_e5m2fnuz, float8_e8m0fnu, complex64, complex128, int64, int32, int16, int8, "
            "uint64, uint32, uint16, uint8, and bool.") from None


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
    if isinstance(obj, dtype):
        raise_no_tensors(obj)
    try:
        return from_numpy_dtype(obj)
    except TypeError:
        raise TypeError(f"expected a dtype, but got {type(obj).__name__} ({obj!r})") from None


def raise_no_tensors(d):
    """The error for making a tensor of a dtype ember has only as a dtype object."""
    raise NotImplementedError(f"ember has no tensors of dtype {d}: torch's {d} is a dtype ember "
                              "keeps as an object only (NumPy has no such element type)")


def _dtype_object(obj):
    """``obj`` as a dtype object, dtype-only ones included (for promotion and casting rules)."""
    return obj if isinstance(obj, dtype) else to_dtype(obj)


# ---------------------------------------------------------------------------------------------
# Casting arrays

def _to_float8_e4m3fn(array):
    """torch saturates finite values and infinities to the largest magnitude (448)."""
    wide = array.astype(np.float32)
    return np.clip(wide, -448.0, 448.0).astype(float8_e4m3fn.np)


def _to_float8_e8m0fnu(array):
    """torch's rounding to a power of two (float32's exponent, rounded to nearest with ties
    to even; the sign is dropped; NaN and infinities give NaN; zero gives 2**-127)."""
    bits = array.astype(np.float32).view(np.uint32)
    exponent = (bits >> 23) & 0xFF
    guard = (bits & 0x400000) != 0
    rest = (bits & 0x3FFFFF) != 0
    round_up = guard & (rest | (exponent > 0)) & (exponent != 0xFF)
    return (exponent + round_up).astype(np.uint8).view(float8_e8m0fnu.np)


_FROM_FLOAT32 = {float8_e4m3fn.np: _to_float8_e4m3fn, float8_e8m0fnu.np: _to_float8_e8m0fnu}
_FLOAT8_NP = frozenset(d.np for d in _FLOAT8)
_THROUGH_FLOAT32 = _FLOAT8_NP | {bfloat16.np}  # ml_dtypes' types: torch converts via float


def cast_array(array, d):
    """``array`` as an array of dtype ``d``, converting values as torch does: to and from the
    float8 types through float32 (saturating for float8_e4m3fn), from bfloat16 through float32
    (so that casts to integers wrap as torch's), the rest as NumPy's ``astype``."""
    target = d.np
    if target is None:
        raise_no_tensors(d)
    if target in _FLOAT8_NP:
        if array.dtype.kind == "c":
            array = array.real
        special = _FROM_FLOAT32.get(target)
        if special is not None:
            return special(array)
        return array.astype(np.float32).astype(target)
    if array.dtype in _THROUGH_FLOAT32 and target.kind in "biu":
        array = array.astype(np.float32)
    return array.astype(target)


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
    """torch's promotion of two dtypes of tensors (None where torch refuses it)."""
    if a is b:
        return a
    if a in _FLOAT8 or b in _FLOAT8:
        return None
    if a in _UNSIGNED_WIDE or b in _UNSIGNED_WIDE:
        other = b if a in _UNSIGNED_WIDE else a
        return other if other._category == _FLOAT else None
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


_PROMOTE = {}
for _a in ALL_DTYPES:
    for _b in ALL_DTYPES:
        _r = _promote_pair(_a, _b)
        if _r is not None:
            _PROMOTE[(_a, _b)] = _r
del _a, _b, _r
_COMPLEX32_WITH = {bool: complex32, uint8: complex32, int8: complex32, int16: complex32,
                   int32: complex32, int64: complex32, float16: complex32, bfloat16: complex64,
                   float32: complex64, float64: complex128, complex64: complex64,
                   complex128: complex128}


def _promotion_error(a, b):
    """torch's RuntimeError for a pair of dtypes it does not promote, checked in its order."""
    names = f"{a._cpp_name} and {b._cpp_name}"
    kinds = {getattr(d, "_kind", None) for d in (a, b)}
    if "quantized" in kinds:
        return RuntimeError("promoteTypes with quantized numbers is not handled yet; figure out "
                            f"what the correct rules should be, offending types: {a._cpp_name} "
                            f"{b._cpp_name}")
    if "bits" not in kinds:
        if a in _FLOAT8 or b in _FLOAT8:
            return RuntimeError("Promotion for Float8 Types is not supported, attempted to "
                                f"promote {names}")
        if a in _BARELY_UNSIGNED or b in _BARELY_UNSIGNED:
            return RuntimeError("Promotion for uint16, uint32, uint64 types is not supported, "
                                f"attempted to promote {names}")
    return RuntimeError(f"Promotion from {names} is unsupported.")


def _promote_objects(a, b):
    """The promotion of two dtype objects, dtype-only ones included, or torch's error."""
    result = _PROMOTE.get((a, b))
    if result is not None:
        return result
    if a is b:
        return a
    kinds = {getattr(d, "_kind", None) for d in (a, b)}
    if not kinds & {"quantized", "bits"} and a not in _FLOAT8 and b not in _FLOAT8:
        if a in _BARELY_UNSIGNED or b in _BARELY_UNSIGNED:
            other = b if a in _BARELY_UNSIGNED else a
            if other.is_floating_point:
                return other
        elif complex32 in (a, b):
            result = _COMPLEX32_WITH.get(b if a is complex32 else a)
            if result is not None:
                return result
    raise _promotion_error(a, b)


def promote_types(type1, type2):
    """The dtype of the smallest size and scalar kind to which both types may be promoted."""
    return _promote_objects(_dtype_object(type1), _dtype_object(type2))


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
        return _promote_objects(higher, lower)
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
                dim = d if dim is None or dim is d else _promote_objects(dim, d)
            else:
                zero = d if zero is None or zero is d else _promote_objects(zero, d)
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
    from_, to = _dtype_object(from_), _dtype_object(to)
    if from_.is_complex and not to.is_complex:
        return False
    if (from_.is_floating_point or from_.is_complex) and to in _INTEGRAL:
        return False
    return from_ is bool or to is not bool


# torch's epsilon where it differs from the type's (its numeric_limits for float8_e5m2fnuz
# give 2**-3, though two significand bits make 2**-2)
_TORCH_EPS = {"float8_e5m2fnuz": 0.125}


class finfo:
    """Machine limits for floating point types."""

    def __init__(self, type=None):
        type = get_default_dtype() if type is None else _dtype_object(type)
        if not (type.is_floating_point or type.is_complex):
            raise TypeError("ember.finfo() requires a floating point input type. Use ember.iinfo "
                            "to handle 'ember.finfo'")
        if type is float4_e2m1fn_x2:
            raise TypeError("bad argument type for built-in operation")
        real = float16 if type is complex32 else type.to_real()
        info = ml_dtypes.finfo(real.np)
        self.dtype = real.name
        self.bits = info.bits
        self.eps = _TORCH_EPS.get(real.name, builtins.float(info.eps))
        self.max = builtins.float(info.max)
        self.min = builtins.float(info.min)
        self.tiny = self.smallest_normal = builtins.float(info.tiny)
        # 10 ** -digits10, as C++'s numeric_limits give it: the decimal digits the significand holds
        self.resolution = 10.0 ** -math.floor(info.nmant * math.log10(2))

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.tiny:g}, tiny={self.tiny:g}, "
                f"dtype={self.dtype})")


class iinfo:
    """Machine limits for integer types."""

    def __init__(self, type):
        type = _dtype_object(type)
        if getattr(type, "_kind", None) == "quantized":
            raise NotImplementedError(f'"dtype" not implemented for \'{type._cpp_name}\'')
        if type is bool:
            raise TypeError("ember.bool is not supported by ember.iinfo")
        if type._category != _INT or type.np is None:
            raise TypeError("ember.iinfo() requires an integer input type. Use ember.finfo to "
                            "handle 'ember.iinfo'")
        info = np.iinfo(type.np)
        self.dtype = type.name
        self.bits = 8 * type.itemsize
        self.min = builtins.int(info.min)
        self.max = builtins.int(info.max)

    def __repr__(self):
        return f"iinfo(min={builtins.float(self.min):g}, max={builtins.float(self.max):g}, dtype={self.dtype})"
