"""Activation layers: each wraps the function of the same name in ``nn.functional``."""
from .. import functional as F
from ..parameter import Parameter
from .module import Module

__all__ = [
    "ReLU", "ReLU6", "LeakyReLU", "RReLU", "PReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish",
    "Softplus", "Softsign", "Sigmoid", "Hardsigmoid", "Hardswish", "Hardtanh", "Tanh",
    "Tanhshrink", "Softshrink", "Hardshrink", "Threshold", "LogSigmoid", "Softmax",
    "LogSoftmax", "Softmin", "Softmax2d", "GLU",
]


def _inplace_alone(inplace):
    return "inplace=True" if inplace else ""


def _inplace_after(inplace):
    return ", inplace=True" if inplace else ""


class _Inplace(Module):
    """An activation with only the ``inplace`` option."""

    _fn = None

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return type(self)._fn(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_alone(self.inplace)


class _Plain(Module):
    """An activation without options."""

    _fn = None

    def forward(self, input):
        return type(self)._fn(input)


class ReLU(_Inplace):
    """Applies ``max(0, x)`` element-wise."""
    _fn = F.relu


class SELU(_Inplace):
    """Applies the scaled exponential linear unit element-wise."""
    _fn = F.selu


class SiLU(_Inplace):
    """Applies ``x * sigmoid(x)`` element-wise."""
    _fn = F.silu


class Mish(_Inplace):
    """Applies ``x * tanh(softplus(x))`` element-wise."""
    _fn = F.mish


class Hardsigmoid(_Inplace):
    """Applies the piecewise linear sigmoid element-wise."""
    _fn = F.hardsigmoid


class Hardswish(_Inplace):
    """Applies ``x * hardsigmoid(x)`` element-wise."""
    _fn = F.hardswish


class Softsign(_Plain):
    """Applies ``x / (1 + |x|)`` element-wise."""
    _fn = F.softsign


class Sigmoid(_Plain):
    """Applies ``1 / (1 + exp(-x))`` element-wise."""
    _fn = F.sigmoid


class Tanh(_Plain):
    """Applies the hyperbolic tangent element-wise."""
    _fn = F.tanh


class Tanhshrink(_Plain):
    """Applies ``x - tanh(x)`` element-wise."""
    _fn = F.tanhshrink


class LogSigmoid(_Plain):
    """Applies ``log(sigmoid(x))`` element-wise."""
    _fn = F.logsigmoid


class Hardtanh(Module):
    """Applies ``clamp(x, min_val, max_val)`` element-wise."""

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None, max_value=None):
        super().__init__()
        if min_value is not None:
            min_val = min_value
        if max_value is not None:
            max_val = max_value
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace
        if self.max_val <= self.min_val:
            raise AssertionError("max_val must be greater than min_val")

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace_after(self.inplace)}"


class ReLU6(Hardtanh):
    """Applies ``min(max(0, x), 6)`` element-wise."""

    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return _inplace_alone(self.inplace)


class LeakyReLU(Module):
    """Applies ``max(0, x) + negative_slope * min(0, x)`` element-wise."""

    def __init__(self, negative_slope=1e-2, inplace=False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}{_inplace_after(self.inplace)}"


class RReLU(Module):
    """Applies the randomized leaky ReLU: negative inputs are scaled by a slope drawn uniformly
    from ``[lower, upper]`` in training, by ``(lower + upper) / 2`` in evaluation."""

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}{_inplace_after(self.inplace)}"


class ELU(Module):
    """Applies ``x if x > 0 else alpha * (exp(x) - 1)`` element-wise."""

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}{_inplace_after(self.inplace)}"


class CELU(ELU):
    """Applies ``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`` element-wise."""

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)


class GELU(Module):
    """Applies the Gaussian Error Linear Unit (``approximate='tanh'`` for its tanh form)."""

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={repr(self.approximate)}"


class Softplus(Module):
    """Applies ``1/beta * log(1 + exp(beta * x))`` element-wise."""

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class Softshrink(Module):
    """Applies the soft shrinkage function element-wise."""

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.softshrink(input, self.lambd)

    def extra_repr(self):
        return str(self.lambd)


class Hardshrink(Softshrink):
    """Applies the hard shrinkage function element-wise."""

    def forward(self, input):
        return F.hardshrink(input, self.lambd)


class Threshold(Module):
    """Replaces each element not greater than ``threshold`` with ``value``."""

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}{_inplace_after(self.inplace)}"


class PReLU(Module):
    """Applies ``max(0, x) + a * min(0, x)`` with a learnable ``a`` (one, or one per
    channel)."""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        from ...ops.creation import empty
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        from .. import init
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class _WithDim(Module):
    _fn = None

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        super().__setstate__(state)
        self.__dict__.setdefault("dim", None)

    def forward(self, input):
        return type(self)._fn(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmax(_WithDim):
    """Applies softmax along ``dim``."""
    _fn = F.softmax


class Softmax2d(Module):
    """Applies softmax over the channels of each spatial location: the input is (N, C, H, W)
    or (C, H, W)."""

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
        return F.softmax(input, -3)


class LogSoftmax(_WithDim):
    """Applies ``log(softmax(x))`` along ``dim``."""
    _fn = F.log_softmax


class Softmin(_WithDim):
    """Applies ``softmax(-x)`` along ``dim``."""
    _fn = F.softmin


class GLU(Module):
    """The gated linear unit ``a * sigmoid(b)`` over the halves of ``dim``."""

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"
