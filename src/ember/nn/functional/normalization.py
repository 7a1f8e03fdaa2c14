"""Normalization: batch_norm and layer_norm (each one node with a hand-written backward),
group_norm, instance_norm, rms_norm and local_response_norm.

batch_norm and layer_norm on float32/float64 run fused array kernels: oneDNN's batch
normalization (channels-last float32) and layer normalization (float32) primitives where they
apply, else per-channel (or per-row) sums as ``einsum`` reductions (batch norm's moments in
one pass over the input where that is accurate), the output as one scale and shift per channel
(per row), and a backward that makes two reductions and a few in-place passes on arrays.
Other dtypes take the general path. When a graph of the backward is being built
(``create_graph=True``) the backward recomputes the statistics from the saved input with ember
ops, so second-order gradients are exact.
"""
import numpy as np

from ... import _dtype
from ... import _memory_format as _mf
from ..._backend import onednn, openmp_kernels
from ..._backend.choice import KernelChoice
from ..._backend.onednn.blocked import BlockedArray, plain_array
from ..._blocked_tensor import (BlockedTensor, blocked_array, blocked_or_data,
                                elementwise_operands, make_blocked)
from ...ops._common import _HALF_PRECISION, Node, grad_state, make, namespace_of, record
from ...autograd.graph import bump_version
from ...autograd._dual import forward as _forward, jvp_by_transposition
from ...autograd.saved_fields import not_kept
from ..._torch_function import override_or_raise

__all__ = ["batch_norm", "layer_norm", "group_norm", "instance_norm", "rms_norm",
           "local_response_norm"]


def _half_precision(input):
    return input._data.dtype in _HALF_PRECISION


def _float(t):
    return None if t is None else t.float()


def _fused(data):
    """Whether the fused array kernels handle ``data``: float32 or float64, not empty."""
    return data.dtype.char in "fd" and data.size > 0


def _batch_statistic(index):
    """The saved mean (``index`` 2) or inverse standard deviation (3) per channel, as torch
    keeps them: empty when the running statistics were used."""
    def field(node):
        stat = node.saved_tensors[index]
        if not node.training:
            return make(namespace_of(stat._data).empty((0,), stat._data.dtype))
        return stat.reshape(-1)
    return field


class NativeBatchNormBackward0(Node):
    """Backward of ``y = (x - mean) * invstd * weight + bias`` where the statistics are
    taken over ``dims`` (from the input when ``training``, else fixed)."""
    __slots__ = ()
    saved_fields = {"input": 0, "weight": 1, "eps": "eps", "training": "training",
                    "result1": _batch_statistic(2), "result2": _batch_statistic(3),
                    "running_mean": not_kept("running_mean"),
                    "running_var": not_kept("running_var")}
    jvp = jvp_by_transposition

    def backward(self, grad):
        x, weight, mean, invstd = self.saved_tensors
        need = tuple(fn is not None for fn, _ in self.next_functions)
        return self._composite_backward(grad, x, weight, mean, invstd, need)

    def backward_arrays(self, grad):
        if not self.fused:
            return None
        x, weight, mean, invstd = self.saved_tensors
        need = tuple(fn is not None for fn, _ in self.next_functions)
        (x_values, grad_values), layout_of = elementwise_operands(x, grad)
        if layout_of is not None:
            x_blocked, grad_blocked = layout_of.like(x_values), layout_of.like(grad_values)
            gx, gw, gb = _batch_norm_backward(
                grad_blocked, x_blocked, mean._data.reshape(-1), invstd._data.reshape(-1),
                None if weight is None else weight._data, self.training, need, self.eps)
            return self._wrap_grads(gx, x.shape, gw, gb)
        return self._fused_backward(grad._data.astype(x._data.dtype, copy=False), x._data,
                                    None if weight is None else weight._data,
                                    mean._data.reshape(-1), invstd._data.reshape(-1), need)

    def _fused_backward(self, grad, x, weight, mean, invstd, need):
        rows = _channel_rows(x)
        gx, gw, gb = _batch_norm_backward(
            grad.reshape(rows.shape), rows, mean, invstd,
            None if weight is None else weight.astype(x.dtype, copy=False), self.training, need,
            self.eps)
        return self._wrap_grads(gx, x.shape, gw, gb)

    def _wrap_grads(self, gx, x_shape, gw, gb):
        shape = self.affine_shape
        return (None if gx is None else make_blocked(gx) if gx.__class__ is BlockedArray
                else make(gx.reshape(x_shape)),
                None if gw is None else make(gw.reshape(shape)),
                None if gb is None else make(gb.reshape(shape)))

    def _composite_backward(self, grad, x, weight, mean, invstd, need):
        need_x, need_w, need_b = need
        dims, shape = self.dims, self.param_shape
        if self.training and (grad_state.grad_enabled or _forward.active):
            # differentiable statistics: a graph of the backward, or tangents through it
            mean = x.mean(dims, keepdim=True)
            invstd = ((x - mean).pow(2).mean(dims, keepdim=True) + self.eps).rsqrt()
        xhat = (x - mean) * invstd
        gx = gw = gb = None
        if need_x:
            g = grad if weight is None else grad * weight.reshape(shape)
            if self.training:
                gx = invstd * (g - g.mean(dims, keepdim=True)
                               - xhat * (g * xhat).mean(dims, keepdim=True))
            else:
                gx = g * invstd
        if need_w:
            gw = (grad * xhat).sum(self.param_sum_dims).reshape(self.affine_shape)
        if need_b:
            gb = grad.sum(self.param_sum_dims).reshape(self.affine_shape)
        return gx, gw, gb


def _channel_rows(data):
    """``data`` (N, C, *S) as its (N, C, L) view where it is row-major; channels-last data is
    passed whole (oneDNN reads it in place; NumPy's kernels take ``_rows`` of it)."""
    if _mf.suggest(data) is _mf.contiguous_format:
        return data.reshape(data.shape[0], data.shape[1], -1)
    return data


def _rows(data):
    return data if data.ndim == 3 else data.reshape(data.shape[0], data.shape[1], -1)


def _in_format_of(result, like):
    """``result`` (N, C, L) shaped and laid out as ``like``."""
    if result.shape == like.shape:
        return result
    return _mf.copy_as(result.reshape(like.shape), _mf.suggest(like))


def _numpy_batch_norm_backward(grad, x, mean, invstd, weight, training, need, eps):
    grad, x = plain_array(grad), plain_array(x)
    gx, gw, gb = _batch_norm_backward_arrays(namespace_of(x), _rows(grad), _rows(x), mean, invstd,
                                             weight, training, need)
    return (None if gx is None else _in_format_of(gx, x)), gw, gb


def _onednn_batch_norm_backward(grad, x, mean, invstd, weight, training, need, eps):
    """oneDNN's jit kernel (blocked and channels-last layouts), else ember's OpenMP loop
    (row-major), on the same threads."""
    var = 1 / (invstd * invstd) - eps
    grads = (onednn.normalization.batch_norm_backward(grad, x, mean, var, weight, eps, training)
             or openmp_kernels.batch_norm_backward(plain_array(grad), plain_array(x), mean,
                                                   invstd, weight, training, need[0]))
    return None if grads is None else tuple(g if n else None for g, n in zip(grads, need))


_batch_norm_backward = KernelChoice("batch norm backward", onednn=_onednn_batch_norm_backward,
                                    numpy=_numpy_batch_norm_backward)


def _batch_norm_backward_arrays(xp, grad, x, mean, invstd, weight, training, need):
    """Gradients of batch norm for (N, C, L) arrays ``grad`` and ``x`` and per-channel
    ``mean``, ``invstd`` and ``weight``: (input, weight, bias), None where not needed.

    With ``k = weight * invstd``, ``M = N * L``, ``c = x - mean`` and sums over N and L, the
    input gradient in training is
    ``k * (grad - sum(grad) / M - c * invstd**2 * sum(grad * c) / M)``, computed as one scale
    and shift of ``x``, one subtraction and one scaling, a block of samples at a time."""
    need_x, need_w, need_b = need
    count = x.shape[0] * x.shape[2]
    sum_grad_centered = None
    if need_w or (need_x and training):
        sum_grad, sum_grad_x = _channel_sums(xp, grad, x)
        sum_grad_centered = _sum_product_centered(xp, grad, x, mean, invstd, sum_grad,
                                                  sum_grad_x)
    else:
        sum_grad = xp.einsum("ncl->c", grad)
    grad_x = None
    if need_x:
        length = x.shape[2]
        k = _along_length(xp, invstd if weight is None else invstd * weight, length)
        if training:
            slope = invstd * invstd * sum_grad_centered / count
            grad_x = xp.empty(x.shape, dtype=x.dtype)
            _scale_shift_subtract(xp, x, _along_length(xp, slope, length),
                                  _along_length(xp, sum_grad / count - mean * slope, length),
                                  grad, k, grad_x)
        else:
            grad_x = grad * k
    grad_w = sum_grad_centered * invstd if need_w else None
    return grad_x, grad_w, sum_grad if need_b else None


# Batch norm's passes over the activation go a block of whole samples at a time, of about
# this many bytes, so that the second and later passes over a block find it in cache.
SAMPLE_BLOCK_BYTES = 1 << 19


def _sample_blocks(x):
    """Slices of the (N, C, L) array ``x``, each of whole samples, about SAMPLE_BLOCK_BYTES;
    one block on a GPU, which has no cache to fit and launches a kernel per block."""
    if not isinstance(x, np.ndarray):
        return [slice(0, x.shape[0])]
    step = max(1, SAMPLE_BLOCK_BYTES // max(1, x[0].nbytes))
    return [slice(i, i + step) for i in range(0, x.shape[0], step)]


def _channel_sums(xp, x, y):
    """Per-channel ``sum(x)`` and ``sum(x * y)`` of (N, C, L) arrays, in one pass over
    cache-sized blocks of samples."""
    total = total_product = 0
    for block in _sample_blocks(x):
        total = total + xp.einsum("ncl->c", x[block])
        total_product = total_product + xp.einsum("ncl,ncl->c", x[block], y[block])
    return total, total_product


def _scale_shift(xp, x, scale, shift, out):
    """``out = x * scale + shift`` for (N, C, L) arrays and (C, L) coefficients."""
    for block in _sample_blocks(x):
        part = out[block]
        xp.multiply(x[block], scale, out=part)
        part += shift


def _scale_shift_subtract(xp, x, scale, shift, grad, k, out):
    """``out = (grad - (x * scale + shift)) * k`` for (N, C, L) arrays and (C, L)
    coefficients."""
    for block in _sample_blocks(x):
        part = out[block]
        xp.multiply(x[block], scale, out=part)
        part += shift
        xp.subtract(grad[block], part, out=part)
        part *= k


def _along_length(xp, per_channel, length):
    """A per-channel vector (C,) repeated along the length: (C, L), to scale (N, C, L)
    arrays. NumPy then runs its inner loop over whole C*L samples, instead of the (C, 1)
    broadcast that restarts it at every channel."""
    return xp.repeat(per_channel, length).reshape(-1, length)


# Largest mean**2 / variance for which sums over ``x`` stand in for sums over ``x - mean``
# (``sum(x * x) - M * mean**2`` for the variance, ``sum(g * x) - mean * sum(g)``): the rounding
# error of that cancellation grows as ``(1 + mean**2 / var) * eps``, so beyond this ratio the
# centred array is formed and summed instead (two passes).
_ONE_PASS_MAX_RATIO = 8.0
# Up to this many elements layer norm goes through the centred input: fewer calls than the
# one-pass formulas, whose matrix products pay off only on larger arrays.
CENTRED_MAX_ELEMENTS = 4096


def _sum_product_centered(xp, grad, x, mean, invstd, sum_grad, sum_grad_x):
    """Per-channel ``sum(grad * (x - mean))`` of (N, C, L) arrays, given ``sum(grad)`` and
    ``sum(grad * x)``."""
    # (on a GPU the check would make the host wait for the device: the centred sum always)
    if xp is np and bool(xp.all(mean * mean * invstd * invstd <= _ONE_PASS_MAX_RATIO)):
        return sum_grad_x - mean * sum_grad
    return xp.einsum("ncl,ncl->c", grad, x - mean[:, None])


class NativeLayerNormBackward0(NativeBatchNormBackward0):
    __slots__ = ()
    saved_fields = {"input": 0, "weight": 1, "bias": not_kept("bias"), "result1": 2,
                    "result2": 3, "normalized_shape": "param_shape"}

    def _fused_backward(self, grad, x, weight, mean, invstd, need):
        width = x.size // mean.size
        gx, gw, gb = _layer_norm_backward(
            grad.reshape(-1, width), x.reshape(-1, width), mean, invstd,
            None if weight is None else weight.astype(x.dtype, copy=False).reshape(-1), need,
            self.eps)
        return self._wrap_grads(gx, x.shape, gw, gb)


# layer_norm of float32 runs on oneDNN from inputs of this many elements (``python -m
# benchmarks.onednn_layers --only norm``); below it, on ember's row loop
# (``openmp_kernels.layer_norm_forward``).
LAYER_NORM_ONEDNN_MIN_ELEMENTS = 65536


def _onednn_layer_norm_forward(x, weight, bias, eps):
    """(output, mean, invstd) of the rows of ``x`` on ember's row loop, or from
    ``LAYER_NORM_ONEDNN_MIN_ELEMENTS`` elements on oneDNN."""
    if x.size < LAYER_NORM_ONEDNN_MIN_ELEMENTS:
        return openmp_kernels.layer_norm_forward(x, weight, bias, eps)
    result = onednn.normalization.layer_norm_forward(x, weight, bias, eps)
    if result is None:
        return None
    y, mean, var = result
    return y, mean, (1 / np.sqrt(var + np.float32(eps))).astype(np.float32, copy=False)


def _numpy_layer_norm_forward(x, weight, bias, eps):
    return _layer_norm_forward_arrays(namespace_of(x), x, weight, bias, eps)


def _onednn_layer_norm_backward(grad, x, mean, invstd, weight, need, eps):
    """The gradients on ember's OpenMP loop (one pass a row), else, from
    ``LAYER_NORM_ONEDNN_MIN_ELEMENTS`` elements, on oneDNN's kernel, which takes the variance
    (recovered from ``invstd``, as batch norm's backward does) and gives the bias's gradient
    where a shift is declared (its value does not enter the backward); both on oneDNN's
    threads (the loop on the calling thread alone for small inputs)."""
    grads = openmp_kernels.layer_norm_backward(grad, x, mean, invstd, weight, need)
    if grads is not None or x.size < LAYER_NORM_ONEDNN_MIN_ELEMENTS:
        return grads
    var = 1 / (invstd * invstd) - eps
    bias = np.zeros(x.shape[1], np.float32) if need[2] else None
    grads = onednn.normalization.layer_norm_backward(grad, x, mean, var, weight, bias, eps)
    return None if grads is None else tuple(g if n else None for g, n in zip(grads, need))


def _numpy_layer_norm_backward(grad, x, mean, invstd, weight, need, eps):
    return _layer_norm_backward_arrays(namespace_of(x), grad, x, mean, invstd, weight, need)


_layer_norm_forward = KernelChoice("layer norm", onednn=_onednn_layer_norm_forward,
                                   numpy=_numpy_layer_norm_forward)
_layer_norm_backward = KernelChoice("layer norm backward", onednn=_onednn_layer_norm_backward,
                                    numpy=_numpy_layer_norm_backward)


def _layer_norm_backward_arrays(xp, grad, x, mean, invstd, weight, need):
    """Gradients of layer norm for (R, D) arrays ``grad`` and ``x``, per-row ``mean`` and
    ``invstd`` and a (D,) ``weight`` (or None): (input, weight, bias), None where not needed.

    With ``h = grad * weight``, ``xhat = (x - mean) * invstd`` and row means, the input gradient
    is ``invstd * (h - mean(h) - xhat * mean(h * xhat))``, which is
    ``grad * (invstd ⊗ weight) + x * slope + shift`` with per-row ``slope`` and ``shift``. The
    sums over ``xhat`` come from sums over ``x`` (matrix-vector products) where the rows'
    ``mean**2 / var`` allows, else from the centred array."""
    if x.size <= CENTRED_MAX_ELEMENTS or not _one_pass_accurate(xp, mean * mean * invstd * invstd, 1.0):
        return _layer_norm_backward_centred(xp, grad, x, mean, invstd, weight, need)
    need_x, need_w, need_b = need
    rows, width = x.shape
    grad_b = xp.ones(rows, x.dtype) @ grad if need_b else None
    if not (need_x or need_w):
        return None, None, grad_b
    grad_times_x = grad * x
    grad_w = invstd @ grad_times_x - (mean * invstd) @ grad if need_w else None
    grad_x = None
    if need_x:
        if weight is None:
            weight = xp.ones(width, x.dtype)
        mean_h = (grad @ weight) / width
        mean_h_xhat = invstd * ((grad_times_x @ weight) / width - mean * mean_h)
        slope = -invstd * invstd * mean_h_xhat
        shift = -invstd * mean_h - slope * mean
        grad_x = _outer_sum(xp, invstd, weight)
        grad_x *= grad
        slope = slope.astype(x.dtype, copy=False)
        if xp is np:   # einsum scales rows at the cost of a plain pass; a (R, 1) ufunc operand costs 1.5x
            x_part = xp.einsum("rd,r->rd", x, slope, out=grad_times_x)
        else:          # CuPy's einsum has no out=
            x_part = xp.multiply(x, slope[:, None], out=grad_times_x)
        x_part += shift[:, None]
        grad_x += x_part
    return grad_x, grad_w, grad_b


def _one_pass_accurate(xp, mean_sq, var):
    """Whether sums over ``x`` may stand in for sums over ``x - mean`` on every row."""
    return bool(xp.all(mean_sq <= _ONE_PASS_MAX_RATIO * var))


def _outer_sum(xp, col0, row0, col1=None, row1=None):
    """``col0 ⊗ row0 (+ col1 ⊗ row1)`` as one (R, 2) x (2, D) matrix product: a plain pass over
    the output, where a ufunc broadcasting over a short last axis costs 2-3x one (and NumPy's
    matmul with an inner size of 1 is slower still)."""
    cols = xp.empty((col0.shape[0], 2), col0.dtype)
    rows = xp.empty((2, row0.shape[0]), row0.dtype)
    cols[:, 0], rows[0] = col0, row0
    if col1 is None:
        cols[:, 1], rows[1] = 0, 0
    else:
        cols[:, 1], rows[1] = col1, row1
    return cols @ rows


def _layer_norm_backward_centred(xp, grad, x, mean, invstd, weight, need):
    """``_layer_norm_backward_arrays`` through the centred input, for rows whose mean is large
    against their spread."""
    need_x, need_w, need_b = need
    xhat = x - mean[:, None]
    xhat *= invstd[:, None]
    grad_w = xp.einsum("rd,rd->d", grad, xhat) if need_w else None
    grad_b = xp.einsum("rd->d", grad) if need_b else None
    grad_x = None
    if need_x:
        width = x.shape[1]
        grad_x = grad * weight if weight is not None else grad.copy()
        mean_h = xp.einsum("rd->r", grad_x) / width
        mean_h_xhat = xp.einsum("rd,rd->r", grad_x, xhat) / width
        xhat *= mean_h_xhat[:, None]
        xhat += mean_h[:, None]
        grad_x -= xhat
        grad_x *= invstd[:, None]
    return grad_x, grad_w, grad_b


def _record_norm(node_cls, out, x, weight, bias, dims, param_shape, param_sum_dims, mean, invstd,
                 training, eps, fused=False):
    """Record the normalization node of ``out``, saving ``x``, ``weight`` and the statistics
    (arrays broadcastable against x); ``fused``: the forward ran the fused array kernels, and
    so may the backward."""
    node = record(node_cls, (x, weight, bias), out)
    if node is not None:
        xp, dtype = namespace_of(mean), blocked_or_data(x).dtype
        node.dims, node.param_shape, node.param_sum_dims = dims, param_shape, param_sum_dims
        node.training, node.eps, node.fused = training, eps, fused
        affine = weight if weight is not None else bias
        node.affine_shape = None if affine is None else tuple(affine.shape)
        node.save(x, weight, make(xp.asarray(mean, dtype=dtype)),
                  make(xp.asarray(invstd, dtype=dtype)))
    return out


def _normalize(node_cls, x, weight, bias, dims, param_shape, param_sum_dims, mean, invstd,
               training, eps):
    """The general forward: ``mean`` and ``invstd`` are arrays broadcastable against x."""
    y = (x._data - mean) * invstd
    if weight is not None:
        y = y * weight._data.reshape(param_shape)
    if bias is not None:
        y = y + bias._data.reshape(param_shape)
    out = make(y.astype(x._data.dtype, copy=False))
    return _record_norm(node_cls, out, x, weight, bias, dims, param_shape, param_sum_dims, mean,
                        invstd, training, eps)


def _moments(xp, data, dims):
    mean = data.mean(dims, keepdims=True)
    var = ((data - mean) ** 2).mean(dims, keepdims=True)
    return mean, var


def _check_batch_norm(input, running_mean, weight, bias, training):
    channels = input.shape[1] if input.dim() > 1 else 1
    for name, t in (("running_mean", running_mean), ("weight", weight), ("bias", bias)):
        if t is not None and t.numel() != channels:
            raise RuntimeError(f"{name} should contain {channels} elements not {t.numel()}")
    if training:
        size = input.numel() // channels
        if size == 1:
            raise ValueError("Expected more than 1 value per channel when training, got input size "
                             f"torch.Size({list(input.shape)})")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-05):
    """Apply Batch Normalization for each channel across a batch of data."""
    try:
        _check_batch_norm(input, running_mean, weight, bias, training)
        if input.__class__ is BlockedTensor and blocked_array(input) is not None:
            return _batch_norm_fused(input, running_mean, running_var, weight, bias, training,
                                     momentum, eps)
        if _half_precision(input):  # computed in float32 and rounded once, as torch does
            return batch_norm(input.float(), running_mean, running_var, _float(weight), _float(bias),
                              training, momentum, eps).to(input.dtype)
        if input.dim() >= 2 and _fused(input._data):
            return _batch_norm_fused(input, running_mean, running_var, weight, bias, training,
                                     momentum, eps)
        xp = namespace_of(input._data)
        nd = input.dim()
        dims = (0,) + tuple(range(2, nd))
        param_shape = (1, -1) + (1,) * (nd - 2)
        data = input._data
        if training or running_mean is None:
            mean, var = _moments(xp, data, dims)
            if training and running_mean is not None:
                _update_running(xp, running_mean, running_var, mean, var, data.size // data.shape[1],
                                momentum)
        else:
            mean = running_mean._data.reshape(param_shape)
            var = running_var._data.reshape(param_shape)
        invstd = 1.0 / xp.sqrt(var + eps)
        use_batch = training or running_mean is None
        return _normalize(NativeBatchNormBackward0, input, weight, bias, dims, param_shape, dims,
                          mean, invstd, use_batch, eps)
    except (AttributeError, TypeError) as error:   # a tensor-like argument's override
        return override_or_raise(batch_norm, error, input, running_mean, running_var, weight, bias, training,
                                 momentum, eps)


def _batch_norm_fused(input, running_mean, running_var, weight, bias, training, momentum, eps):
    """batch_norm on an (N, C, L) view (or on the input's oneDNN layout, where it is still
    held in one): statistics as einsum reductions, the output as one per-channel scale and
    shift of the input."""
    data = blocked_or_data(input)
    blocked = data.__class__ is BlockedArray
    xp, dtype = (np if blocked else namespace_of(data)), data.dtype
    x = data if blocked else _channel_rows(data)
    use_batch = training or running_mean is None
    fixed = (None, None) if use_batch else (running_mean._data.astype(dtype, copy=False),
                                           running_var._data.astype(dtype, copy=False))
    y, mean, var = _batch_norm_forward(x, *fixed, _array_of(weight, dtype), _array_of(bias, dtype),
                                       eps)
    if training and running_mean is not None:
        _update_running(xp, running_mean, running_var, mean, var, x.size // x.shape[1], momentum)
    invstd = (1.0 / xp.sqrt(var + eps)).astype(dtype, copy=False)
    nd = input.dim()
    dims, param_shape = (0,) + tuple(range(2, nd)), (1, -1) + (1,) * (nd - 2)
    out = make_blocked(y) if y.__class__ is BlockedArray else make(y.reshape(data.shape))
    return _record_norm(NativeBatchNormBackward0, out, input, weight, bias,
                        dims, param_shape, dims, mean.reshape(param_shape),
                        invstd.reshape(param_shape), use_batch, eps, fused=True)


def _array_of(t, dtype):
    return None if t is None else t._data.astype(dtype, copy=False)


def _numpy_batch_norm_forward(x, mean, var, weight, bias, eps):
    """(y, mean, var) for an (N, C, L) array: statistics as einsum reductions (``mean`` and
    ``var`` None: the batch's), the output as one per-channel scale and shift of ``x``."""
    x = plain_array(x)
    xp, dtype = namespace_of(x), x.dtype
    like, x = x, _rows(x)
    if mean is None:
        mean, var = _channel_moments(xp, x)
    invstd = (1.0 / xp.sqrt(var + eps)).astype(dtype, copy=False)
    scale = invstd if weight is None else invstd * weight
    shift = -mean * scale
    if bias is not None:
        shift += bias
    length = x.shape[2]
    y = xp.empty(x.shape, dtype=dtype)
    _scale_shift(xp, x, _along_length(xp, scale, length), _along_length(xp, shift, length), y)
    return _in_format_of(y, like), mean, var


def _onednn_batch_norm_forward(x, mean, var, weight, bias, eps):
    """oneDNN's jit kernel (blocked and channels-last layouts), else ember's OpenMP loop
    (row-major), on the same threads."""
    return (onednn.normalization.batch_norm_forward(x, mean, var, weight, bias, eps)
            or openmp_kernels.batch_norm_forward(plain_array(x), mean, var, weight, bias, eps))


_batch_norm_forward = KernelChoice("batch norm", onednn=_onednn_batch_norm_forward,
                                   numpy=_numpy_batch_norm_forward)


def _channel_moments(xp, x):
    """Per-channel mean and biased variance of an (N, C, L) array: sums of ``x`` and ``x * x``
    where that is accurate (see ``_ONE_PASS_MAX_RATIO``), else the sum of squares of
    ``x - mean``."""
    count = x.shape[0] * x.shape[2]
    if xp is not np:   # on a GPU the check below would make the host wait for the device
        mean = xp.einsum("ncl->c", x) / count
        centered = x - mean[:, None]
        return mean, xp.einsum("ncl,ncl->c", centered, centered) / count
    total, total_square = _channel_sums(xp, x, x)
    mean = total / count
    var = total_square / count - mean * mean
    if not bool(xp.all(mean * mean <= _ONE_PASS_MAX_RATIO * var)):
        centered = x - mean[:, None]
        var = xp.einsum("ncl,ncl->c", centered, centered) / count
    return mean, var


def _update_running(xp, running_mean, running_var, mean, var, count, momentum):
    """running = (1 - momentum) * running + momentum * batch statistic (unbiased variance)."""
    rm = running_mean._data
    rm *= 1 - momentum
    rm += momentum * mean.reshape(rm.shape).astype(rm.dtype)
    bump_version(running_mean)
    if running_var is not None:
        rv = running_var._data
        unbiased = var.reshape(rv.shape) * (count / max(count - 1, 1))
        rv *= 1 - momentum
        rv += momentum * unbiased.astype(rv.dtype)
        bump_version(running_var)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05):
    """Apply Layer Normalization for last certain number of dimensions."""
    try:
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        normalized_shape = tuple(normalized_shape)
        k = len(normalized_shape)
        data = input._data
        shape = data.shape
        nd = len(shape)
        if k > nd or shape[nd - k:] != normalized_shape:
            raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
                               f"[*, {', '.join(map(str, normalized_shape))}], but got input of size"
                               f"{list(input.shape)}")
        if _half_precision(input):  # computed in float32 and rounded once, as torch does
            return layer_norm(input.float(), normalized_shape, _float(weight), _float(bias),
                              eps).to(input.dtype)
        xp = namespace_of(data)
        dims = tuple(range(nd - k, nd))
        if k and _fused(data):
            return _layer_norm_fused(input, normalized_shape, weight, bias, dims, eps)
        mean, var = _moments(xp, input._data, dims)
        invstd = 1.0 / xp.sqrt(var + eps)
        return _normalize(NativeLayerNormBackward0, input, weight, bias, dims, normalized_shape,
                          tuple(range(nd - k)), mean, invstd, True, eps)
    except (AttributeError, TypeError) as error:   # a tensor-like argument's override
        return override_or_raise(layer_norm, error, input, normalized_shape, weight, bias, eps)


def _layer_norm_fused(input, normalized_shape, weight, bias, dims, eps):
    """layer_norm on an (R, D) view: oneDNN's layer normalization (float32), else row
    statistics as matrix-vector products and the output as one scale and shift of the
    input."""
    data = input._data
    dtype = data.dtype
    width = _numel(normalized_shape)
    x = data.reshape(-1, width)
    w = None if weight is None else weight._data.astype(dtype, copy=False).reshape(-1)
    b = None if bias is None else bias._data.astype(dtype, copy=False).reshape(-1)
    y, mean, invstd = _layer_norm_forward(x, w, b, eps)
    out = make(y.reshape(data.shape))
    if not (input._requires_grad or (weight is not None and weight._requires_grad)
            or (bias is not None and bias._requires_grad) or _forward.active):
        return out
    stat_shape = data.shape[:dims[0]] + (1,) * len(dims)
    return _record_norm(NativeLayerNormBackward0, out, input, weight, bias,
                        dims, normalized_shape, tuple(range(dims[0])), mean.reshape(stat_shape),
                        invstd.reshape(stat_shape), True, eps, fused=True)


def _layer_norm_forward_arrays(xp, x, weight, bias, eps):
    """Layer norm of the rows of an (R, D) array with (D,) ``weight`` and ``bias`` (or None):
    (output, mean, invstd).

    Row moments in one pass (a matrix-vector product and a row dot product) where the rows'
    ``mean**2 / var`` allows, and the output as ``x * (invstd ⊗ weight) + shift`` with
    ``shift = (-mean * invstd) ⊗ weight + 1 ⊗ bias``, the outer products formed as matrix
    products; else through the centred input."""
    rows, width = x.shape
    if x.size <= CENTRED_MAX_ELEMENTS:
        return _layer_norm_forward_centred(xp, x, weight, bias, eps)
    dtype = x.dtype
    ones = xp.ones(width, dtype)
    mean = (x @ ones) / width
    var = xp.einsum("rd,rd->r", x, x) / width - mean * mean
    if not _one_pass_accurate(xp, mean * mean, var):
        return _layer_norm_forward_centred(xp, x, weight, bias, eps)
    invstd = (1.0 / xp.sqrt(var + eps)).astype(dtype, copy=False)
    weight = ones if weight is None else weight
    y = _outer_sum(xp, invstd, weight)
    y *= x
    y += _outer_sum(xp, -mean * invstd, weight, xp.ones(rows, dtype),
                    xp.zeros(width, dtype) if bias is None else bias)
    return y, mean, invstd


def _layer_norm_forward_centred(xp, x, weight, bias, eps):
    width = x.shape[1]
    mean = xp.einsum("rd->r", x) / width
    y = x - mean[:, None]
    invstd = (1.0 / xp.sqrt(xp.einsum("rd,rd->r", y, y) / width + eps)).astype(x.dtype, copy=False)
    y *= invstd[:, None]
    if weight is not None:
        y *= weight
    if bias is not None:
        y += bias
    return y, mean, invstd


def _numel(shape):
    count = 1
    for size in shape:
        count *= size
    return count


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05):
    """Apply Group Normalization for last certain number of dimensions."""
    n, c = input.shape[:2]
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but "
                           f"got input of shape {list(input.shape)} and num_groups={num_groups}")
    grouped = input.reshape(n, num_groups, -1)
    y = layer_norm(grouped, grouped.shape[2:], eps=eps).reshape(input.shape)
    return _affine(y, weight, bias)


def _affine(y, weight, bias):
    shape = (1, -1) + (1,) * (y.dim() - 2)
    if weight is not None:
        y = y * weight.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    return y


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-05):
    """Apply Instance Normalization independently for each channel in every data sample
    within a batch."""
    n, c = input.shape[:2]
    if not use_input_stats:
        return batch_norm(input, running_mean, running_var, weight, bias, False, momentum, eps)
    flat = input.reshape((1, n * c) + tuple(input.shape[2:]))
    if running_mean is not None:
        xp = namespace_of(input._data)
        dims = tuple(range(2, input.dim()))
        mean, var = _moments(xp, input._data, dims)
        count = input.numel() // (n * c)
        _update_running(xp, running_mean, running_var, mean.mean(0), var.mean(0), count, momentum)
    y = batch_norm(flat, None, None, None, None, True, momentum, eps).reshape(input.shape)
    return _affine(y, weight, bias)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """Apply Root Mean Square Layer Normalization."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    dims = tuple(range(input.dim() - len(normalized_shape), input.dim()))
    x = input.float() if _half_precision(input) else input
    if eps is None:  # the epsilon of the dtype it is computed in
        eps = _dtype.finfo(x.dtype).eps
    y = x * (x.pow(2).mean(dims, keepdim=True) + eps).rsqrt()
    if weight is not None:
        y = y * weight
    return y.to(input.dtype)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Apply local response normalization over an input signal: normalization across
    channels."""
    from .padding import pad
    from .pooling import avg_pool2d
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    if dim > 3 and _half_precision(input):  # torch pools these through avg_pool3d
        from ...ops._common import _type_word
        raise NotImplementedError("\"avg_pool3d_out_frame\" not implemented for "
                                  f"'{_type_word(input._data.dtype)}'")
    div = (input * input).unsqueeze(1)
    if dim == 3:
        div = pad(div, (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = input.shape
        div = div.reshape(sizes[0], 1, sizes[1], sizes[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        n, one, c2, h, w = div.shape
        div = div.reshape(n, c2, h * w).unsqueeze(1)
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
        div = div.reshape(sizes)
    div = div.mul(alpha).add(k).pow(beta)
    return input / div
