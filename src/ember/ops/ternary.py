"""Pointwise ops of three operands: where, clamp/clip, lerp, addcmul, addcdiv."""
import math

import numpy as np
from numpy import iinfo, ndarray

from .. import _dtype
from .._backend import openmp_kernels, vector_math
from .._backend.choice import KernelChoice
from .._dtype import result_type_of
from . import _compiled_functions
from ._common import (
    check_value_fits,
    any_requires_grad, apply_inplace, broadcasts_to, bump_version, _BY_NP, check_inplace, forward_mode, grad_state,
    make, method, namespace_of, Node, record, sum_to, Tensor, _type_word,
)
from ..autograd._dual import jvp_by_backward, jvp_by_transposition
from ..autograd.saved_fields import operand_for
from .._torch_function import override_or_raise

__all__ = ["where", "clamp", "clip", "clamp_min", "clamp_max", "lerp", "addcmul", "addcdiv"]


class WhereBackward0(Node):
    __slots__ = ()
    saved_fields = {"condition": 0}

    def jvp(self, t_condition, ta, tb):   # each branch's tangent where it is taken
        if ta is None and tb is None:
            return None
        return where(self.primals[0], 0.0 if ta is None else ta, 0.0 if tb is None else tb)

    def backward(self, grad):
        (cond,) = self.saved_tensors
        zero = grad.new_zeros(())
        ga = gb = None
        if self.next_functions[1][0] is not None:
            ga = _reduce(where(cond, grad, zero), self.shapes[0], self.dtypes[0])
        if self.next_functions[2][0] is not None:
            gb = _reduce(where(cond, zero, grad), self.shapes[1], self.dtypes[1])
        return None, ga, gb


def _reduce(g, shape, dtype):
    if g._data.shape != shape:
        g = sum_to(g, shape)
    if g._data.dtype != dtype:
        g = g.to(_dtype.from_numpy_dtype(dtype))
    return g


def where(condition, input=None, other=None, *, out=None):
    """Elements of ``input`` where ``condition`` holds, else of ``other`` (broadcast). The
    gradient flows only to the selected operand, so the other branch's NaN never leaks in."""
    if out is None and input is not None and other is not None:
        return _where_entry[0](condition, input, other)
    return _python_where(condition, input, other, out=out)


def _python_where(condition, input=None, other=None, *, out=None):
    """``where`` in every case its compiled function (``_compiled_functions``) leaves to Python."""
    try:
        if input is None and other is None:
            return condition.nonzero(as_tuple=True)
        if not isinstance(condition, Tensor):
            raise TypeError(f"where(): argument 'condition' must be Tensor, not {type(condition).__name__}")
        if condition._data.dtype == _dtype.uint8.np:
            import warnings
            warnings.warn("where received a uint8 condition tensor. This behavior is deprecated and will be "
                          "removed in a future version of PyTorch. Use a boolean condition instead.",
                          UserWarning, stacklevel=2)
            condition = condition.bool()
        if condition._data.dtype.kind != "b":
            raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                               f"{condition.dtype.name.capitalize()}")
        dt = result_type_of(input, other).np
        for number in (n for n in (input, other) if not isinstance(n, Tensor)):
            check_value_fits(number, dt)   # (torch converts a number to the result's dtype, checked)
        xp = namespace_of(condition._data)
        a = input._data.astype(dt, copy=False) if isinstance(input, Tensor) else input
        b = other._data.astype(dt, copy=False) if isinstance(other, Tensor) else other
        try:
            data = _select(xp, condition._data, a, b, dt)
        except ValueError:
            shapes = [list(t._data.shape) for t in (condition, input, other) if isinstance(t, Tensor)]
            raise RuntimeError(f"where(): shapes {shapes} cannot be broadcast together") from None
        if data.dtype != dt:
            data = data.astype(dt)
        res = make(data)
        ta = input if isinstance(input, Tensor) else None
        tb = other if isinstance(other, Tensor) else None
        node = record(WhereBackward0, (condition, ta, tb), res)
        if node is not None:
            node.shapes = (a.shape if ta is not None else None, b.shape if tb is not None else None)
            node.dtypes = (ta._data.dtype if ta is not None else None, tb._data.dtype if tb is not None else None)
            node.save(condition)
        if out is not None:
            from .pointwise import _maybe_out
            return _maybe_out(res, out)
        return res
    except (AttributeError, TypeError) as error:   # a tensor-like argument's override
        return override_or_raise(where, error, condition, input, other, out=out)


# From this many condition elements on, ``where`` selects bits: NumPy's ``where`` branches per
# element, and a condition without a pattern (a ReLU's mask) defeats the branch predictor.
WHERE_BITWISE_MIN_ELEMENTS = 16384
_SAME_SIZE_INTEGER = {1: "int8", 2: "int16", 4: "int32", 8: "int64"}
_where_entry = _compiled_functions.register(_python_where, WhereBackward0, kind="where",
                                            max_elements=WHERE_BITWISE_MIN_ELEMENTS - 1)


def _select(xp, condition, a, b, dtype):
    """``xp.where(condition, a, b)`` for operands of ``dtype`` (arrays or numbers); on large
    NumPy arrays as ``b ^ ((a ^ b) & mask)`` on the elements' bits, mask all ones where
    ``condition`` holds: the same bits, with no branch per element."""
    integer = _SAME_SIZE_INTEGER.get(dtype.itemsize)
    if (condition.size < WHERE_BITWISE_MIN_ELEMENTS or integer is None or dtype.kind == "c"
            or xp.__name__ != "numpy"):
        return xp.where(condition, a, b)
    a_bits = xp.asarray(a, dtype=dtype).view(integer)
    b_bits = xp.asarray(b, dtype=dtype).view(integer)
    mask = condition.astype(integer)
    xp.negative(mask, out=mask)
    bits = xp.bitwise_xor(a_bits, b_bits)
    bits = xp.bitwise_and(bits, mask, out=bits if bits.shape == mask.shape else None)
    return xp.bitwise_xor(bits, b_bits, out=bits).view(dtype)


@method("where")
def _where_method(self, condition, y):
    return where(condition, self, y)


# -- shared helpers --------------------------------------------------------------------------

def _arrays_as(dtype_np, *operands):
    """Operands (tensors or numbers; None passes through) as arrays or numbers of one dtype."""
    out = []
    for x in operands:
        if isinstance(x, Tensor):
            x = x._data.astype(dtype_np, copy=False)
        elif x is not None and dtype_np.kind in "iu":
            x = _wrap_int(int(x), dtype_np)
        elif x is not None and dtype_np == _dtype.bfloat16.np:  # else NumPy computes in float32
            x = dtype_np.type(x)
        out.append(x)
    return out


def _wrap_int(value, dtype_np):
    """A Python int as the integer type holds it: out-of-range values wrap around, as in torch."""
    info = iinfo(dtype_np)
    if info.min <= value <= info.max:
        return value
    span = info.max - info.min + 1
    return (value - info.min) % span + info.min


def _broadcast_error(*operands):
    """torch's message for the first operand whose shape does not broadcast with those before."""
    shapes = [t._data.shape for t in operands if isinstance(t, Tensor)]
    acc = shapes[0]
    for shape in shapes[1:]:
        n = max(len(acc), len(shape))
        a, b = (1,) * (n - len(acc)) + acc, (1,) * (n - len(shape)) + shape
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y and x != 1 and y != 1:
                raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b "
                                   f"({y}) at non-singleton dimension {i}")
        acc = tuple(x if y == 1 else y for x, y in zip(a, b))


def _compute(fn, *tensors):
    try:
        return fn()
    except ValueError:
        _broadcast_error(*tensors)
        raise


def _check_castable(result_np, self):
    """torch's error for an in-place op whose result dtype ``self`` cannot hold."""
    sd = self._data.dtype
    if result_np != sd and not _dtype.can_cast(_BY_NP[result_np], _BY_NP[sd]):
        raise RuntimeError(f"result type {_type_word(result_np)} can't be cast to the desired "
                           f"output type {_type_word(sd)}")


def _check_inplace_shape(self, *operands):
    shapes = [t._data.shape for t in operands if isinstance(t, Tensor)]
    if shapes:
        sd = self._data
        shape = _compute(lambda: namespace_of(sd).broadcast_shapes(sd.shape, *shapes),
                         self, *operands)
        if tuple(shape) != sd.shape:
            raise RuntimeError(f"output with shape {list(sd.shape)} doesn't match the broadcast "
                               f"shape {list(shape)}")


def _inplace_fast(self, operands):
    """Whether ``self.op_(...)`` may write straight into self's memory (autograd not recording);
    else the caller goes through ``apply_inplace``."""
    if (grad_state.grad_enabled and (self._requires_grad or any_requires_grad(operands))) \
            or forward_mode.active:
        return False
    check_inplace(self)
    return True


def _finish(res, out, exact=False):
    """``res``, or written into ``out=``: ``exact``ly its dtype for the ops torch requires it of."""
    if out is None:
        return res
    from .pointwise import _maybe_out
    return _maybe_out(res, out, exact)


# -- clamp -----------------------------------------------------------------------------------

class _ClampScalarNode(Node):
    """clamp with number bounds: the gradient passes where min <= input <= max."""
    __slots__ = ()
    jvp = jvp_by_backward   # (the tangent where the input is within the bounds)

    def backward(self, grad):
        (x,) = self.saved_tensors
        lo, hi = self.bounds
        if lo is not None and hi is not None:
            mask = (x >= lo) & (x <= hi)
        else:
            mask = x >= lo if lo is not None else x <= hi
        return (where(mask, grad, 0.0),)


class _ClampTensorNode(Node):
    """clamp with tensor bounds (torch's clamp_backward and clamp_backward_min_max)."""
    __slots__ = ()
    jvp = jvp_by_transposition

    def backward(self, grad):
        x, lo, hi = self.saved_tensors
        lo = self.lo if lo is None else lo
        hi = self.hi if hi is None else hi
        if lo is not None and hi is not None:
            gx = where((x >= lo) & (x <= hi), grad, 0.0)
        else:
            gx = where(x >= lo, grad, 0.0) if lo is not None else where(x <= hi, grad, 0.0)
        glo = ghi = None
        if self.next_functions[1][0] is not None:
            mask = x < lo if hi is None else (x < lo) & (lo < hi)
            glo = _reduce(where(mask, grad, 0.0), self.lo_shape, self.lo_dtype)
        if self.next_functions[2][0] is not None:
            mask = x > hi if lo is None else (x > hi) | (hi < lo)
            ghi = _reduce(where(mask, grad, 0.0), self.hi_shape, self.hi_dtype)
        return _reduce(gx, self.x_shape, self.x_dtype), glo, ghi


def _node(name, base, saved_fields):
    return type(name, (base,), {"__slots__": (), "saved_fields": saved_fields})


# torch's names: clamp's node for number bounds is ClampBackward1, clamp_min's ClampMinBackward0
ClampBackward1 = _node("ClampBackward1", _ClampScalarNode, {
    "self": 0, "min": lambda node: node.bounds[0], "max": lambda node: node.bounds[1]})
ClampBackward0 = _node("ClampBackward0", _ClampTensorNode, {"self": 0, "min": 1, "max": 2})
ClampMinBackward0 = _node("ClampMinBackward0", _ClampScalarNode,
                          {"self": 0, "min": lambda node: node.bounds[0]})
ClampMinBackward1 = _node("ClampMinBackward1", _ClampTensorNode, {"self": 0, "min": 1})
ClampMaxBackward0 = _node("ClampMaxBackward0", _ClampScalarNode,
                          {"self": 0, "max": lambda node: node.bounds[1]})
ClampMaxBackward1 = _node("ClampMaxBackward1", _ClampTensorNode, {"self": 0, "max": 2})


def _check_bounds(min, max):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")


def _check_not_bool(common, min, max):
    """torch has no bool kernel for clamp with number bounds, nor with two tensor bounds."""
    if common.kind != "b":
        return
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        if min is None or max is None:
            return
        kernel = "clamp_cpu"
    else:
        kernel = "clamp_scalar_cpu" if min is not None and max is not None else \
            ("clamp_min_scalar_cpu" if min is not None else "clamp_max_scalar_cpu")
    raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


# From this many elements a float clamp to number bounds is NumPy's clip (one vectorised pass, a
# missing bound as an infinity), below it maximum/minimum (clip's Python wrapper costs more than
# the pass). Array bounds always take maximum/minimum, faster than NumPy's clip with arrays
# (BENCHMARKS.md, "The op table's tiny and medium sizes at 1 thread, night of 2026-12-04").
CLIP_MIN_ELEMENTS = 1024


def _clip_numbers(x, lo, hi):
    """NumPy's clip of ``x`` (float, or integer with both bounds in its range) to number
    bounds."""
    if x.dtype.kind == "f":
        return namespace_of(x).clip(x, -math.inf if lo is None else lo, math.inf if hi is None else hi)
    return namespace_of(x).clip(x, lo, hi)


# clamp to number bounds: large float32 and int64 arrays on the loop
_clipped = KernelChoice("clamp", onednn=openmp_kernels.clamp, numpy=_clip_numbers)


# clamp to array bounds: a large float32 input and a row of bounds repeated over its rows on vector_math's
# loops (their rows form), else NumPy's maximum and minimum
_at_least, _at_most = (vector_math.binary_when_large(op, lambda x, y, op=op: getattr(namespace_of(x), op)(x, y))
                       for op in ("maximum", "minimum"))


def _clamp_forward(x, lo, hi):
    lo_array, hi_array = hasattr(lo, "shape"), hasattr(hi, "shape")
    if x.size >= CLIP_MIN_ELEMENTS and not (lo_array or hi_array):
        if x.dtype.kind == "f" or (x.dtype.kind in "iu" and lo is not None and hi is not None):
            return _clipped(x, lo, hi)   # (integer bounds in its range)
    if lo_array and hi_array:
        return _clamp_to_arrays(x, lo, hi)
    return _clamp_in_passes(x, lo, hi)


def _clamp_in_passes(x, lo, hi):
    """NumPy's ``maximum`` of ``x`` and the lower bound, then ``minimum`` with the upper (either
    may be None), in place where the first pass's result can take the second."""
    xp = namespace_of(x)
    if x.dtype == _dtype.bfloat16.np:  # NumPy would compare bfloat16 with a float in float32
        lo, hi = (None if b is None else xp.asarray(b, dtype=x.dtype) for b in (lo, hi))
    large = x.dtype == _dtype.float32.np and x.size >= vector_math.ROWS_MIN_ELEMENTS
    if lo is not None:
        x = _at_least(x, lo) if large else xp.maximum(x, lo)
        if (hasattr(hi, "shape") and hi.dtype == x.dtype and x.dtype.kind in "fiu" and broadcasts_to(hi.shape, x.shape)
                and not (large and hi.shape != x.shape)):   # (a large one's row of bounds: the loop's rows)
            return xp.minimum(x, hi, out=x)   # (x is maximum's fresh result)
    if hi is not None:
        x = _at_most(x, hi) if large else xp.minimum(x, hi)
    return x


# clamp to two array bounds: a large float32 input with bounds of its shape, or rows of it, in
# vector_math's one loop (both passes at once), else the two passes
_clamp_to_arrays = vector_math.when_large("clamp", lambda x, lo, hi: vector_math.ternary("clamp", x, lo, hi),
                                          _clamp_in_passes)


def _numbers_or_tensors(min, max):
    """torch takes both bounds as numbers or both as tensors; a 0-d tensor that needs no
    gradient passes as a number."""
    if isinstance(min, Tensor) == isinstance(max, Tensor) or min is None or max is None:
        return min, max
    lo, hi = min, max
    if isinstance(lo, Tensor) and lo._data.ndim == 0 and not lo._requires_grad:
        lo = lo.item()
    if isinstance(hi, Tensor) and hi._data.ndim == 0 and not hi._requires_grad:
        hi = hi.item()
    if isinstance(lo, Tensor) or isinstance(hi, Tensor):
        got = ", ".join(["Tensor"] + [type(x).__name__ for x in (min, max)])
        raise TypeError(f"clamp() received an invalid combination of arguments - got ({got}), but "
                        "expected one of:\n * (Tensor input, Tensor min = None, Tensor max = None, *, "
                        "Tensor out = None)\n * (Tensor input, Number min = None, Number max = None, *, "
                        "Tensor out = None)\n")
    return lo, hi


def _number_bounds(min, max):
    return ((min is None or min.__class__ is int or min.__class__ is float)
            and (max is None or max.__class__ is int or max.__class__ is float))


def _small_int_bounds(min, max):
    """Both bounds None or ints every signed integer dtype holds (-128 to 127)."""
    return ((min is None or (min.__class__ is int and -128 <= min <= 127))
            and (max is None or (max.__class__ is int and -128 <= max <= 127)))


def _check_not_complex(*tensors):
    if any(isinstance(t, Tensor) and t._data.dtype.kind == "c" for t in tensors):
        raise NotImplementedError("clamp is not supported for complex types")


def _float_tensor_bounds(input, min, max):
    """The bounds' arrays where both are tensors (or one is None) of the input's float dtype,
    broadcasting to its shape (no promotion to do, the result the input's shape); else None."""
    x = input._data
    if x.dtype.kind != "f" or (min is None and max is None):
        return None
    arrays = []
    for b in (min, max):
        if b is None:
            arrays.append(None)
            continue
        if not isinstance(b, Tensor):
            return None
        a = b._data
        if a.dtype != x.dtype or a.__class__ is not x.__class__ or not broadcasts_to(a.shape, x.shape):
            return None
        arrays.append(a)
    return arrays


def _clamp(input, min, max, out, scalar_node, tensor_node):
    if _number_bounds(min, max) and _is_float_data(input):   # the common case: no promotion to do
        res = make(_clamp_forward(input._data, min, max))
    elif _small_int_bounds(min, max) and input._data.dtype.kind == "i":   # (nor here)
        res = make(_clamp_forward(input._data, min, max))
    elif (bounds := _float_tensor_bounds(input, min, max)) is not None:   # (nor here)
        res = make(_clamp_forward(input._data, *bounds))
    else:
        res, min, max = _clamp_checked(input, min, max)
    if not (isinstance(min, Tensor) or isinstance(max, Tensor)):
        node = record(scalar_node, (input,), res)
        if node is not None:
            node.bounds = (min, max)
            node.save(input)
    else:
        _record_clamp_tensors(tensor_node, res, input, min, max)
    return _finish(res, out, exact=True)


def _clamp_checked(input, min, max):
    """``clamp``'s result for bounds other than real numbers beside a float tensor, and the
    bounds it was computed with."""
    if not isinstance(min, Tensor) or not isinstance(max, Tensor):
        min, max = _numbers_or_tensors(min, max)   # a 0-d bound beside a number is a number
    for b in (min, max):
        if isinstance(b, complex) and b.imag != 0:
            raise RuntimeError("value cannot be converted to type double without overflow")
    min, max = (b.real if isinstance(b, complex) else b for b in (min, max))
    _check_not_complex(input, min, max)
    if _number_bounds(min, max) and _is_float_data(input):
        return make(_clamp_forward(input._data, min, max)), min, max
    min, max = _numbers_or_tensors(min, max)
    return _clamp_promoted(input, min, max), min, max


def _check_integer_bounds(common, bounds):
    """torch's overflow error for a number bound an integer ``common`` dtype cannot hold."""
    if common.kind in "iu":
        for bound in bounds:   # (-128 to 127 fit every integer dtype: the common bounds)
            if not isinstance(bound, Tensor) and not (bound.__class__ is int and -128 <= bound <= 127):
                check_value_fits(bound, common)


def _clamp_promoted(input, min, max):
    bounds = [b for b in (min, max) if b is not None]
    common = result_type_of(input, *bounds).np
    _check_not_bool(common, min, max)
    _check_integer_bounds(common, bounds)
    x, lo, hi = _arrays_as(common, input, min, max)
    return make(_compute(lambda: _clamp_forward(x, lo, hi), input, min, max))


def _record_clamp_tensors(node_cls, res, input, min, max):
    tmin = min if isinstance(min, Tensor) else None
    tmax = max if isinstance(max, Tensor) else None
    node = record(node_cls, (input, tmin, tmax), res)
    if node is None:
        return
    node.lo, node.hi = (None if tmin is not None else min), (None if tmax is not None else max)
    node.x_shape, node.x_dtype = input._data.shape, input._data.dtype
    node.lo_shape, node.lo_dtype = (tmin._data.shape, tmin._data.dtype) if tmin is not None else (None, None)
    node.hi_shape, node.hi_dtype = (tmax._data.shape, tmax._data.dtype) if tmax is not None else (None, None)
    node.save(input, tmin, tmax)


def _check_input(input, name):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")


@method("clamp", "clip")
def clamp(input, min=None, max=None, *, out=None):
    """Clamps all elements in ``input`` into the range ``[min, max]`` (numbers or tensors,
    either may be None): ``min(max(input, min), max)``."""
    if out is None:
        return _clamp_entry[0](input, min, max)
    return _python_clamp(input, min, max, out=out)


def _python_clamp(input, min, max, *, out=None):
    """``clamp`` in every case its compiled function (``_compiled_functions``) leaves to Python."""
    try:
        _check_input(input, "clamp")
        _check_bounds(min, max)
        return _clamp(input, min, max, out, ClampBackward1, ClampBackward0)
    except (AttributeError, TypeError) as error:   # a tensor-like argument's override
        return override_or_raise(clamp, error, input, min, max, out=out)


# (number bounds below the size from which the Python op takes NumPy's clip; larger float32 tensors on its loop)
_clamp_entry = _compiled_functions.register(
    _python_clamp, ClampBackward0, kind="clamp", max_elements=CLIP_MIN_ELEMENTS - 1, specifics=(ClampBackward1,),
    addresses=lambda: openmp_kernels.loop_addresses({np.dtype(np.float32): "clamp_float32"}))


@method()
def clamp_min(input, min, *, out=None):
    """Clamps all elements in ``input`` to be at least ``min``."""
    _check_input(input, "clamp_min")
    return _clamp(input, min, None, out, ClampMinBackward0, ClampMinBackward1)


@method()
def clamp_max(input, max, *, out=None):
    """Clamps all elements in ``input`` to be at most ``max``."""
    _check_input(input, "clamp_max")
    return _clamp(input, None, max, out, ClampMaxBackward0, ClampMaxBackward1)


clip = clamp


def _is_float_data(t):
    return t._data.dtype.kind == "f" or t._data.dtype == _dtype.bfloat16.np


def _clamp_numbers_(self, min, max):
    """The optimizer's case: a float tensor clamped to number bounds, straight in its memory."""
    check_inplace(self)
    sd = self._data
    xp = namespace_of(sd)
    if min is not None:
        xp.maximum(sd, min, out=sd)
    if max is not None:
        xp.minimum(sd, max, out=sd)
    bump_version(self)
    return self


def _clamp_inplace(self, min, max, op, *args):
    _check_not_complex(self, min, max)
    if _number_bounds(min, max) and _is_float_data(self) and not (self._requires_grad
                                                                   and grad_state.grad_enabled):
        return _clamp_numbers_(self, min, max)
    min, max = _numbers_or_tensors(min, max)
    bounds = [b for b in (min, max) if b is not None]
    if not _inplace_fast(self, bounds):
        return apply_inplace(self, op, *args)
    common = result_type_of(self, *bounds).np
    _check_not_bool(common, min, max)
    _check_integer_bounds(common, bounds)
    _check_castable(common, self)
    _check_inplace_shape(self, *bounds)
    sd = self._data
    xp = namespace_of(sd)
    _, lo, hi = _arrays_as(common, None, min, max)
    if lo is not None:
        xp.maximum(sd, lo, out=sd, casting="unsafe")
    if hi is not None:
        xp.minimum(sd, hi, out=sd, casting="unsafe")
    bump_version(self)
    return self


@method("clamp_", "clip_")
def clamp_(self, min=None, max=None):
    _check_bounds(min, max)
    return _clamp_inplace(self, min, max, clamp, min, max)


@method()
def clamp_min_(self, min):
    return _clamp_inplace(self, min, None, clamp_min, min)


@method()
def clamp_max_(self, max):
    return _clamp_inplace(self, None, max, clamp_max, max)


# -- lerp ------------------------------------------------------------------------------------

_CPP_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
              "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int", "int16": "short int",
              "int8": "signed char", "uint8": "unsigned char", "bool": "bool"}


def _cpp_name(np_dtype):
    return _CPP_NAMES.get(_BY_NP[np_dtype].name, _BY_NP[np_dtype].name)


def _check_lerp(input, end, weight):
    if not isinstance(end, Tensor):
        raise TypeError(f"lerp(): argument 'end' (position 2) must be Tensor, not {type(end).__name__}")
    dt = input._data.dtype
    if end._data.dtype != dt:
        raise RuntimeError(f"expected dtype {_cpp_name(dt)} for `end` but got dtype "
                           f"{_cpp_name(end._data.dtype)}")
    weight_tensor = isinstance(weight, Tensor)
    if weight_tensor and weight._data.ndim and weight._data.dtype != dt:
        raise RuntimeError(f"expected dtype {_cpp_name(dt)} for `weight` but got dtype "
                           f"{_cpp_name(weight._data.dtype)}")
    if dt.kind in "biu":
        kernel = "lerp_kernel_tensor" if weight_tensor else "lerp_kernel_scalar"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_type_word(dt)}'")


def _lerp_forward(a, b, w):
    """torch's formula: exact at both ends (weight 0 gives a, weight 1 gives b)."""
    if hasattr(w, "shape"):
        return _lerp_by_weights(a, b, w)
    return _lerp_by_number(a, b, w)


def _lerp_in_passes(a, b, w):
    xp = namespace_of(a)
    diff = b - a
    if abs(w) < 0.5:   # (in place in the fresh difference: the same operations)
        diff *= w
        diff += a
        return diff
    diff *= 1 - w
    return xp.subtract(b, diff, out=diff) if hasattr(diff, "shape") and diff.shape else b - diff


def _lerp_where(a, b, w):
    xp = namespace_of(a)
    diff = b - a
    return xp.where(xp.abs(w) < 0.5, a + w * diff, b - diff * (1 - w))


def _lerp_number_on_loop(a, b, w):
    if type(w) is not float and type(w) is not int:
        return None
    return vector_math.binary_with_parameters("lerp_scalar", a, b, (w, 1 - w, 1.0 if abs(w) < 0.5 else 0.0))


# lerp with a number weight: one vector-math loop over float32 arrays of one layout (the same
# operations), else NumPy's passes
_lerp_by_number = vector_math.when_large("lerp_scalar", _lerp_number_on_loop, _lerp_in_passes)


# lerp with an array of weights: one vector-math loop over float32 arrays of one layout (the
# same operations, each branch's for its elements), else NumPy's passes
_lerp_by_weights = vector_math.when_large("lerp", lambda a, b, w: vector_math.ternary("lerp", a, b, w),
                                          _lerp_where)


class LerpBackward0(Node):
    """lerp with a number weight."""
    __slots__ = ()
    jvp = jvp_by_transposition

    def backward(self, grad):
        w = self.weight
        ga = _reduce(grad * (1 - w), *self.metas[0]) if self.next_functions[0][0] is not None else None
        gb = _reduce(grad * w, *self.metas[1]) if self.next_functions[1][0] is not None else None
        return ga, gb


class LerpBackward1(Node):
    """lerp with a tensor weight."""
    __slots__ = ()
    jvp = jvp_by_transposition

    def backward(self, grad):
        a, b, w = self.saved_tensors
        need = [fn is not None for fn, _ in self.next_functions]
        ga = _reduce(grad * (1 - w), *self.metas[0]) if need[0] else None
        gb = _reduce(grad * w, *self.metas[1]) if need[1] else None
        gw = _reduce(grad * (b - a), *self.metas[2]) if need[2] else None
        return ga, gb, gw


def _metas(*tensors):
    return tuple((t._data.shape, t._data.dtype) for t in tensors)


@method()
def lerp(input, end, weight, *, out=None):
    """Linear interpolation of ``input`` towards ``end`` by ``weight`` (a number or a tensor):
    ``input + weight * (end - input)``."""
    if out is None:
        return _lerp_entry[0](input, end, weight)
    return _python_lerp(input, end, weight, out=out)


def _python_lerp(input, end, weight, *, out=None):
    """``lerp`` in every case its compiled function (``_compiled_functions``) leaves to Python."""
    _check_input(input, "lerp")
    _check_lerp(input, end, weight)
    dt = input._data.dtype
    if isinstance(weight, Tensor) and weight._data.dtype.kind == "c" and dt.kind != "c":
        dt = result_type_of(input, weight).np   # a complex 0-d weight makes the result complex
    (a, e, w) = _arrays_as(dt, input, end, weight)
    res = make(_compute(lambda: _lerp_forward(a, e, w), input, end, weight))
    if isinstance(weight, Tensor):
        node = record(LerpBackward1, (input, end, weight), res)
        if node is not None:
            node.metas = _metas(input, end, weight)
            node.save(input, end, weight)
    else:
        node = record(LerpBackward0, (input, end), res)
        if node is not None:
            node.weight = weight
            node.metas = _metas(input, end)
    return _finish(res, out)


# The compiled functions of addcmul, addcdiv and lerp (a number weight) take float tensors of up to this many
# elements in their C loop (one thread); the Python ops run larger ones on vector_math's loops (the threads)
COMPILED_TERNARY_MAX_ELEMENTS = 1 << 18

_lerp_entry = _compiled_functions.register(_python_lerp, LerpBackward0, kind="lerp",
                                           max_elements=COMPILED_TERNARY_MAX_ELEMENTS)


@method()
def lerp_(self, end, weight):
    if not _inplace_fast(self, (end, weight)):
        return apply_inplace(self, lerp, end, weight)
    _check_lerp(self, end, weight)
    sd = self._data
    if isinstance(weight, Tensor):
        _check_inplace_shape(self, end, weight)
        namespace_of(sd).copyto(sd, _lerp_forward(sd, end._data, weight._data))
    else:
        diff = _compute(lambda: end._data - sd, self, end)
        if diff.shape != sd.shape:
            raise RuntimeError(f"output with shape {list(sd.shape)} doesn't match the broadcast "
                               f"shape {list(diff.shape)}")
        if abs(weight) < 0.5:
            diff *= weight
            sd += diff
        else:
            diff *= 1 - weight
            namespace_of(sd).subtract(end._data, diff, out=sd)
    bump_version(self)
    return self


# -- addcmul / addcdiv -----------------------------------------------------------------------

class AddcmulBackward0(Node):
    __slots__ = ()
    saved_fields = {"tensor1": operand_for(0, 2), "tensor2": operand_for(1, 1), "value": "value"}
    jvp = jvp_by_transposition

    def backward(self, grad):
        t1, t2 = self.saved_tensors
        v = self.value
        need = [fn is not None for fn, _ in self.next_functions]
        g0 = _reduce(grad, *self.metas[0]) if need[0] else None
        g1 = _reduce(grad * t2 * v, *self.metas[1]) if need[1] else None
        g2 = _reduce(grad * t1 * v, *self.metas[2]) if need[2] else None
        return g0, g1, g2


class AddcdivBackward0(Node):
    __slots__ = ()
    saved_fields = {"tensor1": operand_for(0, 2), "tensor2": operand_for(1, (1, 2)),
                    "value": "value"}
    jvp = jvp_by_transposition

    def backward(self, grad):
        t1, t2 = self.saved_tensors
        v = self.value
        need = [fn is not None for fn, _ in self.next_functions]
        g0 = _reduce(grad, *self.metas[0]) if need[0] else None
        g1 = _reduce(grad * v / t2, *self.metas[1]) if need[1] else None
        g2 = _reduce(-grad * v * t1 / (t2 * t2), *self.metas[2]) if need[2] else None
        return g0, g1, g2


_INT_ADDCDIV = ("Integer division with addcdiv is no longer supported, and in a future  release "
                "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
                "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2))."
                "to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for "
                "float inputs. The future addcdiv behavior is just the latter implementation: "
                "(input + value * tensor1 / tensor2), for all dtypes.")


def _addc_arrays(name, input, tensor1, tensor2, value):
    for pos, (arg, t) in enumerate((("tensor1", tensor1), ("tensor2", tensor2)), 2):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not "
                            f"{type(t).__name__}")
    if name == "addcdiv" and tensor1._data.dtype.kind in "biu" and tensor2._data.dtype.kind in "biu":
        raise RuntimeError(_INT_ADDCDIV)
    common = result_type_of(input, tensor1, tensor2).np
    if common.kind == "b":
        raise NotImplementedError(f"\"{name}_cpu_out\" not implemented for 'Bool'")
    if common.kind in "iu":   # (torch's error for a value the integers do not hold, where it wrapped)
        check_value_fits(value, common)
    return _arrays_as(common, input, tensor1, tensor2, value)


def _addc_composite(ufunc_name):
    def forward(s, t1, t2, v):
        """``s + v * t1 (op) t2``, evaluated as torch does: ``(v * t1) op t2``."""
        scaled = t1 * v if v != 1 else t1
        return s + getattr(namespace_of(s), ufunc_name)(scaled, t2)
    return forward


def _addc_loop(name):
    def forward(s, t1, t2, v):
        if type(v) is not int and type(v) is not float:
            return None
        return vector_math.ternary(name, s, t1, t2, (v,))
    return forward


# addcmul's and addcdiv's forward: float32 arrays of one layout in one vector-math loop (the
# composite's operations), else NumPy's passes
_ADDC_FORWARD = {name: vector_math.when_large(name, _addc_loop(name), _addc_composite(op))
                 for name, op in (("addcmul", "multiply"), ("addcdiv", "true_divide"))}


def _addc(name, node_cls, input, tensor1, tensor2, value, out):
    _check_input(input, name)
    if name == "addcmul" and tensor1.__class__ is Tensor and tensor2.__class__ is Tensor:
        s, t1, t2 = input._data, tensor1._data, tensor2._data
        if (s.__class__ is ndarray and t1.__class__ is ndarray and t2.__class__ is ndarray
                and s.dtype.kind in "iu" and s.dtype == t1.dtype == t2.dtype and value.__class__ is int
                and _wrap_int(value, s.dtype) == value):
            # integer tensors of one dtype and an int the dtype holds (nothing records integers): the steps
            # below on the arrays, wrapping as they do
            return _finish(make(_compute(lambda: _ADDC_FORWARD[name](s, t1, t2, value), input, tensor1, tensor2)),
                           out)
    s, t1, t2, v = _addc_arrays(name, input, tensor1, tensor2, value)
    res = make(_compute(lambda: _ADDC_FORWARD[name](s, t1, t2, v), input, tensor1, tensor2))
    node = record(node_cls, (input, tensor1, tensor2), res)
    if node is not None:
        node.value = value
        node.metas = _metas(input, tensor1, tensor2)
        node.save(tensor1, tensor2)
    return _finish(res, out)


def _python_addcmul(input, tensor1, tensor2, value):
    return _addc("addcmul", AddcmulBackward0, input, tensor1, tensor2, value, None)


def _python_addcdiv(input, tensor1, tensor2, value):
    return _addc("addcdiv", AddcdivBackward0, input, tensor1, tensor2, value, None)


_addcmul_entry, _addcdiv_entry = (
    _compiled_functions.register(python_op, node_cls, kind="addc", max_elements=COMPILED_TERNARY_MAX_ELEMENTS,
                                 specifics=divides)
    for python_op, node_cls, divides in ((_python_addcmul, AddcmulBackward0, False),
                                         (_python_addcdiv, AddcdivBackward0, True)))


@method()
def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    """``input + value * tensor1 * tensor2``, element-wise with broadcasting."""
    if out is None:
        return _addcmul_entry[0](input, tensor1, tensor2, value)
    return _addc("addcmul", AddcmulBackward0, input, tensor1, tensor2, value, out)


@method()
def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    """``input + value * tensor1 / tensor2``, element-wise with broadcasting."""
    if out is None:
        return _addcdiv_entry[0](input, tensor1, tensor2, value)
    return _addc("addcdiv", AddcdivBackward0, input, tensor1, tensor2, value, out)


def _addc_inplace(name, op, self, tensor1, tensor2, value):
    if not _inplace_fast(self, (tensor1, tensor2)):
        return apply_inplace(self, op, tensor1, tensor2, value=value)
    sd = self._data
    if (isinstance(tensor1, Tensor) and isinstance(tensor2, Tensor) and sd.dtype.kind == "f"
            and tensor1._data.dtype == sd.dtype and tensor2._data.dtype == sd.dtype):
        t1, t2, v = tensor1._data, tensor2._data, value  # the optimizer's case: one float dtype
    else:
        s, t1, t2, v = _addc_arrays(name, self, tensor1, tensor2, value)
        _check_castable(s.dtype, self)
    xp = namespace_of(sd)
    xp_op = xp.multiply if name == "addcmul" else xp.true_divide
    term = _compute(lambda: xp_op(t1 * v if v != 1 else t1, t2), self, tensor1, tensor2)
    if term.shape != sd.shape:
        _check_inplace_shape(self, tensor1, tensor2)
    xp.add(sd, term, out=sd, casting="unsafe")
    bump_version(self)
    return self


@method()
def addcmul_(self, tensor1, tensor2, *, value=1):
    return _addc_inplace("addcmul", addcmul, self, tensor1, tensor2, value)


@method()
def addcdiv_(self, tensor1, tensor2, *, value=1):
    return _addc_inplace("addcdiv", addcdiv, self, tensor1, tensor2, value)


