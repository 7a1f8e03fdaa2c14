"""Pointwise ops of three operands: where (more join them: lerp, addcmul, addcdiv, clamp)."""
from .. import _dtype
from .._dtype import result_type_of
from ._common import Node, Tensor, grad_state, is_scalar, make, namespace_of, sum_to

__all__ = ["where"]


class WhereBackward0(Node):
    __slots__ = ()

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
    if input is None and other is None:
        return condition.nonzero(as_tuple=True)
    if not isinstance(condition, Tensor):
        raise TypeError(f"where(): argument 'condition' must be Tensor, not {type(condition).__name__}")
    if condition._data.dtype.kind != "b":
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{condition.dtype.name.capitalize()}")
    ref = input if isinstance(input, Tensor) else other
    dt = result_type_of(input, other).np
    xp = namespace_of(condition._data)
    a = input._data.astype(dt, copy=False) if isinstance(input, Tensor) else input
    b = other._data.astype(dt, copy=False) if isinstance(other, Tensor) else other
    try:
        data = xp.where(condition._data, a, b)
    except ValueError:
        shapes = [list(t._data.shape) for t in (condition, input, other) if isinstance(t, Tensor)]
        raise RuntimeError(f"where(): shapes {shapes} cannot be broadcast together") from None
    if data.dtype != dt:
        data = data.astype(dt)
    res = make(data)
    ta = input if isinstance(input, Tensor) else None
    tb = other if isinstance(other, Tensor) else None
    if grad_state.grad_enabled and ((ta is not None and ta._requires_grad) or (tb is not None and tb._requires_grad)):
        node = WhereBackward0((condition, ta, tb))
        res._requires_grad = True
        res.grad_fn = node
        node.shapes = (a.shape if ta is not None else None, b.shape if tb is not None else None)
        node.dtypes = (ta._data.dtype if ta is not None else None, tb._data.dtype if tb is not None else None)
        node.save(condition)
    if out is not None:
        from .pointwise import _maybe_out
        return _maybe_out(res, out)
    return res


def _where_method(self, condition, y):
    return where(condition, self, y)


Tensor.where = _where_method
