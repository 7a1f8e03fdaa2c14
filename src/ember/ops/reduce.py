"""Reductions over all elements or over ``dim`` (an int or a tuple), with ``keepdim``."""
from .. import _dtype
from ._common import Node, Tensor, make, namespace_of, normalize_dims, record, to_np_dtype

__all__ = ["sum", "mean"]


def expand_grad(grad, in_shape, dims, keepdim):
    """Broadcast a reduced gradient back over the reduced dims (differentiable)."""
    if not keepdim and dims:
        shape = list(in_shape)
        for d in dims:
            shape[d] = 1
        grad = grad.reshape(tuple(shape))
    return grad.expand(in_shape)


class SumBackward0(Node):
    __slots__ = ()

    def backward(self, grad):
        return (grad.expand(self.in_shape),)


class SumBackward1(Node):
    __slots__ = ()

    def backward(self, grad):
        return (expand_grad(grad, self.in_shape, self.dims, self.keepdim),)


def _sum_dtype(data, dtype):
    if dtype is not None:
        return to_np_dtype(dtype)
    if data.dtype.kind in "biu":
        return _dtype.int64.np
    return None


def sum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum of all elements, or over ``dim`` (int or tuple of ints; an empty tuple means all)."""
    data = input._data
    xp = namespace_of(data)
    np_dtype = _sum_dtype(data, dtype)
    if dim is None and not keepdim:
        out = make(xp.sum(data, dtype=np_dtype))
        node = record(SumBackward0, (input,), out)
        if node is not None:
            node.in_shape = data.shape
        return out
    dims = normalize_dims(None if dim == () or dim == [] else dim, data.ndim)
    out = make(xp.sum(data, axis=dims, keepdims=keepdim, dtype=np_dtype))
    node = record(SumBackward1, (input,), out)
    if node is not None:
        node.in_shape, node.dims, node.keepdim = data.shape, dims, keepdim
    return out


Tensor.sum = sum


class MeanBackward0(Node):
    __slots__ = ()

    def backward(self, grad):
        return ((grad / self.count).expand(self.in_shape),)


class MeanBackward1(Node):
    __slots__ = ()

    def backward(self, grad):
        return (expand_grad(grad / self.count, self.in_shape, self.dims, self.keepdim),)


def mean(input, dim=None, keepdim=False, *, dtype=None):
    """Mean of all elements, or over ``dim``; needs a floating point or complex dtype."""
    data = input._data
    if dtype is None and data.dtype.kind in "biu":
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating "
                           f"point or complex dtype. Got: {_type_word(data)}")
    if dtype is not None:
        data = data.astype(to_np_dtype(dtype))
    xp = namespace_of(data)
    if dim is None:
        dims = tuple(range(data.ndim))
        out = make(xp.mean(data, keepdims=keepdim))
        cls = MeanBackward0 if not keepdim else MeanBackward1
    else:
        dims = normalize_dims(dim, data.ndim) if data.ndim else ()
        if isinstance(dim, (tuple, list)) and len(dim) == 0:
            dims = tuple(range(data.ndim))
        out = make(xp.mean(data, axis=dims, keepdims=keepdim))
        cls = MeanBackward1
    if out._data.dtype != data.dtype:
        out._data = out._data.astype(data.dtype)
    node = record(cls, (input,), out)
    if node is not None:
        count = 1
        for d in dims:
            count *= data.shape[d]
        node.in_shape, node.dims, node.keepdim, node.count = data.shape, dims, keepdim, count
    return out


Tensor.mean = mean


def _type_word(data):
    from ._common import _type_word as word
    return word(data.dtype)
