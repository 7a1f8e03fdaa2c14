"""``ember.nn.grad``: the gradients of a convolution with respect to its input and to its
weight, given the gradient of its output."""
from ..autograd import grad as _grad
from ..autograd.grad_mode import enable_grad
from ..ops.creation import zeros
from . import functional as F

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input",
           "conv3d_weight"]


def _input_grad(conv, input_size, weight, grad_output, stride, padding, dilation, groups):
    x = zeros(tuple(input_size), dtype=grad_output.dtype, device=grad_output.device,
              requires_grad=True)
    with enable_grad():
        out = conv(x, weight, None, stride, padding, dilation, groups)
        create_graph = weight.requires_grad or grad_output.requires_grad
        return _grad(out, x, grad_output, create_graph=create_graph)[0]


def _weight_grad(conv, input, weight_size, grad_output, stride, padding, dilation, groups):
    w = zeros(tuple(weight_size), dtype=grad_output.dtype, device=grad_output.device,
              requires_grad=True)
    with enable_grad():
        out = conv(input, w, None, stride, padding, dilation, groups)
        create_graph = input.requires_grad or grad_output.requires_grad
        return _grad(out, w, grad_output, create_graph=create_graph)[0]


def conv1d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv1d with respect to its input (of shape ``input_size``)."""
    return _input_grad(F.conv1d, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv1d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv1d with respect to its weight (of shape ``weight_size``)."""
    return _weight_grad(F.conv1d, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv2d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv2d with respect to its input (of shape ``input_size``)."""
    return _input_grad(F.conv2d, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv2d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv2d with respect to its weight (of shape ``weight_size``)."""
    return _weight_grad(F.conv2d, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv3d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv3d with respect to its input (of shape ``input_size``)."""
    return _input_grad(F.conv3d, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv3d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv3d with respect to its weight (of shape ``weight_size``)."""
    return _weight_grad(F.conv3d, input, weight_size, grad_output, stride, padding, dilation, groups)
