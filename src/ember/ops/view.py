"""View ops: results share storage (and the version counter) with their input.

view, reshape, expand, permute, transpose, t, T/mT, squeeze, unsqueeze, flatten, unflatten,
narrow, select, unbind, chunk, split, diagonal, movedim, unfold, basic indexing (ints, slices
with steps, None, Ellipsis), and the storage API (stride, storage_offset, data_ptr,
untyped_storage). Each backward maps the gradient back to the input's shape.
"""
import numbers

import numpy as np
from math import prod

from .._backend import backend_of
from . import _compiled_functions
from .._dtype import dtype as _dtype, to_dtype
from ._common import (
    complex_autograd,
    check_inplace, forward_mode, Node, Tensor, grad_state, make, make_view, method, namespace_of, record,
    sum_to, take_view, wrap_dim,
)
from ..autograd._dual import jvp_by_transposition
from ..autograd.saved_fields import not_kept, slice_field
from .._torch_function import _switch as _dispatch, override_or_raise

__all__ = ["reshape", "permute", "transpose", "swapdims", "swapaxes", "t", "squeeze",
           "unsqueeze", "flatten", "unflatten", "numel", "narrow", "select", "unbind", "chunk",
           "split", "diagonal", "movedim", "moveaxis"]


def _shape_arg(args, op):
    """``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])`` and ``f(Size)`` all mean the shape (2, 3)."""
    if len(args) == 1 and args[0].__class__ is not int and isinstance(args[0], (tuple, list)):
        args = args[0]
    for s in args:
        if s.__class__ is not int:
            return _checked_shape_arg(args, op)
    return args if args.__class__ is tuple else tuple(args)


def _checked_shape_arg(args, op):
    """``_shape_arg``'s general path: int-like elements and 0-d tensors, torch's TypeError."""
    out = []
    for s in args:
        if isinstance(s, Tensor):
            s = s.item()
        if not isinstance(s, numbers.Integral) or isinstance(s, bool):
            raise TypeError(f"{op}(): argument 'size' must be tuple of ints, but found element of "
                            f"type {type(s).__name__}")
        out.append(int(s))
    return tuple(out)


def _new_shape(args, numel, op):
    """The shape that ``view``/``reshape`` arguments ``args`` give a tensor of ``numel``
    elements (one -1 inferred), with torch's errors."""
    shape = args
    if len(shape) == 1 and shape[0].__class__ is not int and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    for s in shape:
        if s.__class__ is not int or s < -1:
            return infer_shape(_shape_arg(args, op), numel)
    if shape.__class__ is not tuple:
        shape = tuple(shape)
    known = prod(shape)
    if known == numel and -1 not in shape:   # (no size below -1, so no negative product)
        return shape
    if known < 0 and not numel % known and shape.count(-1) == 1:
        i = shape.index(-1)
        return shape[:i] + (numel // -known,) + shape[i + 1:]
    return infer_shape(shape, numel)


def infer_shape(shape, numel):
    """Resolve one -1 in ``shape`` for a tensor of ``numel`` elements, with torch's errors."""
    if shape.count(-1) == 1 and min(shape) == -1:
        known = -prod(shape)
        if known and not numel % known:
            i = shape.index(-1)
            return shape[:i] + (numel // known,) + shape[i + 1:]
    return _checked_infer_shape(shape, numel)


def _checked_infer_shape(shape, numel):
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
    __slots__ = ("in_shape",)
    saved_fields = {"self_sym_sizes": "in_shape"}

    def backward(self, grad):
        return (grad.reshape(self.in_shape),)

    def backward_arrays(self, grad):
        return (make(grad._data.reshape(self.in_shape)),)

    def jvp(self, tangent):
        return tangent.reshape(self.results[0]._data.shape)


class UnsafeViewBackward0(ViewBackward0):
    __slots__ = ()


class ReshapeAliasBackward0(ViewBackward0):
    """``reshape`` of a tensor that is not contiguous into a view of it, as torch names it."""
    __slots__ = ()


def _view_node(cls, input, out):
    node = record(cls, (input,), out)
    if node is not None:
        node.in_shape = input._data.shape
    return out


@method()
def view(self, *shape, size=None, dtype=None):
    """A tensor with the same data and a new shape; the strides must allow it (else use
    reshape). ``view(dtype)`` reinterprets the bytes as another dtype."""
    if size is not None or dtype is not None:
        shape = (size,) if size is not None else (to_dtype(dtype),)
    if len(shape) == 1 and isinstance(shape[0], _dtype):
        return _view_dtype(self, shape[0])
    data = self._data
    shape = _new_shape(shape, data.size, "view")
    if data.flags.c_contiguous:
        data = data.reshape(shape)
    else:
        try:
            data = namespace_of(data).reshape(data, shape, copy=False)
        except ValueError:
            raise RuntimeError("view size is not compatible with input tensor's size and stride (at "
                               "least one dimension spans across two contiguous subspaces). Use "
                               ".reshape(...) instead.") from None
    out = make_view(data, self)
    return _view_node(ViewBackward0, self, out) if self._requires_grad or forward_mode.active else out


def _view_dtype(self, dtype):
    if self._requires_grad and dtype.np != self._data.dtype:
        raise RuntimeError("view(dtype) of a tensor that requires grad is not differentiable")
    return make_view(self._data.view(dtype.np), self)


@method()
def view_as(self, other):
    return self.view(other._data.shape)


@method()
def reshape(input, *sizes, shape=None):
    """A tensor with the same data and number of elements and the given shape: a view when the
    strides allow, else a copy."""
    try:
        return _reshape_to(input, _new_shape(sizes if shape is None else (shape,), input._data.size, "reshape"))
    except (AttributeError, TypeError) as error:   # a tensor-like argument's override
        return override_or_raise(reshape, error, input, *sizes, shape=shape)


def _reshape_to(input, shape):
    """``reshape`` to a checked ``shape`` (no -1): a view when the strides allow, else a copy."""
    data = input._data
    cls = ViewBackward0
    if data.flags.c_contiguous:
        out = make_view(data.reshape(shape), input)
    elif data.shape == shape:
        out = make_view(data, input)
        cls = ReshapeAliasBackward0
    elif data.__class__ is np.ndarray:
        # NumPy's reshape gives a view when the strides allow, else a copy; a view's base is
        # the array that owns the memory, a copy's is the copy (asking for a view and catching
        # the error costs several times more)
        reshaped = data.reshape(shape)
        owner = data if data.base is None else data.base
        if reshaped.base is owner or np.may_share_memory(reshaped, data):
            out = make_view(reshaped, input)
            cls = ReshapeAliasBackward0
        else:
            out = make(reshaped)
            cls = UnsafeViewBackward0
    else:
        xp = namespace_of(data)
        try:
            out = make_view(xp.reshape(data, shape, copy=False), input)
            cls = ReshapeAliasBackward0
        except ValueError:
            out = make(xp.reshape(data, shape))
            cls = UnsafeViewBackward0
    return _view_node(cls, input, out) if input._requires_grad or forward_mode.active else out


@method()
def reshape_as(self, other):
    return reshape(self, other._data.shape)


class ExpandBackward0(Node):
    __slots__ = ()
    saved_fields = {"self_sym_sizes": "in_shape"}

    def backward(self, grad):
        return (sum_to(grad, self.in_shape),)

    def jvp(self, tangent):
        return tangent.expand(self.results[0]._data.shape)


@method()
def expand(self, *sizes, size=None, implicit=False):
    """A view with singleton dimensions expanded to a larger size (stride 0); -1 keeps a size."""
    sizes = _shape_arg(sizes if size is None else (size,), "expand")
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
        elif s < 0:
            raise RuntimeError(f"expand: the expanded size {s} at dimension {i} is negative (only -1, "
                               "for the existing size, is allowed)")
        elif cur != s and cur != 1:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size "
                               f"({cur}) at non-singleton dimension {i}.  Target sizes: {list(sizes)}.  "
                               f"Tensor sizes: {list(shape)}")
        target.append(s)
    out = make_view(expanded_array(self._data, tuple(target)), self)
    return _view_node(ExpandBackward0, self, out)


def expanded_array(data, shape):
    """``data`` broadcast to ``shape`` as a view: read-only where an element repeats (a new dim
    longer than 1, or a dim of size 1 grown), else as writable as ``data``, as in torch. Made
    directly for a C-contiguous NumPy array (NumPy's ``broadcast_to`` costs several times the
    view), by the backend's ``broadcast_to`` otherwise."""
    if data.__class__ is not np.ndarray or not data.size or not data.flags.c_contiguous:
        xp = namespace_of(data)
        arr = xp.broadcast_to(data, shape)
        if (not getattr(arr.flags, "writeable", True) and getattr(data.flags, "writeable", False)
                and not any(st == 0 and n > 1 for st, n in zip(arr.strides, arr.shape) if arr.size)):
            arr = xp.lib.stride_tricks.as_strided(data, shape, arr.strides, writeable=True)
        return arr
    # torch's strides: a dim that grows gets 0, a new dim of size 1 the span of the dims after it
    lead = len(shape) - data.ndim
    strides = list(data.strides)
    repeats = False
    have = data.shape
    for i, n in enumerate(shape[lead:] if lead else shape):
        if n != have[i]:
            strides[i] = 0
            if n > 1:
                repeats = True
    for i in reversed(range(lead)):
        strides.insert(0, 0 if shape[i] != 1 else (
            shape[i + 1] * strides[0] if i + 1 < len(shape) else data.itemsize))
        repeats = repeats or shape[i] > 1
    view = np.ndarray(shape, data.dtype, data, 0, tuple(strides))
    if repeats and view.size and view.flags.writeable:
        view.setflags(write=False)
    return view


@method()
def expand_as(self, other):
    return self.expand(other._data.shape)


class PermuteBackward0(Node):
    __slots__ = ()
    saved_fields = {"dims": "dims"}

    def backward(self, grad):
        return (grad.permute(self._inverse()),)

    def backward_arrays(self, grad):
        return (make(grad._data.transpose(self._inverse())),)

    def _inverse(self):
        """The permutation that undoes ``dims``."""
        inverse = [0] * len(self.dims)
        for i, d in enumerate(self.dims):
            inverse[d] = i
        return inverse

    def jvp(self, tangent):
        return tangent.permute(self.dims)


@method()
def permute(input, *args, dims=None):
    """A view with the dimensions reordered."""
    try:
        return _permuted(input, _shape_arg(args if dims is None else (dims,), "permute"))
    except (AttributeError, TypeError) as error:   # a tensor-like argument's override
        return override_or_raise(permute, error, input, *args, dims=dims)


def _permuted(input, dims):
    """``permute``'s view of ``input`` with the tuple of ints ``dims``, its node recorded."""
    data = input._data
    try:
        out = make_view(data.transpose(dims), input)
    except (ValueError, IndexError):
        _check_permutation(dims, data.ndim)
        raise
    if input._requires_grad or forward_mode.active:
        node = record(PermuteBackward0, (input,), out)
        if node is not None:
            nd = data.ndim
            node.dims = tuple(d + nd if d < 0 else d for d in dims)
    return out


def _check_permutation(dims, nd):
    """torch's errors for ``dims`` that are not a permutation of ``nd`` dimensions."""
    if len(dims) != nd:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not "
                           f"match the length of the desired ordering of dimensions i.e. input.dim() = "
                           f"{nd} is not equal to len(dims) = {len(dims)}".replace("(sparse_coo)", ""))
    if len({wrap_dim(d, nd) for d in dims}) != nd:
        raise RuntimeError("permute(): duplicate dims are not allowed.")


class TransposeBackward0(Node):
    __slots__ = ("dim0", "dim1")
    saved_fields = {"dim0": "dim0", "dim1": "dim1"}

    def backward(self, grad):
        return (grad.transpose(self.dim0, self.dim1),)

    def backward_arrays(self, grad):
        return (make(grad._data.swapaxes(self.dim0, self.dim1)),)

    def jvp(self, tangent):
        return tangent.transpose(self.dim0, self.dim1)


@method("transpose", "swapdims", "swapaxes")
def transpose(input, dim0, dim1):
    """A view with dimensions ``dim0`` and ``dim1`` swapped."""
    try:
        data = input._data
        nd = data.ndim
        d0, d1 = wrap_dim(dim0, nd), wrap_dim(dim1, nd)
        out = make_view(data.swapaxes(d0, d1) if nd else data[...], input)
        if input._requires_grad or forward_mode.active:
            node = record(TransposeBackward0, (input,), out)
            if node is not None:
                node.dim0, node.dim1 = d0, d1
        return out
    except (AttributeError, TypeError) as error:   # a tensor-like argument's override
        return override_or_raise(transpose, error, input, dim0, dim1)


swapdims = swapaxes = transpose


@method("transpose_", "swapdims_", "swapaxes_")
def transpose_(self, dim0, dim1):
    """In-place version of :func:`transpose`."""
    return _in_place(transpose, self, dim0, dim1)


class TBackward0(Node):
    __slots__ = ()

    def backward(self, grad):
        return (grad.t(),)

    def backward_arrays(self, grad):
        return (make(grad._data.T),)   # (of at most two dims)

    def jvp(self, tangent):
        return tangent.t()


@method()
def t(input):
    """Transposes a tensor of at most 2 dimensions (0-d and 1-d come back as they are)."""
    nd = input._data.ndim
    if nd > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {nd}D")
    out = make_view(input._data.T, input)
    record(TBackward0, (input,), out)
    return out


@method()
def t_(self):
    """In-place version of :func:`t`: ``self`` itself takes the transposed shape and strides."""
    return _in_place(t, self)


def _in_place(view_op, self, *args):
    """``self`` changed in place to ``view_op(self, *args)`` (see ``take_view``)."""
    check_inplace(self)
    return take_view(self, view_op(self, *args))


def _T(self):
    nd = self._data.ndim
    if nd != 2 and nd != 0:
        import warnings
        warnings.warn("The use of `x.T` on tensors of dimension other than 2 to reverse their shape "
                      "is deprecated and it will throw an error in a future release.", UserWarning,
                      stacklevel=2)
    return permute(self, tuple(range(nd - 1, -1, -1)))


def _mT(self):
    if self._data.ndim == 0:   # torch: the identity, deprecated
        import warnings
        warnings.warn("Tensor.mT is deprecated on 0-D tensors. This function is the identity in these "
                      "cases.", UserWarning, stacklevel=2)
        return permute(self, ())
    if self._data.ndim < 2:
        raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. Got "
                           f"{self._data.ndim}-D tensor.")
    return transpose(self, -2, -1)


method("T")(property(_T))
method("mT")(property(_mT))
method("H")(property(lambda self: _T(self).conj() if self.is_complex() else _T(self)))
method("mH")(property(lambda self: _mT(self).conj() if self.is_complex() else _mT(self)))


class SqueezeBackward0(Node):
    __slots__ = ("in_shape",)
    saved_fields = {"self_sym_sizes": "in_shape"}

    def backward(self, grad):
        return (grad.reshape(self.in_shape),)

    def backward_arrays(self, grad):
        return (make(grad._data.reshape(self.in_shape)),)

    def jvp(self, tangent):
        return tangent.reshape(self.results[0]._data.shape)


class SqueezeBackward1(SqueezeBackward0):
    """``squeeze(dim)`` with one dim, as torch names it."""
    __slots__ = ()
    saved_fields = {"self_sym_sizes": "in_shape", "dim": not_kept("dim")}


class SqueezeBackward2(SqueezeBackward0):
    """``squeeze(dims)`` with a tuple of dims, as torch names it."""
    __slots__ = ()
    saved_fields = {"self_sym_sizes": "in_shape", "dim": not_kept("dim")}


class UnsqueezeBackward0(Node):
    """``unsqueeze``, and indexing whose last step that did something was a ``None``: the
    gradient goes back to the input's shape (through the indexing ``key`` when there is one)."""
    __slots__ = ("in_shape",)
    saved_fields = {"dim": not_kept("dim")}
    key = None

    def backward(self, grad):
        if self.key is None:
            return (grad.reshape(self.in_shape),)
        return (slice_scatter_zeros(grad, self.in_shape, self.key),)

    def backward_arrays(self, grad):
        if self.key is None:
            return (make(grad._data.reshape(self.in_shape)),)
        return (make(_scattered_into_zeros(grad._data, self.in_shape, self.key)),)

    def jvp(self, tangent):
        if self.key is None:
            return tangent.reshape(self.results[0]._data.shape)
        return basic_getitem(tangent, self.key)


@method()
def squeeze(input, dim=None):
    """Removes dimensions of size 1 (all of them, or those in ``dim``, an int or a tuple)."""
    try:
        shape = input._data.shape
        nd = len(shape)
        node_cls = SqueezeBackward0
        if dim is None:
            dims = tuple(i for i, s in enumerate(shape) if s == 1)
        elif dim.__class__ is int:
            node_cls = SqueezeBackward1
            d = wrap_dim(dim, nd)
            dims = (d,) if nd and shape[d] == 1 else ()
        else:
            node_cls = SqueezeBackward2
            dims = dim if isinstance(dim, (tuple, list)) else (dim,)
            dims = tuple(wrap_dim(d, nd) for d in dims)
            dims = tuple(d for d in dims if nd and shape[d] == 1)
        out = make_view(input._data.squeeze(dims) if dims else input._data, input)
        return _view_node(node_cls, input, out) if input._requires_grad or forward_mode.active else out
    except (AttributeError, TypeError) as error:   # a tensor-like argument's override
        return override_or_raise(squeeze, error, input, dim)


@method()
def squeeze_(self, dim=None):
    """In-place version of :func:`squeeze`."""
    return _in_place(squeeze, self, dim)


@method()
def unsqueeze(input, dim):
    """A view with a dimension of size one inserted at ``dim``."""
    try:
        shape = input._data.shape
        d = wrap_dim(dim, len(shape) + 1)
        out = make_view(input._data.reshape(shape[:d] + (1,) + shape[d:]), input)
        return _view_node(UnsqueezeBackward0, input, out) if input._requires_grad or forward_mode.active else out
    except (AttributeError, TypeError) as error:   # a tensor-like argument's override
        return override_or_raise(unsqueeze, error, input, dim)


@method()
def unsqueeze_(self, dim):
    """In-place version of :func:`unsqueeze`."""
    return _in_place(unsqueeze, self, dim)


@method()
def flatten(input, start_dim=0, end_dim=-1):
    """Flattens dimensions ``start_dim`` to ``end_dim`` into one."""
    try:
        shape = input._data.shape
        nd = len(shape)
        if nd == 0:
            wrap_dim(start_dim, 0), wrap_dim(end_dim, 0)   # a 0-d tensor takes dims 0 and -1 only
            return reshape(input, (1,))
        s, e = wrap_dim(start_dim, nd), wrap_dim(end_dim, nd)
        if s > e:
            raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
        if s == e:
            return input
        return _reshape_to(input, shape[:s] + (prod(shape[s:e + 1]),) + shape[e + 1:])
    except (AttributeError, TypeError) as error:   # a tensor-like argument's override
        return override_or_raise(flatten, error, input, start_dim, end_dim)


def numel(input):
    """The total number of elements in ``input``."""
    return input._data.size


# -- basic indexing -------------------------------------------------------------------------

class SliceBackward0(Node):
    """Gradient of a basic-indexing view: scatter into zeros of the input's shape."""
    __slots__ = ("in_shape", "key")
    saved_fields = {"self_sym_sizes": "in_shape", "dim": slice_field("dim"),
                    "start": slice_field("start"), "end": slice_field("end"),
                    "step": slice_field("step")}

    def backward(self, grad):
        return (slice_scatter_zeros(grad, self.in_shape, self.key),)

    def backward_arrays(self, grad):
        return (make(_scattered_into_zeros(grad._data, self.in_shape, self.key)),)

    def jvp(self, tangent):
        return basic_getitem(tangent, self.key)


def _alike(cls, name, saved_fields=None):
    """A node class with ``cls``'s backward under torch's name ``name`` (and its own
    ``saved_fields`` when given)."""
    namespace = {"__slots__": ()}
    if saved_fields is not None:
        namespace["saved_fields"] = saved_fields
    return type(name, (cls,), namespace)


SelectBackward0 = _alike(SliceBackward0, "SelectBackward0", {
    "self_sym_sizes": "in_shape", "dim": slice_field("dim"), "index": slice_field("index")})
AliasBackward0 = _alike(SliceBackward0, "AliasBackward0")


class SliceBackwardBackward0(Node):
    """The gradient of ``slice_scatter_zeros`` (the backward of basic indexing): read the
    region back."""
    __slots__ = ()

    def backward(self, grad):
        return (basic_getitem(grad, self.key),)

    def jvp(self, tangent):
        return slice_scatter_zeros(tangent, self.in_shape, self.key)


def slice_scatter_zeros(src, shape, key):
    """A tensor of zeros of ``shape`` with ``src`` written at ``[key]`` (differentiable)."""
    out = make(_scattered_into_zeros(src._data, shape, key))
    node = record(SliceBackwardBackward0, (src,), out)
    if node is not None:
        node.key = key
        node.in_shape = shape
    return out


def _scattered_into_zeros(data, shape, key):
    """An array of zeros of ``shape`` and ``data``'s dtype with ``data`` written at ``[key]``."""
    out = namespace_of(data).zeros(shape, dtype=data.dtype)
    out[key] = data
    return out


def _is_int(k):
    return k.__class__ is int or (isinstance(k, numbers.Integral) and not isinstance(k, bool))


def _is_basic_key(key):
    if not isinstance(key, tuple):
        key = (key,)
    for k in key:
        if k is None or k is Ellipsis or isinstance(k, slice) or _is_int(k):
            continue
        return False
    return True


def _check_basic_key(key, shape):
    """torch's errors for an integer out of range, too many indices, or a step <= 0."""
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
        if isinstance(k, slice):
            if k.step is not None and k.step <= 0:
                raise ValueError("slice step cannot be zero" if k.step == 0 else
                                 "step must be greater than zero")
        else:
            size = shape[dim]
            if k >= size or k < -size:
                raise IndexError(f"index {k} is out of bounds for dimension {dim} with size {size}")
        dim += 1


_FULL = slice(None)


def _basic_node_cls(key):
    """torch names the node after the last step of the indexing that did something."""
    cls = AliasBackward0
    for k in key if isinstance(key, tuple) else (key,):
        if k is None:
            cls = UnsqueezeBackward0
        elif isinstance(k, slice):
            if k != _FULL:
                cls = SliceBackward0
        elif k is not Ellipsis:
            cls = SelectBackward0
    return cls


def _inserted_strides(key, shape, strides, itemsize, out_strides):
    """``out_strides`` (a list: ``data[key]``'s, NumPy's) with torch's stride for each dim that
    ``None`` inserts: the key's items taken in turn, the size times the stride of the input's
    dim it goes before, or one element where it goes last."""
    if not isinstance(key, tuple):
        key = (key,)
    real = sum(1 for k in key if k is not None and k is not Ellipsis)
    at = pos = 0   # where the walk is in the input's dims, and in the output's
    for k in key:
        if k is Ellipsis:
            at += len(shape) - real
            pos += len(shape) - real
        elif k is None:
            out_strides[pos] = shape[at] * strides[at] if at < len(shape) else itemsize
            pos += 1
        elif isinstance(k, slice):
            at += 1
            pos += 1
        else:
            at += 1
    return out_strides


def _index_data(data, key):
    """``data[key]`` for a basic key as a view, with torch's strides for the dims that ``None``
    inserts (``_inserted_strides``; the compiled ``Tensor.__getitem__`` follows the same rule)."""
    out = data[key]
    if not isinstance(out, data.__class__):  # all ints: a 0-d view, not a scalar copy
        out = data[(key if isinstance(key, tuple) else (key,)) + (Ellipsis,)]
    if key is None or (isinstance(key, tuple) and None in key):
        strides = _inserted_strides(key, data.shape, data.strides, data.itemsize, list(out.strides))
        out = namespace_of(data).lib.stride_tricks.as_strided(out, out.shape, strides)
    return out


def _slice_view(input, key, cls):
    """``input[key]`` for a basic ``key`` as a view, recording ``cls``."""
    out = make_view(_index_data(input._data, key), input)
    if (input._requires_grad and grad_state.grad_enabled) or forward_mode.active:
        node = record(cls, (input,), out)
        if node is not None:
            node.in_shape = input._data.shape
            node.key = key
    return out


def basic_getitem(self, key):
    _check_basic_key(key, self._data.shape)
    return _slice_view(self, key, _basic_node_cls(key))


def _first_dim_view(self, key):
    """``self[key]`` for an int in range or a slice without a step on a tensor with dims (the
    common keys, without the general walk over the key), else None."""
    data = self._data
    shape = data.shape
    if not shape:
        return None
    if key.__class__ is int:
        if not -shape[0] <= key < shape[0]:
            return None
        out, cls = make_view(data[key, ...], self), SelectBackward0
    elif key.step is None:  # torch's node is SliceBackward0 even for x[:] (not for x[:, :])
        out, cls = make_view(data[key], self), SliceBackward0
    else:
        return None
    if (self._requires_grad and grad_state.grad_enabled) or forward_mode.active:
        node = record(cls, (self,), out)
        if node is not None:
            node.in_shape = shape
            node.key = key
    return out


_advanced_getitem = []   # subscript.advanced_getitem, bound on first use (subscript imports this module)


@method("__getitem__")
def _getitem(self, key):
    if (key.__class__ is int or key.__class__ is slice) and (
            (out := _first_dim_view(self, key)) is not None):
        return out
    if key.__class__ is not Tensor and _is_basic_key(key):
        return basic_getitem(self, key)
    if not _advanced_getitem:   # advanced (tensor / mask) indexing
        from .subscript import advanced_getitem
        _advanced_getitem.append(advanced_getitem)
    return _advanced_getitem[0](self, key)


# -- narrow, select, unbind, split, chunk ---------------------------------------------------

def _dim_key(dim, item):
    return (_FULL,) * dim + (item,)


@method()
def narrow(input, dim, start, length):
    """A view of ``input`` along ``dim`` from ``start`` to ``start + length``."""
    shape = input._data.shape
    if not shape:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    dim = wrap_dim(dim, len(shape))
    size = shape[dim]
    start, length = int(start), int(length)
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start < -size or start > size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but "
                         f"got {start})")
    if start < 0:
        start += size
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return _slice_view(input, _dim_key(dim, slice(start, start + length)), SliceBackward0)


@method()
def select(input, dim, index):
    """A view of ``input`` at ``index`` along ``dim`` (that dimension is removed)."""
    shape = input._data.shape
    if not shape:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = wrap_dim(dim, len(shape))
    index = int(index)
    if index < -shape[dim] or index >= shape[dim]:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(shape)} at "
                         f"dimension {dim}")
    return _slice_view(input, _dim_key(dim, index), SelectBackward0)


def _zeros(shape, like):
    return make(namespace_of(like._data).zeros(shape, dtype=like._data.dtype))


def _filled(grads, shapes):
    """One gradient per output, zeros for outputs that got none (torch does the same); the
    engine passes gradients only up to the last output that got one."""
    like = next(g for g in grads if g is not None)
    grads = grads + (None,) * (len(shapes) - len(grads))
    return [g if g is not None else _zeros(s, like) for g, s in zip(grads, shapes)]


def _record_multi(node_cls, input, outs):
    """One node for all the views in ``outs``; output i is the node's output i."""
    return record(node_cls, (input,), *outs)


class UnbindBackward0(Node):
    __slots__ = ()
    saved_fields = {"dim": "dim"}
    jvp = jvp_by_transposition

    def backward(self, *grads):
        from .shape import stack
        return (stack(_filled(grads, [self.out_shape] * self.n_outputs), self.dim),)


@method()
def unbind(input, dim=0):
    """Removes dimension ``dim``: a tuple of the views along it."""
    return _unbind_entry[0](input, None, dim)


def _python_unbind(input, _, dim):
    """``unbind`` in every case its compiled function (``_compiled_splits``) leaves to Python."""
    data = input._data
    if not data.shape:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    dim = wrap_dim(dim, data.ndim)
    along = (_FULL,) * dim
    outs = tuple(make_view(data[along + (i, Ellipsis)], input) for i in range(data.shape[dim]))
    if not outs:   # (a dim of size 0: no views, nothing to record)
        return outs
    node = _record_multi(UnbindBackward0, input, outs)
    if node is not None:
        node.dim, node.n_outputs = dim, len(outs)
        node.out_shape = data.shape[:dim] + data.shape[dim + 1:]
    return outs


_unbind_entry = _compiled_functions.register(_python_unbind, None, kind="split", specifics="unbind")


def _split_input_shape(node):
    shapes, dim = node.out_shapes, node.dim
    return shapes[0][:dim] + (sum(shape[dim] for shape in shapes),) + shapes[0][dim + 1:]


class SplitBackward0(Node):
    __slots__ = ()
    saved_fields = {"dim": "dim", "self_sym_sizes": _split_input_shape,
                    "split_size": lambda node: node.out_shapes[0][node.dim]}
    jvp = jvp_by_transposition

    def backward(self, *grads):
        from .shape import cat
        return (cat(_filled(grads, self.out_shapes), self.dim),)


SplitWithSizesBackward0 = _alike(SplitBackward0, "SplitWithSizesBackward0", {
    "dim": "dim", "self_sym_sizes": _split_input_shape,
    "split_sizes": lambda node: tuple(shape[node.dim] for shape in node.out_shapes)})


def _split_sizes(input, sizes, dim, node_cls):
    data = input._data
    outs, start = [], 0
    for n in sizes:
        outs.append(make_view(data[_dim_key(dim, slice(start, start + n))], input))
        start += n
    node = _record_multi(node_cls, input, outs)
    if node is not None:
        node.dim = dim
        node.out_shapes = [o._data.shape for o in outs]
    return tuple(outs)


def _sizes_list(split_size, n):
    if n == 0:
        return [0]
    return [split_size] * (n // split_size) + ([n % split_size] if n % split_size else [])


@method("split")
def _split_method(self, split_size, dim=0):
    """Splits this tensor into views along ``dim``: chunks of ``split_size``, or of the sizes in
    a list ``split_size`` (``Tensor.split``'s name for ``split_size_or_sections``)."""
    return split(self, split_size, dim)


def split(tensor, split_size_or_sections, dim=0):
    """Splits ``tensor`` into views along ``dim``: chunks of ``split_size`` (the last may be
    smaller), or of the sizes in the list ``split_size_or_sections``."""
    try:
        shape = tensor._data.shape
        if not shape:
            raise RuntimeError("split expects at least a 1-dimensional tensor")
        dim = wrap_dim(dim, len(shape))
        n = shape[dim]
        if isinstance(split_size_or_sections, (list, tuple)):
            sizes = [int(s) for s in split_size_or_sections]
            if any(s < 0 for s in sizes):
                raise RuntimeError("split_with_sizes expects split_sizes have only non-negative entries, "
                                   f"but got split_sizes={sizes}")
            if sum(sizes) != n:
                raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input "
                                   f"tensor's size at dimension {dim}), but got split_sizes={sizes}")
            return _split_sizes(tensor, sizes, dim, SplitWithSizesBackward0)
        if not _is_int(split_size_or_sections):
            raise TypeError("split_with_sizes(): argument 'split_sizes' (position 2) must be tuple of "
                            f"ints, not {type(split_size_or_sections).__name__}")
        size = int(split_size_or_sections)
        if size < 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got split_size={size}")
        if size == 0 and n:
            raise RuntimeError("split_size can only be 0 if dimension size is 0, but got dimension size "
                               f"of {n}")
        return _split_sizes(tensor, _sizes_list(size, n), dim, SplitBackward0)
    except (AttributeError, TypeError) as error:   # a tensor-like argument's override
        return override_or_raise(split, error, tensor, split_size_or_sections, dim)


@method()
def chunk(input, chunks, dim=0):
    """Splits ``input`` into at most ``chunks`` views of equal size along ``dim`` (the last
    may be smaller)."""
    return _chunk_entry[0](input, chunks, dim)


def _python_chunk(input, chunks, dim):
    """``chunk`` in every case its compiled function (``_compiled_splits``) leaves to Python."""
    try:
        shape = input._data.shape
        if not shape:
            raise RuntimeError("chunk expects at least a 1-dimensional tensor")
        if chunks <= 0:
            raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
        dim = wrap_dim(dim, len(shape))
        n = shape[dim]
        sizes = [0] * chunks if n == 0 else _sizes_list(-(-n // chunks), n)
        return _split_sizes(input, sizes, dim, SplitBackward0)
    except (AttributeError, TypeError) as error:   # a tensor-like argument's override
        return override_or_raise(chunk, error, input, chunks, dim)


_chunk_entry = _compiled_functions.register(_python_chunk, None, kind="split", specifics="chunk")


# -- diagonal, movedim, unflatten, unfold ------------------------------------------------------

def _diagonal_data(data, offset, d1, d2):
    """The writable strided view of ``data``'s diagonal (the diagonal dim goes last)."""
    if type(data) is np.ndarray:   # NumPy's diagonal: the same view, marked read-only
        view = data.diagonal(offset, d1, d2)
        if data.flags.writeable:
            view.flags.writeable = True
        return view
    shape, strides = data.shape, data.strides
    n1, n2 = shape[d1], shape[d2]
    length = max(0, min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2))
    start = [0] * data.ndim
    if length:
        start[d1], start[d2] = max(0, -offset), max(0, offset)
    first = data[tuple(slice(s, None) for s in start)]
    keep = [i for i in range(data.ndim) if i != d1 and i != d2]
    out_shape = tuple(shape[i] for i in keep) + (length,)
    out_strides = tuple(strides[i] for i in keep) + (strides[d1] + strides[d2],)
    return namespace_of(data).lib.stride_tricks.as_strided(first, out_shape, out_strides)


def _diagonal_dims(ndim, dim1, dim2):
    d1, d2 = wrap_dim(dim1, ndim), wrap_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2


class DiagonalBackward0(Node):
    __slots__ = ()
    saved_fields = {"self_sym_sizes": "in_shape", "offset": "offset", "dim1": "dim1", "dim2": "dim2"}

    def backward(self, grad):
        return (diagonal_scatter_zeros(grad, self.in_shape, self.offset, self.dim1, self.dim2),)

    def jvp(self, tangent):
        return diagonal(tangent, self.offset, self.dim1, self.dim2)


class DiagonalBackwardBackward0(Node):
    __slots__ = ()
    jvp = jvp_by_transposition

    def backward(self, grad):
        return (diagonal(grad, self.offset, self.dim1, self.dim2),)


def diagonal_scatter_zeros(src, shape, offset, dim1, dim2):
    """Zeros of ``shape`` with ``src`` on the diagonal (differentiable)."""
    data = namespace_of(src._data).zeros(shape, dtype=src._data.dtype)
    _diagonal_data(data, offset, dim1, dim2)[...] = src._data
    out = make(data)
    node = record(DiagonalBackwardBackward0, (src,), out)
    if node is not None:
        node.offset, node.dim1, node.dim2 = offset, dim1, dim2
    return out


@method()
def diagonal(input, offset=0, dim1=0, dim2=1):
    """A view of the diagonal of ``input`` over ``dim1`` and ``dim2`` (appended as the last
    dimension); ``offset`` > 0 is above the main diagonal, < 0 below."""
    data = input._data
    d1, d2 = _diagonal_dims(data.ndim, dim1, dim2)
    out = make_view(_diagonal_data(data, offset, d1, d2), input)
    node = record(DiagonalBackward0, (input,), out)
    if node is not None:
        node.in_shape, node.offset, node.dim1, node.dim2 = data.shape, offset, d1, d2
    return out


def _dim_list(dims, ndim):
    dims = list(dims) if isinstance(dims, (tuple, list)) else [dims]
    return [wrap_dim(d, ndim) for d in dims]


@method("movedim", "moveaxis")
def movedim(input, source, destination):
    """Moves the dimension(s) ``source`` to position(s) ``destination``; the others keep their
    order."""
    nd = input._data.ndim
    if (source.__class__ in (list, tuple) and destination.__class__ in (list, tuple) and len(source) == 1
            and len(destination) == 1):   # (one dim given in a list: as given alone)
        source, destination = source[0], destination[0]
    if source.__class__ is int and destination.__class__ is int and nd:   # one dim: the common case
        order = list(range(nd))
        order.insert(wrap_dim(destination, nd), order.pop(wrap_dim(source, nd)))
        return _permuted(input, tuple(order))
    src, dst = _dim_list(source, nd), _dim_list(destination, nd)
    if not nd:   # a 0-d tensor takes dims 0 and -1, and stays as it is
        return permute(input, ())
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} dims) "
                           f"should contain the same number of dims as destination ({list(dst)} dims)")
    for name, dims in (("source", src), ("destination", dst)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({list(dims)})")
    order = [None] * nd
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(nd) if d not in src)
    order = [next(rest) if o is None else o for o in order]
    return permute(input, order)


moveaxis = movedim


@method()
def unflatten(input, dim, sizes):
    """Expands dimension ``dim`` into ``sizes`` (one of them may be -1)."""
    shape = input._data.shape
    if not shape:
        wrap_dim(dim, 0)   # only 0 and -1 get this far, as in torch
        raise RuntimeError(f"unflatten got an unexpected error:\nDimension specified as {dim} but tensor "
                           "has no dimensions")
    dim = wrap_dim(dim, len(shape))
    if (sizes.__class__ in (tuple, list) and sizes and all(s.__class__ is int and s >= 0 for s in sizes)
            and prod(sizes) == shape[dim]):   # (the common case: the sizes as they are)
        return Tensor.view(input, shape[:dim] + tuple(sizes) + shape[dim + 1:])
    sizes = _shape_arg((sizes,), "unflatten")
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    try:
        sizes = infer_shape(sizes, shape[dim])
    except RuntimeError as e:
        if "only one" in str(e):
            raise
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of "
                           f"dim {dim} ({shape[dim]}) in the input tensor") from None
    return Tensor.view(input, shape[:dim] + sizes + shape[dim + 1:])   # (the compiled method where installed)


class UnfoldBackward0(Node):
    __slots__ = ()
    saved_fields = {"self_sym_sizes": "in_shape", "dimension": "dim", "size": "size", "step": "step"}
    jvp = jvp_by_transposition

    def backward(self, grad):
        from .subscript import index_put_zeros
        xp = namespace_of(grad._data)
        dim, size, step = self.dim, self.size, self.step
        windows = (xp.arange(grad._data.shape[dim]) * step)[:, None] + xp.arange(size)
        return (index_put_zeros(self.in_shape, _dim_key(dim, windows), movedim(grad, -1, dim + 1)),)

    def backward_arrays(self, grad):
        """The windows' gradients added into zeros of the input's shape by strided slices: for
        each offset within a window (the positions it takes in every window, ``step`` apart),
        or, when there are fewer windows than offsets, for each window."""
        g = grad._data
        xp = namespace_of(g)
        dim, size, step = self.dim, self.size, self.step
        out = xp.zeros(self.in_shape, dtype=g.dtype)
        windows = g.shape[dim]
        before = (slice(None),) * dim
        if size <= windows:
            for k in range(size):
                out[before + (slice(k, k + step * (windows - 1) + 1, step),)] += g[..., k]
        else:
            for w in range(windows):
                out[before + (slice(w * step, w * step + size),)] += xp.moveaxis(g[before + (w,)], -1, dim)
        return (make(out),)


@method()
def unfold(self, dimension, size, step):
    """A view of every slice of length ``size`` along ``dimension``, ``step`` apart, as a new
    last dimension."""
    data = self._data
    shape = data.shape
    dim = wrap_dim(dimension, data.ndim)
    n = shape[dim] if shape else 1
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {dim} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if not shape:
        return reshape(self, (size,))
    strides = data.strides
    out_shape = shape[:dim] + ((n - size) // step + 1,) + shape[dim + 1:] + (size,)
    out_strides = strides[:dim] + (strides[dim] * step,) + strides[dim + 1:] + (strides[dim],)
    if type(data) is np.ndarray and data.flags.c_contiguous:   # (a view over its buffer, at once)
        view = np.ndarray(out_shape, data.dtype, data, 0, out_strides)
    else:
        view = namespace_of(data).lib.stride_tricks.as_strided(data, out_shape, out_strides)
    out = make_view(view, self)
    node = record(UnfoldBackward0, (self,), out)
    if node is not None:
        node.in_shape, node.dim, node.size, node.step = shape, dim, size, step
    return out


# -- the storage API --------------------------------------------------------------------------

def _owner(data):
    """The array owning the memory ``data`` looks into (``as_strided`` views hang off a
    wrapper object whose ``base`` is the array they look into)."""
    array_type = data.__class__
    while True:
        base = data.base
        if base.__class__ is not array_type:
            base = getattr(base, "base", None)
            if base.__class__ is not array_type:
                return data
        data = base


def _storage_root(data):
    """The array owning the memory ``data`` looks into, and its lowest address."""
    backend = backend_of(data)
    root = _owner(data)
    low = backend.data_ptr(root)
    for n, st in zip(root.shape, root.strides):
        if st < 0 and n:
            low += st * (n - 1)
    return backend, root, low


@method()
def stride(self, dim=None):
    """The step in elements between consecutive entries along each dimension (or ``dim``)."""
    data = self._data
    if data.size or any(data.strides):
        item = data.itemsize
        strides = tuple(s // item for s in data.strides)
    else:  # a new empty array: NumPy gives it zero strides, torch contiguous ones
        strides = _contiguous_strides(data.shape)
    if dim is None:
        return strides
    return strides[wrap_dim(dim, data.ndim)]


def _contiguous_strides(shape):
    strides, n = [], 1
    for s in reversed(shape):
        strides.append(n)
        n *= max(s, 1)
    return tuple(reversed(strides))


@method()
def storage_offset(self):
    """This tensor's first element's offset in its storage, in elements."""
    data = self._data
    backend, _, low = _storage_root(data)
    return (backend.data_ptr(data) - low) // data.itemsize


@method()
def data_ptr(self):
    """The address of this tensor's first element."""
    return backend_of(self._data).data_ptr(self._data)


@method()
def untyped_storage(self):
    """The storage (memory) this tensor looks into; views of one tensor share it."""
    from ..storage import UntypedStorage
    _, root, _ = _storage_root(self._data)
    return UntypedStorage._over(root, self.device)


@method()
def storage(self):
    """This tensor's storage as a ``TypedStorage`` of its dtype (deprecated, as in torch: use
    ``untyped_storage()``)."""
    import warnings
    from ..storage import TypedStorage, _TYPED_DEPRECATED
    warnings.warn(_TYPED_DEPRECATED, UserWarning, stacklevel=2)
    return TypedStorage._wrap(untyped_storage(self), self.dtype)


@method()
def storage_type(self):
    """The legacy storage class of this tensor's dtype (``ember.FloatStorage``, ...)."""
    from ..storage import LEGACY_STORAGES, _LEGACY_NAME
    return LEGACY_STORAGES[_LEGACY_NAME[self.dtype]]


# Linear and dtype-preserving: their backward is the same for complex tensors.
for _node_cls in (ViewBackward0, UnsafeViewBackward0, ReshapeAliasBackward0, ExpandBackward0,
                  PermuteBackward0,
                  TransposeBackward0, TBackward0, SqueezeBackward0, SqueezeBackward1,
                  SqueezeBackward2, UnsqueezeBackward0,
                  SliceBackward0, SelectBackward0, AliasBackward0, SliceBackwardBackward0,
                  UnbindBackward0, SplitBackward0, SplitWithSizesBackward0, UnfoldBackward0):
    complex_autograd(_node_cls)


# -- the public functions of the view methods compiled in C --------------------------------------
# ``ember.reshape(x, ...)`` and the others below: for a Tensor (not a subclass) while
# ``__torch_function__`` dispatch is off, Tensor's method, which ``_compiled_methods`` compiles (the
# Python op's steps in C, the Python op until it is built, and for every other case); otherwise the
# Python op, which is also the method's. (The Python ops above name these functions in their
# overrides: a tensor-like argument is dispatched as the public function.)

_python_reshape, _python_transpose, _python_squeeze, _python_unsqueeze, _python_flatten, _python_diagonal = (
    reshape, transpose, squeeze, unsqueeze, flatten, diagonal)


def reshape(input, *sizes, shape=None):
    """A tensor with the same data and number of elements and the given shape: a view when the
    strides allow, else a copy."""
    if input.__class__ is Tensor and shape is None and not _dispatch.on:
        return Tensor.reshape(input, *sizes)
    return _python_reshape(input, *sizes, shape=shape)


def transpose(input, dim0, dim1):
    """A view with dimensions ``dim0`` and ``dim1`` swapped."""
    if input.__class__ is Tensor and not _dispatch.on:
        return Tensor.transpose(input, dim0, dim1)
    return _python_transpose(input, dim0, dim1)


swapdims = swapaxes = transpose


def squeeze(input, dim=None):
    """Removes dimensions of size 1 (all of them, or those in ``dim``, an int or a tuple)."""
    if input.__class__ is Tensor and not _dispatch.on:
        return Tensor.squeeze(input) if dim is None else Tensor.squeeze(input, dim)
    return _python_squeeze(input, dim)


def unsqueeze(input, dim):
    """A view with a dimension of size one inserted at ``dim``."""
    if input.__class__ is Tensor and not _dispatch.on:
        return Tensor.unsqueeze(input, dim)
    return _python_unsqueeze(input, dim)


def flatten(input, start_dim=0, end_dim=-1):
    """Flattens dimensions ``start_dim`` to ``end_dim`` into one."""
    if input.__class__ is Tensor and not _dispatch.on:
        return Tensor.flatten(input, start_dim, end_dim)
    return _python_flatten(input, start_dim, end_dim)


def diagonal(input, offset=0, dim1=0, dim2=1):
    """A view of the diagonal of ``input`` over ``dim1`` and ``dim2`` (appended as the last
    dimension); ``offset`` > 0 is above the main diagonal, < 0 below."""
    if input.__class__ is Tensor and not _dispatch.on:
        return Tensor.diagonal(input, offset, dim1, dim2)
    return _python_diagonal(input, offset, dim1, dim2)
