"""Subscripting and writing into tensors: ``x[idx]`` with integer tensors, lists and boolean
masks (mixed with ints, slices, None and Ellipsis), ``x[key] = value``, ``fill_``, ``zero_``
and ``copy_``.

An index key is first normalized to what the array namespace understands (integer arrays,
masks as the integer arrays of their nonzero positions, ints, slices, None, Ellipsis); the
result layout then follows NumPy's rules, which are torch's for these keys. The gradient of a
gather scatters back with accumulation, so repeated indices add up.
"""
import numbers
import re
import warnings

import numpy as np


from .._backend import to_device_of
from .._backend.rows import add_rows_at, masked_values, nonzero_positions
from .._dtype import _BY_NP
from ._common import (
    complex_autograd,
    bump_version, check_inplace, CopySlices, finish_inplace,
    forward_mode, grad_state, is_writeable, KeyRegion, make, method, namespace_of, Node, record,
    sum_to, Tensor, _type_word,
)
from .view import _check_basic_key, _is_basic_key
from ..autograd._dual import jvp_by_transposition
from ..autograd.saved_fields import index_key_tensors


__all__ = []


# -- keys -------------------------------------------------------------------------------------

def _as_index_array(k, data):
    """A tensor, list or array used as an index into ``data``, as an array of integers or bools
    on ``data``'s device (torch takes CPU index tensors for CUDA tensors)."""
    xp = namespace_of(data)
    if isinstance(k, Tensor):
        arr = to_device_of(k._data, data)
    elif isinstance(k, (list, tuple)):
        arr = xp.asarray([_item_value(v) for v in k] if _has_tensors(k) else k)
        if arr.size == 0:
            arr = arr.astype(xp.int64)
    elif isinstance(k, str):   # (a sequence torch tries to make a tensor of)
        raise TypeError(f"new(): invalid data type '{type(k).__name__}'")
    elif not hasattr(k, "dtype"):
        raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
                         f"valid indices (got {type(k).__name__})")
    else:
        arr = k
    if arr.dtype in _INDEX_DTYPES:
        return arr
    if arr.dtype == _UINT8:
        warnings.warn("indexing with dtype ember.uint8 is now deprecated, please use a dtype "
                      "ember.bool instead.", UserWarning, stacklevel=5)
        return arr.astype(bool)  # byte masks, as torch's legacy rule has it
    raise IndexError("tensors used as indices must be long, int, byte or bool tensors")


_INTEGER_INDEX_DTYPES = frozenset((np.dtype("int64"), np.dtype("int32")))
_INDEX_DTYPES = _INTEGER_INDEX_DTYPES | {np.dtype("bool")}
_UINT8 = np.dtype("uint8")


def _as_tuple_key(key):
    """torch still reads a list holding sequences, slices, None or Ellipsis as a tuple of
    indices (deprecated)."""
    for k in key:
        if k is None or k is Ellipsis or isinstance(k, (list, tuple, slice, Tensor)):
            warnings.warn("Using a non-tuple sequence for multidimensional indexing is deprecated "
                          "and will be changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. "
                          "In pytorch 2.9 this will be interpreted as tensor index, "
                          "x[torch.tensor(seq)], which will result either in an error or a "
                          "different result", UserWarning, stacklevel=5)
            return tuple(key)
    return (key,)


def _has_tensors(seq):
    return any(isinstance(v, Tensor) for v in seq)


def _item_value(v):
    return v.item() if isinstance(v, Tensor) else v


def _is_plain(k):
    return k is None or k is Ellipsis or isinstance(k, slice) or (
        isinstance(k, numbers.Integral) and not isinstance(k, bool))


def _dims_taken(k):
    """How many dimensions of the indexed tensor an index item consumes."""
    if k is None or k is Ellipsis or isinstance(k, bool):
        return 0
    if hasattr(k, "dtype") and k.dtype.kind == "b":
        return max(k.ndim, 1) if k.ndim else 0
    return 1


def _check_mask(mask, shape, dim):
    """torch's IndexError for a mask whose shape is not the indexed dims' shape."""
    want = shape[dim:dim + mask.ndim]
    if tuple(mask.shape) != tuple(want):
        for i, (m, s) in enumerate(zip(mask.shape, want)):
            if m != s:
                raise IndexError(f"The shape of the mask {list(mask.shape)} at index {i} does not "
                                 f"match the shape of the indexed tensor {list(shape)} at index "
                                 f"{dim + i}")
        raise IndexError(f"too many indices for tensor of dimension {len(shape)}")


def normalize_key(key, data):
    """``key`` as a tuple the array namespace indexes ``data`` with as torch would: tensors and
    lists become integer arrays, masks become their nonzero positions."""
    items = key if isinstance(key, tuple) else _as_tuple_key(key) if isinstance(key, list) else (key,)
    items = [k if _is_plain(k) or isinstance(k, bool) else _as_index_array(k, data) for k in items]
    shape = data.shape
    n_taken = sum(_dims_taken(k) for k in items)
    if n_taken > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
    out, dim = [], 0
    for k in items:
        if k is Ellipsis:
            dim += len(shape) - n_taken
        elif hasattr(k, "dtype") and k.dtype.kind == "b" and k.ndim:
            _check_mask(k, shape, dim)
            out.extend(nonzero_positions(k))
            dim += k.ndim
            continue
        elif not isinstance(k, bool):
            dim += _dims_taken(k)
        out.append(k)
    return tuple(out)


def _index(data, key):
    """``data[key]`` with torch's words for an index out of range."""
    try:
        return data[key]
    except IndexError as e:
        raise _out_of_range(e, key, data.ndim) from None


def _out_of_range(error, key, ndim):
    """torch's IndexError for an index out of range: an index tensor's dimension is counted
    among the index tensors, an int's among the tensor's dimensions."""
    match = re.match(r"index (-?\d+) is out of bounds for axis (\d+) with size (\d+)", str(error))
    if match is None:
        return error
    index, axis, size = match.groups()
    dim, ordinal = 0, 0
    for k in key:
        if k is Ellipsis:
            dim += ndim - sum(_dims_taken(kk) for kk in key)
            continue
        if dim == int(axis) and hasattr(k, "ndim"):
            axis = ordinal
            break
        ordinal += hasattr(k, "ndim")
        dim += _dims_taken(k)
    return IndexError(f"index {index} is out of bounds for dimension {axis} with size {size}")


# -- gather: x[key] -----------------------------------------------------------------------------

class IndexBackward0(Node):
    __slots__ = ()
    saved_fields = {"self_sym_sizes": "in_shape", "indices": index_key_tensors}

    def backward(self, grad):
        return (index_put_zeros(self.in_shape, self.key, grad),)

    def jvp(self, tangent):
        return _gather(tangent, self.key)


class IndexPutImplBackward0(Node):
    """The gradient of scattering ``values`` into zeros: gather them back."""
    __slots__ = ()
    jvp = jvp_by_transposition

    def backward(self, grad):
        return (_gather(grad, self.key),)


def _gather(self, key):
    out = make(_index(self._data, key))
    if (self._requires_grad and grad_state.grad_enabled) or forward_mode.active:
        node = record(IndexBackward0, (self,), out)
        if node is not None:
            node.in_shape, node.key = self._data.shape, key
    return out


def advanced_getitem(self, key):
    """``self[key]`` for a key holding integer tensors, lists or boolean masks: a new tensor
    (not a view), laid out as torch lays it out."""
    if key.__class__ is Tensor:  # the common key, one integer tensor: as normalize_key has it
        data, index = self._data, key._data
        if index.dtype in _INTEGER_INDEX_DTYPES and index.__class__ is data.__class__ and data.ndim:
            return _gather(self, (index,))
        if (index.dtype == np.bool_ and index.shape == data.shape and data.ndim
                and not ((self._requires_grad and grad_state.grad_enabled) or forward_mode.active)):
            return make(masked_values(data, index))   # (a mask of the tensor's shape, no history)
    elif key.__class__ is tuple:   # slices, None and integer tensors: as normalize_key has them
        items, taken, data = [], 0, self._data
        for k in key:
            if k.__class__ is slice:
                taken += 1
            elif (k.__class__ is Tensor and k._data.dtype in _INTEGER_INDEX_DTYPES
                  and k._data.__class__ is data.__class__):
                k = k._data
                taken += 1
            elif k is not None:
                break
            items.append(k)
        else:
            if taken <= data.ndim:
                return _gather(self, tuple(items))
    return _gather(self, normalize_key(key, self._data))


def index_put_zeros(shape, key, values):
    """Zeros of ``shape`` with ``values`` added at ``[key]`` (repeated positions accumulate);
    differentiable in ``values``."""
    vd = values._data
    xp = namespace_of(vd)
    data = xp.zeros(shape, dtype=vd.dtype)
    index = key[0] if len(key) == 1 else None
    if (index is not None and hasattr(index, "dtype") and index.dtype.kind in "iu" and data.size
            and index.size):
        flat = index.reshape(-1)   # x[index]: rows of x, as an embedding's backward adds them
        if flat.min() < 0:
            flat = xp.where(flat < 0, flat + shape[0], flat)
        add_rows_at(data.reshape(shape[0], -1), flat, vd.reshape(flat.size, -1))
    else:
        xp.add.at(data, key, vd)
    out = make(data)
    node = record(IndexPutImplBackward0, (values,), out)
    if node is not None:
        node.key = key
    return out


# -- scatter: x[key] = value ------------------------------------------------------------------

_OVERLAP = ("unsupported operation: more than one element of the written-to tensor refers to a "
            "single memory location. Please clone() the tensor before performing the operation.")


def _zeros_like(t):
    return make(namespace_of(t._data).zeros_like(t._data))


class IndexPutBackward0(Node):
    """Gradient of ``self[key] = value``: ``self`` gets the gradient with the written
    positions zeroed (all of it when the values were accumulated), ``value`` the gradient at
    those positions, reduced to its shape."""
    __slots__ = ()
    accumulate = False

    def jvp(self, t_self, t_value):
        """The same write, of the tangents (a repeated position keeps the value written last,
        as the primal does)."""
        if self.accumulate:
            return jvp_by_transposition(self, t_self, t_value)
        out = self.results[0]
        data = (namespace_of(out._data).zeros_like(out._data) if t_self is None
                else t_self._data.copy())
        res = make(data)
        if t_value is None:
            data[self.key] = 0
        else:
            res[self.key] = t_value
        return res

    def backward(self, grad):
        g_self = g_value = None
        if self.next_functions[0][0] is not None and self.accumulate:
            g_self = grad
        elif self.next_functions[0][0] is not None:
            xp = namespace_of(grad._data)
            keep = xp.ones(grad._data.shape, dtype=grad._data.dtype)
            keep[self.key] = 0
            g_self = grad * make(keep)
        if self.next_functions[1][0] is not None:
            g_value = sum_to(grad[self.key], self.value_shape)
            if g_value._data.dtype != self.value_dtype:
                g_value = g_value.to(_BY_NP[self.value_dtype])
        return g_self, g_value


def _value_array(self, value):
    """The value to write, as a scalar or an array of ``self``'s dtype."""
    if isinstance(value, Tensor):
        data = value._data
        if data.dtype != self._data.dtype:
            data = data.astype(self._data.dtype)
        return data
    if isinstance(value, (numbers.Number, bool)):
        return value
    from .._tensor_str import type_name
    raise TypeError(f"can't assign a {type(value).__name__} to a {type_name(self)}")


def _shape_mismatch(value_shape, target):
    return RuntimeError(f"shape mismatch: value tensor of shape {list(value_shape)} cannot be "
                        f"broadcast to indexing result of shape {list(target)}")


def _write(data, key, value, value_tensor, basic):
    """``data[key] = value`` with torch's errors for shapes that do not broadcast (NumPy writes
    nothing where it raises)."""
    try:
        data[key] = value
    except ValueError as e:
        _check_write_shapes(data, key, value, basic)
        if "read-only" in str(e):
            raise RuntimeError(_OVERLAP) from None
        target = data[key].shape
        if basic and value_tensor is not None:
            value_tensor.expand(target)
        raise _shape_mismatch(value.shape, target) from None
    except IndexError as e:
        _check_write_shapes(data, key, value, basic)   # (torch checks the shapes before the indices' range)
        raise _out_of_range(e, key, data.ndim) from None


def _check_write_shapes(data, key, value, basic):
    """torch's error where ``value`` does not broadcast to ``data[key]``'s shape, for an advanced key."""
    if not basic and hasattr(value, "shape"):
        target = _indexed_shape(data, key)
        if target is not None:
            try:
                namespace_of(data).broadcast_shapes(value.shape, target)
            except ValueError:
                raise _shape_mismatch(value.shape, target) from None


def _check_value_dtype(self, key, value, strict=False):
    """torch's index put needs a value tensor of the destination's dtype (``x[key] = v`` casts
    0-d ones; ``index_put`` does not)."""
    if (isinstance(value, Tensor) and (value._data.ndim or strict)
            and value._data.dtype != self._data.dtype):
        target = _index(self._data, key).shape
        try:
            namespace_of(self._data).broadcast_shapes(value._data.shape, target)
        except ValueError:
            raise _shape_mismatch(value._data.shape, target) from None
        raise RuntimeError("Index put requires the source and destination dtypes match, got "
                           f"{_type_word(self._data.dtype)} for the destination and "
                           f"{_type_word(value._data.dtype)} for the source.")


@method()
def __setitem__(self, key, value):
    """``self[key] = value``: basic and advanced indexing, as torch's."""
    basic = _is_basic_key(key)
    if basic:
        _check_basic_key(key, self._data.shape)
    else:
        key = normalize_key(key, self._data)
        _check_value_dtype(self, key, value)
    value_tensor = value if isinstance(value, Tensor) else None
    value_data = _value_array(self, value)
    recording = (grad_state.grad_enabled or forward_mode.active) and self._data.dtype.kind not in "biu" and (
        self._requires_grad or (value_tensor is not None and value_tensor._requires_grad)
        or forward_mode.active)
    if not recording:
        _write(self._data, key, value_data, value_tensor, basic)
        bump_version(self)
        return
    check_inplace(self)
    data = self._data.copy()
    _write(data, key, value_data, value_tensor, basic)
    out = make(data)
    node = record(CopySlices if basic else IndexPutBackward0, (self, value_tensor), out)
    if node is not None:
        if basic:
            node.region = KeyRegion(key)
        else:
            node.key = key
        if value_tensor is not None:
            node.value_shape, node.value_dtype = value_tensor._data.shape, value_tensor._data.dtype
    finish_inplace(self, out)


# -- fill_, zero_, copy_ ------------------------------------------------------------------------

class FillBackward2(Node):
    __slots__ = ()
    jvp = jvp_by_transposition
    constant_result = True

    def backward(self, grad):
        return (_zeros_like(grad),)


class FillBackward3(Node):
    __slots__ = ()
    jvp = jvp_by_transposition

    def backward(self, grad):
        g_value = grad.sum() if self.next_functions[1][0] is not None else None
        if g_value is not None and g_value._data.dtype != self.value_dtype:
            g_value = g_value.to(_BY_NP[self.value_dtype])
        return _zeros_like(grad), g_value


class FillBackward0(FillBackward2):
    """``fill(input, number)`` (out of place): no gradient reaches ``input``."""
    __slots__ = ()


class FillBackward1(FillBackward3):
    """``fill(input, value)`` with a 0-d tensor ``value`` (out of place): the gradient's sum reaches ``value``."""
    __slots__ = ()


class ZeroBackward0(Node):
    __slots__ = ()
    jvp = jvp_by_transposition
    constant_result = True

    def backward(self, grad):
        return (_zeros_like(grad),)


def _fill_data(data, value):
    try:
        data[...] = value
    except ValueError as e:
        if "read-only" in str(e):
            raise RuntimeError(_OVERLAP) from None
        raise


def _inplace_fill(self, value, node_cls, inputs):
    """Fill ``self`` with ``value``: in place, or, when autograd records, out of place with
    ``self`` taking the new history."""
    value_tensor = inputs[1] if len(inputs) > 1 else None
    recording = (grad_state.grad_enabled or forward_mode.active) and self._data.dtype.kind not in "biu" and (
        self._requires_grad or (value_tensor is not None and value_tensor._requires_grad)
        or forward_mode.active)
    if not recording:
        _fill_data(self._data, value)
        bump_version(self)
        return self
    check_inplace(self)
    data = namespace_of(self._data).empty_like(self._data)
    data[...] = value
    out = make(data)
    node = record(node_cls, inputs, out)
    if node is not None and value_tensor is not None:
        node.value_dtype = value_tensor._data.dtype
    return finish_inplace(self, out)


@method()
def fill_(self, value):
    """Fills this tensor with ``value`` (a number or a 0-d tensor)."""
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError("fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value._data.ndim} dimensions.")
        return _inplace_fill(self, value._data.astype(self._data.dtype), FillBackward3, (self, value))
    _value_array(self, value)
    return _inplace_fill(self, value, FillBackward2, (self,))


@method()
def zero_(self):
    """Fills this tensor with zeros."""
    return _inplace_fill(self, 0, ZeroBackward0, (self,))


class CopyBackwards(Node):
    """``dst.copy_(src)``: the gradient goes to ``src`` (summed to its shape, back to its dtype
    and device); ``dst``'s old values get none."""
    __slots__ = ()
    jvp = jvp_by_transposition

    def name(self):
        return "ember::autograd::CopyBackwards"

    def backward(self, grad):
        g_src = None
        if self.next_functions[1][0] is not None:
            g_src = sum_to(grad, self.src_shape)
            if g_src._data.dtype != self.src_dtype.np:
                g_src = g_src.to(self.src_dtype)
            if g_src.device != self.src_device:
                g_src = g_src.to(self.src_device)
        g_dst = _zeros_like(grad) if self.next_functions[0][0] is not None else None
        return g_dst, g_src


def _broadcast_error(dst_shape, src_shape):
    n = len(dst_shape)
    padded = (1,) * (n - len(src_shape)) + tuple(src_shape)
    for i, (a, b) in enumerate(zip(dst_shape, padded)):
        if a != b and b != 1:
            return RuntimeError(f"The size of tensor a ({a}) must match the size of tensor b ({b}) "
                                f"at non-singleton dimension {i}")
    return RuntimeError(f"output with shape {list(dst_shape)} doesn't match the broadcast shape "
                        f"{list(src_shape)}")


def _src_data_for(self, src):
    """``src``'s values on ``self``'s device and dtype, broadcast to ``self``'s shape."""
    if src.device != self.device:
        src = src.detach().to(self.device)
    data = _converted(src._data, self._data.dtype)
    xp = namespace_of(self._data)
    try:
        return xp.broadcast_to(data, self._data.shape)
    except ValueError:
        raise _broadcast_error(self._data.shape, data.shape) from None


def _converted(data, dtype):
    """``data`` in ``dtype`` (a complex array's real part for a real dtype), before any broadcasting: each
    value converted once."""
    if data.dtype == dtype:
        return data
    if data.dtype.kind == "c" and dtype.kind != "c":
        data = data.real
    return data.astype(dtype)


@method()
def copy_(self, src, non_blocking=False):
    """Copies the elements of ``src`` into this tensor (broadcasting, converting dtype and
    device) and returns this tensor; the gradient flows to ``src``."""
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_(): argument 'other' (position 1) must be Tensor, not "
                        f"{type(src).__name__}")
    data, dst = src._data, self._data
    # writing into an integer tensor records nothing: the result cannot require grad
    recording = (grad_state.grad_enabled or forward_mode.active) and dst.dtype.kind not in "biu" and (
        self._requires_grad or src._requires_grad or forward_mode.active)
    if not recording:
        if not is_writeable(dst):
            raise RuntimeError(_OVERLAP)
        if data.__class__ is np.ndarray and dst.__class__ is np.ndarray and data.ndim <= dst.ndim:
            data = _converted(data, dst.dtype)   # (copyto broadcasts it)
            try:
                np.copyto(dst, data)
            except ValueError:
                raise _broadcast_error(dst.shape, data.shape) from None
        else:
            namespace_of(dst).copyto(dst, _src_data_for(self, src))
        bump_version(self)
        return self
    if not (data.__class__ is np.ndarray and dst.__class__ is np.ndarray and data.dtype == dst.dtype
            and data.shape == dst.shape):   # (the common case needs no conversion)
        data = _src_data_for(self, src)
    check_inplace(self)
    out = make(data.copy())
    node = record(CopyBackwards, (self, src), out)
    if node is not None:
        node.src_shape, node.src_dtype, node.src_device = src._data.shape, src.dtype, src.device
    return finish_inplace(self, out)


# ==============================================================================================
# Indexing functions: index_select, gather, scatter*, index_add/copy/fill/put, masked_*, take,
# take_along_dim, nonzero.
#
# Every op validates its arguments before writing anything, computes its result out of place
# (a copy of ``input`` written with one backend call: fancy assignment, or ``ufunc.at`` where
# repeated positions must accumulate) and records a node whose backward is written in these
# same ops. The in-place forms go through ``apply_inplace``, so a failed one leaves its tensor
# unchanged.


def _indexed_shape(data, key):
    """The shape of ``data[key]`` whatever the index values (torch checks that the values
    broadcast to it before it looks at the indices' range); None when it cannot tell."""
    xp = namespace_of(data)
    safe = tuple(xp.zeros(k.shape, dtype=k.dtype) if getattr(k, "dtype", None) is not None
                 and k.dtype.kind in "iu" else k for k in (key if isinstance(key, tuple) else (key,)))
    try:
        return data[safe].shape
    except (IndexError, ValueError):
        return None


# Linear and dtype-preserving: their backward is the same for complex tensors.
for _node_cls in (IndexBackward0, IndexPutImplBackward0):
    complex_autograd(_node_cls)
