"""``Variable``: the wrapper older programs put around tensors. Tensors do everything it did,
so ``Variable(t)`` gives a tensor and every tensor is an instance of ``Variable``."""
import warnings

__all__ = ["Variable", "VariableMeta"]


class VariableMeta(type):
    """``isinstance(t, Variable)`` is True for every Tensor."""

    def __instancecheck__(cls, other):
        from .._tensor import Tensor
        return isinstance(other, Tensor)


class Variable(metaclass=VariableMeta):
    """``Variable(data, requires_grad=False)``: a tensor sharing ``data``'s memory, without its
    history, requiring grad if asked (``volatile`` has no effect any more)."""

    def __new__(cls, data=None, requires_grad=False, volatile=False, _grad_fn=None):
        from .._tensor import Tensor
        from ..ops.creation import empty
        from .graph import Node
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with ember.no_grad():` "
                          "instead.", stacklevel=2)
        if _grad_fn is not None:
            if not isinstance(_grad_fn, Node):
                raise TypeError("_grad_fn has to be a Function object or None, but got "
                                f"{type(_grad_fn).__name__}")
            raise NotImplementedError("Variable(..., _grad_fn=node): attaching a tensor to an "
                                      "existing graph node is not supported")
        if data is None:
            data = empty(0)
        elif not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        if requires_grad and not (data.is_floating_point() or data.is_complex()):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        out = data.detach()
        if requires_grad:
            out.requires_grad_(True)
        return out
