"""torch's deprecated top-level LU functions, ``ember.lu`` and ``ember.lu_solve`` (and their
Tensor methods): the factorization and the solve of ``ember.linalg`` under the old names and
argument orders, with torch's deprecation warnings."""
from .. import return_types
from ..amp.policy import autocast_policy
from ._common import method, with_out
from . import lu as _lu
from .triangular import _warn_once

__all__ = ["lu", "lu_solve"]

_lu_with_info = return_types._return_type("_lu_with_info", ("LU", "pivots", "info"))

_LU_DEPRECATED = (
    "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and will "
    "be removed in a future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\nshould be "
    "replaced with\nLU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\nLU, pivots, info = "
    "torch.lu(A, compute_pivots, get_infos=True)\nshould be replaced with\nLU, pivots, info = "
    "torch.linalg.lu_factor_ex(A, compute_pivots)")
_LU_SOLVE_DEPRECATED = (
    "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a future "
    "PyTorch release.\nNote that torch.linalg.lu_solve has its arguments reversed.\nX = "
    "torch.lu_solve(B, LU, pivots)\nshould be replaced with\nX = torch.linalg.lu_solve(LU, pivots, B)")


@method()
def lu(A, pivot=True, get_infos=False, out=None):
    """The LU factorization of ``A`` with partial pivoting (deprecated in torch in favour of
    ``linalg.lu_factor``): LU and the pivots, and ``info`` with ``get_infos=True``; a zero
    pivot raises nothing."""
    _warn_once(_LU_DEPRECATED)
    LU, pivots, info = _lu.lu_factor_ex(A, pivot=pivot)
    result = _lu_with_info(LU, pivots, info) if get_infos else (LU, pivots)
    if out is None:
        return result
    from ._common import write_out
    return write_out(result, tuple(out), exact=True, op="lu")


@method()
@with_out(op="lu_solve")
@autocast_policy("fp32")
def lu_solve(input, LU_data, LU_pivots):
    """The solution of ``A X = input`` from A's LU factorization (deprecated in torch in favour
    of ``linalg.lu_solve``, whose arguments are in the other order)."""
    _warn_once(_LU_SOLVE_DEPRECATED)
    return _lu.lu_solve(LU_data, LU_pivots, input)
