"""Matrix products' kernels, each a ``KernelChoice``: float32 products on oneDNN's GEMM and
matmul primitive (``onednn.gemm``, on the OpenMP threads its convolutions use), NumPy's matmul
(OpenBLAS) otherwise.

- ``matmul(a, b, out=None)``: ``a @ b`` (NumPy's ``matmul``, batch dimensions included), into
  ``out`` where given;
- ``add_product(a, b, out)``: ``out += a @ b`` in one GEMM with ``beta = 1`` (``out`` already
  holds a bias); None where no kernel does it in place (the caller adds separately).
- ``affine(a, b, bias)``: ``a @ b + bias`` for a bias of the product's dtype that broadcasts
  to it, in one GEMM where one applies (oneDNN's matmul primitive adds a bias row in its
  kernel; ``dnnl_sgemm`` and BLAS add the product into a copy of the bias).
"""
import numpy as np

from . import cblas, namespace_of, onednn
from .choice import KernelChoice

__all__ = ["matmul", "add_product", "affine"]


def _numpy_matmul(a, b, out=None):
    xp = namespace_of(a)
    if a.ndim >= 2 and b.ndim >= 2 and a.shape[-1] == 1 and b.shape[-2] == 1:
        # one product per element (an outer product): NumPy's matmul takes its slow loop
        # for it (no BLAS call), the broadcast multiply the same products
        return xp.multiply(a, b, out=out)
    return xp.matmul(a, b, out=out)


def _numpy_add_product(a, b, out):
    return out if cblas.gemm(a, b, out) else None


def _onednn_matmul(a, b, out=None):
    if a.ndim == 2 and b.ndim == 2:
        return onednn.gemm.matmul(a, b) if out is None else None   # (its out= adds to out)
    return onednn.gemm.batched_matmul(a, b, out)


_matmul = KernelChoice("matmul", onednn=_onednn_matmul, numpy=_numpy_matmul)


def matmul(a, b, out=None):
    """``a @ b`` (into ``out`` where given) by the kernel choice; operands whose sizes multiply
    to less than ``gemm.MIN_MULTIPLY_ADDS`` (at least their product's multiply-adds, which
    oneDNN declines below it) go to NumPy without asking oneDNN, as ``vector_math.when_large``
    sends small arrays."""
    if a.size * b.size < onednn.gemm.MIN_MULTIPLY_ADDS:
        return _numpy_matmul(a, b, out)
    return _matmul(a, b, out)
add_product = KernelChoice("product added in place", onednn=onednn.gemm.matmul,
                           numpy=_numpy_add_product)


# From this many elements of the result, NumPy's ``affine`` adds the product into a copy of the
# bias by one BLAS GEMM; below, filling the copy costs more than the separate add it saves.
FILLED_BIAS_MIN_SIZE = 1 << 18


def _numpy_affine(a, b, bias):
    shape = (a.shape[0], b.shape[1])
    if shape[0] * shape[1] >= FILLED_BIAS_MIN_SIZE and cblas.gemm_supports(a, b):
        out = np.empty(shape, bias.dtype)
        out[...] = bias
        if cblas.gemm(a, b, out):
            return out
    return namespace_of(a).add(_numpy_matmul(a, b), bias)


affine = KernelChoice("product plus a bias", onednn=onednn.gemm.affine, numpy=_numpy_affine)

# Operands whose sizes multiply to less than this (no fewer than their product's multiply-adds,
# nor its elements) are declined by both of ``affine``'s kernels: their bias is added apart.
FUSED_BIAS_MIN_OPERANDS = min(FILLED_BIAS_MIN_SIZE, onednn.gemm.AFFINE_TALL_MIN_MULTIPLY_ADDS)
