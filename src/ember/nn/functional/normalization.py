"""Normalization: batch_norm and layer_norm (each one node with a hand-written backward),
group_norm, instance_norm, rms_norm and local_response_norm.

The backward of batch_norm and layer_norm is written with ember ops; when a graph of the
backward is being built it recomputes the statistics from the saved input with ember ops,
so second-order gradients are exact.
"""
from ...ops._common import Node, grad_state, make, namespace_of, record

__all__ = ["batch_norm", "layer_norm", "group_norm", "instance_norm", "rms_norm",
           "local_response_norm"]


class NativeBatchNormBackward0(Node):
    """Backward of ``y = (x - mean) * invstd * weight + bias`` where the statistics are
    taken over ``dims`` (from the input when ``training``, else fixed)."""
    __slots__ = ()

    def backward(self, grad):
        x, weight, mean, invstd = self.saved_tensors
        need_x, need_w, need_b = (e[0] is not None for e in self.next_functions)
        dims, shape = self.dims, self.param_shape
        if self.training and grad_state.grad_enabled:
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


class NativeLayerNormBackward0(NativeBatchNormBackward0):
    __slots__ = ()


def _normalize(node_cls, x, weight, bias, dims, param_shape, param_sum_dims, mean, invstd,
               training, eps):
    """The shared forward: ``mean`` and ``invstd`` are arrays broadcastable against x."""
    xp = namespace_of(x._data)
    y = (x._data - mean) * invstd
    if weight is not None:
        y = y * weight._data.reshape(param_shape)
    if bias is not None:
        y = y + bias._data.reshape(param_shape)
    out = make(y.astype(x._data.dtype, copy=False))
    node = record(node_cls, (x, weight, bias), out)
    if node is not None:
        node.dims, node.param_shape, node.param_sum_dims = dims, param_shape, param_sum_dims
        node.training, node.eps = training, eps
        affine = weight if weight is not None else bias
        node.affine_shape = None if affine is None else tuple(affine.shape)
        node.save(x, weight, make(xp.asarray(mean, dtype=x._data.dtype)),
                  make(xp.asarray(invstd, dtype=x._data.dtype)))
    return out


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
    _check_batch_norm(input, running_mean, weight, bias, training)
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


def _update_running(xp, running_mean, running_var, mean, var, count, momentum):
    """running = (1 - momentum) * running + momentum * batch statistic (unbiased variance)."""
    rm = running_mean._data
    rm *= 1 - momentum
    rm += momentum * mean.reshape(rm.shape).astype(rm.dtype)
    running_mean._version_counter[0] += 1
    if running_var is not None:
        rv = running_var._data
        unbiased = var.reshape(rv.shape) * (count / max(count - 1, 1))
        rv *= 1 - momentum
        rv += momentum * unbiased.astype(rv.dtype)
        running_var._version_counter[0] += 1


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05):
    """Apply Layer Normalization for last certain number of dimensions."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(normalized_shape)
    k = len(normalized_shape)
    if tuple(input.shape[input.dim() - k:]) != normalized_shape or k > input.dim():
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
                           f"[*, {', '.join(map(str, normalized_shape))}], but got input of size"
                           f"{list(input.shape)}")
    xp = namespace_of(input._data)
    nd = input.dim()
    dims = tuple(range(nd - k, nd))
    mean, var = _moments(xp, input._data, dims)
    invstd = 1.0 / xp.sqrt(var + eps)
    return _normalize(NativeLayerNormBackward0, input, weight, bias, dims, normalized_shape,
                      tuple(range(nd - k)), mean, invstd, True, eps)


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
    if eps is None:
        eps = float(namespace_of(input._data).finfo(input._data.dtype).eps)
    y = input * (input.pow(2).mean(dims, keepdim=True) + eps).rsqrt()
    return y * weight if weight is not None else y


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
