"""The softmax family: ``softmax``, ``log_softmax`` and ``softmin``, each a single node with its
backward in ember ops and on arrays; along the last dim of float32 inputs on ember's row
loops."""
import math
import warnings

import numpy as np

from ...ops._common import (
    make, method, namespace_of, Node, record, widened, wrap_dim,
)
from ..._backend import onednn, vector_math
from ..._backend.choice import KernelChoice
from ...ops.reduce import array_sum
from ...autograd._dual import jvp_by_backward
from ..._torch_function import override_or_raise
from ...ops import _compiled_functions

__all__ = ["softmax", "log_softmax", "softmin", "gumbel_softmax"]


def _softmax_dim(name, ndim):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to "
                  "include dim=X as an argument.", UserWarning, stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


class SoftmaxBackward0(Node):
    __slots__ = ()
    saved_fields = {"dim": "dim", "result": 0}
    jvp = jvp_by_backward   # (its Jacobian, diag(y) - y y^T, is symmetric)

    def backward(self, grad):
        (out,) = self.saved_tensors
        return (out * (grad - (grad * out).sum(self.dim, keepdim=True)),)

    def backward_arrays(self, grad):
        (out,) = self.saved_tensors
        if not out.ndim:
            return None
        return (make(_in_float32(_softmax_backward, grad._data, out._data, self.dim)),)


class LogSoftmaxBackward0(Node):
    __slots__ = ()
    saved_fields = {"dim": "dim", "result": 0}

    def jvp(self, tangent):
        out = self.results[0]
        return tangent - (out.exp() * tangent).sum(self.dim, keepdim=True)

    def backward(self, grad):
        (out,) = self.saved_tensors
        return (grad - out.exp() * grad.sum(self.dim, keepdim=True),)

    def backward_arrays(self, grad):
        (out,) = self.saved_tensors
        if not out.ndim:
            return None
        return (make(_in_float32(_log_softmax_backward, grad._data, out._data, self.dim)),)


def _in_float32(kernel, *arrays_then_axis):
    """``kernel(*arrays, axis)`` with half and bfloat16 arrays widened to float32, the result
    rounded once to the first array's dtype."""
    *arrays, axis = arrays_then_axis
    dtype = arrays[0].dtype
    result = kernel(*[widened(a) for a in arrays], axis)
    return result if result.dtype == dtype else result.astype(dtype)


def softmax_backward_array(grad, out, axis):
    """``out * (grad - sum(grad * out))`` along ``axis``, in one fresh buffer."""
    xp = namespace_of(out)
    result = xp.multiply(grad, out)
    total = array_sum(result, axis=axis, keepdims=True)   # (the sum ember's sum makes)
    xp.subtract(grad, total, out=result)
    return xp.multiply(result, out, out=result)


def softmax_backward_rows_(grad, out):
    """``out * (grad - sum(grad * out))`` along the last axis, in place in ``grad`` (a fresh
    array). The row sums are one ``einsum`` that never forms ``grad * out``: 3-4x cheaper
    than a product and NumPy's reduction over short rows."""
    xp = namespace_of(out)
    grad -= xp.einsum("...j,...j->...", grad, out)[..., None]
    grad *= out
    return grad


def log_softmax_backward_array(grad, out, axis):
    """``grad - exp(out) * sum(grad)`` along ``axis``, in one fresh buffer."""
    xp = namespace_of(out)
    result = xp.exp(out)
    result *= array_sum(grad, axis=axis, keepdims=True)
    return xp.subtract(grad, result, out=result)


def row_peak(data, axis):
    """The max along ``axis`` (kept), 0 where it is -inf: shifting by it keeps ``exp`` in
    range. Where a row holds +inf or NaN the peak is NaN, so that the whole row comes out NaN,
    as torch's softmax makes it (from ``inf - inf``; NaN's arithmetic raises no warning)."""
    xp = namespace_of(data)
    if xp is np:   # the ufuncs' own reductions, without NumPy's Python-level wrappers
        peak = np.maximum.reduce(data, axis=axis, keepdims=True)
        if np.logical_and.reduce(np.isfinite(peak), axis=None):
            return peak
        return np.where(peak == -np.inf, 0, np.where(peak == np.inf, np.nan, peak))
    peak = data.max(axis=axis, keepdims=True)   # (no check of the peaks: it would wait for a GPU)
    return xp.where(peak == -xp.inf, 0, xp.where(peak == xp.inf, xp.nan, peak))


def softmax_array(data, axis):
    """``exp(x) / sum(exp(x))`` along ``axis`` of a float array, shifted by the max."""
    xp = namespace_of(data)
    e = xp.subtract(data, row_peak(data, axis))
    xp.exp(e, out=e)
    e /= np.add.reduce(e, axis=axis, keepdims=True) if xp is np else e.sum(axis=axis, keepdims=True)
    return e


def log_softmax_array(data, axis):
    """``x - logsumexp(x)`` along ``axis`` of a float array, shifted by the max."""
    xp = namespace_of(data)
    shifted = xp.subtract(data, row_peak(data, axis))
    exps = xp.exp(shifted)
    total = np.add.reduce(exps, axis=axis, keepdims=True) if xp is np else exps.sum(axis=axis, keepdims=True)
    shifted -= xp.log(total)
    return shifted


# Where ember's row loops cannot be built, softmax and log_softmax along the last dim of
# float32 arrays, and softmax's backward, run on oneDNN from inputs of this many elements
# (``python -m benchmarks.onednn_layers --only softmax``, with and without ``--forward``);
# below it the ctypes calls around the kernel cost more than NumPy's passes. oneDNN has jit
# kernels only for the innermost axis. log_softmax's backward stays off oneDNN: oneDNN's is
# several times less accurate than torch's.
SOFTMAX_ONEDNN_MIN_ELEMENTS = 32768


def _on_onednn(array, axis):
    return (axis == array.ndim - 1 and array.size >= SOFTMAX_ONEDNN_MIN_ELEMENTS
            and type(array) is np.ndarray)


def _onednn_softmax_forward(data, axis, log):
    """oneDNN's softmax, or None where the input holds a NaN or +inf (its largest element is
    not below +inf): oneDNN's maximum skips NaNs, and only that element comes out NaN, where
    torch's whole row does."""
    if not _on_onednn(data, axis) or not np.maximum.reduce(data, axis=None) < math.inf:
        return None
    return onednn.softmax.softmax_forward(data, axis, log)


def _compiled_softmax(data, axis, log):
    """Along the last axis, ember's row loop (``vector_math.softmax_rows``), else oneDNN's
    softmax where it applies; None elsewhere."""
    if axis == data.ndim - 1:
        out = vector_math.softmax_rows(data, log)
        if out is not None:
            return out
    return _onednn_softmax_forward(data, axis, log)


def _onednn_softmax_backward(grad, out, axis):
    if _on_onednn(out, axis):
        return onednn.softmax.softmax_backward(grad, out, axis)
    return None


def _compiled_softmax_backward(grad, out, axis):
    if axis == out.ndim - 1:
        result = vector_math.softmax_rows_backward(grad, out, False)
        if result is not None:
            return result
    return _onednn_softmax_backward(grad, out, axis)


def _compiled_log_softmax_backward(grad, out, axis):
    return vector_math.softmax_rows_backward(grad, out, True) if axis == out.ndim - 1 else None


# softmax and log_softmax, forward and backward, along the last axis on ember's row loops (one
# pass for the peak, one for the sum of the exponentials, one for the result) or oneDNN's
# (``_compiled_softmax``), else on NumPy's passes
_softmax = KernelChoice("softmax", onednn=lambda data, axis: _compiled_softmax(data, axis, False),
                        numpy=softmax_array)
_log_softmax = KernelChoice("log_softmax", onednn=lambda data, axis: _compiled_softmax(data, axis, True),
                            numpy=log_softmax_array)
_softmax_backward = KernelChoice("softmax backward", onednn=_compiled_softmax_backward,
                                 numpy=softmax_backward_array)
_log_softmax_backward = KernelChoice("log_softmax backward", onednn=_compiled_log_softmax_backward,
                                     numpy=log_softmax_backward_array)


def _softmax_input(input, dim, dtype, name):
    if dim is None:
        dim = _softmax_dim(name, input.ndim)
    if dtype is not None:
        input = input.to(dtype)
    dim = wrap_dim(dim, input.ndim)
    data = input._data
    if not (input.is_floating_point() or input.is_complex()):
        from ...ops._common import _type_word
        raise NotImplementedError(f'"{name}_lastdim_kernel_impl" not implemented for '
                                  f"'{_type_word(data.dtype)}'")
    return input, dim, data


_SINGLE_AND_DOUBLE = (np.dtype(np.float32), np.dtype(np.float64))


def _softmax_node(input, dim, dtype, name, kernel, node_cls):
    data = input._data
    ndim = data.ndim
    if dtype is None and dim.__class__ is int and -ndim <= dim < ndim and data.dtype in _SINGLE_AND_DOUBLE \
            and data.size:   # (the common case, at once)
        dim %= ndim
        out = make(kernel(data, dim))
    else:
        input, dim, data = _softmax_input(input, dim, dtype, name)
        if data.size == 0:
            out = make(data.copy())
        elif data.ndim == 0:
            out = make(_in_float32(kernel, data.reshape(1), 0).reshape(()))
        else:
            out = make(_in_float32(kernel, data, dim))
    node = record(node_cls, (input,), out)
    if node is not None:
        node.save(out)
        node.dim = dim
    return out


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """Applies ``exp(x_i) / sum_j exp(x_j)`` along ``dim``: the result lies in [0, 1] and sums
    to 1 along ``dim``."""
    if dtype is None:
        return _softmax_entry[0](input, dim)
    return _python_softmax(input, dim, dtype)


def _python_softmax(input, dim=None, dtype=None):
    """``softmax`` in every case its compiled function (``ops._compiled_functions``) leaves to Python."""
    try:
        return _softmax_node(input, dim, dtype, "softmax", _softmax, SoftmaxBackward0)
    except (AttributeError, TypeError) as error:   # a tensor-like argument's override
        return override_or_raise(softmax, error, input, dim, 3, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """Applies ``log(softmax(x))`` along ``dim``, computed stably."""
    if dtype is None:
        return _log_softmax_entry[0](input, dim)
    return _python_log_softmax(input, dim, dtype)


def _python_log_softmax(input, dim=None, dtype=None):
    """``log_softmax`` in every case its compiled function leaves to Python."""
    try:
        return _softmax_node(input, dim, dtype, "log_softmax", _log_softmax, LogSoftmaxBackward0)
    except (AttributeError, TypeError) as error:   # a tensor-like argument's override
        return override_or_raise(log_softmax, error, input, dim, 3, dtype)


# Along the last dim of a small float32 tensor, on the rows loop: the compiled functions' case
_softmax_entry, _log_softmax_entry = (
    _compiled_functions.register(python_op, node_cls, kind="softmax",
                                 addresses=lambda: (vector_math.softmax_rows_address(), None),
                                 max_elements=vector_math.SOFTMAX_NARROW_MAX_ELEMENTS,
                                 specifics=(log, vector_math.SOFTMAX_MIN_WIDTH))
    for python_op, node_cls, log in ((_python_softmax, SoftmaxBackward0, False),
                                     (_python_log_softmax, LogSoftmaxBackward0, True)))


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """Applies ``softmax(-x)`` along ``dim``."""
    if dim is None:
        dim = _softmax_dim("softmin", input.ndim)
    if dtype is not None:
        input = input.to(dtype)
    return softmax(-input, dim)


@method("softmax")
def _tensor_softmax(self, dim, dtype=None):
    return softmax(self, dim, dtype=dtype)


@method("log_softmax")
def _tensor_log_softmax(self, dim, dtype=None):
    return log_softmax(self, dim, dtype=dtype)




def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """Samples from the Gumbel-Softmax distribution: ``softmax((logits + g) / tau)`` with ``g``
    Gumbel(0, 1) noise; ``hard=True`` returns one-hot vectors whose gradient is the soft
    sample's (the straight-through estimator). ``eps`` is unused, as in torch."""
    from ...ops.creation import empty_like, zeros_like
    gumbels = -empty_like(logits).exponential_().log()
    soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return soft
    index = soft.max(dim, keepdim=True)[1]
    one_hot = zeros_like(logits).scatter_(dim, index, 1.0)
    return one_hot - soft.detach() + soft
