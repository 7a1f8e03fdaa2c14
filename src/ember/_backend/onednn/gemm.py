"""float32 GEMM on oneDNN, on its OpenMP threads (the ones its convolutions use) instead of
OpenBLAS's: ``matmul``, ``c = a @ b + beta * c`` for 2-D NumPy arrays by ``dnnl_sgemm``
(row-major); ``affine``, ``a @ b + bias`` for a row of biases (a linear layer's forward) by
oneDNN's matmul primitive, which adds the bias in its brgemm kernel; and ``batched_matmul``,
``a @ b`` over batch dimensions (``bmm``, attention-shaped products) by the same primitive.

``dnnl_sgemm`` is called through ``direct_calls``' compiled shim (ctypes where it cannot be
built). Products smaller than ``MIN_MULTIPLY_ADDS`` are left to NumPy (the function returns
None): OpenBLAS's small-matrix kernels, which take products of up to a million multiply-adds,
run those faster than oneDNN; past them, its packed path is as fast as oneDNN's at one
thread for square products, slower at two, and slower at either for narrow ones (a classifier's
ten outputs; ``python -m benchmarks.gemm_threshold``, ``python -m benchmarks.linear_bias
--narrow``). A linear layer's forward with a transposed weight loses OpenBLAS's small kernels
from 128 rows, so ``affine`` takes such products from ``AFFINE_TALL_MIN_MULTIPLY_ADDS``.
"""
import ctypes
import functools
import math

import numpy as np

from . import capi, direct_calls, threads
from .capi import OneDNNError, call
from .runtime import MemoryDesc, Plan, describable, destroy_attr, engine, plans, scratchpad_attr
from ..pointers import address
from ..._memory_format import contiguous_format

__all__ = ["matmul", "affine", "batched_matmul", "MIN_MULTIPLY_ADDS", "AFFINE_MAX_WEIGHTS"]

MIN_MULTIPLY_ADDS = 10 ** 6
# ``affine``'s products of this many multiply-adds or more with at least ``AFFINE_TALL_ROWS``
# rows run on the matmul primitive
AFFINE_TALL_MIN_MULTIPLY_ADDS = 1 << 18
AFFINE_TALL_ROWS = 128
_FLOAT32 = np.dtype(np.float32)

_SGEMM_ARGS = [ctypes.c_char, ctypes.c_char, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
               ctypes.c_float, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64,
               ctypes.c_float, ctypes.c_void_p, ctypes.c_int64]
_sgemm = []


def _function():
    """``dnnl_sgemm`` as ``call(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)``
    (the transpositions 0 or 1, the matrices arrays), returning its status: through
    ``direct_calls``' shim, or ctypes where that cannot be built."""
    if not _sgemm:
        fn = capi.lib().dnnl_sgemm
        shim = direct_calls.sgemm()
        if shim is not None:
            _sgemm.append(functools.partial(shim, ctypes.cast(fn, ctypes.c_void_p).value))
        else:
            fn.restype, fn.argtypes = ctypes.c_int, _SGEMM_ARGS

            def through_ctypes(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc):
                return fn(b"NT"[transa:transa + 1], b"NT"[transb:transb + 1], m, n, k, alpha,
                          address(a), lda, address(b), ldb, beta, address(c), ldc)
            _sgemm.append(through_ctypes)
    return _sgemm[0]


def _operand(a):
    """(transposition: 0 or 1, leading dimension) of a 2-D array as a row-major operand, or
    None."""
    if a.flags.c_contiguous:
        return 0, max(a.shape[1], 1)
    if a.flags.f_contiguous:
        return 1, max(a.shape[0], 1)
    return None


def matmul(a, b, out=None):
    """``a @ b`` for 2-D float32 NumPy arrays, C- or F-contiguous; added to ``out`` (a
    C-contiguous array of the product's shape, not overlapping ``a`` or ``b``) when given.
    None where this does not apply."""
    if type(a) is not np.ndarray or type(b) is not np.ndarray or a.ndim != 2 or b.ndim != 2:
        return None
    (m, k), (k2, n) = a.shape, b.shape
    if k != k2 or m * n * k < MIN_MULTIPLY_ADDS or a.dtype != _FLOAT32 or b.dtype != _FLOAT32:
        return None
    layout_a, layout_b = _operand(a), _operand(b)
    if layout_a is None or layout_b is None:
        return None
    beta = 1.0
    if out is None:
        out, beta = np.empty((m, n), np.float32), 0.0
    elif (out.shape != (m, n) or out.dtype != _FLOAT32 or not out.flags.c_contiguous
          or np.may_share_memory(a, out) or np.may_share_memory(b, out)):
        return None
    capi.check(_function()(layout_a[0], layout_b[0], m, n, k, 1.0, a, layout_a[1], b, layout_b[1],
                           beta, out, n),
               "dnnl_sgemm", f"a {m}x{k} by {k}x{n} product")
    return out


# Up to this many elements of ``b``, ``affine`` runs on the matmul primitive; past it, on
# ``dnnl_sgemm`` into a copy of the bias: the primitive repacks a column-major ``b`` (a
# transposed weight) on every call, which cost more than it saved for a 200 x 10000 weight
# (BENCHMARKS.md, "Linear layers on the matmul primitive").
AFFINE_MAX_WEIGHTS = 1 << 20


def affine(a, b, bias):
    """``a @ b + bias`` for 2-D float32 NumPy arrays ``a`` and ``b`` (C- or F-contiguous) and a
    float32 ``bias`` that broadcasts to the product; a new C-contiguous array, or None where
    this does not apply."""
    if (type(a) is not np.ndarray or type(b) is not np.ndarray or type(bias) is not np.ndarray
            or a.ndim != 2 or b.ndim != 2 or bias.dtype != _FLOAT32 or a.dtype != _FLOAT32
            or b.dtype != _FLOAT32 or _operand(a) is None or _operand(b) is None):
        return None
    (m, k), (k2, n) = a.shape, b.shape
    products = m * n * k
    if k != k2 or products < MIN_MULTIPLY_ADDS and (m < AFFINE_TALL_ROWS or products < AFFINE_TALL_MIN_MULTIPLY_ADDS):
        return None
    if bias.shape not in ((n,), (1, n)) or b.size > AFFINE_MAX_WEIGHTS:   # into a copy of the bias
        out = np.empty((m, n), np.float32)
        out[...] = bias
        return matmul(a, b, out)
    plan = plans.get(("affine", a.shape, a.strides, b.shape, b.strides), lambda: _affine_plan(a, b))
    if plan is None:
        return None
    out = np.empty((m, n), np.float32)
    plan({capi.ARG_SRC: a, capi.ARG_WEIGHTS: b, capi.ARG_BIAS: np.ascontiguousarray(bias),
          capi.ARG_DST: out})
    return out


def _affine_plan(a, b):
    return _primitive_plan(a, b, (a.shape[0], b.shape[1]), bias=True)


def _primitive_plan(a, b, out_shape, bias=False, out=None, kernels=("brg",)):
    """A plan of the matmul primitive for ``a @ b`` (batch dimensions broadcast where one side
    has 1) into a fresh C-contiguous array of ``out_shape`` (or an array laid out as ``out``),
    adding a row of biases when ``bias``; None where oneDNN declines or picks an
    implementation whose name starts with none of ``kernels`` (its reference loops, say)."""
    src, weights = MemoryDesc.of(a), MemoryDesc.of(b)
    dst = MemoryDesc.dense(out_shape, _FLOAT32, contiguous_format) if out is None else MemoryDesc.of(out)
    fixed = {capi.ARG_SRC: src, capi.ARG_WEIGHTS: weights, capi.ARG_DST: dst}
    if bias:
        shape = (1,) * (len(out_shape) - 1) + out_shape[-1:]
        fixed[capi.ARG_BIAS] = MemoryDesc.dense(shape, _FLOAT32, contiguous_format)
    attr = scratchpad_attr()
    try:
        pd = ctypes.c_void_p()
        call("dnnl_matmul_primitive_desc_create", ctypes.byref(pd), engine().engine, src.handle,
             weights.handle, fixed[capi.ARG_BIAS].handle if bias else None, dst.handle, attr,
             what="matmul")
    except OneDNNError:
        return None
    finally:
        destroy_attr(attr)
    plan = Plan(pd, "matmul", {}, {}, fixed)
    return plan if plan.implementation().startswith(kernels) else None


# Batched products of ``BATCHED_MIN_MULTIPLY_ADDS`` or more run on the matmul primitive, on two
# threads or more; on one thread from ``BATCHED_ONE_THREAD_MIN_MULTIPLY_ADDS`` (below it NumPy's
# loop of OpenBLAS calls was as fast; BENCHMARKS.md, "Batched products on the matmul
# primitive").
BATCHED_MIN_MULTIPLY_ADDS = 1 << 21
BATCHED_ONE_THREAD_MIN_MULTIPLY_ADDS = 1 << 24


# What the batched products accept besides the brgemm kernels: oneDNN's GEMM-based matmul,
# which it picks for operands strided across the batch (the heads of a packed attention
# projection), at half NumPy's time or less on two threads (``benchmarks/batched_matmul.py
# --strided``).
BATCHED_KERNELS = ("brg", "gemm:jit")


def batched_matmul(a, b, out=None):
    """``a @ b`` for float32 NumPy arrays of 3 dimensions or more (NumPy's ``matmul``: batch
    dimensions broadcast, a 2-D operand taken as one matrix for every batch) with positive
    strides, into a new C-contiguous array, or into ``out`` (a float32 array of the product's
    shape with positive strides, apart from ``a`` and ``b``) where given; None where this does
    not apply."""
    if type(a) is not np.ndarray or type(b) is not np.ndarray or a.dtype != _FLOAT32 \
            or b.dtype != _FLOAT32 or max(a.ndim, b.ndim) < 3 or min(a.ndim, b.ndim) < 2:
        return None
    (m, k), (k2, n) = a.shape[-2:], b.shape[-2:]
    if ((a.size // max(m * k, 1)) * (b.size // max(k2 * n, 1)) * m * n * k
            < min(BATCHED_MIN_MULTIPLY_ADDS, BATCHED_ONE_THREAD_MIN_MULTIPLY_ADDS)):
        return None   # (more products than the batch could hold: a first check, before the reshapes)
    ndim = max(a.ndim, b.ndim)
    a = a.reshape((1,) * (ndim - a.ndim) + a.shape)
    b = b.reshape((1,) * (ndim - b.ndim) + b.shape)
    batch = []
    for x, y in zip(a.shape[:-2], b.shape[:-2]):
        if x != y and x != 1 and y != 1:
            return None
        batch.append(max(x, y))
    out_shape = (*batch, m, n)
    products = math.prod(batch) * m * n * k
    least = BATCHED_MIN_MULTIPLY_ADDS if threads.applied_count() > 1 else BATCHED_ONE_THREAD_MIN_MULTIPLY_ADDS
    if k != k2 or products < least or not (describable(a) and describable(b)):
        return None
    if out is not None and (type(out) is not np.ndarray or out.shape != out_shape or out.dtype != _FLOAT32
                            or not describable(out) or np.may_share_memory(out, a)
                            or np.may_share_memory(out, b)):
        return None
    plan = plans.get(("batched matmul", a.shape, a.strides, b.shape, b.strides,
                      None if out is None else out.strides),
                     lambda: _primitive_plan(a, b, out_shape, out=out, kernels=BATCHED_KERNELS))
    if plan is None:
        return None
    if out is None:
        out = np.empty(out_shape, np.float32)
    plan({capi.ARG_SRC: a, capi.ARG_WEIGHTS: b, capi.ARG_DST: out})
    return out
