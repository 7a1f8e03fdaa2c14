"""Shape ops that copy: cat/concat/concatenate, stack, hstack, vstack, flip, fliplr, flipud,
roll, repeat, tile, tril, triu (and tril_/triu_)."""
from .._dtype import _BY_NP, _PROMOTE
from ._common import (
    Node, Tensor, apply_inplace, make, method, namespace_of, normalize_dims, record, wrap_dim,
)

__all__ = ["cat", "concat", "concatenate", "stack", "hstack", "vstack", "flip", "fliplr",
           "flipud", "roll", "repeat", "tile", "tril", "triu"]


def _tensor_list(tensors, op):
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{op}(): argument 'tensors' (position 1) must be tuple of Tensors, not "
                        f"{type(tensors).__name__}")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    return list(tensors)


def _common_dtype(tensors):
    dt = tensors[0].dtype
    for t in tensors[1:]:
        if t.dtype is not dt:
            dt = _PROMOTE[(dt, t.dtype)]
    return dt


def _grad_for(grad, np_dtype):
    """``grad`` cast to an input's dtype (inputs of a promoted cat or stack)."""
    if grad._data.dtype != np_dtype:
        return grad.to(_BY_NP[np_dtype])
    return grad


def _record_list(node_cls, tensors, out):
    node = record(node_cls, tensors, out)
    if node is not None:
        node.dtypes = [t._data.dtype for t in tensors]
    return node


# -- cat / stack ------------------------------------------------------------------------------

class CatBackward0(Node):
    __slots__ = ()

    def backward(self, grad):
        from .view import split
        pieces = iter(split(grad, self.sizes, self.dim))
        xp = namespace_of(grad._data)
        return tuple(_grad_for(next(pieces), dtype) if used else make(xp.zeros((0,), dtype))
                     for used, dtype in zip(self.used, self.dtypes))


def _check_cat_shapes(tensors, dim):
    first = tensors[0]._data.shape
    for i, t in enumerate(tensors[1:], 1):
        shape = t._data.shape
        if len(shape) != len(first):
            raise RuntimeError(f"Tensors must have same number of dimensions: got {len(first)} and "
                               f"{len(shape)}")
        for d, (a, b) in enumerate(zip(first, shape)):
            if d != dim and a != b:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {dim}. Expected "
                                   f"size {a} but got size {b} for tensor number {i} in the list.")


def cat(tensors, dim=0, *, out=None):
    """Concatenates ``tensors`` along ``dim`` (all of the same shape except in ``dim``);
    1-d empty tensors are skipped, as torch's legacy rule has it."""
    tensors = _tensor_list(tensors, "cat")
    if not tensors:
        raise ValueError("ember.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if not t._data.ndim:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    used = [t._data.shape != (0,) for t in tensors]
    parts = [t for t, u in zip(tensors, used) if u] or tensors[:1]
    if not any(used):
        used[0] = True
    dim = wrap_dim(dim, parts[0]._data.ndim)
    _check_cat_shapes(parts, dim)
    np_dtype = _common_dtype(tensors).np
    xp = namespace_of(parts[0]._data)
    out_t = make(xp.concatenate([t._data.astype(np_dtype, copy=False) for t in parts], axis=dim))
    node = _record_list(CatBackward0, tensors, out_t)
    if node is not None:
        node.dim, node.used = dim, used
        node.sizes = [t._data.shape[dim] for t in parts]
    return _into(out, out_t)


concat = concatenate = cat


def _into(out, result):
    """Write ``result`` into the ``out=`` tensor (resized when its shape differs, as torch
    resizes an out tensor)."""
    if out is None:
        return result
    if out._data.shape == result._data.shape:
        return out.copy_(result)
    out._data = result._data.astype(out._data.dtype)
    out._version_counter[0] += 1
    return out


class StackBackward0(Node):
    __slots__ = ()

    def backward(self, grad):
        from .view import unbind
        pieces = unbind(grad, self.dim)
        return tuple(_grad_for(g, dtype) for g, dtype in zip(pieces, self.dtypes))


def stack(tensors, dim=0, *, out=None):
    """Concatenates ``tensors`` (all of the same shape) along a new dimension ``dim``."""
    tensors = _tensor_list(tensors, "stack")
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    first = tensors[0]._data.shape
    for i, t in enumerate(tensors[1:], 1):
        if t._data.shape != first:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(first)} at "
                               f"entry 0 and {list(t._data.shape)} at entry {i}")
    dim = wrap_dim(dim, len(first) + 1)
    np_dtype = _common_dtype(tensors).np
    xp = namespace_of(tensors[0]._data)
    out_t = make(xp.stack([t._data.astype(np_dtype, copy=False) for t in tensors], axis=dim))
    node = _record_list(StackBackward0, tensors, out_t)
    if node is not None:
        node.dim = dim
    return _into(out, out_t)


def _at_least(t, ndim):
    shape = t._data.shape
    if len(shape) >= ndim:
        return t
    return t.reshape((1,) * (ndim - len(shape)) + shape)


def hstack(tensors, *, out=None):
    """Stacks ``tensors`` horizontally: along dim 1, or dim 0 for 1-d tensors."""
    tensors = [_at_least(t, 1) for t in _tensor_list(tensors, "hstack")]
    dim = 0 if tensors and tensors[0]._data.ndim == 1 else 1
    return cat(tensors, dim, out=out)


def vstack(tensors, *, out=None):
    """Stacks ``tensors`` vertically (along dim 0), 1-d tensors as rows."""
    tensors = [_at_least(t, 2) for t in _tensor_list(tensors, "vstack")]
    return cat(tensors, 0, out=out)


# -- flip / roll ------------------------------------------------------------------------------

class FlipBackward0(Node):
    __slots__ = ()

    def backward(self, grad):
        return (flip(grad, self.dims),)


def _dims_arg(dims):
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        return tuple(dims[0])
    return dims


def flip(input, *dims):
    """Reverses the order of the elements along the dimensions in ``dims``."""
    dims = _dims_arg(dims)
    data = input._data
    dims = normalize_dims(dims, data.ndim) if dims else ()
    xp = namespace_of(data)
    out = make(xp.ascontiguousarray(xp.flip(data, dims)) if dims else data.copy())
    node = record(FlipBackward0, (input,), out)
    if node is not None:
        node.dims = dims
    return out


Tensor.flip = flip


def fliplr(input):
    """Flips a tensor of at least 2 dimensions left-right (dim 1)."""
    if input._data.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


def flipud(input):
    """Flips a tensor of at least 1 dimension upside down (dim 0)."""
    if input._data.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


Tensor.fliplr = fliplr
Tensor.flipud = flipud


class RollBackward0(Node):
    __slots__ = ()

    def backward(self, grad):
        return (roll(grad, tuple(-s for s in self.shifts), self.dims),)


def roll(input, shifts, dims=None):
    """Rolls ``input`` by ``shifts`` along ``dims`` (elements pushed off one end come back at
    the other); without ``dims`` the tensor is flattened, rolled and restored."""
    shifts = tuple(shifts) if isinstance(shifts, (tuple, list)) else (shifts,)
    data = input._data
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
        axis = None
    else:
        dims = tuple(dims) if isinstance(dims, (tuple, list)) else (dims,)
        if not shifts:
            raise RuntimeError("`shifts` required")
        if len(shifts) != len(dims):
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:"
                               f"{len(dims)}")
        dims = tuple(wrap_dim(d, data.ndim) for d in dims)
        axis = dims
    shifts = tuple(int(s) for s in shifts)
    xp = namespace_of(data)
    out = make(xp.roll(data, shifts if axis is not None else shifts[0], axis=axis))
    node = record(RollBackward0, (input,), out)
    if node is not None:
        node.shifts, node.dims = shifts, dims
    return out


Tensor.roll = roll


# -- repeat / tile ----------------------------------------------------------------------------

class RepeatBackward0(Node):
    __slots__ = ()

    def backward(self, grad):
        repeats, padded = self.repeats, self.padded
        interleaved = []
        for r, s in zip(repeats, padded):
            interleaved += [r, s]
        summed = grad.reshape(interleaved).sum(tuple(range(0, 2 * len(repeats), 2)))
        return (summed.reshape(self.in_shape),)


def _sizes_arg(sizes, op):
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = sizes[0]
    return tuple(int(s) for s in sizes)


@method()
def repeat(self, *sizes):
    """Repeats this tensor ``sizes[i]`` times along each dimension (leading sizes add new
    dimensions)."""
    repeats = _sizes_arg(sizes, "repeat")
    shape = self._data.shape
    if len(repeats) < len(shape):
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of "
                           "dimensions of tensor")
    padded = (1,) * (len(repeats) - len(shape)) + shape
    target = [r * s for r, s in zip(repeats, padded)]
    if any(r < 0 for r in repeats):
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{min(target)}: {target}")
    xp = namespace_of(self._data)
    out = make(xp.tile(self._data.reshape(padded), repeats))
    node = record(RepeatBackward0, (self,), out)
    if node is not None:
        node.repeats, node.padded, node.in_shape = repeats, padded, shape
    return out


def tile(input, dims):
    """Repeats ``input`` ``dims[i]`` times along each dimension; ``dims`` shorter than the
    tensor's rank is padded with leading ones."""
    dims = _sizes_arg((dims,), "tile")
    nd = input._data.ndim
    if len(dims) < nd:
        dims = (1,) * (nd - len(dims)) + dims
    return repeat(input, dims)


Tensor.tile = tile


# -- tril / triu ------------------------------------------------------------------------------

class TrilBackward0(Node):
    __slots__ = ()

    def backward(self, grad):
        return (tril(grad, self.diagonal),)


class TriuBackward0(Node):
    __slots__ = ()

    def backward(self, grad):
        return (triu(grad, self.diagonal),)


def _triangle(op, node_cls, input, diagonal):
    data = input._data
    if data.ndim < 2:
        raise RuntimeError(f"{op}: input tensor must have at least 2 dimensions")
    xp = namespace_of(data)
    out = make(getattr(xp, op)(data, int(diagonal)))
    node = record(node_cls, (input,), out)
    if node is not None:
        node.diagonal = int(diagonal)
    return out


def tril(input, diagonal=0, *, out=None):
    """The lower triangle of the (batched) matrix ``input``: elements above the ``diagonal``-th
    diagonal are zeroed."""
    return _into(out, _triangle("tril", TrilBackward0, input, diagonal))


def triu(input, diagonal=0, *, out=None):
    """The upper triangle of the (batched) matrix ``input``: elements below the ``diagonal``-th
    diagonal are zeroed."""
    return _into(out, _triangle("triu", TriuBackward0, input, diagonal))


Tensor.tril = tril
Tensor.triu = triu


@method()
def tril_(self, diagonal=0):
    """In-place ``tril``."""
    return apply_inplace(self, tril, diagonal)


@method()
def triu_(self, diagonal=0):
    """In-place ``triu``."""
    return apply_inplace(self, triu, diagonal)
