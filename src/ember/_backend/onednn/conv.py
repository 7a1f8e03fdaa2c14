"""Convolutions on oneDNN: the forward, its adjoint in the input (``backward_data``, which is
also the transposed convolution's forward) and its gradient in the weight
(``backward_weights``), over NumPy arrays in torch's layouts (N, C, *spatial) and
(O, C/groups, *kernel), plain or strided.

Row-major activations: each primitive is created with format ``any``, so oneDNN picks its
direct blocked kernels, and the plan reorders into and out of them (what torch's own CPU
convolutions do per call), except where the caller keeps the layout (``keep_layout``: the
output, or the input gradient, is left as a ``BlockedArray``) and where an input is a
``BlockedArray`` in the layout the primitive chose. Channels-last activations: the primitive is created with their own
layout and reads and writes them in place. Outputs take their input's memory format. Geometry
is given as ember's kernels take it: ``pads`` as ``((low, high), ...)`` per spatial dimension,
``dilation`` as torch counts it (1 = dense).

Every function returns None where oneDNN cannot run the case (a geometry or data type it
rejects, or only its generic loops apply): the caller then runs NumPy's path.
"""
import ctypes

import numpy as np

from . import capi
from .blocked import BlockedArray
from .capi import OneDNNError, call
from ..._memory_format import contiguous_format, empty_as
from .runtime import (MemoryDesc, Plan, Reordered, data_type, describable, destroy_attr, engine,
                      format_of, layout_key, plans, scratchpad_attr)

__all__ = ["conv_forward", "conv_backward_data", "conv_backward_weights", "conv_backward",
           "conv_forward_and_weight_grad"]


_DST, _DIFF_SRC = frozenset({capi.ARG_DST}), frozenset({capi.ARG_DIFF_SRC})


def _grouped_weight(w, groups):
    """torch's weight (O, C/g, *k) as oneDNN's grouped weight (g, O/g, C/g, *k): a view."""
    if groups == 1:
        return w
    return w.reshape((groups, w.shape[0] // groups) + w.shape[1:])


def _geometry(stride, pads, dilation):
    return (capi.dims(stride), capi.dims([d - 1 for d in dilation]),
            capi.dims([lo for lo, _ in pads]), capi.dims([hi for _, hi in pads]))


def _right_pads(in_spatial, out_spatial, kernel, stride, pads, dilation):
    """Right paddings that make oneDNN's size rule ``out = (in + l + r - extent) / s + 1`` exact
    (a transposed convolution's output_padding adds rows the forward would not have)."""
    right = []
    for i, o, k, s, (lo, _), d in zip(in_spatial, out_spatial, kernel, stride, pads, dilation):
        right.append((o - 1) * s + d * (k - 1) + 1 - i - lo)
    return tuple((lo, r) for (lo, _), r in zip(pads, right))


def _forward_pd(src, weights, bias, dst, geometry, prop, attr):
    pd = ctypes.c_void_p()
    call("dnnl_convolution_forward_primitive_desc_create", ctypes.byref(pd),
         _engine(), prop, capi.CONVOLUTION_DIRECT, src.handle, weights.handle,
         bias.handle if bias is not None else None, dst.handle, *geometry, attr,
         what="convolution forward")
    return pd


def _backward_pd(create, what, src, weights, dst, geometry, descs):
    """The backward primitive descriptor made by the C function ``create`` from ``descs`` (the
    memory descriptors it takes), hinted by the forward convolution of ``src``, ``weights``
    and ``dst`` with the same geometry, as oneDNN requires."""
    attr = scratchpad_attr()
    try:
        hint = _forward_pd(src, weights, None, dst, geometry, capi.FORWARD_TRAINING, attr)
        try:
            pd = ctypes.c_void_p()
            call(create, ctypes.byref(pd), _engine(), capi.CONVOLUTION_DIRECT, *descs, *geometry,
                 hint, attr, what=what)
        finally:
            capi.lib().dnnl_primitive_desc_destroy(hint)
    finally:
        destroy_attr(attr)
    return pd


def _engine():
    return engine().engine


def _activation_md(array):
    """The layout a primitive is created with for an activation: a channels-last array's own
    (oneDNN has direct kernels for it, so nothing is reordered, as torch runs channels-last
    convolutions), else ``any`` (oneDNN's blocked layout, with reorders from and to the user's)."""
    if format_of(array) is not contiguous_format:
        return MemoryDesc.of(array)
    return MemoryDesc.any(array.shape, array.dtype)


def _usable(plan):
    """A plan worth running: oneDNN picked one of its jit-compiled kernels (``jit:avx512_core``,
    ``brgconv:...``, ``brdgmm_dw:...`` for channels-last depthwise, ``bnorm_jit:...``). Its
    generic C++ loops (``ref:any``, and ``ncsp_bnorm:any`` for row-major batch norm) are slower
    than NumPy's path."""
    if plan is None:
        return False
    name = plan.implementation()
    return "jit" in name or name.startswith(("brg", "brdgmm"))


def _build(make):
    try:
        plan = make()
    except OneDNNError:
        return None
    return plan if _usable(plan) else None


def _arrays_ok(*arrays):
    return all(describable(a) for a in arrays)


def _readable(a):
    """``a`` as oneDNN can read it: itself, or a row-major copy of a broadcast or reversed
    view (the gradient of a ``sum`` is a broadcast one)."""
    if type(a) is np.ndarray and not describable(a) and a.size and data_type(a.dtype):
        return np.ascontiguousarray(a)
    return a


def conv_forward(x, w, bias, stride, pads, dilation, groups, keep_layout=False, reordered=None):
    """``y = conv(x, w) + bias`` (bias may be None), or None where oneDNN does not apply.
    ``x`` may be a ``BlockedArray``; with ``keep_layout``, ``y`` is one where the primitive
    chose a layout of its own. ``reordered``: a ``Reordered`` shared with the other primitives
    that read ``x`` or ``w``."""
    x, w = _readable(x), _readable(w)
    wg = _grouped_weight(w, groups)
    if not _arrays_ok(x, wg) or (bias is not None and not _arrays_ok(bias)) \
            or bias is not None and bias.dtype != x.dtype or w.dtype != x.dtype:
        return None
    kernel = w.shape[2:]
    out_spatial = tuple((s + lo + hi - d * (k - 1) - 1) // st + 1 for s, (lo, hi), k, st, d
                        in zip(x.shape[2:], pads, kernel, stride, dilation))
    pads = _right_pads(x.shape[2:], out_spatial, kernel, stride, pads, dilation)
    y = empty_as(np, (x.shape[0], w.shape[0]) + out_spatial, x.dtype, format_of(x))
    key = ("conv_forward", layout_key(x), layout_key(wg),
           None if bias is None else layout_key(bias), y.strides, stride, pads, dilation, groups)

    def make():
        attr = scratchpad_attr()
        try:
            bias_md = MemoryDesc.of(bias) if bias is not None else None
            pd = _forward_pd(_activation_md(x), MemoryDesc.any(wg.shape, x.dtype), bias_md,
                             _activation_md(y), _geometry(stride, pads, dilation),
                             capi.FORWARD_TRAINING, attr)
        finally:
            destroy_attr(attr)
        inputs = {capi.ARG_SRC: (MemoryDesc.of(x), capi.QUERY_SRC_MD),
                  capi.ARG_WEIGHTS: (MemoryDesc.of(wg), capi.QUERY_WEIGHTS_MD)}
        if bias is not None:
            inputs[capi.ARG_BIAS] = (bias_md, (capi.QUERY_WEIGHTS_MD, 1))
        outputs = {capi.ARG_DST: (MemoryDesc.of(y), capi.QUERY_DST_MD)}
        return Plan(pd, "convolution forward", inputs, outputs)

    plan = plans.get(key, lambda: _build(make))
    if plan is None:
        return None
    arrays = {capi.ARG_SRC: x, capi.ARG_WEIGHTS: wg, capi.ARG_DST: y}
    if bias is not None:
        arrays[capi.ARG_BIAS] = bias
    kept = plan(arrays, reordered, _DST if keep_layout else ())
    return kept.get(capi.ARG_DST, y)


def conv_backward_data(g, w, in_spatial, stride, pads, dilation, groups, keep_layout=False,
                       reordered=None):
    """The convolution's input gradient (N, C, *in_spatial) from its output gradient ``g``:
    the transposed convolution of ``g`` with ``w``. None where oneDNN does not apply.
    ``keep_layout``, ``reordered``: as for ``conv_forward``."""
    g, w = _readable(g), _readable(w)
    wg = _grouped_weight(w, groups)
    if not _arrays_ok(g, wg) or w.dtype != g.dtype:
        return None
    kernel = w.shape[2:]
    out_spatial = g.shape[2:]
    pads = _right_pads(in_spatial, out_spatial, kernel, stride, pads, dilation)
    channels = w.shape[1] * groups
    gx = empty_as(np, (g.shape[0], channels) + tuple(in_spatial), g.dtype, format_of(g))
    given = g.layout if g.__class__ is BlockedArray else None
    key = ("conv_backward_data", layout_key(g), layout_key(wg), tuple(in_spatial), gx.strides,
           stride, pads, dilation, groups, given and given.key)

    def make(dst_md):
        src, wei, dst = _activation_md(gx), MemoryDesc.any(wg.shape, g.dtype), dst_md()
        pd = _backward_pd("dnnl_convolution_backward_data_primitive_desc_create",
                          "convolution backward data", src, wei, dst,
                          _geometry(stride, pads, dilation),
                          (src.handle, wei.handle, dst.handle))
        inputs = {capi.ARG_DIFF_DST: (MemoryDesc.of(g), capi.QUERY_DIFF_DST_MD),
                  capi.ARG_WEIGHTS: (MemoryDesc.of(wg), capi.QUERY_WEIGHTS_MD)}
        outputs = {capi.ARG_DIFF_SRC: (MemoryDesc.of(gx), capi.QUERY_DIFF_SRC_MD)}
        return Plan(pd, "convolution backward data", inputs, outputs)

    def build():
        # an output gradient held in the forward's layout: ask for a kernel that reads it as
        # it is (and so writes the input gradient in the forward's input layout), else any
        plan = None if given is None else _build(lambda: make(
            lambda: MemoryDesc.copy_of(given.md)))
        return plan or _build(lambda: make(lambda: _activation_md(g)))

    plan = plans.get(key, build)
    if plan is None:
        return None
    kept = plan({capi.ARG_DIFF_DST: g, capi.ARG_WEIGHTS: wg, capi.ARG_DIFF_SRC: gx}, reordered,
                _DIFF_SRC if keep_layout else ())
    return kept.get(capi.ARG_DIFF_SRC, gx)


def conv_backward_weights(x, g, kernel, stride, pads, dilation, groups, reordered=None,
                          bias=False):
    """The convolution's weight gradient (O, C/groups, *kernel) from its input ``x`` and output
    gradient ``g``; with ``bias``, ``(weight gradient, bias gradient (O,))`` from the same
    primitive. None where oneDNN does not apply. ``reordered``: as for ``conv_forward``."""
    x, g = _readable(x), _readable(g)
    if not _arrays_ok(x, g) or x.dtype != g.dtype:
        return None
    kernel = tuple(kernel)
    out_spatial = g.shape[2:]
    pads = _right_pads(x.shape[2:], out_spatial, kernel, stride, pads, dilation)
    out_channels, channels = g.shape[1], x.shape[1]
    gw = np.empty((out_channels, channels // groups) + kernel, x.dtype)
    gwg = _grouped_weight(gw, groups)
    gb = np.empty(out_channels, x.dtype) if bias else None
    key = ("conv_backward_weights", layout_key(x), layout_key(g), kernel, stride, pads, dilation,
           groups, bias)

    def make():
        src, wei, dst = _activation_md(x), MemoryDesc.any(gwg.shape, x.dtype), _activation_md(g)
        bias_md = MemoryDesc.of(gb) if bias else None
        pd = _backward_pd("dnnl_convolution_backward_weights_primitive_desc_create",
                          "convolution backward weights", src, wei, dst,
                          _geometry(stride, pads, dilation),
                          (src.handle, wei.handle, bias_md.handle if bias else None, dst.handle))
        inputs = {capi.ARG_SRC: (MemoryDesc.of(x), capi.QUERY_SRC_MD),
                  capi.ARG_DIFF_DST: (MemoryDesc.of(g), capi.QUERY_DIFF_DST_MD)}
        outputs = {capi.ARG_DIFF_WEIGHTS: (MemoryDesc.of(gwg), capi.QUERY_DIFF_WEIGHTS_MD)}
        if bias:
            outputs[capi.ARG_DIFF_BIAS] = (bias_md, (capi.QUERY_DIFF_WEIGHTS_MD, 1))
        return Plan(pd, "convolution backward weights", inputs, outputs)

    plan = plans.get(key, lambda: _build(make))
    if plan is None:
        return None
    arrays = {capi.ARG_SRC: x, capi.ARG_DIFF_DST: g, capi.ARG_DIFF_WEIGHTS: gwg}
    if bias:
        arrays[capi.ARG_DIFF_BIAS] = gb
    plan(arrays, reordered)
    return (gw, gb) if bias else gw


def conv_backward(x, g, w, stride, pads, dilation, groups, keep_layout=False, bias=False):
    """Both gradients of the convolution of ``x`` with ``w``, ``(input gradient, weight
    gradient)``, and with ``bias`` the bias's gradient after them, from its output gradient
    ``g``, which is converted into oneDNN's layout once where the two primitives chose the
    same one. None where oneDNN does not apply. ``keep_layout``: the input gradient may be a
    ``BlockedArray`` (as for ``conv_forward``)."""
    g = _readable(g)
    reordered = Reordered(g)
    gx = conv_backward_data(g, w, x.shape[2:], stride, pads, dilation, groups, keep_layout,
                            reordered)
    if gx is None:
        return None
    weights = conv_backward_weights(x, g, w.shape[2:], stride, pads, dilation, groups, reordered,
                                    bias)
    if weights is None:
        return None
    return (gx, *weights) if bias else (gx, weights)


def conv_forward_and_weight_grad(gy, g, w, stride, pads, dilation, groups, keep_layout=False):
    """A transposed convolution's two gradients, ``(conv(gy, w), weight gradient)``, from its
    input ``gy`` and output gradient ``g``: ``gy`` is converted into oneDNN's layout once
    where the two primitives chose the same one. None where oneDNN does not apply.
    ``keep_layout``: as for ``conv_forward``."""
    gy = _readable(gy)
    reordered = Reordered(gy)
    y = conv_forward(gy, w, None, stride, pads, dilation, groups, keep_layout, reordered)
    if y is None:
        return None
    gw = conv_backward_weights(gy, g, w.shape[2:], stride, pads, dilation, groups, reordered)
    return None if gw is None else (y, gw)
