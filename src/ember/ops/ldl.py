"""``linalg.ldl_factor``, ``ldl_factor_ex`` and ``ldl_solve``: the LDL factorization of a
symmetric (or Hermitian) matrix with Bunch-Kaufman pivoting, as LAPACK's sytrf / hetrf
(lower triangle) compute it, and the solve from its factors (sytrs / hetrs).

NumPy exposes neither, so both are written here after LAPACK's unblocked sytf2 / hetf2 and
sytrs / hetrs: each step is one pivot choice (1 x 1 or 2 x 2 block) and one rank-1 or rank-2
update of the trailing matrix as a whole-array operation. The pivots are LAPACK's: 1-based int32,
negative for both rows of a 2 x 2 block. torch does not differentiate these functions, nor does
ember (backward raises torch's error)."""
import math

import numpy as np

from .. import return_types
from .._backend import lapack, openmp_kernels
from . import _compiled_functions
from ._common import _type_word, check_tensor, make, namespace_of, record_not_differentiable, write_out
from .matrix_decompositions import check_matrix

__all__ = []

linalg_ldl_factor = return_types._return_type("linalg_ldl_factor", ("LD", "pivots"))
linalg_ldl_factor_ex = return_types._return_type("linalg_ldl_factor_ex", ("LD", "pivots", "info"))

_ALPHA = (1 + math.sqrt(17)) / 8   # Bunch-Kaufman's threshold


def _size(xp, x):
    """LAPACK's cabs1: |re| + |im| (|x| for real x)."""
    if x.dtype.kind == "c":
        return xp.abs(x.real) + xp.abs(x.imag)
    return xp.abs(x)


def _factor_one(xp, a, hermitian):
    """sytf2 / hetf2 (lower) on one matrix, in place: (pivots, info)."""
    n = a.shape[0]
    herm = hermitian and a.dtype.kind == "c"
    conj = xp.conj if herm else (lambda x: x)
    pivots = np.zeros(n, dtype=np.int32)
    info = 0
    k = 0
    while k < n:
        kstep = 1
        absakk = abs(a[k, k].real) if herm else float(_size(xp, a[k, k]))
        if k + 1 < n:
            imax = k + 1 + int(xp.argmax(_size(xp, a[k + 1:, k])))
            colmax = float(_size(xp, a[imax, k]))
        else:
            imax, colmax = k, 0.0
        if max(absakk, colmax) == 0 or math.isnan(absakk):
            info = info or k + 1
            kp = k
            if herm:
                a[k, k] = a[k, k].real
        else:
            if absakk >= _ALPHA * colmax:
                kp = k
            else:
                rowmax = float(_size(xp, a[imax, k:imax]).max())
                if imax + 1 < n:
                    rowmax = max(rowmax, float(_size(xp, a[imax + 1:, imax]).max()))
                diagonal = abs(a[imax, imax].real) if herm else float(_size(xp, a[imax, imax]))
                if absakk >= _ALPHA * colmax * (colmax / rowmax):
                    kp = k
                elif diagonal >= _ALPHA * rowmax:
                    kp = imax
                else:
                    kp, kstep = imax, 2
            kk = k + kstep - 1
            if kp != kk:   # interchange rows and columns kk and kp of the trailing matrix
                a[kp + 1:, [kk, kp]] = a[kp + 1:, [kp, kk]]
                between = a[kk + 1:kp, kk].copy()
                a[kk + 1:kp, kk] = conj(a[kp, kk + 1:kp])
                a[kp, kk + 1:kp] = conj(between)
                if herm:
                    a[kp, kk] = xp.conj(a[kp, kk])
                a[kk, kk], a[kp, kp] = a[kp, kp].copy(), a[kk, kk].copy()   # CuPy's elements are views
                if herm:
                    a[kk, kk], a[kp, kp] = a[kk, kk].real, a[kp, kp].real
                if kstep == 2:
                    if herm:
                        a[k, k] = a[k, k].real
                    a[k + 1, k], a[kp, k] = a[kp, k].copy(), a[k + 1, k].copy()
            elif herm:
                a[k, k] = a[k, k].real
                if kstep == 2:
                    a[k + 1, k + 1] = a[k + 1, k + 1].real
            if kstep == 1:
                if k + 1 < n:
                    x = a[k + 1:, k].copy()
                    scale = 1 / (a[k, k].real if herm else a[k, k])
                    a[k + 1:, k + 1:] -= scale * xp.outer(x, conj(x))
                    a[k + 1:, k] = x * scale
            elif k + 2 < n:
                if herm:
                    size = abs(a[k + 1, k])
                    d11, d22 = a[k + 1, k + 1].real / size, a[k, k].real / size
                    d21 = a[k + 1, k] / size
                    d = (1 / (d11 * d22 - 1)) / size
                    wk = d * (d11 * a[k + 2:, k] - d21 * a[k + 2:, k + 1])
                    wkp1 = d * (d22 * a[k + 2:, k + 1] - xp.conj(d21) * a[k + 2:, k])
                else:
                    d21 = a[k + 1, k]
                    d11, d22 = a[k + 1, k + 1] / d21, a[k, k] / d21
                    d21 = (1 / (d11 * d22 - 1)) / d21
                    wk = d21 * (d11 * a[k + 2:, k] - a[k + 2:, k + 1])
                    wkp1 = d21 * (d22 * a[k + 2:, k + 1] - a[k + 2:, k])
                a[k + 2:, k + 2:] -= (xp.outer(a[k + 2:, k], conj(wk)) + xp.outer(a[k + 2:, k + 1], conj(wkp1)))
                a[k + 2:, k] = wk
                a[k + 2:, k + 1] = wkp1
                if herm:
                    idx = xp.arange(k + 2, n)
                    a[idx, idx] = a[idx, idx].real
        if kstep == 1:
            pivots[k] = kp + 1
        else:
            pivots[k] = pivots[k + 1] = -(kp + 1)
        k += kstep
    return pivots, info


def sytrf(data, hermitian):
    """LAPACK's sytrf / hetrf (lower) on a batch of matrices: (LD lower triangular, pivots,
    info)."""
    xp = namespace_of(data)
    n = data.shape[-1]
    batch = data.shape[:-2]
    count = math.prod(batch)
    a = xp.array(data.reshape((count, n, n)), copy=True)
    if type(a) is np.ndarray and a.dtype in openmp_kernels.LDL_DTYPES:   # real: the C loop, the same bits
        factored = openmp_kernels.ldl_factor(a, _ALPHA)
        if factored is not None:
            pivots, info = factored
            return np.tril(a).reshape(data.shape), pivots.reshape(batch + (n,)), info.reshape(batch)
    pivots = xp.zeros((count, n), dtype=np.int32)
    info = xp.zeros(count, dtype=np.int32)
    with np.errstate(all="ignore"):
        for b in range(count):
            one_pivots, info[b] = _factor_one(xp, a[b], hermitian)
            pivots[b] = xp.asarray(one_pivots)   # made on the host
    return xp.tril(a).reshape(data.shape), pivots.reshape(batch + (n,)), info.reshape(batch)


def _check_ldl_input(A, op):
    check_tensor(A, op.split(".")[-1], "A")
    data = A._data
    if data.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor A must have at least 2 dimensions.")
    if data.dtype.kind in "fc" and data.dtype.itemsize < 4 or data.dtype.kind not in "fcbiu":
        raise NotImplementedError(f"\"ldl_factor_kernel_cpu\" not implemented for '{_type_word(data.dtype)}'")
    check_matrix(A, op)


_NOT_DIFFERENTIABLE = "derivative for aten::linalg_ldl_factor_ex is not implemented"


def _ldl_factor_ex(A, hermitian, check_errors, op):
    _check_ldl_input(A, "torch.linalg.ldl_factor_ex")
    ld, pivots, info = sytrf(A._data, hermitian)
    if check_errors and bool(info.any()):
        bad = int(np.flatnonzero(np.asarray(info).reshape(-1))[0])
        prefix = f"(Batch element {bad}): " if A._data.ndim > 2 else ""
        k = int(np.asarray(info).reshape(-1)[bad])
        raise RuntimeError(f"{op}: {prefix}The factorization could not be completed because the block "
                           f"diagonal matrix D is exactly singular (D[{k},{k}] is zero).")
    LD = record_not_differentiable((A,), make(ld), _NOT_DIFFERENTIABLE)
    return LD, make(pivots), make(info)


def ldl_factor_ex(input, *, hermitian=False, check_errors=False, out=None):
    """The LDL factorization of a symmetric (Hermitian with ``hermitian=True``) matrix with
    Bunch-Kaufman pivoting, read from its lower triangle: LD (L's strict lower triangle and D's
    1 x 1 and 2 x 2 blocks), LAPACK's pivots and ``info`` (k when D[k-1, k-1] is exactly zero,
    0 otherwise); raises only when ``check_errors``."""
    if hermitian is False and check_errors is False and out is None:
        return _ldl_factor_ex_entry[0](input)
    return _python_ldl_factor_ex(input, hermitian, check_errors, out)


def _python_ldl_factor_ex(input, hermitian=False, check_errors=False, out=None):
    A = input
    result = linalg_ldl_factor_ex(*_ldl_factor_ex(A, hermitian, check_errors, "torch.linalg.ldl_factor_ex"))
    return write_out(result, out, exact=True, op="linalg_ldl_factor_ex")


def ldl_factor(input, *, hermitian=False, out=None):
    """The compact LDL factorization of a symmetric (Hermitian with ``hermitian=True``) matrix
    (LD and LAPACK's pivots, as ``ldl_solve`` reads them); raises when D is singular."""
    if hermitian is False and out is None:
        return _ldl_factor_entry[0](input)
    return _python_ldl_factor(input, hermitian, out)


def _python_ldl_factor(input, hermitian=False, out=None):
    A = input
    LD, pivots, _ = _ldl_factor_ex(A, hermitian, True, "torch.linalg.ldl_factor")
    return write_out(linalg_ldl_factor(LD, pivots), out, exact=True, op="linalg_ldl_factor")


# (symmetric, where nothing records: the sytf2 loop called from C, ``_compiled_factorizations``)
_ldl_factor_ex_entry = _compiled_functions.register(
    _python_ldl_factor_ex, None, kind="ldl_factor", addresses=openmp_kernels.ldl_factor_addresses,
    specifics=(linalg_ldl_factor_ex, False, _ALPHA))
_ldl_factor_entry = _compiled_functions.register(
    _python_ldl_factor, None, kind="ldl_factor", addresses=openmp_kernels.ldl_factor_addresses,
    specifics=(linalg_ldl_factor, True, _ALPHA))


def _solve_one(xp, a, pivots, b, hermitian):
    """sytrs / hetrs (lower) on one matrix: X with A X = b, in place on b."""
    n = a.shape[0]
    herm = hermitian and a.dtype.kind == "c"
    conj = xp.conj if herm else (lambda x: x)
    k = 0
    while k < n:   # L D Y = P^T b
        if pivots[k] > 0:
            kp = pivots[k] - 1
            if kp != k:
                b[[k, kp]] = b[[kp, k]]
            b[k + 1:] -= xp.outer(a[k + 1:, k], b[k])
            b[k] /= a[k, k].real if herm else a[k, k]
            k += 1
        else:
            kp = -pivots[k] - 1
            if kp != k + 1:
                b[[k + 1, kp]] = b[[kp, k + 1]]
            b[k + 2:] -= xp.outer(a[k + 2:, k], b[k]) + xp.outer(a[k + 2:, k + 1], b[k + 1])
            akm1k = a[k + 1, k]
            akm1, ak = a[k, k] / conj(akm1k), a[k + 1, k + 1] / akm1k
            denom = akm1 * ak - 1
            bkm1, bk = b[k] / conj(akm1k), b[k + 1] / akm1k
            b[k] = (ak * bkm1 - bk) / denom
            b[k + 1] = (akm1 * bk - bkm1) / denom
            k += 2
    k = n - 1
    while k >= 0:   # L^T X = Y (L^H for Hermitian)
        if pivots[k] > 0:
            b[k] -= conj(a[k + 1:, k]) @ b[k + 1:]
            kp = pivots[k] - 1
            if kp != k:
                b[[k, kp]] = b[[kp, k]]
            k -= 1
        else:
            b[k] -= conj(a[k + 1:, k]) @ b[k + 1:]
            b[k - 1] -= conj(a[k + 1:, k - 1]) @ b[k + 1:]
            kp = -pivots[k] - 1
            if kp != k:
                b[[k, kp]] = b[[kp, k]]
            k -= 2
    return b


def _sytrf_pivots(pivots, n):
    """Whether each row of ``pivots`` (count, n) is laid out as sytrf's lower factorization
    gives them, which LAPACK's sytrs reads without a check: each 1 x 1 pivot names a row (1..n),
    each 2 x 2 block's two entries are one negative row number, and no block runs past row n."""
    for row in pivots.tolist():
        k = 0
        while k < n:
            p = row[k]
            if 1 <= p <= n:
                k += 1
            elif -n <= p <= -1 and k + 1 < n and row[k + 1] == p:
                k += 2
            else:
                return False
    return True


def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    """The solution X of ``A X = B`` from ``A``'s LDL factorization (``LD`` and ``pivots`` as
    ``ldl_factor`` returns them; ``hermitian`` as given to it). Batch dimensions broadcast."""
    op = "torch.linalg.ldl_solve"
    check_tensor(LD, "linalg_ldl_solve", "LD")
    check_tensor(pivots, "linalg_ldl_solve", "pivots")
    check_tensor(B, "linalg_ldl_solve", "B")
    check_matrix(LD, op, arg="LD")
    ld, pv, bd = LD._data, pivots._data, B._data
    if bd.ndim < 2:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got -2)"
                         if bd.ndim == 1 else "Dimension specified as -2 but tensor has no dimensions")
    n = ld.shape[-1]
    if bd.shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for {op}: each A matrix is {n} by {n} but each b "
                           f"matrix is {bd.shape[-2]} by {bd.shape[-1]}")
    if bd.dtype != ld.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{_type_word(bd.dtype)} and A of type {_type_word(ld.dtype)} instead.")
    if pv.dtype.kind not in "iu":
        raise RuntimeError(f"{op}: Expected pivots to be integers. Got {_type_word(pv.dtype)}")
    if pv.shape != ld.shape[:-1]:
        raise RuntimeError(f"{op}: Expected LD.shape[:-1] and pivots.shape to be the same, but got "
                           f"pivots with shape {list(pv.shape)} instead")
    xp = namespace_of(ld)
    right = bd.shape[-2:]
    batch = ld.shape[:-2] if ld.shape[:-2] == bd.shape[:-2] else tuple(np.broadcast_shapes(ld.shape[:-2],
                                                                                           bd.shape[:-2]))
    count = math.prod(batch)

    def matrices(data, shape):   # (each operand over the batch, as (count, ...) arrays)
        return (data if data.shape == batch + shape else xp.broadcast_to(data, batch + shape)).reshape(
            (count,) + shape)
    a = matrices(ld, (n, n))
    piv = matrices(pv, (n,)).astype(np.int64)
    b = matrices(bd, right)
    x = lapack.sytrs(a, piv, b) if xp is np and count <= n and _sytrf_pivots(piv, n) else None
    if x is None:
        x = xp.array(b, copy=True)
        with np.errstate(all="ignore"):
            for i in range(count):
                _solve_one(xp, a[i], piv[i].tolist(), x[i], hermitian)
    result = make(x.reshape(batch + right))
    record_not_differentiable((LD, pivots, B), result, "derivative for aten::linalg_ldl_solve is not implemented")
    return write_out(result, out, exact=True, op="linalg_ldl_solve")
