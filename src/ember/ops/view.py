"""View ops: results share storage (and the version counter) with their input.

view, reshape, expand, permute, transpose, t, T/mT, squeeze, unsqueeze, flatten, and basic
indexing (ints, slices with steps, None, Ellipsis). Each backward maps the gradient back to
the input's shape.
"""
import numbers

from ._common import (
    Node, Size, Tensor, make, make_view, method, namespace_of, record, sum_to, wrap_dim,
)

__all__ = ["reshape", "permute", "transpose", "swapdims", "t", "squeeze", "unsqueeze",
           "flatten", "numel"]


def _shape_arg(args, op):
    """``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])`` and ``f(Size)`` all mean the shape (2, 3)."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = args[0]
    out = []
    for s in args:
        if isinstance(s, Tensor):
            s = s.item()
        if not isinstance(s, numbers.Integral) or isinstance(s, bool):
            raise TypeError(f"{op}(): argument 'size' must be tuple of ints, but found element of "
                            f"type {type(s).__name__}")
        out.append(int(s))
    return tuple(out)


def infer_shape(shape, numel):
    """Resolve one -1 in ``shape`` for a tensor of ``numel`` elements, with torch's errors."""
    infer = None
    known = 1
    for i, s in enumerate(shape):
        if s == -1:
            if infer is not None:
                raise RuntimeError("only one dimension can be inferred")
            infer = i
        elif s < 0:
            raise RuntimeError(f"invalid shape dimension {s}")
        else:
            known *= s
    if infer is not None:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '[{', '.join(map(str, shape))}]' is invalid for input of size {numel}")
        shape = shape[:infer] + (numel // known,) + shape[infer + 1:]
    elif known != numel:
        raise RuntimeError(f"shape '[{', '.join(map(str, shape))}]' is invalid for input of size {numel}")
    return shape


class ViewBackward0(Node):
    __slots__ = ()

    def backward(self, grad):
        return (grad.reshape(self.in_shape),)


class UnsafeViewBackward0(ViewBackward0):
    __slots__ = ()


def _view_node(cls, input, out):
    node = record(cls, (input,), out)
    if node is not None:
        node.in_shape = input._data.shape
    return out


@method()
def view(self, *shape):
    """A tensor with the same data and a new shape; the strides must allow it (else use
    reshape). ``view(dtype)`` reinterprets the bytes as another dtype."""
    from .. import _dtype
    if len(shape) == 1 and isinstance(shape[0], _dtype.dtype):
        return _view_dtype(self, shape[0])
    shape = infer_shape(_shape_arg(shape, "view"), self._data.size)
    try:
        data = namespace_of(self._data).reshape(self._data, shape, copy=False)
    except ValueError:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least "
                           "one dimension spans across two contiguous subspaces). Use .reshape(...) "
                           "instead.") from None
    return _view_node(ViewBackward0, self, make_view(data, self))


def _view_dtype(self, dtype):
    if self._requires_grad and dtype.np != self._data.dtype:
        raise RuntimeError("view(dtype) of a tensor that requires grad is not differentiable")
    return make_view(self._data.view(dtype.np), self)


@method()
def view_as(self, other):
    return self.view(other._data.shape)


def reshape(input, *shape):
    """A tensor with the same data and number of elements and the given shape: a view when the
    strides allow, else a copy."""
    shape = infer_shape(_shape_arg(shape, "reshape"), input._data.size)
    data = input._data
    if data.shape == shape:
        return _view_node(ViewBackward0, input, make_view(data, input)) if input._requires_grad else \
            make_view(data, input)
    xp = namespace_of(data)
    try:
        out = make_view(xp.reshape(data, shape, copy=False), input)
        cls = ViewBackward0
    except ValueError:
        out = make(xp.reshape(data, shape))
        cls = UnsafeViewBackward0
    return _view_node(cls, input, out)


Tensor.reshape = reshape


@method()
def reshape_as(self, other):
    return reshape(self, other._data.shape)


class ExpandBackward0(Node):
    __slots__ = ()

    def backward(self, grad):
        return (sum_to(grad, self.in_shape),)


@method()
def expand(self, *sizes):
    """A view with singleton dimensions expanded to a larger size (stride 0); -1 keeps a size."""
    sizes = _shape_arg(sizes, "expand")
    shape = self._data.shape
    if len(sizes) < len(shape):
        raise RuntimeError(f"expand(ember.{self.dtype.name}{{{list(shape)}}}, size={list(sizes)}): the number of "
                           f"sizes provided ({len(sizes)}) must be greater or equal to the number of "
                           f"dimensions in the tensor ({len(shape)})")
    lead = len(sizes) - len(shape)
    target = []
    for i, s in enumerate(sizes):
        if i < lead:
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a leading, "
                                   f"non-existing dimension {i}")
            target.append(s)
            continue
        cur = shape[i - lead]
        if s == -1:
            s = cur
        elif cur != s and cur != 1:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size "
                               f"({cur}) at non-singleton dimension {i}.  Target sizes: {list(sizes)}.  "
                               f"Tensor sizes: {list(shape)}")
        target.append(s)
    target = tuple(target)
    out = make_view(namespace_of(self._data).broadcast_to(self._data, target), self)
    return _view_node(ExpandBackward0, self, out)


@method()
def expand_as(self, other):
    return self.expand(other._data.shape)


class PermuteBackward0(Node):
    __slots__ = ()

    def backward(self, grad):
        inverse = [0] * len(self.dims)
        for i, d in enumerate(self.dims):
            inverse[d] = i
        return (grad.permute(inverse),)


def permute(input, *dims):
    """A view with the dimensions reordered."""
    dims = _shape_arg(dims, "permute")
    nd = input._data.ndim
    if len(dims) != nd:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not "
                           f"match the length of the desired ordering of dimensions i.e. input.dim() = "
                           f"{nd} is not equal to len(dims) = {len(dims)}".replace("(sparse_coo)", ""))
    dims = tuple(wrap_dim(d, nd) for d in dims)
    if len(set(dims)) != nd:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    out = make_view(input._data.transpose(dims), input)
    node = record(PermuteBackward0, (input,), out)
    if node is not None:
        node.dims = dims
    return out


Tensor.permute = permute


class TransposeBackward0(Node):
    __slots__ = ()

    def backward(self, grad):
        return (grad.transpose(self.dim0, self.dim1),)


def transpose(input, dim0, dim1):
    """A view with dimensions ``dim0`` and ``dim1`` swapped."""
    nd = input._data.ndim
    d0, d1 = wrap_dim(dim0, nd), wrap_dim(dim1, nd)
    out = make_view(namespace_of(input._data).swapaxes(input._data, d0, d1), input)
    node = record(TransposeBackward0, (input,), out)
    if node is not None:
        node.dim0, node.dim1 = d0, d1
    return out


swapdims = swapaxes = transpose
Tensor.transpose = Tensor.swapdims = Tensor.swapaxes = transpose


class TBackward0(Node):
    __slots__ = ()

    def backward(self, grad):
        return (grad.t(),)


def t(input):
    """Transposes a tensor of at most 2 dimensions (0-d and 1-d come back as they are)."""
    nd = input._data.ndim
    if nd > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {nd}D")
    out = make_view(input._data.T, input)
    record(TBackward0, (input,), out)
    return out


Tensor.t = t


@method()
def t_(self):
    raise RuntimeError("t_() is not supported: in-place metadata changes are not implemented")


def _T(self):
    nd = self._data.ndim
    if nd != 2 and nd != 0:
        import warnings
        warnings.warn("The use of `x.T` on tensors of dimension other than 2 to reverse their shape "
                      "is deprecated and it will throw an error in a future release.", UserWarning,
                      stacklevel=2)
    return permute(self, tuple(range(nd - 1, -1, -1)))


def _mT(self):
    if self._data.ndim < 2:
        raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. Got "
                           f"{self._data.ndim}-D tensor.")
    return transpose(self, -2, -1)


Tensor.T = property(_T)
Tensor.mT = property(_mT)
Tensor.H = property(lambda self: _T(self).conj() if self.is_complex() else _T(self))
Tensor.mH = property(lambda self: _mT(self).conj() if self.is_complex() else _mT(self))


class SqueezeBackward0(Node):
    __slots__ = ()

    def backward(self, grad):
        return (grad.reshape(self.in_shape),)


class UnsqueezeBackward0(SqueezeBackward0):
    __slots__ = ()


def squeeze(input, dim=None):
    """Removes dimensions of size 1 (all of them, or those in ``dim``, an int or a tuple)."""
    shape = input._data.shape
    nd = len(shape)
    if dim is None:
        dims = tuple(i for i, s in enumerate(shape) if s == 1)
    else:
        dims = dim if isinstance(dim, (tuple, list)) else (dim,)
        dims = tuple(wrap_dim(d, nd) for d in dims)
        dims = tuple(d for d in dims if nd and shape[d] == 1)
    out = make_view(namespace_of(input._data).squeeze(input._data, dims) if dims else input._data, input)
    return _view_node(SqueezeBackward0, input, out)


Tensor.squeeze = squeeze


@method()
def squeeze_(self, dim=None):
    raise RuntimeError("squeeze_() is not supported: in-place metadata changes are not implemented")


def unsqueeze(input, dim):
    """A view with a dimension of size one inserted at ``dim``."""
    nd = input._data.ndim
    d = wrap_dim(dim, nd + 1)
    out = make_view(namespace_of(input._data).expand_dims(input._data, d), input)
    return _view_node(UnsqueezeBackward0, input, out)


Tensor.unsqueeze = unsqueeze


def flatten(input, start_dim=0, end_dim=-1):
    """Flattens dimensions ``start_dim`` to ``end_dim`` into one."""
    shape = input._data.shape
    nd = len(shape)
    if nd == 0:
        return reshape(input, (1,))
    s, e = wrap_dim(start_dim, nd), wrap_dim(end_dim, nd)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    n = 1
    for x in shape[s:e + 1]:
        n *= x
    return reshape(input, shape[:s] + (n,) + shape[e + 1:])


Tensor.flatten = flatten


def numel(input):
    """The total number of elements in ``input``."""
    return input._data.size


# -- basic indexing -------------------------------------------------------------------------

class SliceBackward0(Node):
    """Gradient of a basic-indexing view: scatter into zeros of the input's shape."""
    __slots__ = ()

    def backward(self, grad):
        return (slice_scatter_zeros(grad, self.in_shape, self.key),)


class SliceScatterBackward0(Node):
    __slots__ = ()

    def backward(self, grad):
        return (basic_getitem(grad, self.key),)


def slice_scatter_zeros(src, shape, key):
    """A tensor of zeros of ``shape`` with ``src`` written at ``[key]`` (differentiable)."""
    data = namespace_of(src._data).zeros(shape, dtype=src._data.dtype)
    data[key] = src._data
    out = make(data)
    node = record(SliceScatterBackward0, (src,), out)
    if node is not None:
        node.key = key
    return out


def _is_basic_key(key):
    if not isinstance(key, tuple):
        key = (key,)
    for k in key:
        if k is None or k is Ellipsis or isinstance(k, slice):
            continue
        if isinstance(k, numbers.Integral) and not isinstance(k, bool):
            continue
        return False
    return True


def _check_basic_key(key, shape):
    """IndexError with torch's words for an integer index out of range."""
    if not isinstance(key, tuple):
        key = (key,)
    n_real = sum(1 for k in key if k is not None and k is not Ellipsis)
    if n_real > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
    dim = 0
    for i, k in enumerate(key):
        if k is Ellipsis:
            dim = len(shape) - sum(1 for kk in key[i + 1:] if kk is not None and kk is not Ellipsis)
            continue
        if k is None:
            continue
        if isinstance(k, numbers.Integral):
            size = shape[dim]
            if k >= size or k < -size:
                raise IndexError(f"index {k} is out of bounds for dimension {dim} with size {size}")
        elif isinstance(k, slice) and k.step is not None and k.step <= 0:
            raise ValueError("step must be greater than zero")
        dim += 1


def basic_getitem(self, key):
    _check_basic_key(key, self._data.shape)
    out = make_view(self._data[key], self)
    node = record(SliceBackward0, (self,), out)
    if node is not None:
        node.in_shape = self._data.shape
        node.key = key
    return out


def _getitem(self, key):
    if _is_basic_key(key):
        return basic_getitem(self, key)
    from .index import advanced_getitem  # advanced (tensor / mask) indexing
    return advanced_getitem(self, key)


Tensor.__getitem__ = _getitem
