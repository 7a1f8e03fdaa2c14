"""In-place changes of a tensor's size and storage: ``resize_``, ``resize_as_``, ``set_``, and
the deprecated out-of-place ``Tensor.resize`` / ``resize_as``.

A tensor's storage is the NumPy array that owns its memory (``view._storage_root``). Growing
a tensor beyond its storage allocates a new, larger one holding the old contents, as torch's
does; the other tensors on the old storage keep it (torch's grow its storage with it).
"""
import warnings

from .._memory_format import channels_last, channels_last_3d, contiguous_format, preserve_format
from .._tensor import Size, Tensor
from ..autograd.graph import bump_version
from ._common import check_inplace, method, namespace_of, record_not_differentiable
from .view import _storage_root

__all__ = ["resize_as_"]


def _sizes(sizes):
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list, Size)):
        sizes = sizes[0]
    return tuple(int(s) for s in sizes)


def _contiguous_strides(size, memory_format):
    if memory_format in (channels_last, channels_last_3d):
        rank = 4 if memory_format is channels_last else 5
        if len(size) != rank:
            raise RuntimeError(f"required rank {rank} tensor to use "
                               f"{'channels_last' if rank == 4 else 'channels_last_3d'} format")
        order = (1,) + tuple(range(rank - 1, 1, -1)) + (0,)   # innermost first: C, W, H(, D), N
    elif memory_format in (None, contiguous_format):
        order = tuple(range(len(size) - 1, -1, -1))
    else:
        raise RuntimeError(f"Unsupported memory format. {memory_format}")
    strides = [0] * len(size)
    step = 1
    for d in order:
        strides[d] = step
        step *= max(size[d], 1)
    return tuple(strides)


def _flat_storage(data):
    """The storage of ``data`` as a 1-d array of its dtype, and ``data``'s offset in it."""
    backend, root, low = _storage_root(data)
    flat = root.reshape(-1) if root.flags.c_contiguous else root.ravel(order="K")
    flat = flat.view(data.dtype) if flat.dtype != data.dtype else flat
    return flat, (backend.data_ptr(data) - low) // data.itemsize


def _restride(data, size, strides, offset=None):
    """An array of ``size`` and ``strides`` over ``data``'s storage from ``offset`` (``data``'s
    own by default), over a larger copy of the storage when it does not reach that far."""
    xp = namespace_of(data)
    flat, own_offset = _flat_storage(data)
    offset = own_offset if offset is None else offset
    needed = offset + 1 + sum((n - 1) * s for n, s in zip(size, strides)) if all(size) else offset
    if needed > flat.size:
        grown = xp.zeros(needed, dtype=data.dtype)
        grown[:flat.size] = flat
        flat = grown
    item = data.itemsize
    return xp.lib.stride_tricks.as_strided(flat[offset:], size, tuple(s * item for s in strides))


def _check_resizable(self):
    if self._requires_grad:
        raise RuntimeError("cannot resize variables that require grad")


@method()
def resize_(self, *sizes, size=None, memory_format=None):
    """Resizes this tensor to the specified size, in place. If the number of elements is
    larger than the current storage size, the storage is resized to fit; if it is smaller,
    the storage is left as it is. Existing elements are kept at their storage positions; the
    new ones are uninitialized."""
    _check_resizable(self)
    size = _sizes(sizes) if size is None else _sizes((size,))
    if any(n < 0 for n in size):
        raise RuntimeError("numel: integer multiplication overflow")
    if memory_format is preserve_format:
        raise RuntimeError("Unsupported memory format. torch.preserve_format")
    if size == tuple(self._data.shape) and memory_format is None:
        return self
    strides = _contiguous_strides(size, memory_format)
    resized = size != tuple(self._data.shape)
    self._data = _restride(self._data, size, strides)
    if resized:   # torch counts a change of size, not one of strides alone
        bump_version(self)
    return self


@method()
def resize_as_(input, the_template, memory_format=None):
    """Resizes ``input`` to the size of ``the_template``, in place (see ``resize_``)."""
    if not isinstance(the_template, Tensor):
        raise TypeError(f"resize_as_(): argument 'the_template' (position 1) must be Tensor, not "
                        f"{type(the_template).__name__}")
    return resize_(input, tuple(the_template.shape), memory_format=memory_format)


def _deprecated_resize(self, size, what):
    warnings.warn(f"non-inplace {what} is deprecated", UserWarning, stacklevel=3)
    numel = 1
    for n in size:
        numel *= n
    if numel != self.numel():
        raise RuntimeError(
            f"requested resize to {'x'.join(map(str, size))} ({numel} elements in total), but the "
            f"given tensor has a size of {'x'.join(map(str, self.shape))} ({self.numel()} elements). "
            "autograd's resize can only change the shape of a given tensor, while preserving the "
            "number of elements. ")
    return self.contiguous().view(size)


@method()
def resize(self, *sizes):
    """Deprecated: the tensor viewed with ``sizes`` (of the same number of elements); use
    ``reshape`` or ``resize_``."""
    return _deprecated_resize(self, _sizes(sizes), "resize")


@method()
def resize_as(self, tensor):
    """Deprecated: the tensor viewed with ``tensor``'s size; use ``reshape_as`` or
    ``resize_as_``."""
    return _deprecated_resize(self, tuple(tensor.shape), "resize_as")


def _storage_array(source, dtype):
    """A 1-d array of ``dtype`` over the bytes of an ``UntypedStorage``."""
    return source._bytes.view(dtype)


@method()
def set_(self, source=None, storage_offset=0, size=None, stride=None):
    """Sets the underlying storage, size and strides: with ``source`` a tensor, this tensor
    shares its storage and takes its size, strides and offset (or the given ones); with a
    storage, it views that storage; with nothing, it becomes an empty tensor."""
    from ..storage import TypedStorage, UntypedStorage
    check_inplace(self)
    xp = namespace_of(self._data)
    dtype = self._data.dtype
    if source is None:
        data = xp.empty((0,), dtype=dtype)
    elif isinstance(source, Tensor):
        if source._data.dtype != dtype:
            from .index import _CPP_TYPE_NAMES
            raise RuntimeError(f"Could not set tensor of type {_CPP_TYPE_NAMES[source._data.dtype.name]} "
                               f"to a tensor of type {_CPP_TYPE_NAMES[dtype.name]}")
        data = source._data
        if size is not None:
            size = _sizes((size,))
            strides = _contiguous_strides(size, None) if stride is None else tuple(stride)
            data = _restride(source._data, size, strides, int(storage_offset))
    elif isinstance(source, (UntypedStorage, TypedStorage)):
        if isinstance(source, TypedStorage):
            if source.dtype.np != dtype:
                from .index import _CPP_TYPE_NAMES
                raise RuntimeError(f"Expected a Storage of type {_CPP_TYPE_NAMES[dtype.name].lower()} or an "
                                   f"UntypedStorage, but got type {_CPP_TYPE_NAMES[source.dtype.np.name].capitalize()} "
                                   "for argument 1 'storage'")
            source = source.untyped()
        flat = _storage_array(source, dtype)
        if size is None:
            data = flat
        else:
            size = _sizes((size,))
            strides = _contiguous_strides(size, None) if stride is None else tuple(stride)
            data = xp.lib.stride_tricks.as_strided(flat[int(storage_offset):], size,
                                                   tuple(s * flat.itemsize for s in strides))
    else:
        raise TypeError(f"set_(): argument 'source' must be Tensor or Storage, not "
                        f"{type(source).__name__}")
    self._data = data
    bump_version(self)
    self.__dict__.pop("_base", None)
    requires = [t for t in (self, source) if isinstance(t, Tensor) and t._requires_grad]
    if requires:
        record_not_differentiable(requires, self, "derivative for set_ is not implemented")
    return self
