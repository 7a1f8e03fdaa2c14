"""Matrix products: matmul (and the ``@`` operator), mm, bmm, mv, dot, vdot, inner, outer,
addmm, addmv, baddbmm, addbmm, einsum and tensordot.

Products run as one backend ``matmul``/``einsum`` call (BLAS for float32/float64). Half and
bfloat16 operands are multiplied in float32 and rounded back, as torch's CPU kernels
accumulate them. ``matmul`` with nothing to record is a single call; when autograd records,
it is composed of mm/mv/dot/bmm and views as torch composes it, so its graph carries torch's
node names (``MmBackward0``, ``UnsafeViewBackward0``, ``BmmBackward0`` ...).
"""
import math

import numpy as np

from .._torch_function import dispatch_or_raise
from .. import _dtype, _flop_hook
from .._dtype import result_type_of
from .._backend import cblas, openmp_kernels, products
from .._backend.onednn import gemm
from . import _compiled_functions
from ._common import (
    accepts_out, apply_inplace, broadcasts_to, complex_autograd, conj_if_complex, forward_mode, grad_state, make,
    method, namespace_of, Node, record, record_not_differentiable, sum_to, Tensor, _type_word, with_out, wrap_dim,
)
from .view import UnsafeViewBackward0
from ..amp.policy import autocast_policy
from ..autograd._dual import jvp_by_transposition
from ..autograd.saved_fields import operand_for, saved_size, saved_strides
from .._torch_function import override_or_raise

__all__ = ["matmul", "mm", "bmm", "mv", "dot", "vdot", "inner", "outer", "ger", "addmm",
           "addmv", "baddbmm", "addbmm", "einsum", "tensordot"]

_LOW_PRECISION = (np.dtype(np.float16), _dtype.bfloat16.np)
_BLAS_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _product(fn, *arrays):
    """``fn(*arrays)`` in the operands' dtype; half precision is computed in float32."""
    dtype = arrays[0].dtype
    if dtype in _LOW_PRECISION:
        out = fn(*[a.astype(np.float32) for a in arrays])
        return out.astype(dtype)
    out = fn(*arrays)
    if out.dtype != dtype:  # NumPy returns Python scalars' dtypes for some 0-d results
        out = namespace_of(arrays[0]).asarray(out).astype(dtype)
    return out


def _matmul_data(a, b):
    return _product(products.matmul, a, b)


# ----------------------------------------------------------------------------------------
# Argument checks with torch's messages

_CPP_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
              "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int", "int16": "short int",
              "int8": "signed char", "uint8": "unsigned char", "bool": "bool",
              "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def _word(t):
    """torch's name for a tensor's scalar type in messages (``Float``, ``Long``)."""
    return _type_word(t._data.dtype)


def _cpp(t):
    return _CPP_NAMES[t.dtype.name]


def _check_tensor(x, op, name, pos):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument '{name}' (position {pos}) must be Tensor, not "
                        f"{type(x).__name__}")


def _check_not_bool(kernel, *tensors):
    for t in tensors:
        if t._data.dtype.kind == "b":
            raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')


def _check_mm(mat1, mat2, names=("self", "mat2")):
    if mat1._data.ndim != 2:
        raise RuntimeError(f"{names[0]} must be a matrix")
    if mat2._data.ndim != 2:
        raise RuntimeError(f"{names[1]} must be a matrix")
    (n, k1), (k2, p) = mat1._data.shape, mat2._data.shape
    if k1 != k2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({n}x{k1} and {k2}x{p})")
    if mat1._data.dtype != mat2._data.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_cpp(mat1)} != "
                           f"{_cpp(mat2)}")
    _check_not_bool("addmm_impl_cpu_", mat1)


def _check_bmm(batch1, batch2, dtypes=True):
    if batch1._data.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if batch2._data.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    (b, _, k), (b2, k2, _) = batch1._data.shape, batch2._data.shape
    if b != b2 or k != k2:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{b}, {k}] "
                           f"but got: [{b2}, {k2}].")
    if not dtypes:
        return
    _check_not_bool("bmm", batch1)
    if batch1._data.dtype != batch2._data.dtype:
        raise RuntimeError(f"expected scalar type {_word(batch1)} but found {_word(batch2)}")


def _check_mv(mat, vec):
    if mat._data.ndim != 2 or vec._data.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {mat._data.ndim}, {vec._data.ndim}")
    (n, k), (k2,) = mat._data.shape, vec._data.shape
    if k != k2:
        raise RuntimeError(f"size mismatch, got input ({n}), mat ({n}x{k}), vec ({k2})")
    if mat._data.dtype != vec._data.dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {_word(vec)}, "
                           f"{_word(mat)}, and {_word(vec)}")
    _check_not_bool("addmv_impl_cpu", mat)


def _check_dot(a, b):
    if a._data.ndim != 1 or b._data.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a._data.ndim}D and {b._data.ndim}D tensors")
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {_word(a)} "
                           f"and {_word(b)}")
    n, m = a._data.shape[0], b._data.shape[0]
    if n != m:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to have the "
                           f"same number of elements, but got {n} and {m} elements respectively")
    _check_not_bool("dot", a)


# ----------------------------------------------------------------------------------------
# mm, bmm, mv, dot, vdot

def _bilinear_tangent(product, a, b, ta, tb):
    """The tangent of ``product(a, b)``, a product linear in each operand."""
    out = None if ta is None else product(ta, b)
    if tb is not None:
        out = product(a, tb) if out is None else out + product(a, tb)
    return out


@complex_autograd
class MmBackward0(Node):
    __slots__ = ()
    # torch keeps each operand only for the other's gradient, its strides for its own
    saved_fields = {"self": operand_for(0, 1), "mat2": operand_for(1, 0),
                    "self_sym_sizes": saved_size(0), "self_sym_strides": saved_strides(0, 0),
                    "mat2_sym_sizes": saved_size(1), "mat2_sym_strides": saved_strides(1, 1)}

    def jvp(self, ta, tb):   # linear in each operand
        a, b = self.primals
        return _bilinear_tangent(mm, a, b, ta, tb)

    def backward(self, grad):
        mat1, mat2 = self.saved_tensors
        if grad._data.dtype.kind == "c":   # the adjoints: conjugate transposes
            mat1, mat2 = conj_if_complex(mat1), conj_if_complex(mat2)
        g1 = grad.mm(mat2.mT) if self.next_functions[0][0] is not None else None
        g2 = None
        if self.next_functions[1][0] is not None:
            g2 = _mat2_grad(mat1, mat2, grad)
        return g1, g2

    def backward_arrays(self, grad):
        """``backward``'s products on the arrays (the same products of the same arrays)."""
        arrays = _product_grad_arrays(grad, *self.saved_tensors)
        if arrays is None:
            return None
        g, m1, m2 = arrays
        edges = self.next_functions
        return (make(_matmul_data(g, m2.T)) if edges[0][0] is not None else None,
                make(_mat2_grad_array(m1, m2, g)) if edges[1][0] is not None else None)


def _mat2_grad(mat1, mat2, grad):
    """``mat1^T @ grad`` in mat2's own layout: a transposed weight (Linear's) gets a gradient
    that is contiguous once transposed back, as torch computes it."""
    if _is_transposed(mat2._data):
        return grad.mT.mm(mat1).mT
    return mat1.mT.mm(grad)


def _mat2_grad_array(m1, m2, g):
    """``_mat2_grad`` on arrays."""
    if _is_transposed(m2):
        return _matmul_data(g.T, m1).T
    return _matmul_data(m1.T, g)


def _product_grad_arrays(grad, *saved):
    """For a product node's ``backward_arrays``: the arrays of ``grad`` and of the saved
    operands, where its gradients are real products of one dtype that no FLOP counter is
    counting (a counter counts the backward's products as ops); else None."""
    if grad.__class__ is not Tensor or _flop_hook.counter is not None:
        return None
    g = grad._data
    dtype = g.dtype
    if dtype.kind == "c":
        return None
    arrays = [g]
    for t in saved:
        data = t._data
        if t.__class__ is not Tensor or data.dtype != dtype:
            return None
        arrays.append(data)
    return arrays


# out_dtype= of the products: the inputs' dtype, or float32 for float16/bfloat16 inputs
_MM_OUT_DTYPE = "out_dtype must be the same as input dtype or fp32 for fp16/bf16 inputs"
_BMM_OUT_DTYPE = ("out_dtype only supported for torch.float32 output with float16/bfloat16 inputs or "
                  "same as input dtypes")


def _widened(operand, out_dtype, message):
    """Whether ``out_dtype`` asks for the float32 product of half-precision operands (False:
    it is the operands' own dtype); raises torch's error for any other."""
    target = _dtype.to_dtype(out_dtype).np
    have = operand._data.dtype
    if target == have:
        return False
    if target == np.float32 and have in _LOW_PRECISION:
        return True
    raise RuntimeError(message)


def _widened_product(op, operands):
    """The float32 product of float16/bfloat16 ``operands``; torch has no derivative for it."""
    a, b = (t._data.astype(np.float32) for t in operands)
    return record_not_differentiable(operands, make(_matmul_data(a, b)),
                                     f"derivative for aten::{op} is not implemented")


def _widened_sum(op, input, operands, beta, alpha):
    """``beta * input + alpha * product`` in float32 (torch's decomposition of addmm.dtype)."""
    a, b = (t._data.astype(np.float32) for t in operands)
    product = _matmul_data(a, b)
    _check_bias(input, product.shape)
    result = make(_scale_sum(input._data.astype(np.float32), product, beta, alpha))
    return record_not_differentiable((input, *operands), result,
                                     f"derivative for aten::{op} is not implemented")


def _is_transposed(data):
    return data.ndim == 2 and data.flags.f_contiguous and not data.flags.c_contiguous


@method()
@autocast_policy("lower")
@with_out()
def mm(input, mat2, out_dtype=None):
    """Matrix product of ``input`` (n x m) and ``mat2`` (m x p), an (n x p) tensor.
    ``out_dtype=float32`` with float16 or bfloat16 inputs gives the float32 product, unrounded."""
    return _mm_entry[0](input, mat2) if out_dtype is None else _checked_mm(input, mat2, out_dtype)


def _checked_mm(input, mat2, out_dtype=None):
    """``mm`` in every case its compiled function (``_compiled_functions``) leaves to Python."""
    try:
        _check_tensor(input, "mm", "input", 1)
        _check_tensor(mat2, "mm", "mat2", 2)
    except TypeError as error:   # a tensor-like argument: its __torch_function__
        return dispatch_or_raise(mm, (input, mat2), (input, mat2), {}, error)
    if out_dtype is not None and _widened(input, out_dtype, _MM_OUT_DTYPE):
        _check_mm(input, mat2)
        return _widened_product("mm", (input, mat2))
    return _mm(input, mat2)


def _mm(input, mat2):
    """``mm`` of two tensors, recorded (``matmul`` of two matrices calls it directly)."""
    a, b = input._data, mat2._data
    if a.ndim == 2 and b.ndim == 2 and a.shape[1] == b.shape[0] and a.dtype == b.dtype and a.dtype in _BLAS_DTYPES:
        result = make(products.matmul(a, b))   # (the common case, its checks at once)
    else:
        _check_mm(input, mat2)
        result = make(_matmul_data(a, b))
    node = record(MmBackward0, (input, mat2), result)
    if node is not None:
        node.save(input, mat2)
    if _flop_hook.counter is not None:
        _flop_hook.counter.count("aten.mm", node, (input.shape, mat2.shape), result.shape)
    return result


@complex_autograd
class BmmBackward0(Node):
    __slots__ = ()
    saved_fields = {"self": operand_for(0, 1), "mat2": operand_for(1, 0)}

    def jvp(self, ta, tb):   # linear in each operand
        a, b = self.primals
        return _bilinear_tangent(bmm, a, b, ta, tb)

    def backward(self, grad):
        b1, b2 = self.saved_tensors
        if grad._data.dtype.kind == "c":   # the adjoints: conjugate transposes
            b1, b2 = conj_if_complex(b1), conj_if_complex(b2)
        g1 = grad.bmm(b2.mT) if self.next_functions[0][0] is not None else None
        g2 = b1.mT.bmm(grad) if self.next_functions[1][0] is not None else None
        return g1, g2

    def backward_arrays(self, grad):
        """``backward``'s products on the arrays (the same products of the same arrays)."""
        arrays = _product_grad_arrays(grad, *self.saved_tensors)
        if arrays is None or any(0 in a.shape for a in arrays):
            return None
        g, b1, b2 = arrays
        edges = self.next_functions
        return (make(_matmul_data(g, b2.swapaxes(-1, -2))) if edges[0][0] is not None else None,
                make(_matmul_data(b1.swapaxes(-1, -2), g)) if edges[1][0] is not None else None)


@method()
@autocast_policy("lower")
@with_out()
def bmm(input, mat2, out_dtype=None):
    """Batched matrix product of ``input`` (b x n x m) and ``mat2`` (b x m x p): (b x n x p).
    ``out_dtype=float32`` with float16 or bfloat16 inputs gives the float32 product, unrounded."""
    return _bmm_entry[0](input, mat2) if out_dtype is None else _checked_bmm(input, mat2, out_dtype)


def _checked_bmm(input, mat2, out_dtype=None):
    """``bmm`` in every case its compiled function (``_compiled_functions``) leaves to Python."""
    try:
        _check_tensor(input, "bmm", "input", 1)
        _check_tensor(mat2, "bmm", "mat2", 2)
    except TypeError as error:   # a tensor-like argument: its __torch_function__
        return override_or_raise(bmm, error, input, mat2, out_dtype)
    a, b = input._data, mat2._data
    if out_dtype is None and a.size and b.size:   # (the common case: both checks at once)
        if not (a.ndim == 3 and b.ndim == 3 and a.shape[0] == b.shape[0] and a.shape[2] == b.shape[1]
                and a.dtype == b.dtype and a.dtype in _BLAS_DTYPES):
            _check_bmm(input, mat2)
        result = make(_matmul_data(a, b))
    else:
        _check_bmm(input, mat2, dtypes=False)
        if out_dtype is not None and _widened(input, out_dtype, _BMM_OUT_DTYPE):
            _check_bmm(input, mat2)
            return _widened_product("bmm", (input, mat2))
        if 0 in a.shape + b.shape:
            # torch returns zeros (of mat2's dtype) before its kernel, and so its dtype checks,
            # for an empty product
            result = make(namespace_of(b).zeros((a.shape[0], a.shape[1], b.shape[2]), dtype=b.dtype))
        else:
            _check_bmm(input, mat2)
            result = make(_matmul_data(a, b))
    node = record(BmmBackward0, (input, mat2), result)
    if node is not None:
        node.save(input, mat2)
    if _flop_hook.counter is not None:
        _flop_hook.counter.count("aten.bmm", node, (input.shape, mat2.shape), result.shape)
    return result


@complex_autograd
class MvBackward0(Node):
    __slots__ = ()
    saved_fields = {"self": operand_for(0, 1), "vec": operand_for(1, 0)}

    def jvp(self, ta, tb):   # linear in each operand
        a, b = self.primals
        return _bilinear_tangent(mv, a, b, ta, tb)

    def backward(self, grad):
        mat, vec = self.saved_tensors
        if grad._data.dtype.kind == "c":   # the adjoints: conjugates
            mat, vec = conj_if_complex(mat), conj_if_complex(vec)
        g_mat = grad.unsqueeze(1) * vec if self.next_functions[0][0] is not None else None
        g_vec = mat.mT.mv(grad) if self.next_functions[1][0] is not None else None
        return g_mat, g_vec


@method()
@with_out()
def mv(input, vec):
    """Product of the matrix ``input`` (n x m) and the vector ``vec`` (m): a vector (n)."""
    return _mv_entry[0](input, vec)


def _python_mv(input, vec):
    """``mv`` in every case its compiled function (``_compiled_functions``) leaves to Python."""
    _check_tensor(input, "mv", "input", 1)
    _check_tensor(vec, "mv", "vec", 2)
    if input._data.ndim == 0:   # torch's mv reads input.size(0) first
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    _check_mv(input, vec)
    result = make(_matmul_data(input._data, vec._data))
    node = record(MvBackward0, (input, vec), result)
    if node is not None:
        node.save(input, vec)
    return result


@complex_autograd
class DotBackward0(Node):
    __slots__ = ()
    saved_fields = {"self": operand_for(0, 1), "tensor": operand_for(1, 0)}

    def jvp(self, ta, tb):   # linear in each operand
        a, b = self.primals
        return _bilinear_tangent(dot, a, b, ta, tb)

    def backward(self, grad):
        a, b = self.saved_tensors
        if grad._data.dtype.kind == "c":
            a, b = conj_if_complex(a), conj_if_complex(b)
        ga = grad * b if self.next_functions[0][0] is not None else None
        gb = grad * a if self.next_functions[1][0] is not None else None
        return ga, gb


@complex_autograd
class VdotBackward0(Node):
    """vdot(a, b) = sum(conj(a) * b): antiholomorphic in a, holomorphic in b."""
    __slots__ = ()
    saved_fields = {"self": operand_for(0, 1), "other": operand_for(1, 0)}

    def jvp(self, ta, tb):   # conj(ta) b + conj(a) tb
        a, b = self.primals
        return _bilinear_tangent(vdot, a, b, ta, tb)

    def backward(self, grad):
        a, b = self.saved_tensors
        ga = gb = None
        if self.next_functions[0][0] is not None:
            ga = conj_if_complex(grad) * b
        if self.next_functions[1][0] is not None:
            gb = grad * a
        return ga, gb


def _dot_like(op, node_cls, kernel, input, other):
    _check_tensor(input, op, "input", 1)
    _check_tensor(other, op, "other" if op == "vdot" else "tensor", 2)
    _check_dot(input, other)
    result = make(_product(getattr(namespace_of(input._data), kernel), input._data, other._data))
    node = record(node_cls, (input, other), result)
    if node is not None:
        node.save(input, other)
    return result


@method()
@with_out()
def dot(input, tensor):
    """Dot product of two 1-D tensors with the same number of elements."""
    return _dot_entry[0](input, tensor)


def _python_dot(input, tensor):
    """``dot`` in every case its compiled function (``_compiled_functions``) leaves to Python."""
    return _dot_like("dot", DotBackward0, "dot", input, tensor)


@method()
@accepts_out
def vdot(input, other):
    """Dot product of two 1-D tensors, conjugating the first."""
    return _vdot_entry[0](input, other)


def _python_vdot(input, other):
    """``vdot`` in every case its compiled function leaves to Python."""
    return _dot_like("vdot", VdotBackward0, "vdot", input, other)


# ----------------------------------------------------------------------------------------
# matmul

@method()
@autocast_policy("lower")
@with_out()
def matmul(input, other):
    """Matrix product with torch's rules: 1-D·1-D is a dot product, 2-D·1-D a matrix-vector
    product, a 1-D first operand is a row vector, and for N-D operands the leading (batch)
    dimensions broadcast while the last two multiply."""
    return _matmul_entry[0](input, other)


def _checked_matmul(input, other):
    """``matmul`` in every case its compiled function (``_compiled_functions``) leaves to Python."""
    try:
        _check_tensor(input, "matmul", "input", 1)
        _check_tensor(other, "matmul", "other", 2)
    except TypeError as error:   # a tensor-like argument: its __torch_function__
        return dispatch_or_raise(matmul, (input, other), (input, other), {}, error)
    a, b = input._data, other._data
    if (grad_state.grad_enabled and (input._requires_grad or other._requires_grad)) or forward_mode.active \
            or a.dtype != b.dtype or a.dtype.kind == "b" or _flop_hook.counter is not None:
        return _matmul_composite(input, other)
    try:
        return make(_matmul_data(a, b))
    except ValueError:
        return _matmul_composite(input, other)  # raises torch's message for the shapes


def _matmul_composite(t1, t2):
    """matmul as torch composes it from mm/mv/dot/bmm and views (what autograd records)."""
    d1, d2 = t1._data.ndim, t2._data.ndim
    if d1 == 0 or d2 == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {d1}D "
                           f"and {d2}D")
    if d1 == 1 and d2 == 1:
        return dot(t1, t2)
    if d1 == 2 and d2 == 1:
        return mv(t1, t2)
    if d1 == 2 and d2 == 2:
        return _mm(t1, t2)
    if d1 == 1 and d2 == 2:
        return _mm(t1.unsqueeze(0), t2).squeeze(0)
    if d1 >= 3 and d2 <= 2:
        return _matmul_folded(t1, t2)
    return _matmul_batched(t1, t2)



# Small float products (the sizes' product below oneDNN's least, where the Python ops call NumPy's
# matmul, or dot's dot) of two matrices, of batches of them for bmm, of two vectors for dot and of a
# matrix and a vector for mv: the compiled functions' case (``_compiled_functions``); a matmul of
# two matrices records mm's node, as its composite does, and one of a vector records nothing there.
_mm_entry, _bmm_entry, _matmul_entry, _dot_entry, _mv_entry = (
    _compiled_functions.register(python_op, node_cls, ("self", "other"), kind="matmul", ufunc=ufunc,
                                 max_elements=gemm.MIN_MULTIPLY_ADDS, specifics=(operands, _flop_hook))
    for python_op, node_cls, ufunc, operands in (
        (_checked_mm, MmBackward0, np.matmul, "matrices"), (_checked_bmm, BmmBackward0, np.matmul, "batches"),
        (_checked_matmul, MmBackward0, np.matmul, "matmul"), (_python_dot, DotBackward0, np.dot, "vectors"),
        (_python_mv, MvBackward0, np.matmul, "matrix_vector")))
_vdot_entry = _compiled_functions.register(_python_vdot, VdotBackward0, ("self", "other"), kind="matmul", ufunc=np.vdot,
                                           max_elements=gemm.MIN_MULTIPLY_ADDS, specifics=("vectors", _flop_hook))

def _unsafe_view(t, shape):
    """Reshape the fresh result of a product (torch's ``_unsafe_view``)."""
    out = make(t._data.reshape(shape))
    node = record(UnsafeViewBackward0, (t,), out)
    if node is not None:
        node.in_shape = t._data.shape
    return out


def _matmul_folded(t1, t2):
    """(..., n, m) @ (m, p) or (m,): fold the batch dims of t1 into its rows, one mm/mv."""
    batch_rows = t1._data.shape[:-1]
    folded = t1.reshape(-1, t1._data.shape[-1])
    if t2._data.ndim == 2:
        return _unsafe_view(mm(folded, t2), batch_rows + (t2._data.shape[1],))
    return _unsafe_view(mv(folded, t2), batch_rows)


def _broadcast_batch(s1, s2):
    n = max(len(s1), len(s2))
    p1, p2 = (1,) * (n - len(s1)) + s1, (1,) * (n - len(s2)) + s2
    out = []
    for i, (x, y) in enumerate(zip(p1, p2)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) at "
                               f"non-singleton dimension {i}")
        out.append(x if y == 1 else y)
    return tuple(out)


def _matmul_batched(t1, t2):
    """Broadcast the batch dims, flatten them into one and run a single bmm."""
    d1, d2 = t1._data.ndim, t2._data.ndim
    s1, s2 = t1._data.shape, t2._data.shape
    n, m1 = (s1[-2], s1[-1]) if d1 >= 2 else (1, s1[0])
    m2, p = (s2[-2], s2[-1]) if d2 >= 2 else (s2[0], 1)
    batch = _broadcast_batch(s1[:-2], s2[:-2])
    count = 1
    for s in batch:
        count *= s
    if d2 == 1:
        t2 = t2.unsqueeze(-1)
    b1 = t1.expand(batch + (n, m1)).reshape(count, n, m1)
    b2 = t2.expand(batch + (m2, p)).reshape(count, m2, p)
    out_shape = batch + ((n,) if d1 > 1 else ()) + ((p,) if d2 > 1 else ())
    return _unsafe_view(bmm(b1, b2), out_shape)


@method("__matmul__")
def _matmul_operator(self, other):
    if not isinstance(other, Tensor):
        return NotImplemented
    return matmul(self, other)


@method("__rmatmul__")
def _rmatmul_operator(self, other):
    if not isinstance(other, Tensor):
        return NotImplemented
    return matmul(other, self)


# ----------------------------------------------------------------------------------------
# outer, inner, tensordot

@method("outer", "ger")
@accepts_out
def outer(input, vec2):
    """Outer product of two 1-D tensors: ``out[i, j] = input[i] * vec2[j]``."""
    return _outer_entry[0](input, vec2)


def _python_outer(input, vec2):
    """``outer`` in every case its compiled function leaves to Python."""
    _check_tensor(input, "outer", "input", 1)
    _check_tensor(vec2, "outer", "vec2", 2)
    for name, t in (("self", input), ("vec2", vec2)):
        if t._data.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t._data.ndim}-D")
    untracked = rank_one_untracked(input, vec2)
    return untracked if untracked is not None else input.reshape(-1, 1) * vec2


ger = outer
_outer_entry = _compiled_functions.register(_python_outer, None, kind="outer")


def _tensordot_dims(dims, nd1):
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > nd1:
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        return list(range(-dims, 0)), list(range(dims))
    dims_a, dims_b = dims
    dims_a = [dims_a] if isinstance(dims_a, int) else list(dims_a)
    dims_b = [dims_b] if isinstance(dims_b, int) else list(dims_b)
    return dims_a, dims_b


@autocast_policy("lower")
@with_out()
def tensordot(a, b, dims=2):
    """Sums the products of ``a``'s and ``b``'s elements over the given dimensions: ``dims``
    an int (the last ``dims`` of a with the first ``dims`` of b) or a pair of lists."""
    _check_tensor(a, "tensordot", "a", 1)
    _check_tensor(b, "tensordot", "b", 2)
    dims_a, dims_b = _tensordot_dims(dims, min(a._data.ndim, b._data.ndim))
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    if a._data.dtype != b._data.dtype:
        raise RuntimeError("both inputs should have same dtype")
    sa, sb = a._data.shape, b._data.shape
    ca, cb = [], []
    for da, db in zip(dims_a, dims_b):   # pair by pair, as torch checks them
        ia, ib = wrap_dim(da, a._data.ndim), wrap_dim(db, b._data.ndim)
        if sa[ia] != sb[ib] and sa[ia] != 1 and sb[ib] != 1:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {sa[ia]} in "
                               f"dim {da} and second has size {sb[ib]} in dim {db}")
        ca.append(ia)
        cb.append(ib)
    for ia, ib in zip(ca, cb):   # a size-1 dim broadcasts, as in torch: the other side is summed
        if sa[ia] == 1 and sb[ib] != 1:
            b = b.sum(ib, keepdim=True)
        elif sb[ib] == 1 and sa[ia] != 1:
            a = a.sum(ia, keepdim=True)
    sa, sb = a._data.shape, b._data.shape
    if len(sa) == len(sb) == len(ca) == 1:   # two vectors: their dot product, viewed as torch views it
        return dot(a, b).reshape(())
    free_a = [d for d in range(len(sa)) if d not in ca]
    free_b = [d for d in range(len(sb)) if d not in cb]
    order_a, order_b = free_a + ca, cb + free_b   # (the identity order needs no permute)
    left = (a if order_a == list(range(len(sa))) else a.permute(order_a)).reshape(_numel(sa, free_a), _numel(sa, ca))
    right = (b if order_b == list(range(len(sb))) else b.permute(order_b)).reshape(_numel(sb, cb), _numel(sb, free_b))
    shape = tuple(sa[d] for d in free_a) + tuple(sb[d] for d in free_b)
    return mm(left, right).reshape(shape)


def _numel(shape, dims):
    n = 1
    for d in dims:
        n *= shape[d]
    return n


@method()
@autocast_policy("lower")
@accepts_out
def inner(input, other):
    """Dot product over the last dimension of both tensors (a product if either is 0-D)."""
    _check_tensor(input, "inner", "input", 1)
    _check_tensor(other, "inner", "other", 2)
    if input._data.ndim == 0 or other._data.ndim == 0:
        return input * other
    if input._data.shape[-1] != other._data.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got "
                           f"shapes {list(input._data.shape)} and {list(other._data.shape)}")
    if input._data.ndim == other._data.ndim == 1 and input._data.dtype == other._data.dtype:
        return dot(input, other).reshape(())   # (tensordot's of two vectors, without its steps)
    return tensordot(input, other, ([-1], [-1]))


# ----------------------------------------------------------------------------------------
# addmm, addmv, baddbmm, addbmm: beta * input + alpha * product

def _scaled(grad, factor):
    return grad if factor == 1 else grad * factor


def _scale_sum(bias, product, beta, alpha):
    """beta * bias + alpha * product on arrays (``product`` is fresh: scaled in place);
    beta == 0 ignores bias, nan and inf included, as torch does."""
    if alpha != 1:
        product *= alpha
    if beta == 0:
        return product
    product += bias if beta == 1 else bias * beta
    return product


def _check_bias(bias, shape):
    """The expand error torch raises when ``bias`` does not broadcast to the product."""
    have = bias._data.shape
    if have != shape and (len(have) > len(shape) or any(
            b != 1 and b != p for b, p in zip(reversed(have), reversed(shape)))):
        bias.expand(shape)


class _AddProductNode(Node):
    """beta * input + alpha * f(mat1, mat2): input's gradient is beta * grad summed to its shape."""
    __slots__ = ()

    def input_grad(self, grad):
        if self.next_functions[0][0] is None:
            return None
        return sum_to(_scaled(grad, self.beta), self.in_shape)

    def jvp(self, t_input, t1, t2):
        """beta * input's tangent + alpha * the product's (linear in each factor)."""
        _, m1, m2 = self.primals
        out = _bilinear_tangent(self.product, m1, m2, t1, t2)
        if out is not None and self.alpha != 1:
            out = out * self.alpha
        if t_input is not None and self.beta != 0:
            term = t_input if self.beta == 1 else t_input * self.beta
            out = term if out is None else out + term
        return out


class AddmmBackward0(_AddProductNode):
    __slots__ = ()
    saved_fields = {"alpha": "alpha", "beta": "beta", "mat1": operand_for(0, 2),
                    "mat2": operand_for(1, 1), "mat1_sym_sizes": saved_size(0),
                    "mat1_sym_strides": saved_strides(0, 1), "mat2_sym_sizes": saved_size(1),
                    "mat2_sym_strides": saved_strides(1, 2)}
    product = staticmethod(lambda a, b: mm(a, b))

    def backward(self, grad):
        return self._grads(grad, self.input_grad(grad))

    def backward_arrays(self, grad):
        """On the arrays: the products as ``backward`` computes them (with ``alpha`` 1), and a
        row bias's gradient, the column sums of ``grad``, as a ones-vector product: BLAS
        threads it, NumPy's ``sum(axis=0)`` does not (pinned to ``input_grad`` by tests)."""
        data = grad._data
        edges = self.next_functions
        bias_grad = None
        if edges[0][0] is not None:
            if (self.beta != 1 or type(data) is not np.ndarray or data.dtype not in _BLAS_DTYPES
                    or self.in_shape != data.shape[1:]):
                return None
            bias_grad = make(np.ones(data.shape[0], data.dtype) @ data)
        arrays = _product_grad_arrays(grad, *self.saved_tensors) if self.alpha == 1 else None
        if arrays is None:
            return self._grads(grad, bias_grad) if bias_grad is not None else None
        g, m1, m2 = arrays
        return (bias_grad, make(_matmul_data(g, m2.T)) if edges[1][0] is not None else None,
                make(_mat2_grad_array(m1, m2, g)) if edges[2][0] is not None else None)

    def _grads(self, grad, bias_grad):
        mat1, mat2 = self.saved_tensors
        g = _scaled(grad, self.alpha)
        return (bias_grad, g.mm(mat2.mT) if self.next_functions[1][0] is not None else None,
                _mat2_grad(mat1, mat2, g) if self.next_functions[2][0] is not None else None)


class AddmvBackward0(_AddProductNode):
    __slots__ = ()
    saved_fields = {"alpha": "alpha", "beta": "beta", "mat": operand_for(0, 2),
                    "vec": operand_for(1, 1)}
    product = staticmethod(lambda a, b: mv(a, b))

    def backward(self, grad):
        mat, vec = self.saved_tensors
        g = _scaled(grad, self.alpha)
        return (self.input_grad(grad), g.unsqueeze(1) * vec if self.next_functions[1][0] is not None else None,
                mat.mT.mv(g) if self.next_functions[2][0] is not None else None)


class BaddbmmBackward0(_AddProductNode):
    __slots__ = ()
    saved_fields = {"alpha": "alpha", "beta": "beta", "batch1": operand_for(0, 2),
                    "batch2": operand_for(1, 1)}
    product = staticmethod(lambda a, b: bmm(a, b))

    def backward(self, grad):
        b1, b2 = self.saved_tensors
        g = _scaled(grad, self.alpha)
        return (self.input_grad(grad), g.bmm(b2.mT) if self.next_functions[1][0] is not None else None,
                b1.mT.bmm(g) if self.next_functions[2][0] is not None else None)


class AddbmmBackward0(_AddProductNode):
    __slots__ = ()
    saved_fields = {"alpha": "alpha", "beta": "beta", "batch1": operand_for(0, 2),
                    "batch2": operand_for(1, 1),
                    "batch1_sym_argsize_0": lambda node: node.saved_tensors[0]._data.shape[0],
                    "batch1_sym_argsize_1": lambda node: node.saved_tensors[0]._data.shape[1],
                    "batch2_sym_argsize_2": lambda node: node.saved_tensors[1]._data.shape[2]}
    product = staticmethod(lambda a, b: bmm(a, b).sum(0))

    def backward(self, grad):
        b1, b2 = self.saved_tensors
        g = _scaled(grad, self.alpha).unsqueeze(0).expand(b1._data.shape[0], *grad._data.shape)
        return (self.input_grad(grad), g.bmm(b2.mT) if self.next_functions[1][0] is not None else None,
                b1.mT.bmm(g) if self.next_functions[2][0] is not None else None)


def _add_product(node_cls, input, m1, m2, product, beta, alpha, combine=_scale_sum):
    _check_bias(input, product.shape)
    result = make(combine(input._data, product, beta, alpha))
    node = record(node_cls, (input, m1, m2), result)
    if node is not None:
        node.save(m1, m2)
        node.beta, node.alpha, node.in_shape = beta, alpha, input._data.shape
    return result


@autocast_policy("lower")
@with_out()
def addmm(input, mat1, mat2, out_dtype=None, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat1 @ mat2)``; ``input`` broadcasts to the product's shape.
    ``out_dtype=float32`` with float16 or bfloat16 matrices computes in float32 throughout."""
    if out_dtype is None:
        return _addmm_entry[0](input, mat1, mat2, beta, alpha)
    return _python_addmm(input, mat1, mat2, beta, alpha, out_dtype)


def _python_addmm(input, mat1, mat2, beta=1, alpha=1, out_dtype=None):
    """``addmm`` in every case its compiled function (``_compiled_functions``) leaves to Python."""
    if not (isinstance(input, Tensor) and isinstance(mat1, Tensor) and isinstance(mat2, Tensor)):
        for i, (name, t) in enumerate((("input", input), ("mat1", mat1), ("mat2", mat2))):
            _check_tensor(t, "addmm", name, i + 1)
    if mat1._data.ndim != 2 or mat2._data.ndim != 2:
        for name, t in (("mat1", mat1), ("mat2", mat2)):
            if t._data.ndim != 2:
                raise RuntimeError(f"{name} must be a matrix, got {t._data.ndim}-D tensor")
    if mat1._data.dtype != mat2._data.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {_word(mat1)} and {_word(mat2)}")
    if out_dtype is not None and _widened(mat1, out_dtype, _MM_OUT_DTYPE):
        _check_mm(mat1, mat2)
        return _widened_sum("addmm", input, (mat1, mat2), beta, alpha)
    if input._data.dtype != mat2._data.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {_word(input)} and {_word(mat2)}")
    _check_mm(mat1, mat2)
    with_bias = _bias_plus_product(input._data, mat1._data, mat2._data, beta, alpha)
    if with_bias is not None:
        result = _add_product(AddmmBackward0, input, mat1, mat2, with_bias, beta, alpha,
                              combine=_bias_already_added)
    else:
        result = _add_product(AddmmBackward0, input, mat1, mat2,
                              _matmul_data(mat1._data, mat2._data), beta, alpha)
    if _flop_hook.counter is not None:
        _flop_hook.counter.count("aten.addmm", result.grad_fn,
                                 (input.shape, mat1.shape, mat2.shape), result.shape)
    return result


_AFFINE_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def affine_rows_untracked(input, weight, bias):
    """``bias + input @ weight.T`` for a 2-D float ``input``, a (out, in) ``weight`` and a
    (out,) ``bias`` of one dtype, as ``addmm`` computes it, where nothing is recorded (no
    gradient, no tangent, no FLOP counter) and the result is below ``FILLED_BIAS_MIN_SIZE``:
    without the transposed view's op and ``addmm``'s checks (a linear layer's inference);
    None where that does not apply."""
    if grad_state.grad_enabled and (input._requires_grad or weight._requires_grad or bias._requires_grad):
        return None   # (training's case, first)
    x, w, b = input._data, weight._data, bias._data
    if (x.__class__ is not np.ndarray or w.__class__ is not np.ndarray or b.__class__ is not np.ndarray
            or x.ndim != 2 or x.dtype not in _AFFINE_DTYPES or w.dtype != x.dtype or b.dtype != x.dtype
            or b.shape != (w.shape[0],) or x.shape[0] * w.shape[0] >= products.FILLED_BIAS_MIN_SIZE
            or forward_mode.active or _flop_hook.counter is not None):
        return None
    fused = _bias_plus_product(b, x, w.T, 1, 1)
    return make(_scale_sum(b, _matmul_data(x, w.T), 1, 1) if fused is None else fused)


# Where the compiled loop cannot be built, outer products of this many elements or more go to
# the GEMM (below, the broadcast multiply costs less than the call; scratch timing, 1 thread)
RANK_ONE_GEMM_MIN_ELEMENTS = 1 << 15


def rank_one_untracked(vec1, vec2, input=None, beta=0, alpha=1):
    """``beta * input + alpha * outer(vec1, vec2)`` (``input`` None: the outer product) by
    ``rank_one_array`` where nothing is recorded (no gradient, no tangent, no FLOP counter);
    None where that does not apply."""
    tensors = (vec1, vec2) if input is None else (vec1, vec2, input)
    if (forward_mode.active or _flop_hook.counter is not None
            or (grad_state.grad_enabled and any(t._requires_grad for t in tensors))):
        return None
    c = rank_one_array(vec1._data, vec2._data, None if input is None else input._data, beta, alpha)
    return None if c is None else make(c)


def rank_one_array(a, b, d=None, beta=0, alpha=1):
    """``beta * d + alpha * outer(a, b)`` (``d`` None: the outer product) for float32/float64
    vectors of one dtype and a ``d`` of it that broadcasts to the product, by a compiled loop
    (``openmp_kernels.rank_one``: each element rounded as the composite's NumPy operations
    round it; one call where the composite is two to four ops, and NumPy's broadcast multiply
    of a column by a row slows down past a few thousand elements), else by one BLAS GEMM with
    an inner dimension of 1 (from ``RANK_ONE_GEMM_MIN_ELEMENTS``); a ``beta`` of 0 ignores
    ``d``, as torch's ``addr`` does. None where neither applies."""
    if (type(a) is not np.ndarray or type(b) is not np.ndarray or a.dtype != b.dtype
            or a.dtype not in _AFFINE_DTYPES):
        return None
    c = openmp_kernels.rank_one(a, b, d, beta, alpha)
    if c is not None or a.size * b.size < RANK_ONE_GEMM_MIN_ELEMENTS:
        return c
    shape = (a.shape[0], b.shape[0])
    if d is None:
        c, beta = np.empty(shape, a.dtype), 0
    else:
        if type(d) is not np.ndarray or d.dtype != a.dtype or not broadcasts_to(d.shape, shape):
            return None
        c = np.array(np.broadcast_to(d, shape), order="C")
    if not cblas.gemm(a.reshape(-1, 1), b.reshape(1, -1), c, float(alpha), float(beta)):
        return None
    return c


def _bias_plus_product(bias, m1, m2, beta, alpha):
    """``bias + m1 @ m2`` as one GEMM that adds the bias (``products.affine``), which saves
    the pass over the result that adding it afterwards makes; None where that does not apply
    (other coefficients or dtypes, strided operands, small results)."""
    if m1.size * m2.size < products.FUSED_BIAS_MIN_OPERANDS:
        return None
    shape = (m1.shape[0], m2.shape[1])
    if (beta != 1 or alpha != 1 or type(bias) is not np.ndarray or bias.dtype != m1.dtype
            or not broadcasts_to(bias.shape, shape) or not cblas.gemm_supports(m1, m2)):
        return None
    return products.affine(m1, m2, bias)


def _bias_already_added(bias, product, beta, alpha):
    return product


@with_out()
def addmv(input, mat, vec, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat @ vec)``."""
    return _addmv_entry[0](input, mat, vec, beta, alpha)


def _python_addmv(input, mat, vec, beta=1, alpha=1):
    """``addmv`` in every case its compiled function leaves to Python."""
    for i, (name, t) in enumerate((("input", input), ("mat", mat), ("vec", vec))):
        _check_tensor(t, "addmv", name, i + 1)
    if input._data.ndim == 0 and mat._data.ndim == 2 and vec._data.ndim == 1 \
            and mat._data.shape[1] != vec._data.shape[0]:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")   # as torch's message
    _check_mv(mat, vec)
    if input._data.dtype != mat._data.dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {_word(input)}, "
                           f"{_word(mat)}, and {_word(vec)}")
    if mat._data.size == 0:   # torch returns beta * input as it is (not broadcast) for an empty mat
        _check_bias(input, (mat._data.shape[0],))
        return input * beta
    return _add_product(AddmvBackward0, input, mat, vec, _matmul_data(mat._data, vec._data),
                        beta, alpha)


@autocast_policy("lower")
@with_out()
def baddbmm(input, batch1, batch2, out_dtype=None, *, beta=1, alpha=1):
    """``beta * input + alpha * bmm(batch1, batch2)``. ``out_dtype=float32`` with float16 or
    bfloat16 batches computes in float32 throughout."""
    if out_dtype is None:
        return _baddbmm_entry[0](input, batch1, batch2, beta, alpha)
    return _python_baddbmm(input, batch1, batch2, beta, alpha, out_dtype)


def _python_baddbmm(input, batch1, batch2, beta=1, alpha=1, out_dtype=None):
    """``baddbmm`` in every case its compiled function leaves to Python."""
    for i, (name, t) in enumerate((("input", input), ("batch1", batch1), ("batch2", batch2))):
        _check_tensor(t, "baddbmm", name, i + 1)
    nd2 = batch2._data.ndim
    if batch1._data.ndim == 0:   # torch reads batch1.size(0) first
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    if batch1._data.ndim == 3 and nd2 < 3:   # torch reads batch2.size(2) first
        raise IndexError("Dimension specified as 2 but tensor has no dimensions" if nd2 == 0 else
                         f"Dimension out of range (expected to be in range of [{-nd2}, {nd2 - 1}], but got 2)")
    _check_bmm(batch1, batch2)
    if out_dtype is not None and _widened(batch1, out_dtype, _BMM_OUT_DTYPE):
        return _widened_sum("baddbmm", input, (batch1, batch2), beta, alpha)
    if input._data.dtype != batch1._data.dtype:
        raise RuntimeError(f"Input dtypes must be the same, got: input {_cpp(input)}, batch1: "
                           f"{_cpp(batch1)}, batch2: {_cpp(batch2)}")
    result = _add_product(BaddbmmBackward0, input, batch1, batch2,
                          _matmul_data(batch1._data, batch2._data), beta, alpha)
    if _flop_hook.counter is not None:
        _flop_hook.counter.count("aten.baddbmm", result.grad_fn,
                                 (input.shape, batch1.shape, batch2.shape), result.shape)
    return result


# The products added to a small input (below the sizes from which the Python ops'
# products may take another kernel, or addmm's bias a fused GEMM): the compiled functions' case
_addmm_entry, _addmv_entry, _baddbmm_entry = (
    _compiled_functions.register(python_op, node_cls, kind="add_product", ufunc=np.matmul, max_elements=most,
                                 specifics=(operands, _flop_hook))
    for python_op, node_cls, operands, most in (
        (_python_addmm, AddmmBackward0, "matrices", min(gemm.MIN_MULTIPLY_ADDS, products.FUSED_BIAS_MIN_OPERANDS)),
        (_python_addmv, AddmvBackward0, "matrix_vector", gemm.MIN_MULTIPLY_ADDS),
        (_python_baddbmm, BaddbmmBackward0, "batches", gemm.MIN_MULTIPLY_ADDS)))


@autocast_policy("lower")
@with_out()
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * sum_i(batch1[i] @ batch2[i])``."""
    return _addbmm_entry[0](input, batch1, batch2, beta, alpha)


def _python_addbmm(input, batch1, batch2, beta=1, alpha=1):
    """``addbmm`` in every case its compiled function (``_compiled_functions``) leaves to Python."""
    for i, (name, t) in enumerate((("input", input), ("batch1", batch1), ("batch2", batch2))):
        _check_tensor(t, "addbmm", name, i + 1)
    if batch1._data.ndim == 0:   # torch reads batch1.size(1) first
        raise IndexError("Dimension specified as 1 but tensor has no dimensions")
    nd2 = batch2._data.ndim
    if batch1._data.ndim == 3 and nd2 < 3:   # then batch2.size(2)
        raise IndexError("Dimension specified as 2 but tensor has no dimensions" if nd2 == 0 else
                         f"Dimension out of range (expected to be in range of [{-nd2}, {nd2 - 1}], but got 2)")
    for name, t in (("batch1", batch1), ("batch2", batch2)):
        if t._data.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    (b, n, k), (b2, k2, p) = batch1._data.shape, batch2._data.shape
    if b != b2:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {b} and {b2}")
    if k != k2:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({n}x{k} and {k2}x{p})")
    if batch1._data.dtype != batch2._data.dtype or input._data.dtype != batch1._data.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {_word(input)} and "
                           f"{_word(batch2)}")
    _check_not_bool("addmm_impl_cpu_", batch1)
    # the batches side by side: one (n, b*k) by (b*k, p) product sums them
    product = _product(lambda x, y: products.matmul(x.transpose(1, 0, 2).reshape(n, b * k), y.reshape(b * k, p)),
                       batch1._data, batch2._data)
    return _add_product(AddbmmBackward0, input, batch1, batch2, product, beta, alpha)


_addbmm_entry = _compiled_functions.register(_python_addbmm, AddbmmBackward0, kind="add_product", ufunc=np.matmul,
                                             max_elements=gemm.MIN_MULTIPLY_ADDS,
                                             specifics=("summed_batches", _flop_hook))


def _inplace_product(fn):
    def inplace(self, *args, **kwargs):
        return apply_inplace(self, fn, *args, **kwargs)
    inplace.__name__ = fn.__name__ + "_"
    inplace.__doc__ = f"In-place version of :func:`{fn.__name__}`."
    return inplace


for _fn in (addmm, addmv, baddbmm, addbmm):
    method(_fn.__name__)(_fn)
    method(_fn.__name__ + "_")(_inplace_product(_fn))


# ----------------------------------------------------------------------------------------
# einsum

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
# Up to this many terms (the product of every letter's size), NumPy's einsum loops over them
# directly, which costs less than planning a contraction order (optimize=True) for each call.
EINSUM_DIRECT_MAX_TERMS = 1 << 16


def _parse_einsum(equation, operands):
    """The equation with explicit subscripts: ([subscripts per operand], output subscripts),
    each a string of letters, the ellipsis replaced by letters the equation does not use."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) > len(operands):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(terms) < len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    for i, ch in enumerate(eq):
        if ch not in _LETTERS and ch not in ".,->":
            raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the equation "
                               "string, subscripts must be in [a-zA-Z]")
    spare = [c for c in _LETTERS if c not in eq]
    ell_dims = 0
    for term, op in zip(terms, operands):
        n_letters = len(term.replace("...", ""))
        if "..." in term:
            if n_letters > op._data.ndim:
                raise RuntimeError(f"einsum(): the number of subscripts in the equation ({n_letters}) is "
                                   f"more than the number of dimensions ({op._data.ndim}) for operand "
                                   f"{terms.index(term)}")
            ell_dims = max(ell_dims, op._data.ndim - n_letters)
        elif n_letters != op._data.ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({n_letters}) does "
                               f"not match the number of dimensions ({op._data.ndim}) for operand "
                               f"{terms.index(term)} and no ellipsis was given")
    ell = "".join(spare[:ell_dims])
    subs = []
    for term, op in zip(terms, operands):
        if "..." in term:
            k = op._data.ndim - len(term.replace("...", ""))
            term = term.replace("...", ell[ell_dims - k:] if k else "")
        subs.append(term)
    if arrow:
        out = rhs.replace("...", ell)
        seen = set()
        for c in out:
            if c in seen:
                raise RuntimeError(f"einsum(): output subscript {c} appears more than once in the output")
            if not any(c in s for s in subs):
                raise RuntimeError(f"einsum(): output subscript {c} does not appear in the equation "
                                   "for any input operand")
            seen.add(c)
    else:
        counts = {}
        for s in subs:
            for c in s:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted((c for c, n in counts.items() if n == 1 and c not in ell),
                                   key=_LETTERS.index))
    return subs, out


def _letter_sizes(subs, operands):
    """Each letter's size (size-1 dims broadcast), with torch's error for a mismatch."""
    sizes = {}
    for i, (s, op) in enumerate(zip(subs, operands)):
        own = {}
        for c, n in zip(s, op._data.shape):   # a letter repeated in one operand: a diagonal
            if own.setdefault(c, n) != n:
                raise RuntimeError(f"einsum(): subscript {c} is repeated for operand {i} but the sizes "
                                   f"don't match, {own[c]} != {n}")
        for c, n in zip(s, op._data.shape):
            prev = sizes.get(c, 1)
            if prev == 1:
                sizes[c] = n
            elif n != prev and n != 1:
                raise RuntimeError(f"einsum(): subscript {c} has size {n} for operand {i} which does not "
                                   f"broadcast with previously seen size {prev}")
    return sizes


def _drop_broadcast_dims(s, data, sizes):
    """Size-1 dims of a letter that is larger elsewhere are broadcast: squeeze them away."""
    keep = [i for i, c in enumerate(s) if data.shape[i] == sizes[c]]
    if len(keep) == len(s):
        return s, data
    return "".join(s[i] for i in keep), data.reshape(tuple(data.shape[i] for i in keep))


class EinsumBackward0(Node):
    """The gradient of an operand is the einsum of the output's gradient with the others."""
    __slots__ = ()
    jvp = jvp_by_transposition

    def backward(self, grad):
        operands = self.saved_tensors
        return tuple(self.operand_grad(i, grad, operands) if self.next_functions[i][0] is not None
                     else None for i in range(len(operands)))

    def operand_grad(self, i, grad, operands):
        subs, out, sizes = self.subs, self.out, self.sizes
        s = subs[i]
        others = [(subs[j], _reshaped(operands[j], self.reduced_shapes[j]))
                  for j in range(len(operands)) if j != i]
        unique = "".join(dict.fromkeys(s))
        reachable = set(out).union(*[set(t) for t, _ in others])
        present = "".join(c for c in unique if c in reachable)
        eq = ",".join([out] + [t for t, _ in others]) + "->" + present
        g = einsum(eq, grad, *[op for _, op in others])
        if present != unique:  # letters summed only within this operand: broadcast back
            g = g.reshape(tuple(sizes[c] if c in present else 1 for c in unique))
            g = g.expand(tuple(sizes[c] for c in unique))
        if unique != s:  # repeated letters (a diagonal): put the gradient on the diagonal
            g = _embed_diagonal(g, unique, s, sizes)
        shape = self.shapes[i]
        if g._data.shape != shape:
            g = g.reshape(shape)
        return g


def _reshaped(t, shape):
    return t if t._data.shape == shape else t.reshape(shape)


def _embed_diagonal(g, unique, s, sizes):
    """The tensor with subscripts ``s`` (letters repeated) that is ``g`` on its diagonal."""
    spare = [c for c in _LETTERS if c not in s]
    renamed, eyes = [], []
    seen = set()
    for c in s:
        if c in seen:
            fresh = spare.pop(0)
            renamed.append(fresh)
            eyes.append(c + fresh)
        else:
            seen.add(c)
            renamed.append(c)
    from .creation import eye
    eye_tensors = [eye(sizes[e[0]], dtype=g.dtype, device=g.device) for e in eyes]
    return einsum(",".join([unique] + eyes) + "->" + "".join(renamed), g, *eye_tensors)


@autocast_policy("lower")
def einsum(equation, *operands):
    """Sums the product of the operands' elements over the indices the equation names
    (Einstein summation): ``einsum("bij,bjk->bik", a, b)``. Operands come as arguments or as
    one list; ``...`` stands for broadcast dimensions."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not isinstance(equation, str):
        raise TypeError(f"einsum(): argument 'equation' (position 1) must be str, not "
                        f"{type(equation).__name__}")
    for i, op in enumerate(operands):
        _check_tensor(op, "einsum", "operands", i + 2)
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    key = (equation, tuple((op._data.shape, op._data.dtype) for op in operands))
    plan = _einsum_plans.get(key)
    if plan is None:
        plan = _einsum_plan(equation, operands)
        if len(_einsum_plans) >= _EINSUM_PLANS_KEPT:
            _einsum_plans.clear()
        _einsum_plans[key] = plan
    out, sizes, reduced_subs, reduced_shapes, eq, dtype, optimize = plan
    xp = namespace_of(operands[0]._data)
    arrays = [op._data if op._data.shape == shape else op._data.reshape(shape)
              for op, shape in zip(operands, reduced_shapes)]
    result = make(_product(lambda *arrays: xp.einsum(eq, *arrays, optimize=optimize),
                           *[d.astype(dtype, copy=False) for d in arrays]))
    node = record(EinsumBackward0, operands, result)
    if node is not None:
        node.save(*operands)
        node.subs, node.out, node.sizes = list(reduced_subs), out, sizes
        node.shapes = [op._data.shape for op in operands]
        node.reduced_shapes = list(reduced_shapes)
    return result


# the plans of the equations einsum was last given (by equation and operands' shapes and dtypes), up to this many
_EINSUM_PLANS_KEPT = 256
_einsum_plans = {}


def _einsum_plan(equation, operands):
    """What einsum computes for ``equation`` on operands of these shapes and dtypes (raising torch's errors
    for them): (the output's letters, each letter's size, each operand's letters and shape with the size-1
    dims of a broadcast letter dropped, NumPy's equation, the dtype computed in, whether NumPy's einsum
    optimizes the order)."""
    subs, out = _parse_einsum(equation, operands)
    first = operands[0]
    # torch contracts a letter two operands share (and the output lacks) with bmm, which wants
    # one dtype and no bool; without one it multiplies, promoting; one operand's sums give int64
    # for integer and bool input, as sum does
    contracted = any(c not in out and sum(c in s for s in subs) > 1 for c in set("".join(subs)))
    dtype = first._data.dtype
    if contracted:
        _check_not_bool("bmm", first)
        for op in operands[1:]:
            if op._data.dtype != first._data.dtype:
                raise RuntimeError(f"expected scalar type {_word(first)} but found {_word(op)}")
    elif len(operands) > 1:
        dtype = result_type_of(*operands).np
    if dtype.kind in "biu" and len(operands) == 1 and any(c not in out for c in subs[0]):
        dtype = np.dtype(np.int64)
    sizes = _letter_sizes(subs, operands)
    reduced = [_drop_broadcast_dims(s, op._data, sizes) for s, op in zip(subs, operands)]
    eq = ",".join(s for s, _ in reduced) + "->" + out
    optimize = math.prod(sizes.values()) > EINSUM_DIRECT_MAX_TERMS
    return (out, sizes, tuple(s for s, _ in reduced), tuple(d.shape for _, d in reduced), eq, dtype, optimize)
