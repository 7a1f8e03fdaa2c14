"""Convolutions: conv1d/2d/3d and conv_transpose1d/2d/3d.

Three array kernels (``_backend.convolution``: oneDNN's primitives where they apply, else
NumPy's GEMM lowering) do the work: the convolution, its adjoint in the input (the transposed
convolution) and its gradient in the weight. Each is an ember op whose backward is written
with the other two, so the set is closed under differentiation and gradients of any order
work. A backward that builds no graph (no ``create_graph``) takes both gradients from one
kernel call (``convolution.backward``, ``convolution.forward_and_weight_grad``).
"""
import numbers
from typing import NamedTuple

from ... import _flop_hook
from ..._backend import convolution
from ..._blocked_tensor import blocked_or_data, make_blocked
from ...ops._common import Node, Tensor, make, record
from ...amp.policy import autocast_policy
from ...autograd._dual import jvp_by_transposition
from ...autograd.saved_fields import constant
from ..._torch_function import override_or_raise

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d", "conv_tbc"]


class _Geometry(NamedTuple):
    """Stride, per-side padding, dilation and groups of a convolution (a tuple of literals, so
    that a compiled backward graph can hold it as a constant)."""
    stride: tuple
    pads: tuple
    dilation: tuple
    groups: int

    def args(self):
        return tuple(self)


# -- the three ops ------------------------------------------------------------------------

def _output_padding(node):
    g, w = node.saved_tensors
    geom = node.geom
    return tuple(size - transposed_output_size(g.shape[2 + i], w.shape[2 + i], geom.stride[i],
                                               geom.pads[i][0], geom.dilation[i], 0)
                 for i, size in enumerate(node.out_spatial))


def _conv_fields(transposed):
    """torch's saved fields of its convolution node (padding: the low side of each dim)."""
    return {"input": 0, "weight": 1, "stride": lambda node: node.geom.stride,
            "padding": lambda node: tuple(lo for lo, _ in node.geom.pads),
            "dilation": lambda node: node.geom.dilation, "groups": lambda node: node.geom.groups,
            "transposed": constant(transposed),
            "output_padding": _output_padding if transposed else
            lambda node: (0,) * len(node.geom.stride),
            "bias_sym_sizes_opt": lambda node: (node.bias_size,)}


class ConvolutionBackward0(Node):
    """Backward of the convolution ``y = conv(x, w) + b``."""
    __slots__ = ()
    saved_fields = _conv_fields(False)
    jvp = jvp_by_transposition

    def backward(self, grad):
        x, w = self.saved_tensors
        need_x, need_w, need_b = (fn is not None for fn, _ in self.next_functions)
        gx = _conv_transpose(grad, w, None, self.geom, x.shape[2:]) if need_x else None
        gw = _conv_weight(x, grad, self.geom, w.shape[2:]) if need_w else None
        return gx, gw, _bias_grad(grad) if need_b else None

    def backward_arrays(self, grad):
        """The input's, the weight's and the bias's gradients from one kernel call (the
        weight's and the bias's alone for an input without gradient, a network's first
        layer)."""
        x, w = self.saved_tensors
        need_x, need_w, need_b = (fn is not None for fn, _ in self.next_functions)
        if not need_w:
            return None
        if not need_x:
            found = convolution.weight_grad(blocked_or_data(x), blocked_or_data(grad), w.shape[2:],
                                            *self.geom.args(), None, need_b)
            return (None, make(found[0]), make(found[1])) if need_b else (None, make(found), None)
        found = convolution.backward(blocked_or_data(x), blocked_or_data(grad), w._data,
                                     *self.geom.args(), True, need_b)
        return make_blocked(found[0]), make(found[1]), make(found[2]) if need_b else None


class ConvolutionTransposeBackward0(Node):
    """Backward of the transposed convolution ``x = conv_transpose(g, w) + b``."""
    __slots__ = ()
    saved_fields = _conv_fields(True)
    jvp = jvp_by_transposition

    def name(self):
        return "ConvolutionBackward0"

    def backward(self, grad):
        g, w = self.saved_tensors
        need_g, need_w, need_b = (fn is not None for fn, _ in self.next_functions)
        gg = _conv(grad, w, None, self.geom) if need_g else None
        gw = _conv_weight(grad, g, self.geom, w.shape[2:]) if need_w else None
        return gg, gw, _bias_grad(grad) if need_b else None

    def backward_arrays(self, grad):
        """The transposed input's and the weight's gradients from one kernel call."""
        g, w = self.saved_tensors
        need_g, need_w, need_b = (fn is not None for fn, _ in self.next_functions)
        if not (need_g and need_w):
            return None
        gg, gw = convolution.forward_and_weight_grad(blocked_or_data(grad), blocked_or_data(g),
                                                     w._data, *self.geom.args(), True)
        return make_blocked(gg), make(gw), _bias_grad(grad) if need_b else None


def _bias_grad(grad):
    return grad.sum((0,) + tuple(range(2, grad.dim())))


class ConvolutionBackwardBackward0(Node):
    """Backward of the weight gradient ``gw = conv_weight(x, g)`` (bilinear in x and g)."""
    __slots__ = ()
    jvp = jvp_by_transposition

    def backward(self, grad):
        x, g = self.saved_tensors
        need_x, need_g = (fn is not None for fn, _ in self.next_functions)
        gx = _conv_transpose(g, grad, None, self.geom, x.shape[2:]) if need_x else None
        gg = _conv(x, grad, None, self.geom) if need_g else None
        return gx, gg


def _bias_data(bias):
    return None if bias is None else bias._data


def _conv(x, w, bias, geom):
    y = convolution.forward(blocked_or_data(x), w._data, _bias_data(bias), *geom.args(), True)
    out = make_blocked(y)
    node = record(ConvolutionBackward0, (x, w, bias), out)
    if node is not None:
        node.geom, node.bias_size = geom, 0 if bias is None else bias._data.shape[0]
        node.save(x, w)
    return out


def _conv_transpose(g, w, bias, geom, in_spatial):
    x = convolution.input_grad(blocked_or_data(g), w._data, _bias_data(bias), tuple(in_spatial),
                               *geom.args(), True)
    out = make_blocked(x)
    node = record(ConvolutionTransposeBackward0, (g, w, bias), out)
    if node is not None:
        node.geom, node.bias_size = geom, 0 if bias is None else bias._data.shape[0]
        node.out_spatial = in_spatial
        node.save(g, w)
    return out


def _conv_weight(x, g, geom, kernel):
    gw = convolution.weight_grad(blocked_or_data(x), blocked_or_data(g), tuple(kernel),
                                 *geom.args())
    out = make(gw)
    node = record(ConvolutionBackwardBackward0, (x, g), out)
    if node is not None:
        node.geom = geom
        node.save(x, g)
    return out


# -- argument checking ----------------------------------------------------------------------

def tuple_arg(value, n, name="kernel_size"):
    """An int or a sequence as an n-tuple of ints."""
    if isinstance(value, numbers.Integral):
        return (int(value),) * n
    value = tuple(int(v) for v in value)
    if len(value) == 1:
        return value * n
    if len(value) != n:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} values "
                           f"to match the convolution dimensions, but got {name}={list(value)}")
    return value


def _shape_str(shape):
    return "[" + ", ".join(map(str, shape)) + "]"


def _check_input(op, input, weight, bias, nd):
    for name, t in (("input", input), ("weight", weight)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}(): argument '{name}' (position {1 if name == 'input' else 2}) "
                            f"must be Tensor, not {type(t).__name__}")
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {op}, "
                           f"but got input of size: {_shape_str(input.shape)}")
    if weight.dim() != nd + 2:
        raise RuntimeError("weight should have at least three dimensions" if weight.dim() < 3 else
                           f"Expected {nd + 2}-dimensional weight for {nd + 2}-dimensional input, "
                           f"but got {weight.dim()}-dimensional weight of size {_shape_str(weight.shape)}")
    dtype = blocked_or_data(input).dtype
    for t in (weight, bias):
        if t is not None and t._data.dtype != dtype:
            raise RuntimeError(f"expected scalar type {_scalar(input)} but found {_scalar(t)}")
    if dtype.kind not in "fc" and dtype.name != "bfloat16":
        raise RuntimeError(f'"slow_conv2d_cpu" not implemented for \'{_scalar(input)}\'')


def _scalar(t):
    from ...ops._common import _type_word
    return _type_word(t._data.dtype)


def _padding(padding, weight, nd, stride, dilation):
    """Per-side padding, resolving 'same' and 'valid' as torch does."""
    kernel = weight.shape[2:]
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * nd
        if padding != "same":
            raise ValueError(f"Invalid padding string '{padding}', should be one of ('valid', 'same')")
        if any(s != 1 for s in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        pads = []
        for k, d in zip(kernel, dilation):
            total = d * (k - 1)
            pads.append((total // 2, total - total // 2))
        return tuple(pads)
    padding = tuple_arg(padding, nd, "padding")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    return tuple((p, p) for p in padding)


def _check_groups(op_transposed, input, weight, groups):
    channels = input.shape[1]
    expected = weight.shape[0] if op_transposed else weight.shape[1] * groups
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if not op_transposed and weight.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at "
                           f"dimension 0, but got weight of size {_shape_str(weight.shape)} instead")
    if channels != expected:
        head = "Given transposed=1, weight of size" if op_transposed else \
            f"Given groups={groups}, weight of size"
        raise RuntimeError(f"{head} {_shape_str(weight.shape)}, expected input"
                           f"{_shape_str(input.shape)} to have {expected} channels, but got "
                           f"{channels} channels instead")


def _batched(input, nd):
    """``input`` with a batch dimension, and whether one was added."""
    if input.dim() == nd + 1:
        return input.unsqueeze(0), True
    return input, False


def _check_size(input, weight, pads, dilation):
    spatial = input.shape[2:]
    padded = [s + lo + hi for s, (lo, hi) in zip(spatial, pads)]
    effective = [d * (k - 1) + 1 for k, d in zip(weight.shape[2:], dilation)]
    if any(p < e for p, e in zip(padded, effective)):
        raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))})."
                           f" Kernel size: ({' x '.join(map(str, effective))}). Kernel size can't be "
                           "greater than actual input size")


def _convnd(op, nd, input, weight, bias, stride, padding, dilation, groups):
    _check_input(op, input, weight, bias, nd)
    stride = tuple_arg(stride, nd, "stride")
    dilation = tuple_arg(dilation, nd, "dilation")
    pads = _padding(padding, weight, nd, stride, dilation)
    x, unbatched = _batched(input, nd)
    _check_groups(False, x, weight, groups)
    _check_size(x, weight, pads, dilation)
    out = _conv(x, weight, bias, _Geometry(stride, pads, dilation, groups))
    if _flop_hook.counter is not None:
        _flop_hook.counter.count_convolution(out.grad_fn, x, weight, bias, out, False)
    return out.squeeze(0) if unbatched else out


@autocast_policy("lower")
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """Applies a 1D convolution over an input signal composed of several input planes."""
    try:
        return _convnd("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)
    except (AttributeError, TypeError) as error:   # a tensor-like argument's override
        return override_or_raise(conv1d, error, input, weight, bias, stride, padding, dilation, groups)


@autocast_policy("lower")
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """Applies a 2D convolution over an input image composed of several input planes."""
    try:
        return _convnd("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)
    except (AttributeError, TypeError) as error:   # a tensor-like argument's override
        return override_or_raise(conv2d, error, input, weight, bias, stride, padding, dilation, groups)


@autocast_policy("lower")
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """Applies a 3D convolution over an input image composed of several input planes."""
    return _convnd("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def transposed_output_size(in_size, kernel, stride, pad, dilation, output_padding):
    return (in_size - 1) * stride - 2 * pad + dilation * (kernel - 1) + output_padding + 1


def _conv_transposend(op, nd, input, weight, bias, stride, padding, output_padding, groups,
                      dilation):
    _check_input(op, input, weight, bias, nd)
    stride = tuple_arg(stride, nd, "stride")
    dilation = tuple_arg(dilation, nd, "dilation")
    padding = tuple_arg(padding, nd, "padding")
    output_padding = tuple_arg(output_padding, nd, "output_padding")
    for op_, s, d in zip(output_padding, stride, dilation):
        if op_ >= s and op_ >= d:
            raise RuntimeError("output padding must be smaller than either stride or dilation, but got "
                               f"output_padding: {op_}, stride: {s}, dilation: {d}")
    x, unbatched = _batched(input, nd)
    _check_groups(True, x, weight, groups)
    out_spatial = tuple(
        transposed_output_size(x.shape[2 + i], weight.shape[2 + i], stride[i], padding[i],
                               dilation[i], output_padding[i]) for i in range(nd))
    if any(s <= 0 for s in out_spatial):
        raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, x.shape[2:]))}). "
                           f"Calculated output size per channel: ({' x '.join(map(str, out_spatial))})."
                           " Output size is too small")
    geom = _Geometry(stride, tuple((p, p) for p in padding), dilation, groups)
    out = _conv_transpose(x, weight, bias, geom, out_spatial)
    if _flop_hook.counter is not None:
        _flop_hook.counter.count_convolution(out.grad_fn, x, weight, bias, out, True)
    return out.squeeze(0) if unbatched else out


@autocast_policy("lower")
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """Applies a 1D transposed convolution operator over an input signal composed of several
    input planes, sometimes also called "deconvolution"."""
    return _conv_transposend("conv_transpose1d", 1, input, weight, bias, stride, padding,
                             output_padding, groups, dilation)


@autocast_policy("lower")
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """Applies a 2D transposed convolution operator over an input image composed of several
    input planes, sometimes also called "deconvolution"."""
    return _conv_transposend("conv_transpose2d", 2, input, weight, bias, stride, padding,
                             output_padding, groups, dilation)


@autocast_policy("lower")
def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """Applies a 3D transposed convolution operator over an input image composed of several
    input planes, sometimes also called "deconvolution"."""
    return _conv_transposend("conv_transpose3d", 3, input, weight, bias, stride, padding,
                             output_padding, groups, dilation)


def conv_tbc(input, weight, bias, pad=0):
    """A 1-D convolution over time-batch-channel input: ``input`` (time, batch, in_channels),
    ``weight`` (kernel, in_channels, out_channels), ``bias`` (out_channels), ``pad`` zeros at
    each end of the time dimension; the result is (time', batch, out_channels)."""
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, out_channels.")
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    out = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1)
