"""``ember.save`` / ``ember.load`` in PyTorch's checkpoint format.

A checkpoint is a zip archive (records stored uncompressed, each aligned to 64 bytes) holding
``<name>/data.pkl``, a protocol-2 pickle of the object in which every tensor is a call to
``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks)`` and every
storage a persistent id ``('storage', torch.<X>Storage, key, location, numel)``, plus one raw
little-endian record ``<name>/data/<key>`` per storage and the small records ``byteorder``,
``version``, ``.format_version``, ``.storage_alignment`` and ``.data/serialization_id``.
Files written here load in PyTorch, and PyTorch's files (also the pre-1.6 non-zip format) load
here, without importing torch: the torch globals are written and read by name.
"""
import _compat_pickle
import codecs
import collections
import contextlib
import enum
import io
import os
import pickle
import secrets
import shutil
import struct
import sys
import tempfile
import warnings
import zipfile

import numpy as np

from . import _dtype, _layout
from ._backend import backend_of
from ._backend.sparse_coo import SparseCOOArray
from ._backend.sparse_csr import SparseCSRArray
from ._device import device as _device
from ._tensor import Size, Tensor, _make
from .nn.parameter import Parameter

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals",
           "safe_globals", "DEFAULT_PROTOCOL", "SourceChangeWarning", "LoadEndianness",
           "get_default_load_endianness", "set_default_load_endianness", "location_tag",
           "normalize_storage_type", "check_module_version_greater_or_equal", "mkdtemp"]

DEFAULT_PROTOCOL = 2
_ALIGNMENT = 64
_LEGACY_MAGIC = 0x1950a86a20f9469cfc6c
_LEGACY_PROTOCOL = 1001
_ZIP_LOCAL_HEADER = struct.Struct("<4s5H3L2H")   # a zip member's local file header (30 bytes)

# torch storage class name <-> ember dtype
_STORAGE_OF = {
    "float32": "FloatStorage", "float64": "DoubleStorage", "float16": "HalfStorage",
    "bfloat16": "BFloat16Storage", "uint8": "ByteStorage", "int8": "CharStorage",
    "int16": "ShortStorage", "int32": "IntStorage", "int64": "LongStorage", "bool": "BoolStorage",
    "complex64": "ComplexFloatStorage", "complex128": "ComplexDoubleStorage",
}
_DTYPE_OF_STORAGE = {storage: _dtype._BY_NAME[name] for name, storage in _STORAGE_OF.items()}


class _GlobalRef:
    """A global named ``module.name`` (a torch function or class), pickled as a GLOBAL opcode
    without importing its module."""
    __slots__ = ("module", "name")
    _interned = {}

    def __new__(cls, module, name):
        key = (module, name)
        ref = cls._interned.get(key)
        if ref is None:
            ref = cls._interned[key] = object.__new__(cls)
            ref.module, ref.name = module, name
        return ref

    def __call__(self, *args):   # pickle's save_reduce insists on a callable
        raise TypeError(f"{self.module}.{self.name} is only a name to pickle")


_REBUILD_TENSOR = _GlobalRef("torch._utils", "_rebuild_tensor_v2")
_REBUILD_TENSOR_V3 = _GlobalRef("torch._utils", "_rebuild_tensor_v3")
_UNTYPED_STORAGE = _GlobalRef("torch.storage", "UntypedStorage")
_REBUILD_PARAMETER = _GlobalRef("torch._utils", "_rebuild_parameter")
_REBUILD_SPARSE = _GlobalRef("torch._utils", "_rebuild_sparse_tensor")


class _TorchLayout:
    """A layout as torch pickles it: ``torch.serialization._get_layout("torch.<name>")``."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __reduce__(self):
        return (_GlobalRef("torch.serialization", "_get_layout"), (f"torch.{self.name}",))


# ---------------------------------------------------------------------------------------------
# writing
# ---------------------------------------------------------------------------------------------
class _StorageRef:
    """One storage to write: a flat array in memory order, under key ``key``."""
    __slots__ = ("key", "flat", "location")

    def __init__(self, key, flat, location):
        self.key, self.flat, self.location = key, flat, location


class _StorageTable:
    """The storages met while pickling, keyed by the array that owns their memory, so that
    tensors viewing one buffer are written as views of one storage."""

    def __init__(self):
        self._by_owner = {}
        self.refs = []
        self._owners = []   # keeps owners alive so their ids stay unique

    def add(self, owner, flat, location):
        key = (id(owner), flat.dtype)
        ref = self._by_owner.get(key)
        if ref is None:
            ref = _StorageRef(str(len(self.refs)), flat, location)
            self._by_owner[key] = ref
            self.refs.append(ref)
            self._owners.append(owner)
        return ref


def _memory_order_flat(array):
    """``array``'s elements in memory order as a 1-d view, or None if it has gaps."""
    if array.flags.c_contiguous:
        return array.reshape(-1)
    if array.flags.f_contiguous:
        return array.T.reshape(-1)
    return None


def _address(array):
    return array.__array_interface__["data"][0]


def _storage_of(array):
    """``(owner, flat, offset, strides)``: the buffer ``array`` views (as a flat array of its
    dtype), the element offset and element strides; a compact copy when it has none to share."""
    owner = array
    while isinstance(owner.base, np.ndarray):
        owner = owner.base
    size = array.itemsize
    flat = _memory_order_flat(owner)
    if flat is not None and flat.nbytes % size == 0 and all(s >= 0 and s % size == 0
                                                            for s in array.strides):
        flat = flat.view(np.uint8).view(array.dtype)
        offset = _address(array) - _address(flat)
        if offset % size == 0 and (flat.size or not array.size):
            return owner, flat, offset // size, tuple(s // size for s in array.strides)
    compact = np.ascontiguousarray(array)
    return compact, compact.reshape(-1), 0, tuple(s // size for s in compact.strides)


class _TorchPickler(pickle._Pickler):
    """Pickles tensors as torch's rebuild calls over persistent storage ids, and ember's
    Size/dtype/device as torch's."""
    dispatch = pickle._Pickler.dispatch.copy()

    def __init__(self, file, storages, protocol, legacy=False):
        super().__init__(file, protocol=protocol)
        self._storages = storages
        self._view_metadata = (None,) if legacy else ()   # the legacy format's sixth field

    def persistent_id(self, obj):
        if obj.__class__ is _StorageRef:
            return _storage_id(obj) + self._view_metadata
        return None

    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            return _reduce_tensor(obj, self._storages)
        if isinstance(obj, Size):
            return (_GlobalRef("torch", "Size"), (tuple(obj),))
        if isinstance(obj, _device):
            args = (obj.type,) if obj.index is None else (obj.type, obj.index)
            return (_GlobalRef("torch", "device"), args)
        return NotImplemented

    def _save_global_ref(self, obj):
        memo = self.memo.get(id(obj))
        if memo is not None:  # (a dtype saved again: its global is memoized already)
            self.write(self.get(memo[0]))
            return
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode())
        self.memoize(obj)

    def _save_dtype(self, obj):
        self._save_global_ref(_GlobalRef("torch", obj.name))

    dispatch[_GlobalRef] = _save_global_ref
    dispatch[_dtype.dtype] = _save_dtype
    dispatch[_dtype._NoTensorDtype] = _save_dtype


def _storage_id(ref):
    """``('storage', storage class, key, location, numel)`` as torch writes it."""
    typed = _STORAGE_OF.get(_dtype_name(ref.flat.dtype))
    if typed is None:  # torch saves the newer dtypes' storages untyped, in bytes
        return ("storage", _UNTYPED_STORAGE, ref.key, ref.location, ref.flat.nbytes)
    return ("storage", _GlobalRef("torch", typed), ref.key, ref.location, ref.flat.size)


def _pickler_class(pickle_module):
    """``_TorchPickler`` over ``pickle_module``'s Pickler (torch subclasses the module's Pickler
    the same way), which must be built on pickle's pure-Python ``pickle._Pickler``: the torch
    globals are written by name, which the C pickler cannot do without importing torch."""
    if pickle_module is None or pickle_module is pickle:
        return _TorchPickler
    base = getattr(pickle_module, "Pickler", None)
    if base is pickle._Pickler:
        return _TorchPickler
    if not (isinstance(base, type) and issubclass(base, pickle._Pickler)):
        raise NotImplementedError(
            f"ember.save: pickle_module {getattr(pickle_module, '__name__', pickle_module)!r} has no "
            "Pickler built on pickle's pure-Python pickle._Pickler (as pickle's and dill's are); "
            "ember writes torch's globals by name through that pickler")
    dispatch = base.dispatch.copy()
    dispatch.update({key: _TorchPickler.dispatch[key]
                     for key in (_GlobalRef, _dtype.dtype, _dtype._NoTensorDtype)})
    return type(f"_TorchPickler_{base.__name__}", (_TorchPickler, base), {"dispatch": dispatch})


def _dtype_name(np_dtype):
    return _dtype.from_numpy_dtype(np_dtype).name


def _reduce_tensor(tensor, storages):
    if tensor._leaf_hooks or tensor.grad_fn is not None:
        from .utils.hooks import warn_if_has_hooks
        warn_if_has_hooks(tensor)
    if tensor._data.__class__ is SparseCOOArray:   # as torch: indices, values, size, coalesced
        data = tensor._data
        return (_REBUILD_SPARSE, (_TorchLayout("sparse_coo"),
                                  (_make(data.indices), _make(data.values), Size(data.shape),
                                   data.coalesced)))
    if tensor._data.__class__ is SparseCSRArray:
        data = tensor._data
        return (_REBUILD_SPARSE, (_TorchLayout("sparse_csr"),
                                  (_make(data.crow_indices), _make(data.col_indices),
                                   _make(data.values), Size(data.shape))))
    data = backend_of(tensor._data).to_host(tensor._data)
    if tensor._is_param:
        return (_REBUILD_PARAMETER, (tensor.detach(), tensor.requires_grad, collections.OrderedDict()))
    owner, flat, offset, strides = _storage_of(data)
    ref = storages.add(owner, flat, str(tensor.device))
    if _dtype_name(data.dtype) not in _STORAGE_OF:
        return (_REBUILD_TENSOR_V3, (ref, offset, tuple(data.shape), strides, tensor.requires_grad,
                                     collections.OrderedDict(), tensor.dtype))
    return (_REBUILD_TENSOR, (ref, offset, tuple(data.shape), strides, tensor.requires_grad,
                              collections.OrderedDict()))


def _pickle_with_storages(obj, pickler, protocol):
    buffer = io.BytesIO()
    storages = _StorageTable()
    pickler(buffer, storages, protocol).dump(obj)
    return buffer.getvalue(), storages.refs


def _write_record(archive, name, data):
    """Writes one uncompressed member whose data starts at a multiple of 64 bytes, padding the
    local header's extra field (id ``FB``) as torch does."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    info.file_size = len(data)
    zip64 = info.file_size * 1.05 > zipfile.ZIP64_LIMIT
    start = archive.fp.tell() + 30 + len(name.encode("utf-8")) + 4 + (20 if zip64 else 0)
    pad = -start % _ALIGNMENT
    info.extra = b"FB" + struct.pack("<H", pad) + bytes(pad)
    with archive.open(info, "w", force_zip64=zip64) as member:
        member.write(data)


def _write_storage(archive, name, flat):
    """Writes one storage's bytes, little-endian."""
    if flat.dtype.byteorder == ">":
        flat = flat.astype(flat.dtype.newbyteorder("<"))
    _write_record(archive, name, memoryview(flat.view(np.uint8)))


def _write_checkpoint(obj, fileobj, archive_name, pickler, protocol, byteorder_record=True):
    pickled, storages = _pickle_with_storages(obj, pickler, protocol)
    with zipfile.ZipFile(fileobj, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        _write_record(archive, f"{archive_name}/data.pkl", pickled)
        _write_record(archive, f"{archive_name}/.format_version", b"1")
        _write_record(archive, f"{archive_name}/.storage_alignment", str(_ALIGNMENT).encode())
        if byteorder_record:
            _write_record(archive, f"{archive_name}/byteorder", b"little")
        for ref in storages:
            _write_storage(archive, f"{archive_name}/data/{ref.key}", ref.flat)
        _write_record(archive, f"{archive_name}/version", b"3\n")
        serialization_id = "".join(str(secrets.randbelow(10)) for _ in range(40))
        _write_record(archive, f"{archive_name}/.data/serialization_id", serialization_id.encode())


def _write_legacy_checkpoint(obj, fileobj, pickler, protocol):
    """torch's pre-1.6 format (``_use_new_zipfile_serialization=False``): consecutive pickles
    of the magic number, the protocol version, the system's sizes and the object (storages as
    persistent ids with a sixth, view, field), then the sorted storage keys, then each storage
    as its little-endian int64 element count followed by its bytes."""
    sys_info = {"protocol_version": _LEGACY_PROTOCOL, "little_endian": True,
                "type_sizes": {"short": 2, "int": 4, "long": 4}}
    for value in (_LEGACY_MAGIC, _LEGACY_PROTOCOL, sys_info):
        pickle._Pickler(fileobj, protocol=protocol).dump(value)
    storages = _StorageTable()
    pickler(fileobj, storages, protocol, legacy=True).dump(obj)
    refs = sorted(storages.refs, key=lambda ref: ref.key)
    pickle._Pickler(fileobj, protocol=protocol).dump([ref.key for ref in refs])
    for ref in refs:
        flat = ref.flat if ref.flat.dtype.byteorder != ">" else ref.flat.astype(ref.flat.dtype.newbyteorder("<"))
        fileobj.write(struct.pack("<q", _storage_id(ref)[4]))
        fileobj.write(memoryview(np.ascontiguousarray(flat).view(np.uint8)))


def _archive_name(path):
    stem = os.path.splitext(os.path.basename(path))[0]
    return stem if stem and stem.isascii() and stem.isprintable() and "/" not in stem else "archive"


def _replace_atomically(path, write):
    """Runs ``write(file)`` on a temporary file beside ``path``, then moves it into place: a
    failure leaves any old file untouched and no temporary behind."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, _mode_for(path))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _mode_for(path):
    """The permission bits of the file being replaced, else those a new file gets."""
    try:
        return os.stat(path).st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def save(obj, f, pickle_module=None, pickle_protocol=DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization=True, _disable_byteorder_record=False):
    """Saves an object to a disk file, in PyTorch's zip checkpoint format (``torch.load`` reads it).

    Args:
        obj: the object to save: tensors, parameters, state_dicts, and containers, numbers and
            strings holding them.
        f: a file path (str or os.PathLike) or a writable binary file-like object. A path is
            written to a temporary file in the same folder first and then moved into place, so
            an interrupted save never leaves a half-written checkpoint.
        pickle_module: the module whose ``Pickler`` pickles ``obj`` (``pickle`` by default;
            ember needs one built on pickle's pure-Python ``pickle._Pickler``, as dill's is).
        pickle_protocol: the pickle protocol (2 by default, as torch writes).
        _use_new_zipfile_serialization: False writes torch's legacy (pre-1.6, non-zip) format.
    """
    pickler = _pickler_class(pickle_module)
    if _use_new_zipfile_serialization:
        def write(file, name):
            _write_checkpoint(obj, file, name, pickler, pickle_protocol,
                              not _disable_byteorder_record)
    else:
        def write(file, name):
            _write_legacy_checkpoint(obj, file, pickler, pickle_protocol)
    if isinstance(f, (str, os.PathLike)):
        path = os.fspath(f)
        _replace_atomically(path, lambda file: write(file, _archive_name(path)))
    else:
        write(f, "archive")


# ---------------------------------------------------------------------------------------------
# safe globals
# ---------------------------------------------------------------------------------------------
_user_safe_globals = {}


def _qualified_name(obj):
    return f"{obj.__module__}.{obj.__qualname__}"


def add_safe_globals(safe_globals):
    """Marks the given globals as safe for ``weights_only`` load. Each entry is a function or
    class, or a ``(obj, "module.name")`` pair giving the name it is pickled under."""
    for entry in safe_globals:
        obj, name = entry if isinstance(entry, tuple) else (entry, _qualified_name(entry))
        _user_safe_globals[name] = obj


def get_safe_globals():
    """The globals the user marked safe for ``weights_only`` load."""
    return list(_user_safe_globals.values())


def clear_safe_globals():
    """Forgets the globals the user marked safe for ``weights_only`` load."""
    _user_safe_globals.clear()


@contextlib.contextmanager
def safe_globals(safe_globals):
    """A context manager that marks the given globals safe for ``weights_only`` load within it."""
    saved = dict(_user_safe_globals)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        _user_safe_globals.clear()
        _user_safe_globals.update(saved)


# ---------------------------------------------------------------------------------------------
# reading
# ---------------------------------------------------------------------------------------------
class CheckpointError(RuntimeError):
    """The file is not a readable checkpoint (damaged, truncated or of an unknown format)."""


class _WeightsOnlyError(pickle.UnpicklingError):
    pass


class _UnsupportedDtypeError(TypeError):
    pass


class _StorageType:
    """A torch storage class met in a checkpoint; ``dtype`` is None for ones ember lacks."""

    def __init__(self, name):
        self.name = name
        self.dtype = _DTYPE_OF_STORAGE.get(name, _dtype.uint8 if name == "UntypedStorage" else None)

    def require_dtype(self):
        if self.dtype is None:
            raise _UnsupportedDtypeError(f"ember.load: unsupported dtype in checkpoint: storage "
                                         f"torch.{self.name}")
        return self.dtype


class _UnsupportedDtype:
    def __init__(self, name):
        self.name = name


class _Storage:
    """A loaded storage: a flat array of its dtype, and where it was saved."""
    __slots__ = ("array", "location")

    def __init__(self, array, location):
        self.array, self.location = array, location


def _tensor_from_storage(storage, offset, size, stride):
    flat = storage.array
    size, stride = tuple(int(n) for n in size), tuple(int(s) for s in stride)
    if len(size) != len(stride) or any(n < 0 for n in size) or any(s < 0 for s in stride):
        raise CheckpointError("ember.load: the checkpoint is damaged (bad tensor size or stride)")
    if all(size):
        extent = offset + sum((n - 1) * s for n, s in zip(size, stride))
        if offset < 0 or extent >= flat.size:
            raise CheckpointError("ember.load: the checkpoint is damaged (a tensor lies outside "
                                  "its storage)")
    itemsize = flat.itemsize
    data = np.ndarray(size, flat.dtype, buffer=flat, offset=min(offset, flat.size) * itemsize,
                      strides=[s * itemsize for s in stride])
    return _make(data)


def _place(tensor, storage):
    return tensor if storage.location == "cpu" else tensor.to(storage.location)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False,
                       backward_hooks=None, metadata=None):
    tensor = _place(_tensor_from_storage(storage, storage_offset, size, stride), storage)
    tensor._requires_grad = bool(requires_grad)
    return tensor


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       dtype, metadata=None):
    if isinstance(dtype, _UnsupportedDtype) or dtype.np is None:
        raise _UnsupportedDtypeError(f"ember.load: unsupported dtype in checkpoint: torch.{dtype.name}")
    typed = _Storage(storage.array.view(dtype.np), storage.location)
    return _rebuild_tensor_v2(typed, storage_offset, size, stride, requires_grad)


def _rebuild_parameter(data, requires_grad, backward_hooks=None):
    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    param = _rebuild_parameter(data, requires_grad)
    for name, value in (state or {}).items():
        setattr(param, name, value)
    return param


def _layout_by_name(name):
    short = name.rpartition(".")[2]
    if short not in _layout.__all__ or short == "layout":
        raise pickle.UnpicklingError(f"unknown layout {name!r}")
    return getattr(_layout, short)


def _rebuild_sparse_tensor(layout, data):
    """torch's pickled sparse tensor: (indices, values, size[, is_coalesced]) for COO,
    (crow_indices, col_indices, values, size) for CSR."""
    if layout is _layout.sparse_csr:
        from .sparse._csr import sparse_csr_tensor
        crow_indices, col_indices, values, size = data
        return sparse_csr_tensor(crow_indices, col_indices, values, size)
    if layout is not _layout.sparse_coo:
        raise NotImplementedError(f"ember.load: sparse tensors of layout {layout} are not supported")
    indices, values, size = data[:3]
    is_coalesced = data[3] if len(data) > 3 else None
    from .sparse._coo import sparse_coo_tensor
    return sparse_coo_tensor(indices, values, size, is_coalesced=is_coalesced)


def _rebuild_device(type, index=None):
    return _device(type, index) if index is not None else _device(type)


def _torch_global(module, name):
    """ember's stand-in for a torch global by name, or None."""
    if module == "torch._utils":
        return {"_rebuild_tensor_v2": _rebuild_tensor_v2, "_rebuild_tensor_v3": _rebuild_tensor_v3,
                "_rebuild_parameter": _rebuild_parameter,
                "_rebuild_sparse_tensor": _rebuild_sparse_tensor,
                "_rebuild_parameter_with_state": _rebuild_parameter_with_state}.get(name)
    if module == "torch.serialization" and name == "_get_layout":
        return _layout_by_name
    if module in ("torch", "torch.storage") and name.endswith("Storage"):
        return _StorageType(name)
    if module == "torch":
        if name == "Size":
            return Size
        if name == "device":
            return _rebuild_device
        if name in _dtype._BY_NAME:
            return _dtype._BY_NAME[name]
        if name in _layout.__all__ and name != "layout":
            return getattr(_layout, name)
        if name in _TORCH_DTYPE_NAMES:
            return _UnsupportedDtype(name)
    return None


_TORCH_DTYPE_NAMES = {"uint16", "uint32", "uint64", "complex32", "float8_e4m3fn", "float8_e5m2",
                      "float8_e4m3fnuz", "float8_e5m2fnuz", "qint8", "quint8", "qint32"}

_SAFE_BUILTINS = {
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("collections", "Counter"): collections.Counter,
    ("_codecs", "encode"): codecs.encode,
    ("builtins", "set"): set,
    ("builtins", "frozenset"): frozenset,
    ("builtins", "bytearray"): bytearray,
    ("builtins", "complex"): complex,
    ("builtins", "slice"): slice,
    ("ember._dtype", "_dtype_by_name"): _dtype._dtype_by_name,
}


class _TorchUnpickling:
    """Reads ``data.pkl``: torch's globals map to ember's rebuild functions; storages come from
    ``load_storage(storage_type, key, location, numel)``. With ``weights_only`` only the globals
    a checkpoint needs (and those marked safe) are allowed. Mixed into an Unpickler class."""

    def __init__(self, file, load_storage, weights_only, **kwargs):
        super().__init__(file, **kwargs)
        self._load_storage = load_storage
        self._weights_only = weights_only

    def find_class(self, module, name):
        module, name = _python3_name(module, name)
        found = _torch_global(module, name)
        if found is None:
            found = _SAFE_BUILTINS.get((module, name), _user_safe_globals.get(f"{module}.{name}"))
        if found is not None:
            return found
        if self._weights_only:
            raise _WeightsOnlyError(
                "Weights only load failed. In ember, `weights_only=True` is the default for "
                "ember.load; re-running with `weights_only=False` will likely succeed, but it can "
                "result in arbitrary code execution. Do it only if you got the file from a trusted "
                f"source.\nUnsupported global: GLOBAL {module}.{name} was not an allowed global by "
                "default. Please use `ember.serialization.add_safe_globals([" + name + "])` or the "
                "`ember.serialization.safe_globals([" + name + "])` context manager to allowlist "
                "this global if you trust this class/function.")
        return super().find_class(module, name)

    def persistent_load(self, pid):
        if not isinstance(pid, tuple) or not pid or pid[0] != "storage":
            raise pickle.UnpicklingError(f"unsupported persistent id {pid!r}")
        storage_type, key, location, numel = pid[1:5]
        if not isinstance(storage_type, _StorageType):
            raise pickle.UnpicklingError(f"unsupported storage type {storage_type!r}")
        return self._load_storage(storage_type, str(key), str(location), int(numel), pid[5:])


class _Unpickler(_TorchUnpickling, pickle.Unpickler):
    pass


def _unpickler_class(pickle_module):
    """``_Unpickler`` over ``pickle_module``'s Unpickler, as torch subclasses it."""
    if pickle_module is None or pickle_module is pickle:
        return _Unpickler
    base = getattr(pickle_module, "Unpickler", None)
    if not (isinstance(base, type) and issubclass(base, (pickle.Unpickler, pickle._Unpickler))):
        raise AttributeError(f"module {getattr(pickle_module, '__name__', pickle_module)!r} has no "
                             "attribute 'Unpickler' (a pickle.Unpickler subclass)")
    return type(f"_Unpickler_{base.__name__}", (_TorchUnpickling, base), {})


def _python3_name(module, name):
    """Python 2 names that protocol-2 pickles use (``__builtin__.set``) as Python 3's."""
    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[(module, name)]
    return _compat_pickle.IMPORT_MAPPING.get(module, module), name


def _location_of(map_location, location):
    """The device name a storage saved at ``location`` is loaded to."""
    if map_location is None:
        return location
    if isinstance(map_location, dict):
        return str(map_location.get(location, location))
    return str(map_location)


def _mapped(storage, map_location):
    if not callable(map_location):
        storage.location = _location_of(map_location, storage.location)
        return storage
    result = map_location(_make(storage.array), storage.location)
    if isinstance(result, Tensor):
        return _Storage(backend_of(result._data).to_host(result._data), str(result.device))
    return storage


# --- the zip format ---
def _record_prefix(archive):
    for name in archive.namelist():
        if name.endswith("/data.pkl") and name.count("/") == 1:
            return name[: -len("data.pkl")]
    raise CheckpointError("ember.load: the checkpoint is damaged: it has no data.pkl record")


def _member_offset(fileobj, info):
    """Where a stored (uncompressed) member's bytes start in the archive file."""
    fileobj.seek(info.header_offset)
    header = _ZIP_LOCAL_HEADER.unpack(fileobj.read(30))
    return info.header_offset + 30 + header[-2] + header[-1]


class _ZipStorageReader:
    def __init__(self, archive, prefix, mmap_path):
        self._archive, self._prefix, self._mmap_path = archive, prefix, mmap_path

    def read(self, dtype, key, numel):
        info = self._archive.getinfo(f"{self._prefix}data/{key}")
        nbytes = numel * dtype.itemsize
        if info.file_size < nbytes:
            raise CheckpointError(f"ember.load: the checkpoint is damaged: storage {key} holds "
                                  f"{info.file_size} bytes, {nbytes} expected")
        if self._mmap_path is not None and nbytes:
            if info.compress_type != zipfile.ZIP_STORED:
                raise CheckpointError("ember.load: mmap=True needs uncompressed records")
            with open(self._mmap_path, "rb") as f:
                offset = _member_offset(f, info)
            raw = np.memmap(self._mmap_path, dtype=np.uint8, mode="c", offset=offset, shape=(nbytes,))
        else:
            raw = np.frombuffer(bytearray(self._archive.read(info)[:nbytes]), dtype=np.uint8)
        return raw.view(dtype.np)


def _load_zip(fileobj, map_location, weights_only, mmap_path, unpickler, pickle_kwargs):
    with zipfile.ZipFile(fileobj) as archive:
        prefix = _record_prefix(archive)
        names = set(archive.namelist())
        if f"{prefix}byteorder" in names:
            big = archive.read(f"{prefix}byteorder") != b"little"
        else:   # no record: the fallback byte order (set_default_load_endianness)
            big = _load_endianness[0] is LoadEndianness.BIG or (
                _load_endianness[0] is LoadEndianness.NATIVE and sys.byteorder == "big")
        if big:
            raise CheckpointError("ember.load: big-endian checkpoints are not supported")
        reader = _ZipStorageReader(archive, prefix, mmap_path)
        loaded = {}

        def load_storage(storage_type, key, location, numel, _):
            if key not in loaded:
                array = reader.read(storage_type.require_dtype(), key, numel)
                loaded[key] = _mapped(_Storage(array, location), map_location)
            return loaded[key]

        data = io.BytesIO(archive.read(f"{prefix}data.pkl"))
        return unpickler(data, load_storage, weights_only, **pickle_kwargs).load()


# --- the legacy (pre-1.6) format ---
def _load_legacy(fileobj, map_location, weights_only, unpickler, pickle_kwargs):
    def header_value():
        return _Unpickler(fileobj, None, True, **pickle_kwargs).load()

    if header_value() != _LEGACY_MAGIC:
        raise CheckpointError("ember.load: not a checkpoint (invalid magic number); the file is "
                              "damaged or of an unknown format")
    if header_value() != _LEGACY_PROTOCOL:
        raise CheckpointError("ember.load: unsupported legacy checkpoint protocol version")
    sys_info = header_value()
    if not sys_info.get("little_endian", True):
        raise CheckpointError("ember.load: big-endian checkpoints are not supported")
    storages = {}

    def load_storage(storage_type, key, location, numel, view_metadata):
        if key not in storages:
            array = np.empty(numel, storage_type.require_dtype().np)
            storages[key] = _Storage(array, location)
        storage = storages[key]
        if view_metadata and view_metadata[0] is not None:
            view_key, offset, view_size = view_metadata[0]
            if view_key not in storages:
                storages[view_key] = _Storage(storage.array[offset:offset + view_size], location)
            storage = storages[view_key]
        return storage

    result = unpickler(fileobj, load_storage, weights_only, **pickle_kwargs).load()
    for key in header_value():
        _read_legacy_storage(fileobj, storages[str(key)].array)
    for storage in storages.values():
        _mapped(storage, map_location)
    return result


def _read_legacy_storage(fileobj, array):
    header = fileobj.read(8)
    if len(header) != 8 or struct.unpack("<q", header)[0] != array.size:
        raise CheckpointError("ember.load: the checkpoint is damaged (bad storage header)")
    raw = array.view(np.uint8)
    if fileobj.readinto(memoryview(raw)) != raw.size:
        raise CheckpointError("ember.load: the checkpoint is damaged (truncated storage)")


_DAMAGE_ERRORS = (zipfile.BadZipFile, EOFError, pickle.UnpicklingError, struct.error, KeyError,
                  ValueError, IndexError, AttributeError, OSError, TypeError, UnicodeDecodeError)


@contextlib.contextmanager
def _readable(f):
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as file:
            yield file, os.fspath(f)
    else:
        name = getattr(f, "name", None)
        path = name if isinstance(name, (str, os.PathLike)) and os.path.isfile(name) else None
        yield f, path


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=False,
         **pickle_load_args):
    """Loads an object saved with ``ember.save`` or ``torch.save`` from a file.

    Args:
        f: a file path (str or os.PathLike) or a readable, seekable binary file-like object.
        map_location: where to put the storages: a device or device name, a dict from saved
            location to location, or a callable ``(storage, location) -> tensor or None``
            called with each storage as a flat tensor and the location it was saved from.
        pickle_module: the module whose ``Unpickler`` reads the pickles (``pickle`` by default);
            giving one makes ``weights_only`` default to False, as in torch.
        weights_only: if True (the default without ``pickle_module``), the unpickler accepts only tensors, parameters,
            primitive types, dicts, lists, tuples, sets, ``OrderedDict`` and globals added with
            :func:`add_safe_globals`; anything else raises ``pickle.UnpicklingError`` without
            running. Pass ``weights_only=False`` only for files from a trusted source: unpickling
            can then run arbitrary code.
        mmap: memory-map the storages from the file instead of reading them into memory
            (copy-on-write; needs a path, or a file object with a name).
    """
    if weights_only is None:
        weights_only = pickle_module is None
    elif weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    unpickler = _unpickler_class(pickle_module)
    pickle_load_args.setdefault("encoding", "utf-8")
    with _readable(f) as (fileobj, path):
        if mmap and path is None:
            raise ValueError("f must be a file path in order to use the mmap argument")
        start = fileobj.tell()
        is_zip = fileobj.read(4).startswith(b"PK")
        fileobj.seek(start)
        if mmap and not is_zip:
            raise ValueError("mmap can only be used with files saved with the zip format")
        try:
            if is_zip:
                if start:
                    fileobj = io.BytesIO(fileobj.read())
                return _load_zip(fileobj, map_location, weights_only, path if mmap else None,
                                 unpickler, pickle_load_args)
            return _load_legacy(fileobj, map_location, weights_only, unpickler, pickle_load_args)
        except (_WeightsOnlyError, CheckpointError, _UnsupportedDtypeError):
            raise
        except _DAMAGE_ERRORS as exc:
            raise CheckpointError(f"ember.load: the checkpoint {_describe(f)} is damaged or "
                                  f"truncated and cannot be read ({type(exc).__name__}: {exc})") from exc


def _describe(f):
    if isinstance(f, (str, os.PathLike)):
        return repr(os.fspath(f))
    return "file"



# -- helpers torch.serialization exports ------------------------------------------------------

class SourceChangeWarning(Warning):
    """Warned when the source of a class saved whole in a checkpoint has changed since."""


class LoadEndianness(enum.Enum):
    """The byte order ``load`` assumes for a checkpoint without a ``byteorder`` record."""
    NATIVE = 1
    LITTLE = 2
    BIG = 3


_load_endianness = [None]


def get_default_load_endianness():
    """The byte order assumed for checkpoints without a byte-order record (None: native)."""
    return _load_endianness[0]


def set_default_load_endianness(endianness):
    """Set the byte order assumed for checkpoints without a byte-order record (a
    ``LoadEndianness``, or None for native). ember reads little-endian checkpoints only: a
    big-endian one is refused when loaded."""
    if endianness is not None and not isinstance(endianness, LoadEndianness):
        raise TypeError("Invalid argument type in function set_default_load_endianness")
    _load_endianness[0] = endianness


def location_tag(storage):
    """The location a checkpoint records for ``storage`` (or a tensor): ``'cpu'``,
    ``'cuda:0'``, ..."""
    device = storage.device
    return str(device) if device.type != "cuda" or device.index is not None else "cuda:0"


def normalize_storage_type(storage_type):
    """The ember class of the same name as ``storage_type`` (a storage class)."""
    import ember
    return getattr(ember, storage_type.__name__)


def check_module_version_greater_or_equal(module, req_version_tuple, error_if_malformed=True):
    """Whether ``module.__version__`` is at least ``req_version_tuple`` (compared field by field,
    each cast to the type of the required one); a version that does not parse raises
    RuntimeError, or with ``error_if_malformed=False`` warns and counts as met."""
    try:
        fields = module.__version__.split(".")
        have = tuple(type(want)(fields[i]) for i, want in enumerate(req_version_tuple))
        return have >= tuple(req_version_tuple)
    except Exception as error:
        message = (f"'{module.__name__}' module version string is malformed "
                   f"'{module.__version__}' and cannot be compared with tuple {req_version_tuple}")
        if error_if_malformed:
            raise RuntimeError(message) from error
        warnings.warn(message + ", but continuing assuming that requirement is met", stacklevel=2)
        return True


@contextlib.contextmanager
def mkdtemp():
    """A temporary directory, removed with its contents on exit."""
    path = tempfile.mkdtemp()
    try:
        yield path
    finally:
        shutil.rmtree(path)
