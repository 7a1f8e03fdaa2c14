"""Batch and layer normalization on oneDNN, over float32 NumPy arrays read and written in
place.

Batch norm: row-major (N, C, L) or channels-last (N, C, *S) arrays (oneDNN has jit kernels for
both); per-channel arrays (``weight``, ``bias``, ``mean``, ``var``) are float32 vectors of
length C; the statistics are the biased variance, as torch's batch norm computes them for
normalizing.

Layer norm: row-major (R, D) arrays normalized along D, with (D,) ``weight`` and ``bias`` (or
None) and per-row statistics (R,), the biased variance.

Each function returns None where oneDNN does not apply (the caller runs NumPy's path).
"""
import ctypes

import numpy as np

from . import capi
from .capi import call
from .blocked import BlockedArray, same_layout
from .runtime import MemoryDesc, Plan, destroy_attr, engine, plans, scratchpad_attr
from .conv import _build
from ..._memory_format import contiguous_format, copy_as, suggest

__all__ = ["batch_norm_forward", "batch_norm_backward", "layer_norm_forward",
           "layer_norm_backward"]

_FLAGS = capi.USE_SCALE | capi.USE_SHIFT


def _applies(*arrays):
    """float32 NumPy arrays, row-major (N, C, L) or channels-last (N, C, *S), or float32
    ``BlockedArray``s."""
    return all(a.dtype == np.float32 and (a.__class__ is BlockedArray or (
        type(a) is np.ndarray and a.size
        and (a.flags.c_contiguous or suggest(a) is not contiguous_format))) for a in arrays)


def _layout_of(x):
    """What a plan's key holds of ``x``'s layout, the descriptor to create it with, and an
    empty array like ``x`` (in its layout; for a ``BlockedArray``, another one)."""
    if x.__class__ is BlockedArray:
        layout = x.layout
        return (layout.key, lambda: MemoryDesc.copy_of(layout.md),
                lambda: BlockedArray(layout, np.empty(layout.nbytes, np.uint8)))
    return (x.shape, x.strides), lambda: MemoryDesc.of(x), lambda: np.empty_like(x)


def _vector(values, fill, channels):
    if values is None:
        return np.full(channels, fill, np.float32)
    return np.ascontiguousarray(values, np.float32)


def _forward_pd(x_md, eps, flags, prop, attr):
    pd = ctypes.c_void_p()
    call("dnnl_batch_normalization_forward_primitive_desc_create", ctypes.byref(pd),
         engine().engine, prop, x_md.handle, x_md.handle, ctypes.c_float(eps), flags, attr,
         what="batch normalization forward")
    return pd


def _stat_md(channels):
    return MemoryDesc.strided((channels,), (1,), np.dtype(np.float32))


def batch_norm_forward(x, mean, var, weight, bias, eps):
    """``(y, mean, var)``: ``x`` normalized by the batch's statistics (``mean`` and ``var``
    None: training), or by the given ones (inference), then scaled by ``weight`` and shifted
    by ``bias`` (None: 1 and 0). ``y`` is in ``x``'s layout (a ``BlockedArray`` for one)."""
    if not _applies(x):
        return None
    channels = x.shape[1]
    training = mean is None
    flags = _FLAGS | (0 if training else capi.USE_GLOBAL_STATS)
    layout_key, layout_md, empty_like = _layout_of(x)
    key = ("batch_norm_forward", layout_key, float(eps), flags)

    def make():
        x_md = layout_md()
        attr = scratchpad_attr()
        try:
            pd = _forward_pd(x_md, eps, flags, capi.FORWARD_TRAINING, attr)
        finally:
            destroy_attr(attr)
        fixed = {arg: _stat_md(channels) for arg in
                 (capi.ARG_MEAN, capi.ARG_VARIANCE, capi.ARG_SCALE, capi.ARG_SHIFT)}
        fixed[capi.ARG_SRC] = x_md
        fixed[capi.ARG_DST] = layout_md()
        return Plan(pd, "batch normalization forward", {}, {}, fixed)

    plan = plans.get(key, lambda: _build(make))
    if plan is None:
        return None
    y = empty_like()
    if training:
        mean, var = np.empty(channels, np.float32), np.empty(channels, np.float32)
    else:
        mean, var = _vector(mean, 0, channels), _vector(var, 1, channels)
    plan({capi.ARG_SRC: x, capi.ARG_DST: y, capi.ARG_MEAN: mean, capi.ARG_VARIANCE: var,
          capi.ARG_SCALE: _vector(weight, 1, channels), capi.ARG_SHIFT: _vector(bias, 0, channels)})
    return y, mean, var


def batch_norm_backward(grad, x, mean, var, weight, eps, training):
    """``(grad_input, grad_weight, grad_bias)`` of batch norm, whose statistics ``mean`` and
    ``var`` were the batch's (``training``) or fixed. ``x`` and ``grad`` may be
    ``BlockedArray``s of one layout (then ``grad_input`` is one too)."""
    if not _applies(x) or grad.shape != x.shape:
        return None
    if x.__class__ is BlockedArray or grad.__class__ is BlockedArray:
        if not (x.__class__ is grad.__class__ and same_layout(x, grad)):
            return None
    elif type(grad) is not np.ndarray:
        return None
    elif grad.strides != x.strides or grad.dtype != np.float32:
        grad = copy_as(grad.astype(np.float32, copy=False), suggest(x))
    channels = x.shape[1]
    flags = _FLAGS | (0 if training else capi.USE_GLOBAL_STATS)
    layout_key, layout_md, empty_like = _layout_of(x)
    key = ("batch_norm_backward", layout_key, float(eps), flags)

    def make():
        x_md = layout_md()
        attr = scratchpad_attr()
        try:
            hint = _forward_pd(x_md, eps, flags, capi.FORWARD_TRAINING, attr)
            try:
                pd = ctypes.c_void_p()
                call("dnnl_batch_normalization_backward_primitive_desc_create", ctypes.byref(pd),
                     engine().engine, capi.BACKWARD, x_md.handle, x_md.handle, x_md.handle,
                     ctypes.c_float(eps), flags, hint, attr, what="batch normalization backward")
            finally:
                capi.lib().dnnl_primitive_desc_destroy(hint)
        finally:
            destroy_attr(attr)
        fixed = {arg: _stat_md(channels) for arg in
                 (capi.ARG_MEAN, capi.ARG_VARIANCE, capi.ARG_SCALE, capi.ARG_DIFF_SCALE,
                  capi.ARG_DIFF_SHIFT)}
        for arg in (capi.ARG_SRC, capi.ARG_DIFF_DST, capi.ARG_DIFF_SRC):
            fixed[arg] = layout_md()
        return Plan(pd, "batch normalization backward", {}, {}, fixed)

    plan = plans.get(key, lambda: _build(make))
    if plan is None:
        return None
    grad_x = empty_like()
    grad_w, grad_b = np.empty(channels, np.float32), np.empty(channels, np.float32)
    plan({capi.ARG_SRC: x, capi.ARG_DIFF_DST: grad, capi.ARG_DIFF_SRC: grad_x,
          capi.ARG_MEAN: _vector(mean, 0, channels), capi.ARG_VARIANCE: _vector(var, 1, channels),
          capi.ARG_SCALE: _vector(weight, 1, channels), capi.ARG_DIFF_SCALE: grad_w,
          capi.ARG_DIFF_SHIFT: grad_b})
    return grad_x, grad_w, grad_b


def _rows_applies(x):
    """A float32 row-major (R, D) NumPy array."""
    return (type(x) is np.ndarray and x.dtype == np.float32 and x.size and x.ndim == 2
            and x.flags.c_contiguous)


def _vectors(*arrays):
    """Each array (or None) as a contiguous float32 vector."""
    return [None if a is None else np.ascontiguousarray(a, np.float32).reshape(-1)
            for a in arrays]


def _affine_flags(weight, bias):
    return (capi.USE_SCALE if weight is not None else 0) | \
        (capi.USE_SHIFT if bias is not None else 0)


def _layer_norm_forward_pd(x_md, stat_md, eps, flags, attr):
    pd = ctypes.c_void_p()
    call("dnnl_layer_normalization_forward_primitive_desc_create", ctypes.byref(pd),
         engine().engine, capi.FORWARD_TRAINING, x_md.handle, x_md.handle, stat_md.handle,
         ctypes.c_float(eps), flags, attr, what="layer normalization forward")
    return pd


def _layer_norm_args(x, flags, args):
    """The plan's arguments: ``x``'s layout for each of ``args``, then the statistics (R,)
    and, as ``flags`` ask, the (D,) scale and shift (the backward takes both as well, and
    gives their gradients)."""
    rows, width = x.shape
    fixed = {arg: MemoryDesc.of(x) for arg in args}
    fixed[capi.ARG_MEAN], fixed[capi.ARG_VARIANCE] = _stat_md(rows), _stat_md(rows)
    backward = capi.ARG_DIFF_SRC in args
    for flag, arg, diff in ((capi.USE_SCALE, capi.ARG_SCALE, capi.ARG_DIFF_SCALE),
                            (capi.USE_SHIFT, capi.ARG_SHIFT, capi.ARG_DIFF_SHIFT)):
        if flags & flag:
            fixed[arg] = _stat_md(width)
            if backward:
                fixed[diff] = _stat_md(width)
    return fixed


def layer_norm_forward(x, weight, bias, eps):
    """``(y, mean, var)``: the rows of ``x`` normalized, then scaled by ``weight`` and shifted
    by ``bias`` (each may be None)."""
    if not _rows_applies(x):
        return None
    weight, bias = _vectors(weight, bias)
    flags = _affine_flags(weight, bias)
    key = ("layer_norm_forward", x.shape, float(eps), flags)

    def make():
        fixed = _layer_norm_args(x, flags, (capi.ARG_SRC, capi.ARG_DST))
        attr = scratchpad_attr()
        try:
            pd = _layer_norm_forward_pd(fixed[capi.ARG_SRC], fixed[capi.ARG_MEAN], eps, flags,
                                        attr)
        finally:
            destroy_attr(attr)
        return Plan(pd, "layer normalization forward", {}, {}, fixed)

    plan = plans.get(key, lambda: _build(make))
    if plan is None:
        return None
    rows = x.shape[0]
    y, mean, var = np.empty_like(x), np.empty(rows, np.float32), np.empty(rows, np.float32)
    plan({capi.ARG_SRC: x, capi.ARG_DST: y, capi.ARG_MEAN: mean, capi.ARG_VARIANCE: var,
          capi.ARG_SCALE: weight, capi.ARG_SHIFT: bias})
    return y, mean, var


def layer_norm_backward(grad, x, mean, var, weight, bias, eps):
    """``(grad_input, grad_weight, grad_bias)`` of layer norm with per-row ``mean`` and ``var``
    (``grad_weight``/``grad_bias`` None where ``weight``/``bias`` is None)."""
    if not _rows_applies(x) or type(grad) is not np.ndarray or grad.shape != x.shape:
        return None
    grad = np.ascontiguousarray(grad, np.float32)
    mean, var, weight, bias = _vectors(mean, var, weight, bias)
    flags = _affine_flags(weight, bias)
    key = ("layer_norm_backward", x.shape, float(eps), flags)

    def make():
        fixed = _layer_norm_args(x, flags, (capi.ARG_SRC, capi.ARG_DIFF_DST, capi.ARG_DIFF_SRC))
        x_md = fixed[capi.ARG_SRC]
        attr = scratchpad_attr()
        try:
            hint = _layer_norm_forward_pd(x_md, fixed[capi.ARG_MEAN], eps, flags, attr)
            try:
                pd = ctypes.c_void_p()
                call("dnnl_layer_normalization_backward_primitive_desc_create",
                     ctypes.byref(pd), engine().engine,
                     capi.BACKWARD if flags else capi.BACKWARD_DATA, x_md.handle, x_md.handle,
                     x_md.handle, fixed[capi.ARG_MEAN].handle, ctypes.c_float(eps), flags, hint,
                     attr, what="layer normalization backward")
            finally:
                capi.lib().dnnl_primitive_desc_destroy(hint)
        finally:
            destroy_attr(attr)
        return Plan(pd, "layer normalization backward", {}, {}, fixed)

    plan = plans.get(key, lambda: _build(make))
    if plan is None:
        return None
    width = x.shape[1]
    grad_x = np.empty_like(x)
    grad_w = np.empty(width, np.float32) if weight is not None else None
    grad_b = np.empty(width, np.float32) if bias is not None else None
    plan({capi.ARG_SRC: x, capi.ARG_DIFF_DST: grad, capi.ARG_DIFF_SRC: grad_x,
          capi.ARG_MEAN: mean, capi.ARG_VARIANCE: var, capi.ARG_SCALE: weight,
          capi.ARG_SHIFT: bias, capi.ARG_DIFF_SCALE: grad_w, capi.ARG_DIFF_SHIFT: grad_b})
    return grad_x, grad_w, grad_b
