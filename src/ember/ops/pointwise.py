"""Pointwise ops: arithmetic with broadcasting, unary math, comparisons, logical and bitwise ops.

Each op's forward (on backend arrays) and backward (in ember ops, so higher-order gradients
work) sit together. Unary math ops are declared in one table line each with ``_unary``.
"""
import functools
import math

import numpy as np

from .._torch_function import dispatch_or_raise
from .. import _dtype, return_types
from .._backend import check_same_device, openmp_kernels, vector_math
from .._backend.openmp_kernels import BINARY_MIN_BYTES as _BINARY_MIN_BYTES, ROWS_MIN_BYTES as _ROWS_MIN_BYTES
from .._backend.choice import KernelChoice
from .._blocked_tensor import BlockedTensor, blocked_or_data, elementwise_operands, wrap_like
from . import _compiled_functions, _float_division, unary
from ..autograd._dual import jvp_by_backward, jvp_by_operand_backward
from ._common import (
    apply_inplace, arrays_for, bump_version, _BY_NP, check_inplace, complex_autograd,
    conj_if_complex, forward_mode, grad_state, is_scalar, make, real_part_for, _RAW_DTYPES,
    method, namespace_of, Node, NotImplementedBackward, raw_arrays, record, sum_to, Tensor,
    _type_word, write_out, zeros_like_gradient,
)
from ..autograd._dual import jvp_by_transposition
from .._torch_function import override_or_raise

__all__ = [
    "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "neg",
    "negative", "pow", "rsub", "square",
]


def _tensor_arg(x, op, pos=1, name="input"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument '{name}' (position {pos}) must be Tensor, not {type(x).__name__}")


def _broadcast_check(op, a, b):
    """torch's message for shapes that do not broadcast."""
    sa = a._data.shape
    sb = b._data.shape if isinstance(b, Tensor) else ()
    n = max(len(sa), len(sb))
    pa, pb = (1,) * (n - len(sa)) + sa, (1,) * (n - len(sb)) + sb
    for i, (x, y) in enumerate(zip(pa, pb)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) "
                               f"at non-singleton dimension {i}")


# Large float32 additions, subtractions and products run as one OpenMP loop where
# oneDNN's threads run; elsewhere NumPy's ufunc.
_large_binary_kernel = KernelChoice("binary", onednn=openmp_kernels.binary,
                                    numpy=lambda ufunc, a, b: ufunc(a, b))
_square = vector_math.when_large("square", lambda x: vector_math.unary("square", x),
                                 lambda x: namespace_of(x).square(x))

# (called with the loop's case, which ``large_binary`` asked for: ``openmp_kernels.rows_case``)
_rows_binary_kernel = KernelChoice("binary rows", onednn=openmp_kernels.binary_rows,
                                   numpy=lambda ufunc, a, b, case: ufunc(a, b))
_row_slices_binary_kernel = KernelChoice("binary row slices", onednn=openmp_kernels.binary_row_slices,
                                         numpy=lambda ufunc, a, b, case: ufunc(a, b))


def _same_layout_binary(ufunc, a, b):
    if a.nbytes >= _BINARY_MIN_BYTES:
        return _large_binary_kernel(ufunc, a, b)
    return ufunc(a, b)


def large_binary(ufunc, a, b):
    """``ufunc(a, b)`` for an ``a`` of ``openmp_kernels.ROWS_MIN_BYTES`` or more, in one loop
    over rows (add, subtract, multiply, divide of float32) where NumPy calls its inner loop row
    by row: a ``b`` of ``a``'s trailing shape repeated over its rows, and operands whose rows
    lie apart (slices along the last dimension); from ``openmp_kernels.BINARY_MIN_BYTES`` one
    OpenMP loop on oneDNN's threads (add, subtract, multiply of float32); else NumPy's ufunc."""
    if b.__class__ is np.ndarray and b.shape != a.shape:
        if (case := openmp_kernels.rows_case(ufunc, a, b)) is not None:
            return _rows_binary_kernel(ufunc, a, b, case)
    elif not (a.flags.c_contiguous and (b.__class__ is not np.ndarray or b.flags.c_contiguous)):
        if (case := openmp_kernels.row_slices_case(ufunc, a, b)) is not None:
            return _row_slices_binary_kernel(ufunc, a, b, case)
    return _same_layout_binary(ufunc, a, b)


def _binary(op_name, ufunc, node_cls, a, b, save=(), operands=arrays_for, alpha=None):
    """Run ``ufunc`` on two operands (a a Tensor, b a Tensor or number) with torch's promotion
    and broadcasting; record ``node_cls`` (a ``_BinaryNode``) and save the tensors named in
    ``save`` ("self", "other", "result"; a number saves as None); ``alpha`` is add's and sub's.
    ``operands(a, b)`` gives the arrays to compute on (``float_arrays`` for float ops)."""
    try:
        bcls = b.__class__
        if operands is not arrays_for:
            ad, bd = operands(a, b)
        elif bcls is Tensor and (bd := b._data).dtype == (ad := a._data).dtype:
            pass   # arrays_for's common cases without the call: two tensors of one dtype,
        elif bcls is float and (ad := a._data).dtype.kind in "fc":
            bd = b   # a float tensor and a Python float
        else:
            ad, bd = operands(a, b)
        if ad.nbytes >= _ROWS_MIN_BYTES and type(ufunc) is np.ufunc:
            data = large_binary(ufunc, ad, bd)
        else:
            data = ufunc(ad, bd)
    except ValueError:
        _broadcast_check(op_name, a, b)
        raise
    except TypeError:  # CuPy refuses NumPy operands: name the devices, as torch does
        check_same_device(a, b)
        raise
    out = make(data)
    if bcls is Tensor or (bcls is not float and bcls is not int and isinstance(b, Tensor)):
        if not (a._requires_grad or b._requires_grad or forward_mode.active):   # (no call to record: the common case)
            return out
        node = record(node_cls, (a, b), out)
        if node is None:
            return out
        node.other_shape, node.other_dtype = b._data.shape, b._data.dtype
    else:
        node = record(node_cls, (a, None), out) if a._requires_grad or forward_mode.active else None
        if node is None:
            return out
        node.other_shape = node.other_dtype = None
        node.other_scalar = b
        b = None
    node.self_shape, node.self_dtype = a._data.shape, a._data.dtype
    if alpha is not None:
        node.alpha = alpha
    if save:
        node.save(*[a if name == "self" else b if name == "other" else out for name in save])
    return out


def _number_or(index):
    """A binary node's saved field for ``other``: the saved tensor ``index``, or the number
    operand as a 0-d tensor (torch keeps it as a wrapped number)."""
    def field(node):
        if node.other_shape is None:
            return make(np.asarray(node.other_scalar))
        return node.saved_tensors[index]
    return field


class _BinaryNode(Node):
    """Binary op node: the shape and dtype of each operand (``self_shape``, ``self_dtype``,
    ``other_shape``, ``other_dtype``; the last two None when ``other`` is a number, kept as
    ``other_scalar``), to reduce each gradient to its operand."""
    __slots__ = ("self_shape", "self_dtype", "other_shape", "other_dtype")
    other_scalar = None

    def jvp(self, tangent_self, tangent_other):
        """Each operand's gradient formula applied to its tangent, summed, unreduced."""
        return jvp_by_operand_backward(self, tangent_self, tangent_other)

    def matches(self, data):
        """Whether an array (a gradient's) has the shape and dtype of each operand (``self``
        alone when ``other`` is a number): each operand's gradient then needs no reduction."""
        other_shape = self.other_shape
        if other_shape is None:
            return data.shape == self.self_shape and data.dtype == self.self_dtype
        return data.shape == self.self_shape == other_shape and data.dtype == self.self_dtype == self.other_dtype

    def reduce(self, grad, which):
        """Reduce ``grad`` to input ``which``'s shape and dtype."""
        if which == 0:
            shape, dtype = self.self_shape, self.self_dtype
        else:
            shape, dtype = self.other_shape, self.other_dtype
        data = grad._data
        if data.shape == shape and data.dtype == dtype:
            return grad
        if data.shape != shape:
            grad = sum_to(grad, shape)
        if grad._data.dtype != dtype:
            grad = real_part_for(grad, dtype).to(_dtype.from_numpy_dtype(dtype))
        return grad


# -- add / sub ------------------------------------------------------------------------------

@complex_autograd
class AddBackward0(_BinaryNode):
    __slots__ = ("alpha",)
    saved_fields = {"alpha": "alpha"}

    def backward(self, grad):
        edges = self.next_functions
        alpha = self.alpha
        if alpha == 1 and self.matches(blocked_or_data(grad)):   # the common case: grad for both
            return (grad if edges[0][0] is not None else None,
                    grad if edges[1][0] is not None else None)
        ga = self.reduce(grad, 0) if edges[0][0] is not None else None
        gb = None
        if edges[1][0] is not None:
            gb = self.reduce(grad if alpha == 1 else grad * alpha, 1)
        return ga, gb

    def backward_arrays(self, grad):
        """The common case: alpha 1, an ordinary gradient of both operands' shape and dtype."""
        if self.alpha != 1 or grad.__class__ is not Tensor or not self.matches(grad._data):
            return None
        edges = self.next_functions
        return (grad if edges[0][0] is not None else None,
                grad if edges[1][0] is not None else None)


@complex_autograd
class SubBackward0(_BinaryNode):
    __slots__ = ("alpha",)
    saved_fields = {"alpha": "alpha"}

    def backward(self, grad):
        edges = self.next_functions
        ga = self.reduce(grad, 0) if edges[0][0] is not None else None
        gb = None
        if edges[1][0] is not None:
            alpha = self.alpha
            gb = self.reduce(grad * -alpha if alpha != 1 else -grad, 1)
        return ga, gb

    def backward_arrays(self, grad):
        """The common case on arrays: alpha 1, a gradient of both operands' shape and dtype."""
        data = grad._data
        if self.alpha != 1 or not self.matches(data):
            return None
        edges = self.next_functions
        return (grad if edges[0][0] is not None else None,
                make(namespace_of(data).negative(data)) if edges[1][0] is not None else None)


def _given(**kwargs):
    """The keyword arguments that differ from their defaults (None, or 1 for ``alpha``), to hand
    on to a ``__torch_function__``."""
    return {k: v for k, v in kwargs.items() if v is not None and not (k == "alpha" and v == 1)}


def _scaled(y, alpha):
    """``y * alpha`` in y's dtype (NumPy would compute bfloat16 times a float in float32)."""
    return y * (y.dtype.type(alpha) if y.dtype == _dtype.bfloat16.np else alpha)


def _check_alpha(a, b, alpha):
    """torch's check of ``alpha`` against the result's dtype (that of ``a`` and ``b`` together)."""
    if _dtype.result_type_of(a, b).np.kind in "biu" and isinstance(alpha, float):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")


@method("add", "__add__", "__radd__")
def add(input, other, *, alpha=1, out=None):
    """Adds ``other``, scaled by ``alpha``, to ``input``: out = input + alpha * other."""
    if out is None and alpha.__class__ is int and alpha == 1:
        return _add_entry[0](input, other)
    return _python_add(input, other, alpha=alpha, out=out)


def _python_add(input, other, *, alpha=1, out=None):
    """``add`` in every case its compiled function (``_compiled_functions``) leaves to Python."""
    try:
        if input.__class__ is not Tensor:
            if input.__class__ is BlockedTensor and alpha == 1 and out is None:
                res = _add_in_layout(input, other)
                if res is not None:
                    return res
            _tensor_arg(input, "add")
        if alpha == 1:
            res = _binary("add", namespace_of(input._data).add, AddBackward0, input, other, alpha=1)
        elif isinstance(other, Tensor):
            _check_alpha(input, other, alpha)
            res = _binary("add", lambda x, y: namespace_of(x).add(x, _scaled(y, alpha)), AddBackward0,
                          input, other, alpha=alpha)
        else:
            res = _binary("add", namespace_of(input._data).add, AddBackward0, input, other * alpha,
                          alpha=1)
    except TypeError as error:   # a tensor-like argument: its __torch_function__
        return dispatch_or_raise(add, (input, other), (input, other), _given(alpha=alpha, out=out), error)
    return res if out is None else _maybe_out(res, out)


def _add_in_layout(a, b):
    """``a + b`` where both tensors are held in one oneDNN layout (a residual connection
    between convolutions), over their buffers; None otherwise."""
    if b.__class__ is not BlockedTensor:
        return None
    (ad, bd), layout_of = elementwise_operands(a, b)
    if layout_of is None:
        return None
    out = wrap_like(layout_of, large_binary(np.add, ad, bd))
    node = record(AddBackward0, (a, b), out)
    if node is not None:
        node.self_shape = node.other_shape = layout_of.shape
        node.self_dtype = node.other_dtype = layout_of.dtype
        node.alpha = 1
    return out


def _refuse_bool_subtraction(input, other):
    """torch's errors for ``-`` (or ``-=``) with a bool tensor."""
    a_bool = input._data.dtype.kind == "b"
    b_bool = isinstance(other, Tensor) and other._data.dtype.kind == "b"
    if a_bool and b_bool:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                           "Use the `^` or `logical_xor()` operator instead.")
    if a_bool or b_bool:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.")


@method("sub", "subtract", "__sub__")
def sub(input, other, *, alpha=1, out=None):
    """Subtracts ``other``, scaled by ``alpha``, from ``input``."""
    if out is None and alpha.__class__ is int and alpha == 1:
        return _sub_entry[0](input, other)
    return _python_sub(input, other, alpha=alpha, out=out)


def _python_sub(input, other, *, alpha=1, out=None):
    """``sub`` in every case its compiled function (``_compiled_functions``) leaves to Python."""
    if not isinstance(input, Tensor):
        return dispatch_or_raise(sub, (input, other), (input, other), _given(alpha=alpha, out=out),
                                 TypeError(f"sub(): argument 'input' (position 1) must be Tensor, "
                                           f"not {type(input).__name__}"))
    _refuse_bool_subtraction(input, other)
    if alpha == 1:
        res = _binary("sub", namespace_of(input._data).subtract, SubBackward0, input, other, alpha=1)
    elif isinstance(other, Tensor):
        _check_alpha(input, other, alpha)
        res = _binary("sub", lambda x, y: namespace_of(x).subtract(x, _scaled(y, alpha)),
                      SubBackward0, input, other, alpha=alpha)
    else:
        res = _binary("sub", namespace_of(input._data).subtract, SubBackward0, input, other * alpha,
                      alpha=1)
    return _maybe_out(res, out)


subtract = sub


@complex_autograd
class RsubBackward1(Node):
    __slots__ = ()
    jvp = jvp_by_backward

    def backward(self, grad):
        return (-grad if self.alpha == 1 else grad * -self.alpha,)


@method()
def rsub(input, other, *, alpha=1):
    """other - alpha * input."""
    if isinstance(other, Tensor):
        return sub(other, input, alpha=alpha)
    _tensor_arg(input, "rsub")
    if input._data.dtype.kind == "b":
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.")
    ad, od = arrays_for(input, other)
    out = make(namespace_of(ad).subtract(od, ad if alpha == 1 else ad * alpha))
    node = record(RsubBackward1, (input,), out)
    if node is not None:
        node.alpha = alpha
    return out


# -- mul / div ------------------------------------------------------------------------------

@complex_autograd
class MulBackward0(_BinaryNode):
    __slots__ = ()
    saved_fields = {"self": 0, "other": _number_or(1)}

    def jvp(self, ta, tb):   # (it keeps each operand only for the other's gradient)
        a, b = self.primals
        if b is None:
            return ta * self.other_scalar
        out = None if ta is None else ta * b
        if tb is not None:
            out = a * tb if out is None else out + a * tb
        return out

    def backward(self, grad):
        edges = self.next_functions
        if self.other_shape is None:
            return self.reduce(grad * conj_if_complex(self.other_scalar), 0), None
        a, b = self.saved_tensors
        if _outer_operands(grad._data, None if a is None else a._data, None if b is None else b._data):
            return _outer_gradients(grad, a, b, edges, lambda t: t._data)
        ga = self.reduce(grad * conj_if_complex(b), 0) if edges[0][0] is not None else None
        gb = self.reduce(grad * conj_if_complex(a), 1) if edges[1][0] is not None else None
        return ga, gb

    def backward_arrays(self, grad):
        gd = grad._data
        if self.other_shape is None:
            scalar = self.other_scalar
            if (scalar.__class__ is not float and scalar.__class__ is not int) or gd.dtype not in _RAW_DTYPES:
                return None
            ga = make(gd * scalar)
            return (ga if gd.shape == self.self_shape and gd.dtype == self.self_dtype
                    else self.reduce(ga, 0)), None
        a, b = self.saved_tensors
        if gd.dtype in _RAW_DTYPES and self.matches(gd):   # no promotion, no reduction
            dtype = gd.dtype
            ad = None if a is None else a._data
            bd = None if b is None else b._data
            if (ad is None or ad.dtype == dtype) and (bd is None or bd.dtype == dtype):
                return (None if bd is None else make(gd * bd)), (None if ad is None else make(gd * ad))
        edges = self.next_functions
        arrays = raw_arrays(grad, a, b)
        if arrays is None:
            return None
        gd, ad, bd = arrays
        if _outer_operands(gd, ad, bd):
            return _outer_gradients(gd, ad, bd, edges, lambda x: x, make)
        ga = self.reduce(make(gd * bd), 0) if edges[0][0] is not None else None
        gb = self.reduce(make(gd * ad), 1) if edges[1][0] is not None else None
        return ga, gb


def _outer_operands(gd, ad, bd):
    """Whether a product's arrays are an outer product's ``column * row`` (``outer``, ``addr``:
    a (n, 1) and a (m,) or (1, m) operand, either way round, with a dense (n, m) gradient, all
    of one real float dtype), whose gradients are matrix-vector products."""
    if (ad is None or bd is None or gd.ndim != 2 or gd.dtype not in _MATVEC_DTYPES
            or ad.dtype != gd.dtype or bd.dtype != gd.dtype
            or not (gd.flags.c_contiguous or gd.flags.f_contiguous)):   # (a broadcast gradient: the products)
        return False
    n, m = gd.shape
    return ((ad.shape == (n, 1) and bd.shape in ((m,), (1, m)))
            or (bd.shape == (n, 1) and ad.shape in ((m,), (1, m))))


def _outer_gradients(grad, a, b, edges, data_of, wrap=lambda x: x):
    """The gradients of ``a * b`` that ``_outer_operands`` accepts, ``grad @ row`` and
    ``column @ grad`` (tensors, or with ``wrap`` the arrays made into tensors), instead of the
    two elementwise products summed along a dimension: one matrix-vector product each."""
    n, m = data_of(grad).shape
    column_first = data_of(a).shape == (n, 1)
    column, row = (a, b) if column_first else (b, a)
    wanted = (edges[0][0] is not None, edges[1][0] is not None)
    want_column, want_row = wanted if column_first else wanted[::-1]
    g_column = wrap((grad @ row.reshape(m)).reshape(n, 1)) if want_column else None
    g_row = wrap((column.reshape(n) @ grad).reshape(data_of(row).shape)) if want_row else None
    return (g_column, g_row) if column_first else (g_row, g_column)


_MATVEC_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


@method("mul", "multiply", "__mul__", "__rmul__")
def mul(input, other, *, out=None):
    """Multiplies ``input`` by ``other``, with broadcasting and type promotion."""
    if out is None:
        return _mul_entry[0](input, other)
    return _python_mul(input, other, out=out)


def _python_mul(input, other, *, out=None):
    """``mul`` in every case its compiled function (``_compiled_functions``) leaves to Python."""
    try:
        if input.__class__ is not Tensor:
            _tensor_arg(input, "mul")
        res = _binary("mul", namespace_of(input._data).multiply, MulBackward0, input, other)
    except TypeError as error:   # a tensor-like argument: its __torch_function__
        return dispatch_or_raise(mul, (input, other), (input, other), _given(out=out), error)
    node = res.grad_fn
    if node is not None and node.other_shape is not None:
        # as torch: each operand is kept only for the other's gradient
        node.save(input if other._requires_grad else None, other if input._requires_grad else None)
    return res if out is None else _maybe_out(res, out)


multiply = mul


@complex_autograd
class DivBackward0(_BinaryNode):
    __slots__ = ()
    saved_fields = {"self": 0, "other": _number_or(1)}

    def jvp(self, ta, tb):
        a, b = self.primals
        if b is None:
            return ta / self.other_scalar
        out = None if ta is None else ta / b
        if tb is not None:
            term = tb * self.results[0] / b
            out = -term if out is None else out - term
        return out

    def backward(self, grad):
        saved = self.saved_tensors
        if self.other_shape is None:
            return self.reduce(grad / conj_if_complex(self.other_scalar), 0), None
        a, b, out = saved
        b = conj_if_complex(b)
        ga = self.reduce(grad / b, 0) if self.next_functions[0][0] is not None else None
        gb = None
        if self.next_functions[1][0] is not None:
            gb = self.reduce(-grad * conj_if_complex(out) / b, 1)
        return ga, gb

    def backward_arrays(self, grad):
        """``backward``'s arithmetic on the arrays, for real operands of one dtype."""
        gd = grad._data
        edges = self.next_functions
        if self.other_shape is None:
            scalar = self.other_scalar
            if (scalar.__class__ is not float and scalar.__class__ is not int) or gd.dtype not in _RAW_DTYPES:
                return None
            return self.reduce(make(namespace_of(gd).true_divide(gd, scalar)), 0), None
        arrays = raw_arrays(grad, *self.saved_tensors)
        if arrays is None or grad.__class__ is not Tensor:
            return None
        gd, ad, bd, od = arrays
        xp = namespace_of(gd)
        ga = self.reduce(make(xp.true_divide(gd, bd)), 0) if edges[0][0] is not None else None
        gb = None
        if edges[1][0] is not None:
            terms = xp.multiply(gd, od)
            if isinstance(terms, np.generic):   # (0-d operands: NumPy's result is a scalar)
                gb = self.reduce(make(xp.true_divide(-terms, bd)), 1)
            else:   # -(g * out / b), which rounds as (-g * out) / b does, in one buffer
                gb = self.reduce(make(xp.true_divide(terms, bd, out=terms)), 1)
                xp.negative(gb._data, out=gb._data)
        return ga, gb


class DivBackward1(_BinaryNode):
    """Division with a rounding mode: piecewise constant, so the gradient is zero."""
    __slots__ = ()

    def backward(self, grad):
        zero = zeros_like_gradient(grad)
        return (self.reduce(zero, 0) if self.next_functions[0][0] is not None else None,
                self.reduce(zero, 1) if self.next_functions[1][0] is not None else None)


def _true_divide(x, y):
    xp = namespace_of(x)
    if x.dtype.kind in "biu" and (not hasattr(y, "dtype") or y.dtype.kind in "biu"):
        d = _dtype.get_default_dtype().np
        return xp.true_divide(x.astype(d), y.astype(d) if hasattr(y, "astype") else y)
    if x.nbytes >= _ROWS_MIN_BYTES:
        return large_binary(xp.true_divide, x, y)
    return xp.true_divide(x, y)


def _trunc_divide(x, y):
    xp = namespace_of(x)
    if x.dtype.kind in "iu":
        _check_int_zero(y)
        q = xp.floor_divide(x, y)
        # floor -> trunc where the signs differ and the division is inexact
        fix = (xp.remainder(x, y) != 0) & ((x < 0) != (xp.asarray(y) < 0))
        return q + fix.astype(q.dtype)
    return xp.trunc(xp.true_divide(x, y)).astype(x.dtype, copy=False)


# int64 floor division, its remainder and fmod from this many elements by an int64 array on openmp_kernels'
# rows loop (vectorized float64 division where the values allow it; NumPy divides element by element)
INT64_DIVISION_MIN_ELEMENTS = 1 << 12


def _integer_division(kind):
    """NumPy's ufunc ``kind`` (floor_divide, remainder or fmod), integer divisors checked for zeros (torch's
    ZeroDivisionError)."""
    choice = KernelChoice(f"int64 {kind}", numpy=getattr(np, kind),
                          onednn=lambda x, y: openmp_kernels.int64_division_rows(kind, x, y))

    def divide(x, y):
        if x.dtype.kind in "iu":
            _check_int_zero(y)
            if x.dtype == _INT64 and x.size >= INT64_DIVISION_MIN_ELEMENTS and y.__class__ is np.ndarray:
                return choice(x, y)
        return getattr(namespace_of(x), kind)(x, y)
    return divide


_integer_floor_divide, _integer_remainder, _integer_fmod = (
    _integer_division(kind) for kind in ("floor_divide", "remainder", "fmod"))


def _floor_divide_arrays(x, y):
    if x.dtype.kind in "iu":
        return _integer_floor_divide(x, y)
    if _float_division.fast_path_applies(x, y):
        return _float_division.div_floor(x, y)
    with np.errstate(all="ignore"):   # inf and NaN are the answers here
        # in the operands' own dtype: torch rounds each step of a half's floor division to it
        return _float_division.torch_div_floor(x, y)


def _check_int_zero(y):
    if y == 0 if is_scalar(y) else bool((y == 0).any()):
        raise RuntimeError("ZeroDivisionError")


@method("div", "divide", "__truediv__")
def div(input, other, *, rounding_mode=None, out=None):
    """Divides ``input`` by ``other``; ``rounding_mode`` None (true division), 'trunc' or 'floor'."""
    if out is None:
        if rounding_mode is None:
            return _div_entry[0](input, other)
        if rounding_mode == "floor":
            return _div_floor_entry[0](input, other)
        if rounding_mode == "trunc":
            return _div_trunc_entry[0](input, other)
    return _python_div(input, other, rounding_mode=rounding_mode, out=out)


def _python_div_floor(input, other):
    """``div(input, other, rounding_mode="floor")`` in every case its compiled function leaves to Python."""
    return _python_div(input, other, rounding_mode="floor")


def _python_div_trunc(input, other):
    """``div(input, other, rounding_mode="trunc")`` in every case its compiled function leaves to Python."""
    return _python_div(input, other, rounding_mode="trunc")


def _python_div(input, other, *, rounding_mode=None, out=None):
    """``div`` in every case its compiled function (``_compiled_functions``) leaves to Python."""
    try:
        _tensor_arg(input, "div")
        if rounding_mode is None:
            res = _binary("div", _true_divide, DivBackward0, input, other)
            node = res.grad_fn
            if node is not None and node.other_shape is not None:
                # b for both gradients; a (as torch keeps it) and the result for b's
                b_grad = other._requires_grad
                node.save(input if b_grad else None, other, res if b_grad else None)
        elif rounding_mode == "trunc":
            res = _binary("div", _div_trunc_kernel, DivBackward1, input, other)
        elif rounding_mode == "floor":
            res = _binary("div", _div_floor_kernel, DivBackward1, input, other)
        else:
            raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                               f"found '{rounding_mode}'")
    except TypeError as error:   # a tensor-like argument: its __torch_function__
        return dispatch_or_raise(div, (input, other), (input, other),
                                 _given(rounding_mode=rounding_mode, out=out), error)
    return _maybe_out(res, out)


divide = div

# the functions of the arithmetic operators take the compiled operator's common case (its
# ``Tensor`` method's C code), else their Python op
_add_entry, _sub_entry, _mul_entry, _div_entry = (
    _compiled_functions.register(python_op, None, kind="operator", specifics=operator)
    for python_op, operator in ((_python_add, "__add__"), (_python_sub, "__sub__"), (_python_mul, "__mul__"),
                                (_python_div, "__truediv__")))


@method()
def true_divide(input, other, *, out=None):
    return div(input, other, out=out)


# -- neg ------------------------------------------------------------------------------------

@complex_autograd
class NegBackward0(Node):
    __slots__ = ()
    jvp = jvp_by_backward

    def backward(self, grad):
        return (-grad,)

    def backward_arrays(self, grad):
        data = grad._data
        return (make(namespace_of(data).negative(data)),)


@method("neg", "negative", "__neg__")
def neg(input, *, out=None):
    """Returns -input."""
    _tensor_arg(input, "neg")
    if input._data.dtype.kind == "b":
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are "
                           "trying to invert a mask, use the `~` or `logical_not()` operator instead.")
    res = make(namespace_of(input._data).negative(input._data))
    if input._requires_grad or forward_mode.active:
        record(NegBackward0, (input,), res)
    return res if out is None else _maybe_out(res, out, exact=True)


negative = neg


# -- pow ------------------------------------------------------------------------------------

@complex_autograd
class PowBackward0(Node):
    """pow(tensor, number)"""
    __slots__ = ()
    saved_fields = {"self": 0, "exponent": "exponent"}

    def jvp(self, tangent):   # tangent * p a^(p-1), unconjugated for complex a
        a, p = self.primals[0], self.exponent
        if p == 0:
            return None
        return tangent * (a.pow(p - 1) * p)

    def backward(self, grad):
        (a,) = self.saved_tensors
        p = self.exponent
        if p == 0:
            return (zeros_like_gradient(grad),)
        if a._data.dtype.kind == "c" or isinstance(p, complex):
            return (grad * conj_if_complex(a.pow(p - 1) * p),)
        return (grad * p * a.pow(p - 1),)


class PowBackward1(_BinaryNode):
    """pow(tensor, tensor)"""
    __slots__ = ()
    saved_fields = {"self": 0, "exponent": 1, "result": 2}

    def backward(self, grad):
        a, b, out = self.saved_tensors
        ga = gb = None
        from .ternary import where
        if self.next_functions[0][0] is not None:
            # 0 where the exponent is 0, even at a == 0 (torch's convention)
            ga = self.reduce(where(b == 0, 0.0, grad * b * a.pow(b - 1)), 0)
        if self.next_functions[1][0] is not None:
            # d/db a**b = a**b * log(a), taken as 0 where a == 0 and b >= 0 (torch's convention)
            log_a = a.log()
            mask = (a == 0) & (b >= 0)
            gb = self.reduce(grad * where(mask, 0.0, out * log_a), 1)
        return ga, gb


class PowBackward2(Node):
    """pow(number, tensor)"""
    __slots__ = ()
    saved_fields = {"exponent": 0, "result": 1, "self": "base"}
    jvp = jvp_by_backward

    def backward(self, grad):
        from .ternary import where
        exponent, out = self.saved_tensors
        if self.base == 0:
            # torch's convention: 0 where the exponent is >= 0
            return (where(exponent >= 0, grad * 0, grad * out * -math.inf),)
        return (grad * out * math.log(self.base),)


def _int_power(x, e):
    """``x ** e`` for integer arrays (or an integer number ``x``), as torch computes it: a
    negative exponent gives 1 for a base of 1, +-1 for -1 and 0 otherwise (NumPy refuses)."""
    xp = namespace_of(e if getattr(e, "ndim", 0) else x)
    if not bool((e < 0).any()):
        return xp.power(x, e)
    x = xp.asarray(x, dtype=xp.result_type(x, e))
    positive = xp.power(x, xp.where(e < 0, 0, e))
    odd = (e % 2) != 0
    negative = xp.where(x == 1, 1, xp.where(x == -1, xp.where(odd, -1, 1), 0)).astype(positive.dtype)
    return xp.where(e < 0, negative, positive)


def _pow_arrays(x, e):
    xp = namespace_of(x)
    if x.dtype.kind in "iu" and is_scalar(e) and not isinstance(e, float) and e < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    if x.dtype.kind in "iu" and getattr(e, "dtype", None) is not None and e.dtype.kind in "iu":
        return _int_power(x, e)
    if x.dtype.char in "fd" and is_scalar(e) and not isinstance(e, complex):
        if e == 2:   # (NumPy's power takes its general loop for a Python int 2)
            return _square(x)
        if e == 3:  # by multiplication, as torch does: NumPy takes its scalar powf loop here
            return x * x * x
        if e == -2:
            return 1 / (x * x)
        if e == -0.5:
            return 1 / xp.sqrt(x)
    return xp.power(x, e)


@method("pow", "__pow__")
def pow(input, exponent, *, out=None):
    """Takes the power of each element in ``input`` with ``exponent``."""
    if out is None:
        return _pow_entry[0](input, exponent)
    return _python_pow(input, exponent, out=out)


def _python_pow(input, exponent, *, out=None):
    """``pow`` in every case its compiled function (``_compiled_functions``) leaves to Python."""
    try:
        if is_scalar(input):
            _tensor_arg(exponent, "pow", 2, "exponent")
            base = input
            ed, bd = arrays_for(exponent, base)
            if ed.dtype.kind in "iu":
                res = make(_int_power(bd, ed))
            elif base == 2 and ed.dtype.char in "fd":   # exact at integers, as pow; NumPy's power
                res = make(namespace_of(ed).exp2(ed))   # takes a scalar loop several times slower
            else:
                res = make(namespace_of(ed).power(bd, ed))
            node = record(PowBackward2, (exponent,), res)
            if node is not None:
                node.base = base
                node.save(exponent, res)
            return _maybe_out(res, out)
        _tensor_arg(input, "pow")
        if isinstance(exponent, Tensor):
            res = _binary("pow", _pow_arrays, PowBackward1, input, exponent, ("self", "other", "result"))
            return _maybe_out(res, out)
        ad, e = arrays_for(input, exponent)
        res = make(_pow_arrays(ad, e))
        node = record(PowBackward0, (input,), res)
        if node is not None:
            node.exponent = exponent
            node.save(input)
        return _maybe_out(res, out)
    except (AttributeError, TypeError) as error:   # a tensor-like argument's override
        return override_or_raise(pow, error, input, exponent, out=out)


_maybe_out = write_out
_pow_entry = _compiled_functions.register(_python_pow, PowBackward0, kind="power")


# -- in-place forms and operators ---------------------------------------------------------

def _inplace_binary(self, other, ufunc_name, op, **kwargs):
    """``self op= other`` in place: straight into self's memory when autograd is not
    recording, else through the out-of-place op (see apply_inplace)."""
    if self._requires_grad or (isinstance(other, Tensor) and other._requires_grad):
        if grad_state.grad_enabled:
            return apply_inplace(self, op, other, **kwargs)
    if forward_mode.active:
        return apply_inplace(self, op, other, **kwargs)
    check_inplace(self)
    sd = self._data
    ad, bd = arrays_for(self, other)
    if ad.dtype != sd.dtype:
        if not _dtype.can_cast(_BY_NP[ad.dtype], _BY_NP[sd.dtype]):
            raise RuntimeError(f"result type {_type_word(ad.dtype)} can't be cast to the desired "
                               f"output type {_type_word(sd.dtype)}")
    alpha = kwargs.get("alpha", 1)
    if alpha != 1:
        if isinstance(other, Tensor):
            _check_alpha(self, other, alpha)
        bd = bd * alpha
    xp = namespace_of(sd)
    try:
        if ufunc_name == "true_divide":
            if sd.dtype.kind in "biu":
                raise RuntimeError(f"result type Float can't be cast to the desired output type {_type_word(sd.dtype)}")
        getattr(xp, ufunc_name)(ad, bd, out=sd, casting="unsafe")
    except ValueError:
        shape = xp.broadcast_shapes(sd.shape, getattr(bd, "shape", ()))
        raise RuntimeError(f"output with shape {list(sd.shape)} doesn't match the broadcast shape "
                           f"{list(shape)}") from None
    bump_version(self)
    return self


@method("add_", "__iadd__")
def add_(self, other, *, alpha=1):
    return _inplace_binary(self, other, "add", add, alpha=alpha)


@method("sub_", "subtract_", "__isub__")
def sub_(self, other, *, alpha=1):
    _refuse_bool_subtraction(self, other)
    return _inplace_binary(self, other, "subtract", sub, alpha=alpha)


@method("mul_", "multiply_", "__imul__")
def mul_(self, other):
    return _inplace_binary(self, other, "multiply", mul)


@method("div_", "divide_", "true_divide_", "__itruediv__")
def div_(self, other, *, rounding_mode=None):
    if rounding_mode is not None:
        return apply_inplace(self, div, other, rounding_mode=rounding_mode)
    return _inplace_binary(self, other, "true_divide", div)


@method("pow_", "__ipow__")
def pow_(self, exponent):
    return apply_inplace(self, pow, exponent)


@method()
def neg_(self):
    return apply_inplace(self, neg)


@method()
def square(input, *, out=None):
    """Returns a new tensor with the square of the elements of ``input`` (``pow(input, 2)``)."""
    return pow(input, 2, out=out)


@method()
def square_(self):
    return pow_(self, 2)


@method("__rsub__")
def _rsub_op(self, other):
    return rsub(self, other)


@method("__rtruediv__")
def _rtruediv(self, other):
    if isinstance(other, Tensor):
        return div(other, self)
    return mul(unary.reciprocal(self), other)


@method("__rpow__")
def _rpow(self, other):
    return pow(other, self)


@method("__pos__")
def _pos(self):
    return self


# -- more binary ops: atan2, fmod, remainder, floor_divide, hypot, logaddexp, copysign, ... --

def _other_tensor(other, op):
    if not isinstance(other, Tensor):
        raise TypeError(f"{op}(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")


def _not_implemented(kernel, np_dtype):
    return NotImplementedError(f"\"{kernel}\" not implemented for '{_type_word(np_dtype)}'")


def float_arrays(a, b):
    """Operands of a float op: like ``arrays_for``, but integer and bool operands become the
    default float dtype first (so a negative number stays negative next to a uint8 tensor)."""
    common = _dtype.result_type_of(a, b)
    if common.is_floating_point or common.is_complex:
        return arrays_for(a, b)
    d = _dtype.get_default_dtype().np
    return a._data.astype(d), (b._data.astype(d) if isinstance(b, Tensor) else b)


def _ufunc(ufunc_name):
    def kernel(x, y):
        return getattr(namespace_of(x), ufunc_name)(x, y)
    return kernel


def _on_loop_when_large(op, kernel):
    """``kernel(x, y)``, a large float32 ``x`` by the choice of ``vector_math``'s loop for ``op``."""
    return vector_math.binary_when_large(op, kernel)


_floor_divide = _on_loop_when_large("floor_divide", _floor_divide_arrays)


def compiled_binary(node_cls, saves, ufunc=None, loop=None, max_elements=None, integers=None, int_ufunc=None,
                    converts=False, number_first=False, int_numbers=False):
    """A decorator: the op ``op(input, other, *, out=None)`` with its common case compiled
    (``_compiled_functions``): two small float tensors of one dtype, on NumPy's ``ufunc`` below
    ``max_elements`` elements (by default the size from which the op takes ``vector_math``'s
    loop ``loop``), or, given only ``loop`` (which the op takes at every size), on the loop;
    with ``integers`` "any", also two small integer or bool tensors of one dtype, with "integers"
    two integer ones, or with "nonzero_divisor" two integer ones, the second without a zero (a
    division's: the Python op raises), on ``int_ufunc`` (by default ``ufunc``). A float op
    (``converts``, whose Python op takes its operands by ``float_arrays``) takes integer and bool
    tensors too, as ``float_arrays`` converts them; an op on a loop takes two shapes that broadcast,
    and (``number_first``) a number and a float32 tensor, the number spread over the tensor's shape.
    With ``int_numbers`` it takes a small integer tensor (int8 to int64 or uint8) and a Python int in its
    dtype's range, second, on ``int_ufunc`` (NumPy keeps the tensor's dtype, as torch's result type does).
    ``node_cls`` and ``saves`` are the node and the saved tensors of the op's tensor case."""
    if ufunc is not None and loop is not None and max_elements is None:
        max_elements = vector_math.MIN_ELEMENTS[loop] - 1
    addresses = (lambda: (vector_math.loop_address(loop), None)) if ufunc is None else None

    def compiled(python_op):
        entry = _compiled_functions.register(python_op, node_cls, saves, kind="binary", addresses=addresses,
                                             ufunc=ufunc, max_elements=max_elements,
                                             specifics=(integers, int_ufunc, converts, number_first, int_numbers))

        @functools.wraps(python_op)
        def op(input, other, *, out=None):
            return entry[0](input, other) if out is None else python_op(input, other, out=out)
        return op
    return compiled


def _float_only_kernel(ufunc_name, kernel_name):
    """A float op that torch does not implement for integer and bool tensors."""
    def kernel(x, y):
        if x.dtype.kind in "biu":
            raise _not_implemented(kernel_name, x.dtype)
        return getattr(namespace_of(x), ufunc_name)(x, y)
    return kernel


def _no_bool(kernel_name, fn):
    def kernel(x, y):
        if x.dtype.kind == "b":
            raise _not_implemented(kernel_name, x.dtype)
        return fn(x, y)
    return kernel


def _no_complex(kernel_name, fn, message=None):
    """``fn``, refusing complex operands as torch does: its kernel ``kernel_name`` has no
    complex loop (NotImplementedError), or a RuntimeError with ``message``."""
    def kernel(x, y):
        dtype = x.dtype if x.dtype.kind == "c" else getattr(y, "dtype", x.dtype)
        if dtype.kind == "c":
            raise RuntimeError(message) if message else _not_implemented(kernel_name, dtype)
        return fn(x, y)
    return kernel


_div_trunc_kernel = _no_complex("div_trunc_cpu", _no_bool("div_trunc_cpu",
                                                          _on_loop_when_large("div_trunc", _trunc_divide)))
_div_floor_kernel = _no_complex("div_floor_cpu", _no_bool("div_floor_cpu", _floor_divide))


def _scalar_first(input, other, op, float_op=False):
    """``op(number, tensor)``: the number as a 0-d tensor of the two operands' common dtype
    (an integer one wraps around, as torch's does; a float op's is the default float)."""
    _tensor_arg(other, op, 2, "other")
    common = _dtype.result_type_of(input, other)
    if float_op and not common.is_floating_point:
        common = _dtype.get_default_dtype()
    return make(namespace_of(other._data).asarray(input).astype(common.np))


class Atan2Backward0(_BinaryNode):
    __slots__ = ()
    saved_fields = {"self": 0, "other": 1}

    def backward(self, grad):
        a, b = self.saved_tensors
        scale = grad / (a * a + b * b)
        return (self.reduce(scale * b, 0) if self.next_functions[0][0] is not None else None,
                self.reduce(scale * -a, 1) if self.next_functions[1][0] is not None else None)


_atan2_kernel = _no_complex("atan2_cpu", _on_loop_when_large("atan2", _ufunc("arctan2")))


@compiled_binary(Atan2Backward0, ("self", "other"), np.arctan2, "atan2", converts=True)
def atan2(input, other, *, out=None):
    """Element-wise arctangent of ``input / other`` with consideration of the quadrant."""
    _tensor_arg(input, "atan2")
    _other_tensor(other, "atan2")
    return _maybe_out(_binary("atan2", _atan2_kernel, Atan2Backward0, input, other, ("self", "other"),
                              float_arrays), out)


arctan2 = atan2


class FmodBackward0(_BinaryNode):
    """fmod(tensor, number)"""
    __slots__ = ()

    def backward(self, grad):
        return self.reduce(grad, 0), None


class FmodBackward1(_BinaryNode):
    __slots__ = ()
    saved_fields = {"self": 0, "other": 1}

    def backward(self, grad):
        a, b = self.saved_tensors
        need_a, need_b = (fn is not None for fn, _ in self.next_functions)
        return (self.reduce(grad, 0) if need_a else None,
                self.reduce(-grad * a.div(b, rounding_mode="trunc"), 1) if need_b else None)


def _float_or_int_kernel(int_kernel, float_kernel):
    """``int_kernel`` (an integer division with torch's ZeroDivisionError), or ``float_kernel`` on float32
    arrays large enough for its whole-array passes."""
    def kernel(x, y):
        if _float_division.fast_path_applies(x, y):
            return float_kernel(x, y)
        return int_kernel(x, y)
    return kernel


_fmod_kernel = _no_complex("fmod_cpu", _no_bool("fmod_cpu", _on_loop_when_large(
    "fmod", _float_or_int_kernel(_integer_fmod, _float_division.fmod))))


@compiled_binary(FmodBackward1, ("self", "other"), np.fmod, "fmod", integers="nonzero_divisor", int_numbers=True)
def fmod(input, other, *, out=None):
    """The C-style remainder of division: has the sign of the dividend ``input``."""
    _tensor_arg(input, "fmod")
    if isinstance(other, Tensor):
        return _maybe_out(_binary("fmod", _fmod_kernel, FmodBackward1, input, other, ("self", "other")), out)
    return _maybe_out(_binary("fmod", _fmod_kernel, FmodBackward0, input, other), out)


class RemainderBackward0(_BinaryNode):
    """remainder(tensor, number)"""
    __slots__ = ()

    def backward(self, grad):
        return self.reduce(grad, 0), None


class RemainderBackward1(_BinaryNode):
    __slots__ = ()
    saved_fields = {"self": 0, "other": 1}

    def backward(self, grad):
        a, b = self.saved_tensors
        need_a, need_b = (fn is not None for fn, _ in self.next_functions)
        return (self.reduce(grad, 0) if need_a else None,
                self.reduce(-grad * a.div(b, rounding_mode="floor"), 1) if need_b else None)


def _remainder(x, y):
    if x.dtype.kind in "iu":
        return _integer_remainder(x, y)
    if _float_division.fast_path_applies(x, y):
        return _float_division.remainder(x, y)
    return _float_division.torch_remainder(x, y)


_remainder_kernel = _no_complex("remainder_cpu", _no_bool("remainder_cpu",
                                                          _on_loop_when_large("remainder", _remainder)))


def _number_spread(op, kernel, min_elements=None):
    """``kernel(x, y)`` for ``op(number, tensor)``: the number (a 0-d ``x``) spread over a float32
    divisor's shape of ``min_elements`` or more (by default the size from which the op takes its
    loop), so that ``op``'s loop takes it (it reads the dividend as an array)."""
    least = vector_math.MIN_ELEMENTS[op] if min_elements is None else min_elements

    def spread(x, y):
        if (x.ndim == 0 and type(y) is np.ndarray and x.dtype == y.dtype == np.float32
                and y.size >= least and y.flags.c_contiguous):
            x = np.full(y.shape, x)
        return kernel(x, y)
    return spread


# (below 1024 elements NumPy's remainder of a number costs less than the spread and the loop)
_remainder_of_number = _number_spread("remainder", _remainder_kernel, min_elements=1 << 10)


@compiled_binary(RemainderBackward1, ("self", "other"), loop="remainder", integers="nonzero_divisor",
                 int_ufunc=np.remainder, number_first=True, int_numbers=True)
def remainder(input, other, *, out=None):
    """The Python-style modulus: has the sign of the divisor ``other``."""
    if is_scalar(input):
        if out is not None:   # torch's (Number self, Tensor other) overload has no out=
            raise TypeError(f"remainder() received an invalid combination of arguments - got "
                            f"({type(input).__name__}, Tensor, out=Tensor)")
        input = _scalar_first(input, other, "remainder")
        res = _binary("remainder", _remainder_of_number, NotImplementedBackward, input, other)
        return _maybe_out(_not_differentiable(res, "remainder"), out)
    _tensor_arg(input, "remainder")
    if isinstance(other, Tensor):
        return _maybe_out(_binary("remainder", _remainder_kernel, RemainderBackward1, input, other,
                                  ("self", "other")), out)
    return _maybe_out(_binary("remainder", _remainder_kernel, RemainderBackward0, input, other),
                      out)


_floor_divide_kernel = _no_complex("div_floor_cpu", _no_bool("div_floor_cpu", _floor_divide))
_floor_divide_of_number = _number_spread("floor_divide", _floor_divide_kernel)


@method("__floordiv__")
@compiled_binary(None, (), loop="floor_divide", integers="nonzero_divisor", int_ufunc=np.floor_divide,
                 number_first=True, int_numbers=True)
def floor_divide(input, other, *, out=None):
    """Divides ``input`` by ``other`` and rounds each quotient towards negative infinity."""
    kernel = _floor_divide_kernel
    if is_scalar(input):
        input = _scalar_first(input, other, "floor_divide")
        kernel = _floor_divide_of_number
    _tensor_arg(input, "floor_divide")
    res = _binary("floor_divide", kernel, NotImplementedBackward, input, other)
    return _maybe_out(_not_differentiable(res, "floor_divide"), out)


# (float32 on the loops at every size; integers on NumPy's ufunc, as the Python path's kernels)
_div_floor_entry, _div_trunc_entry = (
    _compiled_functions.register(python_op, DivBackward1, (), kind="binary", specifics=specifics,
                                 addresses=lambda loop=loop: (vector_math.loop_address(loop), None))
    for python_op, loop, specifics in ((_python_div_floor, "floor_divide",
                                        ("nonzero_divisor", np.floor_divide, False, False, False)),
                                       (_python_div_trunc, "div_trunc", (None, None, False, False, False))))


def _not_differentiable(res, op_name):
    if res.grad_fn is not None:
        res.grad_fn.message = f"derivative for aten::{op_name} is not implemented"
    return res


class HypotBackward0(_BinaryNode):
    __slots__ = ()
    saved_fields = {"self": 0, "other": 1, "result": 2}

    def backward(self, grad):
        a, b, out = self.saved_tensors
        scale = grad / out
        return (self.reduce(scale * a, 0) if self.next_functions[0][0] is not None else None,
                self.reduce(scale * b, 1) if self.next_functions[1][0] is not None else None)


_hypot_kernel = _no_complex("hypot_cpu", _on_loop_when_large("hypot", _float_only_kernel("hypot", "hypot_cpu")))


@compiled_binary(HypotBackward0, ("self", "other", "result"), np.hypot, "hypot")
def hypot(input, other, *, out=None):
    """``sqrt(input**2 + other**2)``, element-wise, without undue overflow."""
    _tensor_arg(input, "hypot")
    _other_tensor(other, "hypot")
    return _maybe_out(_binary("hypot", _hypot_kernel, HypotBackward0, input, other, ("self", "other", "result")), out)


class LogaddexpBackward0(_BinaryNode):
    __slots__ = ()
    saved_fields = {"self": 0, "other": 1}

    def backward(self, grad):
        a, b = self.saved_tensors
        return (self.reduce(grad / (1 + (b - a).exp()), 0) if self.next_functions[0][0] is not None else None,
                self.reduce(grad / (1 + (a - b).exp()), 1) if self.next_functions[1][0] is not None else None)


class Logaddexp2Backward0(_BinaryNode):
    __slots__ = ()
    saved_fields = {"self": 0, "other": 1}

    def backward(self, grad):
        a, b = self.saved_tensors
        return (self.reduce(grad / (1 + (b - a).exp2()), 0) if self.next_functions[0][0] is not None else None,
                self.reduce(grad / (1 + (a - b).exp2()), 1) if self.next_functions[1][0] is not None else None)


# From this many elements logaddexp runs as whole-array passes (torch's formula): NumPy's own
# loop calls exp and log1p one element at a time.
LOGADDEXP_PASSES_MIN_ELEMENTS = 1024
_PASSES_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _logaddexp_by_passes(x, y, exp, scale):
    """``max + log1p(exp(-|x - y|)) * scale`` with ``exp`` the base's exponential, as torch
    computes it; where both are the same infinity, that infinity."""
    xp = np
    with xp.errstate(invalid="ignore"):
        diff = xp.subtract(x, y)
        tail = xp.abs(diff)
        xp.negative(tail, out=tail)
        tail = exp(tail, out=tail)
        tail = xp.log1p(tail, out=tail)
        if scale != 1:
            tail *= tail.dtype.type(scale)
        out = xp.maximum(x, y)
        out += tail
        same_inf = (x == y) & xp.isinf(x)
    if same_inf.any():
        out[same_inf] = xp.broadcast_to(x, out.shape)[same_inf]
    return out


def _logaddexp_kernel_of(ufunc_name, exp_name, scale):
    def kernel(x, y):
        if x.__class__ is np.ndarray and x.dtype in _PASSES_DTYPES and y.dtype == x.dtype \
                and max(x.size, y.size) >= LOGADDEXP_PASSES_MIN_ELEMENTS:
            return _logaddexp_by_passes(x, y, getattr(np, exp_name), scale)
        if x.dtype.kind in "biu":
            raise _not_implemented(f"{ufunc_name}_cpu", x.dtype)
        return getattr(namespace_of(x), ufunc_name)(x, y)
    return kernel


_logaddexp_real = _logaddexp_kernel_of("logaddexp", "exp", 1)


def _logaddexp_any(x, y):
    if x.dtype.kind == "c":   # NumPy's logaddexp has no complex loop; torch's has
        xp = namespace_of(x)
        return xp.log(xp.exp(x) + xp.exp(y))
    return _logaddexp_real(x, y)


# (large float32 operands: the passes in one vector-math loop)
_logaddexp_kernel = _on_loop_when_large("logaddexp", _logaddexp_any)
_logaddexp2_kernel = _on_loop_when_large("logaddexp2", _no_complex(
    "logaddexp2_cpu", _logaddexp_kernel_of("logaddexp2", "exp2", 1 / math.log(2))))


@compiled_binary(LogaddexpBackward0, ("self", "other"), np.logaddexp,
                 max_elements=LOGADDEXP_PASSES_MIN_ELEMENTS - 1)
def logaddexp(input, other, *, out=None):
    """``log(exp(input) + exp(other))``, computed without overflow."""
    _tensor_arg(input, "logaddexp")
    _other_tensor(other, "logaddexp")
    return _maybe_out(_binary("logaddexp", _logaddexp_kernel, LogaddexpBackward0, input, other,
                              ("self", "other")), out)


@compiled_binary(Logaddexp2Backward0, ("self", "other"), np.logaddexp2,
                 max_elements=LOGADDEXP_PASSES_MIN_ELEMENTS - 1)
def logaddexp2(input, other, *, out=None):
    """``log2(2**input + 2**other)``, computed without overflow."""
    _tensor_arg(input, "logaddexp2")
    _other_tensor(other, "logaddexp2")
    return _maybe_out(_binary("logaddexp2", _logaddexp2_kernel, Logaddexp2Backward0, input, other,
                              ("self", "other")), out)


class CopysignBackward0(_BinaryNode):
    """copysign(tensor, tensor): ``other`` gets a zero gradient."""
    __slots__ = ()
    saved_fields = {"self": 0, "result": 1}

    def backward(self, grad):
        a, out = self.saved_tensors
        ga = self.reduce(_copysign_self_grad(grad, a, out), 0) if self.next_functions[0][0] is not None else None
        gb = None
        if self.next_functions[1][0] is not None:
            shape, dtype = self.other_shape, self.other_dtype
            gb = grad.new_zeros(shape, dtype=_dtype.from_numpy_dtype(dtype))
        return ga, gb


class CopysignBackward1(_BinaryNode):
    """copysign(tensor, number)"""
    __slots__ = ()
    saved_fields = {"self": 0, "result": 1}

    def backward(self, grad):
        a, out = self.saved_tensors
        return self.reduce(_copysign_self_grad(grad, a, out), 0), None


def _copysign_self_grad(grad, a, out):
    from .ternary import where
    return grad * where(a == 0, 0.0, out / a)


_copysign_kernel = _no_complex("copysign_cpu", _on_loop_when_large("copysign", _ufunc("copysign")))


@compiled_binary(CopysignBackward0, ("self", "result"), np.copysign, "copysign", converts=True)
def copysign(input, other, *, out=None):
    """The magnitude of ``input`` with the sign of ``other``, element-wise."""
    _tensor_arg(input, "copysign")
    node = CopysignBackward0 if isinstance(other, Tensor) else CopysignBackward1
    return _maybe_out(_binary("copysign", _copysign_kernel, node, input, other, ("self", "result"), float_arrays),
                      out)


class MaximumBackward0(_BinaryNode):
    """Ties split the gradient evenly between the operands, as torch does."""
    __slots__ = ()
    saved_fields = {"self": 0, "other": 1}

    def backward(self, grad):
        a, b = self.saved_tensors
        return _split_grad(self, grad, a, b, a < b, a > b)

    def jvp(self, ta, tb):   # torch's: the mean at ties, ``other``'s tangent where a NaN is
        from .ternary import where
        a, b = self.primals
        ta, tb = _both_tangents(ta, tb, a, b)
        return tb + where(a == b, (ta - tb) / 2, where(a > b, ta - tb, 0.0))


class MinimumBackward0(_BinaryNode):
    __slots__ = ()
    saved_fields = {"self": 0, "other": 1}

    def backward(self, grad):
        a, b = self.saved_tensors
        return _split_grad(self, grad, a, b, a > b, a < b)

    def jvp(self, ta, tb):
        from .ternary import where
        a, b = self.primals
        ta, tb = _both_tangents(ta, tb, a, b)
        return tb + where(a == b, (ta - tb) / 2, where(a < b, ta - tb, 0.0))


def _both_tangents(ta, tb, a, b):
    """Both operands' tangents, zeros for one without."""
    from .creation import zeros_like
    return (zeros_like(a) if ta is None else ta), (zeros_like(b) if tb is None else tb)


def _split_grad(node, grad, a, b, a_loses, b_loses):
    from .ternary import where
    shared = where(a == b, grad / 2, grad)
    return (node.reduce(where(a_loses, 0.0, shared), 0) if node.next_functions[0][0] is not None else None,
            node.reduce(where(b_loses, 0.0, shared), 1) if node.next_functions[1][0] is not None else None)


class FmaxBackward0(_BinaryNode):
    """The gradient goes to ``input`` where it won (ties included) or ``other`` is NaN."""
    __slots__ = ()
    saved_fields = {"self": 0, "other": 1}

    def backward(self, grad):
        a, b = self.saved_tensors
        return _pick_grad(self, grad, (a >= b) | b.isnan())

    def jvp(self, ta, tb):   # torch's: ``other``'s tangent at ties
        from .ternary import where
        a, b = self.primals
        ta, tb = _both_tangents(ta, tb, a, b)
        return where((a > b) | b.isnan(), ta, tb)


class FminBackward0(_BinaryNode):
    __slots__ = ()
    saved_fields = {"self": 0, "other": 1}

    def backward(self, grad):
        a, b = self.saved_tensors
        return _pick_grad(self, grad, (a <= b) | b.isnan())

    def jvp(self, ta, tb):
        from .ternary import where
        a, b = self.primals
        ta, tb = _both_tangents(ta, tb, a, b)
        return where((a <= b) | b.isnan(), ta, tb)


def _pick_grad(node, grad, to_a):
    from .ternary import where
    return (node.reduce(where(to_a, grad, 0.0), 0) if node.next_functions[0][0] is not None else None,
            node.reduce(where(to_a, 0.0, grad), 1) if node.next_functions[1][0] is not None else None)


_INT64 = np.dtype(np.int64)


def _int64_rows_or(larger, kernel):
    """``kernel(x, y)``, a large int64 ``x`` and a row ``y`` repeated over its rows given to the kernel choice of
    ``openmp_kernels``' rows loop for the maximum (``larger``) or minimum (NumPy calls its loop row by row)."""
    choice = KernelChoice("int64 extreme rows", onednn=lambda x, y: openmp_kernels.int64_extreme_rows(larger, x, y),
                          numpy=kernel)

    def rows_or_kernel(x, y):
        if (x.dtype == _INT64 and x.size >= vector_math.ROWS_MIN_ELEMENTS and y.__class__ is np.ndarray
                and y.shape != x.shape):
            return choice(x, y)
        return kernel(x, y)
    return rows_or_kernel


# (fmax and fmin of integers are their maximum and minimum)
_maximum_kernel, _minimum_kernel, _fmax_kernel, _fmin_kernel = (
    _no_complex(None, _int64_rows_or(larger, _on_loop_when_large(name, _ufunc(name)) if name in vector_math.BINARY
                                     else _ufunc(name)),
                f"{name} not implemented for complex tensors.")
    for name, larger in (("maximum", True), ("minimum", False), ("fmax", True), ("fmin", False)))


@compiled_binary(MaximumBackward0, ("self", "other"), np.maximum, "maximum", integers="any")
def maximum(input, other, *, out=None):
    """The element-wise maximum of ``input`` and ``other`` (NaN propagates)."""
    _tensor_arg(input, "maximum")
    _other_tensor(other, "maximum")
    return _maybe_out(_binary("maximum", _maximum_kernel, MaximumBackward0, input, other, ("self", "other")), out)


@compiled_binary(MinimumBackward0, ("self", "other"), np.minimum, "minimum", integers="any")
def minimum(input, other, *, out=None):
    """The element-wise minimum of ``input`` and ``other`` (NaN propagates)."""
    _tensor_arg(input, "minimum")
    _other_tensor(other, "minimum")
    return _maybe_out(_binary("minimum", _minimum_kernel, MinimumBackward0, input, other, ("self", "other")), out)


@compiled_binary(FmaxBackward0, ("self", "other"), np.fmax, integers="any")
def fmax(input, other, *, out=None):
    """The element-wise maximum of ``input`` and ``other``, ignoring a NaN where the other
    operand is a number."""
    _tensor_arg(input, "fmax")
    _other_tensor(other, "fmax")
    return _maybe_out(_binary("fmax", _fmax_kernel, FmaxBackward0, input, other, ("self", "other")), out)


@compiled_binary(FminBackward0, ("self", "other"), np.fmin, integers="any")
def fmin(input, other, *, out=None):
    """The element-wise minimum of ``input`` and ``other``, ignoring a NaN where the other
    operand is a number."""
    _tensor_arg(input, "fmin")
    _other_tensor(other, "fmin")
    return _maybe_out(_binary("fmin", _fmin_kernel, FminBackward0, input, other, ("self", "other")), out)


class XlogyBackward0(_BinaryNode):
    __slots__ = ()
    saved_fields = {"self": 0, "other": 1}

    def backward(self, grad):
        a, b = self.saved_tensors
        return (self.reduce(_xlogy_grad_self(xlogy, grad, a, b, 0), 0)
                if self.next_functions[0][0] is not None else None,
                self.reduce(grad * a / b, 1) if self.next_functions[1][0] is not None else None)


class XlogyBackward1(_BinaryNode):
    """xlogy(number, tensor): the number was wrapped as a tensor that needs no gradient."""
    __slots__ = ()

    def backward(self, grad):
        a, b = self.saved_tensors
        return None, self.reduce(grad * a / b, 1)


class XlogyBackward2(_BinaryNode):
    """xlogy(tensor, number)"""
    __slots__ = ()

    def backward(self, grad):
        a, _ = self.saved_tensors
        return self.reduce(_xlogy_grad_self(xlogy, grad, a, self.other_scalar, 0), 0), None


def _xlogy_grad_self(fn, grad, a, b, lowest):
    """torch's gradient of ``fn(a, b)`` (xlogy or xlog1py) for ``a``: ``fn(grad, b)`` (the
    derivative ``log(b)`` at every ``a``, zero included), 0 where ``a`` is 0 and ``b`` is at or
    below ``lowest`` (where the logarithm is not finite)."""
    out = fn(grad, b)
    if isinstance(b, Tensor):
        return out.masked_fill((a == 0) & (b <= lowest), 0)
    return out.masked_fill(a == 0, 0) if b <= lowest else out


def _xlogy_real(x, y):
    """``x * log(y)``, 0 where x is 0 unless y is NaN."""
    xp = namespace_of(x)
    if not hasattr(y, "dtype"):
        y = xp.asarray(y, dtype=x.dtype)
    with np.errstate(divide="ignore", invalid="ignore"):   # (torch warns of neither)
        out = x * xp.log(y)
    return xp.where((x == 0) & ~xp.isnan(y), 0, out).astype(out.dtype, copy=False)


_xlogy_kernel = _no_complex("xlogy_cpu", _on_loop_when_large("xlogy", _xlogy_real))


@compiled_binary(XlogyBackward0, ("self", "other"), loop="xlogy", converts=True)
def xlogy(input, other, *, out=None):
    """``input * log(other)``, taken as zero where ``input`` is zero (and ``other`` not NaN)."""
    node = XlogyBackward0 if isinstance(other, Tensor) else XlogyBackward2
    if is_scalar(input):
        input = _scalar_first(input, other, "xlogy", float_op=True)
        node = XlogyBackward1
    _tensor_arg(input, "xlogy")
    return _maybe_out(_binary("xlogy", _xlogy_kernel, node, input, other, ("self", "other"), float_arrays), out)


# -- in-place forms ------------------------------------------------------------------------

def _inplace_via(op):
    """``self.op_(other)``: the out-of-place op written into self (or through apply_inplace
    when autograd records)."""
    def op_(self, other):
        return apply_inplace(self, op, other)
    op_.__name__ = op.__name__ + "_"
    return op_


for _fn, _names in ((atan2, ("atan2", "arctan2")), (fmod, ("fmod",)), (remainder, ("remainder",)),
                    (floor_divide, ("floor_divide",)), (hypot, ("hypot",)), (copysign, ("copysign",)),
                    (xlogy, ("xlogy",))):
    for _name in _names:
        method(_name)(_fn)
        method(_name + "_")(_inplace_via(_fn))
for _fn in (logaddexp, logaddexp2, maximum, minimum, fmax, fmin):
    method(_fn.__name__)(_fn)


@method("__rfloordiv__")
def _rfloordiv(self, other):
    return floor_divide(other, self)


def _rmod(self, other):
    return remainder(other, self)


method("__ifloordiv__")(Tensor.floor_divide_)
method("__mod__")(remainder)
method("__rmod__")(_rmod)
method("__imod__")(Tensor.remainder_)

__all__ += ["atan2", "arctan2", "fmod", "remainder", "floor_divide", "hypot", "logaddexp",
            "logaddexp2", "copysign", "maximum", "minimum", "fmax", "fmin", "xlogy"]


# -- heaviside, gcd, lcm, ldexp, float_power, nextafter, frexp --------------------------------

def _heaviside_kernel(x, values):
    xp = namespace_of(x)
    return xp.where(x == 0, values, (x > 0).astype(x.dtype))


def heaviside(input, values, *, out=None):
    """The Heaviside step function of ``input``: 0 where negative, 1 where positive and
    ``values`` where zero."""
    if out is None:
        return _heaviside_entry[0](input, values)
    return _python_heaviside(input, values, out=out)


def _python_heaviside(input, values, *, out=None):
    """``heaviside`` in every case its compiled function (``_compiled_functions``) leaves to Python."""
    _tensor_arg(input, "heaviside")
    _tensor_arg(values, "heaviside", 2, "values")
    if input._data.dtype != values._data.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    res = _binary("heaviside", _heaviside_kernel, NotImplementedBackward, input, values)
    return _maybe_out(_not_differentiable(res, "heaviside"), out)


_heaviside_entry = _compiled_functions.register(_python_heaviside, None, kind="heaviside")


def _integer_kernel(ufunc_name, kernel_name):
    def kernel(x, y):
        for dt in (x.dtype, getattr(y, "dtype", x.dtype)):
            if dt.kind not in "iu":
                raise _not_implemented(kernel_name, dt)
        return getattr(namespace_of(x), ufunc_name)(x, y)
    return kernel


_gcd_kernel = _integer_kernel("gcd", "gcd_cpu")
_lcm_kernel = _integer_kernel("lcm", "lcm_cpu")


# (their float tensors: NumPy's gcd and lcm refuse them, and the Python paths raise torch's error)
@compiled_binary(None, (), np.gcd, integers="integers")
def gcd(input, other, *, out=None):
    """The greatest common divisor of ``input`` and ``other`` (integers), element-wise;
    ``gcd(0, 0) = 0``."""
    _tensor_arg(input, "gcd")
    _tensor_arg(other, "gcd", 2, "other")
    return _maybe_out(_binary("gcd", _gcd_kernel, NotImplementedBackward, input, other), out)


@compiled_binary(None, (), np.lcm, integers="integers")
def lcm(input, other, *, out=None):
    """The least common multiple of ``input`` and ``other`` (integers), element-wise."""
    _tensor_arg(input, "lcm")
    _tensor_arg(other, "lcm", 2, "other")
    return _maybe_out(_binary("lcm", _lcm_kernel, NotImplementedBackward, input, other), out)


_LDEXP_ARRAY_DTYPES = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


class LdexpBackward0(Node):
    """ldexp's with an integer exponent: ``grad * 2**other`` (torch's own formula takes 2**other
    in integers, which is 0 for a negative exponent), summed to the input's shape."""
    __slots__ = ("self_shape",)
    jvp = jvp_by_transposition

    def backward(self, grad):
        (other,) = self.saved_tensors
        return sum_to(grad * pow(2.0, other).to(grad.dtype), self.self_shape), None


def ldexp(input, other, *, out=None):
    """``input * 2**other``, element-wise (in the default float dtype for integers)."""
    if input.__class__ is not Tensor or other.__class__ is not Tensor:
        _tensor_arg(input, "ldexp")
        _tensor_arg(other, "ldexp", 2, "other")
    x, exponents = input._data, other._data
    if (x.__class__ is np.ndarray and exponents.__class__ is np.ndarray and x.dtype in _LDEXP_ARRAY_DTYPES
            and (exponents.dtype.kind == "i" or (exponents.dtype.kind == "u" and exponents.dtype.itemsize < 8))):
        # a float tensor scaled by integer powers of two: rounded once, as torch's ldexp
        try:
            large = x.dtype == np.float32 and (x.size >= openmp_kernels.LDEXP_LOOP_MIN_ELEMENTS
                                               or exponents.size >= openmp_kernels.LDEXP_LOOP_MIN_ELEMENTS)
            looped = openmp_kernels.ldexp_float32(x, exponents) if large else None
            result = make(np.ldexp(x, exponents) if looped is None else looped)
        except ValueError:   # (shapes that do not broadcast: the steps below raise torch's error)
            result = None
        if result is not None:
            node = record(LdexpBackward0, (input, other), result)
            if node is not None:
                node.save(other)
                node.self_shape = x.shape
            return result if out is None else _maybe_out(result, out)
    power = pow(2.0, other)
    if input.is_floating_point() and not other.is_floating_point():
        power = power.to(input.dtype)  # exact: a power of two; the result keeps input's dtype
    return _maybe_out(mul(input, power), out)


def float_power(input, exponent, *, out=None):
    """``input ** exponent`` in double precision: both operands become float64 (complex128 if
    either is complex) first."""
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        raise TypeError("float_power(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if (out is None and input.__class__ is Tensor and exponent.__class__ is Tensor
            and input._data.__class__ is np.ndarray and exponent._data.__class__ is np.ndarray
            and input._data.dtype.kind in "biuf" and exponent._data.dtype.kind in "biuf" and not forward_mode.active
            and not (grad_state.grad_enabled and (input._requires_grad or exponent._requires_grad))):
        # (nothing records: the steps below on the arrays, NumPy's power of two float64 arrays)
        try:
            return make(np.power(input._data.astype(np.float64, copy=False),
                                 exponent._data.astype(np.float64, copy=False)))
        except ValueError:   # (shapes that do not broadcast: the steps below raise torch's error)
            pass
    if (out is None and input.__class__ is Tensor and exponent.__class__ in (int, float)
            and input._data.__class__ is np.ndarray and input._data.dtype.kind in "biuf" and not forward_mode.active
            and not (grad_state.grad_enabled and input._requires_grad)):
        # (nothing records: the steps below, the conversion to float64 on the array)
        return pow(make(input._data.astype(np.float64, copy=False)), exponent)
    complex_ = any(isinstance(t, Tensor) and t.is_complex() or isinstance(t, complex)
                   for t in (input, exponent))
    dtype = _dtype.complex128 if complex_ else _dtype.float64
    cast = [t.to(dtype) if isinstance(t, Tensor) else t for t in (input, exponent)]
    if out is not None and out.dtype != dtype:
        raise RuntimeError(f"the base given to float_power_ has dtype {out.dtype} but the "
                           f"operation's result requires dtype {dtype}")
    return _maybe_out(pow(*cast), out)


_nextafter_kernel = _no_complex("nextafter_cpu", _on_loop_when_large(
    "nextafter", _float_only_kernel("nextafter", "nextafter_cpu")))


class NextafterBackward0(_BinaryNode):
    """torch's gradient: ``grad`` for ``input`` where it differs from ``other`` (0 where they
    are equal), zero for ``other``."""
    __slots__ = ()
    saved_fields = {"self": 0, "other": 1}

    def backward(self, grad):
        from .creation import zeros_like
        a, b = self.saved_tensors
        return (self.reduce(grad * (a != b), 0) if self.next_functions[0][0] is not None else None,
                self.reduce(zeros_like(grad), 1) if self.next_functions[1][0] is not None else None)


@compiled_binary(NextafterBackward0, ("self", "other"), np.nextafter, "nextafter")
def nextafter(input, other, *, out=None):
    """The next floating-point value after ``input`` towards ``other``, element-wise."""
    _tensor_arg(input, "nextafter")
    _tensor_arg(other, "nextafter", 2, "other")
    return _maybe_out(_binary("nextafter", _nextafter_kernel, NextafterBackward0, input, other,
                              ("self", "other")), out)


class FrexpBackward0(Node):
    __slots__ = ()
    saved_fields = {"exponent": 0}
    jvp = jvp_by_transposition

    def backward(self, grad, _exponent_grad=None):
        (exponent,) = self.saved_tensors
        # in float64 (2**exponent may not fit grad's dtype), rounded once to it
        return ((grad / pow(2.0, exponent.double())).to(grad.dtype),)

    def backward_arrays(self, grad):
        """For float32: the gradient scaled by 2**-exponent in one ``ldexp``, which rounds
        once, as the quotient in float64 (exact there) rounded to float32 does."""
        gd = grad._data
        exponent = self.saved_tensors[0]._data
        if type(gd) is not np.ndarray or gd.dtype != np.float32 or type(exponent) is not np.ndarray:
            return None
        return (make(np.ldexp(gd, np.negative(exponent))),)


def frexp(input, *, out=None):
    """Decomposes ``input`` into ``mantissa * 2**exponent``, the mantissa in (-1, 1) (0 for 0)
    and the exponent an int32 tensor: ``(mantissa, exponent)``."""
    return _frexp_entry[0](input) if out is None else _python_frexp(input, out=out)


def _python_frexp(input, *, out=None):
    """``frexp`` in every case its compiled function (``_compiled_functions``) leaves to Python."""
    from ..return_types import frexp as frexp_type
    _tensor_arg(input, "frexp")
    data = input._data
    if data.dtype.kind not in "f" and str(data.dtype) != "bfloat16":
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    mantissa, exponent = namespace_of(data).frexp(data)
    mantissa, exponent = make(mantissa.astype(data.dtype, copy=False)), make(exponent.astype("int32"))
    node = record(FrexpBackward0, (input,), mantissa, None)
    if node is not None:
        node.save(exponent)
    return _maybe_out(frexp_type(mantissa, exponent), None if out is None else tuple(out))


_frexp_entry = _compiled_functions.register(_python_frexp, FrexpBackward0, kind="frexp",
                                            specifics=(return_types.frexp,))


@method()
def float_power_(self, exponent):
    """In-place :func:`float_power`: ``self`` must already be float64 (complex128 for a
    complex operand)."""
    complex_ = self.is_complex() or isinstance(exponent, complex) or (
        isinstance(exponent, Tensor) and exponent.is_complex())
    dtype = _dtype.complex128 if complex_ else _dtype.float64
    if self.dtype != dtype:
        raise RuntimeError(f"the base given to float_power_ has dtype {_type_word(self._data.dtype)} "
                           f"but the operation's result requires dtype {_type_word(dtype.np)}")
    return apply_inplace(self, float_power, exponent)


for _fn in (heaviside, gcd, lcm, ldexp, float_power, nextafter):
    method(_fn.__name__)(_fn)
    if _fn is not float_power:
        method(_fn.__name__ + "_")(_inplace_via(_fn))
method("frexp")(frexp)

__all__ += ["heaviside", "gcd", "lcm", "ldexp", "float_power", "nextafter", "frexp"]
