"""Max and average pooling on oneDNN, forward and backward, over float32 NumPy arrays
(N, C, *spatial), row-major or channels-last: the primitive is created with the array's own
layout and reads and writes it in place (oneDNN has jit kernels for both, with two or three
spatial dimensions); other strides are copied row-major first. Each array is described with
its format's strides for every dimension, those of size 1 included: oneDNN recognizes a layout
only so. Outputs and input gradients take the input's memory format, as torch's pooling does.

Geometry as ember's pooling takes it: ``padding`` (the low side, per spatial dimension),
``out_spatial`` (which with ``ceil_mode`` may take a partial window at the high side),
``dilation`` as torch counts it (1 = dense). ``algorithm`` is ``MAX``, ``AVG_INCLUDE_PADDING``
or ``AVG_EXCLUDE_PADDING`` (torch's ``count_include_pad``).

Max pooling's training forward also writes a workspace: for each output, the position of its
maximum within its window (row-major over the kernel, padding included), which its backward
reads and from which ``window_argmax_indices`` derives torch's flat indices.

Each function returns None where oneDNN does not apply (the caller runs NumPy's path).
"""
import ctypes

import numpy as np

from . import capi
from .capi import call
from .conv import _build, _geometry, _readable, _right_pads
from .runtime import (MemoryDesc, Plan, describable, destroy_attr, element_strides, engine,
                      layout_key, plans, scratchpad_attr)
from ..._memory_format import contiguous_format, copy_as, empty_as, is_contiguous_as, suggest

__all__ = ["MAX", "AVG_INCLUDE_PADDING", "AVG_EXCLUDE_PADDING", "pool_forward", "pool_backward",
           "window_argmax_indices"]

MAX = capi.POOLING_MAX
AVG_INCLUDE_PADDING = capi.POOLING_AVG_INCLUDE_PADDING
AVG_EXCLUDE_PADDING = capi.POOLING_AVG_EXCLUDE_PADDING


def _layout(a):
    """``a`` as the primitive reads it in place: itself where it is row-major or channels-last,
    else a row-major copy."""
    a = _readable(a)
    if a.flags.c_contiguous or suggest(a) is not contiguous_format:
        return a
    return np.ascontiguousarray(a)


def _pads(in_spatial, out_spatial, kernel, stride, padding, dilation):
    return _right_pads(in_spatial, out_spatial, kernel, stride, [(p, p) for p in padding],
                       dilation)


def _counts_like_torch(algorithm, padding, pads):
    """torch's average including padding divides by the window clipped to the declared
    padding; oneDNN's by the whole kernel. They agree unless ``ceil_mode`` makes a window
    reach past the declared padding."""
    return algorithm != AVG_INCLUDE_PADDING or all(hi <= p for p, (_, hi) in zip(padding, pads))


def _geometry_args(kernel, stride, pads, dilation):
    strides, dilations, low, high = _geometry(stride, pads, dilation)
    return strides, capi.dims(kernel), dilations, low, high


def _forward_pd(src, dst, algorithm, geometry, prop, attr):
    pd = ctypes.c_void_p()
    call("dnnl_pooling_forward_primitive_desc_create", ctypes.byref(pd), engine().engine, prop,
         algorithm, src.handle, dst.handle, *geometry, attr, what="pooling forward")
    return pd


def _md(a, fmt):
    """``a``'s descriptor: dense in ``fmt``, its input's memory format, which it is."""
    return MemoryDesc.dense(a.shape, a.dtype, fmt)


def _workspace_type(plan, y, fmt):
    """The dtype of the plan's workspace where it holds one window position per output of
    ``y``, laid out as ``y`` (which ``window_argmax_indices`` reads), else None."""
    for dtype in (np.uint8, np.int32):
        like = MemoryDesc.dense(y.shape, np.dtype(dtype), fmt)
        if capi.lib().dnnl_memory_desc_equal(plan.workspace_md, like.handle):
            return np.dtype(dtype)
    return None


def pool_forward(x, algorithm, kernel, stride, padding, dilation, out_spatial, training):
    """``(y, workspace)``: ``x`` pooled, and for max pooling in ``training`` the workspace its
    backward takes, an integer array shaped and laid out as ``y`` (else None)."""
    x = _layout(x)
    if not describable(x) or x.dtype != np.float32:
        return None
    kernel, stride, dilation = tuple(kernel), tuple(stride), tuple(dilation)
    pads = _pads(x.shape[2:], out_spatial, kernel, stride, padding, dilation)
    if not _counts_like_torch(algorithm, padding, pads):
        return None
    prop = capi.FORWARD_TRAINING if training and algorithm == MAX else capi.FORWARD_INFERENCE
    fmt = suggest(x)
    y = empty_as(np, x.shape[:2] + tuple(out_spatial), x.dtype, fmt)
    key = ("pool_forward", layout_key(x), y.strides, algorithm, kernel, stride, pads, dilation,
           prop)

    def make():
        attr = scratchpad_attr()
        try:
            src, dst = _md(x, fmt), _md(y, fmt)
            pd = _forward_pd(src, dst, algorithm, _geometry_args(kernel, stride, pads, dilation),
                             prop, attr)
        finally:
            destroy_attr(attr)
        plan = Plan(pd, "pooling forward", {}, {}, {capi.ARG_SRC: src, capi.ARG_DST: dst})
        return plan if not plan.workspace_bytes or _workspace_type(plan, y, fmt) else None

    plan = plans.get(key, lambda: _build(make))
    if plan is None:
        return None
    arrays = {capi.ARG_SRC: x, capi.ARG_DST: y}
    workspace = None
    if plan.workspace_bytes:
        dtype = np.uint8 if plan.workspace_bytes == y.size else np.int32
        workspace = arrays[capi.ARG_WORKSPACE] = empty_as(np, y.shape, dtype, fmt)
    plan(arrays)
    return y, workspace


def pool_backward(g, workspace, algorithm, in_shape, kernel, stride, padding, dilation, fmt):
    """The gradient (``in_shape``, in memory format ``fmt``, the forward input's) of the
    pooling whose output gradient is ``g``; max pooling reads its forward's ``workspace``."""
    if type(g) is not np.ndarray or g.dtype != np.float32 or not g.size:
        return None
    if not is_contiguous_as(g, fmt):
        g = copy_as(g, fmt)  # the layout the forward wrote its output (and workspace) in
    kernel, stride, dilation = tuple(kernel), tuple(stride), tuple(dilation)
    pads = _pads(in_shape[2:], g.shape[2:], kernel, stride, padding, dilation)
    if not _counts_like_torch(algorithm, padding, pads):
        return None
    gx = empty_as(np, tuple(in_shape), g.dtype, fmt)
    key = ("pool_backward", layout_key(g), gx.strides, algorithm, kernel, stride, pads, dilation)

    def make():
        geometry = _geometry_args(kernel, stride, pads, dilation)
        diff_src, diff_dst = _md(gx, fmt), _md(g, fmt)
        attr = scratchpad_attr()
        try:
            hint = _forward_pd(diff_src, diff_dst, algorithm, geometry, capi.FORWARD_TRAINING,
                               attr)
            try:
                pd = ctypes.c_void_p()
                call("dnnl_pooling_backward_primitive_desc_create", ctypes.byref(pd),
                     engine().engine, algorithm, diff_src.handle, diff_dst.handle, *geometry,
                     hint, attr, what="pooling backward")
            finally:
                capi.lib().dnnl_primitive_desc_destroy(hint)
        finally:
            destroy_attr(attr)
        return Plan(pd, "pooling backward", {}, {},
                    {capi.ARG_DIFF_DST: diff_dst, capi.ARG_DIFF_SRC: diff_src})

    plan = plans.get(key, lambda: _build(make))
    if plan is None or plan.workspace_bytes and (
            workspace is None or workspace.nbytes != plan.workspace_bytes
            or workspace.shape != g.shape or element_strides(workspace) != element_strides(g)):
        return None
    plan({capi.ARG_DIFF_DST: g, capi.ARG_DIFF_SRC: gx, capi.ARG_WORKSPACE: workspace})
    return gx


def window_argmax_indices(workspace, in_spatial, kernel, stride, padding, dilation):
    """torch's indices of a max pooling from its oneDNN ``workspace`` (shaped as the output):
    for each output, the flat position of its maximum in its (unpadded) input plane."""
    offsets = workspace.astype(np.int64)
    nd = len(kernel)
    flat = np.zeros(workspace.shape, np.int64)
    window = 1
    plane = 1
    for i in reversed(range(nd)):
        along = offsets // window % kernel[i]
        start = np.arange(workspace.shape[2 + i]) * stride[i] - padding[i]
        position = start.reshape((-1,) + (1,) * (nd - 1 - i)) + along * dilation[i]
        flat += position * plane
        window *= kernel[i]
        plane *= in_spatial[i]
    return flat
