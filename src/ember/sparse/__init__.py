"""Sparse tensors, as ``torch.sparse``: COO tensors (``ember.sparse_coo_tensor``,
``Tensor.to_sparse``), 2-D CSR tensors (``ember.sparse_csr_tensor``, ``Tensor.to_sparse_csr``)
and the functions that take them: ``mm``, ``addmm``, ``sum``, ``softmax`` and
``log_softmax``."""
from . import _coo, _csr  # noqa: F401  (attach the sparse Tensor methods)
from ._invariants import check_sparse_tensor_invariants
from ._ops import addmm, log_softmax, mm, softmax, sum

__all__ = ["addmm", "check_sparse_tensor_invariants", "log_softmax", "mm", "softmax", "sum"]
