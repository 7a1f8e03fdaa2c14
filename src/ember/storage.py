"""Storages (torch.storage): the memory behind tensors. ``UntypedStorage`` is its bytes, shared by
a tensor and all its views (``Tensor.untyped_storage()``); ``TypedStorage`` reads the same bytes
as elements of one dtype (``Tensor.storage()``, deprecated in torch as here), and the legacy
classes ``FloatStorage``, ``LongStorage``, ... are typed storages of a fixed dtype.

A storage here is a one-dimensional byte array over the memory of the array that owns a
tensor's data (``ops.view._storage_root``): element access, slices (which share the memory),
``fill_``, ``copy_`` and ``tolist`` read and write that memory, so a tensor sees them, and
``Tensor.set_(storage)`` views it again."""
import warnings

import numpy as np

from . import _dtype
from ._device import device as _device_cls

__all__ = ["UntypedStorage", "TypedStorage"]

_CPU = _device_cls("cpu")


def _byte_view(root):
    """The bytes of ``root`` (an array owning its memory), in memory order, without a copy."""
    flat = root.reshape(-1) if root.flags.c_contiguous else root.ravel(order="K")
    return flat.view(np.uint8)


class UntypedStorage:
    """A contiguous run of bytes: ``UntypedStorage()`` (empty), ``UntypedStorage(n)`` (``n``
    bytes) or ``UntypedStorage(sequence of ints)``; ``Tensor.untyped_storage()`` gives the one a
    tensor looks into."""

    def __init__(self, *args, device=None):
        device = _CPU if device is None else _device_cls(device)
        if device.type != "cpu":
            raise NotImplementedError(f"ember.UntypedStorage on {device.type}: ember makes storages "
                                      "on the CPU only")
        if len(args) > 1:
            raise TypeError(f"UntypedStorage() takes at most one argument ({len(args)} given)")
        if not args:
            data = np.zeros(0, np.uint8)
        elif isinstance(args[0], int):
            data = np.zeros(args[0], np.uint8)
        else:
            data = np.array(list(args[0]), dtype=np.int64)
            if data.size and (data.min() < 0 or data.max() > 255):
                raise RuntimeError("value cannot be converted to type uint8_t without overflow")
            data = data.astype(np.uint8)
        self._set(data, data, device)

    def _set(self, data, root, device):
        self._bytes, self._root, self.device = data, root, device
        return self

    @classmethod
    def _over(cls, root, device=_CPU):
        """The storage of the array ``root`` (which owns its memory)."""
        return cls.__new__(cls)._set(_byte_view(root), root, device)

    # -- what it is --------------------------------------------------------------------------
    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    def data_ptr(self):
        """The address of the first byte."""
        return self._bytes.__array_interface__["data"][0]

    def nbytes(self):
        return self._bytes.size

    def size(self):
        return self._bytes.size

    def __len__(self):
        return self._bytes.size

    def element_size(self):
        return 1

    def untyped(self):
        return self

    def type(self, dtype=None, non_blocking=False):
        if dtype is None:
            return "ember.storage.UntypedStorage"
        raise NotImplementedError("UntypedStorage.type(dtype): ember converts typed storages only")

    def is_shared(self):
        from .multiprocessing import _shm
        return _shm.segment_of(self._bytes) is not None

    def is_pinned(self, device="cuda"):
        return False

    # -- elements ----------------------------------------------------------------------------
    def tolist(self):
        return self._bytes.tolist()

    def __getitem__(self, index):
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step != 1:
                raise RuntimeError("slices with steps are not supported by storages")
            return UntypedStorage.__new__(UntypedStorage)._set(self._bytes[start:stop], self._root,
                                                               self.device)
        return int(self._bytes[_index(index, len(self))])

    def __setitem__(self, index, value):
        if not isinstance(index, slice):
            index = _index(index, len(self))
        self._bytes[index] = value

    def __iter__(self):
        return iter(self.tolist())

    def fill_(self, value):
        self._bytes[...] = value
        return self

    def copy_(self, source, non_blocking=None):
        """Copy the bytes of ``source`` (a storage of the same size) into this one."""
        other = source.untyped()._bytes
        if other.size != self._bytes.size:
            raise RuntimeError(f"size mismatch, {self.nbytes()} bytes in the destination and "
                               f"{other.size} in the source")
        self._bytes[...] = other
        return self

    def clone(self):
        out = UntypedStorage(len(self), device=self.device)
        out._bytes[...] = self._bytes
        return out

    def cpu(self):
        return self

    def resize_(self, size):
        """Grow or shrink to ``size`` bytes (the first bytes kept). Tensors that already view
        this storage keep the old memory."""
        data = np.zeros(size, np.uint8)
        keep = min(size, len(self))
        data[:keep] = self._bytes[:keep]
        return self._set(data, data, self.device)

    def share_memory_(self):
        """Move these bytes into shared memory (``ember.multiprocessing``'s segments). Tensors
        made on this storage from then on (``Tensor.set_``) share them with other processes;
        tensors that viewed it before keep their memory, as with ``Tensor.share_memory_``."""
        if self.is_shared():
            return self
        from .multiprocessing import _shm
        data = _shm.array_in(_shm.new_segment(len(self)), (len(self),), np.uint8)
        data[...] = self._bytes
        return self._set(data, data, self.device)

    def __reduce__(self):
        return (UntypedStorage, (self.tolist(),))

    def __repr__(self):
        body = "\n".join(f" {b}" for b in self.tolist())
        return (body + "\n" if body else "") + \
            f"[ember.storage.UntypedStorage(device={self.device}) of size {len(self)}]"


def _index(index, size):
    if not -size <= index < size:
        raise IndexError(f"index {index} out of range for storage of size {size}")
    return index % size if size else index


_TYPED_DEPRECATED = ("TypedStorage is deprecated. It will be removed in the future and UntypedStorage "
                     "will be the only storage class. This should only matter to you if you are using "
                     "storages directly.  To access UntypedStorage directly, use "
                     "tensor.untyped_storage() instead of tensor.storage()")


class _LegacyStorageMeta(type):
    """``isinstance(storage, FloatStorage)``: a typed storage of that class's dtype."""

    def __instancecheck__(cls, instance):
        if type.__instancecheck__(cls, instance):
            return True
        legacy = cls.__dict__.get("_legacy_dtype")
        return legacy is not None and isinstance(instance, TypedStorage) and \
            instance.dtype == legacy and instance.device.type == "cpu"


class TypedStorage(metaclass=_LegacyStorageMeta):
    """The bytes of an ``UntypedStorage`` read as elements of ``dtype``: ``TypedStorage(n,
    dtype=...)``, ``TypedStorage(sequence, dtype=...)`` or ``TypedStorage(wrap_storage=...,
    dtype=...)``."""

    _legacy_dtype = None
    is_sparse = False

    def __init__(self, *args, dtype=None, device=None, wrap_storage=None, _internal=False):
        if not _internal:
            warnings.warn(_TYPED_DEPRECATED, UserWarning, stacklevel=2)
        legacy = type(self)._legacy_dtype
        if legacy is not None and dtype is not None:
            raise RuntimeError(f"{type(self).__name__}: keyword argument 'dtype' cannot be specified")
        dt = legacy or (_dtype.get_default_dtype() if dtype is None else _dtype.to_dtype(dtype))
        self.dtype = dt
        if wrap_storage is not None:
            if args:
                raise RuntimeError("No positional arguments should be given when using 'wrap_storage'")
            if not isinstance(wrap_storage, UntypedStorage):
                raise TypeError(f"expected a 'UntypedStorage' for 'wrap_storage', but got "
                                f"{type(wrap_storage).__name__}")
            self._untyped_storage = wrap_storage
            return
        if len(args) > 1:
            raise TypeError(f"TypedStorage() takes at most one positional argument ({len(args)} given)")
        if not args:
            values = np.zeros(0, dt.np)
        elif isinstance(args[0], int):
            values = np.zeros(args[0], dt.np)
        else:
            values = np.asarray(list(args[0])).astype(dt.np)
        self._untyped_storage = UntypedStorage._over(values, _CPU if device is None else
                                                     _device_cls(device))

    @classmethod
    def _wrap(cls, untyped, dtype):
        out = TypedStorage.__new__(TypedStorage)
        out.dtype, out._untyped_storage = dtype, untyped
        return out

    def _values(self):
        return self._untyped_storage._bytes.view(self.dtype.np)

    # -- what it is --------------------------------------------------------------------------
    @property
    def device(self):
        return self._untyped_storage.device

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    def untyped(self):
        """The ``UntypedStorage`` these elements are the bytes of."""
        return self._untyped_storage

    def data_ptr(self):
        return self._untyped_storage.data_ptr()

    def element_size(self):
        return self.dtype.itemsize

    def nbytes(self):
        return self._untyped_storage.nbytes()

    def size(self):
        return self._untyped_storage.nbytes() // self.element_size()

    def __len__(self):
        return self.size()

    def type(self, dtype=None, non_blocking=False):
        """The legacy class name (``'ember.FloatStorage'``), or this storage converted to
        ``dtype`` (a legacy storage class or its name)."""
        if dtype is None:
            return f"ember.{_LEGACY_NAME[self.dtype]}"
        target = dtype if isinstance(dtype, type) else _LEGACY_BY_NAME[dtype.split(".")[-1]]
        return self._to(target._legacy_dtype)

    def is_shared(self):
        return self._untyped_storage.is_shared()

    def is_pinned(self, device="cuda"):
        return False

    def share_memory_(self):
        self._untyped_storage.share_memory_()
        return self

    # -- elements ----------------------------------------------------------------------------
    def tolist(self):
        return self._values().tolist()

    def __getitem__(self, index):
        values = self._values()
        if isinstance(index, slice):
            start, stop, step = index.indices(len(values))
            if step != 1:
                raise RuntimeError("slices with steps are not supported by storages")
            size = self.element_size()
            return TypedStorage._wrap(self._untyped_storage[start * size:stop * size], self.dtype)
        return values[_index(index, len(values))].item()

    def __setitem__(self, index, value):
        values = self._values()
        if not isinstance(index, slice):
            index = _index(index, len(values))
        values[index] = value

    def __iter__(self):
        return iter(self.tolist())

    def fill_(self, value):
        self._values()[...] = value
        return self

    def copy_(self, source, non_blocking=None):
        """Copy the elements of ``source`` (a storage of the same size), converted to this
        storage's dtype."""
        other = source._values() if isinstance(source, TypedStorage) else source._bytes
        if other.size != self.size():
            raise RuntimeError(f"size mismatch, {self.size()} elements in the destination and "
                               f"{other.size} in the source")
        self._values()[...] = other
        return self

    def clone(self):
        return TypedStorage._wrap(self._untyped_storage.clone(), self.dtype)

    def cpu(self):
        return self

    def resize_(self, size):
        self._untyped_storage.resize_(size * self.element_size())
        return self

    def _to(self, dtype):
        values = self._values().astype(dtype.np)
        return TypedStorage._wrap(UntypedStorage._over(values, self.device), dtype)

    def __reduce__(self):
        return (_rebuild_typed, (self.tolist(), self.dtype.name))

    def __repr__(self):
        body = "\n".join(f" {v}" for v in self.tolist())
        return (body + "\n" if body else "") + \
            f"[ember.storage.TypedStorage(dtype=ember.{self.dtype.name}, device={self.device}) " \
            f"of size {len(self)}]"


def _rebuild_typed(values, dtype_name):
    dtype = getattr(_dtype, dtype_name)
    return TypedStorage._wrap(UntypedStorage._over(np.asarray(values, dtype.np)), dtype)


# the legacy classes (torch.FloatStorage, ...): typed storages of one dtype each
_LEGACY = {"DoubleStorage": "float64", "FloatStorage": "float32", "HalfStorage": "float16",
           "BFloat16Storage": "bfloat16", "LongStorage": "int64", "IntStorage": "int32",
           "ShortStorage": "int16", "CharStorage": "int8", "ByteStorage": "uint8",
           "BoolStorage": "bool", "ComplexDoubleStorage": "complex128",
           "ComplexFloatStorage": "complex64"}


def _legacy_class(name, dtype_name):
    def __new__(cls, *args, wrap_storage=None, **kwargs):
        if kwargs:
            raise RuntimeError(f"{name}: keyword argument {next(iter(kwargs))!r} cannot be "
                               "specified")
        warnings.warn(_TYPED_DEPRECATED, UserWarning, stacklevel=2)
        out = TypedStorage.__new__(TypedStorage)
        dtype = getattr(_dtype, dtype_name)
        if wrap_storage is not None:
            TypedStorage.__init__(out, wrap_storage=wrap_storage, dtype=dtype, _internal=True)
        else:
            TypedStorage.__init__(out, *args, dtype=dtype, _internal=True)
        return out

    return _LegacyStorageMeta(name, (TypedStorage,), {
        "__new__": __new__, "_legacy_dtype": getattr(_dtype, dtype_name), "__module__": "ember",
        "dtype": getattr(_dtype, dtype_name),
        "__doc__": f"A typed storage of {dtype_name} elements (legacy)."})


LEGACY_STORAGES = {name: _legacy_class(name, dt) for name, dt in _LEGACY.items()}
_LEGACY_NAME = {cls._legacy_dtype: name for name, cls in LEGACY_STORAGES.items()}
_LEGACY_BY_NAME = LEGACY_STORAGES

for _name in ("double", "float", "half", "bfloat16", "long", "int", "short", "char", "byte",
              "bool", "complex_double", "complex_float"):
    _target = {"double": "float64", "float": "float32", "half": "float16", "long": "int64",
               "int": "int32", "short": "int16", "char": "int8", "byte": "uint8",
               "complex_double": "complex128", "complex_float": "complex64"}.get(_name, _name)
    setattr(TypedStorage, _name,
            (lambda target: lambda self: self._to(getattr(_dtype, target)))(_target))


def is_storage(obj):
    """True if ``obj`` is an ember storage (untyped or typed)."""
    return isinstance(obj, (UntypedStorage, TypedStorage))
