"""Activation functions: elementwise non-linearities (the softmax family: softmax_family.py).

Most are compositions of ember ops (their gradients, of any order, follow). ReLU, Hardtanh,
LeakyReLU, SiLU, GELU, Hardswish and Hardsigmoid are single nodes with hand-written backward,
in ember ops, and on arrays (a mask or factor and one product) as their ``backward_arrays``."""
import math

import numpy as np

from ...ops import _compiled_functions
from ...ops._common import (
    apply_inplace, forward_mode, make, method, namespace_of, Node, record, wrap_dim,
)
from ...ops.ternary import _SAME_SIZE_INTEGER, _select, where
from ...amp.policy import autocast_policy
from ..._backend import onednn, openmp_kernels, special, vector_math
from ..._backend.precision import exp_in_place
from ..._backend.choice import KernelChoice
from ..._blocked_tensor import elementwise_operands, wrap_like
from ..._memory_format import laid_out_like
from ...autograd._dual import jvp_by_backward, jvp_by_transposition
from ..._torch_function import override_or_raise

__all__ = [
    "relu", "relu_", "relu6", "hardtanh", "hardtanh_", "leaky_relu", "leaky_relu_", "prelu",
    "elu", "elu_", "selu", "selu_", "celu", "celu_", "gelu", "silu", "mish", "softplus",
    "softsign", "sigmoid", "hardsigmoid", "hardswish", "tanh", "tanhshrink", "softshrink",
    "hardshrink", "threshold", "threshold_", "logsigmoid", "glu", "rrelu", "rrelu_",
]


# the dtypes the single-node activations below compute on their arrays (others: the composite)
_FLOATS_32_64 = (np.dtype(np.float32), np.dtype(np.float64))


def _maybe_inplace(fn, input, inplace, *args):
    """``fn(input, *args)``, written into ``input`` when ``inplace``."""
    if inplace:
        return apply_inplace(input, fn, *args)
    return fn(input, *args)


# ---------------------------------------------------------------------------------------------
# Single-node activations


def _masked(grad, keep):
    """``grad`` where the boolean array ``keep`` is true, else 0 (an array product; a bool
    operand viewed as uint8 multiplies faster than as bool)."""
    return grad * keep.view("uint8")


def _relu_grad(grad, result):
    """``grad`` where ``result != 0``, else 0. result = max(x, 0) is >= 0 or NaN, so this is
    ``not result <= 0`` in one pass: NaN lets the gradient through, as torch's does."""
    return namespace_of(grad).multiply(grad, (result != 0).view("uint8"))


# Activations run on oneDNN's eltwise primitive (one pass on its threads) from float32 inputs
# of this many elements (``python -m benchmarks.onednn_layers --only act``, with and without
# ``--forward``); below it the ctypes calls around the kernel cost more than NumPy's passes.
# ReLU and Hardtanh's forward stay off oneDNN's eltwise: its ReLU makes NaN 0 (torch keeps it),
# its backward stops the gradient at NaN, and its clip makes NaN the lower bound.
ELTWISE_ONEDNN_MIN_ELEMENTS = {"gelu": 1 << 13, "gelu_tanh": 1 << 15, "silu": 1 << 16}


def _onednn_activation(x, name):
    if x.size < ELTWISE_ONEDNN_MIN_ELEMENTS[name]:
        return None
    return onednn.eltwise.eltwise_forward(x, name)


def _onednn_activation_backward(grad, data, name):
    if data.size < ELTWISE_ONEDNN_MIN_ELEMENTS[name] or grad.dtype != data.dtype:
        return None
    return onednn.eltwise.eltwise_backward(grad, data, name)


def _activation_choices(name, numpy_forward, numpy_backward):
    """The kernel choices of one activation's forward (``x``) and backward (``grad, data``)."""
    return (KernelChoice(name, onednn=lambda x: _onednn_activation(x, name), numpy=numpy_forward),
            KernelChoice(f"{name} backward", numpy=numpy_backward,
                         onednn=lambda grad, data: _onednn_activation_backward(grad, data, name)))


class ReluBackward0(Node):
    __slots__ = ()
    saved_fields = {"result": 0}
    jvp = jvp_by_backward

    def backward(self, grad):
        (result,) = self.saved_tensors
        return (grad * (result <= 0).logical_not(),)

    def backward_arrays(self, grad):
        (result,) = self.saved_tensors
        (grad, result), layout_of = elementwise_operands(grad, result)
        return (wrap_like(layout_of, _relu_backward(grad, result)),)


# ReLU on OpenMP's threads (ember's loops: oneDNN's own turns NaN into 0) where oneDNN runs,
# else NumPy's pass.
def _numpy_relu(data):
    return namespace_of(data).maximum(data, data.dtype.type(0))


_relu_forward = KernelChoice("relu", onednn=openmp_kernels.relu_forward, numpy=_numpy_relu)
_relu_backward = KernelChoice(
    "relu backward", onednn=openmp_kernels.relu_backward,
    numpy=_relu_grad)


def _relu(input):
    (data,), layout_of = elementwise_operands(input)
    if data.dtype.kind == "b":
        raise RuntimeError("Boolean inputs not supported for relu")
    # under the loop's size, NumPy's pass without the kernel choice (which the loop would decline)
    small = data.size < openmp_kernels.ELEMENTWISE_MIN_ELEMENTS
    out = wrap_like(layout_of, _numpy_relu(data) if small else _relu_forward(data))
    node = record(ReluBackward0, (input,), out)
    if node is not None:
        node.save(out)
    return out


@method()
def relu(input, inplace=False):
    """Applies the rectified linear unit function element-wise: ``max(0, x)``."""
    try:
        return _maybe_inplace(_relu, input, inplace)
    except (AttributeError, TypeError) as error:   # a tensor-like argument's override
        return override_or_raise(relu, error, input, inplace)


@method()
def relu_(input):
    """In-place version of :func:`relu`."""
    return apply_inplace(input, _relu)


class HardtanhBackward0(Node):
    __slots__ = ()
    saved_fields = {"self": 0, "min_val": "min_val", "max_val": "max_val"}
    jvp = jvp_by_backward

    def backward(self, grad):
        (input,) = self.saved_tensors
        lo, hi = self.min_val, self.max_val
        return (grad * (input <= lo).logical_or(input >= hi).logical_not(),)

    def backward_arrays(self, grad):
        (input,) = self.saved_tensors
        (grad, input), layout_of = elementwise_operands(grad, input)
        return (wrap_like(layout_of, _hardtanh_backward(grad, input, self.min_val, self.max_val)),)


def _numpy_hardtanh_backward(grad, data, lo, hi):
    if data.dtype.char in "fd" and grad.dtype == data.dtype:
        return _hardtanh_grad_blocks(data, grad, lo, hi)
    xp = namespace_of(data)
    outside = data <= lo
    outside |= data >= hi
    return _masked(grad, xp.logical_not(outside, out=outside))


def _onednn_hardtanh_backward(grad, data, lo, hi):
    """ember's OpenMP loop (on oneDNN's threads; it took about half the time of oneDNN's clip
    backward on MobileNetV2's activations), with torch's rule at NaN inputs: the gradient is 0
    there for a row-major tensor of ``HARDTANH_ZERO_AT_NAN_MIN_ELEMENTS`` or more (torch's
    vectorised kernel), and passes elsewhere (its channels-last and small-tensor loops, as
    NumPy's path): torch itself differs by layout."""
    if grad.dtype != data.dtype or grad.shape != data.shape:
        return None
    if type(grad) is np.ndarray and type(data) is np.ndarray:
        grad = laid_out_like(grad, data)   # the loop reads both in one memory order
    zero_at_nan = data.size >= HARDTANH_ZERO_AT_NAN_MIN_ELEMENTS and data.flags.c_contiguous
    return openmp_kernels.hardtanh_backward(grad, data, lo, hi, zero_at_nan)


# From this many elements, torch's vectorised Hardtanh backward of a row-major tensor gives 0
# where the input is NaN.
HARDTANH_ZERO_AT_NAN_MIN_ELEMENTS = 1 << 18

_hardtanh_backward = KernelChoice("hardtanh backward", onednn=_onednn_hardtanh_backward,
                                  numpy=_numpy_hardtanh_backward)


# Hardtanh's array backward makes its mask and applies it this many elements at a time, so
# that the input is read once and the mask never leaves the cache.
HARDTANH_GRAD_BLOCK = 1 << 16


def _hardtanh_grad_blocks(x, grad, lo, hi):
    """``grad`` where ``not (x <= lo or x >= hi)`` (NaN inputs pass it, as in torch), else 0,
    for float32/float64 arrays of one dtype."""
    xp = namespace_of(x)
    if grad.strides == x.strides:
        # in the arrays' own memory order (a channels-last result stays channels-last and
        # nothing is copied): the same element order in all three, as they share a layout
        result = xp.empty_like(x)
        x_flat, grad_flat, out = x.ravel(order="K"), grad.ravel(order="K"), result.ravel(order="K")
    else:
        result = xp.empty(grad.shape, dtype=grad.dtype)
        x_flat, grad_flat, out = x.reshape(-1), grad.reshape(-1), result.reshape(-1)
    size = max(1, min(HARDTANH_GRAD_BLOCK, x_flat.size))
    keep, above = xp.empty(size, dtype=bool), xp.empty(size, dtype=bool)
    for first in range(0, x_flat.size, size):
        part = slice(first, first + size)
        count = min(size, x_flat.size - first)
        k, a = keep[:count], above[:count]
        xp.less_equal(x_flat[part], lo, out=k)
        xp.greater_equal(x_flat[part], hi, out=a)
        xp.logical_or(k, a, out=k)
        xp.logical_not(k, out=k)
        xp.multiply(grad_flat[part], k.view(xp.uint8), out=out[part])
    return result


# Hardtanh's forward on OpenMP's threads (ember's loop: oneDNN's clip turns NaN into the lower
# bound) where oneDNN runs, else NumPy's pass.
_hardtanh_forward = KernelChoice(
    "hardtanh", onednn=openmp_kernels.hardtanh_forward,
    numpy=lambda data, lo, hi: namespace_of(data).clip(data, lo, hi))


def _hardtanh(input, min_val=-1.0, max_val=1.0):
    if min_val <= 0 <= max_val:   # 0 stays 0: the op may run over a oneDNN layout's padding
        (data,), layout_of = elementwise_operands(input)
    else:
        data, layout_of = input._data, None
    clipped = _hardtanh_forward(data, data.dtype.type(min_val), data.dtype.type(max_val))
    # (NumPy's clip gives bfloat16 float32)
    out = wrap_like(layout_of, clipped.astype(data.dtype, copy=False))
    node = record(HardtanhBackward0, (input,), out)
    if node is not None:
        node.save(input)
        node.min_val, node.max_val = min_val, max_val
    return out


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """Applies the HardTanh function element-wise: ``clamp(x, min_val, max_val)``."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _maybe_inplace(_hardtanh, input, inplace, min_val, max_val)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    """In-place version of :func:`hardtanh`."""
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input, inplace=False):
    """Applies ``min(max(0, x), 6)`` element-wise."""
    return hardtanh(input, 0.0, 6.0, inplace)


# ---------------------------------------------------------------------------------------------
# Compositions


class LeakyReluBackward0(Node):
    __slots__ = ()
    saved_fields = {"self": 0, "negative_slope": "negative_slope"}
    jvp = jvp_by_backward

    def backward(self, grad):
        (input,) = self.saved_tensors
        slope = self.negative_slope
        return (where(input > 0, grad, grad * slope),)

    def backward_arrays(self, grad):
        (input,) = self.saved_tensors
        (grad, input), layout_of = elementwise_operands(grad, input)
        return (wrap_like(layout_of, _leaky_relu_backward(grad, input, self.negative_slope)),)


# LeakyReLU on OpenMP's threads (ember's loops, torch's formulas) where oneDNN runs, else
# NumPy's passes.
_leaky_relu_backward = KernelChoice(
    "leaky_relu backward", onednn=openmp_kernels.leaky_relu_backward,
    numpy=lambda grad, x, slope: _leaky_relu_grad(x, grad, slope))


def _leaky_relu_grad(x, grad, slope):
    """``grad`` where ``x > 0``, else ``grad * slope``, as one factor array times grad."""
    xp = namespace_of(x)
    if 0 <= slope <= 1:
        factor = xp.sign(x)  # 1 where x > 0; fmax with the slope maps 0, -1, NaN to it
        xp.fmax(factor, x.dtype.type(slope), out=factor)
    else:
        factor = xp.where(x > 0, x.dtype.type(1), x.dtype.type(slope))
    factor *= grad
    return factor


def _leaky_relu_kernel(x, slope):
    """``max(x, slope * x)``."""
    xp = namespace_of(x)
    scaled = xp.multiply(x, slope)
    return xp.maximum(x, scaled, out=scaled)


_leaky_relu_forward = KernelChoice(
    "leaky_relu", onednn=openmp_kernels.leaky_relu_forward,
    numpy=_leaky_relu_kernel)


def _leaky_relu(input, negative_slope):
    if 0 < negative_slope <= 1:  # then leaky_relu(x) = max(x, slope * x), inf included
        (data,), layout_of = elementwise_operands(input)
    else:
        data, layout_of = input._data, None
    if data.dtype.kind != "f":
        return where(input > 0, input, input * negative_slope)
    xp = namespace_of(data)
    if layout_of is not None or 0 < negative_slope <= 1:
        out = wrap_like(layout_of, _leaky_relu_forward(data, data.dtype.type(negative_slope)))
    else:
        scaled = data * data.dtype.type(negative_slope)
        out = make(xp.where(data > 0, data, scaled))
    node = record(LeakyReluBackward0, (input,), out)
    if node is not None:
        node.save(input)
        node.negative_slope = negative_slope
    return out


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """Applies ``max(0, x) + negative_slope * min(0, x)`` element-wise."""
    return _maybe_inplace(_leaky_relu, input, inplace, negative_slope)


def leaky_relu_(input, negative_slope=0.01):
    """In-place version of :func:`leaky_relu`."""
    return leaky_relu(input, negative_slope, True)


def _check_float_activation(input, kernel):
    if not (input.is_floating_point() or input.is_complex()):  # bfloat16 included
        from ...ops._common import _type_word
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_type_word(input._data.dtype)}'")


@autocast_policy("lower")
def prelu(input, weight):
    """Applies ``max(0, x) + weight * min(0, x)`` element-wise, ``weight`` per channel (dim 1)."""
    return _prelu_entry[0](input, weight)


def _python_prelu(input, weight):
    """``prelu`` in every case its compiled function (``ops._compiled_activations``) leaves to Python."""
    data, weights = input._data, weight._data
    if weights.dtype != data.dtype:
        from ...ops._common import _type_word
        raise RuntimeError(f"prelu: Type promoting not supported. Got {_type_word(data.dtype)} "
                           f"and {_type_word(weights.dtype)}")
    if data.dtype.kind not in "fc":
        _check_float_activation(input, "prelu_cpu")
    if weights.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weights.ndim}")
    n, nd = weights.size, data.ndim
    if nd and n != 1:
        channels = data.shape[1] if nd >= 2 else 1   # (as torch counts a 1-d input)
        if n != channels:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {n} and channel size = {channels}.")
    if data.dtype.kind == "c":
        w = (weight.reshape(()) if n == 1 else weight if nd < 2 else weight.reshape((-1,) + (1,) * (nd - 2)))
        return where(input > 0, input, w * input)
    # torch's kernel takes the weight viewed to the input's rank, channels at dim 1
    view_shape = (1,) * nd if n == 1 else (1, n) + (1,) * (nd - 2)
    w = weight if weights.shape == view_shape else weight.view(view_shape)
    out = make(_prelu_forward(input._data, w._data))
    node = record(PreluKernelBackward0, (input, w), out)
    if node is not None:
        node.save(input, w)
    return out


_prelu_entry = _compiled_functions.register(_python_prelu, None, kind="prelu")


# PReLU on OpenMP's threads (ember's loops over the (N, C, L) rows, torch's formula) where
# oneDNN runs, else NumPy's passes.
_prelu_forward = KernelChoice(
    "prelu", onednn=openmp_kernels.prelu_forward,
    numpy=lambda x, w: _select(namespace_of(x), x > 0, x, w * x, x.dtype))


def _prelu_grads(grad, x, w, need_input, need_weight):
    """prelu's gradients on arrays, ``w`` viewed to ``x``'s rank: (``grad`` or ``w * grad``,
    ``x * grad`` where ``x`` is not positive summed to ``w``'s shape), each None unless asked;
    half precision summed in float32, as ember's ``sum``."""
    xp = namespace_of(x)
    positive = x > 0
    grad_x = _select(xp, positive, grad, w * grad, x.dtype) if need_input else None
    grad_w = None
    if need_weight:
        part = _select(xp, positive, xp.zeros((), x.dtype), x * grad, x.dtype)
        dims = tuple(i for i, (a, b) in enumerate(zip(w.shape, x.shape)) if a == 1 and b != 1)
        total = part.sum(axis=dims, keepdims=True, dtype=np.float32 if x.dtype.itemsize < 4 else None)
        grad_w = total.astype(x.dtype, copy=False).reshape(w.shape)
    return grad_x, grad_w


_prelu_backward = KernelChoice("prelu backward", onednn=openmp_kernels.prelu_backward, numpy=_prelu_grads)


class PreluKernelBackward0(Node):
    """prelu's gradients: ``grad`` or ``weight * grad`` to the input, ``input * grad`` where
    the input is not positive, summed to each channel, to the weight."""
    __slots__ = ()
    saved_fields = {"self": 0, "weight": 1}

    def backward_arrays(self, grad):
        input, weight = self.saved_tensors
        need_input, need_weight = (fn is not None for fn, _ in self.next_functions)
        grads = _prelu_backward(grad._data, input._data, weight._data, need_input, need_weight)
        return tuple(None if g is None else make(g) for g in grads)

    def backward(self, grad):
        from ...ops._common import sum_to
        input, weight = self.saved_tensors
        need_input, need_weight = (fn is not None for fn, _ in self.next_functions)
        positive = input > 0
        grad_input = where(positive, grad, weight * grad) if need_input else None
        grad_weight = sum_to(where(positive, 0.0, input * grad), weight.shape) if need_weight else None
        return grad_input, grad_weight

    def jvp(self, tangent_input, tangent_weight):
        input, weight = self.primals
        positive = input > 0
        out = None
        if tangent_input is not None:
            out = where(positive, tangent_input, weight * tangent_input)
        if tangent_weight is not None:
            part = where(positive, 0.0, input * tangent_weight)
            out = part if out is None else out + part
        return out


class EluBackward0(Node):
    """Backward of ``elu``/``selu`` (``scale * x`` above 0, ``scale * alpha * expm1(x *
    input_scale)`` below): ``grad * scale`` where x > 0, else ``grad * scale * alpha *
    input_scale * exp(x * input_scale)`` (NaN at NaN, as torch's vectorized kernel)."""
    __slots__ = ("alpha", "scale", "input_scale")
    saved_fields = {"self": 0, "alpha": "alpha", "scale": "scale", "input_scale": "input_scale"}
    jvp = jvp_by_transposition

    def backward(self, grad):
        (x,) = self.saved_tensors
        slope = (x.clamp(max=0) * self.input_scale).exp() * (self.alpha * self.scale * self.input_scale)
        return (where(x > 0, grad * self.scale, grad * slope),)

    def backward_arrays(self, grad):
        """The formula above on the arrays: large float32 ones on the vector-math loop
        (libmvec's ``expf``), the others by NumPy's passes (the formula's bits)."""
        (x,) = self.saved_tensors
        xd, gd = x._data, grad._data
        if (type(xd) is not np.ndarray or type(gd) is not np.ndarray or gd.dtype != xd.dtype
                or gd.shape != xd.shape or xd.dtype not in _FLOATS_32_64):
            return None
        parameters = (self.alpha, self.scale, self.input_scale, self.alpha * self.scale * self.input_scale)
        if xd.dtype == np.float32 and xd.size >= vector_math.MIN_ELEMENTS["elu backward"]:
            if gd.strides != xd.strides and xd.flags.c_contiguous:
                gd = np.ascontiguousarray(gd)   # (a sum's broadcast gradient: the loop reads it row-major)
            return (make(_elu_gradient_choice(gd, xd, parameters)),)
        return (make(_elu_gradient_numpy(gd, xd, parameters)),)


class CeluBackward0(Node):
    """Backward of ``celu``: ``elu``'s with ``input_scale = 1 / alpha``, scale 1."""
    __slots__ = ("alpha", "scale", "input_scale")
    saved_fields = {"self": 0, "alpha": "alpha"}
    jvp = jvp_by_transposition
    backward = EluBackward0.backward
    backward_arrays = EluBackward0.backward_arrays


def _elu_gradient_numpy(g, x, parameters):
    """The node's formula on arrays."""
    alpha, scale, input_scale, product = parameters
    slope = np.exp(np.minimum(x, 0) * input_scale)
    slope *= product
    return _select(np, x > 0, g * scale, g * slope, x.dtype)


# the elu family's gradient of large float32 arrays on the vector-math loop (libmvec's expf)
_elu_gradient_choice = KernelChoice("elu backward", onednn=lambda g, x, p: vector_math.gradient("elu", g, x, p),
                                    numpy=_elu_gradient_numpy)


def _elu_numpy(x, alpha, scale, input_scale):
    """The composite's arithmetic on a float array."""
    negative = np.expm1(np.minimum(x, 0) * input_scale)
    negative *= alpha
    out = _select(np, x > 0, x, negative, x.dtype)
    return out * scale if scale != 1.0 else out


# large float32 arrays on the vector-math loop (libmvec's ``expm1f``), else NumPy's passes
_elu_arrays = vector_math.when_large(
    "elu", lambda x, alpha, scale, input_scale: vector_math.with_parameters("elu", x, (alpha, scale, input_scale)),
    _elu_numpy)


def _elu(input, alpha=1.0, scale=1.0, input_scale=1.0, node_cls=EluBackward0):
    out = _single_node(node_cls, input, lambda x: _elu_arrays(x, alpha, scale, input_scale),
                       alpha=alpha, scale=scale, input_scale=input_scale)
    if out is not None:
        return out
    negative = (input.clamp(max=0) * input_scale).expm1() * alpha
    out = where(input > 0, input, negative)
    return out * scale if scale != 1.0 else out


def elu(input, alpha=1.0, inplace=False):
    """Applies ``x if x > 0 else alpha * (exp(x) - 1)`` element-wise."""
    return _maybe_inplace(_elu, input, inplace, alpha)


def elu_(input, alpha=1.0):
    """In-place version of :func:`elu`."""
    return elu(input, alpha, True)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input, inplace=False):
    """Applies ``scale * (max(0, x) + min(0, alpha * (exp(x) - 1)))`` element-wise."""
    return _maybe_inplace(_elu, input, inplace, _SELU_ALPHA, _SELU_SCALE)


def selu_(input):
    """In-place version of :func:`selu`."""
    return selu(input, True)


def celu(input, alpha=1.0, inplace=False):
    """Applies ``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`` element-wise."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return _maybe_inplace(_elu, input, inplace, alpha, 1.0, 1.0 / alpha, CeluBackward0)


def celu_(input, alpha=1.0):
    """In-place version of :func:`celu`."""
    return celu(input, alpha, True)


class RreluWithNoiseBackward0(Node):
    """The gradient is ``grad * noise``: 1 where the input was positive, else its slope."""
    __slots__ = ()
    jvp = jvp_by_backward

    def backward(self, grad):
        (noise,) = self.saved_tensors
        return (grad * noise,)


def _rrelu(input, lower, upper, training, generator=None):
    data = input._data
    xp = namespace_of(data)
    if data.dtype.kind != "f":
        from ...ops._common import _type_word
        kernel = "rrelu_with_noise_out_cpu" if training else "leaky_relu_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_type_word(data.dtype)}'")
    positive = data > 0
    if training and upper - lower > 1e-6:
        from ...ops.random import _rng, _uniform_array
        from ..._backend import to_device_of
        u = to_device_of(_uniform_array(_rng(generator), data.shape, data.dtype), data)
        slopes = (u * (upper - lower) + lower).astype(data.dtype, copy=False)
    else:
        slopes = xp.full(data.shape, (lower + upper) / 2, dtype=data.dtype)
    noise = xp.where(positive, data.dtype.type(1), slopes)
    out = make(data * noise)
    node = record(RreluWithNoiseBackward0, (input,), out)
    if node is not None:
        node.save(make(noise))
    return out


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: ``x`` where positive, else ``a * x`` with ``a`` drawn uniformly
    from ``[lower, upper]`` in training and ``(lower + upper) / 2`` in evaluation."""
    return _maybe_inplace(_rrelu, input, inplace, lower, upper, training)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """In-place version of :func:`rrelu`."""
    return rrelu(input, lower, upper, training, True)


_SQRT_HALF = math.sqrt(0.5)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_GELU_CUBIC = 0.044715


def _fast_float(data, kernel_name):
    """Whether ``data`` takes an activation's array path (float32, float64); integer and bool
    inputs raise torch's error, other floats take the composite path."""
    kind = data.dtype.kind
    if kind in "biu":
        from ...ops._common import _type_word
        raise NotImplementedError(f'"{kernel_name}" not implemented for \'{_type_word(data.dtype)}\'')
    return data.dtype.itemsize >= 4 and kind == "f"


def _normal_cdf_array(xp, x):
    """``Phi(x) = erfc(-x / sqrt 2) / 2`` (no cancellation for negative x)."""
    c = special.erfc(xp, x * x.dtype.type(-_SQRT_HALF))
    c *= x.dtype.type(0.5)
    return c


def _gelu_tanh_array(xp, x):
    """``tanh(sqrt(2/pi) * (x + 0.044715 x^3))``."""
    t = x * x
    t *= _GELU_CUBIC
    t += 1
    t *= x
    t *= _SQRT_2_OVER_PI
    return xp.tanh(t, out=t)


# erf(x / sqrt 2) = tanh(x * Q(x*x)): the float32 GELU kernels' polynomial
_PHI_TANH_Q = special.erf_tanh_coefficients(_SQRT_HALF)


def _gelu_float32_block(x, out, square):
    """``x * Phi(x)`` with ``Phi(x) = (1 + erf(x / sqrt 2)) / 2``, torch's formula."""
    special.erf_tanh_into(x, out, square, _PHI_TANH_Q)
    out += 1
    out *= x
    out *= 0.5
    return out


def _gelu_grad_float32_block(x, grad, out, square):
    """``grad * (Phi(x) + x phi(x))``, ``phi(x) = exp(-x*x / 2) / sqrt(2 pi)``."""
    special.erf_tanh_into(x, out, square, _PHI_TANH_Q)
    out += 1
    out *= 0.5
    square *= -0.5
    np.exp(square, out=square)
    square *= x
    square *= _INV_SQRT_2PI
    out += square
    out *= grad
    return out


def _gelu_float32(x):
    """Exact GELU of a float32 NumPy array, in cache-sized blocks."""
    return special.by_blocks(_gelu_float32_block, None, x)


def _gelu_grad_float32(x, grad):
    """GELU's input gradient for float32 NumPy arrays ``x`` and ``grad`` of one shape."""
    return special.by_blocks(_gelu_grad_float32_block, None, x, grad)


def _exact_gelu_float32(x):
    """Whether exact GELU of ``x`` runs the float32 kernels: a float32 NumPy array."""
    return type(x) is np.ndarray and x.dtype == np.float32


def _gelu_array(x, approximate):
    return (_gelu_forward if approximate == "none" else _gelu_tanh_forward)(x)


def _numpy_gelu(x, approximate):
    xp = namespace_of(x)
    if approximate == "none":
        if _exact_gelu_float32(x):
            return _gelu_float32(x)
        y = _normal_cdf_array(xp, x)
    else:
        y = _gelu_tanh_array(xp, x)
        y += 1
        y *= 0.5
    y *= x
    return y


def _gelu_grad_array(x, approximate):
    """d gelu / dx: ``Phi(x) + x phi(x)``, or for tanh (``t`` the tanh above)
    ``(1 + t) / 2 + x (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 x^2) / 2``."""
    xp = namespace_of(x)
    if approximate == "none":
        d = x * x
        d *= -0.5
        xp.exp(d, out=d)
        d *= _INV_SQRT_2PI
        d *= x
        d += _normal_cdf_array(xp, x)
        return d
    t = _gelu_tanh_array(xp, x)
    d = x * x
    d *= 3 * _GELU_CUBIC
    d += 1
    d *= x
    d *= _SQRT_2_OVER_PI
    d *= 1 - t * t
    t += 1
    d += t
    d *= 0.5
    return d


def _gelu_grad(input, approximate):
    """d gelu / dx in ember ops (for ``create_graph=True``)."""
    if approximate == "none":
        cdf = (input * -_SQRT_HALF).erfc() * 0.5
        return cdf + input * (input * input * -0.5).exp() * _INV_SQRT_2PI
    t = ((input * input * _GELU_CUBIC + 1) * input * _SQRT_2_OVER_PI).tanh()
    slope = (input * input * (3 * _GELU_CUBIC) + 1) * _SQRT_2_OVER_PI
    return (t + 1) * 0.5 + input * (1 - t * t) * slope * 0.5


class GeluBackward0(Node):
    __slots__ = ()
    saved_fields = {"self": 0, "approximate": "approximate"}
    jvp = jvp_by_backward

    def backward(self, grad):
        (input,) = self.saved_tensors
        return (grad * _gelu_grad(input, self.approximate),)

    def backward_arrays(self, grad):
        (input,) = self.saved_tensors
        backward = _gelu_backward if self.approximate == "none" else _gelu_tanh_backward
        return (make(backward(grad._data, input._data)),)


def _numpy_gelu_backward(g, x, approximate):
    if approximate == "none" and _exact_gelu_float32(x) and g.dtype == x.dtype \
            and g.shape == x.shape:
        return _gelu_grad_float32(x, g)
    factor = _gelu_grad_array(x, approximate)
    factor *= g
    return factor


_gelu_forward, _gelu_backward = _activation_choices(
    "gelu", lambda x: _numpy_gelu(x, "none"), lambda g, x: _numpy_gelu_backward(g, x, "none"))
_gelu_tanh_forward, _gelu_tanh_backward = _activation_choices(
    "gelu_tanh", lambda x: _numpy_gelu(x, "tanh"), lambda g, x: _numpy_gelu_backward(g, x, "tanh"))


def _gelu_composite(input, approximate):
    if approximate == "none":
        return input * 0.5 * (1.0 + (input * _SQRT_HALF).erf())
    inner = (input + input * input * input * _GELU_CUBIC) * _SQRT_2_OVER_PI
    return input * 0.5 * (1.0 + inner.tanh())


def gelu(input, approximate="none"):
    """Applies the Gaussian Error Linear Unit ``x * Phi(x)``; ``approximate='tanh'`` uses
    ``0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))``."""
    try:
        if approximate not in ("none", "tanh"):
            raise RuntimeError("approximate argument must be either none or tanh.")
        if not _fast_float(input._data, "GeluKernelImpl"):
            return _gelu_composite(input, approximate)
        out = make(_gelu_array(input._data, approximate))
        node = record(GeluBackward0, (input,), out)
        if node is not None:
            node.save(input)
            node.approximate = approximate
        return out
    except (AttributeError, TypeError) as error:   # a tensor-like argument's override
        return override_or_raise(gelu, error, input, approximate)


class SiluBackward0(Node):
    __slots__ = ()
    saved_fields = {"self": 0}
    jvp = jvp_by_backward

    def backward(self, grad):
        (input,) = self.saved_tensors
        s = input.sigmoid()
        return (grad * (s * (1 + input * (1 - s))),)

    def backward_arrays(self, grad):
        (input,) = self.saved_tensors
        return (make(_silu_backward(grad._data, input._data)),)


def _numpy_silu_backward(grad, x):
    xp = namespace_of(x)
    s = _sigmoid_array(xp, x)
    factor = xp.subtract(x.dtype.type(1), s)  # d silu / dx = s * (1 + x * (1 - s))
    factor *= x
    factor += x.dtype.type(1)
    factor *= s
    factor *= grad
    return factor


def _numpy_silu(x):
    y = _sigmoid_array(namespace_of(x), x)
    y *= x
    return y


def _sigmoid_array(xp, x):
    """``1 / (1 + exp(-x))`` of a float array; ``exp`` overflowing to inf gives 0, as it
    should."""
    s = xp.negative(x)
    exp_in_place(xp, s)
    s += x.dtype.type(1)
    return xp.reciprocal(s, out=s)


_silu_forward, _silu_backward = _activation_choices("silu", _numpy_silu, _numpy_silu_backward)


def _silu(input):
    data = input._data
    if data.dtype.kind != "f":
        return input * input.sigmoid()
    out = make(_silu_forward(data))
    node = record(SiluBackward0, (input,), out)
    if node is not None:
        node.save(input)
    return out


def silu(input, inplace=False):
    """Applies the Sigmoid Linear Unit ``x * sigmoid(x)`` element-wise."""
    try:
        return _maybe_inplace(_silu, input, inplace)
    except (AttributeError, TypeError) as error:   # a tensor-like argument's override
        return override_or_raise(silu, error, input, inplace)


class SoftplusBackward0(Node):
    """Backward of ``softplus``: ``grad * sigmoid(beta * x)``, ``grad`` above the threshold."""
    __slots__ = ("beta", "threshold")
    saved_fields = {"self": 0, "beta": "beta", "threshold": "threshold"}
    jvp = jvp_by_transposition

    def backward(self, grad):
        (x,) = self.saved_tensors
        scaled = x * self.beta if self.beta != 1.0 else x
        return (where(scaled > self.threshold, grad, grad * scaled.sigmoid()),)

    def backward_arrays(self, grad):
        """The formula above on the arrays: large float32 ones on the vector-math loop, the
        others by NumPy's passes (the formula's bits)."""
        (x,) = self.saved_tensors
        xd, gd = _gradient_operands(x, grad, "softplus backward")
        if xd is None:
            return None
        return (make(_softplus_gradient(grad._data if gd is None else gd, xd, self.beta, self.threshold)),)


def _softplus_gradient_numpy(g, x, beta, threshold):
    scaled = x * beta if beta != 1.0 else x
    return _select(np, scaled > threshold, g, g * _sigmoid_array(np, scaled), x.dtype)


# large float32 gradients on the vector-math loop (the sigmoid loop's expression), where oneDNN's
# side of the kernel choice is in use; else NumPy's passes
_softplus_gradient = vector_math.when_large(
    "softplus backward", lambda g, x, beta, threshold: vector_math.gradient("softplus", g, x, (beta, threshold)),
    _softplus_gradient_numpy)


def _gradient_operands(x, grad, rule):
    """``(x's array, grad's array)`` for a gradient on arrays of a float32/float64 ``x``: the
    gradient made row-major where the loop of ``rule`` would read it (a sum's broadcast
    gradient), or None in its place where it cannot be; ``(None, None)`` where the node's
    formula on arrays does not apply."""
    xd, gd = x._data, grad._data
    if (type(xd) is not np.ndarray or type(gd) is not np.ndarray or gd.dtype != xd.dtype
            or gd.shape != xd.shape or xd.dtype not in _FLOATS_32_64):
        return None, None
    if gd.strides != xd.strides:
        gd = np.ascontiguousarray(gd) if xd.flags.c_contiguous else None
    return xd, gd


class MishBackward0(Node):
    """Backward of ``mish``: ``grad * (t + x sigmoid(x) (1 - t^2))``, t = tanh(softplus(x))."""
    __slots__ = ()
    saved_fields = {"self": 0}
    jvp = jvp_by_transposition

    def backward(self, grad):
        (x,) = self.saved_tensors
        t = _softplus(x).tanh()
        return (grad * (t + x * x.sigmoid() * (1 - t * t)),)


def _softplus_numpy(x, beta, threshold):
    """The composite's arithmetic on a float array."""
    scaled = x * beta if beta != 1.0 else x
    smooth = np.log1p(np.exp(np.minimum(scaled, threshold)))
    if beta != 1.0:
        smooth /= beta
    return _select(np, scaled > threshold, x, smooth, x.dtype)


# large float32 arrays on the vector-math loop (libmvec's log1pf and expf), else NumPy's passes
_softplus_arrays = vector_math.when_large(
    "softplus", lambda x, beta, threshold: vector_math.with_parameters("softplus", x, (beta, threshold)),
    _softplus_numpy)


def _single_node(node_cls, input, forward, **attributes):
    """``forward(array)`` of a float32/float64 ``input`` with one ``node_cls`` node (saving the
    input and ``attributes``); None for other inputs or under forward-mode AD."""
    if type(input._data) is not np.ndarray or input._data.dtype not in _FLOATS_32_64 or forward_mode.active:
        return None
    out = make(forward(input._data))
    node = record(node_cls, (input,), out)
    if node is not None:
        for name, value in attributes.items():
            setattr(node, name, value)
        node.save(input)
    return out


def _softplus(input, beta=1.0, threshold=20.0):
    out = _single_node(SoftplusBackward0, input, lambda x: _softplus_arrays(x, beta, threshold),
                       beta=beta, threshold=threshold)
    if out is not None:
        return out
    scaled = input * beta if beta != 1.0 else input
    smooth = scaled.clamp(max=threshold).exp().log1p()
    if beta != 1.0:
        smooth = smooth / beta
    return where(scaled > threshold, input, smooth)


def _mish(input):
    out = _single_node(MishBackward0, input, lambda x: x * np.tanh(_softplus_arrays(x, 1.0, 20.0)))
    if out is not None:
        return out
    return input * _softplus(input).tanh()


def mish(input, inplace=False):
    """Applies ``x * tanh(softplus(x))`` element-wise."""
    return _maybe_inplace(_mish, input, inplace)


def softplus(input, beta=1.0, threshold=20.0):
    """Applies ``1/beta * log(1 + exp(beta * x))``, linear where ``beta * x > threshold``."""
    return _softplus(input, beta, threshold)


def softsign(input):
    """Applies ``x / (1 + |x|)`` element-wise."""
    return input / (input.abs() + 1)


def sigmoid(input):
    """Applies ``1 / (1 + exp(-x))`` element-wise."""
    return input.sigmoid()


def tanh(input):
    """Applies the hyperbolic tangent element-wise."""
    return input.tanh()


class HardsigmoidBackward0(Node):
    __slots__ = ()
    saved_fields = {"self": 0}
    jvp = jvp_by_backward

    def backward(self, grad):
        (input,) = self.saved_tensors
        # input * 0 keeps the (zero) second derivative in the graph, as torch's does
        return (where((input > -3) & (input < 3), grad / 6, input * 0),)

    def backward_arrays(self, grad):
        (input,) = self.saved_tensors
        x = input._data
        xp = namespace_of(x)
        inside = xp.logical_and(x > -3, x < 3)
        return (make(_masked(grad._data, inside) / x.dtype.type(6)),)


def _relu6_of_shifted(data):
    """A new array ``clip(x + 3, 0, 6)``: the ramp Hardsigmoid and Hardswish scale."""
    y = data + data.dtype.type(3)
    namespace_of(data).clip(y, 0, 6, out=y)
    return y


def _hardsigmoid(input):
    data = input._data
    if not _fast_float(data, "hardsigmoid_cpu"):
        return _hardtanh(input, -3.0, 3.0) / 6.0 + 0.5
    y = _relu6_of_shifted(data)
    y /= data.dtype.type(6)
    out = make(y)
    node = record(HardsigmoidBackward0, (input,), out)
    if node is not None:
        node.save(input)
    return out


def hardsigmoid(input, inplace=False):
    """Applies ``0 if x <= -3, 1 if x >= 3, else x / 6 + 1/2`` element-wise."""
    return _maybe_inplace(_hardsigmoid, input, inplace)


class HardswishBackward0(Node):
    __slots__ = ()
    saved_fields = {"self": 0}
    jvp = jvp_by_backward

    def backward(self, grad):
        (input,) = self.saved_tensors
        middle = where(input < 3, input / 3 + 0.5, 1.0)
        return (grad * where(input <= -3, 0.0, middle),)

    def backward_arrays(self, grad):
        (input,) = self.saved_tensors
        return (make(_hardswish_grad_array(input._data, grad._data)),)


def _hardswish_grad_array(x, grad):
    """``grad`` times 0 where x <= -3, ``x / 3 + 1/2`` where -3 < x < 3, else 1."""
    xp = namespace_of(x)
    one = x.dtype.type(1)
    factor = x / x.dtype.type(3)
    factor += x.dtype.type(0.5)
    factor = xp.where(x < 3, factor, one)
    factor = xp.where(x <= -3, x.dtype.type(0), factor)
    factor *= grad
    return factor


def _hardswish(input):
    data = input._data
    if not _fast_float(data, "hardswish_cpu"):
        return input * (_hardtanh(input, -3.0, 3.0) / 6.0 + 0.5)
    y = _relu6_of_shifted(data)
    y *= data
    y /= data.dtype.type(6)
    out = make(y)
    node = record(HardswishBackward0, (input,), out)
    if node is not None:
        node.save(input)
    return out


def hardswish(input, inplace=False):
    """Applies ``x * hardsigmoid(x)`` element-wise."""
    return _maybe_inplace(_hardswish, input, inplace)


def tanhshrink(input):
    """Applies ``x - tanh(x)`` element-wise."""
    return input - input.tanh()


def softshrink(input, lambd=0.5):
    """Applies ``x - lambd if x > lambd, x + lambd if x < -lambd, else 0`` element-wise."""
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    return where(input > lambd, input - lambd, where(input < -lambd, input + lambd, 0.0))


class HardshrinkBackward0(Node):
    __slots__ = ()
    saved_fields = {"self": 0, "lambd": "lambd"}
    jvp = jvp_by_backward

    def backward(self, grad):
        (input,) = self.saved_tensors
        return (where(input.abs() > self.lambd, grad, 0.0),)

    def backward_arrays(self, grad):
        # (0 at a NaN input, as torch's vectorized loop gives)
        (input,) = self.saved_tensors
        return (make(_hardshrink_backward(grad._data, input._data, self.lambd)),)


# Hardshrink on OpenMP's threads (ember's loops) where oneDNN runs, else NumPy's passes.
_hardshrink_forward = KernelChoice(
    "hardshrink", onednn=openmp_kernels.hardshrink_forward,
    numpy=lambda x, lambd: _kept_or_zero(namespace_of(x), x, _kept(x, lambd)))
_hardshrink_backward = KernelChoice(
    "hardshrink backward", onednn=openmp_kernels.hardshrink_backward,
    numpy=lambda g, x, lambd: _kept_or_zero(namespace_of(g), g, namespace_of(x).abs(x) > x.dtype.type(lambd)))


def _kept(x, lambd):
    """Where hardshrink keeps ``x``: not ``-lambd <= x <= lambd`` (so at NaN too), ``lambd``
    rounded to ``x``'s dtype as torch's kernel takes it."""
    xp = namespace_of(x)
    shrunk = xp.abs(x) <= x.dtype.type(lambd)
    return xp.logical_not(shrunk, out=shrunk)


def _kept_or_zero(xp, values, keep):
    """``values`` where ``keep``, else +0: on NumPy, the bits ANDed with a mask of all ones
    where ``keep`` (one pass, no branch per element)."""
    integer = _SAME_SIZE_INTEGER.get(values.dtype.itemsize)
    if integer is None or xp.__name__ != "numpy" or values.shape != keep.shape:
        return xp.where(keep, values, values.dtype.type(0))
    mask = keep.astype(integer)
    xp.negative(mask, out=mask)
    xp.bitwise_and(values.view(integer), mask, out=mask)
    return mask.view(values.dtype)


def hardshrink(input, lambd=0.5):
    """Applies ``x if |x| > lambd else 0`` element-wise."""
    return _hardshrink_entry[0](input, lambd)


def _python_hardshrink(input, lambd):
    """``hardshrink`` in every case its compiled function (``ops._compiled_functions``) leaves to Python."""
    _check_float_activation(input, "hardshrink_cpu")
    if not input.is_floating_point():
        return where((input > lambd).logical_or(input < -lambd), input, 0.0)
    out = make(_hardshrink_forward(input._data, lambd))
    node = record(HardshrinkBackward0, (input,), out)
    if node is not None:
        node.save(input)
        node.lambd = lambd
    return out


_hardshrink_entry = _compiled_functions.register(_python_hardshrink, HardshrinkBackward0, kind="hardshrink")


def _threshold(input, threshold, value):
    return where(input > threshold, input, value)


def threshold(input, threshold, value, inplace=False):
    """Replaces each element that is not greater than ``threshold`` with ``value``."""
    return _maybe_inplace(_threshold, input, inplace, threshold, value)


def threshold_(input, threshold, value):
    """In-place version of :func:`threshold`."""
    return _maybe_inplace(_threshold, input, True, threshold, value)


class LogSigmoidBackward0(Node):
    """Backward of ``logsigmoid``: ``grad * sigmoid(-x)`` (1/2 at 0, as torch's). Saves the
    input; torch's buffer ``exp(-|x|)`` is made from it when read."""
    __slots__ = ()
    saved_fields = {"self": 0,
                    "buffer": lambda node: make(np.exp(-np.abs(node.saved_tensors[0]._data)))}
    jvp = jvp_by_transposition

    def backward(self, grad):
        x = self.saved_tensors[0]
        return (grad * (-x).sigmoid(),)

    def backward_arrays(self, grad):
        """The formula above on the arrays: large float32 ones on the vector-math loop (the
        sigmoid loop's expression), the others by NumPy's passes (the formula's bits)."""
        xd, gd = _gradient_operands(self.saved_tensors[0], grad, "logsigmoid backward")
        if xd is None:
            return None
        return (make(_log_sigmoid_gradient(grad._data if gd is None else gd, xd)),)


# large float32 gradients on the vector-math loop, else NumPy's passes (as softplus's)
_log_sigmoid_gradient = vector_math.when_large(
    "logsigmoid backward", lambda g, x: vector_math.gradient("logsigmoid", g, x),
    lambda g, x: g * _sigmoid_array(np, np.negative(x)))


def _log_sigmoid_numpy(x):
    magnitude = np.abs(x)
    return x * 0.5 - magnitude * 0.5 - np.log1p(np.exp(-magnitude))


# logsigmoid of a float array: ``min(x, 0)`` as ``(x - |x|) / 2`` less ``log1p(exp(-|x|))``,
# which stays finite for any x; large float32 arrays on the vector-math loop
log_sigmoid_arrays = vector_math.when_large(
    "logsigmoid", lambda x: vector_math.unary("logsigmoid", x), _log_sigmoid_numpy)


def logsigmoid(input):
    """Applies ``log(1 / (1 + exp(-x)))`` element-wise (numerically stable)."""
    out = _single_node(LogSigmoidBackward0, input, log_sigmoid_arrays)
    if out is not None:
        return out
    # min(x, 0) as (x - |x|) / 2: its gradient at 0 is torch's 1/2 (clamp's would be 1)
    magnitude = input.abs()
    return input * 0.5 - magnitude * 0.5 - (-magnitude).exp().log1p()



def glu(input, dim=-1):
    """The gated linear unit: ``a * sigmoid(b)`` with ``a, b`` the halves of ``input``
    along ``dim``."""
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = wrap_dim(dim, input.ndim)
    size = input.shape[d]
    if size % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {size}")
    a, b = input.split(size // 2, d)
    return a * b.sigmoid()




method()(hardshrink)
method()(prelu)
