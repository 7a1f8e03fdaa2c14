"""Pointwise ops: arithmetic with broadcasting, unary math, comparisons, logical and bitwise ops.

Each op's forward (on backend arrays) and backward (in ember ops, so higher-order gradients
work) sit together. Unary math ops are declared in one table line each with ``_unary``.
"""
import math

from .. import _dtype
from ._common import (
    Node, Tensor, arrays_for, grad_state, is_scalar, make, namespace_of, record,
)

__all__ = [
    "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "neg",
    "negative", "pow", "rsub",
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


def _binary(op_name, ufunc, node_cls, a, b, save):
    """Run ``ufunc`` on two operands (a a Tensor, b a Tensor or number) with torch's promotion
    and broadcasting; record ``node_cls`` and save ``save`` ('ab', 'a', 'b', 'out', '')."""
    try:
        ad, bd = arrays_for(a, b)
        data = ufunc(ad, bd)
    except ValueError:
        _broadcast_check(op_name, a, b)
        raise
    out = make(data)
    b_tensor = b if isinstance(b, Tensor) else None
    if (a._requires_grad or (b_tensor is not None and b_tensor._requires_grad)) and grad_state.grad_enabled:
        node = node_cls((a, b_tensor))
        out._requires_grad = True
        out.grad_fn = node
        node.meta = (a, b)
        if save:
            node.save(*[{"a": a, "b": b_tensor, "o": out}[c] for c in save])
    return out


class _BinaryNode(Node):
    """Binary op node: ``meta`` holds the operands' shapes and dtypes; b may be a number."""
    __slots__ = ()

    @property
    def meta(self):
        return self._meta

    @meta.setter
    def meta(self, ab):
        a, b = ab
        self._meta = (a._data.shape, a._data.dtype,
                      b._data.shape if isinstance(b, Tensor) else None,
                      b._data.dtype if isinstance(b, Tensor) else None,
                      None if isinstance(b, Tensor) else b)

    def reduce(self, grad, which):
        """Reduce ``grad`` to input ``which``'s shape and dtype."""
        meta = self._meta
        shape, dtype = (meta[0], meta[1]) if which == 0 else (meta[2], meta[3])
        if grad._data.shape != shape:
            from ._common import sum_to
            grad = sum_to(grad, shape)
        if grad._data.dtype != dtype:
            grad = grad.to(_dtype.from_numpy_dtype(dtype))
        return grad

    def needs(self, i):
        return self.next_functions[i][0] is not None

    @property
    def scalar(self):
        return self._meta[4]


# -- add / sub ------------------------------------------------------------------------------

class AddBackward0(_BinaryNode):
    __slots__ = ()

    def backward(self, grad):
        alpha = self.alpha
        ga = self.reduce(grad, 0) if self.needs(0) else None
        gb = None
        if self.needs(1):
            gb = self.reduce(grad if alpha == 1 else grad * alpha, 1)
        return ga, gb


class SubBackward0(_BinaryNode):
    __slots__ = ()

    def backward(self, grad):
        alpha = self.alpha
        ga = self.reduce(grad, 0) if self.needs(0) else None
        gb = self.reduce(grad * -alpha if alpha != 1 else -grad, 1) if self.needs(1) else None
        return ga, gb


def _check_alpha(b, alpha):
    if b._data.dtype.kind in "biu" and isinstance(alpha, float):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")


def add(input, other, *, alpha=1, out=None):
    """Adds ``other``, scaled by ``alpha``, to ``input``: out = input + alpha * other."""
    _tensor_arg(input, "add")
    if alpha == 1:
        res = _binary("add", namespace_of(input._data).add, AddBackward0, input, other, "")
    elif isinstance(other, Tensor):
        _check_alpha(other, alpha)
        res = _binary("add", lambda x, y: namespace_of(x).add(x, y * alpha), AddBackward0, input, other, "")
    else:
        res = _binary("add", namespace_of(input._data).add, AddBackward0, input, other * alpha, "")
    if res.grad_fn is not None:
        res.grad_fn.alpha = alpha if isinstance(other, Tensor) else 1
    return _maybe_out(res, out)


def sub(input, other, *, alpha=1, out=None):
    """Subtracts ``other``, scaled by ``alpha``, from ``input``."""
    _tensor_arg(input, "sub")
    if input._data.dtype.kind == "b" or (isinstance(other, Tensor) and other._data.dtype.kind == "b"):
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.")
    if alpha == 1:
        res = _binary("sub", namespace_of(input._data).subtract, SubBackward0, input, other, "")
    elif isinstance(other, Tensor):
        _check_alpha(other, alpha)
        res = _binary("sub", lambda x, y: namespace_of(x).subtract(x, y * alpha), SubBackward0, input, other, "")
    else:
        res = _binary("sub", namespace_of(input._data).subtract, SubBackward0, input, other * alpha, "")
    if res.grad_fn is not None:
        res.grad_fn.alpha = alpha if isinstance(other, Tensor) else 1
    return _maybe_out(res, out)


subtract = sub


def rsub(input, other, *, alpha=1):
    """other - alpha * input."""
    return sub(other if isinstance(other, Tensor) else _full_like(input, other), input, alpha=alpha) \
        if isinstance(other, Tensor) else add(neg(input) if alpha == 1 else mul(input, -alpha), other)


def _full_like(t, value):
    return make(namespace_of(t._data).full((), value))


# -- mul / div ------------------------------------------------------------------------------

class MulBackward0(_BinaryNode):
    __slots__ = ()

    def backward(self, grad):
        a, b = self.saved_tensors
        if b is None:
            b = self.scalar
        ga = self.reduce(grad * b, 0) if self.needs(0) else None
        gb = self.reduce(grad * a, 1) if self.needs(1) else None
        return ga, gb


def mul(input, other, *, out=None):
    """Multiplies ``input`` by ``other``, with broadcasting and type promotion."""
    _tensor_arg(input, "mul")
    res = _binary("mul", namespace_of(input._data).multiply, MulBackward0, input, other, "ab")
    return _maybe_out(res, out)


multiply = mul


class DivBackward0(_BinaryNode):
    __slots__ = ()

    def backward(self, grad):
        a, b, out = self.saved_tensors
        if b is None:
            return self.reduce(grad / self.scalar, 0), None
        ga = self.reduce(grad / b, 0) if self.needs(0) else None
        gb = self.reduce(-grad * out / b, 1) if self.needs(1) else None
        return ga, gb


class DivBackward1(_BinaryNode):
    """Division with a rounding mode: piecewise constant, so the gradient is zero."""
    __slots__ = ()

    def backward(self, grad):
        zero = grad * 0
        return (self.reduce(zero, 0) if self.needs(0) else None,
                self.reduce(zero, 1) if self.needs(1) else None)


def _true_divide(x, y):
    xp = namespace_of(x)
    if x.dtype.kind in "biu" and (not hasattr(y, "dtype") or y.dtype.kind in "biu"):
        d = _dtype.get_default_dtype().np
        return xp.true_divide(x.astype(d), y.astype(d) if hasattr(y, "astype") else y)
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


def _floor_divide(x, y):
    xp = namespace_of(x)
    if x.dtype.kind in "iu":
        _check_int_zero(y)
        return xp.floor_divide(x, y)
    return xp.floor(xp.true_divide(x, y)).astype(x.dtype, copy=False)


def _check_int_zero(y):
    xp = namespace_of(y) if hasattr(y, "shape") and not isinstance(y, (int, float)) else None
    if (xp is not None and bool((y == 0).any())) or (xp is None and y == 0):
        raise RuntimeError("ZeroDivisionError")


def div(input, other, *, rounding_mode=None, out=None):
    """Divides ``input`` by ``other``; ``rounding_mode`` None (true division), 'trunc' or 'floor'."""
    _tensor_arg(input, "div")
    if rounding_mode is None:
        res = _binary("div", _true_divide, DivBackward0, input, other, "abo")
    elif rounding_mode == "trunc":
        res = _binary("div", _trunc_divide, DivBackward1, input, other, "")
    elif rounding_mode == "floor":
        res = _binary("div", _floor_divide, DivBackward1, input, other, "")
    else:
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'")
    return _maybe_out(res, out)


divide = div


def true_divide(input, other, *, out=None):
    return div(input, other, out=out)


# -- neg ------------------------------------------------------------------------------------

class NegBackward0(Node):
    __slots__ = ()

    def backward(self, grad):
        return (-grad,)


def neg(input, *, out=None):
    """Returns -input."""
    _tensor_arg(input, "neg")
    if input._data.dtype.kind == "b":
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are "
                           "trying to invert a mask, use the `~` or `logical_not()` operator instead.")
    res = make(namespace_of(input._data).negative(input._data))
    record(NegBackward0, (input,), res)
    return _maybe_out(res, out)


negative = neg


# -- pow ------------------------------------------------------------------------------------

class PowBackward0(Node):
    """pow(tensor, number)"""
    __slots__ = ()

    def backward(self, grad):
        (a,) = self.saved_tensors
        p = self.exponent
        if p == 0:
            return (grad * 0,)
        return (grad * p * a.pow(p - 1),)


class PowBackward1(_BinaryNode):
    """pow(tensor, tensor)"""
    __slots__ = ()

    def backward(self, grad):
        a, b, out = self.saved_tensors
        ga = gb = None
        if self.needs(0):
            ga = self.reduce(grad * b * a.pow(b - 1), 0)
        if self.needs(1):
            # d/db a**b = a**b * log(a), taken as 0 where a == 0 and b >= 0 (torch's convention)
            from .ternary import where
            log_a = a.log()
            mask = (a == 0) & (b >= 0)
            gb = self.reduce(grad * where(mask, 0.0, out * log_a), 1)
        return ga, gb


class PowBackward2(Node):
    """pow(number, tensor)"""
    __slots__ = ()

    def backward(self, grad):
        from .ternary import where
        exponent, out = self.saved_tensors
        if self.base == 0:
            # torch's convention: 0 where the exponent is >= 0
            return (where(exponent >= 0, grad * 0, grad * out * -math.inf),)
        return (grad * out * math.log(self.base),)


def _pow_arrays(x, e):
    xp = namespace_of(x)
    if x.dtype.kind in "iu" and is_scalar(e) and not isinstance(e, float) and e < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return xp.power(x, e)


def pow(input, exponent, *, out=None):
    """Takes the power of each element in ``input`` with ``exponent``."""
    if is_scalar(input):
        _tensor_arg(exponent, "pow", 2, "exponent")
        base = input
        res = _binary("pow", lambda e, b: namespace_of(e).power(b, e), _NoGrad, exponent, base, "")
        if exponent._requires_grad and grad_state.grad_enabled:
            res.grad_fn = None
            node = PowBackward2((exponent,))
            node.base = base
            res._requires_grad = True
            res.grad_fn = node
            node.save(exponent, res)
        return _maybe_out(res, out)
    _tensor_arg(input, "pow")
    if isinstance(exponent, Tensor):
        res = _binary("pow", _pow_arrays, PowBackward1, input, exponent, "abo")
        return _maybe_out(res, out)
    ad, e = arrays_for(input, exponent)
    res = make(_pow_arrays(ad, e))
    node = record(PowBackward0, (input,), res)
    if node is not None:
        node.exponent = exponent
        node.save(input)
    return _maybe_out(res, out)


class _NoGrad(_BinaryNode):
    __slots__ = ()

    def backward(self, grad):
        return None, None


def _maybe_out(res, out):
    if out is None:
        return res
    if not isinstance(out, Tensor):
        raise TypeError(f"argument 'out' must be Tensor, not {type(out).__name__}")
    if res._requires_grad and grad_state.grad_enabled:
        raise RuntimeError("functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad.")
    xp = namespace_of(out._data)
    if out._data.shape != res._data.shape:
        if out._data.size != 0 and out._data.ndim:
            raise RuntimeError(f"out= tensor has shape {list(out._data.shape)}, expected {list(res._data.shape)}")
        out._data = xp.empty_like(res._data, dtype=out._data.dtype)
    xp.copyto(out._data, res._data, casting="unsafe")
    out._version_counter[0] += 1
    return out



# -- in-place forms and operators ---------------------------------------------------------

def _inplace_binary(self, other, ufunc_name, op, **kwargs):
    """``self op= other`` in place: straight into self's memory when autograd is not
    recording, else through the out-of-place op (see apply_inplace)."""
    from ._common import apply_inplace, check_inplace, any_requires_grad, _BY_NP, _type_word
    if self._requires_grad or (isinstance(other, Tensor) and other._requires_grad):
        if grad_state.grad_enabled:
            return apply_inplace(self, op, other, **kwargs)
    check_inplace(self)
    sd = self._data
    ad, bd = arrays_for(self, other)
    if ad.dtype != sd.dtype:
        from .. import _dtype as dt
        if not dt.can_cast(_BY_NP[ad.dtype], _BY_NP[sd.dtype]):
            raise RuntimeError(f"result type {_type_word(ad.dtype)} can't be cast to the desired "
                               f"output type {_type_word(sd.dtype)}")
    alpha = kwargs.get("alpha", 1)
    if alpha != 1:
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
    self._version_counter[0] += 1
    return self


def add_(self, other, *, alpha=1):
    return _inplace_binary(self, other, "add", add, alpha=alpha)


def sub_(self, other, *, alpha=1):
    return _inplace_binary(self, other, "subtract", sub, alpha=alpha)


def mul_(self, other):
    return _inplace_binary(self, other, "multiply", mul)


def div_(self, other, *, rounding_mode=None):
    if rounding_mode is not None:
        from ._common import apply_inplace
        return apply_inplace(self, div, other, rounding_mode=rounding_mode)
    return _inplace_binary(self, other, "true_divide", div)


def pow_(self, exponent):
    from ._common import apply_inplace
    return apply_inplace(self, pow, exponent)


def neg_(self):
    from ._common import apply_inplace
    return apply_inplace(self, neg)


Tensor.add, Tensor.add_ = add, add_
Tensor.sub, Tensor.sub_ = sub, sub_
Tensor.subtract, Tensor.subtract_ = sub, sub_
Tensor.mul, Tensor.mul_ = mul, mul_
Tensor.multiply, Tensor.multiply_ = mul, mul_
Tensor.div, Tensor.div_ = div, div_
Tensor.divide, Tensor.divide_ = div, div_
Tensor.true_divide, Tensor.true_divide_ = true_divide, div_
Tensor.neg, Tensor.neg_ = neg, neg_
Tensor.negative = neg
Tensor.pow, Tensor.pow_ = pow, pow_
Tensor.rsub = rsub

Tensor.__add__ = Tensor.__radd__ = add
Tensor.__iadd__ = add_
Tensor.__sub__ = sub
Tensor.__isub__ = sub_
Tensor.__mul__ = Tensor.__rmul__ = mul
Tensor.__imul__ = mul_
Tensor.__truediv__ = div
Tensor.__itruediv__ = div_
Tensor.__neg__ = neg
Tensor.__pow__ = pow
Tensor.__ipow__ = pow_


def _rsub_op(self, other):
    return rsub(self, other)


def _rtruediv(self, other):
    if isinstance(other, Tensor):
        return div(other, self)
    from .unary import reciprocal
    return mul(reciprocal(self), other)


def _rpow(self, other):
    return pow(other, self)


def _pos(self):
    return self


Tensor.__rsub__ = _rsub_op
Tensor.__rtruediv__ = _rtruediv
Tensor.__rpow__ = _rpow
Tensor.__pos__ = _pos
