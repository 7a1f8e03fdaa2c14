"""Softmax and log-softmax on oneDNN, forward and backward, along one axis of a float32
row-major NumPy array, read and written in place (other layouts are copied row-major first).

``log`` picks the algorithm: ``exp(x) / sum(exp(x))`` (``dnnl_softmax_accurate``, shifted by
the maximum) or ``x - log(sum(exp(x)))`` (``dnnl_softmax_log``). The backward takes the
forward's output, as torch's does.

Each function returns None where oneDNN does not apply (the caller runs NumPy's path).
"""
import ctypes

import numpy as np

from . import capi
from .capi import call
from .conv import _build
from .runtime import MemoryDesc, Plan, destroy_attr, engine, plans, scratchpad_attr

__all__ = ["softmax_forward", "softmax_backward"]


def _algorithm(log):
    return capi.SOFTMAX_LOG if log else capi.SOFTMAX_ACCURATE


def _row_major(a):
    """``a`` as a non-empty row-major float32 array (copied if it is laid out otherwise), or
    None."""
    if type(a) is not np.ndarray or a.dtype != np.float32 or not a.size or not a.ndim:
        return None
    return a if a.flags.c_contiguous else np.ascontiguousarray(a)


def _forward_pd(md, algorithm, axis, attr):
    pd = ctypes.c_void_p()
    call("dnnl_softmax_forward_primitive_desc_create", ctypes.byref(pd), engine().engine,
         capi.FORWARD_TRAINING, algorithm, md.handle, md.handle, axis, attr,
         what="softmax forward")
    return pd


def softmax_forward(x, axis, log=False):
    """``softmax(x)`` (``log``: ``log_softmax(x)``) along ``axis``, row-major."""
    x = _row_major(x)
    if x is None:
        return None
    algorithm = _algorithm(log)
    key = ("softmax_forward", x.shape, algorithm, axis)

    def make():
        md = MemoryDesc.of(x)
        attr = scratchpad_attr()
        try:
            pd = _forward_pd(md, algorithm, axis, attr)
        finally:
            destroy_attr(attr)
        return Plan(pd, "softmax forward", {}, {}, {capi.ARG_SRC: md, capi.ARG_DST: md})

    plan = plans.get(key, lambda: _build(make))
    if plan is None:
        return None
    y = np.empty_like(x)
    plan({capi.ARG_SRC: x, capi.ARG_DST: y})
    return y


def softmax_backward(grad, out, axis, log=False):
    """The input gradient of ``out = softmax(x)`` (``log``: ``log_softmax``) along ``axis``
    from the output gradient ``grad``, row-major."""
    grad, out = _row_major(grad), _row_major(out)
    if grad is None or out is None or grad.shape != out.shape:
        return None
    algorithm = _algorithm(log)
    key = ("softmax_backward", out.shape, algorithm, axis)

    def make():
        md = MemoryDesc.of(out)
        attr = scratchpad_attr()
        try:
            hint = _forward_pd(md, algorithm, axis, attr)
            try:
                pd = ctypes.c_void_p()
                call("dnnl_softmax_backward_primitive_desc_create", ctypes.byref(pd),
                     engine().engine, algorithm, md.handle, md.handle, md.handle, axis, hint,
                     attr, what="softmax backward")
            finally:
                capi.lib().dnnl_primitive_desc_destroy(hint)
        finally:
            destroy_attr(attr)
        return Plan(pd, "softmax backward", {}, {},
                    {capi.ARG_DST: md, capi.ARG_DIFF_DST: md, capi.ARG_DIFF_SRC: md})

    plan = plans.get(key, lambda: _build(make))
    if plan is None:
        return None
    grad_x = np.empty_like(out)
    plan({capi.ARG_DST: out, capi.ARG_DIFF_DST: grad, capi.ARG_DIFF_SRC: grad_x})
    return grad_x
