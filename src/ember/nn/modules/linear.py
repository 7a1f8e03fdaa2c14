"""Affine layers: Identity, Linear, Bilinear, LazyLinear."""
import math

from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Identity", "Linear", "Bilinear", "LazyLinear"]


def _empty(*shape, device=None, dtype=None):
    from ...ops.creation import empty
    return empty(*shape, device=device, dtype=dtype)


def _register_bias(module, bias, size, device, dtype):
    """Give ``module`` a ``bias`` parameter of ``size`` elements, or register it as None."""
    if bias:
        module.bias = Parameter(_empty(size, device=device, dtype=dtype))
    else:
        module.register_parameter("bias", None)


class Identity(Module):
    """A placeholder identity operator that is argument-insensitive."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """Applies an affine linear transformation ``y = x A^T + b``; ``weight`` is (out, in)
    and, with ``bias``, ``bias`` is (out,), both initialized from U(-1/sqrt(in), 1/sqrt(in))."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(_empty(out_features, in_features, device=device, dtype=dtype))
        _register_bias(self, bias, out_features, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        """Kaiming-uniform weights with ``a = sqrt(5)``; bias uniform in +-1/sqrt(fan_in)."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Bilinear(Module):
    """Applies a bilinear transformation ``y = x1^T A x2 + b``."""

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None,
                 dtype=None):
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(_empty(out_features, in1_features, in2_features, device=device,
                                       dtype=dtype))
        _register_bias(self, bias, out_features, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        """Weight and bias uniform in +-1/sqrt(in1_features)."""
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class UninitializedParameter(Parameter):
    """A parameter whose shape is not known yet (of a lazy module); ``materialize`` gives it
    one."""

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return super().__new__(cls, _empty(0, device=device, dtype=dtype), requires_grad)

    def materialize(self, shape):
        self._data = _empty(*shape, dtype=self.dtype)._data
        self.__class__ = Parameter

    def __repr__(self):
        return "<UninitializedParameter>"


class LazyLinear(Linear):
    """A :class:`Linear` whose ``in_features`` is inferred from the first input; it then
    becomes a plain :class:`Linear`."""

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        Module.__init__(self)
        self.in_features = 0
        self.out_features = out_features
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        else:
            self.register_parameter("bias", None)
        self._lazy_hook = self.register_forward_pre_hook(LazyLinear._infer_parameters)

    def reset_parameters(self):
        if self.in_features != 0:
            super().reset_parameters()

    def has_uninitialized_params(self):
        return any(isinstance(p, UninitializedParameter) for p in self._parameters.values())

    def _infer_parameters(self, args):
        from ...autograd.grad_mode import no_grad
        self.in_features = args[0].shape[-1]
        with no_grad():
            self.weight.materialize((self.out_features, self.in_features))
            if self.bias is not None:
                self.bias.materialize((self.out_features,))
            self.reset_parameters()
        self._lazy_hook.remove()
        del self._lazy_hook
        self.__class__ = self.cls_to_become
