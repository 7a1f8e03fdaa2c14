"""Comparisons, logical and bitwise ops, with their operators (``== < & << ~`` ...).

None of these is differentiable: results are bool (comparisons, logical ops) or integer
(bitwise ops). Operands are promoted to torch's common dtype before comparing, so an integer
tensor compared with ``2.5`` compares as floats, as torch does.
"""
import numpy as np

from .. import _dtype
from .._backend import openmp_kernels
from . import _compiled_functions
from ._common import (
    arrays_for, bump_version, check_inplace, finish_inplace, grad_state, is_scalar, is_writeable,
    make, method, namespace_of, record_zero_gradient, Tensor, _type_word, zero_gradient_node,
)
from .._dtype import result_type_of
from .pointwise import _broadcast_check, _maybe_out, _tensor_arg, compiled_binary

__all__ = [
    "eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal",
    "not_equal", "equal", "isclose", "allclose",
    "logical_and", "logical_or", "logical_xor", "logical_not",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift",
    "bitwise_right_shift",
]


def _other_tensor(other, op, pos=2):
    if not isinstance(other, Tensor):
        raise TypeError(f"{op}(): argument 'other' (position {pos}) must be Tensor, not "
                        f"{type(other).__name__}")


def _apply(op, kernel, input, other):
    """``kernel(a, b)`` on the two operands promoted to their common dtype, as a tensor."""
    try:
        ad, bd = arrays_for(input, other)
        return make(kernel(ad, bd))
    except ValueError:
        _broadcast_check(op, input, other)
        raise


def _write_inplace(self, other, op, kernel):
    """``self = kernel(self, other)`` into self's memory, cast to self's dtype (no history)."""
    sd = self._data
    xp = namespace_of(sd)
    ad, bd = arrays_for(self, other)
    try:
        result = kernel(ad, bd)
    except ValueError:
        _broadcast_check(op, self, other)
        raise
    if result.shape != sd.shape:
        raise RuntimeError(f"output with shape {list(sd.shape)} doesn't match the broadcast shape "
                           f"{list(result.shape)}")
    if result.dtype != sd.dtype and not _dtype.can_cast(_dtype.from_numpy_dtype(result.dtype),
                                                        _dtype.from_numpy_dtype(sd.dtype)):
        raise RuntimeError(f"result type {_type_word(result.dtype)} can't be cast to the desired output "
                           f"type {_type_word(sd.dtype)}")
    xp.copyto(sd, result, casting="unsafe")
    bump_version(self)
    return self


def _check_writable(self):
    """The memory check of an in-place op that autograd does not follow (torch's logical ops
    have no derivative, so it lets them write into a leaf that requires grad)."""
    if not is_writeable(self._data):
        check_inplace(self)


def _inplace(self, other, op, kernel, node_cls):
    check_inplace(self)
    if self._requires_grad and grad_state.grad_enabled:
        res = _apply(op, kernel, self, other)
        res = make(res._data.astype(self._data.dtype, copy=False))
        record_zero_gradient(node_cls, (self,), res)
        return finish_inplace(self, res)
    return _write_inplace(self, other, op, kernel)


# -- comparisons ----------------------------------------------------------------------------

def _comparison(name, ufunc_name, symbol, aliases=(), ordering=True):
    node_cls = zero_gradient_node(f"{name.capitalize()}Backward0")

    def kernel(a, b):
        if ordering and a.dtype.kind == "c":   # complex numbers have no order
            raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{_type_word(a.dtype)}'")
        return getattr(namespace_of(a), ufunc_name)(a, b)

    def python_op(input, other, *, out=None):
        _tensor_arg(input, name)
        res = _apply(name, kernel, input, other)
        return res if out is None else _maybe_out(res, out)
    python_op.__name__ = python_op.__qualname__ = f"_python_{name}"
    python_op.__code__ = python_op.__code__.replace(co_name=name)   # (tracebacks name the op)
    # the compiled operator's common case (its ``Tensor`` method's C code), else the Python op
    entry = _compiled_functions.register(python_op, None, kind="operator", specifics=f"__{name}__")

    def op(input, other, *, out=None):
        return entry[0](input, other) if out is None else python_op(input, other, out=out)

    def op_(self, other):
        return _inplace(self, other, name + "_", kernel, node_cls)

    def operator(self, other):
        if not (isinstance(other, Tensor) or is_scalar(other)):
            return NotImplemented
        return _apply(name, kernel, self, other)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Computes ``input {symbol} other`` element-wise, as a bool tensor."
    op_.__name__ = name + "_"
    for n in (name,) + aliases:
        method(n)(op)
        method(n + "_")(op_)
    return op, operator


eq, _eq_op = _comparison("eq", "equal", "==", ordering=False)
ne, _ne_op = _comparison("ne", "not_equal", "!=", ("not_equal",), ordering=False)
lt, _lt_op = _comparison("lt", "less", "<", ("less",))
le, _le_op = _comparison("le", "less_equal", "<=", ("less_equal",))
gt, _gt_op = _comparison("gt", "greater", ">", ("greater",))
ge, _ge_op = _comparison("ge", "greater_equal", ">=", ("greater_equal",))
not_equal, less, less_equal, greater, greater_equal = ne, lt, le, gt, ge

# Assigning __eq__ after the class body keeps Tensor.__hash__ (identity), as torch does.
method("__eq__")(_eq_op)
method("__ne__")(_ne_op)
method("__lt__")(_lt_op)
method("__le__")(_le_op)
method("__gt__")(_gt_op)
method("__ge__")(_ge_op)


@method()
def equal(input, other):
    """``True`` if two tensors have the same size and elements, ``False`` otherwise."""
    _tensor_arg(input, "equal")
    _other_tensor(other, "equal")
    if input._data.shape != other._data.shape:
        return False
    ad, bd = arrays_for(input, other)
    return bool(namespace_of(ad).array_equal(ad, bd))


def _check_same_dtype(input, other):
    if input._data.dtype != other._data.dtype:
        raise RuntimeError(f"{_type_word(input._data.dtype)} did not match "
                           f"{_type_word(other._data.dtype)}")


@method()
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether each element of ``input`` is close to the matching element of ``other``:
    ``|input - other| <= atol + rtol * |other|`` (infinities must match exactly)."""
    _tensor_arg(input, "isclose")
    _other_tensor(other, "isclose")
    _check_same_dtype(input, other)
    if not rtol >= 0:   # NaN too
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if not atol >= 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    ad, bd = input._data, other._data
    xp = namespace_of(ad)
    try:
        exact = ad == bd
    except ValueError:
        _broadcast_check("isclose", input, other)
        raise
    if equal_nan:
        exact = exact | (xp.isnan(ad) & xp.isnan(bd))
    if ad.dtype.kind in "biu":
        ad = ad.astype(_dtype.get_default_dtype().np)
        bd = bd.astype(ad.dtype)
    diff = xp.abs(ad - bd)
    close = xp.isfinite(diff) & (diff <= atol + rtol * xp.abs(bd))
    return make(exact | close)


@method()
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether all elements of ``input`` and ``other`` are close (see ``isclose``)."""
    return bool(isclose(input, other, rtol, atol, equal_nan)._data.all())


# -- logical ops -----------------------------------------------------------------------------

def _truth(a):
    """Where ``a`` is nonzero (NaN is): NumPy's logical ufuncs on numbers take a slow loop, its
    comparison a vectorized one."""
    return a if a.dtype == np.bool_ else a != 0


def _logical(name, ufunc_name):
    def kernel(a, b):
        return getattr(namespace_of(a), ufunc_name)(_truth(a), _truth(b))

    def op(input, other, *, out=None):
        _tensor_arg(input, "logical_" + name)
        _other_tensor(other, "logical_" + name)
        try:
            res = make(kernel(input._data, other._data))
        except ValueError:
            _broadcast_check("logical_" + name, input, other)
            raise
        return res if out is None else _maybe_out(res, out)

    def op_(self, other):
        _other_tensor(other, f"logical_{name}_", 1)
        _check_writable(self)
        return _write_inplace(self, other, f"logical_{name}_", kernel)

    op.__name__ = op.__qualname__ = "logical_" + name
    op.__doc__ = f"Computes the element-wise logical {name.upper()} of the given input tensors."
    # (two small float tensors of one dtype: NumPy's logical ufunc from C, the same truth values; on larger ones
    # the kernel's truth values first cost less than NumPy's logical ufunc on floats)
    op = compiled_binary(None, (), ufunc=getattr(np, ufunc_name),
                         max_elements=openmp_kernels.ELEMENTWISE_MIN_ELEMENTS - 1)(op)
    method("logical_" + name)(op)
    method(f"logical_{name}_")(op_)
    return op


logical_and = _logical("and", "logical_and")
logical_or = _logical("or", "logical_or")
logical_xor = _logical("xor", "logical_xor")


@method()
def logical_not(input, *, out=None):
    """Computes the element-wise logical NOT of the given input tensor."""
    _tensor_arg(input, "logical_not")
    data = input._data
    res = make(namespace_of(data).logical_not(data) if data.dtype == np.bool_ else data == 0)
    return res if out is None else _maybe_out(res, out)


@method()
def logical_not_(self):
    _check_writable(self)
    sd = self._data
    namespace_of(sd).logical_not(sd, out=sd, casting="unsafe")
    bump_version(self)
    return self


# -- bitwise ops -----------------------------------------------------------------------------

def _check_integral(kernel_name, dtype_np):
    if dtype_np.kind not in "biu":
        raise NotImplementedError(f'"{kernel_name}_cpu" not implemented for '
                                  f"'{_type_word(dtype_np)}'")


def _lshift(a, s):
    return _shift_zero_fill(namespace_of(a).left_shift, a, s, a.dtype.itemsize * 8)


def _shift_zero_fill(shift, a, s, bits):
    """``shift(a, s)``, giving 0 for shifts of a negative amount or past the width."""
    xp = namespace_of(a)
    if not hasattr(s, "shape") or s.ndim == 0:
        if 0 <= s < bits:
            return shift(a, s)
        return xp.zeros(a.shape, a.dtype)
    if xp is np:   # (NumPy's shifts give 0 there themselves)
        return shift(a, s)
    bad = (s < 0) | (s >= bits)
    return xp.where(bad, 0, shift(a, xp.where(bad, 0, s))).astype(a.dtype, copy=False)


def _rshift(a, s):
    """Shifts of a negative amount or past the width fill with the sign bit, as torch does."""
    xp = namespace_of(a)
    bits = a.dtype.itemsize * 8
    if a.dtype.kind == "u":
        return _shift_zero_fill(xp.right_shift, a, s, bits)
    if not hasattr(s, "shape") or s.ndim == 0:
        return xp.right_shift(a, s if 0 <= s < bits else bits - 1)
    if xp is np:   # (NumPy's shifts fill with the sign bit there themselves)
        return xp.right_shift(a, s)
    bad = (s < 0) | (s >= bits)
    return xp.right_shift(a, xp.where(bad, bits - 1, s)).astype(a.dtype, copy=False)


def _bitwise_kernel(ufunc_name):
    def kernel(a, b):
        return getattr(namespace_of(a), ufunc_name)(a, b)
    return kernel


def _bitwise(name, kernel_name, kernel, bool_ok=True, ufunc=None, commutes=True):
    """The op ``name`` (its function, operator, reflected operator and in-place form) of ``kernel``; with
    NumPy's ``ufunc`` (the kernel's own answers), the function and the operators on two tensors or a tensor
    and an int take its compiled function (``compiled_binary``: two small integer tensors of one dtype, or
    bool ones where the op takes bools, or an integer tensor and an int in its range); ``commutes``: the
    reflected operator of an int takes it too."""
    node_cls = zero_gradient_node(f"{''.join(w.capitalize() for w in name.split('_'))}Backward0")

    def checked(a, b):
        if not bool_ok and a.dtype.kind == "b":
            raise NotImplementedError(f'"{kernel_name}_cpu" not implemented for \'Bool\'')
        _check_integral(kernel_name, a.dtype)
        out = kernel(a, b)
        return out if out.dtype == a.dtype else out.astype(a.dtype)

    def op(input, other, *, out=None):
        if is_scalar(input):
            _tensor_arg(other, name, 2, "other")
            if out is not None:   # torch's (Number self, Tensor other) overload has no out=
                raise TypeError(f"{name}() received an invalid combination of arguments - got "
                                f"({type(input).__name__}, Tensor, out=Tensor)")
            common = result_type_of(other, input).np
            input = make(namespace_of(other._data).asarray(input).astype(common))
        else:
            _tensor_arg(input, name)
        res = _apply(name, checked, input, other)
        return res if out is None else _maybe_out(res, out)

    op.__name__ = op.__qualname__ = name
    if ufunc is not None:
        op = compiled_binary(None, (), ufunc=ufunc, integers="any" if bool_ok else "integers", int_numbers=True)(op)

    def op_(self, other):
        return _inplace(self, other, name + "_", checked, node_cls)

    def operator(self, other):
        if (other.__class__ is Tensor or other.__class__ is int) and ufunc is not None:
            return op(self, other)
        if not (isinstance(other, Tensor) or is_scalar(other)):
            return NotImplemented
        return _apply(name, checked, self, other)

    def reflected(self, other):
        if not is_scalar(other):
            return NotImplemented
        if other.__class__ is int and ufunc is not None and commutes:
            return op(self, other)
        return op(other, self)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Computes the {name.replace('_', ' ')} of ``input`` and ``other`` (integer or bool)."
    method(name)(op)
    method(name + "_")(op_)
    return op, operator, reflected, op_


bitwise_and, _and_op, _rand_op, _iand_op = _bitwise("bitwise_and", "bitwise_and",
                                                    _bitwise_kernel("bitwise_and"), ufunc=np.bitwise_and)
bitwise_or, _or_op, _ror_op, _ior_op = _bitwise("bitwise_or", "bitwise_or",
                                                _bitwise_kernel("bitwise_or"), ufunc=np.bitwise_or)
bitwise_xor, _xor_op, _rxor_op, _ixor_op = _bitwise("bitwise_xor", "bitwise_xor",
                                                    _bitwise_kernel("bitwise_xor"), ufunc=np.bitwise_xor)
# (NumPy's shifts give torch's answers for amounts that are negative or past the width: 0, or the sign bit)
bitwise_left_shift, _lshift_op, _rlshift_op, _ilshift_op = _bitwise(
    "bitwise_left_shift", "lshift", _lshift, bool_ok=False, ufunc=np.left_shift, commutes=False)
bitwise_right_shift, _rshift_op, _rrshift_op, _irshift_op = _bitwise(
    "bitwise_right_shift", "rshift", _rshift, bool_ok=False, ufunc=np.right_shift, commutes=False)

method("__and__")(_and_op)
method("__rand__")(_rand_op)
method("__iand__")(_iand_op)
method("__or__")(_or_op)
method("__ror__")(_ror_op)
method("__ior__")(_ior_op)
method("__xor__")(_xor_op)
method("__rxor__")(_rxor_op)
method("__ixor__")(_ixor_op)
method("__lshift__")(_lshift_op)
method("__rlshift__")(_rlshift_op)
method("__ilshift__")(_ilshift_op)
method("__rshift__")(_rshift_op)
method("__rrshift__")(_rrshift_op)
method("__irshift__")(_irshift_op)


def _invert(data):
    _check_integral("bitwise_not", data.dtype)
    return namespace_of(data).invert(data)


@method()
def bitwise_not(input, *, out=None):
    """Computes the bitwise NOT of ``input`` (logical NOT for bool tensors)."""
    _tensor_arg(input, "bitwise_not")
    res = make(_invert(input._data))
    return res if out is None else _maybe_out(res, out, exact=True)


@method()
def bitwise_not_(self):
    check_inplace(self)
    sd = self._data
    _check_integral("bitwise_not", sd.dtype)
    namespace_of(sd).invert(sd, out=sd)
    bump_version(self)
    return self


@method("__invert__")
def _invert_op(self):
    if self._data.dtype.kind not in "biu":
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return make(namespace_of(self._data).invert(self._data))


