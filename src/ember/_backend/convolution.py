"""The convolution's array kernels, each a ``KernelChoice`` between oneDNN's primitives and
NumPy's GEMM lowering (``kernels``, which also serves CuPy):

- ``forward(x, w, bias, stride, pads, dilation, groups)``: ``conv(x, w) + bias``;
- ``input_grad(g, w, bias, in_spatial, stride, pads, dilation, groups)``: the adjoint in the
  input, i.e. the transposed convolution of ``g`` (plus ``bias``, which may be None);
- ``weight_grad(x, g, kernel, stride, pads, dilation, groups, reordered=None, bias=False)``:
  the gradient in the weight, and with ``bias`` ``(weight_grad, bias's gradient)``;
- ``backward(x, g, w, ..., keep_layout=False, bias=False)``: ``(input_grad, weight_grad)``
  together, the bias's gradient after them with ``bias`` (oneDNN's backward-weights primitive
  computes it with the weight's, as torch's does), and
  ``forward_and_weight_grad(gy, g, w, ...)``: a transposed convolution's two gradients
  ``(conv(gy, w), weight_grad(gy, g))``, where NumPy's path builds the columns once for both.

Arrays come and go in the inputs' dtype; NumPy computes float16/bfloat16 in float32 and rounds
once (``widened``/``narrowed``), as torch's CPU kernels accumulate them. ``forward`` and
``backward`` also take activations held in oneDNN's layout (``onednn.blocked.BlockedArray``)
and, with ``keep_layout``, may give them (the convolution's output, the input gradient);
NumPy's kernels read such an array as the plain array it stands for.
"""
from . import im2col, namespace_of, onednn
from .onednn.blocked import plain_array
from .choice import KernelChoice
from .precision import narrowed, widened
from .._memory_format import contiguous_format, copy_as, suggest

__all__ = ["forward", "input_grad", "weight_grad", "backward", "forward_and_weight_grad"]


def _add_bias(y, bias):
    if bias is not None:
        y += bias.reshape((-1,) + (1,) * (y.ndim - 2))
    return y


def _in_format_of(result, array):
    """``result`` in ``array``'s memory format (channels-last stays channels-last)."""
    fmt = suggest(array)
    return result if fmt is contiguous_format else copy_as(result, fmt)


def _numpy_forward(x, w, bias, stride, pads, dilation, groups, keep_layout=False):
    x = plain_array(x)
    xp = namespace_of(x)
    y = im2col.conv_forward(xp, widened(x), widened(w), stride, pads, dilation, groups)
    return _in_format_of(narrowed(_add_bias(y, bias), x.dtype), x)


def _numpy_input_grad(g, w, bias, in_spatial, stride, pads, dilation, groups, keep_layout=False):
    g = plain_array(g)
    xp = namespace_of(g)
    gx = im2col.conv_input_grad(xp, widened(g), widened(w), tuple(in_spatial), stride, pads,
                                 dilation, groups)
    return _in_format_of(narrowed(_add_bias(gx, bias), g.dtype), g)


def _numpy_weight_grad(x, g, kernel, stride, pads, dilation, groups, reordered=None, bias=False):
    x, g = plain_array(x), plain_array(g)
    xp = namespace_of(x)
    gw = narrowed(im2col.conv_weight_grad(xp, widened(x), widened(g), tuple(kernel), stride, pads,
                                          dilation, groups), x.dtype)
    return (gw, _channel_sums(g)) if bias else gw


def _channel_sums(g):
    """The bias's gradient: ``g`` summed over all but its channels (in float64)."""
    return namespace_of(g).sum(g, axis=(0,) + tuple(range(2, g.ndim)), dtype="float64").astype(g.dtype)


def _numpy_backward(x, g, w, stride, pads, dilation, groups, keep_layout=False, bias=False):
    x, g = plain_array(x), plain_array(g)
    pair = im2col.conv_backward(namespace_of(x), widened(x), widened(g), widened(w), stride,
                                 pads, dilation, groups)
    if pair is None:
        pair = (_numpy_input_grad(g, w, None, x.shape[2:], stride, pads, dilation, groups),
                _numpy_weight_grad(x, g, w.shape[2:], stride, pads, dilation, groups))
    else:
        pair = tuple(narrowed(a, x.dtype) for a in pair)
    return (*pair, _channel_sums(g)) if bias else pair


def _numpy_forward_and_weight_grad(gy, g, w, stride, pads, dilation, groups, keep_layout=False):
    gy, g = plain_array(gy), plain_array(g)
    pair = im2col.conv_forward_and_weight_grad(namespace_of(gy), widened(gy), widened(g),
                                                widened(w), stride, pads, dilation, groups)
    if pair is None:
        return (_numpy_forward(gy, w, None, stride, pads, dilation, groups),
                _numpy_weight_grad(gy, g, w.shape[2:], stride, pads, dilation, groups))
    return tuple(narrowed(a, gy.dtype) for a in pair)


def _onednn_input_grad(g, w, bias, in_spatial, stride, pads, dilation, groups, keep_layout=False):
    gx = onednn.conv.conv_backward_data(g, w, tuple(in_spatial), stride, pads, dilation, groups,
                                        keep_layout and bias is None)
    return gx if gx is None or bias is None else _add_bias(gx, bias)


forward = KernelChoice("convolution", onednn=onednn.conv.conv_forward, numpy=_numpy_forward)
input_grad = KernelChoice("convolution input gradient", onednn=_onednn_input_grad,
                          numpy=_numpy_input_grad)
weight_grad = KernelChoice("convolution weight gradient", onednn=onednn.conv.conv_backward_weights,
                           numpy=_numpy_weight_grad)
backward = KernelChoice("convolution backward", onednn=onednn.conv.conv_backward,
                        numpy=_numpy_backward)
forward_and_weight_grad = KernelChoice("transposed convolution backward",
                                       onednn=onednn.conv.conv_forward_and_weight_grad,
                                       numpy=_numpy_forward_and_weight_grad)
