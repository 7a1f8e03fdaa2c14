"""``linalg.eig`` and ``linalg.eigvals``: eigenvalues and eigenvectors of general square
matrices, complex as torch returns them, from LAPACK's geev through the backend (each
eigenvector of unit norm with its largest component real, as geev gives it)."""
import numpy as np

from .. import return_types
from .._backend import lapack
from ..amp.policy import autocast_policy
from ._common import _type_word, check_tensor, make, namespace_of, Node, record, write_out
from .matrix_decompositions import check_matrix, per_matrix

__all__ = []

linalg_eig = return_types._return_type("linalg_eig", ("eigenvalues", "eigenvectors"))

_COMPLEX = {np.dtype(np.float32): np.dtype(np.complex64), np.dtype(np.float64): np.dtype(np.complex128),
            np.dtype(np.complex64): np.dtype(np.complex64), np.dtype(np.complex128): np.dtype(np.complex128)}


class LinalgEigBackward0(Node):
    """eig's results are complex: ember's autograd refuses complex results (``record``
    raises before this node is made), so its backward is not reached."""
    __slots__ = ()

    def backward(self, grad_values=None, grad_vectors=None):
        from .._tensor import _COMPLEX_AUTOGRAD
        raise NotImplementedError(_COMPLEX_AUTOGRAD)

    def jvp(self, tangent):
        # A V = V L: with dP = V^-1 dA V, dL = diag(dP) and dV = V C, C_ij = dP_ij / (L_j - L_i)
        # off the diagonal, less V times the real part of diag(V^H dV) (the columns keep
        # unit norm), as torch's linalg_eig_jvp
        from .. import _dtype
        from .creation import eye
        from .matrix_decompositions import solve
        from .ternary import where
        A = self.primals[0]
        results = self.results
        if len(results) == 2:
            values, vectors = results
        else:   # eigvals: the eigenvectors again (without a history: complex autograd)
            values, vectors = eig(A.detach())
        dtype = _dtype.from_numpy_dtype(vectors._data.dtype)
        dP = solve(vectors, tangent.to(dtype) @ vectors)
        d_values = dP.diagonal(0, -2, -1)
        if len(results) == 1:
            return d_values
        n = values._data.shape[-1]
        on_diagonal = eye(n, dtype=_dtype.bool)
        gaps = values.unsqueeze(-2) - values.unsqueeze(-1)
        coefficients = where(on_diagonal, 0, dP / where(on_diagonal, 1, gaps))
        d_vectors = vectors @ coefficients
        norms = (vectors.mH @ d_vectors).diagonal(0, -2, -1).real
        return d_values, d_vectors - vectors * norms.unsqueeze(-2)


def _check_eig(A, op):
    check_tensor(A, op.split(".")[-1], "A")
    data = A._data
    if data.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor A must have at least 2 dimensions.")
    if data.dtype.kind in "biu":
        raise RuntimeError(f"Unknown Complex ScalarType for {_type_word(data.dtype)}")
    if data.dtype not in _COMPLEX:
        raise NotImplementedError(f"\"linalg_eig_out_cpu\" not implemented for '{_type_word(data.dtype)}'")
    check_matrix(A, op)
    xp = namespace_of(data)
    if not bool(xp.isfinite(data).all()):
        raise RuntimeError(f"torch.{op}: input tensor should not contain infs or NaNs.")


def _eig_arrays(data, vectors):
    """Real matrices' eigenvalues (and eigenvectors) by LAPACK's geev in their own precision, one C call
    at every size (``lapack.geev``; NumPy's eig computes float32 in float64); NumPy's eig otherwise."""
    xp = namespace_of(data)
    dtype = _COMPLEX[data.dtype]
    if not data.size:
        values = xp.zeros(data.shape[:-1], dtype=dtype)
        return (values, xp.zeros(data.shape, dtype=dtype)) if vectors else values
    factored = per_matrix(lapack.geev, data, vectors)
    if factored is not None:
        return factored
    if not vectors:
        return xp.linalg.eigvals(data).astype(dtype, copy=False)
    w, v = xp.linalg.eig(data)
    w, v = w.astype(dtype, copy=False), v.astype(dtype, copy=False)
    rotated = xp.ones(w.shape, dtype=bool) if data.dtype.kind == "c" else w.imag != 0
    return w, _largest_component_real(xp, v, rotated)


def _largest_component_real(xp, v, rotated):
    """geev's normalization of the ``rotated`` columns: their first component of largest
    magnitude made real and positive (columns of real eigenvalues of a real matrix stay as
    computed). torch's LAPACK (MKL) gives some complex eigenvectors of a real matrix the
    opposite sign: a sign the backend's results do not tell."""
    size = (v * xp.conj(v)).real
    largest = xp.take_along_axis(v, xp.argmax(size, axis=-2)[..., None, :], axis=-2)
    magnitude = xp.abs(largest)
    phase = xp.conj(largest) / xp.where(magnitude > 0, magnitude, 1)
    return v * xp.where(rotated[..., None, :] & (magnitude > 0), phase, 1)


def _check_complex_out(out, names, op):
    outs = out if isinstance(out, (tuple, list)) else (out,)
    for o, name in zip(outs, names):
        if hasattr(o, "_data") and o._data.dtype.kind != "c":
            raise RuntimeError(f"torch.{op}: Expected {name} to be safely castable from ComplexFloat dtype, "
                               f"but got {name} with dtype {_type_word(o._data.dtype)}")


@autocast_policy("fp32")
def eig(input, *, out=None):
    """The eigenvalues and eigenvectors of a square matrix (of each matrix of a batch), as
    complex tensors: ``A V = V diag(eigenvalues)``, each eigenvector of unit norm."""
    A = input
    _check_eig(A, "linalg.eig")
    w, v = _eig_arrays(A._data, True)
    values, vectors = make(w), make(v)
    record(LinalgEigBackward0, (A,), values, vectors)
    if out is not None:
        _check_complex_out(out, ("eigenvalues", "eigenvectors"), "linalg.eig")
    return write_out(linalg_eig(values, vectors), out, op="linalg_eig")


@autocast_policy("fp32")
def eigvals(input, *, out=None):
    """The eigenvalues of a square matrix (of each matrix of a batch), as a complex tensor."""
    A = input
    _check_eig(A, "linalg.eigvals")
    values = make(_eig_arrays(A._data, False))
    record(LinalgEigBackward0, (A,), values)
    if out is not None:
        _check_complex_out(out, ("eigenvalues",), "linalg.eigvals")
    return write_out(values, out, op="linalg_eigvals")
