"""Activations on oneDNN's eltwise primitive, forward and backward, over float32 NumPy arrays
in their own layout (any positive strides; the result is laid out as ``np.empty_like`` lays
it out). One pass over memory on oneDNN's threads, where NumPy's formulas take several.

An algorithm is ``(forward kind, backward kind, alpha, beta)``: the backward kind is the
forward's (its formula reads the forward's input as ``data``), or a ``*_USE_DST`` variant
(reading the forward's output instead). Each function returns None where oneDNN does not apply (the
caller runs NumPy's path).
"""
import ctypes

import numpy as np

from . import capi
from .capi import call
from .conv import _build
from ..._memory_format import laid_out_like
from .runtime import MemoryDesc, Plan, describable, destroy_attr, engine, layout_key, plans, \
    scratchpad_attr

__all__ = ["ALGORITHMS", "eltwise_forward", "eltwise_backward"]

# name -> (forward kind, backward kind, alpha, beta), with torch's formulas' constants
ALGORITHMS = {
    "silu": (capi.ELTWISE_SWISH, capi.ELTWISE_SWISH, 1.0, 0.0),
    "gelu": (capi.ELTWISE_GELU_ERF, capi.ELTWISE_GELU_ERF, 0.0, 0.0),
    "gelu_tanh": (capi.ELTWISE_GELU_TANH, capi.ELTWISE_GELU_TANH, 0.0, 0.0),
}


def _forward_pd(kind, md_src, md_dst, alpha, beta, attr):
    pd = ctypes.c_void_p()
    call("dnnl_eltwise_forward_primitive_desc_create", ctypes.byref(pd), engine().engine,
         capi.FORWARD_TRAINING, kind, md_src.handle, md_dst.handle, alpha, beta, attr,
         what="eltwise forward")
    return pd


def _usable(*arrays):
    return all(describable(a) for a in arrays)


def eltwise_forward(x, name):
    """The activation ``name`` (a key of ``ALGORITHMS``) of ``x``."""
    if not _usable(x):
        return None
    kind, _, alpha, beta = ALGORITHMS[name]
    y = np.empty_like(x)
    key = ("eltwise_forward", kind, layout_key(x), layout_key(y))

    def make():
        md_x, md_y = MemoryDesc.of(x), MemoryDesc.of(y)
        attr = scratchpad_attr()
        try:
            pd = _forward_pd(kind, md_x, md_y, alpha, beta, attr)
        finally:
            destroy_attr(attr)
        return Plan(pd, f"{name} forward", {}, {}, {capi.ARG_SRC: md_x, capi.ARG_DST: md_y})

    plan = plans.get(key, lambda: _build(make))
    if plan is None:
        return None
    plan({capi.ARG_SRC: x, capi.ARG_DST: y})
    return y


def eltwise_backward(grad, data, name):
    """The input gradient of the activation ``name`` from the output gradient ``grad``;
    ``data`` is the forward's input (its output for a ``*_USE_DST`` backward)."""
    if not _usable(grad, data) or grad.shape != data.shape:
        return None
    grad = laid_out_like(grad, data)  # oneDNN's kernels take both in one layout
    forward_kind, kind, alpha, beta = ALGORITHMS[name]
    grad_x = np.empty_like(data)
    key = ("eltwise_backward", kind, alpha, beta, layout_key(grad), layout_key(data),
           layout_key(grad_x))
    data_arg = capi.ARG_DST if kind != forward_kind else capi.ARG_SRC

    def make():
        md_g, md_d, md_gx = MemoryDesc.of(grad), MemoryDesc.of(data), MemoryDesc.of(grad_x)
        attr = scratchpad_attr()
        try:
            hint = _forward_pd(kind, md_d, md_d, alpha, beta, attr)
            try:
                pd = ctypes.c_void_p()
                call("dnnl_eltwise_backward_primitive_desc_create", ctypes.byref(pd),
                     engine().engine, kind, md_gx.handle, md_g.handle, md_d.handle, alpha, beta,
                     hint, attr, what="eltwise backward")
            finally:
                capi.lib().dnnl_primitive_desc_destroy(hint)
        finally:
            destroy_attr(attr)
        return Plan(pd, f"{name} backward", {}, {},
                    {data_arg: md_d, capi.ARG_DIFF_DST: md_g, capi.ARG_DIFF_SRC: md_gx})

    plan = plans.get(key, lambda: _build(make))
    if plan is None:
        return None
    plan({data_arg: data, capi.ARG_DIFF_DST: grad, capi.ARG_DIFF_SRC: grad_x})
    return grad_x
